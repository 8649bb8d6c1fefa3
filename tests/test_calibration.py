"""Calibration (vcpcr.calibration) against lifelines, statsmodels and by hand."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from conftest import make_blocks, needs_survival
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

import vcpcr
from vcpcr import VCPCR, VCPCRWarning
from vcpcr.calibration import (
    CalibrationResult,
    binary_calibration,
    cross_val_calibration,
    cross_val_predict_survival,
    kaplan_meier,
    regression_calibration,
    survival_calibration,
)

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def rossi_fit():
    """lifelines' Cox model of its rossi data and its survival at 3 horizons."""
    from lifelines import CoxPHFitter
    from lifelines.datasets import load_rossi

    rossi = load_rossi()
    cph = CoxPHFitter().fit(rossi, "week", "arrest")
    return cph, rossi


def _lifelines_calibration(cph, df, t0):
    import matplotlib.pyplot as plt
    from lifelines.calibration import survival_probability_calibration

    fig, ax = plt.subplots()
    with warnings.catch_warnings(), np.errstate(divide="ignore"):
        warnings.simplefilter("ignore")  # lifelines prints and warns
        _, ici, e50 = survival_probability_calibration(cph, df, t0=t0, ax=ax)
    plt.close(fig)
    return ici, e50


@needs_survival
@pytest.mark.parametrize("t0", [10, 25, 40], ids=["t10", "t25", "t40"])
def test_ici_e50_against_lifelines_survival_probability_calibration(
    rossi_fit, t0, capsys
):
    """ICI and E50 equal lifelines' on the same fitted lifelines model.

    lifelines' SLSQP stops at a penalized objective up to 5e-6 above ours
    (its default ``ftol``; the next test fits lifelines' smoother to a tight
    tolerance and matches ours to 3e-5), so the indices agree to 5e-5
    absolute, the 4th decimal (measured: 3.2e-5 at most, at t0=10).
    """
    cph, rossi = rossi_fit
    ici, e50 = _lifelines_calibration(cph, rossi, t0)
    capsys.readouterr()
    surv = cph.predict_survival_function(rossi, times=[t0]).T.squeeze().to_numpy()
    result = survival_calibration(rossi[["week", "arrest"]], surv, t0)
    assert not any("nested Weibull" in note for note in result.notes)
    assert_allclose(result.ici, ici, rtol=0, atol=5e-5)
    assert_allclose(result.e50, e50, rtol=0, atol=5e-5)


@needs_survival
def test_smoother_against_lifelines_crc_spline_fitter_converged(rossi_fit):
    """The smoothed risks equal lifelines' CRCSplineFitter fitted to tight tolerance.

    Same data frame, regressors and penalizer as lifelines' calibration; our
    optimum's penalized objective is not above lifelines'.
    """
    from lifelines import CRCSplineFitter

    from vcpcr._smoothers import _objective, cloglog, survival_smoother

    cph, rossi = rossi_fit
    t0 = 25
    risk = 1 - cph.predict_survival_function(rossi, times=[t0]).T.squeeze().to_numpy()
    frame = pd.DataFrame(
        {"c": cloglog(risk), "week": rossi.week, "arrest": rossi.arrest}
    )
    crc = CRCSplineFitter(n_baseline_knots=3, penalizer=1e-6)
    regressors = {"beta_": ["c"], "gamma0_": "1", "gamma1_": "1", "gamma2_": "1"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        crc.fit_right_censoring(
            frame,
            "week",
            "arrest",
            regressors=regressors,
            fit_options={"ftol": 1e-14, "maxiter": 10000},
        )
    theirs = 1 - crc.predict_survival_function(frame, times=[t0]).T.squeeze().to_numpy()
    fit = survival_smoother(
        cloglog(risk), rossi.week.to_numpy(float), rossi.arrest.to_numpy(bool)
    )
    assert_allclose(fit.knots, crc.knots, rtol=1e-12, atol=0)
    assert_allclose(fit.risk(cloglog(risk), t0), theirs, rtol=0, atol=3e-5)
    sd = np.std(cloglog(risk), ddof=1)
    args = (
        cloglog(risk) / sd,
        np.log(rossi.week.to_numpy(float)),
        rossi.arrest.to_numpy(float),
        fit.knots,
    )
    ours, lifelines_params = fit.params.copy(), crc.params_.to_numpy().copy()
    ours[0] *= sd
    lifelines_params[0] *= sd
    assert _objective(ours, *args)[0] <= _objective(lifelines_params, *args)[0] + 1e-12


def test_smoother_gradient():
    """The hand-written gradient of the smoother's objective (check_grad)."""
    from scipy.optimize import check_grad

    from vcpcr._smoothers import _objective

    rng = np.random.default_rng(0)
    n = 200
    x = rng.normal(size=n)
    t = rng.exponential(np.exp(-x)) + 0.01
    e = (rng.uniform(size=n) < 0.7).astype(float)
    knots = np.percentile(np.log(t[e > 0]), [5, 50, 95])
    args = (x, np.log(t), e, knots)
    # hazards positive at every sample (no kink of the 1e-20 floor nearby)
    for theta in ([0.3, 0.2, -0.5, 1.2, 0.01], [-0.7, 1.0, 0.4, 0.9, -0.3]):
        theta = np.array(theta)
        err = check_grad(
            lambda v: _objective(v, *args)[0],
            lambda v: _objective(v, *args)[1],
            theta,
        )
        assert err < 1e-6 * np.linalg.norm(_objective(theta, *args)[1])


@needs_survival
@pytest.mark.parametrize("h", [5.0, 20.0, 40.0], ids=["h5", "h20", "h40"])
def test_kaplan_meier_against_lifelines(rossi_fit, h):
    """Estimate and log-log interval at a horizon equal lifelines' KaplanMeierFitter."""
    from lifelines import KaplanMeierFitter

    _, rossi = rossi_fit
    sub = rossi.iloc[:120]
    km = KaplanMeierFitter().fit(sub.week, sub.arrest)
    s, lo, hi = kaplan_meier(sub.week, sub.arrest, h)
    assert_allclose(s, km.survival_function_at_times(h).iloc[0], rtol=1e-12, atol=0)
    ci = km.confidence_interval_survival_function_
    row = ci[ci.index <= h].iloc[-1]
    assert_allclose([lo, hi], row.to_numpy(), rtol=1e-10, atol=0)


@needs_survival
def test_cox_slope_and_groups_against_lifelines(rossi_fit):
    """Slope (and CI) = lifelines' Cox of the outcome on cloglog(risk); groups' KM."""
    from lifelines import CoxPHFitter, KaplanMeierFitter

    cph, rossi = rossi_fit
    t0 = 30
    surv = cph.predict_survival_function(rossi, times=[t0]).T.squeeze().to_numpy()
    shrunk = surv**2.0  # predictions too extreme: the slope falls below 1
    result = survival_calibration(rossi[["week", "arrest"]], shrunk, t0, n_groups=4)
    frame = pd.DataFrame(
        {"x": np.log(-np.log(shrunk)), "week": rossi.week, "e": rossi.arrest}
    )
    ref = CoxPHFitter().fit(frame, "week", "e")
    # lifelines stops its Newton steps earlier (1.6e-6 away); ours at 1e-10
    assert_allclose(result.slope, ref.params_["x"], rtol=1e-5, atol=0)
    assert_allclose(
        result.slope_ci, ref.confidence_intervals_.iloc[0].to_numpy(), rtol=1e-5, atol=0
    )
    risk = 1 - shrunk
    order = np.argsort(risk, kind="stable")
    for g, idx in enumerate(np.array_split(order, 4)):
        km = KaplanMeierFitter().fit(rossi.week.iloc[idx], rossi.arrest.iloc[idx])
        observed = 1 - km.survival_function_at_times(t0).iloc[0]
        assert_allclose(result.groups["observed"][g], observed, rtol=1e-12, atol=0)
        assert_allclose(result.groups["predicted"][g], risk[idx].mean(), rtol=1e-12)
    km = KaplanMeierFitter().fit(rossi.week, rossi.arrest)
    oe = (1 - km.survival_function_at_times(t0).iloc[0]) / risk.mean()
    assert_allclose(result.observed_expected, oe, rtol=1e-12, atol=0)
    assert result.observed_expected < 1  # survival squared over-predicts risk


def test_well_calibrated_survival_is_recognised():
    """True survival probabilities: slope near 1, O/E near 1, small ICI."""
    rng = np.random.default_rng(1)
    n = 2000
    lp = rng.normal(size=n)
    t = rng.exponential(1 / (0.1 * np.exp(lp)))
    c = rng.uniform(0, 15, size=n)
    y = np.column_stack([np.minimum(t, c), t <= c])
    h = 5.0
    good = survival_calibration(y, np.exp(-0.1 * h * np.exp(lp)), h)
    bad = survival_calibration(y, np.exp(-0.1 * h * np.exp(2 * lp)), h)
    assert abs(good.slope - 1) < 0.1
    assert abs(good.observed_expected - 1) < 0.1
    assert good.ici < 0.02
    assert abs(bad.slope - 0.5) < 0.1
    assert bad.ici > 2 * good.ici
    assert good.e50 <= good.e90


def test_binary_slopes_against_statsmodels():
    """Slope = Logit on logit(p); intercept = GLM with offset; Wald CIs."""
    import statsmodels.api as sm

    rng = np.random.default_rng(2)
    n = 400
    p = rng.uniform(0.05, 0.95, size=n)
    logit = np.log(p / (1 - p))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.3 + 0.6 * logit)))).astype(int)
    result = binary_calibration(y, p)
    ref = sm.Logit(y, sm.add_constant(logit)).fit(disp=0)
    assert_allclose(result.slope, ref.params[1], rtol=1e-8, atol=0)
    assert_allclose(result.slope_ci, ref.conf_int()[1], rtol=1e-6, atol=0)
    glm = sm.GLM(y, np.ones((n, 1)), family=sm.families.Binomial(), offset=logit).fit()
    assert_allclose(result.intercept, glm.params[0], rtol=1e-8, atol=1e-12)
    assert_allclose(result.intercept_ci, glm.conf_int()[0], rtol=1e-6, atol=1e-10)
    freq = [y[idx].mean() for idx in np.array_split(np.argsort(p, kind="stable"), 10)]
    assert_allclose(result.groups["observed"], freq, rtol=1e-12, atol=0)


def test_binary_ici_grows_with_miscalibration():
    """ICI of true probabilities is small; of distorted ones, larger."""
    rng = np.random.default_rng(3)
    n = 1500
    p = rng.uniform(0.05, 0.95, size=n)
    y = rng.uniform(size=n) < p
    good = binary_calibration(y, p)
    bad = binary_calibration(y, p**2)
    assert good.ici < 0.03
    assert bad.ici > 0.1
    assert bad.e90 >= bad.e50


def test_regression_against_statsmodels_ols():
    """Slope and intercept with their t intervals = statsmodels OLS of y on pred."""
    import statsmodels.api as sm

    rng = np.random.default_rng(4)
    pred = rng.normal(size=80)
    y = 0.5 + 0.8 * pred + rng.normal(scale=0.5, size=80)
    result = regression_calibration(y, pred, n_groups=4)
    ref = sm.OLS(y, sm.add_constant(pred)).fit()
    assert_allclose([result.intercept, result.slope], ref.params, rtol=1e-10, atol=0)
    ci = ref.conf_int()
    assert_allclose(result.slope_ci, ci[1], rtol=1e-10, atol=0)
    assert_allclose(result.intercept_ci, ci[0], rtol=1e-10, atol=0)
    assert result.ici is None


def _floor_data(seed=0, n=120, n_floor=48):
    """An overfitted model's predictions: 48 of 120 risks at lifelines' 1e-10 floor.

    Follow-up in whole months up to 120 (as gse1992's), horizon 10, 50
    events; the rest of the risks are the true ones.
    """
    rng = np.random.default_rng(seed)
    lp = rng.normal(size=n)
    t = rng.exponential(100 / np.exp(lp))
    c = rng.uniform(1, 120, size=n)
    y = np.column_stack([np.ceil(np.minimum(t, c)), t <= c])
    risk = -np.expm1(-10 / 100 * np.exp(lp))
    risk[np.argsort(lp)[:n_floor]] = 1e-10
    return y, risk


@needs_survival
def test_smoother_with_many_predictions_at_the_floor():
    """The smoother does not stop on the hazard floor's plateau (gse1992's failure).

    From lifelines' start ``(0, 0, 0, 2, 0)``, this fit (ours, and lifelines'
    own ``CRCSplineFitter`` as ``survival_probability_calibration`` calls it)
    ends with events' hazards at the 1e-20 floor and a smoothed risk below
    1e-6 for every sample. Ours rejects such a fit and refits from the
    nested Weibull model's optimum, where lifelines' ``CRCSplineFitter``
    started there (its ``initial_point``, on its scaled columns) reaches
    the same smoothed risks; where our fit from lifelines' start leaves the
    floor itself, it must reach them too.
    """
    from lifelines import CRCSplineFitter

    from vcpcr._smoothers import _minimize, cloglog, survival_smoother

    y, risk = _floor_data()
    x, h = cloglog(risk), 10.0
    time, event = y[:, 0], y[:, 1]
    knots = np.percentile(np.log(time[event > 0]), [5, 50, 95])
    args = (x / np.std(x, ddof=1), np.log(time), event, knots)
    start = np.array([0, 0, np.log(event.sum() / time.sum()), 1, 0])
    weibull = _minimize(start, args, free=np.array([1, 1, 1, 1, 0], dtype=bool))
    frame = pd.DataFrame({"c": x, "T": time, "E": event})
    regressors = {"beta_": ["c"], "gamma0_": "1", "gamma1_": "1", "gamma2_": "1"}
    smoothed = {}
    for name, initial, options in [
        ("lifelines", None, None),  # as survival_probability_calibration
        ("weibull", weibull, {"ftol": 1e-14, "maxiter": 10000}),
    ]:
        crc = CRCSplineFitter(n_baseline_knots=3, penalizer=1e-6)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            crc.fit_right_censoring(
                frame,
                "T",
                "E",
                regressors=regressors,
                initial_point=initial,
                fit_options=options,
            )
        surv = crc.predict_survival_function(frame, times=[h]).to_numpy()[0]
        smoothed[name] = 1 - surv
    assert smoothed["lifelines"].max() < 1e-6  # lifelines' failure, reproduced
    fit = survival_smoother(x, time, event.astype(bool))
    # Which start wins depends on the optimizer's path (scipy 1.17's BFGS
    # leaves lifelines' start for a valid fit with a lower objective): either
    # way the fit is off the floor and gives the Weibull-started risks.
    assert (fit.valid, fit.floored, fit.converged) == (True, 0, True)
    assert fit.start in {"lifelines", "weibull"}
    atol = 1e-6 if fit.start == "weibull" else 5e-3
    assert_allclose(fit.risk(x, h), smoothed["weibull"], rtol=0, atol=atol)
    result = survival_calibration(y, 1 - risk, h)
    assert 0.02 < result.curve["observed"].min() < result.curve["observed"].max() < 0.5
    assert result.ici > 0.02  # the risks at the floor are far from the observed


@pytest.mark.parametrize(
    ("start", "valid"),
    [("lifelines", False), ("weibull only", True)],
    ids=["no-valid-fit", "weibull-fallback"],
)
def test_smoother_without_a_valid_spline_fit_warns(monkeypatch, start, valid):
    """No valid spline fit: a warning; ICI from the Weibull model, or none."""
    import vcpcr.calibration
    from vcpcr._smoothers import SplineFit
    from vcpcr.exceptions import VCPCRWarning

    y, risk = _floor_data()
    fit = SplineFit(
        np.array([-1.0, 3.0, 0.0, 1.0, 0.0]),
        np.array([0, 2, 4.0]),
        True,
        40,
        start,
        valid,
    )
    monkeypatch.setattr(vcpcr.calibration, "survival_smoother", lambda *a: fit)
    with pytest.warns(VCPCRWarning, match="40 of 50 events at the hazard floor"):
        result = survival_calibration(y, 1 - risk, 10.0)
    assert (result.ici is None) == (not valid)
    assert (result.e90 is None) == (not valid)
    assert result.curve.empty == (not valid)
    assert any("Weibull" in note for note in result.notes) == valid
    assert 0 < result.slope < 1  # the slope does not need the smoother


def _cox_data(n=120, seed=3):
    X, lin, _, _ = make_blocks(n=n, seed=seed)
    rng = np.random.default_rng(seed + 10)
    t = rng.exponential(np.exp(-0.7 * (lin - lin.mean())))
    c = rng.exponential(2 * np.median(t), size=n)
    return X, np.column_stack([np.minimum(t, c), (t <= c).astype(float)])


@needs_survival
def test_cross_val_predict_survival_by_hand():
    """Out-of-fold survival = clones fitted on stratified shuffled folds, by hand."""
    X, y = _cox_data()
    model = VCPCR(
        3, family="cox", weights="ridge", lam_ratio=0.3, n_init=2, random_state=0
    )
    h = float(np.median(y[:, 0]))
    got = cross_val_predict_survival(model, X, y, horizon=h, cv=3, random_state=1)
    want = np.empty(len(y))
    folds = StratifiedKFold(3, shuffle=True, random_state=1).split(X, y[:, 1])
    for train, test in folds:
        fold = clone(model).fit(X[train], y[train])
        want[test] = fold.predict_survival_function(
            X[test], return_array=True, times=[h]
        )[:, 0]
    assert_allclose(got, want, rtol=1e-12, atol=0)
    result = cross_val_calibration(model, X, y, horizon=h, cv=3, random_state=1)
    # predictions are clipped to [1e-10, 1 - 1e-10], as lifelines' calibration
    assert_allclose(result.predicted, 1 - want, rtol=0, atol=2e-10)
    assert isinstance(result, CalibrationResult)


@needs_survival
def test_cross_val_predict_survival_of_the_clinical_model_against_lifelines():
    """ClinicalCox (no family): the same folds, each fold lifelines' CoxPHFitter.

    Its Breslow baseline read as a step function at ``h`` (lifelines'
    ``predict_survival_function(times=)`` interpolates between event times).
    """
    from lifelines import CoxPHFitter

    from vcpcr.validation import ClinicalCox

    X, y = _cox_data()
    frame = pd.DataFrame({"age": X[:, 0], "g": X[:, 5]})
    h = float(np.median(y[:, 0]))
    got = cross_val_predict_survival(
        ClinicalCox(covariates="age"), frame, y, horizon=h, cv=3, random_state=1
    )
    want = np.empty(len(y))
    folds = StratifiedKFold(3, shuffle=True, random_state=1).split(X, y[:, 1])
    for train, test in folds:
        data = pd.DataFrame({"age": X[train, 0], "T": y[train, 0], "E": y[train, 1]})
        cph = CoxPHFitter().fit(data, "T", "E")
        base = cph.baseline_cumulative_hazard_.iloc[:, 0]
        H0 = base[base.index <= h].iloc[-1]
        risk = cph.predict_partial_hazard(pd.DataFrame({"age": X[test, 0]}))
        want[test] = np.exp(-H0 * risk.to_numpy())
    assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@needs_survival
def test_cross_val_calibration_drops_what_the_model_drops():
    """A ``missing="drop"`` model: the incomplete rows are dropped before
    the folds (before: the fold whose test part held one failed to predict)."""
    X, y = _cox_data()
    X = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    X.insert(0, "age", np.random.default_rng(0).normal(size=len(y)))
    X.loc[[4, 50], "age"] = np.nan
    model = VCPCR(
        3, family="cox", covariates=["age"], missing="drop", lam_ratio=0.3, n_init=2
    ).set_params(random_state=0)
    h = float(np.median(y[:, 0]))
    with pytest.warns(VCPCRWarning, match="Dropped 2 of 120 rows"):
        got = cross_val_calibration(model, X, y, horizon=h, cv=3)
    keep = X["age"].notna().to_numpy()
    want = cross_val_calibration(model, X[keep], y[keep], horizon=h, cv=3)
    assert_allclose(got.predicted, want.predicted, rtol=1e-12)
    assert got.predicted.size == keep.sum()


@needs_survival
def test_summary_and_plot(tmp_path):
    """summary() prints the indices and groups; plot() draws groups and curve."""
    rng = np.random.default_rng(5)
    lp = rng.normal(size=300)
    t = rng.exponential(1 / (0.1 * np.exp(lp)))
    y = np.column_stack([np.minimum(t, 10), t < 10])
    result = survival_calibration(y, np.exp(-0.5 * np.exp(lp)), 5.0)
    text = result.summary().as_text()
    for word in ("ICI:", "E90:", "Observed/expected:", "group 5", "Notes:"):
        assert word in text
    ax = result.plot()
    assert len(ax.lines) >= 3
    ax.figure.savefig(tmp_path / "calibration.png")
    assert "CalibrationResult(family='cox'" in repr(result)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda y, s: survival_calibration(y, s[:-1], 5.0),
            "has 299 entries but y has 300",
        ),
        (
            lambda y, s: survival_calibration(y, s + 1, 5.0),
            r"probabilities in \[0, 1\]",
        ),
        (lambda y, s: survival_calibration(y, s, 50.0), "last follow-up time"),
        (lambda y, s: survival_calibration(y, s, 5.0, n_groups=200), "n_groups <= 150"),
        (lambda y, s: binary_calibration([0, 2] * 150, s), "coded 0/1"),
        (lambda y, s: regression_calibration(s, np.r_[s[:-1], np.nan]), "NaN"),
    ],
    ids=["length", "range", "horizon", "groups", "binary", "nan"],
)
def test_errors_say_what_and_how(call, match):
    rng = np.random.default_rng(6)
    t = rng.exponential(5, size=300)
    y = np.column_stack([np.minimum(t, 10), t < 10])
    with pytest.raises(ValueError, match=match):
        call(y, rng.uniform(0.1, 0.9, size=300))


@needs_survival
@pytest.mark.parametrize("as_object", [False, True], ids=["name", "object"])
def test_cross_val_calibration_needs_a_horizon_for_cox(as_object):
    """Also with family objects, which read as their names."""
    from vcpcr._families import FAMILIES

    cox, gaussian = (FAMILIES[f] if as_object else f for f in ("cox", "gaussian"))
    X, y = _cox_data()
    with pytest.raises(ValueError, match="requires a horizon"):
        cross_val_calibration(VCPCR(family=cox), X, y)
    with pytest.raises(ValueError, match="takes no horizon for family='gaussian'"):
        cross_val_calibration(VCPCR(family=gaussian), X, y[:, 0], horizon=1.0)


@pytest.mark.skipif(
    importlib.util.find_spec("SurvSet") is None,
    reason="needs the benchmarks extra: pip install 'vcpcr[benchmarks]'",
)
def test_calibration_page_prints_its_pasted_output():
    """docs/calibration.md: its code on gse1992 prints the pasted output."""
    from pathlib import Path

    from conftest import doc_examples, printed_lines

    page = Path(__file__).resolve().parents[1] / "docs" / "calibration.md"
    code, shown = doc_examples(page.read_text())[0]
    lines = printed_lines(code)
    missing = [line for line in shown.splitlines() if line.rstrip() not in lines]
    assert missing == []


@pytest.mark.parametrize("family", ["binomial", "gaussian"])
def test_plot_of_a_binomial_and_a_gaussian_result(family, tmp_path):
    """plot() raised TypeError outside cox (it formatted the horizon, None)."""
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 200)
    if family == "binomial":
        result = binary_calibration(rng.uniform(size=200) < p, p)
    else:
        result = regression_calibration(p + rng.normal(0, 0.1, 200), p)
    ax = result.plot()
    assert ax.get_xlabel() == (
        "Predicted probability" if family == "binomial" else "Predicted value"
    )
    ax.figure.savefig(tmp_path / "calibration.png")
    plt.close(ax.figure)


def test_smoothed_risk_is_monotone_in_time_beyond_the_events():
    """A fitted spline that turns down past the events gave an observed risk
    of 1e-5 at a predicted 1.0 beside 0.90 at 0.99 (a cohort's fit, its
    parameters here): the cumulative hazard is now non-decreasing in time."""
    from vcpcr._smoothers import SplineFit

    knots = np.array([0.45, 2.77, 3.89])
    turning = SplineFit(np.array([-0.44, 4.16, 0.12, 1.28, 63.15]), knots, True)
    x = np.linspace(0.0, 3.2, 50)  # beta_x < 0: u grows with x
    risk = turning.risk(x, 60.0)
    assert np.all(np.diff(risk) >= -1e-6)
    assert risk[-1] > 0.85
    # a fit whose log cumulative hazard increases is unchanged
    b, b0, g0, g1 = -0.5, 4.0, 0.1, 1.3
    plain = SplineFit(np.array([b, b0, g0, g1, 0.0]), knots, True)
    u = np.log(60.0) - (b * x + b0)
    assert_allclose(plain.risk(x, 60.0), -np.expm1(-np.exp(g0 + g1 * u)), rtol=1e-12)


def test_kaplan_meier_checks_its_input():
    """Before: NaN, negative times and events of 2 were used silently, a bad
    horizon gave NaN, and an empty or short input crashed inside numpy."""
    t, e = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 0, 1, 0])
    for time, event, match in [
        ([1.0, np.nan, 3.0, 4.0], e, "missing survival time"),
        ([1.0, -2.0, 3.0, 4.0], e, "negative survival time"),
        (t, [1, 2, 0, 0], "event must be 0/1"),
        (t, e[:3], "1-d arrays of one length"),
        ([], [], "empty"),
    ]:
        with pytest.raises(ValueError, match=match):
            kaplan_meier(time, event, 2.5)
    with pytest.raises(ValueError, match="'horizon' parameter of kaplan_meier"):
        kaplan_meier(t, e, np.nan)
    with pytest.raises(ValueError, match="'alpha' parameter of kaplan_meier"):
        kaplan_meier(t, e, 2.5, alpha=0.0)


def test_kaplan_meier_beyond_the_last_follow_up_is_an_error_not_nan():
    """Before: (NaN, NaN, NaN) without a word for a horizon past every
    follow-up (one or two rows, all times 0, a horizon of 1e9)."""
    t, e = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 0, 1, 0])
    for time, event, h in [(t, e, 1e9), (t[:1], e[:1], 2.0), (0 * t, e, 0.5)]:
        with pytest.raises(ValueError, match="beyond the last follow-up time"):
            kaplan_meier(time, event, h)
    assert kaplan_meier(t, e, 4.0)[0] == pytest.approx(0.375)  # at the last: defined


@pytest.mark.parametrize(
    ("event", "horizon", "estimate", "why"),
    [
        ([0, 0, 0, 0], 3.0, 1.0, "no event at or before it"),
        ([1, 0, 1, 0], 0.0, 1.0, "no event at or before it"),
        ([1, 1, 1, 1], 4.0, 0.0, "every sample at risk had the event"),
    ],
    ids=["all_censored", "horizon_0", "all_events"],
)
def test_kaplan_meier_warns_that_the_interval_does_not_exist_at_0_or_1(
    event, horizon, estimate, why
):
    """Before: NaN bounds without a note (all censored, horizon 0)."""
    with pytest.warns(VCPCRWarning, match=why):
        s, lo, hi = kaplan_meier([1.0, 2.0, 3.0, 4.0], event, horizon)
    assert s == estimate
    assert np.isnan(lo)
    assert np.isnan(hi)


def test_increment_interval_checks_its_arguments():
    from vcpcr.validation import increment_interval

    d = [0.01, 0.03, 0.02, 0.0]
    for kwargs, match in [
        ({"method": "x"}, "'method' parameter of increment_interval"),
        ({"n_train": 0}, "'n_train' parameter"),
        ({"n_test": -1}, "'n_test' parameter"),
        ({"alpha": 1.0}, "'alpha' parameter"),
    ]:
        with pytest.raises(ValueError, match=match):
            increment_interval(d, **({"n_train": 80, "n_test": 20} | kwargs))
    with pytest.raises(ValueError, match="d must be a 1-d array"):
        increment_interval(np.ones((2, 2)), n_train=80, n_test=20)


def test_binary_calibration_of_hard_predictions_and_of_constant_ones():
    """Predictions of 0 and 1 (clipped to 1e-10: logits -+23) gave a NaN
    intercept (Newton's steps diverged); constant ones a singular matrix."""
    rng = np.random.default_rng(0)
    p = rng.random(40)
    y = (rng.random(40) < p).astype(int)
    hard = binary_calibration(y, np.where(p > 0.5, 1.0, 0.0))
    assert np.all(np.isfinite(hard.intercept))
    assert np.all(np.isfinite(hard.slope))
    with pytest.raises(ValueError, match="probabilities are constant"):
        binary_calibration(y, np.zeros(40))


def test_regression_calibration_at_any_scale():
    """Values of 1e-300 made X'X singular (numpy's LinAlgError); the length
    check said "y has 40 entries but y has 38"."""
    rng = np.random.default_rng(0)
    pred = rng.normal(size=40)
    y = 2.0 * pred + 0.1 * rng.normal(size=40)
    unit = regression_calibration(y, pred)
    for scale in (1e-300, 1e300):
        scaled = regression_calibration(y * scale, pred * scale)
        assert_allclose(scaled.slope, unit.slope, rtol=1e-12)
        assert_allclose(np.array(scaled.intercept) / scale, unit.intercept, rtol=1e-9)
    with pytest.raises(ValueError, match="prediction has 38 entries but y has 40"):
        regression_calibration(y, pred[:-2])


def _zero_time_cohort(n=300, zeros=3, zero_events=0, seed=0):
    """A cohort in whole days with ``zeros`` follow-up times of 0 (#48 item 4).

    Exponential times with a true risk model, so that the predictions are
    calibrated; the ``zeros`` shortest follow-ups set to 0 (censored, the
    first ``zero_events`` of them events). Horizon 730 days.
    """
    rng = np.random.default_rng(seed)
    lp = rng.normal(scale=0.8, size=n)
    base, h = 3000.0, 730.0
    t = rng.exponential(base / np.exp(lp))
    c = rng.uniform(30, 5000, size=n)
    time, event = np.floor(np.minimum(t, c)), t <= c
    first = np.argsort(time)[:zeros]
    time[first] = 0
    event[first] = False
    event[first[:zero_events]] = True
    return np.column_stack([time, event]), np.exp(-h / base * np.exp(lp)), h


@pytest.mark.parametrize("zero_events", [0, 2], ids=["censored", "events"])
def test_smoother_with_follow_up_times_of_zero(zero_events):
    """Times of 0 no longer break the smoother (log 0: a flat curve, #48).

    Before, the likelihood in log time was NaN everywhere: the optimizer
    stopped at its start, the curve was flat and ICI/E50/E90 were reported
    against it, with numpy RuntimeWarnings.
    """
    y, s, h = _zero_time_cohort(zero_events=zero_events)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = survival_calibration(y, s, h)
    curve = result.curve["observed"].to_numpy()
    assert curve.size == 100
    assert np.all(np.diff(curve) > 0)  # follows the risk, not flat
    groups = result.groups
    assert curve[-1] - curve[0] > 0.5 * (
        groups["observed"].iloc[-1] - groups["observed"].iloc[0]
    )
    assert result.ici < 0.05


def test_zero_times_leave_the_smoother_as_without_them():
    """Censored at 0 adds nothing to the likelihood: the fit without those rows."""
    from vcpcr._smoothers import cloglog, survival_smoother

    y, s, _ = _zero_time_cohort(zeros=3)
    x, time, event = cloglog(1 - s), y[:, 0], y[:, 1] > 0
    keep = time > 0
    fit = survival_smoother(x, time, event)
    without = survival_smoother(x[keep], time[keep], event[keep])
    assert fit.valid
    assert_allclose(fit.params, without.params)


def _flat_binary_smoother(p, y, frac):
    return np.full(p.shape, float(np.mean(y)))


@pytest.mark.parametrize("family", ["cox", "binomial"])
def test_a_curve_that_ignores_trending_groups_is_not_reported(monkeypatch, family):
    """A degenerate (flat) smoothed curve: no ICI/E50/E90, a VCPCRWarning (#48)."""
    import vcpcr.calibration
    from vcpcr._smoothers import SplineFit, survival_smoother

    rng = np.random.default_rng(2)
    if family == "cox":
        y, s, h = _zero_time_cohort(n=600, zeros=0)
        x = vcpcr.calibration.cloglog(1 - s)
        fit = survival_smoother(x, y[:, 0], y[:, 1] > 0)
        flat = SplineFit(
            np.r_[0.0, fit.params[1:]], fit.knots, True, 0, "lifelines", True
        )
        monkeypatch.setattr(vcpcr.calibration, "survival_smoother", lambda *a: flat)

        def call():
            return survival_calibration(y, s, h)

    else:
        p = rng.uniform(0.05, 0.95, 1000)
        yb = (rng.uniform(size=p.size) < p).astype(float)
        monkeypatch.setattr(vcpcr.calibration, "binary_smoother", _flat_binary_smoother)

        def call():
            return binary_calibration(yb, p)

    with pytest.warns(VCPCRWarning, match="degenerate smoothed curve"):
        result = call()
    assert (result.ici, result.e50, result.e90) == (None, None, None)
    assert result.curve.empty
    assert any("degenerate" in note for note in result.notes)
    assert 0.7 < result.slope < 1.3  # the slope does not need the smoother


def _no_runtime_warning(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # VCPCRWarnings may be due on edge data
        warnings.simplefilter("error", RuntimeWarning)
        return call()


@pytest.mark.parametrize(
    "case",
    ["ordinary", "zero-censored", "zero-events", "ties", "floor", "n40"],
)
def test_survival_calibration_reaches_no_runtime_warning(case):
    """No numpy RuntimeWarning reaches the user, ordinary or edge data (#48)."""
    zeros, zero_events, n = {
        "zero-censored": (3, 0, 300),
        "zero-events": (3, 2, 300),
        "n40": (0, 0, 40),
    }.get(case, (0, 0, 300))
    y, s, h = _zero_time_cohort(n=n, zeros=zeros, zero_events=zero_events)
    if case == "ties":
        y[:, 0] = np.ceil(y[:, 0] / 30)
        h = 730.0 / 30
    if case == "floor":
        order = np.argsort(s)
        s[order[:20]], s[order[-20:]] = 0.0, 1.0
    result = _no_runtime_warning(lambda: survival_calibration(y, s, h))
    assert np.isfinite(result.slope)


@pytest.mark.parametrize("case", ["ordinary", "rounded", "zero-one", "two-values"])
def test_binary_and_regression_calibration_reach_no_runtime_warning(case):
    """No numpy RuntimeWarning from the binary or regression workflow (#48)."""
    rng = np.random.default_rng(1)
    p = rng.uniform(0.02, 0.98, 500)
    yb = (rng.uniform(size=500) < p).astype(float)
    if case == "rounded":
        p = np.round(p, 1)
    elif case == "zero-one":
        p[:30], p[-30:] = 0.0, 1.0
    elif case == "two-values":
        p = np.where(p > 0.5, 0.8, 0.2)
    _no_runtime_warning(lambda: binary_calibration(yb, p))
    yr = 2 * p + rng.normal(size=500)
    _no_runtime_warning(lambda: regression_calibration(yr, p))


@needs_survival
@pytest.mark.parametrize("zeros", [0, 3], ids=["ordinary", "zero-times"])
def test_cox_workflows_reach_no_runtime_warning(zeros):
    """cross_val_calibration and validate_external (cox), zero times too (#48)."""
    from vcpcr.external import validate_external
    from vcpcr.simulate import make_block_data

    d = make_block_data(
        200,
        [10, 10],
        [0.4, -0.4],
        n_noise=10,
        family="cox",
        censoring=0.5,
        random_state=0,
    )
    X = pd.DataFrame(d.X, columns=[f"g{i}" for i in range(d.X.shape[1])])
    y = np.column_stack([np.ceil(d.y * 1e5), d.event])
    h = float(np.median(y[:, 0]))
    y[np.argsort(y[:, 0])[:zeros]] = 0
    model = VCPCR(family="cox", random_state=0)
    cv = _no_runtime_warning(lambda: cross_val_calibration(model, X, y, horizon=h))
    assert np.isfinite(cv.slope)
    fitted = _no_runtime_warning(lambda: clone(model).fit(X.iloc[50:], y[50:]))
    ext = _no_runtime_warning(
        lambda: validate_external(fitted, X.iloc[:50], y[:50], horizon=h)
    )
    assert ext is not None


@pytest.mark.parametrize("family", ["binomial", "gaussian"])
def test_binomial_and_gaussian_cv_calibration_reach_no_runtime_warning(family):
    """cross_val_calibration for the other two families (#48)."""
    from vcpcr.simulate import make_block_data

    d = make_block_data(
        200, [10, 10], [0.6, -0.6], n_noise=10, family=family, random_state=0
    )
    model = VCPCR(family=family, random_state=0)
    result = _no_runtime_warning(lambda: cross_val_calibration(model, d.X, d.y))
    assert np.isfinite(result.slope)


@needs_survival
def test_survival_calibration_of_constant_predictions_is_an_error():
    """An empty model's one predicted survival gave a slope of -58 (#46 row 4);
    the binary and regression calibrations refuse constant predictions too."""
    rng = np.random.default_rng(0)
    t, c = rng.exponential(1, 80), rng.exponential(2, 80)
    y = np.column_stack([np.minimum(t, c), (t <= c).astype(float)])
    with pytest.raises(ValueError, match="predicted_survival is constant"):
        survival_calibration(y, np.full(80, 0.6), horizon=0.5)


def test_binary_calibration_of_separating_probabilities_is_an_error():
    """Probabilities equal to the 0/1 outcomes: numpy's "Singular matrix" or
    an arbitrary slope with "invalid value encountered in sqrt" (#46 row 9)."""
    y = np.array([0.0, 1.0] * 20)
    with pytest.raises(ValueError, match="separate the outcomes completely"):
        binary_calibration(y, y.copy(), n_groups=3)


def test_binary_calibration_of_reversed_separating_probabilities_is_an_error():
    """Every event predicted below every non-event (minus infinite slope): was
    numpy's "Singular matrix" with an overflow warning (#46 fuzz)."""
    y = np.zeros(40)
    y[:2] = 1.0
    with pytest.raises(ValueError, match="each of the 2 events' below"):
        binary_calibration(y, np.linspace(0.1, 0.9, 40), n_groups=4)


def test_cross_val_calibration_checks_y_before_the_folds_split_it():
    """A continuous, NaN, infinite or dict y met scikit-learn's splitter first
    ("Supported target types are: ('binary', 'multiclass')", "Input y
    contains NaN"), as did a 1-d X and one without columns; a y shorter than
    X gave a slope (#46 fuzz)."""
    X, y, _, _ = make_blocks(n=60, seed=1)
    labels = (y > np.median(y)).astype(float)
    model = VCPCR(2, family="binomial", n_init=1, random_state=0)
    for Xb, yb, match in [
        (X, np.r_[1e300, labels[1:]], "y must be 0/1"),
        (X, np.r_[np.nan, labels[1:]], "NaN"),
        (X, np.r_[np.inf, labels[1:]], "y contains infinity"),
        (X, dict(enumerate(labels)), "got a dict"),
        (X, labels[:-3], "inconsistent numbers of samples"),  # was a slope
        (X[:, 0], labels, "Reshape your data"),
        (X[:, :0], labels, "0 feature"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match) as info:
            cross_val_calibration(model, Xb, yb, cv=3)
        assert "Supported target types" not in str(info.value)
        assert info.traceback[-1].path.is_relative_to(Path(vcpcr.__file__).parent)


# ------------------------------------------- stratified models' folds (cells)
def _small_stratum(events, *, n=90, small=24, seed=0):
    """A cohort whose first ``small`` rows, a stratum, hold ``events`` events.

    The rows are sorted by stratum, so unshuffled folds stratified on the
    event indicator alone put the small stratum's events together.
    """
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 12)), columns=[f"g{j}" for j in range(12)])
    X["node"] = np.r_[np.ones(small), np.zeros(n - small)]
    time = rng.exponential(np.exp(-0.7 * X["g0"].to_numpy()))
    event = (rng.random(n) < 0.7).astype(float)
    event[:small] = 0.0
    event[rng.choice(small, events, replace=False)] = 1.0
    return X, np.column_stack([time, event])


def _tuned():
    from vcpcr import VCPCRCV

    return VCPCRCV(
        family="cox", n_clusters=(2,), lam_ratios=(0.5,), strata="node", random_state=0
    )


@needs_survival
def test_nested_cv_of_a_stratified_vcpcrcv_keeps_a_small_stratums_events():
    """cross_val_calibration of VCPCRCV(strata=) on a stratum with 3 of 24
    rows' events: its inner (and outer) folds, stratified by stratum and
    event, leave an event of the stratum in every training part. Before,
    they were stratified on the event only, and a re-tuning inside an outer
    training part died in its fold check ("CV fold 0 of 5, training part
    (57 rows): strata: the stratum node=1 (13 rows) has no event"), after
    the outer folds before it had been fitted (7 minutes on gse1992)."""
    X, y = _small_stratum(3)
    cal = cross_val_calibration(_tuned(), X, y, horizon=1.0, cv=5, random_state=0)
    assert np.isfinite(cal.predicted).all()
    event = y[:, 1] > 0
    small = X["node"].to_numpy() == 1
    inner = _tuned().fit(X, y)  # VCPCRCV's own folds, unshuffled, on all rows
    for train, _ in inner.folds_:
        assert event[train][small[train]].sum() >= 2  # 3 - ceil(3 / 5)
    # the clinical model on the same column gets the same folds (the report
    # compares the two models' out-of-fold risks row by row)
    from vcpcr._input import model_strata
    from vcpcr.calibration import _folds
    from vcpcr.validation import ClinicalCox

    def folds(model):
        strata = model_strata(model, X.assign(node=X["node"].map(str)), y, "t")[0]
        return _folds(5, event, len(y), 0, "t", strata)

    for (tr1, te1), (_, te2) in zip(
        folds(_tuned()), folds(ClinicalCox(strata="node")), strict=True
    ):
        assert_array_equal(te1, te2)
        assert event[tr1][small[tr1]].sum() >= 2


@needs_survival
@pytest.mark.parametrize(
    ("events", "cv", "model", "match"),
    [
        (
            2,
            5,
            "VCPCRCV",
            r"cross_val_calibration's fold \d of 5, training part \(72 rows\): "
            r"strata: the stratum node=1 \(\d+ of its 24 rows\) keeps 1 of its 2 "
            r"events, fewer than 2: VCPCRCV re-tunes .* \(cv=5\).* A stratum "
            r"needs at least 3 events for this: merge node=1 with another stratum",
        ),
        (
            3,
            2,
            "VCPCRCV",
            r"keeps 1 of its 3 events, fewer than 2.* Use cv=3 or more folds, or "
            r"merge node=1",
        ),
        (
            1,
            5,
            "VCPCR",
            r"the stratum node=1 \(\d+ of its 24 rows\) has no event, so its "
            r"baseline hazard is undefined: its 1 event \(in all 90 rows\) is "
            r"outside this training part. A stratum needs at least 2 events",
        ),
    ],
    ids=["tuned-2-events", "tuned-2-folds", "fixed-1-event"],
)
def test_too_few_events_in_a_stratum_is_an_error_before_any_fit(
    monkeypatch, events, cv, model, match
):
    """A stratum whose events no folds can leave in every (inner) training
    part is a ValueError that names it, its events and the fix, raised
    before the first fold's fit."""
    from vcpcr import VCPCRCV

    X, y = _small_stratum(events)
    fits = []
    for cls in (VCPCR, VCPCRCV):
        monkeypatch.setattr(cls, "fit", lambda self, *a, **k: fits.append(self))
    estimator = (
        _tuned().set_params(cv=None)
        if model == "VCPCRCV"
        else VCPCR(family="cox", n_clusters=2, strata="node")
    )
    with pytest.raises(ValueError, match=match):
        cross_val_calibration(estimator, X, y, horizon=1.0, cv=cv, random_state=0)
    assert fits == []
