"""Record results of VCPCRCV and VCPCR that the engine refactor (#9) must keep.

Run once from the repository root (``PYTHONPATH=. python
tests/reference/make_engine_regression.py``) at the commit *before* the
SOS-NMF engine was unified; it writes ``engine_regression.json``, read by
``tests/test_engine_regression.py``. Not collected by pytest (conftest).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import make_blocks

from vcpcr import VCPCR, VCPCRCV
from vcpcr.datasets import load_liver

COLUMNS = ["mean_test_score", "std_test_score", "mean_size", "mean_n_clusters"]


def cv_problem(family: str) -> dict:
    X, y, _, _ = make_blocks()
    if family == "binomial":
        noise = np.random.default_rng(1).normal(scale=2.0, size=y.size)
        y = (y + noise > np.median(y)).astype(float)
    cv = VCPCRCV(
        family=family,
        n_clusters=(2, 3),
        cv=KFold(3, shuffle=True, random_state=0),
        random_state=0,
    )
    cv.fit(X, y)
    res = cv.cv_results_
    out = {c: res[c].tolist() for c in COLUMNS}
    out["splits"] = res[[f"split{i}_test_score" for i in range(3)]].to_numpy().tolist()
    out["delta"] = res["delta"].tolist()
    out["best_index"] = int(cv.best_index_)
    out["best_labels"] = cv.best_estimator_.labels_.tolist()
    return out


def liver() -> dict:
    X, y = load_liver(return_X_y=True)
    model = VCPCR(n_clusters=20, random_state=0).fit(X, y)
    sel = model.labels_ >= 0
    return {
        "labels": model.labels_.tolist(),
        "membership": model.membership_.to_numpy().sum(axis=1)[sel].tolist(),
        "objective": float(model.objective_[-1]),
        "lam": float(model.lam_),
        "best_init": int(model.best_init_),
    }


if __name__ == "__main__":
    data = {
        "gaussian": cv_problem("gaussian"),
        "binomial": cv_problem("binomial"),
        "liver": liver(),
    }
    path = Path(__file__).with_name("engine_regression.json")
    path.write_text(json.dumps(data, indent=None) + "\n")
    print("wrote", path, path.stat().st_size, "bytes")
