"""Cost of the overflow-free standardization against the textbook formula.

``vcpcr._scaling.standardize`` divides each column by a power of two before
centring and scaling (one extra pass over ``X``); this prints its time and the
time of ``(X - X.mean(0)) / X.std(0, ddof=1)`` on the same data.

Run: ``python benchmarks/bench_scaling.py``
"""

from __future__ import annotations

import time

import numpy as np

from vcpcr._scaling import standardize


def _best_of(f, repeat=5):
    times = []
    for _ in range(repeat):
        tic = time.perf_counter()
        f()
        times.append(time.perf_counter() - tic)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'n x p':>14} {'textbook s':>11} {'vcpcr s':>9} {'ratio':>6}")
    for n, p in ((50, 2_000), (131, 2_785), (500, 20_000)):
        X = rng.normal(size=(n, p))
        textbook = _best_of(lambda X=X: (X - X.mean(0)) / X.std(0, ddof=1))
        ours = _best_of(lambda X=X: standardize(X))
        print(f"{n:>5} x {p:<6} {textbook:>11.4f} {ours:>9.4f} {ours / textbook:>6.2f}")


if __name__ == "__main__":
    main()
