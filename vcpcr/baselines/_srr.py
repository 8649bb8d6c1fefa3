"""Split Regularized Regression (Christidis, Lakshmanan, Smucler & Zamar 2020)."""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import threadpool_limits

from vcpcr._checks import check_same_rows
from vcpcr.baselines._base import BaselineRegressor
from vcpcr.baselines._cd import cd_quadratic_lasso, lasso_path
from vcpcr.exceptions import ConvergenceWarning, user_stacklevel

__all__ = ["SRR", "SRRPath", "srr_objective", "srr_path", "srr_penalties"]


def srr_penalties(
    B: NDArray[np.float64], g: int, alpha: float, lambda_div: float
) -> NDArray[np.float64]:
    """Lasso weights of model ``g`` given the others: alpha + 2 lam sum_h |b_jh|."""
    A = np.abs(B)
    return alpha + 2.0 * lambda_div * (A.sum(axis=1) - A[:, g])


def srr_objective(
    Q: NDArray[np.float64],
    c: NDArray[np.float64],
    yy: float,
    B: NDArray[np.float64],
    alpha: float,
    lambda_div: float,
) -> float:
    """SRR objective for ``Q = X'X/n``, ``c = X'y/n``, ``yy = y'y/(2n)``."""
    loss = 0.5 * np.sum(B * (Q @ B), axis=0) - c @ B
    return _objective(B, loss, yy, alpha, lambda_div)


def _objective(
    B: NDArray[np.float64],
    loss: NDArray[np.float64],
    yy: float,
    alpha: float,
    lambda_div: float,
) -> float:
    """:func:`srr_objective` from the squared-loss parts ``loss`` (per model)."""
    A = np.abs(B)
    div = float(np.sum(A.sum(axis=1) ** 2 - np.sum(A * A, axis=1)))
    return float(loss.sum() + B.shape[1] * yy + alpha * A.sum() + lambda_div * div)


class SRRPath(NamedTuple):
    """Output of :func:`srr_path` (one entry per penalty, in input order)."""

    coef: NDArray[np.float64]  # (n_alphas, n_features, n_models)
    objective: list[NDArray[np.float64]]  # after each block update (exact only)
    n_iter: NDArray[np.intp]  # cycles over the models
    change: NDArray[np.float64]  # largest coefficient change of the last cycle


def srr_path(
    Xs: NDArray[np.float64],
    ys: NDArray[np.float64],
    n_models: int,
    alphas: ArrayLike,
    lambda_div: float,
    *,
    tol: float = 1e-10,
    cycle_tol: float = 1e-6,
    max_iter: int = 1000,
    coef_init: NDArray[np.float64] | None = None,
    exact: bool = False,
) -> SRRPath:
    """SRR by block coordinate descent, warm-started along the lasso penalties.

    From the largest ``alpha`` down, each penalty starts from the models of
    the previous one (``coef_init``, of shape (n_features, n_models), or
    all-zero models for the first). As in :class:`SRR`, model ``g`` given
    the others is a lasso with weights ``alpha + 2 lambda_div sum_{h != g}
    |b_jh|`` (:func:`srr_penalties`); cycles over the models stop when no
    coefficient moves by more than ``cycle_tol`` (standardized scale) or
    after ``max_iter`` cycles.

    A block is solved by :func:`vcpcr.baselines._cd.lasso_path` after
    rescaling ``b_j`` by its weight (at most 1000 sweeps, duality gap below
    ``tol * y'y``; the next cycle continues an inexact block solve: the
    paper study), or with ``exact=True`` by
    :func:`vcpcr.baselines._cd.cd_quadratic_lasso` to a coefficient change
    below ``cycle_tol`` (:class:`SRR`, which also records the objective).

    Parameters
    ----------
    Xs, ys : ndarray
        Standardized data.
    n_models : int
        Number of models.
    alphas : array-like of shape (n_alphas,)
        Lasso penalties, ``> 0``, in any order.
    lambda_div : float
        Diversity penalty.
    tol, cycle_tol, max_iter : float, float and int
        Stopping rules of the block solves and of the cycles.
    coef_init : ndarray of shape (n_features, n_models), optional
        Start of the largest penalty.
    exact : bool, default=False
        Which block solver (see above).

    Returns
    -------
    SRRPath
        The models of each penalty, objective histories, cycle counts and
        last changes.
    """
    check_same_rows(Xs, ys, ("Xs", "ys"))
    from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

    alphas = np.asarray(alphas, dtype=np.float64).reshape(-1)
    n, p = Xs.shape
    G, Xy = Xs.T @ Xs, Xs.T @ ys
    Q, c, yy = G / n, Xy / n, float(ys @ ys) / (2 * n)
    root = np.sqrt(np.diag(G) / n)
    out = SRRPath(
        np.zeros((alphas.size, p, n_models)),
        [np.empty(0)] * alphas.size,
        np.zeros(alphas.size, dtype=np.intp),
        np.full(alphas.size, np.inf),
    )
    B = np.zeros((p, n_models)) if coef_init is None else np.array(coef_init)
    for r in np.argsort(-alphas, kind="stable"):
        alpha = float(alphas[r])
        # Squared-loss part of each model, b'Qb/2 - c'b = -b'(c + r)/2 with
        # r = c - Qb, kept up to date from the block solves' residuals.
        loss = -0.5 * np.sum(B * (2 * c[:, None] - Q @ B), axis=0)
        history = [_objective(B, loss, yy, alpha, lambda_div)] if exact else []
        for cycle in range(1, max_iter + 1):
            old = B.copy()
            for g in range(n_models):
                if exact:
                    pen = srr_penalties(B, g, alpha, lambda_div)
                    fit = cd_quadratic_lasso(Q, c, pen, B[:, g], tol=cycle_tol**2)
                    B[:, g] = fit.coef
                    loss[g] = -0.5 * float(fit.coef @ (c + fit.residual))
                    history.append(_objective(B, loss, yy, alpha, lambda_div))
                    continue
                A = np.abs(B)
                A[:, g] = 0.0
                # the weights over alpha, summed as the study did before #12 (same bits)
                scale = 1.0 + 2.0 * lambda_div * A.sum(axis=1) / alpha
                with warnings.catch_warnings():  # inexact block solves are fine
                    warnings.simplefilter("ignore", SkConvergenceWarning)
                    u = lasso_path(
                        Xs,
                        ys,
                        alphas[r : r + 1],
                        gram=G / np.outer(scale, scale),
                        Xy=Xy / scale,
                        coef_init=B[:, g] * scale,
                        tol=tol,
                        max_iter=1000,
                    )[0]
                B[:, g] = u / scale
            out.n_iter[r] = cycle
            out.change[r] = float(np.max(root[:, None] * np.abs(B - old)))
            if out.change[r] <= cycle_tol:
                break
        out.coef[r], out.objective[r] = B, np.array(history)
    return out


class SRR(BaselineRegressor):
    r"""Split Regularized Regression: diverse sparse models, averaged.

    SRR fits ``n_models`` sparse linear models at once. Besides each model's
    lasso penalty, a diversity penalty charges every pair of models for each
    feature they share, so the models tend to split the features among
    themselves. The prediction is the average of the models. The models are
    fitted by block coordinate descent: each model in turn is the exact
    solution of a weighted lasso given the others.

    Parameters
    ----------
    n_models : int, default=5
        Number of models :math:`K` (the paper's number of clusters).
    alpha : float, default=0.1
        Lasso (sparsity) penalty :math:`\delta` of each model, traced in the
        paper's study (glmnet's parametrization).
    lambda_div : float, default=1.0
        Diversity penalty :math:`\lambda` as in the VC-PCR paper's SRR
        equation; ``2 * lambda_div`` is ``lambda_diversity`` of the R
        package ``SplitReg`` (see Notes).
    n_alphas : int, default=10
        Number of penalties on a geometric path from ``alpha_max_`` down to
        ``alpha``, each solved from the previous solution (warm starts, as
        ``SplitReg`` does). 1 solves at ``alpha`` from all-zero models.
    max_iter : int, default=1000
        Maximum number of cycles over the models per penalty of the path.
    tol : float, default=1e-6
        A cycle has converged when no coefficient (standardized scale) moves
        by more than ``tol``; the same bound stops each model's coordinate
        descent. The intermediate penalties of the path use
        ``max(tol, 1e-4)``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Average of the models' coefficients, on the raw scale of ``X``.
    intercept_ : float
        Intercept on the raw scale.
    model_coef_ : ndarray of shape (n_models, n_features)
        Each model's coefficients on the raw scale of ``X``.
    labels_ : ndarray of shape (n_features,)
        Model of each selected feature, -1 for the features that no model
        uses. A feature used by several models gets the model in which its
        coefficient is largest in absolute value (standardized scale; the
        first such model on ties), the paper's hard clusters.
    n_shared_ : int
        Number of features used by more than one model.
    objective_ : ndarray
        Objective at ``alpha`` before the first and after every block update
        (non-increasing).
    n_iter_ : int
        Number of cycles over the models at the final ``alpha``.
    converged_ : bool
        Whether the final ``alpha`` converged within ``max_iter`` cycles.
    alpha_max_ : float
        Smallest ``alpha`` that gives all-zero models, ``max_j |x_j'y| / n``.
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
    CRL : Cluster representative lasso.
    CEN : Cluster elastic net.

    Notes
    -----
    On standardized ``X`` (sample variance 1) and ``y``, SRR minimizes the
    VC-PCR paper's SRR objective [2]_ with its elastic-net mixing fixed to
    the lasso (:math:`\alpha_{EN} = 1`, as in the paper's study):

    .. math::

        \sum_{k=1}^K \Big\{ \frac{1}{2n}\lVert y - Xb_k\rVert_2^2
        + \delta\lVert b_k\rVert_1
        + \lambda \sum_{g \ne k}\sum_{j=1}^p |b_{jk}|\,|b_{jg}| \Big\}.

    Given the other models, model :math:`k` solves a lasso with weights
    :math:`\delta + 2\lambda\sum_{g \ne k}|b_{jg}|`. The diversity term
    counts each pair of models twice; Christidis et al. [1]_ (and
    ``SplitReg``) write it with :math:`\lambda_D/2`, so
    :math:`\lambda_D = 2\lambda`. With ``lambda_div = 0`` every model is the
    lasso at ``alpha``. ``SplitReg`` standardizes with the population
    standard deviation (divisor ``n``) and runs one coordinate sweep per
    model and cycle; here the standard deviations use ``ddof=1`` and each
    model is solved to convergence (so the objective decreases at every
    block update and each model satisfies its KKT conditions at the end).
    The problem is not convex: the solution depends on the order of the
    updates and on the path of ``alpha`` (``n_alphas``).

    A feature used by several models is assigned to the model with its
    largest absolute coefficient; ``n_shared_`` says how often that happens.
    ``coef_`` is zero exactly when no model uses the feature (barring exact
    cancellation of coefficients of opposite signs).

    References
    ----------
    .. [1] Christidis, A.-A., Lakshmanan, L., Smucler, E., Zamar, R. (2020).
       "Split regularized regression." Technometrics 62(3), 330-338.
    .. [2] Marion, R., Lederer, J., Govaerts, B., von Sachs, R. "VC-PCR: A
       prediction method based on supervised variable selection and
       clustering." arXiv:2202.00975.

    Examples
    --------
    Two active blocks of four correlated features:

    >>> from vcpcr.baselines import SRR
    >>> from vcpcr.simulate import make_block_data
    >>> data = make_block_data(60, [4, 4], [1.0, 1.0], rho=0.8, random_state=0)
    >>> model = SRR(n_models=2, alpha=0.05, lambda_div=1.0).fit(data.X, data.y)
    >>> model.model_coef_.shape
    (2, 8)
    >>> model.n_shared_
    0
    """

    def __init__(
        self,
        n_models: int = 5,
        *,
        alpha: float = 0.1,
        lambda_div: float = 1.0,
        n_alphas: int = 10,
        max_iter: int = 1000,
        tol: float = 1e-6,
    ) -> None:
        self.n_models = n_models
        self.alpha = alpha
        self.lambda_div = lambda_div
        self.n_alphas = n_alphas
        self.max_iter = max_iter
        self.tol = tol

    def _path(self, alpha_max: float) -> NDArray[np.float64]:
        alpha = float(self.alpha)
        if self.n_alphas == 1 or alpha >= alpha_max or alpha == 0.0:
            return np.array([alpha])
        return np.geomspace(alpha_max, alpha, int(self.n_alphas))

    def _fit_standardized(
        self, Xs: NDArray[np.float64], ys: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Fit the ``n_models`` models by block coordinate descent; average them."""
        n = Xs.shape[0]
        self._check_int("n_models", "n_alphas", "max_iter")
        self._check_real("alpha", "lambda_div", "tol")
        self.alpha_max_ = float(np.abs(Xs.T @ ys / n).max())
        tol = float(self.tol)

        def run(
            alphas: NDArray[np.float64], cycle_tol: float, start: Any = None
        ) -> SRRPath:
            return srr_path(
                Xs,
                ys,
                int(self.n_models),
                alphas,
                float(self.lambda_div),
                cycle_tol=cycle_tol,
                max_iter=int(self.max_iter),
                coef_init=start,
                exact=True,
            )

        path = self._path(self.alpha_max_)
        with threadpool_limits(limits=1, user_api="blas"):
            start = None
            if path.size > 1:  # warm starts, solved loosely
                start = run(path[:-1], max(tol, 1e-4)).coef[-1]
            fit = run(path[-1:], tol, start)
        B, history = fit.coef[0], fit.objective[0]
        n_iter, change = int(fit.n_iter[0]), float(fit.change[0])
        self.converged_ = change <= tol
        if not self.converged_:
            warnings.warn(
                f"SRR did not converge within max_iter={self.max_iter} cycles over "
                f"the models (last largest coefficient change {change:.3g}, "
                f"tol={self.tol}).",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
        self.objective_, self.n_iter_ = np.array(history), n_iter
        active = B != 0.0
        self.n_shared_ = int(np.sum(active.sum(axis=1) > 1))
        best = np.argmax(np.abs(B), axis=1)
        self.labels_ = np.where(active.any(axis=1), best, -1).astype(np.intp)
        self.model_coef_ = (B * (self.y_scale_ / self.scale_)[:, None]).T
        return B.mean(axis=1)
