"""A fit validates its input once (issue #50): counted, not assumed.

The counts come from :mod:`validation_counts` (also a script that prints
them): the estimators' input route (``VCPCRBase._fit_input``), the family's
validator of ``y`` (``Family.prepare``) and ``check_survival`` wherever it is
called. Before #50, one ``VCPCRCV(family="cox", covariates=[...]).fit`` with
5 folds ran the input route twice, ``prepare`` 7 times and ``check_survival``
23 times (33 scored by the partial likelihood).
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pandas as pd
import pytest
from conftest import needs_survival
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import DataConversionWarning
from validation_counts import cohort, cv_counts, resampling_counts

from vcpcr import VCPCR, VCPCRCV
from vcpcr._families import FAMILIES as FAMILY_OBJECTS
from vcpcr._input import take
from vcpcr.inference import _resampling
from vcpcr.inference._resampling import fit_for_selection, fit_part, resampling_rows

FAMILIES = [
    pytest.param("cox", marks=needs_survival, id="cox"),
    pytest.param("gaussian", id="gaussian"),
    pytest.param("binomial", id="binomial"),
]


@pytest.mark.parametrize("family", FAMILIES)
def test_cv_fit_runs_the_input_route_once(family):
    assert cv_counts(family)["input"] == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_cv_fit_validates_the_outcome_once(family):
    counts = cv_counts(family)
    assert counts[f"prepare:{family}"] == 1
    assert counts["check_survival"] == (family == "cox")


@needs_survival
def test_cv_fit_by_the_partial_likelihood_validates_the_outcome_once():
    """The fold scoring (training and test rows) reads the prepared outcome
    too (before #50: 33 check_survival calls)."""
    counts = cv_counts("cox", scoring="neg_partial_likelihood_deviance")
    assert counts["prepare:cox"] == counts["check_survival"] == counts["input"] == 1


def _every_warning(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [str(w.message) for w in caught], [w.category for w in caught]


def test_refit_is_the_public_fit_of_the_chosen_point():
    """The refit solves the CV's validated data (no second input route) and
    copies what describes them: the same model as ``VCPCR(**best_params_)``
    fitted by the public door, names, encoding and all."""
    X, y = cohort("gaussian")
    X["site"] = pd.Categorical(np.where(np.arange(len(X)) % 3, "a", "b"))
    cv = VCPCRCV(
        covariates=["age", "site"], n_clusters=[2], n_init=1, cv=3, random_state=0
    ).fit(X, y)
    best, public = cv.best_estimator_, VCPCR(**cv.best_params_).fit(X, y)
    assert_array_equal(best.feature_names_in_, public.feature_names_in_)
    assert best.n_features_in_ == public.n_features_in_ == cv.n_features_in_
    assert best.model_spec_ is cv.model_spec_  # copied, not rebuilt
    assert best.covariate_names_ == public.covariate_names_
    assert_array_equal(best.membership_.index, public.membership_.index)
    assert_allclose(best.coef_, public.coef_, rtol=1e-12, atol=0)
    assert_allclose(best.predict(X), public.predict(X), rtol=1e-12, atol=0)


def test_refit_of_an_array_has_no_feature_names():
    """An array's CV has no ``feature_names_in_``, nor has its refit."""
    X, y = cohort("gaussian")
    cv = VCPCRCV(n_clusters=[2], n_init=1, cv=3, random_state=0)
    cv.fit(X.to_numpy(), y)
    assert not hasattr(cv, "feature_names_in_")
    assert not hasattr(cv.best_estimator_, "feature_names_in_")
    assert not hasattr(cv.best_estimator_, "model_spec_")
    assert list(cv.membership_.index)[:2] == ["x0", "x1"]


@pytest.mark.parametrize(
    ("what", "message", "category"),
    [
        ("missing", "Dropped 2 of 120 rows", None),
        ("column", "A column-vector y was passed", DataConversionWarning),
    ],
    ids=["dropped-rows", "column-vector-y"],
)
def test_input_warnings_are_shown_once(what, message, category):
    """The input route's warnings come once per ``VCPCRCV.fit``: the refit
    does not run it again (before #50 it did, and a filter muted the dropped
    rows' warning there; a column-vector y warned twice)."""
    X, y = cohort("gaussian")
    if what == "missing":
        X.iloc[[3, 7], 4] = np.nan
    else:
        y = y[:, None]
    cv = VCPCRCV(missing="drop", n_clusters=[2], n_init=1, cv=3, random_state=0)
    messages, categories = _every_warning(lambda: cv.fit(X, y))
    found = [i for i, m in enumerate(messages) if message in m]
    assert len(found) == 1, messages
    if category is not None:
        assert issubclass(categories[found[0]], category)


def test_an_empty_chosen_model_is_not_warned_about():
    """An empty model chosen by the CV is an answer: no "No feature was
    selected" warning from the refit (``VCPCR.fit`` gives it)."""
    X, y = cohort("gaussian")
    cv = VCPCRCV(n_clusters=[2], n_init=1, cv=3, lam_ratios=[1.0], random_state=0)
    messages, _ = _every_warning(lambda: cv.fit(X, y))
    assert cv.n_clusters_ == 0
    assert not [m for m in messages if "No feature was selected" in m]
    with pytest.warns(UserWarning, match="No feature was selected"):
        VCPCR(**cv.best_params_).fit(X, y)


#: The columns' roles per family (a stratified Cox model).
ROLES = {
    "cox": {"covariates": ["age"], "strata": ["sex"]},
    "gaussian": {"covariates": ["age", "sex"]},
    "binomial": {"covariates": ["age", "sex"]},
}


@pytest.mark.parametrize("family", FAMILIES)
def test_take_is_the_checked_input_of_those_rows(family):
    """``FitInput.take(rows)`` is what the input route returns on those rows
    (the gaussian target standardized on them, the covariates too), and the
    fit on it is the public fit on them, bit for bit."""
    X, y = cohort(family)
    est = VCPCR(family=family, n_clusters=2, n_init=1, random_state=0, **ROLES[family])
    rows = np.flatnonzero(np.arange(len(X)) % 3 != 1)
    part = est._fit_input(X, y).take(rows)
    alone = VCPCR(**est.get_params())._fit_input(X.iloc[rows], take(y, rows))
    for got, want in [
        (part.design.X, alone.design.X),
        (part.design.Zs, alone.design.Zs),
        (part.design.prepared.outcome, alone.design.prepared.outcome),
        (part.design.prepared.weights_target, alone.design.prepared.weights_target),
        (part.layout.Z, alone.layout.Z),
        (part.layout.S, alone.layout.S),
    ]:
        assert_array_equal(got, want)
    assert_array_equal(part.design.y, alone.design.y)
    assert_array_equal(part.rows, rows)
    # the memory order too (a fit's products on the other order run slower)
    assert part.design.X.flags.f_contiguous == alone.design.X.flags.f_contiguous
    fitted = est._fit_validated(part)
    public = VCPCR(**est.get_params()).fit(X.iloc[rows], take(y, rows))
    assert_array_equal(fitted.coef_, public.coef_)
    assert_array_equal(fitted.membership_.index, public.membership_.index)


def test_binomial_part_problem_names_the_class_as_given():
    """On the prepared 0/1 response, a part without a class names the user's
    label, as the check of the raw labels did."""
    family = FAMILY_OBJECTS["binomial"]
    y = pd.Series(["a"] * 6 + ["b"] * 4, dtype=object)
    train, test = np.arange(8), np.arange(8, 10)
    message = family.part_problem(family.prepare(y), train, test)
    assert message == (
        "its test part (2 rows) has no sample of class 'a' (which has 6 sample(s) in y)"
    )
    assert family.fold_problem(y, train, test) == message


@needs_survival
def test_cox_part_problem_checks_the_training_part_information():
    """A training part whose only event time has everyone at risk failing
    carries no information: named, without validating the outcome again."""
    family = FAMILY_OBJECTS["cox"]
    y = np.column_stack([[1.0, 2.0, 3.0, 0.5, 4.0], [0, 0, 1, 1, 0]])
    train, test = np.arange(3), np.arange(3, 5)
    message = family.part_problem(family.prepare(y), train, test)
    assert message.startswith(
        "its training part (3 rows) is unusable: y carries no information for "
        "a Cox model"
    )
    assert family.fold_problem(y, train, test) == message
    assert family.part_problem(family.prepare(y), np.array([0, 1, 3, 4]), [2]) is None


@needs_survival
@pytest.mark.parametrize("how", ["multi_split", "stability_selection"])
@pytest.mark.parametrize("template", ["VCPCR", "VCPCRCV"])
def test_a_resampling_validates_once(how, template):
    """A resampling checks its data once, not once per resample: input
    route / prepare / check_survival 1 / 1 / 1 per call (before #50: one
    more input route and prepare per resample, and multi-split's part check
    and second-part prepare on top)."""
    counts = resampling_counts(how, template=template)
    assert counts["input"] == counts["prepare:cox"] == counts["check_survival"] == 1


def _formula_cohort(n=120, seed=0):
    """:func:`cohort`'s Cox data as one frame: time, event, a 3-level site."""
    X, y = cohort("cox", n, seed)
    frame = X.assign(time=y["time"].to_numpy(), event=y["event"].to_numpy())
    frame["site"] = np.random.default_rng(seed + 2).choice(["a", "b", "c"], n)
    return frame, None


#: (family, the template's parameters, data): the cases a resample covers.
PARTS = {
    "cox-covariates-strata": (
        "cox",
        {"covariates": ["age"], "strata": ["sex"]},
        partial(cohort, "cox"),
    ),
    "cox-formula": (
        "cox",
        {"formula": "Surv(time, event) ~ age + C(site) + strata(sex) | . - age"},
        _formula_cohort,
    ),
    "binomial": (
        "binomial",
        {"covariates": ["age", "sex"]},
        partial(cohort, "binomial"),
    ),
    "gaussian": (
        "gaussian",
        {"covariates": ["age", "sex"]},
        partial(cohort, "gaussian"),
    ),
}


def _template(kind, family, params):
    if kind == "VCPCR":
        return VCPCR(family=family, n_clusters=2, n_init=2, **params)
    return VCPCRCV(family=family, n_clusters=[2, 3], n_init=1, cv=3, **params)


@pytest.mark.parametrize("kind", ["VCPCR", "VCPCRCV"])
@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=needs_survival) if c.startswith("cox") else c
        for c in PARTS
    ],
)
def test_a_resample_is_the_public_fit_of_its_rows(case, kind, monkeypatch):
    """A resample fitted through ``take`` + ``_fit_validated`` (``fit_part``)
    is the public ``fit`` on its rows bit for bit: coefficients, clusters,
    the chosen grid point and the attributes that describe the data."""
    family, params, data = PARTS[case]
    X, y = data()
    template = _template(kind, family, params)
    checked = resampling_rows(template, X, y, "test")
    rows = np.sort(np.random.default_rng(5).choice(len(X), 84, replace=False))

    def refused(*args, **kwargs):
        raise AssertionError("the part was fitted through fit, not take")

    monkeypatch.setattr(_resampling, "fit_for_selection", refused)
    got = fit_part(template, 11, checked.data, rows, checked.X, checked.y)
    monkeypatch.undo()
    want = fit_for_selection(template, 11, take(X, rows), take(y, rows))
    assert_array_equal(got.coef_, want.coef_)
    assert_array_equal(got.intercept_, want.intercept_)
    assert got.clusters_ == want.clusters_
    assert_array_equal(got.membership_.index, want.membership_.index)
    assert got.covariate_names_ == want.covariate_names_
    assert got.n_features_in_ == want.n_features_in_
    assert_array_equal(got.feature_names_in_, want.feature_names_in_)
    if "formula" in params:
        assert got.model_spec_.feature_names == want.model_spec_.feature_names
    if kind == "VCPCRCV":
        assert got.best_params_ == want.best_params_
        assert got.best_index_ == want.best_index_
        assert_array_equal(
            got.cv_results_["mean_test_score"], want.cv_results_["mean_test_score"]
        )
        assert_array_equal(got.best_estimator_.coef_, want.best_estimator_.coef_)


def _errors(fit):
    """The message of the ValueError that ``fit()`` raises."""
    try:
        fit()
    except ValueError as exc:
        return str(exc)
    raise AssertionError("no ValueError was raised")


@pytest.mark.parametrize(
    ("family", "spoil", "params"),
    [
        pytest.param("cox", "no-events", {}, marks=needs_survival, id="cox-no-events"),
        pytest.param(
            "cox",
            "stratum-without-events",
            {"strata": ["sex"]},
            marks=needs_survival,
            id="cox-stratum-without-events",
        ),
        pytest.param("binomial", "one-class", {}, id="binomial-one-class"),
        pytest.param("gaussian", "constant-column", {}, id="constant-column"),
        pytest.param(
            "gaussian", "constant-covariate", {"covariates": ["sex"]}, id="covariate"
        ),
    ],
)
def test_a_part_fails_with_the_message_of_fit(family, spoil, params):
    """What depends on a part's rows (``FitInput.check_part``) fails as the
    public ``fit`` on those rows does, with its message."""
    X, y = cohort(family)
    event = np.asarray(y["event"]) if family == "cox" else None
    sex = X["sex"].to_numpy()
    if spoil == "no-events":
        rows = np.flatnonzero(event == 0)
    elif spoil == "stratum-without-events":
        rows = np.flatnonzero((event == 0) | (sex == 1))
    elif spoil == "one-class":
        rows = np.flatnonzero(np.asarray(y) == 1)
    elif spoil == "constant-column":
        X.loc[X.index[::2], "g3"] = 0.5
        rows = np.arange(0, len(X), 2)
    else:
        rows = np.flatnonzero(sex == 1)
    template = VCPCR(family=family, n_clusters=2, n_init=1, **params)
    checked = resampling_rows(template, X, y, "test")
    got = _errors(lambda: fit_part(template, 0, checked.data, rows, X, y))
    public = VCPCR(**template.get_params())
    want = _errors(lambda: public.fit(X.iloc[rows], take(y, rows)))
    assert got == want


def test_a_part_missing_a_level_is_fitted_through_fit():
    """A part without one of a categorical covariate's levels would be
    encoded otherwise by a fit on its rows (its dummy left out): it is
    fitted through ``fit``, so the result is that fit's."""
    X, y = cohort("gaussian")
    X["site"] = pd.Categorical(np.where(np.arange(len(X)) % 3 == 0, "a", "b"))
    X.loc[X.index[1::3], "site"] = "a"
    X["site"] = X["site"].cat.add_categories("c")
    X.loc[X.index[2::6], "site"] = "c"
    template = VCPCR(covariates=["age", "site"], n_clusters=2, n_init=1)
    checked = resampling_rows(template, X, y, "test")
    rows = np.flatnonzero(X["site"].to_numpy() != "c")
    assert not checked.data.encodes_alike(rows)
    assert checked.data.encodes_alike(np.arange(len(X)))
    got = fit_part(template, 3, checked.data, rows, checked.X, checked.y)
    want = VCPCR(**template.set_params(random_state=3).get_params()).fit(
        X.iloc[rows], y[rows]
    )
    assert got.covariate_names_ == want.covariate_names_ == ["age", "site[T.b]"]
    assert_array_equal(got.coef_, want.coef_)
