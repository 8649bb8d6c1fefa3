r"""What a fitted signature adds to the clinical model on an external cohort.

:func:`validate_increment_external` takes a model fitted on a training
cohort, fits the clinical-only Cox model (:class:`ClinicalCox`) on the same
training rows and clinical columns, and scores both on an external cohort
without refitting either: the metrics of :func:`validate_increment` (the
same code, :func:`vcpcr._increment._test_scores`), and the paired increments
with percentile intervals from a bootstrap of the external rows
(:class:`ExternalIncrementResult`).

What is estimated: the performance of *these two fitted models* in the
population the external cohort samples; the bootstrap treats the models as
fixed (the training cohort's variability is not in the intervals).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.utils.validation import check_is_fitted

from vcpcr._checks import (
    check_fraction,
    check_random_state,
    check_scalar,
    check_survival,
)
from vcpcr._families import family_name, known_family
from vcpcr._formula import formula_outcome
from vcpcr._increment import (
    _LOWER_BETTER,
    CLINICAL,
    ClinicalCox,
    _check_frame,
    _clinical,
    _increment_summary,
    _linear_predictor,
    _log_partial_likelihood,
    _metric_names,
    _metrics_table,
    _n_genes,
    _outcome,
    _Plan,
    _require_survival,
    _survival_rows,
    _test_scores,
)
from vcpcr._parallel import progress_shown, run_parallel
from vcpcr._result import Result
from vcpcr._summary import VCPCRSummary
from vcpcr.external import ExternalCohort, align_cohort

__all__ = ["ExternalIncrementResult", "validate_increment_external"]

_OWNER = "validate_increment_external"
#: The name of the likelihood metric on an external cohort (no CV).
LOG_PL = "log PL"


@dataclass(frozen=True, eq=False, repr=False)
class ExternalIncrementResult(Result):
    """Increments of a fitted model over the clinical model on an external cohort.

    Built by :func:`validate_increment_external`; plain attributes, nothing
    recomputed on access. The tables read as
    :class:`~vcpcr.validation.IncrementResult`'s.

    Attributes
    ----------
    metrics : pandas.DataFrame
        Per model and metric: ``estimate`` (on the whole external cohort)
        and ``se`` (its bootstrap standard deviation).
    increments : pandas.DataFrame
        Per model and metric: ``increment`` (model minus clinical, on the
        whole external cohort), ``se`` (bootstrap standard deviation), the
        percentile interval (``ci_low``, ``ci_high``), the one-sided p-value
        ``p`` (the share of resamples with increment ``<= 0``; ``>= 0`` for
        IBS), ``n_resamples`` (resamples where the metric was defined) and
        ``status`` (``"no gene"`` when the model uses no gene: then it is
        the clinical model and no interval or p-value is given).
    resample_increments : pandas.DataFrame
        Per resample and model, the increment of every metric.
    horizons : ndarray
        The time-dependent AUC's horizons.
    brier_range : tuple of float
        The range of the IBS time grid.
    tau_quantile : float
        Uno's C's tau, as a quantile of the training cohort's event times.
    alpha : float
        One minus the intervals' level.
    n_bootstrap : int
        Bootstrap resamples of the external rows.
    n_samples, n_events : int
        The external cohort.
    n_train, n_train_events : int
        The training cohort.
    covariates, strata : list
        The clinical columns.
    cohort : ExternalCohort or None
        The gene matching report of :func:`vcpcr.external.align_cohort` (None
        for a model that is not a VC-PCR).
    notes : list of str
        What the summary's notes say.
    """

    metrics: pd.DataFrame
    increments: pd.DataFrame
    resample_increments: pd.DataFrame
    horizons: NDArray[np.float64]
    brier_range: tuple[float, float]
    tau_quantile: float
    alpha: float
    n_bootstrap: int
    n_samples: int
    n_events: int
    n_train: int
    n_train_events: int
    covariates: list[Any]
    strata: list[Any]
    cohort: ExternalCohort | None
    notes: list[str] = field(default_factory=list, repr=False)

    def summary(self) -> VCPCRSummary:
        """Summary: each model's metrics and its increments over the clinic.

        Returns
        -------
        VCPCRSummary
            A statsmodels ``Summary``: print it, or call ``as_text()``,
            ``as_html()`` or ``as_latex()``.
        """
        right = [
            ("Training cohort:", f"{self.n_train} ({self.n_train_events} events)"),
            ("Bootstrap:", f"{self.n_bootstrap} resamples"),
            ("Interval:", f"{1 - self.alpha:.0%}, percentile"),
            ("Test:", "one-sided, H0: no gain"),
        ]
        return _increment_summary(
            "Increment over the clinical model (external cohort)",
            self,
            right,
            _metrics_table(self.metrics["estimate"], "On the external cohort"),
        )

    def plot(self, axes: Any = None) -> Any:
        """Plot each resample's increment per metric, with the estimate and interval.

        See :func:`vcpcr.plotting.plot_increments`.

        Parameters
        ----------
        axes : array of matplotlib.axes.Axes, optional
            One axes per metric (a new figure otherwise).

        Returns
        -------
        ndarray of matplotlib.axes.Axes
            The axes.
        """
        from vcpcr.plotting import plot_increments

        return plot_increments(self, axes=axes)


# ------------------------------------------------------------------ predictions
@dataclass(frozen=True)
class _Predictions:
    """A fitted model's predictions on the external rows, made once."""

    eta: NDArray[np.float64]
    surv: NDArray[np.float64] | None
    grid: NDArray[np.float64]

    def scores(
        self, rows: NDArray[np.intp], plan: _Plan, y_train: Any, y_ext: Any
    ) -> dict[str, float]:
        """Every metric on the external ``rows`` (a resample, or all of them)."""
        surv = None
        if self.surv is not None:
            S, grid = self.surv, self.grid

            def surv(times: NDArray[np.float64]) -> Any:
                # the fold's Brier grid is a subset of the precomputed one
                return S[np.ix_(rows, np.searchsorted(grid, times))]

        out = _test_scores(self.eta[rows], surv, plan, y_train, y_ext[rows])
        strata = None if plan.strata is None else plan.strata[rows]
        out[LOG_PL] = _log_partial_likelihood(self.eta[rows], y_ext[rows], strata)
        return out


def _predictions(model: Any, X: pd.DataFrame, grid: NDArray[np.float64]) -> Any:
    surv = _survival_rows(model, X, grid) if grid.size else None
    return _Predictions(_linear_predictor(model, X), surv, grid)


# ------------------------------------------------------------------ the entry point
def _check_model(model: Any) -> Any:
    """Return the fitted model's VC-PCR (a VCPCRCV's ``best_estimator_``) or None."""
    if not (hasattr(model, "fit") and hasattr(model, "predict")):
        raise TypeError(
            f"The 'model' parameter of {_OWNER} must be a fitted survival "
            f"estimator (a VCPCR or VCPCRCV with family='cox'). Got "
            f"{type(model).__name__} instead."
        )
    check_is_fitted(model)
    family = getattr(model, "family", "cox")  # a survival estimator of another kind
    known = known_family(family)
    if known is None or not known.survival:
        raise ValueError(
            f"The 'model' parameter of {_OWNER} must be a survival model; got "
            f"family={family_name(family)!r}. Use family='cox'."
        )
    fitted = getattr(model, "best_estimator_", model)
    return fitted if hasattr(fitted, "membership_") else None


def _survival_y(y: Any, X: pd.DataFrame, name: str) -> NDArray[Any]:
    from sksurv.util import Surv

    time, event = check_survival(y)
    if len(time) != len(X):
        raise ValueError(f"X_{name} has {len(X)} rows but y_{name} has {len(time)}.")
    return np.asarray(Surv.from_arrays(event, time))


def _external_plan(
    X: pd.DataFrame, y: NDArray[Any], strata: list[Any], tau_quantile: float
) -> _Plan:
    """Apply the stated rules to the external cohort's event times."""
    events = y["time"][y["event"]]
    if events.size < 2:
        raise ValueError(
            f"The external cohort has {events.size} event(s); {_OWNER} needs at "
            f"least 2 to score the models."
        )
    horizons = np.unique(np.quantile(events, [0.25, 0.5, 0.75]))
    lo, hi = np.quantile(events, [0.1, 0.8])
    labels = None
    if strata:
        labels = X[strata].astype(str).agg("|".join, axis=1).to_numpy()
    return _Plan(
        horizons, (float(lo), float(hi)), tau_quantile, labels, np.empty(0, np.intp)
    )


def validate_increment_external(
    model: Any,
    X_train: Any,
    y_train: Any,
    X_external: pd.DataFrame,
    y_external: Any,
    *,
    covariates: str | int | list[Any] | None = None,
    strata: str | int | list[Any] | None = None,
    missing_genes: str = "raise",
    standardize: str = "training",
    n_bootstrap: int = 1000,
    alpha: float = 0.05,
    tau_quantile: float = 0.8,
    random_state: Any = None,
    n_jobs: int | None = None,
    verbose: bool | int | None = None,
) -> ExternalIncrementResult:
    r"""Validate what a fitted model adds to the clinical Cox model, externally.

    Nothing is refitted on the external cohort. The clinical-only Cox model
    (:class:`ClinicalCox`: lifelines, the model's covariates and strata) is
    fitted on the training cohort (``X_train``, ``y_train``: the rows the
    model was fitted on); both models are then scored on the external
    cohort with the metrics of :func:`validate_increment`, and the paired
    increment (model minus clinical) gets a percentile interval from a
    bootstrap of the external rows.

    Parameters
    ----------
    model : VCPCR or VCPCRCV
        Fitted (``family="cox"``) on a DataFrame of ``X_train`` with clinical
        ``covariates=`` and/or ``strata=``, no formula. Its genes are matched
        to the external cohort by :func:`vcpcr.external.align_cohort`. Any
        other fitted survival estimator whose ``predict`` is a risk score is
        applied to ``X_external`` as given.
    X_train : DataFrame of shape (n_train, n_features)
        The training cohort: its clinical columns fit the clinical model.
    y_train : array-like of shape (n_train, 2) or structured array
        ``(time, event)`` of the training cohort: the clinical model's
        outcome, and the censoring distribution (IPCW), Uno's tau and the
        Kaplan-Meier reference of the metrics.
    X_external : pandas.DataFrame of shape (n_samples, n_columns)
        The external cohort: the genes (by name) and the clinical columns as
        in training.
    y_external : array-like of shape (n_samples, 2) or structured array
        ``(time, event)`` of the external cohort.
    covariates, strata : str, int or list of them, optional
        The clinical model's covariates and strata; default: the model's
        ``covariates`` and ``strata`` parameters.
    missing_genes : {"raise", "drop"}, default="raise"
        See :func:`vcpcr.external.align_cohort`.
    standardize : {"training", "external"}, default="training"
        See :func:`vcpcr.external.align_cohort` (genes only; the clinical
        columns enter both models on their raw scale).
    n_bootstrap : int, default=1000
        Bootstrap resamples of the external rows (with replacement, the same
        resamples for both models).
    alpha : float, default=0.05
        One minus the intervals' level.
    tau_quantile : float, default=0.8
        Uno's C is truncated at this quantile of the training event times.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the bootstrap.
    n_jobs : int, optional
        Batches of resamples in parallel with joblib (any joblib backend).
        The resamples are drawn before any is scored, so the results do not
        depend on it.
    verbose : bool, int or None, default=None
        A progress bar over the batches of resamples (None: when running
        interactively and not under CI; see :class:`vcpcr.VCPCRCV`).

    Returns
    -------
    ExternalIncrementResult
        Metrics, increments, intervals; ``summary()`` and ``plot()``.

    Raises
    ------
    ValueError
        Without clinical columns; a clinical column missing from (or with
        missing values in) either cohort; genes missing as
        :func:`vcpcr.external.align_cohort` says; mismatched lengths; fewer
        than 2 external events; a non-survival model or a bad parameter.
    TypeError
        If ``model`` is not an estimator or ``X_external`` not a DataFrame.
    ImportError
        Without lifelines or scikit-survival.

    See Also
    --------
    validate_increment : The same increments in cross-validation.
    vcpcr.external.validate_external : Calibration on an external cohort.

    Notes
    -----
    The rules of :func:`validate_increment`, with the training cohort in
    the role of the training fold and the external cohort in that of the
    test fold: Harrell's C; Uno's C truncated at ``tau`` (the
    ``tau_quantile`` of the training event times), its IPCW weights from the
    training cohort's censoring, external times beyond the training
    follow-up censored there; the cumulative/dynamic AUC at the quartiles
    of the external event times (NaN in a resample whose follow-up does not
    reach a horizon); the integrated Brier score on the external event times
    between their 10th and 80th percentiles (inside both cohorts'
    follow-up) and the IPA :math:`1 - \mathrm{IBS}/\mathrm{IBS}_{KM}`
    (Kaplan-Meier of the training cohort); and, in place of the CV partial
    likelihood, the external cohort's log partial likelihood of each
    model's fixed linear predictor, :math:`\ell_{ext}(\hat\beta)` (Efron
    ties, stratified by the clinical strata).

    The increment is computed on the whole external cohort; its ``se`` is
    the standard deviation of the ``n_bootstrap`` paired resample
    increments, the interval their ``alpha/2`` and ``1 - alpha/2``
    percentiles, and the p-value of ``H0: no gain`` the share of resamples
    whose increment is ``<= 0`` (``>= 0`` for IBS): the test that rejects at
    level ``alpha/2`` exactly when the percentile interval excludes 0 from
    below, so interval and test agree. The horizons and the Brier range are
    fixed on the whole external cohort before resampling. The bootstrap
    holds both fitted models fixed: the intervals are conditional on the
    training cohort.

    References
    ----------
    Royston, P. & Altman, D. G. (2013). External validation of a Cox
    prognostic model: principles and methods. BMC Med Res Methodol 13:33.

    Efron, B. & Tibshirani, R. (1993). An Introduction to the Bootstrap.
    Chapman & Hall, ch. 13 (percentile intervals).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from vcpcr.validation import ClinicalCox, validate_increment_external
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(120, 2)), columns=["age", "g1"])
    >>> y = np.column_stack([rng.exponential(np.exp(-X["age"])),
    ...                      rng.random(120) < 0.8])
    >>> clinical = ClinicalCox(covariates="age").fit(X[:60], y[:60])
    >>> res = validate_increment_external(clinical, X[:60], y[:60], X[60:], y[60:],
    ...                                   n_bootstrap=20, random_state=0)
    >>> float(res.increments["increment"].abs().max())
    0.0
    """
    _require_survival(_OWNER)
    fitted = _check_model(model)
    check_scalar(n_bootstrap, "n_bootstrap", numbers.Integral, owner=_OWNER, min_val=2)
    check_fraction(alpha, "alpha", owner=_OWNER)
    check_fraction(tau_quantile, "tau_quantile", owner=_OWNER)
    shown = progress_shown(verbose, _OWNER)
    clinical_ = _clinical(model, X_train, covariates, strata, _OWNER)
    covariates_, strata_ = clinical_.covariates, clinical_.strata
    clinical_columns = clinical_.columns
    y_train = _outcome(clinical_, y_train, "y_train")
    X_train = _check_frame(X_train, y_train, clinical_columns, _OWNER, "X_train")
    if not isinstance(X_external, pd.DataFrame):
        raise TypeError(
            f"The 'X_external' parameter of {_OWNER} must be a pandas DataFrame "
            f"whose columns name the genes (matched by name). Got "
            f"{type(X_external).__name__}."
        )
    absent = [c for c in clinical_columns if c not in X_external.columns]
    if absent:
        raise ValueError(
            f"X_external lacks the clinical column(s) {absent} of the clinical "
            f"model (covariates={covariates_}, strata={strata_}); name them as "
            f"in training."
        )
    if clinical_.formula is not None and y_external is None:
        y_external = formula_outcome(clinical_.formula, X_external)
    X_ext = _check_frame(X_external, y_external, clinical_columns, _OWNER, "X_external")
    ys_train = _survival_y(y_train, X_train, "train")
    ys_ext = _survival_y(y_external, X_ext, "external")
    clinical = clinical_.model(ClinicalCox()).fit(X_train, ys_train)
    cohort = None
    data = X_ext
    if fitted is not None:
        cohort = align_cohort(
            model, X_ext, missing_genes=missing_genes, standardize=standardize
        )
        data = cohort.X
    plan = _external_plan(X_ext, ys_ext, strata_, float(tau_quantile))
    lo, hi = plan.brier_range
    events = np.unique(ys_ext["time"][ys_ext["event"]])
    grid = events[(events >= lo) & (events <= hi)]
    name = type(model).__name__
    name = name if name != CLINICAL else f"{name} (model)"
    preds = {
        # a formula's clinical model reads the formula's columns (cohort.X: the
        # genes as the model reads them, the other columns as given)
        CLINICAL: _predictions(
            clinical, X_ext if clinical_.formula is None else data, grid
        ),
        name: _predictions(model, data, grid),
    }
    n = len(ys_ext)
    every = np.arange(n)
    point = {m: p.scores(every, plan, ys_train, ys_ext) for m, p in preds.items()}
    rng = check_random_state(random_state)
    draws = rng.integers(0, n, size=(int(n_bootstrap), n))
    batches = np.array_split(draws, -(-len(draws) // _BATCH))
    scored = run_parallel(
        _bootstrap_scores,
        [(preds, rows, plan, ys_train, ys_ext) for rows in batches],
        n_jobs=n_jobs,
        verbose=shown,
        desc=_OWNER,
        unit="batches of resamples",
    )
    boot = [scores for batch in scored for scores in batch]
    no_gene = _n_genes(model, plan.features) == 0
    return _result(
        point,
        boot,
        name,
        no_gene,
        plan,
        float(alpha),
        ys_train,
        ys_ext,
        covariates_,
        strata_,
        cohort,
    )


#: Bootstrap resamples per parallel task of :func:`validate_increment_external`.
_BATCH = 50


def _bootstrap_scores(
    preds: dict[str, _Predictions],
    draws: NDArray[np.intp],
    plan: _Plan,
    y_train: NDArray[Any],
    y_ext: NDArray[Any],
) -> list[dict[str, dict[str, float]]]:
    """Every model's metrics on each resample (a row of ``draws``) of the rows."""
    return [
        {m: p.scores(rows, plan, y_train, y_ext) for m, p in preds.items()}
        for rows in draws
    ]


def _result(
    point: dict[str, dict[str, float]],
    boot: list[dict[str, dict[str, float]]],
    name: str,
    no_gene: bool,
    plan: _Plan,
    alpha: float,
    y_train: NDArray[Any],
    y_ext: NDArray[Any],
    covariates: list[Any],
    strata: list[Any],
    cohort: ExternalCohort | None,
) -> ExternalIncrementResult:
    metrics = _metric_names(plan.horizons, LOG_PL)
    per_model = {m: pd.DataFrame([b[m] for b in boot], columns=metrics) for m in point}
    table = pd.DataFrame(
        [
            (m, k, point[m][k], per_model[m][k].std(ddof=1))
            for m in point
            for k in metrics
        ],
        columns=["model", "metric", "estimate", "se"],
    ).set_index(["model", "metric"])
    diffs = per_model[name] - per_model[CLINICAL]
    rows = [
        _increment_row(
            name,
            k,
            point[name][k] - point[CLINICAL][k],
            diffs[k].to_numpy(dtype=np.float64),
            no_gene,
            alpha,
        )
        for k in metrics
    ]
    resample = diffs.rename_axis("resample").reset_index()
    resample.insert(1, "model", name)
    notes = _notes(plan, name, no_gene, len(boot), cohort, strata)
    return ExternalIncrementResult(
        metrics=table,
        increments=pd.DataFrame(rows).set_index(["model", "metric"]),
        resample_increments=resample,
        horizons=plan.horizons,
        brier_range=plan.brier_range,
        tau_quantile=plan.tau_quantile,
        alpha=alpha,
        n_bootstrap=len(boot),
        n_samples=len(y_ext),
        n_events=int(y_ext["event"].sum()),
        n_train=len(y_train),
        n_train_events=int(y_train["event"].sum()),
        covariates=covariates,
        strata=strata,
        cohort=cohort,
        notes=notes,
    )


def _increment_row(
    model: str,
    metric: str,
    estimate: float,
    d: NDArray[np.float64],
    no_gene: bool,
    alpha: float,
) -> dict[str, Any]:
    """Return the increment, its bootstrap se, percentile interval and p-value."""
    finite = d[np.isfinite(d)]
    row: dict[str, Any] = {
        "model": model,
        "metric": metric,
        "increment": estimate,
        "n_resamples": int(finite.size),
    }
    if no_gene or finite.size < 2:
        status = "no gene" if no_gene else "undefined in the resamples"
        row.update(se=np.nan, ci_low=np.nan, ci_high=np.nan, p=np.nan, status=status)
        return row
    lower = metric in _LOWER_BETTER
    lo, hi = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    p = float(np.mean(finite >= 0 if lower else finite <= 0))
    row.update(
        se=float(finite.std(ddof=1)),
        ci_low=float(lo),
        ci_high=float(hi),
        p=p,
        status="lower is better" if lower else "",
    )
    return row


def _notes(
    plan: _Plan,
    name: str,
    no_gene: bool,
    n_bootstrap: int,
    cohort: ExternalCohort | None,
    strata: list[Any],
) -> list[str]:
    lo, hi = plan.brier_range
    notes = [
        f"No refitting: both models were fitted on the training cohort; "
        f"increment = model minus {CLINICAL} on the external cohort. Interval: "
        f"percentiles of {n_bootstrap} paired bootstrap resamples of the "
        f"external rows (the same resamples for both models; the models held "
        f"fixed); P(no gain): the share of resamples with increment <= 0 "
        f"(>= 0 for IBS).",
        f"Uno C: tau = the {plan.tau_quantile:g} quantile of the training "
        f"cohort's event times, IPCW from its censoring. AUC: cumulative/dynamic "
        f"at the quartiles of the external event times. IBS: external event "
        f"times in [{lo:.4g}, {hi:.4g}] (their 10th to 80th percentile); "
        f"IPA = 1 - IBS/IBS(Kaplan-Meier of the training cohort).",
        f"{LOG_PL}: the external cohort's log partial likelihood of each "
        f"model's fixed linear predictor, Efron ties"
        + (", stratified by the clinical strata." if strata else "."),
    ]
    if cohort is not None:
        notes.append(
            f"Genes matched by name, standardized by the {cohort.standardize} "
            f"cohort's means and SDs; {len(cohort.missing_genes)} selected "
            f"gene(s) missing (at their mean, z = 0)."
        )
    if no_gene:
        notes.append(
            f"{name} uses no gene: it is the clinical model, its increments are "
            f"0 (up to the fits' tolerance), and no interval or test is given."
        )
    return notes
