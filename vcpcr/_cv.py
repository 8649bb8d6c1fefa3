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
from collections.abc import Callable
from functools import update_wrapper, wraps
from types import MethodType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils.validation import check_is_fitted
from statsmodels.iolib import summary2 as sm_summary2

from vcpcr._base import FitInput, VCPCRBase
from vcpcr._checks import (
    check_array,
    check_choice,
    check_cv_param,
    check_same_rows,
    check_scalar,
    check_split,
    check_y_length,
)
from vcpcr._criterion import Criterion, PooledPredictors, criterion_of
from vcpcr._families import Family, Prepared
from vcpcr._input import (
    Level,
    check_fold_strata,
    check_levels,
    split_cells,
    strata_cells,
    take,
)
from vcpcr._model import VCPCR, cap_n_clusters, check_lam_ratios
from vcpcr._parallel import (
    check_n_jobs,
    most_common_message,
    progress_shown,
    run_parallel,
    task_seeds,
)
from vcpcr._scaling import standardize
from vcpcr._scoring import get_scorer, scoring_name
from vcpcr._solvers.pooled import POOLED
from vcpcr._summary import VCPCRSummary, model_summary, model_summary2
from vcpcr._tuning import (
    SELECTIONS,
    FoldResult,
    FoldSpec,
    Grid,
    check_fold_columns,
    default_grid,
    default_n_se,
    fit_fold,
    score_se,
    selected_index,
)
from vcpcr._weights import WeightScheme
from vcpcr.exceptions import (
    ConvergenceWarning,
    SeparationWarning,
    VCPCRWarning,
    user_stacklevel,
)

__all__ = ["VCPCRCV"]


#: The grid's parameters, first in ``best_params_`` (a ``cv_results_`` row's
#: ``params``).
GRID_PARAMS = ("n_clusters", "delta", "lam_ratio")


def _check_class_sizes(y: Any, k: int) -> None:
    """Raise if a class has fewer rows than the ``k`` stratified folds.

    scikit-learn only warns ("the least populated class ..."), and then
    some test folds lack the class.
    """
    classes, counts = np.unique(np.asarray(y), return_counts=True)
    m = int(counts.min())
    if m < k:
        fewer = f"Use cv={m} or fewer folds, or" if m >= 2 else "A CV needs 2;"
        raise ValueError(
            f"cv={k} folds, but class {classes[np.argmin(counts)].item()!r} has "
            f"{m} rows in y: some stratified test folds would have none. "
            f"{fewer} gather more rows of that class."
        )


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


class _AvailableIf:
    """A method present on an instance when ``check`` passes (``available_if``).

    As scikit-learn's ``available_if`` (``hasattr`` is False when ``check``
    raises ``AttributeError``; the class holds the plain function, for its
    docstring), but the check's own message reaches the user: scikit-learn's
    replaces it by a bare "has no attribute", which hid why (``refit=False``).
    """

    def __init__(self, fn: Any, check: Any) -> None:
        self.fn = fn
        self.check = check
        update_wrapper(self, fn)  # type: ignore[arg-type]

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self.fn
        try:
            self.check(obj)  # raises AttributeError with the reason
        except AttributeError:
            raise
        except Exception as exc:  # e.g. a bad family: hasattr stays False
            raise AttributeError(str(exc)) from exc
        return MethodType(self.fn, obj)


def _delegated(name: str) -> Any:
    """VCPCR's method ``name`` on VCPCRCV: ``best_estimator_``'s.

    Available when ``best_estimator_`` has it (before ``fit``: when a VCPCR
    of the same family has it), as ``GridSearchCV``'s delegated methods;
    VCPCR's signature and docstring.
    """
    method = getattr(VCPCR, name)

    @wraps(method)
    def call(self: VCPCRCV, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._best(), name)(*args, **kwargs)

    return _AvailableIf(call, _estimator_has(name))


def _fitted(name: str) -> Any:
    """VCPCR's fitted attribute ``name`` on VCPCRCV: ``best_estimator_``'s."""

    def get(self: VCPCRCV) -> Any:
        return getattr(self._best(), name)

    return property(get, doc=f"``best_estimator_.{name}`` (see :class:`VCPCR`).")


def _fit_transform(
    self: VCPCRCV, X: ArrayLike, y: ArrayLike | None = None
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


class _BestEstimator:
    """Every public method and fitted attribute of VCPCR, on ``best_estimator_``.

    The one delegation of :class:`VCPCRCV` (the parity test checks that it
    covers VCPCR's public API), apart from its own ``fit``, ``score`` (its
    ``scorer_``), ``summary`` / ``summary2`` (with the tuning note) and
    ``plot`` (see :meth:`VCPCRCV.plot`). The attributes that describe the
    data (``n_features_in_``, ``feature_names_in_``, ``model_spec_``,
    ``yname_``, ``classes_``) are VCPCRCV's own, set by the same input
    route as VCPCR's. Kept out of VCPCRCV's own namespace: scikit-learn's
    ``set_output`` wraps a subclass's own ``transform`` and
    ``fit_transform`` and would drop their availability check;
    :meth:`VCPCRCV.set_output` is passed on to ``best_estimator_`` instead.
    """

    predict = _delegated("predict")
    predict_proba = _delegated("predict_proba")
    decision_function = _delegated("decision_function")
    predict_survival_function = _delegated("predict_survival_function")
    predict_cumulative_hazard = _delegated("predict_cumulative_hazard")
    predict_cumulative_hazard_function = _delegated(
        "predict_cumulative_hazard_function"
    )
    predict_log_partial_hazard = _delegated("predict_log_partial_hazard")
    predict_median = _delegated("predict_median")
    get_prediction = _delegated("get_prediction")
    transform = _delegated("transform")
    get_feature_names_out = _delegated("get_feature_names_out")
    outcome_design = _delegated("outcome_design")
    standardized_design = _delegated("standardized_design")
    signature = _delegated("signature")
    export_scoring_rule = _delegated("export_scoring_rule")
    print_summary = _delegated("print_summary")
    path = _delegated("path")

    membership_ = _fitted("membership_")
    loadings_ = _fitted("loadings_")
    labels_ = _fitted("labels_")
    clusters_ = _fitted("clusters_")
    n_clusters_ = _fitted("n_clusters_")
    coef_ = _fitted("coef_")
    intercept_ = _fitted("intercept_")
    cluster_coef_ = _fitted("cluster_coef_")
    module_sd_ = _fitted("module_sd_")
    prognostic_index_sd_ = _fitted("prognostic_index_sd_")
    covariate_coef_ = _fitted("covariate_coef_")
    covariate_names_ = _fitted("covariate_names_")
    covariate_columns_ = _fitted("covariate_columns_")
    clustered_columns_ = _fitted("clustered_columns_")
    strata_columns_ = _fitted("strata_columns_")
    strata_names_ = _fitted("strata_names_")
    weights_ = _fitted("weights_")
    weights_kkt_ = _fitted("weights_kkt_")
    delta_ = _fitted("delta_")
    lam_ = _fitted("lam_")
    lam_max_ = _fitted("lam_max_")
    n_iter_ = _fitted("n_iter_")
    converged_ = _fitted("converged_")
    objective_ = _fitted("objective_")
    best_init_ = _fitted("best_init_")
    result_ = _fitted("result_")
    mean_ = _fitted("mean_")
    scale_ = _fitted("scale_")
    n_samples_fit_ = _fitted("n_samples_fit_")
    unique_times_ = _fitted("unique_times_")
    concordance_index_ = _fitted("concordance_index_")
    baseline_cumulative_hazard_ = _fitted("baseline_cumulative_hazard_")
    train_linear_predictor_ = _fitted("train_linear_predictor_")
    train_strata_ = _fitted("train_strata_")
    separated_ = _fitted("separated_")
    fit_transform = _AvailableIf(_fit_transform, _estimator_has("transform"))


class VCPCRCV(_BestEstimator, VCPCRBase):
    r"""VC-PCR with hyperparameters chosen by cross-validation.

    Tunes the number of clusters ``K``, the weight penalty ``delta`` and the
    sparsity ``lam_ratio`` (and the random starts, inside the training
    folds), then refits :class:`VCPCR` on all data with the chosen values.
    The fitted ``VCPCRCV`` then has every public method and fitted attribute
    of :class:`VCPCR`, with the same meaning: ``best_estimator_``'s
    (``predict``, ``transform``, ``outcome_design``, ``coef_``,
    ``membership_``, ...), except ``score``, the CV's ``scorer_`` (as
    scikit-learn's ``GridSearchCV``), and the deprecated ``plot`` (see
    :meth:`plot_cv`).

    By default the grid is ranked by the pooled cross-validated deviance,
    the sparsest point within 0.75 paired standard errors of the best
    is chosen, and the refit is shrunk by that point's calibration slope
    (``shrinkage_``), with signed latent variables: sparse, calibrated
    signatures, empty on noise. ``VCPCRCV(latent="paper", scoring=None,
    selection="min")`` is the paper's tuning, the default before this
    release.

    Parameters
    ----------
    n_clusters : int or sequence of int, default=(4, 5, 6)
        Candidate numbers of clusters; values above the number of features
        are capped at it (with a warning).
    family : {"gaussian", "binomial", "cox"} or Family, default="gaussian"
        Outcome model: a name or a family object (see :class:`VCPCR`).
    weights : str or array-like, default="enet"
        Weight scheme (see :class:`VCPCR`).
    deltas : array-like of float, optional
        Candidate weight penalties; default :func:`default_grid` (ignored
        for identity or given weights).
    lam_ratios : array-like of float, optional
        Candidate sparsity ratios in ``[0, 1]``; default
        ``10**linspace(-3, 0, 20)`` for penalized weights (twice the paper's
        density, since this release), ``linspace(0, 0.9, 10)`` for identity
        or given weights.
    latent : {"paper", "signed"}, default="signed"
        How a selected feature enters its cluster's latent variable, in the
        CV and the refit (see :class:`VCPCR`). ``"signed"`` (``M = X S V``,
        ``S = diag(sign w)``) makes the predictions invariant to flipping the
        sign of a feature; ``"paper"`` is the paper's ``M = X V``, the default
        before this release (and still :class:`VCPCR`'s).
    n_init : int, default=5
        Random starts per grid point; the one with the lowest SOS-NMF
        objective on the training fold is kept. Fewer than :class:`VCPCR`'s
        10 because the CV solves every start of every grid point in every
        fold (``n_init`` x grid points x folds problems); the refit uses the
        same ``n_init``, so that the chosen point is refitted as it was
        scored.
    cv : int, cross-validation generator or iterable, default=5
        As in scikit-learn (an int gives unshuffled folds, stratified on the
        class for ``family="binomial"`` and on the event indicator for
        ``family="cox"``; pass ``KFold(shuffle=True)`` to shuffle).
    scoring : str, callable or None, default="neg_pooled_deviance"
        ``"neg_pooled_deviance"`` (every family; described below), a
        scikit-learn scorer (higher is better) of the family's task, or a
        callable ``scorer(estimator, X, y)``, which gets a whole fitted
        :class:`VCPCR` per fold and grid point (it may call any of its
        methods). None (the default before this release): the family's own
        score, averaged over the folds: ``"neg_mean_squared_error"`` (gaussian),
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
        ``selection="1se"`` is its ``lambda.1se`` rule.
        ``"neg_pooled_deviance"`` (every family): the pooled cross-validated
        deviance (van Houwelingen et al. 2006; Dai & Breheny 2024; R
        ``ncvreg::cv.ncvsurv``): every row's out-of-fold linear predictor, on
        the raw scale, its features' part shrunk by the calibration slope of the
        *other* folds' out-of-fold predictors (cross-calibrated: a step 2
        fitted on a few dozen events is over-confident, and a noise model's
        slope is near 0), then one deviance per row over all rows (mean
        squared error; twice the log loss; minus twice the Efron log partial
        likelihood, within strata), negated; ``calibration_slope`` is each
        point's slope over all rows, the refit's ``shrinkage``
        (``shrinkage_``); ``se_test_score`` is its
        bootstrap standard error (200 resamples of the rows, seeded by
        ``random_state``), which ``selection="1se"`` uses, and
        ``split<i>_test_score`` the same deviance on fold ``i`` alone, and
        ``se_diff_test_score`` the bootstrap standard error of each point's
        difference from the best (the same resamples for every point). The
        empty model (``lam_ratio=1``, on the default grid) is a candidate,
        so that noise can choose it. A name of another family's task is an
        error that lists the valid choices.
    selection : {"min", "1se", "paired"}, default="paired"
        ``"paired"``: the sparsest model (fewest selected features on
        average) whose mean score is within 0.75 standard errors of its
        *difference* from the best point's (``se_diff_test_score``: paired
        over the rows with the pooled criterion, over the folds with a
        fold-averaged scoring), so that the noise all points share does not
        count. ``"min"`` (the default before this release): the best mean
        score. ``"1se"``: the sparsest model within one standard error of the
        best point's *score*, as ``cv.glmnet``'s ``lambda.1se`` (with the
        pooled criterion, whose score's standard error carries the
        resampling noise all points share, it is far sparser: empty on every
        real cohort of the tuning guide). The paired gate of 0.75 standard
        errors (:data:`vcpcr._tuning.PAIRED_N_SE`; 1 before this release)
        was chosen by #27's rule G, stated before it ran
        (``benchmarks/bench_gate.py``): the smallest gate studied that, with
        the pooled criterion and signed latent variables, chooses at most 3
        features on at least 80 % of 200 null data sets of every family and
        loses no held-out score on signal data; it was confirmed on real
        cohorts (the tuning guide, "Rule G", has the numbers).
    n_se : float, optional
        The standard errors ``"1se"`` and ``"paired"`` give up for sparsity:
        by default 1 for ``"1se"`` and 0.75 for ``"paired"``. Larger is
        sparser and emptier on noise; ``n_se=1`` with ``"paired"`` is the
        gate before this release. Not used by ``"min"`` (an error there).
    refit : bool, default=True
        Refit :class:`VCPCR` on all data with the chosen parameters.
    n_jobs : int, optional
        Folds in parallel with joblib (any joblib backend, e.g. dask, via
        ``joblib.parallel_config``), and the pooled criterion's scoring of the
        grid after them (in tasks of grid points). Results do not depend on
        it.
    verbose : bool, int or None, default=None
        A progress bar over the fold x grid fits (it advances by the number
        of grid points as each fold ends). None: shown when running
        interactively (a terminal or a Jupyter kernel) and not under CI,
        never in a log file; True or an int >= 1: always; False or 0: never.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the random starts (one independent stream per fold).
    formula : str, optional
        Model formula (see :class:`VCPCR`); ``fit`` then takes one DataFrame.
        A formula is Python code, evaluated as in patsy and formulaic: never
        build one from untrusted text (names passed as ``covariates=`` or
        ``strata=`` are data).
    max_iter : int, default=500
        Maximum SOS-NMF iterations.
    tol : float, default=1e-4
        SOS-NMF tolerance.
    missing : {"raise", "drop"}, default="raise"
        Rows with missing values (see :class:`VCPCR`); dropped rows are
        reported once.
    covariates : str, int or list of them, optional
        Covariates adjusted for and never clustered (see :class:`VCPCR`), or
        a two-part ``formula``'s. Every fold passes them to its step 0 and
        step 2, and the refit too. A covariate that is constant or collinear
        within a training fold (the dummy of a rare level that no training
        row has) is left out of that fold's fit, i.e. its coefficient is 0
        when that fold's test part is scored; the CV goes on. The levels of
        the discrete covariates are checked as in :class:`VCPCR`, on all
        rows and on each training fold (a level with its only events in a
        test fold is an error naming the fold: merge the level, drop its
        rows or use fewer folds). The top of the default ``deltas`` grid
        (``delta_max``) is computed without them.
    strata : str, int or list of them, optional
        Columns whose combinations are the strata of a stratified Cox model
        (``family="cox"`` only; see :class:`VCPCR`): neither clustered nor
        covariates. Each fold's step 2 is the stratified Cox fit of all grid
        points in one batch (lifelines' for a point the batch cannot vouch
        for); the step-0 weights are unstratified, as in
        :class:`VCPCR`. ``"neg_partial_likelihood_deviance"``
        uses the stratified partial likelihood (the sum over strata of each
        stratum's), for the fold's training rows and for all its rows;
        ``"concordance"`` stays Harrell's C over all pairs of the test part,
        as lifelines' ``CoxPHFitter.score`` on new data. An int ``cv``
        stratifies the folds on the stratum and the event indicator, so
        that every training fold keeps an event of every stratum with 2 or
        more; a stratum without an event in some training fold is an error
        before any fit (merge strata; with a splitter, use an int cv).
        ``best_estimator_`` is stratified.

    Attributes
    ----------
    cv_results_ : pandas.DataFrame
        One row per grid point: ``n_clusters``, ``delta``, ``lam_ratio``,
        ``split<i>_test_score``, ``mean_test_score``, ``std_test_score``
        (the folds' standard deviation with ``ddof=1``, as ``cv.glmnet``'s
        ``cvsd`` times ``sqrt(n_splits)``; ``GridSearchCV``'s uses ``ddof=0``),
        ``se_diff_test_score`` (standard error of the point's mean score
        minus the best point's; 0 at the best), ``n_failed_folds`` (folds
        where the point could not be fitted or scored, or scored non-finite:
        then its ``split<i>_test_score`` is NaN), ``mean_size`` (selected
        features), ``mean_n_clusters``, ``max_weights_kkt`` (the largest
        relative KKT violation of the point's step-0 weights over the folds,
        see :class:`VCPCR`'s ``weights_kkt_``; NaN without a penalty),
        ``rank_test_score``, ``params`` (dicts, as ``GridSearchCV``),
        ``mean_fit_time`` and ``std_fit_time`` (seconds per grid point and
        fold: a fold solves all grid points at once, so each is charged an
        equal share of the fold's wall time, scoring included). The scores
        are in ``y``'s units; a gaussian ``y`` is scored on a unit scale
        inside the folds (scaled by an exact power of two), so that the grid
        is ranked alike whatever its units (``y * 1e-300`` as ``y``).
    best_index_ : int
        Row of ``cv_results_`` chosen by ``selection``.
    best_params_ : dict
        The parameters of the chosen model, as :class:`VCPCR` takes them:
        the grid point (``n_clusters``, ``delta``, ``lam_ratio``: the row's
        ``params``), then every parameter of the refit whose value is not
        ``VCPCR()``'s default, such as ``latent="signed"``, ``n_init=5``,
        ``random_state``, ``family``, ``covariates`` and the chosen point's
        calibration slope ``shrinkage`` (when it is not 1). So
        ``VCPCR(**cv.best_params_)`` is ``best_estimator_``'s estimator,
        unfitted: with an int ``random_state`` its fit on the same data is
        ``best_estimator_`` (before this release, only the grid point: the
        two classes' other defaults differ, and ``VCPCR(**best_params_)``
        was another model).
    best_score_ : float
        Its mean test score.
    best_estimator_ : VCPCR
        The refitted model (when ``refit=True``), with ``shrinkage=
        shrinkage_``.
    shrinkage_ : float
        The chosen point's calibration slope with the pooled criterion
        (``cv_results_["calibration_slope"]``: the features' part of the
        out-of-fold predictors that fits them best, in [0, 1]), which the
        refit's predictions use (see :class:`VCPCR`'s ``shrinkage``); 1
        with any other scoring.
    n_iter_ : int
        SOS-NMF iterations of ``best_estimator_`` (when ``refit=True``).
    n_separated_fits_ : int
        Number of fold x grid fits whose outcome was (quasi-)separated, where
        Firth's estimates were used (binomial: Firth's logistic regression;
        cox: Firth's penalized partial likelihood, as R's ``coxphf``, in the
        folds; the refit is lifelines' and warns if separated); a
        ``SeparationWarning`` is issued only when they are the majority.
    scorer_ : callable
        The scorer of :meth:`score`: ``scoring``'s, or with the pooled
        deviance the family's own score (see :meth:`score`).
    n_splits_ : int
        Number of folds.
    folds_ : list of (train, test) tuples of int arrays
        The rows of each fold (for a peer's CV curve on the same folds:
        :meth:`peer_curve`).

    See Also
    --------
    VCPCR : The estimator being tuned.

    Notes
    -----
    Only grid points scored on every fold are compared: a point that failed
    in some fold (its fit or its scorer raised, or its score is not finite)
    has a NaN ``mean_test_score`` and ``std_test_score``, ranks last and is
    never chosen; one warning counts these points and fits and gives the most
    common reason. If no point was scored on every fold, ``fit`` raises a
    ValueError with that reason.

    With ``selection="1se"`` the chosen point ``g`` satisfies
    :math:`\bar s_g \ge \bar s_{best} - \mathrm{se}_{best}` (the pooled
    criterion's bootstrap standard error, or
    :math:`\mathrm{sd}_{best}/\sqrt{n_{splits}}` with a fold-averaged
    scoring); with ``selection="paired"``, :math:`\bar s_g \ge \bar
    s_{best} - \mathrm{se}(\bar s_g - \bar s_{best})`. Either way it
    has the smallest mean model size among those points. With a
    fold-averaged scoring, :math:`\mathrm{se}(\bar s_g - \bar s_{best})`
    is the (fold-weighted) standard deviation of the fold differences over
    :math:`\sqrt{n_{splits}}`.

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
    >>> from vcpcr import VCPCR, VCPCRCV
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(60, 3))
    >>> X = np.hstack([np.repeat(z, 4, axis=1) + 0.5 * rng.normal(size=(60, 12)),
    ...                rng.normal(size=(60, 20))])
    >>> y = z[:, 0] - z[:, 1] + 0.3 * rng.normal(size=60)
    >>> cv = VCPCRCV(n_clusters=(2, 3), cv=KFold(3, shuffle=True, random_state=0),
    ...              random_state=0).fit(X, y)
    >>> sorted(cv.best_params_)[:3]
    ['delta', 'lam_ratio', 'latent']
    >>> refit = VCPCR(**cv.best_params_).fit(X, y)  # the chosen model
    >>> bool(np.array_equal(refit.coef_, cv.coef_))
    True
    >>> cv.cv_results_.shape[0]  # 2 K x 6 deltas x 20 lam_ratios
    240
    """

    def __init__(
        self,
        n_clusters: int | tuple[int, ...] = (4, 5, 6),
        *,
        family: str | Family = "gaussian",
        weights: Any = "enet",
        deltas: ArrayLike | None = None,
        lam_ratios: ArrayLike | None = None,
        latent: str = "signed",
        n_init: int = 5,
        cv: Any = 5,
        scoring: Any = "neg_pooled_deviance",
        selection: str = "paired",
        n_se: float | None = None,
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
        self.latent = latent
        self.n_init = n_init
        self.cv = cv
        self.scoring = scoring
        self.selection = selection
        self.n_se = n_se
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

    # ------------------------------------------------------------------- fit
    def _grid(
        self,
        family: Family,
        Xs: NDArray[np.float64],
        target: NDArray[np.float64],
        scheme: WeightScheme,
    ) -> Grid:
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
        delta_max = scheme.delta_max(Xs, target, family)
        default = default_grid(self.weights, delta_max=delta_max)
        fixed = not scheme.penalized
        if fixed and self.deltas is not None:
            raise ValueError(
                "deltas is only used with penalized weights (e.g. 'enet', 'ridge')."
            )
        deltas: Any = default["deltas"] if self.deltas is None else self.deltas
        ratios = default["lam_ratios"] if self.lam_ratios is None else self.lam_ratios
        ratios = check_lam_ratios(ratios, owner=owner)
        if np.all(ratios >= 1.0):
            warnings.warn(
                f"lam_ratios={ratios.tolist()} select no feature (lam_ratio = 1 "
                f"is lam_max): the CV can only choose the empty model. Include "
                f"smaller ratios, e.g. the default (lam_ratios=None).",
                VCPCRWarning,
                stacklevel=user_stacklevel(),
            )
        if not fixed:
            deltas = scheme.check_deltas(deltas, owner=owner, name="deltas")
        return Grid(
            tuple(int(K) for K in Ks),
            [None if d is None else float(d) for d in deltas],
            ratios,
        )

    def _folds(
        self,
        family: Family,
        X: NDArray[np.float64],
        yv: Any,
        prepared: Prepared,
        S: NDArray[np.float64] | None = None,
    ) -> list[Any]:
        """Return the CV folds: scikit-learn's ``check_cv``, stratified by family.

        An int ``cv`` gives ``StratifiedKFold`` for a classifier (scikit-learn's
        rule) and, for a survival family, folds stratified on the event
        indicator (when events and censored rows both number at least
        ``cv``), so that no test fold lacks events on a cohort whose rows are
        sorted (unshuffled, as scikit-learn's int folds). With strata ``S``
        (a stratified Cox model) an int ``cv`` stratifies on the (stratum,
        event) cells (:func:`vcpcr._input.strata_cells`; when some cell has
        ``cv`` rows), so that every training fold keeps an event of every
        stratum with 2 or more. A splitter object splits a survival outcome
        on its event indicator, so that ``StratifiedKFold`` stratifies on
        the events.
        """
        classifier = family.estimator_type == "classifier"
        labels = family.strata(prepared.outcome)
        n = X.shape[0]
        check_cv_param(self.cv, n, "VCPCRCV")
        k: Any = 5 if self.cv is None else self.cv
        cells = None
        if S is not None and labels is not None and isinstance(k, numbers.Integral):
            cells = strata_cells(S, labels > 0, int(k))
        if not isinstance(k, numbers.Integral) and not hasattr(k, "split"):
            folds = list(k)  # (train, test) pairs, checked below
        elif cells is not None:
            folds = split_cells(StratifiedKFold(int(k)), X, cells)
        elif not family.survival or labels is None:
            if classifier and isinstance(k, numbers.Integral):
                _check_class_sizes(yv, int(k))
            folds = _split(check_cv(self.cv, yv, classifier=classifier), X, yv)
        elif (
            isinstance(k, numbers.Integral)
            and np.unique(labels, return_counts=True)[1].min() >= k
        ):
            folds = list(check_cv(k, labels, classifier=True).split(X, labels))
        else:
            folds = _split(check_cv(self.cv, labels), X, labels)
        folds = check_split(folds, n, "VCPCRCV")
        if self.scoring == POOLED:
            covered = np.bincount(np.concatenate([te for _, te in folds]), minlength=n)
            if np.any(covered != 1):
                raise ValueError(
                    f"scoring={POOLED!r} pools every row's out-of-fold "
                    f"prediction, so the test folds must cover each row once (a "
                    f"K-fold split); cv's test folds cover "
                    f"{int(np.sum(covered > 0))} of {n} rows, "
                    f"{int(np.sum(covered > 1))} of them more than once. Use "
                    f"a K-fold cv, or a per-fold scoring (e.g. "
                    f"{family.scoring.scoring_name!r})."
                )
        return folds

    def _check_params(
        self, family: Family, n_features: int, *, covariates: bool
    ) -> WeightScheme:
        """Validate the parameters (the shared ones first); return the scheme.

        The grid (``n_clusters``, ``deltas``, ``lam_ratios``) is validated
        by :meth:`_grid`.
        """
        scheme = super()._check_params(family, n_features, covariates=covariates)
        check_choice(self.selection, "selection", SELECTIONS, owner="VCPCRCV")
        if not isinstance(self.refit, (bool, np.bool_)):
            raise TypeError(
                f"The 'refit' parameter of VCPCRCV must be True or False. Got "
                f"{self.refit!r} instead."
            )
        check_n_jobs(self.n_jobs, "VCPCRCV")
        if not (
            self.scoring is None
            or isinstance(self.scoring, str)
            or callable(self.scoring)
        ):
            several = isinstance(self.scoring, (list, tuple, set, dict))
            raise ValueError(
                f"VCPCRCV ranks the grid by one criterion: scoring must be a name "
                f"or a callable scorer(estimator, X, y), not a "
                f"{type(self.scoring).__name__}{' of several' if several else ''} "
                f"(got {self.scoring!r})."
                + (
                    " Pass one; evaluate the others on the refitted model."
                    if several
                    else ""
                )
            )
        if self.n_se is not None:
            if self.selection == "min":
                raise ValueError(
                    "n_se is the standard errors that selection='1se' or 'paired' "
                    "gives up for sparsity; selection='min' does not use it. Pass "
                    "n_se=None, or choose selection='1se' or 'paired'."
                )
            check_scalar(self.n_se, "n_se", numbers.Real, owner="VCPCRCV", min_val=0.0)
        return scheme

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
        return self._fit_checked(self._fit_input(X, y))

    def _fit_checked(self, data: FitInput) -> VCPCRCV:
        """``fit`` after its input route (:meth:`_fit_validated`); return self.

        A resample (:func:`vcpcr.inference._resampling.fit_part`) fits its
        part of the checked data through here, as for a ``VCPCR``.
        """
        return self._fit_validated(data)

    def _fit_validated(self, data: FitInput) -> VCPCRCV:
        """Cross-validate, choose and refit on data the input route has checked.

        ``fit`` below its door (:meth:`VCPCRBase._fit_input`): the
        attributes that describe the data (``n_features_in_``,
        ``feature_names_in_``, ``model_spec_``) come from ``data``; the
        folds, the grid and the refit (:meth:`VCPCR._fit_validated`) solve
        ``data`` as it is, and the folds' own checks (events, classes,
        levels and strata in every training part) run here. Returns self.
        """
        self._describe(data)
        progress = progress_shown(self.verbose, "VCPCRCV")
        family = data.family
        self.scorer_ = get_scorer(self.scoring, family, VCPCR(family=self.family))
        prepared, yv, levels = data.design.prepared, data.design.y, data.design.levels
        self.yname_ = data.yname
        if prepared.classes is not None:
            self.classes_ = prepared.classes
        d, layout = data.design, data.layout
        # The folds take their rows of X (the user's column order) as row-major
        # copies, whatever X's memory order: no reordered or contiguous copy here.
        X = d.X
        grid = self._grid(
            family,
            standardize(np.take(X, d.clustered, axis=1), copy=False)[0],  # row-major
            prepared.weights_target,
            data.scheme,
        )
        folds = self._folds(family, X, yv, prepared, layout.S)
        check_fold_columns(X, folds, d.clustered)
        _check_folds(family, prepared, folds, max(grid.n_clusters))
        if layout.S is not None:
            strata_names = [d.names[j] for j in d.strata]
            check_fold_strata(layout.S, strata_names, prepared.outcome[:, 1] > 0, folds)
        _check_fold_levels(layout.Z, levels, family, prepared, folds)
        self.n_splits_ = len(folds)
        self.folds_ = folds
        strata = (
            None
            if layout.S is None
            else np.unique(layout.S, axis=0, return_inverse=True)[1].ravel()
        )
        criterion, unit, y_folds = criterion_of(
            self.scoring, family, prepared, yv, strata, self.random_state, self.n_jobs
        )
        self._criterion = criterion
        spec = FoldSpec(
            family,
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
                latent=self.latent,
                covariates=d.covariates.tolist() or None,  # the data's positions
                strata=d.strata.tolist() or None,
            ),
            self.scorer_,
            criterion.fold_scoring,
            self.latent,
            layout,
            {int(j): d.names[j] for j in (*d.covariates, *d.strata)},
        )
        results = self._run_folds(X, unit, y_folds, folds, spec, progress)
        self.cv_results_ = self._results_frame(grid, results, criterion)
        self._warn_fold_issues(results, len(grid.points()))
        self.best_index_ = self._select(family)
        self.cv_results_ = criterion.in_units(self.cv_results_)
        row = self.cv_results_.iloc[self.best_index_]
        self.best_score_ = float(row["mean_test_score"])
        self.shrinkage_ = (
            float(row["calibration_slope"]) if "calibration_slope" in row else 1.0
        )
        delta = None if pd.isna(row["delta"]) else float(row["delta"])
        self.best_params_: dict[str, Any] = self._chosen_params(
            {
                "n_clusters": int(row["n_clusters"]),
                "delta": delta,
                "lam_ratio": float(row["lam_ratio"]),
            }
        )
        if self.refit:
            self.best_estimator_ = self._refit_estimator(data)
        return self

    def _run_folds(
        self,
        X: NDArray[np.float64],
        prepared: Prepared,
        y: Any,
        folds: list[Any],
        spec: FoldSpec,
        progress: bool,
    ) -> list[FoldResult]:
        """Run the folds through joblib (in order, whatever the backend).

        ``prepared`` is the response as validated by the fit, ``y`` as a
        scorer of a fold model takes it (see :func:`vcpcr._criterion.criterion_of`).
        """
        seeds = task_seeds(self.random_state, len(folds))
        ys = np.asarray(y)
        tasks = [
            (X, prepared, ys, tr, te, spec, seed)
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

    def _results_frame(
        self, grid: Grid, results: list[FoldResult], criterion: Criterion
    ) -> pd.DataFrame:
        """Build ``cv_results_`` on the folds' unit scale, in one pass.

        The score columns are the criterion's (:meth:`Criterion.score_columns`);
        the sizes, KKT violations, ranks, parameters and times are common.
        """
        points = grid.points()
        frame = pd.DataFrame(points, columns=["n_clusters", "delta", "lam_ratio"])
        cols = criterion.score_columns(results, len(points), self.folds_)
        for i in range(cols.splits.shape[1]):
            frame[f"split{i}_test_score"] = cols.splits[:, i]
        # Raised: could not be fitted or scored in a fold; its sizes are unknown.
        failed = cols.raised
        used = (~failed).sum(axis=1)
        self._failures = _Failures(cols.bad, failed, results)
        frame["mean_test_score"] = cols.mean
        frame["std_test_score"] = cols.std
        frame["n_failed_folds"] = cols.bad.sum(axis=1)
        frame["se_diff_test_score"] = cols.se_diff
        for name, values in (
            ("mean_size", [r.sizes for r in results]),
            ("mean_n_clusters", [r.n_clusters for r in results]),
        ):
            with np.errstate(invalid="ignore"):
                frame[name] = (
                    np.where(failed, 0.0, np.column_stack(values)).sum(axis=1) / used
                )
        kkt = np.column_stack(
            [
                np.full(len(points), np.nan) if r.weights_kkt is None else r.weights_kkt
                for r in results
            ]
        )
        frame["max_weights_kkt"] = np.max(
            np.where(np.isnan(kkt), -np.inf, kkt), axis=1, initial=-np.inf
        )
        frame.loc[np.isnan(kkt).all(axis=1), "max_weights_kkt"] = np.nan
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
        for name, column in cols.extra.items():
            frame[name] = column
        return frame

    def peer_curve(
        self, fit_path: Callable[..., Any], X: ArrayLike, y: ArrayLike
    ) -> pd.DataFrame:
        """Score a peer's path on the same folds and criterion (for ``plot_cv``).

        Shows what sparsity costs against another penalized path (Coxnet,
        ``ElasticNet``, an elastic-net logistic regression): ``fit_path`` is
        fitted on each training fold, and every row's out-of-fold linear
        predictors are cross-calibrated and pooled exactly as the grid's
        (``scoring="neg_pooled_deviance"`` only; see
        :mod:`vcpcr._solvers.pooled`): its linear predictors are centred at the
        training means and shrunk by the other folds' calibration slope.

        Parameters
        ----------
        fit_path : callable
            ``fit_path(X_train, y_train)`` returns the peer's coefficients
            ``(n_points, n_features)`` on the raw columns of ``X``, or a
            tuple ``(coef, intercept)`` with ``intercept`` of shape
            ``(n_points,)``. It must use the same path (e.g. penalties fixed
            from all rows) in every fold.
        X : array-like of shape (n_samples, n_features)
            The peer's numeric design, row for row the rows ``fit`` used
            (``folds_`` indexes them).
        y : array-like
            The response as ``fit`` took it (cox: ``(time, event)`` columns
            or a structured array).

        Returns
        -------
        pandas.DataFrame
            One row per path point: ``mean_size`` (non-zero coefficients,
            mean over the folds), ``mean_test_score`` (minus the pooled
            deviance, as ``cv_results_``), ``se_test_score`` (its bootstrap
            standard error) and ``calibration_slope``.

        Raises
        ------
        ValueError
            If the CV was not scored by the pooled deviance, or ``X`` does
            not have the rows of the fit, or ``fit_path`` returns a path of
            another shape or a different length in some fold.
        """
        check_same_rows(X, y)
        check_is_fitted(self, "folds_")
        family, criterion = self._family, self._criterion
        if not isinstance(criterion, PooledPredictors):
            raise ValueError(
                f"peer_curve needs a CV scored by the pooled deviance "
                f"(scoring={POOLED!r}); this one was scored by "
                f"{scoring_name(self.scoring, family)!r}."
            )
        Xa = check_array(X, name="X")
        n = sum(test.size for _, test in self.folds_)
        if Xa.shape[0] != n:
            raise ValueError(
                f"X has {Xa.shape[0]} rows but the CV's folds cover {n}; pass "
                f"the rows fit used, in the same order."
            )
        check_y_length(n, y)
        outcome = family.prepare(y).outcome
        paths = []
        for train, _ in self.folds_:
            path = fit_path(Xa[train], take(y, train))
            coef, b0 = path if isinstance(path, tuple) else (path, None)
            coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
            b0 = np.zeros(coef.shape[0]) if b0 is None else np.asarray(b0, float)
            paths.append((coef, b0))
        shape = (paths[0][0].shape[0], Xa.shape[1])
        for i, (coef, b0) in enumerate(paths):
            if coef.shape != shape or b0.shape != shape[:1]:
                raise ValueError(
                    f"fit_path returned coefficients of shape {coef.shape} and "
                    f"intercepts of shape {b0.shape} in fold {i}; expected "
                    f"{shape} and {shape[:1]} (the same path in every fold, "
                    f"one column per column of X)."
                )
        eta, clustered = np.full((2, shape[0], n), np.nan)
        for (train, test), (coef, b0) in zip(self.folds_, paths, strict=True):
            clustered[:, test] = coef @ (Xa[test] - Xa[train].mean(axis=0)).T
            eta[:, test] = coef @ Xa[test].T + b0[:, None]
        sizes = np.array([np.count_nonzero(coef, axis=1) for coef, _ in paths])
        pooled = criterion.pool(eta, clustered, self.folds_, outcome)
        return pd.DataFrame(
            {
                "mean_size": sizes.mean(axis=0),
                "mean_test_score": -pooled.deviance,
                "se_test_score": np.std(pooled.draws, axis=0, ddof=1),
                "calibration_slope": pooled.slopes,
            }
        )

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
                f"estimates. Consider fewer clusters (n_clusters) or larger "
                f"lam_ratios.",
                SeparationWarning,
                stacklevel=user_stacklevel(),
            )
        self._failures.warn()
        if unconverged:
            warnings.warn(
                f"SOS-NMF did not converge within max_iter={self.max_iter} in "
                f"{unconverged} of {total} fold x grid fits (tol={self.tol:g}).",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )

    def _select(self, family: Family) -> int:
        """Row of the chosen grid point (``selection``) among the complete ones."""
        res = self.cv_results_
        mean = res["mean_test_score"].to_numpy()
        if not np.any(np.isfinite(mean)):
            scoring = scoring_name(self.scoring, family)
            raise ValueError(self._failures.nothing_scored(scoring))
        return selected_index(res, self.selection, self.n_splits_, self.n_se)

    def _chosen_params(self, point: dict[str, Any]) -> dict[str, Any]:
        """Return ``best_params_``: the refit's parameters but VCPCR's defaults.

        The grid point ``point`` first (always), then, in :class:`VCPCR`'s
        order, every parameter of the refit whose value differs from
        ``VCPCR()``'s: the ones VCPCRCV shares with VCPCR (``latent``,
        ``n_init``, ``random_state``, ``family``, ``covariates``, ...) and
        the chosen point's calibration slope (``shrinkage``), so that
        ``VCPCR(**best_params_)`` is the refit's estimator.
        """
        own = self.get_params(deep=False)
        refit = {k: own[k] for k in VCPCR._get_param_names() if k in own}
        refit["shrinkage"] = self.shrinkage_
        defaults = VCPCR().get_params(deep=False)
        rest = {
            k: refit[k]
            for k in VCPCR._get_param_names()
            if k in refit and k not in point and not _is_default(refit[k], defaults[k])
        }
        return {**point, **rest}

    def _refit_estimator(self, data: FitInput) -> VCPCR:
        """Return ``VCPCR(**best_params_)`` fitted on the CV's checked ``data``.

        As scikit-learn's ``LinearModelCV``: the refit solves the data this
        fit validated (:meth:`VCPCR._fit_validated`), and the attributes that
        the input route set to describe them (``n_features_in_``,
        ``feature_names_in_``, ``model_spec_``) are ``data``'s, not derived
        again. An empty model chosen by the CV is an answer, not a mistake
        to warn about (the summary's tuning note says it): ``VCPCR.fit``'s
        warning is not raised.
        """
        estimator = VCPCR(**self.best_params_)
        config = getattr(self, "_sklearn_output_config", {}).get("transform")
        estimator.set_output(transform=config)
        return estimator._fit_validated(data)

    # ------------------------------------------------------------ delegation
    def _best(self) -> VCPCR:
        """Return ``best_estimator_`` (the fitted state :class:`VCPCR` reads)."""
        check_is_fitted(self, "cv_results_")
        if not self.refit:
            raise AttributeError("refit=False: no best_estimator_ to predict with.")
        return self.best_estimator_

    def set_output(self, *, transform: str | None = None) -> VCPCRCV:
        """Set the output container of ``transform`` and ``fit_transform``.

        As :meth:`VCPCR.set_output`, applied to ``best_estimator_`` (now
        and at every refit), which transforms.

        Parameters
        ----------
        transform : {"default", "pandas", "polars"} or None, default=None
            The output of ``transform``; None leaves it unchanged.

        Returns
        -------
        VCPCRCV
            This estimator.
        """
        super().set_output(transform=transform)
        if hasattr(self, "best_estimator_"):
            self.best_estimator_.set_output(transform=transform)
        return self

    def score(self, X: ArrayLike, y: ArrayLike | None = None) -> float:
        """``scorer_`` of ``best_estimator_`` on ``(X, y)`` (higher is better).

        As scikit-learn's ``GridSearchCV`` and ``LogisticRegressionCV``, the
        score is the one the CV ranked the grid by (``scoring``), which
        may differ from :meth:`VCPCR.score` (R^2, accuracy or concordance).
        The pooled deviance (the default) is a criterion of out-of-fold
        predictions, not a score of one model on new data: there ``score``
        is the family's own score (minus the mean squared error; minus the
        log-loss, half the binomial deviance per row; Harrell's C), so for
        binomial and cox models it is not on ``best_score_``'s scale. This
        is the one public method of :class:`VCPCR` whose meaning differs here
        (so ``set_score_request``, which configures ``VCPCR.score``'s
        ``sample_weight``, is VCPCR's only).

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
        _, y = best._score_target(X, y, min_samples=1)  # VCPCR.score's checks
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

    def _gate_text(self) -> str:
        """``", n_se=0.75"`` for the rules with a gate, else ``""``."""
        if self.selection == "min":
            return ""
        c = default_n_se(self.selection) if self.n_se is None else self.n_se
        return f", n_se={c:g}"

    def _tuning_note(self) -> str:
        p = self.best_params_
        delta = "" if p["delta"] is None else f", delta={p['delta']:.3g}"
        scoring = scoring_name(self.scoring, self._family)
        return (
            f"Tuning: n_clusters={p['n_clusters']}{delta}, "
            f"lam_ratio={p['lam_ratio']:.3g} chosen by {self.n_splits_}-fold CV "
            f"(selection='{self.selection}'{self._gate_text()}) among "
            f"{len(self.cv_results_)} grid "
            f"points x {self.n_init} starts; mean {scoring} = {self.best_score_:.4g}."
            + (
                f" Firth's estimates were used in {self.n_separated_fits_} of "
                f"{len(self.cv_results_) * self.n_splits_} fold fits (separation)."
                if self.n_separated_fits_
                else ""
            )
            + (
                " The CV chose a model without clusters: on these data the features "
                "add nothing the CV can detect." + self._near_misses()
                if self.refit and self.best_estimator_.n_clusters_ == 0
                else ""
            )
        )

    def _near_misses(self, top: int = 3) -> str:
        """Say which grid points with features came closest to the chosen one.

        For an empty choice (#48's trap: the default keeps no gene where a
        model with genes scores nearly as well, or better but inside the
        gate): the ``top`` best points whose folds selected features and
        their mean score minus the chosen point's. When the chosen point is
        the best, each difference is also given in its standard errors
        (``se_diff_test_score``, paired); when a point with features is the
        best, the note says by how much it beat the chosen one and the gate
        that let the sparser point win.
        """
        res = self.cv_results_
        mean = res["mean_test_score"].to_numpy()
        genes = np.flatnonzero((res["mean_size"].to_numpy() > 0) & np.isfinite(mean))
        if genes.size == 0:
            return " No grid point with features was scored on every fold."
        order = genes[np.argsort(-mean[genes], kind="stable")][:top]
        chosen = mean[self.best_index_]
        best = int(np.nanargmax(np.where(np.isfinite(mean), mean, np.nan)))
        se = (
            res["se_diff_test_score"].to_numpy()
            if "se_diff_test_score" in res
            else np.full(mean.size, np.nan)
        )
        parts = []
        for i in order:
            row = res.iloc[i]
            delta = "" if pd.isna(row["delta"]) else f", delta={row['delta']:.3g}"
            slope = (
                f", calibration slope {row['calibration_slope']:.2f}"
                if "calibration_slope" in row
                else ""
            )
            diff = mean[i] - chosen
            paired = best == self.best_index_ and se[i] > 0
            parts.append(
                f"n_clusters={int(row['n_clusters'])}{delta}, "
                f"lam_ratio={row['lam_ratio']:.3g} ({row['mean_size']:.1f} "
                f"features{slope}): {diff:+.4g}"
                + (f" ({diff / se[i]:+.2f} SE)" if paired else "")
            )
        text = (
            " Closest points with features, their mean score minus the chosen "
            "one's: " + "; ".join(parts) + "."
        )
        if best != self.best_index_ and self.selection != "min":
            margin = mean[best] - chosen
            width = default_n_se(self.selection) if self.n_se is None else self.n_se
            unit = (
                se[self.best_index_]
                if self.selection == "paired"
                else score_se(res, self.n_splits_).to_numpy()[best]
            )
            text += (
                f" The best point has features and scored {margin:.4g} above "
                f"the chosen one, inside the gate of {width:g} x {unit:.4g} = "
                f"{width * unit:.4g} (selection='{self.selection}'), so the "
                f"sparser point won."
            )
        return text

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the CV curve (deprecated meaning: use :meth:`plot_cv`).

        .. deprecated:: Unreleased
            ``VCPCRCV.plot`` draws the CV curve, while ``plot`` of a fitted
            :class:`VCPCR` draws its Cox coefficients (lifelines' ``plot``).
            It warns a ``FutureWarning``; in a future release it will mean
            ``best_estimator_.plot``, as every other method of
            :class:`VCPCR` does on a ``VCPCRCV``. Call :meth:`plot_cv` for
            the CV curve.

        Parameters
        ----------
        ax, **kwargs
            As :meth:`plot_cv`.

        Returns
        -------
        matplotlib.axes.Axes
            :meth:`plot_cv`'s axes.
        """
        check_is_fitted(self, "cv_results_")
        warnings.warn(
            "VCPCRCV.plot() draws the CV curve; in a future release it will "
            "draw best_estimator_'s Cox coefficients, as VCPCR.plot() (cox "
            "family only). Call plot_cv() for the CV curve.",
            FutureWarning,
            stacklevel=2,
        )
        return self.plot_cv(ax=ax, **kwargs)

    def plot_cv(self, ax: Any = None, **kwargs: Any) -> Any:
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


def _is_default(value: Any, default: Any) -> bool:
    """Whether a parameter's ``value`` is its ``default`` (a None, str or number).

    Anything else (a list, an array, a family object) counts as given, so
    that ``best_params_`` keeps it.
    """
    if default is None or value is None:
        return value is default
    plain = (str, numbers.Real)
    return (
        type(value) is type(default)
        and isinstance(value, plain)
        and bool(value == default)
    )


class _Failures:
    """The fold x grid fits that failed: where, how many, and the usual reason.

    ``bad`` (points, folds) marks a point not scored in a fold: ``raised``
    (its fit or its scorer raised, or the fold's weights did) or a
    non-finite score.
    """

    def __init__(
        self,
        bad: NDArray[np.bool_],
        raised: NDArray[np.bool_],
        results: list[FoldResult],
    ) -> None:
        self.bad, self.raised = bad, raised
        messages = [m for r in results for m in r.failures]
        messages += [_NON_FINITE] * int(np.sum(bad & ~raised))
        self.reason, self.count = most_common_message(messages)

    def _counts(self) -> str:
        n_points, n_folds = self.bad.shape
        fits, raised = int(self.bad.sum()), int(self.raised.sum())
        return (
            f"{fits} of {n_points * n_folds} fold x grid fits failed: {raised} "
            f"raised an error, {fits - raised} scored non-finite"
        )

    def _why(self) -> str:
        return (
            f"Most common reason ({self.count} of {int(self.bad.sum())} failed "
            f"fits): {self.reason.rstrip('.')}."
        )

    def warn(self) -> None:
        """Warn once if some but not all grid points failed in some fold."""
        failed = self.bad.any(axis=1)
        if not failed.any() or failed.all():  # all: _select raises
            return
        warnings.warn(
            f"{int(failed.sum())} of {failed.size} grid points failed in some of "
            f"the {self.bad.shape[1]} CV folds ({self._counts()}). Only points "
            f"scored on every fold are ranked, so these have no mean_test_score "
            f"and rank last (their failed folds are in cv_results_'s "
            f"n_failed_folds). {self._why()}",
            VCPCRWarning,
            stacklevel=user_stacklevel(),
        )

    def nothing_scored(self, scoring: str) -> str:
        """Return the error message when no point was scored on every fold."""
        n_folds = self.bad.shape[1]
        if not self.raised.any():
            return (
                f"No grid point has a finite mean CV score (scoring={scoring!r}, "
                f"{n_folds} folds; {self._counts()}): the score is undefined on "
                f"these test folds (e.g. R^2 on folds of one sample). Use fewer "
                f"folds (cv) or another scoring."
            )
        whole = np.flatnonzero(self.bad.all(axis=0)).tolist()
        return (
            f"No grid point could be fitted and scored in every one of the "
            f"{n_folds} CV folds ({self._counts()}"
            + (f"; every point failed in fold(s) {whole}" if whole else "")
            + f"), and grid points are ranked only on the same folds. "
            f"{self._why()} Use fewer folds (cv) so that each training fold "
            f"keeps more rows and events; merge or drop a covariate level with "
            f"few rows or no event (it separates); or change the grid "
            f"(n_clusters, deltas, lam_ratios)."
        )


def _split(splitter: Any, X: Any, y: Any) -> list[Any]:
    """Return ``splitter``'s folds; a splitter that needs groups is an error."""
    try:
        return list(splitter.split(X, y))
    except ValueError as exc:
        if "groups" not in str(exc):
            raise
        raise ValueError(
            f"VCPCRCV.fit takes no groups, which cv={splitter!r} needs: pass its "
            f"folds instead, cv=list(splitter.split(X, y, groups))."
        ) from exc


#: The reason of a fold x grid fit whose score is not finite.
_NON_FINITE = "the CV score was not finite on the test fold"


def _check_folds(
    family: Family, prepared: Prepared, folds: list[Any], max_k: int
) -> None:
    """Raise a ValueError naming the first CV fold that cannot be fitted or scored.

    ``prepared`` is the fit's validated response
    (:meth:`vcpcr._families.Family.part_problem` reads it).
    """
    for i, (train, test) in enumerate(folds):
        if max_k + 1 >= len(train):
            raise ValueError(
                f"CV fold {i} trains on {len(train)} rows, too few for n_clusters="
                f"{max_k} (the outcome model needs n_clusters + 1 < rows). Use "
                f"smaller n_clusters or fewer folds (cv)."
            )
        problem = family.part_problem(prepared, train, test)
        if problem is not None:
            raise ValueError(
                f"CV fold {i} of {len(folds)}: {problem}. Use fewer folds (cv) "
                f"or {family.fold_hint}."
            )


def _check_fold_levels(
    Z: NDArray[np.float64],
    levels: list[Level],
    family: Family,
    prepared: Prepared,
    folds: list[Any],
) -> None:
    """Raise a ValueError naming the first training fold with an unfit level."""
    for i, (train, _) in enumerate(folds):
        where = f" in CV fold {i} of {len(folds)}'s training part"
        try:
            check_levels(Z[train], levels, family, prepared.outcome[train], where=where)
        except ValueError as exc:
            raise ValueError(f"{exc} Or use fewer folds (cv).") from None


def _timed_fit_fold(
    X: NDArray[np.float64],
    prepared: Prepared,
    y: Any,
    train: NDArray[np.intp],
    test: NDArray[np.intp],
    spec: FoldSpec,
    seed: int,
) -> tuple[FoldResult, float]:
    """Run :func:`fit_fold` on one fold; return its result and wall time (s).

    The fold's rows are taken here, in the worker, from the shared ``X``
    (which joblib memory-maps for its worker processes when it is large, and
    dask scatters once), in the user's column order:
    the parent holds no per-fold copies, and ``fit_fold`` standardizes its
    own copy of the training rows' clustered columns in place
    (:func:`vcpcr._tuning.train_fold`). The response is the fit's ``prepared`` one,
    restricted to the fold's rows without validating it again
    (:meth:`vcpcr._families.Family.restrict`); ``y`` is the response as a
    scorer of a fold model takes it.
    """
    start = time.perf_counter()
    result = fit_fold(
        X,
        train,
        spec.family.restrict(prepared, train),
        X[test],
        prepared.outcome[test],
        spec,
        seed,
        y_test=y[test],
    )
    return result, time.perf_counter() - start
