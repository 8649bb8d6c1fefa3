"""Results that unifying the SOS-NMF engine (#9) must keep.

``reference/engine_regression.json`` was written by
``reference/make_engine_regression.py`` at the commit before the change (two
SOS-NMF implementations kept bit-identical). The single engine sums in
another order, so scores agree to rounding (rtol 1e-9: the outcome model and
the scorer amplify a 1e-15 change of the memberships by at most ~1e6), and
the clusters are the same (ARI 1). The default elastic-net weights now stop
at glmnet's tolerance (1e-7 relative, #9: within 5e-6 x max|coef| of the
exact solution the reference was made with), so the CV scores are compared at
rtol 1e-5 (observed: 6e-7).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import PREVIOUS_DEFAULT, make_blocks
from numpy.testing import assert_allclose
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import KFold

from vcpcr import VCPCR, VCPCRCV
from vcpcr.datasets import load_liver

REF = json.loads(
    (Path(__file__).parent / "reference" / "engine_regression.json").read_text()
)
COLUMNS = ["mean_test_score", "std_test_score", "mean_size", "mean_n_clusters"]


@pytest.mark.filterwarnings("ignore::vcpcr.exceptions.SeparationWarning")
@pytest.mark.filterwarnings("ignore::vcpcr.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_cv_results_unchanged(family):
    """The same generator as make_engine_regression.py, the same cv_results_."""
    X, y, _, _ = make_blocks()
    if family == "binomial":
        noise = np.random.default_rng(1).normal(scale=2.0, size=y.size)
        y = (y + noise > np.median(y)).astype(float)
    cv = VCPCRCV(
        family=family,
        n_clusters=(2, 3),
        cv=KFold(3, shuffle=True, random_state=0),
        random_state=0,
        **PREVIOUS_DEFAULT,  # the defaults the reference was written with
    ).fit(X, y)
    ref, res = REF[family], cv.cv_results_
    assert_allclose(res["delta"], ref["delta"], rtol=1e-12)
    splits = res[[f"split{i}_test_score" for i in range(3)]].to_numpy()
    assert_allclose(splits, ref["splits"], rtol=1e-5, atol=1e-12)
    for column in COLUMNS:
        assert_allclose(res[column], ref[column], rtol=1e-5, atol=1e-12)
    assert cv.best_index_ == ref["best_index"]
    labels = cv.best_estimator_.labels_
    assert adjusted_rand_score(labels, ref["best_labels"]) == 1.0


def test_liver_clusters_unchanged():
    """VCPCR(n_clusters=20, random_state=0) on the packaged Liver data."""
    X, y = load_liver(return_X_y=True)
    model = VCPCR(n_clusters=20, random_state=0).fit(X, y)
    ref = REF["liver"]
    assert adjusted_rand_score(model.labels_, ref["labels"]) == 1.0
    assert np.array_equal(model.labels_ >= 0, np.asarray(ref["labels"]) >= 0)
    sel = model.labels_ >= 0
    total = model.membership_.to_numpy().sum(axis=1)[sel]
    # the elastic-net weights stop at glmnet's tolerance (see the module note)
    assert_allclose(total, ref["membership"], rtol=1e-5)
    assert_allclose(model.objective_[-1], ref["objective"], rtol=1e-5)
    assert_allclose(model.lam_, ref["lam"], rtol=1e-5)
    assert model.best_init_ == ref["best_init"]
