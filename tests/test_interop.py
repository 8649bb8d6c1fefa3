"""What users of statsmodels, scikit-learn, lifelines and scikit-survival expect
(issue 11): warnings at the user's line, errors that name the fix, prediction
intervals, survival predictions in scikit-survival's layout."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from vcpcr import VCPCR, VCPCRCV, SeparationWarning
from vcpcr._outcome import firth_logit


def _separated(blocks):
    X, y, _, _ = blocks
    return X, (y > np.median(y)).astype(int)


def test_separation_warning_points_at_the_users_line(blocks):
    X, ybin = _separated(blocks)
    model = VCPCR(n_clusters=4, family="binomial", lam_ratio=0.3, n_init=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.set_params(random_state=0).fit(X, ybin)
    sep = [w for w in caught if issubclass(w.category, SeparationWarning)]
    assert len(sep) == 1
    assert sep[0].filename == __file__


def test_cap_warning_points_at_the_users_line_through_cv(blocks):
    X, y, _, _ = blocks
    cv = VCPCRCV(n_clusters=(2, 9), lam_ratios=[0.3], cv=3, n_init=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cv.set_params(random_state=0).fit(X[:, :4], y)
    assert caught
    assert all(w.filename == __file__ for w in caught), [w.filename for w in caught]


def test_cv_separation_in_some_folds_is_reported_not_warned(blocks):
    """Some separated training folds are routine (Firth handles them): no
    warning, but the count is in the summary."""
    X, ybin = _separated(blocks)
    cv = VCPCRCV(
        n_clusters=(2, 4), family="binomial", lam_ratios=[0.05, 0.9], cv=3, n_init=1
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cv.set_params(random_state=0).fit(X, ybin)
    total = len(cv.cv_results_) * cv.n_splits_
    assert 0 < cv.n_separated_fits_
    cv_warned = [
        w
        for w in caught
        if issubclass(w.category, SeparationWarning) and "fold x grid" in str(w.message)
    ]
    assert bool(cv_warned) == (2 * cv.n_separated_fits_ > total)
    text = " ".join(str(cv.summary()).split())  # whatever the line breaks
    assert f"in {cv.n_separated_fits_} of {total} fold fits" in text


def _slow_firth_data():
    """Nearly separated data with 10 small-scale latent variables, as in CV
    folds of examples/classification_liver.py: Fisher scoring needs ~150
    steps (some liver folds needed more than 200 and warned)."""
    rng = np.random.default_rng(12)
    n = 70
    M = rng.normal(size=(n, 10)) * 0.05
    s = M @ rng.normal(size=10)
    y = (s + 0.02 * rng.normal(size=n) > np.quantile(s, 0.5)).astype(float)
    return np.column_stack([np.ones(n), M]), y


def test_firth_converges_fast_and_in_standard_error_units():
    from scipy.special import expit

    X, y = _slow_firth_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        params, cov, n_iter = firth_logit(X, y)
    assert n_iter <= 40  # Newton's quadratic convergence
    # the modified score vanishes at the estimate (Heinze & Schemper's eq.)
    mu = expit(X @ params)
    w = mu * (1 - mu)
    h = np.einsum("ij,jk,ik->i", X, cov, X) * w
    score = X.T @ (y - mu + h * (0.5 - mu))
    assert np.sqrt(score @ cov @ score) < 1e-9
    assert np.max(np.abs(params)) > 10  # large coefficients: nearly separated


def test_survival_outcome_without_cox_names_the_fix(blocks):
    X, y, _, _ = blocks
    time = np.abs(y) + 1
    event = (y > 0).astype(int)
    from vcpcr import Surv

    for outcome in (np.column_stack([time, event]), Surv(time, event)):
        with pytest.raises(ValueError, match="family='cox'"):
            VCPCR().fit(X, outcome)
        with pytest.raises(ValueError, match="family='cox'"):
            VCPCRCV().fit(X, outcome)


def test_string_column_without_formula_names_the_fix(blocks_df):
    X, y, _, _ = blocks_df
    X = X.assign(strain=["a", "b", "c"] * (len(X) // 3))
    with pytest.raises(
        ValueError, match=r"non-numeric columns: \['strain'\].*formula="
    ):
        VCPCR().fit(X, y)


# ----------------------------------------------------------------- survival
@pytest.fixture(scope="module")
def cox_model():
    pytest.importorskip("lifelines")
    data = pd.read_csv(Path(__file__).parent / "reference" / "data" / "cox_wide.csv")
    X = data.filter(regex=r"^x\d+$")
    Y = data[["time", "event"]]
    INIT = np.arange(X.shape[1]) % 4
    model = VCPCR(n_clusters=4, family="cox", weights="ridge", init=INIT, lam_ratio=0.2)
    return model.fit(X, Y), X, Y


def _sksurv_y(Y):
    from sksurv.util import Surv as SksurvSurv

    return SksurvSurv.from_arrays(Y["event"].astype(bool), Y["time"])


def test_survival_function_matches_scikit_survival(cox_model):
    """Step functions and arrays as sksurv's CoxPHSurvivalAnalysis (Efron ties,
    Breslow baseline) fitted on the same latent variables."""
    pytest.importorskip("sksurv")
    from sksurv.functions import StepFunction as SksurvStepFunction
    from sksurv.linear_model import CoxPHSurvivalAnalysis

    model, X, Y = cox_model
    M = model.transform(X)
    ref = CoxPHSurvivalAnalysis(ties="efron", tol=1e-12).fit(M, _sksurv_y(Y))
    assert_allclose(model.unique_times_, ref.unique_times_)
    new = X.iloc[:6]
    for method in ("predict_survival_function", "predict_cumulative_hazard_function"):
        got = getattr(model, method)(new, return_array=True)
        want = getattr(ref, method)(model.transform(new), return_array=True)
        assert got.shape == (6, model.unique_times_.size)
        assert_allclose(got, want, rtol=1e-6, atol=1e-10)
        fns = getattr(model, method)(new)
        assert fns.shape == (6,)
        assert all(isinstance(fn, SksurvStepFunction) for fn in fns)
        t = np.linspace(model.unique_times_[0], model.unique_times_[-1], 7)
        ref_fns = getattr(ref, method)(model.transform(new))
        assert_allclose(fns[2](t), ref_fns[2](t), rtol=1e-6)
    # the linear predictor differs from sksurv's uncentred one by a constant,
    # and so does the log of the partial hazard
    sksurv_eta = ref.predict(model.transform(new))
    for log_risk in (model.predict_log_partial_hazard(new), np.log(model.predict(new))):
        diff = log_risk - sksurv_eta
        assert_allclose(diff, diff[0], atol=1e-6)


def test_integrated_brier_score_takes_return_array(cox_model):
    pytest.importorskip("sksurv")
    from sksurv.metrics import integrated_brier_score

    model, X, Y = cox_model
    y = _sksurv_y(Y)
    times = np.quantile(Y["time"][Y["event"] == 1], [0.1, 0.3, 0.5, 0.7])
    surv = model.predict_survival_function(X, return_array=True, times=times)
    assert surv.shape == (len(X), times.size)
    score = integrated_brier_score(y, y, surv, times)
    # better than the uninformative S = 0.5 and than the Kaplan-Meier curve
    assert 0 < score < integrated_brier_score(y, y, np.full_like(surv, 0.5), times)
    fns = model.predict_survival_function(X)
    assert_allclose(np.vstack([fn(times) for fn in fns]), surv, rtol=1e-12)


@pytest.fixture(scope="module")
def lifelines_on_latent(cox_model):
    """lifelines' CoxPHFitter fitted here on the model's latent variables."""
    from lifelines import CoxPHFitter

    model, X, Y = cox_model
    latent = pd.DataFrame(model.transform(X), columns=model.get_feature_names_out())
    tight = {"precision": 1e-12, "r_precision": 1e-14}
    return CoxPHFitter().fit(
        latent.assign(time=Y["time"], event=Y["event"]),
        "time",
        "event",
        fit_options=tight,
    )


def _latent(model, X):
    return pd.DataFrame(model.transform(X), columns=model.get_feature_names_out())


def test_survival_frame_is_lifelines(cox_model, lifelines_on_latent):
    model, X, _ = cox_model
    times = [0.5, 1.0, 2.0]
    frame = model.predict_survival_function(X.iloc[:4], times=times, return_frame=True)
    want = lifelines_on_latent.predict_survival_function(
        _latent(model, X.iloc[:4]), times=times
    )
    pd.testing.assert_index_equal(frame.index, want.index)
    pd.testing.assert_index_equal(frame.columns, want.columns)
    assert_allclose(frame.to_numpy(), want.to_numpy(), rtol=1e-8)
    assert frame.shape == (3, 4)


def test_own_step_function_equals_scikit_survivals():
    pytest.importorskip("sksurv")
    from sksurv.functions import StepFunction as SksurvStepFunction

    from vcpcr._survival import StepFunction

    x = np.array([1.0, 2.0, 4.0])
    y = np.array([0.9, 0.5, 0.2])
    ours, ref = StepFunction(x, y), SksurvStepFunction(x, y)
    z = np.array([0.0, 1.0, 1.5, 2.0, 3.9, 4.0])
    assert_allclose(ours(z), ref(z))
    assert ours.domain == ref.domain
    for bad in (-1.0, 4.5):
        with pytest.raises(ValueError, match="x must be within"):
            ours(bad)
        with pytest.raises(ValueError, match="x must be within"):
            ref(bad)


def test_step_functions_without_scikit_survival(cox_model, monkeypatch):
    import sys

    from vcpcr._survival import StepFunction

    model, X, _ = cox_model
    monkeypatch.setitem(sys.modules, "sksurv.functions", None)  # import fails
    fns = model.predict_survival_function(X.iloc[:2])
    assert all(type(fn) is StepFunction for fn in fns)
    t = model.unique_times_[[0, 5, -1]]
    assert_allclose(
        np.vstack([fn(t) for fn in fns]),
        model.predict_survival_function(X.iloc[:2], return_array=True, times=t),
    )


def test_lifelines_conveniences(cox_model, lifelines_on_latent, capsys):
    from lifelines.utils import concordance_index

    model, X, Y = cox_model
    names = list(model.cluster_coef_.index)
    model.print_summary()
    out = capsys.readouterr().out
    assert "duration col = 'time'" in out
    assert "event col = 'event'" in out
    assert "_time" not in out
    assert all(name in out for name in names)
    harrell = concordance_index(Y["time"], -model.predict(X), Y["event"])
    assert model.concordance_index_ == pytest.approx(harrell, rel=1e-12)
    M = _latent(model, X.iloc[:5])
    assert_allclose(
        model.predict_median(X.iloc[:5]),
        lifelines_on_latent.predict_median(M).to_numpy().ravel(),
    )
    # result_ works with the latent variables, as a lifelines user expects
    assert model.result_.predict_survival_function(M).shape[1] == 5
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    ax = model.plot()
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == sorted(names)
    assert not hasattr(VCPCR(), "print_summary")
    assert not hasattr(VCPCR(family="binomial"), "predict_median")


# --------------------------------------------------------- prediction intervals
def test_get_prediction_gaussian_equals_statsmodels(blocks_df):
    import statsmodels.api as sm

    X, y, _, _ = blocks_df
    model = VCPCR(n_clusters=3, n_init=2, random_state=0).fit(X, y)
    new = X.iloc[:7]
    frame = model.get_prediction(new).summary_frame(alpha=0.1)
    # independent: statsmodels OLS refitted on [1, M] by hand
    M = sm.add_constant(model.transform(X))
    ref = sm.OLS(y.to_numpy(), M).fit()
    want = ref.get_prediction(sm.add_constant(model.transform(new), has_constant="add"))
    want = want.summary_frame(alpha=0.1)
    assert list(frame.columns) == list(want.columns)
    assert "obs_ci_lower" in frame.columns
    assert_allclose(frame.to_numpy(), want.to_numpy(), rtol=1e-10)
    assert_allclose(frame["mean"], model.predict(new), rtol=1e-10)
    assert list(frame.index) == list(range(7))


def test_get_prediction_binomial_gives_probability_intervals(binary_blocks):
    import statsmodels.api as sm

    X, y, _ = binary_blocks
    model = VCPCR(n_clusters=3, family="binomial", lam_ratio=0.5, n_init=2)
    model.set_params(random_state=0).fit(X, y)
    assert model.result_.mle_retvals.get("method") != "firth"
    frame = model.get_prediction(X[:5]).summary_frame(alpha=0.05)
    ref = sm.Logit(
        (y == model.classes_[1]).astype(float), sm.add_constant(model.transform(X))
    ).fit(disp=0)
    want = ref.get_prediction(
        sm.add_constant(model.transform(X[:5]), has_constant="add")
    )
    assert_allclose(frame.to_numpy(), want.summary_frame().to_numpy(), rtol=1e-6)
    assert_allclose(frame["predicted"], model.predict_proba(X[:5])[:, 1], rtol=1e-6)
    assert np.all(frame["ci_lower"] < frame["predicted"])


def test_get_prediction_through_cv(blocks):
    X, y, _, _ = blocks
    assert not hasattr(VCPCRCV(family="cox"), "get_prediction")
    cv = VCPCRCV(n_clusters=(2,), lam_ratios=[0.3], cv=3, n_init=1, random_state=0)
    cv.fit(X, y)
    assert_allclose(
        cv.get_prediction(X[:3]).predicted, cv.best_estimator_.predict(X[:3])
    )


def test_sos_nmf_convergence_warning_points_at_the_users_line(blocks):
    from vcpcr import ConvergenceWarning

    X, y, _, _ = blocks
    model = VCPCR(lam_ratio=0.01, max_iter=1, n_init=1)
    with pytest.warns(ConvergenceWarning, match="max_iter=1") as record:
        model.set_params(random_state=0).fit(X, y)
    assert record[0].filename == __file__
