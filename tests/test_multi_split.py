"""Multi-split p-values: the aggregation, the splits, the result, the summary."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import doc_examples, needs_survival, printed_lines
from numpy.testing import assert_allclose
from pandas.testing import assert_series_equal
from scipy import stats
from sklearn.base import clone
from sklearn.linear_model import LinearRegression

from vcpcr import VCPCR, VCPCRCV, Surv
from vcpcr._parallel import task_seeds
from vcpcr._solvers.distributions import NORMAL
from vcpcr._summary import CONDITIONAL_TITLE
from vcpcr.exceptions import VCPCRWarning
from vcpcr.inference import MultiSplitResult, aggregate_pvalues, multi_split
from vcpcr.inference._hierarchy import descend
from vcpcr.inference._resampling import draw_splits
from vcpcr.simulate import make_block_data

PENALTY = 1 - math.log(0.05)  # 3.9957...
ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- aggregation
def test_aggregate_all_ones_gives_ones():
    assert aggregate_pvalues(np.ones((20, 4))).tolist() == [1.0] * 4


def test_aggregate_one_split_is_that_split():
    """B = 1: the grid is {1}, no penalty: the split's own p-values."""
    P = np.array([[0.01, 0.5, 1.0, 0.0]])
    assert aggregate_pvalues(P).tolist() == [0.01, 0.5, 1.0, 0.0]


def test_aggregate_two_splits_is_twice_the_smaller():
    """B = 2: the grid is {1/2} (one value, no penalty): 2 * min(p)."""
    P = np.array([[0.01, 0.3, 0.9], [0.5, 0.2, 0.95]])
    assert_allclose(aggregate_pvalues(P), [0.02, 0.4, 1.0], rtol=1e-15)


def test_aggregate_ties_hand_worked():
    """Twenty equal p-values 0.01: min_k 0.01 * 20 / k at k = 19, times the penalty."""
    P = np.full((20, 1), 0.01)
    assert_allclose(aggregate_pvalues(P), [PENALTY * 0.01 * 20 / 19], rtol=1e-12)


def test_aggregate_a_gene_selected_in_few_splits():
    """A gene selected (p = 0.001) in 2 of 20 splits: k = 2 gives 0.001 * 20 / 2."""
    P = np.ones((20, 3))
    P[[3, 11], 0] = 0.001
    P[7, 1] = 0.001  # selected once: k = 1 gives 0.001 * 20
    assert_allclose(
        aggregate_pvalues(P),
        [PENALTY * 0.01, PENALTY * 0.02, 1.0],
        rtol=1e-12,
    )


def test_aggregate_gamma_min_sets_the_grid_and_the_penalty():
    """gamma_min = 0.25 with B = 4: grid {1/4, 1/2, 3/4}, penalty 1 - log(1/4)."""
    P = np.array([[0.001], [0.002], [0.004], [1.0]])
    expected = (1 - math.log(0.25)) * min(0.001 * 4, 0.002 * 2, 0.004 * 4 / 3)
    assert_allclose(aggregate_pvalues(P, gamma_min=0.25), [expected], rtol=1e-12)


def test_aggregate_against_numpy_inverted_cdf_quantiles():
    rng = np.random.default_rng(0)
    P = rng.uniform(size=(30, 50)) ** 3
    B = P.shape[0]
    grid = np.arange(math.ceil(0.05 * B), B) / B
    quantiles = np.stack(
        [np.quantile(P, g, axis=0, method="inverted_cdf") / g for g in grid]
    )
    expected = np.minimum(1, PENALTY * np.minimum(1, quantiles).min(axis=0))
    assert_allclose(aggregate_pvalues(P), expected, rtol=1e-12)


def test_aggregate_keeps_the_names_of_a_frame():
    P = pd.DataFrame({"g1": [0.01, 0.02], "g2": [1.0, 1.0]})
    out = aggregate_pvalues(P)
    assert isinstance(out, pd.Series)
    assert out.index.tolist() == ["g1", "g2"]


@pytest.mark.parametrize(
    ("P", "gamma_min", "match"),
    [
        (np.full((3, 2), 1.5), 0.05, r"p-values in \[0, 1\]"),
        (np.array([[0.1, np.nan]]), 0.05, "P contains NaN: every split needs"),
        (np.zeros((0, 3)), 0.05, "P has no row"),
        (np.array([0.1, 0.2]), 0.05, r"one row per split .*P.reshape\(-1, 1\)"),
        (np.ones((3, 2)), 0.0, "'gamma_min' parameter of aggregate_pvalues"),
        (np.ones((3, 2)), 1.0, "'gamma_min' parameter of aggregate_pvalues"),
    ],
    ids=["above-one", "nan", "no-row", "1-d", "gamma-zero", "gamma-one"],
)
def test_aggregate_bad_input(P, gamma_min, match):
    with pytest.raises(ValueError, match=match):
        aggregate_pvalues(P, gamma_min=gamma_min)


# ---------------------------------------------------------------- multi_split
@pytest.fixture(scope="module")
def signal():
    data = make_block_data(80, [5, 5], [1.0, 0.0], n_noise=30, random_state=0)
    names = [f"g{j}" for j in range(data.X.shape[1])]
    return pd.DataFrame(data.X, columns=names), pd.Series(data.y, name="weight")


@pytest.fixture(scope="module")
def result(signal):
    X, y = signal
    return multi_split(VCPCR(n_clusters=3, n_init=2), X, y, n_splits=12, random_state=0)


def test_active_block_is_found_and_noise_is_not(result):
    assert isinstance(result, MultiSplitResult)
    assert result.n_splits_used == 12
    assert result.n_splits_skipped == 0
    # module membership: the whole active block; gene level: most of it
    assert (result.membership_pvalues.iloc[:5] < 0.01).all()
    assert (result.pvalues.iloc[:5] < 0.05).sum() >= 3
    # the inactive block (correlated only within itself) and the noise genes
    assert (result.membership_pvalues.iloc[5:] > 0.05).all()
    assert (result.pvalues.iloc[5:] > 0.05).all()
    assert result.pvalues.index.tolist() == [f"g{j}" for j in range(40)]
    assert result.n_splits_gene_level == 12


def test_result_tables_agree_with_each_other(result):
    modules, P = result.modules, result.split_membership_pvalues
    assert P.shape == (12, 40)
    assert_allclose(
        modules["pvalue_adjusted"],
        np.minimum(1, modules["pvalue"] * modules["n_modules"]),
        rtol=1e-15,
    )
    for row in modules.itertuples():
        assert (P.loc[row.split, list(row.members)] == row.pvalue_adjusted).all()
    selected = pd.Series(
        [set().union(*modules.loc[modules.split == b, "members"]) for b in P.index]
    )
    for gene in ("g0", "g7", "g30"):
        freq = np.mean([gene in s for s in selected])
        assert result.selection_frequency[gene] == freq
        # unselected in a split: p-value 1
        assert (P[gene][[gene not in s for s in selected]] == 1).all()
    assert_allclose(result.membership_pvalues, aggregate_pvalues(P), rtol=0)
    genes = result.split_pvalues
    assert_allclose(result.pvalues, aggregate_pvalues(genes), rtol=0)
    for b, members in enumerate(selected):
        unselected = [g for g in genes.columns if g not in members]
        assert (genes.loc[b, unselected] == 1).all()
    # each split's minimal rejected clusters are rejected, at most one per gene
    for b, rows in result.clusters.groupby("split"):
        assert (rows["pvalue"] <= 0.05).all()
        flat = [g for m in rows["members"] for g in m]
        assert len(flat) == len(set(flat))
        assert set(flat) <= selected[b]
    assert result.splits["n_modules"].tolist() == (
        modules.groupby("split").size().reindex(range(12), fill_value=0).tolist()
    )


def test_split_module_pvalues_are_step_two_on_the_other_half(signal, result):
    """Split 3 by hand: fit on the first half, OLS of y on its latent variables
    on the second half (statsmodels), the same module p-values."""
    X, y = signal
    first, second = draw_splits(80, None, 12, 0.5, random_state=0)[3]
    seed = task_seeds(0, 12)[3]
    model = VCPCR(n_clusters=3, n_init=2, random_state=seed).fit(
        X.iloc[first], y.iloc[first]
    )
    M = model.transform(X.iloc[second])
    ols = sm.OLS(y.iloc[second].to_numpy(), sm.add_constant(M)).fit()
    ours = result.modules[result.modules.split == 3]
    assert ours["module"].tolist() == list(model.membership_.columns)
    assert_allclose(ours["pvalue"], ols.pvalues[1:], rtol=1e-8)
    assert [set(m) for m in ours["members"]] == [
        set(v) for v in model.clusters_.values()
    ]


def test_split_gene_pvalues_are_the_descent_on_the_other_half(signal, result):
    """Split 3 by hand: the tree from the first half's standardized genes, the
    tests on the second half standardized with the first half's means and
    standard deviations; statsmodels' F test of all the selected genes."""
    X, y = signal
    first, second = draw_splits(80, None, 12, 0.5, random_state=0)[3]
    seed = task_seeds(0, 12)[3]
    model = VCPCR(n_clusters=3, n_init=2, random_state=seed).fit(
        X.iloc[first], y.iloc[first]
    )
    genes = [g for members in model.clusters_.values() for g in members]
    cols = [list(X.columns).index(g) for g in genes]
    X1 = ((X.iloc[first] - model.mean_) / model.scale_).to_numpy()[:, cols]
    X2 = ((X.iloc[second] - model.mean_) / model.scale_).to_numpy()[:, cols]
    position = {g: i for i, g in enumerate(genes)}
    modules = [[position[g] for g in m] for m in model.clusters_.values()]
    y2 = y.iloc[second].to_numpy()
    ours = descend(NORMAL, X1, X2, np.empty((40, 0)), y2, modules, random_state=seed)
    assert_allclose(
        result.split_pvalues.loc[3, genes], ours.feature_pvalues, rtol=1e-10
    )
    full = sm.OLS(y2, sm.add_constant(X2)).fit()
    assert_allclose(ours.raw[0], full.f_pvalue, rtol=1e-8)


def test_deterministic_whatever_n_jobs(signal, result):
    X, y = signal
    again = multi_split(
        VCPCR(n_clusters=3, n_init=2), X, y, n_splits=12, random_state=0, n_jobs=2
    )
    pd.testing.assert_series_equal(again.pvalues, result.pvalues)
    pd.testing.assert_series_equal(again.membership_pvalues, result.membership_pvalues)
    pd.testing.assert_frame_equal(again.modules, result.modules)
    pd.testing.assert_frame_equal(again.clusters, result.clusters)
    # the common tree's tests run on the splits' tests sent back by the workers
    pd.testing.assert_frame_equal(again.tree_clusters, result.tree_clusters)
    pd.testing.assert_series_equal(again.tree_pvalues, result.tree_pvalues)
    other = multi_split(
        VCPCR(n_clusters=3, n_init=2), X, y, n_splits=12, random_state=1
    )
    assert not other.modules["pvalue"].equals(result.modules["pvalue"])


def test_formula_template_gives_the_same_result(signal, result):
    X, y = signal
    df = X.assign(weight=y)
    formula = multi_split(
        VCPCR(n_clusters=3, n_init=2, formula="weight ~ ."),
        df,
        n_splits=12,
        random_state=0,
    )
    pd.testing.assert_series_equal(formula.pvalues, result.pvalues)


@pytest.mark.parametrize(
    ("estimator", "kwargs", "error", "match"),
    [
        (LinearRegression(), {}, TypeError, "'estimator' parameter of multi_split"),
        (VCPCR(), {"n_splits": 0}, ValueError, "'n_splits' parameter"),
        (VCPCR(), {"n_splits": 2.5}, TypeError, "'n_splits' parameter"),
        (VCPCR(), {"train_size": 1.5}, ValueError, "'train_size' parameter"),
        (VCPCR(), {"train_size": 0}, ValueError, "'train_size' parameter"),
        (VCPCR(), {"gamma_min": 1.0}, ValueError, "'gamma_min' parameter"),
        (VCPCR(), {"verbose": "yes"}, TypeError, "'verbose' parameter"),
        (VCPCRCV(refit=False), {}, ValueError, "refit=False"),
        (VCPCR(n_clusters=0), {}, ValueError, "'n_clusters' parameter of VCPCR"),
        (VCPCRCV(selection="best"), {}, ValueError, "'selection' parameter"),
        (VCPCR(), {"gene_level": 1}, TypeError, "'gene_level' parameter"),
        (VCPCR(), {"factor_sample": 0}, ValueError, "'factor_sample' parameter"),
        (VCPCR(), {"retune": True}, ValueError, "no grid to tune"),
        (
            VCPCR(),
            {"gene_level": False, "common_tree": "average"},
            ValueError,
            "needs the gene-level tests, which gene_level=False skips",
        ),
    ],
    ids=[
        "not-vcpcr",
        "zero-splits",
        "float-splits",
        "train-above-one",
        "train-zero",
        "gamma-one",
        "verbose",
        "no-refit",
        "template-parameter",
        "cv-template-parameter",
        "gene-level-int",
        "factor-sample-zero",
        "retune-vcpcr",
        "tree-without-gene-level",
    ],
)
def test_bad_input(signal, estimator, kwargs, error, match):
    X, y = signal
    with pytest.raises(error, match=match):
        multi_split(estimator, X, y, **kwargs)


def test_mismatched_lengths(signal):
    X, y = signal
    with pytest.raises(ValueError, match="X has 80 rows but y has 79"):
        multi_split(VCPCR(), X, y.iloc[:-1])


def test_skipped_splits_are_counted_with_one_warning(signal):
    """A binary column with two ones is constant in the first half of some splits:
    those fits fail, are counted, warned about once, and count as p = 1 for
    every gene (never dropped: the aggregation counts every split drawn)."""
    X, y = signal
    X = X.assign(rare=np.where(np.arange(80) < 2, 1.0, 0.0))
    with pytest.warns(VCPCRWarning, match=r"splits failed.*p = 1") as record:
        res = multi_split(
            VCPCR(n_clusters=3, n_init=1), X, y, n_splits=16, random_state=0
        )
    assert len([w for w in record if "failed" in str(w.message)]) == 1
    skipped = res.splits[~res.splits["used"]]
    assert 0 < res.n_splits_skipped == len(skipped) <= 8
    assert skipped["reason"].str.contains("'rare'").all()
    assert res.split_pvalues.shape[0] == 16
    assert (res.split_pvalues.loc[skipped.index] == 1.0).all(axis=None)
    assert (res.split_membership_pvalues.loc[skipped.index] == 1.0).all(axis=None)
    # the aggregation sees the failed splits' ones
    assert_series_equal(
        res.pvalues, aggregate_pvalues(res.split_pvalues, res.gamma_min)
    )


def test_more_than_half_skipped_is_an_error():
    """Six rows in each half cannot fit six modules: every split fails."""
    data = make_block_data(12, [3, 3], [1.0, -1.0], n_noise=6, random_state=0)
    with pytest.raises(ValueError, match="More than half of the splits"):
        multi_split(
            VCPCR(n_clusters=6, lam_ratio=0.0, n_init=1),
            data.X,
            data.y,
            n_splits=4,
            random_state=0,
        )


def test_binomial_multi_split():
    data = make_block_data(
        120, [5, 5], [2.0, 0.0], n_noise=20, family="binomial", random_state=0
    )
    res = multi_split(
        VCPCR(n_clusters=3, n_init=1, family="binomial"),
        data.X,
        data.y,
        n_splits=6,
        random_state=0,
    )
    assert res.n_splits_used == 6
    assert (res.membership_pvalues.iloc[:5] < 0.05).sum() >= 3
    assert (res.membership_pvalues.iloc[5:] == 1).all()
    # gene level: five strongly correlated active genes on 60 rows are found
    # as a cluster in every split (Firth's test where the genes separate the
    # classes), rarely one by one; never a noise gene
    assert set(res.splits["gene_test"]) <= {"LR", "Firth LR"}
    firth = int((res.splits["gene_test"] == "Firth LR").sum())
    assert firth > 0
    words = " ".join(res.summary().as_text().split())
    assert f"{firth} split(s) used Firth's penalized likelihood-ratio test" in words
    assert res.clusters["split"].nunique() == 6
    assert (res.pvalues.iloc[5:] == 1).all()


@needs_survival
def test_cox_multi_split():
    data = make_block_data(
        120, [5, 5], [1.0, 0.0], n_noise=20, family="cox", random_state=0
    )
    y = Surv(data.y, data.event)
    res = multi_split(
        VCPCR(n_clusters=3, n_init=1, family="cox"),
        data.X,
        y,
        n_splits=6,
        random_state=0,
    )
    assert res.n_splits_used == 6
    assert (res.membership_pvalues.iloc[:5] < 0.05).any()
    assert (res.membership_pvalues.iloc[10:] > 0.05).all()
    assert (res.pvalues.iloc[10:] > 0.05).all()


def test_cv_template_retunes_in_every_split(signal):
    X, y = signal
    template = VCPCRCV(n_clusters=(2, 3), lam_ratios=[0.3, 0.6], n_init=1, cv=3)
    res = multi_split(template, X, y, n_splits=4, random_state=0)
    assert {"n_clusters", "delta", "lam_ratio"} <= set(res.splits.columns)
    assert set(res.splits["lam_ratio"]) <= {0.3, 0.6}
    model = clone(template).set_params(random_state=0).fit(X, y)
    text = model.summary(inference=res).as_text()
    assert "gene P" in text
    assert "member P" in text
    assert "Tuning:" in text
    with pytest.raises(ValueError, match="other estimator parameters"):
        clone(template).set_params(lam_ratios=[0.3]).fit(X, y).summary(inference=res)


def test_a_fitted_cv_resamples_the_model_it_chose(signal):
    """multi_split(cv) is multi_split(clone(cv.best_estimator_)) on the same
    seed, and cv.summary accepts it; retune=True is the unfitted VCPCRCV's run."""
    X, y = signal
    template = VCPCRCV(n_clusters=(2, 3), lam_ratios=[0.3, 0.6], n_init=1, cv=3)
    cv = clone(template).set_params(random_state=0).fit(X, y)
    kw = {"n_splits": 4, "random_state": 1, "common_tree": None}
    chosen = multi_split(cv, X, y, **kw)
    by_hand = multi_split(clone(cv.best_estimator_), X, y, **kw)
    assert chosen.fingerprint.estimator == "VCPCR"
    assert_series_equal(chosen.pvalues, by_hand.pvalues)
    assert_series_equal(chosen.membership_pvalues, by_hand.membership_pvalues)
    assert "lam_ratio" not in chosen.splits.columns  # nothing tuned in the splits
    assert not hasattr(chosen.estimator, "membership_")  # an unfitted clone
    text = cv.summary(inference=chosen).as_text()
    assert "gene P" in text
    assert "member P" in text
    cv.best_estimator_.summary(inference=chosen)
    other = {"lam_ratio": 0.3 if cv.best_params_["lam_ratio"] == 0.6 else 0.6}
    elsewhere = multi_split(clone(cv.best_estimator_).set_params(**other), X, y, **kw)
    with pytest.raises(ValueError, match=r"other estimator parameters.*lam_ratio"):
        cv.summary(inference=elsewhere)
    retuned = multi_split(cv, X, y, retune=True, **kw)
    assert_series_equal(retuned.pvalues, multi_split(template, X, y, **kw).pvalues)
    assert set(retuned.splits["lam_ratio"]) <= {0.3, 0.6}
    cv.summary(inference=retuned)


def test_gene_level_false_skips_the_descent_only(signal, result):
    X, y = signal
    skipped = multi_split(
        VCPCR(n_clusters=3, n_init=2),
        X,
        y,
        n_splits=12,
        random_state=0,
        gene_level=False,
    )
    assert_series_equal(skipped.membership_pvalues, result.membership_pvalues)
    assert_series_equal(skipped.selection_frequency, result.selection_frequency)
    assert (result.pvalues.iloc[:5] < 0.05).any()  # the descent would find them
    assert (skipped.pvalues == 1.0).all()
    assert skipped.n_splits_gene_level == 0
    assert skipped.n_splits_used == 12
    assert (skipped.splits["n_nodes_tested"] == 0).all()
    assert set(skipped.splits["gene_reason"]) == {
        "the gene-level test was not asked for (gene_level=False)"
    }
    assert skipped.tree_pvalues is None
    assert "gene_level=False" in skipped.tree_info
    assert "gene_level=False" in skipped.summary().as_text()


def test_verbose_prints_a_time_estimate_after_the_first_split(signal, capsys):
    """The first line after the start comes when the first split ends, not
    after PROGRESS_INTERVAL (10 s), and it estimates the time left."""
    X, y = signal
    multi_split(
        VCPCR(n_clusters=3, n_init=1),
        X,
        y,
        n_splits=3,
        random_state=0,
        common_tree=None,
        verbose=True,
        n_jobs=1,
    )
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "[vcpcr] multi_split: 3 tasks of 1 fit(s)"
    assert lines[1].startswith("[vcpcr] multi_split: 1/3 tasks done (33%), ")
    assert lines[1].endswith(" left")
    assert "elapsed, about " in lines[1]
    assert lines[-1].startswith("[vcpcr] multi_split: 3/3 tasks done (100%)")


def _pooled_cohort():
    """Three centres with their own baseline hazard, one active block."""
    data = make_block_data(
        180,
        [5, 5],
        [0.8, 0.0],
        n_noise=10,
        family="cox",
        censoring=0.3,
        random_state=3,
    )
    centre = np.repeat([0.0, 1.0, 2.0], 60)
    X = pd.DataFrame(data.X, columns=[f"g{j}" for j in range(20)]).assign(centre=centre)
    time = data.y / np.repeat([0.5, 1.0, 3.0], 60)  # hazards 0.5, 1, 3 x
    return X, np.column_stack([time, data.event]).astype(float), centre


@needs_survival
def test_a_stratified_template_is_resampled_with_its_strata():
    """Splits keep each centre's share (and event status); each split's module
    tests are lifelines' Cox model stratified by centre on the second part."""
    from lifelines import CoxPHFitter

    from vcpcr.inference._resampling import fit_for_selection, resampling_rows

    X, y, centre = _pooled_cohort()
    template = VCPCR(
        family="cox", strata=["centre"], n_clusters=2, lam_ratio=0.5, n_init=1
    )
    res = multi_split(template, X, y, n_splits=3, random_state=0, common_tree=None)
    assert res.n_splits_used == 3
    assert list(res.pvalues.index) == list(X.columns[:20])
    labels = resampling_rows(template, X, y, "f").strata
    assert len(np.unique(labels)) == 6  # centre x event
    parts = draw_splits(180, labels, 3, 0.5, 0)
    for first, _ in parts:
        counts = np.bincount(centre[first].astype(int))  # 60 rows per centre
        assert np.abs(counts - 30).max() <= 1, counts
    first, second = parts[0]
    model = fit_for_selection(template, task_seeds(0, 3)[0], X.iloc[first], y[first])
    assert model.strata_names_ == ["centre"]
    frame = model.outcome_design(X.iloc[second]).assign(T=y[second, 0], E=y[second, 1])
    tight = {"precision": 1e-12, "r_precision": 1e-14}
    ref = CoxPHFitter().fit(frame, "T", "E", strata=["centre"], fit_options=tight)
    ours = res.modules[res.modules["split"] == 0].set_index("module")["pvalue"]
    assert_allclose(ours, ref.summary["p"][ours.index], rtol=1e-5)
    plain = CoxPHFitter().fit(frame.drop(columns="centre"), "T", "E")
    unstratified = plain.summary["p"][ours.index].to_numpy()
    assert np.abs(np.log(ours.to_numpy() / unstratified)).max() > 0.1
    assert (res.splits["gene_test"] == "LR").all()  # the descent ran, stratified
    assert res.pvalues[[f"g{j}" for j in range(5)]].min() < 0.05


# -------------------------------------------------------------------- summary
def test_the_coefficient_table_says_its_pvalues_ignore_the_selection(signal):
    X, y = signal
    text = VCPCR(n_clusters=3, n_init=2).fit(X, y).summary().as_text()
    lines = text.splitlines()
    row = next(i for i, line in enumerate(lines) if CONDITIONAL_TITLE in line)
    assert "P>|t|" in lines[row + 2]  # the title heads the coefficient table
    assert "vcpcr.inference.multi_split" in CONDITIONAL_TITLE


def test_summary_with_inference_shows_the_evidence(signal, result):
    X, y = signal
    model = VCPCR(n_clusters=3, n_init=2, random_state=5).fit(X, y)
    text = model.summary(inference=result).as_text()
    assert "Evidence after selection" in text
    assert "Genes with the most evidence" in text
    words = " ".join(text.split())
    assert "whose coefficient in that regression is zero" in words
    assert "rejected with it" in words
    assert max(len(line) for line in text.splitlines()) <= 80
    evidence = result.module_evidence(model)
    assert evidence.index.tolist() == list(model.clusters_)
    for cluster, members in model.clusters_.items():
        assert evidence.loc[cluster, "gene P"] == result.pvalues[members].min()
        assert (
            evidence.loc[cluster, "member P"]
            == result.membership_pvalues[members].min()
        )
    assert model.summary(inference=[result]).as_text() == text
    # two of a kind crashed inside pandas' join ("columns overlap")
    with pytest.raises(ValueError, match=r"one result of each kind .* 2 MultiSplit"):
        model.summary(inference=[result, result])
    assert "<table" in model.summary(inference=result).as_html()
    assert "member P" in model.summary(inference=result).as_latex()


def test_summary_refuses_a_result_of_other_parameters_or_data(signal, result):
    X, y = signal
    other = VCPCR(n_clusters=4, n_init=2).fit(X, y)
    with pytest.raises(ValueError, match=r"n_clusters=3 vs 4"):
        other.summary(inference=result)
    fewer = VCPCR(n_clusters=3, n_init=2).fit(X.iloc[:70], y.iloc[:70])
    with pytest.raises(ValueError, match="other data"):
        fewer.summary(inference=result)
    with pytest.raises(TypeError, match="'inference' parameter of summary"):
        other.summary(inference="result")
    shifted = VCPCR(n_clusters=3, n_init=2).fit(X + 1e-6, y)
    with pytest.raises(ValueError, match="column means or standard deviations"):
        shifted.summary(inference=result)
    # the same rows in another order: their means differ in the last bits
    back = VCPCR(n_clusters=3, n_init=2, random_state=0)
    back.fit(X.iloc[::-1].reset_index(drop=True), y.iloc[::-1].reset_index(drop=True))
    assert "member P" in back.summary(inference=result).as_text()


def test_result_summary(result):
    text = result.summary().as_text()
    assert "VC-PCR multi-split inference" in text
    assert "12 of 12" in text
    assert "g0" in text
    assert "family-wise error rate" in text
    assert "gene P" in text
    assert "member P" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert repr(result).startswith("MultiSplitResult(pvalues=Series(shape=(")
    assert "n_splits=12, n_splits_used=12, " in repr(result)
    # the minimal rejected clusters, counted by level
    assert "Minimal rejected clusters" in text
    by_level = result.clusters.groupby("level")["split"].nunique()
    row = next(line for line in text.splitlines() if line.startswith("single gene"))
    assert row.split()[2] == str(by_level.get("gene", 0))


# ------------------------------------------------------------- level and docs
@pytest.mark.slow
def test_global_null_family_wise_error_is_controlled():
    """150 gaussian data sets with y independent of a block-correlated X: the
    gene-level FWER at 0.05 has a 95 % Clopper-Pearson upper bound below 0.08
    (the naive summary rejects in nearly every data set; see
    benchmarks/bench_inference.py for all families)."""
    n_sets, events = 150, 0
    for rep in range(n_sets):
        data = make_block_data(
            60, [10] * 6, [0.0] * 6, rho=0.6, noise_sd=1.0, random_state=rep
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VCPCRWarning)  # empty or slow fits
            res = multi_split(
                VCPCR(n_clusters=5, lam_ratio=0.3, n_init=1),
                data.X,
                data.y,
                n_splits=10,
                random_state=rep,
            )
        events += bool((res.pvalues < 0.05).any())
    upper = stats.beta.ppf(0.975, events + 1, n_sets - events)
    assert upper < 0.08, events


@pytest.mark.slow
@needs_survival
def test_inference_docs_print_what_they_show():
    """docs/inference.md's Liver and survival examples print what it pastes."""
    examples = doc_examples((ROOT / "docs" / "inference.md").read_text())
    assert len(examples) == 2
    for code, shown in examples:
        printed = printed_lines(code)
        for line in shown.splitlines():
            assert line.rstrip() in printed, line


class _StabilityLike:
    """A second result following the summary's evidence protocol."""

    guarantee = "Stability: a made-up note for the test."

    def __init__(self, frequency):
        self.frequency = frequency

    def check_matches(self, model):
        if list(model.membership_.index) != list(self.frequency.index):
            raise ValueError("other data")

    def module_evidence(self, model):
        return pd.DataFrame(
            {"stability": [0.5] * model.n_clusters_}, index=list(model.clusters_)
        )

    def gene_evidence(self, model):
        return self.frequency.sort_values(ascending=False).to_frame("stab. freq.")


def test_summary_takes_several_results_through_the_protocol(signal, result):
    X, y = signal
    model = VCPCR(n_clusters=3, n_init=2, random_state=5).fit(X, y)
    frequency = pd.Series(np.linspace(1, 0, 40), index=X.columns)
    text = model.summary(inference=[result, _StabilityLike(frequency)]).as_text()
    assert "stability" in text
    assert "stab. freq." in text
    assert "gene P" in text
    assert "Stability: a made-up note for the test." in text
    # the genes of both results' top rows are listed once each
    assert sum(line.startswith("g0 ") for line in text.splitlines()) == 1
    with pytest.raises(ValueError, match="other data"):
        model.summary(inference=[result, _StabilityLike(frequency.iloc[:-1])])


def test_few_splits_are_named_in_the_summary(signal):
    """With 20 splits or fewer one split can reject a gene: said, not only in
    the docstring."""
    X, y = signal
    few = multi_split(
        VCPCR(n_clusters=3, n_init=2, lam_ratio=0.3), X, y, n_splits=10, random_state=1
    )
    assert "a single split can reject a gene" in few.summary().as_text()
