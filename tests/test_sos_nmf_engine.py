"""Tests of the SOS-NMF iteration engine (``vcpcr._solvers.sos_nmf.batched_sos_nmf``).

The reference is the former single-problem loop, kept in
``tests/single_sos_nmf.py``: called once per problem with the same data,
weights, initial partition and absolute penalty. The engine sums in another
order, so memberships and objectives agree to rounding; the clusters must be
the same (labels equal: both compact clusters in the same order).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from single_sos_nmf import sos_nmf_single
from sklearn.metrics import adjusted_rand_score

from vcpcr._scaling import standardize
from vcpcr._solvers.sos_nmf import batched_sos_nmf, initial_lambda_max
from vcpcr._sos_nmf import lambda_max, random_partition


def _data(seed, n=30, p=40):
    """Four correlated blocks of five variables plus independent noise."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 4))
    blocks = np.repeat(z, 5, axis=1) + rng.normal(size=(n, 20))
    X = np.hstack([blocks, rng.normal(size=(n, p - 20))])
    return standardize(X)[0], rng


def _weights(kind, rng, p):
    """Weight vectors (rows): signed, lasso-like with exact zeros, or ones."""
    W = rng.normal(size=(3, p))
    if kind in ("lasso", "zero-row"):
        W[rng.random((3, p)) < 0.7] = 0.0
        W[0, :3] = [0.0, -0.0, 0.0]  # signed zeros give zero scores of both signs
    if kind == "zero-row":
        W[1] = 0.0
        W[1, ::7] = -0.0
    elif kind == "identity":
        W = np.ones((1, p))
    return W


def _grid(Xs, W, inits, ratios):
    """All (weight, init, ratio) triples; lam = ratio * lam_max of the pair."""
    lm = initial_lambda_max(Xs, W, inits)
    shape = (W.shape[0], len(inits), len(ratios))
    d, i, r = (a.ravel() for a in np.indices(shape))
    return d, i, np.asarray(ratios)[r] * lm[d, i]


def _loop(Xs, W, inits, d, i, lams, **kw):
    """Reference results, one ``sos_nmf_single`` call per problem."""
    out = []
    for b in range(lams.size):
        res, status = sos_nmf_single(Xs * W[d[b]], inits[i[b]], lam=lams[b], **kw)
        v = np.zeros(Xs.shape[1])
        sel = res.labels >= 0
        v[sel] = res.V[np.flatnonzero(sel), res.labels[sel]]
        out.append((res, status, v))
    return out


def _assert_matches_loop(batch, ref):
    for b, (res, status, v) in enumerate(ref):
        assert adjusted_rand_score(batch.labels[b], res.labels) == 1.0
        assert_array_equal(batch.labels[b], res.labels, err_msg=f"problem {b}")
        assert (batch.n_iter[b], batch.reason[b]) == (res.n_iter, status.reason)
        assert batch.converged[b] == res.converged
        assert_allclose(batch.v[b], v, rtol=1e-10, atol=1e-13)
        assert_allclose(batch.objective[b], res.objective[-1], rtol=1e-10, atol=1e-13)
        assert_allclose(batch.lam_max[b], res.lam_max, rtol=1e-12, atol=0)
        # rel = |dJ| / |J|: J agrees to rounding, so rel to rounding / |J|,
        # which is noise for a perfect fit (J at rounding level: singletons)
        if abs(res.objective[-1]) > 1e-9:
            assert_allclose(batch.rel_change[b], status.rel_change, rtol=0, atol=1e-9)


RATIOS = (0.0, 1e-3, 0.05, 0.3, 0.7, 1.0, 1.5)
CASES = {
    "mixed-K": {"Ks": (2, 3, 5, 7), "expect": {"tol", "empty"}},
    "lasso-zeros": {"kind": "lasso", "Ks": (2, 4, 6), "expect": {"tol", "empty"}},
    "zero-weights": {"kind": "zero-row", "Ks": (3, 12), "expect": {"tol", "empty"}},
    "zero-weights-1-iter": {"kind": "zero-row", "Ks": (2, 5), "max_iter": 1},
    "identity": {"kind": "identity", "Ks": (2, 3, 4), "ratios": (0, 0.3, 0.6, 0.9)},
    "max-iter-3": {"Ks": (3, 5), "max_iter": 3, "expect": {"max_iter"}},
    "max-iter-1": {"Ks": (2, 4), "max_iter": 1, "expect": {"max_iter"}},
    "tol-0": {
        "Ks": (2, 3, 6),
        "tol": 0.0,
        "ratios": (0, 0.05, 0.5),
        "expect": {"fixed"},
    },
    "tiny-n": {"Ks": (2, 5), "n": 4, "p": 24},
    "K1-and-singletons": {"Ks": (1, 24), "p": 24, "tol": 0.0, "ratios": (0.0, 0.2)},
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
@pytest.mark.parametrize("seed", [0, 1], ids=["s0", "s1"])
def test_matches_loop(case, seed):
    """Labels, iterations and reasons equal the loop's; v, J to 1e-10."""
    cfg = {"kind": "normal", "ratios": RATIOS, "n": 30, "p": 40, "expect": set()}
    cfg |= CASES[case]
    Xs, rng = _data(seed, cfg["n"], cfg["p"])
    W = _weights(cfg["kind"], rng, cfg["p"])
    inits = [random_partition(cfg["p"], K, rng) for K in cfg["Ks"] for _ in range(2)]
    d, i, lams = _grid(Xs, W, inits, cfg["ratios"])
    kw = {k: cfg[k] for k in ("max_iter", "tol") if k in cfg}
    batch = batched_sos_nmf(Xs, W, inits, d, i, lams, history=True, **kw)
    ref = _loop(Xs, W, inits, d, i, lams, **kw)
    _assert_matches_loop(batch, ref)
    assert cfg["expect"] <= set(batch.reason.tolist())
    assert batch.history.shape == (lams.size, batch.n_iter.max())
    for b, (res, _, _) in enumerate(ref):
        hist = batch.history[b, : res.n_iter]
        assert_allclose(hist, res.objective, rtol=1e-10, atol=1e-13)
        assert np.all(np.isnan(batch.history[b, res.n_iter :]))


@pytest.mark.parametrize(
    ("kind", "Ks", "kw"),
    [
        ("lasso", (2, 4, 9), {}),
        ("zero-row", (3, 12), {"history": True}),
        ("zero-row", (2, 6), {"max_iter": 1}),
        ("lasso", (3, 20), {"tol": 0.0}),
        ("normal", (2, 5), {}),
    ],
    ids=["lasso", "zero-row", "one-iteration", "tol-0", "nothing-screened"],
)
def test_screening_matches_the_full_problem(monkeypatch, kind, Ks, kw):
    """Exact screening (#19): solving on the non-zero-weight columns only
    gives the results of the full problem, run by the same engine with every
    column kept (a zero weight leaves a variable unselected after one update).

    Includes initial clusters whose members all have zero weight (dropped
    before the first update), a weight vector of zeros, ``max_iter=1`` (the
    first update: ``lam_max``) and ``tol=0`` (runs to a fixed point).
    """
    import vcpcr._solvers.sos_nmf as engine

    Xs, rng = _data(11)
    W = _weights(kind, rng, 40)
    inits = [random_partition(40, K, rng) for K in Ks for _ in range(2)]
    zero = np.flatnonzero(W[0] == 0)
    if zero.size:  # a cluster of zero-weight variables only
        inits[0] = inits[0].copy()
        inits[0][zero[:3]] = Ks[0]
    d, i, lams = _grid(Xs, W, inits, (0.0, 1e-3, 0.1, 0.5, 1.0))
    solved_on = []
    weighted = engine._weighted

    def spy(Xs, W):
        solved_on.append(Xs.shape[1])
        return weighted(Xs, W)

    monkeypatch.setattr(engine, "_weighted", spy)
    screened = batched_sos_nmf(Xs, W, inits, d, i, lams, **kw)
    # each weight vector ran on its support only (none on an empty one)
    assert set(solved_on) == {int(s) for s in (W != 0).sum(axis=1) if s}
    compact = batched_sos_nmf(Xs, W, inits, d, i, lams, compact=True, **kw)
    assert_array_equal(compact.features, np.flatnonzero(np.any(W != 0, axis=0)))
    everyone = np.arange(lams.size)
    assert_array_equal(compact.dense_labels(everyone), screened.labels)
    assert_array_equal(compact.dense_v(everyone), screened.v)
    chunks = engine._chunks
    monkeypatch.setattr(engine, "_chunks", lambda W, *a: chunks(np.ones_like(W), *a))
    full = batched_sos_nmf(Xs, W, inits, d, i, lams, **kw)
    for b in range(lams.size):
        assert adjusted_rand_score(screened.labels[b], full.labels[b]) == 1.0
    assert_array_equal(screened.labels, full.labels)
    for name in ("n_iter", "reason", "converged"):
        assert_array_equal(getattr(screened, name), getattr(full, name))
    # J of a perfect fit (singletons) is rounding: 1e-15, of either sign
    for name in ("v", "objective", "lam_max"):
        assert_allclose(
            getattr(screened, name), getattr(full, name), rtol=1e-10, atol=1e-13
        )
    if kw.get("history"):
        assert_allclose(screened.history, full.history, rtol=1e-10, atol=1e-13)


def test_inits_with_gaps_and_varying_K():
    """Labels need not be contiguous: they are compacted as the loop does."""
    Xs, rng = _data(3)
    W = _weights("normal", rng, 40)
    inits = [2 * random_partition(40, 3, rng), random_partition(40, 6, rng) + 1]
    d, i, lams = _grid(Xs, W, inits, (0.0, 0.1, 0.5))
    batch = batched_sos_nmf(Xs, W, inits, d, i, lams)
    _assert_matches_loop(batch, _loop(Xs, W, inits, d, i, lams))


def test_wide_run_split_without_a_lone_column():
    """13 problems with K=5 and the same weights: 65 score columns in one run."""
    Xs, rng = _data(9)
    W = _weights("normal", rng, 40)[:1]
    inits = [random_partition(40, 5, rng)]
    d, i, lams = _grid(Xs, W, inits, np.linspace(0.0, 0.6, 13))
    batch = batched_sos_nmf(Xs, W, inits, d, i, lams)
    _assert_matches_loop(batch, _loop(Xs, W, inits, d, i, lams))


def test_cycle_rule():
    """A state seen at any earlier iteration of the same problem is a cycle.

    Random problems practically never cycle, so the rule is checked on
    hand-made states: 20 distinct states (past the log's first allocation),
    then the third again; another problem's states do not count.
    """
    from vcpcr._solvers.sos_nmf import _Log, _Update

    p = 6
    rng = np.random.default_rng(0)
    states = [(rng.integers(-1, 3, size=(p, 1)), rng.random((p, 1))) for _ in range(20)]

    def update(lab, v):
        return _Update(lab, v, np.full(1, 3), np.ones(1), np.zeros(1, dtype=bool))

    log = _Log(2, p, history=False)
    mine, other = np.array([0]), np.array([1])
    assert not log.revisited(other, update(*states[5]), 0)[0]
    for it, (lab, v) in enumerate(states):
        assert not log.revisited(mine, update(lab, v), it)[0]
    assert log.revisited(mine, update(*states[2]), 20)[0]
    # the same labels with other memberships are another state
    lab, v = states[4]
    assert not log.revisited(mine, update(lab, v * (1 + 1e-15)), 21)[0]


def test_initial_lambda_max_matches_solver_and_lambda_max():
    Xs, rng = _data(4)
    W = _weights("lasso", rng, 40)
    inits = [random_partition(40, K, rng) for K in (1, 2, 5, 9)]
    lm = initial_lambda_max(Xs, W, inits)
    assert lm.shape == (3, 4)
    for d in range(3):
        for i, init in enumerate(inits):
            res, _ = sos_nmf_single(Xs * W[d], init, lam=0.0, max_iter=1)
            assert_allclose(lm[d, i], res.lam_max, rtol=1e-10, atol=0)
            one = lambda_max(Xs, init, weights=W[d], standardize=False)
            assert_allclose(lm[d, i], one, rtol=1e-12, atol=0)
            assert_allclose(lm[d, i], _lam_max_by_hand(Xs, W[d], init), rtol=1e-12)


def _lam_max_by_hand(Xs, w, init):
    """docs/method.md, step 1: ``max_jk w_j cor(u_k, x_j)``, ``u_k`` the standardized
    mean of cluster k's weighted columns (a column of sd 0 left unscaled)."""
    n = Xs.shape[0]
    XW = Xs * w
    s = []
    for k in range(int(init.max()) + 1):
        u = XW[:, init == k].mean(axis=1)
        u = u - u.mean()
        sd = u.std(ddof=1)
        u = u / sd if sd > 0 else u
        s.append(w * (Xs.T @ u) / (n - 1))
    return np.max(s)


@pytest.mark.parametrize("max_memory", [1, 60_000], ids=["one-per-chunk", "small"])
def test_chunking_gives_the_same_results(max_memory):
    Xs, rng = _data(5)
    W = _weights("normal", rng, 40)
    inits = [random_partition(40, K, rng) for K in (2, 4, 7)]
    d, i, lams = _grid(Xs, W, inits, (0.0, 0.01, 0.2, 0.8))
    whole = batched_sos_nmf(Xs, W, inits, d, i, lams)
    chunked = batched_sos_nmf(Xs, W, inits, d, i, lams, max_memory=max_memory)
    for name in ("labels", "n_iter", "reason", "converged"):
        assert_array_equal(getattr(chunked, name), getattr(whole, name))
    for name in ("v", "objective", "lam_max"):
        assert_allclose(
            getattr(chunked, name), getattr(whole, name), rtol=1e-12, atol=0
        )
    # rel = |dJ| / |J| with J summed over batches of other shapes: rounding / |J|
    assert_allclose(chunked.rel_change, whole.rel_change, rtol=0, atol=1e-12)


def test_history_grows_with_the_iterations_run_not_max_iter():
    """#46: the history was allocated as max_iter x B floats before the first step."""
    import tracemalloc

    Xs, rng = _data(8)
    W = _weights("normal", rng, 40)
    inits = [random_partition(40, K, rng) for K in (2, 4)]
    d, i, lams = _grid(Xs, W, inits, (0.0, 0.1))
    ref = batched_sos_nmf(Xs, W, inits, d, i, lams, history=True)
    tracemalloc.start()
    try:
        big = batched_sos_nmf(
            Xs, W, inits, d, i, lams, history=True, max_iter=2 * 10**6
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, peak  # it was 2e6 * 12 problems * 8 bytes = 192 MB
    assert_array_equal(big.n_iter, ref.n_iter)
    assert_array_equal(big.history, ref.history)


def test_problem_order_does_not_matter():
    Xs, rng = _data(6)
    W = _weights("normal", rng, 40)
    inits = [random_partition(40, K, rng) for K in (3, 5)]
    d, i, lams = _grid(Xs, W, inits, (0.0, 0.1, 0.4))
    perm = rng.permutation(lams.size)
    ref = batched_sos_nmf(Xs, W, inits, d, i, lams)
    res = batched_sos_nmf(Xs, W, inits, d[perm], i[perm], lams[perm])
    assert_array_equal(res.labels, ref.labels[perm])
    assert_array_equal(res.n_iter, ref.n_iter[perm])
    assert_allclose(res.v, ref.v[perm], rtol=1e-12, atol=0)


def test_accepted_input_forms_and_empty_batch():
    """1-d W is one weight vector; inits may be a 2-d array; B may be 0."""
    Xs, rng = _data(7)
    w = rng.normal(size=40)
    inits = np.stack([random_partition(40, 3, rng), random_partition(40, 4, rng)])
    res = batched_sos_nmf(Xs, w, inits, [0, 0], [0, 1], [0.01, 0.02])
    ref = batched_sos_nmf(Xs, w[None, :], list(inits), [0, 0], [0, 1], [0.01, 0.02])
    assert_array_equal(res.labels, ref.labels)
    assert res.reason.dtype.kind == "U"
    assert initial_lambda_max(Xs, w, inits).shape == (1, 2)
    empty = batched_sos_nmf(Xs, w, inits, [], [], [])
    assert empty.labels.shape == (0, 40)
    assert empty.reason.shape == empty.n_iter.shape == (0,)


def _bad(**override):
    rng = np.random.default_rng(8)
    args = {
        "Xs": rng.normal(size=(10, 6)),
        "W": rng.normal(size=(2, 6)),
        "inits": [[0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1]],
        "weight_idx": [0, 1],
        "init_idx": [0, 1],
        "lams": [0.1, 0.2],
    }
    args.update(override)
    kw = {k: args.pop(k) for k in ("max_iter", "tol", "max_memory") if k in args}
    return batched_sos_nmf(*args.values(), **kw)


BAD = {
    "W-columns": ({"W": np.ones((2, 7))}, ValueError, "W has 7 columns but Xs has 6"),
    "init-length": ({"inits": [[0, 1, 0, 1, 0, 1], [0, 1]]}, ValueError,
                    r"inits\[1\] must hold one label per feature"),
    "init-float": ({"inits": [np.full(6, 0.5), np.zeros(6)]}, TypeError,
                   r"inits\[0\] labels must be integers"),
    "init-negative": ({"inits": [[0, 0, 1, 1, -1, 2], [0] * 6]}, ValueError,
                      r"inits\[0\] labels must be >= 0"),
    "weight-idx-range": ({"weight_idx": [0, 2]}, ValueError,
                         r"weight_idx must lie in 0\.\.1 \(W has 2 entries\)"),
    "init-idx-range": ({"init_idx": [-1, 0]}, ValueError,
                       r"init_idx must lie in 0\.\.1"),
    "weight-idx-2d": ({"weight_idx": [[0, 1]]}, ValueError, "weight_idx must be 1-d"),
    "weight-idx-float": ({"weight_idx": [0.0, 1.0]}, TypeError,
                         "weight_idx must hold integers"),
    "lengths": ({"lams": [0.1, 0.2, 0.3]}, ValueError,
                "one entry per problem; got lengths 2, 2 and 3"),
    "negative-lam": ({"lams": [0.1, -0.2]}, ValueError, "lams must be >= 0"),
    "nan-lam": ({"lams": [0.1, np.nan]}, ValueError, "lams contains NaN"),
    "nan-Xs": ({"Xs": np.full((10, 6), np.nan)}, ValueError, "Xs contains NaN"),
    "one-row": ({"Xs": np.ones((1, 6))}, ValueError, "Xs has 1 sample"),
    "max-iter": ({"max_iter": 0}, ValueError, "'max_iter' parameter"),
    "tol": ({"tol": -1.0}, ValueError, "'tol' parameter"),
}  # fmt: skip


@pytest.mark.parametrize(("override", "exc", "match"), BAD.values(), ids=list(BAD))
def test_invalid_input(override, exc, match):
    with pytest.raises(exc, match=match):
        _bad(**override)


def test_invalid_input_to_initial_lambda_max():
    with pytest.raises(ValueError, match="W has 5 columns but Xs has 6"):
        initial_lambda_max(np.ones((4, 6)), np.ones((1, 5)), [[0, 1, 0, 1, 0, 1]])


def test_imports_only_numpy_and_scipy():
    code = (
        "import sys, vcpcr._solvers.sos_nmf;"
        "print(sorted(m for m in ('pandas', 'statsmodels', 'lifelines', 'sklearn')"
        " if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
