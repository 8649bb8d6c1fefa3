"""Where ``VCPCRCV`` spends its time: a cProfile of one fit, by stage.

Run one case at a time, on one BLAS thread (folds in sequence, so the
profile sees every stage)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/profile_cv.py gaussian  # 500 x 20,000
    OPENBLAS_NUM_THREADS=1 python benchmarks/profile_cv.py cox       # 300 x 5,000
    OPENBLAS_NUM_THREADS=1 python benchmarks/profile_cv.py cox-wide  # 300 x 20,000
    OPENBLAS_NUM_THREADS=1 python benchmarks/profile_cv.py cox-tall  # 6,000 x 1,000
    OPENBLAS_NUM_THREADS=1 python benchmarks/profile_cv.py chop      # 414 x 3,833

``chop`` is SurvSet's real cohort (``pip install 'vcpcr[benchmarks]'``; its
gene columns, the two event times 0 moved to half the smallest positive time,
as in ``bench_cohorts.py``).

The profile counts CPU time (``time.process_time``): on a machine shared with
other work, wall time measures the load more than the code. Prints the CPU
seconds of each stage:

- weights: step 0 for every delta of a fold (``_tuning._fold_weights``);
- SOS-NMF: the batched clustering of a fold (``_tuning.solve_grid``);
- step 2: the outcome models of all grid points (``_tuning._fit_grid``);
- scoring: the rest of ``_tuning._score_grid`` (predictions and scores);
- refit: ``VCPCR._fit_validated`` of the chosen point on all the data;
- other: validation, folds, ``cv_results_`` (the total minus the above).

Then, with ``--jobs``, the joblib overhead: the wall time of the same fit
with ``n_jobs=2`` against the sum of its folds' times (``_fold_times``)
divided by 2 plus the refit.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
import warnings
from typing import Any

from bench_speed import make_data

from vcpcr import VCPCRCV, Surv

CASES = {
    "gaussian": (500, 20_000, "gaussian"),
    "cox": (300, 5_000, "cox"),
    "cox-wide": (300, 20_000, "cox"),
    "cox-tall": (6_000, 1_000, "cox"),
}


def make_case(name: str) -> tuple[Any, Any, str]:
    """The data of a case: 8 blocks of 10 (4 active) and independent noise."""
    if name == "chop":
        from bench_cohorts import load

        X, time_, event = load("chop")
        return X, Surv(time_, event), "cox"
    n, p, family = CASES[name]
    data = make_data(n, p, family)
    if family == "cox":
        return data.X, Surv(data.y, data.event), family
    return data.X, data.y, family


def _cumulative(stats: pstats.Stats, func: str, path: str) -> float:
    """Cumulative seconds of the function ``func`` defined in ``path``."""
    total = 0.0
    for (filename, _, name), row in stats.stats.items():  # type: ignore[attr-defined]
        if name == func and filename.endswith(path):
            total += row[3]
    return total


def main(name: str) -> None:
    """Profile one fit of the case ``name`` and print the stage table."""
    X, y, family = make_case(name)
    profiler = cProfile.Profile(time.process_time)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tic, cpu = time.perf_counter(), time.process_time()
        profiler.enable()
        VCPCRCV(family=family, random_state=0).fit(X, y)
        profiler.disable()
        wall, cpu = time.perf_counter() - tic, time.process_time() - cpu
    stats = pstats.Stats(profiler)
    cum = {
        "weights": _cumulative(stats, "_fold_weights", "_tuning.py"),
        "SOS-NMF": _cumulative(stats, "solve_grid", "_tuning.py"),
        "step 2": _cumulative(stats, "_fit_grid", "_tuning.py"),
        "scoring": _cumulative(stats, "_score_grid", "_tuning.py"),
        "refit": _cumulative(stats, "_fit_validated", "_model.py"),
    }
    cum["scoring"] -= cum["step 2"]
    cum["other"] = cpu - sum(cum.values())
    print(f"{name}: {X.shape[0]} x {X.shape[1]}, CPU {cpu:.1f} s, wall {wall:.1f} s")
    print(f"{'stage':<10} {'CPU s':>8} {'share':>6}")
    for stage, seconds in cum.items():
        print(f"{stage:<10} {seconds:>8.1f} {seconds / cpu:>6.1%}")
    stats.sort_stats("tottime").print_stats(12)


def joblib_overhead(name: str) -> None:
    """Wall time with ``n_jobs=2`` against the folds' own times."""
    X, y, family = make_case(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tic = time.perf_counter()
        cv = VCPCRCV(family=family, random_state=0, n_jobs=2, refit=False).fit(X, y)
        wall = time.perf_counter() - tic
    folds = float(cv._fold_times.sum())
    print(
        f"n_jobs=2 without refit: wall {wall:.1f} s; folds {folds:.1f} s in all "
        f"(ideal wall {folds / 2:.1f} s)"
    )


if __name__ == "__main__":
    case = sys.argv[1] if len(sys.argv) > 1 else "gaussian"
    if "--jobs" in sys.argv:
        joblib_overhead(case)
    else:
        main(case)
