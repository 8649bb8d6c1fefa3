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
"""

from __future__ import annotations

import numbers
import os
import re
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vcpcr._validation import check_random_state
from vcpcr.exceptions import VCPCRWarning, user_stacklevel

__all__ = [
    "check_failures",
    "check_n_jobs",
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


def run_parallel(
    function: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    *,
    n_jobs: int | None,
    verbose: bool,
    desc: str,
    unit: str = "resamples",
    fits_per_task: int = 1,
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
        Show a tqdm progress bar (the caller's ``verbose`` resolved by
        :func:`progress_shown`).
    desc : str
        What runs (``"cross-validation"``, ``"multi_split"``): the label of
        the progress bar and of the warnings.
    unit : str, default="resamples"
        What the warnings' counts count (``"fold x grid fits"``).
    fits_per_task : int, default=1
        Fits per task.

    Returns
    -------
    list
        ``function(*task)`` for every task, in order.
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    check_n_jobs(n_jobs, desc)
    jobs = (delayed(_recorded)(i, function, *task) for i, task in enumerate(tasks))
    try:  # results as they come, for the progress bar
        parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    except ValueError:  # a backend without generators (multiprocessing)
        parallel = Parallel(n_jobs=n_jobs)
    done: list[Any] = [None] * len(tasks)
    total = len(tasks) * fits_per_task
    with tqdm(total=total, desc=desc, unit="fit", disable=not verbose) as bar:
        for index, result, records in parallel(jobs):
            done[index] = (result, records)
            bar.update(fits_per_task)
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
    return [result for result, _ in done]


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
