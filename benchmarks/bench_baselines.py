"""Fit times of the competitor estimators on the paper's simulated design.

Run from the repository root::

    python benchmarks/bench_baselines.py            # n=50, p=200, 5 repeats
    python benchmarks/bench_baselines.py --repeats 3 --no-large

Data: the VC-PCR paper's simulation (its section "Experiments"), configuration 2 by
default: p = 200, ten blocks of five variables with within-block correlation
``rho`` (0.6), variables 51-200 independent, coefficients +1/-1 on blocks 1, 3,
5, 7 and SNR = 10. Each row is the median wall time of ``--repeats`` fits
(after one warm-up fit), with the model size ``s`` and the in-sample R^2.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from vcpcr.baselines import CEN, CRL, SRR, hclustvar


def simulate(
    n: int = 50, rho: float = 0.6, config: int = 2, seed: int = 0, snr: float = 10.0
) -> tuple[np.ndarray, np.ndarray]:
    """The paper's design (p = 200) for configurations 1, 2 and 3."""
    rng = np.random.default_rng(seed)
    p = 200
    if config == 1:
        blocks = [range(s, s + 10) for s in (0, 10, 20, 30)] + [
            range(40, 45),
            range(45, 50),
        ]
    elif config == 2:
        blocks = [range(s, s + 5) for s in range(0, 50, 5)]
    else:
        blocks = [range(s, s + 5) for s in (0, 10, 20, 30)]
    sigma = np.eye(p)
    for block in blocks:
        idx = np.array(block)
        sigma[np.ix_(idx, idx)] = rho
    np.fill_diagonal(sigma, 1.0)
    b = np.zeros(p)
    b[0:5], b[10:15], b[20:25], b[30:35] = 1.0, -1.0, 1.0, -1.0
    X = rng.normal(size=(n, p)) @ np.linalg.cholesky(sigma).T
    y = X @ b + np.sqrt(b @ sigma @ b / snr) * rng.normal(size=n)
    return X, y


def timed(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Median wall time of ``repeats`` calls (after a warm-up call)."""
    out = fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--rho", type=float, default=0.6)
    parser.add_argument("--config", type=int, default=2, choices=(1, 2, 3))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--no-large", action="store_true", help="skip hclustvar at p = 2000"
    )
    args = parser.parse_args()
    X, y = simulate(n=args.n, rho=args.rho, config=args.config)
    models = {
        "CRL-kmeans (K=5, n_init=10)": CRL(5, alpha=0.05, random_state=0),
        "CRL-hclust (Ward, K=5)": CRL(5, clustering="ward", alpha=0.05),
        "CRL-hclustCC (K=5)": CRL(5, clustering="hclustcc", alpha=0.05),
        "CEN (K=5, n_init=10)": CEN(5, alpha=0.05, gamma=1.0, random_state=0),
        "CEN (K=5, n_init=1)": CEN(5, alpha=0.05, n_init=1, random_state=0),
        "SRR (K=5, lambda_div=1, path of 10)": SRR(5, alpha=0.05, lambda_div=1.0),
        "SRR (K=5, lambda_div=0.1, path of 10)": SRR(5, alpha=0.15, lambda_div=0.1),
        "SRR (K=5, lambda_div=0.1, n_alphas=1)": SRR(
            5, alpha=0.15, lambda_div=0.1, n_alphas=1
        ),
    }
    print(f"n={args.n}, p={X.shape[1]}, config {args.config}, rho={args.rho}")
    print(f"{'method':<40} {'time (s)':>9} {'s':>5} {'R^2':>6}")
    for name, est in models.items():
        seconds, fitted = timed(lambda est=est: est.fit(X, y), args.repeats)
        size = int(np.sum(fitted.coef_ != 0))
        print(f"{name:<40} {seconds:9.4f} {size:5d} {fitted.score(X, y):6.3f}")
    seconds, _ = timed(lambda: hclustvar(X, 5), args.repeats)
    print(f"{'hclustvar alone (p=200, K=5)':<40} {seconds:9.4f}")
    if not args.no_large:
        rng = np.random.default_rng(1)
        X_large = np.hstack([X] * 10) + 0.5 * rng.normal(size=(X.shape[0], 2000))
        seconds, _ = timed(lambda: hclustvar(X_large, 20), 1)
        print(f"{'hclustvar alone (p=2000, K=20)':<40} {seconds:9.4f}")


if __name__ == "__main__":
    main()
