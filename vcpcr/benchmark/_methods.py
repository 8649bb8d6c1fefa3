"""The study's methods and their hyperparameter grids.

Every method has one *traced* hyperparameter (performance is reported for each
of its values, to draw the curves against model size) and *tuned* ones
(chosen by the inner cross-validation, separately for every traced value).
The grids follow the VC-PCR paper and the authors' R experiment code
(``Code/InactiveVarExp/02_Run_methods.R`` and ``Code/Liver/02_Run_methods.R``
of rebeccamarion/VC-PCR-Experiments), translated to this package's
parametrizations; :func:`get_methods` documents each one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from vcpcr._checks import check_random_state
from vcpcr._sos_nmf import random_partition
from vcpcr._weights import SCHEMES

__all__ = [
    "METHOD_NAMES",
    "PROFILES",
    "Method",
    "Profile",
    "Starts",
    "draw_starts",
    "get_methods",
]

#: Random initial partitions: ``starts[K][i]`` is start ``i`` with ``K`` clusters.
Starts = dict[int, list[NDArray[np.intp]]]

METHOD_NAMES = (
    "vcpcr-ridge",
    "vcpcr-lasso",
    "vcpcr-identity",
    "crl-kmeans",
    "crl-hclust",
    "crl-hclustcc",
    "cen",
    "srr",
)
"""The paper's eight methods, in the order of its figures."""

_LABELS = {
    "vcpcr-ridge": "VC-PCR-Ridge",
    "vcpcr-lasso": "VC-PCR-Lasso",
    "vcpcr-enet": "VC-PCR-ENet",
    "vcpcr-glmnet_ridge": "VC-PCR-Ridge (glmnet)",
    "vcpcr-identity": "VC-PCR-Identity",
    "crl-kmeans": "CRL-kmeans",
    "crl-hclust": "CRL-hclust",
    "crl-hclustcc": "CRL-hclustCC",
    "cen": "CEN",
    "srr": "SRR",
}


@dataclass(frozen=True)
class Method:
    """One method of the study and its grids.

    Attributes
    ----------
    name : str
        Key, e.g. ``"vcpcr-ridge"`` (``"vcpcr-<weights>"`` for any scheme
        in :data:`vcpcr._weights.SCHEMES`).
    label : str
        Name in tables and figures, e.g. ``"VC-PCR-Ridge"``.
    kind : {"vcpcr", "crl", "cen", "srr"}
        Which solver fits it.
    traced_name : str
        The traced hyperparameter (``"lam_ratio"`` or ``"alpha"``).
    traced : tuple of float
        Its values.
    tuned_names : tuple of str
        The tuned hyperparameters, e.g. ``("K", "delta")``.
    tuned : tuple of tuple of float
        Every combination of the tuned values (the inner CV's choices).
    n_starts : int
        Random initial partitions (1 for deterministic methods).
    options : dict
        Solver options (weight scheme, clustering, tolerances).
    """

    name: str
    label: str
    kind: str
    traced_name: str
    traced: tuple[float, ...]
    tuned_names: tuple[str, ...]
    tuned: tuple[tuple[float, ...], ...]
    n_starts: int = 1
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def n_clusters(self) -> tuple[int, ...]:
        """The distinct numbers of clusters (or models) of the tuned grid."""
        return tuple(sorted({int(c[0]) for c in self.tuned}))


class Profile(NamedTuple):
    """A study design: folds, starts and the grids of every method.

    Attributes
    ----------
    name : str
        ``"full"``, ``"quick"``, ``"liver"`` or ``"liver-quick"``.
    n_outer, n_inner : int
        Outer and inner folds.
    n_starts : int
        Random initial partitions of the methods that need them.
    grids : dict
        Grid arrays by name (see :func:`get_methods`); ``"srr_models"``, if
        present, replaces ``"K"`` as SRR's numbers of models.
    """

    name: str
    n_outer: int
    n_inner: int
    n_starts: int
    grids: dict[str, Any]


def _g(*values: float) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


_PAPER_RATIOS = _g(*10 ** np.linspace(-3, 0, 10))

PROFILES: dict[str, Profile] = {
    "full": Profile(
        "full",
        10,
        5,
        5,
        {
            "K": (4, 5, 6),
            "vcpcr_ratio": _PAPER_RATIOS,
            "identity_ratio": _g(*np.linspace(0, 0.9, 10)),
            "ridge_delta": _g(*10 ** np.linspace(-4, -2, 10)),
            "lasso_delta": _g(*10 ** np.linspace(-5, np.log10(0.2), 10)),
            "enet_delta": _g(*10 ** np.linspace(-2, np.log10(0.5), 10)),
            "crl_alpha": _g(*np.linspace(0, 1, 10) ** 2),
            "cen_alpha": _g(*10 ** np.linspace(-4, 0, 10)),
            "cen_gamma": _g(*10 ** np.linspace(-2, 1, 10)),
            "srr_alpha": _g(*10 ** np.linspace(-4, 0, 10)),
            "srr_lambda": _g(*10 ** np.linspace(-4, 1, 10) / 2),
        },
    ),
    "quick": Profile(
        "quick",
        5,
        3,
        2,
        {
            "K": (5,),
            "vcpcr_ratio": _g(*10 ** np.linspace(-3, 0, 6)),
            "identity_ratio": _g(*np.linspace(0, 0.9, 6)),
            "ridge_delta": _g(1e-4, 1e-2),
            "lasso_delta": _g(1e-3, 0.2),
            "enet_delta": _g(0.02, 0.1),
            "crl_alpha": _g(*np.linspace(0, 1, 6) ** 2),
            "cen_alpha": _g(*10 ** np.linspace(-2, 0, 5)),
            "cen_gamma": _g(0.1, 1.0),
            "srr_alpha": _g(*10 ** np.linspace(-2, 0, 5)),
            "srr_lambda": _g(0.005, 0.5),
        },
    ),
    "liver": Profile(
        "liver",
        10,
        5,
        5,
        {
            "K": (10, 20, 40, 50, 60),
            "vcpcr_ratio": _g(*np.linspace(0.25, 1, 10)),
            "lasso_ratio": _g(*np.linspace(0.01, 1, 10)),
            "identity_ratio": _g(*np.linspace(0.9, 1, 10)),
            "ridge_delta": _g(*10 ** np.linspace(np.log10(0.05), 1, 10)),
            "lasso_delta": _g(*10 ** np.linspace(-3, 0, 10)),
            "enet_delta": _g(*10 ** np.linspace(-2, np.log10(0.5), 10)),
            "crl_alpha": _g(*np.linspace(0.02 ** (1 / 3), 1, 10) ** 3),
            "cen_alpha": _g(*10 ** np.linspace(0, 2, 10) / 90),
            "cen_gamma": _g(*10 ** np.linspace(-3, 0, 10)),
            "srr_alpha": _g(*10 ** np.linspace(-4, 0, 10)),
            "srr_lambda": _g(*10 ** np.linspace(-4, 1, 10) / 2),
            "srr_models": (10, 20),
        },
    ),
    "liver-quick": Profile(
        "liver-quick",
        5,
        3,
        2,
        {
            "K": (10, 20),
            "vcpcr_ratio": _g(*np.linspace(0.25, 1, 5)),
            "lasso_ratio": _g(*np.linspace(0.01, 1, 5)),
            "identity_ratio": _g(*np.linspace(0.9, 1, 5)),
            "ridge_delta": _g(0.05, 1.0),
            "lasso_delta": _g(0.01, 0.3),
            "enet_delta": _g(0.02, 0.1),
            "crl_alpha": _g(*np.linspace(0.02 ** (1 / 3), 1, 5) ** 3),
            "cen_alpha": _g(*10 ** np.linspace(0.5, 2, 4) / 90),
            "cen_gamma": _g(0.01, 0.1),
            "srr_alpha": _g(*10 ** np.linspace(-2, 0, 4)),
            "srr_lambda": _g(0.005, 0.5),
        },
    ),
}
"""The study designs by name (a ``Profile`` each): ``"full"`` and
``"quick"`` for the simulation study, ``"liver"`` and ``"liver-quick"`` for the
Liver experiment."""


def _vcpcr(name: str, profile: Profile) -> Method:
    """``vcpcr-<scheme>``: grids by the scheme's ``l1_ratio`` (see get_methods)."""
    key = name.split("-", 1)[1]
    if key not in SCHEMES:
        raise ValueError(
            f"Unknown weight scheme {key!r} in method {name!r}; the weight "
            f"schemes are {list(SCHEMES)}."
        )
    scheme = SCHEMES[key]
    g, Ks = profile.grids, profile.grids["K"]
    label = _LABELS.get(name, f"VC-PCR-{key}")
    if scheme.l1_ratio is None:
        tuned: tuple[tuple[float, ...], ...] = tuple((float(K),) for K in Ks)
        return Method(
            name,
            label,
            "vcpcr",
            "lam_ratio",
            g["identity_ratio"],
            ("K",),
            tuned,
            profile.n_starts,
            {"weights": key, "relative_delta": False},
        )
    lasso, relative = scheme.l1_ratio == 1, scheme.relative
    deltas = g["lasso_delta" if lasso else "enet_delta" if relative else "ridge_delta"]
    ratios = g.get("lasso_ratio", g["vcpcr_ratio"]) if lasso else g["vcpcr_ratio"]
    tuned = tuple((float(K), d) for K, d in product(Ks, deltas))
    return Method(
        name,
        label,
        "vcpcr",
        "lam_ratio",
        ratios,
        ("K", "delta_ratio" if relative else "delta"),
        tuned,
        profile.n_starts,
        {"weights": key, "relative_delta": relative},
    )


def _competitor(name: str, profile: Profile) -> Method:
    g, Ks = profile.grids, profile.grids["K"]
    label = _LABELS[name]
    if name.startswith("crl-"):
        clustering = {"kmeans": "kmeans", "hclust": "ward", "hclustcc": "hclustcc"}
        method = clustering[name.split("-", 1)[1]]
        starts = profile.n_starts if method == "kmeans" else 1
        return Method(
            name,
            label,
            "crl",
            "alpha",
            g["crl_alpha"],
            ("K",),
            tuple((float(K),) for K in Ks),
            starts,
            {"clustering": method},
        )
    if name == "cen":
        return Method(
            name,
            label,
            "cen",
            "alpha",
            g["cen_alpha"],
            ("K", "gamma"),
            tuple((float(K), gm) for K, gm in product(Ks, g["cen_gamma"])),
            profile.n_starts,
            {"tol": 1e-5, "max_iter": 100},
        )
    return Method(
        name,
        label,
        "srr",
        "alpha",
        g["srr_alpha"],
        ("n_models", "lambda_div"),
        tuple(
            (float(K), lam)
            for K, lam in product(g.get("srr_models", Ks), g["srr_lambda"])
        ),
        1,
        {"tol": 1e-5, "cycle_tol": 1e-4, "max_iter": 100},
    )


def get_methods(names: str | list[str] = "all", profile: str = "full") -> list[Method]:
    r"""Build the methods of the study with the grids of a profile.

    Parameters
    ----------
    names : str or list of str, default="all"
        Method keys: ``"all"`` (the paper's eight, :data:`METHOD_NAMES`; may
        be combined with others in a list), any of them, or
        ``"vcpcr-<scheme>"`` for another weight scheme of
        :func:`vcpcr.compute_weights` (e.g. ``"vcpcr-glmnet_ridge"``): a
        lasso scheme (``l1_ratio`` 1) gets the lasso grids, an elastic net
        the elastic-net grids, a ridge (``l1_ratio`` 0) the ridge grids.
    profile : {"full", "quick", "liver", "liver-quick"}, default="full"
        The grids: the paper's simulation, small CI grids, the paper's Liver
        experiment, or small Liver grids.

    Returns
    -------
    list of Method
        In the order given (``"all"``: the paper's order).

    Raises
    ------
    ValueError
        For an unknown method or profile.

    See Also
    --------
    run_study : Runs the nested CV of these methods.

    Notes
    -----
    The ``"full"`` grids (simulation; 10 outer x 5 inner folds, 5 starts;
    :math:`K \in \{4, 5, 6\}`) are the paper's and its R code's:

    * VC-PCR (traced ``lam_ratio`` :math:`=\lambda/\lambda_{max}`, each
      start with its own :math:`\lambda_{max}` as in the R code):
      ``10**linspace(-3, 0, 10)`` for ridge and lasso weights,
      ``linspace(0, 0.9, 10)`` for identity; tuned ``K`` and the weights'
      ``delta``: ridge ``10**linspace(-4, -2, 10)``, lasso
      ``10**linspace(-5, log10(0.2), 10)`` times the fold's
      :math:`\delta_{max} = \max_j |x_j^\top y|/n`; elastic net
      (``"vcpcr-enet"``, not in the paper) ``10**linspace(-2, log10(0.5),
      10)`` times its :math:`\delta_{max}/0.05`.
    * CRL (traced lasso ``alpha`` on the cluster averages, glmnet's
      parametrization, ``alpha = 0`` is least squares):
      ``linspace(0, 1, 10)**2`` as the R code; tuned ``K``. CRL-kmeans runs
      Lloyd's k-means from the centroids of each random start (R's
      ``kmeans(..., centers, algorithm = "Lloyd")``), i.e.
      ``CRL(clustering="kmeans", init=start)``'s clustering; Ward and
      ClustOfVar clustering are deterministic (one start).
    * CEN (traced lasso ``alpha``, tuned ``K`` and the k-means weight
      ``gamma``): the R code's grids :math:`\delta` in ``10**linspace(-2, 2, 10)``
      and :math:`\lambda` in ``10**linspace(-2, 1, 10)`` become ``alpha =
      delta / (2 n)``, i.e. ``10**linspace(-4, 0, 10)`` (its range at the
      outer training size 45), and ``gamma = lambda`` in
      ``10**linspace(-2, 1, 10)``; the lasso path is warm-started along the
      traced values, every value restarting the k-means from the start's
      partition; each coefficient step to a duality gap of ``1e-5 y'y``
      (R: relative objective change 1e-5, at most 10 alternations).
    * SRR (traced lasso ``alpha``, tuned number of models
      :math:`K \in \{4, 5, 6\}` and diversity penalty): the R code's grids
      ``10**linspace(-4, 0, 10)`` and :math:`\lambda` in
      ``10**linspace(-4, 1, 10)``, i.e. ``lambda_div = lambda / 2`` (see
      :class:`vcpcr.baselines.SRR`); warm starts along the traced values;
      block solves to a duality gap of ``1e-5 y'y``, cycles until no
      coefficient moves by more than ``1e-4``, at most 100 cycles (R: at
      most 50 cycles of one coordinate sweep per model).

    ``"liver"`` uses :math:`K \in \{10, 20, 40, 50, 60\}` and the grids of
    the R code's Liver script (``lam_ratio`` ``linspace(0.25, 1, 10)``
    ridge, ``linspace(0.01, 1, 10)`` lasso, ``linspace(0.9, 1, 10)``
    identity; ridge ``delta`` ``10**linspace(log10(0.05), 1, 10)``; lasso
    ``10**linspace(-3, 0, 10)`` times :math:`\delta_{max}`; CRL
    ``linspace(0.02**(1/3), 1, 10)**3``; CEN ``alpha`` ``10**linspace(0,
    2, 10) / 90`` (R's :math:`\delta / (2 \cdot 45)`) and ``gamma``
    ``10**linspace(-3, 0, 10)``; SRR as in the
    simulation, but with 10 or 20 models only: the R code's 40-60 models
    make SRR's Liver nested CV take about 8 hours on one core, against
    minutes for every other method). ``"quick"`` and ``"liver-quick"``: one
    ``K`` (two for the Liver), 2 starts, 5 outer x 3 inner folds, 2-6 values
    per grid.

    Examples
    --------
    >>> from vcpcr.benchmark import get_methods
    >>> ridge = get_methods(["vcpcr-ridge"])[0]
    >>> ridge.label, ridge.traced_name, len(ridge.traced), len(ridge.tuned)
    ('VC-PCR-Ridge', 'lam_ratio', 10, 30)
    >>> [m.label for m in get_methods("all", "quick")][-2:]
    ['CEN', 'SRR']
    """
    if profile not in PROFILES:
        raise ValueError(
            f"profile must be one of {sorted(PROFILES)}. Got {profile!r} instead."
        )
    prof = PROFILES[profile]
    given = [names] if isinstance(names, str) else list(names)
    expanded = [m for g in given for m in (METHOD_NAMES if g == "all" else (g,))]
    methods = []
    for name in dict.fromkeys(expanded):
        if name.startswith("vcpcr-") and len(name) > len("vcpcr-"):
            methods.append(_vcpcr(name, prof))
        elif name in METHOD_NAMES:
            methods.append(_competitor(name, prof))
        else:
            raise ValueError(
                f"Unknown method {name!r}. Use 'all', any of {list(METHOD_NAMES)} "
                f"or 'vcpcr-<weights>' for another weight scheme."
            )
    return methods


def draw_starts(
    n_features: int, n_clusters: tuple[int, ...], n_starts: int, random_state: Any
) -> Starts:
    """Draw the random initial partitions of one data set.

    Parameters
    ----------
    n_features : int
        Number of features ``p``.
    n_clusters : tuple of int
        The numbers of clusters ``K`` of the grids.
    n_starts : int
        Partitions per ``K``.
    random_state : int, numpy.random.Generator or None
        Seed.

    Returns
    -------
    dict of int to list of ndarray
        ``starts[K][i]``: labels ``0..K-1`` of start ``i``, every cluster
        non-empty (:func:`vcpcr.random_partition`).

    Examples
    --------
    >>> from vcpcr.benchmark import draw_starts
    >>> starts = draw_starts(10, (2, 3), 2, random_state=0)
    >>> sorted(starts), len(starts[3]), sorted(set(starts[3][0].tolist()))
    ([2, 3], 2, [0, 1, 2])
    """
    rng = check_random_state(random_state)
    return {
        int(K): [random_partition(n_features, int(K), rng) for _ in range(n_starts)]
        for K in sorted(n_clusters)
    }
