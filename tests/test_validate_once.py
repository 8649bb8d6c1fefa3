"""A fit validates its input once (issue #50): counted, not assumed.

The counts come from :mod:`validation_counts` (also a script that prints
them): the estimators' input route (``VCPCRBase._fit_input``), the family's
validator of ``y`` (``Family.prepare``) and ``check_survival`` wherever it is
called. Before #50, one ``VCPCRCV(family="cox", covariates=[...]).fit`` with
5 folds ran the input route twice, ``prepare`` 7 times and ``check_survival``
23 times.
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

FAMILIES = [
    pytest.param("cox", marks=needs_survival, id="cox"),
    pytest.param("gaussian", id="gaussian"),
    pytest.param("binomial", id="binomial"),
]


@pytest.mark.parametrize("family", FAMILIES)
def test_cv_fit_runs_the_input_route_once(family):
    assert cv_counts(family)["input"] == 1


@pytest.mark.xfail(reason="#50: the folds validate y again", strict=True)
@pytest.mark.parametrize("family", FAMILIES)
def test_cv_fit_validates_the_outcome_once(family):
    counts = cv_counts(family)
    assert counts[f"prepare:{family}"] == 1
    assert counts["check_survival"] == (family == "cox")


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
