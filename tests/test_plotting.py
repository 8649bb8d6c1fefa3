"""The figures render headless (Agg) and draw what they should."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone
from sklearn.model_selection import KFold

matplotlib.use("Agg")

from vcpcr import VCPCR, VCPCRCV, VCPCRWarning
from vcpcr._tuning import selected_index
from vcpcr.plotting import plot_clusters, plot_cv, plot_path
from vcpcr.simulate import make_block_data


@pytest.fixture(scope="module")
def models():
    from conftest import make_blocks

    X, y, _, _ = make_blocks()
    cv = VCPCRCV(
        n_clusters=(2, 3),
        cv=KFold(3, shuffle=True, random_state=0),
        n_init=2,
        random_state=0,
    )
    return cv.fit(X, y), X, y


def _saved(ax, path):
    ax.figure.savefig(path)
    matplotlib.pyplot.close(ax.figure)
    return path.stat().st_size


def test_plot_cv(models, tmp_path):
    cv, _, _ = models
    ax = plot_cv(cv)
    assert ax.get_ylabel() == "CV pooled deviance"  # the default scoring
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    for tag in ("min", "1se", "paired"):  # a line where each selection rule is
        (line,) = [li for li in ax.lines if li.get_label() == tag]
        index = selected_index(cv.cv_results_, tag, cv.n_splits_)
        assert line.get_xdata()[0] == cv.cv_results_["mean_size"].iloc[index]
    assert "other (K, delta)" in labels  # the grey lines are named once
    assert labels.count("other (K, delta)") == 1
    assert _saved(ax, tmp_path / "cv.png") > 5000
    ax = plot_cv(cv, x="lam_ratio")
    assert ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="x must be"):
        plot_cv(cv, x="delta")


def test_plot_cv_marks_the_fitted_gate(models):
    """With n_se set, the chosen rule's line is at the chosen point (the
    fitted gate), the other rules' at their defaults."""
    cv, X, y = models
    wide = clone(cv).set_params(n_se=3.0).fit(X, y)
    assert wide.best_index_ != cv.best_index_  # the gate matters here
    ax = plot_cv(wide)
    sizes = wide.cv_results_["mean_size"]
    (paired,) = [li for li in ax.lines if li.get_label() == "paired"]
    assert paired.get_xdata()[0] == sizes.iloc[wide.best_index_]
    (one,) = [li for li in ax.lines if li.get_label() == "1se"]
    default = selected_index(wide.cv_results_, "1se", wide.n_splits_)
    assert one.get_xdata()[0] == sizes.iloc[default]
    matplotlib.pyplot.close(ax.figure)


def test_plot_cv_draws_a_peers_curve_and_the_chosen_point(tmp_path):
    """The peer's curve (VCPCRCV.peer_curve) on the same axes, in size order,
    and a star at the chosen point; against lam_ratio a peer has no place."""
    data = make_block_data(50, [4, 4], [1.0, 0.0], n_noise=8, random_state=0)
    cv = VCPCRCV(
        n_clusters=(2,), n_init=1, random_state=0, scoring="neg_pooled_deviance"
    ).fit(data.X, data.y)
    peer = pd.DataFrame(
        {"mean_size": [9.0, 1.0, 4.0], "mean_test_score": [-1.0, -3.0, -2.0]}
    )
    ax = plot_cv(cv, peer=peer, peer_label="ElasticNet")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "ElasticNet" in labels
    line = next(li for li in ax.get_lines() if li.get_label() == "ElasticNet")
    assert_allclose(line.get_xdata(), [1.0, 4.0, 9.0])
    assert_allclose(line.get_ydata(), [3.0, 2.0, 1.0])  # the positive deviance
    star = next(li for li in ax.get_lines() if li.get_label().startswith("chosen"))
    chosen = cv.cv_results_.iloc[cv.best_index_]
    assert_allclose(star.get_xdata(), [chosen["mean_size"]])
    assert_allclose(star.get_ydata(), [-chosen["mean_test_score"]])
    assert _saved(ax, tmp_path / "peer.png") > 5000
    with pytest.raises(ValueError, match="x='mean_size'"):
        plot_cv(cv, x="lam_ratio", peer=peer)


def test_plot_clusters(models, tmp_path):
    cv, X, _ = models
    ax = plot_clusters(cv, X)
    n_sel = int((cv.best_estimator_.labels_ >= 0).sum())
    assert ax.images[0].get_array().shape == (n_sel, n_sel)
    model = cv.best_estimator_
    # the absolute correlations of the selected variables, in cluster order:
    # numpy's, on the raw columns, up to the order
    corr = np.asarray(ax.images[0].get_array())
    ref = np.abs(np.corrcoef(X[:, model.labels_ >= 0], rowvar=False))
    assert_allclose(np.sort(corr, axis=None), np.sort(ref, axis=None), atol=1e-12)
    clusters = np.sort(model.labels_[model.labels_ >= 0])
    within = clusters[:, None] == clusters[None, :]
    assert corr[within].mean() > corr[~within].mean()
    # a legend names every cluster colour, in summary()'s names
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == list(model.membership_.columns)
    # the cluster strip shows, row by row, the legend colour of the row's cluster
    strip = next(a for a in ax.figure.axes if a is not ax and a.images)
    rows = strip.images[0].get_array()[:, 0, :]
    patches = ax.get_legend().legend_handles
    sizes = [len(m) for m in model.clusters_.values()]
    starts = np.cumsum([0, *sizes[:-1]])
    for k, start in enumerate(starts):
        assert np.allclose(rows[start], patches[k].get_facecolor())
    # variable names label the rows (few variables), white lines part clusters
    ticks = [t.get_text() for t in strip.get_yticklabels()]
    assert ticks == [m for members in model.clusters_.values() for m in members]
    assert len(ax.lines) == 2 * (model.n_clusters_ - 1)
    assert _saved(ax, tmp_path / "clusters.png") > 5000


def test_plot_clusters_nothing_selected(models):
    _, X, y = models
    model = VCPCR(lam_ratio=1.0, n_init=1, random_state=0)
    with pytest.warns(VCPCRWarning, match="No feature was selected"):
        model.fit(X, y)
    with pytest.raises(ValueError, match="selected no feature"):
        plot_clusters(model, X)


def test_plot_path_from_cv_and_from_model(models, tmp_path):
    cv, X, y = models
    ax = plot_path(cv)
    sizes = ax.lines[0].get_ydata()
    assert len(sizes) == 20  # the default lam_ratios of penalized weights
    assert _saved(ax, tmp_path / "path_cv.png") > 3000
    model = VCPCR(n_clusters=2, n_init=2, random_state=0)
    ax = plot_path(model, X, y, lam_ratios=[0.01, 0.3, 0.6, 1.0])
    sizes = ax.lines[0].get_ydata()
    assert sizes[-1] == 0
    assert np.all(np.diff(sizes) <= 0)
    fitted = VCPCR(n_clusters=2, n_init=2, lam_ratio=0.3, random_state=0).fit(X, y)
    assert sizes[1] == int((fitted.labels_ >= 0).sum())  # the path's 0.3 == the fit
    with pytest.raises(ValueError, match="needs X"):
        plot_path(model)


def test_plot_cv_of_one_grid_point_has_a_range_around_it(models):
    """One lam_ratio: the log axis collapsed to 0.1 +- 1e-17 and showed
    nothing; one size: the point sat on the right spine."""
    cv0, X, y = models
    cv = VCPCRCV(
        n_clusters=2,
        deltas=[cv0.best_params_["delta"]],
        lam_ratios=[0.1],
        cv=KFold(3),
        n_init=1,
        random_state=0,
    ).fit(X, y)
    ax = plot_cv(cv, x="lam_ratio")
    low, high = ax.get_xlim()
    assert low < 0.1 / 2
    assert high > 0.1 * 2
    matplotlib.pyplot.close(ax.figure)
    ax = plot_cv(cv)
    size = cv.cv_results_["mean_size"].iloc[0]
    assert ax.get_xlim()[1] > 2 * size
    matplotlib.pyplot.close(ax.figure)
    fig, axes = matplotlib.pyplot.subplots(2, 2)
    with pytest.raises(
        TypeError,
        match=r"ax must be one matplotlib Axes; got a ndarray of shape \(2, 2\)",
    ):
        plot_cv(cv0, ax=axes)
    matplotlib.pyplot.close(fig)


def test_plot_path_counts_on_whole_ticks(models):
    """The cluster axis read 0.0, 0.2, ..., 1.0 for one cluster."""
    _, X, y = models
    model = VCPCR(n_clusters=1, n_init=1, random_state=0)
    ax = plot_path(model, X, y, lam_ratios=[0.01, 0.3, 1.0])
    right = next(a for a in ax.figure.axes if a is not ax)
    for axis in (ax, right):
        ticks = axis.get_yticks()
        assert_allclose(ticks, np.round(ticks))
    assert [t.get_text() for t in right.get_legend().get_texts()] == [
        "selected features",
        "clusters",
    ]
    matplotlib.pyplot.close(ax.figure)


def test_cluster_colours_beyond_ten_are_distinct():
    """tab20 in order gave clusters 1 and 2 two near-identical blues."""
    from vcpcr.plotting import _cluster_colors

    colors = _cluster_colors(12)[:, :3]
    gaps = np.linalg.norm(colors[:, None] - colors[None], axis=2)
    assert gaps[np.triu_indices(12, 1)].min() > 0.15


def test_plotting_helpers_name_the_result_they_draw(models):
    """Another object (a string, an int, None, cv_results_, an empty frame, a
    bad ylim) met an AttributeError inside, or matplotlib's and numpy's
    errors (#46 fuzz)."""
    from vcpcr.plotting import (
        plot_calibration,
        plot_decision_curve,
        plot_increments,
        plot_stability,
    )

    cv, _, _ = models
    for call, match in [
        (lambda: plot_calibration("result"), "must be a CalibrationResult"),
        (lambda: plot_increments(3), "must be an IncrementResult"),
        (lambda: plot_stability(None), "must be a StabilityResult"),
        (lambda: plot_cv(pd.DataFrame(cv.cv_results_)), "not its cv_results_"),
    ]:
        with pytest.raises(TypeError, match=match):
            call()
    curve = pd.DataFrame(
        {"model": ["m", "m"], "threshold": [0.1, 0.2], "net_benefit": [0.05, 0.02]}
    )
    with pytest.raises(ValueError, match="holds no net benefit"):
        plot_decision_curve(curve.iloc[:0])
    with pytest.raises(ValueError, match="ylim must be a pair of finite numbers"):
        plot_decision_curve(curve, ylim="0,1")
    ax = plot_decision_curve(curve, ylim=(-0.05, 0.1))
    assert ax.get_ylim() == pytest.approx((-0.05, 0.1))
    matplotlib.pyplot.close(ax.figure)
