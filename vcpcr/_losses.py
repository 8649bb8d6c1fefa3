"""Step 0's penalized losses, one per outcome family.

A :class:`PenalizedLoss` is what a family's step-0 weights are the
penalized fit of: its path of weights at a weight scheme's ``l1_ratio`` on
the family's weights target (the standardized response, 0/1 labels or
``(time, event)`` columns, see :meth:`vcpcr._families.Family.prepare`), the
smallest lasso penalty with all weights zero, and how it adjusts for
unpenalized covariates. A family holds its loss (``Family.loss``, as it
holds its distribution); the weight schemes (:data:`vcpcr._weights.SCHEMES`)
ask the family for it. This module knows nothing of the families: it sits
below them, on the weight solvers.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from vcpcr._solvers.cox import cox_lasso_delta_max, cox_lasso_path, cox_ridge_path
from vcpcr._solvers.enet import enet_binomial_path, enet_gaussian_path
from vcpcr._solvers.kkt import WeightsPath
from vcpcr._solvers.ridge import ridge_binomial_path, ridge_gaussian_path

__all__ = [
    "BinomialLoss",
    "CoxLoss",
    "GaussianLoss",
    "PenalizedLoss",
]


class PenalizedLoss(abc.ABC):
    """The penalized loss of a family's step-0 weights (glmnet's parametrization).

    To add a family, give it an instance of a subclass as its ``loss``
    (:attr:`vcpcr._families.Family.loss`).
    """

    #: Whether its penalized path may diverge on data that cannot be fitted
    #: (then :func:`vcpcr._weights.weights_for_grid` says why, in the
    #: estimators' terms).
    may_diverge: ClassVar[bool] = False

    @abc.abstractmethod
    def lasso_delta_max(self, Xs: NDArray[np.float64], target: Any) -> float:
        """Smallest lasso penalty with all weights zero, on standardized data."""

    @abc.abstractmethod
    def penalized_path(
        self,
        Xs: NDArray[np.float64],
        target: Any,
        deltas: NDArray[np.float64],
        l1_ratio: float,
        covariates: NDArray[np.float64] | None = None,
    ) -> WeightsPath:
        """Penalized regression weights for every delta (rows), with their KKT.

        ``l1_ratio`` is glmnet's ``alpha``: 0 is the ridge (solved exactly),
        1 the lasso, in between the elastic net. ``covariates``
        (standardized, shape (n_samples, c)) enter unpenalized; only where
        :meth:`takes_covariates` says so (the callers check it first, see
        :meth:`vcpcr._weights.WeightScheme.check_family`). The path reports
        each row's relative KKT violation
        (:func:`vcpcr._solvers.kkt.relative_kkt`) and warns where one
        exceeds :data:`~vcpcr._solvers.kkt.KKT_TOL`.
        """

    def takes_covariates(self, l1_ratio: float) -> bool:
        """Whether :meth:`penalized_path` adjusts for covariates at ``l1_ratio``.

        The elastic-net solvers carry them as an unpenalized block; the ridge
        ones (``l1_ratio=0``) have none.
        """
        return l1_ratio > 0

    def partial_out(
        self,
        Xs: NDArray[np.float64],
        target: Any,
        covariates: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], Any, NDArray[np.float64] | None]:
        """Take unpenalized covariates out of step 0 where that is exact.

        Returns ``(Xs, target, covariates)`` for the weight solvers: the
        problem unchanged (the solver then carries the covariates as an
        unpenalized block), or (gaussian) the residuals of ``Xs`` and the
        target after regressing them on the covariates and ``None``.
        """
        return Xs, target, covariates


class _MeanLoss(PenalizedLoss):
    """A loss whose gradient at the null model is ``-X'(y - ybar) / n``."""

    def lasso_delta_max(self, Xs: NDArray[np.float64], target: Any) -> float:
        """``max_j |x_j'(y - ybar)| / n`` (binomial: at the null model)."""
        return float(np.abs(Xs.T @ (target - target.mean())).max() / Xs.shape[0])


class GaussianLoss(_MeanLoss):
    """Least squares: closed-form ridge, coordinate descent for the l1 part."""

    def penalized_path(
        self,
        Xs: NDArray[np.float64],
        target: Any,
        deltas: NDArray[np.float64],
        l1_ratio: float,
        covariates: NDArray[np.float64] | None = None,
    ) -> WeightsPath:
        """Closed-form ridge, or coordinate descent along the path of deltas.

        Covariates are partialled out first (:meth:`partial_out`).
        """
        if covariates is not None:
            Xs, target, _ = self.partial_out(Xs, target, covariates)
        if l1_ratio == 0:
            path = ridge_gaussian_path(Xs, target, deltas, return_kkt=True)
        else:
            path = enet_gaussian_path(Xs, target, deltas, l1_ratio, return_kkt=True)
        assert isinstance(path, WeightsPath)  # return_kkt
        return path

    def takes_covariates(self, l1_ratio: float) -> bool:
        """Return True: covariates are partialled out exactly, whatever the penalty."""
        return True

    def partial_out(
        self,
        Xs: NDArray[np.float64],
        target: Any,
        covariates: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], Any, NDArray[np.float64] | None]:
        """Residualize ``Xs`` and the target on ``[1, covariates]`` (exact).

        Frisch-Waugh-Lovell: the penalty does not involve the covariates'
        coefficients, so profiling them out of the least-squares loss leaves
        the same problem in the features on the residuals.
        """
        Q = np.column_stack([np.ones(Xs.shape[0]), covariates])
        R = np.column_stack([target, Xs])
        R = R - Q @ np.linalg.lstsq(Q, R, rcond=None)[0]
        return R[:, 1:], R[:, 0], None


class BinomialLoss(_MeanLoss):
    """The logistic log-likelihood with an unpenalized intercept."""

    def penalized_path(
        self,
        Xs: NDArray[np.float64],
        target: Any,
        deltas: NDArray[np.float64],
        l1_ratio: float,
        covariates: NDArray[np.float64] | None = None,
    ) -> WeightsPath:
        """Ridge logistic regression, or proximal Newton along the path.

        The ridge is Newton's method in the row space of ``Xs``; the elastic
        net, coordinate descent on its quadratic approximations.
        """
        if l1_ratio == 0:
            path, _ = ridge_binomial_path(Xs, target, deltas, return_kkt=True)
        else:
            path, _ = enet_binomial_path(
                Xs, target, deltas, l1_ratio, covariates=covariates, return_kkt=True
            )
        assert isinstance(path, WeightsPath)  # return_kkt
        return path


class CoxLoss(PenalizedLoss):
    """Breslow's partial likelihood: ridge Cox, or Coxnet."""

    may_diverge = True

    def lasso_delta_max(self, Xs: NDArray[np.float64], target: Any) -> float:
        """From the gradient of the partial likelihood at zero.

        ``target`` is the prepared ``(time, event)`` columns
        (:meth:`vcpcr._families.Cox.prepare`), not validated again.
        """
        time, event = target[:, 0], target[:, 1] == 1
        return cox_lasso_delta_max(Xs, time, event)

    def penalized_path(
        self,
        Xs: NDArray[np.float64],
        target: Any,
        deltas: NDArray[np.float64],
        l1_ratio: float,
        covariates: NDArray[np.float64] | None = None,
    ) -> WeightsPath:
        """Ridge Cox (Newton in the row space), or Coxnet along the path."""
        time, event = target[:, 0], target[:, 1] == 1
        if l1_ratio == 0:
            path = cox_ridge_path(Xs, time, event, deltas, return_kkt=True)
        else:
            path = cox_lasso_path(
                Xs,
                time,
                event,
                deltas,
                l1_ratio=l1_ratio,
                covariates=covariates,
                return_kkt=True,
            )
        assert isinstance(path, WeightsPath)  # return_kkt
        return path
