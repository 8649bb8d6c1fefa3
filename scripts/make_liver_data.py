"""Build the packaged Liver data from the shared raw files (run once, output committed).

Follows the paper's preprocessing (``Code/Liver/01_Prepare_liver_data.R`` in the
authors' experiment repository): keep the probes with no NA in any of the 135
mice (the raw ``expl`` file already does), drop the outlier mouse F2_221 and the
mice whose weight or length is missing; y = weight_g / length_cm.

Usage: python scripts/make_liver_data.py [RAW_DIR]   (default ../shared/data/liver)
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pandas as pd

raw = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/liver")
out = Path(__file__).resolve().parents[1] / "vcpcr" / "datasets" / "data"

traits = pd.read_csv(raw / "ClinicalTraits.csv", index_col="Mice")
X = pd.read_csv(
    raw / "LiverFemale_noNA_expl_135x2785.csv.gz",
    index_col="Mice",
    float_precision="round_trip",
)
weight = traits.loc[X.index, "weight_g"]
length = traits.loc[X.index, "length_cm"]
y = (weight / length).rename("weight_per_length")
keep = (X.index != "F2_221") & y.notna().to_numpy()
frame = pd.concat([y[keep], weight[keep], length[keep], X[keep]], axis=1)
assert frame.shape == (131, 2788), frame.shape

# gzip with mtime=0 so that rebuilding gives identical bytes.
with open(out / "liver.csv.gz", "wb") as raw_fh:
    with gzip.GzipFile(fileobj=raw_fh, mode="wb", compresslevel=9, mtime=0) as fh:
        fh.write(frame.to_csv().encode())  # repr: shortest exact round trip

annot = pd.read_csv(raw / "gene_annotation_3600_fromGeneInfo.csv", dtype=str)
annot = annot.set_index("substanceBXH").loc[X.columns]
with open(out / "liver_annotation.csv.gz", "wb") as raw_fh:
    with gzip.GzipFile(fileobj=raw_fh, mode="wb", compresslevel=9, mtime=0) as fh:
        fh.write(annot.to_csv().encode())
print(
    f"wrote {out}: X {frame.shape[0]} x {frame.shape[1] - 3}, annotation {annot.shape}"
)
