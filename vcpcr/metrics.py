"""The VC-PCR paper's evaluation criteria: prediction error, size, support and clusters.

And the concordance index of a survival model's risk scores with its
bootstrap interval (:func:`concordance_interval`), which every printed C
carries.

All clustering metrics take one label per feature. Following the paper, the
label ``-1`` (unselected features on the estimate side, inactive features on
the truth side) is an ordinary label: all ``-1`` features form one cluster.
Pair counts come from the contingency table, so ``p = 50,000`` features (1.25
billion pairs) cost O(p log p) time and exact integer arithmetic.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vcpcr._checks import (
    check_array,
    check_fraction,
    check_random_state,
    check_same_rows,
    check_scalar,
    check_survival,
)
from vcpcr._result import TupleResult
from vcpcr._solvers.batch_scores import resampled_concordance

__all__ = [
    "ConcordanceInterval",
    "adjusted_rand_index",
    "concordance_interval",
    "mcc_clustering",
    "mcc_support",
    "model_size",
    "msep",
]


# --------------------------------------------------------------------------- checks


def _check_same_length(
    a: NDArray[Any], b: NDArray[Any], names: tuple[str, str]
) -> None:
    """Raise a ValueError unless ``a`` and ``b`` have the same length."""
    if a.shape[0] != b.shape[0]:
        unit = "observation" if names[0] == "y_true" else "feature"
        raise ValueError(
            f"{names[0]} has {a.shape[0]} entries but {names[1]} has {b.shape[0]}; "
            f"pass one entry per {unit}."
        )


def _check_coef(coef: Any, name: str) -> NDArray[np.float64]:
    """Return a coefficient vector from an array or a fitted estimator's ``coef_``."""
    if hasattr(coef, "fit"):  # an estimator: it must be fitted
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(coef, "coef_")
    if hasattr(coef, "coef_"):
        coef = np.asarray(coef.coef_)
        if coef.ndim == 2 and coef.shape[0] == 1:
            coef = coef[0]
    return check_array(coef, name, ensure_2d=False)


def _check_labels(labels: ArrayLike, name: str) -> NDArray[Any]:
    """Return ``labels`` as a 1-d array of integer or string labels, or raise."""
    arr = np.asarray(labels)
    if arr.dtype.kind not in "biufUS":
        raise TypeError(
            f"{name} must contain integer (or string) cluster labels; got dtype "
            f"{arr.dtype}. Use -1 for unselected/inactive features."
        )
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-d array of shape (n_features,); got "
            f"shape {arr.shape}."
        )
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError(
                f"{name} contains {int((~np.isfinite(arr)).sum())} NaN or infinite "
                f"label(s); mark unselected features with -1 instead."
            )
        if np.any(arr != np.round(arr)):
            raise ValueError(
                f"{name} must contain integer cluster labels; got non-integer "
                f"values such as {arr[arr != np.round(arr)][0]!r}."
            )
    return arr


def _check_labels_pair(
    labels_true: ArrayLike, labels_pred: ArrayLike
) -> tuple[NDArray[Any], NDArray[Any]]:
    """Validate two labelings of the same features."""
    a = _check_labels(labels_true, "labels_true")
    b = _check_labels(labels_pred, "labels_pred")
    _check_same_length(a, b, ("labels_true", "labels_pred"))
    return a, b


# --------------------------------------------------------------------------- helpers


def _mcc(tp: int, fp: int, fn: int, tn: int) -> float:
    """Matthews correlation from exact integer counts; 0 if the denominator is 0."""
    tp, fp, fn, tn = int(tp), int(fp), int(fn), int(tn)
    denom = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    if denom == 0:
        return 0.0
    root = math.isqrt(denom)
    # int / int is correctly rounded, so a perfect match gives exactly 1.0
    sqrt_denom: float | int = root if root * root == denom else math.sqrt(denom)
    return min(1.0, max(-1.0, (tp * tn - fp * fn) / sqrt_denom))


def _comb2_sum(counts: NDArray[np.int64]) -> int:
    """Return ``sum_i C(counts_i, 2)`` exactly."""
    c = counts.astype(np.int64)
    return int((c * (c - 1) // 2).sum(dtype=np.int64))


def _pair_counts(
    labels_true: NDArray[Any], labels_pred: NDArray[Any]
) -> tuple[int, int, int, int]:
    """Return the pair confusion counts ``(tp, fp, fn, tn)`` over unordered pairs.

    A pair is positive when both features share a cluster. With the
    contingency table ``n_ij`` and its margins ``a_i`` (true) and ``b_j``
    (estimated): ``tp = sum C(n_ij, 2)``, ``tp + fp = sum C(b_j, 2)``,
    ``tp + fn = sum C(a_i, 2)``, all pairs ``= C(p, 2)``.
    """
    p = labels_true.shape[0]
    _, t = np.unique(labels_true, return_inverse=True)
    _, e = np.unique(labels_pred, return_inverse=True)
    cell = t.astype(np.int64) * (int(e.max()) + 1) + e.astype(np.int64)
    tp = _comb2_sum(np.unique(cell, return_counts=True)[1])
    same_pred = _comb2_sum(np.bincount(e))
    same_true = _comb2_sum(np.bincount(t))
    fp = same_pred - tp
    fn = same_true - tp
    tn = p * (p - 1) // 2 - tp - fp - fn
    return tp, fp, fn, tn


# --------------------------------------------------------------------------- public


def msep(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    r"""Mean squared error of prediction.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed responses.
    y_pred : array-like of shape (n_samples,)
        Predicted responses.

    Returns
    -------
    float
        :math:`\frac{1}{n} \sum_i (y_i - \hat y_i)^2`.

    Raises
    ------
    ValueError
        If the lengths differ or an input contains NaN or infinity.
    TypeError
        If an input is not numeric.

    See Also
    --------
    sklearn.metrics.mean_squared_error : The same quantity.

    Examples
    --------
    >>> from vcpcr.metrics import msep
    >>> msep([1.0, 2.0, 3.0], [1.0, 2.0, 5.0])
    1.3333333333333333
    """
    check_same_rows(y_pred, y_true, ("y_pred", "y_true"))
    yt = check_array(y_true, "y_true", ensure_2d=False)
    yp = check_array(y_pred, "y_pred", ensure_2d=False)
    _check_same_length(yt, yp, ("y_true", "y_pred"))
    return float(np.mean((yt - yp) ** 2))


def model_size(coef: ArrayLike | Any, *, tol: float = 0.0) -> int:
    r"""Count the features with a non-zero coefficient, :math:`s = \|\hat b\|_0`.

    Parameters
    ----------
    coef : array-like of shape (n_features,) or fitted estimator
        Feature-level coefficients, or an estimator with a ``coef_``
        attribute (a ``(1, n_features)`` ``coef_`` is flattened).
    tol : float, default=0.0
        Coefficients with ``|b_j| <= tol`` count as zero.

    Returns
    -------
    int
        The model size :math:`s`.

    Raises
    ------
    ValueError
        If ``coef`` is not 1-d or contains NaN or infinity, or ``tol < 0``.
    sklearn.exceptions.NotFittedError
        If ``coef`` is an estimator that is not fitted.

    See Also
    --------
    mcc_support : Support recovery of the same coefficients.

    Notes
    -----
    For methods with one coefficient per cluster, pass the feature-level
    coefficients :math:`b = V a` (every feature of a selected cluster counts).

    Examples
    --------
    >>> from vcpcr.metrics import model_size
    >>> model_size([0.0, 1.5, 0.0, -0.2])
    2
    >>> model_size([0.0, 1.5, 0.0, -0.2], tol=0.5)
    1
    """
    b = _check_coef(coef, "coef")
    _check_tol(tol)
    return int(np.count_nonzero(np.abs(b) > tol))


def _check_tol(tol: Any) -> None:
    """Raise unless ``tol`` is a non-negative finite number."""
    if isinstance(tol, bool) or not isinstance(tol, int | float | np.number):
        raise TypeError(f"tol must be a number. Got {tol!r} instead.")
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite number >= 0. Got {tol!r} instead.")


def mcc_support(
    coef_true: ArrayLike | Any, coef_pred: ArrayLike | Any, *, tol: float = 0.0
) -> float:
    r"""Matthews correlation of support recovery over the p features.

    A feature is *positive* when its coefficient is non-zero:
    ``b_hat_j != 0`` is the prediction, ``b_j != 0`` the truth.

    Parameters
    ----------
    coef_true : array-like of shape (n_features,)
        True coefficients :math:`b` (or an object with ``coef_``).
    coef_pred : array-like of shape (n_features,) or fitted estimator
        Estimated coefficients :math:`\hat b` (or an estimator with ``coef_``).
    tol : float, default=0.0
        Estimated coefficients with ``|b_hat_j| <= tol`` count as zero.

    Returns
    -------
    float
        MCC in ``[-1, 1]``; 0 when the denominator is 0 (e.g. nothing or
        everything selected).

    Raises
    ------
    ValueError
        If the lengths differ or an input contains NaN or infinity.
    sklearn.exceptions.NotFittedError
        If an estimator given for the coefficients is not fitted.

    See Also
    --------
    mcc_clustering : The same criterion for pairs of features.

    Notes
    -----
    .. math::

        \mathrm{MCC} = \frac{TP \cdot TN - FP \cdot FN}
        {\sqrt{(TP + FP)(TP + FN)(TN + FP)(TN + FN)}}

    Examples
    --------
    >>> from vcpcr.metrics import mcc_support
    >>> mcc_support([1, 1, 0, 0], [2.0, 0.0, 0.0, 0.0])  # TP=1 FN=1 TN=2 FP=0
    0.5773502691896258
    """
    b = _check_coef(coef_true, "coef_true")
    bh = _check_coef(coef_pred, "coef_pred")
    _check_same_length(b, bh, ("coef_true", "coef_pred"))
    _check_tol(tol)
    truth = b != 0
    pred = np.abs(bh) > tol
    tp = int(np.count_nonzero(truth & pred))
    fp = int(np.count_nonzero(~truth & pred))
    fn = int(np.count_nonzero(truth & ~pred))
    tn = truth.size - tp - fp - fn
    return _mcc(tp, fp, fn, tn)


def mcc_clustering(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    r"""Matthews correlation of cluster recovery over all pairs of features.

    A pair of features is *positive* when both are in the same cluster. The
    label ``-1`` is an ordinary label: all unselected features (estimate)
    form one cluster, as all inactive features (truth) do.

    Parameters
    ----------
    labels_true : array-like of shape (n_features,)
        True cluster of each feature (``-1`` = inactive).
    labels_pred : array-like of shape (n_features,)
        Estimated cluster of each feature (``-1`` = unselected), e.g.
        ``VCPCR().fit(X, y).labels_``.

    Returns
    -------
    float
        MCC over the :math:`p(p-1)/2` pairs, in ``[-1, 1]``; 0 when the
        denominator is 0 (e.g. one labeling puts everything in one cluster or
        every feature in its own cluster).

    Raises
    ------
    ValueError
        If the lengths differ, an input is empty or not 1-d, or a float label
        is NaN, infinite or non-integer.
    TypeError
        If the labels are neither integers nor strings.

    See Also
    --------
    adjusted_rand_index : A chance-corrected pair-counting index.
    mcc_support : The same criterion for single features.

    Notes
    -----
    With the contingency table :math:`n_{ij}` of true cluster :math:`i` and
    estimated cluster :math:`j`, and its margins :math:`a_i`, :math:`b_j`:
    :math:`TP = \sum_{ij} \binom{n_{ij}}{2}`,
    :math:`TP + FP = \sum_j \binom{b_j}{2}`,
    :math:`TP + FN = \sum_i \binom{a_i}{2}` and
    :math:`TP + FP + FN + TN = \binom{p}{2}`; then MCC as in
    :func:`mcc_support`. No pair is enumerated and the counts are exact
    integers, so large ``p`` neither overflows nor runs out of memory.

    Examples
    --------
    >>> from vcpcr.metrics import mcc_clustering
    >>> truth = [0, 0, 1, 1, -1, -1]
    >>> mcc_clustering(truth, [5, 5, 7, 7, -1, -1])  # same partition
    1.0
    >>> mcc_clustering(truth, [0, 0, 0, 1, -1, -1])  # TP=2 FP=2 FN=1 TN=10
    0.45226701686664544
    """
    a, b = _check_labels_pair(labels_true, labels_pred)
    return _mcc(*_pair_counts(a, b))


def adjusted_rand_index(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Compute the adjusted Rand index of two clusterings of the features.

    ``-1`` is an ordinary label, as in :func:`mcc_clustering`. This validates
    the input and calls :func:`sklearn.metrics.adjusted_rand_score`.

    Parameters
    ----------
    labels_true : array-like of shape (n_features,)
        True cluster of each feature (``-1`` = inactive).
    labels_pred : array-like of shape (n_features,)
        Estimated cluster of each feature (``-1`` = unselected).

    Returns
    -------
    float
        The ARI: 1 for identical partitions (up to relabelling), about 0 for
        independent ones.

    Raises
    ------
    ValueError
        If the lengths differ, an input is empty or not 1-d, or a float label
        is NaN, infinite or non-integer.
    TypeError
        If the labels are neither integers nor strings.

    See Also
    --------
    mcc_clustering : The paper's pair-counting criterion.
    sklearn.metrics.adjusted_rand_score : The implementation used.

    Examples
    --------
    >>> from vcpcr.metrics import adjusted_rand_index
    >>> adjusted_rand_index([0, 0, 1, 1, -1, -1], [1, 1, 0, 0, -1, -1])
    1.0
    """
    from sklearn.metrics import adjusted_rand_score

    a, b = _check_labels_pair(labels_true, labels_pred)
    return float(adjusted_rand_score(a, b))


# ---------------------------------------------------------------- concordance


@dataclass(frozen=True, eq=False, repr=False)
class ConcordanceInterval(TupleResult):
    """Harrell's concordance index with its bootstrap interval.

    Attributes
    ----------
    estimate : float
        Harrell's C of the risk scores on all rows.
    low, high : float
        The percentile bootstrap interval at level ``1 - alpha``.
    se : float
        Standard deviation of the bootstrap replicates.
    alpha : float
        One minus the interval's level.
    n_bootstrap : int
        Resamples of the rows.
    """

    estimate: float
    low: float
    high: float
    se: float
    alpha: float
    n_bootstrap: int

    def __str__(self) -> str:
        """``"0.6750 [0.5812, 0.7689]"``: the estimate and its interval."""
        return f"{self.estimate:.4f} [{self.low:.4f}, {self.high:.4f}]"


def _stratum_codes(strata: Any, n: int) -> NDArray[np.intp]:
    """Each row's stratum as a code: its label, or its combination of columns."""
    import pandas as pd

    if isinstance(strata, pd.DataFrame | pd.Series):
        frame = pd.DataFrame(strata)
    else:
        values = np.asarray(strata, dtype=object)
        frame = pd.DataFrame(values if values.ndim == 2 else {"stratum": list(values)})
    if frame.ndim != 2 or len(frame) != n or frame.shape[1] == 0:
        raise ValueError(
            f"strata must hold one stratum per sample (a label, or a row of "
            f"columns whose combinations are the strata); got shape "
            f"{frame.shape} for {n} samples."
        )
    missing = int(frame.isna().any(axis=1).sum())
    if missing:
        raise ValueError(
            f"strata has {missing} missing value(s); a row's stratum must be "
            f"known: drop those rows or give them a stratum of their own."
        )
    groups = frame.groupby(list(frame.columns), sort=True, dropna=False)
    return np.asarray(groups.ngroup().to_numpy(), dtype=np.intp)


def concordance_interval(
    y: Any,
    risk: ArrayLike,
    *,
    strata: Any = None,
    alpha: float = 0.05,
    n_bootstrap: int = 1000,
    random_state: Any = 0,
) -> ConcordanceInterval:
    r"""Harrell's concordance index and its bootstrap interval.

    The point estimate is Harrell's C of ``risk`` (a higher risk, an earlier
    event), equal to lifelines' ``concordance_index(time, -risk, event)``
    and to scikit-survival's ``concordance_index_censored``. The interval
    resamples the rows with replacement ``n_bootstrap`` times (the model and
    its scores held fixed: the uncertainty of C on data of this size, not of
    the model's fit) and takes the percentiles ``alpha/2`` and
    ``1 - alpha/2`` of the resamples' C.

    Parameters
    ----------
    y : survival outcome of shape (n_samples,)
        ``(time, event)`` columns, :func:`vcpcr.Surv` or scikit-survival's
        structured array.
    risk : array-like of shape (n_samples,)
        Risk scores, e.g. ``predict_log_partial_hazard`` (higher: an earlier
        event).
    strata : array-like of shape (n_samples,) or (n_samples, n_columns), optional
        Each sample's stratum (a label, or columns whose combinations are
        the strata, e.g. a stratified model's ``train_strata_``): the
        stratified C, over the comparable pairs *within* a stratum, as
        lifelines' stratified ``CoxPHFitter.concordance_index_`` (pooled:
        the concordant pairs of every stratum over their comparable pairs).
    alpha : float, default=0.05
        One minus the interval's level.
    n_bootstrap : int, default=1000
        Resamples of the rows.
    random_state : int, numpy.random.Generator or None, default=0
        Seeds the resamples: ``default_rng(random_state).integers(0, n,
        size=(n_bootstrap, n))``.

    Returns
    -------
    ConcordanceInterval
        ``estimate``, ``low``, ``high``, ``se`` (the replicates' standard
        deviation), ``alpha`` and ``n_bootstrap``; ``str()`` prints
        ``"0.6750 [0.5812, 0.7689]"``.

    Raises
    ------
    ValueError
        If ``y`` is not a survival outcome, ``risk`` is not finite or has
        another length, ``strata`` has another length or a missing value, no
        pair of rows (within a stratum) is comparable, or ``alpha`` or
        ``n_bootstrap`` is out of range.

    Notes
    -----
    With :math:`A_{ij} = 1` when row :math:`i` has its event and row
    :math:`j` is at risk after it, and :math:`S_{ij} = 1[r_i > r_j] +
    \tfrac12 1[r_i = r_j]`,

    .. math::

        C = \frac{\sum_{ij} A_{ij} S_{ij}}{\sum_{ij} A_{ij}},

    and a resample with counts :math:`w` has :math:`C_w = w^\top (A \circ S)
    w / w^\top A w`: a count-weighted mean over the comparable pairs (the
    kernel :func:`vcpcr._solvers.batch_scores.resampled_concordance`, whose pairs
    are those of the CV's concordance scorer). With ``strata``,
    :math:`A_{ij}` is also 0 when rows :math:`i` and :math:`j` are in
    different strata; the rows are resampled as without strata (the same
    draws; a stratum's size varies between resamples, as a cohort's
    composition varies between samples of its population).

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr.metrics import concordance_interval
    >>> rng = np.random.default_rng(0)
    >>> risk = rng.normal(size=200)
    >>> time = rng.exponential(np.exp(-risk))
    >>> y = np.column_stack([time, rng.random(200) < 0.7])
    >>> ci = concordance_interval(y, risk)
    >>> bool(ci.low < ci.estimate < ci.high)
    True
    """
    owner = "concordance_interval"
    check_fraction(alpha, "alpha", owner=owner)
    check_scalar(n_bootstrap, "n_bootstrap", numbers.Integral, owner=owner, min_val=1)
    check_same_rows(y, risk, ("y", "risk"))
    time, event = check_survival(y)
    scores = check_array(risk, "risk", ensure_2d=False)
    if scores.ndim != 1:
        raise ValueError(
            f"risk must be 1-d (one score per sample); got shape {scores.shape}."
        )
    _check_same_length(time, scores, ("y_true", "risk"))
    n = time.size
    codes = None if strata is None else _stratum_codes(strata, n)
    ones = np.ones((1, n))
    estimate = float(resampled_concordance(scores, time, event, ones, codes)[0])
    if not np.isfinite(estimate):
        within = " within a stratum" if codes is not None else ""
        raise ValueError(
            f"No pair of samples{within} is comparable (an event followed by a "
            f"sample still at risk): Harrell's C is undefined on these data."
        )
    rng = check_random_state(random_state)
    draws = rng.integers(0, n, size=(int(n_bootstrap), n))
    counts = np.zeros((int(n_bootstrap), n))
    np.add.at(counts, (np.arange(int(n_bootstrap))[:, None], draws), 1.0)
    replicates = resampled_concordance(scores, time, event, counts, codes)
    replicates = replicates[np.isfinite(replicates)]
    low, high = np.quantile(replicates, [alpha / 2, 1 - alpha / 2])
    se = float(np.std(replicates, ddof=1)) if replicates.size > 1 else np.nan
    return ConcordanceInterval(
        estimate, float(low), float(high), se, float(alpha), int(n_bootstrap)
    )
