"""glmnet's single-penalty gaussian elastic net, *including its stopping rule*.

The VC-PCR authors computed their "ridge" and "lasso" weights with one call
``glmnet(X, y, family = "gaussian", alpha = 0 or 1, lambda = delta,
standardize = FALSE)`` on data they had already standardized (sample sd), with
glmnet's defaults ``intercept = TRUE``, ``thresh = 1e-7``, ``maxit = 1e5`` and
``type.gaussian = "covariance"`` (the default for fewer than 500 features).
glmnet's coordinate descent starts from zero and stops as soon as no
coefficient moves by more than its threshold in one pass. With ``p > n`` and
the paper's small penalties that happens far from the ridge or lasso solution:
after 4-8 passes for ``lambda <= 5e-4`` and after a few hundred for
``lambda`` in ``[1e-3, 1e-2]``, 0.3 to 2.9 times the solution's norm away from
it on the paper's simulated data (``tests/reference/glmnet_paper_weights.R``).
The unconverged part depends on the *order of the columns*: the features
visited first keep most of the signal (see ``docs/weights-study.md``).
:func:`glmnet_gaussian` repeats glmnet's arithmetic step by step
(glmnet 4.1-6, the ``glmnetpp`` C++ port of the Fortran ``elnet1``), so that
the paper's weights can be reproduced without R:

1. internal standardization with observation weights ``1/n``: ``x`` centred
   (``intercept``) and, with ``standardize``, scaled to unit *population*
   variance; ``y`` centred and scaled by ``ys = sqrt(mean((y - ybar)^2))``,
   and the penalty divided by ``ys``;
2. the covariance algorithm: gradient ``g_j = x_j'r`` kept up to date from
   cached inner products ``x_j'x_k`` of the active features;
3. a *full* pass over all features; if not converged, *partial* passes over
   the active set until converged, then another full pass, and so on; a
   feature becomes active when its coefficient first changes;
4. convergence when ``max_k xv_k * (change of b_k)^2 < thresh`` within one
   pass (``xv_k`` is the internal variance of feature ``k``);
5. coefficients un-standardized by ``ys / xs_j``, the intercept from the means.

Only ``family = "gaussian"``, a single ``lambda``, no observation weights,
penalty factors or box constraints: what the paper used.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import solve_triangular

from vcpcr._checks import check_array, check_varying, check_y_length
from vcpcr.exceptions import ConvergenceWarning, user_stacklevel

__all__ = ["GlmnetFit", "glmnet_gaussian", "glmnet_weights"]

#: glmnet's defaults (``?glmnet``): convergence threshold and maximal passes.
THRESH = 1e-7
MAXIT = 100_000


class GlmnetFit(NamedTuple):
    """Result of :func:`glmnet_gaussian`, as R's ``glmnet`` object reports it.

    ``coef`` is ``fit$beta[, 1]``, ``intercept`` is ``fit$a0``, ``n_passes``
    is ``fit$npasses`` (full plus partial passes over the data),
    ``dev_ratio`` is ``fit$dev.ratio`` and ``converged`` is False when
    ``maxit`` passes were reached (R then returns no solution and warns).
    """

    coef: NDArray[np.float64]
    intercept: float
    n_passes: int
    dev_ratio: float
    converged: bool


class _Standardized(NamedTuple):
    """glmnet's internal copy of the data (``Standardize`` in glmnetpp)."""

    x: NDArray[np.float64]  # v * (x - xm) / xs, v = sqrt(1/n)
    g: NDArray[np.float64]  # x'y on the internal scale
    xm: NDArray[np.float64]
    xs: NDArray[np.float64]
    xv: NDArray[np.float64]
    ym: float
    ys: float
    include: NDArray[np.bool_]  # glmnet's ``ju``: non-constant columns


def _standardize(
    X: NDArray[np.float64], y: NDArray[np.float64], standardize: bool, intercept: bool
) -> _Standardized:
    """Repeat glmnet's ``Standardize`` for unit observation weights."""
    n, p = X.shape
    w = np.full(n, 1.0 / n)
    v = np.sqrt(w)
    include = np.any(X != X[0], axis=0)
    xm, xs = np.zeros(p), np.ones(p)
    if intercept:
        xm = np.where(include, X.T @ w, 0.0)
        x = v[:, None] * (X - xm)
        xv = np.einsum("ij,ij->j", x, x)
        if standardize:
            xs = np.where(include, np.sqrt(xv), 1.0)
            x, xv = x / xs, np.ones(p)
        ym = float(y @ w)
        yc = v * (y - ym)
    else:
        x = v[:, None] * X
        xv = np.einsum("ij,ij->j", x, x)
        if standardize:
            xbq = (x.T @ v) ** 2
            vc = np.where(include, xv - xbq, 1.0)
            xs = np.where(include, np.sqrt(vc), 1.0)
            x, xv = x / xs, np.where(include, 1.0 + xbq / vc, xv)
        ym = 0.0
        yc = v * y
    ys = float(np.sqrt(yc @ yc))
    yc = yc / ys
    g = np.where(include, x.T @ yc, 0.0)
    return _Standardized(x, g, xm, xs, xv, ym, ys, include)


class _CovarianceCD:
    """glmnet's covariance-update coordinate descent at one penalty, from 0.

    ``C[l]`` caches ``x'x_k`` for the ``l``-th feature to become active
    (glmnet's ``c_`` matrix, stored transposed); ``g`` is the gradient
    ``x'r`` of every feature.
    """

    def __init__(self, s: _Standardized, l1: float, l2: float) -> None:
        p = s.x.shape[1]
        self.s, self.l1, self.l2 = s, l1, l2
        self.g = s.g.copy()
        self.a = np.zeros(p)
        self.rsq = 0.0
        self.active: list[int] = []
        self.slot = np.full(p, -1, dtype=np.intp)
        self.C = np.zeros((0, p))
        self.n_passes = 0

    def _activate(self, k: int) -> None:
        s = self.s
        col = np.where(s.include, s.x.T @ s.x[:, k], 0.0)
        if self.active:
            act = np.asarray(self.active)
            col[act] = self.C[: len(act), k]  # reuse x_k'x_j (glmnet does)
        col[k] = s.xv[k]
        n_act = len(self.active)
        if n_act == self.C.shape[0]:
            grown = np.zeros((max(8, 2 * n_act), self.C.shape[1]))
            grown[:n_act] = self.C[:n_act]
            self.C = grown
        self.C[n_act] = col
        self.slot[k] = n_act
        self.active.append(k)

    def full_pass(self) -> float:
        """One pass over every included feature; return glmnet's ``dlx``."""
        self.n_passes += 1
        dlx = 0.0
        xv, a = self.s.xv, self.a
        for k in np.flatnonzero(self.s.include).tolist():
            old, gk, x = float(a[k]), float(self.g[k]), float(xv[k])
            new = _coordinate(gk, old, x, self.l1, self.l2)
            if new == old:
                continue
            a[k] = new
            if self.slot[k] < 0:
                self._activate(k)
            d = new - old
            dlx = max(x * d * d, dlx)
            self.rsq += d * (2.0 * gk - d * x)
            self.g -= self.C[self.slot[k]] * d
        return dlx

    def partial_phase(self, thresh: float, maxit: int) -> bool:
        """Active-set passes until converged, then sync the other gradients.

        Works on compressed copies of the active features (same arithmetic
        as glmnet's, which updates only the active gradients in these passes).
        Returns False if ``maxit`` passes were reached first.
        """
        act = np.asarray(self.active, dtype=np.intp)
        Cc = self.C[: act.size][:, act]  # row l: x_act'x_(l-th active)
        gc, before = self.g[act], self.a[act]
        ac, xv = before.tolist(), self.s.xv[act].tolist()
        converged = True
        while True:
            self.n_passes += 1
            dlx = 0.0
            for i in range(act.size):
                old, gi, x = ac[i], float(gc[i]), xv[i]
                new = _coordinate(gi, old, x, self.l1, self.l2)
                if new == old:
                    continue
                ac[i] = new
                d = new - old
                dlx = max(x * d * d, dlx)
                self.rsq += d * (2.0 * gi - d * x)
                gc -= Cc[i] * d
            if dlx < thresh:
                break
            if self.n_passes > maxit:
                converged = False
                break
        self.a[act], self.g[act] = ac, gc
        rest = np.flatnonzero(self.s.include & (self.slot < 0))
        self.g[rest] += (before - self.a[act]) @ self.C[: act.size, rest]
        return converged


def _coordinate(g: float, old: float, xv: float, l1: float, l2: float) -> float:
    """Return glmnet's coordinate update of one coefficient (``update_beta``)."""
    u = g + old * xv
    v = abs(u) - l1
    return math.copysign(v, u) / (xv + l2) if v > 0.0 else 0.0


class _RidgeSweeps:
    """The same coordinate descent for ``alpha = 0``, one pass per solve.

    With no l1 penalty every feature with a non-zero gradient enters in the
    first pass, after which full and active-set passes coincide: each pass is
    a Gauss-Seidel sweep on ``(G + l2 I) b = g``, computed as one triangular
    solve ``(L + D + l2 I) b_new = g - U b_old`` (``G = L + D + U``, with
    glmnet's ``D = xv``). Same iterates and stopping rule as
    :class:`_CovarianceCD` up to rounding, at BLAS speed. ``exact`` is False
    when a feature did not enter in the first pass (then use the loop).
    """

    def __init__(self, s: _Standardized, l2: float) -> None:
        self.s = s
        self.inc = np.flatnonzero(s.include)
        x = s.x[:, self.inc]
        G = x.T @ x
        G[np.diag_indices_from(G)] = s.xv[self.inc]
        self.lower = np.tril(G, -1) + np.diag(s.xv[self.inc] + l2)
        self.upper = np.triu(G, 1)
        self.G, self.g0 = G, s.g[self.inc]
        self.b = np.zeros(self.inc.size)
        self.n_passes = 0
        self.exact = True
        self.active = self.inc.tolist()

    def _sweep(self) -> float:
        self.n_passes += 1
        new = solve_triangular(self.lower, self.g0 - self.upper @ self.b, lower=True)
        if self.n_passes == 1 and not np.all(new != 0.0):
            self.exact = False
            return 0.0
        d, self.b = new - self.b, new
        return float(np.max(self.s.xv[self.inc] * d * d, initial=0.0))

    def full_pass(self) -> float:
        """One pass over every feature (all are active after the first)."""
        return self._sweep()

    def partial_phase(self, thresh: float, maxit: int) -> bool:
        """Active-set passes (here: every feature) until converged."""
        while self._sweep() >= thresh:
            if self.n_passes > maxit:
                return False
        return True

    @property
    def a(self) -> NDArray[np.float64]:
        """Coefficients on the internal scale (all features)."""
        out = np.zeros(self.s.x.shape[1])
        out[self.inc] = self.b
        return out

    @property
    def rsq(self) -> float:
        """Explained fraction of the internal ``||y||^2 = 1``."""
        return float(self.b @ (2.0 * self.g0 - self.G @ self.b))


def _descend(cd: _CovarianceCD | _RidgeSweeps, thresh: float, maxit: int) -> bool:
    """Run glmnet's control flow at one penalty: full, then active-set passes.

    Returns whether the stopping rule was met within ``maxit`` passes.
    """
    while True:
        if cd.full_pass() < thresh:
            return True
        if cd.n_passes > maxit or not cd.partial_phase(thresh, maxit):
            return False


def _solve(
    s: _Standardized, l1: float, l2: float, thresh: float, maxit: int
) -> tuple[_CovarianceCD | _RidgeSweeps, bool]:
    """Coordinate descent from zero; the ridge by sweeps when that is exact."""
    if l1 == 0.0 and s.include.any():
        sweeps = _RidgeSweeps(s, l2)
        converged = _descend(sweeps, thresh, maxit)
        if sweeps.exact:
            return sweeps, converged
    cd = _CovarianceCD(s, l1, l2)
    return cd, _descend(cd, thresh, maxit)


def glmnet_gaussian(
    X: ArrayLike,
    y: ArrayLike,
    lam: float,
    *,
    alpha: float = 1.0,
    standardize: bool = True,
    intercept: bool = True,
    thresh: float = THRESH,
    maxit: int = MAXIT,
) -> GlmnetFit:
    r"""Repeat R's ``glmnet(X, y, alpha = alpha, lambda = lam)`` (gaussian).

    One penalty, coordinate descent from zero with glmnet's covariance
    updates, active-set passes and stopping rule, so that the result equals
    R's to rounding, including where glmnet stops *before* the elastic-net
    solution (see the module docstring).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Predictors (constant columns get a zero coefficient, as in glmnet).
    y : array-like of shape (n_samples,)
        Response.
    lam : float
        glmnet's ``lambda`` (>= 0).
    alpha : float, default=1.0
        glmnet's ``alpha`` in ``[0, 1]``: 1 is the lasso, 0 the ridge.
    standardize : bool, default=True
        glmnet's ``standardize``: scale ``x`` internally to unit population
        variance (the coefficients are returned on the original scale).
    intercept : bool, default=True
        glmnet's ``intercept``.
    thresh : float, default=1e-7
        glmnet's ``thresh``: stop when no coefficient changes by more than
        ``sqrt(thresh / xv_j)`` in a pass.
    maxit : int, default=100000
        glmnet's ``maxit`` (passes over the data).

    Returns
    -------
    GlmnetFit
        ``coef``, ``intercept``, ``n_passes``, ``dev_ratio``, ``converged``.

    Raises
    ------
    ValueError
        For invalid data or parameters, or a constant ``y``.

    Warns
    -----
    ConvergenceWarning
        When ``maxit`` passes are reached (R returns no fit and warns; this
        function returns the last iterate).

    See Also
    --------
    glmnet_weights : The paper's weights, one such call per penalty.

    Notes
    -----
    At convergence of the iterations the coefficients would minimize

    .. math::

        \frac{1}{2n}\lVert y - b_0 - Xb\rVert_2^2 + \lambda\Big(\alpha
        \lVert D b\rVert_1 + \frac{1-\alpha}{2 s_y}\lVert D b\rVert_2^2\Big),

    with :math:`s_y` the population sd of ``y`` (glmnet scales ``y`` and
    divides ``lambda`` by :math:`s_y`, which changes the ridge part) and
    :math:`D` the population sds of the columns (``standardize=True``) or
    the identity. The stopping rule ends the iterations when, within one
    pass, :math:`\max_k x_{v,k} (\Delta \tilde b_k)^2 <` ``thresh``, on the
    internal scale. glmnet 4.1-6 selects ``type.gaussian = "covariance"`` by
    default only for fewer than 500 features; this function always uses
    it (for the ridge both algorithms give the same iterates, for the lasso
    R's "naive" algorithm adds strong-rule screening).

    Examples
    --------
    The paper's ridge weights on one of its simulated data sets: glmnet's
    rule declares convergence after six passes, far from the ridge solution.

    >>> from vcpcr._solvers.glmnet import glmnet_gaussian
    >>> from vcpcr.simulate import make_paper_data
    >>> data = make_paper_data(random_state=0)
    >>> fit = glmnet_gaussian(data.X, data.y, 1e-4, alpha=0.0)
    >>> fit.converged, fit.n_passes
    (True, 6)
    """
    Xa = check_array(X, "X", min_samples=2)
    ya = check_array(y, "y", ensure_2d=False)
    check_y_length(Xa.shape[0], ya)
    if not (np.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam must be a finite number >= 0. Got {lam!r}.")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1]. Got {alpha!r}.")
    if not (thresh > 0 and int(maxit) >= 1):
        raise ValueError(
            f"thresh must be > 0 and maxit >= 1. Got {thresh!r}, {maxit!r}."
        )
    if intercept:
        check_varying(ya, "y")
    s = _standardize(Xa, ya, standardize, intercept)
    lam_int = float(lam) / s.ys
    cd, converged = _solve(
        s, lam_int * alpha, lam_int * (1.0 - alpha), float(thresh), int(maxit)
    )
    if not converged:
        warnings.warn(
            f"glmnet's coordinate descent did not converge within maxit={maxit} "
            f"passes (thresh={thresh:g}, lambda={lam:.4g}).",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    coef = cd.a * (s.ys / s.xs)
    b0 = 0.0
    if intercept:
        for k in cd.active:
            b0 -= coef[k] * s.xm[k]
        b0 += s.ym
    return GlmnetFit(coef, b0, cd.n_passes, cd.rsq, converged)


def glmnet_weights(
    Xs: NDArray[np.float64],
    y: NDArray[np.float64],
    deltas: NDArray[np.float64],
    alpha: float,
) -> NDArray[np.float64]:
    """Compute the authors' early-stopped glmnet weights, one row per ``delta``.

    Each row is ``glmnet(Xs, y, alpha = alpha, lambda = delta,
    standardize = FALSE)$beta[, 1]`` with glmnet's defaults (``intercept =
    TRUE``, ``thresh = 1e-7``, ``maxit = 1e5``): an independent fit from zero
    per ``delta``, exactly as the paper's code called it on each training
    fold. ``Xs`` and ``y`` are the standardized (sample sd) data.

    Parameters
    ----------
    Xs : ndarray of shape (n_samples, n_features)
        Standardized data.
    y : ndarray of shape (n_samples,)
        Standardized response.
    deltas : ndarray of shape (n_deltas,)
        glmnet ``lambda`` values (absolute, as passed to R).
    alpha : float
        0 (the paper's "ridge") or 1 (its "lasso").

    Returns
    -------
    ndarray of shape (n_deltas, n_features)
        The weights.
    """
    rows = [
        glmnet_gaussian(Xs, y, float(d), alpha=alpha, standardize=False).coef
        for d in deltas
    ]
    return np.asarray(rows).reshape(len(rows), Xs.shape[1])
