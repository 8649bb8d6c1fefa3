"""Batched step 2 of VCPCRCV: outcome fits and scores of all grid points at once.

Three kinds of checks:

* ``cv_results_`` of fixed seeded problems equal the values recorded with the
  per-point estimator path before batching (``reference/cv_scores.json``,
  written by ``reference/make_cv_scores.py``);
* in the same run, the batched path equals the per-point path forced on by a
  callable scorer (penalized weights, all families);
* the batched fits equal statsmodels OLS / Logit and lifelines CoxPHFitter on
  the same latent variables, and the vectorized scores equal scikit-learn's
  metrics and lifelines' concordance index.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import make_blocks
from numpy.testing import assert_allclose
from sklearn.model_selection import KFold, StratifiedKFold

from vcpcr import VCPCRCV

REFERENCE = Path(__file__).parent / "reference" / "cv_scores.json"

#: Columns of cv_results_ compared with the recorded values.
COLUMNS = [
    "split0_test_score",
    "split1_test_score",
    "split2_test_score",
    "mean_test_score",
    "std_test_score",
    "mean_size",
    "mean_n_clusters",
    "rank_test_score",
]


def make_problem(family: str) -> tuple[np.ndarray, object]:
    """A seeded 60 x 40 block problem with a gaussian, binary or survival y."""
    X, y, _, _ = make_blocks(n=60, seed=3)
    rng = np.random.default_rng(4)
    if family == "gaussian":
        return X, y
    if family == "binomial":
        return X, np.where(y + rng.normal(scale=1.5, size=y.size) > 0, "yes", "no")
    # Exponential times with hazard exp(y / 2), rounded to give tied times;
    # about 30% censored.
    time = np.round(rng.exponential(np.exp(-y / 2)), 1) + 0.1
    event = rng.uniform(size=y.size) > 0.3
    return X, pd.DataFrame({"time": time, "event": event})


def fixed_weights(p: int) -> np.ndarray:
    """Given (fixed) weights, so the cases do not depend on the weights solvers."""
    return np.random.default_rng(5).uniform(0.2, 1.0, size=p)


#: name -> (family, weights, scoring); weights None: fixed_weights.
CASES = {
    "gaussian_ridge_mse": ("gaussian", "ridge", None),
    "gaussian_fixed_r2": ("gaussian", None, "r2"),
    "gaussian_fixed_mae": ("gaussian", None, "neg_mean_absolute_error"),
    "gaussian_fixed_rmse": ("gaussian", None, "neg_root_mean_squared_error"),
    "binomial_fixed_logloss": ("binomial", None, None),
    "binomial_fixed_accuracy": ("binomial", None, "accuracy"),
    "binomial_fixed_auc": ("binomial", None, "roc_auc"),
    "cox_fixed_concordance": ("cox", None, None),
}


def make_cv(case: str, **params: object) -> VCPCRCV:
    """The VCPCRCV of a case (3 folds, 2 starts, K in (2, 3))."""
    family, weights, scoring = CASES[case]
    folds = StratifiedKFold if family == "binomial" else KFold
    grid = {} if weights else {"lam_ratios": [0.0, 0.2, 0.4, 0.6, 0.8, 0.95, 1.0]}
    cv = VCPCRCV(
        n_clusters=(2, 3),
        family=family,
        weights=weights if weights else fixed_weights(40),
        scoring=scoring,
        n_init=2,
        cv=folds(3, shuffle=True, random_state=1),
        refit=False,
        random_state=0,
        **grid,
    )
    return cv.set_params(**params)


def cv_results(case: str, **params: object) -> tuple[pd.DataFrame, list[str]]:
    """cv_results_ of a case and the messages of the warnings it gave."""
    X, y = make_problem(CASES[case][0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = make_cv(case, **params).fit(X, y).cv_results_
    return res, [f"{w.category.__name__}: {w.message}" for w in caught]


#: Tolerance per family: gaussian is closed form on both paths; the logistic
#: and Cox fits are Newton iterations stopped by different rules (statsmodels:
#: step < 1e-8; lifelines: step norm < 1e-12), converged well below this.
RTOL = {"gaussian": 1e-8, "binomial": 1e-8, "cox": 1e-8}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_cv_results_equal_recorded_values(case):
    """cv_results_ equal the values recorded before batching (per-point path)."""
    recorded = json.loads(REFERENCE.read_text())[case]
    res, messages = cv_results(case)
    assert messages == recorded["warnings"]
    for col in COLUMNS:
        assert_allclose(
            res[col].to_numpy(dtype=float),
            np.asarray(recorded[col], dtype=float),
            rtol=RTOL[CASES[case][0]],
            atol=1e-12,
            err_msg=f"{case}: {col}",
        )
