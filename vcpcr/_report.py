"""The reviewer's report of a signature, mapped to TRIPOD+AI items.

:func:`report` runs vcpcr's public functions on a signature (the fit on all
rows, :func:`~vcpcr.validation.validate_increment`,
:func:`~vcpcr.calibration.cross_val_predict_survival` with
:func:`~vcpcr.calibration.survival_calibration` and
:func:`~vcpcr.validation.decision_curve`,
:func:`~vcpcr.validation.sample_size`, :func:`~vcpcr.inference.multi_split`,
:func:`~vcpcr.inference.stability_selection`,
:func:`~vcpcr.external.validate_external`) and lays out what they return as
a :class:`Report`: one self-contained HTML file (figures embedded as PNG) or
Markdown. The report formats; every number in it is one of those results.
"""

from __future__ import annotations

import base64
import html
import io
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from vcpcr._checks import check_scalar, check_survival
from vcpcr._families import family_name
from vcpcr._formula import formula_outcome, outcome_columns
from vcpcr._increment import (
    _CONCORDANCES,
    CLINICAL,
    ClinicalCox,
    ClinicalGLM,
    _FormulaDesign,
    validate_increment,
)
from vcpcr._parallel import progress_shown, task_seeds
from vcpcr._result import Result
from vcpcr.exceptions import VCPCRWarning

__all__ = ["TRIPOD_ITEMS", "Report", "Section", "report"]

_OWNER = "report"

#: The TRIPOD+AI checklist (Collins et al., BMJ 2024;385:e078378): item -> topic.
#: 27 items, 52 sub-items. Checked (2026-12-03) against a transcription of the
#: checklist that states it was compared item by item with the official
#: expanded checklist (tripod-statement.org, TRIPODAI-Supplement.pdf, CC BY
#: 4.0): github.com/Aperivue/medsci-skills,
#: skills/check-reporting/references/checklists/TRIPOD_AI.md; items 1-6c also
#: agree with skills.sh/htlin222/dotfiles/tripod-check. The BMJ article's own
#: table was not reachable from here, so this is a secondary source. It
#: corrected 8b (was "blinding"; it is the outcome assessors' qualifications),
#: 8c (was "consistency"; it is blinding: consistency across groups is part
#: of 8a) and 9c (was "blinding"; it is the predictor assessors'
#: qualifications: predictor blinding is part of 9b); the other numbers and
#: topics matched.
TRIPOD_ITEMS: dict[str, str] = {
    "1": "Title",
    "2": "Abstract",
    "3a": "Background: healthcare context and rationale",
    "3b": "Background: target population and intended use",
    "3c": "Background: known health inequalities",
    "4": "Objectives",
    "5a": "Data: sources",
    "5b": "Data: dates",
    "6a": "Participants: setting",
    "6b": "Participants: eligibility",
    "6c": "Participants: treatments",
    "7": "Data preparation",
    "8a": "Outcome: definition, time horizon, assessment, consistency",
    "8b": "Outcome: qualifications of the assessors (subjective assessment)",
    "8c": "Outcome: blinding of its assessment",
    "9a": "Predictors: choice",
    "9b": "Predictors: definition, measurement (and blinding)",
    "9c": "Predictors: qualifications of the assessors (subjective measurement)",
    "10": "Sample size",
    "11": "Missing data",
    "12a": "Analysis: how the data were used",
    "12b": "Analysis: handling of predictors",
    "12c": "Analysis: model type, building, tuning, internal validation",
    "12d": "Analysis: heterogeneity across clusters",
    "12e": "Analysis: performance measures (incl. model comparison, utility)",
    "12f": "Analysis: model updating",
    "12g": "Analysis: how predictions were calculated (evaluation)",
    "13": "Class imbalance",
    "14": "Fairness",
    "15": "Model output",
    "16": "Training versus evaluation data",
    "17": "Ethical approval",
    "18a": "Open science: funding",
    "18b": "Open science: conflicts of interest",
    "18c": "Open science: protocol",
    "18d": "Open science: registration",
    "18e": "Open science: data sharing",
    "18f": "Open science: code sharing",
    "19": "Patient and public involvement",
    "20a": "Results: participant flow and follow-up",
    "20b": "Results: participant characteristics",
    "20c": "Results: development versus evaluation data",
    "21": "Results: participants and events in each analysis",
    "22": "Results: full model specification",
    "23a": "Results: performance with confidence intervals",
    "23b": "Results: heterogeneity of performance",
    "24": "Results: model updating",
    "25": "Discussion: interpretation",
    "26": "Discussion: limitations",
    "27a": "Discussion: usability with poor-quality or missing data",
    "27b": "Discussion: user interaction and expertise",
    "27c": "Discussion: implications and future research",
}


@dataclass(frozen=True, eq=False, repr=False)
class Section(Result):
    """One section of a :class:`Report`.

    Attributes
    ----------
    title : str
        The heading.
    items : tuple of str
        The TRIPOD+AI items it answers (keys of ``TRIPOD_ITEMS``).
    text : list of str
        Paragraphs (plain text).
    tables : list of (str, pandas.DataFrame)
        Captioned tables.
    blocks : list of (str, str)
        Captioned preformatted text (a result's ``summary()``).
    figures : list of (str, bytes)
        Captioned PNG images.
    """

    title: str
    items: tuple[str, ...]
    text: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    blocks: list[tuple[str, str]] = field(default_factory=list)
    figures: list[tuple[str, bytes]] = field(default_factory=list)


@dataclass(frozen=True, eq=False, repr=False)
class Report(Result):
    """A signature's report: sections mapped to TRIPOD+AI items.

    Made by :func:`report`. ``to_html`` writes one self-contained file
    (figures embedded, no network), ``to_markdown`` gives the same text and
    tables; in a notebook the report displays itself.

    Attributes
    ----------
    title : str
        The report's title.
    sections : list of Section
        The sections, in order.
    results : dict of str to object
        The public functions' results the sections format (``"model"``,
        ``"increment"``, ``"out_of_fold_survival"``,
        ``"clinical_out_of_fold_survival"``, ``"calibration"``,
        ``"decision_curve"``,
        ``"sample_size"``, ``"multi_split"``, ``"stability"``,
        ``"external"``, ``"validation_sample_size"``, ``"scoring_rule"``;
        those that ran).
    skipped : list of str
        The sections not run, and why.
    """

    title: str
    sections: list[Section]
    results: dict[str, Any]
    skipped: list[str] = field(default_factory=list)

    def covered(self) -> list[str]:
        """Return the TRIPOD+AI items the sections answer, in checklist order.

        Returns
        -------
        list of str
            Keys of ``TRIPOD_ITEMS``.
        """
        items = {i for s in self.sections for i in s.items}
        return [k for k in TRIPOD_ITEMS if k in items]

    def checklist(self) -> pd.DataFrame:
        """Return the TRIPOD+AI checklist: per item, the sections answering it.

        Returns
        -------
        pandas.DataFrame
            Index: item; columns ``topic`` and ``where`` (the sections, or
            ``"to write by the authors"``).
        """
        where = {
            k: ", ".join(s.title for s in self.sections if k in s.items)
            for k in TRIPOD_ITEMS
        }
        return pd.DataFrame(
            {
                "topic": list(TRIPOD_ITEMS.values()),
                "where": [where[k] or "to write by the authors" for k in TRIPOD_ITEMS],
            },
            index=pd.Index(list(TRIPOD_ITEMS), name="item"),
        )

    # ---------------------------------------------------------------- Markdown
    def to_markdown(self) -> str:
        """Return the report as Markdown (figures named by their caption).

        Returns
        -------
        str
            The text, the tables as pipe tables, the summaries as code
            blocks and the checklist.
        """
        lines = [f"# {self.title}", ""]
        lines += [
            "Every number below is one a public vcpcr function returned; "
            "`Report.results` holds those results.",
            "",
        ]
        for k, s in enumerate(self.sections, start=1):
            lines += [
                f"## {k}. {s.title}",
                "",
                f"*TRIPOD+AI: {', '.join(s.items)}*",
                "",
            ]
            for p in s.text:
                lines += [p, ""]
            for caption, frame in s.tables:
                lines += [f"**{caption}**", "", _markdown_table(frame), ""]
            for caption, text in s.blocks:
                lines += [f"**{caption}**", "", "```text", text.rstrip(), "```", ""]
            for caption, _ in s.figures:
                lines += [f"*Figure: {caption} (embedded in the HTML report).*", ""]
        if self.skipped:
            lines += ["## Not run", ""] + [f"- {s}" for s in self.skipped] + [""]
        lines += ["## TRIPOD+AI checklist", "", _markdown_table(self.checklist()), ""]
        return "\n".join(lines)

    # ---------------------------------------------------------------- HTML
    def _html(self) -> str:
        """Return the report as one HTML document."""
        body = [f"<h1>{_esc(self.title)}</h1>"]
        body.append(
            "<p class='note'>Every number below is one a public vcpcr function "
            "returned; <code>Report.results</code> holds those results.</p>"
        )
        for k, s in enumerate(self.sections, start=1):
            body.append(
                f"<section><h2>{k}. {_esc(s.title)} <span class='items'>"
                f"TRIPOD+AI {_esc(', '.join(s.items))}</span></h2>"
            )
            body += [f"<p>{_esc(p)}</p>" for p in s.text]
            for caption, frame in s.tables:
                table = frame.to_html(
                    float_format=lambda v: f"{v:.4g}", na_rep="", border=0
                )
                body.append(f"<figure><figcaption>{_esc(caption)}</figcaption>{table}")
                body.append("</figure>")
            for caption, text in s.blocks:
                body.append(
                    f"<details><summary>{_esc(caption)}</summary>"
                    f"<pre>{_esc(text)}</pre></details>"
                )
            for caption, png in s.figures:
                data = base64.b64encode(png).decode("ascii")
                body.append(
                    f"<figure><img alt='{_esc(caption)}' "
                    f"src='data:image/png;base64,{data}'>"
                    f"<figcaption>{_esc(caption)}</figcaption></figure>"
                )
            body.append("</section>")
        if self.skipped:
            items = "".join(f"<li>{_esc(s)}</li>" for s in self.skipped)
            body.append(f"<section><h2>Not run</h2><ul>{items}</ul></section>")
        checklist = self.checklist().to_html(border=0, classes="checklist")
        body.append(f"<section><h2>TRIPOD+AI checklist</h2>{checklist}</section>")
        return (
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{_esc(self.title)}</title><style>{_CSS}</style></head>"
            f"<body>{''.join(body)}</body></html>"
        )

    def _repr_html_(self) -> str:
        """Return the HTML shown in a Jupyter notebook."""
        return self._html()

    def to_html(self, path: str | Path | None = None, *, force: bool = False) -> str:
        """Return the report as one self-contained HTML page; write it to ``path``.

        Parameters
        ----------
        path : str or pathlib.Path, optional
            File to write (nothing is written without it).
        force : bool, default=False
            Overwrite an existing file.

        Returns
        -------
        str
            The HTML (figures embedded as base64 PNG; no script, no link to
            the network).

        Raises
        ------
        FileExistsError
            If ``path`` exists and ``force`` is False.
        """
        text = self._html()
        if path is not None:
            target = Path(path)
            if target.exists() and not force:
                raise FileExistsError(
                    f"{target} already exists; pass force=True to overwrite it, "
                    f"or choose another path."
                )
            target.write_text(text, encoding="utf-8")
        return text


_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;"
    "padding:0 1em;color:#222}h2{border-bottom:1px solid #ccc;margin-top:2em}"
    ".items{font-size:60%;font-weight:normal;background:#eef;padding:.1em .4em;"
    "border-radius:.3em}table{border-collapse:collapse;font-size:90%}"
    "td,th{padding:.15em .6em;text-align:right;border-bottom:1px solid #eee}"
    "img{max-width:100%}figcaption{font-style:italic;margin:.3em 0}"
    "pre{font-size:80%;overflow-x:auto;background:#f8f8f8;padding:.5em}"
    ".note{color:#555}.checklist td,.checklist th{text-align:left}"
)


def _esc(text: str) -> str:
    return html.escape(str(text), quote=True)


def _cell(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return "" if np.isnan(value) else f"{value:.4g}"
    return str(value).replace("|", "\\|")


def _value(value: Any) -> str:
    """Return a grid value as text (numpy scalars as plain numbers)."""
    if isinstance(value, np.generic):
        value = value.item()
    return f"{value:.4g}" if isinstance(value, float) else repr(value)


def _markdown_table(frame: pd.DataFrame) -> str:
    """Return ``frame`` (its index as the first column) as a pipe table."""
    flat = frame.reset_index()
    flat.columns = [
        " ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in flat.columns
    ]
    head = "| " + " | ".join(flat.columns) + " |"
    rule = "|" + "---|" * len(flat.columns)
    rows = [
        "| " + " | ".join(_cell(v) for v in row) + " |"
        for row in flat.itertuples(index=False)
    ]
    return "\n".join([head, rule, *rows])


def _png(draw: Callable[[], Any]) -> bytes:
    """Run ``draw`` (a vcpcr plot) and return its figure as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn = draw()
    first = np.ravel(np.asarray(drawn, dtype=object))[0]
    fig = first.figure if hasattr(first, "figure") else first
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


# -------------------------------------------------------------------- sections
def _data_section(
    X: pd.DataFrame, time: Any, event: Any, clinical: list[Any]
) -> Section:
    from vcpcr.calibration import kaplan_meier

    n, events = len(time), int(np.sum(event))
    missing = X.isna().sum()
    missing = missing[missing > 0]
    text = [
        f"{n} participants, {events} events; {X.shape[1] - len(clinical)} "
        f"candidate features and {len(clinical)} clinical column(s).",
        f"Follow-up: {np.min(time):.4g} to {np.max(time):.4g} "
        f"(median observed time {np.median(time):.4g}).",
        "Missing values: none."
        if missing.empty
        else f"Missing values in {missing.size} column(s) "
        f"({int(missing.sum())} cells); the estimator's missing= rule applies.",
    ]
    section = Section("Data", ("11", "20a", "20b", "21"), text)
    if clinical:
        section.tables.append(
            ("Clinical columns", X[clinical].describe(include="all").T)
        )
    quartiles = np.quantile(time, [0.25, 0.5, 0.75])
    km = pd.DataFrame(
        [kaplan_meier(time, event, float(h)) for h in quartiles],
        index=pd.Index([f"{h:.4g}" for h in quartiles], name="time"),
        columns=["KM survival", "lower", "upper"],
    )
    section.tables.append(
        ("Kaplan-Meier survival at the quartiles of the observed times", km)
    )
    if not missing.empty:
        section.tables.append(("Missing values per column", missing.to_frame("n")))
    return section


def _tuning_section(model: Any) -> Section:
    params = {k: v for k, v in model.get_params(deep=False).items() if v is not None}
    frame = pd.DataFrame(
        {"value": [repr(v) for v in params.values()]},
        index=pd.Index(list(params), name="parameter"),
    )
    text = [
        f"Estimator: {type(model).__name__}(family="
        f"{family_name(model.family)!r}); its parameters as set "
        f"below (get_params)."
    ]
    section = Section("Model and tuning", ("12b", "12c"), text, [("Parameters", frame)])
    results = getattr(model, "cv_results_", None)
    if results is not None:
        best = pd.DataFrame(
            {"value": [repr(v) for v in model.best_params_.values()]},
            index=pd.Index(list(model.best_params_), name="parameter"),
        )
        section.text.append(
            f"Tuned by {type(model).__name__}: {len(results)} grid points, "
            f"criterion scoring={params.get('scoring')!r}, rule "
            f"selection={params.get('selection')!r} (the parameters above); "
            f"the chosen point and the grid follow (best_params_, cv_results_)."
        )
        section.tables.append(("Chosen hyperparameters", best))
        values = {
            c: [_value(v) for v in np.unique(results[c])]
            for c in model.best_params_
            if c in results.columns
        }
        section.tables.append(
            (
                "Grid (values tried)",
                pd.DataFrame(
                    {"values": [", ".join(v) for v in values.values()]},
                    index=pd.Index(list(values), name="parameter"),
                ),
            )
        )
    return section


_EFFECT = {
    "cox": "Hazard ratios",
    "binomial": "Odds ratios",
    "gaussian": "Coefficients",
}


def _signature_section(model: Any) -> Section:
    fitted = getattr(model, "best_estimator_", model)
    effect = _EFFECT[str(family_name(fitted.family))]
    section = Section("The signature", ("22",))
    n_genes = int(np.count_nonzero(np.asarray(fitted.labels_) != -1))
    section.text.append(
        f"{fitted.n_clusters_} module(s) with {n_genes} gene(s), fitted on all "
        f"rows. {effect} per standard deviation of each module score "
        f"(summary2); the p-values of the summary are conditional on the "
        f"selection (see the multi-split section for honest ones)."
    )
    tables = fitted.summary2().tables
    if len(tables) > 2:
        section.tables.append(("Module effects per SD (with intervals)", tables[2]))
    section.tables.append(
        ("Member genes (signature())", fitted.signature().set_index("gene"))
    )
    section.blocks.append(("Model summary", str(model.summary())))
    return section


def _increment_section(result: Any) -> Section:
    section = Section(
        "Discrimination and the increment over the clinical model",
        ("12a", "12c", "12e", "23a"),
        [
            f"Repeated {result.n_splits}-fold CV x {result.n_repeats} "
            f"(validate_increment): the {result.clinical} model and the signature "
            f"refitted in every training fold, scored on its test fold; "
            f"increments paired by fold, {1 - result.alpha:.0%} intervals "
            f"({result.interval!r}).",
            *result.notes,
        ],
    )
    means = result.metrics.reset_index().pivot_table(
        index="metric", columns="model", values="mean", sort=False
    )
    section.tables.append(("Mean over the test folds", means))
    section.tables.append(("Increments over the clinical model", result.increments))
    concordance = result.metrics.loc[
        result.metrics.index.get_level_values("metric").isin(_CONCORDANCES),
        ["mean", "ci_low", "ci_high"],
    ]
    if len(concordance):  # a gaussian outcome has no C
        section.tables.append(
            (
                f"Mean C over the test folds ({1 - result.alpha:.0%} interval, "
                f"{result.interval})",
                concordance,
            )
        )
    section.figures.append(("Per-fold increments", _png(result.plot)))
    return section


def _calibration_frame(result: Any) -> pd.DataFrame:
    """Return the calibration numbers that a ``CalibrationResult`` has."""
    rows = {"calibration slope": (result.slope, *result.slope_ci)}
    if result.intercept is not None:
        rows["calibration intercept"] = (result.intercept, *result.intercept_ci)
    if result.observed_expected is not None:
        rows["observed / expected"] = (
            result.observed_expected,
            *(result.observed_expected_ci or (np.nan, np.nan)),
        )
    for name in ("ici", "e50", "e90"):
        value = getattr(result, name)
        if value is not None:
            rows[name.upper()] = (value, np.nan, np.nan)
    return pd.DataFrame.from_dict(
        rows, orient="index", columns=["estimate", "lower", "upper"]
    ).astype(float)


def _calibration_section(result: Any, horizon: float | None) -> Section:
    frame = _calibration_frame(result)
    if horizon is None:
        title = "Calibration"
        how = (
            "Out-of-fold predictions (cross_val_calibration: each row "
            "predicted by the model fitted without its fold) against the "
            "outcome ("
            + (
                "binary_calibration)."
                if result.family == "binomial"
                else "regression_calibration)."
            )
        )
    else:
        title = f"Calibration at t = {horizon:.4g}"
        how = (
            "Out-of-fold predicted survival (cross_val_predict_survival: each "
            "row predicted by the model fitted without its fold) against "
            "Kaplan-Meier (survival_calibration)."
        )
    section = Section(
        title,
        ("12e", "23a"),
        [how, *result.notes],
        [("Calibration", frame), ("Groups", result.groups)],
    )
    section.figures.append(("Calibration plot", _png(result.plot)))
    return section


def _decision_section(frame: pd.DataFrame, horizon: float | None) -> Section:
    from vcpcr.plotting import plot_decision_curve

    shown = frame[np.isin(np.round(frame["threshold"], 2), [0.1, 0.2, 0.3, 0.4, 0.5])]
    how = (
        "Net benefit of treating the rows whose out-of-fold predicted "
        "probability is at least the threshold (decision_curve, Vickers & "
        "Elkin 2006), for the clinical logistic model and the signature (both "
        "cross_val_calibration's out-of-fold predictions, on the same "
        "folds), against treating all and none, with bootstrap intervals."
        if horizon is None
        else "Net benefit of treating the rows whose out-of-fold predicted "
        "risk by the horizon is at least the threshold (decision_curve, "
        "Kaplan-Meier among them, Vickers et al. 2008), for the clinical "
        "Cox model and the signature (both cross_val_predict_survival, on "
        "the same folds as the calibration), against treating all and "
        "none, with bootstrap intervals."
    )
    section = Section(
        "Clinical utility: decision curve"
        + ("" if horizon is None else f" at t = {horizon:.4g}"),
        ("12e", "23a"),
        [how],
        [
            (
                "Net benefit at selected thresholds",
                shown.set_index(["model", "threshold"]),
            )
        ],
    )
    section.figures.append(("Decision curve", _png(lambda: plot_decision_curve(frame))))
    return section


def _sample_size_section(result: Any, r2: float, note: str) -> Section:
    verdict = {True: "meets", False: "does not meet", None: "-"}[result.adequate]
    events = "" if result.events is None else f" ({result.events} events)"
    return Section(
        "Sample size",
        ("10",),
        [
            f"Riley et al.'s criteria (sample_size, {result.outcome} outcome) "
            f"for {result.parameters} parameters: at least "
            f"{result.n_required} participants{events}; the data "
            f"({result.n_available}) {verdict} it.",
            note.format(r2=r2),
            result.note,
        ],
        [("Criteria", result.criteria)],
    )


def _multi_split_section(result: Any, model: Any) -> Section:
    section = Section(
        "Multi-split evidence for the modules and genes",
        ("12c", "23a", "26"),
        [f"{result.guarantee} ({len(result.splits)} random halves; multi_split)."],
        [
            ("Module evidence", result.module_evidence(model)),
            ("Gene evidence (strongest 20)", result.gene_evidence(model).head(20)),
        ],
    )
    return section


def _stability_section(result: Any, model: Any) -> Section:
    section = Section(
        "Stability of the selection and of the modules",
        ("12c", "26"),
        [
            "Complementary-pairs stability selection (stability_selection): "
            "selection frequency over half-samples and how often the members "
            "of each module share a cluster."
        ],
        [
            ("Module stability", result.module_evidence(model)),
            (
                "Selection frequency (top 20)",
                result.gene_evidence(model).head(20),
            ),
        ],
    )
    section.blocks.append(("Stability summary", str(result.summary())))
    return section


def _external_section(result: Any) -> Section:
    section = Section(
        "External validation",
        ("12g", "16", "20c", "23a"),
        [
            f"The model fitted on all development rows, applied unchanged to "
            f"the external cohort (validate_external; n = "
            f"{result.calibration.n_samples})."
            + (
                f" Harrell's C: {result.concordance:.4f}."
                if result.concordance is not None
                else ""
            )
        ],
    )
    section.blocks.append(("External validation summary", str(result.summary())))
    section.figures.append(("External calibration", _png(result.plot)))
    return section


def _scoring_section(rule: Any) -> Section:
    section = Section("Scoring rule", ("15", "22"))
    if isinstance(rule, pd.DataFrame):
        section.tables.append(("Scoring rule (export_scoring_rule)", rule))
    else:
        strata = f", {len(rule.strata)} strata column(s)" if rule.strata else ""
        text = (
            f"ScoringRule {rule.family}: {len(rule.genes)} genes in "
            f"{len(rule.modules)} modules, {len(rule.covariates)} covariate "
            f"column(s){strata}"
        )
        section.blocks.append(("Scoring rule (export_scoring_rule)", text))
    return section


# -------------------------------------------------------------------- checks
def _check_estimator(estimator: Any) -> None:
    if not (hasattr(estimator, "fit") and hasattr(estimator, "get_params")):
        raise TypeError(
            f"The 'estimator' parameter of {_OWNER} must be an unfitted VCPCR or "
            f"VCPCRCV. Got {type(estimator).__name__} instead."
        )
    family = family_name(getattr(estimator, "family", None))
    if family not in ("cox", "binomial", "gaussian"):
        raise ValueError(
            f"The 'estimator' parameter of {_OWNER} must have family 'cox', "
            f"'binomial' or 'gaussian'. Got family={family!r} instead."
        )


def _check_external(external: Any) -> tuple[Any, Any] | None:
    if external is None:
        return None
    if not (isinstance(external, tuple | list) and len(external) == 2):
        raise ValueError(
            f"The 'external' parameter of {_OWNER} must be a pair (X2, y2) of the "
            f"external cohort's data and outcome. Got {type(external).__name__} "
            f"instead."
        )
    return external[0], external[1]


_R2_NOTE = (
    "The anticipated Cox-Snell R2 is {r2:.4g}: 1 - exp(-LR/n) from the "
    "likelihood-ratio statistic of the model fitted on all rows (lifelines' "
    "log_likelihood_ratio_test of its result_). It is apparent, so optimistic: "
    "pass r2= (e.g. from an existing model) to be conservative. Event rate and "
    "mean follow-up are those of the data."
)


def _check_args(
    estimator: Any,
    X: Any,
    external: Any,
    horizon: Any,
    n_splits: Any,
    n_pairs: Any,
    citl_width: Any,
) -> tuple[Any, Any] | None:
    """Check what :func:`report` checks itself; return the external pair."""
    _check_estimator(estimator)
    family = family_name(estimator.family)
    if citl_width is not None:
        if family != "gaussian":
            raise ValueError(
                f"The 'citl_width' parameter of {_OWNER} applies to "
                f"family='gaussian' only. Got citl_width={citl_width!r} with "
                f"family={family!r}; drop it."
            )
        check_scalar(
            citl_width,
            "citl_width",
            numbers.Real,
            owner=_OWNER,
            min_val=0.0,
            include_min=False,
        )
    if family != "cox" and horizon is not None:
        raise ValueError(
            f"The 'horizon' parameter of {_OWNER} applies to family='cox' only. "
            f"Got horizon={horizon!r} with family={family!r}; drop it."
        )
    for name, value in (("n_splits", n_splits), ("n_pairs", n_pairs)):
        check_scalar(value, name, numbers.Integral, owner=_OWNER, min_val=1)
    if horizon is not None:
        check_scalar(
            horizon,
            "horizon",
            numbers.Real,
            owner=_OWNER,
            min_val=0.0,
            include_min=False,
        )
    if not isinstance(X, pd.DataFrame):
        raise TypeError(
            f"The 'X' parameter of {_OWNER} must be a pandas DataFrame (the "
            f"clinical columns are named). Got {type(X).__name__} instead."
        )
    return _check_external(external)


def _outcome_and_frame(
    formula: str | None, X: Any, y: Any, name: str
) -> tuple[Any, Any]:
    """Return the outcome and the data the Data section describes.

    Without a formula: ``y`` and ``X``. With one: the formula's outcome read
    from ``X``, and ``X`` without the outcome's columns.
    """
    if formula is None:
        return y, X
    if y is not None:
        raise ValueError(
            f"The estimator's formula {formula!r} names the outcome, which it "
            f"reads from the data: pass no {name} to {_OWNER} (one DataFrame "
            f"holding every column, as to the estimator's fit)."
        )
    return formula_outcome(formula, X), X.drop(columns=outcome_columns(formula, X))


def _clinical_model(estimator: Any, template: Any, inc: Any) -> Any:
    """Return the calibration's clinical model: ``template`` on inc's columns.

    With a formula, on the design the estimator's formula builds on each
    training part (its clinical part), as ``validate_increment`` fits it.
    """
    params = estimator.get_params(deep=False)
    if params.get("formula") is None:
        return template.on_design(inc.covariates, inc.strata)
    return _FormulaDesign(
        template,
        params["formula"],
        covariates=params.get("covariates"),
        strata=params.get("strata"),
    )


def report(
    estimator: Any,
    X: Any,
    y: Any = None,
    *,
    covariates: str | int | list[Any] | None = None,
    strata: str | int | list[Any] | None = None,
    horizon: float | None = None,
    external: tuple[Any, Any] | None = None,
    cv: int = 5,
    n_repeats: int = 2,
    inference: bool = True,
    stability: bool = True,
    calibration: bool = True,
    r2: float | None = None,
    citl_width: float | None = None,
    n_splits: int = 50,
    n_pairs: int = 25,
    title: str = "Signature report",
    n_jobs: int | None = None,
    verbose: bool | int | None = None,
    random_state: Any = None,
) -> Report:
    r"""Build a reviewer's report of a signature (TRIPOD+AI items).

    Fits ``estimator`` on all rows and runs, on the same data: the repeated
    CV of :func:`~vcpcr.validation.validate_increment` (discrimination and
    the increment over the clinical Cox model), the out-of-fold survival of
    :func:`~vcpcr.calibration.cross_val_predict_survival` at ``horizon``
    with its :func:`~vcpcr.calibration.survival_calibration` and
    :func:`~vcpcr.validation.decision_curve`, Riley et al.'s
    :func:`~vcpcr.validation.sample_size`, :func:`~vcpcr.inference.multi_split`
    and :func:`~vcpcr.inference.stability_selection`, and with ``external``
    :func:`~vcpcr.external.validate_external`. The :class:`Report` formats
    their results (kept in ``Report.results``); it computes no number of its
    own.

    Parameters
    ----------
    estimator : VCPCR or VCPCRCV
        Unfitted, with ``family="cox"``, ``"binomial"`` or ``"gaussian"``
        (a ``VCPCRCV`` is re-tuned inside every training fold and resample,
        without its own progress bar). For binomial and gaussian models the
        sections are those of the family (see Notes).
    X : DataFrame of shape (n_samples, n_features)
        Genes and the clinical columns; for an estimator with a formula, the
        DataFrame its ``fit`` takes (the outcome's columns too).
    y : array-like of shape (n_samples, 2), structured array, or (n_samples,), optional
        ``(time, event)``; binomial: two labels; gaussian: numbers. None
        (omitted) for an estimator with a formula, whose outcome is read
        from ``X``.
    covariates, strata : str, int or list of them, optional
        The clinical model's columns (strata: cox only); default: the
        estimator's. None for an estimator with a formula: its clinical
        part (the covariates left of ``|`` and the strata) is the clinical
        model, as in :func:`~vcpcr.validation.validate_increment`.
    horizon : float, optional
        Cox only: time of the calibration and the decision curve; default:
        the middle horizon of ``validate_increment`` (the median event
        time).
    external : tuple (X2, y2), optional
        An external cohort: the fitted model is validated on it unchanged
        (with a formula: ``(X2, None)``, the outcome read from ``X2``).
    cv : int, default=5
        Folds of the CV (increments, out-of-fold predictions).
    n_repeats : int, default=2
        Repeats of the increments' CV.
    inference : bool, default=True
        Run :func:`~vcpcr.inference.multi_split` (``n_splits`` fits).
    stability : bool, default=True
        Run :func:`~vcpcr.inference.stability_selection` (``2 n_pairs`` fits).
    calibration : bool, default=True
        Run the out-of-fold predictions (``cv`` fits), the calibration and
        the decision curve.
    r2 : float, optional
        The anticipated Cox-Snell :math:`R^2` of the sample-size check;
        default: the apparent one of the model fitted on all rows (see
        Notes).
    citl_width : float, optional
        Gaussian with ``external``: the target width of the 95 % CI of
        calibration-in-the-large in the external validation's sample size,
        on the outcome's scale; default: a tenth of the external outcome's
        standard deviation (an interval of +/- 0.05 SD).
    n_splits : int, default=50
        Splits of the multi-split.
    n_pairs : int, default=25
        Complementary pairs of the stability selection.
    title : str, default="Signature report"
        The report's title.
    n_jobs : int, optional
        Passed to the resampling functions (joblib).
    verbose : bool, int or None, default=None
        One progress bar over the steps (None: when interactive).
    random_state : int, numpy.random.Generator or None, default=None
        Seeds every step.

    Returns
    -------
    Report
        ``to_html(path)``, ``to_markdown()``, ``checklist()``, ``results``.

    Raises
    ------
    TypeError
        If ``estimator`` is not an estimator.
    ValueError
        For a family other than cox, binomial and gaussian, no clinical
        columns, a bad ``external``, ``horizon`` (or one for a non-Cox
        model), ``cv`` or count, a ``y`` (or ``y2``) for an estimator with a
        formula, and whatever the called functions refuse.

    See Also
    --------
    vcpcr.validation.validate_increment, vcpcr.validation.decision_curve,
    vcpcr.validation.sample_size, vcpcr.inference.multi_split

    Notes
    -----
    Binomial and gaussian models: ``validate_increment`` against
    :class:`~vcpcr.validation.ClinicalGLM` (AUC and Brier score, or
    :math:`R^2` and RMSE), the out-of-fold
    :func:`~vcpcr.calibration.cross_val_calibration`, for a binomial one the
    decision curve of the out-of-fold probabilities, and
    ``sample_size("binary")`` (Cox-Snell :math:`R^2` from the fit's
    likelihood ratio, the data's prevalence) or
    ``sample_size("continuous")`` (the fit's adjusted :math:`R^2`, the
    outcome's mean and SD).

    With ``external``, :func:`~vcpcr.validation.validation_sample_size`
    sizes the external validation (Riley et al.) for every family, from
    inputs the report only gathers: Cox, at the horizon, the external
    cohort's Kaplan-Meier risk, its censoring by then (one minus the reverse
    Kaplan-Meier estimate) and the model's predicted risks on it (the
    validation population's case-mix; the training out-of-fold risks
    describe another population), for the O/E, calibration slope and
    Harrell's C criteria of a simulated population (seeded); binomial, the
    external prevalence, the cross-validated AUC and the external predicted
    risks; gaussian, the cross-validated :math:`R^2`, the external outcome's
    variance and ``citl_width`` (default: a tenth of the external outcome's
    SD).

    The sample-size check needs an anticipated Cox-Snell :math:`R^2`;
    without ``r2`` the report takes :math:`1 - e^{-LR/n}` from the
    likelihood-ratio statistic of the model fitted on all rows (its
    lifelines ``result_``; apparent, so optimistic: pass a smaller ``r2``
    to be conservative), and the event rate and mean follow-up of the
    data. Parameters counted: the fitted model's
    covariates plus its modules (a lower bound for a tuned signature, as
    :func:`~vcpcr.validation.sample_size` says).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from vcpcr import VCPCR
    >>> from vcpcr.validation import report
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(80, 6)), columns=[*"abcde", "age"])
    >>> y = np.column_stack([rng.exponential(np.exp(-X["a"])), rng.random(80) < 0.8])
    >>> model = VCPCR(family="cox", n_clusters=2, lam_ratio=0.3, covariates="age")
    >>> rep = report(model, X, y, cv=3, n_repeats=1, inference=False,
    ...              stability=False, random_state=0)
    >>> [s.title for s in rep.sections][:2]
    ['Data', 'Model and tuning']
    """
    from tqdm.auto import tqdm

    pair = _check_args(estimator, X, external, horizon, n_splits, n_pairs, citl_width)
    family = str(family_name(estimator.family))
    formula = estimator.get_params(deep=False).get("formula")
    outcome, described = _outcome_and_frame(formula, X, y, "y")
    if pair is not None and formula is not None:
        pair = (pair[0], _outcome_and_frame(formula, pair[0], pair[1], "y2")[0])
    estimator = clone(estimator)
    if "verbose" in estimator.get_params(deep=False):  # a VCPCRCV: one bar, ours
        estimator.set_params(verbose=False)
    shown = progress_shown(verbose, _OWNER)
    steps = [
        "validate_increment",
        "fit",
        "sample_size",
        *(["calibration"] if calibration else []),
        *(["multi_split"] if inference else []),
        *(["stability_selection"] if stability else []),
        *(["validate_external"] if pair is not None else []),
    ]
    seeds = task_seeds(random_state, len(steps))
    seed = dict(zip(steps, seeds, strict=True))
    if estimator.get_params(deep=False).get("random_state", 0) is None:
        # every step's fits seeded (the out-of-fold predictions fit clones)
        estimator.set_params(random_state=seed["fit"])
    results: dict[str, Any] = {}
    skipped: list[str] = []
    with tqdm(total=len(steps), desc=_OWNER, unit="step", disable=not shown) as bar:

        def step(name: str) -> None:
            bar.set_postfix_str(name)

        step("validate_increment")
        inc = validate_increment(
            estimator,
            X,
            y,
            covariates=covariates,
            strata=strata,
            cv=cv,
            n_repeats=n_repeats,
            n_jobs=n_jobs,
            verbose=False,
            random_state=seed["validate_increment"],
        )
        results["increment"] = inc
        bar.update()
        step("fit")
        model = clone(estimator).fit(X, y)
        results["model"] = model
        bar.update()
        step("sample_size")
        sections, h = _first_sections(
            model, described, outcome, inc, horizon, r2, results
        )
        bar.update()
        if calibration:
            step("calibration")
            run = _run_calibration if h is not None else _run_glm_calibration
            sections += run(estimator, X, y, outcome, h, cv, inc, seed, results)
            bar.update()
        else:
            skipped.append(
                "Calibration"
                + (" and decision curve" if family != "gaussian" else "")
                + " (calibration=False)."
            )
        template = clone(estimator)
        if inference:
            step("multi_split")
            from vcpcr.inference import multi_split

            ms = multi_split(
                template,
                X,
                y,
                n_splits=n_splits,
                n_jobs=n_jobs,
                verbose=False,
                random_state=seed["multi_split"],
            )
            results["multi_split"] = ms
            sections.append(_multi_split_section(ms, model))
            bar.update()
        else:
            skipped.append("Multi-split evidence (inference=False).")
        if stability:
            step("stability_selection")
            from vcpcr.inference import stability_selection

            st = stability_selection(
                template,
                X,
                y,
                n_pairs=n_pairs,
                n_jobs=n_jobs,
                verbose=False,
                random_state=seed["stability_selection"],
            )
            results["stability"] = st
            sections.append(_stability_section(st, model))
            bar.update()
        else:
            skipped.append("Stability selection (stability=False).")
        if pair is not None:
            step("validate_external")
            from vcpcr.external import validate_external

            y2 = None if formula is not None else pair[1]
            ext = validate_external(model, pair[0], y2, horizon=h)
            results["external"] = ext
            sections.append(_external_section(ext))
            sections.append(
                _external_sample_size(
                    model, pair, h, inc, results, citl_width, seed["validate_external"]
                )
            )
            bar.update()
    if hasattr(model, "export_scoring_rule"):
        rule = model.export_scoring_rule()
        results["scoring_rule"] = rule
        sections.append(_scoring_section(rule))
    return Report(title, sections, results, skipped)


def _run_sample_size(
    model: Any,
    time: Any,
    event: Any,
    horizon: float,
    r2: float | None,
    results: dict[str, Any],
) -> Section:
    from vcpcr._sample_size import sample_size

    fitted = getattr(model, "best_estimator_", model)
    n = len(time)
    note = "The anticipated Cox-Snell R2 {r2:.4g} was given (r2=)."
    if r2 is None:
        lr = float(fitted.result_.log_likelihood_ratio_test().test_statistic)
        r2 = float(1.0 - np.exp(-lr / n))
        note = _R2_NOTE
    parameters = len(fitted.covariate_names_) + int(fitted.n_clusters_)
    result = sample_size(
        "survival",
        parameters=max(parameters, 1),
        r2=r2,
        rate=float(np.sum(event) / np.sum(time)),
        timepoint=horizon,
        mean_follow_up=float(np.mean(time)),
        n_available=n,
    )
    results["sample_size"] = result
    return _sample_size_section(result, r2, note)


def _run_validation_sample_size(
    y2: Any, horizon: float, inc: Any, results: dict[str, Any], seed: int
) -> Section:
    from vcpcr._sample_size import validation_sample_size
    from vcpcr.calibration import kaplan_meier

    time2, event2 = check_survival(y2)
    with warnings.catch_warnings():  # a KM of 1 has no interval; unused here
        warnings.simplefilter("ignore", VCPCRWarning)
        survival = kaplan_meier(time2, event2, horizon)[0]
        uncensored = kaplan_meier(time2, ~event2, horizon)[0]  # reverse KM
    predicted = results["external"].calibration.predicted
    basis = (
        f"(validation_sample_size, survival) at the time point {horizon:.4g}: "
        f"the risk 1 - S(t) = {1.0 - survival:.4g} of the external cohort's "
        f"Kaplan-Meier survival, its censoring by then 1 - G(t) = "
        f"{1.0 - uncensored:.4g} (the reverse Kaplan-Meier G, kaplan_meier "
        f"of the censorings), and the model's predicted risks by then on the "
        f"external cohort (validate_external's calibration.predicted: the "
        f"validation population's case-mix, which the criteria depend on, "
        f"rather than the training cohort's out-of-fold risks); an "
        f"exponential baseline, follow-up read up to the time point"
    )
    try:
        result = validation_sample_size(
            "survival",
            event_risk=1.0 - survival,
            timepoint=horizon,
            predicted_risk=predicted,
            censoring=1.0 - uncensored,
            random_state=seed % 2**32,
            n_available=len(time2),
        )
    except ValueError as exc:  # e.g. no event by the horizon
        return _size_not_computed(exc)
    simulated = (result.simulation or {}).get("c_statistic", np.nan)
    cv_c = float(
        inc.metrics.loc[(type(results["model"]).__name__, "Harrell C"), "mean"]
    )
    section = _validation_size_section(result, basis, results)
    section.text.insert(
        1,
        f"The simulated population takes these predictions as calibrated: "
        f"its Harrell's C is {simulated:.3g}, against "
        f"the signature's cross-validated {cv_c:.3g} (validate_increment). "
        f"Predictions more spread than the model's true discrimination (an "
        f"overfitted model) make the C criterion optimistic.",
    )
    return section


def _size_not_computed(exc: Exception) -> Section:
    return Section(
        "Sample size of the external validation",
        ("10",),
        [
            "Riley et al.'s external-validation criteria "
            f"(validation_sample_size) could not be computed: {exc}"
        ],
    )


def _run_gaussian_validation_sample_size(
    model: Any,
    pair: tuple[Any, Any],
    inc: Any,
    results: dict[str, Any],
    citl_width: float | None,
) -> Section:
    from vcpcr._sample_size import validation_sample_size

    values = np.asarray(pair[1], dtype=float).reshape(-1)
    name = type(model).__name__
    r2 = float(inc.metrics.loc[(name, "R2"), "mean"])
    variance = float(np.var(values, ddof=1))
    rule = "given (citl_width=)"
    if citl_width is None:
        citl_width = 0.1 * float(np.sqrt(variance))
        rule = (
            "a tenth of the external outcome's SD, the report's default (pass "
            "citl_width= to report for another)"
        )
    basis = (
        f"(validation_sample_size, continuous) with the anticipated R2 "
        f"{r2:.4g} (the signature's cross-validated R2, validate_increment), "
        f"the external outcome's variance {variance:.4g} and the target width "
        f"{citl_width:.4g} of calibration-in-the-large's CI, {rule}"
    )
    try:
        result = validation_sample_size(
            "continuous",
            r2=r2,
            variance=variance,
            citl_width=citl_width,
            n_available=values.size,
        )
    except ValueError as exc:  # e.g. a cross-validated R2 <= 0
        return _size_not_computed(exc)
    return _validation_size_section(result, basis, results)


def _validation_size_section(
    result: Any, basis: str, results: dict[str, Any]
) -> Section:
    """Return the external validation's sample-size section (``basis``: from what)."""
    results["validation_sample_size"] = result
    verdict = {True: "meets", False: "does not meet", None: "-"}[result.adequate]
    return Section(
        "Sample size of the external validation",
        ("10",),
        [
            f"Riley et al.'s external-validation criteria {basis}: at least "
            f"{result.n_required} participants; the cohort "
            f"({result.n_available}) {verdict} it.",
            result.note,
        ],
        [("Criteria", result.criteria)],
    )


def _first_sections(
    model: Any,
    X: pd.DataFrame,
    y: Any,
    inc: Any,
    horizon: float | None,
    r2: float | None,
    results: dict[str, Any],
) -> tuple[list[Section], float | None]:
    """Return data, tuning, signature, increment, sample size; the horizon."""
    family = str(family_name(model.family))
    clinical = [*inc.covariates, *inc.strata]
    core = [_tuning_section(model), _signature_section(model), _increment_section(inc)]
    if family != "cox":
        first = _glm_data_section(X, y, family, clinical)
        size = _run_glm_sample_size(model, y, family, r2, results)
        return [first, *core, size], None
    time, event = check_survival(y)
    h = float(inc.horizons[len(inc.horizons) // 2] if horizon is None else horizon)
    first = _data_section(X, time, event, clinical)
    size = _run_sample_size(model, time, event, h, r2, results)
    return [first, *core, size], h


def _external_sample_size(
    model: Any,
    pair: tuple[Any, Any],
    horizon: float | None,
    inc: Any,
    results: dict[str, Any],
    citl_width: float | None,
    seed: int,
) -> Section:
    """Return the external validation's sample-size section, for every family."""
    family = str(family_name(model.family))
    if horizon is not None:
        return _run_validation_sample_size(pair[1], horizon, inc, results, seed)
    if family == "binomial":
        return _run_binary_validation_sample_size(model, pair, inc, results)
    return _run_gaussian_validation_sample_size(model, pair, inc, results, citl_width)


def _glm_data_section(
    X: pd.DataFrame, y: Any, family: str, clinical: list[Any]
) -> Section:
    values = pd.Series(np.asarray(y).reshape(-1), name="y")
    missing = X.isna().sum()
    missing = missing[missing > 0]
    text = [
        f"{len(values)} participants; {X.shape[1] - len(clinical)} candidate "
        f"features and {len(clinical)} clinical column(s).",
        "Missing values: none."
        if missing.empty
        else f"Missing values in {missing.size} column(s) "
        f"({int(missing.sum())} cells); the estimator's missing= rule applies.",
    ]
    section = Section("Data", ("11", "20a", "20b", "21"), text)
    if family == "binomial":
        section.tables.append(
            ("Outcome (value_counts)", values.value_counts().sort_index().to_frame("n"))
        )
    else:
        section.tables.append(("Outcome (describe)", values.describe().to_frame()))
    if clinical:
        section.tables.append(
            ("Clinical columns", X[clinical].describe(include="all").T)
        )
    if not missing.empty:
        section.tables.append(("Missing values per column", missing.to_frame("n")))
    return section


_GLM_R2_NOTE = {
    "binary": (
        "The anticipated Cox-Snell R2 is {r2:.4g}: 1 - exp(-LR/n) from the "
        "likelihood-ratio statistic of the model fitted on all rows (its "
        "statsmodels result_'s llr). It is apparent, so optimistic: pass r2= "
        "(e.g. from an existing model) to be conservative. The prevalence is "
        "the data's."
    ),
    "continuous": (
        "The anticipated R2 is {r2:.4g}: the adjusted R2 of the model fitted "
        "on all rows (its statsmodels result_'s rsquared_adj; apparent, so "
        "optimistic: pass r2= to be conservative). Intercept and SD: the "
        "outcome's mean and standard deviation in the data."
    ),
}


def _run_glm_sample_size(
    model: Any, y: Any, family: str, r2: float | None, results: dict[str, Any]
) -> Section:
    from vcpcr._sample_size import sample_size

    fitted = getattr(model, "best_estimator_", model)
    values = np.asarray(y).reshape(-1)
    n = values.size
    outcome = "binary" if family == "binomial" else "continuous"
    note = "The anticipated R2 {r2:.4g} was given (r2=)."
    if r2 is None:
        r2 = (
            float(1.0 - np.exp(-float(fitted.result_.llr) / n))
            if family == "binomial"
            else float(fitted.result_.rsquared_adj)
        )
        note = _GLM_R2_NOTE[outcome]
    parameters = max(len(fitted.covariate_names_) + int(fitted.n_clusters_), 1)
    if family == "binomial":
        kw: dict[str, Any] = {
            "prevalence": float(np.mean(values == fitted.classes_[1]))
        }
    else:
        kw = {"intercept": float(np.mean(values)), "sd": float(np.std(values, ddof=1))}
    try:
        result = sample_size(outcome, parameters=parameters, r2=r2, n_available=n, **kw)
    except ValueError as exc:  # e.g. a centred outcome: the intercept is 0
        return Section(
            "Sample size",
            ("10",),
            [f"Riley et al.'s criteria (sample_size) could not be computed: {exc}"],
        )
    results["sample_size"] = result
    return _sample_size_section(result, r2, note)


def _run_glm_calibration(
    estimator: Any,
    X: pd.DataFrame,
    y: Any,
    outcome: Any,
    horizon: float | None,
    cv: int,
    inc: Any,
    seed: dict[str, int],
    results: dict[str, Any],
) -> list[Section]:
    from vcpcr._decision_curve import decision_curve
    from vcpcr.calibration import cross_val_calibration

    family = family_name(estimator.family)
    folds = {"cv": cv, "random_state": seed["calibration"] % 2**32}
    # y: None for an estimator with a formula (it reads its outcome from X)
    cal = cross_val_calibration(estimator, X, y, **folds)
    results["calibration"] = cal
    sections = [_calibration_section(cal, None)]
    if family == "binomial":
        clinical = _clinical_model(estimator, ClinicalGLM(family="binomial"), inc)
        clinical_cal = cross_val_calibration(clinical, X, outcome, **folds)
        labels = np.asarray(outcome).reshape(-1)
        events = labels == np.unique(labels)[1]
        risks = {
            inc.clinical: clinical_cal.predicted,
            type(estimator).__name__: cal.predicted,
        }
        dc = decision_curve(events, risks, random_state=seed["calibration"])
        results.update(clinical_calibration=clinical_cal, decision_curve=dc)
        sections.append(_decision_section(dc, None))
    return sections


def _run_binary_validation_sample_size(
    model: Any, pair: tuple[Any, Any], inc: Any, results: dict[str, Any]
) -> Section:
    from vcpcr._sample_size import validation_sample_size

    fitted = getattr(model, "best_estimator_", model)
    labels = np.asarray(pair[1]).reshape(-1)
    name = type(model).__name__
    c = float(inc.metrics.loc[(name, "AUC"), "mean"])
    result = validation_sample_size(
        "binary",
        prevalence=float(np.mean(labels == fitted.classes_[1])),
        c_statistic=c,
        predicted_risk=results["external"].calibration.predicted,
        n_available=len(labels),
    )
    return _validation_size_section(
        result,
        f"(validation_sample_size, binary) with the anticipated C {c:.4g} (the "
        f"signature's cross-validated AUC, validate_increment) and the model's "
        f"predicted risks on the external cohort (validate_external's "
        f"calibration.predicted)",
        results,
    )


def _run_calibration(
    estimator: Any,
    X: pd.DataFrame,
    y: Any,
    outcome: Any,
    horizon: Any,
    cv: int,
    inc: Any,
    seed: dict[str, int],
    results: dict[str, Any],
) -> list[Section]:
    from vcpcr._decision_curve import decision_curve
    from vcpcr.calibration import cross_val_predict_survival, survival_calibration

    folds = {"horizon": horizon, "cv": cv, "random_state": seed["calibration"] % 2**32}
    # y: None for an estimator with a formula (it reads its outcome from X)
    surv = cross_val_predict_survival(estimator, X, y, **folds)
    clinical = _clinical_model(estimator, ClinicalCox(), inc)
    clinical_surv = cross_val_predict_survival(clinical, X, outcome, **folds)
    cal = survival_calibration(outcome, surv, horizon)
    risks = {CLINICAL: 1.0 - clinical_surv, type(estimator).__name__: 1.0 - surv}
    dc = decision_curve(
        outcome, risks, horizon=horizon, random_state=seed["calibration"]
    )
    results.update(
        out_of_fold_survival=surv,
        clinical_out_of_fold_survival=clinical_surv,
        calibration=cal,
        decision_curve=dc,
    )
    return [_calibration_section(cal, horizon), _decision_section(dc, horizon)]
