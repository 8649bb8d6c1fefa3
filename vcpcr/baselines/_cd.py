r"""Coordinate descent for lasso problems given in quadratic (Gram) form.

Solves

.. math::

    \min_b\ \tfrac12 b^\top Q b - c^\top b + \sum_j \omega_j |b_j|

for a symmetric positive semi-definite ``Q`` with a positive diagonal and
penalty weights ``omega >= 0``. The update of coordinate ``j`` is the exact
minimizer ``b_j = S(r_j + Q_jj b_j, omega_j) / Q_jj`` with ``r = c - Q b`` and
``S`` the soft-thresholding operator; for ``Q = X'X/n`` and ``c = X'y/n`` this
is glmnet's covariance update. Cluster Elastic Net and Split Regularized
Regression both reduce to it (with their own ``Q`` and ``omega``).

The loop is glmnet's active-set strategy: sweep the non-zero coordinates until
no coefficient moves by more than ``tol`` (in the ``sqrt(Q_jj) |db_j|`` metric),
then check the optimality (KKT) conditions of all the zero coordinates in one
vectorized step and add the violators. It stops when the active set has
converged and no zero coordinate violates its condition, so every returned
solution satisfies the KKT conditions of the zero coordinates exactly.

:func:`lasso_path` is the warm-started path solver of the study and of
:class:`~vcpcr.baselines.CRL`: scikit-learn's public
:func:`sklearn.linear_model.enet_path` (compiled coordinate descent, stopped
on the duality gap), optionally given a quadratic form ``Q`` in place of
``X'X``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import sklearn
from numpy.typing import NDArray
from sklearn.linear_model import enet_path

from vcpcr._checks import check_same_rows

__all__ = ["CDResult", "cd_quadratic_lasso", "lasso_path", "soft_threshold"]


class CDResult(NamedTuple):
    """Output of :func:`cd_quadratic_lasso`."""

    coef: NDArray[np.float64]
    residual: NDArray[np.float64]  # c - Q @ coef
    n_sweeps: int
    converged: bool


def soft_threshold(z: NDArray[np.float64], t: NDArray[np.float64] | float) -> NDArray:
    """Soft-thresholding ``sign(z) * max(|z| - t, 0)`` (elementwise)."""
    return np.sign(z) * np.maximum(np.abs(z) - t, 0.0)


def _sweep(
    idx: list[int],
    Q: NDArray[np.float64],
    diag: list[float],
    pen: list[float],
    coef: list[float],
    b: NDArray[np.float64],
    r: NDArray[np.float64],
) -> float:
    """One cyclic pass over ``idx``; update ``b`` and ``r = c - Qb`` in place.

    ``coef`` is a list copy of ``b`` (Python floats are much faster than numpy
    scalars in this loop), ``diag`` and ``pen`` are lists too. Returns the
    largest ``Q_jj * db_j**2`` of the pass.
    """
    largest = 0.0
    for j in idx:
        old, d, t = coef[j], diag[j], pen[j]
        z = r.item(j) + d * old
        if z > t:
            new = (z - t) / d
        elif z < -t:
            new = (z + t) / d
        else:
            new = 0.0
        if new != old:
            step = new - old
            r -= Q[j] * step  # Q is symmetric: row j is column j
            coef[j] = b[j] = new
            change = d * step * step
            if change > largest:
                largest = change
    return largest


def cd_quadratic_lasso(
    Q: NDArray[np.float64],
    c: NDArray[np.float64],
    pen: NDArray[np.float64],
    b0: NDArray[np.float64] | None = None,
    *,
    tol: float = 1e-10,
    max_iter: int = 10_000,
) -> CDResult:
    """Minimize ``b'Qb/2 - c'b + sum_j pen_j |b_j|`` by coordinate descent.

    Parameters
    ----------
    Q : ndarray of shape (p, p)
        Symmetric positive semi-definite matrix with a positive diagonal.
    c : ndarray of shape (p,)
        Linear term.
    pen : ndarray of shape (p,)
        Non-negative penalty weights.
    b0 : ndarray of shape (p,), optional
        Warm start (zeros if omitted).
    tol : float, default=1e-10
        A sweep of the active set has converged when no coefficient changes
        by more than ``sqrt(tol / Q_jj)``.
    max_iter : int, default=10000
        Maximum number of sweeps of the active set (over all KKT rounds).

    Returns
    -------
    CDResult
        Coefficients, the residual ``c - Q @ coef``, the number of sweeps
        and a convergence flag.
    """
    b = np.zeros(c.shape[0]) if b0 is None else np.array(b0, dtype=np.float64)
    diag, pen_list, coef = Q.diagonal().tolist(), pen.tolist(), b.tolist()
    r = c - Q @ b
    sweeps = 0
    slack = 1e-12 * (1.0 + pen)
    while sweeps < max_iter:
        inactive = b == 0.0
        viol = np.flatnonzero(inactive & (np.abs(r) > pen + slack))
        if sweeps > 0 and viol.size == 0:
            return CDResult(b, r, sweeps, True)
        active = np.union1d(np.flatnonzero(~inactive), viol)
        while sweeps < max_iter:
            sweeps += 1
            if _sweep(active.tolist(), Q, diag, pen_list, coef, b, r) <= tol:
                break
            active = active[b[active] != 0.0]
        r = c - Q @ b  # refresh: removes the drift of the in-place updates
    return CDResult(b, r, sweeps, False)


def lasso_path(
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    alphas: NDArray[np.float64],
    *,
    gram: NDArray[np.float64] | None = None,
    Xy: NDArray[np.float64] | None = None,
    coef_init: NDArray[np.float64] | None = None,
    tol: float = 1e-10,
    max_iter: int = 100_000,
) -> NDArray[np.float64]:
    r"""Warm-started lasso path ``1/(2n)||y - X b||^2 + alpha ||b||_1``.

    :func:`sklearn.linear_model.enet_path` with ``l1_ratio=1`` and no
    intercept, traced from the largest ``alpha`` down (each solution starts
    from the previous one; the first from ``coef_init``, zeros if omitted).
    Each solve stops when the duality gap is below ``tol * y'y`` or after
    ``max_iter`` sweeps (scikit-learn's ConvergenceWarning then says so).

    With ``gram=Q`` and ``Xy=q`` the smooth part is
    ``(b'Qb/2 - q'b + y'y/2) / n`` instead: ``Q`` need not be ``X'X``. Any
    ``Q = A'A`` with ``q = A'z`` and ``z'z = y'y`` (an augmented
    least-squares problem, as those of :class:`~vcpcr.baselines.CEN` and
    :class:`~vcpcr.baselines.SRR`) has the same coordinate updates and
    duality gap; ``X`` then only gives ``n``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Design matrix.
    y : ndarray of shape (n_samples,)
        Response.
    alphas : ndarray of shape (n_alphas,)
        Penalties, all ``> 0``, in any order.
    gram, Xy : ndarray of shape (n_features, n_features) and (n_features,)
        Optional quadratic form ``Q`` and linear term ``q``.
    coef_init : ndarray of shape (n_features,), optional
        Start of the largest penalty.
    tol, max_iter : float and int
        Stopping rule of each solve.

    Returns
    -------
    ndarray of shape (n_alphas, n_features)
        The solutions, in the order of ``alphas``.
    """
    check_same_rows(X, y)
    alphas = np.asarray(alphas, dtype=np.float64)
    order = np.argsort(-alphas, kind="stable")
    init = None if coef_init is None else np.array(coef_init, dtype=np.float64)
    precompute: NDArray[np.float64] | bool = False
    if gram is not None:
        precompute = np.ascontiguousarray(gram)
        Xy = np.ascontiguousarray(Xy)
    # The arguments are built here: scikit-learn's parameter validation costs
    # more than a typical warm-started solve.
    with sklearn.config_context(skip_parameter_validation=True):
        _, coefs, _ = enet_path(
            np.asfortranarray(X),
            y,
            l1_ratio=1.0,
            alphas=alphas[order],
            precompute=precompute,
            Xy=Xy,
            coef_init=init,
            check_input=False,
            tol=tol,
            max_iter=max_iter,
        )
    out = np.empty((alphas.size, coefs.shape[0]))
    out[order] = coefs.T
    return out
