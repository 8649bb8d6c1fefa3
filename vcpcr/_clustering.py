"""Step 1 for the estimator: random starts at a common penalty, best start.

``VCPCR.fit`` draws its initial partitions, solves weighted SOS-NMF from each
at the same absolute penalty (so that their objectives compare), keeps the
start with the lowest final objective and orders the clusters for display.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from vcpcr._path import initial_lambda_max
from vcpcr._sos_nmf import (
    SOSNMFResult,
    _check_init,
    _sos_nmf_single,
    _warn_status,
    random_partition,
)
from vcpcr._validation import check_choice, check_random_state
from vcpcr.exceptions import user_stacklevel

__all__ = ["Clusters", "best_start", "initial_partitions", "order_clusters"]


def initial_partitions(
    init: Any, n_clusters: int, n_init: int, p: int, random_state: Any
) -> list[NDArray[np.intp]]:
    """Return ``n_init`` random partitions, or the given labels as one start."""
    if not isinstance(init, str):
        return [_check_init(init, n_clusters, p, None)]
    check_choice(init, "init", ("random",), owner="VCPCR")
    rng = check_random_state(random_state)
    return [random_partition(p, n_clusters, rng) for _ in range(n_init)]


def best_start(
    Xs: NDArray[np.float64],
    w: NDArray[np.float64],
    starts: list[NDArray[np.intp]],
    lam_ratio: float,
    max_iter: int,
    tol: float,
) -> tuple[SOSNMFResult, int, float]:
    """Solve every start at ``lam_ratio`` times the starts' largest ``lam_max``.

    Returns the result of the start with the lowest final objective, its
    index and the common ``lam_max``; warns if that start did not converge.
    """
    lam_max = float(initial_lambda_max(Xs, w, starts).max())
    XW = Xs * w
    runs = [
        _sos_nmf_single(XW, s, lam=lam_ratio * lam_max, max_iter=max_iter, tol=tol)
        for s in starts
    ]
    best = int(np.argmin([r.objective[-1] for r, _ in runs]))
    _warn_status(runs[best][1], max_iter, tol, stacklevel=user_stacklevel())
    return runs[best][0]._replace(lam_max=lam_max), best, lam_max


class Clusters(NamedTuple):
    """Clusters ordered by total membership (``cluster_1`` the largest)."""

    labels: NDArray[np.intp]
    membership: pd.DataFrame
    members: dict[str, list[str]]


def order_clusters(res: SOSNMFResult, names: list[str]) -> Clusters:
    """Order the clusters by total membership; list members strongest first."""
    order = np.argsort(-res.V.sum(axis=0), kind="stable")
    V = res.V[:, order]
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    sel = res.labels >= 0
    labels = np.full(res.labels.size, -1, dtype=np.intp)
    labels[sel] = rank[res.labels[sel]]
    cols = [f"cluster_{k + 1}" for k in range(V.shape[1])]
    membership = pd.DataFrame(V, index=pd.Index(names), columns=cols)
    members = {
        c: [
            names[j]
            for j in np.argsort(-V[:, k], kind="stable")[: int(np.sum(V[:, k] > 0))]
        ]
        for k, c in enumerate(cols)
    }
    return Clusters(labels, membership, members)
