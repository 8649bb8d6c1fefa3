"""Resampling the rows for inference: the template, the rows, the draws.

Multi-split p-values and stability selection both refit a template estimator
on random parts of the rows. This module holds what they share:

- :func:`check_template`: the unfitted ``VCPCR`` or ``VCPCRCV`` template
  each resample clones (from a fitted ``VCPCRCV``, the model it chose);
- :func:`resampling_rows`: validates ``X`` / ``y`` once, through the
  estimators' own input route (formula included), and returns a
  :class:`Rows`: the rows to resample, the validated response, the
  stratification labels and the :class:`Fingerprint` of (template
  parameters, data);
- :func:`check_resampling` and :func:`draw_splits`: seeded (stratified)
  random halves, drawn up front so that results do not depend on ``n_jobs``;
- :func:`clone_for_split`: one clone of the template per resample, seeded
  by :func:`vcpcr._parallel.task_seeds` (the callers run them through
  :func:`vcpcr._parallel.run_parallel`), and :func:`fit_part`, which fits
  it on a part of the checked data (:meth:`vcpcr._base.FitInput.take`, no
  second validation) for the clusters it selects; :func:`fit_for_selection`
  fits it through ``fit`` on a part's rows, for a part that a fit on it
  alone would encode otherwise.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit
from sklearn.utils.validation import check_is_fitted

from vcpcr._base import FitInput, same_value
from vcpcr._checks import (
    check_fraction,
    check_random_state,
    check_scalar,
)
from vcpcr._cv import VCPCRCV
from vcpcr._families import Family
from vcpcr._input import take
from vcpcr._model import VCPCR
from vcpcr._scaling import standardize
from vcpcr.exceptions import VCPCRWarning

__all__ = [
    "IGNORED_PARAMS",
    "Fingerprint",
    "Rows",
    "check_resampling",
    "check_template",
    "clone_for_split",
    "draw_splits",
    "fit_for_selection",
    "fit_part",
    "input_apart",
    "input_joined",
    "resampling_rows",
    "stratified_labels",
]

#: Parameters that do not change what a resampled fit estimates: how it runs
#: (``n_jobs``, ``verbose``) and ``random_state``, which every resample
#: replaces by its own seed (:func:`clone_for_split`).
IGNORED_PARAMS = ("n_jobs", "verbose", "random_state")

_TEMPLATES = (VCPCR, VCPCRCV)

#: The starts of the step-2 fit's warnings: Cox (lifelines' fit, in
#: ``vcpcr._outcome``'s words, and a monotone partial likelihood, see
#: ``vcpcr._families.Cox.fitted_attributes``) and logistic (Firth's
#: fallback, ``vcpcr._outcome._fit_logit``).
_STEP2_WARNINGS = r"The Cox outcome model \(step 2|Logistic regression: "


def check_template(
    estimator: Any, owner: str, retune: bool | None = None
) -> VCPCR | VCPCRCV:
    """Return the unfitted template that every resample clones.

    Parameters
    ----------
    estimator : VCPCR or VCPCRCV
        What the caller was given: an unfitted template, a fitted ``VCPCR``
        (its parameters), or a fitted ``VCPCRCV`` (the model it chose).
    owner : str
        The calling function, for the message.
    retune : bool or None, default=None
        ``VCPCRCV`` only. None: a fitted ``VCPCRCV`` resamples the model it
        chose (``sklearn.base.clone(estimator.best_estimator_)``: its
        hyperparameters fixed), an unfitted one is tuned inside every
        resample. True: the ``VCPCRCV`` (fitted or not) is cloned and tuned
        inside every resample. False: the chosen model of a fitted
        ``VCPCRCV``.

    Returns
    -------
    VCPCR or VCPCRCV
        The unfitted template: ``clone(estimator)``, or
        ``clone(estimator.best_estimator_)`` for a fitted ``VCPCRCV``
        without ``retune=True``.

    Raises
    ------
    TypeError
        If ``estimator`` is not a ``VCPCR`` or ``VCPCRCV``, or ``retune`` is
        not a bool or None.
    ValueError
        If ``retune`` is True for a ``VCPCR`` (it has no grid to tune),
        False for an unfitted ``VCPCRCV`` (it has chosen nothing yet), or
        the ``VCPCRCV`` to tune has ``refit=False`` (each resample needs
        the tuned model's clusters).
    """
    if not isinstance(estimator, _TEMPLATES):
        raise TypeError(
            f"The 'estimator' parameter of {owner} must be a vcpcr.VCPCR or "
            f"vcpcr.VCPCRCV (fitted or not: it is cloned for every resample). "
            f"Got {estimator!r} of type {type(estimator).__name__} instead."
        )
    if retune is not None and not isinstance(retune, bool | np.bool_):
        raise TypeError(
            f"The 'retune' parameter of {owner} must be True, False or None; "
            f"got {retune!r} of type {type(retune).__name__}."
        )
    if isinstance(estimator, VCPCR):
        if retune:
            raise ValueError(
                f"The 'retune' parameter of {owner} is True, but the estimator "
                f"is a VCPCR: it has no grid to tune. Pass the VCPCRCV to tune "
                f"in every resample, or leave retune=None."
            )
        return clone(estimator)
    fitted = _is_fitted(estimator)
    if retune is False and not fitted:
        raise ValueError(
            f"The 'retune' parameter of {owner} is False, but the VCPCRCV is "
            f"not fitted: it has chosen no model to resample. Fit it first "
            f"(cv.fit(X, y)), or pass retune=True (or None) to tune in every "
            f"resample."
        )
    if fitted and not retune:
        if not estimator.refit:
            raise ValueError(
                f"The 'estimator' parameter of {owner} is a VCPCRCV fitted with "
                f"refit=False: it has no best_estimator_ to resample. Refit it "
                f"with refit=True, or pass VCPCR(**cv.best_params_)."
            )
        return clone(estimator.best_estimator_)
    if not estimator.refit:
        raise ValueError(
            f"The 'estimator' parameter of {owner} is a VCPCRCV with "
            f"refit=False; each resample needs the tuned model's clusters. Use "
            f"refit=True."
        )
    return clone(estimator)


def _is_fitted(estimator: BaseEstimator) -> bool:
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True


def _params(estimator: BaseEstimator) -> dict[str, Any]:
    """Return the template's parameters that define what a resample estimates."""
    return {
        k: v
        for k, v in estimator.get_params(deep=False).items()
        if k not in IGNORED_PARAMS
    }


@dataclass(frozen=True)
class Fingerprint:
    """What a resampling result was computed from: template parameters and data.

    A result is about one estimator specification on one data set. To check
    that a fitted model is that specification on that data (before showing
    the result beside the model's summary), compare:

    - ``estimator``: the class name (``"VCPCR"`` or ``"VCPCRCV"``);
    - ``params``: the template's ``get_params(deep=False)`` without
      :data:`IGNORED_PARAMS` (arrays compared by value, other objects such as
      a CV splitter by ``repr``);
    - ``n_samples``, ``feature_names`` and ``yname``: the rows, the design's
      columns (``membership_.index``) and the response's name of the full
      data as the estimators' ``fit`` sees them (after a formula and its
      ``missing="drop"``);
    - ``mean`` and ``scale``: the full data's standardization,
      :func:`vcpcr._scaling.standardize` of the validated design, bit-identical
      to the ``mean_`` / ``scale_`` that ``fit`` stores on the same data.

    The response itself is not compared beyond its name (a fitted model does
    not keep it). :meth:`check` compares with a fitted ``VCPCR`` or
    ``VCPCRCV`` (whose fitted attributes are its ``best_estimator_``'s); a
    result of a ``VCPCR`` template compared with a fitted ``VCPCRCV`` is
    compared with the model it chose, its ``best_estimator_`` (the template
    that :func:`check_template` takes from a fitted ``VCPCRCV``).
    """

    estimator: str
    params: dict[str, Any]
    n_samples: int
    feature_names: tuple[str, ...]
    yname: str
    mean: NDArray[np.float64] = field(repr=False)
    scale: NDArray[np.float64] = field(repr=False)

    def check(self, model: Any, what: str) -> None:
        """Raise a ValueError unless ``model`` was fitted as this fingerprint says.

        Parameters
        ----------
        model : VCPCR or VCPCRCV
            A fitted estimator.
        what : str
            The result being checked, for the message (e.g. ``"This
            MultiSplitResult"``).

        Raises
        ------
        TypeError
            If ``model`` is not a ``VCPCR`` or ``VCPCRCV``.
        ValueError
            If it is unfitted, or differs in class, parameters or data.
        """
        if not isinstance(model, _TEMPLATES):
            raise TypeError(
                f"{what} describes a {self.estimator}; got a "
                f"{type(model).__name__} to compare with."
            )
        check_is_fitted(model)
        fix = (
            "Compute the result from the same estimator parameters and data "
            "as the model (e.g. multi_split(model, X, y): a fitted VCPCRCV "
            "resamples the model it chose)."
        )
        if (
            isinstance(model, VCPCRCV)
            and self.estimator == VCPCR.__name__
            and getattr(model, "best_estimator_", None) is not None
        ):
            model = model.best_estimator_  # a result of the model it chose
        if type(model).__name__ != self.estimator:
            raise ValueError(
                f"{what} was computed with a {self.estimator} template, not a "
                f"{type(model).__name__}. {fix}"
            )
        params = _params(model)
        differ = sorted(
            k
            for k in set(params) | set(self.params)
            if not same_value(params.get(k), self.params.get(k))
        )
        if differ:
            shown = ", ".join(
                f"{k}={self.params.get(k)!r} vs {params.get(k)!r}" for k in differ
            )
            raise ValueError(
                f"{what} was computed with other estimator parameters than the "
                f"model's (result vs model: {shown}). {fix}"
            )
        self._check_data(model, what, fix)

    def _check_data(self, fitted: Any, what: str, fix: str) -> None:
        names = tuple(str(c) for c in fitted.membership_.index)
        checks = [
            ("number of samples", self.n_samples, int(fitted.n_samples_fit_)),
            ("features", self.feature_names, names),
            ("response", self.yname, str(fitted.yname_)),
        ]
        for label, ours, theirs in checks:
            if ours != theirs:
                raise ValueError(
                    f"{what} was computed on other data than the model's: "
                    f"{label} differ ({_short(ours)} vs {_short(theirs)}). {fix}"
                )
        # to rounding: the same rows in another order sum in another order
        scale = np.asarray(fitted.scale_)
        same_x = np.all(np.abs(self.mean - fitted.mean_) <= 1e-12 * scale) and (
            np.allclose(self.scale, scale, rtol=1e-12, atol=0)
        )
        if not same_x:
            raise ValueError(
                f"{what} was computed on other data than the model's: the "
                f"column means or standard deviations of X differ. {fix}"
            )


def _short(value: Any) -> str:
    if isinstance(value, tuple) and len(value) > 6:
        return f"{len(value)} names starting {list(value[:3])!r}"
    return repr(value)


@dataclass(frozen=True)
class Rows:
    """Validated data to resample.

    Attributes
    ----------
    X : array-like or DataFrame
        The rows to take parts of, as the template's ``fit`` takes them
        (with a formula: the DataFrame, without the rows that
        ``missing="drop"`` drops).
    y : array-like or None
        The response to take parts of (None with a formula).
    data : FitInput
        The checked data of every row (the template's input route ran once,
        on a clone): a resample's part is ``data.take(rows)``
        (:func:`fit_part`), its response ``data.design.prepared``'s rows.
    strata : ndarray of shape (n_samples,) or None
        Stratification labels (:meth:`vcpcr._families.Family.strata`).
    family : Family
        The template's outcome family.
    yname : str
        Name of the response.
    fingerprint : Fingerprint
        Template parameters and data (see :class:`Fingerprint`).
    clustered : ndarray of shape (n_samples, n_clustered) or None
        The validated design's clustered columns (``fingerprint.feature_names``,
        covariates left out) on every row, unstandardized: what a tree built
        from ``X`` alone reads (:func:`vcpcr.inference._common_tree.common_tree`).
    """

    X: Any
    y: Any
    data: FitInput
    strata: NDArray[Any] | None
    family: Family
    yname: str
    fingerprint: Fingerprint
    clustered: NDArray[np.float64] | None = field(default=None, repr=False)

    @property
    def n_samples(self) -> int:
        """Number of rows."""
        return self.fingerprint.n_samples

    @property
    def response(self) -> Any:
        """The validated response of every row (with a formula: its outcome)."""
        return self.data.design.y


def resampling_rows(estimator: VCPCR | VCPCRCV, X: Any, y: Any, owner: str) -> Rows:
    """Validate ``X`` and ``y`` as the template's ``fit`` does; return the rows.

    The data go through the template's own input route
    (:meth:`vcpcr._base.VCPCRBase._fit_input`, on a clone): the formula,
    ``missing``, the covariates, the validation and the template's
    parameters are checked there, once, before any resample. With a formula
    template ``y`` must be None (the outcome comes from the formula), and
    rows that ``missing="drop"`` drops are dropped here, once (with its
    warning), so that every resample sees complete rows.

    Parameters
    ----------
    estimator : VCPCR or VCPCRCV
        The (checked) template.
    X : array-like of shape (n_samples, n_features) or DataFrame
        Predictors, or with a formula the DataFrame.
    y : array-like of shape (n_samples,) or None
        Response; None with a formula.
    owner : str
        The calling function, for messages.

    Returns
    -------
    Rows
        The rows to resample, their response, strata and fingerprint.

    Raises
    ------
    ValueError
        If ``X`` and ``y`` have different numbers of rows, for any data
        problem that ``fit`` would report, or for a template parameter out of
        range.

    Notes
    -----
    With a stratified Cox template (``strata=``, or ``strata(...)`` in its
    formula) the draws are stratified by stratum and event indicator
    (:func:`stratified_labels`), and every resample's fit, and multi-split's
    tests on the other part, are stratified as the template's are.
    """
    data = clone(estimator)._fit_input(X, y, owner=owner)
    d, family = data.design, data.family
    labels = family.strata(d.prepared.outcome)
    if d.strata.size:  # a stratified Cox model: the draws keep each stratum's share
        labels = stratified_labels(d.X[:, d.strata], labels)
    if data.rows is not None:  # missing="drop" dropped rows
        X, y = take(X, data.rows), take(y, data.rows)
    clustered = d.clustered
    _, mean, scale = standardize(d.X[:, clustered])
    fingerprint = Fingerprint(
        type(estimator).__name__,
        _params(estimator),
        int(d.X.shape[0]),
        tuple(d.names[j] for j in clustered),
        data.yname,
        mean,
        scale,
    )
    return Rows(
        X,
        y,
        data,
        labels,
        family,
        data.yname,
        fingerprint,
        np.asarray(d.X[:, clustered], dtype=np.float64),
    )


def stratified_labels(
    strata: NDArray[Any], labels: NDArray[Any] | None
) -> NDArray[np.intp]:
    """Labels for draws that keep the share of each stratum (and event status).

    Parameters
    ----------
    strata : ndarray of shape (n_samples, n_columns)
        The strata columns of the design (one stratum per distinct row).
    labels : ndarray of shape (n_samples,) or None
        The family's own labels (the event indicator).

    Returns
    -------
    ndarray of shape (n_samples,)
        One code per (stratum, label) cell when every cell has at least 2
        rows (each part of a split then gets some of each); otherwise one
        code per stratum when each has 2 rows, otherwise ``labels`` (coded).
    """
    stratum = _codes(strata)
    candidates = (
        [stratum]
        if labels is None
        else [
            _codes(np.column_stack([stratum, _codes(labels)])),
            stratum,
            _codes(labels),
        ]
    )
    for codes in candidates:
        if np.bincount(codes).min() >= 2:
            return codes
    return candidates[-1]


def _codes(values: NDArray[Any]) -> NDArray[np.intp]:
    """One integer per distinct value (row, for a 2-d array), in sorted order."""
    values = np.asarray(values)
    if values.ndim == 1:
        values = values[:, None]
    keys = [repr(tuple(row)) for row in values.tolist()]
    return np.unique(keys, return_inverse=True)[1].astype(np.intp)


def check_resampling(
    n_splits: Any, train_size: Any, n_samples: int, owner: str
) -> tuple[int, int]:
    """Validate the number of resamples and the size of the first part.

    Parameters
    ----------
    n_splits : int
        Number of resamples, at least 1.
    train_size : float
        Share of the rows in the first part, in the open interval (0, 1).
    n_samples : int
        Number of rows.
    owner : str
        The calling function, for messages.

    Returns
    -------
    tuple of int
        The sizes of the two parts, ``(n_first, n_second)``; both at least 3.

    Raises
    ------
    TypeError
        If ``n_splits`` is not an int or ``train_size`` not a real number.
    ValueError
        If they are out of range, or a part would have fewer than 3 rows.
    """
    check_scalar(n_splits, "n_splits", numbers.Integral, owner=owner, min_val=1)
    check_fraction(train_size, "train_size", owner=owner)
    n_first = int(np.floor(float(train_size) * n_samples))
    n_second = n_samples - n_first
    if min(n_first, n_second) < 3:
        raise ValueError(
            f"The 'train_size' parameter of {owner} splits the {n_samples} rows "
            f"into parts of {n_first} and {n_second}; each part needs at least 3 "
            f"rows. Use a train_size nearer 0.5 or more samples."
        )
    return n_first, n_second


def draw_splits(
    n_samples: int,
    strata: NDArray[Any] | None,
    n_splits: int,
    train_size: float,
    random_state: Any,
) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """Draw random two-part splits of the rows, stratified when ``strata`` is given.

    scikit-learn's ``StratifiedShuffleSplit`` (or ``ShuffleSplit`` without
    strata) with ``train_size``, seeded by one integer drawn from
    ``random_state``. All splits are drawn here, before any fit, so they do
    not depend on ``n_jobs``.

    Parameters
    ----------
    n_samples : int
        Number of rows.
    strata : ndarray of shape (n_samples,) or None
        Labels whose proportions each part keeps (class, event indicator).
    n_splits : int
        Number of splits.
    train_size : float
        Share of the rows in the first part.
    random_state : int, numpy.random.Generator or None
        Seeds the draws.

    Returns
    -------
    list of (ndarray, ndarray)
        Sorted row positions of the first and second part of each split.

    Raises
    ------
    ValueError
        If a stratum has fewer than 2 rows (it cannot be in both parts).
    """
    seed = int(check_random_state(random_state).integers(2**31 - 1))
    rows = np.arange(n_samples)
    if strata is None:
        splitter: Any = ShuffleSplit(n_splits, train_size=train_size, random_state=seed)
        parts = splitter.split(rows)
    else:
        labels, counts = np.unique(strata, return_counts=True)
        if counts.min() < 2:
            raise ValueError(
                f"The stratum {labels[counts.argmin()]!r} (class or event "
                f"indicator) has {counts.min()} row(s); each part of a split "
                f"needs one. Resampling needs at least 2 rows of every class "
                f"(binomial) and 2 events and 2 censored rows or none (cox)."
            )
        splitter = StratifiedShuffleSplit(
            n_splits, train_size=train_size, random_state=seed
        )
        parts = splitter.split(rows, strata)
    return [(np.sort(a), np.sort(b)) for a, b in parts]


def clone_for_split(estimator: VCPCR | VCPCRCV, seed: int) -> VCPCR | VCPCRCV:
    """Return an unfitted clone of the template seeded for one resample.

    Parameters
    ----------
    estimator : VCPCR or VCPCRCV
        The template.
    seed : int
        The resample's seed (from :func:`vcpcr._parallel.task_seeds`); it replaces the
        template's ``random_state``.

    Returns
    -------
    VCPCR or VCPCRCV
        The clone; a ``VCPCRCV`` clone runs without its progress bar
        (``verbose=False``: the caller's bar counts the resamples).
    """
    model = clone(estimator).set_params(random_state=seed)
    if "verbose" in model.get_params(deep=False):
        model.set_params(verbose=False)
    return model


def fit_for_selection(
    estimator: VCPCR | VCPCRCV, seed: int, X: Any, y: Any
) -> VCPCR | VCPCRCV:
    """Fit a clone of the template for one resample's selection.

    The clone (:func:`clone_for_split`) is fitted on ``X``, ``y`` (the
    resample's rows) without the warnings of its step-2 fit, the outcome
    model on those rows: that its partial likelihood is monotone or its
    logistic fit separated (:class:`~vcpcr.SeparationWarning`), or that
    lifelines' fit may not have converged (:class:`~vcpcr.ConvergenceWarning`).
    What a resample keeps (the clusters, their members, the tuned
    parameters) does not depend on step 2's coefficients, so those warnings,
    which speak of ``summary()`` and ``result_``, would only mislead;
    multi-split's own step 2 on the other part warns for itself. Every
    other warning (the tuning folds', the data's) is kept.

    Parameters
    ----------
    estimator : VCPCR or VCPCRCV
        The template.
    seed : int
        The resample's seed (see :func:`clone_for_split`).
    X, y : array-like
        The resample's rows, as the template's ``fit`` takes them.

    Returns
    -------
    VCPCR or VCPCRCV
        The fitted clone.
    """
    model = clone_for_split(estimator, seed)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", _STEP2_WARNINGS, VCPCRWarning)
        return model.fit(X, y)


def fit_part(
    estimator: VCPCR | VCPCRCV,
    seed: int,
    data: FitInput,
    rows: NDArray[np.intp],
    X: Any,
    y: Any,
) -> VCPCR | VCPCRCV:
    """Fit a clone of the template on some rows of the checked data.

    What :func:`fit_for_selection` fits on ``take(X, rows)``,
    ``take(y, rows)``, without the input route: the part is
    ``data.take(rows)`` (:meth:`vcpcr._base.FitInput.take`), checked for
    what depends on its rows (:meth:`vcpcr._base.FitInput.check_part`, with
    ``fit``'s messages), and the clone (:func:`clone_for_split`) is fitted
    on it as ``fit`` fits (``_fit_checked``), with the attributes that
    describe the data (``n_features_in_``, ``feature_names_in_``,
    ``model_spec_``) ``data``'s, which a fit on the rows would set too;
    step 2's warnings are muted as there. A part that a fit on its rows
    alone would encode otherwise (a categorical level missing from it, a
    formula's ``center()`` or spline learned from the rows:
    :meth:`vcpcr._base.FitInput.encodes_alike`) is fitted through
    :func:`fit_for_selection` on ``X`` and ``y``'s rows.

    Parameters
    ----------
    estimator : VCPCR or VCPCRCV
        The template.
    seed : int
        The resample's seed (see :func:`clone_for_split`).
    data : FitInput
        The checked data of every row (:attr:`Rows.data`).
    rows : ndarray of int
        The part's rows (positions among ``data``'s).
    X, y : array-like
        Every row, as the template's ``fit`` takes them (:attr:`Rows.X`,
        :attr:`Rows.y`).

    Returns
    -------
    VCPCR or VCPCRCV
        The fitted clone.

    Raises
    ------
    ValueError
        What ``fit`` raises on these rows (too few events, a constant
        column, a class missing from the part, ...).
    """
    if not data.encodes_alike(rows):
        return fit_for_selection(estimator, seed, take(X, rows), take(y, rows))
    part = data.take(rows)
    model = clone_for_split(estimator, seed)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", _STEP2_WARNINGS, VCPCRWarning)
        part.check_part()
        return model._fit_checked(part)


def input_apart(data: FitInput) -> tuple[NDArray[np.float64], FitInput]:
    """Split checked data into its design matrix and the rest, for the workers.

    :func:`vcpcr._parallel.run_parallel` sends a task argument that every
    task shares to the workers once when it is an array itself, not a tuple
    holding one: the design matrix goes apart (:func:`input_joined` puts it
    back in the task).
    """
    return data.design.X, data._replace(design=data.design._replace(X=np.empty((0, 0))))


def input_joined(X: NDArray[np.float64], rest: FitInput) -> FitInput:
    """Return the checked data that :func:`input_apart` split."""
    return rest._replace(design=rest.design._replace(X=X))
