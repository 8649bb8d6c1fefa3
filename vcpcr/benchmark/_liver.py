"""The paper's real-data experiment: 50 Liver mice, PLS screening, nested CV."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vcpcr.benchmark._methods import PROFILES, get_methods
from vcpcr.benchmark._runner import (
    StudyResult,
    Unit,
    check_study_file,
    figures,
    run_units,
    write_outputs,
)

__all__ = ["LiverSample", "liver_sample", "run_liver"]

LIVER_KEYS = ("dataset",)


def liver_sample(
    n_samples: int = 50,
    *,
    n_components: int = 5,
    n_top: int = 40,
    random_state: Any = 0,
) -> tuple[pd.DataFrame, pd.Series]:
    """Sample mice from the Liver data and screen probes by PLS, as the paper.

    Parameters
    ----------
    n_samples : int, default=50
        Mice drawn without replacement from the 131 of
        :func:`vcpcr.datasets.load_liver`.
    n_components : int, default=5
        PLS components.
    n_top : int, default=40
        Probes kept per component (largest absolute x-loadings).
    random_state : int, numpy.random.Generator or None, default=0
        Seed of the draw of mice.

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, n_probes)
        The sampled mice and the screened probes (raw scale), in the order
        of the components and, within one, of decreasing absolute loading.
    y : pandas.Series
        Their weight / length.

    See Also
    --------
    run_liver : The nested CV on this sample.

    Notes
    -----
    As the authors' ``Code/Liver/01_Prepare_liver_data.R``: the sample is
    standardized (``ddof=1``, ``y`` too), a PLS regression with
    ``n_components`` components is fitted
    (:class:`sklearn.cross_decomposition.PLSRegression`, NIPALS; R's
    ``pls::plsr`` uses the kernel algorithm, which gives the same loadings
    for one response), and the union of each component's ``n_top``
    probes with the largest absolute x-loadings is kept (the paper reports
    195 probes). The paper's draw of mice used R's ``set.seed(821)``, which
    cannot be reproduced with numpy, so the sample, the screened probes and
    the results differ from the paper's.

    Examples
    --------
    >>> from vcpcr.benchmark import liver_sample
    >>> X, y = liver_sample(random_state=0)
    >>> X.shape[0], 150 <= X.shape[1] <= 200, y.name
    (50, True, 'weight_per_length')
    """
    from sklearn.cross_decomposition import PLSRegression

    from vcpcr._checks import check_random_state
    from vcpcr.datasets import load_liver

    X_all, y_all = load_liver(return_X_y=True)
    rng = check_random_state(random_state)
    rows = np.sort(rng.choice(len(y_all), size=n_samples, replace=False))
    X, y = X_all.iloc[rows], y_all.iloc[rows]
    Xs = (X - X.mean()) / X.std(ddof=1)
    ys = (y - y.mean()) / y.std(ddof=1)
    pls = PLSRegression(n_components=n_components, scale=False).fit(Xs, ys)
    top = np.argsort(-np.abs(pls.x_loadings_), axis=0, kind="stable")[:n_top]
    keep = list(dict.fromkeys(top.T.ravel().tolist()))
    return X.iloc[:, keep], y


@dataclass(frozen=True)
class LiverSample:
    """The Liver data set of the study (see :func:`liver_sample`).

    Attributes
    ----------
    seed : int
        The study's seed: it draws the mice, the folds and the starts.
    """

    seed: int = 0

    @property
    def key(self) -> str:
        """Directory name of the data set's parts."""
        return "liver"

    def columns(self) -> dict[str, Any]:
        """Return the columns identifying the data set in the result rows."""
        return {"dataset": "liver", "replicate": 0}

    def seed_sequence(self, purpose: int) -> np.random.SeedSequence:
        """Seed of one purpose: 0 mice, 1 folds, 2 starts."""
        return np.random.SeedSequence([self.seed, 821, purpose])

    def load(self) -> tuple[Any, Any, Any, Any]:
        """``X, y`` of the sample; the truth is unknown (None)."""
        rng = np.random.default_rng(self.seed_sequence(0))
        X, y = liver_sample(random_state=rng)
        return X.to_numpy(), y.to_numpy(), None, None


def run_liver(
    out: str | Path,
    *,
    methods: str | list[str] = "all",
    n_jobs: int = 1,
    quick: bool = False,
    seed: int = 0,
    progress: bool = True,
) -> StudyResult:
    r"""Run the paper's Liver experiment: MSEP against model size.

    Draws 50 mice, screens about 195 probes by PLS (:func:`liver_sample`),
    and runs the nested CV of every method (:func:`nested_cv`) with
    :math:`K \in \{10, 20, 40, 50, 60\}` and the grids of the authors'
    Liver script (see :func:`get_methods`, profile ``"liver"``).

    Parameters
    ----------
    out : str or pathlib.Path
        Output directory (``liver_*.csv``, ``liver_summary.md``,
        ``liver_msep.png``; parts under ``parts/liver``).
    methods : "all" or list of str, default="all"
        See :func:`get_methods`.
    n_jobs : int, default=1
        Methods run in parallel.
    quick : bool, default=False
        Small grids (profile ``"liver-quick"``).
    seed : int, default=0
        Seed of the sample, the folds and the starts.
    progress : bool, default=True
        Show a progress bar.

    Returns
    -------
    StudyResult
        The tables (no MCC: the truth is unknown) and the files written.

    Raises
    ------
    ValueError
        For an unknown method, or an ``out`` holding a Liver study of another
        profile or seed.

    See Also
    --------
    run_study : The simulation study.
    """
    from vcpcr.benchmark._figures import plot_liver

    profile = PROFILES["liver-quick" if quick else "liver"]
    out = Path(out)
    meta = {"profile": profile.name, "seed": int(seed)}
    chosen = get_methods(methods, profile.name)
    check_study_file(out, meta, name="liver_study")
    data = LiverSample(int(seed))
    units = [Unit(m, data, profile) for m in chosen]
    folds = run_units(units, out, n_jobs=n_jobs, progress=progress)
    result = write_outputs(folds, out, LIVER_KEYS, prefix="liver_")
    files = figures(plot_liver, result.curves, out)
    return replace(result, files=[*result.files, *files])
