"""Shared plumbing of the competitor estimators (validation, scaling, fit, predict)."""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import Tags
from sklearn.utils.validation import check_is_fitted, validate_data

from vcpcr._checks import (
    check_array,
    check_same_rows,
    check_scalar,
    check_varying,
    feature_names,
)
from vcpcr._scaling import raw_coefficients, standardize

__all__ = ["BaselineRegressor"]


class BaselineRegressor(RegressorMixin, BaseEstimator, ABC):
    """Base class: validate, standardize ``X`` and ``y``, map coefficients back.

    ``fit`` validates and standardizes the data, then calls the subclass's
    ``_fit_standardized(Xs, ys)``, which checks its parameters, works on
    ``X`` with centred columns of unit sample variance (``ddof=1``) and
    ``y`` centred and scaled to unit sample variance, sets its own fitted
    attributes and returns the coefficients ``b`` (p,) on that scale. The
    fitted model predicts ``X @ coef_ + intercept_`` with
    ``coef_ = b * y_scale_ / scale_``.
    """

    def __sklearn_tags__(self) -> Tags:
        """Regressor tags; ``y`` is required."""
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    # -------------------------------------------------------------- helpers
    def _owner(self) -> str:
        return type(self).__name__

    def _check_n_clusters(self, name: str, p: int) -> int:
        value = getattr(self, name)
        check_scalar(value, name, numbers.Integral, owner=self._owner(), min_val=1)
        if value > p:
            raise ValueError(f"n_features={p} must be >= {name}={value}.")
        return int(value)

    def _check_real(self, *names: str) -> None:
        """Check that the named parameters are finite reals >= 0."""
        for name in names:
            value = getattr(self, name)
            check_scalar(value, name, numbers.Real, owner=self._owner(), min_val=0.0)

    def _check_int(self, *names: str) -> None:
        """Check that the named parameters are integers >= 1."""
        for name in names:
            value = getattr(self, name)
            check_scalar(value, name, numbers.Integral, owner=self._owner(), min_val=1)

    # ------------------------------------------------------------------ fit
    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Fit on the standardized data; set ``coef_`` and ``intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Predictors (no NaN, infinite or constant columns).
        y : array-like of shape (n_samples,)
            Numeric response.

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        ValueError
            For invalid parameters or data (NaN, constant columns, fewer than
            3 samples, more clusters than features, a constant ``y``).
        """
        Xs, ys = self._validate_fit(X, y)
        self._set_coef(self._fit_standardized(Xs, ys))
        return self

    @abstractmethod
    def _fit_standardized(
        self, Xs: NDArray[np.float64], ys: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Check the parameters, fit, set the own attributes; return ``b``."""

    def _validate_fit(
        self, X: ArrayLike, y: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Validate the data and return standardized ``X`` and ``y``."""
        check_same_rows(X, y)
        Xv, yv = validate_data(
            self, X, y, dtype=np.float64, ensure_all_finite=False, y_numeric=True
        )
        Xa = check_array(
            Xv,
            "X",
            feature_names=feature_names(self, Xv.shape[1]),
            min_samples=3,
            allow_constant=False,
        )
        ya = check_array(yv, "y", ensure_2d=False)
        check_varying(ya, "y")
        Xs, self.mean_, self.scale_ = standardize(Xa)
        ys, y_mean, y_scale = standardize(ya)
        self.y_mean_, self.y_scale_ = float(y_mean), float(y_scale)
        return Xs, ys

    def _set_coef(self, b: NDArray[np.float64]) -> None:
        """Set ``coef_`` and ``intercept_`` from standardized coefficients."""
        coef, _, intercept = raw_coefficients(
            np.eye(b.size), 0.0, b, self.mean_, self.scale_
        )
        self.coef_ = coef * self.y_scale_
        self.intercept_ = float(self.y_mean_ + intercept * self.y_scale_)

    # -------------------------------------------------------------- predict
    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Predict with the linear model ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data with the training columns.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted responses.
        """
        check_is_fitted(self)
        Xv = validate_data(
            self, X, dtype=np.float64, ensure_all_finite=False, reset=False
        )
        Xa = check_array(Xv, "X", feature_names=feature_names(self, Xv.shape[1]))
        return Xa @ self.coef_ + self.intercept_

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: Any = None) -> float:
        """Return R^2 of the predictions of ``X`` against ``y`` (scikit-learn's).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test data with the training columns.
        y : array-like of shape (n_samples,)
            True responses, in ``X``'s row order (a pandas ``y`` holding
            ``X``'s rows in another order is refused).
        sample_weight : array-like of shape (n_samples,), optional
            Sample weights.

        Returns
        -------
        float
            The coefficient of determination.
        """
        check_same_rows(X, y)
        return float(super().score(X, y, sample_weight=sample_weight))
