"""decision_curve: net benefit by hand and against dcurves; intervals; checks."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from vcpcr.plotting import plot_decision_curve
from vcpcr.validation import decision_curve

matplotlib.use("Agg")

REFERENCE = Path(__file__).parent / "reference"


def _nb(frame: pd.DataFrame, model: str) -> np.ndarray:
    return frame.loc[frame["model"] == model, "net_benefit"].to_numpy()


def test_binary_net_benefit_by_hand():
    # y = 0 0 1 1, risk = .10 .40 .35 .80, n = 4.
    # p_t = 0.3: treated = rows with risk >= .3 = rows 2, 3, 4 -> TP = 2, FP = 1:
    #   NB = 2/4 - 1/4 * .3/.7 = 0.5 - 0.107142857 = 0.392857143.
    #   treat all: TP = 2, FP = 2: 0.5 - 0.5 * .3/.7 = 0.285714286.
    # p_t = 0.5: treated = row 4 only -> TP = 1, FP = 0: NB = 0.25;
    #   treat all: 0.5 - 0.5 * 1 = 0.
    dc = decision_curve(
        [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], thresholds=[0.3, 0.5], n_bootstrap=0
    )
    assert list(dc.columns) == ["model", "threshold", "net_benefit"]
    assert dc["model"].tolist() == ["model"] * 2 + ["all"] * 2 + ["none"] * 2
    assert_allclose(_nb(dc, "model"), [0.5 - 0.25 * 3 / 7, 0.25], rtol=0, atol=1e-12)
    assert_allclose(_nb(dc, "all"), [0.5 - 0.5 * 3 / 7, 0.0], rtol=0, atol=1e-12)
    assert_allclose(_nb(dc, "none"), [0.0, 0.0], rtol=0, atol=0)


def test_survival_net_benefit_by_hand():
    # time 1 2 3 4, event 1 0 1 0, risk by horizon 3.5 = .2 .6 .7 .9.
    # p_t = 0.4: treated = rows 2, 3, 4 (share 3/4). Kaplan-Meier among them:
    #   t = 3: 2 at risk (times 3, 4), 1 event -> S(3.5) = 0.5;
    #   TP/n = 3/4 * 0.5 = 0.375, FP/n = 0.375: NB = 0.375 - 0.375 * .4/.6 = 0.125.
    # treat all: t = 1: 4 at risk, 1 event -> .75; t = 3: 2 at risk, 1 event ->
    #   S = 0.375: TP/n = 0.625, FP/n = 0.375: NB = 0.625 - 0.25 = 0.375.
    # p_t = 0.8: treated = row 4 only, censored at 4 > 3.5: S = 1, TP = 0,
    #   FP/n = 1/4: NB = -0.25 * 4 = -1.
    y = np.column_stack([[1.0, 2, 3, 4], [1, 0, 1, 0]])
    dc = decision_curve(
        y, [0.2, 0.6, 0.7, 0.9], horizon=3.5, thresholds=[0.4, 0.8], n_bootstrap=0
    )
    assert_allclose(_nb(dc, "model"), [0.125, -1.0], rtol=0, atol=1e-12)
    assert_allclose(_nb(dc, "all")[0], 0.375, rtol=0, atol=1e-12)


def _reference():
    data = pd.read_csv(REFERENCE / "decision_curve_data.csv")
    ref = json.loads((REFERENCE / "decision_curve_dcurves.json").read_text())
    return data, ref


@pytest.mark.parametrize(
    ("kind", "models", "outcome", "horizon"),
    [
        ("binary", ["risk_x", "risk_xz"], ["y"], None),
        ("survival", ["surv_risk_x", "surv_risk_xz"], ["time", "event"], 2.0),
    ],
    ids=["binary", "survival"],
)
def test_net_benefit_against_dcurves(kind, models, outcome, horizon):
    """dcurves 1.1.7: ``dca(data, outcome, modelnames, thresholds, time=2)``.

    See ``tests/reference/make_decision_curve_dcurves.py``. dcurves gives NaN
    where no treated row is followed up to the horizon (14 and 11 thresholds
    of the two survival models); there vcpcr carries the treated rows'
    Kaplan-Meier estimate forward from their last time, compared with
    lifelines' ``KaplanMeierFitter.survival_function_at_times``, which does
    the same.
    """
    data, ref = _reference()
    y = data[outcome[0]] if horizon is None else data[outcome]
    dc = decision_curve(y, {m: data[m] for m in models}, horizon=horizon, n_bootstrap=0)
    worst = 0.0
    for model, table in ref[kind].items():
        thresholds = np.array(table["threshold"])
        expected = np.array(table["net_benefit"], dtype=float)
        mine = dc[dc["model"] == model].set_index("threshold")["net_benefit"]
        keep = thresholds > 0  # dcurves starts at 0, outside (0, 1)
        got = mine.loc[thresholds[keep]].to_numpy()
        finite = np.isfinite(expected[keep])
        assert_allclose(got[finite], expected[keep][finite], rtol=0, atol=1e-12)
        worst = max(worst, float(np.max(np.abs(got[finite] - expected[keep][finite]))))
        if not finite.all():  # lifelines: the survival extra, absent in CI's core job
            KaplanMeierFitter = pytest.importorskip("lifelines").KaplanMeierFitter
        for t in thresholds[keep][~finite]:
            treated = data[model] >= t
            assert (data.loc[treated, "time"] < horizon).all()
            km = KaplanMeierFitter().fit(
                data.loc[treated, "time"], data.loc[treated, "event"]
            )
            s = float(km.survival_function_at_times(horizon).iloc[0])
            share = treated.mean()
            nb = share * (1 - s) - share * s * t / (1 - t)
            assert_allclose(mine.loc[t], nb, rtol=0, atol=1e-12)
    assert worst < 1e-12  # measured: 7e-15 (binary), 4e-14 (survival)


def test_bootstrap_bands_are_seeded_and_ordered():
    data, _ = _reference()
    risks = {"x": data["risk_x"], "xz": data["risk_xz"]}
    a = decision_curve(
        data["y"], risks, thresholds=[0.1, 0.3], n_bootstrap=50, random_state=3
    )
    b = decision_curve(
        data["y"], risks, thresholds=[0.1, 0.3], n_bootstrap=50, random_state=3
    )
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["model", "threshold", "net_benefit", "ci_low", "ci_high"]
    assert (a["ci_low"] <= a["ci_high"]).all()
    assert (a["ci_high"] - a["ci_low"]).loc[a["model"] != "none"].gt(0.01).all()
    none = a[a["model"] == "none"]
    assert (none[["ci_low", "ci_high"]] == 0).all(axis=None)
    # the bands hold the estimate on these data (percentile bands of a smooth mean)
    assert (
        (a["ci_low"] <= a["net_benefit"]) & (a["net_benefit"] <= a["ci_high"])
    ).all()


def test_survival_bands_against_a_loop_over_resamples():
    """The bootstrap weights equal refitting on the resampled rows."""
    data, _ = _reference()
    y = data[["time", "event"]].to_numpy()
    r = data["surv_risk_x"].to_numpy()
    dc = decision_curve(
        y,
        r,
        horizon=2.0,
        thresholds=[0.2, 0.5],
        n_bootstrap=20,
        random_state=np.random.default_rng(7),
        alpha=0.5,
    )
    rng = np.random.default_rng(7)
    draws = []
    for _ in range(20):
        rows = rng.integers(0, len(r), len(r))
        one = decision_curve(
            y[rows], r[rows], horizon=2.0, thresholds=[0.2, 0.5], n_bootstrap=0
        )
        draws.append(_nb(one, "model"))
    low, high = np.percentile(draws, [25, 75], axis=0)
    got = dc[dc["model"] == "model"]
    assert_allclose(got["ci_low"], low, rtol=0, atol=1e-12)
    assert_allclose(got["ci_high"], high, rtol=0, atol=1e-12)


def test_pandas_risks_paired_by_label():
    y = pd.Series([0, 1, 0, 1, 1], index=list("abcde"))
    risk = pd.Series([0.2, 0.7, 0.1, 0.9, 0.6], index=list("abcde"))
    decision_curve(y, risk, n_bootstrap=0)  # same order: fine
    with pytest.raises(ValueError, match=r"another order.*y = y.loc\[X.index\]"):
        decision_curve(y, risk.iloc[::-1], n_bootstrap=0)


_Y = [0, 1, 0, 1, 1, 0]
_R = [0.2, 0.7, 0.1, 0.9, 0.6, 0.4]
_S = np.column_stack([[1.0, 2, 3, 4, 5, 6], [1, 0, 1, 1, 0, 0]])

BAD = {
    "threshold_zero": (
        {"thresholds": [0.0, 0.5]},
        r"thresholds.*strictly between 0 and 1",
    ),
    "threshold_one": ({"thresholds": [1.0]}, r"strictly between 0 and 1.*\[1\.0\]"),
    "threshold_nan": ({"thresholds": [np.nan]}, r"strictly between 0 and 1"),
    "threshold_empty": ({"thresholds": []}, r"non-empty 1-d array"),
    "threshold_2d": ({"thresholds": [[0.1, 0.2]]}, r"non-empty 1-d array"),
    "risk_above_one": (
        {"risk": [0.2, 1.7, 0.1, 0.9, 0.6, 0.4]},
        r"risk must hold probabilities in \[0, 1\]; 1 value",
    ),
    "risk_nan": (
        {"risk": [0.2, np.nan, 0.1, 0.9, 0.6, 0.4]},
        r"risk contains 1 NaN.*position 1",
    ),
    "risk_length": ({"risk": [0.2, 0.3]}, r"risk has 2 entries but y has 6"),
    "risk_named_all": ({"risk": {"all": _R}}, r"model named 'all'"),
    "risk_empty_dict": ({"risk": {}}, r"empty dict"),
    "risk_dict_entry": (
        {"risk": {"m": [0.2] * 5 + [-0.1]}},
        r"risk\['m'\] must hold probabilities",
    ),
    "y_not_binary": ({"y": [0, 1, 2, 1, 1, 0]}, r"coded 0/1"),
    "survival_without_horizon": ({"y": _S}, r"survival outcome.*pass horizon="),
    "horizon_beyond_follow_up": (
        {"y": _S, "horizon": 6.0},
        r"'horizon'.*last follow-up time \(6",
    ),
    "horizon_before_first_event": (
        {"y": _S, "horizon": 0.5},
        r"'horizon'.*first event time \(1",
    ),
    "n_bootstrap_negative": ({"n_bootstrap": -1}, r"n_bootstrap"),
    "alpha_one": ({"alpha": 1.0}, r"alpha"),
}


@pytest.mark.parametrize(("change", "match"), BAD.values(), ids=BAD.keys())
def test_bad_input_is_refused_with_its_fix(change, match):
    args = {"y": _Y, "risk": _R, "n_bootstrap": 0} | change
    with pytest.raises(ValueError, match=match):
        decision_curve(args.pop("y"), args.pop("risk"), **args)


def test_n_bootstrap_must_be_an_integer():
    with pytest.raises(TypeError, match=r"n_bootstrap"):
        decision_curve(_Y, _R, n_bootstrap=2.5)


def test_plot_decision_curve(tmp_path):
    data, _ = _reference()
    dc = decision_curve(
        data[["time", "event"]],
        {"x": data["surv_risk_x"]},
        horizon=2.0,
        n_bootstrap=20,
        random_state=0,
    )
    ax = plot_decision_curve(dc)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["x", "treat all", "treat none"]
    assert len(ax.collections) == 1  # one band: the model's
    assert ax.get_legend() is not None
    assert ax.get_ylim()[1] >= dc["ci_high"].max()
    ax.figure.savefig(tmp_path / "dca.png")
    matplotlib.pyplot.close(ax.figure)
    fig, caller = matplotlib.pyplot.subplots()
    position = caller.get_position().bounds
    assert plot_decision_curve(dc, caller) is caller
    assert caller.get_position().bounds == position  # the caller's layout kept
    matplotlib.pyplot.close(fig)
    with pytest.raises(
        TypeError, match=r"DataFrame of vcpcr.validation.decision_curve"
    ):
        plot_decision_curve(dc.to_numpy())
