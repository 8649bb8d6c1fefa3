"""Null FWER of one split's gene-level descent: the Bartlett-type factor's level.

The design of ``tests/test_hierarchy.py``'s slow level test: 50 + 50 rows,
10 genes in three correlated modules (4, 3, 3), an outcome independent of
them (binomial: fair coin; Cox: exponential times, exponential(2)
censoring), no covariates. Each data set runs
``vcpcr.inference._hierarchy.descend`` once (seed = data set) and counts a
family-wise error when some node's hierarchical p-value is at most 0.05.
The share of such sets (over those whose full model fits) is printed with
its Clopper-Pearson 95 % interval, with the CPU seconds of the descents.

Only ``descend`` is called, so the same script measures any version of the
package: run it with ``PYTHONPATH=/work/main`` (before) and with the
working tree's path (after)::

    PYTHONPATH=/work/main python benchmarks/bench_factor_level.py --label before
    PYTHONPATH=. python benchmarks/bench_factor_level.py --label after
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import stats

from vcpcr._solvers.distributions import LOGISTIC, PROPORTIONAL_HAZARDS
from vcpcr.inference._hierarchy import descend

MODULES = [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]


def null_set(family: str, rep: int, n: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Genes on ``2 n`` rows and a null outcome on the second ``n``."""
    rng = np.random.default_rng(rep)
    z = rng.standard_normal((2 * n, 3))
    X = 0.7 * np.repeat(z, [4, 3, 3], axis=1) + 0.7 * rng.standard_normal((2 * n, 10))
    if family == "binomial":
        outcome = (rng.random(n) < 0.5).astype(float)
    else:
        t, c = rng.exponential(size=n), rng.exponential(2.0, size=n)
        outcome = np.column_stack([np.minimum(t, c), (t <= c).astype(float)])
    return X, outcome


def interval(k: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95 % interval of ``k`` of ``n``."""
    lo = stats.beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = stats.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def run(family: str, n_sets: int, n: int = 50) -> str:
    distribution = LOGISTIC if family == "binomial" else PROPORTIONAL_HAZARDS
    errors = ran = 0
    cpu = time.process_time()
    for rep in range(n_sets):
        X, outcome = null_set(family, rep, n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = descend(
                distribution,
                X[:n],
                X[n:],
                np.empty((n, 0)),
                outcome,
                MODULES,
                random_state=rep,
            )
        if result.problem is None:
            ran += 1
            errors += bool((result.hierarchical <= 0.05).any())
    cpu = time.process_time() - cpu
    lo, hi = interval(errors, ran)
    return (
        f"{family:8s} {errors:3d}/{ran:3d} = {errors / ran:.3f} "
        f"[{lo:.3f}, {hi:.3f}]  {cpu:6.1f} CPU s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-sets", type=int, default=200)
    parser.add_argument("--label", default="")
    parser.add_argument("--families", nargs="+", default=["cox", "binomial"])
    args = parser.parse_args()
    for family in args.families:
        print(args.label, run(family, args.n_sets), flush=True)


if __name__ == "__main__":
    main()
