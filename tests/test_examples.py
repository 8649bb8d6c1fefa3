"""Every script in examples/ runs (they use real, packaged data) and prints
what its fitted objects hold."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.metrics import r2_score

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def _classification(ns, out):
    acc = ns["acc"]
    assert f"Nested-CV accuracy: {acc.mean():.3f} (sd {acc.std(ddof=1):.3f})" in out
    assert acc.mean() > 0.6  # two balanced classes (a median split): chance is 0.5
    assert list(ns["cv"].classes_) == ["heavy", "light"]


def _regression(ns, out):
    best, frame = ns["cv"].best_estimator_, ns["frame"]
    members = best.clusters_["cluster_1"]
    assert f"Members of the first cluster: {members}" in out
    r2 = r2_score(frame["weight_per_length"], best.predict(frame))
    assert f"In-sample R^2 of the refit: {round(r2, 3)}" in out


def _survival(ns, out):
    """The printed survival probabilities are those of the shrunk Cox model
    (VCPCRCV's default refit is shrunk by the chosen point's calibration
    slope): scikit-survival's Breslow estimator on the shrunk training linear
    predictors of the clinical covariates and the latent variables; the
    clinical columns are covariates, never clustered."""
    from sksurv.linear_model.coxph import BreslowEstimator

    model, frame, days = ns["model"], ns["frame"], ns["days"]
    clinical = ["age", "size", "er[T.positive]", "grade[T.intermediate]"]
    assert model.covariate_names_[:4] == clinical
    assert not set(model.membership_.index) & {"age", "size", "er", "grade"}
    design = model.outcome_design(frame.iloc[:3])
    assert list(design.columns) == list(model.result_.params_.index)
    assert 0 < model.shrinkage < 1

    def risk(rows):
        return np.asarray(model.predict_log_partial_hazard(rows), dtype=float)

    event, time = frame["event"].to_numpy() == 1, frame["time"].to_numpy()
    breslow = BreslowEstimator().fit(risk(frame), event, time)
    # A step function: the value at the last baseline time <= day.
    curves = breslow.get_survival_function(risk(frame.iloc[:3]))
    ref = np.vstack([f(np.asarray(days, dtype=float)) for f in curves])
    for i, probs in enumerate(ref):
        line = re.search(rf"patient {i}: .* days: \[(.*)\]", out)
        assert line is not None
        printed = np.array(line.group(1).split(), dtype=float)
        assert_allclose(printed, probs.round(3), rtol=0, atol=1e-12)
        assert np.all(np.diff(probs) < 0)


def _real_cohort(ns, out):
    """The printed held-out C is lifelines' on the tuned model's risk."""
    from lifelines.utils import concordance_index

    y, test = ns["y"], ns["test"]
    risk = ns["cv"].predict_log_partial_hazard(ns["X"][test])
    c = concordance_index(y[test, 0], -risk, y[test, 1])
    assert f"Held-out Harrell's C: {c:.3f}" in out
    assert ns["cv"].scoring == "neg_pooled_deviance"  # the default
    genes = int(out.split("Genes selected: ")[1].split()[0])
    assert genes == int(np.count_nonzero(ns["cv"].best_estimator_.coef_)) > 0


def _clinical(ns, out):
    """gse1992 with clinical columns: every step ran and printed its result."""
    from lifelines.utils import concordance_index

    X_test, y_test, keep = ns["X_test"], ns["y_test"], ns["keep"]
    risk = ns["cv"].predict_log_partial_hazard(X_test[keep])
    c = concordance_index(
        y_test["time"][keep], -risk, y_test["event"][keep].astype(bool)
    )
    assert f"Held-out Harrell's C: {c:.3f}" in out
    assert ns["cv"].best_estimator_.strata_names_ == ["node[T.1]"]
    assert ns["result"].n_splits == 50
    assert str(ns["result"].summary()) in out
    assert ns["tuned"].n_splits == 10
    assert ns["stability"].n_pairs == 25
    assert list(ns["timings"]) == [
        line.split(":")[0][1:]
        for line in re.findall(r"^\[[^\]]+: [\d.]+ s\]$", out, flags=re.M)
    ]
    assert Path("vcpcr-output/clinical_risk_groups.png").stat().st_size > 10_000


#: What each example prints besides the tuned model's summary.
CHECKS = {
    "clinical_cohort": _clinical,
    "classification_liver": _classification,
    "regression_liver_formula": _regression,
    "survival_breast_cancer": _survival,
    "survival_real_cohort": _real_cohort,
}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::vcpcr.exceptions.SeparationWarning")
# SurvSet's pickles were written by numpy < 2 (survival_real_cohort)
@pytest.mark.filterwarnings(
    "ignore:numpy.core.numeric is deprecated:DeprecationWarning"
)
# clinical_cohort drops the rows with missing clinical values on purpose, and
# node status separates the outcome in a few halves of its multi-split (those
# splits fail and count as p = 1; others warn, re-issued once with counts)
@pytest.mark.filterwarnings("ignore:Dropped \\d+ of:vcpcr.exceptions.VCPCRWarning")
@pytest.mark.filterwarnings("ignore:In (multi_split|stability_selection):UserWarning")
@pytest.mark.filterwarnings("ignore:stability_selection. the fits on:UserWarning")
@pytest.mark.filterwarnings("ignore:multi_split. .* splits failed:UserWarning")
# and with the default signed latent variables, some stratified Cox fits of
# its CV do not converge or are ill-conditioned in small training folds
# (warned once, with counts)
@pytest.mark.filterwarnings("ignore:In cross-validation .*The Cox outcome model")
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path, capsys, tmp_path, monkeypatch):
    if path.stem.startswith(("survival", "clinical")):  # the survival extra
        pytest.importorskip("lifelines")
        pytest.importorskip("sksurv")
    if path.stem in ("survival_real_cohort", "clinical_cohort"):  # benchmarks
        pytest.importorskip("SurvSet")  # extra (GPL-3)
    monkeypatch.chdir(tmp_path)  # figures go to vcpcr-output/ there
    ns = runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert str(ns["cv"].summary()) in out
    CHECKS[path.stem](ns, out)


def test_examples_are_checked_and_documented():
    """Each example has its checks above, says how to run itself, and every
    example the docs point to exists."""
    assert sorted(p.stem for p in EXAMPLES) == sorted(CHECKS)
    for path in EXAMPLES:
        assert f"Run: python examples/{path.name}" in path.read_text()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    cited = {
        m for page in pages for m in re.findall(r"examples/(\w+)\.py", page.read_text())
    }
    assert cited, "the docs cite no example"
    assert cited <= set(CHECKS)
