"""The one construction style of the public result classes.

Every public result (what a function or method of vcpcr returns: ``SOSNMFResult``,
``CalibrationResult``, ``MultiSplitResult``, ...) is written the same way::

    @dataclass(frozen=True, eq=False, repr=False)
    class SomeResult(Result):
        # a numpy docstring whose Attributes section lists every field
        field: type

- ``frozen=True``: a result is what was computed; nothing is assigned after it
  is made (:func:`dataclasses.replace` makes a changed copy).
- ``eq=False``: its fields hold arrays and DataFrames, whose ``==`` has no truth
  value; two results are equal only when they are the same object.
- ``repr=False``, so that :class:`Result`'s one-line ``__repr__`` applies: the
  fields by name, an array or a frame by its shape (:func:`short_repr`); a field
  declared with ``field(repr=False)`` is left out, as in a dataclass' own repr.
- The numpy docstring's ``Attributes`` section lists every field
  (``tests/test_results.py`` checks all of this over every public ``__all__``).

The results that were ``typing.NamedTuple`` s derive from :class:`TupleResult`
instead, which keeps their tuple behaviour (unpacking, indexing by position,
``len``) for a deprecation period, with a ``FutureWarning``.

numpy only (``_sos_nmf``, which imports no pandas, builds on it).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["Result", "TupleResult", "short_repr"]

#: The release that removes the tuple behaviour of the former NamedTuples.
TUPLE_REMOVAL = "0.3"
#: Longest text a field shows as it is in a result's repr.
_WIDTH = 60
#: Largest 1-d array whose values a repr shows.
_SMALL = 6


def short_repr(value: Any) -> str:
    """Return a field's value as a result's repr shows it: short, one line.

    Parameters
    ----------
    value : object
        A field's value.

    Returns
    -------
    str
        A float as ``f"{value:.6g}"``; an array, a DataFrame, a Series, an Index
        or a sparse matrix by its class and shape (a 1-d array of at most 6
        numbers by its values); anything else by its ``repr`` when that is at
        most 60 characters long and on one line, otherwise a string by its
        first characters, a container by its class and length, another object
        by its class.
    """
    if isinstance(value, float | np.floating):
        return f"{float(value):.6g}"
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and not isinstance(value, np.generic):
        if isinstance(value, np.ndarray) and value.ndim == 1 and value.size <= _SMALL:
            if value.dtype.kind in "biuf":
                return "[" + ", ".join(short_repr(v) for v in value.tolist()) + "]"
        return f"{type(value).__name__}(shape={shape})"
    text = repr(value)
    if len(text) <= _WIDTH and "\n" not in text:
        return text
    if isinstance(value, str):
        return repr(value[: _WIDTH - 10] + "...")
    if hasattr(value, "__len__"):
        return f"{type(value).__name__}(len={len(value)})"
    return f"{type(value).__name__}(...)"


class Result:
    """Base of the public result classes: their one-line ``__repr__``.

    A subclass is a ``@dataclass(frozen=True, eq=False, repr=False)`` (see the
    module's docstring); this base adds no field and no state.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        """Return ``Name(field=value, ...)``, each value short (:func:`short_repr`)."""
        shown = ", ".join(
            f"{f.name}={short_repr(getattr(self, f.name))}"
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
            if f.repr
        )
        return f"{type(self).__name__}({shown})"


class TupleResult(Result):
    """A result that was a ``typing.NamedTuple``: its tuple behaviour, deprecated.

    Unpacking (``a, b, ... = result``), indexing by position (``result[0]``) and
    ``len(result)`` still give what the NamedTuple gave (the fields in their
    declared order) and warn a ``FutureWarning`` naming the attributes to use
    instead; they go in vcpcr 0.3. A result is always true (``bool`` does not go
    through ``len``). Equality is identity, as for every result.
    """

    __slots__ = ()

    def _tuple_warning(self) -> None:
        names = ", ".join(f".{f.name}" for f in dataclasses.fields(self))  # type: ignore[arg-type]
        warnings.warn(
            f"tuple unpacking of {type(self).__name__} is deprecated and will be "
            f"removed in vcpcr {TUPLE_REMOVAL}; use the attributes {names}",
            FutureWarning,
            stacklevel=3,
        )

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self))  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Any]:
        """Iterate over the fields' values in order (deprecated)."""
        self._tuple_warning()
        return iter(self._values())

    def __getitem__(self, index: int | slice) -> Any:
        """Return the field(s) at a position, as the NamedTuple did (deprecated)."""
        self._tuple_warning()
        return self._values()[index]

    def __len__(self) -> int:
        """Return the number of fields (deprecated)."""
        self._tuple_warning()
        return len(dataclasses.fields(self))  # type: ignore[arg-type]

    def __bool__(self) -> bool:
        """Return True: a result is true, as a non-empty NamedTuple was."""
        return True
