"""Figures: the CV curve, the cluster heatmap, the path, risk groups, calibration.

Requires matplotlib (``pip install 'vcpcr[plot]'``). Every function draws on
the given ``ax`` (or a new figure) and returns the axes; nothing is shown, so
the functions are safe without a display (save with ``ax.figure.savefig``).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_is_fitted

from vcpcr._model import VCPCR
from vcpcr._nomogram import Nomogram, nomogram
from vcpcr._scoring import scoring_name
from vcpcr._tuning import SELECTIONS, score_se, selected_index

__all__ = [
    "plot_calibration",
    "plot_clusters",
    "plot_cv",
    "plot_decision_curve",
    "plot_increments",
    "plot_nomogram",
    "plot_path",
    "plot_risk_groups",
    "plot_stability",
]


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - exercised without the extra
        raise ImportError(
            "vcpcr.plotting requires matplotlib: pip install 'vcpcr[plot]'"
        ) from None
    return plt


def _check_result(result: Any, attributes: tuple[str, ...], what: str) -> None:
    """Raise a TypeError unless ``result`` has the ``attributes`` of ``what``.

    A plotting helper given another object (a string, a frame, None) fails
    here, naming the result it draws, not on a missing attribute inside.
    """
    if not all(hasattr(result, a) for a in attributes):
        raise TypeError(f"result must be {what}; got a {type(result).__name__}.")


def _axes(ax: Any, **kwargs: Any) -> Any:
    """Return a new figure's axes (``subplots(**kwargs)``), or ``ax``, one Axes."""
    if ax is None:
        return _pyplot().subplots(**kwargs)[1]
    if not hasattr(ax, "plot"):
        shape = getattr(ax, "shape", None)
        raise TypeError(
            f"ax must be one matplotlib Axes; got a {type(ax).__name__}"
            f"{'' if shape is None else f' of shape {shape}'}. Pass one of "
            f"them (e.g. axes[0])."
        )
    return ax


def _several_axes(axes: Any, n: int, what: str, *, exact: bool = False) -> NDArray[Any]:
    """``axes`` as a flat array of ``n`` Axes (at least ``n`` unless ``exact``)."""
    flat = np.asarray(axes, dtype=object).reshape(-1)
    wrong = flat.size != n if exact else flat.size < n
    if wrong or not all(hasattr(a, "plot") for a in flat):
        raise ValueError(
            f"axes must hold {n} matplotlib Axes ({what}); got {flat.size} "
            f"object(s) of shape {np.shape(axes)}. Pass "
            f"{n if exact else f'at least {n}'} axes, or leave axes=None."
        )
    return flat


def _legend(ax: Any, own: bool, **kwargs: Any) -> Any:
    """Draw the legend, outside on the right of a figure the function made.

    :func:`_fit_in_figure` then keeps it inside the figure. On the caller's
    axes, whose figure is the caller's to lay out, at matplotlib's best
    place inside.
    """
    if own:
        kwargs = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0)} | kwargs
        kwargs.setdefault("borderaxespad", 0.0)
    else:
        kwargs.setdefault("loc", "best")
    return ax.legend(**kwargs)


def _fit_in_figure(fig: Any, rounds: int = 3) -> None:
    """Move the subplot margins so that every label and legend is inside ``fig``.

    For the figures a plotting function makes itself (labels and legends
    outside the axes would otherwise be cut by a plain ``savefig``).
    """
    width, height = fig.get_size_inches()
    for _ in range(rounds):
        fig.canvas.draw()  # lay out the axes dividers before measuring
        box = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
        over = (-box.x0, box.x1 - width, -box.y0, box.y1 - height)
        if max(over) <= -0.02:  # everything at least 0.02 inch inside
            return
        pad = 0.05
        sp = fig.subplotpars
        fig.subplots_adjust(
            left=sp.left + max(over[0] + pad, 0) / width,
            right=sp.right - max(over[1] + pad, 0) / width,
            bottom=sp.bottom + max(over[2] + pad, 0) / height,
            top=sp.top - max(over[3] + pad, 0) / height,
        )


def plot_cv(
    cv: Any,
    ax: Any = None,
    *,
    x: str = "mean_size",
    peer: pd.DataFrame | None = None,
    peer_label: str = "peer",
) -> Any:
    """Plot the CV score against model size or ``lam_ratio``, as ``plot.cv.glmnet``.

    The curve of the chosen ``(n_clusters, delta)`` is drawn with error bars
    (one standard error: over the folds, or the pooled criterion's bootstrap
    one), the other combinations as thin grey lines (one legend entry);
    vertical lines mark the point each ``selection`` rule of
    :class:`VCPCRCV` picks (``min``, ``1se``, ``paired``), a star the chosen point
    (``best_index_``). With ``peer`` (:meth:`VCPCRCV.peer_curve`: another
    method's path scored on the same folds by the same criterion), its curve
    is drawn on the same axes, so that the figure shows what sparsity costs.
    Scorers named ``neg_*`` are plotted as the positive loss.

    Parameters
    ----------
    cv : VCPCRCV
        A fitted cross-validation object.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).
    x : {"mean_size", "lam_ratio"}, default="mean_size"
        Horizontal axis: mean number of selected features or ``lam_ratio``.
    peer : pandas.DataFrame, optional
        A peer's curve from :meth:`VCPCRCV.peer_curve` (``x="mean_size"``
        only).
    peer_label : str, default="peer"
        Its legend entry (e.g. ``"Coxnet"``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes.
    """
    if x not in ("mean_size", "lam_ratio"):
        raise ValueError(f"x must be 'mean_size' or 'lam_ratio'. Got {x!r} instead.")
    if peer is not None and x != "mean_size":
        raise ValueError(
            f"A peer's curve is drawn against model size: pass x='mean_size' "
            f"with peer (got x={x!r})."
        )
    if not hasattr(cv, "get_params"):  # check_is_fitted prints all of a frame
        raise TypeError(
            f"cv must be a fitted VCPCRCV; got a {type(cv).__name__}. Pass the "
            f"VCPCRCV itself (not its cv_results_)."
        )
    check_is_fitted(cv, "cv_results_")
    res = cv.cv_results_
    name = scoring_name(cv.scoring, cv._family)
    sign, label = (-1.0, name[4:]) if name.startswith("neg_") else (1.0, name)
    label = label.replace("_", " ")  # "pooled deviance", "mean squared error"
    own = ax is None
    ax = _axes(ax, figsize=(7.5, 4))
    delta = res["delta"].fillna(-1.0)
    chosen = res.iloc[cv.best_index_]
    other_label = "other (K, delta)" if res["delta"].notna().any() else "other K"
    for (K, d), part in res.assign(_d=delta).groupby(["n_clusters", "_d"]):
        is_best = K == chosen["n_clusters"] and d == (
            -1.0 if pd.isna(chosen["delta"]) else chosen["delta"]
        )
        part = part.sort_values(x)
        y = sign * part["mean_test_score"]
        if is_best:
            se = score_se(part, cv.n_splits_)
            dtext = "" if d == -1.0 else f", delta={d:.3g}"
            ax.errorbar(
                part[x],
                y,
                yerr=se,
                fmt="o-",
                color="C3",
                capsize=3,
                label=f"K={K}{dtext}",
                zorder=3,
            )
        else:
            ax.plot(part[x], y, color="0.75", lw=0.8, zorder=1, label=other_label)
            other_label = "_nolegend_"  # one legend entry for all grey lines
    for tag, style in zip(SELECTIONS, ("--", ":", "-."), strict=True):
        n_se = cv.n_se if tag == cv.selection else None
        idx = selected_index(res, tag, cv.n_splits_, n_se)
        ax.axvline(res[x].iloc[idx], color="0.3", ls=style, lw=1, label=tag)
    ax.plot(
        chosen[x],
        sign * chosen["mean_test_score"],
        "*",
        color="k",
        ms=14,
        zorder=4,
        label=f"chosen ({chosen['mean_size']:.3g} features, fold mean)",
    )
    if peer is not None:
        order = np.argsort(peer["mean_size"].to_numpy(), kind="stable")
        ax.plot(
            peer["mean_size"].to_numpy()[order],
            sign * peer["mean_test_score"].to_numpy()[order],
            "s-",
            color="C0",
            ms=3,
            lw=1.2,
            zorder=2,
            label=peer_label,
        )
    xs = res[x].to_numpy(dtype=float)
    if peer is not None:
        xs = np.concatenate([xs, peer["mean_size"].to_numpy(dtype=float)])
    _cv_x_axis(ax, x, xs)
    ax.set_ylabel(f"CV {label}")
    _legend(ax, own, frameon=False, fontsize="small")
    if own:
        _fit_in_figure(ax.figure)
    return ax


def _cv_x_axis(ax: Any, x: str, xs: NDArray[np.float64]) -> None:
    """Scale and label ``plot_cv``'s x axis (one value: a range around it)."""
    single = np.ptp(xs) == 0
    if x == "lam_ratio":
        ax.set_xscale("log")
        if single:
            ax.set_xlim(xs[0] / 3, xs[0] * 3)
        ax.set_xlabel("lam_ratio")
        return
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(-0.2, 3 * xs[0] + 1 if single else None)  # sizes are >= 0
    ax.set_xlabel("mean number of selected features")


def plot_clusters(
    model: Any,
    X: Any,
    ax: Any = None,
    *,
    cmap: str = "viridis",
    max_labels: int = 60,
) -> Any:
    """Heatmap of the absolute correlations of the selected features.

    Features are ordered by cluster and, within a cluster, by decreasing
    membership degree (as the paper's Figures 1 and 3). A strip on the left
    gives the cluster (colours named in the legend, ``cluster_1..K`` as in
    ``summary()``), white lines separate the clusters, and a bar on top gives
    the membership degree. Feature names label the rows and columns when
    there are at most ``max_labels`` of them.

    Parameters
    ----------
    model : VCPCR or VCPCRCV
        A fitted model (a VCPCRCV's ``best_estimator_`` is used).
    X : array-like of shape (n_samples, n_features) or DataFrame
        Data to correlate (usually the training data).
    ax : matplotlib.axes.Axes, optional
        Axes for the heatmap (default: a new figure).
    cmap : str, default="viridis"
        Colour map of the heatmap.
    max_labels : int, default=60
        Largest number of selected features whose names are written.

    Returns
    -------
    matplotlib.axes.Axes
        The heatmap's axes.
    """
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator
    from matplotlib.transforms import offset_copy
    from mpl_toolkits.axes_grid1 import make_axes_locatable

    check_is_fitted(model)
    model = getattr(model, "best_estimator_", model)
    V = model.membership_.to_numpy()
    sel = np.flatnonzero(model.labels_ >= 0)
    if sel.size == 0:
        raise ValueError("The model selected no feature: nothing to plot.")
    degree = V[sel, model.labels_[sel]]
    order = sel[np.lexsort((-degree, model.labels_[sel]))]
    labels = model.labels_[order]
    n = order.size
    Xs = model.standardized_design(X)  # correlations do not depend on scaling
    corr = np.abs(np.corrcoef(Xs[:, order], rowvar=False))
    own_figure = ax is None
    ax = _axes(ax, figsize=(7.5, 6.5))
    image = ax.imshow(corr, cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
    divider = make_axes_locatable(ax)
    left = divider.append_axes("left", size="4%", pad=0.05)
    top = divider.append_axes("top", size="8%", pad=0.05)
    colors = _cluster_colors(model.n_clusters_)
    left.imshow(colors[labels][:, None, :], aspect="auto", interpolation="nearest")
    bounds = np.flatnonzero(np.diff(labels)) + 0.5
    lw = 1.2 if n <= 100 else 0.6
    for b in bounds:
        ax.axhline(b, color="white", lw=lw)
        ax.axvline(b, color="white", lw=lw)
        left.axhline(b, color="white", lw=lw)
    top.bar(np.arange(n), V[order, labels], width=1.0, color="0.4")
    top.set_xlim(-0.5, n - 0.5)
    top.set_title("membership degree", fontsize="small")
    highest = float(V[order, labels].max())
    top.set_ylim(0, highest)
    top.set_yticks([highest], [f"{highest:.2g}"])  # one tick: the strip is thin
    top.tick_params(axis="y", labelsize="x-small")
    top.set_xticks([])
    left.set_xticks([])
    ax.set_yticks([])
    names = [_short(str(g)) for g in model.membership_.index[order]]
    if n <= max_labels:
        size = float(np.clip(400 / n, 4, 8))
        left.set_yticks(np.arange(n), names, fontsize=size)
        ax.set_xticks(np.arange(n), names, fontsize=size, rotation=90)
    else:
        left.set_yticks([])
        ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
    ax.set_xlabel(f"{n} selected features, by cluster ({model.n_clusters_})")
    bar = ax.figure.colorbar(
        image, ax=ax, fraction=0.046, pad=0.04, label="|correlation|"
    )
    handles = [
        Patch(facecolor=colors[k], label=name)
        for k, name in enumerate(model.membership_.columns)
    ]
    # right of the colour bar and its label, whatever the heatmap's width
    ax.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        bbox_transform=offset_copy(bar.ax.transAxes, ax.figure, x=50, units="points"),
        frameon=False,
        fontsize="small",
        title="cluster",
        ncol=1 + len(handles) // 25,
    )
    if own_figure:
        _fit_in_figure(ax.figure)
    return ax


def _cluster_colors(n_clusters: int) -> NDArray[np.float64]:
    """Return one RGBA colour per cluster.

    tab10; beyond 10, tab20's dark shades then its light ones (its pairs side
    by side are near-identical); repeats beyond 20.
    """
    import matplotlib as mpl

    if n_clusters <= 10:
        palette = mpl.colormaps["tab10"]
        return np.array([palette(k) for k in range(max(n_clusters, 1))])
    palette = mpl.colormaps["tab20"]
    order = [*range(0, 20, 2), *range(1, 20, 2)]
    return np.array([palette(order[k % 20]) for k in range(n_clusters)])


def _short(name: str, width: int = 24) -> str:
    """Return a feature name for a tick label: at most ``width`` characters."""
    return name if len(name) <= width else name[: width - 1] + "\u2026"


def plot_path(
    model: Any,
    X: Any = None,
    y: ArrayLike | None = None,
    *,
    lam_ratios: ArrayLike | None = None,
    ax: Any = None,
) -> Any:
    """Model size and number of clusters against ``lam_ratio``.

    For a fitted :class:`VCPCRCV`, the fold means of ``cv_results_`` at the
    chosen ``(n_clusters, delta)``. For a :class:`VCPCR` and data ``(X, y)``,
    :meth:`VCPCR.path`: the path at the model's other parameters (one
    weights computation, all ratios solved together).

    Parameters
    ----------
    model : VCPCR or VCPCRCV
        The model (a VCPCR need not be fitted).
    X, y : array-like, optional
        Data for a VCPCR (``y`` omitted with a formula).
    lam_ratios : array-like of float, optional
        Ratios for a VCPCR (default ``10**linspace(-3, 0, 20)``).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        The axes (model size on the left axis, clusters on the right one).
    """
    if isinstance(model, VCPCR):
        if X is None:
            raise ValueError("plot_path needs X (and y) for a VCPCR model.")
        path = model.path(X, y, lam_ratios=lam_ratios)
    else:
        check_is_fitted(model, "cv_results_")
        path = _cv_path(model)
    from matplotlib.ticker import MaxNLocator

    own = ax is None
    ax = _axes(ax, figsize=(6, 4))
    mean = "" if isinstance(model, VCPCR) else " (mean over the folds)"
    (size,) = ax.plot(
        path["lam_ratio"], path["size"], "o-", color="C0", label="selected features"
    )
    ax.set_xscale("log")
    ax.set_xlabel("lam_ratio")
    ax.set_ylabel(f"selected features{mean}", color="C0")
    right = ax.twinx()
    (clusters,) = right.plot(
        path["lam_ratio"], path["n_clusters"], "s--", color="C1", label="clusters"
    )
    right.set_ylabel(f"clusters{mean}", color="C1")
    for axis in (ax, right):  # counts: whole ticks (fold means lie between)
        axis.yaxis.set_major_locator(MaxNLocator(integer=True))
        low, high = axis.get_ylim()
        axis.set_ylim(min(low, 0), max(high, 1))
    if np.ptp(path["lam_ratio"]) == 0:  # one ratio: no range for the log axis
        ax.set_xlim(path["lam_ratio"].iloc[0] / 3, path["lam_ratio"].iloc[0] * 3)
    right.legend(handles=[size, clusters], frameon=False, fontsize="small")
    if own:
        _fit_in_figure(ax.figure)
    return ax


def plot_risk_groups(
    model: Any,
    X: Any,
    y: ArrayLike | None = None,
    *,
    cv: Any = 5,
    quantiles: ArrayLike = 0.5,
    cutoffs: Any = "training",
    random_state: Any = 0,
    ci_show: bool = False,
    ax: Any = None,
) -> Any:
    """Kaplan-Meier curves of risk groups, with the log-rank p-value.

    The samples are split at quantiles of the Cox model's linear predictor
    (the median by default: low and high risk); each group gets lifelines'
    Kaplan-Meier curve, the numbers at risk are written below the axes
    (lifelines' ``add_at_risk_counts``) and the p-value of lifelines'
    ``multivariate_logrank_test`` of the groups in the legend.

    On the training data the predictor must be **cross-validated**
    (``cv``, the default): as scikit-learn's ``cross_val_predict``, an
    unfitted clone of ``model`` with the same parameters is fitted on each
    training fold and predicts the linear predictor of its held-out fold.
    The fitted model's own predictor on its training data separates the
    groups optimistically, as the p-values of its summary are optimistic.
    With ``cv=None`` the fitted model's predictor is used: for new (test)
    data only. The title says which was used.

    New data are cut at the **training cut-offs** by default (the quantiles
    of the fitted model's linear predictor on its training rows,
    ``train_linear_predictor_``), so that a patient is "high risk" in a
    test cohort as in the training cohort, and the groups' sizes say how
    the cohort's risk differs; ``cutoffs="data"`` cuts at the new data's own
    quantiles (the behaviour before this release: for a cohort whose
    predictor is shifted as a whole, e.g. another platform), and given
    values cut there (a published cut-off).

    Parameters
    ----------
    model : VCPCR or VCPCRCV
        A fitted Cox model (``family="cox"``). For a VCPCRCV, the
        cross-validated predictor refits the whole tuning per fold (nested
        CV, honest but slow); pass ``model.best_estimator_`` to refit only
        the chosen parameters.
    X : array-like of shape (n_samples, n_features) or DataFrame
        The data (with a formula model: the DataFrame).
    y : survival outcome of shape (n_samples,), optional
        ``(time, event)`` columns, :func:`vcpcr.Surv` or scikit-survival's
        structured array; omitted with a formula model.
    cv : int, cross-validation splitter, iterable or None, default=5
        Folds of the cross-validated predictor: an int gives
        ``KFold(cv, shuffle=True, random_state=random_state)``; None uses
        the fitted model (test data).
    quantiles : float or array-like of float, default=0.5
        Increasing cut points in (0, 1): ``0.5`` gives two groups,
        ``[1/3, 2/3]`` tertiles. A sample at a cut point joins the lower
        group. Not used with given ``cutoffs``.
    cutoffs : {"training", "data"} or array-like of float, default="training"
        Where the quantiles are taken: ``"training"``, of the training
        predictor (with ``cv``, the cross-validated predictor of ``X``, the
        training data; with ``cv=None``, the fitted model's predictor on its
        training rows); ``"data"``, of the predictor of ``X``; or increasing
        cut points on the linear predictor's scale.
    random_state : int, numpy.random.Generator or None, default=0
        Shuffles the folds when ``cv`` is an int.
    ci_show : bool, default=False
        Draw the Kaplan-Meier confidence bands.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        The axes of the curves.

    Raises
    ------
    ValueError
        For a model that is not a Cox model, bad ``quantiles``, ``cutoffs``
        or ``cv``, a predictor with fewer distinct values than groups (a
        model without clusters), or a group without samples at the cut-offs.
    sklearn.exceptions.NotFittedError
        If ``model`` is not fitted.
    """
    from lifelines import KaplanMeierFitter
    from lifelines.plotting import add_at_risk_counts

    from vcpcr._risk_groups import risk_groups

    groups = risk_groups(
        model,
        X,
        y,
        cv=cv,
        quantiles=quantiles,
        cutoffs=cutoffs,
        random_state=random_state,
    )
    own = ax is None
    ax = _axes(ax, figsize=(8, 5))
    fitters = []
    for k, label in enumerate(groups.labels):
        member = groups.group == k
        km = KaplanMeierFitter(label=label).fit(
            groups.time[member], groups.event[member]
        )
        km.plot_survival_function(ax=ax, ci_show=ci_show, color=f"C{k}")
        fitters.append(km)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("time")
    ax.set_ylabel("survival probability")
    _legend(
        ax,
        own,
        title=f"linear predictor quantile\nlog-rank p = {groups.p_value:.3g}",
        frameon=False,
        fontsize="small",
        title_fontsize="small",
    )
    source = (
        "the fitted model's linear predictor (cv=None)"
        if groups.n_splits is None
        else f"the {groups.n_splits}-fold cross-validated linear predictor"
    )
    cut = {
        "training": "cut at the training quantiles",
        "data": "cut at this data's quantiles",
        "given": "cut at the given values",
    }[groups.cut_at]
    if groups.n_splits is not None:
        cut = "cut at its quantiles"
    ax.set_title(f"Risk groups from {source},\n{cut}", fontsize="medium")
    add_at_risk_counts(*fitters, ax=ax, rows_to_show=["At risk"])
    if own:  # the caller's figure is the caller's to lay out
        _fit_in_figure(ax.figure)
    return ax


def _cv_path(cv: Any) -> pd.DataFrame:
    res = cv.cv_results_
    chosen = res.iloc[cv.best_index_]
    same = (res["n_clusters"] == chosen["n_clusters"]) & (
        res["delta"].isna()
        if pd.isna(chosen["delta"])
        else res["delta"] == chosen["delta"]
    )
    part = res[same].sort_values("lam_ratio")
    return pd.DataFrame(
        {
            "lam_ratio": part["lam_ratio"].to_numpy(),
            "size": part["mean_size"].to_numpy(),
            "n_clusters": part["mean_n_clusters"].to_numpy(),
        }
    )


def plot_stability(
    result: Any, axes: Any = None, *, top: int = 50, max_labels: int = 60
) -> Any:
    """Plot the selection frequencies and the co-clustering of the stable set.

    Left: the ``top`` most frequent features' selection frequencies (those
    selected at least once), coloured
    by consensus cluster (grey: not stable), with the threshold as a dashed
    line. Right: the co-clustering matrix of the stable set, ordered by
    cluster and, within a cluster, by frequency; white lines separate the
    clusters, and feature names label the rows and columns when there are at
    most ``max_labels`` of them.

    Parameters
    ----------
    result : StabilityResult
        From :func:`vcpcr.inference.stability_selection`.
    axes : sequence of two matplotlib.axes.Axes, optional
        Axes for the two panels (default: a new figure).
    top : int, default=50
        Number of features in the frequency panel.
    max_labels : int, default=60
        Largest stable set whose names are written on the heatmap.

    Returns
    -------
    ndarray of matplotlib.axes.Axes
        The two axes.
    """
    _check_result(
        result,
        ("modules", "selection_frequency", "coclustering"),
        "a StabilityResult (from vcpcr.inference.stability_selection)",
    )
    own = axes is None
    if own:
        axes = _pyplot().subplots(
            1,
            2,
            figsize=(13, 5.5),
            gridspec_kw={"width_ratios": [1.2, 1]},
            layout="constrained",  # room for the long feature labels
        )[1]
    axes = _several_axes(axes, 2, "frequencies, co-clustering", exact=True)
    cluster_of = {
        g: i for i, members in enumerate(result.modules.values()) for g in members
    }
    colors = _cluster_colors(len(result.modules))
    _frequency_panel(axes[0], result, cluster_of, colors, top, own)
    _coclustering_panel(axes[1], result, cluster_of, max_labels)
    return axes


def _frequency_panel(
    ax: Any, result: Any, cluster_of: dict[str, int], colors: Any, top: int, own: bool
) -> None:
    from matplotlib.patches import Patch

    freq = result.selection_frequency.sort_values(ascending=False, kind="stable")
    shown = freq[freq > 0].iloc[:top]
    title = (
        f"{result.stable_set.size} stable of {result.n_features} features "
        f"(E[false] <= {result.error_bound:.2g})"
    )
    if shown.empty:
        ax.set_axis_off()
        ax.set_title(title, fontsize="medium")
        ax.text(0.5, 0.5, "no feature was selected in any subsample", ha="center")
        return
    grey = (0.7, 0.7, 0.7, 1.0)
    bar_colors = [
        colors[cluster_of[g]] if g in cluster_of else grey for g in shown.index
    ]
    x = np.arange(shown.size)
    ax.bar(x, shown.to_numpy(), width=0.8, color=bar_colors)
    ax.axhline(result.threshold, color="C3", ls="--", lw=1.2)
    ax.text(
        shown.size - 0.5,
        result.threshold,
        f"threshold {result.threshold:g}",
        color="C3",
        ha="right",
        va="bottom",
        fontsize="small",
        bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1},
    )
    size = float(np.clip(500 / max(shown.size, 1), 4, 8))
    ax.set_xticks(x, [str(g) for g in shown.index], rotation=90, fontsize=size)
    ax.set_xlim(-0.6, shown.size - 0.4)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("selection frequency")
    drawn = sorted({cluster_of[g] for g in shown.index if g in cluster_of})
    if not drawn:
        ax.set_title(title, fontsize="medium")
        return
    handles = [Patch(facecolor=colors[k], label=list(result.modules)[k]) for k in drawn]
    if own:  # above the bars, the title its own (the figure is laid out)
        ax.legend(
            handles=handles,
            loc="lower left",
            bbox_to_anchor=(0.0, 1.01),
            ncol=min(len(handles), 6),
            frameon=False,
            fontsize="small",
            title=title,
            title_fontsize="medium",
            borderaxespad=0.0,
        )
    else:
        ax.set_title(title, fontsize="medium")
        ax.legend(handles=handles, frameon=False, fontsize="small", ncol=2)


def _coclustering_panel(
    ax: Any, result: Any, cluster_of: dict[str, int], max_labels: int
) -> None:
    stable = list(result.stable_set)
    s = len(stable)
    if s == 0:
        ax.set_axis_off()
        ax.set_title("no stable feature", fontsize="medium")
        ax.text(
            0.5,
            0.5,
            f"no feature reached the threshold {result.threshold:g}:\n"
            f"nothing to co-cluster",
            ha="center",
            va="center",
        )
        return
    order = sorted(range(s), key=lambda i: (cluster_of[stable[i]], i))
    coc = result.coclustering[:s][:, :s].toarray()[np.ix_(order, order)]
    image = ax.imshow(coc, cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
    clusters = np.array([cluster_of[stable[i]] for i in order])
    for b in np.flatnonzero(np.diff(clusters)) + 0.5:
        ax.axhline(b, color="white", lw=1.0)
        ax.axvline(b, color="white", lw=1.0)
    names = [str(stable[i]) for i in order]
    if s <= max_labels:
        size = float(np.clip(400 / s, 4, 8))
        ax.set_xticks(np.arange(s), names, rotation=90, fontsize=size)
        ax.set_yticks(np.arange(s), names, fontsize=size)
    else:
        ax.set_xticks([])
        ax.set_yticks([])
    ax.set_title(
        f"co-clustering of the stable set ({len(result.modules)} clusters)",
        fontsize="medium",
    )
    ax.figure.colorbar(
        image, ax=ax, fraction=0.046, pad=0.04, label="share of subsamples"
    )


def plot_calibration(result: Any, ax: Any = None) -> Any:
    """Predicted against observed: groups with intervals, the smoothed curve.

    Draws a :class:`vcpcr.calibration.CalibrationResult`: each group's mean
    prediction against its observed value (Kaplan-Meier risk by the horizon,
    frequency or mean) with its confidence interval, the smoothed calibration
    curve (cox, binomial), the diagonal of perfect calibration, the
    distribution of the predictions along the bottom, and the slope,
    observed/expected and ICI/E50/E90 in the legend.

    Parameters
    ----------
    result : CalibrationResult
        From :mod:`vcpcr.calibration`.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        The axes.
    """
    _check_result(
        result,
        ("groups", "predicted"),
        "a CalibrationResult (from vcpcr.calibration)",
    )
    own = ax is None
    ax = _axes(ax, figsize=(8, 5))
    groups = result.groups
    pred = result.predicted
    lo = min(pred.min(), np.nanmin(groups["lower"]))
    hi = max(pred.max(), np.nanmax(groups["upper"]))
    pad = 0.05 * (hi - lo)
    lims = (lo - pad, hi + pad)
    ax.plot(lims, lims, color="0.6", ls="--", lw=1, label="perfect calibration")
    if not result.curve.empty:
        ax.plot(
            result.curve["predicted"],
            result.curve["observed"],
            color="tab:red",
            lw=1.5,
            label="smoothed",
        )
    err = np.vstack(
        [groups["observed"] - groups["lower"], groups["upper"] - groups["observed"]]
    )
    level = f"{100 * (1 - result.alpha):g}%"
    ax.errorbar(
        groups["predicted"],
        groups["observed"],
        yerr=np.abs(err),
        fmt="o",
        color="tab:blue",
        capsize=3,
        label=f"groups ({level} CI)",
    )
    ax.plot(
        pred,
        np.full(pred.size, lims[0] + 0.01 * (lims[1] - lims[0])),
        "|",
        color="0.3",
        alpha=0.4,
        ms=8,
    )
    stats = [f"slope {result.slope:.2f}"]
    if result.observed_expected is not None:
        stats.append(f"O/E {result.observed_expected:.2f}")
    if result.intercept is not None:
        stats.append(f"intercept {result.intercept:.2f}")
    if result.ici is not None:
        stats.append(
            f"ICI {result.ici:.3f}, E50 {result.e50:.3f}, E90 {result.e90:.3f}"
        )
    ax.plot([], [], " ", label="\n".join(stats))
    if result.family == "cox":
        what = f"risk of an event by t = {result.horizon:g}"
    else:
        what = "probability" if result.family == "binomial" else "value"
    ax.set(
        xlim=lims,
        ylim=lims,
        xlabel=f"Predicted {what}",
        ylabel=f"Observed {what}",
        title=f"Calibration (n = {result.n_samples})",
    )
    ax.set_aspect("equal")
    _legend(ax, own, fontsize="small", frameon=False)
    if own:
        _fit_in_figure(ax.figure)
    return ax


def plot_increments(result: Any, axes: Any = None) -> Any:
    """Plot each fold's increment over the clinical model, one panel per metric.

    In each panel, a model's per-fold increments (model minus the clinical
    model; jittered dots), their mean (a bar) and the interval of
    ``result.increments`` (a line); a dashed line at 0 (no gain). A model
    that chose no feature in any fold is drawn at 0 without an interval. For an
    external cohort, the dots are the bootstrap resamples' increments and
    the bar the increment on the whole cohort.

    Parameters
    ----------
    result : IncrementResult or ExternalIncrementResult
        From :func:`vcpcr.validation.validate_increment` or
        :func:`vcpcr.validation.validate_increment_external`.
    axes : array of matplotlib.axes.Axes, optional
        One axes per metric (default: a new figure).

    Returns
    -------
    ndarray of matplotlib.axes.Axes
        The axes, one per metric.
    """
    _check_result(
        result,
        ("increments",),
        "an IncrementResult or ExternalIncrementResult (from "
        "vcpcr.validation.validate_increment or validate_increment_external)",
    )
    metrics = list(result.increments.index.get_level_values("metric").unique())
    models = list(result.increments.index.get_level_values("model").unique())
    if axes is None:
        ncols = min(4, len(metrics))
        nrows = -(-len(metrics) // ncols)
        axes = _pyplot().subplots(
            nrows,
            ncols,
            figsize=(3.2 * ncols, 2.8 * nrows),
            layout="constrained",
            squeeze=False,
        )[1]
    axes = _several_axes(axes, len(metrics), f"one per metric: {', '.join(metrics)}")
    rng = np.random.default_rng(0)
    points = getattr(result, "fold_increments", None)
    size, shade = 10, 0.5
    if points is None:  # an external cohort's bootstrap resamples
        points, size, shade = result.resample_increments, 6, 0.3
    for ax, metric in zip(axes, metrics, strict=False):
        for i, model in enumerate(models):
            d = points.loc[points["model"] == model, metric].to_numpy(dtype=float)
            ax.scatter(i + rng.uniform(-0.15, 0.15, d.size), d, s=size, alpha=shade)
            row = result.increments.loc[(model, metric)]
            ax.hlines(row["increment"], i - 0.3, i + 0.3, colors="black")
            if np.isfinite(row["ci_low"]):
                ax.vlines(i, row["ci_low"], row["ci_high"], colors="black", lw=2)
        ax.axhline(0.0, color="grey", ls="--", lw=1)
        ax.set_xticks(range(len(models)), models, fontsize=8)
        ax.set_xlim(-0.6, len(models) - 0.4)
        status = result.increments.xs(metric, level="metric").get("status")
        lower = status is not None and bool((status == "lower is better").any())
        better = "lower" if lower else "higher"
        ax.set_title(f"{metric} ({better} is better)", fontsize=9)
    for ax in axes[len(metrics) :]:
        ax.set_visible(False)
    axes[0].set_ylabel("increment over clinical")
    return axes


def plot_decision_curve(
    result: pd.DataFrame, ax: Any = None, *, ylim: tuple[float, float] | None = None
) -> Any:
    """Draw a decision curve: net benefit against the threshold probability.

    Draws the frame of :func:`vcpcr.validation.decision_curve`: one line per
    model, treat-all (grey) and treat-none (black, at 0), with the bootstrap
    band of each model when the frame has ``ci_low`` and ``ci_high``.

    Parameters
    ----------
    result : pandas.DataFrame
        From :func:`vcpcr.validation.decision_curve` (columns ``model``,
        ``threshold``, ``net_benefit``, optionally ``ci_low`` and
        ``ci_high``).
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure, with the legend outside).
    ylim : tuple of float, optional
        Limits of the net benefit axis (default: from a little below 0 to a
        little above the largest net benefit or band, since treat-all falls far
        below 0 at high thresholds).

    Returns
    -------
    matplotlib.axes.Axes
        The axes.
    """
    needed = {"model", "threshold", "net_benefit"}
    if not isinstance(result, pd.DataFrame) or not needed <= set(result.columns):
        raise TypeError(
            f"result must be the DataFrame of vcpcr.validation.decision_curve "
            f"(columns {sorted(needed)}); got a {type(result).__name__}."
        )
    if result["net_benefit"].notna().sum() == 0:
        raise ValueError(
            "result holds no net benefit (an empty frame, or NaN only): "
            "nothing to draw. Pass the frame vcpcr.validation.decision_curve "
            "returned."
        )
    if ylim is not None:
        pair = np.asarray(ylim, dtype=object).ravel()
        if pair.size != 2 or not all(
            isinstance(v, numbers.Real) and np.isfinite(float(v)) for v in pair
        ):
            raise ValueError(
                f"ylim must be a pair of finite numbers (low, high), e.g. "
                f"(-0.05, 0.3); got {ylim!r}."
            )
    own = ax is None
    ax = _axes(ax, figsize=(8, 5))
    band = {"ci_low", "ci_high"} <= set(result.columns)
    styles = {"all": {"color": "0.55", "lw": 1.5}, "none": {"color": "black", "lw": 1}}
    labels = {"all": "treat all", "none": "treat none"}
    for model, g in result.groupby("model", sort=False):
        style = styles.get(str(model), {"lw": 2})
        (line,) = ax.plot(
            g["threshold"],
            g["net_benefit"],
            label=labels.get(str(model), model),
            **style,
        )
        if band and model not in styles:
            ax.fill_between(
                g["threshold"],
                g["ci_low"],
                g["ci_high"],
                color=line.get_color(),
                alpha=0.15,
                lw=0,
            )
    if ylim is None:
        top = float(np.nanmax(result["ci_high" if band else "net_benefit"]))
        top = top if top > 0 else 0.05
        ylim = (-0.1 * top - 0.01, 1.1 * top)
    ax.set(
        xlim=(float(result["threshold"].min()), float(result["threshold"].max())),
        ylim=ylim,
        xlabel="Threshold probability",
        ylabel="Net benefit",
        title="Decision curve" + (" (bands: bootstrap intervals)" if band else ""),
    )
    _legend(ax, own, fontsize="small", frameon=False)
    if own:
        _fit_in_figure(ax.figure)
    return ax


def _ticks(low: float, high: float, n: int = 6) -> NDArray[np.float64]:
    """Round tick values within ``[low, high]`` (matplotlib's locator)."""
    from matplotlib.ticker import MaxNLocator

    if not high > low:
        return np.array([low])
    values = np.asarray(MaxNLocator(nbins=n).tick_values(low, high), dtype=np.float64)
    slack = 1e-9 * (high - low)
    return values[(values >= low - slack) & (values <= high + slack)]


def _scale_row(
    ax: Any,
    y: float,
    x: NDArray[np.float64],
    labels: list[str],
    name: str,
    span: tuple[float, float] | None = None,
) -> None:
    """Draw one nomogram scale: a line over ``span``, ticks at ``x``, labels."""
    ends = span if span is not None else (x.min(), x.max()) if x.size else None
    if ends is not None:
        ax.plot(list(ends), [y, y], color="black", lw=1)
    ax.vlines(x, y, y + 0.12, color="black", lw=1)
    order = np.argsort(x)
    for rank, k in enumerate(order):
        # close labels (levels of a categorical term) alternate above and below
        crowded = rank > 0 and x[k] - x[order[rank - 1]] < 6
        below = crowded and rank % 2 == 1
        ax.text(
            x[k],
            y - 0.12 if below else y + 0.17,
            labels[k],
            ha="center",
            va="top" if below else "bottom",
            fontsize="small",
        )
    ax.text(-3, y, name, ha="right", va="center", fontsize="medium")


def _spaced(
    x: NDArray[np.float64], keep: NDArray[np.bool_], gap: float = 3.5
) -> NDArray[np.bool_]:
    """Return ``keep`` without the ticks closer than ``gap`` to the last one kept.

    From left to right, so that a probability scale's labels do not overlap
    where the scale is compressed (near 0 and 1).
    """
    out = np.zeros_like(keep)
    last = -np.inf
    for k in np.argsort(x):
        if keep[k] and x[k] - last >= gap:
            out[k], last = True, x[k]
    return out


def _label(value: float) -> str:
    return f"{value:g}"


def _prediction_rows(chart: Nomogram) -> list[tuple[str, Any, NDArray[np.float64]]]:
    """Return the bottom scales: (name, stratum, prediction values) of each."""
    total = float(chart.terms["max_points"].sum())
    if chart.family == "gaussian":
        ends = chart.predict_points([0.0, total])
        return [
            ("Predicted " + chart.rule.outcome, None, _ticks(ends.min(), ends.max()))
        ]
    grid = np.array(
        [0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99]
    )
    if chart.family == "binomial":
        return [(f"P({chart.rule.outcome} = {chart.rule.classes[1]})", None, grid)]  # type: ignore[index]
    strata = list(chart.baseline.index)
    return [
        (
            f"S({chart.horizon:g})" + ("" if len(strata) == 1 else f", {stratum}"),
            stratum,
            grid,
        )
        for stratum in strata
    ]


def plot_nomogram(
    model: Any, X: Any = None, *, horizon: float | None = None, ax: Any = None
) -> Any:
    """Draw the nomogram of a fitted model: points per term, total to prediction.

    A row of points (0 to 100) on top; one scale per covariate and one for
    the signature's prognostic index, whose values sit at their points; the
    total points; and the prediction at the total (survival at ``horizon``
    for cox, one scale per stratum; the event probability for binomial; the
    response for gaussian). Read a patient by summing the points of their
    values and reading the prediction below the total.

    Parameters
    ----------
    model : VCPCR, VCPCRCV or Nomogram
        A fitted model (then the scales are :func:`vcpcr.validation.nomogram`
        of ``X``), or the scales themselves.
    X : array-like or DataFrame, optional
        With a model: the data whose ranges the scales span (the training
        data, usually).
    horizon : float, optional
        With a Cox model: the time of the survival probabilities.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        The axes.

    See Also
    --------
    vcpcr.validation.nomogram : The scales, and the points of values.
    """
    if isinstance(model, Nomogram):
        chart = model
    else:
        if X is None:
            raise ValueError(
                "plot_nomogram needs X, the data whose ranges the scales span "
                "(the training data, usually): plot_nomogram(model, X, ...)."
            )
        chart = nomogram(model, X, horizon=horizon)
    rows = _prediction_rows(chart)
    n_rows = 2 + len(chart.terms) + len(rows)
    own = ax is None
    ax = _axes(ax, figsize=(9, 0.62 * n_rows + 0.6))
    points = np.arange(0, 101, 10, dtype=np.float64)
    _scale_row(ax, 0, points, [_label(p) for p in points], "Points")
    y = 0.0
    for term, row in chart.terms.iterrows():
        y -= 1
        ends = None
        if row["kind"] == "categorical":
            levels = chart.levels[str(term)]
            x = levels.to_numpy(dtype=np.float64)
            labels = [str(v) for v in levels.index]
        else:
            values = _ticks(float(row["low"]), float(row["high"]))
            x = chart.term_points(str(term), values)
            labels = [_label(v) for v in values]
            span = chart.term_points(str(term), [row["low"], row["high"]])
            ends = (float(span.min()), float(span.max()))
        _scale_row(ax, y, x, labels, str(term), ends)
    total = float(chart.terms["max_points"].sum())
    stretch = 100.0 / total
    totals = _ticks(0.0, total, 8)
    y -= 1
    _scale_row(
        ax, y, totals * stretch, [_label(t) for t in totals], "Total points", (0, 100)
    )
    for name, stratum, values in rows:
        y -= 1
        at = chart.total_points_at(values, stratum)
        keep = _spaced(at * stretch, (at >= -1e-9) & (at <= total + 1e-9))
        _scale_row(ax, y, at[keep] * stretch, [_label(v) for v in values[keep]], name)
    ax.set(xlim=(-1, 101), ylim=(y - 0.6, 0.7))
    ax.axis("off")
    what = {
        "cox": f"survival at t = {chart.horizon or 0:g}",
        "binomial": "probability of the event",
    }.get(chart.family, "predicted response")
    ax.set_title(f"Nomogram: clinical covariates and signature, {what}")
    if own:
        _fit_in_figure(ax.figure)
    return ax
