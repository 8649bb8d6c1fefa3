"""Pooled cross-validated deviance: one criterion from every row's out-of-fold fit.

Cross-validation per fold scores each test fold on its own and averages. On
small folds (20-30 rows, a handful of events) a per-fold partial likelihood
or C-index is noisy, and the best of 180 noisy grid points rewards luck. The
pooled criterion (van Houwelingen et al. 2006, Stat Med 25:3201; Dai &
Breheny, Stat Methods Med Res 2024; R ``ncvreg::cv.ncvsurv``) first collects
every row's *out-of-fold* linear predictor, on the raw scale (no per-fold
centring), then computes one deviance over all rows:

- gaussian: the mean squared error of the out-of-fold predictions;
- binomial: twice the mean negative Bernoulli log-likelihood (log loss);
- cox: minus twice the Efron log partial likelihood of the pooled linear
  predictors (within strata), over the number of rows.

Its standard error is the bootstrap's (rows resampled with replacement, the
deviance recomputed; ``ncvreg``'s ``se = "bootstrap"``), which a pooled Cox
deviance needs since it is not a sum of independent terms.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from vcpcr._solvers.distributions import Distribution

__all__ = [
    "N_BOOT",
    "POOLED",
    "SLOPES",
    "bootstrap_counts",
    "calibration_slopes",
    "cross_calibrated",
    "paired_se",
    "pooled_bootstrap",
    "pooled_deviance",
    "pooled_scores",
]

_Float = NDArray[np.float64]

#: The name of the pooled criterion in ``VCPCRCV(scoring=...)``, its default.
POOLED = "neg_pooled_deviance"
#: Bootstrap resamples of its standard error.
N_BOOT = 200
#: The calibration slopes tried: a slope is a shrinkage factor of the clusters'
#: part of the linear predictor, so it never exceeds 1 nor flips its sign.
SLOPES = np.linspace(0.0, 1.0, 51)


def pooled_deviance(
    distribution: Distribution,
    eta: _Float,
    outcome: _Float,
    strata: NDArray[Any] | None = None,
) -> _Float:
    """Deviance per row of each row of ``eta`` (out-of-fold linear predictors).

    Parameters
    ----------
    distribution : vcpcr._solvers.distributions.Distribution
        The family's response math (``Family.distribution``), whose
        ``deviance`` scores each row.
    eta : ndarray of shape (n_points, n_samples)
        Out-of-fold linear predictors (gaussian: predictions), one row per
        grid point; a row with a non-finite value gets NaN.
    outcome : ndarray
        The step-2 outcome of the rows: ``y`` (gaussian), 0/1 (binomial), or
        ``(time, event)`` columns (cox).
    strata : ndarray of shape (n_samples,), optional
        Stratum labels of a stratified Cox model.

    Returns
    -------
    ndarray of shape (n_points,)
        The deviance divided by the number of rows (lower is better).

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr._solvers.distributions import NORMAL
    >>> from vcpcr._solvers.pooled import pooled_deviance
    >>> y = np.array([1.0, 2.0, 3.0])
    >>> pooled_deviance(NORMAL, np.array([[1.0, 2.0, 4.0]]), y)
    array([0.33333333])
    """
    finite = np.all(np.isfinite(eta), axis=1)
    out = np.full(eta.shape[0], np.nan)
    if finite.any():
        out[finite] = distribution.deviance(eta[finite], outcome, strata)
    return out


def bootstrap_counts(
    n_samples: int, n_boot: int, random_state: np.random.Generator
) -> NDArray[np.intp]:
    """Row counts of ``n_boot`` resamples of ``n_samples`` rows with replacement.

    Returns an ``(n_boot, n_samples)`` array: resample ``b`` holds row ``i``
    ``counts[b, i]`` times. Each resample's rows are drawn as a resample of
    the rows themselves would be, so the counts are those of that resample.
    """
    counts = np.zeros((n_boot, n_samples), dtype=np.intp)
    for b in range(n_boot):
        counts[b] = np.bincount(
            random_state.integers(0, n_samples, size=n_samples), minlength=n_samples
        )
    return counts


def pooled_bootstrap(
    distribution: Distribution,
    eta: _Float,
    outcome: _Float,
    strata: NDArray[Any] | None,
    counts: NDArray[np.intp],
) -> _Float:
    """Bootstrap draws of :func:`pooled_deviance`, for every grid point.

    Rows are resampled with replacement, the same resamples for every grid
    point, so that differences between points are paired
    (:func:`paired_se`), and the pooled deviance is recomputed on each, from
    the resample's row counts (``Distribution.resampled_deviance``: no copy
    of the predictors per resample).

    Parameters
    ----------
    distribution, eta, outcome, strata
        As in :func:`pooled_deviance`.
    counts : ndarray of shape (n_boot, n_samples)
        The resamples' row counts (:func:`bootstrap_counts`).

    Returns
    -------
    ndarray of shape (n_boot, n_points)
        The resampled deviances (NaN where the deviance is). Their standard
        deviation is the standard error of each point's pooled deviance
        (``ncvreg``'s ``se = "bootstrap"``).
    """
    draws = np.full((counts.shape[0], eta.shape[0]), np.nan)
    finite = np.all(np.isfinite(eta), axis=1)
    if finite.any():
        draws[:, finite] = distribution.resampled_deviance(
            eta[finite], outcome, strata, counts
        )
    return draws


def pooled_scores(
    distribution: Distribution,
    eta: _Float,
    clustered: _Float,
    outcome: _Float,
    strata: NDArray[Any] | None,
    folds: list[Any],
    counts: NDArray[np.intp],
) -> tuple[_Float, _Float, _Float, _Float]:
    """Score a set of grid points by the pooled criterion, each on its own.

    Cross-calibrates ``eta`` (:func:`cross_calibrated`), scores it by the
    pooled deviance and draws its bootstrap on the resamples ``counts``.
    Every point's numbers depend on its own rows of ``eta`` and
    ``clustered`` only, so the points can be scored in separate tasks.

    Returns
    -------
    calibrated : ndarray of shape (n_points, n_samples)
    slopes, deviance : ndarray of shape (n_points,)
    draws : ndarray of shape (n_boot, n_points)
    """
    calibrated, slopes = cross_calibrated(
        distribution, eta, clustered, outcome, strata, folds
    )
    deviance = pooled_deviance(distribution, calibrated, outcome, strata)
    draws = pooled_bootstrap(distribution, calibrated, outcome, strata, counts)
    return calibrated, slopes, deviance, draws


def paired_se(draws: _Float, best: int) -> _Float:
    """Bootstrap standard error of each point's deviance minus the best point's.

    The deviances of all grid points move together from one resample to the
    next (they share the rows), so the standard error of a *difference* is
    far smaller than that of a level; a sparser point is "within one standard
    error" of the best when its excess deviance is.

    Parameters
    ----------
    draws : ndarray of shape (n_boot, n_points)
        From :func:`pooled_bootstrap`.
    best : int
        The point with the lowest pooled deviance.

    Returns
    -------
    ndarray of shape (n_points,)
        0 for ``best`` itself.
    """
    with np.errstate(invalid="ignore"):
        diff = draws - draws[:, [best]]
        return np.asarray(np.std(diff, axis=0, ddof=1), dtype=np.float64)


def calibration_slopes(
    distribution: Distribution,
    offset: _Float,
    clustered: _Float,
    outcome: _Float,
    strata: NDArray[Any] | None = None,
) -> _Float:
    """Return the slope in :data:`SLOPES` of least pooled deviance, per grid point.

    The linear predictor ``offset + slope * clustered`` keeps the intercept and
    the covariates' terms (``offset``) and shrinks the clusters' terms
    (``clustered``), as the van Houwelingen & le Cessie (1990, Stat Med 9:1303)
    calibration slope does. The deviance is convex in the slope (the
    negative log-likelihood of every family is convex in the linear
    predictor), so the grid's first minimum is found by bisection on its
    forward differences, for all points at once: 2 ceil(log2 51) = 12
    deviances per point instead of the grid's 51, the same slope as the
    grid's ``argmin``. A point with no cluster (``clustered`` all 0) gets
    slope 0.

    Parameters
    ----------
    distribution, outcome, strata
        As in :func:`pooled_deviance`.
    offset, clustered : ndarray of shape (n_points, n_samples)
        The two parts of each point's linear predictors.

    Returns
    -------
    ndarray of shape (n_points,)
        NaN where a point's linear predictors are not all finite.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr._solvers.distributions import NORMAL
    >>> from vcpcr._solvers.pooled import calibration_slopes
    >>> clustered = np.array([[-2.0, -1.0, 1.0, 2.0]])
    >>> calibration_slopes(NORMAL, 0 * clustered, clustered, 0.5 * clustered[0])
    array([0.5])
    """
    finite = np.all(np.isfinite(offset) & np.isfinite(clustered), axis=1)
    out = np.full(offset.shape[0], np.nan)
    points = np.flatnonzero(finite)
    lost = np.zeros(offset.shape[0], dtype=bool)  # a deviance was not finite
    lo = np.zeros(points.size, dtype=np.intp)
    hi = np.full(points.size, SLOPES.size - 1, dtype=np.intp)
    while np.any(active := lo < hi):
        p, mid = points[active], (lo[active] + hi[active]) // 2
        left, right = (
            pooled_deviance(distribution, offset[p] + g * clustered[p], outcome, strata)
            for g in (SLOPES[mid, None], SLOPES[mid + 1, None])
        )
        lost[p] |= ~(np.isfinite(left) & np.isfinite(right))
        rising = ~(right < left)  # the first minimum is at mid or left of it
        hi[active] = np.where(rising, mid, hi[active])
        lo[active] = np.where(rising, lo[active], mid + 1)
    out[points] = SLOPES[lo]
    out[lost] = np.nan
    return out


def cross_calibrated(
    distribution: Distribution,
    eta: _Float,
    clustered: _Float,
    outcome: _Float,
    strata: NDArray[Any] | None,
    folds: list[Any],
) -> tuple[_Float, _Float]:
    """Out-of-fold linear predictors with cross-validated calibration slopes.

    A fitted step 2 on a few dozen events is over-confident: its out-of-fold
    linear predictors need a calibration slope well below 1, and a deviance
    of the raw predictors punishes every model with clusters for its scale. Each
    fold's predictors are therefore shrunk by the slope estimated on the
    *other* folds' out-of-fold predictors (:func:`calibration_slopes`), so
    that the slope is never fitted on the rows it is scored on: a noise model
    gets slopes near 0 and the deviance of the empty model, a real one keeps
    its signal at the right scale.

    Parameters
    ----------
    distribution, outcome, strata
        As in :func:`pooled_deviance`.
    eta, clustered : ndarray of shape (n_points, n_samples)
        Every row's out-of-fold linear predictor and its clusters' part.
    folds : list of (train, test) index arrays
        The CV folds that produced them.

    Returns
    -------
    calibrated : ndarray of shape (n_points, n_samples)
        The shrunk out-of-fold linear predictors.
    slopes : ndarray of shape (n_points,)
        The calibration slope of all rows' out-of-fold predictors, the
        shrinkage of a model refitted on all rows.
    """
    offset = eta - clustered
    out = np.full_like(eta, np.nan)
    for _, test in folds:
        rest = np.ones(eta.shape[1], dtype=bool)
        rest[test] = False
        slope = calibration_slopes(
            distribution,
            offset[:, rest],
            clustered[:, rest],
            outcome[rest],
            None if strata is None else strata[rest],
        )
        out[:, test] = offset[:, test] + slope[:, None] * clustered[:, test]
    return out, calibration_slopes(distribution, offset, clustered, outcome, strata)
