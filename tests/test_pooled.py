"""The pooled cross-validated deviance (VCPCRCV(scoring="neg_pooled_deviance"))."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_survival, record_starts
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics import log_loss, mean_squared_error
from sklearn.model_selection import KFold

from vcpcr import VCPCR, VCPCRCV
from vcpcr._solvers.distributions import LOGISTIC, NORMAL, PROPORTIONAL_HAZARDS
from vcpcr._solvers.pooled import (
    SLOPES,
    bootstrap_counts,
    calibration_slopes,
    cross_calibrated,
    paired_se,
    pooled_bootstrap,
    pooled_deviance,
)
from vcpcr.simulate import make_block_data


def test_pooled_deviance_against_scikit_learn():
    rng = np.random.default_rng(0)
    eta = rng.normal(size=(3, 40))
    y = rng.normal(size=40)
    expected = [mean_squared_error(y, e) for e in eta]
    assert_allclose(pooled_deviance(NORMAL, eta, y), expected, rtol=1e-12)
    y01 = (rng.uniform(size=40) < 0.4).astype(float)
    expected = [2 * log_loss(y01, 1 / (1 + np.exp(-e))) for e in eta]
    assert_allclose(pooled_deviance(LOGISTIC, eta, y01), expected, rtol=1e-10)
    eta[1, 3] = np.nan  # a point not fitted somewhere has no pooled score
    assert np.isnan(pooled_deviance(NORMAL, eta, y)[1])


@needs_survival
def test_pooled_cox_deviance_is_lifelines_log_likelihood():
    """At lifelines' fitted coefficients, minus twice lifelines' (Efron) log
    partial likelihood, per row; stratified as lifelines' strata."""
    import pandas as pd
    from lifelines import CoxPHFitter

    rng = np.random.default_rng(1)
    n = 60
    x = rng.normal(size=n)
    g = rng.integers(0, 2, size=n)
    time = np.round(rng.exponential(np.exp(-0.7 * x)), 1) + 0.1  # ties
    event = rng.uniform(size=n) < 0.7
    df = pd.DataFrame({"x": x, "g": g, "time": time, "event": event})
    outcome = np.column_stack([time, event.astype(float)])
    for strata in (None, ["g"]):
        cph = CoxPHFitter().fit(
            df if strata else df.drop(columns="g"), "time", "event", strata=strata
        )
        eta = (x * cph.params_["x"])[None, :]
        dev = pooled_deviance(
            PROPORTIONAL_HAZARDS, eta, outcome, None if strata is None else g
        )
        assert_allclose(dev * n / -2.0, cph.log_likelihood_, rtol=1e-8)


def _bootstrap_by_rows(dist, eta, outcome, strata, n_boot, rng):
    """The bootstrap as first written: each resample's rows copied and scored."""
    n = eta.shape[1]
    draws = np.empty((n_boot, eta.shape[0]))
    for b in range(n_boot):
        rows = rng.integers(0, n, size=n)
        g = None if strata is None else strata[rows]
        draws[b] = pooled_deviance(dist, eta[:, rows], outcome[rows], g)
    return draws


@pytest.mark.parametrize("case", ["normal", "logistic", "cox", "cox-ties", "strata"])
def test_bootstrap_by_counts_is_the_bootstrap_of_the_rows(case):
    """Scoring a resample from its row counts equals scoring its copied rows.

    The same draws, so the same resamples; the Cox copies of an event are
    tied with it (Efron's d counts them), with tied times in the data too.
    """
    rng = np.random.default_rng(5)
    n = 60
    eta = rng.normal(size=(4, n))
    strata = rng.integers(0, 3, size=n) if case == "strata" else None
    if case == "normal":
        dist, outcome = NORMAL, rng.normal(size=n)
    elif case == "logistic":
        dist, outcome = LOGISTIC, (rng.uniform(size=n) < 0.4).astype(float)
    else:
        time = rng.exponential(size=n)
        if case != "cox":
            time = np.ceil(time * 4)  # a few distinct times, many ties
        dist = PROPORTIONAL_HAZARDS
        outcome = np.column_stack([time, rng.uniform(size=n) < 0.7])
    eta[3, 7] = np.inf  # a point with a non-finite predictor has no draws
    counts = bootstrap_counts(n, 40, np.random.default_rng(1))
    got = pooled_bootstrap(dist, eta, outcome, strata, counts)
    want = _bootstrap_by_rows(
        dist, eta[:3], outcome, strata, 40, np.random.default_rng(1)
    )
    assert_allclose(got[:, :3], want, rtol=1e-12)
    assert np.isnan(got[:, 3]).all()


def test_bootstrap_by_counts_keeps_a_wide_span_exact():
    """A predictor spanning beyond exp's range is scored in log space."""
    rng = np.random.default_rng(6)
    n = 30
    eta = rng.normal(size=(2, n))
    eta[1] *= 800.0  # risk sums below the smallest float in exp(eta - max)
    outcome = np.column_stack([rng.exponential(size=n), np.ones(n)])
    counts = bootstrap_counts(n, 10, np.random.default_rng(2))
    got = pooled_bootstrap(PROPORTIONAL_HAZARDS, eta, outcome, None, counts)
    want = _bootstrap_by_rows(
        PROPORTIONAL_HAZARDS, eta, outcome, None, 10, np.random.default_rng(2)
    )
    assert np.isfinite(got).all()
    assert_allclose(got, want, rtol=1e-10)


def test_pooled_se_is_the_bootstrap_standard_deviation():
    rng = np.random.default_rng(2)
    eta = rng.normal(size=(2, 30))
    y = rng.normal(size=30)
    counts = bootstrap_counts(30, 500, np.random.default_rng(0))
    draws = pooled_bootstrap(NORMAL, eta, y, None, counts)
    se = draws.std(axis=0, ddof=1)
    # the mean of 30 squared errors: sd / sqrt(n) of the squared errors
    sq = (y - eta) ** 2
    assert_allclose(se, sq.std(axis=1, ddof=1) / np.sqrt(30), rtol=0.15)
    # paired: the standard error of the mean difference of squared errors
    diff = paired_se(draws, 0)
    assert diff[0] == 0
    assert_allclose(diff[1], (sq[1] - sq[0]).std(ddof=1) / np.sqrt(30), rtol=0.15)


def _least_squares_slope(offset, genes, y):
    """The gaussian calibration slope in closed form, on the grid of SLOPES."""
    slope = np.clip(genes @ (y - offset) / (genes @ genes), 0.0, 1.0)
    return SLOPES[np.argmin(np.abs(SLOPES - slope))]


def test_pooled_gaussian_is_the_mse_of_cross_calibrated_fold_models(monkeypatch):
    """Gaussian, rebuilt from independent VCPCR fits of each training fold
    (from the partition the fold drew): each test fold's predictions keep
    the training mean and shrink the genes' part by the least-squares slope
    of the *other* folds' out-of-fold predictions (in [0, 1], on the grid);
    the score is minus the MSE over all rows (uneven folds: 5 folds of 63
    rows), and calibration_slope is the slope over all rows."""
    data = make_block_data(63, [4, 4], [1.0, 0.0], n_noise=12, random_state=0)
    X, y = data.X, data.y
    cv = KFold(5, shuffle=True, random_state=0)
    ratios = [0.05, 0.3, 0.9]
    starts = record_starts(monkeypatch)
    fitted = VCPCRCV(
        n_clusters=(2,),
        lam_ratios=ratios,
        deltas=[0.1],
        n_init=1,
        random_state=0,
        refit=False,
        cv=cv,
        scoring="neg_pooled_deviance",
    ).fit(X, y)
    res = fitted.cv_results_
    for i, ratio in enumerate(ratios):
        eta, genes = np.empty(y.size), np.empty(y.size)
        for (train, test), start in zip(cv.split(X), starts, strict=True):
            model = VCPCR(  # VCPCRCV's default latent variables
                n_clusters=2, delta=0.1, lam_ratio=ratio, init=start, latent="signed"
            ).fit(X[train], y[train])
            eta[test] = model.predict(X[test])
            genes[test] = (X[test] - model.mean_) @ model.coef_
        calibrated = np.empty(y.size)
        for _, test in cv.split(X):
            rest = np.setdiff1d(np.arange(y.size), test)
            offset = eta - genes
            slope = _least_squares_slope(offset[rest], genes[rest], y[rest])
            calibrated[test] = offset[test] + slope * genes[test]
        row = res.iloc[i]
        assert_allclose(row["mean_test_score"], -np.mean((y - calibrated) ** 2))
        overall = _least_squares_slope(eta - genes, genes, y)
        assert row["calibration_slope"] == overall
    assert res["calibration_slope"].iloc[0] > 0.5  # a real signal keeps its scale
    assert (res["se_test_score"] > 0).all()


def test_calibration_slopes_against_independent_fits():
    """Gaussian: the closed-form least-squares slope; binomial: statsmodels'
    logistic regression of y on the genes' part with the rest as an offset;
    cox: scipy's minimum of minus lifelines' partial likelihood. Each is the
    nearest slope of the grid (the losses are smooth near their minimum)."""
    import statsmodels.api as sm
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(3)
    n = 200
    genes = rng.normal(size=(2, n))
    offset = 0.3 * rng.normal(size=(2, n))
    lin = offset + np.array([[0.4], [0.8]]) * genes
    y = lin + rng.normal(size=(2, n))
    for k in range(2):
        got = calibration_slopes(NORMAL, offset[[k]], genes[[k]], y[k])
        assert got[0] == _least_squares_slope(offset[k], genes[k], y[k])
    y01 = (rng.uniform(size=n) < 1 / (1 + np.exp(-lin[1]))).astype(float)
    fit = sm.GLM(y01, genes[1], family=sm.families.Binomial(), offset=offset[1]).fit()
    got = calibration_slopes(LOGISTIC, offset[[1]], genes[[1]], y01)
    assert abs(got[0] - fit.params[0]) <= 0.01 + 1e-12
    time = rng.exponential(np.exp(-lin[0]))
    outcome = np.column_stack([time, (rng.uniform(size=n) < 0.8).astype(float)])

    def loss(g):
        return pooled_deviance(
            PROPORTIONAL_HAZARDS, offset[[0]] + g * genes[[0]], outcome
        )[0]

    best = minimize_scalar(loss, bounds=(0, 1), method="bounded").x
    got = calibration_slopes(PROPORTIONAL_HAZARDS, offset[[0]], genes[[0]], outcome)
    assert abs(got[0] - best) <= 0.01 + 1e-9
    # a point without genes: slope 0, its deviance untouched
    zero = calibration_slopes(NORMAL, offset[[0]], 0 * genes[[0]], y[0])
    assert zero[0] == 0.0


def _grid_argmin_slopes(distribution, offset, clustered, outcome, strata=None):
    """The slope of least deviance by scoring every slope of the grid."""
    dev = np.stack(
        [
            pooled_deviance(distribution, offset + g * clustered, outcome, strata)
            for g in SLOPES
        ]
    )
    out = np.full(offset.shape[0], np.nan)
    finite = np.all(np.isfinite(dev), axis=0)
    out[finite] = SLOPES[np.argmin(dev[:, finite], axis=0)]
    return out


@pytest.mark.parametrize("family", ["gaussian", "binomial", "cox", "cox-strata"])
def test_calibration_slopes_bisection_is_the_grids_argmin(family):
    """The bisection on the convex deviance returns exactly the slope the
    exhaustive grid search gives, on points whose best slope is anywhere on
    the grid: at 0 (noise, or no cluster at all), inside, and at 1 (a
    cluster part that should be enlarged); tied times and strata included;
    a point with a non-finite predictor gets NaN as before."""
    rng = np.random.default_rng(11)
    n, m = 150, 40
    genes = rng.normal(size=(m, n))
    signal = rng.normal(size=n)
    true = np.linspace(-0.5, 2.0, m)[:, None]  # best slopes below 0 and above 1
    clustered = 0.7 * signal + 0.5 * genes
    clustered[0] = 0.0  # no cluster
    offset = np.tile(0.2 * rng.normal(size=n), (m, 1))
    lin = offset[0] + true[m // 2, 0] * signal
    strata = None
    if family == "gaussian":
        dist, outcome = NORMAL, lin + rng.normal(size=n)
        clustered = clustered * true  # each point its own best slope
    elif family == "binomial":
        dist = LOGISTIC
        outcome = (rng.uniform(size=n) < 1 / (1 + np.exp(-lin))).astype(float)
        clustered = clustered * true
    else:
        dist = PROPORTIONAL_HAZARDS
        time = np.round(rng.exponential(np.exp(-lin)), 1) + 0.1  # ties
        outcome = np.column_stack([time, (rng.uniform(size=n) < 0.7).astype(float)])
        clustered = clustered * true
        if family == "cox-strata":
            strata = rng.integers(0, 3, size=n)
    clustered[3, 5] = np.nan
    got = calibration_slopes(dist, offset, clustered, outcome, strata)
    want = _grid_argmin_slopes(dist, offset, clustered, outcome, strata)
    assert_allclose(got, want, rtol=0, atol=0)
    assert np.isnan(got[3])
    assert got[0] == 0.0
    assert ((got > 0) & (got < 1)).sum() >= 5
    assert (got == 0).sum() >= 2
    assert (got == 1).sum() >= 2


def test_cross_calibration_never_uses_a_folds_own_rows():
    """Fold 0's rows follow y = 5 * genes, the others y = 0.5 * genes: fold 0
    is shrunk by the others' slope (0.5), the others by a slope that fold 0
    pulls up; changing fold 0's outcome changes every slope but its own."""
    rng = np.random.default_rng(4)
    genes = rng.normal(size=(1, 50))
    folds = [(None, np.arange(10)), (None, np.arange(10, 50))]
    y = 0.5 * genes[0]
    y[:10] = 5 * genes[0, :10]
    calibrated, slope = cross_calibrated(NORMAL, genes, genes, y, None, folds)
    assert_allclose(calibrated[0, :10], 0.5 * genes[0, :10])
    y2 = y.copy()
    y2[:10] = -y2[:10]
    calibrated2, _ = cross_calibrated(NORMAL, genes, genes, y2, None, folds)
    assert_allclose(calibrated2[0, :10], calibrated[0, :10])
    assert not np.allclose(calibrated2[0, 10:], calibrated[0, 10:])
    assert 0.5 < slope[0] <= 1.0


@needs_survival
@pytest.mark.parametrize("family", ["gaussian", "binomial", "cox"])
def test_pooled_one_se_rule_chooses_the_empty_model_on_noise(family):
    """Global null (y independent of block-correlated X): the pooled deviance
    with the 1-SE rule chooses lam_ratio = 1, no gene, within one bootstrap
    standard error of the best point; the refit says so without warning."""
    data = (
        make_block_data(
            80, [10] * 6, [0.0] * 6, family=family, random_state=3, noise_sd=1.0
        )
        if family == "gaussian"
        else make_block_data(80, [10] * 6, [0.0] * 6, family=family, random_state=3)
    )
    y = np.column_stack([data.y, data.event]) if family == "cox" else data.y
    kw = {"family": family, "n_clusters": (3,), "n_init": 2, "random_state": 0}
    chosen = VCPCRCV(scoring="neg_pooled_deviance", selection="1se", **kw).fit(
        data.X, y
    )
    assert chosen.best_params_["lam_ratio"] == 1.0
    assert np.count_nonzero(chosen.best_estimator_.coef_) == 0
    assert "chose a model without clusters" in str(chosen.summary())
    res = chosen.cv_results_
    best = res["mean_test_score"].idxmax()
    within = res.loc[best, "mean_test_score"] - res.loc[best, "se_test_score"]
    assert res.loc[chosen.best_index_, "mean_test_score"] >= within


def test_pooled_gaussian_is_equivariant_in_the_scale_of_y():
    """As the default scoring: y * 2**-700 ranks the grid as y does (the folds
    see y on a unit scale), and the scores are in y's units."""
    data = make_block_data(60, [4, 4], [1.0, 0.0], n_noise=12, random_state=1)
    kw = {"n_clusters": (2,), "n_init": 2, "random_state": 0, "refit": False}
    kw |= {"scoring": "neg_pooled_deviance", "selection": "1se"}
    a = VCPCRCV(**kw).fit(data.X, data.y)
    tiny = VCPCRCV(**kw).fit(data.X, np.ldexp(data.y, -700))  # squares underflow
    assert tiny.best_index_ == a.best_index_
    small = VCPCRCV(**kw).fit(data.X, np.ldexp(data.y, -500))
    for column in ("mean_test_score", "se_test_score", "se_diff_test_score"):
        assert_allclose(
            np.ldexp(a.cv_results_[column], -1000),
            small.cv_results_[column],
            rtol=1e-9,
        )


def _enet_path(alphas):
    """scikit-learn's elastic-net path at fixed penalties, with its intercepts."""
    from sklearn.linear_model import enet_path

    def fit_path(X, y):
        xm, ym = X.mean(axis=0), y.mean()
        coef = enet_path(X - xm, y - ym, l1_ratio=0.5, alphas=alphas)[1].T
        return coef, ym - coef @ xm

    return fit_path


def test_peer_curve_is_the_cross_calibrated_pooled_mse_of_the_peers_path():
    """A peer's path on the CV's folds: each fold's predictions keep the
    training mean and shrink the centred part by the other folds'
    least-squares slope, as the grid's; an all-zero path scores exactly as
    the grid's empty model (the training mean)."""
    data = make_block_data(63, [4, 4], [1.0, 0.0], n_noise=12, random_state=0)
    X, y = data.X, data.y
    cv = VCPCRCV(
        n_clusters=(2,),
        n_init=2,
        random_state=0,
        refit=False,
        scoring="neg_pooled_deviance",
        cv=KFold(5, shuffle=True, random_state=1),
    ).fit(X, y)
    alphas = np.array([1.0, 0.3, 0.1, 0.03])
    curve = cv.peer_curve(_enet_path(alphas), X, y)
    fit_path = _enet_path(alphas)
    eta, centred = np.empty((4, y.size)), np.empty((4, y.size))
    sizes = []
    for train, test in cv.folds_:
        coef, b0 = fit_path(X[train], y[train])
        eta[:, test] = coef @ X[test].T + b0[:, None]
        centred[:, test] = coef @ (X[test] - X[train].mean(axis=0)).T
        sizes.append(np.count_nonzero(coef, axis=1))
    for k in range(4):
        calibrated = np.empty(y.size)
        for _, test in cv.folds_:
            rest = np.setdiff1d(np.arange(y.size), test)
            offset = eta[k] - centred[k]
            slope = _least_squares_slope(offset[rest], centred[k, rest], y[rest])
            calibrated[test] = offset[test] + slope * centred[k, test]
        assert_allclose(curve["mean_test_score"][k], -np.mean((y - calibrated) ** 2))
    assert_allclose(curve["mean_size"], np.mean(sizes, axis=0))
    assert curve["mean_size"].iloc[-1] > curve["mean_size"].iloc[0]

    def zeros(Xt, yt):
        return np.zeros((1, Xt.shape[1])), np.array([yt.mean()])

    empty = cv.cv_results_.loc[cv.cv_results_["mean_size"] == 0, "mean_test_score"]
    assert_allclose(cv.peer_curve(zeros, X, y)["mean_test_score"], empty.iloc[0])


def test_peer_curve_errors():
    data = make_block_data(40, [4, 4], [1.0, 0.0], n_noise=4, random_state=0)
    X, y = data.X, data.y
    kw = {"n_clusters": (2,), "n_init": 1, "random_state": 0, "refit": False}
    fold_averaged = VCPCRCV(scoring=None, **kw).fit(X, y)
    with pytest.raises(ValueError, match="scored by the pooled deviance"):
        fold_averaged.peer_curve(_enet_path([0.1]), X, y)
    cv = VCPCRCV(scoring="neg_pooled_deviance", **kw).fit(X, y)
    with pytest.raises(ValueError, match="X has 39 rows but the CV's folds cover 40"):
        cv.peer_curve(_enet_path([0.1]), X[:-1], y[:-1])
    calls = iter(range(10))

    def ragged(Xt, yt):  # a path of another length in the second fold
        return np.zeros((1 + (next(calls) == 1), Xt.shape[1]))

    with pytest.raises(ValueError, match=r"shape \(2, 12\) .* in fold 1"):
        cv.peer_curve(ragged, X, y)


@needs_survival
def test_shrinkage_scales_the_genes_part_and_refits_breslows_baseline():
    """VCPCR(shrinkage=g): the genes' coefficients times g, the covariates'
    and the step-2 fit untouched; the survival functions are those of
    scikit-survival's Breslow estimator fitted on the shrunk training linear
    predictors; shrinkage=1 is lifelines' own baseline."""
    from lifelines import CoxPHFitter
    from sksurv.linear_model.coxph import BreslowEstimator

    data = make_block_data(
        90, [5, 5], [0.8, 0.0], n_noise=10, family="cox", random_state=2
    )
    rng = np.random.default_rng(0)
    age = rng.normal(60, 8, size=90)
    X = np.column_stack([age, data.X])
    y = np.column_stack([data.y, data.event])
    kw = {"family": "cox", "n_clusters": 2, "lam_ratio": 0.2, "random_state": 0}
    full = VCPCR(covariates=[0], **kw).fit(X, y)
    half = VCPCR(covariates=[0], shrinkage=0.5, **kw).fit(X, y)
    assert_allclose(half.coef_[1:], 0.5 * full.coef_[1:])
    assert_allclose(half.coef_[0], full.coef_[0])
    assert_allclose(half.result_.params_, full.result_.params_)
    breslow = BreslowEstimator().fit(
        half.predict_log_partial_hazard(X), data.event == 1, data.y
    )
    times = np.quantile(data.y, [0.2, 0.5, 0.8])
    expected = np.vstack(
        [
            f(times)
            for f in breslow.get_survival_function(
                half.predict_log_partial_hazard(X[:5])
            )
        ]
    )
    assert_allclose(half.predict_survival_function(X[:5], True, times=times), expected)
    assert isinstance(full.result_, CoxPHFitter)
    knots = full.unique_times_[[10, 40, 70]]  # lifelines interpolates between
    lifelines = full.result_.predict_survival_function(
        full.outcome_design(X[:5]), times=knots
    )
    assert_allclose(
        full.predict_survival_function(X[:5], True, times=knots), lifelines.T
    )
    assert_allclose(
        full.predict_median(X[:5]),
        full.result_.predict_median(full.outcome_design(X[:5])),
    )
    with pytest.raises(ValueError, match="'shrinkage' parameter of VCPCR"):
        VCPCR(shrinkage=1.5).fit(data.X, data.y)


def test_pooled_refit_uses_the_chosen_points_calibration_slope():
    """The refit of a pooled CV predicts with the chosen point's calibration
    slope (binomial: a logistic step 2 on supervised latent variables is
    over-confident); statsmodels' intervals of the unshrunk fit are refused;
    any other scoring refits unshrunk."""
    data = make_block_data(
        80, [4, 4], [1.0, 0.0], n_noise=30, family="binomial", random_state=1
    )
    kw = {"family": "binomial", "n_clusters": (2,), "n_init": 2, "random_state": 0}
    cv = VCPCRCV(scoring="neg_pooled_deviance", **kw).fit(data.X, data.y)
    slope = cv.cv_results_["calibration_slope"].iloc[cv.best_index_]
    assert cv.shrinkage_ == slope == cv.best_estimator_.shrinkage
    assert 0 < slope < 1
    assert cv.best_params_["shrinkage"] == slope
    refit = VCPCR(**cv.best_params_).fit(data.X, data.y)
    assert_allclose(cv.predict_proba(data.X), refit.predict_proba(data.X))
    unshrunk = VCPCR(**{**cv.best_params_, "shrinkage": 1.0}).fit(data.X, data.y)

    def genes(model):  # the genes' part, centred at the training means
        return (data.X - model.mean_) @ model.coef_

    assert_allclose(genes(cv.best_estimator_), slope * genes(unshrunk))
    assert_allclose(  # the intercept (statsmodels' const) is kept
        cv.decision_function(data.X) - genes(cv.best_estimator_),
        unshrunk.decision_function(data.X) - genes(unshrunk),
    )
    with pytest.raises(ValueError, match="shrunk"):
        cv.get_prediction(data.X)
    assert VCPCRCV(scoring=None, **kw).fit(data.X, data.y).shrinkage_ == 1.0


def test_summary_says_the_predictions_are_shrunk():
    data = make_block_data(60, [4, 4], [1.0, 0.0], n_noise=12, random_state=1)
    kw = {"n_clusters": 2, "lam_ratio": 0.2, "random_state": 0}
    text = str(VCPCR(shrinkage=0.4, **kw).fit(data.X, data.y).summary())
    assert "shrinkage=0.4 (a calibration slope)" in text
    assert "shrinkage" not in str(VCPCR(**kw).fit(data.X, data.y).summary())
    # a model without clusters has nothing to shrink (the default on noise)
    empty = VCPCR(shrinkage=0.4, **{**kw, "lam_ratio": 1.0})
    with pytest.warns(UserWarning, match="No feature was selected"):
        empty.fit(data.X, data.y)
    assert "shrinkage" not in str(empty.summary())


@pytest.mark.parametrize("case", ["normal", "cox-strata"])
def test_pooled_criterion_in_tasks_is_the_criterion_of_all_points(case):
    """``PooledPredictors.pool`` scores the points in tasks of POINTS_PER_TASK:
    each point's slope, deviance and draws are those of all points scored at
    once, and two workers give exactly what one gives."""
    from vcpcr._criterion import POINTS_PER_TASK, PooledPredictors
    from vcpcr._parallel import task_seeds
    from vcpcr._solvers.pooled import N_BOOT, pooled_scores

    rng = np.random.default_rng(7)
    n, points = 90, 2 * POINTS_PER_TASK + 7  # three tasks, the last one short
    clustered = rng.normal(size=(points, n)) * rng.uniform(0, 2, size=(points, 1))
    offset = rng.normal(size=(1, n)) * 0.3
    strata = None
    if case == "normal":
        dist, outcome = NORMAL, rng.normal(size=n)
    else:
        dist, strata = PROPORTIONAL_HAZARDS, rng.integers(0, 2, size=n)
        time = np.ceil(rng.exponential(size=n) * 6)  # ties
        outcome = np.column_stack([time, rng.uniform(size=n) < 0.7])
    eta = offset + clustered
    folds = list(KFold(3, shuffle=True, random_state=0).split(eta.T))
    counts = bootstrap_counts(n, N_BOOT, np.random.default_rng(task_seeds(3, 1)[0]))
    whole = pooled_scores(dist, eta, clustered, outcome, strata, folds, counts)
    one = PooledPredictors(dist, outcome, strata, 3, n_jobs=1).pool(
        eta, clustered, folds
    )
    two = PooledPredictors(dist, outcome, strata, 3, n_jobs=2).pool(
        eta, clustered, folds
    )
    for got, want in zip(one, whole, strict=True):
        assert_allclose(got, want, rtol=1e-13, atol=0)
    assert np.unique(one.slopes).size > 5  # the points differ
    for a, b in zip(one, two, strict=True):
        assert_array_equal(a, b)
