r"""Hierarchical tests of the features one split selected (feature-level evidence).

A split of :func:`vcpcr.inference.multi_split` selects features ``S`` and
groups them into clusters on its first part. Handing a cluster's p-value to
every member makes a noise feature that the clustering put into an active
cluster "significant". This module tests the features themselves, on the second
part, in the regression of ``y`` on the selected features' columns (standardized
with the first part's standardization) and the template's covariates (never
tested):

.. math::

    H_C:\ \beta_j = 0 \text{ for every } j \in C \subseteq S,

for the clusters ``C`` of a tree built on the first part only:

* the root is ``S``; its children are the split's clusters; below a cluster,
  average-linkage hierarchical clustering of its features (distance
  ``1 - |correlation|`` on the first part's ``X``) down to single features
  (:func:`build_tree`);
* a node is tested by the partial F test (gaussian, exact) or the
  likelihood-ratio test with ``|C|`` degrees of freedom (logistic
  regression by maximum likelihood, Cox with Efron's ties), its statistic
  divided by a Bartlett-type factor estimated from permutations of the
  features' rows, since on 50 rows the plain chi2 test rejects twice as often
  as it should: a line in the node's size, fitted once per split to the
  permuted statistics of the full model and of a few nodes
  (:func:`bartlett_line`); the reduced models of many nodes
  are fitted together by the batched solvers of :mod:`vcpcr._solvers.step2_fits`
  (:func:`node_pvalues`);
* Meinshausen's (2008) hierarchical adjustment: ``p_adj(C) = min(1, p_C |S|
  / |C|)`` and the hierarchical p-value of ``C`` is the largest ``p_adj``
  over ``C`` and its ancestors (:func:`hierarchical_pvalues`). Rejecting
  every node with hierarchical p-value at most ``alpha`` controls the
  family-wise error over the nodes whose coefficients are all zero; a
  leaf's hierarchical p-value is the split's feature-level p-value.

The full regression needs enough rows per coefficient (:data:`MIN_RESIDUAL_DF`
for OLS, :data:`MIN_EVENTS_PER_VARIABLE` for the logistic and Cox models);
a split that selected more features gets no feature-level p-values (they are 1,
which is valid), and says why (:func:`too_wide`). When the selected features
separate the second part's classes, the logistic maximum-likelihood estimate
does not exist; that split uses Firth's penalized likelihood-ratio test
(Heinze & Schemper 2002) for every node, its factor included (``Descent.
method == "Firth LR"``). A full model that cannot be fitted at all (rank
deficient, no convergence) gives feature-level p-values of 1 and a reason.
Nodes are dispatched on the family's response math (``Family.distribution``),
never on the family's name.

References: Meinshausen, N. (2008). Hierarchical testing of variable
importance. Biometrika 95(2), 265-278. Mandozzi, J., Bühlmann, P. (2016).
Hierarchical testing in the high-dimensional setting with correlated
variables. JASA 111(513), 331-343. Heinze, G., Schemper, M. (2002). A
solution to the problem of separation in logistic regression. Statistics in
Medicine 21, 2409-2419.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

from vcpcr._outcome import firth_logit
from vcpcr._solvers.distributions import (
    LOGISTIC,
    Distribution,
    Logistic,
    Normal,
    ProportionalHazards,
)
from vcpcr._solvers.partial_likelihood import efron_loglik
from vcpcr._solvers.step2_fits import cox_batch, logit_batch, ols_batch
from vcpcr.exceptions import ConvergenceWarning

__all__ = [
    "FACTOR_SAMPLE",
    "MIN_EVENTS_PER_VARIABLE",
    "MIN_RESIDUAL_DF",
    "N_PERMUTATIONS",
    "Descent",
    "FactorLine",
    "Node",
    "SplitTests",
    "bartlett_factors",
    "bartlett_line",
    "build_tree",
    "descend",
    "hierarchical_pvalues",
    "minimal_rejections",
    "node_pvalues",
    "too_wide",
    "with_strata",
]

_Float = NDArray[np.float64]

#: OLS: the full regression keeps at least this many residual degrees of freedom.
MIN_RESIDUAL_DF = 10
#: Logistic and Cox: at least this many events (the rarer class, for the
#: logistic model) per coefficient of the full regression (covariates and
#: selected features; the intercept not counted).
MIN_EVENTS_PER_VARIABLE = 2.0
#: Permutations that estimate the likelihood-ratio test's Bartlett-type factor.
N_PERMUTATIONS = 20
#: Nodes of a split's tree (besides the full model) whose permutation
#: statistics fit the line of the Bartlett-type factors (:func:`bartlett_line`).
FACTOR_SAMPLE = 6


class Node(NamedTuple):
    """A cluster of the tree: its features (positions in ``S``), parent and level.

    ``level`` is ``"selected"`` (the root), ``"module"``, ``"sub-module"`` or
    ``"gene"``; ``parent`` is the position of the parent node (-1 for the
    root), which always comes before its children.
    """

    members: tuple[int, ...]
    parent: int
    level: str


def _linkage_children(
    members: Sequence[int], X: _Float
) -> dict[int, tuple[int, int]] | None:
    """Average-linkage merges of ``members`` (1 - |corr| on ``X``): id -> children.

    Leaves are ids ``0 .. m - 1`` (positions in ``members``), merge ``i``
    is id ``m + i``; None for a single member.
    """
    m = len(members)
    if m < 2:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.corrcoef(X[:, list(members)], rowvar=False)
    dist = 1.0 - np.abs(np.nan_to_num(corr, nan=0.0))
    np.fill_diagonal(dist, 0.0)
    dist = np.clip((dist + dist.T) / 2, 0.0, None)
    Z = linkage(squareform(dist, checks=False), method="average")
    return {m + i: (int(a), int(b)) for i, (a, b) in enumerate(Z[:, :2])}


def _leaves(cid: int, children: dict[int, tuple[int, int]], m: int) -> list[int]:
    """Leaf ids below the linkage id ``cid``."""
    out, stack = [], [cid]
    while stack:
        c = stack.pop()
        if c < m:
            out.append(c)
        else:
            stack.extend(children[c])
    return sorted(out)


def build_tree(X: _Float, clusters: Sequence[Sequence[int]]) -> list[Node]:
    """Build the tree of one split over the selected features, parents first.

    Parameters
    ----------
    X : ndarray of shape (n_first, n_selected)
        The selected features on the split's first part (never its second).
    clusters : sequence of sequences of int
        The split's clusters as positions into the columns of ``X``; together
        they hold every column once.

    Returns
    -------
    list of Node
        The root (every selected feature), the clusters, the sub-clusters of the
        average-linkage tree inside each cluster (distance ``1 - |corr|``) and
        the single features. A child equal to its parent (one cluster; a cluster
        of one feature) is not repeated.
    """
    nodes = [Node(tuple(range(X.shape[1])), -1, "selected")]
    for cluster in clusters:
        columns = tuple(sorted(int(j) for j in cluster))
        parent = 0
        if columns != nodes[0].members:
            nodes.append(Node(columns, 0, "gene" if len(columns) == 1 else "module"))
            parent = len(nodes) - 1
        children = _linkage_children(columns, X)
        if children is None:
            if len(nodes[parent].members) > 1:
                nodes.append(Node(columns, parent, "gene"))
            continue
        m = len(columns)
        stack = [(2 * m - 2, parent)]  # the linkage root is the cluster itself
        while stack:
            cid, at = stack.pop()
            for child in children[cid]:
                members = tuple(columns[i] for i in _leaves(child, children, m))
                level = "gene" if len(members) == 1 else "sub-module"
                nodes.append(Node(members, at, level))
                if child >= m:
                    stack.append((child, len(nodes) - 1))
    return nodes


def hierarchical_pvalues(
    raw: ArrayLike, sizes: ArrayLike, parents: ArrayLike, n_selected: int
) -> _Float:
    r"""Meinshausen's hierarchical adjustment of the raw p-values of a tree.

    Parameters
    ----------
    raw : array-like of shape (n_nodes,)
        Raw p-value of each node (NaN or anything for a node below one whose
        hierarchical p-value is 1: it is not read).
    sizes : array-like of shape (n_nodes,)
        Number of features in each node.
    parents : array-like of shape (n_nodes,)
        Position of each node's parent (-1 for the root); parents first.
    n_selected : int
        Number of features at the root, ``|S|``.

    Returns
    -------
    ndarray of shape (n_nodes,)
        :math:`\max_{D \supseteq C} \min(1, p_D |S| / |D|)` over ``C`` and
        its ancestors ``D``.
    """
    raw = np.asarray(raw, dtype=np.float64)
    sizes = np.asarray(sizes, dtype=np.float64)
    parents = np.asarray(parents, dtype=np.intp)
    out = np.ones(raw.size)
    for i in range(raw.size):
        above = 0.0 if parents[i] < 0 else out[parents[i]]
        if above >= 1.0:
            continue
        adjusted = min(1.0, float(raw[i]) * n_selected / sizes[i])
        out[i] = max(above, adjusted) if np.isfinite(adjusted) else 1.0
    return out


def minimal_rejections(
    nodes: Sequence[Node], hierarchical: _Float, alpha: float
) -> list[int]:
    """Positions of the rejected nodes none of whose children is rejected.

    Parameters
    ----------
    nodes : sequence of Node
        The tree (:func:`build_tree`).
    hierarchical : ndarray of shape (n_nodes,)
        Hierarchical p-values (:func:`hierarchical_pvalues`).
    alpha : float
        Level.

    Returns
    -------
    list of int
        The minimal rejected clusters: the finest resolution at which the
        split found a signal.
    """
    rejected = hierarchical <= alpha
    has_rejected_child = np.zeros(len(nodes), dtype=bool)
    for i, node in enumerate(nodes):
        if rejected[i] and node.parent >= 0:
            has_rejected_child[node.parent] = True
    return [i for i in range(len(nodes)) if rejected[i] and not has_rejected_child[i]]


# ------------------------------------------------------------- node tests
class _Deviances(NamedTuple):
    """Deviances (-2 log-likelihood, or RSS) of a stack of fits, and which hold."""

    deviance: _Float
    ok: NDArray[np.bool_]


def _ols(M: _Float, outcome: _Float) -> _Deviances:
    fit = ols_batch(M, outcome)
    resid = (
        outcome - fit.params[:, 0, None] - np.einsum("bnk,bk->bn", M, fit.params[:, 1:])
    )
    return _Deviances(np.sum(resid**2, axis=1), fit.ok)


def _logit(M: _Float, outcome: _Float) -> _Deviances:
    fit = logit_batch(M, outcome)
    eta = fit.params[:, 0, None] + np.einsum("bnk,bk->bn", M, fit.params[:, 1:])
    dev = 2 * np.sum(LOGISTIC.unit_loss(eta, outcome), axis=1)
    return _Deviances(dev, fit.ok)


def _firth(M: _Float, outcome: _Float) -> _Deviances:
    """Firth's penalized fits: ``-2 (loglik + 0.5 log det I)`` at each estimate."""
    dev = np.full(M.shape[0], np.inf)
    ok = np.zeros(M.shape[0], dtype=bool)
    for b in range(M.shape[0]):
        A = np.column_stack([np.ones(M.shape[1]), M[b]])
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            try:
                params = firth_logit(A, outcome)[0]
            except (ConvergenceWarning, np.linalg.LinAlgError):
                continue
        eta = A @ params
        info = (A.T * LOGISTIC.variance(LOGISTIC.mean(eta))) @ A
        sign, logdet = np.linalg.slogdet(info)
        if sign > 0:
            dev[b] = -2 * (LOGISTIC.log_likelihood(eta, outcome) + 0.5 * logdet)
            ok[b] = True
    return _Deviances(dev, ok)


def with_strata(outcome: _Float, strata: NDArray[Any]) -> _Float:
    """Return a Cox outcome ``(time, event)`` with each row's stratum as a third column.

    Parameters
    ----------
    outcome : ndarray of shape (n_samples, 2)
        Times and event indicators.
    strata : ndarray of shape (n_samples,) or (n_samples, n_columns)
        The strata columns (one stratum per distinct row).

    Returns
    -------
    ndarray of shape (n_samples, 3)
        ``(time, event, stratum code)``: the node tests fit stratified Cox
        models, and the factor's permutations permute within the strata.
    """
    values = np.asarray(strata, dtype=object).reshape(len(outcome), -1)
    keys = [repr(tuple(row)) for row in values.tolist()]
    codes = np.unique(keys, return_inverse=True)[1]
    return np.column_stack([outcome[:, :2], codes.astype(np.float64)])


def _strata(outcome: _Float) -> NDArray[np.intp] | None:
    """Return the stratum codes of a Cox outcome (:func:`with_strata`), or None."""
    if outcome.ndim < 2 or outcome.shape[1] < 3:
        return None
    return outcome[:, 2].astype(np.intp)


def _cox(M: _Float, outcome: _Float) -> _Deviances:
    time, event, strata = outcome[:, 0], outcome[:, 1] > 0, _strata(outcome)
    fit = cox_batch(M, time, event, strata=strata)
    eta = np.einsum("bnk,bk->bn", M, fit.params)
    return _Deviances(-2 * efron_loglik(eta, time, event, strata), fit.ok)


class _Test(NamedTuple):
    """One family's nested test: the fits, the reference law, the width rule."""

    fit: Callable[[_Float, _Float], _Deviances]
    exact_f: bool  # partial F test on RSS; else likelihood ratio, chi2
    information: Callable[[_Float], float]  # rows (OLS) or events
    #: the penalized fit when the full model's MLE does not exist (separation)
    penalized: Callable[[_Float, _Float], _Deviances] | None = None


def _minority(outcome: _Float) -> float:
    ones = float(np.sum(outcome))
    return min(ones, outcome.size - ones)


def _events(outcome: _Float) -> float:
    return float(np.sum(outcome[:, 1] > 0))


#: The nested test of each family's response math (no family name is read).
_TESTS: dict[type[Distribution], _Test] = {
    Normal: _Test(_ols, True, lambda y: float(y.shape[0])),
    Logistic: _Test(_logit, False, _minority, _firth),
    ProportionalHazards: _Test(_cox, False, _events),
}


def _test_for(distribution: Distribution, penalized: bool = False) -> _Test:
    for kind, test in _TESTS.items():
        if isinstance(distribution, kind):
            if penalized and test.penalized is not None:
                return test._replace(fit=test.penalized)
            return test
    raise ValueError(
        f"No gene-level test for responses of {type(distribution).__name__}."
    )


def too_wide(distribution: Distribution, outcome: _Float, n_columns: int) -> str | None:
    """Why a full regression on ``n_columns`` columns is too wide, or None.

    Parameters
    ----------
    distribution : Distribution
        The family's response math (``Family.distribution``).
    outcome : ndarray
        The second part's step-2 outcome (``Family.prepare(y).outcome``).
    n_columns : int
        Selected features plus covariates (the intercept not counted).

    Returns
    -------
    str or None
        The reason, or None when the regression may be fitted: OLS keeps at
        least :data:`MIN_RESIDUAL_DF` residual degrees of freedom; logistic
        and Cox regressions have at least :data:`MIN_EVENTS_PER_VARIABLE`
        events (the rarer class) per column.
    """
    test = _test_for(distribution)
    info = test.information(outcome)
    if test.exact_f:
        df = info - n_columns - 1
        if df < MIN_RESIDUAL_DF:
            return (
                f"too many selected genes for the gene-level test: {n_columns} "
                f"columns on {int(info)} rows leave {int(df)} < "
                f"{MIN_RESIDUAL_DF} residual degrees of freedom"
            )
        return None
    if info < MIN_EVENTS_PER_VARIABLE * n_columns:
        what = "rows of the rarer class" if distribution is LOGISTIC else "events"
        return (
            f"too many selected genes for the gene-level test: {n_columns} "
            f"columns with {int(info)} {what} is fewer than "
            f"{MIN_EVENTS_PER_VARIABLE:g} per column"
        )
    return None


def node_pvalues(
    distribution: Distribution,
    features: _Float,
    covariates: _Float,
    outcome: _Float,
    sets: Sequence[Sequence[int]],
    *,
    factors: Mapping[int, float] | None = None,
    penalized: bool = False,
) -> tuple[_Float, str | None]:
    r"""Raw p-values of ``H_C: beta_C = 0`` for each set ``C`` of feature columns.

    Parameters
    ----------
    distribution : Distribution
        The family's response math (``Family.distribution``).
    features : ndarray of shape (n_samples, n_selected)
        The selected features (standardized) on the part that tests.
    covariates : ndarray of shape (n_samples, n_covariates)
        Always in the model, never tested.
    outcome : ndarray
        Step-2 outcome: ``y``, 0/1 labels, or ``(time, event)`` columns.
    sets : sequence of sequences of int
        The clusters to test, as column positions in ``features``.
    factors : mapping of int to float, optional
        Likelihood-ratio tests only: the Bartlett-type factor of each set
        size (:func:`bartlett_factors`); the plain chi2 test without.
    penalized : bool, default=False
        Logistic only: Firth's penalized likelihood-ratio test (Heinze &
        Schemper 2002), for a second part whose classes the features separate.

    Returns
    -------
    pvalues : ndarray of shape (n_sets,)
        Partial F test (OLS, exact), or the likelihood-ratio statistic
        divided by its factor against chi2 with ``|C|`` degrees of freedom.
        NaN when a reduced fit did not converge.
    problem : str or None
        Why no set could be tested (the full model is rank deficient, its
        MLE does not exist, or its fit did not converge); then every p-value
        is NaN.
    """
    test = _test_for(distribution, penalized)
    full = np.column_stack([covariates, features])
    drops, ok, base = _drops(test, full[None], covariates.shape[1], outcome, sets)
    if not base.ok[0]:
        return np.full(len(sets), np.nan), (
            "the full regression on the selected genes cannot be fitted on "
            "the second part (rank deficient, separated classes: its "
            "maximum-likelihood estimate does not exist, or no convergence)"
        )
    sizes = np.array([len(s) for s in sets], dtype=np.float64)
    if test.exact_f:
        df = outcome.shape[0] - full.shape[1] - 1
        p = stats.f.sf((drops[0] / sizes) / (base.deviance[0] / df), sizes, df)
    else:
        factor = np.array([(factors or {}).get(len(s), 1.0) for s in sets])
        p = stats.chi2.sf(drops[0] / factor, sizes)
    return np.where(ok[0], p, np.nan), None


class FactorLine(NamedTuple):
    r"""The Bartlett-type factors of one split: :math:`c_q = \max(1, a + b q)`.

    Made by :func:`bartlett_line`; ``factor(q)`` gives the factor of a node
    of ``q`` features.
    """

    #: intercept :math:`a`
    intercept: float
    #: slope :math:`b`
    slope: float
    #: sizes of the sets whose permuted statistics fitted the line
    sizes: tuple[int, ...] = ()
    #: mean permuted statistic over ``q`` of each of those sets
    means: tuple[float, ...] = ()

    def factor(self, q: int) -> float:
        r"""Return :math:`\max(1, a + b q)`, the factor of a node of ``q`` features."""
        return max(1.0, self.intercept + self.slope * float(q))


#: The line of a test that needs no factor (the partial F test, no permutation).
NO_FACTOR = FactorLine(1.0, 0.0)


def _factor_sample(
    sets: Sequence[Sequence[int]], n_selected: int, n_nodes: int = FACTOR_SAMPLE
) -> list[tuple[int, ...]]:
    """Return the sets whose permuted statistics fit the factor line.

    Parameters
    ----------
    sets : sequence of sequences of int
        The candidate nodes (a split's tree, parents first).
    n_selected : int
        Number of selected features: the full model's set is every one of them.
    n_nodes : int, default=FACTOR_SAMPLE
        Most nodes taken from ``sets`` besides the full model.

    Returns
    -------
    list of tuple of int
        The full model's set first, then at most ``n_nodes`` distinct sets of
        ``sets``: one of each of up to ``n_nodes`` sizes spread evenly over
        the sizes present (the smallest and the largest included; the first
        set of that size in ``sets``), then, when fewer sizes exist, further
        sets in the order of ``sets``.
    """
    root = tuple(range(n_selected))
    candidates = list(dict.fromkeys(tuple(sorted(int(j) for j in s)) for s in sets))
    candidates = [s for s in candidates if s != root]
    sizes = sorted({len(s) for s in candidates})
    if not candidates or n_nodes < 1:
        return [root]
    picks = np.unique(np.rint(np.linspace(0, len(sizes) - 1, n_nodes)).astype(int))
    chosen = [next(s for s in candidates if len(s) == sizes[i]) for i in picks]
    chosen += [s for s in candidates if s not in chosen][: n_nodes - len(chosen)]
    return [root, *chosen[:n_nodes]]


def bartlett_line(
    distribution: Distribution,
    features: _Float,
    covariates: _Float,
    outcome: _Float,
    sets: Sequence[Sequence[int]],
    *,
    n_permutations: int = N_PERMUTATIONS,
    n_nodes: int = FACTOR_SAMPLE,
    random_state: int | np.random.Generator | None = 0,
    penalized: bool = False,
) -> FactorLine:
    r"""Fit the line of the likelihood-ratio tests' Bartlett-type factors in the size.

    Parameters
    ----------
    distribution : Distribution
        The family's response math (``Family.distribution``).
    features, covariates, outcome
        As :func:`node_pvalues` takes them.
    sets : sequence of sequences of int
        The nodes of the split's tree; the line is fitted to the full model
        (every feature) and to at most ``n_nodes`` of them
        (:func:`_factor_sample`).
    n_permutations : int, default=N_PERMUTATIONS
        Permutations of the features' rows.
    n_nodes : int, default=FACTOR_SAMPLE
        Most nodes besides the full model.
    random_state : int, numpy.random.Generator or None, default=0
        Seeds the permutations.
    penalized : bool, default=False
        As :func:`node_pvalues` takes it.

    Returns
    -------
    FactorLine
        :math:`c_q = \max(1, a + b q)`; :data:`NO_FACTOR` (``c_q = 1``) for
        the partial F test, which is exact, and without permutations.

    Notes
    -----
    On 50 rows the likelihood-ratio statistic :math:`\Lambda_C` of a
    logistic or Cox model with 5-15 coefficients is larger than its chi2
    law says (measured in ``docs/inference.md``: size 0.10 instead of 0.05
    with 10 coefficients). Its null mean is :math:`q (1 + b / n)` (Bartlett,
    1937), with :math:`b` depending on the model and on :math:`q`. The
    permutations of the features' rows make every feature independent of the
    outcome and the covariates and keep the features' correlations; for
    each sampled set :math:`C` of size :math:`q_C`, :math:`m_C =
    \overline{\Lambda^*_C} / q_C` over the permutations estimates
    :math:`E \Lambda_C / q_C`, with variance about :math:`2 / (q_C R)`. The
    line :math:`a + b q` is their weighted least-squares fit, weights
    :math:`q_C` (a constant :math:`a`, their weighted mean, when the sets
    have a single size), so one split costs ``n_permutations`` fits of at
    most ``n_nodes + 1`` reduced models whatever the number of nodes its
    descent tests; the test compares :math:`\Lambda_C / c_{|C|}` with
    chi2(:math:`|C|`). The factor is never below 1, so it never makes a test
    more liberal than the plain chi2 test.
    """
    test = _test_for(distribution, penalized)
    if test.exact_f or n_permutations < 1:
        return NO_FACTOR
    rng = np.random.default_rng(random_state)
    null = _permuted(test, features, covariates, outcome, n_permutations, rng)
    sample = _factor_sample(sets, features.shape[1], n_nodes)
    return _line(test, null, covariates.shape[1], outcome, sample)


def bartlett_factors(
    distribution: Distribution,
    features: _Float,
    covariates: _Float,
    outcome: _Float,
    sets: Sequence[Sequence[int]],
    *,
    n_permutations: int = N_PERMUTATIONS,
    n_nodes: int = FACTOR_SAMPLE,
    random_state: int | np.random.Generator | None = 0,
    penalized: bool = False,
) -> dict[int, float]:
    r"""Bartlett-type factors of the likelihood-ratio tests, one per set size.

    Parameters
    ----------
    distribution : Distribution
        The family's response math (``Family.distribution``).
    features, covariates, outcome, sets
        As :func:`node_pvalues` takes them (``sets``: every node of the tree).
    n_permutations : int, default=N_PERMUTATIONS
        Permutations of the features' rows.
    n_nodes : int, default=FACTOR_SAMPLE
        Most nodes of ``sets`` that fit the line (:func:`bartlett_line`).
    random_state : int, numpy.random.Generator or None, default=0
        Seeds the permutations.
    penalized : bool, default=False
        As :func:`node_pvalues` takes it.

    Returns
    -------
    dict of int to float
        :math:`c_q = \max(1, a + b q)` of :func:`bartlett_line` for each size
        :math:`q` of ``sets``; empty for the partial F test, which is exact.
    """
    if _test_for(distribution, penalized).exact_f or n_permutations < 1:
        return {}
    line = bartlett_line(
        distribution,
        features,
        covariates,
        outcome,
        sets,
        n_permutations=n_permutations,
        n_nodes=n_nodes,
        random_state=random_state,
        penalized=penalized,
    )
    return {q: line.factor(q) for q in sorted({len(s) for s in sets})}


class _Permuted(NamedTuple):
    """Full designs with the features' rows permuted, and their full fits."""

    stack: _Float
    base: _Deviances


def _permuted(
    test: _Test,
    features: _Float,
    covariates: _Float,
    outcome: _Float,
    n_permutations: int,
    rng: np.random.Generator,
) -> _Permuted:
    c = covariates.shape[1]
    full = np.column_stack([covariates, features])
    stack = np.repeat(full[None], n_permutations, axis=0)
    strata = _strata(outcome)
    groups = (
        [np.arange(full.shape[0])]
        if strata is None
        else [np.flatnonzero(strata == k) for k in np.unique(strata)]
    )
    for r in range(n_permutations):
        for rows in groups:  # within each stratum of a stratified Cox outcome
            stack[r, rows, c:] = features[rows[rng.permutation(rows.size)]]
    return _Permuted(stack, test.fit(stack, outcome))


def _line(
    test: _Test,
    null: _Permuted,
    n_covariates: int,
    outcome: _Float,
    sample: Sequence[Sequence[int]],
) -> FactorLine:
    """Weighted least-squares line of ``mean statistic / q`` in ``q`` (weights q)."""
    drops, ok, _ = _drops(test, null.stack, n_covariates, outcome, sample, null.base)
    sizes, means = [], []
    for i, s in enumerate(sample):
        if ok[:, i].any():
            sizes.append(len(s))
            means.append(float(drops[ok[:, i], i].mean()) / len(s))
    if not sizes:
        return NO_FACTOR
    q, m = np.array(sizes, dtype=np.float64), np.array(means)
    if np.unique(q).size < 2:
        a, b = float(np.average(m, weights=q)), 0.0
    else:
        A = np.column_stack([np.ones_like(q), q]) * np.sqrt(q)[:, None]
        a, b = (float(v) for v in np.linalg.lstsq(A, m * np.sqrt(q), rcond=None)[0])
    return FactorLine(a, b, tuple(sizes), tuple(means))


def _drops(
    test: _Test,
    designs: _Float,
    n_covariates: int,
    outcome: _Float,
    sets: Sequence[Sequence[int]],
    base: _Deviances | None = None,
) -> tuple[_Float, NDArray[np.bool_], _Deviances]:
    """Deviance drops of dropping each set from each full design of a stack.

    Returns the drops (n_designs, n_sets), whether both fits hold, and the
    full fits (``base``, when given, are those fits).
    """
    R, _, k = designs.shape
    if base is None:
        base = test.fit(designs, outcome)
    drops = np.zeros((R, len(sets)))
    ok = np.zeros((R, len(sets)), dtype=bool)
    by_size: dict[int, list[int]] = {}
    for i, s in enumerate(sets):
        by_size.setdefault(len(s), []).append(i)
    for idx in by_size.values():
        keep = np.array(
            [_kept(k, n_covariates, sets[i]) for i in idx], dtype=np.intp
        ).reshape(len(idx), -1)
        # (R, n, len(idx), k') -> (R * len(idx), n, k')
        red_designs = designs[:, :, keep].transpose(0, 2, 1, 3)
        red = test.fit(
            red_designs.reshape(R * len(idx), *red_designs.shape[2:]), outcome
        )
        dev = red.deviance.reshape(R, len(idx))
        drops[:, idx] = np.maximum(dev - base.deviance[:, None], 0.0)
        ok[:, idx] = red.ok.reshape(R, len(idx)) & base.ok[:, None]
    return drops, ok, base


def _kept(n_columns: int, n_covariates: int, tested: Sequence[int]) -> list[int]:
    drop = {n_covariates + int(j) for j in tested}
    return [j for j in range(n_columns) if j not in drop]


# ------------------------------------------------------------ split tests
class SplitTests:
    """The node tests of one split's second part, for any clusters of its features.

    One object per split holds what every test of that split shares: the
    second part's selected features, covariates and outcome, the width rule's
    verdict (:func:`too_wide`), the test (``"F"``, ``"LR"``, or ``"Firth
    LR"`` when the features separate the classes), the likelihood-ratio tests'
    Bartlett-type factors (one line in the cluster size, :func:`bartlett_line`,
    fitted to one set of permutations of the features' rows the first time a
    factor is needed) and the raw p-value of every cluster already tested. The descent
    of the split's own tree (:func:`descend`) and the common tree of
    :mod:`vcpcr.inference._common_tree` test through it, so a cluster gets one p-value
    whichever tree asks.

    Parameters
    ----------
    distribution : Distribution
        The family's response math (``Family.distribution``).
    second : ndarray of shape (n_second, n_selected)
        The selected features on the second part (standardized with the first
        part's means and standard deviations).
    covariates : ndarray of shape (n_second, n_covariates)
        The template's covariates on the second part (never tested).
    outcome : ndarray
        The second part's step-2 outcome.
    random_state : int, numpy.random.Generator or None, default=0
        Seeds the permutations of the factors (:func:`bartlett_line`).
    factor_sample : int, default=FACTOR_SAMPLE
        Most nodes (besides the full model) whose permuted statistics fit
        the factor line.

    Attributes
    ----------
    problem : str or None
        Why no cluster can be tested (too wide, or the full regression
        cannot be fitted): then every p-value is 1.
    method : str
        ``"F"``, ``"LR"``, ``"Firth LR"``, or ``"none"`` when too wide.
    n_selected : int
        Number of selected features, ``|S|``.
    line : FactorLine or None
        The likelihood-ratio tests' factor line, once fitted (None before,
        and for the partial F test).
    factors : dict of int to float
        The factor of each cluster size tested so far (from ``line``).
    """

    def __init__(
        self,
        distribution: Distribution,
        second: _Float,
        covariates: _Float,
        outcome: _Float,
        *,
        random_state: int | np.random.Generator | None = 0,
        factor_sample: int = FACTOR_SAMPLE,
    ) -> None:
        self.distribution = distribution
        self.factor_sample = int(factor_sample)
        self.line: FactorLine | None = None
        self.second = second
        self.covariates = covariates
        self.outcome = outcome
        self.n_selected = second.shape[1]
        self.problem = too_wide(
            distribution, outcome, self.n_selected + covariates.shape[1]
        )
        self.method = "none"
        self.penalized = False
        self.exact_f = _test_for(distribution).exact_f
        self.factors: dict[int, float] = {}
        self._rng = np.random.default_rng(random_state)
        self._raw: dict[tuple[int, ...], float] = {}
        if self.problem is None:
            test = _test_for(distribution)
            full = np.column_stack([covariates, second])
            self.penalized = (
                test.penalized is not None and not test.fit(full[None], outcome).ok[0]
            )
            self.method = (
                "F" if test.exact_f else ("Firth LR" if self.penalized else "LR")
            )

    def pvalues(
        self,
        sets: Sequence[Sequence[int]],
        pool: Sequence[Sequence[int]] | None = None,
    ) -> _Float:
        """Raw p-values of ``H_C: beta_C = 0`` for each set, 1 when untestable.

        Parameters
        ----------
        sets : sequence of sequences of int
            Non-empty clusters, as column positions in the selected features.
        pool : sequence of sequences of int, optional
            The nodes that fit the factor line the first time a factor is
            needed (:func:`bartlett_line`; default: ``sets``): the split's
            whole tree, so that every node gets its factor from one line.

        Returns
        -------
        ndarray of shape (n_sets,)
            :func:`node_pvalues` of each set (a set tested before keeps its
            p-value); 1 for a set whose reduced fit did not converge, and
            for every set when :attr:`problem` is set (it is set here when
            the full regression cannot be fitted).
        """
        keys = [tuple(sorted(int(j) for j in s)) for s in sets]
        out = np.ones(len(keys))
        if self.problem is not None:
            return out
        todo = list(dict.fromkeys(k for k in keys if k not in self._raw))
        if todo:
            self._estimate_factors({len(k) for k in todo}, pool or todo)
            p, problem = node_pvalues(
                self.distribution,
                self.second,
                self.covariates,
                self.outcome,
                todo,
                factors=self.factors,
                penalized=self.penalized,
            )
            if problem is not None:
                self.problem = problem
                return out
            self._raw.update(zip(todo, np.where(np.isnan(p), 1.0, p), strict=True))
        return np.array([self._raw[k] for k in keys])

    @property
    def n_tested(self) -> int:
        """Number of distinct clusters tested so far."""
        return len(self._raw)

    def _estimate_factors(self, sizes: set[int], pool: Sequence[Sequence[int]]) -> None:
        """Give the sizes not seen yet their factor, from the split's line.

        The line (:func:`bartlett_line`) is fitted the first time a factor
        is needed, to the full model and :attr:`factor_sample` nodes of
        ``pool``, and serves every later node of the split.
        """
        needed = sizes - set(self.factors)
        if not needed or self.exact_f:
            return
        if self.line is None:
            fit = _test_for(self.distribution, self.penalized)
            null = _permuted(
                fit,
                self.second,
                self.covariates,
                self.outcome,
                N_PERMUTATIONS,
                self._rng,
            )
            sample = _factor_sample(pool, self.n_selected, self.factor_sample)
            self.line = _line(fit, null, self.covariates.shape[1], self.outcome, sample)
        self.factors.update({q: self.line.factor(q) for q in needed})


# ---------------------------------------------------------------- descent
class Descent(NamedTuple):
    """The descent of one split (see :func:`descend`)."""

    nodes: list[Node]
    raw: _Float
    hierarchical: _Float
    feature_pvalues: _Float
    n_tested: int
    problem: str | None
    #: "F", "LR" or "Firth LR" (a logistic full model whose MLE does not exist)
    method: str = "none"
    #: the split's tests, for further clusters (the common tree)
    tests: SplitTests | None = None


def descend(
    distribution: Distribution,
    first: _Float,
    second: _Float,
    covariates: _Float,
    outcome: _Float,
    clusters: Sequence[Sequence[int]],
    *,
    random_state: int | np.random.Generator | None = 0,
    factor_sample: int = FACTOR_SAMPLE,
) -> Descent:
    """Test the tree of one split from the root down; adjust hierarchically.

    Parameters
    ----------
    distribution : Distribution
        The family's response math (``Family.distribution``).
    first : ndarray of shape (n_first, n_selected)
        The selected features on the first part (the tree).
    second : ndarray of shape (n_second, n_selected)
        The same features on the second part, standardized with the first
        part's means and standard deviations (the tests).
    covariates : ndarray of shape (n_second, n_covariates)
        The template's covariates on the second part.
    outcome : ndarray
        The second part's step-2 outcome.
    clusters : sequence of sequences of int
        The split's clusters, as positions into the selected features.
    random_state : int, numpy.random.Generator or None, default=0
        Seeds the permutations of the likelihood-ratio tests' factors
        (:func:`bartlett_line`).
    factor_sample : int, default=FACTOR_SAMPLE
        Most nodes of the tree (besides the full model) whose permuted
        statistics fit the factor line, fitted once and used for every node.

    Returns
    -------
    Descent
        The tree, each node's raw and hierarchical p-value (1, and raw NaN,
        below a node whose hierarchical p-value is 1), each feature's
        hierarchical p-value (its leaf's), the number of nodes tested, and
        ``problem`` (why the feature-level p-values are all 1: too wide, or the
        full model cannot be fitted) and ``method``, the test used: ``"F"``,
        ``"LR"``, or ``"Firth LR"`` when the features separate the second
        part's classes (the logistic MLE does not exist: Firth's penalized
        likelihood-ratio test, Heinze & Schemper 2002, for every node);
        ``tests``, the split's :class:`SplitTests`, which can test further
        clusters of the same features with the same factors.
    """
    nodes = build_tree(first, clusters)
    n_sel = second.shape[1]
    raw = np.full(len(nodes), np.nan)
    hier = np.ones(len(nodes))
    ones = np.ones(n_sel)
    tests = SplitTests(
        distribution,
        second,
        covariates,
        outcome,
        random_state=random_state,
        factor_sample=factor_sample,
    )
    if tests.problem is not None:
        return Descent(nodes, raw, hier, ones, 0, tests.problem, tests=tests)
    depth = np.zeros(len(nodes), dtype=int)
    for i, node in enumerate(nodes[1:], start=1):
        depth[i] = depth[node.parent] + 1
    sizes = [len(n.members) for n in nodes]
    parents = [n.parent for n in nodes]
    pool = [n.members for n in nodes]
    tested = 0
    for d in range(int(depth.max()) + 1):
        level = [
            i
            for i in np.flatnonzero(depth == d)
            if nodes[i].parent < 0 or hier[nodes[i].parent] < 1.0
        ]
        if not level:
            break
        p = tests.pvalues([nodes[i].members for i in level], pool)
        if tests.problem is not None:
            return Descent(
                nodes,
                raw,
                np.ones(len(nodes)),
                ones,
                tested,
                tests.problem,
                tests.method,
                tests,
            )
        raw[level] = p
        tested += len(level)
        hier = hierarchical_pvalues(raw, sizes, parents, n_sel)
    feature_pvalues = np.ones(n_sel)
    for i, node in enumerate(nodes):
        if len(node.members) == 1:
            feature_pvalues[node.members[0]] = hier[i]
    return Descent(nodes, raw, hier, feature_pvalues, tested, None, tests.method, tests)
