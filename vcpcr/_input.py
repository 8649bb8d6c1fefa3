"""The estimators' input checks: ``X`` and ``y`` through scikit-learn.

:func:`validate_xy` runs scikit-learn's ``validate_data`` (which sets
``n_features_in_`` and ``feature_names_in_``) with the family's view of ``y``
and re-raises its errors with the fix; :func:`missing_as_nan` lets pandas'
``NA`` through as NaN so that missing values are reported by column.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.utils.validation import validate_data

from vcpcr._families import Family

__all__ = ["missing_as_nan", "validate_xy"]


def missing_as_nan(X: Any) -> Any:
    """Return ``X`` with ``pd.NA`` in object columns of a DataFrame as NaN.

    scikit-learn's float conversion fails on ``pd.NA`` ("float() argument
    must be ... not 'NAType'"); as NaN it is reported as missing, by column.
    """
    if not isinstance(X, pd.DataFrame):
        return X
    obj = [i for i, d in enumerate(X.dtypes) if d.kind == "O"]
    if not obj:
        return X
    X = X.copy()  # only the object columns change (numeric dtypes are kept)
    part = X.iloc[:, obj]
    X.iloc[:, obj] = part.where(part.notna(), np.nan)
    return X


def validate_xy(
    est: Any, X: Any, y: Any, family: Family
) -> tuple[NDArray[np.float64], Any]:
    """scikit-learn's checks of X (and of y, except survival outcomes).

    Sets ``est.n_features_in_`` (and ``feature_names_in_``) as scikit-learn
    estimators do.
    """
    X = missing_as_nan(X)
    _check_not_survival(est, y, family)
    if not family.survival:
        with _hint_non_numeric(est, X):
            return validate_data(  # type: ignore[no-any-return]
                est,
                X,
                y,
                dtype=np.float64,
                ensure_all_finite=False,
                y_numeric=family.estimator_type == "regressor",
            )
    if y is None:
        raise ValueError(
            f"{type(est).__name__} requires y to be passed, but the target y is "
            f"None. For family={family.name!r} give (time, event), e.g. "
            f"vcpcr.Surv(time, event)."
        )
    with _hint_non_numeric(est, X):
        Xv = validate_data(est, X, dtype=np.float64, ensure_all_finite=False)
    if len(y) != Xv.shape[0]:
        raise ValueError(f"X has {Xv.shape[0]} rows but y has {len(y)}.")
    return Xv, y


def _check_not_survival(est: Any, y: Any, family: Family) -> None:
    """Raise, naming the survival family, for a survival outcome of another."""
    if family.survival or y is None:
        return
    arr = np.asarray(y) if not hasattr(y, "dtype") else y
    structured = getattr(getattr(arr, "dtype", None), "names", None)
    if structured or (getattr(arr, "ndim", 1) == 2 and arr.shape[1] == 2):
        raise ValueError(
            f"y looks like a survival outcome (two columns: time and event), but "
            f"{type(est).__name__} has family={family.name!r}. Use family='cox' for "
            f"survival data, or pass a 1-d y."
        )


@contextmanager
def _hint_non_numeric(est: Any, X: Any) -> Iterator[None]:
    """Re-raise scikit-learn's "could not convert" error with the fix."""
    try:
        yield
    except ValueError as exc:
        if "could not convert" not in str(exc):
            raise
        columns = getattr(X, "columns", None)
        dtypes = getattr(X, "dtypes", None)
        bad = (
            [
                str(c)
                for c, t in zip(columns, dtypes, strict=True)
                if t.kind not in "biuf"
            ]
            if columns is not None and dtypes is not None
            else []
        )
        where = f" (non-numeric columns: {bad[:5]})" if bad else ""
        raise ValueError(
            f"X must be numeric{where}: {exc}. Encode the categorical columns "
            f"(e.g. pandas.get_dummies or sklearn's OneHotEncoder), or use "
            f"{type(est).__name__}(formula='y ~ .'), which encodes them."
        ) from exc
