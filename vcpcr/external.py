r"""A fitted signature on another cohort: gene matching, standardization, calibration.

:func:`align_cohort` matches an external cohort's columns to a fitted
``VCPCR`` / ``VCPCRCV`` by name, reports the duplicated and missing genes with
the share of each module's membership weight they carry, and re-expresses
the cohort so that the model's own methods predict on it with the chosen
standardization. :func:`validate_external` then judges the model there
without refitting it: Harrell's concordance, the calibration slope and
observed/expected (Royston & Altman 2013) through
:mod:`vcpcr.calibration`, optionally after refitting the Breslow baseline
hazard on the external cohort with the linear predictor kept.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.utils.validation import check_is_fitted
from statsmodels.iolib.summary import Summary

from vcpcr._checks import (
    check_choice,
    check_finite,
    check_scalar,
    check_survival,
)
from vcpcr._formula import source_groups
from vcpcr._input import check_same_rows
from vcpcr._result import Result
from vcpcr._scaling import constant_columns
from vcpcr._summary import evidence_table, numbered_notes
from vcpcr._survival import breslow_baseline, evaluate_baseline
from vcpcr.calibration import (
    CalibrationResult,
    binary_calibration,
    regression_calibration,
    survival_calibration,
)
from vcpcr.metrics import ConcordanceInterval, concordance_interval

__all__ = ["ExternalCohort", "ExternalValidation", "align_cohort", "validate_external"]


@dataclass(frozen=True, eq=False, repr=False)
class ExternalCohort(Result):
    """An external cohort matched to a fitted model.

    Attributes
    ----------
    X : pandas.DataFrame
        The cohort re-expressed for the model: the genes in the training
        order, then the covariates and strata as given (categorical ones
        unencoded, as ``predict`` takes them); each selected gene ``x`` as
        ``mean_ + scale_ * z`` with ``z`` its standardized value (by the
        training or the cohort's own mean and SD); a missing gene at its
        training mean (``z = 0``); a missing unselected gene as 0 (the model
        does not read it). Pass it to the model's ``predict`` and survival
        methods.
    modules : pandas.DataFrame
        Per module: ``genes``, ``missing`` (selected genes absent from the
        cohort), ``missing_weight`` (their share of the module's membership
        weight, ``sum V_jk`` over the missing genes over ``sum V_jk``).
    missing_genes : list of str
        Selected genes absent from the cohort.
    duplicated : list of str
        Column names that occur more than once in the cohort (unselected
        columns only; a duplicated selected gene is an error).
    standardize : {"training", "external"}
        Which means and SDs standardize the genes.
    """

    X: pd.DataFrame
    modules: pd.DataFrame
    missing_genes: list[str]
    duplicated: list[str]
    standardize: str


def _model_frame(model: Any, owner: str) -> tuple[Any, list[str]]:
    check_is_fitted(model)
    fitted = getattr(model, "best_estimator_", model)
    names = getattr(fitted, "feature_names_in_", None)
    if names is None or not hasattr(fitted, "membership_"):
        raise ValueError(
            f"{owner} matches genes by name: fit the model on a DataFrame with "
            f"gene names as columns (it was fitted on an array)."
        )
    return fitted, [str(n) for n in names]


def _raw_columns(fitted: Any, names: list[str], genes: list[str]) -> list[str]:
    """Return the data columns the model reads besides its genes, unencoded.

    Covariates and strata as the user gave them at fit: a categorical column
    ``er`` encoded as ``er[T.pos]`` is read as ``er``, which ``predict``
    encodes with the stored spec (``model_spec_``), as on the training data.
    With a formula, the columns its right-hand side and strata read.
    """
    spec = getattr(fitted, "model_spec_", None)
    gene_set = set(genes)
    if spec is not None and getattr(fitted, "formula", None) is not None:
        return [c for c in spec.columns if c not in gene_set]
    source = {d: c for c, ds in source_groups(spec).items() for d in ds}
    raw = [source.get(n, n) for n in names if n not in gene_set]
    return list(dict.fromkeys(raw))


def _check_frame(X: Any, owner: str) -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        raise TypeError(
            f"The 'X' parameter of {owner} must be a pandas DataFrame whose "
            f"columns name the genes (matched by name). Got {type(X).__name__}."
        )
    return X


def _module_report(fitted: Any, selected: list[str], missing: set[str]) -> pd.DataFrame:
    V = fitted.membership_
    rows = []
    for module in V.columns:
        members = [g for g in fitted.clusters_[module] if g in selected]
        weight = V.loc[members, module]
        lost = [g for g in members if g in missing]
        share = float(weight[lost].sum() / weight.sum()) if len(members) else 0.0
        rows.append((len(members), len(lost), share))
    return pd.DataFrame(
        rows, index=V.columns, columns=["genes", "missing", "missing_weight"]
    )


def align_cohort(
    model: Any,
    X: pd.DataFrame,
    *,
    missing_genes: str = "raise",
    standardize: str = "training",
) -> ExternalCohort:
    """Match an external cohort's genes to a fitted model, by name.

    Parameters
    ----------
    model : VCPCR or VCPCRCV
        Fitted on a DataFrame (its column names are the genes).
    X : pandas.DataFrame of shape (n_samples, n_columns)
        The external cohort: its genes, covariates and strata named as in
        training (any order; extra columns are ignored), categorical ones with
        their raw values (``er`` with ``"neg"``/``"pos"``, not ``er[T.pos]``):
        the model's ``predict`` encodes them as it encodes any new data.
    missing_genes : {"raise", "drop"}, default="raise"
        A selected gene absent from ``X``: ``"raise"`` names the missing
        genes and the share of each module's weight they carry; ``"drop"``
        proceeds without them (each contributes 0 to its module score, its
        training mean; the module scores shrink by that share).
    standardize : {"training", "external"}, default="training"
        ``"training"``: the training means and SDs (the model as published:
        needs expression on the training scale, e.g. the same platform and
        normalization); ``"external"``: the cohort's own means and SDs
        (removes a platform or batch shift, at the cost of assuming that the
        cohort's gene distribution, hence its case mix, matches training's).

    Returns
    -------
    ExternalCohort
        The re-expressed data and the report.

    Raises
    ------
    ValueError
        On missing selected genes with ``missing_genes="raise"``, missing
        covariates or strata, a duplicated selected gene, or missing or
        infinite values in selected genes.
    TypeError
        If ``X`` is not a DataFrame.

    See Also
    --------
    validate_external : The model's calibration and concordance on the cohort.

    Examples
    --------
    >>> from vcpcr import VCPCR
    >>> from vcpcr.datasets import load_liver
    >>> from vcpcr.external import align_cohort
    >>> X, y = load_liver(return_X_y=True)
    >>> model = VCPCR(3, lam_ratio=0.6, n_init=2, random_state=0)
    >>> model = model.fit(X.iloc[:40, :100], y[:40])
    >>> cohort = align_cohort(model, X.iloc[40:, :100], standardize="external")
    >>> cohort.missing_genes
    []
    """
    owner = "align_cohort"
    X = _check_frame(X, owner)
    check_choice(missing_genes, "missing_genes", ("raise", "drop"), owner=owner)
    check_choice(standardize, "standardize", ("training", "external"), owner=owner)
    fitted, names = _model_frame(model, owner)
    genes = [str(g) for g in fitted.membership_.index]
    selected = [g for g, k in zip(genes, fitted.labels_, strict=True) if k >= 0]
    columns = pd.Index([str(c) for c in X.columns])
    counts = columns.value_counts()
    duplicated = sorted(counts.index[counts > 1])
    dup_selected = [g for g in duplicated if g in selected]
    if dup_selected:
        raise ValueError(
            f"X has {len(dup_selected)} selected gene(s) in more than one column: "
            f"{dup_selected[:10]}. Keep one column per gene (e.g. the probe with "
            f"the largest variance, or the mean: X.T.groupby(level=0).mean().T)."
        )
    present = set(columns)
    missing = [g for g in selected if g not in present]
    modules = _module_report(fitted, selected, set(missing))
    formula = getattr(fitted, "formula", None) is not None
    others = _raw_columns(fitted, names, genes)
    absent = [n for n in others if n not in present]
    if absent:
        raise ValueError(
            f"X lacks the model's covariate or strata column(s) {absent}: a "
            f"signature adjusted for them cannot be applied without them."
        )
    if missing and missing_genes == "raise":
        shares = ", ".join(
            f"{m} {100 * s:.1f}%" for m, s in modules["missing_weight"].items() if s > 0
        )
        raise ValueError(
            f"X lacks {len(missing)} of the {len(selected)} selected genes "
            f"({missing[:10]}{', ...' if len(missing) > 10 else ''}), carrying "
            f"this share of each module's membership weight: {shares}. Map the "
            f"gene names to the training ones, or pass missing_genes='drop' to "
            f"proceed without them (their module scores shrink by that share)."
        )
    frame = X.loc[:, ~columns.duplicated()]
    frame.columns = [str(c) for c in frame.columns]
    names = genes if formula else [*genes, *others]
    columns_out = _reexpressed(fitted, frame, names, selected, standardize)
    # built at once (one insert per gene fragments the frame: a pandas warning)
    out = pd.DataFrame(columns_out, index=X.index)
    if formula:  # a formula reads its own columns (outcome, covariates) too
        rest = frame.drop(columns=[c for c in columns_out if c in frame.columns])
        out = pd.concat([rest, out], axis=1)
    return ExternalCohort(out, modules, missing, duplicated, standardize)


def _reexpressed(
    fitted: Any,
    frame: pd.DataFrame,
    names: list[str],
    selected: list[str],
    standardize: str,
) -> dict[str, Any]:
    """Return each column the model reads, re-expressed (see ExternalCohort.X)."""
    genes = [str(g) for g in fitted.membership_.index]
    present, chosen = set(frame.columns), set(selected)
    n = len(frame)
    if standardize == "external" and n < 2:
        raise ValueError(
            f"standardize='external' standardizes each gene within the cohort, "
            f"which needs at least 2 rows; X has {n}. Use standardize='training'."
        )
    columns_out: dict[str, Any] = {}
    constant: list[str] = []
    position = {g: j for j, g in enumerate(genes)}
    for name in names:
        if name in position and name in chosen:
            j = position[name]
            mean, scale = fitted.mean_[j], fitted.scale_[j]
            if name not in present:
                columns_out[name] = np.full(n, mean)
                continue
            values = pd.to_numeric(frame[name], errors="coerce").to_numpy(np.float64)
            if np.isnan(values).any():
                raise ValueError(
                    f"Selected gene {name!r} has {int(np.isnan(values).sum())} "
                    f"missing or non-numeric value(s) in X; impute or drop those "
                    f"rows first."
                )
            check_finite(
                values, f"Selected gene {name!r}", fix="fix or drop those rows first"
            )
            if standardize == "external":
                if constant_columns(values[:, None]).size:
                    constant.append(name)
                    continue
                z = (values - values.mean()) / values.std(ddof=1)
                values = mean + scale * z
            columns_out[name] = values
        elif name in present:
            columns_out[name] = frame[name].to_numpy()
        else:  # an unselected gene: read by no prediction
            columns_out[name] = np.zeros(n)
    if constant:
        raise ValueError(
            f"Selected gene(s) {constant[:10]} take one value in this cohort, so "
            f"standardize='external' cannot standardize them within it. Use "
            f"standardize='training', or leave them out of X (a missing gene "
            f"is set to its training mean)."
        )
    return columns_out


def _other_calibration(
    fitted: Any, data: pd.DataFrame, y: Any, groups: int, alpha: float
) -> CalibrationResult:
    """Calibration of a binomial or gaussian model's predictions on ``data``."""
    if fitted._fitted_family.estimator_type == "classifier":
        p = fitted.predict_proba(data)[:, 1]
        labels = np.asarray(y) == fitted.classes_[1]
        return binary_calibration(labels, p, n_groups=groups, alpha=alpha)
    target = np.asarray(y, dtype=np.float64).reshape(-1)
    return regression_calibration(
        target, fitted.predict(data), n_groups=groups, alpha=alpha
    )


def _refit_baseline(
    fitted: Any,
    data: pd.DataFrame,
    eta: NDArray[np.float64],
    time: NDArray[np.float64],
    event: NDArray[np.bool_],
    horizon: float,
) -> tuple[NDArray[np.float64], Any]:
    """Each sample's refitted baseline at ``horizon``; the value (per stratum)."""
    labels = np.full(len(eta), "all", dtype=object)
    if fitted.strata_names_:
        strata = fitted.outcome_design(data)[fitted.strata_names_]
        labels = strata.astype(str).agg("|".join, axis=1).to_numpy()
    baseline = breslow_baseline(eta, time, event.astype(np.float64), list(labels))
    at = np.array([horizon])
    base = {str(k): float(evaluate_baseline(baseline[[k]], at)[0]) for k in baseline}
    H0 = np.array([base[str(k)] for k in labels])
    return H0, (base if fitted.strata_names_ else base["all"])


@dataclass(frozen=True, eq=False, repr=False)
class ExternalValidation(Result):
    """A fitted model judged on an external cohort, without refitting.

    Attributes
    ----------
    cohort : ExternalCohort
        The matching report and the re-expressed data.
    calibration : CalibrationResult
        Calibration of the model's predictions (its own baseline hazard).
    recalibrated : CalibrationResult or None
        Calibration after refitting the baseline hazard on the cohort
        (``recalibrate_baseline=True``), the linear predictor kept.
    baseline_hazard : float or None
        The refitted baseline cumulative hazard at the horizon, per stratum
        (a dict) for a stratified model.
    concordance : float or None
        Harrell's C of the linear predictor (cox).
    concordance_interval : ConcordanceInterval or None
        ``concordance`` with its 95 % bootstrap interval over the cohort's
        rows (:func:`vcpcr.metrics.concordance_interval`, 1000 resamples,
        seed 0), which the summary prints (cox).
    """

    cohort: ExternalCohort
    calibration: CalibrationResult
    recalibrated: CalibrationResult | None
    baseline_hazard: Any
    concordance: float | None
    concordance_interval: ConcordanceInterval | None

    def summary(self) -> Summary:
        """Return the gene report, then the calibration summary (statsmodels).

        Returns
        -------
        statsmodels.iolib.summary.Summary
            The calibration's summary with the module report first and the
            matching in the notes.
        """
        smry = self.calibration.summary()
        report = evidence_table(
            self.cohort.modules.astype({"genes": str, "missing": str}),
            "Selected genes missing from the external cohort",
        )
        smry.tables.insert(0, report)
        notes = [
            f"Genes standardized by the {self.cohort.standardize} cohort's means "
            f"and SDs; missing genes enter at their mean (z = 0); "
            f"{len(self.cohort.duplicated)} duplicated unselected column(s) "
            f"ignored.",
            *self.calibration.notes,
        ]
        if self.concordance_interval is not None:
            ci = self.concordance_interval
            notes.insert(
                1,
                f"Harrell's C of the linear predictor: {ci.estimate:.4f}, "
                f"{100 * (1 - ci.alpha):.0f}% bootstrap interval [{ci.low:.4f}, "
                f"{ci.high:.4f}] ({ci.n_bootstrap} resamples of the cohort's rows).",
            )
        if self.recalibrated is not None:
            r = self.recalibrated
            notes.append(
                f"With the baseline hazard refitted on this cohort (linear "
                f"predictor kept): observed/expected {r.observed_expected:.3f}, "
                f"ICI {r.ici:.4f}, E50 {r.e50:.4f}, E90 {r.e90:.4f}."
            )
        smry.extra_txt = None
        smry.add_extra_txt(numbered_notes(notes))
        return smry

    def plot(self, ax: Any = None) -> Any:
        """Draw the calibration (see :meth:`CalibrationResult.plot`).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw.

        Returns
        -------
        matplotlib.axes.Axes
            The axes.
        """
        return self.calibration.plot(ax)


def validate_external(
    model: Any,
    X: pd.DataFrame,
    y: Any = None,
    *,
    horizon: float | None = None,
    missing_genes: str = "raise",
    standardize: str = "training",
    recalibrate_baseline: bool = False,
    n_groups: int | None = None,
    alpha: float = 0.05,
) -> ExternalValidation:
    """Judge a fitted model on an external cohort, without refitting it.

    Parameters
    ----------
    model : VCPCR or VCPCRCV
        Fitted on a DataFrame.
    X : pandas.DataFrame
        The external cohort (see :func:`align_cohort`).
    y : array-like, optional
        Its outcome; omitted when the model has a formula (read from ``X``).
    horizon : float, optional
        Time of the survival comparison (cox; required there).
    missing_genes, standardize : str
        See :func:`align_cohort`.
    recalibrate_baseline : bool, default=False
        Also refit Breslow's baseline hazard on the cohort, the linear
        predictor kept (cox; per stratum for a stratified model): the
        recalibration that keeps the signature and updates the baseline risk.
    n_groups : int, optional
        Groups of the calibration (default 5 for cox, 10 otherwise).
    alpha : float, default=0.05
        Level of the intervals.

    Returns
    -------
    ExternalValidation
        The report, the calibration(s), the concordance.

    Raises
    ------
    ValueError
        See :func:`align_cohort`; also a missing horizon for a Cox model.

    See Also
    --------
    align_cohort, vcpcr.calibration.survival_calibration

    References
    ----------
    .. [1] Royston, P., Altman, D. G. (2013). External validation of a Cox
       prognostic model: principles and methods. BMC Medical Research
       Methodology 13, 33.
    """
    owner = "validate_external"
    cohort = align_cohort(
        model, X, missing_genes=missing_genes, standardize=standardize
    )
    fitted, _ = _model_frame(model, owner)
    family = fitted._fitted_family
    if y is None:
        if fitted.formula is None:
            raise ValueError(
                "y is required (or a model with formula=, whose data hold it)."
            )
        from vcpcr._formula import formula_outcome

        y = formula_outcome(fitted.formula, X)
    check_same_rows(X, y)
    data = cohort.X
    if n_groups is not None:
        check_scalar(n_groups, "n_groups", numbers.Integral, owner=owner, min_val=1)
    groups = n_groups if n_groups is not None else (5 if family.survival else 10)
    if not family.survival:
        if horizon is not None or recalibrate_baseline:
            raise ValueError(
                f"horizon and recalibrate_baseline apply to family='cox' only; got "
                f"family={family.name!r}."
            )
        cal = _other_calibration(fitted, data, y, groups, alpha)
        return ExternalValidation(
            cohort=cohort,
            calibration=cal,
            recalibrated=None,
            baseline_hazard=None,
            concordance=None,
            concordance_interval=None,
        )
    if horizon is None:
        raise ValueError(
            f"{owner} requires a horizon for family={family.name!r}: the time at "
            f"which predicted and observed survival are compared."
        )
    check_scalar(
        horizon, "horizon", numbers.Real, owner=owner, min_val=0.0, include_min=False
    )
    time, event = check_survival(y)
    surv = fitted.predict_survival_function(data, return_array=True, times=[horizon])
    if constant_columns(surv).size:
        raise ValueError(
            f"{owner}: the model predicts the same survival for every sample of "
            f"the cohort ({float(surv[0, 0])!r} at horizon={horizon!r}), as a model "
            f"that selected no genes does: there is no calibration slope nor "
            f"concordance to validate. Refit with a smaller lam_ratio, or compare "
            f"the one prediction with kaplan_meier on the cohort."
        )
    cal = survival_calibration(y, surv[:, 0], horizon, n_groups=groups, alpha=alpha)
    eta = fitted.predict_log_partial_hazard(data)
    c_index = concordance_interval(np.column_stack([time, event]), eta)
    recal, base = None, None
    if recalibrate_baseline:
        H0, base = _refit_baseline(fitted, data, eta, time, event, float(horizon))
        recal = survival_calibration(
            y, np.exp(-H0 * np.exp(eta)), horizon, n_groups=groups, alpha=alpha
        )
    return ExternalValidation(
        cohort=cohort,
        calibration=cal,
        recalibrated=recal,
        baseline_hazard=base,
        concordance=c_index.estimate,
        concordance_interval=c_index,
    )
