"""Write the cluster latent variables of a fixed VC-PCR Cox fit (for cox_latent.R).

The fit uses a fixed initial partition, so it is deterministic:
VCPCR(n_clusters=4, family="cox", weights="ridge", init=np.arange(100) % 4,
lam_ratio=0.2) on
data/cox_wide.csv. tests/test_model_cox.py refits it and compares its
coefficients with R's coxph on these latent variables.

Usage: python tests/reference/make_cox_latent.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from vcpcr import VCPCR

HERE = Path(__file__).parent
df = pd.read_csv(HERE / "data" / "cox_wide.csv")
X, y = df.filter(regex=r"^x\d+$"), df[["time", "event"]]
model = VCPCR(
    n_clusters=4,
    family="cox",
    weights="ridge",
    init=np.arange(X.shape[1]) % 4,
    lam_ratio=0.2,
)
model.fit(X, y)
latent = pd.DataFrame(model.transform(X), columns=model.get_feature_names_out())
latent[["time", "event"]] = y.to_numpy()
latent.to_csv(HERE / "data" / "cox_latent.csv", index=False, float_format="%.17g")
print(f"wrote {HERE / 'data' / 'cox_latent.csv'}: {latent.shape}")
