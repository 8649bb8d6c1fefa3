"""vcpcr.validation.nomogram and plot_nomogram: points that give predict back.

A patient is read off the nomogram as a person would: the points of their
raw covariate values and of their prognostic index, summed, and the total
mapped to the prediction; that must be the model's own prediction.
"""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from test_scoring_rule import GENES, _cohort

matplotlib.use("Agg")

from vcpcr import VCPCR
from vcpcr._nomogram import SIGNATURE
from vcpcr.plotting import plot_nomogram
from vcpcr.validation import Nomogram, nomogram

TOL = {"rtol": 1e-10, "atol": 1e-10}


def _read_off(chart, model, rows):
    """Total points of ``rows`` from their raw values and prognostic index."""
    design = model.outcome_design(rows)
    index = (
        design[list(chart.rule.modules.index)].to_numpy()
        @ chart.rule.modules["coef"].to_numpy()
    )
    total = chart.term_points(SIGNATURE, index)
    for term in chart.terms.index.drop(SIGNATURE):
        total = total + chart.term_points(term, rows[term].to_numpy())
    return total


@pytest.fixture(scope="module")
def cox_model():
    pytest.importorskip("lifelines")
    df = _cohort(family="cox", seed=2)
    model = VCPCR(
        3,
        family="cox",
        formula="Surv(time, event) ~ age + C(stage) | . - center",
        strata="center",
        lam_ratio=0.3,
        n_init=2,
        random_state=0,
    ).fit(df.iloc[:70])
    return model, df


def test_cox_points_give_survival_at_the_horizon_per_stratum(cox_model):
    model, df = cox_model
    chart = nomogram(model, df.iloc[:70], horizon=0.5)
    assert chart.terms["max_points"].max() == pytest.approx(100.0, abs=1e-12)
    assert set(chart.terms["kind"]) == {"numeric", "categorical", "signature"}
    patients = df.iloc[70:76]
    total = _read_off(chart, model, patients)
    expected = model.predict_survival_function(patients, return_array=True, times=[0.5])
    for i, stratum in enumerate(patients["center"]):
        got = chart.predict_points(total[i], stratum=stratum)
        assert_allclose(got, expected[i], **TOL)
    assert_allclose(
        chart.linear_predictor(total), model.predict_log_partial_hazard(patients), **TOL
    )
    # the inverse scale, which places the bottom axes' probabilities
    first = patients["center"].iloc[0]
    assert_allclose(chart.total_points_at(expected[0], first), total[:1], **TOL)


def test_binomial_points_give_the_probability():
    df = _cohort(family="binomial", seed=1)
    X = df[[*GENES, "age", "stage"]]
    model = VCPCR(
        3,
        family="binomial",
        covariates=["age", "stage"],
        shrinkage=0.8,
        lam_ratio=0.3,
        n_init=2,
        random_state=0,
    ).fit(X.iloc[:70], df["y"].iloc[:70])
    chart = nomogram(model, X.iloc[:70])
    patients = X.iloc[70:75]
    total = _read_off(chart, model, patients)
    assert_allclose(
        chart.predict_points(total), model.predict_proba(patients)[:, 1], **TOL
    )
    # a categorical term: the reference level has the smallest effect or not,
    # but every level of the training data has its points
    assert set(chart.levels["stage"].index) == {"I", "II", "III"}
    assert_allclose(chart.total_points_at(chart.predict_points(total)), total, **TOL)


def test_nomogram_argument_errors(cox_model):
    model, df = cox_model
    with pytest.raises(ValueError, match="pass horizon="):
        nomogram(model, df)
    chart = nomogram(model, df, horizon=0.5)
    with pytest.raises(ValueError, match="stratum=None is not a stratum"):
        chart.predict_points([10.0])
    with pytest.raises(ValueError, match="no level"):
        chart.term_points("stage", ["IV"])
    with pytest.raises(ValueError, match="not a term"):
        chart.term_points("weight", [1.0])
    gaussian = VCPCR(3, lam_ratio=0.3, n_init=2, random_state=0)
    g = _cohort()
    gaussian.fit(g[GENES], g["y"])
    with pytest.raises(ValueError, match="not a Cox model"):
        nomogram(gaussian, g[GENES], horizon=1.0)
    with pytest.raises(ValueError, match="needs X"):
        plot_nomogram(gaussian)


def test_plot_nomogram_draws_one_scale_per_term_and_stratum(cox_model, tmp_path):
    model, df = cox_model
    chart = nomogram(model, df, horizon=0.5)
    assert isinstance(chart, Nomogram)
    ax = plot_nomogram(chart)
    names = {t.get_text() for t in ax.texts}
    assert {"Points", "Total points", "age", "stage", SIGNATURE} <= names
    assert {"S(0.5), A", "S(0.5), B"} <= names
    assert {"I", "II", "III"} <= names
    path = tmp_path / "nomogram.png"
    ax.figure.savefig(path)
    matplotlib.pyplot.close(ax.figure)
    assert path.stat().st_size > 10_000


def test_gaussian_points_give_the_prediction():
    df = _cohort(seed=4)
    X = df[[*GENES, "age", "stage"]]
    model = VCPCR(
        3, covariates=["age", "stage"], lam_ratio=0.3, n_init=2, random_state=0
    ).fit(X.iloc[:70], df["y"].iloc[:70])
    chart = nomogram(model, X.iloc[:70])
    patients = X.iloc[70:75]
    total = _read_off(chart, model, patients)
    assert_allclose(chart.predict_points(total), model.predict(patients), **TOL)


def test_a_fitted_vcpcrcv_gives_its_best_estimators_nomogram():
    pytest.importorskip("lifelines")
    from sklearn.model_selection import StratifiedKFold

    from vcpcr import VCPCRCV

    df = _cohort(family="cox", seed=2)
    X, y = df[[*GENES, "age"]], df[["time", "event"]]
    folds = StratifiedKFold(3, shuffle=True, random_state=0).split(X, y["event"])
    cv = VCPCRCV(
        n_clusters=(2, 3),
        family="cox",
        covariates="age",
        lam_ratios=[0.3, 0.5],
        deltas=[0.1],
        n_init=1,
        random_state=0,
        cv=list(folds),
    ).fit(X, y)
    chart = nomogram(cv, X, horizon=0.5)
    best = nomogram(cv.best_estimator_, X, horizon=0.5)
    pd.testing.assert_frame_equal(chart.terms, best.terms)
    patients = X.iloc[:4]
    total = _read_off(chart, cv, patients)
    expected = cv.predict_survival_function(patients, return_array=True, times=[0.5])
    assert_allclose(chart.predict_points(total), expected[:, 0], **TOL)
