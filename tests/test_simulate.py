"""Tests of the simulated data generators (vcpcr.simulate)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import expit

from vcpcr.simulate import (
    SimulatedData,
    make_block_data,
    make_paper_data,
    paper_coef,
    paper_covariance,
)

CONFIGS = (1, 2, 3)
EULER_GAMMA = 0.5772156649015329


def _hand_covariance(rho, config):
    """The paper's Sigma written out index range by index range (0-based)."""
    groups = {
        1: [range(0, 10), range(10, 20), range(20, 30), range(30, 40)],
        2: [range(5 * k, 5 * k + 5) for k in range(10)],
        3: [range(0, 5), range(10, 15), range(20, 25), range(30, 35)],
    }[config]
    if config == 1:
        groups = [*groups, range(40, 45), range(45, 50)]
    S = np.eye(200)
    for g in groups:
        for i in g:
            for j in g:
                if i != j:
                    S[i, j] = rho
    return S


# --------------------------------------------------------------------------- paper


def test_paper_coef_layout():
    b = paper_coef()
    expected = np.zeros(200)
    expected[0:5] = 1.0
    expected[10:15] = -1.0
    expected[20:25] = 1.0
    expected[30:35] = -1.0
    assert_array_equal(b, expected)


@pytest.mark.parametrize("config", CONFIGS, ids=[f"config{c}" for c in CONFIGS])
@pytest.mark.parametrize("rho", [0.3, 0.6], ids=["rho0.3", "rho0.6"])
def test_paper_covariance_matches_hand_written(rho, config):
    assert_array_equal(paper_covariance(rho, config), _hand_covariance(rho, config))


@pytest.mark.parametrize("config", CONFIGS, ids=[f"config{c}" for c in CONFIGS])
def test_paper_data_shapes_and_truth(config):
    data = make_paper_data(25, rho=0.3, config=config, random_state=0)
    assert isinstance(data, SimulatedData)
    assert data.X.shape == (25, 200)
    assert data.y.shape == (25,)
    assert_array_equal(data.coef, paper_coef())
    labels = np.full(200, -1)
    for k, start in enumerate((0, 10, 20, 30)):
        labels[start : start + 5] = k
    assert_array_equal(data.labels, labels)
    assert_array_equal(data.cov, _hand_covariance(0.3, config))
    assert data.event is None
    assert data.intercept == 0.0
    # b' Sigma b = 4 blocks x (5 + 5 * 4 * rho), the same in every configuration.
    assert_allclose(data.noise_sd**2, 4 * (5 + 20 * 0.3) / 10, rtol=1e-12, atol=0)


@pytest.mark.parametrize("config", CONFIGS, ids=[f"config{c}" for c in CONFIGS])
def test_paper_data_empirical_covariance(config):
    """With 20,000 rows the sample covariance is Sigma to within sampling error."""
    data = make_paper_data(20_000, rho=0.6, config=config, random_state=config)
    emp = np.cov(data.X, rowvar=False)
    # sd of a sample covariance is <= sqrt((1 + rho^2) / n) ~ 0.0083; 19,900 pairs.
    assert_allclose(emp, paper_covariance(0.6, config), rtol=0, atol=0.045)
    assert_allclose(data.X.mean(axis=0), 0.0, rtol=0, atol=0.04)


@pytest.mark.parametrize("snr", [10.0, 2.0], ids=["snr10", "snr2"])
def test_paper_data_snr(snr):
    data = make_paper_data(20_000, rho=0.6, config=2, snr=snr, random_state=3)
    signal = data.coef @ data.cov @ data.coef
    assert_allclose(data.noise_sd**2, signal / snr, rtol=1e-12, atol=0)
    resid = data.y - data.X @ data.coef
    # relative sd of a sample variance is sqrt(2 / n) = 1%.
    assert_allclose(resid.var(), signal / snr, rtol=0.05, atol=0)
    assert_allclose((data.X @ data.coef).var(), signal, rtol=0.05, atol=0)


def test_reproducible_with_random_state():
    a = make_paper_data(30, random_state=42)
    b = make_paper_data(30, random_state=42)
    c = make_paper_data(30, random_state=43)
    assert_array_equal(a.X, b.X)
    assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X)
    g1 = make_paper_data(30, random_state=np.random.default_rng(7))
    g2 = make_paper_data(30, random_state=np.random.default_rng(7))
    assert_array_equal(g1.y, g2.y)


# --------------------------------------------------------------------------- general


def test_block_data_layout():
    data = make_block_data(
        10,
        [3, 2, 4, 1],
        [0.0, 2.0, -1.0, 0.0],
        corr_groups=[7, 7, -1, 2],
        n_noise=5,
        random_state=0,
    )
    assert data.X.shape == (10, 15)
    assert_array_equal(data.coef, [0] * 3 + [2] * 2 + [-1] * 4 + [0] + [0] * 5)
    assert_array_equal(data.labels, [-1] * 3 + [0] * 2 + [1] * 4 + [-1] + [-1] * 5)
    assert_array_equal(data.corr_groups, [7] * 5 + [-1] * 4 + [2] + [-1] * 5)
    assert data.cov is None


def test_block_data_covariance_and_signal_variance():
    """The O(p) b' Sigma b equals the dense quadratic form; sample cov matches."""
    rng = np.random.default_rng(0)
    sizes = [4, 3, 6, 2, 5]
    coefs = rng.normal(size=5)
    groups = [0, 0, -1, 1, 1]
    data = make_block_data(
        20_000,
        sizes,
        coefs,
        corr_groups=groups,
        rho=0.45,
        n_noise=3,
        snr=4.0,
        return_cov=True,
        random_state=1,
    )
    S = data.cov
    assert_array_equal(np.diag(S), 1.0)
    assert S[0, 6] == 0.45  # blocks 0 and 1 share group 0
    assert S[7, 8] == 0.0  # block 2 is independent
    assert S[13, 19] == 0.45  # blocks 3 and 4 share group 1
    assert S[0, 13] == 0.0
    assert_allclose(data.noise_sd**2, data.coef @ S @ data.coef / 4.0, rtol=1e-12)
    assert_allclose(np.cov(data.X, rowvar=False), S, rtol=0, atol=0.045)


def test_block_data_scales_to_20000_features():
    start = time.perf_counter()
    data = make_block_data(
        50, [50] * 40, [1.0] * 4 + [0.0] * 36, n_noise=18_000, random_state=0
    )
    assert time.perf_counter() - start < 5.0
    assert data.X.shape == (50, 20_000)
    assert data.cov is None
    assert_allclose(data.noise_sd**2, 4 * (50 + 50 * 49 * 0.6) / 10, rtol=1e-12)


def test_block_data_rho_zero_and_one():
    ind = make_block_data(20_000, [4], [1.0], rho=0.0, random_state=0)
    assert_allclose(np.corrcoef(ind.X, rowvar=False), np.eye(4), rtol=0, atol=0.04)
    same = make_block_data(10, [4], [1.0], rho=1.0, random_state=0)
    assert_allclose(same.X - same.X[:, [0]], 0.0, rtol=0, atol=1e-12)


def test_gaussian_noise_sd_and_intercept():
    data = make_block_data(
        20_000, [5], [0.0], n_noise=2, noise_sd=2.0, intercept=3.0, random_state=0
    )
    assert data.noise_sd == 2.0
    assert data.intercept == 3.0
    assert_allclose(data.y.mean(), 3.0, rtol=0, atol=0.1)
    assert_allclose(data.y.std(), 2.0, rtol=0.03, atol=0)


def test_binomial_prevalence():
    data = make_block_data(
        20_000,
        [5, 5, 5],
        [0.4, 0.0, -0.4],
        family="binomial",
        prevalence=0.2,
        random_state=0,
    )
    assert data.y.dtype.kind == "i"
    assert set(np.unique(data.y)) == {0, 1}
    assert data.noise_sd is None
    assert data.event is None
    # sd of the sample prevalence: sqrt(0.2 * 0.8 / 20,000) = 0.0028.
    assert_allclose(data.y.mean(), 0.2, rtol=0, atol=0.012)
    # the solved intercept gives the target population prevalence
    eta = np.random.default_rng(1).normal(size=400_000) * np.sqrt(2 * (5 + 20 * 0.6))
    eta *= 0.4
    assert_allclose(expit(data.intercept + eta).mean(), 0.2, rtol=0, atol=3e-3)


def test_binomial_is_logistic_model():
    """A logistic regression on large n recovers the coefficients and intercept."""
    sm = pytest.importorskip("statsmodels.api")
    data = make_block_data(
        30_000,
        [2, 2],
        [0.8, -0.5],
        n_noise=1,
        family="binomial",
        intercept=-0.7,
        random_state=4,
    )
    fit = sm.Logit(data.y, sm.add_constant(data.X)).fit(disp=0)
    assert_allclose(fit.params, [-0.7, *data.coef], rtol=0, atol=0.06)


@pytest.mark.parametrize("shape", [1.0, 2.5], ids=["exponential", "weibull2.5"])
@pytest.mark.parametrize("target", [0.1, 0.3, 0.7], ids=["c0.1", "c0.3", "c0.7"])
def test_cox_censoring_fraction(shape, target):
    data = make_block_data(
        20_000,
        [5, 5],
        [0.5, -0.3],
        n_noise=3,
        family="cox",
        censoring=target,
        weibull_shape=shape,
        baseline_hazard=0.2,
        random_state=0,
    )
    assert data.event.dtype == bool
    assert np.all(data.y > 0)
    assert np.all(np.isfinite(data.y))
    assert data.intercept == 0.0
    assert data.noise_sd is None
    # sd of the sample fraction <= 0.0035.
    assert_allclose(1 - data.event.mean(), target, rtol=0, atol=0.015)


def test_cox_weibull_log_times():
    """Without censoring, log T = (log E - log lam0 - x'b) / k with E ~ Exp(1)."""
    k, lam0 = 2.0, 0.5
    data = make_block_data(
        20_000,
        [3, 3],
        [0.5, -0.5],
        n_noise=2,
        family="cox",
        censoring=0.0,
        weibull_shape=k,
        baseline_hazard=lam0,
        random_state=2,
    )
    assert data.event.all()
    A = np.column_stack([np.ones(20_000), data.X])
    fit = np.linalg.lstsq(A, np.log(data.y), rcond=None)[0]
    expected = [(-EULER_GAMMA - np.log(lam0)) / k, *(-data.coef / k)]
    assert_allclose(fit, expected, rtol=0, atol=0.03)


def test_cox_against_lifelines():
    """CoxPHFitter recovers the coefficients under the simulated censoring."""
    lifelines = pytest.importorskip("lifelines")
    import pandas as pd

    data = make_block_data(
        4_000,
        [2, 2],
        [0.6, -0.4],
        n_noise=1,
        family="cox",
        censoring=0.4,
        weibull_shape=1.5,
        random_state=5,
    )
    df = pd.DataFrame(data.X, columns=[f"x{j}" for j in range(5)])
    df["T"], df["E"] = data.y, data.event
    fit = lifelines.CoxPHFitter().fit(df, "T", "E")
    assert_allclose(fit.params_.to_numpy(), data.coef, rtol=0, atol=0.1)


# --------------------------------------------------------------------------- errors

BLOCK = {"n_samples": 10, "block_sizes": [2, 2], "coefs": [1.0, 0.0]}

BAD_BLOCK_ARGS = {
    "n_samples_zero": ({"n_samples": 0}, ValueError, "'n_samples' parameter"),
    "n_samples_float": ({"n_samples": 10.0}, TypeError, "'n_samples' parameter"),
    "rho_above_1": ({"rho": 1.5}, ValueError, r"'rho' parameter .* \[0.0, 1.0\]"),
    "rho_negative": ({"rho": -0.1}, ValueError, "'rho' parameter"),
    "n_noise_negative": ({"n_noise": -1}, ValueError, "'n_noise' parameter"),
    "size_zero": ({"block_sizes": [2, 0]}, ValueError, "integers >= 1"),
    "size_fraction": ({"block_sizes": [2, 1.5]}, ValueError, "must contain integers"),
    "coefs_too_short": ({"coefs": [1.0]}, ValueError, "2 blocks but coefs has 1"),
    "coefs_nan": ({"coefs": [1.0, np.nan]}, ValueError, "coefs contains NaN"),
    "groups_length": ({"corr_groups": [0]}, ValueError, "corr_groups has 1"),
    "groups_below": ({"corr_groups": [0, -2]}, ValueError, "integers >= -1"),
    "family": ({"family": "poisson"}, ValueError, "'family' parameter"),
    "snr_and_sd": ({"snr": 5.0, "noise_sd": 1.0}, ValueError, "either 'snr'"),
    "snr_zero": ({"snr": 0.0}, ValueError, "'snr' parameter"),
    "sd_negative": ({"noise_sd": -1.0}, ValueError, "'noise_sd' parameter"),
    "prevalence_gaussian": ({"prevalence": 0.3}, ValueError, "family='gaussian'"),
    "snr_binomial": (
        {"family": "binomial", "snr": 3.0},
        ValueError,
        "'snr' parameter .* does not apply to family='binomial'",
    ),
    "intercept_cox": ({"family": "cox", "intercept": 1.0}, ValueError, "'intercept'"),
    "intercept_and_prevalence": (
        {"family": "binomial", "intercept": 0.0, "prevalence": 0.2},
        ValueError,
        "either 'intercept' or 'prevalence'",
    ),
    "prevalence_one": (
        {"family": "binomial", "prevalence": 1.0},
        ValueError,
        "'prevalence' parameter",
    ),
    "censoring_one": (
        {"family": "cox", "censoring": 1.0},
        ValueError,
        "'censoring' parameter",
    ),
    "shape_zero": ({"family": "cox", "weibull_shape": 0.0}, ValueError, "'weibull"),
    "zero_signal": ({"coefs": [0.0, 0.0]}, ValueError, "pass noise_sd"),
    "return_cov": ({"return_cov": "yes"}, TypeError, "'return_cov' parameter"),
    "random_state": ({"random_state": "seed"}, TypeError, "random_state must be"),
}


@pytest.mark.parametrize(
    ("override", "error", "match"), BAD_BLOCK_ARGS.values(), ids=BAD_BLOCK_ARGS.keys()
)
def test_block_data_bad_arguments(override, error, match):
    kwargs = {**BLOCK, **override}
    with pytest.raises(error, match=match):
        make_block_data(**kwargs)


BAD_PAPER_ARGS = {
    "config_4": ({"config": 4}, ValueError, "'config' parameter"),
    "config_str": ({"config": "1"}, TypeError, "'config' parameter"),
    "rho": ({"rho": 2.0}, ValueError, "'rho' parameter"),
    "snr": ({"snr": -1.0}, ValueError, "'snr' parameter"),
    "n_samples": ({"n_samples": 0}, ValueError, "'n_samples' parameter"),
}


@pytest.mark.parametrize(
    ("kwargs", "error", "match"), BAD_PAPER_ARGS.values(), ids=BAD_PAPER_ARGS.keys()
)
def test_paper_data_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=f"{match} of make_paper_data"):
        make_paper_data(**kwargs)


def test_paper_covariance_bad_arguments():
    with pytest.raises(ValueError, match="'config' parameter of paper_covariance"):
        paper_covariance(0.6, config=0)
    with pytest.raises(ValueError, match="'rho' parameter of paper_covariance"):
        paper_covariance(-0.5, config=1)


@pytest.mark.parametrize("family", ["gaussian", "cox"])
@pytest.mark.parametrize(
    ("coef", "noise_sd"), [(1e200, None), (1.0, 1e308)], ids=["coefs", "noise"]
)
def test_an_outcome_beyond_float64_is_an_error(family, coef, noise_sd):
    """coefs whose b'Sigma b overflows gave NaN gaussian outcomes (and a
    scipy solver error for cox); a noise sd near float64's limit inf ones
    (#46 row 14)."""
    if family == "cox" and noise_sd is not None:
        pytest.skip("noise_sd is gaussian only")
    kw = {"noise_sd": noise_sd} if noise_sd else {}
    with pytest.raises(ValueError, match=r"beyond float64.*smaller"):
        make_block_data(50, [5, 5], [coef, 0.0], family=family, random_state=0, **kw)
    ok = make_block_data(50, [5, 5], [1e100, 0.0], family="gaussian", random_state=0)
    assert np.all(np.isfinite(ok.y))
