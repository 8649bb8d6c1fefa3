"""Figure (#27): what sparsity costs, VC-PCR's CV curve beside Coxnet's.

Run (``benchmarks`` extra for scikit-survival; seeded, about a minute)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/figure_peer_curve.py [--out FILE]

One data set of ``bench_inference.py``'s signal design (cox, n = 100,
p = 200, 20 active genes, seed 0). ``VCPCRCV(scoring="neg_pooled_deviance",
selection="1se")`` on the default grid when it was drawn (the 10-point
``lam_ratio`` grid, pinned: ``STUDY_RATIOS``), and Coxnet (``l1_ratio=0.5``, 30
penalties fixed from all rows, no baseline) scored on the same folds by the
same cross-calibrated pooled deviance (``VCPCRCV.peer_curve``), drawn by
``plot_cv(cv, peer=...)``. Writes ``docs/img/cv_peer_curve.png`` and prints
both curves.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_inference import ACTIVE, signal_data
from bench_sparse_cohorts import STUDY_RATIOS
from sksurv.linear_model import CoxnetSurvivalAnalysis
from sksurv.util import Surv

from vcpcr import VCPCRCV
from vcpcr.plotting import plot_cv

HERE = Path(__file__).resolve().parent


def coxnet_path(alphas):
    """Coxnet's coefficient path at fixed penalties, for ``peer_curve``."""

    def fit_path(X, y):
        model = CoxnetSurvivalAnalysis(l1_ratio=0.5, alphas=alphas)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a path may stop before its end
            model.fit(X, Surv.from_arrays(y[:, 1] == 1, y[:, 0]))
        coef = np.zeros((alphas.size, X.shape[1]))
        coef[: model.coef_.shape[1]] = model.coef_.T
        coef[model.coef_.shape[1] :] = model.coef_[:, -1]
        return coef

    return fit_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=str(HERE.parent / "docs" / "img" / "cv_peer_curve.png")
    )
    args = parser.parse_args()
    X, y = signal_data("cox", 0)
    X, y = np.asarray(X), np.asarray(y)
    cv = VCPCRCV(
        family="cox",
        latent="paper",
        lam_ratios=STUDY_RATIOS,
        scoring="neg_pooled_deviance",
        selection="1se",
        random_state=0,
    ).fit(X, y)
    full = CoxnetSurvivalAnalysis(l1_ratio=0.5, n_alphas=30, alpha_min_ratio=0.01)
    alphas = full.fit(X, Surv.from_arrays(y[:, 1] == 1, y[:, 0])).alphas_
    peer = cv.peer_curve(coxnet_path(alphas), X, y)
    print("Coxnet on the same folds:")
    print(peer.round(3).to_string())
    chosen = cv.best_estimator_
    active = np.concatenate(ACTIVE)
    selected = np.flatnonzero(chosen.coef_)
    print(
        f"chosen: {cv.best_params_}, {selected.size} genes "
        f"({np.isin(selected, active).sum()} of 20 active), "
        f"shrinkage {cv.shrinkage_:.2f}, pooled deviance {-cv.best_score_:.3f}"
    )
    ax = plot_cv(cv, peer=peer, peer_label="Coxnet (l1_ratio=0.5), same folds")
    ax.set_title("Cox, 100 x 200, 20 active genes: CV pooled deviance")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    ax.figure.savefig(args.out, dpi=110, bbox_inches="tight")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
