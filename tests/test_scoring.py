"""VCPCRCV's scorers by name: survival scorers (sksurv.metrics), family checks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import make_blocks, needs_survival
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.model_selection import KFold

from vcpcr import VCPCR, VCPCRCV
from vcpcr._scoring import (
    mean_cumulative_dynamic_auc,
    neg_integrated_brier_score,
    survival_time_grid,
)
from vcpcr.exceptions import VCPCRWarning

SPLITS = [f"split{i}_test_score" for i in range(3)]


def _cox_data(n=120, seed=3, end=None):
    """Block data with exponential event times; administrative censoring at ``end``."""
    X, lin, _, _ = make_blocks(n=n, seed=seed)
    rng = np.random.default_rng(seed + 10)
    t = rng.exponential(np.exp(-0.4 * (lin - lin.mean())))
    c = rng.exponential(2 * np.median(t), size=n)
    if end is not None:
        c = np.minimum(c, np.quantile(np.minimum(t, c), end))
    return X, np.column_stack([np.minimum(t, c), (t <= c).astype(float)])


def test_survival_time_grid_rule():
    """Training event times in [first test event, min(last test, last train))."""
    train = (np.array([1.0, 2, 3, 4, 5, 6, 7]), np.array([1, 0, 1, 1, 1, 1, 0], bool))
    test = (np.array([0.5, 2.5, 3.5, 6.5]), np.array([0, 1, 0, 0], bool))
    assert_array_equal(survival_time_grid(train, test), [3.0, 4.0, 5.0, 6.0])
    short = (np.array([1.0, 2, 3, 4, 5]), np.array([1, 1, 1, 1, 1], bool))
    assert_array_equal(survival_time_grid(short, test), [3.0, 4.0])


@needs_survival
@pytest.mark.parametrize(
    "name", ["neg_integrated_brier_score", "mean_cumulative_dynamic_auc"]
)
def test_named_survival_scorers_against_sksurv(name):
    """The named scorers == sksurv.metrics called directly on the same fold models.

    The study ends at the 85% quantile of the event times (administrative
    censoring), so every training fold ends with censored times and sksurv
    accepts the test folds as they are.
    """
    from sksurv.metrics import cumulative_dynamic_auc, integrated_brier_score
    from sksurv.util import Surv

    X, y = _cox_data(end=0.85)

    def direct(est, Xte, yte):
        train_t = est.result_.durations.to_numpy()
        train_e = est.result_.event_observed.to_numpy(dtype=bool)
        first = yte[yte[:, 1] == 1, 0].min()
        end = min(yte[:, 0].max(), train_t.max())
        times = np.unique(train_t[train_e])
        times = times[(times >= first) & (times < end)]
        train = Surv.from_arrays(train_e, train_t)
        test = Surv.from_arrays(yte[:, 1] == 1, yte[:, 0])
        if name == "mean_cumulative_dynamic_auc":
            risk = est.predict_log_partial_hazard(Xte)
            return cumulative_dynamic_auc(train, test, risk, times)[1]
        surv = np.vstack([fn(times) for fn in est.predict_survival_function(Xte)])
        return -integrated_brier_score(train, test, surv, times)

    cv = VCPCRCV(
        n_clusters=(2, 3),
        family="cox",
        weights="ridge",
        deltas=[0.1],
        lam_ratios=[0.1, 0.5],
        n_init=2,
        cv=KFold(3, shuffle=True, random_state=1),
        scoring=name,
        refit=False,
        random_state=0,
    )
    named = cv.fit(X, y).cv_results_[SPLITS].to_numpy()
    ref = clone(cv).set_params(scoring=direct).fit(X, y).cv_results_[SPLITS]
    assert_allclose(named, ref.to_numpy(), rtol=1e-10)
    assert np.all(np.isfinite(named))


def _graf_ibs(surv_fn, train, test, times):
    """Graf et al.'s integrated Brier score by hand, censoring KM from lifelines."""
    from lifelines import KaplanMeierFitter

    km = KaplanMeierFitter().fit(train[0], event_observed=~train[1])
    G = km.survival_function_at_times
    t, e = test
    bs = []
    for s in times:
        S = surv_fn(s)
        case = (t <= s) & e
        w_case = np.zeros_like(t)
        w_case[case] = 1 / G(t[case]).to_numpy()
        bs.append(np.mean(S**2 * w_case + (1 - S) ** 2 * (t > s) / G(s).iloc[0]))
    return np.trapezoid(bs, times) / (times[-1] - times[0])


def _uno_mean_auc(risk, train, test, times):
    """Uno's cumulative/dynamic AUC by hand, averaged over the test KM."""
    from lifelines import KaplanMeierFitter

    G = KaplanMeierFitter().fit(train[0], event_observed=~train[1])
    S = KaplanMeierFitter().fit(test[0], event_observed=test[1])
    t, e = test
    aucs = []
    for s in times:
        case, control = (t <= s) & e, t > s
        w = 1 / G.survival_function_at_times(t[case]).to_numpy()
        wins = (risk[case][:, None] > risk[control][None, :]) + 0.5 * (
            risk[case][:, None] == risk[control][None, :]
        )
        aucs.append(np.sum(w[:, None] * wins) / (w.sum() * control.sum()))
    surv = S.survival_function_at_times(times).to_numpy()
    d = -np.diff(np.r_[1.0, surv])
    return np.sum(np.array(aucs) * d) / (1 - surv[-1])


@needs_survival
def test_test_times_after_the_last_training_time():
    """Test observations beyond the training follow-up change no score.

    Hand-written Graf IBS and Uno AUC on the unchanged test data (their
    censoring weights are needed only before the last training time), where
    scikit-survival on the unchanged data refuses.
    """
    from sksurv.metrics import integrated_brier_score
    from sksurv.util import Surv

    X, y = _cox_data(n=160, seed=7)
    order = np.argsort(y[:, 0])
    test_idx = np.r_[order[-6:], order[:-6][::4]]  # holds the 6 longest times
    train_idx = np.setdiff1d(np.arange(y.shape[0]), test_idx)
    ytr = y[train_idx].copy()
    ytr[np.argmax(ytr[:, 0]), 1] = 1.0  # the training follow-up ends on an event
    model = VCPCR(
        2, family="cox", weights="ridge", lam_ratio=0.2, n_init=2, random_state=0
    )
    model.fit(X[train_idx], ytr)
    Xte, yte = X[test_idx], y[test_idx]
    train = (ytr[:, 0], ytr[:, 1] == 1)
    test = (yte[:, 0], yte[:, 1] == 1)
    times = survival_time_grid(train, test)
    assert yte[:, 0].max() > ytr[:, 0].max() > times.max()
    surv = model.predict_survival_function(Xte, return_array=True, times=times)
    with pytest.raises(ValueError, match="largest observed time"):
        integrated_brier_score(
            Surv.from_arrays(train[1], train[0]),
            Surv.from_arrays(test[1], test[0]),
            surv,
            times,
        )
    fns = model.predict_survival_function(Xte)
    ibs = _graf_ibs(lambda s: np.array([fn(s) for fn in fns]), train, test, times)
    assert neg_integrated_brier_score(model, Xte, yte) == pytest.approx(-ibs, rel=1e-10)
    risk = model.predict_log_partial_hazard(Xte)
    auc = _uno_mean_auc(risk, train, test, times)
    assert mean_cumulative_dynamic_auc(model, Xte, yte) == pytest.approx(auc, rel=1e-10)


@needs_survival
def test_too_few_times_score_nan_with_a_warning():
    X, y = _cox_data(n=60)
    model = VCPCR(2, family="cox", weights="ridge", n_init=1, random_state=0)
    model.fit(X, y)
    late = y[:, 0] >= y[y[:, 1] == 1, 0].max()  # one event time left
    with pytest.warns(VCPCRWarning, match="two training event times"):
        score = neg_integrated_brier_score(model, X[late], y[late])
    assert np.isnan(score)


@pytest.mark.parametrize(
    ("family", "scoring", "valid"),
    [
        ("gaussian", "accuracy", "'r2', any other scikit-learn regression scorer"),
        ("binomial", "r2", "'roc_auc', any other scikit-learn classification"),
        ("cox", "neg_mean_squared_error", "'concordance', 'neg_pooled_deviance'"),
        ("cox", "accuracy", "'mean_cumulative_dynamic_auc', or a callable"),
        ("gaussian", "neg_integrated_brier_score", "any other scikit-learn"),
    ],
    ids=["accuracy-gaussian", "r2-binomial", "mse-cox", "accuracy-cox", "ibs-gauss"],
)
def test_scoring_of_another_family_names_the_choices(family, scoring, valid):
    X, y, _, _ = make_blocks(n=30)
    yy = {"gaussian": y, "binomial": y > 0, "cox": np.c_[np.abs(y), y > 0]}[family]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="does not fit family") as err:
            VCPCRCV(family=family, scoring=scoring).fit(X, yy)
    assert valid in str(err.value)


@needs_survival
def test_concordance_by_name_is_scoring_none():
    """scoring=None (the default before #27's sparse rule) is the family's own
    score: for cox, Harrell's C by name."""
    X, y = _cox_data(n=90)
    cv = VCPCRCV(
        n_clusters=2,
        family="cox",
        weights="ridge",
        deltas=[0.1],
        lam_ratios=[0.1, 0.5],
        n_init=1,
        cv=3,
        scoring=None,
        refit=False,
        random_state=0,
    )
    default = cv.fit(X, y).cv_results_["mean_test_score"]
    named = clone(cv).set_params(scoring="concordance").fit(X, y)
    assert_array_equal(named.cv_results_["mean_test_score"], default)
