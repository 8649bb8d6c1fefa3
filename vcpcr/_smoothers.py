"""Smoothed calibration curves: observed risk as a smooth function of predicted risk.

Two smoothers, each returning the smoothed observed value at every sample's
prediction (:mod:`vcpcr.calibration` turns them into ICI, E50 and E90):

- :func:`survival_smoother`: the flexible parametric survival model that
  lifelines' ``survival_probability_calibration`` fits (Crowther, Royston &
  Clements' spline model, ``CRCSplineFitter(n_baseline_knots=3,
  penalizer=1e-6)``) of the outcome on the complementary log-log of the
  predicted risk at the horizon; written here from its likelihood, with the
  same knots, parametrization, scaling and penalty, so that the two agree to
  the optimizer's tolerance.
- :func:`binary_smoother`: a locally weighted linear regression (lowess,
  statsmodels, without robustness iterations) of the 0/1 outcome on the
  predicted probability, as Austin & Steyerberg (2019).

numpy/scipy/statsmodels only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize

__all__ = ["SplineFit", "binary_smoother", "cloglog", "survival_smoother"]

#: lifelines' penalty of the smoother (``penalizer=1e-6``, on scaled parameters).
_PENALTY = 1e-6
#: lifelines' floor of the hazard before its log.
_HAZARD_FLOOR = 1e-20


def cloglog(risk: NDArray[np.float64]) -> NDArray[np.float64]:
    """Complementary log-log ``log(-log(1 - risk))`` of probabilities in (0, 1)."""
    return np.asarray(np.log(-np.log1p(-risk)), dtype=np.float64)


class SplineFit(NamedTuple):
    """The smoother's fitted model.

    ``params`` are ``(beta_x, beta_0, gamma_0, gamma_1, gamma_2)`` on the raw
    scale of the complementary log-log ``x`` (lifelines' ``params_`` order);
    ``knots`` on log time; ``converged``: the gradient's largest entry
    is below 1e-5; ``floored``: events whose hazard is at the floor (a
    degenerate fit when positive); ``start``: which fit was kept
    (:func:`survival_smoother`); ``valid``: no event at the floor.
    """

    params: NDArray[np.float64]
    knots: NDArray[np.float64]
    converged: bool
    floored: int = 0
    start: str = "lifelines"
    valid: bool = True

    def risk(self, x: NDArray[np.float64], horizon: float) -> NDArray[np.float64]:
        """Smoothed observed risk ``1 - S(horizon | x)`` at predictions ``x``.

        The cumulative hazard is taken non-decreasing in time: its running
        maximum over the shifted log time ``u``. The fitted spline in ``u``
        may turn down where no event lies (it is fitted where events are,
        and its hazard there is positive), which no cumulative hazard can:
        on a cohort of 120 rows, six predicted risks of 1.0 at the horizon
        were smoothed to an observed risk of 1e-5 (beside 0.90 at 0.99)
        and added 0.05 to the ICI. Where ``log H`` increases (every valid
        fit below the first knot, where it is linear with slope ``g1 > 0``)
        this changes nothing.
        """
        b, b0 = self.params[:2]
        u = np.atleast_1d(np.log(horizon) - (b * x + b0))
        k0 = self.knots[0]
        grid = np.linspace(k0, max(float(u.max()), k0), 1025)
        peak = np.maximum.accumulate(self._log_hazard(grid))
        below = np.searchsorted(grid, u, side="right") - 1
        log_h = self._log_hazard(u)
        log_h = np.where(below >= 0, np.maximum(log_h, peak[below]), log_h)
        return -np.expm1(-np.exp(log_h)).reshape(np.shape(x))

    def _log_hazard(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        """Log cumulative hazard at shifted log times ``u``."""
        g0, g1, g2 = self.params[2:]
        return np.asarray(g0 + g1 * u + g2 * _basis(u, self.knots)[0])


def _basis(
    x: NDArray[np.float64], knots: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Restricted cubic spline term at the middle knot, its first two derivatives."""
    k0, k1, k2 = knots
    lam = (k2 - k1) / (k2 - k0)
    r = [np.maximum(x - k, 0.0) for k in (k1, k0, k2)]
    w = (1.0, -lam, -(1.0 - lam))
    value = sum(c * v**3 for c, v in zip(w, r, strict=True))
    first = sum(3.0 * c * v**2 for c, v in zip(w, r, strict=True))
    second = sum(6.0 * c * v for c, v in zip(w, r, strict=True))
    return np.asarray(value), np.asarray(first), np.asarray(second)


def _objective(
    theta: NDArray[np.float64],
    xs: NDArray[np.float64],
    logt: NDArray[np.float64],
    event: NDArray[np.float64],
    knots: NDArray[np.float64],
) -> tuple[float, NDArray[np.float64]]:
    """Mean negative log-likelihood plus lifelines' ridge penalty, and its gradient.

    ``log H(t | x) = g0 + g1 u + g2 B(u)`` with ``u = log t - (b xs + b0)``;
    the hazard is ``H (g1 + g2 B'(u)) / t``. ``b`` multiplies the scaled
    ``xs`` (lifelines divides each column by its standard deviation); every
    parameter but ``b0`` is penalized by ``penalty / 2 * theta**2``.
    """
    b, b0, g0, g1, g2 = theta
    u = logt - (b * xs + b0)
    B, dB, d2B = _basis(u, knots)
    log_H = g0 + g1 * u + g2 * B
    H = np.exp(log_H)
    slope = g1 + g2 * dB
    hazard = H * slope / np.exp(logt)
    floored = hazard <= _HAZARD_FLOOR
    safe = np.where(floored, 1.0, slope)
    log_h = np.where(
        floored, np.log(_HAZARD_FLOOR), log_H + np.log(np.abs(safe)) - logt
    )
    n = xs.size
    ll = float(np.sum(event * log_h - H)) / n
    e = np.where(floored, 0.0, event)  # a floored log hazard is a constant
    d_g0 = e - H
    d_g1 = e * (u + 1.0 / safe) - H * u
    d_g2 = e * (B + dB / safe) - H * B
    d_u = e * (slope + g2 * d2B / safe) - H * slope
    grad_ll = (
        np.array(
            [
                np.sum(-d_u * xs),
                np.sum(-d_u),
                np.sum(d_g0),
                np.sum(d_g1),
                np.sum(d_g2),
            ]
        )
        / n
    )
    pen = np.array([1.0, 0.0, 1.0, 1.0, 1.0])
    value = -ll + 0.5 * _PENALTY * float(np.sum(pen * theta**2))
    return value, -grad_ll + _PENALTY * pen * theta


def _floored_events(theta: NDArray[np.float64], *args: NDArray[np.float64]) -> int:
    """Events whose fitted hazard is at lifelines' floor (or negative) at ``theta``.

    The floor turns the infeasible region of the spline model (a cumulative
    hazard decreasing in time, where the hazard is negative) into a plateau
    on which an event's log hazard is the constant ``log(1e-20)``: a fit with
    such events describes no survival distribution.
    """
    xs, logt, event, knots = args
    b, b0, g0, g1, g2 = theta
    u = logt - (b * xs + b0)
    B, dB, _ = _basis(u, knots)
    with np.errstate(over="ignore", invalid="ignore"):
        hazard = np.exp(g0 + g1 * u + g2 * B) * (g1 + g2 * dB) / np.exp(logt)
    return int(np.sum((event > 0) & ~(hazard > _HAZARD_FLOOR)))


def _minimize(
    start: NDArray[np.float64],
    args: tuple[NDArray[np.float64], ...],
    free: NDArray[np.bool_] | None = None,
) -> NDArray[np.float64]:
    """BFGS from ``start`` over the ``free`` parameters (default: all).

    Polished by L-BFGS-B where BFGS lost precision.
    """
    mask = np.ones(start.size, dtype=bool) if free is None else free

    def objective(v: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        theta = start.copy()
        theta[mask] = v
        value, grad = _objective(theta, *args)
        return value, grad[mask]

    # a trial step of the line search may overflow exp(): an infinite
    # objective, which the search rejects
    with np.errstate(over="ignore", invalid="ignore"):
        fit = minimize(
            objective, start[mask], jac=True, method="BFGS", options={"gtol": 1e-9}
        )
        if not fit.success:  # polish from where BFGS stopped (precision loss)
            fit = minimize(objective, fit.x, jac=True, method="L-BFGS-B")
    theta = start.copy()
    theta[mask] = fit.x
    return theta


def _positive_times(
    x: NDArray[np.float64], time: NDArray[np.float64], event: NDArray[np.bool_]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """Return the rows of the smoother's likelihood, every follow-up time above 0.

    The likelihood is in ``log t``. A row censored at time 0 adds exactly
    nothing to it (``log S(0) = 0``, and so nothing to its gradient): it is
    left out. An event at time 0 has no density under the model (its log
    hazard is infinite): it is placed at half the first positive follow-up
    time, before every other row, so that it still counts as an event.
    Before, ``log 0 = -inf`` made the objective and its gradient NaN at every
    point: the optimizer stopped at its start, a flat curve (13 numpy
    ``RuntimeWarning`` s).
    """
    zero = time <= 0
    if not zero.any():
        return x, time, event
    keep = ~zero | event
    first = float(time[~zero].min()) if (~zero).any() else 1.0
    return x[keep], np.where(zero, 0.5 * first, time)[keep], event[keep]


def survival_smoother(
    x: NDArray[np.float64],
    time: NDArray[np.float64],
    event: NDArray[np.bool_],
) -> SplineFit:
    """Fit lifelines' calibration smoother of ``(time, event)`` on ``x``.

    ``x`` is the complementary log-log of the predicted risk at the horizon.
    Knots at the 5th, 50th and 95th percentiles of the log event times.

    Rows with follow-up time 0 are handled by :func:`_positive_times`
    (censored ones left out, events at half the first positive time).

    A fit is *valid* when its objective and gradient are finite and no
    event's hazard is at the floor. The fits tried:

    1. ``"lifelines"``: from lifelines' start ``(0, 0, 0, 2, 0)``, so that the
       result is lifelines' where lifelines' is valid;
    2. ``"weibull"``: from the optimum of the nested Weibull model (the
       spline coefficient held at 0, started at the exponential model's
       maximum likelihood), kept if valid and fit 1 is not valid or has a
       higher objective;
    3. ``"weibull only"``: that Weibull model itself, when neither spline fit
       is valid (a documented fallback: a smoother with one fewer degree of
       freedom, valid whenever its ``g1 > 0``). If it is not valid either,
       fit 1 is returned with ``valid=False``.

    From lifelines' start, follow-up times in the tens or hundreds (``t**2``
    in the thousands) often lead the optimizer onto the plateau of the
    hazard floor: every event's log hazard ``log(1e-20)`` and a smoothed
    risk of 0 for every sample (lifelines' ``survival_probability_calibration``
    returns that fit, without a warning).
    """
    x, time, event = _positive_times(x, time, event)
    logt = np.log(time)
    knots = np.percentile(logt[event], np.linspace(5, 95, 3))
    sd = float(np.std(x, ddof=1))
    sd = 1.0 if not sd > 1e-8 else sd
    xs = x / sd
    args = (xs, logt, event.astype(np.float64), knots)

    def valid(theta: NDArray[np.float64]) -> bool:
        value, grad = _objective(theta, *args)
        finite = bool(np.isfinite(value) and np.isfinite(grad).all())
        return finite and _floored_events(theta, *args) == 0

    def value(theta: NDArray[np.float64]) -> float:
        return _objective(theta, *args)[0]

    exponential = np.log(max(float(event.sum()), 1.0) / float(time.sum()))
    weibull = _minimize(
        np.array([0.0, 0.0, exponential, 1.0, 0.0]),
        args,
        free=np.array([True, True, True, True, False]),
    )
    start, theta = "lifelines", _minimize(np.array([0.0, 0.0, 0.0, 2.0, 0.0]), args)
    spline = _minimize(weibull, args)
    if valid(spline) and not (valid(theta) and value(theta) <= value(spline) + 1e-10):
        start, theta = "weibull", spline
    if not valid(theta) and valid(weibull):
        start, theta = "weibull only", weibull
    grad = _objective(theta, *args)[1]
    if start == "weibull only":
        grad = grad[:4]  # the spline coefficient held at 0
    ok = valid(theta)
    params = theta.copy()
    params[0] = theta[0] / sd
    return SplineFit(
        params,
        knots,
        bool(np.max(np.abs(grad)) < 1e-5),
        _floored_events(theta, *args),
        start,
        ok,
    )


def binary_smoother(
    probability: NDArray[np.float64], y: NDArray[np.float64], frac: float
) -> NDArray[np.float64]:
    """Lowess of 0/1 ``y`` on ``probability`` at each sample, clipped to [0, 1].

    statsmodels' ``lowess`` (tricube weights, local linear fits on the
    ``frac`` nearest neighbours) without its robustness iterations, which
    would down-weight the minority class of a binary outcome. Where a
    sample's neighbours all share its probability (hard 0/1 predictions),
    the lowess window has width 0 and no fit: there the smoothed value is
    the window's limit, the mean of ``y`` at that probability.
    """
    from statsmodels.nonparametric.smoothers_lowess import lowess

    with np.errstate(invalid="ignore", divide="ignore"):
        fitted = lowess(y, probability, frac=frac, it=0, return_sorted=False)
    fitted = np.asarray(fitted, dtype=np.float64)
    tied = ~np.isfinite(fitted)
    if tied.any():
        _, inverse = np.unique(probability, return_inverse=True)
        means = np.bincount(inverse, y) / np.bincount(inverse)
        fitted[tied] = means[inverse[tied]]
    return np.clip(fitted, 0.0, 1.0)
