"""Reference minimum sample sizes from pmsampsize (Riley et al. 2019, 2020).

Run with a Python >= 3.12 that has pmsampsize (GPL-3; a test-only reference,
never a dependency of vcpcr and never imported by it or by the tests)::

    python -m venv /tmp/pmss && /tmp/pmss/bin/pip install pmsampsize==0.1.0
    /tmp/pmss/bin/python tests/reference/make_sample_size_pmsampsize.py

It writes ``sample_size_pmsampsize.json`` beside itself:
``tests/test_sample_size.py`` compares ``vcpcr.validation.sample_size`` with it.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from pmsampsize.pmsampsize import pmsampsize

# (vcpcr keyword arguments, pmsampsize keyword arguments) per case.
CASES = {
    "binary": [
        {"parameters": 24, "r2": 0.288, "prevalence": 0.174},
        {"parameters": 10, "r2": 0.1, "prevalence": 0.3},
        {"parameters": 40, "r2": 0.05, "prevalence": 0.05},
        {"parameters": 5, "r2": 0.4, "prevalence": 0.5},
    ],
    "survival": [
        {
            "parameters": 30,
            "r2": 0.051,
            "rate": 0.065,
            "timepoint": 2,
            "mean_follow_up": 2.07,
        },
        {
            "parameters": 10,
            "r2": 0.15,
            "rate": 0.1,
            "timepoint": 5,
            "mean_follow_up": 4.0,
        },
        {
            "parameters": 20,
            "r2": 0.3,
            "rate": 0.2,
            "timepoint": 3,
            "mean_follow_up": 2.5,
        },
        {
            "parameters": 6,
            "r2": 0.02,
            "rate": 0.03,
            "timepoint": 1,
            "mean_follow_up": 6.0,
        },
    ],
    "continuous": [
        {"parameters": 25, "r2": 0.2, "intercept": 1.9, "sd": 0.6},
        {"parameters": 10, "r2": 0.5, "intercept": 10.0, "sd": 3.0},
        {"parameters": 40, "r2": 0.1, "intercept": 0.5, "sd": 1.0},
        {"parameters": 5, "r2": 0.7, "intercept": 0.2, "sd": 2.0},
    ],
}
TYPES = {"binary": "b", "survival": "s", "continuous": "c"}


def _pmsampsize(outcome: str, case: dict) -> dict:
    kw = {"type": TYPES[outcome], "parameters": case["parameters"]}
    if outcome == "continuous":
        kw.update(rsquared=case["r2"], intercept=case["intercept"], sd=case["sd"])
    else:
        kw["csrsquared"] = case["r2"]
    if outcome == "binary":
        kw["prevalence"] = case["prevalence"]
    if outcome == "survival":
        kw.update(
            rate=case["rate"],
            timepoint=case["timepoint"],
            meanfup=case["mean_follow_up"],
        )
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its table
        out = pmsampsize(**kw)
    rows = [r for r in out["results_table"] if isinstance(r, list)]
    criteria = {r[0].rstrip("*"): int(r[1]) for r in rows if r[0] != "Final SS"}
    ref = {
        "criteria": criteria,
        "final": int(out["sample_size"]),
        "events": out.get("events"),
    }
    if outcome == "survival":
        ref["risk"] = [out["int_lci"], out["int_cuminc"], out["int_uci"]]
    if outcome == "continuous":
        ref["intercept_interval"] = [float(out["int_lci"]), float(out["int_uci"])]
    return ref


def main() -> None:
    import pmsampsize as pkg

    result = {"pmsampsize": pkg.__version__, "cases": []}
    for outcome, cases in CASES.items():
        for case in cases:
            result["cases"].append(
                {
                    "outcome": outcome,
                    "args": case,
                    "pmsampsize": _pmsampsize(outcome, case),
                }
            )
    path = Path(__file__).with_name("sample_size_pmsampsize.json")
    path.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
