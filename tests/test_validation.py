"""One validator per concept, each called once per fit (#20).

The checks of ``X`` and ``y`` live in two layers: the foundations
(:mod:`vcpcr._checks`, numpy only) and the estimators' additions
(:mod:`vcpcr._input`, scikit-learn's ``validate_data``). These tests count,
with a profiler hook, how often each concept's one function runs during one
``VCPCR().fit``, and check that the entry points that share a concept give
the same verdict.
"""

from __future__ import annotations

import sys
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from conftest import needs_survival

from vcpcr import (
    VCPCR,
    VCPCRCV,
    Surv,
    _checks,
    _families,
    _input,
    compute_weights,
    lambda_max,
    sos_nmf,
)
from vcpcr._solvers.sos_nmf import batched_sos_nmf

#: The function of each concept; the count is keyed by the function and, for
#: the NaN check, by the argument it names (X and y are two arrays).
CONCEPTS = {
    _checks.check_finite.__code__: "missing values",
    _input.missing_as_nan.__code__: "missing as NaN (DataFrame)",
    _checks.check_y_length.__code__: "y length",
    _checks.check_varying.__code__: "constant y",
    _checks.check_time_event.__code__: "survival times/events",
    _checks.check_labels.__code__: "initial labels",
    _families.Gaussian.prepare.__code__: "y validator",
    _families.Binomial.prepare.__code__: "y validator",
    _families.Cox.prepare.__code__: "y validator",
}


def _count_checks(fit):
    counts = Counter()

    def hook(frame, event, arg):
        if event == "call" and frame.f_code in CONCEPTS:
            concept = CONCEPTS[frame.f_code]
            if concept == "missing values":
                concept = f"{concept} of {frame.f_locals['name']}"
            counts[concept] += 1

    sys.setprofile(hook)
    try:
        fit()
    finally:
        sys.setprofile(None)
    return dict(counts)


def _data(family, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 12))
    X[:, 1] += X[:, 0]
    if family == "gaussian":
        return X, X[:, 0] + rng.normal(size=40)
    if family == "binomial":
        return X, np.where(X[:, 0] + rng.normal(size=40) > 0, "yes", "no")
    return X, Surv(rng.exponential(size=40) * np.exp(-X[:, 0]), rng.random(40) < 0.7)


ONCE = {
    "missing as NaN (DataFrame)": 1,
    "missing values of X": 1,
    "y length": 1,
    "y validator": 1,
}
EXPECTED = {
    "gaussian": {**ONCE, "missing values of y": 1, "constant y": 1},
    "binomial": {**ONCE, "missing values of y": 1},
    "cox": {**ONCE, "survival times/events": 1},
}


@pytest.mark.parametrize(
    "family",
    [
        "gaussian",
        "binomial",
        pytest.param("cox", marks=needs_survival),
    ],
)
def test_each_concept_is_checked_once_per_fit(family):
    X, y = _data(family)
    model = VCPCR(2, family=family, n_init=3, random_state=0)
    counts = _count_checks(lambda: model.fit(X, y))
    assert counts == EXPECTED[family]


def test_given_initial_labels_are_checked_once_per_fit():
    """The engine runs with ``check_input=False`` after VCPCR's one check."""
    X, y = _data("gaussian")
    model = VCPCR(2, init=np.arange(12) % 2, random_state=0)
    counts = _count_checks(lambda: model.fit(X, y))
    assert counts["initial labels"] == 1
    assert counts["missing values of X"] == 1


def test_sos_nmf_checks_its_input_once():
    X, _ = _data("gaussian")
    counts = _count_checks(lambda: sos_nmf(X, init=np.arange(12) % 3))
    assert counts == {"missing values of X": 1, "initial labels": 1}


# ------------------------------------------------- one verdict per concept

LABELS = {
    "integral floats": (np.arange(6.0) % 2, None),
    "non-integral": (np.full(6, 0.5), TypeError),
    "negative": (np.array([0, 1, -1, 0, 1, 0]), ValueError),
    "too short": (np.array([0, 1]), ValueError),
}


@pytest.mark.parametrize(("labels", "error"), LABELS.values(), ids=list(LABELS))
def test_initial_labels_get_one_verdict_everywhere(labels, error):
    """sos_nmf, lambda_max, VCPCR(init=) and the engine's inits agree (the
    engine used to refuse integral floats that sos_nmf accepted)."""
    X, y = _data("gaussian")
    X = X[:, :6]
    calls = {
        "sos_nmf": lambda: sos_nmf(X, init=labels),
        "lambda_max": lambda: lambda_max(X, labels),
        "VCPCR": lambda: VCPCR(2, init=labels).fit(X, y),
        "batched_sos_nmf": lambda: batched_sos_nmf(
            (X - X.mean(0)) / X.std(0, ddof=1), np.ones(6), [labels], [0], [0], [0.1]
        ),
    }
    for name, call in calls.items():
        if error is None:
            call()
        else:
            with pytest.raises(error, match="label") as exc:
                call()
            assert "init" in str(exc.value), name


SURVIVAL = {
    "missing time": ([np.nan, 2.0, 3.0], [1, 0, 1], ValueError, "1 missing survival"),
    "missing event": ([1.0, 2.0, 3.0], [1, None, 1], ValueError, "1 missing event"),
    "infinite time": ([np.inf, 2.0, 3.0], [1, 0, 1], ValueError, "1 infinite"),
    "negative time": ([-1.0, 2.0, 3.0], [1, 0, 1], ValueError, "1 negative"),
    "R coding": ([1.0, 2.0, 3.0], [1, 2, 2], ValueError, "pass event == 2"),
    "labels": ([1.0, 2.0, 3.0], ["d", "a", "d"], TypeError, "status == 'dead'"),
}


@pytest.mark.parametrize(
    ("time", "event", "error", "match"), SURVIVAL.values(), ids=list(SURVIVAL)
)
def test_surv_and_check_survival_give_one_verdict(time, event, error, match):
    """``Surv`` and every Cox ``y`` share the checks of times and events."""
    with pytest.raises(error, match=match):
        Surv(time, event)
    frame = pd.DataFrame({"time": time, "event": event})
    with pytest.raises(error, match=match):
        _checks.check_survival(frame)


def test_missing_values_are_reported_alike_in_x_and_survival_y():
    """pd.NA becomes NaN by one rule, in a DataFrame X and in a survival y."""
    X, y = _data("gaussian")
    frame = pd.DataFrame(X).astype(object)
    frame.iloc[3, 2] = pd.NA
    with pytest.raises(ValueError, match=r"X contains NaN in 1 column\(s\) \['x2'\]"):
        VCPCR(2).fit(frame, y)
    surv = pd.DataFrame({"time": [1.0, pd.NA, 3.0], "event": [1, 0, 1]}, dtype=object)
    with pytest.raises(ValueError, match="1 missing survival time"):
        _checks.check_survival(surv)


def test_constant_y_is_one_rule():
    """VCPCR, compute_weights and the baselines refuse the same constant y."""
    from vcpcr.baselines import CEN

    X, _ = _data("gaussian")
    y = np.full(40, 3.0) + 1e-14 * np.arange(40)  # constant up to rounding
    for call in (
        lambda: VCPCR(2).fit(X, y),
        lambda: compute_weights(X, y, "ridge"),
        lambda: CEN(2).fit(X, y),
    ):
        with pytest.raises(ValueError, match="y is constant"):
            call()


def test_compute_weights_takes_the_labels_vcpcr_takes():
    """The binomial weights validate y as VCPCR does: any two class labels."""
    X, _ = _data("gaussian")
    labels = np.where(X[:, 0] > 0, 2, 1)
    w_labels = compute_weights(X, labels, "ridge", family="binomial")
    w_01 = compute_weights(X, (labels == 2).astype(float), "ridge", family="binomial")
    np.testing.assert_array_equal(w_labels, w_01)
    with pytest.raises(ValueError, match="single class"):
        compute_weights(X, np.ones(40), "ridge", family="binomial")


@pytest.mark.parametrize(
    "entry",
    ["VCPCR", "VCPCRCV", "multi_split"],
)
def test_the_entry_points_check_the_design_alike(entry):
    """VCPCR, VCPCRCV and the resampling share one route to the checked
    design: the same message for a constant column, a covariate that the
    others explain, and covariates that leave nothing to cluster."""
    from vcpcr.inference import multi_split

    X, y = _data("gaussian")
    Xc = X.copy()
    Xc[:, 5] = 1.0
    X3 = X.copy()
    X3[:, 2] = X[:, 0] + X[:, 1]

    def run(X_, **params):
        if entry == "multi_split":
            return multi_split(VCPCR(n_clusters=2, **params), X_, y, n_splits=2)
        est = VCPCR if entry == "VCPCR" else VCPCRCV
        return est(n_clusters=2, **params).fit(X_, y)

    with pytest.raises(ValueError, match=r"constant.*\['x5'\]"):
        run(Xc)
    with pytest.raises(ValueError, match=r"'x2'.*'x0', 'x1'"):
        run(X3, covariates=[0, 1, 2])
    with pytest.raises(ValueError, match="no feature is left to cluster"):
        run(X, covariates=list(range(12)))


@pytest.mark.parametrize("structured", [False, True], ids=["frame", "structured"])
def test_survival_y_with_time_and_event_names_is_read_by_name(structured):
    """A y with columns (event, time) was read by position: with 0/1 times
    the swap could not be detected (#46 row 11)."""
    from vcpcr._checks import check_survival

    time = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    event = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    y = pd.DataFrame({"event": event, "time": time})
    if structured:
        y = y.to_records(index=False)
    t, e = check_survival(y)
    np.testing.assert_array_equal(t, time)
    np.testing.assert_array_equal(e, event.astype(bool))
