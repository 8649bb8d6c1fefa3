"""How long ``validate_increment`` takes with its defaults (#48 item 2).

Two shapes: SurvSet's ``gse1992`` with its clinical columns (age, tumour
size, ER status as covariates, node status as a stratum; rows with a missing
clinical value dropped, as ``bench_validation_cohorts.py`` does), and a
simulated Cox cohort of 912 rows x 158 genes (``make_block_data``: blocks of
10 and 10 genes with log-HR 0.4 and 0.0 and 138 noise genes) with three
clinical covariates (age and size numeric, grade with three levels). The
estimator is ``VCPCR(family="cox", covariates=..., strata=...)`` with its
defaults; ``validate_increment`` with its defaults (5-fold CV x 5 repeats,
no Coxnet), ``random_state=0``, one job. Prints a table of the wall time,
the time per fold and the models. ``--profile``: also the 25 functions with
the largest cumulative time (cProfile) of the simulated shape.
``--vcpcrcv``: instead, ``VCPCRCV(family="cox", covariates=..., strata=...)``
with its defaults, re-tuned inside each of the 25 training folds, with
``verbose=True`` (progress lines with the time left on stderr) and
``checkpoint=benchmarks/results/increment_vcpcrcv_<cohort>.jsonl`` (a rerun
resumes; delete the file to time it afresh).

Run from the worktree root::

    PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_increment_time.py [--profile]
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import sys
import time

import numpy as np
import pandas as pd

from vcpcr import VCPCR, VCPCRCV
from vcpcr.simulate import make_block_data
from vcpcr.validation import validate_increment


def gse1992():
    from SurvSet.data import SurvLoader

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


def simulated_912():
    data = make_block_data(
        912,
        [10, 10],
        [0.4, 0.0],
        n_noise=138,
        family="cox",
        censoring=0.5,
        random_state=0,
    )
    return with_clinical(data)


def with_clinical(data):
    """912 rows of simulated genes with age, size and a three-level grade."""
    rng = np.random.default_rng(1)
    genes = pd.DataFrame(np.asarray(data.X), columns=[f"g{j}" for j in range(158)])
    clinical = pd.DataFrame(
        {
            "age": rng.normal(60, 10, 912),
            "size": rng.gamma(2.0, 1.0, 912),
            "grade": rng.choice(["1", "2", "3"], 912),
        }
    )
    X = pd.concat([clinical, genes], axis=1)
    y = np.column_stack([data.y, data.event]).astype(float)
    return X, y, ["age", "size", "grade"], []


def run(name, X, y, covariates, strata, tuned=False):
    kind = VCPCRCV if tuned else VCPCR
    model = kind(family="cox", covariates=covariates, strata=strata or None)
    extra = {}
    if tuned:
        here = os.path.join(os.path.dirname(__file__), "results")
        slug = name.split()[0]
        extra["checkpoint"] = os.path.join(here, f"increment_vcpcrcv_{slug}.jsonl")
    start = time.perf_counter()
    result = validate_increment(model, X, y, random_state=0, verbose=tuned, **extra)
    seconds = time.perf_counter() - start
    n_folds = result.n_splits * result.n_repeats
    genes = X.shape[1] - len(covariates) - len(strata)
    return {
        "cohort": name,
        "estimator": kind.__name__,
        "rows": X.shape[0],
        "genes": genes,
        "events": int(y[:, 1].sum()),
        "folds": n_folds,
        "seconds": round(seconds, 1),
        "s/fold": round(seconds / n_folds, 2),
        "complete": result.complete,
    }


def main():
    import vcpcr

    print(f"vcpcr from {os.path.dirname(vcpcr.__file__)}; load {os.getloadavg()}")
    rows = []
    tuned = "--vcpcrcv" in sys.argv
    for name, loader in (("gse1992", gse1992), ("simulated 912x158", simulated_912)):
        rows.append(run(name, *loader(), tuned=tuned))
        print(pd.DataFrame(rows).to_string(index=False), flush=True)
    if "--profile" in sys.argv:
        profile = cProfile.Profile()
        profile.enable()
        run("simulated 912x158", *simulated_912())
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(25)
        print(out.getvalue())


if __name__ == "__main__":
    main()
