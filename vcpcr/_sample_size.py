"""Minimum sample size for developing a prediction model (Riley et al.)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import pandas as pd
from scipy import stats

from vcpcr._validation import check_choice, check_fraction, check_scalar

OUTCOMES = ("binary", "survival", "continuous")
_Z = stats.norm.ppf(0.975)
_MMOE = 1.1  # continuous outcomes: residual SD and intercept within 10 %
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
    parameters : int
        The number of candidate predictor parameters.
    criteria : pandas.DataFrame
        One row per criterion: ``criterion`` (what it asks), ``n`` (the
        smallest sample size meeting it; ``<NA>`` for the survival risk's
        precision, which is reported as an interval), ``events`` (binary and
        survival) and ``shrinkage`` (the expected uniform shrinkage at ``n``).
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
        What the count does not cover (tuning).
    """

    outcome: str
    parameters: int
    criteria: pd.DataFrame
    n_required: int
    events: int | None
    interval: tuple[float, float, float] | None
    n_available: int | None
    note: str = _TUNING_NOTE

    @property
    def adequate(self) -> bool | None:
        """Whether ``n_available`` meets ``n_required`` (None without it)."""
        if self.n_available is None:
            return None
        return self.n_available >= self.n_required

    def summary(self) -> str:
        """Return a few lines: the criteria, the minimum n and the verdict."""
        lines = [
            f"Minimum sample size ({self.outcome}, {self.parameters} parameters): "
            f"{self.n_required}"
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
    decision_curve : Clinical utility of the predicted risks.

    Notes
    -----
    The numbers match ``pmsampsize`` 0.1.0 (Python; GPL-3, a test-only
    reference) on the cases committed in ``tests/reference/``, except where
    noted there: for a continuous outcome whose intercept is imprecise at
    criteria 1-3's n, vcpcr searches the smallest n meeting criterion 4.
    The sample size of an external validation (Riley et al. 2021,
    ``pmvalsampsize``) is not covered.

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
