"""Step 0 of VC-PCR: the variable weights ``w`` (elastic net, ridge, lasso, ...).

All penalties use glmnet's parametrization on standardized data, so that
``delta`` means what ``lambda`` means in R's ``glmnet``:

* gaussian: ``1/(2n) ||y - X w||^2 + penalty``;
* binomial: ``-(1/n) loglik(b0 + X w) + penalty`` with an unpenalized intercept;

with ``penalty = delta/2 ||w||^2`` (ridge), ``delta ||w||_1`` (lasso) or
``delta (a ||w||_1 + (1-a)/2 ||w||^2)`` (elastic net, ``a = l1_ratio``).
Every solver takes a whole vector of ``delta`` values: the ridge costs one SVD
for all of them (exact solution); the lasso and elastic net warm-start along
the path at glmnet's accuracy (gaussian and binomial: :mod:`vcpcr._enet`;
cox: scikit-survival's Coxnet, see :func:`vcpcr._cox.cox_lasso_path`).

This module holds the weight schemes and the one route to them
(:func:`weights_for_grid`); each family's solvers are its own
(:meth:`vcpcr._families.Family.ridge_weights`, ``enet_weights``,
``lasso_delta_max``), looked up in :data:`vcpcr._families.FAMILIES`.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vcpcr._families import FAMILIES
from vcpcr._glmnet import glmnet_weights
from vcpcr._scaling import relative_weights
from vcpcr._scaling import standardize as _standardize
from vcpcr._validation import (
    check_array,
    check_choice,
    check_scalar,
    check_weights,
    check_y_length,
)
from vcpcr.exceptions import VCPCRWarning

__all__ = ["DEFAULT_DELTA", "compute_weights", "lasso_delta_max"]

METHODS = ("enet", "ridge", "lasso", "identity", "glmnet_ridge", "glmnet_lasso")

#: glmnet's ``alpha`` of the ``"enet"`` weights (see :func:`compute_weights`).
ENET_L1_RATIO = 0.05

#: Default penalty of each weight scheme (see :func:`compute_weights`, Notes).
DEFAULT_DELTA = {
    "enet": 0.5,
    "ridge": 0.01,
    "lasso": 0.05,
    "glmnet_ridge": 0.0036,
    "glmnet_lasso": 0.0004,
}


def lasso_delta_max(
    Xs: NDArray[np.float64],
    y: NDArray[np.float64],
    family: str = "gaussian",
    l1_ratio: float = 1.0,
) -> float:
    """Smallest lasso penalty with all weights zero: ``max_j |x_j'(y - ybar)|/n``.

    Parameters
    ----------
    Xs : ndarray of shape (n_samples, n_features)
        Standardized data.
    y : ndarray of shape (n_samples,) or (n_samples, 2)
        Response (standardized for gaussian, 0/1 for binomial, the
        ``(time, event)`` columns for cox).
    family : {"gaussian", "binomial", "cox"}, default="gaussian"
        Gaussian and binomial share the formula (the binomial one at the null
        model); cox uses the gradient of the partial likelihood at zero.
    l1_ratio : float, default=1.0
        The elastic net's mixing: its ``delta_max`` is the lasso's divided by
        ``l1_ratio``.

    Returns
    -------
    float
        ``delta_max``.
    """
    check_choice(family, "family", tuple(FAMILIES), owner="lasso_delta_max")
    return FAMILIES[family].lasso_delta_max(Xs, y) / l1_ratio


def _weights_path(
    Xs: NDArray[np.float64],
    y: NDArray[np.float64],
    method: str,
    deltas: NDArray[np.float64],
    family: str,
    l1_ratio: float = ENET_L1_RATIO,
    covariates: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Weights for every delta (rows), on validated, standardized input.

    ``l1_ratio`` is the mixing of ``"enet"`` (the lasso's is 1).
    ``covariates`` (standardized) are unpenalized: partialled out (gaussian)
    or an unpenalized block of the solver (binomial, cox; elastic net and
    lasso only).
    """
    if method == "identity":
        return np.ones((deltas.size, Xs.shape[1]))
    fam = FAMILIES[family]
    if covariates is not None:
        Xs, y, covariates = fam.partial_out(Xs, y, covariates)
    if covariates is not None and method != "enet" and method != "lasso":
        raise ValueError(
            f"weights={method!r} with covariates is only available for "
            f"family='gaussian' (the covariates are partialled out). Use "
            f"weights='enet' or 'lasso' with family={family!r}."
        )
    if method.startswith("glmnet_"):  # the paper's early-stopped glmnet call
        if not fam.glmnet_weights:
            raise ValueError(f"weights={method!r} needs family='gaussian'.")
        return glmnet_weights(Xs, y, deltas, alpha=float(method == "glmnet_lasso"))
    if method == "ridge":
        return fam.ridge_weights(Xs, y, deltas)
    l1 = l1_ratio if method == "enet" else 1.0
    return fam.enet_weights(Xs, y, deltas, l1, covariates)


def check_deltas(
    delta: Any, method: str, *, owner: str, name: str = "delta"
) -> NDArray[np.float64]:
    """Validate ``delta`` (scalar or 1-d array) for the weight scheme ``method``.

    The one ``delta`` rule, used by :class:`VCPCR`, :class:`VCPCRCV` and
    :func:`compute_weights`: finite numbers, each ``> 0`` (every scheme but
    ``"identity"`` is a penalized fit, and an unpenalized one does not exist
    when ``n_features >= n_samples``). ``name`` is the argument's name in
    ``owner``'s signature (``VCPCRCV`` takes ``deltas``).
    """
    if isinstance(delta, str | bytes) or np.asarray(delta).dtype.kind not in "biuf":
        raise TypeError(
            f"The {name!r} parameter of {owner} must be a number or a 1-d array "
            f"of numbers. Got {delta!r} instead."
        )
    arr = np.atleast_1d(np.asarray(delta, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(
            f"The {name!r} parameter of {owner} must be a finite number or a 1-d "
            f"array of them. Got {delta!r} instead."
        )
    if np.any(arr <= 0):
        raise ValueError(
            f"The {name!r} parameter of {owner} must be > 0 for {method!r} "
            f"weights (a penalized fit; without a penalty it does not exist when "
            f"n_features >= n_samples). Got {delta!r} instead. Use a small "
            f"positive value (e.g. 1e-4), or weights='identity' for unsupervised "
            f"clustering."
        )
    return arr


def scheme_delta(weights: Any, delta: float | None) -> float | None:
    """Return the ``delta`` a fit with ``weights`` uses (None: fixed weights).

    ``"identity"`` and given weights have no penalty; a penalized scheme
    uses ``delta`` or, when it is None, its :data:`DEFAULT_DELTA`.
    """
    if not isinstance(weights, str) or weights == "identity":
        return None
    return DEFAULT_DELTA[weights] if delta is None else float(delta)


def compute_weights(
    X: ArrayLike,
    y: ArrayLike,
    method: str = "ridge",
    *,
    delta: float | ArrayLike | None = None,
    family: str = "gaussian",
    standardize: bool = True,
    l1_ratio: float = ENET_L1_RATIO,
) -> NDArray[np.float64]:
    r"""Compute the VC-PCR variable weights (step 0).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    y : array-like of shape (n_samples,) or (n_samples, 2)
        The response: numbers (gaussian), 0/1 (binomial) or survival
        outcomes (cox: ``(time, event)`` columns, a DataFrame or a structured
        array, see :func:`vcpcr.Surv`).
    method : {"enet", "ridge", "lasso", "identity", "glmnet_ridge", \
            "glmnet_lasso"}, default="ridge"
        ``"enet"`` (elastic net, the default of :class:`VCPCR`), ``"ridge"``
        and ``"lasso"`` are penalized regression coefficients,
        ``"identity"`` gives all ones (unsupervised clustering).
        ``"glmnet_ridge"``/``"glmnet_lasso"`` reproduce the paper's weights:
        R's ``glmnet(X, y, alpha = 0 or 1, lambda = delta, standardize =
        FALSE)`` with its default stopping rule, which for small ``delta``
        stops far from the ridge/lasso solution, at weights that depend on
        the order of the columns (see :func:`vcpcr._glmnet.glmnet_gaussian`);
        gaussian family only.
    delta : float or array-like of float, optional
        Penalty in glmnet's parametrization (see Notes), ``> 0``. An array
        returns one row of weights per value. Defaults to
        :data:`DEFAULT_DELTA`; ignored by ``"identity"``.
    family : {"gaussian", "binomial", "cox"}, default="gaussian"
        Loss of the penalized regression (cox: Breslow partial likelihood).
    standardize : bool, default=True
        Centre and scale ``X`` (``ddof=1``) and, for the gaussian family,
        ``y``. With ``False``, ``X`` must already be standardized.
    l1_ratio : float, default=0.05
        glmnet's ``alpha`` of the ``"enet"`` weights, in ``(0, 1]``
        (ignored by the other schemes).

    Returns
    -------
    ndarray of shape (n_features,) or (n_deltas, n_features)
        The signed weights (not normalized).

    Raises
    ------
    ValueError
        For invalid data, a non-binary ``y`` with ``family="binomial"``, an
        invalid ``delta``, or a Cox lasso/elastic net whose first step below
        ``delta_max`` cannot be fitted (see :func:`vcpcr._cox.cox_lasso_path`).

    Warns
    -----
    ConvergenceWarning
        If a lasso/elastic-net ``delta`` does not converge (the message names
        ``delta``, ``max_iter`` and the last relative change).

    See Also
    --------
    VCPCR : Uses these weights to supervise the clustering.

    Notes
    -----
    With ``X`` standardized and (gaussian) ``y`` standardized, the weights
    minimize

    .. math::

        \frac{1}{2n}\lVert y - Xw\rVert_2^2 + \frac{\delta}{2}\lVert w\rVert_2^2
        \quad\text{(ridge)},\qquad
        \frac{1}{2n}\lVert y - Xw\rVert_2^2 + \delta \lVert w\rVert_1
        \quad\text{(lasso)},

    and the elastic net adds :math:`\delta(\alpha\lVert w\rVert_1 +
    \frac{1-\alpha}{2}\lVert w\rVert_2^2)` with :math:`\alpha` =
    ``l1_ratio``,

    and for the binomial family the mean negative log-likelihood (with an
    unpenalized intercept), for the cox family the mean negative Breslow log
    partial likelihood, replaces the squared loss. This is glmnet's
    ``lambda`` on the same data (``standardize=FALSE``). One caveat of R:
    glmnet's gaussian family rescales ``y`` to unit *population* variance
    internally, which divides the ridge part of its penalty by
    ``sd_pop(y)`` (its ridge is vcpcr's at ``lambda / sd_pop(y)``).

    The ridge weights are exact; the lasso and elastic net stop at glmnet's
    accuracy (a relative change of ``1e-7``), see ``docs/weights.md``.

    On standardized data ``X'X/n`` has (almost) unit diagonal, so ``delta``
    is on the scale of a squared correlation. The defaults were chosen on the
    paper's simulation (n=50, p=200, rho=0.6, configurations 1-3, 5 data
    draws x 5 starts, at the ``lam_ratio`` giving about 20 selected
    variables): the clustering MCC of VC-PCR-Ridge is flat for ridge
    ``delta`` between 1e-4 and 1 (e.g. 0.86-0.87 in configuration 2) and
    drops for ``delta >= 3`` (0.79 at 100, where the weights tend to the
    marginal correlations). The ridge default 0.01 is the top of the paper's
    grid (``10**linspace(-4, -2, 10)``), inside that flat region. Generalized
    cross-validation is no guide here: with ``p > n`` it always picks the
    smallest ``delta`` (the interpolating fit). For the lasso,
    ``delta_max = max_j |cor(x_j, y)| (n-1)/n`` zeroes every weight; the
    default 0.05 (keeping about 30 of 200 variables on that simulation) gave
    the best clustering MCC among 0.005-0.2, though the differences are small.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr import compute_weights
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 5))
    >>> y = X[:, 0] - X[:, 1] + rng.normal(size=30)
    >>> w = compute_weights(X, y, "ridge", delta=0.1)
    >>> w.shape, bool(w[0] > 0 > w[1])
    ((5,), True)
    """
    check_choice(method, "method", METHODS, owner="compute_weights")
    check_choice(family, "family", tuple(FAMILIES), owner="compute_weights")
    check_scalar(
        l1_ratio,
        "l1_ratio",
        numbers.Real,
        owner="compute_weights",
        min_val=0.0,
        max_val=1.0,
        include_min=False,
    )
    Xa = check_array(X, "X", min_samples=2, allow_constant=not standardize)
    ya = FAMILIES[family].weights_response(y, standardize=standardize)
    check_y_length(Xa.shape[0], ya)
    scalar = delta is None or isinstance(delta, numbers.Real)
    if method == "identity":  # no penalty: delta only sets the number of rows
        deltas = np.zeros(1 if delta is None else np.size(delta))
    else:
        deltas = check_deltas(
            DEFAULT_DELTA[method] if delta is None else delta,
            method,
            owner="compute_weights",
        )
    Xs = _standardize(Xa)[0] if standardize else Xa
    W = _weights_path(Xs, ya, method, deltas, family, float(l1_ratio))
    return W[0] if scalar else W


def weights_for_grid(
    Xs: NDArray[np.float64],
    target: NDArray[np.float64],
    weights: Any,
    deltas: Any,
    family: str,
    *,
    covariates: NDArray[np.float64] | None = None,
    stacklevel: int = 1,
) -> NDArray[np.float64]:
    """Step-0 weights of every ``delta`` (rows), on standardized data.

    The one route from a weight scheme to the weights, for :class:`VCPCR`,
    :class:`VCPCRCV` (per fold) and ``vcpcr benchmark``: a user array is
    validated and returned as one row, ``"identity"`` is one row of ones, a
    penalized scheme gives one row per ``delta`` (``None`` meaning its
    :data:`DEFAULT_DELTA`). ``target`` is the family's weights target (the
    standardized response, 0/1 labels, or ``(time, event)`` columns).
    ``covariates`` (standardized columns, or None) are adjusted for without
    penalty (see :func:`_weights_path`); ``delta`` stays the genes' penalty.

    Warns (VCPCRWarning, ``stacklevel`` frames above the caller) when the
    weights of some ``delta`` are all zero: no variable can then be selected.
    """
    p = Xs.shape[1]
    given = check_weights(weights, p, owner="weights", methods=METHODS)
    if not isinstance(given, str):
        return relative_weights(given)[None, :]
    if weights == "identity":
        return np.ones((1, p))
    values = [DEFAULT_DELTA[weights] if d is None else d for d in deltas]
    grid = check_deltas(values, weights, owner="weights")
    W = _weights_path(
        Xs, target, weights, grid, family, ENET_L1_RATIO, covariates=covariates
    )
    zero = ~W.any(axis=1)
    if zero.any():
        at = ", ".join(f"{d:g}" for d in grid[zero])
        warnings.warn(
            f"All {weights} weights are zero at delta={at}: no variable can be "
            f"selected and the model predicts a constant. Lower delta.",
            VCPCRWarning,
            stacklevel=stacklevel + 1,
        )
    return W
