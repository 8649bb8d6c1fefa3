r"""Lasso and elastic-net paths for the gaussian and binomial weights.

glmnet's scheme, around scikit-learn's coordinate descent
(:func:`sklearn.linear_model.enet_path`, public API) on a small working set:

* the path runs from the largest ``delta`` down, warm-started;
* each ``delta`` works on a working set: the active features plus the worst
  violators of the KKT conditions (:math:`|\nabla_j| > a\delta`), at most
  doubling it per round; coordinate descent runs on the working set only (on
  its Gram matrix when it has at most ``n`` columns), then the KKT conditions
  are checked on every feature, until no feature violates them (glmnet's
  strong rule discards nothing on a coarse grid such as the estimator's six
  deltas, where each step more than halves ``delta``);
* binomial: proximal Newton (glmnet's IRLS) on the working set, the weighted
  least-squares elastic net of the working response solved as above, with a
  backtracking line search on the penalized objective.

Stopping rule (:data:`TOL`): the duality gap of coordinate descent, relative
to the objective at ``w = 0``, and (binomial) the relative change of the
penalized objective between Newton steps, at most ``1e-7``, glmnet's default
``thresh``. Weights feed a clustering: they need glmnet's accuracy, not ten
digits (the committed R glmnet references agree to about ``1e-5`` relative).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from vcpcr._solvers.distributions import LOGISTIC
from vcpcr._solvers.kkt import WeightsPath, relative_kkt, warn_kkt
from vcpcr.exceptions import ConvergenceWarning, user_stacklevel

__all__ = ["TOL", "enet_binomial_path", "enet_gaussian_path"]

_Float = NDArray[np.float64]

#: Relative tolerance of the elastic-net engine (see the module docstring).
TOL = 1e-7

#: Maximum number of coordinate-descent passes per subproblem.
MAX_ITER = 100_000

#: Maximum number of proximal Newton steps per ``delta`` and working set.
MAX_NEWTON = 100


def _penalty(w: _Float, delta: float, l1_ratio: float) -> float:
    """``delta (a ||w||_1 + (1-a)/2 ||w||^2)``."""
    return delta * (
        l1_ratio * float(np.abs(w).sum()) + 0.5 * (1.0 - l1_ratio) * float(w @ w)
    )


def _coordinate_descent(
    A: _Float,
    b: _Float,
    delta: float,
    l1_ratio: float,
    w0: _Float,
    tol: float,
    max_iter: int,
) -> tuple[_Float, float, bool]:
    """``min 1/(2n)||b - A w||^2 + penalty`` from ``w0`` by scikit-learn's CD.

    Returns the solution, its duality gap relative to ``||b||^2 / (2n)`` (the
    objective at ``w = 0``) and whether that gap reached ``tol``.
    """
    from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
    from sklearn.linear_model import enet_path

    n, k = A.shape
    A = np.asfortranarray(A)
    gram = A.T @ A if k <= n else False
    null = float(b @ b) / (2 * n)
    if null == 0.0:
        return np.zeros(k), 0.0, True
    with warnings.catch_warnings():
        # Convergence is judged from the returned gap below.
        warnings.simplefilter("ignore", SkConvergenceWarning)
        _, coefs, gaps = enet_path(
            A,
            b,
            l1_ratio=l1_ratio,
            alphas=[delta],
            precompute=gram,
            Xy=A.T @ b if k <= n else None,
            coef_init=w0,
            tol=tol / 2,  # sklearn's gap tolerance is relative to ||b||^2 / n
            max_iter=max_iter,
            check_input=False,
        )
    gap = float(gaps[0]) / null
    return np.asarray(coefs[:, 0], dtype=np.float64), gap, gap <= tol


def _warn(family: str, delta: float, max_iter: int, change: float, tol: float) -> None:
    warnings.warn(
        f"The {family} elastic-net weights did not converge at delta={delta:.4g} "
        f"within max_iter={max_iter} iterations: last relative change "
        f"{change:.3g} > tol={tol:g}. The weights of this delta are approximate.",
        ConvergenceWarning,
        stacklevel=user_stacklevel(),
    )


def _grow(ws: NDArray[np.bool_], g: _Float, bound: float) -> bool:
    """Add the worst KKT violators (``|g_j| > bound`` outside ``ws``) to ``ws``.

    At most ``max(100, |ws|)`` join at once, the largest ``|g_j|`` first, so
    the working set at most doubles per round. Returns False if none violate.
    """
    viol = np.flatnonzero(~ws & (np.abs(g) > bound))
    if viol.size == 0:
        return False
    keep = max(100, int(ws.sum()))
    ws[viol[np.argsort(-np.abs(g[viol]))[:keep]]] = True
    return True


def _working_sets(
    w: _Float,
    g: _Float,
    delta: float,
    l1_ratio: float,
    solve: Callable[[NDArray[np.intp], float], tuple[_Float, float, bool]],
) -> tuple[_Float, bool, float]:
    """Solve one ``delta`` on growing working sets, from the weights ``w``.

    ``g`` is the gradient of the loss at the start; ``solve(cols, delta)``
    fits ``w[cols]`` (in place) and returns the gradient on every feature,
    the last relative change (or gap) and whether it reached the tolerance.
    Returns the last gradient, whether every solve converged and the largest
    change.
    """
    bound = l1_ratio * delta
    ws, converged, worst = w != 0, True, 0.0
    _grow(ws, g, bound)
    while ws.any():
        g, change, ok = solve(np.flatnonzero(ws), delta)
        converged, worst = converged and ok, max(worst, change)
        if not _grow(ws, g, bound):
            break
    return g, converged, worst


def enet_gaussian_path(
    Xs: _Float,
    y: _Float,
    deltas: _Float,
    l1_ratio: float = 1.0,
    *,
    tol: float = TOL,
    max_iter: int = MAX_ITER,
    return_kkt: bool = False,
) -> _Float | WeightsPath:
    """Elastic-net least squares for every ``delta`` (rows), no intercept.

    Minimizes ``1/(2n)||y - ybar - X w||^2 + delta (a||w||_1 +
    (1-a)/2||w||^2)`` with ``a = l1_ratio`` (``X`` centred). With
    ``return_kkt``, returns the weights with their relative KKT violations
    (warned about above :data:`~vcpcr._solvers.kkt.KKT_TOL` either way).
    """
    n, p = Xs.shape
    yc = y - y.mean()
    coef, kkt = np.zeros((deltas.size, p)), np.zeros(deltas.size)
    done = np.ones(deltas.size, bool)  # the deltas not warned about by _warn
    w, g = np.zeros(p), Xs.T @ yc / n

    def solve(cols: NDArray[np.intp], delta: float) -> tuple[_Float, float, bool]:
        w[cols], gap, ok = _coordinate_descent(
            Xs[:, cols], yc, delta, l1_ratio, w[cols], tol, max_iter
        )
        return Xs.T @ (yc - Xs[:, cols] @ w[cols]) / n, gap, ok

    for i in np.argsort(-deltas):
        delta = float(deltas[i])
        g, converged, worst = _working_sets(w, g, delta, l1_ratio, solve)
        if not converged:
            _warn("gaussian", delta, max_iter, worst, tol)
        coef[i], kkt[i] = w, relative_kkt(-g, w, delta, l1_ratio)  # g: -gradient
        done[i] = converged
    detail = f"coordinate descent to tol={tol:g}, max_iter={max_iter}"
    warn_kkt("gaussian elastic-net", deltas, kkt, detail, done)
    return WeightsPath(coef, kkt) if return_kkt else coef


def _prox_newton(
    X: _Float,
    y: _Float,
    delta: float,
    l1_ratio: float,
    Q: _Float,
    beta: _Float,
    w: _Float,
    tol: float,
    max_iter: int,
) -> tuple[_Float, _Float, float, bool]:
    """Binomial elastic net on the columns of ``X`` by proximal Newton.

    ``Q`` holds the unpenalized columns (the intercept, then any covariates)
    with coefficients ``beta``. Each Newton step is a weighted least-squares
    elastic net; ``Q`` is partialled out of it with the IRLS weights
    (Frisch-Waugh-Lovell), which is exact. Returns ``beta, w``, the last
    relative change of the objective (or the inner duality gap, whichever is
    larger) and whether it reached ``tol``.
    """
    n = X.shape[0]

    def objective(beta: _Float, w: _Float) -> float:
        return LOGISTIC.loss(Q @ beta + X @ w, y) + _penalty(w, delta, l1_ratio)

    fx, change = objective(beta, w), np.inf
    for _ in range(MAX_NEWTON):
        eta = Q @ beta + X @ w
        mu = LOGISTIC.mean(eta)
        d = np.maximum(LOGISTIC.variance(mu), 1e-10)
        z = eta + (y - mu) / d
        # Weighted least squares with the unpenalized block Q: residualize on
        # Q with the IRLS weights (with Q the intercept alone: centring), scale
        # rows by sqrt(d) and renormalize to the 1/(2n) convention.
        B = np.linalg.solve(Q.T @ (d[:, None] * Q), (d[:, None] * Q).T)
        xq, zq = B @ X, B @ z
        sq = np.sqrt(d * n / d.sum())
        w_new, gap, ok = _coordinate_descent(
            (X - Q @ xq) * sq[:, None],
            (z - Q @ zq) * sq,
            delta * n / d.sum(),
            l1_ratio,
            w,
            tol,
            max_iter,
        )
        beta_new = zq - xq @ w_new
        t, f_new = 1.0, objective(beta_new, w_new)
        while f_new > fx and t > 1e-10:
            t /= 2
            f_new = objective(beta + t * (beta_new - beta), w + t * (w_new - w))
        beta, w = beta + t * (beta_new - beta), w + t * (w_new - w)
        change = max((fx - f_new) / max(abs(f_new), 1e-300), gap)
        fx = f_new
        if ok and change <= tol:
            return beta, w, change, True
    return beta, w, change, False


def _null_logit(Q: _Float, y: _Float, tol: float) -> _Float:
    """Unpenalized logistic regression of ``y`` on the columns of ``Q`` (Newton).

    The starting point of the path: the fit at an infinite penalty. With
    ``Q`` the intercept alone it is ``logit(ybar)`` (clipped away from 0, 1).
    """
    ybar = float(np.clip(y.mean(), 1e-6, 1 - 1e-6))
    beta = np.zeros(Q.shape[1])
    beta[0] = np.log(ybar / (1 - ybar))
    fx = LOGISTIC.loss(Q @ beta, y)
    for _ in range(MAX_NEWTON):
        mu = LOGISTIC.mean(Q @ beta)
        d = np.maximum(LOGISTIC.variance(mu), 1e-10)
        step = np.linalg.solve(Q.T @ (d[:, None] * Q), Q.T @ (y - mu))
        t, f_new = 1.0, LOGISTIC.loss(Q @ (beta + step), y)
        while f_new > fx and t > 1e-10:
            t /= 2
            f_new = LOGISTIC.loss(Q @ (beta + t * step), y)
        beta = beta + t * step
        done = fx - f_new <= tol * max(abs(f_new), 1e-300)
        fx = f_new
        if done:
            break
    return beta


def enet_binomial_path(
    Xs: _Float,
    y: _Float,
    deltas: _Float,
    l1_ratio: float = 1.0,
    *,
    covariates: _Float | None = None,
    tol: float = TOL,
    max_iter: int = MAX_ITER,
    return_kkt: bool = False,
) -> tuple[_Float | WeightsPath, _Float]:
    """Elastic-net logistic regression for every ``delta``: ``(coef, intercept)``.

    Minimizes ``-(1/n) loglik(b0 + Z c + X w) + delta (a||w||_1 +
    (1-a)/2||w||^2)`` with an unpenalized intercept ``b0`` and unpenalized
    coefficients ``c`` of the ``covariates`` ``Z`` (glmnet's
    ``penalty.factor = 0``, at its ``lambda = delta p / (p + c)``: glmnet
    rescales the penalty factors to sum to the number of columns). With
    ``return_kkt``, ``coef`` is a :class:`~vcpcr._solvers.kkt.WeightsPath`,
    the weights with their relative KKT violations (warned about above
    :data:`~vcpcr._solvers.kkt.KKT_TOL` either way).
    """
    n, p = Xs.shape
    Z = np.empty((n, 0)) if covariates is None else covariates
    Q = np.column_stack([np.ones(n), Z])
    coef, intercept = np.zeros((deltas.size, p)), np.zeros(deltas.size)
    kkt, done = np.zeros(deltas.size), np.ones(deltas.size, bool)
    beta, w = _null_logit(Q, y, tol), np.zeros(p)
    g = Xs.T @ (LOGISTIC.mean(Q @ beta) - y) / n

    def solve(cols: NDArray[np.intp], delta: float) -> tuple[_Float, float, bool]:
        nonlocal beta
        beta, w[cols], change, ok = _prox_newton(
            Xs[:, cols], y, delta, l1_ratio, Q, beta, w[cols], tol, max_iter
        )
        eta = Q @ beta + Xs[:, cols] @ w[cols]
        return Xs.T @ (LOGISTIC.mean(eta) - y) / n, change, ok

    for i in np.argsort(-deltas):
        delta = float(deltas[i])
        g, converged, worst = _working_sets(w, g, delta, l1_ratio, solve)
        if not converged:
            _warn("binomial", delta, max(max_iter, MAX_NEWTON), worst, tol)
        coef[i], intercept[i] = w, beta[0]
        kkt[i], done[i] = relative_kkt(g, w, delta, l1_ratio), converged
    detail = f"proximal Newton to tol={tol:g}, max_iter={max(max_iter, MAX_NEWTON)}"
    warn_kkt("binomial elastic-net", deltas, kkt, detail, done)
    return (WeightsPath(coef, kkt) if return_kkt else coef), intercept
