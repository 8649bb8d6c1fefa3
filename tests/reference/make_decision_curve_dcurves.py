"""Net benefit from ``dcurves`` on committed data (tests/test_decision_curve.py).

Run once, in a throwaway environment that has dcurves (never a vcpcr
dependency)::

    python -m venv /tmp/dca && /tmp/dca/bin/pip install dcurves==1.1.7
    /tmp/dca/bin/python tests/reference/make_decision_curve_dcurves.py

It writes ``decision_curve_data.csv`` (simulated: a binary outcome, a survival
outcome and two models' risks for each) and ``decision_curve_dcurves.json``
(dcurves' ``net_benefit`` per model and threshold). It imports nothing from
vcpcr.
"""

import json
from pathlib import Path

import dcurves
import numpy as np
import pandas as pd
from dcurves import dca

HERE = Path(__file__).parent
HORIZON = 2.0
THRESHOLDS = [round(0.01 * k, 2) for k in range(1, 100)]


def make_data(n: int = 250, seed: int = 20261202) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    z = rng.normal(size=n)
    p = 1 / (1 + np.exp(-(-0.6 + 1.2 * x + 0.5 * z)))
    hazard = 0.25 * np.exp(0.8 * x + 0.3 * z)
    t = rng.exponential(1 / hazard)
    c = rng.uniform(0.5, 6.0, n)
    return pd.DataFrame(
        {
            "y": (rng.uniform(size=n) < p).astype(int),
            "risk_x": np.round(1 / (1 + np.exp(-(-0.5 + 1.0 * x))), 6),
            "risk_xz": np.round(p, 6),
            "time": np.round(np.minimum(t, c), 6),
            "event": (t <= c).astype(int),
            "surv_risk_x": np.round(1 - np.exp(-0.25 * np.exp(0.8 * x) * HORIZON), 6),
            "surv_risk_xz": np.round(1 - np.exp(-hazard * HORIZON), 6),
        }
    )


def main() -> None:
    data = make_data()
    data.to_csv(HERE / "decision_curve_data.csv", index=False)
    data = pd.read_csv(HERE / "decision_curve_data.csv")
    binary = dca(
        data=data, outcome="y", modelnames=["risk_x", "risk_xz"], thresholds=THRESHOLDS
    )
    survival = dca(
        data=data,
        outcome="event",
        modelnames=["surv_risk_x", "surv_risk_xz"],
        thresholds=THRESHOLDS,
        time=HORIZON,
        time_to_outcome_col="time",
    )

    def table(frame: pd.DataFrame) -> dict:
        return {
            str(model): {
                "threshold": g["threshold"].round(2).tolist(),
                "net_benefit": g["net_benefit"].tolist(),
            }
            for model, g in frame.groupby("model", sort=False)
        }

    out = {
        "dcurves_version": dcurves.__version__
        if hasattr(dcurves, "__version__")
        else "1.1.7",
        "horizon": HORIZON,
        "binary": table(binary),
        "survival": table(survival),
    }
    (HERE / "decision_curve_dcurves.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
