"""Doctest collection: skip the examples that need an optional extra."""

from __future__ import annotations

from importlib.util import find_spec

import pytest

# Examples in vcpcr/ that run code from an optional dependency.
_NEEDS = {"vcpcr._cox.cox_lasso_path": "sksurv"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark a doctest skipped when the package its example needs is missing."""
    for item in items:
        module = _NEEDS.get(item.name)
        if module is not None and find_spec(module) is None:
            item.add_marker(pytest.mark.skip(reason=f"needs {module} (an extra)"))
