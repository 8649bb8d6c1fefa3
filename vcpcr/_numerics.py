"""Numerical building blocks shared by the ridge weight solvers (numpy/scipy).

* :func:`spectrum`: rank-revealing left singular vectors and values from the
  smaller Gram matrix (``O(n^2 p)`` when ``p > n``);
* :func:`newton`: damped Newton's method for smooth strictly convex functions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from vcpcr.exceptions import ConvergenceWarning

__all__ = ["newton", "spectrum"]

_Fn = Callable[[NDArray[np.float64]], float]


def spectrum(
    Xs: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Left singular vectors and singular values of ``Xs`` (rank-revealing).

    Uses the eigendecomposition of the smaller Gram matrix, ``O(n^2 p)`` for
    ``p > n`` instead of an SVD, and drops the numerically zero directions.
    """
    n, p = Xs.shape
    if n <= p:
        evals, U = np.linalg.eigh(Xs @ Xs.T)
    else:
        evals, V = np.linalg.eigh(Xs.T @ Xs)
    keep = evals > max(evals[-1], 0.0) * max(n, p) * np.finfo(float).eps
    s = np.sqrt(evals[keep])
    if n > p:
        U = (Xs @ V[:, keep]) / s
        return U, s
    return U[:, keep], s


def newton(
    f: _Fn,
    grad_hess: Callable[[NDArray[np.float64]], tuple[NDArray[np.float64], ...]],
    x0: NDArray[np.float64],
    *,
    max_iter: int = 100,
    what: str,
) -> NDArray[np.float64]:
    """Damped Newton's method for a smooth strictly convex function.

    Stops when the Newton step is below ``1e-12`` relative to the iterate
    (quadratic convergence makes the returned point accurate far beyond that),
    or when a small step no longer lowers ``f`` (rounding level reached).
    """
    x, fx = x0, f(x0)
    size = float("nan")
    for _ in range(max_iter):
        g, H = grad_hess(x)
        step = np.linalg.solve(H, g)
        size = float(np.abs(step).max() / (1.0 + np.abs(x).max()))
        if size <= 1e-12:
            return x - step
        t, slope = 1.0, float(g @ step)
        while (f_new := f(x - t * step)) > fx - 1e-4 * t * slope and t > 1e-12:
            t /= 2
        if f_new >= fx and size <= 1e-6:
            return x - step  # f is flat to rounding level: take the tiny step
        x, fx = x - t * step, min(f_new, fx)
    warnings.warn(
        f"The Newton solver for the {what} weights did not converge within "
        f"{max_iter} iterations (last relative step {size:.3g}).",
        ConvergenceWarning,
        stacklevel=4,
    )
    return x
