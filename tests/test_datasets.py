"""Tests of the packaged data sets."""

from __future__ import annotations

import numpy as np
import pytest

from vcpcr.datasets import load_liver


def test_load_liver_bunch():
    liver = load_liver()
    assert liver.data.shape == (131, 2785)
    assert liver.target.shape == (131,)
    assert liver.frame.shape == (131, 2788)
    assert liver.feature_names == list(liver.data.columns)
    assert liver.feature_names[0] == "MMT00000044"
    assert "F2_221" not in liver.data.index  # the paper's outlier is removed
    assert np.isfinite(liver.data.to_numpy()).all()
    assert liver.target.mean() == pytest.approx(3.730, abs=5e-4)
    assert liver.target.std() == pytest.approx(0.539, abs=5e-4)
    ratio = liver.frame["weight_g"] / liver.frame["length_cm"]
    np.testing.assert_allclose(ratio, liver.target, rtol=1e-15)
    assert list(liver.annotation.index) == liver.feature_names
    assert liver.annotation.loc["MMT00000046", "geneSymbol"] == "Mast2"
    assert "Ghazalpour" in liver.DESCR


def test_load_liver_return_X_y():
    X, y = load_liver(return_X_y=True)
    assert X.shape == (131, 2785)
    assert y.name == "weight_per_length"
