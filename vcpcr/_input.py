"""The estimators' input checks: what scikit-learn's estimator layer adds.

:func:`validate_xy` runs scikit-learn's ``validate_data`` on ``X`` (which
sets ``n_features_in_`` and ``feature_names_in_``) and re-raises its errors
with the fix, and checks that ``y`` is given, fits the family and has one
entry per row; :func:`missing_as_nan` lets pandas' ``NA`` through as NaN so
that missing values are reported by column. The values themselves are
checked once, by the foundations (:mod:`vcpcr._validation`: ``X`` by
``check_array``, ``y`` by the family's ``prepare``). A DataFrame's column
names must be unique (:func:`check_unique_columns`), and new data's are
matched to the training ones by name (:func:`aligned_columns`). Also the
covariates' and strata's columns (:func:`covariate_columns`,
:func:`strata_columns`, :func:`check_covariates`, :func:`check_strata`) and
:class:`ColumnLayout`.
:func:`validated_design` is the one route of ``VCPCR``, ``VCPCRCV`` and
the resampling from the formula's output to the checked design.
"""

from __future__ import annotations

import difflib
import numbers
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.utils.validation import column_or_1d, validate_data

from vcpcr._families import Family
from vcpcr._formula import Resolved
from vcpcr._scaling import independent_columns, standardize
from vcpcr._validation import (
    check_array,
    check_y_length,
    feature_names,
    missing_to_nan,
)

__all__ = [
    "ColumnLayout",
    "aligned_columns",
    "check_covariates",
    "check_strata",
    "check_unique_columns",
    "covariate_columns",
    "merge_covariates",
    "missing_as_nan",
    "strata_columns",
    "validate_xy",
    "validated_design",
]

#: Names the step-2 designs use themselves (statsmodels' intercept, the
#: lifelines frame's outcome columns, the latent variables).
_RESERVED = re.compile(r"const|time|event|cluster_\d+")


class ColumnLayout(NamedTuple):
    """Which input columns of a fitted model are covariates, which clustered.

    ``Z`` holds the covariates' raw values on the training rows (step 2's
    first columns), ``covariates`` and ``clustered`` their positions among
    the ``n_features`` input columns; ``strata`` the positions of a Cox
    model's strata columns, ``S`` their training values. A CV fold's model
    may leave out a covariate that is constant in its training part: that
    column is then in neither list.
    """

    Z: NDArray[np.float64]
    covariates: NDArray[np.intp]
    clustered: NDArray[np.intp]
    n_features: int
    strata: NDArray[np.intp] = np.zeros(0, dtype=np.intp)
    S: NDArray[np.float64] | None = None  # the strata columns (cox), training rows


def covariate_columns(
    covariates: Any, names: Sequence[str], *, has_names: bool, param: str = "covariates"
) -> NDArray[np.intp]:
    """Positions of the ``covariates`` (names or positions) among ``names``.

    Raises a ``TypeError``/``ValueError`` naming the offending entry and the
    fix: a name with an array ``X`` (no column names), an unknown name or an
    out-of-range position, a duplicate, a name the step-2 design reserves, or
    every column a covariate (nothing left to cluster).
    """
    if covariates is None:
        return np.zeros(0, dtype=np.intp)
    items = [covariates] if isinstance(covariates, str | numbers.Integral) else None
    if items is None:
        try:
            items = list(covariates)
        except TypeError:
            raise TypeError(
                f"{param} must be a column name, a column position or a list "
                f"of them; got {covariates!r}."
            ) from None
    positions = [
        _covariate_position(item, covariates, names, has_names, param) for item in items
    ]
    if len(set(positions)) < len(positions):
        raise ValueError(f"{param}={covariates!r} names a column twice.")
    for j in positions:
        if _RESERVED.fullmatch(names[j]):
            raise ValueError(
                f"{param}: the column name {names[j]!r} is reserved for the "
                f"step-2 design (const, time, event, cluster_<k>); rename the "
                f"column."
            )
    if len(positions) == len(names):
        raise ValueError(
            f"{param}={covariates!r} takes every column of X: no variable is "
            f"left to cluster. Keep the clustered variables out of covariates."
        )
    return np.asarray(positions, dtype=np.intp)


def _covariate_position(
    item: Any, covariates: Any, names: Sequence[str], has_names: bool, param: str
) -> int:
    """Position of one entry of ``covariates`` (a name or a position)."""
    p = len(names)
    if isinstance(item, bool) or not isinstance(item, str | numbers.Integral):
        raise TypeError(
            f"{param} must hold column names (str) or positions (int); got "
            f"{item!r} of type {type(item).__name__}."
        )
    if isinstance(item, str):
        if not has_names:
            raise TypeError(
                f"{param}={covariates!r} names columns, but X has no column "
                f"names: pass a DataFrame, or the columns' positions (int)."
            )
        if item not in names:
            close = difflib.get_close_matches(item, names, n=3)
            hint = f" Did you mean {close}?" if close else ""
            raise ValueError(
                f"{param}: {item!r} is not a column of X.{hint} Pass names "
                f"of X's columns."
            )
        return list(names).index(item)
    if not -p <= int(item) < p:
        raise ValueError(
            f"{param}: position {item} is out of range for X with {p} columns."
        )
    return int(item) % p


def merge_covariates(covariates: Any, from_formula: tuple[str, ...]) -> Any:
    """Return ``covariates=`` or a two-part formula's covariates, not both."""
    if not from_formula:
        return covariates
    if covariates is not None:
        raise ValueError(
            f"covariates={covariates!r} and the formula's covariates (left of "
            f"'|': {list(from_formula)}) are given both; name them in one place."
        )
    return list(from_formula)


def strata_columns(
    strata: Any,
    names: Sequence[str],
    covariates: NDArray[np.intp],
    *,
    family: str,
    has_names: bool,
) -> NDArray[np.intp]:
    """Positions of the ``strata`` columns; checked against family and covariates.

    Raises a ``ValueError`` for strata with a family other than ``"cox"`` or
    a column that is also a covariate (and what :func:`covariate_columns`
    raises for a name that is not a column).
    """
    cols = covariate_columns(strata, names, has_names=has_names, param="strata")
    if cols.size and family != "cox":
        raise ValueError(
            f"strata={strata!r} needs family='cox' (a stratified Cox model); got "
            f"family={family!r}. Adjust for the column with covariates= instead."
        )
    both = sorted(names[j] for j in np.intersect1d(covariates, cols))
    if both:
        raise ValueError(
            f"{both} are both covariates and strata; a column is one or the "
            f"other: remove it from one of them."
        )
    return cols


def check_strata(
    S: NDArray[np.float64], names: Sequence[str], event: NDArray[np.bool_]
) -> None:
    """Raise if a stratum (a combination of the strata columns) has no event.

    Its baseline hazard is undefined and it adds nothing to the stratified
    partial likelihood; the message names the stratum and the fix.
    """
    keys, inverse = np.unique(S, axis=0, return_inverse=True)
    events = np.bincount(inverse.ravel(), weights=event, minlength=len(keys))
    for key, n_events, size in zip(
        keys, events, np.bincount(inverse.ravel()), strict=True
    ):
        if n_events == 0:
            where = ", ".join(f"{n}={v:g}" for n, v in zip(names, key, strict=True))
            raise ValueError(
                f"strata: the stratum {where} ({size} rows) has no event, so its "
                f"baseline hazard is undefined. Merge it with another stratum or "
                f"drop its rows."
            )


def check_covariates(Z: NDArray[np.float64], names: Sequence[str]) -> Any:
    """Return the standardized covariates, or raise if they are collinear.

    The first covariate that the intercept and the covariates before it
    explain (:func:`vcpcr._scaling.independent_columns`) is named with them,
    so the user knows which column to drop. Constant columns are caught
    before, by :func:`vcpcr._validation.check_array`.
    """
    Zs = standardize(Z)[0]
    keep = independent_columns(Zs)
    if keep.size < Zs.shape[1]:
        j = int(np.setdiff1d(np.arange(Zs.shape[1]), keep)[0])
        others = ", ".join(map(repr, names[:j]))
        raise ValueError(
            f"covariates: {names[j]!r} is a linear combination of "
            f"{others + ' and ' if others else ''}the intercept: the covariates "
            f"are collinear. Drop {names[j]!r} (e.g. keep one dummy less than "
            f"the levels of a categorical variable)."
        )
    return Zs


def missing_as_nan(X: Any) -> Any:
    """Return ``X`` with the missing entries of a DataFrame's object columns as NaN.

    scikit-learn's float conversion fails on ``pd.NA`` ("float() argument
    must be ... not 'NAType'"); as NaN (:func:`vcpcr._validation.missing_to_nan`,
    the one rule) it is reported as missing, by column.
    """
    if not isinstance(X, pd.DataFrame):
        return X
    obj = [i for i, d in enumerate(X.dtypes) if d.kind == "O"]
    if not obj:
        return X
    X = X.copy()  # only the object columns change (numeric dtypes are kept)
    X.iloc[:, obj] = missing_to_nan(X.iloc[:, obj].to_numpy())
    return X


def check_unique_columns(X: Any) -> None:
    """Raise a ValueError naming the duplicated column names of a DataFrame ``X``.

    scikit-learn's feature-name check fails on them inside narwhals, and a
    name (a covariate, a selected variable) must say which column it means.
    """
    columns = getattr(X, "columns", None)
    if not isinstance(columns, pd.Index) or columns.is_unique:
        return
    dup = [str(c) for c in columns[columns.duplicated()].unique()]
    raise ValueError(
        f"X has duplicate column names {dup[:10]}"
        f"{f' and {len(dup) - 10} more' if len(dup) > 10 else ''}: each column "
        f"must have its own name. Rename or drop the duplicated columns "
        f"(X.columns.duplicated() marks them)."
    )


def aligned_columns(est: Any, X: Any) -> Any:
    """Return new data ``X`` with the training columns in the training order.

    For a DataFrame with string column names passed to an estimator fitted
    on one (``feature_names_in_``): the same columns in another order are
    reordered by name, as a formula model's data is; missing or extra
    columns raise a ValueError naming them. Other inputs pass unchanged
    (scikit-learn's own checks apply). Duplicated names raise
    (:func:`check_unique_columns`).
    """
    check_unique_columns(X)
    names = getattr(est, "feature_names_in_", None)
    if names is None or not isinstance(X, pd.DataFrame):
        return X
    columns = list(X.columns)
    if not all(isinstance(c, str) for c in columns) or columns == list(names):
        return X
    fitted, given = set(names), set(columns)
    missing = [str(c) for c in names if c not in given]
    extra = [c for c in columns if c not in fitted]
    if not missing and not extra:
        return X[list(names)]
    parts = [
        f"{what} {len(cols)} column(s){where} {cols[:10]}"
        f"{f' and {len(cols) - 10} more' if len(cols) > 10 else ''}"
        for what, where, cols in (
            ("lacks", " seen in fit", missing),
            ("has", " not seen in fit", extra),
        )
        if cols
    ]
    raise ValueError(
        f"X {' and '.join(parts)}. Pass the {len(fitted)} columns of fit (in "
        f"any order: they are matched by name)."
    )


def validate_xy(
    est: Any, X: Any, y: Any, family: Family
) -> tuple[NDArray[np.float64], Any]:
    """Check ``X`` through scikit-learn, and ``y``'s presence, shape and length.

    ``X`` goes through scikit-learn's ``validate_data``, which sets
    ``est.n_features_in_`` (and ``feature_names_in_``) as scikit-learn
    estimators do; its values (missing, constant columns) are checked by
    :func:`vcpcr._validation.check_array` after. ``y`` must be given, fit the
    family (a survival outcome only with ``family="cox"``, a column vector
    is raveled with scikit-learn's warning) and have one entry per row of
    ``X``; its values are the family's to check, once
    (:meth:`vcpcr._families.Family.prepare`).
    """
    if y is None:
        give = "(time, event), e.g. vcpcr.Surv(time, event)"
        raise ValueError(
            f"{type(est).__name__} requires y to be passed, but the target y is "
            f"None. For family={family.name!r} give "
            f"{give if family.survival else 'the outcome, one entry per row of X'}."
        )
    _check_not_survival(est, y, family)
    check_unique_columns(X)
    with _hint_non_numeric(est, X):
        Xv = validate_data(
            est, missing_as_nan(X), dtype=np.float64, ensure_all_finite=False
        )
    if not family.survival:
        y = column_or_1d(y, warn=True)
    check_y_length(Xv.shape[0], y)
    return Xv, y


def _check_not_survival(est: Any, y: Any, family: Family) -> None:
    """Raise, naming the survival family, for a survival outcome of another."""
    if family.survival:
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


class Design(NamedTuple):
    """The checked input of a fit: ``X``'s columns and what each is for."""

    X: NDArray[np.float64]  # every column, checked by check_array
    y: Any  # the response, of the family's kind and X's length
    names: list[str]  # the column names (``x<j>`` for an array without)
    has_names: bool  # whether X had column names
    covariates: NDArray[np.intp]  # positions of the covariates
    Zs: NDArray[np.float64] | None  # the covariates, standardized
    strata: NDArray[np.intp]  # positions of the strata columns (cox)
    genes: NDArray[np.intp]  # positions of the clustered columns


def validated_design(
    est: Any, resolved: Resolved, family: Family, *, strata: Any
) -> Design:
    """Check ``X`` and ``y`` and sort ``X``'s columns into covariates, strata, genes.

    ``resolved`` is the formula's output (:func:`vcpcr._formula.\
resolve_formula`); the covariates are ``est.covariates`` or the formula's
    (:func:`merge_covariates`). :func:`validate_xy` sets ``est``'s
    ``n_features_in_`` (and ``feature_names_in_``); then ``X``'s values
    (:func:`vcpcr._validation.check_array`: finite, at least 3 samples, no
    constant column), the covariates (:func:`check_covariates`) and the
    strata (:func:`strata_columns`). Raises if no column is left to cluster.
    """
    covariates = merge_covariates(est.covariates, resolved.covariates)
    Xv, yv = validate_xy(est, resolved.X, resolved.y, family)
    has_names = hasattr(est, "feature_names_in_")
    names = feature_names(est, Xv.shape[1])
    Xa = check_array(Xv, "X", feature_names=names, min_samples=3, allow_constant=False)
    covs = covariate_columns(covariates, names, has_names=has_names)
    Zs = check_covariates(Xa[:, covs], [names[j] for j in covs]) if covs.size else None
    strata_cols = strata_columns(
        strata, names, covs, family=family.name, has_names=has_names
    )
    genes = np.setdiff1d(np.arange(Xa.shape[1]), np.union1d(covs, strata_cols))
    if genes.size == 0:
        raise ValueError(
            "covariates and strata take every column of X: no variable is "
            "left to cluster."
        )
    return Design(Xa, yv, names, has_names, covs, Zs, strata_cols, genes)
