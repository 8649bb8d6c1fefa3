"""Cox pieces of step 0: Breslow partial likelihood, penalized weights, checks.

Weights use glmnet's parametrization (no intercept). Risk-set sums are
cumulative sums after one sort by time, in the log domain (no overflow).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vcpcr._numerics import lasso_ls, newton, spectrum
from vcpcr.exceptions import ConvergenceWarning

__all__ = [
    "breslow",
    "cox_lasso_delta_max",
    "cox_lasso_path",
    "cox_ridge_path",
]

_Float = NDArray[np.float64]


class _RiskSets(NamedTuple):
    """The sort by time shared by every evaluation (ties share a risk set)."""

    order: NDArray[np.intp]  # stable argsort of time
    first: NDArray[np.intp]  # sorted position of the first tie of each sample
    last: NDArray[np.intp]  # sorted position of the last tie of each sample
    event: NDArray[np.bool_]  # events in sorted order


def _risk_sets(time: ArrayLike, event: ArrayLike) -> _RiskSets:
    """Sort once by time."""
    order = np.argsort(t := np.asarray(time, dtype=np.float64), kind="stable")
    ts = t[order]
    lo, hi = np.searchsorted(ts, ts, "left"), np.searchsorted(ts, ts, "right") - 1
    return _RiskSets(order, lo, hi, np.asarray(event, dtype=bool)[order])


def _logcumsumexp(v: _Float) -> _Float:
    """``log(cumsum(exp(v)))`` without overflow (``v`` may hold ``-inf``)."""
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return np.full_like(v, -np.inf)
    top = finite.max()
    if top - finite.min() < 600.0:  # shifted cumsum: more accurate
        with np.errstate(divide="ignore", under="ignore"):
            return np.log(np.cumsum(np.exp(v - top))) + top
    return np.logaddexp.accumulate(v)


def _log_s0(es: _Float, rs: _RiskSets) -> _Float:
    """``log S0(t_k) = log sum_{j: t_j >= t_k} exp(eta_j)`` (sorted)."""
    return _logcumsumexp(es[::-1])[::-1][rs.first]


def _terms(es: _Float, rs: _RiskSets) -> tuple[_Float, _Float]:
    """``log A_k, log B_k``: sums of ``1/S0(t_i)``, ``1/S0(t_i)^2``, ``t_i <= t_k``."""
    neg = np.where(rs.event, -_log_s0(es, rs), -np.inf)
    return _logcumsumexp(neg)[rs.last], _logcumsumexp(2.0 * neg)[rs.last]


def _loss_sorted(es: _Float, rs: _RiskSets) -> float:
    """``-(1/n) log PL_Breslow`` at a sorted linear predictor."""
    return float(np.sum((_log_s0(es, rs) - es)[rs.event]) / es.size)


def _grad_sorted(es: _Float, rs: _RiskSets, tm: tuple[_Float, _Float]) -> _Float:
    """Gradient in eta: ``(exp(eta) A - event) / n``."""
    return (np.exp(es + tm[0]) - rs.event) / es.size


def _hess_diag_sorted(es: _Float, tm: tuple[_Float, _Float]) -> _Float:
    """Diagonal of the Hessian in eta, ``(r A - r^2 B) / n`` (clipped at 0)."""
    h = np.exp(es + tm[0]) - np.exp(2.0 * es + tm[1])
    return np.maximum(h, 0.0) / es.size


def _hess_sorted(es: _Float, tm: tuple[_Float, _Float]) -> _Float:
    """Hessian in eta, ``(diag(r A) - [r_k r_l min(B_k, B_l)]) / n`` (B increasing)."""
    H = -np.exp(es[:, None] + es[None, :] + np.minimum.outer(tm[1], tm[1]))
    H[np.diag_indices_from(H)] += np.exp(es + tm[0])
    return H / es.size


def breslow(
    eta: ArrayLike, time: ArrayLike, event: ArrayLike, *, hessian: bool = True
) -> tuple[float, _Float, _Float | None, _Float]:
    r"""Mean negative Breslow log partial likelihood and its derivatives in ``eta``.

    Parameters
    ----------
    eta : array-like of shape (n_samples,)
        Linear predictor ``X w``.
    time : array-like of shape (n_samples,)
        Event or censoring times, in any order; ties allowed.
    event : array-like of shape (n_samples,)
        1/True for an event, 0/False for censoring.
    hessian : bool, default=True
        Compute the full Hessian (``O(n^2)``; the rest is ``O(n log n)``).

    Returns
    -------
    loss : float
        :math:`-\frac1n\sum_{i:\,d_i=1}(\eta_i - \log\sum_{j:\,t_j\ge t_i}
        e^{\eta_j})` (ties as in glmnet and ``coxph(ties="breslow")``).
    gradient, hessian, hessian_diagonal : ndarray
        Shapes (n,), (n, n) (None if not asked) and (n,); the diagonal is
        glmnet's approximation of the Hessian.

    Examples
    --------
    >>> from vcpcr._cox import breslow
    >>> loss, grad, _, _ = breslow([0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [1, 1, 0])
    >>> round(loss, 6), grad.round(4).tolist()
    (0.597253, [-0.2222, -0.0556, 0.2778])
    """
    rs = _risk_sets(time, event)
    es = np.asarray(eta, dtype=np.float64)[rs.order]
    tm, inv = _terms(es, rs), np.argsort(rs.order)
    H = _hess_sorted(es, tm)[np.ix_(inv, inv)] if hessian else None
    grad, diag = _grad_sorted(es, rs, tm)[inv], _hess_diag_sorted(es, tm)[inv]
    return _loss_sorted(es, rs), grad, H, diag


def _check_path_input(
    Xs: ArrayLike, time: ArrayLike, event: ArrayLike, deltas: ArrayLike
) -> tuple[_Float, _RiskSets, _Float]:
    """Arrays, matching lengths and positive penalties for the path solvers."""
    X = np.asarray(Xs, dtype=np.float64)
    t = np.asarray(time, dtype=np.float64)
    d = np.atleast_1d(np.asarray(deltas, dtype=np.float64))
    if X.ndim != 2 or t.shape != (X.shape[0],) or np.shape(event) != t.shape:
        shapes = f"{X.shape}, {t.shape} and {np.shape(event)}"
        raise ValueError(f"Xs, time and event need n rows; got shapes {shapes}.")
    if d.ndim != 1 or d.size == 0 or not np.all(np.isfinite(d) & (d > 0)):
        raise ValueError(
            f"deltas must be finite numbers > 0 for Cox weights (unpenalized, the "
            f"fit diverges when p >= n). Got {deltas!r}."
        )
    return X, _risk_sets(t, event), d


def cox_ridge_path(
    Xs: ArrayLike,
    time: ArrayLike,
    event: ArrayLike,
    deltas: ArrayLike,
    *,
    max_iter: int = 100,
) -> _Float:
    r"""Ridge-penalized Cox weights for every ``delta`` (glmnet ``alpha=0``).

    Parameters
    ----------
    Xs : array-like of shape (n_samples, n_features)
        Standardized data.
    time, event : array-like of shape (n_samples,)
        Survival outcome, as from :func:`check_survival`.
    deltas : array-like of shape (n_deltas,)
        Penalties, all ``> 0``, in any order.
    max_iter : int, default=100
        Maximum number of Newton iterations per ``delta``.

    Returns
    -------
    ndarray of shape (n_deltas, n_features)
        Row ``i`` minimizes :math:`-\frac1n\log PL_{Breslow}(Xw) +
        \frac{\delta_i}{2}\lVert w\rVert_2^2`.

    Notes
    -----
    The solution lies in the row space of ``X = U S V'`` (``w = V theta``), so
    Newton (exact Hessian, warm starts) runs in ``rank(X) <= n`` dimensions
    with ``eta = U S theta``; one ``O(n^2 p)`` decomposition serves the path.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr._cox import cox_ridge_path
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 100))
    >>> time = rng.exponential(np.exp(-X[:, 0]))
    >>> W = cox_ridge_path(X, time, rng.uniform(size=40) < 0.8, [1.0, 0.1])
    >>> W.shape, bool(np.argmax(W[1]) == 0)
    ((2, 100), True)
    """
    X, rs, d = _check_path_input(Xs, time, event, deltas)
    U, s = spectrum(X)
    Z = (U * s)[rs.order]
    theta, thetas = np.zeros(s.size), np.zeros((d.size, s.size))
    for i in np.argsort(-d):
        theta = thetas[i] = _ridge_newton(Z, rs, float(d[i]), theta, max_iter)
    return (thetas @ (U / s).T) @ X


def _ridge_newton(
    Z: _Float, rs: _RiskSets, delta: float, theta0: _Float, max_iter: int
) -> _Float:
    """Newton on ``-(1/n) log PL(Z theta) + delta/2 ||theta||^2`` (sorted Z)."""

    def f(th: _Float) -> float:
        return _loss_sorted(Z @ th, rs) + 0.5 * delta * float(th @ th)

    def grad_hess(th: _Float) -> tuple[_Float, _Float]:
        es = Z @ th
        tm = _terms(es, rs)
        H = Z.T @ _hess_sorted(es, tm) @ Z
        H[np.diag_indices_from(H)] += delta
        return Z.T @ _grad_sorted(es, rs, tm) + delta * th, H

    theta = newton(f, grad_hess, theta0, max_iter=max_iter, what="Cox ridge")
    # newton stops once f stops decreasing in floating point (gradient ~1e-9)
    gh = grad_hess(theta)
    for _ in range(3):
        cand = theta - np.linalg.solve(gh[1], gh[0])
        if not np.abs((gh_cand := grad_hess(cand))[0]).max() < np.abs(gh[0]).max():
            break
        theta, gh = cand, gh_cand
    return theta


def cox_lasso_delta_max(Xs: ArrayLike, time: ArrayLike, event: ArrayLike) -> float:
    r"""Smallest lasso penalty with all Cox weights zero (glmnet's ``lambda_max``).

    Parameters
    ----------
    Xs : array-like of shape (n_samples, n_features)
        Standardized data.
    time, event : array-like of shape (n_samples,)
        Survival outcome.

    Returns
    -------
    float
        :math:`\max_j |x_j' m| / n`, the largest absolute gradient of the loss
        at ``w = 0`` (``m``: null-model martingale residuals).
    """
    X, rs, _ = _check_path_input(Xs, time, event, 1.0)
    return float(np.abs(_Lasso(X[rs.order], rs, 1.0).gradient(0 * X[0])).max())


def _kkt(g: _Float, w: _Float, delta: float) -> float:
    """Largest violation of the optimality conditions, relative to ``delta``.

    ``g`` is the gradient of the smooth part, ``delta`` the l1 penalty.
    """
    act = np.abs(g + delta * np.sign(w))
    viol = np.where(w != 0, act, np.maximum(np.abs(g) - delta, 0.0))
    return float(viol.max(initial=0.0)) / delta


class _Lasso(NamedTuple):
    """One lasso or elastic-net problem (X's rows sorted by time).

    ``l1_ratio`` is glmnet's mixing ``alpha``.
    """

    X: _Float
    rs: _RiskSets
    delta: float
    l1_ratio: float = 1.0

    @property
    def l1(self) -> float:
        """The l1 penalty ``delta * l1_ratio``."""
        return self.delta * self.l1_ratio

    @property
    def l2(self) -> float:
        """The ridge penalty ``delta * (1 - l1_ratio)``."""
        return self.delta * (1.0 - self.l1_ratio)

    def objective(self, w: _Float) -> float:
        """``-(1/n) log PL(X w) + l1 ||w||_1 + l2/2 ||w||^2``."""
        loss = _loss_sorted(self.X @ w, self.rs)
        return loss + self.l1 * np.abs(w).sum() + 0.5 * self.l2 * float(w @ w)

    def gradient(self, w: _Float) -> _Float:
        """Gradient of the smooth part ``-(1/n) log PL(X w) + l2/2 ||w||^2``."""
        eta = self.X @ w
        g = self.X.T @ _grad_sorted(eta, self.rs, _terms(eta, self.rs))
        return g + self.l2 * w

    def backtrack(
        self, w: _Float, step: _Float, fx: float, slope: float, orthant: bool
    ) -> tuple[_Float, float] | None:
        """Halve ``t`` until ``w + t step`` meets Armijo's condition (or None).

        ``orthant``: zero the coordinates that change sign (OWL-QN projection).
        """
        slack = 0.0 if orthant else 4 * np.finfo(float).eps * abs(fx)
        t = 1.0
        while t >= 1e-10:
            w_new = w + t * step
            if orthant:
                w_new[np.sign(w_new) != np.sign(w)] = 0.0
            if (f_new := self.objective(w_new)) <= fx + 1e-4 * t * slope + slack:
                return w_new, f_new
            t /= 2
        return None


def _prox_newton(
    pb: _Lasso, w: _Float, tol: float, max_iter: int
) -> tuple[_Float, bool]:
    """Minimize the lasso objective from ``w``; return w and convergence.

    Alternates :func:`_orthant_newton` and glmnet's step: the lasso of
    ``sqrt(n h) z`` on ``sqrt(n h) X`` (diagonal Hessian ``h``, working
    response ``z = eta - g/h``), then an Armijo line search.
    """
    X, rs, delta, l1_ratio = pb
    fx = pb.objective(w)
    for _ in range(max_iter):
        w, fx = _orthant_newton(pb, w, fx)
        eta = X @ w
        tm = _terms(eta, rs)
        g_eta = _grad_sorted(eta, rs, tm)
        if (viol := _kkt(X.T @ g_eta + pb.l2 * w, w, pb.l1)) <= tol:
            return w, True
        h = _hess_diag_sorted(eta, tm)
        z = eta - np.divide(g_eta, h, out=np.zeros_like(h), where=h > 0)
        sq = np.sqrt(X.shape[0] * h)
        with warnings.catch_warnings():  # an inexact step is fine: line search
            warnings.simplefilter("ignore", ConvergenceWarning)
            step = lasso_ls(X * sq[:, None], z * sq, delta, w, l1_ratio=l1_ratio) - w
        l1 = np.abs(w + step).sum() - np.abs(w).sum()
        smooth = float(g_eta @ (X @ step) + pb.l2 * (w @ step))
        slope = min(smooth + pb.l1 * l1, 0.0)
        found = pb.backtrack(w, step, fx, slope, False) if step.any() else None
        if found is None:  # stalled at the inner solver's precision floor
            return w, viol <= max(tol, 1e-8)
        w, fx = found
    return w, False


def _orthant_newton(pb: _Lasso, w: _Float, fx: float) -> tuple[_Float, float]:
    """Newton on the orthant of ``w``, where the objective is smooth.

    ``-(1/n) log PL(X_A w_A) + delta s'w_A``; steps are projected on the
    orthant and backtracked, except below a relative step of 1e-6 (quadratic
    convergence, objective differences below rounding): full steps to 1e-12.
    """
    w = w.copy()
    for _ in range(50):
        A = np.flatnonzero(w)
        if A.size == 0 or A.size >= pb.X.shape[0]:
            break
        sub = pb._replace(X=pb.X[:, A])
        if (step := _newton_direction(sub, w[A])) is None:
            break
        size = float(np.abs(step).max() / (1.0 + np.abs(w[A]).max()))
        if size <= 1e-6 and np.all(np.sign(w[A] - step) == np.sign(w[A])):
            w[A] -= step
            fx = sub.objective(w[A])
            if size <= 1e-12:
                break
        elif (found := sub.backtrack(w[A], -step, fx, 0.0, True)) is None:
            break
        else:
            w[A], fx = found
    return w, fx


def _newton_direction(pb: _Lasso, wa: _Float) -> _Float | None:
    """Newton step of the objective on the orthant of ``wa`` (None: singular)."""
    eta = pb.X @ wa
    tm = _terms(eta, pb.rs)
    g = pb.X.T @ _grad_sorted(eta, pb.rs, tm) + pb.l2 * wa + pb.l1 * np.sign(wa)
    H = pb.X.T @ _hess_sorted(eta, tm) @ pb.X
    H[np.diag_indices_from(H)] += pb.l2
    try:
        return np.asarray(np.linalg.solve(H, g))
    except np.linalg.LinAlgError:
        return None


def cox_lasso_path(
    Xs: ArrayLike,
    time: ArrayLike,
    event: ArrayLike,
    deltas: ArrayLike,
    *,
    l1_ratio: float = 1.0,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> _Float:
    r"""Lasso or elastic-net Cox weights for every ``delta`` (glmnet ``alpha``).

    Parameters
    ----------
    Xs : array-like of shape (n_samples, n_features)
        Standardized data.
    time, event : array-like of shape (n_samples,)
        Survival outcome, as from :func:`check_survival`.
    deltas : array-like of shape (n_deltas,)
        Penalties, all ``> 0``, in any order.
    l1_ratio : float, default=1.0
        glmnet's ``alpha`` in ``(0, 1]``: the penalty is :math:`\delta
        (\alpha\lVert w\rVert_1 + \frac{1-\alpha}{2}\lVert w\rVert_2^2)`.
    tol : float, default=1e-10
        Stop when the largest violation of the optimality (KKT) conditions,
        relative to ``delta``, is at most ``tol``.
    max_iter : int, default=200
        Maximum number of proximal Newton steps per ``delta`` and working set.

    Returns
    -------
    ndarray of shape (n_deltas, n_features)
        Row ``i`` minimizes :math:`-\frac1n\log PL_{Breslow}(Xw)` plus the
        penalty at :math:`\delta_i`.

    Warns
    -----
    ConvergenceWarning
        If a ``delta`` did not reach ``tol`` within ``max_iter`` steps.

    Notes
    -----
    glmnet's proximal Newton step (diagonal Hessian: a weighted least-squares
    lasso, then a line search) converges linearly, slowly with hundreds of
    active variables, so exact Newton steps on the current support and signs
    follow each one. Warm starts along decreasing ``delta``; working sets from
    the strong rule :math:`|\nabla_j| \ge \alpha(2\delta_i - \delta_{i-1})`.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr._cox import cox_lasso_delta_max, cox_lasso_path
    >>> rng = np.random.default_rng(0)
    >>> X, event = rng.normal(size=(40, 100)), np.ones(40, bool)
    >>> time = rng.exponential(np.exp(-X[:, 0]))
    >>> dmax = cox_lasso_delta_max(X, time, event)
    >>> (cox_lasso_path(X, time, event, [0.9 * dmax, 0.5 * dmax]) != 0).sum(1)
    array([1, 8])
    """
    X, rs, d = _check_path_input(Xs, time, event, deltas)
    Xo, coef = np.asfortranarray(X[rs.order]), np.zeros((d.size, X.shape[1]))
    g = _Lasso(Xo, rs, 1.0).gradient(w := np.zeros(X.shape[1]))
    prev = float(np.abs(g).max())
    for i in np.argsort(-d):
        pb = _Lasso(Xo, rs, float(d[i]), float(l1_ratio))
        w, g, ok = _lasso_working_set(pb, w, g, prev, tol, max_iter)
        if not ok:
            warnings.warn(
                f"The Cox penalized weights did not converge within "
                f"max_iter={max_iter} iterations at delta={pb.delta:.4g}: "
                f"relative KKT violation "
                f"{_kkt(g, w, pb.l1):.3g} > tol={tol:g}.",
                ConvergenceWarning,
                stacklevel=2,
            )
        coef[i], prev = w, pb.l1
    return coef


def _lasso_working_set(
    pb: _Lasso, w: _Float, g: _Float, prev: float, tol: float, max_iter: int
) -> tuple[_Float, _Float, bool]:
    """Solve one ``delta`` on a growing working set; return w, gradient, ok.

    ``g`` is the smooth part's gradient at ``w``, ``prev`` the previous l1
    penalty (strong rule).
    """
    ws, converged = w != 0, True
    new = ~ws & (np.abs(g) >= 2 * pb.l1 - prev)
    while True:
        idx = np.flatnonzero(new)
        ws[idx[np.argsort(-np.abs(g[idx]))[: max(50, int(ws.sum()))]]] = True
        if ws.any():
            cols = np.flatnonzero(ws)
            sub = pb._replace(X=pb.X[:, cols])
            w[cols], ok = _prox_newton(sub, w[cols], tol, max_iter)
            converged, g = converged and ok, pb.gradient(w)
        new = ~ws & (np.abs(g) > pb.l1 * (1 + tol))
        if not new.any():
            return w, g, converged
