"""Survival: time to distant metastasis in breast cancer (GSE7390).

The cohort of Desmedt et al. (2007): 198 node-negative patients, 76 genes of
a prognostic signature plus age, tumour size, grade and estrogen receptor
status, which enter as clinical covariates beside the gene modules. It ships
with scikit-survival (pip install 'vcpcr[examples]').

Run: python examples/survival_breast_cancer.py
"""

from __future__ import annotations

from sklearn.model_selection import KFold
from sksurv.datasets import load_breast_cancer

from vcpcr import VCPCRCV

X, y = load_breast_cancer()
frame = X.assign(time=y["t.tdm"], event=y["e.tdm"].astype(int))
# Grade "unkown" (sic) has 2 patients and no event: its coefficient would
# diverge (vcpcr refuses it). Drop those rows and the unused level.
frame = frame[frame["grade"] != "unkown"]
frame["grade"] = frame["grade"].cat.remove_unused_categories()

# Surv(time, event) needs no import inside a formula. The clinical columns
# left of "|" are covariates: adjusted for (unpenalized, on their own scale;
# "er" and "grade" as treatment dummies), never clustered with the genes; "."
# right of "|" is every other column, the 76 genes.
cv = VCPCRCV(
    n_clusters=(3, 5),
    family="cox",
    formula="Surv(time, event) ~ age + size + er + grade | .",
    cv=KFold(5, shuffle=True, random_state=0),
    n_jobs=2,
    random_state=0,
)
cv.fit(frame)
print(cv.summary())

model = cv.best_estimator_
# As scikit-survival: one step function per patient (or return_array=True).
days = [1000, 3000, 5000]
for i, fn in enumerate(model.predict_survival_function(frame.iloc[:3])):
    print(f"patient {i}: metastasis-free survival at {days} days:", fn(days).round(3))
