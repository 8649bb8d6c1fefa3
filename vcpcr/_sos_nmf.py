"""SOS-NMF on one problem: the public solver and its starts.

:func:`sos_nmf` solves one weighted SOS-NMF problem, :func:`lambda_max` gives
its penalty scale and :func:`random_partition` draws a random start; each
validates its input once (through :mod:`vcpcr._checks`) and runs the
batched engine (:mod:`vcpcr._solvers.sos_nmf`) on a batch of one, with
``check_input=False``. :func:`initial_partitions` (the starts of
:class:`vcpcr.VCPCR` too), :func:`single_result` (one problem of a batch as
an :class:`SOSNMFResult`) and :func:`warn_unconverged` (the one report of a
non-converged run) are shared with the estimators' restart driver
(:mod:`vcpcr._clustering`). numpy/scipy only: ``vcpcr/__init__.py`` imports
this module eagerly.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vcpcr._checks import (
    check_array,
    check_choice,
    check_labels,
    check_random_state,
    check_scalar,
    check_weight_vector,
)
from vcpcr._result import TupleResult
from vcpcr._scaling import standardize
from vcpcr._solvers.sos_nmf import (
    BatchResult,
    batched_sos_nmf,
    initial_lambda_max,
    latent_variables,
)
from vcpcr.exceptions import user_stacklevel

__all__ = [
    "SOSNMFResult",
    "initial_partitions",
    "lambda_max",
    "random_partition",
    "single_result",
    "sos_nmf",
    "warn_unconverged",
]

_OWNER = "sos_nmf"
_Floats = NDArray[np.float64]


@dataclass(frozen=True, eq=False, repr=False)
class SOSNMFResult(TupleResult):
    """Result of :func:`sos_nmf`.

    Attributes
    ----------
    V : ndarray of shape (n_features, n_clusters_active)
        Non-negative membership degrees; a row has at most one non-zero.
        Clusters that became empty during the iterations are dropped.
    U : ndarray of shape (n_samples, n_clusters_active)
        Unit-variance latent variables ``normalize((X W) V (V'V)^-1)`` of the
        returned ``V``.
    labels : ndarray of shape (n_features,)
        Column of ``V`` holding feature ``j``'s non-zero, or -1 if ``j`` is
        not selected.
    lam : float
        The absolute sparsity penalty used.
    lam_max : float
        The smallest penalty that selects no feature from the initial
        partition (so ``lam = lam_ratio * lam_max``).
    objective : ndarray of shape (n_iter,)
        The objective after each update of ``V``.
    n_iter : int
        Number of iterations run.
    converged : bool
        Whether a convergence criterion was met before ``max_iter``.
    """

    V: NDArray[np.float64]
    U: NDArray[np.float64]
    labels: NDArray[np.intp]
    lam: float
    lam_max: float
    objective: NDArray[np.float64]
    n_iter: int
    converged: bool


def random_partition(
    n_features: int, n_clusters: int, random_state: Any = None
) -> NDArray[np.intp]:
    """Draw a random partition of the features into ``n_clusters`` labels.

    Labels are drawn uniformly and redrawn until every label occurs (the
    reference behaviour), which gives the uniform distribution over partitions
    with no empty cluster. When that is unlikely to happen within 100 draws
    (``n_clusters`` close to ``n_features``), each label is instead placed once
    at a random position and the remaining features drawn uniformly; when a
    draw covers every label with probability below ``1e-12``, this is done
    without the 100 draws.

    Parameters
    ----------
    n_features : int
        Number of features ``p``.
    n_clusters : int
        Number of clusters ``K <= p``.
    random_state : int, numpy.random.Generator or None, default=None
        Source of randomness.

    Returns
    -------
    ndarray of shape (n_features,)
        Labels in ``0..n_clusters-1``, each occurring at least once.

    Examples
    --------
    >>> from vcpcr import random_partition
    >>> labels = random_partition(10, 3, random_state=0)
    >>> sorted(set(labels.tolist()))
    [0, 1, 2]
    """
    owner = "random_partition"
    check_scalar(n_features, "n_features", numbers.Integral, owner=owner, min_val=1)
    check_scalar(n_clusters, "n_clusters", numbers.Integral, owner=owner, min_val=1)
    if n_clusters > n_features:
        raise ValueError(
            f"n_features={n_features} must be >= n_clusters={n_clusters}: every "
            f"cluster needs at least one feature."
        )
    rng = check_random_state(random_state)
    # P(a draw covers every label) <= (1 - (1 - 1/K)^p)^K (the counts are
    # negatively associated); below 1e-12 the redraws are skipped: they would
    # all fail (p = K = 10**6 took 48 s). Wherever one can succeed, they run.
    missed = np.exp(n_features * np.log1p(-1.0 / n_clusters)) if n_clusters > 1 else 0.0
    redraws = 100 if n_clusters * np.log1p(-missed) > np.log(1e-12) else 0
    for _ in range(redraws):
        labels = rng.integers(0, n_clusters, size=n_features)
        if np.unique(labels).size == n_clusters:
            return labels.astype(np.intp)
    labels = rng.integers(0, n_clusters, size=n_features)
    labels[rng.permutation(n_features)[:n_clusters]] = np.arange(n_clusters)
    return labels.astype(np.intp)


def initial_partitions(
    init: Any,
    n_clusters: int | None,
    n_init: int,
    n_features: int,
    random_state: Any,
    *,
    owner: str,
) -> list[NDArray[np.intp]]:
    """Return ``n_init`` random partitions, or the given labels as one start.

    ``init`` is ``"random"`` (which needs ``n_clusters``) or one label per
    feature (:func:`vcpcr._checks.check_labels`); ``owner`` names the
    class or function in the messages.
    """
    if init is None or (np.ndim(init) == 0 and not isinstance(init, str)):
        raise ValueError(
            f"The 'init' parameter of {owner} must be 'random' or one cluster "
            f"label per feature ({n_features}). Got {init!r} instead."
        )
    if not isinstance(init, str):
        return [check_labels(init, n_features, n_clusters=n_clusters)]
    check_choice(init, "init", ("random",), owner=owner)
    if n_clusters is None:
        raise ValueError(
            f"n_clusters is required with init='random' in {owner}; give the "
            f"number of clusters or an array of initial labels."
        )
    rng = check_random_state(random_state)
    return [random_partition(n_features, n_clusters, rng) for _ in range(n_init)]


def warn_unconverged(reason: str, rel_change: float, max_iter: int, tol: float) -> None:
    """Warn (ConvergenceWarning) if a kept run stopped without converging.

    The one place the package reports a non-converged SOS-NMF run:
    :func:`sos_nmf` and the best start of :class:`vcpcr.VCPCR`. The warning
    points at the user's line (:func:`vcpcr.exceptions.user_stacklevel`).
    """
    # Imported here: the class derives from scikit-learn's (see vcpcr.exceptions).
    from vcpcr.exceptions import ConvergenceWarning

    if reason == "max_iter":
        warnings.warn(
            f"SOS-NMF did not converge within max_iter={max_iter} iterations: the "
            f"last relative change of the objective was {rel_change:.3g} "
            f"(tol={tol:g}). Increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    elif reason == "cycle":
        warnings.warn(
            f"SOS-NMF entered a cycle of cluster assignments (last relative "
            f"change of the objective {rel_change:.3g}, tol={tol:g}); "
            f"the last iterate is returned. Use tol > 0 to stop on the objective.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )


def single_result(
    Xs: _Floats, w: _Floats, res: BatchResult, b: int, lam: float, lam_max: float
) -> SOSNMFResult:
    """Problem ``b`` of a batch as an SOSNMFResult.

    ``objective`` is the history of the objective when the batch was solved
    with ``history=True``, else its final value only.
    """
    labels, v = res.dense_labels([b])[0], res.dense_v([b])[0]
    sel = np.flatnonzero(labels >= 0)
    V = np.zeros((labels.size, int(labels.max(initial=-1)) + 1))
    V[sel, labels[sel]] = v[sel]
    n_iter = int(res.n_iter[b])
    objective = (
        res.objective[b : b + 1] if res.history is None else res.history[b, :n_iter]
    )
    return SOSNMFResult(
        V=V,
        U=latent_variables(Xs, w, labels, v),
        labels=labels,
        lam=float(lam),
        lam_max=float(lam_max),
        objective=objective.copy(),
        n_iter=n_iter,
        converged=bool(res.converged[b]),
    )


def _check_weights(weights: ArrayLike | None, p: int) -> NDArray[np.float64]:
    """Return the weight vector (ones when None), validated against ``p``."""
    if weights is None:
        return np.ones(p)
    w = check_weight_vector(weights, p)
    top = float(np.abs(w).max())
    if top > 0 and not 1e-100 <= top <= 1e100:
        raise ValueError(
            f"weights reach max|w| = {top:.3g}: products of such weights overflow "
            f"or underflow. Only their ratios matter; pass weights / max|w|."
        )
    return w


def _prepare(
    X: ArrayLike,
    n_clusters: int | None,
    weights: ArrayLike | None,
    do_standardize: bool,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate and standardize ``X``; return ``(Xs, w)``."""
    Xa = check_array(X, "X", min_samples=2, allow_constant=not do_standardize)
    if n_clusters is not None:
        check_scalar(
            n_clusters, "n_clusters", numbers.Integral, owner=_OWNER, min_val=1
        )
        if n_clusters > Xa.shape[1]:
            raise ValueError(
                f"n_features={Xa.shape[1]} must be >= n_clusters={n_clusters}."
            )
    Xs = standardize(Xa)[0] if do_standardize else Xa
    return Xs, _check_weights(weights, Xa.shape[1])


def lambda_max(
    X: ArrayLike,
    init: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    standardize: bool = True,
) -> float:
    """Smallest sparsity penalty for which SOS-NMF selects no feature.

    ``lam_max = max_{j,k} w_j cor(u_k, x_j)``, where ``u_k`` are the latent
    variables of the initial partition: with ``lam >= lam_max`` the first
    update of ``V`` is zero.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    init : array-like of shape (n_features,)
        Initial partition: integer labels ``0..K-1``.
    weights : array-like of shape (n_features,), default=None
        Feature weights ``w`` (``None``: all ones), as in :func:`sos_nmf`.
    standardize : bool, default=True
        Standardize ``X`` first, as :func:`sos_nmf` does.

    Returns
    -------
    float
        The penalty ``lam_max >= 0``.

    See Also
    --------
    sos_nmf : The solver, which takes the penalty as a fraction of ``lam_max``.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr import lambda_max
    >>> X = np.random.default_rng(0).normal(size=(20, 6))
    >>> lam = lambda_max(X, [0, 0, 0, 1, 1, 1])
    >>> 0 < lam <= 1
    True
    """
    Xs, w = _prepare(X, None, weights, standardize)
    labels = check_labels(init, Xs.shape[1])
    return float(initial_lambda_max(Xs, w, [labels], check_input=False)[0, 0])


def sos_nmf(
    X: ArrayLike,
    n_clusters: int | None = None,
    *,
    weights: ArrayLike | None = None,
    init: str | ArrayLike = "random",
    lam_ratio: float | None = None,
    lam: float | None = None,
    max_iter: int = 500,
    tol: float = 1e-4,
    random_state: Any = None,
    standardize: bool = True,
) -> SOSNMFResult:
    r"""Cluster and select features with weighted SOS-NMF.

    Solves

    .. math::

        \min_{U, V} \frac{1}{2(n-1)} \lVert X W - U V^\top \rVert_F^2
        + \lambda \sum_{j=1}^p \lVert v_j \rVert_1
        \quad \text{s.t. } V \ge 0,\ \operatorname{var}(u_k) = 1,\
        V \text{ has orthogonal columns}

    by alternating the closed-form updates of ``U`` and ``V`` from an initial
    partition of the features. Each feature ends up in at most one cluster;
    features with zero membership are not selected.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    n_clusters : int, optional
        Number of clusters ``K`` of the initial partition. Required with
        ``init="random"``; inferred from the labels otherwise.
    weights : array-like of shape (n_features,), default=None
        Signed feature weights ``w`` (the diagonal of ``W``); ``None`` means
        all ones (unsupervised SOS-NMF).
    init : "random" or array-like of shape (n_features,), default="random"
        ``"random"``: a random partition into ``n_clusters`` non-empty
        clusters. An array: integer labels ``0..K-1``.
    lam_ratio : float, optional
        Penalty as a fraction of :func:`lambda_max` (default 0.5 when neither
        ``lam_ratio`` nor ``lam`` is given). ``lam_ratio >= 1`` selects
        nothing.
    lam : float, optional
        Absolute penalty ``lambda >= 0``. Mutually exclusive with
        ``lam_ratio``.
    max_iter : int, default=500
        Maximum number of iterations.
    tol : float, default=1e-4
        Stop when the relative change of the objective falls below ``tol``.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the random initial partition.
    standardize : bool, default=True
        Centre and scale ``X`` (``ddof=1``) first. With ``False``, ``X`` must
        already be standardized.

    Returns
    -------
    SOSNMFResult
        ``V``, ``U``, ``labels``, ``lam``, ``lam_max``, ``objective``,
        ``n_iter`` and ``converged``.

    Raises
    ------
    ValueError
        For invalid data (NaN, infinite, constant columns, fewer than 2 rows),
        ``n_clusters > n_features``, both ``lam`` and ``lam_ratio`` given, or
        invalid labels.

    Warns
    -----
    ConvergenceWarning
        When ``max_iter`` is reached or the assignments cycle.

    See Also
    --------
    lambda_max : The penalty that selects nothing.
    VCPCR : The full method (weights, clustering and outcome model).

    Notes
    -----
    The iteration also stops when the cluster assignments and memberships no
    longer change. Empty clusters are dropped for good, so the result may have
    fewer than ``n_clusters`` columns. Names map to the paper's symbols as
    ``lam`` = :math:`\lambda`, ``n_clusters`` = :math:`K`, ``weights`` = the
    diagonal of :math:`W`.

    References
    ----------
    .. [1] Marion, R. et al. "VC-PCR: A prediction method based on supervised
       variable selection and clustering." arXiv:2202.00975, Algorithm 1
       (weighted SOS-NMF).

    Examples
    --------
    Two blocks of three correlated features are found (up to the labels'
    names):

    >>> from vcpcr import sos_nmf
    >>> from vcpcr.simulate import make_block_data
    >>> data = make_block_data(60, [3, 3], [1.0, -1.0], rho=0.9, random_state=0)
    >>> res = sos_nmf(data.X, 2, lam_ratio=0.3, random_state=0)
    >>> res.labels.tolist(), data.labels.tolist()
    ([1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1])
    >>> bool((res.V >= 0).all()) and res.converged
    True
    """
    if lam is not None and lam_ratio is not None:
        raise ValueError(
            "Give the penalty either as lam_ratio (a fraction of lam_max) or as "
            f"lam (absolute), not both. Got lam_ratio={lam_ratio!r}, lam={lam!r}."
        )
    if lam is not None:
        check_scalar(lam, "lam", numbers.Real, owner=_OWNER, min_val=0.0)
    else:
        lam_ratio = 0.5 if lam_ratio is None else lam_ratio
        check_scalar(lam_ratio, "lam_ratio", numbers.Real, owner=_OWNER, min_val=0.0)
    check_scalar(max_iter, "max_iter", numbers.Integral, owner=_OWNER, min_val=1)
    check_scalar(tol, "tol", numbers.Real, owner=_OWNER, min_val=0.0)
    Xs, w = _prepare(X, n_clusters, weights, standardize)
    p = Xs.shape[1]
    (labels,) = initial_partitions(init, n_clusters, 1, p, random_state, owner=_OWNER)
    if lam is None:
        lam_max = initial_lambda_max(Xs, w, [labels], check_input=False)[0, 0]
        lam = float(lam_ratio) * float(lam_max)  # type: ignore[arg-type]
    first = np.zeros(1, dtype=np.intp)
    res = batched_sos_nmf(
        Xs,
        w,
        [labels],
        first,
        first,
        np.array([float(lam)]),
        max_iter=int(max_iter),
        tol=float(tol),
        history=True,
        check_input=False,
    )
    warn_unconverged(str(res.reason[0]), float(res.rel_change[0]), max_iter, tol)
    return single_result(Xs, w, res, 0, float(lam), float(res.lam_max[0]))
