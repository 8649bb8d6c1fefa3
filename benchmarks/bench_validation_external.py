"""Benchmark (#28): coverage of ``validate_increment_external``'s bootstrap interval.

Run (seeded, one core, resumable: every external cohort is appended to a CSV
checkpoint as soon as it is done)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_validation_external.py \\
        [--reps 60] [--n-bootstrap 200] [--out FILE]

The target is conditional on the training cohort: the gain in Harrell's C
of *these two fitted models* (a fixed ``VCPCR`` with the clinical covariate
and the clinical-only Cox model, both fitted once on 250 training rows) in
the population the external cohorts sample. Its true value is computed on
20,000 independent rows of the same design. Then ``--reps`` external cohorts
of 150 rows each are drawn, and on each the percentile interval of
``--n-bootstrap`` paired resamples is checked: coverage of the true gain
(two-sided, 95 %), and the one-sided test of "no gain" at 5 %. Two
scenarios of the docs' design (``make_block_data``: "age" a block of one
with coefficient 0.7, two modules of 10 genes, 80 noise genes, 30 %
censoring): the modules carry signal (+0.1 and -0.1 per gene), or none (the
fitted model's genes are noise: its true gain is negative and the test
should reject at most 5 % of the time). Clopper-Pearson intervals.
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np
import pandas as pd
from lifelines.utils import concordance_index
from scipy import stats

from vcpcr import VCPCR
from vcpcr.simulate import make_block_data
from vcpcr.validation import ClinicalCox, validate_increment_external

SCENARIOS = {"signal": [0.7, 0.1, -0.1], "null genes": [0.7, 0.0, 0.0]}
N_TRAIN, N_EXTERNAL, N_TRUTH = 250, 150, 20_000


def cohort(coefs, n, seed):
    sim = make_block_data(
        n,
        [1, 10, 10],
        coefs,
        n_noise=80,
        family="cox",
        censoring=0.3,
        random_state=seed,
    )
    X = pd.DataFrame(sim.X, columns=["age", *[f"g{j}" for j in range(100)]])
    return X, np.column_stack([sim.y, sim.event])


def harrell(model, X, y):
    return concordance_index(y[:, 0], -model.predict_log_partial_hazard(X), y[:, 1])


def clopper(k, n):
    lo = stats.beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = stats.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=60)
    parser.add_argument("--n-bootstrap", type=int, default=200)
    parser.add_argument(
        "--out",
        default=os.path.join(
            os.path.dirname(__file__), "results", "validation_external.csv"
        ),
    )
    args = parser.parse_args()
    done = pd.read_csv(args.out) if os.path.exists(args.out) else pd.DataFrame()
    keys = set() if done.empty else set(zip(done.scenario, done.rep, strict=True))
    warnings.simplefilter("ignore")
    for name, coefs in SCENARIOS.items():
        X_train, y_train = cohort(coefs, N_TRAIN, 0)
        model = VCPCR(
            family="cox",
            n_clusters=2,
            lam_ratio=0.5,
            n_init=3,
            covariates=["age"],
            random_state=0,
        ).fit(X_train, y_train)
        clinical = ClinicalCox(covariates=["age"]).fit(X_train, y_train)
        X_pop, y_pop = cohort(coefs, N_TRUTH, 1)
        truth = harrell(model, X_pop, y_pop) - harrell(clinical, X_pop, y_pop)
        for rep in range(args.reps):
            if (name, rep) in keys:
                continue
            X_ext, y_ext = cohort(coefs, N_EXTERNAL, 1000 + rep)
            res = validate_increment_external(
                model,
                X_train,
                y_train,
                X_ext,
                y_ext,
                n_bootstrap=args.n_bootstrap,
                random_state=rep,
            )
            row = res.increments.loc[("VCPCR", "Harrell C")]
            out = {
                "scenario": name,
                "rep": rep,
                "truth": truth,
                "increment": row["increment"],
                "low": row["ci_low"],
                "high": row["ci_high"],
                "p": row["p"],
            }
            pd.DataFrame([out]).to_csv(
                args.out, mode="a", header=not os.path.exists(args.out), index=False
            )
            print(name, rep, f"{row['increment']:.4f}", flush=True)
    df = pd.read_csv(args.out)
    for name, part in df.groupby("scenario", sort=False):
        n = len(part)
        cover = int(((part.low <= part.truth) & (part.truth <= part.high)).sum())
        reject = int((part.p < 0.05).sum())
        print(
            f"{name}: truth {part.truth.iloc[0]:+.4f}, {n} external cohorts; "
            f"coverage {clopper(cover, n)}; one-sided rejections "
            f"{clopper(reject, n)}; mean width {(part.high - part.low).mean():.3f}"
        )


if __name__ == "__main__":
    main()
