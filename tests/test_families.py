"""Tests of the families: the estimators ask the family and its parts, not its name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import make_blocks, needs_survival
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.model_selection import KFold, StratifiedKFold

from vcpcr import VCPCR, VCPCRCV, Surv, compute_weights
from vcpcr._families import FAMILIES, Gaussian, _StatsmodelsFamily
from vcpcr._family_scoring import GaussianScoring
from vcpcr._losses import GaussianLoss

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
    """Register a subclass of family ``name`` under a new name (its parts inherited)."""
    original = type(FAMILIES[name])
    copy = type(f"Renamed{original.__name__}", (original,), {"name": f"{name}_copy"})
    monkeypatch.setitem(FAMILIES, copy.name, copy())
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


class _BareGaussian(_StatsmodelsFamily):
    """A family with the gaussian family's methods but without its parts."""

    name = "bare"
    estimator_type = "regressor"
    prepare = Gaussian.prepare
    _target = staticmethod(Gaussian._target)
    _fit_model = Gaussian._fit_model
    _fit_stack = staticmethod(Gaussian._fit_stack)
    describe = Gaussian.describe
    statistics = Gaussian.statistics
    predict = Gaussian.predict
    score = Gaussian.score


@pytest.mark.parametrize(
    ("parts", "missing", "kind"),
    [
        ({}, "distribution", "vcpcr._solvers.distributions.Distribution"),
        (
            {"distribution": Gaussian.distribution},
            "loss",
            "vcpcr._losses.PenalizedLoss",
        ),
        (
            {"distribution": Gaussian.distribution, "loss": GaussianLoss()},
            "scoring",
            "vcpcr._family_scoring.FamilyScoring",
        ),
        (
            {"distribution": Gaussian.distribution, "loss": "gaussian"},
            "loss",
            "vcpcr._losses.PenalizedLoss",
        ),
    ],
    ids=["no distribution", "no loss", "no scoring", "a name as loss"],
)
def test_a_family_without_one_of_its_parts_names_the_attribute_to_set(
    parts, missing, kind
):
    """A user's Family that does not carry its response math, step-0 loss or
    CV scorings: every entry point says which class attribute to set, and to
    what, instead of an AttributeError deep in a fit."""
    family = type("MyFamily", (_BareGaussian,), parts)()
    X, y = _outcome("gaussian")
    message = (
        rf"The 'family' parameter of {{owner}} is a MyFamily without its .*: set "
        rf"MyFamily\.{missing} to an instance of {kind}"
    )
    kw = {"weights": "identity", "n_clusters": 2, "n_init": 1}
    with pytest.raises(TypeError, match=message.format(owner="VCPCR")):
        VCPCR(family=family, **kw).fit(X, y)
    with pytest.raises(TypeError, match=message.format(owner="VCPCRCV")):
        VCPCRCV(family=family, **kw).fit(X, y)
    with pytest.raises(TypeError, match=message.format(owner="compute_weights")):
        compute_weights(X, y, "ridge", family=family)


def test_a_bare_family_with_its_parts_fits_as_the_gaussian():
    """The parts are all a family needs beside its methods: the bare family
    given the gaussian's fits as the gaussian one."""
    parts = {
        "distribution": Gaussian.distribution,
        "loss": Gaussian.loss,
        "scoring": Gaussian.scoring,
    }
    family = type("MyFamily", (_BareGaussian,), parts)()
    X, y = _outcome("gaussian")
    kw = {"n_clusters": 3, "lam_ratio": 0.3, "n_init": 3, "random_state": 0}
    ref = VCPCR(family="gaussian", **kw).fit(X, y)
    new = VCPCR(family=family, **kw).fit(X, y)
    assert_array_equal(new.weights_, ref.weights_)
    assert_array_equal(new.coef_, ref.coef_)


class _ClippedLoss(GaussianLoss):
    """Least squares on the weights target clipped at +-1.5 and restandardized.

    A robust step-0 loss of the user's: its weights are the gaussian loss's
    of a response whose outliers are pulled in, while step 2 keeps ``y``.
    """

    @staticmethod
    def _clip(target):
        clipped = np.clip(target, -1.5, 1.5)
        return (clipped - clipped.mean()) / clipped.std(ddof=1)

    def lasso_delta_max(self, Xs, target):
        return super().lasso_delta_max(Xs, self._clip(target))

    def penalized_path(self, Xs, target, deltas, l1_ratio, covariates=None):
        return super().penalized_path(
            Xs, self._clip(target), deltas, l1_ratio, covariates
        )


class _AbsoluteErrorScoring(GaussianScoring):
    """The gaussian scorings, with the mean absolute error as the family's own."""

    default_scoring = scoring_name = "neg_mean_absolute_error"


class _ClippedGaussian(Gaussian):
    """A gaussian family of the user's: its own name, loss and CV scoring."""

    name = "clipped_gaussian"
    loss = _ClippedLoss()
    scoring = _AbsoluteErrorScoring()


def _heavy_tailed():
    """``make_blocks`` data whose response has a few gross outliers."""
    X, y = _outcome("gaussian")
    y = y.copy()
    y[[3, 17, 40, 71]] += np.array([25.0, -30.0, 20.0, 35.0])
    return X, y


def test_a_users_family_brings_its_own_step0_loss():
    """VCPCR with the user's family (not registered: an object) fits step 0
    by its loss: the weights, and so the clusters, are the gaussian
    family's on the clipped response ``clip(standardize(y), -1.5, 1.5)``
    (whose own standardization is the clipped loss's target), while step 2
    fits ``y`` itself."""
    X, y = _heavy_tailed()
    kw = {"n_clusters": 3, "lam_ratio": 0.3, "n_init": 3, "random_state": 0}
    z = (y - y.mean()) / y.std(ddof=1)
    clipped = np.clip(z, -1.5, 1.5)
    new = VCPCR(family=_ClippedGaussian(), **kw).fit(X, y)
    ref = VCPCR(family="gaussian", **kw).fit(X, clipped)
    plain = VCPCR(family="gaussian", **kw).fit(X, y)
    assert_allclose(new.weights_, ref.weights_, rtol=1e-9, atol=1e-12)
    assert np.abs(new.weights_ - plain.weights_).max() > 1e-3  # the loss mattered
    assert_array_equal(new.labels_, ref.labels_)
    # step 2 is the family's (OLS of y), not the loss's
    M = new.transform(X)
    design = np.column_stack([np.ones(len(y)), M])
    ols = np.linalg.lstsq(design, y, rcond=None)[0]
    assert_allclose(np.asarray(new.result_.params), ols, rtol=1e-8, atol=1e-10)
    assert new.summary().as_text().count("gaussian (OLS)") == 1


def test_a_users_family_is_tuned_by_its_own_scoring_and_loss():
    """VCPCRCV with the user's family scores its folds by the family's own
    scoring (``scoring=None``: the mean absolute error, batched) on fold
    models whose weights come from its loss: the same split scores as
    scikit-learn's mean absolute error of each fold model's predictions (a
    callable scorer, which gets every fold model whole), and other scores
    than the gaussian family's with the same scoring (other weights)."""
    from sklearn.metrics import mean_absolute_error

    X, y = _heavy_tailed()
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    kw = {
        "n_clusters": (2, 3),
        "deltas": [0.05, 0.3],
        "lam_ratios": [0.3],
        "n_init": 2,
        "cv": folds,
        "random_state": 0,
    }
    seen = set()

    def absolute_error(estimator, X_test, y_test):
        seen.add(type(estimator.family))
        return -mean_absolute_error(y_test, estimator.predict(X_test))

    splits = [f"split{i}_test_score" for i in range(len(folds))]
    cv = VCPCRCV(family=_ClippedGaussian(), scoring=None, **kw).fit(X, y)
    ref = VCPCRCV(family=_ClippedGaussian(), scoring=absolute_error, **kw).fit(X, y)
    assert seen == {_ClippedGaussian}
    assert_allclose(cv.cv_results_[splits], ref.cv_results_[splits], rtol=1e-8)
    assert cv.best_params_ == ref.best_params_
    assert isinstance(cv.best_estimator_.family, _ClippedGaussian)
    gaussian = VCPCRCV(family="gaussian", scoring="neg_mean_absolute_error", **kw).fit(
        X, y
    )
    assert not np.allclose(
        cv.cv_results_[splits], gaussian.cv_results_[splits], rtol=1e-3
    )


@pytest.mark.parametrize("name", ["gaussian", "binomial", COX])
def test_calibration_asks_a_users_family_what_it_is(name):
    """``cross_val_calibration`` takes a model whose family is an object of
    the user's under another name (not registered): the calibration its
    outcome calls for (survival at a horizon, probabilities, values), the
    same as the built-in family's, asked of the family, not its name."""
    from vcpcr.calibration import cross_val_calibration

    X, y = _outcome(name)
    original = type(FAMILIES[name])
    renamed = type(f"My{original.__name__}", (original,), {"name": "mine"})()
    kw = {"n_clusters": 2, "lam_ratio": 0.3, "n_init": 2, "random_state": 0}
    horizon = {"horizon": float(np.median(y["time"]))} if name == "cox" else {}
    ref = cross_val_calibration(VCPCR(family=name, **kw), X, y, cv=3, **horizon)
    new = cross_val_calibration(VCPCR(family=renamed, **kw), X, y, cv=3, **horizon)
    assert new.family == ref.family
    assert_array_equal(new.predicted, ref.predicted)
    assert (new.slope, new.intercept) == (ref.slope, ref.intercept)
