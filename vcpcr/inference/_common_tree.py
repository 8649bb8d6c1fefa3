r"""Multi-split hierarchical testing over one tree built from ``X`` alone.

The per-split descent of :mod:`vcpcr.inference._hierarchy` tests clusters of a tree
that each split builds for itself, so only single features mean the same thing
in every split and only they can be aggregated. Mandozzi & Bühlmann (2016)
test the clusters of **one** tree in every split instead, a tree built from
``X`` alone (R ``hierinf``, Renaux et al. 2020): it does not look at ``y``,
so it may be built on all the rows and shared by every split.

* The tree (:func:`common_tree`): average-linkage hierarchical clustering of
  the clustered features (never the covariates) on the distance
  ``1 - |correlation|`` over all rows, binary, from the root (every feature)
  down to single features; or a tree the user passes as a scipy linkage matrix
  (:func:`tree_from_linkage`). The distance matrix needs ``p^2`` numbers, so
  :func:`common_tree` refuses more than :data:`TREE_MAX_FEATURES` features.
* Per split ``b`` with selected features :math:`S_b` and a node ``C``: the
  p-value of :math:`H_{C \cap S_b}: \beta_{C \cap S_b} = 0` in the split's
  second-part regression of ``y`` on :math:`S_b` and the covariates, by the
  split's own :class:`~vcpcr.inference._hierarchy.SplitTests` (partial F, likelihood
  ratio with its Bartlett-type factor, Firth's under separation), weighted
  as Mandozzi & Bühlmann do:

  .. math::

      p_{C,b} = \min\bigl(1,\ p^{\text{raw}}_{C \cap S_b}\,
      |S_b| / |C \cap S_b|\bigr),

  and :math:`p_{C,b} = 1` when :math:`C \cap S_b` is empty, when the split
  failed, or when its tests cannot run (the width rule, a full regression
  that cannot be fitted): such a split counts, it is never dropped.
* Per node, the splits' p-values are aggregated by the quantile rule
  (``aggregate``, :func:`vcpcr.inference.aggregate_pvalues`) into
  :math:`P_C`; top-down, a node is examined only when its parent is
  rejected, its adjusted p-value is :math:`\max(P_C, P^{adj}_{parent})`,
  and it is rejected when that is at most ``alpha`` (:func:`descend_tree`).
  Only the examined nodes are tested, so under the null the cost is one
  test per split (the root, which the descent has tested already).

Under the screening property (every split's selection keeps every feature that
acts on ``y``), rejecting the nodes with adjusted p-value at most ``alpha``
controls the family-wise error over the clusters that hold no active feature
(Mandozzi & Bühlmann 2016; the weighting and the aggregation are their
equations 2-4, p. 333).

References: Mandozzi, J., Bühlmann, P. (2016). Hierarchical testing in the
high-dimensional setting with correlated variables. JASA 111(513), 331-343.
Renaux, C., Buzdugan, L., Kalisch, M., Bühlmann, P. (2020). Hierarchical
inference for genome-wide association studies: a view on methodology with
software. Computational Statistics 35, 1-40.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.cluster.hierarchy import is_valid_linkage, linkage
from scipy.spatial.distance import squareform

from vcpcr.inference._hierarchy import SplitTests

__all__ = [
    "TREE_MAX_FEATURES",
    "CommonTree",
    "SplitSelection",
    "TreeTest",
    "common_tree",
    "descend_tree",
    "tree_from_linkage",
]

_Float = NDArray[np.float64]
_Int = NDArray[np.intp]

#: Most features :func:`common_tree` clusters: its correlation and distance
#: matrices hold about ``1.5 p^2`` float64 numbers (300 MB at 5,000 features,
#: built in about 3 s; 4.8 GB at 20,000).
TREE_MAX_FEATURES = 5000


class CommonTree(NamedTuple):
    """A binary tree over ``p`` features, nodes in pre-order (parents first).

    Every node's features are a contiguous run of the leaf order:
    ``order[start[i]:stop[i]]`` (:meth:`members`), so the tree takes
    ``O(p)`` memory whatever its shape. Node 0 is the root (every feature),
    ``parent`` is -1 there, ``children`` is -1 at the leaves.
    """

    order: _Int
    start: _Int
    stop: _Int
    parent: _Int
    children: _Int  # shape (n_nodes, 2)

    @property
    def n_nodes(self) -> int:
        """Number of nodes, ``2 p - 1``."""
        return int(self.start.size)

    def members(self, node: int) -> _Int:
        """Return the features (column positions) of ``node``."""
        return self.order[self.start[node] : self.stop[node]]


def tree_from_linkage(Z: ArrayLike, n_features: int) -> CommonTree:
    """Turn a scipy linkage matrix over ``n_features`` features into a tree.

    Parameters
    ----------
    Z : array-like of shape (n_features - 1, 4)
        A linkage matrix as ``scipy.cluster.hierarchy.linkage`` returns it
        (any method, any distance, computed from ``X`` alone), its leaves the
        clustered features in the order of the data's columns (covariates
        left out).
    n_features : int
        Number of clustered features.

    Returns
    -------
    CommonTree
        The tree, root first.

    Raises
    ------
    ValueError
        If ``Z`` is not a valid linkage matrix of ``n_features`` leaves.
    """
    p = int(n_features)
    if p == 1:
        return _single_feature_tree()
    Z = np.asarray(Z, dtype=np.float64)
    if Z.shape != (p - 1, 4) or not is_valid_linkage(Z):
        raise ValueError(
            f"The common tree must be a scipy linkage matrix of shape "
            f"({p - 1}, 4) over the {p} clustered features (columns in the data's "
            f"order, covariates left out), e.g. scipy.cluster.hierarchy."
            f"linkage(...); got an array of shape {Z.shape}"
            + ("" if Z.shape != (p - 1, 4) else " that is not a valid linkage")
            + "."
        )
    merged = Z[:, :2].astype(np.intp)
    count = np.concatenate([np.ones(p, dtype=np.intp), Z[:, 3].astype(np.intp)])
    n_nodes = 2 * p - 1
    order = np.empty(p, dtype=np.intp)
    start = np.empty(n_nodes, dtype=np.intp)
    stop = np.empty(n_nodes, dtype=np.intp)
    parent = np.full(n_nodes, -1, dtype=np.intp)
    children = np.full((n_nodes, 2), -1, dtype=np.intp)
    # pre-order walk from the linkage root (id 2p - 2): (linkage id, parent, start)
    stack = [(2 * p - 2, -1, 0)]
    i = 0
    while stack:
        cid, up, at = stack.pop()
        start[i], stop[i], parent[i] = at, at + count[cid], up
        if up >= 0:
            children[up, int(children[up, 0] >= 0)] = i
        if cid < p:
            order[at] = cid
        else:
            left, right = merged[cid - p]
            stack.append((int(right), i, at + count[left]))
            stack.append((int(left), i, at))
        i += 1
    return CommonTree(order, start, stop, parent, children)


def _single_feature_tree() -> CommonTree:
    one = np.zeros(1, dtype=np.intp)
    return CommonTree(one, one.copy(), one + 1, one - 1, np.full((1, 2), -1))


def common_tree(X: ArrayLike, *, max_features: int = TREE_MAX_FEATURES) -> CommonTree:
    """Average-linkage tree of the columns of ``X`` on ``1 - |correlation|``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The clustered features on all the rows (covariates left out; the
        correlation does not depend on the standardization). ``y`` is never
        read, so the tree may be shared by every split.
    max_features : int, default=TREE_MAX_FEATURES
        Most columns clustered.

    Returns
    -------
    CommonTree
        The tree, root first; a constant column has correlation 0 with every
        other column (distance 1).

    Raises
    ------
    ValueError
        If ``X`` has more than ``max_features`` columns: pass a linkage of
        your own to :func:`tree_from_linkage` (``multi_split(...,
        common_tree=Z)``), or no common tree.
    """
    X = np.asarray(X, dtype=np.float64)
    p = X.shape[1]
    if p > max_features:
        raise ValueError(
            f"The common tree clusters at most {max_features} features (its "
            f"distance matrix needs about {1.5 * 8 * p * p / 1e9:.1f} GB for "
            f"{p} features). Pass your own scipy linkage matrix over the features as "
            f"common_tree=Z (e.g. from a cheaper clustering), or "
            f"common_tree=None to skip it."
        )
    if p == 1:
        return _single_feature_tree()
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = np.corrcoef(X, rowvar=False)
    np.nan_to_num(dist, copy=False, nan=0.0)  # a constant column: correlation 0
    np.abs(dist, out=dist)
    np.subtract(1.0, dist, out=dist)
    np.fill_diagonal(dist, 0.0)
    condensed = squareform(dist, checks=False)
    del dist
    np.clip(condensed, 0.0, None, out=condensed)
    return tree_from_linkage(linkage(condensed, method="average"), p)


class SplitSelection(NamedTuple):
    """One split, as the common tree reads it.

    ``selected`` holds the positions (in the tree's features) of the features the
    split selected, in the order of the columns its ``tests`` were built
    on; ``tests`` is None for a split that failed (every node gets p = 1).
    """

    selected: _Int
    tests: SplitTests | None


class TreeTest(NamedTuple):
    """The top-down test of a common tree (see :func:`descend_tree`).

    ``aggregated`` (:math:`P_C`) and ``adjusted`` (the hierarchical
    p-value) hold NaN at the nodes never examined; ``rejected`` marks the
    nodes with ``adjusted <= alpha``; ``minimal`` the rejected nodes none of
    whose children is rejected; ``split_pvalues`` maps each examined node to
    its splits' weighted p-values :math:`p_{C,b}`; ``n_examined`` counts
    the examined nodes.
    """

    aggregated: _Float
    adjusted: _Float
    rejected: NDArray[np.bool_]
    minimal: NDArray[np.bool_]
    split_pvalues: dict[int, _Float]
    n_examined: int


def _raw_pvalues(
    tree: CommonTree,
    nodes: Sequence[int],
    splits: Sequence[SplitSelection],
    n_features: int,
) -> _Float:
    r"""Raw per-split p-values of :math:`H_{C \cap S_b}`, shape (n_splits, n_nodes).

    1 where :math:`C \cap S_b` is empty or the split cannot test.
    """
    P = np.ones((len(splits), len(nodes)))
    masks = np.zeros((len(nodes), n_features), dtype=bool)
    for k, node in enumerate(nodes):
        masks[k, tree.members(node)] = True
    for b, split in enumerate(splits):
        if split.tests is None or split.tests.problem is not None:
            continue
        inside = masks[:, split.selected]  # (n_nodes, |S_b|)
        sets = [np.flatnonzero(row) for row in inside]
        live = [k for k, s in enumerate(sets) if s.size]
        if live:
            P[b, live] = split.tests.pvalues([sets[k].tolist() for k in live])
    return P


class _Weights:
    r"""Each split's weights of the genes, in units of :math:`1 / |S_b|`.

    A selected gene starts at 1, any other at 0, so a node's weight is
    :math:`|C \cap S_b|` and its weighted p-value Mandozzi & Bühlmann's
    :math:`p_{C,b} = \min(1, p^{raw} |S_b| / |C \cap S_b|)`. The inheritance
    procedure (:meth:`inherit`) moves a rejected gene's weight to the other
    genes of its nearest ancestor that still has unrejected selected genes.
    """

    def __init__(self, splits: Sequence[SplitSelection], n_genes: int) -> None:
        self.units = np.zeros((len(splits), n_genes))
        self.n_selected = np.ones(len(splits))
        for b, split in enumerate(splits):
            self.units[b, split.selected] = 1.0
            self.n_selected[b] = max(split.selected.size, 1)

    def weighted(self, tree: CommonTree, nodes: Sequence[int], raw: _Float) -> _Float:
        """:math:`p_{C,b}` of ``nodes`` from their raw p-values.

        A node's genes are a contiguous run of the leaf order, so every
        node's weight is a difference of the weights' running sums.
        """
        cum = np.zeros((self.units.shape[0], self.units.shape[1] + 1))
        np.cumsum(self.units[:, tree.order], axis=1, out=cum[:, 1:])
        at = np.asarray(nodes, dtype=np.intp)
        W = cum[:, tree.stop[at]] - cum[:, tree.start[at]]
        with np.errstate(divide="ignore", invalid="ignore"):
            P = raw * self.n_selected[:, None] / W
        return np.where(W > 0, np.minimum(1.0, P), 1.0)

    def inherit(self, tree: CommonTree, leaf: int, done: NDArray[np.bool_]) -> None:
        """Pass a rejected single-gene node's weight on, split by split.

        In each split the weight goes to the nearest ancestor whose genes
        include a gene of positive weight not in ``done`` (the genes of the
        rejected single-gene nodes), and is shared among those genes in
        proportion to their weights (Goeman & Finos 2012).
        """
        gene = int(tree.order[tree.start[leaf]])
        for b in np.flatnonzero(self.units[:, gene] > 0):
            up = int(tree.parent[leaf])
            while up >= 0:
                genes = tree.members(up)
                heirs = genes[~done[genes] & (self.units[b, genes] > 0)]
                if heirs.size:
                    share = self.units[b, heirs]
                    self.units[b, heirs] += self.units[b, gene] * share / share.sum()
                    break
                up = int(tree.parent[up])
            self.units[b, gene] = 0.0


def descend_tree(
    tree: CommonTree,
    splits: Sequence[SplitSelection],
    aggregate: Callable[[_Float], _Float],
    alpha: float,
    *,
    inheritance: bool = False,
) -> TreeTest:
    r"""Test the common tree top-down over the splits (Mandozzi & Bühlmann).

    Parameters
    ----------
    tree : CommonTree
        The tree over the clustered genes (:func:`common_tree`).
    splits : sequence of SplitSelection
        Every split drawn, failed ones included (``tests=None``).
    aggregate : callable
        Maps the ``(n_splits, n_nodes)`` matrix of :math:`p_{C,b}` to one
        p-value per node (the quantile rule).
    alpha : float
        Level: a node is examined when its parent's adjusted p-value is at
        most ``alpha``.
    inheritance : bool, default=False
        Pass the weight of every rejected single gene on to its nearest
        unrejected relatives, split by split, and examine again (Goeman &
        Finos's inheritance procedure; see Notes).

    Returns
    -------
    TreeTest
        Aggregated and adjusted p-values of the examined nodes (NaN
        elsewhere), the rejected and the minimal rejected nodes.

    Notes
    -----
    Level by level from the root: the nodes whose parent is rejected get
    :math:`P_C = \text{aggregate}(\{p_{C,b}\}_b)` and
    :math:`P^{adj}_C = \max(P_C, P^{adj}_{parent})`. The p-values of one
    level of one split are computed in one call of its tests (clusters of
    the same size share one batched fit), and a cluster :math:`C \cap S_b`
    that split tested before (an ancestor with the same selected genes, the
    descent's root) is not tested again.

    With ``inheritance=True``, whenever the descent stops, each newly
    rejected single gene hands its weight :math:`1 / |S_b|` in each split to
    the unrejected selected genes under its nearest ancestor that has some
    (in proportion to their weights), the node weights
    :math:`w_{C,b}` become the sums of their genes' weights
    (:math:`p_{C,b} = \min(1, p^{raw}_{C \cap S_b} / w_{C,b})`), and the
    examined nodes not yet rejected whose parent is rejected are examined
    again, until nothing new is rejected. Weights only grow as rejections
    are made, and when every node that holds an active gene is rejected the
    weights of the remaining nodes still sum to at most 1 in every split, so
    the sequential rejection principle (Goeman & Solari 2010) keeps the
    error control of the descent without it (the quantile aggregation's
    bound is a sum over the splits of each split's weights). ``adjusted``
    then holds each node's value at the final weights: a node is rejected
    at ``alpha`` when it is at most ``alpha``, but it is not the smallest
    level at which the node would be.

    References: Goeman, J. J., Finos, L. (2012). The inheritance procedure:
    multiple testing of tree-structured hypotheses. Statistical
    Applications in Genetics and Molecular Biology 11(1). Goeman, J. J.,
    Solari, A. (2010). The sequential rejection principle of familywise
    error control. Annals of Statistics 38(6), 3782-3810.
    """
    n_genes = tree.order.size
    aggregated = np.full(tree.n_nodes, np.nan)
    adjusted = np.full(tree.n_nodes, np.nan)
    split_pvalues: dict[int, _Float] = {}
    raw: dict[int, _Float] = {}
    weights = _Weights(splits, n_genes)
    leaf = tree.children[:, 0] < 0
    inherited = np.zeros(tree.n_nodes, dtype=bool)
    frontier = [0]
    while frontier:
        new = [c for c in frontier if c not in raw]
        if new:
            raw.update(
                zip(new, _raw_pvalues(tree, new, splits, n_genes).T, strict=True)
            )
        P = weights.weighted(
            tree, frontier, np.column_stack([raw[c] for c in frontier])
        )
        agg = np.asarray(aggregate(P), dtype=np.float64)
        nxt: list[int] = []
        for k, node in enumerate(frontier):
            up = tree.parent[node]
            above = adjusted[up] if up >= 0 else 0.0
            aggregated[node] = agg[k]
            adjusted[node] = max(float(agg[k]), float(above))
            split_pvalues[node] = P[:, k]
            if adjusted[node] <= alpha:
                nxt.extend(int(c) for c in tree.children[node] if c >= 0)
        frontier = nxt
        if frontier or not inheritance:
            continue
        # every examined node is decided at these weights: pass the weight
        # of the newly rejected genes on, then re-examine the nodes not
        # rejected whose parent is
        done = np.nan_to_num(adjusted, nan=np.inf) <= alpha
        fresh = np.flatnonzero(leaf & done & ~inherited)
        done_genes = np.zeros(n_genes, dtype=bool)
        done_genes[tree.order[tree.start[leaf & done]]] = True
        for node in fresh.tolist():
            weights.inherit(tree, node, done_genes)
            inherited[node] = True
        if fresh.size:
            frontier = [
                int(c)
                for c in np.flatnonzero(np.isfinite(adjusted) & ~done)
                if tree.parent[c] >= 0 and done[tree.parent[c]]
            ]
    rejected = np.nan_to_num(adjusted, nan=np.inf) <= alpha
    has_rejected_child = np.zeros(tree.n_nodes, dtype=bool)
    up = tree.parent[rejected]
    has_rejected_child[up[up >= 0]] = True
    minimal = rejected & ~has_rejected_child
    return TreeTest(
        aggregated,
        adjusted,
        rejected,
        minimal,
        split_pvalues,
        int(np.isfinite(adjusted).sum()),
    )
