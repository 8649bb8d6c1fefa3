"""Record cv_results_ of the fixed VCPCRCV cases of tests/test_cv_scoring.py.

The values were recorded with the per-point step-2 path (a statsmodels /
lifelines fit and a scikit-learn scorer per grid point), before the batched
scoring of issue #9; the test checks that the batched path reproduces them.
Rerun only if the cases or the step-0/1 engines change on purpose.

Usage: python tests/reference/make_cv_scores.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from test_cv_scoring import CASES, COLUMNS, REFERENCE, cv_results  # noqa: E402


def main() -> None:
    """Write reference/cv_scores.json."""
    out = {}
    for case in CASES:
        res, messages = cv_results(case)
        out[case] = {col: res[col].astype(float).tolist() for col in COLUMNS}
        out[case]["warnings"] = messages
        print(case, res["mean_test_score"].max(), messages)
    REFERENCE.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {REFERENCE}")


if __name__ == "__main__":
    main()
