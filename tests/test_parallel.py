"""The joblib runner of the folds and the resamples (vcpcr._parallel)."""

from __future__ import annotations

import warnings

import pytest

from vcpcr._parallel import run_parallel
from vcpcr.exceptions import VCPCRWarning


def _square_and_warn(x):
    if x % 2:
        warnings.warn(f"odd {x % 3}", VCPCRWarning, stacklevel=1)
    if x > 4:
        warnings.warn(f"big {x}", UserWarning, stacklevel=1)
    return x * x


@pytest.mark.parametrize("n_jobs", [1, 2], ids=["serial", "two-processes"])
def test_runner_keeps_the_order_and_counts_the_warnings(n_jobs):
    tasks = [(x,) for x in range(7)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run_parallel(
            _square_and_warn, tasks, n_jobs=n_jobs, verbose=False, desc="test"
        )
    assert out == [x * x for x in range(7)]
    messages = sorted((c.category.__name__, str(c.message)) for c in caught)
    assert {c.filename for c in caught} == {__file__}  # the caller's line (#20)
    # messages that differ only in numbers are counted together
    assert messages == [
        ("UserWarning", "In test (2 of 7 resamples; the first): big 5"),
        ("VCPCRWarning", "In test (3 of 7 resamples; the first): odd 1"),
    ]


def _warn_n_times(n):
    for _ in range(n):
        warnings.warn("same words", UserWarning, stacklevel=1)
    return n


def test_a_kind_counts_at_most_once_per_fit_of_a_task():
    """A task of two fits that warns three times counts twice (never more
    occurrences than fits), and one message is not called "the first"."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_parallel(
            _warn_n_times,
            [(3,), (0,), (1,)],
            n_jobs=1,
            verbose=False,
            desc="cross-validation",
            unit="fold x grid fits",
            fits_per_task=2,
        )
    assert [str(c.message) for c in caught] == [
        "In cross-validation (3 of 6 fold x grid fits): same words"
    ]
