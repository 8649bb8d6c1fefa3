"""A real cohort with clinical columns, start to finish: breast cancer, gse1992.

SurvSet's ``gse1992`` cohort (GPL-3; ``pip install 'vcpcr[benchmarks]'``,
never imported by vcpcr itself): 124 patients, 15,528 gene-expression
columns, and the clinical columns age, tumour size, ER status and node
status. SurvSet codes a missing clinical value as the level ``"missing"``;
a level with two rows and no event cannot be adjusted for (vcpcr says so
before fitting), so it is made a missing value and ``missing="drop"`` drops
those rows.

Steps, each timed (wall seconds):

1. ``VCPCRCV`` tunes the gene clusters on 70 % of the patients, adjusted for
   age, size and ER status, stratified by node status; Harrell's C on the
   other 30 %. With its default signed latent variables, the stratified Cox
   fits of some grid points do not converge, or are ill-conditioned, in some
   small training folds (not so with ``latent="paper"``): vcpcr warns once
   per kind, with counts. On this
   split the default tuning chooses no gene: the model is the clinical Cox
   model.
2. ``multi_split`` with a fixed ``VCPCR`` template, 50 splits: p-values for
   the modules and genes that hold after selection (the resampling takes no
   strata: node status is a covariate there). In some halves of the 82
   training patients no node-negative patient has an event: that split's
   fit is refused (a level without events), counted as p = 1 for every gene
   and reported once; in a few others node status nearly separates the
   outcome, and vcpcr re-issues the fits' warnings once, with counts.
3. ``multi_split`` with a ``VCPCRCV`` template (every split re-tunes), 10
   splits. Each split's CV trains on about 33 patients: as in step 2, a
   split whose training folds leave the node-negative patients without an
   event fails (reported once, with its count: about 4 of the 10), and in
   most other splits node status (quasi-)separates the outcome in most of
   the CV's fits, so their scores are those of Firth's estimates (warned,
   with counts). On a cohort this small the re-tuned p-values have little
   power; the step shows how the pieces fit together.
4. ``stability_selection``: how reproducible the selection is.
5. Risk groups on the held-out patients (Kaplan-Meier curves by the median
   of the linear predictor), written to ``vcpcr-output/``.

Run: python examples/clinical_cohort.py
"""

from __future__ import annotations

import os
import time

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
from lifelines.utils import concordance_index
from sklearn.model_selection import train_test_split
from SurvSet.data import SurvLoader

from vcpcr import VCPCR, VCPCRCV
from vcpcr.inference import multi_split, stability_selection
from vcpcr.plotting import plot_risk_groups

CLINICAL = {
    "num_age": "age",
    "num_size": "size",
    "fac_er_positive": "er",
    "fac_node_status": "node",
}
COVARIATES = ["age", "size", "er"]
STRATA = ["node"]
timings: dict[str, float] = {}


def step(name: str, start: float) -> None:
    timings[name] = time.perf_counter() - start
    print(f"[{name}: {timings[name]:.1f} s]\n")


df = SurvLoader().load_dataset("gse1992")["df"]
genes = df.filter(regex="^num_HS_").dropna(axis=1)
clinical = df[list(CLINICAL)].rename(columns=CLINICAL)
for column in ("er", "node"):  # SurvSet's "missing" level is a missing value
    clinical[column] = clinical[column].astype(str).replace("missing", np.nan)
X = pd.concat([clinical, genes], axis=1)
y = df[["time", "event"]]
print(f"gse1992: {X.shape[0]} patients, {genes.shape[1]} genes, clinical {COVARIATES}")
train, test = train_test_split(
    np.arange(len(y)), test_size=0.3, stratify=y["event"], random_state=0
)
X_train, y_train = X.iloc[train], y.iloc[train]
X_test, y_test = X.iloc[test], y.iloc[test]
common = {
    "family": "cox",
    "covariates": COVARIATES,
    "strata": STRATA,
    "missing": "drop",
}

# 1. Tuning by cross-validation, judged on held-out patients.
start = time.perf_counter()
cv = VCPCRCV(random_state=0, **common).fit(X_train, y_train)
print(cv.summary())
keep = X_test[COVARIATES + STRATA].notna().all(axis=1).to_numpy()
risk = cv.predict_log_partial_hazard(X_test[keep])
c_test = concordance_index(
    y_test["time"][keep], -risk, y_test["event"][keep].astype(bool)
)
print(f"Held-out Harrell's C: {c_test:.3f} ({keep.sum()} patients)")
step("1 VCPCRCV", start)

# 2. Multi-split p-values with a fixed template (node status a covariate).
start = time.perf_counter()
adjusted = {"family": "cox", "covariates": COVARIATES + STRATA, "missing": "drop"}
template = VCPCR(n_clusters=4, random_state=0, **adjusted)
result = multi_split(template, X_train, y_train, n_splits=50, random_state=0)
print(result.summary())
step("2 multi_split, VCPCR template, 50 splits", start)

# 3. Multi-split with a template that re-tunes in every split.
start = time.perf_counter()
tuned = multi_split(
    VCPCRCV(n_clusters=(4,), **adjusted), X_train, y_train, n_splits=10, random_state=0
)
print(tuned.splits[["used", "n_modules", "n_selected", "lam_ratio"]].to_string())
step("3 multi_split, VCPCRCV template, 10 splits", start)

# 4. Stability selection.
start = time.perf_counter()
stability = stability_selection(template, X_train, y_train, n_pairs=25, random_state=0)
print(stability.summary())
step("4 stability_selection, 50 fits", start)

# 5. Risk groups of the held-out patients.
start = time.perf_counter()
os.makedirs("vcpcr-output", exist_ok=True)
ax = plot_risk_groups(cv.best_estimator_, X_test[keep], y_test[keep], cv=None)
ax.figure.savefig("vcpcr-output/clinical_risk_groups.png", dpi=120)
print("Wrote vcpcr-output/clinical_risk_groups.png")
step("5 risk groups", start)

print(pd.Series(timings, name="seconds").round(1).to_string())
