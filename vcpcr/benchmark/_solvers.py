"""Fit a method's whole grid on one (standardized) training fold.

Each solver returns the coefficients (standardized scale) and the cluster
labels of every requested grid point ``(start, tuned, traced)``:

* VC-PCR: one weights computation for all deltas, then every
  ``(K, start, delta, lam_ratio)`` problem in one
  :func:`vcpcr._clustering.best_starts` call, then least squares of ``y``
  on ``M = X V`` (``numpy.linalg.lstsq``);
* CRL: one clustering per ``(K, start)``, then the lasso path on the cluster
  averages (the conventions of :class:`vcpcr.baselines.CRL`);
* CEN and SRR: one warm-started path over the traced lasso penalty per
  ``(start, tuned)`` pair; the algorithms of :class:`vcpcr.baselines.CEN`
  and :class:`vcpcr.baselines.SRR` (the same solutions when started from
  zero), with scikit-learn's compiled Gram coordinate descent in place of
  their pure-Python one and looser tolerances (together 3-10 times faster).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from sklearn.utils import check_random_state

from vcpcr._clustering import best_starts
from vcpcr._weights import ENET_L1_RATIO, lasso_delta_max, weights_for_grid
from vcpcr.baselines._cen import cen_gram, kmeans_columns
from vcpcr.baselines._hclustvar import hclustvar
from vcpcr.benchmark._methods import Method, Starts

__all__ = [
    "GridFit",
    "cen_fit",
    "crl_path",
    "gram_lasso",
    "ols_step",
    "solve",
    "srr_fit",
]

_Floats = NDArray[np.float64]
_Ints = NDArray[np.intp]
_Mask = NDArray[np.bool_]
# only seeds the (unused) random coordinate order of scikit-learn's solver
_SKLEARN_RNG = check_random_state(0)


class GridFit(NamedTuple):
    """Solutions of the grid points of one training fold.

    Attributes
    ----------
    coef : ndarray of shape (n_starts, n_tuned, n_traced, n_features)
        Coefficients on the standardized scale; NaN where not requested.
    labels : ndarray of int of the same shape
        Cluster of each variable, -1 for unselected variables.
    n_fits : int
        Number of models fitted.
    """

    coef: _Floats
    labels: _Ints
    n_fits: int


def _empty(mask: _Mask, p: int) -> GridFit:
    shape = (*mask.shape, p)
    return GridFit(np.full(shape, np.nan), np.full(shape, -1, dtype=np.intp), 0)


def ols_step(
    Xs: _Floats, ys: _Floats, labels: _Ints, v: _Floats
) -> tuple[_Floats, _Ints]:
    """VC-PCR step 2: least squares of ``y`` on ``M = X V``; ``b = V a``.

    Returns the coefficients and the labels (all -1 when nothing is
    selected, which predicts 0).
    """
    sel = np.flatnonzero(labels >= 0)
    if sel.size == 0:
        return np.zeros(labels.size), labels
    V = np.zeros((labels.size, int(labels[sel].max()) + 1))
    V[sel, labels[sel]] = v[sel]
    a = np.linalg.lstsq(Xs @ V, ys, rcond=None)[0]
    return V @ a, labels


def _solve_vcpcr(
    method: Method, Xs: _Floats, ys: _Floats, starts: Starts, mask: _Mask
) -> GridFit:
    """All requested VC-PCR problems of the fold in one batched SOS-NMF call.

    As the paper's R code, each start gets its own ``lam_max``: every start
    is a group of one for :func:`vcpcr._clustering.best_starts`.
    """
    n_starts, p = mask.shape[0], Xs.shape[1]
    out = _empty(mask, p)
    Ks = np.array([int(c[0]) for c in method.tuned])
    if len(method.tuned_names) > 1:
        uniq, d_of_t = np.unique([c[1] for c in method.tuned], return_inverse=True)
        scheme = method.options["weights"]
        a = ENET_L1_RATIO if scheme == "enet" else 1.0
        relative = method.options["relative_delta"]
        scale = lasso_delta_max(Xs, ys, l1_ratio=a) if relative else 1.0
        W = weights_for_grid(Xs, ys, scheme, uniq * scale, "gaussian")
    else:
        W, d_of_t = np.ones((1, p)), np.zeros(len(method.tuned), dtype=np.intp)
    uK, k_of_t = np.unique(Ks, return_inverse=True)
    groups = [[starts[int(K)][s]] for K in uK for s in range(n_starts)]
    s_i, t_i, r_i = np.nonzero(mask)
    res = best_starts(
        Xs,
        W,
        groups,
        k_of_t[t_i] * n_starts + s_i,
        d_of_t[t_i],
        np.asarray(method.traced)[r_i],
        max_iter=500,
        tol=1e-4,
    )
    for b, (s, t, r) in enumerate(zip(s_i, t_i, r_i, strict=True)):
        out.coef[s, t, r], out.labels[s, t, r] = ols_step(
            Xs, ys, res.labels[b], res.v[b]
        )
    return out._replace(n_fits=int(s_i.size))


def _lasso_path(Z: _Floats, y: _Floats, alphas: _Floats) -> _Floats:
    """Lasso ``1/(2n)||y - Z a||^2 + alpha ||a||_1`` for each alpha (rows).

    Warm-started from the largest alpha; ``alpha = 0`` is least squares
    (minimum norm). Same solver settings as :class:`vcpcr.baselines.CRL`.
    """
    from sklearn.linear_model import Lasso

    out = np.zeros((alphas.size, Z.shape[1]))
    model = Lasso(fit_intercept=False, tol=1e-10, max_iter=100_000, warm_start=True)
    for i in np.argsort(-alphas, kind="stable"):
        if alphas[i] == 0:
            out[i] = np.linalg.lstsq(Z, y, rcond=None)[0]
            continue
        out[i] = model.set_params(alpha=float(alphas[i])).fit(Z, y).coef_
    return out


def crl_path(
    Xs: _Floats, ys: _Floats, groups: _Ints, alphas: _Floats
) -> tuple[_Floats, _Ints]:
    """CRL's step 2 for a fixed clustering, for every lasso penalty.

    Parameters
    ----------
    Xs, ys : ndarray
        Standardized training data.
    groups : ndarray of int of shape (n_features,)
        Clusters ``0..K-1`` of the variables.
    alphas : ndarray of shape (n_alphas,)
        Lasso penalties (glmnet's parametrization).

    Returns
    -------
    coef : ndarray of shape (n_alphas, n_features)
        ``b_j = a_k / |C_k|`` for ``j`` in cluster ``k``.
    labels : ndarray of int of shape (n_alphas, n_features)
        The cluster of the variables of selected clusters, -1 otherwise.
    """
    _, groups = np.unique(groups, return_inverse=True)
    sizes = np.bincount(groups).astype(np.float64)
    onehot = np.zeros((groups.size, sizes.size))
    onehot[np.arange(groups.size), groups] = 1.0
    a = _lasso_path((Xs @ onehot) / sizes, ys, alphas)
    coef = a[:, groups] / sizes[groups]
    labels = np.where(a[:, groups] != 0.0, groups, -1).astype(np.intp)
    return coef, labels


def _kmeans_from(Xs: _Floats, start: _Ints) -> _Ints:
    """Lloyd's k-means of the columns, from the centroids of a partition.

    As R's ``kmeans(t(X), centers, algorithm = "Lloyd", iter.max = 100)`` of
    the authors' code: until no label changes, at most 100 iterations.
    """
    from sklearn.cluster import KMeans

    _, start = np.unique(start, return_inverse=True)
    H = np.zeros((start.size, int(start.max()) + 1))
    H[np.arange(start.size), start] = 1.0
    centers = (Xs @ H / H.sum(axis=0)).T
    km = KMeans(
        centers.shape[0], init=centers, n_init=1, max_iter=100, tol=0.0,
        algorithm="lloyd",
    )  # fmt: skip
    return np.asarray(km.fit(Xs.T).labels_, dtype=np.intp)


def _cluster(Xs: _Floats, K: int, clustering: str, start: _Ints | None) -> _Ints:
    """CRL's step 1 (see :class:`vcpcr.baselines.CRL`); ``start`` for k-means."""
    if clustering == "hclustcc":
        return hclustvar(Xs, K)
    if clustering == "ward":
        from sklearn.cluster import AgglomerativeClustering

        ward = AgglomerativeClustering(n_clusters=K, linkage="ward")
        return np.asarray(ward.fit(Xs.T).labels_, dtype=np.intp)
    if start is None:
        raise ValueError(f"CRL-kmeans needs random starts with K={K}; got none.")
    return _kmeans_from(Xs, start)


def _solve_crl(
    method: Method, Xs: _Floats, ys: _Floats, starts: Starts, mask: _Mask
) -> GridFit:
    out = _empty(mask, Xs.shape[1])
    alphas = np.asarray(method.traced)
    clustering = method.options["clustering"]
    n_fits = 0
    for s, t in np.argwhere(mask.any(axis=2)):
        K = int(method.tuned[t][0])
        start = starts[K][s] if K in starts else None
        groups = _cluster(Xs, K, clustering, start)
        out.coef[s, t], out.labels[s, t] = crl_path(Xs, ys, groups, alphas)
        n_fits += alphas.size
    return out._replace(n_fits=n_fits)


def _path_order(alphas: _Floats, needed: _Mask) -> _Ints:
    """Traced indices from the largest alpha down to the smallest needed one."""
    order = np.argsort(-alphas, kind="stable")
    last = int(np.flatnonzero(needed[order])[-1])
    return order[: last + 1]


class _Gram(NamedTuple):
    """``X'X``, ``X'y`` and the data of one training fold."""

    G: _Floats
    Xy: _Floats
    Xs: _Floats
    ys: _Floats

    @classmethod
    def of(cls, Xs: _Floats, ys: _Floats) -> _Gram:
        return cls(Xs.T @ Xs, Xs.T @ ys, Xs, ys)


@functools.cache
def _compiled_gram_cd() -> Callable[..., Any] | None:
    """scikit-learn's Gram coordinate descent, if its signature is the known one."""
    try:
        from sklearn.linear_model._cd_fast import enet_coordinate_descent_gram
    except ImportError:  # pragma: no cover - a future scikit-learn
        return None
    doc = enet_coordinate_descent_gram.__doc__ or ""
    if "w^T Q w - q^T w + alpha norm(w, 1)" not in doc:  # pragma: no cover
        return None
    return enet_coordinate_descent_gram  # type: ignore[no-any-return]


def gram_lasso(
    gram: _Gram,
    Q: _Floats,
    q: _Floats,
    alpha: float,
    b0: _Floats,
    tol: float,
    max_iter: int = 100_000,
) -> _Floats:
    r"""Minimize ``(b'Qb/2 - q'b + y'y/2) / n + alpha ||b||_1`` from ``b0``.

    scikit-learn's compiled coordinate descent with a Gram matrix
    (:func:`sklearn.linear_model.enet_path` with ``precompute=Q``), stopped
    when the duality gap is below ``tol * y'y``. ``Q`` need not be ``X'X``:
    any ``Q = A'A`` with ``q = A'z``, ``z'z = y'y`` (an augmented least-squares
    problem, as CEN's and SRR's are) has the same coordinate updates and
    duality gap. ``alpha > 0``. At most ``max_iter`` sweeps; scikit-learn's
    ConvergenceWarning says when they were not enough.

    The compiled routine behind ``enet_path`` is called directly when its
    (private) signature is the known one: the parameter validation of
    ``enet_path`` costs more than a typical warm-started solve here.
    """
    fast = _compiled_gram_cd()
    if fast is not None:
        w = np.array(b0, dtype=np.float64)
        fast(
            w, alpha * gram.Xs.shape[0], 0.0, np.ascontiguousarray(Q),
            np.ascontiguousarray(q), gram.ys, max_iter, tol, _SKLEARN_RNG,
            False, False,
        )  # fmt: skip
        return w
    from sklearn.linear_model import enet_path

    _, coefs, _ = enet_path(
        gram.Xs, gram.ys, l1_ratio=1.0, alphas=[alpha],
        precompute=np.ascontiguousarray(Q), Xy=np.ascontiguousarray(q),
        coef_init=np.asfortranarray(b0), check_input=False, tol=tol,
        max_iter=max_iter,
    )  # fmt: skip
    return np.asarray(coefs[:, 0], dtype=np.float64)


def cen_fit(
    gram: _Gram,
    labels0: _Ints,
    b0: _Floats,
    alpha: float,
    gamma: float,
    *,
    tol: float,
    max_iter: int,
) -> tuple[_Floats, _Ints]:
    """CEN from partition ``labels0`` and coefficients ``b0`` (one start).

    The alternation of :class:`vcpcr.baselines.CEN` (the coefficients for a
    fixed partition, then Lloyd's k-means of ``x_j b_j`` from the current
    partition, until the partition is fixed), warm-started at ``b0``; the
    coefficient step is :func:`gram_lasso` on CEN's quadratic form.
    """
    n = gram.Xs.shape[0]
    labels, b = labels0, b0
    for _ in range(max_iter):
        Q = cen_gram(gram.G, labels, gamma, n) * n
        b = gram_lasso(gram, Q, gram.Xy, alpha, b, tol)
        new = kmeans_columns(gram.Xs * b, labels)
        if np.array_equal(new, labels):
            break
        labels = new
    return b, labels


def _solve_cen(
    method: Method, Xs: _Floats, ys: _Floats, starts: Starts, mask: _Mask
) -> GridFit:
    out = _empty(mask, Xs.shape[1])
    alphas = np.asarray(method.traced)
    tol, max_iter = method.options["tol"], method.options["max_iter"]
    gram = _Gram.of(Xs, ys)
    n_fits = 0
    for s, t in np.argwhere(mask.any(axis=2)):
        K, gamma = int(method.tuned[t][0]), float(method.tuned[t][1])
        b = np.zeros(Xs.shape[1])
        for r in _path_order(alphas, mask[s, t]):
            b, labels = cen_fit(
                gram, starts[K][s], b, float(alphas[r]), gamma,
                tol=tol, max_iter=max_iter,
            )  # fmt: skip
            out.coef[s, t, r] = b
            out.labels[s, t, r] = np.where(b != 0.0, labels, -1)
            n_fits += 1
    return out._replace(n_fits=n_fits)


def srr_fit(
    gram: _Gram,
    B: _Floats,
    alpha: float,
    lambda_div: float,
    *,
    tol: float,
    cycle_tol: float,
    max_iter: int,
) -> _Floats:
    """SRR by block coordinate descent over the models, from ``B`` (p x K).

    As :class:`vcpcr.baselines.SRR`: model ``g`` given the others is a lasso
    with weights ``alpha + 2 lambda_div sum_{h != g} |b_jh|``, solved by
    :func:`gram_lasso` after rescaling ``b_j`` by its weight; cycles stop
    when no coefficient moves by more than ``cycle_tol`` (in ``sd(x_j)
    |db_j|``, standardized scale) or after ``max_iter`` cycles. A block solve
    stops after 1000 sweeps (the next cycle continues it).
    """
    from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

    B = B.copy()
    root = np.sqrt(np.diag(gram.G) / gram.Xs.shape[0])
    for _ in range(max_iter):
        old = B.copy()
        A = np.abs(B)
        for g in range(B.shape[1]):
            A[:, g] = 0.0
            scale = 1.0 + 2.0 * lambda_div * A.sum(axis=1) / alpha
            Q = gram.G / np.outer(scale, scale)
            with warnings.catch_warnings():  # inexact block solves are fine
                warnings.simplefilter("ignore", SkConvergenceWarning)
                u = gram_lasso(
                    gram, Q, gram.Xy / scale, alpha, B[:, g] * scale, tol, 1000
                )
            B[:, g] = u / scale
            A[:, g] = np.abs(B[:, g])
        if float(np.max(root[:, None] * np.abs(B - old))) <= cycle_tol:
            break
    return B


def _solve_srr(
    method: Method, Xs: _Floats, ys: _Floats, starts: Starts, mask: _Mask
) -> GridFit:
    p = Xs.shape[1]
    out = _empty(mask, p)
    alphas = np.asarray(method.traced)
    opts = method.options
    gram = _Gram.of(Xs, ys)
    n_fits = 0
    for s, t in np.argwhere(mask.any(axis=2)):
        B = np.zeros((p, int(method.tuned[t][0])))
        lam = float(method.tuned[t][1])
        for r in _path_order(alphas, mask[s, t]):
            B = srr_fit(
                gram, B, float(alphas[r]), lam, tol=opts["tol"],
                cycle_tol=opts["cycle_tol"], max_iter=opts["max_iter"],
            )  # fmt: skip
            active = B != 0.0
            best = np.argmax(np.abs(B), axis=1)
            out.coef[s, t, r] = B.mean(axis=1)
            out.labels[s, t, r] = np.where(active.any(axis=1), best, -1)
            n_fits += 1
    return out._replace(n_fits=n_fits)


_SOLVERS: dict[str, Callable[[Method, _Floats, _Floats, Starts, _Mask], GridFit]] = {
    "vcpcr": _solve_vcpcr,
    "crl": _solve_crl,
    "cen": _solve_cen,
    "srr": _solve_srr,
}


def solve(
    method: Method, Xs: _Floats, ys: _Floats, starts: Starts, mask: _Mask
) -> GridFit:
    """Fit the grid points ``mask[start, tuned, traced]`` on a training fold.

    Parameters
    ----------
    method : Method
        The method and its grids.
    Xs, ys : ndarray
        The standardized training fold.
    starts : dict of int to list of ndarray
        Random initial partitions (see :func:`draw_starts`).
    mask : ndarray of bool of shape (n_starts, n_tuned, n_traced)
        The grid points to fit (path solvers also fit the larger penalties
        of the path).

    Returns
    -------
    GridFit
        Coefficients and labels of every grid point (NaN if not fitted).
    """
    return _SOLVERS[method.kind](method, Xs, ys, starts, mask)
