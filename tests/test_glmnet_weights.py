"""Tests of the paper's early-stopped glmnet weights (vcpcr._solvers.glmnet)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from sklearn.model_selection import KFold

from vcpcr import VCPCR, VCPCRCV, compute_weights
from vcpcr._scaling import standardize
from vcpcr._solvers.glmnet import (
    _CovarianceCD,
    _descend,
    _standardize,
    glmnet_gaussian,
    glmnet_weights,
)
from vcpcr.exceptions import ConvergenceWarning

REF = Path(__file__).parent / "reference"
with open(REF / "glmnet_paper_weights.json") as fh:
    PAPER = json.load(fh)
DATASETS = [k for k in PAPER if k != "meta"]


def _scaled(name):
    df = pd.read_csv(REF / "data" / f"{name}.csv")
    X = df.filter(regex=r"^x\d+$").to_numpy()
    y = df["y"].to_numpy(dtype=float)
    return X, y, standardize(X)[0], (y - y.mean()) / y.std(ddof=1)


CASES = [(d, m) for d in DATASETS for m in ("ridge", "lasso")]


@pytest.mark.reference
@pytest.mark.parametrize(
    ("dataset", "method"), CASES, ids=[f"{d}-{m}" for d, m in CASES]
)
def test_paper_weights_against_R_glmnet(dataset, method):
    """glmnet(x = X, y = y, family = "gaussian", alpha = 0/1,
    lambda = delta * lambda_lasso, standardize = F) on scale()d X, y, as in
    the authors' VCPCR.R; see tests/reference/glmnet_paper_weights.R."""
    X, y, Xs, ys = _scaled(dataset)
    ref = PAPER[dataset][method]
    lams = np.asarray(ref["lambda_glmnet"])
    W = compute_weights(X, y, f"glmnet_{method}", delta=lams)
    coef = np.asarray(ref["coef"])
    scale = np.abs(coef).max(axis=1, keepdims=True)
    assert_allclose(W / scale, coef / scale, rtol=0, atol=1e-10)
    if method == "lasso":
        assert np.array_equal(W != 0, coef != 0)
    fits = [
        glmnet_gaussian(Xs, ys, lam, alpha=ref["alpha"], standardize=False)
        for lam in lams
    ]
    assert [f.n_passes for f in fits] == ref["npasses"]
    assert_allclose([f.dev_ratio for f in fits], ref["dev_ratio"], rtol=0, atol=1e-12)
    assert_allclose([f.intercept for f in fits], ref["intercept"], rtol=0, atol=1e-12)


VARIANTS = [(d, i) for d in DATASETS for i in range(len(PAPER[d].get("variants", [])))]


@pytest.mark.reference
@pytest.mark.parametrize(
    ("dataset", "i"), VARIANTS, ids=[f"{d}-{i}" for d, i in VARIANTS]
)
def test_glmnet_options_against_R_glmnet(dataset, i):
    """glmnet(X, y, alpha, lambda, standardize, intercept, thresh) on scale()d
    data: the other code paths (internal scaling of x, no intercept,
    alpha = 0.5, a smaller thresh)."""
    _, _, Xs, ys = _scaled(dataset)
    ref = PAPER[dataset]["variants"][i]
    args, out = ref["args"], ref["fit"]
    fit = glmnet_gaussian(
        Xs,
        ys,
        args["lambda"],
        alpha=args["alpha"],
        standardize=args["standardize"],
        intercept=args["intercept"],
        thresh=args["thresh"],
    )
    coef = np.asarray(out["coef"])
    assert_allclose(
        fit.coef / np.abs(coef).max(), coef / np.abs(coef).max(), rtol=0, atol=1e-10
    )
    assert fit.n_passes == out["npasses"]
    assert_allclose(fit.intercept, out["intercept"], rtol=0, atol=1e-12)
    assert_allclose(fit.dev_ratio, out["dev_ratio"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("lam", [1e-4, 3e-3, 0.05], ids=["1e-4", "3e-3", "0.05"])
def test_ridge_sweeps_equal_coordinate_loop(lam):
    """The alpha = 0 fast path (one triangular solve per pass) gives the
    coordinate-by-coordinate loop's passes and coefficients."""
    _, _, Xs, ys = _scaled("paper_c2_n50")
    fast = glmnet_gaussian(Xs, ys, lam, alpha=0.0, standardize=False)
    s = _standardize(Xs, ys, False, True)
    loop = _CovarianceCD(s, 0.0, lam / s.ys)
    assert _descend(loop, 1e-7, 100_000)
    assert fast.n_passes == loop.n_passes
    assert_allclose(
        fast.coef, loop.a * s.ys, rtol=0, atol=1e-12 * np.abs(fast.coef).max()
    )


def test_converged_glmnet_is_the_ridge_with_penalty_over_ys():
    """With a tight thresh the iterations reach glmnet's ridge, whose penalty
    is lambda / ys (ys = population sd of y): compute_weights("ridge")."""
    X, y, Xs, ys = _scaled("gauss_tall")
    lam = 0.1
    fit = glmnet_gaussian(Xs, ys, lam, alpha=0.0, standardize=False, thresh=1e-26)
    assert fit.converged
    w = compute_weights(X, y, "ridge", delta=lam / ys.std(ddof=0))
    assert_allclose(fit.coef, w, rtol=0, atol=1e-10 * np.abs(w).max())


def test_early_stopping_is_far_from_the_ridge_solution():
    """The paper's regime: p > n, tiny lambda, a handful of passes."""
    X, y, Xs, ys = _scaled("paper_c2_n50")
    fit = glmnet_gaussian(Xs, ys, 1e-4, alpha=0.0, standardize=False)
    exact = compute_weights(X, y, "ridge", delta=1e-4 / ys.std(ddof=0))
    assert fit.n_passes <= 10
    assert np.linalg.norm(fit.coef - exact) > 0.5 * np.linalg.norm(exact)


def test_constant_column_gets_zero_weight():
    """glmnet excludes constant columns (its ``ju``) and leaves them at 0."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 6))
    X[:, 2] = 1.5
    y = X[:, 0] - X[:, 1] + rng.normal(size=30)
    for alpha in (0.0, 1.0):
        fit = glmnet_gaussian(X, y, 0.01, alpha=alpha)
        assert fit.coef[2] == 0.0
        assert np.all(fit.coef[[0, 1]] * [1, -1] > 0)


def test_glmnet_weights_rows_are_independent_fits():
    _, _, Xs, ys = _scaled("gauss_wide")
    deltas = np.array([1e-3, 1e-2])
    W = glmnet_weights(Xs, ys, deltas, alpha=0.0)
    one = glmnet_gaussian(Xs, ys, 1e-2, alpha=0.0, standardize=False).coef
    assert W.shape == (2, Xs.shape[1])
    assert_allclose(W[1], one, rtol=0, atol=0)


def test_vcpcr_accepts_glmnet_weights():
    X, y, _, _ = _scaled("paper_c2_n50")
    model = VCPCR(
        n_clusters=5,
        weights="glmnet_ridge",
        delta=1e-4,
        lam_ratio=0.3,
        n_init=2,
        random_state=0,
    ).fit(X, y)
    assert_allclose(
        model.weights_,
        compute_weights(X, y, "glmnet_ridge", delta=1e-4),
        rtol=0,
        atol=0,
    )
    assert 0 < np.count_nonzero(model.coef_) < X.shape[1]
    default = VCPCR(n_clusters=4, weights="glmnet_lasso", n_init=1, random_state=0).fit(
        X, y
    )
    assert np.count_nonzero(default.weights_) < X.shape[1]


def test_vcpcrcv_grid_with_glmnet_weights():
    X, y, _, _ = _scaled("paper_c3_n50")
    cv = VCPCRCV(
        n_clusters=(4,),
        weights="glmnet_ridge",
        deltas=[1e-4, 1e-2],
        lam_ratios=[0.1, 0.5],
        n_init=1,
        cv=KFold(3, shuffle=True, random_state=0),
        random_state=0,
    ).fit(X, y)
    assert cv.cv_results_.shape[0] == 4
    assert cv.best_params_["delta"] in (1e-4, 1e-2)
    assert cv.best_estimator_.weights_.shape == (X.shape[1],)


def test_errors():
    X, y, _, _ = _scaled("gauss_wide")
    with pytest.raises(ValueError, match="family='gaussian'"):
        compute_weights(X, (y > 0).astype(float), "glmnet_ridge", family="binomial")
    with pytest.raises(ValueError, match="alpha must be in"):
        glmnet_gaussian(X, y, 0.1, alpha=1.5)
    with pytest.raises(ValueError, match="lam must be"):
        glmnet_gaussian(X, y, -1.0)
    with pytest.raises(ValueError, match="y is constant"):
        glmnet_gaussian(X, np.ones_like(y), 0.1)


def test_maxit_warns():
    _, _, Xs, ys = _scaled("gauss_wide")
    for alpha in (0.0, 1.0):
        with pytest.warns(ConvergenceWarning, match="maxit=3"):
            fit = glmnet_gaussian(Xs, ys, 1e-3, alpha=alpha, maxit=3)
        assert not fit.converged


def test_early_stopped_weights_depend_on_column_order():
    """Documented property: the unconverged iterate depends on the order in
    which coordinate descent visits the columns (the converged one does not)."""
    _, _, Xs, ys = _scaled("paper_c2_n50")
    rev = np.arange(Xs.shape[1])[::-1]
    w = glmnet_gaussian(Xs, ys, 3.6e-3, alpha=0.0, standardize=False).coef
    w_rev = glmnet_gaussian(Xs[:, rev], ys, 3.6e-3, alpha=0.0, standardize=False).coef
    assert np.linalg.norm(w - w_rev[::-1]) > 0.3 * np.linalg.norm(w)
