"""Benchmark: ``validate_increment``'s one-sided test on cohorts with few events.

A test fold without an event (Harrell's C undefined) or whose events all come
after Uno's tau (Uno's C undefined) used to drop the whole fold, every metric;
now only the undefined metric is NaN there. This checks the level of the
one-sided 5 % test of "no gain over the clinical model" under the null, and
its power under a signal, in the design where that matters.

Run (seeded, one core; give the code to test on ``PYTHONPATH`` to compare
versions)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_increment_few_events.py \
        --scenario null --first 0 --last 400
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_increment_few_events.py \
        --scenario signal --first 0 --last 200

Data (per data set, seeded ``5000 + seed``): ``n = 120``; a clinical column
``age`` ~ N(0, 1); 80 genes (``make_block_data``: two blocks of 10 at its
default correlation, 60 independent); exponential event times with log hazard
``0.7 age`` (null) or ``0.7 age + z`` (signal: ``z`` the standardized mean of
the first block), exponential censoring with mean 0.12: about 15 (null) and
19 (signal) events. ``validate_increment`` of ``VCPCR(family="cox",
n_clusters=2, lam_ratio=0.5, n_init=1, covariates=["age"])``, 10-fold CV,
one repeat. Prints the rejection rate with its Clopper-Pearson interval, the
folds used and the mean increment, for Harrell's and Uno's C.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from scipy.stats import beta

from vcpcr import VCPCR
from vcpcr.simulate import make_block_data
from vcpcr.validation import validate_increment

METRICS = ("Harrell C", "Uno C")


def one(seed: int, signal: bool) -> dict[str, float]:
    """One data set's p-value, folds used and increment per metric."""
    rng = np.random.default_rng(5000 + seed)
    genes = make_block_data(
        120, [10, 10], [0.0, 0.0], n_noise=60, noise_sd=1.0, random_state=5000 + seed
    ).X
    age = rng.standard_normal(120)
    z = genes[:, :10].mean(axis=1)
    log_hazard = 0.7 * age + (z / z.std() if signal else 0.0)
    t = rng.exponential(np.exp(-log_hazard))
    c = rng.exponential(0.12, 120)
    X = pd.DataFrame(
        np.column_stack([age, genes]),
        columns=["age", *[f"g{j}" for j in range(genes.shape[1])]],
    )
    y = np.column_stack([np.minimum(t, c), t <= c])
    model = VCPCR(
        family="cox",
        n_clusters=2,
        lam_ratio=0.5,
        n_init=1,
        covariates=["age"],
        random_state=0,
    )
    res = validate_increment(model, X, y, cv=10, n_repeats=1, random_state=seed)
    row: dict[str, float] = {"seed": seed, "events": float(y[:, 1].sum())}
    for m in METRICS:
        r = res.increments.loc[("VCPCR", m)]
        row |= {f"{m} p": r["p"], f"{m} n": r["n_folds"], f"{m} inc": r["increment"]}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=["null", "signal"], default="null")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--last", type=int, default=400)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = [one(s, args.scenario == "signal") for s in range(args.first, args.last)]
    d = pd.DataFrame(rows)
    print(
        f"{args.scenario}: {len(d)} data sets, median events {d['events'].median():g}"
    )
    for m in METRICS:
        p = d[f"{m} p"].dropna()
        k, n = int((p < 0.05).sum()), len(p)
        lo = beta.ppf(0.025, k, n - k + 1) if k else 0.0
        hi = beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
        print(
            f"  {m}: rejected {k}/{n} = {k / n:.3f} [{lo:.3f}, {hi:.3f}], "
            f"folds used {d[f'{m} n'].mean():.2f}, increment "
            f"{d[f'{m} inc'].mean():+.4f}"
        )


if __name__ == "__main__":
    main()
