r"""The response math of each outcome family, for the solvers and the simulator.

As glum's ``_distribution`` and statsmodels' ``families``: what a solver
needs to know about a response, apart from the solver itself. Each outcome
family (:mod:`vcpcr._families`) holds one of these objects as its
``distribution``; the step-0 solvers, the step-2 batched fits and the
scorers, which sit below the families, import the objects directly.

* :data:`NORMAL`: gaussian responses (least squares needs nothing more than
  its simulator here);
* :data:`LOGISTIC`: binary responses with the logit link: the mean
  ``expit(eta)``, the working weights ``mu (1 - mu)``, the loss (the mean
  negative log-likelihood) and the log-likelihood, used by the elastic-net
  and ridge weights, the batched logistic fits and Firth's estimate;
* :data:`PROPORTIONAL_HAZARDS`: survival responses; the partial likelihood
  itself (risk sets, Breslow and Efron ties) is
  :mod:`vcpcr._solvers.partial_likelihood`, which the Cox solvers use directly.

Each also draws a response from a linear predictor (:meth:`Distribution.\
simulate`, behind :func:`vcpcr.simulate.make_block_data`) and names the
simulator's arguments it takes (:attr:`Distribution.simulation_args`).
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq
from scipy.special import expit

from vcpcr._solvers.partial_likelihood import efron_loglik, efron_loglik_counts

__all__ = [
    "LOGISTIC",
    "NORMAL",
    "PROPORTIONAL_HAZARDS",
    "Distribution",
    "Logistic",
    "Normal",
    "ProportionalHazards",
    "SimulatedResponse",
]

_Float = NDArray[np.float64]
_Rng = np.random.Generator
#: The validated outcome arguments of ``make_block_data`` (floats or None).
_Opts = dict[str, Any]

# Standard-normal quadrature grid for E[expit(a + sd * Z)] (trapezoid rule).
_Z_GRID = np.linspace(-10.0, 10.0, 4001)
_Z_WEIGHTS = np.exp(-0.5 * _Z_GRID**2)
_Z_WEIGHTS /= _Z_WEIGHTS.sum()


class SimulatedResponse(NamedTuple):
    """A simulated response and the truth behind it (see ``SimulatedData``)."""

    y: NDArray[Any]
    noise_sd: float | None
    intercept: float
    event: NDArray[np.bool_] | None


class Distribution(abc.ABC):
    """The math of one kind of response."""

    #: The None-default outcome arguments of ``make_block_data`` it takes.
    simulation_args: ClassVar[frozenset[str]]

    @abc.abstractmethod
    def deviance(
        self, eta: _Float, outcome: _Float, strata: NDArray[Any] | None = None
    ) -> _Float:
        """Deviance per row of each row of a stack ``eta`` of linear predictors.

        ``eta`` is ``(n_fits, n_samples)`` and finite; ``outcome`` is the
        step-2 outcome (``y``; 0/1; ``(time, event)`` columns); ``strata``
        labels a stratified Cox model's rows. Lower is better.
        """

    def resampled_deviance(
        self,
        eta: _Float,
        outcome: _Float,
        strata: NDArray[Any] | None,
        counts: NDArray[np.intp],
    ) -> _Float:
        """:meth:`deviance` of resamples given by their row counts.

        ``counts`` is ``(n_resamples, n_samples)``: resample ``b`` holds row
        ``i`` ``counts[b, i]`` times (and has ``n_samples`` rows). Returns
        ``(n_resamples, n_fits)``. A deviance that is a mean of row terms
        (:meth:`row_deviance`) is one product with the counts.
        """
        return np.asarray(counts @ self.row_deviance(eta, outcome).T / eta.shape[1])

    def row_deviance(self, eta: _Float, outcome: _Float) -> _Float:
        """Each row's term of :meth:`deviance`, ``(n_fits, n_samples)``."""
        raise NotImplementedError(f"{type(self).__name__}'s deviance has no row terms")

    @abc.abstractmethod
    def simulate(
        self, rng: _Rng, eta: _Float, signal_var: float, opts: _Opts
    ) -> SimulatedResponse:
        """Draw a response from the linear predictor ``eta``.

        ``signal_var`` is the population variance of ``eta`` and ``opts``
        the validated outcome arguments of ``make_block_data`` (floats or
        None).
        """


def _logistic_normal_mean(a: float, sd: float) -> float:
    """Return ``E[expit(a + sd * Z)]`` for ``Z ~ N(0, 1)``."""
    return float(_Z_WEIGHTS @ LOGISTIC.mean(a + sd * _Z_GRID))


def _solve_logistic_normal(target: float, sd: float) -> float:
    """Return the ``a`` with ``E[expit(a + sd * Z)] = target``."""
    span = 50.0 + 12.0 * sd
    return float(
        brentq(lambda a: _logistic_normal_mean(a, sd) - target, -span, span, xtol=1e-12)
    )


class Normal(Distribution):
    """Gaussian responses."""

    simulation_args = frozenset({"snr", "noise_sd", "intercept"})
    #: The signal-to-noise ratio when neither ``snr`` nor ``noise_sd`` is given.
    default_snr = 10.0

    def deviance(
        self, eta: _Float, outcome: _Float, strata: NDArray[Any] | None = None
    ) -> _Float:
        """Return the mean squared error of each row (``strata`` unused)."""
        return np.asarray(np.mean(self.row_deviance(eta, outcome), axis=1))

    def row_deviance(self, eta: _Float, outcome: _Float) -> _Float:
        """Squared errors."""
        return np.asarray((outcome[None, :] - eta) ** 2)

    def simulate(
        self, rng: _Rng, eta: _Float, signal_var: float, opts: _Opts
    ) -> SimulatedResponse:
        """Gaussian response with the requested SNR or noise sd."""
        if opts["noise_sd"] is not None:
            sd = opts["noise_sd"]
        elif signal_var == 0.0:
            raise ValueError(
                "All coefs are zero, so the signal variance b' Sigma b is 0 and snr "
                "cannot set the noise level; pass noise_sd=... instead of snr."
            )
        else:
            snr = self.default_snr if opts["snr"] is None else opts["snr"]
            sd = float(np.sqrt(signal_var / snr))
        icpt = opts["intercept"] or 0.0
        y = icpt + eta + sd * rng.standard_normal(eta.size)
        return SimulatedResponse(y, sd, icpt, None)


class Logistic(Distribution):
    """Binary (0/1) responses with the logit link."""

    simulation_args = frozenset({"intercept", "prevalence"})

    @staticmethod
    def mean(eta: Any) -> Any:
        """``P(y = 1) = expit(eta)``, without overflow."""
        return expit(eta)

    @staticmethod
    def variance(mu: Any) -> Any:
        """``mu (1 - mu)``: the variance, and the working weights of Newton/IRLS."""
        return mu * (1 - mu)

    @staticmethod
    def unit_loss(eta: _Float, y: _Float) -> _Float:
        """``log(1 + exp(eta)) - y eta``: each sample's negative log-likelihood."""
        return np.logaddexp(0.0, eta) - y * eta

    def loss(self, eta: _Float, y: _Float) -> float:
        """Mean negative log-likelihood (half the mean deviance) at ``eta``."""
        return float(np.mean(self.unit_loss(eta, y)))

    def log_likelihood(self, eta: _Float, y: _Float) -> float:
        """Log-likelihood of the 0/1 ``y`` at the linear predictor ``eta``."""
        return float(-np.sum(self.unit_loss(eta, y)))

    def deviance(
        self, eta: _Float, outcome: _Float, strata: NDArray[Any] | None = None
    ) -> _Float:
        """Return twice the mean log-loss of each row (``strata`` unused)."""
        return np.asarray(np.mean(self.row_deviance(eta, outcome), axis=1))

    def row_deviance(self, eta: _Float, outcome: _Float) -> _Float:
        """Twice each sample's negative log-likelihood."""
        return np.asarray(2.0 * self.unit_loss(eta, outcome[None, :]))

    def simulate(
        self, rng: _Rng, eta: _Float, signal_var: float, opts: _Opts
    ) -> SimulatedResponse:
        """Bernoulli response of a logistic model."""
        if opts["prevalence"] is not None:
            icpt = _solve_logistic_normal(opts["prevalence"], np.sqrt(signal_var))
        else:
            icpt = opts["intercept"] or 0.0
        y = (rng.random(eta.size) < self.mean(icpt + eta)).astype(np.int64)
        return SimulatedResponse(y, None, icpt, None)


class ProportionalHazards(Distribution):
    """Survival responses ``(time, event)`` under proportional hazards."""

    simulation_args: ClassVar[frozenset[str]] = frozenset()

    #: Efron log partial likelihood (lifelines' ties) of each row of a stack
    #: of linear predictors, optionally stratified.
    log_likelihood = staticmethod(efron_loglik)

    def deviance(
        self, eta: _Float, outcome: _Float, strata: NDArray[Any] | None = None
    ) -> _Float:
        """Return minus twice the Efron log partial likelihood per row."""
        time, event = outcome[:, 0], outcome[:, 1] == 1
        return -2.0 * efron_loglik(eta, time, event, strata) / eta.shape[1]

    def resampled_deviance(
        self,
        eta: _Float,
        outcome: _Float,
        strata: NDArray[Any] | None,
        counts: NDArray[np.intp],
    ) -> _Float:
        """Minus twice each resample's Efron log partial likelihood per row."""
        time, event = outcome[:, 0], outcome[:, 1] == 1
        loglik = efron_loglik_counts(eta, time, event, strata, counts)
        return -2.0 * loglik / eta.shape[1]

    def simulate(
        self, rng: _Rng, eta: _Float, signal_var: float, opts: _Opts
    ) -> SimulatedResponse:
        """Weibull proportional-hazards times with same-shape Weibull censoring."""
        k, lam0 = opts["weibull_shape"], opts["baseline_hazard"]
        # log E = -G for E ~ Exp(1) and G ~ Gumbel(0, 1), which is always finite.
        log_t = (-rng.gumbel(size=eta.size) - np.log(lam0) - eta) / k
        if opts["censoring"] == 0.0:
            return SimulatedResponse(
                _times(log_t), None, 0.0, np.ones(eta.size, dtype=bool)
            )
        log_c_rate = np.log(lam0) + _solve_logistic_normal(
            opts["censoring"], np.sqrt(signal_var)
        )
        log_c = (-rng.gumbel(size=eta.size) - log_c_rate) / k
        event = log_t <= log_c
        return SimulatedResponse(_times(np.minimum(log_t, log_c)), None, 0.0, event)


def _times(log_t: _Float) -> _Float:
    """``exp(log_t)``, or a ValueError if a time is not a positive float."""
    with np.errstate(over="ignore", under="ignore"):  # reported just below
        t = np.exp(log_t)
    if not np.all(np.isfinite(t) & (t > 0)):
        raise ValueError(
            f"The simulated survival times span exp({log_t.min():.3g}) to "
            f"exp({log_t.max():.3g}), beyond float64 (about exp(-745) to "
            f"exp(709)): the linear predictor X @ coef is too large. Use smaller "
            f"coefs (or a larger weibull_shape)."
        )
    return t


NORMAL = Normal()
LOGISTIC = Logistic()
PROPORTIONAL_HAZARDS = ProportionalHazards()
