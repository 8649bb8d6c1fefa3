"""VCPCRCV when some grid points cannot be fitted in some folds (issues #17,
#24): they score NaN there and are not ranked (only points scored on every
fold are compared), one warning sums them up, and the CV fails with the most
common reason when no point was scored on every fold."""

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

    def batch(M, outcome, strata=None):
        out = fit_batch(M, outcome, strata)
        if M.shape[2] == k:
            out.ok[:] = False
        return out

    # in the shared family's own __dict__, so that the undo deletes them:
    # monkeypatch.setattr would leave bound methods of ``cox`` on it, whose
    # repr holds ``cox``'s (a RecursionError in any later repr of the family)
    monkeypatch.setitem(vars(cox), "fit", failing_fit)
    monkeypatch.setitem(vars(cox), "fit_batch", batch)


@needs_survival
def test_points_that_cannot_be_fitted_score_nan_with_one_warning(monkeypatch):
    X, y = _data()
    reference = _cv().fit(X, y).cv_results_
    _failing_fit(monkeypatch, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cv = _cv().fit(X, y)
    mine = [w for w in caught if "grid points failed" in str(w.message)]
    assert len(mine) == 1
    assert issubclass(mine[0].category, VCPCRWarning)
    message = str(mine[0].message)
    assert "4 of 8 grid points failed in some of the 3 CV folds" in message
    assert "12 of 24 fold x grid fits failed: 12 raised an error" in message
    assert "Most common reason (12 of 12 failed fits): Convergence halted" in message
    res = cv.cv_results_
    three = res["n_clusters"] == 3  # all of them kept 3 clusters (12 = 4 x 3)
    assert res.loc[three, "mean_test_score"].isna().all()
    assert (res.loc[three, "n_failed_folds"] == 3).all()
    assert (res.loc[~three, "n_failed_folds"] == 0).all()
    assert (res.loc[three, "rank_test_score"] > (~three).sum()).all()
    assert cv.best_params_["n_clusters"] == 2
    two = reference["n_clusters"] == 2
    assert_allclose(
        res.loc[two, "mean_test_score"], reference.loc[two, "mean_test_score"]
    )


def _target(reference):
    """The reference's second-best point: (row, its params)."""
    row = int(np.flatnonzero(reference["rank_test_score"] == 2)[0])
    return row, reference["params"][row]


def _is(model, params):
    return (
        model.get_params()["n_clusters"] == params["n_clusters"]
        and np.isclose(model.get_params()["lam_ratio"], params["lam_ratio"])
        and np.isclose(model.get_params()["delta"], params["delta"])
    )


def _concordance_but(params, fold, fail):
    """Harrell's C, except for the point ``params``: 1 (the best possible) in
    every fold but ``fold``, where ``fail()`` decides (raise or NaN)."""
    calls = []

    def scorer(model, X, y):
        if _is(model, params):
            calls.append(1)
            return fail() if len(calls) == fold + 1 else 1.0
        return model.score(X, y)

    return scorer


@needs_survival
def test_a_point_that_failed_in_one_fold_is_never_chosen(monkeypatch):
    """On gse1992 the best point was ranked on one fold's score: a point
    that failed in one fold must not beat those scored on every fold, even if
    its other folds' scores are the best possible."""
    X, y = _data()
    reference = _cv().fit(X, y).cv_results_
    row, params = _target(reference)
    fit, calls = _tuning.fold_model, []

    def fails_once(fold, spec, point):
        model = fit(fold, spec, point)
        if _is(model, params):
            calls.append(1)
            if len(calls) == 2:  # the second fold
                raise ValueError("Convergence halted: delta contains nan value(s).")
        return model

    monkeypatch.setattr(_tuning, "fold_model", fails_once)
    scorer = _concordance_but(params, fold=-1, fail=float)  # 1 everywhere
    with pytest.warns(VCPCRWarning, match=r"1 of 8 grid points failed in some of"):
        cv = _cv(scoring=scorer).fit(X, y)
    res = cv.cv_results_
    assert res["split1_test_score"].isna().tolist() == [i == row for i in range(8)]
    assert res["n_failed_folds"].tolist() == [int(i == row) for i in range(8)]
    assert np.isnan(res["mean_test_score"][row])
    assert np.isnan(res["std_test_score"][row])
    assert res["rank_test_score"][row] == 8
    assert cv.best_index_ != row
    assert np.isfinite(cv.best_score_)


@needs_survival
@pytest.mark.parametrize(
    ("fail", "reason"),
    [
        (lambda: float("nan"), "the CV score was not finite on the test fold"),
        (
            lambda: (_ for _ in ()).throw(ValueError("no pairs to compare")),
            "The scorer raised ValueError: no pairs to compare",
        ),
    ],
    ids=["nan", "raises"],
)
def test_a_scorer_that_fails_in_one_fold(fail, reason):
    """A non-finite score or a scorer's error in one fold: the point is not
    ranked and the CV goes on (the error used to escape from fit)."""
    X, y = _data()
    reference = _cv().fit(X, y).cv_results_
    row, params = _target(reference)
    scorer = _concordance_but(params, fold=2, fail=fail)
    with pytest.warns(VCPCRWarning, match="grid points failed") as rec:
        cv = _cv(scoring=scorer).fit(X, y)
    assert f"Most common reason (1 of 1 failed fits): {reason}" in str(rec[0].message)
    res = cv.cv_results_
    assert res["n_failed_folds"][row] == 1
    assert np.isnan(res["mean_test_score"][row])
    assert cv.best_index_ != row


@needs_survival
def test_a_fold_whose_weights_fail_leaves_no_point_scored_on_every_fold(monkeypatch):
    """A fold where nothing could be fitted: no point is scored on every fold,
    so none is chosen (it used to rank them on the other folds)."""
    X, y = _data()
    weights, calls = _tuning._fold_weights, []

    def first_fold_fails(*args):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("The penalized Cox fit diverged: nothing can be fitted.")
        return weights(*args)

    monkeypatch.setattr(_tuning, "_fold_weights", first_fold_fails)
    with pytest.raises(
        ValueError,
        match=r"(?s)No grid point could be fitted and scored in every one of the 3 "
        r"CV folds \(8 of 24 fold x grid fits failed: 8 raised an error, 0 scored "
        r"non-finite; every point failed in fold\(s\) \[0\]\).*Most common reason "
        r"\(8 of 8 failed fits\): The penalized Cox fit diverged.*Use fewer folds",
    ):
        _cv().fit(X, y)


@needs_survival
def test_nothing_fitted_is_a_clear_error(monkeypatch):
    """Two clusters fail in every fold, three in the first fold only."""
    X, y = _data()
    cox = FAMILIES["cox"]
    fit, fit_batch, calls = cox.fit, cox.fit_batch, []

    def failing_fit(M, *args, **kw):
        if M.shape[1] == 2:
            raise ValueError("Convergence halted due to matrix inversion problems.")
        calls.append(1)
        if len(calls) <= 4:  # the first fold's 4 points with 3 clusters
            raise ValueError("delta contains nan value(s). Convergence halted.")
        return fit(M, *args, **kw)

    def batch(M, outcome, strata=None):
        out = fit_batch(M, outcome, strata)
        out.ok[:] = False
        return out

    # in the shared family's own __dict__, so that the undo deletes them:
    # monkeypatch.setattr would leave bound methods of ``cox`` on it, whose
    # repr holds ``cox``'s (a RecursionError in any later repr of the family)
    monkeypatch.setitem(vars(cox), "fit", failing_fit)
    monkeypatch.setitem(vars(cox), "fit_batch", batch)
    with pytest.raises(
        ValueError,
        match=r"(?s)No grid point could be fitted and scored in every one of the 3 "
        r"CV folds \(16 of 24 fold x grid fits failed: 16 raised an error, 0 "
        r"scored non-finite; every point failed in fold\(s\) \[0\]\).*Most "
        r"common reason \(12 of 16 failed fits\): Convergence halted due to matrix",
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


def test_separation_warning_names_vcpcrcv_parameters():
    """The advice names VCPCRCV's parameters (lam_ratios, not VCPCR's lam_ratio)."""
    from vcpcr.exceptions import SeparationWarning

    rng = np.random.default_rng(0)
    z = rng.normal(size=(40, 1))
    X = np.hstack([z + 0.01 * rng.normal(size=(40, 4)), rng.normal(size=(40, 4))])
    y = (z[:, 0] > 0).astype(int)  # separated by the first block
    cv = VCPCRCV(
        (1, 2), family="binomial", weights="identity", lam_ratios=[0.0, 0.2], n_init=1
    )
    with pytest.warns(SeparationWarning, match=r"most CV scores") as rec:
        cv.set_params(cv=3, refit=False, random_state=0).fit(X, y)
    message = next(str(w.message) for w in rec if "most CV" in str(w.message))
    assert message.endswith("fewer clusters (n_clusters) or larger lam_ratios.")


def _gaussian(n=30, p=6):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, p))
    return X, X[:, 0] + rng.normal(size=n)


def test_a_probability_scoring_for_gaussian_is_refused_up_front():
    """scoring='neg_brier_score' for gaussian: scikit-learn's AttributeError
    "VCPCR has none of the following attributes: predict_proba" (#46 row 12)."""
    X, y = _gaussian()
    with pytest.raises(
        ValueError,
        match=r"'neg_brier_score' needs predict_proba.*"
        r"family='gaussian'.*Valid choices",
    ):
        VCPCRCV((2,), scoring="neg_brier_score", cv=3, n_init=1).fit(X, y)


@pytest.mark.parametrize("cv", [None, 5])
def test_more_folds_than_a_class_has_rows_is_refused(cv):
    """cv=5 with 3 rows of class 1: scikit-learn's "least populated class"
    warning, then folds without that class (#46 row 12)."""
    X, _ = _gaussian()
    y = np.where(np.arange(30) < 3, "yes", "no")
    with pytest.raises(ValueError, match=r"cv=5 folds.*class 'yes' has 3 rows.*cv=3"):
        VCPCRCV((2,), family="binomial", cv=cv, n_init=1).fit(X, y)


def test_refit_false_predict_says_why():
    """available_if replaced vcpcr's message by a bare "has no attribute
    'predict'" (#46 row 12); hasattr stays False, as GridSearchCV's."""
    X, y = _gaussian()
    cv = VCPCRCV((2,), refit=False, cv=3, n_init=1, random_state=0).fit(X, y)
    assert not hasattr(cv, "predict")
    assert not hasattr(cv, "transform")
    with pytest.raises(AttributeError, match="refit=False: predict is available only"):
        cv.predict(X)
    refit = VCPCRCV((2,), cv=3, n_init=1, random_state=0).fit(X, y)
    assert hasattr(refit, "predict")
    assert not hasattr(refit, "predict_proba")  # not gaussian's
    with pytest.raises(AttributeError, match="predict_proba"):
        refit.predict_proba(X)
