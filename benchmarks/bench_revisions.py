"""Benchmark: the same fits timed on two source trees of vcpcr (issue #25).

Run (each tree a checkout of some revision, e.g. ``git worktree add
--detach /tmp/before <rev>``; on an otherwise idle machine)::

    python benchmarks/bench_revisions.py /tmp/before /tmp/after [--repeat 3]

The re-cut of #25 moved modules and changed no computation; this checks
that it costs no time either. Each workload runs in a fresh subprocess with
``PYTHONPATH`` set to one tree (so the tree's ``vcpcr`` is imported, not the
installed one), the trees alternating, ``--repeat`` times each; the table
gives the best wall time of each tree and their ratio (after / before):

- ``VCPCRCV()`` on the paper's 50 x 200 gaussian problem (the default
  grid: 360 points since #27's rule E, 180 before; 5 starts, 5 folds;
  ``bench_cv.py``'s setting);
- ``VCPCRCV(family="cox")`` on 300 x 20,000 and ``VCPCRCV()`` on 500 x
  20,000 gaussian data (``bench_speed.py``'s designs), ``n_jobs=2``.

Each subprocess reports the fit's time only (data drawn before the clock
starts; imports excluded).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

WORKLOADS = {
    "VCPCRCV 50 x 200 gaussian": ("gaussian", 50, 200, 1),
    "VCPCRCV 300 x 20,000 cox": ("cox", 300, 20_000, 2),
    "VCPCRCV 500 x 20,000 gaussian": ("gaussian", 500, 20_000, 2),
}

CHILD = """
import sys, time, warnings
import numpy as np
from vcpcr import VCPCRCV
from vcpcr.simulate import make_block_data

family, n, p, n_jobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
blocks = [10] * 8
coefs = [1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0]
if family == "cox":
    coefs = [0.3 * c for c in coefs]
data = make_block_data(
    n, blocks, coefs, n_noise=p - sum(blocks), rho=0.6, family=family, random_state=0
)
y = data.y if family == "gaussian" else np.column_stack([data.y, data.event])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    VCPCRCV(family=family, n_jobs=n_jobs, verbose=False, random_state=0).fit(data.X, y)
print(time.perf_counter() - start)
"""


def timed(tree: str, args: tuple) -> float:
    env = dict(os.environ, PYTHONPATH=tree, TQDM_DISABLE="1")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="source tree of the earlier revision")
    parser.add_argument("after", help="source tree of the later revision")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"before: {args.before}\nafter:  {args.after}\nload: {os.getloadavg()}\n")
    print("| workload | before (best, s) | after (best, s) | after / before |")
    print("|---|---|---|---|")
    for name, work in WORKLOADS.items():
        times: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(args.repeat):
            for key in times:
                times[key].append(timed(getattr(args, key), work))
        b, a = min(times["before"]), min(times["after"])
        print(f"| {name} | {b:.2f} | {a:.2f} | {a / b:.3f} |", flush=True)
    print(f"\nload at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
