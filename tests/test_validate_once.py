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

import numpy as np
import pandas as pd
import pytest
from conftest import needs_survival
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import DataConversionWarning
from validation_counts import cohort, cv_counts

from vcpcr import VCPCR, VCPCRCV
from vcpcr._families import FAMILIES as FAMILY_OBJECTS
from vcpcr._input import take

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
