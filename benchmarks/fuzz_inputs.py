"""Fuzz matrix of vcpcr's public entry points against hostile input (#46).

Run::

    cd /work/wt-fuzz && python benchmarks/fuzz_inputs.py [--timeout 30] [--fresh]

A case is (entry point, input variant). vcpcr is imported once in this parent;
each case runs in a forked child (two at a time) with a wall-clock timeout and
an address-space limit (RLIMIT_AS, 4 GB). Results are appended to
``benchmarks/results/fuzz_inputs.jsonl`` as they finish, so an interrupted run
resumes where it stopped (``--fresh`` starts over). The table (summary by outcome
and entry point, then every non-clear case) goes to stdout and to
``benchmarks/results/fuzz_inputs.txt``. Nothing is downloaded.

Outcomes:

- clear error: ValueError/TypeError/ImportError whose innermost raising frame is
  inside the vcpcr package (or whose message names vcpcr).
- right result: returned, and passed the case's reference check (equivalent
  input gives the same numbers as the plain call; numbers finite), or returned
  non-finite numbers / accepted NaN-inf input while warning.
- foreign exception: any other exception (raised inside numpy/pandas/sklearn/
  formulaic/lifelines..., or IndexError/KeyError/AttributeError/LinAlgError...).
- silent wrong: returned but failed the reference check, or returned NaN/inf,
  or accepted NaN/inf input, without any warning.
- hang: the child passed the timeout. (A child killed by the memory limit or a
  signal is reported as foreign with the signal.)
- data loss: an input array/frame was modified in place (pickle hash before and
  after the call).
- code run: a sentinel file named by a hostile column name or formula appeared.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import os
import random
import resource
import signal
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import matplotlib

# the vcpcr of the checkout this script sits in, not an editable install elsewhere
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
matplotlib.use("Agg")

import numpy as np
import pandas as pd

import vcpcr
import vcpcr.calibration as cal
import vcpcr.datasets as ds
import vcpcr.external as ext
import vcpcr.inference as inf
import vcpcr.metrics as met
import vcpcr.plotting as plt_
import vcpcr.simulate as sim
import vcpcr.validation as val

try:
    import pyarrow  # noqa: F401

    HAVE_ARROW = True
except ImportError:
    HAVE_ARROW = False

RESULTS = Path(__file__).parent / "results"
VCPCR_DIR = str(Path(vcpcr.__file__).parent)
TMP = Path(tempfile.mkdtemp(prefix="vcpcr_fuzz_"))
SENTINEL = "SENTINEL"  # relative: each child runs in its own empty directory
N, P = 40, 6
MODULES = {
    "vcpcr": vcpcr,
    "vcpcr.inference": inf,
    "vcpcr.validation": val,
    "vcpcr.calibration": cal,
    "vcpcr.external": ext,
    "vcpcr.metrics": met,
    "vcpcr.plotting": plt_,
    "vcpcr.simulate": sim,
    "vcpcr.datasets": ds,
}


# --------------------------------------------------------------------------- data
def base(family):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(N, P)), columns=[f"g{i}" for i in range(P)])
    X.iloc[:, :3] += rng.normal(size=(N, 1))
    X["c0"] = rng.normal(size=N)
    eta = X["g0"] + X["g1"] + 0.5 * X["c0"]
    if family == "gaussian":
        y = pd.Series(eta + rng.normal(size=N), name="y")
    elif family == "binomial":
        y = pd.Series((eta + rng.normal(size=N) > 0).astype(int), name="y")
    else:
        t = rng.exponential(np.exp(-eta))
        e = (rng.uniform(size=N) < 0.8).astype(float)
        y = vcpcr.Surv(t, e)
        y["strat"] = np.repeat([0, 1], N // 2)
        y = y[["time", "event"]]
        X["s0"] = np.repeat([0, 1], N // 2)
    return X, y


def _set(X, val, col=0, row=0):
    X = X.copy()
    X.iloc[row, col] = val
    return X


def _yset(y, val):
    y = y.copy()
    if isinstance(y, pd.DataFrame):
        y.iloc[0, 0] = val
    else:
        y = y.astype(float)
        y.iloc[0] = val
    return y


def _rename(X, name):
    X = X.copy()
    cols = list(X.columns)
    cols[1] = name
    X.columns = cols
    return X


HOSTILE_NAMES = {
    "backquote": "g`1",
    "quote": "g'1\"",
    "newline": "g\n1",
    "os_system": f"__import__('os').system('touch {SENTINEL}')",
    "open_write": f"open('{SENTINEL}','w').close()",
    "formula_ops": "a + b ~ c | d",
    "unicode": "γένος_🧬",
    "keyword": "lambda",
    "int_label": 7,
    "float_label": 1.5,
    "empty": "",
    "dup_name": "g0",
    "space": "my gene",
}


def x_variants(family):
    """Variants (name, fn(X, y) -> (X, y), kind). kind: 'plain', 'equiv' (must
    equal the base call), 'nonfinite' (NaN/inf must not be accepted silently)."""
    v = []
    for nm, bad in [("X_nan", np.nan), ("X_inf", np.inf), ("X_-inf", -np.inf)]:
        v.append((nm, lambda X, y, bad=bad: (_set(X, bad), y), "nonfinite"))
    v += [
        ("X_1e300", lambda X, y: (_set(X, 1e300), y), "plain"),
        ("X_1e-300", lambda X, y: (_set(X, 1e-300), y), "plain"),
        ("X_all_1e300", lambda X, y: (X * 1e300, y), "plain"),
        ("X_all_1e-300", lambda X, y: (X * 1e-300, y), "plain"),
        ("X_const_col", lambda X, y: (X.assign(g2=3.0), y), "plain"),
        ("X_all_const", lambda X, y: (X * 0 + 1.0, y), "plain"),
        ("rows_0", lambda X, y: (X.iloc[:0], y.iloc[:0]), "plain"),
        ("rows_1", lambda X, y: (X.iloc[:1], y.iloc[:1]), "plain"),
        ("rows_2", lambda X, y: (X.iloc[:2], y.iloc[:2]), "plain"),
        ("cols_0", lambda X, y: (X.iloc[:, :0], y), "plain"),
        ("cols_1", lambda X, y: (X.iloc[:, :1], y), "plain"),
        (
            "ragged_list",
            lambda X, y: ([list(r) for r in X.values[:-1]] + [[1.0]], y),
            "plain",
        ),
        ("X_1d", lambda X, y: (X.values[:, 0], y), "plain"),
        ("X_3d", lambda X, y: (X.values[:, :, None], y), "plain"),
        ("X_numpy", lambda X, y: (X.values, y), "plain"),
        ("X_list", lambda X, y: (X.values.tolist(), y), "plain"),
        ("X_int", lambda X, y: ((X * 10).round().astype(int), y), "plain"),
        ("X_bool", lambda X, y: (X > 0, y), "plain"),
        ("X_object_num", lambda X, y: (X.astype(object), y), "equiv"),
        (
            "X_object_str",
            lambda X, y: (X.assign(g3=["a", "b"] * (len(X) // 2)), y),
            "plain",
        ),
        (
            "X_category",
            lambda X, y: (X.assign(g3=pd.Categorical(["a", "b"] * (len(X) // 2))), y),
            "plain",
        ),
        (
            "X_datetime",
            lambda X, y: (X.assign(g3=pd.date_range("2020", periods=len(X))), y),
            "plain",
        ),
        ("X_Int64", lambda X, y: ((X * 10).round().astype("Int64"), y), "plain"),
        ("X_Float64", lambda X, y: (X.astype("Float64"), y), "equiv"),
        (
            "X_Float64_NA",
            lambda X, y: (_set(X.astype("Float64"), pd.NA), y),
            "nonfinite",
        ),
        ("X_boolean", lambda X, y: ((X > 0).astype("boolean"), y), "plain"),
        ("X_mixed_str_num", lambda X, y: (_set(X.astype(object), "1.5"), y), "plain"),
        ("X_dup_rows_index", lambda X, y: (X.set_axis([0] * len(X)), y), "plain"),
        (
            "X_multiindex_cols",
            lambda X, y: (
                X.set_axis(
                    pd.MultiIndex.from_tuples([(c, "a") for c in X.columns]), axis=1
                ),
                y,
            ),
            "plain",
        ),
        ("X_cols_reordered", lambda X, y: (X[X.columns[::-1]], y), "equiv"),
        (
            "y_shuffled_index",
            lambda X, y: (X, y.sample(frac=1.0, random_state=1)),
            "equiv",
        ),
        (
            "y_foreign_index",
            lambda X, y: (X, y.set_axis(np.arange(len(y)) + 1000)),
            "plain",
        ),
        ("y_numpy", lambda X, y: (X, y.to_numpy()), "equiv"),
        ("y_short", lambda X, y: (X, y.iloc[:-3]), "plain"),
        ("y_dict", lambda X, y: (X, y.to_dict()), "plain"),
        ("y_scalar", lambda X, y: (X, 1.0), "plain"),
        ("y_str", lambda X, y: (X, "y"), "plain"),
        ("y_None", lambda X, y: (X, None), "plain"),
        ("y_nan", lambda X, y: (X, _yset(y, np.nan)), "nonfinite"),
        ("y_inf", lambda X, y: (X, _yset(y, np.inf)), "nonfinite"),
        ("y_1e300", lambda X, y: (X, _yset(y, 1e300)), "plain"),
        ("y_1e-300", lambda X, y: (X, _yset(y, 1e-300)), "plain"),
        ("rows_shuffled_both", lambda X, y: (X.iloc[::-1], y.iloc[::-1]), "plain"),
    ]
    if HAVE_ARROW:
        v += [
            (
                "X_arrow_str",
                lambda X, y: (
                    X.assign(
                        g3=pd.array(["a", "b"] * (len(X) // 2), dtype="string[pyarrow]")
                    ),
                    y,
                ),
                "plain",
            ),
            ("X_arrow_double", lambda X, y: (X.astype("double[pyarrow]"), y), "equiv"),
        ]
    for nm, name in HOSTILE_NAMES.items():
        v.append((f"name_{nm}", lambda X, y, name=name: (_rename(X, name), y), "plain"))
    if family == "binomial":
        v += [
            ("bin_one_class", lambda X, y: (X, y * 0), "plain"),
            (
                "bin_three_class",
                lambda X, y: (X, y + (np.arange(len(y)) % 3 == 0)),
                "plain",
            ),
            ("bin_labels_12", lambda X, y: (X, y + 1), "plain"),
            ("bin_labels_str", lambda X, y: (X, y.map({0: "no", 1: "yes"})), "plain"),
            ("bin_bool", lambda X, y: (X, y.astype(bool)), "plain"),
            (
                "bin_boolean_NA",
                lambda X, y: (X, _yset(y.astype("boolean").astype(object), pd.NA)),
                "nonfinite",
            ),
            (
                "bin_cv_gt_class",
                lambda X, y: (X, y * 0 + (np.arange(len(y)) < 2)),
                "plain",
            ),
        ]
    if family == "cox":
        v += [
            (
                "cox_neg_time",
                lambda X, y: (X, y.assign(time=lambda d: d.time - 1.0)),
                "plain",
            ),
            ("cox_zero_time", lambda X, y: (X, y.assign(time=0.0 * y.time)), "plain"),
            ("cox_all_censored", lambda X, y: (X, y.assign(event=0.0)), "plain"),
            ("cox_swapped_cols", lambda X, y: (X, y[["event", "time"]]), "equiv"),
            (
                "cox_swapped_values",
                lambda X, y: (X, y.set_axis(["event", "time"], axis=1)),
                "plain",
            ),
            ("cox_event_2", lambda X, y: (X, y.assign(event=2.0 * y.event)), "plain"),
            ("cox_numpy_2col", lambda X, y: (X, y.to_numpy()), "plain"),
            (
                "cox_structured",
                lambda X, y: (
                    X,
                    np.rec.fromarrays(
                        [y.event.astype(bool), y.time], names="event,time"
                    ),
                ),
                "plain",
            ),
            ("cox_1col", lambda X, y: (X, y[["time"]]), "plain"),
            ("cox_time_series", lambda X, y: (X, y["time"]), "plain"),
            (
                "cox_one_event",
                lambda X, y: (
                    X,
                    y.assign(event=(np.arange(len(y)) == 0).astype(float)),
                ),
                "plain",
            ),
        ]
    return v


# ---------------------------------------------------------------- entry points
def small(family, **kw):
    return vcpcr.VCPCR(2, family=family, n_init=1, random_state=0, **kw)


def small_cv(family, **kw):
    return vcpcr.VCPCRCV((2,), family=family, n_init=1, cv=3, random_state=0, **kw)


FITTED = {}


def fitted(family, cv=False, **kw):
    key = (family, cv, tuple(sorted(kw.items())))
    if key not in FITTED:
        X, y = base(family)
        est = small_cv(family, **kw) if cv else small(family, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            FITTED[key] = est.fit(X, y)
    return FITTED[key]


def _pred(m, family):
    X, _ = base(family)
    return m.predict(X)


DATA_EPS = {}  # name -> (family, fn(X, y), covered public objects)
USES = {}  # name -> the inputs the entry point reads: {"X", "y"}
POSITIONAL = set()  # entry points that pair y with a plain array by position
BY_NAME = set()  # entry points whose fitted model reads X's columns by name


def data_ep(name, family, covers, uses="Xy", positional=False, by_name=False):
    """Register ``fn(X, y)``; ``uses`` names the inputs it reads (a variant that
    changes only an unread input is not run), ``positional`` marks entry points
    whose y meets a plain array (a shuffled index there is not a defect),
    ``by_name`` those where reordered columns must give the same numbers (a fit
    on reordered columns draws other random partitions: not an equivalence)."""

    def deco(fn):
        DATA_EPS[name] = (family, fn, covers)
        USES[name] = set(uses)
        if positional:
            POSITIONAL.add(name)
        if by_name:
            BY_NAME.add(name)
        return fn

    return deco


for fam in ("gaussian", "binomial", "cox"):
    data_ep(f"VCPCR[{fam}].fit", fam, ["vcpcr.VCPCR"])(
        lambda X, y, f=fam: _pred(small(f).fit(X, y), f)
    )
    data_ep(f"VCPCR[{fam}].predict", fam, ["vcpcr.VCPCR"], uses="X", by_name=True)(
        lambda X, y, f=fam: fitted(f).predict(X)
    )
    data_ep(f"VCPCR[{fam}].score", fam, ["vcpcr.VCPCR"], by_name=True)(
        lambda X, y, f=fam: fitted(f).score(X, y)
    )
    data_ep(f"VCPCR[{fam}].summary", fam, ["vcpcr.VCPCR"])(
        lambda X, y, f=fam: str(small(f).fit(X, y).summary())
    )
    data_ep(f"VCPCR[{fam},covariates].fit", fam, ["vcpcr.VCPCR"])(
        lambda X, y, f=fam: _pred(small(f, covariates="c0").fit(X, y), f)
    )
    data_ep(f"VCPCRCV[{fam}].fit", fam, ["vcpcr.VCPCRCV"])(
        lambda X, y, f=fam: _pred(small_cv(f).fit(X, y), f)
    )
    data_ep(f"VCPCRCV[{fam}].predict", fam, ["vcpcr.VCPCRCV"], uses="X", by_name=True)(
        lambda X, y, f=fam: fitted(f, True).predict(X)
    )
data_ep("VCPCR[cox,strata].fit", "cox", ["vcpcr.VCPCR"])(
    lambda X, y: _pred(small("cox", strata="s0").fit(X, y), "cox")
)
data_ep("VCPCRCV[cox,covariates].fit", "cox", ["vcpcr.VCPCRCV"])(
    lambda X, y: _pred(small_cv("cox", covariates="c0").fit(X, y), "cox")
)
data_ep("VCPCRCV[gaussian].score", "gaussian", ["vcpcr.VCPCRCV"], by_name=True)(
    lambda X, y: fitted("gaussian", True).score(X, y)
)
data_ep("sos_nmf", "gaussian", ["vcpcr.sos_nmf", "vcpcr.SOSNMFResult"], uses="X")(
    lambda X, y: vcpcr.sos_nmf(X, 2, random_state=0).V
)
data_ep(
    "lambda_max", "gaussian", ["vcpcr.lambda_max", "vcpcr.random_partition"], uses="X"
)(
    lambda X, y: vcpcr.lambda_max(
        X, vcpcr.random_partition(np.shape(X)[1] if np.ndim(X) == 2 else 1, 2, 0)
    )
)
data_ep("compute_weights[gaussian]", "gaussian", ["vcpcr.compute_weights"])(
    lambda X, y: vcpcr.compute_weights(X, y)
)
data_ep("compute_weights[cox]", "cox", ["vcpcr.compute_weights"])(
    lambda X, y: vcpcr.compute_weights(X, y, family="cox")
)
data_ep(
    "multi_split",
    "gaussian",
    ["vcpcr.inference.multi_split", "vcpcr.inference.MultiSplitResult"],
)(
    lambda X, y: inf.multi_split(
        small("gaussian"), X, y, n_splits=2, random_state=0
    ).pvalues.to_numpy()
)
data_ep(
    "stability_selection",
    "gaussian",
    ["vcpcr.inference.stability_selection", "vcpcr.inference.StabilityResult"],
)(
    lambda X, y: inf.stability_selection(
        small("gaussian"), X, y, n_pairs=2, random_state=0
    ).selection_frequency.to_numpy()
)
data_ep(
    "validate_increment",
    "cox",
    ["vcpcr.validation.validate_increment", "vcpcr.validation.IncrementResult"],
)(
    lambda X, y: (
        val.validate_increment(
            small("cox"), X, y, covariates="c0", cv=2, n_repeats=1, random_state=0
        ).increments
    )
)
data_ep(
    "validate_increment_external",
    "cox",
    [
        "vcpcr.validation.validate_increment_external",
        "vcpcr.validation.ExternalIncrementResult",
    ],
)(
    lambda X, y: (
        val.validate_increment_external(
            small("cox"),
            *base("cox"),
            X,
            y,
            covariates="c0",
            n_bootstrap=20,
            random_state=0,
        ).increments
    )
)
data_ep(
    "cross_val_calibration[cox]",
    "cox",
    ["vcpcr.calibration.cross_val_calibration", "vcpcr.calibration.CalibrationResult"],
)(lambda X, y: cal.cross_val_calibration(small("cox"), X, y, horizon=0.5, cv=3).slope)
data_ep(
    "cross_val_calibration[binomial]",
    "binomial",
    ["vcpcr.calibration.cross_val_calibration"],
)(lambda X, y: cal.cross_val_calibration(small("binomial"), X, y, cv=3).slope)
data_ep(
    "cross_val_predict_survival",
    "cox",
    ["vcpcr.calibration.cross_val_predict_survival"],
)(lambda X, y: cal.cross_val_predict_survival(small("cox"), X, y, horizon=0.5, cv=3))
data_ep(
    "validate_external",
    "cox",
    ["vcpcr.external.validate_external", "vcpcr.external.ExternalValidation"],
    by_name=True,
)(
    lambda X, y: (
        ext.validate_external(fitted("cox"), X, y, horizon=0.5).calibration.slope
    )
)
data_ep(
    "align_cohort",
    "cox",
    ["vcpcr.external.align_cohort", "vcpcr.external.ExternalCohort"],
    uses="X",
    by_name=True,
)(lambda X, y: ext.align_cohort(fitted("cox"), X).modules.to_numpy())
data_ep(
    "survival_calibration",
    "cox",
    ["vcpcr.calibration.survival_calibration"],
    uses="y",
    positional=True,
)(lambda X, y: cal.survival_calibration(y, np.linspace(0.2, 0.9, len(y)), 0.5).slope)
data_ep(
    "binary_calibration",
    "binomial",
    ["vcpcr.calibration.binary_calibration"],
    uses="y",
    positional=True,
)(
    lambda X, y: (
        cal.binary_calibration(y, np.linspace(0.1, 0.9, len(y)), n_groups=4).slope
    )
)
data_ep(
    "regression_calibration",
    "gaussian",
    ["vcpcr.calibration.regression_calibration"],
    positional=True,
)(
    lambda X, y: (
        cal.regression_calibration(
            y, np.asarray(X, dtype=float)[:, 0] if np.ndim(X) == 2 else X, n_groups=4
        ).slope
    )
)
data_ep("kaplan_meier", "cox", ["vcpcr.calibration.kaplan_meier"], uses="y")(
    lambda X, y: cal.kaplan_meier(y["time"], y["event"], 0.5)
)
data_ep("Surv", "cox", ["vcpcr.Surv"], uses="y", positional=True)(
    lambda X, y: vcpcr.Surv(y["time"], y["event"]).to_numpy()
)
data_ep("msep", "gaussian", ["vcpcr.metrics.msep"], positional=True, by_name=True)(
    lambda X, y: met.msep(y, fitted("gaussian").predict(X))
)
data_ep(
    "plot_clusters",
    "gaussian",
    ["vcpcr.plotting.plot_clusters"],
    uses="X",
    by_name=True,
)(lambda X, y: (plt_.plot_clusters(fitted("gaussian"), X), None)[1])
data_ep("plot_path", "gaussian", ["vcpcr.plotting.plot_path"])(
    lambda X, y: (plt_.plot_path(small("gaussian"), X, y, lam_ratios=[0.3, 0.6]), None)[
        1
    ]
)
data_ep("plot_risk_groups", "cox", ["vcpcr.plotting.plot_risk_groups"])(
    lambda X, y: (plt_.plot_risk_groups(small("cox"), X, y, cv=3), None)[1]
)


def _risk(n):
    return np.linspace(0.05, 0.95, n)


DC = ["vcpcr.validation.decision_curve"]
PDC = ["vcpcr.plotting.plot_decision_curve"]
data_ep("decision_curve[binomial]", "binomial", DC, uses="y", positional=True)(
    lambda X, y: val.decision_curve(y, _risk(len(y)), n_bootstrap=0)["net_benefit"]
)
data_ep("decision_curve[cox]", "cox", DC, uses="y", positional=True)(
    lambda X, y: val.decision_curve(y, _risk(len(y)), horizon=0.5, n_bootstrap=0)[
        "net_benefit"
    ]
)
data_ep("decision_curve[binomial,Series]", "binomial", DC, uses="y")(
    lambda X, y: val.decision_curve(
        y, pd.Series(_risk(N), index=base("binomial")[1].index), n_bootstrap=0
    )["net_benefit"]
)
data_ep("plot_decision_curve", "binomial", PDC, uses="y", positional=True)(
    lambda X, y: (
        plt_.plot_decision_curve(val.decision_curve(y, _risk(len(y)), n_bootstrap=5)),
        None,
    )[1]
)


def formula_frame(family):
    X, y = base(family)
    return pd.concat([X, y], axis=1) if family == "cox" else X.assign(y=y)


FORMULAS = {
    "gaussian": [
        "y ~ .",
        "y ~ g0 + g1 + g2 + g3",
        "y ~ c0 | .",
        f"y ~ I(__import__('os').system('touch {SENTINEL}')) + g0 + g1",
        f"y ~ I(open('{SENTINEL}','w').close()) + g0 + g1",
        f"y ~ I(exec(\"open('{SENTINEL}','w')\")) + g0 + g1",
        f"y ~ I(eval(\"open('{SENTINEL}','w')\")) + g0 + g1",
        f"y ~ I((lambda: open('{SENTINEL}','w'))()) + g0 + g1",
        f"y ~ I(np.save('{SENTINEL}', 1)) + g0 + g1",
        f"y ~ I(pd.read_csv('{SENTINEL}')) + g0 + g1",
        "y ~ I(g0.__class__.__base__.__subclasses__()) + g1",
        f"I(open('{SENTINEL}','w').close()) ~ g0 + g1",
        "y ~ nonexistent + g0",
        "y ~ ",
        "~ g0 + g1",
        "y ~ g0 ** 2 + g1",
        "y ~ np.log(g0) + g1 + g2",
        "y ~ np.exp(g0 * 1000) + g1",
        "y ~ g0:g1 + g2 + g3",
        "y ~ . - g0",
        "y ~ . | . | .",
        "y ~ `g0` + `g1`",
        "y ~ C(g0)",
        "y ~ y",
        "y ~ . + y",
        "((( ~",
        "",
        "y ~ g0 +* g1",
        "y ~ " + " + ".join(["g0"] * 50),
    ],
    "cox": [
        "Surv(time, event) ~ .",
        "Surv(time, event) ~ c0 | .",
        "Surv(time, event) ~ c0 + strata(s0) | .",
        "Surv(event, time) ~ .",
        "Surv(time) ~ .",
        "Surv(time, event, c0) ~ .",
        "time ~ .",
        f"Surv(time, I(open('{SENTINEL}','w').close())) ~ .",
        "Surv(-time, event) ~ .",
        "Surv(time, event) ~ strata(nonexistent) | .",
    ],
    "binomial": [
        "y ~ .",
        "I(y == 1) ~ .",
        "I(y + 1) ~ .",
        "C(y) ~ .",
        "I(y * 0) ~ .",
    ],
}


# -------------------------------------------------------------------- cases
def _touched(fam, vfn):
    """The inputs a variant changes ("X", "y"): each variant returns the base
    object itself for the input it leaves alone."""
    X, y = base(fam)
    Xv, yv = vfn(X, y)
    return {n for n, v, b in (("X", Xv, X), ("y", yv, y)) if v is not b}


def _data_cases():
    """(entry, variant, kind, spec) for every data entry point x the variants
    that change an input it reads."""
    cases = []
    for fam in ("gaussian", "binomial", "cox"):
        variants = [(n, f, k, _touched(fam, f)) for n, f, k in x_variants(fam)]
        for ep, (efam, _, _) in DATA_EPS.items():
            if efam != fam:
                continue
            for vname, _, kind, touched in variants:
                if not touched & USES[ep]:
                    continue
                if (ep in POSITIONAL and vname == "y_shuffled_index") or (
                    ep not in BY_NAME and vname == "X_cols_reordered"
                ):
                    kind = "plain"
                cases.append((ep, vname, kind, ("data", ep, vname)))
    return cases


def build_cases():
    cases = _data_cases()  # (entry, variant, kind, spec)
    for fam, fl in FORMULAS.items():
        for i, f in enumerate(fl):
            for cls in ("VCPCR", "VCPCRCV"):
                cases.append(
                    (
                        f"{cls}[{fam},formula].fit",
                        f"formula{i}:{f.replace(SENTINEL, 'SENTINEL')[:60]!r}",
                        "plain",
                        ("formula", cls, fam, f),
                    )
                )
        for nm, name in HOSTILE_NAMES.items():
            cases.append(
                (
                    f"VCPCR[{fam},formula].fit",
                    f"formula_dot_name_{nm}",
                    "plain",
                    ("formula_name", fam, name),
                )
            )
    for ep, vname, _ in param_cases():
        cases.append((ep, vname, "plain", ("param", ep, vname)))
    return cases


def _bad_values():
    return {
        "neg": -1,
        "zero": 0,
        "huge": 10**12,
        "nan": float("nan"),
        "str": "3",
        "none": None,
        "float": 2.5,
        "list": [1, 2],
        "bool": True,
    }


def param_cases():
    """(entry, variant, fn) of the parameter/object cases, one group at a time."""
    out = []
    for group in (
        _params_estimators,
        _params_sos_nmf_weights_inference,
        _params_validation,
        _params_calibration,
        _params_metrics_simulate_datasets,
        _params_plotting,
        _params_decision_curve,
    ):
        group(lambda ep, vname, fn: out.append((ep, vname, fn)))
    return out


def _params_estimators(add):
    X, y = base("gaussian")
    Xb, yb = base("binomial")
    Xc, yc = base("cox")
    for p in [
        "n_clusters",
        "max_iter",
        "tol",
        "lam_ratio",
        "shrinkage",
        "n_init",
        "delta",
        "random_state",
    ]:
        for k, v in _bad_values().items():
            add(
                "VCPCR[param].fit",
                f"{p}={k}",
                lambda p=p, v=v: _pred(
                    vcpcr.VCPCR(**{"n_clusters": 2, "n_init": 1, **{p: v}}).fit(X, y),
                    "gaussian",
                ),
            )
    for p, v in [
        ("family", "foo"),
        ("family", 3),
        ("weights", "foo"),
        ("weights", np.ones(3)),
        ("weights", -np.ones(7)),
        ("weights", np.full(7, np.nan)),
        ("init", "foo"),
        ("init", np.zeros(7, int)),
        ("init", np.arange(7)),
        ("latent", "foo"),
        ("missing", "foo"),
        ("covariates", "nope"),
        ("covariates", 0),
        ("covariates", ["c0", "c0"]),
        ("covariates", ["g0", "g1", "g2", "g3", "g4", "g5", "c0"]),
        ("strata", "nope"),
        ("strata", "c0"),
    ]:
        add(
            "VCPCR[param].fit",
            f"{p}={v!r}"[:50],
            lambda p=p, v=v: _pred(
                vcpcr.VCPCR(2, n_init=1, **{p: v}).fit(X, y), "gaussian"
            ),
        )
    for p, v in [
        ("cv", 0),
        ("cv", 1),
        ("cv", 100),
        ("cv", "x"),
        ("cv", 2.5),
        ("n_clusters", ()),
        ("n_clusters", (0,)),
        ("n_clusters", (100,)),
        ("deltas", [-1.0]),
        ("deltas", []),
        ("lam_ratios", []),
        ("lam_ratios", [2.0]),
        ("lam_ratios", [np.nan]),
        ("scoring", "foo"),
        ("selection", "foo"),
        ("n_init", 0),
    ]:
        kw = {"n_clusters": (2,), "n_init": 1, "cv": 3, **{p: v}}
        add(
            "VCPCRCV[param].fit",
            f"{p}={v!r}",
            lambda kw=kw: _pred(vcpcr.VCPCRCV(**kw).fit(X, y), "gaussian"),
        )
    for cvv in (10, 20, 41):
        add(
            "VCPCRCV[binomial,param].fit",
            f"cv={cvv}_rare_class",
            lambda cvv=cvv: (
                vcpcr.VCPCRCV((2,), family="binomial", n_init=1, cv=cvv)
                .fit(Xb, yb * 0 + (np.arange(N) < 3))
                .predict(Xb)
            ),
        )
        add(
            "VCPCRCV[cox,param].fit",
            f"cv={cvv}_few_events",
            lambda cvv=cvv: (
                vcpcr.VCPCRCV((2,), family="cox", n_init=1, cv=cvv)
                .fit(Xc, yc.assign(event=(np.arange(N) < 3).astype(float)))
                .predict(Xc)
            ),
        )


def _params_sos_nmf_weights_inference(add):
    X, y = base("gaussian")
    for p, v in [
        ("n_clusters", 0),
        ("n_clusters", 100),
        ("n_clusters", -1),
        ("lam", -1.0),
        ("lam", np.nan),
        ("lam_ratio", 2.0),
        ("max_iter", 0),
        ("tol", -1.0),
        ("init", "foo"),
        ("weights", np.ones(2)),
    ]:
        kw = {"n_clusters": 2, **{p: v}}
        add("sos_nmf[param]", f"{p}={v!r}", lambda kw=kw: vcpcr.sos_nmf(X, **kw).V)
    for p, v in [
        ("method", "foo"),
        ("delta", -1.0),
        ("delta", np.nan),
        ("l1_ratio", 2.0),
        ("family", "foo"),
    ]:
        add(
            "compute_weights[param]",
            f"{p}={v!r}",
            lambda p=p, v=v: vcpcr.compute_weights(X, y, **{p: v}),
        )
    for p, v in [
        ("n_splits", 0),
        ("n_splits", -1),
        ("train_size", 0.0),
        ("train_size", 1.0),
        ("train_size", 1.5),
        ("gamma_min", 0.0),
        ("gamma_min", 2.0),
    ]:
        add(
            "multi_split[param]",
            f"{p}={v!r}",
            lambda p=p, v=v: inf.multi_split(
                small("gaussian"), X, y, **{"n_splits": 2, **{p: v}}
            ).pvalues.to_numpy(),
        )
    for p, v in [
        ("n_pairs", 0),
        ("threshold", 2.0),
        ("threshold", 0.0),
        ("min_frequency", -1.0),
    ]:
        add(
            "stability_selection[param]",
            f"{p}={v!r}",
            lambda p=p, v=v: inf.stability_selection(
                small("gaussian"), X, y, **{"n_pairs": 2, **{p: v}}
            ).selection_frequency.to_numpy(),
        )
    for P_ in [
        np.array([]),
        np.array([np.nan, 0.5]),
        np.array([-1.0, 2.0]),
        np.ones((3, 2)) * 0.5,
        "x",
    ]:
        add(
            "aggregate_pvalues",
            f"P={P_!r}"[:50],
            lambda P_=P_: inf.aggregate_pvalues(P_),
        )


def _params_validation(add):
    Xc, yc = base("cox")
    for kw in [
        {"cv": 0},
        {"cv": 1},
        {"cv": 100},
        {"n_repeats": 0},
        {"alpha": 2.0},
        {"tau_quantile": 0.0},
        {"tau_quantile": 1.5},
        {"interval": "foo"},
        {"covariates": None},
        {"covariates": "nope"},
    ]:
        kw2 = {"covariates": "c0", "cv": 2, "n_repeats": 1, **kw}
        add(
            "validate_increment[param]",
            repr(kw),
            lambda kw2=kw2: (
                val.validate_increment(small("cox"), Xc, yc, **kw2).increments
            ),
        )
    for kw in [
        {"n_train": 0, "n_test": 10},
        {"n_train": 10, "n_test": 0},
        {"method": "foo", "n_train": 10, "n_test": 5},
        {"alpha": 0.0, "n_train": 10, "n_test": 5},
    ]:
        add(
            "increment_interval",
            repr(kw),
            lambda kw=kw: val.increment_interval(np.array([0.1, 0.2, -0.1]), **kw),
        )
    add(
        "increment_interval",
        "d_empty",
        lambda: val.increment_interval(np.array([]), n_train=10, n_test=5),
    )
    add(
        "increment_interval",
        "d_nan",
        lambda: val.increment_interval(np.array([np.nan, 0.1]), n_train=10, n_test=5),
    )
    add(
        "ClinicalCox",
        "fit_nan",
        lambda: val.ClinicalCox("c0").fit(_set(Xc, np.nan, col=6), yc).predict(Xc),
    )
    add(
        "ClinicalCox",
        "covariates_missing",
        lambda: val.ClinicalCox("nope").fit(Xc, yc).predict(Xc),
    )
    add("ClinicalCox", "ok", lambda: val.ClinicalCox("c0").fit(Xc, yc).predict(Xc))


def _params_calibration(add):
    _, y = base("gaussian")
    Xb, yb = base("binomial")
    Xc, yc = base("cox")
    for h in [-1.0, 0.0, 1e9, np.nan, "x"]:
        add(
            "cross_val_calibration[param]",
            f"horizon={h!r}",
            lambda h=h: (
                cal.cross_val_calibration(small("cox"), Xc, yc, horizon=h, cv=3).slope
            ),
        )
        add(
            "validate_external[param]",
            f"horizon={h!r}",
            lambda h=h: (
                ext.validate_external(
                    fitted("cox"), Xc, yc, horizon=h
                ).calibration.slope
            ),
        )
        add(
            "kaplan_meier[param]",
            f"horizon={h!r}",
            lambda h=h: cal.kaplan_meier(yc.time, yc.event, h),
        )
        add(
            "survival_calibration[param]",
            f"horizon={h!r}",
            lambda h=h: cal.survival_calibration(yc, np.linspace(0.2, 0.9, N), h).slope,
        )
    for ng in [0, 1, 1000, -1, 2.5]:
        add(
            "binary_calibration[param]",
            f"n_groups={ng!r}",
            lambda ng=ng: (
                cal.binary_calibration(yb, np.linspace(0.1, 0.9, N), n_groups=ng).slope
            ),
        )
        add(
            "regression_calibration[param]",
            f"n_groups={ng!r}",
            lambda ng=ng: cal.regression_calibration(y, y + 0.1, n_groups=ng).slope,
        )
        add(
            "cross_val_calibration[param]",
            f"n_groups={ng!r}",
            lambda ng=ng: (
                cal.cross_val_calibration(
                    small("binomial"), Xb, yb, cv=3, n_groups=ng
                ).slope
            ),
        )
    for pv, nm in [
        (np.array([0.5, 1.5] * 20), "prob>1"),
        (np.array([np.nan] + [0.5] * 39), "prob_nan"),
        (np.full(N, 0.5), "prob_const"),
        (np.ones(3), "prob_short"),
    ]:
        add(
            "binary_calibration",
            nm,
            lambda pv=pv: cal.binary_calibration(yb, pv, n_groups=4).slope,
        )
        add(
            "survival_calibration",
            nm,
            lambda pv=pv: cal.survival_calibration(yc, pv, 0.5).slope,
        )
    for kw in [
        {"missing_genes": "foo"},
        {"standardize": "foo"},
        {"missing_genes": "drop"},
        {"missing_genes": "impute"},
    ]:
        add(
            "align_cohort[param]",
            repr(kw),
            lambda kw=kw: ext.align_cohort(
                fitted("cox"), Xc.drop(columns="g1"), **kw
            ).modules.to_numpy(),
        )
    add("align_cohort", "unfitted_model", lambda: ext.align_cohort(small("cox"), Xc))
    add(
        "align_cohort",
        "numpy_X",
        lambda: ext.align_cohort(fitted("cox"), Xc.to_numpy()),
    )


def _params_metrics_simulate_datasets(add):
    for a, b, nm in [
        ([0, 1], [0], "len_mismatch"),
        ([], [], "empty"),
        ([0, 0, 0], [1, 1, 1], "single_cluster"),
        ([np.nan, 1], [0, 1], "nan"),
        ("ab", "ab", "str"),
        ([[0, 1]], [[0, 1]], "2d"),
    ]:
        add("adjusted_rand_index", nm, lambda a=a, b=b: met.adjusted_rand_index(a, b))
        add("mcc_clustering", nm, lambda a=a, b=b: met.mcc_clustering(a, b))
        add("mcc_support", nm, lambda a=a, b=b: met.mcc_support(a, b))
        add("msep", nm, lambda a=a, b=b: met.msep(a, b))
    for c, nm in [
        ([], "empty"),
        ([np.nan, 1.0], "nan"),
        ("x", "str"),
        (np.ones((2, 2)), "2d"),
        (fitted("gaussian"), "model"),
    ]:
        add("model_size", nm, lambda c=c: met.model_size(c))
    add("model_size", "tol_neg", lambda: met.model_size([0.0, 1.0], tol=-1.0))
    for kw, nm in [
        ({"n_samples": 0}, "n0"),
        ({"n_samples": -1}, "nneg"),
        ({"n_samples": 1}, "n1"),
        ({"block_sizes": []}, "no_blocks"),
        ({"block_sizes": [0, 3]}, "block0"),
        ({"coefs": [1.0]}, "coefs_short"),
        ({"rho": 2.0}, "rho2"),
        ({"rho": -1.0}, "rho_neg"),
        ({"family": "foo"}, "family"),
        ({"snr": -1.0}, "snr_neg"),
        ({"n_noise": -1}, "noise_neg"),
        ({"family": "binomial", "prevalence": 1.5}, "prev"),
        ({"n_samples": 2.5}, "n_float"),
        ({"coefs": [np.nan, 1.0]}, "coef_nan"),
        ({"family": "cox"}, "cox_ok"),
        ({}, "ok"),
    ]:
        kw2 = {
            "n_samples": 20,
            "block_sizes": [3, 3],
            "coefs": [1.0, 0.0],
            "random_state": 0,
            **kw,
        }
        add("make_block_data", nm, lambda kw2=kw2: sim.make_block_data(**kw2).X)
    for kw, nm in [
        ({"config": 99}, "config99"),
        ({"n_samples": 0}, "n0"),
        ({"rho": 1.5}, "rho"),
        ({"snr": 0.0}, "snr0"),
        ({}, "ok"),
    ]:
        add(
            "make_paper_data",
            nm,
            lambda kw=kw: sim.make_paper_data(**kw, random_state=0).X,
        )
        add(
            "paper_covariance",
            nm,
            lambda kw=kw: sim.paper_covariance(
                **{k: v for k, v in kw.items() if k in ("rho", "config")}
            ),
        )
    add("paper_coef", "ok", lambda: sim.paper_coef())
    for kw, nm in [
        ({}, "ok"),
        ({"return_X_y": True}, "Xy"),
        ({"gene_symbols": True}, "symbols"),
        ({"return_X_y": "x"}, "bad"),
    ]:
        add("load_liver", nm, lambda kw=kw: (ds.load_liver(**kw), None)[1])
    for n, k, nm in [
        (5, 0, "k0"),
        (5, 10, "k>p"),
        (-1, 2, "neg"),
        (0, 0, "zero"),
        (5.5, 2, "float"),
    ]:
        add("random_partition", nm, lambda n=n, k=k: vcpcr.random_partition(n, k, 0))
    for t, e, nm in [
        ([1, 2], [1], "len"),
        ([-1, 2], [1, 0], "neg"),
        ([np.nan, 2], [1, 0], "nan"),
        ([1, 2], [2, 0], "event2"),
        (["a", "b"], [1, 0], "str"),
        ([], [], "empty"),
        ([1, 2], [True, False], "bool"),
    ]:
        add("Surv[param]", nm, lambda t=t, e=e: vcpcr.Surv(t, e).to_numpy())
    # plotting helpers on results


def _params_plotting(add):
    X, y = base("gaussian")
    _, yb = base("binomial")
    Xc, yc = base("cox")
    add(
        "plot_calibration",
        "ok",
        lambda: (
            plt_.plot_calibration(
                cal.binary_calibration(yb, np.linspace(0.1, 0.9, N), n_groups=4)
            ),
            None,
        )[1],
    )
    add("plot_calibration", "not_result", lambda: plt_.plot_calibration("x"))
    add("plot_cv", "ok", lambda: (plt_.plot_cv(fitted("gaussian", True)), None)[1])
    add("plot_cv", "unfitted", lambda: plt_.plot_cv(small_cv("gaussian")))
    add("plot_cv", "bad_x", lambda: plt_.plot_cv(fitted("gaussian", True), x="nope"))
    add(
        "plot_cv",
        "dataframe",
        lambda: (
            plt_.plot_cv(pd.DataFrame(fitted("gaussian", True).cv_results_)),
            None,
        )[1],
    )
    add(
        "plot_increments",
        "ok",
        lambda: (
            plt_.plot_increments(
                val.validate_increment(
                    small("cox"), Xc, yc, covariates="c0", cv=2, n_repeats=1
                )
            ),
            None,
        )[1],
    )
    add("plot_increments", "not_result", lambda: plt_.plot_increments(3))
    add(
        "plot_stability",
        "ok",
        lambda: (
            plt_.plot_stability(
                inf.stability_selection(small("gaussian"), X, y, n_pairs=2)
            ),
            None,
        )[1],
    )
    add(
        "plot_stability",
        "top0",
        lambda: (
            plt_.plot_stability(
                inf.stability_selection(small("gaussian"), X, y, n_pairs=2), top=0
            ),
            None,
        )[1],
    )
    add("plot_stability", "not_result", lambda: plt_.plot_stability(None))
    add("plot_clusters", "unfitted", lambda: plt_.plot_clusters(small("gaussian"), X))
    add(
        "plot_path",
        "lam_ratios_empty",
        lambda: plt_.plot_path(small("gaussian"), X, y, lam_ratios=[]),
    )
    add(
        "plot_risk_groups",
        "quantiles_bad",
        lambda: plt_.plot_risk_groups(small("cox"), Xc, yc, cv=3, quantiles=[1.5]),
    )
    add(
        "plot_risk_groups",
        "gaussian_model",
        lambda: plt_.plot_risk_groups(small("gaussian"), X, y, cv=3),
    )
    add(
        "summary",
        "inference_bad",
        lambda: str(fitted("gaussian").summary(inference="x")),
    )
    add("summary", "alpha_bad", lambda: str(fitted("gaussian").summary(alpha=2.0)))
    add("summary", "unfitted", lambda: str(small("gaussian").summary()))
    add("predict", "unfitted", lambda: small("gaussian").predict(X))
    add(
        "score",
        "sample_weight_neg",
        lambda: fitted("gaussian").score(X, y, sample_weight=-np.ones(N)),
    )
    add(
        "score",
        "sample_weight_short",
        lambda: fitted("gaussian").score(X, y, sample_weight=np.ones(3)),
    )


def _params_decision_curve(add):
    _, y = base("gaussian")
    _, yb = base("binomial")
    _, yc = base("cox")
    risk = _risk(N)

    def nb(yy, rr, **kw):
        return val.decision_curve(yy, rr, **{"n_bootstrap": 0, **kw})["net_benefit"]

    for kw, nm in [
        ({"thresholds": [0.0, 0.5]}, "thresholds_0"),
        ({"thresholds": [1.5]}, "thresholds_gt1"),
        ({"thresholds": [np.nan]}, "thresholds_nan"),
        ({"thresholds": []}, "thresholds_empty"),
        ({"thresholds": "x"}, "thresholds_str"),
        ({"n_bootstrap": -1}, "n_bootstrap_neg"),
        ({"n_bootstrap": 2.5}, "n_bootstrap_float"),
        ({"n_bootstrap": 5, "alpha": 0.0}, "alpha_0"),
        ({"n_bootstrap": 5, "alpha": 1.5}, "alpha_gt1"),
        ({"n_bootstrap": 5, "random_state": "x"}, "random_state_str"),
        ({"horizon": 0.5}, "horizon_on_binary"),
    ]:
        add("decision_curve[param]", nm, lambda kw=kw: nb(yb, risk, **kw))
    for rr, nm in [
        (np.r_[risk[:-1], 1.5], "risk_gt1"),
        (np.r_[np.nan, risk[1:]], "risk_nan"),
        (np.r_[-0.1, risk[1:]], "risk_neg"),
        (np.full(N, 0.3), "risk_const"),
        (risk[:3], "risk_short"),
        (risk.reshape(-1, 2), "risk_2d"),
        ({"all": risk}, "risk_dict_all"),
        ({}, "risk_dict_empty"),
        ({"a": risk, "b": risk[:3]}, "risk_dict_ragged"),
        ("x", "risk_str"),
        (list(risk), "risk_list"),
    ]:
        add("decision_curve[param]", nm, lambda rr=rr: nb(yb, rr))
    for kw, nm in [
        ({}, "cox_no_horizon"),
        ({"horizon": -1.0}, "cox_horizon_neg"),
        ({"horizon": 1e9}, "cox_horizon_huge"),
        ({"horizon": np.nan}, "cox_horizon_nan"),
        ({"horizon": "x"}, "cox_horizon_str"),
    ]:
        add("decision_curve[param]", nm, lambda kw=kw: nb(yc, risk, **kw))
    add("decision_curve[param]", "gaussian_y", lambda: nb(y, risk))
    ok = val.decision_curve(yb, risk, n_bootstrap=5, random_state=0)
    for obj, nm in [
        (ok, "ok_with_ci"),
        (ok.drop(columns="net_benefit"), "missing_column"),
        (ok.iloc[:0], "empty_frame"),
        (ok.assign(net_benefit=np.nan), "all_nan"),
        ("x", "not_result"),
        (None, "none"),
    ]:
        add(
            "plot_decision_curve",
            nm,
            lambda obj=obj: (plt_.plot_decision_curve(obj), None)[1],
        )
    for ylim, nm in [((1.0, 0.0), "ylim_reversed"), ("x", "ylim_str")]:
        add(
            "plot_decision_curve",
            nm,
            lambda ylim=ylim: (plt_.plot_decision_curve(ok, ylim=ylim), None)[1],
        )


PARAMS = None


def resolve(spec):
    """The case's callable and the inputs to guard for in-place modification."""
    global PARAMS
    if spec[0] == "data":
        _, ep, vname = spec
        fam, fn, _ = DATA_EPS[ep]
        X, y = base(fam)
        vfn = {n: f for n, f, _ in x_variants(fam)}[vname]
        Xv, yv = vfn(X, y)
        guarded = tuple(v for v, b in ((Xv, X), (yv, y)) if v is not b)
        return (lambda: fn(Xv, yv)), guarded, (lambda: fn(X, y))
    if spec[0] == "formula":
        _, cls, fam, f = spec
        df = formula_frame(fam)
        est = (small_cv if cls == "VCPCRCV" else small)(fam, formula=f)
        return (lambda: est.fit(df).predict(df)), (df,), None
    if spec[0] == "formula_name":
        _, fam, name = spec
        df = _rename(formula_frame(fam), name)
        f = "Surv(time, event) ~ ." if fam == "cox" else "y ~ ."
        est = small(fam, formula=f)
        return (lambda: est.fit(df).predict(df)), (df,), None
    if PARAMS is None:
        PARAMS = {(ep, v): fn for ep, v, fn in param_cases()}
    return PARAMS[(spec[1], spec[2])], (), None


# ------------------------------------------------------------------ classify
def _same(a, b):
    """Whether ``a`` still equals its deep copy ``b`` (NaN equal to NaN)."""
    if isinstance(a, pd.DataFrame | pd.Series | pd.Index):
        return a.equals(b)
    if isinstance(a, np.ndarray):
        if a.dtype.kind in "fc":
            return np.array_equal(a, b, equal_nan=True)
        return np.array_equal(a, b)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, z) for x, z in zip(a, b, strict=True))
    if isinstance(a, float) and np.isnan(a):
        return isinstance(b, float) and np.isnan(b)
    try:
        return bool(a == b)
    except Exception:
        return repr(a) == repr(b)


def _numbers(r):
    if isinstance(r, tuple | list) and all(
        isinstance(x, int | float | np.floating | np.integer) for x in r
    ):
        return np.asarray(r, dtype=float)
    if isinstance(r, int | float | np.floating | np.integer) and not isinstance(
        r, bool
    ):
        return np.asarray([r], dtype=float)
    if isinstance(r, pd.DataFrame):
        r = r.select_dtypes("number").to_numpy()
    elif isinstance(r, pd.Series):
        r = r.to_numpy()
    if isinstance(r, np.ndarray) and r.dtype.kind in "fiub":
        return r.astype(float).ravel()
    return None


def _classify_exception(exc):
    """clear error / foreign exception / harness error (no vcpcr frame at all:
    the fuzz harness's own lambda failed before reaching vcpcr)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = tb[-1].filename if tb else ""
    in_vcpcr = where.startswith(VCPCR_DIR)
    msg = f"{type(exc).__name__}: {str(exc)[:300]}"
    if in_vcpcr:
        loc = os.path.relpath(where, os.path.dirname(VCPCR_DIR))
    else:
        loc = where.split("site-packages/")[-1]
    loc = f"{loc}:{tb[-1].lineno if tb else 0}"
    if not any(f.filename.startswith(VCPCR_DIR) for f in tb):
        return {"outcome": "harness error", "detail": msg, "where": loc}
    clear = isinstance(exc, ValueError | TypeError | ImportError) and (
        in_vcpcr or "vcpcr" in str(exc).lower()
    )
    outcome = "clear error" if clear else "foreign exception"
    return {"outcome": outcome, "detail": msg, "where": loc}


def _check_result(r, kind, ref, warned):
    """The outcome of a call that returned ``r``."""
    nums = _numbers(r)
    if kind == "equiv" and ref is not None and nums is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            n0 = _numbers(ref())
        if n0 is not None and not (
            nums.shape == n0.shape
            and np.allclose(nums, n0, rtol=1e-6, atol=1e-9, equal_nan=True)
        ):
            diff = (
                "shape"
                if nums.shape != n0.shape
                else f"max |diff| {np.nanmax(np.abs(nums - n0)):.3g}"
            )
            return "silent wrong", f"differs from the plain call ({diff})"
    if nums is not None and nums.size and not np.all(np.isfinite(nums)) and not warned:
        bad = int((~np.isfinite(nums)).sum())
        return "silent wrong", f"returned {bad} non-finite of {nums.size}, no warning"
    if kind == "nonfinite" and not warned:
        return "silent wrong", "NaN/inf input accepted without error or warning"
    return "right result", ""


def run_case(spec, kind):
    fn, guarded, ref = resolve(spec)
    copies = copy.deepcopy(guarded)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
            exc = None
        except BaseException as e:
            exc = e
    warned = sorted({f"{x.category.__name__}: {str(x.message)[:80]}" for x in w})
    out = {"warned": warned}
    if not all(_same(a, b) for a, b in zip(guarded, copies, strict=True)):
        return {**out, "outcome": "data loss", "detail": "input modified in place"}
    if exc is not None:
        return {**out, **_classify_exception(exc)}
    outcome, detail = _check_result(r, kind, ref, warned)
    return {**out, "outcome": outcome, "detail": detail}


def child(spec, kind, workdir, path):
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    os.chdir(workdir)
    try:
        res = run_case(spec, kind)
    except BaseException as e:
        res = {
            "outcome": "foreign exception",
            "detail": f"harness: {type(e).__name__}: {e}"[:300],
            "warned": [],
        }
    Path(path).write_text(json.dumps(res, default=str))


def _load_log(log, fresh):
    if fresh and log.exists():
        log.unlink()
    done = {}
    if log.exists():
        for line in log.read_text().splitlines():
            d = json.loads(line)
            done[(d["entry"], d["variant"])] = d
    return done


def _launch(case, k):
    """Fork one case in its own empty directory; the sentinel is relative to it."""
    ep, vname, kind, spec = case
    workdir = TMP / f"case_{k}"
    workdir.mkdir()
    path = str(TMP / f"res_{k}.json")
    pid = os.fork()
    if pid == 0:
        try:
            child(spec, kind, workdir, path)
        finally:
            os._exit(0)
    return pid, (ep, vname, workdir, path, time.time())


def _collect(pid, info, timeout):
    """The result of a finished child, or None while it runs within ``timeout``."""
    ep, vname, workdir, path, st = info
    wp, status = os.waitpid(pid, os.WNOHANG)
    if wp == 0 and time.time() - st < timeout:
        return None
    if wp == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        res = {"outcome": "hang", "detail": f"> {timeout:.0f} s", "warned": []}
    elif os.path.exists(path):
        res = json.loads(Path(path).read_text())
    else:
        res = {
            "outcome": "foreign exception",
            "detail": f"child died (status {status})",
            "warned": [],
        }
    made = sorted(p.name for p in workdir.iterdir() if p.name.startswith(SENTINEL))
    if made:
        detail = f"sentinel {made} created; " + res.get("detail", "")
        res = {**res, "outcome": "code run", "detail": detail}
    res.update(entry=ep, variant=vname, seconds=round(time.time() - st, 2))
    return res


def _run(todo, done, log, args):
    running = {}
    t0 = time.time()
    k = 0
    with log.open("a") as fh:
        while todo or running:
            while todo and len(running) < args.jobs:
                pid, info = _launch(todo.pop(0), k)
                running[pid] = info
                k += 1
            time.sleep(0.01)
            for pid, info in list(running.items()):
                res = _collect(pid, info, args.timeout)
                if res is None:
                    continue
                del running[pid]
                done[(res["entry"], res["variant"])] = res
                fh.write(json.dumps(res, default=str) + "\n")
                fh.flush()
                if len(done) % 100 == 0:
                    print(
                        f"{len(done)} done, {time.time() - t0:.0f} s", file=sys.stderr
                    )
    return time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--report", action="store_true", help="only tabulate the log")
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    log = RESULTS / "fuzz_inputs.jsonl"
    done = _load_log(log, args.fresh)
    for fam in ("gaussian", "binomial", "cox"):  # fitted once, reused by the forks
        fitted(fam)
        fitted(fam, True)
    cases = build_cases()
    if args.limit:
        cases = cases[: args.limit]
    todo = [] if args.report else [c for c in cases if (c[0], c[1]) not in done]
    random.Random(0).shuffle(todo)  # a partial run samples every entry point
    print(
        f"{len(cases)} cases, {len(todo)} to run, pyarrow={HAVE_ARROW}", file=sys.stderr
    )
    seconds = _run(todo, done, log, args)
    rows = [done[(c[0], c[1])] for c in cases if (c[0], c[1]) in done]
    report(rows, len(cases), seconds)


ORDER = [
    "clear error",
    "right result",
    "foreign exception",
    "silent wrong",
    "hang",
    "data loss",
    "code run",
]


def _outcome_lines(rows, n_cases, seconds):
    cnt = collections.Counter(r["outcome"] for r in rows)
    lines = [
        f"vcpcr fuzz matrix (#46): {len(rows)} of {n_cases} cases run, "
        f"pyarrow={HAVE_ARROW}, wall {seconds:.0f} s this run, vcpcr of {VCPCR_DIR}",
        "",
        "| outcome | cases | with a warning |",
        "| --- | ---: | ---: |",
    ]
    for o in [*ORDER, "harness error"]:
        warned = sum(1 for r in rows if r["outcome"] == o and r["warned"])
        lines.append(f"| {o} | {cnt.get(o, 0)} | {warned} |")
    lines.append(
        "\n(harness error: the harness's own lambda failed before any vcpcr frame,"
        " e.g. `y['time']` on an array; not counted for or against vcpcr)"
    )
    return lines


def _entry_lines(rows):
    lines = ["", "| entry point | " + " | ".join(ORDER) + " |"]
    lines.append("| --- |" + " ---: |" * len(ORDER))
    by = collections.defaultdict(collections.Counter)
    for r in rows:
        by[r["entry"]][r["outcome"]] += 1
    for ep in sorted(by):
        counts = " | ".join(str(by[ep].get(o, 0)) for o in ORDER)
        lines.append(f"| {ep} | {counts} |")
    return lines


def _coverage_line(rows):
    covered = {c for _, _, cov in DATA_EPS.values() for c in cov}
    eps = {r["entry"].split("[")[0].split(".")[0] for r in rows}
    public = [
        f"{mname}.{n}"
        for mname, mod in MODULES.items()
        for n in mod.__all__
        if callable(getattr(mod, n))
        and not (
            isinstance(getattr(mod, n), type) and issubclass(getattr(mod, n), Warning)
        )
    ]
    hit = [p for p in public if p in covered or p.split(".")[-1] in eps]
    missing = ", ".join(sorted(set(public) - set(hit))) or "none"
    return (
        f"public callables covered: {len(hit)} of {len(public)}; not covered: {missing}"
    )


def _nonclear_lines(rows):
    lines = ["", "## non-clear cases (grouped by outcome, entry point, message)"]
    for o in [*ORDER[2:], "harness error"]:
        grp = collections.defaultdict(list)
        for r in rows:
            if r["outcome"] == o:
                key = (r["entry"], r.get("where", ""), r["detail"][:160])
                grp[key].append(r["variant"])
        if not grp:
            continue
        lines.append(f"\n### {o} ({sum(len(v) for v in grp.values())})")
        for (ep, where, det), vs in sorted(grp.items()):
            at = f" @ {where}" if where else ""
            lines.append(f"- {ep} [{', '.join(vs)}]: {det.replace(chr(10), ' ')}{at}")
    return lines


def report(rows, n_cases, seconds):
    lines = _outcome_lines(rows, n_cases, seconds) + _entry_lines(rows)
    lines += ["", _coverage_line(rows), *_nonclear_lines(rows)]
    n_warn = sum(1 for r in rows if r["outcome"] == "right result" and r["warned"])
    lines.append(f"\nright results that warned: {n_warn}")
    text = "\n".join(lines) + "\n"
    print(text)
    (RESULTS / "fuzz_inputs.txt").write_text(text)


if __name__ == "__main__":
    main()
