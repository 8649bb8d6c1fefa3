"""Survival on a real wide cohort: mantle cell lymphoma, 92 x 574 genes.

The ``MCLcleaned`` cohort of the SurvSet package (GPL-3; ``pip install
'vcpcr[benchmarks]'``, never imported by vcpcr itself): 92 patients, 64
deaths, 574 gene-expression columns (``num_X*``). VC-PCR is tuned by
``VCPCRCV``'s default criterion (the pooled cross-validated partial-likelihood
deviance, the sparsest grid point within 0.75 paired standard errors of the
best) on 70% of the patients (stratified on the event) and judged on the
other 30% by Harrell's C.
``benchmarks/bench_cohorts.py`` runs six cohorts.

Run: python examples/survival_real_cohort.py
"""

from __future__ import annotations

import numpy as np
from lifelines.utils import concordance_index
from sklearn.model_selection import StratifiedKFold, train_test_split
from SurvSet.data import SurvLoader

from vcpcr import VCPCRCV

df = SurvLoader().load_dataset("MCLcleaned")["df"]
X = df.filter(regex="^num_").to_numpy(dtype=float)
y = df[["time", "event"]].to_numpy(dtype=float)
train, test = train_test_split(
    np.arange(len(y)), test_size=0.3, stratify=y[:, 1], random_state=0
)

cv = VCPCRCV(
    family="cox",
    cv=list(StratifiedKFold(5, shuffle=True, random_state=0).split(train, y[train, 1])),
    random_state=0,
)
cv.fit(X[train], y[train])
print(cv.summary())

risk = cv.predict_log_partial_hazard(X[test])
c_test = concordance_index(y[test, 0], -risk, y[test, 1])
genes = int(np.count_nonzero(cv.best_estimator_.coef_))
print(f"Genes selected: {genes} in {cv.best_estimator_.n_clusters_} clusters")
print(f"Held-out Harrell's C: {c_test:.3f}")
