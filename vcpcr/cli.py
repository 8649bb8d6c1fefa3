"""The ``vcpcr`` command line: ``vcpcr demo`` and ``vcpcr benchmark``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["main"]


def _symbol_columns(columns: pd.Index, annotation: pd.DataFrame) -> list[str]:
    """Gene symbol of each probe where known and unique, else the probe ID."""
    symbols = annotation["geneSymbol"].reindex(columns)
    counts = symbols.value_counts()
    return [
        s if isinstance(s, str) and counts[s] == 1 else probe
        for probe, s in zip(columns, symbols, strict=True)
    ]


def _figures(cv: object, X: pd.DataFrame, out: Path) -> list[str]:
    """Write the CV curve and the cluster heatmap; return the lines to print."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(figures skipped: pip install 'vcpcr[plot]' for matplotlib)"]
    from vcpcr.plotting import plot_clusters, plot_cv

    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for name, draw in (
        ("cv_curve.png", plot_cv),
        ("cluster_heatmap.png", plot_clusters),
    ):
        ax = draw(cv) if draw is plot_cv else draw(cv, X)
        ax.figure.savefig(out / name, dpi=120, bbox_inches="tight")
        plt.close(ax.figure)
        lines.append(f"wrote {out / name}")
    return lines


def demo(out: Path, n_jobs: int | None, random_state: int) -> str:
    """Tune and fit VC-PCR on the Liver data; return the report text.

    ``VCPCRCV`` chooses ``K`` in {10, 20} (the paper uses 10-60 on 50 mice),
    the elastic-net weights' ``delta`` and ``lam_ratio`` on their default
    grids, 5 random starts each, by shuffled 5-fold cross-validated MSE.
    """
    from sklearn.model_selection import KFold

    from vcpcr import VCPCRCV
    from vcpcr.datasets import load_liver

    liver = load_liver()
    X = liver.data.set_axis(
        _symbol_columns(liver.data.columns, liver.annotation), axis=1
    )
    y = liver.target
    cv = VCPCRCV(
        n_clusters=(10, 20),
        n_init=5,
        cv=KFold(5, shuffle=True, random_state=random_state),
        n_jobs=n_jobs,
        verbose=True,
        random_state=random_state,
    )
    cv.fit(X, y)
    model = cv.best_estimator_
    best = cv.cv_results_.iloc[cv.best_index_]
    lines = [
        "VC-PCR (elastic-net weights) on the Liver data (Ghazalpour et al. 2006): "
        f"{X.shape[0]} mice x {X.shape[1]} probes,",
        "y = body weight / length (g/cm). Probes shown by gene symbol where known.",
        "",
        str(cv.summary()),
        "",
        f"Cross-validated MSE {-best['mean_test_score']:.4f} = "
        f"{-best['mean_test_score'] / y.var():.1%} of var(y); selected "
        f"{int((model.labels_ >= 0).sum())} of {X.shape[1]} probes in "
        f"{model.n_clusters_} clusters.",
        *_figures(cv, X, out),
    ]
    return "\n".join(lines)


def benchmark(args: argparse.Namespace) -> str:
    """Run the simulation study (or, with ``--liver``, the Liver experiment).

    Returns the report: the summary table (the point nearest ``s = 20`` and
    the point of minimum MSEP of every method and setting) and the files
    written.
    """
    from vcpcr.benchmark import run_liver, run_study

    common = {
        "methods": args.methods,
        "n_jobs": args.jobs,
        "quick": args.quick,
        "seed": args.seed,
        "progress": not args.no_progress,
    }
    if args.liver:
        result = run_liver(args.out, **common)
        title = "Liver experiment (MSEP on the standardized scale)"
    else:
        result = run_study(
            args.out,
            n=args.n,
            rho=args.rho,
            config=args.config,
            replicates=args.replicates,
            **common,
        )
        title = "Simulation study (MSEP on the standardized scale; true s = 20)"
    summary = next(f for f in result.files if f.name.endswith("summary.md"))
    return "\n".join(
        [
            title,
            "",
            summary.read_text().rstrip(),
            "",
            *(f"wrote {f}" for f in result.files),
        ]
    )


def _add_benchmark_parser(sub: Any) -> None:
    p = sub.add_parser(
        "benchmark",
        help="the paper's nested-CV simulation study (or --liver experiment)",
        description=(
            "Nested cross-validation (10 outer x 5 inner folds, tuning by "
            "inner MSEP for every value of the traced hyperparameter) of the "
            "VC-PCR paper's eight methods on its simulated data, with tidy CSV "
            "results, summary tables and the paper's figures. Resumable: a "
            "rerun with the same --out skips finished units; a unit is one "
            "method on one data set."
        ),
    )
    p.add_argument(
        "--n", type=int, nargs="+", default=[50], help="sample sizes (default: 50)"
    )
    p.add_argument(
        "--rho",
        type=float,
        nargs="+",
        default=[0.6],
        help="correlations (default: 0.6)",
    )
    p.add_argument(
        "--config",
        type=int,
        nargs="+",
        default=[1, 2, 3],
        help="configurations (default: 1 2 3)",
    )
    p.add_argument(
        "--methods",
        nargs="+",
        default=["all"],
        help="'all' (the paper's eight), method keys such as vcpcr-ridge, cen, "
        "srr, or vcpcr-<weights> for another weight scheme",
    )
    p.add_argument(
        "--replicates", type=int, default=1, help="data sets per setting (default: 1)"
    )
    p.add_argument(
        "--jobs", type=int, default=1, help="units run in parallel (default: 1)"
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("vcpcr-benchmark"),
        help="output directory (default: ./vcpcr-benchmark)",
    )
    p.add_argument(
        "--quick", action="store_true", help="small grids, one replicate (CI)"
    )
    p.add_argument(
        "--liver", action="store_true", help="the real-data experiment instead"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of all draws")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``vcpcr`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status.
    """
    parser = argparse.ArgumentParser(
        prog="vcpcr",
        description="VC-PCR: supervised variable clustering and prediction.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser(
        "demo", help="tune and fit VC-PCR on the packaged Liver data"
    )
    p_demo.add_argument(
        "--out",
        type=Path,
        default=Path("vcpcr-output"),
        help="directory for the figures (default: ./vcpcr-output)",
    )
    p_demo.add_argument("--jobs", type=int, default=None, help="parallel folds")
    p_demo.add_argument("--seed", type=int, default=0)
    _add_benchmark_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "demo":
        print(demo(args.out, args.jobs, args.seed))
    elif args.command == "benchmark":
        print(benchmark(args))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
