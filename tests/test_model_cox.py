"""VCPCR(family="cox"): lifelines second step, survival predictions, inputs."""

from __future__ import annotations

import json
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("lifelines")  # the survival extra; the core CI job lacks it

from lifelines import CoxPHFitter
from lifelines.utils import concordance_index
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone

from vcpcr import VCPCR, VCPCRCV, Surv
from vcpcr._summary import FittedModel
from vcpcr.exceptions import ConvergenceWarning

REF = Path(__file__).parent / "reference"
DATA = pd.read_csv(REF / "data" / "cox_wide.csv")
X = DATA.filter(regex=r"^x\d+$")
Y = DATA[["time", "event"]]
INIT = np.arange(X.shape[1]) % 4


@pytest.fixture(scope="module")
def model():
    model = VCPCR(n_clusters=4, family="cox", weights="ridge", init=INIT, lam_ratio=0.2)
    return model.fit(X, Y)


@pytest.mark.reference
def test_cluster_coef_against_R_coxph(model):
    """R: coxph(Surv(time, event) ~ cluster_1 + ... , ties = "efron") on
    transform(X) of this very fit (tests/reference/cox_latent.R)."""
    with open(REF / "cox_latent.json") as fh:
        ref = json.load(fh)
    assert list(model.cluster_coef_.index) == ref["names"]
    assert_allclose(model.cluster_coef_.to_numpy(), ref["coef"], rtol=1e-8)
    assert_allclose(model.result_.standard_errors_.to_numpy(), ref["se"], rtol=1e-7)
    assert_allclose(model.result_.log_likelihood_, ref["loglik"][1], rtol=1e-10)
    assert_allclose(model.score(X, Y), ref["concordance"], rtol=1e-12)


def test_cluster_coef_equals_lifelines_on_transform(model):
    latent = pd.DataFrame(model.transform(X), columns=model.get_feature_names_out())
    tight = {"precision": 1e-12, "r_precision": 1e-14}  # lifelines' own options
    ref = CoxPHFitter().fit(
        latent.assign(T=Y["time"], E=Y["event"]), "T", "E", fit_options=tight
    )
    assert_allclose(model.cluster_coef_.to_numpy(), ref.params_.to_numpy(), rtol=1e-8)
    # coef_ and intercept_ (the partial hazard has no free constant) as lifelines
    assert_allclose(model.predict(X), ref.predict_partial_hazard(latent), rtol=1e-8)


def test_survival_predictions(model):
    times = [0.5, 1.0, 2.0, 4.0]
    surv = model.predict_survival_function(X.iloc[:5], times=times, return_frame=True)
    cumhaz = model.predict_cumulative_hazard(X.iloc[:5], times=times, return_frame=True)
    assert surv.shape == (4, 5)
    assert np.all(np.diff(surv.to_numpy(), axis=0) <= 0)
    # lifelines fitted here on the latent variables gives the same curves
    latent = pd.DataFrame(model.transform(X), columns=model.get_feature_names_out())
    tight = {"precision": 1e-12, "r_precision": 1e-14}
    ref = CoxPHFitter().fit(
        latent.assign(T=Y["time"], E=Y["event"]), "T", "E", fit_options=tight
    )
    new = latent.iloc[:5]
    want = ref.predict_cumulative_hazard(new, times=times).to_numpy()
    assert_allclose(cumhaz.to_numpy(), want, rtol=1e-7)
    want = ref.predict_survival_function(new, times=times).to_numpy()
    assert_allclose(surv.to_numpy(), want, rtol=1e-7)
    # Higher risk score, lower survival.
    risk = model.predict(X.iloc[:5])
    assert np.argmax(risk) == np.argmin(surv.iloc[-1].to_numpy())


def test_score_is_harrell_concordance(model):
    expected = concordance_index(Y["time"], -model.predict(X), Y["event"])
    assert model.score(X, Y) == pytest.approx(expected)
    assert model.score(X, Y) == pytest.approx(model.result_.concordance_index_)


def test_summary_cox(model):
    text = model.summary().as_text()
    for item in (
        "Surv(time, event)",
        "cox (PH, Efron ties)",
        "Events:",
        "Concordance:",
        "Log-partial-lik.:",
        "LR test (df=4):",
        "exp(coef)",
        "P>|z|",
    ):
        assert item in text, item
    assert max(len(line) for line in text.splitlines()) <= 80
    assert isinstance(model, FittedModel)  # the summary's contract (#20)


def test_outcome_formats_give_the_same_fit(model):
    structured = np.empty(len(Y), dtype=[("event", "?"), ("time", "<f8")])
    structured["event"], structured["time"] = Y["event"] == 1, Y["time"]
    for y in (Y.to_numpy(), structured, Surv(Y["time"], Y["event"])):
        other = clone(model).fit(X, y)
        assert_allclose(other.coef_, model.coef_, rtol=1e-12)
    formula = VCPCR(
        n_clusters=4,
        family="cox",
        weights="ridge",
        init=INIT,
        lam_ratio=0.2,
        formula="Surv(time, event) ~ .",
    )
    formula.fit(DATA)
    assert_allclose(formula.coef_, model.coef_, rtol=1e-12)
    assert formula.yname_ == "Surv(time, event)"
    assert formula.score(DATA) == pytest.approx(model.score(X, Y))


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda y: y.assign(time=-y["time"]), "negative"),
        (lambda y: y.assign(event=2 * y["event"]), "0/1"),
        (lambda y: y.assign(event=0), "no event"),
        (
            lambda y: y.assign(
                time=np.where(np.arange(len(y)) == 0, np.nan, y["time"])
            ),
            "NaN",
        ),
    ],
    ids=["negative-time", "event-coding", "no-events", "nan-time"],
)
def test_bad_survival_outcomes(change, match):
    with pytest.raises(ValueError, match=match):
        VCPCR(family="cox").fit(X, change(Y.copy()))


def test_wrong_length_and_missing_y():
    with pytest.raises(ValueError, match="X has 80 rows but y has 79"):
        VCPCR(family="cox").fit(X, Y.iloc[:-1])
    with pytest.raises(ValueError, match="requires y"):
        VCPCR(family="cox").fit(X)


def test_missing_lifelines_is_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "lifelines", None)
    with pytest.raises(ImportError, match=r"pip install 'vcpcr\[survival\]'"):
        VCPCR(family="cox", n_init=1, random_state=0).fit(X, Y)


def test_cv_for_cox():
    cv = VCPCRCV(
        n_clusters=(3, 4),
        family="cox",
        scoring="concordance",
        selection="min",  # the best point (the default before #27's sparse rule)
        cv=3,
        n_init=2,
        lam_ratios=[0.1, 0.3, 0.6],
        random_state=0,
    )
    cv.fit(X, Y)
    res = cv.cv_results_

    # The concordance score is lifelines' (Harrell's) concordance index of the
    # same fold models' risks (a callable scorer scores each fold model as is).
    def harrell(est, Xte, yte):
        risk = est.predict_log_partial_hazard(Xte)
        return concordance_index(yte[:, 0], -risk, yte[:, 1])

    ref = clone(cv).set_params(scoring=harrell, refit=False).fit(X, Y).cv_results_
    splits = [f"split{i}_test_score" for i in range(3)]
    assert_allclose(res[splits], ref[splits], rtol=1e-8)
    assert cv.best_score_ == res["mean_test_score"].max() > 0.6
    assert "mean concordance" in cv.summary().as_text()
    assert_array_equal(cv.predict(X), cv.best_estimator_.predict(X))
    best = cv.best_estimator_
    for method in (
        "predict_log_partial_hazard",
        "predict_median",
        "predict_survival_function",
        "predict_cumulative_hazard_function",
    ):
        got, want = getattr(cv, method)(X[:4]), getattr(best, method)(X[:4])
        if method.endswith("function"):
            times = best.unique_times_[:5]
            got = np.vstack([fn(times) for fn in got])
            want = np.vstack([fn(times) for fn in want])
        assert_allclose(got, want, rtol=1e-12)
    assert not hasattr(cv, "predict_proba")
    assert not hasattr(cv, "get_prediction")


def test_summary_columns_stay_apart_for_huge_and_tiny_hazard_ratios():
    """Covariates in tiny units give hazard ratios of ~1e8 and ~1e-8 per unit:
    each cell of the coefficient table stays a separate column (on gse1992,
    'cluster_4    20.1686574287587.4953' ran coef and exp(coef) together)."""
    rng = np.random.default_rng(0)
    n = 120
    z = rng.normal(size=(n, 2))
    genes = rng.normal(size=(n, 8))
    time = rng.exponential(np.exp(-(z[:, 0] - z[:, 1] + 0.5 * genes[:, 0])))
    data = pd.DataFrame(genes, columns=[f"g{j}" for j in range(8)])
    data.insert(0, "dose", z[:, 0] / 25.0)  # HR per unit ~ exp(25 x 0.8)
    data.insert(1, "inhibitor", z[:, 1] / 25.0)  # HR per unit ~ exp(-25 x 0.8)
    model = VCPCR(2, family="cox", weights="identity", random_state=0)
    model.set_params(covariates=["dose", "inhibitor"])
    model.fit(data, np.column_stack([time, np.ones(n)]))
    hr = np.exp(model.result_.params_[["dose", "inhibitor"]].to_numpy())
    assert hr[0] > 1e7
    assert hr[1] < 1e-7
    text = model.summary().as_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    header = next(line for line in text.splitlines() if "exp(coef)" in line)
    assert header.split() == "coef exp(coef) std err z P>|z| [0.025 0.975]".split()
    for name in ["dose", "inhibitor", "cluster_1", "cluster_2"]:
        row = next(line for line in text.splitlines() if line.startswith(name))
        cells = row.split()
        assert len(cells) == 8, row
        values = np.array(cells[1:], dtype=float)  # each parses as a number
        coef = model.result_.params_[name]
        assert_allclose(values[:2], [coef, np.exp(coef)], rtol=1e-3, atol=1e-4)


def _copy_of_a_covariate(seed=0, n=60):
    """A gene that is a linear function of the covariate 'age' (an expression
    that measures it), and weights that keep that gene alone."""
    rng = np.random.default_rng(seed)
    age = rng.normal(60.0, 10.0, n)
    data = pd.DataFrame(
        {"age": age, "g0": 2.0 * age + 1.0, "g1": rng.normal(size=n)}
        | {"g2": rng.normal(size=n)}
    )
    y = np.column_stack([rng.exponential(size=n), rng.random(n) < 0.7])
    return data, y, np.array([1.0, 1e-9, 1e-9])


def test_step2_lifelines_failure_is_a_vcpcr_error():
    """lifelines' ConvergenceError (collinear step-2 columns) used to escape
    from fit with lifelines' text and links; now a ValueError in vcpcr's
    words, with the likely cause and the fix."""
    from lifelines.exceptions import ConvergenceError

    data, y, weights = _copy_of_a_covariate()
    model = VCPCR(1, family="cox", weights=weights, lam_ratio=0.9, covariates=["age"])
    with pytest.raises(ValueError, match=r"The Cox outcome model \(step 2") as info:
        model.fit(data, y)
    message = str(info.value)
    assert not isinstance(info.value, ConvergenceError)
    assert "60 rows, 34 events) could not be fitted" in message
    assert "lifelines stopped: Convergence halted due to matrix inversion" in message
    assert "Likely cause: a covariate, or a level of a categorical one" in message
    assert "Merge or drop that level" in message
    assert "lifelines documentation" not in message
    assert "http" not in message


def test_step2_lifelines_warnings_in_vcpcr_words():
    """A column with 2 rows and no event in step 2 (a latent variable can
    separate where the covariates' level check cannot see it; a covariate
    level like this one is refused before any fit): lifelines' warnings of
    the fit are re-issued as one vcpcr ConvergenceWarning that names the
    likely cause, without lifelines' code examples and links; its warning
    that the column separates the rows with and without events is no longer
    swallowed."""
    from vcpcr._outcome import fit_cox
    from vcpcr.exceptions import ConvergenceWarning

    data, y, _ = _copy_of_a_covariate()
    rare = np.zeros(len(data))
    rare[np.flatnonzero(y[:, 1] == 0)[:2]] = 1.0  # 2 rows, 0 events
    M = np.column_stack(
        [data["age"], rare, np.random.default_rng(1).normal(size=len(data))]
    )
    with pytest.warns(ConvergenceWarning, match=r"step 2.*may not have conv") as rec:
        fit_cox(M, y, names=["age", "er_missing", "cluster_1"])
    assert len(rec) == 1
    message = str(rec[0].message)
    for text in (
        "lifelines reports: Column er_missing have very low variance when "
        "conditioned on death event present or not.",
        "Newton-Raphson convergence completed successfully but norm(delta)",
        "Likely cause: a covariate, or a level of a categorical one, that "
        "separates the outcome (few rows, or rows without events",
    ):
        assert text in message
    for text in ("lifelines documentation", "http", ">>>", "following code"):
        assert text not in message


@pytest.mark.parametrize("covariates", [None, ["age"]], ids=["genes", "covariates"])
def test_diverging_cox_weights_speak_of_the_estimators_parameters(
    monkeypatch, covariates
):
    """The penalized Cox path's error named compute_weights' l1_ratio, which
    VCPCR and VCPCRCV do not have; with covariates it now names the likely
    cause (a separating covariate level)."""
    from vcpcr._solvers import cox

    def diverge(*args, **kwargs):
        raise ArithmeticError("Numerical error, because weights are too large.")

    monkeypatch.setattr(cox, "_coxnet", diverge)
    data, y, _ = _copy_of_a_covariate()
    data["g0"] = np.random.default_rng(1).normal(size=len(data))
    model = VCPCR(2, family="cox", covariates=covariates, random_state=0)
    with pytest.raises(ValueError, match=r"The 'enet' weights \(step 0") as info:
        model.fit(data if covariates else data.drop(columns="age"), y)
    assert "l1_ratio" not in str(info.value)
    assert "elastic-net mixing" in str(info.value.__cause__)  # the path's message
    expected = "separates the outcome" if covariates else "Use weights='ridge'"
    assert expected in str(info.value)
    assert re.search(r"larger delta\b", str(info.value))
    cv = VCPCRCV((2,), family="cox", covariates=covariates, n_init=1, cv=3)
    with pytest.raises(
        ValueError, match=r"(?s)Most common.*'enet' weights.*larger deltas"
    ):
        cv.fit(data if covariates else data.drop(columns="age"), y)


@pytest.mark.slow
def test_survival_docs_print_what_they_show():
    """docs/survival.md's breast-cancer example prints the summary it pastes."""
    pytest.importorskip("sksurv.datasets")
    from conftest import doc_examples, printed_lines

    root = Path(__file__).resolve().parents[1]
    code, shown = doc_examples((root / "docs" / "survival.md").read_text())[0]
    printed = printed_lines(code)
    for line in shown.splitlines():
        assert line.rstrip() in printed, line


def _count_step2_fits(monkeypatch):
    """Count lifelines' fits and vcpcr's own Newton iterations on step 2."""
    from vcpcr._solvers import step2_fits

    calls = {"lifelines": 0, "newton": 0}
    fit, ascend = CoxPHFitter.fit, step2_fits._ascend

    def counted_fit(self, *args, **kwargs):
        calls["lifelines"] += 1
        return fit(self, *args, **kwargs)

    def counted_ascend(*args, **kwargs):
        calls["newton"] += 1
        return ascend(*args, **kwargs)

    monkeypatch.setattr(CoxPHFitter, "fit", counted_fit)
    monkeypatch.setattr(step2_fits, "_ascend", counted_ascend)
    return calls


@pytest.mark.parametrize("stratified", [False, True], ids=["plain", "strata"])
def test_monotone_read_from_lifelines_fit_as_the_folds_decide(monkeypatch, stratified):
    """``cox_monotone`` on lifelines' fit gives ``cox_batch``'s answer (its
    switch to Firth's estimate): False without a Newton iteration at an
    ordinary design's maximum; True on a design whose column is 1 on the
    earliest (tied) events; and False again from a point that is no maximum
    of the ordinary design (a fit that stopped short), by ``cox_batch``."""
    from vcpcr._outcome import fit_cox
    from vcpcr._solvers.step2_fits import cox_batch, cox_monotone

    rng = np.random.default_rng(11)
    n = 60
    time = np.round(rng.exponential(size=n), 1) + 0.1
    event = rng.uniform(size=n) < 0.7
    strata = np.repeat([0, 1], n // 2) if stratified else None
    ordinary = rng.normal(size=(n, 3))
    ordinary[:, 0] += np.log(time)  # a real effect
    separated = rng.normal(size=(n, 3))
    separated[:, 0] = 0.0
    for g in np.unique(strata if stratified else np.zeros(n)):
        rows = np.flatnonzero((strata if stratified else np.zeros(n)) == g)
        early = rows[np.argsort(time[rows], kind="stable")[:5]]
        separated[early, 0], event[early] = 1.0, True
        time[early] = time[early].min()
    frame = None if strata is None else pd.DataFrame({"s": strata})
    outcome = np.column_stack([time, event.astype(float)])
    calls = _count_step2_fits(monkeypatch)
    for M, monotone in [(ordinary, False), (separated, True)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lifelines' run-off warns
            fit = fit_cox(M, outcome, names=["a", "b", "c"], strata=frame)
        folds = cox_batch(M[None], time, event, strata=strata, firth=True)
        assert bool(folds.firth[0]) is monotone
        calls["newton"] = 0
        got = cox_monotone(M, time, event, fit.params_.to_numpy(), strata=strata)
        assert got is monotone
        assert (calls["newton"] > 0) is monotone  # the fallback only
    half = fit_cox(ordinary, outcome, names=["a", "b", "c"], strata=frame)
    calls["newton"] = 0
    start = 0.5 * half.params_.to_numpy()
    assert cox_monotone(ordinary, time, event, start, strata=strata) is False
    assert calls["newton"] == 1


def test_monotone_read_from_lifelines_agrees_with_the_folds_test():
    """On random designs, ordinary, exactly ordered (monotone), near-ordered
    and with a level without events, tied times and strata in some, large
    and small column scales, the separation read from lifelines' fit is
    ``cox_batch``'s (its switch to Firth's estimate). A sweep of 800 such
    designs agreed on all (#50 item 4); these are 32 of them."""
    from vcpcr._outcome import fit_cox
    from vcpcr._solvers.step2_fits import cox_batch, cox_monotone

    rng = np.random.default_rng(5)
    seen = set()
    for trial in range(32):
        n, k = int(rng.choice([20, 40, 80])), int(rng.integers(1, 4))
        M = rng.normal(size=(n, k))
        kind = trial % 4
        if kind == 0:  # ordinary
            time = rng.exponential(np.exp(-M @ rng.normal(0, 0.7, k)))
        elif kind == 1:  # column 0 orders the times exactly
            time = np.argsort(np.argsort(-M[:, 0])) + 1.0
        elif kind == 2:  # a strong effect
            time = rng.exponential(np.exp(-M[:, 0] * float(rng.choice([3, 6, 12]))))
        else:  # a binary column whose level 1 has no events
            M[:, 0] = rng.random(n) < 0.3
            time = rng.exponential(1, n)
        event = rng.random(n) < rng.choice([0.5, 0.9, 1.0])
        if kind == 3:
            event[M[:, 0] > 0] = False
        event[np.argmin(M[:, 0])] = True
        if rng.random() < 0.3:
            time = np.round(time, 1) + 0.1
        strata = np.arange(n) % 2 if rng.random() < 0.3 else None
        M *= float(rng.choice([1.0, 0.01, 100.0]))
        if np.linalg.matrix_rank(M) < k:
            continue
        folds = cox_batch(M[None], time, event, strata=strata, firth=True)
        expected = bool(folds.firth[0] or not folds.ok[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_cox(
                M,
                np.column_stack([time, event.astype(float)]),
                names=[f"c{j}" for j in range(k)],
                strata=None if strata is None else pd.DataFrame({"s": strata}),
            )
        got = cox_monotone(M, time, event, fit.params_.to_numpy(), strata=strata)
        assert got is expected, trial
        seen.add(expected)
    assert seen == {False, True}


@pytest.mark.parametrize("strata", [None, ["site"]])
def test_step2_is_fitted_once(monkeypatch, strata):
    """One ``VCPCR(family="cox").fit`` fits step 2 once: lifelines' fit,
    from which ``separated_`` is read (no Newton iteration of vcpcr's own);
    ``result_`` is that untouched fitter, and its coefficients and standard
    errors are those of a lifelines fit of the same design from scratch."""
    rng = np.random.default_rng(3)
    n = 120
    X = pd.DataFrame(rng.normal(size=(n, 8)), columns=[f"g{j}" for j in range(8)])
    X["age"] = rng.normal(60, 10, n)
    X["site"] = np.arange(n) % 3
    eta = 0.8 * X[["g0", "g1", "g2"]].mean(axis=1) + 0.02 * (X["age"] - 60)
    y = np.column_stack([rng.exponential(np.exp(-eta)), rng.random(n) < 0.7])
    if not strata:
        X = X.drop(columns="site")
    model = VCPCR(
        n_clusters=2, family="cox", covariates=["age"], strata=strata, random_state=0
    )
    calls = _count_step2_fits(monkeypatch)
    model.fit(X, y)
    assert calls == {"lifelines": 1, "newton": 0}
    assert not model.separated_
    assert type(model.result_) is CoxPHFitter
    # the fitter is lifelines' own: refit its data by hand, compare
    names = list(model.result_.params_.index)
    M = model.transform(X)
    design = np.column_stack([X[["age"]].to_numpy(), np.asarray(M)])
    data = pd.DataFrame(design, columns=names).assign(time=y[:, 0], event=y[:, 1])
    if strata:
        data["site"] = X["site"].to_numpy()
    ref = CoxPHFitter().fit(
        data,
        "time",
        "event",
        strata=strata,
        fit_options={"precision": 1e-12, "r_precision": 1e-14},
    )
    assert_allclose(model.result_.params_, ref.params_, rtol=1e-8)
    assert_allclose(model.result_.standard_errors_, ref.standard_errors_, rtol=1e-8)
    assert_allclose(
        model.result_.log_likelihood_ratio_test().test_statistic,
        ref.log_likelihood_ratio_test().test_statistic,
        rtol=1e-10,
    )


@pytest.mark.parametrize("stratified", [False, True])
def test_monotone_likelihood_is_said_not_shown_as_an_estimate(monkeypatch, stratified):
    """A refit whose partial likelihood is monotone (a gene orders the event
    times exactly) warns, sets ``separated_`` and says in the summary that its
    coefficient and p-value are not estimates; a nearby ordinary fit does not."""
    from vcpcr import SeparationWarning

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 6)), columns=[f"g{j}" for j in range(6)])
    order = np.argsort(np.argsort(-X["g0"].to_numpy()))
    y = np.column_stack([order + 1.0, np.ones(40)])
    params = {"n_clusters": 1, "family": "cox", "lam_ratio": 0.9, "random_state": 0}
    if stratified:  # every stratum keeps the order: still monotone
        X["site"] = np.arange(40) % 2
        params["strata"] = ["site"]
    model = VCPCR(**params)
    calls = _count_step2_fits(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    # lifelines' fit is no maximum: the folds' test decides by its own fit
    assert calls["lifelines"] == 1
    assert calls["newton"] >= 1
    separation = [w for w in caught if issubclass(w.category, SeparationWarning)]
    assert len(separation) == 1
    assert "monotone partial likelihood" in str(separation[0].message)
    assert {w.category for w in caught} <= {SeparationWarning, ConvergenceWarning}
    assert model.separated_
    assert "The partial likelihood is monotone" in str(model.summary())
    # times with a moderate effect of g0: an ordinary fit
    y[:, 0] = rng.exponential(np.exp(-0.5 * X["g0"].to_numpy()))
    y[:, 1] = rng.random(40) < 0.8
    model.fit(X, y)
    assert not model.separated_
    assert "monotone" not in str(model.summary())
