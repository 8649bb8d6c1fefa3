"""Risk groups of a Cox model and their Kaplan-Meier figure (plot_risk_groups)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from conftest import make_blocks, needs_survival
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold, StratifiedKFold

from vcpcr import VCPCR, VCPCRWarning

matplotlib.use("Agg")

pytestmark = needs_survival


def _cox_data(n=150, seed=3, signal=0.5):
    X, lin, _, _ = make_blocks(n=n, seed=seed)
    rng = np.random.default_rng(seed + 10)
    t = rng.exponential(np.exp(-signal * (lin - lin.mean())))
    c = rng.exponential(2 * np.median(t), size=n)
    return X, np.column_stack([np.minimum(t, c), (t <= c).astype(float)])


@pytest.fixture(scope="module")
def fitted():
    X, y = _cox_data()
    model = VCPCR(
        3, family="cox", weights="ridge", lam_ratio=0.3, n_init=2, random_state=0
    )
    return model.fit(X, y), X, y


def _cross_validated(model, X, y, splitter):
    """The held-out linear predictor of refits on each training fold."""
    eta = np.empty(X.shape[0])
    for train, test in splitter.split(X, y[:, 1]):
        fold = clone(model).fit(X[train], y[train])
        eta[test] = fold.predict_log_partial_hazard(X[test])
    return eta


def test_median_split_logrank_against_lifelines(fitted):
    """Cross-validated predictor (by hand), median split, lifelines' logrank_test."""
    from lifelines.statistics import logrank_test

    from vcpcr._risk_groups import risk_groups

    model, X, y = fitted
    res = risk_groups(model, X, y)  # cv=5: shuffled KFold, random_state=0
    eta = _cross_validated(model, X, y, KFold(5, shuffle=True, random_state=0))
    assert_allclose(res.linear_predictor, eta, rtol=1e-10, atol=1e-12)
    high = eta > np.median(eta)
    assert_array_equal(res.group, high.astype(int))
    t, e = y[:, 0], y[:, 1]
    ref = logrank_test(t[~high], t[high], e[~high], e[high])
    assert res.p_value == pytest.approx(ref.p_value, rel=1e-10)
    assert res.n_splits == 5
    # Never the fitted model's predictor on its own training data.
    fitted_eta = model.predict_log_partial_hazard(X)
    assert np.max(np.abs(res.linear_predictor - fitted_eta)) > 0.05
    on_fit = risk_groups(model, X, y, cv=None)
    assert_allclose(on_fit.linear_predictor, fitted_eta, rtol=1e-12)
    assert on_fit.n_splits is None


def test_a_stratified_splitter_stratifies_on_the_events(fitted):
    """StratifiedKFold splits a survival outcome on its event indicator.

    Before, scikit-learn saw the (time, event) pairs and refused them as a
    'continuous-multioutput' target.
    """
    from vcpcr._risk_groups import risk_groups

    model, X, y = fitted
    splitter = StratifiedKFold(4, shuffle=True, random_state=1)
    res = risk_groups(model, X, y, cv=splitter)
    assert_allclose(
        res.linear_predictor,
        _cross_validated(model, X, y, splitter),
        rtol=1e-10,
        atol=1e-12,
    )
    assert res.n_splits == 4


def test_tertiles_as_pandas_qcut(fitted):
    from vcpcr._risk_groups import risk_groups

    model, X, y = fitted
    splitter = KFold(4, shuffle=True, random_state=2)
    res = risk_groups(model, X, y, cv=splitter, quantiles=[1 / 3, 2 / 3])
    eta = _cross_validated(model, X, y, splitter)
    ref = pd.qcut(eta, [0, 1 / 3, 2 / 3, 1], labels=False)
    assert_array_equal(res.group, ref)
    assert res.labels == ["0-33%", "33-67%", "67-100%"]
    assert res.n_splits == 4


def test_formula_model_takes_its_outcome_from_the_frame(fitted):
    from vcpcr._risk_groups import risk_groups

    model, X, y = fitted
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame = frame.assign(time=y[:, 0], event=y[:, 1])
    formula = clone(model).set_params(formula="Surv(time, event) ~ .").fit(frame)
    res = risk_groups(formula, frame)
    ref = risk_groups(model, X, y)
    assert_allclose(res.linear_predictor, ref.linear_predictor, rtol=1e-8)
    assert res.p_value == pytest.approx(ref.p_value, rel=1e-8)


def test_plot_risk_groups(fitted, tmp_path):
    from vcpcr.plotting import plot_risk_groups

    model, X, y = fitted
    ax = plot_risk_groups(model, X, y)
    assert "5-fold cross-validated" in ax.get_title()
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["0-50%", "50-100%"]
    assert "log-rank p = " in legend.get_title().get_text()
    assert len(ax.get_lines()) == 2
    assert len(ax.figure.axes) > 1  # the numbers at risk below
    ax.figure.savefig(tmp_path / "risk.png")
    matplotlib.pyplot.close(ax.figure)
    ax = plot_risk_groups(model, X[:60], y[:60], cv=None, quantiles=[0.25, 0.75])
    assert "fitted model" in ax.get_title()
    assert len(ax.get_lines()) == 3
    matplotlib.pyplot.close(ax.figure)


def test_plot_risk_groups_leaves_the_callers_figure_alone(fitted):
    """Given an axes, it drew and then ran tight_layout on the whole figure,
    which moved the caller's other panels."""
    from vcpcr.plotting import plot_risk_groups

    model, X, y = fitted
    fig, (mine, theirs) = matplotlib.pyplot.subplots(1, 2)
    before = mine.get_position().bounds
    assert plot_risk_groups(model, X, y, cv=None, ax=theirs) is theirs
    assert mine.get_position().bounds == before
    matplotlib.pyplot.close(fig)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"quantiles": [0.5, 0.2]}, "quantiles must be increasing"),
        ({"quantiles": 1.0}, "strictly between 0 and 1"),
        ({"quantiles": []}, "quantiles must be"),
        ({"cv": 1}, "cv. parameter of risk_groups must be an int from 2"),
    ],
    ids=["decreasing", "one", "empty", "cv-1"],
)
def test_bad_arguments(fitted, kwargs, match):
    from vcpcr.plotting import plot_risk_groups

    model, X, y = fitted
    with pytest.raises(ValueError, match=match):
        plot_risk_groups(model, X, y, **kwargs)


def test_bad_models(fitted):
    from vcpcr.plotting import plot_risk_groups

    model, X, y = fitted
    with pytest.raises(NotFittedError):
        plot_risk_groups(clone(model), X, y)
    gaussian = VCPCR(2, weights="ridge", n_init=1).fit(X, y[:, 0])
    with pytest.raises(ValueError, match=r"need a fitted Cox model.*'gaussian'"):
        plot_risk_groups(gaussian, X, y)
    with pytest.warns(VCPCRWarning, match="No feature was selected"):
        empty = clone(model).set_params(lam_ratio=1.0).fit(X, y)
    with pytest.raises(ValueError, match="1 distinct value"):
        plot_risk_groups(empty, X, y, cv=None)
    with pytest.raises(ValueError, match="y is required"):
        plot_risk_groups(model, X)


@pytest.fixture(scope="module")
def split_fit():
    """A model fitted on 100 rows, and 50 other rows as new data."""
    X, y = _cox_data(n=150, seed=5)
    model = VCPCR(
        3, family="cox", weights="ridge", lam_ratio=0.3, n_init=2, random_state=0
    )
    return model.fit(X[:100], y[:100]), X, y


def test_new_data_is_cut_at_the_training_cutoffs(split_fit):
    """cv=None cuts new data at the training predictor's median (#48).

    Before, the new data's own median: half of any cohort was "high risk",
    whatever its risk. ``cutoffs="data"`` keeps that for shifted cohorts."""
    from vcpcr._risk_groups import risk_groups

    model, X, y = split_fit
    train_eta = model.predict_log_partial_hazard(X[:100])
    assert_allclose(model.train_linear_predictor_, train_eta, rtol=1e-12, atol=1e-14)
    new_X, new_y = X[100:], y[100:]
    eta = model.predict_log_partial_hazard(new_X)
    res = risk_groups(model, new_X, new_y, cv=None)
    cut = np.median(train_eta)
    assert res.cut_at == "training"
    assert_allclose(res.cutoffs, [cut], rtol=1e-12, atol=0)
    assert_array_equal(res.group, (eta > cut).astype(int))
    own = risk_groups(model, new_X, new_y, cv=None, cutoffs="data")
    assert own.cut_at == "data"
    assert_array_equal(own.group, (eta > np.median(eta)).astype(int))
    assert np.any(res.group != own.group)  # the two rules differ on these data
    from lifelines.statistics import logrank_test

    high = res.group == 1
    t, e = new_y[:, 0], new_y[:, 1]
    ref = logrank_test(t[~high], t[high], e[~high], e[high])
    assert res.p_value == pytest.approx(ref.p_value, rel=1e-10)
    # the training rows themselves: the training quantiles are their own
    on_fit = risk_groups(model, X[:100], y[:100], cv=None)
    data = risk_groups(model, X[:100], y[:100], cv=None, cutoffs="data")
    assert_array_equal(on_fit.group, data.group)


def test_given_cutoffs_and_their_labels(split_fit):
    from vcpcr._risk_groups import risk_groups

    model, X, y = split_fit
    eta = model.predict_log_partial_hazard(X[100:])
    cuts = np.quantile(eta, [0.3, 0.6])
    res = risk_groups(model, X[100:], y[100:], cv=None, cutoffs=cuts)
    assert res.cut_at == "given"
    assert_array_equal(res.group, np.searchsorted(cuts, eta, side="left"))
    lo, hi = (f"{c:.3g}" for c in cuts)
    assert res.labels == [f"eta <= {lo}", f"{lo} < eta <= {hi}", f"eta > {hi}"]


def test_a_vcpcrcv_cuts_at_its_refits_training_cutoffs(split_fit):
    from vcpcr import VCPCRCV
    from vcpcr._risk_groups import risk_groups

    _, X, y = split_fit
    cv = VCPCRCV(
        (2,), family="cox", lam_ratios=[0.2, 0.5], cv=3, n_init=1, random_state=0
    ).fit(X[:100], y[:100])
    res = risk_groups(cv, X[100:], y[100:], cv=None)
    expected = np.median(cv.best_estimator_.predict_log_partial_hazard(X[:100]))
    assert_allclose(res.cutoffs, [expected], rtol=1e-12, atol=0)


@pytest.mark.parametrize(
    ("cutoffs", "match"),
    [
        ("test", "cutoffs. parameter of risk_groups must be one of"),
        ([0.5, 0.1], "cutoffs must be 'training', 'data' or increasing"),
        ([], "cutoffs must be"),
        ([np.nan], "cutoffs"),
    ],
    ids=["name", "decreasing", "empty", "nan"],
)
def test_bad_cutoffs(split_fit, cutoffs, match):
    from vcpcr._risk_groups import risk_groups

    model, X, y = split_fit
    with pytest.raises(ValueError, match=match):
        risk_groups(model, X[100:], y[100:], cv=None, cutoffs=cutoffs)


def test_an_empty_group_at_the_training_cutoffs_says_so(split_fit):
    from vcpcr._risk_groups import risk_groups

    model, X, y = split_fit
    eta = model.predict_log_partial_hazard(X[100:])
    low = np.flatnonzero(eta <= np.quantile(model.train_linear_predictor_, 0.2))
    with pytest.raises(ValueError, match=r"No sample falls.*cutoffs='data'"):
        risk_groups(model, X[100:][low], y[100:][low], cv=None, quantiles=0.8)


def test_a_model_without_training_predictor_needs_other_cutoffs(split_fit):
    from vcpcr._risk_groups import risk_groups

    model, X, y = split_fit

    class Other(BaseEstimator):  # a fitted Cox model keeping no training predictor
        def fit(self, X, y):
            self.fitted_ = True
            return self

        def predict_log_partial_hazard(self, X):
            return model.predict_log_partial_hazard(X)

    with pytest.raises(ValueError, match=r"does not keep.*cutoffs='data'"):
        risk_groups(Other().fit(X, y), X[100:], y[100:], cv=None)
    res = risk_groups(Other().fit(X, y), X[100:], y[100:], cv=None, cutoffs="data")
    assert res.cut_at == "data"
