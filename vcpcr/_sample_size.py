"""Minimum sample size to develop or to validate a prediction model (Riley et al.)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from vcpcr._checks import check_choice, check_fraction, check_scalar

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


@dataclass(frozen=True, eq=False)  # a DataFrame field has no truth value
class SampleSizeResult:
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
        if self.n_available is not None:
            verdict = "meets" if self.adequate else "does not meet"
            lines.append(f"n_available = {self.n_available} {verdict} it.")
        lines.append(self.note)
        return "\n".join(lines)

    def __repr__(self) -> str:
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


def _survival_validation(kw: dict[str, Any], owner: str) -> tuple[list[VRow], float]:
    risk = kw["event_risk"]
    if risk is None:
        raise ValueError(
            f"The 'event_risk' parameter of {owner} is required for "
            f"outcome='survival': {_VWHAT['event_risk']}."
        )
    check_fraction(risk, "event_risk", owner=owner)
    return [
        _oe_row(float(risk), kw["oe"], kw["oe_width"], " by the time point")
    ], float(risk)


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
    "survival": ("event_risk", "oe", "oe_width"),
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
    "at the anticipated risk by then (exact without censoring before it). "
    "Riley et al. (2022) size the calibration slope, the C index and net "
    "benefit by simulation (pseudo-observations under censoring), which vcpcr "
    "does not do."
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

    **Survival**: O/E by the time point with the binary formula at the
    anticipated risk by then, exact without censoring before it. The
    calibration slope, C index and net benefit of Riley et al. (2022) are
    sized by simulation and are not covered (the result's ``note`` says so).

    Parameters
    ----------
    outcome : {"binary", "survival", "continuous"}
        The outcome type.
    prevalence : float, optional
        Binary: the anticipated outcome proportion :math:`\phi`, in (0, 1).
    c_statistic : float, optional
        Binary: the anticipated C statistic, in (0, 1).
    linear_predictor : array-like or frozen scipy.stats distribution, optional
        Binary: the anticipated distribution of the linear predictor (log
        odds) in the validation population, e.g. ``scipy.stats.norm(-2, 1)``
        or the model's linear predictor on a similar cohort.
    predicted_risk : array-like or frozen scipy.stats distribution, optional
        Binary: the same as predicted risks, e.g. ``scipy.stats.beta(1, 3)``.
        Exactly one of ``linear_predictor`` and ``predicted_risk``.
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
        Binary, continuous: the target width of the calibration slope's CI.
    c_width : float, default=0.1
        Binary: the target width of the C statistic's CI.
    r2_width : float, default=0.1
        Continuous: the target width of :math:`R^2`'s CI.
    citl_width : float, optional
        Continuous, required: the target width of calibration-in-the-large's
        CI, on the outcome's scale.
    mmoe : float, default=1.1
        Continuous: the multiplicative margin of error of the residual
        variance, > 1.
    threshold : float, optional
        Binary: the risk threshold of the net-benefit criterion (without it
        the criterion is not computed).
    sensitivity, specificity : float, optional
        Binary: the anticipated sensitivity and specificity at
        ``threshold``; both or neither.
    nb_width : float, default=0.2
        Binary: the target width of the standardized net benefit's CI.
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
    }
    for name, value in kw.items():
        if value is not None and name not in _VONLY[outcome]:
            where = [o for o, names in _VONLY.items() if name in names]
            raise ValueError(
                f"The {name!r} parameter of {owner} applies to outcome="
                f"{' or '.join(map(repr, where))} only. Got {name}=... with "
                f"outcome={outcome!r}; drop it."
            )
    for name, default in _VDEFAULTS.items():
        if kw[name] is None:
            kw[name] = default
        elif name != "slope" and name != "mmoe":
            _check_positive(kw[name], name, owner=owner)
    per_row: float | None = None
    note = _VALIDATION_NOTE
    if outcome == "binary":
        rows, per_row = _binary_validation(kw, owner)
    elif outcome == "survival":
        rows, per_row = _survival_validation(kw, owner)
        note = f"{_SURVIVAL_NOTE} {note}"
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
    )
