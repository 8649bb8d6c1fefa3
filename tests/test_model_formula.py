"""VCPCR with formula= (formulaic designs, identical encoding at predict)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from vcpcr import VCPCR, VCPCRWarning


@pytest.fixture
def frame(blocks_df):
    X, y, _, _ = blocks_df
    rng = np.random.default_rng(7)
    df = X.assign(weight=np.exp(y / 10), age=rng.uniform(20, 60, len(y)))
    df["diet"] = rng.choice(["chow", "fat", "mixed"], size=len(y))
    noisy = y + rng.normal(scale=2 * y.std(), size=len(y))
    df["status"] = np.where(noisy > np.median(noisy), "dead", "alive")
    return df


def _init(p, seed=0):
    return np.random.default_rng(seed).integers(0, 3, p)


def test_formula_equals_array_path(frame):
    genes = [c for c in frame.columns if c.startswith("g")]
    init = _init(len(genes))
    a = VCPCR(
        n_clusters=3, init=init, formula="np.log(weight) ~ . - age - diet - status"
    )
    a.fit(frame)
    b = VCPCR(n_clusters=3, init=init).fit(frame[genes], np.log(frame["weight"]))
    assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    assert_array_equal(a.labels_, b.labels_)
    assert_allclose(a.predict(frame), b.predict(frame[genes]), rtol=1e-12)
    assert a.yname_ == "np.log(weight)"
    assert "np.log(weight)" in a.summary().as_text()
    assert list(a.feature_names_in_) == genes


def test_formula_against_smf_ols(frame):
    """With the clusters fixed, step 2 equals statsmodels.formula.api.ols."""
    model = VCPCR(
        n_clusters=3,
        lam_ratio=0.3,
        n_init=2,
        random_state=0,
        formula="weight ~ . - diet - status",
    )
    model.fit(frame)
    latent = pd.DataFrame(model.transform(frame), columns=model.get_feature_names_out())
    latent["weight"] = frame["weight"].to_numpy()
    ref = smf.ols("weight ~ " + " + ".join(model.get_feature_names_out()), latent).fit()
    assert_allclose(model.result_.params.to_numpy(), ref.params.to_numpy(), rtol=1e-8)
    assert_allclose(model.result_.bse.to_numpy(), ref.bse.to_numpy(), rtol=1e-8)


def test_categorical_predictor_encoding_reused(frame):
    model = VCPCR(
        n_clusters=3, n_init=2, random_state=0, formula="weight ~ . - status"
    ).fit(frame)
    assert "diet[T.fat]" in model.feature_names_in_
    assert "diet[T.mixed]" in model.feature_names_in_
    subset = frame[frame["diet"] == "fat"]  # one level only in the new data
    assert_allclose(
        model.predict(subset),
        model.predict(frame)[frame["diet"].to_numpy() == "fat"],
        rtol=1e-12,
    )
    unseen = frame.assign(diet="keto")
    with pytest.raises(ValueError, match="keto"):
        model.predict(unseen)


def test_binary_outcome_formula(frame):
    model = VCPCR(
        n_clusters=2,
        family="binomial",
        n_init=2,
        random_state=0,
        formula="I(status == 'dead') ~ . - weight - diet",
    )
    model.fit(frame)
    assert_array_equal(model.classes_, [0, 1])
    dead = (frame["status"] == "dead").to_numpy().astype(int)
    # The formula's outcome is status == 'dead': the Logit on the latent
    # variables of that 0/1 outcome, its probabilities, and its accuracy.
    M = model.transform(frame)
    ref = sm.Logit(dead, sm.add_constant(M)).fit(disp=0)
    assert_allclose(model.result_.params, ref.params, rtol=1e-8)
    assert_allclose(model.predict_proba(frame)[:, 1], ref.predict(), rtol=1e-8)
    labels = (ref.predict() > 0.5).astype(int)
    assert_array_equal(model.predict(frame), labels)
    assert model.score(frame) == accuracy_score(dead, labels)


def test_two_level_column_outcome(frame):
    model = VCPCR(
        n_clusters=2,
        family="binomial",
        n_init=2,
        random_state=0,
        formula="status ~ . - weight - diet",
    )
    model.fit(frame)
    assert_array_equal(model.classes_, ["alive", "dead"])
    assert set(model.predict(frame)) <= {"alive", "dead"}


def test_missing_values(frame):
    df = frame.copy()
    df.loc[df.index[:3], "g1"] = np.nan
    df.loc[df.index[5], "age"] = np.nan
    model = VCPCR(
        n_clusters=2, n_init=1, random_state=0, formula="weight ~ . - diet - status"
    )
    with pytest.raises(ValueError, match=r"missing values.*'g1': 3.*'age': 1"):
        model.fit(df)
    with pytest.warns(VCPCRWarning, match="Dropped 4 of 60 rows"):
        model.set_params(missing="drop").fit(df)
    assert model.n_samples_fit_ == 56
    with pytest.raises(ValueError, match="'missing' parameter"):
        model.set_params(missing="impute").fit(df)


def test_formula_with_y_is_an_error(frame):
    with pytest.raises(ValueError, match="no y"):
        VCPCR(formula="weight ~ .").fit(frame, frame["weight"])


def test_clone_and_grid_search_with_formula(frame):
    model = VCPCR(
        n_clusters=2, n_init=2, random_state=0, formula="weight ~ . - diet - status"
    )
    assert clone(model).formula == model.formula
    grid = GridSearchCV(
        model, {"lam_ratio": [0.3, 0.6]}, cv=KFold(3, shuffle=True, random_state=0)
    )
    grid.fit(frame)
    # The same search by an explicit loop of cross_val_score on the same folds.
    means = {
        r: cross_val_score(
            clone(model).set_params(lam_ratio=r),
            frame,
            cv=KFold(3, shuffle=True, random_state=0),
        ).mean()
        for r in (0.3, 0.6)
    }
    best = max(means, key=means.__getitem__)
    assert grid.best_params_ == {"lam_ratio": best}
    assert grid.best_score_ == pytest.approx(means[best], rel=1e-12)
    refit = clone(model).set_params(lam_ratio=best).fit(frame)
    assert grid.score(frame) == pytest.approx(refit.score(frame), rel=1e-12)


@pytest.mark.parametrize(
    ("column", "new_values", "match"),
    [
        ("g", np.arange(30.0), "'g' was categorical in fit but has dtype float64"),
        ("a", ["x"] * 30, r"'a' was numeric in fit but has dtype object.*to_numeric"),
    ],
    ids=["categorical-to-numeric", "numeric-to-strings"],
)
def test_predict_names_a_column_whose_type_changed(column, new_values, match):
    """A column's kind changing between fit and predict gave formulaic's
    'inconsistent with specification' or a list of every value as unseen
    levels (#20)."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame(rng.normal(size=(30, 4)), columns=list("abcd"))
    data["g"] = ["u", "v", "w"] * 10
    data["y"] = data["a"] + rng.normal(size=30)
    model = VCPCR(formula="y ~ .", n_clusters=2, n_init=1, random_state=0)
    model.fit(data)
    new = data.drop(columns="y").assign(**{column: new_values})
    with pytest.raises(TypeError, match=match):
        model.predict(new)


# ------------------------------------------------- new data at prediction time


@pytest.fixture
def two_part(frame):
    """A two-part formula model with covariates, and its unselected variables."""
    model = VCPCR(
        n_clusters=2,
        lam_ratio=0.4,
        n_init=2,
        random_state=0,
        formula="weight ~ age + C(diet) | . - status",
    ).fit(frame)
    names = model.membership_.index
    unselected = list(names[model.labels_ < 0])
    assert unselected
    return model, unselected


def test_formula_model_takes_columns_in_any_order(frame, two_part):
    model, _ = two_part
    shuffled = frame[frame.columns[::-1]]
    assert_array_equal(model.predict(shuffled), model.predict(frame))
    assert model.score(shuffled) == model.score(frame)


def test_formula_model_allows_nan_in_unselected_variables(frame, two_part):
    model, unselected = two_part
    df = frame.copy()
    df.loc[df.index[:4], unselected[0]] = np.nan
    assert_array_equal(model.predict(df), model.predict(frame))
    assert model.score(df) == model.score(frame)
    assert_array_equal(model.transform(df), model.transform(frame))
    selected = model.membership_.index[model.labels_ >= 0][0]
    df.loc[df.index[0], selected] = np.nan
    with pytest.raises(ValueError, match=rf"\['{selected}'\].*before predicting"):
        model.predict(df)
    df.loc[df.index[1], "age"] = np.nan  # a covariate: encoded by formulaic
    with pytest.raises(ValueError, match=r"\{'age': 1\}; impute them"):
        model.predict(df)


@pytest.mark.parametrize("where", ["fit", "predict"])
def test_formula_model_names_duplicate_columns(frame, two_part, where):
    model, _ = two_part
    dup = pd.concat([frame, frame[["g1"]]], axis=1)
    call = clone(model).fit if where == "fit" else model.predict
    with pytest.raises(ValueError, match=r"duplicate column names \['g1'\]"):
        call(dup)


@pytest.mark.parametrize(
    "covariates",
    ["center(age) + C(diet)", "np.log(`age`) + diet", "scale(age) * diet"],
    ids=["stateful", "backquoted-in-call", "interaction"],
)
def test_two_part_covariates_are_evaluated_on_their_columns(frame, covariates):
    """The covariates' part sees only the columns it names (#24: formulaic
    walked every gene); a stateful transform's column is among them."""
    formula = f"weight ~ {covariates} | . - status"
    model = VCPCR(n_clusters=2, n_init=1, random_state=0, formula=formula)
    model.fit(frame)
    rows = frame.index[[3, 7, 11]]
    new = frame.loc[rows].drop(columns=["weight", "status"])
    assert_allclose(
        model.predict(new), model.predict(frame)[[3, 7, 11]], rtol=1e-12, atol=0
    )
