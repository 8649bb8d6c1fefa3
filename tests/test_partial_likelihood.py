"""The Cox partial likelihood of vcpcr._solvers.partial_likelihood (Breslow and Efron
from one sort) against statsmodels' PHReg on tied data.

Breslow's loss and derivatives are also checked in tests/test_cox.py (brute
force, check_grad, R's coxph); Efron's log-likelihood against lifelines in
tests/test_cox_criterion.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from statsmodels.duration.hazard_regression import PHReg

from vcpcr._solvers.partial_likelihood import RiskSets, breslow, efron_loglik


def _tied(seed, n=40, k=3):
    """Rounded times (many ties, events tied with censorings)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, k))
    time = np.ceil(3 * rng.exponential(np.exp(-X[:, 0])))
    event = rng.uniform(size=n) < 0.7
    event[0] = True
    return X, time, event, rng.normal(scale=0.5, size=k)


@pytest.mark.parametrize("seed", [0, 1, 2], ids=["seed0", "seed1", "seed2"])
def test_efron_value_gradient_hessian_against_statsmodels_phreg(seed):
    X, time, event, beta = _tied(seed)
    assert np.unique(time[event]).size < event.sum()  # tied event times
    model = PHReg(time, X, status=event.astype(float), ties="efron")
    rs = RiskSets(time, event)
    Z = X[rs.order][None]
    ll, grad, hess = rs.efron(Z @ beta, Z)
    assert_allclose(ll[0], model.loglike(beta), rtol=1e-12, atol=0)
    assert_allclose(grad[0], model.score(beta), rtol=1e-10, atol=1e-12)
    assert_allclose(hess[0], model.hessian(beta), rtol=1e-10, atol=1e-12)


def test_efron_stack_and_strata_against_statsmodels_phreg():
    """Each row of a stack is its own fit; strata sum per-stratum likelihoods."""
    X, time, event, beta = _tied(3, n=60)
    strata = np.arange(60) % 3
    betas = np.stack([beta, -beta, np.zeros_like(beta)])
    mine = efron_loglik(betas @ X.T, time, event, strata)
    model = PHReg(time, X, status=event.astype(float), ties="efron", strata=strata)
    assert_allclose(mine, [model.loglike(b) for b in betas], rtol=1e-12, atol=0)


def test_breslow_and_efron_agree_without_ties():
    """Without tied event times the two tie rules are the same likelihood."""
    rng = np.random.default_rng(4)
    time, eta = rng.exponential(size=30), rng.normal(size=30)
    event = rng.uniform(size=30) < 0.6
    loss = breslow(eta, time, event, hessian=False)[0]
    assert_allclose(-30 * loss, efron_loglik(eta[None], time, event)[0], rtol=1e-13)


def test_breslow_from_risk_sets_is_breslow_of_the_outcome():
    """RiskSets.breslow (the solvers' path, one sort reused) in the caller's
    order equals statsmodels' Breslow likelihood and score on shuffled rows."""
    X, time, event, beta = _tied(5)
    perm = np.random.default_rng(0).permutation(time.size)
    rs = RiskSets(time[perm], event[perm])
    loss, grad, _, _ = rs.breslow(X[perm] @ beta, hessian=False)
    model = PHReg(time, X, status=event.astype(float), ties="breslow")
    assert_allclose(-time.size * loss, model.loglike(beta), rtol=1e-12, atol=0)
    assert_allclose(
        -time.size * X[perm].T @ grad, model.score(beta), rtol=1e-10, atol=1e-12
    )


def test_efron_loglik_of_a_linear_predictor_spanning_more_than_exp_range():
    """A late risk set whose exp(eta - max eta) underflows: its sum was 0 and
    numpy warned 'divide by zero encountered in log' (the CV partial
    likelihood score of a diverged fold fit); now exact, without a warning."""
    time = np.array([1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0])
    event = np.array([1, 1, 1, 0, 1, 1, 0], dtype=bool)
    eta = np.zeros((2, 7))
    eta[0, 0] = 800.0  # the first event: alone at the top
    # log(e^800 + 6) - 800 = 6 e^-800 = 0 in floats; then Efron's ties:
    # log 6 + log(6 - 1/2 2) at t=2, log 3 + log(3 - 1/2 2) at t=4.
    expected = -np.log([6.0 * 5.0 * 3.0 * 2.0, 7.0 * 6.0 * 5.0 * 3.0 * 2.0])
    assert_allclose(efron_loglik(eta, time, event), expected, rtol=1e-14)
    rng = np.random.default_rng(0)
    normal = rng.normal(size=(3, 7))
    wide = np.vstack([normal, eta[:1]])  # the other rows keep their path
    assert_allclose(
        efron_loglik(wide, time, event)[:3],
        efron_loglik(normal, time, event),
        rtol=0,
        atol=0,
    )


def _efron_by_log_sum_exp(eta, time, event):
    """Efron's log partial likelihood by loops, each risk set's sum shifted
    by its own maximum (no sum leaves the float range)."""
    ll = 0.0
    for t in np.unique(time[event]):
        tied = eta[(time == t) & event]
        at_risk = eta[time >= t]
        top = at_risk.max()
        s = np.sum(np.exp(at_risk - top))
        d = np.sum(np.exp(tied - top))
        ll += tied.sum() - sum(
            np.log(s - r / tied.size * d) + top for r in range(tied.size)
        )
    return ll


def test_a_subnormal_risk_set_sum_is_lost_not_noise():
    """A linear predictor spanning ~745: the late risk sets' sums of
    exp(eta - max eta) are subnormal (nonzero, few digits; only a sum of 0
    was treated as lost), so their log, and the log-likelihood, were noise
    (off by 0.56 here). They are lost now: the reported value is
    computed in log space and equals a per-risk-set log-sum-exp; the
    solvers' value (no ``wide``) is +inf, which no ascent takes for a gain."""
    time = np.array([1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 5.0, 5.0, 6.0, 7.0])
    event = np.array([1, 1, 1, 0, 1, 1, 1, 0, 1, 1], dtype=bool)
    eta = np.array(
        [0.0, -3.0, -1.0, -50.0, -400.0, -712.0, -715.0, -716.0, -730.0, -745.0]
    )
    rs = RiskSets(time, event)
    es = eta[rs.order][None]
    shift = es.max()
    phi = rs._efron_sums(np.exp(es - shift))
    tiny = np.finfo(np.float64).tiny
    assert np.all(phi[phi < tiny] > 0)  # subnormal, not 0: the case that was missed
    assert np.sum(phi < tiny) >= 4
    normal = np.array([[0.3, -0.2, 0.1, 0.0, 1.0, -1.0, 0.5, 0.2, -0.4, 0.7]])
    stack = np.vstack([eta, normal])
    expected = [_efron_by_log_sum_exp(e, time, event) for e in stack]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = efron_loglik(stack, time, event)
        solver = rs.efron_loglik(stack[:, rs.order])
        value = rs.efron(stack[:, rs.order], stack[:, rs.order, None])[0]
    assert_allclose(got, expected, rtol=0, atol=1e-11)  # eta ~ 1e3: rounding
    assert_array_equal(solver, [np.inf, got[1]])
    assert_array_equal(value, solver)


def test_efron_hessian_where_the_gram_form_cancels_is_summed_per_term():
    """Along a separating direction (a run-off fit) the information vanishes
    and the Gram form's difference cancels to rounding: the Hessian is then
    the per-term sum, the computation the separation tests of the batched
    fits were built on (their run-off fits take the same steps as before),
    not the Gram form's different rounding."""
    rng = np.random.default_rng(3)
    n = 10
    time = rng.exponential(size=n) + 0.01
    event = np.ones(n, dtype=bool)
    Z = np.column_stack([-np.argsort(np.argsort(time)), rng.normal(size=n)])
    rs = RiskSets(time, event)
    Zs = Z[rs.order][None].astype(float)
    es = (Zs[0] @ np.array([40.0, 0.1]))[None]  # far along the separating column
    _, _, hess = rs.efron(es, Zs)
    r = np.exp(es - es.max())
    phi = rs._efron_sums(r)
    mean = rs._efron_sums(r[..., None] * Zs) / phi[..., None]
    by_term = rs._efron_hessian_by_term(r, Zs, phi, mean)
    gram, moments = rs._efron_hessian(r, Zs, phi, mean)
    assert_array_equal(hess, by_term)
    assert not np.array_equal(gram, by_term)
    assert abs(by_term[0, 0, 0]) < 1e-12 * moments[0, 0]  # cancelled


@pytest.mark.parametrize("seed", range(3))
def test_efron_hessian_gram_form_equals_the_per_term_sum(seed):
    """Away from separation the Gram form is the per-term sum to rounding
    (ties, several designs)."""
    X, time, event, beta = _tied(seed, n=60, k=4)
    rs = RiskSets(time, event)
    Zs = np.stack([X[rs.order], X[rs.order] ** 2 - 1])
    es = Zs @ beta
    r = np.exp(es - es.max(axis=1, keepdims=True))
    phi = rs._efron_sums(r)
    mean = rs._efron_sums(r[..., None] * Zs) / phi[..., None]
    gram, _ = rs._efron_hessian(r, Zs, phi, mean)
    assert_allclose(gram, rs._efron_hessian_by_term(r, Zs, phi, mean), rtol=1e-11)


@pytest.mark.parametrize("spread", [1.0, 300.0], ids=["moderate", "wide"])
def test_breslow_hessian_dot_is_the_dense_hessian_times_a_matrix(spread):
    """The O(n m) product (cumulative sums, no n x n matrix) equals the
    dense Breslow Hessian times V, on tied times, also where exp(eta)
    spans far beyond the float range."""
    rng = np.random.default_rng(7)
    n = 40
    time = np.round(rng.exponential(size=n), 1)
    event = rng.uniform(size=n) < 0.7
    rs = RiskSets(time, event)
    es = spread * rng.normal(size=n) / 3
    terms = rs.breslow_terms(es)
    V = rng.normal(size=(n, 3))
    dense = rs.breslow_hessian(es, terms) @ V
    # each row is a difference of its diagonal term r_k A_k V_k and a sum
    # (Hessian rows sum to 0): rounding is relative to the diagonal term
    size = np.exp(es + terms[0])[:, None] * np.abs(V).max() / n
    error = np.abs(rs.breslow_hessian_dot(es, terms, V) - dense)
    assert np.all(error <= 1e-13 * size)
