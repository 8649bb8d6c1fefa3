"""Benchmark: ``VCPCRCV`` defaults against the tuned peers a user would pick (#19).

Run (on 2 cores; both sides use ``n_jobs=2``)::

    python benchmarks/bench_speed.py            # the sizes of issue #19
    python benchmarks/bench_speed.py --quick    # small sizes, a smoke run
    python benchmarks/bench_speed.py --scoring neg_pooled_deviance  # #27
    python benchmarks/bench_speed.py --previous-default --cases cox-20000
    python benchmarks/bench_speed.py --lam-ratio-points 10 --cases cox-20000
    python benchmarks/bench_speed.py --peer-refit --runs 2 --cases cox-20000

``--previous-default`` times ``VCPCRCV``'s defaults before #27's sixth study
(``latent="paper", scoring=None, selection="min"``); ``--lam-ratio-points
10`` the ``lam_ratio`` grid before rule E (``10**linspace(-3, 0, 10)``; the
default has 20 points); ``--cases`` runs only the named rows
(``gaussian-20000``, ``cox-5000``, ``cox-20000``, ``cox-1000``: 6,000 x 1,000,
the biobank-style shape of #50); ``--peer-refit`` adds
the Coxnet CV's fit on all rows (as ``cv.glmnet``; ``VCPCRCV`` refits too);
``--runs`` repeats each row; ``--shape N,P`` (repeatable) adds a Cox row
of ``N`` rows and ``P`` genes, for the table of cost against n and p of
``docs/performance.md``::

    python benchmarks/bench_speed.py --cases none --shape 500,1000 \\
        --shape 2000,1000 --shape 6000,1000 --shape 20000,1000 \\
        --shape 300,1000 --shape 300,5000 --shape 300,20000 --shape 300,50000

Prints one table. Each row is one data set and one pair of fits, timed in
the same run (wall-clock seconds, one run each):

1. gaussian 500 x 20,000 (``make_block_data``: 8 blocks of 10, 4 active,
   independent noise): ``VCPCRCV()`` against scikit-learn's
   ``ElasticNetCV(l1_ratio=0.5, alphas=30, cv=5, n_jobs=2)``;
2. cox 300 x 5,000 and 300 x 20,000 (the same design, Weibull times, 30%
   censored): ``VCPCRCV(family="cox")`` against a 5-fold CV of
   scikit-survival's ``CoxnetSurvivalAnalysis(l1_ratio=0.5)`` over 30
   alphas (one path per fold, Harrell's concordance per alpha, the folds in
   parallel), and the same CV with its alphas stopped at
   ``alpha_min_ratio=0.05`` (``to 0.05``: the sparse end where a CV by C
   chooses on these data, #50);
3. cox 6,000 x 1,000 (the same design): the biobank-style shape of #50.

The ratio is vcpcr's time over the peer's. ``--quick`` divides ``p`` by 20.
The machine's load (``os.getloadavg``) is printed with the table: on a shared
machine the ratios are the meaningful numbers.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.linear_model import ElasticNetCV
from sklearn.model_selection import KFold

from vcpcr import VCPCRCV, Surv
from vcpcr.simulate import make_block_data

N_JOBS = 2


def make_data(n: int, p: int, family: str) -> Any:
    """8 blocks of 10 variables (4 active, +-1) and ``p - 80`` noise variables.

    The simulated data of every speed benchmark (``bench_scale.py`` and
    ``profile_cv.py`` too).
    """
    return make_block_data(
        n,
        [10] * 8,
        [1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0],
        n_noise=p - 80,
        family=family,
        random_state=0,
    )


def make_case(n: int, p: int, family: str) -> tuple[Any, Any]:
    """``X`` and ``y`` of :func:`make_data` (``(time, event)`` for cox)."""
    data = make_data(n, p, family)
    if family == "cox":
        return data.X, (data.y, data.event)
    return data.X, data.y


def timed(fn: Any) -> float:
    """Wall-clock seconds of one call."""
    tic = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn()
    return time.perf_counter() - tic


def _coxnet_path(X: Any, time_: Any, event: Any, min_ratio: float | None) -> Any:
    """The Coxnet path (``l1_ratio=0.5``, 30 alphas) on the given rows.

    ``min_ratio`` is its ``alpha_min_ratio`` (None: scikit-survival's default).
    """
    from sksurv.linear_model import CoxnetSurvivalAnalysis
    from sksurv.util import Surv as SkSurv

    y = SkSurv.from_arrays(event, time_)
    ratio = {} if min_ratio is None else {"alpha_min_ratio": min_ratio}
    return CoxnetSurvivalAnalysis(l1_ratio=0.5, n_alphas=30, **ratio).fit(X, y)


def _coxnet_fold(
    X: Any, time_: Any, event: Any, train: Any, test: Any, min_ratio: float | None
) -> Any:
    """Concordance of each alpha of one fold's Coxnet path on its test rows."""
    from sksurv.metrics import concordance_index_censored

    model = _coxnet_path(X[train], time_[train], event[train], min_ratio)
    return [
        concordance_index_censored(
            event[test], time_[test], model.predict(X[test], alpha=a)
        )[0]
        for a in model.alphas_
    ]


def coxnet_cv(
    X: Any,
    time_: Any,
    event: Any,
    refit: bool = False,
    min_ratio: float | None = None,
) -> Any:
    """5-fold CV of Coxnet over 30 alphas, folds in parallel.

    ``refit=True`` then fits the path on all rows, as ``cv.glmnet`` and
    ``GridSearchCV(refit=True)`` do (and ``VCPCRCV`` does): the model a
    user would keep. ``min_ratio`` is the path's ``alpha_min_ratio``
    (None: scikit-survival's default).
    """
    folds = list(KFold(5, shuffle=True, random_state=0).split(X))
    scores = Parallel(n_jobs=N_JOBS)(
        delayed(_coxnet_fold)(X, time_, event, tr, te, min_ratio) for tr, te in folds
    )
    if refit:
        _coxnet_path(X, time_, event, min_ratio)
    return scores


#: The sparse-ended Coxnet CV of #50: its 30 alphas stop at 0.05 of the
#: largest, where a CV by C chooses on these data.
SPARSE_MIN_RATIO = 0.05


#: ``VCPCRCV``'s defaults before #27's sixth study (``--previous-default``).
PREVIOUS_DEFAULT = {"latent": "paper", "scoring": None, "selection": "min"}


def row(
    name: str,
    X: Any,
    y: Any,
    family: str,
    params: dict[str, Any],
    peer_refit: bool = False,
) -> str:
    """Time vcpcr (with ``params``) and its peer on one data set; the table row.

    ``peer_refit``: the Coxnet CV refits on all rows (:func:`coxnet_cv`).
    """
    kw = {"n_jobs": N_JOBS, "random_state": 0, **params}
    if family == "cox":
        time_, event = y
        ours = timed(lambda: VCPCRCV(family="cox", **kw).fit(X, Surv(time_, event)))
        peer = timed(lambda: coxnet_cv(X, time_, event, refit=peer_refit))
        sparse = timed(
            lambda: coxnet_cv(
                X, time_, event, refit=peer_refit, min_ratio=SPARSE_MIN_RATIO
            )
        )
        peer_name = "Coxnet 5-fold CV, 30 alphas" + (" + refit" if peer_refit else "")
        to_sparse = f"{sparse:>8.1f} {ours / sparse:>6.1f}"
    else:
        ours = timed(lambda: VCPCRCV(**kw).fit(X, y))
        peer = timed(
            lambda: ElasticNetCV(l1_ratio=0.5, alphas=30, cv=5, n_jobs=N_JOBS).fit(X, y)
        )
        peer_name = "ElasticNetCV(l1_ratio=0.5, alphas=30)"
        to_sparse = f"{'-':>8} {'-':>6}"
    return (
        f"{name:<22} {ours:>9.1f} {peer_name:<38} {peer:>8.1f} {ours / peer:>6.1f} "
        f"{to_sparse}"
    )


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="p divided by 20")
    parser.add_argument(
        "--scoring",
        default=None,
        help="VCPCRCV's scoring (e.g. neg_pooled_deviance; default: its default)",
    )
    parser.add_argument(
        "--previous-default",
        action="store_true",
        help="VCPCRCV(latent='paper', scoring=None, selection='min')",
    )
    parser.add_argument(
        "--lam-ratio-points",
        type=int,
        default=None,
        help="lam_ratios=10**linspace(-3, 0, N) (default: VCPCRCV's grid)",
    )
    parser.add_argument(
        "--peer-refit",
        action="store_true",
        help="the Coxnet CV then fits its path on all rows, as cv.glmnet does",
    )
    parser.add_argument(
        "--runs", type=int, default=1, help="repeat each row (default: once)"
    )
    parser.add_argument(
        "--cases",
        default="gaussian-20000,cox-5000,cox-20000,cox-1000",
        help="comma-separated rows to run (default: all four)",
    )
    parser.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="N,P",
        help="a Cox row of N rows and P genes (repeatable)",
    )
    args = parser.parse_args()
    scale = 20 if args.quick else 1
    params = dict(PREVIOUS_DEFAULT) if args.previous_default else {}
    if args.scoring is not None:
        params["scoring"] = args.scoring
    if args.lam_ratio_points is not None:
        params["lam_ratios"] = 10 ** np.linspace(-3, 0, args.lam_ratio_points)
    cases = [
        (family, n, p)
        for family, n, p in [
            ("gaussian", 500, 20_000),
            ("cox", 300, 5_000),
            ("cox", 300, 20_000),
            ("cox", 6_000, 1_000),
        ]
        if f"{family}-{p}" in args.cases.split(",")
    ] + [("cox", *map(int, shape.split(","))) for shape in args.shape]
    print(f"VCPCRCV parameters: {params or 'defaults'}")
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    print(
        f"{'data':<22} {'vcpcr s':>9} {'peer':<38} {'peer s':>8} {'ratio':>6} "
        f"{'to 0.05':>8} {'ratio':>6}"
    )
    for family, n, p in cases:
        p = max(p // scale, 200)
        X, y = make_case(n, p, family)
        for _ in range(args.runs):
            text = row(f"{family} {n} x {p:,}", X, y, family, params, args.peer_refit)
            print(text, flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
