"""Doctest collection of ``vcpcr/`` (``--doctest-modules``).

The examples of the modules below fit lifelines and scikit-survival models;
without the survival extra (CI's core job) they are not collected, as the
tests that need it are skipped (``tests/conftest.py``'s ``needs_survival``).
"""

from importlib.util import find_spec

_NEED_SURVIVAL = ["vcpcr/_increment.py", "vcpcr/_increment_external.py"]

collect_ignore = (
    []
    if find_spec("lifelines") is not None and find_spec("sksurv") is not None
    else _NEED_SURVIVAL
)
