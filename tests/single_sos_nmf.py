"""The former single-problem SOS-NMF loop, kept as a test oracle (#9).

Until #9 the engine's ``_sos_nmf_single`` ran one problem at a time; the
package now runs every problem through the batched engine
(:func:`vcpcr._solvers.sos_nmf.batched_sos_nmf`, a single problem being a batch of
one). This copy of the loop is the second reference beside
``naive_sos_nmf.py``: same operations on a compressed ``V`` (a label and a
membership per variable), written for one problem and read top to bottom.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray


def _compact(labels):
    """Relabel the non-empty clusters as ``0..K'-1`` (in order); -1 stays -1."""
    used = np.unique(labels[labels >= 0])
    lookup = np.full(max(int(labels.max(initial=-1)) + 1, 1), -1, dtype=np.intp)
    lookup[used] = np.arange(used.size)
    out = np.where(labels >= 0, lookup[np.maximum(labels, 0)], -1).astype(np.intp)
    return out, int(used.size)


class SingleResult(NamedTuple):
    V: np.ndarray
    U: np.ndarray
    labels: np.ndarray
    lam: float
    lam_max: float
    objective: np.ndarray
    n_iter: int
    converged: bool


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
    """Return labels, memberships and best scores for the score matrix ``S``.

    A score within 1e-12 (relative) of the penalty is at the penalty, as in
    the engine: ``lam = lam_max`` computed by another GEMM (the engine's on
    the screened columns) may be one ulp below this loop's best score.
    """
    best = np.argmax(S, axis=1)
    s_best = np.take_along_axis(S, best[:, None], axis=1)[:, 0]
    v = np.maximum(s_best - lam, 0.0)
    v[v <= 1e-12 * lam] = 0.0
    labels = np.where(v > 0, best, -1).astype(np.intp)
    return labels, v, s_best


class _Status(NamedTuple):
    """How a single run stopped, and the last relative change of the objective.

    ``reason`` is one of "tol", "fixed", "cycle", "max_iter" or "empty".
    """

    reason: str
    rel_change: float


def sos_nmf_single(
    XW: NDArray[np.float64],
    init: NDArray[np.intp],
    *,
    lam: float | None = None,
    lam_ratio: float | None = None,
    max_iter: int = 500,
    tol: float = 1e-4,
) -> tuple[SingleResult, _Status]:
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
    result = SingleResult(
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
