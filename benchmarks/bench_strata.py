"""Benchmark: a stratified ``VCPCRCV(family="cox")``, batched against per point.

Each fold's step 2 of a stratified Cox model is one batched Newton iteration
for all grid points, within strata (``vcpcr._solvers.step2_fits.cox_batch``
with ``strata``); before, every grid point of every fold was one lifelines
fit. This script times, in the same run, on the same data and folds:

* ``no strata``: the centre column left out (the unstratified batch);
* ``strata, batched``: ``strata=["center"]`` (today);
* ``strata, per point``: the same with the batch made to vouch for no fit,
  so that every point goes to lifelines, as before.

Data: ``make_block_data`` (cox, 4 blocks of 10 with 2 active, 60 noise
features: p = 100), n = 200, and a centre column with 3 levels drawn at
random (seeded); 5 folds, ``n_jobs=1``, ``VCPCRCV``'s default grid and
tuning with ``n_clusters=(2, 3)``. Reported: wall seconds (best of
``--repeats``), the per-point / batched ratio, and the largest difference
of the fold scores between the two stratified runs (lifelines converges to
~1e-7 in the coefficients).

Run:  python benchmarks/bench_strata.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

from vcpcr import VCPCRCV
from vcpcr._families import Cox
from vcpcr.simulate import make_block_data


def data() -> tuple[Any, Any]:
    """The seeded data set of the module docstring: X with ``center``, y."""
    d = make_block_data(
        200, [10] * 4, [1.0, -1.0, 0.0, 0.0], n_noise=60, family="cox", random_state=0
    )
    rng = np.random.default_rng(1)
    X = pd.DataFrame(d.X, columns=[f"g{j}" for j in range(d.X.shape[1])])
    X["center"] = rng.integers(0, 3, 200).astype(float)
    return X, np.column_stack([d.y, d.event])


def fit(X: Any, y: Any, strata: bool) -> tuple[float, Any]:
    """Seconds and ``cv_results_`` of one fit."""
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y[:, 1]))
    kw: dict[str, Any] = {"strata": ["center"]} if strata else {}
    model = VCPCRCV(
        n_clusters=(2, 3), family="cox", cv=folds, n_jobs=1, random_state=0, **kw
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X if strata else X.drop(columns="center"), y)
    return time.perf_counter() - start, model.cv_results_


def per_point() -> None:
    """Make the batch vouch for no fit (every point goes to lifelines)."""
    batch = Cox._fit_batch

    def vouching_for_none(self: Cox, M: Any, outcome: Any, strata: Any) -> Any:
        out = batch(self, M, outcome, strata)
        out.ok[:] = False
        return out

    Cox._fit_batch = vouching_for_none  # type: ignore[method-assign]


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = data()
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    rows = {}
    for name, strata in [("no strata", False), ("strata, batched", True)]:
        runs = [fit(X, y, strata) for _ in range(args.repeats)]
        rows[name] = (min(t for t, _ in runs), runs[0][1])
    per_point()
    runs = [fit(X, y, True) for _ in range(args.repeats)]
    rows["strata, per point"] = (min(t for t, _ in runs), runs[0][1])
    n_points = len(rows["no strata"][1])
    print(f"n = 200, p = 100, 3 strata, 5 folds, {n_points} grid points, n_jobs=1")
    print(f"{'fit':<20} {'seconds':>8}")
    for name, (seconds, _) in rows.items():
        print(f"{name:<20} {seconds:>8.2f}")
    ratio = rows["strata, per point"][0] / rows["strata, batched"][0]
    print(f"per point / batched: {ratio:.1f}")
    a, b = rows["strata, batched"][1], rows["strata, per point"][1]
    diff = max(
        float(np.nanmax(np.abs(a[f"split{j}_test_score"] - b[f"split{j}_test_score"])))
        for j in range(5)
    )
    print(f"largest fold-score difference, batched vs per point: {diff:.2e}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
