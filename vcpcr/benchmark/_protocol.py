"""The paper's nested cross-validation: folds, fold scaling, tuning, one dataset.

The protocol (VC-PCR paper, sections "Hyperparameter Selection" and
"Experiments") for one data set and one method:

1. split the samples into ``n_outer`` random folds;
2. for each outer fold, split its training samples into ``n_inner`` folds and
   fit the method's whole grid on every inner training fold; the inner test
   folds give each grid point a mean MSEP;
3. for every value of the *traced* hyperparameter (and every random start)
   separately, the *tuned* hyperparameters with the lowest mean inner MSEP
   are chosen;
4. the chosen models are refitted on the outer training fold and evaluated on
   the outer test fold.

Every training fold is centred and scaled (``ddof=1``, ``y`` too) and its test
fold is transformed with the training fold's means and standard deviations,
so the MSEP is on the standardized scale (the null model scores about
``1 + 1/n_train``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from vcpcr._checks import check_same_rows, check_varying
from vcpcr._result import TupleResult
from vcpcr._scaling import standardize
from vcpcr.benchmark._grid_fits import solve
from vcpcr.benchmark._methods import Method, Starts
from vcpcr.metrics import mcc_clustering, mcc_support

__all__ = [
    "FoldData",
    "OuterFold",
    "fold_msep",
    "nested_cv",
    "nested_folds",
    "select_tuned",
    "standardize_fold",
]

_Ints = NDArray[np.intp]


@dataclass(frozen=True, eq=False, repr=False)
class FoldData(TupleResult):
    """A training fold and its test fold, scaled with the training statistics.

    Attributes
    ----------
    Xtr, ytr : ndarray
        Training data: columns of mean 0 and sample sd 1; ``ytr`` likewise.
    Xte, yte : ndarray
        Test data transformed with the training means and sds.
    """

    Xtr: NDArray[np.float64]
    ytr: NDArray[np.float64]
    Xte: NDArray[np.float64]
    yte: NDArray[np.float64]


@dataclass(frozen=True, eq=False, repr=False)
class OuterFold(TupleResult):
    """One outer fold: its sample indices and its inner (train, test) splits.

    Attributes
    ----------
    train, test : ndarray of int
        Indices of the outer training and test samples.
    inner : tuple of (ndarray, ndarray)
        The inner ``(train, test)`` splits of ``train`` (indices into the
        full data).
    """

    train: _Ints
    test: _Ints
    inner: tuple[tuple[_Ints, _Ints], ...]


def _split(index: _Ints, n_folds: int, rng: np.random.Generator) -> list[_Ints]:
    """Random partition of ``index`` into ``n_folds`` sorted parts of equal size."""
    parts = np.array_split(rng.permutation(index), n_folds)
    return [np.sort(part) for part in parts]


def nested_folds(
    n_samples: int, n_outer: int = 10, n_inner: int = 5, *, random_state: Any = None
) -> list[OuterFold]:
    """Draw the outer folds and, inside each outer training set, the inner folds.

    Parameters
    ----------
    n_samples : int
        Number of samples.
    n_outer : int, default=10
        Number of outer folds (the paper's 10).
    n_inner : int, default=5
        Number of inner folds per outer training set (the paper's 5).
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the random splits.

    Returns
    -------
    list of OuterFold
        ``train`` and ``test`` indices of each outer fold (sizes differ by at
        most one) and the inner ``(train, test)`` splits of its training
        samples (indices into the full data).

    Raises
    ------
    ValueError
        If a fold would be empty or an inner training fold would have fewer
        than 3 samples.

    Examples
    --------
    >>> from vcpcr.benchmark import nested_folds
    >>> folds = nested_folds(50, 10, 5, random_state=0)
    >>> len(folds), folds[0].test.size, folds[0].train.size, len(folds[0].inner)
    (10, 5, 45, 5)
    >>> train, test = folds[0].inner[0]
    >>> train.size, test.size
    (36, 9)
    """
    from vcpcr._checks import check_random_state

    if n_outer < 2 or n_inner < 2:
        raise ValueError(
            f"n_outer and n_inner must be >= 2; got n_outer={n_outer}, "
            f"n_inner={n_inner}."
        )
    smallest_inner_train = (n_samples - -(-n_samples // n_outer)) * (n_inner - 1)
    if n_samples < n_outer or smallest_inner_train // n_inner < 3:
        raise ValueError(
            f"n_samples={n_samples} is too small for {n_outer} outer x {n_inner} "
            f"inner folds (an inner training fold needs at least 3 samples); use "
            f"fewer folds."
        )
    rng = check_random_state(random_state)
    everything = np.arange(n_samples)
    folds = []
    for test in _split(everything, n_outer, rng):
        train = np.setdiff1d(everything, test)
        inner = tuple(
            (np.setdiff1d(train, itest), itest) for itest in _split(train, n_inner, rng)
        )
        folds.append(OuterFold(train, test, inner))
    return folds


def standardize_fold(
    X: ArrayLike, y: ArrayLike, train: ArrayLike, test: ArrayLike
) -> FoldData:
    """Scale a training fold and transform its test fold the same way.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        All samples.
    y : array-like of shape (n_samples,)
        The response.
    train, test : array-like of int
        Row indices of the training and test folds.

    Returns
    -------
    FoldData
        ``Xtr`` with column means 0 and sample sds 1 (``ddof=1``; a column
        that is constant in the training fold is only centred, as the
        authors' R code does), ``ytr`` likewise, and ``Xte``, ``yte``
        transformed with the training means and sds.

    Raises
    ------
    ValueError
        If ``y`` is constant on the training fold.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr.benchmark import standardize_fold
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 0.0]])
    >>> fold = standardize_fold(X, [1.0, 2.0, 3.0, 9.0], [0, 1, 2], [3])
    >>> fold.Xtr[:, 0].tolist(), fold.Xte.tolist(), fold.yte.tolist()
    ([-1.0, 0.0, 1.0], [[2.0, -2.0]], [7.0])
    """
    check_same_rows(X, y)
    Xa, ya = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    tr, te = np.asarray(train), np.asarray(test)
    fold = f" on a training fold of {tr.size} samples"
    check_varying(ya[tr], "y", where=fold, fix="Use fewer folds.")
    Xtr, mean, sd = standardize(Xa[tr], center_constant=True)
    ytr, y_mean, y_sd = standardize(ya[tr])
    return FoldData(
        Xtr,
        ytr,
        (Xa[te] / sd) - (mean / sd),
        (ya[te] / y_sd) - (y_mean / y_sd),
    )


def fold_msep(coef: NDArray[np.float64], fold: FoldData) -> NDArray[np.float64]:
    """MSEP on the test fold of every coefficient vector (last axis: features).

    Parameters
    ----------
    coef : ndarray of shape (..., n_features)
        Coefficients on the standardized scale (NaN rows give NaN).
    fold : FoldData
        The fold; predictions are ``fold.Xte @ coef``.

    Returns
    -------
    ndarray of shape coef.shape[:-1]
        Mean squared prediction errors.
    """
    flat = coef.reshape(-1, coef.shape[-1])
    resid = fold.yte[:, None] - fold.Xte @ flat.T
    return np.mean(resid**2, axis=0).reshape(coef.shape[:-1])


def select_tuned(inner_msep: ArrayLike) -> _Ints:
    """Choose the tuned point with the lowest mean inner MSEP per traced value.

    Parameters
    ----------
    inner_msep : array-like of shape (n_inner, n_starts, n_tuned, n_traced)
        MSEP of every grid point on every inner test fold (NaN: not fitted).

    Returns
    -------
    ndarray of int of shape (n_starts, n_traced)
        Index of the chosen tuned point for each start and traced value. Ties
        go to the first tuned point; a column without any finite MSEP gets 0.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr.benchmark import select_tuned
    >>> msep = np.array([[[[0.5, 0.9], [0.4, 1.0]]], [[[0.7, 0.1], [0.6, 1.2]]]])
    >>> msep.shape  # 2 inner folds, 1 start, 2 tuned points, 2 traced values
    (2, 1, 2, 2)
    >>> select_tuned(msep).tolist()  # means: tuned 0 -> (0.6, 0.5), 1 -> (0.5, 1.1)
    [[1, 0]]
    """
    scores = np.asarray(inner_msep, dtype=np.float64)
    finite = np.isfinite(scores)
    count = finite.sum(axis=0)
    total = np.where(finite, scores, 0.0).sum(axis=0)
    mean = np.where(count > 0, total / np.maximum(count, 1), np.inf)
    return np.argmin(mean, axis=1).astype(np.intp)


def _outer_rows(
    method: Method,
    fit_coef: NDArray[np.float64],
    fit_labels: NDArray[np.intp],
    best: _Ints,
    fold: FoldData,
    truth: tuple[NDArray[np.float64], NDArray[np.intp]] | None,
) -> list[dict[str, Any]]:
    """One row per start and traced value: the chosen model's test metrics."""
    rows = []
    n_starts, n_traced = best.shape
    for s in range(n_starts):
        for r in range(n_traced):
            t = int(best[s, r])
            coef, labels = fit_coef[s, t, r], fit_labels[s, t, r]
            row: dict[str, Any] = {
                "start": s,
                "traced": method.traced_name,
                "traced_value": method.traced[r],
                **dict(zip(method.tuned_names, method.tuned[t], strict=True)),
                "s": int(np.count_nonzero(coef)),
                "msep": float(np.mean((fold.yte - fold.Xte @ coef) ** 2)),
                "n_clusters": int(np.unique(labels[labels >= 0]).size),
            }
            if truth is not None:
                row["mcc_clustering"] = mcc_clustering(truth[1], labels)
                row["mcc_support"] = mcc_support(truth[0], coef)
            rows.append(row)
    return rows


def nested_cv(
    X: ArrayLike,
    y: ArrayLike,
    method: Method,
    folds: list[OuterFold],
    starts: Starts,
    *,
    coef_true: ArrayLike | None = None,
    labels_true: ArrayLike | None = None,
) -> pd.DataFrame:
    """Run the paper's nested cross-validation of one method on one data set.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Predictors (raw scale; every fold is standardized on its own).
    y : array-like of shape (n_samples,)
        Response.
    method : Method
        The method and its grids (see :func:`get_methods`).
    folds : list of OuterFold
        From :func:`nested_folds`.
    starts : dict of int to list of ndarray
        Random initial partitions per number of clusters, shared by all folds
        (from :func:`draw_starts`); each start is its own nested CV.
    coef_true, labels_true : array-like of shape (n_features,), optional
        The truth (simulated data): adds MCC-support and MCC-clustering.

    Returns
    -------
    pandas.DataFrame
        One row per outer fold, start and traced value: ``outer_fold``,
        ``start``, ``traced``, ``traced_value``, the chosen tuned values
        (one column each), ``s``, ``msep``, ``n_clusters``, optionally
        ``mcc_clustering`` and ``mcc_support``, and the timings ``cv_time``
        (seconds for the outer fold: inner grid fits and refits),
        ``n_fits`` (models fitted for it) and ``fit_time`` (their ratio).

    See Also
    --------
    run_study : The whole simulation study.
    select_tuned : The per-traced-value choice.

    Notes
    -----
    The tuned hyperparameters are chosen for every traced value and every
    start separately (the authors' ``GetBestHPForFixedHP`` grouped by
    ``wh.init``), by the lowest MSEP averaged over the inner test folds.
    """
    check_same_rows(X, y)
    Xa, ya = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    truth = None
    if coef_true is not None and labels_true is not None:
        truth = (np.asarray(coef_true, np.float64), np.asarray(labels_true))
    shape = (method.n_starts, len(method.tuned), len(method.traced))
    rows = []
    for o, outer in enumerate(folds):
        tic = time.perf_counter()
        inner = np.full((len(outer.inner), *shape), np.nan)
        n_fits = 0
        for i, (train, test) in enumerate(outer.inner):
            fold = standardize_fold(Xa, ya, train, test)
            fit = solve(method, fold.Xtr, fold.ytr, starts, np.ones(shape, bool))
            inner[i] = fold_msep(fit.coef, fold)
            n_fits += fit.n_fits
        best = select_tuned(inner)
        mask = np.zeros(shape, dtype=bool)
        s_idx, r_idx = np.indices(best.shape)
        mask[s_idx, best, r_idx] = True
        fold = standardize_fold(Xa, ya, outer.train, outer.test)
        fit = solve(method, fold.Xtr, fold.ytr, starts, mask)
        n_fits += fit.n_fits
        elapsed = time.perf_counter() - tic
        for row in _outer_rows(method, fit.coef, fit.labels, best, fold, truth):
            row.update(
                outer_fold=o, cv_time=elapsed, n_fits=n_fits, fit_time=elapsed / n_fits
            )
            rows.append(row)
    frame = pd.DataFrame(rows)
    first = ["outer_fold", "start", "traced", "traced_value"]
    return frame[first + [c for c in frame.columns if c not in first]]
