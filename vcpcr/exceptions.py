"""Warnings raised by vcpcr.

All warnings derive from :class:`VCPCRWarning` so that a user can silence or
escalate every vcpcr warning at once with ``warnings.simplefilter``.

``ConvergenceWarning`` also derives from scikit-learn's
``sklearn.exceptions.ConvergenceWarning``, so that the filters users already
write for scikit-learn catch vcpcr's too. So that the numpy/scipy core does
not import scikit-learn (and with it pandas), the class is created on first
access (PEP 562); it is an ordinary class from then on::

    class ConvergenceWarning(VCPCRWarning, sklearn.exceptions.ConvergenceWarning):
        '''An iterative solver stopped before meeting its convergence criterion.'''
"""

from __future__ import annotations

from typing import Any, cast

__all__ = ["ConvergenceWarning", "SeparationWarning", "VCPCRWarning"]


class VCPCRWarning(UserWarning):
    """Base class of every warning issued by vcpcr."""


class SeparationWarning(VCPCRWarning):
    """The binary outcome is (quasi-)completely separated by the predictors.

    The maximum-likelihood logistic fit does not exist (coefficients diverge);
    vcpcr falls back to Firth's bias-reduced estimator, which is always finite.
    """


_CONVERGENCE_DOC = """\
    An iterative solver stopped before meeting its convergence criterion.

    The message states the iteration limit and the last relative change of the
    objective, so that the user can judge whether to raise ``max_iter``.
    Subclasses both :class:`VCPCRWarning` and scikit-learn's
    ``sklearn.exceptions.ConvergenceWarning``.
    """


def _convergence_warning() -> type[VCPCRWarning]:
    """Create ``ConvergenceWarning`` (imports scikit-learn)."""
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    cls = type(
        "ConvergenceWarning",
        (VCPCRWarning, SklearnConvergenceWarning),
        {"__doc__": _CONVERGENCE_DOC, "__module__": __name__},
    )
    return cast("type[VCPCRWarning]", cls)


# Declared for type checkers and linters; bound by ``__getattr__`` on first use.
ConvergenceWarning: type[VCPCRWarning]


def __getattr__(name: str) -> Any:
    """Create ``ConvergenceWarning`` on first access (PEP 562)."""
    if name == "ConvergenceWarning":
        cls = _convergence_warning()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
