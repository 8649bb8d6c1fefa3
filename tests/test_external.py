"""A fitted model on an external cohort (vcpcr.external)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import make_blocks, needs_survival
from numpy.testing import assert_allclose

from vcpcr import VCPCR
from vcpcr.external import align_cohort, validate_external

pytestmark = needs_survival


def _cohort(n, seed, shift=0.0):
    X, lin, _, _ = make_blocks(n=n, seed=seed)
    rng = np.random.default_rng(seed + 10)
    genes = pd.DataFrame(X + shift, columns=[f"g{j}" for j in range(X.shape[1])])
    genes.insert(0, "age", rng.normal(60, 10, size=n))
    t = rng.exponential(np.exp(-0.7 * (lin - lin.mean())))
    c = rng.exponential(2 * np.median(t), size=n)
    return genes, np.column_stack([np.minimum(t, c), (t <= c).astype(float)])


@pytest.fixture(scope="module")
def fitted():
    X, y = _cohort(150, 3)
    model = VCPCR(3, family="cox", lam_ratio=0.3, n_init=2, random_state=0)
    model.set_params(covariates=["age"])
    return model.fit(X, y), X, y


def test_same_cohort_reproduces_the_model(fitted):
    """Training standardization on the training data: the model's predictions;
    the refitted Breslow baseline equals lifelines' baseline_cumulative_hazard_."""
    model, X, y = fitted
    h = float(np.median(y[:, 0]))
    shuffled = X[X.columns[::-1]]
    cohort = align_cohort(model, shuffled)
    assert_allclose(model.predict(cohort.X), model.predict(X), rtol=1e-12)
    res = validate_external(model, shuffled, y, horizon=h, recalibrate_baseline=True)
    base = model.result_.baseline_cumulative_hazard_
    ref = base[base.index <= h].iloc[-1, 0]
    assert_allclose(res.baseline_hazard, ref, rtol=1e-10)
    assert_allclose(
        res.recalibrated.predicted, res.calibration.predicted, rtol=1e-9, atol=1e-12
    )
    from lifelines.utils import concordance_index

    eta = model.predict_log_partial_hazard(X)
    assert_allclose(
        res.concordance, concordance_index(y[:, 0], -eta, y[:, 1]), rtol=1e-12
    )
    # its bootstrap interval, in the summary's notes (#48)
    draws = np.random.default_rng(0).integers(0, len(y), size=(1000, len(y)))
    reps = [concordance_index(y[d, 0], -eta[d], y[d, 1]) for d in draws[:1000]]
    low, high = np.quantile(reps, [0.025, 0.975])
    ci = res.concordance_interval
    assert_allclose([ci.low, ci.high], [low, high], rtol=1e-12, atol=1e-12)
    note = (
        f"Harrell's C of the linear predictor: {res.concordance:.4f}, 95% "
        f"bootstrap interval [{low:.4f}, {high:.4f}] (1000 resamples"
    )
    assert note in " ".join(str(res.summary()).split())


def test_external_standardization_removes_a_platform_shift(fitted):
    """A cohort shifted by +3 on every gene: external standardization predicts
    as the unshifted data standardized by its own means and SDs."""
    model, _, _ = fitted
    X2, _ = _cohort(120, 7)
    shifted = X2.copy()
    genes = [c for c in X2.columns if c.startswith("g")]
    shifted[genes] = shifted[genes] * 2.0 + 3.0
    a = align_cohort(model, shifted, standardize="external").X
    b = align_cohort(model, X2, standardize="external").X
    assert_allclose(model.predict(a), model.predict(b), rtol=1e-10)
    sel = model.membership_.index[model.labels_ >= 0]
    Xs = (X2[sel] - X2[sel].mean()) / X2[sel].std(ddof=1)
    M = Xs.to_numpy() @ model.membership_.loc[sel].to_numpy()
    assert_allclose(model.transform(b), M, rtol=1e-10, atol=1e-12)


def test_external_standardization_needs_rows_and_varying_genes(fitted):
    """One row, or a selected gene constant in the cohort, gave a prognostic
    index of 0 for everyone (z set to 0), silently."""
    model, _, _ = fitted
    X2, _ = _cohort(40, 8)
    with pytest.raises(ValueError, match="needs at least 2 rows; X has 1"):
        align_cohort(model, X2.iloc[:1], standardize="external")
    gene = str(model.membership_.index[model.labels_ >= 0][0])
    flat = X2.assign(**{gene: 1.0})
    with pytest.raises(ValueError, match=rf"\['{gene}'\] take one value"):
        align_cohort(model, flat, standardize="external")
    align_cohort(model, flat)  # the training standardization reads it


def test_missing_genes_raise_with_the_share_then_drop(fitted):
    model, X, _ = fitted
    sel = list(model.membership_.index[model.labels_ >= 0])
    gone = sel[:2]
    V = model.membership_
    module = V.loc[gone[0]].idxmax()
    members = list(model.clusters_[module])
    share = V.loc[[g for g in gone if g in members], module].sum()
    share /= V.loc[members, module].sum()
    with pytest.raises(ValueError, match=rf"lacks 2 of the {len(sel)} selected") as err:
        align_cohort(model, X.drop(columns=gone))
    assert f"{module} {100 * share:.1f}%" in str(err.value)
    cohort = align_cohort(model, X.drop(columns=gone), missing_genes="drop")
    assert cohort.missing_genes == gone
    assert_allclose(cohort.modules.loc[module, "missing_weight"], share, rtol=1e-12)
    # a missing gene contributes 0: its module score loses V_jk z_j
    Xz = X.copy()
    j = list(V.index).index(gone[0])
    Xz[gone] = model.mean_[[j, list(V.index).index(gone[1])]]
    assert_allclose(model.predict(cohort.X), model.predict(Xz), rtol=1e-12)


def test_errors(fitted):
    model, X, y = fitted
    sel = model.membership_.index[model.labels_ >= 0][0]
    dup = pd.concat([X, X[[sel]]], axis=1)
    with pytest.raises(ValueError, match="in more than one column"):
        align_cohort(model, dup)
    with pytest.raises(ValueError, match=r"covariate or strata column\(s\) \['age'\]"):
        align_cohort(model, X.drop(columns="age"))
    with pytest.raises(TypeError, match="pandas DataFrame"):
        align_cohort(model, X.to_numpy())
    with pytest.raises(ValueError, match="'standardize' parameter"):
        align_cohort(model, X, standardize="cohort")
    with pytest.raises(ValueError, match="requires a horizon"):
        validate_external(model, X, y)


@pytest.mark.parametrize("value", [np.inf, -np.inf])
@pytest.mark.parametrize("standardize", ["training", "external"])
def test_align_cohort_refuses_an_infinite_selected_gene(fitted, value, standardize):
    """An infinite expression value was accepted without a word (#46 fuzz)."""
    model, X, _ = fitted
    sel = model.membership_.index[model.labels_ >= 0][0]
    bad = X.copy()
    bad.loc[bad.index[3], sel] = value
    with pytest.raises(ValueError, match=f"Selected gene '{sel}' contains infinity"):
        align_cohort(model, bad, standardize=standardize)


def test_summary_shows_report_and_recalibration(fitted):
    model, _, _ = fitted
    X2, y2 = _cohort(120, 11)
    res = validate_external(
        model, X2, y2, horizon=float(np.median(y2[:, 0])), recalibrate_baseline=True
    )
    text = res.summary().as_text()
    for word in ("missing from the external", "Harrell's C", "refitted", "ICI:"):
        assert word in " ".join(text.split())
    assert res.recalibrated is not None


@pytest.mark.parametrize("formula", [False, True], ids=["covariates=", "formula"])
def test_string_covariate_and_stratum(formula):
    """A string covariate (er: "neg"/"pos", encoded er[T.pos]) and a string
    stratum (site): the cohort is given with the raw training columns and
    predicts as the model predicts on them, before and after shuffling."""
    X, y = _cohort(150, 3)
    rng = np.random.default_rng(5)
    X.insert(1, "er", rng.choice(["neg", "pos"], size=len(X)))
    X.insert(2, "site", rng.choice(["a", "b"], size=len(X)))
    model = VCPCR(3, family="cox", lam_ratio=0.3, n_init=2, random_state=0)
    if formula:
        X["time"], X["event"] = y[:, 0], y[:, 1]
        model.set_params(formula="Surv(time, event) ~ age + er | .", strata="site")
        model.fit(X)
        y = None
    else:
        model.set_params(covariates=["age", "er"], strata="site").fit(X, y)
    assert "er[T.pos]" in model.covariate_names_
    shuffled = X[X.columns[::-1]]
    cohort = align_cohort(model, shuffled)
    assert_allclose(model.predict(cohort.X), model.predict(X), rtol=1e-12)
    h = float(np.median(X["time"] if formula else y[:, 0]))
    res = validate_external(model, shuffled, y, horizon=h, recalibrate_baseline=True)
    assert set(res.baseline_hazard) == {"0.0", "1.0"}
    assert_allclose(
        res.recalibrated.predicted, res.calibration.predicted, rtol=1e-9, atol=1e-12
    )
    with pytest.raises(ValueError, match=r"covariate or strata column\(s\) \['er'\]"):
        align_cohort(model, X.drop(columns="er"))


@pytest.mark.parametrize("family", ["cox", "binomial"])
def test_a_formula_model_validates_as_the_same_model_with_covariates(family):
    """#48 item 3: validate_external of a model fitted with a formula (its
    outcome read from the cohort) equals that of the same model written with
    covariates= (and strata=, cox), on the same seed: the same calibration,
    concordance and printed summary."""
    X, y = _cohort(150, 3)
    X2, y2 = _cohort(120, 11)
    rng = np.random.default_rng(2)
    for frame in (X, X2):
        frame.insert(1, "site", rng.choice(["a", "b"], size=len(frame)))
    params = {"n_clusters": 3, "family": family, "lam_ratio": 0.3, "n_init": 2}
    if family == "cox":
        columns = {"covariates": ["age"], "strata": "site"}
        formula = "Surv(time, event) ~ age + strata(site) | ."
        outcome = {"time": y[:, 0], "event": y[:, 1]}
        outcome2 = {"time": y2[:, 0], "event": y2[:, 1]}
        kw = {"horizon": float(np.median(y[:, 0])), "recalibrate_baseline": True}
    else:  # an early event as the binary outcome
        cut = np.median(y[:, 0])
        y, y2 = (y[:, 0] < cut) * 1.0, (y2[:, 0] < cut) * 1.0
        columns = {"covariates": ["age", "site"]}
        formula = "dead ~ age + site | ."
        outcome, outcome2, kw = {"dead": y}, {"dead": y2}, {}
    by_columns = VCPCR(**params, **columns, random_state=0).fit(X, y)
    by_formula = VCPCR(**params, formula=formula, random_state=0)
    by_formula.fit(X.assign(**outcome))
    a = validate_external(by_columns, X2, y2, **kw)
    b = validate_external(by_formula, X2.assign(**outcome2), **kw)
    assert_allclose(b.calibration.predicted, a.calibration.predicted, rtol=1e-10)
    assert b.concordance == a.concordance
    assert b.summary().as_text() == a.summary().as_text()


def test_breslow_baseline_of_a_diverged_fit_stays_finite_where_it_can():
    """A separated Cox fit's linear predictors span more than exp's range:
    the risk sets are summed in log space, so no late one underflows to 0
    (numpy's divide warnings leaked from a stability resample of gse1992)."""
    from vcpcr._survival import breslow_baseline

    time = np.array([1.0, 2.0, 3.0, 4.0])
    event = np.array([1.0, 1.0, 1.0, 0.0])
    for shift in (0.0, -800.0):  # the same hazards, up to the scale exp(shift)
        eta = np.array([0.0, -30.0, -30.0, -30.0]) + np.array([0.0, 1, 1, 1]) * shift
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            base = breslow_baseline(eta, time, event).iloc[:, 0].to_numpy()
        if shift == 0.0:
            risk = np.exp(eta)
            steps = [1 / risk.sum(), 1 / risk[1:].sum(), 1 / risk[2:].sum(), 0.0]
            assert_allclose(base, np.cumsum(steps), rtol=1e-12)  # none at 4
        else:  # exp(830) overflows: inf, without a warning, after a finite first step
            assert base[0] == pytest.approx(1.0)
            assert np.all(np.isinf(base[1:]))


def test_a_model_without_genes_has_no_calibration_to_validate():
    """A model that selected nothing predicts one survival: validate_external
    printed a meaningless slope for it (#46 row 4); now it says so."""
    X, y = _cohort(80, 5)
    X = X.drop(columns="age")
    empty = VCPCR(2, family="cox", lam_ratio=1.0, n_init=1, random_state=0)
    with pytest.warns(UserWarning, match="No feature was selected"):
        empty.fit(X, y)
    with pytest.raises(ValueError, match="same survival for every sample"):
        validate_external(empty, X, y, horizon=float(np.median(y[:, 0])))
