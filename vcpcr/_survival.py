"""Survival predictions of the Cox family in scikit-survival's layout.

``VCPCR(family="cox")`` fits lifelines' ``CoxPHFitter`` on the cluster latent
variables; its predictions are ``S(t | x) = exp(-H0(t) exp(eta(x)))`` with
Breslow's baseline cumulative hazard ``H0`` (a step function that jumps at
the event times). As scikit-survival, they are returned as one step function
per sample or as an array ``(n_samples, n_times)``; scikit-survival is
optional, so its ``StepFunction`` is used when installed and an equivalent
small class otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "StepFunction",
    "breslow_baseline",
    "evaluate_baseline",
    "step_functions",
    "stratum_baselines",
]


class StepFunction:
    r"""A right-continuous step function, as ``sksurv.functions.StepFunction``.

    ``f(z) = a * y_i + b`` for ``x_i <= z < x_{i+1}``; used only when
    scikit-survival is not installed.

    Parameters
    ----------
    x : ndarray of shape (n_points,)
        Jump points, in ascending order.
    y : ndarray of shape (n_points,)
        Values from each jump point on.
    a : float, default=1.0
        Factor applied to ``y``.
    b : float, default=0.0
        Offset added to ``a * y``.
    domain : tuple of (float or None, float or None), default=(0, None)
        Where the function may be evaluated; ``None`` is the first or last
        ``x``.
    """

    def __init__(
        self,
        x: NDArray[np.float64],
        y: NDArray[np.float64],
        *,
        a: float = 1.0,
        b: float = 0.0,
        domain: tuple[float | None, float | None] = (0, None),
    ) -> None:
        self.x, self.y, self.a, self.b = np.asarray(x), np.asarray(y), a, b
        lower = self.x[0] if domain[0] is None else domain[0]
        upper = self.x[-1] if domain[1] is None else domain[1]
        self.domain = (float(lower), float(upper))

    def __call__(self, z: ArrayLike) -> NDArray[np.float64]:
        """Evaluate the function.

        Parameters
        ----------
        z : float or array-like
            Points within ``domain``.

        Returns
        -------
        ndarray
            The values (before the first jump: the first value).
        """
        z = np.atleast_1d(np.asarray(z, dtype=np.float64))
        if np.min(z) < self.domain[0] or np.max(z) > self.domain[1]:
            raise ValueError(
                f"x must be within [{self.domain[0]:f}; {self.domain[1]:f}]"
            )
        i = np.clip(np.searchsorted(self.x, z, side="right") - 1, 0, None)
        return self.a * self.y[i] + self.b

    def __repr__(self) -> str:
        """Return ``StepFunction(x=..., y=..., a=..., b=...)``."""
        return f"StepFunction(x={self.x!r}, y={self.y!r}, a={self.a!r}, b={self.b!r})"


def _step_function_class() -> Any:
    try:
        from sksurv.functions import StepFunction as SksurvStepFunction
    except ImportError:
        return StepFunction
    return SksurvStepFunction


def breslow_baseline(
    eta: NDArray[np.float64],
    time: NDArray[np.float64],
    event: NDArray[np.float64],
    keys: list[Any] | None = None,
) -> pd.DataFrame:
    """Breslow's baseline cumulative hazard of the linear predictors ``eta``.

    ``H0(t) = sum over event times s <= t of d(s) / sum_{j at risk at s}
    exp(eta_j)`` within each stratum (``keys``: each row's stratum, a value
    or a tuple of values), as lifelines' ``baseline_cumulative_hazard_``:
    a frame indexed by the distinct training times, one column per stratum
    (``"baseline cumulative hazard"`` without strata), 0 before a stratum's
    first event.
    """
    times = np.unique(time)
    groups: dict[Any, list[int]] = {}
    for i, key in enumerate(keys or ["baseline cumulative hazard"] * time.size):
        groups.setdefault(key, []).append(i)
    columns = {}
    for name, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
        rows = np.asarray(members)
        t, d = time[rows], event[rows]
        order = np.argsort(-t, kind="stable")
        # the log of the risk set's sum at time s (rows with t >= s, ties
        # included), in log space: a diverged fit (separation) spans more
        # than exp's range, and its late risk sets would underflow to 0
        log_at_risk = np.logaddexp.accumulate(eta[rows][order])
        last = np.searchsorted(-t[order], -times, side="right") - 1
        deaths = np.bincount(np.searchsorted(times, t), weights=d, minlength=times.size)
        hit = deaths > 0  # an event at s: its own row is at risk (last >= 0)
        hazard = np.zeros(times.size)
        with np.errstate(over="ignore"):  # inf: a diverged fit's survival is 0
            hazard[hit] = deaths[hit] * np.exp(-log_at_risk[last[hit]])
        columns[name] = np.cumsum(hazard)
    return pd.DataFrame(columns, index=pd.Index(times))


def evaluate_baseline(baseline: Any, times: NDArray[np.float64]) -> NDArray[np.float64]:
    """Breslow's baseline cumulative hazard (a lifelines frame) at ``times``.

    The step function is right-continuous and zero before the first time.
    """
    knots = baseline.index.to_numpy(dtype=np.float64)
    values = baseline.iloc[:, 0].to_numpy(dtype=np.float64)
    i = np.searchsorted(knots, times, side="right") - 1
    return np.where(i >= 0, values[np.clip(i, 0, None)], 0.0)


def stratum_baselines(
    baseline: Any, keys: list[Any], names: list[str], times: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Each sample's stratum baseline cumulative hazard at ``times``.

    ``baseline`` is a stratified lifelines model's
    ``baseline_cumulative_hazard_`` (one column per stratum), ``keys`` each
    sample's stratum (a value of the strata columns ``names``, a tuple of
    values for several). Returns an array of shape ``(len(keys), n_times)``;
    raises a ValueError for a stratum the model was not trained on.
    """
    columns = [str(k) for k in baseline.columns]
    position = {key: j for j, key in enumerate(columns)}
    unseen = sorted({str(k) for k in keys} - set(columns))
    if unseen:
        raise ValueError(
            f"X has strata {unseen} of {names} that were not in the training "
            f"data (strata: {columns}); a stratum's baseline hazard is only known "
            f"for trained strata."
        )
    H0 = np.stack([evaluate_baseline(baseline[[k]], times) for k in baseline.columns])
    return H0[[position[str(k)] for k in keys]]


def step_functions(
    times: NDArray[np.float64], values: NDArray[np.float64]
) -> NDArray[np.object_]:
    """One step function per row of ``values`` (jumps at ``times``).

    Parameters
    ----------
    times : ndarray of shape (n_times,)
        Jump points (ascending).
    values : ndarray of shape (n_samples, n_times)
        Value of each sample's function from each jump point on.

    Returns
    -------
    ndarray of object, shape (n_samples,)
        ``sksurv.functions.StepFunction`` instances (or :class:`StepFunction`
        without scikit-survival).
    """
    cls = _step_function_class()
    out = np.empty(values.shape[0], dtype=object)
    for i, row in enumerate(values):
        out[i] = cls(times, row)
    return out
