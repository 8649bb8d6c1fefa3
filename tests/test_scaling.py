"""Tests of the shared, overflow-free standardization (vcpcr._scaling)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from vcpcr._scaling import (
    constant_columns,
    raw_coefficients,
    relative_weights,
    standardize,
)
from vcpcr.benchmark import standardize_fold


def _X(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(loc=3.0, scale=[0.5, 2.0, 10.0], size=(30, 3))


def test_equals_the_textbook_formula_to_the_bit():
    X = _X()
    Xs, mean, scale = standardize(X)
    assert_array_equal(mean, X.mean(axis=0))
    assert_array_equal(scale, X.std(axis=0, ddof=1))
    assert_array_equal(Xs, (X - X.mean(axis=0)) / X.std(axis=0, ddof=1))


@pytest.mark.parametrize("factor", [1e-300, 1e-160, 1e155, 1e300])
def test_extreme_units_give_the_same_standardized_data(factor):
    X = _X(1)
    Xs, mean, scale = standardize(X * factor)
    assert np.all(np.isfinite(Xs))
    assert_allclose(Xs, standardize(X)[0], rtol=1e-12, atol=1e-12)
    assert_allclose(mean / factor, X.mean(axis=0), rtol=1e-12)
    assert_allclose(scale / factor, X.std(axis=0, ddof=1), rtol=1e-12)


def test_one_dimensional_input():
    y = np.array([1e-300, 3e-300, 2e-300])
    ys, mean, scale = standardize(y)
    assert_allclose(ys, [-1.0, 1.0, 0.0], rtol=1e-12)
    assert mean == pytest.approx(2e-300)
    assert scale == pytest.approx(1e-300)


def test_constant_columns_are_relative():
    X = _X(2)
    X[:, 1] = 7e-200
    X[:, 2] = 1e9 + 1e-4 * (np.arange(30) % 2)  # spread 1e-13 of the magnitude
    assert constant_columns(X).tolist() == [1, 2]
    assert constant_columns(X * 1e-13).tolist() == [1, 2]
    assert constant_columns(X[:, :1] * 1e-300).tolist() == []


def test_constant_columns_are_only_centred_on_request():
    X = np.column_stack([np.arange(4.0), np.full(4, 5.0)])
    Xs, mean, scale = standardize(X, center_constant=True)
    assert_array_equal(Xs[:, 1], 0.0)
    assert scale[1] == 1.0
    assert mean[1] == 5.0


def test_raw_coefficients_reproduce_the_standardized_model():
    X = _X(3) * 1e150
    Xs, mean, scale = standardize(X)
    V = np.array([[1.0, 0.0], [0.5, 0.0], [0.0, 2.0]])
    a0, a = 0.7, np.array([1.5, -0.25])
    coef, _, intercept = raw_coefficients(V, a0, a, mean, scale)
    assert_allclose(X @ coef + intercept, a0 + Xs @ V @ a, rtol=1e-10, atol=1e-10)


def test_relative_weights():
    assert_array_equal(relative_weights(np.array([2e-200, -4e-200])), [0.5, -1.0])
    assert_array_equal(relative_weights(np.zeros(3)), 0.0)


def test_benchmark_fold_standardization_uses_the_shared_function():
    X, y = _X(4), np.arange(30.0)
    tr, te = np.arange(20), np.arange(20, 30)
    fold = standardize_fold(X * 1e200, y * 1e-200, tr, te)
    ref = standardize_fold(X, y, tr, te)
    for name in ("Xtr", "ytr", "Xte", "yte"):
        assert_allclose(getattr(fold, name), getattr(ref, name), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("cx", "cy"), [(1e200, 1e-150), (1e-13, 1e300)])
def test_unrepresentable_coefficients_are_an_error(cx, cy):
    """``coef_ ~ cy / cx`` beyond float64 used to give NaN or a constant model."""
    from vcpcr import VCPCR

    X, y = _X(5), np.arange(30.0) % 7
    with pytest.raises(ValueError, match="Rescale X or y"):
        VCPCR(2, n_init=1, random_state=0).fit(X * cx, y * cy)


def test_the_extremes_of_float64():
    X = np.array([[1.7e308, 5e-324], [-1.7e308, 1e-323], [1e308, 0.0]])
    Xs, mean, scale = standardize(X)
    assert np.all(np.isfinite(Xs))
    assert_allclose(Xs[:, 0], standardize(X[:, 0] / 1e300)[0], rtol=1e-12)
    assert np.all(np.isfinite(mean))
    assert np.all(np.isfinite(scale))


def test_in_place_standardization_gives_the_same_bits():
    X = _X(2)
    Xs, mean, scale = standardize(X)
    own = X.copy()
    Xs2, mean2, scale2 = standardize(own, copy=False)
    assert np.shares_memory(Xs2, own)  # no n x p copy
    assert_array_equal(Xs2, Xs)
    assert_array_equal(mean2, mean)
    assert_array_equal(scale2, scale)
    frozen = X.copy()
    frozen.flags.writeable = False  # e.g. a joblib memmap: copied, untouched
    Xs3 = standardize(frozen, copy=False)[0]
    assert_array_equal(frozen, X)
    assert_array_equal(Xs3, Xs)
