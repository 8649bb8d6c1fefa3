"""Benchmark (#27, a diagnostic): where does VC-PCR's concordance trail Coxnet's?

Run (seeded, one core, resumable: every data set is appended to a CSV
checkpoint, and a rerun skips what is there)::

    OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_c_gap.py [--n 20] [--out FILE] [--table]

**Why.** Five tuning studies (``docs/tuning.md``) found VC-PCR 0.03-0.04
below a tuned Coxnet in held-out Harrell's C on the six SurvSet cohorts,
for today's dense default and for the sparse paired gate alike, while
Coxnet chose 1-36 genes per cohort. **Hypothesis, stated before this ran:**
the gap comes from signal carried by *single genes* rather than by modules.
VC-PCR's step 2 sees a selected gene only through its module's score, a
weighted mean of its members, so a strong gene whose correlated neighbours
do not act is diluted by them (or, at a high ``lam_ratio``, left alone in a
module only if the sparsity allows); Coxnet fits the gene itself. The
diagnostic, on simulated data only (no cohort is looked at): if the
hypothesis holds, the C difference VC-PCR - Coxnet is clearly negative on
the ``single`` design and near 0 or positive on ``blocks``.

**Designs** (cox, n = 100 training rows and 1,000 test rows from the same
law, p = 200 in 20 blocks of 10 genes at correlation 0.6; exponential
times, independent exponential censoring, about 25 % censored; seeds 700
on):

- ``blocks``: blocks 1 and 2 act, every gene of block 1 with coefficient
  +0.1 and of block 2 with -0.1 (the linear predictor's SD is about 1.1:
  the signal is the modules' mean, VC-PCR's model);
- ``single``: one gene of each of blocks 1, 2 and 3 acts, coefficients
  +0.6, -0.6, +0.6 (SD about 1.0); its nine neighbours do not.

**Outcome of the first run** (``--n 20``, ``results/c_gap_table.txt``):
the hypothesis is not supported. On ``blocks`` today's default is 0.0125
[0.005, 0.020] above Coxnet in C; on ``single`` it is level with it
(-0.0005 [-0.017, +0.016], 7.5 genes against Coxnet's 18.5): VC-PCR finds
single genes as well as Coxnet at p = 200.

**Second hypothesis, stated before its run:** the gap comes from the
width. The cohorts have 2,000-22,000 genes, the designs above 200. The
same two designs with 2,000 genes (200 blocks of 10, the same active
genes; ``blocks_wide``, ``single_wide``, ``--designs``): if the hypothesis
holds, VC-PCR - Coxnet is clearly lower on the wide designs than on the
narrow ones.

**Outcome of the second run:** not supported either. At p = 2,000 today's
default is 0.029 [0.016, 0.041] (``blocks_wide``) and 0.015 [-0.000,
0.031] (``single_wide``) above Coxnet, more than at p = 200. Neither the
kind of signal nor the width reproduces the cohorts' gap.

**Third hypothesis, stated before its run:** the gap comes from few
events. The cohorts' training parts have 20-60 events, the designs above
about 75; with few events the fold-averaged C is noisy, and the best of
VC-PCR's 180 grid points rewards that noise more than the best of Coxnet's
30 penalties. The two p = 200 designs with about 70 % of the rows censored
(``blocks_censored``, ``single_censored``: about 30 events): if the
hypothesis holds, today's default - Coxnet is clearly lower there than on
``blocks`` and ``single``.

**Outcome of the third run:** not supported for today's default (+0.010
[-0.006, +0.026] and +0.008 [-0.016, +0.031] with about 30 events). The
sparse gate does lose C there: -0.015 and -0.048 [-0.081, -0.015] (2
genes on ``single_censored``): with few events it drops weak signal, as
on the weak cohorts.

**Fourth hypothesis, stated before its run** (after reading the fifth
study's per-cohort table, ``results/sparse_cohorts_fifth_table.txt``: the
gap is largest on the three cohorts where Coxnet keeps 1-6.5 genes, NSBCD
-0.068 with 3.5 genes, gse1992 -0.057 with 6.5 and gse4335 -0.041 with 1,
and smallest where it keeps 25-36, chop -0.009 and MCLcleaned -0.016): the
gap comes from signal *concentrated in one gene*. Today's grid has 4 to 6
latent variables (``n_clusters=(4, 5, 6)``), so a model of one gene cannot
be represented: the other modules are noisy step-2 covariates, or the gene
is diluted in a module. The ``single`` design above spread the signal over
three genes. Designs ``dominant`` (the first gene of block 1 with
coefficient 1.0, nothing else; the linear predictor's SD is 1.0) and
``dominant_censored`` (the same with about 30 events), p = 200; an extra
method, today's default with ``n_clusters=(1, 2, 3, 4, 5, 6)``, run on
these two designs only. If the hypothesis holds, today's default - Coxnet
is clearly negative on ``dominant`` (the interval's upper end below 0) and
the 1-6 grid recovers at least half of that difference.

**Outcome of the fourth run:** not supported. On ``dominant`` today's
default is -0.007 [-0.016, +0.002] from Coxnet (2 genes against 1) and
+0.003 [-0.012, +0.018] with about 30 events; the 1-6 grid changes it by
less than 0.004. A single strong gene is found as Coxnet finds it.

**Fifth hypothesis, stated before its run** (a cohort diagnostic: it
chooses nothing): the gap comes from *scale*. Coxnet as scikit-survival
users run it (``normalize=False``, the peer of every study) penalizes the
coefficients of the genes as measured, which favours high-variance genes
(on the six cohorts the genes' standard deviations span a factor of 10 to
30; in every simulated design above they are all 1). VC-PCR standardizes
every gene, as the paper does. ``--cohort-scale`` reruns Coxnet on the
fifth study's splits and folds (``bench_sparse_cohorts.py --fifth --splits
20 --seed 4``), as measured and on genes standardized with the training
rows' means and standard deviations, and pairs them with that study's
``VC-PCR today`` rows (``results/c_gap_scale.csv``). If the hypothesis
holds, Coxnet on standardized genes loses most of its lead: VC-PCR today -
standardized Coxnet is within 0.01 of 0 on average (against -0.037 for
Coxnet as measured), and Coxnet as measured - standardized Coxnet is
clearly positive (the interval's lower end above 0).

**Outcome of the fifth run** (``results/c_gap_scale_table.txt``; the
rerun's ``Coxnet`` rows equal the fifth study's): not supported. Coxnet as
measured - standardized Coxnet is +0.008 [-0.006, +0.021] on average (from
-0.021 on gse3143 to +0.031 on gse1992), and VC-PCR today - standardized
Coxnet is -0.030 [-0.045, -0.015]: scale explains about a fifth of the
gap. Standardized Coxnet keeps more genes (13.5-113 against 1-127.5).

**Sixth hypothesis, stated before its run:** the gap comes from signal
*across* a correlated block rather than along it. In the ``blocks`` design
the outcome follows a block's mean, the direction VC-PCR's module score
takes; if in real data the outcome follows a contrast of correlated genes,
a module score that averages them loses it, while Coxnet fits each gene.
Design ``contrast`` (p = 200): in blocks 1 and 2, the first gene has
coefficient +0.8 and the second -0.8 (the genes correlate at 0.6; the
linear predictor's SD is about 1.0). If the hypothesis holds, today's
default - Coxnet is clearly negative there (the interval's upper end
below 0).

**Outcome of the sixth run:** not supported: VC-PCR today is +0.033
[+0.005, +0.060] *above* Coxnet on ``contrast`` (9 genes against 25.5).

**Seventh hypothesis, stated before its run:** the gap comes from the
cohorts' *genes* (their distributions, correlations and width), not from
how their outcomes relate to them. ``--cohort-x`` simulates outcomes on each
cohort's own genes (no real outcome is read): three genes drawn at random,
coefficients +0.6, -0.6, +0.6 on the genes standardized over all rows
(the ``single`` design's signal), exponential times and independent
exponential censoring (about 25 %), 20 draws per cohort, each split 70/30
and folded as the fifth study splits; today's default and Coxnet
(``results/c_gap_cohort_x.csv``). If the hypothesis holds, today's default
- Coxnet is clearly negative on average (the interval's upper end below
0); if not, the gap lies in the real outcomes' relation to the genes.

**Outcome of the seventh run** (``results/c_gap_cohort_x_table.txt``):
not supported. On the cohorts' own genes with a simulated three-gene
outcome, today's default is +0.023 [+0.009, +0.038] *above* Coxnet on
average (from -0.009 on NSBCD to +0.040 on gse3143). The genes themselves
(distributions, correlations, 549 to 15,528 of them) do not make VC-PCR
trail; the gap lies in how the real outcomes relate to the genes, which
no design here reproduced.

**Eighth hypothesis, stated before its run** (#27, after rule G): the gap
comes from *weak* signal. The seventh run's outcome is strong (three genes
at +-0.6 on the standardized scale: a linear predictor's SD of about 1, an
oracle C near 0.74), while on the real cohorts Coxnet's held-out C is
0.58-0.73. ``--cohort-x-weak`` simulates outcomes on each cohort's own genes
as the seventh run does (same seeds, splits and folds), in three designs:
``strong3`` (the seventh design), ``weak3`` (the same three genes at +-0.3)
and ``weak30`` (30 genes drawn at random, coefficients +-0.1 with random
signs: many weak effects, as a proliferation signature), 10 draws per
cohort and design; methods: ``VCPCRCV(family="cox")``'s defaults at the
time of this run (the pooled deviance, the paired gate at 0.75 standard
errors, signed latent variables, the 20-point ``lam_ratio`` grid) and
Coxnet (``results/c_gap_cohort_weak.csv``). If the hypothesis holds, the
default - Coxnet in held-out C is clearly negative on average (the upper
end of its 95 % interval below 0) on ``weak3`` or ``weak30``, and on that
design at least 0.01 below its value on ``strong3`` (paired by cohort and
draw). If not, weak signal is ruled out as the cause too.

**Ninth hypothesis, stated before its run** (#27, with the eighth's run
under way; its first 9 of 60 splits per design had been looked at): the
gap comes from genes whose signal sits in
*outlying values*, as a gene amplified or silenced in a subgroup of the
patients (heavy-tailed across patients): Coxnet on the genes as measured
fits them linearly and favours them for their large variance, while VC-PCR
standardizes them and sees them through modules of ordinary genes.
``--cohort-x-kurtotic``: design ``kurtotic3``, ``strong3``'s law with its
three genes drawn from the 2 % of each cohort's genes with the largest
excess kurtosis over all rows (so only which genes act changes), the same
seeds, splits, folds and methods, 10 draws per cohort
(``results/c_gap_cohort_kurtotic.csv``; its table pairs it with the
eighth run's ``strong3`` rows). If the hypothesis holds, the default -
Coxnet in held-out C is clearly negative on ``kurtotic3`` (the upper end of
its 95 % interval below 0) and at least 0.01 below its value on
``strong3``.

**Outcome of the eighth and ninth runs** (``results/c_gap_cohort_weak_table.txt``
and ``c_gap_cohort_kurtotic_table.txt``, 60 paired splits per design):
neither is supported. Default - Coxnet: ``strong3`` +0.024 [+0.005,
+0.042]; ``weak3`` -0.013 [-0.033, +0.007] (-0.036 [-0.058, -0.014] from
``strong3``); ``weak30`` -0.005 [-0.022, +0.012] (-0.029); ``kurtotic3``
+0.017 [-0.003, +0.038] (-0.006). Weak signal removes VC-PCR's lead (the
default then mostly chooses the empty model or one module, Coxnet 10-125
genes) but does not make its difference clearly negative; heavy-tailed
genes change nothing.

**Tenth hypothesis, stated before its run** (#27, after the decomposition):
the gap comes from the *weights' mixing*. The near-ridge ``"enet"`` weights
(``l1_ratio = 0.05``) at the large ``delta`` the sparse gate chooses rank
the genes much as their marginal association with the outcome does; a gene
whose association given its correlated neighbours is stronger than its
marginal one falls below the screen of a wide cohort, while Coxnet
(``l1_ratio = 0.5``) finds it. ``--cohort-x-contrast``: design
``contrast2`` on each cohort's own genes (no real outcome is read), two
pairs, each a gene drawn at random and its most correlated gene over all
rows, with coefficients +0.6 on the first and -0.6 times the sign of their
correlation on the second (standardized genes): each gene's marginal
association is attenuated by the pair's correlation, its conditional one
is not; exponential times, about 25 % censored, the eighth run's seeds
(``1000 (c + 1) + i``), splits (seed 4) and folds, **5 draws per cohort**
(30 paired splits: what the session's time allowed). Methods: today's
default; the default with ``weights="lasso"`` (the mixing at Coxnet's end
of the range: the screen ranks the genes by their conditional
association); Coxnet (``results/c_gap_cohort_contrast.csv``). **The
hypothesis holds if both**: the default - Coxnet in held-out C is clearly
negative (the upper end of its 95 % t interval below 0), and the lasso
weights - the default is clearly positive (the lower end above 0). If the
first holds and not the second, the design reproduces the gap but the
mixing is not its cause.

**Outcome of the tenth run** (``results/c_gap_cohort_contrast_table.txt``,
30 paired splits): not supported, and not a test. Default - Coxnet -0.005
[-0.035, +0.024]; lasso weights - default +0.005 [-0.025, +0.035]; every
method stayed near C 0.5 on five cohorts (0.45-0.54; chop 0.66-0.71). I
read this as too little signal, supposing the pairs correlated above 0.9;
that was wrong (checked after the rerun below: their correlations are
0.22-0.99, median 0.56), but it is why the rerun fixed the signal's size.

**The tenth hypothesis again, with its signal fixed** (stated before its
run, after the tenth run's outcome above; only the signal's size changes):
design ``contrast2_sd1`` is ``contrast2`` with the coefficients rescaled so
that the linear predictor's SD over all rows is 1.0, as in ``strong3``;
the same seeds, splits, folds, methods, 5 draws per cohort and criterion
(``results/c_gap_cohort_contrast_sd1.csv``).

**Outcome of the run with the signal fixed**
(``results/c_gap_cohort_contrast_sd1_table.txt``, 30 paired splits): not
supported either. Default - Coxnet -0.005 [-0.034, +0.024]; lasso weights -
default +0.007 [-0.023, +0.037]. The signal is there: the true linear
predictor's held-out C is 0.68-0.78 per cohort. But no method learns it
from the 64-111 training rows of five cohorts (held-out C 0.48-0.62 for all
three); on chop (290 training rows) all three do (0.66-0.71). A contrast
that only shows given the other gene is as hard for Coxnet's l1 screen as
for VC-PCR's at these sizes, so this design cannot tell the screens apart.

**A decomposition, not a hypothesis** (#27, ``--decompose``; a cohort
diagnostic: it chooses nothing, and no default is tuned on it). Nine
designs could not reproduce the gap, so this run looks at the real
outcomes directly and asks *which part* of VC-PCR loses C, on rule G's
split seed (10) with its splits and folds (``results/gate_cohorts_seed10.csv``
has the same default and Coxnet rows). Per split, besides today's default
and Coxnet, four more Coxnet fits (``l1_ratio = 0.5``, alpha by Harrell's C
over the same folds): on the genes VC-PCR selected (its ``coef_`` not 0;
the empty model's C is 0.5), on the genes its weights keep at the chosen
``delta`` (the screen), on all genes standardized, and the weights' own
model (standardized, ``l1_ratio = 0.05``, the ``"enet"`` weights' mixing).
Read as: Coxnet on VC-PCR's genes - Coxnet is what VC-PCR's *choice of
genes* costs; VC-PCR - Coxnet on its genes is what its *model on those
genes* (modules and step 2) costs; Coxnet on the screen - Coxnet is what
the weights' screen costs. (NSBCD and gse1992 were looked at in a draft
of this diagnostic before it was written here.)

**Outcome of the decomposition** (``results/c_gap_decompose_table.txt``,
120 paired splits; the default and Coxnet rows equal rule G's run): the gap
is -0.019 [-0.033, -0.005]; Coxnet on VC-PCR's genes - Coxnet -0.030
[-0.043, -0.017] (the choice of genes); VC-PCR - Coxnet on its genes +0.011
[+0.004, +0.017] (its model on them is better); Coxnet on the screen -
Coxnet -0.034 [-0.047, -0.021]; standardized Coxnet - Coxnet -0.010
[-0.022, +0.003]; the weights' model - Coxnet +0.002 [-0.011, +0.014]. The
gap sits in the genes the near-ridge weights keep at the large ``delta``
the sparse gate chooses, not in the modules or step 2.

**Methods**, on the same 5 stratified folds of the training rows:
``VCPCRCV(family="cox")``'s defaults when this study ran (Harrell's C, best
point, ``latent="paper"``; pinned since #27's sixth study changed them);
the signed paired gate at ``c`` = 1, refitted shrunk (the best sparse rule
of the fifth study, ``latent="signed"``,
``scoring="neg_pooled_deviance"``); both on the 10-point ``lam_ratio`` grid
this study ran with (pinned: ``STUDY_RATIOS``); Coxnet (scikit-survival,
``l1_ratio = 0.5``, alpha by Harrell's C over the folds, as in
``bench_sparse_cohorts.py``). Reported: held-out C on the test rows and
genes selected, with the paired differences from Coxnet (95 % t interval).
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
from scipy import stats
from sklearn.model_selection import StratifiedKFold
from sksurv.util import Surv

sys.path.insert(0, str(Path(__file__).parent))
from bench_cohorts import coxnet
from bench_sparse_cohorts import PREVIOUS_DEFAULT, STUDY_RATIOS, fifth_models

from vcpcr import VCPCRCV

HERE = os.path.dirname(os.path.abspath(__file__))
N_TRAIN, N_TEST, BLOCK, RHO = 100, 1000, 10, 0.6
FIRST_SEED = 700
#: Blocks of ``BLOCK`` genes per design (p = 200 or 2,000).
N_BLOCKS = {
    "blocks": 20,
    "single": 20,
    "blocks_wide": 200,
    "single_wide": 200,
    "blocks_censored": 20,
    "single_censored": 20,
    "dominant": 20,
    "dominant_censored": 20,
    "contrast": 20,
}
DESIGNS = tuple(N_BLOCKS)
METHODS = (
    "VC-PCR today",
    "VC-PCR signed paired-1, shrunk",
    "VC-PCR today, n_clusters 1-6",
    "Coxnet",
)


def coefficients(design: str) -> np.ndarray:
    beta = np.zeros(N_BLOCKS[design] * BLOCK)
    if design.startswith("blocks"):
        beta[0:BLOCK], beta[BLOCK : 2 * BLOCK] = 0.1, -0.1
    elif design.startswith("dominant"):
        beta[0] = 1.0
    elif design == "contrast":
        beta[[0, 1, BLOCK, BLOCK + 1]] = 0.8, -0.8, 0.8, -0.8
    else:
        beta[[0, BLOCK, 2 * BLOCK]] = 0.6, -0.6, 0.6
    return beta


def draw(design: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows (training first), times and events of one data set."""
    rng = np.random.default_rng(seed)
    n = N_TRAIN + N_TEST
    shared = rng.standard_normal((n, N_BLOCKS[design]))
    own = rng.standard_normal((n, N_BLOCKS[design] * BLOCK))
    X = np.sqrt(RHO) * np.repeat(shared, BLOCK, axis=1) + np.sqrt(1 - RHO) * own
    eta = X @ coefficients(design)
    t = rng.exponential(np.exp(-eta))
    mean = np.exp(-eta).mean()
    if design.endswith("_censored"):  # about 70 % censored
        c = rng.exponential(mean * 0.2, n)
    else:  # about 25 % censored
        c = rng.exponential(mean / 0.3 * 0.7, n)
    return X, np.minimum(t, c), t <= c


def one(design: str, seed: int) -> list[dict]:
    X, time_, event = draw(design, seed)
    train, test = slice(0, N_TRAIN), slice(N_TRAIN, None)
    Xt, y2 = X[train], np.column_stack([time_[train], event[train]])
    folds = list(
        StratifiedKFold(5, shuffle=True, random_state=seed).split(Xt, event[train])
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = fifth_models(Xt, y2, folds, seed)  # the fifth study's fits
        y = Surv.from_arrays(event[train], time_[train])
        net, alpha = coxnet(Xt, y, 0.5, folds)
    models = {
        "VC-PCR today": fitted["VC-PCR today"],
        "VC-PCR signed paired-1, shrunk": fitted[
            "VC-PCR signed calib/paired-1, shrunk"
        ],
    }
    if design.startswith("dominant"):
        grid = VCPCRCV(
            family="cox",
            n_clusters=(1, 2, 3, 4, 5, 6),
            lam_ratios=STUDY_RATIOS,
            cv=folds,
            **PREVIOUS_DEFAULT,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grid.set_params(random_state=seed).fit(Xt, y2)
        models["VC-PCR today, n_clusters 1-6"] = grid.best_estimator_
    rows = []
    for method, model in models.items():
        risk = model.predict(X[test])
        rows.append((method, risk, int(np.count_nonzero(model.coef_))))
    risk = net.predict(X[test], alpha=alpha)
    rows.append(("Coxnet", risk, int(np.count_nonzero(net.coef_[:, -1]))))
    return [
        {
            "design": design,
            "seed": seed,
            "method": method,
            "C": concordance_index(time_[test], -risk, event[test]),
            "genes": genes,
        }
        for method, risk, genes in rows
    ]


def cohort_scale(out: str, splits: int = 20, seed: int = 4) -> None:
    """Coxnet as measured and standardized on the fifth study's splits."""
    from bench_cohorts import load
    from bench_sparse_cohorts import COHORTS
    from sklearn.model_selection import StratifiedShuffleSplit

    done = pd.read_csv(out) if os.path.exists(out) else pd.DataFrame()
    keys = set() if done.empty else set(zip(done.cohort, done.split, strict=True))
    for name in COHORTS:
        X, time_, event = load(name)
        parts = StratifiedShuffleSplit(splits, test_size=0.3, random_state=seed)
        for i, (train, test) in enumerate(parts.split(X, event)):
            if (name, i) in keys:
                continue
            folds = list(
                StratifiedKFold(5, shuffle=True, random_state=seed).split(
                    train, event[train]
                )
            )
            y = Surv.from_arrays(event[train], time_[train])
            mean, sd = X[train].mean(axis=0), X[train].std(axis=0, ddof=1)
            sd[sd == 0] = 1.0
            rows = []
            for method, Z in (
                ("Coxnet", X),
                ("Coxnet, standardized genes", (X - mean) / sd),
            ):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    net, alpha = coxnet(Z[train], y, 0.5, folds)
                risk = net.predict(Z[test], alpha=alpha)
                rows.append(
                    {
                        "cohort": name,
                        "split": i,
                        "method": method,
                        "C": concordance_index(time_[test], -risk, event[test]),
                        "genes": int(np.count_nonzero(net.coef_[:, -1])),
                    }
                )
            frame = pd.DataFrame(rows)
            frame.to_csv(out, mode="a", header=not os.path.exists(out), index=False)
            print(name, i, frame["C"].round(3).tolist(), flush=True)


def t_interval(d: pd.Series) -> tuple[int, float, float, float]:
    """``n``, the mean of ``d`` and its 95 % t interval."""
    half = stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1)
    half /= np.sqrt(d.size)
    return d.size, d.mean(), d.mean() - half, d.mean() + half


def per_cohort(d: pd.Series) -> pd.DataFrame:
    """:func:`t_interval` per cohort (the first index level) and on average."""
    rows = {c: t_interval(part) for c, part in [*d.groupby(level=0), ("average", d)]}
    return pd.DataFrame(rows, index=["n", "mean", "lo", "hi"]).T


def held_out(
    X: np.ndarray,
    outcome: tuple[np.ndarray, np.ndarray],
    split: tuple[np.ndarray, np.ndarray],
    seed: int,
    *vcpcr: tuple[str, dict],
) -> list[dict]:
    """Held-out C and genes of each VC-PCR (``(name, params)``) and Coxnet.

    All tuned on the same 5 folds of the training rows, stratified on the
    event; the training rows' events are reported too.
    """
    (time_, event), (train, test) = outcome, split
    folds = list(
        StratifiedKFold(5, shuffle=True, random_state=seed).split(train, event[train])
    )
    fits = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y2 = np.column_stack([time_[train], event[train]])
        for name, params in vcpcr:
            model = VCPCRCV(family="cox", cv=folds, random_state=seed, **params)
            vc = model.fit(X[train], y2).best_estimator_
            fits.append((name, vc.predict(X[test]), np.count_nonzero(vc.coef_)))
        y = Surv.from_arrays(event[train], time_[train])
        net, alpha = coxnet(X[train], y, 0.5, folds)
    fits.append(
        (
            "Coxnet",
            net.predict(X[test], alpha=alpha),
            np.count_nonzero(net.coef_[:, -1]),
        )
    )
    return [
        {
            "method": method,
            "C": concordance_index(time_[test], -risk, event[test]),
            "genes": int(n),
            "events": int(event[train].sum()),
        }
        for method, risk, n in fits
    ]


#: The eighth hypothesis's designs: (genes, their coefficients' size).
WEAK_DESIGNS = {"strong3": (3, 0.6), "weak3": (3, 0.3), "weak30": (30, 0.1)}
#: The ninth's: ``strong3``'s law on the most heavy-tailed genes.
KURTOTIC_DESIGNS = {"kurtotic3": (3, 0.6)}
#: The tenth's: two pairs of correlated genes acting against their correlation.
CONTRAST_DESIGNS = {"contrast2": (4, 0.6), "contrast2_sd1": (4, 0.6)}
#: The share of a cohort's genes (largest excess kurtosis) ``kurtotic3`` draws from.
KURTOTIC_SHARE = 0.02


def weak_outcome(
    X: np.ndarray, design: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Times and events of one draw of a design of :data:`WEAK_DESIGNS`.

    The three-gene designs draw the seventh run's genes and alternate the
    signs as it does (+, -, +); ``weak30`` draws random signs; ``kurtotic3``
    (:data:`KURTOTIC_DESIGNS`) draws its genes among the
    :data:`KURTOTIC_SHARE` of the genes with the largest excess kurtosis.
    """
    k, size = {**WEAK_DESIGNS, **KURTOTIC_DESIGNS, **CONTRAST_DESIGNS}[design]
    if design in CONTRAST_DESIGNS:
        return _contrast_outcome(X, k // 2, size, rng, design.endswith("_sd1"))
    pool = np.arange(X.shape[1])
    if design in KURTOTIC_DESIGNS:
        kurt = stats.kurtosis(X, axis=0)
        top = max(k, int(np.ceil(KURTOTIC_SHARE * X.shape[1])))
        pool = np.sort(np.argsort(-kurt, kind="stable")[:top])
    genes = pool[rng.choice(pool.size, k, replace=False)]
    if k == 3:
        beta = size * np.array([1.0, -1.0, 1.0])
    else:
        beta = size * rng.choice([-1.0, 1.0], k)
    return _exponential_outcome(X[:, genes], beta, rng)


def _exponential_outcome(
    Z: np.ndarray, beta: np.ndarray, rng: np.random.Generator, unit_sd: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Exponential times of the standardized ``Z @ beta``, about 25 % censored.

    With ``unit_sd`` the linear predictor is rescaled to standard deviation 1.
    """
    eta = (Z - Z.mean(axis=0)) / Z.std(axis=0, ddof=1) @ beta
    if unit_sd:
        eta = eta / eta.std(ddof=1)
    t = rng.exponential(np.exp(-eta))
    cens = rng.exponential(np.exp(-eta).mean() / 0.3 * 0.7, t.size)
    return np.minimum(t, cens), t <= cens


def _contrast_outcome(
    X: np.ndarray,
    pairs: int,
    size: float,
    rng: np.random.Generator,
    unit_sd: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """``contrast2``: pairs of a random gene and its most correlated gene.

    The second gene's coefficient is ``-size`` times the sign of the pair's
    correlation, so that each gene's marginal association is attenuated.
    """
    sd = X.std(axis=0)
    pool = np.flatnonzero(sd > 0)
    Xs = (X[:, pool] - X[:, pool].mean(axis=0)) / sd[pool]
    genes, beta = [], []
    for first in rng.choice(pool.size, pairs, replace=False):
        r = Xs.T @ Xs[:, first] / X.shape[0]
        r[first] = 0.0
        second = int(np.argmax(np.abs(r)))
        genes += [pool[first], pool[second]]
        beta += [size, -size * np.sign(r[second])]
    return _exponential_outcome(X[:, genes], np.asarray(beta), rng, unit_sd)


def cohort_x(out: str, draws: int = 20, seed: int = 4) -> None:
    """Outcomes simulated on the cohorts' own genes (the seventh hypothesis)."""
    from bench_cohorts import load
    from bench_sparse_cohorts import COHORTS
    from sklearn.model_selection import StratifiedShuffleSplit

    done = pd.read_csv(out) if os.path.exists(out) else pd.DataFrame()
    keys = set() if done.empty else set(zip(done.cohort, done.draw, strict=True))
    for i in range(draws):
        for c, name in enumerate(COHORTS):
            if (name, i) in keys:
                continue
            X = load(name)[0]
            rng = np.random.default_rng(1000 * (c + 1) + i)
            time_, event = weak_outcome(X, "strong3", rng)
            parts = StratifiedShuffleSplit(draws, test_size=0.3, random_state=seed)
            train, test = list(parts.split(X, event))[i]
            rows = held_out(
                X,
                (time_, event),
                (train, test),
                seed,
                ("VC-PCR today", {"lam_ratios": STUDY_RATIOS, **PREVIOUS_DEFAULT}),
            )
            frame = pd.DataFrame([{"cohort": name, "draw": i, **r} for r in rows])
            frame.to_csv(out, mode="a", header=not os.path.exists(out), index=False)
            print(name, i, frame["C"].round(3).tolist(), flush=True)


def cohort_x_weak(
    out: str,
    draws: int = 10,
    seed: int = 4,
    first: int = 0,
    designs: tuple[str, ...] = tuple(WEAK_DESIGNS),
    variants: tuple[tuple[str, dict], ...] = (("VC-PCR default", {}),),
) -> None:
    """The eighth (and ninth) hypothesis: outcomes on the cohorts' genes.

    Draws ``first`` to ``draws - 1`` (two processes can share the draws,
    each with its own CSV; the table reads them concatenated) of
    ``designs``.
    """
    from bench_cohorts import load
    from bench_sparse_cohorts import COHORTS
    from sklearn.model_selection import StratifiedShuffleSplit

    done = pd.read_csv(out) if os.path.exists(out) else pd.DataFrame()
    keys = (
        set()
        if done.empty
        else set(zip(done.design, done.cohort, done.draw, strict=True))
    )
    for i in range(first, draws):
        for c, name in enumerate(COHORTS):
            X = load(name)[0]
            for design in designs:
                if (design, name, i) in keys:
                    continue
                rng = np.random.default_rng(1000 * (c + 1) + i)  # the seventh's
                time_, event = weak_outcome(X, design, rng)
                parts = StratifiedShuffleSplit(20, test_size=0.3, random_state=seed)
                train, test = list(parts.split(X, event))[i]
                rows = held_out(X, (time_, event), (train, test), seed, *variants)
                frame = pd.DataFrame(
                    [{"design": design, "cohort": name, "draw": i, **r} for r in rows]
                )
                header = not os.path.exists(out)
                frame.to_csv(out, mode="a", header=header, index=False)
                print(design, name, i, frame["C"].round(3).tolist(), flush=True)


def cohort_x_weak_table(*outs: str) -> str:
    """Per design: C and genes by cohort; default - Coxnet and its change.

    ``outs``: the CSVs of the runs (the eighth's, and the ninth's, whose
    designs are compared with the eighth's ``strong3``).
    """
    df = pd.concat([pd.read_csv(o) for o in outs if os.path.exists(o)])
    wide = df.pivot_table(
        index=["cohort", "draw"], columns=["design", "method"], values="C"
    )
    designs = list(dict.fromkeys(df["design"]))
    gap = {d: wide[(d, "VC-PCR default")] - wide[(d, "Coxnet")] for d in designs}
    pairs = {f"default - Coxnet, {d}": g for d, g in gap.items()}
    for d in designs:
        if d != "strong3" and "strong3" in gap:
            pairs[f"gap on {d} - gap on strong3"] = gap[d] - gap["strong3"]
    lines = [
        df.groupby(["design", "cohort", "method"], sort=False)[["C", "genes"]]
        .agg({"C": "mean", "genes": "median"})
        .round(3)
        .to_string()
    ]
    for label, d in pairs.items():
        frame = per_cohort(d.dropna()).round(4)
        lines.append(f"\n{label}, held-out C (95 % interval)\n{frame.to_string()}")
    return "\n".join(lines)


#: The decomposition's methods, in the order of its table.
DECOMPOSE = (
    "VC-PCR default",
    "Coxnet",
    "Coxnet on VC-PCR's genes",
    "Coxnet on VC-PCR's screen",
    "Coxnet, standardized",
    "weights' model (enet 0.05)",
)


def decompose(out: str, splits: int = 20, seed: int = 10) -> None:
    """Which part of VC-PCR loses C on the real cohorts (resumable)."""
    from bench_cohorts import load
    from bench_sparse_cohorts import COHORTS
    from sklearn.model_selection import StratifiedShuffleSplit

    done = pd.read_csv(out) if os.path.exists(out) else pd.DataFrame()
    keys = set() if done.empty else set(zip(done.cohort, done.split, strict=True))
    data = {name: load(name) for name in COHORTS}
    for k in range(splits):  # every cohort's split k, then k + 1
        for name, (X, time_, event) in data.items():
            if (name, k) in keys:
                continue
            parts = StratifiedShuffleSplit(splits, test_size=0.3, random_state=seed)
            train, test = list(parts.split(X, event))[k]
            folds = list(
                StratifiedKFold(5, shuffle=True, random_state=seed).split(
                    train, event[train]
                )
            )
            y = Surv.from_arrays(event[train], time_[train])
            sd = X[train].std(axis=0)
            sd[sd == 0] = 1.0
            fits = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cv = VCPCRCV(family="cox", cv=folds, random_state=seed)
                y2 = np.column_stack([time_[train], event[train]])
                vc = cv.fit(X[train], y2).best_estimator_
                fits.append((vc.predict(X[test]), np.count_nonzero(vc.coef_)))
                for cols, scale, l1 in (
                    (np.arange(X.shape[1]), 1.0, 0.5),
                    (np.flatnonzero(vc.coef_), 1.0, 0.5),
                    (np.flatnonzero(vc.weights_), 1.0, 0.5),
                    (np.arange(X.shape[1]), sd, 0.5),
                    (np.arange(X.shape[1]), sd, 0.05),
                ):
                    if cols.size == 0:  # the empty model
                        fits.append((np.zeros(test.size), 0))
                        continue
                    Z = X / scale
                    net, alpha = coxnet(Z[train][:, cols], y, l1, folds)
                    risk = net.predict(Z[test][:, cols], alpha=alpha)
                    fits.append((risk, np.count_nonzero(net.coef_[:, -1])))
            frame = pd.DataFrame(
                [
                    {
                        "cohort": name,
                        "split": k,
                        "method": method,
                        "C": concordance_index(time_[test], -risk, event[test]),
                        "genes": int(n),
                    }
                    for method, (risk, n) in zip(DECOMPOSE, fits, strict=True)
                ]
            )
            frame.to_csv(out, mode="a", header=not os.path.exists(out), index=False)
            print(name, k, frame["C"].round(3).tolist(), flush=True)


def decompose_table(out: str) -> str:
    """Per cohort: mean C and median genes; the decomposition's differences."""
    df = pd.read_csv(out)
    wide = df.pivot_table(index=["cohort", "split"], columns="method", values="C")
    means = df.pivot_table(index="cohort", columns="method", values="C")[
        list(DECOMPOSE)
    ]
    genes = df.pivot_table(
        index="cohort", columns="method", values="genes", aggfunc="median"
    )[list(DECOMPOSE)]
    vc, net = wide["VC-PCR default"], wide["Coxnet"]
    on_genes = wide["Coxnet on VC-PCR's genes"]
    pairs = {
        "VC-PCR - Coxnet (the gap)": vc - net,
        "Coxnet on VC-PCR's genes - Coxnet (the choice of genes)": on_genes - net,
        "VC-PCR - Coxnet on its genes (the model on them)": vc - on_genes,
        "Coxnet on the screen - Coxnet (the screen)": wide[DECOMPOSE[3]] - net,
        "standardized Coxnet - Coxnet (scale)": wide[DECOMPOSE[4]] - net,
        "weights' model - Coxnet": wide[DECOMPOSE[5]] - net,
    }
    lines = [
        f"held-out C, mean per cohort\n{means.round(3).to_string()}",
        f"\ngenes, median per cohort\n{genes.to_string()}",
    ]
    for label, d in pairs.items():
        frame = per_cohort(d).round(4)
        lines.append(f"\n{label}, held-out C (95 % interval)\n{frame.to_string()}")
    return "\n".join(lines)


def contrast_table(*outs: str) -> str:
    """The tenth hypothesis: default - Coxnet and lasso weights - default."""
    df = pd.concat([pd.read_csv(o) for o in outs if os.path.exists(o)])
    wide = df.pivot_table(index=["cohort", "draw"], columns="method", values="C")
    lines = [
        df.groupby(["cohort", "method"])[["C", "genes"]]
        .agg({"C": "mean", "genes": "median"})
        .round(3)
        .to_string()
    ]
    pairs = {
        "default - Coxnet": wide["VC-PCR default"] - wide["Coxnet"],
        "lasso weights - default": wide["VC-PCR lasso weights"]
        - wide["VC-PCR default"],
        "lasso weights - Coxnet": wide["VC-PCR lasso weights"] - wide["Coxnet"],
    }
    for label, d in pairs.items():
        n, mean, lo, hi = t_interval(d.dropna())
        lines.append(
            f"{label}, held-out C: {mean:+.4f} [{lo:+.4f}, {hi:+.4f}] (n = {n})"
        )
    return "\n".join(lines)


def cohort_x_table(out: str) -> str:
    """Per cohort and averaged: C, genes and today's default - Coxnet."""
    df = pd.read_csv(out)
    wide = df.pivot_table(index=["cohort", "draw"], columns="method", values="C")
    frame = per_cohort(wide["VC-PCR today"] - wide["Coxnet"]).round(4)
    summary = (
        df.groupby(["cohort", "method"])[["C", "genes"]]
        .agg({"C": "mean", "genes": "median"})
        .round(3)
    )
    return (
        f"{summary.to_string()}\n\nVC-PCR today - Coxnet, held-out C "
        f"(95 % interval)\n{frame.to_string()}"
    )


def scale_table(out: str, fifth: str) -> str:
    """Paired differences of the scale diagnostic, per cohort and averaged."""
    df = pd.read_csv(out)
    today = pd.read_csv(fifth)
    today = today[today.method == "VC-PCR today"][["cohort", "split", "C"]]
    wide = df.pivot_table(index=["cohort", "split"], columns="method", values="C")
    wide = wide.join(today.set_index(["cohort", "split"])["C"].rename("today"))
    pairs = {
        "Coxnet - Coxnet, standardized genes": (
            "Coxnet",
            "Coxnet, standardized genes",
        ),
        "VC-PCR today - Coxnet": ("today", "Coxnet"),
        "VC-PCR today - Coxnet, standardized genes": (
            "today",
            "Coxnet, standardized genes",
        ),
    }
    lines = [
        df.groupby(["cohort", "method"])[["C", "genes"]]
        .agg({"C": "mean", "genes": "median"})
        .round(3)
        .to_string()
    ]
    for label, (a, b) in pairs.items():
        frame = per_cohort((wide[a] - wide[b]).dropna()).round(4)
        frame = frame[["mean", "lo", "hi"]]
        lines.append(f"\n{label}, held-out C (95 % interval)\n{frame.to_string()}")
    return "\n".join(lines)


def table(df: pd.DataFrame) -> str:
    out = []
    for design, part in df.groupby("design", sort=False):
        g = part.groupby("method", sort=False)
        summary = pd.DataFrame(
            {
                "data sets": g.size(),
                "held-out C": g["C"].mean(),
                "median genes": g["genes"].median(),
            }
        ).round(3)
        wide = part.pivot_table(index="seed", columns="method", values="C")
        lines = []
        for method in [m for m in METHODS[:-1] if m in wide]:
            _, mean, lo, hi = t_interval((wide[method] - wide["Coxnet"]).dropna())
            lines.append(f"{method} - Coxnet: {mean:+.4f} [{lo:+.4f}, {hi:+.4f}]")
        out.append(f"\n### {design}\n\n{summary.to_string()}\n\n" + "\n".join(lines))
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="data sets per design")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "c_gap.csv"))
    parser.add_argument("--table", action="store_true", help="only print the table")
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=DESIGNS)
    parser.add_argument(
        "--cohort-scale",
        action="store_true",
        help="the fifth hypothesis (default --out: results/c_gap_scale.csv)",
    )
    parser.add_argument(
        "--cohort-x",
        action="store_true",
        help="the seventh hypothesis (default --out: results/c_gap_cohort_x.csv)",
    )
    parser.add_argument(
        "--cohort-x-weak",
        action="store_true",
        help="the eighth hypothesis (default --out: results/c_gap_cohort_weak.csv)",
    )
    parser.add_argument(
        "--cohort-x-kurtotic",
        action="store_true",
        help="the ninth hypothesis (default --out: results/c_gap_cohort_kurtotic.csv)",
    )
    parser.add_argument(
        "--cohort-x-contrast",
        action="store_true",
        help="the tenth hypothesis (default --out: results/c_gap_cohort_contrast.csv)",
    )
    parser.add_argument(
        "--sd1",
        action="store_true",
        help="--cohort-x-contrast: the design contrast2_sd1 (default --out: "
        "results/c_gap_cohort_contrast_sd1.csv)",
    )
    parser.add_argument(
        "--decompose",
        action="store_true",
        help="the decomposition on the cohorts (default --out: "
        "results/c_gap_decompose.csv)",
    )
    parser.add_argument(
        "--draws", type=int, default=10, help="draws per cohort (--cohort-x-weak)"
    )
    parser.add_argument(
        "--first-draw", type=int, default=0, help="the first draw (--cohort-x-weak)"
    )
    args = parser.parse_args()
    fifth = os.path.join(HERE, "results", "sparse_cohorts_fifth.csv")
    weak_csv = args.out.replace("c_gap.csv", "c_gap_cohort_weak.csv")
    cohort_runs = {  # flag: (its CSV, run, table)
        "cohort_x_weak": (
            "c_gap_cohort_weak.csv",
            lambda out: cohort_x_weak(out, args.draws, first=args.first_draw),
            cohort_x_weak_table,
        ),
        "cohort_x_kurtotic": (
            "c_gap_cohort_kurtotic.csv",
            lambda out: cohort_x_weak(
                out, args.draws, first=args.first_draw, designs=tuple(KURTOTIC_DESIGNS)
            ),
            lambda out: cohort_x_weak_table(weak_csv, out),
        ),
        "cohort_x_contrast": (
            "c_gap_cohort_contrast_sd1.csv"
            if args.sd1
            else "c_gap_cohort_contrast.csv",
            lambda out: cohort_x_weak(
                out,
                args.draws,
                first=args.first_draw,
                designs=("contrast2_sd1",) if args.sd1 else ("contrast2",),
                variants=(
                    ("VC-PCR default", {}),
                    ("VC-PCR lasso weights", {"weights": "lasso"}),
                ),
            ),
            contrast_table,
        ),
        "cohort_x": ("c_gap_cohort_x.csv", cohort_x, cohort_x_table),
        "decompose": ("c_gap_decompose.csv", decompose, decompose_table),
        "cohort_scale": (
            "c_gap_scale.csv",
            cohort_scale,
            lambda out: scale_table(out, fifth),
        ),
    }
    for flag, (name, run, show) in cohort_runs.items():
        if getattr(args, flag):
            out = args.out.replace("c_gap.csv", name)
            if not args.table:
                run(out)
            print(show(out))
            return
    if not args.table:
        done = pd.read_csv(args.out) if os.path.exists(args.out) else pd.DataFrame()
        keys = set() if done.empty else set(zip(done.design, done.seed, strict=True))
        for k in range(args.n):
            for design in args.designs:
                if (design, FIRST_SEED + k) in keys:
                    continue
                rows = pd.DataFrame(one(design, FIRST_SEED + k))
                header = not os.path.exists(args.out)
                rows.to_csv(args.out, mode="a", header=header, index=False)
                print(design, FIRST_SEED + k, rows["C"].round(3).tolist(), flush=True)
    print(table(pd.read_csv(args.out)))


if __name__ == "__main__":
    main()
