"""A deliberately plain transcription of the paper's Algorithm 1 (test reference).

Dense V, explicit loops over variables and clusters, correlations computed with
``np.corrcoef``-style formulas. Used only to check the fast solver.
"""

from __future__ import annotations

import numpy as np


def naive_sos_nmf(Xs, w, init, lam_ratio, max_iter=500, tol=1e-4):  # noqa: C901
    """Return (V, labels, lam, objective) following Algorithm 1 line by line."""
    n, p = Xs.shape
    K = int(init.max()) + 1
    XW = Xs @ np.diag(w)
    V = np.zeros((p, K))
    for k in range(K):
        for j in range(p):
            V[j, k] = 1.0 if init[j] == k else 0.0
    objective = []
    lam = None
    for it in range(max_iter):
        V = V[:, np.any(V != 0, axis=0)]  # remove columns of zeroes
        if V.shape[1] == 0:
            break
        Ut = XW @ V @ np.linalg.inv(V.T @ V)
        U = np.empty_like(Ut)
        for k in range(V.shape[1]):
            u = Ut[:, k] - Ut[:, k].mean()
            U[:, k] = u / u.std(ddof=1)
        cor = np.empty((p, V.shape[1]))
        for j in range(p):
            for k in range(V.shape[1]):
                x, u = Xs[:, j], U[:, k]
                cor[j, k] = np.sum((x - x.mean()) * (u - u.mean())) / (
                    np.sqrt(np.sum((x - x.mean()) ** 2) * np.sum((u - u.mean()) ** 2))
                )
        score = w[:, None] * cor
        if it == 0:
            lam = lam_ratio * max(score.max(), 0.0)
        newV = np.zeros_like(V)
        for j in range(p):
            k = int(np.argmax(score[j]))
            newV[j, k] = max(score[j, k] - lam, 0.0)
        J = np.sum((XW - U @ newV.T) ** 2) / (2 * (n - 1)) + lam * np.abs(newV).sum()
        objective.append(J)
        stop = len(objective) > 1 and abs(objective[-2] - J) / abs(objective[-2]) < tol
        same = (
            newV.shape == V.shape
            and np.array_equal(newV > 0, V > 0)
            and np.allclose(newV, V, rtol=1e-12, atol=0)
        )
        V = newV
        if stop or (same and len(objective) > 1):
            break
    V = V[:, np.any(V != 0, axis=0)]
    labels = (
        np.where(V.any(axis=1), V.argmax(axis=1), -1) if V.shape[1] else np.full(p, -1)
    )
    return V, labels, lam, np.array(objective)
