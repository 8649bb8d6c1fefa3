"""``summary()`` and ``summary2()`` of a fitted VC-PCR estimator.

The tables are built from plain arrays (the family's
:class:`vcpcr._families.ParamTable`, composition rows,
header rows), so that each family only describes its own fit.
:func:`model_summary` and :func:`model_summary2` gather them from a fitted
model, read through the :class:`FittedModel` protocol (the attributes they
use); the :class:`SummaryMixin` of ``VCPCR`` and ``VCPCRCV``'s summaries
call them.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_is_fitted
from statsmodels.iolib import summary2 as sm_summary2
from statsmodels.iolib.summary import Summary, forg, summary_params
from statsmodels.iolib.table import SimpleTable

from vcpcr._checks import check_fraction
from vcpcr.metrics import ConcordanceInterval, concordance_interval

if TYPE_CHECKING:  # the family and the coefficient table it reads off its fit
    from vcpcr._families import Family, ParamTable

__all__ = [
    "CONDITIONAL_TITLE",
    "POST_SELECTION_NOTE",
    "Evidence",
    "FittedModel",
    "SummaryMixin",
    "VCPCRSummary",
    "build_summary",
    "composition_rows",
    "evidence_table",
    "model_summary",
    "model_summary2",
    "numbered_notes",
]

POST_SELECTION_NOTE = (
    "Standard errors are conditional on the estimated clusters: they do not "
    "account for the selection and clustering of the variables."
)

#: Title of the summaries.
_TITLE = "VC-PCR Results"

#: Title of the coefficient table: its p-values are not honest.
CONDITIONAL_TITLE = (
    "P-values ignore the cluster selection: see vcpcr.inference.multi_split"
)


class Evidence(Protocol):
    """What ``summary(inference=...)`` asks of a resampling result.

    A result (e.g. :class:`vcpcr.inference.MultiSplitResult`) is computed
    from an estimator specification and a data set; the summary shows it
    beside a model fitted on all of that data.
    """

    @property
    def guarantee(self) -> str:
        """What the numbers guarantee; a note of the summary."""

    def check_matches(self, model: Any) -> None:
        """Raise a ValueError unless ``model`` is the result's estimator and data."""

    def module_evidence(self, model: Any) -> pd.DataFrame:
        """Return one row per cluster of ``model``; columns: named evidence."""

    def gene_evidence(self, model: Any) -> pd.DataFrame:
        """Return one row per feature, strongest evidence first; named columns."""


def _fmt(value: Any) -> str:
    """Format a header value compactly."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return f"{int(value)}"
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    return f"{float(value):#.4g}"


def _params_table(table: ParamTable, yname: str, alpha: float) -> SimpleTable:
    """Coefficient table via statsmodels' ``summary_params``."""
    simple = summary_params(
        (None, table.params, table.bse, table.stat, table.pvalues, table.conf_int),
        yname=yname,
        xname=list(table.names),
        alpha=alpha,
        use_t=table.use_t,
    )
    if not table.extra:
        return simple
    # Rebuild with the extra columns inserted after "coef".
    header = list(simple.data[0])
    rows = [list(r) for r in simple.data[1:]]
    for offset, (name, values) in enumerate(table.extra, start=2):
        header.insert(offset, name)
        for row, v in zip(rows, values, strict=True):
            row.insert(offset, forg(v, prec=4).strip())  # as statsmodels' coef
    # One more column than statsmodels' layout: narrower columns keep 80 chars;
    # the separator keeps a wider cell (e.g. -1234.5678) apart from the next.
    txt = simple.output_formats["txt"]
    txt_fmt = {**txt, "colwidths": 9, "data_fmts": ["%9s"], "colsep": " "}
    return SimpleTable(
        [r[1:] for r in rows],
        headers=header[1:],
        stubs=[r[0] for r in rows],
        txt_fmt=txt_fmt,
    )


def composition_rows(
    clusters: dict[str, list[tuple[str, float]]], top: int = 3, width: int = 60
) -> list[list[str]]:
    """Rows ``[cluster, size, top members]`` for the composition table.

    Parameters
    ----------
    clusters : dict
        Cluster name -> list of ``(member, membership degree)``, strongest
        first.
    top : int, default=3
        Members shown per cluster.
    width : int, default=60
        Maximum width of the members column (including the "+N more" tail).

    Returns
    -------
    list of list of str
        One row per cluster.
    """
    rows = []
    for name, members in clusters.items():
        shown = [f"{m} ({d:.3g})" for m, d in members[:top]]
        while True:
            rest = len(members) - len(shown)
            text = ", ".join(shown) + (f", +{rest} more" if rest else "")
            if len(text) <= width or len(shown) == 1:
                break
            shown.pop()
        rows.append([name, str(len(members)), text])
    return rows


def _cell(value: Any) -> str:
    """Format one cell of an evidence table."""
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    number = float(value)
    return f"{number:.1e}" if 0 < abs(number) < 1e-4 else f"{number:.4f}"


def evidence_table(frame: pd.DataFrame, title: str) -> SimpleTable:
    """Return a DataFrame (index: row names) as a titled SimpleTable.

    Parameters
    ----------
    frame : pandas.DataFrame
        Numbers (4 decimals, or 2 significant digits below 1e-4; NaN as
        ``-``) or strings.
    title : str
        Title line.

    Returns
    -------
    statsmodels.iolib.table.SimpleTable
        The table.
    """
    data = [[_cell(v) for v in row] for row in frame.itertuples(index=False)]
    return SimpleTable(
        data,
        headers=[str(c) for c in frame.columns],
        stubs=[str(i) for i in frame.index],
        title=title,
        txt_fmt={"header_align": "r", "data_aligns": "r", "colsep": "  "},
    )


class VCPCRSummary(Summary):
    """statsmodels' ``Summary`` whose ``as_latex`` typesets each table alone.

    statsmodels merges all tables into one ``tabular``, which fails when they
    have different numbers of columns (its docstring recommends
    ``as_latex_tabular`` per table); this does exactly that.
    """

    def as_latex(self) -> str:
        """Return the tables (one ``tabular`` each) and the notes as LaTeX.

        Returns
        -------
        str
            LaTeX source.
        """
        latex = "\n\n".join(table.as_latex_tabular() for table in self.tables)
        if self.extra_txt is not None:
            extra = self.extra_txt.replace("\n", " \\newline\n ")
            latex = latex + "\n\n" + extra.replace("_", "\\_")
        return latex


def build_summary(
    *,
    title: str,
    yname: str,
    left: Sequence[tuple[str, Any]],
    right: Sequence[tuple[str, Any]],
    params: ParamTable,
    composition: list[list[str]],
    notes: Sequence[str],
    alpha: float = 0.05,
    cluster_evidence: SimpleTable | None = None,
    gene_evidence: SimpleTable | None = None,
    effects: SimpleTable | None = None,
) -> Summary:
    """Assemble a statsmodels Summary: header, coefficients, composition, notes.

    Parameters
    ----------
    title : str
        Title line.
    yname : str
        Name of the response.
    left, right : sequence of (label, value)
        Header rows of the two columns.
    params : ParamTable
        Coefficient table.
    composition : list of list of str
        Rows of the cluster composition table (see :func:`composition_rows`).
    notes : sequence of str
        Numbered notes printed at the end.
    alpha : float, default=0.05
        Level of the confidence intervals.
    cluster_evidence, gene_evidence : SimpleTable, optional
        Evidence after selection per cluster (placed after the coefficients)
        and per feature (after the composition).
    effects : SimpleTable, optional
        Effects per standard deviation (placed right after the coefficients).

    Returns
    -------
    VCPCRSummary
        The summary; ``print`` it, or use ``as_text()``, ``as_html()`` or
        ``as_latex()``. The coefficient table's title says that its p-values
        ignore the selection.
    """
    smry = VCPCRSummary()
    fmt_left = [(k, [_fmt(v)]) for k, v in left]
    fmt_right = [(k, [_fmt(v)]) for k, v in right]
    smry.add_table_2cols(
        None,
        title=title,
        gleft=fmt_left,
        gright=fmt_right,
        yname=yname,
        xname=list(params.names),
    )
    if len(params.names):
        table = _params_table(params, yname, alpha)
        table.title = CONDITIONAL_TITLE
        smry.tables.append(table)
    else:  # a Cox model without clusters or covariates: the baseline alone
        notes = [
            "No coefficient: no cluster was selected and there is no covariate, "
            "so the model is its baseline alone (every prediction the same).",
            *notes,
        ]
    if effects is not None:
        smry.tables.append(effects)
    if cluster_evidence is not None:
        smry.tables.append(cluster_evidence)
    if composition:
        smry.tables.append(
            SimpleTable(
                [r[1:] for r in composition],
                headers=["size", "top members (membership degree)"],
                stubs=[r[0] for r in composition],
                title="Cluster composition",
                txt_fmt={"data_aligns": "l", "colsep": "  "},
            )
        )
    if gene_evidence is not None:
        smry.tables.append(gene_evidence)
    if notes:
        smry.add_extra_txt(numbered_notes(notes))
    return smry


def numbered_notes(notes: Sequence[str]) -> list[str]:
    """Return ``"Notes:"`` and the notes numbered ``[1]``, ... wrapped at 78.

    Parameters
    ----------
    notes : sequence of str
        The notes.

    Returns
    -------
    list of str
        Lines for statsmodels' ``Summary.add_extra_txt``.
    """
    return [
        "Notes:",
        *(
            textwrap.fill(f"[{i}] {note}", width=78, subsequent_indent="    ")
            for i, note in enumerate(notes, start=1)
        ),
    ]


def params_frame(params: ParamTable, alpha: float) -> pd.DataFrame:
    """Return the coefficient table as a DataFrame (statsmodels' column names)."""
    stat = "t" if params.use_t else "z"
    columns: dict[str, NDArray[np.float64]] = {"Coef.": params.params}
    columns.update(dict(params.extra))
    columns.update(
        {
            "Std.Err.": params.bse,
            stat: params.stat,
            f"P>|{stat}|": params.pvalues,
            f"[{alpha / 2:g}": params.conf_int[:, 0],
            f"{1 - alpha / 2:g}]": params.conf_int[:, 1],
        }
    )
    return pd.DataFrame(columns, index=list(params.names))


def build_summary2(
    *,
    title: str,
    info: Sequence[tuple[str, Any]],
    params: ParamTable,
    composition: list[list[str]],
    notes: Sequence[str],
    alpha: float = 0.05,
    effects: pd.DataFrame | None = None,
) -> sm_summary2.Summary:
    """Assemble a statsmodels ``summary2.Summary`` whose tables are DataFrames.

    Parameters
    ----------
    title : str
        Title line.
    info : sequence of (label, value)
        Header rows.
    params : ParamTable
        Coefficient table.
    composition : list of list of str
        Rows of the cluster composition table (see :func:`composition_rows`).
    notes : sequence of str
        Notes printed at the end.
    alpha : float, default=0.05
        Level of the confidence intervals.
    effects : pandas.DataFrame, optional
        A table shown after the coefficients (the effects per SD).

    Returns
    -------
    statsmodels.iolib.summary2.Summary
        ``tables[0]``: header, ``tables[1]``: coefficients, then ``effects``
        and the cluster composition (when given and when there are clusters).
    """
    smry = sm_summary2.Summary()
    smry.add_dict({k: _fmt(v) for k, v in info})
    smry.add_df(params_frame(params, alpha), float_format="%.4f")
    if effects is not None:
        smry.add_df(effects, float_format="%.4f")
    if composition:
        frame = pd.DataFrame(
            [r[1:] for r in composition],
            index=[r[0] for r in composition],
            columns=["size", "top members (membership degree)"],
        )
        frame["size"] = frame["size"].astype(int)
        smry.add_df(frame, float_format="%d")
    smry.add_title(title)
    for i, note in enumerate(notes, start=1):
        smry.add_text(f"[{i}] {note}")
    return smry


def _results(inference: Any) -> list[Evidence]:
    """``inference`` as a list of results (one result, a list, or None)."""
    if inference is None:
        return []
    results = list(inference) if isinstance(inference, list | tuple) else [inference]
    for r in results:
        missing = [
            m
            for m in ("check_matches", "module_evidence", "gene_evidence", "guarantee")
            if not hasattr(r, m)
        ]
        if missing:
            raise TypeError(
                f"The 'inference' parameter of summary must be a resampling result "
                f"(e.g. from vcpcr.inference.multi_split) or a list of them; got "
                f"{type(r).__name__}, which lacks {missing}."
            )
    kinds = [type(r).__name__ for r in results]
    if twice := sorted({k for k in kinds if kinds.count(k) > 1}):
        raise ValueError(
            f"summary shows one result of each kind beside the coefficients "
            f"(e.g. one multi_split and one stability_selection); got "
            f"{kinds.count(twice[0])} {twice[0]}s. Pass one, and read the others "
            f"with their own summary()."
        )
    return results


@runtime_checkable
class FittedModel(Protocol):
    """The fitted state the summary reads: what a fitted ``VCPCR`` has.

    The summary functions take the model through this contract (the
    attributes they read), so that mypy checks their use of it. ``VCPCR``
    derives from scikit-learn's untyped ``BaseEstimator``, which mypy lets
    match any protocol, so a test checks a fitted model of each family
    against it (``isinstance``).
    """

    #: The outcome family (its table, header rows and notes).
    _family: Family
    #: The ``weights`` parameter.
    weights: str | ArrayLike
    #: The ``init`` parameter.
    init: str | ArrayLike
    #: The ``n_init`` parameter.
    n_init: int
    #: The ``n_clusters`` parameter.
    n_clusters: int
    #: The ``lam_ratio`` parameter.
    lam_ratio: float
    #: The ``latent`` parameter.
    latent: str
    #: The step-2 fit (statsmodels results or lifelines fitter).
    result_: Any
    #: Membership degrees (features x clusters).
    membership_: pd.DataFrame
    #: Step 2's loadings (features x clusters).
    loadings_: pd.DataFrame
    #: The members of each cluster, strongest first.
    clusters_: dict[str, list[str]]
    #: Cluster of each clustered feature (-1: not selected).
    labels_: NDArray[np.intp]
    #: Name of the response.
    yname_: str
    #: The step-0 penalty used (None: no penalty).
    delta_: float | None
    #: Number of training rows.
    n_samples_fit_: int
    #: Number of clusters found.
    n_clusters_: int
    #: The SOS-NMF penalty used.
    lam_: float
    #: Index of the kept start.
    best_init_: int
    #: Iterations of the kept start.
    n_iter_: int
    #: Whether the kept start converged.
    converged_: bool
    #: Names of the unpenalized covariates.
    covariate_names_: list[str]
    #: Names of the Cox strata columns.
    strata_names_: list[str]
    #: SD of each cluster score on the training data.
    module_sd_: pd.Series
    #: SD of the features' part of the linear predictor on the training data.
    prognostic_index_sd_: float

    def _check_unchanged(self, what: str) -> None:
        """Raise if ``set_params`` changed a parameter since the fit."""


class SummaryMixin:
    """Adds ``summary()`` and ``summary2()`` to a :class:`FittedModel`."""

    def summary(
        self: FittedModel,
        alpha: float = 0.05,
        inference: Evidence | Sequence[Evidence] | None = None,
    ) -> VCPCRSummary:
        """Summary of the fit: header, cluster coefficients, composition, notes.

        The coefficient table's p-values are conditional on the clusters that
        the same data chose: they ignore the selection (under a global null,
        most fall below 0.05). Honest evidence comes from resampling:
        ``summary(inference=vcpcr.inference.multi_split(...))``.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level of the confidence intervals.
        inference : result or list of results, optional
            Resampling results for this estimator's parameters and data (e.g.
            :class:`vcpcr.inference.MultiSplitResult`). Each cluster's
            evidence is shown beside its coefficient, with a table of the
            features with the most evidence, and the guarantee in the notes.

        Returns
        -------
        VCPCRSummary
            A statsmodels ``Summary``: print it, or call ``as_text()``,
            ``as_html()`` or ``as_latex()``.

        Raises
        ------
        ValueError
            If a result was computed from other estimator parameters or other
            data.
        """
        return model_summary(self, alpha, inference=inference)

    def summary2(self: FittedModel, alpha: float = 0.05) -> sm_summary2.Summary:
        """Return the summary as DataFrames, as statsmodels' ``summary2()``.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level of the confidence intervals.

        Returns
        -------
        statsmodels.iolib.summary2.Summary
            ``tables[0]``: header, ``tables[1]``: coefficients (``Coef.``,
            ``Std.Err.``, ``t`` or ``z``, p-value, confidence bounds),
            ``tables[2]``: cluster effects per SD of the cluster score, as in
            :meth:`summary` (``SD``, the effect per SD, its interval; the
            prognostic index last), ``tables[3]``: cluster composition
            (``tables[2:]`` only with clusters); printable as well.
        """
        return model_summary2(self, alpha)


def model_summary(
    model: FittedModel,
    alpha: float,
    *,
    extra_notes: Sequence[str] = (),
    inference: Evidence | Sequence[Evidence] | None = None,
    owner: Any = None,
) -> VCPCRSummary:
    """Return ``model.summary(alpha, inference)``; ``extra_notes`` follow its notes.

    ``owner`` is the estimator the results are checked against (a
    ``VCPCRCV`` for its ``best_estimator_``'s summary); default ``model``.
    """
    _check_fitted(model, alpha)
    results = _results(inference)
    target = model if owner is None else owner
    for result in results:
        result.check_matches(target)
    guarantees = [r.guarantee for r in results]
    params, notes = _table_and_notes(model, alpha, [*extra_notes, *guarantees])
    effects, effect_notes = _effects_per_sd(model, params, alpha)
    notes = [*notes, *effect_notes]
    title = "Module effects per standard deviation of the module score"
    evidence = {}
    if results:
        evidence = {
            "cluster_evidence": _cluster_evidence(model, params, results, target),
            "gene_evidence": _gene_evidence(model, results, target),
        }
    return build_summary(
        title=_TITLE,
        yname=model.yname_,
        left=_summary_left(model),
        right=_summary_right(model),
        params=params,
        composition=composition_rows(_members(model)),
        notes=notes,
        alpha=alpha,
        effects=None if effects is None else evidence_table(effects, title),
        **evidence,
    )


def model_summary2(
    model: FittedModel, alpha: float, *, extra_notes: Sequence[str] = ()
) -> sm_summary2.Summary:
    """Return ``model.summary2(alpha)``; ``extra_notes`` follow its notes."""
    _check_fitted(model, alpha)
    params, notes = _table_and_notes(model, alpha, extra_notes)
    effects, effect_notes = _effects_per_sd(model, params, alpha)
    return build_summary2(
        title=_TITLE,
        info=[*_summary_left(model), *_summary_right(model)],
        params=params,
        composition=composition_rows(_members(model)),
        notes=[*notes, *effect_notes],
        alpha=alpha,
        effects=effects,
    )


def _check_fitted(model: FittedModel, alpha: float) -> None:
    """Raise unless ``model`` is fitted as it is set and ``alpha`` is in (0, 1)."""
    check_is_fitted(model)
    model._check_unchanged("summary")
    check_fraction(alpha, "alpha", owner=f"{type(model).__name__}.summary")


def _table_and_notes(
    model: FittedModel, alpha: float, extra_notes: Sequence[str]
) -> tuple[ParamTable, list[str]]:
    """Return the coefficient table and the notes (``extra_notes`` last)."""
    family, res = model._family, model.result_
    notes = [
        POST_SELECTION_NOTE,
        "Regressors are the cluster latent variables M = X V with X "
        "standardized (mean 0, sd 1); coef_ gives per-variable effects."
        if model.latent == "paper"
        else "Regressors are the cluster latent variables M = X diag(sign w) V "
        "with X standardized (mean 0, sd 1): each gene enters with the sign of "
        "its weight (a negative membership degree in the cluster composition); "
        "coef_ gives per-variable effects.",
        *_covariate_notes(model),
        *_shrinkage_notes(model),
        *_separation_notes(model),
        *family.notes(res),
        *extra_notes,
    ]
    return family.table(res, alpha), notes


def _effects_per_sd(
    model: FittedModel, params: ParamTable, alpha: float
) -> tuple[pd.DataFrame | None, list[str]]:
    """Each cluster's effect per SD of its score, and the prognostic index's.

    The table (None without clusters; ``summary()`` shows it as a titled
    text table, ``summary2()`` as the DataFrame) and its note. The step-2 fit is not
    refitted: ``coef * sd`` and its interval ``conf_int * sd``, through the
    family's ``per_sd`` (exponentiated for hazard and odds ratios). Every
    row is on the scale the predictions use: the coefficients and their
    interval times ``shrinkage``, as ``cluster_coef_``, the prognostic index
    and :meth:`VCPCR.signature`.
    """
    clusters = list(model.membership_.columns)
    if not clusters:
        return None, []
    family = model._family
    position = {name: i for i, name in enumerate(params.names)}
    rows = np.array([position[c] for c in clusters])
    shrinkage = float(getattr(model, "shrinkage", 1.0))
    sd = model.module_sd_.reindex(clusters).to_numpy(dtype=np.float64)
    scale = shrinkage * sd  # the coefficients as the predictions use them
    header, word, effect = family.per_sd(params.params[rows] * scale)
    lower = family.per_sd(params.conf_int[rows, 0] * scale)[2]
    upper = family.per_sd(params.conf_int[rows, 1] * scale)[2]
    index_sd = float(model.prognostic_index_sd_)
    index_effect = float(family.per_sd(np.array([index_sd]))[2][0])
    frame = pd.DataFrame(
        {
            "SD": [*sd, index_sd],
            header: [*effect, index_effect],
            f"[{alpha / 2:g}": [*lower, np.nan],
            f"{1 - alpha / 2:g}]": [*upper, np.nan],
        },
        index=[*clusters, "prognostic index"],
    )
    sds = ", ".join(f"{c} {v:.3g}" for c, v in zip(clusters, sd, strict=True))
    note = (
        f"Effects per standard deviation (SD) of each module score M_k on the "
        f"training data ({header}: the {word} for a 1-SD increase, adjusted as "
        f"the coefficients; SDs: {sds}). The prognostic index is the genes' "
        f"part of the linear predictor (M a, without covariates): SD "
        f"{index_sd:.3g}, {word} per SD {index_effect:.3g}. Covariates stay "
        f"per unit of each."
    )
    if shrinkage != 1:
        note += (
            f" As the predictions, the effects and their intervals use the "
            f"cluster coefficients times shrinkage={shrinkage:.3g} (the "
            f"table above shows them unshrunk)."
        )
    return frame, [note]


def _members(model: FittedModel) -> dict[str, list[tuple[str, float]]]:
    """Each cluster's members with their loadings, strongest first.

    A loading is the membership degree, with the sign of the member's weight
    when ``latent="signed"``.
    """
    return {
        c: [(m, float(model.loadings_.at[m, c])) for m in model.clusters_[c]]
        for c in model.membership_.columns
    }


def _separation_notes(model: FittedModel) -> list[str]:
    """Say that a Cox fit's estimates do not exist (monotone likelihood)."""
    if not getattr(model, "separated_", False):  # cox only
        return []
    return [
        "The partial likelihood is monotone (separated_): the regressors "
        "separate the events, the maximum-likelihood coefficients are "
        "infinite, and the coefficients, standard errors, p-values and "
        "intervals shown are those of a diverging fit, not estimates."
    ]


def _shrinkage_notes(model: FittedModel) -> list[str]:
    shrinkage = getattr(model, "shrinkage", 1.0)
    if shrinkage == 1 or model.membership_.shape[1] == 0:  # no cluster to shrink
        return []
    return [
        f"Predictions, coef_ and cluster_coef_ multiply the cluster "
        f"coefficients by shrinkage={shrinkage:.3g} (a calibration slope); the "
        f"table shows the unshrunk fit, with its standard errors."
    ]


def _covariate_notes(model: FittedModel) -> list[str]:
    names, strata = model.covariate_names_, model.strata_names_
    notes = []
    if names:
        notes.append(
            f"Covariates ({', '.join(names)}) enter on their raw scale (per "
            f"unit of each), unpenalized in the weights and never clustered; "
            f"the cluster coefficients are adjusted for them."
        )
    if strata:
        notes.append(
            f"Stratified by {', '.join(strata)}: a baseline hazard per "
            f"stratum in the outcome model. The step-0 weights are "
            f"unstratified (scikit-survival's Coxnet has no strata)."
        )
    return notes


def _cluster_evidence(
    model: FittedModel, params: ParamTable, results: list[Evidence], target: Any
) -> SimpleTable:
    """Coefficient and conditional p-value of each cluster, beside the evidence."""
    clusters = list(model.membership_.columns)
    pairs = zip(params.params, params.pvalues, strict=True)
    by_name = dict(zip(params.names, pairs, strict=True))
    frame = pd.DataFrame(
        [by_name[c] for c in clusters], index=clusters, columns=["coef", "cond. P"]
    )
    for result in results:
        frame = frame.join(result.module_evidence(target).reindex(clusters))
    return evidence_table(frame, "Evidence after selection (resampling)")


def _gene_evidence(
    model: FittedModel, results: list[Evidence], target: Any, top: int = 10
) -> SimpleTable:
    """Return the features with the most evidence in each result, and clusters."""
    frames = [r.gene_evidence(target) for r in results]
    shown = list(dict.fromkeys(g for f in frames for g in f.index[:top]))
    names = np.asarray(model.membership_.index)
    label = {
        str(n): (str(model.membership_.columns[k]) if k >= 0 else "-")
        for n, k in zip(names, model.labels_, strict=True)
    }
    frame = pd.DataFrame({"cluster": [label[str(g)] for g in shown]}, index=shown)
    for f in frames:
        frame = frame.join(f)
    return evidence_table(frame, "Genes with the most evidence (resampling)")


def _weights_description(model: FittedModel) -> str:
    if not isinstance(model.weights, str):
        return "user-supplied"
    if model.delta_ is None:
        return str(model.weights)
    return f"{model.weights} (delta={model.delta_:.3g})"


def _summary_left(model: FittedModel) -> list[tuple[str, Any]]:
    return [
        ("Dep. Variable:", model.yname_),
        ("Model:", "VC-PCR"),
        ("Family:", model._family.describe(model.result_)),
        ("Weights:", _weights_description(model)),
        ("No. Observations:", int(model.n_samples_fit_)),
        ("No. Variables:", int(model.membership_.shape[0])),
        ("Selected:", int((model.labels_ >= 0).sum())),
        *(
            [("Covariates:", str(len(model.covariate_names_)))]
            if model.covariate_names_
            else []
        ),
        *([("Strata:", ", ".join(model.strata_names_))] if model.strata_names_ else []),
    ]


def _concordance(model: FittedModel) -> ConcordanceInterval | None:
    """Harrell's C of the training predictions with its bootstrap interval.

    For the families that print a C (cox), when the model kept its training
    predictions (``train_linear_predictor_``) and they are not all equal (a
    model without clusters or covariates ranks nobody). A stratified model's
    C is over the pairs within its strata (``train_strata_``), as
    lifelines' ``concordance_index_`` of a stratified fit.
    """
    outcome = model._family.fit_outcome(model.result_)
    eta = getattr(model, "train_linear_predictor_", None)
    if outcome is None or eta is None or np.ptp(eta) == 0:
        return None
    strata = getattr(model, "train_strata_", None) if model.strata_names_ else None
    if model.strata_names_ and strata is None:  # fitted before train_strata_
        return None
    return concordance_interval(outcome, eta, strata=strata)


def _summary_right(model: FittedModel) -> list[tuple[str, Any]]:
    state = "converged" if model.converged_ else "not converged"
    starts = model.n_init if isinstance(model.init, str) else 1
    return [
        ("Clusters:", f"{model.n_clusters_} (of {model.n_clusters})"),
        ("Lambda ratio:", float(model.lam_ratio)),
        ("Lambda:", float(model.lam_)),
        ("Starts:", f"{starts} (best: {model.best_init_ + 1})"),
        ("Iterations:", f"{model.n_iter_} ({state})"),
        *model._family.statistics(model.result_, _concordance(model)),
    ]
