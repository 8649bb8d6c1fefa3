"""Benchmark: the exported scoring rule re-scores held-out patients as ``predict``.

Run (seeded, one core)::

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \
        python benchmarks/bench_export.py > benchmarks/results/export.txt

On each of SurvSet's six allowed cohorts (gene columns as in
``bench_cohorts.py``: ``num_HS_`` in the ``gse*`` cohorts, ``num_`` in the
others, columns with missing values dropped, the 1,000 most variable genes
kept), a 75/25 split stratified on the event (seed 0); ``VCPCR(family="cox",
n_clusters=5, lam_ratio=0.5, n_init=5, random_state=0)`` on the 75 %, then
``export_scoring_rule(horizons=[q25, q50])`` (the training times'
quartiles), its JSON written and parsed back with the standard library, and
the held-out rows scored by a numpy-only scorer reading the parsed document
(no vcpcr object involved). Prints per cohort the fit and export times, the
JSON size, and the largest absolute difference of the re-scored linear
predictor and survival at both horizons from ``predict_log_partial_hazard``
and ``predict_survival_function``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from vcpcr import VCPCR

COHORTS = ["chop", "gse1992", "gse3143", "gse4335", "NSBCD", "MCLcleaned"]


def load(name):
    """Genes (a frame) and the outcome of a SurvSet cohort (see the module doc)."""
    from SurvSet.data import SurvLoader

    df = SurvLoader().load_dataset(name)["df"]
    prefix = "num_HS_" if name.startswith("gse") else "num_"
    genes = df.filter(regex=f"^{prefix}").dropna(axis=1)
    genes = genes[genes.var().sort_values(ascending=False).index[:1000]]
    time_ = df["time"].to_numpy(dtype=float)
    time_[time_ <= 0] = time_[time_ > 0].min() / 2
    y = pd.DataFrame({"time": time_, "event": df["event"].to_numpy(dtype=float)})
    return genes.reset_index(drop=True), y


def rescore(doc, data, horizons):
    """The linear predictor and S(t) from the parsed JSON, numpy only."""
    eta = np.full(len(data), doc["intercept"])
    for c in doc["covariates"]:
        eta += c["coef"] * data[c["source"]].to_numpy(dtype=float)
    score = {m["module"]: np.zeros(len(data)) for m in doc["modules"]}
    for g in doc["genes"]:
        x = data[g["source"]].to_numpy(dtype=float)
        score[g["module"]] += g["loading"] * (x - g["center"]) / g["scale"]
    for m in doc["modules"]:
        eta += m["coef"] * score[m["module"]]
    H0 = {b["time"]: b["cumulative_hazard"] for b in doc["baseline"]}
    return eta, np.exp(-np.outer(np.exp(eta), [H0[t] for t in horizons]))


def run(name):
    """One cohort's row of the table."""
    X, y = load(name)
    train, test = train_test_split(
        np.arange(len(y)), test_size=0.25, stratify=y["event"], random_state=0
    )
    model = VCPCR(5, family="cox", lam_ratio=0.5, n_init=5, random_state=0)
    start = time.perf_counter()
    model.fit(X.iloc[train], y.iloc[train])
    fit_s = time.perf_counter() - start
    horizons = [float(v) for v in np.quantile(y["time"].iloc[train], [0.25, 0.5])]
    start = time.perf_counter()
    text = model.export_scoring_rule(horizons=horizons).to_json()
    export_ms = 1000 * (time.perf_counter() - start)
    eta, survival = rescore(json.loads(text), X.iloc[test], horizons)
    ref_eta = model.predict_log_partial_hazard(X.iloc[test])
    ref_s = model.predict_survival_function(
        X.iloc[test], return_array=True, times=horizons
    )
    return {
        "cohort": name,
        "n_test": len(test),
        "genes": int(np.sum(model.labels_ >= 0)),
        "modules": model.n_clusters_,
        "fit_s": round(fit_s, 2),
        "export_ms": round(export_ms, 1),
        "json_kib": round(len(text) / 1024, 1),
        "max_eta_diff": float(np.max(np.abs(eta - ref_eta))),
        "max_surv_diff": float(np.max(np.abs(survival - ref_s))),
    }


def main():
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cohorts", nargs="+", default=COHORTS)
    args = parser.parse_args()
    if not set(args.cohorts) <= set(COHORTS):  # never load the held-out cohorts
        raise ValueError(f"--cohorts must be among {COHORTS}; got {args.cohorts}.")
    table = pd.DataFrame([run(name) for name in args.cohorts])
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
