"""Tests of the weighted SOS-NMF solver (vcpcr._solvers.sos_nmf)."""

from __future__ import annotations

import numpy as np
import pytest
from naive_sos_nmf import naive_sos_nmf
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics import adjusted_rand_score

from vcpcr import ConvergenceWarning, lambda_max, random_partition, sos_nmf
from vcpcr._scaling import standardize


def _problem(seed, n=40, p=60):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 6))
    X = np.hstack(
        [
            np.repeat(z, 5, axis=1) + rng.normal(size=(n, 30)),
            rng.normal(size=(n, p - 30)),
        ]
    )
    return standardize(X)[0], rng.normal(size=p), rng


CASES = [
    (K, ratio, seed)
    for K in (2, 4, 7)
    for ratio in (0.0, 0.05, 0.3, 0.7, 1.0)
    for seed in (0, 1)
]


@pytest.mark.parametrize(
    ("K", "ratio", "seed"), CASES, ids=[f"K{k}-r{r}-s{s}" for k, r, s in CASES]
)
def test_matches_naive_algorithm_1(K, ratio, seed):
    """Same X, weights, partition and penalty: identical labels, V to 1e-8."""
    Xs, w, rng = _problem(seed)
    init = random_partition(Xs.shape[1], K, rng)
    res = sos_nmf(Xs, K, weights=w, init=init, lam_ratio=ratio, standardize=False)
    V, labels, lam, objective = naive_sos_nmf(Xs, w, init, ratio)
    assert_array_equal(res.labels, labels)
    assert res.V.shape == V.shape
    assert_allclose(res.V, V, rtol=0, atol=1e-8)
    assert_allclose(res.lam, lam, rtol=1e-12, atol=0)
    assert_allclose(res.objective, objective, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_solution_properties(seed):
    Xs, w, _ = _problem(seed)
    res = sos_nmf(Xs, 5, weights=w, lam_ratio=0.2, random_state=seed, standardize=False)
    assert np.all(res.V >= 0)
    assert np.all((res.V > 0).sum(axis=1) <= 1)  # at most one cluster per variable
    assert_array_equal(
        res.labels, np.where(res.V.any(axis=1), res.V.argmax(axis=1), -1)
    )
    assert np.all(res.V.any(axis=0))  # no empty column is returned
    assert np.all(np.diff(res.objective) <= 1e-12 * np.abs(res.objective[:-1]))
    assert_allclose(res.U.std(axis=0, ddof=1), 1.0, rtol=1e-12)
    assert_allclose(res.U.mean(axis=0), 0.0, atol=1e-12)
    assert res.converged
    np.testing.assert_array_less(1e-5, np.linalg.norm(res.V))


def test_objective_matches_definition():
    Xs, w, _ = _problem(3)
    res = sos_nmf(Xs, 4, weights=w, lam_ratio=0.1, random_state=0, standardize=False)
    # The last objective is J(U_t, V_{t+1}); recompute J at the returned (U, V),
    # where U is the optimal U for V, which can only be lower.
    n = Xs.shape[0]
    J = np.sum((Xs * w - res.U @ res.V.T) ** 2) / (2 * (n - 1)) + res.lam * res.V.sum()
    assert J <= res.objective[-1] + 1e-12


def test_hand_computed_two_blocks():
    """x1 = x2 = a, x3 = x4 = b with a orthogonal to b: exact answer by hand."""
    a = np.array([1.0, 1.0, -1.0, -1.0])
    b = np.array([1.0, -1.0, 1.0, -1.0])
    X = np.column_stack([a, a, b, b])
    res = sos_nmf(X, init=np.array([0, 0, 1, 1]), lam_ratio=0.25)
    # u_1 = a, u_2 = b (unit sd); s = cor = 1 in own cluster, 0 elsewhere;
    # lam_max = 1, lam = 0.25, v = 1 - 0.25.
    assert res.lam_max == pytest.approx(1.0)
    assert_array_equal(res.labels, [0, 0, 1, 1])
    assert_allclose(res.V, [[0.75, 0], [0.75, 0], [0, 0.75], [0, 0.75]], atol=1e-12)
    # J = ||XW||^2 / (2(n-1)) - sum v^2 / 2 = 2 - 4 * 0.5625 / 2 = 0.875.
    assert_allclose(res.objective, [0.875, 0.875], rtol=1e-12)
    assert res.n_iter == 2


def test_signed_weights_join_anticorrelated_variable():
    """A variable anti-correlated with a block joins it when its weight is negative."""
    a = np.array([1.0, 1.0, -1.0, -1.0])
    b = np.array([1.0, -1.0, 1.0, -1.0])
    X = np.column_stack([a, -a, b, b])
    init = np.array([0, 1, 0, 1])
    plain = sos_nmf(X, init=init, lam_ratio=0.1)
    signed = sos_nmf(X, weights=[1.0, -1.0, 1.0, 1.0], init=init, lam_ratio=0.1)
    assert plain.labels[0] != plain.labels[1]
    assert signed.labels[0] == signed.labels[1]


def test_lam_ratio_at_least_one_selects_nothing():
    Xs, w, _ = _problem(0)
    for ratio in (1.0, 1.5):
        res = sos_nmf(
            Xs, 3, weights=w, lam_ratio=ratio, random_state=0, standardize=False
        )
        assert np.all(res.labels == -1)
        assert res.V.shape == (Xs.shape[1], 0)
        assert res.U.shape == (Xs.shape[0], 0)
        assert res.converged


def test_lambda_max_and_absolute_lam():
    Xs, w, rng = _problem(1)
    init = random_partition(Xs.shape[1], 4, rng)
    lmax = lambda_max(Xs, init, weights=w, standardize=False)
    res = sos_nmf(Xs, weights=w, init=init, lam_ratio=0.3, standardize=False)
    assert res.lam_max == pytest.approx(lmax, rel=1e-12)
    res_abs = sos_nmf(Xs, weights=w, init=init, lam=0.3 * lmax, standardize=False)
    assert_array_equal(res_abs.labels, res.labels)
    assert_allclose(res_abs.V, res.V, rtol=1e-12)


def test_permuting_variables_permutes_result():
    Xs, w, rng = _problem(2)
    init = random_partition(Xs.shape[1], 5, rng)
    perm = rng.permutation(Xs.shape[1])
    res = sos_nmf(Xs, weights=w, init=init, lam_ratio=0.2, standardize=False)
    res_p = sos_nmf(
        Xs[:, perm], weights=w[perm], init=init[perm], lam_ratio=0.2, standardize=False
    )
    assert adjusted_rand_score(res.labels[perm], res_p.labels) == 1.0
    assert_allclose(
        res.V.sum(axis=1)[perm], res_p.V.sum(axis=1), rtol=1e-10, atol=1e-14
    )


def test_same_random_state_same_fit_and_standardize_option():
    rng = np.random.default_rng(5)
    X = rng.normal(loc=3.0, scale=[1, 5, 0.1, 2, 9, 1] * 5, size=(30, 30))
    a = sos_nmf(X, 4, random_state=11)
    b = sos_nmf(X, 4, random_state=11)
    c = sos_nmf(standardize(X)[0], 4, random_state=11, standardize=False)
    assert_array_equal(a.labels, b.labels)
    assert_array_equal(a.V, b.V)
    assert_array_equal(a.labels, c.labels)
    assert_allclose(a.V, c.V, rtol=1e-12)


def test_recovers_blocks(blocks):
    X, _y, labels, _ = blocks
    w = np.ones(X.shape[1])
    res = sos_nmf(X, 4, weights=w, lam_ratio=0.5, random_state=0)
    active = labels >= 0
    assert adjusted_rand_score(labels[active], res.labels[active]) == 1.0
    assert np.all(res.labels[~active] == -1)


def test_random_partition_uses_every_label():
    rng = np.random.default_rng(0)
    for p, K in [(10, 3), (5, 5), (40, 39), (200, 6)]:
        labels = random_partition(p, K, rng)
        assert labels.shape == (p,)
        assert set(labels.tolist()) == set(range(K))


def test_max_iter_warns_with_numbers():
    Xs, w, _ = _problem(4)
    with pytest.warns(
        ConvergenceWarning, match=r"max_iter=1 .*relative change"
    ) as record:
        res = sos_nmf(
            Xs,
            5,
            weights=w,
            lam_ratio=0.05,
            max_iter=1,
            random_state=0,
            standardize=False,
        )
    assert not res.converged
    assert res.n_iter == 1
    assert record[0].filename == __file__  # the user's line (user_stacklevel)


def test_empty_initial_cluster_is_dropped():
    Xs, _, _ = _problem(0)
    init = np.zeros(Xs.shape[1], dtype=int)
    init[::2] = 2  # label 1 unused
    res = sos_nmf(Xs, 3, init=init, lam_ratio=0.0, standardize=False)
    assert res.V.shape[1] <= 2


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"lam": 0.1, "lam_ratio": 0.5}, ValueError, "either as lam_ratio"),
        ({"lam": -1.0}, ValueError, "'lam' parameter"),
        ({"lam_ratio": -0.1}, ValueError, "'lam_ratio' parameter"),
        ({"n_clusters": 0}, ValueError, "'n_clusters' parameter"),
        ({"n_clusters": 50}, ValueError, r"n_features=20 must be >= n_clusters=50"),
        ({"n_clusters": 2.5}, TypeError, "'n_clusters' parameter"),
        ({"max_iter": 0}, ValueError, "'max_iter' parameter"),
        ({"tol": -1.0}, ValueError, "'tol' parameter"),
        ({"n_clusters": None}, ValueError, "n_clusters is required"),
        ({"init": "kmeans++"}, ValueError, "'init' parameter"),
        ({"init": np.zeros(5, dtype=int)}, ValueError, "one label per feature"),
        ({"init": np.arange(20) - 1}, ValueError, "labels must lie in"),
        ({"weights": np.ones(3)}, ValueError, "weights has 3 entries but X has 20"),
        ({"weights": np.full(20, np.nan)}, ValueError, "weights contains NaN"),
    ],
    ids=lambda v: str(v)[:30],
)
def test_bad_input(kwargs, error, match):
    X = np.random.default_rng(0).normal(size=(10, 20))
    args = {"n_clusters": 3, **kwargs}
    with pytest.raises(error, match=match):
        sos_nmf(X, **args)


def test_bad_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 5))
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN in 1 column\(s\) \[2\]"):
        sos_nmf(X, 2)
    X[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        sos_nmf(X, 2)
    X[:, 2] = 1.0
    with pytest.raises(ValueError, match=r"constant column\(s\) \[2\]"):
        sos_nmf(X, 2)
    with pytest.raises(ValueError, match="at least 2"):
        sos_nmf(X[:1], 2)
    with pytest.raises(TypeError, match="numbers only"):
        sos_nmf(np.array([["a", "b"], ["c", "d"]]), 1)


def _random_partition_before_20(p, K, seed):
    """random_partition as it was before #20: 100 redraws, then the fallback.

    Returns the labels and whether a redraw succeeded."""
    rng = np.random.default_rng(seed)
    for _ in range(100):
        labels = rng.integers(0, K, size=p)
        if np.unique(labels).size == K:
            return labels, True
    labels = rng.integers(0, K, size=p)
    labels[rng.permutation(p)[:K]] = np.arange(K)
    return labels, False


@pytest.mark.parametrize(("p", "K"), [(10, 3), (30, 12), (40, 25), (300, 100)])
def test_random_partition_keeps_the_draws_where_a_redraw_succeeds(p, K):
    """#20 skips the redraws only when they cannot succeed: on every seed
    where the former redraws succeed, the partition is unchanged."""
    compared = 0
    for seed in range(60):
        before, redrawn = _random_partition_before_20(p, K, seed)
        if redrawn:
            compared += 1
            assert_array_equal(
                random_partition(p, K, np.random.default_rng(seed)), before
            )
    assert compared > 0


def test_random_partition_with_one_variable_per_cluster():
    """p = K = 10**6 skips the 100 hopeless redraws (48 s before #20): each
    label is placed once."""
    labels = random_partition(10**6, 10**6, random_state=0)
    assert_array_equal(np.sort(labels), np.arange(10**6))
