"""Simulated data with a known block structure, including the VC-PCR paper's design.

:func:`make_paper_data` draws a data set of the paper's simulation study;
:func:`make_block_data`, the general generator behind it, takes any blocks,
coefficients and correlation groups and gaussian, binary (logistic) or survival
(Weibull proportional hazards) outcomes. ``X`` is sampled group by group, so
``p = 20,000`` costs no more than drawing ``n x p`` normal numbers.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vcpcr._checks import (
    check_array,
    check_random_state,
    check_scalar,
)
from vcpcr._families import family_instance
from vcpcr._result import TupleResult

__all__ = [
    "SimulatedData",
    "make_block_data",
    "make_paper_data",
    "paper_coef",
    "paper_covariance",
]


_PAPER_BLOCK_SIZES = (5,) * 10
_PAPER_BLOCK_COEFS = (1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0)
# Correlation group of each of the ten blocks of five (-1: independent features).
_PAPER_CORR_GROUPS = {
    1: (0, 0, 1, 1, 2, 2, 3, 3, 4, 5),
    2: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    3: (0, -1, 1, -1, 2, -1, 3, -1, -1, -1),
}


@dataclass(frozen=True, eq=False, repr=False)
class SimulatedData(TupleResult):
    r"""A simulated data set and the truth behind it.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
        The predictors, drawn from :math:`N(0, \Sigma)` (unit variances).
    y : ndarray of shape (n_samples,)
        The response: continuous (gaussian), 0/1 integers (binomial), or the
        observed time ``min(T, C)`` (cox).
    coef : ndarray of shape (n_features,)
        The true coefficients :math:`b`.
    labels : ndarray of shape (n_features,)
        The true clusters: ``0, 1, ...`` for the active blocks in order, ``-1``
        for every inactive feature (one cluster for :mod:`vcpcr.metrics`).
    corr_groups : ndarray of shape (n_features,)
        The correlation group of each feature (equicorrelated within a group,
        uncorrelated across groups); ``-1`` marks independent features.
    cov : ndarray of shape (n_features, n_features) or None
        The covariance matrix :math:`\Sigma` (None unless requested).
    noise_sd : float or None
        Gaussian noise standard deviation :math:`\sigma_\varepsilon` (or None).
    intercept : float
        Intercept of the linear predictor (0.0 for cox: see the baseline hazard).
    event : ndarray of bool of shape (n_samples,) or None
        Cox only: True where ``y`` is an event time, False where it is censored.
    """

    X: NDArray[np.float64]
    y: NDArray[Any]
    coef: NDArray[np.float64]
    labels: NDArray[np.intp]
    corr_groups: NDArray[np.intp]
    cov: NDArray[np.float64] | None
    noise_sd: float | None
    intercept: float
    event: NDArray[np.bool_] | None


def _paper_design(config: int) -> dict[str, Any]:
    """Return the blocks of a paper configuration as ``make_block_data`` takes them."""
    return {
        "block_sizes": _PAPER_BLOCK_SIZES,
        "coefs": _PAPER_BLOCK_COEFS,
        "corr_groups": _PAPER_CORR_GROUPS[config],
        "n_noise": 150,
    }


def paper_coef() -> NDArray[np.float64]:
    """Return the true coefficients of the paper's simulation study.

    Returns
    -------
    ndarray of shape (200,)
        ``+1`` on features 1-5 and 21-25, ``-1`` on 11-15 and 31-35
        (1-based), 0 elsewhere.

    See Also
    --------
    make_paper_data : Draw a data set with these coefficients.

    Examples
    --------
    >>> from vcpcr.simulate import paper_coef
    >>> b = paper_coef()
    >>> b[:12]
    array([ 1.,  1.,  1.,  1.,  1.,  0.,  0.,  0.,  0.,  0., -1., -1.])
    >>> int((b != 0).sum())
    20
    """
    return _block_design(**_paper_design(1))[0]


def paper_covariance(rho: float = 0.6, config: int = 1) -> NDArray[np.float64]:
    """Return the paper's 200 x 200 covariance matrix for one configuration.

    Parameters
    ----------
    rho : float, default=0.6
        Correlation inside a correlated group, in ``[0, 1]`` (the paper uses
        0.3 and 0.6).
    config : {1, 2, 3}, default=1
        1: features 1-10, 11-20, 21-30, 31-40 (each active block with the
        inactive block after it), 41-45 and 46-50 are correlated groups;
        2: each of the ten blocks of five is a correlated group;
        3: only the four active blocks are correlated groups.
        Features 51-200 are always independent.

    Returns
    -------
    ndarray of shape (200, 200)
        Unit diagonal, ``rho`` within a correlated group, 0 elsewhere.

    Raises
    ------
    TypeError, ValueError
        If ``config`` is not 1, 2 or 3 or ``rho`` is not in ``[0, 1]``.

    See Also
    --------
    make_paper_data : Draw data with this covariance.

    Examples
    --------
    >>> from vcpcr.simulate import paper_covariance
    >>> S = paper_covariance(0.6, config=1)
    >>> S.shape
    (200, 200)
    >>> float(S[0, 9]), float(S[0, 10]), float(S[40, 44]), float(S[60, 61])
    (0.6, 0.0, 0.6, 0.0)
    """
    owner = "paper_covariance"
    check_scalar(config, "config", numbers.Integral, owner=owner, min_val=1, max_val=3)
    check_scalar(rho, "rho", numbers.Real, owner=owner, min_val=0.0, max_val=1.0)
    _, groups, _ = _block_design(**_paper_design(int(config)))
    return _dense_covariance(groups, float(rho))


def make_paper_data(
    n_samples: int = 50,
    rho: float = 0.6,
    config: int = 1,
    snr: float = 10.0,
    random_state: Any = None,
) -> SimulatedData:
    r"""Draw one data set of the VC-PCR paper's simulation study.

    ``p = 200`` features: 1-50 form ten blocks of five, in the order
    active, inactive, active, inactive, active, inactive, active, inactive,
    inactive, inactive; 51-200 are independent :math:`N(0, 1)` noise.

    Parameters
    ----------
    n_samples : int, default=50
        Number of observations (the paper uses 25 and 50).
    rho : float, default=0.6
        Correlation inside a correlated group, in ``[0, 1]`` (the paper uses
        0.3 and 0.6).
    config : {1, 2, 3}, default=1
        The correlation structure; see :func:`paper_covariance`.
    snr : float, default=10.0
        Signal-to-noise ratio :math:`b^\top \Sigma b / \sigma_\varepsilon^2`.
    random_state : int, numpy.random.Generator or None, default=None
        Seed or generator for all random draws.

    Returns
    -------
    SimulatedData
        ``X`` (n x 200), ``y``, ``coef`` (:func:`paper_coef`), ``labels``
        (0-3 for the four active blocks, -1 for the 180 inactive features),
        ``corr_groups``, ``cov`` (:func:`paper_covariance`), ``noise_sd``,
        ``intercept`` (0.0) and ``event`` (None).

    Raises
    ------
    TypeError, ValueError
        If an argument has the wrong type or is out of range.

    See Also
    --------
    make_block_data : The general generator (also binary and survival outcomes).
    paper_covariance, paper_coef : The design's :math:`\Sigma` and :math:`b`.

    Notes
    -----
    .. math::

        y_i = x_i^\top b + \varepsilon_i, \quad x_i \sim N_p(0, \Sigma), \quad
        \varepsilon_i \sim N(0, \sigma_\varepsilon^2), \quad
        \sigma_\varepsilon^2 = b^\top \Sigma b / \mathrm{SNR}.

    The true clusters are the four active blocks plus one cluster holding all
    180 inactive features (labelled -1). For binary or survival outcomes on
    this design, call :func:`make_block_data` with ``block_sizes=[5] * 10``,
    ``coefs=[1, 0, -1, 0, 1, 0, -1, 0, 0, 0]``, ``n_noise=150`` and config 1's
    ``corr_groups=[0, 0, 1, 1, 2, 2, 3, 3, 4, 5]``.

    References
    ----------
    .. [1] Marion R., Lederer J., Govaerts B., von Sachs R. VC-PCR: a
       prediction method based on supervised variable selection and
       clustering. Section "Simulated Data".

    Examples
    --------
    >>> from vcpcr.simulate import make_paper_data
    >>> data = make_paper_data(n_samples=50, rho=0.6, config=1, random_state=0)
    >>> data.X.shape, data.y.shape
    ((50, 200), (50,))
    >>> [int((data.labels == k).sum()) for k in (-1, 0, 1, 2, 3)]
    [180, 5, 5, 5, 5]
    >>> round(data.noise_sd**2, 2)  # b' Sigma b / snr = 4 * (5 + 20 * 0.6) / 10
    6.8
    """
    owner = "make_paper_data"
    check_scalar(config, "config", numbers.Integral, owner=owner, min_val=1, max_val=3)
    check_scalar(n_samples, "n_samples", numbers.Integral, owner=owner, min_val=1)
    check_scalar(rho, "rho", numbers.Real, owner=owner, min_val=0.0, max_val=1.0)
    check_scalar(snr, "snr", numbers.Real, owner=owner, min_val=0, include_min=False)
    return make_block_data(
        n_samples,
        **_paper_design(int(config)),
        rho=rho,
        snr=snr,
        return_cov=True,
        random_state=random_state,
    )


def make_block_data(
    n_samples: int,
    block_sizes: Sequence[int] | ArrayLike,
    coefs: ArrayLike,
    *,
    corr_groups: ArrayLike | None = None,
    rho: float = 0.6,
    n_noise: int = 0,
    family: str = "gaussian",
    snr: float | None = None,
    noise_sd: float | None = None,
    intercept: float | None = None,
    prevalence: float | None = None,
    censoring: float = 0.3,
    weibull_shape: float = 1.0,
    baseline_hazard: float = 1.0,
    return_cov: bool = False,
    random_state: Any = None,
) -> SimulatedData:
    r"""Draw data whose features come in blocks with a common coefficient.

    The first ``sum(block_sizes)`` features form the blocks, in order; block
    ``k`` has ``block_sizes[k]`` features, each with coefficient
    ``coefs[k]``. Blocks sharing a ``corr_groups`` id form one equicorrelated
    group. ``n_noise`` independent :math:`N(0, 1)` features follow.

    Parameters
    ----------
    n_samples : int
        Number of observations.
    block_sizes : sequence of int
        Number of features in each block (each >= 1).
    coefs : array-like of shape (n_blocks,)
        The coefficient shared by the features of each block (0 = inactive).
    corr_groups : array-like of int of shape (n_blocks,), default=None
        Correlation group of each block: the features of all blocks with the
        same id are equicorrelated with correlation ``rho``; ``-1`` makes a
        block's features independent. None puts each block in its own group.
    rho : float, default=0.6
        Correlation inside a group, in ``[0, 1]``.
    n_noise : int, default=0
        Number of independent noise features appended after the blocks.
    family : {"gaussian", "binomial", "cox"}, default="gaussian"
        The outcome model (see Notes).
    snr : float, default=None
        Gaussian only: signal-to-noise ratio
        :math:`b^\top \Sigma b / \sigma_\varepsilon^2`. None means 10 unless
        ``noise_sd`` is given; give one of the two.
    noise_sd : float, default=None
        Gaussian only: the noise standard deviation, instead of ``snr`` (e.g.
        for a null model with all coefficients zero).
    intercept : float, default=None
        Gaussian or binomial: intercept of the linear predictor (None means 0).
    prevalence : float, default=None
        Binomial only: target :math:`P(y = 1)` in ``(0, 1)``; the intercept is
        solved so that the population prevalence equals it. Exclusive with
        ``intercept``.
    censoring : float, default=0.3
        Cox only: the expected fraction of censored observations, in
        ``[0, 1)``.
    weibull_shape : float, default=1.0
        Cox only: shape :math:`k` of the Weibull event times (1 gives
        exponential times).
    baseline_hazard : float, default=1.0
        Cox only: the baseline hazard scale :math:`\lambda_0`.
    return_cov : bool, default=False
        Also return the dense ``n_features x n_features`` covariance matrix
        (leave False for large ``p``: it needs ``8 p^2`` bytes).
    random_state : int, numpy.random.Generator or None, default=None
        Seed or generator for all random draws.

    Returns
    -------
    SimulatedData
        The data and the truth; ``labels`` numbers the blocks with non-zero
        coefficient ``0, 1, ...`` in order and gives ``-1`` to the others.

    Raises
    ------
    TypeError, ValueError
        If an argument has the wrong type or value, the lengths of
        ``block_sizes``, ``coefs`` and ``corr_groups`` differ, or a
        family-specific argument is given for another family.

    See Also
    --------
    make_paper_data : The paper's design (a thin wrapper around this one).

    Notes
    -----
    With :math:`\eta_i = x_i^\top b` and :math:`x_i \sim N(0, \Sigma)` (so
    :math:`\eta_i \sim N(0, b^\top \Sigma b)`):

    - gaussian: :math:`y_i = \beta_0 + \eta_i + \varepsilon_i`,
      :math:`\varepsilon_i \sim N(0, \sigma_\varepsilon^2)`;
    - binomial: :math:`y_i \sim \mathrm{Bernoulli}(\mathrm{expit}(\beta_0 +
      \eta_i))`; with ``prevalence``, :math:`\beta_0` solves
      :math:`E[\mathrm{expit}(\beta_0 + \eta)] =` ``prevalence``;
    - cox: event times with hazard
      :math:`h(t | x_i) = \lambda_0 k t^{k-1} e^{\eta_i}` (Weibull
      proportional hazards) and independent censoring times with hazard
      :math:`c k t^{k-1}` (same shape), so that
      :math:`P(C < T | \eta) = \mathrm{expit}(\log(c / \lambda_0) - \eta)`;
      :math:`c` solves :math:`E[P(C < T | \eta)] =` ``censoring``. ``y`` is
      :math:`\min(T, C)` and ``event`` is :math:`T \le C`.

    A correlated group is drawn as :math:`\sqrt{\rho} z + \sqrt{1 - \rho} e_j`
    with one shared :math:`z`: no ``p x p`` matrix is built or factorized.

    Examples
    --------
    >>> from vcpcr.simulate import make_block_data
    >>> data = make_block_data(
    ...     100, [10, 10, 10], [0.5, 0.0, -0.5], n_noise=1000, random_state=0
    ... )
    >>> data.X.shape
    (100, 1030)
    >>> [int((data.labels == k).sum()) for k in (-1, 0, 1)]
    [1010, 10, 10]
    >>> surv = make_block_data(
    ...     200, [5, 5], [0.3, -0.3], family="cox", censoring=0.25, random_state=1
    ... )
    >>> bool((surv.y > 0).all()), surv.event.dtype
    (True, dtype('bool'))
    """
    owner = "make_block_data"
    check_scalar(n_samples, "n_samples", numbers.Integral, owner=owner, min_val=1)
    check_scalar(n_noise, "n_noise", numbers.Integral, owner=owner, min_val=0)
    check_scalar(rho, "rho", numbers.Real, owner=owner, min_val=0.0, max_val=1.0)
    distribution = family_instance(family, owner=owner).distribution
    if not isinstance(return_cov, bool | np.bool_):
        raise TypeError(
            f"The 'return_cov' parameter of {owner} must be a bool. "
            f"Got {return_cov!r} instead."
        )
    coef, groups, labels = _block_design(block_sizes, coefs, corr_groups, n_noise)
    outcome_args = {
        "snr": snr,
        "noise_sd": noise_sd,
        "intercept": intercept,
        "prevalence": prevalence,
        "censoring": censoring,
        "weibull_shape": weibull_shape,
        "baseline_hazard": baseline_hazard,
    }
    opts = _check_outcome_args(family, distribution.simulation_args, outcome_args)
    rng = check_random_state(random_state)
    X = _sample_x(rng, int(n_samples), groups, float(rho))
    with np.errstate(over="ignore", invalid="ignore"):  # checked just below
        signal_var = _signal_variance(coef, groups, float(rho))
        eta = X @ coef
    if not (np.isfinite(signal_var) and np.all(np.isfinite(eta))):
        raise ValueError(
            f"coefs up to {np.max(np.abs(coef)):.3g} make the linear predictor "
            f"X @ coef or its variance b'Sigma b ({signal_var:.3g}) beyond "
            f"float64: use smaller coefs (below about 1e150) and rescale the "
            f"outcome afterwards if that scale is needed."
        )
    with np.errstate(over="ignore", invalid="ignore"):
        y, noise, icpt, event = distribution.simulate(rng, eta, signal_var, opts)
    if y.dtype.names is None and not np.all(np.isfinite(y)):
        raise ValueError(
            f"The simulated outcome is beyond float64 ({int(np.sum(~np.isfinite(y)))} "
            f"non-finite values): use a smaller noise_sd, intercept or coefs."
        )
    cov = _dense_covariance(groups, float(rho)) if return_cov else None
    return SimulatedData(X, y, coef, labels, groups, cov, noise, icpt, event)


def _check_int_vector(values: Any, name: str, low: int) -> NDArray[np.intp]:
    """Return ``values`` as a 1-d array of integers >= ``low``, or raise."""
    arr = check_array(values, name, ensure_2d=False)
    if np.any(arr != np.round(arr)) or np.any(arr < low):
        raise ValueError(
            f"The {name!r} parameter of make_block_data must contain integers "
            f">= {low}. Got {np.asarray(values).tolist()!r} instead."
        )
    return arr.astype(np.intp)


def _block_design(
    block_sizes: Any, coefs: Any, corr_groups: Any, n_noise: int
) -> tuple[NDArray[np.float64], NDArray[np.intp], NDArray[np.intp]]:
    """Validate the blocks; return the per-feature coef, corr group and label."""
    sizes = _check_int_vector(block_sizes, "block_sizes", 1)
    block_coefs = check_array(coefs, "coefs", ensure_2d=False)
    block_groups = (
        np.arange(sizes.size)
        if corr_groups is None
        else _check_int_vector(corr_groups, "corr_groups", -1)
    )
    for name, arr in (("coefs", block_coefs), ("corr_groups", block_groups)):
        if arr.size != sizes.size:
            raise ValueError(
                f"block_sizes has {sizes.size} blocks but {name} has {arr.size} "
                f"entries; give one per block."
            )
    active = block_coefs != 0
    block_labels = np.where(active, np.cumsum(active) - 1, -1)
    noise = np.full(int(n_noise), -1, dtype=np.intp)
    coef = np.concatenate([np.repeat(block_coefs, sizes), np.zeros(noise.size)])
    groups = np.concatenate([np.repeat(block_groups, sizes), noise]).astype(np.intp)
    labels = np.concatenate([np.repeat(block_labels, sizes), noise]).astype(np.intp)
    return coef, groups, labels


# The outcome arguments whose default is None: each applies to the families
# whose response simulator takes it (``Distribution.simulation_args``).
_OPTIONAL_ARGS = ("snr", "noise_sd", "intercept", "prevalence")
# (min, max, include_min, include_max) of the outcome arguments.
_OUTCOME_BOUNDS = {
    "snr": (0.0, None, False, True),
    "noise_sd": (0.0, None, True, True),
    "intercept": (None, None, True, True),
    "prevalence": (0.0, 1.0, False, False),
    "censoring": (0.0, 1.0, True, False),
    "weibull_shape": (0.0, None, False, True),
    "baseline_hazard": (0.0, None, False, True),
}


def _check_outcome_args(
    family: str, accepted: frozenset[str], kw: dict[str, Any]
) -> dict[str, float | None]:
    """Validate the outcome arguments of :func:`make_block_data` for ``family``.

    ``accepted`` are the None-default arguments its simulator takes.
    """
    owner = "make_block_data"
    for name in _OPTIONAL_ARGS:
        if kw[name] is not None and name not in accepted:
            raise ValueError(
                f"The {name!r} parameter of {owner} does not apply to "
                f"family={family!r}. Got {kw[name]!r}; leave it as None."
            )
    for a, b in (("snr", "noise_sd"), ("intercept", "prevalence")):
        if kw[a] is not None and kw[b] is not None:
            raise ValueError(
                f"Give either {a!r} or {b!r} to {owner}, not both. "
                f"Got {a}={kw[a]!r} and {b}={kw[b]!r}."
            )
    for name, (lo, hi, inc_lo, inc_hi) in _OUTCOME_BOUNDS.items():
        if kw[name] is not None:
            check_scalar(
                kw[name],
                name,
                numbers.Real,
                owner=owner,
                min_val=lo,
                max_val=hi,
                include_min=inc_lo,
                include_max=inc_hi,
            )
    return {k: (None if v is None else float(v)) for k, v in kw.items()}


def _sample_x(
    rng: np.random.Generator, n: int, groups: NDArray[np.intp], rho: float
) -> NDArray[np.float64]:
    """Draw ``X`` with unit variances, equicorrelation ``rho`` within a group."""
    X = rng.standard_normal((n, groups.size))
    grouped = groups >= 0
    if not grouped.any():
        return X
    ids, inverse = np.unique(groups[grouped], return_inverse=True)
    Z = rng.standard_normal((n, ids.size))
    X[:, grouped] *= np.sqrt(1.0 - rho)
    X[:, grouped] += np.sqrt(rho) * Z[:, inverse]
    return X


def _signal_variance(
    coef: NDArray[np.float64], groups: NDArray[np.intp], rho: float
) -> float:
    """Return ``b' Sigma b`` in O(p) from the group structure."""
    grouped = groups >= 0
    _, inverse = np.unique(groups[grouped], return_inverse=True)
    b = coef[grouped]
    sums = np.bincount(inverse, weights=b)
    squares = np.bincount(inverse, weights=b**2)
    return float(coef @ coef + rho * (sums @ sums - squares.sum()))


def _dense_covariance(groups: NDArray[np.intp], rho: float) -> NDArray[np.float64]:
    """Build the dense covariance matrix of the group structure."""
    same = (groups[:, None] == groups[None, :]) & (groups[:, None] >= 0)
    cov = np.where(same, rho, 0.0)
    np.fill_diagonal(cov, 1.0)
    return cov
