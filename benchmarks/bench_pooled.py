"""Benchmark (#50 item 5): the calibration slopes' search, bisection against grid.

Run on one core::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_pooled.py [--points 240]

``VCPCRCV``'s default criterion shrinks every grid point's out-of-fold
predictors by the calibration slope of the other folds
(:func:`vcpcr._solvers.pooled.cross_calibrated`: one slope search per fold and
one on all rows). The search scored all 51 slopes of ``SLOPES``; it now
bisects on the forward differences of the convex deviance (12 deviances). This
script times both searches in the same run, on Cox data of the shapes of
``bench_speed.py`` (300 and 6,000 rows, 240 grid points: the default grid's
3 x 6 x 20, a stack of linear predictors of varied strength, 30 % censored),
checks that the slopes are identical, and prints one table (CPU seconds of the
five folds' and the overall searches, and the bootstrap of the standard
errors for scale).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from vcpcr._solvers.distributions import PROPORTIONAL_HAZARDS
from vcpcr._solvers.pooled import (
    N_BOOT,
    SLOPES,
    bootstrap_counts,
    calibration_slopes,
    pooled_bootstrap,
    pooled_deviance,
)


def grid_slopes(offset, clustered, outcome):
    """The search before: every slope of the grid scored, the first minimum."""
    dev = np.stack(
        [
            pooled_deviance(PROPORTIONAL_HAZARDS, offset + g * clustered, outcome)
            for g in SLOPES
        ]
    )
    return SLOPES[np.argmin(dev, axis=0)]


def data(n, points, seed=0):
    """Out-of-fold-like predictors of ``points`` strengths, and 5 folds."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    clustered = np.outer(rng.uniform(0, 1.5, points), x)
    clustered += 0.3 * rng.normal(size=(points, n))
    offset = np.tile(0.2 * rng.normal(size=n), (points, 1))
    t, c = rng.exponential(np.exp(-x)), rng.exponential(2.0, n)
    outcome = np.column_stack([np.minimum(t, c), (t <= c).astype(float)])
    folds = np.array_split(rng.permutation(n), 5)
    return offset, clustered, outcome, folds


def cpu(f, *args):
    """CPU seconds of ``f(*args)``, and its value."""
    t0 = time.process_time()
    out = f(*args)
    return time.process_time() - t0, out


def bisect(offset, clustered, outcome):
    """The search now (:func:`calibration_slopes`)."""
    return calibration_slopes(PROPORTIONAL_HAZARDS, offset, clustered, outcome)


def searches(search, offset, clustered, outcome, folds):
    """The slope searches of ``cross_calibrated``: each fold's rest, then all."""
    out = []
    for test in folds:
        rest = np.ones(offset.shape[1], dtype=bool)
        rest[test] = False
        out.append(search(offset[:, rest], clustered[:, rest], outcome[rest]))
    out.append(search(offset, clustered, outcome))
    return np.stack(out)


def row(n, points):
    """One line of the table: ``n`` rows, ``points`` grid points."""
    offset, clustered, outcome, folds = data(n, points)
    t_grid, s_grid = cpu(searches, grid_slopes, offset, clustered, outcome, folds)
    t_new, s_new = cpu(searches, bisect, offset, clustered, outcome, folds)
    eta, rng = offset + clustered, np.random.default_rng(1)
    dist = PROPORTIONAL_HAZARDS
    counts = bootstrap_counts(n, N_BOOT, rng)
    t_boot, _ = cpu(pooled_bootstrap, dist, eta, outcome, None, counts)
    return {
        "rows": n,
        "points": points,
        "grid (51) CPU s": t_grid,
        "bisection CPU s": t_new,
        "ratio": t_grid / t_new,
        "identical slopes": bool(np.array_equal(s_grid, s_new)),
        "distinct slopes": int(np.unique(s_new).size),
        f"bootstrap ({N_BOOT}) CPU s": t_boot,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=240)
    args = parser.parse_args()
    table = pd.DataFrame([row(n, args.points) for n in (300, 6000)])
    print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))


if __name__ == "__main__":
    main()
