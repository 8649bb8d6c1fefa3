"""The joblib runner of the folds and the resamples (vcpcr._parallel)."""

from __future__ import annotations

import io
import sys
import types
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from conftest import make_blocks

from vcpcr import VCPCR, VCPCRCV
from vcpcr._parallel import progress_shown, run_parallel
from vcpcr.exceptions import VCPCRWarning
from vcpcr.inference import multi_split, stability_selection


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


# ------------------------------------------------------------------ progress
class _Terminal(io.StringIO):
    """A standard error that says it is a terminal (or not)."""

    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


class _Shell:
    """IPython's shell as ``get_ipython()`` returns it in a Jupyter kernel."""

    config = {"IPKernelApp": {"connection_file": "kernel.json"}}  # noqa: RUF012


@pytest.fixture
def watched(monkeypatch):
    """Set where the code runs: ``watched(tty=..., ci=..., jupyter=...)``."""

    def set_up(*, tty, ci=None, jupyter=False):
        stderr = _Terminal(tty)
        monkeypatch.setattr(sys, "stderr", stderr)
        if ci is None:
            monkeypatch.delenv("CI", raising=False)
        else:
            monkeypatch.setenv("CI", ci)
        ipython = types.ModuleType("IPython")
        ipython.get_ipython = lambda: _Shell() if jupyter else None
        monkeypatch.setitem(sys.modules, "IPython", ipython)
        return stderr

    return set_up


PROGRESS_CASES = {
    "auto-terminal": ({"tty": True}, None, True),
    "auto-jupyter": ({"tty": False, "jupyter": True}, None, True),
    "auto-log-file": ({"tty": False}, None, False),
    "auto-ci": ({"tty": True, "ci": "true"}, None, False),
    "auto-ci-jupyter": ({"tty": False, "ci": "1", "jupyter": True}, None, False),
    "auto-ci-false": ({"tty": True, "ci": "false"}, None, True),
    "true-log-file": ({"tty": False}, True, True),
    "one-ci": ({"tty": False, "ci": "true"}, 1, True),
    "numpy-true": ({"tty": False}, np.bool_(True), True),
    "false-terminal": ({"tty": True}, False, False),
    "zero-jupyter": ({"tty": True, "jupyter": True}, 0, False),
}


@pytest.mark.parametrize(
    ("where", "verbose", "shown"), PROGRESS_CASES.values(), ids=PROGRESS_CASES
)
def test_progress_shown_when_interactive_or_asked(watched, where, verbose, shown):
    """verbose=None shows the bar in a terminal or Jupyter, never in a log
    or under CI; True/int >= 1 always, False/0 never (scikit-learn's ints)."""
    watched(**where)
    assert progress_shown(verbose, "f") is shown


@pytest.mark.parametrize(
    ("verbose", "error"),
    [("yes", TypeError), (0.5, TypeError), (-1, ValueError)],
    ids=["str", "float", "negative"],
)
def test_bad_verbose(verbose, error):
    with pytest.raises(error, match=r"'verbose' parameter of f must be None, a bool"):
        progress_shown(verbose, "f")


def _bar_line(text):
    """The last state of a tqdm bar written to a stream: '6/6 ... fit/s'."""
    return text.replace("\r", "\n").strip().splitlines()[-1]


def test_bar_counts_fits_not_tasks(watched):
    """A task of three fits advances the bar by three (in a terminal)."""
    stderr = watched(tty=True)
    run_parallel(
        _warn_n_times,
        [(0,), (0,)],
        n_jobs=1,
        verbose=True,
        desc="cross-validation",
        fits_per_task=3,
    )
    last = _bar_line(stderr.getvalue())
    assert last.startswith("cross-validation: 100%")
    assert " 6/6 " in last
    assert "fit/s" in last


def test_cv_bar_counts_fold_x_grid_fits_and_shows_itself(watched):
    """VCPCRCV's default bar appears in a terminal and counts folds x grid
    points (it counted folds); under CI it stays off."""
    X, y, _, _ = make_blocks(n=40, n_blocks=2, n_noise=6)
    cv = VCPCRCV(n_clusters=2, lam_ratios=[0.3, 0.6], n_init=1, cv=3, random_state=0)
    stderr = watched(tty=True)
    cv.fit(X, y)
    n_fits = 3 * len(cv.cv_results_)  # 3 folds x 6 deltas x 2 lam_ratios
    last = _bar_line(stderr.getvalue())
    assert last.startswith("cross-validation: 100%")
    assert f" {n_fits}/{n_fits} " in last
    quiet = watched(tty=True, ci="true")
    cv.fit(X, y)
    assert quiet.getvalue() == ""


@pytest.mark.parametrize(
    ("function", "size"),
    [(multi_split, {"n_splits": 4}), (stability_selection, {"n_pairs": 2})],
    ids=["multi_split", "stability_selection"],
)
def test_resampling_bars_show_themselves_in_a_terminal(watched, function, size):
    """Four fits (splits; halves of two pairs): a bar in a terminal, none in
    a log."""
    X, y, _, _ = make_blocks(n=40, n_blocks=2, n_noise=6)
    template = VCPCR(n_clusters=2, n_init=1)
    stderr = watched(tty=True)
    function(template, X, y, **size, random_state=0)
    assert " 4/4 " in _bar_line(stderr.getvalue())
    log = watched(tty=False)
    function(template, X, y, **size, random_state=0)
    assert log.getvalue() == ""


# ---------------------------------------------------------------- backends
@pytest.mark.parametrize("backend", ["multiprocessing", "threading"])
def test_other_joblib_backends_give_the_results_in_order(backend):
    """joblib's multiprocessing backend returns no generator (run_parallel
    raised); threading returns one."""
    tasks = [(x,) for x in range(7)]
    with (
        joblib.parallel_config(backend=backend),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        out = run_parallel(_square_and_warn, tasks, n_jobs=2, verbose=False, desc="t")
    assert out == [x * x for x in range(7)]
    assert len(caught) == 2


# -------------------------------------------------------------------- dask
@pytest.fixture
def dask_client():
    """A local dask cluster of two single-threaded workers (in-process: fast),
    closed within the test, whose filter takes joblib's unraisable exception
    at the close (see below)."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def _under_dask(call, X):
    """Run ``call()`` under joblib's dask backend; return it and the warnings.

    dask warns of every task graph larger than its threshold, which is set
    below the size of ``X``: the data sent with every task would be warned of.
    """
    import dask

    threshold = {"distributed.admin.large-graph-warning-threshold": X.nbytes // 2}
    with (
        dask.config.set(threshold),
        joblib.parallel_config(backend="dask"),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        out = call()
    return out, [str(c.message) for c in caught]


DASK_CALLS = {
    "VCPCRCV": lambda X, y, n_jobs: (
        VCPCRCV(
            n_clusters=2,
            lam_ratios=[0.3, 0.6],
            n_init=1,
            cv=3,
            n_jobs=n_jobs,
            random_state=0,
        )
        .fit(X, y)
        .cv_results_.drop(columns=["mean_fit_time", "std_fit_time"])
    ),
    "multi_split": lambda X, y, n_jobs: (
        multi_split(
            VCPCR(n_clusters=2, n_init=1),
            X,
            y,
            n_splits=6,
            n_jobs=n_jobs,
            random_state=0,
        ).split_pvalues
    ),
    "stability_selection": lambda X, y, n_jobs: (
        stability_selection(
            VCPCR(n_clusters=2, n_init=1),
            X,
            y,
            n_pairs=3,
            n_jobs=n_jobs,
            random_state=0,
        ).selection_frequency
    ),
}


# joblib's dask backend keeps futures in a weak-key dict whose destroy callback
# can raise KeyError when collected after the client closed (inside joblib's
# _dask.py, not in vcpcr): an unraisable exception that says nothing of results.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("call", DASK_CALLS.values(), ids=DASK_CALLS)
def test_dask_sends_the_data_once_and_gives_identical_results(dask_client, call):
    """Under a dask backend the data goes to the workers once (it went with
    every task: "Sending large graph" per task), results as joblib's default."""
    X, y, _, _ = make_blocks(n=60, n_blocks=2, n_noise=400)  # X: 197 kB
    expected = call(X, y, None)
    remote, messages = _under_dask(lambda: call(X, y, -1), X)
    assert not [m for m in messages if "large graph" in m]
    if isinstance(expected, pd.DataFrame):
        pd.testing.assert_frame_equal(remote, expected)
    else:
        pd.testing.assert_series_equal(remote, expected)


# ------------------------------------------------- interrupts and checkpoints
def _interrupt_on(monkeypatch, module, name, n_done):
    """Make the call of ``module.name`` after the first ``n_done`` raise."""
    real, calls = getattr(module, name), []

    def task(*args):
        calls.append(1)
        if len(calls) > n_done:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(module, name, task)
    return calls


@pytest.mark.parametrize(
    ("function", "task", "size", "n_done", "kept"),
    [
        (multi_split, "_split_task", {"n_splits": 4, "common_tree": None}, 3, 3),
        (stability_selection, "_subsample_labels", {"n_pairs": 3}, 5, 2),
    ],
    ids=["multi_split", "stability_selection"],
)
def test_resampling_interrupt_and_resume(
    monkeypatch, tmp_path, function, task, size, n_done, kept
):
    """An interrupt returns the finished splits (whole pairs) marked
    incomplete; the checkpoint resumes to the uninterrupted result exactly,
    and refuses other data."""
    import vcpcr.inference._multi_split as ms
    import vcpcr.inference._stability as st

    module = ms if function is multi_split else st
    X, y, _, _ = make_blocks(n=40, n_blocks=2, n_noise=6)
    template = VCPCR(n_clusters=2, n_init=1)
    full = function(template, X, y, **size, random_state=0, verbose=False)
    path = tmp_path / "run.jsonl"
    with monkeypatch.context() as patch:
        _interrupt_on(patch, module, task, n_done)
        with pytest.warns(VCPCRWarning, match=rf"interrupted: {n_done} of "):
            part = function(template, X, y, **size, random_state=0, checkpoint=path)
    assert not part.complete
    assert full.complete
    if function is multi_split:
        assert part.n_splits == kept
        pd.testing.assert_frame_equal(
            part.split_pvalues, full.split_pvalues.iloc[:kept], check_exact=True
        )
    else:
        assert part.n_pairs == kept
        pd.testing.assert_frame_equal(
            part.labels, full.labels.iloc[: 2 * kept], check_exact=True
        )
    calls = _interrupt_on(monkeypatch, module, task, 100)
    resumed = function(template, X, y, **size, random_state=0, checkpoint=path)
    assert len(calls) == (4 if function is multi_split else 6) - n_done
    assert resumed.complete
    if function is multi_split:
        pd.testing.assert_series_equal(resumed.pvalues, full.pvalues, check_exact=True)
        pd.testing.assert_frame_equal(resumed.splits, full.splits, check_exact=True)
        pd.testing.assert_frame_equal(resumed.modules, full.modules, check_exact=True)
    else:
        pd.testing.assert_frame_equal(resumed.labels, full.labels, check_exact=True)
        pd.testing.assert_series_equal(
            resumed.selection_frequency, full.selection_frequency, check_exact=True
        )
    with pytest.raises(ValueError, match=r"for other data or parameters"):
        function(template, X[:, ::-1], y, **size, random_state=0, checkpoint=path)


def test_multi_split_checkpoint_needs_no_common_tree(tmp_path):
    X, y, _, _ = make_blocks(n=40, n_blocks=2, n_noise=6)
    with pytest.raises(ValueError, match=r"needs common_tree=None"):
        multi_split(
            VCPCR(n_clusters=2, n_init=1),
            X,
            y,
            n_splits=2,
            random_state=0,
            checkpoint=tmp_path / "a.jsonl",
        )


def test_a_line_cut_short_by_a_crash_is_run_again(tmp_path):
    from vcpcr._parallel import Checkpoint

    checkpoint = Checkpoint.open(tmp_path / "c.jsonl", "t", 0, (1, 2), 3)
    run_parallel(
        _square_and_warn,
        [(0,), (2,), (4,)],
        n_jobs=1,
        verbose=False,
        desc="t",
        checkpoint=checkpoint,
    )
    text = (tmp_path / "c.jsonl").read_text()
    (tmp_path / "c.jsonl").write_text(text[: len(text) - 5])  # the last cut short
    assert set(checkpoint.load()) == {0, 1}
    out = run_parallel(
        _square_and_warn,
        [(0,), (2,), (4,)],
        n_jobs=1,
        verbose=False,
        desc="t",
        checkpoint=checkpoint,
    )
    assert out == [0, 4, 16]
    assert set(checkpoint.load()) == {0, 1, 2}  # the file is whole again
