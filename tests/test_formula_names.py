"""Names are data, formulas are checked before they run (#46)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import needs_survival
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vcpcr import VCPCR
from vcpcr._formula import parse_formula

SENTINEL_DIR = Path(tempfile.mkdtemp(prefix="vcpcr_names_"))
SENTINEL = SENTINEL_DIR / "ran"
CODE = f"I(open({str(SENTINEL)!r}, 'w').close())"
FRAGMENTS = [
    "`",
    "'",
    '"',
    "\n",
    "+",
    "-",
    "*",
    "/",
    ":",
    "|",
    "~",
    "(",
    ")",
    "é",
    "ß",
    "1",
    "lambda",
    "class",
    " ",
    "_",
    f"` + {CODE} + `",
    "__import__('os')",
    "strata(",
    "a",
    "x",
]
KW = {"n_clusters": 2, "n_init": 1, "random_state": 0}
TRIED = {"n": 0}


def _frame(name, n=40, seed=0):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(n, 4))
    df = pd.DataFrame(G, columns=[f"g{j}" for j in range(4)])
    df[name] = rng.integers(0, 3, n).astype(float)
    eta = G[:, 0] + 0.5 * df[name].to_numpy()
    time = rng.exponential(np.exp(-eta))
    df["time"], df["event"] = time, (rng.random(n) < 0.8).astype(float)
    df["y"] = eta + rng.normal(size=n)
    return df


def _fits(name):
    """Every entry point taking a name; each fits or raises a vcpcr error."""
    df = _frame(name)
    quoted = "`" + name + "`"  # a formula is code: a name in it cannot hold `
    in_formula = (
        []
        if "`" in name
        else [
            lambda: VCPCR(formula=f"y ~ {quoted} | g0 + g1 + g2 + g3", **KW).fit(df),
            lambda: VCPCR(
                formula=f"Surv(time, event) ~ strata({quoted}) | g0 + g1 + g2 + g3",
                family="cox",
                **KW,
            ).fit(df),
            lambda: parse_formula(f"y ~ g0 + {quoted}", df),
        ]
    )
    calls = [
        *in_formula,
        lambda: VCPCR(formula="y ~ .", covariates=[name], **KW).fit(
            df.drop(columns=["time", "event"])
        ),
        lambda: VCPCR(
            formula="Surv(time, event) ~ . - y", family="cox", strata=[name], **KW
        ).fit(df),
    ]
    for call in calls:
        TRIED["n"] += 1
        try:
            call()
        except (ValueError, TypeError) as e:  # vcpcr's checks, with a message
            assert str(e)  # noqa: PT017
        assert not SENTINEL.exists(), f"the name {name!r} ran code"


@needs_survival  # the strata= routes are cox's
@settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4).map("".join))
def test_hostile_names_never_run(name):
    """Hostile column names are fitted or refused; none runs as code."""
    _fits(name)


def test_backquote_in_strata_is_refused_not_run():
    """A strata= name with a backquote used to run; it is refused now."""
    name = f"a` + {CODE} + `b"
    df = _frame(name)
    with pytest.raises(ValueError, match="backquote"):
        VCPCR(
            formula="Surv(time, event) ~ . - y", family="cox", strata=[name], **KW
        ).fit(df)
    assert not SENTINEL.exists()


@pytest.mark.parametrize(
    "term",
    [
        "I(__import__('os').system('touch {p}'))",
        "I(open('{p}', 'w').close())",
        'I(exec(\'open("{p}", "w")\'))',
        "I(getattr(g0, 'real'))",
        "I(g0.__class__)",
        "np.save('{p}', g0)",
    ],
)
def test_formula_allow_list_refuses_before_running(tmp_path, term):
    """Unsafe code in a formula is refused before formulaic evaluates it."""
    target = tmp_path / "f"
    target.write_text("keep")
    df = _frame("z")
    formula = "y ~ g0 + " + term.format(p=target)
    with pytest.raises(ValueError, match=r"may not use.*pandas"):
        parse_formula(formula, df)
    with pytest.raises(ValueError, match="may not use"):
        VCPCR(formula=formula, **KW).fit(df)
    assert target.read_text() == "keep"
    assert not (tmp_path / "f.npy").exists()


def test_allowed_formula_code_still_works():
    df = _frame("z").assign(y=lambda d: d.y.abs() + 1)
    res = parse_formula("np.log(y) ~ np.log(g0 ** 2) + I(g1 * 2) + center(g2)", df)
    assert res.feature_names == ["np.log(g0 ** 2)", "I(g1 * 2)", "center(g2)"]


def test_non_string_formula_is_a_vcpcr_type_error():
    with pytest.raises(TypeError, match="'formula' parameter must be a str"):
        VCPCR(formula=123).fit(_frame("z"))


def test_examples_tried_and_none_ran():
    """Runs after the property test (file order): report the count."""
    assert not SENTINEL.exists()
    print(f"hostile-name calls tried: {TRIED['n']}, executed: 0")
