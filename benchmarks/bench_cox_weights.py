"""Timing of the penalized Cox weights (vcpcr._cox) on wide simulated data.

Run:  python benchmarks/bench_cox_weights.py [--n 500] [--p 2000 5000 20000]

For each p: ridge weights on the paper's ridge grid ``10**linspace(-4, -2, 10)``
and lasso weights on ``delta_max * geomspace(0.9, 0.05, 10)`` (from 1 to a few
hundred non-zeros), both as one path call. Prints wall time, the number of
non-zero lasso weights and the worst optimality violation relative to delta
(ridge: max|grad + delta w| / (delta max|w|); lasso: KKT).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from vcpcr._cox import breslow, cox_lasso_delta_max, cox_lasso_path, cox_ridge_path


def simulate(n: int, p: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standardized X (blocks of 50 correlated genes), tied censored times."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    n_blocks = min(20, p // 50)
    X[:, : 50 * n_blocks] += np.repeat(rng.normal(size=(n, n_blocks)), 50, axis=1)
    X = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    beta = np.zeros(p)
    beta[:5], beta[50:55] = 0.3, -0.3
    t_event = rng.exponential(np.exp(-X @ beta))
    t_cens = rng.exponential(2 * np.median(t_event), size=n)
    time_ = np.round(np.minimum(t_event, t_cens), 2)  # ties
    return X, time_, t_event <= t_cens


def violation(X, t, e, W, deltas, lasso: bool) -> float:
    """Worst optimality violation over the path, relative to delta."""
    worst = 0.0
    for w, dl in zip(W, deltas, strict=True):
        g = X.T @ breslow(X @ w, t, e, hessian=False)[1]
        if lasso:
            act = w != 0
            v = max(
                np.abs(g[act] + dl * np.sign(w[act])).max(initial=0.0),
                (np.abs(g[~act]) - dl).max(initial=0.0),
            )
            worst = max(worst, v / dl)
        else:
            worst = max(worst, np.abs(g + dl * w).max() / (dl * np.abs(w).max()))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--p", type=int, nargs="+", default=[2000, 5000, 20000])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import sklearn.linear_model  # noqa: F401  (import cost kept out of timings)

    print(f"n = {args.n}, 10 deltas per path, seed = {args.seed}")
    header = f"{'p':>6} {'method':>6} {'delta range':>20} {'time (s)':>9}"
    print(header + f" {'non-zeros':>10} {'max rel. violation':>19}")
    for p in args.p:
        X, t, e = simulate(args.n, p, args.seed)
        ridge = 10 ** np.linspace(-4, -2, 10)
        dmax = cox_lasso_delta_max(X, t, e)
        lasso = dmax * np.geomspace(0.9, 0.05, 10)
        for name, deltas, solver in (
            ("ridge", ridge, cox_ridge_path),
            ("lasso", lasso, cox_lasso_path),
        ):
            start = time.perf_counter()
            W = solver(X, t, e, deltas)
            elapsed = time.perf_counter() - start
            nnz = (W != 0).sum(axis=1)
            nz = f"{nnz.min()}-{nnz.max()}" if name == "lasso" else "all"
            rng_ = f"{deltas.min():.2e}-{deltas.max():.2e}"
            viol = violation(X, t, e, W, deltas, name == "lasso")
            print(f"{p:>6} {name:>6} {rng_:>20} {elapsed:>9.2f} {nz:>10} {viol:>19.1e}")
    print(f"events: {e.mean():.0%}, distinct times: {np.unique(t).size}")


if __name__ == "__main__":
    main()
