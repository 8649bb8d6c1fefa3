"""The ``vcpcr`` command line: ``vcpcr demo`` and ``vcpcr benchmark``."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["main"]


_FIGURES = ("cv_curve.png", "cluster_heatmap.png")


def _refuse_overwrite(out: Path, force: bool) -> None:
    """Raise before any work if the demo would overwrite its figures."""
    existing = [str(out / name) for name in _FIGURES if (out / name).exists()]
    if existing and not force:
        raise ValueError(
            f"--out {out} already holds {existing}; pass --force to overwrite "
            f"them, or choose another --out."
        )


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
    for name, draw in ((_FIGURES[0], plot_cv), (_FIGURES[1], plot_clusters)):
        ax = draw(cv) if draw is plot_cv else draw(cv, X)
        ax.figure.savefig(out / name, dpi=120, bbox_inches="tight")
        plt.close(ax.figure)
        lines.append(f"wrote {out / name}")
    return lines


def demo(out: Path, n_jobs: int | None, random_state: int) -> str:
    """Tune and fit VC-PCR on the Liver data; return the report text.

    ``VCPCRCV`` chooses ``K`` in {10, 20} (the paper uses 10-60 on 50 mice),
    the elastic-net weights' ``delta`` and ``lam_ratio`` on their default
    grids, 5 random starts each, by its default tuning on shuffled 5-fold
    CV: the pooled cross-validated MSE of cross-calibrated out-of-fold
    predictions, the sparsest point within 0.75 paired standard errors of
    the best, the refit shrunk by that point's calibration slope.
    """
    from sklearn.model_selection import KFold

    from vcpcr import VCPCRCV
    from vcpcr.datasets import load_liver

    X, y = load_liver(return_X_y=True, gene_symbols=True)
    cv = VCPCRCV(
        n_clusters=(10, 20),
        n_init=5,
        cv=KFold(5, shuffle=True, random_state=random_state),
        n_jobs=n_jobs,
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
        f"Pooled cross-validated MSE {-best['mean_test_score']:.4f} = "
        f"{-best['mean_test_score'] / y.var():.1%} of var(y); selected "
        f"{int((model.labels_ >= 0).sum())} of {X.shape[1]} probes in "
        f"{model.n_clusters_} clusters; predictions shrunk by "
        f"{cv.shrinkage_:.2f} (the calibration slope).",
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


def _integer(text: str, *, low: int, what: str) -> int:
    """Parse an integer >= ``low`` (argparse ``type=``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer ({what}); got {text!r}"
        ) from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be >= {low} ({what}); got {value}")
    return value


def _positive_int(text: str) -> int:
    return _integer(text, low=1, what="a count")


def _seed(text: str) -> int:
    return _integer(text, low=0, what="a seed")


def _jobs(text: str) -> int:
    value = _integer(text, low=-1, what="processes, -1 for all cores")
    if value == 0:
        raise argparse.ArgumentTypeError("must be >= 1, or -1 for all cores; got 0")
    return value


def _correlation(text: str) -> float:
    """Parse a correlation in [0, 1) (argparse ``type=``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number; got {text!r}") from None
    if not 0.0 <= value < 1.0:  # also rejects nan
        raise argparse.ArgumentTypeError(f"must be in [0, 1); got {text}")
    return value


def _out_dir(text: str) -> Path:
    """Check that ``text`` is, or can become, a writable directory."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} exists and is not a directory")
    parent = path
    while not parent.exists():  # the nearest existing ancestor will hold it
        parent = parent.parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"cannot create {text}: {parent} is a file, not a directory"
        )
    try:  # a real probe: os.access says yes to root on a read-only file system
        os.rmdir(tempfile.mkdtemp(prefix=".vcpcr-probe-", dir=parent))
    except OSError as exc:
        raise argparse.ArgumentTypeError(
            f"cannot create {text}: cannot write to {parent} ({exc.strerror or exc})"
        ) from exc
    return path


def _add_demo_parser(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="tune and fit VC-PCR on the packaged Liver data",
        description=(
            "Tune VC-PCR by 5-fold cross-validation (K in {10, 20}, the "
            "elastic-net weights' delta and lam_ratio, 5 random starts) on the "
            "packaged Liver data (131 mice x 2785 probes, y = body weight / "
            "length), print the fitted model's summary and write the CV curve "
            "and the cluster heatmap."
        ),
    )
    p.set_defaults(subparser=p)  # its usage in errors about its options
    p.add_argument(
        "--out",
        type=_out_dir,
        default=Path("vcpcr-output"),
        help="directory for the figures, created if needed (default: ./vcpcr-output)",
    )
    p.add_argument(
        "--jobs",
        type=_jobs,
        default=-1,
        help="CV folds fitted in parallel; 1 for sequential (default: -1, all cores)",
    )
    p.add_argument(
        "--seed",
        type=_seed,
        default=0,
        help="seed of the CV folds and the random starts (default: 0)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite the figures of an earlier run in --out",
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
    p.set_defaults(subparser=p)  # its usage in errors about its options
    p.add_argument(
        "--n",
        type=_positive_int,
        nargs="+",
        default=[50],
        help="sample sizes (default: 50; the paper: 25 50)",
    )
    p.add_argument(
        "--rho",
        type=_correlation,
        nargs="+",
        default=[0.6],
        help="within-group correlations in [0, 1) (default: 0.6; the paper: 0.3 0.6)",
    )
    p.add_argument(
        "--config",
        type=int,
        choices=[1, 2, 3],
        nargs="+",
        default=[1, 2, 3],
        help="the paper's configurations (default: 1 2 3)",
    )
    p.add_argument(
        "--methods",
        nargs="+",
        default=["all"],
        help="'all' (the paper's eight), method keys such as vcpcr-ridge, cen, "
        "srr, or vcpcr-<weights> for another weight scheme",
    )
    p.add_argument(
        "--replicates",
        type=_positive_int,
        default=1,
        help="data sets per setting (default: 1)",
    )
    p.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        help="units run in parallel, -1 for all cores (default: 1)",
    )
    p.add_argument(
        "--out",
        type=_out_dir,
        default=Path("vcpcr-benchmark"),
        help="output directory (default: ./vcpcr-benchmark)",
    )
    p.add_argument(
        "--quick", action="store_true", help="small grids, one replicate (CI)"
    )
    p.add_argument(
        "--liver", action="store_true", help="the real-data experiment instead"
    )
    p.add_argument(
        "--seed",
        type=_seed,
        default=0,
        help="seed of every data set, split and random start (default: 0)",
    )
    p.add_argument(
        "--no-progress", action="store_true", help="do not show the progress bar"
    )


def _parser() -> argparse.ArgumentParser:
    """Return the parser of the ``vcpcr`` command."""
    from vcpcr import __version__

    parser = argparse.ArgumentParser(
        prog="vcpcr",
        description="VC-PCR: supervised variable clustering and prediction.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_demo_parser(sub)
    _add_benchmark_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``vcpcr`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status (argparse exits with status 2 on invalid arguments,
        before any work starts).
    """
    args, extra = _parser().parse_known_args(argv)
    if extra:  # argparse would print the top-level usage for them
        args.subparser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.command == "demo":
            _refuse_overwrite(args.out, args.force)
            print(demo(args.out, args.jobs, args.seed))
        elif args.command == "benchmark":
            print(benchmark(args))
    except ValueError as exc:  # bad input argparse cannot see (e.g. --methods)
        print(f"vcpcr {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(
            f"vcpcr {args.command}: error: out of memory; use smaller sizes "
            f"(--n, --replicates) or fewer parallel jobs (--jobs).",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
