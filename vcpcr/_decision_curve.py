"""Decision curves: the net benefit of predicted risks (Vickers et al.)."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from vcpcr._checks import (
    check_fraction,
    check_random_state,
    check_scalar,
    check_survival,
)
from vcpcr._input import check_same_rows
from vcpcr.calibration import _binary_outcome, _check_horizon, _check_probability

DEFAULT_THRESHOLDS = np.round(np.arange(1, 100) / 100, 2)
_RESERVED = ("all", "none")


def _check_thresholds(thresholds: Any, *, owner: str) -> NDArray[np.float64]:
    arr = np.asarray(thresholds, dtype=np.float64).reshape(-1)
    if np.ndim(thresholds) > 1 or arr.size == 0:
        raise ValueError(
            f"The 'thresholds' parameter of {owner} must be a non-empty 1-d array "
            f"of probabilities in (0, 1). Got shape {np.shape(thresholds)} instead."
        )
    bad = ~((arr > 0) & (arr < 1))  # NaN is bad too
    if bad.any():
        raise ValueError(
            f"The 'thresholds' parameter of {owner} must hold probabilities "
            f"strictly between 0 and 1 (the net benefit divides by 1 - p_t). Got "
            f"{arr[bad][:5].tolist()} instead; e.g. np.arange(0.01, 1, 0.01)."
        )
    return arr


def _check_risks(
    risk: Any, y: Any, n: int, *, owner: str
) -> dict[str, NDArray[np.float64]]:
    """``risk`` (one array or a dict of named arrays) as named probabilities."""
    if isinstance(risk, Mapping):
        if not risk:
            raise ValueError(
                f"The 'risk' parameter of {owner} is an empty dict; pass one "
                f"array of predicted risks or a dict of named arrays."
            )
        named = dict(risk)
    else:
        named = {"model": risk}
    out = {}
    for name, values in named.items():
        if not isinstance(name, str) or name in _RESERVED:
            raise ValueError(
                f"The 'risk' parameter of {owner} has a model named {name!r}; "
                f"name models by strings other than 'all' and 'none' (the "
                f"reference strategies)."
            )
        label = f"risk[{name!r}]" if isinstance(risk, Mapping) else "risk"
        check_same_rows(values, y)
        _check_probability(values, label, n, owner=owner)  # it clips; keep 0 and 1
        out[name] = np.asarray(values, dtype=np.float64)
    return out


def _binary_tp_fp(
    risk: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
    thresholds: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """TP/n and FP/n of treating the rows with ``risk >= p_t`` (rows weighted ``w``)."""
    treated = (risk[None, :] >= thresholds[:, None]) * w[None, :]
    total = w.sum()
    return treated @ y / total, treated @ (1.0 - y) / total


class _SurvivalOutcome:
    """A survival outcome sorted by time once, for the Kaplan-Meier of any subset."""

    def __init__(
        self, time: NDArray[np.float64], event: NDArray[np.bool_], horizon: float
    ) -> None:
        self.order = np.argsort(time, kind="stable")
        t, e = time[self.order], event[self.order]
        # distinct event times up to the horizon; the rows still at risk at each
        self.event_times = np.unique(t[e & (t <= horizon)])
        self.first_at_risk = np.searchsorted(t, self.event_times, side="left")
        self.died = (t[None, :] == self.event_times[:, None]) & e[None, :]

    def tp_fp(
        self,
        risk: NDArray[np.float64],
        w: NDArray[np.float64],
        thresholds: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """TP/n and FP/n: the treated share times the Kaplan-Meier risk among them."""
        treated = (risk[self.order][None, :] >= thresholds[:, None]) * w[self.order]
        share = treated.sum(axis=1) / w.sum()
        # at risk at each event time: weighted counts of the rows from its position on
        tail = np.cumsum(treated[:, ::-1], axis=1)[:, ::-1]
        tail = np.concatenate([tail, np.zeros((tail.shape[0], 1))], axis=1)
        at_risk = tail[:, self.first_at_risk]
        deaths = treated @ self.died.T
        with np.errstate(invalid="ignore", divide="ignore"):
            step = np.where(at_risk > 0, 1.0 - deaths / at_risk, 1.0)
        survival = np.prod(step, axis=1)
        return share * (1.0 - survival), share * survival


def _net_benefit(
    tp: NDArray[np.float64], fp: NDArray[np.float64], thresholds: NDArray[np.float64]
) -> NDArray[np.float64]:
    return np.asarray(tp - fp * thresholds / (1.0 - thresholds))


def _curves(
    tp_fp: Any,
    risks: dict[str, NDArray[np.float64]],
    w: NDArray[np.float64],
    thresholds: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Net benefit of each model, treat-all and treat-none: (models, thresholds)."""
    rows = []
    for r in [*risks.values(), np.ones(w.size)]:
        tp, fp = tp_fp(r, w, thresholds)
        rows.append(_net_benefit(tp, fp, thresholds))
    rows.append(np.zeros(thresholds.size))
    return np.vstack(rows)


def _outcome(y: Any, horizon: Any, *, owner: str) -> tuple[int, Any]:
    """Return the outcome's size and its ``tp_fp(risk, w, thresholds)``."""
    if horizon is None:
        if np.ndim(y) == 2 or getattr(getattr(y, "dtype", None), "names", None):
            raise ValueError(
                f"y of {owner} looks like a survival outcome (time, event): pass "
                f"horizon=, the time by which the risk is predicted."
            )
        labels = _binary_outcome(y, np.size(y), owner=owner)

        def tp_fp(
            r: NDArray[np.float64], w: NDArray[np.float64], t: NDArray[np.float64]
        ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            return _binary_tp_fp(r, labels, w, t)

        return labels.size, tp_fp
    time, event = check_survival(y)
    h = _check_horizon(horizon, time, event, owner=owner)
    outcome = _SurvivalOutcome(time, event, h)
    return time.size, outcome.tp_fp


def decision_curve(
    y: Any,
    risk: ArrayLike | Mapping[str, ArrayLike],
    *,
    horizon: float | None = None,
    thresholds: ArrayLike = DEFAULT_THRESHOLDS,
    n_bootstrap: int = 200,
    alpha: float = 0.05,
    random_state: Any = None,
) -> pd.DataFrame:
    r"""Net benefit of predicted risks across thresholds (a decision curve).

    .. math::

        \mathrm{NB}(p_t) = \frac{TP}{n} - \frac{FP}{n}\,\frac{p_t}{1 - p_t}

    where the rows with ``risk >= p_t`` are treated (Vickers & Elkin 2006).
    For a survival outcome (``horizon`` given), among the treated rows the
    event probability by ``horizon`` is Kaplan-Meier's (Vickers et al.
    2008): :math:`TP/n = P(r \ge p_t)\,(1 - \hat S(h \mid r \ge p_t))` and
    :math:`FP/n = P(r \ge p_t)\,\hat S(h \mid r \ge p_t)`. Each model is
    compared with treating everyone (``"all"``) and no one (``"none"``, 0).

    The risks must be **out-of-fold or external** predictions, never the
    in-sample predictions of a model fitted to the same rows (those are
    optimistic and so is their net benefit). For a ``VCPCR`` / ``VCPCRCV``,
    :func:`vcpcr.calibration.cross_val_predict_survival` gives each row's
    held-out survival at the horizon (the risk is one minus it); for a
    binary outcome, scikit-learn's ``cross_val_predict(model, X, y,
    method="predict_proba")[:, 1]``. On another cohort, the fitted model's
    own predictions.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, 2)
        A binary outcome coded 0/1, or with ``horizon`` a survival outcome
        ``(time, event)`` (2 columns, a DataFrame or a structured array).
    risk : array-like of shape (n_samples,) or dict of str to array-like
        Each row's predicted probability in [0, 1] of the event (by
        ``horizon`` for a survival outcome); several models as a dict of
        named arrays (any names but ``"all"`` and ``"none"``). pandas objects
        beside a pandas ``y`` must have its rows in its order.
    horizon : float, optional
        Time by which the risks are predicted; required for a survival
        outcome, between the first event time and the last follow-up time.
    thresholds : array-like of shape (n_thresholds,), default=0.01, ..., 0.99
        Threshold probabilities :math:`p_t`, each in (0, 1).
    n_bootstrap : int, default=200
        Bootstrap resamples of the rows for the percentile intervals; 0 omits
        the interval columns.
    alpha : float, default=0.05
        Level of the intervals (``1 - alpha`` coverage).
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the bootstrap.

    Returns
    -------
    pandas.DataFrame
        One row per model and threshold: ``model`` (the models' names, then
        ``"all"`` and ``"none"``), ``threshold``, ``net_benefit`` and, with
        ``n_bootstrap > 0``, ``ci_low`` and ``ci_high``.

    Raises
    ------
    ValueError
        For an outcome that is not 0/1 or a valid survival outcome, risks of
        another length, with NaN or outside [0, 1], pandas risks in another
        row order than ``y``, thresholds outside (0, 1), a horizon outside
        the follow-up, a negative ``n_bootstrap``.
    TypeError
        For a non-integer ``n_bootstrap`` or a non-numeric ``horizon``.

    See Also
    --------
    vcpcr.plotting.plot_decision_curve : Draws the result.
    vcpcr.calibration.cross_val_predict_survival : Out-of-fold survival.

    Notes
    -----
    The Kaplan-Meier estimate among the treated rows is read at ``horizon``
    from its last step before it: when every treated row is censored
    before ``horizon`` it is carried forward (as ``dcurves`` does). The
    intervals resample the rows with replacement (the risks held fixed, as
    for a model validated on these rows) and take the percentiles of each
    threshold's net benefit; their coverage was checked by simulation
    (``benchmarks/bench_decision_curve.py``).

    References
    ----------
    Vickers, A. J. & Elkin, E. B. (2006). Decision curve analysis: a novel
    method for evaluating prediction models. Medical Decision Making 26:565.

    Vickers, A. J., Cronin, A. M., Elkin, E. B. & Gonen, M. (2008).
    Extensions to decision curve analysis. BMC Medical Informatics and
    Decision Making 8:53.

    Examples
    --------
    >>> from vcpcr.validation import decision_curve
    >>> y = [0, 0, 1, 1]
    >>> risk = [0.1, 0.4, 0.35, 0.8]
    >>> dc = decision_curve(y, risk, thresholds=[0.3], n_bootstrap=0)
    >>> dc.round(4)
       model  threshold  net_benefit
    0  model        0.3       0.3929
    1    all        0.3       0.2857
    2   none        0.3       0.0000
    """
    owner = "decision_curve"
    n, tp_fp = _outcome(y, horizon, owner=owner)
    risks = _check_risks(risk, y, n, owner=owner)
    t = _check_thresholds(thresholds, owner=owner)
    check_scalar(n_bootstrap, "n_bootstrap", numbers.Integral, owner=owner, min_val=0)
    check_fraction(alpha, "alpha", owner=owner)
    rng = check_random_state(random_state)
    names = [*risks, *_RESERVED]
    curves = _curves(tp_fp, risks, np.ones(n), t)
    frame = pd.DataFrame(
        {
            "model": np.repeat(names, t.size),
            "threshold": np.tile(t, len(names)),
            "net_benefit": curves.reshape(-1),
        }
    )
    if n_bootstrap == 0:
        return frame
    draws = np.empty((int(n_bootstrap), *curves.shape))
    for b in range(int(n_bootstrap)):
        w = np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)
        draws[b] = _curves(tp_fp, risks, w, t)
    low, high = np.percentile(draws, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
    frame["ci_low"] = low.reshape(-1)
    frame["ci_high"] = high.reshape(-1)
    return frame
