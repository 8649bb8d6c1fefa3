"""vcpcr: Variable Cluster Principal Component Regression (VC-PCR).

Prediction on wide, correlated data (gene expression above all) that selects
the features that matter and groups them into the clusters that act together.

The estimators are imported lazily, so that ``import vcpcr._solvers.sos_nmf`` (the
numpy/scipy solver) does not pull in pandas, statsmodels or scikit-learn.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from vcpcr._sos_nmf import (
    SOSNMFResult,
    lambda_max,
    random_partition,
    sos_nmf,
)
from vcpcr.exceptions import SeparationWarning, VCPCRWarning

if TYPE_CHECKING:
    from vcpcr._cv import VCPCRCV
    from vcpcr._formula import Surv
    from vcpcr._model import VCPCR
    from vcpcr._scoring_rule import ScoringRule
    from vcpcr._weights import compute_weights
    from vcpcr.exceptions import ConvergenceWarning

__version__ = "0.1.0"
"""The version of vcpcr, a PEP 440 string such as ``"0.1.0"``."""

_LAZY = {
    "ConvergenceWarning": "vcpcr.exceptions",
    "VCPCR": "vcpcr._model",
    "VCPCRCV": "vcpcr._cv",
    "Surv": "vcpcr._formula",
    "ScoringRule": "vcpcr._scoring_rule",
    "compute_weights": "vcpcr._weights",
}

__all__ = [
    "VCPCR",
    "VCPCRCV",
    "ConvergenceWarning",
    "SOSNMFResult",
    "ScoringRule",
    "SeparationWarning",
    "Surv",
    "VCPCRWarning",
    "__version__",
    "compute_weights",
    "lambda_max",
    "random_partition",
    "sos_nmf",
]


def __getattr__(name: str) -> Any:
    """Import the estimators on first access (PEP 562)."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'vcpcr' has no attribute {name!r}")


def __dir__() -> list[str]:
    """List the public names, including the lazily imported ones."""
    return sorted(__all__)
