"""The estimators' input checks: what scikit-learn's estimator layer adds.

:func:`validate_xy` runs scikit-learn's ``validate_data`` on ``X`` (which
sets ``n_features_in_`` and ``feature_names_in_``) and re-raises its errors
with the fix, and checks that ``y`` is given, fits the family and has one
entry per row; :func:`missing_as_nan` lets pandas' ``NA`` through as NaN so
that missing values are reported by column. The values themselves are
checked once, by the foundations (:mod:`vcpcr._checks`: ``X`` by
``check_array``, ``y`` by the family's ``prepare``). A DataFrame's column
names must be unique strings (:func:`check_column_names`), and new data's are
matched to the training ones by name (:func:`aligned_columns`). Also the
covariates' and strata's columns (:func:`covariate_columns`,
:func:`strata_columns`, :func:`check_covariates`, :func:`check_levels`,
:func:`check_strata`) and :class:`ColumnLayout`. :func:`resolve_input` (the
formula, or without one the rows dropped for missing values and the
categorical covariates' dummies) and :func:`validated_design` are the one
route of ``VCPCR``, ``VCPCRCV`` and the resampling from the user's data to
the checked design.
"""

from __future__ import annotations

import difflib
import numbers
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.base import clone
from sklearn.utils.validation import column_or_1d, validate_data

from vcpcr._checks import (
    check_array,
    check_choice,
    check_not_constant,
    check_same_rows,
    check_y_length,
    dimension_error,
    feature_names,
    missing_to_nan,
)
from vcpcr._families import Family, Prepared
from vcpcr._formula import (
    Resolved,
    as_list,
    encode_columns,
    expand_names,
    reference_levels,
    resolve_formula,
    source_groups,
    warn_dropped,
)
from vcpcr._scaling import independent_columns, standardize

__all__ = [
    "ColumnLayout",
    "Level",
    "aligned_columns",
    "check_column_names",
    "check_covariates",
    "check_fold_strata",
    "check_levels",
    "check_model_fold_strata",
    "check_outcome_like",
    "check_same_rows",
    "check_strata",
    "covariate_columns",
    "merge_covariates",
    "missing_as_nan",
    "model_strata",
    "part_levels",
    "resolve_input",
    "split_cells",
    "strata_cells",
    "strata_columns",
    "take",
    "validate_new_x",
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
            f"{param}={covariates!r} takes every column of X: no feature is "
            f"left to cluster. Keep the clustered features out of covariates."
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
    family: Family,
    has_names: bool,
) -> NDArray[np.intp]:
    """Positions of the ``strata`` columns; checked against family and covariates.

    Raises a ``ValueError`` for strata with a family that is not a survival
    family (``"cox"``) or
    a column that is also a covariate (and what :func:`covariate_columns`
    raises for a name that is not a column).
    """
    cols = covariate_columns(strata, names, has_names=has_names, param="strata")
    if cols.size and not family.survival:
        raise ValueError(
            f"strata={strata!r} needs family='cox' (a stratified Cox model); got "
            f"family={family.name!r}. Adjust for the column with covariates= instead."
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


def _stratum_index(S: Any) -> tuple[list[tuple[Any, ...]], NDArray[np.intp]]:
    """Return the strata (one key per distinct row of ``S``, sorted) and each row's."""
    frame = pd.DataFrame(np.asarray(S, dtype=object).reshape(len(S), -1))
    grouped = frame.groupby(list(frame.columns), sort=True, dropna=False)
    keys = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]
    return keys, grouped.ngroup().to_numpy(dtype=np.intp)


def _stratum_name(names: Sequence[str], key: tuple[Any, ...]) -> str:
    """``"node=0, site=2"``: a stratum as its columns' values."""
    return ", ".join(
        f"{n}={v:g}" if isinstance(v, numbers.Real) else f"{n}={v}"
        for n, v in zip(names, key, strict=True)
    )


def strata_cells(
    S: Any, event: NDArray[np.bool_], n_splits: int
) -> NDArray[np.intp] | None:
    """Label each row by its (stratum, event indicator) cell, for ``n_splits`` folds.

    What the K folds of a stratified Cox model are stratified on
    (``split_cells(StratifiedKFold(k), X, cells)``): each test fold then
    takes at most ``ceil(e / k)`` of a stratum's ``e`` events, so every
    training part keeps an event of every stratum with at least 2
    (stratifying on the event indicator alone can put all of a small
    stratum's events in one test fold).

    Parameters
    ----------
    S : array-like of shape (n_samples, n_strata_columns)
        The strata columns (one stratum per distinct row).
    event : ndarray of bool of shape (n_samples,)
        The event indicator.
    n_splits : int
        The number of folds.

    Returns
    -------
    ndarray of shape (n_samples,) or None
        ``2 * stratum + event``; None when no cell has ``n_splits`` rows (the
        folds are then stratified on the event indicator alone).
    """
    stratum = _stratum_index(S)[1]
    cells = 2 * stratum + np.asarray(event, dtype=bool).astype(np.intp)
    return cells if np.bincount(cells).max() >= n_splits else None


def split_cells(splitter: Any, X: Any, cells: NDArray[np.intp]) -> list[Any]:
    """``list(splitter.split(X, cells))``, without scikit-learn's small-class warning.

    A cell smaller than the number of folds (a stratum with 3 events and
    ``cv=5``) is what the cells are for: scikit-learn warns that some test
    folds get none of it, which is harmless here (the training parts keep
    the stratum's other events, and :func:`check_fold_strata` reports a
    stratum with too few).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", "The least populated class", UserWarning, "sklearn"
        )
        return list(splitter.split(X, cells))


def _events(n: int) -> str:
    """``"1 event"``, ``"3 events"``."""
    return f"{n} event{'' if n == 1 else 's'}"


def _events_needed(k: int, need: int) -> int:
    """Return the fewest events a stratum needs for ``k`` cell-stratified folds.

    Every training part of ``k`` folds stratified by (stratum, event) then
    keeps ``need`` of them: ``e - ceil(e / k) >= need``.
    """
    e = need
    while e - -(-e // k) < need:
        e += 1
    return e


def check_fold_strata(
    S: Any,
    names: Sequence[str],
    event: NDArray[np.bool_],
    folds: Sequence[Any],
    *,
    need: int = 1,
    why: str = "",
    where: str = "CV",
    n_splits: int | None = None,
) -> None:
    """Raise if a training fold keeps fewer than ``need`` events of a stratum.

    With ``need=1`` the stratum's baseline hazard is undefined in that
    fold's fit (or, without its rows, its test rows cannot be predicted);
    a model that re-tunes by its own CV on each training part (a
    ``VCPCRCV``) needs 2, so that its inner folds, stratified by stratum
    and event, leave one in each inner training part. Checked before any
    fit. The message names the fold, the stratum, its events in the data
    and in the training part, and the fix: an int ``cv`` (folds stratified
    by stratum and event, :func:`strata_cells`) when the stratum has
    events enough for those, more folds when more would do (a training
    part of ``k`` such folds keeps ``e - ceil(e / k)`` of ``e`` events),
    otherwise merging the stratum (or dropping its rows).

    Parameters
    ----------
    S : array-like of shape (n_samples, n_strata_columns)
        The strata columns of all rows.
    names : sequence of str
        The strata columns' names.
    event : ndarray of bool of shape (n_samples,)
        The event indicator.
    folds : sequence of (train, test) pairs
        The folds (row positions).
    need : int, default=1
        Events of every stratum that every training part must keep.
    why : str, default=""
        Why ``need`` events, when it is more than 1 (follows "fewer than 2").
    where : str, default="CV"
        What the folds are, for the message ("CV", "cross_val_calibration's").
    n_splits : int, optional
        Folds per split (repeated K folds: ``K``); default ``len(folds)``.
    """
    keys, inverse = _stratum_index(S)
    event = np.asarray(event, dtype=bool)
    total = np.bincount(inverse, weights=event, minlength=len(keys)).astype(int)
    sizes = np.bincount(inverse, minlength=len(keys))
    k = len(folds) if n_splits is None else n_splits
    for i, (train, _) in enumerate(folds):
        kept = np.bincount(inverse[train], weights=event[train], minlength=len(keys))
        short = np.flatnonzero(kept < need)
        if not short.size:
            continue
        s = int(short[0])
        stratum = _stratum_name(names, keys[s])
        rows = int(np.sum(inverse[train] == s))
        enough = _events_needed(k, need)
        e = int(total[s])
        merge = f"merge {stratum} with another stratum (or drop its rows)"
        if e >= enough:  # folds not stratified by stratum and event
            fix = (
                f"Use an int cv (its folds are stratified by stratum and event, "
                f"so that {enough} events suffice), or {merge}."
            )
        elif e > need:  # more folds leave more of the events in each training part
            more = next(j for j in range(k + 1, e + 1) if _events_needed(j, need) <= e)
            fix = f"Use cv={more} or more folds, or {merge}."
        else:
            fix = f"A stratum needs at least {need + 1} events for this: {merge}."
        lack = (
            f"has no event, so its baseline hazard is undefined: its "
            f"{_events(e)} (in all {len(event)} rows) "
            f"{'is' if e == 1 else 'are'} outside this training part"
            if need == 1
            else f"keeps {int(kept[s])} of its {_events(e)}, fewer than {need}{why}"
        )
        raise ValueError(
            f"{where} fold {i} of {len(folds)}, training part ({len(train)} "
            f"rows): strata: the stratum {stratum} ({rows} of its "
            f"{int(sizes[s])} rows) {lack}. {fix}"
        )


def model_strata(
    model: Any, X: Any, y: Any, owner: str
) -> tuple[NDArray[Any], list[str]] | None:
    """Return the strata of ``X``'s rows in ``model``'s Cox fit, and their names.

    A ``VCPCR`` or ``VCPCRCV``: the strata columns of its design (with its
    checks of ``X`` and ``y``); a clinical model (``ClinicalCox``, on
    columns or a formula's design): its own ``_fold_strata``. None for an
    unstratified model, and for a design that drops rows (``missing="drop"``,
    whose rows :func:`vcpcr.calibration.cross_val_calibration` drops first).
    """
    if hasattr(model, "_fit_input"):
        data = clone(model)._fit_input(X, y, owner=owner)
        d = data.design
        if not d.strata.size or data.rows is not None:
            return None
        return d.X[:, d.strata], [str(d.names[j]) for j in d.strata]
    strata = getattr(model, "_fold_strata", None)
    frame = strata(X) if callable(strata) else None
    if frame is None:
        return None
    return frame.to_numpy(), [str(c) for c in frame.columns]


def check_model_fold_strata(
    model: Any,
    strata: tuple[NDArray[Any], list[str]],
    event: NDArray[np.bool_],
    folds: list[Any],
    owner: str,
    n_splits: int | None = None,
) -> None:
    """Raise before any fit if a training fold keeps too few events of a stratum.

    A ``VCPCR`` needs an event of every stratum in every training fold; a
    ``VCPCRCV``, which re-tunes by its own CV on each, 2 (its inner folds,
    stratified by stratum and event, then leave one in each inner training
    part). Other models (the clinical ``ClinicalCox``) are not checked.
    """
    if not hasattr(model, "_fit_input"):
        return
    params = model.get_params(deep=False)
    why = ""
    if "cv" in params:
        inner = 5 if params["cv"] is None else params["cv"]
        why = (
            f": {type(model).__name__} re-tunes on each training part by its own "
            f"CV (cv={inner!r}), whose folds must leave an event of every stratum "
            f"in each of their training parts"
        )
    check_fold_strata(
        strata[0],
        strata[1],
        event,
        folds,
        need=2 if why else 1,
        why=why,
        where=f"{owner}'s",
        n_splits=n_splits,
    )


def check_covariates(Z: NDArray[np.float64], names: Sequence[str]) -> Any:
    """Return the standardized covariates, or raise if they are collinear.

    The first covariate that the intercept and the covariates before it
    explain (:func:`vcpcr._scaling.independent_columns`) is named with them,
    so the user knows which column to drop. Constant columns are caught
    before, by :func:`vcpcr._checks.check_array`.
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
    must be ... not 'NAType'"); as NaN (:func:`vcpcr._checks.missing_to_nan`,
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


def check_column_names(X: Any) -> None:
    """Raise unless a DataFrame ``X``'s column names are unique strings.

    Non-string names (integers, floats, a MultiIndex's tuples) would be
    matched by position, as scikit-learn does (it records string names
    only): reordered columns would silently change the predictions, and the
    summaries would call the columns ``x<j>``. They are refused with the
    fix, as the formula path refuses them, unless they are the positions
    themselves in order (``pd.DataFrame(array)``'s default ``0..p-1``), for
    which position and name agree. Duplicated names fail
    scikit-learn's feature-name check inside narwhals, and a name (a
    covariate, a selected feature) must say which column it means.
    """
    columns = getattr(X, "columns", None)
    if not isinstance(columns, pd.Index):
        return
    positions = columns.equals(pd.RangeIndex(len(columns)))
    if columns.inferred_type != "string" and not positions:  # one C pass
        bad = [c for c in columns if not isinstance(c, str)]
        raise TypeError(
            f"X's column names must be strings (they are matched by name at "
            f"predict); got {len(bad)} non-string name(s), e.g. {bad[:5]}. "
            f"Rename them, e.g. X.columns = X.columns.astype(str) (a MultiIndex: "
            f"X.columns = ['_'.join(map(str, c)) for c in X.columns]), or pass "
            f"X.to_numpy()."
        )
    if columns.is_unique:
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
    (scikit-learn's own checks apply). Duplicated or non-string names raise
    (:func:`check_column_names`).
    """
    check_column_names(X)
    names = getattr(est, "feature_names_in_", None)
    if names is None or not isinstance(X, pd.DataFrame):
        return X
    columns = list(X.columns)
    if columns == list(names):
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
    :func:`vcpcr._checks.check_array` after. ``y`` must be given, fit the
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
    _check_not_masked(X)
    check_same_rows(X, y)
    check_column_names(X)
    with _hint_non_numeric(est, X):
        Xv = validate_data(
            est, missing_as_nan(X), dtype=np.float64, ensure_all_finite=False
        )
    if not family.survival:
        check_outcome_like(y)
        y = column_or_1d(y, warn=True)
    check_y_length(Xv.shape[0], y)
    return Xv, y


def check_outcome_like(y: Any) -> None:
    """Raise a TypeError for a ``y`` that is no sequence: a scalar, string or dict.

    scikit-learn would read a dict or a scalar as a 0-d array ("y should be
    a 1d array, got an array of shape ()"), or a string as its name.
    """
    scalar = isinstance(y, str | bytes | numbers.Number) or (
        isinstance(y, np.ndarray) and y.ndim == 0
    )
    if scalar or isinstance(y, Mapping):
        got = "a dict" if isinstance(y, Mapping) else f"the scalar {y!r}"
        raise TypeError(
            f"y must be array-like with one entry per row of X (a list, an "
            f"array or a Series); got {got}. Pass the outcome of each row, "
            f"e.g. y = df['outcome']."
        )


def _check_not_masked(X: Any) -> None:
    """Raise for a masked array with masked entries (numpy would read them)."""
    if isinstance(X, np.ma.MaskedArray) and np.ma.getmaskarray(X).any():
        raise ValueError(
            "X is a masked array with masked entries, which scikit-learn's "
            "conversion would read as data. Mark them missing first: "
            "X.filled(np.nan), then drop or impute those rows."
        )


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


#: The messages of a failed conversion of X to floats (:func:`_hint_non_numeric`);
#: pandas' "Cannot cast" when a nullable (Int64, Float64) column sits beside a
#: categorical or datetime one.
_NOT_NUMERIC = (
    "could not convert",
    "could not be promoted",
    "float() argument",
    "Cannot cast",
)


@contextmanager
def _hint_non_numeric(est: Any, X: Any, *, fitted: bool = False) -> Iterator[None]:
    """Re-raise a failed conversion of ``X`` to floats with the fix.

    scikit-learn's "could not convert" (strings), numpy's promotion error
    (datetime and timedelta columns), ``float()``'s (pandas periods) and
    pandas' "Cannot cast" (those columns beside a nullable numeric one) name
    the non-numeric columns. A 1-d or 3-d ``X``
    (:func:`vcpcr._checks.dimension_error`), a table with no column and
    a ragged list get their own message. ``fitted``: new data for a fitted
    estimator, whose fix is to encode it as the data of ``fit`` was.
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        text = str(exc)
        if text.startswith("Complex data not supported"):
            raise ValueError(  # scikit-learn's message then prints all of X
                "Complex data not supported: X holds complex numbers; VC-PCR "
                "needs real ones (e.g. X.real or abs(X))."
            ) from None
        if text.startswith(("Expected 2D array", "Found array with dim")):
            raise dimension_error("X", np.shape(X)) from None
        if "0 feature(s)" in text or "at least one array or dtype" in text:
            said = text if "0 feature(s)" in text else f"shape {np.shape(X)}"
            raise ValueError(  # scikit-learn's own words kept: its checks read them
                f"X has 0 columns ({said}): VC-PCR needs at least "
                f"one feature{' (those of fit)' if fitted else ' to cluster'}. "
                f"Check the column selection that built X."
            ) from None
        if "inhomogeneous" in text:
            raise ValueError(
                "X is ragged: its rows have different lengths, so it is no "
                "table. Pass a rectangular array or a DataFrame, one value per "
                "row and column (pad or drop the short rows)."
            ) from None
        if not any(s in text for s in _NOT_NUMERIC):
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
        fix = (
            f"{type(est).__name__} was fitted on numeric columns: pass them as "
            f"numbers, encoded as the data given to fit was (a model fitted "
            f"with formula= or categorical covariates encodes its own columns)"
            if fitted
            else f"Encode the categorical columns (e.g. pandas.get_dummies or "
            f"sklearn's OneHotEncoder), or use {type(est).__name__}(formula="
            f"'y ~ .'), which encodes them"
        )
        # The type stays: scikit-learn's checks expect a TypeError for objects.
        error = TypeError if isinstance(exc, TypeError) else ValueError
        raise error(
            f"X must be numeric{where}: {exc}. {fix}; give dates and durations "
            f"as numbers (e.g. days since a reference date)."
        ) from exc


def validate_new_x(est: Any, X: Any) -> NDArray[np.float64]:
    """Return a fitted estimator's new data ``X`` as floats: the one check of it.

    Every method that reads new data (``predict``, ``score``, the decision
    functions, and the result helpers that call them) goes through here, so
    a bad ``X`` gets fit's messages (:func:`_hint_non_numeric`): a DataFrame's
    columns are matched to the training ones by name
    (:func:`aligned_columns`), missing entries become NaN
    (:func:`missing_as_nan`), and scikit-learn's ``validate_data`` checks the
    number of columns. The values (finite) are the caller's to check: only
    the columns a prediction reads need be.
    """
    _check_not_masked(X)
    X = aligned_columns(est, X)
    with _hint_non_numeric(est, X, fitted=True):
        Xv: NDArray[np.float64] = validate_data(
            est,
            missing_as_nan(X),
            dtype=np.float64,
            ensure_all_finite=False,
            reset=False,
        )
    return Xv


def resolve_input(est: Any, X: Any, y: Any, *, owner: str) -> Resolved:
    """Return the estimator's data, with or without its formula: one input route.

    With ``est.formula``: :func:`vcpcr._formula.resolve_formula` (which
    reads the strata too). Without: rows with a missing value in ``X`` or
    ``y`` are dropped with one warning if ``est.missing == "drop"``, and the
    categorical or string columns of a DataFrame ``X`` that
    ``est.covariates`` or ``est.strata`` name are encoded as treatment
    dummies (:func:`vcpcr._formula.encode_columns`; the spec is returned
    for ``predict``). Either way, ``rows`` holds the positions of the rows
    of ``X`` kept when ``missing="drop"`` dropped some (None otherwise).
    ``owner`` names the caller in the messages.
    """
    missing = check_choice(est.missing, "missing", ("raise", "drop"), owner=owner)
    strata = getattr(est, "strata", None)
    positional = (
        est.formula is not None and missing == "drop" and isinstance(X, pd.DataFrame)
    )
    if positional:  # the labels of the rows the formula keeps are their positions
        X = X.copy(deep=False)
        X.index = pd.RangeIndex(len(X))
    resolved = resolve_formula(
        est.formula, X, y, missing=missing, owner=owner, strata=strata
    )
    if est.formula is not None:
        kept = resolved.X.index
        if positional and len(kept) < len(X):
            return resolved._replace(rows=np.asarray(kept, dtype=np.intp))
        return resolved
    rows = _missing_rows(X, y) if missing == "drop" else None
    if rows is not None:
        X, y = take(X, rows), take(y, rows)
    categorical = _categorical_columns(X, [est.covariates, strata])
    spec = None
    if categorical:
        X, spec = encode_columns(X, categorical)
    return resolved._replace(X=X, y=y, spec=spec, groups=source_groups(spec), rows=rows)


def _missing_rows(X: Any, y: Any) -> NDArray[np.intp] | None:
    """Positions of the rows to keep, after the warning; None if all are kept.

    Missing: NaN, None or ``pd.NA`` in ``X`` (any column) or ``y`` (any of
    its columns); input of another shape is left to the checks after.
    """
    if isinstance(X, pd.DataFrame):
        names, isna = [str(c) for c in X.columns], X.isna().to_numpy()
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            return None
        names, isna = [f"x{j}" for j in range(arr.shape[1])], pd.isna(arr)
    y_isna = _missing_y(y)
    if y_isna is None or y_isna.shape != isna.shape[:1]:
        return None  # reported by validate_xy
    rows = isna.any(axis=1) | y_isna
    if not rows.any():
        return None
    counts = {n: int(k) for n, k in zip(names, isna.sum(axis=0), strict=True) if k}
    if y_isna.any():
        counts["y"] = int(y_isna.sum())
    warn_dropped(int(rows.sum()), rows.size, counts)
    return np.flatnonzero(~rows)


def _missing_y(y: Any) -> NDArray[np.bool_] | None:
    """Return which entries (rows) of ``y`` are missing; None for another shape."""
    if y is None:
        return None
    if isinstance(y, pd.DataFrame):
        return np.asarray(y.isna().any(axis=1).to_numpy(), dtype=bool)
    arr = np.asarray(y)
    if arr.dtype.names:
        fields = [np.asarray(pd.isna(arr[f]), dtype=bool) for f in arr.dtype.names]
        return np.asarray(np.column_stack(fields).any(axis=1), dtype=bool)
    if arr.ndim not in (1, 2):
        return None
    isna = np.asarray(pd.isna(arr), dtype=bool)
    return isna if arr.ndim == 1 else np.asarray(isna.any(axis=1), dtype=bool)


def take(data: Any, rows: NDArray[np.intp]) -> Any:
    """Return the given rows (positions) of an array, DataFrame, Series or None.

    Parameters
    ----------
    data : array-like, DataFrame, Series or None
        ``X`` or ``y`` as the estimators accept them (a structured survival
        array, a ``(time, event)`` frame, a list).
    rows : ndarray of int
        Row positions.

    Returns
    -------
    object
        The rows, of the same kind as ``data`` (None stays None).
    """
    if data is None:
        return None
    if isinstance(data, pd.DataFrame | pd.Series):
        return data.iloc[rows]
    if isinstance(data, np.ndarray):  # structured survival arrays included
        return data[rows]
    if isinstance(data, list | tuple):
        return [data[i] for i in rows]
    return np.asarray(data)[rows]


def _categorical_columns(X: Any, named: list[Any]) -> list[str]:
    """Return the columns of a DataFrame ``X`` named in ``named`` holding categories.

    Categorical, string or object columns of strings, in ``X``'s order;
    numbers (also in an object column) are not categories.
    """
    if not isinstance(X, pd.DataFrame) or not X.columns.is_unique:
        return []
    wanted = {
        item for items in named for item in as_list(items) if isinstance(item, str)
    }
    return [
        c
        for c in X.columns
        if c in wanted
        and (
            isinstance(X[c].dtype, pd.CategoricalDtype | pd.StringDtype)
            or pd.api.types.infer_dtype(X[c], skipna=True) in ("string", "mixed")
        )
    ]


class Level(NamedTuple):
    """A discrete covariate whose levels are checked (:func:`check_levels`).

    ``columns`` are positions among the covariates: the treatment dummies of
    one categorical column (its levels: one dummy 1, or all 0 for the
    ``reference``), or one column with two values.
    """

    name: str
    columns: tuple[int, ...]
    names: tuple[str, ...]
    reference: str | None = None


def _levels(
    Z: NDArray[np.float64], names: list[str], resolved: Resolved
) -> list[Level]:
    """Return the discrete covariates among the columns ``Z`` (named ``names``)."""
    out, grouped = [], set()
    references = reference_levels(resolved.spec)
    for source, columns in resolved.groups.items():
        cols = [names.index(c) for c in columns if c in names]
        if len(cols) == len(columns) and np.isin(Z[:, cols], (0.0, 1.0)).all():
            ref = references.get(source)
            out.append(Level(source, tuple(cols), tuple(columns), ref))
            grouped.update(cols)
    for j, name in enumerate(names):
        if j not in grouped and np.unique(Z[:, j]).size == 2:
            out.append(Level(name, (j,), (name,)))
    return out


def part_levels(
    Z: NDArray[np.float64], names: Sequence[str], levels: list[Level]
) -> list[Level]:
    """Return the discrete covariates of some rows, as the input route finds them.

    ``levels`` are all rows' (:class:`Design`'s ``levels``), ``Z`` and
    ``names`` the covariates on the part's rows. An encoded categorical
    column stays one level; a column is a two-valued level when it takes
    two values on these rows (as a fit on them alone finds).
    """
    grouped = [
        lv for lv in levels if not (len(lv.columns) == 1 and lv.names[0] == lv.name)
    ]
    taken = {c for lv in grouped for c in lv.columns}
    return grouped + [
        Level(name, (j,), (name,))
        for j, name in enumerate(names)
        if j not in taken and np.unique(Z[:, j]).size == 2
    ]


def check_levels(
    Z: NDArray[np.float64],
    levels: list[Level],
    family: Family,
    outcome: Any,
    *,
    where: str = "",
) -> None:
    """Raise if a level of a discrete covariate has no finite coefficient.

    The rule is the family's (:meth:`vcpcr._families.Family.level_problem`):
    with ``family="cox"`` each level needs at least 1 event and a row at
    risk at an event of the other rows, and the reverse; with
    ``"binomial"`` rows of both classes (so at least 2 rows). Otherwise the
    unpenalized step-2 coefficient of that level diverges, whatever the data
    else. These thresholds are the smallest that hold in general; levels
    past them may still be imprecise (their standard errors say how).
    ``where`` adds a place to the message (a CV training fold).
    """
    for level in levels:
        keys, inverse = np.unique(
            Z[:, list(level.columns)], axis=0, return_inverse=True
        )
        for k, key in enumerate(keys):
            rows = np.flatnonzero(inverse.ravel() == k)
            problem = family.level_problem(outcome, rows)
            if problem is None:
                continue
            stratum = (
                f" Making {level.name!r} a stratum does not help: a stratum "
                f"without events is refused too."
                if family.survival
                else ""
            )
            raise ValueError(
                f"covariates: the level {_level_name(level, key)}{where} has "
                f"{problem} (family={family.name!r}). Merge the level with "
                f"another one or drop its rows (e.g. recode it as missing and "
                f"pass missing='drop').{stratum}"
            )


def _level_name(level: Level, key: NDArray[np.float64]) -> str:
    """Describe one level: ``'missing' of 'er'``, or ``sex = 1``."""
    if len(level.columns) == 1 and level.names[0] == level.name:
        return f"{level.name} = {key[0]:g}"
    if not key.any():
        return f"{level.reference!r} of {level.name!r} (the reference, every dummy 0)"
    dummy = level.names[int(np.argmax(key))]
    found = re.fullmatch(r".*\[T\.(.*)\]", dummy)
    return f"{found.group(1) if found else dummy!r} of {level.name!r} ({dummy})"


class Design(NamedTuple):
    """The checked input of a fit: ``X``'s columns and what each is for."""

    X: NDArray[np.float64]  # every column, checked by check_array
    y: Any  # the response, of the family's kind and X's length
    names: list[str]  # the column names (``x<j>`` for an array without)
    has_names: bool  # whether X had column names
    covariates: NDArray[np.intp]  # positions of the covariates
    Zs: NDArray[np.float64] | None  # the covariates, standardized
    strata: NDArray[np.intp]  # positions of the strata columns (cox)
    clustered: NDArray[np.intp]  # positions of the clustered columns
    prepared: Prepared  # the response, as the family prepares it
    levels: list[Level]  # the discrete covariates (positions among them)


def validated_design(est: Any, resolved: Resolved, family: Family) -> Design:
    """Check ``X`` and ``y`` and sort ``X``'s columns into covariates, strata, features.

    ``resolved`` is :func:`resolve_input`'s output; the covariates are
    ``est.covariates`` or the formula's (:func:`merge_covariates`), the
    strata ``resolved.strata``; a name of an encoded categorical column
    stands for its dummies. :func:`validate_xy` sets ``est``'s
    ``n_features_in_`` (and ``feature_names_in_``); then ``X``'s values
    (:func:`vcpcr._checks.check_array`: finite, at least 3 samples, no
    constant column), ``y`` (the family's ``prepare``), the covariates
    (:func:`check_covariates`, :func:`check_levels`) and the strata
    (:func:`strata_columns`). Raises if no column is left to cluster.
    """
    covariates = merge_covariates(est.covariates, resolved.covariates)
    Xv, yv = validate_xy(est, resolved.X, resolved.y, family)
    has_names = hasattr(est, "feature_names_in_")
    names = feature_names(est, Xv.shape[1])
    Xa = check_array(Xv, "X", feature_names=names, min_samples=3)
    covariates = expand_names(covariates, resolved.groups, names)
    covs = covariate_columns(covariates, names, has_names=has_names)
    strata = expand_names(resolved.strata, resolved.groups, names)
    strata_cols = strata_columns(
        strata, names, covs, family=family, has_names=has_names
    )
    roles = {"covariates": covs, "strata": strata_cols}
    check_not_constant(Xa, "X", names, roles)
    cov_names = [names[j] for j in covs]
    Zs = check_covariates(Xa[:, covs], cov_names) if covs.size else None
    clustered = np.setdiff1d(np.arange(Xa.shape[1]), np.union1d(covs, strata_cols))
    if clustered.size == 0:
        raise ValueError(
            "covariates and strata take every column of X: no feature is "
            "left to cluster."
        )
    prepared = family.prepare(yv)
    levels = _levels(Xa[:, covs], cov_names, resolved)
    check_levels(Xa[:, covs], levels, family, prepared.outcome)
    return Design(
        Xa, yv, names, has_names, covs, Zs, strata_cols, clustered, prepared, levels
    )
