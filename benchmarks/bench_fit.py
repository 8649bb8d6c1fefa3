"""Fit time of VCPCR (plain script; prints a table).

Run: python benchmarks/bench_fit.py
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from vcpcr import VCPCR, sos_nmf
from vcpcr.datasets import load_liver


def paper_like(n=50, p=200, rho=0.6, seed=0):
    """The paper's configuration 2: ten correlated blocks of five, 150 noise."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 10))
    blocks = np.sqrt(rho) * np.repeat(z, 5, axis=1) + np.sqrt(1 - rho) * rng.normal(
        size=(n, 50)
    )
    X = np.hstack([blocks, rng.normal(size=(n, p - 50))])
    b = np.zeros(p)
    b[0:5], b[10:15], b[20:25], b[30:35] = 1, -1, 1, -1
    return X, X @ b + rng.normal(scale=np.sqrt(b @ b * (1 + 4 * rho) / 10), size=n)


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    warnings.simplefilter("ignore")
    X, y = paper_like()
    Xl, yl = load_liver(return_X_y=True)
    rows = [
        (
            "sos_nmf, one start",
            "50 x 200, K=5",
            best_of(lambda: sos_nmf(X, 5, lam_ratio=0.3, random_state=0), 20),
        ),
        (
            "VCPCR.fit, n_init=10",
            "50 x 200, K=5",
            best_of(lambda: VCPCR(5, n_init=10, random_state=0).fit(X, y)),
        ),
        (
            "VCPCR.fit, n_init=10",
            "131 x 2785, K=5",
            best_of(lambda: VCPCR(5, n_init=10, random_state=0).fit(Xl, yl)),
        ),
        (
            "VCPCR.fit, n_init=10",
            "131 x 2785, K=20",
            best_of(lambda: VCPCR(20, n_init=10, random_state=0).fit(Xl, yl)),
        ),
        (
            "VCPCR.fit binomial, n_init=10",
            "131 x 2785, K=20",
            best_of(
                lambda: VCPCR(20, family="binomial", n_init=10, random_state=0).fit(
                    Xl, yl > yl.median()
                )
            ),
        ),
    ]
    print(f"{'what':32} {'data':18} {'seconds (best of 5)':>20}")
    for what, data, sec in rows:
        print(f"{what:32} {data:18} {sec:20.4f}")


if __name__ == "__main__":
    main()
