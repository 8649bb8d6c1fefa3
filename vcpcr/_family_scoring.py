"""A family's CV scorings: its own scoring, the batched and the per-fold ones.

A :class:`FamilyScoring` is what a family's CV folds are scored with, held
by the family (``Family.scoring``, as it holds its distribution and its
step-0 loss): its own scoring, the scorings it computes for a stack of fits
at once on a test fold (:meth:`FamilyScoring.score_batch`, on the vectorized
metrics of :mod:`vcpcr._solvers.batch_scores`) and those that need the
fold's training rows too (:meth:`FamilyScoring.score_fold`, the Cox
cross-validated partial likelihood, with its fold weight). This module knows
nothing of the families: it sits below them, on the kernels;
:mod:`vcpcr._scoring` turns a ``scoring`` parameter into a scorer by asking
the family for these.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from vcpcr._checks import check_survival
from vcpcr._solvers import batch_scores
from vcpcr._solvers.distributions import PROPORTIONAL_HAZARDS
from vcpcr._solvers.pooled import POOLED

__all__ = [
    "BinomialScoring",
    "CoxScoring",
    "FamilyScoring",
    "GaussianScoring",
    "Scorer",
    "neg_partial_likelihood_deviance",
]

#: A scorer ``(estimator, X, y) -> float``, higher is better (scikit-learn's).
Scorer = Callable[[Any, Any, Any], float]

#: A vectorized score (see :mod:`vcpcr._solvers.batch_scores`): None where it declines.
_Metric = Callable[..., NDArray[np.float64] | None]


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

    To add a family, give it an instance of a subclass as its ``scoring``
    (:attr:`vcpcr._families.Family.scoring`), or of one of the built-in
    ones below: its own :attr:`default_scoring` (a scikit-learn scorer name,
    or None for the estimator's ``score``) and :attr:`scoring_name`, and its
    vectorized scorings (:attr:`batch_scorings`, possibly empty, and
    :meth:`_batch_score`); a scoring the family does not vectorize is
    scored per grid point on each fold model.
    """

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
            f"scoring={scoring!r} is not a fold scoring of {type(self).__name__}; "
            f"its fold scorings: {list(self.fold_scorings)}."
        )

    def fold_weight(self, test_outcome: NDArray[np.float64]) -> float:
        """Weight of a fold in the mean of a fold scoring (its test rows).

        ``test_outcome`` is the test rows' prepared outcome.
        """
        return float(len(test_outcome))


class GaussianScoring(FamilyScoring):
    """Regression errors and R^2 of the predicted means."""

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
