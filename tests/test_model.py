"""Tests of the VCPCR estimator."""

from __future__ import annotations

import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from conftest import make_blocks, needs_survival
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics import accuracy_score, adjusted_rand_score

from vcpcr import (
    VCPCR,
    VCPCRCV,
    ConvergenceWarning,
    SeparationWarning,
    VCPCRWarning,
    sos_nmf,
)
from vcpcr._scaling import standardize
from vcpcr._summary import FittedModel, _members


@pytest.fixture
def fitted(blocks_df):
    X, y, _, _ = blocks_df
    return VCPCR(n_clusters=4, lam_ratio=0.4, n_init=5, random_state=0).fit(X, y), X, y


def test_fitted_attributes(fitted):
    model, X, _y = fitted
    p, K = X.shape[1], model.n_clusters_
    assert model.membership_.shape == (p, K)
    assert list(model.membership_.index) == list(X.columns)
    assert list(model.membership_.columns) == [f"cluster_{k + 1}" for k in range(K)]
    assert np.all(model.membership_.to_numpy() >= 0)
    assert_array_equal(model.labels_ >= 0, model.membership_.to_numpy().any(axis=1))
    for k, name in enumerate(model.membership_.columns):
        members = model.clusters_[name]
        assert set(members) == set(X.columns[model.labels_ == k])
        degrees = model.membership_.loc[members, name].to_numpy()
        assert np.all(np.diff(degrees) <= 0)  # strongest first
    assert model.coef_.shape == (p,)
    assert np.all(model.coef_[model.labels_ < 0] == 0)
    assert list(model.cluster_coef_.index) == list(model.membership_.columns)
    assert model.weights_.shape == (p,)
    assert model.lam_ == pytest.approx(0.4 * model.lam_max_)
    assert model.n_iter_ >= 1
    assert model.converged_
    assert model.objective_.shape == (model.n_iter_,)
    assert 0 <= model.best_init_ < 5
    assert model.n_features_in_ == p
    assert_array_equal(model.feature_names_in_, X.columns)
    assert_allclose(model.mean_, X.mean(axis=0))
    assert_allclose(model.scale_, X.std(axis=0, ddof=1))


def test_recovers_active_blocks(blocks):
    """With K = the number of active blocks, exactly the active variables are
    selected, in the right clusters (more clusters than blocks split blocks)."""
    X, y, labels, _ = blocks
    model = VCPCR(n_clusters=2, lam_ratio=0.4, n_init=10, random_state=0).fit(X, y)
    active = np.isin(labels, [0, 2])
    assert_array_equal(model.labels_ >= 0, active)
    assert adjusted_rand_score(labels[active], model.labels_[active]) == 1.0
    assert model.score(X, y) > 0.9


def test_cluster_coef_equals_statsmodels_ols_on_transform(fitted):
    model, X, y = fitted
    M = model.transform(X)
    ref = sm.OLS(y.to_numpy(), sm.add_constant(M)).fit()
    assert_allclose(model.result_.params, ref.params, rtol=1e-8)
    assert_allclose(model.cluster_coef_.to_numpy(), ref.params[1:], rtol=1e-8)
    assert_allclose(model.result_.bse, ref.bse, rtol=1e-8)
    assert_allclose(model.predict(X), ref.fittedvalues, rtol=1e-8)
    # coef_ and intercept_ in raw units, against statsmodels' prediction on new
    # data standardized here with the training columns' mean and sd (more
    # rows than variables: every coefficient is checked)
    Xa = X.to_numpy()
    new = np.random.default_rng(1).normal(size=(Xa.shape[1] + 5, Xa.shape[1]))
    new = Xa.mean(axis=0) + new * Xa.std(axis=0, ddof=1)
    M_new = (new - Xa.mean(axis=0)) / Xa.std(axis=0, ddof=1) @ model.membership_
    expected = ref.predict(sm.add_constant(M_new.to_numpy(), has_constant="add"))
    assert_allclose(model.predict(pd.DataFrame(new, columns=X.columns)), expected)


def test_cluster_coef_equals_statsmodels_logit_on_transform(binary_blocks):
    X, y, _ = binary_blocks
    model = VCPCR(
        n_clusters=4, family="binomial", lam_ratio=0.5, n_init=3, random_state=0
    ).fit(X, y)
    M = model.transform(X)
    ref = sm.Logit((y == "control").astype(float), sm.add_constant(M)).fit(disp=0)
    assert_array_equal(model.classes_, ["case", "control"])
    assert_allclose(model.result_.params, ref.params, rtol=1e-8)
    assert_allclose(model.result_.bse, ref.bse, rtol=1e-8)
    # predictions from statsmodels' fit, in scikit-learn's layout and labels
    p1 = ref.predict()
    assert_allclose(model.predict_proba(X), np.column_stack([1 - p1, p1]), rtol=1e-8)
    assert_allclose(model.decision_function(X), ref.fittedvalues, rtol=1e-8)
    labels = np.where(p1 > 0.5, "control", "case")
    assert_array_equal(model.predict(X), labels)
    assert model.score(X, y) == accuracy_score(y, labels)


def test_separated_outcome_gives_finite_firth_fit(blocks):
    X, y, _, _ = blocks
    ybin = (y > np.median(y)).astype(int)
    model = VCPCR(
        n_clusters=4, family="binomial", lam_ratio=0.3, n_init=2, random_state=0
    )
    with pytest.warns(SeparationWarning, match=r"separation.*Firth"):
        model.fit(X, ybin)
    assert model.result_.mle_retvals["method"] == "firth"
    assert np.all(np.isfinite(model.coef_))
    assert np.abs(model.cluster_coef_).max() < 100
    assert "Firth" in model.summary().as_text()


def test_weights_options(blocks):
    X, y, _, _ = blocks
    w = np.linspace(-1, 1, X.shape[1])
    assert_array_equal(VCPCR(weights=w, n_init=1, random_state=0).fit(X, y).weights_, w)
    assert_array_equal(
        VCPCR(weights="identity", n_init=1, random_state=0).fit(X, y).weights_, 1.0
    )
    lasso = VCPCR(weights="lasso", delta=0.1, n_init=1, random_state=0).fit(X, y)
    assert np.all(lasso.labels_[lasso.weights_ == 0] == -1)


def test_deterministic_and_init_array(blocks):
    X, y, _, _ = blocks
    a = VCPCR(random_state=3).fit(X, y)
    b = VCPCR(random_state=3).fit(X, y)
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.labels_, b.labels_)
    # A given partition is the one start (n_init does not apply): the fit is
    # sos_nmf from that partition on the standardized, weighted data.
    init = np.arange(X.shape[1]) % 3
    c = VCPCR(n_clusters=3, init=init, n_init=7, lam_ratio=0.3).fit(X, y)
    ref = sos_nmf(
        standardize(X)[0],
        weights=c.weights_,
        init=init,
        lam_ratio=0.3,
        standardize=False,
    )
    assert c.best_init_ == 0
    assert c.lam_max_ == pytest.approx(ref.lam_max, rel=1e-12)
    assert c.lam_ == pytest.approx(ref.lam, rel=1e-12)
    assert_allclose(c.objective_, ref.objective, rtol=1e-10)
    assert_array_equal(c.labels_ >= 0, ref.labels >= 0)
    sel = ref.labels >= 0
    assert adjusted_rand_score(c.labels_[sel], ref.labels[sel]) == 1.0
    degree = c.membership_.to_numpy().max(axis=1)
    assert_allclose(degree, ref.V.max(axis=1), rtol=1e-10, atol=1e-14)


def test_best_start_has_lowest_objective(blocks):
    X, y, _, _ = blocks
    model = VCPCR(n_clusters=5, n_init=6, lam_ratio=0.2, random_state=1).fit(X, y)
    starts = [
        VCPCR(n_clusters=5, n_init=1, init=init, lam_ratio=0.2)
        for init in _draws(X.shape[1], 5, 6, 1)
    ]
    # Each start alone has its own lam_max, so compare at the model's common lam.
    from single_sos_nmf import sos_nmf_single

    Xs = standardize(X)[0]
    finals = [
        sos_nmf_single(Xs * model.weights_, s.init, lam=model.lam_)[0].objective[-1]
        for s in starts
    ]
    assert model.best_init_ == int(np.argmin(finals))
    assert_allclose(model.objective_[-1], min(finals), rtol=1e-10)


def _draws(p, K, n, seed):
    from vcpcr import random_partition
    from vcpcr._checks import check_random_state

    rng = check_random_state(seed)
    return [random_partition(p, K, rng) for _ in range(n)]


def test_permuting_variables_permutes_fit(blocks):
    X, y, _, _ = blocks
    rng = np.random.default_rng(0)
    perm = rng.permutation(X.shape[1])
    init = rng.integers(0, 4, X.shape[1])
    a = VCPCR(n_clusters=4, init=init).fit(X, y)
    b = VCPCR(n_clusters=4, init=init[perm]).fit(X[:, perm], y)
    # The default elastic-net weights stop at a 1e-7 duality gap (glmnet's
    # rule; coordinate descent visits the columns in order), so they are
    # permutation-equivariant to about 1e-7 relative, not to rounding.
    assert_allclose(a.coef_[perm], b.coef_, rtol=1e-5, atol=1e-14)
    assert adjusted_rand_score(a.labels_[perm], b.labels_) == 1.0


def _family_outcome(y, family):
    """The blocks' gaussian response as a binary (noisy) or a survival outcome."""
    if family == "binomial":
        noise = 3 * np.random.default_rng(0).normal(size=y.size)
        return (y + noise > np.median(y)).astype(int)
    if family == "cox":
        return np.column_stack([np.exp(-y / 2), np.arange(y.size) % 4 != 0])
    return y


@pytest.mark.parametrize(
    "family", ["gaussian", "binomial", pytest.param("cox", marks=needs_survival)]
)
def test_signed_latent_is_equivariant_to_flipping_columns(blocks, family):
    """latent="signed": flipping a column's sign flips its weight and its
    coefficient and changes no prediction; the paper's M = X V does not
    (a flipped gene enters its module with the wrong sign)."""
    X, y, _, _ = blocks
    y = _family_outcome(y, family)
    rng = np.random.default_rng(1)
    flip = np.where(rng.random(X.shape[1]) < 0.5, -1.0, 1.0)
    init = rng.integers(0, 4, X.shape[1])
    kw = {"n_clusters": 4, "init": init, "family": family, "lam_ratio": 0.2}
    fits = {
        (latent, flipped): VCPCR(latent=latent, **kw).fit(X * s, y)
        for latent in ("paper", "signed")
        for flipped, s in ((False, 1.0), (True, flip))
    }
    a, b = fits["signed", False], fits["signed", True]
    assert_allclose(a.weights_ * flip, b.weights_, rtol=1e-5, atol=1e-12)
    assert_allclose(a.coef_ * flip, b.coef_, rtol=1e-4, atol=1e-10)
    assert_allclose(a.predict(X), b.predict(X * flip), rtol=1e-4, atol=1e-8)
    assert_array_equal(
        b.loadings_.to_numpy(), b.membership_.to_numpy() * np.sign(b.weights_)[:, None]
    )
    assert (b.loadings_.to_numpy() < 0).any()  # a flipped member
    paper = fits["paper", True]
    assert_array_equal(paper.loadings_.to_numpy(), paper.membership_.to_numpy())
    assert not np.allclose(paper.predict(X * flip), b.predict(X * flip), rtol=1e-2)
    text = str(b.summary())
    assert "M = X diag(sign w) V" in text
    shown = [v for members in _members(b).values() for _, v in members]
    assert min(shown) < 0  # the composition shows the loadings' signs
    assert not np.signbit(b.loadings_.to_numpy()[b.loadings_.to_numpy() == 0]).any()
    assert "M = X diag(sign w) V" not in str(paper.summary())


def test_signed_latent_is_equivariant_in_the_cv():
    X, y, _, _ = make_blocks(n=80)
    flip = np.where(np.random.default_rng(2).random(X.shape[1]) < 0.5, -1.0, 1.0)
    kw = {
        "n_clusters": (3, 4),
        "lam_ratios": [0.1, 0.3, 0.6],
        "latent": "signed",
        "cv": 3,
        "n_init": 2,
        "random_state": 0,
    }
    a = VCPCRCV(**kw).fit(X, y)
    b = VCPCRCV(**kw).fit(X * flip, y)
    assert_allclose(
        a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"], rtol=1e-6
    )
    assert a.best_params_ == b.best_params_
    assert b.best_estimator_.latent == "signed"
    assert_allclose(a.predict(X), b.predict(X * flip), rtol=1e-5, atol=1e-8)


def test_nothing_selected_predicts_mean(blocks):
    X, y, _, _ = blocks
    # lam_ratio=1.0 (lam = lam_max) selects nothing whatever the rounding:
    # the engine counts a score within _AT_PENALTY of the penalty as at it.
    with pytest.warns(VCPCRWarning, match="No feature was selected.*a constant"):
        model = VCPCR(lam_ratio=1.0, n_init=2, random_state=0).fit(X, y)
    assert model.n_clusters_ == 0
    assert_allclose(model.predict(X), y.mean())
    assert model.transform(X).shape == (X.shape[0], 0)
    # The summary is that of the intercept-only OLS: the mean and its standard
    # error, computed here
    assert_allclose(model.result_.params, [y.mean()], rtol=1e-12)
    sem = y.std(ddof=1) / np.sqrt(y.size)
    assert_allclose(model.result_.bse, [sem], rtol=1e-10)
    text = model.summary().as_text()
    assert re.search(r"Clusters: +0 \(of 5\)", text)
    assert re.search(r"Selected: +0 ", text)
    rows = [line.split()[0] for line in text.splitlines() if line[:1].isalpha()]
    assert "const" in rows
    assert not any(row.startswith("cluster_") for row in rows)
    assert "Cluster composition" not in text


def test_convergence_warning(blocks):
    X, y, _, _ = blocks
    with pytest.warns(ConvergenceWarning, match="max_iter=1") as record:
        VCPCR(lam_ratio=0.01, max_iter=1, n_init=1, random_state=0).fit(X, y)
    assert record[0].filename == __file__  # the user's line, not vcpcr's


def test_summary_text_and_html(fitted):
    model, _X, _y = fitted
    smry = model.summary()
    text = smry.as_text()
    for item in (
        "VC-PCR",
        "weight",
        "gaussian (OLS)",
        "enet (delta=0.5)",
        "No. Observations:",
        "No. Variables:",
        "Selected:",
        "Clusters:",
        "Lambda ratio:",
        "Lambda:",
        "Starts:",
        "Iterations:",
        "R-squared:",
        "Log-Likelihood:",
        "cluster_1",
        "std err",
        "P>|t|",
        "Cluster composition",
        "conditional on the estimated clusters",
    ):
        assert item in text, item
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "<table" in smry.as_html()
    assert "[0.05" in model.summary(alpha=0.1).as_text()
    with pytest.raises(ValueError, match="'alpha' parameter"):
        model.summary(alpha=1.5)


def test_summary_latex(fitted):
    """as_latex works (statsmodels' merged tabular fails on our 4 tables)."""
    model = fitted[0]
    latex = model.summary().as_latex()
    # header, coefficients, effects per SD, composition
    assert latex.count("\\begin{tabular}") == 4
    assert latex.count("\\begin{tabular}") == latex.count("\\end{tabular}")
    assert "\\textbf{cluster\\_1}" in latex
    assert "conditional on the estimated clusters" in latex


def test_summary2_frames_match_statsmodels(fitted):
    """summary2() tables are DataFrames; the coefficients are statsmodels'."""
    model = fitted[0]
    smry = model.summary2(alpha=0.1)
    info, params, effects, composition = smry.tables
    assert all(isinstance(t, pd.DataFrame) for t in smry.tables)
    ref = model.result_.summary2(alpha=0.1).tables[1]
    assert list(params.index) == list(ref.index)
    assert list(params.columns) == list(ref.columns)
    assert_allclose(params.to_numpy(), ref.to_numpy(dtype=float), rtol=1e-12)
    assert list(effects.index) == [*model.clusters_, "prognostic index"]
    assert list(composition.index) == list(model.clusters_)
    sizes = [len(m) for m in model.clusters_.values()]
    assert composition["size"].tolist() == sizes
    assert "Selected:" in info.to_numpy()
    assert "conditional on the estimated clusters" in str(smry)


def test_summary_binomial(binary_blocks):
    X, y, _ = binary_blocks
    model = VCPCR(
        n_clusters=3, family="binomial", n_init=2, lam_ratio=0.5, random_state=0
    ).fit(X, y)
    text = model.summary().as_text()
    assert "binomial (Logit)" in text
    assert "Pseudo R-squ.:" in text
    assert "P>|z|" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_fitted_models_meet_the_summary_contract(fitted, binary_blocks):
    """The summary reads a fitted model through FittedModel (#20); mypy cannot
    check VCPCR against it (scikit-learn's untyped base), so this does."""
    X, y, _ = binary_blocks
    binomial = VCPCR(3, family="binomial", n_init=1, random_state=0).fit(X, y)
    assert isinstance(fitted[0], FittedModel)
    assert isinstance(binomial, FittedModel)
    assert not isinstance(VCPCR(), FittedModel)


def test_summary_does_not_change_state(fitted):
    """summary() leaves the fitted attributes alone (statsmodels may memoize
    computed statistics inside result_, which is not estimator state)."""
    model = fitted[0]
    before = {k: pickle.dumps(v) for k, v in vars(model).items() if k != "result_"}
    params = model.result_.params.copy()
    model.summary(alpha=0.1)
    after = {k: pickle.dumps(v) for k, v in vars(model).items() if k != "result_"}
    assert after == before
    assert_allclose(model.result_.params, params, rtol=0)


def test_numpy_input_gets_default_names(blocks):
    X, y, _, _ = blocks
    model = VCPCR(n_init=1, random_state=0).fit(X, y)
    assert model.membership_.index[0] == "x0"
    assert not hasattr(model, "feature_names_in_")
    assert model.result_.model.endog_names == "y"


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"family": "poisson"}, ValueError, "'family' parameter of VCPCR"),
        ({"weights": "pca"}, ValueError, "'weights' parameter of VCPCR"),
        ({"n_clusters": 0}, ValueError, "'n_clusters' parameter of VCPCR"),
        ({"n_init": 0}, ValueError, "'n_init' parameter"),
        ({"n_init": 10**12}, ValueError, "at most 10,000 are allowed"),  # hung
        ({"lam_ratio": -0.5}, ValueError, "'lam_ratio' parameter"),
        ({"delta": -1.0}, ValueError, "'delta' parameter"),
        ({"tol": "small"}, TypeError, "'tol' parameter"),
        ({"init": "kmeans"}, ValueError, "'init' parameter"),
        ({"latent": "abs"}, ValueError, "'latent' parameter of VCPCR"),
        ({"init": np.zeros(3, dtype=int)}, ValueError, "one label per feature"),
        ({"weights": np.ones(3)}, ValueError, "weights has 3 entries but X has 40"),
        ({"delta": [1.0, 2.0]}, ValueError, "'delta' parameter of VCPCR must be one"),
        ({"delta": True}, TypeError, "'delta' parameter of VCPCR must be a number"),
        ({"init": None}, ValueError, "'init' parameter of VCPCR must be 'random' or"),
    ],
    ids=lambda v: str(v)[:25],
)
def test_bad_parameters(blocks, params, error, match):
    X, y, _, _ = blocks
    with pytest.raises(error, match=match):
        VCPCR(**params).fit(X, y)


def test_bad_data(blocks_df):
    X, y, _, _ = blocks_df
    Xn = X.copy()
    Xn.iloc[[1, 4], 3] = np.nan
    with pytest.raises(ValueError, match=r"NaN in 1 column\(s\) \['g3'\] \(2 values\)"):
        VCPCR().fit(Xn, y)
    Xi = X.copy()
    Xi.iloc[0, 5] = np.inf
    with pytest.raises(ValueError, match=r"infinity in 1 column\(s\) \['g5'\]"):
        VCPCR().fit(Xi, y)
    Xc = X.copy()
    Xc["g7"] = 2.0
    with pytest.raises(ValueError, match=r"constant column\(s\) \['g7'\]"):
        VCPCR().fit(Xc, y)
    with pytest.raises(ValueError, match="y is constant"):
        VCPCR().fit(X, np.ones(len(y)))
    with pytest.raises(ValueError, match=r"needs exactly 2 classes.*3 class"):
        VCPCR(family="binomial").fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="Unknown label type"):
        VCPCR(family="binomial").fit(X, y)
    with pytest.raises(ValueError, match="at least 3"):
        VCPCR(n_clusters=2).fit(X.iloc[:2], y.iloc[:2])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        VCPCR().fit(X, y.iloc[:-1])
    yn = y.copy()
    yn.iloc[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        VCPCR().fit(X, yn)
    model = VCPCR(n_init=1, random_state=0).fit(X, y)
    Xn2 = X.copy()
    Xn2.iloc[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"NaN in 1 column\(s\) \['g0'\]"):
        model.predict(Xn2)
    with pytest.raises(ValueError, match=r"X lacks 35 column\(s\) seen in fit"):
        model.predict(X.iloc[:, :5])


def test_score_checks_y(blocks):
    """Before: NaN from one row, 0.0 for labels never fitted, and
    scikit-learn's "Input contains NaN" (which named no argument)."""
    X, y, _, _ = blocks
    model = VCPCR(n_clusters=2, n_init=1, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="y has 1 sample"):
        model.score(X[:1], y[:1])
    with pytest.raises(ValueError, match="y contains NaN in 1 of"):
        model.score(X, np.r_[np.nan, y[1:]])
    with pytest.raises(ValueError, match=r"X has \d+ rows but y has 5"):
        model.score(X, y[:5])
    labels = np.random.default_rng(0).permutation(len(y)) % 2  # not separable
    clf = VCPCR(family="binomial", n_clusters=2, n_init=1, random_state=0)
    clf.fit(X, labels)
    with pytest.raises(ValueError, match=r"label\(s\) \[5, 6\] that the model"):
        clf.score(X, labels + 5)


@pytest.mark.parametrize("cls", ["VCPCR", "VCPCRCV"])
def test_score_checks_y_in_vcpcr_and_vcpcrcv_alike(blocks, cls):
    """VCPCRCV.score passed y straight to scikit-learn ("Input contains NaN",
    "The 'y_true' parameter of mean_squared_error must be an array-like",
    "inconsistent numbers of samples"); VCPCR.score read a dict as a 0-d
    array and sample_weight's length went unchecked (#46 fuzz)."""
    X, y, _, _ = blocks
    est = (
        VCPCR(n_clusters=2, n_init=1, random_state=0)
        if cls == "VCPCR"
        else VCPCRCV(n_clusters=(2,), n_init=1, cv=3, random_state=0)
    ).fit(X, y)
    bad = [
        (dict(enumerate(y)), TypeError, "got a dict"),
        ("y", TypeError, "got the scalar 'y'"),
        (1.0, TypeError, "got the scalar 1.0"),
        (None, ValueError, "score needs y"),
        (np.r_[np.nan, y[1:]], ValueError, "y contains NaN in 1 of"),
        (np.r_[np.inf, y[1:]], ValueError, "y contains infinity in 1 of"),
        (y[:-3], ValueError, r"X has \d+ rows but y has"),
    ]
    for yb, error, match in bad:
        with pytest.raises(error, match=match):
            est.score(X, yb)
    if cls == "VCPCR":
        with pytest.raises(ValueError, match=r"X has \d+ rows but sample_weight has 3"):
            est.score(X, y, sample_weight=np.ones(3))
    else:  # minus the mean squared error: defined on one row (R^2 is not)
        assert np.isfinite(est.score(X[:1], y[:1]))


def test_input_messages_name_the_fix(blocks):
    X, y, _, _ = blocks
    with pytest.raises(
        ValueError, match="Complex data not supported: X holds complex"
    ) as info:
        VCPCR().fit(X.astype(complex), y)
    assert "[[" not in str(info.value)  # X is not printed
    with pytest.raises(TypeError, match=r"'lam_ratios' .* not booleans"):
        VCPCRCV(lam_ratios=[True, False]).fit(X, y)
    time, event = np.exp(y - y.max()), np.ones(len(y))
    with pytest.raises(ValueError, match=r"goes in as vcpcr.Surv\(time, event\)"):
        VCPCR(family="cox").fit(X, (time, event))


def test_all_zero_lasso_weights_warn(blocks):
    X, y, _, _ = blocks
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = VCPCR(weights="lasso", delta=10.0, n_init=1, random_state=0).fit(X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, VCPCRWarning)]
    assert any("All lasso weights are zero" in m for m in messages)
    assert model.n_clusters_ == 0


def test_larger_problem_still_fits():
    X, y, _, _ = make_blocks(n=80, n_blocks=8, n_noise=300, seed=4)
    model = VCPCR(n_clusters=8, n_init=3, random_state=0).fit(
        pd.DataFrame(X), pd.Series(y)
    )
    assert model.n_clusters_ >= 1


def test_path_is_fit_at_each_ratio_and_leaves_the_model_unfitted(blocks_df):
    """VCPCR.path solves the ratios in one batch; each row equals a fit (#20)."""
    from sklearn.exceptions import NotFittedError

    X, y, _, _ = blocks_df
    model = VCPCR(n_clusters=3, n_init=2, random_state=0)
    ratios = [0.05, 0.3, 0.7, 1.0]
    path = model.path(X, y, lam_ratios=ratios)
    assert list(path.columns) == ["lam_ratio", "lam", "size", "n_clusters"]
    with pytest.raises(NotFittedError):
        model.predict(X)
    for row in path.itertuples():
        fit = VCPCR(n_clusters=3, n_init=2, lam_ratio=row.lam_ratio, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VCPCRWarning)  # nothing selected at 1.0
            fit.fit(X, y)
        assert row.size == int((fit.labels_ >= 0).sum())
        assert row.n_clusters == fit.n_clusters_
        assert row.lam == pytest.approx(fit.lam_, rel=1e-12)
    assert path["size"].iloc[-1] == 0
    with pytest.raises(ValueError, match=r"'lam_ratios' parameter of VCPCR\.path"):
        model.path(X, y, lam_ratios=[-1.0])


# methods that fit, or need no fit (scikit-learn's own and VCPCR.path)
_NO_FIT_NEEDED = {"fit", "fit_predict", "fit_transform", "get_metadata_routing"}
_NO_FIT_NEEDED |= {"get_params", "path"}


@pytest.mark.parametrize("family", ["gaussian", "binomial", "cox"])
@pytest.mark.parametrize("cls_name", ["VCPCR", "VCPCRCV"])
def test_every_method_of_an_unfitted_estimator_raises_not_fitted(cls_name, family):
    """check_is_fitted comes first in every method that needs a fit (#20):
    predict_median, print_summary and plot raised AttributeError."""
    import inspect

    from sklearn.exceptions import NotFittedError

    import vcpcr

    est = getattr(vcpcr, cls_name)(family=family)
    X = np.random.default_rng(0).normal(size=(10, 4))
    y = np.column_stack([np.arange(1.0, 11.0), np.ones(10)])
    names = [
        n
        for n in dir(est)
        if not n.startswith("_")
        and not n.startswith("set_")
        and n not in _NO_FIT_NEEDED
        and hasattr(est, n)  # available_if hides the other families' methods
        and callable(getattr(est, n))
    ]
    assert "predict" in names
    if family == "cox":
        assert {"predict_median", "plot"} <= set(names)
    for name in names:
        method = getattr(est, name)
        params = inspect.signature(method).parameters
        given = {"fit_path": lambda Xt, yt: np.zeros((1, Xt.shape[1])), "X": X}
        args = [given.get(p, y) for p in params if p in (*given, "y")]
        with pytest.raises(NotFittedError):
            method(*args)


# ------------------------------------------------- new data at prediction time


@pytest.fixture
def small_fit():
    """A small fit on a DataFrame and the names of its unselected columns."""
    X, y, _, _ = make_blocks(n=40, seed=3)
    X = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    model = VCPCR(n_clusters=2, lam_ratio=0.4, n_init=2, random_state=0).fit(X, y)
    unselected = list(X.columns[model.labels_ < 0])
    assert unselected
    assert (model.labels_ >= 0).any()
    return model, X, y, unselected


def test_predict_reorders_columns_by_name(small_fit):
    model, X, y, _ = small_fit
    shuffled = X[X.columns[::-1]]
    assert_array_equal(model.predict(shuffled), model.predict(X))
    assert_array_equal(model.transform(shuffled), model.transform(X))
    assert model.score(shuffled, y) == model.score(X, y)
    assert_array_equal(
        model.standardized_design(shuffled), model.standardized_design(X)
    )


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (
            lambda X: X.drop(columns=["g3"]),
            r"X lacks 1 column\(s\) seen in fit \['g3'\]",
        ),
        (
            lambda X: X.assign(extra=1.0),
            r"X has 1 column\(s\) not seen in fit \['extra'\]",
        ),
        (
            lambda X: X.rename(columns={"g0": "G0"}),
            r"lacks 1 column\(s\) seen in fit \['g0'\] and has 1 column\(s\) not "
            r"seen in fit \['G0'\]",
        ),
    ],
    ids=["missing", "extra", "renamed"],
)
def test_predict_names_missing_and_extra_columns(small_fit, change, match):
    model, X, _, _ = small_fit
    with pytest.raises(ValueError, match=match):
        model.predict(change(X))


def test_nan_in_an_unselected_column_does_not_block_predict(small_fit):
    model, X, y, unselected = small_fit
    Xn = X.copy()
    Xn.loc[Xn.index[:3], unselected[0]] = np.nan
    Xn.loc[Xn.index[5], unselected[-1]] = np.inf
    assert_array_equal(model.predict(Xn), model.predict(X))
    assert_array_equal(model.transform(Xn), model.transform(X))
    assert model.score(Xn, y) == model.score(X, y)
    assert_array_equal(model.outcome_design(Xn), model.outcome_design(X))
    # standardized_design returns every clustered column, so it needs them all
    with pytest.raises(ValueError, match="impute them before predicting"):
        model.standardized_design(Xn)


def test_nan_in_a_selected_column_names_it_and_says_predicting(small_fit):
    model, X, _, _ = small_fit
    selected = X.columns[model.labels_ >= 0][0]
    Xn = X.copy()
    Xn.loc[Xn.index[0], selected] = np.nan
    msg = rf"NaN in 1 column\(s\) \['{selected}'\].*impute them before predicting"
    with pytest.raises(ValueError, match=msg) as info:
        model.predict(Xn)
    assert "before fitting" not in str(info.value)


def test_nan_in_a_covariate_at_predict_names_it(small_fit):
    _, X, y, _ = small_fit
    model = VCPCR(
        n_clusters=2, lam_ratio=0.4, n_init=2, random_state=0, covariates=["g0"]
    ).fit(X, y)
    Xn = X.copy()
    Xn.loc[Xn.index[1], "g0"] = np.nan
    with pytest.raises(ValueError, match=r"NaN in 1 column\(s\) \['g0'\]"):
        model.predict(Xn)


@pytest.mark.parametrize("where", ["fit", "predict"])
def test_duplicate_column_names_are_named(small_fit, where):
    model, X, y, _ = small_fit
    dup = X.set_axis(["g0", "g1", "g1", *X.columns[3:-1], "g0"], axis=1)
    msg = r"duplicate column names \['g1', 'g0'\]"
    call = VCPCR(n_clusters=2, n_init=1).fit if where == "fit" else model.predict
    args = (dup, y) if where == "fit" else (dup,)
    with pytest.raises(ValueError, match=msg):
        call(*args)


@pytest.mark.parametrize(
    "columns",
    [
        lambda p: list(range(1, p + 1)),
        lambda p: [j + 0.5 for j in range(p)],
        lambda p: pd.MultiIndex.from_arrays([["g"] * p, range(p)]),
    ],
    ids=["int", "float", "multiindex"],
)
def test_non_string_column_names_are_refused_at_fit_and_predict(small_fit, columns):
    """Non-string names would be matched by position: refused with the fix,
    unless they are the positions in order (#46 row 6)."""
    model, X, y, _ = small_fit
    unnamed = X.set_axis(columns(X.shape[1]), axis=1)
    msg = r"column names must be strings.*X.columns = X.columns.astype\(str\)"
    with pytest.raises(TypeError, match=msg):
        VCPCR(n_clusters=2, n_init=1).fit(unnamed, y)
    with pytest.raises(TypeError, match=msg):
        VCPCRCV(n_clusters=[2], n_init=1, cv=3).fit(unnamed, y)
    with pytest.raises(TypeError, match=msg):  # fitted on names: no silent reorder
        model.predict(unnamed[unnamed.columns[::-1]])
    # pd.DataFrame(array)'s default names are the positions: fitted as the array
    default = pd.DataFrame(X.to_numpy())
    on_frame = VCPCR(n_clusters=2, n_init=1, random_state=0).fit(default, y)
    on_array = VCPCR(n_clusters=2, n_init=1, random_state=0).fit(X.to_numpy(), y)
    assert_array_equal(on_frame.predict(default), on_array.predict(X.to_numpy()))
    with pytest.raises(TypeError, match=msg):  # reordered: no longer positions
        on_frame.predict(default[default.columns[::-1]])


@pytest.mark.parametrize("value", [1.5, -0.1])
def test_lam_ratio_outside_unit_interval_is_an_error(blocks, value):
    X, y, _, _ = blocks
    msg = r"'lam_ratio' parameter of VCPCR must be in the range \[0.0, 1.0\]"
    with pytest.raises(ValueError, match=msg):
        VCPCR(lam_ratio=value).fit(X, y)
    with pytest.raises(ValueError, match=r"'lam_ratios'.*range \[0, 1\].*\[1.5\]"):
        VCPCR().path(X, y, lam_ratios=[0.5, 1.5])


def test_nothing_selected_with_covariates_says_it_predicts_from_them(small_fit):
    _, X, y, _ = small_fit
    with pytest.warns(VCPCRWarning, match=r"from the covariates \['g0'\] alone"):
        model = VCPCR(
            n_clusters=2, lam_ratio=1.0, n_init=2, random_state=0, covariates=["g0"]
        ).fit(X, y)
    assert model.n_clusters_ == 0
    assert np.ptp(model.predict(X)) > 0  # not a constant


def test_set_params_family_after_fit_keeps_the_fitted_family():
    """#46: predict/score read the live ``family`` and returned log-odds."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 8))
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    model = VCPCR(n_clusters=2, family="binomial", random_state=0).fit(X, y)
    labels, accuracy = model.predict(X), model.score(X, y)
    model.set_params(family="gaussian")
    assert_array_equal(model.predict(X), labels)
    assert model.score(X, y) == accuracy
