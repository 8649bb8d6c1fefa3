"""vcpcr.validation: increments over the clinical model in the same CV folds (#28).

Each metric is checked against an independent computation on the same fold
(lifelines' concordance, scikit-survival's Brier score on hand-built
survival functions, a naive partial likelihood), the increment of the
clinical model over itself is exactly 0, and bad input names the fix.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from conftest import needs_survival
from numpy.testing import assert_allclose

pytestmark = needs_survival


def _cohort(n=90, p=12, seed=0, gene_effect=0.0):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(n, p))
    age = rng.normal(size=n)
    er = rng.choice(["neg", "pos"], n)
    node = rng.choice(["0", "1"], n)
    eta = 0.8 * age + 0.6 * (er == "neg") + gene_effect * G[:, 0]
    t = rng.exponential(np.exp(-eta))
    c = rng.exponential(2.5, n)
    X = pd.DataFrame(G, columns=[f"g{j}" for j in range(p)])
    X.insert(0, "node", node)
    X.insert(0, "er", er)
    X.insert(0, "age", age)
    return X, np.column_stack([np.minimum(t, c), t <= c])


class ExpModel:
    """A hand-built survival model: S(t | x) = exp(-t exp(g0)), risk g0.

    Its step functions jump at ``knots`` (the data's times: exact there).
    """

    def __init__(self, knots=(0.0, 100.0)):
        self.knots = knots

    def get_params(self, deep=False):
        return {"knots": self.knots}

    def set_params(self, **params):
        return self

    def fit(self, X, y):
        return self

    def predict(self, X):
        return X["g0"].to_numpy(dtype=float)

    def predict_survival_function(self, X):
        from sksurv.functions import StepFunction

        grid = np.unique(np.r_[0.0, self.knots])
        return np.array(
            [StepFunction(grid, np.exp(-grid * np.exp(r))) for r in self.predict(X)]
        )


def _validate(estimator, X, y, **kw):
    from vcpcr.validation import validate_increment

    kw = {"cv": 3, "n_repeats": 1, "random_state": 0, "verbose": False, **kw}
    return validate_increment(estimator, X, y, **kw)


def test_clinical_fold_c_against_lifelines_concordance_index():
    from lifelines import CoxPHFitter
    from lifelines.utils import concordance_index

    from vcpcr.validation import ClinicalCox

    X, y = _cohort()
    res = _validate(ClinicalCox(covariates=["age"]), X, y, covariates=["age"])
    clinical = res.folds[res.folds["model"] == "clinical Cox"]
    for (train, test), c in zip(res.splits, clinical["Harrell C"], strict=True):
        frame = pd.DataFrame({"age": X["age"], "T": y[:, 0], "E": y[:, 1]})
        cph = CoxPHFitter().fit(frame.iloc[train], "T", "E")
        risk = cph.predict_partial_hazard(frame.iloc[test]).to_numpy()
        expected = concordance_index(y[test, 0], -risk, y[test, 1])
        assert_allclose(c, expected, rtol=1e-12, atol=0)


def test_increment_is_exactly_zero_for_the_clinical_model_itself():
    from vcpcr.validation import ClinicalCox

    X, y = _cohort()
    est = ClinicalCox(covariates=["age", "er"], strata="node")
    res = _validate(est, X, y, covariates=["age", "er"], strata="node", n_repeats=2)
    metrics = [
        c for c in res.fold_increments.columns if c not in {"model", "repeat", "fold"}
    ]
    values = res.fold_increments[metrics].to_numpy(dtype=float)
    assert np.all(values[np.isfinite(values)] == 0.0)
    assert (res.increments["status"] == "no gene in any fold").all()
    assert res.increments["ci_low"].isna().all()
    text = res.summary().as_text()
    assert "chose no gene in any fold: it is the clinical model" in text
    assert "no gene in any fold" in text


def test_ibs_and_ipa_against_sksurv_on_hand_built_survival_functions():
    from sksurv.metrics import integrated_brier_score
    from sksurv.nonparametric import kaplan_meier_estimator
    from sksurv.util import Surv

    X, y = _cohort(seed=1)
    res = _validate(ExpModel(y[:, 0]), X, y, covariates=["age"])
    ys = Surv.from_arrays(y[:, 1] > 0, y[:, 0])
    events = y[y[:, 1] > 0, 0]
    lo, hi = np.quantile(events, [0.1, 0.8])
    model = res.folds[res.folds["model"] == "ExpModel"]
    for (train, test), ibs, ipa in zip(
        res.splits, model["IBS"], model["IPA"], strict=True
    ):
        t_test, e_test = y[test, 0], y[test, 1] > 0
        end = min(y[train, 0].max(), t_test.max())
        grid = np.unique(t_test[e_test])
        grid = grid[(grid >= lo) & (grid <= hi) & (grid >= t_test.min()) & (grid < end)]
        surv = np.exp(-grid[None, :] * np.exp(X["g0"].to_numpy()[test])[:, None])
        # test rows after the last training time: censored there (stated rule)
        tau = y[train, 0].max()
        y_test = Surv.from_arrays(e_test & (t_test <= tau), np.minimum(t_test, tau))
        expected = integrated_brier_score(ys[train], y_test, surv, grid)
        assert_allclose(ibs, expected, rtol=1e-12, atol=0)
        km_t, km_s = kaplan_meier_estimator(ys[train]["event"], ys[train]["time"])
        km = np.array([km_s[km_t <= t][-1] if np.any(km_t <= t) else 1.0 for t in grid])
        ref = integrated_brier_score(
            ys[train], y_test, np.tile(km, (len(test), 1)), grid
        )
        assert_allclose(ipa, 1 - expected / ref, rtol=1e-10, atol=1e-12)


def _naive_loglik(eta, time, event):
    """Breslow = Efron without ties: sum over events of eta_i - log sum_{t_j >= t_i}."""
    return sum(
        eta[i] - np.log(np.sum(np.exp(eta[time >= time[i]])))
        for i in np.flatnonzero(event)
    )


def test_cvpl_against_a_naive_partial_likelihood():
    X, y = _cohort(seed=2)
    res = _validate(ExpModel(), X, y, covariates=["age"])
    model = res.folds[res.folds["model"] == "ExpModel"]
    eta, time, event = X["g0"].to_numpy(), y[:, 0], y[:, 1] > 0
    for (train, _), cvpl in zip(res.splits, model["CVPL"], strict=True):
        expected = _naive_loglik(eta, time, event) - _naive_loglik(
            eta[train], time[train], event[train]
        )
        assert_allclose(cvpl, expected, rtol=1e-10, atol=0)


def test_increments_are_the_paired_differences_and_intervals_their_formula():
    from vcpcr.validation import increment_interval

    X, y = _cohort(seed=3, gene_effect=1.0)
    res = _validate(
        ExpModel(), X, y, covariates=["age"], n_repeats=2, interval="corrected_t"
    )
    folds = res.folds.set_index(["repeat", "fold", "model"])["Harrell C"].unstack()
    d = (folds["ExpModel"] - folds["clinical Cox"]).to_numpy()
    row = res.increments.loc[("ExpModel", "Harrell C")]
    assert_allclose(row["increment"], d.mean(), rtol=1e-12, atol=0)
    s = d.std(ddof=1)
    n_test = np.mean([len(te) for _, te in res.splits])
    n_train = np.mean([len(tr) for tr, _ in res.splits])
    assert_allclose(
        row["se"], s * np.sqrt(1 / 6 + n_test / n_train), rtol=1e-12, atol=0
    )
    se, lo, hi, p = increment_interval(
        d, n_train=n_train, n_test=n_test, method="one_fold"
    )
    assert_allclose(se, s * np.sqrt(1 + 1 / 6), rtol=1e-12, atol=0)
    assert lo < d.mean() < hi
    assert 0 <= p <= 1
    ibs = res.increments.loc[("ExpModel", "IBS")]  # lower is better: the test flips
    assert ibs["status"] == "lower is better"
    assert (ibs["increment"] < 0) == (ibs["p"] < 0.5)


def test_vcpcr_is_deterministic_with_a_seed_and_reads_its_clinical_columns():
    from vcpcr import VCPCR

    X, y = _cohort(n=80, p=20, seed=4, gene_effect=1.0)
    est = VCPCR(
        family="cox", n_clusters=2, n_init=2, covariates=["age", "er"], strata="node"
    )
    first = _validate(est, X, y)
    second = _validate(est, X, y)
    pd.testing.assert_frame_equal(first.folds, second.folds)
    assert first.covariates == ["age", "er"]
    assert first.strata == ["node"]
    assert (first.folds.loc[first.folds["model"] == "VCPCR", "n_genes"] > 0).all()
    assert "VCPCR minus clinical Cox" in first.summary().as_text()


def _numbers(result):
    """Every number of a result's folds, keyed by repeat, fold and model."""
    return result.folds.drop(columns="error").set_index(["repeat", "fold", "model"])


_FORMULAS = {
    "covariates": ("Surv(time, event) ~ age + er | .", None, {}),
    "strata_term": (
        "Surv(time, event) ~ age + er + strata(node) | .",
        None,
        {"strata": "node"},
    ),
    "strata_param": ("Surv(time, event) ~ age + er | .", "node", {"strata": "node"}),
}


@pytest.mark.parametrize("interval", ["one_fold", "corrected_t"])
def test_each_models_mean_c_has_the_increments_interval(interval):
    """#48 item 5: the mean over the folds of every metric (Harrell's C
    among them) has an interval, computed by hand here from the per-fold
    values: mean -/+ t_{J-1} s sqrt(factor) with the one-fold factor 1 + 1/J
    or Nadeau & Bengio's 1/J + n_test/n_train; the summary prints those of
    Harrell's and Uno's C, and increments_with changes them."""
    from scipy import stats

    X, y = _cohort(gene_effect=0.8)
    res = _validate(
        _gene_model(), X, y, covariates=["age", "er"], n_repeats=2, interval=interval
    )
    J = 6
    factor = {"one_fold": 1 + 1 / J, "corrected_t": 1 / J + 30 / 60}[interval]
    q = stats.t.ppf(0.975, J - 1)
    for (model, metric), row in res.metrics.iterrows():
        values = res.folds.loc[res.folds["model"] == model, metric].to_numpy(float)
        se = np.std(values, ddof=1) * np.sqrt(factor)
        assert_allclose(row["se"], se, rtol=1e-12)
        low, high = values.mean() - q * se, values.mean() + q * se
        if metric in ("Harrell C", "Uno C", "IBS") or metric.startswith("AUC("):
            low, high = max(low, 0.0), min(high, 1.0)  # where a C lies
        assert_allclose([row["ci_low"], row["ci_high"]], [low, high], rtol=1e-12)
    text = res.summary().as_text()
    assert f"Mean C over the test folds (95% interval, {interval})" in text
    c = res.metrics.loc[("ClinicalCox", "Harrell C")]
    shown = f"{c['mean']:.4f}  {c['ci_low']:.4f}  {c['ci_high']:.4f}"
    rows = [line for line in text.splitlines() if line.startswith("ClinicalCox")]
    assert any(shown in line for line in rows)
    other = res.increments_with(interval="naive")
    assert other.metrics.loc[("ClinicalCox", "Harrell C"), "se"] < c["se"]


def test_a_mean_c_interval_stays_in_the_unit_interval():
    """Four folds' C of 0.5 to 1: mean -/+ t s sqrt(1 + 1/J) passes 1, and
    is cut there (CVPL, unbounded, is not cut)."""
    from vcpcr._increment import _increments

    c = [0.5, 1.0, 0.9, 0.95]
    rows = [
        {
            "repeat": 0,
            "fold": k,
            "model": m,
            "Harrell C": v,
            "CVPL": -50 * v,
            "n_genes": 1.0,
            "error": None,
        }
        for k, v in enumerate(c)
        for m in ("clinical Cox", "model")
    ]
    splits = [(np.arange(30), np.arange(10))] * 4
    metrics, _, _ = _increments(
        pd.DataFrame(rows), ["Harrell C", "CVPL"], splits, "one_fold", 0.05
    )
    from scipy import stats

    half = stats.t.ppf(0.975, 3) * np.std(c, ddof=1) * np.sqrt(1 + 1 / 4)
    row = metrics.loc[("model", "Harrell C")]
    assert row["ci_high"] == 1.0 < np.mean(c) + half
    assert row["ci_low"] == pytest.approx(np.mean(c) - half, rel=1e-12)
    assert metrics.loc[("model", "CVPL"), "ci_low"] == pytest.approx(
        -50 * np.mean(c) - 50 * half, rel=1e-12
    )


@pytest.mark.parametrize(
    ("formula", "strata", "extra"), _FORMULAS.values(), ids=_FORMULAS.keys()
)
def test_a_formula_estimator_equals_the_same_model_with_covariates(
    formula, strata, extra
):
    """#48 item 3: the formula's clinical part is the clinical model. The
    fold-by-fold numbers of all three models (clinical Cox, VCPCR, Coxnet:
    the formula's design, its clinical part unpenalized), the increments,
    the names and the printed summary equal those of the same estimator
    written with covariates= and strata= on the same seed."""
    from vcpcr import VCPCR

    X, y = _cohort(n=90, p=12, seed=4, gene_effect=1.0)
    data = X.assign(time=y[:, 0], event=y[:, 1])
    params = {"family": "cox", "n_clusters": 2, "n_init": 2, "lam_ratio": 0.3}
    by_columns = _validate(
        VCPCR(**params, covariates=["age", "er"], **extra), X, y, coxnet=True
    )
    by_formula = _validate(
        VCPCR(**params, formula=formula, strata=strata), data, None, coxnet=True
    )
    assert (by_formula.covariates, by_formula.strata) == (
        by_columns.covariates,
        by_columns.strata,
    )
    assert by_formula.strata == ([extra["strata"]] if extra else [])
    assert set(by_formula.folds["model"]) == {"clinical Cox", "VCPCR", "Coxnet"}
    assert by_formula.folds["error"].isna().all()
    assert_allclose(
        _numbers(by_formula).to_numpy(float),
        _numbers(by_columns).to_numpy(float),
        rtol=1e-9,
        atol=1e-12,
    )
    pd.testing.assert_index_equal(
        _numbers(by_formula).index, _numbers(by_columns).index
    )
    assert by_formula.summary().as_text() == by_columns.summary().as_text()


def test_a_formula_with_transformed_terms_fits_its_clinical_part():
    """A clinical term that is no column (np.log(age + 5), C(node) of a
    numeric column) is named by its text, and the clinical model is the Cox
    model of those terms: equal to ClinicalCox on the columns computed by
    hand, in every fold."""
    from vcpcr import VCPCR
    from vcpcr.validation import ClinicalCox

    X, y = _cohort(n=90, p=12, seed=4, gene_effect=1.0)
    data = X.assign(node=X["node"].astype(int), time=y[:, 0], event=y[:, 1])
    formula = "Surv(time, event) ~ np.log(age + 5) + C(node) | . - er"
    est = VCPCR(family="cox", n_clusters=2, n_init=2, formula=formula)
    res = _validate(est, data, None)
    assert res.covariates == ["np.log(age + 5)", "node"]
    hand = X.assign(log_age=np.log(X["age"] + 5))  # node stays a string column
    ref = _validate(ClinicalCox(covariates=["log_age", "node"]), hand, y)
    clinical = _numbers(res).xs("clinical Cox", level="model")
    assert_allclose(
        clinical.to_numpy(float),
        _numbers(ref).xs("clinical Cox", level="model").to_numpy(float),
        rtol=1e-9,
        atol=1e-12,
    )


def test_a_formula_without_a_clinical_model_names_the_fix():
    from vcpcr import VCPCR

    X, y = _cohort()
    data = X.assign(time=y[:, 0], event=y[:, 1])
    est = VCPCR(family="cox", formula="Surv(time, event) ~ .")
    with pytest.raises(ValueError, match=r"has no clinical part.*left of '\|'"):
        _validate(est, data, None)
    with_clinic = est.set_params(formula="Surv(time, event) ~ age | .")
    with pytest.raises(ValueError, match="Name the clinical columns in one place"):
        _validate(with_clinic, data, None, covariates=["age"])
    with pytest.raises(ValueError, match="pass no y"):
        _validate(with_clinic, data, y)
    with pytest.raises(TypeError, match="must be a pandas DataFrame"):
        _validate(with_clinic, data.to_numpy(), None)
    with pytest.raises(ValueError, match="y is required"):
        _validate(VCPCR(family="cox", covariates=["age"]), X, None)


def test_plot_draws_one_panel_per_metric():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = _cohort(seed=5)
    res = _validate(ExpModel(), X, y, covariates=["age"])
    axes = res.plot()
    n_metrics = res.increments.index.get_level_values("metric").nunique()
    assert sum(ax.get_visible() for ax in axes) == n_metrics
    plt.close("all")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"covariates": None}, ValueError, "needs the clinical columns"),
        ({"covariates": ["ages"]}, ValueError, r"X has no columns \['ages'\]"),
        ({"cv": 1}, ValueError, "'cv' parameter of validate_increment"),
        ({"interval": "wald"}, ValueError, "'interval' parameter"),
        ({"alpha": 1.5}, ValueError, "'alpha' parameter"),
    ],
    ids=["no-clinical", "unknown-column", "cv", "interval", "alpha"],
)
def test_bad_parameters_name_the_fix(kwargs, error, match):
    X, y = _cohort()
    with pytest.raises(error, match=match):
        _validate(ExpModel(), X, y, **{"covariates": ["age"], **kwargs})


def test_bad_estimators_and_data_name_the_fix():
    from vcpcr import VCPCR
    from vcpcr._families import FAMILIES

    X, y = _cohort()
    # a gaussian model with a survival outcome (the binomial and gaussian
    # families are validated against their own clinical model)
    survival_hint = "1-d for family='gaussian'.*needs a model with family='cox'"
    with pytest.raises(ValueError, match=survival_hint):
        _validate(VCPCR(covariates=["age"]), X, y)
    gaussian = FAMILIES["gaussian"]  # a family object reads as its name
    with pytest.raises(ValueError, match=survival_hint):
        _validate(VCPCR(family=gaussian, covariates=["age"]), X, y)
    with pytest.raises(ValueError, match="family 'cox', 'binomial' or 'gaussian'"):
        _validate(VCPCR(family="poisson", covariates=["age"]), X, y)
    with pytest.raises(TypeError, match="fit and predict"):
        _validate(object(), X, y, covariates=["age"])
    Xm = X.copy()
    Xm.loc[3, "age"] = np.nan
    with pytest.raises(
        ValueError, match=r"missing values \{'age': 1\}; drop or impute"
    ):
        _validate(ExpModel(), Xm, y, covariates=["age"])
    with pytest.raises(ValueError, match="X has 90 rows but y has 89"):
        _validate(ExpModel(), X, y[:-1], covariates=["age"])


@pytest.mark.slow
def test_folds_do_not_depend_on_n_jobs():
    from vcpcr import VCPCR

    X, y = _cohort(n=90, p=30, seed=4, gene_effect=1.0)
    est = VCPCR(family="cox", n_clusters=2, n_init=2, covariates=["age", "er"])
    one = _validate(est, X, y, n_repeats=2)
    two = _validate(est, X, y, n_repeats=2, n_jobs=2)
    pd.testing.assert_frame_equal(one.folds, two.folds)


class SpyModel(ExpModel):
    """Records the rows of every fit (a class attribute: clones share it)."""

    fitted_rows: ClassVar[list] = []

    def fit(self, X, y):
        SpyModel.fitted_rows.append(np.asarray(X.index))
        return self


def test_the_estimator_is_fitted_on_the_training_rows_only():
    X, y = _cohort(seed=6)
    SpyModel.fitted_rows = []
    res = _validate(SpyModel(), X, y, covariates=["age"], n_repeats=2)
    assert len(SpyModel.fitted_rows) == len(res.splits) == 6
    for rows, (train, test) in zip(SpyModel.fitted_rows, res.splits, strict=True):
        np.testing.assert_array_equal(rows, train)
        assert np.intersect1d(rows, test).size == 0
    for _, test in res.splits[:3]:  # the first repeat's test folds: a partition
        assert np.bincount(test, minlength=len(X)).max() == 1
    events = y[:, 1] > 0
    shares = [events[test].mean() for _, test in res.splits]
    assert max(shares) - min(shares) < 0.1  # stratified by event


class FailingModel(ExpModel):
    """:class:`ExpModel` that refuses a training set holding all ``bad_rows``."""

    def __init__(self, knots=(0.0, 100.0), bad_rows=()):
        self.knots, self.bad_rows = knots, bad_rows

    def get_params(self, deep=False):
        return {"knots": self.knots, "bad_rows": self.bad_rows}

    def fit(self, X, y):
        if set(self.bad_rows) <= set(X.index):
            raise ValueError(f"X contains NaN in row(s) {list(self.bad_rows)}")
        return self


def test_failed_folds_warn_and_the_means_are_paired():
    """A model failing in one fold of three: one warning, and every model's
    mean over the two folds where all were fitted; in most folds: an error.
    (Before: no warning, and the clinical mean over 3 folds beside the
    model's over 2.)"""
    from vcpcr.exceptions import VCPCRWarning

    X, y = _cohort(seed=2)
    knots = tuple(np.unique(y[:, 0]))
    splits = _validate(ExpModel(knots), X, y, covariates=["age"]).splits
    row = [int(te[0]) for _, te in splits]  # a test row of each fold
    # row[0] is in the training rows of folds 1 and 2
    with pytest.raises(ValueError, match=r"on 2 of 3 folds failed.*NaN"):
        _validate(FailingModel(knots, (row[0],)), X, y, covariates=["age"])
    # rows 0 and 1 are both in the training rows of fold 2 only
    with pytest.warns(VCPCRWarning, match=r"on 1 of 3 folds failed.*NaN"):
        res = _validate(FailingModel(knots, (row[0], row[1])), X, y, covariates=["age"])
    means = res.metrics["mean"].unstack(0)
    ok = res.folds[res.folds["fold"] != 2]
    for model in means.columns:
        c = ok.loc[ok["model"] == model, "Harrell C"]
        assert len(c) == 2
        assert means.loc["Harrell C", model] == pytest.approx(c.mean())


# 9 events in 10 stratified folds: one fold gets none (the point of the test)
@pytest.mark.filterwarnings("ignore:The least populated class:UserWarning")
def test_a_fold_that_cannot_define_a_metric_keeps_the_others():
    """With 9 events in 10 folds, a fold without a test event (or whose one
    event comes after tau) lost every metric and was reported as a failed
    fit: which folds entered the means then depended on the outcome."""
    from vcpcr import VCPCR
    from vcpcr.simulate import make_block_data
    from vcpcr.validation import validate_increment

    sim = make_block_data(
        120,
        [1, 10],
        [0.7, 0.3],
        n_noise=20,
        family="cox",
        censoring=0.95,
        random_state=0,
    )
    X = pd.DataFrame(sim.X, columns=["age", *[f"g{j}" for j in range(30)]])
    y = np.column_stack([sim.y, sim.event])
    template = VCPCR(
        family="cox", n_clusters=2, lam_ratio=0.5, n_init=1, covariates=["age"]
    )
    from vcpcr.exceptions import VCPCRWarning

    # IBS and IPA are defined on no fold here: said, not left as silent NaN
    with pytest.warns(VCPCRWarning, match="IBS: lower is better; defined in 0 of"):
        res = validate_increment(template, X, y, cv=10, n_repeats=1, random_state=0)
    folds = res.folds
    assert folds["error"].isna().all()  # no fold is a failed fit
    assert folds["CVPL"].notna().all()  # defined on every fold
    events = [int(sim.event[test].sum()) for _, test in res.splits]
    no_event = [i for i, k in enumerate(events) if k == 0]
    assert no_event  # the design has a fold without a test event
    harrell = folds.pivot(index="fold", columns="model", values="Harrell C")
    assert harrell.loc[no_event].isna().all().all()
    assert harrell.drop(index=no_event).notna().all().all()
    # Uno's C is undefined on more folds (events after tau), Harrell's stands
    uno = folds.pivot(index="fold", columns="model", values="Uno C")
    assert (uno.isna() & harrell.notna()).any().any()


def test_validate_increment_warns_of_increments_without_a_p_value():
    """Metrics undefined in every fold (all follow-up times 0) gave NaN
    increments and p-values without a word (#46 fuzz)."""
    from vcpcr import VCPCR
    from vcpcr.exceptions import VCPCRWarning
    from vcpcr.validation import validate_increment

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 7)), columns=[*"abcdef", "age"])
    y = np.column_stack([np.zeros(40), rng.uniform(size=40) < 0.8])
    template = VCPCR(2, family="cox", n_init=1, random_state=0)
    with pytest.warns(VCPCRWarning, match="have no p-value") as record:
        res = validate_increment(
            template, X, y, covariates="age", cv=2, n_repeats=1, random_state=0
        )
    said = " ".join(str(w.message) for w in record)
    untested = res.increments[res.increments["p"].isna()]
    assert len(untested) > 0
    for (model, metric), status in untested["status"].items():
        assert "no interval" in status or "no p-value" in status
        assert f"{model} {metric}: {status}" in said


def test_increment_interval_of_equal_increments_has_no_p_value():
    """Increments equal up to rounding gave se 9e-18 and p 8e-49 (#46 row 10):
    the ratio of rounding errors is no test."""
    from vcpcr.validation import increment_interval

    se, lo, hi, p = increment_interval(
        [0.1, 0.1, 0.1 + 1e-17, 0.1], n_train=80, n_test=20
    )
    assert se == 0.0
    assert_allclose([lo, hi], [0.1, 0.1], rtol=1e-12)
    assert np.isnan(p)


def test_increment_interval_of_empty_or_single_increments_is_not_silent():
    """An empty d gave four NaN, and one non-NaN increment too, without a word."""
    from vcpcr.exceptions import VCPCRWarning
    from vcpcr.validation import increment_interval

    with pytest.raises(ValueError, match="d is empty"):
        increment_interval([], n_train=80, n_test=20)
    for d in ([np.nan, 0.1], [0.1], [np.nan, np.nan]):
        with pytest.warns(VCPCRWarning, match="a standard error needs at least 2"):
            out = increment_interval(d, n_train=80, n_test=20)
        assert np.isnan(out).all()


def test_increment_interval_refuses_infinite_increments():
    """Infinite increments were dropped silently, as NaN ones (#46 row 10)."""
    from vcpcr.validation import increment_interval

    d = [0.1, np.inf, 0.2, -np.inf, np.nan, 0.05]
    with pytest.raises(ValueError, match="d contains infinity in 2 of 5 values"):
        increment_interval(d, n_train=80, n_test=20)


def test_validate_increment_and_clinical_cox_name_bad_frames_and_cv():
    """A MultiIndex's columns ("The truth value of a Series is ambiguous"), a
    3-d X ("Must pass 2-d input"), cv above the rows (scikit-learn's splitter)
    and ClinicalCox's missing or NaN clinical columns (pandas' KeyError,
    lifelines' "NaNs were detected") were foreign errors (#46 fuzz)."""
    from vcpcr import VCPCR
    from vcpcr.validation import ClinicalCox

    X, y = _cohort()
    template = VCPCR(2, family="cox", n_init=1, random_state=0)
    multi = X.set_axis(pd.MultiIndex.from_tuples([(c, "a") for c in X.columns]), axis=1)
    for Xb, cv, error, match in [
        (multi, 3, TypeError, "column names must be strings"),
        (X.drop(columns=["er", "node"]).to_numpy()[:, :, None], 3, ValueError, "2-d"),
        (X, 500, ValueError, "'cv' parameter of validate_increment must be an int"),
    ]:
        with pytest.raises(error, match=match):
            _validate(template, Xb, y, covariates=["age"], cv=cv)
    with pytest.raises(ValueError, match=r"X has no columns \['nope'\]"):
        ClinicalCox(covariates="nope").fit(X, y)
    Xn = X.copy()
    Xn.loc[3, "age"] = np.nan
    with pytest.raises(ValueError, match=r"missing values \{'age': 1\}"):
        ClinicalCox(covariates="age").fit(Xn, y)


# ------------------------------------------------------- long runs (#48 item 2)
def _gene_model():
    from vcpcr.validation import ClinicalCox

    return ClinicalCox(covariates=["age", "er", "g0"])


def _interrupt_after(monkeypatch, n_done):
    """Make the fold after the first ``n_done`` raise KeyboardInterrupt."""
    import vcpcr._increment as increment

    real, calls = increment._fold_task, []

    def fold_task(*args):
        calls.append(1)
        if len(calls) > n_done:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(increment, "_fold_task", fold_task)


def _assert_same(a, b):
    pd.testing.assert_frame_equal(a.folds, b.folds, check_exact=True)
    pd.testing.assert_frame_equal(a.increments, b.increments, check_exact=True)
    pd.testing.assert_frame_equal(
        a.fold_increments, b.fold_increments, check_exact=True
    )
    assert a.notes == b.notes


def test_an_interrupted_run_returns_the_finished_folds_marked_incomplete(
    monkeypatch,
):
    X, y = _cohort(gene_effect=0.8)
    full = _validate(_gene_model(), X, y, covariates=["age", "er"], n_repeats=2)
    _interrupt_after(monkeypatch, 4)
    with pytest.warns(UserWarning, match=r"interrupted: 4 of 6 tasks finished"):
        part = _validate(_gene_model(), X, y, covariates=["age", "er"], n_repeats=2)
    assert full.complete
    assert not part.complete
    assert len(part.splits) == 4
    assert "complete=False" in repr(part)
    assert any(n.startswith("Incomplete: ") for n in part.notes)
    # the finished folds are those of the full run, row for row
    keep = full.folds["repeat"] * 3 + full.folds["fold"] < 4
    pd.testing.assert_frame_equal(
        part.folds, full.folds[keep].reset_index(drop=True), check_exact=True
    )


def test_an_interrupt_before_any_fold_finished_is_raised(monkeypatch):
    X, y = _cohort()
    _interrupt_after(monkeypatch, 0)
    with pytest.raises(KeyboardInterrupt):
        _validate(_gene_model(), X, y, covariates=["age", "er"])


def test_a_resumed_run_equals_an_uninterrupted_one_exactly(monkeypatch, tmp_path):
    X, y = _cohort(gene_effect=0.8)
    kw = {"covariates": ["age", "er"], "n_repeats": 2}
    full = _validate(_gene_model(), X, y, **kw)
    path = tmp_path / "folds.jsonl"
    with monkeypatch.context() as patch:
        _interrupt_after(patch, 2)
        with pytest.warns(UserWarning, match=r"2 of 6 tasks .* checkpoint"):
            _validate(_gene_model(), X, y, checkpoint=path, **kw)
    assert len(path.read_text().splitlines()) == 3  # the header and two folds
    import vcpcr._increment as increment

    real, calls = increment._fold_task, []
    monkeypatch.setattr(increment, "_fold_task", lambda *a: calls.append(1) or real(*a))
    resumed = _validate(_gene_model(), X, y, checkpoint=path, **kw)
    assert len(calls) == 4  # only the folds the file did not hold
    assert resumed.complete
    _assert_same(resumed, full)
    again = _validate(_gene_model(), X, y, checkpoint=path, **kw)
    assert len(calls) == 4  # all held: nothing runs
    _assert_same(again, full)


def test_a_checkpoint_of_other_data_or_parameters_is_refused(tmp_path):
    X, y = _cohort()
    path = tmp_path / "folds.jsonl"
    _validate(_gene_model(), X, y, covariates=["age", "er"], checkpoint=path)
    changed = X.copy()
    changed.loc[0, "g0"] += 1.0
    match = r"written by validate_increment for other data or parameters"
    for kw in (
        {"X": changed},
        {"random_state": 1},
        {"cv": 4},
        {"estimator": type(_gene_model())(covariates=["age", "g0"])},
    ):
        args = {"estimator": _gene_model(), "X": X, "random_state": 0, **kw}
        with pytest.raises(ValueError, match=match):
            _validate(
                args.pop("estimator"),
                args.pop("X"),
                y,
                covariates=["age", "er"],
                checkpoint=path,
                **args,
            )
    (tmp_path / "other.jsonl").write_text("not json\n")
    with pytest.raises(ValueError, match=r"is not a vcpcr checkpoint file"):
        _validate(
            _gene_model(),
            X,
            y,
            covariates=["age", "er"],
            checkpoint=tmp_path / "other.jsonl",
        )
    with pytest.raises(ValueError, match=r"needs an int random_state"):
        _validate(
            _gene_model(),
            X,
            y,
            covariates=["age", "er"],
            checkpoint=path,
            random_state=None,
        )


def test_verbose_prints_counts_and_an_eta_to_stderr(capsys, monkeypatch):
    import vcpcr._parallel as parallel

    monkeypatch.setattr(parallel, "PROGRESS_INTERVAL", 0.0)  # a line per fold
    X, y = _cohort()
    _validate(_gene_model(), X, y, covariates=["age", "er"], verbose=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "[vcpcr] validate_increment: 3 tasks of 2 fit(s)"
    assert lines[1].startswith("[vcpcr] validate_increment: 1/3 tasks done (33%), ")
    assert "elapsed, about " in lines[1]
    assert lines[1].endswith(" left")
    assert lines[-1].startswith("[vcpcr] validate_increment: 3/3 tasks done (100%)")
    assert lines[-1].endswith("elapsed, done")
    _validate(_gene_model(), X, y, covariates=["age", "er"], verbose=False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("interval", ["corrected_t", "naive", "one_fold"])
def test_increments_with_equals_the_run_with_that_interval(interval):
    X, y = _cohort(gene_effect=0.8)
    kw = {"covariates": ["age", "er"], "n_repeats": 2}
    ran = _validate(_gene_model(), X, y, **kw)
    direct = _validate(_gene_model(), X, y, interval=interval, alpha=0.1, **kw)
    later = ran.increments_with(interval=interval, alpha=0.1)
    assert later.interval == interval
    assert later.alpha == 0.1
    _assert_same(later, direct)
    pd.testing.assert_frame_equal(later.metrics, direct.metrics, check_exact=True)
    assert str(later.summary()) == str(direct.summary())
    assert ran.interval == "one_fold"  # the original is unchanged
    with pytest.raises(ValueError, match=r"'interval' parameter"):
        ran.increments_with(interval="bootstrap")


# ----------------------------------------------------- binomial and gaussian
def _glm_cohort(family, n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 6)), columns=[*"abcde", "age"])
    X["sex"] = rng.choice(["f", "m"], n)
    lp = X["a"] + X["b"] + 0.8 * X["age"] + 0.5 * (X["sex"] == "m")
    if family == "binomial":
        y = np.where(rng.random(n) < 1 / (1 + np.exp(-lp)), "yes", "no")
    else:
        y = (lp + rng.normal(size=n)).to_numpy()
    return X, y


def _sklearn_clinical(family, X, y):
    """The clinical model by scikit-learn (an independent fit)."""
    from sklearn.linear_model import LinearRegression, LogisticRegression

    design = pd.DataFrame({"age": X["age"], "sex[m]": (X["sex"] == "m") * 1.0})
    if family == "binomial":
        return design, LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000)
    return design, LinearRegression()


@pytest.mark.parametrize("family", ["binomial", "gaussian"])
def test_clinical_glm_against_sklearn(family):
    from vcpcr.validation import ClinicalGLM

    X, y = _glm_cohort(family)
    model = ClinicalGLM(["age", "sex"], family=family).fit(X, y)
    design, ref = _sklearn_clinical(family, X, y)
    ref.fit(design, y)
    coef = np.r_[np.ravel(ref.intercept_), np.ravel(ref.coef_)]
    assert_allclose(model.result_.params.to_numpy(), coef, rtol=1e-5, atol=1e-7)
    if family == "binomial":
        assert list(model.classes_) == ["no", "yes"]
        assert_allclose(
            model.predict_proba(X), ref.predict_proba(design), rtol=1e-5, atol=1e-7
        )
        assert set(model.predict(X)) <= {"no", "yes"}
    else:
        assert_allclose(model.predict(X), ref.predict(design), rtol=1e-8, atol=1e-8)
        with pytest.raises(ValueError, match="needs family='binomial'"):
            model.predict_proba(X)


@pytest.mark.parametrize("family", ["binomial", "gaussian"])
def test_glm_increments_against_sklearn_metrics(family):
    """The clinical model's per-fold metrics are scikit-learn's on the same
    folds (an independent fit); each increment is model minus clinical."""
    from sklearn import metrics

    from vcpcr import VCPCR
    from vcpcr.validation import validate_increment

    X, y = _glm_cohort(family)
    est = VCPCR(
        family=family, n_clusters=2, n_init=1, lam_ratio=0.3, covariates=["age", "sex"]
    )
    res = validate_increment(est, X, y, cv=3, n_repeats=2, random_state=0)
    clinical = {"binomial": "clinical logistic", "gaussian": "clinical linear"}[family]
    assert res.family == family
    assert res.clinical == clinical
    names = {"binomial": ["AUC", "Brier"], "gaussian": ["R2", "RMSE"]}[family]
    assert list(res.increments.index.get_level_values("metric")) == names
    design, ref = _sklearn_clinical(family, X, y)
    folds = res.folds[res.folds["model"] == clinical].reset_index(drop=True)
    for k, (train, test) in enumerate(res.splits):
        ref.fit(design.iloc[train], y[train])
        if family == "binomial":
            if k == 0:  # stratified on the labels
                assert abs((y[test] == "yes").mean() - (y == "yes").mean()) < 0.05
            p = ref.predict_proba(design.iloc[test])[:, 1]
            expected = [
                metrics.roc_auc_score(y[test] == "yes", p),
                metrics.brier_score_loss(y[test] == "yes", p),
            ]
        else:
            pred = ref.predict(design.iloc[test])
            expected = [
                metrics.r2_score(y[test], pred),
                metrics.root_mean_squared_error(y[test], pred),
            ]
        assert_allclose(folds.loc[k, names].to_numpy(float), expected, rtol=1e-5)
    d = res.fold_increments[names].to_numpy(float)
    model = res.folds[res.folds["model"] == "VCPCR"][names].to_numpy(float)
    assert_allclose(d, model - folds[names].to_numpy(float), rtol=1e-12)
    assert "minus " + clinical in str(res.summary())
    assert res.n_events == (int((y == "yes").sum()) if family == "binomial" else None)


def test_glm_increment_refuses_cox_only_options():
    from vcpcr import VCPCR
    from vcpcr.validation import validate_increment

    X, y = _glm_cohort("binomial")
    est = VCPCR(family="binomial", covariates=["age"])
    with pytest.raises(ValueError, match=r"'strata' parameter.*family='cox' only"):
        validate_increment(est, X, y, strata="sex", cv=3, n_repeats=1)
    with pytest.raises(ValueError, match=r"'coxnet'.*family='cox' only"):
        validate_increment(est, X, y, coxnet=True, cv=3, n_repeats=1)
    with pytest.raises(ValueError, match="exactly two labels"):
        validate_increment(est, X, np.arange(len(y)) % 3, cv=3, n_repeats=1)


@pytest.mark.parametrize("family", ["binomial", "gaussian"])
def test_a_glm_formula_estimator_equals_the_same_model_with_covariates(family):
    """#48 item 3 for the other families: the formula's clinical part (age,
    sex left of '|') is the clinical logistic or linear model; every fold's
    numbers, the names and the summary equal those of covariates=; the
    binomial summary prints the mean AUC (its C) with its interval."""
    from vcpcr import VCPCR

    X, y = _glm_cohort(family)
    params = {"family": family, "n_clusters": 2, "n_init": 1, "lam_ratio": 0.3}
    by_columns = _validate(VCPCR(**params, covariates=["age", "sex"]), X, y)
    formula = "outcome ~ age + sex | ."
    by_formula = _validate(VCPCR(**params, formula=formula), X.assign(outcome=y), None)
    assert by_formula.covariates == by_columns.covariates == ["age", "sex"]
    assert_allclose(
        _numbers(by_formula).to_numpy(float),
        _numbers(by_columns).to_numpy(float),
        rtol=1e-9,
        atol=1e-12,
    )
    text = by_formula.summary().as_text()
    assert text == by_columns.summary().as_text()
    assert ("Mean C over the test folds" in text) == (family == "binomial")


def test_a_stratum_too_small_for_the_nested_folds_is_refused_before_any_fit(
    monkeypatch,
):
    """validate_increment's folds of a stratified model are stratified by
    stratum and event, and a VCPCRCV (which re-tunes by CV in each training
    fold) on a stratum with 2 events is refused before the first fit, with
    the stratum, its events and the fix."""
    from vcpcr import VCPCRCV
    from vcpcr.validation import validate_increment

    rng = np.random.default_rng(3)
    n, small = 90, 24
    X = pd.DataFrame(rng.normal(size=(n, 8)), columns=[f"g{j}" for j in range(8)])
    X["age"] = rng.normal(size=n)
    X["node"] = np.r_[np.ones(small), np.zeros(n - small)]
    event = (rng.random(n) < 0.7).astype(float)
    event[:small] = 0.0
    event[[3, 11]] = 1.0
    y = np.column_stack([rng.exponential(size=n), event])
    fits = []
    monkeypatch.setattr(VCPCRCV, "fit", lambda self, *a, **k: fits.append(self))
    est = VCPCRCV(family="cox", n_clusters=(2,), covariates="age", strata="node")
    with pytest.raises(
        ValueError,
        match=r"validate_increment's fold \d+ of 10, training part \(72 rows\): "
        r"strata: the stratum node=1 \(\d+ of its 24 rows\) keeps 1 of its 2 "
        r"events, fewer than 2: VCPCRCV re-tunes .* A stratum needs at least 3 "
        r"events for this: merge node=1 with another stratum",
    ):
        validate_increment(est, X, y, cv=5, n_repeats=2, random_state=0)
    assert fits == []
