"""The models VCPCRCV scores in its folds are whole VCPCRs (#20 item 1, #17 item 3).

A callable scorer may call any public method of the fold model. Each check
refits the same grid point independently, as a ``VCPCR`` started from the
partition the fold drew (recorded by wrapping the draw), and compares the
scores.
"""

from __future__ import annotations

import numpy as np
from conftest import make_blocks, needs_survival, record_starts
from numpy.testing import assert_allclose
from sklearn.model_selection import KFold

from vcpcr import VCPCR, VCPCRCV

KF = KFold(3, shuffle=True, random_state=4)


def _independent_scores(X, y, scorer, starts, **params):
    """The scorer on a VCPCR fitted on each training fold from its start."""
    return np.array(
        [
            scorer(
                VCPCR(init=start, **params).fit(X[train], y[train]), X[test], y[test]
            )
            for (train, test), start in zip(KF.split(X), starts, strict=True)
        ]
    )


def _cox_problem():
    X, lin, _, _ = make_blocks(n=90, seed=3)
    rng = np.random.default_rng(5)
    t = rng.exponential(np.exp(-0.5 * (lin - lin.mean())))
    c = rng.exponential(2 * np.median(t), size=t.size)
    return X, np.column_stack([np.minimum(t, c), (t <= c).astype(float)])


@needs_survival
def test_callable_scorer_may_call_survival_methods_and_transform(monkeypatch):
    """The fold model has mean_, membership_, result_, unique_times_ ..."""
    X, y = _cox_problem()
    times = np.quantile(y[:, 0], [0.2, 0.4, 0.6])

    def scorer(est, Xte, yte):
        surv = est.predict_survival_function(Xte, return_array=True, times=times)
        latent = est.transform(Xte)
        assert latent.shape == (Xte.shape[0], est.n_clusters_)
        median = est.predict_median(Xte)
        return float(surv.mean() + latent.std() + np.isfinite(median).mean())

    drawn = record_starts(monkeypatch)
    # VCPCRCV's default latent variables, which its fold models use too
    params = {"family": "cox", "weights": "ridge", "n_clusters": 3, "latent": "signed"}
    cv = VCPCRCV(
        **params,
        deltas=[0.1],
        lam_ratios=[0.2],
        n_init=1,
        cv=KF,
        scoring=scorer,
        refit=False,
        random_state=0,
    ).fit(X, y)
    got = cv.cv_results_[[f"split{i}_test_score" for i in range(3)]].to_numpy()[0]
    want = _independent_scores(
        X, y, scorer, drawn, delta=0.1, lam_ratio=0.2, n_init=1, **params
    )
    assert_allclose(got, want, rtol=1e-8)


def test_callable_scorer_may_call_get_prediction(monkeypatch):
    """Gaussian fold models carry statsmodels' results (prediction intervals)."""
    X, y, _, _ = make_blocks(n=75, seed=2)

    def coverage(est, Xte, yte):
        frame = est.get_prediction(Xte).summary_frame(alpha=0.1)
        inside = (frame["obs_ci_lower"] <= yte) & (yte <= frame["obs_ci_upper"])
        return float(np.mean(inside) - np.mean(frame["mean_se"]))

    drawn = record_starts(monkeypatch)
    cv = VCPCRCV(
        n_clusters=2,
        weights="ridge",
        deltas=[0.01],
        lam_ratios=[0.3],
        n_init=1,
        cv=KF,
        scoring=coverage,
        refit=False,
        random_state=1,
    ).fit(X, y)
    got = cv.cv_results_[[f"split{i}_test_score" for i in range(3)]].to_numpy()[0]
    want = _independent_scores(
        X,
        y,
        coverage,
        drawn,
        n_clusters=2,
        weights="ridge",
        delta=0.01,
        lam_ratio=0.3,
        n_init=1,
    )
    assert_allclose(got, want, rtol=1e-8)


def test_fold_model_has_the_grid_point_parameters():
    """A fold model is a fitted VCPCR with the point's K, delta and lam_ratio."""
    X, y, _, _ = make_blocks(n=60, seed=0)
    seen = []

    def scorer(est, Xte, yte):
        seen.append((est.get_params(), est.weights_.shape, est.clusters_))
        return 0.0

    VCPCRCV(
        n_clusters=(2, 3),
        weights="ridge",
        deltas=[0.01, 1.0],
        lam_ratios=[0.3],
        n_init=1,
        cv=KF,
        scoring=scorer,
        refit=False,
        random_state=0,
    ).fit(X, y)
    points = [(p["n_clusters"], p["delta"], p["lam_ratio"]) for p, _, _ in seen]
    assert points == 3 * [(2, 0.01, 0.3), (2, 1.0, 0.3), (3, 0.01, 0.3), (3, 1.0, 0.3)]
    assert all(p["weights"] == "ridge" for p, _, _ in seen)
    assert all(shape == (X.shape[1],) for _, shape, _ in seen)


def test_fold_model_keeps_the_users_column_order(monkeypatch):
    """With covariates among the features (not first), a fold model's coef_ is
    in the user's column order, as best_estimator_.coef_ is: the coef_ of a
    VCPCR(covariates=...) fitted on the training fold from the same start, and
    its predictions on the test fold's rows, as the user passed them."""
    X, y, _, _ = make_blocks(n=75, seed=1)
    X = X.copy()
    X[:, 5] = np.random.default_rng(7).normal(size=X.shape[0])  # a covariate
    X[:, 11] = np.random.default_rng(8).integers(0, 2, X.shape[0])  # a binary one
    seen = []

    def scorer(est, Xte, yte):
        seen.append(est.coef_.copy())
        return -float(np.mean((est.predict(Xte) - yte) ** 2))

    drawn = record_starts(monkeypatch)
    params = {"n_clusters": 2, "weights": "ridge", "n_init": 1, "covariates": [5, 11]}
    cv = VCPCRCV(
        **params,
        deltas=[0.01],
        lam_ratios=[0.3],
        cv=KF,
        scoring=scorer,
        random_state=1,
    ).fit(X, y)
    folds = list(KF.split(X))
    independent = [
        VCPCR(init=start, delta=0.01, lam_ratio=0.3, **params).fit(X[train], y[train])
        for (train, _), start in zip(folds, drawn, strict=True)
    ]
    for coef, model in zip(seen, independent, strict=True):
        assert_allclose(coef, model.coef_, rtol=1e-8, atol=1e-12)
        assert np.all(coef[[5, 11]] != 0)  # the covariates, where the user has them
    got = cv.cv_results_[[f"split{i}_test_score" for i in range(3)]].to_numpy()[0]
    want = [
        scorer(model, X[test], y[test])
        for model, (_, test) in zip(independent, folds, strict=True)
    ]
    assert_allclose(got, want, rtol=1e-8)
    assert cv.best_estimator_.covariate_columns_.tolist() == [5, 11]
