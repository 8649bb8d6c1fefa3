"""scikit-learn API conformance of VCPCR."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.feature_selection import VarianceThreshold
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from vcpcr import VCPCR

# VC-PCR keeps a few clusters of the many variables, so on scikit-learn's
# generic data set (one informative feature among ten, R^2 target 0.5) it is
# tagged `poor_score`; no check is expected to fail.
ESTIMATORS = [VCPCR(n_clusters=2), VCPCR(n_clusters=2, family="binomial")]


# scikit-learn's classification checks use well-separated blobs, on which the
# binomial outcome model correctly warns about separation and uses Firth.
@pytest.mark.filterwarnings("ignore::vcpcr.exceptions.SeparationWarning")
@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


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
    assert_allclose(restored.predict(X), model.predict(X), rtol=0)
    assert (
        restored.summary().as_text().splitlines()[3]
        == model.summary().as_text().splitlines()[3]
    )


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
    assert grid.best_params_["vcpcr__lam_ratio"] in (0.2, 0.4, 0.6)
    assert grid.score(X, y) > 0.8


def test_classifier_cross_validation(binary_blocks):
    X, y, _ = binary_blocks
    model = VCPCR(n_clusters=2, family="binomial", n_init=2, random_state=0)
    scores = cross_val_score(model, X, y, cv=3, scoring="roc_auc")
    assert np.all(scores > 0.8)
