"""Benchmark: ``multi_split`` under joblib's dask backend against its default (#24).

Run (the dask workers inherit the environment)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_dask.py \
        [--n-splits 50] [--genes 15528] [--repeat 2]

Data shaped like the ``gse1992`` cohort: ``make_block_data`` with 124 rows,
two blocks of ten genes (coefficients 1 and 0) and noise genes up to
``--genes`` (15,528 by default: ``X`` is 14.7 MiB), gaussian outcome.
Template ``VCPCR(n_clusters=4)``, ``n_splits`` splits with
``random_state=0``.

Backends, two workers each:

- ``loky``: joblib's default backend, ``n_jobs=2``;
- ``dask``: ``joblib.parallel_config(backend="dask")`` on a
  ``distributed.LocalCluster(n_workers=2, threads_per_worker=1)`` of worker
  processes, ``n_jobs=-1``.

The workers are started and have imported vcpcr (a small run) before the
clock runs. Printed per backend, the best of ``--repeat`` runs:

- ``wall s`` and its ratio to loky's; ``CPU s``: the CPU time of this
  process (which sends the tasks and, under dask, runs the scheduler) and of
  all its child processes (the workers), i.e. the work done, which other
  load on the machine changes far less than the wall time; ``client CPU s``:
  this process alone;
- under dask, ``graphs MiB``: the total size of the task graphs the client
  sent to the scheduler (dask's large-graph warning with its threshold at 0
  gives each one's size), and ``> 10 MB``: how many of them exceed dask's
  default threshold, i.e. how many "Sending large graph" warnings a user
  sees;
- whether the p-values equal loky's.

Run it with the ``vcpcr`` to measure first on ``PYTHONPATH`` (before and
after a change).
"""

from __future__ import annotations

import argparse
import re
import time
import warnings
from typing import Any

import dask
import joblib
import numpy as np
import psutil  # a dependency of distributed
from dask.utils import parse_bytes

import vcpcr
from vcpcr import VCPCR
from vcpcr.inference import multi_split
from vcpcr.simulate import make_block_data

GRAPH = re.compile(r"Sending large graph of size ([\d.]+ \w+)")


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds of this process, and of it and all its children."""
    me = psutil.Process()
    own = sum(me.cpu_times()[:2])
    children = 0.0
    for child in me.children(recursive=True):
        try:
            children += sum(child.cpu_times()[:2])
        except psutil.NoSuchProcess:  # a process that ended meanwhile
            pass
    return own, own + children


def timed(X: Any, y: Any, n_splits: int, n_jobs: int, repeat: int) -> dict:
    """Best wall and CPU times of ``repeat`` runs, graph sizes, result."""
    out: dict[str, Any] = {"wall": np.inf, "cpu": np.inf, "all": np.inf}
    for _ in range(repeat):
        with (
            dask.config.set({"distributed.admin.large-graph-warning-threshold": 0}),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            start, (cpu, every) = time.perf_counter(), cpu_seconds()
            out["result"] = multi_split(
                VCPCR(n_clusters=4),
                X,
                y,
                n_splits=n_splits,
                n_jobs=n_jobs,
                random_state=0,
                verbose=False,
            )
            out["wall"] = min(out["wall"], time.perf_counter() - start)
            cpu_end, every_end = cpu_seconds()
            out["cpu"] = min(out["cpu"], cpu_end - cpu)
            out["all"] = min(out["all"], every_end - every)
        sizes = [
            parse_bytes(m.group(1))
            for c in caught
            if (m := GRAPH.search(str(c.message)))
        ]
        out["graphs"] = sum(sizes) / 2**20
        out["large"] = sum(size > 10e6 for size in sizes)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-splits", type=int, default=50)
    ap.add_argument("--genes", type=int, default=15528)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    data = make_block_data(
        124, [10, 10], [1.0, 0.0], n_noise=args.genes - 20, random_state=0
    )
    X, y = data.X, data.y
    print(
        f"vcpcr from {vcpcr.__file__}; X {X.shape[0]} x {X.shape[1]} "
        f"({X.nbytes / 2**20:.1f} MiB), {args.n_splits} splits, best of "
        f"{args.repeat}\n"
    )
    small = make_block_data(40, [5, 5], [1.0, 0.0], n_noise=10, random_state=0)
    timed(small.X, small.y, 4, 2, 1)  # workers started, vcpcr imported
    loky = timed(X, y, args.n_splits, 2, args.repeat)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster),
        joblib.parallel_config(backend="dask"),
    ):
        timed(small.X, small.y, 4, -1, 1)
        remote = timed(X, y, args.n_splits, -1, args.repeat)
    same = remote["result"].pvalues.equals(loky["result"].pvalues)
    print(
        "| backend | wall s | / loky | CPU s | / loky | client CPU s | graphs MiB "
        "| > 10 MB | p-values equal |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print(
        f"| loky, n_jobs=2 | {loky['wall']:.1f} | 1.00 | {loky['all']:.1f} | 1.00 "
        f"| {loky['cpu']:.1f} | - | - | - |"
    )
    print(
        f"| dask, 2 workers | {remote['wall']:.1f} | "
        f"{remote['wall'] / loky['wall']:.2f} | {remote['all']:.1f} | "
        f"{remote['all'] / loky['all']:.2f} | {remote['cpu']:.1f} | "
        f"{remote['graphs']:.2f} | {remote['large']} | {'yes' if same else 'NO'} |"
    )


if __name__ == "__main__":
    main()
