"""The joblib runner of the folds and the resamples, and their warnings' counts.

``VCPCRCV`` runs its folds, multi-split and stability selection their
resamples, through :func:`run_parallel`: ``joblib.Parallel`` (any joblib
backend, e.g. dask through ``joblib.parallel_config``) with a tqdm progress
bar, the results in the order of the tasks, each task seeded by
:func:`task_seeds`. A warning raised inside a task
is recorded there (a process backend would lose it) and issued once per
kind afterwards, with how often it occurred, instead of once per task.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vcpcr._validation import check_random_state
from vcpcr.exceptions import user_stacklevel

__all__ = ["run_parallel", "task_seeds"]

#: A warning recorded in a task: its category and message.
_Record = tuple[type[Warning], str]

_NUMBER = re.compile(r"[-+]?\d[\d.]*(?:e[-+]?\d+)?")


def _recorded(
    function: Callable[..., Any], args: tuple[Any, ...]
) -> tuple[Any, list[_Record]]:
    """Run ``function(*args)`` in a worker, returning its warnings as data."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args)
    return result, [(c.category, str(c.message)) for c in caught]


def _kind(record: _Record) -> _Record:
    """Return the category and the message with every number replaced by ``#``."""
    category, message = record
    return category, _NUMBER.sub("#", message)


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
    per grid point). A warning raised in a task is recorded there; messages
    that differ only in their numbers are one kind, counted at most
    ``fits_per_task`` times per task, and each kind is issued once at the
    user's line with its count and its first message, e.g. ``In
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
        Show a tqdm progress bar.
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

    jobs = (delayed(_recorded)(function, task) for task in tasks)
    out = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    done = list(tqdm(out, total=len(tasks), desc=desc, disable=not verbose))
    messages: dict[_Record, list[str]] = {}
    for _, caught in done:
        seen: Counter[_Record] = Counter()
        for record in caught:
            kind = _kind(record)
            seen[kind] += 1
            if seen[kind] <= fits_per_task:
                messages.setdefault(kind, []).append(record[1])
    total = len(tasks) * fits_per_task
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
