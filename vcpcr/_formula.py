"""Formula interface: a formula and a DataFrame to an outcome and a design matrix.

A leaf service on formulaic that knows nothing about the estimator. The rules:

- X has no intercept column (VC-PCR fits its own). Categoricals (object, string,
  category, ``C(x)``) become reduced-rank treatment dummies (``sex[T.m]``), also
  for ``y ~ . - 1``; SOS-NMF clusters or drops each dummy as a separate feature.
- A numeric outcome is a Series (``I(s == "a")`` gives 0/1); a string or
  categorical one is a categorical Series of its labels (formulaic's one-hot
  encoding is decoded); ``Surv(time, event)`` gives float columns time, event.
- Missing values in used columns raise, or with ``missing="drop"`` drop the rows
  with a ``VCPCRWarning``; rows are never dropped silently.
- ``y ~ .`` and ``y ~ . - a - b`` on numeric predictors skip formulaic's slow
  expansion and build the identical design directly from the DataFrame.

Formulas see formulaic's transforms, numpy as ``np`` and :func:`Surv`; backquote
names with spaces or special characters: ``y ~ `my feature` + age``.
"""

from __future__ import annotations

import ast
import itertools
import keyword
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from formulaic import FactorValues, Formula, ModelSpec, SimpleFormula, model_matrix
from formulaic.errors import DataMismatchWarning, FormulaicError
from formulaic.parser import DefaultFormulaParser
from formulaic.parser.types import Factor, Token
from formulaic.transforms import TRANSFORMS
from numpy.typing import ArrayLike

from vcpcr._checks import check_choice, check_time_event
from vcpcr.exceptions import VCPCRWarning, user_stacklevel

__all__ = [
    "ColumnEncoding",
    "DesignSpec",
    "FormulaResult",
    "Resolved",
    "Surv",
    "as_list",
    "column_encodings",
    "encode_columns",
    "encode_new",
    "expand_names",
    "formula_outcome",
    "parse_formula",
    "reference_levels",
    "resolve_formula",
    "row_dependent_encoding",
    "source_groups",
    "term_sources",
    "transform_new",
    "warn_dropped",
]

_MISSING_CHOICES = ("raise", "drop")
_NUMERIC = set("biuf")  # dtype kinds used as numbers (bool, int, uint, float)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SHOW = 10  # how many column names an error message lists
_ENCODED = "covariates= and strata="  # what an encoding spec is, in errors
_SIGNS = ((Token.Kind.OPERATOR, "+"), (Token.Kind.OPERATOR, "-"))
_NAME = Token.Kind.NAME
# formulaic's public parser, tokens only: no intercept inserted ("0" is "-1").
_TOKENIZER = DefaultFormulaParser(include_intercept=False)
_FIX = {
    "raise": "drop or impute them, or pass missing='drop'.",
    "predict": "impute them (rows cannot be dropped at prediction time).",
    "score": "drop those rows before scoring.",
}


def Surv(time: ArrayLike, event: ArrayLike) -> pd.DataFrame:  # noqa: N802
    """Build a right-censored survival outcome, as R's ``survival::Surv``.

    Use it on the left-hand side of a formula, ``Surv(time, event) ~ .``, where
    it needs no import, or on its own as the ``y`` of a Cox model.

    Parameters
    ----------
    time : array-like of shape (n_samples,)
        Follow-up times: numeric, finite and non-negative.
    event : array-like of shape (n_samples,)
        1 (or ``True``) if the event was observed at ``time``, 0 (or ``False``)
        if the observation was censored.

    Returns
    -------
    pandas.DataFrame of shape (n_samples, 2)
        Float columns ``time`` and ``event``, with the index of ``time`` (or
        ``event``) if it is a Series, else a RangeIndex.

    Raises
    ------
    TypeError
        If ``time`` is not numeric, or ``event`` neither numeric nor boolean.
    ValueError
        On missing values, negative or infinite times, events other than 0/1
        (the checks of every Cox ``y``,
        :func:`vcpcr._checks.check_time_event`), or inputs that are not
        1-D or differ in length or index.

    Examples
    --------
    >>> Surv([5.0, 3.5, 9.0], [1, 0, True])
       time  event
    0   5.0    1.0
    1   3.5    0.0
    2   9.0    1.0
    """
    indexes = [x.index for x in (time, event) if isinstance(x, pd.Series)]
    if len(indexes) == 2 and not indexes[0].equals(indexes[1]):
        raise ValueError(
            "Surv: time and event are Series with different indexes; align them "
            "first (e.g. pass df.time and df.event from the same DataFrame)."
        )
    t, e = _surv_column(time, "time"), _surv_column(event, "event")
    if t.size != e.size:
        raise ValueError(f"Surv: time has {t.size} values but event has {e.size}.")
    t, d = check_time_event(t, e, "Surv(time, event)")
    index = indexes[0] if indexes else pd.RangeIndex(t.size)
    return pd.DataFrame({"time": t, "event": d.astype(np.float64)}, index=index)


def _surv_column(values: Any, name: str) -> np.ndarray:
    """``time`` or ``event`` as a 1-d array (its values are checked together)."""
    arr = values.to_numpy() if isinstance(values, pd.Series) else np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"Surv: {name} must be 1-D; got shape {arr.shape}.")
    return arr


def _surv_factor(time: Any, event: Any) -> FactorValues:
    """Surv in the formula namespace: two numeric columns formulaic can encode."""
    out = Surv(time, event)
    return FactorValues(
        {"time": out["time"].to_numpy(), "event": out["event"].to_numpy()},
        kind=Factor.Kind.NUMERICAL,
    )


# The names formulas see besides the data and formulaic's transforms.
_CONTEXT = {"np": np, "Surv": _surv_factor}


@dataclass(frozen=True)
class DesignSpec:
    """Everything needed to rebuild the design matrix on new data.

    Made by :func:`parse_formula`, used by :func:`transform_new`; picklable and
    free of data.

    Attributes
    ----------
    formula : str
        The formula as the user wrote it.
    columns : tuple of str
        The data columns the right-hand side reads (new data must have them).
    feature_names : tuple of str
        The design's column names, in order.
    model_spec : formulaic.ModelSpec or None
        formulaic's right-hand-side spec (categorical levels, transform state);
        ``None`` on the fast path, whose design is ``data[columns]`` as floats.
    parts : tuple of DesignSpec
        A two-part formula's specs (covariates, clustered features), whose
        designs are side by side; empty otherwise.
    """

    formula: str
    columns: tuple[str, ...]
    feature_names: tuple[str, ...]
    model_spec: ModelSpec | None = None
    parts: tuple[DesignSpec, ...] = ()


class FormulaResult(NamedTuple):
    """Outcome, design matrix and encoding spec of a parsed formula.

    Attributes
    ----------
    y : pandas.Series or pandas.DataFrame
        The outcome: a Series (numbers, or categorical labels), or for
        ``Surv(...)`` a DataFrame with float columns ``time`` and ``event``.
    X : pandas.DataFrame of shape (n_samples, n_features)
        The float64 design matrix, without an intercept column.
    feature_names : list of str
        ``list(X.columns)``.
    spec : DesignSpec
        Re-applies the identical encoding to new data (:func:`transform_new`).
    yname : str
        The left-hand side as formulaic prints it, e.g. ``'np.log(y)'``.
    n_dropped : int
        Rows dropped for missing values (``missing="drop"``), else 0.
    covariates : tuple of str
        A two-part formula's covariate columns of ``X`` (the first ones);
        empty otherwise.
    """

    y: pd.Series | pd.DataFrame
    X: pd.DataFrame
    feature_names: list[str]
    spec: DesignSpec
    yname: str
    n_dropped: int
    covariates: tuple[str, ...] = ()


def parse_formula(
    formula: str, data: pd.DataFrame, *, missing: str = "raise"
) -> FormulaResult:
    """Evaluate a model formula on a DataFrame.

    Parameters
    ----------
    formula : str
        A two-sided formula: ``"y ~ ."``, ``"y ~ . - age - sex"``,
        ``"np.log(y) ~ g1 + np.log(g2)"``, ``"I(status == 'dead') ~ ."`` or
        ``"Surv(time, event) ~ ."``. ``.`` stands for every column not used on
        the left-hand side. A two-part formula ``"y ~ age + C(stage) | ."``
        puts covariates left of ``|`` and the clustered features right of it,
        where ``.`` also leaves out the covariates' columns. A term
        ``strata(a, b)`` reads as ``a + b`` (the estimators make those
        columns Cox strata, :func:`resolve_formula`).
    data : pandas.DataFrame
        The data; column names must be unique strings.
    missing : {"raise", "drop"}, default="raise"
        Rows with missing values in a column the formula uses: raise a
        ``ValueError``, or drop them with a ``VCPCRWarning``.

    Returns
    -------
    FormulaResult
        ``(y, X, feature_names, spec, yname, n_dropped, covariates)``.

    Raises
    ------
    TypeError
        On a non-string formula or column name, non-DataFrame data, or dates.
    ValueError
        On a malformed or one-sided formula, unknown columns, no predictor,
        missing values (with ``missing="raise"``), or a column on both sides
        of ``|``.

    See Also
    --------
    transform_new : Apply the stored encoding to new data.
    Surv : The survival outcome.

    Notes
    -----
    X has no intercept column; categorical predictors become reduced-rank
    dummies, each a separate feature for SOS-NMF (module docstring).
    Categorical covariates are coded as statsmodels codes them (treatment
    coding, the first level the reference, ``C(stage)[T.II]``). With
    ``missing="drop"``, a row missing in either part is dropped from both.

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 4.0], "g1": [0.5, 1.5, 2.0],
    ...                    "sex": ["f", "m", "f"]})
    >>> res = parse_formula("y ~ .", df)
    >>> res.feature_names
    ['g1', 'sex[T.m]']
    >>> res.X.to_numpy().tolist()
    [[0.5, 0.0], [1.5, 1.0], [2.0, 0.0]]
    """
    if not isinstance(formula, str):
        raise TypeError(
            "The 'formula' parameter of parse_formula must be a str such as "
            f"'y ~ .'. Got {formula!r} of type {type(formula).__name__} instead."
        )
    if missing not in _MISSING_CHOICES:
        raise ValueError(
            "The 'missing' parameter of parse_formula must be one of "
            f"{_MISSING_CHOICES}. Got {missing!r} instead."
        )
    data = _check_data(data)
    # strata(a) reads a (the estimators take the strata from resolve_formula)
    return _parse_checked(_strata_terms(formula, data)[0], data, missing)


def _parse_checked(formula: str, data: pd.DataFrame, missing: str) -> FormulaResult:
    """:func:`parse_formula` on data that passed :func:`_check_data`."""
    lhs_tokens, rhs_tokens = _split_tokens(formula)
    _check_known_names(formula, lhs_tokens + rhs_tokens, data)
    bar = _top_level_bar(rhs_tokens)
    if bar is not None:
        return _parse_two_part(formula, data, lhs_tokens, rhs_tokens, bar, missing)
    lhs_vars = _read_columns(lhs_tokens, data)
    fast = _fast_path_columns(rhs_tokens, lhs_vars, data)
    if fast is not None:
        return _parse_fast(formula, data, fast, lhs_vars, missing)
    return _parse_slow(formula, data, lhs_vars, missing)


class Resolved(NamedTuple):
    """The estimator's data after :func:`resolve_formula`.

    ``spec`` is the encoding to re-apply to new data (None without formula);
    ``covariates`` the covariate columns a two-part formula names; ``strata``
    the strata to take (``strata=`` or the formula's ``strata()`` terms, as
    data columns or design columns; None without); ``groups`` each encoded
    data column's design columns (:func:`source_groups`); ``rows`` the
    positions of the rows kept when rows with missing values were dropped
    (None if none were; :func:`resolve_formula` leaves it None, the
    estimators' input route fills it).
    """

    X: Any
    y: Any
    yname: str
    spec: DesignSpec | None
    covariates: tuple[str, ...] = ()
    strata: Any = None
    groups: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (never mutated)
    rows: Any = None


def resolve_formula(
    formula: str | None, X: Any, y: Any, *, missing: str, owner: str, strata: Any = None
) -> Resolved:
    """Return the estimator's ``(X, y)``, evaluating ``formula`` on ``X`` if given.

    Without a formula, ``X`` and ``y`` pass through and the response is named
    after ``y`` (its ``name``; ``Surv(time, event)`` for a two-column frame;
    else ``"y"``). With one, ``X`` is the DataFrame holding every column and
    ``y`` must be None.

    Parameters
    ----------
    formula : str or None
        The estimator's ``formula`` parameter.
    X : array-like or DataFrame
        The data passed to ``fit``.
    y : array-like or None
        The response passed to ``fit``.
    missing : {"raise", "drop"}
        The estimator's ``missing`` parameter (see :func:`parse_formula`).
    owner : str
        The estimator's class name, for error messages.
    strata : str, int, list of them or None, default=None
        The estimator's ``strata`` parameter. With a formula, the names of
        data columns among them, and the columns of the formula's
        ``strata(...)`` terms, are read from ``X`` beside the formula (if it
        does not read them) and never clustered nor covariates (see Notes).

    Returns
    -------
    Resolved
        ``(X, y, yname, spec, covariates, strata, groups)``.

    Raises
    ------
    ValueError
        With a formula and a ``y``, a bad ``missing``, strata given both as
        ``strata=`` and in the formula, or a stratum the formula also uses
        as a term.

    Notes
    -----
    ``strata(node)`` (R's and lifelines' spelling) is read as ``node``, and
    ``strata=["node"]`` names a data column the formula need not use: both
    are evaluated as covariates are (numbers as they are, categories as
    treatment dummies; rows with missing values dropped with the rest), and
    the stratum of a row is the combination of its values.
    """
    if formula is None:
        name = getattr(y, "name", None)
        columns = list(getattr(y, "columns", []))
        if name is None and len(columns) == 2:  # a survival outcome frame
            name = f"Surv({columns[0]}, {columns[1]})"
        yname = str(name) if name is not None else "y"
        return Resolved(X, y, yname, None, strata=strata)
    check_choice(missing, "missing", _MISSING_CHOICES, owner=owner)
    if y is not None:
        raise ValueError(
            "With formula=..., pass one DataFrame holding every column to fit "
            "(fit(df)) and no y: the formula names the outcome."
        )
    formula, strata = _read_strata(formula, _check_data(X), strata)
    parsed = parse_formula(formula, X, missing=missing)
    groups = source_groups(parsed.spec)
    taken = set(as_list(expand_names(strata, groups, parsed.feature_names)))
    covariates = tuple(c for c in parsed.covariates if c not in taken)
    return Resolved(
        parsed.X, parsed.y, parsed.yname, parsed.spec, covariates, strata, groups
    )


_STRATA_TERM = re.compile(r"strata\((.*)\)", re.DOTALL)


def _read_strata(formula: str, data: pd.DataFrame, strata: Any) -> tuple[str, Any]:
    """Rewrite ``formula`` so that it reads the strata; return it and the strata.

    ``strata(a, b)`` terms become ``a + b`` (:func:`_strata_terms`); the data
    columns named by ``strata=`` go left of ``|`` (a one-part formula gains
    one), where the formula's ``.`` leaves them out. Entries of ``strata=``
    that are not data columns (design columns such as ``node[T.1]``,
    positions) pass as they are.
    """
    plain, in_formula = _strata_terms(formula, data)
    if in_formula and strata is not None:
        raise ValueError(
            f"strata={strata!r} and the formula's strata() terms are given both; "
            f"name the strata in one place."
        )
    if in_formula or strata is None:
        return plain, in_formula or strata
    rhs = _split_tokens(formula)[1]
    names = [s for s in as_list(strata) if isinstance(s, str) and s in data.columns]
    if not names:
        return formula, strata
    used = _read_columns(rhs, data) - _removed_names(rhs)
    if both := [n for n in names if n in used]:
        raise ValueError(
            f"strata={strata!r}: the formula {formula!r} also uses {both} as a "
            f"term. A column is a stratum or a term: remove it from the formula "
            f"(the strata are read from data), or write strata({both[0]}) in it."
        )
    plain = " + ".join(_quote(n) for n in names)
    bar = _top_level_bar(rhs)
    if bar is not None:
        at = bar.source_start
        return f"{formula[:at].rstrip()} + {plain} {formula[at:]}", strata
    at = rhs[0].source_start if rhs else len(formula)
    return f"{formula[:at]}{plain} | {formula[at:]}", strata


def _strata_terms(formula: str, data: pd.DataFrame) -> tuple[str, list[str] | None]:
    """Return ``formula`` with ``strata(a, b)`` terms as ``a + b``, and a, b.

    Only top-level terms of the right-hand side; None if there are none.
    """
    rhs = _split_tokens(formula)[1]
    terms = [(t, m) for t in _top_level(rhs) if (m := _STRATA_TERM.fullmatch(t.token))]
    if not terms:
        return formula, None
    names: list[str] = []
    for token, match in reversed(terms):
        args = [a.strip().strip("`") for a in match.group(1).split(",")]
        unknown = [a for a in args if a not in data.columns]
        if unknown or not args:
            raise ValueError(
                f"The formula {formula!r}: {token.token} must name columns of "
                f"data; {unknown or args} are not."
            )
        names = [*args, *names]
        plain = " + ".join(_quote(a) for a in args)
        end = token.source_end + 1
        formula = f"{formula[: token.source_start]}{plain}{formula[end:]}"
    return formula, names


def _top_level(tokens: list[Token]) -> list[Token]:
    """Return the tokens of a formula part outside parentheses."""
    depth, out = 0, []
    for token in tokens:
        if token.kind is Token.Kind.CONTEXT:
            depth += 1 if token.token in "([" else -1
        elif depth == 0:
            out.append(token)
    return out


def _quote(name: str) -> str:
    """``name`` as a formula term (backquoted unless a plain identifier).

    A name is data: one with a backquote would end the quoting and turn the
    rest into formula code, so it is refused.
    """
    if "`" in name:
        raise ValueError(
            f"The column [{name!r}] (in covariates=, strata= or a strata() "
            f"term) has a backquote in their name, which a formula cannot "
            f"quote; rename it, e.g. "
            f"df.rename(columns={{{name!r}: {name.replace('`', '')!r}}})."
        )
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    return f"`{name}`"


def expand_names(
    items: Any, groups: dict[str, tuple[str, ...]], names: Sequence[str]
) -> Any:
    """Return ``items`` with each encoded data column replaced by its design columns.

    ``items`` is returned as it is if it names none. A name of a design
    column is kept (it takes precedence), as are positions; a data column
    that the design encodes (``groups``, from :func:`source_groups`)
    becomes its columns, e.g. ``"er"`` becomes ``["er[T.neg]", "er[T.pos]"]``.
    """
    listed = as_list(items)
    design = set(names)

    def encoded(item: Any) -> bool:
        return isinstance(item, str) and item not in design and item in groups

    if items is None or not any(encoded(item) for item in listed):
        return items
    return [c for item in listed for c in (groups[item] if encoded(item) else [item])]


def as_list(items: Any) -> list[Any]:
    """``covariates=`` or ``strata=`` as a list (None: empty)."""
    if items is None:
        return []
    return [items] if isinstance(items, str) or not np.iterable(items) else list(items)


def _one_column_terms(spec: DesignSpec | None) -> Iterator[tuple[str, Any, Any]]:
    """Yield the encoded terms of ``spec`` that read exactly one data column.

    As ``(data column, term structure, model spec)``, the parts' included.
    """
    if spec is None:
        return
    for part in spec.parts:
        yield from _one_column_terms(part)
    model_spec = spec.model_spec
    if model_spec is None:
        return
    for struct in model_spec.structure:
        read = set(model_spec.term_variables[struct.term]) & set(spec.columns)
        if len(read) == 1:
            yield next(iter(read)), struct, model_spec


def source_groups(spec: DesignSpec | None) -> dict[str, tuple[str, ...]]:
    """Map each data column to the design columns of the terms that read only it.

    From formulaic's term structure (``C(er)`` reads ``er``), for the
    encoded parts of ``spec``; the fast path's columns are their own design
    columns and are left out.
    """
    groups: dict[str, tuple[str, ...]] = {}
    for column, struct, _ in _one_column_terms(spec):
        if struct.columns:
            groups[column] = (*groups.get(column, ()), *struct.columns)
    return groups


def reference_levels(spec: DesignSpec | None) -> dict[str, str]:
    """Map each categorical data column of ``spec`` to its reference level.

    The level whose rows have every treatment dummy 0 (the first one), for
    the columns :func:`source_groups` lists.
    """
    out: dict[str, str] = {}
    for column, struct, model_spec in _one_column_terms(spec):
        factors = struct.term.factors
        if len(factors) != 1:
            continue
        kind, state = model_spec.encoder_state.get(factors[0].expr, (None, {}))
        if kind is Factor.Kind.CATEGORICAL and state.get("categories"):
            out[column] = str(state["categories"][0])
    return out


class RowEncoding(NamedTuple):
    """What of an encoding depends on the rows it was learned from.

    ``learned``: a stateful transform kept a state computed from the rows
    (``center(age)``'s mean, ``scale()``, a spline's knots). ``categorical``:
    the design columns of each term with a categorical factor, and whether
    the term is that factor alone (treatment dummies of one column, whose
    rows take one value per level); a part of the rows that misses a level
    gets other columns (or another reference) from an encoding learned on
    it.
    """

    learned: bool = False
    categorical: tuple[tuple[tuple[str, ...], bool], ...] = ()


def row_dependent_encoding(spec: DesignSpec | None) -> RowEncoding:
    """Return what of ``spec``'s encoding its rows decided (:class:`RowEncoding`).

    An encoding learned on some of the rows is this one when ``learned`` is
    False and those rows hold every level of each ``categorical`` term; the
    resampling (:meth:`vcpcr._base.FitInput.encodes_alike`) asks.
    """
    if spec is None:
        return RowEncoding()
    learned = False
    categorical: list[tuple[tuple[str, ...], bool]] = []
    for part in spec.parts:
        sub = row_dependent_encoding(part)
        learned = learned or sub.learned
        categorical += sub.categorical
    model_spec = spec.model_spec
    if model_spec is not None:
        learned = learned or any(bool(s) for s in model_spec.transform_state.values())
        for struct in model_spec.structure:
            kinds = [
                model_spec.encoder_state.get(f.expr, (None, {}))[0]
                for f in struct.term.factors
            ]
            if Factor.Kind.CATEGORICAL in kinds and struct.columns:
                alone = len(kinds) == 1
                categorical.append((tuple(struct.columns), alone))
    return RowEncoding(learned, tuple(categorical))


class ColumnEncoding(NamedTuple):
    """How one design column is computed from one data column.

    ``source`` is the data column; ``levels`` None for a numeric column (the
    design column is the data column as it is), else the categories and
    ``values`` the design column's value for each (the contrast coding:
    treatment dummies are 1 for one level and 0 for the others).
    """

    source: str
    levels: tuple[Any, ...] | None = None
    values: tuple[float, ...] | None = None


def _python_value(value: Any) -> Any:
    """Return a numpy scalar as the Python scalar (JSON writes those)."""
    return value.item() if isinstance(value, np.generic) else value


def _term_encodings(spec: DesignSpec) -> Iterator[tuple[str, ColumnEncoding | str]]:
    """Yield each design column of ``spec`` with its encoding, or its term's text.

    A term is portable when it reads one data column as it is (a number),
    or as categories (``stage``, ``C(stage)``, ``C(stage, contr.sum)``);
    any other term (``np.log(age)``, ``a:b``, ``I(x**2)``) is yielded as the
    text of its term.
    """
    for part in spec.parts:
        yield from _term_encodings(part)
    model_spec = spec.model_spec
    if model_spec is None:
        if not spec.parts:  # the fast path: the data columns, as numbers
            yield from ((c, ColumnEncoding(c)) for c in spec.columns)
        return
    for struct in model_spec.structure:
        if str(struct.term) == "1":
            continue
        encodings = _struct_encodings(struct, model_spec, set(spec.columns))
        for k, column in enumerate(struct.columns):
            yield column, (str(struct.term) if encodings is None else encodings[k])


def _struct_encodings(
    struct: Any, model_spec: ModelSpec, columns: set[str]
) -> list[ColumnEncoding] | None:
    """Return the encodings of one formulaic term's columns (None: not portable)."""
    read = set(model_spec.term_variables[struct.term]) & columns
    factors = struct.term.factors
    if len(read) != 1 or len(factors) != 1:
        return None
    source, expr = next(iter(read)), factors[0].expr
    kind, state = model_spec.encoder_state.get(expr, (None, {}))
    if kind is Factor.Kind.NUMERICAL:
        return [ColumnEncoding(source)] if expr == source else None
    wrapped = re.fullmatch(r"C\(\s*`?(.*?)`?\s*(,.*)?\)", expr, re.DOTALL)
    if expr != source and (wrapped is None or wrapped.group(1) != source):
        return None
    contrasts, levels = state.get("contrasts"), state.get("categories")
    if contrasts is None or not levels:
        return None
    reduced = len(struct.columns) < len(levels)
    coding = contrasts.contrasts.get_coding_matrix(list(levels), reduced_rank=reduced)
    if coding.shape[1] != len(struct.columns):
        return None
    categories = tuple(_python_value(v) for v in levels)
    return [
        ColumnEncoding(source, categories, tuple(float(v) for v in coding.iloc[:, k]))
        for k in range(coding.shape[1])
    ]


def column_encodings(
    spec: DesignSpec | None, names: Sequence[str]
) -> dict[str, ColumnEncoding]:
    """Return how each design column of ``names`` is computed from the data.

    Without ``spec`` (numeric data, no encoding) each column is its own
    source. With one, a column that is not in ``spec``'s design (a numeric
    column beside encoded covariates) is its own source too.

    Raises
    ------
    ValueError
        If a column of ``names`` comes from a term that is not a data column
        nor the categories of one (``np.log(age)``, an interaction): the
        fix is to compute it as a data column before fitting.
    """
    out: dict[str, ColumnEncoding] = {}
    terms: dict[str, str] = {}
    for name, found in _encodings(spec, names).items():
        if isinstance(found, str):
            terms[name] = found
        else:
            out[name] = found
    if terms:
        raise ValueError(
            f"The design column(s) {_show(terms)} come from formula terms that "
            f"are neither a data column nor the categories of one, so a scoring "
            f"rule cannot state them as data: compute each as a data column "
            f"before fitting (e.g. df['log_age'] = np.log(df['age']) for "
            f"np.log(age)) and name that column in the formula."
        )
    return out


def _encodings(
    spec: DesignSpec | None, names: Sequence[str]
) -> dict[str, ColumnEncoding | str]:
    """Each design column of ``names``: its encoding, or its term's text.

    A column that is not in ``spec``'s design is its own source.
    """
    encoded = dict(_term_encodings(spec)) if spec is not None else {}
    return {name: encoded.get(name, ColumnEncoding(name)) for name in names}


def term_sources(spec: DesignSpec | None, names: Sequence[str]) -> list[str]:
    """Return what the design columns ``names`` read, once each, in order.

    The data column of a column that is a data column as it is or the
    categories of one (``er`` for ``er[T.pos]`` or ``C(er)[T.pos]``),
    otherwise the text of its term (``np.log(age)``, ``age:er``): the names
    in which a user would state the same model with ``covariates=``.

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 4.0, 3.0], "age": [50.0, 61, 70, 44],
    ...                    "er": ["neg", "pos", "pos", "neg"]})
    >>> res = parse_formula("y ~ age + C(er) + np.log(age)", df)
    >>> term_sources(res.spec, res.feature_names)
    ['age', 'er', 'np.log(age)']
    """
    found = _encodings(spec, names).values()
    return list(dict.fromkeys(f if isinstance(f, str) else f.source for f in found))


def encode_columns(
    data: pd.DataFrame, columns: Sequence[str]
) -> tuple[pd.DataFrame, DesignSpec]:
    """Replace categorical or string columns by treatment dummies, in place.

    The dummies are those of a formula naming the columns (``er`` becomes
    ``er[T.pos]``..., the first level the reference; a categorical column's
    unused categories are left out first); the other columns of ``data``
    keep their place and values. Apply the returned spec to new data with
    :func:`encode_new`.

    Raises
    ------
    ValueError
        On missing values in ``columns`` (the caller drops rows first with
        ``missing="drop"``), a name with a backquote, or a dummy's name that
        is already a column.
    """
    sub = _check_data(data[list(columns)])
    formula = " + ".join(_quote(c) for c in columns)
    _drop_missing(sub, list(columns), "raise", what=_ENCODED)
    single = {str(c): sub[c].iloc[0] for c in columns if sub[c].nunique() < 2}
    if single:
        raise ValueError(
            f"The categorical column(s) {_show(single)} of covariates= or "
            f"strata= have a single level: they adjust for nothing (one stratum "
            f"of all rows is the unstratified model). Leave them out."
        )
    matrix = _materialize(f"1 + {formula}", sub, formula)
    design = _design(matrix, formula)
    spec = DesignSpec(formula, tuple(columns), tuple(design.columns), matrix.model_spec)
    return _splice(data, spec, design), spec


def encode_new(spec: DesignSpec, data: Any) -> Any:
    """Apply :func:`encode_columns`'s spec to new data (other columns as they are)."""
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"X must be a DataFrame with the columns {list(spec.columns)}, which "
            f"the model encodes as categories; got {type(data).__name__}."
        )
    absent = [c for c in spec.columns if c not in data.columns]
    if absent:
        raise ValueError(
            f"X lacks the column(s) {absent}, categorical covariates or strata "
            f"of the fitted model; pass the columns it was fitted on."
        )
    new = _check_data(data[list(spec.columns)])
    return _splice(data, spec, _transform_checked(spec, new, what=_ENCODED))


def _splice(data: pd.DataFrame, spec: DesignSpec, design: pd.DataFrame) -> pd.DataFrame:
    """Return ``data`` with each encoded column replaced by its design columns."""
    groups = source_groups(spec)
    order = [c for col in data.columns for c in groups.get(col, (col,))]
    clash = sorted(set(design.columns) & set(data.columns))
    if clash:
        raise ValueError(
            f"The dummy columns {clash} of the categorical columns "
            f"{list(spec.columns)} are also columns of X; rename those columns."
        )
    out = pd.concat([data.drop(columns=list(spec.columns)), design], axis=1)
    return out[order]


def formula_outcome(formula: str, data: pd.DataFrame) -> pd.Series | pd.DataFrame:
    """Evaluate only the outcome (left-hand side) of ``formula`` on ``data``.

    What :func:`parse_formula` returns as ``y``, without building the design:
    a fitted model's ``score`` reads its outcome from new data at the cost of
    the outcome's columns alone.

    Parameters
    ----------
    formula : str
        The model formula (as given to :func:`parse_formula`).
    data : pandas.DataFrame
        Data holding the outcome's columns.

    Returns
    -------
    pandas.Series or pandas.DataFrame
        The outcome, as ``parse_formula(formula, data).y``.

    Raises
    ------
    ValueError
        On absent or missing outcome values (rows cannot be dropped when
        scoring).

    Examples
    --------
    >>> df = pd.DataFrame({"y": [1.0, 2.0], "g": [0.5, 0.1]})
    >>> formula_outcome("np.log(y) ~ .", df).round(3).tolist()
    [0.0, 0.693]
    """
    data = _check_data(data)
    lhs_tokens, _ = _split_tokens(formula)
    _check_known_names(formula, lhs_tokens, data)
    lhs = _token_names(lhs_tokens)
    columns = [c for c in data.columns if lhs is None or c in lhs]
    _drop_missing(data, columns, "score")
    lhs_only = _parse(formula[: lhs_tokens[-1].source_end + 1] + " ~ 1", [])
    return _outcome(_materialize(lhs_only, data[columns], formula).lhs)[0]


def outcome_columns(formula: str, data: pd.DataFrame) -> list[str]:
    """Return the columns of ``data`` that ``formula``'s outcome (left-hand side) reads.

    In ``data``'s order; what a report subtracts from a formula model's data
    frame to count its candidate features.
    """
    lhs_tokens, _ = _split_tokens(formula)
    read = _read_columns(lhs_tokens, data)
    return [c for c in data.columns if c in read]


def transform_new(spec: DesignSpec, data: pd.DataFrame) -> pd.DataFrame:
    """Build the design matrix of new data with the encoding stored in ``spec``.

    Parameters
    ----------
    spec : DesignSpec
        ``FormulaResult.spec`` from :func:`parse_formula` on the training data.
    data : pandas.DataFrame
        New data; it needs the predictor columns, not the outcome.

    Returns
    -------
    pandas.DataFrame of shape (n_samples, n_features)
        Float64 design with columns ``spec.feature_names`` and ``data``'s index.

    Raises
    ------
    TypeError
        If ``spec`` or ``data`` has the wrong type, or a column's kind
        (numeric or categorical) differs from the training data's.
    ValueError
        On absent columns, missing values in the columns formulaic encodes
        (rows cannot be dropped at predict time), or categorical levels not
        seen in training.

    See Also
    --------
    parse_formula : Build the spec from training data.

    Notes
    -----
    The numeric columns of a ``y ~ .`` design (or of the ``.`` right of a
    two-part formula's ``|``), which are copied rather than encoded, keep
    their missing values as NaN: a model needs only the features it
    selected, and checks those.

    Examples
    --------
    >>> train = pd.DataFrame({"y": [1.0, 2.0, 3.0], "g": ["a", "b", "c"]})
    >>> spec = parse_formula("y ~ g", train).spec
    >>> transform_new(spec, pd.DataFrame({"g": ["c", "a"]}))
       g[T.b]  g[T.c]
    0     0.0     1.0
    1     0.0     0.0
    """
    if not isinstance(spec, DesignSpec):
        raise TypeError(
            "The 'spec' parameter of transform_new must be the DesignSpec of "
            f"parse_formula(...).spec. Got {type(spec).__name__} instead."
        )
    data = _check_data(data)
    have = set(data.columns)
    absent = [c for c in spec.columns if c not in have]
    if absent:
        raise ValueError(
            f"data lacks {len(absent)} column(s) that the formula {spec.formula!r} "
            f"uses: {_show(absent)}."
        )
    return _transform_checked(spec, data)


def _transform_checked(
    spec: DesignSpec, data: pd.DataFrame, *, what: str = "the formula"
) -> pd.DataFrame:
    """:func:`transform_new` on checked data that holds the spec's columns.

    ``what`` names the spec's origin in an error (a user's formula, or the
    encoding of ``covariates=`` and ``strata=``).
    """
    if spec.parts:
        parts = [_transform_checked(part, data, what=what) for part in spec.parts]
        return pd.concat(parts, axis=1)
    if spec.model_spec is None:
        return _fast_design(data, list(spec.columns))  # NaN is kept (see Notes)
    data = _named_columns(spec.formula, data)
    _drop_missing(data, list(spec.columns), "predict", what=what)
    _check_column_types(spec.model_spec, data)
    _check_levels(spec.model_spec, data)
    return _design(_materialize(spec.model_spec, data, spec.formula), spec.formula)


def _check_data(data: Any) -> pd.DataFrame:
    """Require unique string column names; make ``string`` columns ``object``.

    (formulaic 1.2 takes pandas' ``string`` dtype for numbers: no encoding.)
    A categorical column's unused categories are left out (a level without
    rows would be an all-zero dummy, or a reference level without rows).
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            "The 'data' parameter must be a pandas DataFrame. Got "
            f"{type(data).__name__} instead; wrap arrays in pd.DataFrame(...)."
        )
    named = data.columns.inferred_type == "string"  # one C pass over the names
    bad = [] if named else [c for c in data.columns if not isinstance(c, str)]
    if bad:
        raise TypeError(
            f"data column names must be strings; got {_show(bad)}. Rename them, "
            "e.g. df.columns = df.columns.astype(str)."
        )
    dup = data.columns[data.columns.duplicated()].unique().tolist()
    if dup:
        raise ValueError(f"data has duplicate column names {_show(dup)}; rename them.")
    dtypes = data.dtypes
    kinds = dtypes.unique()  # a few dtypes, whatever the number of columns
    if any(isinstance(dt, pd.StringDtype) for dt in kinds):
        strings = [c for c, dt in dtypes.items() if isinstance(dt, pd.StringDtype)]
        data = data.astype(dict.fromkeys(strings, object))
        kinds = data.dtypes.unique()
    if not any(isinstance(dt, pd.CategoricalDtype) for dt in kinds):
        return data
    unused = {
        c: data[c].cat.remove_unused_categories()
        for c, dt in data.dtypes.items()
        if isinstance(dt, pd.CategoricalDtype)
        and len(dt.categories) > data[c].nunique(dropna=True)
    }
    return data.assign(**unused) if unused else data


def _check_known_names(formula: str, tokens: list[Token], data: pd.DataFrame) -> None:
    """Require every name to be a column or known (formulaic ignores ``. - typo``)."""
    known = set(_CONTEXT) | _CALLABLES
    names = {v for token in tokens for v in token.required_variables}
    unknown = sorted(v for v in names if v not in known and v not in data.columns)
    if unknown:
        raise ValueError(
            f"The formula {formula!r} uses {unknown}, which are not columns of "
            "data. Check the spelling, and put names with spaces or special "
            "characters in backquotes, e.g. `my feature`."
        )


def _check_column_types(model_spec: ModelSpec, data: pd.DataFrame) -> None:
    """Require each column read as is to keep its kind (numeric or categorical)."""
    for expr, (kind, _) in model_spec.encoder_state.items():
        if expr not in data.columns:
            continue
        dtype = data[expr].dtype
        numeric = pd.api.types.is_numeric_dtype(dtype)
        if kind is Factor.Kind.NUMERICAL and not numeric:
            raise TypeError(
                f"Column {expr!r} was numeric in fit but has dtype {dtype} in the "
                f"new data; convert it, e.g. data[{expr!r}] = "
                f"pd.to_numeric(data[{expr!r}])."
            )
        if kind is Factor.Kind.CATEGORICAL and numeric:
            raise TypeError(
                f"Column {expr!r} was categorical in fit but has dtype {dtype} in "
                f"the new data; pass it with its training type (e.g. "
                f"data[{expr!r}].astype(str) if its values are the training levels)."
            )


def _check_levels(model_spec: ModelSpec, data: pd.DataFrame) -> None:
    """Name the categorical columns of new data that have unseen levels."""
    for expr, (kind, state) in model_spec.encoder_state.items():
        if kind is not Factor.Kind.CATEGORICAL or expr not in data.columns:
            continue
        levels = state["categories"]
        unseen = sorted(map(str, set(data[expr].unique()) - set(levels)))
        if unseen:
            raise ValueError(
                f"Column {expr!r} has level(s) {unseen} that were not in the "
                f"training data (levels: {levels}); recode or drop those rows."
            )


def _show(items: list[Any] | dict[str, Any]) -> str:
    """Abbreviate a long list or dict for an error message."""
    if len(items) <= _SHOW:
        return repr(items)
    if isinstance(items, dict):
        return f"{dict(list(items.items())[:_SHOW])!r} and {len(items) - _SHOW} more"
    return f"{items[:_SHOW]!r} and {len(items) - _SHOW} more"


# What a formula's Python code may call: formulaic's transforms, Surv and
# strata, harmless builtins; numpy only through ``np.<public name>``.
_CALLABLES = frozenset(TRANSFORMS) | {"Surv", "strata", "abs", "round", "min", "max"}
_NODES = (
    ast.Expression,
    ast.Call,
    ast.Name,
    ast.Attribute,
    ast.Constant,
    ast.Load,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
    ast.keyword,
    ast.Tuple,
    ast.List,
    ast.IfExp,
)
_NUMPY_IO = {"save", "savez", "savez_compressed", "savetxt", "load", "loadtxt"}
_NUMPY_IO |= {"genfromtxt", "fromfile", "memmap", "fromregex", "lib", "ctypeslib"}
_QUOTED = re.compile(r"`[^`]*`")


def _check_code(formula: str, code: str) -> None:
    """Refuse Python code in a formula that is not on the allow-list.

    Parsed with :mod:`ast`, never run: names, calls of :data:`_CALLABLES`,
    ``np.<name>``, constants and operators. Dunder names, attribute access
    on anything but ``np`` (or formulaic's ``contr``), other callables
    (``open``, ``exec``, ``__import__``, ``getattr``...) are refused.
    """
    hint = (
        "A formula may use columns, arithmetic, np.<function>, Surv, strata, C, "
        "I and formulaic's transforms (center, scale, bs...); compute other "
        "columns in pandas first, e.g. df['z'] = ..., then write 'y ~ z'."
    )
    try:
        tree = ast.parse(_QUOTED.sub("vcpcr_quoted", code), mode="eval")
    except SyntaxError:
        msg = f"Invalid formula {formula!r}: cannot parse {code!r}."
        raise ValueError(msg) from None
    for node in ast.walk(tree):
        bad = _refused(node)
        if bad is not None:
            raise ValueError(
                f"The formula {formula!r} uses {bad!r}, which a formula may not "
                f"use (a formula is Python code; it is checked, never run, "
                f"before evaluation). {hint}"
            )


def _refused(node: ast.AST) -> str | None:
    """Return what of an ``ast`` node a formula may not use (None: allowed)."""
    if not isinstance(node, _NODES):
        return type(node).__name__
    if isinstance(node, ast.Name) and node.id.startswith("_"):
        return node.id
    if isinstance(node, ast.Attribute):
        root = node.value
        ok = isinstance(root, ast.Name) and root.id in ("np", "contr")
        if not ok or node.attr.startswith("_") or node.attr in _NUMPY_IO:
            return ast.unparse(node)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id not in _CALLABLES:
            return f"{func.id}(...)"
        if not isinstance(func, ast.Name | ast.Attribute):
            return ast.unparse(func)
    return None


def _split_tokens(formula: str) -> tuple[list[Token], list[Token]]:
    """Tokenize as formulaic does; split at the top-level ``~`` (or ``~-``...).

    Every Python token passes :func:`_check_code` first: no formula reaches
    formulaic's evaluation unchecked.
    """
    if not isinstance(formula, str):
        raise TypeError(
            "The 'formula' parameter must be a str such as 'y ~ .'. Got "
            f"{formula!r} of type {type(formula).__name__} instead."
        )
    try:
        tokens = list(_TOKENIZER.get_tokens(formula))
    except (FormulaicError, SyntaxError) as e:
        raise ValueError(f"Invalid formula {formula!r}: {_ANSI.sub('', str(e))}") from e
    for token in tokens:
        if token.kind is Token.Kind.PYTHON:
            _check_code(formula, token.token)
        elif token.kind is _NAME and not token.token.strip():
            raise ValueError(f"The formula {formula!r} has an empty name (``).")
    depth = 0
    for i, token in enumerate(tokens):
        if token.kind is Token.Kind.CONTEXT:
            depth += 1 if token.token in "([" else -1
        elif depth == 0 and token.kind is Token.Kind.OPERATOR and "~" in token.token:
            if i == 0:
                break
            rest = token.token.partition("~")[2]
            head = [token.copy_with_attrs(token=rest)] if rest else []
            return tokens[:i], head + tokens[i + 1 :]
    raise ValueError(
        f"The formula {formula!r} has no left-hand side (outcome). Write it as "
        "'y ~ x1 + x2', 'y ~ .' or 'Surv(time, event) ~ .'."
    )


def _top_level_bar(rhs_tokens: list[Token]) -> Token | None:
    """Return the ``|`` separating covariates from clustered features, if any."""
    depth = 0
    for token in rhs_tokens:
        if token.kind is Token.Kind.CONTEXT:
            depth += 1 if token.token in "([" else -1
        elif depth == 0 and token.kind is Token.Kind.OPERATOR and token.token == "|":
            return token
    return None


def _parse_two_part(
    formula: str,
    data: pd.DataFrame,
    lhs_tokens: list[Token],
    rhs_tokens: list[Token],
    bar: Token,
    missing: str,
) -> FormulaResult:
    """``y ~ covariates | clustered``: two designs side by side.

    The clustered part sees the data without the covariates' columns (so its
    ``.`` leaves them out); rows missing in either part are handled once, for
    both.
    """
    i = rhs_tokens.index(bar)
    cov_tokens, clustered_tokens = rhs_tokens[:i], rhs_tokens[i + 1 :]
    if not cov_tokens or not clustered_tokens:
        raise ValueError(
            f"The formula {formula!r} needs terms on both sides of '|': "
            "'y ~ covariates | clustered features', e.g. 'y ~ age + C(stage) | .'."
        )
    if _top_level_bar(clustered_tokens) is not None:
        raise ValueError(
            f"The formula {formula!r} has more than one '|'; write "
            "'y ~ covariates | clustered features'."
        )

    def columns(tokens: list[Token]) -> set[str]:
        return _read_columns(tokens, data) - _removed_names(tokens)

    lhs_vars, cov_vars = columns(lhs_tokens), columns(cov_tokens)
    both = sorted(cov_vars & columns(clustered_tokens))
    if both:
        raise ValueError(
            f"The formula {formula!r} uses {both} both as covariates (left of '|') "
            "and as clustered features (right of it). A covariate is adjusted "
            "for and never clustered: remove it from the right of '|'."
        )
    clustered_vars = columns(clustered_tokens)
    if _has_dot(clustered_tokens):
        removed = _removed_names(clustered_tokens)
        clustered_vars |= set(data.columns) - lhs_vars - cov_vars - removed
    used_vars = lhs_vars | cov_vars | clustered_vars  # once, not per column
    used = [c for c in data.columns if c in used_vars]
    data, n_dropped = _drop_missing(data, used, missing)
    lhs_text = formula[: rhs_tokens[0].source_start]
    cov_formula = formula[: bar.source_start]
    cov = _parse_checked(cov_formula, _named_columns(cov_formula, data), "raise")
    clustered = _parse_checked(
        lhs_text + _without_removals(formula, clustered_tokens, cov_vars),
        data.drop(columns=sorted(cov_vars)),
        "raise",
    )
    X = pd.concat([cov.X, clustered.X], axis=1)
    names = list(X.columns)
    spec = DesignSpec(
        formula,
        cov.spec.columns + clustered.spec.columns,
        tuple(names),
        None,
        (cov.spec, clustered.spec),
    )
    covariates = tuple(cov.feature_names)
    return FormulaResult(cov.y, X, names, spec, cov.yname, n_dropped, covariates)


def _named_columns(formula: str, data: pd.DataFrame) -> pd.DataFrame:
    """Return ``data`` with only the columns ``formula`` names (all, with ``.``).

    formulaic walks every column of the data it evaluates a formula on, at a
    cost growing with them: a two-part formula's covariates, encoded by
    formulaic, are evaluated on their own columns, not beside 15,000 features.
    """
    if "~" not in formula:  # encode_columns' terms: its own columns already
        return data
    lhs_tokens, rhs_tokens = _split_tokens(formula)
    names = _token_names(lhs_tokens + rhs_tokens)
    if names is None or _has_dot(rhs_tokens):
        return data
    return data[[c for c in data.columns if c in names]]


def _read_columns(terms: Sequence[Token | Factor], data: pd.DataFrame) -> set[str]:
    """Return the columns of ``data`` that formula tokens or factors read.

    Every name they use that is a column: formulaic looks names up in the
    data first, so a column named like one of its transforms (``center``,
    ``scale``, ``log``, ``C``...) is read, although formulaic's
    ``required_variables`` leaves such a name out. The parsers, the
    two-part split and ``strata=`` ask here which columns a part reads.
    """
    names = _token_names(terms)
    if names is None:  # code Python cannot parse: formulaic's names
        names = {str(v) for term in terms for v in term.required_variables}
    return {name for name in names if name in data.columns}


def _token_names(tokens: Sequence[Token | Factor]) -> set[str] | None:
    """Return every name the tokens (or factors) use, or None if one cannot be parsed.

    formulaic leaves a stateful transform's argument out of
    ``required_variables`` (``center(age)``: none), and the names of its
    transforms (``C``, ``center``); Python's parser finds them.
    """
    names: set[str] = set()
    for token in tokens:
        names |= {str(v) for v in token.required_variables}
        code = _python_code(token)
        if code is not None:
            try:
                tree = ast.parse(code, mode="eval")
            except SyntaxError:  # e.g. a backquoted name inside a call
                return None
            names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return names


def _python_code(token: Token | Factor) -> str | None:
    """Return the Python code of a token or factor (None for a plain name)."""
    if isinstance(token, Token):
        return token.token if token.kind is Token.Kind.PYTHON else None
    return token.expr if token.eval_method is Factor.EvalMethod.PYTHON else None


def _has_dot(tokens: list[Token]) -> bool:
    """Return True if the terms hold formulaic's ``.`` (every other column)."""
    return any(t.kind is Token.Kind.OPERATOR and t.token == "." for t in tokens)


def _without_removals(formula: str, tokens: list[Token], names: set[str]) -> str:
    """Return the text of the formula part ``tokens`` without ``- name`` for names.

    The clustered part of ``y ~ age | . - age`` is evaluated on the data
    without the covariates' columns, where ``- age`` names no column.
    """
    text, start = "", tokens[0].source_start
    for prev, token in itertools.pairwise(tokens):
        if (
            token.kind is _NAME
            and token.token in names
            and (prev.kind, prev.token) == _SIGNS[1]
        ):
            text += formula[start : prev.source_start]
            start = token.source_end + 1
    return text + formula[start : tokens[-1].source_end + 1]


def _removed_names(tokens: list[Token]) -> set[str]:
    """Names a formula part removes at its top level (``. - grade``).

    Their columns are not read (formulaic drops the term), so they are not
    checked for missing values.
    """
    depth, removed = 0, set()
    for prev, token in zip([None, *tokens], tokens, strict=False):
        if token.kind is Token.Kind.CONTEXT:
            depth += 1 if token.token in "([" else -1
        elif depth == 0 and token.kind is _NAME and prev is not None:
            if (prev.kind, prev.token) == _SIGNS[1]:
                removed.add(token.token)
    return removed


def _fast_path_columns(
    rhs_tokens: list[Token], lhs_vars: set[str], data: pd.DataFrame
) -> list[str] | None:
    """Return the predictors if the right-hand side is ``.`` minus plain names.

    Matches ``+ .`` once plus ``- name``, ``+ 0``, ``- 1`` or ``+ 1`` in any order,
    when every remaining column is numeric or boolean; ``None`` leaves the
    formula to formulaic. The columns are those formulaic's ``.`` keeps: data
    order, without the left-hand side's features and the removed names.
    """
    toks = [(t.kind, t.token) for t in rhs_tokens]
    if not toks or toks[0] not in _SIGNS:
        toks.insert(0, _SIGNS[0])
    if len(toks) % 2 or not set(toks[0::2]) <= set(_SIGNS):
        return None
    pairs = [(s[1], *op) for s, op in zip(toks[0::2], toks[1::2], strict=True)]
    removed = {tok for sign, kind, tok in pairs if sign == "-" and kind is _NAME}
    rest = [(sign, tok) for sign, kind, tok in pairs if kind is not _NAME]
    if len(rest) + len(removed) != len(pairs) or rest.count(("+", ".")) != 1:
        return None
    if not all(tok in ("0", "1", ".") for _, tok in rest):
        return None
    columns = [c for c in data.columns if c not in removed | lhs_vars]
    kinds = {dt.kind for dt in data.dtypes[columns].unique()}
    # A column named 'Intercept' clashes in formulaic; its path raises the error.
    ok = columns and kinds <= _NUMERIC and "Intercept" not in columns
    return columns if ok else None


def _parse(formula: str, available: list[str]) -> Formula:
    """Parse with formulaic, ``.`` standing for ``available``; keep the intercept."""
    ctx = {"__formulaic_variables_available__": available}
    try:
        parsed = Formula(formula, _context=ctx)
        if isinstance(parsed.rhs, SimpleFormula) and "1" not in map(str, parsed.rhs):
            # The design drops the intercept anyway; keeping the term makes
            # formulaic code categoricals with reduced rank, as for 'y ~ .'.
            parsed = Formula(f"{formula} + 1", _context=ctx)
    except FormulaicError as e:
        raise ValueError(f"Invalid formula {formula!r}: {_ANSI.sub('', str(e))}") from e
    if not isinstance(parsed.rhs, SimpleFormula):
        raise ValueError(
            f"The formula {formula!r} has several right-hand parts ('|'); "
            "VC-PCR takes a single right-hand side."
        )
    return parsed


def _parse_fast(
    formula: str, data: pd.DataFrame, columns: list[str], lhs: set[str], missing: str
) -> FormulaResult:
    """Build X as ``data[columns]``; formulaic evaluates only the outcome."""
    # With no features available '.' expands to nothing, so formulaic parses
    # and evaluates just the left-hand side (and an intercept).
    lhs_only = _parse(formula, [])
    lhs_columns = [c for c in data.columns if c in lhs]
    data, n_dropped = _drop_missing(data, lhs_columns + columns, missing)
    y, yname = _outcome(_materialize(lhs_only, data[lhs_columns], formula).lhs)
    spec = DesignSpec(formula, tuple(columns), tuple(columns), None)
    X = _fast_design(data, columns)
    return FormulaResult(y, X, list(columns), spec, yname, n_dropped)


def _parse_slow(
    formula: str, data: pd.DataFrame, lhs_vars: set[str], missing: str
) -> FormulaResult:
    """Build y and X with formulaic; ``.`` leaves out ``lhs_vars`` (the outcome's)."""
    parsed = _parse(formula, [c for c in data.columns if c not in lhs_vars])
    rhs_vars = _read_columns([f for term in parsed.rhs for f in term.factors], data)
    if both := sorted(rhs_vars & lhs_vars):
        raise ValueError(
            f"The formula {formula!r} uses the outcome's column(s) {both} on its "
            f"right-hand side: a predictor made of the outcome predicts it "
            f"perfectly. Remove them from the right-hand side ('.' leaves them "
            f"out)."
        )
    used = rhs_vars | lhs_vars
    rhs_columns = [c for c in data.columns if c in rhs_vars]
    dtypes = data.dtypes[rhs_columns]
    bad = {c: str(t) for c, t in dtypes.items() if t.kind not in "biufO"}
    if bad:
        raise TypeError(
            f"Columns {_show(bad)} cannot be used as predictors; convert them to "
            "numbers or categories, or leave them out (e.g. 'y ~ . - date')."
        )
    data, n_dropped = _drop_missing(data, [c for c in data if c in used], missing)
    matrices = _materialize(parsed, data, formula)
    y, yname = _outcome(matrices.lhs)
    X = _design(matrices.rhs, formula)
    names, model_spec = list(X.columns), matrices.rhs.model_spec
    spec = DesignSpec(formula, tuple(rhs_columns), tuple(names), model_spec)
    return FormulaResult(y, X, names, spec, yname, n_dropped)


def _drop_missing(
    data: pd.DataFrame, columns: list[str], missing: str, *, what: str = "the formula"
) -> tuple[pd.DataFrame, int]:
    """Raise on, or drop with a warning, rows with missing values in columns.

    ``missing`` is "raise" or "drop" (fit), or "predict" or "score" (always
    raise); ``what`` says what uses the columns, in the error.
    """
    isna = data[columns].isna().sum()
    counts = {str(c): int(n) for c, n in isna[isna > 0].items()}
    if not counts:
        return data, 0
    if missing != "drop":
        msg = f"Columns used by {what} contain missing values: {_show(counts)}"
        raise ValueError(f"{msg}; {_FIX[missing]}")
    rows = data[list(counts)].isna().any(axis=1).to_numpy()
    warn_dropped(int(rows.sum()), len(data), counts)
    return data.loc[~rows], int(rows.sum())


def warn_dropped(n_dropped: int, n_rows: int, counts: dict[str, int]) -> None:
    """Warn that rows with missing values were dropped; raise if all of them.

    The one message of ``missing="drop"``, with or without a formula;
    ``counts`` holds the missing values per column.
    """
    if n_dropped == n_rows:
        raise ValueError(
            f"Every one of the {n_dropped} rows has a missing value in "
            f"{_show(counts)}; impute them or leave those columns out."
        )
    msg = f"Dropped {n_dropped} of {n_rows} rows with missing values in "
    warnings.warn(msg + f"{_show(counts)}.", VCPCRWarning, stacklevel=user_stacklevel())


def _materialize(spec: Any, data: pd.DataFrame, formula: str) -> Any:
    """Run formulaic; NaN after evaluation and unseen levels are errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataMismatchWarning)
        try:
            return model_matrix(spec, data, context=dict(_CONTEXT), na_action="raise")
        except DataMismatchWarning as e:
            raise ValueError(
                "data has categorical levels not seen in the training data: "
                f"{_ANSI.sub('', str(e))}"
            ) from e
        except (FormulaicError, ValueError) as e:
            msg = _ANSI.sub("", str(e))
            raise ValueError(
                f"The formula {formula!r} could not be evaluated on data: {msg}"
            ) from e


def _outcome(lhs: Any) -> tuple[pd.Series | pd.DataFrame, str]:
    """Return the outcome of formulaic's left-hand-side matrix, and its name."""
    spec = lhs.model_spec
    terms = [str(s.term) for s in spec.structure]
    if len(terms) != 1 or len(spec.structure[0].term.factors) != 1:
        raise ValueError(
            "The left-hand side must be a single outcome or Surv(time, event); "
            f"got the terms {terms}."
        )
    yname, factor = terms[0], spec.structure[0].term.factors[0]
    kind, state = spec.encoder_state.get(factor.expr, (None, {}))
    values, n_columns = np.asarray(lhs), len(spec.structure[0].columns)
    if kind is Factor.Kind.CATEGORICAL and n_columns == len(state["categories"]):
        # formulaic one-hot encodes a categorical outcome; decode the labels.
        codes = values.argmax(axis=1)
        labels = pd.Categorical.from_codes(codes, pd.Index(state["categories"]))
        return pd.Series(labels, index=lhs.index, name=yname), yname
    if n_columns == 1:
        return pd.Series(values[:, 0], index=lhs.index, name=yname), yname
    if factor.expr.startswith("Surv(") and n_columns == 2:
        frame = pd.DataFrame(values, index=lhs.index, columns=["time", "event"])
        return frame.astype(np.float64), yname
    raise ValueError(
        f"The left-hand side {yname!r} gives {n_columns} columns; it must be one "
        "outcome (a column, a transform of one, C(label)) or Surv(time, event)."
    )


def _design(rhs: Any, formula: str) -> pd.DataFrame:
    """Return formulaic's right-hand-side matrix as float64 without intercept."""
    names = pd.Index(rhs.model_spec.column_names)
    if names.has_duplicates:  # formulaic silently keeps one of the columns
        raise ValueError(
            f"The formula {formula!r} gives several columns named "
            f"{sorted(set(names[names.duplicated()]))}: a data column has the name "
            "of the intercept or of a dummy column. Rename that data column."
        )
    keep: list[int] = []
    start = 0
    for struct in rhs.model_spec.structure:
        if str(struct.term) != "1":
            keep.extend(range(start, start + len(struct.columns)))
        start += len(struct.columns)
    X = rhs.iloc[:, keep]
    if X.shape[1] == 0:
        raise ValueError(
            f"The formula {formula!r} has no predictors; add some, e.g. 'y ~ .'."
        )
    columns = [str(c) for c in X.columns]
    return pd.DataFrame(X.to_numpy(np.float64), index=rhs.index, columns=columns)


def _fast_design(data: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Return ``data[columns]`` as float64: the design of ``y ~ .``."""
    sub = data[columns]
    dtypes = sub.dtypes  # a wide frame has few distinct dtypes: test those first
    numeric = all(dt.kind in _NUMERIC for dt in dtypes.unique())
    bad = (
        {}
        if numeric
        else {c: str(t) for c, t in dtypes.items() if t.kind not in _NUMERIC}
    )
    if bad:
        raise TypeError(
            f"Columns {_show(bad)} were numeric in the training data but are "
            "not in the new data; convert them to numbers."
        )
    values = sub.to_numpy(np.float64, na_value=np.nan)  # nullable dtypes' NA
    return pd.DataFrame(values, index=data.index, columns=pd.Index(columns))
