r"""Multi-split p-values: honest evidence for VC-PCR's clusters and features.

Wasserman & Roeder's sample splitting, repeated and aggregated as
Meinshausen, Meier & Bühlmann (2009): steps 0-1 (and the tuning, with a
``VCPCRCV`` template) choose the features and clusters on one part of the rows;
the other part tests the clusters (step 2) and the features themselves (the
hierarchical descent of :mod:`vcpcr.inference._hierarchy`); the per-split feature
p-values are aggregated over the splits by :func:`aggregate_pvalues`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from vcpcr._checks import check_array, check_fraction, check_scalar
from vcpcr._cv import GRID_PARAMS, VCPCRCV
from vcpcr._families import family_name
from vcpcr._input import take
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
from vcpcr._summary import VCPCRSummary, evidence_table, numbered_notes
from vcpcr.inference._common_tree import (
    TREE_MAX_FEATURES,
    CommonTree,
    SplitSelection,
    common_tree,
    descend_tree,
    tree_from_linkage,
)
from vcpcr.inference._hierarchy import (
    FACTOR_SAMPLE,
    SplitTests,
    descend,
    minimal_rejections,
    with_strata,
)
from vcpcr.inference._resampling import (
    Fingerprint,
    Rows,
    check_resampling,
    check_template,
    draw_splits,
    fit_part,
    input_apart,
    input_joined,
    resampling_rows,
)

__all__ = [
    "ALPHA_CLUSTERS",
    "GENE_GUARANTEE",
    "GUARANTEE",
    "MODULE_GUARANTEE",
    "TREE_GUARANTEE",
    "MultiSplitResult",
    "aggregate_pvalues",
    "multi_split",
]

#: What the feature-level p-values (``pvalues``) guarantee.
GENE_GUARANTEE = (
    "gene P (hierarchical descent): each split tests, on its second part, "
    "clusters of the genes its first part selected (all of them, each module, "
    "its sub-modules, each gene) in the regression of the outcome on those "
    "genes and the covariates, with Meinshausen's hierarchical adjustment; "
    "the aggregated gene P controls the family-wise error rate over the genes "
    "whose coefficient in that regression is zero, provided the selection "
    "keeps every gene that acts on the outcome (the screening property)."
)
#: What the cluster-membership p-values (``membership_pvalues``) guarantee.
MODULE_GUARANTEE = (
    "member P (module test, Meinshausen, Meier & Buhlmann 2009): each "
    "split's module p-values are valid (modules chosen on the first part, "
    "tested on the second) and a gene's member P says that it belongs to a "
    "module associated with the outcome; a gene unrelated to the outcome "
    "that the clustering put into an active module is rejected with it."
)
#: What the common tree's p-values (``tree_pvalues``, ``tree_clusters``) guarantee.
TREE_GUARANTEE = (
    "tree P (Mandozzi & Buhlmann 2016): the clusters of one tree built from X "
    "alone are tested top-down in every split (in the regression of the "
    "outcome on the selected genes and the covariates) and aggregated per "
    "cluster; rejecting those with tree P <= 0.05 controls the family-wise "
    "error rate over the clusters that contain no active gene, provided "
    "every split's selection keeps every gene that acts on the outcome (the "
    "screening property)."
)
#: Both sentences (a note of the summaries).
GUARANTEE = f"{GENE_GUARANTEE} {MODULE_GUARANTEE}"
#: Level at which each split's minimal rejected clusters are recorded.
ALPHA_CLUSTERS = 0.05
#: The gene-level reason of a split when ``multi_split(gene_level=False)``.
NO_GENE_LEVEL = "the gene-level test was not asked for (gene_level=False)"


# ------------------------------------------------------------- aggregation
def _gamma_grid(n_splits: int, gamma_min: float) -> NDArray[np.float64]:
    """``k / B`` for ``k = ceil(gamma_min B), ..., B - 1``; ``[1.0]`` if empty."""
    first = math.ceil(round(gamma_min * n_splits, 9))
    grid = np.arange(first, n_splits) / n_splits
    return grid if grid.size else np.array([1.0])


def aggregate_pvalues(P: ArrayLike, gamma_min: float = 0.05) -> Any:
    r"""Aggregate per-split p-values with the adaptive quantile rule.

    For each column (feature) ``j`` of the ``(n_splits, n_features)`` matrix
    ``P`` of per-split p-values,

    .. math::

        P_j = \min\Bigl(1,\ (1 - \log\gamma_{\min})
        \min_{\gamma \in G} \min\bigl(1,\ q_\gamma(\{p_j^{(b)} / \gamma\}_b)\bigr)
        \Bigr).

    Parameters
    ----------
    P : array-like of shape (n_splits, n_features)
        Per-split p-values in ``[0, 1]`` (a DataFrame gives a Series).
    gamma_min : float, default=0.05
        Smallest quantile, in ``(0, 1)``.

    Returns
    -------
    ndarray of shape (n_features,) or pandas.Series
        The aggregated p-values (a Series indexed by the columns of a
        DataFrame ``P``).

    Raises
    ------
    ValueError
        If ``P`` is not 2-d with at least one row, holds values outside
        ``[0, 1]`` or NaN, or ``gamma_min`` is outside ``(0, 1)``.

    See Also
    --------
    multi_split : Computes ``P`` and aggregates it.

    Notes
    -----
    With ``B`` splits, the grid is :math:`G = \{k / B : k = \lceil
    \gamma_{\min} B \rceil, \dots, B - 1\}`, R ``hdi::multi.split``'s default.
    The quantile is the inverse of the empirical distribution function
    (R's ``quantile(type = 1)``, numpy's ``method="inverted_cdf"``): at
    :math:`\gamma = k / B` it is the ``k``-th smallest of the ``B`` values,
    so :math:`q_\gamma / \gamma = p_{(k)} B / k`. The factor
    :math:`1 - \log\gamma_{\min}` pays for searching over the grid
    (Meinshausen, Meier & Bühlmann 2009, Theorem 3; ``hdi`` uses
    :math:`1 - \log\min G`, which is at most as large). A feature needs small
    p-values in at least :math:`\lceil \gamma_{\min} B \rceil` splits: with
    ``B = 20`` and ``gamma_min = 0.05`` a single split can reject it, so use
    ``B >= 50``. When the grid holds one
    value the rule is their fixed-:math:`\gamma` aggregation (Theorem 1),
    without the factor, as in ``hdi``; when it is empty (one split, or
    :math:`\gamma_{\min} > (B - 1) / B`) the grid is :math:`\{1\}`, the
    largest p-value: with one split, :math:`P_j = p_j^{(1)}`.

    References
    ----------
    .. [1] Meinshausen, N., Meier, L., Bühlmann, P. (2009). p-Values for
       high-dimensional regression. JASA 104(488), 1671-1681.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr.inference import aggregate_pvalues
    >>> P = np.array([[0.001, 1.0], [0.002, 1.0], [0.004, 1.0], [1.0, 0.5]])
    >>> aggregate_pvalues(P, gamma_min=0.25).round(4).tolist()
    [0.0095, 1.0]
    """
    check_fraction(gamma_min, "gamma_min", owner="aggregate_pvalues")
    columns = P.columns if isinstance(P, pd.DataFrame) else None
    if np.ndim(P) != 2:
        raise ValueError(
            f"P must be a 2-d array of p-values, one row per split and one "
            f"column per feature (n_splits, n_features); got shape "
            f"{np.shape(P)}. One feature's p-values go in as one column "
            f"(P.reshape(-1, 1))."
        )
    if np.shape(P)[0] == 0:
        raise ValueError("P has no row: it needs the p-values of at least one split.")
    if np.isnan(np.asarray(P, dtype=np.float64)).any():
        raise ValueError(
            "P contains NaN: every split needs a p-value for every feature (a "
            "feature a split did not test gets p = 1)."
        )
    values = check_array(P, "P")
    if np.any((values < 0) | (values > 1)):
        raise ValueError(
            f"P must hold p-values in [0, 1]; got values from {values.min():g} "
            f"to {values.max():g}."
        )
    n_splits = values.shape[0]
    grid = _gamma_grid(n_splits, float(gamma_min))
    ordered = np.sort(values, axis=0)
    # inverted-cdf quantile at k / B: the k-th smallest (row k - 1)
    ranks = np.rint(grid * n_splits).astype(int)
    scaled = ordered[ranks - 1] / grid[:, None]
    penalty = 1 - math.log(gamma_min) if grid.size > 1 else 1.0
    aggregated = np.minimum(1.0, penalty * np.minimum(1.0, scaled).min(axis=0))
    if columns is None:
        return aggregated
    return pd.Series(aggregated, index=columns, name="pvalue")


# ------------------------------------------------------------- one split
class _Descent(NamedTuple):
    """One split's feature-level descent (see :mod:`vcpcr.inference._hierarchy`)."""

    problem: str | None = None
    features: tuple[str, ...] = ()
    pvalues: tuple[float, ...] = ()
    n_tested: int = 0
    method: str = "none"
    #: minimal rejected clusters at :data:`ALPHA_CLUSTERS`: (level, members, p)
    clusters: tuple[tuple[str, tuple[str, ...], float], ...] = ()
    #: the split's tests of clusters of ``features`` (kept for the common tree)
    tests: SplitTests | None = None


class _Split(NamedTuple):
    """What one split gives: a reason it was skipped, or its p-values."""

    skipped: str | None
    clusters: tuple[str, ...] = ()
    members: tuple[tuple[str, ...], ...] = ()
    pvalues: tuple[float, ...] = ()
    params: dict[str, Any] | None = None
    descent: _Descent = _Descent()


def _split(
    estimator: VCPCR | VCPCRCV,
    rows: Rows,
    first: NDArray[np.intp],
    second: NDArray[np.intp],
    seed: int,
    keep_tests: bool = False,
    gene_level: bool = True,
    factor_sample: int = FACTOR_SAMPLE,
) -> _Split:
    """Choose the clusters on ``first``, test them on ``second``.

    ``keep_tests`` keeps the split's :class:`~vcpcr.inference._hierarchy.SplitTests`
    (its second part's features and fits) for the common tree;
    ``gene_level=False`` skips the descent (feature-level p = 1, and a
    reason); ``factor_sample`` is the descent's (:func:`descend`).
    """
    family, prepared = rows.family, rows.data.design.prepared
    problem = family.part_problem(prepared, first, second)
    if problem is not None:
        return _Split(f"the split is unusable: {problem}")
    try:
        model = fit_part(estimator, seed, rows.data, first, rows.X, rows.y)
        design = model.outcome_design(take(rows.X, second))  # covariates, M
    except ValueError as exc:
        return _Split(
            f"fitting the first part (or transforming the second) failed: {exc}"
        )
    chosen = getattr(model, "best_params_", None)  # a VCPCRCV template's grid point
    params = None if chosen is None else {k: chosen[k] for k in GRID_PARAMS}
    if tuple(str(c) for c in model.membership_.index) != rows.fingerprint.feature_names:
        return _Split(
            "the first part's design has other columns than the full data's "
            "(a categorical level missing from it)"
        )
    clusters = tuple(str(c) for c in model.membership_.columns)
    if not clusters:
        return _Split(None, params=params)
    n_strata = len(getattr(model, "strata_names_", ()))
    strata = design.iloc[:, design.shape[1] - n_strata :] if n_strata else None
    design = design.iloc[:, : design.shape[1] - n_strata]
    try:
        part = family.restrict(prepared, second)
        family.check_rows(part)  # what prepare raises on the second part's rows
        outcome = part.outcome
        names = [str(c) for c in design.columns]
        result = family.fit(design.to_numpy(), outcome, names, rows.yname, strata)
        if strata is not None:  # the descent's Cox fits, within the strata
            outcome = with_strata(outcome, strata.to_numpy())
    except (ValueError, np.linalg.LinAlgError) as exc:
        return _Split(f"step 2 on the second part failed: {exc}")
    table = family.table(result, 0.05)
    by_name = dict(zip(table.names, np.asarray(table.pvalues), strict=True))
    pvalues = tuple(float(by_name[c]) for c in clusters)
    if not np.all(np.isfinite(pvalues)):
        return _Split("step 2 on the second part gave non-finite p-values")
    members = tuple(tuple(model.clusters_[c]) for c in clusters)
    if not gene_level:
        features = tuple(f for m in members for f in m)
        descent = _Descent(NO_GENE_LEVEL, features, (1.0,) * len(features))
        return _Split(None, clusters, members, pvalues, params, descent)
    descent = _descent(
        model, rows, (first, second), design, outcome, members, seed, factor_sample
    )
    if not keep_tests:
        descent = descent._replace(tests=None)
    return _Split(None, clusters, members, pvalues, params, descent)


def _descent(
    fitted: VCPCR | VCPCRCV,
    rows: Rows,
    parts: tuple[NDArray[np.intp], NDArray[np.intp]],
    design: pd.DataFrame,
    outcome: NDArray[np.float64],
    members: tuple[tuple[str, ...], ...],
    seed: int,
    factor_sample: int = FACTOR_SAMPLE,
) -> _Descent:
    """Feature-level p-values of one split: the hierarchical descent on ``S``.

    The tree comes from the first part's standardized features, the tests from
    the second part's (standardized with the first part's means and standard
    deviations, as ``transform`` does) beside the template's covariates.
    """
    names = [str(c) for c in fitted.membership_.index]
    column = {name: j for j, name in enumerate(names)}
    features = tuple(f for m in members for f in m)
    cols = [column[f] for f in features]
    position = {f: i for i, f in enumerate(features)}
    clusters = [[position[f] for f in m] for m in members]
    try:
        X1 = fitted.standardized_design(take(rows.X, parts[0]))[:, cols]
        X2 = fitted.standardized_design(take(rows.X, parts[1]))[:, cols]
        covariates = design.iloc[:, : len(fitted.covariate_names_)].to_numpy(
            dtype=np.float64
        )
        result = descend(
            rows.family.distribution,
            X1,
            X2,
            covariates,
            outcome,
            clusters,
            random_state=seed,
            factor_sample=factor_sample,
        )
    except (ValueError, np.linalg.LinAlgError) as exc:
        return _Descent(
            f"the gene-level test failed: {exc}", features, (1.0,) * len(features)
        )
    rejected = tuple(
        (
            result.nodes[i].level,
            tuple(features[j] for j in result.nodes[i].members),
            float(result.hierarchical[i]),
        )
        for i in minimal_rejections(result.nodes, result.hierarchical, ALPHA_CLUSTERS)
    )
    return _Descent(
        result.problem,
        features,
        tuple(float(p) for p in result.feature_pvalues),
        result.n_tested,
        result.method,
        rejected,
        result.tests,
    )


def _apart(rows: Rows) -> tuple[tuple[Any, ...], Rows]:
    """Split ``rows`` into its data and a small rest, for :func:`_split_task`.

    :func:`vcpcr._parallel.run_parallel` sends an argument that every task
    shares to the workers once only when it is the data itself (an array, a
    DataFrame, an Index), not a dataclass holding it: the data (``X``, ``y``,
    the checked design matrix, the feature names) is passed apart, and the
    rest keeps what is small (the checked data without its matrix, the
    fingerprint without its names and its standardization, which no split
    reads).
    """
    fingerprint = rows.fingerprint
    design, checked = input_apart(rows.data)
    data = (rows.X, rows.y, design, pd.Index(fingerprint.feature_names))
    empty = np.empty(0)
    small = replace(fingerprint, feature_names=(), mean=empty, scale=empty)
    return data, replace(
        rows, X=None, y=None, data=checked, fingerprint=small, clustered=None
    )


def _split_task(
    estimator: VCPCR | VCPCRCV,
    X: Any,
    y: Any,
    design: NDArray[np.float64],
    names: pd.Index,
    rest: Rows,
    first: NDArray[np.intp],
    second: NDArray[np.intp],
    seed: int,
    keep_tests: bool,
    gene_level: bool = True,
    factor_sample: int = FACTOR_SAMPLE,
) -> _Split:
    """:func:`_split` of the rows that :func:`_apart` took apart."""
    fingerprint = replace(rest.fingerprint, feature_names=tuple(names))
    data = input_joined(design, rest.data)
    rows = replace(rest, X=X, y=y, data=data, fingerprint=fingerprint)
    return _split(
        estimator, rows, first, second, seed, keep_tests, gene_level, factor_sample
    )


# ----------------------------------------------------------------- result
#: The columns of ``MultiSplitResult.tree_clusters`` and their types.
_TREE_COLUMNS = {
    "node": "int64",
    "parent": "int64",
    "size": "int64",
    "members": "object",
    "pvalue": "float64",
    "minimal": "bool",
}


def _tree_frame(rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    """``tree_clusters`` from its rows, typed even when empty."""
    frame = pd.DataFrame(rows, columns=list(_TREE_COLUMNS))
    return frame.astype(_TREE_COLUMNS)


#: The evidence columns of the summaries: descent, cluster membership, selection.
_COLUMNS = ["gene P", "member P", "sel. freq."]


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class MultiSplitResult(Result):
    """Multi-split p-values of a VC-PCR specification on one data set.

    Made by :func:`multi_split`; plain attributes, nothing is recomputed.

    Attributes
    ----------
    pvalues : pandas.Series
        Aggregated feature-level p-values of the hierarchical descent (index:
        feature names), for "feature j has a non-zero coefficient in the
        regression of the outcome on the features a split selected" (see
        :mod:`vcpcr.inference._hierarchy` and ``docs/inference.md``).
    split_pvalues : pandas.DataFrame of shape (n_splits, n_features)
        The per-split feature-level p-values that :func:`aggregate_pvalues`
        aggregates into ``pvalues`` (index: split number): the hierarchical
        p-value of the feature's leaf in the split's tree; 1 for a feature the split
        did not select, for every feature of a split whose descent could not run
        (too many selected features for the second part, a full model that
        cannot be fitted: ``splits["gene_reason"]``), and for every feature of a
        split that was skipped (its fit or test failed): the aggregation's
        error bound counts every split drawn, so a failed split is evidence
        for nothing, never a dropped one.
    membership_pvalues : pandas.Series
        Aggregated cluster-membership p-values, for "feature j belongs to a
        cluster associated with the outcome" (a noise feature in an active cluster
        is rejected with it).
    split_membership_pvalues : pandas.DataFrame of shape (n_splits, n_features)
        Their per-split values: the Bonferroni-adjusted p-value of the feature's
        cluster, 1 for a feature the split did not select and for every feature of a
        skipped split.
    modules : pandas.DataFrame
        One row per cluster per used split: ``split``, ``module`` (its name in
        that split's model), ``size``, ``members`` (tuple of feature names),
        ``pvalue`` (step 2 on the second part), ``n_modules`` (clusters tested
        in the split) and ``pvalue_adjusted`` (``min(1, pvalue *
        n_modules)``).
    clusters : pandas.DataFrame
        The minimal rejected clusters of each split's descent at level
        ``ALPHA_CLUSTERS`` (0.05; rejected, with no rejected child): ``split``,
        ``level`` (``"selected"``, ``"module"``, ``"sub-module"`` or
        ``"gene"``), ``size``, ``members`` and ``pvalue`` (hierarchical). Power
        by resolution reads from it.
    splits : pandas.DataFrame
        One row per split: ``used``, ``reason`` (why it was skipped),
        ``n_modules``, ``n_selected``, ``gene_level`` (whether the descent
        ran), ``gene_reason`` (why not), ``n_nodes_tested``, ``gene_test``
        (``"F"``, ``"LR"``, ``"Firth LR"`` when the features separate the
        second part's classes, ``"none"``) and, with a
        ``VCPCRCV`` template, the hyperparameters chosen in the split.
    selection_frequency : pandas.Series
        Share of the splits whose first part selected each feature (a
        skipped split selected nothing).
    tree_pvalues : pandas.Series or None
        Per feature, the adjusted p-value of its single-feature node in the common
        tree (Mandozzi & Bühlmann 2016; see ``multi_split``'s
        ``common_tree``): 1 for a feature whose node was never examined (an
        ancestor not rejected at ``ALPHA_CLUSTERS``). None when no common
        tree was tested (``tree_info`` says why).
    tree_clusters : pandas.DataFrame
        The rejected clusters of the common tree at ``ALPHA_CLUSTERS``,
        root first: ``node`` (pre-order position in the tree), ``parent``,
        ``size``, ``members`` (tuple of feature names), ``pvalue`` (the
        adjusted p-value: the largest aggregated p-value on the path from
        the root) and ``minimal`` (no child of the cluster is rejected: the
        finest resolution of the evidence). Empty without a tree.
    tree : vcpcr.inference._common_tree.CommonTree or None
        The common tree (nodes in pre-order: ``tree.members(node)`` are the
        column positions of a node's features, ``tree.parent``,
        ``tree.children``); None without one.
    tree_info : str
        How the common tree was built (``"average linkage on 1 - |corr| of
        X"``, ``"the linkage passed as common_tree"``), or why none was
        tested; with the number of its nodes examined.
    n_splits, n_splits_used, n_splits_skipped : int
        Splits drawn, used and skipped.
    n_splits_gene_level : int
        Used splits whose descent ran (the others give feature-level p = 1).
    gamma_min : float
        Smallest quantile of the aggregation.
    train_size : float
        Share of the rows in the part that chooses the clusters.
    estimator : VCPCR or VCPCRCV
        The (unfitted) template.
    fingerprint : vcpcr.inference._resampling.Fingerprint
        Template parameters and data; :meth:`check_matches` compares a model
        with it.
    yname : str
        Name of the response.
    complete : bool
        False when an interrupt stopped the run: every number is over the
        splits that finished (``n_splits`` of them).

    See Also
    --------
    multi_split : Computes it.
    """

    pvalues: pd.Series
    split_pvalues: pd.DataFrame
    membership_pvalues: pd.Series
    split_membership_pvalues: pd.DataFrame
    modules: pd.DataFrame
    clusters: pd.DataFrame
    splits: pd.DataFrame
    selection_frequency: pd.Series
    gamma_min: float
    train_size: float
    estimator: VCPCR | VCPCRCV = field(repr=False)
    fingerprint: Fingerprint = field(repr=False)
    tree_pvalues: pd.Series | None = None
    tree_clusters: pd.DataFrame = field(default_factory=lambda: _tree_frame([]))
    tree: CommonTree | None = field(default=None, repr=False)
    tree_info: str = "no common tree was tested"
    complete: bool = True
    n_splits: int = field(init=False)
    n_splits_used: int = field(init=False)
    n_splits_skipped: int = field(init=False)
    n_splits_gene_level: int = field(init=False)
    yname: str = field(init=False)

    def __post_init__(self) -> None:
        """Count the splits; take the response's name from the fingerprint."""
        used = int(self.splits["used"].sum())
        counted = {
            "n_splits": len(self.splits),
            "n_splits_used": used,
            "n_splits_skipped": len(self.splits) - used,
            "n_splits_gene_level": int(self.splits["gene_level"].sum()),
            "yname": self.fingerprint.yname,
        }
        for name, value in counted.items():  # frozen: set once, at construction
            object.__setattr__(self, name, value)

    # ------------------------------------------------- the summary protocol
    @property
    def guarantee(self) -> str:
        """What the p-values guarantee and what the common tree found.

        The note ``model.summary(inference=result)`` shows: the feature-level
        and cluster-membership guarantees, then the common tree's minimal
        rejected clusters with its guarantee.
        """
        return f"{GUARANTEE} {self._tree_note()}"

    def check_matches(self, model: Any) -> None:
        """Raise unless ``model`` is the template's specification fitted on the data.

        Parameters
        ----------
        model : VCPCR or VCPCRCV
            A fitted estimator.

        Raises
        ------
        ValueError
            If the model's class, parameters (other than ``n_jobs``,
            ``verbose``, ``random_state``) or data (number of samples,
            features, response name, the column means and standard deviations)
            differ from the result's.
        """
        self.fingerprint.check(model, "This MultiSplitResult")

    def module_evidence(self, model: Any) -> pd.DataFrame:
        """Honest evidence for each cluster of a model fitted on all the data.

        Parameters
        ----------
        model : VCPCR or VCPCRCV
            The fitted model (checked with :meth:`check_matches`).

        Returns
        -------
        pandas.DataFrame
            One row per cluster of the model: ``gene P``, the smallest
            aggregated feature-level p-value among its members (the cluster
            holds a feature with a non-zero coefficient), ``member P``, the
            smallest aggregated cluster-membership p-value among them, and
            ``sel. freq.``, the mean selection frequency of its members over
            the splits.
        """
        self.check_matches(model)
        rows = {
            cluster: [
                float(self.pvalues[members].min()),
                float(self.membership_pvalues[members].min()),
                float(self.selection_frequency[members].mean()),
            ]
            for cluster, members in model.clusters_.items()
        }
        return pd.DataFrame.from_dict(rows, orient="index", columns=_COLUMNS)

    def gene_evidence(self, model: Any) -> pd.DataFrame:
        """Feature-level evidence, strongest first.

        Parameters
        ----------
        model : VCPCR or VCPCRCV
            The fitted model (checked with :meth:`check_matches`).

        Returns
        -------
        pandas.DataFrame
            One row per feature selected in at least one split, ordered by
            feature-level p-value, then cluster-membership p-value, then
            selection frequency: ``gene P``, ``member P`` and ``sel. freq.``.
        """
        self.check_matches(model)
        frame = self._gene_frame()
        return frame[frame["sel. freq."] > 0]

    def _gene_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(
            dict(
                zip(
                    _COLUMNS,
                    [self.pvalues, self.membership_pvalues, self.selection_frequency],
                    strict=True,
                )
            )
        )
        order = np.lexsort(
            (-frame.iloc[:, 2].to_numpy(), frame.iloc[:, 1], frame.iloc[:, 0])
        )
        return frame.iloc[order]

    # ---------------------------------------------------------------- summary
    def summary(self, alpha: float = 0.05, max_genes: int = 20) -> VCPCRSummary:
        """Summary: the splits, the features with the most evidence, the guarantee.

        Parameters
        ----------
        alpha : float, default=0.05
            Level at which features are counted as significant.
        max_genes : int, default=20
            Most features listed (those with ``P < alpha``, or the smallest
            p-values when none is).

        Returns
        -------
        VCPCRSummary
            A statsmodels ``Summary``: print it, or call ``as_text()``,
            ``as_html()`` or ``as_latex()``.
        """
        owner = "MultiSplitResult.summary"
        check_fraction(alpha, "alpha", owner=owner)
        check_scalar(max_genes, "max_genes", numbers.Integral, owner=owner, min_val=1)
        evidence = self._gene_frame()
        n_sig = int((self.pvalues < alpha).sum())
        n_member = int((self.membership_pvalues < alpha).sum())
        shown = evidence.iloc[: max(min(n_sig, int(max_genes)), min(10, len(evidence)))]
        fp = self.fingerprint
        used = self.splits[self.splits["used"]]
        left = [
            ("Dep. Variable:", fp.yname),
            ("Estimator:", fp.estimator),
            ("Family:", str(family_name(self.estimator.family))),
            ("No. Observations:", fp.n_samples),
            ("No. Variables:", len(fp.feature_names)),
            ("Gamma min:", f"{self.gamma_min:g}"),
        ]
        right = [
            ("Splits used:", f"{self.n_splits_used} of {self.n_splits}"),
            ("Gene-level tests:", f"{self.n_splits_gene_level} splits"),
            ("First part:", f"{self.train_size:g} of the rows"),
            ("Modules per split:", f"{used['n_modules'].mean():.3g} (mean)"),
            (f"Genes P < {alpha:g}:", str(n_sig)),
            (f"Member P < {alpha:g}:", str(n_member)),
        ]
        smry = VCPCRSummary()
        smry.add_table_2cols(
            None,
            title="VC-PCR multi-split inference",
            gleft=[(k, [str(v)]) for k, v in left],
            gright=[(k, [str(v)]) for k, v in right],
            yname=fp.yname,
            xname=[],
        )
        smry.tables.append(
            evidence_table(shown, title="Genes with the smallest gene P")
        )
        smry.tables.append(
            evidence_table(
                self._resolution_frame(),
                title=f"Minimal rejected clusters (per split, {ALPHA_CLUSTERS:g})",
            )
        )
        rest = len(evidence) - len(shown)
        notes = [
            GENE_GUARANTEE,
            MODULE_GUARANTEE,
            "gene P and member P: aggregated over the splits (vcpcr.inference."
            "aggregate_pvalues); sel. freq.: share of the splits whose first "
            f"part selected the gene. {rest} more gene(s) not shown. Minimal "
            "rejected clusters: the finest clusters each split's descent "
            "rejected (result.clusters); correlated active genes are often "
            "found together before any one alone.",
            self._tree_note(),
        ]
        notes.extend(self._failure_notes())
        smry.add_extra_txt(numbered_notes(notes))
        return smry

    def _tree_note(self) -> str:
        """Return the common tree's findings in one sentence, and its guarantee."""
        if self.tree_pvalues is None:
            return f"Common tree: {self.tree_info}."
        minimal = self.tree_clusters[self.tree_clusters["minimal"]]
        found = "; ".join(
            f"{_members_text(c.members)} ({c.size} gene{'s' * (c.size > 1)}, "
            f"tree P = {c.pvalue:.3g})"
            for c in minimal.head(3).itertuples()
        )
        more = f" and {len(minimal) - 3} more" if len(minimal) > 3 else ""
        return (
            f"Common tree ({self.tree_info}): {len(self.tree_clusters)} "
            f"cluster(s) rejected at {ALPHA_CLUSTERS:g}"
            + (f", minimal: {found}{more}" if found else "")
            + f" (result.tree_clusters). {TREE_GUARANTEE}"
        )

    def _resolution_frame(self) -> pd.DataFrame:
        """Per level: the splits with a minimal rejected cluster, their sizes."""
        levels = ["selected", "module", "sub-module", "gene"]
        by_level = self.clusters.groupby("level")
        splits = by_level["split"].nunique().reindex(levels, fill_value=0)
        size = by_level["size"].mean().reindex(levels)
        count = by_level.size().reindex(levels, fill_value=0)
        return pd.DataFrame(
            {
                "splits": [f"{k} of {self.n_splits}" for k in splits],
                "clusters": [str(k) for k in count],
                "mean size": ["-" if np.isnan(v) else f"{v:.1f}" for v in size],
            },
            index=["all selected", "module", "sub-module", "single gene"],
        )

    def _failure_notes(self) -> list[str]:
        """Return notes on few splits, failed splits, Firth splits, no descent."""
        notes = []
        if math.ceil(self.gamma_min * self.n_splits) <= 1:
            notes.append(
                f"With {self.n_splits} splits and gamma_min={self.gamma_min:g}, "
                f"the smallest quantile is one split's p-value: a single split "
                f"can reject a gene. The level holds, but the rejections "
                f"change from one set of splits to another; use n_splits >= 50."
            )
        if self.n_splits_skipped:
            top, count = most_common_message(list(self.splits["reason"].dropna()))
            notes.append(
                f"{self.n_splits_skipped} split(s) failed and count as p = 1 "
                f"for every gene (most often, {count} time(s): {top})."
            )
        firth = int((self.splits["gene_test"] == "Firth LR").sum())
        if firth:
            notes.append(
                f"{firth} split(s) used Firth's penalized likelihood-ratio test "
                f"for the genes: they separated the second part's classes (the "
                f"logistic maximum-likelihood estimate does not exist)."
            )
        missing = self.n_splits_used - self.n_splits_gene_level
        if missing:
            top, count = most_common_message(list(self.splits["gene_reason"].dropna()))
            notes.append(
                f"{missing} used split(s) gave no gene-level test and count as "
                f"gene P = 1 (their module tests stand; most often, {count} "
                f"time(s): {top})."
            )
        return notes


def _members_text(members: tuple[str, ...]) -> str:
    """Return a cluster's features, the first three named."""
    shown = ", ".join(members[:3])
    return f"{{{shown}{', ...' if len(members) > 3 else ''}}}"


# ------------------------------------------------------------- multi_split
def multi_split(
    estimator: VCPCR | VCPCRCV,
    X: Any,
    y: Any = None,
    *,
    n_splits: int = 50,
    train_size: float = 0.5,
    gamma_min: float = 0.05,
    common_tree: str | ArrayLike | None = "auto",
    inheritance: bool = False,
    gene_level: bool = True,
    retune: bool | None = None,
    factor_sample: int = FACTOR_SAMPLE,
    n_jobs: int | None = None,
    random_state: Any = None,
    verbose: bool | int | None = None,
    checkpoint: Any = None,
) -> MultiSplitResult:
    r"""Multi-split p-values for VC-PCR's clusters and features.

    For each of ``n_splits`` random splits of the rows (stratified by class
    or event, and by stratum for a stratified Cox template):

    1. a clone of ``estimator`` is fitted on the first part (``train_size``
       of the rows): weights, clustering and selection, and with a
       ``VCPCRCV`` template the tuning too, inside the split;
    2. on the second part, the cluster latent variables are formed with the
       first part's standardization and membership (``model.transform``) and
       the family's step-2 model (OLS, logistic regression with Firth's
       fallback, Cox), with the template's covariates beside them
       (``model.outcome_design``), gives one p-value per cluster;
    3. feature level: on the same second part, the features the first part
       selected are tested in the regression of ``y`` on them (standardized
       with the first part's standardization) and the covariates, cluster by
       cluster down a tree built on the first part (all selected features, the
       clusters, average-linkage sub-clusters, single features), with Meinshausen's
       hierarchical adjustment (see :mod:`vcpcr.inference._hierarchy`); each selected
       feature gets its leaf's hierarchical p-value, the others 1;
    4. cluster membership: each cluster's p-value times the number of clusters
       tested (capped at 1) goes to its members, 1 to the features the split
       did not select.

    Both per-split feature p-values are aggregated over the splits with
    :func:`aggregate_pvalues`: ``pvalues`` (feature level) and
    ``membership_pvalues``.

    5. common tree (Mandozzi & Bühlmann 2016, R ``hierinf``): the clusters
       of one tree built from ``X`` alone (average linkage on ``1 - |corr|``
       of the clustered features over all rows; it never sees ``y``, so every
       split may share it) are tested top-down: per split, a cluster ``C``
       gets the p-value of its selected features ``C ∩ S_b`` in the regression
       of step 3 (the same tests) times ``|S_b| / |C ∩ S_b|`` (1 if none is
       selected or the split failed), aggregated per cluster over the splits;
       a cluster is examined when its parent is rejected, its adjusted
       p-value is the largest on its path from the root
       (``tree_clusters``, ``tree_pvalues``). Unlike the per-split trees of
       step 3, a cluster means the same features in every split, so evidence
       for a block of correlated features adds up over the splits even when no
       single feature stands out.

    Parameters
    ----------
    estimator : VCPCR or VCPCRCV
        The model whose clusters and features are tested, cloned for every
        split (its ``random_state`` replaced by the split's seed). A
        ``VCPCR``, fitted or not: its parameters. A fitted ``VCPCRCV``: the
        model it chose, ``sklearn.base.clone(estimator.best_estimator_)``
        (its hyperparameters, fixed in every split), so that
        ``estimator.summary(inference=result)`` shows the result beside it;
        with ``retune=True``, the ``VCPCRCV`` itself, tuned inside every
        split. An unfitted ``VCPCRCV`` is tuned inside every split. Tuning
        inside the splits is the stricter choice: the hyperparameters
        chosen on all the rows have seen every second part, which the
        chosen model's p-values ignore (the choice among a few grid points
        moves them little; docs/inference.md). A ``VCPCRCV`` to tune needs
        ``refit=True``. CV tunes for prediction and may select more features
        than a split's second part can test one by one; such a split gives
        feature-level p = 1 (counted).
    X : array-like of shape (n_samples, n_features) or DataFrame
        Predictors; with a formula template, the DataFrame.
    y : array-like of shape (n_samples,), optional
        Response (as the template's ``fit`` takes it); None with a formula.
    n_splits : int, default=50
        Number of random splits ``B``.
    train_size : float, default=0.5
        Share of the rows in the part that chooses the clusters.
    gamma_min : float, default=0.05
        Smallest quantile of the aggregation (:func:`aggregate_pvalues`).
    common_tree : {"auto", "average"}, array-like of shape (n_genes - 1, 4) or None, \
default="auto"
        The tree of step 5, over the clustered features (the columns of the
        design that are not covariates, in their order). ``"average"``:
        average linkage on ``1 - |corr|``, which needs the ``p x p``
        distance matrix (about ``12 p^2`` bytes: 300 MB at 5,000 features), so
        it raises above 5,000 features
        (``vcpcr.inference._common_tree.TREE_MAX_FEATURES``);
        ``"auto"``: the same, but above that size no tree is tested and
        ``tree_info`` says so; a scipy linkage matrix (``scipy.cluster.
        hierarchy.linkage`` or any clustering of ``X`` that does not look at
        ``y``): that tree, at any size; None: no common tree (``tree_pvalues``
        is None).
    inheritance : bool, default=False
        In the common tree's descent, pass the weight of every rejected
        single gene on to its nearest unrejected relatives, split by split,
        and examine them again (Goeman & Finos's inheritance procedure;
        :func:`vcpcr.inference._common_tree.descend_tree`): the same error
        control, more rejections below a rejected gene. ``tree_pvalues`` and
        the clusters' ``pvalue`` are then the values at the final weights,
        compared with 0.05, not adjusted p-values for any level.
    gene_level : bool, default=True
        Run the feature-level descent (step 3). False skips it, and with it
        the common tree (``"auto"`` becomes None; another ``common_tree``
        raises): feature-level p = 1 in every split (``splits[
        "gene_reason"]`` says why), the cluster-membership p-values and the
        selection frequencies as before, at the cost of the fits alone.
    retune : bool or None, default=None
        ``VCPCRCV`` only: True tunes the ``VCPCRCV`` (fitted or not) inside
        every split; False (or None) resamples a fitted ``VCPCRCV``'s chosen
        model; None tunes an unfitted one inside every split.
    factor_sample : int, default=6
        Binomial and Cox: most nodes of a split's tree (besides the full
        model) whose 20 permutations fit the line of the likelihood-ratio
        tests' Bartlett-type factors, :math:`c_q = \max(1, a + b q)` in the
        node's size (``vcpcr.inference._hierarchy.bartlett_line``), fitted
        once per split and used for every node it tests.
    n_jobs : int, optional
        Splits in parallel through joblib (any joblib backend, e.g. dask via
        ``joblib.parallel_config``). Results do not depend on it.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the splits and each split's fit (it replaces the template's
        ``random_state``).
    verbose : bool, int or None, default=None
        A progress bar over the splits (one fit of the template each).
        None: shown when running interactively (a terminal or a Jupyter
        kernel) and not under CI, never in a log file; True or an int >= 1:
        always; False or 0: never. A ``VCPCRCV`` template's own bar is off.
        Outside a terminal, True prints a line to standard error when the
        first split ends (the first estimate of the time left) and then
        every 10 seconds: the splits done, the time elapsed and the time left.
    checkpoint : str or os.PathLike, optional
        A file that keeps every finished split (JSON Lines, see
        :class:`vcpcr._parallel.Checkpoint`; nothing is unpickled); a call
        with the same template, data and parameters runs only the splits
        the file does not hold, and a file of other data or parameters is
        refused. Needs an int ``random_state`` and ``common_tree=None``
        (the common tree's tests are not kept in the file).

    Returns
    -------
    MultiSplitResult
        Feature-level and cluster-membership p-values, the per-split cluster
        table, the minimal rejected clusters, the common tree's rejected
        clusters and per-feature p-values, selection frequencies,
        ``summary()``; ``model.summary(inference=result)`` shows them beside
        a model fitted on all the data. When a ``KeyboardInterrupt`` stops
        the run: over the splits that finished, ``complete`` False (a
        warning says how many of how many).

    Raises
    ------
    TypeError
        If ``estimator`` is not a ``VCPCR`` / ``VCPCRCV``, or a parameter has
        the wrong type.
    ValueError
        If ``retune`` does not fit the estimator (True for a ``VCPCR``, False
        for an unfitted ``VCPCRCV``), a parameter is out of range, ``X`` and
        ``y`` have different numbers of rows, a class or the events and
        censored rows cannot fill both parts, more than half of the
        splits are skipped, ``common_tree`` is not one of its choices or
        not a valid linkage of the clustered features, or ``common_tree=
        "average"`` with more than 5,000 clustered features, or a
        ``common_tree`` other than ``"auto"`` or None with ``gene_level=False``.

    Warns
    -----
    VCPCRWarning
        When some splits are skipped (one part without an event or a class,
        a fit that fails): how many, and why.

    See Also
    --------
    aggregate_pvalues : The aggregation over the splits.
    VCPCR.summary : ``summary(inference=result)``.

    Notes
    -----
    What holds. Feature level (``pvalues``): in each split the hierarchical
    procedure controls the family-wise error over the selected features whose
    coefficient in the regression on the selected features is zero (partial F
    tests; likelihood-ratio tests divided by a Bartlett-type factor estimated
    by permutations, Firth's penalized version where the features separate the
    classes), and the aggregation keeps it; when the selection keeps every
    feature that acts on ``y`` (the screening property), these are the inactive
    features. A split that selected too many features for its second part (fewer
    than 10 residual degrees of freedom; fewer than 2 events or members of the
    rarer class per column) gives feature-level p = 1, and ``splits`` says why.
    Cluster membership (``membership_pvalues``, Meinshausen, Meier & Bühlmann
    2009): each split's cluster tests are valid given its first part; the
    aggregated p-values control the family-wise error rate under the global
    null, and a noise feature clustered with active features is rejected with them.
    Common tree (``tree_clusters``, ``tree_pvalues``; Mandozzi & Bühlmann
    2016): under the screening property, the clusters rejected at
    ``ALPHA_CLUSTERS`` (0.05) hold an active feature, with family-wise error
    control over the clusters that hold none; the tree never sees ``y``.
    Its cost is small (only the nodes below rejected ones are tested; under
    the null one test per split, which the descent has run already), so it
    is on by default; above 5,000 clustered features ``"auto"`` skips it.
    The cost is ``n_splits`` fits of the template on ``train_size`` of the
    rows, plus the descent's small regressions. With ``gamma_min = 0.05`` a
    feature needs small p-values in at least ``ceil(0.05 * n_splits)`` splits;
    with 20 splits or fewer one split suffices: keep ``n_splits >= 50``.

    A stratified Cox template (``strata=``, or ``strata(...)`` in a
    formula; pooled multi-study cohorts) keeps its strata throughout: the
    splits keep each stratum's share of the rows and events, the fits on the
    first part and step 2 on the second are stratified, and the descent's
    Cox regressions are fitted within the strata (their factor's
    permutations permute the features' rows within each stratum).

    A split is skipped (and counted) when a part has no event or misses a
    class, when the fit on the first part or step 2 on the second fails
    (e.g. a column constant in the first part, more clusters than rows), or
    when the step-2 p-values are not finite. It is an error when more than
    half are.

    References
    ----------
    .. [1] Wasserman, L., Roeder, K. (2009). High-dimensional variable
       selection. Annals of Statistics 37(5A), 2178-2201.
    .. [2] Meinshausen, N., Meier, L., Bühlmann, P. (2009). p-Values for
       high-dimensional regression. JASA 104(488), 1671-1681.

    Examples
    --------
    >>> from vcpcr import VCPCR
    >>> from vcpcr.inference import multi_split
    >>> from vcpcr.simulate import make_block_data
    >>> data = make_block_data(80, [5, 5], [1.0, 0.0], n_noise=30, random_state=0)
    >>> result = multi_split(VCPCR(n_clusters=3, n_init=2), data.X, data.y,
    ...                      n_splits=10, random_state=0)
    >>> result.n_splits_used
    10
    >>> bool(result.membership_pvalues.iloc[:5].max() < 0.05)  # the active block
    True
    >>> bool(result.pvalues.iloc[5:].min() > 0.05)  # no inactive feature
    True
    """
    owner = "multi_split"
    estimator = check_template(estimator, owner, retune)
    check_fraction(gamma_min, "gamma_min", owner=owner)
    if not isinstance(gene_level, bool | np.bool_):
        raise TypeError(
            f"The 'gene_level' parameter of {owner} must be True or False; got "
            f"{gene_level!r} of type {type(gene_level).__name__}."
        )
    check_scalar(
        factor_sample, "factor_sample", numbers.Integral, owner=owner, min_val=1
    )
    progress = progress_shown(verbose, owner)
    rows = resampling_rows(estimator, X, y, owner)
    check_resampling(n_splits, train_size, rows.n_samples, owner)
    if not gene_level:
        if common_tree is not None and not (
            isinstance(common_tree, str) and common_tree == "auto"
        ):
            raise ValueError(
                f"The 'common_tree' parameter of {owner} needs the gene-level "
                f"tests, which gene_level=False skips. Got common_tree="
                f"{common_tree if isinstance(common_tree, str) else 'a linkage'!r}; "
                f"pass gene_level=True, or common_tree=None (or 'auto')."
            )
        common_tree = None
    tree, tree_info = _common_tree(common_tree, rows)
    if not gene_level:
        tree_info = (
            "no common tree: the gene-level tests were skipped (gene_level=False)"
        )
    parts = draw_splits(
        rows.n_samples, rows.strata, int(n_splits), float(train_size), random_state
    )
    seeds = task_seeds(random_state, int(n_splits))
    if checkpoint is not None and tree is not None:
        raise ValueError(
            f"The 'checkpoint' parameter of {owner} needs common_tree=None: the "
            f"common tree's tests of each split are not kept in the file. Got "
            f"common_tree={common_tree!r}; pass common_tree=None to checkpoint."
        )
    saved = Checkpoint.open(
        checkpoint,
        owner,
        random_state,
        (estimator, X, y, parts, seeds, bool(gene_level), int(factor_sample)),
        int(n_splits),
        encode=_encode_split,
        decode=_decode_split,
    )
    data, rest = _apart(rows)  # the data goes to the workers once
    outcomes = run_parallel(
        _split_task,
        [
            (
                estimator,
                *data,
                rest,
                a,
                b,
                seed,
                tree is not None,
                bool(gene_level),
                int(factor_sample),
            )
            for (a, b), seed in zip(parts, seeds, strict=True)
        ],
        n_jobs=n_jobs,
        verbose=progress,
        desc=owner,
        interruptible=True,
        checkpoint=saved,
    )
    done = finished(outcomes)
    outcomes = [outcomes[i] for i in done]
    result = _result(
        estimator,
        rows,
        outcomes,
        float(gamma_min),
        float(train_size),
        complete=len(done) == int(n_splits),
    )
    if tree is None:
        return replace(result, tree_info=tree_info)
    return _tree_result(result, tree, tree_info, outcomes, bool(inheritance))


def _plain(value: Any) -> Any:
    """Return a numpy scalar as the Python number ``json`` writes."""
    return value.item() if isinstance(value, np.generic) else value


def _encode_split(o: _Split) -> dict[str, Any]:
    """Return a split's outcome for a checkpoint (no tests: no common tree)."""
    d = o.descent
    return {
        "skipped": o.skipped,
        "clusters": list(o.clusters),
        "members": [list(m) for m in o.members],
        "pvalues": list(o.pvalues),
        "params": None
        if o.params is None
        else {k: _plain(v) for k, v in o.params.items()},
        "descent": [
            d.problem,
            list(d.features),
            list(d.pvalues),
            int(d.n_tested),
            d.method,
            [[lv, list(m), p] for lv, m, p in d.clusters],
        ],
    }


def _decode_split(stored: dict[str, Any]) -> _Split:
    """Return the split :func:`_encode_split` wrote."""
    problem, features, pvalues, n_tested, method, clusters = stored["descent"]
    descent = _Descent(
        problem,
        tuple(features),
        tuple(float(p) for p in pvalues),
        int(n_tested),
        method,
        tuple((lv, tuple(m), float(p)) for lv, m, p in clusters),
    )
    return _Split(
        stored["skipped"],
        tuple(stored["clusters"]),
        tuple(tuple(m) for m in stored["members"]),
        tuple(float(p) for p in stored["pvalues"]),
        stored["params"],
        descent,
    )


def _common_tree(spec: Any, rows: Rows) -> tuple[CommonTree | None, str]:
    """Build the tree ``multi_split``'s ``common_tree`` asks for; say what it is."""
    p = len(rows.fingerprint.feature_names)
    if spec is None:
        return None, "no common tree was asked for (common_tree=None)"
    if isinstance(spec, str):
        if spec not in ("auto", "average"):
            raise ValueError(
                f"The 'common_tree' parameter of multi_split must be 'auto', "
                f"'average', a scipy linkage matrix or None. Got {spec!r} instead."
            )
        if spec == "auto" and p > TREE_MAX_FEATURES:
            return None, (
                f"no common tree: {p} clustered features is more than "
                f"{TREE_MAX_FEATURES} for common_tree='auto' (pass a linkage "
                f"matrix of your own as common_tree=Z)"
            )
        assert rows.clustered is not None  # resampling_rows always sets it
        tree = common_tree(rows.clustered, max_features=TREE_MAX_FEATURES)
        return tree, "average linkage on 1 - |corr| of X"
    return tree_from_linkage(spec, p), "the linkage passed as common_tree"


def _tree_result(
    result: MultiSplitResult,
    tree: CommonTree,
    tree_info: str,
    outcomes: list[_Split],
    inheritance: bool,
) -> MultiSplitResult:
    """Test the common tree over the splits; add its p-values to ``result``."""
    names = list(result.pvalues.index)
    position = {name: j for j, name in enumerate(names)}
    splits = [
        SplitSelection(
            np.array([position[f] for f in o.descent.features], dtype=np.intp),
            o.descent.tests if o.skipped is None else None,
        )
        for o in outcomes
    ]
    tested = descend_tree(
        tree,
        splits,
        lambda P: aggregate_pvalues(P, result.gamma_min),
        ALPHA_CLUSTERS,
        inheritance=inheritance,
    )
    leaves = np.flatnonzero(tree.children[:, 0] < 0)
    genes = np.ones(len(names))
    genes[tree.order[tree.start[leaves]]] = np.nan_to_num(
        tested.adjusted[leaves], nan=1.0
    )
    rows = [
        (
            int(i),
            int(tree.parent[i]),
            int(tree.stop[i] - tree.start[i]),
            tuple(names[j] for j in sorted(tree.members(i))),
            float(tested.adjusted[i]),
            bool(tested.minimal[i]),
        )
        for i in np.flatnonzero(tested.rejected).tolist()
    ]
    return replace(
        result,
        tree=tree,
        tree_pvalues=pd.Series(genes, index=names, name="tree_pvalue"),
        tree_clusters=_tree_frame(rows),
        tree_info=f"{tree_info}; {tested.n_examined} of {tree.n_nodes} nodes "
        f"examined" + (", with inheritance" if inheritance else ""),
    )


def _result(
    estimator: VCPCR | VCPCRCV,
    rows: Rows,
    outcomes: list[_Split],
    gamma_min: float,
    train_size: float,
    *,
    complete: bool,
) -> MultiSplitResult:
    """Assemble the result from the splits' outcomes (all drawn, if ``complete``)."""
    check_failures(
        [o.skipped for o in outcomes],
        "multi_split",
        "splits",
        "p = 1 for every feature, so the p-values stay valid but lose power",
    )
    names = list(rows.fingerprint.feature_names)
    position = {name: j for j, name in enumerate(names)}
    shape = (len(outcomes), len(names))
    P = np.ones(shape)  # a failed split, an unselected feature: p = 1
    membership = np.ones(shape)
    selected = np.zeros(shape, dtype=bool)
    module_rows: list[tuple[Any, ...]] = []
    cluster_rows: list[tuple[Any, ...]] = []
    for b, o in enumerate(outcomes):
        for cluster, members, p in zip(o.clusters, o.members, o.pvalues, strict=True):
            idx = [position[m] for m in members]
            adjusted = min(1.0, p * len(o.clusters))
            membership[b, idx] = adjusted
            selected[b, idx] = True
            module_rows.append(
                (b, cluster, len(members), members, p, len(o.clusters), adjusted)
            )
        for feature, p in zip(o.descent.features, o.descent.pvalues, strict=True):
            P[b, position[feature]] = p
        cluster_rows.extend(
            (b, level, len(members), members, p)
            for level, members, p in o.descent.clusters
        )
    index = pd.RangeIndex(len(outcomes), name="split")
    split_pvalues = pd.DataFrame(P, index=index, columns=names)
    split_membership = pd.DataFrame(membership, index=index, columns=names)
    return MultiSplitResult(
        pvalues=aggregate_pvalues(split_pvalues, gamma_min),
        split_pvalues=split_pvalues,
        membership_pvalues=aggregate_pvalues(split_membership, gamma_min),
        split_membership_pvalues=split_membership,
        modules=pd.DataFrame(module_rows, columns=_MODULE_COLUMNS),
        clusters=pd.DataFrame(cluster_rows, columns=_CLUSTER_COLUMNS),
        splits=_splits_frame(outcomes),
        selection_frequency=pd.Series(
            selected.mean(axis=0), index=names, name="selection_frequency"
        ),
        gamma_min=gamma_min,
        train_size=train_size,
        estimator=estimator,
        fingerprint=rows.fingerprint,
        complete=complete,
    )


_MODULE_COLUMNS = [
    "split",
    "module",
    "size",
    "members",
    "pvalue",
    "n_modules",
    "pvalue_adjusted",
]
_CLUSTER_COLUMNS = ["split", "level", "size", "members", "pvalue"]


def _splits_frame(outcomes: list[_Split]) -> pd.DataFrame:
    """One row per split: used, reason, sizes and chosen hyperparameters."""
    frame = pd.DataFrame(
        {
            "used": [o.skipped is None for o in outcomes],
            "reason": [o.skipped for o in outcomes],
            "n_modules": [len(o.clusters) for o in outcomes],
            "n_selected": [sum(len(m) for m in o.members) for o in outcomes],
            "gene_level": [
                o.skipped is None and o.descent.problem is None for o in outcomes
            ],
            "gene_reason": [o.descent.problem for o in outcomes],
            "n_nodes_tested": [o.descent.n_tested for o in outcomes],
            "gene_test": [o.descent.method for o in outcomes],
        },
        index=pd.RangeIndex(len(outcomes), name="split"),
    )
    chosen = [o.params or {} for o in outcomes]
    for key in dict.fromkeys(k for params in chosen for k in params):
        frame[key] = [params.get(key) for params in chosen]
    return frame
