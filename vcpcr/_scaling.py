"""Centring and scaling without overflow, and the way back to raw units.

Every part of vcpcr that standardizes data (the estimator, cross-validation,
the baselines and the benchmark study) goes through :func:`standardize`, so
that results do not depend on the units of ``X`` or ``y``: each column is
first divided by a power of two within a factor 2 of its largest absolute
value (exact, and it cannot overflow), then centred and scaled to unit sample
variance. Squaring a value near 1e155
would overflow to infinity, squaring one near 1e-165 would underflow to zero;
neither happens here.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "CONSTANT_RTOL",
    "constant_columns",
    "magnitude",
    "raw_coefficients",
    "relative_weights",
    "standardize",
]

#: A column is constant when its range is at most this fraction of its
#: largest absolute value (rounding level for data centred on a large mean).
CONSTANT_RTOL = 1e-12


def magnitude(X: NDArray[np.float64]) -> NDArray[np.float64]:
    """Power of two within a factor 2 of each column's largest |value| (1 if 0).

    Dividing by a power of two is exact, so the standardized values are
    bitwise those of the textbook formula wherever that one does not overflow.
    """
    if X.shape[0] == 0:
        return np.ones(X.shape[1:])
    top = np.maximum(X.max(axis=0), -X.min(axis=0))
    # top = m 2**e with 0.5 <= m < 1; 2**(e - 1) <= top is finite even for the
    # largest double (2**e would overflow), so |X| / mag < 2.
    return np.where(top > 0, np.ldexp(1.0, np.frexp(top)[1] - 1), 1.0)


def constant_columns(X: NDArray[np.float64]) -> NDArray[np.intp]:
    """Return the indices of the columns of ``X`` that are constant up to rounding.

    The test is relative: a column is constant when ``max - min <=
    CONSTANT_RTOL * max|x|``, so it does not depend on the units of ``X``
    (``X * 1e-13`` has the same constant columns as ``X``).

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr._scaling import constant_columns
    >>> X = np.array([[1e-13, 5.0, 1e9], [2e-13, 5.0, 1e9 + 1e-6]])
    >>> constant_columns(X).tolist()
    [1, 2]
    """
    mag = magnitude(X)
    spread = X.max(axis=0) / mag - X.min(axis=0) / mag
    return np.flatnonzero(spread <= CONSTANT_RTOL)


def standardize(
    X: NDArray[np.float64], *, center_constant: bool = False, copy: bool = True
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Centre the columns of ``X`` and scale them to unit sample variance.

    The mean and standard deviation are computed on ``X / 2**e`` with
    ``2**e <= max|X| < 2**(e + 1)`` (per column), so neither overflows nor
    underflows for any finite ``X``, and the result equals ``(X - mean) / sd``
    to the bit wherever that formula does not overflow.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or (n_samples,)
        Validated, finite data with at least 2 rows (a 1-d array is one
        column).
    center_constant : bool, default=False
        If True, a constant column (see :func:`constant_columns`) is only
        centred (its scale is 1), as the authors' R code does in the
        benchmark. If False, the caller must have rejected such columns.
    copy : bool, default=True
        If False and ``X`` is a writable float64 array, ``X`` is
        standardized in place and returned as ``Xs`` (no n x p copy); the
        values are the same.

    Returns
    -------
    Xs : ndarray of the shape of ``X``
        Standardized data, ``(X - mean) / scale``.
    mean : ndarray of shape (n_features,) (a float for 1-d ``X``)
        Column means.
    scale : ndarray of shape (n_features,) (a float for 1-d ``X``)
        Column standard deviations (``ddof=1``).

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr._scaling import standardize
    >>> Xs, mean, scale = standardize(np.array([[1e200], [3e200]]))
    >>> Xs.ravel().tolist(), mean.tolist(), scale.tolist()
    ([-0.7071067811865475, 0.7071067811865475], [2e+200], [1.414213562373095e+200])
    """
    A = np.asarray(X, dtype=np.float64)
    flat = A.ndim == 1
    A2 = A[:, None] if flat else A
    mag = magnitude(A2)
    inplace = not copy and A is X and A.flags.writeable
    Z = np.divide(A2, mag, out=A2 if inplace else None)  # exact: a power of two
    mean_z = Z.mean(axis=0)
    sd_z = Z.std(axis=0, ddof=1)
    if center_constant:
        const = constant_columns(A2)
        sd_z[const] = 1.0 / mag[const]
    Z -= mean_z
    Z /= sd_z
    Xs = Z
    mean, scale = mean_z * mag, sd_z * mag
    if flat:
        return Xs[:, 0], mean[0], scale[0]
    return Xs, mean, scale


def raw_coefficients(
    V: NDArray[np.float64],
    a0: float,
    a: NDArray[np.float64],
    mean: NDArray[np.float64],
    scale: NDArray[np.float64],
    covariate_mean: NDArray[np.float64] | None = None,
    *,
    centred: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Step 2's coefficients on the raw scale of X: features, covariates, intercept.

    The model ``a0 + ((X - mean) / scale) V a`` is ``X @ coef + intercept``
    with ``coef = V a / scale`` and ``intercept = a0 - sum(mean * coef)``;
    ``mean / scale`` is formed first, so the products stay in range however
    large or small the units of ``X``.

    With covariates beside the clusters (a step 2 on ``[Z, M]``), ``a`` holds
    the ``c = covariate_mean.size`` covariate coefficients first (on the
    covariates' raw scale already, returned as they are), then the cluster
    coefficients. ``centred`` (a family without intercept, cox): the linear
    predictor is reported centred at the training means, as lifelines does,
    so the covariates' means enter the intercept.

    Raises
    ------
    ValueError
        If a coefficient overflows or underflows float64 (the units of the
        response divided by those of ``X`` beyond about 1e+-308).
    """
    c = 0 if covariate_mean is None else covariate_mean.size
    b = V @ a[c:]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        coef = b / scale
        intercept = float(a0 - np.sum((mean / scale) * b))
    lost = (b != 0) & (coef == 0)
    if not (np.all(np.isfinite(coef)) and np.isfinite(intercept)) or lost.any():
        raise ValueError(
            "The coefficients on the raw scale of X overflow or underflow float64: "
            "the units of y (or of the linear predictor) divided by those of X "
            "exceed about 1e308 or fall below 1e-308. Rescale X or y (express "
            "them in other units) before fitting."
        )
    if centred and covariate_mean is not None:
        intercept -= float(covariate_mean @ a[:c])
    return coef, a[:c], intercept


def relative_weights(w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rescale feature weights to ``max|w| = 1`` (they act through their ratios).

    SOS-NMF's clusters depend on the weights only through their ratios
    (scaling every weight by ``c`` scales the scores, the penalty and the
    memberships by ``c``); rescaling keeps ``1e300 * w`` and ``1e-200 * w``
    from overflowing or underflowing. All-zero weights are returned as is.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr._scaling import relative_weights
    >>> relative_weights(np.array([1e300, -2e300])).tolist()
    [0.5, -1.0]
    """
    top = float(np.max(np.abs(w), initial=0.0))
    return w / top if top > 0 else w


def independent_columns(Z: NDArray[np.float64], rtol: float = 1e-8) -> NDArray[np.intp]:
    """Return the columns of ``Z`` kept greedily, left to right, as identifiable.

    A column is dropped when the intercept and the columns kept before it
    explain it (relative residual norm ``<= rtol``): a constant column, or a
    linear combination such as a dummy that duplicates another in a small
    sample.

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[1.0, 0.0, 2.0, 5.0], [2.0, 1.0, 4.0, 5.0], [4.0, 0.0, 8.0, 5.0]])
    >>> independent_columns(Z).tolist()
    [0, 1]
    """
    n = Z.shape[0]
    keep: list[int] = []
    for j in range(Z.shape[1]):
        Q = np.column_stack([np.ones(n), Z[:, keep]])
        z = Z[:, j]
        r = z - Q @ np.linalg.lstsq(Q, z, rcond=None)[0]
        if np.linalg.norm(r) > rtol * np.linalg.norm(z):
            keep.append(j)
    return np.asarray(keep, dtype=np.intp)
