"""Benchmark: VCPCRCV with batched step-2 scoring against the per-point path.

Run on one core::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_cv.py [--cox-enet]

Prints one table:

1. the paper's 50 x 200 problem (``make_paper_data``, configuration 1,
   ``random_state=0``) with ``VCPCRCV``'s defaults: 3 K x 6 elastic-net
   deltas x 20 lam_ratios = 360 grid points x 5 starts x 5 folds (10
   lam_ratios, 180 points, before #27's rule E and in the committed
   numbers). "batched"
   is the default scoring (all grid points of a fold fitted and scored
   together); "per point" forces the per-point estimator path by passing the
   same scorer as a callable (``get_scorer("neg_mean_squared_error")``),
   which is how the fit ran before issue #9. Both in the same run; the table
   says whether their ``cv_results_`` agree.
2. ``VCPCRCV(family="cox", weights="ridge")`` on a simulated 300 x 5,000
   cohort (``make_block_data(..., family="cox")``): 3 K x 3 deltas x 10
   lam_ratios = 90 grid points x 5 starts x 5 folds, batched and per point
   (the estimator's concordance as a callable).
3. with ``--cox-enet``: the same cohort with the default elastic-net weights
   (Cox weights by scikit-survival's Coxnet, #9).

Times are wall-clock seconds of one run (``n_jobs=None``: folds in sequence).
The comparison with loops of Algorithm 1 is ``benchmarks/bench_path.py``.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from typing import Any

import numpy as np
from sklearn.metrics import get_scorer

from vcpcr import VCPCRCV
from vcpcr.simulate import make_block_data, make_paper_data


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
