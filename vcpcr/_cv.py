"""VCPCRCV: cross-validated VC-PCR over K, delta, lam_ratio and random starts.

The folds (see :mod:`vcpcr._tuning`) run in parallel through joblib
(:func:`vcpcr._parallel.run_parallel`, which re-issues their warnings once
each, with counts); the chosen grid point is refitted on all data as a
:class:`VCPCR`.
"""

from __future__ import annotations

import numbers
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.model_selection import check_cv
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted
from statsmodels.iolib import summary2 as sm_summary2

from vcpcr._families import FAMILIES, Family, Prepared
from vcpcr._formula import resolve_formula
from vcpcr._input import check_strata, validated_design
from vcpcr._model import VCPCR, cap_n_clusters, check_lam_ratios
from vcpcr._parallel import progress_shown, run_parallel, task_seeds
from vcpcr._scaling import standardize
from vcpcr._scoring import get_scorer
from vcpcr._summary import VCPCRSummary, model_summary, model_summary2
from vcpcr._tuning import (
    FoldResult,
    FoldSpec,
    Grid,
    batch_scoring,
    check_fold_columns,
    default_grid,
    fit_fold,
    one_se_index,
    scoring_name,
)
from vcpcr._validation import (
    check_choice,
    check_scalar,
)
from vcpcr._weights import check_scheme, scheme_of
from vcpcr.exceptions import (
    ConvergenceWarning,
    SeparationWarning,
    VCPCRWarning,
    user_stacklevel,
)

__all__ = ["VCPCRCV"]


def _estimator_has(attr: str) -> Any:
    """``available_if`` check: the tuned VCPCR has ``attr`` (as GridSearchCV)."""

    def check(self: VCPCRCV) -> bool:
        if not self.refit:
            raise AttributeError(
                f"This VCPCRCV was initialized with refit=False: {attr} is available "
                f"only after refitting on the best parameters. Set refit=True."
            )
        if hasattr(self, "best_estimator_"):
            getattr(self.best_estimator_, attr)
        else:
            getattr(VCPCR(family=self.family), attr)
        return True

    return check


class VCPCRCV(BaseEstimator):
    r"""VC-PCR with hyperparameters chosen by cross-validation.

    Tunes the number of clusters ``K``, the weight penalty ``delta`` and the
    sparsity ``lam_ratio`` (and the random starts, inside the training
    folds), then refits :class:`VCPCR` on all data with the chosen values.

    Parameters
    ----------
    n_clusters : int or sequence of int, default=(4, 5, 6)
        Candidate numbers of clusters; values above the number of features
        are capped at it (with a warning).
    family : {"gaussian", "binomial", "cox"}, default="gaussian"
        Outcome model (see :class:`VCPCR`).
    weights : str or array-like, default="enet"
        Weight scheme (see :class:`VCPCR`).
    deltas : array-like of float, optional
        Candidate weight penalties; default :func:`default_grid` (ignored
        for identity or given weights).
    lam_ratios : array-like of float, optional
        Candidate sparsity ratios in ``[0, 1]``; default :func:`default_grid`.
    n_init : int, default=5
        Random starts per grid point; the one with the lowest SOS-NMF
        objective on the training fold is kept.
    cv : int, cross-validation generator or iterable, default=5
        As in scikit-learn (an int gives unshuffled folds, stratified on the
        class for ``family="binomial"`` and on the event indicator for
        ``family="cox"``; pass ``KFold(shuffle=True)`` to shuffle).
    scoring : str or callable, optional
        A scikit-learn scorer (higher is better) of the family's task, or a
        callable ``scorer(estimator, X, y)``, which gets a whole fitted
        :class:`VCPCR` per fold and grid point (it may call any of its
        methods). Default: ``"neg_mean_squared_error"`` (gaussian),
        ``"neg_log_loss"`` (binomial: a proper scoring rule that uses the
        probabilities, so it is far less noisy on small test folds than
        accuracy or MCC) and Harrell's concordance index (cox,
        ``"concordance"``, the estimator's ``score``). For cox also
        ``"neg_integrated_brier_score"`` and ``"mean_cumulative_dynamic_auc"``
        (``sksurv.metrics``; see Notes), and
        ``"neg_partial_likelihood_deviance"``, the cross-validated partial
        likelihood (Verweij & van Houwelingen, 1993; cv.glmnet's grouped
        ``type.measure = "deviance"``, negated): per fold, twice the Efron log
        partial likelihood of the fold's training and test rows minus that of
        its training rows, at the step-2 fit on the training rows, over the
        test rows' events; ``mean_test_score`` is the mean weighted by events,
        and ``std_test_score / sqrt(n_splits)`` is cv.glmnet's ``cvsd``, so
        ``selection="1se"`` is its ``lambda.1se`` rule. A name of another
        family's task is an error that lists the valid choices.
    selection : {"min", "1se"}, default="min"
        ``"min"``: the best mean score. ``"1se"``: the sparsest model (fewest
        selected variables on average) whose mean score is within one
        standard error of the best, as ``cv.glmnet``'s ``lambda.1se``.
    refit : bool, default=True
        Refit :class:`VCPCR` on all data with the chosen parameters.
    n_jobs : int, optional
        Folds in parallel with joblib (any joblib backend, e.g. dask, via
        ``joblib.parallel_config``). Results do not depend on it.
    verbose : bool, int or None, default=None
        A progress bar over the fold x grid fits (it advances by the number
        of grid points as each fold ends). None: shown when running
        interactively (a terminal or a Jupyter kernel) and not under CI,
        never in a log file; True or an int >= 1: always; False or 0: never.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the random starts (one independent stream per fold).
    formula : str, optional
        Model formula (see :class:`VCPCR`); ``fit`` then takes one DataFrame.
    max_iter : int, default=500
        Maximum SOS-NMF iterations.
    tol : float, default=1e-4
        SOS-NMF tolerance.
    missing : {"raise", "drop"}, default="raise"
        Missing values with ``formula`` (see :class:`VCPCR`).
    covariates : str, int or list of them, optional
        Covariates adjusted for and never clustered (see :class:`VCPCR`), or
        a two-part ``formula``'s. Every fold passes them to its step 0 and
        step 2, and the refit too. A covariate that is constant or collinear
        within a training fold (the dummy of a rare level that no training
        row has) is left out of that fold's fit, i.e. its coefficient is 0
        when that fold's test part is scored; the CV goes on. The top of the
        default ``deltas`` grid (``delta_max``) is computed without them.
    strata : str, int or list of them, optional
        Columns whose combinations are the strata of a stratified Cox model
        (``family="cox"`` only; see :class:`VCPCR`): neither clustered nor
        covariates. Each fold's step 2 at each grid point is lifelines'
        stratified fit, one fit per point (slower than the batched
        unstratified Cox fits); the step-0 weights are unstratified, as in
        :class:`VCPCR`. ``"neg_partial_likelihood_deviance"``
        uses the stratified partial likelihood (the sum over strata of each
        stratum's), for the fold's training rows and for all its rows;
        ``"concordance"`` stays Harrell's C over all pairs of the test part,
        as lifelines' ``CoxPHFitter.score`` on new data. The folds stay
        stratified on the event indicator only; a stratum without an event
        in some training fold is an error (use fewer folds or merge strata).
        ``best_estimator_`` is stratified.

    Attributes
    ----------
    cv_results_ : pandas.DataFrame
        One row per grid point: ``n_clusters``, ``delta``, ``lam_ratio``,
        ``split<i>_test_score``, ``mean_test_score``, ``std_test_score``,
        ``mean_size`` (selected variables), ``mean_n_clusters``,
        ``rank_test_score``, ``params`` (dicts, as ``GridSearchCV``),
        ``mean_fit_time`` and ``std_fit_time`` (seconds per grid point and
        fold: a fold solves all grid points at once, so each is charged an
        equal share of the fold's wall time, scoring included).
    best_index_ : int
        Row of ``cv_results_`` chosen by ``selection``.
    best_params_ : dict
        Its parameters.
    best_score_ : float
        Its mean test score.
    best_estimator_ : VCPCR
        The refitted model (when ``refit=True``).
    n_iter_ : int
        SOS-NMF iterations of ``best_estimator_`` (when ``refit=True``).
    n_separated_fits_ : int
        Number of fold x grid fits whose outcome was (quasi-)separated, where
        Firth's estimates were used (binomial); a ``SeparationWarning`` is
        issued only when they are the majority.
    scorer_ : callable
        The scorer used.
    n_splits_ : int
        Number of folds.

    See Also
    --------
    VCPCR : The estimator being tuned.

    Notes
    -----
    With ``selection="1se"`` the chosen point ``g`` satisfies
    :math:`\bar s_g \ge \bar s_{best} - \mathrm{sd}_{best}/\sqrt{n_{splits}}`
    and has the smallest mean model size among those points.

    The survival scorers evaluate a fold model at the distinct event times
    ``t`` of its training fold with ``first test event time <= t <
    min(last test time, last training time)``: scikit-survival requires
    times within the test follow-up, from the first test event on the
    time-dependent AUC has a case and a control at every time, and the
    censoring weights (inverse probability of censoring, estimated on the
    training fold) are known up to the last training time. Test observations
    after the last training time enter as censored at it; they are controls
    at every such ``t`` either way, so no score changes. A fold with fewer
    than two such times scores NaN, with a warning.
    ``"neg_integrated_brier_score"`` is minus
    ``sksurv.metrics.integrated_brier_score`` of
    ``predict_survival_function(X, return_array=True, times=t)``;
    ``"mean_cumulative_dynamic_auc"`` is the mean AUC of
    ``sksurv.metrics.cumulative_dynamic_auc`` of the linear predictor
    (``predict_log_partial_hazard``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import KFold
    >>> from vcpcr import VCPCRCV
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(60, 3))
    >>> X = np.hstack([np.repeat(z, 4, axis=1) + 0.5 * rng.normal(size=(60, 12)),
    ...                rng.normal(size=(60, 20))])
    >>> y = z[:, 0] - z[:, 1] + 0.3 * rng.normal(size=60)
    >>> cv = VCPCRCV(n_clusters=(2, 3), cv=KFold(3, shuffle=True, random_state=0),
    ...              random_state=0).fit(X, y)
    >>> sorted(cv.best_params_)
    ['delta', 'lam_ratio', 'n_clusters']
    >>> cv.cv_results_.shape[0]  # 2 K x 6 deltas x 10 lam_ratios
    120
    """

    def __init__(
        self,
        n_clusters: int | tuple[int, ...] = (4, 5, 6),
        *,
        family: str = "gaussian",
        weights: Any = "enet",
        deltas: ArrayLike | None = None,
        lam_ratios: ArrayLike | None = None,
        n_init: int = 5,
        cv: Any = 5,
        scoring: Any = None,
        selection: str = "min",
        refit: bool = True,
        n_jobs: int | None = None,
        verbose: bool | int | None = None,
        random_state: Any = None,
        formula: str | None = None,
        max_iter: int = 500,
        tol: float = 1e-4,
        missing: str = "raise",
        covariates: str | int | list[Any] | None = None,
        strata: str | int | list[Any] | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.family = family
        self.weights = weights
        self.deltas = deltas
        self.lam_ratios = lam_ratios
        self.n_init = n_init
        self.cv = cv
        self.scoring = scoring
        self.selection = selection
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state
        self.formula = formula
        self.max_iter = max_iter
        self.tol = tol
        self.missing = missing
        self.covariates = covariates
        self.strata = strata

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self) -> Any:
        """Return the tags of the tuned VCPCR (same estimator type)."""
        return VCPCR(family=self.family, formula=self.formula).__sklearn_tags__()

    # ------------------------------------------------------------------- fit
    def _grid(self, Xs: NDArray[np.float64], target: NDArray[np.float64]) -> Grid:
        """Return the validated grid, with the defaults filled in."""
        owner = "VCPCRCV"
        raw: Any = self.n_clusters
        Ks = (raw,) if np.ndim(raw) == 0 else tuple(raw)  # check_scalar types it
        if not Ks:
            raise ValueError("n_clusters must hold at least one value.")
        for K in Ks:
            check_scalar(K, "n_clusters", numbers.Integral, owner=owner, min_val=1)
        p = Xs.shape[1]
        cap_n_clusters(int(max(Ks)), p, owner)  # warns when some K > p
        Ks = tuple(dict.fromkeys(min(int(K), p) for K in Ks))
        scheme = scheme_of(self.weights)
        delta_max = scheme.delta_max(Xs, target, self.family)
        default = default_grid(self.weights, delta_max=delta_max)
        fixed = not scheme.penalized
        if fixed and self.deltas is not None:
            raise ValueError(
                "deltas is only used with penalized weights (e.g. 'enet', 'ridge')."
            )
        deltas: Any = default["deltas"] if self.deltas is None else self.deltas
        ratios = default["lam_ratios"] if self.lam_ratios is None else self.lam_ratios
        ratios = check_lam_ratios(ratios, owner=owner)
        if not fixed:
            deltas = scheme.check_deltas(deltas, owner=owner, name="deltas")
        return Grid(
            tuple(int(K) for K in Ks),
            [None if d is None else float(d) for d in deltas],
            ratios,
        )

    def _folds(
        self, family: Family, Xa: NDArray[np.float64], yv: Any, prepared: Prepared
    ) -> list[Any]:
        """Return the CV folds: scikit-learn's ``check_cv``, stratified by family.

        An int ``cv`` gives ``StratifiedKFold`` for a classifier (scikit-learn's
        rule) and, for a survival family, folds stratified on the event
        indicator (when events and censored rows both number at least
        ``cv``), so that no test fold lacks events on a cohort whose rows are
        sorted (unshuffled, as scikit-learn's int folds).
        """
        classifier = family.estimator_type == "classifier"
        labels = family.strata(prepared.outcome)
        k = 5 if self.cv is None else self.cv
        if (
            family.survival
            and labels is not None
            and isinstance(k, numbers.Integral)
            and np.unique(labels, return_counts=True)[1].min() >= k
        ):
            return list(check_cv(k, labels, classifier=True).split(Xa, labels))
        return list(check_cv(self.cv, yv, classifier=classifier).split(Xa, yv))

    def _check_params(self) -> None:
        owner = "VCPCRCV"
        check_choice(self.family, "family", tuple(FAMILIES), owner=owner)
        check_choice(self.selection, "selection", ("min", "1se"), owner=owner)
        check_scalar(self.n_init, "n_init", numbers.Integral, owner=owner, min_val=1)
        check_scalar(
            self.max_iter, "max_iter", numbers.Integral, owner=owner, min_val=1
        )
        check_scalar(self.tol, "tol", numbers.Real, owner=owner, min_val=0.0)

    def _data(
        self, X: Any, y: Any
    ) -> tuple[NDArray[np.float64], int, int, Any, Prepared]:
        """Design matrix (covariates, strata, the rest), their numbers, the response."""
        resolved = resolve_formula(
            self.formula, X, y, missing=self.missing, owner="VCPCRCV"
        )
        self.yname_ = resolved.yname
        family = FAMILIES[self.family]
        d = validated_design(self, resolved, family, strata=self.strata)
        cols, strata, genes, Xa = d.covariates, d.strata, d.genes, d.X
        prepared = family.prepare(d.y)
        if prepared.classes is not None:
            self.classes_ = prepared.classes
        self._strata_names = [d.names[j] for j in strata]
        if cols.size == 0 and strata.size == 0:  # X itself when C-ordered
            return np.ascontiguousarray(Xa), 0, 0, d.y, prepared
        design = np.column_stack([Xa[:, cols], Xa[:, strata], Xa[:, genes]])
        return design, cols.size, strata.size, d.y, prepared

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> VCPCRCV:
        """Cross-validate the grid, choose a point, refit on all data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            Predictors (with ``formula``: the DataFrame).
        y : array-like of shape (n_samples,), optional
            Response; omitted with ``formula``.

        Returns
        -------
        VCPCRCV
            The fitted object.
        """
        self._check_params()
        progress = progress_shown(self.verbose, "VCPCRCV")
        family = FAMILIES[self.family]
        self.scorer_ = get_scorer(self.scoring, family, VCPCR(family=self.family))
        Xa, n_cov, n_strata, yv, prepared = self._data(X, y)
        genes = Xa[:, n_cov + n_strata :]
        check_scheme(
            self.weights,
            self.family,
            genes.shape[1],
            covariates=n_cov > 0,
            owner="VCPCRCV",
        )
        grid = self._grid(standardize(genes)[0], prepared.weights_target)
        folds = self._folds(family, Xa, yv, prepared)
        check_fold_columns(genes, folds)
        _check_folds(family, yv, folds, max(grid.n_clusters))
        if n_strata:
            _check_fold_strata(
                Xa[:, n_cov : n_cov + n_strata], self._strata_names, prepared, folds
            )
        self.n_splits_ = len(folds)
        spec = FoldSpec(
            self.family,
            self.weights,
            grid,
            self.n_init,
            self.max_iter,
            self.tol,
            VCPCR(
                family=self.family,
                weights=self.weights,
                n_init=self.n_init,
                max_iter=self.max_iter,
                tol=self.tol,
                covariates=list(range(n_cov)) or None,  # fold data: covariates first
                strata=list(range(n_cov, n_cov + n_strata)) or None,  # then strata
            ),
            self.scorer_,
            batch_scoring(self.scoring, self.family),
            n_cov,
            n_strata,
        )
        results = self._run_folds(Xa, yv, folds, spec, progress)
        self.cv_results_ = self._results_frame(grid, results)
        self._warn_fold_issues(results, len(grid.points()))
        self.best_index_ = self._select()
        row = self.cv_results_.iloc[self.best_index_]
        delta = None if pd.isna(row["delta"]) else float(row["delta"])
        self.best_params_: dict[str, Any] = {
            "n_clusters": int(row["n_clusters"]),
            "delta": delta,
            "lam_ratio": float(row["lam_ratio"]),
        }
        self.best_score_ = float(row["mean_test_score"])
        if self.refit:
            self.best_estimator_ = self._refit_estimator().fit(X, y)
            self.n_iter_ = self.best_estimator_.n_iter_
        return self

    def _run_folds(
        self,
        X: NDArray[np.float64],
        y: Any,
        folds: list[Any],
        spec: FoldSpec,
        progress: bool,
    ) -> list[FoldResult]:
        """Run the folds through joblib (in order, whatever the backend)."""
        seeds = task_seeds(self.random_state, len(folds))
        ys = np.asarray(y)
        tasks = [
            (X, ys, tr, te, spec, seed)
            for (tr, te), seed in zip(folds, seeds, strict=True)
        ]
        timed = run_parallel(
            _timed_fit_fold,
            tasks,
            n_jobs=self.n_jobs,
            verbose=progress,
            desc="cross-validation",
            unit="fold x grid fits",
            fits_per_task=len(spec.grid.points()),
        )
        self._fold_times = np.array([seconds for _, seconds in timed])
        return [result for result, _ in timed]

    def _results_frame(self, grid: Grid, results: list[FoldResult]) -> pd.DataFrame:
        points = grid.points()
        frame = pd.DataFrame(points, columns=["n_clusters", "delta", "lam_ratio"])
        scores = np.column_stack([r.scores for r in results])
        for i in range(scores.shape[1]):
            frame[f"split{i}_test_score"] = scores[:, i]
        # A point that could not be fitted in a fold is scored on the others.
        failed = np.column_stack(
            [
                np.zeros(len(points), bool) if r.failed is None else r.failed
                for r in results
            ]
        )
        used = (~failed).sum(axis=1)
        # Fold weights (cv.glmnet's events per fold for the partial likelihood):
        # the weighted mean, and the weighted standard deviation whose standard
        # error std / sqrt(folds) is cv.glmnet's cvsd.
        w = np.array([1.0 if r.weight is None else r.weight for r in results])
        w = np.where(failed, 0.0, w[None, :])
        with np.errstate(invalid="ignore", divide="ignore"):  # failed in every fold
            mean = (w * np.where(failed, 0.0, scores)).sum(axis=1) / w.sum(axis=1)
            dev = np.where(failed, 0.0, scores - mean[:, None])
            var = (w * dev**2).sum(axis=1) / w.sum(axis=1)
            std = np.sqrt(var * used / (used - 1))
        frame["mean_test_score"] = mean
        frame["std_test_score"] = std if scores.shape[1] > 1 else 0.0
        for name, values in (
            ("mean_size", [r.sizes for r in results]),
            ("mean_n_clusters", [r.n_clusters for r in results]),
        ):
            with np.errstate(invalid="ignore"):
                frame[name] = (
                    np.where(failed, 0.0, np.column_stack(values)).sum(axis=1) / used
                )
        finite = frame["mean_test_score"].where(np.isfinite(frame["mean_test_score"]))
        # Non-finite mean scores rank last (as in GridSearchCV), not NaN.
        rank = finite.rank(ascending=False, method="min", na_option="bottom")
        frame["rank_test_score"] = rank.astype(int)
        # As GridSearchCV; a fold solves all grid points at once, so each point
        # is charged an equal share of its fold's wall time (scoring included).
        frame["params"] = [
            {"n_clusters": K, "delta": d, "lam_ratio": r} for K, d, r in points
        ]
        per_point = self._fold_times / len(points)
        frame["mean_fit_time"] = per_point.mean()
        frame["std_fit_time"] = per_point.std()
        return frame

    def _warn_fold_issues(self, results: list[FoldResult], n_points: int) -> None:
        total = n_points * len(results)
        separated = sum(r.n_separated for r in results)
        unconverged = sum(r.n_unconverged for r in results)
        self.n_separated_fits_ = separated
        # Separation in some small training folds is routine, and handled by
        # Firth's estimate (the count is in the summary); warn only when most
        # of the scores compare Firth fits.
        if 2 * separated > total:
            warnings.warn(
                f"The outcome was (quasi-)separated in {separated} of {total} "
                f"fold x grid fits, so most CV scores are those of Firth's "
                f"estimates. Consider fewer clusters (n_clusters) or a larger "
                f"lam_ratio.",
                SeparationWarning,
                stacklevel=user_stacklevel(),
            )
        self._n_failed = sum(
            int(np.sum(r.failed)) for r in results if r.failed is not None
        )
        if self._n_failed:
            first = next(r.failure for r in results if r.failure)
            warnings.warn(
                f"{self._n_failed} of {total} fold x grid fits could not be fitted; "
                f"a grid point is scored on the folds where it was fitted, and "
                f"ignored where it was fitted in none. First error: {first}",
                VCPCRWarning,
                stacklevel=user_stacklevel(),
            )
        if unconverged:
            warnings.warn(
                f"SOS-NMF did not converge within max_iter={self.max_iter} in "
                f"{unconverged} of {total} fold x grid fits (tol={self.tol:g}).",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )

    def _select(self) -> int:
        """Row of the chosen grid point (``selection``)."""
        res = self.cv_results_
        mean = res["mean_test_score"].to_numpy()
        if not np.any(np.isfinite(mean)) and self._n_failed:
            raise ValueError(
                f"No grid point could be fitted in every one of the "
                f"{self.n_splits_} CV folds (see the warning above for the first "
                f"error). Use fewer folds (cv), weights='ridge', or larger deltas."
            )
        if not np.any(np.isfinite(mean)):
            raise ValueError(
                f"No grid point has a finite mean CV score (scoring="
                f"{scoring_name(self.scoring, self.family)!r}, {self.n_splits_} "
                f"folds): the score is undefined on these test folds (e.g. R^2 "
                f"on folds of one sample). Use fewer folds (cv) or another scoring."
            )
        if not np.all(np.isfinite(mean)) and not self._n_failed:
            bad = int(np.sum(~np.isfinite(mean)))
            warnings.warn(
                f"{bad} grid point(s) have a non-finite mean score and are ignored.",
                VCPCRWarning,
                stacklevel=user_stacklevel(),
            )
        best = int(np.nanargmax(np.where(np.isfinite(mean), mean, np.nan)))
        return best if self.selection == "min" else one_se_index(res, self.n_splits_)

    def _refit_estimator(self) -> VCPCR:
        return VCPCR(
            n_clusters=self.best_params_["n_clusters"],
            family=self.family,
            weights=self.weights,
            delta=self.best_params_["delta"],
            lam_ratio=self.best_params_["lam_ratio"],
            n_init=self.n_init,
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=self.random_state,
            formula=self.formula,
            missing=self.missing,
            covariates=self.covariates,
            strata=self.strata,
        )

    # ------------------------------------------------------------ delegation
    def _best(self) -> VCPCR:
        check_is_fitted(self, "cv_results_")
        if not self.refit:
            raise AttributeError("refit=False: no best_estimator_ to predict with.")
        return self.best_estimator_

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Predict with ``best_estimator_`` (see :meth:`VCPCR.predict`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predictions.
        """
        return self._best().predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Class probabilities of ``best_estimator_`` (binomial family).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Probabilities of ``classes_``.
        """
        return self._best().predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log-odds of ``best_estimator_`` (binomial family).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data.

        Returns
        -------
        ndarray of shape (n_samples,)
            Linear predictor.
        """
        return self._best().decision_function(X)

    @available_if(_estimator_has("predict_survival_function"))
    def predict_survival_function(self, X: ArrayLike, **kwargs: Any) -> Any:
        """Survival functions of ``best_estimator_`` (cox family).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data.
        **kwargs
            See :meth:`VCPCR.predict_survival_function`.

        Returns
        -------
        ndarray or pandas.DataFrame
            See :meth:`VCPCR.predict_survival_function`.
        """
        return self._best().predict_survival_function(X, **kwargs)

    @available_if(_estimator_has("predict_cumulative_hazard"))
    def predict_cumulative_hazard(self, X: ArrayLike, **kwargs: Any) -> Any:
        """Cumulative hazards of ``best_estimator_`` (cox family).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data.
        **kwargs
            See :meth:`VCPCR.predict_cumulative_hazard`.

        Returns
        -------
        ndarray or pandas.DataFrame
            See :meth:`VCPCR.predict_cumulative_hazard`.
        """
        return self._best().predict_cumulative_hazard(X, **kwargs)

    @available_if(_estimator_has("predict_log_partial_hazard"))
    def predict_log_partial_hazard(self, X: ArrayLike) -> NDArray[np.float64]:
        """Linear predictor of ``best_estimator_`` (cox family).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data.

        Returns
        -------
        ndarray of shape (n_samples,)
            See :meth:`VCPCR.predict_log_partial_hazard`.
        """
        return self._best().predict_log_partial_hazard(X)

    @available_if(_estimator_has("predict_median"))
    def predict_median(self, X: ArrayLike) -> NDArray[np.float64]:
        """Median survival times of ``best_estimator_`` (cox family).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data.

        Returns
        -------
        ndarray of shape (n_samples,)
            See :meth:`VCPCR.predict_median`.
        """
        return self._best().predict_median(X)

    #: scikit-survival's name of :meth:`predict_cumulative_hazard`.
    predict_cumulative_hazard_function = predict_cumulative_hazard

    @available_if(_estimator_has("get_prediction"))
    def get_prediction(self, X: ArrayLike) -> Any:
        """Return the statsmodels prediction results of ``best_estimator_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data.

        Returns
        -------
        statsmodels prediction results
            See :meth:`VCPCR.get_prediction`.
        """
        return self._best().get_prediction(X)

    @available_if(_estimator_has("transform"))
    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """Cluster latent variables of ``best_estimator_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data.

        Returns
        -------
        ndarray of shape (n_samples, n_clusters_)
            Latent variables.
        """
        return self._best().transform(X)

    @available_if(_estimator_has("transform"))
    def fit_transform(
        self, X: ArrayLike, y: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Fit, then return the latent variables of ``best_estimator_`` on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            Training data.
        y : array-like of shape (n_samples,), optional
            Response; omitted with ``formula``.

        Returns
        -------
        ndarray of shape (n_samples, n_clusters_)
            Latent variables.
        """
        return self.fit(X, y).transform(X)

    def score(self, X: ArrayLike, y: ArrayLike | None = None) -> float:
        """``scorer_`` of ``best_estimator_`` on ``(X, y)`` (higher is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            Test data.
        y : array-like of shape (n_samples,), optional
            Response; with ``formula``, omit it to read it from ``X``.

        Returns
        -------
        float
            The score.
        """
        best = self._best()
        if y is None and self.formula is not None:
            from vcpcr._formula import parse_formula

            y = parse_formula(self.formula, X).y
        return float(self.scorer_(best, X, y))

    def summary(self, alpha: float = 0.05, inference: Any = None) -> VCPCRSummary:
        """Summary of ``best_estimator_`` plus how its parameters were chosen.

        The coefficient table's p-values ignore the selection (see
        :meth:`VCPCR.summary`); honest evidence comes from
        :func:`vcpcr.inference.multi_split` with a ``VCPCRCV`` template.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level of the confidence intervals.
        inference : result or list of results, optional
            Resampling results computed from this ``VCPCRCV``'s parameters and
            data, shown beside the coefficients (see :meth:`VCPCR.summary`).

        Returns
        -------
        statsmodels.iolib.summary.Summary
            The summary.

        Raises
        ------
        ValueError
            If a result was computed from other parameters or other data.
        """
        return model_summary(
            self._best(),
            alpha,
            extra_notes=[self._tuning_note()],
            inference=inference,
            owner=self,
        )

    def summary2(self, alpha: float = 0.05) -> sm_summary2.Summary:
        """``summary2()`` of ``best_estimator_`` plus how its parameters were chosen.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level of the confidence intervals.

        Returns
        -------
        statsmodels.iolib.summary2.Summary
            The summary; its ``tables`` are DataFrames (see
            :meth:`VCPCR.summary2`).
        """
        return model_summary2(self._best(), alpha, extra_notes=[self._tuning_note()])

    def _tuning_note(self) -> str:
        p = self.best_params_
        delta = "" if p["delta"] is None else f", delta={p['delta']:.3g}"
        scoring = scoring_name(self.scoring, self.family)
        return (
            f"Tuning: n_clusters={p['n_clusters']}{delta}, "
            f"lam_ratio={p['lam_ratio']:.3g} chosen by {self.n_splits_}-fold CV "
            f"(selection='{self.selection}') among {len(self.cv_results_)} grid "
            f"points x {self.n_init} starts; mean {scoring} = {self.best_score_:.4g}."
            + (
                f" Firth's estimates were used in {self.n_separated_fits_} of "
                f"{len(self.cv_results_) * self.n_splits_} fold fits (separation)."
                if self.n_separated_fits_
                else ""
            )
        )

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """CV score against mean model size (see :func:`vcpcr.plotting.plot_cv`).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on.
        **kwargs
            Passed to :func:`vcpcr.plotting.plot_cv`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes.
        """
        check_is_fitted(self, "cv_results_")
        from vcpcr.plotting import plot_cv

        return plot_cv(self, ax=ax, **kwargs)


def _check_folds(family: Family, y: Any, folds: list[Any], max_k: int) -> None:
    """Raise a ValueError naming the first CV fold that cannot be fitted or scored."""
    for i, (train, test) in enumerate(folds):
        if max_k + 1 >= len(train):
            raise ValueError(
                f"CV fold {i} trains on {len(train)} rows, too few for n_clusters="
                f"{max_k} (the outcome model needs n_clusters + 1 < rows). Use "
                f"smaller n_clusters or fewer folds (cv)."
            )
        problem = family.fold_problem(y, train, test)
        if problem is not None:
            raise ValueError(
                f"CV fold {i} of {len(folds)}: {problem}. Use fewer folds (cv) "
                f"or {family.fold_hint}."
            )


def _check_fold_strata(
    S: NDArray[np.float64], names: list[str], prepared: Prepared, folds: list[Any]
) -> None:
    """Raise a ValueError naming the first training fold with an event-free stratum."""
    event = prepared.outcome[:, 1] > 0
    for i, (train, _) in enumerate(folds):
        try:
            check_strata(S[train], names, event[train])
        except ValueError as exc:
            raise ValueError(
                f"CV fold {i} of {len(folds)}, training part ({len(train)} rows): "
                f"{exc} Or use fewer folds (cv)."
            ) from None


def _timed_fit_fold(
    X: NDArray[np.float64],
    y: Any,
    train: NDArray[np.intp],
    test: NDArray[np.intp],
    spec: FoldSpec,
    seed: int,
) -> tuple[FoldResult, float]:
    """Run :func:`fit_fold` on one fold; return its result and wall time (s).

    The fold's rows are taken here, in the worker, from the shared ``X``
    (which joblib memory-maps for its worker processes when it is large, and
    dask scatters once):
    the parent holds no per-fold copies, and ``fit_fold`` standardizes its
    own ``X[train]`` in place.
    """
    start = time.perf_counter()
    result = fit_fold(X[train], y[train], X[test], y[test], spec, seed)
    return result, time.perf_counter() - start
