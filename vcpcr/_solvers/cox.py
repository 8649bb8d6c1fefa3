"""Cox pieces of step 0: the penalized Cox weights and their checks.

Weights use glmnet's parametrization (no intercept). The loss is Breslow's
partial likelihood from :mod:`vcpcr._solvers.partial_likelihood` (one sort by time,
risk-set sums in the log domain).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vcpcr._solvers.kkt import KKT_TOL, WeightsPath, relative_kkt, warn_kkt
from vcpcr._solvers.partial_likelihood import RiskSets
from vcpcr._solvers.ridge import newton, spectrum
from vcpcr.exceptions import VCPCRWarning, user_stacklevel

__all__ = [
    "MIN_LOG_STEP",
    "cox_lasso_delta_max",
    "cox_lasso_path",
    "cox_ridge_path",
]

_Float = NDArray[np.float64]


def _check_path_input(
    Xs: ArrayLike, time: ArrayLike, event: ArrayLike, deltas: ArrayLike
) -> tuple[_Float, RiskSets, _Float]:
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
    return X, RiskSets(t, event), d


def cox_ridge_path(
    Xs: ArrayLike,
    time: ArrayLike,
    event: ArrayLike,
    deltas: ArrayLike,
    *,
    max_iter: int = 100,
    return_kkt: bool = False,
) -> _Float | WeightsPath:
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
    return_kkt : bool, default=False
        Return a :class:`~vcpcr._solvers.kkt.WeightsPath`, the weights with
        their relative KKT violations (rounding level).

    Returns
    -------
    ndarray of shape (n_deltas, n_features), or WeightsPath
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
    >>> from vcpcr._solvers.cox import cox_ridge_path
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
    coef = (thetas @ (U / s).T) @ X
    if not return_kkt:
        return coef
    return WeightsPath(
        coef, np.array([_kkt(X, rs, w, v, 0.0) for w, v in zip(coef, d, strict=True)])
    )


def _ridge_newton(
    Z: _Float,
    rs: RiskSets,
    delta: float,
    theta0: _Float,
    max_iter: int,
    what: str = "the Cox ridge weights",
) -> _Float:
    """Newton on ``-(1/n) log PL(Z theta) + delta/2 ||theta||^2`` (sorted Z).

    ``what`` names the fit in a non-convergence warning.
    """

    def f(th: _Float) -> float:
        return rs.breslow_loss(Z @ th) + 0.5 * delta * float(th @ th)

    def grad_hess(th: _Float) -> tuple[_Float, _Float]:
        es = Z @ th
        tm = rs.breslow_terms(es)
        H = Z.T @ rs.breslow_hessian(es, tm) @ Z
        H[np.diag_indices_from(H)] += delta
        return Z.T @ rs.breslow_gradient(es, tm) + delta * th, H

    theta = newton(f, grad_hess, theta0, max_iter=max_iter, what=what)
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
    grad = rs.breslow(np.zeros(X.shape[0]), hessian=False)[1]
    return float(np.abs(X.T @ grad).max())


def _kkt(
    X: _Float,
    rs: RiskSets,
    w: _Float,
    delta: float,
    l1_ratio: float,
    offset: _Float | float = 0.0,
) -> float:
    """Largest violation of the optimality conditions, relative to ``delta``.

    ``offset`` is the unpenalized covariates' part of the linear predictor
    (:func:`vcpcr._solvers.kkt.relative_kkt`).
    """
    grad = X.T @ rs.breslow(X @ w + offset, hessian=False)[1]
    return relative_kkt(grad, w, delta, l1_ratio)


def cox_lasso_path(
    Xs: ArrayLike,
    time: ArrayLike,
    event: ArrayLike,
    deltas: ArrayLike,
    *,
    l1_ratio: float = 1.0,
    covariates: ArrayLike | None = None,
    tol: float | None = None,
    max_iter: int = 100_000,
    return_kkt: bool = False,
) -> _Float | WeightsPath:
    r"""Lasso or elastic-net Cox weights for every ``delta`` (glmnet ``alpha``).

    Parameters
    ----------
    Xs, time, event, deltas : array-like
        As in :func:`cox_ridge_path`.
    l1_ratio : float, default=1.0
        glmnet's ``alpha`` in ``(0, 1]``: the penalty is :math:`\delta
        (\alpha\lVert w\rVert_1 + \frac{1-\alpha}{2}\lVert w\rVert_2^2)`.
    covariates : array-like of shape (n_samples, c), optional
        Unpenalized columns (Coxnet's ``penalty_factor = 0``); their
        coefficients are not returned. Coxnet, like glmnet, rescales the
        penalty factors to sum to the number of columns, so it is called with
        ``alpha = delta * p / (p + c)``: the features' penalty stays ``delta``.
        ``delta_max`` is then the largest gradient at the covariates-only
        (unpenalized) Cox fit.
    tol : float, optional
        Coxnet's (and glmnet's ``thresh``) convergence threshold: coordinate
        descent stops when no coefficient update changes the objective by more
        than ``tol`` times the null deviance. Default: glmnet's ``1e-7`` for
        the lasso; :data:`POLISH_START_TOL` (``1e-5``) for an elastic net,
        whose weights are then polished (Notes).
    max_iter : int, default=100000
        Coxnet's maximum number of coordinate-descent passes (whole path).
    return_kkt : bool, default=False
        Return a :class:`~vcpcr._solvers.kkt.WeightsPath`, the weights with
        their relative KKT violations (as scikit-learn's ``enet_path`` has
        ``return_n_iter``).

    Returns
    -------
    ndarray of shape (n_deltas, n_features), or WeightsPath
        Row ``i`` minimizes :math:`-\frac1n\log PL_{Breslow}(Xw)` plus the
        penalty at :math:`\delta_i`; a ``delta`` below the end of the path
        (see Notes) gets the weights at the end of the path.

    Raises
    ------
    ImportError
        If scikit-survival (the ``survival`` extra) is not installed.
    ValueError
        If not even the first step of the path below ``delta_max`` can be
        fitted.

    Warns
    -----
    VCPCRWarning
        Once, naming the requested deltas below the end of the path and why
        the path ended there (saturated partial likelihood, or a fit that
        diverged even with the finest step). Not a ``ConvergenceWarning``:
        more iterations would not change it, larger deltas would.
    ConvergenceWarning
        If the weights of a requested ``delta`` (on the fitted path) have a
        relative KKT violation above :data:`~vcpcr._solvers.kkt.KKT_TOL`
        (``1e-3``); the message gives the violation per such ``delta`` (and
        says whether Coxnet stopped at ``max_iter``).

    Notes
    -----
    The engine is scikit-survival's :class:`~sksurv.linear_model.\
CoxnetSurvivalAnalysis`, a C++ port of glmnet's Cox coordinate descent
    (Breslow ties, warm starts along decreasing ``delta``, strong rules and
    active sets), called through its public API with ``normalize=False``:
    the same objective and stopping rule as R's ``glmnet(X, Surv(time,
    event), family = "cox", standardize = FALSE)``. Tested against R glmnet
    in ``tests/test_cox.py``.

    Coordinate descent on the Cox loss has no step-size control, so a warm
    start far from the solution can overflow (Coxnet then raises
    ``ArithmeticError``). The requested deltas below ``delta_max``
    (:func:`cox_lasso_delta_max` divided by ``l1_ratio``; at or above it the
    weights are zero) form the path; where a step fails, a step of half its
    length (in log delta) is inserted before it and the path fitted again,
    down to steps of :data:`MIN_LOG_STEP`, where the path is cut. Coxnet
    also ends a path early when the deviance ratio grows by less than 0.1%
    over five steps (the partial likelihood is saturated); deltas below the
    last fitted step get its weights, with one warning.

    Coxnet stops by the change of the objective, not by optimality: on 300 x
    20,000 data at ``l1_ratio=0.05`` its weights at ``tol=1e-7`` violate the
    optimality conditions by up to 0.21 of ``delta`` (at ``0.01
    delta_max``, 3,355 non-zeros where the optimum has 4,465). With an
    ``l2`` part (``l1_ratio < 1``) the weights of each requested ``delta`` on
    the path are therefore polished from Coxnet's (:func:`_polish`): a
    semismooth Newton method on the ``n``-dimensional linear predictor, to a
    relative KKT violation below ``1e-10`` in a few steps. Coxnet then only
    gives the start, so it runs at :data:`POLISH_START_TOL`: on that example
    the six deltas take about 1.4 s instead of Coxnet's 3.4 s at ``1e-7``
    (whose weights the polish would move anyway). The lasso
    (``l1_ratio=1``) keeps Coxnet's weights. Either way the violations are
    checked (``return_kkt``), and warned about above ``KKT_TOL``.

    glmnet's default path (100 deltas from ``delta_max``) is not used: on
    tied times Coxnet's deviance ratio is offset (its null deviance ignores
    ties), so on a dense path its stopping rule fires within the first five
    steps below ``delta_max``.
    """
    X, rs, d = _check_path_input(Xs, time, event, deltas)
    t = np.asarray(time, dtype=np.float64)
    e = np.asarray(event, dtype=bool)
    Z = np.empty((X.shape[0], 0)) if covariates is None else np.asarray(covariates)
    if tol is None:
        tol = POLISH_START_TOL if l1_ratio < 1 else 1e-7
    prob = _Problem(X, Z.astype(np.float64), t, e, rs, float(l1_ratio), tol, max_iter)
    offset = _covariates_offset(Z, rs)
    grad = rs.breslow(offset, hessian=False)[1]
    top = float(np.abs(X.T @ grad).max()) / float(l1_ratio)
    below = d < top  # at or above delta_max the weights are exactly zero
    if not below.any():
        coef = np.zeros((d.size, X.shape[1]))
        kkt = np.array([_kkt(X, rs, coef[0], v, l1_ratio, offset) for v in d])
        return WeightsPath(coef, kkt) if return_kkt else coef
    path = _warm_start_path(np.unique(d[below])[::-1], top)
    fit = _fit_path(prob, path, top)
    _warn_short(fit, d[below & (d < fit.alphas[-1])], top)
    reached = below & (d >= fit.alphas[-1])
    coef, offsets = _rows(fit, d, offset, top)
    if prob.l1_ratio < 1:
        for i in np.flatnonzero(reached):
            coef[i], offsets[i] = _polish(prob, coef[i], offsets[i], float(d[i]))
        how = f" to tol={tol:g}, then at most {MAX_POLISH} semismooth Newton steps"
    else:
        fit, coef, offsets, how = _tighten(prob, path, top, d, offset, fit, reached)
    kkt = np.array(
        [_kkt(X, rs, coef[i], d[i], l1_ratio, offsets[i]) for i in range(d.size)]
    )
    stopped = f"; Coxnet stopped at max_iter={max_iter}" if fit.stopped else ""
    # below the end of the path the weights are another delta's (warned)
    checked = ~below | reached
    warn_kkt("Cox penalized", d, kkt, f"coordinate descent{how}{stopped}", checked)
    return WeightsPath(coef, kkt) if return_kkt else coef


def _warn_short(fit: _PathFit, short: _Float, top: float) -> None:
    """Warn that the deltas ``short`` lie below the end of the fitted path."""
    if not short.size:
        return
    ends = fit.alphas[-1]
    why = (
        "Coxnet stopped the path there, as its deviance ratio grew by "
        "< 0.1% over five steps (a saturated partial likelihood, or deltas "
        "too close together)"
        if not fit.diverged
        else f"the next step diverged even with a step of "
        f"{fit.step:.3g} in log10(delta)"
    )
    warnings.warn(
        f"The penalized Cox path ends at delta={ends:.4g} "
        f"({ends / top:.3g} x delta_max): {why}. The weights of "
        f"delta={', '.join(f'{v:.4g}' for v in short)} are those at "
        f"delta={ends:.4g}. Use deltas >= {ends:.4g}.",
        VCPCRWarning,
        stacklevel=user_stacklevel(),
    )


def _rows(
    fit: _PathFit, d: _Float, offset: _Float, top: float
) -> tuple[_Float, list[_Float]]:
    """Return the weights and covariates' offsets of the requested deltas ``d``.

    At or above ``top`` (``delta_max``) the weights are zero and the offset
    the covariates-only fit's.
    """
    coef = np.zeros((d.size, fit.coef.shape[1]))
    offsets = [offset] * d.size
    for i in np.flatnonzero(d < top):
        row = _path_row(fit, d[i])
        coef[i], offsets[i] = fit.coef[row], fit.offset[row]
    return coef, offsets


#: The Coxnet tolerances the lasso path (no l2 part to polish with, see
#: :func:`_polish`) is refitted with, in turn, while a requested delta
#: misses :data:`~vcpcr._solvers.kkt.KKT_TOL` (the tolerance times these).
LASSO_TIGHTER = (1e-2, 1e-4)


def _tighten(
    prob: _Problem,
    path: _Float,
    top: float,
    d: _Float,
    offset: _Float,
    fit: _PathFit,
    reached: NDArray[np.bool_],
) -> tuple[_PathFit, _Float, list[_Float], str]:
    """Refit a lasso path with tighter Coxnet tolerances until it meets KKT_TOL.

    Returns the last fit, the weights and offsets of ``d`` and what was
    tried (for a warning). A refit whose path ends earlier is not used; a
    fit stopped at ``max_iter`` is not refitted (the cap is the caller's).
    """
    coef, offsets = _rows(fit, d, offset, top)
    tried = f" to tol={prob.tol:g}"
    for factor in () if fit.stopped else LASSO_TIGHTER:  # not past max_iter
        kkt = [
            _kkt(prob.X, prob.rs, coef[i], d[i], 1.0, offsets[i]) for i in range(d.size)
        ]
        if (
            max((k for k, r in zip(kkt, reached, strict=True) if r), default=0.0)
            <= KKT_TOL
        ):
            break
        tol = prob.tol * factor
        refit = _fit_path(prob._replace(tol=tol), path, top)
        tried += f", then tol={tol:g}"
        if refit.alphas[-1] <= fit.alphas[-1]:
            fit = refit
            coef, offsets = _rows(fit, d, offset, top)
    return fit, coef, offsets, tried


#: Coxnet's default ``tol`` for an elastic net, whose weights it only starts
#: (:func:`_polish` finishes them): on 300 x 20,000 simulated genes (the
#: default grid) the path takes 0.55 s at 1e-5 against 3.0 s at 1e-7, and
#: the polish 0.85 s against 0.53 s, to the same violation; on the
#: six SurvSet cohorts of the benchmarks it halves the path's time.
POLISH_START_TOL = 1e-5
#: At most this many semismooth Newton steps polish a delta's weights
#: (:func:`_polish`); from Coxnet's weights it takes a few (1-5 to 1e-5).
MAX_POLISH = 50
#: The relative KKT violation at which :func:`_polish` stops, far below
#: :data:`~vcpcr._solvers.kkt.KKT_TOL`: Newton converges quadratically, so
#: the last step or two cost little, and the weights then do not depend on
#: where Coxnet stopped (at 1e-6 they still did in the sixth digit, enough
#: to flip step 2's separation check on a monotone likelihood).
POLISH_KKT = 1e-10


def _polish(
    prob: _Problem, w0: _Float, offset0: _Float, delta: float
) -> tuple[_Float, _Float]:
    r"""Polish elastic-net Cox weights ``w0`` (``l1_ratio < 1``) at ``delta``.

    Returns the weights and the covariates' linear predictor, the start's
    if no step improved on its KKT violation.

    With :math:`l_1 = a\delta`, :math:`l_2 = (1-a)\delta > 0` the optimum
    is :math:`w = S(-X'g(\eta), l_1) / l_2` (``S`` soft-thresholding,
    ``g`` the loss' gradient in the linear predictor) at the
    :math:`\eta = Z\beta + Xw` that solves

    .. math::

        F(\eta, \beta) = \begin{pmatrix} \eta - Z\beta
        - X S(-X'g(\eta), l_1)/l_2 \\ Z'g(\eta) \end{pmatrix} = 0,

    ``n + c`` equations (``Z``: the unpenalized covariates). ``F`` is
    piecewise smooth; its generalized Jacobian is ``[[I + X_A X_A' H /
    l_2, -Z], [Z'H, 0]]``, ``A`` the features with :math:`|x_j'g| > l_1`
    and ``H`` the loss' Hessian in :math:`\eta`, so each Newton step solves
    an ``(n + c)``-square system whatever the number of features, with
    ``X_A X_A'`` updated as ``A`` changes (semismooth Newton, as in
    Li, Sun & Toh 2018, SIAM J Optim 28:433, on the primal here). With
    fewer features than rows that system costs ``O(n^3)`` a step (minutes
    at 5,000 rows) and is solved in the active features' space instead
    (:func:`_active_space_step`, ``O(n |A|^2)``). Steps
    are damped by backtracking on ``||F||``; the iteration stops at a
    relative KKT violation of :data:`POLISH_KKT`, after
    :data:`MAX_POLISH` steps, when a step no longer lowers ``||F||``, or at
    a singular Jacobian (covariates that separate the outcome).
    """
    rs, Xo = prob.rs, prob.X[prob.rs.order]
    Zo = prob.Z[rs.order]
    n, c = Zo.shape
    l1, l2 = delta * prob.l1_ratio, delta * (1.0 - prob.l1_ratio)

    def residual(
        eta: _Float, beta: _Float
    ) -> tuple[_Float, _Float, tuple[_Float, _Float]]:
        terms = rs.breslow_terms(eta)
        g = rs.breslow_gradient(eta, terms)
        v = -(Xo.T @ g)
        w = np.sign(v) * np.maximum(np.abs(v) - l1, 0.0) / l2
        F = np.concatenate([eta - Zo @ beta - Xo @ w, Zo.T @ g])
        return w, F, terms

    def kkt(w: _Float, beta: _Float) -> float:
        return _kkt(prob.X, rs, w, delta, prob.l1_ratio, prob.Z @ beta)

    beta: _Float = np.zeros(c)
    if c:
        beta = np.asarray(np.linalg.lstsq(prob.Z, offset0, rcond=None)[0], np.float64)
    best = (kkt(w0, beta), w0, beta)
    eta = Xo @ w0 + Zo @ beta
    w, F, terms = residual(eta, beta)
    norm, active = float(np.linalg.norm(F)), np.zeros(w.size, bool)
    K = np.zeros((n, n)) if Xo.shape[1] >= n else None  # X_A X_A' (n x n)
    for it in range(MAX_POLISH + 1):
        if (k := kkt(w, beta)) < best[0]:
            best = (k, w, beta)
        if k <= POLISH_KKT or it == MAX_POLISH:
            break
        now = w != 0
        if K is None:
            step = _active_space_step(rs, eta, terms, Xo[:, now], Zo, F, l2)
        else:
            step = _dense_step(K, Xo, active, now, (rs, eta, terms), Zo, F, l2)
        active = now
        cand = None if step is None else _newton_step(residual, eta, beta, step, norm)
        if cand is None:
            break  # no step lowers ||F|| (rounding level, a kink), or J singular
        eta, beta, (w, F, terms) = cand
        norm = float(np.linalg.norm(F))
    return best[1], (prob.Z @ best[2]) if c else offset0


def _dense_step(
    K: _Float,
    Xo: _Float,
    active: NDArray[np.bool_],
    now: NDArray[np.bool_],
    at: tuple[RiskSets, _Float, tuple[_Float, _Float]],
    Zo: _Float,
    F: _Float,
    l2: float,
) -> _Float | None:
    """Newton's step ``-J^{-1} F`` of :func:`_polish` from the ``(n + c)``-square J.

    ``K = X_A X_A'`` (sorted) is updated in place from the features
    ``active`` at the last step to those active ``now``; ``at`` is the risk
    sets, the linear predictor and its Breslow terms. None where ``J`` is
    singular.
    """
    for cols, sign in ((now & ~active, 1.0), (active & ~now, -1.0)):
        if cols.any():
            K += sign * (Xo[:, cols] @ Xo[:, cols].T)
    rs, eta, terms = at
    n, c = Zo.shape
    H = rs.breslow_hessian(eta, terms)
    J = np.block([[np.eye(n) + K @ H / l2, -Zo], [Zo.T @ H, np.zeros((c, c))]])
    try:
        return -np.linalg.solve(J, F)
    except np.linalg.LinAlgError:
        return None


def _active_space_step(
    rs: RiskSets,
    eta: _Float,
    terms: tuple[_Float, _Float],
    XA: _Float,
    Zo: _Float,
    F: _Float,
    l2: float,
) -> _Float | None:
    r"""Newton's step ``-J^{-1} F`` of :func:`_polish` in the active features' space.

    ``J = [[M, -Z], [Z'H, 0]]`` with :math:`M = I + X_A X_A' H / l_2`, whose
    inverse is :math:`I - X_A (l_2 I + X_A' H X_A)^{-1} X_A' H` (Woodbury;
    ``l_2 I + X_A' H X_A`` is positive definite); the covariates' part is the
    ``c``-square Schur complement :math:`Z'H M^{-1} Z`. ``H`` enters only
    through products (:meth:`RiskSets.breslow_hessian_dot`), so a step
    costs ``O(n |A|^2 + |A|^3)`` instead of ``O(n^3)``. ``XA``, ``Zo`` are
    the active features and the covariates, sorted; None where the Schur
    complement is singular (covariates that separate the outcome).
    """
    n = eta.size
    HXA = rs.breslow_hessian_dot(eta, terms, XA)
    inner = l2 * np.eye(XA.shape[1]) + XA.T @ HXA
    Y = np.column_stack([F[:n], Zo])
    MY = Y - XA @ np.linalg.solve(inner, HXA.T @ Y)  # M^{-1} [F_1, Z]
    MF, MZ = MY[:, 0], MY[:, 1:]
    if Zo.shape[1] == 0:
        return -MF
    HZ = rs.breslow_hessian_dot(eta, terms, Zo)
    try:
        s2 = np.linalg.solve(HZ.T @ MZ, F[n:] - HZ.T @ MF)
    except np.linalg.LinAlgError:
        return None
    return -np.concatenate([MF + MZ @ s2, s2])


def _newton_step(
    residual: Callable[[_Float, _Float], tuple[_Float, _Float, Any]],
    eta: _Float,
    beta: _Float,
    step: _Float,
    norm: float,
) -> tuple[_Float, _Float, tuple[_Float, _Float, Any]] | None:
    """Take the damped Newton ``step`` (``-J^{-1} F``) on ``(eta, beta)``.

    Halves the step from 1 down to ``1e-6`` until ``||F||`` (``norm`` now)
    drops enough (Armijo); returns the new point and its ``residual``, or
    None if no step lowered it.
    """
    n, t = eta.size, 1.0
    while t >= 1e-6:
        cand = (eta + t * step[:n], beta + t * step[n:])
        out = residual(*cand)
        if float(np.linalg.norm(out[1])) <= (1 - 1e-4 * t) * norm:
            return cand[0], cand[1], out
        t /= 2
    return None


#: The finest step (log10 delta) the Cox elastic-net path is refined to where
#: a step diverges: glmnet's default step (100 values over two decades).
MIN_LOG_STEP = 2 / 99
#: Coordinate-descent passes per delta that one Coxnet attempt may use
#: before its step counts as failed and is refined (:func:`_attempt`). A
#: converging step takes tens of passes (glmnet's ``maxit`` of 1e5 is a
#: whole-path cap that a wandering step can exhaust for minutes).
PASSES_PER_DELTA = 1000
#: The longest step (log10 delta) of a Cox path, from ``delta_max`` down:
#: about half the spacing of VCPCRCV's default grid (0.34), so each grid step
#: is crossed in two warm-started steps. A longer gap, such as one delta far
#: below ``delta_max`` (VCPCR.fit, the refit), is crossed through evenly
#: spaced points, as glmnet's path does: one cold jump diverges and its
#: refinement costs several full Coxnet fits (77 s instead of 1 s on chop).
#: With steps of 0.35, one gse1992 half (42 rows, 15,528 features) in 25 took
#: 10 x the median fit time (a step that wandered, then was refined); with
#: 0.18 the slowest took 3 x, and the 50 fits 20 % less in all.
MAX_LOG_STEP = 0.18


def _warm_start_path(path: _Float, top: float) -> _Float:
    """Insert points where ``path`` (decreasing, below ``top``) steps too far.

    Gaps of at most :data:`MAX_LOG_STEP` are left as they are; longer ones
    (the default grid's 0.34 included) get evenly spaced points.
    """
    points = [path]
    upper = np.r_[top, path[:-1]]
    for hi, lo in zip(np.log10(upper), np.log10(path), strict=True):
        k = int(np.ceil((hi - lo) / MAX_LOG_STEP))
        if k > 1:
            points.append(10 ** np.linspace(hi, lo, k + 1)[1:-1])
    return np.unique(np.concatenate(points))[::-1]


#: Where the path is cut, trailing steps whose KKT violation (relative to
#: delta) exceeds this are dropped: they are not solutions (glmnet's stopping
#: rule leaves violations of ~1e-2).
_CUT_KKT = 0.1


class _Problem(NamedTuple):
    """The data and settings of one Cox elastic-net path."""

    X: _Float
    Z: _Float  # unpenalized covariates, (n_samples, c) with c >= 0
    t: _Float
    e: NDArray[np.bool_]
    rs: RiskSets  # the risk sets of (t, e), for the KKT checks
    l1_ratio: float
    tol: float
    max_iter: int


class _PathFit(NamedTuple):
    """What Coxnet fitted: the deltas reached (decreasing) and their weights."""

    alphas: _Float
    coef: _Float  # (n_alphas, n_features)
    offset: _Float  # (n_alphas, n_samples): the covariates' linear predictor
    diverged: bool  # the path was cut at a step that diverged at the finest step
    step: float  # the last step tried (log10), when diverged
    stopped: bool  # Coxnet reached max_iter


def _coxnet(prob: _Problem, path: _Float, max_iter: int) -> _PathFit:
    """One Coxnet fit along ``path`` (deltas, decreasing); ``max_iter`` hit or not.

    With covariates, Coxnet fits ``[Z, X]`` with ``penalty_factor`` 0 on
    ``Z`` at ``alpha = delta * p / (p + c)`` (it rescales the factors to sum
    to ``p + c``), so the features' penalty is ``delta``. Raises
    ``ArithmeticError`` where a step diverges (Coxnet's guard).
    """
    from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
    from sksurv.linear_model import CoxnetSurvivalAnalysis
    from sksurv.util import Surv

    p, c = prob.X.shape[1], prob.Z.shape[1]
    scale = p / (p + c)
    model = CoxnetSurvivalAnalysis(
        alphas=path * scale,
        penalty_factor=np.r_[np.zeros(c), np.ones(p)] if c else None,
        l1_ratio=prob.l1_ratio,
        normalize=False,
        tol=prob.tol,
        max_iter=max_iter,
        fit_baseline_model=False,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkConvergenceWarning)
        # vcpcr warns about all-zero weights in one place (the estimator).
        warnings.filterwarnings("ignore", "all coefficients are zero")
        model.fit(np.column_stack([prob.Z, prob.X]), Surv.from_arrays(prob.e, prob.t))
    stopped = False
    for w in caught:  # re-issue what is not about convergence
        if issubclass(w.category, SkConvergenceWarning):
            stopped = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    coef = np.asarray(model.coef_, dtype=np.float64).T
    # the deltas reached, on the requested values (not rescaled back)
    alphas = path[: coef.shape[0]]
    offset = coef[:, :c] @ prob.Z.T
    return _PathFit(alphas, coef[:, c:], offset, False, 0.0, stopped)


def _covariates_offset(Z: _Float, rs: RiskSets) -> _Float:
    """Linear predictor of the unpenalized Cox fit on the covariates (0 without)."""
    if Z.shape[1] == 0:
        return np.zeros(Z.shape[0])
    what = (
        "the unpenalized Cox fit of the covariates (the offset of the penalized "
        "Cox weights; a covariate level that separates the outcome makes it "
        "diverge)"
    )
    theta = _ridge_newton(Z[rs.order], rs, 0.0, np.zeros(Z.shape[1]), 100, what)
    return np.asarray(Z @ theta, dtype=np.float64)


def _path_row(fit: _PathFit, delta: float) -> int:
    """Row of ``fit`` for a requested ``delta`` (the last one if not reached)."""
    j = np.flatnonzero(fit.alphas == delta)
    return int(j[0]) if j.size else fit.alphas.size - 1


class _Failure(NamedTuple):
    """Why a Coxnet attempt failed: it diverged, or used up its pass budget."""

    diverged: bool


def _attempt(prob: _Problem, path: _Float, full: bool) -> _PathFit | _Failure:
    """Coxnet along ``path`` within its pass budget, or why it failed.

    Unless ``full``, an attempt has :data:`PASSES_PER_DELTA` passes per delta
    (at most the caller's ``max_iter``) and fails when it uses them up: a warm
    start too far from the solution makes coordinate descent wander through
    thousands of features for minutes before it overflows (66 s for one step
    on 42 rows x 15,528 features, against 0.05 s for the same deltas in four
    shorter steps). With ``full``, or a budget equal to ``max_iter``, a fit
    that stops at ``max_iter`` is returned, stopped.
    """
    budget = prob.max_iter if full else min(prob.max_iter, PASSES_PER_DELTA * path.size)
    try:
        fit = _coxnet(prob, path, budget)
    except ArithmeticError:
        return _Failure(diverged=True)
    if fit.stopped and budget < prob.max_iter:
        return _Failure(diverged=False)
    return fit


def _fit_path(prob: _Problem, path: _Float, top: float) -> _PathFit:
    """Fit ``path`` (decreasing, below ``top``), refining the steps that fail.

    Where a step fails (:func:`_attempt`), the first failing step is found by
    bisection over prefixes of the path (a prefix's fit does not depend on
    what follows) and halved (in log delta; the step before ``path[0]``
    starts at ``top``, where the weights are zero). A step that still fails
    at :data:`MIN_LOG_STEP` because it used up its budget is slow, not
    wandering (a lasso near a saturated likelihood can need thousands of
    passes): the path is fitted again with the caller's whole ``max_iter``.
    A step that diverges at :data:`MIN_LOG_STEP`, or fails with the whole
    ``max_iter``, cuts the path there. The work is bounded: each halving
    costs at most ``log2(len(path))`` budgeted attempts, and each step at
    most ``log2(step / MIN_LOG_STEP)`` halvings.
    """
    try:
        import sksurv.linear_model  # noqa: F401
    except ImportError:
        raise ImportError(
            "Penalized Cox weights require scikit-survival: "
            "pip install 'vcpcr[survival]'"
        ) from None
    full = False
    while True:
        first = _attempt(prob, path, full)
        if isinstance(first, _PathFit):
            return first
        ok, bad, failure = 0, path.size, first  # path[:ok] fits, path[:bad] fails
        while bad - ok > 1:
            mid = (ok + bad) // 2
            probe = _attempt(prob, path[:mid], full)
            if isinstance(probe, _Failure):
                bad, failure = mid, probe
            else:
                ok = mid
        j = bad - 1  # the first step that fails
        before = path[j - 1] if j else top
        step = float(np.log10(before / path[j]))
        if step >= 1.5 * MIN_LOG_STEP:
            path = np.concatenate([path[:j], [np.sqrt(before * path[j])], path[j:]])
        elif not (failure.diverged or full):
            full = True
        elif j == 0:
            raise ValueError(
                f"The penalized Cox fit diverged at delta={path[0]:.4g}, a "
                f"step of {step:.2g} in log10(delta) below delta_max="
                f"{top:.4g} (elastic-net mixing {prob.l1_ratio:g}): nothing "
                f"can be fitted on these data. Use weights='ridge', a "
                f"scheme with more L1 (weights='lasso'), or remove "
                f"near-duplicate or extreme columns."
            )
        else:
            return _cut_path(prob, path, top, j, step, full)


def _cut_path(
    prob: _Problem, path: _Float, top: float, j: int, step: float, full: bool
) -> _PathFit:
    """Fit ``path[:j]`` and drop its trailing steps that are not solutions."""
    fit = _attempt(prob, path[:j], full)
    assert isinstance(fit, _PathFit)  # path[:j] fitted in the bisection
    keep = fit.alphas.size
    while keep and (
        _kkt(
            prob.X,
            prob.rs,
            fit.coef[keep - 1],
            fit.alphas[keep - 1],
            prob.l1_ratio,
            fit.offset[keep - 1],
        )
        > _CUT_KKT
    ):
        keep -= 1
    if keep == 0:
        raise ValueError(
            f"The penalized Cox fit diverged below delta={path[0]:.4g} "
            f"(delta_max={top:.4g}, elastic-net mixing {prob.l1_ratio:g}) and "
            f"no step before converged: nothing can be fitted on these data. "
            f"Use weights='ridge', a scheme with more L1 (weights='lasso'), or "
            f"larger deltas."
        )
    # the steps kept meet the KKT conditions to _CUT_KKT
    stopped = fit.stopped and keep == fit.alphas.size
    return _PathFit(
        fit.alphas[:keep], fit.coef[:keep], fit.offset[:keep], True, step, stopped
    )
