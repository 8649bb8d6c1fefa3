"""Benchmark (#27): the tuned peers on the designs of ``bench_sparse_default.py``.

Run (seeded, one core, resumable: every data set is appended to a CSV
checkpoint as soon as it is done)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_sparse_peers.py \\
        [--n 30] [--n-null 100] [--out FILE]

The same data sets (``bench_inference.py``'s global null, 100 per family,
and configuration 1, 30 per family) tuned as a user of each family's
standard peer would tune it, 5-fold CV over 30 penalties, elastic net with
``l1_ratio=0.5``:

- gaussian: scikit-learn's ``ElasticNetCV`` (mean squared error, best alpha);
- binomial: ``LogisticRegressionCV(penalty="elasticnet", solver="saga")``
  (log loss, best C; stratified folds);
- cox: scikit-survival's ``CoxnetSurvivalAnalysis`` with alpha chosen by
  Harrell's C over its own path (``bench_cohorts.coxnet``).

Columns as ``bench_sparse_default.py``'s: genes selected, true positives (of
20 active genes) and null genes selected (of the 160 independent of ``y`` and
of every active gene), so that its table and this one compare directly.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import ElasticNetCV, LogisticRegressionCV
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sksurv.util import Surv

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cohorts import coxnet
from bench_inference import ACTIVE, NULL_GENES, null_data, signal_data
from bench_sparse_default import table

FAMILIES = ("gaussian", "binomial", "cox")
ACTIVE_GENES = np.concatenate(ACTIVE)
PEERS = {
    "gaussian": "ElasticNetCV",
    "binomial": "LogisticRegressionCV",
    "cox": "Coxnet",
}


def peer_coef(family: str, X: np.ndarray, y, seed: int) -> np.ndarray:
    """The tuned peer's coefficients on the data set."""
    Xs = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if family == "gaussian":
            folds = KFold(5, shuffle=True, random_state=seed)
            model = ElasticNetCV(l1_ratio=0.5, alphas=30, cv=folds).fit(Xs, y)
            return model.coef_
        if family == "binomial":
            folds = StratifiedKFold(5, shuffle=True, random_state=seed)
            model = LogisticRegressionCV(
                Cs=30,
                penalty="elasticnet",
                solver="saga",
                l1_ratios=[0.5],
                cv=folds,
                scoring="neg_log_loss",
                max_iter=5000,
                random_state=seed,
            ).fit(Xs, y)
            return model.coef_.ravel()
        folds = list(KFold(5, shuffle=True, random_state=seed).split(Xs))
        time_, event = np.asarray(y)[:, 0], np.asarray(y)[:, 1] == 1
        net, _ = coxnet(Xs, Surv.from_arrays(event, time_), 0.5, folds)
        return net.coef_[:, -1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30, help="signal data sets")
    parser.add_argument("--n-null", type=int, default=100, help="null data sets")
    parser.add_argument(
        "--out",
        default=os.path.join(os.path.dirname(__file__), "results", "sparse_peers.csv"),
    )
    args = parser.parse_args()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    done = (
        pd.read_csv(args.out, keep_default_na=False)
        if os.path.exists(args.out)
        else pd.DataFrame()
    )
    keys = set()
    if not done.empty:
        keys = set(zip(done.family, done.design, done.seed, strict=True))
    for seed in range(max(args.n, args.n_null)):
        for family in FAMILIES:
            for design, limit, make in (
                ("null", args.n_null, null_data),
                ("signal", args.n, signal_data),
            ):
                if seed >= limit or (family, design, seed) in keys:
                    continue
                X, y = make(family, seed)
                sel = np.flatnonzero(peer_coef(family, np.asarray(X), y, seed))
                row = {
                    "family": family,
                    "design": design,
                    "seed": seed,
                    "rule": PEERS[family],
                    "genes": sel.size,
                    "true_pos": np.isin(sel, ACTIVE_GENES).sum(),
                    "null_sel": np.isin(sel, NULL_GENES).sum(),
                }
                pd.DataFrame([row]).to_csv(
                    args.out, mode="a", header=not os.path.exists(args.out), index=False
                )
                print(family, design, seed, sel.size, flush=True)
    print(table(pd.read_csv(args.out, keep_default_na=False)))


if __name__ == "__main__":
    main()
