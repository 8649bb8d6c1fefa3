"""Benchmark (#27): the two tuning candidates the issue lists that no study had run.

Run on one core (``benchmarks`` extra for the cohorts), resumable: every
data set or split is appended to a CSV checkpoint as soon as it is done::

    OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_candidates.py --part null [--n 50]
    OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_candidates.py --part cohorts [--splits 5] [--seed 6]
    OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_candidates.py --second-seed

Cox, against ``VCPCRCV``'s default (the sixth study's signed paired gate at
one standard error, refit shrunk; ``docs/tuning.md``) on the 10-point
``lam_ratio`` grid it had when this ran (pinned: ``STUDY_RATIOS``), on the
same folds and seeds:

- ``two-stage``: ``delta`` chosen first by the weights model's own
  cross-validation, as ``cv.glmnet`` chooses lambda: the step-0 weights are
  an elastic-net Cox fit (glmnet's ``alpha`` = ``ENET_L1_RATIO`` = 0.05) on
  standardized genes, so Coxnet with that ``l1_ratio`` on the standardized
  training rows, 30 penalties down to 0.01 of the largest, chosen by the
  mean Harrell's C over the same folds (``bench_cohorts.coxnet``); then
  ``VCPCRCV(deltas=[that penalty])`` tunes ``n_clusters`` and ``lam_ratio``
  (``STUDY_RATIOS``) by the default criterion and gate (Coxnet's
  ``alpha`` and VC-PCR's ``delta`` are both glmnet's lambda on
  standardized columns);
- ``dense grid``: the default with 20 ``lam_ratio`` values (``10**linspace(-3,
  0, 20)``) instead of 10, a grid whose model sizes step more evenly (one
  step of the default grid jumps from 7 to 41 genes on a real cohort).

``--part null``: the global null of ``bench_signed.py`` (``null_flipped``,
cox, new seeds 700 on): genes chosen by each. ``--part cohorts``: the six
cohorts, ``--splits`` stratified 70/30 splits per cohort on a new split seed,
the default, both candidates and Coxnet (``l1_ratio=0.5``, alpha by C), as
``bench_sparse_cohorts.py`` scores them.

**What the results decide, stated before they ran.** Nothing directly: the
default was chosen by rule D (``bench_signed.py``). A candidate goes to a
full study (200 null sets per family, 20 splits per cohort on a new seed)
only if, on these runs, it chooses at most 3 genes on at least 80 % of the
null sets, its average held-out C is at least 0.01 above the default's,
its average IBS at most 0.005 above the default's and its median genes at
most twice Coxnet's. Otherwise it is reported and dropped.

**Outcome of the screen** (``candidates_null.csv``, 50 cox null sets;
``candidates_cohorts.csv``, 5 splits per cohort, seed 6; ``docs/tuning.md``,
"Two more candidates"): the two-stage tuning was empty on 86 % of the null
sets (the default 88 %) and its C equalled the default's (-0.001 [-0.024,
+0.021]): dropped. The dense grid was empty on 92 %, C +0.016 [-0.008,
+0.039] above the default's, IBS -0.003 [-0.005, -0.000], median genes
4/4/43/3/3/1 against Coxnet's 8/3/55/8/98/1: it goes to the full study.

**The full study of the dense grid (rule E), stated and committed before its
runs** (``--full --part null``: 200 null sets of every family, new seeds
800-999, ``candidates_full_null.csv``; ``--full --part cohorts``: 20 splits
per cohort on split seed 7, which no study has used,
``candidates_full_cohorts.csv``; the default and the dense grid only): the
20-point ``lam_ratio`` grid becomes the default grid when (N) it chooses at
most 3 genes on at least 80 % of the 200 null sets of every family, and on
seed 7's 120 splits (C) its average held-out C minus the default's is above
0 with a 95 % lower bound above -0.01, (I) its average IBS minus the
default's has a 95 % upper bound below +0.005, (b) its median genes over all
splits are at most twice Coxnet's and (d) it selects genes on more than half
of the splits of gse3143 and of gse4335. Its fit time against the default's
on the 300 x 20,000 benchmark (the grid has twice the ``lam_ratio`` values)
is reported, not deciding.

**Outcome of E** (``docs/tuning.md``, "Two more candidates"): (N) 92.5 %,
97 % and 95 % of the 200 null sets per family; on seed 7 (C) +0.004
[-0.007, +0.015] above the default, (I) IBS +0.0005 [-0.0010, +0.0019], (b)
5 median genes against Coxnet's 10, (d) genes on 90 % and 100 % of the
gse3143 and gse4335 splits: E holds. The grid change itself is left to the
next change of the default (cost and tests).

**Today's default on a second split seed** (``--second-seed``; the issue
asks how much the cohort table moves between two split seeds): the dense
grid, which is ``VCPCRCV()``'s default since rule E, and Coxnet only, on 20
splits per cohort of split seed 8, which no study had used
(``default_seed8_cohorts.csv``). It reports; it decides nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sksurv.util import Surv

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cohorts import COHORTS, coxnet, load
from bench_signed import draw
from bench_sparse_cohorts import (
    STUDY_RATIOS,
    paired,
    print_summary,
    print_table,
    run_split,
)
from sklearn.model_selection import KFold, StratifiedKFold, StratifiedShuffleSplit

from vcpcr import VCPCRCV
from vcpcr._weights import ENET_L1_RATIO

HERE = os.path.dirname(os.path.abspath(__file__))
DENSE = 10 ** np.linspace(-3, 0, 20)
METHODS = ("VC-PCR default", "VC-PCR two-stage", "VC-PCR dense grid", "Coxnet")
FULL = ("VC-PCR default", "VC-PCR dense grid", "Coxnet")  # rule E's methods
SECOND_SEED = ("VC-PCR dense grid", "Coxnet")  # today's default on a second seed
FAMILIES = ("gaussian", "binomial", "cox")


def two_stage_delta(X, y2, folds) -> float:
    """The weights model's penalty chosen by its own CV (Harrell's C)."""
    sd = X.std(axis=0)
    Xs = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    y = Surv.from_arrays(y2[:, 1].astype(bool), y2[:, 0])
    _, alpha = coxnet(Xs, y, ENET_L1_RATIO, folds)
    return alpha


def fits(X, y, folds, seed, family="cox", methods=METHODS) -> dict:
    """The default and the candidates in ``methods``, refitted, on one set of folds."""
    kw = {"family": family, "cv": folds, "random_state": seed}
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "VC-PCR default" in methods:
            default = VCPCRCV(lam_ratios=STUDY_RATIOS, **kw)
            out["VC-PCR default"] = default.fit(X, y)
        if "VC-PCR two-stage" in methods:
            delta = two_stage_delta(X, y, folds)
            two_stage = VCPCRCV(deltas=[delta], lam_ratios=STUDY_RATIOS, **kw)
            out["VC-PCR two-stage"] = two_stage.fit(X, y)
        if "VC-PCR dense grid" in methods:  # VCPCRCV()'s default since rule E
            out["VC-PCR dense grid"] = VCPCRCV(lam_ratios=DENSE, **kw).fit(X, y)
    return out


def null_folds(X, y, family: str, seed: int) -> list:
    """Five shuffled folds, stratified on the event (cox) or the class."""
    if family == "gaussian":
        return list(KFold(5, shuffle=True, random_state=seed).split(X))
    strata = y[:, 1] if family == "cox" else y
    return list(StratifiedKFold(5, shuffle=True, random_state=seed).split(X, strata))


def run_null(out: str, n: int, families, first: int, methods) -> None:
    done = pd.read_csv(out) if os.path.exists(out) else pd.DataFrame()
    if not done.empty and "family" not in done:  # the screen's file: cox only
        done["family"] = "cox"
    keys = set() if done.empty else set(zip(done.family, done.seed, strict=True))
    for seed in range(first, first + n):
        for family in families:
            if (family, seed) in keys:
                continue
            X, y, _ = draw(family, "null_flipped", seed)
            folds = null_folds(X, y, family, seed)
            rows = [
                {
                    "family": family,
                    "seed": seed,
                    "method": k,
                    "genes": int(np.count_nonzero(cv.coef_)),
                }
                for k, cv in fits(X, y, folds, seed, family, methods).items()
            ]
            pd.DataFrame(rows).to_csv(
                out, mode="a", header=not os.path.exists(out), index=False
            )
            print(family, seed, [r["genes"] for r in rows], flush=True)
    df = pd.read_csv(out)
    if "family" not in df:
        df["family"] = "cox"
    print(
        df.groupby(["family", "method"]).genes.agg(
            sets="size", at_most_3=lambda s: (s <= 3).mean(), median="median"
        )
    )


def run_cohorts(
    out: str, n_splits: int, seed: int, methods, fits=fits, base="VC-PCR default"
) -> None:
    """``n_splits`` splits per cohort, checkpointed; ``methods`` against ``base``."""
    done = pd.read_csv(out) if os.path.exists(out) else pd.DataFrame()
    data = {name: load(name) for name in COHORTS}

    def fit(X, y2, folds, seed):
        return {
            k: cv.best_estimator_
            for k, cv in fits(X, y2, folds, seed, methods=methods).items()
        }

    for k in range(n_splits):  # every cohort's split k, then k + 1
        for name, (X, time_, event) in data.items():
            if not done.empty and ((done.cohort == name) & (done.split == k)).any():
                continue
            splitter = StratifiedShuffleSplit(
                n_splits, test_size=0.3, random_state=seed
            )
            train, test = list(splitter.split(X, event))[k]
            rows = pd.DataFrame(
                run_split(name, X, time_, event, train, test, seed, fit=fit)
            ).assign(split=k)
            rows.to_csv(out, mode="a", header=not os.path.exists(out), index=False)
            print(rows[["cohort", "split", "method", "C", "IBS", "genes"]], flush=True)
    df = pd.read_csv(out)
    print_table(df, methods)
    print()
    print_summary(df, methods)
    for metric in ("C", "IBS"):
        for method in methods[1:-1] if base in methods else ():
            print(f"\n{method} - {base}, held-out {metric}")
            print(paired(df, metric, method, base).round(4).to_string())
    genes = df.groupby(["method", "cohort"]).genes.apply(lambda s: (s > 0).mean())
    print("\nshare of splits with genes\n", genes.unstack().round(2).to_string())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("null", "cohorts"))
    parser.add_argument("--full", action="store_true", help="rule E's full study")
    parser.add_argument(
        "--second-seed",
        action="store_true",
        help="today's default and Coxnet, 20 splits per cohort on split seed 8",
    )
    parser.add_argument("--n", type=int, default=50, help="null data sets")
    parser.add_argument("--splits", type=int, default=5, help="splits per cohort")
    parser.add_argument("--seed", type=int, default=6, help="split seed")
    parser.add_argument("--out", default=None)
    parser.add_argument(
        "--families", nargs="+", default=None, help="--full --part null: a subset"
    )
    args = parser.parse_args()
    study = "candidates_full" if args.full else "candidates"
    if args.second_seed:
        out = args.out or os.path.join(HERE, "results", "default_seed8_cohorts.csv")
        run_cohorts(out, 20, 8, SECOND_SEED)
        return
    if args.part is None:
        parser.error("--part is required (unless --second-seed)")
    out = args.out or os.path.join(HERE, "results", f"{study}_{args.part}.csv")
    methods = FULL if args.full else METHODS
    if args.part == "null":
        families, first = (FAMILIES, 800) if args.full else (("cox",), 700)
        families = args.families or families
        run_null(out, 200 if args.full else args.n, families, first, methods)
    else:
        splits, seed = (20, 7) if args.full else (args.splits, args.seed)
        run_cohorts(out, splits, seed, methods)


if __name__ == "__main__":
    main()
