"""The VC-PCR paper's benchmark: nested-CV simulation study and Liver experiment.

Run from the shell as ``vcpcr benchmark`` (see ``vcpcr benchmark --help``) or
from Python:

>>> from vcpcr.benchmark import run_study  # doctest: +SKIP
>>> result = run_study("out", n=[50], rho=[0.6], config=[1, 2, 3],
...                    replicates=3, n_jobs=2)  # doctest: +SKIP
>>> print(result.summary)  # doctest: +SKIP

Modules: ``_methods`` (the eight methods and their grids), ``_grid_fits`` (one
training fold's grid of fits), ``_protocol`` (folds, fold scaling, tuning per
traced value, the nested CV of one data set), ``_results`` (averaging and
summary tables), ``_runner`` (units of work, resumable parts, joblib,
progress), ``_figures`` (the paper's figures) and ``_liver`` (the real-data
experiment).
"""

from __future__ import annotations

from vcpcr.benchmark._figures import plot_liver, plot_study
from vcpcr.benchmark._liver import liver_sample, run_liver
from vcpcr.benchmark._methods import (
    METHOD_NAMES,
    PROFILES,
    Method,
    Profile,
    draw_starts,
    get_methods,
)
from vcpcr.benchmark._protocol import (
    FoldData,
    OuterFold,
    fold_msep,
    nested_cv,
    nested_folds,
    select_tuned,
    standardize_fold,
)
from vcpcr.benchmark._results import average_folds, curves, summarize, to_markdown
from vcpcr.benchmark._runner import SimulatedSetting, StudyResult, run_study

__all__ = [
    "METHOD_NAMES",
    "PROFILES",
    "FoldData",
    "Method",
    "OuterFold",
    "Profile",
    "SimulatedSetting",
    "StudyResult",
    "average_folds",
    "curves",
    "draw_starts",
    "fold_msep",
    "get_methods",
    "liver_sample",
    "nested_cv",
    "nested_folds",
    "plot_liver",
    "plot_study",
    "run_liver",
    "run_study",
    "select_tuned",
    "standardize_fold",
    "summarize",
    "to_markdown",
]
