"""The ``vcpcr`` command line: ``vcpcr demo``, ``benchmark`` and ``report``."""

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


def _read_table(path: Path) -> pd.DataFrame:
    """Read a CSV or parquet file (by its suffix)."""
    if not path.is_file():
        raise ValueError(f"{path} does not exist or is not a file.")
    if path.suffix.lower() in (".parquet", ".pq"):
        return pd.read_parquet(path)
    if path.suffix.lower() in (".csv", ".txt", ".gz"):
        return pd.read_csv(path)
    raise ValueError(
        f"{path} has the suffix {path.suffix!r}; give a .csv or .parquet file."
    )


def report_command(args: argparse.Namespace) -> str:
    """Build the report of ``vcpcr report`` and write it; return what was done.

    The genes are every column but ``--time``, ``--event``, ``--covariates``
    and ``--strata``; the signature is ``VCPCR(family="cox")`` with
    ``--n-clusters`` and ``--lam-ratio`` when given, otherwise ``VCPCRCV``
    (tuned by its defaults, re-tuned in every fold and resample).
    """
    from vcpcr import VCPCR, VCPCRCV
    from vcpcr.validation import report

    out = Path(args.out)
    if out.exists() and not args.force:
        raise ValueError(
            f"--out {out} already exists; pass --force to overwrite it, or "
            f"choose another --out."
        )
    data = _read_table(Path(args.data))
    outcome = [args.time, args.event]
    clinical = [*args.covariates, *args.strata]
    unknown = [c for c in [*outcome, *clinical] if c not in data.columns]
    if unknown:
        raise ValueError(
            f"{args.data} has no columns {unknown}; its columns start with "
            f"{list(data.columns[:8])}."
        )
    y = data[outcome].to_numpy(dtype=float)
    X = data.drop(columns=outcome)
    params: dict[str, Any] = {
        "family": "cox",
        "covariates": args.covariates or None,
        "strata": args.strata or None,
        "random_state": args.seed,
    }
    if args.n_clusters is not None:
        lam = {} if args.lam_ratio is None else {"lam_ratio": args.lam_ratio}
        estimator: Any = VCPCR(n_clusters=args.n_clusters, **lam, **params)
    else:
        estimator = VCPCRCV(**params)
    rep = report(
        estimator,
        X,
        y,
        cv=args.cv,
        n_repeats=args.repeats,
        inference=not args.no_inference,
        stability=not args.no_stability,
        calibration=not args.no_calibration,
        n_jobs=args.jobs,
        verbose=not args.no_progress,
        random_state=args.seed,
    )
    if out.suffix.lower() == ".md":
        out.write_text(rep.to_markdown(), encoding="utf-8")
    else:
        rep.to_html(out, force=True)  # checked above, before the work
    return (
        f"wrote {out} ({len(rep.sections)} sections; TRIPOD+AI items "
        f"{', '.join(rep.covered())})"
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


def _fraction(text: str) -> float:
    """Parse a number in (0, 1] (argparse ``type=``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number; got {text!r}") from None
    if not 0.0 < value <= 1.0:  # also rejects nan
        raise argparse.ArgumentTypeError(f"must be in (0, 1]; got {text}")
    return value


def _add_report_parser(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="a reviewer's report (TRIPOD+AI) of a survival signature, as HTML",
        description=(
            "Fit a Cox VC-PCR signature on a CSV or parquet file (one row per "
            "patient: the genes, the clinical columns, time and event) and "
            "write the report of vcpcr.validation.report: data, tuning, the "
            "signature, the increment over the clinical Cox model, calibration, "
            "decision curve, sample size, multi-split and stability, mapped to "
            "TRIPOD+AI items. One self-contained HTML file (or Markdown if "
            "--out ends in .md)."
        ),
    )
    p.set_defaults(subparser=p)
    p.add_argument("data", help="CSV or parquet file")
    p.add_argument("--time", required=True, help="column of the follow-up time")
    p.add_argument("--event", required=True, help="column of the event (1/0)")
    p.add_argument(
        "--covariates", nargs="+", default=[], help="clinical columns to adjust for"
    )
    p.add_argument(
        "--strata", nargs="+", default=[], help="columns whose levels are strata"
    )
    p.add_argument(
        "--out",
        default="vcpcr-report.html",
        help="file to write (default: ./vcpcr-report.html; .md for Markdown)",
    )
    p.add_argument("--force", action="store_true", help="overwrite --out")
    p.add_argument(
        "--n-clusters",
        type=_positive_int,
        default=None,
        help="fixed number of modules (default: VCPCRCV tunes it)",
    )
    p.add_argument(
        "--lam-ratio",
        type=_fraction,
        default=None,
        help="fixed lam_ratio with --n-clusters (default: VCPCR's)",
    )
    p.add_argument("--cv", type=_positive_int, default=5, help="folds (default: 5)")
    p.add_argument(
        "--repeats", type=_positive_int, default=2, help="CV repeats (default: 2)"
    )
    p.add_argument(
        "--no-inference", action="store_true", help="skip the multi-split section"
    )
    p.add_argument(
        "--no-stability", action="store_true", help="skip stability selection"
    )
    p.add_argument(
        "--no-calibration",
        action="store_true",
        help="skip the calibration and the decision curve",
    )
    p.add_argument(
        "--jobs", type=_jobs, default=1, help="parallel jobs, -1 for all cores"
    )
    p.add_argument("--seed", type=_seed, default=0, help="seed (default: 0)")
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
    _add_report_parser(sub)
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
        elif args.command == "report":
            print(report_command(args))
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
