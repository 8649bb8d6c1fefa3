"""A fitted signature as a portable scoring rule: plain tables and versioned JSON.

:meth:`vcpcr.VCPCR.export_scoring_rule` gathers what scoring a new patient
needs, without vcpcr: per gene its centring, scale, module and signed weight
(loading), per module the coefficient, the covariates' coefficients and how
each is computed from a data column (categories and their coding), and for a
Cox model the baseline cumulative hazard and survival (per stratum).
:class:`ScoringRule` holds them as frames and writes and reads them as JSON
(:data:`SCHEMA`, :data:`SCHEMA_VERSION`); its numbers are the fitted model's,
nothing is re-estimated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from vcpcr._formula import ColumnEncoding
from vcpcr._result import Result

__all__ = ["SCHEMA", "SCHEMA_VERSION", "ScoringRule", "level_rows"]

#: The ``"schema"`` entry of the JSON document.
SCHEMA = "vcpcr.scoring_rule"
#: The version of the JSON layout; :meth:`ScoringRule.from_json` reads this one.
SCHEMA_VERSION = 1

_GENE_COLUMNS = ["source", "module", "loading", "center", "scale", "coef"]
_MODULE_COLUMNS = ["coef", "sd", "n_genes"]
_COVARIATE_COLUMNS = ["source", "coef"]
_LEVEL_COLUMNS = ["column", "source", "level", "value"]
_BASELINE_VALUES = ["time", "cumulative_hazard", "survival"]

_FORMULA = (
    "eta = intercept + sum_c covariates.coef[c] * x[c] + sum_k modules.coef[k] * "
    "score[k]; score[k] = sum over genes g of module k of loading[g] * "
    "(x[g] - center[g]) / scale[g]; x[c] of a column listed in levels is "
    "levels.value at the row whose level equals the data column's value "
    "(source), else the source column's value"
)
_PREDICTION = {
    "gaussian": "the prediction is eta",
    "binomial": "P(y = classes[1]) = 1 / (1 + exp(-eta)); the label is classes[1] "
    "where eta > 0, else classes[0]",
    "cox": "S(t | x) = exp(-H0(t) * exp(eta)) with H0 the stratum's baseline "
    "cumulative_hazard at the last baseline time <= t (0 before the first); "
    "exp(eta) is the relative risk (predict)",
}


def level_rows(encodings: dict[str, ColumnEncoding]) -> pd.DataFrame:
    """One row per (categorical design column, level): the column's value there."""
    rows = [
        (name, enc.source, level, value)
        for name, enc in encodings.items()
        if enc.levels is not None and enc.values is not None
        for level, value in zip(enc.levels, enc.values, strict=True)
    ]
    return pd.DataFrame(rows, columns=_LEVEL_COLUMNS)


def _records(frame: pd.DataFrame, index: str | None) -> list[dict[str, Any]]:
    """Return a frame as JSON records of Python scalars (its index as ``index``)."""
    data = frame.reset_index() if index is not None else frame
    return [
        {str(k): (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
        for row in data.to_dict(orient="records")
    ]


def _frame(records: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    """JSON records as a frame with ``columns`` (also when there are none)."""
    return pd.DataFrame.from_records(records, columns=columns)


@dataclass(frozen=True, eq=False, repr=False)
class ScoringRule(Result):
    r"""Everything needed to score a new patient with a fitted model, without vcpcr.

    Made by :meth:`vcpcr.VCPCR.export_scoring_rule` (or
    :meth:`vcpcr.VCPCRCV.export_scoring_rule`); written with
    :meth:`to_json`, read back with :meth:`from_json`. The linear predictor
    of a row with data values ``x`` is

    .. math::

        \eta = \text{intercept} + \sum_c \gamma_c z_c + \sum_k a_k m_k,
        \qquad m_k = \sum_{g \in k} \ell_g \frac{x_g - \mu_g}{s_g},

    with ``covariates.coef`` :math:`\gamma`, ``modules.coef`` :math:`a`,
    ``genes.loading`` :math:`\ell`, ``genes.center`` :math:`\mu` and
    ``genes.scale`` :math:`s`; a covariate or gene listed in ``levels`` is
    the coding of its source column's category (:math:`z_c` = ``value`` at
    the row whose ``level`` is the patient's), any other its source column.
    ``eta`` is what ``predict`` (gaussian), ``decision_function``
    (binomial) or ``predict_log_partial_hazard`` (cox) return.

    Attributes
    ----------
    family : str
        ``"gaussian"``, ``"binomial"`` or ``"cox"``.
    outcome : str
        The response's name (the formula's left-hand side, or ``"y"``).
    intercept : float
        The constant of ``eta``. For cox, ``eta`` is centred at the training
        means (as lifelines and :meth:`VCPCR.predict_log_partial_hazard`):
        the module scores have mean 0 on the training rows and the intercept
        is minus the covariates' mean contribution.
    shrinkage : float
        The calibration shrinkage of the model's module coefficients;
        ``modules.coef`` already includes it (they are those predictions
        use).
    classes : list or None
        Binomial: the two class labels, ``classes[1]`` the event.
    genes : pandas.DataFrame
        One row per selected gene (index ``gene``, a design column): its
        data column (``source``), ``module``, signed weight in the module
        score (``loading``: the membership, times the sign of its step-0
        weight with ``latent="signed"``), ``center`` and ``scale``
        (training mean and standard deviation, ``ddof=1``) and ``coef``,
        its coefficient per raw unit (``loading * module coef / scale``,
        the model's ``coef_``).
    modules : pandas.DataFrame
        One row per module (index ``module``): ``coef`` (step 2's, per unit
        of the module score, shrunk), ``sd`` (the score's training standard
        deviation: ``coef * sd`` is the effect per SD) and ``n_genes``.
    covariates : pandas.DataFrame
        One row per covariate design column (index ``covariate``): its data
        column (``source``) and ``coef`` (per unit; a category's dummy per
        its coding).
    levels : pandas.DataFrame
        The categorical design columns (covariates, genes, strata), one row
        per level of their data column: ``column``, ``source``, ``level``,
        ``value`` (e.g. a treatment dummy is 1 at its level, 0 at the
        others; the reference level is 0 everywhere). A level not listed was
        not in the training data and cannot be scored.
    strata : list of str
        Cox: the data columns whose combination selects the baseline (empty
        without strata).
    baseline : pandas.DataFrame
        Cox: one row per stratum and time: the strata columns' values (the
        data's raw values), ``time``, the baseline ``cumulative_hazard``
        ``H0(t)`` and ``survival`` ``exp(-H0(t))``, a right-continuous step
        function of ``time`` (at every distinct training time, or at the
        requested horizons). Empty for the other families.
    horizons : list of float or None
        The requested horizons (None: the full step function).
    n_samples : int
        Rows the model was fitted on.
    prognostic_index_sd : float
        Training standard deviation of the modules' part of ``eta``.
    vcpcr_version : str
        The version of vcpcr that made the rule (read back from the JSON
        document by :meth:`from_json`).

    See Also
    --------
    vcpcr.VCPCR.export_scoring_rule : Makes the rule.
    vcpcr.validation.nomogram : The rule as a points chart.

    Notes
    -----
    The JSON document (:meth:`to_json`) is an object with the entries
    ``schema`` (``"vcpcr.scoring_rule"``), ``version`` (1),
    ``vcpcr_version``, ``family``, ``outcome``, ``linear_predictor`` and
    ``prediction`` (the formulas, as text), ``intercept``, ``shrinkage``,
    ``classes``, ``n_samples``, ``prognostic_index_sd``, ``horizons``,
    ``strata``, and the tables as lists of records: ``genes`` (keys
    ``gene``, ``source``, ``module``, ``loading``, ``center``, ``scale``,
    ``coef``), ``modules`` (``module``, ``coef``, ``sd``, ``n_genes``),
    ``covariates`` (``covariate``, ``source``, ``coef``), ``levels``
    (``column``, ``source``, ``level``, ``value``) and ``baseline``
    (``stratum``: an object of the strata columns' values, ``time``,
    ``cumulative_hazard``, ``survival``). Numbers are written with 17
    significant digits (Python's ``repr``), so reading them back gives the
    same doubles. The document is strict JSON (RFC 8259, which has no
    infinity or NaN): a non-finite number, such as the infinite baseline
    cumulative hazard of a separated Cox fit (``separated_``, whose
    coefficient is not an estimate), is written as one of the strings
    ``"Infinity"``, ``"-Infinity"`` or ``"NaN"``; :meth:`from_json` reads
    them back as floats, as Python's ``float``, JavaScript's ``Number`` and
    R's ``as.numeric`` do. A string in a numeric entry is one of those
    three.
    """

    family: str
    outcome: str
    intercept: float
    shrinkage: float
    classes: list[Any] | None
    genes: pd.DataFrame
    modules: pd.DataFrame
    covariates: pd.DataFrame
    levels: pd.DataFrame
    strata: list[str] = field(default_factory=list)
    baseline: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=_BASELINE_VALUES)
    )
    horizons: list[float] | None = None
    n_samples: int = 0
    prognostic_index_sd: float = 0.0
    vcpcr_version: str = field(default_factory=lambda: _installed_version())

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON document as Python objects (see Notes of the class).

        Returns
        -------
        dict
            The entries of :meth:`to_json` (a non-finite number as a float;
            :meth:`to_json` writes it as a string).
        """
        baseline = [
            {
                "stratum": {s: row[s] for s in self.strata},
                **{k: row[k] for k in _BASELINE_VALUES},
            }
            for row in _records(self.baseline, None)
        ]
        return {
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            "vcpcr_version": self.vcpcr_version,
            "family": self.family,
            "outcome": self.outcome,
            "linear_predictor": _FORMULA,
            "prediction": _PREDICTION.get(self.family, ""),
            "intercept": float(self.intercept),
            "shrinkage": float(self.shrinkage),
            "classes": self.classes,
            "n_samples": int(self.n_samples),
            "prognostic_index_sd": float(self.prognostic_index_sd),
            "horizons": self.horizons,
            "strata": list(self.strata),
            "genes": _records(self.genes, "gene"),
            "modules": _records(self.modules, "module"),
            "covariates": _records(self.covariates, "covariate"),
            "levels": _records(self.levels, None),
            "baseline": baseline,
        }

    def to_json(self, path: Any = None, *, indent: int | None = 1) -> str:
        """Write the rule as JSON (the versioned schema of the class Notes).

        Parameters
        ----------
        path : str or path-like, optional
            A file to write (overwritten if it exists); the text is returned
            either way.
        indent : int or None, default=1
            Passed to :func:`json.dumps` (None: one line).

        Returns
        -------
        str
            The JSON document.
        """
        text = json.dumps(_strict(self.to_dict()), indent=indent, allow_nan=False)
        if path is not None:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        return text

    @classmethod
    def from_json(cls, source: Any) -> ScoringRule:
        """Read a rule written by :meth:`to_json`.

        Parameters
        ----------
        source : str, path-like or dict
            The JSON text, a path to a file holding it, or the parsed
            document (:meth:`to_dict`).

        Returns
        -------
        ScoringRule
            The rule, with the frames of the one written.

        Raises
        ------
        ValueError
            If the document is not a vcpcr scoring rule, or of another
            schema version.
        """
        document = _numbers(_load(source))
        if not isinstance(document, dict) or document.get("schema") != SCHEMA:
            raise ValueError(
                f"source is not a vcpcr scoring rule: its 'schema' entry must be "
                f"{SCHEMA!r}. Pass the text (or file) that "
                f"ScoringRule.to_json wrote."
            )
        if document.get("version") != SCHEMA_VERSION:
            raise ValueError(
                f"The scoring rule has schema version {document.get('version')!r}; "
                f"this vcpcr reads version {SCHEMA_VERSION}. Read it with the vcpcr "
                f"version that wrote it ({document.get('vcpcr_version')!r})."
            )
        strata = list(document["strata"])
        baseline = pd.DataFrame(
            [
                {**b["stratum"], **{k: b[k] for k in _BASELINE_VALUES}}
                for b in document["baseline"]
            ],
            columns=[*strata, *_BASELINE_VALUES],
        )
        return cls(
            family=document["family"],
            outcome=document["outcome"],
            intercept=float(document["intercept"]),
            shrinkage=float(document["shrinkage"]),
            classes=document["classes"],
            genes=_frame(document["genes"], ["gene", *_GENE_COLUMNS]).set_index("gene"),
            modules=_frame(document["modules"], ["module", *_MODULE_COLUMNS]).set_index(
                "module"
            ),
            covariates=_frame(
                document["covariates"], ["covariate", *_COVARIATE_COLUMNS]
            ).set_index("covariate"),
            levels=_frame(document["levels"], _LEVEL_COLUMNS),
            strata=strata,
            baseline=baseline,
            horizons=document["horizons"],
            n_samples=int(document["n_samples"]),
            prognostic_index_sd=float(document["prognostic_index_sd"]),
            vcpcr_version=str(document["vcpcr_version"]),
        )


_NON_FINITE = {"Infinity": np.inf, "-Infinity": -np.inf, "NaN": np.nan}
#: The entries whose values are text, never a non-finite number's string.
_TEXT = frozenset(
    {
        "schema",
        "vcpcr_version",
        "family",
        "outcome",
        "linear_predictor",
        "prediction",
        "classes",
        "strata",
        "stratum",
        "gene",
        "source",
        "module",
        "covariate",
        "column",
        "level",
    }
)


def _strict(value: Any) -> Any:
    """Return ``value`` with every non-finite float as its string (strict JSON)."""
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strict(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return "NaN" if np.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def _numbers(value: Any, key: str | None = None) -> Any:
    """Return a parsed document with the non-finite numbers' strings as floats."""
    if key in _TEXT:
        return value
    if isinstance(value, dict):
        return {k: _numbers(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v, key) for v in value]
    if isinstance(value, str) and value in _NON_FINITE:
        return _NON_FINITE[value]
    return value


def _installed_version() -> str:
    """Return the installed vcpcr's version (the package's metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vcpcr")
    except PackageNotFoundError:  # pragma: no cover - a source tree on sys.path
        return "unknown"


def _load(source: Any) -> Any:
    """Return the parsed document of JSON text, a file path or a dict."""
    if isinstance(source, dict):
        return source
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return json.loads(source)
    try:
        with open(source, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, TypeError) as exc:
        raise ValueError(
            f"source must be the JSON text of a scoring rule, a path to a file "
            f"holding it, or its dict; could not read {source!r}: {exc}"
        ) from exc
