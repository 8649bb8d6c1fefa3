"""Tests of the competitor estimators CRL, CEN, SRR and of hclustvar."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.linear_model import Lasso
from sklearn.metrics import adjusted_rand_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from vcpcr.baselines import CEN, CRL, SRR, hclustvar
from vcpcr.baselines._cen import cen_gram, kmeans_columns, within_ss
from vcpcr.baselines._hclustvar import _arrowhead_top
from vcpcr.baselines._srr import srr_objective, srr_penalties

REFERENCE = Path(__file__).parent / "reference"


# ---------------------------------------------------------------- helpers
def block_data(
    n=80, n_blocks=4, size=5, n_noise=0, rho=0.9, sigma=0.3, seed=0
):  # -> X, y, blocks (-1 = noise), b
    """Blocks of ``size`` correlated variables; y = block 0 - block 2 + noise."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, n_blocks))
    X = np.sqrt(rho) * np.repeat(z, size, axis=1)
    X = X + np.sqrt(1 - rho) * rng.normal(size=X.shape)
    X = np.hstack([X, rng.normal(size=(n, n_noise))])
    blocks = np.concatenate(
        [np.repeat(np.arange(n_blocks), size), np.full(n_noise, -1)]
    )
    b = np.where(blocks == 0, 1.0, 0.0) - np.where(blocks == 2, 1.0, 0.0)
    y = X @ b + sigma * rng.normal(size=n)
    return X, y, blocks, b


def standardized(X, y):
    Xs = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    return Xs, (y - y.mean()) / y.std(ddof=1)


def std_coef(est):
    """Fitted coefficients on the standardized scale of X and y."""
    return est.coef_ * est.scale_ / est.y_scale_


def lasso_std(X, y, alpha):
    Xs, ys = standardized(X, y)
    return (
        Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=10**6)
        .fit(Xs, ys)
        .coef_
    )


def hclustvar_bruteforce(X, n_clusters):
    """ClustOfVar's agglomeration, literally: all pairwise costs every step."""
    R = np.corrcoef(X, rowvar=False)

    def lam1(idx):
        return np.linalg.eigvalsh(R[np.ix_(idx, idx)])[-1]

    members = {j: [j] for j in range(X.shape[1])}  # label = first variable
    while len(members) > n_clusters:
        best = None
        for i in sorted(members):
            for j in sorted(members):
                if i == j:
                    continue
                d = lam1(members[i]) + lam1(members[j]) - lam1(members[i] + members[j])
                if best is None or d < best[0]:
                    best = (d, min(i, j), max(i, j))
        _, keep, gone = best
        members[keep] += members.pop(gone)
    labels = np.empty(X.shape[1], dtype=int)
    for k, idx in enumerate(members.values()):
        labels[idx] = k
    return labels


# ------------------------------------------------------------- sklearn API
ESTIMATORS = [
    CRL(n_clusters=2),
    CRL(n_clusters=2, clustering="ward"),
    CRL(n_clusters=2, clustering="hclustcc"),
    CEN(n_clusters=2, n_init=2),
    SRR(n_models=2),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    # CRL sets the ``poor_score`` tag (equal coefficients within a cluster);
    # no check is expected to fail.
    check(estimator)


FITTED = {
    "CRL-kmeans": CRL(4, alpha=0.05, random_state=0),
    "CRL-ward": CRL(4, clustering="ward", alpha=0.05),
    "CRL-hclustcc": CRL(4, clustering="hclustcc", alpha=0.05),
    "CEN": CEN(4, alpha=0.05, n_init=3, random_state=0),
    "SRR": SRR(3, alpha=0.05, lambda_div=0.5),
}


@pytest.mark.parametrize("est", FITTED.values(), ids=FITTED.keys())
def test_common_attributes_and_raw_scale(est):
    X, y, _, _ = block_data(n_noise=10)
    est.fit(X, y)
    p = X.shape[1]
    assert est.coef_.shape == (p,)
    assert est.labels_.shape == (p,)
    assert np.issubdtype(est.labels_.dtype, np.integer)
    assert_array_equal(est.labels_ == -1, est.coef_ == 0)
    # an unpenalized intercept: the training residuals sum to zero
    assert_allclose(np.mean(y - est.predict(X)), 0.0, atol=1e-10 * np.std(y))
    assert_array_less_norm(est.coef_)
    # Affine changes of the columns and of y give the same standardized fit.
    scale, shift = np.linspace(0.5, 20, p), np.linspace(-3, 3, p)
    est2 = type(est)(**est.get_params()).fit(X * scale + shift, 10 * y + 3)
    assert_allclose(est2.predict(X * scale + shift), 10 * est.predict(X) + 3, rtol=1e-6)
    assert_allclose(est2.coef_ * scale, 10 * est.coef_, rtol=1e-6, atol=1e-10)


def assert_array_less_norm(coef):
    np.testing.assert_array_less(1e-5, np.linalg.norm(coef))


BAD_PARAMS = {
    "clustering": (CRL(clustering="average"), ValueError, "'clustering'.*'kmeans'"),
    "n_clusters>p": (CRL(n_clusters=50), ValueError, "n_features=20 must be >= n_cl"),
    "cen n_clusters>p": (CEN(n_clusters=21), ValueError, "n_features=20 must be >="),
    "alpha<0": (CEN(alpha=-1.0), ValueError, "'alpha' parameter of CEN"),
    "gamma str": (CEN(gamma="big"), TypeError, "'gamma' parameter of CEN"),
    "n_models=0": (SRR(n_models=0), ValueError, "'n_models' parameter of SRR"),
    "lambda_div<0": (SRR(lambda_div=-0.1), ValueError, "'lambda_div'"),
    "n_init float": (CRL(n_init=2.5), TypeError, "'n_init' parameter of CRL"),
    "init": (CRL(init="kmeans++"), ValueError, "'init' parameter of CRL.*'random'"),
    "init labels": (
        CRL(3, init=np.zeros(20, int)),
        ValueError,
        "every label 0..n_clusters-1 = 0..2; got",
    ),
    "init float labels": (CRL(3, init=np.full(20, 0.5)), TypeError, "init"),
    "init label too big": (CRL(3, init=np.arange(20) % 4), ValueError, "init"),
    "max_iter=0": (SRR(max_iter=0), ValueError, "'max_iter' parameter of SRR"),
}


@pytest.mark.parametrize(
    ("est", "error", "match"), BAD_PARAMS.values(), ids=BAD_PARAMS.keys()
)
def test_invalid_parameters(est, error, match):
    X, y, _, _ = block_data()
    with pytest.raises(error, match=match):
        est.fit(X, y)


@pytest.mark.parametrize("est", FITTED.values(), ids=FITTED.keys())
def test_bad_data(est):
    X, y, _, _ = block_data()
    Xnan = X.copy()
    Xnan[3, 7] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN in 1 column\(s\) \['x7'\]"):
        est.fit(Xnan, y)
    Xc = X.copy()
    Xc[:, 2] = 1.0
    with pytest.raises(ValueError, match=r"1 constant column\(s\) \['x2'\]"):
        est.fit(Xc, y)
    with pytest.raises(ValueError, match="y is constant"):
        est.fit(X, np.ones_like(y))


# ---------------------------------------------------------------- hclustvar
@pytest.mark.parametrize("seed", range(4))
def test_hclustvar_equals_bruteforce_random(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, 9)) @ rng.normal(size=(9, 9))  # correlated columns
    for k in range(1, 10):
        assert adjusted_rand_score(hclustvar(X, k), hclustvar_bruteforce(X, k)) == 1.0


@pytest.mark.parametrize("n", [15, 60], ids=["p>n", "p<n"])
def test_hclustvar_equals_bruteforce_blocks(n):
    X, _, _, _ = block_data(n=n, n_blocks=4, size=5, n_noise=10, rho=0.5, seed=3)
    for k in (2, 4, 5, 8, 15):
        assert adjusted_rand_score(hclustvar(X, k), hclustvar_bruteforce(X, k)) == 1.0


def test_hclustvar_recovers_blocks_and_is_fast():
    X, _, blocks, _ = block_data(n=50, n_blocks=10, size=5, n_noise=150, rho=0.6)
    start = time.perf_counter()
    labels = hclustvar(X, 20)
    elapsed = time.perf_counter() - start
    assert elapsed < 3.0  # about 0.1 s; generous for loaded CI machines
    for k in range(10):  # every block ends in a single cluster
        assert np.unique(labels[blocks == k]).size == 1


def test_arrowhead_secular_solver_matches_eigvalsh():
    rng = np.random.default_rng(0)
    for r in (1, 2, 5, 30):
        F = rng.normal(size=(40, r)) * rng.uniform(0.1, 3, size=r)
        lam = np.sort(np.sum(F * F, axis=0))[::-1]
        g = rng.normal(size=(r, 25)) * np.sqrt(lam)[:, None] * 0.3
        g[:, 0] = 0.0  # an uncorrelated variable
        expect = [
            np.linalg.eigvalsh(np.block([[np.diag(lam), gi[:, None]], [gi[None], 1]]))[
                -1
            ]
            for gi in g.T
        ]
        assert_allclose(_arrowhead_top(lam, g), expect, rtol=1e-13)


def test_hclustvar_validation():
    X, _, _, _ = block_data()
    with pytest.raises(ValueError, match="n_features=20 must be >= n_clusters=21"):
        hclustvar(X, 21)
    with pytest.raises(TypeError, match="'n_clusters' parameter of hclustvar"):
        hclustvar(X, 2.0)


# ---------------------------------------------------------------------- CRL
@pytest.mark.parametrize("clustering", ["kmeans", "ward", "hclustcc"])
def test_crl_recovers_blocks_and_selects_active_ones(clustering):
    X, y, blocks, _ = block_data(n=60, rho=0.9)
    est = CRL(4, clustering=clustering, alpha=0.1, random_state=0).fit(X, y)
    assert adjusted_rand_score(est.cluster_labels_, blocks) == 1.0
    selected = np.unique(blocks[est.labels_ >= 0])
    assert_array_equal(selected, [0, 2])
    assert np.all(est.coef_[blocks == 0] > 0)
    assert np.all(est.coef_[blocks == 2] < 0)
    # b_j = a_k / |C_k|: one coefficient per cluster, shared by its variables.
    sizes = np.bincount(est.cluster_labels_)
    expect = est.cluster_coef_[est.cluster_labels_] / sizes[est.cluster_labels_]
    assert_allclose(std_coef(est), expect, rtol=1e-12)


def test_crl_random_init_ends_at_a_lloyd_fixed_point():
    X, y, blocks, _ = block_data(n=60, rho=0.5, n_noise=5)
    est = CRL(4, init="random", n_init=3, random_state=0).fit(X, y)
    Xs, _ = standardized(X, y)
    labels = est.cluster_labels_
    centers = np.stack([Xs[:, labels == k].mean(axis=1) for k in range(4)])
    d2 = ((Xs.T[:, None, :] - centers[None]) ** 2).sum(axis=2)
    assert_array_equal(np.argmin(d2, axis=1), labels)
    # A partition as init is one Lloyd run from it: the true blocks (noise
    # variables spread over them) stay a partition with the blocks together.
    start = np.where(blocks >= 0, blocks, np.arange(blocks.size) % 4)
    fixed = CRL(4, init=start, alpha=0.1).fit(X, y).cluster_labels_
    assert adjusted_rand_score(fixed[blocks >= 0], blocks[blocks >= 0]) == 1.0


@pytest.mark.parametrize("clustering", ["kmeans", "ward", "hclustcc"])
def test_crl_with_one_variable_per_cluster_is_the_lasso(clustering):
    X, y, _, _ = block_data(n_noise=10)
    est = CRL(X.shape[1], clustering=clustering, alpha=0.05).fit(X, y)
    assert_allclose(std_coef(est), lasso_std(X, y, 0.05), rtol=1e-7, atol=1e-9)


@pytest.mark.reference
@pytest.mark.parametrize("name", ["gauss_wide", "gauss_tall"])
def test_crl_ward_partitions_against_R_hclust(name):
    """R: cutree(hclust(dist(t(scale(X))), method = "ward.D2"), k).

    Produced by tests/reference/baselines_ward.R.
    """
    ref = json.loads((REFERENCE / "baselines_ward.json").read_text())
    data = pd.read_csv(REFERENCE / "data" / f"{name}.csv")
    X, y = data.filter(regex="^x").to_numpy(), data["y"].to_numpy()
    for k in ref["meta"]["k"]:
        est = CRL(k, clustering="ward", alpha=0.1).fit(X, y)
        r_labels = ref[name]["labels"][f"k{k}"]
        assert adjusted_rand_score(est.cluster_labels_, r_labels) == 1.0


@pytest.mark.reference
@pytest.mark.parametrize("name", ["gauss_wide", "gauss_tall"])
def test_lasso_limits_against_R_glmnet(name):
    """CRL(K=p), CEN(gamma=0) and SRR(lambda_div=0) are glmnet's lasso.

    R: glmnet(scale(X), scale(y), lambda = delta, standardize = FALSE,
    intercept = FALSE) (tests/reference/glmnet_weights.R).
    """
    ref = json.loads((REFERENCE / "glmnet_weights.json").read_text())[name]["lasso"]
    data = pd.read_csv(REFERENCE / "data" / f"{name}.csv")
    X, y = data.filter(regex="^x").to_numpy(), data["y"].to_numpy()
    for delta, coef in zip(ref["delta"], ref["coef"], strict=True):
        models = [
            CRL(X.shape[1], alpha=delta),
            CEN(3, alpha=delta, gamma=0.0, tol=1e-10, n_init=1, random_state=0),
            SRR(1, alpha=delta, lambda_div=0.0, tol=1e-10),
            SRR(3, alpha=delta, lambda_div=0.0, tol=1e-10),
        ]
        for est in models:
            b = std_coef(est.fit(X, y))
            assert_allclose(b, coef, rtol=0, atol=1e-7 * np.abs(coef).max())
            assert_array_equal(b != 0, np.asarray(coef) != 0)


# ---------------------------------------------------------------------- CEN
def seed_cen_update(Xs, ys, b, labels, j, delta, lam):
    """The VC-PCR paper's CEN coordinate update for b_j, written literally."""
    in_k = labels == labels[j]
    p_k = in_k.sum()
    e_j = ys - Xs @ b + Xs[:, j] * b[j]
    others = np.flatnonzero(in_k & (np.arange(b.size) != j))
    z = Xs[:, j] @ e_j + lam / p_k * sum(b[m] * Xs[:, j] @ Xs[:, m] for m in others)
    soft = np.sign(z) * max(abs(z) - delta, 0.0)
    return soft / (Xs[:, j] @ Xs[:, j] * (1 + lam * (p_k - 1) / p_k))


def test_cen_satisfies_its_coordinate_update_and_kkt_at_convergence():
    X, y, _, _ = block_data(n=40, n_noise=15, rho=0.7, seed=1)
    alpha, gamma = 0.04, 2.0
    est = CEN(4, alpha=alpha, gamma=gamma, tol=1e-12, random_state=0).fit(X, y)
    assert est.converged_
    Xs, ys = standardized(X, y)
    n = Xs.shape[0]
    b, labels = std_coef(est), est.cluster_labels_
    # Fixed point of the paper's update (delta = n * alpha, lambda = gamma).
    for j in range(b.size):
        new = seed_cen_update(Xs, ys, b, labels, j, n * alpha, gamma)
        assert_allclose(new, b[j], rtol=0, atol=1e-9)
    # Stationarity / KKT of the objective for the fixed partition.
    grad = Xs.T @ ys / n - cen_gram(Xs.T @ Xs, labels, gamma, n) @ b
    nz = b != 0
    assert nz.sum() >= 5
    assert_allclose(grad[nz], alpha * np.sign(b[nz]), rtol=0, atol=1e-9)
    assert np.all(np.abs(grad[~nz]) <= alpha + 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_cen_groups_correlated_active_variables(seed):
    X, y, blocks, _ = block_data(n=50, rho=0.9, n_noise=10, sigma=1.0, seed=seed)
    active = np.isin(blocks, [0, 2])
    cen = CEN(3, alpha=0.1, gamma=2.0, random_state=0).fit(X, y)
    lasso = CEN(3, alpha=0.1, gamma=0.0, random_state=0).fit(X, y)
    # CEN selects exactly the active variables, one cluster per active block.
    assert_array_equal(cen.coef_ != 0, active)
    assert np.unique(cen.labels_[blocks == 0]).size == 1
    assert np.unique(cen.labels_[blocks == 2]).size == 1
    assert cen.labels_[blocks == 0][0] != cen.labels_[blocks == 2][0]
    # The k-means term pulls the absolute coefficients of a block together,
    # much more than the lasso (gamma=0) does.
    for k in (0, 2):
        spread_cen = np.ptp(np.abs(std_coef(cen)[blocks == k]))
        spread_lasso = np.ptp(np.abs(std_coef(lasso)[blocks == k]))
        assert spread_cen < 0.25 * spread_lasso


def test_cen_gamma_zero_is_the_lasso():
    X, y, _, _ = block_data(n=40, n_noise=30, rho=0.7)
    est = CEN(5, alpha=0.05, gamma=0.0, tol=1e-12, random_state=0).fit(X, y)
    assert_allclose(std_coef(est), lasso_std(X, y, 0.05), rtol=0, atol=1e-9)


def test_cen_objective_decreases_and_fit_is_reproducible():
    X, y, _, _ = block_data(n=40, n_noise=30, rho=0.7, seed=4)
    est = CEN(5, alpha=0.03, gamma=1.0, random_state=7).fit(X, y)
    steps = np.diff(est.objective_)
    assert np.all(steps <= 1e-12 * np.abs(est.objective_[:-1]))
    again = CEN(5, alpha=0.03, gamma=1.0, random_state=7).fit(X, y)
    assert_array_equal(again.coef_, est.coef_)
    assert_array_equal(again.labels_, est.labels_)


def test_kmeans_step_never_increases_the_criterion():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(10, 30)) * rng.uniform(0, 2, size=30)
    Z[:, :8] = 0.0  # zero coefficients are points at the origin
    labels = rng.integers(0, 4, size=30)
    new = kmeans_columns(Z, labels)
    assert within_ss(Z, new) <= within_ss(Z, labels)
    assert_array_equal(kmeans_columns(Z, new), new)  # a fixed point


# ---------------------------------------------------------------------- SRR
def test_srr_models_are_diverse():
    X, y, _, _ = block_data(n=60, n_blocks=3, size=6, n_noise=20, rho=0.9)
    diverse = SRR(3, alpha=0.05, lambda_div=2.0).fit(X, y)
    assert diverse.n_shared_ == 0
    assert diverse.score(X, y) > 0.9
    per_model = (diverse.model_coef_ != 0).sum(axis=1)
    assert np.all(per_model > 0)  # every model is used
    # Without the diversity penalty all models are the lasso: all shared.
    same = SRR(3, alpha=0.05, lambda_div=0.0).fit(X, y)
    assert same.n_shared_ == np.sum(same.coef_ != 0) > 0
    assert_allclose(same.model_coef_, same.model_coef_[[0, 0, 0]], rtol=1e-12)


def test_srr_objective_decreases_and_kkt_holds_per_model():
    X, y, _, _ = block_data(n=40, n_blocks=3, size=6, n_noise=20, rho=0.8, seed=5)
    alpha, lam = 0.05, 0.3
    est = SRR(3, alpha=alpha, lambda_div=lam, tol=1e-11, max_iter=5000).fit(X, y)
    assert est.converged_
    steps = np.diff(est.objective_)
    assert np.all(steps <= 1e-12 * np.abs(est.objective_[:-1]))
    Xs, ys = standardized(X, y)
    n = Xs.shape[0]
    B = (est.model_coef_ * est.scale_ / est.y_scale_).T
    Q, c = Xs.T @ Xs / n, Xs.T @ ys / n
    final = srr_objective(Q, c, ys @ ys / (2 * n), B, alpha, lam)
    assert_allclose(est.objective_[-1], final, rtol=1e-10)
    for g in range(B.shape[1]):
        pen = srr_penalties(B, g, alpha, lam)
        grad = Xs.T @ (ys - Xs @ B[:, g]) / n
        nz = B[:, g] != 0
        assert_allclose(grad[nz], pen[nz] * np.sign(B[nz, g]), rtol=0, atol=1e-8)
        assert np.all(np.abs(grad[~nz]) <= pen[~nz] + 1e-8)


@pytest.mark.parametrize("n_models", [1, 3])
def test_srr_without_diversity_is_the_lasso(n_models):
    X, y, _, _ = block_data(n=40, n_noise=30, rho=0.7)
    est = SRR(n_models, alpha=0.05, lambda_div=0.0, tol=1e-12).fit(X, y)
    for k in range(n_models):
        b_k = est.model_coef_[k] * est.scale_ / est.y_scale_
        assert_allclose(b_k, lasso_std(X, y, 0.05), rtol=0, atol=1e-9)


def test_srr_predicts_the_average_model_and_labels_by_model():
    X, y, _, _ = block_data(n=50, n_blocks=3, size=6, n_noise=20, rho=0.8, seed=6)
    est = SRR(4, alpha=0.04, lambda_div=0.2).fit(X, y)
    assert_allclose(est.coef_, est.model_coef_.mean(axis=0), rtol=1e-12)
    intercepts = est.y_mean_ - est.model_coef_ @ est.mean_
    each = X @ est.model_coef_.T + intercepts
    assert_allclose(est.predict(X), each.mean(axis=1), rtol=1e-10)
    active = est.model_coef_ != 0
    single = active.sum(axis=0) == 1
    assert single.any()
    assert_array_equal(est.labels_[single], np.argmax(active[:, single], axis=0))
    shared = active.sum(axis=0) > 1
    assert est.n_shared_ == shared.sum()
    big = np.argmax(np.abs(est.model_coef_ * est.scale_), axis=0)
    assert_array_equal(est.labels_[shared], big[shared])
    assert np.all(est.labels_[~active.any(axis=0)] == -1)


# ------------------------------------------------------------------ timing
@pytest.mark.slow
@pytest.mark.parametrize(
    "est",
    [
        CRL(5, clustering="hclustcc", alpha=0.05),
        CEN(5, alpha=0.05, random_state=0),
        SRR(5, alpha=0.05, lambda_div=0.5),
    ],
    ids=["CRL-hclustcc", "CEN", "SRR"],
)
def test_fit_time_n50_p200(est):
    X, y, _, _ = block_data(n=50, n_blocks=10, size=5, n_noise=150, rho=0.6)
    start = time.perf_counter()
    est.fit(X, y)
    assert time.perf_counter() - start < 3.0  # typically 0.02-0.3 s
