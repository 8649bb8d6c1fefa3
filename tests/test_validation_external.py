"""vcpcr.validation.validate_increment_external: the increment on an external cohort.

The clinical model against itself gives increments of exactly 0; every
metric equals scikit-survival's (or lifelines', or a naive partial
likelihood) computed by hand on the same predictions; the bootstrap is
paired, its interval and p-value are the stated percentiles and share, and
it is deterministic with a seed; bad input names the fix.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import make_blocks, needs_survival
from numpy.testing import assert_allclose

from vcpcr import VCPCR

pytestmark = needs_survival


def _cohort(n, seed):
    X, lin, _, _ = make_blocks(n=n, seed=seed)
    rng = np.random.default_rng(seed + 10)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    age = rng.normal(size=n)
    node = rng.choice(["0", "1"], n)
    frame.insert(0, "node", node)
    frame.insert(0, "age", age)
    t = rng.exponential(np.exp(-0.5 * (lin - lin.mean()) - 0.7 * age))
    c = rng.exponential(2 * np.median(t), size=n)
    return frame, np.column_stack([np.minimum(t, c), (t <= c).astype(float)])


@pytest.fixture(scope="module")
def cohorts():
    X_train, y_train = _cohort(150, 3)
    X_ext, y_ext = _cohort(100, 4)
    model = VCPCR(3, family="cox", lam_ratio=0.3, n_init=2, random_state=0)
    model.set_params(covariates=["age"])
    return model.fit(X_train, y_train), X_train, y_train, X_ext, y_ext


def _validate(model, X_train, y_train, X_ext, y_ext, **kw):
    from vcpcr.validation import validate_increment_external

    kw = {"n_bootstrap": 30, "random_state": 0, **kw}
    return validate_increment_external(model, X_train, y_train, X_ext, y_ext, **kw)


def test_increment_is_exactly_zero_for_the_clinical_model_itself(cohorts):
    from vcpcr.validation import ClinicalCox

    _, X_train, y_train, X_ext, y_ext = cohorts
    clinical = ClinicalCox(covariates="age", strata="node").fit(X_train, y_train)
    res = _validate(clinical, X_train, y_train, X_ext, y_ext)
    assert (res.increments["increment"] == 0.0).all()
    values = res.resample_increments.drop(columns=["resample", "model"])
    values = values.to_numpy(dtype=float)
    assert np.all(values[np.isfinite(values)] == 0.0)
    assert (res.increments["status"] == "no gene").all()
    assert res.increments["ci_low"].isna().all()
    text = res.summary().as_text()
    assert "uses no gene: it is the clinical model" in text
    assert "stratified by the clinical strata" in text


def _by_hand(eta, surv_at, y_train, y_ext, tau_quantile=0.8):
    """Every metric from scikit-survival / lifelines on fixed predictions."""
    from lifelines.utils import concordance_index
    from sksurv.metrics import (
        concordance_index_ipcw,
        cumulative_dynamic_auc,
        integrated_brier_score,
    )
    from sksurv.nonparametric import kaplan_meier_estimator
    from sksurv.util import Surv

    tr = Surv.from_arrays(y_train[:, 1].astype(bool), y_train[:, 0])
    time, event = y_ext[:, 0], y_ext[:, 1].astype(bool)
    end = tr["time"].max()  # external times censored at the training follow-up
    te = Surv.from_arrays(event & (time <= end), np.minimum(time, end))
    out = {"Harrell C": concordance_index(time, -eta, event)}
    tau = np.quantile(tr["time"][tr["event"]], tau_quantile)
    out["Uno C"] = concordance_index_ipcw(tr, te, eta, tau=tau)[0]
    horizons = np.quantile(time[event], [0.25, 0.5, 0.75])
    aucs = cumulative_dynamic_auc(tr, te, eta, horizons)[0]
    out.update({f"AUC(t={h:.4g})": a for h, a in zip(horizons, aucs, strict=True)})
    lo, hi = np.quantile(time[event], [0.1, 0.8])
    grid = np.unique(time[event])
    grid = grid[(grid >= lo) & (grid <= hi) & (grid < min(end, time.max()))]
    out["IBS"] = integrated_brier_score(tr, te, surv_at(grid), grid)
    km_t, km_s = kaplan_meier_estimator(tr["event"], tr["time"])
    km = km_s[np.searchsorted(km_t, grid, side="right") - 1]
    ref = integrated_brier_score(tr, te, np.tile(km, (len(time), 1)), grid)
    out["IPA"] = 1 - out["IBS"] / ref
    # naive Breslow log partial likelihood (continuous times: no ties)
    at_risk = time[None, :] >= time[:, None]
    denominators = np.log((at_risk * np.exp(eta)[None, :]).sum(axis=1))
    out["log PL"] = float(np.sum((eta - denominators)[event]))
    return out


def test_external_metrics_against_sksurv_and_lifelines_on_the_same_predictions(
    cohorts,
):
    from lifelines import CoxPHFitter

    model, X_train, y_train, X_ext, y_ext = cohorts
    res = _validate(model, X_train, y_train, X_ext, y_ext)
    eta = model.predict_log_partial_hazard(X_ext)

    def surv(times):
        return model.predict_survival_function(X_ext, return_array=True, times=times)

    expected = _by_hand(eta, surv, y_train, y_ext)
    got = res.metrics.loc["VCPCR", "estimate"]
    assert list(got.index) == list(expected)
    assert_allclose(got.to_numpy(), list(expected.values()), rtol=1e-10, atol=0)
    # the clinical model: lifelines fitted independently on the training age
    train = pd.DataFrame({"age": X_train["age"], "t": y_train[:, 0]})
    train["e"] = y_train[:, 1]
    cph = CoxPHFitter().fit(train, "t", "e")
    eta_c = cph.predict_log_partial_hazard(X_ext[["age"]]).to_numpy()

    def surv_c(times):  # Breslow's step function (lifelines' own interpolates)
        base = cph.baseline_cumulative_hazard_.iloc[:, 0]
        H0 = base.to_numpy()[np.searchsorted(base.index, times, side="right") - 1]
        return np.exp(-np.exp(eta_c)[:, None] * H0[None, :])

    expected = _by_hand(eta_c, surv_c, y_train, y_ext)
    got = res.metrics.loc["clinical Cox", "estimate"]
    assert_allclose(got.to_numpy(), list(expected.values()), rtol=1e-6, atol=0)
    inc = res.increments.loc["VCPCR", "increment"]
    assert_allclose(
        inc.to_numpy(),
        (res.metrics.loc["VCPCR", "estimate"] - got).to_numpy(),
        rtol=1e-12,
        atol=0,
    )


def test_bootstrap_is_paired_percentile_and_deterministic_with_a_seed(cohorts):
    model, X_train, y_train, X_ext, y_ext = cohorts
    res = _validate(model, X_train, y_train, X_ext, y_ext, alpha=0.1)
    again = _validate(model, X_train, y_train, X_ext, y_ext, alpha=0.1)
    other = _validate(model, X_train, y_train, X_ext, y_ext, random_state=1)
    pd.testing.assert_frame_equal(res.increments, again.increments)
    pd.testing.assert_frame_equal(res.resample_increments, again.resample_increments)
    assert not res.resample_increments.equals(other.resample_increments)
    assert len(res.resample_increments) == res.n_bootstrap == 30
    for metric in ["Harrell C", "IBS", "log PL"]:
        d = res.resample_increments[metric].to_numpy()
        row = res.increments.loc[("VCPCR", metric)]
        lo, hi = np.quantile(d, [0.05, 0.95])
        assert_allclose([row["ci_low"], row["ci_high"]], [lo, hi], rtol=1e-12, atol=0)
        assert_allclose(row["se"], d.std(ddof=1), rtol=1e-12, atol=0)
        share = np.mean(d >= 0) if metric == "IBS" else np.mean(d <= 0)
        assert row["p"] == share
    # paired: one resample recomputed with the same rows for both models
    rng = np.random.default_rng(0)
    rows = rng.integers(0, len(X_ext), size=(30, len(X_ext)))[7]
    one = _validate(
        model,
        X_train,
        y_train,
        X_ext.iloc[rows],
        y_ext[rows],
        n_bootstrap=2,
    )
    assert_allclose(
        one.increments.loc[("VCPCR", "log PL"), "increment"],
        res.resample_increments.loc[7, "log PL"],
        rtol=1e-10,
        atol=0,
    )


def test_bootstrap_batches_run_in_parallel_in_order(cohorts):
    """n_jobs changes nothing; resample 95 (third batch of 50) is the 96th draw."""
    model, X_train, y_train, X_ext, y_ext = cohorts
    serial = _validate(model, X_train, y_train, X_ext, y_ext, n_bootstrap=120)
    parallel = _validate(
        model, X_train, y_train, X_ext, y_ext, n_bootstrap=120, n_jobs=2
    )
    pd.testing.assert_frame_equal(serial.increments, parallel.increments)
    pd.testing.assert_frame_equal(
        serial.resample_increments, parallel.resample_increments
    )
    rows = np.random.default_rng(0).integers(0, len(X_ext), size=(120, len(X_ext)))
    one = _validate(
        model, X_train, y_train, X_ext.iloc[rows[95]], y_ext[rows[95]], n_bootstrap=2
    )
    assert_allclose(
        one.increments.loc[("VCPCR", "log PL"), "increment"],
        parallel.resample_increments.loc[95, "log PL"],
        rtol=1e-10,
        atol=0,
    )


def test_summary_and_plot_read_as_the_cv_ones(cohorts):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model, X_train, y_train, X_ext, y_ext = cohorts
    res = _validate(model, X_train, y_train, X_ext, y_ext)
    text = res.summary().as_text()
    assert "Increment over the clinical model (external cohort)" in text
    assert "VCPCR minus clinical Cox" in text
    assert "30 resamples" in text
    axes = res.plot()
    n_metrics = res.increments.index.get_level_values("metric").nunique()
    assert sum(ax.get_visible() for ax in axes) == n_metrics
    plt.close("all")


def test_bad_input_names_the_fix(cohorts):
    from sklearn.exceptions import NotFittedError

    model, X_train, y_train, X_ext, y_ext = cohorts
    with pytest.raises(
        ValueError, match=r"X_external lacks the clinical column\(s\) \['age'\]"
    ):
        _validate(model, X_train, y_train, X_ext.drop(columns="age"), y_ext)
    with pytest.raises(ValueError, match=r"X_train has no columns \['age'\]"):
        _validate(model, X_train.drop(columns="age"), y_train, X_ext, y_ext)
    with pytest.raises(TypeError, match="must be a pandas DataFrame"):
        _validate(model, X_train, y_train, X_ext.to_numpy(), y_ext)
    with pytest.raises(ValueError, match="X_external has 100 rows but y_external"):
        _validate(model, X_train, y_train, X_ext, y_ext[:-1])
    with pytest.raises(ValueError, match="'n_bootstrap' parameter"):
        _validate(model, X_train, y_train, X_ext, y_ext, n_bootstrap=1)
    with pytest.raises(ValueError, match="X lacks 1 of the"):
        _validate(model, X_train, y_train, X_ext.drop(columns=_a_gene(model)), y_ext)
    with pytest.raises(NotFittedError):
        _validate(
            VCPCR(family="cox", covariates=["age"]), X_train, y_train, X_ext, y_ext
        )


@pytest.mark.parametrize(
    ("formula", "strata"),
    [
        ("Surv(time, event) ~ age + strata(node) | .", None),
        ("Surv(time, event) ~ age | .", "node"),
    ],
    ids=["strata_term", "strata_param"],
)
def test_a_formula_model_equals_the_same_model_with_covariates(formula, strata):
    """#48 item 3: a model fitted with a formula is compared with its
    formula's clinical part; outcome read from both cohorts' data. Every
    number, the names and the summary equal those of the same model
    written with covariates= and strata= (a gene missing from the external
    cohort included: the clinical model reads the aligned cohort)."""
    X_train, y_train = _cohort(150, 3)
    X_ext, y_ext = _cohort(100, 4)
    params = {"n_clusters": 3, "family": "cox", "lam_ratio": 0.3, "n_init": 2}
    by_columns = VCPCR(**params, covariates=["age"], strata="node", random_state=0)
    by_columns.fit(X_train, y_train)
    gene = _a_gene(by_columns)
    by_formula = VCPCR(**params, formula=formula, strata=strata, random_state=0)
    data_train = X_train.assign(time=y_train[:, 0], event=y_train[:, 1])
    data_ext = X_ext.assign(time=y_ext[:, 0], event=y_ext[:, 1])
    by_formula.fit(data_train)
    kw = {"missing_genes": "drop"}
    a = _validate(by_columns, X_train, y_train, X_ext.drop(columns=gene), y_ext, **kw)
    b = _validate(by_formula, data_train, None, data_ext.drop(columns=gene), None, **kw)
    assert (b.covariates, b.strata) == (a.covariates, a.strata) == (["age"], ["node"])
    numbers = ["increment", "se", "ci_low", "ci_high", "p"]
    assert_allclose(
        b.increments[numbers].to_numpy(float),
        a.increments[numbers].to_numpy(float),
        rtol=1e-9,
        atol=1e-12,
    )
    assert_allclose(b.metrics.to_numpy(float), a.metrics.to_numpy(float), rtol=1e-9)
    assert b.summary().as_text() == a.summary().as_text()
    with pytest.raises(ValueError, match="pass no y_train"):
        _validate(by_formula, data_train, y_train, data_ext, None)


def test_a_formula_model_without_a_clinical_part_names_the_fix():
    X_train, y_train = _cohort(150, 3)
    data = X_train.assign(time=y_train[:, 0], event=y_train[:, 1])
    model = VCPCR(3, family="cox", lam_ratio=0.3, n_init=2, random_state=0)
    model.set_params(formula="Surv(time, event) ~ . - node").fit(data)
    with pytest.raises(ValueError, match="has no clinical part"):
        _validate(model, data, None, data, None)


def _a_gene(model):
    return model.membership_.index[model.labels_ >= 0][0]


@pytest.mark.slow
@pytest.mark.parametrize("example", [0, 1], ids=["gse1992", "simulated"])
def test_validation_page_prints_its_pasted_output(example):
    """docs/validation.md: each example prints the output pasted under it
    (the gse1992 one needs SurvSet, the benchmarks extra; 60 s and 25 s)."""
    import importlib.util
    from pathlib import Path

    from conftest import doc_examples, printed_lines

    page = Path(__file__).resolve().parents[1] / "docs" / "validation.md"
    code, shown = doc_examples(page.read_text())[example]
    if "SurvSet" in code and importlib.util.find_spec("SurvSet") is None:
        pytest.skip("needs the benchmarks extra: pip install 'vcpcr[benchmarks]'")
    lines = printed_lines(code)
    missing = [line for line in shown.splitlines() if line.rstrip() not in lines]
    assert missing == []
