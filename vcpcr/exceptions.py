"""Warnings raised by vcpcr.

All warnings derive from ``VCPCRWarning`` so that a user can silence or
escalate every vcpcr warning at once with ``warnings.simplefilter``.

``ConvergenceWarning`` also derives from scikit-learn's
``sklearn.exceptions.ConvergenceWarning``, so that the filters users already
write for scikit-learn catch vcpcr's too. So that the numpy/scipy core does
not import scikit-learn (and with it pandas), the class is created on first
access (PEP 562); it is an ordinary class from then on:

    class ConvergenceWarning(VCPCRWarning, sklearn.exceptions.ConvergenceWarning):
        '''An iterative solver stopped before meeting its convergence criterion.'''
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, cast

__all__ = ["ConvergenceWarning", "SeparationWarning", "VCPCRWarning"]

_PACKAGE = str(Path(__file__).resolve().parent) + "/"


class VCPCRWarning(UserWarning):
    """Base class of every warning issued by vcpcr."""


class SeparationWarning(VCPCRWarning):
    """The outcome is (quasi-)completely separated by the predictors.

    The maximum-likelihood logistic fit does not exist (coefficients diverge);
    vcpcr falls back to Firth's bias-reduced estimator, which is always finite.
    In cross-validation the same holds for a Cox fold fit whose partial
    likelihood has no finite maximum (monotone likelihood): Firth's penalized
    estimate is used there.
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


# Declared for type checkers, linters and the API reference (which reads this
# docstring); bound by ``__getattr__`` on first use, to the class documented by
# ``_CONVERGENCE_DOC``.
ConvergenceWarning: type[VCPCRWarning]
"""An iterative solver stopped before meeting its convergence criterion.

The message states the iteration limit and the last relative change of the
objective, so that the user can judge whether to raise ``max_iter``.
Subclasses both ``VCPCRWarning`` and scikit-learn's
``sklearn.exceptions.ConvergenceWarning``; the class is created on first
access, so that the numpy/scipy core does not import scikit-learn.
"""


def __getattr__(name: str) -> Any:
    """Create ``ConvergenceWarning`` on first access (PEP 562)."""
    if name == "ConvergenceWarning":
        cls = _convergence_warning()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def user_stacklevel() -> int:
    """Return the ``stacklevel`` that points a warning at the first frame outside vcpcr.

    Call it as ``warnings.warn(..., stacklevel=user_stacklevel())`` so that a
    warning names the user's line, however deep in vcpcr it is issued.

    Returns
    -------
    int
        The number of vcpcr frames on the stack above (and including) the
        caller of ``warnings.warn``.
    """
    frame = inspect.currentframe()
    level = 0
    while frame is not None and str(
        Path(frame.f_code.co_filename).resolve()
    ).startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return max(level, 1)
