"""Every public entry point taking rows of ``X`` and ``y`` pairs them by label or
refuses a ``y`` whose index holds ``X``'s rows in another order (#46 item 3).

The public API is enumerated (``__all__`` of the package and of its public
namespaces; functions and the public methods of classes whose signature
takes an ``X`` and a ``y``, or an outcome and a prediction); the table
``CALLS`` must cover every one, so a new entry point without a row here
fails ``test_the_table_covers_every_public_x_y_entry_point``.
"""

from __future__ import annotations

import importlib
import inspect
import re

import matplotlib
import numpy as np
import pandas as pd
import pytest
from conftest import make_blocks
from numpy.testing import assert_allclose

matplotlib.use("Agg")

NAMESPACES = (
    "vcpcr",
    "vcpcr.validation",
    "vcpcr.calibration",
    "vcpcr.external",
    "vcpcr.inference",
    "vcpcr.metrics",
    "vcpcr.plotting",
    "vcpcr.baselines",
    "vcpcr.benchmark",
    "vcpcr.simulate",
    "vcpcr.datasets",
)
#: A prediction that a function pairs with an outcome (its ``y``).
PREDICTIONS = {"probability", "prediction", "predicted_survival", "y_pred"}
REFUSED = "holds the rows of .* in another order"


def _takes_rows(func):
    params = set(inspect.signature(func).parameters)
    outcome = {p for p in params if p.startswith("y")} - PREDICTIONS
    rows = {p for p in params if p.startswith("X")} | (params & PREDICTIONS)
    return bool(outcome and rows)


def public_entry_points():
    """``"namespace.name"`` (or ``"namespace.Class.method"``) taking X and y."""
    found = set()
    for module_name in NAMESPACES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                for attr, meth in inspect.getmembers(obj, inspect.isfunction):
                    if not attr.startswith("_") and _takes_rows(meth):
                        found.add(f"{module_name}.{name}.{attr}")
            elif inspect.isfunction(obj) and _takes_rows(obj):
                found.add(f"{module_name}.{name}")
    return found


# ---------------------------------------------------------------- data

N = 40


def _gaussian():
    X, y, _, _ = make_blocks(n=N, n_blocks=2, block_size=3, n_noise=4)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    return frame, pd.Series(y, index=frame.index, name="y")


def _survival(n=60, seed=0):
    X, lin, _, _ = make_blocks(n=n, n_blocks=2, block_size=3, n_noise=4, seed=seed)
    rng = np.random.default_rng(seed + 10)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame.insert(0, "age", rng.normal(size=n))
    t = rng.exponential(np.exp(-0.8 * (lin - lin.mean()) - 0.5 * frame["age"]))
    c = rng.exponential(2 * np.median(t), size=n)
    y = pd.DataFrame({"time": np.minimum(t, c), "event": (t <= c).astype(float)})
    return frame, y


def _vcpcr(**kw):
    from vcpcr import VCPCR

    return VCPCR(2, n_init=1, random_state=0, lam_ratio=0.3, **kw)


def _vcpcrcv(**kw):
    from vcpcr import VCPCRCV

    return VCPCRCV((2,), n_init=1, cv=2, lam_ratios=[0.3], random_state=0, **kw)


def _cox():
    return _vcpcr(family="cox")


def _zeros_path(Xt, yt):
    return np.zeros((1, Xt.shape[1])), np.array([np.mean(yt)])


def _benchmark_args(X):
    import dataclasses

    from vcpcr.benchmark import draw_starts, get_methods, nested_folds

    method = dataclasses.replace(
        get_methods(["vcpcr-ridge"], "quick")[0],
        tuned=((2.0, 0.01),),
        traced=(0.3,),
    )
    folds = nested_folds(len(X), 2, 2, random_state=0)
    return method, folds, draw_starts(X.shape[1], (2,), 1, random_state=0)


def _fit(est):
    return lambda X, y: est().fit(X, y).predict(X)


def _score(est):
    def call(X, y):
        return est().fit(X, y.loc[X.index]).score(X, y)

    return call


def _binary(y):
    return (y > y.median()).astype(float)


def _calls():
    from vcpcr import compute_weights
    from vcpcr.baselines import (
        CEN,
        CRL,
        SRR,
        cen_path,
        crl_path,
        lasso_path,
        srr_path,
    )
    from vcpcr.benchmark import nested_cv, standardize_fold
    from vcpcr.calibration import (
        binary_calibration,
        cross_val_calibration,
        cross_val_predict_survival,
        regression_calibration,
        survival_calibration,
    )
    from vcpcr.external import validate_external
    from vcpcr.inference import multi_split, stability_selection
    from vcpcr.metrics import msep
    from vcpcr.plotting import plot_path, plot_risk_groups
    from vcpcr.validation import (
        ClinicalCox,
        ClinicalGLM,
        report,
        validate_increment,
        validate_increment_external,
    )

    def cen(X, y):
        return CEN(2, n_init=1, random_state=0)

    g, s = "gaussian", "survival"
    starts = np.arange(10) % 2
    return {
        "vcpcr.VCPCR.fit": (g, _fit(_vcpcr)),
        "vcpcr.VCPCR.fit_transform": (g, lambda X, y: _vcpcr().fit_transform(X, y)),
        "vcpcr.VCPCR.path": (g, lambda X, y: _vcpcr().path(X, y, lam_ratios=[0.3])),
        "vcpcr.VCPCR.score": (g, _score(_vcpcr)),
        "vcpcr.VCPCRCV.fit": (g, _fit(_vcpcrcv)),
        "vcpcr.VCPCRCV.fit_transform": (
            g,
            lambda X, y: _vcpcrcv().fit_transform(X, y),
        ),
        "vcpcr.VCPCRCV.path": (
            g,
            lambda X, y: _vcpcrcv().fit(X, y.loc[X.index]).path(X, y, lam_ratios=[0.3]),
        ),
        "vcpcr.VCPCRCV.score": (g, _score(_vcpcrcv)),
        "vcpcr.VCPCRCV.peer_curve": (
            g,
            lambda X, y: (
                _vcpcrcv(refit=False)
                .fit(X, y.loc[X.index])
                .peer_curve(_zeros_path, X, y)["mean_test_score"]
            ),
        ),
        "vcpcr.compute_weights": (g, lambda X, y: compute_weights(X, y, delta=1.0)),
        "vcpcr.baselines.CEN.fit": (g, lambda X, y: cen(X, y).fit(X, y).coef_),
        "vcpcr.baselines.CEN.score": (
            g,
            lambda X, y: cen(X, y).fit(X, y.loc[X.index]).score(X, y),
        ),
        "vcpcr.baselines.CRL.fit": (g, _fit(lambda: CRL(2, n_init=1, random_state=0))),
        "vcpcr.baselines.CRL.score": (
            g,
            _score(lambda: CRL(2, n_init=1, random_state=0)),
        ),
        "vcpcr.baselines.SRR.fit": (g, _fit(lambda: SRR(2, n_alphas=2))),
        "vcpcr.baselines.SRR.score": (g, _score(lambda: SRR(2, n_alphas=2))),
        "vcpcr.baselines.lasso_path": (g, lambda X, y: lasso_path(X, y, [0.1])),
        "vcpcr.baselines.cen_path": (
            g,
            lambda X, y: cen_path(X, y, starts, [0.1], 1.0)[0],
        ),
        "vcpcr.baselines.crl_path": (
            g,
            lambda X, y: crl_path(X, y, starts, np.array([0.0]))[0],
        ),
        "vcpcr.baselines.srr_path": (
            g,
            lambda X, y: srr_path(X, y, 2, [0.1], 1.0)[0],
        ),
        "vcpcr.benchmark.nested_cv": (
            g,
            lambda X, y: nested_cv(X, y, *_benchmark_args(X))["msep"],
        ),
        "vcpcr.benchmark.standardize_fold": (
            g,
            lambda X, y: standardize_fold(X, y, np.arange(30), np.arange(30, N)).ytr,
        ),
        "vcpcr.metrics.msep": (g, lambda X, y: msep(y, X["g0"])),
        "vcpcr.calibration.regression_calibration": (
            g,
            lambda X, y: regression_calibration(y, X["g0"], n_groups=3).slope,
        ),
        "vcpcr.calibration.binary_calibration": (
            g,
            lambda X, y: (
                binary_calibration(
                    _binary(y), 1 / (1 + np.exp(-X["g0"])), n_groups=3
                ).slope
            ),
        ),
        "vcpcr.plotting.plot_path": (
            g,
            lambda X, y: (
                plot_path(_vcpcr(), X, y, lam_ratios=[0.3]).lines[0].get_ydata()
            ),
        ),
        "vcpcr.inference.multi_split": (
            g,
            lambda X, y: (
                multi_split(
                    _vcpcr(), X, y, n_splits=2, random_state=0, common_tree=None
                ).pvalues
            ),
        ),
        "vcpcr.inference.stability_selection": (
            g,
            lambda X, y: (
                stability_selection(
                    _vcpcr(), X, y, n_pairs=1, random_state=0
                ).selection_frequency
            ),
        ),
        "vcpcr.calibration.survival_calibration": (
            s,
            lambda X, y: (
                survival_calibration(
                    y, 1 / (1 + np.exp(X["g0"])), horizon=0.5, n_groups=2
                ).slope
            ),
        ),
        "vcpcr.calibration.cross_val_calibration": (
            s,
            lambda X, y: cross_val_calibration(_cox(), X, y, horizon=0.5, cv=2).slope,
        ),
        "vcpcr.calibration.cross_val_predict_survival": (
            s,
            lambda X, y: cross_val_predict_survival(_cox(), X, y, horizon=0.5, cv=2),
        ),
        "vcpcr.external.validate_external": (
            s,
            lambda X, y: (
                validate_external(
                    _cox().fit(X, y.loc[X.index]), X, y, horizon=0.5
                ).concordance
            ),
        ),
        "vcpcr.plotting.plot_risk_groups": (
            s,
            lambda X, y: (
                plot_risk_groups(_cox().fit(X, y.loc[X.index]), X, y, cv=2)
                .lines[0]
                .get_ydata()
            ),
        ),
        "vcpcr.validation.ClinicalGLM.fit": (
            g,
            lambda X, y: ClinicalGLM(["g0"], family="gaussian").fit(X, y).predict(X),
        ),
        "vcpcr.validation.ClinicalCox.fit": (
            s,
            lambda X, y: ClinicalCox(["age"]).fit(X, y).predict(X),
        ),
        "vcpcr.validation.report": (
            s,
            lambda X, y: (
                report(
                    _cox().fit(X, y.loc[X.index]),
                    X,
                    y,
                    covariates="age",
                    inference=False,
                    stability=False,
                    calibration=False,
                    cv=2,
                    n_repeats=1,
                    random_state=0,
                )
                .results["increment"]
                .increments["estimate"]
            ),
        ),
        "vcpcr.validation.validate_increment": (
            s,
            lambda X, y: (
                validate_increment(
                    _cox(), X, y, covariates="age", cv=2, n_repeats=1, random_state=0
                ).increments
            ),
        ),
        "vcpcr.validation.validate_increment_external": (
            s,
            lambda X, y: (
                validate_increment_external(
                    _cox().set_params(covariates=["age"]).fit(X, y.loc[X.index]),
                    X,
                    y,
                    X,
                    y,
                    covariates="age",
                    n_bootstrap=2,
                    random_state=0,
                ).increments
            ),
        ),
    }


def test_the_table_covers_every_public_x_y_entry_point():
    """A public function or method taking X and y that the table lacks fails."""
    found, table = public_entry_points(), set(_calls())
    assert found - table == set(), "add these entry points to _calls()"
    assert table - found == set(), "these are no longer public X, y entry points"


def _numbers(result):
    if isinstance(result, pd.DataFrame | pd.Series):
        return result.to_numpy(dtype=float)
    return np.asarray(result, dtype=float)


@pytest.mark.parametrize("entry", sorted(_calls()))
def test_a_y_in_another_row_order_is_aligned_or_refused(entry):
    """A y whose index holds X's labels shuffled: refused (the one check's
    message) or paired by label, with the number of the aligned call."""
    import matplotlib.pyplot as plt

    kind, call = _calls()[entry]
    if kind == "survival":
        pytest.importorskip("lifelines")
        pytest.importorskip("sksurv")
    X, y = _gaussian() if kind == "gaussian" else _survival()
    shuffled = y.sample(frac=1, random_state=1)
    try:
        got = call(X, shuffled)
    except ValueError as err:
        refused = str(err)
    else:
        refused = None
        aligned = call(X, y)
    finally:
        plt.close("all")
    if refused is not None:
        assert re.search(REFUSED, refused), refused
    else:
        assert_allclose(_numbers(got), _numbers(aligned), rtol=1e-9, atol=1e-12)
