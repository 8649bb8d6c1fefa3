"""Time the paper study's grid solvers (``vcpcr.benchmark._grid_fits.solve``).

Run from the repository root::

    python benchmarks/bench_study_solvers.py               # quick grids
    python benchmarks/bench_study_solvers.py --profile full --repeats 1

One standardized training fold (n = 40 of the paper's design, configuration 2,
p = 200, seed 0): each method fits its whole grid (every start, tuned and
traced value) once as warm-up, then ``--repeats`` times; the table gives the
median wall time and the number of models fitted. To compare two versions of
the package, run the script with each on ``PYTHONPATH`` in turn, on the same
machine and load.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from vcpcr.benchmark import draw_starts, get_methods
from vcpcr.benchmark._grid_fits import solve
from vcpcr.simulate import make_paper_data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick", choices=["quick", "full"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    data = make_paper_data(n_samples=40, rho=0.6, config=2, random_state=0)
    X, y = data.X, data.y
    Xs = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    ys = (y - y.mean()) / y.std(ddof=1)
    print(f"| method | models | median s (of {args.repeats}) |")
    print("|---|---|---|")
    for method in get_methods("all", args.profile):
        starts = draw_starts(Xs.shape[1], method.n_clusters, method.n_starts, 0)
        shape = (method.n_starts, len(method.tuned), len(method.traced))
        mask = np.ones(shape, dtype=bool)
        fit = solve(method, Xs, ys, starts, mask)  # warm-up
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            solve(method, Xs, ys, starts, mask)
            times.append(time.perf_counter() - t0)
        print(f"| {method.name} | {fit.n_fits} | {statistics.median(times):.3f} |")


if __name__ == "__main__":
    main()
