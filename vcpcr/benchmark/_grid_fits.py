"""Fit a method's whole grid on one (standardized) training fold.

Each solver returns the coefficients (standardized scale) and the cluster
labels of every requested grid point ``(start, tuned, traced)``:

* VC-PCR: one weights computation for all deltas, then every
  ``(K, start, delta, lam_ratio)`` problem in one
  :func:`vcpcr._clustering.best_starts` call, then least squares of ``y``
  on ``M = X V`` (``numpy.linalg.lstsq``);
* CRL: one clustering per ``(K, start)`` (``vcpcr.baselines._crl``'s
  ``cluster_variables``; CRL-kmeans is ``CRL(init="random")``'s Lloyd run
  from the shared random start), then its ``crl_path`` along the lasso
  penalties;
* CEN and SRR: one warm-started path over the traced lasso penalty per
  ``(start, tuned)`` pair: ``cen_path`` and ``srr_path`` of
  :mod:`vcpcr.baselines` (the algorithms of :class:`vcpcr.baselines.CEN`
  and :class:`vcpcr.baselines.SRR`, with scikit-learn's compiled Gram
  coordinate descent, through the public ``enet_path``, in place of their
  pure-Python one and looser tolerances).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from vcpcr._clustering import best_starts
from vcpcr._families import family_instance
from vcpcr._weights import SCHEMES, weights_for_grid
from vcpcr.baselines import cen_path, cluster_variables, crl_path, srr_path
from vcpcr.benchmark._methods import Method, Starts

__all__ = ["GridFit", "ols_step", "solve"]

#: The study's family (the paper's simulation has a gaussian response).
GAUSSIAN = family_instance("gaussian", owner="vcpcr benchmark")

_Floats = NDArray[np.float64]
_Ints = NDArray[np.intp]
_Mask = NDArray[np.bool_]


class GridFit(NamedTuple):
    """Solutions of the grid points of one training fold.

    Attributes
    ----------
    coef : ndarray of shape (n_starts, n_tuned, n_traced, n_features)
        Coefficients on the standardized scale; NaN where not requested.
    labels : ndarray of int of the same shape
        Cluster of each feature, -1 for unselected features.
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
        relative = method.options["relative_delta"]
        delta_max = SCHEMES[scheme].delta_max(Xs, ys, GAUSSIAN)
        scale = delta_max if relative and delta_max is not None else 1.0
        W = weights_for_grid(Xs, ys, scheme, uniq * scale, GAUSSIAN).coef
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


def _solve_crl(
    method: Method, Xs: _Floats, ys: _Floats, starts: Starts, mask: _Mask
) -> GridFit:
    out = _empty(mask, Xs.shape[1])
    alphas = np.asarray(method.traced)
    clustering = method.options["clustering"]
    n_fits = 0
    for s, t in np.argwhere(mask.any(axis=2)):
        K = int(method.tuned[t][0])
        # CRL-kmeans: CRL(init="random")'s Lloyd run from the shared start
        init = starts[K][s] if clustering == "kmeans" else "k-means++"
        groups = cluster_variables(Xs, K, clustering, init=init)
        out.coef[s, t], out.labels[s, t] = crl_path(Xs, ys, groups, alphas)
        n_fits += alphas.size
    return out._replace(n_fits=n_fits)


def _path_order(alphas: _Floats, needed: _Mask) -> _Ints:
    """Traced indices from the largest alpha down to the smallest needed one."""
    order = np.argsort(-alphas, kind="stable")
    last = int(np.flatnonzero(needed[order])[-1])
    return order[: last + 1]


def _solve_cen(
    method: Method, Xs: _Floats, ys: _Floats, starts: Starts, mask: _Mask
) -> GridFit:
    out = _empty(mask, Xs.shape[1])
    alphas = np.asarray(method.traced)
    tol, max_iter = method.options["tol"], method.options["max_iter"]
    n_fits = 0
    for s, t in np.argwhere(mask.any(axis=2)):
        K, gamma = int(method.tuned[t][0]), float(method.tuned[t][1])
        path = _path_order(alphas, mask[s, t])
        coef, labels, *_ = cen_path(
            Xs, ys, starts[K][s], alphas[path], gamma, tol=tol, max_iter=max_iter
        )
        out.coef[s, t, path] = coef
        out.labels[s, t, path] = np.where(coef != 0.0, labels, -1)
        n_fits += path.size
    return out._replace(n_fits=n_fits)


def _solve_srr(
    method: Method, Xs: _Floats, ys: _Floats, starts: Starts, mask: _Mask
) -> GridFit:
    p = Xs.shape[1]
    out = _empty(mask, p)
    alphas = np.asarray(method.traced)
    opts = method.options
    n_fits = 0
    for s, t in np.argwhere(mask.any(axis=2)):
        K, lam = int(method.tuned[t][0]), float(method.tuned[t][1])
        path = _path_order(alphas, mask[s, t])
        B, *_ = srr_path(
            Xs,
            ys,
            K,
            alphas[path],
            lam,
            tol=opts["tol"],
            cycle_tol=opts["cycle_tol"],
            max_iter=opts["max_iter"],
        )
        best = np.argmax(np.abs(B), axis=2)
        out.coef[s, t, path] = B.mean(axis=2)
        out.labels[s, t, path] = np.where((B != 0.0).any(axis=2), best, -1)
        n_fits += path.size
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
