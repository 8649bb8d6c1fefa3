"""The cross-validated partial likelihood as VCPCRCV's Cox criterion (#17):
Verweij & van Houwelingen (1993), cv.glmnet's grouped ``type.measure =
"deviance"``, against a direct computation fold by fold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from sklearn.model_selection import KFold

from vcpcr import VCPCR, VCPCRCV
from vcpcr._solvers.partial_likelihood import efron_loglik

lifelines = pytest.importorskip("lifelines")

SCORING = "neg_partial_likelihood_deviance"


def _efron_by_hand(eta, time, event):
    """Efron's log partial likelihood, one event time at a time."""
    ll = 0.0
    for t in np.unique(time[event]):
        dead = event & (time == t)
        risk = time >= t
        d = dead.sum()
        ll += eta[dead].sum()
        for k in range(d):
            ll -= np.log(np.exp(eta[risk]).sum() - k / d * np.exp(eta[dead]).sum())
    return ll


def _data(seed=0, n=70, p=12):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    X = np.repeat(z, p // 2, axis=1) + 0.7 * rng.normal(size=(n, p))
    time = np.ceil(4 * rng.exponential(np.exp(-z[:, 0])))  # tied times
    event = rng.uniform(size=n) < 0.75
    return X, time, event


def test_efron_loglik_against_lifelines_and_by_hand():
    X, time, event = _data()
    frame = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    frame["time"], frame["event"] = time, event
    fit = lifelines.CoxPHFitter().fit(frame, "time", "event")
    eta = X[:, :3] @ fit.params_.to_numpy()
    mine = efron_loglik(np.stack([eta, 0 * eta]), time, event)
    assert_allclose(mine[0], fit.log_likelihood_, rtol=1e-10)
    assert_allclose(mine[1], _efron_by_hand(0 * eta, time, event), rtol=1e-12)
    assert_allclose(mine[0], _efron_by_hand(eta, time, event), rtol=1e-12)


def test_cv_partial_likelihood_against_a_loop_over_folds():
    """One grid point whose fit is deterministic (one cluster, identity
    weights, no sparsity): each fold's VCPCR refitted by hand, its
    cross-validated partial likelihood computed by hand."""
    X, time, event = _data(seed=1)
    y = np.column_stack([time, event])
    folds = KFold(4, shuffle=True, random_state=0)
    cv = VCPCRCV(
        n_clusters=1,
        family="cox",
        weights="identity",
        lam_ratios=[0.0],
        n_init=1,
        cv=folds,
        scoring=SCORING,
        random_state=0,
    ).fit(X, y)
    raw, events = [], []
    for train, test in folds.split(X):
        model = VCPCR(
            n_clusters=1, family="cox", weights="identity", lam_ratio=0.0, n_init=1
        ).fit(X[train], y[train])
        eta = model.predict_log_partial_hazard(X)  # all rows of the fold
        full = _efron_by_hand(eta, time, event)
        part = _efron_by_hand(eta[train], time[train], event[train])
        d = event[test].sum()
        raw.append(-2 * (full - part) / d)  # cv.glmnet's cvraw
        events.append(d)
    raw, events = np.array(raw), np.array(events)
    res = cv.cv_results_.iloc[0]
    splits = [res[f"split{i}_test_score"] for i in range(4)]
    assert_allclose(splits, -raw, rtol=1e-6)
    cvm = np.average(raw, weights=events)
    cvsd = np.sqrt(np.average((raw - cvm) ** 2, weights=events) / (4 - 1))
    assert_allclose(res["mean_test_score"], -cvm, rtol=1e-6)
    # std_test_score / sqrt(n_splits), the 1-SE rule's error, is cvsd
    assert_allclose(res["std_test_score"] / np.sqrt(4), cvsd, rtol=1e-6)
    # the estimator's score with this scorer: 2 l(eta) / events
    eta = cv.best_estimator_.predict_log_partial_hazard(X)
    assert_allclose(
        cv.score(X, y), 2 * _efron_by_hand(eta, time, event) / event.sum(), rtol=1e-10
    )


def test_partial_likelihood_scoring_is_only_for_cox():
    X, time, _ = _data()
    with pytest.raises(ValueError, match=SCORING):
        VCPCRCV(n_clusters=1, scoring=SCORING).fit(X, time)
