"""Ridge weights: exact, every ``delta`` from one spectral decomposition.

The ridge solution lies in the row space of ``X``, so one rank-revealing
decomposition (:func:`spectrum`, from the smaller Gram matrix) serves a
whole vector of penalties: in closed form for the gaussian family
(:func:`ridge_gaussian_path`), by Newton's method on ``rank(X) <= n``
coordinates for the binomial one (:func:`ridge_binomial_path`) and the Cox
one (:func:`vcpcr._solvers.cox.cox_ridge_path`), which share :func:`newton`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from vcpcr._solvers.distributions import LOGISTIC
from vcpcr._solvers.kkt import WeightsPath, relative_kkt
from vcpcr.exceptions import ConvergenceWarning, user_stacklevel

__all__ = ["newton", "ridge_binomial_path", "ridge_gaussian_path", "spectrum"]

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
        f"The Newton solver for {what} did not converge within "
        f"{max_iter} iterations (last relative step {size:.3g}).",
        ConvergenceWarning,
        stacklevel=user_stacklevel(),
    )
    return x


def ridge_gaussian_path(
    Xs: NDArray[np.float64],
    y: NDArray[np.float64],
    deltas: NDArray[np.float64],
    *,
    return_kkt: bool = False,
) -> NDArray[np.float64] | WeightsPath:
    """Ridge coefficients for every delta from one spectral decomposition.

    ``w(delta) = X' U diag(1 / (s^2 + n delta)) U'y`` (the dual form, with
    ``X = U S V'``); ``delta = 0`` gives the minimum-norm least-squares fit.
    With ``return_kkt`` (deltas ``> 0``), the weights with their relative
    KKT violations (:func:`vcpcr._solvers.kkt.relative_kkt`; rounding level).
    """
    n = Xs.shape[0]
    U, s = spectrum(Xs)
    yc = y - y.mean()
    alpha = ((U.T @ yc) / (s**2 + n * deltas[:, None])) @ U.T
    coef = alpha @ Xs
    if not return_kkt:
        return coef
    grads = (coef @ Xs.T - yc) @ Xs / n
    kkt = [
        relative_kkt(g, w, d, 0.0) for g, w, d in zip(grads, coef, deltas, strict=True)
    ]
    return WeightsPath(coef, np.array(kkt))


def ridge_binomial_path(
    Xs: NDArray[np.float64],
    y: NDArray[np.float64],
    deltas: NDArray[np.float64],
    *,
    return_kkt: bool = False,
) -> tuple[NDArray[np.float64] | WeightsPath, NDArray[np.float64]]:
    """Ridge logistic regression for every delta, solved in the row space of X.

    The ridge solution lies in the row space of ``X`` (``w = V theta`` with
    ``X = U S V'``), so Newton's method runs on ``r = rank(X) <= n``
    coordinates whatever ``p`` is; one decomposition serves every delta.
    Returns ``(coef, intercept)``; with ``return_kkt``, ``coef`` is a
    :class:`~vcpcr._solvers.kkt.WeightsPath` (the weights with their relative
    KKT violations).
    """
    n = Xs.shape[0]
    U, s = spectrum(Xs)
    Z = np.hstack([np.ones((n, 1)), U * s])
    r = Z.shape[1]
    coef = np.zeros((deltas.size, Xs.shape[1]))
    intercept = np.zeros(deltas.size)
    ybar = float(np.clip(y.mean(), 1e-6, 1 - 1e-6))
    beta = np.zeros(r)
    beta[0] = np.log(ybar / (1 - ybar))
    for i in np.argsort(-deltas):
        pen = np.full(r, float(deltas[i]))
        pen[0] = 0.0

        def f(b: NDArray[np.float64], pen: NDArray[np.float64] = pen) -> float:
            return LOGISTIC.loss(Z @ b, y) + 0.5 * float(pen @ b**2)

        def grad_hess(
            b: NDArray[np.float64], pen: NDArray[np.float64] = pen
        ) -> tuple[NDArray[np.float64], ...]:
            mu = LOGISTIC.mean(Z @ b)
            g = Z.T @ (mu - y) / n + pen * b
            H = (Z.T * LOGISTIC.variance(mu)) @ Z / n + np.diag(pen)
            return g, H

        beta = newton(f, grad_hess, beta, what="the binomial ridge weights")
        intercept[i], coef[i] = beta[0], ((U / s) @ beta[1:]) @ Xs
    if not return_kkt:
        return coef, intercept
    kkt = [
        relative_kkt(Xs.T @ (LOGISTIC.mean(b0 + Xs @ w) - y) / n, w, d, 0.0)
        for w, b0, d in zip(coef, intercept, deltas, strict=True)
    ]
    return WeightsPath(coef, np.array(kkt)), intercept
