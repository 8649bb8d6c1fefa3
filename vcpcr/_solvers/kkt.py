r"""The optimality check of the penalized weights paths: relative KKT violations.

Every penalized weights path (ridge, lasso, elastic net; gaussian, binomial,
cox) reports, per ``delta``, how far its weights are from the optimum of
:math:`L(w) + \delta(a\lVert w\rVert_1 + \frac{1-a}{2}\lVert w\rVert_2^2)`
(``a = l1_ratio``): the largest violation of the optimality (KKT)
conditions, relative to ``delta``,

.. math::

    \frac{1}{\delta}\max_j \begin{cases}
    |g_j + a\delta\,\mathrm{sign}(w_j)| & w_j \ne 0\\
    \max(|g_j| - a\delta, 0) & w_j = 0
    \end{cases},\qquad g = \nabla L(w) + (1-a)\delta w,

with the unpenalized parts (intercept, covariates) at their optimum given
``w``. Zero at the optimum; a screen that ranks features by weights far from
it ranks them by where the solver stopped. The paths meet :data:`KKT_TOL` at
every ``delta`` they return or warn (:func:`warn_kkt`).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from vcpcr.exceptions import ConvergenceWarning, user_stacklevel

__all__ = ["KKT_TOL", "WeightsPath", "relative_kkt", "warn_kkt"]

_Float = NDArray[np.float64]

#: The stated tolerance of the weights paths: the largest relative KKT
#: violation (module docstring) a returned ``delta`` may have without a
#: :class:`~vcpcr.exceptions.ConvergenceWarning`.
KKT_TOL = 1e-3


class WeightsPath(NamedTuple):
    """A penalized weights path and its optimality, one row per ``delta``.

    Attributes
    ----------
    coef : ndarray of shape (n_deltas, n_features)
        The weights.
    kkt : ndarray of shape (n_deltas,) or None
        The relative KKT violation of each row (:func:`relative_kkt`); None
        for weights that are no penalized optimum (no penalty, given
        weights, the paper's early-stopped glmnet).
    """

    coef: _Float
    kkt: _Float | None


def relative_kkt(grad: _Float, w: _Float, delta: float, l1_ratio: float) -> float:
    """Return the largest KKT violation of ``w`` at ``delta``, relative to it.

    Parameters
    ----------
    grad : ndarray of shape (n_features,)
        The gradient of the loss alone (without the penalty) at ``w``, the
        unpenalized parts at their optimum.
    w : ndarray of shape (n_features,)
        The weights.
    delta : float
        The penalty, ``> 0``.
    l1_ratio : float
        glmnet's ``alpha`` in ``[0, 1]``.

    Returns
    -------
    float
        The violation (module docstring); 0 at the optimum.
    """
    l1, l2 = delta * l1_ratio, delta * (1.0 - l1_ratio)
    g = grad + l2 * w
    viol = np.where(w != 0, np.abs(g + l1 * np.sign(w)), np.abs(g) - l1)
    return float(np.maximum(viol, 0.0).max(initial=0.0)) / delta


def warn_kkt(
    what: str,
    deltas: _Float,
    kkt: _Float,
    detail: str,
    checked: NDArray[np.bool_] | None = None,
) -> None:
    """Warn if a checked ``delta``'s weights miss :data:`KKT_TOL`, with the numbers.

    ``what`` names the weights (``"Cox elastic-net"``), ``detail`` says what
    the solver tried (its ``max_iter`` and tolerance); ``checked`` marks the
    deltas the rule applies to (default all; not those warned about
    otherwise).
    """
    bad = ~(kkt <= KKT_TOL)
    if checked is not None:
        bad &= checked
    if not bad.any():
        return
    at = ", ".join(
        f"{kkt[i]:.3g} at delta={deltas[i]:.4g}" for i in np.flatnonzero(bad)
    )
    warnings.warn(
        f"The {what} weights did not converge to a relative KKT violation <= "
        f"{KKT_TOL:g} ({detail}): {at}. Their ranking of the features is "
        f"approximate; use larger deltas.",
        ConvergenceWarning,
        stacklevel=user_stacklevel(),
    )
