"""The joblib runner of the folds and the resamples, and their warnings' counts.

``VCPCRCV`` runs its folds, multi-split and stability selection their
resamples, through :func:`run_parallel`: ``joblib.Parallel`` (any joblib
backend, e.g. dask through ``joblib.parallel_config``) with a tqdm progress
bar over the fits (shown as :func:`progress_shown` decides), the results in
the order of the tasks, each task seeded by :func:`task_seeds`. A task's
arguments go to joblib one by one, so that a large one shared by all tasks
(the data) reaches the workers once. A warning raised inside a task
is recorded there (a process backend would lose it) and issued once per
kind afterwards, with how often it occurred, instead of once per task.
A task that fails on its data (a fold or resample the estimator refuses) is
counted by :func:`check_failures`: one warning, or an error when more than
half failed.

Long runs report and survive. Asked for (``verbose=True``) outside a
terminal, the progress is a line on standard error every
:data:`PROGRESS_INTERVAL` seconds (the tasks done of how many, the time
elapsed and an estimate of the time left), so that it shows in a log file.
A caller that passes ``interruptible=True`` gets back, when a
``KeyboardInterrupt`` arrives, the results of the tasks finished so far
(:data:`UNFINISHED` in place of the others) and one warning saying how many
of how many finished. With a :class:`Checkpoint`, each finished task's
result is appended to a JSON Lines file as it arrives, and a call with the
same inputs and parameters runs only the tasks the file does not hold.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import numbers
import os
import re
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from vcpcr._checks import check_random_state
from vcpcr.exceptions import VCPCRWarning, user_stacklevel

__all__ = [
    "PROGRESS_INTERVAL",
    "UNFINISHED",
    "Checkpoint",
    "check_failures",
    "check_n_jobs",
    "fingerprint",
    "finished",
    "most_common_message",
    "progress_shown",
    "run_parallel",
    "task_seeds",
]

#: A warning recorded in a task: its category and message.
_Record = tuple[type[Warning], str]

_NUMBER = re.compile(r"[-+]?\d[\d.]*(?:e[-+]?\d+)?")


def _recorded(
    index: int, function: Callable[..., Any], *args: Any
) -> tuple[int, Any, list[_Record]]:
    """Run ``function(*args)`` in a worker; return its index, result and warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args)
    return index, result, [(c.category, str(c.message)) for c in caught]


def _kind(record: _Record) -> _Record:
    """Return the category and the message with every number replaced by ``#``."""
    category, message = record
    return category, _NUMBER.sub("#", message)


def most_common_message(messages: Sequence[str]) -> tuple[str, int]:
    """Return the most common message, numbers aside, and how many share it.

    Messages that differ only in their numbers ("4 genes", "7 genes") are
    one kind; the first message of the most common kind stands for it.
    ``("", 0)`` when there is none.
    """
    if not messages:
        return "", 0
    keys = [_NUMBER.sub("#", m) for m in messages]
    key, count = Counter(keys).most_common(1)[0]
    return messages[keys.index(key)], count


def check_failures(
    reasons: Sequence[str | None], owner: str, unit: str, counts_as: str
) -> None:
    """Warn once about failed fits of resamples or folds; raise if most failed.

    Parameters
    ----------
    reasons : sequence of str or None
        Why each resample's (or fold's) fit failed (None where it did not).
    owner : str
        The calling function, for the message.
    unit : str
        What a resample is, in the plural ("splits", "subsamples", "folds").
    counts_as : str
        What a failed fit counts as in the result, and what that keeps valid.

    Raises
    ------
    ValueError
        If more than half of the fits failed.
    """
    failed = [r for r in reasons if r is not None]
    if not failed:
        return
    top, count = most_common_message(failed)
    text = (
        f"{owner}: the fits on {len(failed)} of {len(reasons)} {unit} failed "
        f"(most often, {count} time(s): {top})"
    )
    if 2 * len(failed) > len(reasons):
        raise ValueError(
            f"{text}. More than half of the {unit} cannot be used; fix the data "
            f"or the estimator (e.g. fewer clusters, more samples)."
        )
    warnings.warn(
        f"{text}; each counts as {counts_as}.",
        VCPCRWarning,
        stacklevel=user_stacklevel(),
    )


def _interactive() -> bool:
    """Return whether a person is watching: a terminal or Jupyter, not CI."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        return False
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and "IPKernelApp" in shell.config:  # a Jupyter kernel
        return True
    isatty = getattr(sys.stderr, "isatty", None)  # tqdm writes to stderr
    return bool(isatty is not None and isatty())


def progress_shown(verbose: Any, owner: str) -> bool:
    """Check ``verbose`` and return whether to show the progress bar.

    ``None`` (the default of ``VCPCRCV``, ``multi_split`` and
    ``stability_selection``) shows it when running interactively: in a
    Jupyter kernel, or when standard error is a terminal, and in either case
    not under CI (the ``CI`` environment variable set to anything but
    ``""``, ``"0"``, ``"false"`` or ``"no"``), so never in a log file. As in
    scikit-learn, ``verbose`` is also an int: ``True`` or any int >= 1
    always shows it, ``False`` or ``0`` never does.

    Parameters
    ----------
    verbose : bool, int or None
        The caller's ``verbose``.
    owner : str
        The class or function it belongs to (for the message).

    Returns
    -------
    bool
        Whether to show the bar.

    Raises
    ------
    TypeError
        If ``verbose`` is not None, a bool or an int.
    ValueError
        If ``verbose`` is a negative int.
    """
    if verbose is None:
        return _interactive()
    message = (
        f"The 'verbose' parameter of {owner} must be None, a bool or an int "
        f">= 0. Got {verbose!r} instead."
    )
    if not isinstance(verbose, numbers.Integral | np.bool_):
        raise TypeError(message)
    if verbose < 0:
        raise ValueError(message)
    return bool(verbose)


def check_n_jobs(n_jobs: Any, owner: str) -> None:
    """Raise unless ``n_jobs`` is what joblib takes: None or a non-zero int."""
    if n_jobs is None:
        return
    if (
        isinstance(n_jobs, bool)
        or not isinstance(n_jobs, numbers.Integral)
        or n_jobs == 0
    ):
        raise ValueError(
            f"The 'n_jobs' parameter of {owner} must be None (one job, or the "
            f"joblib context's), a positive int, or a negative int (-1: all "
            f"cores). Got {n_jobs!r} instead."
        )


#: Seconds between two progress lines (the first and the last always print).
PROGRESS_INTERVAL = 10.0


class _Unfinished:
    """The type of :data:`UNFINISHED`."""

    def __repr__(self) -> str:
        return "UNFINISHED"


#: What :func:`run_parallel` returns for a task an interrupt stopped.
UNFINISHED: Any = _Unfinished()


def finished(results: Sequence[Any]) -> list[int]:
    """Return the positions of the tasks that finished (not :data:`UNFINISHED`)."""
    return [i for i, r in enumerate(results) if r is not UNFINISHED]


def _digest(value: Any, h: Any) -> None:
    """Feed ``value`` into the hash ``h``: data by content, objects by parameters."""
    import pandas as pd

    h.update(type(value).__qualname__.encode())
    if isinstance(value, pd.DataFrame | pd.Series):
        names = value.columns if isinstance(value, pd.DataFrame) else [value.name]
        _digest(list(map(repr, names)), h)
        _digest([str(t) for t in np.atleast_1d(value.dtypes)], h)
        h.update(pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes())
    elif isinstance(value, pd.Index):
        _digest(value.to_numpy(), h)
    elif isinstance(value, np.ndarray):
        h.update(f"{value.dtype.str}{value.shape}".encode())
        if value.dtype.hasobject or value.dtype.names:
            h.update(repr(value.tolist()).encode())
        else:
            h.update(np.ascontiguousarray(value).tobytes())
    else:
        _digest_object(value, h)


def _digest_object(value: Any, h: Any) -> None:
    """:func:`_digest` of containers, dataclasses, estimators and the rest."""
    if isinstance(value, dict):
        for key in sorted(value, key=repr):
            _digest(key, h)
            _digest(value[key], h)
    elif isinstance(value, list | tuple):
        h.update(str(len(value)).encode())
        for item in value:
            _digest(item, h)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        _digest({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, h)
    elif hasattr(value, "get_params"):  # an estimator: its class and parameters
        _digest(value.get_params(deep=False), h)
    else:  # None, numbers, strings, and whatever else by its repr
        h.update(repr(value).encode())


def fingerprint(*parts: Any) -> str:
    """Return the SHA-256 of ``parts``: what a checkpoint's results depend on.

    Arrays, DataFrames and Series count by content (values, dtypes, index and
    column names), dicts, lists, tuples and dataclasses by their items, an
    estimator by its class and ``get_params(deep=False)``, anything else by
    its ``repr``.

    Parameters
    ----------
    *parts : object
        The data, parameters, resampled rows and seeds of the tasks.

    Returns
    -------
    str
        A hexadecimal digest.
    """
    h = hashlib.sha256()
    _digest(parts, h)
    return h.hexdigest()


def _warning_category(name: str) -> type[Warning]:
    """Resolve a recorded ``module.qualname`` to a warning class, never importing."""
    module, _, qualname = name.rpartition(".")
    found: Any = sys.modules.get(module)
    for attr in qualname.split("."):
        found = getattr(found, attr, None)
    if isinstance(found, type) and issubclass(found, Warning):
        return found
    return UserWarning


@dataclasses.dataclass
class Checkpoint:
    """Where a long run keeps its finished tasks, and what they depend on.

    The file is JSON Lines (UTF-8 text, never unpickled): a header
    ``{"vcpcr_checkpoint": 1, "owner": ..., "fingerprint": ..., "n_tasks":
    ...}``, then one line per finished task, ``{"task": i, "result": ...,
    "warnings": [[category, message], ...]}``, appended and flushed as each
    task finishes, so that an interrupt or a crash loses at most the tasks
    that were running (a last line cut short is ignored). Floats are
    written as Python's shortest repr (``NaN`` and ``Infinity`` as
    Python's ``json`` writes them), so they read back exactly.

    Parameters
    ----------
    path : str or os.PathLike
        The file; created when it does not exist.
    owner : str
        The public function (for the header and the messages).
    key : str
        :func:`fingerprint` of the tasks' inputs and parameters; a file
        written for another key is refused.
    n_tasks : int
        The number of tasks.
    encode, decode : callable, optional
        A task's result to something ``json`` writes, and back (identity by
        default: dicts, lists, strings and floats).
    """

    path: Path
    owner: str
    key: str
    n_tasks: int
    encode: Callable[[Any], Any] = lambda result: result
    decode: Callable[[Any], Any] = lambda stored: stored

    @classmethod
    def open(
        cls,
        path: Any,
        owner: str,
        random_state: Any,
        parts: tuple[Any, ...],
        n_tasks: int,
        encode: Callable[[Any], Any] | None = None,
        decode: Callable[[Any], Any] | None = None,
    ) -> Checkpoint | None:
        """Check the caller's ``checkpoint`` and ``random_state``; None if no path.

        Raises
        ------
        TypeError
            If ``path`` is not a str or path.
        ValueError
            If ``random_state`` is not an int (a resumed run must draw the
            same resamples and seeds), or ``path`` is a directory.
        """
        if path is None:
            return None
        if not isinstance(path, str | os.PathLike):
            raise TypeError(
                f"The 'checkpoint' parameter of {owner} must be None or a file "
                f"path (str or os.PathLike). Got {path!r} instead."
            )
        if isinstance(random_state, bool) or not isinstance(
            random_state, numbers.Integral
        ):
            raise ValueError(
                f"The 'checkpoint' parameter of {owner} needs an int "
                f"random_state, so that a resumed run draws the same resamples "
                f"and seeds. Got random_state={random_state!r}; pass e.g. "
                f"random_state=0."
            )
        file = Path(path)
        if file.is_dir():
            raise ValueError(
                f"The 'checkpoint' parameter of {owner} must be a file, not the "
                f"directory {str(file)!r}; pass e.g. "
                f"{str(file / (owner + '.jsonl'))!r}."
            )
        checkpoint = cls(file, owner, fingerprint(owner, *parts), int(n_tasks))
        if encode is not None:
            checkpoint.encode = encode
        if decode is not None:
            checkpoint.decode = decode
        return checkpoint

    def _header(self) -> dict[str, Any]:
        return {
            "vcpcr_checkpoint": 1,
            "owner": self.owner,
            "fingerprint": self.key,
            "n_tasks": self.n_tasks,
        }

    def load(self) -> dict[int, tuple[Any, list[_Record]]]:
        """Return the finished tasks' results and warnings, by task index.

        Raises
        ------
        ValueError
            If the file is not a vcpcr checkpoint, or was written for other
            inputs or parameters.
        """
        if not self.path.exists():
            return {}
        lines = self.path.read_text(encoding="utf-8").splitlines()
        fix = (
            f"pass the same data, parameters and random_state to resume, or "
            f"another path (or delete {str(self.path)!r}) to start afresh"
        )
        try:
            header = json.loads(lines[0]) if lines else None
        except json.JSONDecodeError:
            header = None
        if not isinstance(header, dict) or header.get("vcpcr_checkpoint") != 1:
            raise ValueError(
                f"The checkpoint {str(self.path)!r} of {self.owner} is not a vcpcr "
                f"checkpoint file; {fix}."
            )
        if {k: header.get(k) for k in self._header()} != self._header():
            raise ValueError(
                f"The checkpoint {str(self.path)!r} was written by "
                f"{header.get('owner')} for other data or parameters than this "
                f"call of {self.owner} (fingerprint "
                f"{str(header.get('fingerprint'))[:12]} of "
                f"{header.get('n_tasks')} tasks, this call: {self.key[:12]} "
                f"of {self.n_tasks}); {fix}."
            )
        done: dict[int, tuple[Any, list[_Record]]] = {}
        for number, line in enumerate(lines[1:], start=2):
            try:
                entry = json.loads(line)
                index = int(entry["task"])
                if not 0 <= index < self.n_tasks:
                    raise ValueError(index)
                records = [(_warning_category(c), str(m)) for c, m in entry["warnings"]]
                done[index] = (self.decode(entry["result"]), records)
            except (ValueError, KeyError, TypeError) as exc:
                if number == len(lines):  # cut short by a crash: run it again
                    break
                raise ValueError(
                    f"The checkpoint {str(self.path)!r} of {self.owner} has a bad "
                    f"line {number} ({exc}); {fix}."
                ) from exc
        return done

    def writer(self, resumed: bool) -> TextIO:
        """Open the file to append to (a new file starts with the header)."""
        if not resumed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            stream = self.path.open("w", encoding="utf-8")
            stream.write(json.dumps(self._header()) + "\n")
            stream.flush()
            return stream
        text = self.path.read_text(encoding="utf-8")
        if not text.endswith("\n"):  # drop a last line cut short by a crash
            self.path.write_text(text[: text.rfind("\n") + 1], encoding="utf-8")
        return self.path.open("a", encoding="utf-8")

    def append(
        self, stream: TextIO, index: int, result: Any, records: list[_Record]
    ) -> None:
        """Write one finished task and flush it to disk."""
        caught = [
            [f"{c.__module__}.{c.__qualname__}", message] for c, message in records
        ]
        entry = {"task": index, "result": self.encode(result), "warnings": caught}
        stream.write(json.dumps(entry) + "\n")
        stream.flush()
        os.fsync(stream.fileno())


def _duration(seconds: float) -> str:
    """Return ``seconds`` as ``"42 s"``, ``"3 min 20 s"`` or ``"1 h 05 min"``."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class _Progress:
    """The progress of a run: tqdm's bar when interactive, else lines on stderr.

    The lines count the tasks done (those a checkpoint held included), the
    time elapsed, and the time left at this call's rate so far: one when the
    first task ends (the first estimate of the whole run's time), then every
    :data:`PROGRESS_INTERVAL` seconds, and one at the end.
    """

    def __init__(self, shown: bool, desc: str, n_tasks: int, fits: int, held: int):
        from tqdm.auto import tqdm

        self.desc, self.n_tasks, self.fits = desc, n_tasks, fits
        self.done = self.held = held
        self.lines = shown and not _interactive()
        self.bar = tqdm(
            total=n_tasks * fits,
            initial=held * fits,
            desc=desc,
            unit="fit",
            disable=not shown or self.lines,
        )
        self.start = self.last = time.monotonic()
        if self.lines:
            resumed = f", {held} from the checkpoint" if held else ""
            self._print(f"{n_tasks} tasks of {fits} fit(s){resumed}")

    def _print(self, text: str) -> None:
        print(f"[vcpcr] {self.desc}: {text}", file=sys.stderr, flush=True)

    def update(self) -> None:
        """Count one more task done; print a line when it is time."""
        self.done += 1
        self.bar.update(self.fits)
        now = time.monotonic()
        last = self.done == self.n_tasks
        first = self.done - self.held == 1  # the first estimate of the time left
        if not self.lines or (
            now - self.last < PROGRESS_INTERVAL and not (last or first)
        ):
            return
        self.last = now
        elapsed = now - self.start
        rate = elapsed / (self.done - self.held)
        left = (
            "done"
            if last
            else f"about {_duration(rate * (self.n_tasks - self.done))} left"
        )
        self._print(
            f"{self.done}/{self.n_tasks} tasks done "
            f"({100 * self.done / self.n_tasks:.0f}%), {_duration(elapsed)} "
            f"elapsed, {left}"
        )

    def close(self) -> None:
        self.bar.close()


def _results(
    function: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    todo: list[int],
    n_jobs: int | None,
) -> Iterator[tuple[int, Any, list[_Record]]]:
    """Run the tasks ``todo`` through joblib; yield each as it ends."""
    from joblib import Parallel, delayed

    if not todo:
        return
    jobs = (delayed(_recorded)(i, function, *tasks[i]) for i in todo)
    try:  # results as they come, for the progress bar
        parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    except ValueError:  # a backend without generators (multiprocessing)
        parallel = Parallel(n_jobs=n_jobs)
    yield from parallel(jobs)


def run_parallel(
    function: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    *,
    n_jobs: int | None,
    verbose: bool,
    desc: str,
    unit: str = "resamples",
    fits_per_task: int = 1,
    interruptible: bool = False,
    checkpoint: Checkpoint | None = None,
) -> list[Any]:
    """Run ``function(*task)`` for every task through joblib; results in order.

    Each task makes ``fits_per_task`` fits (a resample one, a CV fold one
    per grid point); the progress bar counts fits, advancing by
    ``fits_per_task`` as each task ends (in the order they end). A task's
    elements are passed to joblib as separate arguments, as scikit-learn
    passes its ``X``, so that an element that is the same object in every
    task (the data) goes to the workers once: the loky backend memory-maps
    numpy arrays above 1 MB wherever they are in the arguments, the dask
    backend scatters once per call each argument above 1 kB that is an
    array, a DataFrame or an Index, but not a tuple or a dataclass that
    holds one (put the data itself in the task, see
    ``vcpcr.inference._multi_split._apart``). A warning raised in a task is recorded
    there; messages that differ only in their numbers are one kind, counted
    at most ``fits_per_task`` times per task, and each kind is issued once
    at the user's line with its count and its first message, e.g. ``In
    cross-validation (3 of 6 fold x grid fits): All lasso weights are zero
    ...`` (``"; the first"`` when the kind had several messages).

    Parameters
    ----------
    function : callable
        A picklable function (module level).
    tasks : sequence of tuple
        The arguments of each call.
    n_jobs : int or None
        joblib's ``n_jobs``.
    verbose : bool
        Show the progress (the caller's ``verbose`` resolved by
        :func:`progress_shown`): tqdm's bar when interactive, otherwise a
        line on standard error every :data:`PROGRESS_INTERVAL` seconds with
        the tasks done, the time elapsed and an estimate of the time left.
    desc : str
        What runs (``"cross-validation"``, ``"multi_split"``): the label of
        the progress and of the warnings.
    unit : str, default="resamples"
        What the warnings' counts count (``"fold x grid fits"``).
    fits_per_task : int, default=1
        Fits per task.
    interruptible : bool, default=False
        On a ``KeyboardInterrupt``, return the results of the tasks that
        finished (:data:`UNFINISHED` for the others) with a
        ``VCPCRWarning`` saying how many of how many finished, instead of
        raising; it is raised when none finished.
    checkpoint : Checkpoint, optional
        Tasks it holds are not run again; each task that finishes is
        appended to it.

    Returns
    -------
    list
        ``function(*task)`` for every task, in order (:data:`UNFINISHED`
        for a task an interrupt stopped).

    Raises
    ------
    ValueError
        If ``checkpoint`` holds another run's tasks.
    """
    check_n_jobs(n_jobs, desc)
    held = checkpoint.load() if checkpoint is not None else {}
    done: list[Any] = [held.get(i, UNFINISHED) for i in range(len(tasks))]
    todo = [i for i in range(len(tasks)) if i not in held]
    stream = checkpoint.writer(bool(held)) if checkpoint is not None else None
    progress = _Progress(verbose, desc, len(tasks), fits_per_task, len(held))
    try:
        for index, result, records in _results(function, tasks, todo, n_jobs):
            done[index] = (result, records)
            if checkpoint is not None and stream is not None:
                checkpoint.append(stream, index, result, records)
            progress.update()
    except KeyboardInterrupt:
        if not interruptible or not finished(done):
            raise
        _warn_interrupted(desc, len(finished(done)), len(tasks), checkpoint)
    finally:
        progress.close()
        if stream is not None:
            stream.close()
    _issue_warnings(
        [d for d in done if d is not UNFINISHED], desc, unit, fits_per_task, len(tasks)
    )
    return [d if d is UNFINISHED else d[0] for d in done]


def _warn_interrupted(
    desc: str, n_done: int, n_tasks: int, checkpoint: Checkpoint | None
) -> None:
    """Warn that an interrupt stopped the run after ``n_done`` of ``n_tasks``."""
    kept = (
        f"; the finished ones are in the checkpoint {str(checkpoint.path)!r}: call "
        f"again with the same arguments to run only the others"
        if checkpoint is not None
        else "; pass checkpoint=path to keep them for a resumed run"
    )
    warnings.warn(
        f"{desc} was interrupted: {n_done} of {n_tasks} tasks finished; the "
        f"result holds those only and is marked incomplete{kept}.",
        VCPCRWarning,
        stacklevel=user_stacklevel(),
    )


def _issue_warnings(
    done: list[tuple[Any, list[_Record]]],
    desc: str,
    unit: str,
    fits_per_task: int,
    n_tasks: int,
) -> None:
    """Issue each kind of the tasks' warnings once, with its count."""
    total = n_tasks * fits_per_task
    messages: dict[_Record, list[str]] = {}
    for _, caught in done:
        seen: Counter[_Record] = Counter()
        for record in caught:
            kind = _kind(record)
            seen[kind] += 1
            if seen[kind] <= fits_per_task:
                messages.setdefault(kind, []).append(record[1])
    for (category, _), issued in messages.items():
        first = "; the first" if len(set(issued)) > 1 else ""
        warnings.warn(
            f"In {desc} ({len(issued)} of {total} {unit}{first}): {issued[0]}",
            category,
            stacklevel=user_stacklevel(),
        )


def task_seeds(random_state: Any, n_tasks: int) -> list[int]:
    """Return one independent seed per task (``numpy.random.SeedSequence``).

    The seeds of the CV folds and of the resamples: drawn up front from the
    caller's ``random_state``, so that results do not depend on ``n_jobs``.

    Parameters
    ----------
    random_state : int, numpy.random.Generator or None
        The caller's seed.
    n_tasks : int
        Number of tasks.

    Returns
    -------
    list of int
        One seed per task.
    """
    base = int(check_random_state(random_state).integers(2**63 - 1))
    return [
        int(s.generate_state(1)[0]) for s in np.random.SeedSequence(base).spawn(n_tasks)
    ]
