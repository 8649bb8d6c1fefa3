"""Step 0 of VC-PCR: the feature weights ``w`` (elastic net, ridge, lasso, ...).

All penalties use glmnet's parametrization on standardized data, so that
``delta`` means what ``lambda`` means in R's ``glmnet``:

* gaussian: ``1/(2n) ||y - X w||^2 + penalty``;
* binomial: ``-(1/n) loglik(b0 + X w) + penalty`` with an unpenalized intercept;

with ``penalty = delta/2 ||w||^2`` (ridge), ``delta ||w||_1`` (lasso) or
``delta (a ||w||_1 + (1-a)/2 ||w||^2)`` (elastic net, ``a = l1_ratio``).
Every solver takes a whole vector of ``delta`` values: the ridge costs one SVD
for all of them (exact solution); the lasso and elastic net warm-start along
the path at glmnet's accuracy (gaussian and binomial: :mod:`vcpcr._solvers.enet`;
cox: scikit-survival's Coxnet, see :func:`vcpcr._solvers.cox.cox_lasso_path`).

A weight scheme is a :class:`WeightScheme` registered in :data:`SCHEMES`
(the values of the estimators' ``weights`` parameter): its ``l1_ratio``, its
default ``delta`` and grid, which families it supports and, for the paper's
early-stopped glmnet weights, its own solver. Every other scheme is solved by
the penalized loss the family carries (``Family.loss``, its
:meth:`vcpcr._losses.PenalizedLoss.penalized_path`); :meth:`WeightScheme.path`
is the one place where a scheme meets a family's loss, and
:func:`weights_for_grid` the one route from a ``weights`` parameter to the
weights.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vcpcr._checks import (
    check_array,
    check_choice,
    check_same_rows,
    check_scalar,
    check_weights,
    check_y_length,
)
from vcpcr._families import Family, family_instance
from vcpcr._scaling import relative_weights
from vcpcr._scaling import standardize as _standardize
from vcpcr._solvers.glmnet import glmnet_weights
from vcpcr._solvers.kkt import WeightsPath
from vcpcr.exceptions import VCPCRWarning

__all__ = [
    "DEFAULT_DELTA",
    "SCHEMES",
    "WeightScheme",
    "compute_weights",
    "lasso_delta_max",
]

#: glmnet's ``alpha`` of the ``"enet"`` weights (see :func:`compute_weights`).
ENET_L1_RATIO = 0.05

#: A scheme's own solver: ``(Xs, y, deltas, l1_ratio) -> weights (n_deltas, p)``.
Solver = Callable[
    [NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], float],
    NDArray[np.float64],
]


def lasso_delta_max(
    Xs: NDArray[np.float64],
    y: NDArray[np.float64],
    family: str | Family = "gaussian",
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
    fam = family_instance(family, owner="lasso_delta_max")
    return fam.loss.lasso_delta_max(Xs, y) / l1_ratio


@dataclass(frozen=True)
class WeightScheme:
    """A step-0 weight scheme: what the ``weights`` parameter's name stands for.

    Parameters
    ----------
    name : str
        The value of the ``weights`` parameter.
    l1_ratio : float or None
        glmnet's ``alpha``: 0 is the ridge, 1 the lasso, in between the
        elastic net. None: no penalty (all-ones weights, or given ones).
    default_delta : float or None, default=None
        The ``delta`` of :class:`VCPCR` and :func:`compute_weights` when
        ``delta`` is None (see :func:`compute_weights`, Notes).
    grid : tuple of float, default=()
        The default ``deltas`` of :class:`VCPCRCV`: absolute, or, for a
        scheme with an l1 part, fractions of ``delta_max`` (see
        :func:`lasso_delta_max`; no finite ridge penalty zeroes the weights).
    families : tuple of str or None, default=None
        The families the scheme supports (None: all of them).
    solver : callable or None, default=None
        The scheme's own solver, ``solver(Xs, y, deltas, l1_ratio)``, for
        weights that are not a family's penalized path (the paper's
        early-stopped glmnet); it sees the problem after the family's
        :meth:`~vcpcr._losses.PenalizedLoss.partial_out`, so its ``families``
        must partial covariates out exactly. None: the family's
        :meth:`~vcpcr._losses.PenalizedLoss.penalized_path`.
    free_l1_ratio : bool, default=False
        Whether :func:`compute_weights`' ``l1_ratio`` replaces the scheme's
        (the elastic net's mixing; see :meth:`with_l1_ratio`).
    """

    name: str
    l1_ratio: float | None
    default_delta: float | None = None
    grid: tuple[float, ...] = ()
    families: tuple[str, ...] | None = None
    solver: Solver | None = None
    free_l1_ratio: bool = False

    @property
    def penalized(self) -> bool:
        """Whether the weights are a penalized fit (then every ``delta > 0``)."""
        return self.l1_ratio is not None

    @property
    def relative(self) -> bool:
        """Whether the scheme has an l1 part, so a ``delta_max`` (its grid's unit)."""
        return bool(self.l1_ratio)

    def with_l1_ratio(self, l1_ratio: float) -> WeightScheme:
        """Return the scheme with the mixing ``l1_ratio`` if its mixing is free.

        Only a scheme with ``free_l1_ratio`` (the elastic net) takes
        :func:`compute_weights`' ``l1_ratio``; the others keep theirs.
        """
        return replace(self, l1_ratio=l1_ratio) if self.free_l1_ratio else self

    def _mismatch(self, family: Family, covariates: bool, name: str) -> str | None:
        """Say why the scheme cannot serve ``family``, or None."""
        if self.families is not None and family.name not in self.families:
            needs = " or ".join(f"family={f!r}" for f in self.families)
            return f"{name}={self.name!r} needs {needs}"
        if (
            covariates
            and self.l1_ratio is not None
            and not family.loss.takes_covariates(self.l1_ratio)
        ):
            return (
                f"{name}={self.name!r} with covariates needs an unpenalized "
                f"block that the family's solver lacks (family='gaussian' "
                f"partials covariates out)"
            )
        return None

    def check_family(
        self,
        family: Family,
        *,
        covariates: bool = False,
        owner: str,
        name: str = "weights",
    ) -> None:
        """Raise a ValueError if the scheme cannot serve ``family``.

        The one place that pairs schemes with families: a scheme limited to
        some families (``families``), or a scheme asked to adjust for
        ``covariates`` by a family whose solver at its ``l1_ratio`` has no
        unpenalized block (the ridge of binomial and cox). The message lists
        the schemes that would serve.
        """
        problem = self._mismatch(family, covariates, name)
        if problem is None:
            return
        usable = [
            s.name for s in SCHEMES.values() if not s._mismatch(family, covariates, "")
        ]
        context = "covariates and " if covariates else ""
        raise ValueError(
            f"The {name!r} parameter of {owner} does not fit "
            f"family={family.name!r}: {problem}. Use one of {usable} with "
            f"{context}family={family.name!r}."
        )

    def check_deltas(
        self, delta: Any, *, owner: str, name: str = "delta"
    ) -> NDArray[np.float64]:
        """Validate ``delta`` (scalar or 1-d array); return it as an array.

        The one ``delta`` rule, used by :class:`VCPCR`, :class:`VCPCRCV` and
        :func:`compute_weights`: finite numbers, each ``> 0`` (a penalized fit
        does not exist without its penalty when ``n_features >= n_samples``).
        ``name`` is the argument's name in ``owner``'s signature
        (``VCPCRCV`` takes ``deltas``).
        """
        if isinstance(delta, str | bytes) or np.asarray(delta).dtype.kind not in "iuf":
            raise TypeError(
                f"The {name!r} parameter of {owner} must be a number or a 1-d "
                f"array of numbers. Got {delta!r} instead."
            )
        arr = np.atleast_1d(np.asarray(delta, dtype=np.float64))
        if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
            raise ValueError(
                f"The {name!r} parameter of {owner} must be a finite number or a "
                f"1-d array of them. Got {delta!r} instead."
            )
        if np.any(arr <= 0) and self.penalized:
            raise ValueError(
                f"The {name!r} parameter of {owner} must be > 0 for {self.name!r} "
                f"weights (a penalized fit; without a penalty it does not exist "
                f"when n_features >= n_samples). Got {delta!r} instead. Use a "
                f"small positive value (e.g. 1e-4), or weights='identity' for "
                f"unsupervised clustering."
            )
        if np.any(arr <= 0):
            raise ValueError(
                f"The {name!r} parameter of {owner} must be > 0. Got {delta!r} "
                f"instead. {self.name!r} weights have no penalty: leave {name} "
                f"at None."
            )
        return arr

    def delta_max(
        self, Xs: NDArray[np.float64], target: Any, family: Family
    ) -> float | None:
        """Return the unit of the scheme's grid on the data (None: absolute)."""
        if not self.l1_ratio:
            return None
        return lasso_delta_max(Xs, target, family, l1_ratio=self.l1_ratio)

    def default_deltas(self, delta_max: float | None) -> NDArray[np.float64]:
        """Return the default ``deltas`` of :class:`VCPCRCV`.

        ``delta_max`` is the grid's unit on the data (see :meth:`delta_max`).
        """
        grid = np.asarray(self.grid, dtype=np.float64)
        if not self.relative:
            return grid
        if delta_max is None:
            raise ValueError(f"delta_max is required for the {self.name} grid.")
        return delta_max * grid

    def path(
        self,
        Xs: NDArray[np.float64],
        target: NDArray[np.float64],
        deltas: ArrayLike,
        *,
        family: Family,
        covariates: NDArray[np.float64] | None = None,
    ) -> WeightsPath:
        """Weights for every delta (rows), on validated, standardized input.

        ``deltas`` are valid penalties (see :meth:`check_deltas`).
        ``covariates`` (standardized) are unpenalized: partialled out
        (gaussian) or an unpenalized block of the family's loss' solver (the
        pairing checked by :meth:`check_family`). A scheme without a penalty
        gives ones, one row per delta. The path's ``kkt`` holds each row's
        relative KKT violation (:mod:`vcpcr._solvers.kkt`); None without a
        penalty or for a scheme's own solver (the paper's early-stopped
        glmnet weights are no optimum by design).
        """
        grid = np.asarray(deltas, dtype=np.float64)
        if self.l1_ratio is None:
            return WeightsPath(np.ones((grid.size, Xs.shape[1])), None)
        loss = family.loss
        if self.solver is None:
            return loss.penalized_path(Xs, target, grid, self.l1_ratio, covariates)
        if covariates is not None:
            Xs, target, _ = loss.partial_out(Xs, target, covariates)
        return WeightsPath(self.solver(Xs, target, grid, self.l1_ratio), None)


def _decades(start: float, stop: float, num: int) -> tuple[float, ...]:
    """``10**linspace(start, stop, num)``: a grid of penalties."""
    return tuple(10 ** np.linspace(start, stop, num))


#: The weight schemes: the ``weights`` parameter's values and their objects.
#: Grids (see :func:`vcpcr._tuning.default_grid`): elastic-net and lasso
#: ``delta_max * 10**linspace(-2, log10(0.5), 6)`` (the paper's lasso grid
#: ends at 0.2; its lower end ``1e-5 delta_max`` is an almost unpenalized fit
#: that only saturates at ``n`` features; the weights study chose 0.02-0.05
#: for the elastic net). Ridge ``(1e-4, 1e-2, 1)``: the paper's range
#: ``[1e-4, 1e-2]`` extended to 1, the end of the range over which the
#: clustering accuracy is flat (see :func:`compute_weights`); since it is
#: flat there, three values suffice (the grid's cost is linear in its size).
#: The paper's glmnet weights get the paper's grids, with five values:
#: ``10**linspace(-4, -2, 5)`` (``"glmnet_ridge"``) and ``delta_max *
#: 10**linspace(-5, log10(0.2), 5)`` (``"glmnet_lasso"``).
SCHEMES: dict[str, WeightScheme] = {
    scheme.name: scheme
    for scheme in (
        WeightScheme(
            "enet",
            ENET_L1_RATIO,
            0.5,
            _decades(-2, np.log10(0.5), 6),
            free_l1_ratio=True,
        ),
        WeightScheme("ridge", 0.0, 0.01, _decades(-4, 0, 3)),
        WeightScheme("lasso", 1.0, 0.05, _decades(-2, np.log10(0.5), 6)),
        WeightScheme("identity", None),
        WeightScheme(
            "glmnet_ridge",
            0.0,
            0.0036,
            _decades(-4, -2, 5),
            families=("gaussian",),
            solver=glmnet_weights,
        ),
        WeightScheme(
            "glmnet_lasso",
            1.0,
            0.0004,
            _decades(-5, np.log10(0.2), 5),
            families=("gaussian",),
            solver=glmnet_weights,
        ),
    )
}

#: The scheme of weights the user gives (not registered: not a name).
GIVEN = WeightScheme("given", None)

#: Default penalty of each weight scheme (see :func:`compute_weights`, Notes).
DEFAULT_DELTA = {
    name: scheme.default_delta
    for name, scheme in SCHEMES.items()
    if scheme.default_delta is not None
}


def scheme_of(weights: Any) -> WeightScheme:
    """Return the scheme of a validated ``weights`` parameter (GIVEN for values)."""
    return SCHEMES[weights] if isinstance(weights, str) else GIVEN


def check_scheme(
    weights: Any,
    family: Family,
    n_features: int,
    *,
    covariates: bool = False,
    owner: str,
) -> WeightScheme:
    """Validate a ``weights`` parameter for ``family``; return its scheme.

    A registered name or one weight per feature (see
    :func:`vcpcr._checks.check_weights`), whose scheme serves ``family``
    (with ``covariates``, see :meth:`WeightScheme.check_family`).
    """
    check_weights(weights, n_features, owner=owner, methods=tuple(SCHEMES))
    scheme = scheme_of(weights)
    scheme.check_family(family, covariates=covariates, owner=owner)
    return scheme


def scheme_delta(weights: Any, delta: float | None) -> float | None:
    """Return the ``delta`` a fit with ``weights`` uses (None: fixed weights).

    ``"identity"`` and given weights have no penalty; a penalized scheme
    uses ``delta`` or, when it is None, its default.
    """
    scheme = scheme_of(weights)
    if not scheme.penalized:
        return None
    return scheme.default_delta if delta is None else float(delta)


def compute_weights(
    X: ArrayLike,
    y: ArrayLike,
    method: str = "ridge",
    *,
    delta: float | ArrayLike | None = None,
    family: str | Family = "gaussian",
    standardize: bool = True,
    l1_ratio: float = ENET_L1_RATIO,
) -> NDArray[np.float64]:
    r"""Compute the VC-PCR feature weights (step 0).

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
        the order of the columns (see :func:`vcpcr._solvers.glmnet.glmnet_gaussian`);
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
        invalid ``delta``, a scheme the family does not support (the glmnet
        ones need ``family="gaussian"``), or a Cox lasso/elastic net whose
        first step below ``delta_max`` cannot be fitted (see
        :func:`vcpcr._solvers.cox.cox_lasso_path`).

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
    features): the clustering MCC of VC-PCR-Ridge is flat for ridge
    ``delta`` between 1e-4 and 1 (e.g. 0.86-0.87 in configuration 2) and
    drops for ``delta >= 3`` (0.79 at 100, where the weights tend to the
    marginal correlations). The ridge default 0.01 is the top of the paper's
    grid (``10**linspace(-4, -2, 10)``), inside that flat region. Generalized
    cross-validation is no guide here: with ``p > n`` it always picks the
    smallest ``delta`` (the interpolating fit). For the lasso,
    ``delta_max = max_j |cor(x_j, y)| (n-1)/n`` zeroes every weight; the
    default 0.05 (keeping about 30 of 200 features on that simulation) gave
    the best clustering MCC among 0.005-0.2, though the differences are small.

    Examples
    --------
    >>> from vcpcr import compute_weights
    >>> from vcpcr.simulate import make_paper_data
    >>> data = make_paper_data(random_state=0)  # 200 features, 20 active
    >>> active = data.labels >= 0
    >>> w = compute_weights(data.X, data.y, "ridge")  # the default delta, 0.01
    >>> bool(abs(w[active]).mean() > 2 * abs(w[~active]).mean())
    True
    >>> W = compute_weights(data.X, data.y, "lasso", delta=[0.05, 0.2])
    >>> (W != 0).sum(axis=1)  # one row per delta; fewer kept at the larger
    array([36, 13])
    """
    check_choice(method, "method", tuple(SCHEMES), owner="compute_weights")
    check_same_rows(X, y)
    fam = family_instance(family, owner="compute_weights")
    check_scalar(
        l1_ratio,
        "l1_ratio",
        numbers.Real,
        owner="compute_weights",
        min_val=0.0,
        max_val=1.0,
        include_min=False,
    )
    scheme = SCHEMES[method].with_l1_ratio(float(l1_ratio))
    scheme.check_family(fam, owner="compute_weights", name="method")
    Xa = check_array(X, "X", min_samples=2, allow_constant=not standardize)
    # the weights target on standardized data (the gaussian response
    # standardized), else the step-2 outcome (the raw response)
    prepared = fam.prepare(y)
    ya = prepared.weights_target if standardize else prepared.outcome
    check_y_length(Xa.shape[0], ya)
    scalar = delta is None or isinstance(delta, numbers.Real)
    if scheme.penalized:
        deltas = scheme.check_deltas(
            scheme.default_delta if delta is None else delta,
            owner="compute_weights",
        )
    else:  # no penalty: delta only sets the number of rows
        deltas = np.zeros(1 if delta is None else np.size(delta))
    Xs = _standardize(Xa)[0] if standardize else Xa
    W = scheme.path(Xs, ya, deltas, family=fam).coef
    return W[0] if scalar else W


def weights_for_grid(
    Xs: NDArray[np.float64],
    target: NDArray[np.float64],
    weights: Any,
    deltas: Iterable[float | None],
    family: str | Family,
    *,
    covariates: NDArray[np.float64] | None = None,
    stacklevel: int = 1,
    delta_name: str = "delta",
) -> WeightsPath:
    """Step-0 weights of every ``delta`` (rows) and their KKT, on standardized data.

    The one route from a weight scheme to the weights, for :class:`VCPCR`,
    :class:`VCPCRCV` (per fold) and ``vcpcr benchmark``: a user array is
    validated and returned as one row, ``"identity"`` is one row of ones, a
    penalized scheme gives one row per ``delta`` (``None`` meaning its
    default). ``target`` is the family's weights target (the standardized
    response, 0/1 labels, or ``(time, event)`` columns). ``covariates``
    (standardized columns, or None) are adjusted for without penalty (see
    :meth:`WeightScheme.path`; the caller has checked the pairing with
    :func:`check_scheme`); ``delta`` stays the features' penalty.

    Returns the weights with their relative KKT violations (None without a
    penalty, see :meth:`WeightScheme.path`). Warns (VCPCRWarning,
    ``stacklevel`` frames above the caller) when the
    weights of some ``delta`` are all zero: no feature can then be selected.
    A penalized Cox path that cannot be fitted raises a ValueError in the
    estimators' terms (their ``weights`` and ``delta_name``, the estimator's
    name of ``delta``; :func:`vcpcr._solvers.cox.cox_lasso_path`'s own message, its
    cause, speaks of :func:`compute_weights`' ``l1_ratio``).
    """
    fam = family_instance(family, owner="weights_for_grid")
    p = Xs.shape[1]
    given = check_weights(weights, p, owner="weights", methods=tuple(SCHEMES))
    if not isinstance(given, str):
        return WeightsPath(relative_weights(given)[None, :], None)
    scheme = SCHEMES[given]
    grid = (
        scheme.check_deltas(
            [scheme.default_delta if d is None else d for d in deltas],
            owner="weights",
        )
        if scheme.penalized
        else np.zeros(1)  # no penalty: one row
    )
    try:
        path = scheme.path(Xs, target, grid, family=fam, covariates=covariates)
    except ValueError as exc:
        if not fam.loss.may_diverge or not scheme.relative:
            raise
        raise ValueError(
            _cox_path_failed(given, covariates is not None, delta_name)
        ) from exc
    zero = ~path.coef.any(axis=1)
    if zero.any():
        at = ", ".join(f"{d:g}" for d in grid[zero])
        warnings.warn(
            f"All {weights} weights are zero at delta={at}: no feature can be "
            f"selected and the model predicts a constant. Lower delta.",
            VCPCRWarning,
            stacklevel=stacklevel + 1,
        )
    return path


def _cox_path_failed(weights: str, covariates: bool, delta_name: str) -> str:
    """Say why a penalized Cox path failed, in the estimators' terms."""
    if covariates:
        return (
            f"The {weights!r} weights (step 0: the penalized Cox fit, "
            f"adjusted for the covariates) diverged: nothing can be fitted on "
            f"these data. Likely cause: a covariate, or a level of a categorical "
            f"one, that separates the outcome (few rows, or rows without events: "
            f"its unpenalized coefficient diverges). Merge or drop that level, "
            f"or make it a stratum (strata=); or use larger {delta_name}."
        )
    return (
        f"The {weights!r} weights (step 0: the penalized Cox fit) diverged: "
        f"nothing can be fitted on these data. Use weights='ridge', larger "
        f"{delta_name}, or remove near-duplicate or extreme columns."
    )
