"""Benchmark: how converged the default elastic-net weights paths are (#47, item 2).

Run (one BLAS thread; the machine is shared, so medians of repeated runs)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kkt.py
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kkt.py --quick   # smoke run

Prints three tables:

1. the Cox weights path of ``VCPCRCV``'s default grid (``weights="enet"``,
   ``l1_ratio=0.05``, ``delta_max * 10**linspace(-2, log10(0.5), 6)``) on the
   simulated 300 x 20,000 data of ``bench_speed.py`` (8 blocks of 10, 4
   active, Weibull times, 30 % censored; ``random_state=0``): per delta, the
   relative KKT violation (computed here, from this script's own Breslow
   gradient, not the library's), the non-zeros, and the objective above a
   tightly converged reference (``cox_lasso_path(tol=1e-10)``; its own KKT
   is printed; ``--reference`` keeps it in a file so that two versions of
   vcpcr are measured against the same one), and the path's time
   (median of ``--runs``);
2. the same for the gaussian and binomial default paths on 300 x 5,000 data
   (no reference objective: their KKT alone);
3. ``VCPCRCV(family="cox", n_jobs=2)`` on the 300 x 20,000 data against the
   5-fold Coxnet CV of ``bench_speed.py`` (30 alphas, folds in parallel),
   timed in the same run, ``--runs`` times alternately; the ratio's median.

The relative KKT violation of weights ``w`` at ``delta`` (l1 part ``a delta``,
l2 part ``(1 - a) delta``) is ``max_j v_j / delta`` with ``v_j = |g_j + a
delta sign(w_j)|`` where ``w_j != 0`` and ``max(|g_j| - a delta, 0)``
elsewhere, ``g`` the gradient of the loss plus the l2 part.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_speed import coxnet_cv, make_case

from vcpcr import VCPCRCV, Surv, compute_weights
from vcpcr._families import family_instance
from vcpcr._scaling import standardize
from vcpcr._weights import SCHEMES, lasso_delta_max
from vcpcr.simulate import make_block_data

L1_RATIO = 0.05
GRID = np.asarray(SCHEMES["enet"].grid)


def breslow(eta: Any, time_: Any, event: Any) -> tuple[float, Any]:
    """Mean negative Breslow log partial likelihood and its gradient in ``eta``."""
    order = np.argsort(time_, kind="stable")
    ts, d, e = time_[order], event[order].astype(float), eta[order]
    shift = e.max()
    r = np.exp(e - shift)
    at_risk = np.cumsum(r[::-1])[::-1][np.searchsorted(ts, ts, side="left")]
    n = eta.size
    loss = -float(np.sum(d * (e - shift - np.log(at_risk)))) / n
    hazard = np.cumsum(d / at_risk)[np.searchsorted(ts, ts, side="right") - 1]
    grad = np.empty(n)
    grad[order] = -(d - r * hazard) / n
    return loss, grad


def kkt(X: Any, grad_eta: Any, w: Any, delta: float) -> float:
    """The relative KKT violation (module docstring) from the loss' gradient."""
    l1, l2 = L1_RATIO * delta, (1 - L1_RATIO) * delta
    g = X.T @ grad_eta + l2 * w
    v = np.where(w != 0, np.abs(g + l1 * np.sign(w)), np.maximum(np.abs(g) - l1, 0))
    return float(v.max()) / delta


def penalty(w: Any, delta: float) -> float:
    """``delta (a ||w||_1 + (1 - a)/2 ||w||^2)``."""
    return delta * (L1_RATIO * np.abs(w).sum() + 0.5 * (1 - L1_RATIO) * w @ w)


def median_time(fn: Any, runs: int) -> tuple[Any, float]:
    """The last result of ``fn`` and the median wall time of ``runs`` calls."""
    times = []
    for _ in range(runs):
        tic = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
        times.append(time.perf_counter() - tic)
    return out, float(np.median(times))


def cox_table(p: int, runs: int, reference: str | None) -> None:
    """Table 1 (the reference weights loaded from, or saved to, ``reference``)."""
    from vcpcr._solvers.cox import cox_lasso_path

    X, (time_, event) = make_case(300, p, "cox")
    Xs = standardize(X)[0]
    y = np.column_stack([time_, event])
    deltas = GRID * lasso_delta_max(Xs, y, "cox", L1_RATIO)
    W, secs = median_time(
        lambda: compute_weights(
            Xs,
            Surv(time_, event),
            "enet",
            delta=deltas,
            family="cox",
            standardize=False,
        ),
        runs,
    )
    cache = Path(reference) if reference else None
    if cache is not None and cache.exists():
        ref, ref_secs = np.load(cache), float("nan")
    else:
        ref, ref_secs = median_time(
            lambda: np.asarray(
                getattr(
                    r := cox_lasso_path(
                        Xs, time_, event, deltas, l1_ratio=L1_RATIO, tol=1e-10
                    ),
                    "coef",
                    r,
                )
            ),
            1,
        )
        if cache is not None:
            np.save(cache, ref)
    print(
        f"cox 300 x {p:,}, enet l1_ratio={L1_RATIO}: default path "
        f"{secs:.1f} s (median of {runs}); reference (tol=1e-10) {ref_secs:.1f} s"
    )
    print(
        f"{'delta/dmax':>10} {'KKT':>9} {'nnz':>6} {'ref KKT':>9} {'ref nnz':>7} "
        f"{'obj gap':>10} {'rel gap':>9}"
    )
    for frac, delta, w, wr in zip(GRID, deltas, W, ref, strict=True):
        loss, g = breslow(Xs @ w, time_, event)
        loss_r, g_r = breslow(Xs @ wr, time_, event)
        f, fr = loss + penalty(w, delta), loss_r + penalty(wr, delta)
        print(
            f"{frac:>10.4f} {kkt(Xs, g, w, delta):>9.2e} {np.count_nonzero(w):>6} "
            f"{kkt(Xs, g_r, wr, delta):>9.2e} {np.count_nonzero(wr):>7} "
            f"{f - fr:>10.2e} {(f - fr) / abs(fr):>9.2e}"
        )


def glm_table(p: int, runs: int) -> None:
    """Table 2."""
    for family in ("gaussian", "binomial"):
        data = make_block_data(
            300,
            [10] * 8,
            [1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0],
            n_noise=p - 80,
            family=family,
            random_state=0,
        )
        Xs = standardize(data.X)[0]
        target = family_instance(family, owner="bench").prepare(data.y).weights_target
        deltas = GRID * lasso_delta_max(Xs, target, family, L1_RATIO)
        W, secs = median_time(
            lambda Xs=Xs, target=target, deltas=deltas, family=family: compute_weights(
                Xs, target, "enet", delta=deltas, family=family, standardize=False
            ),
            runs,
        )
        print(f"{family} 300 x {p:,}: path {secs:.2f} s (median of {runs})")
        for frac, delta, w in zip(GRID, deltas, W, strict=True):
            eta = Xs @ w
            if family == "gaussian":
                g = (eta - (target - target.mean())) / target.size
            else:
                b0 = 0.0
                for _ in range(50):  # the intercept's optimality, by Newton
                    mu = 1 / (1 + np.exp(-(b0 + eta)))
                    b0 -= (mu - target).sum() / (mu * (1 - mu)).sum()
                g = (1 / (1 + np.exp(-(b0 + eta))) - target) / target.size
            print(
                f"  delta/dmax {frac:.4f}: KKT {kkt(Xs, g, w, delta):.2e}, "
                f"nnz {np.count_nonzero(w)}"
            )


def cost_table(p: int, runs: int) -> None:
    """Table 3."""
    X, (time_, event) = make_case(300, p, "cox")
    ratios, ours, peers = [], [], []
    for _ in range(runs):
        _, a = median_time(
            lambda: VCPCRCV(family="cox", n_jobs=2, random_state=0).fit(
                X, Surv(time_, event)
            ),
            1,
        )
        _, b = median_time(lambda: coxnet_cv(X, time_, event), 1)
        ours.append(a)
        peers.append(b)
        ratios.append(a / b)
        print(
            f"  run: VCPCRCV {a:.1f} s, Coxnet 5-fold CV {b:.1f} s, ratio {a / b:.2f}",
            flush=True,
        )
    print(
        f"cox 300 x {p:,}: VCPCRCV median {np.median(ours):.1f} s, Coxnet CV "
        f"median {np.median(peers):.1f} s, ratio median {np.median(ratios):.2f} "
        f"({runs} runs)"
    )


def main() -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="p divided by 20")
    parser.add_argument("--runs", type=int, default=3, help="repeats (default 3)")
    parser.add_argument(
        "--parts",
        default="cox,glm,cost",
        help="comma-separated tables to print (cox, glm, cost)",
    )
    parser.add_argument(
        "--reference",
        default=None,
        help="a .npy file: the reference Cox weights, loaded if "
        "it exists, else computed and saved (so that two "
        "versions are compared with one reference)",
    )
    args = parser.parse_args()
    scale = 20 if args.quick else 1
    parts = args.parts.split(",")
    import vcpcr

    print(f"vcpcr from {Path(vcpcr.__file__).parent}")
    print(
        f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores), "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
    )
    if "cox" in parts:
        cox_table(20_000 // scale, args.runs, args.reference)
    if "glm" in parts:
        glm_table(5_000 // scale, args.runs)
    if "cost" in parts:
        cost_table(20_000 // scale, args.runs)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
