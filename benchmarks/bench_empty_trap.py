"""Benchmark (#48 item 6): how often the default keeps no gene while genes help.

Run from the repository root on one core (needs the ``benchmarks`` extra for
scikit-survival and SurvSet; vcpcr itself never imports SurvSet)::

    PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_empty_trap.py [--quick] [--seeds N] [--sims N]

The trap, as #48 states it: the default ``VCPCRCV(family="cox")`` returns
no gene (the clinical model) while a clinical-plus-genes fit on the same
folds finds signal. The rule, stated before the run: on the CV's own folds
(``cv.folds_``) and by its own criterion (the cross-calibrated pooled
deviance, ``VCPCRCV.peer_curve``), a Coxnet path (scikit-survival,
``l1_ratio=0.5``, 30 penalties fixed from all rows, the clinical columns
unpenalized through ``penalty_factor=0``) is scored; it *finds signal* when
its best point has at least one gene and beats the chosen (empty) point by
more than 0 (``gain``), and *clearly* when by more than one bootstrap
standard error of its score (``gain_se > 1``). For each fit the table also
gives VC-PCR's own best point with genes: its score minus the chosen one's
(``own_gain``) and whether a point with genes was the best point (so that
the paired gate, not the score, chose the empty model).

Data:

* the six cohorts (SurvSet ``chop``, ``gse1992``, ``gse3143``, ``gse4335``,
  ``NSBCD``, ``MCLcleaned`` only; genes as ``bench_cohorts.load``) on
  their genes alone (the clinical model is then the null model), and
  ``gse1992`` with its clinical columns (age, size, ER, node; the rows with
  all four) as covariates: ``gse1992+clin``; folds
  ``StratifiedKFold(5, shuffle=True, random_state=seed)`` on the event,
  seeds ``0..N-1``;
* simulated weak signals of the 144-patient case's shape: 144 rows, 70
  genes in 7 blocks of 10 (within-block correlation 0.6), 5 clinical
  covariates of which two act (log hazard ratios 0.5 and 0.3 per SD), the
  genes' score (the first block's mean, standardized) with log hazard ratio
  ``s`` in {0, 0.25, 0.5} per SD; exponential times, about 35 % censored.

Prints one table per part and the rates; writes nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold
from sksurv.linear_model import CoxnetSurvivalAnalysis
from sksurv.util import Surv

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cohorts import COHORTS, load

from vcpcr import VCPCRCV

CLINICAL = ["age", "size", "er", "node"]


def coxnet_path(alphas, n_clinical):
    """Coxnet's path at fixed penalties, clinical columns unpenalized."""

    def fit_path(X, y):
        factor = np.r_[np.zeros(n_clinical), np.ones(X.shape[1] - n_clinical)]
        model = CoxnetSurvivalAnalysis(
            l1_ratio=0.5, alphas=alphas, penalty_factor=factor
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a path may stop before its end
            model.fit(X, Surv.from_arrays(y[:, 1] == 1, y[:, 0]))
        coef = np.zeros((alphas.size, X.shape[1]))
        coef[: model.coef_.shape[1]] = model.coef_.T
        coef[model.coef_.shape[1] :] = model.coef_[:, -1]
        return coef

    return fit_path


def one_fit(X, y, n_clinical, seed):
    """The default CV on ``(X, y)`` and the Coxnet peer on its folds."""
    folds = list(StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y[:, 1]))
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    covariates = list(frame.columns[:n_clinical]) or None
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = VCPCRCV(
            family="cox", covariates=covariates, cv=folds, random_state=seed
        ).fit(frame, y)
    cpu = time.process_time() - start
    res = cv.cv_results_
    chosen = float(res["mean_test_score"].iloc[cv.best_index_])
    genes = res[(res["mean_size"] > 0) & np.isfinite(res["mean_test_score"])]
    own_gain = float(genes["mean_test_score"].max() - chosen) if len(genes) else np.nan
    best_has_genes = bool(res["mean_size"].iloc[res["mean_test_score"].idxmax()] > 0)
    factor = np.r_[np.zeros(n_clinical), np.ones(X.shape[1] - n_clinical)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = CoxnetSurvivalAnalysis(
            l1_ratio=0.5, n_alphas=30, alpha_min_ratio=0.01, penalty_factor=factor
        ).fit(X, Surv.from_arrays(y[:, 1] == 1, y[:, 0]))
        peer = cv.peer_curve(coxnet_path(full.alphas_, n_clinical), X, y)
    peer = peer[peer["mean_size"] - n_clinical > 0]
    if len(peer):
        top = peer.loc[peer["mean_test_score"].idxmax()]
        gain = float(top["mean_test_score"] - chosen)
        gain_se = gain / float(top["se_test_score"])
        peer_genes = float(top["mean_size"] - n_clinical)
    else:
        gain = gain_se = peer_genes = np.nan
    return {
        "genes": int(np.count_nonzero(cv.coef_[cv.clustered_columns_])),
        "own_gain": own_gain,
        "best_has_genes": best_has_genes,
        "peer_gain": gain,
        "peer_gain_se": gain_se,
        "peer_genes": peer_genes,
        "cpu_s": cpu,
    }


def cohort(name, clinical):
    """Genes (and the clinical columns first, for gse1992+clin), outcome."""
    genes, t, e = load(name)
    if not clinical:
        return genes, np.column_stack([t, e.astype(float)]), 0
    from SurvSet.data import SurvLoader

    df = SurvLoader().load_dataset(name)["df"]
    clin = df[["num_age", "num_size", "fac_er_positive", "fac_node_status"]]
    clin = clin.astype(str).replace("missing", np.nan).astype(float).to_numpy()
    keep = ~np.isnan(clin).any(axis=1)
    X = np.column_stack([clin[keep], genes[keep]])
    return X, np.column_stack([t[keep], e[keep].astype(float)]), clin.shape[1]


def simulated(signal, seed, n=144):
    """The 144-patient shape: 5 clinical columns, 70 genes in 7 blocks."""
    rng = np.random.default_rng(seed)
    factors = rng.normal(size=(n, 7))
    X = np.sqrt(0.6) * np.repeat(factors, 10, axis=1) + np.sqrt(0.4) * rng.normal(
        size=(n, 70)
    )
    Z = rng.normal(size=(n, 5))
    score = X[:, :10].mean(axis=1)
    score = (score - score.mean()) / score.std(ddof=1)
    lin = Z @ np.array([0.5, 0.3, 0.0, 0.0, 0.0]) + signal * score
    t = rng.exponential(np.exp(-lin))
    c = rng.exponential(2.0 * np.median(t), size=n)
    y = np.column_stack([np.minimum(t, c), (t <= c).astype(float)])
    return np.column_stack([Z, X]), y, 5


def rates(frame, by):
    """Per group: fits, empty choices and the trap's two rates."""
    empty = frame["genes"] == 0
    trap = empty & (frame["peer_gain"] > 0)
    clear = empty & (frame["peer_gain_se"] > 1)
    gated = empty & frame["best_has_genes"]
    out = pd.DataFrame(
        {
            "fits": frame.groupby(by).size(),
            "empty": empty.groupby(frame[by]).sum(),
            "trap": trap.groupby(frame[by]).sum(),
            "trap>1se": clear.groupby(frame[by]).sum(),
            "gated": gated.groupby(frame[by]).sum(),
        }
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="NSBCD, 1 seed, 3 sims")
    parser.add_argument("--seeds", type=int, default=2, help="fold seeds per cohort")
    parser.add_argument("--sims", type=int, default=10, help="data sets per signal")
    args = parser.parse_args()
    seeds = 1 if args.quick else args.seeds
    sims = 3 if args.quick else args.sims
    names = ["NSBCD"] if args.quick else COHORTS
    rows = []
    for name, clinical in [(n, False) for n in names] + (
        [] if args.quick else [("gse1992", True)]
    ):
        X, y, k = cohort(name, clinical)
        for seed in range(seeds):
            row = one_fit(X, y, k, seed)
            label = name + ("+clin" if clinical else "")
            rows.append({"data": label, "seed": seed, **row})
            print(pd.DataFrame([rows[-1]]).round(3).to_string(header=len(rows) == 1))
    real = pd.DataFrame(rows)
    sim_rows = []
    for signal in (0.0, 0.25, 0.5):
        for seed in range(sims):
            X, y, k = simulated(signal, 1000 + seed)
            row = one_fit(X, y, k, seed)
            sim_rows.append({"data": f"sim s={signal:g}", "seed": seed, **row})
    sims_frame = pd.DataFrame(sim_rows)
    pd.set_option("display.width", 200)
    print("\nCohorts (each fold seed one row)")
    print(real.round(3).to_string(index=False))
    print("\nSimulated 144 x (5 clinical + 70 genes)")
    print(sims_frame.round(3).to_string(index=False))
    both = pd.concat([real.assign(part="cohorts"), sims_frame.assign(part="sims")])
    print(
        "\nRates: empty = the default kept no gene; trap = empty and the Coxnet "
        "peer with genes beat it on the same folds; trap>1se = by more than one "
        "bootstrap SE; gated = empty although a point with genes scored best"
    )
    print(rates(both, "data").to_string())


if __name__ == "__main__":
    main()
