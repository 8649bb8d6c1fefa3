"""Minimum sample size to develop or to validate a prediction model (Riley et al.)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import special, stats
from scipy.optimize import brentq

from vcpcr._checks import (
    check_choice,
    check_fraction,
    check_random_state,
    check_scalar,
)
from vcpcr._result import Result

OUTCOMES = ("binary", "survival", "continuous")
_Z = stats.norm.ppf(0.975)
_MMOE = 1.1  # continuous outcomes: residual SD and intercept within 10 %
_MAX_N = 10**9  # the largest sample size searched
Row = tuple[str, int | None, int | None]  # criterion, n, events
Interval = tuple[float, float, float]  # low, estimate, high
_TUNING_NOTE = (
    "Tuning over genes (clusters, penalties, selection) spends more degrees of "
    "freedom than the final parameter count, so for a tuned signature this is "
    "a lower bound."
)


@dataclass(frozen=True, eq=False, repr=False)
class SampleSizeResult(Result):
    """Riley et al.'s criteria and the minimum sample size they imply.

    Attributes
    ----------
    outcome : str
        ``"binary"``, ``"survival"`` or ``"continuous"``.
    parameters : int or None
        The number of candidate predictor parameters (development; None for
        an external validation, whose model is fixed).
    criteria : pandas.DataFrame
        One row per criterion: ``criterion`` (what it asks), ``n`` (the
        smallest sample size meeting it; ``<NA>`` for the survival risk's
        precision, which is reported as an interval), ``events`` (binary and
        survival); for a validation also ``se``, the standard error each
        criterion targets (of ln(O/E) for O/E).
    n_required : int
        The largest ``n`` over the criteria: the minimum sample size.
    events : int or None
        The events expected at ``n_required`` (binary and survival).
    interval : tuple of float or None
        Survival: the 95 % interval of the overall risk by ``timepoint`` at
        ``n_required`` (low, estimate, high); continuous: that of the
        intercept; binary: None.
    n_available : int or None
        The sample size at hand, if given.
    note : str
        What the count does not cover (tuning, for a development; the
        criteria not covered, for a validation).
    purpose : str
        ``"development"`` (:func:`sample_size`) or ``"validation"``
        (:func:`validation_sample_size`).
    simulation : dict or None
        Survival validation with a simulated population: what was simulated
        and read from it (``n_population``, the baseline hazard's scale and
        shape, the linear predictor's SD, the population's Harrell's C,
        calibration slope, risk and censoring by the time point, the
        fraction of rows with an observed event, the fraction treated at
        ``threshold``); None otherwise.
    """

    outcome: str
    parameters: int | None
    criteria: pd.DataFrame
    n_required: int
    events: int | None
    interval: tuple[float, float, float] | None
    n_available: int | None
    note: str = _TUNING_NOTE
    purpose: str = "development"
    simulation: dict[str, float] | None = None

    @property
    def adequate(self) -> bool | None:
        """Whether ``n_available`` meets ``n_required`` (None without it)."""
        if self.n_available is None:
            return None
        return self.n_available >= self.n_required

    def summary(self) -> str:
        """Return a few lines: the criteria, the minimum n and the verdict."""
        what = (
            f"{self.parameters} parameters"
            if self.purpose == "development"
            else "external validation"
        )
        lines = [
            f"Minimum sample size ({self.outcome}, {what}): {self.n_required}"
            + ("" if self.events is None else f" with {self.events} events"),
            self.criteria.to_string(index=False),
        ]
        if self.interval is not None:
            what = "overall risk" if self.outcome == "survival" else "intercept"
            low, mid, high = self.interval
            lines.append(
                f"95 % interval of the {what} at n = {self.n_required}: "
                f"{mid:.3g} ({low:.3g}, {high:.3g})"
            )
        if self.simulation is not None:
            lines.append(
                "Simulated population: "
                + ", ".join(f"{k} = {v:.4g}" for k, v in self.simulation.items())
            )
        if self.n_available is not None:
            verdict = "meets" if self.adequate else "does not meet"
            lines.append(f"n_available = {self.n_available} {verdict} it.")
        lines.append(self.note)
        return "\n".join(lines)

    def __str__(self) -> str:
        """Return :meth:`summary` (what ``print(result)`` shows)."""
        return self.summary()


def _smallest_n(ok: Any, start: int) -> int:
    """Return the smallest ``n >= start`` with ``ok(n)`` (``ok`` monotone in n)."""
    high = start
    while not ok(high):
        high *= 2
        if high > _MAX_N:
            raise ValueError(
                f"No sample size up to {_MAX_N:.0e} meets a criterion; check the "
                f"anticipated values (an intercept near 0 makes a margin "
                f"relative to it unattainable: give the outcome's mean on a "
                f"scale where it is not 0)."
            )
    low = start
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if ok(mid) else (mid + 1, high)
    return low


def _ceil(x: float) -> int:
    """Round up, ignoring float noise: 494 * 0.2 * 2.5 = 247.00000000000003 is 247."""
    return math.ceil(round(x, 9))


def _shrinkage_n(parameters: int, r2cs: float, shrinkage: float) -> int:
    """Criterion 1 (binary, survival): n = p / ((S - 1) ln(1 - R2cs / S))."""
    return _ceil(parameters / ((shrinkage - 1) * math.log(1 - r2cs / shrinkage)))


def _check_positive(value: Any, name: str, *, owner: str) -> float:
    check_scalar(value, name, numbers.Real, owner=owner, min_val=0.0, include_min=False)
    return float(value)


def _check_r2(r2: Any, max_r2: float, *, owner: str) -> float:
    _check_positive(r2, "r2", owner=owner)
    if r2 >= max_r2:
        raise ValueError(
            f"The 'r2' parameter of {owner} must be below {max_r2:.4g}, the "
            f"largest R2 this outcome allows (Cox-Snell's maximum for binary and "
            f"survival outcomes). Got {r2!r} instead."
        )
    return float(r2)


def _events_criteria(
    parameters: int,
    r2: float,
    events_per_row: float,
    null_loglik_per_row: float,
    *,
    shrinkage: float,
    max_optimism: float,
    owner: str,
) -> list[Row]:
    """Criteria 1 and 2 of a binary or survival outcome, with their events."""
    max_r2 = 1.0 - math.exp(2.0 * null_loglik_per_row)
    r2 = _check_r2(r2, min(max_r2, shrinkage), owner=owner)
    s2 = r2 / (r2 + max_optimism * max_r2)
    if r2 >= s2:
        raise ValueError(
            f"The 'max_optimism' parameter of {owner} is too large for r2={r2}: "
            f"the shrinkage it implies ({s2:.4g}) is not above r2. Use a smaller "
            f"max_optimism (e.g. 0.05)."
        )
    n1 = _shrinkage_n(parameters, r2, shrinkage)
    n2 = _shrinkage_n(parameters, r2, s2)
    return [
        (f"shrinkage >= {shrinkage}", n1, _ceil(n1 * events_per_row)),
        (
            f"optimism in Nagelkerke R2 <= {max_optimism} (shrinkage {s2:.3f})",
            n2,
            _ceil(n2 * events_per_row),
        ),
    ]


def _binary(
    p: int, r2: Any, given: dict[str, Any], **kw: Any
) -> tuple[list[Row], float, None]:
    """Riley et al. (2019, Part II), binary outcome: criteria 1-3."""
    prevalence, margin = given["prevalence"], kw.pop("margin")
    check_fraction(prevalence, "prevalence", owner=kw["owner"])
    pi = float(prevalence)
    null = pi * math.log(pi) + (1 - pi) * math.log(1 - pi)
    rows = _events_criteria(p, r2, pi, null, **kw)
    n3 = _ceil((1.96 / margin) ** 2 * pi * (1 - pi))
    rows.append((f"overall risk within +/- {margin}", n3, _ceil(n3 * pi)))
    return rows, pi, None


def _survival(
    p: int, r2: Any, given: dict[str, Any], **kw: Any
) -> tuple[list[Row], float, Interval]:
    """Riley et al. (2019, Part II), survival: criteria 1-2, the risk's interval."""
    kw.pop("margin")
    owner = kw["owner"]
    lam = _check_positive(given["rate"], "rate", owner=owner)
    t = _check_positive(given["timepoint"], "timepoint", owner=owner)
    follow_up = _check_positive(given["mean_follow_up"], "mean_follow_up", owner=owner)
    per_row = lam * follow_up  # events per row
    rows = _events_criteria(p, r2, per_row, per_row * math.log(per_row) - per_row, **kw)
    n = max(n for _, n, _ in rows if n is not None)
    half = 1.96 * math.sqrt(lam / (n * follow_up))  # the rate's, over n * follow_up
    low, mid, high = (1 - math.exp(-r * t) for r in (lam - half, lam, lam + half))
    rows.append((f"overall risk by time {t:g} (interval at n)", None, None))
    return rows, per_row, (low, mid, high)


def _continuous(
    p: int, r2: Any, given: dict[str, Any], **kw: Any
) -> tuple[list[Row], None, Interval]:
    """Riley et al. (2019, Part I), criteria 1-4, and the intercept's interval."""
    owner, shrinkage, max_optimism = kw["owner"], kw["shrinkage"], kw["max_optimism"]
    intercept = given["intercept"]
    check_scalar(intercept, "intercept", numbers.Real, owner=owner)
    if intercept == 0:
        raise ValueError(
            f"The 'intercept' parameter of {owner} must be non-zero (its "
            f"margin of error is relative to it). Got {intercept!r} instead; "
            f"give the anticipated mean outcome."
        )
    r2 = _check_r2(r2, 1.0, owner=owner)
    sd = _check_positive(given["sd"], "sd", owner=owner)
    residual_sd = math.sqrt((1.0 - r2) * sd**2)

    def apparent(n: int) -> float:
        return 1.0 - (1.0 - r2) * (n - p - 1) / (n - 1)

    def shrunk(n: int) -> bool:  # S = 1 + (p - 2) / (n ln(1 - R2_app))
        return 1.0 + (p - 2) / (n * math.log(1.0 - apparent(n))) >= shrinkage

    def sd_precise(n: int) -> bool:
        df = n - p - 1
        return math.sqrt(df / stats.chi2.ppf(0.025, df)) <= _MMOE

    def half_width(n: int) -> float:
        return float(stats.t.ppf(0.975, n - p - 1)) * residual_sd / math.sqrt(n)

    def intercept_precise(n: int) -> bool:
        return (abs(intercept) + half_width(n)) / abs(intercept) <= _MMOE

    n1 = _smallest_n(shrunk, p + 2)
    n2 = _ceil(1.0 + p * (1.0 - r2) / max_optimism)
    n3 = _smallest_n(sd_precise, p + 2)
    n4 = _smallest_n(intercept_precise, max(n1, n2, n3))
    h = half_width(n4)
    rows: list[Row] = [
        (f"shrinkage >= {shrinkage}", n1, None),
        (f"optimism in adjusted R2 <= {max_optimism}", n2, None),
        (f"residual SD within {_MMOE:g} x", n3, None),
        (f"intercept within {_MMOE:g} x (n >= criteria 1-3's)", n4, None),
    ]
    return rows, None, (intercept - h, intercept, intercept + h)


_ONLY = {
    "prevalence": ("binary",),
    "rate": ("survival",),
    "timepoint": ("survival",),
    "mean_follow_up": ("survival",),
    "intercept": ("continuous",),
    "sd": ("continuous",),
}
_WHAT = {
    "prevalence": "the anticipated outcome proportion, in (0, 1)",
    "rate": "the anticipated event rate per unit of time, > 0",
    "timepoint": "the time at which the overall risk is estimated, > 0",
    "mean_follow_up": "the anticipated mean follow-up time, > 0",
    "intercept": "the anticipated mean outcome (non-zero)",
    "sd": "the anticipated standard deviation of the outcome, > 0",
}


def _check_outcome_args(outcome: str, given: dict[str, Any], *, owner: str) -> None:
    """Refuse an argument of another outcome; require this outcome's own."""
    for name, outcomes in _ONLY.items():
        value = given[name]
        if value is not None and outcome not in outcomes:
            raise ValueError(
                f"The {name!r} parameter of {owner} applies to outcome="
                f"{outcomes[0]!r} only. Got {name}={value!r} with "
                f"outcome={outcome!r}; drop it."
            )
        if value is None and outcome in outcomes:
            raise ValueError(
                f"The {name!r} parameter of {owner} is required for "
                f"outcome={outcome!r}: {_WHAT[name]}."
            )


def sample_size(
    outcome: str,
    *,
    parameters: int,
    r2: float | None = None,
    prevalence: float | None = None,
    rate: float | None = None,
    timepoint: float | None = None,
    mean_follow_up: float | None = None,
    intercept: float | None = None,
    sd: float | None = None,
    shrinkage: float = 0.9,
    max_optimism: float = 0.05,
    margin: float = 0.05,
    n_available: int | None = None,
) -> SampleSizeResult:
    r"""Minimum sample size to develop a prediction model (Riley et al.).

    .. math::

        n_1 = \frac{p}{(S - 1)\ln(1 - R^2_{CS} / S)}, \qquad
        S_2 = \frac{R^2_{CS}}{R^2_{CS} + \delta\, \max R^2_{CS}}, \qquad
        \max R^2_{CS} = 1 - e^{2 \ln L_\mathrm{null} / n}

    Criterion 1 keeps the expected uniform shrinkage of the predictor
    effects at least :math:`S` (``shrinkage``); criterion 2 keeps the
    optimism in Nagelkerke's :math:`R^2` at most :math:`\delta`
    (``max_optimism``), the :math:`n_1` formula at :math:`S_2`; criterion 3
    estimates the overall risk precisely. Binary outcome:
    :math:`\ln L_\mathrm{null}/n = \pi\ln\pi + (1-\pi)\ln(1-\pi)` and
    :math:`n_3 = (1.96/\text{margin})^2\,\pi(1-\pi)`. Survival outcome
    (exponential null model): :math:`\ln L_\mathrm{null} = E\ln(E/n) - E`
    with :math:`E = n\,\lambda\,\bar t` events; the overall risk by
    ``timepoint`` is reported as its 95 % interval at the minimum n, not as
    a sample size. Continuous outcome (Riley et al. 2019, Part I): the
    shrinkage :math:`1 + (p - 2) / (n \ln(1 - R^2_\mathrm{app}))` with the
    apparent :math:`R^2_\mathrm{app} = 1 - (1 - R^2)(n - p - 1)/(n - 1)`,
    the optimism :math:`R^2_\mathrm{app} - R^2 = (1 - R^2) p / (n - 1)`, and
    the residual SD and the intercept each within a multiplicative margin of
    error of 1.1 (95 %). Every n is rounded up, and so are the events.

    ``parameters`` counts the model's predictor parameters as fitted: for
    a signature, the clinical columns (their dummies) plus the modules.
    Tuning over genes (the clusters, the penalties, the selection) spends
    more degrees of freedom than that count, so for a tuned signature the
    result is a **lower bound**.

    Parameters
    ----------
    outcome : {"binary", "survival", "continuous"}
        The outcome type.
    parameters : int
        Number of candidate predictor parameters, >= 1.
    r2 : float
        The anticipated Cox-Snell :math:`R^2` (binary, survival) or
        :math:`R^2` (continuous; the population value, i.e. adjusted) of the
        model. Required. (Deriving it from an anticipated C statistic is not
        offered: pmsampsize does so by simulation, which vcpcr does not
        reproduce.)
    prevalence : float, optional
        Binary: the anticipated outcome proportion, in (0, 1).
    rate : float, optional
        Survival: the anticipated event rate per unit of time.
    timepoint : float, optional
        Survival: the time by which the overall risk is estimated.
    mean_follow_up : float, optional
        Survival: the anticipated mean follow-up, in the units of ``rate``.
    intercept : float, optional
        Continuous: the anticipated mean outcome (non-zero).
    sd : float, optional
        Continuous: the anticipated standard deviation of the outcome.
    shrinkage : float, default=0.9
        Smallest acceptable expected shrinkage :math:`S`, in (0, 1).
    max_optimism : float, default=0.05
        Largest acceptable optimism :math:`\delta` in Nagelkerke's (binary,
        survival) or the adjusted (continuous) :math:`R^2`, in (0, 1).
    margin : float, default=0.05
        Binary: the absolute margin of error of the overall risk (criterion
        3), in (0, 1). Not used for the other outcomes.
    n_available : int, optional
        The sample size at hand; the result says whether it is enough.

    Returns
    -------
    SampleSizeResult
        The criteria frame, ``n_required``, ``events``, the interval,
        ``adequate`` and ``summary()``.

    Raises
    ------
    ValueError
        For an unknown ``outcome``, a missing argument the outcome needs or
        one of another outcome, values out of range (``r2`` at or above the
        largest R2 the outcome allows, a zero ``intercept``).
    TypeError
        For a non-integer ``parameters`` or ``n_available`` or a non-numeric
        value.

    See Also
    --------
    validation_sample_size : The sample size to validate a model externally.
    decision_curve : Clinical utility of the predicted risks.

    Notes
    -----
    The numbers match ``pmsampsize`` 0.1.0 (Python; GPL-3, a test-only
    reference) on the cases committed in ``tests/reference/``, except where
    noted there: for a continuous outcome whose intercept is imprecise at
    criteria 1-3's n, vcpcr searches the smallest n meeting criterion 4.
    The sample size of an external validation (Riley et al. 2021,
    ``pmvalsampsize``) is :func:`validation_sample_size`'s.

    References
    ----------
    Riley, R. D. et al. (2019). Minimum sample size for developing a
    multivariable prediction model: Part I - Continuous outcomes. Statistics
    in Medicine 38:1262.

    Riley, R. D. et al. (2019). Minimum sample size for developing a
    multivariable prediction model: Part II - Binary and time-to-event
    outcomes. Statistics in Medicine 38:1276.

    Riley, R. D. et al. (2020). Calculating the sample size required for
    developing a clinical prediction model. BMJ 368:m441.

    Examples
    --------
    >>> from vcpcr.validation import sample_size
    >>> res = sample_size("binary", parameters=24, r2=0.288, prevalence=0.174)
    >>> res.n_required, res.events
    (662, 116)
    >>> res.criteria["n"].tolist()
    [623, 662, 221]
    """
    owner = "sample_size"
    check_choice(outcome, "outcome", OUTCOMES, owner=owner)
    check_scalar(parameters, "parameters", numbers.Integral, owner=owner, min_val=1)
    for name, value in (
        ("shrinkage", shrinkage),
        ("max_optimism", max_optimism),
        ("margin", margin),
    ):
        check_fraction(value, name, owner=owner)
    if n_available is not None:
        check_scalar(
            n_available, "n_available", numbers.Integral, owner=owner, min_val=1
        )
    given = {
        "prevalence": prevalence,
        "rate": rate,
        "timepoint": timepoint,
        "mean_follow_up": mean_follow_up,
        "intercept": intercept,
        "sd": sd,
    }
    _check_outcome_args(outcome, given, owner=owner)
    if r2 is None:
        raise ValueError(
            f"The 'r2' parameter of {owner} is required: the anticipated "
            f"Cox-Snell R2 (binary, survival) or R2 (continuous) of the model, "
            f"e.g. that of an existing model for the same outcome."
        )
    rule = {"binary": _binary, "survival": _survival, "continuous": _continuous}
    rows, per_row, interval = rule[outcome](
        int(parameters),
        r2,
        given,
        shrinkage=shrinkage,
        max_optimism=max_optimism,
        margin=margin,
        owner=owner,
    )
    n_required = max(n for _, n, _ in rows if n is not None)
    frame = pd.DataFrame(rows, columns=["criterion", "n", "events"])
    frame = frame.astype({"n": "Int64", "events": "Int64"})
    if per_row is None:
        frame = frame.drop(columns="events")
    return SampleSizeResult(
        outcome=outcome,
        parameters=int(parameters),
        criteria=frame,
        n_required=n_required,
        events=None if per_row is None else _ceil(n_required * per_row),
        interval=interval,
        n_available=None if n_available is None else int(n_available),
    )


# ------------------------------------------------------------------ validation
_Z196 = 1.96  # the papers' and pmvalsampsize's normal quantile
VRow = tuple[str, int, int | None, float]  # criterion, n, events, target SE


def _expectation(dist: Any, f: Any, *, on_risk: bool) -> float:
    """E[f(LP)] over an array of values or a frozen scipy distribution."""
    if hasattr(dist, "expect"):
        if on_risk:  # a distribution of the risks: LP = logit(p)
            return float(dist.expect(lambda p: f(math.log(p / (1.0 - p)))))
        return float(dist.expect(f))
    values = np.asarray(dist, dtype=float)
    lp = np.log(values / (1.0 - values)) if on_risk else values
    return float(np.mean(f(lp)))


def _check_distribution(value: Any, name: str, *, on_risk: bool) -> Any:
    """Return a frozen scipy distribution, or a 1-d finite array (risks in (0, 1))."""
    if hasattr(value, "expect") and hasattr(value, "dist"):
        return value
    arr = np.asarray(value, dtype=float)
    low, high = (0.0, 1.0) if on_risk else (-np.inf, np.inf)
    if arr.ndim != 1 or arr.size < 2 or not np.all(np.isfinite(arr)):
        raise ValueError(
            f"The {name!r} parameter of validation_sample_size must be a frozen "
            f"scipy.stats distribution or a 1-d array of at least 2 finite "
            f"values. Got shape {arr.shape} instead."
        )
    if np.any(arr <= low) or np.any(arr >= high):
        raise ValueError(
            f"The {name!r} parameter of validation_sample_size holds predicted "
            f"risks, which must lie strictly between 0 and 1; got values in "
            f"[{arr.min():.4g}, {arr.max():.4g}]."
        )
    return arr


def _logistic(lp: Any) -> Any:
    return special.expit(np.asarray(lp, dtype=float))


def _oe_row(risk: float, oe: float, width: float, what: str) -> VRow:
    """O/E: SE of ln(O/E) meeting the CI width, n = (1 - phi) / (phi SE^2)."""
    # width = O/E (e^{z s} - e^{-z s}) = 2 O/E sinh(z s)
    se = math.asinh(width / (2.0 * oe)) / _Z196
    n = _ceil((1.0 - risk) / (risk * se**2))
    return (f"O/E{what} CI width <= {width:g}", n, _ceil(n * risk), se)


def _c_row(c: float, prevalence: float, width: float) -> VRow:
    """C statistic: Newcombe's SE, the smallest n with 2 * 1.96 * SE <= width."""

    def se(n: int) -> float:
        m = n / 2.0 - 1.0
        v = c * (1 - c) * (1 + m * (1 - c) / (2 - c) + m * c / (1 + c))
        return math.sqrt(v / (n * n * prevalence * (1 - prevalence)))

    n = _smallest_n(lambda k: 2 * _Z196 * se(k) <= width, 2)
    return (f"C statistic CI width <= {width:g}", n, _ceil(n * prevalence), se(n))


def _slope_row(dist: Any, on_risk: bool, prevalence: float, width: float) -> VRow:
    """Calibration slope: the logistic calibration model's Fisher information."""

    def w(lp: Any) -> Any:  # p (1 - p) at intercept 0, slope 1
        p = _logistic(lp)
        return p * (1.0 - p)

    i00 = _expectation(dist, w, on_risk=on_risk)
    i01 = _expectation(dist, lambda lp: lp * w(lp), on_risk=on_risk)
    i11 = _expectation(dist, lambda lp: lp * lp * w(lp), on_risk=on_risk)
    se = width / (2 * _Z196)
    n = _ceil(i00 / (se**2 * (i00 * i11 - i01**2)))
    return (f"calibration slope CI width <= {width:g}", n, _ceil(n * prevalence), se)


def _net_benefit_row(
    prevalence: float,
    threshold: float,
    sensitivity: float,
    specificity: float,
    width: float,
) -> VRow:
    """Standardized net benefit at ``threshold`` (Riley et al. 2021, criterion 4)."""
    phi, t = prevalence, threshold
    w = (1 - phi) / phi * t / (1 - t)
    se = width / (2 * _Z196)
    var1 = (
        sensitivity * (1 - sensitivity) / phi
        + w * w * specificity * (1 - specificity) / (1 - phi)
        + w * w * (1 - specificity) ** 2 / (phi * (1 - phi))
    )
    n = _ceil(var1 / se**2)
    return (
        f"standardized net benefit at threshold {t:g} CI width <= {width:g}",
        n,
        _ceil(n * phi),
        se,
    )


def _sens_spec(dist: Any, on_risk: bool, threshold: float) -> tuple[float, float]:
    """Sensitivity and specificity at ``threshold`` of a calibrated model."""
    p_event = _expectation(dist, _logistic, on_risk=on_risk)
    above = _expectation(
        dist, lambda lp: _logistic(lp) * (_logistic(lp) >= threshold), on_risk=on_risk
    )
    below = _expectation(
        dist,
        lambda lp: (1.0 - _logistic(lp)) * (_logistic(lp) < threshold),
        on_risk=on_risk,
    )
    return above / p_event, below / (1.0 - p_event)


def _binary_validation(kw: dict[str, Any], owner: str) -> tuple[list[VRow], float]:
    prevalence, c = kw["prevalence"], kw["c_statistic"]
    for name in ("prevalence", "c_statistic"):
        if kw[name] is None:
            raise ValueError(
                f"The {name!r} parameter of {owner} is required for "
                f"outcome='binary': {_VWHAT[name]}."
            )
        check_fraction(kw[name], name, owner=owner)
    given = [k for k in ("linear_predictor", "predicted_risk") if kw[k] is not None]
    if len(given) != 1:
        raise ValueError(
            f"{owner}(outcome='binary') needs exactly one of 'linear_predictor' "
            f"or 'predicted_risk' (the anticipated distribution of the model's "
            f"predictions in the validation population, for the calibration "
            f"slope); got {given or 'neither'}."
        )
    on_risk = given[0] == "predicted_risk"
    dist = _check_distribution(kw[given[0]], given[0], on_risk=on_risk)
    phi = float(prevalence)
    rows = [
        _oe_row(phi, kw["oe"], kw["oe_width"], ""),
        _slope_row(dist, on_risk, phi, kw["slope_width"]),
        _c_row(float(c), phi, kw["c_width"]),
    ]
    threshold = kw["threshold"]
    sens, spec = kw["sensitivity"], kw["specificity"]
    if (sens is None) != (spec is None):
        raise ValueError(
            f"Give both 'sensitivity' and 'specificity' to {owner}, or neither "
            f"(then they follow from the predictions' distribution)."
        )
    if threshold is None and sens is not None:
        raise ValueError(
            f"'sensitivity' and 'specificity' of {owner} are those at "
            f"'threshold'; give threshold= too."
        )
    if threshold is not None:
        check_fraction(threshold, "threshold", owner=owner)
        if sens is None:
            sens, spec = _sens_spec(dist, on_risk, float(threshold))
        else:
            check_fraction(sens, "sensitivity", owner=owner)
            check_fraction(spec, "specificity", owner=owner)
        rows.append(_net_benefit_row(phi, float(threshold), sens, spec, kw["nb_width"]))
    return rows, phi


def _survival_validation(
    kw: dict[str, Any], owner: str, given_names: set[str]
) -> tuple[list[VRow], float, dict[str, float] | None]:
    risk = kw["event_risk"]
    if risk is None:
        raise ValueError(
            f"The 'event_risk' parameter of {owner} is required for "
            f"outcome='survival': {_VWHAT['event_risk']}."
        )
    check_fraction(risk, "event_risk", owner=owner)
    given = [k for k in _SURVIVAL_LP if kw[k] is not None]
    if not given:
        extra = [k for k in _SIMULATION_ONLY if k in given_names]
        if extra:
            raise ValueError(
                f"{extra} of {owner}(outcome='survival') set up the simulated "
                f"population of the calibration slope, C and net-benefit "
                f"criteria, which needs the anticipated predictions: give one "
                f"of {list(_SURVIVAL_LP)}, or drop {extra} for O/E alone."
            )
        return (
            [_oe_row(float(risk), kw["oe"], kw["oe_width"], " by the time point")],
            float(risk),
            None,
        )
    if len(given) != 1:
        raise ValueError(
            f"{owner}(outcome='survival') needs exactly one of {list(_SURVIVAL_LP)} "
            f"(the linear predictor's distribution, or a normal one whose SD "
            f"gives the anticipated C); got {given}."
        )
    population = _SurvivalPopulation.simulate(kw, given[0], owner)
    return population.rows(kw, owner), population.event_fraction, population.details


_SURVIVAL_LP = ("c_statistic", "linear_predictor", "predicted_risk")
_SIMULATION_ONLY = (
    "timepoint",
    "censoring",
    "follow_up",
    "shape",
    "n_population",
    "threshold",
    "slope_width",
    "c_width",
    "nb_width",
)
_N_POPULATION = 500_000


def _dominance(values: NDArray[np.intp], weights: NDArray[np.float64]) -> Any:
    """Weighted counts of the earlier rows with a smaller and with an equal value.

    For row ``p`` (the rows in their order, e.g. sorted by time), the sums of
    ``weights[q]`` (``(n, m)``) over ``q < p`` with ``values[q] < values[p]``
    and with ``values[q] == values[p]``: a bottom-up merge count, log2(n)
    levels of a sort and a search (``O(n log^2 n)``, no ``n x n`` matrix).
    """
    n = values.size
    less = np.zeros_like(weights)
    equal = np.zeros_like(weights)
    pos = np.arange(n)
    span = int(values.max()) + 2
    s = 1
    while s < n:
        block = pos // (2 * s)
        left = (pos // s) % 2 == 0
        lb, rb = block[left], block[~left]
        keys = lb * span + values[left]
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        cum = np.zeros((keys.size + 1, weights.shape[1]))
        np.cumsum(weights[left][order], axis=0, out=cum[1:])
        query = rb * span + values[~left]
        start = np.searchsorted(keys, rb * span, "left")
        low = np.searchsorted(keys, query, "left")
        high = np.searchsorted(keys, query, "right")
        less[~left] += cum[low] - cum[start]
        equal[~left] += cum[high] - cum[low]
        s *= 2
    return less, equal


def _harrell_projections(
    risk: NDArray[np.float64], time: NDArray[np.float64], event: NDArray[np.bool_]
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    r"""Harrell's C and each row's concordant and comparable pairs (either role).

    The pairs are :func:`vcpcr.metrics.concordance_interval`'s (an event
    before a later time, or tied with a censored row; a tie in risk counts
    1/2), counted in ``O(n \log^2 n)`` (:func:`_dominance`) for a simulated
    population too large for its pairwise kernel. Returns ``C``, ``a`` (the
    concordant pairs each row is in) and ``b`` (its comparable pairs): the
    projections of the U-statistics :math:`\sum a / 2` and :math:`\sum b / 2`.
    """
    n = time.size
    order = np.lexsort((~event, time))  # by time; at a tie, events first
    r, d = risk[order], event[order].astype(np.float64)
    ranks = np.unique(r, return_inverse=True)[1].reshape(-1)
    counts = np.bincount(ranks).astype(np.float64)
    below = np.concatenate([[0.0], np.cumsum(counts)[:-1]])[ranks]  # r_j < r_i
    tied = counts[ranks] - 1.0
    less, equal = _dominance(ranks, np.column_stack([np.ones(n), d]))
    later = n - 1.0 - np.arange(n)
    # as the earlier row (an event): the later rows of a smaller risk
    first_comp = d * later
    first_conc = d * ((below - less[:, 0]) + 0.5 * (tied - equal[:, 0]))
    # as the later row: the earlier events of a larger risk
    events_before = np.cumsum(d) - d
    second_conc = events_before - less[:, 1] - 0.5 * equal[:, 1]
    a = np.empty(n)
    b = np.empty(n)
    a[order] = first_conc + second_conc
    b[order] = first_comp + events_before
    if b.sum() == 0:
        raise ValueError(
            "The simulated population has no comparable pair (no event before "
            "the end of follow-up): raise event_risk or follow_up."
        )
    return float(first_conc.sum() / first_comp.sum()), a, b


def _km_influence(
    time: NDArray[np.float64], event: NDArray[np.bool_], t: float
) -> tuple[float, NDArray[np.float64]]:
    r"""Kaplan-Meier survival at ``t`` and each row's influence on it.

    .. math::

        \mathrm{IF}_i = -S(t)\Big[\frac{\delta_i 1[T_i \le t]}{\pi(T_i)}
        - \sum_{t_k \le \min(T_i, t)} \frac{d_k}{r_k \pi(t_k)}\Big],
        \qquad \pi = r / n,

    so that :math:`\hat S(t) \approx S(t) + \sum_i \mathrm{IF}_i / n` and
    :math:`\operatorname{mean}(\mathrm{IF}^2) / n` is Greenwood's variance
    (:func:`vcpcr.calibration.kaplan_meier`) up to :math:`O(1/n^2)`; linear
    in ``n`` (the population is too large for its broadcast).
    """
    n = time.size
    ts = np.sort(time)
    hit = event & (time <= t)
    times, deaths = np.unique(time[hit], return_counts=True)
    at_risk = n - np.searchsorted(ts, times, "left")
    s = float(np.prod(1.0 - deaths / at_risk))
    step = deaths * n / at_risk.astype(np.float64) ** 2  # d_k / (r_k pi_k)
    cum = np.concatenate([[0.0], np.cumsum(step)])
    upto = np.searchsorted(times, np.minimum(time, t), "right")
    jump = np.zeros(n)
    where = np.searchsorted(times, time[hit])
    jump[hit] = n / at_risk[where]
    return s, -s * (jump - cum[upto])


@dataclass(frozen=True, eq=False)
class _SurvivalPopulation:
    """A large population simulated from the anticipated model (Riley et al. 2022)."""

    lp: NDArray[np.float64]
    risk: NDArray[np.float64]  # the true risk by the time point
    time: NDArray[np.float64]
    event: NDArray[np.bool_]
    timepoint: float
    details: dict[str, float]

    @property
    def event_fraction(self) -> float:
        """Fraction of rows with an observed event (events per row of a sample)."""
        return float(np.mean(self.event))

    @classmethod
    def simulate(
        cls, kw: dict[str, Any], given: str, owner: str
    ) -> _SurvivalPopulation:
        """Draw the linear predictor, the event times and the censoring."""
        risk = float(kw["event_risk"])
        if kw["timepoint"] is None:
            raise ValueError(
                f"The 'timepoint' parameter of {owner} is required with "
                f"{given}=: {_VWHAT['timepoint']}."
            )
        t = _check_positive(kw["timepoint"], "timepoint", owner=owner)
        shape = _check_positive(kw["shape"] or 1.0, "shape", owner=owner)
        censoring = 0.0 if kw["censoring"] is None else kw["censoring"]
        check_scalar(
            censoring,
            "censoring",
            numbers.Real,
            owner=owner,
            min_val=0.0,
            max_val=1.0,
            include_max=False,
        )
        follow_up = t if kw["follow_up"] is None else kw["follow_up"]
        check_scalar(follow_up, "follow_up", numbers.Real, owner=owner, min_val=t)
        n = _N_POPULATION if kw["n_population"] is None else kw["n_population"]
        check_scalar(n, "n_population", numbers.Integral, owner=owner, min_val=1000)
        rng = check_random_state(kw["random_state"])
        size = int(n)
        exp_event = rng.exponential(size=size)  # the unit-rate event clocks
        censor = np.full(size, float(follow_up))
        rate = -math.log1p(-float(censoring)) / t  # exponential, P(C <= t)
        if censoring > 0:
            censor = np.minimum(censor, rng.exponential(1.0 / rate, size=size))
        if given == "c_statistic":
            check_fraction(kw["c_statistic"], "c_statistic", owner=owner)
            c = float(kw["c_statistic"])
            sd = _solve_sd(c, risk, t, shape, rate, float(follow_up))
            lp = sd * rng.standard_normal(size)
        else:
            on_risk = given == "predicted_risk"
            dist = _check_distribution(kw[given], given, on_risk=on_risk)
            if hasattr(dist, "rvs"):
                draws = np.asarray(dist.rvs(size=size, random_state=rng), dtype=float)
            else:
                draws = rng.choice(dist, size=size, replace=True)
            if on_risk:
                if np.any(draws <= 0) or np.any(draws >= 1):
                    raise ValueError(
                        f"The 'predicted_risk' distribution of {owner} must lie "
                        f"strictly between 0 and 1."
                    )
                draws = np.log(-np.log1p(-draws))  # cloglog: log H(t)
            lp = draws - float(np.mean(draws))
            sd = float(np.std(lp))
        log_scale = _baseline(lp, risk, t, shape)
        time, event = _times(lp, log_scale, exp_event, censor, shape)
        true_risk = -np.expm1(-np.exp(log_scale + lp) * t**shape)
        details = {
            "n_population": float(size),
            "baseline_log_scale": log_scale,
            "shape": shape,
            "lp_sd": sd,
            "risk_by_timepoint": float(np.mean(true_risk)),
            "censored_by_timepoint": float(np.mean(censor < t)),
            "event_fraction": float(np.mean(event)),
            "follow_up": float(follow_up),
        }
        return cls(lp, true_risk, time, event, t, details)

    def rows(self, kw: dict[str, Any], owner: str) -> list[VRow]:
        """Return the criteria: O/E, calibration slope, Harrell's C, net benefit."""
        from vcpcr.calibration import _cox_slope

        n_pop = self.lp.size
        per_row = self.event_fraction
        s, influence = _km_influence(self.time, self.event, self.timepoint)
        phi = 1.0 - s
        rows: list[VRow] = []

        def row(what: str, variance: float, se: float) -> None:
            n = _ceil(variance / se**2)
            rows.append((what, n, _ceil(n * per_row), se))

        # O/E = (1 - S_KM(t)) / E: the SE of ln(1 - S_KM(t))
        se_oe = math.asinh(kw["oe_width"] / (2.0 * kw["oe"])) / _Z196
        row(
            f"O/E by the time point CI width <= {kw['oe_width']:g}",
            float(np.mean(influence**2)) / phi**2,
            se_oe,
        )
        # calibration slope: Cox regression on the linear predictor
        slope, low, high = _cox_slope(self.lp, self.time, self.event, 0.05)
        se_pop = (high - low) / (2.0 * stats.norm.ppf(0.975))
        width = kw["slope_width"]
        row(
            f"calibration slope CI width <= {width:g}",
            se_pop**2 * n_pop,
            width / (2 * _Z196),
        )
        # Harrell's C: the U-statistic variance
        c, a, b = _harrell_projections(self.lp, self.time, self.event)
        a, b = a / (n_pop - 1), b / (n_pop - 1)
        width = kw["c_width"]
        row(
            f"C statistic (Harrell's) CI width <= {width:g}",
            4.0 * float(np.var(a - c * b)) / float(np.mean(b)) ** 2,
            width / (2 * _Z196),
        )
        self.details.update(c_statistic=c, calibration_slope=slope)
        if kw["threshold"] is not None:
            rows.append(self._net_benefit(kw, owner, s, influence, per_row))
        return rows

    def _net_benefit(
        self,
        kw: dict[str, Any],
        owner: str,
        s: float,
        influence: NDArray[np.float64],
        per_row: float,
    ) -> VRow:
        r"""Return the standardized net benefit's criterion (KM among the treated)."""
        check_fraction(kw["threshold"], "threshold", owner=owner)
        thr, width = float(kw["threshold"]), kw["nb_width"]
        treated = self.risk >= thr
        q = float(np.mean(treated))
        if q in (0.0, 1.0):
            raise ValueError(
                f"At threshold={thr:g} the simulated population's risks by the "
                f"time point (from {self.risk.min():.3g} to {self.risk.max():.3g}) "
                f"treat {'everyone' if q else 'no one'}: the net benefit equals "
                f"treat-{'all' if q else 'none'}'s. Choose a threshold inside "
                f"that range."
            )
        s1, inf1 = _km_influence(
            self.time[treated], self.event[treated], self.timepoint
        )
        w = thr / (1.0 - thr)
        phi = 1.0 - s
        nb = q * (1.0 - s1) - w * q * s1
        inf_nb = (treated - q) * (1.0 - (1.0 + w) * s1)
        inf_nb[treated] -= (1.0 + w) * inf1
        snb = nb / phi
        inf_snb = (inf_nb + snb * influence) / phi  # phi = 1 - S: IF(phi) = -IF(S)
        self.details.update(treated_fraction=q, standardized_net_benefit=snb)
        se = width / (2 * _Z196)
        n = _ceil(float(np.mean(inf_snb**2)) / se**2)
        return (
            f"standardized net benefit at threshold {thr:g} CI width <= {width:g}",
            n,
            _ceil(n * per_row),
            se,
        )


def _baseline(
    lp: NDArray[np.float64],
    risk: float,
    t: float,
    shape: float,
    weights: NDArray[np.float64] | None = None,
    xtol: float = 1e-10,
) -> float:
    """Return the log Weibull scale whose marginal risk by ``t`` is ``risk``.

    The marginal risk is the mean over ``lp`` (a sample), or its
    ``weights``-weighted sum (a quadrature grid).
    """

    def excess(log_scale: float) -> float:
        risks = -np.expm1(-np.exp(log_scale + lp) * t**shape)
        mean = np.mean(risks) if weights is None else weights @ risks
        return float(mean) - risk

    # the risk rises from 0 to 1 in log_scale
    centre = math.log(-math.log1p(-risk)) - shape * math.log(t)
    low, high = centre - 10.0, centre + 10.0
    while excess(low) > 0:
        low -= 10.0
    while excess(high) < 0:
        high += 10.0
    return float(brentq(excess, low, high, xtol=xtol))


def _times(
    lp: NDArray[np.float64],
    log_scale: float,
    exp_event: NDArray[np.float64],
    censor: NDArray[np.float64],
    shape: float,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Weibull event times (H(s) = exp(log_scale + lp) s^shape), censored."""
    event_time = (exp_event * np.exp(-(log_scale + lp))) ** (1.0 / shape)
    return np.minimum(event_time, censor), event_time <= censor


def _normal_c(
    sd: float, risk: float, t: float, shape: float, rate: float, follow_up: float
) -> float:
    r"""Harrell's C of a normal linear predictor in the population, by quadrature.

    A pair is comparable when the first row's event, at :math:`s`, is
    observed and the second row is still followed then. With the cumulative
    baseline hazard :math:`u = \Lambda_0(s) = e^{\beta_0} s^k` and the
    censoring survival :math:`G(s) = e^{-\mu s}` (0 after ``follow_up``),

    .. math::

        C = \frac{\int G^2 \iint_{\eta_1 > \eta_2} e^{\eta_1}
        e^{-u(e^{\eta_1} + e^{\eta_2})}\, d\Phi_1\, d\Phi_2\, du}
        {\int G^2 \iint e^{\eta_1} e^{-u(e^{\eta_1} + e^{\eta_2})}
        \, d\Phi_1\, d\Phi_2\, du},

    on a grid of the normal distribution (the sum over
    :math:`\eta_2 < \eta_1` a cumulative sum, a tie 1/2) and Gauss-Legendre
    nodes in :math:`u`, :math:`\beta_0` matching the marginal risk by ``t``.
    """
    grid = np.linspace(-8.0, 8.0, 1601)
    w = stats.norm.pdf(grid)
    w /= w.sum()
    e = np.exp(sd * grid)
    log_scale = _baseline(sd * grid, risk, t, shape, weights=w, xtol=1e-12)
    top = math.exp(log_scale) * follow_up**shape
    nodes, weights = np.polynomial.legendre.leggauss(200)
    u = 0.5 * top * (nodes + 1.0)
    s = (u / math.exp(log_scale)) ** (1.0 / shape)
    g2 = np.exp(-2.0 * rate * s) * 0.5 * top * weights
    second = w * np.exp(-u[:, None] * e[None, :])  # (u, eta_2)
    first = second * e  # (u, eta_1)
    below = np.cumsum(second, axis=1) - 0.5 * second  # eta_2 < eta_1, a tie 1/2
    concordant = g2 @ np.sum(first * below, axis=1)
    comparable = g2 @ (first.sum(axis=1) * second.sum(axis=1))
    return float(concordant / comparable)


def _solve_sd(
    c: float, risk: float, t: float, shape: float, rate: float, follow_up: float
) -> float:
    """Return the SD of a normal linear predictor whose population C is ``c``."""
    if c <= 0.5:
        raise ValueError(
            f"The 'c_statistic' parameter of validation_sample_size must be "
            f"above 0.5 for outcome='survival' (a model that ranks better than "
            f"chance). Got {c!r} instead."
        )

    def excess(sd: float) -> float:
        return _normal_c(sd, risk, t, shape, rate, follow_up) - c

    high = 1.0
    while excess(high) < 0:
        high *= 2.0
        if high > 16:
            raise ValueError(
                f"No normal linear predictor of SD up to 16 gives Harrell's "
                f"C = {c:g} with this follow-up and censoring: lower "
                f"c_statistic, or give linear_predictor= instead."
            )
    return float(brentq(excess, 1e-4, high, xtol=1e-7))


def _continuous_validation(kw: dict[str, Any], owner: str) -> list[VRow]:
    for name in ("r2", "variance", "citl_width"):
        if kw[name] is None:
            raise ValueError(
                f"The {name!r} parameter of {owner} is required for "
                f"outcome='continuous': {_VWHAT[name]}."
            )
    check_fraction(kw["r2"], "r2", owner=owner)
    r2 = float(kw["r2"])
    variance = _check_positive(kw["variance"], "variance", owner=owner)
    citl_width = _check_positive(kw["citl_width"], "citl_width", owner=owner)
    check_scalar(kw["slope"], "slope", numbers.Real, owner=owner)
    slope, mmoe = float(kw["slope"]), kw["mmoe"]
    check_scalar(
        mmoe, "mmoe", numbers.Real, owner=owner, min_val=1.0, include_min=False
    )
    se_r2 = kw["r2_width"] / (2 * _Z196)
    se_citl = citl_width / (2 * _Z196)
    se_slope = kw["slope_width"] / (2 * _Z196)

    def variance_precise(n: int) -> bool:  # the residual variance's 95 % CI
        df = n - 1
        return (
            max(stats.chi2.ppf(0.975, df) / df, df / stats.chi2.ppf(0.025, df))
            <= mmoe**2
        )

    return [
        (
            f"R2 CI width <= {kw['r2_width']:g}",
            _ceil(4 * r2 * (1 - r2) ** 2 / se_r2**2),
            None,
            se_r2,
        ),
        (
            f"calibration-in-the-large CI width <= {citl_width:g}",
            _ceil(variance * (1 - r2) / se_citl**2),
            None,
            se_citl,
        ),
        (
            f"calibration slope CI width <= {kw['slope_width']:g}",
            _ceil(1 + slope**2 * (1 - r2) / (r2 * se_slope**2)),
            None,
            se_slope,
        ),
        (
            f"residual variance within {mmoe:g} x",
            _smallest_n(variance_precise, 2),
            None,
            math.nan,
        ),
    ]


_VWHAT = {
    "prevalence": "the anticipated outcome proportion in the validation "
    "population, in (0, 1)",
    "c_statistic": "the anticipated C statistic in the validation population "
    "(e.g. the development study's optimism-adjusted one)",
    "event_risk": "the anticipated observed risk of the event by the time "
    "point of interest, in (0, 1)",
    "timepoint": "the time point of the risk, > 0 (the simulated population's "
    "time scale)",
    "r2": "the anticipated R2 in the validation population, in (0, 1)",
    "variance": "the anticipated variance of the outcome in the validation "
    "population, > 0",
    "citl_width": "the target width of the 95 % CI of calibration-in-the-large, "
    "on the outcome's scale (e.g. a tenth of its SD)",
}
_VONLY = {
    "binary": (
        "prevalence",
        "c_statistic",
        "linear_predictor",
        "predicted_risk",
        "slope_width",
        "c_width",
        "threshold",
        "sensitivity",
        "specificity",
        "nb_width",
        "oe",
        "oe_width",
    ),
    "survival": (
        "event_risk",
        "oe",
        "oe_width",
        *_SURVIVAL_LP,
        *_SIMULATION_ONLY,
    ),
    "continuous": (
        "r2",
        "variance",
        "slope",
        "r2_width",
        "citl_width",
        "slope_width",
        "mmoe",
    ),
}
_VDEFAULTS = {
    "oe": 1.0,
    "oe_width": 0.2,
    "slope_width": 0.2,
    "c_width": 0.1,
    "nb_width": 0.2,
    "slope": 1.0,
    "r2_width": 0.1,
    "mmoe": 1.1,
}
_SURVIVAL_NOTE = (
    "Survival: only O/E by the time point is covered, with the binary formula "
    "at the anticipated risk by then (exact without censoring before it). Give "
    "c_statistic, linear_predictor or predicted_risk (and timepoint) for the "
    "calibration slope, C statistic and net-benefit criteria of Riley et al. "
    "(2022), read from a simulated population."
)
_SIMULATED_NOTE = (
    "Survival: the criteria are read from a population of {n} simulated from "
    "the anticipated model (a Cox model with a Weibull baseline of shape "
    "{shape:g} matched to the risk by the time point, exponential censoring "
    "and the end of follow-up at {follow_up:g}); each SE scales as 1/sqrt(n). "
    "The model is assumed calibrated (slope 1, O/E 1) in that population."
)


def _survival_note(simulation: dict[str, float] | None) -> str:
    if simulation is None:
        return _SURVIVAL_NOTE
    return _SIMULATED_NOTE.format(
        n=int(simulation["n_population"]),
        shape=simulation["shape"],
        follow_up=simulation["follow_up"],
    )


_VALIDATION_NOTE = (
    "The criteria size an external validation of a fixed model: no tuning or "
    "refitting on the validation data."
)


def validation_sample_size(
    outcome: str,
    *,
    prevalence: float | None = None,
    c_statistic: float | None = None,
    linear_predictor: Any = None,
    predicted_risk: Any = None,
    event_risk: float | None = None,
    r2: float | None = None,
    variance: float | None = None,
    oe: float | None = None,
    oe_width: float | None = None,
    slope: float | None = None,
    slope_width: float | None = None,
    c_width: float | None = None,
    r2_width: float | None = None,
    citl_width: float | None = None,
    mmoe: float | None = None,
    threshold: float | None = None,
    sensitivity: float | None = None,
    specificity: float | None = None,
    nb_width: float | None = None,
    timepoint: float | None = None,
    censoring: float | None = None,
    follow_up: float | None = None,
    shape: float | None = None,
    n_population: int | None = None,
    random_state: Any = 0,
    n_available: int | None = None,
) -> SampleSizeResult:
    r"""Minimum sample size to validate a prediction model externally (Riley et al.).

    .. math::

        n_{O/E} = \frac{1 - \phi}{\phi\, \mathrm{SE}^2_{\ln O/E}}, \qquad
        n_\mathrm{slope} = \frac{I_{00}}{\mathrm{SE}^2 (I_{00} I_{11} - I_{01}^2)},
        \qquad I_{jk} = E\!\left[\eta^{j+k} p (1 - p)\right]

    Each criterion asks for a 95 % confidence interval no wider than a
    target (the SE is width / (2 x 1.96)); the minimum sample size is the
    largest of their n.

    **Binary** (Riley et al. 2021): (1) O/E, with
    :math:`\mathrm{SE}_{\ln O/E} = \operatorname{asinh}(w / (2\,O/E)) / 1.96`
    (the interval :math:`O/E\, e^{\pm 1.96\,\mathrm{SE}}` has width
    :math:`w`); (2) the calibration slope, from the Fisher information of
    the logistic calibration model (intercept 0, slope 1) averaged over the
    anticipated distribution of the linear predictor :math:`\eta` (an array,
    e.g. the model's predictions on similar data, or a frozen scipy
    distribution; the averages are exact integrals for a distribution);
    (3) the C statistic, the smallest n whose Newcombe standard error
    :math:`\sqrt{C(1-C)(1 + (n/2 - 1)\frac{1-C}{2-C} + (n/2 - 1)\frac{C}{1+C})
    / (n^2 \phi (1 - \phi))}` meets the width; (4) with ``threshold``, the
    standardized net benefit, :math:`n = \mathrm{SE}^{-2}[\,\mathrm{sens}(1 -
    \mathrm{sens})/\phi + w^2\mathrm{spec}(1-\mathrm{spec})/(1-\phi) +
    w^2(1-\mathrm{spec})^2/(\phi(1-\phi))]` with :math:`w = \frac{1-\phi}{\phi}
    \frac{t}{1-t}`; sensitivity and specificity, if not given, are those of
    a calibrated model at the threshold under the given distribution.

    **Continuous** (Archer et al. 2021): :math:`R^2`:
    :math:`n = 4R^2(1-R^2)^2/\mathrm{SE}^2`; calibration-in-the-large:
    :math:`n = \sigma^2_Y (1 - R^2)/\mathrm{SE}^2`; calibration slope
    :math:`\lambda`: :math:`n = 1 + \lambda^2 (1 - R^2)/(R^2\,\mathrm{SE}^2)`
    (the OLS slope's variance, with residual variance
    :math:`(1-R^2)\sigma^2_Y` and predictions' variance
    :math:`R^2\sigma^2_Y/\lambda^2`); the residual variance: the smallest n
    whose chi-square interval (n - 1 df) is within the multiplicative margin
    ``mmoe`` on both sides.

    **Survival** (Riley et al. 2022): with ``c_statistic``,
    ``linear_predictor`` or ``predicted_risk`` (and ``timepoint``), the
    criteria are read from a large population simulated from the
    anticipated model (see Notes): (1) O/E by the time point, O the
    Kaplan-Meier risk :math:`1 - \hat S(t)`, with
    :math:`\mathrm{SE}^2_{\ln O/E} = \operatorname{Var}\hat S(t) / (1 -
    S(t))^2` (Greenwood's, through the influence function, so censoring
    counts); (2) the calibration slope, the SE of the slope of a Cox
    regression on the linear predictor (:func:`~vcpcr.calibration.
    survival_calibration`'s); (3) Harrell's C, its U-statistic variance
    :math:`4 \operatorname{Var}(a_i - C b_i) / \bar b^2` (:math:`a_i`,
    :math:`b_i`: the concordant and comparable pairs row :math:`i` is in,
    over :math:`n - 1`); (4) with ``threshold``, the standardized net
    benefit :math:`\{q(1 - S_1) - \frac{t}{1-t} q S_1\} / (1 - S)` at the
    time point (:math:`q` the fraction treated, :math:`S_1` the
    Kaplan-Meier survival among them, Vickers et al. 2008), its variance
    from the influence functions of :math:`q`, :math:`\hat S_1` and
    :math:`\hat S`. Each variance is that of one row of the population, so
    :math:`n = \text{variance} / \mathrm{SE}^2`. Without a distribution,
    O/E alone, with the binary formula at ``event_risk`` (exact without
    censoring before the time point; the result's ``note`` says so).

    Parameters
    ----------
    outcome : {"binary", "survival", "continuous"}
        The outcome type.
    prevalence : float, optional
        Binary: the anticipated outcome proportion :math:`\phi`, in (0, 1).
    c_statistic : float, optional
        Binary: the anticipated C statistic, in (0, 1). Survival: the
        anticipated Harrell's C, > 0.5 (see ``predicted_risk``).
    linear_predictor : array-like or frozen scipy.stats distribution, optional
        Binary: the anticipated distribution of the linear predictor (log
        odds) in the validation population, e.g. ``scipy.stats.norm(-2, 1)``
        or the model's linear predictor on a similar cohort. Survival: that
        of the log relative hazard (centred; the baseline is matched to
        ``event_risk``).
    predicted_risk : array-like or frozen scipy.stats distribution, optional
        Binary: the same as predicted risks, e.g. ``scipy.stats.beta(1, 3)``.
        Exactly one of ``linear_predictor`` and ``predicted_risk``. Survival:
        the predicted risks by ``timepoint`` (their complementary log-log is
        the linear predictor), e.g. the model's on the validation cohort.
        Survival: at most one of ``c_statistic``, ``linear_predictor`` and
        ``predicted_risk``; ``c_statistic`` alone gives a normal linear
        predictor whose SD makes the population's Harrell's C equal to it
        (solved by quadrature).
    event_risk : float, optional
        Survival: the anticipated observed risk by the time point, in (0, 1).
    r2 : float, optional
        Continuous: the anticipated :math:`R^2` in the validation population.
    variance : float, optional
        Continuous: the anticipated variance :math:`\sigma^2_Y` of the
        outcome.
    oe : float, default=1
        Binary, survival: the anticipated observed / expected ratio.
    oe_width : float, default=0.2
        Binary, survival: the target width of O/E's 95 % CI.
    slope : float, default=1
        Continuous: the anticipated calibration slope :math:`\lambda`. (The
        binary criterion assumes slope 1, as pmvalsampsize.)
    slope_width : float, default=0.2
        Binary, survival, continuous: the target width of the calibration
        slope's CI.
    c_width : float, default=0.1
        Binary, survival: the target width of the C statistic's CI.
    r2_width : float, default=0.1
        Continuous: the target width of :math:`R^2`'s CI.
    citl_width : float, optional
        Continuous, required: the target width of calibration-in-the-large's
        CI, on the outcome's scale.
    mmoe : float, default=1.1
        Continuous: the multiplicative margin of error of the residual
        variance, > 1.
    threshold : float, optional
        Binary, survival: the risk threshold of the net-benefit criterion
        (without it the criterion is not computed; survival: of the risk by
        ``timepoint``).
    sensitivity, specificity : float, optional
        Binary: the anticipated sensitivity and specificity at
        ``threshold``; both or neither.
    nb_width : float, default=0.2
        Binary, survival: the target width of the standardized net benefit's
        CI.
    timepoint : float, optional
        Survival, required with a distribution: the time point of
        ``event_risk``, ``predicted_risk``, O/E and the net benefit.
    censoring : float, default=0
        Survival: the anticipated probability of being censored by
        ``timepoint`` in the absence of the event (one minus the reverse
        Kaplan-Meier estimate there), in [0, 1): exponential censoring.
    follow_up : float, optional
        Survival: the administrative end of follow-up, >= ``timepoint``
        (default: ``timepoint``, i.e. the validation reads the outcome up to
        the time point; the slope and C use the follow-up up to it).
    shape : float, default=1
        Survival: the shape :math:`k` of the Weibull baseline hazard,
        :math:`\Lambda_0(s) = e^{\beta_0} s^k` (1: exponential).
    n_population : int, default=500,000
        Survival: the size of the simulated population (>= 1000).
    random_state : int, numpy.random.Generator or None, default=0
        Survival: seeds the simulated population.
    n_available : int, optional
        The sample size at hand; the result says whether it is enough.

    Returns
    -------
    SampleSizeResult
        With ``purpose="validation"``, ``parameters=None``, the criteria
        frame (with the target ``se`` of each), ``n_required``, ``events``
        (binary, survival) and ``adequate``.

    Raises
    ------
    ValueError
        For an unknown ``outcome``, a missing argument the outcome needs or
        one of another outcome, values out of range.
    TypeError
        For a non-numeric value or a non-integer ``n_available``.

    See Also
    --------
    sample_size : The sample size to develop a model.

    Notes
    -----
    **The simulated survival population.** ``n_population`` rows, each with
    a linear predictor :math:`\eta` (drawn from the given distribution,
    resampled from the given array, or normal with the SD that gives
    ``c_statistic``), an event time from the Cox model :math:`\Lambda(s
    \mid \eta) = e^{\beta_0 + \eta} s^k` with :math:`\beta_0` such that
    the mean risk by ``timepoint`` is ``event_risk``, and a censoring time,
    the earlier of an exponential one (probability ``censoring`` before
    ``timepoint``) and ``follow_up``. What is assumed: proportional hazards
    with that Weibull baseline, independent censoring, a model calibrated in
    the population (slope 1, O/E 1: the criteria size the estimate's
    precision around those values). The population's Harrell's C and
    calibration slope are in the result's ``simulation``. At the default
    500,000 rows the criteria's n vary by about 0.5 % (SD) between seeds.
    The survival criteria are checked in the tests by Monte Carlo: data sets
    of the returned n drawn from the same model, the slope fitted by
    lifelines' ``CoxPHFitter`` and C by its ``concordance_index``, have the
    target SE. The paper's own worked example is not reproduced (its inputs
    are not at hand); ``pmvalsampsize`` (Stata/R) is not in Python for
    survival.

    The binary numbers are checked against ``pmvalsampsize`` 0.2.1 (Python;
    GPL-3, a test-only reference, in ``tests/reference/``). It finds the
    SEs of O/E and of the net benefit on a grid of step 1e-4 (rounding the
    latter to 3 decimals), so its n is at most a fraction of a percent
    smaller; it averages the slope's information over a million simulated
    predictions, vcpcr integrates. The Python ``pmvalsampsize`` covers
    binary outcomes only: the continuous and survival criteria are the
    papers' formulas, checked by hand and by simulation in the tests.

    References
    ----------
    Riley, R. D. et al. (2021). Minimum sample size for external validation
    of a clinical prediction model with a binary outcome. Statistics in
    Medicine 40:4230.

    Archer, L. et al. (2021). Minimum sample size for external validation of
    a clinical prediction model with a continuous outcome. Statistics in
    Medicine 40:133.

    Vickers, A. J. et al. (2008). Extensions to decision curve analysis, a
    novel method for evaluating diagnostic tests, prediction models and
    molecular markers. BMC Medical Informatics and Decision Making 8:53.

    Riley, R. D. et al. (2022). Minimum sample size calculations for
    external validation of a clinical prediction model with a time-to-event
    outcome. Statistics in Medicine 41:1280.

    Examples
    --------
    >>> from scipy import stats
    >>> from vcpcr.validation import validation_sample_size
    >>> res = validation_sample_size("binary", prevalence=0.018, c_statistic=0.8,
    ...                              linear_predictor=stats.norm(-5, 2.5),
    ...                              oe_width=1)
    >>> res.criteria["n"].tolist()
    [906, 4554, 4252]
    >>> res.n_required
    4554
    >>> res = validation_sample_size("survival", event_risk=0.2, timepoint=5,
    ...                              c_statistic=0.75, censoring=0.2,
    ...                              n_population=100_000)
    >>> res.criteria["criterion"].tolist()[1:]
    ['calibration slope CI width <= 0.2', "C statistic (Harrell's) CI width <= 0.1"]
    >>> bool(res.n_required == res.criteria["n"].max())
    True
    """
    owner = "validation_sample_size"
    check_choice(outcome, "outcome", OUTCOMES, owner=owner)
    if n_available is not None:
        check_scalar(
            n_available, "n_available", numbers.Integral, owner=owner, min_val=1
        )
    kw = {
        "prevalence": prevalence,
        "c_statistic": c_statistic,
        "linear_predictor": linear_predictor,
        "predicted_risk": predicted_risk,
        "event_risk": event_risk,
        "r2": r2,
        "variance": variance,
        "oe": oe,
        "oe_width": oe_width,
        "slope": slope,
        "slope_width": slope_width,
        "c_width": c_width,
        "r2_width": r2_width,
        "citl_width": citl_width,
        "mmoe": mmoe,
        "threshold": threshold,
        "sensitivity": sensitivity,
        "specificity": specificity,
        "nb_width": nb_width,
        "timepoint": timepoint,
        "censoring": censoring,
        "follow_up": follow_up,
        "shape": shape,
        "n_population": n_population,
    }
    for name, value in kw.items():
        if value is not None and name not in _VONLY[outcome]:
            where = [o for o, names in _VONLY.items() if name in names]
            raise ValueError(
                f"The {name!r} parameter of {owner} applies to outcome="
                f"{' or '.join(map(repr, where))} only. Got {name}=... with "
                f"outcome={outcome!r}; drop it."
            )
    given = {name for name, value in kw.items() if value is not None}
    kw["random_state"] = random_state
    for name, default in _VDEFAULTS.items():
        if kw[name] is None:
            kw[name] = default
        elif name != "slope" and name != "mmoe":
            _check_positive(kw[name], name, owner=owner)
    per_row: float | None = None
    note = _VALIDATION_NOTE
    simulation = None
    if outcome == "binary":
        rows, per_row = _binary_validation(kw, owner)
    elif outcome == "survival":
        rows, per_row, simulation = _survival_validation(kw, owner, given)
        note = f"{_survival_note(simulation)} {note}"
    else:
        rows = _continuous_validation(kw, owner)
    n_required = max(r[1] for r in rows)
    frame = pd.DataFrame(rows, columns=["criterion", "n", "events", "se"])
    frame = frame.astype({"n": "Int64", "events": "Int64"})
    if per_row is None:
        frame = frame.drop(columns="events")
    return SampleSizeResult(
        outcome=outcome,
        parameters=None,
        criteria=frame,
        n_required=n_required,
        events=None if per_row is None else _ceil(n_required * per_row),
        interval=None,
        n_available=None if n_available is None else int(n_available),
        note=note,
        purpose="validation",
        simulation=simulation,
    )
