"""Benchmark: the folds' column order (#50 item 1) between two checkouts.

Run from anywhere, with the checkouts to compare (the first is "before")::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_fold_order.py /path/to/main .

Each checkout fits the same ``VCPCRCV`` cases in its own subprocess
(``PYTHONPATH`` set to it): the two pinned cases of
``tests/test_engine_regression.py`` (no covariates), the covariate cases of
``tests/test_covariates.py`` (``age`` first, ``sex`` at position 3, gaussian,
binomial, cox, cox with a stratum at position 10, cox scored by Harrell's C)
and the Cox 200 x 500 cohort of ``bench_validate_once.py``, without and with
two covariates among the features. Printed per case: whether the results are
bit-identical, the maximum relative difference of the ``cv_results_`` scores
(every split and the mean) and of ``coef_``, and whether ``best_index_`` is
the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

#: The cases, run with the checkout on PYTHONPATH; prints JSON.
CASES = r"""
import json, sys, warnings
import numpy as np, pandas as pd
sys.path.insert(0, sys.argv[1] + "/tests")
from conftest import PREVIOUS_DEFAULT, make_blocks
from sklearn.model_selection import KFold
from vcpcr import VCPCRCV, Surv
from vcpcr.simulate import make_block_data

def simulate(n=90, p=24, seed=0):  # tests/test_covariates.py's _simulate
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(n, p))
    G[:, :4] += rng.normal(size=(n, 1))
    age = rng.normal(60.0, 10.0, n)
    sex = rng.integers(0, 2, n).astype(float)
    X = pd.DataFrame(G, columns=[f"g{j}" for j in range(p)])
    X.insert(0, "age", age)
    X.insert(3, "sex", sex)
    eta = 0.08 * (age - 60.0) + 0.5 * sex + 0.4 * G[:, :4].sum(axis=1)
    return X, eta, rng

out = {}
def run(name, cv, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv.fit(X, y)
    r = cv.cv_results_
    cols = [c for c in r.columns if c.startswith("split") or c == "mean_test_score"]
    out[name] = {
        "scores": r[cols].to_numpy().tolist(),
        "best": int(cv.best_index_),
        "coef": np.asarray(cv.coef_).tolist(),
    }

X, y, _, _ = make_blocks()
for fam in ("gaussian", "binomial"):
    yy = y
    if fam == "binomial":
        noise = np.random.default_rng(1).normal(scale=2.0, size=y.size)
        yy = (y + noise > np.median(y)).astype(float)
    cv = VCPCRCV(family=fam, n_clusters=(2, 3), random_state=0, **PREVIOUS_DEFAULT,
                 cv=KFold(3, shuffle=True, random_state=0))
    run(f"engine_regression_{fam}", cv, X, yy)

kw = {"n_clusters": (2, 3), "n_init": 2, "cv": KFold(3), "random_state": 0}
cov = ["age", "sex"]
Xs, eta, rng = simulate()
run("covariates_gaussian", VCPCRCV(**kw, covariates=cov), Xs, eta + rng.normal(size=90))
Xs, eta, rng = simulate()
yb = (rng.random(eta.size) < 1 / (1 + np.exp(-eta))).astype(int)
run("covariates_binomial", VCPCRCV(family="binomial", **kw, covariates=cov), Xs, yb)
Xs, eta, rng = simulate()
t = rng.exponential(np.exp(-eta))
c = rng.exponential(2.0 * np.median(t), eta.size)
yc = np.column_stack([np.minimum(t, c), t <= c])
run("covariates_cox", VCPCRCV(family="cox", **kw, covariates=cov), Xs, yc)
Xst = Xs.copy()
Xst.insert(10, "center", np.random.default_rng(5).integers(0, 3, 90).astype(float))
cv = VCPCRCV(family="cox", **kw, covariates=cov, strata=["center"])
run("covariates_strata_cox", cv, Xst, yc)
cv = VCPCRCV(family="cox", **kw, covariates=cov[::-1], scoring="concordance")
run("covariates_cox_harrell", cv, Xs, yc)
d = make_block_data(200, [10, 10], [0.8, 0.0], n_noise=480, family="cox",
                    random_state=1)
ys = Surv(d.y, d.event)
run("cox_200x500", VCPCRCV(family="cox", cv=5, random_state=0), d.X, ys)
cv = VCPCRCV(family="cox", cv=5, random_state=0, covariates=[7, 250])
run("cox_200x500_covariates_7_250", cv, np.asarray(d.X), ys)
print(json.dumps(out))
"""


def _run(checkout: str) -> dict:
    path = str(Path(checkout).resolve())
    out = subprocess.run(
        [sys.executable, "-c", CASES, path],
        env={**os.environ, "PYTHONPATH": path},
        cwd="/",  # the checkout on the path, not the working directory
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _max_rel(a: list, b: list) -> float:
    """Largest |a - b| / max(|a|, |b|) over the entries (equal entries, NaNs: 0)."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    same = (x == y) | (np.isnan(x) & np.isnan(y))
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.abs(x - y) / np.maximum(np.abs(x), np.abs(y))
    return float(np.max(np.where(same, 0.0, rel), initial=0.0))


def main(before: str, after: str) -> None:
    """Print each case's agreement and the largest difference over all."""
    b_all, a_all = _run(before), _run(after)
    worst = 0.0
    for name, b in b_all.items():
        a = a_all[name]
        scores = _max_rel(b["scores"], a["scores"])
        coef = _max_rel(b["coef"], a["coef"])
        worst = max(worst, scores, coef)
        print(
            f"{name:30s} identical={json.dumps(a) == json.dumps(b)!s:5s} "
            f"scores {scores:.1e} coef_ {coef:.1e} "
            f"same best_index_ {a['best'] == b['best']} ({b['best']})"
        )
    print(f"max relative difference over all cases: {worst:.1e}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
