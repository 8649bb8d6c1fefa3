"""Shared fixtures: small data sets with a known block structure."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from importlib.util import find_spec

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

if os.environ.get("PYTEST_XDIST_WORKER"):
    # `pytest -n auto`: the workers fill the cores, so each keeps one BLAS
    # thread (its subprocesses too); more would oversubscribe the cores.
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"
    threadpool_limits(1)

# The scripts that regenerate the reference data write files when imported;
# --doctest-modules must not collect them.
collect_ignore_glob = ["reference/*.py"]

#: The survival extra (lifelines for step 2, scikit-survival for the Cox
#: elastic-net weights); CI also runs the suite without it, on newest pandas.
HAVE_SURVIVAL = find_spec("lifelines") is not None and find_spec("sksurv") is not None
needs_survival = pytest.mark.skipif(
    not HAVE_SURVIVAL, reason="needs the survival extra: pip install 'vcpcr[survival]'"
)
#: VCPCRCV's tuning defaults before #27's sparse rule (the fold-averaged
#: family score, the best point, the paper's latent variables, the paper's
#: 10 lam_ratios of penalized weights), for the tests about that tuning and
#: those compared with values recorded with it.
PREVIOUS_DEFAULT = {
    "latent": "paper",
    "scoring": None,
    "selection": "min",
    "lam_ratios": 10 ** np.linspace(-3, 0, 10),
}
#: Modules whose doctests fit lifelines / scikit-survival models.
SURVIVAL_DOCTESTS = ("_increment.py", "_increment_external.py", "_report.py")


def pytest_collection_modifyitems(config, items):
    """Skip the survival modules' doctests without the survival extra.

    ``--doctest-modules`` collects ``vcpcr/`` too, which has no conftest of
    its own (a ``conftest`` module there or at the root would shadow this
    one in joblib's worker processes).
    """
    if HAVE_SURVIVAL:
        return
    for item in items:
        if isinstance(item, pytest.DoctestItem) and item.path.name in SURVIVAL_DOCTESTS:
            item.add_marker(needs_survival)


def doc_examples(text):
    """(code, shown) for each python block of a page followed by a text block."""
    blocks = re.findall(r"```(python|text)\n(.*?)```", text, flags=re.S)
    return [
        (code, shown)
        for (kind, code), (next_kind, shown) in itertools.pairwise(blocks)
        if kind == "python" and next_kind == "text"
    ]


def printed_lines(code):
    """Run ``code`` in a fresh interpreter: its output lines, right-stripped."""
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line.rstrip() for line in out.splitlines()]


def fold_columns(n_features, covariates=(), strata=()):
    """The ``FoldSpec.columns`` of data whose ``covariates`` and ``strata`` are
    at these positions (the others clustered), as ``VCPCRCV`` passes them."""
    from vcpcr._input import ColumnLayout

    cov, st = np.asarray(covariates, np.intp), np.asarray(strata, np.intp)
    clustered = np.setdiff1d(np.arange(n_features), np.concatenate([cov, st]))
    return ColumnLayout(np.zeros((0, cov.size)), cov, clustered, n_features, st)


def run_fold(X, y, train, test, spec, seed):
    """``fit_fold`` on one fold of ``(X, y)``, the response prepared once.

    As ``VCPCRCV`` runs a fold: ``y`` validated by the family's ``prepare``
    on all rows, restricted to the training rows (``Family.restrict``), the
    test rows' prepared outcome for the family's scorings and their ``y``
    for a scorer of a fold model.
    """
    from vcpcr._tuning import fit_fold

    family = spec.family
    prepared = family.prepare(y)
    return fit_fold(
        X,
        train,
        family.restrict(prepared, train),
        X[test],
        prepared.outcome[test],
        spec,
        seed,
        y_test=np.asarray(y)[test],
    )


def make_blocks(n=60, n_blocks=4, block_size=5, n_noise=20, rho=0.8, seed=0):
    """X with correlated blocks plus noise variables, and y driven by blocks 0 and 2.

    Returns X (n x p), y (gaussian), the true block labels (-1 = noise) and b.
    """
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, n_blocks))
    blocks = np.sqrt(rho) * np.repeat(z, block_size, axis=1) + np.sqrt(
        1 - rho
    ) * rng.normal(size=(n, n_blocks * block_size))
    X = np.hstack([blocks, rng.normal(size=(n, n_noise))])
    labels = np.concatenate(
        [np.repeat(np.arange(n_blocks), block_size), np.full(n_noise, -1)]
    )
    b = np.zeros(X.shape[1])
    b[labels == 0] = 1.0
    b[labels == 2] = -1.0
    y = X @ b + 0.5 * rng.normal(size=n)
    return X, y, labels, b


@pytest.fixture
def blocks():
    return make_blocks()


@pytest.fixture
def blocks_df(blocks):
    X, y, labels, b = blocks
    cols = [f"g{j}" for j in range(X.shape[1])]
    return pd.DataFrame(X, columns=cols), pd.Series(y, name="weight"), labels, b


@pytest.fixture
def binary_blocks():
    X, y, labels, _b = make_blocks(n=120, seed=1)
    rng = np.random.default_rng(2)
    prob = 1 / (1 + np.exp(-3 * (y - y.mean()) / y.std()))
    ybin = np.where(rng.uniform(size=y.size) < prob, "case", "control")
    return X, ybin, labels


def record_starts(monkeypatch):
    """Record the initial partitions VCPCRCV's folds draw (in fold order, n_jobs=1)."""
    from vcpcr import _tuning as tuning

    drawn = []
    original = tuning.random_partition

    def recording(*args, **kwargs):
        labels = original(*args, **kwargs)
        drawn.append(labels)
        return labels

    monkeypatch.setattr(tuning, "random_partition", recording)
    return drawn
