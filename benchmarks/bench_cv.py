"""Benchmark: VCPCRCV with batched step-2 scoring against the per-point path.

Run on one core::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_cv.py [--cox-enet]

Prints one table:

1. the paper's 50 x 200 problem (``make_paper_data``, configuration 1,
   ``random_state=0``) with ``VCPCRCV``'s defaults: 3 K x 6 elastic-net
   deltas x 10 lam_ratios = 180 grid points x 5 starts x 5 folds. "batched"
   is the default scoring (all grid points of a fold fitted and scored
   together); "per point" forces the per-point estimator path by passing the
   same scorer as a callable (``get_scorer("neg_mean_squared_error")``),
   which is how the fit ran before issue #9. Both in the same run; the table
   says whether their ``cv_results_`` agree.
2. a naive loop of the paper's Algorithm 1 (``tests/naive_sos_nmf.py``) over
   the same 4,500 problems, extrapolated from a seeded sample of 20 problems
   of the first fold (the full loop takes about 15 minutes), and a loop of
   the package's own single-problem solver ``vcpcr.sos_nmf`` over the same
   sample (the solver work only: no weights, no outcome fits).
3. ``VCPCRCV(family="cox", weights="ridge")`` on a simulated 300 x 5,000
   cohort (``make_block_data(..., family="cox")``): 3 K x 3 deltas x 10
   lam_ratios = 90 grid points x 5 starts x 5 folds, batched and per point
   (the estimator's concordance as a callable).
4. with ``--cox-enet``: the same cohort with the default elastic-net weights
   (Cox weights by scikit-survival's Coxnet, #9).

Times are wall-clock seconds of one run (``n_jobs=None``: folds in sequence).
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import get_scorer

from vcpcr import VCPCRCV, sos_nmf
from vcpcr._sos_nmf import random_partition, standardize
from vcpcr._weights import ENET_L1_RATIO, _weights_path, lasso_delta_max
from vcpcr.simulate import make_block_data, make_paper_data

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from naive_sos_nmf import naive_sos_nmf


def timed(fn: Any) -> tuple[float, Any]:
    """Wall-clock seconds of one call, and its result."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def agree(a: Any, b: Any) -> str:
    """Largest relative difference of the mean scores, and rank agreement."""
    ma, mb = a["mean_test_score"].to_numpy(), b["mean_test_score"].to_numpy()
    rel = np.max(np.abs(ma - mb) / np.maximum(np.abs(mb), 1e-300))
    ranks = np.array_equal(a["rank_test_score"], b["rank_test_score"])
    return f"max rel diff {rel:.1e}, ranks {'equal' if ranks else 'DIFFER'}"


def loop_times(X: Any, y: Any, cv: VCPCRCV, n_sample: int) -> tuple[float, float, int]:
    """Seconds per problem of the grid (a seeded sample from fold 1), and count.

    Returns the time per problem of the naive Algorithm 1, of the package's
    single-problem solver (``vcpcr.sos_nmf`` with a given start, one call per
    problem, as a user's loop would run it) and the number of problems.
    """
    from sklearn.model_selection import check_cv

    train, _ = next(iter(check_cv(cv.cv).split(X, y)))
    Xs, _, _ = standardize(X[train])
    yt = y[train]
    target = (yt - yt.mean()) / yt.std(ddof=1)
    dmax = lasso_delta_max(Xs, target, "gaussian", l1_ratio=ENET_L1_RATIO)
    deltas = dmax * 10 ** np.linspace(-2, np.log10(0.5), 6)
    W = _weights_path(Xs, target, "enet", deltas, "gaussian")
    rng = np.random.default_rng(0)
    ratios = 10 ** np.linspace(-3, 0, 10)
    Ks = (4, 5, 6)
    total = len(Ks) * W.shape[0] * ratios.size * cv.n_init * 5
    problems = [
        (
            W[rng.integers(W.shape[0])],
            random_partition(Xs.shape[1], int(rng.choice(Ks)), rng),
            float(rng.choice(ratios)),
        )
        for _ in range(n_sample)
    ]
    t0 = time.perf_counter()
    for w, init, r in problems:
        naive_sos_nmf(Xs, w, init, r)
    t_naive = (time.perf_counter() - t0) / n_sample
    t0 = time.perf_counter()
    for w, init, r in problems:
        sos_nmf(Xs, weights=w, init=init, lam_ratio=r, standardize=False)
    t_single = (time.perf_counter() - t0) / n_sample
    return t_naive, t_single, total


class _Rows:
    """Print each table row as soon as it is measured."""

    def append(self, row: tuple[str, str, str, str]) -> None:
        print(f"{row[0]:<38}  {row[1]:<14}  {row[2]:>7}  {row[3]}", flush=True)


def main() -> None:
    """Print the table."""
    warnings.simplefilter("ignore")
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    print(f"VCPCRCV timings (seconds; OPENBLAS_NUM_THREADS={threads})", flush=True)
    rows = _Rows()

    paper = make_paper_data(random_state=0)
    cv = VCPCRCV(random_state=0, refit=False)
    t_batch, fast = timed(lambda: cv.fit(paper.X, paper.y).cv_results_)
    slow_cv = VCPCRCV(
        random_state=0, refit=False, scoring=get_scorer("neg_mean_squared_error")
    )
    t_point, slow = timed(lambda: slow_cv.fit(paper.X, paper.y).cv_results_)
    rows.append(("VCPCRCV, batched scoring", "paper 50 x 200", f"{t_batch:.2f}", ""))
    rows.append(
        (
            "VCPCRCV, per-point scoring",
            "paper 50 x 200",
            f"{t_point:.2f}",
            f"{t_point / t_batch:.1f}x batched; {agree(fast, slow)}",
        )
    )
    per, per_single, total = loop_times(paper.X, paper.y, cv, n_sample=20)
    for name, t in (
        ("naive Algorithm 1 loop (extrapolated)", per),
        ("sos_nmf loop (extrapolated)", per_single),
    ):
        rows.append(
            (
                name,
                "paper 50 x 200",
                f"{t * total:.1f}",
                f"{total} problems x {t * 1e3:.2f} ms (20 sampled); "
                f"{t * total / t_batch:.1f}x batched, "
                f"{t * total / t_point:.1f}x per point",
            )
        )

    cohort = make_block_data(
        300,
        [10] * 10,
        [0.4, -0.4, 0.3, -0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        n_noise=4900,
        family="cox",
        random_state=0,
    )
    y = np.column_stack([cohort.y, cohort.event])
    cox = VCPCRCV(family="cox", weights="ridge", random_state=0, refit=False)
    t_batch, fast = timed(lambda: cox.fit(cohort.X, y).cv_results_)
    cox_slow = VCPCRCV(
        family="cox",
        weights="ridge",
        random_state=0,
        refit=False,
        scoring=lambda est, X, y: est.score(X, y),
    )
    t_point, slow = timed(lambda: cox_slow.fit(cohort.X, y).cv_results_)
    rows.append(("VCPCRCV cox ridge, batched", "300 x 5,000", f"{t_batch:.2f}", ""))
    rows.append(
        (
            "VCPCRCV cox ridge, per point",
            "300 x 5,000",
            f"{t_point:.2f}",
            f"{t_point / t_batch:.1f}x batched; {agree(fast, slow)}",
        )
    )
    if "--cox-enet" in sys.argv:
        enet = VCPCRCV(family="cox", random_state=0, refit=False)
        t_enet, _ = timed(lambda: enet.fit(cohort.X, y))
        rows.append(
            ("VCPCRCV cox, default (enet)", "300 x 5,000", f"{t_enet:.1f}", "batched")
        )


if __name__ == "__main__":
    main()
