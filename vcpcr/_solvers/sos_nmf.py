"""The weighted SOS-NMF engine, the feature-clustering step of VC-PCR.

The solver alternates two closed-form updates (Marion et al., Algorithm 1):

* ``U``: ``U~ = (X W) V (V'V)^-1``, each column centred and scaled to unit
  sample variance;
* ``V``: for each feature ``j``, ``s_jk = w_j cor(u_k, x_j)``; ``j`` joins the
  cluster ``k*`` with the largest score, with membership ``(s_jk* - lam)_+``.

Because a row of ``V`` has at most one non-zero, ``V`` is stored as a label and
a value per feature; ``X W V`` is then a sparse product costing ``O(np)``.

One engine runs every problem: :func:`batched_sos_nmf` advances a batch of
problems (weights, initial partitions and penalties of a tuning grid) together
-- one sparse product for the latent variables, one GEMM per (weights, ``K``)
run for the scores, a vectorized argmax for the assignment;
:func:`initial_lambda_max` is its first half-iteration and
:func:`latent_variables` the latent variables of one solution. The engine
never warns and knows nothing of a single problem's API: the public
:func:`vcpcr.sos_nmf`, :func:`vcpcr.lambda_max` and
:func:`vcpcr.random_partition` (:mod:`vcpcr._sos_nmf`) and the
estimators' restart driver (:mod:`vcpcr._clustering`) validate their input
once and call it with ``check_input=False``. numpy/scipy only.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from vcpcr._checks import check_array, check_labels, check_scalar

__all__ = [
    "BatchResult",
    "batched_sos_nmf",
    "initial_lambda_max",
    "latent_variables",
]

_BATCH = "batched_sos_nmf"
_Floats = NDArray[np.float64]
_Ints = NDArray[np.intp]


def _compact(labels: NDArray[np.intp]) -> tuple[NDArray[np.intp], int]:
    """Relabel the non-empty clusters as ``0..K'-1`` (in order); -1 stays -1."""
    used = np.unique(labels[labels >= 0])
    lookup = np.full(max(int(labels.max(initial=-1)) + 1, 1), -1, dtype=np.intp)
    lookup[used] = np.arange(used.size)
    out = np.where(labels >= 0, lookup[np.maximum(labels, 0)], -1).astype(np.intp)
    return out, int(used.size)


# ---------------------------------------------------------------------------
# The iteration engine: every problem of a batch advances together.
# ---------------------------------------------------------------------------

_REASONS = ("tol", "fixed", "cycle", "max_iter", "empty")
# A score within this relative distance of the penalty is at the penalty: the
# same score computed in another batch may differ in the last bits, and
# lam_ratio = 1 (lam = lam_max) must select nothing whatever the batch.
_AT_PENALTY = 1e-12
_RUNNING, _TOL, _FIXED, _CYCLE, _MAX_ITER, _EMPTY = -1, 0, 1, 2, 3, 4


class BatchResult(NamedTuple):
    """Result of :func:`batched_sos_nmf`, one row or entry per problem.

    Attributes
    ----------
    labels : ndarray of shape (n_problems, n_features) or (n_problems, n_kept)
        Cluster of each feature, compacted to ``0..K'-1``; -1 = unselected.
        With ``compact=True``, of the features listed in ``features`` only.
    v : ndarray of shape (n_problems, n_features) or (n_problems, n_kept)
        Membership of each feature (the non-zero of its row of ``V``, or 0).
    objective : ndarray of shape (n_problems,)
        Objective after the last update of ``V``.
    n_iter : ndarray of shape (n_problems,)
        Number of iterations run.
    converged : ndarray of bool of shape (n_problems,)
        Whether the problem stopped on "tol", "fixed" or "empty".
    reason : ndarray of str of shape (n_problems,)
        Why it stopped: "tol", "fixed", "cycle", "max_iter" or "empty".
    rel_change : ndarray of shape (n_problems,)
        Last relative change of the objective (NaN after one iteration).
    lam_max : ndarray of shape (n_problems,)
        The penalty that selects nothing from the initial partition.
    history : ndarray of shape (n_problems, max(n_iter)) or None
        The objective after each iteration (NaN after ``n_iter``), when
        asked for with ``history=True``.
    features : ndarray of int of shape (n_kept,)
        The features ``labels`` and ``v`` hold: all of them, or with
        ``compact=True`` those with a non-zero weight in some row of ``W``
        (the others are unselected in every problem).
    n_features : int
        The number of features ``p``.
    """

    labels: NDArray[np.intp]
    v: NDArray[np.float64]
    objective: NDArray[np.float64]
    n_iter: NDArray[np.intp]
    converged: NDArray[np.bool_]
    reason: NDArray[Any]
    rel_change: NDArray[np.float64]
    lam_max: NDArray[np.float64]
    history: NDArray[np.float64] | None
    features: NDArray[np.intp]
    n_features: int

    def dense_labels(self, problems: ArrayLike) -> NDArray[np.intp]:
        """Labels of the ``problems`` over all ``n_features`` features."""
        rows = self.labels[np.asarray(problems, dtype=np.intp)]
        out = np.full((rows.shape[0], self.n_features), -1, dtype=np.intp)
        out[:, self.features] = rows
        return out

    def dense_v(self, problems: ArrayLike) -> NDArray[np.float64]:
        """Memberships of the ``problems`` over all ``n_features`` features."""
        rows = self.v[np.asarray(problems, dtype=np.intp)]
        out = np.zeros((rows.shape[0], self.n_features))
        out[:, self.features] = rows
        return out


class _Weighted(NamedTuple):
    """The data times each weight vector ``W[d]``: the samples' form.

    ``XWT[j, d]`` is column ``j`` of ``Xs * W[d]`` (shape ``p x D x n``:
    the sparse product of the latent variables reads it as a ``pD x n``
    matrix, the score GEMM of weight ``d`` as the ``p x n`` slice
    ``XWT[:, d]``); ``norm2[d]`` is the squared Frobenius norm of ``Xs *
    W[d]``, ``col_sd[j * D + d]`` the standard deviation of its column ``j``.
    """

    XWT: _Floats
    norm2: _Floats
    col_sd: _Floats

    @property
    def n(self) -> int:
        """The number of samples."""
        return int(self.XWT.shape[2])


def _weighted(Xs: _Floats, W: _Floats) -> _Weighted:
    # The product written into a C-ordered array: one (p, D, n) buffer, not
    # a differently ordered product and its contiguous copy.
    XWT = np.empty((Xs.shape[1], W.shape[0], Xs.shape[0]))
    np.multiply(Xs.T[:, None, :], W.T[:, :, None], out=XWT)
    norm2 = np.einsum("jdi,jdi->d", XWT, XWT)
    return _Weighted(XWT, norm2, XWT.std(axis=2, ddof=1).reshape(-1))


class _Gram(NamedTuple):
    """The data as the features' cross-products: the form for ``p <= n``.

    A latent variable is ``Xc (w * a)`` (``Xc``: the centred data, ``a``:
    the cluster's memberships over ``V'V``), so the scores need only ``G =
    Xc'Xc``: the score of feature ``j`` is ``w_j (G (w * a))_j`` over the
    latent variable's norm, ``sqrt((w * a)' G (w * a))``. One ``p x p``
    GEMM per (weights, ``K``) run replaces the samples' form's sparse
    product over ``n`` samples and its ``p x n`` GEMM (glmnet's
    "covariance" updates against its "naive" ones). ``G`` is the chunk's
    block of the cross-products, ``W`` its weights (``D x p``); ``norm2``
    and ``col_sd`` as in :class:`_Weighted`.
    """

    G: _Floats
    W: _Floats
    norm2: _Floats
    col_sd: _Floats
    n: int


class _Products(NamedTuple):
    """The cross-products of all features, computed once per solve."""

    G: _Floats
    sq: _Floats  # uncentred sums of squares of the columns
    sd: _Floats  # sample standard deviations of the columns


def _products(Xs: _Floats) -> _Products:
    Xc = Xs - Xs.mean(axis=0)
    G = Xc.T @ Xc
    sd = np.sqrt(np.maximum(np.diagonal(G), 0.0) / (Xs.shape[0] - 1))
    return _Products(G, np.einsum("ij,ij->j", Xs, Xs), sd)


def _gram(prod: _Products, cols: _Ints, W: _Floats, n: int) -> _Gram:
    whole = cols.size == prod.G.shape[0]
    G = prod.G if whole else prod.G[np.ix_(cols, cols)]
    col_sd = (np.abs(W) * prod.sd[cols]).T.reshape(-1)
    return _Gram(G, W, (W**2) @ prod.sq[cols], col_sd, n)


class _Layout(NamedTuple):
    """Rows of the latent variables of the active problems.

    Problems are sorted by (weight ``d``, ``K``); ``groups`` are the runs
    ``(start, stop, K, d, r0)`` of problems sharing both, whose latent
    variables are rows ``r0 ..``; cluster ``k`` of problem ``b`` is row
    ``base[b] + k * stride[b]`` (so a run's score matrix reshapes to
    ``p x K x problems``).
    """

    groups: list[tuple[int, int, int, int, int]]
    base: _Ints
    stride: _Ints
    n_rows: int


def _layout(d: _Ints, K: _Ints) -> _Layout:
    edges = (np.flatnonzero((np.diff(d) != 0) | (np.diff(K) != 0)) + 1).tolist()
    base, stride = np.empty((2, K.size), dtype=np.intp)
    groups, r0 = [], 0
    for gs, ge in zip([0, *edges], [*edges, K.size], strict=True):
        k, g = int(K[gs]), ge - gs
        groups.append((gs, ge, k, int(d[gs]), r0))
        base[gs:ge] = r0 + np.arange(g)
        stride[gs:ge] = g
        r0 += k * g
    return _Layout(groups, base, stride, r0)


def _latent(
    data: _Weighted,
    d: _Ints,
    lab: _Ints,
    v: _Floats,
    lay: _Layout,
    ss: _Floats | None = None,
) -> _Floats:
    """Unit-variance latent variables ``normalize(XW V (V'V)^-1)``, one per row.

    ``lab`` and ``v`` are ``p x problems``; every cluster must hold a
    selected feature. ``ss`` overrides the diagonal of ``V'V`` (per row; the
    first update of a screened chunk counts the zero-weight members too, so
    that it rounds as the full problem does). A latent variable whose
    features cancel out (sd at rounding level of the triangle-inequality
    bound) is returned as zeros.
    """
    p, D, n = data.XWT.shape
    jj, bb = np.nonzero(lab >= 0)
    rows = lab[jj, bb] * lay.stride[bb] + lay.base[bb]
    # entries come by feature, then problem, and problems are sorted by d:
    # the columns j * D + d are sorted, so the CSC array needs no sorting
    cols = jj * D + d[bb]
    vals = v[jj, bb]
    indptr = np.zeros(p * D + 1, dtype=np.intp)
    np.cumsum(np.bincount(cols, minlength=p * D), out=indptr[1:])
    G = sp.csc_array((vals, rows, indptr), shape=(lay.n_rows, p * D))
    Ut = np.asarray(G @ data.XWT.reshape(p * D, n))
    if ss is None:
        ss = np.bincount(rows, vals**2, minlength=lay.n_rows).astype(np.float64)
    Ut /= ss[:, None]
    Ut -= Ut.mean(axis=1, keepdims=True)
    sd = Ut.std(axis=1, ddof=1)
    # Triangle inequality: sd(sum_j a_j xw_j) <= sum_j |a_j| sd(xw_j).
    bound = np.bincount(rows, vals * data.col_sd[cols], minlength=lay.n_rows) / ss
    zero = sd <= 1e-10 * bound
    Ut[zero] = 0.0
    sd[zero] = 1.0
    Ut /= sd[:, None]
    return Ut


def _first_max(S: _Floats, K: int, best: _Ints, top: _Floats) -> None:
    """Write each feature's best cluster (the first maximum) and its score.

    ``S`` (p x K g) holds the scores of a run of ``g`` problems, cluster
    ``k`` of problem ``b`` in column ``k * g + b``.
    """
    S3 = S.reshape(S.shape[0], K, -1)
    np.maximum.reduce(S3, axis=1, out=top)
    # first maximum: count the leading clusters whose score is below it
    below = S3[:, 0, :] != top
    best[...] = below
    for k in range(1, K - 1):
        below &= S3[:, k, :] != top
        best += below


def _best_scores(
    data: _Weighted, d: _Ints, Ut: _Floats, lay: _Layout
) -> tuple[_Ints, _Floats]:
    """Best cluster and score ``max_k w_j cor(u_k, x_j)`` of every feature."""
    p, B = data.XWT.shape[0], d.size
    best, s_best = np.empty((p, B), dtype=np.intp), np.empty((p, B))
    for gs, ge, K, dd, r0 in lay.groups:
        S = data.XWT[:, dd] @ Ut[r0 : r0 + K * (ge - gs)].T
        _first_max(S, K, best[:, gs:ge], s_best[:, gs:ge])
    s_best /= Ut.shape[1] - 1  # monotone: the maximum of the scaled scores
    return best, s_best


#: A latent variable of the cross-products' form is zero below this share of
#: its triangle-inequality bound: its squared norm, a quadratic form in ``G``,
#: carries rounding of ``eps`` times the bound squared (the samples' form,
#: whose norm is a sum of squares, resolves ``1e-10``).
_GRAM_ZERO = 1e-6


def _gram_scores(
    data: _Gram, lab: _Ints, v: _Floats, lay: _Layout
) -> tuple[_Ints, _Floats, _Floats]:
    """:func:`_scores` in the cross-products' form.

    The memberships' scale ``V'V`` cancels in the unit-variance latent
    variables, so (unlike the samples' form) it is not needed.
    """
    p, B = lab.shape
    n1 = data.n - 1
    best, s_best = np.empty((p, B), dtype=np.intp), np.empty((p, B))
    u_norm2 = np.zeros(lay.n_rows)
    for gs, ge, K, dd, r0 in lay.groups:
        g, w = ge - gs, data.W[dd]
        sub = lab[:, gs:ge]
        jj, bl = np.nonzero(sub >= 0)
        cols = sub[jj, bl] * g + bl
        vals = v[jj, gs + bl]
        A = np.zeros((p, K * g))
        A[jj, cols] = vals * w[jj]
        T = data.G @ A
        sd = np.sqrt(np.maximum(np.einsum("jr,jr->r", A, T), 0.0) / n1)
        sd_j = data.col_sd[jj * data.W.shape[0] + dd]
        bound = np.bincount(cols, vals * sd_j, minlength=K * g)
        live = sd > _GRAM_ZERO * bound
        scale = np.zeros(K * g)
        scale[live] = 1.0 / sd[live]
        T *= scale
        T *= w[:, None]
        _first_max(T, K, best[:, gs:ge], s_best[:, gs:ge])
        u_norm2[r0 : r0 + K * g] = np.where(live, float(n1), 0.0)
    s_best /= n1
    return best, s_best, u_norm2


def _scores(
    data: _Weighted | _Gram,
    d: _Ints,
    lab: _Ints,
    v: _Floats,
    lay: _Layout,
    ss: _Floats | None = None,
) -> tuple[_Ints, _Floats, _Floats]:
    """Best clusters and scores of every feature, and each latent variable's norm.

    Returns ``best`` and ``s_best`` (p x problems, as :func:`_best_scores`)
    and the squared norm of every latent variable (per row of ``lay``);
    ``ss`` as in :func:`_latent`.
    """
    if isinstance(data, _Gram):
        return _gram_scores(data, lab, v, lay)
    Ut = _latent(data, d, lab, v, lay, ss)
    best, s_best = _best_scores(data, d, Ut, lay)
    return best, s_best, np.einsum("ri,ri->r", Ut, Ut)


@dataclass
class _State:
    """The active problems, sorted by (``d``, ``K``); ``lab``/``v`` are p x B.

    ``pid`` is a problem's position in the chunk; ``J`` its last objective;
    ``rel`` the last relative change of ``J``; ``size0[b, k]`` the number of
    features (of all, screened or not) in initial cluster ``k`` of ``b``
    (0 past its ``K``).
    """

    pid: _Ints
    d: _Ints
    lam: _Floats
    K: _Ints
    lab: _Ints
    v: _Floats
    J: _Floats
    rel: _Floats
    lam_max: _Floats
    size0: _Floats


class _Update(NamedTuple):
    """The state after one iteration; ``fixed``: labels and memberships kept."""

    lab: _Ints
    v: _Floats
    K: _Ints
    J: _Floats
    fixed: NDArray[np.bool_]


def _compact_batch(
    raw: _Ints, sel: NDArray[np.bool_], rows: _Ints, lay: _Layout
) -> tuple[_Ints, _Ints]:
    """Drop the clusters that lost every feature; return labels and ``K``."""
    alive = np.zeros(lay.n_rows, dtype=bool)
    alive[rows[sel]] = True
    K = np.empty(lay.base.size, dtype=np.intp)
    lab = raw
    for gs, ge, k, _, r0 in lay.groups:
        live = alive[r0 : r0 + k * (ge - gs)].reshape(k, ge - gs)
        K[gs:ge] = live.sum(axis=0)
        for i in np.flatnonzero(K[gs:ge] < k).tolist():
            rank = np.append(np.cumsum(live[:, i]) - 1, -1)  # rank[-1] == -1
            lab = raw.copy() if lab is raw else lab
            lab[:, gs + i] = rank[raw[:, gs + i]]
    return lab, K


def _first_scores(
    data: _Weighted | _Gram, st: _State, first: tuple[_Ints, _Ints]
) -> tuple[_Ints, _Floats, _Floats]:
    """Best clusters and scores of the first update, once per distinct start.

    ``first = (rep, inv)``: the problems ``rep`` (sorted by ``d``, ``K``)
    stand for every distinct (weights, initial partition) pair, ``inv[b]`` is
    problem ``b``'s; the first update of ``U`` and the scores do not depend
    on the penalty, so the problems of a pair differ only from the first
    ``V`` on. ``V'V`` counts every member of an initial cluster (screened
    or not). Returns ``best``, ``s_best`` and the squared norm of each
    feature's best latent variable (all ``p x problems``).
    """
    rep, inv = first
    d, K, size0 = st.d[rep], st.K[rep], st.size0[rep]
    lay = _layout(d, K)
    bb, kk = np.nonzero(size0 > 0)
    ss = np.empty(lay.n_rows)
    ss[lay.base[bb] + kk * lay.stride[bb]] = size0[bb, kk]
    best, s_best, u_norm2 = _scores(data, d, st.lab[:, rep], st.v[:, rep], lay, ss)
    rows = best * lay.stride + lay.base
    return best[:, inv], s_best[:, inv], u_norm2[rows][:, inv]


def _step(
    data: _Weighted | _Gram, st: _State, first: tuple[_Ints, _Ints] | None
) -> _Update:
    """One update of ``U`` then ``V`` of every active problem.

    ``first`` is given for the first update (see :func:`_first_scores`).
    """
    lay = _layout(st.d, st.K)
    if first is not None:
        best, s_best, u_best = _first_scores(data, st, first)
        st.lam_max = np.maximum(s_best.max(axis=0), 0.0)
    else:
        best, s_best, u_norm2 = _scores(data, st.d, st.lab, st.v, lay)
        u_best = u_norm2[best * lay.stride + lay.base]
    v = s_best - st.lam
    sel = v > _AT_PENALTY * st.lam
    v[~sel] = 0.0
    raw = np.where(sel, best, -1)
    rows = best * lay.stride + lay.base
    h = 2.0 * (data.n - 1)
    J = (
        data.norm2[st.d] / h
        - np.einsum("jb,jb->b", v, s_best)
        + np.einsum("jb,jb,jb->b", v, v, u_best) / h
        + st.lam * v.sum(axis=0)
    )
    fixed = np.all(raw == st.lab, axis=0)
    i = np.flatnonzero(fixed)
    fixed[i] = np.all(np.abs(v[:, i] - st.v[:, i]) <= 1e-12 * np.abs(st.v[:, i]), 0)
    lab, K = _compact_batch(raw, sel, rows, lay)
    return _Update(lab, v, K, J, fixed)


class _Log:
    """Per-iteration records of a chunk's problems (rows: iterations).

    ``keys`` hash a state exactly: the fingerprint of ``(labels, v)`` is a
    wrapping integer sum of their bits times fixed random odd keys, the same
    whatever order numpy sums in; a state whose fingerprint occurred before
    is a revisited state (a cycle; collisions have probability ``2**-63``).
    """

    def __init__(self, n_problems: int, p: int, history: bool) -> None:
        keys = np.random.default_rng(0).integers(0, 2**63, size=(2, p), dtype=np.uint64)
        self.keys = keys | np.uint64(1)
        self.seen = np.zeros((8, n_problems), dtype=np.uint64)
        self.J = np.full((8, n_problems), np.nan) if history else None

    def _grow(self, it: int) -> None:
        if it == self.seen.shape[0]:
            self.seen = np.vstack([self.seen, np.zeros_like(self.seen)])
            if self.J is not None:
                self.J = np.vstack([self.J, np.full_like(self.J, np.nan)])

    def revisited(self, pid: _Ints, up: _Update, it: int) -> NDArray[np.bool_]:
        """Record the new states; return which were seen before."""
        self._grow(it)
        fp = (up.lab.view(np.uint64) * self.keys[0][:, None]).sum(axis=0)
        fp += (up.v.view(np.uint64) * self.keys[1][:, None]).sum(axis=0)
        again = np.any(self.seen[:it, pid] == fp, axis=0)
        self.seen[it, pid] = fp
        if self.J is not None:
            self.J[it, pid] = up.J
        return again


def _decide(
    st: _State, up: _Update, log: _Log, it: int, max_iter: int, tol: float
) -> _Ints:
    """Return the stopping reason of each active problem after iteration ``it``."""
    reason = np.full(st.K.size, _RUNNING, dtype=np.intp)
    if it > 0:
        st.rel = np.abs(st.J - up.J) / np.maximum(np.abs(st.J), np.finfo(float).tiny)
        reason[st.rel < tol] = _TOL
        reason[(reason == _RUNNING) & up.fixed] = _FIXED
    again = log.revisited(st.pid, up, it)
    reason[(reason == _RUNNING) & again] = _CYCLE
    if it + 1 < max_iter:
        empty = (reason == _RUNNING) & (up.K == 0)
        reason[empty] = _EMPTY
        st.rel[empty] = 0.0
    else:
        reason[reason == _RUNNING] = _MAX_ITER
    return reason


def _advance(
    st: _State,
    up: _Update,
    reason: _Ints,
    out: BatchResult,
    at: tuple[_Ints, _Ints],
    it: int,
) -> _State:
    """Record the problems that stopped; return the others, sorted by (d, K).

    ``at = (ids, cols)``: the chunk's problems and features in ``out``.
    """
    ids, cols = at
    done = np.flatnonzero(reason != _RUNNING)
    if done.size:
        pid = ids[st.pid[done]]
        out.labels[np.ix_(pid, cols)] = up.lab[:, done].T
        out.v[np.ix_(pid, cols)] = up.v[:, done].T
        out.objective[pid] = up.J[done]
        out.n_iter[pid] = it + 1
        out.reason[pid] = reason[done]
        out.rel_change[pid] = st.rel[done]
        out.lam_max[pid] = st.lam_max[done]
    keep = np.flatnonzero(reason == _RUNNING)
    order = keep[np.lexsort((up.K[keep], st.d[keep]))]
    kept = order.size == reason.size and bool(np.all(order[1:] > order[:-1]))
    return _State(
        st.pid[order],
        st.d[order],
        st.lam[order],
        up.K[order],
        up.lab if kept else up.lab[:, order],  # no copy while nothing moves
        up.v if kept else up.v[:, order],
        up.J[order],
        st.rel[order],
        st.lam_max[order],
        st.size0,  # only read by the first update
    )


def _solve_chunk(
    data: _Weighted | _Gram,
    lab0: _Ints,
    size0: _Floats,
    start: _Ints,
    d: _Ints,
    lam: _Floats,
    at: tuple[_Ints, _Ints],
    out: BatchResult,
    max_iter: int,
    tol: float,
    history: bool,
) -> NDArray[np.float64] | None:
    """Solve the problems of a chunk; ``lab0`` is (chunk features, problems).

    ``size0`` (problems x clusters) are the sizes of the initial clusters
    over all features (see :func:`_restrict`); ``start`` identifies the
    initial partition of each problem (the first update is computed once per
    distinct weights and start).

    ``at = (ids, cols)`` places the chunk's problems and features in ``out``
    (``cols``: columns of ``out.labels``); when the chunk leaves features
    out (screened: zero weight), no problem is
    "fixed" after the first update, as the full problem's is not (its
    zero-weight features leave their clusters then).

    Returns the objective history (iterations x problems) when recorded.
    """
    screened = at[1].size < out.n_features
    K0 = np.count_nonzero(size0, axis=1)
    B = K0.size
    order = np.lexsort((K0, d))
    nan = np.full(B, np.nan)
    st = _State(
        np.arange(B)[order],
        d[order],
        lam[order],
        K0[order],
        lab0[:, order],
        np.ones(lab0.shape),
        nan,
        nan.copy(),
        nan.copy(),
        size0[order],
    )
    # one first update per distinct (weights, start), sorted by (d, K)
    _, rep, inv = np.unique(
        st.d * (int(start.max()) + 1) + start[order],
        return_index=True,
        return_inverse=True,
    )
    by_dk = np.lexsort((st.K[rep], st.d[rep]))
    pos = np.empty_like(by_dk)
    pos[by_dk] = np.arange(by_dk.size)
    first: tuple[_Ints, _Ints] | None = (rep[by_dk], pos[inv.ravel()])
    log = _Log(B, lab0.shape[0], history)
    for it in range(max_iter):
        if st.K.size == 0:
            break
        up = _step(data, st, first)
        first = None
        if it == 0 and screened:
            up.fixed[:] = False
        st = _advance(st, up, _decide(st, up, log, it, max_iter, tol), out, at, it)
    return log.J


def _chunks(
    W: _Floats, weight_idx: _Ints, K0: _Ints, n: int, budget: int
) -> list[tuple[_Ints, _Ints]]:
    """Group the problems by the support of their weights; bound the memory.

    Exact screening: a feature with ``w_j = 0`` scores ``s_jk = 0`` in every
    cluster, so it is never selected and, being a zero column of ``X W``,
    never moves a latent variable. The problems whose weight vectors have the
    same non-zero entries ``cols`` form a group that runs on those columns
    only; a group is split, by weight vector, into chunks of bounded memory.
    Returns ``(cols, problems)`` pairs. Cost of a chunk on ``p = cols.size``
    features: ``K (p + 3n) + 25 p`` floats per problem, ``2 n p`` per weight
    vector.
    """
    supports: list[_Ints] = []
    group = np.full(W.shape[0], -1, dtype=np.intp)
    for d in np.unique(weight_idx).tolist():
        cols = np.flatnonzero(W[d])
        same = [g for g, c in enumerate(supports) if np.array_equal(c, cols)]
        group[d] = same[0] if same else len(supports)
        if not same:
            supports.append(cols)
    budget = max(budget - 16 * n * W.shape[1], 1)
    chunks = []
    for g, cols in enumerate(supports):
        p = cols.size
        mine = np.flatnonzero(group[weight_idx] == g)
        order = mine[np.argsort(weight_idx[mine], kind="stable")]
        first = np.ones(order.size, dtype=bool)
        first[1:] = np.diff(weight_idx[order]) != 0
        cum = np.cumsum(8 * (K0[order] * (p + 3 * n) + 25 * p + first * 2 * n * p))
        start = 0
        while start < order.size:
            before = cum[start - 1] if start else 0
            stop = int(np.searchsorted(cum, before + budget, side="right"))
            chunks.append((cols, order[start : max(stop, start + 1)]))
            start = max(stop, start + 1)
    return chunks


def _restrict(labels0: _Ints, init_idx: _Ints, cols: _Ints) -> tuple[_Ints, _Floats]:
    """Restrict the initial partitions to ``cols`` (labels: cols x problems).

    A partition drawn over all features, restricted to ``cols``: a cluster
    left without members is dropped (having only zero-weight members, it
    would empty after one update), the others keep their order. Also returns
    the sizes of the kept clusters over all features (problems x clusters,
    0-padded): the first ``V'V``, which counts the zero-weight members.
    """
    inits, inv = np.unique(init_idx, return_inverse=True)
    lab = np.empty((inits.size, cols.size), dtype=np.intp)
    sizes = []
    for r, i in enumerate(inits.tolist()):
        lab[r] = _compact(labels0[i, cols])[0]
        full = np.bincount(labels0[i])
        sizes.append(full[np.unique(labels0[i, cols])])
    size0 = np.zeros((inits.size, max(s.size for s in sizes)))
    for r, s in enumerate(sizes):
        size0[r, : s.size] = s
    return lab[inv.ravel()].T, size0[inv.ravel()]


def _no_support(out: BatchResult, ids: _Ints, max_iter: int) -> None:
    """Record problems whose weights are all zero: nothing selected at once.

    As the full problem's first update: every score is 0, so ``V = 0``,
    ``lam_max = 0`` and the objective is 0; it stops as "empty" (or on
    ``max_iter=1``).
    """
    out.objective[ids] = 0.0
    out.n_iter[ids] = 1
    out.lam_max[ids] = 0.0
    out.reason[ids] = _EMPTY if max_iter > 1 else _MAX_ITER
    out.rel_change[ids] = 0.0 if max_iter > 1 else np.nan


def _solve(
    Xs: _Floats,
    W: _Floats,
    labels0: _Ints,
    K0: _Ints,
    widx: _Ints,
    iidx: _Ints,
    lam: _Floats,
    *,
    max_iter: int,
    tol: float,
    max_memory: int = 2**30,
    history: bool = False,
    compact: bool = False,
) -> BatchResult:
    """Run the engine on validated input; ``labels0`` are compacted (inits x p)."""
    (n, p), B = Xs.shape, lam.size
    chunks = _chunks(W, widx, K0[iidx], n, max_memory)
    features = np.arange(p)
    if compact:
        features = np.unique(np.concatenate([cols for cols, _ in chunks] + [[]]))
        features = features.astype(np.intp)
    # With no more features than samples, the scores come from the features'
    # cross-products (computed once), not from n-long latent variables.
    prod = _products(Xs) if p <= n and any(c.size for c, _ in chunks) else None
    records: list[tuple[_Ints, _Floats]] = []
    out = BatchResult(
        np.full((B, features.size), -1, dtype=np.intp),
        np.zeros((B, features.size)),
        np.full(B, np.nan),
        np.zeros(B, dtype=np.intp),
        np.zeros(B, dtype=bool),
        np.full(B, _MAX_ITER),
        np.full(B, np.nan),
        np.full(B, np.nan),
        None,
        features,
        p,
    )
    for cols, chunk in chunks:
        if cols.size == 0:
            _no_support(out, chunk, max_iter)
            records.append((chunk, np.zeros((1, chunk.size))))
            continue
        used, d = np.unique(widx[chunk], return_inverse=True)
        lab0, size0 = _restrict(labels0, iidx[chunk], cols)
        Wc = W[used] if cols.size == p else W[used][:, cols]
        if prod is not None:
            data: _Weighted | _Gram = _gram(prod, cols, Wc, n)
        else:
            data = _weighted(Xs if cols.size == p else Xs[:, cols], Wc)
        J = _solve_chunk(
            data,
            lab0,
            size0,
            iidx[chunk],
            d,
            lam[chunk],
            (chunk, np.searchsorted(features, cols)),
            out,
            max_iter,
            tol,
            history,
        )
        if J is not None:
            records.append((chunk, J))
    return out._replace(
        converged=np.isin(out.reason, (_TOL, _FIXED, _EMPTY)),
        reason=np.asarray(_REASONS)[out.reason],
        history=_history(records, B, int(out.n_iter.max(initial=0)))
        if history
        else None,
    )


def _history(records: list[tuple[_Ints, _Floats]], B: int, width: int) -> _Floats:
    """Assemble the chunks' objective records (iterations x problems).

    Allocated only after the run, as wide as the most iterations run, so
    that a large ``max_iter`` costs nothing unless it is used.
    """
    hist = np.full((B, width), np.nan)
    for chunk, J in records:
        rows = min(J.shape[0], width)
        hist[chunk, :rows] = J[:rows].T
    return hist


def _inputs(
    Xs: ArrayLike,
    W: ArrayLike,
    inits: Sequence[ArrayLike] | ArrayLike,
    check_input: bool,
) -> tuple[_Floats, _Floats, _Ints, _Ints]:
    """Return the data, the weights, the compacted initial labels and their K.

    The labels are an ``(n_inits, p)`` array. With ``check_input`` the data,
    the weights and every initial partition are validated; without, the
    caller vouches for them (it validated them once, as the restart driver's
    callers and :func:`vcpcr.sos_nmf` do).
    """
    if check_input:
        Xs, W = _check_data(Xs, W)
        p = Xs.shape[1]
        inits = [
            check_labels(init, p, f"inits[{i}]")
            for i, init in enumerate(inits)  # type: ignore[arg-type]
        ]
    X = np.asarray(Xs, dtype=np.float64)
    Wa = np.atleast_2d(np.asarray(W, dtype=np.float64))
    rows = [np.asarray(init, dtype=np.intp) for init in inits]  # type: ignore[union-attr]
    compacted = [_compact(row) for row in rows]
    labels = np.empty((len(compacted), X.shape[1]), dtype=np.intp)
    K = np.empty(len(compacted), dtype=np.intp)
    for i, (lab, k) in enumerate(compacted):
        labels[i], K[i] = lab, k
    return X, Wa, labels, K


def _check_problems(
    weight_idx: ArrayLike,
    init_idx: ArrayLike,
    lams: ArrayLike,
    n_weights: int,
    n_inits: int,
) -> None:
    """Validate the problems: indices in range, one entry each, penalties >= 0."""
    lam = check_array(lams, "lams", ensure_2d=False, min_samples=0)
    widx = _check_index(weight_idx, "weight_idx", n_weights, "W")
    iidx = _check_index(init_idx, "init_idx", n_inits, "inits")
    if not widx.size == iidx.size == lam.size:
        raise ValueError(
            f"weight_idx, init_idx and lams must have one entry per problem; got "
            f"lengths {widx.size}, {iidx.size} and {lam.size}."
        )
    if lam.size and lam.min() < 0:
        raise ValueError(f"lams must be >= 0; got minimum {lam.min()!r}.")


def _check_index(idx: ArrayLike, name: str, size: int, what: str) -> _Ints:
    """Validate a 1-d integer index array with values in ``0..size-1``."""
    arr = np.asarray(idx)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-d; got an array of shape {arr.shape}.")
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers; got dtype {arr.dtype}.")
    if arr.size and (arr.min() < 0 or arr.max() >= size):
        raise ValueError(
            f"{name} must lie in 0..{size - 1} ({what} has {size} entries); got "
            f"values in {arr.min()}..{arr.max()}."
        )
    return arr.astype(np.intp)


def _check_data(Xs: ArrayLike, W: ArrayLike) -> tuple[_Floats, _Floats]:
    """Validate the standardized data and the weight matrix."""
    X = check_array(Xs, "Xs", min_samples=2)
    Wa = check_array(np.atleast_2d(W), "W")
    if Wa.shape[1] != X.shape[1]:
        raise ValueError(
            f"W has {Wa.shape[1]} columns but Xs has {X.shape[1]}; W must have "
            f"shape (n_weights, n_features), one weight vector per row."
        )
    return X, Wa


def batched_sos_nmf(
    Xs: ArrayLike,
    W: ArrayLike,
    inits: Sequence[ArrayLike] | ArrayLike,
    weight_idx: ArrayLike,
    init_idx: ArrayLike,
    lams: ArrayLike,
    *,
    max_iter: int = 500,
    tol: float = 1e-4,
    max_memory: int = 2**30,
    history: bool = False,
    compact: bool = False,
    check_input: bool = True,
) -> BatchResult:
    r"""Solve many weighted SOS-NMF problems on the same data at once.

    Problem ``b`` is :func:`vcpcr.sos_nmf` on ``Xs`` with weights
    ``w = W[weight_idx[b]]``, initial partition ``inits[init_idx[b]]`` and
    absolute penalty ``lams[b]``; all problems advance together.

    Parameters
    ----------
    Xs : array-like of shape (n_samples, n_features)
        Standardized data (the caller standardizes once per fold).
    W : array-like of shape (n_weights, n_features)
        Weight vectors, one per row (a 1-d array is one weight vector).
    inits : sequence of array-like of shape (n_features,)
        Initial partitions: integer labels ``0..K_i-1`` (``K_i`` may differ;
        see :func:`vcpcr._checks.check_labels`).
    weight_idx, init_idx : array-like of int of shape (n_problems,)
        Row of ``W`` and initial partition of each problem.
    lams : array-like of shape (n_problems,)
        Absolute penalty ``lambda >= 0`` of each problem.
    max_iter : int, default=500
        Maximum number of iterations of each problem.
    tol : float, default=1e-4
        Stop a problem when its objective's relative change is below ``tol``.
    max_memory : int, default=2**30
        Bytes for the working arrays (solved in chunks that fit), not outputs.
    history : bool, default=False
        Also return the objective after every iteration of every problem.
    compact : bool, default=False
        Return ``labels`` and ``v`` only of the features with a non-zero
        weight in some row of ``W`` (``BatchResult.features``; the others are
        never selected); ``BatchResult.dense_labels`` / ``dense_v`` give
        chosen problems over all features.
    check_input : bool, default=True
        Validate the input. ``False`` skips every check (as scikit-learn's
        ``check_input``): for callers that validated the data, the weights
        and the initial partitions once already (the restart driver,
        :func:`vcpcr.sos_nmf`).

    Returns
    -------
    BatchResult
        ``labels``, ``v``, ``objective``, ``n_iter``, ``converged``,
        ``reason``, ``rel_change``, ``lam_max`` and ``history`` (None unless
        asked for) of every problem.

    Raises
    ------
    ValueError
        For non-finite data, mismatched shapes or lengths, negative labels,
        indices out of range or negative penalties.
    TypeError
        For non-integer labels or indices.

    See Also
    --------
    initial_lambda_max : The penalties that select nothing.
    vcpcr.sos_nmf : One problem, with restarts and warnings.

    Notes
    -----
    Problem ``b`` minimizes :math:`\frac{1}{2(n-1)} \lVert X W_b - U V^\top
    \rVert_F^2 + \lambda_b \sum_j \lVert v_j \rVert_1` with ``lams[b]`` =
    :math:`\lambda_b` and ``W[weight_idx[b]]`` the diagonal of :math:`W_b`.
    Never warns: ``reason`` tells which problems hit ``max_iter`` or a cycle.

    Examples
    --------
    Two blocks of three features, one start, two penalties:

    >>> import numpy as np
    >>> from vcpcr._scaling import standardize
    >>> from vcpcr._solvers.sos_nmf import batched_sos_nmf
    >>> from vcpcr.simulate import make_block_data
    >>> data = make_block_data(30, [3, 3], [1.0, -1.0], rho=0.9, random_state=0)
    >>> Xs = standardize(data.X)[0]
    >>> res = batched_sos_nmf(Xs, np.ones(6), [[0, 1, 0, 1, 0, 1]],
    ...                       [0, 0], [0, 0], [0.1, 2.0])
    >>> res.labels.tolist()
    [[0, 0, 0, 1, 1, 1], [-1, -1, -1, -1, -1, -1]]
    >>> res.reason.tolist()
    ['tol', 'empty']
    """
    X, Wa, labels0, K0 = _inputs(Xs, W, inits, check_input)
    if check_input:
        _check_problems(weight_idx, init_idx, lams, Wa.shape[0], K0.size)
        check_scalar(max_iter, "max_iter", numbers.Integral, owner=_BATCH, min_val=1)
        check_scalar(tol, "tol", numbers.Real, owner=_BATCH, min_val=0.0)
        check_scalar(
            max_memory, "max_memory", numbers.Integral, owner=_BATCH, min_val=1
        )
    return _solve(
        X,
        Wa,
        labels0,
        K0,
        np.asarray(weight_idx).astype(np.intp),
        np.asarray(init_idx).astype(np.intp),
        np.asarray(lams, dtype=np.float64),
        max_iter=int(max_iter),
        tol=float(tol),
        max_memory=int(max_memory),
        history=bool(history),
        compact=bool(compact),
    )


def initial_lambda_max(
    Xs: ArrayLike,
    W: ArrayLike,
    inits: Sequence[ArrayLike] | ArrayLike,
    *,
    max_memory: int = 2**30,
    check_input: bool = True,
) -> NDArray[np.float64]:
    r"""Penalty that selects nothing, for every weight vector and partition.

    ``lam_max[d, i]`` is :func:`vcpcr.lambda_max` with weights ``W[d]`` and
    initial partition ``inits[i]``, for all pairs at once (the sparse product
    and the GEMMs of one batched iteration).

    Parameters
    ----------
    Xs : array-like of shape (n_samples, n_features)
        Standardized data.
    W : array-like of shape (n_weights, n_features)
        Weight vectors, one per row (a 1-d array is one weight vector).
    inits : sequence of array-like of shape (n_features,)
        Initial partitions (integer labels ``0..K_i-1``).
    max_memory : int, default=2**30
        Bytes the working arrays may use.
    check_input : bool, default=True
        Validate the input (see :func:`batched_sos_nmf`).

    Returns
    -------
    ndarray of shape (n_weights, n_inits)
        The penalties ``lam_max >= 0``.

    Raises
    ------
    ValueError
        For non-finite data, mismatched shapes or negative labels.
    TypeError
        For non-integer labels.

    See Also
    --------
    batched_sos_nmf : The batched solver.

    Notes
    -----
    Tuning uses ``lam = lam_ratio * lam_max`` (max over one ``K``'s starts).

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr import lambda_max
    >>> from vcpcr._solvers.sos_nmf import initial_lambda_max
    >>> rng = np.random.default_rng(0)
    >>> Xs, W = rng.normal(size=(20, 6)), rng.normal(size=(2, 6))
    >>> inits = [[0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2]]
    >>> lm = initial_lambda_max(Xs, W, inits)
    >>> one = lambda_max(Xs, inits[0], weights=W[1], standardize=False)
    >>> lm.shape, bool(np.isclose(lm[1, 0], one, rtol=1e-12, atol=0))
    ((2, 2), True)
    """
    X, Wa, labels0, K0 = _inputs(Xs, W, inits, check_input)
    widx, iidx = np.divmod(np.arange(Wa.shape[0] * K0.size), K0.size)
    res = _solve(
        X,
        Wa,
        labels0,
        K0,
        widx,
        iidx,
        np.zeros(widx.size),
        max_iter=1,
        tol=0.0,
        max_memory=int(max_memory),
        compact=True,
    )
    return res.lam_max.reshape(Wa.shape[0], K0.size)


def latent_variables(Xs: _Floats, w: _Floats, labels: _Ints, v: _Floats) -> _Floats:
    """Return the unit-variance latent variables (n x K) of one solution."""
    K = int(labels.max(initial=-1)) + 1
    if K == 0:
        return np.empty((Xs.shape[0], 0))
    lay = _layout(np.zeros(1, dtype=np.intp), np.array([K]))
    one = np.zeros(1, dtype=np.intp)
    # Only the selected features enter (no n x p weighted copy of Xs).
    sel = np.flatnonzero(labels >= 0)
    data = _weighted(Xs[:, sel], w[None, sel])
    return _latent(data, one, labels[sel, None], v[sel, None], lay).T
