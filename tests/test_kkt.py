"""The weights paths' optimality: relative KKT violations, checked independently.

The reference optimality conditions are computed here from a Breslow loss
written out risk set by risk set (no vcpcr code), checked with scipy's
``check_grad``; the reference Cox elastic net is scikit-survival's Coxnet at
``tol=1e-12`` through its public API.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import check_grad
from scipy.special import expit

from vcpcr._solvers.kkt import KKT_TOL, relative_kkt
from vcpcr._weights import lasso_delta_max
from vcpcr.exceptions import ConvergenceWarning


def _breslow(eta, time, event):
    """Mean negative Breslow log partial likelihood and its gradient, by loops."""
    n = eta.size
    loss, grad = 0.0, np.zeros(n)
    for i in np.flatnonzero(event):
        at_risk = time >= time[i]
        r = np.exp(eta[at_risk])
        loss -= eta[i] - np.log(r.sum())
        grad[i] -= 1.0
        grad[at_risk] += r / r.sum()
    return loss / n, grad / n


def _kkt(grad_eta, X, w, delta, a):
    """The relative KKT violation, written out coordinate by coordinate."""
    worst = 0.0
    for j in range(w.size):
        g = X[:, j] @ grad_eta + (1 - a) * delta * w[j]
        if w[j] != 0:
            worst = max(worst, abs(g + a * delta * np.sign(w[j])))
        else:
            worst = max(worst, abs(g) - a * delta)
    return worst / delta


def _cox_data(seed, n=60, p=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    time = rng.exponential(np.exp(-X[:, :4] @ np.array([1.0, -1.0, 0.5, 0.5])))
    time = np.round(time, 2) + 0.01  # some ties
    event = rng.uniform(size=n) < 0.75
    return X, time, event


def test_reference_breslow_gradient_is_the_loss_gradient():
    X, time, event = _cox_data(0, n=30, p=5)
    eta = X @ np.linspace(-0.5, 0.5, 5)
    err = check_grad(
        lambda e: _breslow(e, time, event)[0],
        lambda e: _breslow(e, time, event)[1],
        eta,
    )
    assert err < 1e-6


def test_relative_kkt_is_zero_at_a_known_optimum_and_positive_off_it():
    """1-d lasso with an identity design: ``w = soft(b, a delta) / (1 + l2)``."""
    b, delta, a = np.array([2.0, 0.01, -1.0]), 0.5, 0.4
    w = np.sign(b) * np.maximum(np.abs(b) - a * delta, 0) / (1 + (1 - a) * delta)
    assert relative_kkt(w - b, w, delta, a) == pytest.approx(0.0, abs=1e-15)
    off = w + np.array([0.1, 0.0, 0.0])
    # the loss and l2 gradients both move by 0.1 per unit: 0.1 (1 + l2) / delta
    assert relative_kkt(off - b, off, delta, a) == pytest.approx(
        0.1 * (1 + (1 - a) * delta) / delta
    )


# The lasso stops higher: near saturation (n=60) coordinate descent needs
# more than max_iter passes below 0.1 delta_max (and then warns).
@pytest.mark.parametrize(
    ("l1_ratio", "fractions"),
    [(0.05, [0.5, 0.1, 0.02]), (0.5, [0.5, 0.1, 0.02]), (1.0, [0.5, 0.2, 0.1])],
    ids=["enet05", "enet5", "lasso"],
)
def test_cox_path_reaches_the_optimum_against_coxnet_tol_1e12(l1_ratio, fractions):
    """Each delta's weights meet KKT_TOL by the reference conditions, report
    that violation, and reach the objective of Coxnet run to tol=1e-12."""
    pytest.importorskip("sksurv")
    from sksurv.linear_model import CoxnetSurvivalAnalysis
    from sksurv.util import Surv

    from vcpcr._solvers.cox import cox_lasso_path

    X, time, event = _cox_data(1)
    y = np.column_stack([time, event])
    deltas = lasso_delta_max(X, y, "cox", l1_ratio) * np.array(fractions)
    path = cox_lasso_path(X, time, event, deltas, l1_ratio=l1_ratio, return_kkt=True)
    ref = CoxnetSurvivalAnalysis(
        alphas=deltas * 10 ** np.linspace(0, -1e-9, 3),  # decreasing, as given
        l1_ratio=l1_ratio,
        normalize=False,
        tol=1e-12,
        max_iter=1_000_000,
        fit_baseline_model=False,
    ).fit(X, Surv.from_arrays(event, time))
    for i, delta in enumerate(deltas):
        w, wr = path.coef[i], ref.coef_[:, i]
        loss, grad = _breslow(X @ w, time, event)
        loss_r, _ = _breslow(X @ wr, time, event)
        kkt = _kkt(grad, X, w, delta, l1_ratio)
        assert kkt <= KKT_TOL
        assert_allclose(path.kkt[i], kkt, rtol=1e-6, atol=1e-12)

        pen, pen_r = (
            delta * (l1_ratio * np.abs(v).sum() + (1 - l1_ratio) / 2 * v @ v)
            for v in (w, wr)
        )
        assert loss + pen <= (loss_r + pen_r) * (1 + 1e-9)


def test_cox_default_path_is_polished_far_below_coxnets_stop(monkeypatch):
    """At the default mixing (0.05) and the grid's smallest delta, Coxnet at
    its default tol stops at a violation above KKT_TOL on these data (0.025);
    the returned weights meet POLISH_KKT by the reference conditions."""
    pytest.importorskip("sksurv")
    from vcpcr._solvers import cox

    X, time, event = _cox_data(2, n=80, p=400)
    y = np.column_stack([time, event])
    delta = 0.01 * lasso_delta_max(X, y, "cox", 0.05)
    path = cox.cox_lasso_path(X, time, event, [delta], l1_ratio=0.05, return_kkt=True)
    w = path.coef[0]
    assert _kkt(_breslow(X @ w, time, event)[1], X, w, delta, 0.05) <= cox.POLISH_KKT
    monkeypatch.setattr(cox, "MAX_POLISH", 0)
    with pytest.warns(ConvergenceWarning, match="at most 0 semismooth"):
        raw = cox.cox_lasso_path(
            X, time, event, [delta], l1_ratio=0.05, return_kkt=True
        )
    w = raw.coef[0]
    assert _kkt(_breslow(X @ w, time, event)[1], X, w, delta, 0.05) > KKT_TOL


def test_cox_enet_warns_with_the_numbers_when_the_tolerance_is_not_reached(
    monkeypatch,
):
    """No polish step allowed and a loose Coxnet tol: the ConvergenceWarning
    names KKT_TOL and each failing delta's violation."""
    pytest.importorskip("sksurv")
    from vcpcr._solvers import cox

    monkeypatch.setattr(cox, "MAX_POLISH", 0)
    X, time, event = _cox_data(2, n=80, p=400)
    y = np.column_stack([time, event])
    delta = 0.01 * lasso_delta_max(X, y, "cox", 0.05)
    with pytest.warns(
        ConvergenceWarning,
        match=r"relative KKT violation <= 0\.001 \(coordinate descent to tol=0\.01, "
        r"then at most 0 semismooth Newton steps\): [\d.e+-]+ at delta=",
    ) as record:
        path = cox.cox_lasso_path(
            X, time, event, [delta], l1_ratio=0.05, tol=1e-2, return_kkt=True
        )
    assert path.kkt[0] > KKT_TOL
    assert f"{path.kkt[0]:.3g} at delta={delta:.4g}" in str(record[0].message)


@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_enet_paths_report_the_reference_kkt_and_warn_above_the_tolerance(family):
    """glm paths: the reported violation is the reference one (the loss'
    gradient written out here); a loose tol that the solver meets but the KKT
    rule does not gives the ConvergenceWarning with the numbers."""
    from vcpcr._solvers.enet import enet_binomial_path, enet_gaussian_path

    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 120))
    X = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    eta = X[:, :3] @ np.array([1.0, -1.0, 0.5])
    if family == "gaussian":
        y = eta + rng.normal(size=50)
    else:
        y = (rng.uniform(size=50) < expit(eta)).astype(float)
    deltas = lasso_delta_max(X, y, family, 0.05) * np.array([0.3, 0.03])

    def run(**kw):
        if family == "gaussian":
            return enet_gaussian_path(X, y, deltas, 0.05, return_kkt=True, **kw), None
        return enet_binomial_path(X, y, deltas, 0.05, return_kkt=True, **kw)

    path, b0 = run()
    for i, delta in enumerate(deltas):
        w = path.coef[i]
        if family == "gaussian":
            grad = (X @ w - (y - y.mean())) / y.size
        else:
            grad = (expit(b0[i] + X @ w) - y) / y.size
        ref = _kkt(grad, X, w, delta, 0.05)
        assert ref <= KKT_TOL
        assert_allclose(path.kkt[i], ref, rtol=1e-6, atol=1e-12)
    with pytest.warns(ConvergenceWarning, match=r"KKT violation <= 0\.001 .*: [\d.]"):
        loose, _ = run(tol=0.5)
    assert np.max(loose.kkt) > KKT_TOL


@pytest.mark.parametrize("family", ["gaussian", "binomial", "cox"])
def test_ridge_paths_report_rounding_level_kkt(family):
    from vcpcr._families import family_instance

    if family == "cox":
        pytest.importorskip("sksurv")
        X, time, event = _cox_data(4, n=40, p=90)
        target = np.column_stack([time, event.astype(float)])
    else:
        rng = np.random.default_rng(4)
        X = rng.normal(size=(40, 90))
        target = X[:, 0] + rng.normal(size=40)
        if family == "binomial":
            target = (target > 0).astype(float)
    path = family_instance(family, owner="test").loss.penalized_path(
        X, target, np.array([1.0, 0.01]), 0.0
    )
    assert path.kkt.shape == (2,)
    assert np.all(path.kkt < 1e-8)


def test_fitted_estimators_keep_the_weights_kkt():
    """VCPCR and VCPCRCV keep the step-0 weights' violation (None without a
    penalty), and cv_results_ its largest over the folds per grid point; it
    meets KKT_TOL by the reference conditions."""
    pytest.importorskip("sksurv")
    pytest.importorskip("lifelines")
    from vcpcr import VCPCR, VCPCRCV, compute_weights

    X, time, event = _cox_data(5, n=60, p=80)
    y = np.column_stack([time, event])
    model = VCPCR(family="cox", n_clusters=2, n_init=1, random_state=0).fit(X, y)
    w = compute_weights(X, y, "enet", family="cox", standardize=False)
    ref = _kkt(_breslow(X @ w, time, event)[1], X, w, 0.5, 0.05)
    assert ref <= KKT_TOL
    assert isinstance(model.weights_kkt_, float)
    assert model.weights_kkt_ <= KKT_TOL
    plain = VCPCR(weights="identity", n_clusters=2, n_init=1, random_state=0)
    assert plain.fit(X, X[:, 0]).weights_kkt_ is None
    cv = VCPCRCV(
        family="cox",
        n_clusters=[2],
        lam_ratios=[0.3],
        n_init=1,
        cv=3,
        random_state=0,
    ).fit(X, y)
    assert cv.weights_kkt_ == cv.best_estimator_.weights_kkt_
    assert cv.weights_kkt_ <= KKT_TOL
    fold_kkt = cv.cv_results_["max_weights_kkt"].to_numpy()
    assert fold_kkt.shape == (len(cv.cv_results_),)
    assert np.all(fold_kkt <= KKT_TOL)  # every fold's path met the tolerance
    assert np.all(fold_kkt > 0)  # a measured violation, not a placeholder


@pytest.mark.parametrize("n_covariates", [0, 2], ids=["plain", "covariates"])
def test_cox_polish_with_fewer_features_than_rows_solves_in_the_active_space(
    monkeypatch, n_covariates
):
    """With fewer features than rows the polish's Newton system is solved in
    the active features' space (Woodbury): its weights meet POLISH_KKT by the
    reference conditions and equal those of the (n + c)-square system, which
    the polish solves when the features are padded with zero columns."""
    pytest.importorskip("sksurv")
    from vcpcr._solvers import cox

    X, time, event = _cox_data(3, n=150, p=40)
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(150, n_covariates)) if n_covariates else None
    y = np.column_stack([time, event])
    deltas = lasso_delta_max(X, y, "cox", 0.05) * np.array([0.3, 0.05, 0.01])
    path = cox.cox_lasso_path(
        X, time, event, deltas, l1_ratio=0.05, covariates=Z, return_kkt=True
    )
    assert np.all(path.kkt <= cox.POLISH_KKT)
    if Z is None:
        for w, delta in zip(path.coef, deltas, strict=True):
            kkt = _kkt(_breslow(X @ w, time, event)[1], X, w, delta, 0.05)
            assert kkt <= cox.POLISH_KKT
    dense_polish = cox._polish

    def padded(prob, w0, offset0, delta):  # as many features as rows: dense
        pad = np.zeros((prob.X.shape[0], prob.X.shape[0]))
        prob = prob._replace(X=np.hstack([prob.X, pad]))
        w, offset = dense_polish(
            prob, np.r_[w0, np.zeros(pad.shape[1])], offset0, delta
        )
        return w[: X.shape[1]], offset

    monkeypatch.setattr(cox, "_polish", padded)
    dense = cox.cox_lasso_path(
        X, time, event, deltas, l1_ratio=0.05, covariates=Z, return_kkt=True
    )
    assert_allclose(
        path.coef, dense.coef, rtol=0, atol=1e-10 * np.abs(dense.coef).max()
    )
