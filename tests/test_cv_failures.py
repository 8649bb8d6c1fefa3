"""VCPCRCV when some grid points cannot be fitted in some folds (issue #17):
they score NaN there, one warning sums them up, the CV fails only when
nothing can be fitted."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import needs_survival
from numpy.testing import assert_allclose
from sklearn.model_selection import KFold

from vcpcr import VCPCRCV, _tuning
from vcpcr._families import FAMILIES
from vcpcr.exceptions import VCPCRWarning

pytest.importorskip("lifelines")


def _data(seed=0, n=60, p=20):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    X = np.repeat(z, p // 2, axis=1) + 0.5 * rng.normal(size=(n, p))
    time = rng.exponential(np.exp(-z[:, 0]))
    event = rng.uniform(size=n) < 0.8
    return X, np.column_stack([time, event])


def _cv(**kw):
    params = {
        "n_clusters": (2, 3),
        "family": "cox",
        "scoring": "concordance",  # equal fold weights (the mean is checked)
        "deltas": [0.5, 0.1],
        "lam_ratios": [0.01, 0.3],
        "n_init": 2,
        "cv": KFold(3, shuffle=True, random_state=0),
        "random_state": 0,
    }
    return VCPCRCV(**(params | kw))


def _failing_fit(monkeypatch, k):
    """Step 2 of every design with ``k`` clusters raises, as lifelines can."""
    cox = FAMILIES["cox"]
    fit, fit_batch = cox.fit, cox.fit_batch

    def failing_fit(M, *args, **kw):
        if M.shape[1] == k:
            raise ValueError("Convergence halted due to matrix inversion problems.")
        return fit(M, *args, **kw)

    def batch(M, outcome):
        out = fit_batch(M, outcome)
        if M.shape[2] == k:
            out.ok[:] = False
        return out

    monkeypatch.setattr(cox, "fit", failing_fit)
    monkeypatch.setattr(cox, "fit_batch", batch)


@needs_survival
def test_points_that_cannot_be_fitted_score_nan_with_one_warning(monkeypatch):
    X, y = _data()
    reference = _cv().fit(X, y).cv_results_
    _failing_fit(monkeypatch, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cv = _cv().fit(X, y)
    mine = [w for w in caught if "could not be fitted" in str(w.message)]
    assert len(mine) == 1
    assert issubclass(mine[0].category, VCPCRWarning)
    assert "12 of 24 fold x grid fits could not be fitted" in str(mine[0].message)
    res = cv.cv_results_
    three = res["n_clusters"] == 3  # all of them kept 3 clusters (12 = 4 x 3)
    assert res.loc[three, "mean_test_score"].isna().all()
    assert (res.loc[three, "rank_test_score"] > (~three).sum()).all()
    assert cv.best_params_["n_clusters"] == 2
    two = reference["n_clusters"] == 2
    assert_allclose(
        res.loc[two, "mean_test_score"], reference.loc[two, "mean_test_score"]
    )


@needs_survival
def test_a_fold_whose_weights_fail_is_left_out(monkeypatch):
    X, y = _data()
    reference = _cv().fit(X, y).cv_results_
    weights, calls = _tuning._fold_weights, []

    def first_fold_fails(*args):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("The penalized Cox fit diverged: nothing can be fitted.")
        return weights(*args)

    monkeypatch.setattr(_tuning, "_fold_weights", first_fold_fails)
    with pytest.warns(VCPCRWarning, match=r"8 of 24 fold x grid .*nothing can be"):
        cv = _cv().fit(X, y)
    res = cv.cv_results_
    assert res["split0_test_score"].isna().all()
    others = reference[["split1_test_score", "split2_test_score"]]
    assert_allclose(res["mean_test_score"], others.mean(axis=1))
    assert_allclose(res["std_test_score"], others.std(axis=1, ddof=1))
    assert np.isfinite(cv.best_score_)


@needs_survival
def test_nothing_fitted_is_a_clear_error(monkeypatch):
    X, y = _data()

    def fails(*args):
        raise ValueError("The penalized Cox fit diverged: nothing can be fitted.")

    monkeypatch.setattr(_tuning, "_fold_weights", fails)
    with (
        pytest.warns(VCPCRWarning, match="could not be fitted"),
        pytest.raises(ValueError, match=r"No grid point could be fitted in every"),
    ):
        _cv().fit(X, y)


@needs_survival
def test_cox_lasso_tuning_on_data_whose_default_grid_diverged():
    """The data of test_cox.py's diverging case (the default lasso grid raised
    before the refined path): tuning and the refit now run."""
    from test_cox import _diverging_case

    Xs, time, event = _diverging_case()
    cv = VCPCRCV(
        n_clusters=(2, 3), family="cox", weights="lasso", n_init=2, random_state=0
    ).fit(Xs, np.column_stack([time, event]))
    assert np.isfinite(cv.cv_results_["mean_test_score"]).all()
    assert cv.best_estimator_.weights_.any()
