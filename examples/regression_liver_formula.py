"""Regression with a formula: body weight / length on liver gene expression.

Run: python examples/regression_liver_formula.py
"""

from __future__ import annotations

from sklearn.model_selection import KFold

from vcpcr import VCPCRCV
from vcpcr.datasets import load_liver

frame = load_liver().frame  # target, weight_g, length_cm, then 2785 probes

# "y ~ . - a - b": every other column is a predictor. The formula is a
# constructor parameter, so fit() takes the DataFrame alone.
cv = VCPCRCV(
    n_clusters=(10, 20),
    formula="weight_per_length ~ . - weight_g - length_cm",
    cv=KFold(5, shuffle=True, random_state=0),
    n_jobs=2,
    random_state=0,
)
cv.fit(frame)
print(cv.summary())
print("\nMembers of the first cluster:", cv.best_estimator_.clusters_["cluster_1"])
# The refit predicts with its cluster coefficients shrunk by the CV's
# calibration slope (cv.shrinkage_, summary note): its R^2 is a little below
# the summary's, which is the unshrunk least-squares fit's.
print("In-sample R^2 of the refit:", round(cv.best_estimator_.score(frame), 3))
print("Shrinkage of the predictions:", round(cv.shrinkage_, 3))
