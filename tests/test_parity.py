"""Every public method and fitted attribute of a fitted VCPCR, on a fitted VCPCRCV.

A fitted ``VCPCRCV`` has the public API of the ``VCPCR`` it refits, with the
same meaning: calling a method (or reading an attribute) gives what it gives
on ``best_estimator_`` (#25). The few names ``VCPCRCV`` gives a meaning of
its own are listed in ``OWN`` with the reason; a new public name of
``VCPCR`` fails here until it is delegated and given a call in ``CALLS``.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import re

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from sklearn.model_selection import KFold

from tests.conftest import needs_survival
from vcpcr import VCPCR, VCPCRCV
from vcpcr.simulate import make_block_data

#: VCPCR's public names that VCPCRCV gives its own meaning, and why.
OWN = {
    "fit": "tunes the grid by CV, then refits",
    "fit_transform": "fit (the CV), then transform",
    "get_params": "VCPCRCV's own parameters",
    "set_params": "VCPCRCV's own parameters",
    "get_metadata_routing": "VCPCRCV's own routing",
    "score": "scorer_ of best_estimator_, as GridSearchCV and LogisticRegressionCV",
    "set_score_request": "configures VCPCR.score's sample_weight",
    "plot": "the CV curve, with a FutureWarning, until it means VCPCR.plot",
    "summary": "best_estimator_'s, plus the tuning note (checked below)",
    "summary2": "best_estimator_'s, plus the tuning note (checked below)",
    "set_output": "passed on to best_estimator_ (checked below)",
}


def _printed(method):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        method()
    return out.getvalue()


#: How each public method of VCPCR is called in the comparison.
CALLS = {
    "predict": lambda m, X, y: m.predict(X),
    "predict_proba": lambda m, X, y: m.predict_proba(X),
    "decision_function": lambda m, X, y: m.decision_function(X),
    "transform": lambda m, X, y: m.transform(X),
    "get_feature_names_out": lambda m, X, y: m.get_feature_names_out(),
    "outcome_design": lambda m, X, y: m.outcome_design(X),
    "standardized_design": lambda m, X, y: m.standardized_design(X),
    "signature": lambda m, X, y: m.signature(),
    "export_scoring_rule": lambda m, X, y: m.export_scoring_rule().to_json(),
    "path": lambda m, X, y: m.path(X, y, lam_ratios=[0.3, 0.6]),
    "get_prediction": lambda m, X, y: m.get_prediction(X).summary_frame(),
    "predict_survival_function": lambda m, X, y: m.predict_survival_function(
        X, return_array=True
    ),
    "predict_cumulative_hazard": lambda m, X, y: m.predict_cumulative_hazard(
        X, return_array=True
    ),
    "predict_cumulative_hazard_function": (
        lambda m, X, y: m.predict_cumulative_hazard_function(X, return_array=True)
    ),
    "predict_log_partial_hazard": lambda m, X, y: m.predict_log_partial_hazard(X),
    "predict_median": lambda m, X, y: m.predict_median(X),
    "print_summary": lambda m, X, y: _printed(m.print_summary),
}

FAMILY_CASES = [
    pytest.param("gaussian", id="gaussian"),
    pytest.param("binomial", id="binomial"),
    pytest.param("cox", id="cox", marks=needs_survival),
]


@pytest.fixture(scope="module", params=FAMILY_CASES)
def fitted(request):
    """A small VCPCRCV of one family, fitted with a covariate, and its data."""
    family = request.param
    data = make_block_data(
        45, [3, 3], [1.0, -1.0], n_noise=4, family=family, random_state=0
    )
    X = pd.DataFrame(data.X, columns=[f"g{j}" for j in range(data.X.shape[1])])
    X["age"] = np.random.default_rng(0).normal(60.0, 10.0, len(X))
    y = data.y if data.event is None else np.column_stack([data.y, data.event])
    cv = VCPCRCV(
        n_clusters=(2, 3),
        family=family,
        deltas=[0.1],
        lam_ratios=[0.3, 0.5],
        n_init=1,
        cv=KFold(3, shuffle=True, random_state=0),
        random_state=0,
        covariates="age",
    ).fit(X, y)
    return cv, X, y


def _public(model):
    """Public methods and attributes, not the parameters (parity of methods)."""
    params = model.get_params(deep=False)
    return sorted(n for n in dir(model) if not n.startswith("_") and n not in params)


def _assert_same(ours, theirs, name):
    if isinstance(theirs, pd.DataFrame):
        pd.testing.assert_frame_equal(ours, theirs, obj=name)
    elif isinstance(theirs, pd.Series):
        pd.testing.assert_series_equal(ours, theirs, obj=name)
    elif isinstance(theirs, np.ndarray):
        assert_array_equal(ours, theirs, err_msg=name, strict=True)
    else:
        assert ours == theirs, name


def test_every_public_name_of_a_fitted_vcpcr_is_on_the_fitted_vcpcrcv(fitted):
    cv, _, _ = fitted
    best = cv.best_estimator_
    missing = [
        name
        for name in _public(best)
        if not hasattr(cv, name) and name != "set_score_request"
    ]
    assert not missing, f"VCPCRCV lacks VCPCR's {missing}"
    # and none that best_estimator_ lacks (another family's methods)
    extra = [
        name
        for name in _public(VCPCR(family=cv.family))
        if hasattr(cv, name) and not hasattr(best, name) and name not in OWN
    ]
    assert not extra, f"VCPCRCV has {extra}, which its best_estimator_ has not"


def test_fitted_attributes_are_those_of_best_estimator(fitted):
    cv, _, _ = fitted
    best = cv.best_estimator_
    names = [n for n in _public(best) if not callable(getattr(best, n))]
    assert {"membership_", "result_", "coef_"} <= set(names)
    for name in names:
        _assert_same(getattr(cv, name), getattr(best, name), name)


def test_methods_give_what_they_give_on_best_estimator(fitted):
    cv, X, y = fitted
    best = cv.best_estimator_
    methods = [n for n in _public(best) if callable(getattr(best, n))]
    unknown = sorted(set(methods) - set(CALLS) - set(OWN))
    assert not unknown, f"VCPCR's {unknown}: delegate them and add them to CALLS"
    for name in set(methods) & set(CALLS):
        ours, theirs = getattr(cv, name), getattr(best, name)
        assert inspect.signature(ours) == inspect.signature(theirs), name
        assert ours.__doc__ == theirs.__doc__, name
        try:
            expected = CALLS[name](best, X, y)
        except ValueError as exc:  # e.g. get_prediction of a shrunk refit
            with pytest.raises(type(exc), match=re.escape(str(exc))):
                CALLS[name](cv, X, y)
            continue
        _assert_same(CALLS[name](cv, X, y), expected, name)


def test_summary_is_best_estimators_with_the_tuning_note(fitted):
    cv, _, _ = fitted
    best = cv.best_estimator_
    ours, theirs = cv.summary(), best.summary()
    assert [t.as_text() for t in ours.tables] == [t.as_text() for t in theirs.tables]
    assert "Tuning: n_clusters=" in ours.as_text()
    assert "Tuning: n_clusters=" not in theirs.as_text()
    tables2 = zip(cv.summary2().tables, best.summary2().tables, strict=True)
    for ours2, theirs2 in tables2:
        pd.testing.assert_frame_equal(ours2, theirs2)


def test_score_is_the_cv_scorer_of_best_estimator(fitted):
    cv, X, y = fitted
    assert cv.score(X, y) == cv.scorer_(cv.best_estimator_, X, y)


def test_set_output_reaches_best_estimator(fitted):
    cv, X, _ = fitted
    try:
        latent = cv.set_output(transform="pandas").transform(X)
        assert isinstance(latent, pd.DataFrame)
        assert list(latent.columns) == list(cv.get_feature_names_out())
        pd.testing.assert_frame_equal(latent, cv.best_estimator_.transform(X))
    finally:
        cv.set_output(transform="default")
    assert isinstance(cv.transform(X), np.ndarray)


@pytest.mark.parametrize(
    ("family", "name", "available"),
    [
        ("gaussian", "predict_proba", False),
        ("binomial", "predict_proba", True),
        ("gaussian", "outcome_design", True),
        ("gaussian", "print_summary", False),
        ("gaussian", "coef_", False),  # a fitted attribute, before fit
    ],
    ids=["gaussian-proba", "binomial-proba", "design", "print-summary", "coef"],
)
def test_delegation_before_fit_follows_the_family(family, name, available):
    """As GridSearchCV: before fit, what a VCPCR of the family has."""
    assert hasattr(VCPCRCV(family=family), name) is available


def test_without_refit_nothing_is_delegated():
    cv = VCPCRCV(refit=False)
    assert not hasattr(cv, "outcome_design")
    assert not hasattr(cv, "fit_transform")
