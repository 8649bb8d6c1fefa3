"""Benchmark: the SOS-NMF engine against a loop of single-problem fits.

Run on one core (the targets are one-core targets)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_path.py

Prints three tables (a few minutes in all):

1. ``VCPCRCV`` on the paper's problem (``make_paper_data``: n=50, p=200;
   K in {4, 5, 6} x 6 elastic-net deltas x 20 lam_ratios = 360 grid points x
   5 starts x 5 folds; 10 lam_ratios, 180 points, before #27's rule E and in
   the committed numbers): the whole fit, the time in the SOS-NMF solver
   (``_tuning.solve_grid``, wrapped with a timer during the fit), and a loop of
   Algorithm 1 over the same problems, one problem at a time
   (``tests/single_sos_nmf.py``, the former single-problem solver: the same
   starts, weights and penalties, ``lam_max`` from its own first iteration);
   the speed-ups are the loop's time over the solver's and over the fit's;
   also a loop of Algorithm 1 as written (dense ``V``, ``(V'V)^-1``,
   correlations: ``textbook_sos_nmf``, the vectorized form of
   ``tests/naive_sos_nmf.py``), the "naive loop" of issue #9;
2. the engine (``_clustering.best_starts``) against the loop on other grids
   (Liver data, growing p), with the number of problems whose clusters agree
   (ARI = 1);
3. one fit at n=500, p=20,000, K=50: time and peak memory.

All ratios are measured in the same run; on a loaded machine absolute times
are noisy but ratios much less so.
"""

from __future__ import annotations

import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import KFold

import vcpcr._tuning as tuning
from vcpcr import VCPCRCV
from vcpcr._clustering import BestStarts, best_starts
from vcpcr._scaling import standardize
from vcpcr._sos_nmf import random_partition
from vcpcr._weights import weights_for_grid
from vcpcr.simulate import make_paper_data

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from single_sos_nmf import sos_nmf_single

Array = NDArray[np.float64]
RATIOS = 10 ** np.linspace(-3, 0, 10)


def best_of(f: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls, and the last result."""
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out


def loop_best_starts(
    Xs: Array, W: Array, groups: list[list[Any]], k_i: Any, d_i: Any, ratios: Any
) -> list[Any]:
    """The restart driver's work, one single-problem fit at a time."""
    lam_max = {
        (d, g): max(
            sos_nmf_single(Xs * W[d], s, lam=0.0, max_iter=1)[0].lam_max
            for s in groups[g]
        )
        for g, d in set(zip(k_i.tolist(), d_i.tolist(), strict=True))
    }
    out = []
    for g, d, r in zip(k_i.tolist(), d_i.tolist(), ratios.tolist(), strict=True):
        lam = r * lam_max[d, g]
        runs = [sos_nmf_single(Xs * W[d], s, lam=lam)[0] for s in groups[g]]
        out.append(min(runs, key=lambda res: res.objective[-1]))
    return out


def textbook_sos_nmf(
    Xs: Array, w: Array, init: Any, lam: float, max_iter: int = 500, tol: float = 1e-4
) -> tuple[Array, float]:
    """Algorithm 1 as written: dense ``V``, ``(V'V)^-1``, correlations.

    The vectorized form of ``tests/naive_sos_nmf.py`` at an absolute penalty
    (a plain numpy implementation one would write from the paper). Returns
    the final ``V`` and objective.
    """
    n, p = Xs.shape
    XW = Xs * w
    Xc = Xs - Xs.mean(axis=0)
    V = np.eye(int(np.max(init)) + 1)[init]
    J_prev, J = np.inf, np.inf
    for _ in range(max_iter):
        V = V[:, np.any(V != 0, axis=0)]
        if V.shape[1] == 0:
            break
        Ut = XW @ V @ np.linalg.inv(V.T @ V)
        U = (Ut - Ut.mean(axis=0)) / Ut.std(axis=0, ddof=1)
        Uc = U - U.mean(axis=0)
        norms = np.outer((Xc**2).sum(axis=0), (Uc**2).sum(axis=0))
        score = w[:, None] * (Xc.T @ Uc) / np.sqrt(norms)
        k = score.argmax(axis=1)
        new = np.zeros_like(V)
        new[np.arange(p), k] = np.maximum(score[np.arange(p), k] - lam, 0.0)
        J = ((XW - U @ new.T) ** 2).sum() / (2 * (n - 1)) + lam * new.sum()
        same = new.shape == V.shape and np.allclose(new, V, rtol=1e-12, atol=0.0)
        V = new
        if same or (np.isfinite(J_prev) and abs(J_prev - J) < tol * abs(J_prev)):
            break
        J_prev = J
    return V, float(J)


def loop_textbook(
    Xs: Array, W: Array, groups: list[list[Any]], k_i: Any, d_i: Any, ratios: Any
) -> None:
    """The restart driver's work with :func:`textbook_sos_nmf`."""
    lam_max = {}
    for g, d in set(zip(k_i.tolist(), d_i.tolist(), strict=True)):
        first = []
        for s in groups[g]:
            V = np.eye(int(np.max(s)) + 1)[s]
            U = Xs @ (W[d][:, None] * V) / V.sum(axis=0)
            U = (U - U.mean(axis=0)) / U.std(axis=0, ddof=1)
            scores = W[d][:, None] * (Xs.T @ U) / (Xs.shape[0] - 1)
            first.append(max(float(scores.max()), 0.0))
        lam_max[d, g] = max(first)
    for g, d, r in zip(k_i.tolist(), d_i.tolist(), ratios.tolist(), strict=True):
        runs = [textbook_sos_nmf(Xs, W[d], s, r * lam_max[d, g]) for s in groups[g]]
        min(runs, key=lambda res: res[1])


def n_agree(engine: BestStarts, loop: list[Any]) -> int:
    """Points whose kept clusters are the loop's (ARI = 1, same selection)."""
    return sum(
        bool(
            np.array_equal(lab >= 0, ref.labels >= 0)
            and adjusted_rand_score(lab, ref.labels) == 1.0
        )
        for lab, ref in zip(engine.labels, loop, strict=True)
    )


# ----------------------------------------------------------------- table 1
def cv_paper() -> None:
    data = make_paper_data(50, rho=0.6, config=1, random_state=0)
    X, y = data.X, data.y
    cv = VCPCRCV(
        n_clusters=(4, 5, 6),
        n_init=5,
        cv=KFold(5, shuffle=True, random_state=0),
        random_state=0,
    )
    calls: list[tuple[Any, ...]] = []
    solver_time = [0.0]
    original = tuning.solve_grid

    def timed(*args: Any) -> Any:
        t0 = time.perf_counter()
        out = original(*args)
        solver_time[0] += time.perf_counter() - t0
        calls.append(args)
        return out

    tuning.solve_grid = timed  # type: ignore[assignment]
    try:
        fits = []
        for _ in range(3):
            solver_time[0], calls[:] = 0.0, []
            t0 = time.perf_counter()
            cv.fit(X, y)
            fits.append((time.perf_counter() - t0, solver_time[0]))
    finally:
        tuning.solve_grid = original
    t_fit, t_solver = min(fits)
    n_points = len(cv.cv_results_)
    # the loop: the same folds, starts, weights and penalties
    t_loop, t_text, agree, total = 0.0, 0.0, 0, 0
    for Xs, W, spec, seed in calls:
        rng = np.random.default_rng(seed)
        Ks, n_init = spec.grid.n_clusters, spec.n_init
        groups = [
            [random_partition(Xs.shape[1], K, rng) for _ in range(n_init)] for K in Ks
        ]
        shape = (len(Ks), W.shape[0], spec.grid.lam_ratios.size)
        k_i, d_i, r_i = (a.ravel() for a in np.indices(shape))
        ratios = spec.grid.lam_ratios[r_i]
        t0 = time.perf_counter()
        loop = loop_best_starts(Xs, W, groups, k_i, d_i, ratios)
        t_loop += time.perf_counter() - t0
        engine = best_starts(
            Xs, W, groups, k_i, d_i, ratios, max_iter=spec.max_iter, tol=spec.tol
        )
        agree += n_agree(engine, loop)
        total += len(loop)
        t0 = time.perf_counter()
        loop_textbook(Xs, W, groups, k_i, d_i, ratios)
        t_text += time.perf_counter() - t0
    print("\n1. VCPCRCV on the paper's problem (n=50, p=200, config 1, rho=0.6)")
    print(
        f"   {n_points} grid points x 5 starts x 5 folds "
        f"({n_points * 25} SOS-NMF problems)"
    )
    print(f"   {'':<36}{'seconds':>9}{'loop / this':>13}")
    print(f"   {'VCPCRCV.fit (best of 3)':<36}{t_fit:>9.3f}{t_loop / t_fit:>12.1f}x")
    print(
        f"   {'  of which the SOS-NMF solver':<36}{t_solver:>9.3f}"
        f"{t_loop / t_solver:>12.1f}x"
    )
    print(f"   {'  the rest (weights, scoring, refit)':<36}{t_fit - t_solver:>9.3f}")
    print(f"   {'loop of single-problem fits':<36}{t_loop:>9.3f}{1.0:>12.1f}x")
    print(f"   {'loop of textbook Algorithm 1':<36}{t_text:>9.3f}")
    print(
        f"   textbook loop / fit: {t_text / t_fit:.1f}x; textbook loop / solver: "
        f"{t_text / t_solver:.1f}x"
    )
    print(f"   best starts with the loop's clusters: {agree}/{total}")


# ----------------------------------------------------------------- table 2
def grid_row(name: str, Xs: Array, W: Array, Ks: tuple[int, ...], starts: int) -> None:
    rng = np.random.default_rng(1)
    groups = [
        [random_partition(Xs.shape[1], K, rng) for _ in range(starts)] for K in Ks
    ]
    k_i, d_i, r_i = (a.ravel() for a in np.indices((len(Ks), W.shape[0], 10)))
    ratios = RATIOS[r_i]

    def engine() -> BestStarts:
        return best_starts(Xs, W, groups, k_i, d_i, ratios, max_iter=500, tol=1e-4)

    t_engine, res = best_of(engine)
    t_loop, loop = best_of(lambda: loop_best_starts(Xs, W, groups, k_i, d_i, ratios), 1)
    n_prob, iters = res.batch.n_iter.size, int(res.batch.n_iter.sum())
    print(
        f"   {name:<26}{n_prob:>6}{iters:>8}{t_engine:>9.3f}"
        f"{1e6 * t_engine / iters:>9.1f}{t_loop:>9.2f}{t_loop / t_engine:>8.1f}x"
        f"{n_agree(res, loop):>6}/{len(loop)}"
    )


def ridge(X: Array, y: Array, deltas: Any) -> tuple[Array, Array]:
    Xs = standardize(np.asarray(X, dtype=float))[0]
    ys = (y - y.mean()) / y.std(ddof=1)
    return Xs, weights_for_grid(Xs, ys, "ridge", list(deltas), "gaussian").coef


def grids() -> None:
    print("\n2. The engine (best_starts) against the loop, 10 lam_ratios per point")
    print(
        f"   {'case':<26}{'probs':>6}{'iters':>8}{'engine s':>9}{'us/iter':>9}"
        f"{'loop s':>9}{'speedup':>9}{'same':>10}"
    )
    from vcpcr.datasets import load_liver

    Xl, yl = load_liver(return_X_y=True)
    Xs, W = ridge(Xl, np.asarray(yl, dtype=float), [0.01])
    grid_row("Liver 131x2785 K=20 x 5", Xs, W, (20,), 5)
    for p in (200, 1000, 5000):
        data = make_paper_data(50, random_state=5)
        rng = np.random.default_rng(p)
        X = np.hstack([data.X, rng.normal(size=(50, p - 200))])
        Xs, W = ridge(X, data.y, [0.01])
        grid_row(f"p={p} n=50 K=5 x 5", Xs, W, (5,), 5)


# ----------------------------------------------------------------- table 3
def large_fit() -> None:
    n, p, K = 500, 20_000, 50
    rng = np.random.default_rng(3)
    z = rng.normal(size=(n, 10))
    X = np.hstack(
        [
            np.repeat(z, 5, axis=1) + rng.normal(size=(n, 50)),
            rng.normal(size=(n, p - 50)),
        ]
    )
    y = X[:, :5].sum(axis=1) - X[:, 10:15].sum(axis=1) + rng.normal(size=n)
    Xs, W = ridge(X, y, [0.01])
    groups = [[random_partition(p, K, np.random.default_rng(4))]]

    def fit() -> BestStarts:
        return best_starts(Xs, W, groups, [0], [0], [0.1], max_iter=500, tol=1e-4)

    t_engine, res = best_of(fit)
    tracemalloc.start()
    fit()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    t_loop, loop = best_of(
        lambda: loop_best_starts(
            Xs, W, groups, np.zeros(1, int), np.zeros(1, int), np.array([0.1])
        ),
        1,
    )
    print(f"\n3. One fit, n={n}, p={p}, K={K}, lam_ratio=0.1 (ridge delta=0.01)")
    print(
        f"   engine {t_engine:.3f} s ({res.batch.n_iter[0]} iterations, "
        f"{res.batch.reason[0]}); loop {t_loop:.3f} s; same clusters: "
        f"{n_agree(res, loop) == 1}; peak memory of the call {peak / 2**20:.0f} MiB "
        f"(X is {X.nbytes / 2**20:.0f} MiB)"
    )


def main() -> None:
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    print(
        f"numpy {np.__version__}, python {sys.version.split()[0]}, "
        f"OPENBLAS_NUM_THREADS={threads}"
    )
    cv_paper()
    grids()
    large_fit()


if __name__ == "__main__":
    main()
