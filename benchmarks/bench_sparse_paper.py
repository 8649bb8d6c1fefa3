"""Benchmark (#27): selection and clustering of the CV-chosen model, paper's design.

Run (seeded, one core, resumable: every data set is appended to a CSV
checkpoint as soon as it is done)::

    OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_sparse_paper.py [--n 20] [--out FILE]

The paper's simulation (``make_paper_data``: n = 50, p = 200, rho = 0.6,
SNR 10, configurations 1-3), the columns put in a random order (seeded), so
that no rule can profit from the blocks' positions. Each data set is tuned
by ``VCPCRCV()``'s defaults (today's: mean squared error, best point) and
by the cross-calibrated pooled deviance (one grid, the same folds and
seeds; the 10-point ``lam_ratio`` grid it ran with, pinned:
``STUDY_RATIOS``) read with the selections of ``bench_sparse_default.py``
(``calib/min``, ``calib/1se``, ``calib/paired``); ``VCPCR`` is fitted on all
rows at each chosen point. Per configuration and rule: the median model
size, the MCC of the support and of the clustering against the truth
(``vcpcr.metrics``; the truth is the four active blocks of five and one
cluster of the 180 inactive variables), as the paper reports them.

``--signed`` (``sparse_paper_signed.csv``; the sixth study of
``bench_signed.py``): today's default against the signed paired gate at
``c`` = 1 (signed latent variables, the pooled deviance), same folds and
seeds.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sparse_cohorts import STUDY_RATIOS
from bench_sparse_default import chosen

from vcpcr import VCPCR, VCPCRCV
from vcpcr.metrics import mcc_clustering, mcc_support
from vcpcr.simulate import make_paper_data

RULES = ("default/min", "calib/min", "calib/1se", "calib/paired")
SIGNED_RULES = ("default/min", "signed/paired-1")


def one(config: int, seed: int, rules: tuple[str, ...] = RULES) -> list[dict]:
    data = make_paper_data(config=config, random_state=seed)
    order = np.random.default_rng(seed).permutation(data.X.shape[1])
    X, labels, coef = data.X[:, order], data.labels[order], data.coef[order]
    fits = {}
    for scoring in sorted({rule.split("/")[0] for rule in rules}):
        latent = "signed" if scoring == "signed" else "paper"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits[scoring] = VCPCRCV(
                scoring=None if scoring == "default" else "neg_pooled_deviance",
                latent=latent,
                lam_ratios=STUDY_RATIOS,
                refit=False,
                random_state=seed,
            ).fit(X, data.y)
    rows = []
    for rule in rules:
        scoring, selection = rule.split("/")
        params = chosen(fits[scoring], selection)
        latent = "signed" if scoring == "signed" else "paper"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = VCPCR(random_state=seed, latent=latent, **params)
            model.fit(X, data.y)
        rows.append(
            {
                "config": config,
                "seed": seed,
                "rule": rule,
                "size": int(np.count_nonzero(model.coef_)),
                "mcc_support": mcc_support(coef, model.coef_),
                "mcc_clustering": mcc_clustering(labels, model.labels_),
                **params,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="data sets per config")
    parser.add_argument(
        "--out",
        default=os.path.join(os.path.dirname(__file__), "results", "sparse_paper.csv"),
    )
    parser.add_argument("--signed", action="store_true", help="the sixth study")
    args = parser.parse_args()
    rules = SIGNED_RULES if args.signed else RULES
    if args.signed and args.out == parser.get_default("out"):
        args.out = args.out.replace("sparse_paper", "sparse_paper_signed")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    done = pd.read_csv(args.out) if os.path.exists(args.out) else pd.DataFrame()
    keys = set() if done.empty else set(zip(done.config, done.seed, strict=True))
    for seed in range(args.n):
        for config in (1, 2, 3):
            if (config, seed) in keys:
                continue
            rows = pd.DataFrame(one(config, seed, rules))
            rows.to_csv(
                args.out, mode="a", header=not os.path.exists(args.out), index=False
            )
            print(config, seed, rows["size"].tolist(), flush=True)
    df = pd.read_csv(args.out)
    summary = df.groupby(["config", "rule"], sort=False).agg(
        data_sets=("size", "size"),
        median_size=("size", "median"),
        mcc_support=("mcc_support", "mean"),
        mcc_clustering=("mcc_clustering", "mean"),
    )
    print(summary.round(3).to_string())


if __name__ == "__main__":
    main()
