"""Benchmark: stability selection (#16), accuracy of the frequencies and the bound.

Run on one core::

    OMP_NUM_THREADS=1 python benchmarks/bench_stability.py [--quick]

Data: the paper's configuration-1 design (``make_block_data`` with ten
blocks of five genes, coefficients ``s * [1, 0, -1, 0, 1, 0, -1, 0, 0, 0]``,
correlation groups ``[0, 0, 1, 1, 2, 2, 3, 3, 4, 5]`` at ``rho = 0.6``, and
150 independent noise genes: ``p = 200``), ``n = 100`` rows (halves of 50),
for the gaussian (``snr = 10``, ``s = 1``), binomial (prevalence 0.5,
``s = 0.25``) and cox (30 % censoring, ``s = 0.25``) families; ``s`` keeps
the logistic and Cox linear predictors at a standard deviation of about 2.
The global null is the same design with every coefficient 0.

Templates: ``VCPCR(n_clusters=5, lam_ratio=0.4, n_init=3)`` on ``R`` data
sets per family and scenario, ``n_pairs=50``; and ``VCPCRCV()`` (defaults:
tuned inside every half) on a few gaussian data sets with ``n_pairs=10``.
``--quick``: 2 data sets, ``n_pairs=10`` (and one VCPCRCV data set with 5
pairs).

Printed per row (means over the data sets):

- ``q``: genes selected per half; ``AUC``: ``roc_auc_score`` of the selection
  frequency, active (20) against all inactive genes (180), against the
  inactive genes correlated with an active block (``AUC corr``, 20) and
  against the inactive genes independent of every active one (``AUC noise``:
  blocks 9-10 and the 150 noise genes, 160);
- at ``pi = 0.6`` and ``pi = 0.8``: ``V``, the false stable selections
  (inactive genes in the stable set; under the null, the whole stable set),
  the bound ``q^2 / ((2 pi - 1) p)``, and the share of data sets with ``V``
  above the bound (the bound is on ``E[V]``, so only the means compare).
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from vcpcr import VCPCR, VCPCRCV
from vcpcr.inference import stability_selection
from vcpcr.inference._stability import error_bound
from vcpcr.simulate import make_block_data

DESIGN = {
    "block_sizes": [5] * 10,
    "corr_groups": [0, 0, 1, 1, 2, 2, 3, 3, 4, 5],
    "n_noise": 150,
    "rho": 0.6,
}
COEFS = np.array([1, 0, -1, 0, 1, 0, -1, 0, 0, 0], dtype=float)
FAMILIES = {
    "gaussian": (1.0, {"snr": 10.0}),
    "binomial": (0.25, {"prevalence": 0.5}),
    "cox": (0.25, {"censoring": 0.3}),
}
THRESHOLDS = (0.6, 0.8)
N_SAMPLES = 100


def draw(family: str, null: bool, seed: int) -> tuple[Any, Any, Any]:
    """One data set: X, y as the estimators take it, and the active mask."""
    scale, extra = FAMILIES[family]
    if null and family == "gaussian":
        extra = {"noise_sd": 1.0}
    coefs = np.zeros_like(COEFS) if null else scale * COEFS
    data = make_block_data(
        N_SAMPLES, coefs=coefs, family=family, random_state=seed, **DESIGN, **extra
    )
    y = np.column_stack([data.y, data.event]) if family == "cox" else data.y
    active = np.repeat(COEFS != 0, 5)
    active = np.concatenate([active, np.zeros(DESIGN["n_noise"], dtype=bool)])
    return data.X, y, active


def measure(template: Any, family: str, null: bool, seed: int, n_pairs: int) -> dict:
    """Stability selection on one data set; the row's numbers for it."""
    X, y, active = draw(family, null, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a half whose fit selects nothing
        res = stability_selection(template, X, y, n_pairs=n_pairs, random_state=seed)
    freq = res.selection_frequency.to_numpy()
    p = freq.size
    correlated = np.zeros(p, dtype=bool)
    correlated[np.repeat(COEFS == 0, 5).nonzero()[0][:20]] = True  # blocks 1,3,5,7
    out: dict[str, float] = {"q": res.mean_selected}
    if not null:
        inactive = ~active
        noise = ~active & ~correlated
        out["auc"] = roc_auc_score(active, freq)
        keep = active | correlated
        out["auc_corr"] = roc_auc_score(active[keep], freq[keep])
        keep = active | noise
        out["auc_noise"] = roc_auc_score(active[keep], freq[keep])
    else:
        inactive = np.ones(p, dtype=bool)
    for pi in THRESHOLDS:
        v = int(np.count_nonzero((freq >= pi) & inactive))
        out[f"V{pi}"] = v
        out[f"B{pi}"] = error_bound(res.mean_selected, p, pi)
    return out


def row(label: str, results: list[dict], n_pairs: int, seconds: float) -> str:
    """One markdown table row (means over the data sets)."""

    def mean(key: str) -> str:
        if key not in results[0]:
            return "-"
        return f"{np.mean([r[key] for r in results]):.3f}"

    cells = [label, str(len(results)), str(n_pairs), mean("q")]
    cells += [mean("auc"), mean("auc_corr"), mean("auc_noise")]
    for pi in THRESHOLDS:
        above = np.mean([r[f"V{pi}"] > r[f"B{pi}"] for r in results])
        cells += [mean(f"V{pi}"), mean(f"B{pi}"), f"{above:.2f}"]
    cells.append(f"{seconds / len(results):.1f}")
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 data sets, 10 pairs")
    args = parser.parse_args()
    n_sets, n_pairs = (2, 10) if args.quick else (30, 50)
    cv_sets, cv_pairs = (1, 5) if args.quick else (3, 10)
    print(f"n = {N_SAMPLES}, p = 200, halves of {N_SAMPLES // 2}\n")
    header = [
        "data / template",
        "R",
        "pairs",
        "q",
        "AUC",
        "AUC corr",
        "AUC noise",
        "V (0.6)",
        "bound (0.6)",
        "V > bound (0.6)",
        "V (0.8)",
        "bound (0.8)",
        "V > bound (0.8)",
        "s / data set",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header), flush=True)
    runs = [
        (f"{family} {'null' if null else 'config 1'} / VCPCR", family, null)
        for null in (False, True)
        for family in FAMILIES
    ]
    for label, family, null in runs:
        template = VCPCR(n_clusters=5, lam_ratio=0.4, n_init=3, family=family)
        t0 = time.perf_counter()
        results = [measure(template, family, null, s, n_pairs) for s in range(n_sets)]
        print(row(label, results, n_pairs, time.perf_counter() - t0), flush=True)
    for null in (False, True):
        t0 = time.perf_counter()
        results = [
            measure(VCPCRCV(), "gaussian", null, s, cv_pairs) for s in range(cv_sets)
        ]
        label = f"gaussian {'null' if null else 'config 1'} / VCPCRCV"
        print(row(label, results, cv_pairs, time.perf_counter() - t0), flush=True)


if __name__ == "__main__":
    main()
