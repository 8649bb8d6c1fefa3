"""The families' response math (vcpcr._solvers.distributions) against statsmodels,
and the simulator's use of it through the family registry."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose, assert_array_equal

from vcpcr import _families
from vcpcr._solvers.distributions import LOGISTIC, Normal
from vcpcr.simulate import make_block_data


def _logistic_data(seed=0, n=80):
    rng = np.random.default_rng(seed)
    X = sm.add_constant(rng.normal(size=(n, 3)))
    beta = np.array([0.3, 1.5, -2.0, 0.5])
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-X @ beta))).astype(float)
    return X, y, beta


def test_logistic_mean_and_weights_against_statsmodels_binomial_family():
    fam = sm.families.Binomial()
    eta = np.linspace(-30, 30, 61)
    mu = LOGISTIC.mean(eta)
    assert_allclose(mu, fam.link.inverse(eta), rtol=1e-12, atol=1e-300)
    assert_allclose(LOGISTIC.variance(mu), fam.variance(mu), rtol=1e-12, atol=0)


def test_logistic_loss_against_statsmodels_logit_and_glm_deviance():
    X, y, beta = _logistic_data()
    eta = X @ beta
    assert_allclose(
        LOGISTIC.log_likelihood(eta, y), sm.Logit(y, X).loglike(beta), rtol=1e-13
    )
    glm = sm.GLM(y, X, family=sm.families.Binomial())
    deviance = glm.family.deviance(y, glm.family.link.inverse(eta))
    assert_allclose(2 * y.size * LOGISTIC.loss(eta, y), deviance, rtol=1e-12)


def test_logistic_loss_stays_finite_at_extreme_eta():
    """log(1 + exp(800)) overflows a naive formula; the loss is 800 - y * 800."""
    eta, y = np.array([800.0, -800.0]), np.array([0.0, 0.0])
    assert_allclose(LOGISTIC.unit_loss(eta, y), [800.0, 0.0], rtol=1e-15, atol=0)


def test_simulator_comes_from_the_family_registry(monkeypatch):
    """A family added to FAMILIES simulates through its own distribution."""

    class Shifted(Normal):
        simulation_args = frozenset({"noise_sd"})

        def simulate(self, rng, eta, signal_var, opts):
            return super().simulate(rng, eta, signal_var, {**opts, "intercept": 5.0})

    class ShiftedGaussian(_families.Gaussian):
        name = "shifted"
        distribution = Shifted()

    monkeypatch.setitem(_families.FAMILIES, "shifted", ShiftedGaussian())
    shifted = make_block_data(
        40, [3], [1.0], family="shifted", noise_sd=1.0, random_state=0
    )
    plain = make_block_data(40, [3], [1.0], noise_sd=1.0, random_state=0)
    assert_array_equal(shifted.X, plain.X)
    assert_allclose(shifted.y - plain.y, 5.0, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"'snr' parameter .* family='shifted'"):
        make_block_data(40, [3], [1.0], family="shifted", snr=2.0, random_state=0)
