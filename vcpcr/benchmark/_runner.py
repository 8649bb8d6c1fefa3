"""Run the study: units of work, resumable parts, joblib, progress, outputs.

A *unit* is one method on one data set (a setting and replicate of the
simulation, or the Liver sample). Each unit runs the whole nested CV of
:func:`nested_cv` and writes its rows to ``parts/<dataset>/<method>.csv``
(atomically: a temporary file renamed at the end). A rerun skips the units
whose part exists, so a killed run continues where it stopped. Every unit
seeds its own random draws from ``(seed, setting, replicate)`` and runs with
one BLAS/OpenMP thread, so the results do not depend on ``n_jobs``.
"""

from __future__ import annotations

import json
import numbers
import os
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np
import pandas as pd

from vcpcr._checks import check_scalar
from vcpcr._result import TupleResult
from vcpcr.benchmark._methods import PROFILES, Method, Profile, draw_starts, get_methods
from vcpcr.benchmark._protocol import nested_cv, nested_folds
from vcpcr.benchmark._results import average_folds, curves, summarize, to_markdown
from vcpcr.exceptions import user_stacklevel

__all__ = ["SimulatedSetting", "StudyResult", "run_study", "run_units"]

SIM_KEYS = ("n", "rho", "config")


class DataSpec(Protocol):
    """A data set of the study (picklable; loads deterministically)."""

    @property
    def key(self) -> str:
        """Directory name of the data set's parts."""

    def columns(self) -> dict[str, Any]:
        """Columns identifying the data set in the result rows."""

    def load(self) -> tuple[Any, Any, Any, Any]:
        """``X, y, coef_true, labels_true`` (the truth may be None)."""

    def seed_sequence(self, purpose: int) -> np.random.SeedSequence:
        """Seed of one purpose: 0 data, 1 folds, 2 starts."""


@dataclass(frozen=True)
class SimulatedSetting:
    """One replicate data set of the simulation (``make_paper_data``).

    Attributes
    ----------
    n, rho, config : int, float, int
        The setting.
    replicate : int
        Replicate index (independent draws).
    seed : int
        The study's seed.
    """

    n: int
    rho: float
    config: int
    replicate: int
    seed: int = 0

    @property
    def key(self) -> str:
        """Directory name of the data set's parts."""
        return f"n{self.n}_rho{self.rho:g}_config{self.config}_rep{self.replicate}"

    def columns(self) -> dict[str, Any]:
        """Return the setting columns of the data set's rows."""
        return {
            "n": self.n,
            "rho": self.rho,
            "config": self.config,
            "replicate": self.replicate,
        }

    def seed_sequence(self, purpose: int) -> np.random.SeedSequence:
        """Seed of one purpose (0 data, 1 folds, 2 starts) of this data set."""
        rho = round(self.rho * 1000)
        return np.random.SeedSequence(
            [self.seed, self.n, rho, self.config, self.replicate, purpose]
        )

    def load(self) -> tuple[Any, Any, Any, Any]:
        """Draw ``X, y, coef, labels`` with :func:`make_paper_data`."""
        from vcpcr.simulate import make_paper_data

        data = make_paper_data(
            self.n,
            self.rho,
            self.config,
            random_state=np.random.default_rng(self.seed_sequence(0)),
        )
        return data.X, data.y, data.coef, data.labels


class Unit(NamedTuple):
    """One method on one data set."""

    method: Method
    data: DataSpec
    profile: Profile

    def path(self, out: Path) -> Path:
        """Return the unit's part file."""
        return out / "parts" / self.data.key / f"{self.method.name}.csv"


def _write_atomic(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    frame.to_csv(tmp, index=False)
    os.replace(tmp, path)


def run_unit(unit: Unit, out: Path) -> float:
    """Run one unit's nested CV, write its part and return its seconds.

    The part holds the rows of :func:`nested_cv` with the method, the data
    set's columns, ``unit_time`` and ``unit_cpu`` (wall-clock and CPU seconds
    of the unit) and ``n_warnings`` (warnings raised and recorded).
    """
    from threadpoolctl import threadpool_limits

    tic, cpu = time.perf_counter(), time.process_time()
    X, y, coef, labels = unit.data.load()
    prof = unit.profile
    folds = nested_folds(
        len(y),
        prof.n_outer,
        prof.n_inner,
        random_state=np.random.default_rng(unit.data.seed_sequence(1)),
    )
    starts = draw_starts(
        np.shape(X)[1],
        tuple(prof.grids["K"]),
        prof.n_starts,
        np.random.default_rng(unit.data.seed_sequence(2)),
    )
    with threadpool_limits(limits=1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = nested_cv(
            X, y, unit.method, folds, starts, coef_true=coef, labels_true=labels
        )
    elapsed, cpu = time.perf_counter() - tic, time.process_time() - cpu
    head = {
        "method": unit.method.name,
        "label": unit.method.label,
        **unit.data.columns(),
    }
    frame = pd.concat([pd.DataFrame(head, index=frame.index), frame], axis=1).assign(
        unit_time=elapsed, unit_cpu=cpu, n_warnings=len(caught)
    )
    _write_atomic(frame, unit.path(out))
    return elapsed


def check_study_file(out: Path, meta: dict[str, Any], name: str = "study") -> None:
    """Refuse to mix the parts of different designs in one directory.

    ``out/<name>.json`` records the design of the parts in ``out/parts``. It
    only refuses a run when parts exist: a run that failed before finishing
    any unit leaves nothing that blocks the next one. The file is written
    atomically (a temporary file, then a rename).
    """
    path = out / f"{name}.json"
    has_parts = (out / "parts").is_dir() and any((out / "parts").rglob("*.csv"))
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError:
            old = None  # a truncated file from an interrupted run
        if old == meta:
            return
        if has_parts:
            raise ValueError(
                f"{out} holds a study with {old}, not {meta}; its parts cannot be "
                f"mixed. Use another --out directory (or delete {out})."
            )
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(meta, indent=2) + "\n")
    os.replace(tmp, path)


def check_settings(
    n: Sequence[int], rho: Sequence[float], config: Sequence[int], replicates: int
) -> None:
    """Validate the settings of :func:`run_study` before any work starts."""
    owner = "run_study"
    for nn in n:
        check_scalar(nn, "n", numbers.Integral, owner=owner, min_val=1)
    for r in rho:
        check_scalar(
            r,
            "rho",
            numbers.Real,
            owner=owner,
            min_val=0.0,
            max_val=1.0,
            include_max=False,
        )
    for c in config:
        check_scalar(c, "config", numbers.Integral, owner=owner, min_val=1, max_val=3)
    check_scalar(replicates, "replicates", numbers.Integral, owner=owner, min_val=1)


def run_units(
    units: Sequence[Unit], out: str | Path, *, n_jobs: int = 1, progress: bool = True
) -> pd.DataFrame:
    """Run the units whose part is missing (in parallel); return all their rows.

    Parameters
    ----------
    units : sequence of Unit
        The units of the study.
    out : str or pathlib.Path
        Output directory (parts go to ``out/parts``).
    n_jobs : int, default=1
        Parallel units (joblib processes); 1 runs in this process.
    progress : bool, default=True
        Show a tqdm progress bar on stderr.

    Returns
    -------
    pandas.DataFrame
        The rows of every unit's part (outer-fold level).
    """
    from tqdm.auto import tqdm

    out = Path(out)
    todo = [u for u in units if not u.path(out).exists()]
    with tqdm(
        total=len(units),
        initial=len(units) - len(todo),
        desc="benchmark",
        unit="unit",
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        for unit in _execute(todo, out, n_jobs):
            bar.set_postfix_str(f"{unit.method.name} {unit.data.key}", refresh=False)
            bar.update(1)
    return pd.concat([pd.read_csv(u.path(out)) for u in units], ignore_index=True)


def _execute(todo: list[Unit], out: Path, n_jobs: int) -> Iterable[Unit]:
    """Yield the units as they finish (sequentially or through joblib)."""
    if n_jobs == 1 or len(todo) <= 1:
        for unit in todo:
            run_unit(unit, out)
            yield unit
        return
    from joblib import Parallel, delayed

    # the slow methods (CEN, SRR) first, so that the pool finishes together
    order = sorted(todo, key=lambda u: u.method.kind not in ("cen", "srr"))
    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    jobs = (delayed(_run_and_return)(unit, out) for unit in order)
    yield from parallel(jobs)


def _run_and_return(unit: Unit, out: Path) -> Unit:
    run_unit(unit, out)
    return unit


@dataclass(frozen=True, eq=False, repr=False)
class StudyResult(TupleResult):
    """What :func:`run_study` and :func:`run_liver` return.

    Attributes
    ----------
    folds : pandas.DataFrame
        One row per outer fold, start, traced value, method and data set.
    results : pandas.DataFrame
        Averaged over the outer folds (:func:`average_folds`).
    curves : pandas.DataFrame
        Averaged over starts and replicates (:func:`curves`).
    summary : pandas.DataFrame
        The points nearest ``s = 20`` and at minimum MSEP (:func:`summarize`).
    files : list of pathlib.Path
        The files written.
    """

    folds: pd.DataFrame
    results: pd.DataFrame
    curves: pd.DataFrame
    summary: pd.DataFrame
    files: list[Path]


SUMMARY_COLUMNS = (
    "label",
    "point",
    "traced_value",
    "s",
    "msep",
    "mcc_clustering",
    "mcc_support",
    "n_replicates",
)


def write_outputs(
    folds: pd.DataFrame, out: Path, keys: Sequence[str], prefix: str = ""
) -> StudyResult:
    """Average, summarize and write the CSV and Markdown files."""
    results = average_folds(folds, keys)
    curve = curves(results, keys)
    summary = summarize(curve, keys)
    files = []
    for name, frame in (
        ("folds", folds),
        ("results", results),
        ("curves", curve),
        ("summary", summary),
    ):
        path = out / f"{prefix}{name}.csv"
        frame.to_csv(path, index=False)
        files.append(path)
    cols = [*keys, *[c for c in SUMMARY_COLUMNS if c in summary.columns]]
    md = out / f"{prefix}summary.md"
    md.write_text(to_markdown(summary, cols) + "\n")
    files.append(md)
    return StudyResult(folds, results, curve, summary, files)


def figures(draw: Any, curve: pd.DataFrame, out: Path) -> list[Path]:
    try:
        import matplotlib  # noqa: F401
    except ImportError:  # pragma: no cover - the "plot" extra is missing
        warnings.warn(
            "Figures skipped: pip install 'vcpcr[plot]' for matplotlib.",
            stacklevel=user_stacklevel(),
        )
        return []
    return list(draw(curve, out))


def run_study(
    out: str | Path,
    *,
    n: Sequence[int] = (50,),
    rho: Sequence[float] = (0.6,),
    config: Sequence[int] = (1, 2, 3),
    methods: str | list[str] = "all",
    replicates: int = 1,
    n_jobs: int = 1,
    quick: bool = False,
    seed: int = 0,
    progress: bool = True,
) -> StudyResult:
    """Run the paper's simulation study (nested CV) and write its outputs.

    Parameters
    ----------
    out : str or pathlib.Path
        Output directory; a rerun with the same directory skips finished units.
    n, rho, config : sequences
        The settings (every combination): sample sizes (paper: 25, 50),
        correlations (0.3, 0.6) and configurations (1, 2, 3).
    methods : "all" or list of str, default="all"
        See :func:`get_methods`.
    replicates : int, default=1
        Independent data sets per setting (``quick`` uses 1).
    n_jobs : int, default=1
        Units run in parallel (joblib).
    quick : bool, default=False
        Small grids and 5 x 3 folds (the CI smoke test; see
        :func:`get_methods`).
    seed : int, default=0
        Seed of every data set, split and start.
    progress : bool, default=True
        Show a progress bar.

    Returns
    -------
    StudyResult
        The tables (also written as ``folds.csv``, ``results.csv``,
        ``curves.csv``, ``summary.csv`` and ``summary.md``) and the figures
        ``n<n>_rho<rho>_<metric>.png``.

    Raises
    ------
    ValueError
        For an unknown method, or an ``out`` holding a study of another
        profile or seed.

    See Also
    --------
    nested_cv : The protocol for one method and data set.
    run_liver : The real-data experiment.

    Notes
    -----
    Each random start of VC-PCR, CRL-kmeans and CEN is its own nested CV (the
    same partition in every fold, its own tuning), as in the authors' R code;
    the tables average the starts. The data sets, folds and starts depend on
    ``(seed, n, rho, config, replicate)`` only, so all methods see the same
    data, folds and starts. The tables and figures cover the units of this
    call; parts of other methods or settings already in ``out`` are kept
    (and reused by a later call that asks for them) but not included.
    """
    from vcpcr.benchmark._figures import plot_study

    profile = PROFILES["quick" if quick else "full"]
    out = Path(out)
    check_settings(n, rho, config, replicates)
    for nn in n:  # raises if n is too small for the profile's folds
        nested_folds(int(nn), profile.n_outer, profile.n_inner, random_state=0)
    chosen = get_methods(methods, profile.name)
    check_study_file(out, {"profile": profile.name, "seed": int(seed)})
    reps = range(1 if quick else int(replicates))
    units = [
        Unit(m, SimulatedSetting(int(nn), float(r), int(c), rep, int(seed)), profile)
        for nn, r, c, rep, m in product(n, rho, config, reps, chosen)
    ]
    folds = run_units(units, out, n_jobs=n_jobs, progress=progress)
    result = write_outputs(folds, out, SIM_KEYS)
    files = figures(plot_study, result.curves, out)
    return replace(result, files=[*result.files, *files])
