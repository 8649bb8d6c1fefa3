"""Clinical validation: what a signature adds to the clinical model.

:func:`validate_increment` runs the clinical-only Cox model, the signature
and optionally a Coxnet with unpenalized clinical columns in the same
repeated CV folds and reports the paired increments over the clinical model
with intervals (see the "Validating a signature" page of the documentation).
"""

from vcpcr._increment import (
    ClinicalCox,
    IncrementResult,
    increment_interval,
    validate_increment,
)

__all__ = [
    "ClinicalCox",
    "IncrementResult",
    "increment_interval",
    "validate_increment",
]
