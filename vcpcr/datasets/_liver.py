"""The "Liver" gene-expression data of the VC-PCR paper."""

from __future__ import annotations

from importlib import resources
from typing import Any

import pandas as pd

__all__ = ["load_liver"]

# pandas 3 parses floats exactly by default (and deprecates the option);
# pandas 2 needs "round_trip" for the shortest repr to give the same double.
_EXACT_FLOATS = (
    {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
)

DESCR = """\
Female mouse liver gene expression (Ghazalpour et al., 2006)
=============================================================

131 female mice of a BxH ApoE-/- F2 intercross fed a Western diet for 16
weeks; 2785 liver expression probes; response: body weight (g) divided by body
length (cm). This is the "Liver" data set of the VC-PCR paper.

Source
------
The WGCNA tutorial data (Langfelder & Horvath), files LiverFemale3600.csv and
ClinicalTraits.csv, as redistributed by the VC-PCR authors' experiment
repository (rebeccamarion/VC-PCR-Experiments) and other public repositories.
Underlying study: GEO GSE2814. No licence was stated for the tutorial files;
they were handed out as teaching data and the study is openly published.

Preprocessing (as the paper's Code/Liver/01_Prepare_liver_data.R)
-----------------------------------------------------------------
* keep the 2785 of 3600 probes with no missing value in any of the 135 mice;
* drop the outlier mouse F2_221;
* drop the mice whose weight or length is missing (F2_144, F2_145, F2_222);
* y = weight_g / length_cm (mean 3.730, sd 0.539).

The paper then samples n = 50 mice with R's set.seed(821) and screens 195
probes by PLS; that R random draw cannot be reproduced in Python.

Columns of ``frame``: ``weight_per_length`` (the target), ``weight_g``,
``length_cm``, then the probes (substanceBXH identifiers, e.g. MMT00000044).
``annotation`` maps each probe to its gene symbol and Entrez (LocusLink) ID
(missing for about 15% of the probes).

References
----------
Ghazalpour A. et al. (2006). Integrating genetic and network analysis to
characterize genes related to mouse weight. PLoS Genetics 2(8): e130.
Langfelder P., Horvath S. (2008). WGCNA: an R package for weighted correlation
network analysis. BMC Bioinformatics 9: 559.
"""


def _symbol_names(columns: pd.Index, annotation: pd.DataFrame) -> list[str]:
    """Gene symbol of each probe where known and unique, else the probe ID."""
    symbols = annotation["geneSymbol"].reindex(columns)
    counts = symbols.value_counts()
    return [
        s if isinstance(s, str) and counts[s] == 1 else probe
        for probe, s in zip(columns, symbols, strict=True)
    ]


def load_liver(*, return_X_y: bool = False, gene_symbols: bool = False) -> Any:
    """Load the paper's Liver data: 131 mice x 2785 liver expression probes.

    The response is body weight divided by body length (g/cm). See ``DESCR``
    for the provenance and preprocessing.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.
    gene_symbols : bool, default=False
        Name the columns of ``data`` (and ``frame``) by gene symbol where the
        annotation gives one that no other probe shares, else by probe ID;
        ``annotation`` stays indexed by probe ID (``probe_ids`` lists them in
        column order).

    Returns
    -------
    sklearn.utils.Bunch or tuple of (pandas.DataFrame, pandas.Series)
        A Bunch with ``data`` (DataFrame 131 x 2785), ``target`` (Series
        ``weight_per_length``), ``frame`` (target, weight, length and probes),
        ``feature_names``, ``probe_ids``, ``target_names``, ``annotation``
        (DataFrame indexed by probe: ``geneSymbol``, ``LocusLinkID``) and
        ``DESCR``; or ``(data, target)``.

    References
    ----------
    .. [1] Ghazalpour A. et al. (2006). Integrating genetic and network analysis
       to characterize genes related to mouse weight. PLoS Genetics 2(8): e130.

    Examples
    --------
    >>> from vcpcr.datasets import load_liver
    >>> X, y = load_liver(return_X_y=True)
    >>> X.shape, y.name
    ((131, 2785), 'weight_per_length')
    >>> round(float(y.mean()), 3)
    3.73
    >>> X, y = load_liver(return_X_y=True, gene_symbols=True)
    >>> list(X.columns[:3])
    ['1700007N18Rik', 'Mast2', 'Ankrd32']
    """
    from sklearn.utils import Bunch

    files = resources.files("vcpcr.datasets") / "data"
    with (files / "liver.csv.gz").open("rb") as fh:
        frame = pd.read_csv(fh, compression="gzip", index_col=0, **_EXACT_FLOATS)
    frame.index.name = "mouse"
    with (files / "liver_annotation.csv.gz").open("rb") as fh:
        annotation = pd.read_csv(fh, compression="gzip", index_col=0, dtype=str)
    probes = list(frame.columns[3:])
    if gene_symbols:
        names = _symbol_names(frame.columns[3:], annotation)
        frame.columns = [*frame.columns[:3], *names]
    target = frame["weight_per_length"]
    data = frame.iloc[:, 3:]
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        frame=frame,
        feature_names=list(data.columns),
        probe_ids=probes,
        target_names=["weight_per_length"],
        annotation=annotation,
        DESCR=DESCR,
    )
