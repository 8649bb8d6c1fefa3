"""Input checks shared by every public entry point (numpy only).

Every function raises :class:`ValueError` or :class:`TypeError` with a message
that names the argument, the offending value and, where known, the fix.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vcpcr._scaling import constant_columns

__all__ = [
    "check_array",
    "check_choice",
    "check_cv_param",
    "check_finite",
    "check_fraction",
    "check_informative",
    "check_labels",
    "check_n_samples",
    "check_not_constant",
    "check_random_state",
    "check_same_rows",
    "check_scalar",
    "check_split",
    "check_survival",
    "check_survival_rows",
    "check_time_event",
    "check_times",
    "check_varying",
    "check_weight_vector",
    "check_weights",
    "check_y_length",
    "dimension_error",
    "feature_names",
    "missing_to_nan",
]


def _column_names(names: Sequence[str] | None, idx: NDArray[np.intp]) -> list[Any]:
    """Return the names (or integer positions) of the columns at ``idx``."""
    shown = idx[:10]
    cols = [names[i] for i in shown] if names is not None else [int(i) for i in shown]
    return [*cols, "..."] if idx.size > 10 else cols


def feature_names(estimator: Any, n_features: int) -> list[str]:
    """Return the estimator's column names: ``feature_names_in_``, or ``x<j>``.

    The names messages and summaries use for an estimator's input columns;
    an array without column names gets ``x0``, ``x1``, ...
    """
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        return [f"x{j}" for j in range(n_features)]
    return [str(n) for n in names]


def check_n_samples(n_samples: int, name: str, min_samples: int) -> None:
    """Raise :func:`check_array`'s error for fewer than ``min_samples`` rows."""
    if n_samples < min_samples:
        raise ValueError(
            f"{name} has {n_samples} sample(s); at least {min_samples} are required."
        )


def check_array(
    X: ArrayLike,
    name: str = "X",
    *,
    feature_names: Sequence[str] | None = None,
    ensure_2d: bool = True,
    min_samples: int = 1,
    allow_constant: bool = True,
) -> NDArray[np.float64]:
    """Convert ``X`` to a finite float64 array, or raise a descriptive error.

    Parameters
    ----------
    X : array-like
        The data to check.
    name : str, default="X"
        Name of the argument, used in error messages.
    feature_names : sequence of str, optional
        Column names, used to name the offending columns in error messages.
    ensure_2d : bool, default=True
        Require a 2-d array (otherwise a 1-d array is required).
    min_samples : int, default=1
        Minimum number of rows.
    allow_constant : bool, default=True
        If False, columns with zero variance are an error (they cannot be
        standardized).

    Returns
    -------
    ndarray of float64
        The validated array.

    Raises
    ------
    TypeError
        If ``X`` is not numeric.
    ValueError
        If ``X`` has the wrong number of dimensions, too few rows, or contains
        NaN, infinite or (when not allowed) constant columns.
    """
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):
        raise TypeError(
            f"{name} is a sparse matrix ({type(X).__name__}); sparse input is not "
            f"supported. Convert it with {name}.toarray()."
        )
    arr = np.asarray(X)
    if arr.dtype.kind not in "biuf":
        if arr.dtype.kind == "O":
            try:
                arr = missing_to_nan(arr).astype(np.float64)
            except (TypeError, ValueError):
                raise TypeError(
                    f"{name} must contain numbers only; got an array of dtype "
                    f"object that cannot be converted to float. Encode "
                    f"categorical columns (e.g. with a formula) before fitting."
                ) from None
        else:
            raise TypeError(
                f"{name} must contain numbers only; got dtype {arr.dtype}. Encode "
                f"categorical columns (e.g. with a formula) before fitting."
            )
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim != (2 if ensure_2d else 1):
        raise dimension_error(name, arr.shape, ensure_2d=ensure_2d)
    check_n_samples(arr.shape[0], name, min_samples)
    if ensure_2d and arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={arr.shape}).")
    check_finite(arr, name, feature_names)
    if not allow_constant and ensure_2d:
        check_not_constant(arr, name, feature_names)
    return arr


def dimension_error(
    name: str, shape: tuple[int, ...], *, ensure_2d: bool = True
) -> ValueError:
    """Return the error for data of the wrong number of dimensions (one message).

    A table must be 2-d, ``(n_samples, n_features)``; a vector 1-d. Shared
    by :func:`check_array` and the estimators' conversion of ``X`` through
    scikit-learn (:func:`vcpcr._input.validate_xy`,
    :func:`vcpcr._input.validate_new_x`).
    """
    want = 2 if ensure_2d else 1
    where = " of shape (n_samples, n_features)" if ensure_2d else ""
    hint = (
        f" Reshape your data: {name}.reshape(-1, 1) if it is a single feature, "
        f"{name}.reshape(1, -1) if it is a single sample (or pass a DataFrame)."
        if ensure_2d and len(shape) == 1
        else ""
    )
    return ValueError(
        f"{name} must be a {want}-d array{where}; got an array with shape "
        f"{shape}.{hint}"
    )


def missing_to_nan(values: NDArray[Any]) -> NDArray[Any]:
    """Return ``values`` with its missing entries as NaN (the one such rule).

    ``None``, ``pandas.NA`` and ``pandas.NaT`` entries of an object array
    become NaN (other arrays are returned as they are), so that a missing
    value is reported as "contains NaN", by column, wherever it is found:
    pandas' nullable columns turn into object arrays holding ``pd.NA``,
    which numpy cannot convert to float.
    """
    if values.dtype.kind != "O":
        return values
    missing = np.asarray(  # a 0-d array's ufunc result is a Python bool
        np.frompyfunc(
            lambda v: v is None or type(v).__name__ in ("NAType", "NaTType"), 1, 1
        )(values),
        dtype=bool,
    )
    if not missing.any():
        return values
    out = values.copy()
    out[missing] = np.nan
    return out


def check_finite(
    arr: NDArray[Any],
    name: str,
    feature_names: Sequence[str] | None = None,
    *,
    fix: str = "drop or impute them before fitting",
) -> None:
    """Raise a ValueError naming the columns that hold NaN or infinity.

    The one check for missing values (NaN after :func:`missing_to_nan`) and
    infinite ones, of a numeric array (1-d or 2-d) or of an object array of
    class labels (NaN only); string arrays hold neither. ``fix`` ends the
    message (the advice differs at prediction time).
    """
    if arr.dtype.kind in "USb":
        return
    if arr.dtype.kind == "O":
        nan, inf = np.asarray(arr != arr, dtype=bool), np.zeros(arr.shape, bool)
    elif np.isfinite(arr).all():
        return
    else:
        nan, inf = np.isnan(arr), np.isinf(arr)
    for bad, what in ((nan, "NaN"), (inf, "infinity")):
        if not bad.any():
            continue
        if arr.ndim == 1:
            raise ValueError(
                f"{name} contains {what} in {int(bad.sum())} of {arr.size} "
                f"values; {fix}."
            )
        cols = np.flatnonzero(bad.any(axis=0))
        raise ValueError(
            f"{name} contains {what} in {cols.size} column(s) "
            f"{_column_names(feature_names, cols)} ({int(bad.sum())} values); "
            f"{fix}."
        )


def check_not_constant(
    arr: NDArray[np.float64],
    name: str,
    feature_names: Sequence[str] | None,
    roles: dict[str, NDArray[np.intp]] | None = None,
) -> None:
    """Raise a ValueError naming the columns with zero variance.

    ``roles`` maps a parameter (``"covariates"``, ``"strata"``) to the
    columns it names: a constant one of those is named as such, with why it
    cannot be used (a constant is not a feature to remove from ``X``).
    """
    if arr.shape[0] < 2:
        raise ValueError(
            f"{name} has {arr.shape[0]} sample(s); at least 2 are required to "
            f"standardize its columns."
        )
    const = constant_columns(arr)
    why = {
        "covariates": "a constant covariate is the intercept (in a Cox model, "
        "part of the baseline hazard): it has no effect to estimate",
        "strata": "a single stratum of all rows is the unstratified model",
    }
    for role, cols in (roles or {}).items():
        hit = np.intersect1d(const, cols)
        if hit.size:
            raise ValueError(
                f"The {role}= column(s) {_column_names(feature_names, hit)} "
                f"take a single value: {why[role]}. Leave them out of {role}=."
            )
    if const.size:
        raise ValueError(
            f"{name} has {const.size} constant column(s) "
            f"{_column_names(feature_names, const)}; they carry no information "
            f"and cannot be standardized. Remove them before fitting, e.g. with "
            f"sklearn.feature_selection.VarianceThreshold."
        )


def check_weights(
    weights: Any,
    n_features: int,
    *,
    owner: str,
    methods: Sequence[str] = (),
) -> str | NDArray[np.float64]:
    """Validate a ``weights`` parameter: a method name or one weight per feature.

    Parameters
    ----------
    weights : str or array-like of shape (n_features,)
        A weight scheme among ``methods``, or the feature weights.
    n_features : int
        Number of features.
    owner : str
        The class or function the parameter belongs to (for the message).
    methods : sequence of str, default=()
        Accepted scheme names (none: only arrays are accepted).

    Returns
    -------
    str or ndarray of shape (n_features,)
        The method name, or the finite float weights.

    Raises
    ------
    TypeError
        If ``weights`` is neither a name nor a sequence of numbers.
    ValueError
        If the name is unknown or the array has the wrong length, non-finite
        values or only zeros.
    """
    options = ", ".join(repr(m) for m in methods)
    wanted = f"one of {options} or " if methods else ""
    if isinstance(weights, str):
        if not methods:
            raise TypeError(
                f"The 'weights' parameter of {owner} must be an array of "
                f"{n_features} weights (one per feature). Got {weights!r} instead."
            )
        return check_choice(weights, "weights", methods, owner=owner)
    if weights is None or np.ndim(weights) != 1:
        raise TypeError(
            f"The 'weights' parameter of {owner} must be {wanted}an array of "
            f"{n_features} weights (one per feature). Got {weights!r} instead."
            + (" Use weights='identity' for equal weights." if methods else "")
        )
    w = check_weight_vector(weights, n_features)
    if not np.any(w):
        raise ValueError(
            f"The 'weights' parameter of {owner} is all zeros: no feature could "
            f"be selected. Give at least one non-zero weight."
        )
    return w


def check_weight_vector(weights: ArrayLike, n_features: int) -> NDArray[np.float64]:
    """Return one finite float weight per feature, or raise a ValueError.

    The length and values of a weight vector, for :func:`check_weights` (the
    estimators' ``weights`` parameter) and :func:`vcpcr.sos_nmf`.
    """
    w = check_array(weights, "weights", ensure_2d=False)
    if w.shape[0] != n_features:
        raise ValueError(
            f"weights has {w.shape[0]} entries but X has {n_features} columns; give "
            f"one weight per feature."
        )
    return w


def check_times(times: Any, name: str = "times") -> NDArray[np.float64] | None:
    """Validate evaluation times: None, or a 1-d array of finite times >= 0.

    Raises
    ------
    TypeError
        If the times are not numeric.
    ValueError
        If a time is NaN, infinite or negative, or the array is not 1-d.
    """
    if times is None:
        return None
    t = np.atleast_1d(np.asarray(times))
    if t.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers; got {times!r}.")
    t = t.astype(np.float64)
    if t.ndim != 1 or t.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array; got shape {t.shape}.")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        bad = t[~(np.isfinite(t) & (t >= 0))]
        raise ValueError(
            f"{name} must be finite and >= 0; got {bad[:5].tolist()}. Pass the "
            f"times at which to evaluate (or None for the training event times)."
        )
    return t


def check_cv_param(cv: Any, n_samples: int, owner: str) -> None:
    """Check a ``cv`` parameter before it reaches scikit-learn.

    ``cv`` is None (the caller's default), an int from 2 to ``n_samples``, a
    splitter (an object with ``split``) or an iterable of ``(train, test)``
    index arrays (checked once split: :func:`check_split`).
    """
    what = (
        "an int >= 2, a cross-validation splitter (e.g. KFold(5, shuffle=True)) "
        "or a list of (train, test) index arrays"
    )
    if (
        isinstance(cv, (bool, str, bytes))
        or (isinstance(cv, numbers.Real) and not isinstance(cv, numbers.Integral))
        or not (
            cv is None
            or isinstance(cv, numbers.Integral)
            or hasattr(cv, "split")
            or hasattr(cv, "__iter__")
        )
    ):
        raise ValueError(
            f"The 'cv' parameter of {owner} must be {what}. Got {cv!r} instead."
        )
    if isinstance(cv, numbers.Integral) and not 2 <= int(cv) <= n_samples:
        raise ValueError(
            f"The 'cv' parameter of {owner} must be an int from 2 to the number "
            f"of samples ({n_samples}): each of the cv folds tests on at least "
            f"one row and trains on the others. Got {cv!r} instead."
        )


def check_split(
    folds: Sequence[Any], n_samples: int, owner: str
) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """Return ``cv``'s folds as pairs of index arrays, or raise naming a bad one.

    A fold is a ``(train, test)`` pair of integer indices into the
    ``n_samples`` rows (or boolean masks over them); neither part may be
    empty.
    """
    out = []
    for i, fold in enumerate(folds):
        try:
            train, test = fold
        except (TypeError, ValueError):
            raise ValueError(
                f"{owner}: cv fold {i} is {fold!r}, not a (train, test) pair of "
                f"index arrays; pass cv=list(splitter.split(X, y)) or a splitter."
            ) from None
        pair = []
        for part, idx in (("training", train), ("test", test)):
            a = np.asarray(idx)
            if a.dtype == np.bool_ and a.shape == (n_samples,):
                a = np.flatnonzero(a)
            if a.ndim != 1 or not (a.size == 0 or np.issubdtype(a.dtype, np.integer)):
                raise ValueError(
                    f"{owner}: the {part} part of cv fold {i} must be a 1-d array "
                    f"of row indices (or a boolean mask of the {n_samples} rows); "
                    f"got {a.dtype} values of shape {a.shape}."
                )
            if a.size == 0:
                raise ValueError(
                    f"{owner}: the {part} part of cv fold {i} is empty; every "
                    f"fold needs rows to train on and rows to test on."
                )
            if a.min() < 0 or a.max() >= n_samples:
                raise ValueError(
                    f"{owner}: the {part} part of cv fold {i} indexes rows from "
                    f"{int(a.min())} to {int(a.max())}; the rows are 0 to "
                    f"{n_samples - 1}."
                )
            pair.append(a.astype(np.intp))
        out.append((pair[0], pair[1]))
    if not out:
        raise ValueError(f"{owner}: cv gave no fold.")
    return out


def check_same_rows(X: Any, y: Any, names: tuple[str, str] = ("X", "y")) -> None:
    """Raise if pandas ``X`` and ``y`` hold the same row labels in another order.

    Rows are matched by position, as in scikit-learn; a ``y`` whose index
    is a permutation of ``X``'s was almost surely meant to be matched by
    label (statsmodels refuses unaligned indexes too). ``names`` are the
    arguments' names in the message (a prediction and an outcome, a cohort's
    ``X_train`` and ``y_train``). The one check of every public function
    that takes rows of both (the indexes are read as pandas' ``Index``,
    without importing pandas).
    """
    xi, yi = _row_index(X), _row_index(y)
    if xi is None or yi is None:
        return
    if len(xi) != len(yi) or xi.equals(yi) or not xi.is_unique:
        return
    if yi.is_unique and set(yi) == set(xi):
        x, what = names
        raise ValueError(
            f"{what} holds the rows of {x} in another order (their indexes have "
            f"the same labels, not in the same order). Rows are matched by "
            f"position, as in scikit-learn: align them first, e.g. {what} = "
            f"{what}.loc[{x}.index]."
        )


def _row_index(data: Any) -> Any:
    """Return a pandas object's row index (an ``Index``), or None."""
    index = getattr(data, "index", None)  # a list's .index is a method
    if hasattr(index, "equals") and hasattr(index, "is_unique"):
        return index
    return None


def check_y_length(n_X: int, y: Any, y_name: str = "y") -> None:
    """Raise a ValueError if ``y`` does not have one entry (row) per row of ``X``.

    The one check of the outcome's length, for every family's ``y`` (a
    vector, a survival array, DataFrame or structured array) and for
    :func:`vcpcr.compute_weights`.
    """
    n_y = len(y) if hasattr(y, "__len__") else None
    if n_y != n_X:
        got = n_y if n_y is not None else f"no length ({type(y).__name__})"
        pair = (
            isinstance(y, tuple | list)
            and n_y == 2
            and all(np.ndim(part) == 1 and len(part) == n_X for part in y)
        )
        hint = (
            " A survival outcome given as the pair (time, event) goes in as "
            "vcpcr.Surv(time, event) (or np.column_stack([time, event]))."
            if pair
            else ""
        )
        raise ValueError(
            f"X and {y_name} have inconsistent numbers of samples: X has {n_X} "
            f"rows but {y_name} has {got}. Give one {y_name} entry per row of X "
            f"(the same rows, in the same order).{hint}"
        )


def check_varying(
    y: NDArray[np.float64], name: str = "y", *, where: str = "", fix: str = ""
) -> None:
    """Raise a ValueError if the numeric outcome ``y`` is constant up to rounding.

    The one "constant y" rule (:func:`vcpcr._scaling.constant_columns` on the
    one column): a regression on a constant response has nothing to explain
    and the response cannot be standardized. ``where`` adds a place to the
    message (e.g. ``" on a training fold of 40 samples"``), ``fix`` replaces
    the default advice.
    """
    if constant_columns(y[:, None]).size:
        advice = fix or f"Check that {name} is the intended outcome."
        raise ValueError(
            f"{name} is constant{where} (all values {y[0]!r}, up to rounding): a "
            f"regression needs a varying response, and a constant one cannot be "
            f"standardized. {advice}"
        )


def check_labels(
    labels: ArrayLike,
    n_features: int,
    name: str = "init",
    *,
    n_clusters: int | None = None,
) -> NDArray[np.intp]:
    """Validate an initial partition: one integer label per feature.

    Parameters
    ----------
    labels : array-like of shape (n_features,)
        Cluster labels ``0..K-1``: integers, or floats with integral values.
    n_features : int
        Number of features.
    name : str, default="init"
        Name of the argument in error messages (e.g. ``"inits[2]"``).
    n_clusters : int, optional
        The number of clusters ``K`` the labels must lie below; without it
        only ``labels >= 0`` is required.

    Returns
    -------
    ndarray of int of shape (n_features,)
        The labels.

    Raises
    ------
    TypeError
        If a label is not an integer.
    ValueError
        If the shape is not ``(n_features,)`` or a label is out of range.
    """
    arr = np.asarray(labels)
    if arr.shape != (n_features,):
        raise ValueError(
            f"{name} must hold one label per feature: expected shape "
            f"({n_features},), got {arr.shape}. Give an integer label 0..K-1 for "
            f"each of the {n_features} features."
        )
    integral = arr.dtype.kind in "iu" or (
        arr.dtype.kind == "f"
        and bool(np.all(np.isfinite(arr)))
        and bool(np.all(arr == np.round(arr)))
    )
    if not integral:
        raise TypeError(
            f"{name} labels must be integers; got dtype {arr.dtype} "
            f"(e.g. {arr.ravel()[:3].tolist()}). Give integer labels 0..K-1."
        )
    out = arr.astype(np.intp)
    if n_clusters is None and out.min() < 0:
        raise ValueError(
            f"{name} labels must be >= 0; got {out.min()}. Number the clusters "
            f"0..K-1 (unselected features have no initial label)."
        )
    if n_clusters is not None and (out.min() < 0 or out.max() >= n_clusters):
        raise ValueError(
            f"{name} labels must lie in 0..{n_clusters - 1} "
            f"(n_clusters={n_clusters}); got values in {out.min()}..{out.max()}."
        )
    return out


def check_scalar(
    value: Any,
    name: str,
    kind: type | tuple[type, ...],
    *,
    owner: str,
    min_val: float | None = None,
    max_val: float | None = None,
    include_min: bool = True,
    include_max: bool = True,
) -> None:
    """Check the type and range of a scalar parameter.

    Parameters
    ----------
    value : object
        The parameter value.
    name : str
        The parameter name.
    kind : type or tuple of types
        Accepted types, e.g. ``numbers.Integral`` or ``numbers.Real``.
    owner : str
        The class or function the parameter belongs to (for the message).
    min_val, max_val : float, optional
        Bounds of the accepted range.
    include_min, include_max : bool, default=True
        Whether the bounds are inclusive.

    Raises
    ------
    TypeError
        If ``value`` has the wrong type.
    ValueError
        If ``value`` is out of range.
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) or not isinstance(value, kinds):
        wanted = " or ".join(k.__name__ for k in kinds)
        raise TypeError(
            f"The {name!r} parameter of {owner} must be of type {wanted}. "
            f"Got {value!r} instead."
        )
    if isinstance(value, numbers.Real) and not np.isfinite(float(value)):
        raise ValueError(
            f"The {name!r} parameter of {owner} must be finite. Got {value!r} instead."
        )
    num = float(cast(Any, value))
    low_bad = min_val is not None and (num < min_val if include_min else num <= min_val)
    high_bad = max_val is not None and (
        num > max_val if include_max else num >= max_val
    )
    if low_bad or high_bad:
        lo = "-inf" if min_val is None else f"{min_val}"
        hi = "inf" if max_val is None else f"{max_val}"
        interval = (
            f"{'[' if include_min and min_val is not None else '('}{lo}, "
            f"{hi}{']' if include_max and max_val is not None else ')'}"
        )
        raise ValueError(
            f"The {name!r} parameter of {owner} must be in the range {interval}. "
            f"Got {value!r} instead."
        )


def check_fraction(value: Any, name: str, *, owner: str) -> None:
    """Check that ``value`` is a real number strictly between 0 and 1.

    A level (``alpha``), a share of the rows (``train_size``) or a quantile
    (``gamma_min``): :func:`check_scalar` on the open interval ``(0, 1)``.
    """
    check_scalar(
        value,
        name,
        numbers.Real,
        owner=owner,
        min_val=0.0,
        max_val=1.0,
        include_min=False,
        include_max=False,
    )


def check_choice(value: Any, name: str, choices: Sequence[str], *, owner: str) -> str:
    """Check that ``value`` is one of the strings in ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be one of "
            f"{', '.join(repr(c) for c in choices)}. Got {value!r} instead."
        )
    return value


def check_random_state(seed: Any) -> np.random.Generator:
    """Turn ``seed`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    seed : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` gives fresh OS entropy; an int seeds a new generator; a
        generator is returned as is; a legacy ``RandomState`` (as passed by some
        scikit-learn utilities) seeds a new generator from its stream.

    Returns
    -------
    numpy.random.Generator
        The generator to draw from.

    Raises
    ------
    TypeError
        If ``seed`` is none of the above.
    """
    if seed is None or isinstance(seed, numbers.Integral | np.integer):
        if seed is not None and not isinstance(seed, bool) and int(seed) < 0:
            raise ValueError(
                f"random_state must be a non-negative integer. Got {seed!r} instead."
            )
        return np.random.default_rng(None if seed is None else int(seed))
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    raise TypeError(
        f"random_state must be None, an int or a numpy.random.Generator. "
        f"Got {seed!r} of type {type(seed).__name__} instead."
    )


def check_survival(
    y: Any, name: str = "y"
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Validate a right-censored survival outcome; split it into time and event.

    Parameters
    ----------
    y : array-like of shape (n_samples, 2), DataFrame or structured array
        ``(time, event)`` columns (time first), or a structured array with a
        bool (or int) event field and a float time field in either order
        (scikit-survival's ``dtype=[("event", "?"), ("time", "<f8")]``).
    name : str, default="y"
        Name of the argument in error messages.

    Returns
    -------
    time, event : ndarray of shape (n_samples,)
        Float times (finite, ``>= 0``) and bool events (True: observed event).

    Raises
    ------
    TypeError
        If the times or events are not numeric.
    ValueError
        For a wrong shape, < 2 samples, non-finite or negative times, events
        not 0/1, no events, or no information for a Cox model (see Notes).

    Notes
    -----
    Times of 0 are allowed: only their order matters (coxph and lifelines
    accept them; glmnet rejects times ``<= 0``). Besides "no events", ``y`` is
    rejected when the null-model martingale residuals (``-n`` times the
    gradient at ``eta = 0``) all vanish: when everyone at risk at the first
    event time has the event then (e.g. one event, at the largest time), every
    constant risk score maximizes the partial likelihood and all weights are 0.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr._checks import check_survival
    >>> y = np.array([(1, 5.0), (0, 3.5), (1, 1.2)], dtype="?,<f8")
    >>> check_survival(y)
    (array([5. , 3.5, 1.2]), array([ True, False,  True]))
    """
    time, event = _survival_columns(y, name)
    t, d = check_time_event(time, event, name)
    check_survival_rows(t, d, name)
    return t, d


def check_survival_rows(
    time: NDArray[np.float64], event: NDArray[np.bool_], name: str = "y"
) -> None:
    """:func:`check_survival`'s checks that depend on which rows ``y`` holds.

    At least 2 samples, an event, information for a Cox model
    (:func:`check_informative`), on ``time`` and ``event`` arrays that were
    checked already: some rows of a validated outcome (a resample) fail
    here with :func:`check_survival`'s messages.
    """
    if time.size < 2:
        raise ValueError(f"{name} has {time.size} sample(s); at least 2 are required.")
    check_informative(time, event, name)


def _survival_columns(y: Any, name: str) -> tuple[NDArray[Any], NDArray[Any]]:
    """Split ``y`` into its time and event columns (no value checks).

    Columns or fields named ``time`` and ``event`` are read by name, in any
    order; otherwise a 2-column ``y`` is (time, event) by position.
    """
    named = _time_event_names(getattr(y, "columns", None))
    if named is not None:
        return np.asarray(y[named[0]]), np.asarray(y[named[1]])
    if getattr(getattr(y, "dtype", None), "names", None) is not None:
        return _structured_fields(np.asarray(y), name)
    arr = np.asarray(y)  # a DataFrame of float times and bool events: object
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(
            f"{name} must be a survival outcome of shape (n_samples, 2) with "
            f"columns (time, event), a 2-column DataFrame or a structured array; "
            f"got shape {arr.shape}. Stack two arrays with np.column_stack((time, "
            f"event))."
        )
    return arr[:, 0], arr[:, 1]


def _structured_fields(y: NDArray[Any], name: str) -> tuple[NDArray[Any], NDArray[Any]]:
    """(time, event) of a structured array: the bool (else int) field is the event."""
    names = y.dtype.names or ()
    named = _time_event_names(names)
    if named is not None and y.ndim == 1:
        return y[named[0]], y[named[1]]
    kinds = [y.dtype[f].kind for f in names]
    ok = len(names) == 2 and y.ndim == 1
    if ok and kinds.count("b") == 1:
        ev = kinds.index("b")
    elif ok and sorted(kinds) in (["f", "i"], ["f", "u"]):
        ev = 1 - kinds.index("f")
    else:
        fields = [(f, y.dtype[f].str) for f in names]
        raise ValueError(
            f"{name} is a structured array of shape {y.shape} with fields {fields}; "
            f"use 1-d with dtype=[('event', '?'), ('time', '<f8')] (any order)."
        )
    return y[names[1 - ev]], y[names[ev]]


def _time_event_names(names: Any) -> tuple[Any, Any] | None:
    """Return the (time, event) names of two named ``time``, ``event``, or None."""
    if names is None or len(names) != 2:
        return None
    by_name = {str(n).lower(): n for n in names}
    if set(by_name) != {"time", "event"}:
        return None
    return by_name["time"], by_name["event"]


def _numeric(values: Any) -> NDArray[Any]:
    """``values`` as an array; an object array as floats (missing: NaN) if it can."""
    arr = np.asarray(values)
    if arr.dtype.kind == "O":
        try:
            return missing_to_nan(arr).astype(np.float64)
        except (TypeError, ValueError):
            return arr  # non-numeric: reported by the caller
    return arr


def check_time_event(
    time: Any, event: Any, name: str = "y"
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Validate right-censored follow-up times and event indicators.

    The one check of a survival outcome's values, for :func:`check_survival`
    (every Cox ``y``) and :func:`vcpcr.Surv`: numeric times and events, no
    missing value, finite times ``>= 0``, events 0/1 or bool (with the fix
    for R's 1/2 coding and for swapped columns).

    Parameters
    ----------
    time, event : array-like of shape (n_samples,)
        The follow-up times and the event indicators (1: observed event).
    name : str, default="y"
        What holds them, in error messages.

    Returns
    -------
    time, event : ndarray of shape (n_samples,)
        Float times and bool events.

    Raises
    ------
    TypeError
        If the times or the events are not numeric (or bool).
    ValueError
        For missing values, infinite or negative times, or events not 0/1.
    """
    t, e = _numeric(time), _numeric(event)
    if t.dtype.kind not in "iuf" or e.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold numeric times and bool or 0/1 events, in this order; "
            f"got dtypes {t.dtype} and {e.dtype}. Turn status labels into events by "
            f"comparing them, e.g. Surv(time, status == 'dead')."
        )
    t, ev = t.astype(np.float64), e.astype(np.float64)
    for values, what in ((t, "survival time(s)"), (ev, "event indicator(s)")):
        if (missing := int(np.isnan(values).sum())) > 0:
            raise ValueError(
                f"{name} has {missing} missing {what} (NaN) among {values.size}; "
                f"drop or impute these rows (in a formula, missing='drop' drops "
                f"them)."
            )
    if (inf := int(np.isinf(t).sum())) > 0:
        raise ValueError(
            f"{name} has {inf} infinite survival time(s) among {t.size}; give the "
            f"last follow-up time of a censored subject instead."
        )
    if (neg := int((t < 0).sum())) > 0:
        raise ValueError(
            f"{name} has {neg} negative survival time(s) among {t.size} (smallest "
            f"{t.min():g}); times must be >= 0. Correct or drop these rows."
        )
    bad = ~((ev == 0) | (ev == 1))
    if bad.any():
        hint = "code events as 1 (or True) and censoring as 0 (or False)"
        if set(np.unique(ev).tolist()) <= {1.0, 2.0}:
            hint = (
                "R's Surv() codes 1 = censored, 2 = event: pass event == 2, "
                "e.g. Surv(time, status == 2)"
            )
        elif np.all((t == 0) | (t == 1)):
            hint = "the columns look swapped: pass (time, event) in this order"
        raise ValueError(
            f"{name}: event must be 0/1 or bool; {int(bad.sum())} of {ev.size} "
            f"values are not (e.g. {np.unique(ev[bad])[:5].tolist()}); {hint}."
        )
    return t, ev == 1


def check_informative(
    time: NDArray[np.float64], event: NDArray[np.bool_], name: str = "y"
) -> None:
    """Reject outcomes without events or with an uninformative likelihood.

    :func:`check_survival`'s test of the values' information (see its
    Notes), on checked ``time`` and ``event`` arrays: for a part of an
    outcome already validated (a CV training fold), which needs no other
    check.
    """
    if not event.any():
        raise ValueError(
            f"{name} has no events: all {event.size} observations are censored, so "
            f"the Cox partial likelihood is constant. At least one event is needed."
        )
    t1 = time[event].min()
    at_risk = time >= t1
    if np.all(event[at_risk] & (time[at_risk] == t1)):
        raise ValueError(
            f"{name} carries no information for a Cox model: all {at_risk.sum()} "
            f"subject(s) at risk at the only event time {t1:g} have the event then "
            f"(nobody observed later), so every Cox weight is 0. At least one "
            f"subject must be event-free (or censored) at an event time."
        )
