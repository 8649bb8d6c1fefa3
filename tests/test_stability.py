"""Stability selection: the statistics of a label matrix, and the resampling."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from conftest import doc_examples, make_blocks, needs_survival, printed_lines
from numpy.testing import assert_allclose, assert_array_equal
from scipy import sparse
from sklearn.base import clone
from sklearn.linear_model import LinearRegression
from sklearn.metrics import adjusted_rand_score

from vcpcr import VCPCR, VCPCRCV
from vcpcr.exceptions import VCPCRWarning
from vcpcr.inference import stability_selection
from vcpcr.inference._stability import (
    best_match_jaccard,
    coclustering,
    consensus_modules,
    error_bound,
    mean_coclustering,
    selection_frequency,
)
from vcpcr.simulate import make_block_data

# Four resamples, four features; worked by hand in the tests below.
HAND = np.array(
    [
        [0, 0, 1, -1],
        [0, 1, 1, -1],
        [-1, 0, 0, 0],
        [1, 1, -1, 0],
    ]
)


def naive_coclustering(L, features):
    """Dense double loop over pairs and resamples (the definition, spelled out)."""
    m = len(features)
    out = np.zeros((m, m))
    for a, i in enumerate(features):
        for c, j in enumerate(features):
            both = (L[:, i] >= 0) & (L[:, j] >= 0)
            same = both & (L[:, i] == L[:, j])
            out[a, c] = same.sum() / both.sum() if same.any() else 0.0
    return out


# ----------------------------------------------------------- pure functions
def test_selection_frequency_by_hand():
    assert_allclose(selection_frequency(HAND), [0.75, 1.0, 0.75, 0.5], rtol=0, atol=0)


def test_coclustering_by_hand():
    """(0,1): same cluster in 2 of the 3 resamples selecting both; (0,2) never;
    (0,3) both selected once, apart; (1,2) 2 of 3; (1,3) 1 of 2; (2,3) 1 of 1."""
    expected = np.array(
        [
            [1, 2 / 3, 0, 0],
            [2 / 3, 1, 2 / 3, 1 / 2],
            [0, 2 / 3, 1, 1],
            [0, 1 / 2, 1, 1],
        ]
    )
    coc = coclustering(HAND, np.arange(4))
    assert sparse.issparse(coc)
    assert_allclose(coc.toarray(), expected, rtol=1e-15, atol=0)
    assert coc.nnz == 12  # the pairs that never share a cluster are not stored


def test_coclustering_of_a_subset_is_the_submatrix():
    coc = coclustering(HAND, [3, 1])
    assert_allclose(coc.toarray(), [[1, 1 / 2], [1 / 2, 1]], rtol=1e-15, atol=0)


@pytest.mark.parametrize("seed", [0, 1, 2], ids=["seed0", "seed1", "seed2"])
def test_coclustering_against_the_definition(seed):
    rng = np.random.default_rng(seed)
    L = rng.integers(-1, 4, size=(30, 40))
    L[5] = -1  # a resample that selects nothing
    L[:, 7] = -1  # a feature never selected
    features = rng.permutation(40)[:25]
    features = np.append(features, 7)
    assert_allclose(
        coclustering(L, features).toarray(),
        naive_coclustering(L, features),
        rtol=1e-15,
        atol=0,
    )


def test_coclustering_memory_follows_the_features_asked_for():
    L = np.full((4, 20_000), -1)
    L[:, :3] = [[0, 0, 1], [0, 0, 1], [1, 1, -1], [0, 2, 1]]
    coc = coclustering(L, [0, 1, 2, 19_999])
    assert coc.shape == (4, 4)
    assert_allclose(coc[[0], [1]], [0.75], rtol=1e-15, atol=0)
    assert coc.nnz == 3 + 2  # the diagonal of the three selected, (0,1) and (1,0)


def test_mean_coclustering_by_hand():
    assert_allclose(mean_coclustering(HAND, [0, 1, 2]), 4 / 9, rtol=1e-15, atol=0)
    assert_allclose(mean_coclustering(HAND, [1, 2, 3]), 13 / 18, rtol=1e-15, atol=0)
    assert np.isnan(mean_coclustering(HAND, [2]))


def test_best_match_jaccard_by_hand():
    """Module {1, 2}: resample 0 best matches {2} (1/2), resample 1 is {1, 2}
    (1), resample 2 is {1, 2, 3} (2/3), resample 3 best matches {0, 1} (1/3);
    a resample selecting none of the members scores 0."""
    L = np.vstack([HAND, np.full(4, -1), [-1, -1, -1, 0]])
    assert_allclose(
        best_match_jaccard(L, [1, 2]),
        [1 / 2, 1, 2 / 3, 1 / 3, 0, 0],
        rtol=1e-15,
        atol=0,
    )
    assert_allclose(best_match_jaccard(HAND, [1, 2]).mean(), 0.625, rtol=1e-15, atol=0)


def test_best_match_jaccard_unselected_members_lower_it():
    """A member left unselected is in no cluster: the module {0, 1, 3} in a
    resample whose only cluster is {0, 1} scores 2/3, not 1."""
    L = np.array([[0, 0, -1, -1]])
    assert_allclose(best_match_jaccard(L, [0, 1, 3]), [2 / 3], rtol=1e-15, atol=0)


def test_best_match_jaccard_rejects_an_empty_module():
    with pytest.raises(ValueError, match="at least one feature"):
        best_match_jaccard(HAND, [])


def test_label_matrix_is_checked():
    with pytest.raises(ValueError, match="-1 for unselected"):
        selection_frequency(np.array([[0, -2]]))
    with pytest.raises(ValueError, match="2-d integer array"):
        selection_frequency(np.array([0.0, 1.0]))


def test_consensus_modules_by_hand():
    """Distances 0.1 within {0, 1}, 0.4 within {2, 3}, 0.925 on average
    between them: cut at 0.5 gives two modules, at 0.3 three."""
    coc = np.array(
        [
            [1, 0.9, 0.1, 0],
            [0.9, 1, 0.2, 0],
            [0.1, 0.2, 1, 0.6],
            [0, 0, 0.6, 1],
        ]
    )
    assert adjusted_rand_score(consensus_modules(coc), [0, 0, 1, 1]) == 1
    assert adjusted_rand_score(consensus_modules(coc, 0.3), [0, 0, 1, 2]) == 1
    assert_array_equal(consensus_modules(sparse.csr_array(coc)), consensus_modules(coc))
    assert_array_equal(consensus_modules(np.ones((1, 1))), [0])
    assert consensus_modules(np.ones((0, 0))).shape == (0,)


def test_error_bound_by_hand():
    assert_allclose(error_bound(10.0, 1000, 0.75), 0.2, rtol=1e-15, atol=0)
    assert_allclose(error_bound(10.0, 1000, 1.0), 0.1, rtol=1e-15, atol=0)


# ------------------------------------------------------------- the resampling
@pytest.fixture(scope="module")
def gaussian_result():
    X, y, _, _ = make_blocks(n=80, n_noise=30, seed=3)
    template = VCPCR(n_clusters=3, lam_ratio=0.3, n_init=2)
    return stability_selection(template, X, y, n_pairs=8, random_state=0), X, y


def test_repr_is_one_line(gaussian_result):
    res = gaussian_result[0]
    text = repr(res)
    assert "\n" not in text
    assert text.startswith("StabilityResult(selection_frequency=Series(shape=(50,)), ")
    assert f"stable_set=Index(shape=({res.stable_set.size},))" in text
    assert "subsamples=ndarray(shape=(16, 40))" in text
    assert f"threshold={res.threshold:g}" in text
    assert "fingerprint" not in text  # field(repr=False)


def test_pairs_are_disjoint_halves(gaussian_result):
    res, X, _ = gaussian_result
    assert res.subsamples.shape == (16, 40)
    for first, second in res.subsamples.reshape(8, 2, 40):
        assert np.intersect1d(first, second).size == 0
        assert np.unique(first).size == 40
    assert res.labels.shape == (16, X.shape[1])
    assert res.subsample_size == 40
    assert res.n_pairs == 8


def test_odd_n_leaves_one_row_out_of_each_pair():
    X, y, _, _ = make_blocks(n=61, seed=4)
    res = stability_selection(
        VCPCR(n_clusters=2, lam_ratio=0.3, n_init=1), X, y, n_pairs=3, random_state=1
    )
    assert res.subsamples.shape == (6, 30)
    for first, second in res.subsamples.reshape(3, 2, 30):
        assert np.union1d(first, second).size == 60


def test_labels_are_the_fits_on_the_subsamples(gaussian_result):
    """With a given initial partition every fit is deterministic, so each row
    of ``labels`` must be the fit on the rows in ``subsamples``."""
    _, X, y = gaussian_result
    init = np.arange(X.shape[1]) % 3
    template = VCPCR(n_clusters=3, lam_ratio=0.3, init=init)
    res = stability_selection(template, X, y, n_pairs=2, random_state=5)
    for b, rows in enumerate(res.subsamples):
        fit = clone(template).fit(X[rows], y[rows])
        assert_array_equal(res.labels.iloc[b].to_numpy(), fit.labels_)
    expected = (res.labels.to_numpy() >= 0).mean(axis=0)
    assert_allclose(res.selection_frequency.to_numpy(), expected, rtol=0, atol=0)


def test_binomial_halves_keep_the_class_proportions(binary_blocks):
    X, ybin, _ = binary_blocks
    template = VCPCR(n_clusters=3, family="binomial", lam_ratio=0.3, n_init=1)
    res = stability_selection(template, X, ybin, n_pairs=3, random_state=0)
    n_case = int((ybin == "case").sum())
    for rows in res.subsamples:
        assert abs(int((ybin[rows] == "case").sum()) - n_case / 2) <= 1
    assert res.stratified


def test_deterministic_whatever_n_jobs(gaussian_result):
    res, X, y = gaussian_result
    template = VCPCR(n_clusters=3, lam_ratio=0.3, n_init=2)
    again = stability_selection(template, X, y, n_pairs=8, n_jobs=2, random_state=0)
    assert_array_equal(again.subsamples, res.subsamples)
    pd.testing.assert_frame_equal(again.labels, res.labels)
    other = stability_selection(template, X, y, n_pairs=8, random_state=1)
    assert not np.array_equal(other.subsamples, res.subsamples)


def test_active_blocks_are_stable_and_form_their_own_modules(gaussian_result):
    """Blocks 0 and 2 drive y with opposite signs; noise genes rarely enter."""
    res, _, _ = gaussian_result
    _, _, truth, _ = make_blocks(n=80, n_noise=30, seed=3)
    freq = res.selection_frequency.to_numpy()
    active = np.isin(truth, [0, 2])
    assert freq[active].min() > freq[~active].max()
    stable = res.labels.columns.get_indexer(res.stable_set)
    assert set(stable) == set(np.flatnonzero(active))
    module_of = {g: m for m, genes in res.modules.items() for g in genes}
    found = [module_of[g] for g in res.stable_set]
    assert adjusted_rand_score(truth[stable], found) == 1
    assert (res.module_table["jaccard"] > 0.75).all()
    assert res.coclustering.shape == (res.coclustering_features.size,) * 2


def test_summary_shows_the_stable_set_modules_and_bound(gaussian_result):
    res, _, _ = gaussian_result
    text = res.summary().as_text()
    for gene in res.stable_set:
        assert f"\n{gene} " in text
    for name, size in res.module_table["size"].items():
        assert f"\n{name}  {size} " in text
    assert f"{res.error_bound:#.4g}" in text
    assert "Shah & Samworth" in text
    short = res.summary(top=2).as_text()
    assert f"{res.stable_set.size - 2} more stable features" in short


def test_bound_uses_the_mean_number_selected(gaussian_result):
    res, X, _ = gaussian_result
    q = (res.labels.to_numpy() >= 0).sum(axis=1).mean()
    assert_allclose(res.mean_selected, q, rtol=0, atol=0)
    expected = q**2 / ((2 * 0.6 - 1) * X.shape[1])
    assert_allclose(res.error_bound, expected, rtol=1e-14, atol=0)


def test_vcpcrcv_template_is_tuned_in_each_half():
    X, y, _, _ = make_blocks(n=60, seed=6)
    template = VCPCRCV(
        n_clusters=(2, 3), lam_ratios=(0.3, 0.6), cv=3, n_init=1, refit=True
    )
    res = stability_selection(template, X, y, n_pairs=2, random_state=0)
    assert res.labels.shape == (4, X.shape[1])
    assert (res.labels.to_numpy() >= 0).any(axis=1).all()


def test_a_fitted_cv_resamples_the_model_it_chose():
    X, y, _, _ = make_blocks(n=60, seed=6)
    cv = VCPCRCV(n_clusters=(2, 3), lam_ratios=(0.3, 0.6), cv=3, n_init=1)
    cv.set_params(random_state=0).fit(X, y)
    res = stability_selection(cv, X, y, n_pairs=2, random_state=0)
    by_hand = stability_selection(
        clone(cv.best_estimator_), X, y, n_pairs=2, random_state=0
    )
    pd.testing.assert_frame_equal(res.labels, by_hand.labels)
    assert "Evidence after selection" in cv.summary(inference=res).as_text()
    retuned = stability_selection(cv, X, y, n_pairs=2, random_state=0, retune=True)
    unfitted = stability_selection(clone(cv), X, y, n_pairs=2, random_state=0)
    pd.testing.assert_frame_equal(retuned.labels, unfitted.labels)
    cv.summary(inference=retuned)


@needs_survival
def test_a_stratified_template_keeps_each_stratum_in_both_halves():
    data = make_block_data(
        120,
        [5, 5],
        [0.8, 0.0],
        n_noise=10,
        family="cox",
        censoring=0.3,
        random_state=3,
    )
    centre = np.repeat([0.0, 1.0], [40, 80])
    X = pd.DataFrame(data.X, columns=[f"g{j}" for j in range(20)]).assign(centre=centre)
    y = np.column_stack([data.y, data.event]).astype(float)
    template = VCPCR(family="cox", strata="centre", n_clusters=2, n_init=1)
    res = stability_selection(template, X, y, n_pairs=3, random_state=0)
    assert list(res.selection_frequency.index) == list(X.columns[:20])
    for rows in res.subsamples:
        counts = np.bincount(centre[rows].astype(int), minlength=2)
        assert np.abs(counts - [20, 40]).max() <= 1, counts


def test_formula_template_uses_the_design_columns(blocks_df):
    X, y, _, _ = blocks_df
    data = X.assign(weight=y)
    template = VCPCR(n_clusters=3, lam_ratio=0.3, n_init=1, formula="weight ~ .")
    res = stability_selection(template, data, n_pairs=2, random_state=0)
    assert list(res.selection_frequency.index) == list(X.columns)


def test_module_evidence_describes_the_models_clusters(gaussian_result):
    res, X, y = gaussian_result
    model = VCPCR(n_clusters=3, lam_ratio=0.3, n_init=2, random_state=9).fit(X, y)
    evidence = res.module_evidence(model)
    assert list(evidence.index) == list(model.clusters_)
    assert list(evidence.columns) == ["stability", "jaccard"]
    L = res.labels.to_numpy()
    for name, members in model.clusters_.items():
        pos = [int(m[1:]) for m in members]
        assert_allclose(
            evidence.loc[name, "jaccard"],
            best_match_jaccard(L, pos).mean(),
            rtol=1e-15,
            atol=0,
        )
    genes = res.gene_evidence(model)["stab. freq."]
    assert genes.is_monotonic_decreasing
    assert set(genes.index) == set(
        res.selection_frequency.index[res.selection_frequency > 0]
    )


def test_model_summary_shows_the_stability_of_its_clusters(gaussian_result):
    res, X, y = gaussian_result
    model = VCPCR(n_clusters=3, lam_ratio=0.3, n_init=2, random_state=9).fit(X, y)
    text = model.summary(inference=res).as_text()
    evidence = res.module_evidence(model)
    table = text[text.index("Evidence after selection") :].splitlines()
    for name, row in evidence.iterrows():
        line = next(ln for ln in table if ln.startswith(f"{name} "))
        assert f"{row['jaccard']:.4f}" in line
    assert "reproducibility, not significance" in " ".join(text.split())
    other = VCPCR(n_clusters=3, lam_ratio=0.5, n_init=2).fit(X, y)
    with pytest.raises(ValueError, match="other estimator parameters"):
        other.summary(inference=res)


def test_check_matches_refuses_other_parameters_or_data(gaussian_result):
    res, X, y = gaussian_result
    res.check_matches(VCPCR(n_clusters=3, lam_ratio=0.3, n_init=2).fit(X, y))
    other = VCPCR(n_clusters=3, lam_ratio=0.5, n_init=2).fit(X, y)
    with pytest.raises(ValueError, match="lam_ratio"):
        res.check_matches(other)
    fewer = VCPCR(n_clusters=3, lam_ratio=0.3, n_init=2).fit(X[:70], y[:70])
    with pytest.raises(ValueError, match="other data"):
        res.module_evidence(fewer)


def test_plot_draws_frequencies_and_coclustering(gaussian_result, tmp_path):
    matplotlib.use("Agg")
    res, _, _ = gaussian_result
    axes = res.plot(top=20)
    assert axes.shape == (2,)
    assert len(axes[0].patches) == min(20, int((res.selection_frequency > 0).sum()))
    threshold = [ln.get_ydata()[0] for ln in axes[0].get_lines()]
    assert threshold == [0.6]
    image = axes[1].get_images()[0].get_array()
    assert image.shape == (res.stable_set.size,) * 2
    labels = [t.get_text() for t in axes[1].get_yticklabels()]
    assert sorted(labels) == sorted(res.stable_set)
    axes[0].figure.savefig(tmp_path / "stability.png")
    import matplotlib.pyplot as plt

    plt.close(axes[0].figure)
    fig, grid = plt.subplots(2, 2)
    with pytest.raises(ValueError, match=r"2 matplotlib Axes \(frequencies, co"):
        res.plot(axes=grid)
    plt.close(fig)


def test_plot_legend_names_the_modules_drawn(gaussian_result):
    """The legend listed every module, also those none of the top bars show."""
    import matplotlib.pyplot as plt

    res, _, _ = gaussian_result
    axes = res.plot(top=2)
    shown = {t.get_text() for t in axes[0].get_legend().get_texts()}
    cluster_of = {g: m for m, genes in res.modules.items() for g in genes}
    top = res.selection_frequency.sort_values(ascending=False, kind="stable")[:2]
    assert shown == {cluster_of[g] for g in top.index if g in cluster_of}
    plt.close(axes[0].figure)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_pairs": 0}, ValueError, "'n_pairs' parameter .* range \\[1"),
        ({"n_pairs": 2.5}, TypeError, "'n_pairs' parameter .* type"),
        ({"threshold": 0.5}, ValueError, "'threshold' parameter .* \\(0.5, 1.0\\]"),
        ({"threshold": 1.2}, ValueError, "'threshold' parameter .* Got 1.2"),
        ({"min_frequency": 0.7}, ValueError, "'min_frequency' .* \\(0.0, 0.6\\]"),
    ],
    ids=["n_pairs0", "n_pairs_float", "threshold_half", "threshold_big", "minfreq"],
)
def test_bad_parameters(blocks, kwargs, error, match):
    X, y, _, _ = blocks
    with pytest.raises(error, match=match):
        stability_selection(VCPCR(), X, y, **kwargs)


def test_bad_estimator_and_data(blocks):
    X, y, _, _ = blocks
    with pytest.raises(TypeError, match=r"a vcpcr\.VCPCR or vcpcr\.VCPCRCV"):
        stability_selection(LinearRegression(), X, y)
    with pytest.raises(ValueError, match=r"retune.*no grid to tune"):
        stability_selection(VCPCR(), X, y, retune=True)
    with pytest.raises(ValueError, match="X has 60 rows but y has 59"):
        stability_selection(VCPCR(), X, y[:-1])
    with pytest.raises(ValueError, match="refit=False"):
        stability_selection(VCPCRCV(refit=False), X, y)
    with pytest.raises(ValueError, match="halves of 2"):
        stability_selection(VCPCR(n_clusters=2), X[:5], y[:5])


@pytest.mark.slow
def test_docs_liver_example_prints_what_the_page_shows():
    """docs/stability.md's first code block, run, prints the output pasted under it."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "stability.md").read_text()
    code, shown = doc_examples(text)[0]
    printed = printed_lines(code)
    assert [line.rstrip() for line in shown.splitlines()] == printed


@needs_survival
def test_cox_halves_keep_the_share_of_events():
    data = make_block_data(
        80, [5, 5], [0.8, 0.0], n_noise=20, family="cox", random_state=0
    )
    y = np.column_stack([data.y, data.event])
    template = VCPCR(n_clusters=2, family="cox", lam_ratio=0.3, n_init=1)
    res = stability_selection(template, data.X, y, n_pairs=3, random_state=0)
    n_events = int(data.event.sum())
    for rows in res.subsamples:
        assert abs(int(data.event[rows].sum()) - n_events / 2) <= 1
    freq = res.selection_frequency.to_numpy()
    assert freq[:5].mean() > freq[10:].mean()


def test_failed_subsample_fits_count_as_empty_selections():
    """A binary column with two ones is constant in some halves: those fits
    fail, are warned about once and count as empty selections (the bound
    counts every subsample drawn), never as an abort or a dropped row."""
    data = make_block_data(80, [5, 5], [1.0, 0.0], n_noise=30, random_state=0)
    X = pd.DataFrame(data.X, columns=[f"g{j}" for j in range(data.X.shape[1])])
    X = X.assign(rare=np.where(np.arange(80) < 2, 1.0, 0.0))
    with pytest.warns(VCPCRWarning, match=r"of 8 subsamples failed.*empty selection"):
        res = stability_selection(
            VCPCR(n_clusters=3, n_init=1), X, data.y, n_pairs=4, random_state=0
        )
    failed = res.failures.notna()
    assert 0 < res.n_failed == failed.sum() <= 4
    assert (res.labels[failed.to_numpy()] == -1).all(axis=None)
    assert res.failures[failed].str.contains("'rare'").all()
    ok = res.labels[~failed.to_numpy()]
    assert_allclose(res.mean_selected, (ok >= 0).sum(axis=1).sum() / 8)
    assert "count as empty selections" in str(res.summary())
