"""Effects per standard deviation in the summary, the signature table, joblib."""

from __future__ import annotations

import re

import joblib
import numpy as np
import pandas as pd
import pytest
from conftest import make_blocks, needs_survival
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone

from vcpcr import VCPCR, VCPCRCV


def _frame(n=120, seed=3):
    X, lin, _, _ = make_blocks(n=n, seed=seed)
    rng = np.random.default_rng(seed + 10)
    data = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    data.insert(0, "age", rng.normal(60, 10, size=n))
    data.insert(1, "er", rng.choice(["neg", "pos"], size=n))
    data.insert(2, "node", rng.integers(0, 2, size=n))
    t = rng.exponential(np.exp(-0.7 * (lin - lin.mean())))
    c = rng.exponential(2 * np.median(t), size=n)
    data["time"], data["event"] = np.minimum(t, c), (t <= c).astype(int)
    return data, lin


def _effects_rows(text):
    lines = text.splitlines()
    start = lines.index("Module effects per standard deviation of the module score")
    rows = {}
    for line in lines[start + 4 :]:
        if line.startswith("-"):
            break
        name, *cells = line.rsplit(maxsplit=4)
        rows[name.strip()] = cells
    return rows


@pytest.fixture(scope="module")
def cox_model():
    data, _ = _frame()
    genes = [c for c in data.columns if c.startswith("g")]
    model = VCPCR(3, family="cox", lam_ratio=0.3, n_init=2, random_state=0)
    model.set_params(covariates=["age"])
    model.fit(data[["age", *genes]], data[["time", "event"]])
    return model, data[["age", *genes]], data


@needs_survival
def test_hazard_ratio_per_sd_against_lifelines_on_standardized_scores(cox_model):
    """HR/SD and its CI = lifelines' exp(coef) on the module scores divided by
    their SD (covariates per unit); the prognostic index's SD and HR."""
    from lifelines import CoxPHFitter

    model, X, data = cox_model
    M = pd.DataFrame(model.transform(X), columns=model.membership_.columns)
    sd = M.std(ddof=1)
    assert_allclose(model.module_sd_, sd, rtol=1e-10, atol=0)
    frame = (M / sd).assign(age=X["age"].to_numpy(), time=data.time, event=data.event)
    ref = CoxPHFitter().fit(frame, "time", "event")
    rows = _effects_rows(model.summary().as_text())
    for name in M.columns:
        shown = np.array(rows[name], dtype=float)
        assert_allclose(shown[0], sd[name], rtol=1e-3, atol=1e-4)
        assert_allclose(shown[1], np.exp(ref.params_[name]), rtol=1e-3, atol=1e-4)
        ci = np.exp(ref.confidence_intervals_.loc[name].to_numpy())
        assert_allclose(shown[2:], ci, rtol=1e-3, atol=1e-4)
    index = M.to_numpy() @ model.cluster_coef_.to_numpy()
    assert_allclose(model.prognostic_index_sd_, index.std(ddof=1), rtol=1e-10)
    pi = rows["prognostic index"]
    assert_allclose(float(pi[1]), np.exp(index.std(ddof=1)), rtol=1e-3)
    assert pi[2:] == ["-", "-"]


@needs_survival
def test_a_shrunk_model_s_effects_are_on_the_predictions_scale(cox_model):
    """With ``shrinkage`` every row of the effects table, the signature and
    the prognostic index are the shrunk model's (before, the module rows
    were the unshrunk fit's, the index row the shrunk one's)."""
    model, X, data = cox_model
    s = 0.5
    shrunk = VCPCR(**(model.get_params() | {"shrinkage": s})).fit(
        X, data[["time", "event"]]
    )
    rows = _effects_rows(shrunk.summary().as_text())
    unshrunk = _effects_rows(model.summary().as_text())
    effect = shrunk.signature().groupby("module")["module_effect_per_sd"].first()
    for name in shrunk.membership_.columns:
        hr, low, high = (float(v) for v in rows[name][1:])
        assert_allclose(hr, effect[name], rtol=1e-3)
        # the unshrunk HR, its interval, to the power s
        ref = np.array(unshrunk[name][1:], dtype=float) ** s
        assert_allclose([hr, low, high], ref, rtol=2e-3)
    eta = (
        shrunk.predict_log_partial_hazard(X) - X["age"] * shrunk.covariate_coef_["age"]
    )
    pi = float(rows["prognostic index"][1])
    assert_allclose(pi, np.exp(np.std(eta, ddof=1)), rtol=1e-3)
    assert "times shrinkage=0.5" in " ".join(shrunk.summary().as_text().split())


def _assert_effects_frame_matches_summary(model):
    """summary2's effects table (a DataFrame) shows summary()'s numbers."""
    smry = model.summary2()
    assert len(smry.tables) == 4  # header, coefficients, effects, composition
    effects = smry.tables[2]
    assert isinstance(effects, pd.DataFrame)
    best = getattr(model, "best_estimator_", model)
    modules = list(best.membership_.columns)
    assert list(effects.index) == [*modules, "prognostic index"]
    assert_allclose(effects["SD"].iloc[:-1], best.module_sd_[modules], rtol=1e-15)
    assert effects["SD"].iloc[-1] == best.prognostic_index_sd_
    rows = _effects_rows(model.summary().as_text())
    for name, row in effects.iterrows():
        shown = [f"{v:.4f}" if np.isfinite(v) else "-" for v in row]
        assert shown == rows[name]
    text = " ".join(str(smry).split())
    assert "Effects per standard deviation (SD) of each module score" in text


@needs_survival
def test_summary2_has_the_effects_per_sd_of_summary(cox_model):
    _assert_effects_frame_matches_summary(cox_model[0])
    data, _ = _frame(n=90)
    genes = [c for c in data.columns if c.startswith("g")]
    cv = VCPCRCV(
        (2,), family="cox", lam_ratios=[0.3], deltas=[0.5], n_init=2, cv=3
    ).set_params(random_state=0, covariates=["age"])
    cv.fit(data[["age", *genes]], data[["time", "event"]])
    _assert_effects_frame_matches_summary(cv)
    assert "Tuning:" in str(cv.summary2())


@needs_survival
def test_summary_leaves_the_step2_fit_untouched(cox_model):
    model, _, _ = cox_model
    before = model.result_.params_.copy()
    text = model.summary().as_text()
    pd.testing.assert_series_equal(model.result_.params_, before)
    assert "hazard ratio per SD" in " ".join(text.split())
    assert "Covariates stay per unit of each" in " ".join(text.split())


def test_gaussian_coefficient_per_sd_against_statsmodels():
    """coef/SD = OLS coefficients on the standardized module scores."""
    import statsmodels.api as sm

    data, lin = _frame(seed=5)
    X = data[[c for c in data.columns if c.startswith("g")]]
    model = VCPCR(3, lam_ratio=0.3, n_init=2, random_state=0).fit(X, lin)
    M = pd.DataFrame(model.transform(X), columns=model.membership_.columns)
    ref = sm.OLS(lin, sm.add_constant(M / M.std(ddof=1))).fit()
    rows = _effects_rows(model.summary().as_text())
    for name in M.columns:
        assert_allclose(float(rows[name][1]), ref.params[name], rtol=1e-3, atol=1e-4)
    table = model.signature()
    effect = table.groupby("module")["module_effect_per_sd"].first()
    assert_allclose(effect[M.columns], ref.params[M.columns], rtol=1e-8, atol=1e-12)


@needs_survival
def test_signature_table(cox_model, tmp_path):
    """One row per selected gene: V entry, module effect per SD, coef_; CSV."""
    from lifelines import CoxPHFitter

    model, X, data = cox_model
    table = model.signature()
    selected = model.membership_.index[model.labels_ >= 0]
    assert sorted(table.gene) == sorted(selected)
    for row in table.itertuples():
        assert row.membership == model.membership_.at[row.gene, row.module]
        j = list(X.columns).index(row.gene)
        assert row.coef == model.coef_[j]
    M = pd.DataFrame(model.transform(X), columns=model.membership_.columns)
    frame = (M / M.std(ddof=1)).assign(
        age=X["age"].to_numpy(), time=data.time, event=data.event
    )
    ref = np.exp(CoxPHFitter().fit(frame, "time", "event").params_)
    effect = table.groupby("module")["module_effect_per_sd"].first()
    # two lifelines fits, each to its own stopping rule
    assert_allclose(effect[M.columns], ref[M.columns], rtol=1e-4, atol=0)
    table.to_csv(tmp_path / "signature.csv", index=False)
    back = pd.read_csv(tmp_path / "signature.csv")
    pd.testing.assert_frame_equal(back, table, check_exact=False, rtol=1e-12)


def test_signature_keeps_the_signs_of_the_signed_default():
    """With ``latent="signed"`` a gene anti-correlated with its module enters
    its score negatively: the signature's membership is the summary's signed
    degree (``loadings_``), and its sign times the module's coefficient is
    the sign of the gene's coefficient (``coef_ = L a`` rescaled). Before
    #48 the signature showed ``membership_``, never negative."""
    rng = np.random.default_rng(7)
    z = rng.normal(size=(100, 2))
    up = z[:, [0]] + 0.4 * rng.normal(size=(100, 4))
    down = -z[:, [0]] + 0.4 * rng.normal(size=(100, 3))
    other = z[:, [1]] + 0.4 * rng.normal(size=(100, 4))
    X = pd.DataFrame(
        np.hstack([up, down, other, rng.normal(size=(100, 10))]),
        columns=[f"g{j}" for j in range(21)],
    )
    y = z[:, 0] + 0.5 * z[:, 1] + 0.5 * rng.normal(size=100)
    model = VCPCR(2, latent="signed", lam_ratio=0.3, n_init=3, random_state=0)
    model.fit(X, y)
    table = model.signature().set_index("gene")
    negative = table.index[table.membership < 0]
    assert set(negative) == {"g4", "g5", "g6"}  # the anti-correlated genes
    for gene, row in table.iterrows():
        assert row.membership == model.loadings_.at[gene, row.module]
        assert abs(row.membership) == model.membership_.at[gene, row.module]
        sign = np.sign(row.membership) * np.sign(model.cluster_coef_[row.module])
        assert np.sign(row.coef) == sign
    composition = model.summary().as_text().split("Cluster composition")[1]
    shown = re.findall(r"(g\d+) \((-?[0-9.]+)\)", composition)
    assert any(float(degree) < 0 for _, degree in shown)
    for gene, degree in shown:  # the summary's top members, 3 significant digits
        assert_allclose(float(degree), table.membership[gene], rtol=1e-3, atol=0)


@needs_survival
def test_the_summarys_concordance_has_its_bootstrap_interval(cox_model):
    """The header's C is lifelines' (the fit's own ranking without shrinkage)
    and is printed with its 95 % bootstrap interval: concordance_interval of
    the training rows' predictions (#48: an interval wherever a C is
    printed)."""
    from vcpcr.metrics import concordance_interval

    model, X, data = cox_model
    header = model.summary().tables[0].as_text()
    ci = concordance_interval(
        data[["time", "event"]].to_numpy(), model.predict_log_partial_hazard(X)
    )
    assert ci.estimate == pytest.approx(model.concordance_index_, abs=1e-12)
    shown = re.search(r"Concordance: +([0-9.]+)", header).group(1)
    assert shown == f"{ci.estimate:.4f}"
    assert f"Concordance 95% CI:     [{ci.low:.3f}, {ci.high:.3f}]" in header
    assert ci.low < ci.estimate < ci.high
    stratified = clone(model).set_params(strata=["node"])
    stratified.fit(data[["age", "node", *X.columns[1:]]], data[["time", "event"]])
    header = stratified.summary().tables[0].as_text()
    # the within-strata C (lifelines'), now with its interval (#48 item 5)
    assert f"{stratified.concordance_index_:.4f}" in header
    ci = concordance_interval(
        data[["time", "event"]].to_numpy(),
        stratified.predict_log_partial_hazard(data[["age", "node", *X.columns[1:]]]),
        strata=data["node"],
    )
    assert ci.estimate == pytest.approx(stratified.concordance_index_, abs=1e-12)
    assert f"Concordance 95% CI:     [{ci.low:.3f}, {ci.high:.3f}]" in header
    assert_array_equal(stratified.train_strata_, data["node"].to_numpy())


@needs_survival
def test_vcpcrcv_signature_is_best_estimators():
    data, _ = _frame(n=90)
    genes = [c for c in data.columns if c.startswith("g")]
    cv = VCPCRCV(
        (2,),
        family="cox",
        lam_ratios=[0.3],
        deltas=[0.5],
        n_init=2,
        cv=3,
        random_state=0,
    )
    cv.fit(data[genes], data[["time", "event"]])
    pd.testing.assert_frame_equal(cv.signature(), cv.best_estimator_.signature())


@needs_survival
def test_joblib_round_trip_with_formula_covariates_and_strata(tmp_path):
    """A fitted model (formula, covariates, strata) predicts the same after load."""
    data, _ = _frame()
    model = VCPCR(
        3,
        family="cox",
        formula="Surv(time, event) ~ age + C(er) | . - node",
        strata=["node"],
        lam_ratio=0.3,
        n_init=2,
        random_state=0,
    ).fit(data)
    assert model.covariate_names_
    assert model.strata_names_
    path = tmp_path / "model.joblib"
    joblib.dump(model, path)
    loaded = joblib.load(path)
    new = data.iloc[:25]
    assert_array_equal(loaded.predict(new), model.predict(new))
    times = np.quantile(data.time, [0.25, 0.5])
    assert_array_equal(
        loaded.predict_survival_function(new, return_array=True, times=times),
        model.predict_survival_function(new, return_array=True, times=times),
    )
    pd.testing.assert_frame_equal(loaded.signature(), model.signature())
    assert loaded.summary().as_text() == model.summary().as_text()


def test_reports_refuse_parameters_changed_after_fit():
    """set_params after fit leaves the fitted model as it was: summary,
    signature and get_prediction refuse to report it under the new
    parameters (before: the summary showed another shrinkage and lam_ratio
    beside the old predictions); a refit, or setting them back, clears it."""
    X, lin, _, _ = make_blocks(n=80, seed=2)
    model = VCPCR(3, lam_ratio=0.3, n_init=2, random_state=0).fit(X, lin)
    text = model.summary().as_text()
    model.set_params(shrinkage=0.5, lam_ratio=0.9)
    for report in (model.summary, model.summary2, model.signature):
        with pytest.raises(
            ValueError, match=r"lam_ratio=0.3 -> 0.9, shrinkage=1.0 -> 0.5 after fit"
        ):
            report()
    with pytest.raises(ValueError, match="set_params changed"):
        model.get_prediction(X)
    model.set_params(shrinkage=1.0, lam_ratio=0.3)
    assert model.summary().as_text() == text
    model.set_params(lam_ratio=0.9).fit(X, lin)
    assert "0.9000" in model.summary().as_text()
