"""The outcome families: the response and step 2 (and reading step 2 for the summary).

Each family turns the user's ``y`` into the step-2 outcome and the step-0
weights target, fits the outcome model on the cluster latent variables
(one design, or a stack at once), predicts, scores as the estimator's
``score``, and describes the fit for ``summary()``. Its response math
(losses, working weights, partial likelihood, the response simulator) is
its ``distribution``, an object of :mod:`vcpcr._solvers.distributions`, which the
solvers below the families use too; it carries its step-0 loss (``loss``, a
:class:`vcpcr._losses.PenalizedLoss`) and its CV scorings (``scoring``, a
:class:`vcpcr._family_scoring.FamilyScoring`) the same way, so that a
family of the user's brings its own. :data:`FAMILIES` is the registry of
families (the names of the ``family`` parameter); :func:`family_instance`
resolves a ``family`` parameter once per fit, and the estimators, the
weights, the cross-validation and the simulator
(:func:`vcpcr.simulate.make_block_data`) pass the object on and ask it,
instead of testing its name.
"""

from __future__ import annotations

import abc
import warnings
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.utils import ClassifierTags, RegressorTags, Tags

from vcpcr._checks import (
    check_array,
    check_choice,
    check_finite,
    check_informative,
    check_survival,
    check_survival_rows,
    check_varying,
    missing_to_nan,
)
from vcpcr._family_scoring import (
    BinomialScoring,
    CoxScoring,
    FamilyScoring,
    GaussianScoring,
)
from vcpcr._losses import BinomialLoss, CoxLoss, GaussianLoss, PenalizedLoss
from vcpcr._outcome import fit_cox, fit_logit, fit_ols
from vcpcr._scaling import standardize as standardize_columns
from vcpcr._solvers.distributions import (
    LOGISTIC,
    NORMAL,
    PROPORTIONAL_HAZARDS,
    Distribution,
)
from vcpcr._solvers.step2_fits import (
    BatchFit,
    cox_batch,
    cox_monotone,
    logit_batch,
    ols_batch,
)
from vcpcr._survival import breslow_baseline
from vcpcr.exceptions import SeparationWarning, user_stacklevel

__all__ = [
    "FAMILIES",
    "BatchParams",
    "Binomial",
    "Cox",
    "Family",
    "Gaussian",
    "ParamTable",
    "Prepared",
    "check_identifiable",
    "family_instance",
    "family_name",
    "known_family",
]


def check_identifiable(M: NDArray[np.float64], *, intercept: bool) -> None:
    """Raise a ValueError if the step-2 coefficients cannot be estimated.

    The same rule holds for every family (OLS would only warn, Logit and Cox
    would fail inside their solvers): the latent variables (with the
    intercept, if any) must be linearly independent and leave at least one
    residual degree of freedom, ``n_clusters_ + 1 < n_samples``.
    """
    n, k = M.shape
    if k == 0:
        return
    design = np.column_stack([np.ones(n), M]) if intercept else M
    extra = " + intercept" if intercept else ""
    if k + 1 >= n:
        raise ValueError(
            f"The outcome model has {k} cluster variable(s){extra} but only {n} "
            f"samples, so its coefficients are not identifiable. Use n_clusters <= "
            f"{max(n - 2, 1)} (or a larger lam_ratio, which leaves fewer clusters)."
        )
    top = np.abs(design).max(axis=0)
    rank = int(np.linalg.matrix_rank(design / np.where(top > 0, top, 1.0)))
    if rank < design.shape[1]:
        raise ValueError(
            f"The {k} cluster latent variables{extra} are linearly dependent "
            f"(rank {rank} < {design.shape[1]}), so the outcome model's "
            f"coefficients are not identifiable. Use fewer clusters (n_clusters) "
            f"or a larger lam_ratio."
        )


class Prepared(NamedTuple):
    """The response as the fit needs it.

    ``outcome`` feeds step 2, ``weights_target`` step 0; ``classes`` are the
    class labels (binomial) or None.
    """

    outcome: NDArray[np.float64]
    weights_target: NDArray[np.float64]
    classes: NDArray[Any] | None = None


class ParamTable(NamedTuple):
    """The coefficient estimates a family reads off its step-2 fit.

    ``stat`` holds t (``use_t``) or z statistics; ``conf_int`` has shape
    ``(k, 2)``. ``extra`` optionally adds columns (e.g. ``exp(coef)``) after
    the coefficients, as ``(header, values)`` pairs. The summary
    (:mod:`vcpcr._summary`) and the multi-split p-values read it.
    """

    names: list[str]
    params: NDArray[np.float64]
    bse: NDArray[np.float64]
    stat: NDArray[np.float64]
    pvalues: NDArray[np.float64]
    conf_int: NDArray[np.float64]
    use_t: bool
    extra: tuple[tuple[str, NDArray[np.float64]], ...] = ()


class BatchParams(NamedTuple):
    """Step-2 fits of a stack of designs (see :meth:`Family.fit_batch`).

    ``intercept`` (B,) and ``coef`` (B, k) as :meth:`Family.split_params`
    returns them; rows with ``ok`` False must be fitted with :meth:`Family.fit`.
    Rows with ``firth`` are Firth's estimate (Cox: the partial likelihood has
    no finite maximum).
    """

    intercept: NDArray[np.float64]
    coef: NDArray[np.float64]
    ok: NDArray[np.bool_]
    firth: NDArray[np.bool_] | None = None


class Family(abc.ABC):
    """An outcome family: the response and step 2.

    A family turns the user's ``y`` into the step-2 outcome and the step-0
    weights target (:meth:`prepare`), fits its outcome model (its own
    adapter of :mod:`vcpcr._outcome`), fits a stack of designs at once for
    :class:`VCPCRCV`, predicts, describes the fit for ``summary()`` and sets
    the estimator's scikit-learn tags. It carries its parts as class
    attributes: its response math (:attr:`distribution`), its step-0 loss
    (:attr:`loss`) and its CV scorings (:attr:`scoring`). To add a family,
    subclass this (or a family below) and set them; pass an instance as the
    estimators' ``family``, or add it to :data:`FAMILIES` to give it a name.
    """

    #: The value of the estimators' ``family`` parameter.
    name: ClassVar[str]
    #: scikit-learn's estimator type (what ``__sklearn_tags__`` reports).
    estimator_type: ClassVar[str | None]
    #: Whether the outcome is a survival outcome ``(time, event)``.
    survival: ClassVar[bool] = False
    #: The response math: loss, working weights or partial likelihood, and
    #: the response simulator.
    distribution: ClassVar[Distribution]
    #: The penalized loss whose path gives the step-0 weights.
    loss: ClassVar[PenalizedLoss]
    #: The CV scorings: its own scoring, the batched and the per-fold ones.
    scoring: ClassVar[FamilyScoring]
    #: How to build CV folds that :meth:`fold_problem` accepts.
    fold_hint: ClassVar[str] = ""
    #: Whether step 2 has no intercept and the estimator reports its linear
    #: predictor centred at the training means (lifelines' convention).
    centred: ClassVar[bool] = False

    # ---------------------------------------------------------- as a parameter

    def __eq__(self, other: object) -> bool:
        """Return whether ``other`` is a family of this class with equal attributes.

        So that scikit-learn's ``clone`` (which deep-copies a parameter that
        is not an estimator) gives an estimator equal to the original.
        """
        if type(other) is not type(self):
            return NotImplemented
        return vars(self) == vars(other)

    def __hash__(self) -> int:
        """Hash by class: equal families hash equally."""
        return hash(type(self))

    def __repr__(self) -> str:
        """Return the constructor call, e.g. ``Gaussian()`` (an estimator's repr)."""
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"

    # ---------------------------------------------------------------- step 2

    @abc.abstractmethod
    def prepare(self, y: Any) -> Prepared:
        """Validate ``y``; return the step-2 outcome and the weights target."""

    def fit(
        self,
        M: NDArray[np.float64],
        outcome: Any,
        names: list[str],
        yname: str,
        strata: pd.DataFrame | None = None,
    ) -> Any:
        """Fit the step-2 model; return the untouched results object.

        ``strata`` (a survival family only; the estimator checks the family
        first) are the columns of a stratified Cox model. The same
        identifiability rule holds for every family
        (:func:`check_identifiable`).
        """
        _check_strata(self, strata)
        check_identifiable(M, intercept=not self.centred)
        return self._fit_model(M, outcome, names, yname, strata)

    def fit_batch(
        self,
        M: NDArray[np.float64],
        outcome: Any,
        strata: NDArray[np.intp] | None = None,
    ) -> BatchParams:
        """Fit step 2 on every design ``M[b]`` (B, n, k) at once.

        ``strata`` labels the rows by stratum (a survival family only).
        """
        _check_strata(self, strata)
        return self._fit_batch(M, outcome, strata)

    @abc.abstractmethod
    def _fit_model(
        self, M: NDArray[np.float64], y: Any, names: list[str], yname: str, strata: Any
    ) -> Any:
        """Fit the step-2 model of ``y`` on ``M`` (checked); return its results."""

    @abc.abstractmethod
    def split_params(self, result: Any) -> tuple[float, NDArray[np.float64]]:
        """Return the intercept and the cluster coefficients of a fit."""

    @abc.abstractmethod
    def _fit_batch(
        self, M: NDArray[np.float64], outcome: Any, strata: NDArray[np.intp] | None
    ) -> BatchParams:
        """Fit step 2 on every design ``M[b]`` (checked) at once."""

    @abc.abstractmethod
    def table(self, result: Any, alpha: float) -> ParamTable:
        """Return the coefficient table of the summary."""

    @abc.abstractmethod
    def describe(self, result: Any) -> str:
        """Family and outcome model, e.g. ``"gaussian (OLS)"``."""

    @abc.abstractmethod
    def statistics(self, result: Any, concordance: Any = None) -> list[tuple[str, Any]]:
        """Goodness-of-fit rows of the summary header.

        ``concordance`` is the training predictions' Harrell's C with its
        interval (a :class:`vcpcr.metrics.ConcordanceInterval`), for the
        families that print a C; None: not computed.
        """

    def fit_outcome(self, result: Any) -> NDArray[np.float64] | None:
        """Return the outcome ``result`` was fitted to, in the training rows' order.

        None when the family prints no concordance (the cox family's
        ``(time, event)`` columns otherwise).
        """
        return None

    def notes(self, result: Any) -> list[str]:
        """Family-specific notes of the summary."""
        return []

    def per_sd(
        self, scaled: NDArray[np.float64]
    ) -> tuple[str, str, NDArray[np.float64]]:
        """Effects per standard deviation from ``coef * sd``: header, name, values.

        The gaussian family's is the coefficient itself; a ratio family
        (binomial, cox) exponentiates it.
        """
        return "coef/SD", "change in the mean", scaled

    @abc.abstractmethod
    def predict(self, eta: NDArray[np.float64], classes: Any) -> NDArray[Any]:
        """Turn the linear predictor into the prediction."""

    @abc.abstractmethod
    def score(self, y: Any, prediction: NDArray[Any], sample_weight: Any) -> float:
        """Return the estimator's score of the predictions."""

    def update_tags(self, tags: Tags) -> None:
        """Set the family's scikit-learn tags (``estimator_type`` and its own)."""
        tags.estimator_type = self.estimator_type

    def fitted_attributes(
        self,
        outcome: Any,
        result: Any,
        eta: NDArray[np.float64],
        strata: list[Any] | None,
        design: NDArray[np.float64],
    ) -> dict[str, Any]:
        """Extra fitted attributes of the estimator (name -> value).

        ``eta`` is the training rows' linear predictor as the estimator
        predicts it (centred, shrunk), ``strata`` each row's stratum or None,
        ``design`` the step-2 regressors ``result`` was fitted on.
        """
        return {}

    def restrict(self, prepared: Prepared, rows: NDArray[np.intp]) -> Prepared:
        """Return the prepared response of ``rows`` (a CV fold, a resample).

        What :meth:`prepare` would return on those rows of ``y``, without
        validating them again: the rows of ``outcome`` and
        ``weights_target``, the same ``classes``. A family whose target
        depends on all its rows recomputes it (the gaussian target's scale).
        """
        return prepared._replace(
            outcome=prepared.outcome[rows],
            weights_target=prepared.weights_target[rows],
        )

    def check_rows(self, prepared: Prepared) -> None:
        """Raise what :meth:`prepare` raises on these rows because of which they are.

        ``prepared`` is :meth:`restrict`'s response of some rows (a
        resample): its values were validated with all rows, but a part may
        miss what :meth:`prepare` needs of its rows (two classes, an event),
        and fails here with :meth:`prepare`'s message, without validating
        again. A family whose :meth:`prepare` needs nothing of the rows
        (the default) checks nothing.
        """
        return None

    def part_problem(self, prepared: Prepared, train: Any, test: Any) -> str | None:
        """Say what makes a split's parts unusable for this family, or None.

        ``prepared`` is :meth:`prepare`'s response of all rows, ``train``
        and ``test`` the rows of the two parts (a CV fold, a sample split).
        """
        return None

    def fold_problem(self, y: Any, train: Any, test: Any) -> str | None:
        """:meth:`part_problem` of the response as the user gave it.

        For a caller that holds ``y`` unprepared (the multi-split);
        :class:`VCPCRCV` asks :meth:`part_problem` of its prepared response.
        """
        return self.part_problem(self.prepare(y), train, test)

    def level_problem(self, outcome: Any, rows: NDArray[np.intp]) -> str | None:
        """Say why a covariate level (its ``rows``) has no finite coefficient.

        ``outcome`` is :meth:`prepare`'s ``outcome``; None if the level can
        be estimated (every level can, for the gaussian family: a level is
        a column that is not constant, which is checked before).
        """
        return None

    def strata(self, outcome: Any) -> NDArray[Any] | None:
        """Labels whose proportions random splits keep (None: no stratification).

        ``outcome`` is :meth:`prepare`'s ``outcome``.
        """
        return None


def _check_strata(family: Family, strata: Any) -> None:
    """Strata belong to a stratified Cox model only."""
    if strata is not None and not family.survival:
        raise ValueError("strata need a stratified Cox model: family='cox'.")


class _StatsmodelsFamily(Family):
    """A family whose step 2 is a statsmodels model with an intercept."""

    @staticmethod
    @abc.abstractmethod
    def _fit_stack(M: NDArray[np.float64], y: Any) -> BatchFit:
        """Fit ``y`` on every ``[1, M[b]]`` at once (``_solvers.step2_fits``)."""

    def _fit_batch(
        self, M: NDArray[np.float64], outcome: Any, strata: NDArray[np.intp] | None
    ) -> BatchParams:
        """Fit every design ``M[b]`` (B, n, k) at once; intercept first."""
        fit = self._fit_stack(M, outcome)
        return BatchParams(fit.params[:, 0], fit.params[:, 1:], fit.ok)

    def split_params(self, result: Any) -> tuple[float, NDArray[np.float64]]:
        """Return the intercept and the cluster coefficients of a fit."""
        params = np.asarray(result.params, dtype=np.float64)
        return float(params[0]), params[1:]

    def table(self, result: Any, alpha: float) -> ParamTable:
        """Return the coefficient table of the summary."""
        return ParamTable(
            names=list(result.model.exog_names),
            params=np.asarray(result.params),
            bse=np.asarray(result.bse),
            stat=np.asarray(result.tvalues),
            pvalues=np.asarray(result.pvalues),
            conf_int=np.asarray(result.conf_int(alpha)),
            use_t=bool(result.use_t),
        )


class Gaussian(_StatsmodelsFamily):
    """Gaussian family: OLS on the latent variables, R^2 as score."""

    name = "gaussian"
    estimator_type = "regressor"
    distribution = NORMAL
    loss = GaussianLoss()
    scoring = GaussianScoring()

    def prepare(self, y: Any) -> Prepared:
        """Validate the numeric response: finite numbers, not constant."""
        return self._target(check_array(y, "y", ensure_2d=False))

    def restrict(self, prepared: Prepared, rows: NDArray[np.intp]) -> Prepared:
        """Return the rows' response, standardized on them (and not constant)."""
        return self._target(prepared.outcome[rows])

    def check_rows(self, prepared: Prepared) -> None:
        """Raise :meth:`prepare`'s error for a constant response on these rows."""
        check_varying(prepared.outcome, "y")

    @staticmethod
    def _target(yf: NDArray[np.float64]) -> Prepared:
        """Return the response and its weights target, standardized on its rows."""
        check_varying(yf, "y")
        return Prepared(yf, standardize_columns(yf)[0])

    def _fit_model(
        self, M: NDArray[np.float64], y: Any, names: list[str], yname: str, strata: Any
    ) -> Any:
        """``statsmodels.OLS`` with an intercept."""
        return fit_ols(M, y, names=names, yname=yname)

    _fit_stack = staticmethod(ols_batch)

    def describe(self, result: Any) -> str:
        """Family and outcome model."""
        return "gaussian (OLS)"

    def statistics(self, result: Any, concordance: Any = None) -> list[tuple[str, Any]]:
        """R-squared and log-likelihood."""
        return [
            ("R-squared:", float(result.rsquared)),
            ("Log-Likelihood:", float(result.llf)),
        ]

    def predict(self, eta: NDArray[np.float64], classes: Any) -> NDArray[Any]:
        """Return the linear predictor itself."""
        return eta

    def score(self, y: Any, prediction: NDArray[Any], sample_weight: Any) -> float:
        """R^2 of the predictions."""
        from sklearn.metrics import r2_score

        return float(r2_score(y, prediction, sample_weight=sample_weight))

    def update_tags(self, tags: Tags) -> None:
        """Regressor tags."""
        super().update_tags(tags)
        # A sparse cluster model scores below the R^2 = 0.5 that
        # scikit-learn's generic check expects on its one-informative-
        # feature data set (documented expected failure).
        tags.regressor_tags = RegressorTags(poor_score=True)


def _check_two_classes(classes: NDArray[Any]) -> None:
    """Raise unless ``classes`` (the distinct labels of ``y``) are exactly 2."""
    if classes.size != 2:
        what = "a single class" if classes.size == 1 else f"{classes.size} classes"
        raise ValueError(
            f"Only binary classification is supported: family='binomial' "
            f"needs exactly 2 classes in y; got {what}: "
            f"{classes[:10].tolist()}. Use family='gaussian' for a numeric "
            f"response."
        )


class Binomial(_StatsmodelsFamily):
    """Binomial family: logistic regression (Firth under separation)."""

    name = "binomial"
    estimator_type = "classifier"
    distribution = LOGISTIC
    loss = BinomialLoss()
    scoring = BinomialScoring()
    fold_hint = "stratified folds (StratifiedKFold)"

    def prepare(self, y: Any) -> Prepared:
        """Map two class labels to 0/1 (``classes[1]`` is the event)."""
        from sklearn.utils.multiclass import check_classification_targets

        check_finite(missing_to_nan(np.asarray(y)), "y")
        labels = np.asarray(y, dtype=object).ravel()
        is_str = np.array([isinstance(v, str) for v in labels], dtype=bool)
        if is_str.any() and not is_str.all():
            raise TypeError(
                f"y mixes string and non-string class labels (e.g. "
                f"{labels[is_str][0]!r} and {labels[~is_str][0]!r}); "
                f"family='binomial' needs labels of one type. Convert them, "
                f"e.g. y = np.asarray(y).astype(str)."
            )
        try:
            check_classification_targets(y)
        except ValueError as exc:  # scikit-learn's "Unknown label type: ..."
            raise ValueError(
                f"{exc} For family='binomial', y must be 0/1 (or two class "
                f"labels); use family='gaussian' for a numeric response."
            ) from None
        classes = np.unique(y)
        _check_two_classes(classes)
        y01 = (np.asarray(y) == classes[1]).astype(np.float64)
        return Prepared(y01, y01, classes)

    def check_rows(self, prepared: Prepared) -> None:
        """Raise :meth:`prepare`'s error if these rows hold a single class."""
        present = np.unique(prepared.outcome).astype(np.intp)
        _check_two_classes(np.asarray(prepared.classes)[present])

    def _fit_model(
        self, M: NDArray[np.float64], y: Any, names: list[str], yname: str, strata: Any
    ) -> Any:
        """``statsmodels.Logit`` with an intercept (Firth's under separation)."""
        return fit_logit(M, y, names=names, yname=yname)[0]

    #: Separated designs are not ok: left to :meth:`fit`.
    _fit_stack = staticmethod(logit_batch)

    @staticmethod
    def _firth(result: Any) -> bool:
        return bool(result.mle_retvals.get("method") == "firth")

    def per_sd(
        self, scaled: NDArray[np.float64]
    ) -> tuple[str, str, NDArray[np.float64]]:
        """Odds ratios per standard deviation, ``exp(coef * sd)``."""
        return "OR/SD", "odds ratio", np.exp(scaled)

    def describe(self, result: Any) -> str:
        """Family and outcome model, e.g. ``"binomial (Logit)"``."""
        return "binomial (Firth logit)" if self._firth(result) else "binomial (Logit)"

    def statistics(self, result: Any, concordance: Any = None) -> list[tuple[str, Any]]:
        """Pseudo R-squared and log-likelihood."""
        return [
            ("Pseudo R-squ.:", float(result.prsquared)),
            ("Log-Likelihood:", float(result.llf)),
        ]

    def notes(self, result: Any) -> list[str]:
        """Explain the Firth fallback when it was used."""
        if not self._firth(result):
            return []
        return [
            "The outcome was (quasi-)separated: coefficients are Firth's "
            "bias-reduced estimates; SEs from the inverse Fisher information."
        ]

    def predict(self, eta: NDArray[np.float64], classes: Any) -> NDArray[Any]:
        """Class label with the larger probability."""
        return np.asarray(classes)[(eta > 0).astype(int)]

    def score(self, y: Any, prediction: NDArray[Any], sample_weight: Any) -> float:
        """Accuracy of the predicted labels."""
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(y, prediction, sample_weight=sample_weight))

    def update_tags(self, tags: Tags) -> None:
        """Binary classifier tags."""
        super().update_tags(tags)
        tags.classifier_tags = ClassifierTags(multi_class=False)

    def strata(self, outcome: Any) -> NDArray[Any] | None:
        """Return the 0/1 class labels: each part keeps the class proportions."""
        return np.asarray(outcome)

    def level_problem(self, outcome: Any, rows: NDArray[np.intp]) -> str | None:
        """Name a level whose rows are all of one class: its coefficient diverges.

        The level's indicator separates the classes (quasi-completely), so
        the logistic likelihood increases without bound as its coefficient
        goes to infinity, whatever the other regressors.
        """
        values = np.unique(np.asarray(outcome)[rows])
        if values.size > 1:
            return None
        return (
            f"{rows.size} rows, all of class {int(values[0])} of 0/1: the level "
            f"separates the classes, so its step-2 coefficient diverges. Each "
            f"level needs rows of both classes"
        )

    def part_problem(self, prepared: Prepared, train: Any, test: Any) -> str | None:
        """Name a part that misses a class (``prepared.classes``)."""
        y01, classes = prepared.outcome, np.asarray(prepared.classes)
        for part, idx in (("training", train), ("test", test)):
            missing = np.setdiff1d([0.0, 1.0], y01[idx])
            if missing.size:
                return (
                    f"its {part} part ({len(idx)} rows) has no sample of class "
                    f"{classes[int(missing[0]) :][:1].tolist()[0]!r} (which has "
                    f"{int(np.sum(y01 == missing[0]))} sample(s) in y)"
                )
        return None


class Cox(Family):
    """Cox family: proportional hazards with lifelines (Efron ties)."""

    name = "cox"
    estimator_type = None
    survival = True
    distribution = PROPORTIONAL_HAZARDS
    loss = CoxLoss()
    scoring = CoxScoring()
    fold_hint = (
        "folds stratified on the event indicator, e.g. cv=list("
        "StratifiedKFold(k, shuffle=True).split(X, event))"
    )

    centred = True

    def prepare(self, y: Any) -> Prepared:
        """Validate a survival outcome into ``(time, event)`` columns."""
        time, event = check_survival(y)
        outcome = np.column_stack([time, event.astype(np.float64)])
        return Prepared(outcome, outcome)

    def check_rows(self, prepared: Prepared) -> None:
        """Raise :func:`check_survival`'s error for rows without informative events."""
        outcome = prepared.outcome
        check_survival_rows(outcome[:, 0], outcome[:, 1] > 0)

    def _fit_model(
        self, M: NDArray[np.float64], y: Any, names: list[str], yname: str, strata: Any
    ) -> Any:
        """``lifelines.CoxPHFitter`` (no intercept), stratified by ``strata``."""
        return fit_cox(M, y, names=names, strata=strata)

    def split_params(self, result: Any) -> tuple[float, NDArray[np.float64]]:
        """No intercept: the baseline hazard absorbs it."""
        return 0.0, result.params_.to_numpy(dtype=np.float64)

    def _fit_batch(
        self, M: NDArray[np.float64], outcome: Any, strata: NDArray[np.intp] | None
    ) -> BatchParams:
        """Cox (Efron ties) on every design at once, within strata; no intercept.

        Where the partial likelihood has no finite maximum (the outcome is
        separated), Firth's estimate (see :func:`cox_batch`).
        """
        y = outcome[:, 0], outcome[:, 1] > 0
        fit = cox_batch(M, *y, strata=strata, firth=True)
        return BatchParams(np.zeros(M.shape[0]), fit.params, fit.ok, fit.firth)

    def table(self, result: Any, alpha: float) -> ParamTable:
        """Coefficients with exp(coef), standard errors, z, p and CI."""
        from scipy import stats

        params = result.params_.to_numpy(dtype=np.float64)
        bse = result.standard_errors_.to_numpy(dtype=np.float64)
        z = params / bse
        q = stats.norm.ppf(1 - alpha / 2)
        return ParamTable(
            names=list(result.params_.index),
            params=params,
            bse=bse,
            stat=z,
            pvalues=2 * stats.norm.sf(np.abs(z)),
            conf_int=np.column_stack([params - q * bse, params + q * bse]),
            use_t=False,
            extra=(("exp(coef)", np.exp(params)),),
        )

    def per_sd(
        self, scaled: NDArray[np.float64]
    ) -> tuple[str, str, NDArray[np.float64]]:
        """Hazard ratios per standard deviation, ``exp(coef * sd)``."""
        return "HR/SD", "hazard ratio", np.exp(scaled)

    def describe(self, result: Any) -> str:
        """Family and outcome model."""
        return "cox (PH, Efron ties)"

    def statistics(self, result: Any, concordance: Any = None) -> list[tuple[str, Any]]:
        """Events, concordance (with its interval), partial likelihood, LR test.

        With ``concordance`` (Harrell's C of the estimator's training
        predictions and its bootstrap interval), its estimate and interval;
        else lifelines' ``concordance_index_`` of ``result``. The two agree
        when the predictions rank the rows as ``result`` does (without
        shrinkage, or without covariates).
        """
        events = int(result.event_observed.sum())
        rows: list[tuple[str, Any]] = [
            ("Events:", f"{events} ({len(result.event_observed) - events} censored)"),
        ]
        if concordance is None:
            rows.append(("Concordance:", float(result.concordance_index_)))
        else:
            level = f"{100 * (1 - concordance.alpha):.0f}%"
            rows.append(("Concordance:", float(concordance.estimate)))
            rows.append(
                (
                    f"Concordance {level} CI:",
                    f"[{concordance.low:.3f}, {concordance.high:.3f}]",
                )
            )
        rows.append(("Log-partial-lik.:", float(result.log_likelihood_)))
        if len(result.params_):
            lr = result.log_likelihood_ratio_test()
            rows.append(
                (f"LR test (df={lr.degrees_freedom}):", f"{lr.test_statistic:.4g}")
            )
            rows.append(("LR test p-value:", f"{lr.p_value:.3g}"))
        return rows

    def fit_outcome(self, result: Any) -> NDArray[np.float64] | None:
        """``(time, event)`` of the fit, in the training rows' order.

        lifelines sorts its rows but keeps their index, the positions of the
        frame :func:`vcpcr._outcome.fit_cox` gave it.
        """
        order = np.argsort(result.durations.index.to_numpy(), kind="stable")
        return np.column_stack(
            [result.durations.to_numpy(), result.event_observed.to_numpy()]
        )[order].astype(np.float64)

    def predict(self, eta: NDArray[np.float64], classes: Any) -> NDArray[Any]:
        """Partial hazard (risk score) ``exp(eta)``."""
        return np.exp(eta)

    def score(self, y: Any, prediction: NDArray[Any], sample_weight: Any) -> float:
        """Harrell's concordance index of the risk scores."""
        from lifelines.utils import concordance_index

        if sample_weight is not None:
            raise ValueError("sample_weight is not supported by the concordance index.")
        time, event = check_survival(y)
        return float(concordance_index(time, -prediction, event))

    def fitted_attributes(
        self,
        outcome: Any,
        result: Any,
        eta: NDArray[np.float64],
        strata: list[Any] | None,
        design: NDArray[np.float64],
    ) -> dict[str, Any]:
        """``unique_times_``, ``concordance_index_``, the baseline, ``separated_``.

        scikit-survival's and lifelines' names; the baseline cumulative
        hazard is that of ``eta`` (lifelines' own when ``eta`` is its fit's),
        and ``eta`` itself is ``train_linear_predictor_`` (the training
        distribution that risk groups of new data are cut at), ``strata``
        ``train_strata_`` (the summary's stratified C pairs rows within them).
        ``separated_`` says whether the partial likelihood of ``design`` has
        no finite maximum (monotone likelihood); then it warns. It is read
        from ``result``, the one step-2 fit: lifelines' coefficients are a
        finite maximum when Newton's step from them is negligible and the
        information there does not vanish, one evaluation of the partial
        likelihood at them; only where they are not (separated, or
        lifelines stopped short) does the folds' test decide, by its own fit
        (:func:`cox_monotone`, :func:`cox_batch`). Not the other way round
        (lifelines started at a fit of vcpcr's): lifelines' likelihood-ratio
        test would then refit a wrong null model.
        """
        time, event = outcome[:, 0], outcome[:, 1]
        codes = (
            None
            if strata is None
            else np.unique([repr(k) for k in strata], return_inverse=True)[1]
        )
        separated = bool(design.shape[1]) and cox_monotone(  # empty: nothing
            design,
            time,
            event > 0,
            result.params_.to_numpy(dtype=np.float64),
            strata=codes,
        )
        if separated:
            warnings.warn(
                "The Cox outcome model (step 2) has a monotone partial "
                "likelihood: the regressors (the covariates, if any, and the "
                "cluster latent variables) separate the events from the rows "
                "still at risk, so some combination of the coefficients can "
                "grow without bound and the maximum-likelihood estimate does "
                "not exist (separated_ is True). The coefficients, standard "
                "errors, p-values and intervals of result_ and summary() are "
                "those of lifelines' diverging fit, not estimates. Use fewer or "
                "sparser clusters (n_clusters, lam_ratio), merge rare "
                "covariate levels, or tune with VCPCRCV, whose folds use "
                "Firth's estimate in this case.",
                SeparationWarning,
                stacklevel=user_stacklevel(),
            )
        return {
            "unique_times_": np.unique(time),
            "concordance_index_": float(result.concordance_index_),
            "baseline_cumulative_hazard_": breslow_baseline(eta, time, event, strata),
            "train_linear_predictor_": np.array(eta, dtype=np.float64),
            "train_strata_": (
                None if strata is None else pd.Series(strata, dtype=object).to_numpy()
            ),
            "separated_": separated,
        }

    def strata(self, outcome: Any) -> NDArray[Any] | None:
        """Return the event indicator: each part keeps the share of events."""
        return np.asarray(outcome)[:, 1]

    def level_problem(self, outcome: Any, rows: NDArray[np.intp]) -> str | None:
        """Name a level whose coefficient diverges (monotone likelihood).

        A level without events enters the partial likelihood only through
        the risk sets' denominators, which shrink as its coefficient
        decreases; so does a level whose first event comes after every
        other row has left the risk set. A level whose rows all leave
        before the other rows' first event only gains as its coefficient
        increases. Each way the likelihood increases without bound,
        whatever the other regressors.
        """
        time, event = np.asarray(outcome)[:, 0], np.asarray(outcome)[:, 1] > 0
        events = f"(y has {int(event.sum())} events in {event.size} rows)"
        if not event[rows].any():
            return (
                f"{rows.size} rows and 0 events {events}: its step-2 coefficient "
                f"diverges to -infinity. Each level needs at least 1 event"
            )
        others = np.ones(event.size, dtype=bool)
        others[rows] = False
        if not (others & event).any():  # then the other level has no event
            return None
        found = f"{rows.size} rows and {int(event[rows].sum())} events {events}"
        need = "Each level needs a row at risk at another level's event and "
        first = time[others & event].min()
        if time[rows].max() < first:
            return (
                f"{found}, all its rows leaving before the other rows' first "
                f"event (at {first:g}): its step-2 coefficient diverges to "
                f"+infinity. {need}the reverse"
            )
        own = time[np.isin(np.arange(event.size), rows) & event].min()
        if time[others].max() < own:
            return (
                f"{found}, its first event (at {own:g}) after every other row "
                f"left: its step-2 coefficient diverges to -infinity. {need}"
                f"the reverse"
            )
        return None

    def part_problem(self, prepared: Prepared, train: Any, test: Any) -> str | None:
        """Name a part without events, or a training part without information.

        The training part's times and events are rows of a validated
        outcome: only their information is checked
        (:func:`vcpcr._checks.check_informative`).
        """
        time, event = prepared.outcome[:, 0], prepared.outcome[:, 1] == 1
        for part, idx in (("training", train), ("test", test)):
            if not event[idx].any():
                return (
                    f"its {part} part ({len(idx)} rows) has no event (y has "
                    f"{int(event.sum())} events in {event.size} rows)"
                )
        try:
            check_informative(time[train], event[train])
        except ValueError as exc:
            return f"its training part ({len(train)} rows) is unusable: {exc}"
        return None


#: The registry of families: the ``family`` parameter's values and objects.
FAMILIES: dict[str, Family] = {
    family.name: family for family in (Gaussian(), Binomial(), Cox())
}


#: The parts a family carries: attribute, its type, what it is.
_PARTS: tuple[tuple[str, type, str], ...] = (
    ("distribution", Distribution, "response math"),
    ("loss", PenalizedLoss, "step-0 loss"),
    ("scoring", FamilyScoring, "CV scorings"),
)


def _check_parts(family: Family, owner: str) -> None:
    """Raise a TypeError naming the first part ``family`` does not carry."""
    cls = type(family).__name__
    for attribute, kind, what in _PARTS:
        part = getattr(family, attribute, None)
        if not isinstance(part, kind):
            raise TypeError(
                f"The 'family' parameter of {owner} is a {cls} without its "
                f"{what}: set {cls}.{attribute} to an instance of "
                f"{kind.__module__}.{kind.__name__} (a subclass's, or a built-in "
                f"family's, e.g. Gaussian.{attribute}). Got {part!r} instead."
            )


def family_instance(family: str | Family, *, owner: str) -> Family:
    """Return the family of a ``family`` parameter (a name in :data:`FAMILIES`, or one).

    The one resolution of a family, once per fit: the callers pass the
    object on. A name that is not registered is a ValueError, and a value
    that is neither a string nor a :class:`Family` a TypeError, each naming
    the registered names (``owner`` is the class or function whose
    parameter it is). A family object missing one of its parts
    (:data:`_PARTS`: ``distribution``, ``loss``, ``scoring``) is a TypeError
    naming the class attribute to set.
    """
    if isinstance(family, Family):
        _check_parts(family, owner)
        return family
    if not isinstance(family, str):
        raise TypeError(
            f"The 'family' parameter of {owner} must be one of "
            f"{', '.join(repr(name) for name in FAMILIES)} or a "
            f"vcpcr._families.Family object. Got {family!r} (of type "
            f"{type(family).__name__}) instead."
        )
    return FAMILIES[check_choice(family, "family", tuple(FAMILIES), owner=owner)]


def family_name(family: Any) -> Any:
    """Return the name of a ``family`` parameter: a Family's, or the value itself.

    For the code that accepts any estimator (a VC-PCR one or not) and
    compares its ``family`` attribute with a name.
    """
    return family.name if isinstance(family, Family) else family


def known_family(family: Any) -> Family | None:
    """Return the family of a ``family`` parameter, or None if it is unknown.

    For what may be asked before ``fit`` validates the parameter (the
    scikit-learn tags, ``available_if``): ``fit`` reports an unknown one.
    """
    if isinstance(family, Family):
        return family
    return FAMILIES.get(family)
