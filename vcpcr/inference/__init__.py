"""Honest inference after selection: resampling the rows.

The p-values of ``VCPCR.summary()`` are conditional on the clusters that the
same data chose; the tools here refit the estimator on parts of the rows so
that the evidence accounts for the selection. See the "Inference" page of the
documentation for what each number guarantees.
"""

from vcpcr.inference._multi_split import (
    MultiSplitResult,
    aggregate_pvalues,
    multi_split,
)
from vcpcr.inference._stability import StabilityResult, stability_selection

__all__ = [
    "MultiSplitResult",
    "StabilityResult",
    "aggregate_pvalues",
    "multi_split",
    "stability_selection",
]
