"""Benchmark: peak memory and wall time of one fit at scale (#19, item 3).

Run::

    python benchmarks/bench_scale.py            # 1,000 x 50,000 float64 (400 MB)
    python benchmarks/bench_scale.py --quick    # 500 x 5,000, a smoke run
    python benchmarks/bench_scale.py --cox      # also the Cox fits

Data: ``make_block_data`` with 8 blocks of 10 variables (4 active, +-1) and
``p - 80`` independent noise variables, ``random_state=0`` (the design of
``bench_speed.py``). Fits, each with the defaults: ``VCPCR()`` (one fit),
``VCPCRCV(n_jobs=1)`` and ``VCPCRCV(n_jobs=2)`` (5 folds, 1,800 SOS-NMF
problems per fold since #27's rule E, 900 before and in the committed
numbers, and the refit).

Each fit runs in a fresh Python process (``subprocess``), so that peaks do
not mix. Memory is the peak resident set size from
``resource.getrusage(...).ru_maxrss`` (all memory: numpy buffers, BLAS
workspace, the interpreter; pages of a memory-mapped file count once they are
touched). Once the data are built, the peak is reset (``5`` written to
``/proc/self/clear_refs``, Linux), so that the fit's peak does not include
the temporaries of the data generation:

- ``data MB``: the process's resident size once ``X`` and ``y`` are built,
  before the fit (``X`` itself is ``8 n p`` bytes);
- ``fit MB``: the process's peak over the fit (``RUSAGE_SELF``);
- ``worker MB``: with ``n_jobs=2``, the largest peak of the joblib (loky)
  worker processes (``RUSAGE_CHILDREN`` after the workers are shut down);
- ``extra/X``: (``fit MB`` - ``data MB``) in units of ``X``'s size: the
  copies of ``X`` the fit holds at once in the main process.

Wall time is one run on the shared 2-core machine; the load average and the
free memory are printed with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from typing import Any

FITS = ("VCPCR", "VCPCRCV n_jobs=1", "VCPCRCV n_jobs=2")


def _peak_mb(who: int) -> float:
    """Peak resident set size in MB (``ru_maxrss`` is in KiB on Linux)."""
    return resource.getrusage(who).ru_maxrss / 1024


def _resident_mb() -> float:
    """Current resident set size in MB (``VmRSS`` of ``/proc/self/status``)."""
    with open("/proc/self/status") as f:
        rss = next(line for line in f if line.startswith("VmRSS:"))
    return int(rss.split()[1]) / 1024


def child(fit: str, family: str, n: int, p: int) -> dict[str, Any]:
    """Build the data, run one fit, return its time and peaks (in this process)."""
    from bench_speed import make_data
    from joblib.externals.loky import get_reusable_executor

    from vcpcr import VCPCR, VCPCRCV, Surv

    data = make_data(n, p, family)
    y = Surv(data.y, data.event) if family == "cox" else data.y
    before = _resident_mb()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak to the current resident size
    if fit == "VCPCR":
        est: Any = VCPCR(family=family)
    else:
        est = VCPCRCV(family=family, n_jobs=int(fit[-1]), random_state=0)
    tic = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. all-zero weights at a delta
        est.fit(data.X, y)
    seconds = time.perf_counter() - tic
    after = _peak_mb(resource.RUSAGE_SELF)
    if fit.endswith("2"):
        get_reusable_executor().shutdown(wait=True)  # reap the workers
    return {
        "seconds": seconds,
        "data": before,
        "fit": after,
        "worker": _peak_mb(resource.RUSAGE_CHILDREN),
        "x_mb": data.X.nbytes / 2**20,
    }


def run(fit: str, family: str, n: int, p: int) -> dict[str, Any]:
    """Run :func:`child` in a fresh interpreter; return its result."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", fit, family, str(n), str(p)],
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 x 5,000")
    parser.add_argument("--cox", action="store_true", help="also family='cox'")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        fit, family, n, p = args.child
        print(json.dumps(child(fit, family, int(n), int(p))))
        return
    n, p = (500, 5_000) if args.quick else (1_000, 50_000)
    families = ("gaussian", "cox") if args.cox else ("gaussian",)
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores")
    header = (
        f"{'family':<9} {'fit':<17} {'n x p':>13} {'X MB':>6} {'wall s':>7} "
        f"{'data MB':>8} {'fit MB':>7} {'worker MB':>9} {'extra/X':>7}"
    )
    print(header)
    for family in families:
        for fit in FITS:
            r = run(fit, family, n, p)
            worker = f"{r['worker']:>9.0f}" if fit.endswith("2") else f"{'-':>9}"
            extra = (r["fit"] - r["data"]) / r["x_mb"]
            print(
                f"{family:<9} {fit:<17} {n:>5} x {p:<6} {r['x_mb']:>6.0f} "
                f"{r['seconds']:>7.1f} {r['data']:>8.0f} {r['fit']:>7.0f} "
                f"{worker} {extra:>7.2f}",
                flush=True,
            )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
