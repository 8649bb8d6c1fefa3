"""Binary classification: heavier-than-median mice from liver gene expression.

Run: python examples/classification_liver.py
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score

from vcpcr import VCPCRCV
from vcpcr.datasets import load_liver

X, y = load_liver(return_X_y=True)
heavy = np.where(y > y.median(), "heavy", "light")

# Tuned by the default criterion: the pooled cross-validated deviance.
cv = VCPCRCV(
    n_clusters=(5, 10),
    family="binomial",
    lam_ratios=[0.1, 0.3, 0.5, 0.7],
    cv=StratifiedKFold(5, shuffle=True, random_state=0),
    n_jobs=2,
    random_state=0,
)
cv.fit(X, heavy)
print(cv.summary())

# An honest estimate of the tuned classifier's accuracy: nested CV.
outer = StratifiedKFold(3, shuffle=True, random_state=1)
acc = cross_val_score(cv, X, heavy, cv=outer, scoring="accuracy")
print(f"\nNested-CV accuracy: {acc.mean():.3f} (sd {acc.std(ddof=1):.3f})")
