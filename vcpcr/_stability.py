"""Stability selection of genes and of gene modules (Meinshausen & Bühlmann 2010).

The statistics are pure functions of a label matrix ``L`` of shape
``(n_resamples, n_features)``: ``L[b, j]`` is the cluster of feature ``j`` in
the fit on resample ``b``, ``-1`` when the fit did not select it. Cluster
numbers are only compared within a row (a cluster ``0`` of one resample has
nothing to do with a cluster ``0`` of another).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

__all__ = [
    "best_match_jaccard",
    "coclustering",
    "consensus_modules",
    "error_bound",
    "mean_coclustering",
    "selection_frequency",
]

#: Pairs per block when counting joint selections (bounds the memory to
#: ``_PAIR_BLOCK * n_resamples`` bytes).
_PAIR_BLOCK = 1 << 16


def _as_labels(labels: ArrayLike) -> NDArray[np.intp]:
    """Return the label matrix as a 2-d integer array (-1 = unselected)."""
    L = np.asarray(labels)
    if L.ndim != 2 or not np.issubdtype(L.dtype, np.integer) or np.any(L < -1):
        raise ValueError(
            "labels must be a 2-d integer array of shape (n_resamples, n_features) "
            "with -1 for unselected features and cluster numbers >= 0 otherwise."
        )
    return L.astype(np.intp, copy=False)


def selection_frequency(labels: ArrayLike) -> NDArray[np.float64]:
    """Share of the resamples in which each feature was selected.

    Parameters
    ----------
    labels : array-like of int of shape (n_resamples, n_features)
        Cluster of each feature in each resample, -1 if unselected.

    Returns
    -------
    ndarray of shape (n_features,)
        ``mean_b [L[b, j] >= 0]``.
    """
    L = _as_labels(labels)
    return np.asarray((L >= 0).mean(axis=0), dtype=np.float64)


def coclustering(labels: ArrayLike, features: ArrayLike) -> sparse.csr_array:
    """How often two features share a cluster, given that both are selected.

    Parameters
    ----------
    labels : array-like of int of shape (n_resamples, n_features)
        Cluster of each feature in each resample, -1 if unselected.
    features : array-like of int of shape (m,)
        Columns of ``labels`` to compare.

    Returns
    -------
    scipy.sparse.csr_array of shape (m, m)
        Entry ``(i, j)``: the number of resamples in which ``features[i]`` and
        ``features[j]`` are in the same cluster divided by the number in which
        both are selected. Pairs that never share a cluster (including pairs
        never selected together) are not stored, i.e. are 0. The diagonal is 1
        for a feature selected at least once.

    Notes
    -----
    The same-cluster counts are ``A A^T`` with ``A`` the sparse one-hot
    matrix of (feature, cluster of a resample), so the memory grows with the
    number of pairs that ever share a cluster, never with ``m^2`` (nor with
    the number of features outside ``features``).
    """
    L = _as_labels(labels)[:, np.asarray(features, dtype=np.intp)]
    m = L.shape[1]
    offsets = np.concatenate([[0], np.cumsum(L.max(axis=1, initial=-1) + 1)])
    b, i = np.nonzero(L >= 0)
    onehot = sparse.csr_array(
        (np.ones(i.size), (i, offsets[b] + L[b, i])), shape=(m, int(offsets[-1]))
    )
    same = sparse.csr_array(onehot @ onehot.T)
    same.sum_duplicates()
    same.sort_indices()
    rows = np.repeat(np.arange(m), np.diff(same.indptr))
    cols = same.indices
    selected = (L >= 0).T
    both = np.empty(rows.size, dtype=np.float64)
    for start in range(0, rows.size, _PAIR_BLOCK):
        stop = start + _PAIR_BLOCK
        joint = selected[rows[start:stop]] & selected[cols[start:stop]]
        both[start:stop] = np.count_nonzero(joint, axis=1)
    return sparse.csr_array(
        (same.data / both, same.indices.copy(), same.indptr.copy()), shape=(m, m)
    )


def mean_coclustering(labels: ArrayLike, members: ArrayLike) -> float:
    """Mean co-clustering over the pairs of a set of features.

    Parameters
    ----------
    labels : array-like of int of shape (n_resamples, n_features)
        Cluster of each feature in each resample, -1 if unselected.
    members : array-like of int
        Columns of ``labels`` forming the module.

    Returns
    -------
    float
        The mean of :func:`coclustering` over the ``k (k - 1) / 2`` pairs of
        distinct members (a pair never selected together counts 0); NaN for
        fewer than two members.
    """
    members = np.asarray(members, dtype=np.intp)
    k = members.size
    if k < 2:
        return float("nan")
    coc = coclustering(labels, members)
    off_diagonal = float(coc.sum()) - float(coc.diagonal().sum())
    return off_diagonal / (k * (k - 1))


def best_match_jaccard(labels: ArrayLike, members: ArrayLike) -> NDArray[np.float64]:
    """Jaccard similarity of a module with its best match in each resample.

    As ``fpc::clusterboot`` (Hennig 2007): for each resample, the largest
    Jaccard coefficient ``|C & D| / |C | D|`` between the module ``C`` and a
    cluster ``D`` of that resample; features unselected in a resample belong
    to no cluster of it.

    Parameters
    ----------
    labels : array-like of int of shape (n_resamples, n_features)
        Cluster of each feature in each resample, -1 if unselected.
    members : array-like of int
        Columns of ``labels`` forming the module (non-empty).

    Returns
    -------
    ndarray of shape (n_resamples,)
        The best-match Jaccard coefficient per resample (0 when the resample
        selects none of the members); clusterboot's stability is its mean.
    """
    L = _as_labels(labels)
    members = np.unique(np.asarray(members, dtype=np.intp))
    if members.size == 0:
        raise ValueError("members must name at least one feature.")
    out = np.zeros(L.shape[0])
    for b, row in enumerate(L):
        inside = row[members]
        inside = inside[inside >= 0]
        if inside.size == 0:
            continue
        sizes = np.bincount(row[row >= 0])
        overlap = np.bincount(inside, minlength=sizes.size)
        out[b] = np.max(overlap / (members.size + sizes - overlap))
    return out


def consensus_modules(
    coc: NDArray[np.float64] | sparse.sparray, height: float = 0.5
) -> NDArray[np.intp]:
    """Average-linkage modules of a co-clustering matrix, cut at ``height``.

    Parameters
    ----------
    coc : ndarray or scipy.sparse array of shape (s, s)
        Symmetric co-clustering matrix (dense or sparse) of the features to
        group, with ones on the diagonal.
    height : float, default=0.5
        Cut of the dendrogram of the distance ``1 - coc``: two groups merge
        while the mean co-clustering between them is at least ``1 - height``.

    Returns
    -------
    ndarray of int of shape (s,)
        Module of each feature, ``0..n_modules-1``.
    """
    dense = coc.toarray() if isinstance(coc, sparse.sparray) else np.asarray(coc)
    s = dense.shape[0]
    if s < 2:
        return np.zeros(s, dtype=np.intp)
    distance = 1.0 - (dense + dense.T) / 2.0
    np.fill_diagonal(distance, 0.0)
    tree = linkage(squareform(np.clip(distance, 0.0, 1.0)), method="average")
    return np.asarray(fcluster(tree, t=height, criterion="distance") - 1, dtype=np.intp)


def error_bound(mean_selected: float, n_features: int, threshold: float) -> float:
    r"""Meinshausen & Bühlmann's bound on the expected number of false selections.

    Parameters
    ----------
    mean_selected : float
        ``q``: the mean number of features selected per subsample.
    n_features : int
        ``p``.
    threshold : float
        ``pi`` in ``(0.5, 1]``.

    Returns
    -------
    float
        :math:`q^2 / ((2\pi - 1) p)`.
    """
    return mean_selected**2 / ((2.0 * threshold - 1.0) * n_features)
