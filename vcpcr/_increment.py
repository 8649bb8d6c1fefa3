"""Does a signature add to the clinical model? Paired cross-validated increments.

:func:`validate_increment` runs the same repeated stratified CV folds for the
clinical-only Cox model (:class:`ClinicalCox`, lifelines), the estimator
(features and the clinical covariates; a ``VCPCRCV`` re-tunes inside each
training fold) and optionally a Coxnet with unpenalized clinical columns,
scores each fold with scikit-survival's metrics, and returns the paired
increments over the clinical model with intervals (:class:`IncrementResult`).

What is estimated: cross-validation estimates the performance of the
*procedure* trained on ``(k - 1) / k`` of the rows, averaged over training
sets (Bates, Hastie & Tibshirani 2023), not that of the model fitted on all
rows. ``benchmarks/bench_validation.py`` checks the intervals' coverage of
that target by simulation.
"""

from __future__ import annotations

import inspect
import numbers
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import (
    RepeatedKFold,
    RepeatedStratifiedKFold,
    StratifiedKFold,
)

from vcpcr._checks import (
    check_choice,
    check_cv_param,
    check_finite,
    check_fraction,
    check_scalar,
    check_survival,
    dimension_error,
)
from vcpcr._families import family_name, known_family
from vcpcr._formula import (
    DesignSpec,
    as_list,
    expand_names,
    resolve_formula,
    term_sources,
    transform_new,
)
from vcpcr._input import (
    check_column_names,
    check_model_fold_strata,
    check_same_rows,
    merge_covariates,
    model_strata,
    split_cells,
    strata_cells,
)
from vcpcr._parallel import (
    Checkpoint,
    check_failures,
    finished,
    progress_shown,
    run_parallel,
    task_seeds,
)
from vcpcr._result import Result
from vcpcr._scaling import constant_columns
from vcpcr._solvers.partial_likelihood import efron_loglik
from vcpcr._summary import VCPCRSummary, numbered_notes
from vcpcr._survival import evaluate_baseline, stratum_baselines
from vcpcr.exceptions import VCPCRWarning, user_stacklevel

__all__ = [
    "CLINICAL",
    "INTERVALS",
    "ClinicalCox",
    "ClinicalGLM",
    "IncrementResult",
    "increment_interval",
    "validate_increment",
]

#: The name of the clinical-only model in the result's tables.
CLINICAL = "clinical Cox"
COXNET = "Coxnet"
#: Interval methods for a mean of paired per-fold increments (see
#: :func:`increment_interval`).
INTERVALS = ("one_fold", "corrected_t", "naive")
_OWNER = "validate_increment"


def _require_survival(owner: str) -> None:
    """Raise an ImportError unless lifelines and scikit-survival are installed."""
    try:
        import lifelines  # noqa: F401
        import sksurv  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"{owner} requires lifelines and scikit-survival: "
            f"pip install 'vcpcr[survival]'"
        ) from exc


def _as_list(columns: Any) -> list[Any]:
    """Return a column selection (a name, a position or a list) as a list."""
    if columns is None:
        return []
    if isinstance(columns, str | numbers.Integral):
        return [columns]
    return list(columns)


# ------------------------------------------------------------------ the clinical model
class ClinicalCox(BaseEstimator):  # type: ignore[misc]
    """The clinical-only Cox model: lifelines' ``CoxPHFitter`` on given columns.

    Numeric covariates enter per unit; a non-numeric covariate enters as
    treatment dummies of its training levels (the first level is the
    reference); ``strata`` columns get their own baseline hazard. Every
    other column of ``X`` is ignored, so the model can be fitted on the same
    ``X`` as a signature.

    Parameters
    ----------
    covariates : str, int or list of them, optional
        Column names of a DataFrame (or positions of an array).
    strata : str, int or list of them, optional
        Columns whose combinations are the strata.

    Attributes
    ----------
    result_ : lifelines.CoxPHFitter
        The fitted model.
    levels_ : dict of str to list
        The training levels of each non-numeric covariate.

    See Also
    --------
    validate_increment : The increments of a signature over this model.

    Notes
    -----
    Survival functions are ``S(t | x) = exp(-H0(t) exp(eta(x)))`` with
    lifelines' Breslow baseline ``H0`` (per stratum), evaluated as
    ``VCPCR(family="cox")`` evaluates its own.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from vcpcr.validation import ClinicalCox
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"age": rng.normal(size=40), "g1": rng.normal(size=40)})
    >>> y = np.column_stack([rng.exponential(size=40), rng.random(40) < 0.7])
    >>> ClinicalCox(covariates="age").fit(X, y).result_.params_.index.tolist()
    ['age']
    """

    def __init__(
        self,
        covariates: str | int | list[Any] | None = None,
        strata: str | int | list[Any] | None = None,
    ) -> None:
        self.covariates = covariates
        self.strata = strata

    def _design(self, X: Any) -> pd.DataFrame:
        """Return the covariates (numeric, or training-level dummies) and strata."""
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
        design = self.dummies_.transform(frame)
        for name in _as_list(self.strata):
            design[f"stratum:{name}"] = frame[name].to_numpy()
        return design

    def fit(self, X: Any, y: Any) -> ClinicalCox:
        """Fit lifelines' Cox model on the clinical columns.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Data holding the clinical columns.
        y : array-like of shape (n_samples, 2) or structured array
            ``(time, event)``, as :class:`vcpcr.VCPCR` accepts it.

        Returns
        -------
        ClinicalCox
            The fitted model.
        """
        check_same_rows(X, y)
        from lifelines import CoxPHFitter

        if not _as_list(self.covariates) and not _as_list(self.strata):
            raise ValueError(
                "ClinicalCox needs covariates or strata; got neither. Pass "
                "covariates=['age', ...] (or strata=)."
            )
        time, event = check_survival(y)
        # the clinical columns present and complete (lifelines' "NaNs were
        # detected" and pandas' KeyError otherwise)
        columns = [*_as_list(self.covariates), *_as_list(self.strata)]
        frame = _check_frame(X, y, columns, owner="ClinicalCox")
        self.dummies_ = _Dummies(self.covariates).fit(frame)
        self.levels_ = self.dummies_.levels
        design = self._design(frame)
        design["_time"], design["_event"] = time, event.astype(float)
        strata = [c for c in design.columns if c.startswith("stratum:")]
        self.result_ = CoxPHFitter().fit(
            design, "_time", "_event", strata=strata or None
        )
        return self

    def _fold_strata(self, X: Any) -> pd.DataFrame | None:
        """Return the strata columns of ``X`` (None without), for stratified folds."""
        strata = _as_list(self.strata)
        if not strata:
            return None
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
        return frame[strata]

    def on_design(self, covariates: list[Any], strata: list[Any]) -> ClinicalCox:
        """Return this model (unfitted) on a design's clinical columns.

        Parameters
        ----------
        covariates, strata : list of str
            Columns of the design matrix.

        Returns
        -------
        ClinicalCox
            ``self``, with ``covariates`` and ``strata`` set.
        """
        return self.set_params(covariates=covariates or None, strata=strata or None)  # type: ignore[no-any-return]

    def predict_log_partial_hazard(self, X: Any) -> NDArray[np.float64]:
        """Linear predictor (lifelines' log partial hazard, centred).

        Parameters
        ----------
        X : DataFrame or array-like
            Data holding the clinical columns.

        Returns
        -------
        ndarray of shape (n_samples,)
            Log relative risk.
        """
        design = self._design(X)
        eta = self.result_.predict_log_partial_hazard(design)
        return np.asarray(eta, dtype=np.float64).reshape(-1)

    def predict(self, X: Any) -> NDArray[np.float64]:
        """Risk score: the linear predictor (scikit-survival's convention).

        Parameters
        ----------
        X : DataFrame or array-like
            Data holding the clinical columns.

        Returns
        -------
        ndarray of shape (n_samples,)
            Higher means higher risk.
        """
        return self.predict_log_partial_hazard(X)

    def predict_survival_function(
        self, X: Any, return_array: bool = True, *, times: ArrayLike
    ) -> NDArray[np.float64]:
        """Survival probabilities ``S(t | x)`` at ``times``.

        Parameters
        ----------
        X : DataFrame or array-like
            Data holding the clinical columns.
        return_array : bool, default=True
            Only arrays are returned (the argument matches ``VCPCR``'s).
        times : array-like of float
            Increasing times.

        Returns
        -------
        ndarray of shape (n_samples, n_times)
            Survival probabilities.
        """
        grid = np.asarray(times, dtype=np.float64)
        design = self._design(X)
        names = [c for c in design.columns if c.startswith("stratum:")]
        base = self.result_.baseline_cumulative_hazard_
        if names:
            keys = list(design[names].itertuples(index=False, name=None))
            keys = [k[0] for k in keys] if len(names) == 1 else keys
            H0 = stratum_baselines(base, keys, names, grid)
        else:
            H0 = evaluate_baseline(base, grid)[None, :]
        risk = self.result_.predict_partial_hazard(design).to_numpy(dtype=np.float64)
        return np.asarray(np.exp(-risk.reshape(-1, 1) * H0))


class ClinicalGLM(BaseEstimator):  # type: ignore[misc]
    """The clinical-only logistic or linear model: statsmodels on given columns.

    The binomial and gaussian counterpart of :class:`ClinicalCox`: an
    intercept, numeric covariates per unit and a non-numeric covariate as
    treatment dummies of its training levels (the first level is the
    reference), fitted by maximum likelihood (statsmodels ``GLM``, binomial
    with the logit link or gaussian). Every other column of ``X`` is
    ignored, so the model can be fitted on the same ``X`` as a signature.

    Parameters
    ----------
    covariates : str, int or list of them
        Column names of a DataFrame (or positions of an array).
    family : {"binomial", "gaussian"}, default="binomial"
        The outcome's family.

    Attributes
    ----------
    result_ : statsmodels GLMResults
        The fitted model.
    classes_ : ndarray of shape (2,)
        Binomial: the two labels; the second is the event whose probability
        is predicted.
    levels_ : dict of str to list
        The training levels of each non-numeric covariate.

    See Also
    --------
    validate_increment : The increments of a signature over this model.
    ClinicalCox : The survival version.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from vcpcr.validation import ClinicalGLM
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"age": rng.normal(size=60), "g1": rng.normal(size=60)})
    >>> y = (rng.random(60) < 1 / (1 + np.exp(-X["age"]))).astype(int)
    >>> model = ClinicalGLM(covariates="age").fit(X, y)
    >>> model.result_.params.index.tolist()
    ['const', 'age']
    >>> model.predict_proba(X).shape
    (60, 2)
    """

    def __init__(
        self, covariates: str | int | list[Any] | None = None, family: str = "binomial"
    ) -> None:
        self.covariates = covariates
        self.family = family

    def _design(self, X: Any) -> pd.DataFrame:
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
        design = self.dummies_.transform(frame)
        design.insert(0, "const", 1.0)
        return design

    def fit(self, X: Any, y: Any) -> ClinicalGLM:
        """Fit the logistic or linear model on the clinical columns.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Data holding the clinical columns.
        y : array-like of shape (n_samples,)
            Binomial: two labels; gaussian: numbers.

        Returns
        -------
        ClinicalGLM
            The fitted model.
        """
        import statsmodels.api as sm

        owner = "ClinicalGLM"
        check_choice(self.family, "family", ("binomial", "gaussian"), owner=owner)
        check_same_rows(X, y)
        if not _as_list(self.covariates):
            raise ValueError(
                "ClinicalGLM needs covariates; got none. Pass covariates=['age', ...]."
            )
        frame = _check_frame(X, y, _as_list(self.covariates), owner=owner)
        target = _glm_target(y, self.family, owner)
        if self.family == "binomial":
            self.classes_ = np.unique(np.asarray(y).reshape(-1))
        self.dummies_ = _Dummies(self.covariates).fit(frame)
        self.levels_ = self.dummies_.levels
        glm_family = (
            sm.families.Binomial()
            if self.family == "binomial"
            else sm.families.Gaussian()
        )
        self.result_ = sm.GLM(target, self._design(frame), family=glm_family).fit()
        return self

    def on_design(self, covariates: list[Any], strata: list[Any]) -> ClinicalGLM:
        """Return this model (unfitted) on a design's clinical columns.

        Parameters
        ----------
        covariates : list of str
            Columns of the design matrix.
        strata : list
            Empty: strata are for Cox models only.

        Returns
        -------
        ClinicalGLM
            ``self``, with ``covariates`` set.
        """
        return self.set_params(covariates=covariates)  # type: ignore[no-any-return]

    def predict(self, X: Any) -> NDArray[Any]:
        """Predicted value (gaussian) or label (binomial, probability >= 0.5).

        Parameters
        ----------
        X : DataFrame or array-like
            Data holding the clinical columns.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.
        """
        mean = np.asarray(self.result_.predict(self._design(X)), dtype=np.float64)
        if self.family == "binomial":
            return np.asarray(self.classes_[(mean >= 0.5).astype(int)])
        return mean

    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """Binomial: the probabilities of ``classes_[0]`` and ``classes_[1]``.

        Parameters
        ----------
        X : DataFrame or array-like
            Data holding the clinical columns.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Probabilities.
        """
        if self.family != "binomial":
            raise ValueError(
                "ClinicalGLM.predict_proba needs family='binomial'; a gaussian "
                "model predicts values: use predict."
            )
        p = np.asarray(self.result_.predict(self._design(X)), dtype=np.float64)
        return np.column_stack([1.0 - p, p])


def _glm_target(y: Any, family: str, owner: str) -> NDArray[np.float64]:
    """Binomial: 1 for the second of two labels, else 0; gaussian: the values."""
    values = np.asarray(y)
    if values.ndim != 1:
        values = values.reshape(-1) if values.size == len(values) else values
    if values.ndim != 1:
        raise ValueError(
            f"y of {owner} must be 1-d for family={family!r}; got shape "
            f"{np.shape(y)}. A survival outcome (time, event) needs a model "
            f"with family='cox'."
        )
    if family == "binomial":
        classes = np.unique(values)
        if classes.size != 2:
            raise ValueError(
                f"y of {owner} must hold exactly two labels for "
                f"family='binomial'; got {classes.size}: {classes[:5].tolist()}."
            )
        return (values == classes[1]).astype(np.float64)
    out = values.astype(np.float64)
    check_finite(out, "y", fix="drop or impute those rows")
    return out


class _ClinicalCoxnet(BaseEstimator):  # type: ignore[misc]
    """scikit-survival's Coxnet, clinical columns unpenalized, alpha by inner CV.

    The clinical columns (numeric, or dummies of a non-numeric column, the
    strata columns included: Coxnet has no strata) have ``penalty_factor``
    0, the features 1; all are standardized on the training rows. ``alpha`` is
    the one of a 30-point path that maximizes Harrell's C summed over an
    inner ``inner_cv``-fold CV (stratified by event).
    """

    def __init__(
        self,
        clinical: list[Any] | None = None,
        l1_ratio: float = 0.5,
        inner_cv: int = 5,
        random_state: int | None = None,
    ) -> None:
        self.clinical = clinical
        self.l1_ratio = l1_ratio
        self.inner_cv = inner_cv
        self.random_state = random_state

    def on_design(self, covariates: list[Any], strata: list[Any]) -> _ClinicalCoxnet:
        """Return this model on a design: its covariates and strata unpenalized."""
        return self.set_params(clinical=[*covariates, *strata])  # type: ignore[no-any-return]

    def _matrix(self, X: pd.DataFrame) -> NDArray[np.float64]:
        clinical = self.clinical_.transform(X).to_numpy()
        features = X.drop(columns=_as_list(self.clinical)).to_numpy(dtype=np.float64)
        Z = np.column_stack([clinical, features])
        return np.asarray((Z - self.mean_) / self.scale_)

    def fit(self, X: pd.DataFrame, y: NDArray[Any]) -> _ClinicalCoxnet:
        from sksurv.linear_model import CoxnetSurvivalAnalysis
        from sksurv.metrics import concordance_index_censored

        self.clinical_ = _Dummies(self.clinical).fit(X)
        clinical = self.clinical_.transform(X).to_numpy()
        features = X.drop(columns=_as_list(self.clinical)).to_numpy(dtype=np.float64)
        Z = np.column_stack([clinical, features])
        self.mean_ = Z.mean(axis=0)
        scale = Z.std(axis=0)
        self.scale_ = np.where(scale > 0, scale, 1.0)
        Z = (Z - self.mean_) / self.scale_
        self.n_clinical_ = clinical.shape[1]
        penalty = np.r_[np.zeros(self.n_clinical_), np.ones(features.shape[1])]
        kw = {"l1_ratio": self.l1_ratio, "alpha_min_ratio": 0.01}
        alphas = (
            CoxnetSurvivalAnalysis(n_alphas=30, penalty_factor=penalty, **kw)
            .fit(Z, y)
            .alphas_
        )
        scores = np.zeros(alphas.size)
        inner = StratifiedKFold(
            self.inner_cv, shuffle=True, random_state=self.random_state
        )
        for tr, te in inner.split(Z, y["event"]):
            net = CoxnetSurvivalAnalysis(alphas=alphas, penalty_factor=penalty, **kw)
            net.fit(Z[tr], y[tr])
            for j, a in enumerate(alphas):
                risk = net.predict(Z[te], alpha=max(a, net.alphas_[-1]))
                scores[j] += concordance_index_censored(
                    y["event"][te], y["time"][te], risk
                )[0]
        best = int(np.argmax(scores))
        self.net_ = CoxnetSurvivalAnalysis(
            alphas=alphas[: best + 1],
            penalty_factor=penalty,
            fit_baseline_model=True,
            **kw,
        ).fit(Z, y)
        self.alpha_ = float(self.net_.alphas_[-1])
        return self

    @property
    def n_genes_(self) -> int:
        return int(np.count_nonzero(self.net_.coef_[self.n_clinical_ :, -1]))

    def predict(self, X: pd.DataFrame) -> NDArray[np.float64]:
        return np.asarray(self.net_.predict(self._matrix(X), alpha=self.alpha_))

    def predict_survival_function(self, X: pd.DataFrame) -> NDArray[np.object_]:
        return np.asarray(
            self.net_.predict_survival_function(self._matrix(X), alpha=self.alpha_)
        )


class _FormulaDesign(BaseEstimator):  # type: ignore[misc]
    """A clinical model fitted on the design that an estimator's formula builds.

    ``fit`` evaluates ``formula`` (with the estimator's ``covariates`` and
    ``strata`` parameters) on the training rows, exactly as the estimator's
    own ``fit`` does (:func:`vcpcr._formula.resolve_formula`: the categorical
    levels and transforms of the training rows), and fits ``model`` (a
    :class:`ClinicalCox` or ``_ClinicalCoxnet``) on that design with the
    formula's covariates and strata as its clinical columns; predictions
    re-apply the stored encoding to new rows.
    """

    def __init__(
        self,
        model: Any = None,
        formula: str | None = None,
        covariates: Any = None,
        strata: Any = None,
        random_state: int | None = None,
    ) -> None:
        self.model = model
        self.formula = formula
        self.covariates = covariates
        self.strata = strata
        self.random_state = random_state

    def fit(self, X: pd.DataFrame, y: Any) -> _FormulaDesign:
        """Evaluate the formula on the training rows and fit the clinical model.

        ``y`` is the formula's outcome on those rows, as the clinical model
        takes it (the validation reads it from the formula once).
        """
        resolved = resolve_formula(
            self.formula, X, None, missing="raise", owner=_OWNER, strata=self.strata
        )
        covariates, strata = _design_roles(resolved, self.covariates)
        self.spec_ = resolved.spec
        model = clone(self.model)
        if "random_state" in model.get_params(deep=False):
            model.set_params(random_state=self.random_state)
        self.model_ = model.on_design(covariates, strata)
        self.model_.fit(resolved.X.reset_index(drop=True), y)
        return self

    def _fold_strata(self, X: pd.DataFrame) -> pd.DataFrame | None:
        """Return the formula's strata columns of ``X`` (None without strata)."""
        resolved = resolve_formula(
            self.formula, X, None, missing="raise", owner=_OWNER, strata=self.strata
        )
        strata = _design_roles(resolved, self.covariates)[1]
        return resolved.X[strata] if strata else None

    def _design(self, X: pd.DataFrame) -> pd.DataFrame:
        spec = cast(DesignSpec, self.spec_)  # a formula's spec is never None
        return transform_new(spec, X).reset_index(drop=True)

    @property
    def family(self) -> Any:
        """The clinical model's family, if it has one (as a ``ClinicalGLM``)."""
        return getattr(self.model, "family", None)

    @property
    def n_genes_(self) -> float:
        return _n_genes(self.model_, np.empty(0, dtype=np.intp))

    def predict(self, X: pd.DataFrame) -> NDArray[np.float64]:
        return np.asarray(self.model_.predict(self._design(X)))

    def predict_proba(self, X: pd.DataFrame) -> NDArray[np.float64]:
        return np.asarray(self.model_.predict_proba(self._design(X)))

    def predict_log_partial_hazard(self, X: pd.DataFrame) -> NDArray[np.float64]:
        return _linear_predictor(self.model_, self._design(X))

    def predict_survival_function(
        self, X: pd.DataFrame, return_array: bool = True, *, times: ArrayLike
    ) -> Any:
        grid = np.asarray(times, dtype=np.float64)
        return _survival_rows(self.model_, self._design(X), grid)


def _design_roles(resolved: Any, covariates: Any) -> tuple[list[Any], list[Any]]:
    """Return the design columns of a resolved formula's covariates and strata."""
    names = list(resolved.X.columns)
    merged = merge_covariates(covariates, resolved.covariates)
    return (
        as_list(expand_names(merged, resolved.groups, names)),
        as_list(expand_names(resolved.strata, resolved.groups, names)),
    )


class _Dummies:
    """Numeric columns as they are, non-numeric ones as training-level dummies."""

    def __init__(self, columns: Any) -> None:
        self.columns = _as_list(columns)

    def fit(self, X: pd.DataFrame) -> _Dummies:
        self.levels = {
            c: sorted(X[c].astype(str).unique())
            for c in self.columns
            if not pd.api.types.is_numeric_dtype(X[c])
        }
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        """Return the numeric columns and the dummies (``name[level]``)."""
        parts: dict[str, NDArray[np.float64]] = {}
        for c in self.columns:
            if c not in self.levels:
                parts[str(c)] = X[c].to_numpy(dtype=np.float64)
                continue
            codes = X[c].astype(str).to_numpy()
            unseen = sorted(set(codes) - set(self.levels[c]))
            if unseen:
                raise ValueError(
                    f"X has levels {unseen} of the clinical column {c!r} that were "
                    f"not in the training data (levels: {self.levels[c]})."
                )
            for level in self.levels[c][1:]:
                parts[f"{c}[{level}]"] = (codes == level).astype(np.float64)
        return pd.DataFrame(parts, index=pd.RangeIndex(len(X)))


# ------------------------------------------------------------------ per-fold scores
@dataclass(frozen=True)
class _Plan:
    """What every fold scores, decided once on all rows (the stated rules)."""

    horizons: NDArray[np.float64]
    brier_range: tuple[float, float]
    tau_quantile: float
    strata: NDArray[Any] | None
    features: NDArray[np.intp]
    family: str = "cox"
    target: NDArray[np.float64] | None = None  # binomial 0/1, gaussian values


#: The metrics of a binomial and a gaussian outcome (cox: :func:`_metric_names`).
_GLM_METRICS = {"binomial": ["AUC", "Brier"], "gaussian": ["R2", "RMSE"]}
#: The clinical-only model's name per family, in the result's tables.
CLINICAL_NAMES = {
    "cox": "clinical Cox",
    "binomial": "clinical logistic",
    "gaussian": "clinical linear",
}


def _metric_names(
    horizons: NDArray[np.float64], likelihood: str = "CVPL", family: str = "cox"
) -> list[str]:
    """Return the metrics' names; ``likelihood`` names the partial likelihood."""
    if family != "cox":
        return list(_GLM_METRICS[family])
    aucs = [f"AUC(t={h:.4g})" for h in horizons]
    return ["Harrell C", "Uno C", *aucs, "IBS", "IPA", likelihood]


#: Metrics for which lower is better (the others: higher).
_LOWER_BETTER = frozenset({"IBS", "Brier", "RMSE"})
#: The increment tables' status of a model that used no feature (no interval).
_NO_GENE = ("no gene in any fold", "no gene")


def _survival_rows(model: Any, X: pd.DataFrame, times: NDArray[np.float64]) -> Any:
    """Survival probabilities of the rows of ``X`` at ``times``, or None."""
    predict = getattr(model, "predict_survival_function", None)
    if predict is None:
        return None
    if "times" in inspect.signature(predict).parameters:
        return np.asarray(predict(X, return_array=True, times=times))
    return np.vstack([f(times) for f in predict(X)])


def _linear_predictor(model: Any, X: pd.DataFrame) -> NDArray[np.float64]:
    """Return the log partial hazard if the model has one, else its risk score."""
    predict = getattr(model, "predict_log_partial_hazard", model.predict)
    return np.asarray(predict(X), dtype=np.float64).reshape(-1)


def _n_genes(model: Any, features: NDArray[np.intp]) -> float:
    """Features the model uses (NaN when it does not say).

    A VCPCR's selected features (``labels_ != -1``), otherwise the features
    with a non-zero coefficient.
    """
    if hasattr(model, "n_genes_"):
        return float(model.n_genes_)
    if isinstance(model, ClinicalCox | ClinicalGLM):
        return 0.0
    fitted = getattr(model, "best_estimator_", model)
    labels = getattr(fitted, "labels_", None)
    if labels is not None:  # a VCPCR: its selected (clustered) features
        return float(np.count_nonzero(np.asarray(labels) != -1))
    coef = getattr(fitted, "coef_", None)
    if coef is None:
        return float("nan")
    coef = np.asarray(coef).reshape(-1)
    n_features = getattr(fitted, "n_features_in_", coef.size)
    if coef.size != n_features:
        return float("nan")
    return float(np.count_nonzero(coef[features]))


def _follow_up(y_train: NDArray[Any], y_test: NDArray[Any]) -> NDArray[Any]:
    """Test rows after the last training time, censored there (IPCW is unknown)."""
    from sksurv.util import Surv

    end = y_train["time"].max()
    beyond = y_test["time"] > end
    return Surv.from_arrays(
        y_test["event"] & ~beyond, np.where(beyond, end, y_test["time"])
    )


def _brier_grid(
    plan: _Plan, y_train: NDArray[Any], y_test: NDArray[Any]
) -> NDArray[np.float64]:
    """Test event times within ``plan.brier_range`` and the follow-up of both parts."""
    lo, hi = plan.brier_range
    end = min(y_train["time"].max(), y_test["time"].max())
    t = np.unique(y_test["time"][y_test["event"]])
    return t[(t >= lo) & (t <= hi) & (t >= y_test["time"].min()) & (t < end)]


def _discrimination(
    risk: NDArray[np.float64], plan: _Plan, y_train: NDArray[Any], y_test: NDArray[Any]
) -> dict[str, float]:
    """Harrell's C, Uno's C (tau: the training event times' quantile) and the AUCs.

    A metric the test fold cannot define is NaN, the others stand: Harrell's
    C without an event or a comparable pair, Uno's C without an event before tau (a
    fold whose events all come late), an AUC whose horizon is outside the
    fold's follow-up or before its first event. Which folds define a
    metric depends on the outcome, so no fold is dropped for one of them.
    """
    from sksurv.exceptions import NoComparablePairException
    from sksurv.metrics import (
        concordance_index_censored,
        concordance_index_ipcw,
        cumulative_dynamic_auc,
    )

    out: dict[str, float] = {"Harrell C": np.nan}
    if y_test["event"].any():  # else "All samples are censored"
        try:
            out["Harrell C"] = float(
                concordance_index_censored(y_test["event"], y_test["time"], risk)[0]
            )
        except NoComparablePairException:
            pass
    tau = float(np.quantile(y_train["time"][y_train["event"]], plan.tau_quantile))
    test = _follow_up(y_train, y_test)
    early = test["event"] & (test["time"] < tau)
    out["Uno C"] = (
        float(concordance_index_ipcw(y_train, test, risk, tau=tau)[0])
        if early.any()
        else np.nan
    )
    lo, hi = test["time"].min(), test["time"].max()
    for h, name in zip(plan.horizons, _metric_names(plan.horizons)[2:], strict=False):
        usable = lo <= h < hi and np.any(test["event"] & (test["time"] <= h))
        out[name] = (
            float(cumulative_dynamic_auc(y_train, test, risk, [h])[0][0])
            if usable
            else np.nan
        )
    return out


def _calibration(
    surv: Any, plan: _Plan, y_train: NDArray[Any], y_test: NDArray[Any]
) -> dict[str, float]:
    """IBS on the fold's grid, and IPA against the training Kaplan-Meier curve."""
    from sksurv.metrics import integrated_brier_score
    from sksurv.nonparametric import kaplan_meier_estimator

    times = _brier_grid(plan, y_train, y_test)
    if surv is None or times.size < 2:
        return {"IBS": np.nan, "IPA": np.nan}
    y_test = _follow_up(y_train, y_test)
    ibs = integrated_brier_score(y_train, y_test, surv(times), times)
    km_t, km_s = kaplan_meier_estimator(y_train["event"], y_train["time"])
    i = np.searchsorted(km_t, times, side="right") - 1
    km = np.where(i >= 0, km_s[np.clip(i, 0, None)], 1.0)
    ref = integrated_brier_score(y_train, y_test, np.tile(km, (len(y_test), 1)), times)
    return {"IBS": float(ibs), "IPA": float(1.0 - ibs / ref)}


def _log_partial_likelihood(
    eta: NDArray[np.float64], y: NDArray[Any], strata: NDArray[Any] | None
) -> float:
    """Log partial likelihood of a fixed linear predictor (Efron ties, strata)."""
    return float(efron_loglik(eta[None, :], y["time"], y["event"], strata)[0])


def _cvpl(
    eta: NDArray[np.float64], y: NDArray[Any], train: NDArray[np.intp], plan: _Plan
) -> float:
    """Verweij & van Houwelingen's fold contribution ``l(b_-k) - l_-k(b_-k)``."""
    strata = plan.strata
    full = _log_partial_likelihood(eta, y, strata)
    part = _log_partial_likelihood(
        eta[train], y[train], None if strata is None else strata[train]
    )
    return full - part


def _test_scores(
    risk: NDArray[np.float64],
    surv: Any,
    plan: _Plan,
    y_train: NDArray[Any],
    y_test: NDArray[Any],
) -> dict[str, float]:
    """Every metric but the partial likelihood, of test predictions.

    ``risk`` is the test rows' risk score, ``surv(times)`` their survival
    probabilities at ``times`` (or None); ``y_train`` gives tau, the
    censoring distribution (IPCW) and the Kaplan-Meier reference. The one
    implementation both the CV folds and an external cohort use.
    """
    out = _discrimination(risk, plan, y_train, y_test)
    out.update(_calibration(surv, plan, y_train, y_test))
    return out


def _score_model(
    model: Any,
    X: pd.DataFrame,
    y: NDArray[Any],
    train: NDArray[np.intp],
    test: NDArray[np.intp],
    plan: _Plan,
) -> dict[str, float]:
    """Every metric of a model fitted on ``train``, on ``test`` (CVPL: all rows)."""
    if plan.family != "cox":
        return _score_glm(model, X.iloc[test], test, plan)
    X_test = X.iloc[test]
    eta = _linear_predictor(model, X)

    def surv(times: NDArray[np.float64]) -> Any:
        return _survival_rows(model, X_test, times)

    has_surv = hasattr(model, "predict_survival_function")
    out = _test_scores(eta[test], surv if has_surv else None, plan, y[train], y[test])
    out["CVPL"] = _cvpl(eta, y, train, plan)
    out["n_genes"] = _n_genes(model, plan.features)
    return out


def _score_glm(
    model: Any, X_test: pd.DataFrame, test: NDArray[np.intp], plan: _Plan
) -> dict[str, float]:
    """AUC and Brier score (binomial), R2 and RMSE (gaussian) on the test fold.

    scikit-learn's ``roc_auc_score``, ``brier_score_loss``, ``r2_score`` and
    ``root_mean_squared_error`` of the fold's predictions.
    """
    from sklearn import metrics

    y = np.asarray(plan.target)[test]  # set for every non-cox plan
    if plan.family == "binomial":
        p = np.asarray(model.predict_proba(X_test), dtype=np.float64)[:, 1]
        out = {
            "AUC": float(metrics.roc_auc_score(y, p)),
            "Brier": float(metrics.brier_score_loss(y, p)),
        }
    else:
        pred = np.asarray(model.predict(X_test), dtype=np.float64).reshape(-1)
        out = {
            "R2": float(metrics.r2_score(y, pred)),
            "RMSE": float(metrics.root_mean_squared_error(y, pred)),
        }
    out["n_genes"] = _n_genes(model, plan.features)
    return out


def _with_seed(model: Any, seed: int) -> Any:
    """Return a clone of ``model`` with ``random_state=seed`` if it has one."""
    model = clone(model)
    if "random_state" in model.get_params(deep=False):
        model.set_params(random_state=seed)
    return model


def _fit(model: Any, X: pd.DataFrame, y: NDArray[Any]) -> Any:
    """Fit ``model`` on ``X`` and ``y``; an estimator with a formula on ``X``.

    Its formula names the outcome, which it reads from ``X``.
    """
    has_formula = model.get_params(deep=False).get("formula") is not None
    if has_formula and not isinstance(model, _FormulaDesign):
        return model.fit(X)
    return model.fit(X, y)


def _fold_task(
    models: dict[str, Any],
    X: pd.DataFrame,
    y: NDArray[Any],
    train: NDArray[np.intp],
    test: NDArray[np.intp],
    plan: _Plan,
    seed: int,
) -> dict[str, dict[str, Any]]:
    """Fit every model on ``train`` and score it; a model's failure is recorded."""
    out: dict[str, dict[str, Any]] = {}
    for name, template in models.items():
        try:
            model = _fit(_with_seed(template, seed), X.iloc[train], y[train])
            out[name] = _score_model(model, X, y, train, test, plan)
        except (
            ValueError
        ) as exc:  # a fold the model refuses (e.g. a level without events)
            out[name] = {"error": str(exc)}
    return out


# ------------------------------------------------------------------ intervals
def increment_interval(
    d: ArrayLike,
    *,
    n_train: float,
    n_test: float,
    method: str = "one_fold",
    alpha: float = 0.05,
) -> tuple[float, float, float, float]:
    r"""Compute the se, interval and one-sided p-value of a mean increment.

    Parameters
    ----------
    d : array-like of shape (n_folds,)
        The paired per-fold increments of all repeats (NaN, an undefined
        metric, ignored; an infinite one is an error).
    n_train, n_test : float
        Rows in a training and in a test fold.
    method : {"one_fold", "corrected_t", "naive"}, default="one_fold"
        ``"one_fold"``: :math:`s^2 (1 + 1/J)`, the mean taken as uncertain
        as one fold's increment (the mean of exchangeable folds varies no
        more than one fold; :math:`s^2` misses the variation between data
        sets, so this is no proof: in ``benchmarks/bench_validation.py`` it
        covered in every cell, conservatively); ``"corrected_t"``: Nadeau
        & Bengio's :math:`s^2 (1/J + n_{test}/n_{train})`, half as wide (in
        the simulation its one-sided test held, its two-sided coverage was
        0.925 in one cell); ``"naive"``: :math:`s^2 / J`, which ignores
        that the folds share training rows (for comparison only: it
        under-covers).
    alpha : float, default=0.05
        One minus the interval's level.

    Returns
    -------
    se, low, high, p : float
        Standard error, interval ``mean -/+ t_{J-1, 1-alpha/2} se`` and the
        one-sided p-value of ``H0: increment <= 0`` (``1 - F_t(mean / se)``);
        all NaN, with a :class:`~vcpcr.exceptions.VCPCRWarning`, with fewer
        than two finite increments (a spread needs two); with increments equal up to
        rounding, se is 0, the interval the mean and ``p`` NaN (no spread
        to test: ``mean / se`` would be a ratio of rounding errors).

    Raises
    ------
    ValueError
        If ``d`` is empty, not 1-d or holds an infinite increment, ``method`` is
        unknown, ``n_train`` or ``n_test`` is not a positive number or
        ``alpha`` not in (0, 1).

    Examples
    --------
    >>> from vcpcr.validation import increment_interval
    >>> se, lo, hi, p = increment_interval([0.01, 0.03, 0.02, 0.0], n_train=80,
    ...                                    n_test=20, method="naive")
    >>> round(se, 5), round(p, 4)
    (0.00645, 0.0514)
    """
    owner = "increment_interval"
    check_choice(method, "method", ("one_fold", "corrected_t", "naive"), owner=owner)
    for name, value in (("n_train", n_train), ("n_test", n_test)):
        check_scalar(
            value, name, numbers.Real, owner=owner, min_val=0.0, include_min=False
        )
    check_fraction(alpha, "alpha", owner=owner)
    values = np.asarray(d, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(
            f"d must be a 1-d array of per-fold increments; got shape {values.shape}."
        )
    if values.size == 0:
        raise ValueError(
            "d is empty: no increment to summarize. Pass the per-fold "
            "increments (e.g. validate_increment's result.folds)."
        )
    result = _increment_interval(values, n_train, n_test, method, alpha)
    finite = int((~np.isnan(values)).sum())
    if finite < 2:
        warnings.warn(
            f"{owner}: {finite} of the {values.size} increment(s) in d are not "
            f"NaN; a standard error needs at least 2, so se, the interval and "
            f"p are NaN.",
            VCPCRWarning,
            stacklevel=user_stacklevel(),
        )
    return result


def _increment_interval(
    values: NDArray[np.float64],
    n_train: float,
    n_test: float,
    method: str,
    alpha: float,
) -> tuple[float, float, float, float]:
    """:func:`increment_interval` of checked arguments; NaN (silently) below 2.

    ``validate_increment`` reports a model with fewer than two folds itself.
    """
    values = values[~np.isnan(values)]
    check_finite(
        values,
        "d",
        fix="an increment is a difference of finite metrics: fix or "
        "drop the folds that gave them",
    )
    J = values.size
    if J < 2:
        return (np.nan,) * 4
    s = float(np.std(values, ddof=1))
    factor = {
        "one_fold": 1.0 + 1.0 / J,
        "corrected_t": 1.0 / J + n_test / n_train,
        "naive": 1.0 / J,
    }[method]
    se = s * np.sqrt(factor)
    mean = float(values.mean())
    if constant_columns(values[:, None]).size:
        # equal up to rounding: se is rounding error (2e-17), and mean / se
        # any number; no spread, no test
        return 0.0, mean, mean, np.nan
    q = stats.t.ppf(1 - alpha / 2, J - 1)
    p = float(stats.t.sf(mean / se, J - 1))
    return float(se), float(mean - q * se), float(mean + q * se), p


# ------------------------------------------------------------------ the result
@dataclass(frozen=True, eq=False, repr=False)
class IncrementResult(Result):
    """Paired cross-validated increments of models over the clinical model.

    Built by :func:`validate_increment`; plain attributes, nothing
    recomputed on access.

    Attributes
    ----------
    folds : pandas.DataFrame
        One row per repeat, fold and model: every metric, ``n_genes`` (features
        the fit uses: a VCPCR's selected features, otherwise those with a
        non-zero coefficient; NaN when the model does not say) and
        ``error`` (why a model failed on the fold, else None).
    metrics : pandas.DataFrame
        Per model and metric: the mean over the folds, its standard
        deviation, the number of folds scored, and the mean's ``se`` and
        interval (``ci_low``, ``ci_high``) by the increments' method
        (:func:`increment_interval` of the per-fold values, cut to [0, 1]
        for the C's, AUCs and IBS, which lie there; the summary prints
        those of Harrell's and Uno's C).
    fold_increments : pandas.DataFrame
        Per repeat and fold, each model's increment over the clinical model
        (model minus clinical) for every metric.
    increments : pandas.DataFrame
        Per model and metric: the mean increment, ``se``, the interval
        (``ci_low``, ``ci_high``), the one-sided p-value (of no improvement:
        an increment ``<= 0``, or ``>= 0`` for IBS), the number of folds and
        ``status`` (``"no gene in any fold"`` when the model chose no feature
        in every fold: then its increment is 0 by construction and no
        interval or p-value is given).
    horizons : ndarray
        The time-dependent AUC's horizons.
    brier_range : tuple of float
        The range of the IBS time grid.
    tau_quantile : float
        Uno's C's tau, as a quantile of each training fold's event times.
    interval, alpha : str, float
        The interval method (:func:`increment_interval`) and level.
    n_splits, n_repeats, n_samples, n_events : int
        The design (``n_events``: events, or the rows with the second
        label for a binomial outcome; None for a gaussian one).
    covariates, strata : list
        The clinical columns.
    splits : list of (ndarray, ndarray)
        The training and test rows (positions) of each fold, repeat by
        repeat, as in ``folds``.
    notes : list of str
        What the summary's notes say.
    complete : bool
        False when an interrupt stopped the run: every table is over the
        folds that finished (``splits`` says which).
    family : str
        ``"cox"``, ``"binomial"`` or ``"gaussian"``: which metrics were
        scored.
    clinical : str
        The clinical-only model's name in the tables (``"clinical Cox"``,
        ``"clinical logistic"``, ``"clinical linear"``).
    """

    folds: pd.DataFrame
    metrics: pd.DataFrame
    fold_increments: pd.DataFrame
    increments: pd.DataFrame
    horizons: NDArray[np.float64]
    brier_range: tuple[float, float]
    tau_quantile: float
    interval: str
    alpha: float
    n_splits: int
    n_repeats: int
    n_samples: int
    n_events: int | None
    covariates: list[Any]
    strata: list[Any]
    splits: list[tuple[NDArray[np.intp], NDArray[np.intp]]]
    notes: list[str] = field(default_factory=list, repr=False)
    complete: bool = True
    family: str = "cox"
    clinical: str = CLINICAL

    def increments_with(
        self, interval: str | None = None, alpha: float | None = None
    ) -> IncrementResult:
        """Return this result with the intervals of another method or level.

        The folds are not run again: the per-fold increments are the same,
        only ``increments`` (its ``se``, interval, p-value), the intervals
        of ``metrics``, ``interval``, ``alpha`` and the notes change, as if
        :func:`validate_increment` had been called with these arguments.

        Parameters
        ----------
        interval : {"one_fold", "corrected_t", "naive"}, optional
            The interval method (:func:`increment_interval`); default: this
            result's.
        alpha : float, optional
            One minus the intervals' level; default: this result's.

        Returns
        -------
        IncrementResult
            A new result.

        Raises
        ------
        ValueError
            If ``interval`` is unknown or ``alpha`` not in (0, 1).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from vcpcr.validation import ClinicalCox, validate_increment
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame(rng.normal(size=(80, 2)), columns=["age", "g1"])
        >>> y = np.column_stack([rng.exponential(size=80), rng.random(80) < 0.8])
        >>> res = validate_increment(ClinicalCox(covariates=["age", "g1"]), X, y,
        ...                          covariates=["age"], cv=3, n_repeats=2,
        ...                          random_state=0)
        >>> res.increments_with(interval="corrected_t").interval
        'corrected_t'
        """
        owner = "IncrementResult.increments_with"
        interval = self.interval if interval is None else interval
        alpha = self.alpha if alpha is None else alpha
        check_choice(interval, "interval", INTERVALS, owner=owner)
        check_fraction(alpha, "alpha", owner=owner)
        names = _metric_names(self.horizons, family=self.family)
        metrics, _, increments = _increments(
            self.folds, names, self.splits, interval, float(alpha), self.clinical
        )
        old = _target_note(self.interval, self.clinical)
        notes = [
            _target_note(interval, self.clinical) if note == old else note
            for note in self.notes
        ]
        return replace(
            self,
            metrics=metrics,
            increments=increments,
            interval=interval,
            alpha=float(alpha),
            notes=notes,
        )

    def summary(self) -> VCPCRSummary:
        """Summary: each model's mean metrics and its increments over the clinic.

        Returns
        -------
        VCPCRSummary
            A statsmodels ``Summary``: print it, or call ``as_text()``,
            ``as_html()`` or ``as_latex()``.
        """
        right = [
            ("CV:", f"{self.n_splits}-fold x {self.n_repeats}"),
            ("Folds:", str(len(self.splits))),
            ("Interval:", f"{1 - self.alpha:.0%}, {self.interval}"),
            ("Test:", "one-sided, H0: no gain"),
        ]
        return _increment_summary(
            "Increment over the clinical model (cross-validated)",
            self,
            right,
            _metrics_table(self.metrics["mean"], "Mean over the test folds"),
            _concordance_table(self.metrics, self.interval, self.alpha),
        )

    def plot(self, axes: Any = None) -> Any:
        """Plot each fold's increment per metric, with the mean and interval.

        See :func:`vcpcr.plotting.plot_increments`.

        Parameters
        ----------
        axes : array of matplotlib.axes.Axes, optional
            One axes per metric (a new figure otherwise).

        Returns
        -------
        ndarray of matplotlib.axes.Axes
            The axes.
        """
        from vcpcr.plotting import plot_increments

        return plot_increments(self, axes=axes)


def _increment_summary(
    title: str,
    result: Any,
    right: list[tuple[str, str]],
    metrics: Any,
    *extra: Any,
) -> VCPCRSummary:
    """Build the increments' summary: header, metrics, a table per model, notes.

    ``result`` is an ``IncrementResult`` or an ``ExternalIncrementResult``:
    the left column (its cohort and clinical columns), its increments, level
    and notes; ``right`` says how it was resampled; ``extra`` tables follow
    the metrics.
    """
    left = [
        ("No. Observations:", str(result.n_samples)),
        ("No. Events:", "-" if result.n_events is None else str(result.n_events)),
        ("Clinical covariates:", ", ".join(map(str, result.covariates)) or "none"),
        ("Strata:", ", ".join(map(str, result.strata)) or "none"),
    ]
    increments, alpha = result.increments, result.alpha
    smry = VCPCRSummary()
    smry.add_table_2cols(
        None,
        title=title,
        gleft=[(k, [v]) for k, v in left],
        gright=[(k, [v]) for k, v in right],
        yname=getattr(result, "family", "survival"),
        xname=[],
    )
    smry.tables.extend([metrics, *(t for t in extra if t is not None)])
    for model in increments.index.get_level_values(0).unique():
        smry.tables.append(
            _increment_table(
                increments.loc[model],
                model,
                alpha,
                getattr(result, "clinical", CLINICAL),
            )
        )
    smry.add_extra_txt(numbered_notes(result.notes))
    return smry


def _metrics_table(values: pd.Series, title: str) -> Any:
    """Tabulate ``values``, indexed by (model, metric), as metric x model."""
    from statsmodels.iolib.table import SimpleTable

    order = list(dict.fromkeys(values.index.get_level_values(1)))
    means = values.unstack(0).reindex(order)
    models = list(values.index.get_level_values(0).unique())
    return SimpleTable(
        [[_num(means.loc[m, k]) for k in models] for m in means.index],
        headers=models,
        stubs=list(means.index),
        title=title,
        txt_fmt={"colsep": "  "},
    )


#: The metrics whose mean over the folds the summary prints with its interval:
#: the C's (a binary outcome's is its AUC).
_CONCORDANCES = ("Harrell C", "Uno C", "AUC")


def _concordance_table(metrics: pd.DataFrame, interval: str, alpha: float) -> Any:
    """Each model's mean C's over the folds with their intervals (None: no C)."""
    from statsmodels.iolib.table import SimpleTable

    shown = [c for c in _CONCORDANCES if c in metrics.index.get_level_values(1)]
    if not shown:
        return None
    models = list(metrics.index.get_level_values(0).unique())
    lo, hi = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
    rows = [
        [
            _num(metrics.loc[(model, c), key])
            for c in shown
            for key in ("mean", "ci_low", "ci_high")
        ]
        for model in models
    ]
    return SimpleTable(
        rows,
        headers=[h for c in shown for h in (c, lo, hi)],
        stubs=models,
        title=f"Mean C over the test folds ({1 - alpha:.0%} interval, {interval})",
        txt_fmt={"colsep": "  "},
    )


def _increment_table(
    frame: pd.DataFrame, model: str, alpha: float, clinical: str = CLINICAL
) -> Any:
    """One model's increments (rows: metrics) as a statsmodels table."""
    from statsmodels.iolib.table import SimpleTable

    rows = []
    for _, r in frame.iterrows():
        if r["status"] in _NO_GENE:
            rows.append([_num(r["increment"]), "", "", "", "", r["status"]])
            continue
        rows.append(
            [
                _num(r["increment"]),
                _num(r["se"]),
                _num(r["ci_low"]),
                _num(r["ci_high"]),
                _pval(r["p"]),
                r["status"],
            ]
        )
    lo, hi = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
    return SimpleTable(
        rows,
        headers=["increment", "se", lo, hi, "P(no gain)", "note"],
        stubs=list(frame.index),
        title=f"{model} minus {clinical}",
        txt_fmt={"colsep": "  "},
    )


def _num(value: Any) -> str:
    return "" if not np.isfinite(value) else f"{value:.4f}"


def _pval(value: Any) -> str:
    if not np.isfinite(value):
        return ""
    return "<0.001" if value < 0.001 else f"{value:.3f}"


# ------------------------------------------------------------------ the entry point
@dataclass(frozen=True)
class _Clinical:
    """The clinical model of a validation: its columns, names and fitting route.

    ``covariates`` and ``strata`` are the names the results show (data
    columns; a formula's term that is not one, as its text), ``columns``
    the data columns it reads (checked for presence and missing values).
    With ``formula`` (the estimator's, whose clinical part it is: the
    covariates left of ``|`` and the strata), the models are fitted on the
    design the formula builds on their training rows (:class:`_FormulaDesign`);
    ``params`` holds the estimator's ``covariates`` and ``strata``, and
    ``outcome`` the formula's outcome on the rows it was resolved on.
    """

    covariates: list[Any]
    strata: list[Any]
    columns: list[Any]
    formula: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    outcome: Any = None

    def model(self, template: Any) -> Any:
        """``template`` (ClinicalCox or _ClinicalCoxnet) on these clinical columns."""
        if self.formula is None:
            return template.on_design(self.covariates, self.strata)
        return _FormulaDesign(template, self.formula, **self.params)


def _clinical(
    estimator: Any, X: Any, covariates: Any, strata: Any, owner: str = _OWNER
) -> _Clinical:
    """Return the clinical model: the arguments, else the estimator's columns.

    An estimator with a formula states it in the formula (covariates left
    of ``|``, ``strata()`` terms or its ``strata=``), evaluated on ``X``.
    """
    params = (
        estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    )
    formula = params.get("formula")
    if formula is not None:
        return _formula_clinical(formula, params, X, covariates, strata, owner)
    cov = _as_list(covariates if covariates is not None else params.get("covariates"))
    stra = _as_list(strata if strata is not None else params.get("strata"))
    if not cov and not stra:
        raise ValueError(
            f"{owner} needs the clinical columns: pass covariates=['age', ...] "
            f"(and strata=), or an estimator with covariates=. Got neither."
        )
    return _Clinical(cov, stra, [*cov, *stra])


def _formula_clinical(
    formula: str,
    params: dict[str, Any],
    X: Any,
    covariates: Any,
    strata: Any,
    owner: str,
) -> _Clinical:
    """Return the clinical part of an estimator's formula (see :func:`_clinical`)."""
    if covariates is not None or strata is not None:
        raise ValueError(
            f"The estimator's formula {formula!r} states the clinical model (the "
            f"covariates left of '|', the strata); got covariates={covariates!r} "
            f"and strata={strata!r} of {owner} too. Name the clinical columns in "
            f"one place: in the formula (or the estimator's strata=)."
        )
    if not isinstance(X, pd.DataFrame):
        raise TypeError(
            f"The estimator has a formula, which reads its columns by name: X "
            f"must be a pandas DataFrame. Got {type(X).__name__}."
        )
    own = {"covariates": params.get("covariates"), "strata": params.get("strata")}
    resolved = resolve_formula(
        formula, X, None, missing="raise", owner=owner, strata=own["strata"]
    )
    cov, stra = _design_roles(resolved, own["covariates"])
    if not cov and not stra:
        raise ValueError(
            f"The estimator's formula {formula!r} has no clinical part, so {owner} "
            f"has no clinical model to compare it with: write the clinical "
            f"covariates left of '|' (e.g. 'Surv(time, event) ~ age + C(stage) "
            f"| .'), add strata(center) terms, or give the estimator strata=."
        )
    shown, shown_strata = (
        term_sources(resolved.spec, cov),
        term_sources(resolved.spec, stra),
    )
    parts = resolved.spec.parts if resolved.spec is not None else ()
    read = [*(parts[0].columns if parts else ()), *shown, *shown_strata]
    columns = [c for c in dict.fromkeys(read) if c in X.columns]
    return _Clinical(shown, shown_strata, columns, formula, own, resolved.y)


def _outcome(clinical: _Clinical, y: Any, name: str = "y") -> Any:
    """Return ``y``, or with a formula (and no ``y``) the formula's outcome."""
    if clinical.formula is None:
        if y is None:
            raise ValueError(
                f"{name} is required (or an estimator with formula=, whose data "
                f"hold the outcome)."
            )
        return y
    if y is not None:
        raise ValueError(
            f"The estimator's formula {clinical.formula!r} names the outcome, "
            f"which it reads from the data: pass no {name} (one DataFrame "
            f"holding every column, as to the estimator's fit)."
        )
    return clinical.outcome


def _check_frame(
    X: Any, y: Any, columns: list[Any], owner: str = _OWNER, name: str = "X"
) -> pd.DataFrame:
    """``X`` as a DataFrame holding the clinical columns, none missing.

    Its rows are checked against ``y``'s first (the index is then dropped:
    the rows of both are paired by position).
    """
    check_same_rows(X, y, (name, name.replace("X", "y", 1)))
    if not isinstance(X, pd.DataFrame):
        values = np.asarray(X)
        if values.ndim != 2:
            raise dimension_error(name, values.shape)
        X = pd.DataFrame(values)
    check_column_names(X)  # a MultiIndex's tuples are no clinical column names
    unknown = [c for c in columns if c not in X.columns]
    if unknown:
        raise ValueError(
            f"{name} has no columns {unknown}; the clinical columns must be column "
            f"names of a DataFrame (or positions of an array). {name} has "
            f"{list(X.columns[:5])}{' ...' if X.shape[1] > 5 else ''}."
        )
    missing = [c for c in columns if X[c].isna().any()]
    if missing:
        counts = {c: int(X[c].isna().sum()) for c in missing}
        raise ValueError(
            f"The clinical columns of {name} contain missing values {counts}; drop or "
            f"impute those rows before calling {owner} (the clinical model and "
            f"the estimator must see the same rows)."
        )
    return X.reset_index(drop=True)


def _clinical_family(estimator: Any) -> str:
    """Return the family of the clinical-only model ``estimator`` is compared with.

    Asked of the estimator's family, not its name: ``"cox"`` (a
    :class:`ClinicalCox`) for a survival family or an estimator without a
    ``family`` (a survival estimator), else the :class:`ClinicalGLM` family
    of its outcome, ``"binomial"`` for a classifier, ``"gaussian"`` for a
    regressor.
    """
    family = getattr(estimator, "family", "cox")
    known = known_family(family)
    if known is None:
        raise ValueError(
            f"The 'estimator' parameter of {_OWNER} must have family 'cox', "
            f"'binomial' or 'gaussian' (or a vcpcr._families.Family object); got "
            f"family={family_name(family)!r}."
        )
    if known.survival:
        return "cox"
    return "binomial" if known.estimator_type == "classifier" else "gaussian"


def _check_design(
    estimator: Any,
    cv: Any,
    n_repeats: Any,
    interval: str,
    alpha: float,
    tau_quantile: float,
) -> str:
    """Check the parameters; return the clinical model's family."""
    if not (hasattr(estimator, "fit") and hasattr(estimator, "predict")):
        raise TypeError(
            f"The 'estimator' parameter of {_OWNER} must be a scikit-learn "
            f"survival estimator with fit and predict (a risk score). Got "
            f"{type(estimator).__name__} instead."
        )
    family = _clinical_family(estimator)
    check_scalar(cv, "cv", numbers.Integral, owner=_OWNER, min_val=2)
    check_scalar(n_repeats, "n_repeats", numbers.Integral, owner=_OWNER, min_val=1)
    check_choice(interval, "interval", INTERVALS, owner=_OWNER)
    check_fraction(alpha, "alpha", owner=_OWNER)
    check_fraction(tau_quantile, "tau_quantile", owner=_OWNER)
    return family


def _setup(
    family: str,
    X: pd.DataFrame,
    y: Any,
    clinical: _Clinical,
    tau_quantile: float,
    coxnet: bool,
) -> tuple[NDArray[Any], _Plan, Any, NDArray[Any] | None]:
    """Return the outcome as the folds use it, the plan, the clinical model, labels.

    Cox: the structured survival array, stratified folds on the event;
    binomial: the labels, stratified folds on them; gaussian: the values,
    plain folds (labels None).
    """
    if family == "cox":
        from sksurv.util import Surv

        time, event = check_survival(y)
        if len(time) != len(X):
            raise ValueError(f"X has {len(X)} rows but y has {len(time)}.")
        ys = Surv.from_arrays(event, time)
        plan = _plan(X, ys, clinical.columns, clinical.strata, tau_quantile)
        return ys, plan, clinical.model(ClinicalCox()), event
    for name, value in (("strata", clinical.strata), ("coxnet", coxnet)):
        if value:
            raise ValueError(
                f"The {name!r} parameter of {_OWNER} applies to family='cox' "
                f"only. Got {name}={value!r} with family={family!r}; drop it."
            )
    target = _glm_target(y, family, _OWNER)
    columns = set(clinical.columns)
    features = np.array(
        [j for j, c in enumerate(X.columns) if c not in columns], dtype=np.intp
    )
    plan = _Plan(np.empty(0), (np.nan, np.nan), np.nan, None, features, family, target)
    values = np.asarray(y).reshape(-1)
    return (
        values,
        plan,
        clinical.model(ClinicalGLM(family=family)),
        values if family == "binomial" else None,
    )


def _plan(
    X: pd.DataFrame,
    y: NDArray[Any],
    covariates: list[Any],
    strata: list[Any],
    tau_quantile: float,
) -> _Plan:
    events = y["time"][y["event"]]
    horizons = np.unique(np.quantile(events, [0.25, 0.5, 0.75]))
    labels = None
    if strata:
        labels = X[strata].astype(str).agg("|".join, axis=1).to_numpy()
    clinical = set(covariates) | set(strata)
    features = np.array(
        [j for j, c in enumerate(X.columns) if c not in clinical], dtype=np.intp
    )
    lo, hi = np.quantile(events, [0.1, 0.8])
    return _Plan(horizons, (float(lo), float(hi)), tau_quantile, labels, features)


def validate_increment(
    estimator: Any,
    X: Any,
    y: Any = None,
    *,
    covariates: str | int | list[Any] | None = None,
    strata: str | int | list[Any] | None = None,
    cv: int = 5,
    n_repeats: int = 5,
    coxnet: bool = False,
    interval: str = "one_fold",
    alpha: float = 0.05,
    tau_quantile: float = 0.8,
    n_jobs: int | None = None,
    verbose: bool | int | None = None,
    random_state: Any = None,
    checkpoint: Any = None,
) -> IncrementResult:
    r"""Validate what a model adds to the clinical model, in CV.

    Repeated ``cv``-fold CV, stratified by event (cox) or class (binomial),
    the folds drawn once: in each training fold, the clinical-only model
    (:class:`ClinicalCox`: lifelines, the same covariates and strata; for a
    binomial or gaussian estimator :class:`ClinicalGLM`, a logistic or
    linear regression on the same covariates), a clone of ``estimator``
    (fitted by its own ``fit``: a ``VCPCRCV`` re-tunes inside the training
    fold, nested, never on all rows) and, with ``coxnet=True``, a Coxnet with
    unpenalized clinical columns are fitted and scored on the test fold.

    Parameters
    ----------
    estimator : estimator
        Unfitted; ``VCPCR(family="cox")``, ``VCPCRCV(family="cox")`` or any
        scikit-learn-compatible survival estimator whose ``predict`` is a
        risk score (higher: earlier events); or a ``VCPCR`` / ``VCPCRCV``
        with ``family="binomial"`` (scored by ``predict_proba``) or
        ``"gaussian"`` (by ``predict``). Fitted on all columns of ``X``.
        With a ``formula``, the formula's clinical part is the clinical
        model (see Notes) and ``fit`` gets ``X`` alone.
    X : DataFrame of shape (n_samples, n_features)
        Features and clinical columns (an array: the clinical columns are
        positions). No missing value in the clinical columns. For an
        estimator with a formula, the DataFrame its ``fit`` takes (the
        outcome's columns too).
    y : array-like of shape (n_samples, 2), structured array, or (n_samples,), optional
        ``(time, event)``; binomial: two labels; gaussian: numbers. Omitted
        for an estimator with a formula, whose outcome is read from ``X``.
    covariates, strata : str, int or list of them, optional
        The clinical model's covariates and strata (cox only); default: the
        estimator's ``covariates`` and ``strata`` parameters. Not with a
        formula, which states them.
    cv : int, default=5
        Folds per repeat.
    n_repeats : int, default=5
        Repeats (each a new stratified partition).
    coxnet : bool, default=False
        Also run scikit-survival's ``CoxnetSurvivalAnalysis`` (l1_ratio 0.5,
        clinical columns and strata columns unpenalized, alpha by an inner
        5-fold CV on Harrell's C; no strata: it has none).
    interval : {"one_fold", "corrected_t", "naive"}, default="one_fold"
        Interval method, see :func:`increment_interval`; another one later,
        without running the folds again:
        ``result.increments_with(interval="corrected_t")``.
    alpha : float, default=0.05
        One minus the intervals' level.
    tau_quantile : float, default=0.8
        Uno's C is truncated at this quantile of the training fold's event
        times.
    n_jobs : int, optional
        Folds run in parallel through joblib (any backend).
    verbose : bool, int or None, default=None
        Progress over the folds. None: tqdm's bar when interactive (a
        terminal or a Jupyter kernel, not under CI), nothing in a log file;
        True or an int >= 1: the bar when interactive, otherwise a line on
        standard error every 10 seconds with the folds done, the time
        elapsed and an estimate of the time left; False or 0: nothing.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the partitions and each fold's fits.
    checkpoint : str or os.PathLike, optional
        A file that keeps every finished fold (JSON Lines, see
        :class:`vcpcr._parallel.Checkpoint`; nothing is unpickled). A call
        with the same estimator, data and parameters runs only the folds the
        file does not hold and returns what an uninterrupted run returns;
        a file written for other data or parameters is refused. Needs an int
        ``random_state``.

    Returns
    -------
    IncrementResult
        Per-fold metrics, increments, intervals; ``summary()`` and ``plot()``.
        When a ``KeyboardInterrupt`` stops the run, the folds that finished
        (``complete`` False, a warning says how many of how many); it is
        raised when none did.

    Raises
    ------
    ValueError
        Without clinical columns (a formula without a clinical part), with
        missing clinical values, an unknown column, a non-survival
        estimator, a formula with ``y``, ``covariates=`` or ``strata=``, or
        a bad parameter; or when a
        model's fit fails (a ``ValueError`` on a training fold) in more
        than half of the folds.
    TypeError
        If ``estimator`` has no ``fit`` and ``predict``, or has a formula
        and ``X`` is not a DataFrame.
    ImportError
        Without lifelines or scikit-survival.

    Warns
    -----
    VCPCRWarning
        When a model's fit fails in some folds (at most half): those folds
        are left out of its increments and of every model's means, which
        compare the models on the folds where all were fitted.

    See Also
    --------
    ClinicalCox : The clinical-only model.
    increment_interval : The intervals.

    Notes
    -----
    Binomial: per test fold the AUC and the Brier score of the predicted
    probabilities; gaussian: :math:`R^2` (against the test fold's mean) and
    the RMSE (scikit-learn's metrics). Cox metrics per test fold: Harrell's
    C; Uno's C truncated at ``tau`` (the ``tau_quantile`` of the training
    events); the cumulative/dynamic AUC at
    the quartiles of all rows' event times (NaN in a fold whose follow-up
    does not reach a horizon); the integrated Brier score on the test
    event times between the 10th and 80th percentiles of all rows' event
    times (inside both parts' follow-up) and the IPA
    :math:`1 - \mathrm{IBS}/\mathrm{IBS}_{KM}` (Kaplan-Meier of the training
    fold); the fold's contribution to the cross-validated partial
    likelihood :math:`\ell(\hat\beta_{-k}) - \ell_{-k}(\hat\beta_{-k})`
    (Verweij & van Houwelingen 1993; Efron ties, stratified by the clinical
    strata, from each model's linear predictor). The increment of a metric
    is its mean over the folds of ``model - clinical``; intervals target
    the procedure's expected increment when trained on ``(cv - 1) / cv`` of
    the rows (Bates, Hastie & Tibshirani 2023).

    An estimator with a formula, ``VCPCR(formula="Surv(time, event) ~ age
    + C(stage) + strata(center) | .")``, is compared with the Cox model of
    its clinical part: the covariates left of ``|`` (with the estimator's
    ``covariates=``, if any) and the strata (``strata()`` terms or the
    estimator's ``strata=``), each fold's model fitted on the design the
    formula builds on its training rows (levels and transforms as the
    estimator's own ``fit`` builds them). With plain column names this is
    the clinical model of the same estimator written with ``covariates=``
    and ``strata=``, and the results are equal, names included
    (``covariates`` lists the data columns; a term that is not a column,
    ``np.log(age)``, by its text). A formula without a clinical part is an
    error. With ``coxnet=True``, the Coxnet reads the same design: the
    clinical part unpenalized, the formula's other columns penalized.

    References
    ----------
    Verweij, P. J. M. & van Houwelingen, H. C. (1993). Cross-validation in
    survival analysis. Stat Med 12:2305-2314.

    Bates, S., Hastie, T. & Tibshirani, R. (2023). Cross-validation: what
    does it estimate and how well does it do it? JASA 119:1434-1445.

    Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error.
    Machine Learning 52:239-281.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from vcpcr.validation import ClinicalCox, validate_increment
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(80, 3)), columns=["age", "g1", "g2"])
    >>> y = np.column_stack([rng.exponential(np.exp(-X["age"])), rng.random(80) < 0.8])
    >>> res = validate_increment(ClinicalCox(covariates=["age"]), X, y,
    ...                          covariates=["age"], cv=3, n_repeats=1, random_state=0)
    >>> float(res.fold_increments["Harrell C"].abs().max())
    0.0
    """
    family = _check_design(estimator, cv, n_repeats, interval, alpha, tau_quantile)
    if family == "cox":
        _require_survival(_OWNER)
    clinical_ = _clinical(estimator, X, covariates, strata)
    covariates_, strata_ = clinical_.covariates, clinical_.strata
    y_given = y
    y = _outcome(clinical_, y)
    X = _check_frame(X, y, clinical_.columns)
    check_cv_param(cv, len(X), _OWNER)
    ys, plan, clinical_model, labels = _setup(
        family, X, y, clinical_, tau_quantile, coxnet
    )
    clinical = CLINICAL_NAMES[family]
    models: dict[str, Any] = {clinical: clinical_model}
    name = type(estimator).__name__
    models[name if name not in (clinical, COXNET) else f"{name} (estimator)"] = (
        estimator
    )
    if coxnet:
        models[COXNET] = clinical_.model(_ClinicalCoxnet())
    seed = int(task_seeds(random_state, 1)[0] % 2**32)
    splitter = (
        RepeatedKFold(n_splits=int(cv), n_repeats=int(n_repeats), random_state=seed)
        if labels is None
        else RepeatedStratifiedKFold(
            n_splits=int(cv), n_repeats=int(n_repeats), random_state=seed
        )
    )
    cells = None
    if family == "cox" and strata_:  # folds stratified by stratum and event
        cells = strata_cells(X[strata_].to_numpy(), np.asarray(labels) > 0, int(cv))
    if cells is not None:
        splits = split_cells(splitter, X, cells)
    else:
        splits = list(splitter.split(X, labels))
    if family == "cox":  # every stratum's events in every training fold
        design_strata = model_strata(estimator, X, y_given, _OWNER)
        if design_strata is not None:
            event = np.asarray(labels) > 0
            check_model_fold_strata(
                estimator, design_strata, event, splits, _OWNER, int(cv)
            )
    seeds = task_seeds(random_state, len(splits))
    tasks = [
        (models, X, ys, tr, te, plan, s)
        for (tr, te), s in zip(splits, seeds, strict=True)
    ]
    shown = progress_shown(verbose, _OWNER)
    saved = Checkpoint.open(
        checkpoint,
        _OWNER,
        random_state,
        (models, X, ys, splits, seeds, plan),
        len(tasks),
    )
    results = run_parallel(
        _fold_task,
        tasks,
        n_jobs=n_jobs,
        verbose=shown,
        desc=_OWNER,
        unit="folds",
        fits_per_task=len(models),
        interruptible=True,
        checkpoint=saved,
    )
    indices = finished(results)
    done = {i: results[i] for i in indices}
    for name in models:
        check_failures(
            [fold[name].get("error") for fold in done.values()],
            f"{_OWNER} ({name})",
            "folds",
            "a fold left out of the means and the increments",
        )
    return _result(
        done,
        [splits[i] for i in indices],
        plan,
        models,
        int(cv),
        int(n_repeats),
        interval,
        float(alpha),
        covariates_,
        strata_,
        ys,
        coxnet,
    )


def _folds_frame(
    done: dict[int, dict[str, dict[str, Any]]], plan: _Plan, n_splits: int
) -> pd.DataFrame:
    names = [*_metric_names(plan.horizons, family=plan.family), "n_genes"]
    rows = []
    for i, fold in done.items():
        for model, scores in fold.items():
            row = {"repeat": i // n_splits, "fold": i % n_splits, "model": model}
            row.update({k: scores.get(k, np.nan) for k in names})
            row["error"] = scores.get("error")
            rows.append(row)
    return pd.DataFrame(rows)


def _result(
    done: dict[int, dict[str, dict[str, Any]]],
    splits: list[Any],
    plan: _Plan,
    models: dict[str, Any],
    n_splits: int,
    n_repeats: int,
    interval: str,
    alpha: float,
    covariates: list[Any],
    strata: list[Any],
    y: NDArray[Any],
    coxnet: bool,
) -> IncrementResult:
    metrics = _metric_names(plan.horizons, family=plan.family)
    clinical = CLINICAL_NAMES[plan.family]
    folds = _folds_frame(done, plan, n_splits)
    summary, fold_increments, increments = _increments(
        folds, metrics, splits, interval, alpha, clinical
    )
    _warn_untested(increments)
    notes = _notes(plan, folds, models, interval, coxnet, strata)
    n_folds = n_splits * n_repeats
    if len(done) < n_folds:
        notes.append(
            f"Incomplete: the run was interrupted after {len(done)} of {n_folds} "
            f"folds; every number is over those folds only."
        )
    return IncrementResult(
        folds=folds,
        metrics=summary,
        fold_increments=fold_increments,
        increments=increments,
        horizons=plan.horizons,
        brier_range=plan.brier_range,
        tau_quantile=plan.tau_quantile,
        interval=interval,
        alpha=alpha,
        n_splits=n_splits,
        n_repeats=n_repeats,
        n_samples=len(y),
        n_events=_n_events(y, plan.family),
        covariates=covariates,
        strata=strata,
        splits=splits,
        notes=notes,
        complete=len(done) == n_folds,
        family=plan.family,
        clinical=clinical,
    )


def _n_events(y: NDArray[Any], family: str) -> int | None:
    """Events (cox), rows with the second label (binomial), None (gaussian)."""
    if family == "cox":
        return int(y["event"].sum())
    if family == "binomial":
        return int(np.sum(y == np.unique(y)[1]))
    return None


def _increments(
    folds: pd.DataFrame,
    metrics: list[str],
    splits: list[Any],
    interval: str,
    alpha: float,
    clinical: str = CLINICAL,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Each model's mean metrics, its per-fold increments and their intervals."""
    wide = folds.set_index(["repeat", "fold", "model"])[metrics].unstack("model")
    # The means compare the models on the same folds: those where none failed.
    ok = folds["error"].isna()
    paired = ok.groupby([folds["repeat"], folds["fold"]]).transform("all")
    summary = (
        folds[paired]
        .groupby("model", sort=False)[metrics]
        .agg(["mean", "std", "count"])
    )
    summary = summary.stack(0, future_stack=True).rename_axis(["model", "metric"])
    n_train = float(np.mean([len(tr) for tr, _ in splits]))
    n_test = float(np.mean([len(te) for _, te in splits]))
    # each model's mean metric with the increments' interval (its p-value,
    # of "metric <= 0", means nothing)
    bounds = [
        _increment_interval(
            folds.loc[paired & (folds["model"] == model), metric].to_numpy(float),
            n_train,
            n_test,
            interval,
            alpha,
        )[:3]
        for model, metric in summary.index
    ]
    summary[["se", "ci_low", "ci_high"]] = np.array(bounds, dtype=np.float64)
    # a C, an AUC or a Brier score lies in [0, 1], and so does its interval
    unit = summary.index.get_level_values("metric").map(_in_unit_interval)
    for end in ("ci_low", "ci_high"):
        summary.loc[unit, end] = summary.loc[unit, end].clip(0.0, 1.0)
    others = [m for m in folds["model"].unique() if m != clinical]
    diffs, rows = {}, []
    n_used = folds.set_index(["repeat", "fold", "model"])["n_genes"].unstack("model")
    for model in others:
        d = wide.xs(model, axis=1, level=1) - wide.xs(clinical, axis=1, level=1)
        diffs[model] = d
        none_chosen = bool((n_used[model].fillna(np.inf) == 0).all())
        for metric in metrics:
            rows.append(
                _increment_row(
                    model,
                    metric,
                    d[metric],
                    none_chosen,
                    n_train,
                    n_test,
                    interval,
                    alpha,
                )
            )
    fold_increments = pd.concat(diffs, names=["model"]).reset_index()
    increments = pd.DataFrame(rows).set_index(["model", "metric"])
    return summary, fold_increments, increments


def _in_unit_interval(metric: str) -> bool:
    """Whether ``metric`` takes values in [0, 1] (C's, AUCs, Brier scores)."""
    return metric in ("Harrell C", "Uno C", "IBS", "Brier") or metric.startswith("AUC")


def _target_note(interval: str, clinical: str = CLINICAL) -> str:
    """Return the first note: what is estimated, and the interval method."""
    return (
        "Target: the expected performance of each procedure trained on "
        "(k-1)/k of the rows (Bates, Hastie & Tibshirani 2023); increment = "
        f"model minus {clinical}, paired by fold; interval method "
        f"{interval!r} (vcpcr.validation.increment_interval)."
    )


def _warn_untested(increments: pd.DataFrame) -> None:
    """Warn, once, of the increments left without a p-value, and why.

    The status column says it row by row; a model that chose no gene has
    its own status (and no interval by design).
    """
    untested = increments[increments["p"].isna() & ~increments["status"].isin(_NO_GENE)]
    if untested.empty:
        return
    listed = "; ".join(
        f"{model} {metric}: {status}"
        for (model, metric), status in untested["status"].items()
    )
    warnings.warn(
        f"validate_increment: {len(untested)} increment(s) have no p-value "
        f"({listed}). See result.increments' status column and "
        f"result.fold_increments.",
        VCPCRWarning,
        stacklevel=user_stacklevel(),
    )


def _increment_row(
    model: str,
    metric: str,
    d: pd.Series,
    none_chosen: bool,
    n_train: float,
    n_test: float,
    interval: str,
    alpha: float,
) -> dict[str, Any]:
    row: dict[str, Any] = {"model": model, "metric": metric}
    values = d.to_numpy(dtype=np.float64)
    row["increment"] = (
        float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
    )
    row["n_folds"] = int(np.isfinite(values).sum())
    if none_chosen:
        row.update(
            se=np.nan,
            ci_low=np.nan,
            ci_high=np.nan,
            p=np.nan,
            status="no gene in any fold",
        )
        return row
    sign = -1.0 if metric in _LOWER_BETTER else 1.0
    se, lo, hi, p = _increment_interval(sign * values, n_train, n_test, interval, alpha)
    if sign < 0:
        lo, hi = -hi, -lo
    status = "lower is better" if sign < 0 else ""
    if se == 0.0 and np.isnan(p):
        status = "equal in every fold: no p-value"
    elif row["n_folds"] < 2:
        few = f"defined in {row['n_folds']} of {values.size} folds: no interval"
        status = f"{status}; {few}" if status else few
    row.update(se=se, ci_low=lo, ci_high=hi, p=p, status=status)
    return row


_GLM_NOTES = {
    "binomial": "AUC (scikit-learn's roc_auc_score) and Brier score "
    "(brier_score_loss) of each test fold's predicted probabilities; the "
    "clinical model is a logistic regression on the clinical columns "
    "(ClinicalGLM, statsmodels).",
    "gaussian": "R2 (scikit-learn's r2_score, against the test fold's own "
    "mean) and RMSE (root_mean_squared_error) of each test fold's "
    "predictions; the clinical model is a linear regression on the clinical "
    "columns (ClinicalGLM, statsmodels).",
}


def _notes(
    plan: _Plan,
    folds: pd.DataFrame,
    models: dict[str, Any],
    interval: str,
    coxnet: bool,
    strata: list[Any],
) -> list[str]:
    clinical = CLINICAL_NAMES[plan.family]
    lo, hi = plan.brier_range
    notes = (
        [
            _target_note(interval, clinical),
            _GLM_NOTES[plan.family],
        ]
        if plan.family != "cox"
        else [
            _target_note(interval),
            f"Uno C: tau = the {plan.tau_quantile:g} quantile of each training "
            f"fold's event times. AUC: cumulative/dynamic at the quartiles of all "
            f"rows' event times. IBS: test event times in [{lo:.4g}, {hi:.4g}] (10th "
            f"to 80th percentile of all event times); IPA = 1 - IBS/IBS(Kaplan-Meier).",
            "CVPL: each fold's l(b_-k) - l_-k(b_-k) (Verweij & van Houwelingen "
            "1993), Efron ties"
            + (", stratified by the clinical strata." if strata else "."),
        ]
    )
    if coxnet:
        notes.append(
            "Coxnet: scikit-survival, l1_ratio 0.5, clinical columns unpenalized, "
            "alpha by inner 5-fold CV on Harrell's C"
            + (
                "; it has no strata: the strata columns enter as unpenalized "
                "covariates."
                if strata
                else "."
            )
        )
    failed = folds[folds["error"].notna()]
    for model, group in failed.groupby("model", sort=False):
        notes.append(
            f"{model} failed in {len(group)} fold(s), left out of its increments "
            f"and of every model's means (first: {group['error'].iloc[0]})"
        )
    for model in models:
        chosen = folds.loc[folds["model"] == model, "n_genes"]
        if model != clinical and (chosen.fillna(np.inf) == 0).all():
            notes.append(
                f"{model} chose no gene in any fold: it is the clinical model, "
                f"its increments are 0 (up to the fits' tolerance), and no "
                f"interval or test is given."
            )
    n_used = folds.groupby("model", sort=False)["n_genes"].mean()
    chosen = [
        f"{m}: {n_used[m]:.3g}"
        for m in models
        if m != clinical and np.isfinite(n_used[m])
    ]
    if chosen:
        notes.append(
            "Genes used (selected, or non-zero coefficient), mean per fold: "
            + "; ".join(chosen)
            + "."
        )
    return notes
