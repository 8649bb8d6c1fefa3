"""What users of statsmodels, scikit-learn, lifelines and scikit-survival expect
(issue 11): warnings at the user's line, errors that name the fix, prediction
intervals, survival predictions in scikit-survival's layout."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from vcpcr import VCPCR, VCPCRCV, SeparationWarning
from vcpcr._outcome import firth_logit


def _separated(blocks):
    X, y, _, _ = blocks
    return X, (y > np.median(y)).astype(int)


def test_separation_warning_points_at_the_users_line(blocks):
    X, ybin = _separated(blocks)
    model = VCPCR(n_clusters=4, family="binomial", lam_ratio=0.3, n_init=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.set_params(random_state=0).fit(X, ybin)
    sep = [w for w in caught if issubclass(w.category, SeparationWarning)]
    assert len(sep) == 1
    assert sep[0].filename == __file__


def test_cap_warning_points_at_the_users_line_through_cv(blocks):
    X, y, _, _ = blocks
    cv = VCPCRCV(n_clusters=(2, 9), lam_ratios=[0.3], cv=3, n_init=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cv.set_params(random_state=0).fit(X[:, :4], y)
    assert caught
    assert all(w.filename == __file__ for w in caught), [w.filename for w in caught]


def test_cv_separation_in_some_folds_is_reported_not_warned(blocks):
    """Some separated training folds are routine (Firth handles them): no
    warning, but the count is in the summary."""
    X, ybin = _separated(blocks)
    cv = VCPCRCV(
        n_clusters=(2, 4), family="binomial", lam_ratios=[0.05, 0.9], cv=3, n_init=1
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cv.set_params(random_state=0).fit(X, ybin)
    total = len(cv.cv_results_) * cv.n_splits_
    assert 0 < cv.n_separated_fits_
    cv_warned = [
        w
        for w in caught
        if issubclass(w.category, SeparationWarning) and "fold x grid" in str(w.message)
    ]
    assert bool(cv_warned) == (2 * cv.n_separated_fits_ > total)
    assert f"in {cv.n_separated_fits_} of {total} fold fits" in str(cv.summary())


def _slow_firth_data():
    """Nearly separated data with 10 small-scale latent variables, as in CV
    folds of examples/classification_liver.py: Fisher scoring needs ~150
    steps (some liver folds needed more than 200 and warned)."""
    rng = np.random.default_rng(12)
    n = 70
    M = rng.normal(size=(n, 10)) * 0.05
    s = M @ rng.normal(size=10)
    y = (s + 0.02 * rng.normal(size=n) > np.quantile(s, 0.5)).astype(float)
    return np.column_stack([np.ones(n), M]), y


def test_firth_converges_fast_and_in_standard_error_units():
    from scipy.special import expit

    X, y = _slow_firth_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        params, cov, n_iter = firth_logit(X, y)
    assert n_iter <= 40  # Newton's quadratic convergence
    # the modified score vanishes at the estimate (Heinze & Schemper's eq.)
    mu = expit(X @ params)
    w = mu * (1 - mu)
    h = np.einsum("ij,jk,ik->i", X, cov, X) * w
    score = X.T @ (y - mu + h * (0.5 - mu))
    assert np.sqrt(score @ cov @ score) < 1e-9
    assert np.max(np.abs(params)) > 10  # large coefficients: nearly separated


def test_survival_outcome_without_cox_names_the_fix(blocks):
    X, y, _, _ = blocks
    time = np.abs(y) + 1
    event = (y > 0).astype(int)
    from vcpcr import Surv

    for outcome in (np.column_stack([time, event]), Surv(time, event)):
        with pytest.raises(ValueError, match="family='cox'"):
            VCPCR().fit(X, outcome)
        with pytest.raises(ValueError, match="family='cox'"):
            VCPCRCV().fit(X, outcome)


def test_string_column_without_formula_names_the_fix(blocks_df):
    X, y, _, _ = blocks_df
    X = X.assign(strain=["a", "b", "c"] * (len(X) // 3))
    with pytest.raises(
        ValueError, match=r"non-numeric columns: \['strain'\].*formula="
    ):
        VCPCR().fit(X, y)
