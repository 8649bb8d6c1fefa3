"""CPU time of ``multi_split`` on the model ``VCPCRCV`` chose (#48 item 1).

The shape of the issue's cohort: a simulated Cox cohort of 912 rows x 158
genes with three clinical covariates (``make_block_data``: eight blocks of
15 genes with log-HR 0.25, 0.2, 0.15, 0.15, 0.1, 0.1, 0.05 and 0, 38 noise
genes, censoring 0.3, so that a 456-row half has events for the
gene-level test of about 150 columns; age, size and a three-level grade drawn as in
``bench_increment_time.simulated_912``, whose two blocks make the default
``VCPCRCV`` choose 10 genes, where the issue's cohort had 79: here it
chooses 112).

``--tune`` fits ``VCPCRCV(family="cox", covariates=[...])`` with its defaults
(``random_state=0``) and writes ``best_params_`` (every parameter of the
chosen model) to ``benchmarks/results/multi_split_chosen_params_<shape>.json``.
Then every run rebuilds the chosen model as ``VCPCR(**best_params_)`` and
times ``multi_split`` of it on ``--n-splits`` splits (``random_state=0``,
one job, ``common_tree=None``): the CPU seconds per split
(``time.process_time``), the genes selected and the gene-level nodes tested
per split, and the time of 50 splits extrapolated (CPU s x 50, and that over
2 cores). Only ``VCPCR`` and ``multi_split`` are called, so the same script
times any version of the package::

    PYTHONPATH=$PWD python benchmarks/bench_multi_split_chosen.py --tune
    PYTHONPATH=/work/main python benchmarks/bench_multi_split_chosen.py --label before
    PYTHONPATH=$PWD python benchmarks/bench_multi_split_chosen.py --label after
    PYTHONPATH=$PWD python benchmarks/bench_multi_split_chosen.py --label after \\
        --gene-level off

``--shape wide``: 300 rows x 20,000 genes instead (blocks of 10 and 10 with
log-HR 0.4 and 0.0, 19,980 noise genes, no covariates).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np
import pandas as pd
from bench_increment_time import with_clinical

import vcpcr
from vcpcr import VCPCR, VCPCRCV
from vcpcr.inference import multi_split
from vcpcr.simulate import make_block_data

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def simulated_912():
    """912 x 158 Cox genes in weak blocks, three clinical covariates."""
    data = make_block_data(
        912,
        [15] * 8,
        [0.25, 0.2, 0.15, 0.15, 0.1, 0.1, 0.05, 0.0],
        n_noise=38,
        family="cox",
        censoring=0.3,
        random_state=0,
    )
    return with_clinical(data)


def simulated_wide():
    """300 x 20,000 Cox genes, no covariates."""
    data = make_block_data(
        300,
        [10, 10],
        [0.4, 0.0],
        n_noise=19_980,
        family="cox",
        censoring=0.5,
        random_state=0,
    )
    X = pd.DataFrame(np.asarray(data.X), columns=[f"g{j}" for j in range(20_000)])
    return X, np.column_stack([data.y, data.event]).astype(float), [], []


def params_path(shape: str) -> str:
    return os.path.join(HERE, f"multi_split_chosen_params_{shape}.json")


def tune(shape: str, X, y, covariates) -> None:
    start = time.process_time()
    wall = time.perf_counter()
    cv = VCPCRCV(family="cox", covariates=covariates or None, random_state=0)
    cv.fit(X, y)
    params = dict(cv.best_params_)
    with open(params_path(shape), "w") as f:
        json.dump(params, f, indent=1, default=str)
    n_genes = sum(len(m) for m in cv.clusters_.values())
    print(
        f"tuned: {params} -> {n_genes} genes in {len(cv.clusters_)} modules; "
        f"{time.process_time() - start:.1f} CPU s, "
        f"{time.perf_counter() - wall:.1f} s wall"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--label", default="")
    parser.add_argument("--n-splits", type=int, default=3)
    parser.add_argument("--shape", choices=["912", "wide"], default="912")
    parser.add_argument("--gene-level", choices=["on", "off"], default="on")
    args = parser.parse_args()
    X, y, covariates, _ = simulated_912() if args.shape == "912" else simulated_wide()
    if args.tune:
        tune(args.shape, X, y, covariates)
        return
    with open(params_path(args.shape)) as f:
        params = json.load(f)
    model = VCPCR(**params)
    extra = {} if args.gene_level == "on" else {"gene_level": False}
    start = time.process_time()
    wall = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = multi_split(
            model,
            X,
            y,
            n_splits=args.n_splits,
            random_state=0,
            common_tree=None,
            n_jobs=1,
            **extra,
        )
    cpu = (time.process_time() - start) / args.n_splits
    per_wall = (time.perf_counter() - wall) / args.n_splits
    s = res.splits
    print(
        f"{args.label:7s} shape {args.shape} gene_level {args.gene_level}: "
        f"{cpu:.1f} CPU s per split ({per_wall:.1f} s wall), "
        f"{s['n_selected'].mean():.0f} genes selected, "
        f"{s['n_nodes_tested'].mean():.1f} nodes tested per split "
        f"({args.n_splits} splits, vcpcr at {os.path.dirname(vcpcr.__file__)}); "
        f"50 splits: {50 * cpu / 60:.1f} CPU min, {25 * cpu / 60:.1f} min on 2 cores"
    )


if __name__ == "__main__":
    main()
