"""Benchmark: the penalized step-0 weights (elastic net, 6 deltas) per family.

Run on one core (the targets are one-core targets)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_weights.py

Each row times one elastic-net path (``l1_ratio = 0.05``, 6 deltas
``delta_max * 10**linspace(log10(0.5), -2, 6)``, the ``VCPCRCV`` grid) through
vcpcr's single entry ``vcpcr._weights.WeightScheme.path``, against:

* ``coxnet``: scikit-survival's ``CoxnetSurvivalAnalysis`` called directly (its
  default ``tol = 1e-7``; vcpcr's Cox engine, so the ratio is its overhead);
* ``sklearn``: scikit-learn's ``enet_path`` on all columns at the same
  relative duality gap (1e-7) as vcpcr (the pre-#9 engine's kernel);
* ``R``: R glmnet (default ``thresh = 1e-7``), timed inside R, if ``Rscript``
  with glmnet is on the PATH (otherwise "-").

Data: ``make_block_data`` draws (10 blocks of 50 correlated variables, 3 of
them active, plus independent noise variables) and, for Cox, the real
breast-cancer cohort shipped with scikit-survival (``load_breast_cancer``: 198
patients, 76 gene-expression features; no wide gene-expression survival cohort
installs from PyPI). Nothing is downloaded. "nnz" is the number of non-zero
weights at the smallest delta; "support" the Jaccard index of vcpcr's support
with each reference's at that delta. Times are the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from vcpcr._scaling import standardize
from vcpcr._weights import SCHEMES, lasso_delta_max
from vcpcr.simulate import make_block_data

L1_RATIO = 0.05
R_SCRIPT = r"""
suppressPackageStartupMessages({library(glmnet); library(survival)})
a <- commandArgs(trailingOnly = TRUE)
n <- as.integer(a[2]); p <- as.integer(a[3])
X <- matrix(readBin(file.path(a[1], "X.bin"), "double", n * p), n, p)
y <- readBin(file.path(a[1], "y.bin"), "double", 2 * n)
deltas <- readBin(file.path(a[1], "d.bin"), "double", 6)
fam <- a[4]
yy <- if (fam == "cox") Surv(y[1:n], y[(n + 1):(2 * n)]) else y[1:n]
best <- Inf
for (r in seq_len(as.integer(a[5]))) {
  tm <- system.time(f <- glmnet(X, yy, family = fam, alpha = 0.05,
                                lambda = deltas, standardize = FALSE))
  best <- min(best, tm[["elapsed"]])
}
B <- as.matrix(f$beta)
cat(best, "\n", file = file.path(a[1], "time.txt"))
writeBin(as.double(B[, ncol(B)] != 0), file.path(a[1], "support.bin"))
"""


def _best(fn: Callable[[], NDArray[np.float64]], repeat: int) -> tuple[float, NDArray]:
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    assert out is not None
    return best, out


def _r_glmnet(X, y, deltas, family, repeat) -> tuple[float, NDArray] | None:
    """R glmnet's time and support at the smallest delta (None without R)."""
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        np.asfortranarray(X).T.ravel().tofile(d / "X.bin")  # column-major
        (y.T.ravel() if y.ndim == 2 else y).astype(np.float64).tofile(d / "y.bin")
        np.sort(deltas)[::-1].tofile(d / "d.bin")
        (d / "bench.R").write_text(R_SCRIPT)
        args = [str(d), str(X.shape[0]), str(X.shape[1]), family, str(repeat)]
        run = subprocess.run(
            ["Rscript", str(d / "bench.R"), *args], capture_output=True, text=True
        )
        if run.returncode != 0:
            print(f"  (R glmnet failed: {run.stderr.strip()[-200:]})")
            return None
        sec = float((d / "time.txt").read_text())
        return sec, np.fromfile(d / "support.bin") != 0


def _jaccard(a: NDArray, b: NDArray) -> float:
    union = (a | b).sum()
    return float((a & b).sum() / union) if union else 1.0


def _coxnet(Xs, y, deltas):
    from sksurv.linear_model import CoxnetSurvivalAnalysis
    from sksurv.util import Surv

    model = CoxnetSurvivalAnalysis(
        alphas=np.sort(deltas)[::-1], l1_ratio=L1_RATIO, normalize=False
    )
    model.fit(Xs, Surv.from_arrays(y[:, 1] == 1, y[:, 0]))
    out = np.empty((deltas.size, Xs.shape[1]))
    out[np.argsort(-deltas)] = model.coef_.T  # rows in the order of `deltas`
    return out


def _sklearn(Xs, y, deltas):
    from sklearn.linear_model import enet_path

    yc = y - y.mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, coefs, _ = enet_path(
            np.asfortranarray(Xs),
            yc,
            l1_ratio=L1_RATIO,
            alphas=np.sort(deltas)[::-1],
            tol=0.5e-7,
            precompute=False,
        )
    out = np.empty((deltas.size, Xs.shape[1]))
    out[np.argsort(-deltas)] = coefs.T  # rows in the order of `deltas`
    return out


def _data(family: str, n: int, p: int, seed: int):
    kw = {"prevalence": 0.4} if family == "binomial" else {}
    sim = make_block_data(
        n,
        [50] * 10,
        [0.3, -0.3, 0.2] + [0.0] * 7,
        n_noise=p - 500,
        family=family,
        random_state=seed,
        **kw,
    )
    Xs = standardize(sim.X)[0]
    if family == "cox":
        return Xs, np.column_stack([sim.y, sim.event.astype(float)])
    y = sim.y.astype(float)
    return Xs, (y - y.mean()) / y.std(ddof=1) if family == "gaussian" else y


def _breast_cancer():
    from sksurv.datasets import load_breast_cancer

    X, y = load_breast_cancer()
    genes = X.select_dtypes("number").drop(columns=["age", "size"], errors="ignore")
    Xs = standardize(genes.to_numpy(dtype=np.float64))[0]
    return Xs, np.column_stack([y["t.tdm"], y["e.tdm"].astype(float)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-sklearn", action="store_true", help="skip enet_path")
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import sklearn.linear_model  # noqa: F401  (import costs kept out of timings)
    import sksurv.linear_model  # noqa: F401

    cases = [
        ("cox", "simulated 300 x 5,000", lambda: _data("cox", 300, 5000, args.seed)),
        ("cox", "breast cancer 198 x 76", _breast_cancer),
        (
            "gaussian",
            "simulated 500 x 20,000",
            lambda: _data("gaussian", 500, 20000, 0),
        ),
        ("binomial", "simulated 300 x 5,000", lambda: _data("binomial", 300, 5000, 0)),
        (
            "binomial",
            "simulated 1,000 x 20,000",
            lambda: _data("binomial", 1000, 20000, 0),
        ),
    ]
    print(
        f"elastic net (l1_ratio={L1_RATIO}), 6 deltas; one core; best of {args.repeat}"
    )
    head = f"{'family':>8} {'data':>25} {'vcpcr s':>8} {'nnz':>5}"
    print(head + f" {'reference':>9} {'ref s':>8} {'ratio':>6} {'support':>8}")
    with threadpool_limits(1):
        for family, name, make in cases:
            Xs, y = make()
            dmax = lasso_delta_max(Xs, y, family, L1_RATIO)
            deltas = dmax * 10 ** np.linspace(np.log10(0.5), -2, 6)
            sec, W = _best(
                lambda Xs=Xs, y=y, d=deltas, f=family: (
                    SCHEMES["enet"]
                    .with_l1_ratio(L1_RATIO)
                    .path(Xs, y, d, family=f)
                    .coef
                ),
                args.repeat,
            )
            i = int(np.argmin(deltas))
            ours = W[i] != 0
            refs: list[tuple[str, float, NDArray]] = []
            if family == "cox":
                t, C = _best(
                    lambda Xs=Xs, y=y, d=deltas: _coxnet(Xs, y, d), args.repeat
                )
                refs.append(("coxnet", t, C[i] != 0))
            if family == "gaussian" and not args.no_sklearn:
                t, S = _best(lambda Xs=Xs, y=y, d=deltas: _sklearn(Xs, y, d), 1)
                refs.append(("sklearn", t, S[i] != 0))
            r = _r_glmnet(Xs, y, deltas, family, args.repeat)
            refs.append(("R glmnet", *r) if r else ("R glmnet", np.nan, ours))
            for k, (ref, t, sup) in enumerate(refs):
                left = (
                    f"{family:>8} {name:>25} {sec:>8.2f} {ours.sum():>5}"
                    if k == 0
                    else " " * 48
                )
                jac = f"{_jaccard(ours, sup):>8.3f}" if np.isfinite(t) else f"{'-':>8}"
                tt = (
                    f"{t:>8.2f} {sec / t:>6.2f}"
                    if np.isfinite(t)
                    else f"{'-':>8} {'-':>6}"
                )
                print(f"{left} {ref:>9} {tt} {jac}")


if __name__ == "__main__":
    main()
