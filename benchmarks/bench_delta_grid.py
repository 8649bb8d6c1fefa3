"""Benchmark (#27, rule F): a weights grid without its two densest deltas.

Run on one core each (``benchmarks`` extra for the cohorts), resumable: every
data set or split is appended to a CSV checkpoint as soon as it is done::

    OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_delta_grid.py --part null  # or signal, cohorts
    python benchmarks/bench_delta_grid.py --part cost   # quiet machine, 2 cores

**Why.** #27's cost goal (a ``VCPCRCV()`` fit in at most twice a 5-fold
Coxnet CV on the 300 x 20,000 cox benchmark) is missed at 2.9-3.7x. Almost
half of the time is the step-0 weights (one elastic-net Cox path per fold,
``l1_ratio`` 0.05), which cost what R's glmnet costs, and three quarters of
each path are its two densest deltas (``0.01`` and ``0.022 delta_max``:
2,455 and 3,342 non-zero weights at 300 x 20,000; ``docs/performance.md``).
Since the sixth study the default chooses models of a handful of genes
(median 4-6 on the cohorts), so the candidate drops the grid's dense end.

**The candidate** (``sparse deltas``): today's default, ``VCPCRCV()``, with
the elastic-net grid's four sparsest deltas, ``delta_max * 10**linspace(-2,
log10(0.5), 6)[2:]`` (0.048, 0.105, 0.229 and 0.5 of ``delta_max``), instead
of all six. It is a subset of today's grid, so every point it keeps has the
same fold scores; the two differ only where today's default chooses one of
the two dropped deltas or where a dropped point was the best one (the paired
gate's reference). The benchmark takes the deltas from today's default's
``cv_results_`` on the same data, so both see the same ``delta_max``.

**Rule F, stated and committed before any of its runs.** The candidate
becomes the default grid of the ``"enet"`` weights (``VCPCRCV``'s default;
``"lasso"`` and the others are not studied and keep theirs) when all hold:

- (N) on 200 new global-null data sets per family (``bench_signed.py``'s
  ``null_flipped``, seeds 1000-1199, which no study has used) it chooses at
  most 3 genes on at least 80 % of them, in every family;
- (S) on 30 new signal data sets per family (``flipped``: the paper's
  configuration 1 with half the columns' signs flipped, 1,000 test rows;
  seeds 1300-1329), its held-out score (R^2, AUC, Harrell's C) minus today's
  default's, paired, has a mean whose 95 % t lower bound is above -0.01, in
  every family;
- on 20 stratified 70/30 splits per cohort of the six cohorts on split seed
  9 (new), against today's default on the same splits and folds: (C) the
  average C difference has a 95 % lower bound above -0.01, (I) the average
  IBS difference a 95 % upper bound below +0.005, (b) its median genes over
  all splits are at most twice Coxnet's (``l1_ratio=0.5``, alpha by C) and
  (d) it selects genes on more than half of the splits of gse3143 and of
  gse4335.

(N) and (S) run first; the cohorts run only if they hold. Reported, not
deciding: the same cohort run on split seeds 7 and 8 (``--seed``: rule E's
splits and the second-seed run's, which earlier studies have seen); genes,
true positives and null genes on the signal sets; the C and IBS against
Coxnet; and (``--part cost``) the fit time of both against the 5-fold
Coxnet CV on ``bench_speed.py``'s 300 x 20,000 cox case, two runs each in
alternating order, the goal being at most 2x.

**Outcome of F** (``docs/tuning.md``, "Rule F"): (N) at most 3 genes on
93.5 %, 97.5 % and 97.5 % of the null sets (today's default 92 %, 96.5 %,
95 %); (S) held-out score minus today's -0.0020 [-0.0062, +0.0022]
(binomial), +0.0012 [-0.0004, +0.0027] (cox) and +0.0026 [-0.0013, +0.0065]
(gaussian); on seed 9 (C) **-0.0075 [-0.0141, -0.0008]: F fails** (MCLcleaned
-0.030 [-0.063, +0.003]), (I) +0.0013 [+0.0002, +0.0023], (b) 4 median genes
against Coxnet's 9, (d) genes on every split of gse3143 and gse4335. The
default grid is unchanged. The cohorts started while the last 150 null sets
ran (they decide nothing before (N) and (S)); the cost run (both 2.6x apart:
``results/delta_grid_cost.txt``) ran after seed 9's verdict.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_candidates import null_folds, run_cohorts
from bench_signed import ACTIVE_GENES, NULL_GENES, draw, held_out

from vcpcr import VCPCRCV

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = ("gaussian", "binomial", "cox")
TODAY, SPARSE = "VC-PCR today", "VC-PCR sparse deltas"
SEEDS = {"null": range(1000, 1200), "signal": range(1300, 1330)}


def sparse_deltas(today: VCPCRCV):
    """The four sparsest deltas of today's grid, as fitted (ascending)."""
    return np.unique(today.cv_results_["delta"])[-4:]


def fits(X, y, folds, seed, family="cox", **_) -> dict:
    """Today's default and the candidate, refitted, on one set of folds."""
    kw = {"family": family, "cv": folds, "random_state": seed}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        today = VCPCRCV(**kw).fit(X, y)
        sparse = VCPCRCV(deltas=sparse_deltas(today), **kw).fit(X, y)
    return {TODAY: today, SPARSE: sparse}


def delta_index(cv: VCPCRCV) -> dict:
    """The chosen delta's position in the fitted grid (ascending)."""
    deltas = np.unique(cv.cv_results_["delta"])
    return {"delta_index": int(np.searchsorted(deltas, cv.best_params_["delta"]))}


def run_sets(
    out: str, part: str, fits=fits, seeds=SEEDS, summary=None, extra=delta_index
) -> None:
    """The null or the signal sets of every family, checkpointed.

    ``fits`` maps each method to a fit with ``coef_`` (and ``predict``);
    ``extra(fit)`` adds columns to its row; ``summary(df, part)`` (default
    :func:`summarize`) prints the table.
    """
    design = "null_flipped" if part == "null" else "flipped"
    done = pd.read_csv(out) if os.path.exists(out) else pd.DataFrame()
    keys = set() if done.empty else set(zip(done.family, done.seed, strict=True))
    for seed in seeds[part]:
        for family in FAMILIES:
            if (family, seed) in keys:
                continue
            X, y, test = draw(family, design, seed)
            folds = null_folds(X, y, family, seed)
            rows = []
            for method, cv in fits(X, y, folds, seed, family).items():
                sel = np.flatnonzero(cv.coef_)
                rows.append(
                    {
                        "family": family,
                        "seed": seed,
                        "method": method,
                        "genes": sel.size,
                        "true_pos": int(np.isin(sel, ACTIVE_GENES).sum()),
                        "null_sel": int(np.isin(sel, NULL_GENES).sum()),
                        "score": np.nan if test is None else held_out(cv, family, test),
                        **(extra(cv) if extra else {}),
                    }
                )
            pd.DataFrame(rows).to_csv(
                out, mode="a", header=not os.path.exists(out), index=False
            )
            print(family, seed, [r["genes"] for r in rows], flush=True)
    (summary or summarize)(pd.read_csv(out), part)


def summarize(
    df: pd.DataFrame, part: str, pairs: tuple[tuple[str, str], ...] = ((SPARSE, TODAY),)
) -> None:
    """Per family and method: the null share (with its 95 % Clopper-Pearson
    interval) or, for each ``(method, base)`` of ``pairs``, the signal's
    paired difference."""
    g = df.groupby(["family", "method"], sort=False)
    share, n = g.genes.apply(lambda s: (s <= 3).mean()), g.size()
    k = share * n
    table = pd.DataFrame(
        {
            "sets": n,
            "<= 3 genes": share,
            "lo": np.nan_to_num(stats.beta.ppf(0.025, k, n - k + 1), nan=0.0),
            "hi": np.nan_to_num(stats.beta.ppf(0.975, k + 1, n - k), nan=1.0),
            "median genes": g.genes.median(),
            "true pos.": g.true_pos.mean(),
            "null sel.": g.null_sel.mean(),
            "held-out": g.score.mean(),
        }
    )
    print(table.round(3).to_string())
    if part != "signal":
        return
    wide = df.pivot_table(index=["family", "seed"], columns="method", values="score")
    for method, base in pairs:
        diff = (wide[method] - wide[base]).groupby(level="family")
        res = diff.agg(["mean", "std", "count"])
        half = stats.t.ppf(0.975, res["count"] - 1) * res["std"] / np.sqrt(res["count"])
        res["lo"], res["hi"] = res["mean"] - half, res["mean"] + half
        res["changed"] = diff.apply(lambda s: int((s != 0).sum()))
        print(f"\n{method} - {base}, held-out score (95 % t interval)")
        print(res.round(4).to_string())


def run_cost(runs: int = 2) -> None:
    """Both against the 5-fold Coxnet CV on the 300 x 20,000 cox case."""
    from bench_speed import make_case

    from vcpcr import Surv

    X, (time_, event) = make_case(300, 20_000, "cox")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        today = VCPCRCV(family="cox", n_jobs=2, random_state=0).fit(
            X, Surv(time_, event)
        )
    time_against_coxnet([(TODAY, {}), (SPARSE, {"deltas": sparse_deltas(today)})], runs)


def time_against_coxnet(order, runs: int = 2) -> None:
    """Time ``VCPCRCV(**params)`` per ``(name, params)`` against a Coxnet CV.

    On the 300 x 20,000 cox case of ``bench_speed.py``, ``n_jobs=2``; each
    run alternates the order of the methods and times the 5-fold Coxnet CV
    next to each.
    """
    from bench_speed import coxnet_cv, make_case, timed

    from vcpcr import Surv

    X, (time_, event) = make_case(300, 20_000, "cox")
    y = Surv(time_, event)
    kw = {"family": "cox", "n_jobs": 2, "random_state": 0}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(f"{'run':<5} {'method':<22} {'s':>7} {'Coxnet CV s':>12} {'ratio':>6}")
    for k in range(runs):
        for name, params in order[:: -1 if k % 2 else 1]:  # alternate the order
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ours = timed(lambda p=params: VCPCRCV(**kw, **p).fit(X, y))
            peer = timed(lambda: coxnet_cv(X, time_, event))
            print(f"{k:<5} {name:<22} {ours:>7.1f} {peer:>12.1f} {ours / peer:>6.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("null", "signal", "cohorts", "cost"))
    parser.add_argument("--seed", type=int, default=9, help="cohorts' split seed")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    name = f"cohorts_seed{args.seed}" if args.part == "cohorts" else args.part
    out = args.out or os.path.join(HERE, "results", f"delta_grid_{name}.csv")
    start = time.time()
    if args.part == "cost":
        run_cost()
    elif args.part == "cohorts":
        run_cohorts(
            out, 20, args.seed, (TODAY, SPARSE, "Coxnet"), fits=fits, base=TODAY
        )
    else:
        run_sets(out, args.part)
    print(f"{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
