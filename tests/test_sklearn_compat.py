"""scikit-learn API conformance of VCPCR."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.feature_selection import VarianceThreshold
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from vcpcr import VCPCR, VCPCRCV
from vcpcr.exceptions import SeparationWarning, VCPCRWarning

# VC-PCR keeps a few clusters of the many variables, so on scikit-learn's
# generic data set (one informative feature among ten, R^2 target 0.5) it is
# tagged `poor_score`. The defaults are checked: n_clusters=5 is capped, with a
# warning, on the checks' 1- to 3-feature data.
ESTIMATORS = [
    VCPCR(),
    VCPCR(family="binomial"),
    VCPCRCV(n_clusters=(2,)),
]


#: Why ``check_estimators_nan_inf`` may fail (#24). It fails when the fitted
#: model does not use column 0, where the check puts its NaN and inf for
#: predict. Which columns ``VCPCRCV`` selects on the check's few rows of noise
#: is a near-tie of its grid points' CV scores, which the installed numpy,
#: scipy and scikit-learn round differently (scipy 1.17 made it select column
#: 0, and the check passed), so the check may pass or fail: neither is a defect.
NAN_INF_REASON = (
    "predict and transform read only the variables the model selected "
    "(and the covariates): NaN in an unselected column is allowed; fit "
    "rejects NaN, and predict rejects it in the columns it uses "
    "(tests/test_model.py)."
)


# scikit-learn's classification checks use well-separated blobs, on which the
# binomial outcome model correctly warns about separation and uses Firth.
@pytest.mark.filterwarnings("ignore::vcpcr.exceptions.SeparationWarning")
@pytest.mark.filterwarnings("ignore:.*is larger than the number of features")
# On the checks' pure-noise data, CV may rightly choose to select nothing.
@pytest.mark.filterwarnings("ignore:No feature was selected")
# The default delta grid is relative to the whole data's delta_max; on noise,
# a training fold's own delta_max can be lower, so its top delta zeroes the
# weights there, and VCPCRCV says so.
@pytest.mark.filterwarnings("ignore:.*weights are zero")
@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    if check.func.__name__ != "check_estimators_nan_inf":
        check(estimator)
        return
    try:
        check(estimator)
    except AssertionError:  # the check's "does not check for NaN in predict"
        pytest.xfail(NAN_INF_REASON)


def test_n_clusters_capped_at_n_features_with_warning(blocks):
    X, y, _, _ = blocks
    with pytest.warns(VCPCRWarning, match="using n_clusters=3") as record:
        model = VCPCR(n_clusters=10, n_init=2, random_state=0).fit(X[:, :3], y)
    assert record[0].filename == __file__
    assert model.n_clusters_ <= 3
    assert "(of 10)" in model.summary().as_text()
    cv = VCPCRCV(n_clusters=(2, 5, 6), cv=3, n_init=1, random_state=0)
    with pytest.warns(VCPCRWarning, match="using n_clusters=3") as record:
        cv.fit(X[:, :3], y)
    assert record[0].filename == __file__
    assert sorted(set(cv.cv_results_["n_clusters"])) == [2, 3]


def test_cv_delegates_like_grid_search(blocks, binary_blocks):
    assert not hasattr(VCPCRCV(), "predict_proba")
    assert not hasattr(VCPCRCV(), "decision_function")
    assert not hasattr(VCPCRCV(), "predict_survival_function")
    assert hasattr(VCPCRCV(family="binomial"), "predict_proba")
    assert hasattr(VCPCRCV(family="cox"), "predict_survival_function")
    assert not hasattr(VCPCRCV(refit=False), "transform")
    X, y, _ = binary_blocks
    cv = VCPCRCV(n_clusters=(2,), family="binomial", lam_ratios=[0.3], cv=3, n_init=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeparationWarning)
        M = cv.set_params(random_state=0).fit_transform(X, y)
    best = cv.best_estimator_
    assert_allclose(M, best.transform(X))
    assert_allclose(cv.predict_proba(X), best.predict_proba(X))
    assert_allclose(cv.decision_function(X), best.decision_function(X))
    assert cv.n_iter_ == best.n_iter_


def test_cv_results_params_and_times_as_grid_search(blocks):
    X, y, _, _ = blocks
    cv = VCPCRCV(
        n_clusters=(2, 3), lam_ratios=[0.2, 0.5], cv=3, n_init=1, random_state=0
    ).fit(X, y)
    res = cv.cv_results_
    for row, params in zip(res.itertuples(), res["params"], strict=True):
        assert params == {
            "n_clusters": row.n_clusters,
            "delta": row.delta,
            "lam_ratio": row.lam_ratio,
        }
    chosen = res["params"][cv.best_index_]
    assert {k: cv.best_params_[k] for k in chosen} == chosen
    assert (res["mean_fit_time"] > 0).all()
    assert (res["std_fit_time"] >= 0).all()
    # the GridSearchCV idiom works
    top = res.loc[res["rank_test_score"] == 1, "params"]
    assert list(top) == [chosen]


def test_convergence_warning_is_sklearns():
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    import vcpcr
    from vcpcr.exceptions import ConvergenceWarning

    assert issubclass(ConvergenceWarning, SklearnConvergenceWarning)
    assert issubclass(ConvergenceWarning, VCPCRWarning)
    assert vcpcr.ConvergenceWarning is ConvergenceWarning
    assert pickle.loads(pickle.dumps(ConvergenceWarning("x"))).args == ("x",)
    # scikit-learn's usual filter silences vcpcr's solver warnings
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", SklearnConvergenceWarning)
        vcpcr.sos_nmf(X, n_clusters=3, max_iter=1, random_state=0)


def test_estimator_type_follows_family():
    assert is_regressor(VCPCR())
    assert not is_classifier(VCPCR())
    assert is_classifier(VCPCR(family="binomial"))
    assert not hasattr(VCPCR(), "predict_proba")
    assert hasattr(VCPCR(family="binomial"), "predict_proba")


def test_clone_params_pickle(blocks):
    X, y, _, _ = blocks
    model = VCPCR(n_clusters=3, lam_ratio=0.3, n_init=2, random_state=0)
    assert clone(model).get_params() == model.get_params()
    model.set_params(lam_ratio=0.4)
    assert model.lam_ratio == 0.4
    model.fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    # Everything fitted survives: predictions, coefficients, clusters, the
    # statsmodels result (its estimates and standard errors are in the summary).
    assert_array_equal(restored.predict(X), model.predict(X))
    assert_array_equal(restored.coef_, model.coef_)
    assert_array_equal(restored.labels_, model.labels_)
    assert_array_equal(restored.transform(X), model.transform(X))
    assert restored.summary().as_text() == model.summary().as_text()
    assert str(restored.summary2()) == str(model.summary2())


def test_pipeline_and_grid_search(blocks):
    X, y, _, _ = blocks
    pipe = make_pipeline(
        VarianceThreshold(), VCPCR(n_clusters=2, n_init=2, random_state=0)
    )
    grid = GridSearchCV(
        pipe,
        {"vcpcr__lam_ratio": [0.2, 0.4, 0.6]},
        cv=KFold(3, shuffle=True, random_state=0),
    )
    grid.fit(X, y)
    # The same search by an explicit loop of cross_val_score (R^2, the
    # estimator's score, on the same folds).
    means = {
        r: cross_val_score(
            clone(pipe).set_params(vcpcr__lam_ratio=r),
            X,
            y,
            cv=KFold(3, shuffle=True, random_state=0),
        ).mean()
        for r in (0.2, 0.4, 0.6)
    }
    best = max(means, key=means.__getitem__)
    assert grid.best_params_ == {"vcpcr__lam_ratio": best}
    assert grid.best_score_ == pytest.approx(means[best], rel=1e-12)
    assert_allclose(
        grid.cv_results_["mean_test_score"], list(means.values()), rtol=1e-12
    )
    refit = clone(pipe).set_params(vcpcr__lam_ratio=best).fit(X, y)
    assert grid.score(X, y) == pytest.approx(refit.score(X, y), rel=1e-12)


def test_classifier_cross_validation(binary_blocks):
    X, y, _ = binary_blocks
    model = VCPCR(n_clusters=2, family="binomial", n_init=2, random_state=0)
    scores = cross_val_score(model, X, y, cv=3, scoring="roc_auc")
    assert np.all(scores > 0.8)
