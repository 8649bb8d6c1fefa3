"""Reference validation sample sizes from pmvalsampsize (Riley et al. 2021).

Run with a Python that has pmvalsampsize (GPL-3; a test-only reference, never
a dependency of vcpcr and never imported by it or by the tests)::

    python -m venv /tmp/pmv && /tmp/pmv/bin/pip install pmvalsampsize==0.2.1
    /tmp/pmv/bin/python tests/reference/make_validation_sample_size_pmvalsampsize.py

It writes ``validation_sample_size_pmvalsampsize.json`` beside itself:
``tests/test_sample_size.py`` compares ``vcpcr.validation.validation_sample_size``
with it. pmvalsampsize 0.2.1 (Python) covers binary outcomes only. Its
calibration-slope criterion (and the net benefit's, when sensitivity and
specificity come from the predictions) averages over ``simobs`` simulated
predictions, so every case is run with several seeds: the tests compare
vcpcr's exact integral with the mean over seeds, within the seeds' spread.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from pmvalsampsize.pmvalsampsize import pmvalsampsize

SEEDS = [123456, 1, 2, 3, 4]
# pmvalsampsize keyword arguments per case (type="b").
CASES = [
    # pmvalsampsize's own test 4.1 (Riley et al. 2021's example inputs)
    {"prevalence": 0.018, "cstatistic": 0.8, "lpnormal": [-5, 2.5], "oeciwidth": 1},
    # its test 4.2
    {"prevalence": 0.018, "cstatistic": 0.8, "lpbeta": [0.5, 0.5], "oeciwidth": 1},
    # its README example, with a threshold (sensitivity/specificity simulated)
    {"prevalence": 0.43, "cstatistic": 0.8, "lpbeta": [1.33, 1.75], "threshold": 0.3},
    # (Given sensitivity and specificity, pmvalsampsize 0.2.1 stops with
    # UnboundLocalError 'n5'; that criterion is checked by hand instead.)
    # narrower targets
    {
        "prevalence": 0.25,
        "cstatistic": 0.7,
        "lpnormal": [-1.3, 0.8],
        "oeciwidth": 0.1,
        "csciwidth": 0.15,
        "cstatciwidth": 0.05,
    },
]


def _run(case: dict, seed: int) -> dict:
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in case.items()}
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its table
        out = pmvalsampsize(type="b", seed=seed, noprint=True, **kw)
    rows = [r for r in out["results_table"] if isinstance(r, list)]
    return {
        "criteria": {r[0]: int(r[1]) for r in rows if r[0] != "Final SS"},
        "final": int(out["sample_size"]),
        "se_oe": float(out["se_oe"]),
        "se_cstat": float(out["se_cstat"]),
        **(
            {
                "se_nb": float(out["se_st_nb"]),
                "sensitivity": float(out["sensitivity"]),
                "specificity": float(out["specificity"]),
            }
            if "se_st_nb" in out
            else {}
        ),
    }


def main() -> None:
    import pmvalsampsize as pkg

    result = {"pmvalsampsize": pkg.__version__, "seeds": SEEDS, "cases": []}
    for case in CASES:
        result["cases"].append(
            {"args": case, "runs": [_run(case, seed) for seed in SEEDS]}
        )
    path = Path(__file__).with_name("validation_sample_size_pmvalsampsize.json")
    path.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
