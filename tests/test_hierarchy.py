"""Gene-level tests of a split's selected genes: tree, node tests, descent."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import needs_survival
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

import vcpcr.inference._hierarchy as hierarchy
from vcpcr import VCPCR
from vcpcr._solvers.distributions import LOGISTIC, NORMAL, PROPORTIONAL_HAZARDS
from vcpcr.exceptions import VCPCRWarning
from vcpcr.inference import multi_split
from vcpcr.inference._hierarchy import (
    MIN_RESIDUAL_DF,
    Node,
    SplitTests,
    _factor_sample,
    bartlett_factors,
    bartlett_line,
    build_tree,
    descend,
    hierarchical_pvalues,
    minimal_rejections,
    node_pvalues,
    too_wide,
)

#: Sets of columns tested on the small designs below (genes 0-5).
SETS = [[0], [1, 2], [0, 1, 2, 3, 4, 5], [3, 4], [5]]


def _small(seed=0, n=50):
    rng = np.random.default_rng(seed)
    genes = rng.standard_normal((n, 6))
    genes[:, 1] += genes[:, 2]  # correlated genes
    covariates = rng.standard_normal((n, 2))
    eta = 0.8 * genes[:, 0] + 0.5 * covariates[:, 0]
    return rng, genes, covariates, eta


def _reduced(genes, covariates, tested):
    keep = [j for j in range(genes.shape[1]) if j not in tested]
    return np.column_stack([covariates, genes[:, keep]])


# ------------------------------------------------------------------ node tests
def test_partial_f_test_against_statsmodels_compare_f_test():
    rng, genes, covariates, eta = _small()
    y = eta + rng.standard_normal(eta.size)
    ours, problem = node_pvalues(NORMAL, genes, covariates, y, SETS)
    assert problem is None
    full = sm.OLS(y, sm.add_constant(np.column_stack([covariates, genes]))).fit()
    expected = [
        full.compare_f_test(
            sm.OLS(y, sm.add_constant(_reduced(genes, covariates, s))).fit()
        )[1]
        for s in SETS
    ]
    assert_allclose(ours, expected, rtol=1e-9, atol=1e-300)


def test_logistic_likelihood_ratio_against_statsmodels_logit_llf():
    rng, genes, covariates, eta = _small(1)
    y = (rng.random(eta.size) < LOGISTIC.mean(eta)).astype(float)
    ours, problem = node_pvalues(LOGISTIC, genes, covariates, y, SETS)
    assert problem is None
    llf = sm.Logit(y, sm.add_constant(np.column_stack([covariates, genes]))).fit(disp=0)
    expected = []
    for s in SETS:
        red = sm.Logit(y, sm.add_constant(_reduced(genes, covariates, s))).fit(disp=0)
        expected.append(stats.chi2.sf(2 * (llf.llf - red.llf), len(s)))
    assert_allclose(ours, expected, rtol=1e-7)


@needs_survival
def test_cox_likelihood_ratio_against_lifelines_log_likelihood():
    from lifelines import CoxPHFitter

    rng, genes, covariates, eta = _small(2)
    time = np.round(rng.exponential(np.exp(-eta)), 1) + 0.1  # ties: Efron's
    event = (rng.random(eta.size) < 0.7).astype(float)
    outcome = np.column_stack([time, event])
    ours, problem = node_pvalues(PROPORTIONAL_HAZARDS, genes, covariates, outcome, SETS)
    assert problem is None

    def loglik(X):
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        frame = frame.assign(T=time, E=event)
        return CoxPHFitter().fit(frame, "T", "E").log_likelihood_

    full = loglik(np.column_stack([covariates, genes]))
    expected = [
        stats.chi2.sf(2 * (full - loglik(_reduced(genes, covariates, s))), len(s))
        for s in SETS
    ]
    assert_allclose(ours, expected, rtol=1e-6)


@needs_survival
def test_stratified_cox_likelihood_ratio_against_lifelines_strata():
    """with_strata: every node test is lifelines' stratified Cox model."""
    from lifelines import CoxPHFitter

    rng, genes, covariates, eta = _small(7, n=90)
    centre = np.repeat(["a", "b", "c"], 30)
    base = np.repeat([0.5, 1.0, 3.0], 30)  # a baseline hazard per centre
    time = np.round(rng.exponential(1 / (base * np.exp(eta))), 1) + 0.1
    event = (rng.random(eta.size) < 0.7).astype(float)
    outcome = hierarchy.with_strata(np.column_stack([time, event]), centre)
    assert_array_equal(outcome[:, 2], np.repeat([0.0, 1.0, 2.0], 30))
    ours, problem = node_pvalues(PROPORTIONAL_HAZARDS, genes, covariates, outcome, SETS)
    plain, _ = node_pvalues(
        PROPORTIONAL_HAZARDS, genes, covariates, outcome[:, :2], SETS
    )
    assert problem is None

    def loglik(X):
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        frame = frame.assign(T=time, E=event, centre=centre)
        return CoxPHFitter().fit(frame, "T", "E", strata=["centre"]).log_likelihood_

    full = loglik(np.column_stack([covariates, genes]))
    expected = [
        stats.chi2.sf(2 * (full - loglik(_reduced(genes, covariates, s))), len(s))
        for s in SETS
    ]
    assert_allclose(ours, expected, rtol=1e-5)
    assert np.abs(ours - plain).max() > 1e-3  # the strata change the tests
    # the factor's permutations stay within the strata
    permuted = hierarchy._permuted(
        hierarchy._test_for(PROPORTIONAL_HAZARDS),
        genes,
        covariates,
        outcome,
        3,
        np.random.default_rng(0),
    )
    for r in range(3):
        for k in range(3):
            rows = slice(30 * k, 30 * (k + 1))
            moved = permuted.stack[r, rows, covariates.shape[1] :]
            assert sorted(map(tuple, moved)) == sorted(map(tuple, genes[rows]))


def test_bartlett_factors_divide_the_likelihood_ratio():
    rng, genes, covariates, eta = _small(3)
    y = (rng.random(eta.size) < LOGISTIC.mean(eta)).astype(float)
    factors = bartlett_factors(LOGISTIC, genes, covariates, y, SETS, random_state=0)
    assert set(factors) == {1, 2, 6}
    assert all(f >= 1.0 for f in factors.values())
    plain, _ = node_pvalues(LOGISTIC, genes, covariates, y, SETS)
    corrected, _ = node_pvalues(LOGISTIC, genes, covariates, y, SETS, factors=factors)
    lr = stats.chi2.isf(plain, [len(s) for s in SETS])
    expected = stats.chi2.sf(
        lr / [factors[len(s)] for s in SETS], [len(s) for s in SETS]
    )
    assert_allclose(corrected, expected, rtol=1e-6)
    # the same seed, the same factors; the F test needs none
    again = bartlett_factors(LOGISTIC, genes, covariates, y, SETS, random_state=0)
    assert again == factors
    assert bartlett_factors(NORMAL, genes, covariates, y, SETS) == {}


def test_factor_sample_spreads_over_the_sizes():
    tree = [(0, 1, 2, 3, 4, 5, 6, 7), (0, 1, 2, 3), (4, 5, 6, 7), (0, 1), (2, 3)]
    tree += [(j,) for j in range(8)] + [(0, 1, 2)]
    # the full model, then the sizes 1, 2, 3, 4 (smallest to largest), then more
    assert _factor_sample(tree, 8, 6) == [
        tuple(range(8)),
        (0,),
        (0, 1),
        (0, 1, 2),
        (0, 1, 2, 3),
        (4, 5, 6, 7),
        (2, 3),
    ]
    assert _factor_sample(tree, 8, 2) == [tuple(range(8)), (0,), (0, 1, 2, 3)]
    assert _factor_sample([(0, 1, 2)], 3, 6) == [(0, 1, 2)]  # only the root


def test_factor_line_is_the_weighted_fit_of_permuted_statistics():
    """The line against an independent computation: the same permutations of
    the genes' rows, each sampled set's likelihood-ratio statistic from
    statsmodels' Logit log-likelihoods, and statsmodels' WLS (weights q) of
    mean statistic / q on q."""
    rng, genes, covariates, eta = _small(3)
    y = (rng.random(eta.size) < LOGISTIC.mean(eta)).astype(float)
    line = bartlett_line(LOGISTIC, genes, covariates, y, SETS, random_state=5)
    perm = np.random.default_rng(5)
    stacks = [genes[perm.permutation(eta.size)] for _ in range(20)]
    sample = [tuple(range(6)), *[tuple(s) for s in SETS if len(s) < 6]]
    assert _factor_sample(SETS, 6) == sample  # 4 sets after the full model

    def llf(design):
        return sm.Logit(y, sm.add_constant(design)).fit(disp=0, tol=1e-12).llf

    means = []
    for s in sample:
        lr = [
            2
            * (llf(np.column_stack([covariates, g])) - llf(_reduced(g, covariates, s)))
            for g in stacks
        ]
        means.append(np.mean(lr) / len(s))
    q = np.array([len(s) for s in sample], dtype=float)
    wls = sm.WLS(means, sm.add_constant(q), weights=q).fit()
    assert_allclose(line.means, means, rtol=1e-6)
    assert_allclose([line.intercept, line.slope], wls.params, rtol=1e-6)
    factors = bartlett_factors(LOGISTIC, genes, covariates, y, SETS, random_state=5)
    assert factors == {q: max(1.0, line.factor(q)) for q in (1, 2, 6)}
    assert line.factor(0) == max(1.0, line.intercept)
    assert bartlett_line(NORMAL, genes, covariates, y, SETS) == hierarchy.NO_FACTOR


@needs_survival
def test_split_tests_fit_one_line_for_every_node(monkeypatch):
    """The permutations run once per split; every node's factor, whatever
    its size and whichever call tests it, is that line's."""
    rng, genes, covariates, eta = _small(4, n=80)
    t, c = rng.exponential(np.exp(-eta)), rng.exponential(2.0, eta.size)
    outcome = np.column_stack([np.minimum(t, c), (t <= c).astype(float)])
    calls = []
    permuted = hierarchy._permuted
    monkeypatch.setattr(
        hierarchy, "_permuted", lambda *a: calls.append(a[-2]) or permuted(*a)
    )
    tests = SplitTests(PROPORTIONAL_HAZARDS, genes, covariates, outcome)
    first = tests.pvalues([list(range(6))], SETS)
    later = tests.pvalues([[0], [1, 2], [3, 4, 5], [1, 2, 3, 4, 5]], SETS)
    assert calls == [20]  # one set of 20 permutations
    assert tests.line is not None
    assert tests.line.sizes == (6, 1, 2, 2, 1)
    assert set(tests.factors) == {1, 2, 3, 5, 6}
    for q, f in tests.factors.items():
        assert f == tests.line.factor(q) >= 1.0
    plain, _ = node_pvalues(
        PROPORTIONAL_HAZARDS, genes, covariates, outcome, [[3, 4, 5]]
    )
    lr = stats.chi2.isf(plain[0], 3)
    assert_allclose(later[2], stats.chi2.sf(lr / tests.line.factor(3), 3), rtol=1e-6)
    assert 0 < first[0] < 1


def test_separated_classes_use_firths_penalized_test():
    """Gene 0 separates the classes: the MLE does not exist, Firth's test runs."""
    _, genes, covariates, _ = _small(4)
    y = (genes[:, 0] > 0).astype(float)
    plain, problem = node_pvalues(LOGISTIC, genes, covariates, y, SETS)
    assert problem is not None
    assert np.isnan(plain).all()
    firth, problem = node_pvalues(LOGISTIC, genes, covariates, y, SETS, penalized=True)
    assert problem is None
    assert firth[0] < 1e-4  # the separating gene
    assert firth[4] > 0.01  # an unrelated one
    result = descend(LOGISTIC, genes, genes, covariates, y, [[0, 1, 2], [3, 4, 5]])
    assert result.method == "Firth LR"
    assert result.feature_pvalues[0] < 0.05


# ---------------------------------------------------------------- the tree
def test_tree_from_modules_down_to_single_genes():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((80, 1))
    X = np.column_stack(
        [z + 0.1 * rng.standard_normal((80, 2)), rng.standard_normal((80, 3))]
    )
    nodes = build_tree(X, [[0, 1, 2], [3], [4]])
    assert nodes[0] == Node((0, 1, 2, 3, 4), -1, "selected")
    assert [n.members for n in nodes if n.parent == 0] == [(0, 1, 2), (3,), (4,)]
    # average linkage on 1 - |corr|: the two near-copies merge first
    assert Node((0, 1), 1, "sub-module") in nodes
    leaves = sorted(n.members[0] for n in nodes if len(n.members) == 1)
    assert leaves == [0, 1, 2, 3, 4]
    for i, node in enumerate(nodes[1:], start=1):
        assert node.parent < i
        assert set(node.members) < set(nodes[node.parent].members)
    # one module: it is the root, not repeated
    single = build_tree(X[:, :3], [[0, 1, 2]])
    assert [n.level for n in single].count("selected") == 1
    assert len(single) == 5  # root, one sub-module, three genes


def test_hierarchical_adjustment_on_a_hand_made_tree():
    """Root {0..3}; modules {0, 1} and {2, 3}; genes. |S| = 4."""
    parents = [-1, 0, 0, 1, 1, 2, 2]
    sizes = [4, 2, 2, 1, 1, 1, 1]
    raw = [0.001, 0.004, 0.3, 0.002, 0.02, np.nan, np.nan]
    hier = hierarchical_pvalues(raw, sizes, parents, 4)
    # module {2, 3}: 0.3 * 4 / 2 = 0.6; gene 1: max(0.02 * 4, 0.008) = 0.08;
    # gene 0: max(0.002 * 4, 0.004 * 2) = 0.008; below a 1: not read
    assert_allclose(hier[:5], [0.001, 0.008, 0.6, 0.008, 0.08], rtol=1e-12)
    raw[2] = 0.9  # 0.9 * 2 >= 1: its genes are 1 whatever their raw p-values
    raw[5] = raw[6] = 1e-9
    hier = hierarchical_pvalues(raw, sizes, parents, 4)
    assert hier[2] == hier[5] == hier[6] == 1.0
    nodes = [Node((), p, "") for p in parents]
    assert minimal_rejections(
        nodes, np.array([0.01, 0.02, 0.5, 0.03, 0.2, 1, 1]), 0.05
    ) == [3]
    assert minimal_rejections(nodes, np.array([0.01, 0.2, 0.5, 1, 1, 1, 1]), 0.05) == [
        0
    ]


def test_descent_stops_below_a_node_with_p_one():
    rng = np.random.default_rng(5)
    X1, X2 = rng.standard_normal((50, 6)), rng.standard_normal((50, 6))
    y = 2 * X2[:, 0] + rng.standard_normal(50)
    result = descend(NORMAL, X1, X2, np.empty((50, 0)), y, [[0, 1, 2], [3, 4, 5]])
    assert result.problem is None
    assert result.method == "F"
    assert result.feature_pvalues[0] < 1e-6
    assert (result.feature_pvalues[3:] == 1).all()
    untested = np.isnan(result.raw)
    assert untested.any()  # the noise module's genes were not fitted
    assert result.n_tested == (~untested).sum()
    for i in np.flatnonzero(untested):
        assert result.hierarchical[result.nodes[i].parent] == 1.0


# ----------------------------------------------------------------- width rule
def test_too_wide_splits_give_p_one_and_say_why():
    rng = np.random.default_rng(0)
    n, width = 30, 30 - 1 - MIN_RESIDUAL_DF + 1  # one column too many
    assert too_wide(NORMAL, np.zeros(n), width - 1) is None
    assert "residual degrees of freedom" in too_wide(NORMAL, np.zeros(n), width)
    y01 = np.r_[np.ones(10), np.zeros(20)]
    assert too_wide(LOGISTIC, y01, 5) is None
    assert "10 rows of the rarer class" in too_wide(LOGISTIC, y01, 6)
    X = rng.standard_normal((n, width))
    result = descend(
        NORMAL, X, X, np.empty((n, 0)), rng.standard_normal(n), [range(width)]
    )
    assert result.problem is not None
    assert result.n_tested == 0
    assert_array_equal(result.feature_pvalues, np.ones(width))


def test_multi_split_counts_the_splits_too_wide_for_the_gene_test():
    """Identity weights keep all 40 genes: 40 columns on 30 rows is too wide;
    gene-level p = 1 everywhere, the module tests stand, the summary says why."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 40))
    X[:, :5] += 2 * rng.standard_normal((60, 1))
    y = X[:, :5].sum(axis=1) + rng.standard_normal(60)
    res = multi_split(
        VCPCR(n_clusters=2, weights="identity", lam_ratio=0.0, n_init=1),
        X,
        y,
        n_splits=4,
        random_state=0,
    )
    assert res.n_splits_used == 4
    assert res.n_splits_gene_level == 0
    assert res.splits["gene_reason"].str.contains("too many selected genes").all()
    assert (res.split_pvalues == 1).all(axis=None)
    assert (res.pvalues == 1).all()
    assert (res.membership_pvalues.iloc[:5] < 0.05).all()
    words = " ".join(res.summary().as_text().split())
    assert "4 used split(s) gave no gene-level test" in words


# --------------------------------------------------------------- the defect
def _hitchhiker(seed, n=100):
    """Five genes around one factor, four active; gene 4 ('hitch') inactive."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 1))
    block = 0.8 * z + 0.6 * rng.standard_normal((n, 5))
    X = np.column_stack([block, rng.standard_normal((n, 15))])
    y = 0.5 * block[:, :4].sum(axis=1) + rng.standard_normal(n)
    names = [f"a{j}" for j in range(4)] + ["hitch"] + [f"n{j}" for j in range(15)]
    return pd.DataFrame(X, columns=names), y


def test_a_noise_gene_in_an_active_module_is_not_rejected():
    """Unsupervised weights put the inactive 'hitch' gene (and some noise genes)
    into the active module: module membership rejects them all; the descent
    tests each gene's own coefficient and rejects none of them."""
    X, y = _hitchhiker(0)
    res = multi_split(
        VCPCR(n_clusters=2, weights="identity", lam_ratio=0.3, n_init=2),
        X,
        y,
        n_splits=20,
        random_state=0,
    )
    null = X.columns[4:]
    assert res.membership_pvalues["hitch"] < 0.05  # today's defect
    assert (res.membership_pvalues[null] < 0.05).sum() >= 3
    assert (res.pvalues[null] > 0.05).all()
    assert res.n_splits_gene_level == 20
    # the splits find the active genes, as a cluster more often than alone
    assert res.clusters["split"].nunique() >= 15
    found = {g for members in res.clusters["members"] for g in members}
    assert found & {"a0", "a1", "a2", "a3"}


@pytest.mark.slow
def test_gene_level_error_over_null_genes_under_signal():
    """30 hitchhiker data sets: module membership rejects a null gene in most,
    the descent in few (FWER over the inactive genes at 0.05)."""
    gene, member = 0, 0
    for seed in range(30):
        X, y = _hitchhiker(100 + seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VCPCRWarning)
            res = multi_split(
                VCPCR(n_clusters=2, weights="identity", lam_ratio=0.3, n_init=1),
                X,
                y,
                n_splits=20,
                random_state=seed,
            )
        gene += bool((res.pvalues.iloc[4:] < 0.05).any())
        member += bool((res.membership_pvalues.iloc[4:] < 0.05).any())
    assert member >= 20, member
    assert stats.beta.ppf(0.975, gene + 1, 30 - gene) < 0.2, gene


# ------------------------------------------------------------- level on 50 rows
def _size(distribution, n_sets, k=10, n=50):
    """Share of p-values < 0.05 of null genes (two of ``k`` genes active)."""
    rejected, total = 0, 0
    for rep in range(n_sets):
        rng = np.random.default_rng(rep)
        genes = rng.standard_normal((n, k))
        eta = 0.5 * genes[:, 0] + 0.5 * genes[:, 1]
        if distribution is NORMAL:
            outcome = eta + rng.standard_normal(n)
        elif distribution is LOGISTIC:
            outcome = (rng.random(n) < LOGISTIC.mean(eta)).astype(float)
        else:
            t, c = rng.exponential(np.exp(-eta)), rng.exponential(2.0, n)
            outcome = np.column_stack([np.minimum(t, c), (t <= c).astype(float)])
        sets = [[j] for j in range(2, k)] + [list(range(2, k))]
        cov = np.empty((n, 0))
        factors = bartlett_factors(
            distribution, genes, cov, outcome, sets, random_state=rep
        )
        p, problem = node_pvalues(
            distribution, genes, cov, outcome, sets, factors=factors
        )
        if problem is None:
            rejected += int((p[:2] < 0.05).sum())
            total += 2
    return rejected / total


def test_partial_f_test_has_its_nominal_size():
    assert abs(_size(NORMAL, 400) - 0.05) < 0.025


@pytest.mark.slow
@pytest.mark.parametrize(
    "distribution", [LOGISTIC, PROPORTIONAL_HAZARDS], ids=["binomial", "cox"]
)
def test_corrected_likelihood_ratio_has_its_nominal_size_on_50_rows(distribution):
    """10 genes on 50 rows: the plain chi2 LR test rejects ~10 % of null genes
    at 0.05 (docs/inference.md); divided by its Bartlett-type factor ~5-6 %."""
    assert _size(distribution, 300) < 0.075


@pytest.mark.slow
@pytest.mark.parametrize(
    "distribution",
    [NORMAL, LOGISTIC, PROPORTIONAL_HAZARDS],
    ids=["gaussian", "binomial", "cox"],
)
def test_descent_holds_its_level_per_split_under_the_global_null(distribution):
    """One split's descent on 50 + 50 rows, 10 genes in 3 correlated modules,
    y independent of them: some node rejected at 0.05 in at most ~5 % of 200
    splits (measured with 400: gaussian 0.048, binomial 0.039, cox 0.048)."""
    n, events, ran = 50, 0, 0
    for rep in range(200):
        rng = np.random.default_rng(rep)
        z = rng.standard_normal((2 * n, 3))
        X = 0.7 * np.repeat(z, [4, 3, 3], axis=1) + 0.7 * rng.standard_normal(
            (2 * n, 10)
        )
        if distribution is NORMAL:
            outcome = rng.standard_normal(n)
        elif distribution is LOGISTIC:
            outcome = (rng.random(n) < 0.5).astype(float)
        else:
            t, c = rng.exponential(size=n), rng.exponential(2.0, size=n)
            outcome = np.column_stack([np.minimum(t, c), (t <= c).astype(float)])
        modules = [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
        result = descend(
            distribution,
            X[:n],
            X[n:],
            np.empty((n, 0)),
            outcome,
            modules,
            random_state=rep,
        )
        if result.problem is None:
            ran += 1
            events += bool((result.hierarchical <= 0.05).any())
    assert ran >= 150
    assert events / ran < 0.075, (events, ran)
