"""Benchmark: honest p-values after selection with ``vcpcr.inference.multi_split``.

Run (seeded, one core per process; about 30 minutes on a loaded 2-core
machine, ``--quick`` about one minute)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 TQDM_DISABLE=1 \\
        python benchmarks/bench_inference.py [--quick]

Prints markdown tables (issue #16):

1. **Global null**, gaussian, binomial and cox: ``y`` drawn independently of
   a block-correlated ``X`` (n = 100, p = 200: 20 blocks of 10 variables at
   correlation 0.6; gaussian ``y ~ N(0, 1)``, binomial prevalence 0.5, cox
   exponential times with 30 % censoring), ``N_NULL`` data sets per family.
   The family-wise error rate at 0.05 (share of data sets with at least one
   rejection) of: the multi-split gene p-values (``multi_split(VCPCR(
   n_clusters=5, lam_ratio=0.3, n_init=3), n_splits=50)`` (``--n-splits``),
   gene rejected when ``P_j < 0.05``); the naive summary of the same ``VCPCR`` fitted on
   all data (a gene rejected when its cluster's p-value in ``summary()`` is
   < 0.05, and with Bonferroni over the clusters); and, gaussian only,
   hidimstat's ``EnCluDL``. Pass: the upper end of the two-sided 95 %
   Clopper-Pearson interval of the multi-split FWER is below 0.08.
2. **Signal**, the paper's configuration-1 design (``vcpcr.simulate``: ten
   blocks of five, active blocks 1, 3, 5, 7 each correlated with the inactive
   block after it at 0.6, blocks 9-10 correlated with each other, 150
   independent noise variables; coefficients +-1 on the active blocks times
   ``SCALE[family]``; gaussian SNR 2), n = 100, ``N_SIGNAL`` data sets per
   family, multi-split and the naive summary at ``lam_ratio`` 0.3 and 0.5
   (``VCPCR``'s default). Columns: FWER over the *null* genes
   (independent of ``y`` and of every active gene: blocks 9-10 and the
   noise), the rejection rate of the
   *correlated inactive* genes (share of such genes rejected, and share of
   data sets with at least one), the power per active block (a block is
   detected when any of its five genes has ``P < 0.05``; mean over the four
   blocks and the data sets), and the mean number of genes rejected.
   hidimstat's ``EnCluDL`` (gaussian; ``DesparsifiedLasso`` on Ward
   ``FeatureAgglomeration(n_clusters=50)`` fitted on 30 % subsamples, 10
   bootstraps, rejection by ``fwer_selection(0.05, n_tests=50)``) on the same
   data. Its delta-FWER (Chevalier et al. 2022) counts only false rejections
   farther than delta from the support; here the delta-neighbourhood of the
   support is the correlated inactive blocks, so delta-FWER is the "null
   genes" FWER column, for both methods.
3. **Cost**: one ``VCPCR.fit`` against ``multi_split`` (50 splits) on a 200
   x 2,000 gaussian problem (one and two processes) and on the Liver data
   (the README's model); ``multi_split`` with a ``VCPCRCV()`` template.

4. **A VCPCRCV template** (gaussian, ``N_CV`` null and signal data sets):
   every split tunes ``n_clusters``, ``delta`` and ``lam_ratio`` by 5-fold CV
   on its first part.

5. **Gene level** (``--part genes``, issue #26; resumable: one CSV row per
   data set in ``results/inference_genes.csv``, ``--out``): the global null
   and the configuration-1 signal data, ``--n-genes`` data sets per family
   (default 20), ``multi_split(VCPCR(n_clusters=5, lam_ratio=0.3))`` with 50
   splits; for the gene-level p-values of the descent (``pvalues``) and the
   module-membership ones (``membership_pvalues``): the FWER over the null
   genes (``NULL_GENES``: independent of ``y`` and of every active gene),
   the rejection rate of the correlated inactive genes (``CORRELATED``), the
   power per active block and the genes rejected; per split, the share of
   (split, active block) pairs hit by a minimal rejected cluster at each
   level (module, sub-module, gene), the mean size of those clusters, the
   splits whose descent ran and the Firth splits.

6. **Common tree** (``--part tree``, issue #26 item 2; resumable: one CSV
   row per data set in ``results/inference_tree.csv``, ``--out``): the same
   null and signal data, ``--n-genes`` data sets per family,
   ``multi_split(VCPCR(n_clusters=5, lam_ratio=--lam-ratio, n_init=3),
   n_splits=50)`` with its default ``common_tree="auto"`` (Mandozzi &
   Bühlmann's test of one tree built from ``X`` alone). Per data set: any
   rejected cluster made only of null genes (``NULL_GENES``) -> the FWER;
   any rejected cluster without an active gene (null or correlated inactive
   genes only: the guarantee's target under the screening property); per
   active block, the size of the smallest minimal rejected cluster that
   holds one of its genes (power by resolution: the root of all 200 genes,
   more than 10 genes, 2-10 genes, a single gene); and the gene-level P of
   the same result (``pvalues``) for comparison. ``--template cv``: a
   ``VCPCRCV`` template with its defaults, on the 10-point ``lam_ratio``
   grid it ran with (pinned: ``STUDY_RATIOS``).

7. **Peers** (``--part peers --families gaussian``, issue #26; resumable,
   ``results/inference_peers.csv``): on the common-tree study's data sets,
   hidimstat's ``EnCluDL`` as above (it controls the delta-FWER: no
   rejected *null* gene) and hidimstat's ``DesparsifiedLasso`` on the genes
   with Bonferroni over all of them (``fwer_selection(0.05, n_tests=p)``,
   two-sided: it targets the usual FWER, no rejected inactive gene, the
   error the common tree controls under screening).

``--part null|signal|cv|cost|genes|tree|peers`` prints one table only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.base import clone

from vcpcr import VCPCR, VCPCRCV, Surv
from vcpcr.datasets import load_liver
from vcpcr.inference import multi_split
from vcpcr.simulate import make_block_data

N_NULL, N_SIGNAL, N_SPLITS, N_INIT, N = 200, 60, 50, 3, 100
N_CV = 25  # data sets with a VCPCRCV template (each split tunes by 5-fold CV)
CV_TEMPLATE: dict[str, Any] = {}  # the template's scoring and selection (--cv-*)
#: The lam_ratio grid of VCPCRCV's default for penalized weights before #27's
#: rule E (10 points; the default now has 20). The studies that ran with it
#: pin it (the cohort and #27 benchmarks import it from here); here the
#: ``--template cv`` studies (``--part genes`` or ``tree``) do; ``--part cv``
#: and ``--part cost`` follow ``VCPCRCV()``'s current defaults.
STUDY_RATIOS = 10 ** np.linspace(-3, 0, 10)
QUICK = {"N_NULL": 12, "N_SIGNAL": 4, "N_SPLITS": 10, "N_INIT": 2, "N_CV": 2}
FAMILIES = ("gaussian", "binomial", "cox")
SCALE = {"gaussian": 1.0, "binomial": 0.5, "cox": 0.3}
LAM_RATIOS = (0.3, 0.5)  # the setting, and VCPCR's default
ENCLUDL_CLUSTERS = 50
# The paper's configuration 1 (vcpcr.simulate.make_paper_data docstring).
PAPER = {
    "block_sizes": [5] * 10,
    "coefs": [1, 0, -1, 0, 1, 0, -1, 0, 0, 0],
    "corr_groups": [0, 0, 1, 1, 2, 2, 3, 3, 4, 5],
    "n_noise": 150,
}
ACTIVE = [np.arange(10 * k, 10 * k + 5) for k in range(4)]
CORRELATED = np.concatenate([np.arange(10 * k + 5, 10 * k + 10) for k in range(4)])
NULL_GENES = np.arange(40, 200)


def template(family: str, n_init: int, lam_ratio: float = 0.3) -> VCPCR:
    return VCPCR(n_clusters=5, lam_ratio=lam_ratio, n_init=n_init, family=family)


def outcome(data: Any, family: str) -> Any:
    return Surv(data.y, data.event) if family == "cox" else data.y


def null_data(family: str, seed: int) -> tuple[np.ndarray, Any]:
    extra: dict[str, Any] = {"noise_sd": 1.0} if family == "gaussian" else {}
    data = make_block_data(
        N, [10] * 20, [0.0] * 20, rho=0.6, family=family, random_state=seed, **extra
    )
    return data.X, outcome(data, family)


def signal_data(
    family: str, seed: int, effect: float = 1.0, snr: float = 2.0
) -> tuple[np.ndarray, Any]:
    """Configuration 1, its coefficients times ``effect`` (gaussian: ``snr``)."""
    extra: dict[str, Any] = {"snr": snr} if family == "gaussian" else {}
    coefs = [effect * SCALE[family] * c for c in PAPER["coefs"]]
    data = make_block_data(
        N,
        PAPER["block_sizes"],
        coefs,
        corr_groups=PAPER["corr_groups"],
        n_noise=PAPER["n_noise"],
        rho=0.6,
        family=family,
        random_state=seed,
        **extra,
    )
    return data.X, outcome(data, family)


def corrnoise_data(family: str, seed: int) -> tuple[np.ndarray, Any]:
    """Configuration 1 with its 150 noise genes in 15 blocks of 10 at rho 0.6.

    The second signal design of #26: the noise genes are correlated among
    themselves (never with an active gene), so that a cluster of noise genes
    is a real candidate for a false rejection. The genes keep their places:
    ``NULL_GENES`` are still independent of ``y`` and of every active gene.
    """
    extra: dict[str, Any] = {"snr": 2.0} if family == "gaussian" else {}
    n_blocks = PAPER["n_noise"] // 10
    data = make_block_data(
        N,
        [*PAPER["block_sizes"], *[10] * n_blocks],
        [*(SCALE[family] * c for c in PAPER["coefs"]), *[0.0] * n_blocks],
        corr_groups=[*PAPER["corr_groups"], *range(100, 100 + n_blocks)],
        rho=0.6,
        family=family,
        random_state=seed,
        **extra,
    )
    return data.X, outcome(data, family)


#: The designs of the gene-level and common-tree studies (``--designs``).
STUDY_DESIGNS = {"null": null_data, "signal": signal_data, "corrnoise": corrnoise_data}
DESIGNS_RUN = ["null", "signal"]


def naive_rejections(
    X: np.ndarray, y: Any, family: str, seed: int, lam_ratio: float = 0.3
) -> tuple[np.ndarray, np.ndarray]:
    """Genes whose cluster p-value in summary() is < 0.05 (raw, Bonferroni)."""
    model = template(family, N_INIT, lam_ratio).set_params(random_state=seed)
    model.fit(X, y)
    res = model.result_
    p = res.summary["p"] if family == "cox" else res.pvalues.drop("const")
    raw = np.zeros(X.shape[1], dtype=bool)
    bonf = np.zeros(X.shape[1], dtype=bool)
    for cluster, pvalue in p.items():
        members = model.labels_ == list(model.membership_.columns).index(cluster)
        raw[members] |= pvalue < 0.05
        bonf[members] |= pvalue * len(p) < 0.05
    return raw, bonf


def multi_split_rejections(
    X: np.ndarray, y: Any, family: str, seed: int, lam_ratio: float = 0.3
) -> Any:
    result = multi_split(
        template(family, N_INIT, lam_ratio),
        X,
        y,
        n_splits=N_SPLITS,
        random_state=seed,
        n_jobs=1,
    )
    return result.pvalues.to_numpy() < 0.05


def encludl_rejections(X: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    from hidimstat import DesparsifiedLasso, EnCluDL
    from sklearn.cluster import FeatureAgglomeration

    model = EnCluDL(
        DesparsifiedLasso(random_state=seed),
        FeatureAgglomeration(n_clusters=ENCLUDL_CLUSTERS),
        n_bootstraps=10,
        random_state=seed,
    )
    model.fit(X, y)
    model.importance()
    selected = model.fwer_selection(0.05, n_tests=ENCLUDL_CLUSTERS)
    return np.asarray(selected) != 0


def desparsified_rejections(X: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """Genes a desparsified lasso rejects at FWER 0.05 (Bonferroni over genes)."""
    from hidimstat import DesparsifiedLasso

    model = DesparsifiedLasso(random_state=seed)
    model.fit(X, y)
    model.importance()
    selected = model.fwer_selection(0.05, n_tests=X.shape[1], two_tailed_test=True)
    return np.asarray(selected) != 0


def peer_row(family: str, design: str, seed: int) -> dict[str, Any]:
    """One gaussian data set of the peer study: EnCluDL and a desparsified lasso."""
    X, y = STUDY_DESIGNS[design](family, seed)
    row: dict[str, Any] = {"family": family, "design": design, "seed": seed}
    noactive = np.setdiff1d(np.arange(X.shape[1]), np.concatenate(ACTIVE))
    t0 = time.perf_counter()
    for name, rejected in (
        ("encludl", encludl_rejections(X, y, seed)),
        ("dlasso", desparsified_rejections(X, y, seed)),
    ):
        row[f"{name}_null_any"] = bool(rejected[NULL_GENES].any())
        row[f"{name}_noactive_any"] = bool(rejected[noactive].any())
        row[f"{name}_corr_share"] = float(rejected[CORRELATED].mean())
        row[f"{name}_power"] = float(np.mean([rejected[b].any() for b in ACTIVE]))
        row[f"{name}_rejected"] = int(rejected.sum())
    row["seconds"] = time.perf_counter() - t0
    return row


def peer_table(frame: pd.DataFrame) -> list[str]:
    rows = []
    for (family, design), g in frame.groupby(["family", "design"], sort=False):
        n = len(g)
        for name, label in (("encludl", "EnCluDL"), ("dlasso", "desparsified lasso")):
            rows.append(
                f"| {family} | {design} | {label} | {n} | "
                f"{rate(int(g[f'{name}_null_any'].sum()), n)} | "
                f"{rate(int(g[f'{name}_noactive_any'].sum()), n)} | "
                f"{g[f'{name}_corr_share'].mean():.3f} | "
                f"{g[f'{name}_power'].mean():.2f} | "
                f"{g[f'{name}_rejected'].mean():.1f} |"
            )
    return rows


def upper95(k: int, n: int) -> float:
    """Upper end of the two-sided 95 % Clopper-Pearson interval of k / n."""
    return 1.0 if k == n else float(stats.beta.ppf(0.975, k + 1, n - k))


def rate(k: int, n: int) -> str:
    return f"{k}/{n} = {k / n:.3f} (95 % CI upper {upper95(k, n):.3f})"


def run_null(family: str) -> list[str]:
    methods = ["multi-split", "naive summary", "naive + Bonferroni"]
    if family == "gaussian":
        methods.append("EnCluDL")
    events = dict.fromkeys(methods, 0)
    seconds = 0.0
    for rep in range(N_NULL):
        seed = 1000 * FAMILIES.index(family) + rep
        X, y = null_data(family, seed)
        t0 = time.perf_counter()
        events["multi-split"] += bool(multi_split_rejections(X, y, family, seed).any())
        seconds += time.perf_counter() - t0
        raw, bonf = naive_rejections(X, y, family, seed)
        events["naive summary"] += bool(raw.any())
        events["naive + Bonferroni"] += bool(bonf.any())
        if family == "gaussian":
            events["EnCluDL"] += bool(encludl_rejections(X, y, seed).any())
    k = events["multi-split"]
    verdict = "PASS" if upper95(k, N_NULL) < 0.08 else "FAIL"
    rows = [
        f"| {family} | {m} | {rate(events[m], N_NULL)} | "
        f"{verdict if m == 'multi-split' else ''} |"
        for m in methods
    ]
    rows.append(
        f"| {family} | (multi-split time per data set) | {seconds / N_NULL:.2f} s | |"
    )
    return rows


def signal_metrics(rejected: list[np.ndarray]) -> str:
    R = np.array(rejected)
    n = R.shape[0]
    fwer = int(R[:, NULL_GENES].any(axis=1).sum())
    corr_rate = R[:, CORRELATED].mean()
    corr_any = R[:, CORRELATED].any(axis=1).mean()
    power = np.mean([R[:, block].any(axis=1).mean() for block in ACTIVE])
    return (
        f"{rate(fwer, n)} | {corr_rate:.3f} / {corr_any:.2f} | {power:.2f} | "
        f"{R.sum(axis=1).mean():.1f}"
    )


def run_signal(family: str) -> list[str]:
    found: dict[str, list[np.ndarray]] = {}
    for rep in range(N_SIGNAL):
        seed = 5000 + 1000 * FAMILIES.index(family) + rep
        X, y = signal_data(family, seed)
        for lam in LAM_RATIOS:
            found.setdefault(f"multi-split, lam_ratio={lam}", []).append(
                multi_split_rejections(X, y, family, seed, lam)
            )
            found.setdefault(f"naive summary, lam_ratio={lam}", []).append(
                naive_rejections(X, y, family, seed, lam)[0]
            )
        if family == "gaussian":
            found.setdefault("EnCluDL", []).append(encludl_rejections(X, y, seed))
    return [f"| {family} | {m} | {signal_metrics(r)} |" for m, r in found.items()]


def run_cv_template() -> list[str]:
    """Gaussian null and signal data with a ``VCPCRCV()`` template (re-tuned in
    every split), ``N_CV`` data sets each."""
    null_events = 0
    found = []
    for rep in range(N_CV):
        X, y = null_data("gaussian", 90000 + rep)
        template = VCPCRCV(**CV_TEMPLATE)
        res = multi_split(template, X, y, n_splits=N_SPLITS, random_state=rep)
        null_events += bool((res.pvalues < 0.05).any())
        X, y = signal_data("gaussian", 95000 + rep)
        res = multi_split(template, X, y, n_splits=N_SPLITS, random_state=rep)
        found.append(res.pvalues.to_numpy() < 0.05)
    return [
        f"| global null | {rate(null_events, N_CV)} | | | |",
        f"| signal (configuration 1) | {signal_metrics(found)} |",
    ]


GENES_OUT = os.path.join(os.path.dirname(__file__), "results", "inference_genes.csv")
N_GENES = 20
GENES_LAM_RATIO = 0.3  # the template's lam_ratio in the gene-level study
GENES_FAMILIES = list(FAMILIES)  # the families of the gene-level study
#: The gene-level and common-tree studies' template: ``"vcpcr"`` (``VCPCR(
#: n_clusters=5, lam_ratio=--lam-ratio, n_init=3)``) or ``"cv"`` (``VCPCRCV(
#: family=...)`` defaults on the 10-point ``lam_ratio`` grid ``STUDY_RATIOS``,
#: tuned by 5-fold CV in every split) or ``"cv-default"`` (``VCPCRCV``'s
#: defaults as they are, grid included; ``--template``).
STUDY_TEMPLATE = "vcpcr"
INHERITANCE = False  # multi_split's inheritance (--inheritance)
LEVELS = ("selected", "module", "sub-module", "gene")


def study_result(family: str, design: str, seed: int) -> tuple[Any, float]:
    """``multi_split`` of one data set of the gene-level studies, and its time."""
    X, y = STUDY_DESIGNS[design](family, seed)
    t0 = time.perf_counter()
    res = multi_split(
        VCPCRCV(family=family, lam_ratios=STUDY_RATIOS, random_state=0)
        if STUDY_TEMPLATE == "cv"
        else VCPCRCV(family=family, random_state=0)
        if STUDY_TEMPLATE == "cv-default"
        else template(family, N_INIT, GENES_LAM_RATIO),
        X,
        y,
        n_splits=N_SPLITS,
        inheritance=INHERITANCE,
        random_state=seed,
        n_jobs=1,
    )
    return res, time.perf_counter() - t0


def gene_row(family: str, design: str, seed: int) -> dict[str, Any]:
    """One data set of the gene-level study: its metrics as one CSV row."""
    res, seconds = study_result(family, design, seed)
    row: dict[str, Any] = {
        "family": family,
        "design": design,
        "seed": seed,
        "seconds": seconds,
        "gene_level_splits": res.n_splits_gene_level,
        "firth_splits": int((res.splits["gene_test"] == "Firth LR").sum()),
        "selected": float(res.splits["n_selected"].mean()),
    }
    for name, p in (("gene", res.pvalues), ("member", res.membership_pvalues)):
        rejected = p.to_numpy() < 0.05
        row[f"{name}_null_any"] = bool(rejected[NULL_GENES].any())
        row[f"{name}_corr_share"] = float(rejected[CORRELATED].mean())
        row[f"{name}_corr_any"] = bool(rejected[CORRELATED].any())
        row[f"{name}_power"] = float(np.mean([rejected[b].any() for b in ACTIVE]))
        row[f"{name}_rejected"] = int(rejected.sum())
    # per split and active block: the levels of the minimal rejected clusters
    names = list(res.pvalues.index)
    blocks = [{names[j] for j in b} for b in ACTIVE]
    hits = dict.fromkeys(LEVELS, 0)
    sizes = []
    for c in res.clusters.itertuples():
        for block in blocks:
            if block & set(c.members):
                hits[c.level] += 1
                sizes.append(c.size)
    pairs = res.n_splits * len(ACTIVE)
    for level in LEVELS:
        row[f"hit_{level}"] = hits[level] / pairs
    row["hit_size"] = float(np.mean(sizes)) if sizes else float("nan")
    return row


TREE_OUT = os.path.join(os.path.dirname(__file__), "results", "inference_tree.csv")
PEERS_OUT = os.path.join(os.path.dirname(__file__), "results", "inference_peers.csv")
#: Power by resolution: the size classes of the smallest minimal rejected
#: cluster holding a gene of an active block (0: none).
RESOLUTIONS = {
    "root": lambda s: s == N_FEATURES,
    "> 10": lambda s: 10 < s < N_FEATURES,
    "2-10": lambda s: 2 <= s <= 10,
    "gene": lambda s: s == 1,
}
N_FEATURES = 200


def tree_row(family: str, design: str, seed: int) -> dict[str, Any]:
    """One data set of the common-tree study: its metrics as one CSV row."""
    res, seconds = study_result(family, design, seed)
    names = list(res.pvalues.index)
    null = {names[j] for j in NULL_GENES}
    active = {names[j] for b in ACTIVE for j in b}
    clusters = res.tree_clusters
    members = [set(m) for m in clusters["members"]]
    gene = res.pvalues.to_numpy() < 0.05
    row: dict[str, Any] = {
        "family": family,
        "design": design,
        "seed": seed,
        "seconds": seconds,
        "tree_info": res.tree_info,
        "tree_rejected": len(clusters),
        "tree_minimal": int(clusters["minimal"].sum()),
        "tree_null_any": any(m <= null for m in members),
        "tree_noactive_any": any(not (m & active) for m in members),
        "tree_gene_rejected": int((res.tree_pvalues < 0.05).sum()),
        "gene_null_any": bool(gene[NULL_GENES].any()),
        "gene_power": float(np.mean([gene[b].any() for b in ACTIVE])),
        "gene_rejected": int(gene.sum()),
    }
    minimal = clusters[clusters["minimal"]]
    for k, block in enumerate(ACTIVE):
        genes = {names[j] for j in block}
        sizes = [c.size for c in minimal.itertuples() if genes & set(c.members)]
        row[f"block{k}_size"] = min(sizes) if sizes else 0
    return row


def run_resumable(out: str, n_sets: int, make_row: Any) -> pd.DataFrame:
    """Rows of ``make_row`` per seed, family and design; resumable from ``out``."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    done = (
        pd.read_csv(out, keep_default_na=False, na_values=[""])
        if os.path.exists(out)
        else pd.DataFrame()
    )
    for seed in range(n_sets):
        for family in GENES_FAMILIES:
            for design in DESIGNS_RUN:
                key = (family, design, 1000 * FAMILIES.index(family) + seed)
                if (
                    not done.empty
                    and (
                        (done.family == key[0])
                        & (done.design == key[1])
                        & (done.seed == key[2])
                    ).any()
                ):
                    continue
                row = pd.DataFrame([make_row(*key)])
                row.to_csv(out, mode="a", header=not os.path.exists(out), index=False)
                print("#", *key, f"{row.seconds.iloc[0]:.1f} s", flush=True)
    return pd.read_csv(out, keep_default_na=False, na_values=[""])


def run_tree(out: str, n_sets: int) -> list[str]:
    """Common-tree study, resumable: rows already in ``out`` are not rerun."""
    return tree_table(run_resumable(out, n_sets, tree_row))


#: The columns of :func:`tree_table`.
TREE_HEADER = [
    "family",
    "design",
    "data sets",
    "tree: FWER, clusters of null genes only",
    "tree: any rejected cluster without an active gene",
    "tree: power per active block",
    "by resolution: root / > 10 / 2-10 / single gene",
    "clusters rejected",
    "gene P: FWER, null genes",
    "gene P: power per active block",
    "time per data set",
]


def tree_table(frame: pd.DataFrame) -> list[str]:
    rows = []
    for (family, design), g in frame.groupby(["family", "design"], sort=False):
        n = len(g)
        sizes = g[[f"block{k}_size" for k in range(len(ACTIVE))]].to_numpy()
        power = (sizes > 0).mean()
        by = " / ".join(  # shares of the (data set, block) pairs; they sum to power
            f"{np.mean([s > 0 and rule(s) for s in sizes.ravel()]):.2f}"
            for rule in RESOLUTIONS.values()
        )
        rows.append(
            f"| {family} | {design} | {n} | {rate(int(g.tree_null_any.sum()), n)} | "
            f"{rate(int(g.tree_noactive_any.sum()), n)} | {power:.2f} | {by} | "
            f"{g.tree_rejected.mean():.1f} ({g.tree_minimal.mean():.1f} minimal) | "
            f"{rate(int(g.gene_null_any.sum()), n)} | {g.gene_power.mean():.2f} | "
            f"{g.seconds.mean():.1f} s |"
        )
    return rows


#: The plain common-tree results the inheritance study pairs with
#: (``VCPCR(n_clusters=5, lam_ratio=0.5)``, the same seeds and splits).
PLAIN_TREE = [
    os.path.join(os.path.dirname(__file__), "results", name)
    for name in ("inference_tree_lam0.5.csv", "inference_tree_corrnoise_lam0.5.csv")
]


def inheritance_table(out: str) -> list[str]:
    """The common tree with and without inheritance on the same data sets.

    ``out`` holds ``--inheritance`` rows; they are paired by family,
    design and seed with :data:`PLAIN_TREE` (the same data, splits and
    fits: only the descent differs), and only paired data sets are shown.
    """
    keys = ["family", "design", "seed"]
    inh = pd.read_csv(out, keep_default_na=False, na_values=[""])
    plain = pd.concat(
        [pd.read_csv(f, keep_default_na=False, na_values=[""]) for f in PLAIN_TREE]
    )
    both = inh[keys].merge(plain[keys], on=keys)
    rows = []
    for label, frame in (("without", plain), ("with", inh)):
        paired = frame.merge(both, on=keys)
        rows += [f"| {label} {row[1:]}" for row in tree_table(paired)]
    changed = inh.merge(plain, on=keys, suffixes=("", "_plain"))
    n_changed = (changed.tree_rejected != changed.tree_rejected_plain).sum()
    rows.append(f"| data sets where inheritance rejected more: {n_changed} |")
    return rows


def run_genes(out: str, n_sets: int) -> list[str]:
    """Gene-level study, resumable: rows already in ``out`` are not rerun."""
    return genes_table(run_resumable(out, n_sets, gene_row))


def genes_table(frame: pd.DataFrame) -> list[str]:
    rows = []
    for (family, design), g in frame.groupby(["family", "design"], sort=False):
        n = len(g)
        for name in ("gene", "member"):
            null = int(g[f"{name}_null_any"].sum())
            rows.append(
                f"| {family} | {design} | {name} P | {rate(null, n)} | "
                f"{g[f'{name}_corr_share'].mean():.3f} / "
                f"{g[f'{name}_corr_any'].mean():.2f} | "
                f"{g[f'{name}_power'].mean():.2f} | "
                f"{g[f'{name}_rejected'].mean():.1f} | "
                + (
                    " / ".join(f"{g[f'hit_{lv}'].mean():.2f}" for lv in LEVELS)
                    + f" (size {g['hit_size'].mean():.1f}) | "
                    f"{g['gene_level_splits'].mean():.1f} "
                    f"({g['firth_splits'].mean():.1f} Firth) | "
                    f"{g['selected'].mean():.1f} | {g['seconds'].mean():.1f} s |"
                    if name == "gene"
                    else " | | | |"
                )
            )
    return rows


def timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run_cost() -> list[str]:
    data = make_block_data(
        200,
        [20] * 10,
        [0.5, 0, -0.5, 0, 0, 0, 0, 0, 0, 0],
        n_noise=1800,
        random_state=0,
    )
    X, y = data.X, data.y
    est = VCPCR(n_clusters=10, lam_ratio=0.3, n_init=5, random_state=0)
    one = timed(lambda: est.fit(X, y))
    half = timed(lambda: clone(est).fit(X[:100], y[:100]))
    rows = [
        f"| `VCPCR.fit`, 200 x 2,000 ({int((est.labels_ >= 0).sum())} genes "
        f"selected) | {one:.2f} s | |",
        f"| `VCPCR.fit`, 100 x 2,000 (one half) | {half:.2f} s | |",
    ]
    for n_jobs in (1, 2):
        t = timed(
            lambda n_jobs=n_jobs: multi_split(
                clone(est), X, y, n_splits=50, random_state=0, n_jobs=n_jobs
            )
        )
        rows.append(
            f"| `multi_split`, 50 splits, n_jobs={n_jobs} | {t:.1f} s | "
            f"{t / 50:.2f} s = {t / 50 / one:.1f} x one full fit |"
        )
    Xl, yl = load_liver(return_X_y=True)
    liver = VCPCR(n_clusters=10, lam_ratio=0.2, delta=0.1, random_state=0)
    one = timed(lambda: liver.fit(Xl, yl))
    t = timed(lambda: multi_split(clone(liver), Xl, yl, n_splits=50, random_state=0))
    rows.append(f"| Liver 131 x 2,785, the README's `VCPCR`: fit | {one:.1f} s | |")
    rows.append(
        f"| Liver, `multi_split`, 50 splits, n_jobs=1 | {t:.1f} s | "
        f"{t / 50:.2f} s = {t / 50 / one:.1f} x one full fit |"
    )
    small = make_block_data(100, [10] * 20, [0.5] + [0.0] * 19, random_state=1)
    t_cv = timed(lambda: VCPCRCV(random_state=0).fit(small.X, small.y))
    t_ms = timed(
        lambda: multi_split(
            VCPCRCV(), small.X, small.y, n_splits=4, random_state=0, n_jobs=1
        )
    )
    rows.append(f"| `VCPCRCV()` defaults, fit on 100 x 200 | {t_cv:.1f} s | |")
    rows.append(
        f"| `multi_split(VCPCRCV())`, 100 x 200, 4 splits | {t_ms:.1f} s | "
        f"{t_ms / 4:.2f} s (50 splits: about {12.5 * t_ms:.0f} s) |"
    )
    # issue #26's goal: 50 splits of a VCPCRCV() template on 200 x 2,000
    # in under 60 s on 2 cores
    t_cv = timed(lambda: VCPCRCV(random_state=0).fit(X, y))
    rows.append(f"| `VCPCRCV()` defaults, fit on 200 x 2,000 | {t_cv:.1f} s | |")
    for n_jobs in (1, 2):
        t = timed(
            lambda n_jobs=n_jobs: multi_split(
                VCPCRCV(), X, y, n_splits=50, random_state=0, n_jobs=n_jobs
            )
        )
        rows.append(
            f"| `multi_split(VCPCRCV())`, 200 x 2,000, 50 splits, n_jobs={n_jobs} | "
            f"{t:.1f} s | {t / 50:.2f} s = {t / 50 / t_cv:.1f} x one full CV |"
        )
    return rows


def print_table(title: str, header: list[str], rows: Any) -> None:
    """Print a markdown table; ``rows()`` yields each row as it is measured."""
    print(f"\n{title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows():
        print(row, flush=True)


def tables() -> dict[str, tuple[str, list[str], Any]]:
    """Each part: title, column names, and the function giving its rows."""
    return {
        "null": (
            "Global null: FWER at 0.05 (p = 200, 20 blocks of 10 at rho = 0.6)",
            ["family", "method", "FWER", "pass (upper < 0.08)"],
            lambda: (row for family in FAMILIES for row in run_null(family)),
        ),
        "signal": (
            "Signal: the paper's configuration 1 (p = 200, rho = 0.6)",
            [
                "family",
                "method",
                "FWER, null genes (= delta-FWER)",
                "correlated inactive: share rejected / any",
                "power per active block",
                "genes rejected",
            ],
            lambda: (row for family in FAMILIES for row in run_signal(family)),
        ),
        "cv": (
            f"Gaussian, multi_split(VCPCRCV({CV_TEMPLATE})) (tuned by 5-fold "
            f"CV inside every split), {N_CV} data sets each",
            [
                "data",
                "FWER (null genes)",
                "correlated inactive: share / any",
                "power per active block",
                "genes rejected",
            ],
            run_cv_template,
        ),
        "genes": (
            f"Gene level (#26): multi_split(VCPCR(n_clusters=5, "
            f"lam_ratio={GENES_LAM_RATIO})), "
            f"{N_SPLITS} splits, per family and design",
            [
                "family",
                "design",
                "p-values",
                "FWER, null genes",
                "correlated inactive: share / any",
                "power per active block",
                "genes rejected",
                "split x block hit at level all / module / sub-module / gene",
                "splits with the descent",
                "genes selected per split",
                "time per data set",
            ],
            lambda: run_genes(GENES_OUT, N_GENES),
        ),
        "tree": (
            "Common tree (#26 item 2): multi_split("
            + (
                "VCPCRCV()"
                if STUDY_TEMPLATE in ("cv", "cv-default")
                else f"VCPCR(n_clusters=5, lam_ratio={GENES_LAM_RATIO}, "
                f"n_init={N_INIT})"
            )
            + f"), {N_SPLITS} splits, per family and design",
            TREE_HEADER,
            lambda: run_tree(TREE_OUT, N_GENES),
        ),
        "inheritance": (
            "Common tree without and with inheritance (#26; the same data sets, "
            "splits and fits; --out: the --inheritance rows)",
            ["inheritance", *TREE_HEADER],
            lambda: inheritance_table(TREE_OUT),
        ),
        "peers": (
            "Peers of the common-tree study (#26; gaussian): hidimstat's EnCluDL "
            "(delta-FWER) and a desparsified lasso (gene-level FWER, Bonferroni)",
            [
                "family",
                "design",
                "method",
                "data sets",
                "FWER, null genes (= delta-FWER)",
                "any rejected gene without an active gene (FWER over inactive genes)",
                "correlated inactive: share rejected",
                "power per active block",
                "genes rejected",
            ],
            lambda: peer_table(run_resumable(PEERS_OUT, N_GENES, peer_row)),
        ),
        "cost": (
            "Cost (one process unless said; wall-clock seconds of one run)",
            ["what", "wall time", "per split"],
            run_cost,
        ),
    }


def main() -> None:
    global N_NULL, N_SIGNAL, N_SPLITS, N_INIT, N_CV, N_GENES, GENES_OUT
    global GENES_LAM_RATIO, N, TREE_OUT, STUDY_TEMPLATE, PEERS_OUT, INHERITANCE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few data sets only")
    parser.add_argument(
        "--part",
        choices=(
            "all",
            "null",
            "signal",
            "cv",
            "cost",
            "genes",
            "tree",
            "inheritance",
            "peers",
        ),
        default="all",
        help="which table(s) to print",
    )
    parser.add_argument(
        "--n-splits", type=int, default=N_SPLITS, help="splits per multi_split"
    )
    parser.add_argument(
        "--n-signal", type=int, default=N_SIGNAL, help="signal data sets per family"
    )
    parser.add_argument(
        "--cv-scoring",
        default="default",
        help="the VCPCRCV template's scoring (--part cv; 'none': scoring=None; "
        "'default': VCPCRCV's default)",
    )
    parser.add_argument(
        "--cv-selection",
        default="default",
        help="the VCPCRCV template's selection ('default': VCPCRCV's default)",
    )
    parser.add_argument("--n-cv", type=int, default=N_CV, help="data sets (--part cv)")
    parser.add_argument(
        "--n-genes", type=int, default=N_GENES, help="data sets (--part genes or tree)"
    )
    parser.add_argument(
        "--out", default=None, help="CSV (--part genes or tree; a default each)"
    )
    parser.add_argument(
        "--lam-ratio",
        type=float,
        default=GENES_LAM_RATIO,
        help="the template's lam_ratio (--part genes or tree; use another --out)",
    )
    parser.add_argument(
        "--families",
        nargs="+",
        default=list(FAMILIES),
        choices=FAMILIES,
        help="families (--part genes or tree)",
    )
    parser.add_argument(
        "--n-rows", type=int, default=N, help="rows per data set (use another --out)"
    )
    parser.add_argument(
        "--template",
        choices=("vcpcr", "cv", "cv-default"),
        default=STUDY_TEMPLATE,
        help="--part genes or tree: VCPCR(n_clusters=5, lam_ratio=--lam-ratio) "
        "or VCPCRCV() defaults on the 10-point lam_ratio grid STUDY_RATIOS, "
        "or (cv-default) on its own default grid (use another --out)",
    )
    parser.add_argument(
        "--n-init",
        type=int,
        default=N_INIT,
        help="the template's n_init (--part genes or tree; 10 with --lam-ratio "
        "0.5 is VCPCR()'s defaults; use another --out)",
    )
    parser.add_argument(
        "--inheritance",
        action="store_true",
        help="multi_split(inheritance=True) (--part tree; use another --out)",
    )
    parser.add_argument(
        "--designs",
        nargs="+",
        default=DESIGNS_RUN,
        choices=tuple(STUDY_DESIGNS),
        help="designs (--part genes, --part tree; use another --out)",
    )
    args = parser.parse_args()
    DESIGNS_RUN[:] = args.designs
    N_GENES, GENES_LAM_RATIO = args.n_genes, args.lam_ratio
    GENES_OUT = args.out or GENES_OUT
    TREE_OUT = args.out or TREE_OUT
    PEERS_OUT = args.out or PEERS_OUT
    GENES_FAMILIES[:] = args.families
    N = args.n_rows
    STUDY_TEMPLATE = args.template
    INHERITANCE = args.inheritance
    N_INIT = args.n_init
    CV_TEMPLATE.update(
        {
            key: None if value == "none" else value
            for key, value in (
                ("scoring", args.cv_scoring),
                ("selection", args.cv_selection),
            )
            if value != "default"
        }
    )
    N_CV = args.n_cv
    N_SPLITS, N_SIGNAL = args.n_splits, args.n_signal
    if args.quick:
        N_NULL, N_SIGNAL = QUICK["N_NULL"], QUICK["N_SIGNAL"]
        N_SPLITS, N_INIT = QUICK["N_SPLITS"], QUICK["N_INIT"]
        N_CV = QUICK["N_CV"]
    warnings.simplefilter("ignore")  # separation, empty fits: counted as they are
    start = time.perf_counter()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"Machine: {os.cpu_count()} cores; at start: {load}")
    print(
        f"\nn = {N}, multi_split(VCPCR(n_clusters=5, lam_ratio="
        f"{GENES_LAM_RATIO if args.part in ('genes', 'tree') else 0.3}, "
        f"n_init={N_INIT}), n_splits={N_SPLITS}); {N_NULL} null and {N_SIGNAL} "
        f"signal data sets per family."
    )
    for part, (title, header, rows) in tables().items():
        if args.part in ("all", part):
            print_table(title, header, rows)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"\nTotal {time.perf_counter() - start:.0f} s; at the end: {load}")


if __name__ == "__main__":
    main()
