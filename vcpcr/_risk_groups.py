"""Risk groups of a Cox model: quantiles of a (cross-validated) linear predictor.

The computation behind :func:`vcpcr.plotting.plot_risk_groups`: the linear
predictor of every sample (cross-validated on the training data, as
scikit-learn's ``cross_val_predict``, or from the fitted model on test data),
its split at cut-offs (by default the quantiles of the training predictor,
so that new data are grouped as the training data were), and lifelines'
log-rank test of the groups.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.model_selection import KFold, check_cv, cross_val_predict
from sklearn.utils.validation import check_is_fitted

from vcpcr._checks import (
    check_array,
    check_choice,
    check_cv_param,
    check_split,
    check_survival,
)
from vcpcr._input import check_same_rows
from vcpcr._result import TupleResult

__all__ = ["RiskGroups", "risk_groups"]


@dataclass(frozen=True, eq=False, repr=False)
class RiskGroups(TupleResult):
    """Risk groups of a Cox model on some data.

    Attributes
    ----------
    time, event : ndarray of shape (n_samples,)
        The survival outcome.
    linear_predictor : ndarray of shape (n_samples,)
        Log relative risk per sample (cross-validated when ``n_splits``).
    group : ndarray of int of shape (n_samples,)
        Risk group, 0 = lowest risk.
    labels : list of str
        A name per group: its quantile range of the predictor (``"0-50%"``),
        or its range of values for given cut-offs.
    p_value, test_statistic : float
        lifelines' ``multivariate_logrank_test`` of the groups.
    n_splits : int or None
        Folds of the cross-validated predictor; None: the fitted model's.
    cutoffs : ndarray of shape (n_groups - 1,)
        The cut points on the linear predictor's scale.
    cut_at : {"training", "data", "given"}
        Where they come from: the quantiles of the training predictor (the
        fitted model's on its training rows, or the cross-validated one on
        the training data), of this data's predictor, or the caller's values.
    """

    time: NDArray[np.float64]
    event: NDArray[np.bool_]
    linear_predictor: NDArray[np.float64]
    group: NDArray[np.intp]
    labels: list[str]
    p_value: float
    test_statistic: float
    n_splits: int | None
    cutoffs: NDArray[np.float64]
    cut_at: str


def _check_quantiles(quantiles: Any) -> NDArray[np.float64]:
    given = np.atleast_1d(quantiles)
    q = check_array(given, "quantiles", ensure_2d=False) if given.size else given
    if q.size == 0 or np.any((q <= 0) | (q >= 1)) or np.any(np.diff(q) <= 0):
        raise ValueError(
            f"quantiles must be increasing values strictly between 0 and 1 (the "
            f"cut points of the groups, e.g. 0.5 or [1/3, 2/3]). Got "
            f"{given.tolist()!r} instead."
        )
    return q


def _check_model(model: Any) -> None:
    check_is_fitted(model)
    if not hasattr(model, "predict_log_partial_hazard"):
        raise ValueError(
            f"Risk groups need a fitted Cox model (family='cox'); got "
            f"{type(model).__name__}(family={getattr(model, 'family', None)!r})."
        )


def _cut_points(
    model: Any,
    eta: NDArray[np.float64],
    q: NDArray[np.float64],
    cutoffs: Any,
    cross_validated: bool,
) -> tuple[NDArray[np.float64], str]:
    """Return the cut points of the groups and where they come from."""
    if not isinstance(cutoffs, str):
        given = np.atleast_1d(cutoffs)
        cuts = check_array(given, "cutoffs", ensure_2d=False) if given.size else given
        if cuts.size == 0 or np.any(np.diff(cuts) <= 0):
            raise ValueError(
                f"cutoffs must be 'training', 'data' or increasing values of the "
                f"linear predictor (e.g. a published cut-off). Got "
                f"{given.tolist()!r} instead."
            )
        return cuts, "given"
    check_choice(cutoffs, "cutoffs", ("training", "data"), owner="risk_groups")
    if cutoffs == "data":
        return np.quantile(eta, q), "data"
    if cross_validated:  # the data are the training data: their own quantiles
        return np.quantile(eta, q), "training"
    train = getattr(model, "train_linear_predictor_", None)
    if train is None:
        raise ValueError(
            f"cutoffs='training' cuts new data at the quantiles of the training "
            f"rows' linear predictor, which {type(model).__name__} does not "
            f"keep (train_linear_predictor_). Pass cutoffs='data' to cut at this "
            f"data's own quantiles, or the cut points themselves."
        )
    return np.quantile(np.asarray(train, dtype=np.float64), q), "training"


def _value_labels(cuts: NDArray[np.float64]) -> list[str]:
    """Group names for given cut points: ``"eta <= c"``, ..., ``"eta > c"``."""
    bounds = [f"{c:.3g}" for c in cuts]
    inner = [f"{lo} < eta <= {hi}" for lo, hi in pairwise(bounds)]
    return [f"eta <= {bounds[0]}", *inner, f"eta > {bounds[-1]}"]


def _splitter(cv: Any, n: int, random_state: Any) -> Any:
    """``cv``'s splitter (None, the fitted model for test data, is the caller's)."""
    check_cv_param(cv, n, "risk_groups")
    if isinstance(cv, numbers.Integral):
        return KFold(int(cv), shuffle=True, random_state=random_state)
    return check_cv(cv)


def risk_groups(
    model: Any,
    X: Any,
    y: ArrayLike | None = None,
    *,
    cv: Any = 5,
    quantiles: ArrayLike = 0.5,
    cutoffs: Any = "training",
    random_state: Any = 0,
) -> RiskGroups:
    """Split samples into risk groups at quantiles of the linear predictor.

    See :func:`vcpcr.plotting.plot_risk_groups` (the parameters are its own).

    Returns
    -------
    RiskGroups
        The predictor, the groups and their log-rank test.
    """
    from lifelines.statistics import multivariate_logrank_test

    _check_model(model)
    q = _check_quantiles(quantiles)
    formula = getattr(model, "formula", None)
    if y is None:
        if formula is None:
            raise ValueError("y is required (or a model fitted with formula=).")
        from vcpcr._formula import formula_outcome

        y = formula_outcome(formula, X)
    check_same_rows(X, y)
    time, event = check_survival(y)
    if cv is None:
        eta = model.predict_log_partial_hazard(X)
        n_splits = None
    else:
        splitter = _splitter(cv, event.size, random_state)
        # cross_val_predict takes only scikit-learn's method names: the
        # partial hazard exp(eta) of ``predict``, whose log is eta.
        # Split on the event indicator: StratifiedKFold stratifies on events.
        folds = check_split(list(splitter.split(X, event)), event.size, "risk_groups")
        risk = cross_val_predict(
            clone(model),
            X,
            None if formula is not None else y,  # a formula holds its outcome
            cv=folds,
        )
        eta = np.log(risk)
        n_splits = len(folds)
    eta = np.asarray(eta, dtype=np.float64)
    cuts, cut_at = _cut_points(model, eta, q, cutoffs, n_splits is not None)
    group = np.searchsorted(cuts, eta, side="left").astype(np.intp)
    counts = np.bincount(group, minlength=cuts.size + 1)
    if np.any(counts == 0):
        _empty_group(eta, cuts, cut_at, counts, q)
    if cut_at == "given":
        labels = _value_labels(cuts)
    else:
        edges = np.r_[0.0, q, 1.0]
        labels = [f"{100 * lo:.0f}-{100 * hi:.0f}%" for lo, hi in pairwise(edges)]
    test = multivariate_logrank_test(time, group, event)
    return RiskGroups(
        time,
        event,
        eta,
        group,
        labels,
        float(test.p_value),
        float(test.test_statistic),
        n_splits,
        cuts,
        cut_at,
    )


def _empty_group(
    eta: NDArray[np.float64],
    cuts: NDArray[np.float64],
    cut_at: str,
    counts: NDArray[np.intp],
    q: NDArray[np.float64],
) -> None:
    """Raise the error of a group without samples, with its likely cause."""
    if np.unique(eta).size <= cuts.size:
        raise ValueError(
            f"The linear predictor takes {np.unique(eta).size} distinct value(s), "
            f"too few for {cuts.size + 1} groups (group sizes "
            f"{counts.tolist()}); a model without clusters predicts one risk. "
            f"Use fewer groups or a model that selects features."
        )
    where = {
        "training": f"the training quantiles {q.tolist()}",
        "given": "the given cutoffs",
        "data": f"quantiles {q.tolist()}",
    }[cut_at]
    raise ValueError(
        f"No sample falls in some group at {where} (cut points "
        f"{np.round(cuts, 4).tolist()}, group sizes {counts.tolist()}; this "
        f"data's linear predictor ranges from {eta.min():.4g} to "
        f"{eta.max():.4g}). Use fewer groups, more samples, or "
        f"cutoffs='data' to cut at this data's own quantiles."
    )
