"""What differs between outcome families: the response, step 2, the summary.

Each family turns the user's ``y`` into the step-2 outcome and the step-0
weights target, fits the outcome model on the cluster latent variables, and
describes the fit for ``summary()``. The estimator only dispatches.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.utils.validation import validate_data

from vcpcr import _score_batch
from vcpcr._outcome import fit_outcome
from vcpcr._outcome_batch import cox_batch, logit_batch, ols_batch
from vcpcr._scaling import constant_columns, standardize
from vcpcr._summary import ParamTable
from vcpcr._validation import check_array, check_survival
from vcpcr.exceptions import ConvergenceWarning, VCPCRWarning

__all__ = [
    "FAMILIES",
    "BatchParams",
    "Family",
    "Prepared",
    "check_identifiable",
    "missing_as_nan",
    "validate_xy",
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


#: A vectorized score (see :mod:`vcpcr._score_batch`): None where it declines.
_Metric = Callable[..., NDArray[np.float64] | None]


class BatchParams(NamedTuple):
    """Step-2 fits of a stack of designs (see :meth:`Family.fit_batch`).

    ``intercept`` (B,) and ``coef`` (B, k) as :meth:`Family.split_params`
    returns them; rows with ``ok`` False must be fitted with :meth:`Family.fit`.
    """

    intercept: NDArray[np.float64]
    coef: NDArray[np.float64]
    ok: NDArray[np.bool_]


class Family:
    """Gaussian family: OLS on the latent variables, R^2 as score."""

    name = "gaussian"
    estimator_type: str | None = "regressor"

    def prepare(self, y: Any) -> Prepared:
        """Validate the numeric response."""
        yf = check_array(y, "y", ensure_2d=False)
        if constant_columns(yf[:, None]).size:
            raise ValueError(
                f"y is constant (all values {yf[0]!r}, up to rounding); a "
                f"regression needs a varying response."
            )
        return Prepared(yf, standardize(yf)[0])

    def fit(
        self, M: NDArray[np.float64], outcome: Any, names: list[str], yname: str
    ) -> Any:
        """Fit the step-2 model; return the untouched results object."""
        check_identifiable(M, intercept=True)
        return fit_outcome(self.name, M, outcome, names=names, yname=yname)[0]

    def split_params(self, result: Any) -> tuple[float, NDArray[np.float64]]:
        """Return the intercept and the cluster coefficients of a fit."""
        params = np.asarray(result.params, dtype=np.float64)
        return float(params[0]), params[1:]

    def fit_batch(self, M: NDArray[np.float64], outcome: Any) -> BatchParams:
        """Fit step 2 on every design ``M[b]`` (B, n, k) at once."""
        fit = ols_batch(M, outcome)
        return BatchParams(fit.params[:, 0], fit.params[:, 1:], fit.ok)

    #: Scorings that :meth:`score_batch` computes (scikit-learn scorer names).
    batch_scorings: ClassVar[dict[str, _Metric]] = {
        "neg_mean_squared_error": _score_batch.neg_mean_squared_error,
        "neg_root_mean_squared_error": _score_batch.neg_root_mean_squared_error,
        "neg_mean_absolute_error": _score_batch.neg_mean_absolute_error,
        "r2": _score_batch.r2,
    }

    def score_batch(
        self, scoring: str, eta: NDArray[np.float64], y: Any, classes: Any
    ) -> NDArray[np.float64] | None:
        """Scores of the linear predictors ``eta`` (B, n) on the test fold ``y``.

        None when ``scoring`` is not vectorized here, or where the scorer
        would raise or warn on this fold (the caller then scores per point).
        """
        metric = self.batch_scorings.get(scoring)
        if metric is None:
            return None
        return metric(eta, np.asarray(y, dtype=np.float64))

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

    def describe(self, result: Any) -> str:
        """Family and outcome model, e.g. ``"gaussian (OLS)"``."""
        return "gaussian (OLS)"

    def statistics(self, result: Any) -> list[tuple[str, Any]]:
        """Goodness-of-fit rows of the summary header."""
        return [
            ("R-squared:", float(result.rsquared)),
            ("Log-Likelihood:", float(result.llf)),
        ]

    def notes(self, result: Any) -> list[str]:
        """Family-specific notes of the summary."""
        return []

    def predict(self, eta: NDArray[np.float64], classes: Any) -> NDArray[Any]:
        """Turn the linear predictor into the prediction (here: itself)."""
        return eta

    def score(self, y: Any, prediction: NDArray[Any], sample_weight: Any) -> float:
        """R^2 of the predictions."""
        from sklearn.metrics import r2_score

        return float(r2_score(y, prediction, sample_weight=sample_weight))


class Binomial(Family):
    """Binomial family: logistic regression (Firth under separation)."""

    name = "binomial"
    estimator_type = "classifier"

    def prepare(self, y: Any) -> Prepared:
        """Map two class labels to 0/1 (``classes[1]`` is the event)."""
        from sklearn.utils.multiclass import check_classification_targets

        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(
                f"Only binary classification is supported. VCPCR(family='binomial') "
                f"needs exactly 2 classes in y; got {classes.size} class(es): "
                f"{classes[:10].tolist()}. Use family='gaussian' for a numeric "
                f"response."
            )
        y01 = (np.asarray(y) == classes[1]).astype(np.float64)
        return Prepared(y01, y01, classes)

    def fit_batch(self, M: NDArray[np.float64], outcome: Any) -> BatchParams:
        """Logit on every design at once; separated ones are left to :meth:`fit`."""
        fit = logit_batch(M, outcome)
        return BatchParams(fit.params[:, 0], fit.params[:, 1:], fit.ok)

    batch_scorings: ClassVar[dict[str, _Metric]] = {
        "neg_log_loss": _score_batch.neg_log_loss,
        "accuracy": _score_batch.accuracy,
        "roc_auc": _score_batch.roc_auc,
    }

    def score_batch(
        self, scoring: str, eta: NDArray[np.float64], y: Any, classes: Any
    ) -> NDArray[np.float64] | None:
        """Scores of the log-odds ``eta`` (B, n) on the test labels ``y``."""
        metric = self.batch_scorings.get(scoring)
        if metric is None:
            return None
        return metric(eta, np.asarray(y) == classes[1])

    @staticmethod
    def _firth(result: Any) -> bool:
        return bool(result.mle_retvals.get("method") == "firth")

    def describe(self, result: Any) -> str:
        """Family and outcome model, e.g. ``"binomial (Logit)"``."""
        return "binomial (Firth logit)" if self._firth(result) else "binomial (Logit)"

    def statistics(self, result: Any) -> list[tuple[str, Any]]:
        """Goodness-of-fit rows of the summary header."""
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


class Cox(Family):
    """Cox family: proportional hazards with lifelines (Efron ties)."""

    name = "cox"
    estimator_type = None

    def prepare(self, y: Any) -> Prepared:
        """Validate a survival outcome into ``(time, event)`` columns."""
        time, event = check_survival(y)
        outcome = np.column_stack([time, event.astype(np.float64)])
        return Prepared(outcome, outcome)

    def fit(
        self, M: NDArray[np.float64], outcome: Any, names: list[str], yname: str
    ) -> Any:
        """Fit ``lifelines.CoxPHFitter``; return the untouched fitter."""
        check_identifiable(M, intercept=False)
        try:
            from lifelines import CoxPHFitter
        except ImportError:
            raise ImportError(
                "family='cox' requires lifelines: pip install 'vcpcr[survival]'"
            ) from None
        frame = pd.DataFrame(M, columns=names)
        frame[_TIME], frame[_EVENT] = outcome[:, 0], outcome[:, 1]
        # lifelines' default tolerance (1e-7 on the step) leaves ~1e-5 relative
        # error; converge fully, as R's coxph does. The latent variables' scale
        # follows the weights' (small for penalized Cox weights); lifelines
        # standardizes its columns internally, so its absolute "variance <
        # 1e-4" warning is spurious here.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", message=r".*have very low variance")
            fitter = CoxPHFitter().fit(
                frame,
                duration_col=_TIME,
                event_col=_EVENT,
                fit_options={"precision": 1e-12, "r_precision": 1e-14},
            )
        _reissue_lifelines(caught)
        return fitter

    def split_params(self, result: Any) -> tuple[float, NDArray[np.float64]]:
        """No intercept: the baseline hazard absorbs it."""
        return 0.0, result.params_.to_numpy(dtype=np.float64)

    def fit_batch(self, M: NDArray[np.float64], outcome: Any) -> BatchParams:
        """Cox (Efron ties) on every design at once; no intercept."""
        fit = cox_batch(M, outcome[:, 0], outcome[:, 1] > 0)
        return BatchParams(np.zeros(M.shape[0]), fit.params, fit.ok)

    #: The estimator's score (Harrell's concordance), the default of VCPCRCV.
    batch_scorings: ClassVar[dict[str, _Metric]] = {
        "concordance": _score_batch.concordance
    }

    def score_batch(
        self, scoring: str, eta: NDArray[np.float64], y: Any, classes: Any
    ) -> NDArray[np.float64] | None:
        """Concordance of the risk scores ``exp(eta)`` (B, n) on the test fold."""
        metric = self.batch_scorings.get(scoring)
        if metric is None:
            return None
        time, event = check_survival(y)
        return metric(self.predict(eta, classes), time, event)

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

    def describe(self, result: Any) -> str:
        """Family and outcome model."""
        return "cox (PH, Efron ties)"

    def statistics(self, result: Any) -> list[tuple[str, Any]]:
        """Events, concordance, partial likelihood and its LR test."""
        events = int(result.event_observed.sum())
        rows: list[tuple[str, Any]] = [
            ("Events:", f"{events} ({len(result.event_observed) - events} censored)"),
            ("Concordance:", float(result.concordance_index_)),
            ("Log-partial-lik.:", float(result.log_likelihood_)),
        ]
        if len(result.params_):
            lr = result.log_likelihood_ratio_test()
            rows.append(
                (f"LR test (df={lr.degrees_freedom}):", f"{lr.test_statistic:.4g}")
            )
            rows.append(("LR test p-value:", f"{lr.p_value:.3g}"))
        return rows

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


_TIME, _EVENT = "time", "event"  # the cluster columns are cluster_<k>


def _reissue_lifelines(caught: list[warnings.WarningMessage]) -> None:
    """Re-issue lifelines' warnings on the latent variables in vcpcr's terms."""
    for c in caught:
        text = " ".join(str(c.message).split())
        converge = "converge" in text.lower() or "ConvergenceWarning" in (
            c.category.__name__
        )
        warnings.warn(
            f"The Cox outcome model (lifelines CoxPHFitter on the cluster latent "
            f"variables) warned: {text}"
            + (
                " Fewer clusters (n_clusters) or a larger lam_ratio usually help."
                if converge
                else ""
            ),
            ConvergenceWarning if converge else VCPCRWarning,
            stacklevel=4,
        )


FAMILIES: dict[str, Family] = {
    "gaussian": Family(),
    "binomial": Binomial(),
    "cox": Cox(),
}


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
    est: Any, X: Any, y: Any, family: str
) -> tuple[NDArray[np.float64], Any]:
    """scikit-learn's checks of X (and of y, except survival outcomes).

    Sets ``est.n_features_in_`` (and ``feature_names_in_``) as scikit-learn
    estimators do.
    """
    X = missing_as_nan(X)
    _check_not_survival(est, y, family)
    if family != "cox":
        with _hint_non_numeric(est, X):
            return validate_data(  # type: ignore[no-any-return]
                est,
                X,
                y,
                dtype=np.float64,
                ensure_all_finite=False,
                y_numeric=family == "gaussian",
            )
    if y is None:
        raise ValueError(
            f"{type(est).__name__} requires y to be passed, but the target y is "
            f"None. For family='cox' give (time, event), e.g. vcpcr.Surv(time, event)."
        )
    with _hint_non_numeric(est, X):
        Xv = validate_data(est, X, dtype=np.float64, ensure_all_finite=False)
    if len(y) != Xv.shape[0]:
        raise ValueError(f"X has {Xv.shape[0]} rows but y has {len(y)}.")
    return Xv, y


def _check_not_survival(est: Any, y: Any, family: str) -> None:
    """Raise, naming ``family="cox"``, for a survival outcome of another family."""
    if family == "cox" or y is None:
        return
    arr = np.asarray(y) if not hasattr(y, "dtype") else y
    structured = getattr(getattr(arr, "dtype", None), "names", None)
    if structured or (getattr(arr, "ndim", 1) == 2 and arr.shape[1] == 2):
        raise ValueError(
            f"y looks like a survival outcome (two columns: time and event), but "
            f"{type(est).__name__} has family={family!r}. Use family='cox' for "
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
