"""The joblib runner of the folds and the resamples, and their warnings' counts.

``VCPCRCV`` runs its folds, multi-split and stability selection their
resamples, through :func:`run_tasks`: ``joblib.Parallel`` (any joblib
backend, e.g. dask through ``joblib.parallel_config``) with a tqdm progress
bar, the results in the order of the tasks. A warning raised inside a task
is recorded there (a process backend would lose it) and returned as data;
:func:`reissue_counted` then issues each kind of warning once, with how
often it occurred, instead of once per task.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from vcpcr.exceptions import user_stacklevel

__all__ = ["Record", "reissue_counted", "run_tasks", "warning_kind"]

#: A warning recorded in a task: its category and message.
Record = tuple[type[Warning], str]

_NUMBER = re.compile(r"[-+]?\d[\d.]*(?:e[-+]?\d+)?")


def _recorded(
    function: Callable[..., Any], args: tuple[Any, ...]
) -> tuple[Any, list[Record]]:
    """Run ``function(*args)`` in a worker, returning its warnings as data."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args)
    return result, [(c.category, str(c.message)) for c in caught]


def run_tasks(
    function: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    *,
    n_jobs: int | None,
    verbose: bool,
    desc: str,
) -> list[tuple[Any, list[Record]]]:
    """Run ``function(*task)`` for every task through joblib, in order.

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
        Label of the progress bar.

    Returns
    -------
    list of (result, list of Record)
        For every task, in order: ``function(*task)`` and the warnings it
        raised (not issued; see :func:`reissue_counted`).
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    jobs = (delayed(_recorded)(function, task) for task in tasks)
    out = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    return list(tqdm(out, total=len(tasks), desc=desc, disable=not verbose))


def warning_kind(record: Record) -> Record:
    """Return the kind of a warning: its category and message up to its numbers.

    Parameters
    ----------
    record : Record
        A recorded warning.

    Returns
    -------
    Record
        The category, and the message with every number replaced by ``#``.
    """
    category, message = record
    return category, _NUMBER.sub("#", message)


def reissue_counted(
    occurrences: Iterable[Record], *, where: str, total: int, unit: str
) -> None:
    """Issue each kind of warning once, saying how often it occurred.

    Messages that differ only in their numbers are one kind
    (:func:`warning_kind`); the warning issued shows the first message of
    its kind (``"; the first"`` when the kind had several), e.g. ``In
    cross-validation (3 of 6 fold x grid fits): All lasso weights are zero
    ...``. It names the user's line (``user_stacklevel``).

    Parameters
    ----------
    occurrences : iterable of Record
        The warnings to count, one entry per occurrence (the caller decides
        what occurs once: every warning of a fold, or each kind once per
        resample).
    where : str
        What ran (``"cross-validation"``, ``"multi_split"``).
    total : int
        How many ``unit`` there were.
    unit : str
        What was counted (``"fold x grid fits"``, ``"resamples"``).
    """
    kinds: dict[Record, list[str]] = {}
    for record in occurrences:
        kinds.setdefault(warning_kind(record), []).append(record[1])
    for (category, _), messages in kinds.items():
        first = "; the first" if len(set(messages)) > 1 else ""
        warnings.warn(
            f"In {where} ({len(messages)} of {total} {unit}{first}): {messages[0]}",
            category,
            stacklevel=user_stacklevel(),
        )
