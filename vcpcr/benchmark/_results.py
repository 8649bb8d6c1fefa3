"""Averaging the study's results and the summary tables.

Averaging follows the paper: for each replicate data set and random start,
over the outer folds (:func:`average_folds`); then over the starts and the
replicates (:func:`curves`), one point per traced value; the summary
(:func:`summarize`) reads two points off each curve.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from vcpcr.benchmark._methods import METHOD_NAMES

__all__ = [
    "METRICS",
    "average_folds",
    "curves",
    "method_rank",
    "summarize",
    "to_markdown",
]

#: The performance columns, averaged at every level.
METRICS = ("s", "msep", "mcc_clustering", "mcc_support", "n_clusters", "fit_time")


def _metrics(frame: pd.DataFrame) -> list[str]:
    return [m for m in METRICS if m in frame.columns]


def average_folds(folds: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Average the outer folds: one row per data set, start and traced value.

    Parameters
    ----------
    folds : pandas.DataFrame
        Rows of :func:`nested_cv` with the columns ``method``, ``label``,
        ``replicate`` and the setting ``keys`` added.
    keys : sequence of str
        The columns that define a setting, e.g. ``("n", "rho", "config")``.

    Returns
    -------
    pandas.DataFrame
        ``method``, ``label``, the keys, ``replicate``, ``start``, ``traced``,
        ``traced_value``, the mean of each metric over the outer folds
        (``s``, ``msep``, ``mcc_clustering``, ``mcc_support``,
        ``n_clusters``, ``fit_time``: seconds per model fit), ``cv_time``
        (seconds of the whole nested CV of the replicate, all starts) and
        ``n_outer``.

    Examples
    --------
    >>> import pandas as pd
    >>> from vcpcr.benchmark import average_folds
    >>> folds = pd.DataFrame({
    ...     "method": "m", "label": "M", "n": 50, "replicate": 0, "start": 0,
    ...     "traced": "alpha", "traced_value": 0.1, "outer_fold": [0, 1],
    ...     "s": [10, 20], "msep": [0.2, 0.4], "fit_time": 0.01,
    ...     "cv_time": [1.0, 2.0]})
    >>> average_folds(folds, ["n"])[["s", "msep", "cv_time", "n_outer"]]
          s  msep  cv_time  n_outer
    0  15.0   0.3      3.0        2
    """
    group = ["method", "label", *keys, "replicate", "start", "traced", "traced_value"]
    grouped = folds.groupby(group, sort=True, dropna=False)
    out = grouped[_metrics(folds)].mean()
    out["cv_time"] = grouped["cv_time"].sum()
    out["n_outer"] = grouped["outer_fold"].nunique()
    return out.reset_index()


def curves(results: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Average over random starts and replicates: one point per traced value.

    Parameters
    ----------
    results : pandas.DataFrame
        Output of :func:`average_folds`.
    keys : sequence of str
        The setting columns.

    Returns
    -------
    pandas.DataFrame
        ``method``, ``label``, the keys, ``traced``, ``traced_value``, the
        metric means, ``msep_se`` (standard error of the MSEP over the
        replicates, NaN for one replicate), ``n_replicates`` and
        ``n_starts``.
    """
    group = ["method", "label", *keys, "traced", "traced_value"]
    # starts first (each replicate weighs the same), then replicates
    per_rep = (
        results.groupby([*group, "replicate"], sort=True, dropna=False)[
            _metrics(results)
        ]
        .mean()
        .reset_index()
    )
    grouped = per_rep.groupby(group, sort=True, dropna=False)
    out = grouped[_metrics(results)].mean()
    out["msep_se"] = grouped["msep"].std(ddof=1) / np.sqrt(grouped["msep"].count())
    out["n_replicates"] = grouped["replicate"].nunique()
    starts = results.groupby(group, sort=True, dropna=False)["start"].nunique()
    out["n_starts"] = starts
    return out.reset_index()


def summarize(
    curve: pd.DataFrame, keys: Sequence[str], target: float = 20.0
) -> pd.DataFrame:
    """Read two points off each curve: nearest ``s = target`` and minimum MSEP.

    Parameters
    ----------
    curve : pandas.DataFrame
        Output of :func:`curves`.
    keys : sequence of str
        The setting columns.
    target : float, default=20.0
        The model size of interest (the simulation's true ``s``).

    Returns
    -------
    pandas.DataFrame
        Per method and setting, two rows (``point`` = ``"s~20"`` and
        ``"min MSEP"``) with the traced value and the metrics there. Ties in
        ``|s - target|`` go to the lower MSEP.

    Examples
    --------
    >>> import pandas as pd
    >>> from vcpcr.benchmark import summarize
    >>> curve = pd.DataFrame({"method": "m", "label": "M", "n": 50,
    ...     "traced": "alpha", "traced_value": [0.1, 0.2, 0.3],
    ...     "s": [40.0, 22.0, 5.0], "msep": [0.2, 0.3, 0.9]})
    >>> summarize(curve, ["n"])[["point", "traced_value", "s", "msep"]]
          point  traced_value     s  msep
    0      s~20           0.2  22.0   0.3
    1  min MSEP           0.1  40.0   0.2
    """
    rows = []
    for _, grp in curve.groupby(["method", "label", *keys], sort=False, dropna=False):
        dist = (grp["s"] - target).abs()
        near = grp.assign(_d=dist).sort_values(["_d", "msep"]).index[0]
        best = grp["msep"].idxmin()
        for point, idx in ((f"s~{target:g}", near), ("min MSEP", best)):
            rows.append({"point": point, **grp.loc[idx].to_dict()})
    out = pd.DataFrame(rows)
    first = ["method", "label", *keys, "point", "traced", "traced_value"]
    out = out[first + [c for c in out.columns if c not in first]]
    return out.iloc[np.argsort(method_rank(out["method"]), kind="stable")].reset_index(
        drop=True
    )


def method_rank(methods: pd.Series) -> NDArray[np.intp]:
    """Rank of each method in the paper's order (other methods after, by name)."""
    known = list(METHOD_NAMES)
    extra = sorted(set(methods) - set(known))
    order = {m: i for i, m in enumerate([*known, *extra])}
    return np.array([order[m] for m in methods], dtype=np.intp)


def _cell(value: object) -> str:
    if isinstance(value, float | np.floating):
        return "" if np.isnan(value) else f"{value:.4g}"
    return str(value)


def to_markdown(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> str:
    """Format a table as GitHub Markdown (no extra dependency).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    columns : sequence of str, optional
        Columns to show (default: all).

    Returns
    -------
    str
        The Markdown table.

    Examples
    --------
    >>> import pandas as pd
    >>> from vcpcr.benchmark import to_markdown
    >>> print(to_markdown(pd.DataFrame({"method": ["a"], "msep": [0.12345]})))
    | method | msep |
    |---|---|
    | a | 0.1235 |
    """
    cols = list(frame.columns if columns is None else columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame[cols].itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)
