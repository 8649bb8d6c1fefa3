"""Warnings raised by vcpcr.

All warnings derive from :class:`VCPCRWarning` so that a user can silence or
escalate every vcpcr warning at once with ``warnings.simplefilter``.
"""

from __future__ import annotations

__all__ = ["ConvergenceWarning", "SeparationWarning", "VCPCRWarning"]


class VCPCRWarning(UserWarning):
    """Base class of every warning issued by vcpcr."""


class ConvergenceWarning(VCPCRWarning):
    """An iterative solver stopped before meeting its convergence criterion.

    The message states the iteration limit and the last relative change of the
    objective, so that the user can judge whether to raise ``max_iter``.
    """


class SeparationWarning(VCPCRWarning):
    """The binary outcome is (quasi-)completely separated by the predictors.

    The maximum-likelihood logistic fit does not exist (coefficients diverge);
    vcpcr falls back to Firth's bias-reduced estimator, which is always finite.
    """
