"""Benchmark: the batched SOS-NMF path solver against a loop of single fits.

Run on one core (the targets are one-core targets)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_path.py

Prints four tables (about a minute in all):

1. the paper's grid for one training fold (n=45, p=200; K in {4, 5, 6} x 5
   starts x 10 ridge weight vectors x 10 lam_ratios = 1,500 problems), with the
   speed-up over looping ``_sos_nmf_single`` and a check that both agree;
2. the Liver data (131 x 2785), K=20, 5 starts x 10 lam_ratios, ridge weights;
3. one fit at n=500, p=20,000, K=50: time and peak memory;
4. scaling of the batched solver with p, n, K and the grid size.

Times are the best of three runs of ``initial_lambda_max`` plus
``batched_sos_nmf`` (the whole tuning grid of a fold); the loop is timed once,
with ``lambda_max`` for each (weight, start) pair and ``_sos_nmf_single`` per
problem. "iters" is the total number of iterations over all problems; "same" counts the
problems with the loop's labels, iteration count and stopping reason, "v
bitwise" those whose memberships equal the loop's to the last bit.
"""

from __future__ import annotations

import os
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vcpcr._path import BatchResult, batched_sos_nmf, initial_lambda_max
from vcpcr._sos_nmf import _sos_nmf_single, lambda_max, random_partition, standardize
from vcpcr._weights import _ridge_gaussian

Array = NDArray[np.float64]
RATIOS = 10 ** np.linspace(-3, 0, 10)


def block_data(
    n: int, p: int, rho: float = 0.6, snr: float = 10.0, seed: int = 0
) -> tuple[Array, Array]:
    """The paper's simulation design (config 2) extended to any p >= 50.

    Ten blocks of five variables with within-block correlation ``rho``, the
    other variables independent N(0, 1); ``b`` is +1 on variables 1-5, -1 on
    11-15, +1 on 21-25, -1 on 31-35; noise variance ``b' Sigma b / snr``.
    """
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 10))
    blocks = np.sqrt(rho) * np.repeat(z, 5, axis=1)
    blocks += np.sqrt(1 - rho) * rng.normal(size=(n, 50))
    X = np.hstack([blocks, rng.normal(size=(n, p - 50))])
    b = np.zeros(p)
    for start, sign in ((0, 1), (10, -1), (20, 1), (30, -1)):
        b[start : start + 5] = sign
    signal_var = 4 * (5 + 20 * rho)  # four active blocks of five
    y = X @ b + np.sqrt(signal_var / snr) * rng.normal(size=n)
    return X, y


def ridge_weights(X: Array, y: Array, deltas: Array) -> tuple[Array, Array]:
    """Standardize X and y (ddof=1) and return Xs and the ridge weights."""
    Xs = standardize(X)[0]
    ys = (y - y.mean()) / y.std(ddof=1)
    return Xs, _ridge_gaussian(Xs, ys, np.asarray(deltas, dtype=float))


class Grid:
    """The tuning grid of one fold: every (K, start, weight, lam_ratio)."""

    def __init__(
        self, Xs: Array, W: Array, Ks: tuple[int, ...], starts: int, seed: int = 1
    ) -> None:
        rng = np.random.default_rng(seed)
        self.Xs, self.W = Xs, W
        self.inits = [
            random_partition(Xs.shape[1], K, rng) for K in Ks for _ in range(starts)
        ]
        self.K = np.array([K for K in Ks for _ in range(starts)])
        shape = (W.shape[0], len(self.inits), RATIOS.size)
        self.d, self.i, self.r = (a.ravel() for a in np.indices(shape))

    def lams(self, lam_max: Array) -> Array:
        """lam = ratio * max over the starts of the same K (the estimator's rule)."""
        per_k = np.stack([lam_max[:, self.K == k].max(axis=1) for k in self.K], 1)
        return RATIOS[self.r] * per_k[self.d, self.i]

    def batched(self) -> BatchResult:
        lam_max = initial_lambda_max(self.Xs, self.W, self.inits)
        lams = self.lams(lam_max)
        return batched_sos_nmf(self.Xs, self.W, self.inits, self.d, self.i, lams)

    def loop(self) -> list[Any]:
        lam_max = np.array(
            [
                [
                    lambda_max(self.Xs, init, weights=w, standardize=False)
                    for init in self.inits
                ]
                for w in self.W
            ]
        )
        lams = self.lams(lam_max)
        return [
            _sos_nmf_single(self.Xs * self.W[d], self.inits[i], lam=lam)
            for d, i, lam in zip(self.d, self.i, lams, strict=True)
        ]


def best_of(f: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls, and the last result."""
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out


def agree(batch: BatchResult, loop: list[Any]) -> tuple[int, int]:
    """Problems with the loop's labels, iterations and reason; and bitwise v."""
    same = bitwise = 0
    for b, (res, status) in enumerate(loop):
        v = np.zeros(res.labels.size)
        sel = res.labels >= 0
        v[sel] = res.V[np.flatnonzero(sel), res.labels[sel]]
        same += bool(
            np.array_equal(batch.labels[b], res.labels)
            and batch.n_iter[b] == res.n_iter
            and batch.reason[b] == status.reason
        )
        bitwise += bool(np.array_equal(batch.v[b], v))
    return same, bitwise


def row(name: str, grid: Grid, with_loop: bool = True, repeat: int = 3) -> None:
    """Time the batched solver (and the loop) on ``grid``; print one line."""
    t_batch, batch = best_of(grid.batched, repeat)
    n_prob, iters = batch.n_iter.size, int(batch.n_iter.sum())
    per_it = 1e6 * t_batch / iters
    line = f"{name:<28} {n_prob:>6} {iters:>7} {t_batch:>9.3f} {per_it:>8.1f}"
    if with_loop:
        t_loop, loop = best_of(grid.loop, 1)
        same, bitwise = agree(batch, loop)
        line += f" {t_loop:>9.2f} {t_loop / t_batch:>7.1f}x {same:>5}/{n_prob}"
        line += f" {bitwise:>5}/{n_prob}"
    print(line, flush=True)


def header(title: str) -> None:
    print(f"\n{title}")
    cols = f"{'case':<28} {'probs':>6} {'iters':>7} {'batch s':>9} {'us/iter':>8}"
    print(cols + f" {'loop s':>9} {'speedup':>8} {'same':>11} {'v bitwise':>11}")


def large_fit() -> None:
    """One fit at n=500, p=20,000, K=50: time and memory."""
    n, p, K = 500, 20_000, 50
    X, y = block_data(n, p, seed=3)
    Xs, W = ridge_weights(X, y, [0.01])
    init = [random_partition(p, K, np.random.default_rng(4))]

    def fit() -> BatchResult:
        lam = 0.1 * initial_lambda_max(Xs, W, init)[0, 0]
        return batched_sos_nmf(Xs, W, init, [0], [0], [lam])

    t_batch, res = best_of(fit)
    tracemalloc.start()
    fit()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    lam = 0.1 * lambda_max(Xs, init[0], weights=W[0], standardize=False)
    t0 = time.perf_counter()
    ref, _ = _sos_nmf_single(Xs * W[0], init[0], lam=lam)
    t_loop = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    same = np.array_equal(ref.labels, res.labels[0]) and ref.n_iter == res.n_iter[0]
    print(f"\n3. One fit, n={n}, p={p}, K={K}, lam_ratio=0.1 (ridge delta=0.01)")
    print(
        f"   batched: {t_batch:.3f} s for {res.n_iter[0]} iterations "
        f"({res.reason[0]}); single-fit loop: {t_loop:.3f} s; same result: {same}"
    )
    print(
        f"   peak memory of the call (tracemalloc): {peak / 2**20:.0f} MiB; "
        f"process peak RSS so far: {rss:.0f} MiB (data X is {X.nbytes / 2**20:.0f} "
        f"MiB)"
    )


def main() -> None:
    threads = {k: os.environ.get(k, "unset") for k in ("OPENBLAS_NUM_THREADS",)}
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}, {threads}")

    header("1. Paper grid, one training fold (n=45, p=200, rho=0.6, SNR=10)")
    X, y = block_data(45, 200)
    Xs, W = ridge_weights(X, y, 10 ** np.linspace(-4, -2, 10))
    row("3 K x 5 starts x 10 x 10", Grid(Xs, W, (4, 5, 6), 5))

    header("2. Liver (131 x 2785), K=20, 5 starts x 10 lam_ratios, delta=0.01")
    from vcpcr.datasets import load_liver

    Xl, yl = load_liver(return_X_y=True)
    Xs, W = ridge_weights(np.asarray(Xl, float), np.asarray(yl, float), [0.01])
    row("K=20 x 5 starts x 10", Grid(Xs, W, (20,), 5))

    large_fit()

    header("4. Scaling (ridge delta=0.01 unless stated; 5 starts x 10 lam_ratios)")
    for p in (200, 1000, 5000, 20_000):
        Xs, W = ridge_weights(*block_data(50, p, seed=5), [0.01])
        row(f"p={p} (n=50, K=5)", Grid(Xs, W, (5,), 5))
    for n in (50, 200, 1000):
        Xs, W = ridge_weights(*block_data(n, 1000, seed=6), [0.01])
        row(f"n={n} (p=1000, K=5)", Grid(Xs, W, (5,), 5))
    Xs, W = ridge_weights(*block_data(50, 1000, seed=7), [0.01])
    for K in (2, 10, 20, 50):
        row(f"K={K} (n=50, p=1000)", Grid(Xs, W, (K,), 5))
    X, y = block_data(45, 200, seed=8)
    for n_w, Ks, starts in ((1, (5,), 3), (1, (4, 5, 6), 5), (10, (4, 5, 6), 5)):
        Xs, W = ridge_weights(X, y, 10 ** np.linspace(-4, -2, n_w))
        grid = Grid(Xs, W, Ks, starts)
        row(f"grid {len(grid.inits)} starts x {n_w} w x 10", grid)
    Xs, W = ridge_weights(X, y, 10 ** np.linspace(-4, -2, 40))
    row("grid 15 starts x 40 w x 10", Grid(Xs, W, (4, 5, 6), 5), with_loop=False)


if __name__ == "__main__":
    main()
