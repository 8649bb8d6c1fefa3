"""Benchmark: the Cox tuning criterion of VCPCRCV, Harrell's C against the
cross-validated partial likelihood (issue #17).

Run on one core::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
        python benchmarks/bench_cox_criterion.py [--quick]

Prints two tables:

1. Global null (y independent of X): ``make_block_data(100, [50] * 10,
   zeros, family="cox", rho=0.6)``, i.e. n = 100, p = 500 in ten
   equicorrelated blocks, data sets ``random_state = 0..9`` (``--quick``:
   0..3). For each criterion, the number of variables in the refitted model
   (non-zero raw coefficients) and how many data sets got the empty model or
   at most 3 genes (the criterion of issue #17: at least 8 of 10).
2. Signal: ``make_block_data(400, [10] * 6, [0.5, -0.5, 0.3, 0, 0, 0],
   family="cox", n_noise=440, rho=0.6)`` (p = 500, 30 active variables),
   split 200 / 200 at random (seeded); VCPCRCV tuned on the first half, the
   held-out Harrell C (lifelines' ``concordance_index``) and model size on
   the second; five data sets (``--quick``: two).

``VCPCRCV(family="cox", random_state=seed)`` with the defaults before #27's
sixth study otherwise (``latent="paper", selection="min"``; 5 unshuffled
folds, 3 K x 6 deltas x 10 lam_ratios x 5 starts; the 10-point ``lam_ratio``
grid pinned: ``STUDY_RATIOS``), ``n_jobs=None``.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from bench_inference import STUDY_RATIOS  # the grid this benchmark ran with
from lifelines.utils import concordance_index

from vcpcr import VCPCRCV
from vcpcr.simulate import make_block_data

CRITERIA = {"C-index": None, "partial likelihood": "neg_partial_likelihood_deviance"}


def _fit(X, y, scoring, seed):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = VCPCRCV(
            family="cox",
            latent="paper",
            lam_ratios=STUDY_RATIOS,
            scoring=scoring,
            selection="min",
            random_state=seed,
        ).fit(X, y)
    return cv, time.perf_counter() - start


def _genes(cv):
    return int(np.count_nonzero(cv.best_estimator_.coef_))


def null_table(seeds):
    print("Global null: n = 100, p = 500 (10 blocks of 50, rho = 0.6)")
    print(f"{'criterion':<20} {'genes per data set':<44} {'<= 3 genes':>10} {'s':>6}")
    for name, scoring in CRITERIA.items():
        genes, seconds = [], 0.0
        for seed in seeds:
            d = make_block_data(
                100, [50] * 10, np.zeros(10), family="cox", random_state=seed
            )
            cv, s = _fit(d.X, np.column_stack([d.y, d.event]), scoring, seed)
            genes.append(_genes(cv))
            seconds += s
        small = sum(g <= 3 for g in genes)
        print(f"{name:<20} {genes!s:<44} {f'{small}/{len(seeds)}':>10} {seconds:6.0f}")


def signal_table(seeds):
    print("\nSignal: n = 200 + 200 held out, p = 500, 30 active")
    print(
        f"{'criterion':<20} {'held-out C per data set':<40} {'mean C':>7} {'genes':>12}"
    )
    for name, scoring in CRITERIA.items():
        cs, genes = [], []
        for seed in seeds:
            d = make_block_data(
                400,
                [10] * 6,
                [0.5, -0.5, 0.3, 0.0, 0.0, 0.0],
                family="cox",
                n_noise=440,
                random_state=seed,
            )
            y = np.column_stack([d.y, d.event])
            perm = np.random.default_rng(seed).permutation(400)
            tr, te = perm[:200], perm[200:]
            cv, _ = _fit(d.X[tr], y[tr], scoring, seed)
            risk = cv.predict_log_partial_hazard(d.X[te])
            cs.append(concordance_index(d.y[te], -risk, d.event[te]))
            genes.append(_genes(cv))
        print(
            f"{name:<20} {np.round(cs, 3).tolist()!s:<40} {np.mean(cs):7.3f} "
            f"{genes!s:>12}"
        )


def main():
    quick = "--quick" in sys.argv
    null_table(range(4) if quick else range(10))
    signal_table(range(2) if quick else range(5))


if __name__ == "__main__":
    main()
