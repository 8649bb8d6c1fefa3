"""Tests of the step-2 adapters (vcpcr._outcome) against R brglm2 / glm."""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from vcpcr import SeparationWarning
from vcpcr._outcome import detect_separation, firth_logit, fit_logit, fit_ols

REF = Path(__file__).parent / "reference"
with open(REF / "firth_logistic.json") as fh:
    FIRTH = json.load(fh)


def _load(name):
    df = pd.read_csv(REF / "data" / f"{name}.csv")
    return df[["x1", "x2"]].to_numpy(), df["y"].to_numpy(dtype=float)


@pytest.mark.reference
@pytest.mark.parametrize("name", ["firth_regular", "firth_quasi", "firth_complete"])
def test_firth_against_R_brglm2(name):
    """R: glm(y ~ x1 + x2, family = binomial, method = brglm2::brglmFit,
    type = "AS_mean") (tests/reference/firth_logistic.R)."""
    M, y = _load(name)
    X = np.column_stack([np.ones(len(y)), M])
    params, cov, _ = firth_logit(X, y)
    ref = FIRTH[name]["firth"]
    assert_allclose(params, ref["coef"], rtol=1e-11)
    assert_allclose(np.sqrt(np.diag(cov)), ref["se"], rtol=1e-11)


@pytest.mark.reference
def test_logit_against_R_glm():
    """glm(y ~ x1 + x2, family = binomial) on data without separation."""
    M, y = _load("firth_regular")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res, sep = fit_logit(M, y, names=["x1", "x2"], yname="y")
    ref = FIRTH["firth_regular"]["glm"]
    assert not sep.separated
    assert_allclose(res.params, ref["coef"], rtol=1e-8)
    assert_allclose(res.bse, ref["se"], rtol=1e-8)
    assert_allclose(res.pvalues, ref["p"], rtol=1e-7)
    assert_allclose(res.llf, ref["loglik"], rtol=1e-12)


@pytest.mark.reference
@pytest.mark.parametrize(
    ("name", "complete"), [("firth_quasi", False), ("firth_complete", True)]
)
def test_separation_falls_back_to_firth(name, complete):
    M, y = _load(name)
    with pytest.warns(SeparationWarning, match="separation.*Firth"):
        res, sep = fit_logit(M, y, names=["x1", "x2"], yname="y")
    assert sep.separated
    assert sep.complete == complete
    assert res.mle_retvals["method"] == "firth"
    ref = FIRTH[name]["firth"]
    assert_allclose(res.params, ref["coef"], rtol=1e-9)
    assert_allclose(res.bse, ref["se"], rtol=1e-9)
    assert_allclose(res.llf, ref["loglik"], rtol=1e-9)
    assert np.all(np.isfinite(res.params))
    assert np.all(np.abs(res.params) < 50)
    res.summary()  # the statsmodels API works on the Firth result
    assert_allclose(pickle.loads(pickle.dumps(res)).params, res.params)


def test_detect_separation_cases():
    M, y = _load("firth_quasi")
    X = np.column_stack([np.ones(len(y)), M])
    sep = detect_separation(X, y)
    assert sep.separated
    assert not sep.complete
    assert sep.n_perfect == 24
    assert not detect_separation(*_load_with_const("firth_regular")).separated
    assert detect_separation(*_load_with_const("firth_complete")).complete


def _load_with_const(name):
    M, y = _load(name)
    return np.column_stack([np.ones(len(y)), M]), y


def test_ols_adapter_matches_least_squares():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(30, 3))
    y = 2 + M @ [1.0, -1.0, 0.0] + rng.normal(size=30)
    res = fit_ols(M, y, names=["a", "b", "c"], yname="resp")
    # least squares and its standard errors computed here, not by statsmodels
    D = np.column_stack([np.ones(30), M])
    beta, rss = np.linalg.lstsq(D, y, rcond=None)[:2]
    bse = np.sqrt(rss[0] / (30 - 4) * np.diag(np.linalg.inv(D.T @ D)))
    assert_allclose(res.params, beta, rtol=1e-12)
    assert_allclose(res.bse, bse, rtol=1e-10)
    assert list(res.model.exog_names) == ["const", "a", "b", "c"]
    assert res.model.endog_names == "resp"
