"""Property-based tests: bad and extreme input to the public API (issue 10).

Every call either raises a documented exception (``TypeError``,
``ValueError`` or ``NotFittedError``) whose message names the offending
argument, or returns a finite result that does not depend on the units of the
data; the inputs are never modified. Examples are few and small so that the
file runs in seconds; hypothesis' example database is off (no files written).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import HAVE_SURVIVAL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import NotFittedError
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import KFold

from vcpcr import (
    VCPCR,
    VCPCRCV,
    Surv,
    VCPCRWarning,
    compute_weights,
    lambda_max,
    random_partition,
    sos_nmf,
)
from vcpcr._cv import GRID_PARAMS
from vcpcr.metrics import mcc_clustering, mcc_support, model_size, msep
from vcpcr.simulate import make_block_data, make_paper_data


def _outcome(call):
    """Return ``(result, None)`` or ``(None, exception)`` for a documented error."""
    try:
        return call(), None
    except ERRORS as exc:
        return None, exc


FUZZ = settings(
    max_examples=12,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
ERRORS = (TypeError, ValueError)


def _data(seed=1, n=40):
    """Two correlated blocks of 4 variables, 4 noise variables, y on both blocks."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    X = np.column_stack(
        [
            z[:, [0]] + 0.5 * rng.normal(size=(n, 4)),
            z[:, [1]] + 0.5 * rng.normal(size=(n, 4)),
            rng.normal(size=(n, 4)),
        ]
    )
    y = z[:, 0] - z[:, 1] + 0.3 * rng.normal(size=n)
    return X, y


X0, Y0 = _data()
BASE = VCPCR(2, n_init=2, random_state=0).fit(X0, Y0)

# ----------------------------------------------------------- scale invariance

exponents = st.integers(min_value=-150, max_value=150)
mantissas = st.floats(min_value=1.0, max_value=9.99)


@FUZZ
@given(mx=mantissas, ex=exponents, my=mantissas, ey=exponents)
def test_units_of_X_and_y_do_not_matter(mx, ex, my, ey):
    """X * cx and y * cy (cx, cy in [1e-150, 1e150]): same clusters, cy * prediction."""
    cx, cy = mx * 10.0**ex, my * 10.0**ey
    Xc, yc = X0 * cx, Y0 * cy
    X_before, y_before = Xc.copy(), yc.copy()
    model = VCPCR(2, n_init=2, random_state=0).fit(Xc, yc)
    assert_array_equal(Xc, X_before)
    assert_array_equal(yc, y_before)
    assert adjusted_rand_score(BASE.labels_, model.labels_) == 1.0
    pred = model.predict(Xc)
    assert np.all(np.isfinite(pred))
    assert_allclose(pred / cy, BASE.predict(X0), rtol=1e-9, atol=1e-9)


@FUZZ
@given(mx=mantissas, ex=st.integers(min_value=-300, max_value=300))
def test_units_of_X_do_not_matter_up_to_1e300(mx, ex):
    """Beyond the promised range: X alone may take any units up to 1e+-300."""
    cx = mx * 10.0**ex
    model = VCPCR(2, n_init=2, random_state=0).fit(X0 * cx, Y0)
    assert adjusted_rand_score(BASE.labels_, model.labels_) == 1.0
    assert_allclose(model.predict(X0 * cx), BASE.predict(X0), rtol=1e-9, atol=1e-9)


@FUZZ
@given(
    ex=exponents,
    family=st.sampled_from(["binomial", "cox"] if HAVE_SURVIVAL else ["binomial"]),
)
def test_units_of_X_do_not_matter_binomial_cox(ex, family):
    rng = np.random.default_rng(3)
    if family == "binomial":
        y = (Y0 > 0).astype(int)
    else:
        y = np.column_stack([np.exp(-Y0 / 3), rng.random(Y0.size) < 0.7])
    base = VCPCR(2, family=family, n_init=2, random_state=0).fit(X0, y)
    cx = 10.0**ex
    model = VCPCR(2, family=family, n_init=2, random_state=0).fit(X0 * cx, y)
    assert adjusted_rand_score(base.labels_, model.labels_) == 1.0
    assert_allclose(
        model.decision_function(X0 * cx)
        if family == "binomial"
        else np.log(model.predict(X0 * cx)),
        base.decision_function(X0)
        if family == "binomial"
        else np.log(base.predict(X0)),
        rtol=1e-7,
        atol=1e-7,
    )


@FUZZ
@given(ew=st.integers(min_value=-300, max_value=300))
def test_given_weights_act_through_their_ratios(ew):
    w = np.linspace(0.2, 1.0, X0.shape[1])
    base = VCPCR(2, weights=w, n_init=2, random_state=0).fit(X0, Y0)
    model = VCPCR(2, weights=w * 10.0**ew, n_init=2, random_state=0).fit(X0, Y0)
    assert_array_equal(model.labels_, base.labels_)
    assert_allclose(model.predict(X0), base.predict(X0), rtol=1e-9)


@FUZZ
@given(ex=exponents)
def test_sos_nmf_and_lambda_max_are_unit_free(ex):
    init = np.arange(X0.shape[1]) % 3
    base = sos_nmf(X0, init=init, lam_ratio=0.3)
    res = sos_nmf(X0 * 10.0**ex, init=init, lam_ratio=0.3)
    assert_array_equal(res.labels, base.labels)
    assert lambda_max(X0 * 10.0**ex, init) == pytest.approx(lambda_max(X0, init))


@FUZZ
@given(ew=st.integers(min_value=-300, max_value=300))
def test_sos_nmf_weights_scale_or_clear_error(ew):
    """sos_nmf's V and lam follow the weights' scale, or it says they cannot."""
    init = np.arange(X0.shape[1]) % 3
    w = np.linspace(0.2, 1.0, X0.shape[1])
    base = sos_nmf(X0, init=init, weights=w, lam_ratio=0.3)
    result, exc = _outcome(
        lambda: sos_nmf(X0, init=init, weights=w * 10.0**ew, lam_ratio=0.3)
    )
    if exc is not None:
        assert abs(ew) > 100
        assert "weights / max|w|" in str(exc)
    else:
        assert_array_equal(result.labels, base.labels)
        assert result.lam == pytest.approx(base.lam * 10.0**ew, rel=1e-9)


# ------------------------------------------------------------ bad parameters

BAD_VALUES = [
    -1,
    0,
    -0.5,
    float("nan"),
    float("inf"),
    "a",
    None,
    True,
    [1, 2],
    np.ones(3),
    2.5,
    1e300,
]
PARAMS = ["n_clusters", "n_init", "max_iter", "tol", "lam_ratio", "delta", "family"]


@pytest.mark.parametrize("value", BAD_VALUES, ids=[repr(v)[:12] for v in BAD_VALUES])
@pytest.mark.parametrize("name", PARAMS)
def test_bad_parameters_name_themselves(name, value):
    """Either the fit works (the value is valid) or the error names the parameter."""
    model = VCPCR(2, n_init=1, random_state=0).set_params(**{name: value})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. "no variable selected"
        fitted, exc = _outcome(lambda: model.fit(X0, Y0))
    if exc is not None:
        assert name in str(exc)
    else:
        assert np.all(np.isfinite(fitted.predict(X0)))


WEIGHTS = {
    "None": (None, TypeError, "'weights' parameter of"),
    "scalar": (1.0, TypeError, "'weights' parameter of"),
    "wrong length": (np.ones(3), ValueError, "weights has 3 entries"),
    "nan": (np.r_[np.nan, np.ones(11)], ValueError, "weights contains NaN"),
    "zeros": (np.zeros(12), ValueError, "all zeros"),
    "unknown name": ("rigde", ValueError, "'weights' parameter of"),
    "2-d": (np.ones((12, 1)), TypeError, "'weights' parameter of"),
}


@pytest.mark.parametrize("cls", [VCPCR, VCPCRCV], ids=["VCPCR", "VCPCRCV"])
@pytest.mark.parametrize(("weights", "error", "match"), WEIGHTS.values(), ids=WEIGHTS)
def test_bad_weights(cls, weights, error, match):
    model = cls(2, weights=weights) if cls is VCPCR else cls((2,), weights=weights)
    with pytest.raises(error, match=re.escape(match)):
        model.fit(X0, Y0)


def test_cv_takes_an_array_of_weights():
    """An ndarray used to raise "The truth value of an array ... is ambiguous"."""
    w = np.linspace(-1, 1, X0.shape[1])
    cv = VCPCRCV((2,), weights=w, cv=3, n_init=1, random_state=0).fit(X0, Y0)
    listed = VCPCRCV((2,), weights=list(w), cv=3, n_init=1, random_state=0)
    listed.fit(X0, Y0)
    assert {k: cv.best_params_[k] for k in GRID_PARAMS} == {
        k: listed.best_params_[k] for k in GRID_PARAMS
    }
    assert cv.best_params_["weights"] is w  # the chosen model's weights


# ------------------------------------------------------------------ bad data


def _corrupt(kind, rng):
    X = X0.copy()
    j = int(rng.integers(X.shape[1]))
    if kind == "nan":
        X[int(rng.integers(X.shape[0])), j] = np.nan
    elif kind == "inf":
        X[int(rng.integers(X.shape[0])), j] = -np.inf
    elif kind == "constant":
        X[:, j] = 10.0 ** float(rng.integers(-200, 200))
    elif kind == "strings":
        X = X.astype(object)
        X[0, j] = "a"
    elif kind == "pd.NA":
        frame = pd.DataFrame(X).astype(object)
        frame.iloc[0, j] = pd.NA
        return frame
    elif kind == "1-d":
        return X[:, 0]
    elif kind == "3-d":
        return X[None]
    elif kind == "empty":
        return X[:, :0]
    elif kind == "sparse":
        import scipy.sparse as sp

        return sp.csr_matrix(X)
    return X


KINDS = ["nan", "inf", "constant", "strings", "pd.NA", "1-d", "3-d", "empty", "sparse"]
CALLS = {
    "VCPCR.fit": lambda X: VCPCR(2, n_init=1).fit(X, Y0),
    "VCPCRCV.fit": lambda X: VCPCRCV((2,), cv=3, n_init=1).fit(X, Y0),
    "sos_nmf": lambda X: sos_nmf(X, 2, random_state=0),
    "lambda_max": lambda X: lambda_max(X, np.arange(12) % 2),
    "compute_weights": lambda X: compute_weights(X, Y0, "ridge"),
    "VCPCR.predict": lambda X: BASE.predict(X),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("kind", KINDS)
def test_bad_X_gives_a_clear_error(kind, call):
    seed = len(kind) + len(call)
    X = _corrupt(kind, np.random.default_rng(seed))
    before = X.copy()
    if kind == "constant" and call == "VCPCR.predict":  # valid new data
        assert np.all(np.isfinite(CALLS[call](X)))
        return
    j = int(np.random.default_rng(seed).integers(X0.shape[1]))  # _corrupt's column
    unselected = BASE.labels_[j] < 0
    if call == "VCPCR.predict" and kind in ("nan", "inf", "pd.NA") and unselected:
        # a variable the model did not select may be missing (#24)
        assert_array_equal(CALLS[call](X), BASE.predict(X0))
        return
    with pytest.raises(ERRORS) as exc:
        CALLS[call](X)
    message = str(exc.value)
    assert "truth value" not in message
    if kind in ("1-d", "3-d", "empty"):  # scikit-learn's shape messages are kept
        assert re.search(r"\bX\b|2D array|dim 3|0 feature", message), message
    elif kind != "strings":  # scikit-learn's "could not convert" message: #11
        assert re.search(r"\bX\b", message), message
    if kind == "sparse":
        assert "toarray()" in message
    elif kind in ("nan", "pd.NA"):
        assert "NaN" in message
    if isinstance(before, pd.DataFrame):
        pd.testing.assert_frame_equal(X, before)
    elif kind != "sparse":
        assert_array_equal(X, before)


BAD_Y = {
    "nan": (np.r_[np.nan, Y0[1:]], ValueError, "y contains NaN"),
    "constant": (np.full(40, 1e-300), ValueError, "y is constant"),
    "short": (Y0[:10], ValueError, "40"),
}


@pytest.mark.parametrize(("y", "error", "match"), BAD_Y.values(), ids=BAD_Y)
def test_bad_y(y, error, match):
    with pytest.raises(error, match=re.escape(match)):
        VCPCR(2, n_init=1).fit(X0, y)


def test_tiny_y_is_not_infinite():
    """``y * 1e-300`` used to be reported as "contains infinity". Its fit and
    predictions are exact; its squared residuals underflow, which is said."""
    with pytest.warns(VCPCRWarning, match="squared residuals underflow or overflow"):
        model = VCPCR(2, n_init=2, random_state=0).fit(X0, Y0 * 1e-300)
    assert_allclose(model.predict(X0) * 1e300, BASE.predict(X0), rtol=1e-9)


def test_tiny_X_is_not_constant():
    """``X * 1e-13`` used to be rejected as "12 constant column(s)"."""
    model = VCPCR(2, n_init=2, random_state=0).fit(X0 * 1e-13, Y0)
    assert_array_equal(model.labels_, BASE.labels_)


def test_one_huge_column_keeps_its_cluster():
    """A column near 1e155 overflowed when squared and was silently zeroed."""
    scale = np.ones(X0.shape[1])
    scale[0] = 1e200
    model = VCPCR(2, n_init=2, random_state=0).fit(X0 * scale, Y0)
    assert_array_equal(model.labels_, BASE.labels_)
    assert_allclose(model.predict(X0 * scale), BASE.predict(X0), rtol=1e-9)


# ----------------------------------------------- families, folds, not fitted


@pytest.mark.parametrize("family", ["gaussian", "binomial", "cox"])
def test_more_clusters_than_samples_same_error_for_all_families(family):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 12))
    y = {
        "gaussian": rng.normal(size=6),
        "binomial": np.array([0, 1, 0, 1, 0, 1]),
        "cox": np.column_stack([np.arange(1.0, 7.0), [1, 1, 0, 1, 1, 0]]),
    }[family]
    model = VCPCR(8, family=family, weights="identity", lam_ratio=0.0, random_state=0)
    with pytest.raises(ValueError, match=r"8 cluster variable\(s\).*Use n_clusters"):
        model.fit(X, y)


def test_cv_checks_n_clusters_against_the_training_folds():
    with pytest.raises(ValueError, match=r"CV fold 0 trains on 8 rows, too few for n"):
        VCPCRCV((2, 8), cv=3, n_init=1).fit(X0[:12], Y0[:12])


def test_cv_r2_on_one_sample_folds():
    """Used to end in pandas' IntCastingNaNError; the warning is issued once."""
    with pytest.warns(UserWarning, match=r"\(\d+ of \d+ fold x grid fits\)") as rec:
        with pytest.raises(ValueError, match="No grid point has a finite mean CV"):
            VCPCRCV(
                (2,),
                weights="identity",
                lam_ratios=[0.1, 0.5],
                scoring="r2",
                cv=40,
                n_init=1,
                random_state=0,
            ).fit(X0, Y0)
    assert len(rec) == 1


def _nan_when_empty(model, X, y):
    """A scorer that is undefined for a model without clusters."""
    if not np.any(model.coef_):
        return np.nan
    return -float(np.mean((model.predict(X) - y) ** 2))


@FUZZ
@given(
    column=st.integers(min_value=0, max_value=X0.shape[1] - 1),
    row=st.integers(min_value=0, max_value=X0.shape[0] - 1),
    value=st.sampled_from([np.nan, np.inf, -np.inf]),
)
def test_predict_needs_only_the_columns_it_uses(column, row, value):
    """NaN or infinity in an unselected variable leaves the predictions as they
    are; in a selected one it is an error naming the column (#24)."""
    X = X0.copy()
    X[row, column] = value
    if BASE.labels_[column] < 0:
        assert_array_equal(BASE.predict(X), BASE.predict(X0))
        assert_array_equal(BASE.transform(X), BASE.transform(X0))
        return
    with pytest.raises(ValueError, match=rf"\['x{column}'\].*before predicting"):
        BASE.predict(X)


GENES = pd.DataFrame(X0, columns=[f"g{j}" for j in range(X0.shape[1])])
GENES_MODEL = VCPCR(2, n_init=2, random_state=0).fit(GENES, Y0)


@FUZZ
@given(
    order=st.permutations(range(X0.shape[1])),
    dropped=st.sets(st.integers(min_value=0, max_value=X0.shape[1] - 1), max_size=3),
)
def test_new_data_is_matched_to_the_training_columns_by_name(order, dropped):
    """Any order of the training columns predicts alike; absent ones are named
    (#24: scikit-learn's generic feature-names error)."""
    names = [f"g{j}" for j in dropped]
    frame = GENES.iloc[:, list(order)].drop(columns=names)
    if not names:
        assert_array_equal(GENES_MODEL.predict(frame), GENES_MODEL.predict(GENES))
        return
    with pytest.raises(ValueError, match=rf"lacks {len(names)} column\(s\) seen"):
        GENES_MODEL.predict(frame)


def test_cv_nan_scores_rank_last():
    cv = VCPCRCV(
        (2,),
        weights="identity",
        lam_ratios=[0.1, 0.5, 1.0],
        scoring=_nan_when_empty,
        cv=3,
        n_init=1,
        random_state=0,
    )
    with pytest.warns(UserWarning, match=r"1 of 3 grid points failed.* 3 scored non"):
        cv.fit(X0, Y0)
    res = cv.cv_results_
    empty = ~np.isfinite(res["mean_test_score"].to_numpy())
    assert_array_equal(empty, [False, False, True])
    assert res["rank_test_score"].tolist() == [*res["rank_test_score"][:2], 3]
    assert res["lam_ratio"][cv.best_index_] != 1.0


def test_cv_fold_without_a_class_names_the_fold():
    y = np.r_[np.ones(2), np.zeros(38)]
    cv = VCPCRCV((2,), family="binomial", cv=KFold(5), n_init=1)
    with pytest.raises(ValueError, match=r"CV fold 0 of 5: its training part .* no"):
        cv.fit(X0, y)


def test_cv_fold_without_events_names_the_fold():
    rng = np.random.default_rng(0)
    y = np.column_stack([rng.exponential(size=40), np.r_[1, 1, np.zeros(38)]])
    with pytest.raises(
        ValueError, match=r"CV fold \d+ of 4: .* no event \(y has 2 events in 40"
    ):
        VCPCRCV((2,), family="cox", cv=4, n_init=1).fit(X0, y)


COX_Y = np.column_stack([np.exp(-Y0 / 3), np.arange(40) % 3 > 0])


@pytest.mark.parametrize(
    "method", ["predict_survival_function", "predict_cumulative_hazard", "predict"]
)
def test_cox_predictions_before_fit(method):
    with pytest.raises(NotFittedError):
        getattr(VCPCR(2, family="cox"), method)(X0)


def test_cv_plot_before_fit():
    with pytest.raises(NotFittedError):
        VCPCRCV().plot()


@pytest.mark.parametrize("times", [[np.nan], [-1.0], [np.inf], ["a"]])
def test_survival_times_are_checked(times):
    pytest.importorskip("lifelines")
    model = VCPCR(2, family="cox", n_init=1, random_state=0).fit(X0, COX_Y)
    with pytest.raises(ERRORS, match="times must"):
        model.predict_survival_function(X0[:2], times=times)


# ----------------------------------------------------- the other public API


@FUZZ
@given(p=st.integers(-3, 8), k=st.integers(-3, 8))
def test_random_partition(p, k):
    if p >= 1 and 1 <= k <= p:
        labels = random_partition(p, k, random_state=0)
        assert sorted(set(labels.tolist())) == list(range(k))
        return
    with pytest.raises(ValueError, match=r"n_features|n_clusters"):
        random_partition(p, k, random_state=0)


@FUZZ
@given(
    time=st.lists(
        st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=5
    ),
    event=st.lists(st.sampled_from([0, 1, 2, -1, True, 0.5]), min_size=1, max_size=5),
)
def test_surv(time, event):
    t, e = list(time), list(event)
    out, exc = _outcome(lambda: Surv(t, e))
    if exc is not None:
        assert re.search("time|event|length|same", str(exc))
    else:
        assert np.all(np.isfinite(out.to_numpy(dtype=float)))
        assert np.all(out.iloc[:, 0] >= 0)
    assert (t, e) == (list(time), list(event))


METRIC_ARGS = st.lists(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True, width=64),
        st.integers(-3, 3),
        st.just("a"),
    ),
    min_size=0,
    max_size=6,
)


@FUZZ
@given(a=METRIC_ARGS, b=METRIC_ARGS)
def test_metrics(a, b):
    for metric in (msep, mcc_support, mcc_clustering):
        value, exc = _outcome(lambda m=metric: m(a, b))
        if exc is not None:
            assert re.search("y_|labels|coef|length|same", str(exc)), str(exc)
        else:
            # msep >= 0; a correlation coefficient lies in [-1, 1] (or is nan
            # when a margin is empty)
            low = 0.0 if metric is msep else -1.0
            assert np.isnan(value) or low <= value <= (np.inf if low == 0 else 1.0)
    size, exc = _outcome(lambda: model_size(a))
    if exc is not None:
        assert "coef" in str(exc)
    else:
        assert 0 <= size <= len(a)


@FUZZ
@given(
    n=st.sampled_from([-1, 0, 1, 2.5, "a", 30]),
    rho=st.sampled_from([-0.1, 0.5, 1.5, float("nan")]),
    config=st.sampled_from([0, 1, 4, "a"]),
)
def test_make_paper_data(n, rho, config):
    data, exc = _outcome(lambda: make_paper_data(n, rho, config, random_state=0))
    if exc is not None:
        assert re.search("n_samples|rho|config", str(exc))
    else:
        assert np.all(np.isfinite(data.X))
        assert np.all(np.isfinite(data.y))


def test_cox_simulation_with_huge_effects():
    """Used to return infinite survival times."""
    with pytest.raises(ValueError, match="Use smaller coefs"):
        make_block_data(20, [3, 3], [1e3, -1e3], family="cox", random_state=0)


@pytest.mark.parametrize("delta", ["a", [np.nan], [], np.ones((2, 2))])
def test_compute_weights_delta(delta):
    with pytest.raises(ERRORS, match="delta"):
        compute_weights(X0, Y0, "ridge", delta=delta)


FRAME = pd.DataFrame(X0, columns=[f"g{j}" for j in range(12)]).assign(y=Y0)
TOKENS = ["y", "~", ".", "g0", "g1", "+", "-", "nope", "(", ")", "0", "1", ":", "*"]


@settings(FUZZ, max_examples=40)
@given(tokens=st.lists(st.sampled_from(TOKENS), min_size=0, max_size=7))
def test_formulas(tokens):
    formula = " ".join(tokens)
    before = FRAME.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. "no variable selected"
        model, exc = _outcome(
            lambda: VCPCR(2, formula=formula, n_init=1, random_state=0).fit(FRAME)
        )
    pd.testing.assert_frame_equal(FRAME, before)
    if exc is not None:
        assert re.search(r"formula|n_features=\d+ must be", str(exc)), str(exc)
    else:
        assert np.all(np.isfinite(model.predict(FRAME)))


def test_formula_names_the_unknown_column():
    frame = pd.DataFrame(X0, columns=[f"g{j}" for j in range(12)]).assign(y=Y0)
    with pytest.raises(ValueError, match="nope"):
        VCPCR(2, formula="y ~ nope").fit(frame)
