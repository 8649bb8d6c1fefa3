"""The VC-PCR estimator (scikit-learn API, statsmodels results)."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, column_or_1d

from vcpcr._base import FitInput, VCPCRBase
from vcpcr._checks import (
    check_array,
    check_finite,
    check_scalar,
    check_times,
    check_y_length,
    feature_names,
)
from vcpcr._clustering import (
    KeptStart,
    best_start,
    best_starts,
    loadings,
    order_clusters,
)
from vcpcr._families import Family, Prepared, family_instance, known_family
from vcpcr._formula import (
    ColumnEncoding,
    column_encodings,
    encode_new,
    formula_outcome,
    transform_new,
)
from vcpcr._input import (
    ColumnLayout,
    check_outcome_like,
    check_same_rows,
    validate_new_x,
)
from vcpcr._scaling import raw_coefficients, standardize
from vcpcr._scoring_rule import ScoringRule, level_rows
from vcpcr._solvers.distributions import LOGISTIC
from vcpcr._sos_nmf import initial_partitions
from vcpcr._summary import SummaryMixin
from vcpcr._survival import evaluate_baseline, step_functions, stratum_baselines
from vcpcr._weights import WeightScheme, scheme_delta, weights_for_grid
from vcpcr.exceptions import VCPCRWarning, user_stacklevel

__all__ = ["VCPCR"]


class _FitData(NamedTuple):
    """What ``fit`` and ``path`` solve: the prepared data, weights and starts."""

    yname: str
    Xs: NDArray[np.float64]
    mean: NDArray[np.float64]
    scale: NDArray[np.float64]
    prepared: Prepared
    weights: NDArray[np.float64]
    weights_kkt: float | None
    starts: list[NDArray[np.intp]]
    layout: ColumnLayout


def check_lam_ratios(values: ArrayLike, *, owner: str) -> NDArray[np.float64]:
    """Validate SOS-NMF penalty ratios: a 1-d array of finite numbers in [0, 1]."""
    if np.asarray(values).dtype.kind == "b":
        raise TypeError(
            f"The 'lam_ratios' parameter of {owner} must hold numbers in [0, 1], "
            f"not booleans. Got {values!r} instead."
        )
    ratios = check_array(values, "lam_ratios", ensure_2d=False)
    bad = ratios[(ratios < 0) | (ratios > 1)]
    if bad.size:
        raise ValueError(
            f"The 'lam_ratios' parameter of {owner} must hold values in the "
            f"range [0, 1] (fractions of lam_max; 1 selects nothing). Got "
            f"{bad.tolist()} among {ratios.tolist()} instead."
        )
    return ratios


def _warn_unsafe_scale(y: NDArray[np.float64], owner: str) -> None:
    """Warn when ``y``'s squared residuals underflow or overflow in float64.

    The sum of ``n`` squares of size ``sd**2`` overflows near ``2**1024``;
    squares below ``2**-1022`` lose precision (residuals are smaller than
    ``y``'s spread, hence the margin). Between, e.g. from 1e-150 to 1e150
    for a hundred rows, the statistics are those of ``y`` in unit scale.
    """
    spread = float(standardize(y)[2])  # computed without under/overflow
    twice = 2 * int(np.frexp(spread)[1])
    if twice + np.log2(y.size) > 1020 or twice < -1000:
        warnings.warn(
            f"{owner}: y has standard deviation {spread:.3g}; at this scale its "
            f"squared residuals underflow or overflow in float64, so score(), "
            f"the summary's standard errors and p-values and get_prediction's "
            f"intervals are not reliable (the fit and its predictions are). "
            f"Rescale y (e.g. y / y.std()) and scale the coefficients back.",
            VCPCRWarning,
            stacklevel=user_stacklevel(),
        )


def cap_n_clusters(n_clusters: int, n_features: int, owner: str) -> int:
    """Return ``min(n_clusters, n_features)``, warning when it caps."""
    if n_clusters <= n_features:
        return n_clusters
    warnings.warn(
        f"{owner}: n_clusters={n_clusters} is larger than the number of features "
        f"({n_features}); using n_clusters={n_features}. Pass n_clusters <= "
        f"{n_features} to silence this warning.",
        VCPCRWarning,
        stacklevel=user_stacklevel(),
    )
    return n_features


def _family_has(test: Callable[[Family], bool]) -> Callable[[VCPCR], bool]:
    """``available_if`` check: the estimator's family passes ``test``."""

    def check(est: VCPCR) -> bool:
        family = known_family(est.family)
        return family is not None and test(family)

    return check


_is_classifier = _family_has(lambda f: f.estimator_type == "classifier")
_is_survival = _family_has(lambda f: f.survival)
_is_not_survival = _family_has(lambda f: not f.survival)


class VCPCR(SummaryMixin, VCPCRBase):
    r"""Variable Cluster Principal Component Regression.

    VC-PCR predicts ``y`` from wide, correlated data while selecting the
    features that matter and grouping them into clusters that act together:

    0. weights ``w``: penalized (elastic net, ridge or lasso) coefficients of
       ``y`` on ``X`` (or ones);
    1. weighted SOS-NMF clusters and selects the features of the
       standardized ``X W`` (each feature in at most one cluster, with a
       non-negative membership degree);
    2. the latent variables ``M = X V`` (one per cluster; see ``latent``)
       enter an OLS
       (gaussian) or logistic (binomial) regression with an intercept, or a
       Cox proportional-hazards model (cox).

    Parameters
    ----------
    n_clusters : int, default=5
        Number of clusters ``K`` of the random initial partitions. Clusters
        that empty during the iterations are dropped, so the fit may have
        fewer. Capped (with a warning) at the number of features.
    family : {"gaussian", "binomial", "cox"} or Family, default="gaussian"
        Outcome model: OLS regression, logistic regression (``y`` with two
        labels; the estimator is then a scikit-learn classifier) or Cox
        proportional hazards (``y`` a survival outcome: ``(time, event)``
        columns, :func:`vcpcr.Surv`, or scikit-survival's structured array;
        requires lifelines). A name, or a family object (an instance of
        ``vcpcr._families.Family``, such as the values of
        ``vcpcr._families.FAMILIES``: the same fit as its name, or of a
        subclass of the user's, which brings its own step-0 loss
        ``Family.loss`` and CV scorings ``Family.scoring``), resolved once
        per fit.
    weights : {"enet", "ridge", "lasso", "identity", "glmnet_ridge", \
            "glmnet_lasso"} or array-like of shape (n_features,), default="enet"
        Step-0 weights: penalized regression coefficients (``"enet"``: an
        elastic net with glmnet's ``alpha = 0.05``, the most accurate scheme
        on the paper's simulation; see the weights study in the docs), all ones
        (unsupervised clustering), the paper's own early-stopped glmnet
        weights (gaussian only), or given values (e.g. from
        :func:`compute_weights` with another ``l1_ratio``). Given weights act
        through their ratios: they are divided by ``max|w|`` (so
        ``weights_`` has ``max|w| = 1``, and ``1e300 * w`` clusters as ``w``).
    delta : float, optional
        Penalty of the weights in glmnet's parametrization (see
        :func:`compute_weights`), ``> 0``. ``None`` uses the scheme's
        default (:data:`DEFAULT_DELTA`): 0.5 (enet), 0.01 (ridge), 0.05
        (lasso), 0.0036 (glmnet_ridge) or 0.0004 (glmnet_lasso). Ignored by
        ``"identity"`` and given weights.
    lam_ratio : float in [0, 1], default=0.5
        SOS-NMF sparsity penalty as a fraction of ``lam_max``, the smallest
        penalty that selects nothing; larger values select fewer features
        (1 selects none).
    shrinkage : float in [0, 1], default=1.0
        Factor applied to step 2's coefficients of the latent variables
        after the fit (the covariates' coefficients and the intercept are
        kept): a calibration slope, as van Houwelingen & le Cessie's
        shrinkage. Step 2 fitted on the supervised latent variables of a few
        dozen events is over-confident; :class:`VCPCRCV` with
        ``scoring="neg_pooled_deviance"`` estimates the slope from the
        out-of-fold predictions and refits with it. ``coef_``,
        ``cluster_coef_``, every prediction and a Cox model's baseline hazard
        (Breslow's, re-estimated for the shrunk linear predictor) use it;
        ``result_`` and the summary's table stay the unshrunk fit (its
        standard errors and p-values are those of that fit).
    latent : {"paper", "signed"}, default="paper"
        How a selected feature enters its cluster's latent variable.
        ``"paper"``: ``M = X V``, the paper's step 2, every member with a
        positive sign. ``"signed"``: ``M = X diag(sign w) V``, each member
        with the sign of its step-0 weight, as step 1 clustered it (in ``X
        W``). Step 1 puts a feature with a negative weight into a cluster of
        positively weighted features when it is *anti*-correlated with them;
        ``"paper"`` then adds it with the wrong sign, so that it cancels the
        others and its coefficient has the opposite sign of its weight.
        ``"signed"`` makes the fit equivariant to flipping the sign of a
        column (its weight and coefficient flip, predictions do not
        change), as the lasso and Coxnet are. The two agree on every cluster
        whose members' weights share one sign.
        ``loadings_`` holds the matrix used.
    init : "random" or array-like of shape (n_features,), default="random"
        Initial partition: random (``n_init`` draws) or given labels
        ``0..K-1`` (then ``n_init`` is ignored).
    n_init : int, default=10
        Number of random initial partitions; the start with the lowest final
        SOS-NMF objective is kept.
    max_iter : int, default=500
        Maximum SOS-NMF iterations per start.
    tol : float, default=1e-4
        Relative change of the SOS-NMF objective at which a start stops.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the random initial partitions.
    formula : str, optional
        A model formula such as ``"weight ~ ."``, ``"np.log(y) ~ . - age"``
        or ``"I(status == 'dead') ~ ."``, or a two-part formula
        ``"Surv(time, event) ~ age + C(stage) | ."`` with the covariates left
        of ``|`` (categorical ones coded as statsmodels codes them) and the
        clustered features right of it (``.``: every column but the outcome
        and the covariates); then ``fit`` takes one DataFrame
        (no ``y``) and ``predict``/``transform``/``score`` take DataFrames
        that are encoded identically (``model_spec_``). Categorical columns
        become dummy variables that SOS-NMF may cluster like any other.
        A formula is Python code, evaluated as in patsy and formulaic: never
        build one from untrusted text. It may use columns, arithmetic,
        ``np.<function>``, ``Surv``, ``strata``, ``C``, ``I`` and formulaic's
        transforms; anything else (``open``, ``__import__``, attributes of
        columns...) is refused before it runs. Names passed as
        ``covariates=``/``strata=`` are data, never code.
    missing : {"raise", "drop"}, default="raise"
        Rows with missing values (NaN, None, ``pd.NA``) in the columns the
        formula uses, or without a formula in ``X``, ``y``, the covariates
        or the strata, are an error, or are dropped with one warning saying
        how many.
    covariates : str, int or list of them, optional
        Clinical covariates to adjust for (e.g. ``["age", "stage"]``):
        column names of a DataFrame ``X`` (with ``formula``, of the data or
        of its design) or column positions of an array. They are never
        clustered or selected, unpenalized in step 0 and enter step 2 beside
        the latent variables on their raw scale (see Notes). A categorical,
        string or object column of strings becomes treatment dummies, the
        first level (sorted labels, or a categorical's first used category)
        the reference, as the formula ``C(stage)`` codes it
        (``stage[T.II]``, ...), and ``predict`` encodes new data
        identically. A numeric column, also an integer code such as a stage
        1-4, enters as one linear term (as in statsmodels and R); make it
        categorical (``X["stage"].astype("category")``) for one coefficient
        per level. Before any fit, each level of a categorical covariate or
        of a two-valued one is checked: with ``family="cox"`` it needs at
        least 1 event, and neither may its rows all leave the risk set
        before the other rows' first event nor the other rows all leave
        before its first event; with ``"binomial"`` it needs rows of both
        classes (so at least 2 rows). Otherwise its unpenalized step-2
        coefficient diverges, whatever the rest of the data, and a
        ``ValueError`` names the covariate, the level, its rows and events,
        and the fixes (merge the level with another, or drop its rows).
        Levels past these thresholds may still be imprecise; their standard
        errors say how.
        A constructor parameter rather than a second array in ``fit``, so
        that ``clone``, cross-validation and ``Pipeline`` pass them along
        with ``X``.
    strata : str, int or list of them, optional
        Cox only: columns (names or positions, as ``covariates``; numbers,
        or categories encoded as treatment dummies) whose combinations get
        their own baseline hazard in step 2 (lifelines' ``strata``). With a
        formula, a name of a data column is read from the data whether or
        not the formula uses it (never clustered), and ``strata(center)``
        inside the formula means the same. Neither clustered nor
        covariates. The step-0 weights are unstratified (scikit-survival's
        Coxnet has no strata); the summary says so.

    Attributes
    ----------
    membership_ : pandas.DataFrame of shape (n_features, n_clusters_)
        Membership degrees ``V`` (index: feature names; columns
        ``cluster_1..``); clusters are ordered by total membership.
    loadings_ : pandas.DataFrame of shape (n_features, n_clusters_)
        Step 2's loadings ``L`` (the latent variables are ``M = X L`` on the
        standardized scale): ``membership_``, its rows times the sign of
        the features' weights with ``latent="signed"``.
    labels_ : ndarray of shape (n_features,)
        Cluster of each feature (column of ``membership_``), -1 if not
        selected.
    clusters_ : dict of str to list of str
        Cluster name -> member names, strongest membership first.
    n_clusters_ : int
        Number of non-empty clusters.
    coef_ : ndarray of shape (n_features,)
        Coefficients on the original scale of ``X``, one per input column
        (zero for unselected features; a covariate's column holds its
        step-2 coefficient), so that ``predict`` uses
        ``X @ coef_ + intercept_`` with or without covariates.
    intercept_ : float
        Intercept on the original scale.
    cluster_coef_ : pandas.Series
        Step-2 coefficients of the latent variables (without intercept),
        times ``shrinkage``.
    module_sd_ : pandas.Series
        Standard deviation (``ddof=1``) of each latent variable (cluster
        score) on the training data: ``cluster_coef_ * module_sd_`` is a
        cluster's effect per standard deviation (the summary's hazard or odds
        ratios per SD).
    prognostic_index_sd_ : float
        Standard deviation on the training data of the features' part of the
        linear predictor, ``M @ cluster_coef_`` (without the covariates).
    covariate_coef_ : pandas.Series
        Step-2 coefficients of the covariates, per unit of each (empty
        without covariates).
    covariate_names_ : list of str
        Names of the covariates (``x<j>`` for arrays), in ``result_``'s order.
    covariate_columns_ : ndarray of int
        Positions of the covariates among the input columns.
    clustered_columns_ : ndarray of int
        Positions of the clustered features (``membership_.index``) among
        the input columns: all but the covariates.
    weights_ : ndarray of shape (n_clustered,)
        Step-0 weights of the clustered features.
    weights_kkt_ : float or None
        How far ``weights_`` are from the optimum of their penalized fit: the
        largest violation of its optimality (KKT) conditions, relative to
        ``delta`` (0 at the optimum; see ``docs/weights.md``). The solvers
        reach at most ``1e-3`` or warn (``ConvergenceWarning``). None for
        weights that are no penalized fit (``"identity"``, given weights,
        the paper's early-stopped ``"glmnet_*"`` weights).
    lam_ : float
        Absolute SOS-NMF penalty, ``lam_ratio * lam_max_``.
    lam_max_ : float
        Largest ``lam_max`` over the starts (see Notes).
    n_iter_ : int
        SOS-NMF iterations of the kept start.
    converged_ : bool
        Whether the kept start converged.
    objective_ : ndarray
        SOS-NMF objective per iteration of the kept start.
    best_init_ : int
        Index of the kept start.
    result_ : statsmodels results or lifelines.CoxPHFitter
        The untouched step-2 fit (``OLS`` or ``Logit`` results, or the fitted
        ``CoxPHFitter`` with columns ``time`` and ``event``).
    delta_ : float or None
        The weights' penalty used (``delta`` or the scheme's
        :data:`DEFAULT_DELTA`); None for ``"identity"`` or given weights.
    mean_, scale_ : ndarray of shape (n_clustered,)
        Means and standard deviations (``ddof=1``) used to standardize the
        clustered features.
    classes_ : ndarray of shape (2,)
        Class labels (binomial); ``classes_[1]`` is the "event".
    unique_times_ : ndarray
        Distinct training times (cox), at which the survival predictions are
        evaluated by default (scikit-survival's name and choice).
    concordance_index_ : float
        Harrell's concordance of the training fit (cox; lifelines' name).
    baseline_cumulative_hazard_ : pandas.DataFrame
        Breslow's baseline cumulative hazard of the training rows' linear
        predictors ``X @ coef_ + intercept_`` (cox; lifelines' name and
        layout: indexed by ``unique_times_``, one column per stratum), which
        the survival predictions use; lifelines' own when ``shrinkage=1``.
    train_linear_predictor_ : ndarray of shape (n_samples_fit,)
        The training rows' linear predictor ``predict_log_partial_hazard``
        (cox), in their order: its quantiles are the training cut-offs at
        which :func:`vcpcr.plotting.plot_risk_groups` splits new data.
    train_strata_ : ndarray of object, shape (n_samples_fit,), or None
        Each training row's stratum (cox with ``strata``): its value of the
        strata design column (a tuple for several, such as the dummies of a
        categorical stratum), as the columns of
        ``baseline_cumulative_hazard_`` name the strata; in the rows' order;
        None without strata. The summary's concordance pairs rows within
        them.
    separated_ : bool
        Whether step 2's partial likelihood has no finite maximum (cox): the
        regressors separate the events (monotone likelihood), the fit warns
        with a ``SeparationWarning`` and the summary says that its
        coefficients, standard errors and p-values are not estimates.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Feature names seen in ``fit`` (only when ``X`` has string column
        names; with ``formula``, the design columns).
    model_spec_ : object
        With ``formula``, or with categorical covariates or strata: the
        encoding re-applied to new data.

    See Also
    --------
    sos_nmf : The clustering step on its own.
    compute_weights : The step-0 weights on their own.

    Notes
    -----
    Step 1 solves, for the standardized ``X`` and ``W = diag(w)``,

    .. math::

        \min_{U,V}\ \frac{1}{2(n-1)}\lVert XW - UV^\top\rVert_F^2
        + \lambda\sum_j\lVert v_j\rVert_1,\quad V\ge 0,\ \operatorname{var}(u_k)=1,
        \ V^\top V \text{ diagonal}.

    Step 2 fits ``y ~ 1 + M a`` with ``M = X L``, the loadings ``L`` being
    ``V`` (``latent="paper"``) or ``diag(sign w) V`` (``"signed"``); the
    feature-level coefficients are ``b = L a`` on the standardized scale.
    Symbols:
    ``lam_`` = :math:`\lambda`, ``n_clusters`` = :math:`K`, ``delta`` =
    :math:`\delta`, ``membership_`` = :math:`V`, ``cluster_coef_`` = :math:`a`.

    ``lam_max`` depends on the initial partition. So that the starts solve
    the same problem and their objectives can be compared, every start uses
    the same absolute penalty ``lam_ = lam_ratio * lam_max_`` with
    ``lam_max_`` the largest of the starts' ``lam_max`` (``lam_ratio = 1``
    still selects nothing). The gaussian weights are computed from ``y``
    standardized to unit variance.

    Standard errors in ``result_`` and ``summary()`` are conditional on the
    estimated clusters; they ignore the selection step.

    Covariates ``Z`` (``covariates=``) are adjusted for without penalty. In
    step 0, on the standardized ``Z``: gaussian weights are those of the
    residuals of ``y`` and of the standardized clustered features after
    least squares on ``[1, Z]`` (Frisch-Waugh-Lovell, exact); binomial
    weights carry ``Z`` as an unpenalized block of each Newton step; Cox
    weights use Coxnet's ``penalty_factor = 0``. ``delta`` stays the penalty
    of the clustered features: R's ``glmnet(cbind(Z, X), y, penalty.factor
    = c(rep(0, c), rep(1, p)))``, which rescales the penalty factors to sum
    to ``p + c``, gives the same weights at ``lambda = delta * p / (p + c)``.
    The ridge weights with covariates are available for the gaussian family
    only. Step 1 clusters the clustered features alone. Step 2 fits ``y ~
    1 + Z c + M a`` with ``Z`` on its raw scale (``result_`` and the summary
    list the covariates first). ``transform`` returns the latent variables
    ``M`` only: it is VC-PCR's reduction of the clustered features, and the
    covariates are the user's own columns, unchanged.

    References
    ----------
    .. [1] Marion, R., Lederer, J., Govaerts, B., von Sachs, R. "VC-PCR: A
       prediction method based on supervised variable selection and
       clustering." arXiv:2202.00975.

    Examples
    --------
    >>> from vcpcr import VCPCR
    >>> from vcpcr.datasets import load_liver
    >>> X, y = load_liver(return_X_y=True)
    >>> model = VCPCR(n_clusters=5, lam_ratio=0.6, n_init=3, random_state=0)
    >>> model = model.fit(X.iloc[:, :300], y)
    >>> model.n_clusters_ <= 5
    True
    >>> model.predict(X.iloc[:3, :300]).shape
    (3,)
    """

    def __init__(
        self,
        n_clusters: int = 5,
        *,
        family: str | Family = "gaussian",
        weights: str | ArrayLike = "enet",
        delta: float | None = None,
        lam_ratio: float = 0.5,
        shrinkage: float = 1.0,
        latent: str = "paper",
        init: str | ArrayLike = "random",
        n_init: int = 10,
        max_iter: int = 500,
        tol: float = 1e-4,
        random_state: Any = None,
        formula: str | None = None,
        missing: str = "raise",
        covariates: str | int | list[Any] | None = None,
        strata: str | int | list[Any] | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.family = family
        self.weights = weights
        self.delta = delta
        self.lam_ratio = lam_ratio
        self.shrinkage = shrinkage
        self.latent = latent
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.formula = formula
        self.missing = missing
        self.covariates = covariates
        self.strata = strata

    # ------------------------------------------------------------ validation
    def _check_params(
        self, family: Family, n_features: int, *, covariates: bool
    ) -> WeightScheme:
        """Validate the parameters (the shared ones first); return the scheme.

        ``covariates`` says whether the fit adjusts for covariates (which
        not every weight scheme can with every family).
        """
        scheme = super()._check_params(family, n_features, covariates=covariates)
        owner = type(self).__name__
        integral, real = numbers.Integral, numbers.Real
        check_scalar(self.n_clusters, "n_clusters", integral, owner=owner, min_val=1)
        check_scalar(
            self.lam_ratio, "lam_ratio", real, owner=owner, min_val=0.0, max_val=1.0
        )
        check_scalar(
            self.shrinkage, "shrinkage", real, owner=owner, min_val=0.0, max_val=1.0
        )
        if self.delta is not None:
            if np.ndim(self.delta) != 0:
                raise ValueError(
                    f"The 'delta' parameter of {owner} must be one number (the "
                    f"weights' penalty); VCPCRCV tunes several (deltas=[...]). "
                    f"Got {self.delta!r} instead."
                )
            scheme.check_deltas(self.delta, owner=owner)
        return scheme

    # ------------------------------------------------------------------- fit
    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> VCPCR:
        """Fit VC-PCR: weights, clustering (``n_init`` starts), outcome model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            Predictors; a DataFrame's column names become the feature names.
            With ``formula``, the DataFrame holding every column it uses.
        y : array-like of shape (n_samples,), optional
            Numeric response (gaussian), two class labels (binomial) or a
            survival outcome (cox: shape (n_samples, 2) ``(time, event)``).
            Omitted with ``formula``.

        Returns
        -------
        VCPCR
            The fitted estimator.

        Raises
        ------
        ValueError
            For NaN/infinite/constant columns, fewer than 3 samples, a constant
            ``y``, a ``y`` that is not binary with ``family="binomial"``, or
            an unknown ``family`` name.
        TypeError
            For a ``family`` that is neither a name nor a family object.

        Warns
        -----
        VCPCRWarning
            When ``n_clusters > n_features``: ``n_features`` clusters are used.
        """
        return self._fit_checked(self._fit_input(X, y))

    def _fit_checked(self, data: FitInput) -> VCPCR:
        """``fit`` after its input route: :meth:`_fit_validated`, then its warning.

        That no feature was selected. A resample
        (:func:`vcpcr.inference._resampling.fit_part`) fits its part of the
        checked data through here. Returns self.
        """
        self._fit_validated(data)
        if self.n_clusters_ == 0:
            self._warn_nothing_selected()
        return self

    def _fit_validated(self, data: FitInput) -> VCPCR:
        """Fit on data the input route has checked (:meth:`VCPCRBase._fit_input`).

        ``fit`` below its door: the attributes that describe the data
        (``n_features_in_``, ``feature_names_in_``, ``model_spec_``, from
        ``data``), the weights, the clustering and step 2 on ``data`` as it
        is, without validating it again. :class:`VCPCRCV` refits its chosen
        point through here on the data it validated; the warning that no
        feature was selected is ``fit``'s (:meth:`_fit_checked`; an empty
        model chosen by the CV is an answer). Returns self.
        """
        self._describe(data)
        problem = self._fit_data(data)
        solution = best_start(
            problem.Xs,
            problem.weights,
            problem.starts,
            float(self.lam_ratio),
            max_iter=self.max_iter,
            tol=self.tol,
            history=True,
            warn=True,
        )
        self._set_solution(
            problem.Xs,
            problem.mean,
            problem.scale,
            problem.prepared,
            problem.weights,
            solution,
            yname=problem.yname,
            layout=problem.layout,
            weights_kkt=problem.weights_kkt,
        )
        if self._family.estimator_type == "regressor":
            _warn_unsafe_scale(problem.prepared.outcome, type(self).__name__)
        return self

    def _warn_nothing_selected(self) -> None:
        """Warn that no feature was selected, saying what the model predicts from."""
        covariates = self.covariate_names_
        if covariates:
            predicts = f"predicts from the covariates {covariates} alone"
        elif self.strata_names_:
            predicts = (
                "has a constant risk score (its survival functions differ by "
                "stratum only)"
            )
        else:
            predicts = "predicts a constant"
        warnings.warn(
            f"No feature was selected (lam_ratio={self.lam_ratio}); the model "
            f"{predicts}. Lower lam_ratio to select features.",
            VCPCRWarning,
            stacklevel=user_stacklevel(),
        )

    def _fit_data(self, data: FitInput) -> _FitData:
        """Standardize the checked data, compute the weights, draw the starts.

        ``data`` is the shared input route's (:meth:`VCPCRBase._fit_input`),
        which set the attributes that describe them (``n_features_in_``,
        ``feature_names_in_``, ``model_spec_``).
        """
        d, owner = data.design, type(self).__name__
        n_clusters = cap_n_clusters(int(self.n_clusters), d.clustered.size, owner)
        Xs, mean, scale = standardize(d.X[:, d.clustered])
        weights, kkt = self._compute_weights(
            data.family, Xs, d.prepared.weights_target, d.Zs
        )
        starts = initial_partitions(
            self.init,
            n_clusters,
            self.n_init,
            Xs.shape[1],
            self.random_state,
            owner=owner,
        )
        return _FitData(
            data.yname, Xs, mean, scale, d.prepared, weights, kkt, starts, data.layout
        )

    def path(
        self,
        X: ArrayLike,
        y: ArrayLike | None = None,
        *,
        lam_ratios: ArrayLike | None = None,
    ) -> pd.DataFrame:
        """Compute the selection path along ``lam_ratio`` at the other parameters.

        The weights are computed once and every ratio is solved from the
        same ``n_init`` starts in one batch (each ratio's result is that of
        ``fit`` with that ``lam_ratio``); step 2 is not fitted. The estimator
        itself is neither fitted nor changed (scikit-learn's ``path``
        functions, e.g. ``ElasticNet.path``, likewise return arrays).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            Predictors, as in :meth:`fit`.
        y : array-like of shape (n_samples,), optional
            The response, as in :meth:`fit` (omitted with ``formula``).
        lam_ratios : array-like of float, optional
            Ratios in ``[0, 1]`` (default ``10**linspace(-3, 0, 20)``).

        Returns
        -------
        pandas.DataFrame
            One row per ratio: ``lam_ratio``, ``lam`` (the absolute penalty),
            ``size`` (selected features) and ``n_clusters`` (non-empty
            clusters).

        See Also
        --------
        vcpcr.plotting.plot_path : Draws this path.

        Examples
        --------
        An active block of four features and an inactive one: the active
        block stays selected until the penalty removes every feature.

        >>> from vcpcr import VCPCR
        >>> from vcpcr.simulate import make_block_data
        >>> data = make_block_data(30, [4, 4], [1.0, 0.0], random_state=0)
        >>> model = VCPCR(n_clusters=2, random_state=0)
        >>> path = model.path(data.X, data.y, lam_ratios=[0.1, 0.5, 1.0])
        >>> path["size"].tolist()
        [4, 4, 0]
        """
        default = 10 ** np.linspace(-3, 0, 20)
        ratios = check_lam_ratios(
            default if lam_ratios is None else lam_ratios, owner="VCPCR.path"
        )
        est = clone(self)
        data = est._fit_data(est._fit_input(X, y))
        zeros = np.zeros(ratios.size, dtype=np.intp)
        solved = best_starts(
            data.Xs,
            data.weights[None, :],
            [data.starts],
            zeros,
            zeros,
            ratios,
            max_iter=self.max_iter,
            tol=self.tol,
        )
        labels = solved.labels
        return pd.DataFrame(
            {
                "lam_ratio": ratios,
                "lam": solved.lam,
                "size": np.sum(labels >= 0, axis=1),
                "n_clusters": labels.max(axis=1, initial=-1) + 1,
            }
        )

    def _set_solution(
        self,
        Xs: NDArray[np.float64],
        mean: NDArray[np.float64],
        scale: NDArray[np.float64],
        prepared: Prepared,
        weights: NDArray[np.float64],
        solution: KeptStart,
        *,
        yname: str = "y",
        layout: ColumnLayout,
        weights_kkt: float | None = None,
    ) -> VCPCR:
        """Set the complete fitted state from a solved problem; return self.

        The one place that writes a fitted VCPCR's state: ``fit`` calls it,
        and so do VCPCRCV's folds on a clone of an unfitted VCPCR with the
        point's parameters (:func:`vcpcr._tuning.fold_model`), so that a
        scorer may call any method of a fold model. The inputs are the
        standardized training design ``Xs`` with its ``mean`` and ``scale``,
        the prepared response (named ``yname`` in the summary), the step-0
        ``weights`` (with their relative KKT violation ``weights_kkt``) and
        the kept start ``solution``
        (:func:`vcpcr._clustering.best_start`, or a grid point's
        :meth:`vcpcr._clustering.BestStarts.kept`). It orders the clusters,
        fits step 2 (``result_``) and maps its coefficients back to raw
        units. ``objective_`` is the objective history when the solver
        recorded it (``fit``), else its final value (the folds).
        ``n_features_in_`` is set here; ``feature_names_in_``, which names
        the membership rows, only by ``fit``'s data validation (fold models
        see arrays). ``layout`` says which input columns are covariates
        (their raw training values enter step 2 first) and which were
        clustered (``Xs``).
        """
        res = solution.result
        self.n_features_in_, self.n_samples_fit_ = layout.n_features, Xs.shape[0]
        self.covariate_columns_ = layout.covariates
        self.clustered_columns_ = layout.clustered
        self.strata_columns_ = layout.strata
        self.mean_, self.scale_, self.weights_ = mean, scale, weights
        self.weights_kkt_ = weights_kkt
        self.delta_ = scheme_delta(self.weights, self.delta)
        if prepared.classes is not None:
            self.classes_ = prepared.classes
        self.best_init_ = solution.start
        self.lam_max_, self.lam_ = res.lam_max, res.lam
        self.n_iter_, self.converged_, self.objective_ = (
            res.n_iter,
            res.converged,
            res.objective,
        )
        every = feature_names(self, layout.n_features)
        names = [every[j] for j in layout.clustered]
        self.labels_, self.membership_, self.clusters_ = order_clusters(res, names)
        self.n_clusters_ = self.membership_.shape[1]
        V = loadings(self.membership_.to_numpy(), weights, self.latent)
        self.loadings_ = pd.DataFrame(
            V, index=self.membership_.index, columns=self.membership_.columns
        )
        M = Xs @ V
        self.yname_ = yname
        family = self._family
        design = np.column_stack([layout.Z, M])
        self.result_ = family.fit(
            design,
            prepared.outcome,
            [*self.covariate_names_, *self.membership_.columns],
            yname,
            None
            if layout.S is None
            else pd.DataFrame(layout.S, columns=self.strata_names_),
        )
        a0, a = family.split_params(self.result_)
        c = layout.covariates.size
        a = np.concatenate([a[:c], self.shrinkage * a[c:]])
        coef, covariate_coef, self.intercept_ = raw_coefficients(
            V, a0, a, mean, scale, layout.Z.mean(axis=0), centred=family.centred
        )
        self.covariate_coef_ = pd.Series(covariate_coef, index=self.covariate_names_)
        self.cluster_coef_ = pd.Series(a[c:], index=self.membership_.columns)
        sd = M.std(axis=0, ddof=1) if M.shape[0] > 1 else np.zeros(M.shape[1])
        self.module_sd_ = pd.Series(sd, index=self.membership_.columns)
        index = M @ a[c:]  # the features' part of the linear predictor
        self.prognostic_index_sd_ = (  # without overflow in y's units (1e300)
            float(standardize(index)[2]) if np.ptp(index) > 0 else 0.0
        )
        self.coef_ = np.zeros(layout.n_features)
        self.coef_[layout.clustered] = coef
        self.coef_[layout.covariates] = covariate_coef
        train_eta = (layout.Z - layout.Z.mean(axis=0)) @ a[:c] + index
        extra = family.fitted_attributes(
            prepared.outcome,
            self.result_,
            train_eta,
            None if layout.S is None else _stratum_keys(layout.S),
            design,
        )
        for name, value in extra.items():
            setattr(self, name, value)
        self._params_at_fit = self.get_params(deep=False)
        return self

    @property
    def _fitted_family(self) -> Family:
        """The family the model was fitted with (``set_params`` cannot change it)."""
        check_is_fitted(self)
        return family_instance(self._params_at_fit["family"], owner=type(self).__name__)

    @property
    def strata_names_(self) -> list[str]:
        """Names of the strata columns (cox; empty without strata)."""
        names = feature_names(self, int(self.n_features_in_))
        return [names[j] for j in self.strata_columns_]

    @property
    def covariate_names_(self) -> list[str]:
        """Names of the covariates (``x<j>`` for arrays without names)."""
        names = feature_names(self, int(self.n_features_in_))
        return [names[j] for j in self.covariate_columns_]

    def _compute_weights(
        self,
        family: Family,
        Xs: NDArray[np.float64],
        target: NDArray[np.float64],
        covariates: NDArray[np.float64] | None,
    ) -> tuple[NDArray[np.float64], float | None]:
        """Step 0 on the standardized data (covariates unpenalized) and its KKT."""
        path = weights_for_grid(
            Xs,
            target,
            self.weights,
            [self.delta],
            family,
            covariates=covariates,
            stacklevel=user_stacklevel(),
        )
        return path.coef[0], None if path.kkt is None else float(path.kkt[0])

    # --------------------------------------------------------------- predict
    def _check_input(
        self, X: ArrayLike, *, every_column: bool = False
    ) -> NDArray[np.float64]:
        """Validate new data (encoded by the stored formula, if any).

        The one check of new data (:func:`vcpcr._input.validate_new_x`:
        columns matched by name, fit's messages). Only the columns a prediction
        reads (:attr:`_used_columns`) must be finite, unless ``every_column``:
        the features the model did not select may hold NaN, and stay NaN.
        """
        check_is_fitted(self)
        if self.formula is not None:
            X = transform_new(self.model_spec_, X)
        elif hasattr(self, "model_spec_"):  # categorical covariates or strata
            X = encode_new(self.model_spec_, X)
        Xv = validate_new_x(self, X)
        used = np.arange(Xv.shape[1]) if every_column else self._used_columns
        names = feature_names(self, Xv.shape[1])
        why = (
            ""
            if every_column
            else " (the model uses these columns; the features it did not "
            "select may be missing)"
        )
        fix = f"impute them before predicting{why}"
        check_finite(Xv[:, used], "X", [names[j] for j in used], fix=fix)
        return Xv

    @property
    def _used_columns(self) -> NDArray[np.intp]:
        """Input columns a prediction reads: covariates, strata, selected features."""
        selected = self.clustered_columns_[self.labels_ >= 0]
        kept = np.union1d(self.covariate_columns_, self.strata_columns_)
        return np.union1d(kept, selected).astype(np.intp)

    def _linear_predictor(self, X: ArrayLike) -> NDArray[np.float64]:
        Xa = self._check_input(X)
        used = self._used_columns
        return Xa[:, used] @ self.coef_[used] + self.intercept_

    def _latent(self, Xa: NDArray[np.float64]) -> NDArray[np.float64]:
        """Latent variables ``M`` of checked data, from the selected features."""
        selected = self.labels_ >= 0
        Zs = (Xa[:, self.clustered_columns_[selected]] - self.mean_[selected]) / (
            self.scale_[selected]
        )
        return Zs @ self.loadings_.to_numpy()[selected]

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Predict the response, the class label, or the risk score.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data with the training columns.

        Returns
        -------
        ndarray of shape (n_samples,)
            gaussian: the response; binomial: the class label; cox: the
            partial hazard ``exp(X @ coef_ + intercept_)`` (relative risk, as
            lifelines' ``predict_partial_hazard``; scikit-survival's
            ``predict`` returns the log of it, here
            :meth:`predict_log_partial_hazard`).
        """
        eta = self._linear_predictor(X)
        return self._fitted_family.predict(eta, getattr(self, "classes_", None))

    def outcome_design(self, X: ArrayLike) -> pd.DataFrame:
        """Return the regressors of ``result_`` on new data: covariates, then ``M``.

        The covariates on their raw scale (none without ``covariates``) and
        the latent variables of :meth:`transform`, named as in ``result_``
        (without the intercept column of statsmodels' fits), then a Cox
        model's strata columns (lifelines reads them from the frame).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data.

        Returns
        -------
        pandas.DataFrame of shape (n_samples, n_covariates + n_clusters_)
            The step-2 design of ``X``.
        """
        Xa = self._check_input(X)
        M = self._latent(Xa)
        return pd.DataFrame(
            np.column_stack(
                [Xa[:, self.covariate_columns_], M, Xa[:, self.strata_columns_]]
            ),
            columns=[
                *self.covariate_names_,
                *self.membership_.columns,
                *self.strata_names_,
            ],
        )

    def _survival(
        self, X: ArrayLike, kind: str, return_array: bool, times: Any, frame: bool
    ) -> Any:
        """Survival or cumulative-hazard predictions in the requested layout."""
        check_is_fitted(self)
        times = check_times(times)
        grid = self.unique_times_ if times is None else times
        if np.any(np.diff(grid) <= 0):
            raise ValueError("times must be strictly increasing.")
        H0 = self._baselines(X, grid)
        values = np.exp(self._linear_predictor(X))[:, None] * H0
        if kind == "survival_function":
            values = np.exp(-values)
        if frame:  # lifelines' layout: one row per time, one column per sample
            return pd.DataFrame(values.T, index=pd.Index(grid))
        return values if return_array else step_functions(grid, values)

    def _baselines(self, X: ArrayLike, grid: Any) -> NDArray[np.float64]:
        """Each row's baseline cumulative hazard at ``grid`` (its stratum's)."""
        base = self.baseline_cumulative_hazard_
        names = self.strata_names_
        if not names:
            return evaluate_baseline(base, grid)[None, :]
        S = self.outcome_design(X)[names].to_numpy()
        return stratum_baselines(base, _stratum_keys(S), names, grid)

    @available_if(_is_survival)
    def predict_survival_function(
        self,
        X: ArrayLike,
        return_array: bool = False,
        *,
        times: ArrayLike | None = None,
        return_frame: bool = False,
    ) -> Any:
        """Survival functions S(t | x) (cox family only), as scikit-survival.

        ``S(t | x) = exp(-H0(t) exp(eta(x)))`` with Breslow's baseline
        cumulative hazard ``H0``, a step function that jumps at event times.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.
        return_array : bool, default=False
            ``False``: one step function per sample
            (``sksurv.functions.StepFunction`` when scikit-survival is
            installed). ``True``: an array of shape ``(n_samples, n_times)``
            at ``unique_times_`` (or ``times``), e.g. for
            ``sksurv.metrics.integrated_brier_score``.
        times : array-like of float, optional
            Increasing times at which to evaluate (default: ``unique_times_``,
            the distinct training times).
        return_frame : bool, default=False
            Return lifelines' layout instead: a DataFrame with one row per
            time and one column per sample (lifelines'
            ``predict_survival_function`` on the latent variables).

        Returns
        -------
        ndarray or pandas.DataFrame
            Step functions of shape (n_samples,), an array of shape
            (n_samples, n_times), or lifelines' DataFrame.
        """
        return self._survival(X, "survival_function", return_array, times, return_frame)

    @available_if(_is_survival)
    def predict_cumulative_hazard(
        self,
        X: ArrayLike,
        return_array: bool = False,
        *,
        times: ArrayLike | None = None,
        return_frame: bool = False,
    ) -> Any:
        """Cumulative hazards H(t | x) (cox family only), as scikit-survival.

        ``H(t | x) = H0(t) exp(eta(x))`` with Breslow's ``H0``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.
        return_array : bool, default=False
            Step functions (``False``) or an array of shape
            ``(n_samples, n_times)`` (``True``); see
            :meth:`predict_survival_function`.
        times : array-like of float, optional
            Increasing times at which to evaluate (default: ``unique_times_``).
        return_frame : bool, default=False
            Return lifelines' DataFrame (rows: times, columns: samples).

        Returns
        -------
        ndarray or pandas.DataFrame
            Step functions, an array of shape (n_samples, n_times), or
            lifelines' DataFrame.
        """
        return self._survival(X, "cumulative_hazard", return_array, times, return_frame)

    #: scikit-survival's name of :meth:`predict_cumulative_hazard`.
    predict_cumulative_hazard_function = predict_cumulative_hazard

    @available_if(_is_survival)
    def predict_log_partial_hazard(self, X: ArrayLike) -> NDArray[np.float64]:
        """Linear predictor ``eta = X @ coef_ + intercept_`` (cox family only).

        lifelines' name; ``predict`` returns ``exp(eta)``. ``eta`` is centred
        at the training means, so it differs from scikit-survival's
        ``predict`` (``X @ coef``) by a constant, which leaves rankings and
        concordance unchanged.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.

        Returns
        -------
        ndarray of shape (n_samples,)
            Log relative risk.
        """
        return self._linear_predictor(X)

    @available_if(_is_survival)
    def predict_median(self, X: ArrayLike) -> NDArray[np.float64]:
        """Median survival times (cox family only; lifelines' ``predict_median``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.

        Returns
        -------
        ndarray of shape (n_samples,)
            The first time at which S(t | x) <= 0.5; ``inf`` if S stays above.
        """
        survival = self.predict_survival_function(X, return_array=True)
        below = survival <= 0.5
        first = np.argmax(below, axis=1)
        return np.where(below.any(axis=1), self.unique_times_[first], np.inf)

    @available_if(_is_survival)
    def print_summary(self, **kwargs: Any) -> None:
        """Print lifelines' summary of the Cox model (cox family only).

        The covariates are the cluster latent variables, named as in
        :meth:`summary`.

        Parameters
        ----------
        **kwargs
            Passed to ``lifelines.CoxPHFitter.print_summary`` (e.g.
            ``decimals``, ``style``).
        """
        check_is_fitted(self)
        self.result_.print_summary(**kwargs)

    @available_if(_is_survival)
    def plot(self, **kwargs: Any) -> Any:
        """Coefficients and confidence intervals (cox family; lifelines' ``plot``).

        Parameters
        ----------
        **kwargs
            Passed to ``lifelines.CoxPHFitter.plot`` (e.g. ``hazard_ratios``,
            ``ax``).

        Returns
        -------
        matplotlib.axes.Axes
            The axes.
        """
        check_is_fitted(self)
        return self.result_.plot(**kwargs)

    @available_if(_is_not_survival)
    def get_prediction(self, X: ArrayLike) -> Any:
        """Return statsmodels' prediction results on new data (gaussian, binomial).

        ``result_.get_prediction`` on the latent variables of ``X`` (with the
        intercept), so that ``summary_frame(alpha=...)`` gives the predicted
        mean with its confidence interval and, for gaussian models, the
        prediction interval (``obs_ci_lower``, ``obs_ci_upper``); binomial
        models give the probability of ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.

        Returns
        -------
        statsmodels prediction results
            With ``predicted``, ``se``, ``conf_int(alpha)`` and
            ``summary_frame(alpha)``.

        Notes
        -----
        The intervals are conditional on the estimated clusters, as the
        standard errors of :meth:`summary`.
        """
        self._check_unchanged("get_prediction")
        if self.shrinkage != 1:
            raise ValueError(
                f"get_prediction gives statsmodels' intervals of the unshrunk "
                f"step-2 fit, but this model's predictions are shrunk "
                f"(shrinkage={self.shrinkage:g}). Use predict for the shrunk "
                f"predictions, or refit with shrinkage=1 for the intervals."
            )
        exog = self.outcome_design(X)
        exog.insert(0, "const", 1.0)
        return self.result_.get_prediction(exog)

    @available_if(_is_classifier)
    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log-odds of ``classes_[1]`` (binomial family only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.

        Returns
        -------
        ndarray of shape (n_samples,)
            Linear predictor ``X @ coef_ + intercept_``.
        """
        return self._linear_predictor(X)

    @available_if(_is_classifier)
    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Class probabilities (binomial family only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Probabilities of ``classes_[0]`` and ``classes_[1]``.
        """
        p1 = LOGISTIC.mean(self._linear_predictor(X))
        return np.column_stack([1 - p1, p1])

    def standardized_design(self, X: ArrayLike) -> NDArray[np.float64]:
        """Return the data as step 1 sees it: ``(X - mean_) / scale_``.

        With ``formula``, ``X`` is first encoded as in ``fit``
        (``model_spec_``), so the columns are those of ``membership_.index``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            New data (with ``formula``: a DataFrame with the columns it uses).

        Returns
        -------
        ndarray of shape (n_samples, n_clustered)
            The clustered features (all columns but the covariates)
            standardized with the training means and standard deviations.
        """
        Xa = self._check_input(X, every_column=True)
        return (Xa[:, self.clustered_columns_] - self.mean_) / self.scale_

    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """Latent variables ``M = X V`` (standardized ``X``), one per cluster.

        These are the regressors of ``result_`` beside the covariates, which
        ``transform`` leaves out (see Notes of :class:`VCPCR`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New data.

        Returns
        -------
        ndarray of shape (n_samples, n_clusters_)
            The latent variables.
        """
        return self._latent(self._check_input(X))

    def get_feature_names_out(self, input_features: Any = None) -> NDArray[np.object_]:
        """Names of the latent variables produced by :meth:`transform`.

        Parameters
        ----------
        input_features : ignored
            Present for API consistency.

        Returns
        -------
        ndarray of str
            ``cluster_1``, ``cluster_2``, ...
        """
        check_is_fitted(self)
        return np.asarray(self.membership_.columns, dtype=object)

    def signature(self) -> pd.DataFrame:
        """Return the signature as a table: one row per selected feature, ready for CSV.

        Returns
        -------
        pandas.DataFrame
            Columns ``gene`` (the feature), ``module`` (its cluster),
            ``membership`` (the feature's signed membership degree, its
            weight in the cluster score ``M = X L`` on the standardized
            scale: its entry of ``loadings_``, as the summary's cluster
            composition shows it; with ``latent="signed"`` the entry of
            ``membership_`` times the sign of the feature's step-0 weight, so
            a feature that enters its module negatively is negative; with
            ``latent="paper"`` the entry of ``membership_``, never negative),
            ``module_sd`` (the cluster score's standard
            deviation on the training data),
            ``module_effect_per_sd`` (hazard ratio for cox, odds ratio for
            binomial, coefficient for gaussian, per SD of the cluster score:
            the summary's), and ``coef`` (the feature's coefficient on its raw
            scale, ``coef_``); clusters in order, strongest members first.
            Covariates are not listed: see ``covariate_coef_``.

        Examples
        --------
        >>> from vcpcr import VCPCR
        >>> from vcpcr.datasets import load_liver
        >>> X, y = load_liver(return_X_y=True)
        >>> model = VCPCR(3, lam_ratio=0.6, n_init=2, random_state=0)
        >>> table = model.fit(X.iloc[:, :100], y).signature()
        >>> list(table.columns)[:3]
        ['gene', 'module', 'membership']
        """
        check_is_fitted(self)
        self._check_unchanged("signature")
        coef = pd.Series(
            self.coef_[self.clustered_columns_], index=self.membership_.index
        )
        effect = self._family.per_sd(
            (self.cluster_coef_ * self.module_sd_).to_numpy(dtype=np.float64)
        )[2]
        rows = [
            (
                feature,
                cluster,
                float(self.loadings_.at[feature, cluster]),
                float(self.module_sd_[cluster]),
                float(effect[k]),
                float(coef[feature]),
            )
            for k, cluster in enumerate(self.membership_.columns)
            for feature in self.clusters_[cluster]
        ]
        columns = ["gene", "module", "membership", "module_sd", "module_effect_per_sd"]
        return pd.DataFrame(rows, columns=[*columns, "coef"])

    def export_scoring_rule(self, horizons: ArrayLike | None = None) -> ScoringRule:
        """Return the fitted model as a portable scoring rule (frames and JSON).

        Everything needed to score a new patient without vcpcr: per selected
        gene its centring and scale, module and signed weight; per module
        the coefficient (with the model's ``shrinkage``); the covariates'
        coefficients and how each is computed from a data column (the
        categories' coding); the intercept; for a Cox model the baseline
        cumulative hazard and survival per stratum. The numbers are the
        fitted model's: ``eta`` computed from them is
        ``predict_log_partial_hazard`` (cox), ``decision_function``
        (binomial) or ``predict`` (gaussian), to rounding.

        Parameters
        ----------
        horizons : array-like of float, optional
            Cox only: times at which to give the baseline (e.g. ``[365,
            1825]`` for 1 and 5 years in days). None gives the whole step
            function, at every distinct training time (``unique_times_``).

        Returns
        -------
        ScoringRule
            With ``genes``, ``modules``, ``covariates``, ``levels`` and
            ``baseline`` frames, ``to_json()`` and ``ScoringRule.from_json``.

        Raises
        ------
        ValueError
            If ``horizons`` is given for a gaussian or binomial model, or
            holds negative or non-finite times; if a column the model uses
            comes from a formula term that is not a data column nor its
            categories (``np.log(age)``: compute it as a column before
            fitting).

        See Also
        --------
        vcpcr.validation.nomogram : The rule as a points chart.

        Examples
        --------
        >>> from vcpcr import VCPCR
        >>> from vcpcr.datasets import load_liver
        >>> X, y = load_liver(return_X_y=True)
        >>> model = VCPCR(3, lam_ratio=0.6, n_init=2, random_state=0)
        >>> rule = model.fit(X.iloc[:, :100], y).export_scoring_rule()
        >>> list(rule.genes.columns)
        ['source', 'module', 'loading', 'center', 'scale', 'coef']
        >>> text = rule.to_json()  # for use without vcpcr
        """
        check_is_fitted(self)
        self._check_unchanged("export_scoring_rule")
        family = self._fitted_family
        times = check_times(horizons, "horizons")
        if times is not None and not family.survival:
            raise ValueError(
                f"horizons are the times of a Cox model's baseline survival; a "
                f"family={family.name!r} model has none. Leave horizons=None."
            )
        selected = self.labels_ >= 0
        genes = list(self.membership_.index[selected])
        encodings = column_encodings(
            getattr(self, "model_spec_", None),
            [*genes, *self.covariate_names_, *self.strata_names_],
        )
        gene_table = self._gene_table(selected, encodings)
        coef = self.coef_[self.clustered_columns_[selected]]
        # eta = intercept_ + X @ coef_: the genes' part is sum_k a_k m_k plus
        # the constant -sum(mean * coef), which goes to the rule's intercept
        intercept = self.intercept_ + float(self.mean_[selected] @ coef)
        covariates = pd.DataFrame(
            {
                "source": [encodings[c].source for c in self.covariate_names_],
                "coef": self.covariate_coef_.to_numpy(dtype=np.float64),
            },
            index=pd.Index(self.covariate_names_, name="covariate"),
        )
        modules = pd.DataFrame(
            {
                "coef": self.cluster_coef_.to_numpy(dtype=np.float64),
                "sd": self.module_sd_.to_numpy(dtype=np.float64),
                "n_genes": [len(self.clusters_[k]) for k in self.membership_.columns],
            },
            index=pd.Index(self.membership_.columns, name="module"),
        )
        strata: list[str] = []
        baseline = None
        if family.survival:
            strata, baseline = self._baseline_table(times, encodings)
        return ScoringRule(
            family=family.name,
            outcome=self.yname_,
            intercept=intercept,
            shrinkage=float(self.shrinkage),
            classes=(
                [v.item() if isinstance(v, np.generic) else v for v in self.classes_]
                if hasattr(self, "classes_")
                else None
            ),
            genes=gene_table,
            modules=modules,
            covariates=covariates,
            levels=level_rows(encodings),
            strata=strata,
            **({} if baseline is None else {"baseline": baseline}),
            horizons=None if times is None else times.tolist(),
            n_samples=int(self.n_samples_fit_),
            prognostic_index_sd=float(self.prognostic_index_sd_),
        )

    def _gene_table(
        self, selected: NDArray[np.bool_], encodings: dict[str, ColumnEncoding]
    ) -> pd.DataFrame:
        """Return the rule's genes: source, module, loading, centring, scale, coef."""
        genes = self.membership_.index[selected]
        columns = self.membership_.columns
        labels = self.labels_[selected]
        loadings = self.loadings_.to_numpy()[selected, labels]
        return pd.DataFrame(
            {
                "source": [encodings[g].source for g in genes],
                "module": [str(columns[k]) for k in labels],
                "loading": loadings,
                "center": self.mean_[selected],
                "scale": self.scale_[selected],
                "coef": self.coef_[self.clustered_columns_[selected]],
            },
            index=pd.Index(genes, name="gene"),
        )

    def _baseline_table(
        self, times: NDArray[np.float64] | None, encodings: dict[str, ColumnEncoding]
    ) -> tuple[list[str], pd.DataFrame]:
        """Return the strata's data columns and the baseline per stratum at ``times``.

        Each stratum of ``baseline_cumulative_hazard_`` (a value of the
        strata design columns, a tuple for several) is written as the data
        columns' values: a number as it is, a category as its level.
        """
        grid = self.unique_times_ if times is None else times
        base = self.baseline_cumulative_hazard_
        names = self.strata_names_
        sources = list(dict.fromkeys(encodings[c].source for c in names))
        frames = []
        for key in base.columns:
            keys = key if len(names) > 1 else [key]
            values = dict(zip(names, keys, strict=True)) if names else {}
            H0 = evaluate_baseline(base[[key]], grid)
            frame = pd.DataFrame(
                {"time": grid, "cumulative_hazard": H0, "survival": np.exp(-H0)}
            )
            for source in reversed(sources):
                frame.insert(
                    0, source, [_raw_value(source, values, encodings)] * grid.size
                )
            frames.append(frame)
        return sources, pd.concat(frames, ignore_index=True)

    def score(
        self, X: ArrayLike, y: ArrayLike | None = None, sample_weight: Any = None
    ) -> float:
        """R^2 (gaussian), accuracy (binomial) or concordance (cox) on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            Test data.
        y : array-like of shape (n_samples,), optional
            True response or labels; with ``formula``, omit it to evaluate
            the formula's outcome on ``X``.
        sample_weight : array-like of shape (n_samples,), optional
            Sample weights.

        Returns
        -------
        float
            The score (higher is better).
        """
        prediction, y = self._score_target(X, y)
        if sample_weight is not None:
            check_y_length(prediction.shape[0], sample_weight, "sample_weight")
        return self._fitted_family.score(y, prediction, sample_weight)

    def _score_target(
        self, X: ArrayLike, y: Any, *, min_samples: int = 2
    ) -> tuple[NDArray[Any], Any]:
        """Return the prediction of ``X`` and the checked ``y`` of a score.

        The one check of a score's outcome (``VCPCR.score`` and
        ``VCPCRCV.score``): given (or the formula's), a sequence
        (:func:`vcpcr._input.check_outcome_like`) with one entry per row of
        ``X``, paired by label, of the labels seen in fit (a classifier) or
        at least ``min_samples`` finite numbers (a regressor: R^2 needs two,
        ``VCPCRCV``'s mean squared error one).
        """
        check_is_fitted(self)
        if y is None:
            if self.formula is None:
                raise ValueError("score needs y (or a model fitted with formula=).")
            y = formula_outcome(self.formula, X)
        prediction = self.predict(X)
        family = self._fitted_family
        if not family.survival:
            check_outcome_like(y)
        check_y_length(prediction.shape[0], y)
        check_same_rows(X, y)
        if not family.survival:
            y = column_or_1d(y)
        if family.estimator_type == "classifier":
            unseen = np.setdiff1d(np.unique(y), self.classes_)
            if unseen.size:
                raise ValueError(
                    f"y holds the label(s) {unseen[:5].tolist()} that the model "
                    f"was not fitted on (classes_ {self.classes_.tolist()}); score "
                    f"it on the same labels."
                )
        elif not family.survival:
            y = check_array(y, "y", ensure_2d=False, min_samples=min_samples)
        return prediction, y


def _stratum_keys(S: NDArray[Any]) -> list[Any]:
    """Each row's stratum: its value of one strata column, a tuple of several.

    Python scalars (``tolist``), so that a tuple reads as lifelines' stratum
    labels do (numpy 2 prints a tuple of its scalars as ``(np.float64(0.0),
    ...)``).
    """
    if S.shape[1] == 1:
        return list(S[:, 0].tolist())
    return [tuple(row) for row in S.tolist()]


def _raw_value(
    source: str, values: dict[str, float], encodings: dict[str, ColumnEncoding]
) -> Any:
    """Return a stratum's value of the data column ``source`` (from its design).

    ``values`` maps each strata design column to the stratum's value; a
    number is its own value, a category the level whose coding matches.
    """
    columns = [c for c in values if encodings[c].source == source]
    first = encodings[columns[0]]
    if first.levels is None:
        return values[columns[0]]
    for k, level in enumerate(first.levels):
        if all(encodings[c].values[k] == values[c] for c in columns):  # type: ignore[index]
            return level
    raise ValueError(  # unreachable for a stratum the data produced
        f"No level of {source!r} has the coding {[values[c] for c in columns]}."
    )
