"""Benchmark: "validate once" (#50) between two checkouts, in the same run.

Run on one core, from anywhere, with the checkouts to compare (the first is
"before")::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_validate_once.py /work/main .

For each checkout, in its own subprocess (``PYTHONPATH`` set to it), three
Cox ``VCPCRCV`` fits (the defaults, 5 folds) on a simulated 200 x 500
cohort (``make_block_data(..., family="cox", random_state=1)``), in turns
(before, after, before, ...); prints the best CPU seconds of each (the fits
run in one process, so CPU seconds are those of the fit whatever else runs
on the machine), whether the chosen grid points and coefficients agree, and
the validation counts of one ``VCPCRCV(family="cox", covariates=[...]).fit``
with 5 folds (``tests/validation_counts.py`` of this checkout: input-route
runs, ``prepare`` and ``check_survival`` calls).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

#: One timed fit, printed as JSON (run with the checkout on PYTHONPATH).
FIT = """
import json, time, warnings
import numpy as np
from vcpcr import VCPCRCV, Surv
from vcpcr.simulate import make_block_data

data = make_block_data(
    200, [10, 10], [0.8, 0.0], n_noise=480, family="cox", random_state=1
)
y = Surv(data.y, data.event)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    cpu = time.process_time()
    cv = VCPCRCV(family="cox", cv=5, random_state=0).fit(data.X, y)
    cpu = time.process_time() - cpu
print(json.dumps({"cpu": cpu, "best": int(cv.best_index_), "coef": cv.coef_.tolist()}))
"""

#: The validation counts (tests/validation_counts.py of this checkout).
COUNTS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from validation_counts import cv_counts
print(json.dumps({f: cv_counts(f) for f in ("cox", "gaussian", "binomial")}))
"""


def _run(checkout: str, code: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(Path(checkout).resolve())}
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        cwd="/",  # the checkout on the path, not the working directory
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(before: str, after: str, repeats: int = 3) -> None:
    """Print the counts, the best CPU seconds and the agreement of the fits."""
    tests = str(HERE / "tests")
    for name, checkout in (("before", before), ("after", after)):
        counts = _run(checkout, COUNTS, tests)
        print(f"{name} ({checkout}): {counts}")
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for _ in range(repeats):
        for name, checkout in (("before", before), ("after", after)):
            runs[name].append(_run(checkout, FIT))
    b, a = runs["before"][0], runs["after"][0]
    same = b["best"] == a["best"] and b["coef"] == a["coef"]
    for name, fits in runs.items():
        cpu = min(f["cpu"] for f in fits)
        print(f"{name}: best of {repeats} {cpu:.2f} CPU s (Cox VCPCRCV, 200 x 500)")
    print(f"same chosen point and coefficients: {same}")


if __name__ == "__main__":
    main(*(sys.argv[1:3] if len(sys.argv) >= 3 else (str(HERE), str(HERE))))
