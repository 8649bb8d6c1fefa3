"""Formula costs: the design of ``y ~ .``, and a clinical model's two routes.

First table: the design-matrix build time of ``y ~ .`` on wide numeric data,
vcpcr's fast path (``parse_formula``) against formulaic's own ``model_matrix``
and ``parse_formula`` forced through formulaic (the route taken when the data
has, e.g., one categorical column).

Second table (#24): a Cox ``VCPCR`` on a gse1992-shaped cohort (124 patients,
15,528 genes, clinical columns age, size, er, node) fitted, used to predict and
scored through the two-part formula ``Surv(time, event) ~ age + size + C(er)
+ C(node) | .`` and through ``covariates=`` on the same columns (er and node
as 0/1 dummies), in the same run; the two fits give the same coefficients.

Run: ``python benchmarks/bench_formula.py [--rows 500] [--cols 1000 5000 20000]
[--cohort-rows 124] [--cohort-genes 15528] [--skip-design]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from unittest import mock

import numpy as np
import pandas as pd
from formulaic import model_matrix

import vcpcr._formula as fm
from vcpcr import VCPCR

SLOW_LIMIT = 30.0  # seconds: time formulaic once when a run is slower than this


def make_data(n_rows: int, n_cols: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        rng.normal(size=(n_rows, n_cols)), columns=[f"g{j}" for j in range(n_cols)]
    )
    df.insert(0, "y", rng.normal(size=n_rows))
    return df


def best_time(func: Callable[[], object], repeats: int) -> tuple[float, int]:
    """Best wall time over ``repeats`` runs (one run if the first is slow)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
        if times[-1] > SLOW_LIMIT / repeats:
            break
    return min(times), len(times)


def formulaic_route(df: pd.DataFrame) -> object:
    with mock.patch.object(fm, "_fast_path_columns", return_value=None):
        return fm.parse_formula("y ~ .", df)


TWO_PART = "Surv(time, event) ~ age + size + C(er) + C(node) | ."


def make_cohort(n_rows: int, n_genes: int, seed: int = 0) -> pd.DataFrame:
    """A gse1992-shaped frame: outcome, clinical columns (two categorical), genes."""
    rng = np.random.default_rng(seed)
    genes = rng.normal(size=(n_rows, n_genes))
    risk = genes[:, :20].sum(axis=1) / 5
    df = pd.DataFrame(genes, columns=[f"g{j}" for j in range(n_genes)])
    clinical = pd.DataFrame(
        {
            "time": rng.exponential(np.exp(-risk)),
            "event": rng.integers(0, 2, n_rows) | (rng.uniform(size=n_rows) < 0.3),
            "age": rng.normal(50, 10, n_rows).round(),
            "size": rng.gamma(2.0, 1.0, n_rows),
            "er": rng.choice(["0", "1"], n_rows),
            "node": rng.choice(["0", "1"], n_rows, p=[0.6, 0.4]),
        }
    )
    return pd.concat([clinical, df], axis=1)


def cohort_table(n_rows: int, n_genes: int, repeats: int) -> None:
    """Time fit, predict and score through both routes; print them as a table."""
    df = make_cohort(n_rows, n_genes)
    dummies = {"er": "er_1", "node": "node_1"}
    X = df.drop(columns=["time", "event"]).assign(
        **{new: (df[old] == "1").astype(float) for old, new in dummies.items()}
    )
    X = X.drop(columns=list(dummies))
    y = df[["time", "event"]]
    params = {"n_clusters": 4, "family": "cox", "random_state": 0}
    covariates = ["age", "size", *dummies.values()]
    routes = {
        "covariates=": (
            VCPCR(covariates=covariates, **params),
            (X, y),
            (X,),
            (X, y),
        ),
        "two-part formula": (VCPCR(formula=TWO_PART, **params), (df,), (df,), (df,)),
    }
    times: dict[str, list[float]] = {}
    models = {}
    for name, (model, fit_args, new, scored) in routes.items():
        fit, _ = best_time(lambda: model.fit(*fit_args), repeats)  # noqa: B023
        predict, _ = best_time(lambda: model.predict(*new), repeats)  # noqa: B023
        score, _ = best_time(lambda: model.score(*scored), repeats)  # noqa: B023
        times[name] = [fit, predict, score]
        models[name] = model
    a, b = models["covariates="], models["two-part formula"]
    order = [0, 1, -2, -1]  # age, size, er, node: first in the formula's design
    assert np.allclose(a.coef_[order], b.coef_[:4], rtol=1e-8, atol=0.0)
    assert np.allclose(a.predict(X), b.predict(df), rtol=1e-8, atol=0.0)

    print(
        f"\nCox VCPCR(n_clusters=4) on {n_rows} x {n_genes} genes + age, size, "
        f"er, node (seconds, best of {repeats})\n"
    )
    header = (
        f"{'route':<22} | {'fit':>7} | {'predict':>7} | {'score':>7} | score/predict"
    )
    print(header)
    print("-" * len(header))
    for name, (fit, predict, score) in times.items():
        print(
            f"{name:<22} | {fit:>7.3f} | {predict:>7.3f} | {score:>7.3f} | "
            f"{score / predict:>12.2f}x"
        )
    formula, plain = times["two-part formula"], times["covariates="]
    ratios = [f / c for f, c in zip(formula, plain, strict=True)]
    print(
        f"{'formula / covariates=':<22} | {ratios[0]:>6.2f}x | {ratios[1]:>6.2f}x "
        f"| {ratios[2]:>6.2f}x |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--cols", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--cohort-rows", type=int, default=124)
    parser.add_argument("--cohort-genes", type=int, default=15528)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--skip-design", action="store_true", help="only the cohort table"
    )
    args = parser.parse_args()
    if not args.skip_design:
        design_table(args.rows, args.cols)
    cohort_table(args.cohort_rows, args.cohort_genes, args.repeats)


def design_table(rows: int, cols: list[int]) -> None:
    """Print the design build times of ``y ~ .``."""
    header = (
        f"{'rows':>5} {'cols':>6} | {'fast path':>10} | {'formulaic':>10} "
        f"| {'parse_formula via formulaic':>27} | {'speed-up':>8}"
    )
    print("design build time for 'y ~ .' (seconds, best of runs; [n] = runs)\n")
    print(header)
    print("-" * len(header))
    for n_cols in cols:
        df = make_data(rows, n_cols)
        res = fm.parse_formula("y ~ .", df)
        ref = model_matrix("y ~ .", df).rhs.iloc[:, 1:]  # identical design check
        assert res.spec.model_spec is None
        assert list(res.X.columns) == list(ref.columns)
        assert np.array_equal(res.X.to_numpy(), ref.to_numpy())
        fast, n_fast = best_time(lambda: fm.parse_formula("y ~ .", df), 5)  # noqa: B023
        slow, n_slow = best_time(lambda: model_matrix("y ~ .", df), 3)  # noqa: B023
        route, n_route = best_time(lambda: formulaic_route(df), 3)  # noqa: B023
        print(
            f"{rows:>5} {n_cols:>6} | {fast:>6.3f} [{n_fast}] | "
            f"{slow:>6.2f} [{n_slow}] | {route:>23.2f} [{n_route}] | "
            f"{slow / fast:>7.0f}x"
        )


if __name__ == "__main__":
    main()
