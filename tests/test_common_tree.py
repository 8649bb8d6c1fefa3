"""The common tree of multi_split: tree, top-down test over the splits, result."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.cluster.hierarchy import linkage, to_tree
from scipy.spatial.distance import squareform

from vcpcr import VCPCR
from vcpcr._solvers.distributions import NORMAL
from vcpcr.inference import aggregate_pvalues, multi_split
from vcpcr.inference._common_tree import (
    SplitSelection,
    common_tree,
    descend_tree,
    tree_from_linkage,
)
from vcpcr.inference._hierarchy import SplitTests
from vcpcr.simulate import make_block_data

#: A hand-made tree over four genes: ((0, 1), (2, 3)). Pre-order positions:
#: 0 root, 1 {0, 1}, 2 {0}, 3 {1}, 4 {2, 3}, 5 {2}, 6 {3}.
HAND = np.array([[0, 1, 0.1, 2], [2, 3, 0.2, 2], [4, 5, 0.5, 4]], dtype=float)


class _Table:
    """Raw p-values of a split looked up in a table (column positions in ``S``)."""

    problem = None

    def __init__(self, table):
        self.table = table
        self.asked = []

    def pvalues(self, sets):
        self.asked.extend(tuple(s) for s in sets)
        return np.array([self.table[tuple(s)] for s in sets])


# ------------------------------------------------------------------- the tree
def test_tree_from_linkage_against_scipy_to_tree():
    """Every node's genes are those of scipy's cluster; parents come first."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 12))
    Z = linkage(X.T, method="average")
    tree = tree_from_linkage(Z, 12)
    assert tree.n_nodes == 23
    expected = []
    stack = [to_tree(Z)]
    while stack:  # scipy's tree in pre-order, left child first
        node = stack.pop()
        expected.append(sorted(node.pre_order()))
        if not node.is_leaf():
            stack.extend([node.get_right(), node.get_left()])
    assert [sorted(tree.members(i).tolist()) for i in range(23)] == expected
    for i in range(1, 23):
        parent = tree.parent[i]
        assert 0 <= parent < i
        assert set(tree.members(i)) < set(tree.members(parent))
        assert i in tree.children[parent]
    leaves = tree.children[:, 0] < 0
    assert leaves.sum() == 12
    assert_array_equal((tree.stop - tree.start)[leaves], 1)


def test_common_tree_is_average_linkage_on_one_minus_absolute_correlation():
    """A gene and its negative belong together; the linkage is scipy's."""
    rng = np.random.default_rng(1)
    z = rng.standard_normal((60, 3))
    X = np.column_stack([z[:, 0], -z[:, 0] + 0.1 * z[:, 1], z[:, 2], z[:, 1]])
    tree = common_tree(X)
    dist = 1 - np.abs(np.corrcoef(X, rowvar=False))
    np.fill_diagonal(dist, 0)
    reference = tree_from_linkage(linkage(squareform(dist), method="average"), 4)
    for got, want in zip(tree, reference, strict=True):
        assert_array_equal(got, want)
    first_merge = [i for i in range(tree.n_nodes) if tree.stop[i] - tree.start[i] == 2]
    assert sorted(tree.members(first_merge[0]).tolist()) == [0, 1]


def test_common_tree_with_a_constant_column_and_a_single_gene():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, 3))
    X[:, 1] = 4.0
    tree = common_tree(X)
    assert tree.n_nodes == 5
    one = common_tree(X[:, :1])
    assert one.n_nodes == 1
    assert one.members(0).tolist() == [0]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: common_tree(np.ones((5, 4)), max_features=3), "at most 3 features"),
        (lambda: tree_from_linkage(np.zeros((2, 4)), 4), r"shape \(3, 4\)"),
        (lambda: tree_from_linkage(HAND[:, :3], 4), r"got an array of shape \(3, 3\)"),
        (
            lambda: tree_from_linkage(HAND * [1, 1, -1, 1], 4),
            "not a valid linkage",
        ),
    ],
    ids=["too-many-genes", "too-few-merges", "three-columns", "negative-distance"],
)
def test_tree_validation_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ----------------------------------------------------------- top-down testing
def _twice_the_smaller(P):
    """``aggregate_pvalues`` with two splits and gamma_min = 0.5: 2 min_b p."""
    return aggregate_pvalues(P, gamma_min=0.5)


def test_top_down_adjustment_and_aggregation_by_hand():
    """Two splits, B = 2: P_C = min(1, 2 min_b p_{C,b}); p_{C,b} weighted by
    |S_b| / |C n S_b|; adjusted P = max over the path from the root."""
    tree = tree_from_linkage(HAND, 4)
    one = _Table({(0, 1): 0.001, (0,): 0.002, (1,): 0.3})  # S_1 = genes 0, 2
    two = _Table(  # S_2 = genes 0, 1, 3
        {(0, 1, 2): 0.004, (0, 1): 0.01, (2,): 0.5, (0,): 0.2, (1,): 0.03}
    )
    splits = [
        SplitSelection(np.array([0, 2]), one),
        SplitSelection(np.array([0, 1, 3]), two),
    ]
    result = descend_tree(tree, splits, _twice_the_smaller, 0.05)
    # root: 0.001 * 2/2 and 0.004 * 3/3 -> 2 * 0.001
    # {0, 1}: S_1 holds gene 0 only: 0.002 * 2/1; S_2: 0.01 * 3/2 -> 2 * 0.004
    # {2, 3}: 0.3 * 2/1 and min(1, 0.5 * 3/1) -> 1
    # {0}: 0.002 * 2 (asked once) and 0.2 * 3 -> 0.008, max with its parent's
    # {1}: not in S_1 (p = 1) and 0.03 * 3 -> 0.18
    assert_allclose(result.aggregated[:5], [0.002, 0.008, 0.008, 0.18, 1.0], rtol=1e-12)
    assert_allclose(result.adjusted[:5], [0.002, 0.008, 0.008, 0.18, 1.0], rtol=1e-12)
    assert_allclose(result.split_pvalues[1], [0.004, 0.015], rtol=1e-12)
    assert_allclose(result.split_pvalues[3], [1.0, 0.09], rtol=1e-12)
    # below {2, 3} (not rejected) nothing is examined
    assert np.isnan(result.adjusted[5:]).all()
    assert result.n_examined == 5
    assert result.rejected.tolist() == [True, True, True, False, False, False, False]
    assert result.minimal.tolist() == [False, False, True, False, False, False, False]
    # split 1's column 1 is gene 2, asked for {2, 3} only: gene 1 (not in
    # S_1) is never tested there
    assert one.asked.count((1,)) == 1


def test_the_adjusted_pvalue_never_drops_below_the_parents():
    tree = tree_from_linkage(HAND, 4)
    table = {(0, 1, 2, 3): 0.004, (0, 1): 0.0001, (2, 3): 0.5}
    table.update({(j,): 0.0001 for j in range(4)})
    split = SplitSelection(np.arange(4), _Table(table))
    result = descend_tree(tree, [split, split], _twice_the_smaller, 0.05)
    # {0, 1}: 2 * 0.0001 * 4/2 = 0.0004, below its parent's 0.008
    assert_allclose(result.aggregated[1], 0.0004, rtol=1e-12)
    assert_allclose(result.adjusted[1], 0.008, rtol=1e-12)
    assert_allclose(result.adjusted[2], 0.008, rtol=1e-12)  # 0.0008 raised too


def test_a_failing_split_gives_p_one_to_every_node():
    """A failed split (no tests) and a split the width rule refuses count as
    p = 1 for every node examined; they are not dropped."""
    tree = tree_from_linkage(HAND, 4)
    table = {(0, 1, 2, 3): 1e-4, (0, 1): 1e-4, (2, 3): 0.9}
    table.update({(j,): 1e-4 for j in range(4)})
    good = SplitSelection(np.arange(4), _Table(table))
    rng = np.random.default_rng(3)
    wide = SplitTests(  # 4 genes on 12 rows leave 7 < 10 residual df
        NORMAL, rng.standard_normal((12, 4)), np.empty((12, 0)), rng.random(12)
    )
    assert wide.problem is not None
    splits = [
        good,
        SplitSelection(np.arange(4), None),
        SplitSelection(np.arange(4), wide),
    ]
    result = descend_tree(tree, splits, lambda P: P.max(axis=0), 0.05)
    for node, p in result.split_pvalues.items():
        assert p[1] == 1.0, node
        assert p[2] == 1.0, node
    assert result.n_examined == 1  # the root, P = max = 1
    assert not result.rejected.any()


def test_a_cluster_with_no_selected_gene_gets_p_one_without_a_test():
    tree = tree_from_linkage(HAND, 4)
    tests = _Table({(0, 1): 1e-6, (0,): 1e-6, (1,): 1e-6})
    split = SplitSelection(np.array([0, 1]), tests)  # genes 0 and 1 only
    result = descend_tree(tree, [split, split], _twice_the_smaller, 0.05)
    assert result.split_pvalues[4].tolist() == [1.0, 1.0]  # {2, 3}
    assert set(tests.asked) == {(0, 1), (0,), (1,)}


def test_inheritance_passes_a_rejected_genes_weight_to_its_relatives():
    """Goeman & Finos by hand: genes 0 and 1 are rejected, their weights go
    up to the root and down to genes 2 and 3 (none left under {0, 1}), so
    gene 2 (0.01 * 4/1 * 2 = 0.08 without) is rejected at weight 2: 0.04."""
    tree = tree_from_linkage(HAND, 4)
    table = {(0, 1, 2, 3): 0.001, (0, 1): 0.001, (2, 3): 0.009}
    table.update({(0,): 0.001, (1,): 0.004, (2,): 0.01, (3,): 0.5})
    split = SplitSelection(np.arange(4), _Table(table))
    plain = descend_tree(tree, [split, split], _twice_the_smaller, 0.05)
    assert_allclose(plain.adjusted[5], 0.08, rtol=1e-12)
    assert plain.rejected.tolist() == [True, True, True, True, True, False, False]
    heir = descend_tree(
        tree, [split, split], _twice_the_smaller, 0.05, inheritance=True
    )
    assert heir.rejected.tolist() == [True, True, True, True, True, True, False]
    assert_allclose(heir.adjusted[5], 0.04, rtol=1e-12)
    # gene 3 then holds all four genes' weight: 0.5 * 4/4 * 2 = 1
    assert_allclose(heir.adjusted[6], 1.0, rtol=1e-12)
    # what was rejected before keeps its value (weights only grow)
    assert_allclose(heir.adjusted[:5], plain.adjusted[:5], rtol=1e-12)


def test_inheritance_changes_nothing_when_no_single_gene_is_rejected():
    tree = tree_from_linkage(HAND, 4)
    table = {(0, 1, 2, 3): 0.001, (0, 1): 0.002, (2, 3): 0.3}
    table.update({(j,): 0.2 for j in range(4)})
    split = SplitSelection(np.arange(4), _Table(table))
    plain = descend_tree(tree, [split, split], _twice_the_smaller, 0.05)
    heir = descend_tree(
        tree, [split, split], _twice_the_smaller, 0.05, inheritance=True
    )
    assert_array_equal(plain.adjusted, heir.adjusted)


# ------------------------------------------------------------- in multi_split
@pytest.fixture(scope="module")
def strong():
    """An active block of five genes at correlation 0.95: the block is clear,
    which of its genes acts is not."""
    data = make_block_data(80, [5, 5], [0.4, 0.0], rho=0.95, n_noise=30, random_state=2)
    names = [f"g{j}" for j in range(data.X.shape[1])]
    X = pd.DataFrame(data.X, columns=names)
    result = multi_split(
        VCPCR(n_clusters=3, n_init=2), X, data.y, n_splits=50, random_state=0
    )
    return X, data.y, result


def test_common_tree_rejects_the_block_where_no_single_gene_is(strong):
    """The gain of one tree for every split: the active block's cluster is
    rejected, none of its genes alone (in either gene-level p-value)."""
    _, _, result = strong
    active = {f"g{j}" for j in range(5)}
    assert result.pvalues.min() > 0.05  # the per-split descent finds no gene
    assert result.tree_pvalues.min() > 0.05
    minimal = result.tree_clusters[result.tree_clusters["minimal"]]
    assert len(minimal) >= 1
    for c in minimal.itertuples():
        assert 2 <= c.size < 10
        assert set(c.members) <= active
        assert c.pvalue <= 0.05
    # the table agrees with the tree: sizes, members, the root first
    clusters = result.tree_clusters
    assert clusters["node"].iloc[0] == 0
    assert clusters["size"].iloc[0] == 40
    for c in clusters.itertuples():
        genes = result.tree.members(c.node)
        assert c.size == genes.size
        assert c.members == tuple(f"g{j}" for j in sorted(genes))
    assert "nodes examined" in result.tree_info


def test_inheritance_in_multi_split_only_adds_rejections():
    """Weights only grow: every cluster rejected without inheritance is
    rejected with it, with a tree p-value no larger; the run says so."""
    data = make_block_data(
        120, [1, 1, 1, 4], [1.0, 0.8, 0.6, 0.0], n_noise=16, random_state=2
    )
    kw = {"n_splits": 10, "random_state": 3}
    model = VCPCR(n_clusters=3, n_init=2)
    plain = multi_split(model, data.X, data.y, **kw)
    heir = multi_split(model, data.X, data.y, inheritance=True, **kw)
    assert (plain.tree_pvalues < 0.05).sum() >= 1  # a gene is rejected
    assert set(plain.tree_clusters["node"]) <= set(heir.tree_clusters["node"])
    assert (heir.tree_pvalues <= plain.tree_pvalues + 1e-12).all()
    assert "with inheritance" in heir.tree_info
    assert "with inheritance" not in plain.tree_info
    assert_array_equal(plain.pvalues, heir.pvalues)  # gene P is untouched


def test_the_common_tree_does_not_depend_on_y(strong):
    X, y, result = strong
    other = multi_split(
        VCPCR(n_clusters=3, n_init=2),
        X,
        np.random.default_rng(5).permutation(y),
        n_splits=4,
        random_state=1,
    )
    for got, want in zip(other.tree, result.tree, strict=True):
        assert_array_equal(got, want)
    reference = common_tree(X.to_numpy())
    for got, want in zip(result.tree, reference, strict=True):
        assert_array_equal(got, want)


def test_a_linkage_of_ones_own_and_none(strong):
    X, y, _ = strong
    Z = linkage(X.to_numpy().T, method="complete")
    own = multi_split(
        VCPCR(n_clusters=3, n_init=2), X, y, n_splits=4, random_state=0, common_tree=Z
    )
    for got, want in zip(own.tree, tree_from_linkage(Z, 40), strict=True):
        assert_array_equal(got, want)
    assert own.tree_info.startswith("the linkage passed as common_tree")
    off = multi_split(
        VCPCR(n_clusters=3, n_init=2),
        X,
        y,
        n_splits=4,
        random_state=0,
        common_tree=None,
    )
    assert off.tree is None
    assert off.tree_pvalues is None
    assert off.tree_clusters.empty
    assert list(off.tree_clusters.columns) == list(own.tree_clusters.columns)
    assert "common_tree=None" in off.summary().as_text().replace("\n", " ")
    pd.testing.assert_series_equal(off.pvalues, own.pvalues)  # nothing else moves


def test_auto_skips_the_tree_above_the_size_limit(strong, monkeypatch):
    import vcpcr.inference._multi_split as ms

    X, y, _ = strong
    monkeypatch.setattr(ms, "TREE_MAX_FEATURES", 30)
    auto = multi_split(VCPCR(n_clusters=3, n_init=2), X, y, n_splits=4, random_state=0)
    assert auto.tree_pvalues is None
    assert "40 clustered features is more than 30" in auto.tree_info
    with pytest.raises(ValueError, match="at most 30 features"):
        multi_split(
            VCPCR(n_clusters=3, n_init=2),
            X,
            y,
            n_splits=4,
            random_state=0,
            common_tree="average",
        )


@pytest.mark.parametrize(
    ("common_tree_", "match"),
    [
        ("ward", "must be 'auto', 'average', a scipy linkage matrix or None"),
        (np.zeros((3, 4)), r"shape \(39, 4\) over the 40 clustered features"),
    ],
    ids=["unknown-name", "wrong-linkage"],
)
def test_bad_common_tree(strong, common_tree_, match):
    X, y, _ = strong
    with pytest.raises(ValueError, match=match):
        multi_split(
            VCPCR(n_clusters=3, n_init=2), X, y, n_splits=4, common_tree=common_tree_
        )


def test_summary_shows_the_common_tree_and_its_guarantee(strong):
    _, _, result = strong
    text = result.summary().as_text()
    flat = " ".join(text.split())
    assert "Common tree (average linkage on 1 - |corr| of X" in flat
    assert "minimal: {g" in flat
    assert "clusters that contain no active gene" in flat
    assert max(len(line) for line in text.splitlines()) <= 80


def test_model_summary_with_inference_shows_the_common_tree(strong):
    """model.summary(inference=result) carries the tree's findings as a note."""
    X, y, result = strong
    model = VCPCR(n_clusters=3, n_init=2).fit(X, y)
    flat = " ".join(str(model.summary(inference=result)).split())
    assert "Common tree (average linkage on 1 - |corr| of X" in flat
    assert "minimal: {g" in flat
    assert "clusters that contain no active gene" in flat
