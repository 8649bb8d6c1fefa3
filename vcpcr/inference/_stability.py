"""Stability selection of features and of their clusters (Meinshausen & Bühlmann 2010).

The statistics are pure functions of a label matrix ``L`` of shape
``(n_resamples, n_features)``: ``L[b, j]`` is the cluster of feature ``j`` in
the fit on resample ``b``, ``-1`` when the fit did not select it. Cluster
numbers are only compared within a row (a cluster ``0`` of one resample has
nothing to do with a cluster ``0`` of another).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform
from statsmodels.iolib.table import SimpleTable

from vcpcr._base import FitInput
from vcpcr._checks import check_random_state, check_scalar
from vcpcr._cv import VCPCRCV
from vcpcr._families import family_name
from vcpcr._model import VCPCR
from vcpcr._parallel import (
    Checkpoint,
    check_failures,
    finished,
    most_common_message,
    progress_shown,
    run_parallel,
    task_seeds,
)
from vcpcr._result import Result
from vcpcr._summary import VCPCRSummary, _fmt, composition_rows, numbered_notes
from vcpcr.inference._resampling import (
    Fingerprint,
    check_template,
    draw_splits,
    fit_part,
    input_apart,
    input_joined,
    resampling_rows,
)

__all__ = [
    "StabilityResult",
    "best_match_jaccard",
    "coclustering",
    "consensus_modules",
    "error_bound",
    "mean_coclustering",
    "selection_frequency",
    "stability_selection",
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
        Columns of ``labels`` forming the cluster.

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
    """Jaccard similarity of a cluster with its best match in each resample.

    As ``fpc::clusterboot`` (Hennig 2007): for each resample, the largest
    Jaccard coefficient ``|C & D| / |C | D|`` between the cluster ``C`` and a
    cluster ``D`` of that resample; features unselected in a resample belong
    to no cluster of it.

    Parameters
    ----------
    labels : array-like of int of shape (n_resamples, n_features)
        Cluster of each feature in each resample, -1 if unselected.
    members : array-like of int
        Columns of ``labels`` forming the cluster (non-empty).

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
    # Number the clusters of all resamples 0.. (resample b's from offsets[b]).
    offsets = np.concatenate([[0], np.cumsum(L.max(axis=1, initial=-1) + 1)])
    b, j = np.nonzero(L >= 0)
    cluster = offsets[b] + L[b, j]
    sizes = np.bincount(cluster, minlength=offsets[-1])
    overlap = np.bincount(cluster[np.isin(j, members)], minlength=offsets[-1])
    out = np.zeros(L.shape[0])
    owner = np.repeat(np.arange(L.shape[0]), np.diff(offsets))
    np.maximum.at(out, owner, overlap / (members.size + sizes - overlap))
    return out


def consensus_modules(
    coc: NDArray[np.float64] | sparse.sparray, height: float = 0.5
) -> NDArray[np.intp]:
    """Average-linkage clusters of a co-clustering matrix, cut at ``height``.

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
        Cluster of each feature, ``0..n_modules-1``.
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


def _fraction(value: float) -> str:
    """Format a share in [0, 1] (NaN as "-")."""
    return "-" if np.isnan(value) else f"{value:.3f}"


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class StabilityResult(Result):
    r"""Selection frequencies, stable set and consensus clusters.

    Made by :func:`vcpcr.inference.stability_selection`; plain attributes,
    computed once from the label matrix when the result is made, nothing
    recomputed on access.

    Attributes
    ----------
    selection_frequency : pandas.Series
        Share of the subsamples in which each feature was selected (index:
        feature names, in the order of the columns of ``X``).
    stable_set : pandas.Index
        Features with ``selection_frequency >= threshold``, most frequent
        first.
    threshold : float
        :math:`\pi`, the frequency that makes a feature stable.
    mean_selected : float
        :math:`q`, the mean number of features selected per subsample.
    error_bound : float
        :math:`q^2 / ((2\pi - 1) p)`, the bound on the expected number of
        falsely selected features in ``stable_set`` (see Notes).
    labels : pandas.DataFrame of shape (2 * n_pairs, n_features)
        Cluster of each feature (columns) in the fit on each subsample (rows,
        indexed by ``(pair, half)``), -1 when not selected. Cluster numbers
        are comparable only within a row.
    subsamples : ndarray of shape (2 * n_pairs, subsample_size)
        Rows of the data in each subsample; the two halves of a pair are
        disjoint.
    failures : pandas.Series
        Why the fit on each subsample failed (index as ``labels``; None where
        it did not). A failed fit selects nothing (its row of ``labels`` is
        -1): it counts in every frequency and in ``mean_selected``, so the
        bound keeps counting every subsample drawn.
    n_failed : int
        Subsamples whose fit failed.
    min_frequency : float
        Features selected in at least this share of the subsamples enter
        ``coclustering``.
    coclustering_features : pandas.Index
        Those features (rows and columns of ``coclustering``).
    coclustering : scipy.sparse.csr_array
        For two of those features, the number of subsamples in which they
        share a cluster divided by the number in which both are selected
        (not stored, i.e. 0, when they never share one).
    modules : dict of str to list of str
        Consensus clusters of the stable set: cluster name -> members, most
        frequent first; clusters are ordered by size.
    module_table : pandas.DataFrame
        One row per cluster: ``size``, ``stability`` (mean co-clustering of
        its member pairs; NaN for a single feature), ``jaccard`` (mean
        best-match Jaccard over the subsamples) and ``frequency`` (mean
        selection frequency of its members).
    n_pairs, n_samples, subsample_size, n_features : int
        Complementary pairs, rows of the data, rows per subsample
        (``n_samples // 2``), features.
    stratified : bool
        Whether the halves keep the class proportions (binomial) or the
        share of events (cox).
    estimator : estimator
        The unfitted template that was cloned for each subsample.
    fingerprint : Fingerprint
        Identifies the estimator's parameters and the data (see
        :meth:`check_matches`).
    guarantee : str
        What the numbers mean and assume, as a note of
        ``model.summary(inference=result)``.
    complete : bool
        False when an interrupt stopped the run: every number is over the
        pairs whose two halves were both fitted (``n_pairs`` of them).

    Notes
    -----
    **The bound.** Theorem 1 of Meinshausen & Bühlmann (2010) gives, for
    :math:`\pi > 1/2` and subsamples of size :math:`\lfloor n/2 \rfloor`,

    .. math::

        E[V] \le \frac{q^2}{(2\pi - 1)\,p},

    with :math:`V` the number of noise features in the stable set, under two
    assumptions: the selection of the noise features is exchangeable, and
    the procedure is no worse than random guessing. Neither is checkable,
    and correlated features violate exchangeability. Shah & Samworth (2013)
    prove, for complementary pairs and *without* these assumptions, that the
    same number bounds the expected number of stable features among those
    whose selection probability on half the data is at most :math:`q/p`.
    :math:`q` is estimated by the mean over the subsamples.

    **Clusters.** The stable set is grouped by average linkage on
    ``1 - coclustering``, cut at height 0.5: the members of a cluster share a
    cluster, on average, in at least half of the subsamples that select
    both. A cluster's ``jaccard`` follows ``fpc::clusterboot`` (Hennig
    2007): for each subsample, the largest Jaccard coefficient between the
    cluster and one of the subsample's clusters (unselected features are in no
    cluster), averaged. Hennig's guide: 0.75 or more is a stable cluster,
    below 0.6 it should not be trusted.

    References
    ----------
    .. [1] Meinshausen, N., Bühlmann, P. (2010). Stability selection. JRSS-B
       72(4), 417-473.
    .. [2] Shah, R. D., Samworth, R. J. (2013). Variable selection with error
       control: another look at stability selection. JRSS-B 75(1), 55-80.
    .. [3] Hennig, C. (2007). Cluster-wise assessment of cluster stability.
       Computational Statistics & Data Analysis 52, 258-271.
    """

    selection_frequency: pd.Series
    stable_set: pd.Index
    threshold: float
    mean_selected: float
    error_bound: float
    labels: pd.DataFrame
    subsamples: NDArray[np.intp]
    failures: pd.Series
    n_failed: int
    min_frequency: float
    coclustering_features: pd.Index
    coclustering: sparse.csr_array
    modules: dict[str, list[str]]
    module_table: pd.DataFrame
    n_pairs: int
    n_samples: int
    subsample_size: int
    n_features: int
    stratified: bool
    estimator: Any = field(repr=False)
    fingerprint: Fingerprint = field(repr=False)
    guarantee: str = field(repr=False)
    complete: bool = True

    # ------------------------------------------------------- the fitted model

    def check_matches(self, model: Any) -> None:
        """Raise unless ``model`` was fitted with this result's parameters and data.

        Parameters
        ----------
        model : VCPCR or VCPCRCV
            A fitted estimator.

        Raises
        ------
        TypeError
            If ``model`` is not a ``VCPCR`` or ``VCPCRCV``.
        ValueError
            If it is unfitted, or its class, parameters (other than
            ``random_state``, ``n_jobs``, ``verbose``) or data (rows, feature
            names, response name, column means and standard deviations)
            differ from those of this result.
        """
        self.fingerprint.check(model, "This StabilityResult")

    def module_evidence(self, model: Any) -> pd.DataFrame:
        """Stability of the clusters of a model fitted on all the data.

        ``model.summary(inference=result)`` shows these columns beside each
        cluster's coefficient.

        Parameters
        ----------
        model : VCPCR or VCPCRCV
            Fitted with the same parameters on the same data as this result
            (checked by :meth:`check_matches`).

        Returns
        -------
        pandas.DataFrame
            One row per cluster of the model (``clusters_``): ``stability``
            (mean co-clustering of its member pairs over the half-sample
            fits; NaN for a single feature) and ``jaccard`` (mean best-match
            Jaccard of the cluster across the fits, as ``fpc::clusterboot``).

        Raises
        ------
        TypeError, ValueError
            As :meth:`check_matches`.
        """
        self.check_matches(model)
        clusters = dict(model.clusters_)
        table = _module_table(self.labels, self.selection_frequency, clusters)
        return table[["stability", "jaccard"]]

    def gene_evidence(self, model: Any) -> pd.DataFrame:
        """Return the selection frequencies of the features selected at least once.

        Parameters
        ----------
        model : VCPCR or VCPCRCV
            Fitted with the same parameters on the same data as this result
            (checked by :meth:`check_matches`).

        Returns
        -------
        pandas.DataFrame
            Column ``stab. freq.``: the stability-selection frequency.

        Raises
        ------
        TypeError, ValueError
            As :meth:`check_matches`.
        """
        self.check_matches(model)
        freq = self.selection_frequency.sort_values(ascending=False, kind="stable")
        return freq[freq > 0].to_frame("stab. freq.")

    # ---------------------------------------------------------------- display
    def summary(self, top: int = 30) -> VCPCRSummary:
        """Stable set, consensus clusters, the error bound and the parameters.

        Parameters
        ----------
        top : int, default=30
            Most frequent features of the stable set listed (a note counts
            the rest).

        Returns
        -------
        VCPCRSummary
            statsmodels' ``Summary``; ``print`` it, or use ``as_text()``,
            ``as_html()`` or ``as_latex()``.
        """
        check_scalar(top, "top", numbers.Integral, owner="summary", min_val=1)
        smry = VCPCRSummary()
        smry.add_table_2cols(
            None,
            title="Stability selection (complementary pairs)",
            gleft=[(k, [_fmt(v)]) for k, v in self._header_left()],
            gright=[(k, [_fmt(v)]) for k, v in self._header_right()],
            yname=self.fingerprint.yname,
            xname=list(self.stable_set),
        )
        if self.stable_set.size:
            smry.tables.append(self._stable_table(int(top)))
            smry.tables.append(self._modules_text_table())
        notes = self._notes(int(top))
        smry.add_extra_txt(numbered_notes(notes))
        return smry

    def _header_left(self) -> list[tuple[str, Any]]:
        return [
            ("Estimator:", type(self.estimator).__name__),
            ("Family:", family_name(self.estimator.family)),
            ("No. Observations:", self.n_samples),
            ("Subsample size:", self.subsample_size),
            ("No. Pairs:", self.n_pairs),
            ("Min. frequency:", self.min_frequency),
        ]

    def _header_right(self) -> list[tuple[str, Any]]:
        return [
            ("No. Features:", self.n_features),
            ("Mean selected (q):", self.mean_selected),
            ("Threshold (pi):", self.threshold),
            ("Stable features:", int(self.stable_set.size)),
            ("E[false sel.] <=", self.error_bound),
            ("Modules:", len(self.modules)),
        ]

    def _stable_table(self, top: int) -> SimpleTable:
        cluster_of = {g: m for m, members in self.modules.items() for g in members}
        shown = self.stable_set[:top]
        return SimpleTable(
            [[f"{self.selection_frequency[g]:.3f}", cluster_of[g]] for g in shown],
            headers=["frequency", "module"],
            stubs=[str(g) for g in shown],
            title="Stable set",
            txt_fmt={"data_aligns": "r", "colsep": "  "},
        )

    def _modules_text_table(self) -> SimpleTable:
        members = {
            m: [(g, float(self.selection_frequency[g])) for g in features]
            for m, features in self.modules.items()
        }
        rows = composition_rows(members, top=3, width=40)
        table = self.module_table
        return SimpleTable(
            [
                [
                    size,
                    _fraction(table.loc[name, "stability"]),
                    _fraction(table.loc[name, "jaccard"]),
                    text,
                ]
                for name, size, text in rows
            ],
            headers=["size", "stability", "jaccard", "members (frequency)"],
            stubs=[r[0] for r in rows],
            title="Consensus modules of the stable set",
            txt_fmt={"data_aligns": "l", "colsep": "  "},
        )

    def _notes(self, top: int) -> list[str]:
        notes = []
        if self.stable_set.size > top:
            notes.append(
                f"{self.stable_set.size - top} more stable features are not listed "
                f"(summary(top=...) or the stable_set attribute)."
            )
        notes += [
            f"Frequency: share of the {2 * self.n_pairs} fits, on {self.n_pairs} "
            f"pairs of disjoint halves of {self.subsample_size} rows"
            f"{' (stratified by class or event)' if self.stratified else ''}, "
            f"that select the feature; min. frequency: features entering the "
            f"co-clustering.",
            "E[false selections] <= q^2 / ((2 pi - 1) p) (Meinshausen & "
            "Buhlmann 2010) assumes that the noise features are selected "
            "exchangeably and no worse than at random; correlated genes break "
            "exchangeability. Without these assumptions it bounds the expected "
            "number of stable features among those selected with probability "
            "<= q/p on half the data (Shah & Samworth 2013).",
            "Modules: average linkage on 1 - co-clustering of the stable set, "
            "cut at 0.5. stability: mean over member pairs of the share of "
            "subsamples placing both in one cluster when both are selected; "
            "jaccard: mean over subsamples of the best-match Jaccard with a "
            "subsample's cluster (fpc::clusterboot; >= 0.75 stable, < 0.6 "
            "not to be trusted).",
        ]
        if self.n_failed:
            reason, count = most_common_message(list(self.failures.dropna()))
            notes.append(
                f"{self.n_failed} fit(s) failed and count as empty selections "
                f"(most often, {count} time(s): {reason})."
            )
        return notes

    def plot(self, axes: Any = None, *, top: int = 50) -> Any:
        """Plot the selection frequencies and the co-clustering of the stable set.

        See :func:`vcpcr.plotting.plot_stability`.

        Parameters
        ----------
        axes : sequence of two matplotlib.axes.Axes, optional
            Axes to draw on (a new figure otherwise).
        top : int, default=50
            Most frequent features shown in the frequency panel.

        Returns
        -------
        ndarray of matplotlib.axes.Axes
            The two axes.
        """
        from vcpcr.plotting import plot_stability

        return plot_stability(self, axes=axes, top=top)


def _stability_result(
    labels: pd.DataFrame,
    subsamples: NDArray[np.intp],
    *,
    threshold: float,
    min_frequency: float,
    n_samples: int,
    stratified: bool,
    estimator: Any,
    fingerprint: Fingerprint,
    failures: pd.Series,
    complete: bool = True,
) -> StabilityResult:
    """Compute every attribute of a :class:`StabilityResult` from the labels."""
    L = labels.to_numpy()
    names = labels.columns
    n_pairs, n_features = labels.shape[0] // 2, labels.shape[1]
    subsample_size = subsamples.shape[1]
    freq = selection_frequency(L)
    frequency = pd.Series(freq, index=names, name="frequency")
    order = np.argsort(-freq, kind="stable")
    stable_set = names[order[freq[order] >= threshold]]
    mean_selected = float((L >= 0).sum(axis=1).mean())
    bound = error_bound(mean_selected, n_features, threshold)
    candidates = order[freq[order] >= min_frequency]
    features = names[candidates]
    coc = coclustering(L, candidates)
    clusters = _consensus(stable_set.size, features, coc, frequency)
    guarantee = (
        f"Stability selection ({2 * n_pairs} fits on halves of "
        f"{subsample_size} rows): stab. freq. is the share of fits "
        f"selecting a gene; stability, the share of fits placing two members "
        f"of a cluster together when both are selected (mean over pairs); "
        f"jaccard, the cluster's best-match Jaccard across the fits "
        f"(fpc::clusterboot: >= 0.75 stable, < 0.6 not to be trusted). The "
        f"{stable_set.size} genes with stab. freq. >= {threshold:g} "
        f"hold at most {bound:.3g} false selections in expectation "
        f"if noise genes are selected exchangeably and no better than at "
        f"random (Meinshausen & Buhlmann 2010). These numbers measure "
        f"reproducibility, not significance."
    )
    return StabilityResult(
        selection_frequency=frequency,
        stable_set=stable_set,
        threshold=threshold,
        mean_selected=mean_selected,
        error_bound=bound,
        labels=labels,
        subsamples=subsamples,
        failures=failures,
        n_failed=int(failures.notna().sum()),
        min_frequency=min_frequency,
        coclustering_features=features,
        coclustering=coc,
        modules=clusters,
        module_table=_module_table(labels, frequency, clusters),
        n_pairs=n_pairs,
        n_samples=n_samples,
        subsample_size=subsample_size,
        n_features=n_features,
        stratified=stratified,
        estimator=estimator,
        fingerprint=fingerprint,
        guarantee=guarantee,
        complete=complete,
    )


def _consensus(
    n_stable: int,
    features: pd.Index,
    coc: sparse.csr_array,
    frequency: pd.Series,
) -> dict[str, list[str]]:
    """Consensus clusters of the stable set, the first ``n_stable`` ``features``.

    ``features`` are the co-clustering's (most frequent first), ``coc`` its
    matrix; clusters by size, then mean ``frequency``.
    """
    stable = sparse.csr_array(coc[:n_stable][:, :n_stable])
    cluster = consensus_modules(stable)
    names = features[:n_stable]
    groups = [names[cluster == k] for k in range(int(cluster.max(initial=-1)) + 1)]
    ranked = sorted(groups, key=lambda g: (-g.size, -frequency[g].mean()))
    return {f"module_{i}": list(g) for i, g in enumerate(ranked, start=1)}


def _module_table(
    labels: pd.DataFrame, frequency: pd.Series, clusters: Mapping[str, Sequence[str]]
) -> pd.DataFrame:
    """``size``, ``stability``, ``jaccard`` and ``frequency`` per cluster."""
    L = labels.to_numpy()
    rows = []
    for members in clusters.values():
        pos = np.asarray(labels.columns.get_indexer(members), dtype=np.intp)
        rows.append(
            {
                "size": len(members),
                "stability": mean_coclustering(L, pos),
                "jaccard": float(best_match_jaccard(L, pos).mean()),
                "frequency": float(frequency.iloc[pos].mean()),
            }
        )
    columns = ["size", "stability", "jaccard", "frequency"]
    table = pd.DataFrame(rows, index=list(clusters), columns=columns)
    return table.astype({"size": np.intp})


def _subsample_labels(
    template: VCPCR | VCPCRCV,
    seed: int,
    X: Any,
    y: Any,
    design: NDArray[np.float64],
    rest: FitInput,
    rows: NDArray[np.intp],
) -> pd.Series | str:
    """Fit a seeded clone on some rows; its cluster of each feature, or why not.

    The rows of the checked data (``design`` and ``rest``, see
    :func:`input_apart`), through :func:`fit_part`.
    """
    try:
        model = fit_part(template, seed, input_joined(design, rest), rows, X, y)
    except ValueError as exc:  # vcpcr's errors about the data of this subsample
        return str(exc)
    return pd.Series(model.labels_, index=model.membership_.index)


def _complementary_pairs(
    n_samples: int, strata: NDArray[Any] | None, n_pairs: int, rng: np.random.Generator
) -> NDArray[np.intp]:
    """Rows of ``2 n_pairs`` subsamples of ``n // 2``; pairs ``2i, 2i+1`` disjoint."""
    half = n_samples // 2
    subsamples = []
    for first, second in draw_splits(n_samples, strata, n_pairs, 0.5, rng):
        if second.size > half:  # odd n: one row sits out of this pair
            second = np.sort(rng.choice(second, size=half, replace=False))
        subsamples += [first, second]
    return np.asarray(subsamples, dtype=np.intp)


def stability_selection(
    estimator: VCPCR | VCPCRCV,
    X: Any,
    y: Any = None,
    *,
    n_pairs: int = 50,
    threshold: float = 0.6,
    min_frequency: float = 0.1,
    n_jobs: int | None = None,
    verbose: bool | int | None = None,
    random_state: Any = None,
    checkpoint: Any = None,
    retune: bool | None = None,
) -> StabilityResult:
    r"""Stability selection of features and their clusters by complementary pairs.

    Each of ``n_pairs`` random pairs splits the rows into two disjoint halves
    of ``n // 2`` rows (stratified by class or event indicator, and by
    stratum for a stratified Cox template, whose fits are stratified); a clone of
    the unfitted template is fitted on each half (a ``VCPCRCV`` is tuned
    inside each half). A feature's selection frequency is the share of these
    ``2 n_pairs`` fits that select it; how often two features share a
    cluster when both are selected gives the consensus clusters.

    Parameters
    ----------
    estimator : VCPCR or VCPCRCV
        The model to resample, cloned for every half; its ``random_state``
        is replaced by a seed per half drawn from ``random_state``. A
        ``VCPCR``, fitted or not: its parameters; a fitted ``VCPCRCV``: the
        model it chose (``sklearn.base.clone(estimator.best_estimator_)``,
        its hyperparameters fixed), unless ``retune=True``; an unfitted
        ``VCPCRCV`` is tuned inside each half.
    X : array-like of shape (n_samples, n_features) or DataFrame
        Predictors (with a formula template, the DataFrame).
    y : array-like of shape (n_samples,), optional
        Response as the template's ``fit`` takes it (None with a formula).
    n_pairs : int, default=50
        Number of complementary pairs (``2 n_pairs`` fits).
    threshold : float, default=0.6
        :math:`\pi \in (0.5, 1]`: features selected in at least this share
        of the fits form the stable set (the error bound needs
        :math:`\pi > 1/2`).
    min_frequency : float, default=0.1
        Features selected in at least this share of the fits enter the
        co-clustering matrix; in ``(0, threshold]``. The number of such
        features is at most ``q / min_frequency`` (``q`` the mean number
        selected per fit), so the matrix stays small whatever the number of
        features.
    n_jobs : int or None, default=None
        Fits run in parallel through joblib (any backend); the result does
        not depend on it.
    verbose : bool, int or None, default=None
        A progress bar over the ``2 n_pairs`` fits. None: shown when running
        interactively (a terminal or a Jupyter kernel) and not under CI,
        never in a log file; True or an int >= 1: always; False or 0: never.
        A ``VCPCRCV`` template's own bar is off. Outside a terminal, True
        prints a line to standard error every 10 seconds: the fits done,
        the time elapsed and an estimate of the time left.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the halves and the fits.
    checkpoint : str or os.PathLike, optional
        A file that keeps every finished fit (JSON Lines, see
        :class:`vcpcr._parallel.Checkpoint`; nothing is unpickled); a call
        with the same template, data and parameters fits only the halves
        the file does not hold, and a file of other data or parameters is
        refused. Needs an int ``random_state``.
    retune : bool or None, default=None
        ``VCPCRCV`` only: True tunes the ``VCPCRCV`` (fitted or not) inside
        each half; False (or None) resamples a fitted ``VCPCRCV``'s chosen
        model; None tunes an unfitted one inside each half.

    Returns
    -------
    StabilityResult
        Frequencies, stable set, error bound, co-clustering, consensus
        clusters and their stability. When a ``KeyboardInterrupt`` stops
        the run: over the pairs whose two halves finished, ``complete``
        False (a warning says how many fits of how many finished).

    Raises
    ------
    TypeError
        If ``estimator`` is not a ``VCPCR`` / ``VCPCRCV``, or a parameter has
        the wrong type.
    ValueError
        If ``retune`` does not fit the estimator (True for a ``VCPCR``, False
        for an unfitted ``VCPCRCV``), a parameter is out of range, ``X`` and
        ``y`` do not match, a half would have fewer than 3 rows, or a class
        (event status) has fewer than 2 rows.

    See Also
    --------
    StabilityResult : What the numbers mean and assume.

    Notes
    -----
    With :math:`q` the mean number of features selected per half and
    :math:`p` the number of features, the stable set's expected number of
    false selections is at most :math:`q^2 / ((2\pi - 1) p)` (Meinshausen &
    Bühlmann 2010) under exchangeability and better-than-random selection of
    the noise features; Shah & Samworth (2013) show what the complementary
    pairs guarantee without those assumptions (see :class:`StabilityResult`).
    For odd ``n`` one row, drawn at random, sits out of each pair. The cost
    is ``2 n_pairs`` fits on half the rows.

    References
    ----------
    .. [1] Meinshausen, N., Bühlmann, P. (2010). Stability selection. JRSS-B
       72(4), 417-473.
    .. [2] Shah, R. D., Samworth, R. J. (2013). Variable selection with error
       control: another look at stability selection. JRSS-B 75(1), 55-80.

    Examples
    --------
    >>> from vcpcr import VCPCR
    >>> from vcpcr.inference import stability_selection
    >>> from vcpcr.simulate import make_paper_data
    >>> data = make_paper_data(n_samples=60, random_state=0)
    >>> template = VCPCR(n_clusters=4, lam_ratio=0.4, n_init=2)
    >>> res = stability_selection(template, data.X, data.y, n_pairs=5,
    ...                           random_state=0)
    >>> res.selection_frequency.shape
    (200,)
    >>> bool(res.selection_frequency[res.stable_set].min() >= 0.6)
    True
    """
    owner = "stability_selection"
    estimator = check_template(estimator, owner, retune)
    real = numbers.Real
    check_scalar(n_pairs, "n_pairs", numbers.Integral, owner=owner, min_val=1)
    check_scalar(
        threshold,
        "threshold",
        real,
        owner=owner,
        min_val=0.5,
        max_val=1.0,
        include_min=False,
    )
    check_scalar(
        min_frequency,
        "min_frequency",
        real,
        owner=owner,
        min_val=0.0,
        max_val=float(threshold),
        include_min=False,
    )
    progress = progress_shown(verbose, owner)
    data = resampling_rows(estimator, X, y, owner)
    n = data.n_samples
    if n // 2 < 3:
        raise ValueError(
            f"{owner} fits on halves of n // 2 rows; X has {n} rows, so halves "
            f"of {n // 2}. Each half needs at least 3 rows."
        )
    rng = check_random_state(random_state)
    subsamples = _complementary_pairs(n, data.strata, int(n_pairs), rng)
    seeds = task_seeds(rng, len(subsamples))
    design, rest = input_apart(data.data)  # the data goes to the workers once
    tasks = [
        (estimator, seed, data.X, data.y, design, rest, rows)
        for seed, rows in zip(seeds, subsamples, strict=True)
    ]
    names = list(data.fingerprint.feature_names)
    saved = Checkpoint.open(
        checkpoint,
        owner,
        random_state,
        (estimator, X, y, subsamples, seeds),
        len(tasks),
        encode=lambda fit: (
            fit if isinstance(fit, str) else fit.reindex(names, fill_value=-1).tolist()
        ),
        decode=lambda stored: (
            stored if isinstance(stored, str) else pd.Series(stored, index=names)
        ),
    )
    fits = run_parallel(
        _subsample_labels,
        tasks,
        n_jobs=n_jobs,
        verbose=progress,
        desc=owner,
        interruptible=True,
        checkpoint=saved,
    )
    done = set(finished(fits))
    pairs = [i for i in range(int(n_pairs)) if {2 * i, 2 * i + 1} <= done]
    if not pairs:  # an interrupt before a whole pair was fitted
        raise KeyboardInterrupt
    kept = [2 * i + h for i in pairs for h in (0, 1)]
    complete = len(pairs) == int(n_pairs)
    fits, subsamples, n_pairs = [fits[i] for i in kept], subsamples[kept], len(pairs)
    index = pd.MultiIndex.from_product(
        [range(int(n_pairs)), [0, 1]], names=["pair", "half"]
    )
    failures = pd.Series(
        [fit if isinstance(fit, str) else None for fit in fits],
        index=index,
        dtype=object,
        name="failure",
    )
    check_failures(
        list(failures),
        owner,
        "subsamples",
        "an empty selection, so the error bound stays valid but the "
        "frequencies lose power",
    )
    empty = pd.Series(-1, index=names)
    labels = pd.DataFrame(
        [
            (empty if isinstance(s, str) else s)
            .reindex(names, fill_value=-1)
            .to_numpy()
            for s in fits
        ],
        index=index,
        columns=pd.Index(names),
    )
    return _stability_result(
        labels,
        subsamples,
        threshold=float(threshold),
        min_frequency=float(min_frequency),
        n_samples=int(n),
        stratified=data.strata is not None,
        estimator=estimator,
        fingerprint=data.fingerprint,
        failures=failures,
        complete=complete,
    )
