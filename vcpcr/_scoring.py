"""VCPCRCV's ``scoring`` parameter: the scorers by name, checked against the family.

``get_scorer`` turns the ``scoring`` argument into a scorer
``(estimator, X, y) -> float`` (higher is better), after checking that a
name fits the family; :func:`batch_scoring` says which route the folds
take. Both ask the family for its CV scorings (``Family.scoring``, a
:class:`vcpcr._family_scoring.FamilyScoring`: its own scoring, the batched
and the per-fold ones). The survival scorers wrap ``sksurv.metrics`` on a
time grid taken from the training data of the estimator
(:func:`survival_time_grid`). The pooled criterion is
:mod:`vcpcr._solvers.pooled`'s.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.metrics import check_scoring, get_scorer_names

from vcpcr._checks import check_survival
from vcpcr._families import FAMILIES, Family
from vcpcr._family_scoring import Scorer
from vcpcr._solvers.pooled import POOLED
from vcpcr.exceptions import VCPCRWarning, user_stacklevel

__all__ = [
    "SURVIVAL_SCORERS",
    "batch_scoring",
    "get_scorer",
    "mean_cumulative_dynamic_auc",
    "neg_integrated_brier_score",
    "scoring_name",
    "survival_time_grid",
]


def survival_time_grid(
    train: tuple[NDArray[np.float64], NDArray[np.bool_]],
    test: tuple[NDArray[np.float64], NDArray[np.bool_]],
) -> NDArray[np.float64]:
    """Return the times at which a survival scorer evaluates a model.

    The distinct event times ``t`` of the training data with
    ``first test event time <= t < min(last test time, last training time)``:
    scikit-survival requires times within the test follow-up ``[min, max)``;
    from the first test event on, every time has a case and a control (the
    time-dependent AUC is defined); before the last training time, the
    censoring distribution (estimated on the training data) is known.

    Parameters
    ----------
    train, test : tuple of ndarray
        ``(time, event)`` of the training and the test data.

    Returns
    -------
    ndarray
        Increasing times (possibly empty).
    """
    train_time, train_event = train
    test_time, test_event = test
    end = min(test_time.max(), train_time.max())
    times = np.unique(train_time[train_event])
    return times[(times >= test_time[test_event].min()) & (times < end)]


def _survival_data(
    estimator: Any, y: Any
) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]] | None:
    """Training and test outcomes as sksurv arrays, and the time grid.

    Test observations after the last training time ``tau`` enter as censored
    at ``tau`` (sksurv cannot weight them: the censoring distribution is
    unknown beyond ``tau``); at the grid's times, all ``< tau``, they are
    controls either way and their own weights are unused, so no score
    changes. None (with a warning) when fewer than two times remain.
    """
    from sksurv.util import Surv

    fitted = estimator.result_  # lifelines' CoxPHFitter keeps its data
    train = (
        fitted.durations.to_numpy(dtype=np.float64),
        fitted.event_observed.to_numpy(dtype=bool),
    )
    time, event = check_survival(y)
    times = survival_time_grid(train, (time, event))
    if times.size < 2:
        warnings.warn(
            f"A survival score needs two training event times within the test "
            f"follow-up; {times.size} found (times between the first test event "
            f"and min(last test time, last training time)). The score is NaN. "
            f"Use fewer folds (cv).",
            VCPCRWarning,
            stacklevel=user_stacklevel(),
        )
        return None
    tau = train[0].max()
    beyond = time > tau
    test = Surv.from_arrays(event & ~beyond, np.where(beyond, tau, time))
    return Surv.from_arrays(train[1], train[0]), test, times


def neg_integrated_brier_score(estimator: Any, X: Any, y: Any) -> float:
    """Return minus the integrated Brier score of a Cox model's survival curves.

    ``sksurv.metrics.integrated_brier_score`` (inverse probability of
    censoring weights from the model's training data) of
    ``estimator.predict_survival_function(X, return_array=True, times=...)``
    on the times of :func:`survival_time_grid`. Greater is better.

    Parameters
    ----------
    estimator : VCPCR
        A fitted ``VCPCR(family="cox")``.
    X : array-like of shape (n_samples, n_features)
        Test data.
    y : survival outcome of shape (n_samples,)
        Test outcome.

    Returns
    -------
    float
        ``-IBS``; NaN (with a warning) when fewer than two times qualify.
    """
    from sksurv.metrics import integrated_brier_score

    data = _survival_data(estimator, y)
    if data is None:
        return float("nan")
    train, test, times = data
    surv = estimator.predict_survival_function(X, return_array=True, times=times)
    return -float(integrated_brier_score(train, test, surv, times))


def mean_cumulative_dynamic_auc(estimator: Any, X: Any, y: Any) -> float:
    """Return the mean time-dependent (cumulative/dynamic) AUC of a Cox model.

    The mean AUC of ``sksurv.metrics.cumulative_dynamic_auc`` (weighted by
    the test data's Kaplan-Meier estimate, with inverse probability of
    censoring weights from the model's training data) of the linear
    predictor ``estimator.predict_log_partial_hazard(X)``, on the times of
    :func:`survival_time_grid`. Greater is better.

    Parameters
    ----------
    estimator : VCPCR
        A fitted ``VCPCR(family="cox")``.
    X : array-like of shape (n_samples, n_features)
        Test data.
    y : survival outcome of shape (n_samples,)
        Test outcome.

    Returns
    -------
    float
        The mean AUC; NaN (with a warning) when fewer than two times qualify.
    """
    from sksurv.metrics import cumulative_dynamic_auc

    data = _survival_data(estimator, y)
    if data is None:
        return float("nan")
    train, test, times = data
    risk = estimator.predict_log_partial_hazard(X)
    return float(cumulative_dynamic_auc(train, test, risk, times)[1])


#: Survival scorers by name (scikit-learn style: greater is better).
SURVIVAL_SCORERS: dict[str, Scorer] = {
    "neg_integrated_brier_score": neg_integrated_brier_score,
    "mean_cumulative_dynamic_auc": mean_cumulative_dynamic_auc,
}


def scoring_name(scoring: Any, family: Family) -> str:
    """Return a display name of the scoring used for ``family``."""
    return str(scoring or family.scoring.scoring_name)


def batch_scoring(scoring: Any, family: Family) -> str | None:
    """Name of the scoring if ``family`` scores it vectorized, else None.

    :data:`vcpcr._solvers.pooled.POOLED` gives the family's default batched
    scoring. ``VCPCRCV`` asks this for its fold-mean criterion only: under
    the pooled one the folds compute no score, their batched step-2 fits
    give the out-of-fold linear predictors it pools
    (:class:`vcpcr._criterion.PooledPredictors`).
    """
    if scoring is not None and not isinstance(scoring, str):
        return None  # a callable: the per-point estimator path
    if scoring == POOLED:
        scoring = None
    name = scoring_name(scoring, family)
    own = family.scoring
    return name if name in own.batch_scorings or name in own.fold_scorings else None


def _choices(family: Family) -> str:
    """Return the scorings ``family`` takes, for an error message."""
    scorings = family.scoring
    own = [
        scorings.scoring_name,
        POOLED,
        *scorings.batch_scorings,
        *scorings.fold_scorings,
    ]
    if family.survival:
        own += list(SURVIVAL_SCORERS)
        rest = "or a callable scorer(estimator, X, y)"
    else:
        classifier = family.estimator_type == "classifier"
        task = "classification" if classifier else "regression"
        rest = f"any other scikit-learn {task} scorer, or a callable"
    return ", ".join(repr(n) for n in dict.fromkeys(own)) + ", " + rest


def get_scorer(scoring: Any, family: Family, estimator: Any) -> Scorer:
    """Return the scorer of ``scoring`` for ``family`` (higher is better).

    ``None`` or the family's default name gives its default (for cox, the
    estimator's ``score``: Harrell's concordance); a survival name gives a
    scorer of :data:`SURVIVAL_SCORERS`, a name of the family's
    ``fold_scorings`` its scorer; other names and callables go to
    scikit-learn's ``check_scoring`` on ``estimator``. A name that belongs
    to another family, or any scikit-learn name for a survival family, is a
    ValueError naming the valid choices.
    """
    own = family.scoring
    if scoring is None or scoring in (own.scoring_name, POOLED):
        # the pooled criterion's folds fall back to the default per point
        scoring = own.default_scoring
    if not isinstance(scoring, str):
        return check_scoring(estimator, scoring=scoring)
    if scoring in own.fold_scorings:
        return own.fold_scorings[scoring]
    if family.survival and scoring in SURVIVAL_SCORERS:
        return SURVIVAL_SCORERS[scoring]
    others = set(SURVIVAL_SCORERS).union(
        *(f.scoring.batch_scorings for f in FAMILIES.values() if f.scoring is not own),
        *(f.scoring.fold_scorings for f in FAMILIES.values() if f.scoring is not own),
    )
    if family.survival or (scoring in others and scoring not in own.batch_scorings):
        raise ValueError(
            f"scoring={scoring!r} does not fit family={family.name!r}. Valid "
            f"choices: {_choices(family)}."
        )
    if scoring not in own.batch_scorings and scoring not in get_scorer_names():
        raise ValueError(
            f"scoring={scoring!r} is not a known scoring. For "
            f"family={family.name!r}: {_choices(family)} (the names: "
            f"sklearn.metrics.get_scorer_names())."
        )
    scorer = check_scoring(estimator, scoring=scoring)
    methods = getattr(scorer, "_response_method", "predict")
    methods = (methods,) if isinstance(methods, str) else tuple(methods)
    if not any(hasattr(estimator, m) for m in methods):
        raise ValueError(
            f"scoring={scoring!r} needs {' or '.join(methods)}, which a "
            f"family={family.name!r} model does not have. Valid choices: "
            f"{_choices(family)}."
        )
    return scorer
