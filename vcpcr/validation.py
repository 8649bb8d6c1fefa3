"""Clinical validation: what a signature adds to the clinical model.

:func:`validate_increment` runs the clinical-only Cox model, the signature
and optionally a Coxnet with unpenalized clinical columns in the same
repeated CV folds and reports the paired increments over the clinical model
with intervals (see the "Validating a signature" page of the documentation);
:func:`validate_increment_external` does the same for a fitted model on an
external cohort, without refitting, with bootstrap intervals.
:func:`decision_curve` gives the net benefit of predicted risks (clinical
utility); :func:`sample_size` the minimum sample size to develop a model
(Riley et al.'s criteria) and :func:`validation_sample_size` to validate one
externally; :func:`nomogram` the points scales of a fitted
model (:func:`vcpcr.plotting.plot_nomogram` draws them); :func:`report` the
reviewer's report of a signature (TRIPOD+AI items), as HTML or Markdown.
"""

from vcpcr._decision_curve import decision_curve
from vcpcr._increment import (
    ClinicalCox,
    ClinicalGLM,
    IncrementResult,
    increment_interval,
    validate_increment,
)
from vcpcr._increment_external import (
    ExternalIncrementResult,
    validate_increment_external,
)
from vcpcr._nomogram import Nomogram, nomogram
from vcpcr._report import Report, Section, report
from vcpcr._sample_size import (
    SampleSizeResult,
    sample_size,
    validation_sample_size,
)

__all__ = [
    "ClinicalCox",
    "ClinicalGLM",
    "ExternalIncrementResult",
    "IncrementResult",
    "Nomogram",
    "Report",
    "SampleSizeResult",
    "Section",
    "decision_curve",
    "increment_interval",
    "nomogram",
    "report",
    "sample_size",
    "validate_increment",
    "validate_increment_external",
    "validation_sample_size",
]
