"""Benchmark: do the intervals of ``vcpcr.validation`` hold? (#28, item 2).

Run on one core (resumable; each finished data set is appended to
``benchmarks/results/validation.csv``, re-running skips it)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_validation.py [--reps 200]

Data (per data set, seeded): ``n = 120`` patients; clinical columns ``age``
(N(0, 1)) and ``er`` (0/1, p = 0.5); ``p = 200`` genes from
``vcpcr.simulate.make_block_data`` (two blocks of 10 genes at rho = 0.6, 180
independent noise genes); exponential event times with log hazard
``0.7 age + 0.7 er + gamma * (sum of block 1's genes) / sqrt(10)`` (``gamma
= 0`` in the null scenario, so that the genes add nothing; 0.35 in the
alternatives), independent exponential censoring (mean 3; about 30 %).

Procedure: ``validate_increment`` with 5-fold CV x ``R`` repeats; the
estimator a fixed ``VCPCR(family="cox", n_clusters=2, lam_ratio=0.5,
n_init=3, covariates=["age", "er"])``, and in one cell ``VCPCRCV``
(``n_clusters`` in {1, 2} x ``lam_ratios`` in {0.3, 0.6} x the default delta
grid, inner 3-fold CV; re-tuned inside every training fold) on fewer data
sets.

Truth: the procedure's expected increment of Harrell's C over the clinical
Cox model when trained on ``(k - 1) / k n = 96`` rows (Bates, Hastie &
Tibshirani 2023): the mean, over ``M`` independent training sets of 96 rows
(``--truth-sets``, 100; a quarter of it for ``VCPCRCV``),
of C(estimator) - C(clinical) on one independent test set of 20,000 rows
drawn from the same simulator (lifelines' ``concordance_index``).
Also the conditional truth: the same difference for the two models fitted on
the data set's own 120 rows.

Printed per scenario and interval method: coverage of the 95 % interval of
the expected (``cover``) and conditional (``cover_xy``) truth with
Clopper-Pearson 95 % intervals, the rejection rate of the one-sided 5 %
test of "no gain" (size under the null, power otherwise) with its
Clopper-Pearson interval, the share of lower bounds above the expected
truth (``lo>truth``, nominally at most 0.025) and the mean width.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from lifelines.utils import concordance_index
from scipy import stats

from vcpcr import VCPCR, VCPCRCV
from vcpcr.simulate import make_block_data
from vcpcr.validation import ClinicalCox, increment_interval, validate_increment

RESULTS = os.path.join(os.path.dirname(__file__), "results")
CSV = os.path.join(RESULTS, "validation.csv")
TRUTH_CSV = os.path.join(RESULTS, "validation_truth.csv")
N, P, CV = 120, 200, 5
CLINICAL = ["age", "er"]
#: VCPCRCV's tuning defaults before #27's sixth study, with which this ran.
PREVIOUS_DEFAULT = {"latent": "paper", "scoring": None, "selection": "min"}
METHODS = ("one_fold", "corrected_t", "naive")
SCENARIOS = {  # name: (gamma, estimator kind)
    "null": (0.0, "vcpcr"),
    "alt": (0.35, "vcpcr"),
    "alt_cv": (0.35, "vcpcrcv"),
}


def read(path, **kw):
    """A results CSV; only empty cells are missing (the scenario "null" is not)."""
    return pd.read_csv(path, keep_default_na=False, na_values=[""], **kw)


def simulate(n, gamma, rng, p=P):
    genes = make_block_data(
        n,
        [10, 10],
        [0.0, 0.0],
        corr_groups=[0, 1],
        rho=0.6,
        n_noise=p - 20,
        family="gaussian",
        noise_sd=1.0,
        random_state=rng,
    ).X
    age, er = rng.normal(size=n), (rng.random(n) < 0.5).astype(float)
    eta = 0.7 * age + 0.7 * er + gamma * genes[:, :10].sum(axis=1) / np.sqrt(10)
    t = rng.exponential(np.exp(-eta))
    c = rng.exponential(3.0, size=n)
    X = pd.DataFrame(genes, columns=[f"g{j}" for j in range(p)])
    X.insert(0, "er", er)
    X.insert(0, "age", age)
    return X, np.column_stack([np.minimum(t, c), t <= c])


def estimator(kind):
    common = {"family": "cox", "covariates": CLINICAL, "n_init": 3}
    if kind == "vcpcr":
        return VCPCR(n_clusters=2, lam_ratio=0.5, **common)
    return VCPCRCV(
        n_clusters=[1, 2], lam_ratios=[0.3, 0.6], cv=3, **PREVIOUS_DEFAULT, **common
    )


def c_difference(kind, X, y, test, seed):
    """C(estimator) - C(clinical) on ``test`` for both fitted on (X, y)."""
    X_test, y_test = test
    out = []
    for model in (estimator(kind).set_params(random_state=seed), ClinicalCox(CLINICAL)):
        model.fit(X, y)
        risk = model.predict_log_partial_hazard(X_test)
        out.append(concordance_index(y_test[:, 0], -risk, y_test[:, 1]))
    return out[0] - out[1]


def truth(name, n_train_sets):
    """The expected increment at (k-1)/k n rows, cached in TRUTH_CSV."""
    if os.path.exists(TRUTH_CSV):
        cached = read(TRUTH_CSV, index_col="scenario")
        if name in cached.index:
            return cached.loc[name]
    gamma, kind = SCENARIOS[name]
    rng = np.random.default_rng(10_000)
    test = simulate(20_000, gamma, rng)
    diffs = []
    for m in range(n_train_sets):
        X, y = simulate(N * (CV - 1) // CV, gamma, rng)
        diffs.append(c_difference(kind, X, y, test, m))
    row = pd.Series(
        {
            "truth": np.mean(diffs),
            "mc_se": np.std(diffs, ddof=1) / np.sqrt(len(diffs)),
            "sd_train": np.std(diffs, ddof=1),
            "n_train_sets": len(diffs),
        },
        name=name,
    )
    frame = read(TRUTH_CSV, index_col="scenario") if os.path.exists(TRUTH_CSV) else None
    frame = (
        pd.concat([frame, row.to_frame().T]) if frame is not None else row.to_frame().T
    )
    frame.rename_axis("scenario").to_csv(TRUTH_CSV)
    return row


def one_data_set(name, rep, n_repeats, test):
    gamma, kind = SCENARIOS[name]
    rng = np.random.default_rng([list(SCENARIOS).index(name), rep])
    X, y = simulate(N, gamma, rng)
    start = time.perf_counter()
    res = validate_increment(
        estimator(kind),
        X,
        y,
        cv=CV,
        n_repeats=n_repeats,
        random_state=rep,
        verbose=False,
    )
    seconds = time.perf_counter() - start
    d = res.fold_increments.loc[
        res.fold_increments["model"] != "clinical Cox", "Harrell C"
    ]
    n_train, n_test = N * (CV - 1) / CV, N / CV
    row = {
        "scenario": name,
        "rep": rep,
        "n_repeats": n_repeats,
        "mean": d.mean(),
        "n_genes": res.folds["n_genes"].max(),
        "seconds": seconds,
        "truth_xy": c_difference(kind, X, y, test, rep),
    }
    for method in METHODS:
        _, lo, hi, p = increment_interval(
            d, n_train=n_train, n_test=n_test, method=method
        )
        row.update({f"{method}_lo": lo, f"{method}_hi": hi, f"{method}_p": p})
    return row


def rate(k, n):
    """``k / n`` and its Clopper-Pearson 95 % interval, as text."""
    return "{:.3f} [{:.3f}, {:.3f}]".format(k / n, *clopper_pearson(k, n))


def clopper_pearson(k, n, level=0.95):
    a = 1 - level
    lo = stats.beta.ppf(a / 2, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - a / 2, k + 1, n - k) if k < n else 1.0
    return lo, hi


def table(done, truths):
    lines = []
    for name, group in done.groupby("scenario", sort=False):
        t = truths[name]
        for method in METHODS:
            lo, hi = group[f"{method}_lo"], group[f"{method}_hi"]
            n = len(group)
            cover = int(((lo <= t) & (t <= hi)).sum())
            cover_xy = int(
                ((lo <= group["truth_xy"]) & (group["truth_xy"] <= hi)).sum()
            )
            reject = int((group[f"{method}_p"] < 0.05).sum())
            above = int((lo > t).sum())  # the lower bound claims too much
            lines.append(
                f"{name:7s} {method:12s} {n:4d}  truth {t:+.4f}  "
                f"cover {rate(cover, n)}  cover_xy {rate(cover_xy, n)}  "
                f"reject {rate(reject, n)}  lo>truth {above / n:.3f}  "
                f"width {np.mean(hi - lo):.4f}"
            )
    return "\n".join(lines)


def cost(n=300, p=20_000, n_folds=1, n_jobs=1):
    """Seconds per fold of a 5-fold validation of ``VCPCRCV()`` (defaults).

    Times ``n_folds`` folds of the 25 of a 5 x 5 validation (the clinical
    model and ``VCPCRCV`` re-tuned on 240 rows), run as ``validate_increment``
    runs them; the full 5 x 5 costs 25 times a fold on one core.
    """
    from sklearn.model_selection import StratifiedKFold
    from sksurv.util import Surv

    from vcpcr._increment import CLINICAL as CLINICAL_MODEL
    from vcpcr._increment import _fold_task, _plan

    rng = np.random.default_rng(0)
    X, y = simulate(n, 0.35, rng, p=p)
    ys = Surv.from_arrays(y[:, 1] > 0, y[:, 0])
    models = {
        CLINICAL_MODEL: ClinicalCox(CLINICAL),
        "VCPCRCV": VCPCRCV(family="cox", covariates=CLINICAL, n_jobs=n_jobs),
    }
    plan = _plan(X, ys, CLINICAL, [], 0.8)
    splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y[:, 1]))
    seconds, cpu = [], []
    for train, test in splits[:n_folds]:
        start, start_cpu = time.perf_counter(), time.process_time()
        out = _fold_task(models, X, ys, train, test, plan, 0)
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        genes = out["VCPCRCV"].get("n_genes")
        print(f"fold: {seconds[-1]:.1f} s wall, {cpu[-1]:.1f} s CPU, genes {genes}")
    per_fold = float(np.mean(cpu))
    print(
        f"{n} x {p}: {per_fold:.1f} CPU s per fold (n_jobs={n_jobs} inside "
        f"VCPCRCV); a 5 x 5 validation ~ {25 * per_fold / 60:.1f} CPU min"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--cost-folds", type=int, default=1)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--cv-reps", type=int, default=20)
    parser.add_argument("--n-repeats", type=int, default=5)
    parser.add_argument("--truth-sets", type=int, default=100)
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS))
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.cost:
        cost(n_folds=args.cost_folds)
        return
    done = read(CSV) if os.path.exists(CSV) else pd.DataFrame()
    truths = {}
    for name in args.scenarios:
        start = time.perf_counter()
        row = truth(
            name,
            args.truth_sets if SCENARIOS[name][1] == "vcpcr" else args.truth_sets // 4,
        )
        truths[name] = row["truth"]
        print(
            f"{name}: truth {row['truth']:+.4f} (MC se {row['mc_se']:.4f}, "
            f"{time.perf_counter() - start:.0f} s)",
            flush=True,
        )
        gamma, kind = SCENARIOS[name]
        test = simulate(20_000, gamma, np.random.default_rng(20_000))
        reps = args.reps if kind == "vcpcr" else args.cv_reps
        have = set(done["rep"][done["scenario"] == name]) if len(done) else set()
        for rep in range(reps):
            if rep in have:
                continue
            row = one_data_set(name, rep, args.n_repeats, test)
            pd.DataFrame([row]).to_csv(
                CSV, mode="a", header=not os.path.exists(CSV), index=False
            )
            if rep % 10 == 0:
                print(f"  {name} rep {rep}: {row['seconds']:.1f} s", flush=True)
        done = read(CSV)
    done = done[done["scenario"].isin(list(truths))]
    print(table(done, truths))


if __name__ == "__main__":
    main()
