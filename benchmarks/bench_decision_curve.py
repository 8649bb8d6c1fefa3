"""Benchmark: coverage of ``decision_curve``'s bootstrap intervals.

Run (seeded, one core)::

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_decision_curve.py \
        > benchmarks/results/decision_curve_coverage.txt

Data (data set ``k`` seeded ``9000 + k``; ``--reps`` of them per outcome):
``n = 200`` rows, ``x ~ N(0, 1)``, and a fixed, miscalibrated model (its
risks are a function of ``x`` that is not the truth):

- binary: ``P(y = 1 | x) = expit(-1 + 1.2 x)``, risk ``expit(-0.8 + x)``;
- survival: exponential event times with hazard ``0.2 exp(0.8 x)``,
  uniform censoring on (0, 8), horizon 3; risk by the horizon
  ``1 - exp(-0.25 exp(0.6 x) 3)``.

The true net benefit at ``p_t`` is ``E[1(r >= p_t) (F(x) - (1 - F(x)) p_t /
(1 - p_t))]`` with ``F(x)`` the true event probability (by the horizon),
integrated over ``x`` by quadrature (the risk is increasing in ``x``, so the
treated are ``x >= x_0``). Per data set, ``decision_curve(..., n_bootstrap=200,
alpha=0.05)`` at thresholds 0.1, 0.2, 0.3, 0.5; a threshold's interval covers
when ``ci_low <= truth <= ci_high``. Prints the coverage per outcome and
threshold and pooled, with the Clopper-Pearson 95 % interval of each rate.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import integrate, optimize, stats
from scipy.special import expit

from vcpcr.validation import decision_curve

THRESHOLDS = np.array([0.1, 0.2, 0.3, 0.5])
N, HORIZON = 200, 3.0


def binary_truth_risk(x):
    return expit(-1 + 1.2 * x), expit(-0.8 + x)


def survival_truth_risk(x):
    return (
        1 - np.exp(-0.2 * np.exp(0.8 * x) * HORIZON),
        1 - np.exp(-0.25 * np.exp(0.6 * x) * HORIZON),
    )


def true_net_benefit(truth_risk, pt):
    x0 = optimize.brentq(lambda x: truth_risk(x)[1] - pt, -10, 10, xtol=1e-14)
    w = pt / (1 - pt)

    def integrand(x):
        f = truth_risk(x)[0]
        return (f - (1 - f) * w) * stats.norm.pdf(x)

    return integrate.quad(integrand, x0, np.inf, epsabs=1e-12)[0]


def draw(kind, rng):
    x = rng.normal(size=N)
    if kind == "binary":
        p, r = binary_truth_risk(x)
        return (rng.uniform(size=N) < p).astype(int), r
    _, r = survival_truth_risk(x)
    t = rng.exponential(1 / (0.2 * np.exp(0.8 * x)))
    c = rng.uniform(0, 8, N)
    return np.column_stack([np.minimum(t, c), t <= c]), r


def clopper_pearson(k, n):
    lo = stats.beta.ppf(0.025, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return lo, hi


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args()
    print(
        f"decision_curve bootstrap coverage, nominal 95 %; n = {N}, "
        f"{args.reps} data sets per outcome, n_bootstrap = 200"
    )
    print(
        f"{'outcome':9s} {'p_t':>5s} {'true NB':>8s} {'coverage':>9s} "
        f"{'95% CI':>17s} {'mean width':>10s}"
    )
    for kind, truth_risk in (
        ("binary", binary_truth_risk),
        ("survival", survival_truth_risk),
    ):
        truth = np.array([true_net_benefit(truth_risk, pt) for pt in THRESHOLDS])
        covered = np.zeros((args.reps, THRESHOLDS.size), dtype=bool)
        width = np.zeros((args.reps, THRESHOLDS.size))
        for k in range(args.reps):
            rng = np.random.default_rng(9000 + k)
            y, r = draw(kind, rng)
            dc = decision_curve(
                y,
                r,
                horizon=HORIZON if kind == "survival" else None,
                thresholds=THRESHOLDS,
                n_bootstrap=200,
                random_state=rng,
            )
            m = dc[dc["model"] == "model"]
            lo, hi = m["ci_low"].to_numpy(), m["ci_high"].to_numpy()
            covered[k] = (lo <= truth) & (truth <= hi)
            width[k] = hi - lo
        for j, pt in enumerate(THRESHOLDS):
            c = int(covered[:, j].sum())
            lo, hi = clopper_pearson(c, args.reps)
            print(
                f"{kind:9s} {pt:5.2f} {truth[j]:8.4f} {c / args.reps:9.3f} "
                f"[{lo:.3f}, {hi:.3f}] {width[:, j].mean():10.4f}"
            )
        c, total = int(covered.sum()), covered.size
        lo, hi = clopper_pearson(c, total)
        print(f"{kind:9s} {'all':>5s} {'':8s} {c / total:9.3f} [{lo:.3f}, {hi:.3f}]")


if __name__ == "__main__":
    main()
