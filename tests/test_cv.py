"""Tests of VCPCRCV (cross-validated VC-PCR) and its per-fold machinery."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import PREVIOUS_DEFAULT, make_blocks, run_fold
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from single_sos_nmf import sos_nmf_single
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score, get_scorer, log_loss, roc_auc_score
from sklearn.model_selection import KFold

from vcpcr import (
    VCPCR,
    VCPCRCV,
    VCPCRWarning,
    compute_weights,
    lambda_max,
    random_partition,
)
from vcpcr._families import FAMILIES
from vcpcr._scaling import standardize
from vcpcr._tuning import PAIRED_N_SE, FoldSpec, Grid, selected_index

KF = KFold(3, shuffle=True, random_state=0)


def _loop_fold_scores(Xtr, ytr, Xte, yte, grid, n_init, seed):
    """The fold's scores by looping the single-fit solver (reference)."""
    rng = np.random.default_rng(seed)
    p = Xtr.shape[1]
    inits = {
        K: [random_partition(p, K, rng) for _ in range(n_init)] for K in grid.n_clusters
    }
    Xs, mean, scale = standardize(Xtr)
    W = compute_weights(
        Xs,
        (ytr - ytr.mean()) / ytr.std(ddof=1),
        "ridge",
        delta=grid.deltas,
        standardize=False,
    )
    scores = []
    for K in grid.n_clusters:
        for w in W:
            lmax = max(
                lambda_max(Xs, s, weights=w, standardize=False) for s in inits[K]
            )
            for r in grid.lam_ratios:
                runs = [sos_nmf_single(Xs * w, s, lam=r * lmax)[0] for s in inits[K]]
                best = min(runs, key=lambda res: res.objective[-1])
                M = Xs @ best.V
                fit = sm.OLS(ytr, sm.add_constant(M, has_constant="add")).fit()
                Mte = ((Xte - mean) / scale) @ best.V
                pred = sm.add_constant(Mte, has_constant="add") @ fit.params
                scores.append(-np.mean((yte - pred) ** 2))
    return np.array(scores)


def test_fold_matches_looped_single_fits(blocks):
    """Batched solve + best start on the training fold == looping sos_nmf."""
    X, y, _, _ = blocks
    train, test = next(KF.split(X))
    grid = Grid((2, 3), [1e-3, 1.0], np.array([0.05, 0.3, 0.6, 1.0]))
    spec = FoldSpec(
        FAMILIES["gaussian"],
        "ridge",
        grid,
        3,
        500,
        1e-4,
        VCPCR(),
        get_scorer("neg_mean_squared_error"),
    )
    out = run_fold(X, y, train, test, spec, seed=123)
    ref = _loop_fold_scores(X[train], y[train], X[test], y[test], grid, 3, 123)
    assert_allclose(out.scores, ref, rtol=1e-9)
    assert out.sizes[-1] == 0  # lam_ratio = 1 selects nothing


@pytest.fixture(scope="module")
def fitted_cv():
    """The tuning before #27's sparse rule: the tests below are about it."""
    X, y, _, _ = make_blocks()
    cv = VCPCRCV(n_clusters=(2, 3), cv=KF, random_state=0, **PREVIOUS_DEFAULT)
    return cv.fit(X, y), X, y


def test_cv_results_and_best(fitted_cv):
    cv, X, y = fitted_cv
    res = cv.cv_results_
    assert len(res) == 2 * 6 * 10  # K x enet deltas x lam_ratios
    assert list(res.columns[:3]) == ["n_clusters", "delta", "lam_ratio"]
    splits = res[[f"split{i}_test_score" for i in range(3)]].to_numpy()
    assert_allclose(res["mean_test_score"], splits.mean(axis=1))
    assert_allclose(res["std_test_score"], splits.std(axis=1, ddof=1))
    assert cv.best_index_ == int(np.argmax(res["mean_test_score"]))
    assert res["rank_test_score"].iloc[cv.best_index_] == 1
    assert cv.best_score_ == res["mean_test_score"].max()
    assert cv.n_splits_ == 3
    assert np.all(res["mean_size"].iloc[9::10] == 0)  # lam_ratio = 1
    # the default score, -MSE, of the refit: statsmodels' OLS on its latent
    # variables gives the residual sum of squares
    M = sm.add_constant(cv.best_estimator_.transform(X))
    assert cv.score(X, y) == pytest.approx(-sm.OLS(y, M).fit().ssr / len(y))


def test_refit_is_vcpcr_with_best_params(fitted_cv):
    cv, X, y = fitted_cv
    p = cv.best_params_
    ref = VCPCR(
        n_clusters=p["n_clusters"],
        delta=p["delta"],
        lam_ratio=p["lam_ratio"],
        n_init=5,
        random_state=0,
    )
    ref.fit(X, y)
    assert_allclose(cv.best_estimator_.coef_, ref.coef_, rtol=1e-12)
    assert_allclose(cv.transform(X), ref.transform(X), rtol=1e-12)


def test_summary_says_how_chosen(fitted_cv):
    text = fitted_cv[0].summary().as_text()
    assert "chosen by 3-fold CV" in text
    # the tuning note is added to the model's notes, not in place of them
    assert "[1] Standard errors are conditional on the estimated" in text
    assert "[3] Tuning:" in text
    assert "Tuning:" in fitted_cv[0].summary().as_latex()
    frames = fitted_cv[0].summary2()
    assert "conditional on the estimated clusters" in str(frames)
    assert "Tuning:" in str(frames)
    assert "VC-PCR Results" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_one_standard_error_rule(fitted_cv):
    cv, X, y = fitted_cv
    one = clone(cv).set_params(selection="1se").fit(X, y)
    res = one.cv_results_
    best = res["mean_test_score"].max()
    se = res["std_test_score"].iloc[cv.best_index_] / np.sqrt(3)
    chosen = res.iloc[one.best_index_]
    assert chosen["mean_test_score"] >= best - se
    ok = res[res["mean_test_score"] >= best - se]
    assert chosen["mean_size"] == ok["mean_size"].min()
    assert chosen["mean_size"] <= res.iloc[cv.best_index_]["mean_size"]


def test_paired_rule_with_fold_scores(fitted_cv):
    """selection="paired" with a fold-averaged score: the standard error of a
    point's difference from the best is the standard deviation of the fold
    differences over sqrt(folds); the sparsest point within PAIRED_N_SE of
    them."""
    cv, X, y = fitted_cv
    paired = clone(cv).set_params(selection="paired").fit(X, y)
    res = paired.cv_results_
    splits = res[[f"split{i}_test_score" for i in range(3)]].to_numpy()
    best = int(np.argmax(res["mean_test_score"]))
    se = (splits - splits[best]).std(axis=1, ddof=1) / np.sqrt(3)
    assert_allclose(res["se_diff_test_score"], se, atol=1e-12)
    gate = PAIRED_N_SE * se
    ok = res["mean_test_score"] >= res["mean_test_score"].iloc[best] - gate
    chosen = res.iloc[paired.best_index_]
    assert ok.iloc[paired.best_index_]
    assert chosen["mean_size"] == res.loc[ok, "mean_size"].min()
    # the shared fold noise does not count: the paired rule is sparser here
    assert chosen["mean_size"] < res.iloc[cv.best_index_]["mean_size"]


def test_paired_rule_with_the_pooled_deviance(fitted_cv):
    """The bootstrap standard error of the difference (its own test in
    test_pooled.py); the refit shrunk by the chosen point's slope."""
    cv, X, y = fitted_cv
    paired = clone(cv).set_params(scoring="neg_pooled_deviance", selection="paired")
    paired.fit(X, y)
    res = paired.cv_results_
    best = int(np.nanargmax(res["mean_test_score"]))
    margin = PAIRED_N_SE * res["se_diff_test_score"]
    ok = res["mean_test_score"] >= res["mean_test_score"].iloc[best] - margin
    assert ok.iloc[paired.best_index_]
    assert res["mean_size"].iloc[paired.best_index_] == res.loc[ok, "mean_size"].min()
    assert paired.shrinkage_ == res["calibration_slope"].iloc[paired.best_index_]


def test_n_se_sets_the_gate_and_only_the_choice(fitted_cv):
    """n_se moves the paired and 1se gates; the folds' work is the same, so
    cv_results_ are too, and a wider gate never chooses a larger model."""
    cv, X, y = fitted_cv
    base = clone(cv).set_params(selection="paired")
    sizes = []
    for c in (0.0, 0.75, 2.0, 5.0):
        fit = clone(base).set_params(n_se=c).fit(X, y)
        res = fit.cv_results_
        pd.testing.assert_frame_equal(_untimed(fit), _untimed(cv))
        best = res["mean_test_score"].max()
        ok = res["mean_test_score"] >= best - c * res["se_diff_test_score"]
        assert ok.iloc[fit.best_index_]
        assert res["mean_size"].iloc[fit.best_index_] == res.loc[ok, "mean_size"].min()
        assert f"selection='paired', n_se={c:g})" in fit.summary().as_text()
        sizes.append(res["mean_size"].iloc[fit.best_index_])
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[-1] < sizes[0]  # the gate matters on these data
    # the default is PAIRED_N_SE; "1se" scales its one standard error
    default = clone(base).fit(X, y)
    assert (
        default.best_index_
        == clone(base).set_params(n_se=PAIRED_N_SE).fit(X, y).best_index_
    )
    half = clone(cv).set_params(selection="1se", n_se=0.5).fit(X, y)
    res = half.cv_results_
    se = res["std_test_score"].iloc[cv.best_index_] / np.sqrt(3)
    ok = res["mean_test_score"] >= res["mean_test_score"].max() - 0.5 * se
    assert res["mean_size"].iloc[half.best_index_] == res.loc[ok, "mean_size"].min()


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.floats(-10, 0),  # mean score
            st.integers(0, 50),  # mean size
            st.floats(0, 2),  # standard error of the difference from the best
        ),
        min_size=1,
        max_size=25,
    ),
    gates=st.tuples(st.floats(0, 5), st.floats(0, 5)),
)
def test_paired_gate_properties(rows, gates):
    """For any cv_results_: the chosen point is within its gate of the best,
    no sparser point is, and a wider gate never chooses a larger model."""
    res = pd.DataFrame(rows, columns=["mean_test_score", "mean_size", "se"])
    res = res.rename(columns={"se": "se_diff_test_score"})
    best = res["mean_test_score"].max()
    sizes = []
    for c in sorted(gates):
        i = selected_index(res, "paired", 5, c)
        ok = res["mean_test_score"] >= best - c * res["se_diff_test_score"]
        assert ok.iloc[i]
        assert res["mean_size"].iloc[i] == res.loc[ok, "mean_size"].min()
        sizes.append(res["mean_size"].iloc[i])
    assert sizes[1] <= sizes[0]


def _untimed(cv):
    """cv_results_ without the wall-time columns (which vary run to run)."""
    return cv.cv_results_.drop(columns=["mean_fit_time", "std_fit_time"])


def test_deterministic_and_parallel_identical(fitted_cv):
    cv, X, y = fitted_cv
    again = clone(cv).fit(X, y)
    pd.testing.assert_frame_equal(_untimed(again), _untimed(cv))
    parallel = clone(cv).set_params(n_jobs=2).fit(X, y)
    pd.testing.assert_frame_equal(_untimed(parallel), _untimed(cv))


# joblib's dask backend keeps futures in a weak-key dict whose destroy callback
# can raise KeyError when collected after the client closed (inside joblib's
# _dask.py, not in vcpcr): an unraisable exception that says nothing of results.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_dask_backend_gives_identical_results(fitted_cv):
    """joblib's dask backend on a local (in-process) dask cluster."""
    distributed = pytest.importorskip("distributed")
    import joblib

    cv, X, y = fitted_cv
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster),
        joblib.parallel_config(backend="dask"),
    ):
        remote = clone(cv).set_params(n_jobs=-1).fit(X, y)
    pd.testing.assert_frame_equal(_untimed(remote), _untimed(cv))


def test_binomial_formula_and_custom_scoring(blocks_df):
    X, y, _, _ = blocks_df
    rng = np.random.default_rng(0)
    df = X.assign(
        status=np.where(
            y + rng.normal(scale=2 * y.std(), size=len(y)) > 0, "up", "down"
        )
    )
    cv = VCPCRCV(
        n_clusters=2,
        family="binomial",
        formula="status ~ .",
        cv=3,
        lam_ratios=[0.1, 0.5],
        scoring=None,
        random_state=0,
    )
    cv.fit(df)
    assert_array_equal(cv.classes_, ["down", "up"])
    # The family's own score (scoring=None) is scikit-learn's negated log-loss
    # of the same fold models' probabilities (a callable scorer scores each
    # fold model as is).
    by_hand = clone(cv).set_params(
        scoring=lambda est, X, y: (
            -log_loss(y, est.predict_proba(X), labels=est.classes_)
        )
    )
    splits = [f"split{i}_test_score" for i in range(3)]
    assert_allclose(
        cv.cv_results_[splits], by_hand.fit(df).cv_results_[splits], rtol=1e-8
    )
    proba = cv.predict_proba(df)
    assert_allclose(proba, cv.best_estimator_.predict_proba(df), rtol=1e-12)
    # the refit's -log-loss is statsmodels' Logit log-likelihood per row on
    # its latent variables
    M = sm.add_constant(cv.best_estimator_.transform(df))
    logit = sm.Logit((df["status"] == "up").astype(float), M).fit(disp=0)
    assert cv.score(df) == pytest.approx(logit.llf / len(df), rel=1e-7)
    # scoring="roc_auc": scikit-learn's AUC of the fold models' P(up)
    auc = clone(cv).set_params(scoring="roc_auc").fit(df)
    by_hand.set_params(
        scoring=lambda est, X, y: roc_auc_score(y, est.predict_proba(X)[:, 1])
    )
    ref = by_hand.fit(df).cv_results_
    assert_allclose(auc.cv_results_[splits], ref[splits], rtol=1e-10)
    assert auc.best_score_ == pytest.approx(ref["mean_test_score"].max(), rel=1e-10)
    # the AUC of the refit's linear predictor, as statsmodels fits it
    M = sm.add_constant(auc.best_estimator_.transform(df))
    logit = sm.Logit((df["status"] == "up").astype(float), M).fit(disp=0)
    assert auc.score(df) == roc_auc_score(df["status"], logit.fittedvalues)


def test_identity_and_lasso_grids(blocks):
    X, y, _, _ = blocks
    ident = VCPCRCV(
        n_clusters=2, weights="identity", cv=KF, n_init=2, random_state=0
    ).fit(X, y)
    assert ident.cv_results_["delta"].isna().all()
    assert ident.best_params_["delta"] is None
    # the decimals themselves, so best_params_ reads 0.6, not 0.6000000000000001
    decimals = [float(f"0.{i}") for i in range(10)]
    assert ident.cv_results_["lam_ratio"].unique().tolist() == decimals
    assert repr(ident.best_params_["lam_ratio"]) in {f"0.{i}" for i in range(10)}
    lasso = VCPCRCV(n_clusters=2, weights="lasso", cv=KF, n_init=2, random_state=0).fit(
        X, y
    )
    assert lasso.cv_results_["delta"].nunique() == 6


def test_plot_renders(fitted_cv, tmp_path):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    cv = fitted_cv[0]
    ax = cv.plot_cv()
    ax.figure.savefig(tmp_path / "cv.png")
    assert (tmp_path / "cv.png").stat().st_size > 1000
    # the "min" marker sits at the chosen point's mean model size
    (line,) = [line for line in ax.lines if line.get_label() == "min"]
    best = cv.cv_results_["mean_size"].iloc[cv.best_index_]
    assert_array_equal(line.get_xdata(), [best, best])


def test_plot_still_draws_the_cv_curve_with_a_future_warning(fitted_cv):
    """VCPCRCV.plot's meaning will become VCPCR.plot's: the old use warns."""
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    with pytest.warns(FutureWarning, match=r"Call plot_cv\(\) for the CV curve"):
        ax = fitted_cv[0].plot()
    assert [line.get_label() for line in ax.lines if line.get_label() == "min"]


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"selection": "2se"}, "'selection' parameter"),
        ({"weights": "identity", "deltas": [0.1]}, "deltas is only used"),
        (
            {"lam_ratios": [-0.1, 0.5]},
            r"'lam_ratios' parameter of VCPCRCV must hold values in the range \[0, 1\]",
        ),
        (
            {"lam_ratios": [0.5, 1.5]},
            r"'lam_ratios' parameter of VCPCRCV.*\[0, 1\].*Got \[1.5\] among",
        ),
        ({"deltas": [0.0]}, "'deltas' parameter of VCPCRCV must be > 0"),
        ({"n_init": 0}, "'n_init' parameter"),
        ({"n_init": 10**12}, "at most 10,000 are allowed"),  # hung
        ({"n_se": -0.5}, r"'n_se' parameter of VCPCRCV must be in the range \[0.0"),
        ({"n_se": np.inf}, "'n_se' parameter of VCPCRCV must be finite"),
        ({"selection": "min", "n_se": 1.0}, "selection='min' does not use it"),
        ({"scoring": ["r2", "neg_mean_squared_error"]}, "ranks the grid by one"),
        ({"scoring": {"r2": "r2"}}, "not a dict of several"),
    ],
    ids=lambda v: str(v)[:25],
)
def test_bad_parameters(blocks, params, match):
    X, y, _, _ = blocks
    with pytest.raises(ValueError, match=match):
        VCPCRCV(cv=KF, **params).fit(X, y)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"cv": 1}, r"'cv' parameter of VCPCRCV must be an int from 2 to the number"),
        ({"cv": 10_000}, r"int from 2 to the number of samples \(\d+\)"),
        ({"cv": True}, r"'cv' parameter of VCPCRCV must be an int >= 2, a cross"),
        ({"cv": 2.5}, r"'cv' parameter .* Got 2.5 instead"),
        ({"cv": [1, 2]}, r"cv fold 0 is 1, not a \(train, test\) pair"),
        ({"cv": [([], [0, 1])]}, "the training part of cv fold 0 is empty"),
        ({"cv": [([0, 1], [10_000])]}, "the test part of cv fold 0 indexes rows"),
        ({"cv": "5"}, r"'cv' parameter .* Got '5' instead"),
        ({"scoring": "c_index"}, r"scoring='c_index' is not a known scoring"),
        ({"scoring": 1}, r"not a int \(got 1\)\.$"),
        ({"n_jobs": 0}, r"'n_jobs' parameter of VCPCRCV must be None"),
        ({"n_jobs": 1.5}, r"'n_jobs' parameter .* Got 1.5 instead"),
    ],
    ids=lambda v: str(v)[:25],
)
def test_bad_cv_scoring_and_n_jobs(blocks, params, match):
    """Named by vcpcr, not scikit-learn's or joblib's internals (before:
    "n_splits=2 or more", "cannot unpack non-iterable int object", a list of
    60 scorer names, "n_jobs == 0 in Parallel has no meaning")."""
    X, y, _, _ = blocks
    with pytest.raises(ValueError, match=match):
        VCPCRCV(**({"cv": KF} | params)).fit(X, y)


def test_a_grid_that_selects_nothing_warns(blocks):
    X, y, _, _ = blocks
    with pytest.warns(VCPCRWarning, match=r"lam_ratios=\[1.0\] select no feature"):
        VCPCRCV(n_clusters=2, lam_ratios=[1.0], cv=KF, n_init=1).fit(X, y)


def test_refit_must_be_a_bool(blocks):
    X, y, _, _ = blocks
    with pytest.raises(TypeError, match="'refit' parameter of VCPCRCV must be True"):
        VCPCRCV(cv=KF, refit="yes").fit(X, y)


def test_the_pooled_criterion_needs_a_partition(blocks):
    """A holdout split cannot be pooled (before: "No grid point has a finite
    mean CV score (... 0 of 24 fold x grid fits failed ...)")."""
    X, y, _, _ = blocks
    n = len(y)
    holdout = [(np.arange(n // 2), np.arange(n // 2, n))]
    with pytest.raises(ValueError, match=rf"cover {n - n // 2} of {n} rows, 0 of"):
        VCPCRCV(cv=holdout).fit(X, y)
    # a per-fold scoring takes it
    cv = VCPCRCV(n_clusters=2, lam_ratios=[0.3], cv=holdout, scoring="r2")
    assert cv.fit(X, y).n_splits_ == 1


def test_column_constant_in_a_fold(blocks):
    X, y, _, _ = blocks
    X = X.copy()
    X[:, 0] = 0.0
    X[0, 0] = 1.0  # varies overall, constant in every fold without row 0
    with pytest.raises(ValueError, match=r"constant in training fold"):
        VCPCRCV(n_clusters=2, cv=KF).fit(X, y)


@pytest.mark.parametrize("n_jobs", [1, 2], ids=["serial", "two-processes"])
def test_all_zero_weights_warned_from_the_folds(n_jobs):
    """VCPCRCV takes the estimator's route to the weights (#9): a delta above
    delta_max gives all-zero weights in every fold, and says so; the folds'
    warnings are recorded in the workers, so that a process backend keeps
    them (#20)."""
    X, y, _, _ = make_blocks()
    cv = VCPCRCV(
        n_clusters=2,
        weights="lasso",
        deltas=[10.0, 0.05],
        n_init=1,
        cv=KF,
        lam_ratios=[0.1],
        random_state=0,
        n_jobs=n_jobs,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cv.fit(X, y)
    zero = [str(w.message) for w in caught if "weights are zero" in str(w.message)]
    # the re-issued warning names the user's line (user_stacklevel, #20)
    assert {w.filename for w in caught if "weights are zero" in str(w.message)} == {
        __file__
    }
    # each fold warns; VCPCRCV re-issues the folds' warning once, with its count
    assert zero == [
        "In cross-validation (3 of 6 fold x grid fits): All lasso weights are "
        "zero at delta=10: no feature can be selected and the model predicts a "
        "constant. Lower delta."
    ]


@pytest.mark.parametrize("n_clusters", [2.5, [2, 2.5], "3"], ids=str)
def test_non_integer_n_clusters_is_named(n_clusters):
    """A float n_clusters gave "'float' object is not iterable" (#20)."""
    X, y, _, _ = make_blocks()
    match = r"'n_clusters' parameter of VCPCRCV must be of type Integral"
    with pytest.raises(TypeError, match=match):
        VCPCRCV(n_clusters=n_clusters, cv=KF).fit(X, y)


def _problem(family):
    """A seeded 60 x 40 block problem with a gaussian, binary or survival y."""
    X, y, _, _ = make_blocks(n=60, seed=3)
    rng = np.random.default_rng(4)
    if family == "binomial":
        return X, np.where(y + rng.normal(scale=1.5, size=y.size) > 0, "yes", "no")
    if family == "cox":
        time = np.round(rng.exponential(np.exp(-y / 2)), 1) + 0.1
        return X, pd.DataFrame({"time": time, "event": rng.uniform(size=60) > 0.3})
    return X, y


def _given_weights():
    """Given weights with exact zeros (half the variables)."""
    w = np.random.default_rng(5).uniform(-1.0, 1.0, size=40)
    w[::2] = 0.0
    return w


#: family, weights, deltas: every weight scheme, a delta above delta_max (all
#: weights zero) and ridge / identity (nothing to screen).
SCREENING = {
    "gaussian-enet": ("gaussian", "enet", None),
    "gaussian-lasso-all-zero": ("gaussian", "lasso", [10.0, 0.2, 0.02]),
    "gaussian-ridge": ("gaussian", "ridge", None),
    "gaussian-identity": ("gaussian", "identity", None),
    "gaussian-given": ("gaussian", "given", None),
    "binomial-enet": ("binomial", "enet", None),
    "cox-enet": ("cox", "enet", None),
}


@pytest.mark.parametrize("case", list(SCREENING), ids=list(SCREENING))
def test_screening_keeps_cv_results(monkeypatch, case):
    """Exact screening (#19): SOS-NMF on the non-zero-weight columns only
    gives the cv_results_, warnings and refit of the engine run on all
    columns (the reference: its grouping of problems told that every weight
    vector has full support)."""
    import vcpcr._solvers.sos_nmf as engine

    family, weights, deltas = SCREENING[case]
    if family == "cox":
        pytest.importorskip("sksurv")
        pytest.importorskip("lifelines")
    X, y = _problem(family)
    cv = VCPCRCV(
        n_clusters=(2, 3),
        family=family,
        weights=_given_weights() if weights == "given" else weights,
        deltas=deltas,
        n_init=2,
        cv=3,
        random_state=0,
    )

    def fit():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = clone(cv).fit(X, y)
        return est, [str(w.message) for w in caught]

    screened, said = fit()
    chunks = engine._chunks
    monkeypatch.setattr(engine, "_chunks", lambda W, *a: chunks(np.ones_like(W), *a))
    full, said_full = fit()
    assert said == said_full
    res, ref = screened.cv_results_, full.cv_results_
    columns = [c for c in ref if c.startswith("split")] + ["mean_test_score"]
    assert_allclose(res[columns], ref[columns], rtol=1e-10, atol=1e-12)
    for column in ("mean_size", "mean_n_clusters", "rank_test_score"):
        assert_array_equal(res[column], ref[column])
    assert screened.best_index_ == full.best_index_
    assert (
        adjusted_rand_score(
            screened.best_estimator_.labels_, full.best_estimator_.labels_
        )
        == 1.0
    )
    assert_allclose(
        screened.best_estimator_.coef_, full.best_estimator_.coef_, rtol=1e-10
    )


def test_fold_column_check_by_blocks_names_the_column(monkeypatch):
    """check_fold_columns reads X[train] by blocks of columns; a column that is
    constant in a fold is found in any block, under its own index."""
    import vcpcr._tuning as tuning

    monkeypatch.setattr(tuning, "CHECK_BLOCK", 8 * 10)  # 10 columns of 8 rows
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 35))
    X[:, 27] = 0.0
    X[9, 27] = 1.0  # constant in the training fold without row 9
    folds = [(np.arange(8), np.arange(8, 10)), (np.arange(2, 10), np.arange(2))]
    with pytest.raises(ValueError, match=r"Column\(s\) \[27\] are constant in .* 0"):
        tuning.check_fold_columns(X, folds)
    tuning.check_fold_columns(X, folds[1:])  # row 9 is in that fold: no error


# ------------------------------------------------------------- y's scale


@pytest.fixture(scope="module")
def unit_cv():
    """A gaussian CV on y of unit scale, and the data."""
    from vcpcr.simulate import make_block_data

    data = make_block_data(60, [5, 5, 5], [1.0, -1.0, 0.0], random_state=0)
    params = {"n_clusters": [2, 3], "n_init": 2, "cv": 3, "random_state": 0}
    return VCPCRCV(**params).fit(data.X, data.y), data, params


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 2.0**-600, 1e300])
def test_cv_is_equivariant_in_the_scale_of_y(unit_cv, scale):
    """y * 1e-300 gave predictions 55% away from the rescaled fit, silently:
    its squared errors underflowed to 0 and tied every grid point (#24)."""
    ref, data, params = unit_cv
    if 1e-150 <= scale <= 1e150:  # squared residuals are float64 numbers
        cv = VCPCRCV(**params).fit(data.X, data.y * scale)
    elif scale < 1:  # the refit's statistics (not its fit) are unreliable: said
        with pytest.warns(VCPCRWarning, match="squared residuals underflow or"):
            cv = VCPCRCV(**params).fit(data.X, data.y * scale)
    else:  # and the scores in y's units are beyond float64: NaN, said (#46)
        with (
            pytest.warns(VCPCRWarning, match="squared residuals underflow or"),
            pytest.warns(VCPCRWarning, match="scores in y's units are beyond"),
        ):
            cv = VCPCRCV(**params).fit(data.X, data.y * scale)
    assert cv.best_index_ == ref.best_index_
    assert cv.best_params_["lam_ratio"] == ref.best_params_["lam_ratio"]
    assert_allclose(cv.best_params_["delta"], ref.best_params_["delta"], rtol=1e-12)
    assert_allclose(cv.predict(data.X) / scale, ref.predict(data.X), rtol=1e-9)
    assert_array_equal(
        cv.cv_results_["rank_test_score"], ref.cv_results_["rank_test_score"]
    )
    if 1e-150 <= scale <= 1e150:  # the squared errors are float64 numbers
        expected = ref.cv_results_["mean_test_score"] * scale**2
        assert_allclose(cv.cv_results_["mean_test_score"], expected, rtol=1e-9)


def test_cv_scores_beyond_float64_are_nan_with_a_note(unit_cv):
    """y * 1e300 reported best_score_ = -inf (the squared errors' 1e600
    overflowed) while the grid was ranked right (#46 row 14)."""
    ref, data, params = unit_cv
    msg = r"scores in y's units are beyond float64.*NaN, and best_score_.*Rescale y"
    with (
        pytest.warns(VCPCRWarning, match=msg),
        pytest.warns(VCPCRWarning, match="squared residuals underflow"),
    ):
        cv = VCPCRCV(**params).fit(data.X, data.y * 1e300)
    assert np.isnan(cv.best_score_)
    assert cv.cv_results_["mean_test_score"].isna().all()
    assert cv.best_index_ == ref.best_index_
    assert_array_equal(
        cv.cv_results_["rank_test_score"], ref.cv_results_["rank_test_score"]
    )
    # a score of unit degree (RMSE, ~1e300) is a float64 number: kept, exact
    rmse = {**params, "scoring": "neg_root_mean_squared_error"}
    with pytest.warns(VCPCRWarning, match="squared residuals underflow"):
        big = VCPCRCV(**rmse).fit(data.X, data.y * 2.0**990)
    unit = VCPCRCV(**rmse).fit(data.X, data.y)
    assert big.best_score_ == unit.best_score_ * 2.0**990


def test_cv_scores_of_y_in_powers_of_two_are_exact(unit_cv):
    _, data, params = unit_cv
    cv = VCPCRCV(**params, scoring="neg_root_mean_squared_error")
    cv.fit(data.X, data.y * 2.0**-40)
    rmse = VCPCRCV(**params, scoring="neg_root_mean_squared_error").fit(data.X, data.y)
    columns = ["mean_test_score", "std_test_score", "split0_test_score"]
    assert_array_equal(cv.cv_results_[columns], rmse.cv_results_[columns] * 2.0**-40)


def test_cv_warns_for_a_scorer_it_cannot_rescale(unit_cv):
    _, data, params = unit_cv

    def neg_mse(est, X, y):
        return -np.mean((est.predict(X) - y) ** 2)

    msg = r"y has standard deviation \d\.\d+e-300.*of a callable scoring"
    with (
        pytest.warns(VCPCRWarning, match=msg),
        pytest.warns(VCPCRWarning, match="squared residuals underflow"),
    ):
        VCPCRCV(**params, scoring=neg_mse).fit(data.X, data.y * 1e-300)


def test_cv_predicts_on_columns_in_any_order_and_unselected_nan():
    """VCPCRCV's methods take new data as VCPCR's do (#24)."""
    X, y, _, _ = make_blocks(n=40, seed=3)
    X = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    cv = VCPCRCV((2,), lam_ratios=[0.4], cv=3, n_init=1, random_state=0).fit(X, y)
    shuffled = X[X.columns[::-1]].copy()
    unselected = X.columns[cv.best_estimator_.labels_ < 0]
    assert unselected.size
    shuffled.loc[shuffled.index[0], unselected[0]] = np.nan
    assert_array_equal(cv.predict(shuffled), cv.predict(X))
    assert cv.score(shuffled, y) == cv.score(X, y)
    with pytest.raises(ValueError, match=r"X lacks 1 column\(s\) seen in fit"):
        cv.transform(X.iloc[:, 1:])


def test_score_degrees_cover_the_gaussian_batch_scorings():
    """Each gaussian score VCPCRCV rescales has its power of y's unit (the
    batched scores, and the pooled deviance, a mean squared error)."""
    from vcpcr._solvers.pooled import POOLED

    gaussian = FAMILIES["gaussian"].scoring
    expected = {*gaussian.batch_scorings, POOLED}
    assert set(gaussian.unit_degrees) == expected


def test_a_group_splitter_names_the_way_to_its_folds(blocks):
    """GroupKFold needs groups, which fit does not take: a vcpcr error with the
    fix (before: scikit-learn's "The 'groups' parameter should not be None")."""
    from sklearn.model_selection import GroupKFold

    X, y = blocks[:2]
    with pytest.raises(ValueError, match=r"takes no groups.*cv=list\(splitter"):
        VCPCRCV(n_clusters=(2,), cv=GroupKFold(3)).fit(X, y)
