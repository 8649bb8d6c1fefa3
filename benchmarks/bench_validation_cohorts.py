"""The increment of a gene signature over the clinical model on two cohorts (#28).

SurvSet (GPL-3, ``pip install 'vcpcr[benchmarks]'``, never imported by
vcpcr): ``gse1992`` (clinical columns age, tumour size, ER status,
node status) and ``gse4335`` (age, ER status, node-positive, grade). Rows
with a missing clinical value (SurvSet's ``"missing"`` / ``"na"`` / ``"x"``
levels) are dropped. The estimator is a fixed ``VCPCR(family="cox",
n_clusters=3, lam_ratio=0.5, n_init=3)`` with the clinical covariates (and
node status as a stratum on gse1992); with Coxnet (clinical columns
unpenalized); 5-fold CV x 2 repeats. Writes each summary to
``benchmarks/results/validation_<cohort>.txt`` and the gse1992 figure to
``docs/img/validation_gse1992.png``.

Run (about 7 minutes on one core)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_validation_cohorts.py

``--vcpcrcv``: instead, ``VCPCRCV(n_clusters=[1, 3], lam_ratios=[0.3, 0.6],
cv=3, n_init=3)`` (the default delta grid), re-tuned inside every training
fold of 5-fold CV x 1 repeat on gse1992, without Coxnet (about 5 minutes).
"""

from __future__ import annotations

import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from SurvSet.data import SurvLoader

from vcpcr import VCPCR, VCPCRCV
from vcpcr.validation import validate_increment

HERE = os.path.dirname(__file__)


def gse1992():
    df = SurvLoader().load_dataset("gse1992")["df"]
    clinical = pd.DataFrame(
        {
            "age": df["num_age"],
            "size": df["num_size"],
            "er": df["fac_er_positive"].astype(str),
            "node": df["fac_node_status"].astype(str),
        }
    ).replace("missing", np.nan)
    genes = df.filter(regex="^num_HS_").dropna(axis=1)
    X = pd.concat([clinical, genes], axis=1)
    keep = clinical.notna().all(axis=1).to_numpy()
    y = df[["time", "event"]].to_numpy(dtype=float)
    return X[keep].reset_index(drop=True), y[keep], ["age", "size", "er"], ["node"]


def gse4335():
    df = SurvLoader().load_dataset("gse4335")["df"]
    node = df["fac_node_status"].astype(str)
    clinical = pd.DataFrame(
        {
            "age": df["num_age"],
            "er": df["fac_er_status"].astype(str).replace("na", np.nan),
            "node_pos": node.where(~node.isin(["na", "x"])).map(
                lambda v: v if pd.isna(v) else str(int(v != "0"))
            ),
            "grade": df["num_grade"],
        }
    )
    genes = df.filter(regex="^num_HS_").dropna(axis=1)
    X = pd.concat([clinical, genes], axis=1)
    keep = clinical.notna().all(axis=1).to_numpy()
    y = df[["time", "event"]].to_numpy(dtype=float)
    return (
        X[keep].reset_index(drop=True),
        y[keep],
        ["age", "er", "node_pos", "grade"],
        [],
    )


def run(name, X, y, covariates, strata, tuned=False):
    common = {"family": "cox", "n_init": 3, "covariates": covariates}
    common["strata"] = strata or None
    if tuned:
        model = VCPCRCV(  # with the tuning defaults before #27, as it ran
            n_clusters=[1, 3],
            lam_ratios=[0.3, 0.6],
            cv=3,
            latent="paper",
            scoring=None,
            selection="min",
            **common,
        )
    else:
        model = VCPCR(n_clusters=3, lam_ratio=0.5, **common)
    start = time.perf_counter()
    result = validate_increment(
        model,
        X,
        y,
        cv=5,
        n_repeats=1 if tuned else 2,
        coxnet=not tuned,
        random_state=0,
        verbose=False,
    )
    seconds = time.perf_counter() - start
    text = str(result.summary())
    print(
        f"{name}: {X.shape[0]} patients, {X.shape[1] - len(covariates) - len(strata)} "
        f"genes, {int(y[:, 1].sum())} events ({seconds:.0f} s)\n{text}\n",
        flush=True,
    )
    with open(os.path.join(HERE, "results", f"validation_{name}.txt"), "w") as f:
        f.write(text + "\n")
    return result


def main():
    if "--vcpcrcv" in sys.argv:
        run("gse1992_vcpcrcv", *gse1992(), tuned=True)
        return
    result = run("gse1992", *gse1992())
    result.plot()
    plt.savefig(
        os.path.join(HERE, "..", "docs", "img", "validation_gse1992.png"), dpi=110
    )
    run("gse4335", *gse4335())


if __name__ == "__main__":
    main()
