"""Step 1 as the estimators run it: the best of the starts, ordered clusters.

Above the engine (:mod:`vcpcr._solvers.sos_nmf`, which solves given problems), this
module is the clustering step of VC-PCR: it keeps the best restart of every
grid point (:func:`best_starts`; the starts come from
:func:`vcpcr._sos_nmf.initial_partitions`), hands one point's kept start on
as one solution (:class:`KeptStart`: :func:`best_start` for a single
problem, :meth:`BestStarts.kept` for a point of a grid) and turns the kept
solution into the estimators' ordered clusters (:func:`order_clusters`) and
the loadings step 2 builds its latent variables with (:func:`loadings`).

One restart driver, :func:`best_starts`, serves :class:`vcpcr.VCPCR`,
:class:`vcpcr.VCPCRCV` (per fold, through :mod:`vcpcr._tuning`),
:mod:`vcpcr.plotting` and ``vcpcr benchmark``: every start of every grid
point is one problem of a single :func:`vcpcr._solvers.sos_nmf.batched_sos_nmf` call,
the starts of a point share an absolute penalty (so that their objectives
compare) and the start with the lowest final objective is kept. A single
fit (:func:`best_start`) is a grid of one point on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from vcpcr._solvers.sos_nmf import BatchResult, batched_sos_nmf, initial_lambda_max
from vcpcr._sos_nmf import SOSNMFResult, single_result, warn_unconverged

__all__ = [
    "LATENTS",
    "BestStarts",
    "Clusters",
    "KeptStart",
    "best_start",
    "best_starts",
    "check_latent",
    "loadings",
    "order_clusters",
]

#: How a selected feature enters its cluster's latent variable: ``"paper"``,
#: ``M = X V`` (the paper's step 2); ``"signed"``, ``M = X diag(sign w) V``.
LATENTS = ("paper", "signed")


class KeptStart(NamedTuple):
    """The kept start of one problem: its solution and which start it was.

    Attributes
    ----------
    result : SOSNMFResult
        The solution, on every clustered feature (``lam`` the point's
        penalty, ``lam_max`` the largest over its starts; ``objective`` the
        history when it was recorded, else the final value).
    start : int
        Its position among the problem's starts.
    """

    result: SOSNMFResult
    start: int


class BestStarts(NamedTuple):
    """The kept start of every grid point (see :func:`best_starts`).

    Attributes
    ----------
    problem : ndarray of int of shape (n_points,)
        The kept problem of each point (a row of ``batch``).
    start : ndarray of int of shape (n_points,)
        Its position in the point's group of starts.
    lam, lam_max : ndarray of shape (n_points,)
        The absolute penalty of the point and the ``lam_max`` it is a
        fraction of (the largest over the group's starts).
    batch : BatchResult
        Every problem solved (all starts of all points), on the features
        with a non-zero weight (``compact=True``).
    """

    problem: NDArray[np.intp]
    start: NDArray[np.intp]
    lam: NDArray[np.float64]
    lam_max: NDArray[np.float64]
    batch: BatchResult

    @property
    def labels(self) -> NDArray[np.intp]:
        """Labels of the kept start of each point (points x features)."""
        return self.batch.dense_labels(self.problem)

    @property
    def v(self) -> NDArray[np.float64]:
        """Memberships of the kept start of each point (points x features)."""
        return self.batch.dense_v(self.problem)

    @property
    def compact_labels(self) -> NDArray[np.intp]:
        """:attr:`labels` on ``batch.features`` only (points x kept features).

        The features left out have a zero weight at every ``delta`` and no
        cluster (label -1) at every point: at 50,000 features the dense
        labels and memberships of the default grid's 360 points would take
        290 MB per fold.
        """
        return self.batch.labels[self.problem]

    @property
    def compact_v(self) -> NDArray[np.float64]:
        """:attr:`v` on ``batch.features`` only (see :attr:`compact_labels`)."""
        return self.batch.v[self.problem]

    @property
    def converged(self) -> NDArray[np.bool_]:
        """Whether the kept start of each point converged."""
        return self.batch.converged[self.problem]

    def kept(
        self, point: int, Xs: NDArray[np.float64], weights: NDArray[np.float64]
    ) -> KeptStart:
        """Return the kept start of grid point ``point`` as one solution.

        ``Xs`` is the data the batch solved and ``weights`` the point's row
        of its weights (they give the solution's latent variables ``U``).
        """
        res = single_result(
            Xs,
            weights,
            self.batch,
            int(self.problem[point]),
            self.lam[point],
            self.lam_max[point],
        )
        return KeptStart(res, int(self.start[point]))


def best_starts(
    Xs: NDArray[np.float64],
    W: NDArray[np.float64],
    groups: Sequence[Sequence[ArrayLike]],
    group_idx: ArrayLike,
    weight_idx: ArrayLike,
    lam_ratios: ArrayLike,
    *,
    max_iter: int,
    tol: float,
    history: bool = False,
    warn: bool = False,
) -> BestStarts:
    """Solve every start of every grid point; keep each point's best start.

    Point ``b`` runs each initial partition of ``groups[group_idx[b]]`` with
    weights ``W[weight_idx[b]]`` at the common penalty ``lam_ratios[b] *
    lam_max``, ``lam_max`` being the largest :func:`vcpcr.lambda_max` over
    the group's starts (with these weights), and keeps the start with the
    lowest final objective (the first on ties). The paper's per-start
    ``lam_max`` is a group of one start. ``history`` records the objective
    of every iteration; ``warn`` issues a ConvergenceWarning for each kept
    start that did not converge (the caller's caller is blamed: ``VCPCR.fit``
    is called by the user). The data, the weights and the starts are the
    caller's, validated once (the engine runs with ``check_input=False``).
    """
    gidx, widx = (
        np.asarray(group_idx, dtype=np.intp),
        np.asarray(weight_idx, dtype=np.intp),
    )
    ratios = np.asarray(lam_ratios, dtype=np.float64)
    sizes = np.array([len(g) for g in groups], dtype=np.intp)
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    inits = [start for group in groups for start in group]
    lam_max = initial_lambda_max(Xs, W, inits, check_input=False)
    lam_max = np.maximum.reduceat(lam_max, first, axis=1)
    lam_max = lam_max[widx, gidx]
    lam = ratios * lam_max
    # problems: point by point, the starts of a point consecutive
    n_starts = sizes[gidx]
    point = np.repeat(np.arange(gidx.size), n_starts)
    offset = np.concatenate(([0], np.cumsum(n_starts)[:-1]))
    start = np.arange(point.size) - offset[point]
    batch = batched_sos_nmf(
        Xs,
        W,
        inits,
        widx[point],
        first[gidx[point]] + start,
        lam[point],
        max_iter=max_iter,
        tol=tol,
        history=history,
        compact=True,
        check_input=False,
    )
    kept = np.lexsort((batch.objective, point))[offset]
    if warn:
        for b in kept[~batch.converged[kept]].tolist():
            reason, rel = str(batch.reason[b]), float(batch.rel_change[b])
            warn_unconverged(reason, rel, max_iter, tol)
    return BestStarts(kept, start[kept], lam, lam_max, batch)


def best_start(
    Xs: NDArray[np.float64],
    weights: NDArray[np.float64],
    starts: Sequence[ArrayLike],
    lam_ratio: float,
    *,
    max_iter: int,
    tol: float,
    history: bool = False,
    warn: bool = False,
) -> KeptStart:
    """Solve one problem from each of its ``starts``; return the kept start.

    A grid of one point on :func:`best_starts` (the one restart driver),
    with the weight vector ``weights`` and the penalty ``lam_ratio *
    lam_max``, ``lam_max`` the largest over the starts; ``history`` and
    ``warn`` as there. :meth:`vcpcr.VCPCR.fit` solves its problem so.
    """
    solved = best_starts(
        Xs,
        weights[None, :],
        [starts],
        [0],
        [0],
        [lam_ratio],
        max_iter=max_iter,
        tol=tol,
        history=history,
        warn=warn,
    )
    return solved.kept(0, Xs, weights)


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


def check_latent(latent: object, owner: str) -> None:
    """Raise a ValueError unless ``latent`` is one of :data:`LATENTS`."""
    if not isinstance(latent, str) or latent not in LATENTS:
        raise ValueError(
            f"The 'latent' parameter of {owner} must be one of {list(LATENTS)}; "
            f"got {latent!r}."
        )


def loadings(
    V: NDArray[np.float64], weights: NDArray[np.float64], latent: str
) -> NDArray[np.float64]:
    """Step 2's loadings ``L``, the latent variables being ``M = X L``.

    ``V`` (features x clusters) holds the non-negative membership degrees
    and ``weights`` the step-0 weights of the same features. With
    ``latent="paper"``, ``L = V``: every selected feature enters its
    cluster's latent variable with a positive sign. With ``"signed"``, ``L =
    diag(sign w) V``: a feature enters with the sign of its weight, as it
    entered ``X W`` when step 1 clustered it. A feature with a negative
    weight joins a cluster of positively weighted ones when it is
    anti-correlated with them; the paper's ``M = X V`` then adds it with the
    wrong sign, so that it cancels its cluster's other features. Signed
    loadings make VC-PCR equivariant to flipping the sign of a column (the
    flip changes the sign of its weight and of its coefficient, and nothing
    else), as the lasso and ridge are.
    """
    if latent == "signed":
        return V * np.sign(weights)[:, None] + 0.0  # + 0.0: no -0.0 entries
    return V
