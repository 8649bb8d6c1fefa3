"""Benchmark: VCPCRCV(family="cox") against a CV-tuned Coxnet on real cohorts.

Run on one core (needs the ``benchmarks`` extra: ``pip install
'vcpcr[benchmarks]'``, which brings the GPL-3 package SurvSet; vcpcr itself
never imports it)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \\
        python benchmarks/bench_cohorts.py [--quick] [--scoring NAME] \
        [--cohorts NAME,NAME] [--splits N]

Cohorts (SurvSet): ``chop``, ``gse1992``, ``gse3143``, ``gse4335``,
``NSBCD``, ``MCLcleaned`` only; SurvSet's other cohorts are held out for
independent evaluation and never loaded here. ``--quick``: ``NSBCD`` and
``MCLcleaned``, one split.

Data handling (documented in ``docs/survival.md``):

* **genes only**: the ``num_`` columns that are gene probes (``gse*``: the
  ``num_HS_`` columns; the clinical ``num_age``, ``num_size``, ``num_grade``,
  ``num_erlev``, ... and the ``fac_`` factors are left out: covariates are
  issue #18);
* **missing values**: gene columns with any NaN are dropped (one column in
  ``gse1992`` and one in ``gse4335``);
* **time 0** (two events in ``chop``): set to half the smallest positive time,
  so they stay the earliest events (lifelines and scikit-survival need
  positive times).

Per cohort: three stratified (on the event) 70/30 splits
(``StratifiedShuffleSplit(random_state=0)``). On the 70%: ``VCPCRCV(family=
"cox", random_state=0)`` with its defaults before #27's sixth study
(``latent="paper", selection="min"``; ``--scoring`` sets its criterion, None
Harrell's C) and its 10-point ``lam_ratio`` grid (pinned: ``STUDY_RATIOS``),
and scikit-survival's ``CoxnetSurvivalAnalysis(l1_ratio=0.9,
alpha_min_ratio=0.01, n_alphas=30)`` whose alpha is chosen by 5-fold CV
(Harrell's C) over its own path, one warm-started path per fold as
``cv.glmnet`` does. On the 30%: Harrell's C (lifelines ``concordance_index``) and the
integrated Brier score (``sksurv.metrics.integrated_brier_score`` on 20 times
between the 10th and 80th percentiles of the test times, within the training
follow-up); genes with a non-zero coefficient, clusters, wall time of the
tuning and refit. Means over the splits.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import pandas as pd
from bench_inference import STUDY_RATIOS  # the grid this benchmark ran with
from lifelines.utils import concordance_index
from sklearn.model_selection import KFold, StratifiedShuffleSplit
from sksurv.linear_model import CoxnetSurvivalAnalysis
from sksurv.metrics import integrated_brier_score
from sksurv.util import Surv

from vcpcr import VCPCRCV

COHORTS = ["chop", "gse1992", "gse3143", "gse4335", "NSBCD", "MCLcleaned"]
QUICK = ["NSBCD", "MCLcleaned"]


def load(name):
    """Gene matrix, time and event of a SurvSet cohort (see the module doc)."""
    from SurvSet.data import SurvLoader

    df = SurvLoader().load_dataset(name)["df"]
    prefix = "num_HS_" if name.startswith("gse") else "num_"
    genes = df.filter(regex=f"^{prefix}").dropna(axis=1)
    time_ = df["time"].to_numpy(dtype=float)
    time_[time_ <= 0] = time_[time_ > 0].min() / 2
    return genes.to_numpy(dtype=float), time_, df["event"].to_numpy(dtype=bool)


def _brier_times(t_train, t_test):
    lo, hi = np.percentile(t_test, [10, 80])
    lo, hi = max(lo, t_train.min()), min(hi, t_train.max() * 0.999)
    return np.linspace(lo, hi, 20)


def coxnet_scores(X, y, l1_ratio=0.9, folds=None, alpha_min_ratio=0.01):
    """Coxnet's 30 alphas (from all rows) and their summed fold Harrell's C.

    One Coxnet path per fold (warm starts, as cv.glmnet); a fold whose path
    stops early scores its last alpha for the smaller ones. ``folds``
    defaults to a shuffled ``KFold(5, random_state=0)``.
    """
    kw = {"l1_ratio": l1_ratio, "alpha_min_ratio": alpha_min_ratio}
    if folds is None:
        folds = KFold(5, shuffle=True, random_state=0).split(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alphas = CoxnetSurvivalAnalysis(n_alphas=30, **kw).fit(X, y).alphas_
        scores = np.zeros(alphas.size)
        for tr, te in folds:
            fold = CoxnetSurvivalAnalysis(alphas=alphas, **kw).fit(X[tr], y[tr])
            for j, a in enumerate(alphas):
                risk = fold.predict(X[te], alpha=max(a, fold.alphas_[-1]))
                scores[j] += concordance_index(y[te]["time"], -risk, y[te]["event"])
    return alphas, scores


def coxnet(X, y, l1_ratio=0.9, folds=None):
    """Coxnet with alpha chosen by 5-fold CV (Harrell's C) over its own path."""
    alphas, scores = coxnet_scores(X, y, l1_ratio, folds)
    best = int(np.argmax(scores))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = CoxnetSurvivalAnalysis(
            alphas=alphas[: best + 1],
            fit_baseline_model=True,
            l1_ratio=l1_ratio,
            alpha_min_ratio=0.01,
        ).fit(X, y)
    return net, float(net.alphas_[-1])


def run_split(X, time_, event, train, test, scoring):
    y = Surv.from_arrays(event, time_)
    times = _brier_times(time_[train], time_[test])
    rows = {}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = VCPCRCV(
            family="cox",
            latent="paper",
            lam_ratios=STUDY_RATIOS,
            scoring=scoring,
            selection="min",
            random_state=0,
        ).fit(X[train], np.column_stack([time_[train], event[train]]))
    seconds = time.perf_counter() - start
    model = cv.best_estimator_
    risk = model.predict_log_partial_hazard(X[test])
    surv = model.predict_survival_function(X[test], return_array=True, times=times)
    rows["VC-PCR"] = (
        concordance_index(time_[test], -risk, event[test]),
        integrated_brier_score(y[train], y[test], surv, times),
        int(np.count_nonzero(model.coef_)),
        model.n_clusters_,
        seconds,
    )
    start = time.perf_counter()
    net, alpha = coxnet(X[train], y[train])
    seconds = time.perf_counter() - start
    risk = net.predict(X[test], alpha=alpha)
    surv = np.vstack(
        [f(times) for f in net.predict_survival_function(X[test], alpha=alpha)]
    )
    rows["Coxnet"] = (
        concordance_index(time_[test], -risk, event[test]),
        integrated_brier_score(y[train], y[test], surv, times),
        int(np.count_nonzero(net.coef_[:, -1])),
        float("nan"),
        seconds,
    )
    return rows


def main():
    quick = "--quick" in sys.argv
    scoring = None
    if "--scoring" in sys.argv:
        scoring = sys.argv[sys.argv.index("--scoring") + 1]
    out = []
    names = QUICK if quick else COHORTS
    if "--cohorts" in sys.argv:
        names = sys.argv[sys.argv.index("--cohorts") + 1].split(",")
    if not set(names) <= set(COHORTS):  # never load the held-out cohorts
        raise ValueError(f"--cohorts must be among {COHORTS}; got {names}.")
    n_splits = 1 if quick else 3
    if "--splits" in sys.argv:
        n_splits = int(sys.argv[sys.argv.index("--splits") + 1])
    for name in names:
        X, time_, event = load(name)
        splits = StratifiedShuffleSplit(n_splits, test_size=0.3, random_state=0)
        for i, (train, test) in enumerate(splits.split(X, event)):
            for method, vals in run_split(
                X, time_, event, train, test, scoring
            ).items():
                out.append((name, f"{X.shape[0]} x {X.shape[1]}", method, i, *vals))
    cols = ["cohort", "n x p", "method", "split", "C", "IBS", "genes", "K", "s"]
    frame = pd.DataFrame(out, columns=cols)
    table = frame.groupby(["cohort", "n x p", "method"], sort=False)[
        ["C", "IBS", "genes", "K", "s"]
    ].mean()
    default = "concordance (the default)"
    print(f"VCPCRCV scoring: {scoring or default}")
    print(table.round(3).to_string())


if __name__ == "__main__":
    main()
