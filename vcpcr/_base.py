"""The estimator base of ``VCPCR`` and ``VCPCRCV``: shared parameters and input.

Both estimators take the parameters they share (``family``, ``weights``,
``latent``, ``n_init``, ``max_iter``, ``tol``, ``formula``, ``missing``,
``covariates``, ``strata``), validate them in one place
(:meth:`VCPCRBase._check_params`, which each extends with its own) and read
their data through one route (:meth:`VCPCRBase._fit_input`), so that a
``VCPCRCV`` sees its data exactly as the ``VCPCR`` it refits. Each class's
``__init__`` still lists its parameters, as scikit-learn's ``get_params``
requires.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import Tags

from vcpcr._checks import check_n_samples, check_not_constant, check_scalar
from vcpcr._clustering import check_latent
from vcpcr._families import Family, family_instance, known_family
from vcpcr._formula import RowEncoding, row_dependent_encoding
from vcpcr._input import (
    ColumnLayout,
    Design,
    check_covariates,
    check_levels,
    check_strata,
    part_levels,
    resolve_input,
    take,
    validated_design,
)
from vcpcr._scaling import standardize
from vcpcr._weights import WeightScheme, check_scheme

__all__ = ["DESCRIPTIVE", "FitInput", "VCPCRBase", "same_value"]

#: Parameters that do not change a fitted model (how it runs, not what it is).
_RUN_PARAMS = ("n_jobs", "verbose")

#: The attributes the input route sets to describe the data (scikit-learn's
#: ``validate_data`` the first two, the encoding the third); a fit on checked
#: data (:meth:`VCPCRBase._fit_checked`) takes them from its ``FitInput``.
DESCRIPTIVE = ("n_features_in_", "feature_names_in_", "model_spec_")

#: The most random starts a fit takes: each is a full clustering (10 is
#: ``VCPCR``'s default, 5 ``VCPCRCV``'s, per grid point and fold), so that a
#: typo such as ``n_init=10**12`` is an error, not a fit that never ends.
MAX_N_INIT = 10_000


def same_value(a: Any, b: Any) -> bool:
    """Whether two parameter values are equal (arrays by value, objects by repr)."""
    sequences = np.ndarray | list | tuple
    if isinstance(a, sequences) or isinstance(b, sequences):
        try:
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        except (TypeError, ValueError):
            return repr(a) == repr(b)
    scalars = str | numbers.Number | None
    if isinstance(a, scalars) and isinstance(b, scalars):
        return bool(a == b)
    return repr(a) == repr(b)


def _rows_of(X: NDArray[np.float64], rows: NDArray[np.intp]) -> NDArray[np.float64]:
    """Return ``X[rows]`` in ``X``'s memory order.

    The input route gives a DataFrame's values in column-major order; a
    fit on some of its rows would too. ``X[rows]`` is row-major, and the
    fit's products (standardizing, the clustering) on it run at another
    speed, so the rows are copied in ``X``'s order.
    """
    column_major = X.flags.f_contiguous and not X.flags.c_contiguous
    out = np.empty(
        (len(rows), X.shape[1]), dtype=X.dtype, order="F" if column_major else "C"
    )
    return np.take(X, rows, axis=0, out=out)


class FitInput(NamedTuple):
    """The checked data of a fit, as :meth:`VCPCRBase._fit_input` returns it."""

    yname: str  # the response's name (the formula's outcome, or "y")
    family: Family  # the ``family`` parameter, resolved once
    design: Design  # every column checked, and what each is for
    layout: ColumnLayout  # covariates, clustered columns, strata
    scheme: WeightScheme  # the ``weights`` parameter's scheme, checked
    rows: NDArray[np.intp] | None = None  # rows of X kept by missing="drop"
    #: the attributes that describe the data (:data:`DESCRIPTIVE`), as set
    described: tuple[tuple[str, Any], ...] = ()
    #: what of the encoding (formula, categorical covariates) its rows decided
    encoding: RowEncoding = RowEncoding()

    def take(self, rows: NDArray[np.intp]) -> FitInput:
        """Return the checked data of some of its rows (a resample, a part).

        ``rows`` are positions among this input's rows. ``X``, ``y``, the
        prepared response (:meth:`vcpcr._families.Family.restrict`, which
        recomputes what depends on all rows, e.g. the gaussian target's
        scale), the standardized covariates and the layout's raw covariates
        and strata are sliced, nothing is validated again: the columns'
        roles, names and levels are the whole input's (a fit on the part
        alone has them too when :meth:`encodes_alike` says so), and what
        depends on which rows they are is checked by :meth:`check_part` (a
        covariate constant on the rows, which it refuses, standardizes to
        NaN here, silently). ``rows`` of the result index the user's ``X`` (through
        ``missing="drop"``'s rows).
        """
        d, layout = self.design, self.layout
        X = _rows_of(d.X, rows)
        Z = X[:, d.covariates]  # as the input route takes them (same bits)
        with np.errstate(divide="ignore", invalid="ignore"):  # see check_part
            Zs = None if d.Zs is None else standardize(Z)[0]
        design = d._replace(
            X=X,
            y=take(d.y, rows),
            Zs=Zs,
            prepared=self.family.restrict(d.prepared, rows),
        )
        S = None if layout.S is None else X[:, d.strata]
        kept = rows if self.rows is None else self.rows[rows]
        return self._replace(design=design, layout=layout._replace(Z=Z, S=S), rows=kept)

    def encodes_alike(self, rows: NDArray[np.intp]) -> bool:
        """Whether a fit on these rows alone would encode them as this input does.

        Not when the encoding learned a state from all rows (``center()``,
        ``scale()``, a spline's knots), nor when the rows miss a level of a
        categorical term (a fit on them would leave its dummy out, or take
        another reference level): such a part is fitted through ``fit`` on
        its rows. Otherwise the part's design (:meth:`take`) is, column for
        column, the one a fit on its rows validates.
        """
        encoding = self.encoding
        if encoding.learned:
            return False
        if not encoding.categorical:
            return True
        d = self.design
        position = {name: j for j, name in enumerate(d.names)}
        for columns, alone in encoding.categorical:
            cols = [position[c] for c in columns if c in position]
            whole, part = d.X[:, cols], d.X[rows][:, cols]
            if alone:  # one value per level: the part holds every level
                n_levels = np.unique(whole, axis=0).shape[0]
                if np.unique(part, axis=0).shape[0] < n_levels:
                    return False
            elif np.any(np.ptp(part, axis=0) == 0):  # a level's column is 0
                return False
        return True

    def check_part(self) -> None:
        """Raise what the input route raises on these rows because of which they are.

        For a part (:meth:`take`) of checked data: each check of
        :meth:`VCPCRBase._fit_input` whose answer depends on the rows,
        in its order and with its message: at least 3 rows, no constant
        column (a covariate or stratum named as such), covariates not
        collinear, the response (:meth:`vcpcr._families.Family.check_rows`:
        not constant, two classes, an informative survival outcome), the
        levels of the discrete covariates (:func:`vcpcr._input.check_levels`)
        and a Cox model's strata each with an event. The values themselves
        (finite, of the family's kind) are not checked again.
        """
        d, family = self.design, self.family
        check_n_samples(d.X.shape[0], "X", 3)
        roles = {"covariates": d.covariates, "strata": d.strata}
        check_not_constant(d.X, "X", d.names, roles)
        names = [d.names[j] for j in d.covariates]
        Z = d.X[:, d.covariates]
        if d.covariates.size:
            check_covariates(Z, names)
        family.check_rows(d.prepared)
        outcome = d.prepared.outcome
        check_levels(Z, part_levels(Z, names, d.levels), family, outcome)
        if self.layout.S is not None:
            strata_names = [d.names[j] for j in d.strata]
            check_strata(self.layout.S, strata_names, outcome[:, 1] > 0)


class VCPCRBase(TransformerMixin, BaseEstimator):
    """What ``VCPCR`` and ``VCPCRCV`` share: tags, parameters, the input route.

    Subclasses store the shared parameters in their ``__init__`` and extend
    :meth:`_check_params` with their own.
    """

    family: str | Family
    weights: Any
    latent: str
    n_init: int
    max_iter: int
    tol: float
    formula: str | None
    missing: str
    covariates: Any
    strata: Any

    def __sklearn_tags__(self) -> Tags:
        """Return the family's tags (its ``estimator_type`` and its own tags)."""
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.formula is None
        family = known_family(self.family)
        if family is not None:  # an unknown family is reported by fit
            family.update_tags(tags)
        return tags

    @property
    def _family(self) -> Family:
        """The ``family`` parameter's family (:func:`family_instance`)."""
        return family_instance(self.family, owner=type(self).__name__)

    def _check_unchanged(self, what: str) -> None:
        """Raise if ``set_params`` changed a parameter since the fit.

        The fitted state (predictions, ``result_``) is the fit's; a report
        that read the new parameters beside it would contradict it (a
        summary with another ``shrinkage``, ``latent`` or ``lam_ratio``).
        """
        before = getattr(self, "_params_at_fit", None)
        if before is None:
            return
        now = self.get_params(deep=False)
        changed = [
            k
            for k in now
            if k not in _RUN_PARAMS and not same_value(now[k], before.get(k))
        ]
        if changed:
            was = ", ".join(f"{k}={before.get(k)!r} -> {now[k]!r}" for k in changed)
            raise ValueError(
                f"{what}: set_params changed {was} after fit, but the fitted "
                f"model is still the one fitted before. Call fit again, or set "
                f"them back."
            )

    def _check_params(
        self, family: Family, n_features: int, *, covariates: bool
    ) -> WeightScheme:
        """Validate the shared parameters; return the ``weights`` scheme.

        ``family`` is the resolved ``family`` parameter, ``n_features`` the
        number of clustered columns and ``covariates`` whether the fit
        adjusts for covariates (which not every weight scheme can with every
        family).
        """
        owner = type(self).__name__
        integral = numbers.Integral
        check_scalar(self.n_init, "n_init", integral, owner=owner, min_val=1)
        if self.n_init > MAX_N_INIT:
            raise ValueError(
                f"The 'n_init' parameter of {owner} asks for {self.n_init:,} random "
                f"starts, each a full clustering: at most {MAX_N_INIT:,} are "
                f"allowed (the fit would not end). 10 to 100 starts find the best "
                f"partition in practice; use n_init <= {MAX_N_INIT:,}."
            )
        check_scalar(self.max_iter, "max_iter", integral, owner=owner, min_val=1)
        check_scalar(self.tol, "tol", numbers.Real, owner=owner, min_val=0.0)
        check_latent(self.latent, owner)
        return check_scheme(
            self.weights, family, n_features, covariates=covariates, owner=owner
        )

    def _fit_input(self, X: Any, y: Any, *, owner: str | None = None) -> FitInput:
        """Check the parameters and the data of a fit: the one input route.

        The family, then :func:`vcpcr._input.resolve_input` (the formula, or
        without one ``missing="drop"`` and the categorical covariates' and
        strata's dummies), :func:`vcpcr._input.validated_design` (which
        sets ``n_features_in_`` and ``feature_names_in_``), the parameters
        (:meth:`_check_params`) and, for a Cox model, that every stratum has
        an event. Sets ``model_spec_`` when the data were encoded (removes a
        previous fit's otherwise).

        ``owner`` names the caller in :func:`vcpcr._input.resolve_input`'s
        messages (the ``missing`` parameter): the class by default, the
        public function of a resampling (``multi_split``), which checks its
        template's data once, on a clone. ``FitInput.rows`` says which rows
        of ``X`` ``missing="drop"`` kept.
        """
        cls = type(self).__name__
        family = family_instance(self.family, owner=cls)
        # The input's warnings (e.g. "Dropped 3 of 120 rows") are shown once
        # every check has passed: an error comes alone, not after a warning
        # about something else.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            resolved = resolve_input(self, X, y, owner=owner or cls)
            d = validated_design(self, resolved, family)
            covariates = d.covariates.size > 0
            scheme = self._check_params(family, d.clustered.size, covariates=covariates)
            S = d.X[:, d.strata] if d.strata.size else None
            if S is not None:
                strata_names = [d.names[j] for j in d.strata]
                check_strata(S, strata_names, d.prepared.outcome[:, 1] > 0)
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if resolved.spec is not None:
            self.model_spec_ = resolved.spec
        else:  # a refit without an encoding
            self.__dict__.pop("model_spec_", None)
        described = tuple(
            (name, getattr(self, name)) for name in DESCRIPTIVE if hasattr(self, name)
        )
        Z = d.X[:, d.covariates]
        layout = ColumnLayout(Z, d.covariates, d.clustered, d.X.shape[1], d.strata, S)
        return FitInput(
            resolved.yname,
            family,
            d,
            layout,
            scheme,
            resolved.rows,
            described,
            row_dependent_encoding(resolved.spec),
        )

    def _describe(self, data: FitInput) -> None:
        """Set the attributes that describe ``data`` (:data:`DESCRIPTIVE`).

        As the input route set them on the estimator that checked ``data``
        (a previous fit's are removed): a fit on checked data
        (``_fit_validated``) describes them as ``fit`` on them would, as
        scikit-learn's ``LinearModelCV`` copies them to its refit.
        """
        for name in DESCRIPTIVE:
            self.__dict__.pop(name, None)
        for name, value in data.described:
            setattr(self, name, value)
