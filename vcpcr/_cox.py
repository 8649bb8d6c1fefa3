"""Cox pieces of step 0: Breslow partial likelihood, penalized weights, checks.

Weights use glmnet's parametrization (no intercept). Risk-set sums are
cumulative sums after one sort by time, in the log domain (no overflow).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vcpcr._ridge import newton, spectrum
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
    X, _, _ = _check_path_input(Xs, time, event, 1.0)
    grad = breslow(np.zeros(X.shape[0]), time, event, hessian=False)[1]
    return float(np.abs(X.T @ grad).max())


def _kkt(
    X: _Float, time: _Float, event: ArrayLike, w: _Float, delta: float, l1_ratio: float
) -> float:
    """Largest violation of the optimality conditions, relative to ``delta``."""
    l1, l2 = delta * l1_ratio, delta * (1.0 - l1_ratio)
    g = X.T @ breslow(X @ w, time, event, hessian=False)[1] + l2 * w
    viol = np.where(w != 0, np.abs(g + l1 * np.sign(w)), np.abs(g) - l1)
    return float(np.maximum(viol, 0.0).max(initial=0.0)) / delta


def cox_lasso_path(
    Xs: ArrayLike,
    time: ArrayLike,
    event: ArrayLike,
    deltas: ArrayLike,
    *,
    l1_ratio: float = 1.0,
    covariates: ArrayLike | None = None,
    tol: float = 1e-7,
    max_iter: int = 100_000,
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
    covariates : array-like of shape (n_samples, c), optional
        Unpenalized columns (Coxnet's ``penalty_factor = 0``); their
        coefficients are not returned. Coxnet, like glmnet, rescales the
        penalty factors to sum to the number of columns, so it is called with
        ``alpha = delta * p / (p + c)``: the genes' penalty stays ``delta``.
    tol : float, default=1e-7
        Coxnet's (and glmnet's ``thresh``) convergence threshold: coordinate
        descent stops when no coefficient update changes the objective by more
        than ``tol`` times the null deviance.
    max_iter : int, default=100000
        Coxnet's maximum number of coordinate-descent passes (whole path).

    Returns
    -------
    ndarray of shape (n_deltas, n_features)
        Row ``i`` minimizes :math:`-\frac1n\log PL_{Breslow}(Xw)` plus the
        penalty at :math:`\delta_i`.

    Raises
    ------
    ImportError
        If scikit-survival (the ``survival`` extra) is not installed.
    ValueError
        If the fit diverges (a ``delta`` too small for ``p >= n``).

    Warns
    -----
    ConvergenceWarning
        If Coxnet stopped at ``max_iter``; the message gives, per ``delta``,
        the largest KKT violation relative to ``delta``.

    Notes
    -----
    The engine is scikit-survival's :class:`~sksurv.linear_model.\
CoxnetSurvivalAnalysis`, a C++ port of glmnet's Cox coordinate descent
    (Breslow ties, warm starts along decreasing ``delta``, strong rules and
    active sets), called through its public API with ``alphas = deltas``
    and ``normalize=False``: the same objective and stopping rule as R's
    ``glmnet(X, Surv(time, event), family = "cox", lambda = deltas,
    standardize = FALSE)``. Tested against R glmnet in ``tests/test_cox.py``.
    """
    X, _, d = _check_path_input(Xs, time, event, deltas)
    try:
        from sksurv.linear_model import CoxnetSurvivalAnalysis
        from sksurv.util import Surv
    except ImportError:
        raise ImportError(
            "Penalized Cox weights require scikit-survival: "
            "pip install 'vcpcr[survival]'"
        ) from None
    from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

    t = np.asarray(time, dtype=np.float64)
    e = np.asarray(event, dtype=bool)
    order = np.argsort(-d, kind="stable")
    p = X.shape[1]
    Z = np.empty((X.shape[0], 0)) if covariates is None else np.asarray(covariates)
    n_cov = Z.shape[1]
    model = CoxnetSurvivalAnalysis(
        alphas=d[order] * p / (p + n_cov),
        penalty_factor=np.r_[np.zeros(n_cov), np.ones(p)] if n_cov else None,
        l1_ratio=float(l1_ratio),
        normalize=False,
        tol=tol,
        max_iter=max_iter,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkConvergenceWarning)
        # vcpcr warns about all-zero weights in one place (the estimator).
        warnings.filterwarnings("ignore", "all coefficients are zero")
        try:
            model.fit(np.column_stack([Z, X]), Surv.from_arrays(e, t))
        except ArithmeticError as err:  # Coxnet's guard against diverging fits
            raise ValueError(
                f"The penalized Cox fit diverged along deltas={d[order].tolist()!r} "
                f"({err}): the smallest delta leaves the partial likelihood "
                f"(nearly) saturated. Use larger deltas."
            ) from None
    stopped = False
    for c in caught:  # re-issue what is not about convergence
        if issubclass(c.category, SkConvergenceWarning):
            stopped = True
        else:
            warnings.warn_explicit(c.message, c.category, c.filename, c.lineno)
    coef = np.zeros((d.size, p))
    coef[order] = np.asarray(model.coef_, dtype=np.float64)[n_cov:].T
    if stopped:
        # The KKT check knows the genes only: without covariates it measures.
        viol = "unknown (unpenalized covariates)"
        if not n_cov:
            viol = ", ".join(
                f"{d[i]:.4g}: {_kkt(X, t, e, coef[i], d[i], l1_ratio):.3g}"
                for i in order
            )
        warnings.warn(
            f"The Cox penalized weights did not converge within max_iter={max_iter} "
            f"coordinate-descent passes (tol={tol:g}); relative KKT violation "
            f"per delta: {viol}.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return coef
