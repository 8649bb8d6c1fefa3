"""Batched weighted SOS-NMF: a whole tuning grid solved together (numpy/scipy only).

A fold's SOS-NMF problems advance together (``X W V`` is one sparse product,
the scores GEMMs, the assignment a vectorized argmax), each repeating the
floating-point operations of :func:`vcpcr._sos_nmf._sos_nmf_single` in order.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from vcpcr._sos_nmf import _compact
from vcpcr._validation import check_array, check_scalar

__all__ = ["BatchResult", "batched_sos_nmf", "initial_lambda_max"]

_Floats = NDArray[np.float64]
_Ints = NDArray[np.intp]

_OWNER = "batched_sos_nmf"
_REASONS = ("tol", "fixed", "cycle", "max_iter", "empty")
_RUNNING, _TOL, _FIXED, _CYCLE, _MAX_ITER, _EMPTY = -1, 0, 1, 2, 3, 4
# The objective is non-increasing, hence constant along a cycle of states: hash
# states once its change is at rounding level (1e-6 of its terms: margin 1e9).
_CYCLE_GUARD = 1e-6


class BatchResult(NamedTuple):
    """Result of :func:`batched_sos_nmf`, one row or entry per problem.

    Attributes
    ----------
    labels : ndarray of shape (n_problems, n_features)
        Cluster of each variable, compacted to ``0..K'-1``; -1 = unselected.
    v : ndarray of shape (n_problems, n_features)
        Membership of each variable (the non-zero of its row of ``V``, or 0).
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
    """

    labels: NDArray[np.intp]
    v: NDArray[np.float64]
    objective: NDArray[np.float64]
    n_iter: NDArray[np.intp]
    converged: NDArray[np.bool_]
    reason: NDArray[Any]
    rel_change: NDArray[np.float64]
    lam_max: NDArray[np.float64]


class _Fold(NamedTuple):
    """``XW[d] = Xs * W[d]`` as the loop forms it; ``XWT[j * D + d] = XW[d][:, j]``."""

    XW: _Floats
    XWT: _Floats
    norm2: _Floats
    col_sd: _Floats
    sd_norm: _Floats


def _make_fold(Xs: _Floats, W: _Floats) -> _Fold:
    """Precompute the weighted data of every row of ``W``."""
    XW = Xs[None, :, :] * W[:, None, :]
    XWT = np.ascontiguousarray(XW.transpose(2, 0, 1)).reshape(-1, Xs.shape[0])
    norm2 = np.array([float(np.einsum("ij,ij->", x, x)) for x in XW])
    col_sd = np.stack([x.std(axis=0, ddof=1) for x in XW], axis=1)
    return _Fold(XW, XWT, norm2, col_sd.reshape(-1), np.sqrt((col_sd**2).sum(0)))


class _Layout(NamedTuple):
    """Columns: run ``(start, stop, K, weight, c0)`` owns ``c0 + k g + i``."""

    groups: list[tuple[int, int, int, int, int]]
    base: _Ints
    stride: _Ints
    n_cols: int


def _layout(d: _Ints, K: _Ints) -> _Layout:
    """Column layout of problems sorted by (``d``, ``K``)."""
    edges = (np.flatnonzero((np.diff(d) != 0) | (np.diff(K) != 0)) + 1).tolist()
    base, stride = np.empty((2, K.size), dtype=np.intp)
    groups, c0 = [], 0
    for gs, ge in zip([0, *edges], [*edges, K.size], strict=True):
        k, g = int(K[gs]), ge - gs
        groups.append((gs, ge, k, int(d[gs]), c0))
        base[gs:ge] = c0 + np.arange(g)
        stride[gs:ge] = g
        c0 += k * g
    return _Layout(groups, base, stride, c0)


def _latent_batch(fold: _Fold, st: _State, lay: _Layout, Ut: _Floats) -> None:
    """Fill ``Ut`` (columns x n) with the latent variables, as ``_latent``.

    The CSC entries come by variable, then problem: rows sum in variable order.
    """
    p, D, sel = st.lab.shape[0], fold.norm2.size, st.lab >= 0
    counts = np.zeros((p, D), dtype=np.intp)
    for gs, ge, _, dd, _ in lay.groups:
        counts[:, dd] += np.count_nonzero(sel[:, gs:ge], axis=1)
    indptr = np.concatenate(([0], np.cumsum(counts)))
    rows = st.lab * lay.stride
    rows += lay.base
    rows, vals = rows[sel], st.v[sel]
    G = sp.csc_array((vals, rows, indptr), shape=(lay.n_cols, fold.XWT.shape[0]))
    Ut[...] = G @ fold.XWT
    ss = np.bincount(rows, vals**2, minlength=lay.n_cols)
    Ut /= ss[:, None]
    Ut -= Ut.mean(axis=1, keepdims=True)
    sd = Ut.std(axis=1, ddof=1)
    # the loop's guard sd <= 1e-10 sum(v sd_xw) / ss, where Cauchy-Schwarz allows
    ub = fold.sd_norm[np.repeat(st.d, st.K)] / np.sqrt(ss)  # a run shares one d
    cand = np.flatnonzero(sd <= 1.000001e-10 * ub)
    if cand.size:
        cols = (np.arange(p)[:, None] * D + st.d)[sel]
        on = np.isin(rows, cand)
        bound = np.bincount(
            rows[on], vals[on] * fold.col_sd[cols[on]], minlength=lay.n_cols
        )
        zero = cand[sd[cand] <= 1e-10 * (bound[cand] / ss[cand])]
        Ut[zero] = 0.0
        sd[zero] = 1.0
    Ut /= sd[:, None]


def _argmax(S3: _Floats, best: _Ints, s_best: _Floats) -> None:
    """First argmax and maximum over axis 1 of ``S3`` (p x K x problems)."""
    np.maximum.reduce(S3, axis=1, out=s_best)
    # best = number of leading clusters whose score is not the maximum
    not_found = S3[:, 0, :] != s_best
    best[...] = not_found
    for k in range(1, S3.shape[1] - 1):
        not_found &= S3[:, k, :] != s_best
        best += not_found


def _scores_best(
    fold: _Fold, Ut: _Floats, lay: _Layout, p: int, buf: NDArray[Any]
) -> tuple[_Ints, _Floats]:
    """Best cluster and score ``w_j cor(u_k, x_j)`` of every variable.

    One GEMM per run, widened to a multiple of 8 columns with spare rows of
    ``Ut``: OpenBLAS's edge kernels round unlike the loop's small calls, its
    inner kernel does not. ``K == 1`` takes numpy's GEMV per problem.
    """
    best = np.empty((p, lay.base.size), dtype=np.intp)
    s_best = np.empty((p, lay.base.size))
    for gs, ge, K, dd, c0 in lay.groups:
        N, A = K * (ge - gs), fold.XW[dd].T
        S = buf[: p * ((N + 7) // 8 * 8)].reshape(p, -1)
        if K == 1:
            for c in range(N):
                np.matmul(A, Ut[c0 + c : c0 + c + 1].T, out=S[:, c : c + 1])
        else:
            np.matmul(A, Ut[c0 : c0 + S.shape[1]].T, out=S)
        S /= Ut.shape[1] - 1
        _argmax(S[:, :N].reshape(p, K, ge - gs), best[:, gs:ge], s_best[:, gs:ge])
    return best, s_best


@dataclass
class _State:
    """Active problems (by weight, then ``K``); ``old``: previous (lab, v, column)."""

    pid: _Ints
    d: _Ints
    lam: _Floats
    K: _Ints
    lab: _Ints
    v: _Floats
    J: _Floats
    rel: _Floats
    lam_max: _Floats
    old: tuple[_Ints, _Floats, _Ints]
    seen: dict[int, set[bytes]] = field(default_factory=dict)


class _Update(NamedTuple):
    """New state; ``scale`` bounds the terms of ``J``, ``same`` = labels kept."""

    lab: _Ints
    v: _Floats
    K: _Ints
    J: _Floats
    scale: _Floats
    same: NDArray[np.bool_]


def _compact_batch(
    raw: _Ints, sel: NDArray[np.bool_], cols: _Ints, lay: _Layout
) -> tuple[_Ints, _Ints]:
    """Compacted labels and number of non-empty clusters of each problem."""
    alive = np.zeros(lay.n_cols, dtype=bool)
    alive[cols[sel]] = True
    K = np.empty(lay.base.size, dtype=np.intp)
    lab = raw
    for gs, ge, k, _, c0 in lay.groups:
        live = alive[c0 : c0 + k * (ge - gs)].reshape(k, ge - gs)
        K[gs:ge] = live.sum(axis=0)
        for i in np.flatnonzero(K[gs:ge] < k).tolist():  # a cluster emptied
            rank = np.append(np.cumsum(live[:, i]) - 1, -1)
            lab = raw.copy() if lab is raw else lab
            lab[:, gs + i] = rank[raw[:, gs + i]]
    return lab, K


def _loop_objective(
    fold: _Fold, st: _State, lay: _Layout, Ut: _Floats, b: int,
    v: _Floats, s: _Floats, lab: _Ints,
) -> float:  # fmt: skip
    """Objective of problem ``b`` summed exactly as the loop sums it."""
    h = 2 * (Ut.shape[1] - 1)
    U = Ut[lay.base[b] + lay.stride[b] * np.arange(st.K[b])].T
    v, s, lab = np.ascontiguousarray(v[:, b]), np.ascontiguousarray(s[:, b]), lab[:, b]
    sel = lab >= 0
    quad = float(v[sel] ** 2 @ np.einsum("ij,ij->j", U, U)[lab[sel]])
    return fold.norm2[st.d[b]] / h - float(v @ s) + quad / h + st.lam[b] * v.sum()


def _step(fold: _Fold, st: _State, Ut: _Floats, buf: Any, it: int) -> _Update:
    """Run one iteration of every active problem."""
    p, n = st.lab.shape[0], Ut.shape[1]
    lay = _layout(st.d, st.K)
    _latent_batch(fold, st, lay, Ut[: lay.n_cols])
    best, s_best = _scores_best(fold, Ut, lay, p, buf)
    Ut = Ut[: lay.n_cols]
    u_norm2 = np.einsum("ci,ci->c", Ut, Ut)
    if it == 0:
        st.lam_max = np.maximum(s_best.max(axis=0), 0.0)
    new_v = np.maximum(s_best - st.lam, 0.0)
    sel = new_v > 0
    raw = np.where(sel, best, -1)
    cols = best * lay.stride
    cols += lay.base
    quad = np.einsum("jb,jb,jb->b", new_v, new_v, u_norm2[cols]) / (2 * (n - 1))
    fit = np.einsum("jb,jb->b", new_v, s_best)
    pen = st.lam * new_v.sum(axis=0)
    const = fold.norm2[st.d] / (2 * (n - 1))
    J, scale = const - fit + quad + pen, const + np.abs(fit) + quad + pen
    # J at rounding level (a perfect fit): rel is noise, so take the loop's noise
    for b in np.flatnonzero(np.abs(J) <= _CYCLE_GUARD * scale).tolist():
        J[b] = _loop_objective(fold, st, lay, Ut, b, new_v, s_best, raw)
    same = np.all(raw == st.lab, axis=0) if it > 0 else np.zeros(st.K.size, bool)
    lab, K = _compact_batch(raw, sel, cols, lay)
    return _Update(lab, new_v, K, J, scale, same)


def _cycles(st: _State, up: _Update, reason: _Ints, it: int) -> _Ints:
    """Flag the running problems whose new state was seen before (loop rule).

    Hashing starts, with the two previous states, once the objective is flat:
    on a cycle of states ``t'..it-1`` it is flat from ``t'+1``, so by ``t'+2``.
    """
    flat = np.abs(up.J - st.J) <= _CYCLE_GUARD * up.scale  # False at it == 0
    hashed = np.zeros(reason.size, dtype=bool)
    if st.seen:
        hashed[:] = [pid in st.seen for pid in st.pid.tolist()]
    for i in np.flatnonzero((reason == _RUNNING) & (flat | hashed)).tolist():
        seen = st.seen.setdefault(int(st.pid[i]), set())
        if not hashed[i]:  # keys as the loop's labels.tobytes() + v.tobytes()
            seen.add(st.lab[:, i].tobytes() + st.v[:, i].tobytes())
            lab_o, v_o, pos = st.old
            if it >= 2:
                seen.add(lab_o[:, pos[i]].tobytes() + v_o[:, pos[i]].tobytes())
        key = up.lab[:, i].tobytes() + up.v[:, i].tobytes()
        if key in seen:
            reason[i] = _CYCLE
        seen.add(key)
    return reason


def _decide(st: _State, up: _Update, it: int, max_iter: int, tol: float) -> _Ints:
    """Return the stopping reason of each active problem after iteration ``it``."""
    reason = np.full(st.K.size, _RUNNING, dtype=np.intp)
    if it > 0:
        st.rel = np.abs(st.J - up.J) / np.maximum(np.abs(st.J), np.finfo(float).tiny)
        reason[st.rel < tol] = _TOL
        # the loop's np.allclose(new_v, v, rtol=1e-12, atol=0), where needed
        i = np.flatnonzero((reason == _RUNNING) & up.same)
        dv = np.abs(up.v[:, i] - st.v[:, i]) <= 1e-12 * np.abs(st.v[:, i])
        reason[i[np.all(dv, axis=0)]] = _FIXED
    reason = _cycles(st, up, reason, it)
    if it + 1 < max_iter:
        empty = (reason == _RUNNING) & (up.K == 0)
        reason[empty] = _EMPTY
        st.rel[empty] = 0.0
    else:
        reason[reason == _RUNNING] = _MAX_ITER
    return reason


def _advance(
    st: _State, up: _Update, reason: _Ints, out: BatchResult, it: int
) -> _State:
    """Record the problems that stopped; return the state of the others."""
    done = np.flatnonzero(reason != _RUNNING)
    if done.size:
        pid = st.pid[done]
        out.labels[pid] = up.lab[:, done].T
        out.v[pid] = up.v[:, done].T
        out.objective[pid] = up.J[done]
        out.n_iter[pid] = it + 1
        out.reason[pid] = reason[done]
        out.rel_change[pid] = st.rel[done]
        out.lam_max[pid] = st.lam_max[done]
        for p in pid.tolist():
            st.seen.pop(p, None)
    keep = np.flatnonzero(reason == _RUNNING)
    order = keep[np.lexsort((up.K[keep], st.d[keep]))]
    same = order.size == st.K.size and bool(np.all(order == np.arange(order.size)))
    lab, v = (up.lab, up.v) if same else (up.lab[:, order], up.v[:, order])
    return _State(
        st.pid[order], st.d[order], st.lam[order], up.K[order], lab, v,
        up.J[order], st.rel[order], st.lam_max[order], (st.lab, st.v, order), st.seen,
    )  # fmt: skip


def _run_chunk(
    fold: _Fold, lab0: _Ints, K0: _Ints, d: _Ints,
    lam: _Floats, pid: _Ints, out: BatchResult,
    max_iter: int, tol: float,
) -> None:  # fmt: skip
    """Solve the problems of one chunk; ``lab0`` is (p, problems)."""
    order = np.lexsort((K0, d))
    nan, ones = np.full(order.size, np.nan), np.ones(lab0.shape)
    st = _State(
        pid[order], d[order], lam[order], K0[order], lab0[:, order], ones,
        nan, nan.copy(), nan.copy(), (lab0[:, order], ones, np.arange(order.size)),
    )  # fmt: skip
    Ut = np.zeros((int(K0.sum()) + 7, fold.XW.shape[1]))  # spare rows: padding
    buf = np.zeros(lab0.shape[0] * (int(np.bincount(d, K0).max()) + 7))  # scores
    for it in range(max_iter):
        if st.K.size == 0:
            break
        up = _step(fold, st, Ut, buf, it)
        st = _advance(st, up, _decide(st, up, it, max_iter, tol), out, it)


def _check_inits(inits: Sequence[ArrayLike] | ArrayLike, p: int) -> tuple[_Ints, _Ints]:
    """Compacted initial labels (n_inits x p) and their numbers of clusters."""
    rows = [np.asarray(init) for init in inits]  # type: ignore[union-attr]
    labels, K = np.empty((len(rows), p), np.intp), np.empty(len(rows), np.intp)
    for i, lab in enumerate(rows):
        if lab.shape != (p,):
            raise ValueError(
                f"inits[{i}] must hold one label per variable: expected shape "
                f"({p},), got {lab.shape}. Give a sequence of label vectors."
            )
        if lab.dtype.kind not in "iu":
            raise TypeError(f"inits[{i}] labels must be integers; got {lab.dtype}.")
        if lab.min() < 0:
            raise ValueError(f"inits[{i}] labels must be >= 0; got {lab.min()}.")
        labels[i], K[i] = _compact(lab.astype(np.intp))
    return labels, K


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


def _chunks(weight_idx: _Ints, K0: _Ints, n: int, p: int, budget: int) -> list[_Ints]:
    """Split the problems, sorted by weight, into chunks of bounded memory.

    Cost: ``K (p + 3n) + 25 p`` floats per problem, ``2 n p`` per weight vector.
    """
    order = np.argsort(weight_idx, kind="stable")
    first = np.ones(order.size, dtype=bool)
    first[1:] = np.diff(weight_idx[order]) != 0
    cum = np.cumsum(8 * (K0[order] * (p + 3 * n) + 25 * p + first * 2 * n * p))
    budget = max(budget - 16 * n * p, 1)
    chunks, start = [], 0
    while start < order.size:
        before = cum[start - 1] if start else 0
        stop = max(int(np.searchsorted(cum, before + budget, side="right")), start + 1)
        chunks.append(order[start:stop])
        start = stop
    return chunks


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
        Initial partitions: integer labels ``0..K_i-1`` (``K_i`` may differ).
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

    Returns
    -------
    BatchResult
        ``labels``, ``v``, ``objective``, ``n_iter``, ``converged``,
        ``reason``, ``rel_change`` and ``lam_max`` of every problem.

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
    >>> import numpy as np
    >>> from vcpcr._path import batched_sos_nmf
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(30, 2))
    >>> X = np.repeat(z, 3, axis=1) + 0.3 * rng.normal(size=(30, 6))
    >>> Xs = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    >>> res = batched_sos_nmf(Xs, np.ones(6), [[0, 1, 0, 1, 0, 1]],
    ...                       [0, 0], [0, 0], [0.1, 2.0])
    >>> res.labels.tolist()
    [[0, 0, 0, 1, 1, 1], [-1, -1, -1, -1, -1, -1]]
    >>> res.reason.tolist()
    ['tol', 'empty']
    """
    X, Wa = _check_data(Xs, W)
    n, p = X.shape
    labels0, K0 = _check_inits(inits, p)
    lam = check_array(lams, "lams", ensure_2d=False, min_samples=0)
    widx = _check_index(weight_idx, "weight_idx", Wa.shape[0], "W")
    iidx = _check_index(init_idx, "init_idx", K0.size, "inits")
    if not widx.size == iidx.size == lam.size:
        raise ValueError(
            f"weight_idx, init_idx and lams must have one entry per problem; got "
            f"lengths {widx.size}, {iidx.size} and {lam.size}."
        )
    if lam.size and lam.min() < 0:
        raise ValueError(f"lams must be >= 0; got minimum {lam.min()!r}.")
    check_scalar(max_iter, "max_iter", numbers.Integral, owner=_OWNER, min_val=1)
    check_scalar(tol, "tol", numbers.Real, owner=_OWNER, min_val=0.0)
    check_scalar(max_memory, "max_memory", numbers.Integral, owner=_OWNER, min_val=1)
    B, nan = lam.size, np.full(lam.size, np.nan)
    out = BatchResult(
        np.full((B, p), -1, dtype=np.intp), np.zeros((B, p)), nan,
        np.zeros(B, dtype=np.intp), np.zeros(B, dtype=bool),
        np.full(B, _MAX_ITER), nan.copy(), nan.copy(),
    )  # fmt: skip
    for chunk in _chunks(widx, K0[iidx], n, p, int(max_memory)):
        used, d = np.unique(widx[chunk], return_inverse=True)
        lab0, K = labels0[iidx[chunk]].T, K0[iidx[chunk]]
        fold = _make_fold(X, Wa[used])
        _run_chunk(fold, lab0, K, d, lam[chunk], chunk, out, max_iter, float(tol))
    return out._replace(
        converged=np.isin(out.reason, (_TOL, _FIXED, _EMPTY)),
        reason=np.asarray(_REASONS)[out.reason],
    )


def initial_lambda_max(
    Xs: ArrayLike,
    W: ArrayLike,
    inits: Sequence[ArrayLike] | ArrayLike,
    *,
    max_memory: int = 2**30,
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
    >>> from vcpcr._path import initial_lambda_max
    >>> rng = np.random.default_rng(0)
    >>> Xs, W = rng.normal(size=(20, 6)), rng.normal(size=(2, 6))
    >>> inits = [[0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2]]
    >>> lm = initial_lambda_max(Xs, W, inits)
    >>> one = lambda_max(Xs, inits[0], weights=W[1], standardize=False)
    >>> lm.shape, bool(np.isclose(lm[1, 0], one, rtol=1e-12, atol=0))
    ((2, 2), True)
    """
    D, n_inits = np.atleast_2d(W).shape[0], len(inits)  # type: ignore[arg-type]
    widx, iidx = np.divmod(np.arange(D * n_inits), n_inits)
    res = batched_sos_nmf(
        Xs, W, inits, widx, iidx, np.zeros(widx.size), max_iter=1,
        max_memory=max_memory,
    )  # fmt: skip
    return res.lam_max.reshape(D, n_inits)
