r"""Calibration: whether the predicted risks match the observed ones.

Given predictions (cross-validated ones on the training cohort, or a fitted
model's on another cohort), each function compares them with the outcome:

- :func:`survival_calibration` (cox): predicted risk of an event by a
  ``horizon`` against Kaplan-Meier observed risk, by groups of predicted risk
  with confidence intervals, and as a smoothed curve with ICI, E50 and E90
  (Austin, Harrell & van Klaveren 2020); the calibration slope and the
  observed/expected ratio at the horizon.
- :func:`binary_calibration` (binomial): predicted probability against
  observed frequency; calibration slope and intercept, and the ICI of a
  lowess smoother (Austin & Steyerberg 2019).
- :func:`regression_calibration` (gaussian): observed against predicted
  values; calibration slope and intercept.
- :func:`cross_val_calibration`: the out-of-fold predictions of a ``VCPCR``
  or ``VCPCRCV`` (a ``VCPCRCV`` is re-tuned inside every training fold), or a
  fitted model's own predictions on new data, and the family's calibration;
  :func:`cross_val_predict_survival` gives the out-of-fold survival
  probabilities alone.

Each returns a :class:`CalibrationResult` with ``summary()`` and ``plot()``.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, stats
from scipy.special import expit
from sklearn.base import clone
from sklearn.model_selection import KFold, StratifiedKFold, check_cv
from statsmodels.iolib.summary import Summary

from vcpcr._checks import (
    check_cv_param,
    check_fraction,
    check_scalar,
    check_split,
    check_survival,
    check_time_event,
)
from vcpcr._families import FAMILIES, Family, known_family
from vcpcr._input import (
    check_model_fold_strata,
    check_same_rows,
    model_strata,
    split_cells,
    strata_cells,
    take,
)
from vcpcr._result import Result
from vcpcr._scaling import constant_columns, magnitude
from vcpcr._smoothers import SplineFit, binary_smoother, cloglog, survival_smoother
from vcpcr._solvers.partial_likelihood import RiskSets
from vcpcr._solvers.step2_fits import cox_batch, logit_batch
from vcpcr._summary import evidence_table, numbered_notes
from vcpcr.exceptions import VCPCRWarning, user_stacklevel

__all__ = [
    "CalibrationResult",
    "binary_calibration",
    "cross_val_calibration",
    "cross_val_predict_survival",
    "kaplan_meier",
    "regression_calibration",
    "survival_calibration",
]

#: Predictions are clipped away from 0 and 1 (as lifelines' calibration).
_EPS = 1e-10


@dataclass(frozen=True, eq=False, repr=False)
class CalibrationResult(Result):
    """Calibration of predictions against an outcome.

    Attributes
    ----------
    family : {"cox", "binomial", "gaussian"}
        The kind of outcome.
    n_samples : int
        Number of samples.
    events : int or None
        Number of events (cox) or of positive outcomes (binomial); None for
        gaussian.
    horizon : float or None
        Time at which survival predictions are compared (cox).
    predicted, observed : ndarray of shape (n_samples,)
        Each sample's prediction (cox: predicted risk of an event by
        ``horizon``; binomial: probability; gaussian: value) and, for cox and
        binomial, the smoothed observed risk at it (NaN for gaussian).
    groups : pandas.DataFrame
        One row per group of predictions (quantiles): ``n``, ``predicted``
        (mean), ``observed`` (cox: Kaplan-Meier risk by the horizon;
        binomial: frequency; gaussian: mean) and its confidence interval
        ``lower``, ``upper``.
    slope, slope_ci : float, tuple of float
        Calibration slope and its confidence interval (1 is ideal).
    intercept, intercept_ci : float or None, tuple or None
        Calibration intercept (binomial: calibration-in-the-large, the
        intercept of a logistic regression with the logit of the prediction
        as offset; gaussian: intercept of observed on predicted); None for
        cox.
    observed_expected, observed_expected_ci : float or None, tuple or None
        Observed over expected risk by the horizon (cox): Kaplan-Meier risk
        of all samples over the mean predicted risk; its interval is the
        Kaplan-Meier interval over the same mean. None otherwise.
    ici, e50, e90 : float or None
        Mean, median and 90th percentile of ``|predicted - observed|`` over
        the samples (cox, binomial).
    curve : pandas.DataFrame
        The smoothed curve on a grid of 100 predictions between their 1st and
        99th percentiles (cox; binomial: at the predictions) (``predicted``,
        ``observed``); empty for gaussian.
    alpha : float
        Level of the confidence intervals.
    notes : list of str
        How the numbers were computed; the summary's notes.
    """

    family: str
    n_samples: int
    events: int | None
    horizon: float | None
    predicted: NDArray[np.float64]
    observed: NDArray[np.float64]
    groups: pd.DataFrame
    slope: float
    slope_ci: tuple[float, float]
    intercept: float | None
    intercept_ci: tuple[float, float] | None
    observed_expected: float | None
    observed_expected_ci: tuple[float, float] | None
    ici: float | None
    e50: float | None
    e90: float | None
    curve: pd.DataFrame = field(repr=False)
    alpha: float
    notes: list[str] = field(repr=False)

    def _header(
        self,
    ) -> tuple[list[tuple[str, list[str]]], list[tuple[str, list[str]]]]:
        level = f"{100 * (1 - self.alpha):g}%"

        def ci(pair: tuple[float, float] | None) -> str:
            return "-" if pair is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"

        left = [
            ("Family:", [self.family]),
            ("No. Observations:", [str(self.n_samples)]),
        ]
        if self.events is not None:
            left.append(("Events:", [str(self.events)]))
        if self.horizon is not None:
            left.append(("Horizon:", [f"{self.horizon:g}"]))
        left.append(("Groups:", [str(len(self.groups))]))
        right = [
            ("Slope:", [f"{self.slope:.3f}"]),
            (f"Slope {level} CI:", [ci(self.slope_ci)]),
        ]
        if self.intercept is not None:
            right.append(("Intercept:", [f"{self.intercept:.3f}"]))
            right.append((f"Intercept {level} CI:", [ci(self.intercept_ci)]))
        if self.observed_expected is not None:
            right.append(("Observed/expected:", [f"{self.observed_expected:.3f}"]))
            right.append((f"O/E {level} CI:", [ci(self.observed_expected_ci)]))
        for name, value in (("ICI:", self.ici), ("E50:", self.e50), ("E90:", self.e90)):
            if value is not None:
                right.append((name, [f"{value:.4f}"]))
        return left, right

    def summary(self) -> Summary:
        """Return the calibration as a statsmodels ``Summary``.

        A header with the calibration slope (and intercept, or the
        observed/expected ratio) and the ICI, E50 and E90 of the smoothed
        curve; a table of the groups; numbered notes saying how each number
        was computed.

        Returns
        -------
        statsmodels.iolib.summary.Summary
            Print it, or call ``as_text()``, ``as_html()`` or ``as_latex()``.
        """
        left, right = self._header()
        smry = Summary()
        smry.add_table_2cols(
            None, title="Calibration", gleft=left, gright=right, yname="y", xname=[]
        )
        frame = self.groups.copy()
        frame.index = [f"group {i + 1}" for i in range(len(frame))]
        frame["n"] = frame["n"].astype(int).astype(str)
        what = {"cox": "risk by the horizon", "binomial": "probability"}
        title = f"Predicted and observed {what.get(self.family, 'mean')} by group"
        smry.tables.append(evidence_table(frame, title))
        smry.add_extra_txt(numbered_notes(self.notes))
        return smry

    def plot(self, ax: Any = None) -> Any:
        """Draw predicted against observed: groups with intervals, smoothed curve.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes.
        """
        from vcpcr.plotting import plot_calibration

        return plot_calibration(self, ax)


def _calibration(
    *,
    family: str,
    predicted: NDArray[np.float64],
    observed: NDArray[np.float64],
    groups: pd.DataFrame,
    slope: tuple[float, float, float],
    alpha: float,
    notes: list[str],
    horizon: float | None = None,
    intercept: tuple[float, float, float] | None = None,
    observed_expected: tuple[float, float, float] | None = None,
    curve: pd.DataFrame | None = None,
    events: int | None = None,
) -> CalibrationResult:
    """Make a :class:`CalibrationResult`: the intervals split, the ICI, E50, E90."""
    smoothed = np.isfinite(observed).all() and family != "gaussian"
    deltas = np.abs(predicted - observed)
    icpt, oe = intercept, observed_expected
    return CalibrationResult(
        family=family,
        n_samples=int(predicted.size),
        events=events,
        horizon=horizon,
        predicted=predicted,
        observed=observed,
        groups=groups,
        slope=slope[0],
        slope_ci=(slope[1], slope[2]),
        intercept=None if icpt is None else icpt[0],
        intercept_ci=None if icpt is None else (icpt[1], icpt[2]),
        observed_expected=None if oe is None else oe[0],
        observed_expected_ci=None if oe is None else (oe[1], oe[2]),
        ici=float(deltas.mean()) if smoothed else None,
        e50=float(np.percentile(deltas, 50)) if smoothed else None,
        e90=float(np.percentile(deltas, 90)) if smoothed else None,
        curve=(
            pd.DataFrame(columns=["predicted", "observed"]) if curve is None else curve
        ),
        alpha=alpha,
        notes=notes,
    )


# --------------------------------------------------------------------- checks


def _check_vector(values: Any, name: str, n: int, *, owner: str) -> NDArray[np.float64]:
    arr = (
        np.asarray(values, dtype=np.float64)
        if not isinstance(values, pd.DataFrame)
        else None
    )
    if arr is None or arr.ndim != 1:
        shape = getattr(values, "shape", None)
        raise ValueError(
            f"The {name!r} parameter of {owner} must be a 1-d array of shape "
            f"(n_samples,), one prediction per sample. Got shape {shape} instead."
        )
    if arr.size != n:
        raise ValueError(
            f"{name} has {arr.size} entries but y has {n}; pass one per sample."
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN or infinite value(s) (first at "
            f"position {int(np.flatnonzero(bad)[0])}); drop those samples first."
        )
    return arr


def _check_probability(
    values: Any, name: str, n: int, *, owner: str
) -> NDArray[np.float64]:
    arr = _check_vector(values, name, n, owner=owner)
    out = (arr < 0) | (arr > 1)
    if out.any():
        raise ValueError(
            f"{name} must hold probabilities in [0, 1]; {int(out.sum())} value(s) "
            f"are outside, e.g. {arr[out][0]!r}. Pass probabilities (e.g. "
            f"predict_proba(X)[:, 1], or survival at the horizon), not scores."
        )
    return np.clip(arr, _EPS, 1 - _EPS)


def _check_groups(n_groups: Any, n: int, *, owner: str) -> int:
    check_scalar(n_groups, "n_groups", numbers.Integral, owner=owner, min_val=1)
    if n_groups * 2 > n:
        raise ValueError(
            f"n_groups={n_groups} needs at least {2 * n_groups} samples (2 per "
            f"group); got {n}. Use n_groups <= {max(1, n // 2)}."
        )
    return int(n_groups)


def _check_horizon(
    horizon: Any, time: NDArray[np.float64], event: NDArray[np.bool_], *, owner: str
) -> float:
    check_scalar(
        horizon, "horizon", numbers.Real, owner=owner, min_val=0.0, include_min=False
    )
    h = float(horizon)
    first, last = time[event].min(), time.max()
    if not first <= h < last:
        raise ValueError(
            f"The 'horizon' parameter of {owner} must lie between the first event "
            f"time ({first:g}) and the last follow-up time ({last:g}, excluded), "
            f"where the Kaplan-Meier estimate is defined. Got {h:g} instead; "
            f"e.g. the median follow-up, {float(np.median(time)):g}."
        )
    return h


def _group_index(predicted: NDArray[np.float64], n_groups: int) -> NDArray[np.intp]:
    """Quantile groups of ``predicted`` of equal size (ranks, ties by position)."""
    rank = np.empty(predicted.size, dtype=np.intp)
    rank[np.argsort(predicted, kind="stable")] = np.arange(predicted.size)
    return np.asarray(rank * n_groups // predicted.size, dtype=np.intp)


# ---------------------------------------------------------------- Kaplan-Meier


def kaplan_meier(
    time: ArrayLike, event: ArrayLike, horizon: float, *, alpha: float = 0.05
) -> tuple[float, float, float]:
    r"""Kaplan-Meier survival at ``horizon`` and its confidence interval.

    The interval is the exponential Greenwood (log-log) interval, as
    lifelines' ``KaplanMeierFitter``: with
    :math:`v = \sum_{t_i \le h} d_i / (n_i (n_i - d_i))`,
    :math:`\exp(-\exp(\log(-\log S) \pm z \sqrt{v} / \log S))`.

    Parameters
    ----------
    time, event : array-like of shape (n_samples,)
        Follow-up times and whether each ended with the event.
    horizon : float
        Time at which the survival is read (the estimate's last step at or
        before it).
    alpha : float, default=0.05
        Level of the interval.

    Returns
    -------
    survival, lower, upper : float
        The estimate and its interval. When the estimate is 1 (no event at
        or before ``horizon``) or 0 (every sample at risk had the event),
        the log-log interval does not exist: its bounds are NaN, with a
        :class:`~vcpcr.exceptions.VCPCRWarning`.

    Raises
    ------
    ValueError
        If ``horizon`` lies beyond the last follow-up time: no sample is at
        risk there, and the estimate is undefined.

    Examples
    --------
    >>> from vcpcr.calibration import kaplan_meier
    >>> s, lo, hi = kaplan_meier([1, 2, 3, 4], [1, 0, 1, 0], 3.5)
    >>> round(s, 4)
    0.375
    """
    owner = "kaplan_meier"
    if np.ndim(time) != 1 or np.ndim(event) != 1 or np.size(time) != np.size(event):
        raise ValueError(
            f"time and event must be 1-d arrays of one length; got shapes "
            f"{np.shape(time)} and {np.shape(event)}."
        )
    if np.size(time) == 0:
        raise ValueError("time and event are empty: no sample to estimate from.")
    t, e = check_time_event(time, event, name="(time, event)")
    check_scalar(horizon, "horizon", numbers.Real, owner=owner, min_val=0.0)
    check_fraction(alpha, "alpha", owner=owner)
    h, last = float(horizon), float(t.max())
    if last < h:
        raise ValueError(
            f"The 'horizon' parameter of {owner} ({h:g}) lies beyond the last "
            f"follow-up time ({last:g}): no sample is at risk there, so the "
            f"Kaplan-Meier estimate is undefined. Choose a horizon of at most "
            f"{last:g}, e.g. the median follow-up, {float(np.median(t)):g}."
        )
    s, lo, hi = _kaplan_meier(t, e, h, alpha)
    if s in (0.0, 1.0):
        why = (
            "no event at or before it"
            if s == 1.0
            else "every sample at risk had the event by then"
        )
        warnings.warn(
            f"{owner}: the estimate at horizon={h:g} is {s:g} ({why}); the "
            f"log-log interval does not exist there, so its bounds are NaN.",
            VCPCRWarning,
            stacklevel=user_stacklevel(),
        )
    return s, lo, hi


def _kaplan_meier(
    t: NDArray[np.float64], e: NDArray[np.bool_], h: float, alpha: float
) -> tuple[float, float, float]:
    """:func:`kaplan_meier` of checked data, silently NaN where it is undefined.

    NaN bounds when the estimate is 0 or 1, NaN for all three when no sample
    is followed up to ``h`` (the calibration's groups report these
    themselves).
    """
    if t.max() < h:
        return np.nan, np.nan, np.nan
    times = np.unique(t[e & (t <= h)])
    at_risk = (t[None, :] >= times[:, None]).sum(axis=1)
    deaths = ((t[None, :] == times[:, None]) & e[None, :]).sum(axis=1)
    s = float(np.prod(1.0 - deaths / at_risk))
    if s <= 0.0 or s >= 1.0:
        return s, np.nan, np.nan
    with np.errstate(divide="ignore"):
        v = float(np.sum(deaths / (at_risk * (at_risk - deaths))))
    z = stats.norm.ppf(1 - alpha / 2)
    log_s = np.log(s)
    theta = np.log(-log_s)
    half = z * np.sqrt(v) / abs(log_s)
    return s, float(np.exp(-np.exp(theta + half))), float(np.exp(-np.exp(theta - half)))


# ----------------------------------------------------------------- slopes


def _cox_slope(
    lp: NDArray[np.float64],
    time: NDArray[np.float64],
    event: NDArray[np.bool_],
    alpha: float,
) -> tuple[float, float, float]:
    """Cox regression (Efron ties) of the outcome on ``lp``: slope and its Wald CI."""
    fit = cox_batch(lp[None, :, None], time, event)
    slope = float(fit.params[0, 0])
    rs = RiskSets(time, event)
    es = (slope * lp)[rs.order][None, :]
    _, _, hess = rs.efron(es, lp[rs.order][None, :, None])
    se = float(np.sqrt(-1.0 / hess[0, 0, 0]))
    z = stats.norm.ppf(1 - alpha / 2)
    return slope, slope - z * se, slope + z * se


def _logit_slope(
    logit: NDArray[np.float64], y: NDArray[np.float64], alpha: float
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Calibration slope (logistic regression on ``logit``) and intercept (offset)."""
    if constant_columns(logit[:, None]).size:
        raise ValueError(
            "The predicted probabilities are constant (up to rounding): a "
            "calibration slope needs predictions that vary."
        )
    events, others = logit[y > 0.5], logit[y <= 0.5]
    if events.size and others.size:
        above = events.min() > others.max()
        if above or events.max() < others.min():
            raise ValueError(
                f"The predicted probabilities separate the outcomes completely "
                f"(each of the {events.size} events' {'above' if above else 'below'}"
                f" each of the {others.size} non-events'): the calibration slope "
                f"is {'' if above else 'minus '}infinite, not a number. Check "
                f"that the probabilities are not the outcomes themselves"
                f"{'' if above else ' (or the probabilities of the other class)'}."
            )
    fit = logit_batch(logit[None, :, None], y)
    a, b = fit.params[0]
    X = np.column_stack([np.ones_like(logit), logit])
    p = 1.0 / (1.0 + np.exp(-(a + b * logit)))
    cov = np.linalg.inv(X.T @ (X * (p * (1 - p))[:, None]))
    z = stats.norm.ppf(1 - alpha / 2)
    se_b = float(np.sqrt(cov[1, 1]))

    # calibration-in-the-large: y ~ 1 + offset(logit), the root of its score
    # (decreasing in c; Newton's steps diverged on predictions of 0 and 1,
    # clipped to 1e-10, whose logits are -+23)
    def score(c: float) -> float:
        return float(np.sum(y - expit(c + logit)))

    width = 1.0
    while score(-width) <= 0 or score(width) >= 0:
        width *= 2
        if width > 1e4:  # one class only: no finite intercept
            raise ValueError(
                "The outcome takes one value: calibration needs both classes."
            )
    c = float(optimize.brentq(score, -width, width, xtol=1e-12))
    q = expit(c + logit)
    se_c = float(1.0 / np.sqrt(np.sum(q * (1 - q))))
    return (float(b), b - z * se_b, b + z * se_b), (c, c - z * se_c, c + z * se_c)


# ------------------------------------------------------------------ survival


#: The groups' trend (observed risk on predicted, weighted by their
#: intervals) is real when it is this many standard errors from flat
#: (two-sided p < 0.001) ...
_TREND_Z = 3.29
#: ... and the smoothed curve follows it when its own trend over the same
#: groups is at least this share of theirs. On 384 simulated cohorts
#: (survival: Weibull shapes 0.5 to 2, 40% cured, miscalibrated slopes 0.5 to
#: 2, n 100 to 5000; binary: logit slopes 0.3 to 3, n 200 to 20,000) the
#: smallest share was 0.55 (a cured fraction the smoother cannot bend to);
#: a flat curve has share 0, a reversed one a negative share.
_TREND_SHARE = 0.25


def _invalid_fit(spline: SplineFit, events: int) -> str | None:
    """Say why the survival smoother has no valid fit, or None if it has one."""
    if spline.valid:
        return None
    why = (
        f"{spline.floored} of {events} events at the hazard floor of its likelihood"
        if spline.floored
        else "its likelihood or gradient is not finite at the fit"
    )
    return f"no valid fit of the spline smoother ({why})"


def _unfollowed_groups(
    smoothed: NDArray[np.float64],
    group: NDArray[np.intp],
    groups: pd.DataFrame,
    alpha: float,
) -> str | None:
    """Say how a smoothed curve fails to follow the groups' trend, or None.

    A degenerate smoother's curve is flat (an optimizer stopped at its
    start) or runs against the groups' observed risks while these rise or
    fall clearly with the prediction. The trend of the groups is the
    weighted least-squares slope of their observed risk on their mean
    prediction, each weighted by the inverse square of its standard error
    (its interval's half-width over the normal quantile); the curve's trend
    is the same slope of the smoothed risk averaged over each group. The
    curve is degenerate when the groups' trend is more than ``_TREND_Z``
    standard errors from flat and the curve's is below ``_TREND_SHARE``
    times it. Non-finite smoothed values are degenerate too.
    """
    if not np.isfinite(smoothed).all():
        return "the smoothed risks are not finite"
    z = stats.norm.ppf(1 - alpha / 2)
    mean = np.bincount(group, smoothed) / np.bincount(group)
    x, obs, lo, hi = groups[["predicted", "observed", "lower", "upper"]].to_numpy().T
    se = (hi - lo) / (2 * z)
    use = np.isfinite(se) & (se > 0)
    if use.sum() < 3:
        return None
    w = 1.0 / se[use] ** 2
    xc = x[use] - np.sum(w * x[use]) / np.sum(w)
    sxx = float(np.sum(w * xc**2))
    if not sxx > 0:
        return None
    trend = float(np.sum(w * xc * obs[use])) / sxx
    z_trend = abs(trend) * np.sqrt(sxx)
    if not z_trend > _TREND_Z:
        return None
    share = float(np.sum(w * xc * mean[use])) / sxx / trend
    if share >= _TREND_SHARE:
        return None
    return (
        f"a degenerate smoothed curve: its trend across the {int(use.sum())} "
        f"groups is {share:.2f} times that of their observed risks, which are "
        f"{z_trend:.1f} standard errors from flat"
    )


def _warn_unreported(owner: str, problem: str) -> None:
    """Warn that ICI, E50, E90 and the curve are not reported, and why."""
    warnings.warn(
        f"{owner}: {problem}; ICI, E50 and E90 are not reported (None) and the "
        "smoothed curve is omitted. The groups, slope and the other statistics "
        "do not depend on the smoother.",
        VCPCRWarning,
        stacklevel=user_stacklevel(),
    )


def _smoother_notes(start: str, problem: str | None) -> list[str]:
    """Return the summary's note on the smoother: why its numbers are omitted.

    Or, when they are reported, which fit of the survival smoother
    (``start``) smoothed if not lifelines'.
    """
    if problem is not None:
        return [
            f"{problem[0].upper()}{problem[1:]}: ICI, E50, E90 and the curve omitted."
        ]
    if start == "weibull":
        return [
            "The smoother's fit from lifelines' starting point was degenerate "
            "(events at its hazard floor) or not better: fitted from the optimum "
            "of its nested Weibull model instead."
        ]
    if start == "weibull only":
        return [
            "No valid fit of the spline smoother: smoothed by its nested Weibull "
            "model (the spline coefficient at 0)."
        ]
    return []


def survival_calibration(
    y: Any,
    predicted_survival: ArrayLike,
    horizon: float,
    *,
    n_groups: int = 5,
    alpha: float = 0.05,
) -> CalibrationResult:
    r"""Calibration of predicted survival at a horizon against the observed outcome.

    Parameters
    ----------
    y : array-like of shape (n_samples, 2), DataFrame or structured array
        The survival outcome ``(time, event)`` of the samples.
    predicted_survival : array-like of shape (n_samples,)
        Each sample's predicted probability of being event-free at
        ``horizon``, e.g. from :func:`cross_val_predict_survival` (on the
        training cohort) or ``model.predict_survival_function(X,
        return_array=True, times=[horizon])[:, 0]`` (on another cohort).
    horizon : float
        Time of the comparison, between the first event and the last
        follow-up.
    n_groups : int, default=5
        Groups of equal size at quantiles of the predicted risk.
    alpha : float, default=0.05
        Level of the confidence intervals.

    Returns
    -------
    CalibrationResult
        Slope, observed/expected, ICI/E50/E90, groups, smoothed curve.

    Raises
    ------
    ValueError
        If the inputs disagree in length, the predictions are not
        probabilities, or the horizon is outside the follow-up.

    See Also
    --------
    cross_val_calibration : Out-of-fold predictions of a model and their calibration.

    Notes
    -----
    The predicted risk is :math:`\hat F_i = 1 - \hat S_i(h)`.

    - **Groups**: observed risk per group is one minus the Kaplan-Meier
      estimate at ``h`` (:func:`kaplan_meier`, log-log interval).
    - **Smoothed curve** (Austin, Harrell & van Klaveren 2020): the observed
      risk as a smooth function of :math:`\mathrm{cloglog}(\hat F) =
      \log(-\log(1 - \hat F))`, from the flexible parametric survival model
      that lifelines' ``survival_probability_calibration`` fits (log
      cumulative hazard a restricted cubic spline of log time with 3 knots,
      the cloglog entering as an accelerated-failure-time covariate;
      ``CRCSplineFitter(n_baseline_knots=3, penalizer=1e-6)``), written here
      from its likelihood. ICI, E50 and E90 are the mean, median and 90th
      percentile of :math:`|\hat F_i - \tilde F_i|` with :math:`\tilde F_i`
      the smoothed observed risk at :math:`\hat F_i`. From lifelines'
      starting point alone, follow-up times in the tens or more (or many
      predictions at the 1e-10 floor) often end on the plateau of the
      likelihood's hazard floor, where the smoothed risk is 0 for every
      sample; such a fit is rejected and the model refitted from the
      optimum of its nested Weibull model (the summary says so in a note).
      When no spline fit is valid, the Weibull model itself smooths, with a
      :class:`~vcpcr.exceptions.VCPCRWarning`. The likelihood is in log
      time: a sample censored at time 0 adds nothing to it and is left out;
      an event at time 0 is placed at half the first positive follow-up
      time (it still counts, before every other sample). The groups, slope
      and observed/expected use every sample as given.
    - **ICI, E50, E90 not reported** (``None``, the curve empty, a
      :class:`~vcpcr.exceptions.VCPCRWarning` and a note) when the smoother
      has no valid fit (its likelihood or gradient not finite, or events at
      its hazard floor with no Weibull fallback) or its curve is degenerate:
      the groups' observed risks trend with the prediction more than 3.29
      standard errors from flat (weighted least squares over the groups,
      weights from their intervals) while the curve's trend over the same
      groups is below 0.25 times theirs (flat or reversed).
    - **Calibration slope**: the coefficient of a Cox regression (Efron ties)
      of the outcome on :math:`\mathrm{cloglog}(\hat F)`, which for a Cox
      model is its linear predictor up to a constant (1: ideal; below 1:
      predictions too extreme, the usual sign of overfitting).
    - **Observed/expected**: :math:`(1 - \hat S_{KM}(h)) / \overline{\hat F}`
      with the Kaplan-Meier interval of the numerator.

    References
    ----------
    .. [1] Austin, P. C., Harrell, F. E., van Klaveren, D. (2020). Graphical
       calibration curves and the integrated calibration index (ICI) for
       survival models. Statistics in Medicine 39(21), 2714-2742.
    .. [2] Royston, P., Altman, D. G. (2013). External validation of a Cox
       prognostic model: principles and methods. BMC Medical Research
       Methodology 13, 33.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr.calibration import survival_calibration
    >>> rng = np.random.default_rng(0)
    >>> lp = rng.normal(size=300)
    >>> time = rng.exponential(1 / (0.1 * np.exp(lp)))
    >>> y = np.column_stack([np.minimum(time, 10), time < 10])
    >>> result = survival_calibration(y, np.exp(-0.1 * 5 * np.exp(lp)), 5)
    >>> 0.8 < result.slope < 1.2
    True
    """
    owner = "survival_calibration"
    check_same_rows(predicted_survival, y, ("predicted_survival", "y"))
    time, event = check_survival(y)
    n = time.size
    s = _check_probability(predicted_survival, "predicted_survival", n, owner=owner)
    h = _check_horizon(horizon, time, event, owner=owner)
    k = _check_groups(n_groups, n, owner=owner)
    check_fraction(alpha, "alpha", owner=owner)
    risk = 1.0 - s
    x = cloglog(risk)
    if constant_columns(x[:, None]).size:
        raise ValueError(
            f"predicted_survival is constant (all {float(s[0])!r}, up to rounding), as "
            f"an empty model's: a calibration slope needs predictions that vary. "
            f"Report the observed risk (kaplan_meier) against the one prediction "
            f"instead."
        )
    group = _group_index(risk, k)
    rows = []
    for g in range(k):
        m = group == g
        km, lo, hi = _kaplan_meier(time[m], event[m], h, alpha)
        rows.append((int(m.sum()), float(risk[m].mean()), 1 - km, 1 - hi, 1 - lo))
    groups = pd.DataFrame(
        rows, columns=["n", "predicted", "observed", "lower", "upper"]
    )
    spline = survival_smoother(x, time, event)
    observed = spline.risk(x, h)
    # where the predictions lie (1st to 99th percentile): beyond, a few
    # extreme predictions steer the smoother (at a predicted risk of 1 - 1e-10
    # it gave an observed risk of 1e-5, beside 0.90 at 0.99)
    lo, hi = np.quantile(risk, [0.01, 0.99])
    grid = np.linspace(max(lo, _EPS), min(hi, 1 - _EPS), 100)
    curve = pd.DataFrame({"predicted": grid, "observed": spline.risk(cloglog(grid), h)})
    problem = _invalid_fit(spline, int(event.sum())) or _unfollowed_groups(
        observed, group, groups, alpha
    )
    if problem is not None:
        _warn_unreported(owner, problem)
        observed = np.full(n, np.nan)
        curve = curve.iloc[:0]
    elif spline.start == "weibull only":
        warnings.warn(
            f"{owner}: no valid fit of the spline smoother ({spline.floored} of "
            f"{int(event.sum())} events at the hazard floor of its likelihood); "
            "the smoother without its spline term (a Weibull model) gives ICI, E50 "
            "and E90. The groups, slope and observed/expected do not depend on "
            "the smoother.",
            VCPCRWarning,
            stacklevel=user_stacklevel(),
        )
    km, lo, hi = _kaplan_meier(time, event, h, alpha)
    expected = float(risk.mean())
    oe = ((1 - km) / expected, (1 - hi) / expected, (1 - lo) / expected)
    notes = [
        f"Predicted risk = 1 - predicted survival at the horizon ({h:g}); observed "
        f"risk per group = 1 - Kaplan-Meier at the horizon, with its "
        f"{100 * (1 - alpha):g}% log-log (exponential Greenwood) interval.",
        "Slope: Cox regression (Efron ties) of the outcome on the complementary "
        "log-log of the predicted risk (a Cox model's linear predictor up to a "
        "constant); 1 is ideal, below 1 the predictions are too extreme.",
        "Observed/expected: Kaplan-Meier risk of all samples by the horizon over "
        "the mean predicted risk (Royston & Altman 2013).",
        "ICI, E50, E90: mean, median and 90th percentile of |predicted - smoothed "
        "observed| (Austin, Harrell & van Klaveren 2020), smoothed by the flexible "
        "parametric model of lifelines' survival_probability_calibration.",
    ]
    if not spline.converged:
        notes.append("The smoother's optimizer did not reach a gradient below 1e-5.")
    notes.extend(_smoother_notes(spline.start, problem))
    return _calibration(
        family="cox",
        predicted=risk,
        observed=observed,
        groups=groups,
        slope=_cox_slope(x, time, event, alpha),
        observed_expected=oe,
        curve=curve,
        horizon=h,
        alpha=alpha,
        notes=notes,
        events=int(event.sum()),
    )


# ------------------------------------------------------------------ binomial


def _binary_outcome(y: Any, n: int, *, owner: str) -> NDArray[np.float64]:
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(
            f"y must be a 1-d array with one 0/1 outcome per prediction ({n}); got "
            f"shape {arr.shape}."
        )
    values = pd.unique(pd.Series(arr))
    if not set(values.tolist()) <= {0, 1} or len(values) != 2:
        raise ValueError(
            f"The 'y' parameter of {owner} must hold the two outcomes coded 0/1 "
            f"(1 = the event whose probability is predicted). Got values "
            f"{sorted(map(str, values))[:5]}; recode, e.g. y == classes_[1]."
        )
    return arr.astype(np.float64)


def binary_calibration(
    y: ArrayLike,
    probability: ArrayLike,
    *,
    n_groups: int = 10,
    frac: float = 0.75,
    alpha: float = 0.05,
) -> CalibrationResult:
    r"""Calibration of predicted probabilities against 0/1 outcomes.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Outcomes coded 0/1 (1: the class whose probability is predicted).
    probability : array-like of shape (n_samples,)
        Predicted probabilities of the outcome 1.
    n_groups : int, default=10
        Groups of equal size at quantiles of the probability.
    frac : float, default=0.75
        Share of the samples in each local fit of the lowess smoother.
    alpha : float, default=0.05
        Level of the confidence intervals.

    Returns
    -------
    CalibrationResult
        Slope, intercept, ICI/E50/E90, groups, smoothed curve.

    Raises
    ------
    ValueError
        If ``y`` is not 0/1 or the probabilities are out of range.

    See Also
    --------
    cross_val_calibration : Out-of-fold predictions of a model and their calibration.

    Notes
    -----
    Slope: :math:`b` of :math:`\mathrm{logit}\,P(y=1) = a + b\,\mathrm{logit}(\hat p)`;
    intercept (calibration-in-the-large): :math:`c` of
    :math:`\mathrm{logit}\,P(y=1) = c + \mathrm{logit}(\hat p)`; both with
    Wald intervals. ICI, E50, E90: mean, median, 90th percentile of
    :math:`|\hat p - \tilde p|` with :math:`\tilde p` a lowess of ``y`` on
    :math:`\hat p` (local linear, tricube weights, no robustness
    iterations; Austin & Steyerberg use R's ``loess``, local quadratic, so
    their ICI differs slightly). Observed frequency per group with Wilson's
    interval. ICI, E50 and E90 are not reported (``None``, the curve empty,
    a :class:`~vcpcr.exceptions.VCPCRWarning` and a note) when the lowess
    curve is degenerate: the groups' observed frequencies trend with the
    prediction more than 3.29 standard errors from flat while the curve's
    trend over the same groups is below 0.25 times theirs (flat or
    reversed), as in :func:`survival_calibration`.

    References
    ----------
    .. [1] Austin, P. C., Steyerberg, E. W. (2019). The Integrated Calibration
       Index (ICI) and related metrics for quantifying the calibration of
       logistic regression models. Statistics in Medicine 38(21), 4051-4065.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr.calibration import binary_calibration
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, size=500)
    >>> result = binary_calibration(rng.uniform(size=500) < p, p)
    >>> result.ici < 0.05
    True
    """
    from statsmodels.stats.proportion import proportion_confint

    owner = "binary_calibration"
    check_same_rows(probability, y, ("probability", "y"))
    arr = np.asarray(probability)
    n = arr.shape[0] if arr.ndim else 0
    target = _binary_outcome(y, n, owner=owner)
    p = _check_probability(probability, "probability", n, owner=owner)
    k = _check_groups(n_groups, n, owner=owner)
    check_fraction(frac, "frac", owner=owner)
    check_fraction(alpha, "alpha", owner=owner)
    observed = binary_smoother(p, target, frac)
    group = _group_index(p, k)
    rows = []
    for g in range(k):
        m = group == g
        hits = int(target[m].sum())
        lo, hi = proportion_confint(hits, int(m.sum()), alpha=alpha, method="wilson")
        rows.append((int(m.sum()), float(p[m].mean()), hits / m.sum(), lo, hi))
    groups = pd.DataFrame(
        rows, columns=["n", "predicted", "observed", "lower", "upper"]
    )
    problem = _unfollowed_groups(observed, group, groups, alpha)
    if problem is not None:
        _warn_unreported(owner, problem)
        observed = np.full(n, np.nan)
    order = np.argsort(p)
    curve = pd.DataFrame({"predicted": p[order], "observed": observed[order]})
    if problem is not None:
        curve = curve.iloc[:0]
    logit = np.log(p) - np.log1p(-p)
    slope, intercept = _logit_slope(logit, target, alpha)
    notes = [
        "Slope: logistic regression of the outcome on the logit of the predicted "
        "probability; intercept: the same with the logit as an offset "
        "(calibration-in-the-large; 0 is ideal). Wald intervals.",
        f"ICI, E50, E90: mean, median and 90th percentile of |predicted - "
        f"smoothed observed|, smoothed by lowess (frac={frac:g}, local linear, "
        f"no robustness iterations; Austin & Steyerberg 2019).",
        f"Observed frequency per group with its {100 * (1 - alpha):g}% Wilson "
        f"interval.",
    ]
    notes.extend(_smoother_notes("lowess", problem))
    return _calibration(
        family="binomial",
        predicted=p,
        observed=observed,
        groups=groups,
        slope=slope,
        intercept=intercept,
        curve=curve,
        alpha=alpha,
        notes=notes,
        events=int(target.sum()),
    )


# ------------------------------------------------------------------ gaussian


def regression_calibration(
    y: ArrayLike, prediction: ArrayLike, *, n_groups: int = 10, alpha: float = 0.05
) -> CalibrationResult:
    r"""Calibration of predicted values: observed against predicted.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Observed values.
    prediction : array-like of shape (n_samples,)
        Predicted values.
    n_groups : int, default=10
        Groups of equal size at quantiles of the prediction.
    alpha : float, default=0.05
        Level of the confidence intervals.

    Returns
    -------
    CalibrationResult
        Slope and intercept of the least-squares line of ``y`` on the
        prediction (1 and 0 are ideal), groups with the mean observed value
        and its t interval.

    Raises
    ------
    ValueError
        If the inputs disagree in length or hold NaN.

    See Also
    --------
    cross_val_calibration : Out-of-fold predictions of a model and their calibration.

    Notes
    -----
    :math:`y = a + b\hat y + \varepsilon` by least squares, with the usual t
    intervals.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr.calibration import regression_calibration
    >>> rng = np.random.default_rng(0)
    >>> pred = rng.normal(size=200)
    >>> round(regression_calibration(2 * pred, pred).slope, 6)
    2.0
    """
    owner = "regression_calibration"
    check_same_rows(prediction, y, ("prediction", "y"))
    arr = np.asarray(y)
    n = arr.shape[0] if arr.ndim else 0
    target = _check_vector(y, "y", n, owner=owner)
    pred = _check_vector(prediction, "prediction", n, owner=owner)
    k = _check_groups(n_groups, n, owner=owner)
    check_fraction(alpha, "alpha", owner=owner)
    if n < 3 or constant_columns(pred[:, None]).size:
        raise ValueError(
            f"prediction must vary (beyond rounding) over at least 3 samples for "
            f"a calibration line; got {np.unique(pred).size} distinct value(s) "
            f"over {n}."
        )
    # the line on unit scales (powers of 2: exact), so that values of 1e-300
    # or 1e300 neither underflow nor overflow in the squares
    sy, sp = (float(magnitude(v[:, None])[0]) for v in (target, pred))
    tu, pu = target / sy, pred / sp
    X = np.column_stack([np.ones(n), pu])
    coef, *_ = np.linalg.lstsq(X, tu, rcond=None)
    resid = tu - X @ coef
    sigma2 = float(resid @ resid) / (n - 2)
    se = np.sqrt(np.diag(np.linalg.inv(X.T @ X)) * sigma2)
    units = np.array([sy, sy / sp])
    coef, se = coef * units, se * units
    t = stats.t.ppf(1 - alpha / 2, n - 2)
    group = _group_index(pred, k)
    rows = []
    for g in range(k):
        vals = tu[group == g]
        half = (
            stats.t.ppf(1 - alpha / 2, vals.size - 1)
            * vals.std(ddof=1)
            / np.sqrt(vals.size)
        )
        mean = vals.mean()
        rows.append(
            (vals.size, float(pu[group == g].mean()), mean, mean - half, mean + half)
        )
    groups = pd.DataFrame(
        rows, columns=["n", "predicted", "observed", "lower", "upper"]
    )
    groups["predicted"] *= sp
    groups[["observed", "lower", "upper"]] *= sy
    notes = [
        "Slope and intercept: least squares of the observed on the predicted "
        "values (1 and 0 are ideal), t intervals.",
        f"Mean observed value per group with its {100 * (1 - alpha):g}% t interval.",
    ]
    return _calibration(
        family="gaussian",
        predicted=pred,
        observed=np.full(n, np.nan),
        groups=groups,
        slope=(float(coef[1]), coef[1] - t * se[1], coef[1] + t * se[1]),
        intercept=(float(coef[0]), coef[0] - t * se[0], coef[0] + t * se[0]),
        alpha=alpha,
        notes=notes,
    )


# ------------------------------------------------------------------ models


def _outcome(model: Any, X: Any, y: Any) -> Any:
    """``y``, its rows checked against ``X``'s, or the formula's outcome."""
    formula = getattr(model, "formula", None)
    if y is not None:
        check_same_rows(X, y)
        return y
    if formula is None:
        raise ValueError(
            "y is required (or a model with formula=, whose data hold it)."
        )
    from vcpcr._formula import formula_outcome

    return formula_outcome(formula, X)


def _folds(
    cv: Any,
    labels: NDArray[Any] | None,
    n: int,
    random_state: Any,
    owner: str,
    strata: NDArray[Any] | None = None,
) -> list[Any]:
    """Return the (train, test) folds of ``cv``: an int gives shuffled K folds.

    Stratified on ``labels`` (the event indicator or the class), or, for a
    stratified Cox model (``strata``), on the (stratum, event) cells when
    some cell has ``cv`` rows (:func:`vcpcr._input.strata_cells`: every
    training fold then keeps an event of each stratum with 2 or more).
    """
    check_cv_param(cv, n, owner)
    rows = np.zeros((n, 1))
    if isinstance(cv, numbers.Integral):
        k = int(cv)
        if labels is None:
            return list(KFold(k, shuffle=True, random_state=random_state).split(rows))
        splitter = StratifiedKFold(k, shuffle=True, random_state=random_state)
        cells = None if strata is None else strata_cells(strata, labels > 0, k)
        if cells is not None:
            return split_cells(splitter, rows, cells)
        return list(splitter.split(rows, labels))
    split_y = labels if labels is not None else np.zeros(n)
    return list(check_cv(cv).split(rows, split_y))


def _family(model: Any, owner: str) -> Family:
    """Return the family of a VCPCR or VCPCRCV (its resolved ``family``)."""
    family = known_family(getattr(model, "family", None))
    if family is None:
        raise ValueError(
            f"The 'model' parameter of {owner} must be a VCPCR or VCPCRCV (an "
            f"estimator with family 'gaussian', 'binomial' or 'cox', or a "
            f"vcpcr._families.Family object); got {type(model).__name__} with "
            f"family={getattr(model, 'family', None)!r}."
        )
    return family


def _classifier(family: Family) -> bool:
    """Whether the family's predictions are class probabilities (binomial)."""
    return family.estimator_type == "classifier"


def _predict(
    model: Any, X: Any, family: Family, horizon: float | None
) -> NDArray[np.float64]:
    if family.survival:
        surv = model.predict_survival_function(X, return_array=True, times=[horizon])
        return np.asarray(surv, dtype=np.float64)[:, 0]
    if _classifier(family):
        return np.asarray(model.predict_proba(X), dtype=np.float64)[:, 1]
    return np.asarray(model.predict(X), dtype=np.float64)


def _out_of_fold(
    model: Any,
    X: Any,
    y: Any,
    target: Any,
    family: Family,
    horizon: float | None,
    cv: Any,
    random_state: Any,
    owner: str,
) -> NDArray[np.float64]:
    labels = None
    strata = None
    if family.survival:
        labels = check_survival(target)[1]
        strata = model_strata(model, X, y, owner)
    elif _classifier(family):
        labels = np.asarray(target)
    n = len(target)
    S = None if strata is None else strata[0]
    folds = check_split(_folds(cv, labels, n, random_state, owner, S), n, owner)
    if strata is not None and labels is not None:
        check_model_fold_strata(model, strata, labels > 0, folds, owner)
    out = np.full(n, np.nan)
    for train, test in folds:
        fold = clone(model).fit(take(X, train), take(y, train))
        out[test] = _predict(fold, take(X, test), family, horizon)
    if np.isnan(out).any():
        raise ValueError(
            f"The folds of cv={cv!r} left {int(np.isnan(out).sum())} samples without "
            f"a held-out prediction; use a splitter whose test folds cover every row."
        )
    return out


def cross_val_predict_survival(
    model: Any,
    X: Any,
    y: Any = None,
    *,
    horizon: float,
    cv: Any = 5,
    random_state: Any = 0,
) -> NDArray[np.float64]:
    """Out-of-fold predicted survival at ``horizon`` of a Cox ``VCPCR`` or ``VCPCRCV``.

    Also of any survival estimator without a ``family`` whose
    ``predict_survival_function(X, return_array=True, times=...)`` returns
    an array, such as the clinical-only
    :class:`vcpcr.validation.ClinicalCox`: with the same ``cv`` and
    ``random_state``, both models are predicted on the same folds (the
    decision curve of the clinical model beside the signature's).

    An unfitted clone of ``model`` is fitted on each training fold and
    predicts the survival of its held-out fold at ``horizon`` (as
    scikit-learn's ``cross_val_predict``). A ``VCPCRCV`` is re-tuned inside
    every training fold (nested cross-validation: no row's prediction used
    it for tuning).

    Parameters
    ----------
    model : VCPCR, VCPCRCV or survival estimator
        A model with ``family="cox"``, or one without ``family`` that has
        ``predict_survival_function`` (fitted or not: its parameters are
        used).
    X : array-like or DataFrame of shape (n_samples, n_features)
        The data (with the covariates and strata the model names).
    y : array-like of shape (n_samples, 2), optional
        The survival outcome; omitted when the model has a formula.
    horizon : float
        Time at which survival is predicted.
    cv : int or cross-validation splitter, default=5
        An int gives shuffled folds stratified on the event indicator; for
        a stratified model, on the stratum and the event indicator (the
        (stratum, event) cells), so that every training fold keeps events of
        every stratum. A training fold that keeps too few (a ``VCPCR`` needs
        1 of every stratum, a ``VCPCRCV``, which re-tunes by its own CV, 2)
        is an error before any fit.
    random_state : int, default=0
        Seed of the shuffled folds.

    Returns
    -------
    ndarray of shape (n_samples,)
        Each sample's held-out predicted survival at ``horizon``.

    Raises
    ------
    ValueError
        If the model is not a Cox model or the folds do not cover every row.

    See Also
    --------
    survival_calibration : Calibration of these predictions.
    """
    owner = "cross_val_predict_survival"
    other = getattr(model, "family", None) is None and callable(
        getattr(model, "predict_survival_function", None)
    )
    family = FAMILIES["cox"] if other else _family(model, owner)
    if not family.survival:
        raise ValueError(
            f"{owner} needs a model with family='cox'; got {family.name!r}."
        )
    check_scalar(
        horizon, "horizon", numbers.Real, owner=owner, min_val=0.0, include_min=False
    )
    target = _outcome(model, X, y)
    return _out_of_fold(
        model, X, y, target, family, float(horizon), cv, random_state, owner
    )


def cross_val_calibration(
    model: Any,
    X: Any,
    y: Any = None,
    *,
    horizon: float | None = None,
    cv: Any = 5,
    n_groups: int | None = None,
    random_state: Any = 0,
    alpha: float = 0.05,
) -> CalibrationResult:
    """Calibration of a ``VCPCR`` or ``VCPCRCV``: out-of-fold, or on new data.

    Parameters
    ----------
    model : VCPCR or VCPCRCV
        With ``cv``, its parameters (each training fold fits a clone; a
        ``VCPCRCV`` is re-tuned in each). With ``cv=None``, a fitted model
        whose own predictions on ``X`` are calibrated: for data it was not
        fitted to (on its training data they are optimistic).
    X : array-like or DataFrame of shape (n_samples, n_features)
        The data.
    y : array-like, optional
        The outcome; omitted when the model has a formula.
    horizon : float, optional
        Time of the comparison (cox only; required there).
    cv : int, cross-validation splitter or None, default=5
        An int gives shuffled folds, stratified on the event indicator (cox;
        for a stratified model on the stratum and the event indicator, as
        :func:`cross_val_predict_survival`, whose check of every stratum's
        events in the training folds runs before any fit) or the class
        (binomial). With folds, the rows that a
        ``missing="drop"`` model drops are dropped before the folds are
        made (with its warning).
    n_groups : int, optional
        Groups of the predictions (default 5 for cox, 10 otherwise).
    random_state : int, default=0
        Seed of the shuffled folds.
    alpha : float, default=0.05
        Level of the confidence intervals.

    Returns
    -------
    CalibrationResult
        From :func:`survival_calibration`, :func:`binary_calibration` or
        :func:`regression_calibration`.

    Raises
    ------
    ValueError
        If ``horizon`` is missing for a Cox model, or given for another.

    See Also
    --------
    survival_calibration, binary_calibration, regression_calibration
    """
    owner = "cross_val_calibration"
    family = _family(model, owner)
    if (horizon is None) == family.survival:
        need = (
            f"requires a horizon for family={family.name!r}: the time at which "
            f"predicted and observed survival are compared, e.g. horizon=5 (years)"
            if family.survival
            else f"takes no horizon for family={family.name!r}; drop it"
        )
        raise ValueError(f"{owner} {need}.")
    if cv is not None and hasattr(model, "_fit_input"):
        # fit's checks of X and y, once, before the folds split them (a bad
        # y met scikit-learn's splitter first); with missing="drop" the
        # incomplete rows are dropped here (with fit's warning): a test
        # fold's row with a missing value cannot be predicted.
        rows = clone(model)._fit_input(X, y, owner=owner).rows
        if rows is not None:
            X, y = take(X, rows), take(y, rows)
    target = _outcome(model, X, y)
    if cv is None:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(model)
        pred = _predict(model, X, family, horizon)
    else:
        pred = _out_of_fold(
            model, X, y, target, family, horizon, cv, random_state, owner
        )
    groups = n_groups if n_groups is not None else (5 if family.survival else 10)
    if horizon is not None:  # a survival family (checked above)
        return survival_calibration(target, pred, horizon, n_groups=groups, alpha=alpha)
    if _classifier(family):
        classes = getattr(model, "classes_", None)
        labels = np.asarray(target)
        if classes is None:
            classes = np.unique(labels)
        return binary_calibration(
            labels == classes[1], pred, n_groups=groups, alpha=alpha
        )
    return regression_calibration(
        np.asarray(target, dtype=np.float64).reshape(-1),
        pred,
        n_groups=groups,
        alpha=alpha,
    )
