"""The CV criterion of VCPCRCV: what a fold returns, and the score columns.

A criterion says what the folds compute (:attr:`Criterion.fold_scoring`,
which :func:`vcpcr._tuning.fit_fold` reads from ``FoldSpec.batch_scoring``)
and reduces the folds' results to the score columns of ``cv_results_``
(:meth:`Criterion.score_columns`), once. Two implementations:

- :class:`FoldMeanScores`: every fold scores every grid point on its test
  rows (a batched scoring, a fold scoring, or the scorer on each point's fold
  model); the columns are the folds' weighted mean and standard deviation
  (GridSearchCV's, with cv.glmnet's fold weights).
- :class:`PooledPredictors`: the folds return the out-of-fold linear
  predictors only, and no score; the columns are those of the pooled
  deviance of every row's cross-calibrated predictor
  (:mod:`vcpcr._solvers.pooled`). :meth:`VCPCRCV.peer_curve` pools a peer's
  predictors through the same object (:meth:`PooledPredictors.pool`).

Both hold the gaussian unit scale: the folds see ``y * 2**-exponent``
(:func:`criterion_of`), the grid is ranked and chosen on that scale, and
:meth:`Criterion.in_units` gives the scores in ``y``'s units.
"""

from __future__ import annotations

import abc
import warnings
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from vcpcr._families import Family, Prepared
from vcpcr._parallel import run_parallel, task_seeds
from vcpcr._scaling import standardize
from vcpcr._scoring import batch_scoring, scoring_name
from vcpcr._solvers.distributions import Distribution
from vcpcr._solvers.pooled import (
    N_BOOT,
    POOLED,
    bootstrap_counts,
    paired_se,
    pooled_deviance,
    pooled_scores,
)
from vcpcr._tuning import FoldResult, fold_paired_se
from vcpcr.exceptions import VCPCRWarning, user_stacklevel

__all__ = [
    "Criterion",
    "FoldMeanScores",
    "Pooled",
    "PooledPredictors",
    "ScoreColumns",
    "criterion_of",
]

_Float = NDArray[np.float64]

#: Grid points per task of the pooled criterion (:meth:`PooledPredictors.pool`):
#: the default grid's 240 points are 8 tasks, and a task's bootstrap holds
#: ``N_BOOT x POINTS_PER_TASK`` deviances.
POINTS_PER_TASK = 30

#: ``y`` with a standard deviation within ``2**+-_SAFE_EXPONENT`` has squared
#: errors (summed over up to 2**60 rows) that are normal float64 numbers.
_SAFE_EXPONENT = 480


class ScoreColumns(NamedTuple):
    """The score columns of ``cv_results_`` (one entry per grid point).

    ``raised`` (points, folds) marks a point that could not be fitted or
    scored in a fold, ``bad`` one not scored there (it raised, or its score
    or out-of-fold predictors are not finite); ``extra`` holds the
    criterion's own columns, placed after the common ones.
    """

    splits: _Float
    mean: _Float
    std: _Float
    se_diff: _Float
    raised: NDArray[np.bool_]
    bad: NDArray[np.bool_]
    extra: dict[str, _Float]


def _raised(results: list[FoldResult], n_points: int) -> NDArray[np.bool_]:
    """Return (points, folds): True where a point raised in a fold."""
    return np.column_stack(
        [np.zeros(n_points, bool) if r.failed is None else r.failed for r in results]
    )


class Criterion(abc.ABC):
    """What the folds compute and how their results become the score columns.

    ``power`` is the exponent of 2 that takes the scores from the folds'
    unit scale to ``y``'s units (0: the folds see ``y``).
    """

    #: What a fold computes (``FoldSpec.batch_scoring``): a batched or fold
    #: scoring's name, :data:`POOLED` (out-of-fold predictors, no score), or
    #: None (the scorer on each point's fold model).
    fold_scoring: str | None

    def __init__(self, power: int = 0) -> None:
        self.power = power

    @abc.abstractmethod
    def score_columns(
        self, results: list[FoldResult], n_points: int, folds: list[Any]
    ) -> ScoreColumns:
        """Reduce the folds' results to the score columns (on the unit scale)."""

    def in_units(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Return ``cv_results_`` with its scores multiplied by ``2**power`` (exact).

        A score beyond float64 in those units (the squared errors of a ``y``
        of scale 1e300) is NaN, with a warning: no float64 number is its
        value, and ``-inf`` would read as the worst score. The grid was
        ranked before, on ``y``'s unit scale.
        """
        power = self.power
        if power == 0:
            return frame
        columns = [c for c in frame.columns if c.endswith("_test_score")]
        columns.remove("rank_test_score")
        out = frame.copy()
        unit = frame[columns].to_numpy(dtype=np.float64)
        with np.errstate(over="ignore", under="ignore"):  # checked just below
            scores = np.ldexp(unit, power)
        beyond = np.isinf(scores) & np.isfinite(unit)
        if beyond.any():
            scores[beyond] = np.nan
            warnings.warn(
                f"The CV scores in y's units are beyond float64 (their values "
                f"on y's unit scale times 2**{power}): {int(beyond.sum())} "
                f"entries of cv_results_ are NaN, and best_score_ if it is "
                f"one. The grid was ranked on the unit scale, so best_params_ "
                f"and the refit are right. Rescale y (e.g. y / y.std()) to "
                f"read the scores.",
                VCPCRWarning,
                stacklevel=user_stacklevel(),
            )
        out[columns] = scores
        return out


class FoldMeanScores(Criterion):
    """Each fold's scores of every grid point, and their (weighted) mean.

    Only points scored on every fold are ranked against each other: a point
    that raised or scored non-finite in a fold has no mean score. The fold
    weights are cv.glmnet's events per fold for the partial likelihood:
    the weighted mean, and the weighted standard deviation whose standard
    error ``std / sqrt(folds)`` is cv.glmnet's cvsd.
    """

    def __init__(self, fold_scoring: str | None, power: int = 0) -> None:
        super().__init__(power)
        self.fold_scoring = fold_scoring

    def score_columns(
        self, results: list[FoldResult], n_points: int, folds: list[Any]
    ) -> ScoreColumns:
        scores = np.column_stack([r.scores for r in results])
        raised = _raised(results, n_points)
        bad = raised | ~np.isfinite(scores)
        complete = ~bad.any(axis=1)
        w = np.array([1.0 if r.weight is None else r.weight for r in results])
        mean = (w * np.where(bad, 0.0, scores)).sum(axis=1) / w.sum()
        var = (w * np.where(bad, 0.0, scores - mean[:, None]) ** 2).sum(axis=1)
        k = scores.shape[1]
        std = np.sqrt(var / w.sum() * k / (k - 1)) if k > 1 else np.zeros(n_points)
        se_diff = np.full(n_points, np.nan)
        if complete.any():
            best = int(np.nanargmax(np.where(complete, mean, np.nan)))
            se_diff = np.where(complete, fold_paired_se(scores, w, best), np.nan)
        return ScoreColumns(
            scores,
            np.where(complete, mean, np.nan),
            np.where(complete, std, np.nan),
            se_diff,
            raised,
            bad,
            {},
        )


class Pooled(NamedTuple):
    """The pooled deviance of cross-calibrated out-of-fold predictors."""

    #: the shrunk out-of-fold linear predictors (n_points, n_samples)
    eta: _Float
    #: the calibration slope of all rows' predictors (n_points,)
    slopes: _Float
    #: the deviance per row (n_points,; lower is better)
    deviance: _Float
    #: its bootstrap draws (N_BOOT, n_points)
    draws: _Float


class PooledPredictors(Criterion):
    """Every row's out-of-fold linear predictor, pooled into one deviance.

    The folds return their test rows' linear predictors and the clusters'
    part of them (``FoldResult.eta``, ``eta_clustered``) and compute no
    score. ``outcome`` is the folds' prepared outcome (on the unit scale),
    ``strata`` the rows' stratum labels of a stratified Cox model;
    ``random_state`` (the estimator's) seeds each bootstrap when it runs;
    ``n_jobs`` (the estimator's) scores the grid points in parallel, in
    tasks of :data:`POINTS_PER_TASK` points whatever ``n_jobs`` is, so that
    the scores do not depend on it.
    """

    fold_scoring = POOLED

    def __init__(
        self,
        distribution: Distribution,
        outcome: _Float,
        strata: NDArray[Any] | None,
        random_state: Any,
        power: int = 0,
        n_jobs: int | None = None,
    ) -> None:
        super().__init__(power)
        self.distribution = distribution
        self.outcome = outcome
        self.strata = strata
        self.random_state = random_state
        self.n_jobs = n_jobs

    def pool(
        self,
        eta: _Float,
        clustered: _Float,
        folds: list[Any],
        outcome: _Float | None = None,
    ) -> Pooled:
        """Cross-calibrate ``eta`` on ``folds`` and score it by the pooled deviance.

        ``clustered`` is the clusters' part of ``eta`` (what a calibration
        slope scales); ``outcome`` defaults to the folds' (a peer's
        predictors are in ``y``'s units: pass its prepared outcome).
        """
        outcome = self.outcome if outcome is None else outcome
        rng = np.random.default_rng(task_seeds(self.random_state, 1)[0])
        counts = bootstrap_counts(eta.shape[1], N_BOOT, rng)  # shared by all points
        n_tasks = max(1, -(-eta.shape[0] // POINTS_PER_TASK))
        dist, strata = self.distribution, self.strata
        tasks = [
            (dist, eta[c], clustered[c], outcome, strata, folds, counts)
            for c in np.array_split(np.arange(eta.shape[0]), n_tasks)
        ]
        parts = run_parallel(
            pooled_scores,
            tasks,
            n_jobs=self.n_jobs,
            verbose=False,
            desc="the pooled criterion",
            unit="tasks of grid points",
        )
        calibrated, slopes, dev, draws = (
            np.concatenate([part[i] for part in parts], axis=int(i == 3))
            for i in range(4)
        )
        return Pooled(calibrated, slopes, dev, draws)

    def score_columns(
        self, results: list[FoldResult], n_points: int, folds: list[Any]
    ) -> ScoreColumns:
        """Minus the pooled deviance per row of all rows' calibrated predictors.

        ``mean`` is minus the deviance, ``se_test_score`` (extra) its
        bootstrap standard error, ``se_diff`` the bootstrap standard error of
        its difference from the best point (:func:`paired_se`), and
        ``splits`` minus the same deviance on each fold's test rows alone
        (``std`` their standard deviation). A point not fitted in some fold
        has no pooled score.
        """
        n = self.outcome.shape[0]
        eta = np.full((n_points, n), np.nan)
        clustered = eta.copy()
        for (_, test), r in zip(folds, results, strict=True):
            if r.eta is not None:
                eta[:, test], clustered[:, test] = r.eta, r.eta_clustered
        raised = _raised(results, n_points)
        bad = raised | np.column_stack(
            [~np.all(np.isfinite(eta[:, test]), axis=1) for _, test in folds]
        )
        pooled = self.pool(eta, clustered, folds)
        splits = np.column_stack(
            [
                -pooled_deviance(
                    self.distribution,
                    pooled.eta[:, test],
                    self.outcome[test],
                    None if self.strata is None else self.strata[test],
                )
                for _, test in folds
            ]
        )
        std = pd.DataFrame(splits).std(axis=1, ddof=1).to_numpy()
        with np.errstate(invalid="ignore"):
            se = np.std(pooled.draws, axis=0, ddof=1)
        se_diff = np.full(n_points, np.nan)
        if np.isfinite(pooled.deviance).any():
            se_diff = paired_se(pooled.draws, int(np.nanargmin(pooled.deviance)))
        return ScoreColumns(
            splits,
            -pooled.deviance,
            std,
            se_diff,
            raised,
            bad,
            {"calibration_slope": pooled.slopes, "se_test_score": se},
        )


def _unit_power(
    scoring: Any, family: Family, prepared: Prepared
) -> tuple[int, int | None]:
    """Return ``(exponent, degree)`` of the folds' unit scale (degree None: ``y``).

    A gaussian ``y`` is scaled by ``2**-exponent`` (exact in floating point),
    so that its standard deviation lies in [0.5, 1): the fits are
    equivariant, and the squared errors of a ``y`` of scale ``1e-300``
    (which underflow to 0 and tie every grid point) rank the grid as on
    ``y / 1e-300``. The scores are then those of ``y`` times
    ``2**(exponent * degree)``, with the scorer's ``degree`` (2 for the mean
    squared error, 1 for the (root) mean (absolute) error, 0 for R^2); a
    scorer of unknown degree sees ``y`` itself, with a warning if its scale
    is out of float64's reach.
    """
    degrees = family.scoring.unit_degrees
    if not degrees:
        return 0, None
    spread = float(standardize(prepared.outcome)[2])  # no under/overflow
    exponent = int(np.frexp(spread)[1])
    callable_scoring = scoring is not None and not isinstance(scoring, str)
    name = scoring_name(scoring, family)
    degree = None if callable_scoring else degrees.get(name)
    if degree is not None:
        return exponent, degree
    if abs(exponent) > _SAFE_EXPONENT:
        which = "a callable scoring" if callable_scoring else f"scoring={name!r}"
        warnings.warn(
            f"y has standard deviation {spread:.3g}: at this scale squared "
            f"errors underflow or overflow in float64, so the CV scores of "
            f"{which} may not rank the grid. Rescale y (e.g. y / "
            f"y.std()) and scale the predictions back, or use a scoring "
            f"among {sorted(degrees)}, which VCPCRCV rescales itself.",
            VCPCRWarning,
            stacklevel=user_stacklevel(),
        )
    return 0, None


def criterion_of(
    scoring: Any,
    family: Family,
    prepared: Prepared,
    y: Any,
    strata: NDArray[Any] | None,
    random_state: Any,
    n_jobs: int | None = None,
) -> tuple[Criterion, Prepared, Any]:
    """Return the criterion of ``scoring`` and the folds' outcome.

    Returns ``(criterion, prepared, y)``: the folds' prepared response and
    their response as a scorer of a fold model takes it (the user's ``y``,
    or the prepared outcome on its unit scale). ``strata`` labels the rows'
    strata (a stratified Cox model), ``random_state`` seeds the pooled
    criterion's bootstrap and ``n_jobs`` runs its tasks.
    """
    exponent, degree = _unit_power(scoring, family, prepared)
    power = 0
    if degree is not None:
        prepared = prepared._replace(outcome=np.ldexp(prepared.outcome, -exponent))
        y, power = prepared.outcome, exponent * degree
    if scoring == POOLED:
        criterion: Criterion = PooledPredictors(
            family.distribution,
            prepared.outcome,
            strata,
            random_state,
            power,
            n_jobs,
        )
    else:
        criterion = FoldMeanScores(batch_scoring(scoring, family), power)
    return criterion, prepared, y
