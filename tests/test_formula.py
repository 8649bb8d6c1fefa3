"""Tests of vcpcr._formula: the formulaic glue (parse_formula, transform_new, Surv)."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from formulaic import model_matrix
from numpy.testing import assert_allclose

import vcpcr._formula as fm
from vcpcr._formula import (
    DesignSpec,
    Surv,
    formula_outcome,
    parse_formula,
    transform_new,
)
from vcpcr.exceptions import VCPCRWarning


def make_df(n=12, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "y": rng.normal(size=n),
            "g1": rng.uniform(1, 3, size=n),
            "g2": rng.normal(size=n),
            "sex": np.tile(["m", "f"], n // 2),
            "grade": pd.Categorical(np.tile(["lo", "mid", "hi"], n // 3)),
            "status": np.tile(["dead", "alive", "dead"], n // 3),
            "time": rng.uniform(1, 10, size=n),
            "event": np.tile([1, 0], n // 2),
        },
        index=[f"s{i}" for i in range(n)],
    )


def make_odd(n=10, seed=1):
    """Numeric columns with names formulaic must backquote, and assorted dtypes."""
    rng = np.random.default_rng(seed)
    cols = {
        "y": rng.normal(size=n),
        "my gene": rng.normal(size=n),
        "a.b": rng.normal(size=n),
        "a:b": rng.normal(size=n),
        "1x": rng.normal(size=n),
        "x[1]": rng.normal(size=n),
        "a`b": rng.normal(size=n),
        "C": rng.normal(size=n),
        "lambda": rng.normal(size=n),
        "ünï": rng.normal(size=n).astype(np.float32),
        "cnt": rng.integers(0, 5, size=n),
        "u8": rng.integers(0, 5, size=n).astype(np.uint8),
        "flag": rng.uniform(size=n) > 0.5,
        "nullable": pd.array(rng.integers(0, 9, size=n), dtype="Int64"),
        "time": rng.uniform(1, 9, size=n),
        "event": np.tile([True, False], n // 2),
    }
    return pd.DataFrame(cols, index=np.arange(100, 100 + n))


def formulaic_design(formula, df):
    """formulaic's own design (intercept dropped, as floats): the reference."""
    ctx = {"np": np, "Surv": fm._surv_factor}
    rhs = model_matrix(formula, df, context=ctx, na_action="raise").rhs
    drop = "Intercept" in rhs.model_spec.column_names
    return pd.DataFrame(rhs).iloc[:, int(drop) :].astype(np.float64)


def force_slow(monkeypatch):
    monkeypatch.setattr(fm, "_fast_path_columns", lambda *args: None)


# ------------------------------------------------------------ supported forms

FORMS = {
    "dot": ("y ~ . - sex - grade - status", "y", ["g1", "g2", "time", "event"]),
    "dot-categorical": (
        "y ~ . - time - event",
        "y",
        ["g1", "g2", "sex[T.m]", "grade[T.lo]", "grade[T.mid]", "status[T.dead]"],
    ),
    "explicit": ("y ~ g1 + sex", "y", ["g1", "sex[T.m]"]),
    "log-outcome": ("np.log(g1) ~ g2 + y", "np.log(g1)", ["g2", "y"]),
    "log-predictor": ("y ~ np.log(g1) + g2", "y", ["np.log(g1)", "g2"]),
    "no-intercept-0": ("y ~ g1 + sex + 0", "y", ["g1", "sex[T.m]"]),
    "no-intercept-1": ("y ~ g1 + sex - 1", "y", ["g1", "sex[T.m]"]),
    "interaction": ("y ~ g1:g2 + g1", "y", ["g1", "g1:g2"]),
}


@pytest.mark.parametrize(("formula", "yname", "names"), FORMS.values(), ids=list(FORMS))
def test_supported_forms(formula, yname, names):
    df = make_df()
    res = parse_formula(formula, df)
    assert res.yname == yname
    assert res.feature_names == names == list(res.X.columns)
    assert (res.X.dtypes == np.float64).all()
    assert res.X.index.equals(df.index)
    assert res.y.index.equals(df.index)
    assert res.n_dropped == 0
    assert isinstance(res.spec, DesignSpec)


def test_design_equals_formulaic_minus_intercept():
    df = make_df()
    for formula in ("y ~ . - time - event", "y ~ np.log(g1) + grade + sex:g2"):
        res = parse_formula(formula, df)
        pd.testing.assert_frame_equal(res.X, formulaic_design(formula, df))


def test_intercept_removal_keeps_reduced_rank_coding():
    df = make_df()
    full = parse_formula("y ~ g1 + grade", df).X
    for formula in ("y ~ g1 + grade - 1", "y ~ 0 + g1 + grade", "y ~ g1 + grade + 0"):
        pd.testing.assert_frame_equal(parse_formula(formula, df).X, full)
    assert "Intercept" not in full.columns


def test_numeric_outcome_and_transform():
    df = make_df()
    res = parse_formula("np.log(g1) ~ g2", df)
    assert_allclose(res.y.to_numpy(), np.log(df["g1"].to_numpy()), rtol=1e-15, atol=0)
    assert res.y.name == "np.log(g1)"


def test_string_outcome_returns_labels():
    df = make_df()
    res = parse_formula("status ~ g1 + g2", df)
    assert res.y.tolist() == df["status"].tolist()
    assert list(res.y.cat.categories) == ["alive", "dead"]
    assert res.yname == "status"
    assert res.feature_names == ["g1", "g2"]


def test_categorical_outcome_keeps_category_order():
    df = make_df()
    df["sex"] = pd.Categorical(df["sex"], categories=["m", "f"])
    res = parse_formula("sex ~ .", df)
    assert res.y.tolist() == df["sex"].tolist()
    assert list(res.y.cat.categories) == ["m", "f"]
    assert "sex[T.m]" not in res.feature_names  # '.' leaves the outcome out


def test_comparison_outcome_is_binary_and_excludes_column():
    df = make_df()
    res = parse_formula("I(status == 'dead') ~ .", df)
    assert res.y.tolist() == (df["status"] == "dead").astype(int).tolist()
    assert not any(name.startswith("status") for name in res.feature_names)


def test_string_dtype_columns_are_categorical():
    df = make_df()
    df["sex"] = df["sex"].astype("string")
    res = parse_formula("y ~ g1 + sex", df)
    assert res.feature_names == ["g1", "sex[T.m]"]


# ------------------------------------------------------------------- survival


def test_surv_in_formula():
    df = make_df()
    res = parse_formula("Surv(time, event) ~ g1 + sex", df)
    assert list(res.y.columns) == ["time", "event"]
    assert (res.y.dtypes == np.float64).all()
    assert res.y.index.equals(df.index)
    assert_allclose(res.y["time"], df["time"], rtol=0, atol=0)
    assert_allclose(res.y["event"], df["event"], rtol=0, atol=0)
    assert res.yname == "Surv(time, event)"


def test_surv_dot_excludes_time_and_event_and_takes_fast_path():
    df = make_df().drop(columns=["sex", "grade"])
    df["status"] = (df["status"] == "dead").astype(int)
    res = parse_formula("Surv(time, status) ~ .", df)
    assert res.feature_names == ["y", "g1", "g2", "event"]
    assert res.spec.model_spec is None
    assert res.y["event"].tolist() == df["status"].astype(float).tolist()


def test_surv_with_label_comparison():
    df = make_df()
    res = parse_formula("Surv(time, status == 'dead') ~ g1", df)
    assert res.y["event"].tolist() == (df["status"] == "dead").astype(float).tolist()


def test_surv_outside_formula():
    df = make_df()
    out = Surv(df.time, df.event)
    assert list(out.columns) == ["time", "event"]
    assert out.index.equals(df.index)
    assert (out.dtypes == np.float64).all()
    assert Surv([1, 2], [True, False])["event"].tolist() == [1.0, 0.0]
    assert Surv(np.array([1.5, 2.0]), [1, 1]).index.equals(pd.RangeIndex(2))


SURV_ERRORS = {
    "negative": ([-1.0, 2.0], [1, 0], ValueError, r"1 negative survival time"),
    "inf": ([np.inf, 2.0], [1, 0], ValueError, r"1 infinite survival time"),
    "event-1-2": ([1.0, 2.0], [1, 2], ValueError, r"status == 2"),
    "event-str": ([1.0, 2.0], ["dead", "alive"], TypeError, r"status == 'dead'"),
    "time-str": (["a", "b"], [1, 0], TypeError, r"must hold numeric times"),
    "nan": ([np.nan, 2.0], [1, 0], ValueError, r"1 missing survival time"),
    "length": ([1.0, 2.0, 3.0], [1, 0], ValueError, r"time has 3 values but event"),
    "2d": ([[1.0, 2.0]], [[1, 0]], ValueError, r"must be 1-D"),
}


@pytest.mark.parametrize(
    ("time", "event", "exc", "match"), SURV_ERRORS.values(), ids=list(SURV_ERRORS)
)
def test_surv_errors(time, event, exc, match):
    with pytest.raises(exc, match=match):
        Surv(time, event)


def test_surv_misaligned_series():
    with pytest.raises(ValueError, match="different indexes"):
        Surv(pd.Series([1.0, 2.0]), pd.Series([1, 0], index=[5, 6]))


def test_surv_error_inside_formula():
    df = make_df()
    df["event"] = df["event"] * 2
    with pytest.raises(ValueError, match=r"event must be 0/1"):
        parse_formula("Surv(time, event) ~ g1", df)


# ------------------------------------------------------ fast path == formulaic

FAST = {
    "dot": "y ~ .",
    "dot-minus-odd": "y ~ . - `my gene` - a.b - `x[1]` - lambda",
    "dot-no-intercept": "y ~ 0 + . - cnt",
    "dot-minus-one": "y ~ -1 + . - flag",
    "log-outcome": "np.log(y ** 2) ~ .",
    "odd-outcome": "`a:b` ~ .",
    "surv": "Surv(time, event) ~ .",
}


@pytest.mark.parametrize("formula", FAST.values(), ids=list(FAST))
def test_fast_path_equals_slow_path_and_formulaic(formula, monkeypatch):
    df = make_odd()
    fast = parse_formula(formula, df)
    assert fast.spec.model_spec is None
    pd.testing.assert_frame_equal(fast.X, formulaic_design(formula, df))
    force_slow(monkeypatch)
    slow = parse_formula(formula, df)
    assert slow.spec.model_spec is not None
    pd.testing.assert_frame_equal(fast.X, slow.X)
    assert fast.feature_names == slow.feature_names
    assert fast.yname == slow.yname
    if isinstance(fast.y, pd.DataFrame):
        pd.testing.assert_frame_equal(fast.y, slow.y)
    else:
        pd.testing.assert_series_equal(fast.y, slow.y)
    pd.testing.assert_frame_equal(
        transform_new(fast.spec, df), transform_new(slow.spec, df)
    )


def test_fast_path_drops_missing_rows_like_slow_path(monkeypatch):
    df = make_odd()
    df.loc[df.index[2], "my gene"] = np.nan
    with pytest.warns(VCPCRWarning, match="Dropped 1 of 10 rows"):
        fast = parse_formula("y ~ .", df, missing="drop")
    force_slow(monkeypatch)
    with pytest.warns(VCPCRWarning, match="Dropped 1 of 10 rows"):
        slow = parse_formula("y ~ .", df, missing="drop")
    pd.testing.assert_frame_equal(fast.X, slow.X)
    assert fast.n_dropped == slow.n_dropped == 1


@pytest.mark.parametrize(
    "formula", ["status ~ .", "I(status == 'b') ~ .", "C(status) ~ . - `my gene`"]
)
def test_fast_path_label_outcomes(formula, monkeypatch):
    df = make_odd().assign(status=lambda d: np.where(d["y"] > 0, "a", "b"))
    df = df.drop(columns="C")  # a column 'C' would shadow formulaic's C()
    fast = parse_formula(formula, df)
    assert fast.spec.model_spec is None
    assert "status" not in fast.feature_names
    force_slow(monkeypatch)
    slow = parse_formula(formula, df)
    pd.testing.assert_series_equal(fast.y, slow.y)
    pd.testing.assert_frame_equal(fast.X, slow.X)


NOT_FAST = {
    "categorical": ("y ~ .", make_df),
    "plus-name": ("y ~ . + g1", lambda: make_df()[["y", "g1", "g2"]]),
    "transform": ("y ~ . - g1 + np.log(g1)", lambda: make_df()[["y", "g1", "g2"]]),
    "interaction": ("y ~ .:g1", lambda: make_df()[["y", "g1", "g2"]]),
    "explicit": ("y ~ g1 + g2", lambda: make_df()[["y", "g1", "g2"]]),
}


@pytest.mark.parametrize(("formula", "data"), NOT_FAST.values(), ids=list(NOT_FAST))
def test_other_formulas_use_formulaic(formula, data):
    df = data()
    res = parse_formula(formula, df)
    assert res.spec.model_spec is not None
    pd.testing.assert_frame_equal(res.X, formulaic_design(formula, df))


def test_fast_path_taken_on_wide_data():
    """Wide numeric data takes the fast path (timing: benchmarks/bench_formula.py)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        rng.normal(size=(50, 20_000)), columns=[f"g{j}" for j in range(20_000)]
    )
    df.insert(0, "y", rng.normal(size=50))
    res = parse_formula("y ~ . - g3", df)
    assert res.X.shape == (50, 19_999)
    assert "g3" not in res.X.columns
    assert res.spec.model_spec is None


# ------------------------------------------------------------- transform_new


def test_transform_new_subset_of_levels_and_no_outcome():
    df = make_df()
    res = parse_formula("y ~ g1 + grade + sex", df)
    new = df.loc[df["grade"] == "mid", ["g1", "grade", "sex"]]
    new["grade"] = new["grade"].astype(str)  # only one level, not categorical
    X = transform_new(res.spec, new)
    assert list(X.columns) == res.feature_names
    pd.testing.assert_frame_equal(X, res.X.loc[new.index])


def test_transform_new_reuses_stateful_transforms():
    df = make_df()
    res = parse_formula("y ~ center(g1) + g2", df)
    new = df.iloc[:3]
    X = transform_new(res.spec, new)
    expected = new["g1"] - df["g1"].mean()
    assert_allclose(X["center(g1)"], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("formula", ["y ~ g1 + sex", "y ~ g1 + C(sex)"])
def test_transform_new_unseen_level(formula):
    res = parse_formula(formula, make_df())
    new = pd.DataFrame({"g1": [1.0, 2.0], "sex": ["m", "x"]})
    with pytest.raises(ValueError, match=r"not (in|seen in) the training data"):
        transform_new(res.spec, new)


def test_transform_new_errors():
    df = make_df()
    slow = parse_formula("y ~ g1 + sex", df).spec
    fast = parse_formula("y ~ . - sex - grade - status", df).spec
    with pytest.raises(ValueError, match=r"lacks 1 column\(s\).*\['sex'\]"):
        transform_new(slow, df.drop(columns="sex"))
    new = df.copy()
    new.loc[new.index[0], "g1"] = np.nan
    with pytest.raises(ValueError, match=r"\{'g1': 1\}; impute them"):
        transform_new(slow, new)
    # A copied numeric column keeps its NaN: the model checks what it uses.
    assert np.isnan(transform_new(fast, new)["g1"].iloc[0])
    new = df.astype({"g2": str})
    with pytest.raises(TypeError, match=r"'g2'.*were numeric in the training"):
        transform_new(fast, new)
    with pytest.raises(TypeError, match="'spec' parameter of transform_new"):
        transform_new("y ~ g1", df)
    with pytest.raises(TypeError, match="'data' parameter must be a pandas"):
        transform_new(fast, df.to_numpy())


@pytest.mark.parametrize(
    "formula", ["y ~ . - sex - grade - status", "y ~ np.log(g1) + grade"]
)
def test_spec_pickles(formula):
    df = make_df()
    res = parse_formula(formula, df)
    spec = pickle.loads(pickle.dumps(res.spec))
    assert spec.feature_names == res.spec.feature_names
    pd.testing.assert_frame_equal(transform_new(spec, df.iloc[2:7]), res.X.iloc[2:7])


# ------------------------------------------------------------- missing values


def test_missing_values_raise_with_counts():
    df = make_df()
    df.loc[df.index[[0, 3]], "g2"] = np.nan
    df.loc[df.index[5], "sex"] = None
    df.loc[df.index[1], "time"] = np.nan  # not used by the formula: ignored
    msg = r"contain missing values: \{'g2': 2, 'sex': 1\}; drop or impute them"
    with pytest.raises(ValueError, match=msg + r", or pass missing='drop'"):
        parse_formula("y ~ g1 + g2 + sex", df)
    assert parse_formula("y ~ g1", df).n_dropped == 0


def test_missing_values_dropped_with_warning():
    df = make_df()
    df.loc[df.index[[0, 3]], "g2"] = np.nan
    df.loc[df.index[[3, 5]], "y"] = np.nan
    with pytest.warns(VCPCRWarning, match=r"Dropped 3 of 12 rows"):
        res = parse_formula("y ~ g2 + sex", df, missing="drop")
    assert res.n_dropped == 3
    keep = df.index.delete([0, 3, 5])
    assert res.X.index.equals(keep)
    assert res.y.index.equals(keep)


def test_two_part_columns_removed_from_dot_are_not_checked():
    """``y ~ g1 | . - g2`` does not read g2: its missing values do not matter
    (as for ``y ~ . - g2``)."""
    df = make_df().drop(columns=["time", "event"])
    df.loc[df.index[[0, 3]], "g2"] = np.nan
    res = parse_formula("y ~ g1 | . - g2", df)
    assert "g2" not in res.feature_names
    assert res.n_dropped == 0
    assert len(res.X) == len(df)
    with pytest.raises(ValueError, match=r"\{'g2': 2\}"):
        parse_formula("y ~ g1 | .", df)


# ------------------------------------ columns named like formulaic's transforms


def make_shadowing(n=12, seed=0):
    """``center`` (strings) and ``scale`` (numbers) are data columns and the
    names of formulaic transforms, which its ``required_variables`` leaves out;
    formulaic reads the data first, so the formula reads the columns."""
    df = make_df(n, seed)[["y", "g1", "g2"]]
    return df.assign(center=np.tile(["a", "b", "b"], n // 3), scale=df["g1"] + 1.0)


SHADOWING = {
    # formula: (covariates, center's design columns: source_groups()["center"])
    "term-and-dot": ("y ~ center + .", (), ("center[T.b]",)),
    "strata()-and-dot": ("y ~ strata(center) + .", (), ("center[T.b]",)),
    "covariate": ("y ~ center | .", ("center[T.b]",), ("center[T.b]",)),
    "C()-covariate": ("y ~ C(center) | .", ("C(center)[T.b]",), ("C(center)[T.b]",)),
    "clustered": ("y ~ g1 | . + center", ("g1",), ("center[T.b]",)),
    "dot": ("y ~ .", (), ("center[T.b]",)),
}


@pytest.mark.parametrize(
    ("formula", "covariates", "dummies"), SHADOWING.values(), ids=list(SHADOWING)
)
def test_column_named_like_a_transform_is_read(formula, covariates, dummies):
    """The spec names ``center`` among the columns read (its design columns
    are found from it, as for strata(center); new data must have it), once."""
    df = make_shadowing()
    res = parse_formula(formula, df)
    assert "center" in res.spec.columns
    assert fm.source_groups(res.spec)["center"] == dummies
    assert res.covariates == covariates
    # once: the ``.`` (of either part) does not take ``center`` again
    assert [name for name in res.feature_names if "center" in name] == [*dummies]
    with pytest.raises(ValueError, match=r"data lacks 1 column\(s\) .*\['center'\]"):
        transform_new(res.spec, df.drop(columns="center"))


@pytest.mark.parametrize("formula", ["y ~ .", "y ~ center + g1", "y ~ g1 | ."])
def test_missing_values_of_a_column_named_like_a_transform_are_dropped(formula):
    df = make_shadowing()
    df.loc[df.index[4], "center"] = None
    with pytest.warns(VCPCRWarning, match=r"Dropped 1 of 12 .*'center': 1"):
        res = parse_formula(formula, df, missing="drop")
    assert res.n_dropped == 1
    assert df.index[4] not in res.X.index


@pytest.mark.parametrize("slow", [False, True], ids=["fast", "slow"])
def test_outcome_named_like_a_transform_is_not_a_predictor(slow, monkeypatch):
    """``np.log(scale) ~ .``: ``.`` leaves out the outcome's column ``scale``."""
    df = make_shadowing().drop(columns=["y", "center"])
    if slow:
        force_slow(monkeypatch)
    res = parse_formula("np.log(scale) ~ .", df)
    assert res.feature_names == ["g1", "g2"]
    assert_allclose(res.y, np.log(df["scale"]), rtol=1e-12)


def test_unused_categories_are_left_out():
    """A category without rows would be an all-zero dummy (or an empty
    reference level); new data with it is an unseen level."""
    df = make_df()
    df["grade"] = df["grade"].cat.add_categories(["aa", "zz"])
    res = parse_formula("y ~ grade", df)
    assert res.feature_names == ["grade[T.lo]", "grade[T.mid]"]
    with pytest.raises(ValueError, match=r"level\(s\) \['zz'\]"):
        transform_new(res.spec, df.assign(grade="zz"))


def test_missing_outcome_in_surv_dropped():
    df = make_df()
    df.loc[df.index[4], "time"] = np.nan
    with pytest.raises(ValueError, match=r"\{'time': 1\}"):
        parse_formula("Surv(time, event) ~ g1", df)
    with pytest.warns(VCPCRWarning, match="Dropped 1 of 12"):
        res = parse_formula("Surv(time, event) ~ g1", df, missing="drop")
    assert len(res.y) == 11


def test_all_rows_missing():
    df = make_df()
    df["g2"] = np.nan
    with pytest.raises(ValueError, match="Every one of the 12 rows"):
        parse_formula("y ~ g2", df, missing="drop")


def test_nan_created_by_transform_is_never_dropped_silently():
    df = make_df()
    df.loc[df.index[0], "g2"] = -1.0
    formula = "y ~ {np.where(g2 > 0, g2, np.nan)}"  # column methods are refused (#46)
    for missing in ("raise", "drop"):
        with pytest.raises(ValueError, match=r"null values after evaluation"):
            parse_formula(formula, df, missing=missing)


# --------------------------------------------------------------------- errors

ERRORS = {
    "formula-not-str": (42, TypeError, r"'formula' parameter .* must be a str"),
    "no-lhs": ("~ g1", ValueError, r"no left-hand side"),
    "no-tilde": ("g1 + g2", ValueError, r"no left-hand side"),
    "unknown-rhs": ("y ~ g1 + gene7", ValueError, r"uses \['gene7'\].*not columns"),
    "unknown-minus": ("y ~ . - typo", ValueError, r"uses \['typo'\]"),
    "unknown-lhs": ("wt ~ g1", ValueError, r"uses \['wt'\]"),
    "unquoted": ("y ~ my gene", ValueError, r"backquotes"),
    "syntax": ("y ~ g1 +", ValueError, r"Invalid formula 'y ~ g1 \+'"),
    "syntax-dot": ("y ~ . + *", ValueError, r"Invalid formula"),
    "syntax-lhs": ("y +~ .", ValueError, r"Invalid formula"),
    "multipart": ("y ~ g1 | g2 | g3", ValueError, r"more than one '\\|'"),
    "two-outcomes": ("y + g1 ~ g2", ValueError, r"single outcome.*\['y', 'g1'\]"),
    "no-predictors": ("y ~ 1", ValueError, r"has no predictors"),
    "no-predictors-dot": (
        "y ~ . - g1 - g2 - sex - grade - status - time - event",
        ValueError,
        r"has no predictors",
    ),
}


@pytest.mark.parametrize(("formula", "exc", "match"), ERRORS.values(), ids=list(ERRORS))
def test_formula_errors(formula, exc, match):
    with pytest.raises(exc, match=match):
        parse_formula(formula, make_df())


def test_data_errors():
    df = make_df()
    with pytest.raises(TypeError, match="'data' parameter must be a pandas"):
        parse_formula("y ~ g1", df.to_dict())
    with pytest.raises(TypeError, match=r"column names must be strings; got \[0, 1\]"):
        parse_formula("y ~ .", pd.DataFrame(np.ones((3, 2))).assign(y=1.0))
    dup = pd.concat([df[["y", "g1"]], df[["g1"]]], axis=1)
    with pytest.raises(ValueError, match=r"duplicate column names \['g1'\]"):
        parse_formula("y ~ .", dup)
    with pytest.raises(ValueError, match=r"'missing' parameter .* Got 'omit'"):
        parse_formula("y ~ g1", df, missing="omit")
    df["when"] = pd.Timestamp("2020-01-01")
    with pytest.raises(TypeError, match=r"\{'when': 'datetime64"):
        parse_formula("y ~ g1 + when", df)


def test_column_name_clashes_are_errors():
    """formulaic silently keeps one of two equally named columns."""
    df = make_df()[["y", "g1", "sex"]].assign(Intercept=1.5)
    with pytest.raises(ValueError, match=r"several columns named \['Intercept'\]"):
        parse_formula("y ~ g1 + Intercept", df)
    with pytest.raises(ValueError, match=r"several columns named \['Intercept'\]"):
        parse_formula("y ~ .", df.drop(columns="sex"))  # numeric: fast path declines
    df = df.drop(columns="Intercept").assign(**{"sex[T.m]": 0.5})
    with pytest.raises(ValueError, match=r"several columns named \['sex\[T.m\]'\]"):
        parse_formula("y ~ .", df)


def test_long_lists_are_abbreviated():
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(5, 30)), columns=[f"g{j}" for j in range(30)])
    df.iloc[0, 1:] = np.nan
    df["y"] = 1.0
    with pytest.raises(ValueError, match=r"'g10': 1\} and 19 more; drop or impute"):
        parse_formula("y ~ .", df)


def test_drop_warning_points_at_the_caller():
    df = make_df()
    df.loc[df.index[0], "g1"] = np.nan
    with pytest.warns(VCPCRWarning) as record:
        parse_formula("y ~ g1", df, missing="drop")
    assert record[0].filename == __file__


# ------------------------------------------------------------ outcome only


@pytest.mark.parametrize(
    "formula",
    [
        "y ~ .",
        "np.log(g1) ~ g2 + sex",
        "I(status == 'dead') ~ .",
        "status ~ g1",
        "Surv(time, event) ~ g1 + C(sex) | .",
        "center(y) ~ g1",
    ],
    ids=["plain", "transform", "comparison", "labels", "two-part-surv", "stateful"],
)
def test_formula_outcome_is_parse_formula_y(formula):
    df = make_df()
    expected = parse_formula(formula, df).y
    got = formula_outcome(formula, df)
    if isinstance(expected, pd.DataFrame):
        pd.testing.assert_frame_equal(got, expected)
    else:
        pd.testing.assert_series_equal(got, expected)


def test_formula_outcome_reads_only_the_outcome():
    """Predictors may be absent or missing; a missing outcome is named."""
    df = make_df()
    df.loc[df.index[0], "g2"] = np.nan
    y = formula_outcome("y ~ g1 + g2", df.drop(columns="g1"))
    pd.testing.assert_series_equal(y, df["y"])
    df.loc[df.index[2], "y"] = np.nan
    with pytest.raises(ValueError, match=r"\{'y': 1\}; drop those rows before"):
        formula_outcome("y ~ g1 + g2", df)


@pytest.mark.parametrize(
    "formula",
    ["y ~ y + a", "y ~ np.log(y) + .", "np.log(y) ~ y + b", "y ~ a | y + b"],
    ids=["plain", "transform", "lhs-transform", "two-part"],
)
def test_the_outcome_on_the_right_hand_side_is_an_error(formula):
    """R drops it with a warning; before, it was fitted (in-sample R^2 1.0)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(1, 2, size=(20, 3)), columns=["y", "a", "b"])
    with pytest.raises(ValueError, match=r"uses the outcome's column\(s\) \['y'\]"):
        parse_formula(formula, df)
