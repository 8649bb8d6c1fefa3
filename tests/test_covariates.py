"""Clinical covariates (issue #18): never clustered, unpenalized, in step 2."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import fold_columns, run_fold
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.linear_model import ElasticNet

from vcpcr import VCPCR, VCPCRWarning
from vcpcr._scaling import standardize
from vcpcr._weights import ENET_L1_RATIO, weights_for_grid

REF = Path(__file__).parent / "reference"
with open(REF / "glmnet_covariates.json") as fh:
    GLMNET = json.load(fh)  # see glmnet_covariates.R


def _simulate(n=90, p=24, seed=0):
    """A strong covariate (age), a binary one (sex) and a gene signal."""
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(n, p))
    G[:, :4] += rng.normal(size=(n, 1))  # one correlated block carries signal
    age = rng.normal(60.0, 10.0, n)
    sex = rng.integers(0, 2, n).astype(float)
    X = pd.DataFrame(G, columns=[f"g{j}" for j in range(p)])
    X.insert(0, "age", age)
    X.insert(3, "sex", sex)  # covariates need not come first
    eta = 0.08 * (age - 60.0) + 0.5 * sex + 0.4 * G[:, :4].sum(axis=1)
    return X, eta, rng


def _gaussian(seed=0):
    X, eta, rng = _simulate(seed=seed)
    return X, eta + rng.normal(size=eta.size)


def _binomial(seed=0):
    X, eta, rng = _simulate(seed=seed)
    return X, (rng.random(eta.size) < 1 / (1 + np.exp(-eta))).astype(int)


def _cox(seed=0):
    X, eta, rng = _simulate(seed=seed)
    time = rng.exponential(np.exp(-eta))
    censor = rng.exponential(2.0 * np.median(time), eta.size)
    return X, np.column_stack([np.minimum(time, censor), time <= censor])


COV = ["age", "sex"]
KW = {"n_clusters": 3, "n_init": 3, "random_state": 0, "covariates": COV}


def _design(model, X):
    """``[covariates (raw), M]`` as an independent step-2 fit sees it."""
    M = pd.DataFrame(model.transform(X), columns=model.membership_.columns)
    return pd.concat([X[COV].reset_index(drop=True), M], axis=1)


# --------------------------------------------------------------- step 0
def _reference_case(name):
    df = pd.read_csv(REF / "data" / f"{name}.csv")
    A = standardize(df.filter(regex=r"^x\d+$").to_numpy())[0]
    Z, Xs = A[:, :2], A[:, 2:]
    if "y" in df and name.startswith("gauss"):
        y = df["y"].to_numpy(dtype=float)
        target = (y - y.mean()) / y.std(ddof=1)
    elif "y" in df:
        target = df["y"].to_numpy(dtype=float)
    else:
        target = df[["time", "event"]].to_numpy(dtype=float)
    return Z, Xs, target


@pytest.mark.reference
@pytest.mark.parametrize(
    ("name", "family"),
    [("gauss_wide", "gaussian"), ("binom_tall", "binomial"), ("cox_wide", "cox")],
)
def test_weights_equal_glmnet_penalty_factor_zero(name, family):
    """R glmnet(cbind(Z, X), y, penalty.factor = c(0, 0, 1, ...)) at
    lambda = delta p / (p + c) (and glmnet's gaussian y-scaling) gives the
    genes' weights of vcpcr's delta (tests/reference/glmnet_covariates.R)."""
    if family == "cox":
        pytest.importorskip("sksurv")
    ref = GLMNET[name]
    Z, Xs, target = _reference_case(name)
    p, c = Xs.shape[1], Z.shape[1]
    if family != "gaussian":  # the documented mapping, as R recorded it
        assert_allclose(ref["lambda_glmnet"], np.array(ref["deltas"]) * p / (p + c))
    if family == "cox":  # Coxnet's default tol=1e-7 leaves ~6e-4 relative
        from vcpcr._solvers.cox import cox_lasso_path

        time, event = target[:, 0], target[:, 1] == 1
        W = cox_lasso_path(
            Xs, time, event, ref["deltas"], l1_ratio=0.05, covariates=Z, tol=1e-13
        )
    else:
        W = weights_for_grid(
            Xs, target, "enet", ref["deltas"], family, covariates=Z
        ).coef
    for k in range(len(ref["deltas"])):
        expected = np.asarray(ref["coef"][k])
        # glmnet's accuracy (1e-7 on the objective), as tests/test_weights.py
        assert_allclose(W[k], expected, rtol=0, atol=5e-6 * np.abs(expected).max())
        assert np.array_equal(W[k] != 0, expected != 0)


def test_gaussian_weights_frisch_waugh_lovell():
    """Gaussian weights with covariates = an elastic net (scikit-learn's) on
    the residuals of y and the standardized genes after OLS on [1, Z]."""
    X, y = _gaussian()
    Xs = standardize(X.drop(columns=COV).to_numpy())[0]
    Zs = standardize(X[COV].to_numpy())[0]
    ys = (y - y.mean()) / y.std(ddof=1)
    Q = np.column_stack([np.ones(len(y)), Zs])
    H = Q @ np.linalg.pinv(Q)
    delta = 0.2
    w = weights_for_grid(Xs, ys, "enet", [delta], "gaussian", covariates=Zs).coef[0]
    ref = ElasticNet(
        alpha=delta, l1_ratio=ENET_L1_RATIO, fit_intercept=False, tol=1e-14
    ).fit(Xs - H @ Xs, ys - H @ ys)
    assert_allclose(w, ref.coef_, atol=1e-6 * np.abs(ref.coef_).max())
    # and the adjustment matters: unadjusted weights differ
    w0 = weights_for_grid(Xs, ys, "enet", [delta], "gaussian").coef[0]
    assert np.abs(w0 - w).max() > 1e-2 * np.abs(w).max()


# --------------------------------------------------------------- step 2
def test_gaussian_step2_equals_statsmodels_ols():
    import statsmodels.api as sm

    X, y = _gaussian()
    model = VCPCR(**KW).fit(X, y)
    ref = sm.OLS(y, sm.add_constant(_design(model, X))).fit()
    assert list(model.result_.params.index) == [
        "const",
        *COV,
        *model.cluster_coef_.index,
    ]
    assert_allclose(model.result_.params, ref.params, rtol=1e-8)
    assert_allclose(model.result_.bse, ref.bse, rtol=1e-8)
    assert_allclose(model.covariate_coef_[COV], ref.params[COV], rtol=1e-8)
    # coef_ is aligned with X's columns: predict is X @ coef_ + intercept_
    assert model.coef_.shape == (X.shape[1],)
    assert_allclose(model.coef_[[0, 3]], ref.params[COV], rtol=1e-8)
    assert_allclose(X.to_numpy() @ model.coef_ + model.intercept_, ref.fittedvalues)
    assert_allclose(model.predict(X), ref.fittedvalues, rtol=1e-10)
    # the covariates are never clustered
    assert not set(COV) & set(model.membership_.index)
    assert model.weights_.shape == model.mean_.shape == (X.shape[1] - 2,)


def test_binomial_step2_equals_statsmodels_logit():
    import statsmodels.api as sm

    X, y = _binomial()
    model = VCPCR(family="binomial", **KW).fit(X, y)
    ref = sm.Logit(y, sm.add_constant(_design(model, X))).fit(disp=0, tol=1e-12)
    assert_allclose(model.result_.params, ref.params, rtol=1e-6)
    assert_allclose(model.result_.bse, ref.bse, rtol=1e-6)
    assert_allclose(model.predict_proba(X)[:, 1], ref.predict(), rtol=1e-6)


def test_cox_step2_equals_lifelines():
    pytest.importorskip("sksurv")
    lifelines = pytest.importorskip("lifelines")
    X, y = _cox()
    model = VCPCR(family="cox", **KW).fit(X, y)
    frame = _design(model, X)
    frame["T"], frame["E"] = y[:, 0], y[:, 1]
    ref = lifelines.CoxPHFitter().fit(
        frame,
        "T",
        "E",
        fit_options={"precision": 1e-12, "r_precision": 1e-14},
    )
    assert list(model.result_.params_.index) == [*COV, *model.cluster_coef_.index]
    assert_allclose(model.result_.params_, ref.params_, rtol=1e-6)
    assert_allclose(model.covariate_coef_[COV], ref.params_[COV], rtol=1e-6)
    new = X.iloc[:7]
    expected = ref.predict_log_partial_hazard(frame.iloc[:7])
    assert_allclose(model.predict_log_partial_hazard(new), expected, rtol=1e-6)
    assert_allclose(
        model.predict_survival_function(new, return_array=True),
        ref.predict_survival_function(frame.iloc[:7], times=model.unique_times_).T,
        rtol=1e-6,
    )


def test_summary_lists_covariates_before_clusters():
    X, y = _gaussian()
    model = VCPCR(**KW).fit(X, y)
    text = model.summary().as_text()
    rows = [line.split()[0] for line in text.splitlines() if line.strip()]
    assert rows.index("age") < rows.index("sex") < rows.index("cluster_1")
    assert "Covariates (age, sex) enter on their raw scale" in " ".join(text.split())
    # per year of age: rescaling age to decades multiplies its coefficient by 10
    X10 = X.assign(age=X["age"] / 10)
    model10 = VCPCR(**KW).fit(X10, y)
    assert_allclose(model10.covariate_coef_["age"], 10 * model.covariate_coef_["age"])
    assert_allclose(model10.cluster_coef_, model.cluster_coef_, rtol=1e-8)


def test_positions_for_arrays_and_clone():
    X, y = _gaussian()
    model = VCPCR(**KW).fit(X, y)
    arr = VCPCR(**{**KW, "covariates": [0, 3]}).fit(X.to_numpy(), y)
    assert arr.covariate_names_ == ["x0", "x3"]
    assert_allclose(arr.predict(X.to_numpy()), model.predict(X))
    assert clone(model).get_params()["covariates"] == COV


@pytest.mark.parametrize(
    ("covariates", "error", "match"),
    [
        (["agee"], ValueError, r"'agee' is not a column of X. Did you mean \['age'\]"),
        ([0, 0], ValueError, "names a column twice"),
        ([99], ValueError, "position 99 is out of range"),
        ([1.5], TypeError, "names \\(str\\) or positions \\(int\\)"),
    ],
)
def test_bad_covariates(covariates, error, match):
    X, y = _gaussian()
    with pytest.raises(error, match=match):
        VCPCR(covariates=covariates).fit(X, y)


def test_bad_covariate_data():
    X, y = _gaussian()
    with pytest.raises(TypeError, match="X has no column names"):
        VCPCR(covariates=["age"]).fit(X.to_numpy(), y)
    collinear = X.assign(age2=2 * X["age"] + 1)
    with pytest.raises(ValueError, match="'age2' is a linear combination of 'age'"):
        VCPCR(covariates=["age", "age2"]).fit(collinear, y)
    with pytest.raises(ValueError, match="constant"):
        VCPCR(covariates=["one"]).fit(X.assign(one=1.0), y)
    with pytest.raises(ValueError, match="'cluster_1' is reserved"):
        VCPCR(covariates=["cluster_1"]).fit(X.rename(columns={"age": "cluster_1"}), y)
    with pytest.raises(ValueError, match="no feature is left to cluster"):
        VCPCR(covariates=COV).fit(X[COV], y)
    Xb, yb = _binomial()
    with pytest.raises(ValueError, match="weights='ridge' with covariates"):
        VCPCR(family="binomial", weights="ridge", covariates=COV).fit(Xb, yb)


# -------------------------------------------------------------- formulas
def _clinical_frame(seed=0):
    X, y = _gaussian(seed)
    rng = np.random.default_rng(seed + 1)
    df = X.drop(columns="sex").assign(stage=rng.choice(["I", "II", "III"], len(y)), y=y)
    return df


def test_two_part_formula_equals_statsmodels_formula():
    import statsmodels.formula.api as smf

    df = _clinical_frame()
    model = VCPCR(
        n_clusters=3, n_init=3, random_state=0, formula="y ~ age + C(stage) | ."
    ).fit(df)
    covs = ["age", "C(stage)[T.II]", "C(stage)[T.III]"]
    assert model.covariate_names_ == covs
    assert not {"age", "stage", "y"} & {
        c.split("[")[0] for c in model.membership_.index
    }
    frame = df.assign(
        **dict(zip(model.membership_.columns, model.transform(df).T, strict=True))
    )
    terms = " + ".join(model.membership_.columns)
    ref = smf.ols(f"y ~ age + C(stage) + {terms}", frame).fit()
    names = list(model.result_.params.index[1:])  # patsy puts C(stage) first
    assert sorted(names) == sorted(ref.params.index[1:])
    assert_allclose(model.result_.params[names], ref.params[names], rtol=1e-8)
    assert_allclose(model.result_.params.iloc[0], ref.params["Intercept"], rtol=1e-8)
    assert_allclose(model.predict(df.iloc[:5]), ref.fittedvalues.iloc[:5], rtol=1e-10)


def test_two_part_formula_drops_missing_rows_of_both_parts():
    df = _clinical_frame()
    df.loc[3, "g2"], df.loc[5, "stage"], df.loc[7, "age"] = np.nan, None, np.nan
    model = VCPCR(
        n_clusters=2, n_init=2, random_state=0, formula="y ~ age + C(stage) | ."
    )
    with pytest.warns(UserWarning, match="Dropped 3 of 90 rows"):
        model.set_params(missing="drop").fit(df)
    assert model.n_samples_fit_ == 87


def test_two_part_formula_bad_input():
    df = _clinical_frame()
    with pytest.raises(ValueError, match=r"\['age'\] both as covariates .* remove it"):
        VCPCR(formula="y ~ age | age + g1 + g2").fit(df)
    with pytest.raises(ValueError, match="name them in one place"):
        VCPCR(formula="y ~ age | .", covariates=["g1"]).fit(df)
    with pytest.raises(ValueError, match="needs terms on both sides of '\\|'"):
        VCPCR(formula="y ~ age | ").fit(df)


# ------------------------------------------------------------------ VCPCRCV
@pytest.mark.parametrize(
    ("family", "data", "scoring"),
    [
        ("gaussian", _gaussian, "neg_mean_squared_error"),
        ("binomial", _binomial, "neg_log_loss"),
        ("cox", _cox, "concordance"),
    ],
)
def test_cv_fold_equals_vcpcr_with_covariates(family, data, scoring):
    """A fold of VCPCRCV (batched weights, clustering, step 2, scores) scores
    what VCPCR(covariates=...) fitted on the training part scores."""
    from vcpcr._families import FAMILIES
    from vcpcr._scoring import batch_scoring, get_scorer
    from vcpcr._sos_nmf import random_partition
    from vcpcr._tuning import FoldSpec, Grid

    if family == "cox":
        pytest.importorskip("sksurv")
        pytest.importorskip("lifelines")
    scorer = get_scorer(scoring, FAMILIES[family], VCPCR(family=family))
    X, y = data()
    A = X.to_numpy()  # the user's order: age at 0, sex at 3 (not first)
    cov = [X.columns.get_loc(c) for c in COV]
    train, test = np.arange(60), np.arange(60, len(y))
    K, delta, ratio, seed = 3, 0.3, 0.4, 7
    spec = FoldSpec(
        FAMILIES[family],
        "enet",
        Grid((K,), [delta], np.array([ratio])),
        1,
        500,
        1e-4,
        VCPCR(family=family),
        scorer,
        batch_scoring(scoring, FAMILIES[family]),
        columns=fold_columns(A.shape[1], cov),
    )
    out = run_fold(A, y, train, test, spec, seed)
    init = random_partition(A.shape[1] - 2, K, np.random.default_rng(seed))
    model = VCPCR(
        K, family=family, delta=delta, lam_ratio=ratio, init=init, covariates=cov
    ).fit(A[train], y[train])
    expected = scorer(model, A[test], y[test])
    assert_allclose(out.scores, [expected], rtol=1e-7)


def test_cv_rare_level_constant_in_a_training_fold():
    """A dummy whose only 1 is in one row is constant in that row's training
    fold: the fold leaves it out (coefficient 0 there), the CV runs."""
    from sklearn.model_selection import KFold

    from vcpcr import VCPCRCV
    from vcpcr._tuning import train_fold

    X, y = _gaussian()
    X = X.assign(rare=0.0)
    X.loc[5, "rare"] = 1.0
    A = X[["g0", "age", "g1", "rare"]].to_numpy()
    rows = np.delete(np.arange(len(A)), 5)
    fold = train_fold(A, rows, fold_columns(4, [1, 3]))
    assert fold.layout.covariates.tolist() == [1]  # the user's position of age
    assert fold.layout.clustered.tolist() == [0, 2]
    assert_array_equal(fold.layout.Z[:, 0], A[rows, 1])
    cv = VCPCRCV(
        n_clusters=(2,),
        lam_ratios=[0.3, 0.6],
        n_init=2,
        cv=KFold(3),
        random_state=0,
        covariates=["age", "sex", "rare"],
    ).fit(X, y)
    assert np.all(np.isfinite(cv.cv_results_["mean_test_score"]))
    assert cv.best_estimator_.covariate_names_ == ["age", "sex", "rare"]
    assert "rare" not in cv.best_estimator_.membership_.index


# --------------------------------------------------------------- inference
def test_multi_split_and_stability_with_covariates():
    """The covariates are in each split's step 2 (never tested as genes),
    and the results match a model fitted with them."""
    from vcpcr.inference import multi_split, stability_selection

    X, y = _gaussian()
    model = VCPCR(**{**KW, "n_init": 2})
    genes = [c for c in X.columns if c not in COV]
    result = multi_split(model, X, y, n_splits=3, random_state=0)
    assert result.n_splits_used == 3
    assert result.n_splits_gene_level == 3  # covariates beside the genes
    assert list(result.pvalues.index) == genes
    result.check_matches(clone(model).fit(X, y))
    stab = stability_selection(model, X, y, n_pairs=2, random_state=0)
    assert list(stab.selection_frequency.index) == genes


def test_outcome_design_is_covariates_then_latent_variables():
    X, y = _gaussian()
    model = VCPCR(**KW).fit(X, y)
    design = model.outcome_design(X)
    assert list(design.columns) == list(model.result_.params.index[1:])
    assert_allclose(design[COV], X[COV])
    assert_allclose(design.iloc[:, 2:], model.transform(X))


# ------------------------------------------------------------------ strata
def _stratified(seed=0):
    X, y = _cox(seed)
    rng = np.random.default_rng(seed + 5)
    return X.assign(center=rng.integers(0, 3, len(X)).astype(float)), y


def test_strata_equal_lifelines_stratified_cox():
    """Step 2 and the survival predictions follow lifelines' strata."""
    pytest.importorskip("sksurv")
    lifelines = pytest.importorskip("lifelines")
    X, y = _stratified()
    model = VCPCR(family="cox", strata=["center"], **KW).fit(X, y)
    assert "center" not in model.membership_.index
    assert model.strata_names_ == ["center"]
    frame = _design(model, X).assign(center=X["center"], T=y[:, 0], E=y[:, 1])
    ref = lifelines.CoxPHFitter().fit(
        frame,
        "T",
        "E",
        strata=["center"],
        fit_options={"precision": 1e-12, "r_precision": 1e-14},
    )
    assert_allclose(model.result_.params_, ref.params_, rtol=1e-6)
    new = frame.drop(columns=["T", "E"]).iloc[:9]
    times = model.unique_times_[::7]
    expected = ref.predict_survival_function(new, times=times)[new.index].T
    got = model.predict_survival_function(X.iloc[:9], return_array=True, times=times)
    assert_allclose(got, expected, rtol=1e-6)
    text = " ".join(model.summary().as_text().split())
    assert "Strata: center" in text
    assert "step-0 weights are unstratified" in text
    unseen = X.iloc[:9].assign(center=7.0)
    with pytest.raises(ValueError, match=r"strata \['7.0'\] of \['center'\]"):
        model.predict_survival_function(unseen, return_array=True)


def test_bad_strata():
    X, y = _stratified()
    with pytest.raises(ValueError, match="strata=\\['center'\\] needs family='cox'"):
        VCPCR(strata=["center"]).fit(X, y[:, 0])
    with pytest.raises(ValueError, match="both covariates and strata"):
        VCPCR(family="cox", covariates=["center"], strata=["center"]).fit(X, y)
    no_event = y.copy()
    no_event[X["center"].to_numpy() == 2, 1] = 0
    with pytest.raises(ValueError, match=r"stratum center=2 .* has no event"):
        VCPCR(family="cox", strata=["center"]).fit(X, no_event)
    with pytest.raises(ValueError, match="strata: 'centre' is not a column"):
        VCPCR(family="cox", strata=["centre"]).fit(X, y)


def test_a_categorical_column_of_one_level_and_a_missing_value_at_predict():
    """The errors name covariates= and strata=, never a formula the user did
    not write (before: "The formula 'center' has no predictors")."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    X, y = _stratified()
    one = X.assign(center="A")
    with pytest.raises(
        ValueError,
        match=r"\{'center': 'A'\} of covariates= or strata= have a single level",
    ):
        VCPCR(family="cox", strata=["center"]).fit(one, y)
    labelled = X.assign(center=X["center"].map({0.0: "a", 1.0: "b", 2.0: "c"}))
    model = VCPCR(family="cox", **(KW | {"covariates": [*COV, "center"]}))
    model.fit(labelled, y)
    labelled.loc[labelled.index[0], "center"] = None
    with pytest.raises(
        ValueError,
        match=r"by covariates= and strata= contain missing values: \{'center': 1\}",
    ):
        model.predict(labelled)


def _stratified_fold(scoring):
    """``_stratified``'s columns (covariates, then the stratum, then the genes:
    the x<j> names of the log-likelihood below), its FoldSpec and the fold's
    start."""
    from vcpcr._families import FAMILIES
    from vcpcr._scoring import batch_scoring, get_scorer
    from vcpcr._sos_nmf import random_partition
    from vcpcr._tuning import FoldSpec, Grid

    X, y = _stratified()
    order = [*COV, "center", *(c for c in X.columns if c not in [*COV, "center"])]
    A = X[order].to_numpy()
    K, delta, ratio, seed = 3, 0.3, 0.4, 7
    scorer = get_scorer(scoring, FAMILIES["cox"], VCPCR(family="cox"))
    spec = FoldSpec(
        FAMILIES["cox"],
        "enet",
        Grid((K,), [delta], np.array([ratio])),
        1,
        500,
        1e-4,
        VCPCR(family="cox"),
        scorer,
        batch_scoring(scoring, FAMILIES["cox"]),
        columns=fold_columns(A.shape[1], [0, 1], [2]),
    )
    init = random_partition(A.shape[1] - 3, K, np.random.default_rng(seed))
    model = VCPCR(
        K,
        family="cox",
        delta=delta,
        lam_ratio=ratio,
        init=init,
        covariates=[0, 1],
        strata=[2],
    )
    return A, y, spec, seed, model, scorer


@pytest.mark.parametrize("scoring", ["concordance", "mean_cumulative_dynamic_auc"])
def test_cv_fold_with_strata_equals_vcpcr_with_strata(scoring):
    """A fold of VCPCRCV(strata=...) (the per-point stratified step 2, batched
    or per-point scores) scores what VCPCR(strata=...) fitted on the training
    part scores."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    A, y, spec, seed, model, scorer = _stratified_fold(scoring)
    train, test = np.arange(60), np.arange(60, len(y))
    out = run_fold(A, y, train, test, spec, seed)
    model.fit(A[train], y[train])
    assert model.strata_names_ == ["x2"]
    assert_allclose(out.scores, [scorer(model, A[test], y[test])], rtol=1e-7)


def test_cv_stratified_partial_likelihood_against_lifelines():
    """The fold score of the partial-likelihood scoring is ``2 (l(b) - l_train(b)) /
    d_test`` with l the stratified partial likelihood: lifelines' stratified
    log-likelihood (CoxPHFitter.score) of the VCPCR(strata=...) fitted on the
    training part, at its coefficients, on all the fold's rows and on the
    training rows."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    A, y, spec, seed, model, _ = _stratified_fold("neg_partial_likelihood_deviance")
    train, test = np.arange(60), np.arange(60, len(y))
    out = run_fold(A, y, train, test, spec, seed)
    model.fit(A[train], y[train])
    fitter = model.result_

    def loglik(rows):
        frame = pd.DataFrame(
            model.transform(A[rows]), columns=model.membership_.columns
        )
        frame.insert(0, "x0", A[rows, 0])
        frame.insert(1, "x1", A[rows, 1])
        frame["x2"] = A[rows, 2]
        frame[fitter.duration_col], frame[fitter.event_col] = y[rows, 0], y[rows, 1]
        return fitter.score(frame, scoring_method="log_likelihood") * len(rows)

    full, part = loglik(np.arange(len(y))), loglik(train)
    assert_allclose(out.scores, [2 * (full - part) / y[test, 1].sum()], rtol=1e-7)
    # the unstratified partial likelihood differs: the strata matter here
    from vcpcr._solvers.partial_likelihood import efron_loglik

    eta = model.predict_log_partial_hazard(A)[None, :]
    flat = efron_loglik(eta, y[:, 0], y[:, 1] > 0)[0]
    assert abs(flat - full) > 1.0


def _stratified_search(X, y, **kw):
    """A stratified VCPCRCV with covariates on 3 stratified folds (``kw``
    overrides its parameters)."""
    from sklearn.model_selection import StratifiedKFold

    from vcpcr import VCPCRCV

    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y[:, 1]))
    params = {
        "n_clusters": 3,
        "family": "cox",
        "deltas": [0.3],
        "lam_ratios": [0.1, 0.4],
        "n_init": 1,
        "cv": folds,
        "random_state": 0,
        "covariates": COV,
        "strata": "center",
    }
    return VCPCRCV(**(params | kw))


def _stratified_cv():
    """:func:`_stratified_search` on :func:`_stratified`, fitted."""
    X, y = _stratified()
    return _stratified_search(X, y).fit(X, y)


def test_vcpcrcv_with_strata():
    """End to end: a stratified best_estimator_, finite scores."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    cv = _stratified_cv()
    assert np.isfinite(cv.cv_results_["mean_test_score"]).all()
    best = cv.best_estimator_
    assert best.strata_names_ == ["center"]
    assert "center" not in best.membership_.index
    assert "Strata: center" in " ".join(cv.summary().as_text().split())


def test_a_stratified_splitter_object_splits_on_the_events():
    """``cv=StratifiedKFold(...)`` gives the folds of its split on the event
    indicator (before: scikit-learn refused the (time, event) target)."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    from sklearn.model_selection import StratifiedKFold

    X, y = _stratified()
    splitter = StratifiedKFold(3, shuffle=True, random_state=0)
    cv = _stratified_search(X, y, cv=splitter).fit(X, y)
    scores = cv.cv_results_.filter(like="test_score")
    pd.testing.assert_frame_equal(
        scores, _stratified_cv().cv_results_.filter(like="test_score")
    )


def _no_batch(monkeypatch):
    """Make every fold's step 2 a per-point lifelines fit (the batch vouches
    for none), as where the stratified batch does not converge."""
    from vcpcr._families import Cox

    batch = Cox._fit_batch

    def vouching_for_none(self, M, outcome, strata):
        out = batch(self, M, outcome, strata)
        out.ok[:] = False
        return out

    monkeypatch.setattr(Cox, "_fit_batch", vouching_for_none)


def test_stratified_folds_batch_equals_lifelines(monkeypatch):
    """The folds' stratified step 2 is batched (one Newton iteration for all
    points, within strata); its scores are those of lifelines' stratified
    fits of each point, to lifelines' convergence tolerance."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    batched = _stratified_cv().cv_results_
    _no_batch(monkeypatch)
    per_point = _stratified_cv().cv_results_
    for j in range(3):
        key = f"split{j}_test_score"
        assert_allclose(batched[key], per_point[key], rtol=1e-6)


def test_vcpcrcv_folds_name_step2_columns_as_vcpcr(monkeypatch):
    """The folds' per-point stratified step 2 (lifelines, where the batch
    cannot vouch for a fit) names the covariates and the strata as VCPCR
    does (#25; was ``covariate_1``, ``stratum_1``)."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    from vcpcr._families import Cox

    calls = []
    fit = Cox.fit

    def recording(self, M, outcome, names, yname, strata=None):
        calls.append((names, None if strata is None else list(strata.columns)))
        return fit(self, M, outcome, names, yname, strata)

    monkeypatch.setattr(Cox, "fit", recording)
    _no_batch(monkeypatch)
    cv = _stratified_cv()
    best = cv.best_estimator_
    assert len(calls) == 3 * 2 + 1  # every fold's points, then the refit
    assert list(best.result_.params_.index) == calls[-1][0]
    for names, strata in calls:
        assert names[:2] == best.covariate_names_ == COV
        assert strata == best.strata_names_ == ["center"]


def test_vcpcrcv_bad_strata():
    from sklearn.model_selection import KFold

    from vcpcr import VCPCRCV

    X, y = _stratified()
    with pytest.raises(ValueError, match="strata=\\['center'\\] needs family='cox'"):
        VCPCRCV(3, strata=["center"]).fit(X, y[:, 0])
    with pytest.raises(ValueError, match="strata: 'centre' is not a column"):
        VCPCRCV(3, family="cox", strata=["centre"]).fit(X, y)
    with pytest.raises(ValueError, match="both covariates and strata"):
        VCPCRCV(3, family="cox", covariates=["center"], strata="center").fit(X, y)
    # center 2's only events are in the test part of the first fold
    rows = np.flatnonzero(X["center"].to_numpy() == 2)
    y2 = y.copy()
    y2[rows[rows >= 30], 1] = 0
    y2[rows[rows < 30][:2], 1] = 1
    folds = list(KFold(3).split(X))
    with pytest.raises(
        ValueError,
        match=r"CV fold 0 of 3, training part \(60 rows\): strata: the stratum "
        r"center=2 .* has no event",
    ):
        VCPCRCV(3, family="cox", strata="center", cv=folds).fit(X, y2)


@pytest.mark.parametrize(
    ("params", "match", "constant"),
    [
        ({"covariates": COV}, r"from the covariates \['age', 'sex'\] alone", False),
        ({"strata": ["center"]}, r"constant risk score .*by stratum only", True),
    ],
    ids=["covariates", "strata"],
)
def test_nothing_selected_says_what_the_cox_model_predicts_from(
    params, match, constant
):
    """It said "predicts a constant" also with covariates (#24)."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    X, y = _stratified()
    with pytest.warns(VCPCRWarning, match=match):
        model = VCPCR(
            family="cox", n_clusters=3, n_init=1, lam_ratio=1.0, **params
        ).fit(X, y)
    assert model.n_clusters_ == 0
    assert (np.ptp(model.predict(X)) == 0) == constant


def test_vcpcrcv_separated_cox_folds_use_firth(monkeypatch):
    """A covariate that decreases with the follow-up time orders every risk
    set (each event has the largest value among the rows at risk, within
    every stratum): in every training fold the stratified partial likelihood
    has no finite maximum. The folds'
    step 2 then gets Firth's penalized estimate, in the batch (no lifelines
    fit), counted in ``n_separated_fits_`` and in the one warning; the
    scores are those of finite fits."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    from vcpcr._families import Cox
    from vcpcr.exceptions import SeparationWarning

    X, y = _stratified()
    X["age"] = -np.argsort(np.argsort(y[:, 0])) / len(y)  # minus the time's rank
    per_point = []
    monkeypatch.setattr(Cox, "fit", lambda *a, **k: per_point.append(a))
    cv = _stratified_search(X, y, refit=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # step 0 warns about the covariates too
        cv.fit(X, y)
    assert per_point == []  # every fold fit was the batch's
    total = len(cv.cv_results_) * cv.n_splits_
    assert cv.n_separated_fits_ == total
    assert np.isfinite(cv.cv_results_["mean_test_score"]).all()
    (sep,) = [w for w in caught if issubclass(w.category, SeparationWarning)]
    assert f"in {total} of {total} fold x grid fits" in str(sep.message)


def test_covariates_page_real_cohort_shows_what_it_prints():
    """docs/covariates.md's "A real cohort": the error it pastes, then the
    summary it pastes once the event-free level's rows are dropped."""
    pytest.importorskip("sksurv.datasets")
    from conftest import doc_examples, printed_lines

    page = (Path(__file__).resolve().parents[1] / "docs" / "covariates.md").read_text()
    section = page.split("## A real cohort", 1)[1].split("\n## ", 1)[0]
    (fit_code, error_shown), (print_code, summary_shown) = doc_examples(section)
    setup = fit_code.rsplit("model.fit(frame)", 1)[0]
    assert setup != fit_code  # the first block ends with the failing fit
    run = (
        f"{setup}\ntry:\n    model.fit(frame)\nexcept ValueError as e:\n    print(e)\n"
    )
    message = " ".join(printed_lines(run))
    pasted = " ".join(error_shown.split()).removeprefix("ValueError: ")
    assert pasted.endswith(" ...")
    assert pasted.removesuffix(" ...") in " ".join(message.split())
    printed = printed_lines(setup + print_code)
    for line in summary_shown.splitlines():
        assert line.rstrip() in printed, line


def test_a_numeric_covariate_or_stratum_of_one_value():
    """A constant covariate or stratum is named as such, with why it cannot be
    used (before: X's generic "constant column ... VarianceThreshold" error,
    as for a feature)."""
    X, y = _stratified()
    one = X.assign(center=1.0)
    with pytest.raises(ValueError, match=r"strata= column\(s\) \['center'\] take a"):
        VCPCR(family="cox", strata=["center"]).fit(one, y)
    with pytest.raises(ValueError, match=r"covariates= column\(s\) \['center'\] take"):
        VCPCR(covariates=["center"]).fit(one, y[:, 0])
    # a constant feature keeps X's message
    with pytest.raises(ValueError, match=r"constant column\(s\) \['center'\]"):
        VCPCR().fit(one, y[:, 0])


def test_the_dropped_rows_warning_waits_for_the_checks():
    """An error comes alone, not after a warning about the rows dropped."""
    df = _clinical_frame()
    df.loc[3, "g2"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X = df.drop(columns=["y", "stage"])
        with pytest.raises(ValueError, match="'lam_ratio' parameter"):
            VCPCR(lam_ratio=2.0, missing="drop").fit(X, df["y"])


def test_cv_with_covariates_and_strata_parallel_identical():
    """The folds' columns (the user's order, the fit's ColumnLayout, the names
    of the covariates and strata) reach joblib's worker processes: n_jobs=2
    gives the n_jobs=1 results."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    from sklearn.model_selection import KFold

    from vcpcr import VCPCRCV

    X, y = _stratified()
    X.insert(5, "center", X.pop("center"))  # the stratum among the genes
    cv = VCPCRCV(
        family="cox",
        n_clusters=(2,),
        lam_ratios=[0.3],
        n_init=1,
        cv=KFold(3),
        random_state=0,
        covariates=COV,
        strata=["center"],
    )
    one = clone(cv).fit(X, y)
    two = clone(cv).set_params(n_jobs=2).fit(X, y)
    scores = [f"split{i}_test_score" for i in range(3)]
    assert_array_equal(two.cv_results_[scores], one.cv_results_[scores])
    assert_array_equal(two.coef_, one.coef_)
    assert one.best_estimator_.strata_columns_.tolist() == [5]
