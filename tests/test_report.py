"""The reviewer's report: sections, numbers from the public functions, HTML, CLI."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from tests.conftest import needs_survival
from vcpcr import VCPCR
from vcpcr.calibration import kaplan_meier, survival_calibration
from vcpcr.cli import main
from vcpcr.validation import (
    Report,
    decision_curve,
    report,
    sample_size,
    validation_sample_size,
)

pytestmark = [
    needs_survival,
    pytest.mark.filterwarnings("ignore::vcpcr.exceptions.VCPCRWarning"),
]


def _data(seed: int = 0, n: int = 80) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 10)), columns=[f"g{j}" for j in range(10)])
    X["age"] = rng.normal(size=n)
    lp = X["g0"] + X["g1"] + 0.5 * X["age"]
    y = np.column_stack([rng.exponential(np.exp(-lp)), rng.random(n) < 0.8])
    return X, y.astype(float)


def _model() -> VCPCR:
    return VCPCR(
        family="cox",
        n_clusters=2,
        lam_ratio=0.3,
        n_init=2,
        covariates="age",
        random_state=0,
    )


@pytest.fixture(scope="module")
def full() -> tuple[Report, pd.DataFrame, np.ndarray]:
    X, y = _data()
    rep = report(
        _model(),
        X,
        y,
        cv=3,
        n_repeats=1,
        n_splits=4,
        n_pairs=2,
        external=_data(seed=1, n=60),
        random_state=0,
    )
    return rep, X, y


def test_sections_and_tripod_items(full):
    rep, _, _ = full
    titles = [s.title for s in rep.sections]
    for start in (
        "Data",
        "Model and tuning",
        "The signature",
        "Discrimination",
        "Sample size",
        "Calibration",
        "Clinical utility",
        "Multi-split",
        "Stability",
        "External validation",
    ):
        assert any(t.startswith(start) for t in titles), start
    checklist = rep.checklist()
    assert checklist.loc["10", "where"] == (
        "Sample size, Sample size of the external validation"
    )
    assert checklist.loc["17", "where"] == "to write by the authors"  # ethics
    assert {"10", "11", "12c", "12e", "22", "23a"} <= set(rep.covered())
    assert rep.skipped == []


def test_numbers_are_the_public_functions(full):
    rep, X, y = full
    res = rep.results
    # the signature: the estimator's own fit on all rows (random_state kept)
    assert_allclose(
        res["model"].signature()["coef"],
        _model().fit(X, y).signature()["coef"],
        rtol=1e-12,
        atol=0,
    )
    # calibration and decision curve: the public functions of the oof survival
    surv, h = res["out_of_fold_survival"], res["calibration"].horizon
    again = survival_calibration(y, surv, h)
    assert again.slope == res["calibration"].slope
    clinical = res["clinical_out_of_fold_survival"]
    risks = {"clinical Cox": 1 - clinical, "VCPCR": 1 - surv}
    dc = decision_curve(y, risks, horizon=h, n_bootstrap=0)
    assert_allclose(
        dc["net_benefit"], res["decision_curve"]["net_benefit"], rtol=0, atol=0
    )
    # the sample size, from the inputs the section states
    ss = res["sample_size"]
    lr = res["model"].result_.log_likelihood_ratio_test().test_statistic
    again = sample_size(
        "survival",
        parameters=ss.parameters,
        r2=1 - np.exp(-lr / len(y)),
        rate=y[:, 1].sum() / y[:, 0].sum(),
        timepoint=h,
        mean_follow_up=y[:, 0].mean(),
        n_available=len(y),
    )
    assert again.n_required == ss.n_required
    # the external validation's sample size: the external KM risk, its
    # reverse-KM censoring and the model's predicted risks there
    X2, y2 = _data(seed=1, n=60)
    survival = kaplan_meier(y2[:, 0], y2[:, 1], h)[0]
    uncensored = kaplan_meier(y2[:, 0], 1 - y2[:, 1], h)[0]
    surv2 = res["model"].predict_survival_function(X2, return_array=True, times=[h])
    predicted = 1 - surv2[:, 0]
    # (survival_calibration keeps the risks within 1e-10 of 0 and 1)
    assert_allclose(predicted, res["external"].calibration.predicted, atol=1e-9)
    predicted = res["external"].calibration.predicted
    vss = validation_sample_size(
        "survival",
        event_risk=1 - survival,
        timepoint=h,
        predicted_risk=predicted,
        censoring=1 - uncensored,
        random_state=0,  # the report seeds its own draw: n within 3 %
        n_available=len(y2),
    )
    got = res["validation_sample_size"]
    assert got.criteria["criterion"].str.split(" CI").str[0].tolist() == [
        "O/E by the time point",
        "calibration slope",
        "C statistic (Harrell's)",
    ]
    assert_allclose(got.simulation["censored_by_timepoint"], 1 - uncensored, atol=0.01)
    text = {s.title: s for s in rep.sections}[
        "Sample size of the external validation"
    ].text
    cv_c = res["increment"].metrics.loc[("VCPCR", "Harrell C"), "mean"]
    assert f"its Harrell's C is {got.simulation['c_statistic']:.3g}" in text[1]
    assert f"cross-validated {cv_c:.3g}" in text[1]
    assert_allclose(
        got.criteria["n"].to_numpy(float), vss.criteria["n"].to_numpy(float), rtol=0.03
    )
    # the tables are the results' frames, unchanged
    by_title = {s.title: s for s in rep.sections}
    inc = by_title["Discrimination and the increment over the clinical model"]
    pd.testing.assert_frame_equal(inc.tables[1][1], res["increment"].increments)
    title, c = inc.tables[2]  # the mean C with its interval (#48 item 5)
    assert title == "Mean C over the test folds (95% interval, one_fold)"
    metrics = res["increment"].metrics
    assert sorted(set(c.index.get_level_values("metric"))) == ["Harrell C", "Uno C"]
    assert len(c) == 2 * metrics.index.get_level_values("model").nunique()
    pd.testing.assert_frame_equal(
        c, metrics.loc[c.index, ["mean", "ci_low", "ci_high"]]
    )
    ms = by_title["Multi-split evidence for the modules and genes"]
    pd.testing.assert_frame_equal(
        ms.tables[0][1], res["multi_split"].module_evidence(res["model"])
    )


def test_markdown_shows_the_numbers(full):
    rep, _, _ = full
    md = rep.to_markdown()
    res = rep.results
    assert "## TRIPOD+AI checklist" in md
    assert f"{res['calibration'].slope:.4g}" in md
    assert f"at least {res['sample_size'].n_required} participants" in md
    for gene in res["model"].signature()["gene"]:
        assert f"| {gene} |" in md
    harrell = res["increment"].increments.loc[("VCPCR", "Harrell C"), "increment"]
    assert f"{harrell:.4g}" in md


def test_html_is_self_contained_and_never_overwritten(full, tmp_path):
    rep, _, _ = full
    path = tmp_path / "report.html"
    text = rep.to_html(path)
    assert path.read_text(encoding="utf-8") == text == rep._repr_html_()
    assert "<script" not in text
    assert not re.search(r"(src|href)=['\"]?https?:", text)
    images = re.findall(r"src='data:image/png;base64,([^']+)'", text)
    assert len(images) == sum(len(s.figures) for s in rep.sections) >= 4
    assert all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)
    path.write_text("mine")
    with pytest.raises(FileExistsError, match="force=True"):
        rep.to_html(path)
    assert path.read_text() == "mine"
    rep.to_html(path, force=True)
    assert path.read_text(encoding="utf-8") == text


def test_expensive_sections_can_be_skipped():
    X, y = _data()
    rep = report(
        _model(),
        X,
        y,
        cv=3,
        n_repeats=1,
        inference=False,
        stability=False,
        calibration=False,
        random_state=0,
    )
    titles = [s.title for s in rep.sections]
    assert not any(t.startswith(("Multi", "Stab", "Calib", "Clinical")) for t in titles)
    assert len(rep.skipped) == 3
    assert "inference=False" in rep.to_markdown()
    assert {"multi_split", "stability", "calibration"}.isdisjoint(rep.results)


def test_scoring_rule_section_when_the_estimator_has_one():
    class WithRule(VCPCR):
        def export_scoring_rule(self):
            return self.signature().set_index("gene")[["coef"]]

    X, y = _data()
    model = WithRule(
        family="cox",
        n_clusters=2,
        lam_ratio=0.3,
        n_init=2,
        covariates="age",
        random_state=0,
    )
    rep = report(
        model,
        X,
        y,
        cv=3,
        n_repeats=1,
        inference=False,
        stability=False,
        calibration=False,
        random_state=0,
    )
    assert rep.sections[-1].title == "Scoring rule"
    pd.testing.assert_frame_equal(
        rep.sections[-1].tables[0][1], rep.results["scoring_rule"]
    )


BAD = {
    "poisson": (
        lambda X, y: report(VCPCR(family="poisson"), X, y),
        ValueError,
        "must have family 'cox', 'binomial' or 'gaussian'",
    ),
    "horizon for a binomial model": (
        lambda X, y: report(
            VCPCR(family="binomial", covariates="age"), X, y[:, 1], horizon=1.0
        ),
        ValueError,
        r"'horizon' parameter of report applies to family='cox' only",
    ),
    "array X": (
        lambda X, y: report(_model(), X.to_numpy(), y),
        TypeError,
        "must be a pandas DataFrame",
    ),
    "external not a pair": (
        lambda X, y: report(_model(), X, y, external=X),
        ValueError,
        r"must be a pair \(X2, y2\)",
    ),
    "zero splits": (
        lambda X, y: report(_model(), X, y, n_splits=0),
        ValueError,
        "n_splits",
    ),
    "not an estimator": (
        lambda X, y: report("VCPCR", X, y),
        TypeError,
        "unfitted VCPCR",
    ),
}


@pytest.mark.parametrize(("call", "error", "match"), BAD.values(), ids=BAD)
def test_bad_input(call, error, match):
    X, y = _data()
    with pytest.raises(error, match=match):
        call(X, y)


def _cli_args(csv, out, *extra):
    return [
        "report",
        str(csv),
        "--time",
        "time",
        "--event",
        "event",
        "--covariates",
        "age",
        "--n-clusters",
        "2",
        "--lam-ratio",
        "0.3",
        "--cv",
        "3",
        "--repeats",
        "1",
        "--no-inference",
        "--no-stability",
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]


def test_cli_writes_the_report_and_never_overwrites_without_force(tmp_path, capsys):
    X, y = _data()
    csv = tmp_path / "cohort.csv"
    X.assign(time=y[:, 0], event=y[:, 1].astype(int)).to_csv(csv, index=False)
    out = tmp_path / "report.html"
    assert main(_cli_args(csv, out)) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    text = out.read_text(encoding="utf-8")
    assert "TRIPOD+AI checklist" in text
    assert "data:image/png;base64," in text
    out.write_text("mine")
    fast = "--no-calibration"
    assert main(_cli_args(csv, out, fast)) == 2
    assert "already exists; pass --force" in capsys.readouterr().err
    assert out.read_text() == "mine"
    assert main([*_cli_args(csv, out, fast), "--force"]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    md = tmp_path / "report.md"
    assert main(_cli_args(csv, md, fast)) == 0
    assert md.read_text(encoding="utf-8").startswith("# Signature report")


def test_cli_names_unknown_columns(tmp_path, capsys):
    X, y = _data()
    csv = tmp_path / "cohort.csv"
    X.assign(T=y[:, 0], event=y[:, 1]).to_csv(csv, index=False)
    assert main(_cli_args(csv, tmp_path / "r.html")) == 2
    assert "has no columns ['time']" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

_PROBE = """<script>
window.__errors = [];
window.addEventListener(
  'error', e => window.__errors.push(String(e.message || e.target.src)), true);
const _err = console.error;
console.error = (...a) => { window.__errors.push(a.join(' ')); _err(...a); };
window.addEventListener('load', () => {
  const imgs = [...document.images];
  const bad = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).length;
  const p = document.createElement('pre');
  const n = window.__errors.length;
  p.textContent = `images=${imgs.length} broken=${bad} errors=${n}`;
  document.body.appendChild(p);
});
</script>"""


@pytest.mark.skipif(
    CHROMIUM is None, reason="needs headless Chromium (apt-get install chromium)"
)
def test_html_renders_in_headless_chromium(full, tmp_path):
    rep, _, _ = full
    page = tmp_path / "probe.html"
    page.write_text(rep.to_html().replace("<head>", "<head>" + _PROBE, 1))
    run = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    probe = re.search(r"images=(\d+) broken=(\d+) errors=(\d+)", run.stdout)
    assert probe is not None, run.stderr[-2000:]
    n_images, broken, errors = map(int, probe.groups())
    assert n_images == sum(len(s.figures) for s in rep.sections)
    assert broken == 0
    assert errors == 0


@pytest.mark.slow
def test_a_vcpcrcv_reports_its_rule_and_grid_without_its_own_bar():
    from vcpcr import VCPCRCV

    X, y = _data()
    cv = VCPCRCV(
        family="cox",
        n_clusters=[1, 2],
        lam_ratios=[0.3, 0.6],
        deltas=[0.5],
        cv=3,
        n_init=1,
        covariates="age",
        random_state=0,
        verbose=True,
    )
    rep = report(
        cv,
        X,
        y,
        cv=3,
        n_repeats=1,
        inference=False,
        stability=False,
        calibration=False,
        random_state=0,
    )
    model = rep.results["model"]
    assert model.verbose is False
    tuning = next(s for s in rep.sections if s.title == "Model and tuning")
    captions = [c for c, _ in tuning.tables]
    assert captions == ["Parameters", "Chosen hyperparameters", "Grid (values tried)"]
    chosen = tuning.tables[1][1]["value"]
    assert chosen.to_dict() == {k: repr(v) for k, v in model.best_params_.items()}
    grid = tuning.tables[2][1]["values"]
    assert grid["n_clusters"] == "1, 2"
    assert grid["lam_ratio"] == "0.3, 0.6"


def test_an_unseeded_estimator_gives_the_same_report_twice():
    X, y = _data()
    model = VCPCR(family="cox", n_clusters=2, lam_ratio=0.3, covariates="age")
    kw = {"cv": 3, "n_repeats": 1, "inference": False, "stability": False}
    one = report(model, X, y, random_state=3, **kw).results
    two = report(model, X, y, random_state=3, **kw).results
    assert model.random_state is None  # the caller's estimator is not changed
    assert_allclose(
        one["out_of_fold_survival"], two["out_of_fold_survival"], rtol=0, atol=0
    )
    pd.testing.assert_frame_equal(one["increment"].folds, two["increment"].folds)


# ------------------------------------------------------ binomial and gaussian
def _glm_data(family: str, seed: int = 0, n: int = 90):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 8)), columns=[f"g{j}" for j in range(8)])
    X["age"] = rng.normal(size=n)
    lp = X["g0"] + X["g1"] + 0.5 * X["age"]
    if family == "binomial":
        return X, np.where(rng.random(n) < 1 / (1 + np.exp(-lp)), "yes", "no")
    return X, (3.0 + lp + rng.normal(size=n)).to_numpy()


@pytest.fixture(scope="module", params=["binomial", "gaussian"])
def glm(request):
    family = request.param
    X, y = _glm_data(family)
    model = VCPCR(
        family=family,
        n_clusters=2,
        lam_ratio=0.3,
        n_init=2,
        covariates="age",
        random_state=0,
    )
    rep = report(
        model,
        X,
        y,
        cv=3,
        n_repeats=1,
        n_splits=4,
        n_pairs=2,
        external=_glm_data(family, seed=1, n=60),
        random_state=0,
    )
    return family, rep, X, y


def test_binary_and_gaussian_reports_have_their_sections(glm):
    family, rep, _, _ = glm
    titles = [s.title for s in rep.sections]
    expected = [
        "Data",
        "Model and tuning",
        "The signature",
        "Discrimination and the increment over the clinical model",
        "Sample size",
        "Calibration",
        *(["Clinical utility: decision curve"] if family == "binomial" else []),
        "Multi-split evidence for the modules and genes",
        "Stability of the selection and of the modules",
        "External validation",
        "Sample size of the external validation",
        "Scoring rule",
    ]
    assert titles == expected
    assert {"10", "11", "12c", "12e", "22", "23a"} <= set(rep.covered())
    assert rep.skipped == []
    inc = rep.results["increment"]
    clinical = {"binomial": "clinical logistic", "gaussian": "clinical linear"}
    assert inc.clinical == clinical[family]
    metrics = {"binomial": ["AUC", "Brier"], "gaussian": ["R2", "RMSE"]}[family]
    assert list(inc.increments.index.get_level_values("metric")) == metrics


def test_binary_and_gaussian_numbers_are_the_public_functions(glm):
    from vcpcr.calibration import binary_calibration, regression_calibration

    family, rep, X, y = glm
    res = rep.results
    by_title = {s.title: s for s in rep.sections}
    inc = by_title["Discrimination and the increment over the clinical model"]
    pd.testing.assert_frame_equal(inc.tables[1][1], res["increment"].increments)
    # calibration: the out-of-fold predictions (not the in-sample ones)
    cal = res["calibration"]
    model = res["model"]
    if family == "binomial":
        events = y == "yes"
        in_sample = model.predict_proba(X)[:, 1]
        again = binary_calibration(events, cal.predicted)
        assert again.intercept == cal.intercept
    else:
        in_sample = model.predict(X)
        again = regression_calibration(y, cal.predicted)
    assert again.slope == cal.slope
    assert not np.allclose(cal.predicted, in_sample)
    frame = by_title["Calibration"].tables[0][1]
    assert frame.loc["calibration slope", "estimate"] == cal.slope
    # the sample size, from the inputs the section states
    ss = res["sample_size"]
    fitted = model
    parameters = len(fitted.covariate_names_) + fitted.n_clusters_
    if family == "binomial":
        r2 = 1 - np.exp(-fitted.result_.llr / len(y))
        again = sample_size(
            "binary", parameters=parameters, r2=r2, prevalence=events.mean()
        )
    else:
        again = sample_size(
            "continuous",
            parameters=parameters,
            r2=fitted.result_.rsquared_adj,
            intercept=y.mean(),
            sd=y.std(ddof=1),
        )
    assert again.n_required == ss.n_required
    pd.testing.assert_frame_equal(by_title["Sample size"].tables[0][1], ss.criteria)
    if family == "binomial":
        # the decision curve: the public function of both out-of-fold risks
        risks = {
            "clinical logistic": res["clinical_calibration"].predicted,
            "VCPCR": cal.predicted,
        }
        dc = decision_curve(events, risks, n_bootstrap=0)
        assert_allclose(
            dc["net_benefit"], res["decision_curve"]["net_benefit"], rtol=0, atol=0
        )
        # the external validation's sample size
        X2, y2 = _glm_data(family, seed=1, n=60)
        vss = validation_sample_size(
            "binary",
            prevalence=(y2 == "yes").mean(),
            c_statistic=res["increment"].metrics.loc[("VCPCR", "AUC"), "mean"],
            predicted_risk=model.predict_proba(X2)[:, 1],
            n_available=len(y2),
        )
        pd.testing.assert_frame_equal(
            vss.criteria, res["validation_sample_size"].criteria
        )
    else:
        # the external validation's sample size: the CV R2, the external
        # variance, a tenth of the external SD as the CITL width
        _, y2 = _glm_data(family, seed=1, n=60)
        vss = validation_sample_size(
            "continuous",
            r2=res["increment"].metrics.loc[("VCPCR", "R2"), "mean"],
            variance=y2.var(ddof=1),
            citl_width=0.1 * y2.std(ddof=1),
            n_available=len(y2),
        )
        pd.testing.assert_frame_equal(
            vss.criteria, res["validation_sample_size"].criteria
        )
        text = by_title["Sample size of the external validation"].text[0]
        assert "a tenth of the external outcome's SD" in text


def test_gaussian_citl_width_override_and_refusal():
    X, y = _glm_data("gaussian")
    X2, y2 = _glm_data("gaussian", seed=1, n=60)
    model = VCPCR(
        family="gaussian", n_clusters=2, lam_ratio=0.3, covariates="age", random_state=0
    )
    kw = {"cv": 3, "n_repeats": 1, "inference": False, "stability": False}
    kw.update(calibration=False, external=(X2, y2), random_state=0)
    rep = report(model, X, y, citl_width=0.5, **kw)
    vss = rep.results["validation_sample_size"]
    assert vss.criteria["criterion"].iloc[1] == (
        "calibration-in-the-large CI width <= 0.5"
    )
    assert "given (citl_width=)" in rep.sections[-2].text[0]
    with pytest.raises(ValueError, match=r"'citl_width'.*range"):
        report(model, X, y, citl_width=0.0, **kw)
    with pytest.raises(ValueError, match=r"'citl_width'.*'gaussian' only"):
        report(_model(), *_data(), citl_width=0.5, **kw)


def test_binary_and_gaussian_html_is_self_contained(glm, tmp_path):
    family, rep, _, _ = glm
    text = rep.to_html(tmp_path / "report.html")
    assert "<script" not in text
    assert not re.search(r"(src|href)=['\"]?https?:", text)
    images = re.findall(r"src='data:image/png;base64,([^']+)'", text)
    figures = {"binomial": 4, "gaussian": 3}[family]  # + decision curve
    assert len(images) == sum(len(s.figures) for s in rep.sections) == figures
    assert all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)
    md = rep.to_markdown()
    metric = {"binomial": "AUC", "gaussian": "R2"}[family]
    inc = rep.results["increment"].increments.loc[("VCPCR", metric), "increment"]
    assert f"{inc:.4g}" in md


def test_tripod_items_are_the_checklist():
    """TRIPOD+AI (Collins et al. 2024): 27 items, 52 sub-items, in order;
    spot checks of the sub-items written from memory before (8b, 8c, 9c)."""
    from vcpcr._report import TRIPOD_ITEMS

    items = list(TRIPOD_ITEMS)
    assert len(items) == 52
    assert len({re.match(r"\d+", i).group() for i in items}) == 27
    assert items[:3] == ["1", "2", "3a"]
    assert items[-3:] == ["27a", "27b", "27c"]
    counts = {
        k: sum(re.fullmatch(rf"{k}[a-g]", i) is not None for i in items)
        for k in ("12", "18", "20", "27")
    }
    assert counts == {"12": 7, "18": 6, "20": 3, "27": 3}
    assert "qualifications" in TRIPOD_ITEMS["8b"]
    assert "blinding" in TRIPOD_ITEMS["8c"]
    assert "qualifications" in TRIPOD_ITEMS["9c"]
    assert TRIPOD_ITEMS["10"] == "Sample size"
    assert TRIPOD_ITEMS["19"] == "Patient and public involvement"


def test_a_centred_gaussian_outcome_says_why_there_is_no_sample_size():
    X, y = _glm_data("gaussian")
    y = y - y.mean()
    rep = report(
        VCPCR(
            family="gaussian",
            n_clusters=2,
            lam_ratio=0.3,
            n_init=1,
            covariates="age",
            random_state=0,
        ),
        X,
        y,
        cv=3,
        n_repeats=1,
        inference=False,
        stability=False,
        calibration=False,
        random_state=0,
    )
    section = next(s for s in rep.sections if s.title == "Sample size")
    assert "could not be computed" in section.text[0]
    assert "intercept near 0" in section.text[0]
    assert "sample_size" not in rep.results
    assert rep.skipped[0] == "Calibration (calibration=False)."


# ------------------------------------------------------------ formula models
def _without_tuning(text: str) -> list[str]:
    """The Markdown's sections but the parameter list (formula vs covariates),
    without the summary's outcome name (``y`` vs the formula's left side)."""
    lines = [line for line in text.splitlines() if not line.startswith("Dep. Var")]
    sections = "\n".join(lines).split("\n## ")
    return [s for s in sections if "Model and tuning" not in s[:30]]


@pytest.mark.parametrize("family", ["cox", "binomial"], ids=["cox", "binomial"])
def test_a_formula_report_equals_the_covariates_report(family):
    """report(model with formula, data) prints the numbers of the covariates=
    report on the same data and seed: the formula's clinical part is the
    clinical model, its outcome read from the data (no y)."""
    genes = [f"g{j}" for j in range(10)]
    kw = {"cv": 3, "n_repeats": 1, "n_splits": 3, "n_pairs": 2, "random_state": 0}
    common = {"family": family, "n_clusters": 2, "lam_ratio": 0.3, "n_init": 2}
    if family == "cox":
        X, y = _data()
        X2, y2 = _data(seed=1, n=60)
        outcome, lhs = ["time", "event"], "Surv(time, event)"
    else:
        X, y = _data()
        X2, y2 = _data(seed=1, n=60)
        y, y2 = y[:, 0] > np.median(y[:, 0]), y2[:, 0] > np.median(y[:, 0])
        y, y2 = y.astype(float), y2.astype(float)
        outcome, lhs = ["label"], "label"
    X, X2 = X[["age", *genes]], X2[["age", *genes]]

    def frame(X, y):
        return pd.concat([X, pd.DataFrame(y, columns=outcome)], axis=1)

    by_columns = VCPCR(covariates="age", random_state=0, **common)
    by_formula = VCPCR(formula=f"{lhs} ~ age | .", random_state=0, **common)
    a = report(by_columns, X, y, external=(X2, y2), **kw)
    b = report(by_formula, frame(X, y), external=(frame(X2, y2), None), **kw)
    assert b.results["increment"].covariates == ["age"]
    assert re.search(rf"Dep. Variable: +{re.escape(lhs)} ", b.to_markdown())
    assert _without_tuning(b.to_markdown()) == _without_tuning(a.to_markdown())
    with pytest.raises(ValueError, match="pass no y"):
        report(by_formula, frame(X, y), y, **kw)
