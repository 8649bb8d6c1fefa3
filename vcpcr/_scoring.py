"""Every CV criterion of VCPCRCV: the scorers by name, batched and per fold.

A family's CV scorings are a :class:`FamilyScoring` registered under its
name in :data:`SCORINGS` (:func:`scoring_of`): its own scoring, the
scorings it computes for a stack of fits at once on a test fold
(:meth:`FamilyScoring.score_batch`, on the vectorized metrics of
:mod:`vcpcr._solvers.batch_scores`) and those that need the fold's training rows too
(:meth:`FamilyScoring.score_fold`, the Cox cross-validated partial
likelihood, with its fold weight). :func:`batch_scoring` says which route
the folds take. ``get_scorer`` turns the ``scoring`` argument into a scorer
``(estimator, X, y) -> float`` (higher is better), after checking that a
name fits the family. The survival scorers wrap ``sksurv.metrics`` on a time
grid taken from the training data of the estimator
(:func:`survival_time_grid`). The pooled criterion is :mod:`vcpcr._solvers.pooled`'s.
"""

from __future__ import annotations

import abc
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.metrics import check_scoring, get_scorer_names

from vcpcr._checks import check_survival
from vcpcr._families import Family, registered
from vcpcr._solvers import batch_scores
from vcpcr._solvers.distributions import PROPORTIONAL_HAZARDS
from vcpcr._solvers.pooled import POOLED
from vcpcr.exceptions import VCPCRWarning, user_stacklevel

__all__ = [
    "DEFAULT_SCORING",
    "SCORINGS",
    "SURVIVAL_SCORERS",
    "BinomialScoring",
    "CoxScoring",
    "FamilyScoring",
    "GaussianScoring",
    "batch_scoring",
    "get_scorer",
    "mean_cumulative_dynamic_auc",
    "neg_integrated_brier_score",
    "neg_partial_likelihood_deviance",
    "scoring_name",
    "scoring_of",
    "survival_time_grid",
]

Scorer = Callable[[Any, Any, Any], float]

#: A vectorized score (see :mod:`vcpcr._solvers.batch_scores`): None where it declines.
_Metric = Callable[..., NDArray[np.float64] | None]


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


def neg_partial_likelihood_deviance(estimator: Any, X: Any, y: Any) -> float:
    """Scorer: ``2 l(eta) / d``, minus the partial-likelihood deviance per event.

    ``l`` is the Efron log partial likelihood of ``(X, y)`` at the fitted
    model's linear predictor and ``d`` the number of events. In
    :class:`VCPCRCV` the name ``"neg_partial_likelihood_deviance"`` scores
    each fold by the cross-validated partial likelihood instead (see
    :meth:`CoxScoring.score_fold`).
    """
    time, event = check_survival(y)
    eta = np.asarray(estimator.predict_log_partial_hazard(X), dtype=np.float64)
    loglik = PROPORTIONAL_HAZARDS.log_likelihood(eta[None, :], time, event)[0]
    return float(2.0 * loglik / event.sum())


class FamilyScoring(abc.ABC):
    """The CV scorings of a family: its default, the batched and the fold ones.

    To add a family, register its scorings in :data:`SCORINGS` under the
    family's name.
    """

    #: The family's name (the key in :data:`SCORINGS`).
    name: ClassVar[str]
    #: The family's own scoring, VCPCRCV's with ``scoring=None`` (a
    #: scikit-learn scorer name); None: the estimator's ``score``.
    default_scoring: ClassVar[str | None]
    #: Display name of the family's own scoring.
    scoring_name: ClassVar[str]
    #: Scorings that :meth:`score_batch` computes (scikit-learn scorer names).
    batch_scorings: ClassVar[dict[str, _Metric]]
    #: Scorings of a CV fold that need its training part too (see
    #: :meth:`score_fold`), with their scorer for :meth:`VCPCRCV.score`.
    fold_scorings: ClassVar[dict[str, Scorer]] = {}
    #: The scorings whose value on ``y * 2**e`` is their value on ``y`` times
    #: ``2**(e * degree)`` (name -> degree): VCPCRCV scores them on a unit
    #: scale (see ``vcpcr._criterion.criterion_of``); empty: the folds see ``y``.
    unit_degrees: ClassVar[dict[str, int]] = {}

    def score_batch(
        self, scoring: str, eta: NDArray[np.float64], outcome: NDArray[np.float64]
    ) -> NDArray[np.float64] | None:
        """Scores of the linear predictors ``eta`` (B, n) on the test fold.

        ``outcome`` is the test rows' prepared outcome (the rows of
        :meth:`vcpcr._families.Family.prepare`'s ``outcome``: validated once,
        by the fit). None when ``scoring`` is not vectorized here, or where
        the scorer would raise or warn on this fold (the caller then scores
        per point).
        """
        metric = self.batch_scorings.get(scoring)
        if metric is None:
            return None
        return self._batch_score(metric, eta, outcome)

    @abc.abstractmethod
    def _batch_score(
        self, metric: _Metric, eta: NDArray[np.float64], outcome: NDArray[np.float64]
    ) -> NDArray[np.float64] | None:
        """Apply a vectorized ``metric`` to ``eta`` and the prepared test outcome."""

    def score_fold(
        self,
        scoring: str,
        eta_train: NDArray[np.float64],
        train_outcome: Any,
        eta_test: NDArray[np.float64],
        test_outcome: NDArray[np.float64],
        strata: NDArray[np.intp] | None = None,
    ) -> NDArray[np.float64]:
        """Scores (B,) of a fold scoring (a name in :attr:`fold_scorings`).

        ``train_outcome`` and ``test_outcome`` are the parts' prepared
        outcomes; ``strata`` labels the fold's rows (training rows, then
        test rows) by stratum when the model is stratified.
        """
        raise ValueError(
            f"scoring={scoring!r} is not defined for family={self.name!r}."
        )

    def fold_weight(self, test_outcome: NDArray[np.float64]) -> float:
        """Weight of a fold in the mean of a fold scoring (its test rows).

        ``test_outcome`` is the test rows' prepared outcome.
        """
        return float(len(test_outcome))


class GaussianScoring(FamilyScoring):
    """Regression errors and R^2 of the predicted means."""

    name = "gaussian"
    default_scoring = scoring_name = "neg_mean_squared_error"
    batch_scorings: ClassVar[dict[str, _Metric]] = {
        "neg_mean_squared_error": batch_scores.neg_mean_squared_error,
        "neg_root_mean_squared_error": batch_scores.neg_root_mean_squared_error,
        "neg_mean_absolute_error": batch_scores.neg_mean_absolute_error,
        "r2": batch_scores.r2,
    }
    unit_degrees: ClassVar[dict[str, int]] = {
        "neg_mean_squared_error": 2,
        POOLED: 2,  # the gaussian pooled deviance is a mean squared error
        "neg_root_mean_squared_error": 1,
        "neg_mean_absolute_error": 1,
        "r2": 0,
    }

    def _batch_score(
        self, metric: _Metric, eta: NDArray[np.float64], outcome: NDArray[np.float64]
    ) -> NDArray[np.float64] | None:
        return metric(eta, outcome)


class BinomialScoring(FamilyScoring):
    """Log-loss, accuracy and AUC of the decision function."""

    name = "binomial"
    default_scoring = scoring_name = "neg_log_loss"
    batch_scorings: ClassVar[dict[str, _Metric]] = {
        "neg_log_loss": batch_scores.neg_log_loss,
        "accuracy": batch_scores.accuracy,
        "roc_auc": batch_scores.roc_auc,
    }

    def _batch_score(
        self, metric: _Metric, eta: NDArray[np.float64], outcome: NDArray[np.float64]
    ) -> NDArray[np.float64] | None:
        return metric(eta, outcome == 1)  # the 0/1 outcome: classes[1] is 1


class CoxScoring(FamilyScoring):
    """Harrell's concordance, or the cross-validated partial likelihood."""

    name = "cox"
    default_scoring = None  # the estimator's score
    scoring_name = "concordance"
    #: The estimator's score (Harrell's concordance), VCPCRCV's with
    #: ``scoring=None`` (its default before the pooled deviance): the
    #: cross-validated partial likelihood (``fold_scorings``) rejects noise
    #: better but lost 0.07 of held-out C on six real cohorts
    #: (docs/survival.md), so it is offered, not the default.
    batch_scorings: ClassVar[dict[str, _Metric]] = {
        "concordance": batch_scores.concordance
    }
    fold_scorings: ClassVar[dict[str, Scorer]] = {
        "neg_partial_likelihood_deviance": neg_partial_likelihood_deviance
    }

    def _batch_score(
        self, metric: _Metric, eta: NDArray[np.float64], outcome: NDArray[np.float64]
    ) -> NDArray[np.float64] | None:
        # The risk ranks as exp(eta) does, without its overflow to tied infs.
        return metric(eta, outcome[:, 0], outcome[:, 1] == 1)

    def score_fold(
        self,
        scoring: str,
        eta_train: NDArray[np.float64],
        train_outcome: Any,
        eta_test: NDArray[np.float64],
        test_outcome: NDArray[np.float64],
        strata: NDArray[np.intp] | None = None,
    ) -> NDArray[np.float64]:
        """Cross-validated partial likelihood of a fold, per event (cv.glmnet).

        ``2 (l(b) - l_train(b)) / d_k``: the Efron log partial likelihood of
        all the fold's rows (training and test) minus that of its training
        rows, at the coefficients fitted on the training rows (Verweij & van
        Houwelingen, 1993), over the test part's number of events ``d_k``,
        which is the fold's weight in the mean (cv.glmnet's ``type.measure =
        "deviance"``, grouped, negated so that greater is better). With
        ``strata`` (labels of the training rows, then the test rows), both
        are stratified partial likelihoods: the sum over strata of each
        stratum's Efron log partial likelihood.
        """
        if scoring not in self.fold_scorings:
            return super().score_fold(
                scoring, eta_train, train_outcome, eta_test, test_outcome, strata
            )
        time, event = test_outcome[:, 0], test_outcome[:, 1] > 0
        t_train, e_train = train_outcome[:, 0], train_outcome[:, 1] > 0
        n = t_train.size
        full = PROPORTIONAL_HAZARDS.log_likelihood(
            np.hstack([eta_train, eta_test]),
            np.concatenate([t_train, time]),
            np.concatenate([e_train, event]),
            strata,
        )
        part = PROPORTIONAL_HAZARDS.log_likelihood(
            eta_train, t_train, e_train, None if strata is None else strata[:n]
        )
        return 2.0 * (full - part) / self.fold_weight(test_outcome)

    def fold_weight(self, test_outcome: NDArray[np.float64]) -> float:
        """Return the number of events in the test part (cv.glmnet's fold weight)."""
        return float(np.sum(test_outcome[:, 1] > 0))


#: The CV scorings by family name (the families' names in
#: :data:`vcpcr._families.FAMILIES`).
SCORINGS: dict[str, FamilyScoring] = {
    scoring.name: scoring
    for scoring in (GaussianScoring(), BinomialScoring(), CoxScoring())
}

#: Each family's own scorer, VCPCRCV's with ``scoring=None`` (scikit-learn
#: scorer names; higher is better; None: the estimator's score, e.g.
#: Harrell's concordance index for cox).
DEFAULT_SCORING = {name: s.default_scoring for name, s in SCORINGS.items()}


def scoring_of(family: Family) -> FamilyScoring:
    """Return the CV scorings of ``family``."""
    return registered(
        SCORINGS, family, "CV scorings (a FamilyScoring)", "vcpcr._scoring.SCORINGS"
    )


def scoring_name(scoring: Any, family: Family) -> str:
    """Return a display name of the scoring used for ``family``."""
    return str(scoring or scoring_of(family).scoring_name)


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
    own = scoring_of(family)
    return name if name in own.batch_scorings or name in own.fold_scorings else None


def _choices(family: Family) -> str:
    """Return the scorings ``family`` takes, for an error message."""
    scorings = scoring_of(family)
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
    own = scoring_of(family)
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
        *(s.batch_scorings for s in SCORINGS.values() if s is not own),
        *(s.fold_scorings for s in SCORINGS.values() if s is not own),
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
