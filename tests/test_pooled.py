"""The pooled cross-validated deviance (VCPCRCV(scoring="neg_pooled_deviance"))."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_survival
from numpy.testing import assert_allclose
from sklearn.metrics import log_loss, mean_squared_error
from sklearn.model_selection import KFold

from vcpcr import VCPCRCV
from vcpcr._pooled import paired_se, pooled_bootstrap, pooled_deviance
from vcpcr.simulate import make_block_data


def test_pooled_deviance_against_scikit_learn():
    rng = np.random.default_rng(0)
    eta = rng.normal(size=(3, 40))
    y = rng.normal(size=40)
    expected = [mean_squared_error(y, e) for e in eta]
    assert_allclose(pooled_deviance("gaussian", eta, y), expected, rtol=1e-12)
    y01 = (rng.uniform(size=40) < 0.4).astype(float)
    expected = [2 * log_loss(y01, 1 / (1 + np.exp(-e))) for e in eta]
    assert_allclose(pooled_deviance("binomial", eta, y01), expected, rtol=1e-10)
    eta[1, 3] = np.nan  # a point not fitted somewhere has no pooled score
    assert np.isnan(pooled_deviance("gaussian", eta, y)[1])


@needs_survival
def test_pooled_cox_deviance_is_lifelines_log_likelihood():
    """At lifelines' fitted coefficients, minus twice lifelines' (Efron) log
    partial likelihood, per row; stratified as lifelines' strata."""
    import pandas as pd
    from lifelines import CoxPHFitter

    rng = np.random.default_rng(1)
    n = 60
    x = rng.normal(size=n)
    g = rng.integers(0, 2, size=n)
    time = np.round(rng.exponential(np.exp(-0.7 * x)), 1) + 0.1  # ties
    event = rng.uniform(size=n) < 0.7
    df = pd.DataFrame({"x": x, "g": g, "time": time, "event": event})
    outcome = np.column_stack([time, event.astype(float)])
    for strata in (None, ["g"]):
        cph = CoxPHFitter().fit(
            df if strata else df.drop(columns="g"), "time", "event", strata=strata
        )
        eta = (x * cph.params_["x"])[None, :]
        dev = pooled_deviance("cox", eta, outcome, None if strata is None else g)
        assert_allclose(dev * n / -2.0, cph.log_likelihood_, rtol=1e-8)


def test_pooled_se_is_the_bootstrap_standard_deviation():
    rng = np.random.default_rng(2)
    eta = rng.normal(size=(2, 30))
    y = rng.normal(size=30)
    draws = pooled_bootstrap("gaussian", eta, y, None, 500, np.random.default_rng(0))
    se = draws.std(axis=0, ddof=1)
    # the mean of 30 squared errors: sd / sqrt(n) of the squared errors
    sq = (y - eta) ** 2
    assert_allclose(se, sq.std(axis=1, ddof=1) / np.sqrt(30), rtol=0.15)
    # paired: the standard error of the mean difference of squared errors
    diff = paired_se(draws, 0)
    assert diff[0] == 0
    assert_allclose(diff[1], (sq[1] - sq[0]).std(ddof=1) / np.sqrt(30), rtol=0.15)


def test_pooled_gaussian_is_the_fold_size_weighted_mse():
    """Gaussian: the pooled deviance is the MSE over all rows of the
    out-of-fold predictions, i.e. the per-fold MSEs of the default scoring
    weighted by the test folds' sizes (uneven folds: 5 folds of 63 rows)."""
    data = make_block_data(63, [4, 4], [1.0, 0.0], n_noise=12, random_state=0)
    cv = KFold(5, shuffle=True, random_state=0)
    kw = {
        "n_clusters": (2, 3),
        "n_init": 2,
        "random_state": 0,
        "refit": False,
        "cv": cv,
    }
    default = VCPCRCV(**kw).fit(data.X, data.y).cv_results_
    pooled = VCPCRCV(scoring="neg_pooled_deviance", **kw).fit(data.X, data.y)
    res = pooled.cv_results_
    sizes = np.array([te.size for _, te in cv.split(data.X)])
    folds = default[[f"split{i}_test_score" for i in range(5)]].to_numpy()
    assert_allclose(res["mean_test_score"], folds @ sizes / sizes.sum(), rtol=1e-9)
    assert_allclose(
        res[[f"split{i}_test_score" for i in range(5)]].to_numpy(), folds, rtol=1e-9
    )
    assert (res["se_test_score"] > 0).all()


@needs_survival
@pytest.mark.parametrize("family", ["gaussian", "binomial", "cox"])
def test_pooled_one_se_rule_chooses_the_empty_model_on_noise(family):
    """Global null (y independent of block-correlated X): the pooled deviance
    with the 1-SE rule chooses lam_ratio = 1, no gene, within one bootstrap
    standard error of the best point; the refit says so without warning."""
    data = (
        make_block_data(
            80, [10] * 6, [0.0] * 6, family=family, random_state=3, noise_sd=1.0
        )
        if family == "gaussian"
        else make_block_data(80, [10] * 6, [0.0] * 6, family=family, random_state=3)
    )
    y = np.column_stack([data.y, data.event]) if family == "cox" else data.y
    kw = {"family": family, "n_clusters": (3,), "n_init": 2, "random_state": 0}
    chosen = VCPCRCV(scoring="neg_pooled_deviance", selection="1se", **kw).fit(
        data.X, y
    )
    assert chosen.best_params_["lam_ratio"] == 1.0
    assert np.count_nonzero(chosen.best_estimator_.coef_) == 0
    assert "chose a model without genes" in str(chosen.summary())
    res = chosen.cv_results_
    best = res["mean_test_score"].idxmax()
    within = res.loc[best, "mean_test_score"] - res.loc[best, "se_test_score"]
    assert res.loc[chosen.best_index_, "mean_test_score"] >= within


def test_pooled_gaussian_is_equivariant_in_the_scale_of_y():
    """As the default scoring: y * 2**-700 ranks the grid as y does (the folds
    see y on a unit scale), and the scores are in y's units."""
    data = make_block_data(60, [4, 4], [1.0, 0.0], n_noise=12, random_state=1)
    kw = {"n_clusters": (2,), "n_init": 2, "random_state": 0, "refit": False}
    kw |= {"scoring": "neg_pooled_deviance", "selection": "1se"}
    a = VCPCRCV(**kw).fit(data.X, data.y)
    tiny = VCPCRCV(**kw).fit(data.X, np.ldexp(data.y, -700))  # squares underflow
    assert tiny.best_index_ == a.best_index_
    small = VCPCRCV(**kw).fit(data.X, np.ldexp(data.y, -500))
    for column in ("mean_test_score", "se_test_score", "se_diff_test_score"):
        assert_allclose(
            np.ldexp(a.cv_results_[column], -1000),
            small.cv_results_[column],
            rtol=1e-9,
        )
