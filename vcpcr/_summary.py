"""Build statsmodels ``Summary`` tables from plain arrays (knows nothing of VCPCR)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from statsmodels.iolib.summary import Summary, summary_params
from statsmodels.iolib.table import SimpleTable

__all__ = ["ParamTable", "build_summary", "composition_rows"]


class ParamTable(NamedTuple):
    """Coefficient table content.

    ``stat`` holds t (``use_t``) or z statistics; ``conf_int`` has shape
    ``(k, 2)``. ``extra`` optionally adds columns (e.g. ``exp(coef)``) after
    the coefficients, as ``(header, values)`` pairs.
    """

    names: list[str]
    params: NDArray[np.float64]
    bse: NDArray[np.float64]
    stat: NDArray[np.float64]
    pvalues: NDArray[np.float64]
    conf_int: NDArray[np.float64]
    use_t: bool
    extra: tuple[tuple[str, NDArray[np.float64]], ...] = ()


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
            row.insert(offset, f"{v:.4f}")
    # One more column than statsmodels' layout: narrower columns keep 80 chars.
    txt = simple.output_formats["txt"]
    txt_fmt = {**txt, "colwidths": 10, "data_fmts": ["%10s"], "colsep": ""}
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

    Returns
    -------
    statsmodels.iolib.summary.Summary
        The summary; ``print`` it, or use ``as_text()`` / ``as_html()``.
    """
    smry = Summary()
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
    smry.tables.append(_params_table(params, yname, alpha))
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
    numbered = [
        textwrap.fill(f"[{i}] {note}", width=78, subsequent_indent="    ")
        for i, note in enumerate(notes, start=1)
    ]
    if numbered:
        smry.add_extra_txt(["Notes:", *numbered])
    return smry
