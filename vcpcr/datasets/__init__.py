"""Data sets shipped with vcpcr."""

from __future__ import annotations

from vcpcr.datasets._liver import load_liver

__all__ = ["load_liver"]
