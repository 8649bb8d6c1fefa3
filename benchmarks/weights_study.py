"""Which step-0 weights make VC-PCR as accurate as the paper reports?

The paper's protocol for VC-PCR alone (its section "Experiments", the authors'
``Run_method.R`` and ``05_Calc_test_performance_after_calibration.R``):

* data: :func:`vcpcr.simulate.make_paper_data` (n=50, rho=0.6, p=200),
  configurations 1-3, ``--replicates`` independent draws per configuration
  (seed ``1000 * config + replicate``);
* 10 outer folds; inside each outer training set 5 inner folds; every
  training fold is standardized with its own mean and sample sd (y too), the
  test fold with the training fold's;
* 5 random starts; *each start is its own nested CV*: one random initial
  partition per (start, K), used in every fold (as the authors did);
* ``lam_ratio`` is traced over ``10**linspace(-3, 0, 10)``; for each
  ``lam_ratio``, outer fold and start, ``K`` in {4, 5, 6} and the scheme's
  ``delta`` are chosen by the lowest mean inner-fold MSEP; the outer test
  fold then gives MSEP, model size s, MCC-clustering and MCC-support;
* averages over outer folds, then starts, then replicates; reported at s = 20
  (interpolated along the traced curve, and at the nearest traced point), at
  the highest MCC-clustering and at the minimum mean MSEP.

Step 1 is :func:`vcpcr._path.batched_sos_nmf` (all K x start x delta x
lam_ratio problems of a fold at once, ``lam = lam_ratio * lam_max`` of the
start's own initial partition, as the authors' ``gamma.max``); step 2 is OLS
on ``M = X V`` (batched normal equations; no intercept: the training fold is
centred). Folds, starts and data depend only on (config, replicate), so every
scheme sees the same ones and a scheme's results do not depend on which
other schemes run. Run (about 50 minutes with 2 jobs)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/weights_study.py --replicates 5 \\
        --jobs 2 --out weights_study.csv

``--schemes`` picks a subset of :data:`SCHEMES` (default
:data:`DEFAULT_SCHEMES`); ``--from-csv`` re-prints the tables of a saved
``--out``; ``--screen`` fits the full data of each draw for every delta
without CV (what each weight vector can do, about 2 minutes for 10 draws);
``--quick`` runs 1 replicate of configuration 2 with 2 starts.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from vcpcr._solvers.glmnet import glmnet_weights
from vcpcr._solvers.sos_nmf import batched_sos_nmf, initial_lambda_max
from vcpcr._sos_nmf import random_partition
from vcpcr._weights import SCHEMES as WEIGHT_SCHEMES
from vcpcr.metrics import mcc_clustering, mcc_support
from vcpcr.simulate import make_paper_data

Array = NDArray[np.float64]
WeightsFn = Callable[[Array, Array, np.random.Generator], Array]

RATIOS = 10 ** np.linspace(-3, 0, 10)
KS = (4, 5, 6)
PAPER_RIDGE = 10 ** np.linspace(-4, -2, 10)
PAPER_LASSO = 10 ** np.linspace(-5, np.log10(0.2), 10)  # times max|X'y|/n
ENET_REL = 10 ** np.linspace(-2, np.log10(0.5), 6)  # times the enet's lam_max
BOOST_STEPS = np.array([25.0, 50, 100, 200, 400, 800])
RIDGE_LARGE = 10 ** np.linspace(-2, 2, 5)


class Scheme(NamedTuple):
    """A weight scheme: ``fn(Xs, ys, rng)`` returns one row per delta."""

    fn: WeightsFn
    deltas: Array  # labels of the rows (the grid CV chooses from)
    what: str


def _delta_max(Xs: Array, ys: Array) -> float:
    return float(np.abs(Xs.T @ ys).max() / Xs.shape[0])


def glmnet_scheme(alpha: float, grid: Array, *, order: str = "given") -> WeightsFn:
    """The paper's early-stopped glmnet weights, columns visited in ``order``.

    ``"given"``: the data's column order (the paper); ``"shuffled"``: a
    random permutation; ``"reversed"``; ``"marginal"``: decreasing
    ``|x_j'y|`` (a permutation-equivariant variant).
    """

    def fn(Xs: Array, ys: Array, rng: np.random.Generator) -> Array:
        lams = grid * (_delta_max(Xs, ys) if alpha == 1.0 else 1.0)
        p = Xs.shape[1]
        perm = {
            "given": np.arange(p),
            "shuffled": rng.permutation(p),
            "reversed": np.arange(p)[::-1],
            "marginal": np.argsort(-np.abs(Xs.T @ ys), kind="stable"),
        }[order]
        W = np.empty((lams.size, p))
        W[:, perm] = glmnet_weights(Xs[:, perm], ys, lams, alpha=alpha)
        return W

    return fn


def exact_scheme(method: str, grid: Array) -> WeightsFn:
    """Exact ridge or lasso weights (vcpcr's solvers) on a delta grid."""

    def fn(Xs: Array, ys: Array, rng: np.random.Generator) -> Array:
        return WEIGHT_SCHEMES[method].path(Xs, ys, grid, family="gaussian").coef

    return fn


def enet_scheme(l1_ratio: float, grid: Array) -> WeightsFn:
    """Elastic net ``1/(2n)||y-Xw||^2 + lam (a|w|_1 + (1-a)/2 |w|^2)``.

    ``lam`` runs over ``grid`` times the smallest ``lam`` giving all zeros,
    ``max|X'y| / (n a)``: vcpcr's ``"enet"`` weights with mixing ``a``.
    """

    def fn(Xs: Array, ys: Array, rng: np.random.Generator) -> Array:
        lams = grid * _delta_max(Xs, ys) / l1_ratio
        return (
            WEIGHT_SCHEMES["enet"]
            .with_l1_ratio(l1_ratio)
            .path(Xs, ys, lams, family="gaussian")
            .coef
        )

    return fn


def boosting_scheme(steps: Array, nu: float = 0.1) -> WeightsFn:
    """Componentwise L2 boosting (greedy coordinate descent, step ``nu``).

    The order-free counterpart of early-stopped coordinate descent: each
    step updates the variable most correlated with the residual (Buhlmann and
    Yu 2003); the number of steps is the tuned parameter.
    """

    def fn(Xs: Array, ys: Array, rng: np.random.Generator) -> Array:
        xv = np.einsum("ij,ij->j", Xs, Xs)
        b, r, out = np.zeros(Xs.shape[1]), ys.copy(), {}
        for t in range(1, int(steps.max()) + 1):
            c = Xs.T @ r
            j = int(np.argmax(np.abs(c) / np.sqrt(xv)))
            step = nu * c[j] / xv[j]
            b[j] += step
            r -= step * Xs[:, j]
            if t in steps:
                out[t] = b.copy()
        return np.array([out[int(t)] for t in steps])

    return fn


def marginal(Xs: Array, ys: Array, rng: np.random.Generator) -> Array:
    """Marginal correlations ``X'y/(n-1)`` (ridge as delta -> inf, rescaled)."""
    return (Xs.T @ ys / (Xs.shape[0] - 1))[None, :]


SCHEMES: dict[str, Scheme] = {
    "glmnet_ridge": Scheme(
        glmnet_scheme(0.0, PAPER_RIDGE), PAPER_RIDGE, "paper: early-stopped glmnet"
    ),
    "glmnet_ridge_shuffled": Scheme(
        glmnet_scheme(0.0, PAPER_RIDGE, order="shuffled"),
        PAPER_RIDGE,
        "same, columns in random order",
    ),
    "glmnet_ridge_reversed": Scheme(
        glmnet_scheme(0.0, PAPER_RIDGE, order="reversed"),
        PAPER_RIDGE,
        "same, columns in reverse order",
    ),
    "glmnet_ridge_by_marginal": Scheme(
        glmnet_scheme(0.0, PAPER_RIDGE, order="marginal"),
        PAPER_RIDGE,
        "same, columns by decreasing |x'y|",
    ),
    "glmnet_lasso": Scheme(
        glmnet_scheme(1.0, PAPER_LASSO), PAPER_LASSO, "paper: early-stopped lasso"
    ),
    "ridge_paper_grid": Scheme(
        exact_scheme("ridge", PAPER_RIDGE), PAPER_RIDGE, "exact ridge, 1e-4..1e-2"
    ),
    "ridge_large": Scheme(
        exact_scheme("ridge", RIDGE_LARGE), RIDGE_LARGE, "exact ridge, 1e-2..1e2"
    ),
    "marginal": Scheme(marginal, np.array([np.inf]), "X'y/(n-1)"),
    "lasso": Scheme(enet_scheme(1.0, ENET_REL), ENET_REL, "exact lasso"),
    "enet_0.5": Scheme(enet_scheme(0.5, ENET_REL), ENET_REL, "elastic net a=0.5"),
    "enet_0.1": Scheme(enet_scheme(0.1, ENET_REL), ENET_REL, "elastic net a=0.1"),
    "enet_0.05": Scheme(enet_scheme(0.05, ENET_REL), ENET_REL, "elastic net a=0.05"),
    "enet_0.02": Scheme(enet_scheme(0.02, ENET_REL), ENET_REL, "elastic net a=0.02"),
    "enet_cv_alpha": Scheme(
        lambda Xs, ys, rng: np.vstack(
            [enet_scheme(a, ENET_REL)(Xs, ys, rng) for a in (0.1, 0.02)]
        ),
        np.concatenate([ENET_REL, ENET_REL]),
        "elastic net, a in {0.1, 0.02} tuned with lam",
    ),
    "boosting": Scheme(
        boosting_scheme(BOOST_STEPS), BOOST_STEPS, "L2 boosting, 25..800 steps"
    ),
}
#: The default selection of --schemes (enet_0.5 and the reversed order are
#: clearly dominated on the --screen; run them explicitly if wanted).
DEFAULT_SCHEMES = [
    "glmnet_ridge", "glmnet_ridge_shuffled", "glmnet_ridge_by_marginal",
    "glmnet_lasso", "ridge_paper_grid", "ridge_large", "marginal", "lasso",
    "enet_0.1", "enet_0.05", "enet_0.02", "enet_cv_alpha", "boosting",
]  # fmt: skip


class Data(NamedTuple):
    X: Array
    y: Array
    coef: Array
    labels: NDArray[np.intp]


def _std(Xtr: Array, other: Array) -> tuple[Array, Array]:
    mean, sd = Xtr.mean(axis=0), Xtr.std(axis=0, ddof=1)
    return (Xtr - mean) / sd, (other - mean) / sd


def fit_fold(
    data: Data, train: NDArray[np.intp], test: NDArray[np.intp], scheme: Scheme,
    inits: list[NDArray[np.intp]], seed: int,
) -> tuple[Array, Array, NDArray[np.intp]]:  # fmt: skip
    """One training fold: weights, batched SOS-NMF, OLS, test predictions.

    Returns MSEP and model size of shape (n_inits, n_deltas, n_ratios) and
    the predicted labels (-1: unselected) of shape (..., p).
    """
    Xs, Xte = _std(data.X[train], data.X[test])
    ys, yte = _std(data.y[train, None], data.y[test, None])
    ys, yte = ys[:, 0], yte[:, 0]
    W = scheme.fn(Xs, ys, np.random.default_rng(seed))
    n_i, D, R = len(inits), W.shape[0], RATIOS.size
    lam_max = initial_lambda_max(Xs, W, inits)  # (D, n_inits)
    i_i, d_i, r_i = (a.ravel() for a in np.meshgrid(
        np.arange(n_i), np.arange(D), np.arange(R), indexing="ij"))  # fmt: skip
    res = batched_sos_nmf(Xs, W, inits, d_i, i_i, RATIOS[r_i] * lam_max[d_i, i_i])
    coef = _ols_batch(Xs, ys, res.labels, res.v)
    labels = np.where(coef != 0, res.labels, -1)
    msep = np.mean((yte[:, None] - Xte @ coef.T) ** 2, axis=0)
    size = np.count_nonzero(coef, axis=1).astype(float)
    shape = (n_i, D, R)
    return msep.reshape(shape), size.reshape(shape), labels.reshape(*shape, -1)


def _ols_batch(Xs: Array, ys: Array, labels: NDArray[np.intp], v: Array) -> Array:
    """Step 2 of every problem: OLS of y on ``M = X V``; returns ``b = V a``.

    Normal equations, batched (clusters are compacted, so no column of ``M``
    is zero unless nothing is selected; those rows give ``b = 0``).
    """
    B, p = labels.shape
    K = int(labels.max(initial=-1)) + 1
    if K == 0:
        return np.zeros((B, p))
    V = np.zeros((B, p, K))
    bi, ji = np.nonzero(labels >= 0)
    V[bi, ji, labels[bi, ji]] = v[bi, ji]
    M = np.einsum("nj,bjk->bnk", Xs, V)
    G = np.einsum("bnk,bnl->bkl", M, M)
    empty = np.einsum("bkk->bk", G) == 0
    G[empty.nonzero()[0], empty.nonzero()[1], empty.nonzero()[1]] = 1.0
    a = np.linalg.solve(G, np.einsum("bnk,n->bk", M, ys)[..., None])[..., 0]
    return np.einsum("bjk,bk->bj", V, a)


def _folds(n: int, k: int, rng: np.random.Generator) -> list[NDArray[np.intp]]:
    return np.array_split(rng.permutation(n), k)


def run_setting(
    config: int, rep: int, name: str, n_starts: int, seed: int
) -> pd.DataFrame:
    """Nested CV of one scheme on one data draw; one row per (start, ratio)."""
    scheme = SCHEMES[name]
    sim = make_paper_data(50, 0.6, config, random_state=seed)
    data = Data(sim.X, sim.y, sim.coef, sim.labels)
    rng = np.random.default_rng([seed, 1])  # folds and starts: same for all schemes
    n = data.X.shape[0]
    outer = _folds(n, 10, rng)
    inner = [_folds(n - te.size, 5, rng) for te in outer]
    inits = [random_partition(200, K, rng) for K in KS for _ in range(n_starts)]
    rows = []
    for o, te in enumerate(outer):
        tr = np.setdiff1d(np.arange(n), te)
        inner_msep = np.mean([
            fit_fold(data, np.delete(tr, f), tr[f], scheme, inits, seed + 7 * o + i)[0]
            for i, f in enumerate(inner[o])
        ], axis=0)  # fmt: skip
        msep, size, labels = fit_fold(data, tr, te, scheme, inits, seed + 7 * o)
        rows += _select(inner_msep, msep, size, labels, data, scheme, n_starts, o)
    out = pd.DataFrame(rows)
    out.insert(0, "scheme", name)
    out.insert(0, "rep", rep)
    out.insert(0, "config", config)
    return out


def _select(
    inner: Array, msep: Array, size: Array, labels: NDArray[np.intp], data: Data,
    scheme: Scheme, n_starts: int, fold: int,
) -> list[dict[str, Any]]:  # fmt: skip
    """Per start and ratio: (K, delta) with the best inner MSEP, outer metrics."""
    rows = []
    R = inner.shape[2]
    for s in range(n_starts):
        idx = [k * n_starts + s for k in range(len(KS))]  # this start's inits
        for r in range(R):
            sub = inner[idx, :, r]  # (K, D)
            k, d = np.unravel_index(int(np.argmin(sub)), sub.shape)
            i = idx[k]
            lab = labels[i, d, r]
            coef_hat = (lab >= 0).astype(float)
            rows.append({
                "start": s, "fold": fold, "lam_ratio": RATIOS[r], "K": KS[k],
                "delta": scheme.deltas[d], "msep": msep[i, d, r],
                "s": size[i, d, r],
                "mcc_clust": mcc_clustering(data.labels, lab),
                "mcc_supp": mcc_support(data.coef, coef_hat),
            })  # fmt: skip
    return rows


def _md(df: pd.DataFrame) -> str:
    """A DataFrame as a markdown table (index values .3g, numbers .2f)."""
    n_index = df.index.nlevels
    flat = df.reset_index()
    head = [str(c) for c in flat.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in flat.itertuples(index=False):
        cells = [
            (f"{v:.3g}" if i < n_index else f"{v:.2f}")
            if isinstance(v, float)
            else str(v)
            for i, v in enumerate(row)
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def screen(configs: list[int], reps: int, names: list[str], n_starts: int) -> str:
    """Full-data fits (no CV): MCC-clustering at s ~ 20 for *every* delta.

    Per configuration, scheme and delta, the lam_ratio whose mean s (over
    draws and starts) is nearest 20; shows what each weight vector can do
    when delta is not chosen by MSEP.
    """
    rows = []
    for c in configs:
        for r in range(reps):
            sim = make_paper_data(50, 0.6, c, random_state=1000 * c + r)
            Xs, _ = _std(sim.X, sim.X)
            ys = (sim.y - sim.y.mean()) / sim.y.std(ddof=1)
            rng = np.random.default_rng([1000 * c + r, 2])
            inits = [random_partition(200, K, rng) for K in KS for _ in range(n_starts)]
            for name in names:
                W = SCHEMES[name].fn(Xs, ys, np.random.default_rng(1000 * c + r))
                lam_max = initial_lambda_max(Xs, W, inits)
                grid = (len(inits), W.shape[0], RATIOS.size)
                i_i, d_i, r_i = (a.ravel() for a in np.indices(grid))
                res = batched_sos_nmf(
                    Xs, W, inits, d_i, i_i, RATIOS[r_i] * lam_max[d_i, i_i]
                )
                for b in range(d_i.size):
                    lab = res.labels[b]
                    rows.append((c, name, d_i[b], r_i[b], np.sum(lab >= 0),
                                 mcc_clustering(sim.labels, lab)))  # fmt: skip
    df = pd.DataFrame(rows, columns=["config", "scheme", "d", "r", "s", "mcc"])
    curve = (
        df.groupby(["config", "scheme", "d", "r"])[["s", "mcc"]].mean().reset_index()
    )
    curve["gap"] = (curve["s"] - 20).abs()
    near = curve.loc[curve.groupby(["config", "scheme", "d"])["gap"].idxmin()]
    near["delta"] = [
        SCHEMES[n].deltas[d] for n, d in zip(near["scheme"], near["d"], strict=True)
    ]
    tab = near.pivot_table(index=["scheme", "delta"], columns="config", values="mcc")
    best = tab.groupby(level="scheme").max().loc[names]
    return (
        "Best delta per scheme (MCC-clustering at s ~ 20, full data):\n\n"
        + _md(best)
        + "\n\nEvery delta:\n\n"
        + _md(tab.loc[names])
    )


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Curves averaged over folds, starts, replicates; s=20 and min-MSEP points."""
    metrics = ["msep", "s", "mcc_clust", "mcc_supp"]
    curve = (
        df.groupby(["config", "scheme", "rep", "start", "lam_ratio"])[metrics].mean()
        .groupby(["config", "scheme", "lam_ratio"]).mean().reset_index()
    )  # fmt: skip
    df = df.assign(log_delta=np.log10(df["delta"]))
    ld = df.groupby(["config", "scheme", "lam_ratio"])["log_delta"].median()
    curve = curve.merge(ld.reset_index(), on=["config", "scheme", "lam_ratio"])
    out = []
    for (config, scheme), g in curve.groupby(["config", "scheme"]):
        near = g.iloc[int(np.argmin(np.abs(g["s"].to_numpy() - 20)))]
        best = g.iloc[int(np.argmin(g["msep"].to_numpy()))]
        top = g.iloc[int(np.argmax(g["mcc_clust"].to_numpy()))]
        by_s = g.sort_values("s")
        interp = {m: np.interp(20.0, by_s["s"], by_s[m]) for m in metrics}
        interp.update(lam_ratio=np.nan, log_delta=np.nan)
        row = {"config": config, "scheme": scheme}
        for tag, pt in (("s20", near), ("min", best), ("max", top), ("i20", interp)):
            row.update(
                {f"{tag}_{m}": pt[m] for m in [*metrics, "lam_ratio", "log_delta"]}
            )
        out.append(row)
    return pd.DataFrame(out)


def _markdown(summary: pd.DataFrame, tag: str) -> str:
    cols = ["msep", "mcc_clust", "mcc_supp", "s"]
    head = " | ".join(f"config {c}: MSEP / MCC-c / MCC-s / s" for c in (1, 2, 3))
    lines = [
        f"| scheme | {head} |",
        "|---|---|---|---|",
    ]
    for scheme, g in summary.groupby("scheme", sort=False):
        cells = []
        for c in (1, 2, 3):
            row = g[g["config"] == c]
            if row.empty:
                cells.append("-")
                continue
            v = [float(row[f"{tag}_{m}"].iloc[0]) for m in cols]
            cells.append(f"{v[0]:.3f} / {v[1]:.2f} / {v[2]:.2f} / {v[3]:.1f}")
        lines.append(f"| {scheme} | {' | '.join(cells)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run the study and print the tables (markdown)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--replicates", type=int, default=5)
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--schemes", nargs="+", default=DEFAULT_SCHEMES, choices=SCHEMES)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default=None, help="CSV of every (fold, start, ratio)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="joblib progress")
    ap.add_argument("--screen", action="store_true", help="full-data screen only")
    ap.add_argument("--from-csv", default=None, help="summarize a saved --out CSV")
    args = ap.parse_args(argv)
    if args.from_csv:
        report(pd.read_csv(args.from_csv), list(dict.fromkeys(args.schemes)))
        return
    if args.screen:
        t0 = time.perf_counter()
        print(screen(args.configs, args.replicates, args.schemes, args.starts))
        print(f"\n{time.perf_counter() - t0:.0f} s")
        return
    if args.quick:
        args.configs, args.replicates, args.starts = [2], 1, 2
    from joblib import Parallel, delayed

    tasks = [
        (c, r, s) for c in args.configs for r in range(args.replicates)
        for s in args.schemes
    ]  # fmt: skip
    t0 = time.perf_counter()
    parts = Parallel(n_jobs=args.jobs, verbose=10 if args.verbose else 0)(
        delayed(run_setting)(c, r, s, args.starts, 1000 * c + r) for c, r, s in tasks
    )
    df = pd.concat(parts, ignore_index=True)
    elapsed = time.perf_counter() - t0
    if args.out:
        df.to_csv(args.out, index=False)
    print(f"{len(tasks)} nested CVs, {elapsed:.0f} s, {args.jobs} job(s)\n")
    report(df, args.schemes)


def report(df: pd.DataFrame, schemes: list[str]) -> None:
    """Print the tables of a study (markdown), schemes in the given order."""
    summary = summarize(df[df["scheme"].isin(schemes)])
    order = {s: i for i, s in enumerate(schemes)}
    summary = summary.sort_values("scheme", key=lambda c: c.map(order), kind="stable")
    for tag, title in (
        ("i20", "Interpolated along the traced curve at s = 20"),
        ("s20", "At the traced point nearest s = 20"),
        ("max", "At the traced point with the highest MCC-clustering"),
        ("min", "At the minimum mean MSEP"),
    ):
        print(f"{title}:\n\n{_markdown(summary, tag)}\n")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
