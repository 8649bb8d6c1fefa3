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


def test_load_liver_gene_symbols():
    probes = load_liver()
    liver = load_liver(gene_symbols=True)
    names = liver.feature_names
    assert names == list(liver.data.columns)
    assert liver.probe_ids == probes.feature_names
    assert len(set(names)) == len(names)  # unique, usable as column names
    symbols = probes.annotation["geneSymbol"]
    counts = symbols.value_counts()
    for probe, name in zip(liver.probe_ids, names, strict=True):
        symbol = symbols[probe]
        if isinstance(symbol, str) and counts[symbol] == 1:
            assert name == symbol
        else:  # unknown or shared symbol: the probe ID
            assert name == probe
    assert names[1] == "Mast2"  # MMT00000046
    named = sum(n != p for n, p in zip(names, liver.probe_ids, strict=True))
    assert 0.7 * len(names) < named < len(names)
    np.testing.assert_array_equal(liver.data.to_numpy(), probes.data.to_numpy())
    X, _ = load_liver(return_X_y=True, gene_symbols=True)
    assert list(X.columns) == names
