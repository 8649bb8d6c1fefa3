"""VCPCR.export_scoring_rule: a new patient scored from the JSON alone.

The scorer below reads the JSON with the standard library and computes with
numpy only (it imports nothing of vcpcr); it must give the model's own
predictions on held-out rows, for every family, with categorical covariates,
a formula, strata and shrinkage.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from vcpcr import VCPCR, ScoringRule

TOL = {"rtol": 1e-10, "atol": 1e-10}


def _coded(rule, data):
    """Return a function giving a design column's values from the raw data."""
    coding = {}
    for row in rule["levels"]:
        coding.setdefault(row["column"], {})[row["level"]] = row["value"]

    def column(name, source):
        values = np.asarray(data[source])
        if name not in coding:
            return values.astype(float)
        unknown = set(values.tolist()) - set(coding[name])
        if unknown:
            raise ValueError(f"levels {unknown} of {source} were not in training")
        return np.array([coding[name][v] for v in values.tolist()], dtype=float)

    return column


def _survival(rule, data, risk, times):
    """Return S(t | x) at ``times`` from the rule's baseline, row by row."""
    survival = np.empty((risk.size, len(times)))
    for i in range(risk.size):
        key = {s: np.asarray(data[s]).tolist()[i] for s in rule["strata"]}
        rows = [b for b in rule["baseline"] if b["stratum"] == key]
        assert rows, f"stratum {key} not in the rule"
        for j, t in enumerate(times):
            before = [b["cumulative_hazard"] for b in rows if b["time"] <= t]
            H0 = before[-1] if before else 0.0
            survival[i, j] = np.exp(-H0 * risk[i])
    return survival


def score_from_json(text, data, times=None):
    """Score rows from a scoring rule's JSON with plain numpy.

    ``data`` maps each data column to a 1-d array of the rows' raw values.
    Returns ``eta`` and the family's prediction (gaussian: ``eta``; binomial:
    the probability of ``classes[1]`` and the labels; cox: the relative risk
    and, at ``times``, the survival probabilities of shape (n, n_times)).
    """
    rule = json.loads(text)
    assert rule["schema"] == "vcpcr.scoring_rule"
    assert rule["version"] == 1
    column = _coded(rule, data)
    n = len(next(iter(data.values())))
    eta = np.full(n, rule["intercept"])
    for c in rule["covariates"]:
        eta += c["coef"] * column(c["covariate"], c["source"])
    scores = {m["module"]: np.zeros(n) for m in rule["modules"]}
    for g in rule["genes"]:
        x = column(g["gene"], g["source"])
        scores[g["module"]] += g["loading"] * (x - g["center"]) / g["scale"]
    for m in rule["modules"]:
        eta += m["coef"] * scores[m["module"]]
    if rule["family"] == "gaussian":
        return eta, eta
    if rule["family"] == "binomial":
        p = 1 / (1 + np.exp(-eta))
        labels = np.where(eta > 0, rule["classes"][1], rule["classes"][0])
        return eta, (p, labels)
    risk = np.exp(eta)
    survival = None if times is None else _survival(rule, data, risk, times)
    return eta, (risk, survival)


def _columns(frame):
    return {c: frame[c].to_numpy() for c in frame.columns}


def _cohort(n=90, seed=0, family="gaussian"):
    """Genes with two active blocks, clinical columns and an outcome."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 2))
    genes = np.column_stack(
        [
            latent[:, [0]] + 0.5 * rng.normal(size=(n, 3)),
            -latent[:, [1]] + 0.5 * rng.normal(size=(n, 3)),
            rng.normal(size=(n, 4)),
        ]
    )
    df = pd.DataFrame(5.0 + genes, columns=[f"g{j}" for j in range(genes.shape[1])])
    df["age"] = rng.normal(60.0, 10.0, n)
    df["stage"] = rng.choice(["I", "II", "III"], n)
    df["center"] = rng.choice(["A", "B"], n)
    df["grp"] = rng.choice(["u", "v"], n)
    eta = (
        latent[:, 0]
        - latent[:, 1]
        + 0.02 * (df["age"] - 60)
        + 0.5 * (df["stage"] == "III")
    )
    if family == "gaussian":
        df["y"] = eta + rng.normal(size=n)
    elif family == "binomial":
        df["y"] = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), "yes", "no")
    else:
        time = rng.exponential(np.exp(-eta))
        censor = rng.exponential(2.0, n)
        df["time"] = np.minimum(time, censor)
        df["event"] = (time <= censor).astype(float)
    return df


GENES = [f"g{j}" for j in range(10)]


def test_gaussian_rule_with_categorical_covariates_reproduces_predict():
    df = _cohort()
    train, test = df.iloc[:70], df.iloc[70:]
    X = train[[*GENES, "age", "stage"]]
    model = VCPCR(
        3, covariates=["age", "stage"], lam_ratio=0.3, n_init=2, random_state=0
    ).fit(X, train["y"])
    rule = model.export_scoring_rule()
    assert set(rule.covariates.index) == {"age", "stage[T.II]", "stage[T.III]"}
    eta, prediction = score_from_json(rule.to_json(), _columns(test))
    assert_allclose(eta, model.predict(test[X.columns]), **TOL)
    assert_allclose(prediction, eta, rtol=0, atol=0)
    # the gene table is the model's own state
    assert_allclose(
        rule.genes["coef"], model.coef_[model.clustered_columns_[model.labels_ >= 0]]
    )


def test_binomial_shrunk_rule_reproduces_probabilities_and_labels():
    df = _cohort(family="binomial", seed=1)
    train, test = df.iloc[:70], df.iloc[70:]
    X = train[[*GENES, "age", "stage"]]
    model = VCPCR(
        3,
        family="binomial",
        covariates=["age", "stage"],
        shrinkage=0.7,
        lam_ratio=0.3,
        n_init=2,
        random_state=0,
    ).fit(X, train["y"])
    rule = model.export_scoring_rule()
    assert rule.shrinkage == 0.7
    assert_allclose(rule.modules["coef"], model.cluster_coef_)
    eta, (p, labels) = score_from_json(rule.to_json(), _columns(test))
    Xt = test[X.columns]
    assert_allclose(eta, model.decision_function(Xt), **TOL)
    assert_allclose(p, model.predict_proba(Xt)[:, 1], **TOL)
    assert_array_equal(labels, model.predict(Xt))
    assert rule.classes == ["no", "yes"]


@pytest.fixture(scope="module")
def cox_formula_model():
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
    return model, df.iloc[70:]


def test_cox_formula_rule_reproduces_survival_per_stratum(cox_formula_model):
    model, test = cox_formula_model
    horizons = [0.25, 0.5, 1.0]
    rule = model.export_scoring_rule(horizons=horizons)
    assert rule.strata == ["center"]
    assert sorted(set(rule.baseline["center"])) == ["A", "B"]
    assert len(rule.baseline) == 2 * len(horizons)
    eta, (risk, survival) = score_from_json(rule.to_json(), _columns(test), horizons)
    assert_allclose(eta, model.predict_log_partial_hazard(test), **TOL)
    assert_allclose(risk, model.predict(test), **TOL)
    expected = model.predict_survival_function(test, return_array=True, times=horizons)
    assert_allclose(survival, expected, **TOL)
    # both strata are among the held-out rows, and they differ
    assert set(test["center"]) == {"A", "B"}


def test_cox_rule_without_horizons_is_the_whole_step_function():
    pytest.importorskip("lifelines")
    df = _cohort(family="cox", seed=3)
    Xa = df[[*GENES, "age"]].to_numpy()
    y = df[["time", "event"]].to_numpy()
    model = VCPCR(
        3, family="cox", covariates=[10], lam_ratio=0.3, n_init=2, random_state=0
    ).fit(Xa[:70], y[:70])
    rule = model.export_scoring_rule()
    assert rule.strata == []
    assert rule.horizons is None
    assert_allclose(rule.baseline["time"], model.unique_times_, rtol=0, atol=0)
    assert list(rule.covariates["source"]) == ["x10"]
    data = {f"x{j}": Xa[70:, j] for j in range(Xa.shape[1])}
    times = np.quantile(y[:70, 0], [0.1, 0.37, 0.5, 0.9])  # between the knots
    eta, (_, survival) = score_from_json(rule.to_json(), data, times)
    assert_allclose(eta, model.predict_log_partial_hazard(Xa[70:]), **TOL)
    expected = model.predict_survival_function(Xa[70:], return_array=True, times=times)
    assert_allclose(survival, expected, **TOL)


def test_json_round_trip_gives_the_same_rule(cox_formula_model, tmp_path):
    model, _ = cox_formula_model
    rule = model.export_scoring_rule(horizons=[0.5, 1.0])
    path = tmp_path / "rule.json"
    text = rule.to_json(path)
    again = ScoringRule.from_json(path)
    for name in ("genes", "modules", "covariates", "levels", "baseline"):
        pd.testing.assert_frame_equal(getattr(again, name), getattr(rule, name))
    assert again.to_json() == text
    assert ScoringRule.from_json(text).intercept == rule.intercept
    assert "exp(-H0(t) * exp(eta))" in json.loads(text)["prediction"]


def _strict_constant(name):
    raise ValueError(f"not strict JSON: {name}")


def test_a_non_finite_number_is_strict_json_and_reads_back(cox_formula_model):
    """A separated Cox fit's baseline hazard can overflow to infinity (its
    last risk set's relative risk underflows): the document stays strict JSON
    (a strict parser refuses Infinity and NaN) with the documented strings,
    and reads back as the same floats."""
    import dataclasses

    model, _ = cox_formula_model
    rule = model.export_scoring_rule()
    baseline = rule.baseline.copy()
    baseline.loc[baseline.index[-1], "cumulative_hazard"] = np.inf
    baseline.loc[baseline.index[-1], "survival"] = 0.0
    modules = rule.modules.copy()
    modules.iloc[0, modules.columns.get_loc("sd")] = np.nan
    odd = dataclasses.replace(
        rule, baseline=baseline, modules=modules, prognostic_index_sd=-np.inf
    )
    with pytest.raises(ValueError, match="not strict JSON: -Infinity"):
        json.loads(json.dumps(odd.to_dict()), parse_constant=_strict_constant)
    text = odd.to_json()
    document = json.loads(text, parse_constant=_strict_constant)  # no error
    assert document["baseline"][-1]["cumulative_hazard"] == "Infinity"
    assert document["modules"][0]["sd"] == "NaN"
    assert document["prognostic_index_sd"] == "-Infinity"
    assert float(document["baseline"][-1]["cumulative_hazard"]) == np.inf
    again = ScoringRule.from_json(text)
    pd.testing.assert_frame_equal(again.baseline, baseline)
    pd.testing.assert_frame_equal(again.modules, modules)
    assert again.prognostic_index_sd == -np.inf
    assert again.to_json() == text
    # a finite rule's text has no such string
    assert not {"Infinity", "NaN"} & set(re.findall(r'"(\w+)"', rule.to_json()))


def test_from_json_refuses_other_documents():
    with pytest.raises(ValueError, match="not a vcpcr scoring rule"):
        ScoringRule.from_json('{"schema": "other"}')
    with pytest.raises(ValueError, match="schema version 99"):
        ScoringRule.from_json('{"schema": "vcpcr.scoring_rule", "version": 99}')
    with pytest.raises(ValueError, match="could not read"):
        ScoringRule.from_json("no such file.json")


def test_horizons_refused_without_a_baseline():
    df = _cohort()
    model = VCPCR(3, lam_ratio=0.3, n_init=2, random_state=0).fit(df[GENES], df["y"])
    with pytest.raises(ValueError, match="family='gaussian' model has none"):
        model.export_scoring_rule(horizons=[1.0])


def test_a_transformed_term_is_refused_with_the_fix():
    df = _cohort()
    model = VCPCR(
        3,
        formula="y ~ np.log(age) | . - stage - center - grp",
        lam_ratio=0.3,
        n_init=2,
        random_state=0,
    ).fit(df)
    with pytest.raises(ValueError, match=r"np\.log\(age\).*compute each as a data"):
        model.export_scoring_rule()


def test_cox_rule_with_two_strata_columns_numeric_and_categorical():
    """Strata keyed by a tuple (a number and a category) are written as the
    data's raw values, and the scorer finds each row's baseline by them."""
    pytest.importorskip("lifelines")
    df = _cohort(n=120, family="cox", seed=5)
    df["site"] = np.random.default_rng(5).choice([1, 2], len(df))
    X = df[[*GENES, "age", "site", "center"]]
    y = df[["time", "event"]]
    model = VCPCR(
        3,
        family="cox",
        covariates=["age"],
        strata=["site", "center"],
        lam_ratio=0.3,
        n_init=2,
        random_state=0,
    ).fit(X.iloc[:90], y.iloc[:90])
    horizons = [0.3, 0.8]
    rule = model.export_scoring_rule(horizons=horizons)
    assert rule.strata == ["site", "center"]
    strata = set(map(tuple, rule.baseline[["site", "center"]].to_numpy().tolist()))
    assert strata == {(1.0, "A"), (1.0, "B"), (2.0, "A"), (2.0, "B")}
    test = X.iloc[90:]
    eta, (_, survival) = score_from_json(rule.to_json(), _columns(test), horizons)
    assert_allclose(eta, model.predict_log_partial_hazard(test), **TOL)
    expected = model.predict_survival_function(test, return_array=True, times=horizons)
    assert_allclose(survival, expected, **TOL)
