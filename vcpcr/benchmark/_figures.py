"""The paper's figures: performance against mean model size, one panel per config.

Drawn with matplotlib's object-oriented API on the Agg canvas (no pyplot, so
no global backend or figure state is touched).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vcpcr.benchmark._methods import METHOD_NAMES
from vcpcr.benchmark._results import method_rank

__all__ = ["plot_liver", "plot_study"]

_TITLES = {
    "msep": "MSEP",
    "mcc_clustering": "MCC clustering",
    "mcc_support": "MCC support",
}
_MARKERS = "osD^vP*Xph"


def _figure(n_panels: int) -> tuple[Any, list[Any]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.2 * n_panels + 1.8, 3.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, n_panels, sharey=True, squeeze=False)[0]
    return fig, list(axes)


def _order(curve: pd.DataFrame) -> list[str]:
    """Return the methods of ``curve`` in the paper's order (others after)."""
    methods = curve["method"].drop_duplicates()
    return list(methods.iloc[np.argsort(method_rank(methods), kind="stable")])


def _style(method: str, order: Sequence[str]) -> dict[str, Any]:
    """Return a fixed colour and marker per method (the paper's eight first)."""
    import matplotlib as mpl

    known = [*METHOD_NAMES, *[m for m in order if m not in METHOD_NAMES]]
    i = known.index(method)
    color = mpl.colormaps["tab10"](i % 10)
    return {"color": color, "marker": _MARKERS[i % len(_MARKERS)]}


def _draw(ax: Any, panel: pd.DataFrame, metric: str, order: Sequence[str]) -> None:
    for method in order:
        line = panel[panel["method"] == method].sort_values("s")
        if line.empty:
            continue
        ax.plot(
            line["s"],
            line[metric],
            label=line["label"].iloc[0],
            lw=1.3,
            ms=4,
            **_style(method, order),
        )


def plot_study(
    curve: pd.DataFrame, out: str | Path, *, true_size: float = 20.0
) -> list[Path]:
    """Draw the simulation figures: each metric against mean model size.

    One PNG per sample size, correlation and metric (MSEP, MCC-clustering,
    MCC-support), with one panel per configuration, one line per method (a
    point per traced value) and a vertical line at the true model size.

    Parameters
    ----------
    curve : pandas.DataFrame
        Output of :func:`curves` with the keys ``n``, ``rho``, ``config``.
    out : str or pathlib.Path
        Directory of the figures (created if needed).
    true_size : float, default=20.0
        Where the vertical line goes.

    Returns
    -------
    list of pathlib.Path
        The files written, e.g. ``n50_rho0.6_msep.png``.

    See Also
    --------
    run_study : Writes these figures at the end of the study.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    order = _order(curve)
    files = []
    for (n, rho), setting in curve.groupby(["n", "rho"], sort=True):
        configs = sorted(setting["config"].unique())
        for metric, title in _TITLES.items():
            if metric not in setting or setting[metric].isna().all():
                continue
            fig, axes = _figure(len(configs))
            for ax, config in zip(axes, configs, strict=True):
                _draw(ax, setting[setting["config"] == config], metric, order)
                ax.axvline(true_size, color="black", lw=0.8)
                ax.set(title=f"Config {config}", xlabel="mean model size s")
                ax.grid(alpha=0.3)
            axes[0].set_ylabel(title)
            handles, labels = axes[0].get_legend_handles_labels()
            fig.legend(handles, labels, loc="outside right center", fontsize=8)
            fig.suptitle(f"{title} against model size (n = {n}, rho = {rho:g})")
            path = out / f"n{n}_rho{rho:g}_{metric}.png"
            fig.savefig(path, dpi=110)
            files.append(path)
    return files


def plot_liver(curve: pd.DataFrame, out: str | Path) -> list[Path]:
    """Draw the Liver figure: MSEP against mean model size.

    Parameters
    ----------
    curve : pandas.DataFrame
        Output of :func:`curves` for the Liver study.
    out : str or pathlib.Path
        Directory of the figure.

    Returns
    -------
    list of pathlib.Path
        ``[out / "liver_msep.png"]``.

    See Also
    --------
    run_liver : Writes this figure.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    order = _order(curve)
    fig, (ax,) = _figure(1)
    _draw(ax, curve, "msep", order)
    ax.set(xlabel="mean model size s", ylabel="MSEP", title="Liver (n = 50)")
    top = float(np.nanmax(curve["msep"])) * 1.05
    ax.set_ylim(0, min(max(1.3, top), 3.0))
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", fontsize=8)
    path = out / "liver_msep.png"
    fig.savefig(path, dpi=110)
    return [path]
