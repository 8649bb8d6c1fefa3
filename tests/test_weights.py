"""Tests of the step-0 weights (vcpcr._weights) against glmnet and scikit-learn."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import needs_survival
from numpy.testing import assert_allclose
from scipy.special import expit

from vcpcr import compute_weights
from vcpcr._scaling import standardize
from vcpcr._weights import DEFAULT_DELTA, SCHEMES, WeightScheme, lasso_delta_max
from vcpcr.exceptions import ConvergenceWarning

REF = Path(__file__).parent / "reference"
with open(REF / "glmnet_weights.json") as fh:
    GLMNET = json.load(fh)
with open(REF / "glmnet_enet.json") as fh:
    GLMNET_ENET = json.load(fh)  # alpha = 0.05, see glmnet_enet.R


def _load(name):
    df = pd.read_csv(REF / "data" / f"{name}.csv")
    X = df.filter(regex=r"^x\d+$").to_numpy()
    return X, df["y"].to_numpy(dtype=float)


CASES = [
    (d, m)
    for d in ("gauss_wide", "gauss_tall", "binom_wide", "binom_tall")
    for m in ("ridge", "lasso", "enet")
]

# Tolerance (x max|coef|) against the exact R glmnet solutions (thresh = 1e-30).
# The ridge is solved exactly (one decomposition, Newton). The lasso and the
# elastic net stop at a duality gap / objective change of 1e-7 (vcpcr._solvers.enet.TOL,
# glmnet's default thresh): measured on these sets, the largest difference is
# 5.9e-7 x max|coef| (lasso) and 1.1e-7 (elastic net), with identical supports.
ATOL = {"ridge": 1e-8, "lasso": 5e-6, "enet": 5e-6}


@pytest.mark.reference
@pytest.mark.parametrize(
    ("dataset", "method"), CASES, ids=[f"{d}-{m}" for d, m in CASES]
)
def test_weights_against_R_glmnet(dataset, method):
    """glmnet(X, y, alpha = 0/1/0.05, lambda = delta (see the R scripts for the
    gaussian ridge and elastic net), standardize = FALSE, thresh = 1e-30) on
    scale()d X (and y for gaussian); tests/reference/glmnet_weights.R and
    glmnet_enet.R."""
    X, y = _load(dataset)
    ref = GLMNET_ENET[dataset] if method == "enet" else GLMNET[dataset][method]
    family = GLMNET[dataset]["family"]
    l1_ratio = ref["alpha"] if method == "enet" else 0.05
    W = compute_weights(
        X, y, method, delta=ref["delta"], family=family, l1_ratio=l1_ratio
    )
    assert W.shape == (len(ref["delta"]), X.shape[1])
    coef = np.asarray(ref["coef"])
    assert_allclose(W, coef, rtol=0, atol=ATOL[method] * np.abs(coef).max())
    if method != "ridge":  # same support
        assert np.array_equal(W != 0, coef != 0)


@pytest.mark.reference
@pytest.mark.filterwarnings("ignore::vcpcr.exceptions.SeparationWarning")
@pytest.mark.parametrize(
    "dataset", ["gauss_wide", "gauss_tall", "binom_wide", "binom_tall"]
)
def test_default_weights_of_VCPCR_against_R_glmnet(dataset):
    """VCPCR()'s weights (elastic net, l1_ratio 0.05, absolute delta 0.5, the
    estimator's own route: standardization, y target) are glmnet's at that
    delta: glmnet_enet.R's "default" fit (thresh = 1e-30)."""
    from vcpcr import VCPCR

    X, y = _load(dataset)
    ref = GLMNET_ENET[dataset]["default"]
    family = GLMNET[dataset]["family"]
    assert VCPCR().weights == "enet"
    assert VCPCR().delta is None  # None: DEFAULT_DELTA
    assert ref["delta"] == DEFAULT_DELTA["enet"]
    model = VCPCR(family=family, n_init=1, random_state=0).fit(X, y)
    coef = np.asarray(ref["coef"])
    assert_allclose(
        model.weights_, coef, rtol=0, atol=ATOL["enet"] * np.abs(coef).max()
    )
    assert np.array_equal(model.weights_ != 0, coef != 0)


@pytest.mark.reference
def test_lasso_delta_max_against_R_glmnet():
    for dataset in ("gauss_wide", "binom_wide"):
        X, y = _load(dataset)
        Xs = standardize(X)[0]
        yy = (y - y.mean()) / y.std(ddof=1) if dataset.startswith("gauss") else y
        family = GLMNET[dataset]["family"]
        assert_allclose(
            lasso_delta_max(Xs, yy, family),
            GLMNET[dataset]["lasso"]["delta_max"],
            rtol=1e-12,
        )


def _std_data(seed=0, n=50, p=30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) @ (np.eye(p) + 0.3 * rng.normal(size=(p, p)))
    Xs = standardize(X)[0]
    y = Xs[:, :4] @ [1.0, -1.0, 0.5, 0.5] + rng.normal(size=n)
    return X, Xs, y, rng


@pytest.mark.parametrize("delta", [1e-3, 0.1, 10.0])
def test_gaussian_ridge_against_sklearn(delta):
    from sklearn.linear_model import Ridge

    X, Xs, y, _ = _std_data()
    ys = (y - y.mean()) / y.std(ddof=1)
    ref = (
        Ridge(alpha=len(y) * delta, fit_intercept=False, solver="svd").fit(Xs, ys).coef_
    )
    assert_allclose(
        compute_weights(X, y, "ridge", delta=delta), ref, rtol=1e-10, atol=1e-12
    )


@pytest.mark.parametrize("delta", [1e-3, 0.1, 10.0])
def test_binomial_ridge_against_sklearn(delta):
    from sklearn.linear_model import LogisticRegression

    X, Xs, y, rng = _std_data(1)
    yb = (rng.uniform(size=y.size) < expit(y)).astype(float)
    ref = LogisticRegression(
        C=1 / (len(y) * delta), solver="newton-cholesky", tol=1e-12, max_iter=1000
    )
    ref.fit(Xs, yb)
    w = compute_weights(X, yb, "ridge", delta=delta, family="binomial")
    assert_allclose(w, ref.coef_[0], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("l1_ratio", [0.05, 0.5])
def test_gaussian_enet_path_shape_and_delta_max(l1_ratio):
    """Support grows along the path; ``delta_max`` zeroes every weight, and
    the path equals single-delta calls (warm starts change nothing beyond the
    tolerance)."""
    X, Xs, y, _ = _std_data(3)
    ys = (y - y.mean()) / y.std(ddof=1)
    dmax = lasso_delta_max(Xs, ys, l1_ratio=l1_ratio)
    deltas = dmax * np.array([0.5, 0.05, 0.01])
    W = compute_weights(X, y, "enet", delta=deltas, l1_ratio=l1_ratio)
    assert (W[0] != 0).sum() < (W[1] != 0).sum() < (W[2] != 0).sum()
    for w, delta in zip(W, deltas, strict=True):
        one = compute_weights(X, y, "enet", delta=delta, l1_ratio=l1_ratio)
        assert_allclose(w, one, rtol=0, atol=1e-5 * np.abs(w).max())
    assert not compute_weights(
        X, y, "enet", delta=dmax * 1.0001, l1_ratio=l1_ratio
    ).any()
    # Just below delta_max a weight enters (not at 0.9999 x delta_max: there
    # its effect on the objective is below the 1e-7 tolerance).
    assert compute_weights(X, y, "enet", delta=dmax * 0.99, l1_ratio=l1_ratio).any()


@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_enet_engine_warns_when_not_converged(family, monkeypatch):
    from vcpcr._solvers import enet
    from vcpcr._solvers.enet import enet_binomial_path, enet_gaussian_path

    _, Xs, y, rng = _std_data(6, n=60, p=80)
    if family == "binomial":
        y = (rng.uniform(size=y.size) < expit(y)).astype(float)
        monkeypatch.setattr(enet, "MAX_NEWTON", 1)
    solver = enet_gaussian_path if family == "gaussian" else enet_binomial_path
    dmax = lasso_delta_max(Xs, y, l1_ratio=0.05)
    match = r"at delta=0\.\d+ within max_iter=\d+ .*last relative change \d"
    with pytest.warns(ConvergenceWarning, match=match) as record:
        solver(Xs, y, np.array([0.01 * dmax]), 0.05, max_iter=1)
    assert record[0].filename == __file__  # points at the caller, not vcpcr


def test_binomial_enet_against_sklearn():
    from sklearn.linear_model import LogisticRegression

    X, Xs, y, rng = _std_data(4, n=60, p=80)
    yb = (rng.uniform(size=y.size) < expit(y)).astype(float)
    delta = 0.1
    w = compute_weights(X, yb, "enet", delta=delta, family="binomial")
    ref = LogisticRegression(C=1 / (len(yb) * delta), l1_ratio=0.05, solver="saga",
                             tol=1e-12, max_iter=200_000).fit(Xs, yb)  # fmt: skip
    assert_allclose(w, ref.coef_[0], rtol=0, atol=1e-7 * np.abs(w).max())
    assert 0 < (w != 0).sum() < w.size


def test_enet_is_the_default_and_validates_l1_ratio():
    from vcpcr import VCPCR

    assert VCPCR().weights == "enet"
    X, _, y, _ = _std_data(5)
    with pytest.raises(ValueError, match="l1_ratio"):
        compute_weights(X, y, "enet", l1_ratio=0.0)
    with pytest.raises(
        ValueError, match="'delta' parameter of compute_weights must be > 0"
    ):
        compute_weights(X, y, "enet", delta=0.0)


def test_binomial_lasso_kkt():
    X, Xs, y, rng = _std_data(2, n=60, p=80)
    yb = (rng.uniform(size=y.size) < expit(y)).astype(float)
    delta = 0.3 * lasso_delta_max(Xs, yb, "binomial")
    w = compute_weights(X, yb, "lasso", delta=delta, family="binomial")
    # Recover the intercept from the score equation and check the KKT conditions.
    from scipy.optimize import brentq

    b0 = brentq(lambda b: np.mean(yb - expit(b + Xs @ w)), -20, 20)
    grad = Xs.T @ (yb - expit(b0 + Xs @ w)) / len(yb)
    active = w != 0
    assert active.any()
    assert_allclose(grad[active], delta * np.sign(w[active]), rtol=0, atol=1e-8)
    assert np.all(np.abs(grad[~active]) <= delta * (1 + 1e-8))


def test_ridge_path_equals_single_calls_and_zero_delta():
    X, Xs, y, _ = _std_data(3, n=20, p=40)
    from vcpcr._solvers.ridge import ridge_gaussian_path

    deltas = np.array([1e-2, 1.0])
    W = compute_weights(X, y, "ridge", delta=deltas)
    for i, d in enumerate(deltas):
        assert_allclose(
            W[i], compute_weights(X, y, "ridge", delta=d), rtol=1e-12, atol=1e-14
        )
    # the solver's delta -> 0 limit (refused by compute_weights) is the
    # minimum-norm least-squares fit
    ys = (y - y.mean()) / y.std(ddof=1)
    W0 = ridge_gaussian_path(Xs, ys, np.array([0.0]))[0]
    assert_allclose(W0, np.linalg.lstsq(Xs, ys, rcond=None)[0], rtol=1e-8, atol=1e-10)


def test_identity_and_default_delta():
    X, _, y, _ = _std_data()
    assert np.array_equal(compute_weights(X, y, "identity"), np.ones(X.shape[1]))
    assert_allclose(
        compute_weights(X, y, "ridge"), compute_weights(X, y, "ridge", delta=0.01)
    )
    assert_allclose(
        compute_weights(X, y, "lasso"), compute_weights(X, y, "lasso", delta=0.05)
    )


def test_ridge_weights_are_scale_free_in_y():
    X, _, y, _ = _std_data()
    assert_allclose(
        compute_weights(X, y, "ridge"),
        compute_weights(X, 3 * y + 7, "ridge"),
        rtol=1e-12,
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "elastic"}, "'method' parameter"),
        ({"family": "poisson"}, "'family' parameter"),
        ({"delta": -1.0}, "must be > 0 for 'ridge' weights"),
        ({"delta": 0.0}, r"must be > 0 for 'ridge' weights .*\(e\.g\. 1e-4\)"),
        ({"method": "lasso", "delta": 0.0}, "must be > 0"),
        ({"delta": [0.1, np.nan]}, "finite number"),
        ({"family": "binomial", "delta": 0.0}, "must be > 0"),
    ],
    ids=lambda v: str(v)[:25],
)
def test_bad_parameters(kwargs, match):
    X, _, y, _ = _std_data()
    if kwargs.get("family") == "binomial":
        y = (y > 0).astype(float)
    with pytest.raises(ValueError, match=match):
        compute_weights(X, y, **kwargs)


def test_bad_data():
    X, _, y, _ = _std_data()
    with pytest.raises(ValueError, match="must be 0/1"):
        compute_weights(X, y, family="binomial")
    with pytest.raises(ValueError, match="single class"):
        compute_weights(X, np.ones_like(y), family="binomial")
    with pytest.raises(ValueError, match="X has 50 rows but y has 49"):
        compute_weights(X, y[:-1])
    with pytest.raises(ValueError, match="y is constant"):
        compute_weights(X, np.ones_like(y))


PENALIZED = [name for name, scheme in SCHEMES.items() if scheme.penalized]


@pytest.mark.parametrize("scheme", PENALIZED)
def test_one_delta_rule_for_vcpcr_vcpcrcv_and_compute_weights(scheme):
    """delta = 0 is refused alike by the three entry points, for every
    penalized scheme of the registry (#20)."""
    from vcpcr import VCPCR, VCPCRCV

    X, _, y, _ = _std_data()
    match = f"must be > 0 for '{scheme}' weights"
    with pytest.raises(ValueError, match=f"'delta' parameter of VCPCR {match}"):
        VCPCR(weights=scheme, delta=0).fit(X, y)
    with pytest.raises(ValueError, match=f"'deltas' parameter of VCPCRCV {match}"):
        VCPCRCV(weights=scheme, deltas=[0], cv=3).fit(X, y)
    with pytest.raises(ValueError, match=f"compute_weights {match}"):
        compute_weights(X, y, scheme, delta=0)


@pytest.mark.parametrize(
    ("weights", "delta", "expected"),
    [("ridge", None, 0.01), ("enet", 0.2, 0.2), ("identity", None, None)],
)
def test_fitted_delta_is_the_penalty_used(weights, delta, expected):
    from vcpcr import VCPCR

    X, _, y, _ = _std_data()
    model = VCPCR(n_clusters=2, weights=weights, delta=delta, n_init=1).fit(X, y)
    assert model.delta_ == expected
    text = str(model.summary())
    shown = weights if expected is None else f"{weights} (delta={expected:.3g})"
    assert shown in text


def _family_responses(y):
    """The same signal as a gaussian, a binomial and a survival response."""
    time = np.exp(-0.5 * y) + 0.1
    event = np.arange(y.size) % 4 != 0  # every fourth row censored
    return {
        "gaussian": y,
        "binomial": (y > np.median(y)).astype(float),
        "cox": np.column_stack([time, event]),
    }


#: The pairings that do not exist: the paper's early-stopped glmnet weights
#: are a gaussian least-squares fit; with covariates, the binomial and cox
#: ridge solvers have no unpenalized block (gaussian partials them out).
NO_PAIRING = {
    (scheme, family)
    for scheme in ("glmnet_ridge", "glmnet_lasso")
    for family in ("binomial", "cox")
}
NO_PAIRING_WITH_COVARIATES = NO_PAIRING | {
    ("ridge", "binomial"),
    ("ridge", "cox"),
}


def _advice(message):
    """The schemes an error message advises, e.g. ``Use one of ['enet', ...]``."""
    listed = message.split("Use one of [", 1)[1].split("]", 1)[0]
    return [name.strip(" '") for name in listed.split(",")]


@pytest.mark.parametrize(
    "family", ["gaussian", "binomial", pytest.param("cox", marks=needs_survival)]
)
def test_every_scheme_family_pairing_fits_or_names_the_schemes_that_do(family):
    """compute_weights: a pairing fits (finite weights, not all zero), or it
    raises before any work with a message whose advised schemes all fit."""
    X, _, y, _ = _std_data()
    target = _family_responses(y)[family]
    for scheme in SCHEMES:
        if (scheme, family) not in NO_PAIRING:
            W = compute_weights(X, target, scheme, family=family)
            assert np.all(np.isfinite(W)), scheme
            assert np.any(W != 0), scheme
            continue
        with pytest.raises(ValueError, match="needs family='gaussian'") as info:
            compute_weights(X, target, scheme, family=family)
        advised = _advice(str(info.value))
        assert set(advised) == {s for s in SCHEMES if (s, family) not in NO_PAIRING}
        for name in advised:
            compute_weights(X, target, name, family=family)


@pytest.mark.parametrize(
    "family", ["gaussian", "binomial", pytest.param("cox", marks=needs_survival)]
)
def test_every_scheme_family_pairing_with_covariates_in_vcpcr(family):
    """VCPCR with a covariate: each pairing fits or raises the one clear
    error, naming the schemes that fit, before the clustering runs."""
    from vcpcr import VCPCR

    X, _, y, _ = _std_data(n=60, p=12)
    target = _family_responses(y)[family]
    for scheme in SCHEMES:
        model = VCPCR(n_clusters=2, weights=scheme, covariates=[0], family=family)
        model.set_params(n_init=1, random_state=0)
        if (scheme, family) not in NO_PAIRING_WITH_COVARIATES:
            model.fit(X, target)
            assert model.weights_.shape == (11,)
            assert np.any(model.weights_ != 0)
            continue
        with pytest.raises(ValueError, match=f"weights={scheme!r}") as info:
            model.fit(X, target)
        advised = _advice(str(info.value))
        expected = {s for s in SCHEMES if (s, family) not in NO_PAIRING_WITH_COVARIATES}
        assert set(advised) == expected


def test_vcpcrcv_refuses_a_pairing_before_the_folds():
    """Not one failed fit per fold and grid point: the pairing error itself."""
    from vcpcr import VCPCRCV

    X, _, y, _ = _std_data()
    with pytest.raises(ValueError, match="'glmnet_lasso' needs family='gaussian'"):
        VCPCRCV(weights="glmnet_lasso", family="binomial", cv=3).fit(X, y > 0)


@pytest.mark.parametrize(
    ("weights", "match"),
    [("identity", "'identity' weights have no penalty"), (None, "'given' weights")],
)
def test_delta_of_unpenalized_weights_says_it_is_unused(weights, match):
    from vcpcr import VCPCR

    X, _, y, _ = _std_data()
    weights = np.ones(X.shape[1]) if weights is None else weights
    with pytest.raises(ValueError, match=f"must be > 0. Got 0 instead. {match}"):
        VCPCR(weights=weights, delta=0).fit(X, y)


def test_a_scheme_added_to_the_registry_needs_no_other_edit(monkeypatch):
    """A new elastic net (l1_ratio 0.5) registered in SCHEMES alone works in
    compute_weights, VCPCR (its default delta) and VCPCRCV (its grid,
    relative to its delta_max)."""
    from vcpcr import VCPCR, VCPCRCV

    half = WeightScheme("enet_half", 0.5, 0.1, (0.05, 0.2))
    monkeypatch.setitem(SCHEMES, "enet_half", half)
    X, Xs, y, _ = _std_data()
    reference = compute_weights(X, y, "enet", delta=0.1, l1_ratio=0.5)
    assert_allclose(
        compute_weights(X, y, "enet_half"), reference, rtol=1e-12, atol=1e-15
    )
    model = VCPCR(n_clusters=2, weights="enet_half", n_init=1, random_state=0)
    model.fit(X, y)
    assert model.delta_ == 0.1
    assert_allclose(model.weights_, reference, rtol=1e-12, atol=1e-15)
    assert "enet_half (delta=0.1)" in str(model.summary())
    cv = VCPCRCV(n_clusters=2, weights="enet_half", lam_ratios=[0.3], n_init=1, cv=3)
    cv.fit(X, y)
    ys = (y - y.mean()) / y.std(ddof=1)
    delta_max = np.abs(Xs.T @ ys).max() / len(y) / 0.5  # all weights zero above
    assert_allclose(
        sorted(cv.cv_results_["delta"]),
        [0.05 * delta_max, 0.2 * delta_max],
        rtol=1e-12,
    )
