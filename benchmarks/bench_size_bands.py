"""Benchmark (#47, the diagnostic): held-out C at equal size, VC-PCR against Coxnet.

Run on one core (``benchmarks`` extra: SurvSet is GPL-3 and never imported
by vcpcr), resumable: each split is appended to a CSV checkpoint as soon as
it is done, and a rerun skips what is there::

    OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_size_bands.py [--splits 20] [--seed 20] \\
        [--cohorts chop,gse1992] [--first K] [--weights NAME] \\
        [--l1-ratios 0.05,0.5] [--n-clusters 1,2] [--screen cv] \\
        [--scoring concordance] [--out FILE] \\
        [--table] \\
        [--against FILE] \\
        [--figure FILE]

**The question.** The paper claims VC-PCR's best predictions for sparse
models (about 20 or fewer variables). A tuned default picks one point of the
path, so comparing defaults mixes *which size* each criterion prefers with
*how well* each method predicts at a size. This benchmark separates them:
per size band of genes (1-5, 6-10, 11-20, 21-50, 51+), the held-out
Harrell's C (and integrated Brier score) of each method's CV-best model
*within the band*, paired on the same splits and folds.

**Protocol.** Cohorts: SurvSet's ``chop``, ``gse1992``, ``gse3143``,
``gse4335``, ``NSBCD``, ``MCLcleaned`` only (the others are held out),
genes only, loaded as ``bench_cohorts.py`` does. Per cohort ``--splits``
stratified (on the event) 70/30 splits, seeded by ``--seed``; on the 70 %,
one set of 5 stratified shuffled folds shared by both methods:

- ``VC-PCR``: ``VCPCRCV(family="cox")`` with every default (its grid,
  criterion and selection); a grid point belongs to the band of its genes
  when fitted on the 70 % (``VCPCR.path``); the band's best point by
  ``mean_test_score`` is refitted on the 70 % with the defaults and that
  point's parameters, its predictions shrunk by the point's
  ``calibration_slope`` as the default's refit is (C does not depend on
  it). The default's own choice (``best_estimator_``) is a row too.
- ``Coxnet``: scikit-survival's ``CoxnetSurvivalAnalysis(l1_ratio=0.5)`` on
  the genes standardized with the 70 %'s means and SDs, 30 alphas down to
  0.01 alpha_max from the 70 %, each scored by the mean fold Harrell's C
  (one warm-started path per fold, as cv.glmnet); an alpha belongs to the
  band of its genes in the fit on the 70 %; the band's best alpha is the
  band's model. The CV-best alpha over all bands is a row too.

On the 30 %: Harrell's C, the integrated Brier score on 20 times between
the 10th and 80th percentiles of the test event times (inside the training
follow-up), the genes of the model. ``--table`` prints, per band, each
method's mean C and the paired difference VC-PCR - Coxnet with a 95 %
interval (t over the splits of a cohort where both methods have a model in
the band; the average over cohorts weights cohorts equally), and the same
for the defaults; ``--figure`` draws C against genes for both methods with
the default's chosen point.

``--weights NAME`` runs ``VCPCRCV(weights=NAME)`` (e.g. ``lasso``) in place
of the default's elastic net, everything else unchanged; ``--l1-ratios``
makes the elastic net's mixing a grid dimension (C3 below);
``--n-clusters`` replaces ``VCPCRCV``'s ``n_clusters`` (C4, C5 below);
``--scoring`` its criterion (C7 below). The
CSV columns ``k`` and ``clusters`` give each VC-PCR model's grid point's
``n_clusters`` and its genes per cluster, largest first (e.g. ``3+2``;
written by every run since C5, by C4's with ``clusters`` only); ``points``
(since C7) how many grid points (VC-PCR) or alphas (Coxnet) the band's
model was chosen from. ``--against
FILE`` (with ``--table``) adds the table of this run against an earlier
one on this run's splits (``against_table``).

**Candidates for the sparse end (#47), each stated here before its run.**

- *C1, the lasso's screen* (``--weights lasso``, split seed 20, as the
  default's run). The default elastic net's ``l1_ratio=0.05`` ranks genes
  almost as a ridge fit does; the lasso ranks them by a multivariate
  sparse fit, as Coxnet. Expected: in the bands 1-5 and 6-10, VC-PCR's
  paired C minus Coxnet's moves up by at least half of the default
  weights' gap (averaged over the six cohorts); above 20 genes little
  changes. If it does not, the screen's penalty is not what loses C.
  **Outcome** (``results/size_bands_lasso_table.txt``, 120 splits): not
  supported; the lasso's screen is worse in every band (bands 1-5, 6-10,
  11-20: -0.062, -0.062, -0.067 against the default weights' -0.034,
  -0.038, -0.039; ``docs/tuning.md``, "C at equal size").
- *C2, converged weights* (branch ``kkt``: the Cox weights continued by
  proximal Newton to a relative KKT violation <= 1e-3 at every delta, where
  Coxnet's ``tol=1e-7`` stops at 0.2 on the grid's smallest delta; split
  seed 20, the first 5 splits of each cohort, ``--first 5``, paired with the
  same 30 splits of the default's run). Expected, if the unconverged screen
  is what loses C: the bands 1-5, 6-10 and 11-20 move up by at least 0.01
  against the default's rows on the same splits; if they move by less than
  their noise, convergence is a correctness fix that does not close the
  gap. **Outcome** (``results/size_bands_converged_table.txt``, 30 splits;
  run on main after the merge of ``kkt2``, whose polish is a semismooth
  Newton method to a violation <= 6e-13, not the ``kkt`` branch's proximal
  Newton; the Coxnet rows equal the default run's on every split and band):
  not supported. C2 minus the default's rows on the same splits: +0.007
  [-0.007, +0.020] (1-5), -0.023 [-0.046, +0.001] (6-10), -0.009 [-0.032,
  +0.014] (11-20); no band moves up by 0.01, all within their noise.
  Against Coxnet: -0.011, -0.058, -0.050 (the default's run on these
  splits: -0.018, -0.033, -0.051). Convergence is a correctness fix that
  does not close the gap.
- *C3, the weights' mixing as a grid dimension* (``--l1-ratios 0.05,0.5``,
  split seed 20, ``--first 5``, on main's converged weights: paired with
  C2's 30 splits, ``--against`` C2's CSV). Each VC-PCR band's model is the
  best point by ``mean_test_score`` over the union of two default grids on
  the same folds, the default's (``l1_ratio=0.05``) and the same grid with
  Coxnet's own mixing ``l1_ratio=0.5`` (``delta_max`` at that mixing);
  the ``default`` row stays the default's own choice (a check: it must
  equal C2's). C1 closed the lasso end (1.0 is worse in every band); 0.5
  is the mixing whose genes win the sparse end for Coxnet, with supports
  between the default's and the lasso's. Expected, if the mixing is what
  loses C and the CV criterion can tell the two grids apart: the bands 1-5,
  6-10 and 11-20 move up by at least 0.01 against C2's rows on the same
  splits. If they move by less than that (or down), the mixing is not the
  lever, and a grid over it only adds cost (about 2x); the CSV's
  ``weights`` column says how often each band took the 0.5 points.
  **Outcome** (``results/size_bands_mixing_table.txt``, 30 splits; the
  default and Coxnet rows equal C2's on every split): not supported. C3
  minus C2 on the same splits: -0.004 [-0.013, +0.004] (1-5), -0.017
  [-0.036, +0.001] (6-10), -0.003 [-0.026, +0.020] (11-20), with the 0.5
  grid's points taken in 10, 17 and 12 of the 30 splits. The CV criterion
  takes the other mixing often and gains nothing; the mixing is not the
  lever.
- *C4, clusters that cannot collapse to single genes* (``--n-clusters
  1,2``, split seed 20, ``--first 5``, on main: paired with C2's 30 splits,
  ``--against`` C2's CSV). On the default grid the sparse end is reached by
  ``lam_ratio`` alone (the grid's four largest ratios below 1, 0.695 to
  0.234, give the 1-20 gene points at every delta), and its models
  are singletons: on split 0 of ``chop`` and ``gse4335`` (looked at before
  this statement, no C computed) the 1-5 gene points are 2-5 clusters of
  1 gene each (at most one cluster of 2-3), the 6-10 gene points mostly 1-2
  genes per cluster, so a sparse VC-PCR is a Cox fit on its few
  top-weighted genes, not on modules; no default grid point in the band 1-5
  has every cluster of 3 or more genes, so a filter on the default grid
  has nothing to choose. C4 makes the sparse models hold fewer, larger
  clusters: each VC-PCR band's model is the best point by
  ``mean_test_score`` of ``VCPCRCV(n_clusters=(1, 2))`` (every other
  default: the same deltas, ratios, criterion, folds), so a 5-gene model is
  at most 2 clusters and a 10-gene one has a cluster of 5 or more; the
  ``default`` row is that grid's own choice (reported, not deciding);
  vcpcr's default ``n_clusters=(4, 5, 6)`` is unchanged. Expected, if
  singleton clusters are what loses C at the sparse end (a module's score
  averages its genes' noise): the bands 1-5, 6-10 and 11-20 move up by at
  least 0.01 against C2's rows on the same splits (C2 minus Coxnet there:
  -0.011, -0.058, -0.050). If they move by less (or down), the cluster
  structure of the sparse end is not the lever. The CSV's ``clusters``
  column (genes per cluster of each model) says whether the models did
  hold clusters of 2 or more genes; if the bands' models are still mostly
  singletons, the mechanism was not engaged and the outcome is
  inconclusive, not a rejection.
  **Outcome** (``results/size_bands_c4_table.txt``, 30 splits, 9 minutes;
  the Coxnet rows equal C2's on every split and band): not supported as
  stated, since the band 1-5 moves down. C4 minus C2 on the same splits:
  -0.011 [-0.037, +0.014] (1-5), +0.026 [-0.002, +0.054] (6-10), +0.027
  [+0.001, +0.054] (11-20), and +0.032, +0.034 in 21-50 and 51+. Against
  Coxnet: -0.029, -0.024, -0.024 (C2: -0.011, -0.058, -0.050). The
  mechanism was engaged from 6 genes up (no 6-10 or 11-20 model is all
  singletons; median largest cluster 7 and 13.5 genes) and only half-way in
  the band 1-5 (15 of 30 models still all singletons). So the bands where
  clusters hold several genes gained 0.03 and the band where they cannot
  did not; that pattern was not predicted and is a lead for a new
  candidate, stated before its own run on other splits, not a result.
- *C5, the union grid* (``--n-clusters 1,2,4,5,6``, on main: a new split
  seed, 21, ``--first 5``, i.e. 30 splits none of C1-C4 saw, paired with a
  run of the unchanged default grid on the same 30 splits made for this
  test, ``--seed 21 --first 5`` into ``results/size_bands_seed21.csv``, and
  ``--against`` that CSV). C4's lead: from 6 genes up, models of one or two
  large clusters gained about 0.03, while in the band 1-5 a grid without
  the default's many small clusters lost 0.011. C5 lets the CV criterion
  choose between them: each VC-PCR band's model is the best point by
  ``mean_test_score`` of ``VCPCRCV(n_clusters=(1, 2, 4, 5, 6))`` (the
  default's ``(4, 5, 6)`` plus C4's ``(1, 2)``; every other default the
  same: deltas, ratios, criterion, selection, folds), so it can take
  fewer, larger clusters where they score better and the default's many
  small ones at the sparse end; the ``default`` row is that grid's own
  choice (reported against the baseline's ``default`` row, C, genes and
  IBS, not deciding); vcpcr's default is unchanged. Expected, if fewer
  larger clusters from 6 genes up are what closes the gap and the CV
  criterion can find them: C5 minus the baseline's VC-PCR rows on the same
  splits (``new-base``, mean over the six cohorts) is at least +0.01 in
  the band 6-10 and at least +0.01 in the band 11-20, and not below -0.01
  in the band 1-5. *Supported* if all three hold. *Not supported* if the
  band 6-10 or 11-20 moves up by less than 0.01 (or down) while the
  mechanism was engaged in it, or the band 1-5 moves down by more than
  0.01. The mechanism is *engaged* in a band when at least 10 of its 30
  VC-PCR models (a third) come from a point with ``k`` in (1, 2) (the
  CSV's ``k`` column; ``clusters`` gives their sizes); a band 6-10 or
  11-20 where it is not engaged, so that C5's model is mostly the
  baseline's, makes the outcome *inconclusive* for that band, not a
  rejection. Reported besides: each band's C5 minus Coxnet with its 95 %
  interval against #47's goal (lower bound above -0.01 up to 20 genes),
  per band how often the model took ``k`` 1 or 2 and its median largest
  cluster. A check: the Coxnet rows of the two seed-21 runs must be
  identical on every split and band (C, IBS, genes; ``max |dC Coxnet|`` =
  0); if they are not, the pairing is broken and no outcome is drawn.
  A larger grid also gives each band's maximum more points to be lucky
  on, so part of any gain can be the choice's noise; the thresholds stay
  as stated.
  **Outcome** (``results/size_bands_c5_table.txt``, 30 splits of seed 21;
  the Coxnet rows of the two runs identical, ``max |dC Coxnet|`` = 0): not
  supported. The mechanism was engaged in every band (models with ``k`` 1
  or 2: 17, 15 and 14 of 30 in 1-5, 6-10, 11-20; median largest cluster 1,
  5 and 7.5 genes). C5 minus the baseline on the same splits: -0.027
  [-0.060, +0.005] (1-5, down by more than 0.01), -0.010 [-0.044, +0.024]
  (6-10), +0.002 [-0.023, +0.028] (11-20). Against Coxnet: -0.041, -0.072,
  -0.053 (the baseline: -0.018, -0.047, -0.053). C4's gain from 6 genes up
  did not reproduce on new splits when the CV chooses between the cluster
  counts; the default row: C5 0.643 with 23 genes, the baseline 0.648 with
  44 (Coxnet 0.653, 23.5).
- *C6, the screen of the weights' own CV* (``--screen cv``, on main: split
  seed 21, ``--first 5``, the 30 splits of C5's run, paired with the
  default grid's run on them, ``results/size_bands_seed21.csv``,
  ``--against`` that CSV; stated before its run, after C5's outcome, and
  nothing in it is read off seed 21's numbers). The decomposition
  (``docs/tuning.md``, "Where the C gap sits") put the gap in the screen:
  Coxnet allowed only the genes the weights keep at the chosen (large)
  ``delta`` loses 0.034, while the weights' own model at the ``delta`` of
  its own cross-validation matches Coxnet (+0.002). The default's sparse
  end is reached at the large deltas, whose near-ridge weights rank genes
  by their marginal association. C6 cross-validates the weights on their
  own first, as ``cv.glmnet`` does: the default's elastic net (``"enet"``,
  ``l1_ratio=0.05``) on the same 5 folds, 30 deltas log-spaced from 0.5 to
  0.01 ``delta_max`` (the default grid's range; ``delta_max`` on the 70 %),
  each fold's weights fitted on its training rows standardized with their
  own means and SDs and scored by Harrell's C of their linear predictor on
  the test rows (standardized the same way), the delta of the highest mean
  fold C (``lambda.min``) being ``VCPCRCV``'s only delta; ``n_clusters``,
  ``lam_ratios`` and everything else stay the default's, so sparsity comes
  from ``lam_ratio`` alone, within that screen. Expected: every band up to
  20 genes holds better genes, C6 minus the default grid on the same splits
  at least +0.01 in at least two of the bands 1-5, 6-10, 11-20 and none
  below -0.01 (supported); otherwise not supported. A band with no C6 model
  on a split (``lam_ratio`` alone may not reach 1-5 genes) is counted as
  missing, and the number of splits per band is reported. Reported
  besides: C6 minus Coxnet per band, and the Coxnet rows' identity with the
  baseline's (the pairing check). **Outcome**
  (``results/size_bands_c6_table.txt``; about 6 minutes on one core):
  supported by the rule as stated, on point estimates whose intervals all
  hold 0. C6 minus the default grid on the same splits: -0.003 [-0.038,
  +0.032] (1-5, 27 pairs), +0.014 [-0.016, +0.044] (6-10), +0.020 [-0.004,
  +0.043] (11-20); the default row -0.014 [-0.056, +0.029] with 20.5
  median genes instead of 44. Against Coxnet: -0.020, -0.048, -0.038 (the
  baseline: -0.018, -0.047, -0.053); the Coxnet rows are identical. Item 3's
  goal (a lower bound above -0.01) stays far off.
- *C6's confirmation* (stated before its runs, after C6's outcome): the
  same rule on 30 new splits, split seed 22, ``--first 5``, C6 (``--screen
  cv``) against the default grid run on the same splits by the same code
  (``results/size_bands_seed22.csv``, ``results/size_bands_c6_seed22.csv``).
  Supported only if the rule holds again; C6 then becomes a candidate for
  item 4 (the default), not a default by itself. **Outcome**
  (``results/size_bands_c6_seed22_table.txt``, the baseline's
  ``results/size_bands_seed22_table.txt``; Coxnet rows identical): not
  confirmed. C6 minus the default grid: -0.008 [-0.034, +0.018] (1-5),
  -0.009 [-0.034, +0.017] (6-10), -0.015 [-0.046, +0.016] (11-20), the
  default row -0.010 [-0.038, +0.019] (25.5 median genes against 7). On
  the 60 splits of both seeds the three bands average about -0.006,
  +0.003, +0.002: the seed-21 gain was noise. Against Coxnet on seed 22:
  -0.016, -0.049, -0.046 (the baseline: -0.023, -0.023, -0.032).
- *C7, the peer's criterion within a band* (``--scoring concordance``, on
  main: a new split seed, 23, ``--first 5``, 30 splits none of C1-C6 saw,
  paired with the default grid's run on the same splits by the same code,
  ``results/size_bands_seed23.csv``, ``--against`` that CSV; stated before
  either run). C1-C6 changed the *points* of the sparse end (the weights'
  penalty, mixing, convergence and ``delta``; the clusters) and none moved
  the bands. But C3's union grid already held, at the bands' sizes, points
  whose weights carry Coxnet's own penalty (mixing 0.5, supports close to
  Coxnet's at those sizes); the criterion took them in a third of the
  splits and the bands gained nothing. What the two methods' bands differ
  in besides their points is the *choice*: VC-PCR's band model is the best
  by the pooled cross-calibrated deviance among the dozens of grid points
  in the band, Coxnet's the best by mean fold Harrell's C among a few
  nested alphas, and the bands are judged by held-out C. A deviance
  rewards calibration and the spread of the predictor as much as ranking.
  C7 chooses VC-PCR's band models by the peer's criterion,
  ``VCPCRCV(family="cox", scoring="concordance")`` (mean fold Harrell's C
  on the same folds; the grid, weights, clusters and folds the default's),
  each band's model the best point by ``mean_test_score`` and refitted
  unshrunk (this scoring has no calibration slope: the IBS model is the
  refit unshrunk too); the ``default`` row is that CV's own choice (the
  paired gate on fold scores: reported, not deciding). Expected, if the
  choice among the sparse points, not the points, loses C: C7 minus the
  default grid on the same splits (``new-base``, mean over the six
  cohorts) at least +0.01 in at least two of the bands 1-5, 6-10, 11-20,
  and none below -0.01 (*supported*); otherwise *not supported*. Reported
  besides: C7 minus Coxnet per band with its 95 % interval (item 3's goal),
  IBS against the baseline (a C-tuned choice is expected to lose in IBS),
  the median ``points`` per band of each method, and the Coxnet rows'
  identity with the baseline's (the pairing check: ``max |dC Coxnet|`` =
  0, else no outcome is drawn). If supported, the same rule is run on
  30 more new splits (seed 24) before C7 can be a candidate for item 4.
  **Outcome** (``results/size_bands_c7_seed23_table.txt``, the baseline's
  ``results/size_bands_seed23_table.txt``; Coxnet rows identical): supported
  on seed 23 by the rule as stated, narrowly. C7 minus the default grid:
  +0.027 [+0.002, +0.053] (1-5), +0.004 [-0.008, +0.016] (6-10), +0.010
  [-0.015, +0.035] (11-20); IBS minus Coxnet worse by 0.01-0.02 from 6
  genes up. The bands' choice is wide: VC-PCR's band model is the best of
  a median 23, 14 and 11.5 grid points in the bands 1-5, 6-10, 11-20,
  Coxnet's of 1 alpha (its 30-alpha path crosses a band in one or two
  steps). **Confirmation** (seed 24, ``results/size_bands_c7_seed24_table.txt``
  and ``results/size_bands_seed24_table.txt``; Coxnet rows identical): not
  confirmed. C7 minus the default grid: -0.000 [-0.022, +0.021] (1-5),
  -0.016 [-0.029, -0.002] (6-10, below -0.01), -0.004 [-0.021, +0.014]
  (11-20). Over both seeds' 60 splits: +0.014, -0.006, +0.003 in C and
  +0.005, +0.017, +0.019 in IBS (worse). The criterion is not the lever
  either; C7 minus Coxnet on seed 24: -0.007, -0.049, -0.045.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from lifelines.utils import concordance_index
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit
from sksurv.linear_model import CoxnetSurvivalAnalysis
from sksurv.metrics import integrated_brier_score
from sksurv.util import Surv

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cohorts import COHORTS, coxnet_scores, load
from bench_sparse_cohorts import brier_times, paired

from vcpcr import VCPCRCV

HERE = os.path.dirname(os.path.abspath(__file__))
#: Upper ends of the size bands (genes); the last band is open.
BANDS = {"1-5": 5, "6-10": 10, "11-20": 20, "21-50": 50, "51+": np.inf}
METHODS = ("VC-PCR", "Coxnet")


def band_of(size: float) -> str | None:
    """The band of a model with ``size`` genes (None for the empty model)."""
    if size < 0.5:
        return None
    return next(b for b, hi in BANDS.items() if size <= hi + 1e-9)


def refit_sizes(estimator, res: pd.DataFrame, X, y2) -> pd.Series:
    """Genes of every grid point fitted on all of ``X`` (``VCPCR.path``).

    A band is a size on the data the model is fitted on, as Coxnet's are:
    one ``path`` along ``lam_ratio`` per ``(n_clusters, delta)``.
    """
    params = pd.DataFrame(list(res["params"]), index=res.index)
    sizes = pd.Series(np.nan, index=res.index)
    for (k, delta), rows in params.groupby(["n_clusters", "delta"]):
        path = (
            clone(estimator)
            .set_params(n_clusters=k, delta=delta)
            .path(X, y2, lam_ratios=rows["lam_ratio"].to_numpy())
        )
        sizes[rows.index] = path["size"].to_numpy()
    return sizes


def enet_scheme(l1_ratio: float) -> str:
    """The name of the elastic-net weights with mixing ``l1_ratio``.

    Registered in vcpcr's schemes on first use (the benchmark's process
    only; the default's ``"enet"``, 0.05, is returned as is): the default's
    grid of ``delta_max`` fractions, ``delta_max`` at this mixing.
    """
    from dataclasses import replace

    from vcpcr._weights import SCHEMES

    if l1_ratio == SCHEMES["enet"].l1_ratio:
        return "enet"
    name = f"enet{l1_ratio:g}"
    if name not in SCHEMES:
        SCHEMES[name] = replace(SCHEMES["enet"], name=name, l1_ratio=l1_ratio)
    return name


def weights_cv_delta(X, y2, folds, n_deltas=30):
    """C6: the delta of the default weights' own cross-validation (``lambda.min``).

    The ``"enet"`` weights' path over ``n_deltas`` deltas log-spaced from
    0.5 to 0.01 ``delta_max`` (``delta_max`` on all of ``X``, standardized),
    fitted on each fold's training rows (standardized with their own means
    and SDs), scored by Harrell's C of the linear predictor on the fold's
    test rows (standardized the same way); the delta of the highest mean C.
    """
    from vcpcr._families import family_instance
    from vcpcr._scaling import standardize
    from vcpcr._weights import SCHEMES

    scheme, family = SCHEMES["enet"], family_instance("cox", owner="C6")
    target = family.prepare(y2).weights_target
    delta_max = scheme.delta_max(standardize(X)[0], target, family)
    deltas = delta_max * np.logspace(np.log10(0.5), -2, n_deltas)
    scores = np.zeros((len(folds), n_deltas))
    for f, (train, test) in enumerate(folds):
        Xs, mean, sd = standardize(X[train])
        coef = scheme.path(Xs, target[train], deltas, family=family).coef
        risk = ((X[test] - mean) / sd) @ coef.T
        for j in range(n_deltas):
            scores[f, j] = concordance_index(y2[test, 0], -risk[:, j], y2[test, 1])
    return float(deltas[int(np.argmax(scores.mean(axis=0)))])


def vcpcr_models(
    X, y2, folds, seed, weights="enet", n_clusters=None, screen=None, scoring=None
):
    """``{band: (model for C, model for IBS)}`` of VC-PCR, and ``"default"``.

    ``weights`` is a scheme's name or a list of them (C3: the weights as a
    grid dimension): each scheme's default grid is cross-validated on the
    same folds and a band's best point is the best by ``mean_test_score``
    over the union; ``"default"`` stays the first scheme's own choice. A
    band's best point is refitted unshrunk for its C and genes (a point's
    slope can be 0, which would hide its genes' ranking) and shrunk by its
    calibration slope, as the default's refit, for its IBS. Each model has
    the attribute ``weights_scheme_`` (its scheme). ``n_clusters`` (C4)
    replaces ``VCPCRCV``'s default ``(4, 5, 6)``. ``screen="cv"`` (C6)
    makes :func:`weights_cv_delta` the only delta. ``scoring`` (C7) is
    ``VCPCRCV``'s criterion (None: its default); a criterion without a
    calibration slope refits every band model unshrunk. Each band's model
    has the attribute ``points_``: the grid points it was the best of.
    """
    schemes = [weights] if isinstance(weights, str) else list(weights)
    parts, best = [], {}
    for scheme in schemes:
        extra = {} if n_clusters is None else {"n_clusters": tuple(n_clusters)}
        if screen == "cv":
            extra["deltas"] = [weights_cv_delta(X, y2, folds)]
        if scoring is not None:
            extra["scoring"] = scoring
        cv = VCPCRCV(family="cox", weights=scheme, cv=folds, random_state=seed, **extra)
        cv.fit(X, y2)
        res = cv.cv_results_.copy()
        res["size"] = refit_sizes(cv.best_estimator_, res, X, y2).to_numpy()
        parts.append(res.assign(scheme=scheme))
        best[scheme] = cv.best_estimator_
        best[scheme].weights_scheme_ = scheme
    res = pd.concat(parts, ignore_index=True)
    default = best[schemes[0]]
    default.points_ = len(res)
    models = {"default": (default, default)}
    bands = res["size"].map(band_of)
    score = res["mean_test_score"]
    for band in BANDS:
        inside = score[(bands == band) & np.isfinite(score)]
        if inside.empty:
            continue
        params = res["params"].iloc[int(inside.idxmax())]
        slope = (
            float(res["calibration_slope"].iloc[int(inside.idxmax())])
            if "calibration_slope" in res
            else 1.0
        )
        scheme = res["scheme"].iloc[int(inside.idxmax())]
        unshrunk = clone(best[scheme]).set_params(shrinkage=1.0, **params)
        unshrunk.fit(X, y2)
        unshrunk.weights_scheme_ = scheme
        unshrunk.points_ = int(inside.size)
        shrunk = unshrunk
        if slope < 1:
            shrunk = clone(unshrunk).set_params(shrinkage=slope).fit(X, y2)
        models[band] = (unshrunk, shrunk)
    return models


class _Standardized:
    """A fitted Coxnet on standardized genes, predicting at one alpha."""

    def __init__(self, net, alpha, mean, sd):
        self.net, self.alpha, self.mean, self.sd = net, alpha, mean, sd
        j = int(np.argmin(np.abs(net.alphas_ - alpha)))
        self.coef_ = net.coef_[:, j]

    def predict_log_partial_hazard(self, X):
        return self.net.predict((X - self.mean) / self.sd, alpha=self.alpha)

    def predict_survival_function(self, X, return_array, times):
        fns = self.net.predict_survival_function(
            (X - self.mean) / self.sd, alpha=self.alpha
        )
        return np.vstack([f(times) for f in fns])


def coxnet_models(X, y, folds):
    """``{band: model}`` for Coxnet's band-best alphas, and ``"default"``."""
    mean, sd = X.mean(axis=0), X.std(axis=0, ddof=1)
    sd[sd == 0] = 1.0
    Xs = (X - mean) / sd
    alphas, scores = coxnet_scores(Xs, y, 0.5, folds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = CoxnetSurvivalAnalysis(
            alphas=alphas, l1_ratio=0.5, fit_baseline_model=True
        ).fit(Xs, y)
    fitted = net.alphas_.size  # a path can stop early; keep the alphas it has
    sizes = np.count_nonzero(net.coef_, axis=0)
    best = _Standardized(net, alphas[int(np.argmax(scores))], mean, sd)
    best.points_ = fitted
    models = {"default": (best, best)}
    for band in BANDS:
        inside = [j for j in range(fitted) if band_of(sizes[j]) == band]
        if inside:
            model = _Standardized(
                net, alphas[max(inside, key=lambda j: scores[j])], mean, sd
            )
            model.points_ = len(inside)
            models[band] = (model, model)
    return models


def cluster_genes(model) -> str:
    """Genes per cluster of a fitted VCPCR, largest first (``3+2``)."""
    labels = np.asarray(model.labels_)
    counts = np.bincount(labels[labels >= 0]) if (labels >= 0).any() else []
    return "+".join(str(c) for c in sorted(counts, reverse=True) if c > 0)


def run_split(
    name,
    X,
    time_,
    event,
    train,
    test,
    seed,
    weights="enet",
    n_clusters=None,
    screen=None,
    scoring=None,
):
    """Rows (method, band, C, IBS, genes) of one split."""
    y = Surv.from_arrays(event, time_)
    y2 = np.column_stack([time_, event])
    times = brier_times(time_[train], time_[test], event[test])
    end = time_[train].max()  # censoring weights exist inside the follow-up
    y_test = Surv.from_arrays(
        event[test] & (time_[test] <= end), np.minimum(time_[test], end)
    )
    folds = list(
        StratifiedKFold(5, shuffle=True, random_state=seed).split(train, event[train])
    )
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = {
            "VC-PCR": vcpcr_models(
                X[train], y2[train], folds, seed, weights, n_clusters, screen, scoring
            ),
            "Coxnet": coxnet_models(X[train], y[train], folds),
        }
        for method, models in fitted.items():
            for band, (model, calibrated) in models.items():
                risk = model.predict_log_partial_hazard(X[test])
                surv = calibrated.predict_survival_function(
                    X[test], return_array=True, times=times
                )
                genes = int(np.count_nonzero(model.coef_))
                ibs = (
                    integrated_brier_score(y[train], y_test, surv, times)
                    if np.all(np.isfinite(surv))
                    else np.nan
                )
                rows.append(
                    {
                        "cohort": name,
                        "seed": seed,
                        "method": method,
                        "band": band,
                        "C": concordance_index(time_[test], -risk, event[test]),
                        "IBS": ibs,
                        "genes": genes,
                        "points": model.points_,
                    }
                    | (
                        {"weights": getattr(model, "weights_scheme_", "")}
                        if not isinstance(weights, str)
                        else {}
                    )
                    | (
                        {"k": model.n_clusters, "clusters": cluster_genes(model)}
                        if method == "VC-PCR"
                        else {"k": np.nan, "clusters": ""}
                    )
                )
    return rows


def band_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per band: mean C of each method, paired C and IBS differences, splits."""
    out = {}
    for band in ("default", *BANDS):
        part = df[df["band"] == band]
        both = part.groupby(["cohort", "seed", "split"])["method"].transform("nunique")
        part = part[both == 2]
        if part.empty:
            continue
        row = {}
        for method in METHODS:
            mine = part[part["method"] == method]
            row[f"C {method}"] = mine.groupby("cohort")["C"].mean().mean()
            row[f"genes {method}"] = mine["genes"].median()
        for metric in ("C", "IBS"):
            d = paired(part, metric, "VC-PCR").loc["average"]
            row[f"d{metric}"], row[f"d{metric} lo"] = d["mean"], d["lo"]
            row[f"d{metric} hi"] = d["hi"]
        row["splits"] = int(part.groupby(["cohort", "seed", "split"]).ngroups)
        row["cohorts"] = int(part["cohort"].nunique())
        out[band] = row
    return pd.DataFrame(out).T


def _paired_average(frame: pd.DataFrame, method: str, reference: str) -> dict:
    """:func:`paired`'s average over cohorts with at least two pairs."""
    wide = frame.pivot_table(
        index=["cohort", "seed", "split"], columns="method", values="C"
    )
    if not {method, reference} <= set(wide.columns):
        return {"mean": np.nan, "lo": np.nan, "hi": np.nan, "n": 0}
    counts = (wide[method] - wide[reference]).dropna().groupby(level="cohort").size()
    frame = frame[frame["cohort"].isin(counts[counts >= 2].index)]
    if frame.empty:
        return {"mean": np.nan, "lo": np.nan, "hi": np.nan, "n": 0}
    return dict(paired(frame, "C", method, reference).loc["average"])


def against_table(df: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """Per band: a run (``df``) against an earlier run (``base``) on its splits.

    The base run is restricted to the new run's splits. Per band: each run's
    VC-PCR C minus Coxnet's (splits where both have a model in the band), and
    the new run's VC-PCR C minus the base run's, paired by cohort, seed,
    split and band (95 % intervals as :func:`band_table`'s; a cohort needs two
    pairs for its variance, so a cohort with fewer is left out of that
    average). ``max |dC Coxnet|`` is the largest absolute difference between
    the two runs' Coxnet C on the same split and band (0: the same splits and
    folds).
    """
    keys = ["cohort", "seed", "split", "band", "method"]
    base = base.merge(df[["cohort", "seed", "split"]].drop_duplicates())
    both = df.merge(base, on=keys, suffixes=("", " base"))
    out = {}
    for band in ("default", *BANDS):
        part = both[both["band"] == band]
        mine = part[part["method"] == "VC-PCR"]
        net = part[part["method"] == "Coxnet"]
        if mine.empty:
            continue
        row = {
            "C new": mine.groupby("cohort")["C"].mean().mean(),
            "C base": mine.groupby("cohort")["C base"].mean().mean(),
            "genes new": mine["genes"].median(),
            "genes base": mine["genes base"].median(),
        }
        new_base = pd.concat(
            [
                mine[[*keys[:-1], "C"]].assign(method="new"),
                mine[[*keys[:-1], "C base"]]
                .rename(columns={"C base": "C"})
                .assign(method="base"),
            ]
        )
        for label, frame, method, ref in (
            ("new-Coxnet", df[df["band"] == band], "VC-PCR", "Coxnet"),
            ("base-Coxnet", base[base["band"] == band], "VC-PCR", "Coxnet"),
            ("new-base", new_base, "new", "base"),
        ):
            d = _paired_average(frame, method, ref)
            row[label], row[f"{label} lo"] = d["mean"], d["lo"]
            row[f"{label} hi"], row[f"n {label}"] = d["hi"], d["n"]
        row["max |dC Coxnet|"] = (net["C"] - net["C base"]).abs().max()
        out[band] = row
    return pd.DataFrame(out).T


def figure(df: pd.DataFrame, path: str) -> None:
    """C against genes (band means), both methods, and the defaults' points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for method, colour in zip(METHODS, ("C0", "C1"), strict=True):
        mine = df[df["method"] == method]
        bands = mine[mine["band"] != "default"].groupby("band")
        pts = pd.DataFrame({"genes": bands["genes"].median(), "C": bands["C"].mean()})
        pts = pts.reindex([b for b in BANDS if b in pts.index])
        ax.plot(
            pts["genes"], pts["C"], "o-", color=colour, label=f"{method}, band best"
        )
        own = mine[mine["band"] == "default"]
        ax.plot(
            own["genes"].median(),
            own["C"].mean(),
            "*",
            ms=14,
            color=colour,
            label=f"{method}, default",
        )
    ax.set_xscale("log")
    ax.set_xlabel("genes (median in the band)")
    ax.set_ylabel("held-out Harrell's C (mean over splits)")
    n = df.groupby(["cohort", "seed", "split"]).ngroups
    ax.set_title(f"C at equal size, {df['cohort'].nunique()} cohorts, {n} splits")
    ax.legend(loc="center left", bbox_to_anchor=(1, 0.5), fontsize=8)
    fig.savefig(path, bbox_inches="tight", dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--cohorts", default=",".join(COHORTS))
    parser.add_argument(
        "--out", default=os.path.join(HERE, "results", "size_bands.csv")
    )
    parser.add_argument("--weights", default="enet", help="VCPCRCV's weights")
    parser.add_argument(
        "--l1-ratios",
        help="C3: the elastic-net weights' mixings as a grid dimension, e.g."
        " 0.05,0.5 (the first gives the default row; replaces --weights)",
    )
    parser.add_argument(
        "--n-clusters",
        help="C4, C5: VCPCRCV's n_clusters for VC-PCR's models, e.g. 1,2 or"
        " 1,2,4,5,6 (the default grid's is 4,5,6)",
    )
    parser.add_argument(
        "--screen",
        choices=["cv"],
        help="C6: the default weights' own CV delta as VCPCRCV's only delta",
    )
    parser.add_argument(
        "--scoring",
        help="C7: VCPCRCV's criterion for VC-PCR's band models, e.g."
        " concordance (default: VCPCRCV's)",
    )
    parser.add_argument(
        "--first", type=int, help="run only the first FIRST of the --splits splits"
    )
    parser.add_argument("--table", action="store_true", help="only print the table")
    parser.add_argument(
        "--against",
        help="an earlier run's CSV: also the table of this run against it on"
        " this run's splits (against_table)",
    )
    parser.add_argument("--figure", help="write the figure to this PNG")
    args = parser.parse_args()
    if not args.table:
        names = args.cohorts.split(",")
        if not set(names) <= set(COHORTS):  # never load the held-out cohorts
            raise ValueError(f"--cohorts must be among {COHORTS}; got {names}.")
        done = pd.read_csv(args.out) if os.path.exists(args.out) else None
        keys = (
            set()
            if done is None
            else set(zip(done["cohort"], done["seed"], done["split"], strict=True))
        )
        weights = args.weights
        if args.l1_ratios:
            weights = [enet_scheme(float(r)) for r in args.l1_ratios.split(",")]
        n_clusters = (
            None
            if args.n_clusters is None
            else [int(k) for k in args.n_clusters.split(",")]
        )
        for i in range(args.splits if args.first is None else args.first):
            for name in names:
                if (name, args.seed, i) in keys:
                    continue
                X, time_, event = load(name)
                splits = StratifiedShuffleSplit(
                    args.splits, test_size=0.3, random_state=args.seed
                )
                train, test = list(splits.split(X, event))[i]
                rows = pd.DataFrame(
                    run_split(
                        name,
                        X,
                        time_,
                        event,
                        train,
                        test,
                        args.seed,
                        weights,
                        n_clusters,
                        args.screen,
                        args.scoring,
                    )
                ).assign(split=i)
                rows.to_csv(
                    args.out, mode="a", header=not os.path.exists(args.out), index=False
                )
                print(
                    rows[["cohort", "split", "method", "band", "C", "genes"]]
                    .round(3)
                    .to_string(header=False, index=False),
                    flush=True,
                )
    df = pd.read_csv(args.out)
    print(band_table(df).to_string(float_format=lambda v: f"{v:.4f}"))
    if args.against:
        print(f"\nagainst {os.path.basename(args.against)} on the same splits")
        table = against_table(df, pd.read_csv(args.against))
        print(table.T.to_string(float_format=lambda v: f"{v:.4f}"))
    if args.figure:
        figure(df, args.figure)


if __name__ == "__main__":
    main()
