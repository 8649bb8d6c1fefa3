"""Test-fold scores of many fits at once: scikit-learn's metrics, vectorized.

Each function takes the predictions of ``B`` fits on the same test fold as a
``(B, n_samples)`` array and returns the ``B`` scores, equal to what the
named scikit-learn scorer (or, for the concordance, lifelines'
``concordance_index`` through :meth:`vcpcr.VCPCR.score`) returns for each fit;
``None`` where that scorer would raise or warn (e.g. a test fold with a single
class), so the caller scores per point and the user sees scikit-learn's own
message.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.stats import rankdata

from vcpcr._solvers.distributions import LOGISTIC

__all__ = [
    "accuracy",
    "comparable",
    "concordance",
    "neg_log_loss",
    "neg_mean_absolute_error",
    "neg_mean_squared_error",
    "neg_root_mean_squared_error",
    "r2",
    "resampled_concordance",
    "roc_auc",
]

Scores = NDArray[np.float64] | None


def neg_mean_squared_error(pred: NDArray[np.float64], y: NDArray[np.float64]) -> Scores:
    """Minus the mean squared error of each row of ``pred``."""
    return -np.mean((y - pred) ** 2, axis=1)


def neg_root_mean_squared_error(
    pred: NDArray[np.float64], y: NDArray[np.float64]
) -> Scores:
    """Minus the root mean squared error of each row of ``pred``."""
    return -np.sqrt(np.mean((y - pred) ** 2, axis=1))


def neg_mean_absolute_error(
    pred: NDArray[np.float64], y: NDArray[np.float64]
) -> Scores:
    """Minus the mean absolute error of each row of ``pred``."""
    return -np.mean(np.abs(y - pred), axis=1)


def r2(pred: NDArray[np.float64], y: NDArray[np.float64]) -> Scores:
    """Coefficient of determination of each row (``r2_score``).

    ``None`` for a constant or single-sample test fold (scikit-learn then
    returns a conventional value or warns).
    """
    total = np.sum((y - y.mean()) ** 2)
    if y.size < 2 or total == 0:
        return None
    return 1 - np.sum((y - pred) ** 2, axis=1) / total


def _two_classes(event: NDArray[np.bool_]) -> bool:
    return bool(event.any() and not event.all())


def accuracy(eta: NDArray[np.float64], event: NDArray[np.bool_]) -> Scores:
    """Share of test samples whose predicted class (``eta > 0``) is right."""
    return np.mean((eta > 0) == event, axis=1)


def neg_log_loss(eta: NDArray[np.float64], event: NDArray[np.bool_]) -> Scores:
    """Minus the mean log-loss of ``expit(eta)`` (``log_loss``, its clipping)."""
    if not _two_classes(event):
        return None
    p1 = LOGISTIC.mean(eta)
    eps = np.finfo(np.float64).eps
    p_true = np.clip(np.where(event, p1, 1 - p1), eps, 1 - eps)
    return np.mean(np.log(p_true), axis=1)


def roc_auc(eta: NDArray[np.float64], event: NDArray[np.bool_]) -> Scores:
    """Area under the ROC curve of the decision function (Mann-Whitney, ties 1/2)."""
    if not _two_classes(event):
        return None
    n1 = int(event.sum())
    n0 = event.size - n1
    ranks = rankdata(eta, axis=1)  # average ranks: a tie counts 1/2
    return (ranks[:, event].sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def comparable(
    time: NDArray[np.float64],
    event: NDArray[np.bool_],
    rows: slice = slice(None),
    strata: NDArray[np.intp] | None = None,
) -> NDArray[np.bool_]:
    """Harrell's comparable pairs, as lifelines': ``rows`` x all rows.

    Entry ``(i, j)`` is True when row ``i``'s time is earlier and an event,
    or both times are equal and only ``i``'s is an event; with ``strata``
    (one code per row), only when both rows are in the same stratum (the
    stratified C of lifelines' stratified ``CoxPHFitter``).
    """
    ti, di = time[rows, None], event[rows, None]
    pairs = di & ((ti < time[None, :]) | (ti == time[None, :]) & ~event)
    if strata is not None:
        pairs &= strata[rows, None] == strata[None, :]
    return pairs


def concordance(
    risk: NDArray[np.float64], time: NDArray[np.float64], event: NDArray[np.bool_]
) -> Scores:
    """Harrell's C, as lifelines' ``concordance_index(time, -risk, event)``.

    Over the :func:`comparable_pairs`: a pair is concordant when the earlier
    one has the higher risk, and counts 1/2 when the risks tie. ``None``
    without comparable pairs (lifelines raises).
    """
    first, second = np.nonzero(comparable(time, event))
    if first.size == 0 or np.isnan(risk).any():
        return None
    out = np.empty(risk.shape[0])
    chunk = max(1, 2**22 // first.size)
    for s in range(0, risk.shape[0], chunk):
        r1, r2_ = risk[s : s + chunk, first], risk[s : s + chunk, second]
        out[s : s + chunk] = (
            np.sum(r1 > r2_, axis=1) + 0.5 * np.sum(r1 == r2_, axis=1)
        ) / first.size
    return out


#: Rows of the comparable-pair matrix built at a time by
#: :func:`resampled_concordance` (memory: that many rows times n_samples).
_BLOCK = 512


def resampled_concordance(
    risk: NDArray[np.float64],
    time: NDArray[np.float64],
    event: NDArray[np.bool_],
    counts: NDArray[np.float64],
    strata: NDArray[np.intp] | None = None,
) -> NDArray[np.float64]:
    """Harrell's C of one risk vector on ``B`` resamples of its rows.

    ``counts`` (``(B, n_samples)``) holds how often each row is drawn; a
    resample has ``counts_i * counts_j`` copies of the :func:`comparable`
    pair ``(i, j)`` (copies of one row are never comparable: equal times,
    and not an event and a censored row at once), so its C is
    ``w' (A * S) w / w' A w`` with ``S`` the pairs' concordance (1/2 for
    tied risks): matrix products over blocks of rows. NaN for a resample
    without comparable pairs. With ``strata`` (a code per row), only the
    pairs within a stratum count.
    """
    n = time.size
    num = np.zeros(counts.shape[0])
    den = np.zeros(counts.shape[0])
    for start in range(0, n, _BLOCK):
        rows = slice(start, min(start + _BLOCK, n))
        pairs = comparable(time, event, rows, strata)
        ri = risk[rows, None]
        score = pairs * ((ri > risk[None, :]) + 0.5 * (ri == risk[None, :]))
        left = counts[:, rows]
        num += np.sum((left @ score) * counts, axis=1)
        den += np.sum((left @ pairs.astype(np.float64)) * counts, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
