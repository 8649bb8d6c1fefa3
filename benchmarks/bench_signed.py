"""Benchmark (#27, fourth study): signed latent variables, and the sparse rule on them.

Run (seeded, one core, resumable: every data set is appended to a CSV
checkpoint as soon as it is done, and a rerun skips what is there)::

    OPENBLAS_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_signed.py [--n 30] [--n-null 100] \\
        [--families cox] [--out FILE] [--table]

**Why.** The paper's step 2 uses ``M = X V``: every selected gene enters its
module's score with a positive sign. Step 1 clusters the *weighted* data
``X W``, so a gene whose weight is negative joins a module of genes with
positive weights when it is *anti*-correlated with them (``w_j cor(u_k,
x_j) > 0``). In ``M = X V`` it then enters with the wrong sign: it cancels
its module's other genes, and its coefficient ``b_j = v_j a_k`` has the
opposite sign of its weight. VC-PCR is therefore not equivariant to
flipping the sign of a column (measuring a gene or its negative), as the
lasso, ridge and Coxnet are. On the paper's designs (every block positively
correlated, one coefficient per block) this never matters; on expression
data, anti-correlated genes in one pathway are common (on a real cohort, a
fitted default's modules of 4-5 genes held genes of both weight signs).
The fix: **signed latent variables** ``M = X S V`` with ``S = diag(sign
w)``: the module score is ``U``'s direction with unweighted magnitudes, and
a flip of column ``j`` flips ``w_j``, leaves ``X W``, ``V`` and ``M``
unchanged and flips ``b_j``: predictions are invariant.

**Designs** (``bench_inference.py``'s, n = 100, p = 200, new seeds 300 on;
1,000 test rows drawn with the training rows):

- ``signal``: the paper's configuration 1 as in ``bench_sparse_default.py``;
- ``flipped``: the same data with the sign of a random half of the columns
  flipped (seeded; the outcome is unchanged);
- ``weak_flipped``: configuration 1 with half the coefficients (gaussian SNR
  0.5), flipped;
- ``null_flipped``: the global null (``y`` independent of 20 blocks of 10
  genes at correlation 0.6), flipped; seeds 400 on, 100 per family.

Per data set and latent (``paper``, ``signed``), two 5-fold CVs with the same
folds and seed (on the 10-point ``lam_ratio`` grid the studies ran with,
pinned: ``STUDY_RATIOS``): today's default scoring (``min``), and the
cross-calibrated pooled deviance read by the paired gate at ``c`` = 1, 1.5
and 2 standard errors of the difference (the third study's rules), refitted
with the chosen point's calibration slope as ``shrinkage``. Reported: genes
selected, true positives (of 20), null genes selected (of 160), and the
held-out score on the test rows: R^2 (gaussian), AUC (binomial), Harrell's C
(cox).

**The rule, stated and committed before this benchmark ran:**

A. *Signed latent variables become VC-PCR's definition* (every family, every
   estimator) when, with today's default tuning, (A1) on ``flipped`` the
   mean paired held-out difference (signed - paper) is positive in every
   family, (A2) on ``signal`` it is above -0.005 in every family, and (A3)
   on the cohorts (``bench_sparse_cohorts.py --signed --splits 20 --seed
   3``, a split seed no earlier study used) today's default with signed
   latent variables against today's: average C difference with a 95 % lower
   bound above -0.01 and average IBS difference with a 95 % upper bound
   below +0.005. Otherwise ``latent="signed"`` is an option only.
B. *Only if A holds*, the sparse default is re-tested on signed latent
   variables: ``c`` is the smallest of 1, 1.5, 2 whose paired gate chooses
   at most 3 genes on at least 85 % of the 100 ``null_flipped`` sets of
   every family, and it becomes ``VCPCRCV``'s default (pooled deviance,
   paired gate at ``c``, refit shrunk by the calibration slope) when the
   same cohort run meets the third study's four criteria: (a) average IBS
   difference from Coxnet with a 95 % upper bound below +0.005, (b) median
   genes over all splits at most twice Coxnet's, (c) average C difference
   from Coxnet at most 0.01 below the *shipped* default's (paper latent
   variables, Harrell's C, best point) and (d) genes selected on more than
   half of the splits of gse3143 and of gse4335. The C non-inferiority
   margin against Coxnet (-0.01) is reported either way.

**Outcome** (``docs/tuning.md``, "The fourth study"): A1 held; A2 failed
(binomial, -0.008) and A3 failed on the IBS (+0.008 [0.003, 0.013]), so B
was not evaluated. The ``null_flipped`` sets, needed by B only, were stopped
at 30 per family and latent (``--latents`` restricts a rerun to one latent).

**The fifth study, stated and committed before its runs** (the null sets
31-100 of ``null_flipped`` with ``--latents signed``, and
``bench_sparse_cohorts.py --fifth --splits 20 --seed 4``):

C. *B without A.* A failed on two things B does not use: the calibration of
   the *unshrunk* dense refit (B's refit is shrunk by the calibration slope,
   and every shrunk rule of the third and fourth studies had a better IBS
   than Coxnet) and a binomial change of -0.008 at today's dense tuning
   (interval -0.021 to +0.006). So rule B is evaluated on its own, with
   signed latent variables only inside ``VCPCRCV``'s sparse default
   (``VCPCR``'s ``latent`` stays ``"paper"``: the paper's estimator). This
   was decided **after** the fourth study's seed-3 rows of B were seen
   (there, ``c`` = 1 met criteria (a)-(d)); seed 3 therefore does not count
   and seed 4, which no study has used, is the confirmation. Unchanged from
   B: ``c`` is the smallest of 1, 1.5 and 2 whose paired gate chooses at
   most 3 genes on at least 85 % of the 100 ``null_flipped`` sets of every
   family (seeds 400-499, signed latent variables; the 30 already run
   count), and ``VCPCRCV``'s default becomes ``latent="signed",
   scoring="neg_pooled_deviance", selection="paired"`` at that ``c`` (the
   refit shrunk by the chosen point's calibration slope) when seed 4's 120
   splits meet (a) average IBS difference from Coxnet with a 95 % upper
   bound below +0.005, (b) median genes over all splits at most twice
   Coxnet's, (c) average C difference from Coxnet at most 0.01 below the
   shipped default's and (d) genes on more than half of the splits of
   gse3143 and of gse4335. The C non-inferiority margin against Coxnet
   (-0.01) is reported either way; every VC-PCR rule so far misses it.

**Outcome of C** (``docs/tuning.md``, "The fifth study"): on the null sets
``c`` = 1 chose at most 3 genes on 95 %, 95 % and 84 % (cox) of the sets,
so ``c`` = 1.5 (98 % in every family). On seed 4 it passed (a) and (b) and
failed (c) (C 0.0125 below today's default) and (d) (genes on 40 % of the
gse3143 splits): the default is unchanged.

**The sixth study, stated and committed before its runs** (``--sixth``: 200
new ``null_flipped`` sets per family, seeds 500-699, signed latent
variables, the pooled deviance only; ``bench_sparse_cohorts.py --fifth
--splits 20 --seed 5 --out sparse_cohorts_sixth.csv``; seed 5 is new):

D. *The issue's null target, on fresh data, for the one candidate that has
   kept the cohorts' signal.* Across five studies every rule was either
   empty on noise and blind on the weak cohorts (``c`` >= 1.5) or the
   reverse (today's default, empty on 13 % of the cox null sets), except
   the signed paired gate at ``c`` = 1, refitted shrunk: on seeds 3 and 4
   its C equalled today's default's (-0.030 and -0.036 from Coxnet against
   -0.031 and -0.037), its IBS beat Coxnet's (-0.014, -0.015), with 6.5-10
   genes, genes on 75-95 % of the gse3143 splits, and on 95 %, 95 % and 84 %
   of the null sets. The earlier rules asked 85 % of null sets, 5 points
   above the issue's own target (80 %), as a cushion for sampling error; cox
   missed it by one set. This candidate was picked **after** the cohorts of
   seeds 3 and 4 were seen, so neither counts, and the cushion is replaced
   by precision: twice as many null sets, none seen before. ``c`` = 1 (the
   signed paired gate, the pooled deviance, the refit shrunk by the chosen
   point's calibration slope) becomes ``VCPCRCV``'s default in every family
   when (N) on the 200 new null sets of each family it chooses at most 3
   genes on at least 80 % of them, and seed 5's 120 splits meet the third
   study's (a) average IBS difference from Coxnet with a 95 % upper bound
   below +0.005, (b) median genes over all splits at most twice Coxnet's,
   (c) average C difference from Coxnet at most 0.01 below today's
   default's and (d) genes on more than half of the splits of gse3143 and of
   gse4335. Reported either way, not deciding: ``c`` = 1.5 and 2 on the
   same sets and splits, the C margin against Coxnet (-0.01; missed by
   every rule so far), the paper's simulation (``bench_sparse_paper.py
   --signed``), ``multi_split`` with the candidate as template
   (``bench_inference.py``) and the cost on 300 x 20,000.

**Outcome of D** (``docs/tuning.md``, "The sixth study"): (N) ``c`` = 1 chose
at most 3 genes on 84 %, 92 % and 86.5 % of the 200 new null sets
(gaussian, binomial, cox); on seed 5 (a) IBS - Coxnet -0.013 [-0.019,
-0.007], (b) 6 median genes against Coxnet's 7.5, (c) C - Coxnet -0.023
against the shipped default's -0.031, (d) genes on 85 % and 95 % of the
gse3143 and gse4335 splits. D holds: it is ``VCPCRCV``'s default. The C
margin against Coxnet (-0.01) is missed (-0.023 [-0.038, -0.007]).
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
from sklearn.metrics import r2_score, roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_inference import ACTIVE, NULL_GENES, PAPER, SCALE
from bench_sparse_cohorts import STUDY_RATIOS

from vcpcr import VCPCR, VCPCRCV
from vcpcr._tuning import selected_index
from vcpcr.simulate import make_block_data

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = ("gaussian", "binomial", "cox")
LATENTS = ("paper", "signed")
GATES = (1.0, 1.5, 2.0)
RULES = ("today/min", *(f"calib/paired-{c:g}" for c in GATES))
ACTIVE_GENES = np.concatenate(ACTIVE)
N_TRAIN, N_TEST = 100, 1000
FIRST_SEED = {"signal": 300, "flipped": 300, "weak_flipped": 300, "null_flipped": 400}


def draw(family: str, design: str, seed: int):
    """Training and test rows of one data set (the test rows ``None`` for the null)."""
    extra: dict = {}
    if design == "null_flipped":
        if family == "gaussian":
            extra["noise_sd"] = 1.0
        data = make_block_data(
            N_TRAIN,
            [10] * 20,
            [0.0] * 20,
            rho=0.6,
            family=family,
            random_state=seed,
            **extra,
        )
    else:
        effect, snr = (0.5, 0.5) if design == "weak_flipped" else (1.0, 2.0)
        if family == "gaussian":
            extra["snr"] = snr
        data = make_block_data(
            N_TRAIN + N_TEST,
            PAPER["block_sizes"],
            [effect * SCALE[family] * c for c in PAPER["coefs"]],
            corr_groups=PAPER["corr_groups"],
            n_noise=PAPER["n_noise"],
            rho=0.6,
            family=family,
            random_state=seed,
            **extra,
        )
    X = data.X.copy()
    if design != "signal":
        flip = np.random.default_rng(seed + 10_000).random(X.shape[1]) < 0.5
        X[:, flip] *= -1
    y = np.column_stack([data.y, data.event]) if family == "cox" else np.asarray(data.y)
    train = slice(0, N_TRAIN)
    test = None if design == "null_flipped" else (X[N_TRAIN:], y[N_TRAIN:])
    return X[train], y[train], test


def held_out(model, family: str, test) -> float:
    X, y = test
    if family == "gaussian":
        return float(r2_score(y, model.predict(X)))
    if family == "binomial":
        return float(roc_auc_score(y, model.predict_proba(X)[:, 1]))
    risk = model.predict(X)
    return float(concordance_index(y[:, 0], -risk, y[:, 1]))


def one(
    family: str, design: str, seed: int, latent: str, rules: tuple[str, ...] = RULES
) -> list[dict]:
    X, y, test = draw(family, design, seed)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = {
            "family": family,
            "lam_ratios": STUDY_RATIOS,
            "refit": False,
            "random_state": seed,
        }
        if "today/min" in rules:
            today = VCPCRCV(latent=latent, scoring=None, **kw).fit(X, y)
        pooled = VCPCRCV(latent=latent, scoring="neg_pooled_deviance", **kw).fit(X, y)
        for rule in rules:
            cv = today if rule == "today/min" else pooled
            selection, _, c = rule.split("/")[1].partition("-")
            i = selected_index(cv.cv_results_, selection, 5, n_se=float(c or 1))
            params = dict(cv.cv_results_["params"].iloc[i])
            if rule != "today/min":
                params["shrinkage"] = float(cv.cv_results_["calibration_slope"].iloc[i])
            model = VCPCR(family=family, latent=latent, random_state=seed, **params)
            model.fit(X, y)
            sel = np.flatnonzero(model.coef_ != 0)
            rows.append(
                {
                    "family": family,
                    "design": design,
                    "seed": seed,
                    "latent": latent,
                    "rule": rule,
                    "genes": sel.size,
                    "true_pos": int(np.isin(sel, ACTIVE_GENES).sum()),
                    "null_sel": int(np.isin(sel, NULL_GENES).sum()),
                    "score": np.nan if test is None else held_out(model, family, test),
                }
            )
    return rows


def paired(df: pd.DataFrame) -> pd.DataFrame:
    """Signed - paper held-out score per family, design and rule (95 % t interval)."""
    wide = df.pivot_table(
        index=["family", "design", "rule", "seed"], columns="latent", values="score"
    ).dropna()
    diff = (wide["signed"] - wide["paper"]).groupby(level=[0, 1, 2], sort=False)
    out = diff.agg(["mean", "std", "count"])
    half = stats.t.ppf(0.975, out["count"] - 1) * out["std"] / np.sqrt(out["count"])
    out["lo"], out["hi"] = out["mean"] - half, out["mean"] + half
    return out[["mean", "lo", "hi", "count"]]


def table(df: pd.DataFrame) -> str:
    out = []
    for (family, design), part in df.groupby(["family", "design"], sort=False):
        g = part.groupby(["latent", "rule"], sort=False)
        cols = {
            "data sets": g.size(),
            "<= 3 genes": g["genes"].apply(lambda s: (s <= 3).mean()),
            "median genes": g["genes"].median(),
        }
        if design != "null_flipped":
            cols["true pos."] = g["true_pos"].mean()
            cols["null sel."] = g["null_sel"].mean()
            cols["held-out"] = g["score"].mean()
        summary = pd.DataFrame(cols).round(3).to_string()
        out.append(f"\n### {family}, {design}\n\n{summary}")
    scored = df[df.design != "null_flipped"]
    if not scored.empty:
        out.append(
            "\n### signed - paper, held-out score (95 % interval)\n\n"
            + paired(scored).round(4).to_string()
        )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30, help="signal data sets per cell")
    parser.add_argument("--n-null", type=int, default=100, help="null data sets")
    parser.add_argument("--families", nargs="*", default=list(FAMILIES))
    parser.add_argument("--latents", nargs="*", default=list(LATENTS))
    parser.add_argument(
        "--out", default=os.path.join(HERE, "results", "signed_latent.csv")
    )
    parser.add_argument("--table", action="store_true", help="only print the table")
    parser.add_argument(
        "--sixth",
        action="store_true",
        help="the sixth study: 200 new null sets (seeds 500-699), signed, pooled only",
    )
    args = parser.parse_args()
    first_seeds, rules = FIRST_SEED, RULES
    if args.sixth:
        first_seeds, rules = {"null_flipped": 500}, RULES[1:]
        args.n, args.n_null, args.latents = 0, 200, ["signed"]
        if args.out == parser.get_default("out"):
            args.out = os.path.join(HERE, "results", "signed_latent_sixth.csv")
    if not args.table:
        done = pd.read_csv(args.out) if os.path.exists(args.out) else pd.DataFrame()
        keys = (
            set()
            if done.empty
            else set(zip(done.family, done.design, done.seed, done.latent, strict=True))
        )
        for k in range(max(args.n, args.n_null)):
            for family in args.families:
                for design, first in first_seeds.items():
                    if k >= (args.n_null if design == "null_flipped" else args.n):
                        continue
                    for latent in args.latents:
                        if (family, design, first + k, latent) in keys:
                            continue
                        one_set = one(family, design, first + k, latent, rules)
                        rows = pd.DataFrame(one_set)
                        header = not os.path.exists(args.out)
                        rows.to_csv(args.out, mode="a", header=header, index=False)
                        genes = rows["genes"].tolist()
                        print(family, design, first + k, latent, genes, flush=True)
    print(table(pd.read_csv(args.out)))


if __name__ == "__main__":
    main()
