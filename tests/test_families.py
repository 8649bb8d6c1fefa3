"""Tests of the family registry: the estimators ask the family, never its name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import make_blocks, needs_survival
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.model_selection import KFold, StratifiedKFold

from vcpcr import VCPCR, VCPCRCV, Surv, compute_weights
from vcpcr._families import FAMILIES
from vcpcr._losses import LOSSES
from vcpcr._scoring import SCORINGS

COX = pytest.param("cox", marks=needs_survival)


def _outcome(family):
    """Data of ``make_blocks`` with a response of ``family``."""
    X, y, _, _ = make_blocks(n=90, seed=3)
    rng = np.random.default_rng(4)
    if family == "binomial":
        noisy = y + 2 * rng.normal(size=y.size)
        return X, np.where(noisy > 0, "case", "control")
    if family == "cox":
        time = np.exp(-0.5 * y + rng.normal(scale=0.5, size=y.size))
        return X, Surv(time, rng.uniform(size=y.size) < 0.8)
    return X, y


def _renamed(monkeypatch, name):
    """Register a copy of family ``name`` (its loss and scorings) under a new name."""
    original = FAMILIES[name]
    copy = type(f"Renamed{type(original).__name__}", (type(original),), {})()
    copy.name = f"{name}_copy"
    monkeypatch.setitem(FAMILIES, copy.name, copy)
    monkeypatch.setitem(LOSSES, copy.name, LOSSES[name])
    monkeypatch.setitem(SCORINGS, copy.name, SCORINGS[name])
    return copy.name


@pytest.mark.parametrize("name", ["gaussian", "binomial", COX])
def test_a_registered_family_works_under_any_name(monkeypatch, name):
    """A family registered under a new name gives the very same fit: nothing
    in the estimators, the weights or the tags tests the family's name."""
    X, y = _outcome(name)
    copy = _renamed(monkeypatch, name)
    kw = {"n_clusters": 3, "lam_ratio": 0.3, "n_init": 3, "random_state": 0}
    ref = VCPCR(family=name, weights="ridge", **kw).fit(X, y)
    new = VCPCR(family=copy, weights="ridge", **kw).fit(X, y)
    assert_array_equal(new.labels_, ref.labels_)
    assert_allclose(new.coef_, ref.coef_, rtol=1e-12, atol=0)
    assert new.intercept_ == ref.intercept_
    assert new.__sklearn_tags__().estimator_type == (
        ref.__sklearn_tags__().estimator_type
    )
    assert new.score(X, y) == ref.score(X, y)
    target = np.asarray(y == "case", dtype=float) if name == "binomial" else y
    for method in ("ridge", "enet"):
        assert_array_equal(
            compute_weights(X, target, method, family=copy),
            compute_weights(X, target, method, family=name),
        )


def _without_family(params):
    """``best_params_`` but its ``family`` (a name or object: the same fit)."""
    return {k: v for k, v in params.items() if k != "family"}


@pytest.mark.parametrize("name", ["gaussian", "binomial", COX])
def test_a_registered_family_is_cross_validated_as_the_original(monkeypatch, name):
    X, y = _outcome(name)
    copy = _renamed(monkeypatch, name)
    splitter = StratifiedKFold if name == "binomial" else KFold
    kw = {
        "n_clusters": (2, 3),
        "weights": "ridge",
        "deltas": [0.1],
        "lam_ratios": [0.2, 0.5],
        "n_init": 2,
        "random_state": 0,
    }
    folds = list(splitter(3, shuffle=True, random_state=0).split(X, y))
    ref = VCPCRCV(family=name, cv=folds, **kw).fit(X, y)
    new = VCPCRCV(family=copy, cv=folds, **kw).fit(X, y)
    assert_allclose(
        new.cv_results_["mean_test_score"].to_numpy(),
        ref.cv_results_["mean_test_score"].to_numpy(),
        rtol=1e-12,
        atol=0,
    )
    assert _without_family(new.best_params_) == _without_family(ref.best_params_)


def test_standardized_design_against_hand_encoding():
    """The formula's encoding (numeric columns, a dummy per non-base level),
    standardized with the training means and sample standard deviations."""
    rng = np.random.default_rng(5)
    n = 40
    df = pd.DataFrame(
        {
            "g1": rng.normal(size=n),
            "g2": rng.normal(size=n) * 100 + 7,
            "sex": rng.choice(["f", "m"], size=n),
        }
    )
    df["y"] = df["g1"] - 0.01 * df["g2"] + (df["sex"] == "m") + rng.normal(size=n)
    model = VCPCR(
        n_clusters=2, formula="y ~ .", weights="identity", n_init=2, random_state=0
    ).fit(df)
    design = np.column_stack([df["g1"], df["g2"], df["sex"] == "m"]).astype(float)
    expected = (design - design.mean(axis=0)) / design.std(axis=0, ddof=1)
    assert_allclose(model.standardized_design(df), expected, rtol=1e-12, atol=1e-14)
    new = df.iloc[:5]
    expected_new = (design[:5] - design.mean(axis=0)) / design.std(axis=0, ddof=1)
    assert_allclose(
        model.standardized_design(new), expected_new, rtol=1e-12, atol=1e-14
    )


def test_binomial_refuses_mixed_string_and_number_labels():
    """Mixed int/str labels gave scikit-learn's "Unknown label type" (#20)."""
    from vcpcr import VCPCR

    X = np.random.default_rng(0).normal(size=(20, 4))
    y = np.array([1, "a"] * 10, dtype=object)
    with pytest.raises(TypeError, match=r"mixes string and non-string .*'a' and 1"):
        VCPCR(family="binomial", n_clusters=2).fit(X, y)


def test_family_instance_takes_a_registered_name_or_a_family():
    """The one resolution of a ``family`` parameter: a name gives the
    registered object, a family is itself, an unknown name is the error
    every entry point gives."""
    from vcpcr._families import family_instance

    binomial = FAMILIES["binomial"]
    assert family_instance("binomial", owner="VCPCR") is binomial
    assert family_instance(binomial, owner="VCPCR") is binomial
    with pytest.raises(
        ValueError,
        match=r"The 'family' parameter of VCPCR must be one of 'gaussian', "
        r"'binomial', 'cox'. Got 'poisson' instead.",
    ):
        family_instance("poisson", owner="VCPCR")
    X, y = _outcome("binomial")
    target = np.asarray(y == "case", dtype=float)
    assert_array_equal(
        compute_weights(X, target, "enet", family=binomial),
        compute_weights(X, target, "enet", family="binomial"),
    )


@pytest.mark.parametrize("name", ["gaussian", "binomial", COX])
def test_a_family_object_fits_as_its_name(name):
    """``family=`` takes the family object itself: the same clusters,
    coefficients, predictions, tags and summary as its name (#25)."""
    X, y = _outcome(name)
    family = FAMILIES[name]
    kw = {"n_clusters": 3, "lam_ratio": 0.3, "n_init": 3, "random_state": 0}
    ref = VCPCR(family=name, **kw).fit(X, y)
    new = VCPCR(family=family, **kw).fit(X, y)
    assert new.family is family
    assert_array_equal(new.labels_, ref.labels_)
    assert_array_equal(new.coef_, ref.coef_)
    assert new.intercept_ == ref.intercept_
    assert_array_equal(new.predict(X), ref.predict(X))
    assert new.score(X, y) == ref.score(X, y)
    assert new.summary().as_text() == ref.summary().as_text()
    assert new.__sklearn_tags__() == ref.__sklearn_tags__()
    public = [m for m in dir(ref) if not m.startswith("_")]
    assert [m for m in dir(new) if not m.startswith("_")] == public


@pytest.mark.parametrize("name", ["gaussian", "binomial", COX])
def test_a_family_object_is_cross_validated_as_its_name(name):
    X, y = _outcome(name)
    splitter = StratifiedKFold if name == "binomial" else KFold
    kw = {
        "n_clusters": (2, 3),
        "deltas": [0.1, 0.3],
        "lam_ratios": [0.2, 0.5],
        "n_init": 2,
        "cv": list(splitter(3, shuffle=True, random_state=0).split(X, y)),
        "random_state": 0,
    }
    ref = VCPCRCV(family=name, **kw).fit(X, y)
    new = VCPCRCV(family=FAMILIES[name], **kw).fit(X, y)
    columns = ["mean_test_score", "std_test_score", "mean_size"]
    assert_array_equal(new.cv_results_[columns], ref.cv_results_[columns])
    assert _without_family(new.best_params_) == _without_family(ref.best_params_)
    assert_array_equal(new.coef_, ref.coef_)
    assert_array_equal(new.predict(X), ref.predict(X))
    assert new.summary().as_text() == ref.summary().as_text()


def test_a_family_object_clones_pickles_and_prints():
    """scikit-learn's ``clone`` deep-copies a family object: the copy equals
    the original, so the clone's parameters equal the estimator's; a fitted
    estimator with a family object pickles, and its repr shows the object."""
    import pickle

    from sklearn.base import clone, is_classifier

    X, y = _outcome("binomial")
    model = VCPCR(family=FAMILIES["binomial"], n_clusters=3, n_init=2, random_state=0)
    copy = clone(model)
    assert copy.family is not model.family
    assert copy.family == model.family == FAMILIES["binomial"]
    assert copy.family != FAMILIES["gaussian"]
    assert hash(copy.family) == hash(model.family)
    assert copy.get_params() == model.get_params()
    assert repr(model) == (
        "VCPCR(family=Binomial(), n_clusters=3, n_init=2, random_state=0)"
    )
    assert is_classifier(model)
    assert hasattr(model, "predict_proba")
    model.fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    assert restored.family == model.family
    assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
    assert restored.summary().as_text() == model.summary().as_text()


def test_a_family_object_reads_as_its_name_in_the_inference_summaries():
    from vcpcr.inference import multi_split, stability_selection

    X, y = _outcome("gaussian")
    texts = []
    for family in ("gaussian", FAMILIES["gaussian"]):
        model = VCPCR(2, family=family, n_init=2, random_state=0)
        split = multi_split(model, X, y, n_splits=3, random_state=0)
        pairs = stability_selection(model, X, y, n_pairs=2, random_state=0)
        texts.append((split.summary().as_text(), pairs.summary().as_text()))
    assert texts[1] == texts[0]
    assert "gaussian" in texts[1][1]


@pytest.mark.parametrize("estimator", [VCPCR, VCPCRCV], ids=["VCPCR", "VCPCRCV"])
@pytest.mark.parametrize(
    "family", [3, None, np.str_, FAMILIES], ids=["int", "None", "type", "dict"]
)
def test_a_family_of_another_type_is_a_type_error_naming_the_names(estimator, family):
    X, y = _outcome("gaussian")
    with pytest.raises(
        TypeError,
        match=rf"The 'family' parameter of {estimator.__name__} must be one of "
        r"'gaussian', 'binomial', 'cox' or a vcpcr._families.Family object. "
        r"Got .* \(of type \w+\) instead.",
    ):
        estimator(family=family).fit(X, y)


def test_a_family_without_a_step0_loss_or_cv_scorings_is_named(monkeypatch):
    """A family registered in FAMILIES alone: the weights and the CV say what
    is missing, instead of a KeyError."""
    copy = FAMILIES["gaussian"].__class__()
    copy.name = "bare"
    monkeypatch.setitem(FAMILIES, "bare", copy)
    X, y = _outcome("gaussian")
    with pytest.raises(ValueError, match=r"family='bare' has no step-0 loss"):
        VCPCR(family="bare", n_clusters=2, n_init=1).fit(X, y)
    kw = {"family": "bare", "weights": "identity", "n_clusters": 2, "n_init": 1}
    with pytest.raises(ValueError, match=r"family='bare' has no CV scorings"):
        VCPCRCV(**kw).fit(X, y)
