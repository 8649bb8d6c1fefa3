"""Cluster Elastic Net (Witten, Shojaie & Zhang 2014)."""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import threadpool_limits

from vcpcr._checks import check_random_state, check_same_rows
from vcpcr._sos_nmf import random_partition
from vcpcr.baselines._base import BaselineRegressor
from vcpcr.baselines._cd import cd_quadratic_lasso, lasso_path
from vcpcr.exceptions import ConvergenceWarning, user_stacklevel

__all__ = [
    "CEN",
    "CENPath",
    "cen_gram",
    "cen_objective",
    "cen_path",
    "kmeans_columns",
    "within_ss",
]


def _onehot(labels: NDArray[np.intp], K: int) -> NDArray[np.float64]:
    H = np.zeros((labels.size, K))
    H[np.arange(labels.size), labels] = 1.0
    return H


def cen_gram(
    G: NDArray[np.float64], labels: NDArray[np.intp], gamma: float, n: int
) -> NDArray[np.float64]:
    """Quadratic form ``Q`` of the CEN objective for a fixed partition.

    With ``G = X'X``, the smooth part of the objective is
    ``b'Qb/2 - b'X'y/n + y'y/(2n)`` with
    ``Q = (G + gamma * (diag(G) - G o S)) / n`` and ``S_jl = 1[j ~ l] / p_k``.
    """
    K = int(labels.max()) + 1
    H = _onehot(labels, K)
    sizes = H.sum(axis=0)
    inv = np.divide(1.0, sizes, out=np.zeros(K), where=sizes > 0)
    S = (H * inv) @ H.T
    Q = G * (1.0 - gamma * S)
    Q[np.diag_indices_from(Q)] += gamma * np.diag(G)
    return Q / n


def within_ss(Z: NDArray[np.float64], labels: NDArray[np.intp]) -> float:
    """k-means criterion ``sum_k sum_{j in C_k} ||z_j - mean_k||^2`` of columns."""
    K = int(labels.max()) + 1
    H = _onehot(labels, K)
    sizes = H.sum(axis=0)
    sums = Z @ H
    inv = np.divide(1.0, sizes, out=np.zeros(K), where=sizes > 0)
    return float(np.sum(Z * Z) - np.sum(sums * sums * inv))


def cen_objective(
    Xs: NDArray[np.float64],
    ys: NDArray[np.float64],
    b: NDArray[np.float64],
    labels: NDArray[np.intp],
    alpha: float,
    gamma: float,
) -> float:
    r"""CEN objective (see :class:`CEN`, Notes) on standardized data."""
    n = Xs.shape[0]
    resid = ys - Xs @ b
    return float(
        resid @ resid / (2 * n)
        + alpha * np.abs(b).sum()
        + gamma / (2 * n) * within_ss(Xs * b, labels)
    )


def kmeans_columns(
    Z: NDArray[np.float64], labels: NDArray[np.intp], max_iter: int = 300
) -> NDArray[np.intp]:
    """Lloyd's k-means of the columns of ``Z``, started from ``labels``.

    A point stays in its cluster unless another centroid is strictly closer,
    so the criterion never increases and the loop ends. Clusters that empty
    stay empty.
    """
    K = int(labels.max()) + 1
    sq = np.sum(Z * Z, axis=0)
    cols = np.arange(labels.size)
    for _ in range(max_iter):
        H = _onehot(labels, K)
        sizes = H.sum(axis=0)
        live = sizes > 0
        C = (Z @ H[:, live]) / sizes[live]
        d2 = np.full((labels.size, K), np.inf)
        d2[:, live] = sq[:, None] - 2.0 * (Z.T @ C) + np.sum(C * C, axis=0)
        best = np.argmin(d2, axis=1)
        stay = d2[cols, labels] <= d2[cols, best]
        new = np.where(stay, labels, best)
        if np.array_equal(new, labels):
            break
        labels = new
    return labels


class CENPath(NamedTuple):
    """Output of :func:`cen_path` (one entry per penalty, in input order)."""

    coef: NDArray[np.float64]  # (n_alphas, n_features)
    labels: NDArray[np.intp]  # (n_alphas, n_features), the final partitions
    objective: list[NDArray[np.float64]]  # after each b-/C-step (exact only)
    n_iter: NDArray[np.intp]  # alternations
    converged: NDArray[np.bool_]  # the partition stopped changing


def cen_path(
    Xs: NDArray[np.float64],
    ys: NDArray[np.float64],
    labels0: NDArray[np.intp],
    alphas: ArrayLike,
    gamma: float,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
    exact: bool = False,
) -> CENPath:
    """CEN from one initial partition, warm-started along the lasso penalties.

    From the largest ``alpha`` down, each penalty runs the alternation of
    :class:`CEN` (the coefficients for a fixed partition, then Lloyd's
    k-means of ``x_j b_j`` from the current partition, until the partition
    is fixed or after ``max_iter`` alternations) from the partition
    ``labels0`` and the coefficients of the previous penalty (zeros for the
    first).

    The coefficient step solves the lasso on CEN's quadratic form
    (:func:`cen_gram`) with :func:`vcpcr.baselines._cd.lasso_path`, stopped
    when the duality gap is below ``tol * y'y`` (the paper study), or with
    ``exact=True`` with :func:`vcpcr.baselines._cd.cd_quadratic_lasso`,
    stopped when no coefficient moves by more than ``tol`` (:class:`CEN`: a
    duality gap cannot certify coefficients below about ``1e-8`` in
    floating point, the KKT conditions of this solver hold exactly; the
    objective is then recorded after every step).

    Parameters
    ----------
    Xs, ys : ndarray
        Standardized data.
    labels0 : ndarray of int of shape (n_features,)
        Initial partition (labels ``0..K-1``).
    alphas : array-like of shape (n_alphas,)
        Lasso penalties, ``> 0``, in any order.
    gamma : float
        Weight of the k-means penalty.
    tol, max_iter : float and int
        Tolerance of each coefficient step; maximum number of alternations
        per penalty.
    exact : bool, default=False
        Which coefficient solver (see above).

    Returns
    -------
    CENPath
        Coefficients (standardized scale), partitions, objective histories,
        alternation counts and convergence flags of every penalty.
    """
    check_same_rows(Xs, ys, ("Xs", "ys"))
    alphas = np.asarray(alphas, dtype=np.float64).reshape(-1)
    n, p = Xs.shape
    G, Xy = Xs.T @ Xs, Xs.T @ ys
    out = CENPath(
        np.zeros((alphas.size, p)),
        np.zeros((alphas.size, p), dtype=np.intp),
        [np.empty(0)] * alphas.size,
        np.zeros(alphas.size, dtype=np.intp),
        np.zeros(alphas.size, dtype=bool),
    )
    b = np.zeros(p)
    for r in np.argsort(-alphas, kind="stable"):
        alpha, labels = float(alphas[r]), labels0
        history: list[float] = []
        for it in range(1, max_iter + 1):
            Q = cen_gram(G, labels, gamma, n)
            if exact:
                pen = np.full(p, alpha)
                b = cd_quadratic_lasso(Q, Xy / n, pen, b, tol=tol**2).coef
            else:
                b = lasso_path(
                    Xs, ys, alphas[r : r + 1], gram=Q * n, Xy=Xy, coef_init=b, tol=tol
                )[0]
            new = kmeans_columns(Xs * b, labels)
            if exact:
                history.append(cen_objective(Xs, ys, b, labels, alpha, gamma))
                history.append(cen_objective(Xs, ys, b, new, alpha, gamma))
            out.n_iter[r] = it
            if np.array_equal(new, labels):
                out.converged[r] = True
                break
            labels = new
        out.coef[r], out.labels[r], out.objective[r] = b, labels, np.array(history)
    return out


class CEN(BaselineRegressor):
    r"""Cluster Elastic Net: lasso plus a k-means penalty on ``x_j b_j``.

    CEN estimates the coefficients and a partition of the features at once:
    the k-means criterion of the coefficient-weighted features
    :math:`x_j b_j` pulls the absolute coefficients of correlated features
    in the same cluster towards each other. The fit alternates (a) the
    coefficients for a fixed partition, by coordinate descent with the
    update of the VC-PCR paper's CEN equation, and (b) the partition for
    fixed coefficients, by Lloyd's k-means started from the current
    partition, until the partition stops changing.

    Parameters
    ----------
    n_clusters : int, default=5
        Number of clusters :math:`K` of the random initial partitions.
    alpha : float, default=0.1
        Lasso penalty (the paper's :math:`\delta`, traced in its study),
        in glmnet's parametrization: the objective's squared loss is divided
        by ``2 n`` (see Notes).
    gamma : float, default=1.0
        Weight of the k-means penalty relative to the squared loss (the
        VC-PCR paper's :math:`\lambda`, see Notes); 0 gives the lasso.
    n_init : int, default=10
        Number of random initial partitions; the fit with the lowest final
        objective is kept.
    max_iter : int, default=100
        Maximum number of alternations (coefficient step + k-means step) per
        initial partition.
    tol : float, default=1e-7
        Coordinate descent stops when no coefficient moves by more than
        ``tol`` (on the standardized scale) in a sweep.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the random initial partitions.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients on the raw scale of ``X``.
    intercept_ : float
        Intercept on the raw scale.
    labels_ : ndarray of shape (n_features,)
        Cluster (column of the final partition) of each feature with a
        non-zero coefficient, -1 for the others.
    cluster_labels_ : ndarray of shape (n_features,)
        The final k-means partition of all features (zero-coefficient
        features included, as in the objective).
    objective_ : ndarray
        Objective of the kept start after each coefficient step and each
        k-means step, alternately (non-increasing).
    n_iter_ : int
        Number of alternations of the kept start.
    converged_ : bool
        Whether the kept start reached a fixed point within ``max_iter``.
    best_init_ : int
        Index of the kept start.
    alpha_max_ : float
        Smallest ``alpha`` that gives all-zero coefficients,
        ``max_j |x_j'y| / n``.
    mean_, scale_ : ndarray of shape (n_features,)
        Column means and standard deviations (``ddof=1``) of ``X``.
    y_mean_, y_scale_ : float
        Mean and standard deviation (``ddof=1``) of ``y``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Feature names seen in ``fit`` (only when ``X`` has string column
        names).

    See Also
    --------
    CRL : Cluster representative lasso (clustering without supervision).
    SRR : Split regularized regression.

    Notes
    -----
    On standardized ``X`` (sample variance 1) and ``y``, CEN minimizes over
    the coefficients :math:`b` and the partition :math:`C_1, \dots, C_K`

    .. math::

        \frac{1}{2n}\lVert y - Xb\rVert_2^2 + \alpha\lVert b\rVert_1
        + \frac{\gamma}{2n}\sum_{k=1}^K \sum_{j \in C_k}
        \Big\lVert x_j b_j - \frac{1}{p_k}\sum_{l \in C_k} x_l b_l\Big\rVert_2^2 .

    For a fixed partition, coordinate :math:`j \in C_k` is updated to its
    exact minimizer, which is the VC-PCR paper's CEN update [2]_

    .. math::

        b_j = \frac{S\big(x_j^\top e_j + \frac{\gamma}{p_k}
        \sum_{l \in C_k, l \ne j} b_l\, x_j^\top x_l,\ n\alpha\big)}
        {x_j^\top x_j\,\big(1 + \gamma (p_k - 1)/p_k\big)},\qquad
        e_j = y - \sum_{l \ne j} x_l b_l,

    with :math:`S(z, t) = \operatorname{sign}(z)(|z| - t)_+`.

    Scaling conventions. Multiplying the objective by :math:`n` gives
    :math:`\tfrac12\lVert y - Xb\rVert^2 + n\alpha\lVert b\rVert_1 +
    \tfrac{\gamma}{2}\sum_k\sum_{j\in C_k}\lVert\cdot\rVert^2`, so the
    paper's update holds with its :math:`\delta = n\alpha` and its
    :math:`\lambda = \gamma`. The paper's printed objective carries
    :math:`\lambda` (not :math:`\lambda/2`) on the k-means term; that
    objective's exact coordinate minimizer would have :math:`2\lambda` where
    its update has :math:`\lambda`. The update is implemented as printed,
    i.e. ``gamma`` equals the :math:`\lambda` of the update and twice the
    :math:`\lambda` of the printed objective (the factor used by Witten et
    al. [1]_ could not be checked here). Dividing the loss by
    :math:`n` makes ``alpha`` comparable with the other estimators and with
    glmnet; ``gamma = 0`` is exactly the lasso.

    Algorithmic choices: the initial partitions are random (every cluster
    non-empty) with :math:`b = 0`; the coefficient step runs coordinate
    descent to convergence (active set and KKT checks, as glmnet); the
    k-means step runs Lloyd's algorithm from the current partition, so the
    objective never increases, and clusters that empty stay empty.
    Zero-coefficient features are points at the origin and count in the
    k-means term, as the objective says. Coordinate descent needs the
    :math:`p \times p` Gram matrix.

    References
    ----------
    .. [1] Witten, D. M., Shojaie, A., Zhang, F. (2014). "The cluster elastic
       net for high-dimensional regression with unknown variable grouping."
       Technometrics 56(1), 112-122.
    .. [2] Marion, R., Lederer, J., Govaerts, B., von Sachs, R. "VC-PCR: A
       prediction method based on supervised variable selection and
       clustering." arXiv:2202.00975.

    Examples
    --------
    Three blocks of four correlated features, the middle one inactive:

    >>> import numpy as np
    >>> from vcpcr.baselines import CEN
    >>> from vcpcr.simulate import make_block_data
    >>> data = make_block_data(
    ...     60, [4, 4, 4], [1.0, 0.0, -1.0], rho=0.8, random_state=0
    ... )
    >>> model = CEN(n_clusters=3, alpha=0.05, gamma=1.0, random_state=0)
    >>> model = model.fit(data.X, data.y)
    >>> bool(np.all(model.coef_[:4] > 0) and np.all(model.coef_[8:] < 0))
    True
    """

    def __init__(
        self,
        n_clusters: int = 5,
        *,
        alpha: float = 0.1,
        gamma: float = 1.0,
        n_init: int = 10,
        max_iter: int = 100,
        tol: float = 1e-7,
        random_state: Any = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.gamma = gamma
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _fit_standardized(
        self, Xs: NDArray[np.float64], ys: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Fit CEN from ``n_init`` random partitions; keep the lowest objective."""
        p = Xs.shape[1]
        K = self._check_n_clusters("n_clusters", p)
        self._check_real("alpha", "gamma", "tol")
        self._check_int("n_init", "max_iter")
        rng = check_random_state(self.random_state)
        starts = [random_partition(p, K, rng) for _ in range(self.n_init)]
        alpha, gamma = float(self.alpha), float(self.gamma)
        with threadpool_limits(limits=1, user_api="blas"):
            fits = [
                cen_path(
                    Xs,
                    ys,
                    labels,
                    [alpha],
                    gamma,
                    tol=float(self.tol),
                    max_iter=int(self.max_iter),
                    exact=True,
                )
                for labels in starts
            ]
        best = int(np.argmin([f.objective[0][-1] for f in fits]))
        fit = fits[best]
        b, labels, history = fit.coef[0], fit.labels[0], fit.objective[0]
        n_iter, converged = int(fit.n_iter[0]), bool(fit.converged[0])
        if not converged:
            prev = history[-3] if history.size >= 3 else history[0]
            change = abs(prev - history[-1]) / max(abs(history[-1]), 1e-300)
            warnings.warn(
                f"CEN did not reach a fixed partition within max_iter="
                f"{self.max_iter} alternations (last relative change of the "
                f"objective {change:.3g}).",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
        self.best_init_ = best
        self.objective_, self.n_iter_, self.converged_ = history, n_iter, converged
        self.alpha_max_ = float(np.abs(Xs.T @ ys).max() / Xs.shape[0])
        self.cluster_labels_ = labels.astype(np.intp)
        self.labels_ = np.where(b != 0.0, labels, -1).astype(np.intp)
        return b
