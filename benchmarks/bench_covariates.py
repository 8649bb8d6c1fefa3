"""Adjusting for a clinical covariate: a strong covariate, a weak gene signal.

Simulation (seeded): age ~ N(60, 10); 200 genes; block A (genes a0..a9)
follows age (latent 0.8 * age_std + 0.6 * noise) but has no effect given age;
block B (genes b0..b9) has a weak effect of its own; 180 noise genes. The
outcome is gaussian ``y = age_std + 0.5 * f_B + e`` or Cox with log-hazard
``age_std + 0.5 * f_B`` (about 30% censoring). Three fits per data set on 150
training rows, each ``VCPCRCV(n_clusters=3)`` tuning ``lam_ratio`` in (0.3,
0.5, 0.7, 0.9, 1) (1 selects no gene) and the default ``deltas`` by 3-fold
CV:

* ``genes only``: age left out;
* ``age clustered``: age as one more column of X (clustered, penalized);
* ``adjusted``: ``covariates=["age"]``.

Reported, mean over the data sets: held-out MSE (gaussian) or Harrell's C
(cox) on 2000 test rows, the mean raw-scale ``coef_`` of the genes of block A
(confounded by age: 0 is right) and of block B (its effect 0.5 spread over
10 genes: about 0.05 each), the share of the selected genes from A and B,
whether age was selected (as a clustered variable) and the chosen lam_ratio.

Run:  python benchmarks/bench_covariates.py [--reps 10]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from vcpcr import VCPCRCV


def simulate(
    n: int, rng: np.random.Generator, family: str
) -> tuple[pd.DataFrame, object]:
    """One data set of the design in the module docstring."""
    age = rng.normal(60.0, 10.0, n)
    a = (age - 60.0) / 10.0
    f_a = 0.8 * a + 0.6 * rng.normal(size=n)
    f_b = rng.normal(size=n)
    block_a = f_a[:, None] + 0.7 * rng.normal(size=(n, 10))
    block_b = f_b[:, None] + 0.7 * rng.normal(size=(n, 10))
    noise = rng.normal(size=(n, 180))
    names = (
        [f"a{j}" for j in range(10)]
        + [f"b{j}" for j in range(10)]
        + [f"n{j}" for j in range(180)]
    )
    X = pd.DataFrame(np.hstack([block_a, block_b, noise]), columns=names)
    X.insert(0, "age", age)
    eta = a + 0.5 * f_b
    if family == "gaussian":
        return X, eta + rng.normal(size=n)
    time = rng.exponential(np.exp(-eta))
    censor = rng.exponential(2.3 * np.median(time), n)
    return X, np.column_stack([np.minimum(time, censor), time <= censor])


def held_out(model: VCPCRCV, X: pd.DataFrame, y: object, family: str) -> float:
    """MSE (gaussian) or Harrell's C (cox) on the test rows."""
    if family == "gaussian":
        return float(np.mean((np.asarray(y) - model.predict(X)) ** 2))
    return float(model.score(X, y))


def one_rep(family: str, seed: int) -> list[dict[str, object]]:
    """The three fits on one data set."""
    rng = np.random.default_rng(seed)
    Xtr, ytr = simulate(150, rng, family)
    Xte, yte = simulate(2000, rng, family)
    genes = [c for c in Xtr.columns if c != "age"]
    fits = {
        "genes only": (genes, None),
        "age clustered": (list(Xtr.columns), None),
        "adjusted": (list(Xtr.columns), ["age"]),
    }
    rows = []
    for label, (cols, covariates) in fits.items():
        model = VCPCRCV(
            (3,),
            family=family,
            lam_ratios=[0.3, 0.5, 0.7, 0.9, 1.0],
            n_init=2,
            cv=3,
            random_state=seed,
            covariates=covariates,
            latent="paper",  # the previous default, with which the study ran
            scoring=None,
            selection="min",
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(Xtr[cols], ytr)
        best = model.best_estimator_
        coef = pd.Series(best.coef_, index=cols)
        selected = best.membership_.index[best.labels_ >= 0]
        n_sel = max(len(selected), 1)
        rows.append(
            {
                "family": family,
                "fit": label,
                "held-out": held_out(model, Xte[cols], yte, family),
                "coef A": coef[[f"a{j}" for j in range(10)]].mean(),
                "coef B": coef[[f"b{j}" for j in range(10)]].mean(),
                "share A": sum(s.startswith("a") for s in selected) / n_sel,
                "share B": sum(s.startswith("b") for s in selected) / n_sel,
                "age selected": "age" in selected,
                "lam_ratio": model.best_params_["lam_ratio"],
            }
        )
    return rows


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    rows = [
        row
        for family in ("gaussian", "cox")
        for rep in range(args.reps)
        for row in one_rep(family, 1000 + rep)
    ]
    table = pd.DataFrame(rows).groupby(["family", "fit"], sort=False).mean()
    print(f"mean over {args.reps} data sets (held-out: MSE for gaussian, C for cox)")
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
