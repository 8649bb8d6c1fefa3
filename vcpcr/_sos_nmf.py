"""Weighted SOS-NMF, the variable-clustering step of VC-PCR (numpy/scipy only).

The solver alternates two closed-form updates (Marion et al., Algorithm 1):

* ``U``: ``U~ = (X W) V (V'V)^-1``, each column centred and scaled to unit
  sample variance;
* ``V``: for each variable ``j``, ``s_jk = w_j cor(u_k, x_j)``; ``j`` joins the
  cluster ``k*`` with the largest score, with membership ``(s_jk* - lam)_+``.

Because a row of ``V`` has at most one non-zero, ``V`` is stored as a label and
a value per variable; ``X W V`` is then a sparse product costing ``O(np)``.
"""

from __future__ import annotations

import hashlib
import numbers
import warnings
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from vcpcr._validation import check_array, check_random_state, check_scalar

__all__ = ["SOSNMFResult", "lambda_max", "random_partition", "sos_nmf", "standardize"]

_OWNER = "sos_nmf"


class SOSNMFResult(NamedTuple):
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
        Column of ``V`` holding variable ``j``'s non-zero, or -1 if ``j`` is
        not selected.
    lam : float
        The absolute sparsity penalty used.
    lam_max : float
        The smallest penalty that selects no variable from the initial
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


def standardize(
    X: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Centre the columns of ``X`` and scale them to unit sample variance.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Validated data without constant columns.

    Returns
    -------
    Xs : ndarray of shape (n_samples, n_features)
        Standardized data, ``(X - mean) / scale``.
    mean : ndarray of shape (n_features,)
        Column means.
    scale : ndarray of shape (n_features,)
        Column standard deviations (``ddof=1``).
    """
    mean = X.mean(axis=0)
    scale = X.std(axis=0, ddof=1)
    return (X - mean) / scale, mean, scale


def random_partition(
    n_features: int, n_clusters: int, random_state: Any = None
) -> NDArray[np.intp]:
    """Draw a random partition of the variables into ``n_clusters`` labels.

    Labels are drawn uniformly and redrawn until every label occurs (the
    reference behaviour), which gives the uniform distribution over partitions
    with no empty cluster. When that is unlikely to happen within 100 draws
    (``n_clusters`` close to ``n_features``), each label is instead placed once
    at a random position and the remaining variables drawn uniformly.

    Parameters
    ----------
    n_features : int
        Number of variables ``p``.
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
    rng = check_random_state(random_state)
    for _ in range(100):
        labels = rng.integers(0, n_clusters, size=n_features)
        if np.unique(labels).size == n_clusters:
            return labels.astype(np.intp)
    labels = rng.integers(0, n_clusters, size=n_features)
    labels[rng.permutation(n_features)[:n_clusters]] = np.arange(n_clusters)
    return labels.astype(np.intp)


def _latent(
    XWT: NDArray[np.float64],
    labels: NDArray[np.intp],
    v: NDArray[np.float64],
    K: int,
    col_sd: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Return the unit-variance latent variables ``normalize(XW V (V'V)^-1)``.

    ``XWT`` is ``(X W)'`` stored contiguously (``p x n``: the sparse product
    then needs no copy). ``labels`` must lie in ``0..K-1`` for selected
    variables (``v > 0``) and every cluster must hold a variable; ``col_sd``
    are the column standard deviations of ``XW``. A latent variable whose
    variables cancel out (sd at rounding level) is returned as zeros.
    """
    sel = np.flatnonzero(v > 0)
    lab, val = labels[sel], v[sel]
    Vs = sp.csr_array((val, (lab, sel)), shape=(K, XWT.shape[0]))
    ss = np.bincount(lab, val**2, minlength=K)
    Ut = np.asarray(Vs @ XWT).T / ss
    Ut -= Ut.mean(axis=0)
    sd = Ut.std(axis=0, ddof=1)
    # Triangle inequality: sd(sum_j a_j xw_j) <= sum_j |a_j| sd(xw_j).
    bound = np.bincount(lab, val * col_sd[sel], minlength=K) / ss
    zero = sd <= 1e-10 * bound
    Ut[:, zero] = 0.0
    Ut[:, ~zero] /= sd[~zero]
    return Ut


def _assign(
    S: NDArray[np.float64], lam: float
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
    """Return labels, memberships and best scores for the score matrix ``S``."""
    best = np.argmax(S, axis=1)
    s_best = np.take_along_axis(S, best[:, None], axis=1)[:, 0]
    v = np.maximum(s_best - lam, 0.0)
    labels = np.where(v > 0, best, -1).astype(np.intp)
    return labels, v, s_best


def _compact(labels: NDArray[np.intp]) -> tuple[NDArray[np.intp], int]:
    """Relabel the non-empty clusters as ``0..K'-1`` (in order); -1 stays -1."""
    used = np.unique(labels[labels >= 0])
    lookup = np.full(max(int(labels.max(initial=-1)) + 1, 1), -1, dtype=np.intp)
    lookup[used] = np.arange(used.size)
    out = np.where(labels >= 0, lookup[np.maximum(labels, 0)], -1).astype(np.intp)
    return out, int(used.size)


class _Status(NamedTuple):
    """How a single run stopped, and the last relative change of the objective.

    ``reason`` is one of "tol", "fixed", "cycle", "max_iter" or "empty".
    """

    reason: str
    rel_change: float


def _sos_nmf_single(
    XW: NDArray[np.float64],
    init: NDArray[np.intp],
    *,
    lam: float | None = None,
    lam_ratio: float | None = None,
    max_iter: int = 500,
    tol: float = 1e-4,
) -> tuple[SOSNMFResult, _Status]:
    """Run weighted SOS-NMF on validated input; see :func:`sos_nmf`.

    ``XW`` is the standardized data times the weights (``X * w``); ``init`` is
    a partition with labels ``0..K-1``. Exactly one of ``lam`` and
    ``lam_ratio`` is given. Never warns: the caller turns the status into a
    warning, so that restarts can be judged together.
    """
    n = XW.shape[0]
    norm2 = float(np.einsum("ij,ij->", XW, XW))
    col_sd = XW.std(axis=0, ddof=1)
    labels, K = _compact(init)
    v = np.ones(labels.size)
    objective: list[float] = []
    XWT = np.ascontiguousarray(XW.T)
    seen: set[bytes] = set()  # digests of the states visited (cycle check)
    lam_max = lam_used = float("nan")
    status = _Status("max_iter", float("nan"))
    U = np.empty((n, 0))
    for it in range(max_iter):
        if K == 0:
            status = _Status("empty", 0.0)
            break
        U = _latent(XWT, labels, v, K, col_sd)
        S = (XWT @ U) / (n - 1)
        if it == 0:
            lam_max = max(float(S.max()), 0.0)
            lam_used = float(lam) if lam is not None else float(lam_ratio) * lam_max  # type: ignore[arg-type]
        new_labels, new_v, s_best = _assign(S, lam_used)
        u_norm2 = np.einsum("ij,ij->j", U, U)
        sel = new_labels >= 0
        J = (
            norm2 / (2 * (n - 1))
            - float(new_v @ s_best)
            + float(new_v[sel] ** 2 @ u_norm2[new_labels[sel]]) / (2 * (n - 1))
            + lam_used * float(new_v.sum())
        )
        objective.append(J)
        fixed = np.array_equal(new_labels, labels) and np.allclose(
            new_v, v, rtol=1e-12, atol=0.0
        )
        labels, K = _compact(new_labels)
        v = new_v
        if it > 0:
            prev = objective[-2]
            rel = abs(prev - J) / max(abs(prev), np.finfo(float).tiny)
            status = _Status("max_iter", rel)
            if rel < tol:
                status = _Status("tol", rel)
                break
            if fixed:
                status = _Status("fixed", rel)
                break
        key = hashlib.blake2b(labels.tobytes() + v.tobytes(), digest_size=16).digest()
        if key in seen:
            status = _Status("cycle", status.rel_change)
            break
        seen.add(key)
    n_iter = len(objective)
    if K > 0:
        U = _latent(XWT, labels, v, K, col_sd)
    else:
        U = np.empty((n, 0))
    V = np.zeros((labels.size, K))
    sel = labels >= 0
    V[np.flatnonzero(sel), labels[sel]] = v[sel]
    result = SOSNMFResult(
        V=V,
        U=U,
        labels=labels,
        lam=lam_used,
        lam_max=lam_max,
        objective=np.asarray(objective),
        n_iter=n_iter,
        converged=status.reason in {"tol", "fixed", "empty"},
    )
    return result, status


def _warn_status(status: _Status, max_iter: int, tol: float, stacklevel: int) -> None:
    """Issue a ConvergenceWarning for a run that stopped without converging."""
    # Imported here: the class derives from scikit-learn's (see vcpcr.exceptions).
    from vcpcr.exceptions import ConvergenceWarning

    if status.reason == "max_iter":
        warnings.warn(
            f"SOS-NMF did not converge within max_iter={max_iter} iterations: the "
            f"last relative change of the objective was {status.rel_change:.3g} "
            f"(tol={tol:g}). Increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=stacklevel + 1,
        )
    elif status.reason == "cycle":
        warnings.warn(
            f"SOS-NMF entered a cycle of cluster assignments (last relative "
            f"change of the objective {status.rel_change:.3g}, tol={tol:g}); "
            f"the last iterate is returned. Use tol > 0 to stop on the objective.",
            ConvergenceWarning,
            stacklevel=stacklevel + 1,
        )


def _check_weights(weights: ArrayLike | None, p: int) -> NDArray[np.float64]:
    """Return the weight vector (ones when None), validated against ``p``."""
    if weights is None:
        return np.ones(p)
    w = check_array(weights, "weights", ensure_2d=False)
    if w.shape[0] != p:
        raise ValueError(
            f"weights has {w.shape[0]} entries but X has {p} columns; give one "
            f"weight per variable."
        )
    return w


def _check_init(
    init: Any, n_clusters: int | None, p: int, random_state: Any
) -> NDArray[np.intp]:
    """Turn ``init`` ("random" or labels) into a validated label vector."""
    if isinstance(init, str):
        if init != "random":
            raise ValueError(
                f"The 'init' parameter of {_OWNER} must be 'random' or an array of "
                f"labels. Got {init!r} instead."
            )
        if n_clusters is None:
            raise ValueError(
                "n_clusters is required with init='random'; give the number of "
                "clusters or an array of initial labels."
            )
        return random_partition(p, n_clusters, random_state)
    labels = np.asarray(init)
    if labels.ndim != 1 or labels.shape[0] != p:
        raise ValueError(
            f"init must hold one label per variable: expected shape ({p},), got "
            f"{labels.shape}."
        )
    if labels.dtype.kind not in "iu" and not (
        labels.dtype.kind == "f"
        and np.all(np.isfinite(labels))
        and np.all(labels == np.round(labels))
    ):
        raise TypeError(f"init labels must be integers; got dtype {labels.dtype}.")
    labels = labels.astype(np.intp)
    k = n_clusters if n_clusters is not None else int(labels.max()) + 1
    if labels.min() < 0 or labels.max() >= k:
        raise ValueError(
            f"init labels must lie in 0..{k - 1} (n_clusters={k}); got values in "
            f"{labels.min()}..{labels.max()}."
        )
    return labels


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
    """Smallest sparsity penalty for which SOS-NMF selects no variable.

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
        Variable weights ``w``; ``None`` means all ones.
    standardize : bool, default=True
        Centre and scale ``X`` (``ddof=1``) first. With ``False``, ``X`` must
        already be standardized.

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
    labels = _check_init(np.asarray(init), None, Xs.shape[1], None)
    XW = Xs * w
    XWT = np.ascontiguousarray(XW.T)
    labels, K = _compact(labels)
    U = _latent(XWT, labels, np.ones(labels.size), K, XW.std(axis=0, ddof=1))
    # The same operations as the solver's first iteration, to the last bit.
    return max(float(((XWT @ U) / (Xs.shape[0] - 1)).max()), 0.0)


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
    r"""Cluster and select variables with weighted SOS-NMF.

    Solves

    .. math::

        \min_{U, V} \frac{1}{2(n-1)} \lVert X W - U V^\top \rVert_F^2
        + \lambda \sum_{j=1}^p \lVert v_j \rVert_1
        \quad \text{s.t. } V \ge 0,\ \operatorname{var}(u_k) = 1,\
        V \text{ has orthogonal columns}

    by alternating the closed-form updates of ``U`` and ``V`` from an initial
    partition of the variables. Each variable ends up in at most one cluster;
    variables with zero membership are not selected.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    n_clusters : int, optional
        Number of clusters ``K`` of the initial partition. Required with
        ``init="random"``; inferred from the labels otherwise.
    weights : array-like of shape (n_features,), default=None
        Signed variable weights ``w`` (the diagonal of ``W``); ``None`` means
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
    .. [1] Marion, R., Lederer, J., Govaerts, B., von Sachs, R. "VC-PCR: A
       prediction method based on supervised variable selection and
       clustering." arXiv:2202.00975.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr import sos_nmf
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(60, 2))
    >>> X = np.repeat(z, 3, axis=1) + 0.3 * rng.normal(size=(60, 6))
    >>> res = sos_nmf(X, 2, lam_ratio=0.3, random_state=0)
    >>> res.labels.tolist()
    [1, 1, 1, 0, 0, 0]
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
    labels = _check_init(init, n_clusters, Xs.shape[1], random_state)
    result, status = _sos_nmf_single(
        Xs * w, labels, lam=lam, lam_ratio=lam_ratio, max_iter=max_iter, tol=tol
    )
    _warn_status(status, max_iter, tol, stacklevel=2)
    return result
