"""Wall time and size of the default reviewer's report on gse1992 (#49).

SurvSet (GPL-3, ``pip install 'vcpcr[benchmarks]'``, never imported by
vcpcr): ``gse1992``, 120 breast-cancer patients with complete clinical
columns (age, tumour size, ER status, node status; the rows with a missing
clinical value dropped) and 15,528 genes. The signature is a fixed
``VCPCR(family="cox", n_clusters=3, lam_ratio=0.5, n_init=3)`` adjusted for
the four clinical columns; :func:`vcpcr.validation.report` runs with its
defaults (5-fold CV x 2, multi-split 50 splits, stability selection 25
pairs, calibration and decision curve) and, for comparison, with
``inference=False, stability=False``. Prints a table (wall time, HTML size,
sections) and writes the default report to ``--out`` (default
``/tmp/report_gse1992.html``; never committed: it is large).

The machine's cores are shared: the table gives the wall time, the CPU time
of this process (with ``--jobs 1`` every fit runs in it, so that is the
work a core needs; with more jobs the workers' time is not counted) and the
1-minute load average after the run.

Run (2 cores)::

    PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \
        python benchmarks/bench_report.py --jobs 2
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from SurvSet.data import SurvLoader

from vcpcr import VCPCR
from vcpcr.validation import report

CLINICAL = ["age", "size", "er", "node"]


def load_gse1992() -> tuple[pd.DataFrame, np.ndarray]:
    """Clinical columns and genes of gse1992, complete clinical rows only."""
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
    keep = clinical.notna().all(axis=1).to_numpy()
    X = pd.concat([clinical, genes], axis=1)[keep].reset_index(drop=True)
    y = df[["time", "event"]].to_numpy(dtype=float)[keep]
    return X, y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="/tmp/report_gse1992.html")
    args = parser.parse_args()
    X, y = load_gse1992()
    model = VCPCR(
        family="cox", n_clusters=3, lam_ratio=0.5, n_init=3, covariates=CLINICAL
    )
    rows = []
    for name, options in (
        ("default", {}),
        ("inference=False, stability=False", {"inference": False, "stability": False}),
    ):
        start, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rep = report(model, X, y, n_jobs=args.jobs, random_state=0, **options)
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
        load = os.getloadavg()[0]
        html = rep.to_html()
        if name == "default":
            rep.to_html(args.out, force=True)
            covered = rep.covered()
        rows.append(
            {
                "report": name,
                "wall time (s)": round(seconds, 1),
                "CPU time, this process (s)": round(cpu, 1),
                "load average after": round(load, 1),
                "HTML (kB)": round(len(html.encode()) / 1024),
                "sections": len(rep.sections),
                "warnings": len(caught),
            }
        )
    print(
        f"gse1992: {X.shape[0]} patients, {int(y[:, 1].sum())} events, "
        f"{X.shape[1] - len(CLINICAL)} genes; n_jobs={args.jobs}"
    )
    print(pd.DataFrame(rows).to_string(index=False))
    print("TRIPOD+AI items covered:", ", ".join(covered))
    print(f"wrote {Path(args.out)}")


if __name__ == "__main__":
    main()
