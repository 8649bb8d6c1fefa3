"""Inference after selection: stability selection of genes and gene modules."""

from vcpcr._stability import StabilityResult, stability_selection

__all__ = ["StabilityResult", "stability_selection"]
