"""Design-matrix build time of ``y ~ .`` on wide numeric data.

Compares vcpcr's fast path (``parse_formula``) with formulaic's own
``model_matrix`` and with ``parse_formula`` forced through formulaic (the route
taken when the data has, e.g., one categorical column).

Run: ``python benchmarks/bench_formula.py [--rows 500] [--cols 1000 5000 20000]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from unittest import mock

import numpy as np
import pandas as pd
from formulaic import model_matrix

import vcpcr._formula as fm

SLOW_LIMIT = 30.0  # seconds: time formulaic once when a run is slower than this


def make_data(n_rows: int, n_cols: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        rng.normal(size=(n_rows, n_cols)), columns=[f"g{j}" for j in range(n_cols)]
    )
    df.insert(0, "y", rng.normal(size=n_rows))
    return df


def best_time(func: Callable[[], object], repeats: int) -> tuple[float, int]:
    """Best wall time over ``repeats`` runs (one run if the first is slow)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
        if times[-1] > SLOW_LIMIT / repeats:
            break
    return min(times), len(times)


def formulaic_route(df: pd.DataFrame) -> object:
    with mock.patch.object(fm, "_fast_path_columns", return_value=None):
        return fm.parse_formula("y ~ .", df)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--cols", type=int, nargs="+", default=[1000, 5000, 20000])
    args = parser.parse_args()

    header = (
        f"{'rows':>5} {'cols':>6} | {'fast path':>10} | {'formulaic':>10} "
        f"| {'parse_formula via formulaic':>27} | {'speed-up':>8}"
    )
    print("design build time for 'y ~ .' (seconds, best of runs; [n] = runs)\n")
    print(header)
    print("-" * len(header))
    for n_cols in args.cols:
        df = make_data(args.rows, n_cols)
        res = fm.parse_formula("y ~ .", df)
        ref = model_matrix("y ~ .", df).rhs.iloc[:, 1:]  # identical design check
        assert res.spec.model_spec is None
        assert list(res.X.columns) == list(ref.columns)
        assert np.array_equal(res.X.to_numpy(), ref.to_numpy())
        fast, n_fast = best_time(lambda: fm.parse_formula("y ~ .", df), 5)  # noqa: B023
        slow, n_slow = best_time(lambda: model_matrix("y ~ .", df), 3)  # noqa: B023
        route, n_route = best_time(lambda: formulaic_route(df), 3)  # noqa: B023
        print(
            f"{args.rows:>5} {n_cols:>6} | {fast:>6.3f} [{n_fast}] | "
            f"{slow:>6.2f} [{n_slow}] | {route:>23.2f} [{n_route}] | "
            f"{slow / fast:>7.0f}x"
        )


if __name__ == "__main__":
    main()
