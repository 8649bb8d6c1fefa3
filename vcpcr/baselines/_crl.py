"""Cluster Representative Lasso (Buhlmann, Rutimann, van de Geer & Zhang 2013)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils import RegressorTags, Tags
from threadpoolctl import threadpool_limits

from vcpcr._checks import (
    check_choice,
    check_labels,
    check_random_state,
    check_same_rows,
)
from vcpcr._sos_nmf import random_partition
from vcpcr.baselines._base import BaselineRegressor
from vcpcr.baselines._cd import lasso_path
from vcpcr.baselines._hclustvar import hclustvar
from vcpcr.exceptions import ConvergenceWarning, user_stacklevel

__all__ = ["CRL", "cluster_variables", "crl_path"]

CLUSTERINGS = ("kmeans", "ward", "hclustcc")
INITS = ("k-means++", "random")


def cluster_variables(
    Xs: NDArray[np.float64],
    K: int,
    clustering: str = "kmeans",
    *,
    init: str | NDArray[np.intp] = "k-means++",
    n_init: int = 10,
    random_state: Any = None,
) -> NDArray[np.intp]:
    """CRL's step 1: labels ``0..K-1`` of the columns of standardized ``Xs``.

    ``clustering`` and ``init`` are those of :class:`CRL`; ``init`` may also
    be a partition of the features (labels ``0..K-1``), whose centroids
    start one run of Lloyd's algorithm.
    """
    p = Xs.shape[1]
    if K in (1, p):  # trivial partitions, whatever the method
        return np.zeros(p, dtype=np.intp) if K == 1 else np.arange(p)
    if clustering == "hclustcc":
        return hclustvar(Xs, K)
    if clustering == "ward":
        from sklearn.cluster import AgglomerativeClustering

        ward = AgglomerativeClustering(n_clusters=K, linkage="ward")
        return np.asarray(ward.fit(Xs.T).labels_, dtype=np.intp)
    from sklearn.cluster import KMeans

    rng = check_random_state(random_state)
    if isinstance(init, str) and init == "k-means++":
        seed = int(rng.integers(2**31 - 1))
        km = KMeans(n_clusters=K, n_init=n_init, random_state=seed)
        with threadpool_limits(limits=1):  # threads only slow down p x n k-means
            km.fit(Xs.T)
        return np.asarray(km.labels_, dtype=np.intp)
    starts = (
        [random_partition(p, K, rng) for _ in range(n_init)]
        if isinstance(init, str)
        else [np.asarray(init, dtype=np.intp)]
    )
    best, best_inertia = np.zeros(p, dtype=np.intp), np.inf
    for start in starts:
        # As R's kmeans(t(X), centers, algorithm = "Lloyd", iter.max = 100).
        _, start = np.unique(start, return_inverse=True)
        H = np.zeros((p, int(start.max()) + 1))
        H[np.arange(p), start] = 1.0
        km = KMeans(
            H.shape[1],
            init=(Xs @ H / H.sum(axis=0)).T,
            n_init=1,
            max_iter=100,
            tol=0.0,
            algorithm="lloyd",
        )
        with threadpool_limits(limits=1):
            km.fit(Xs.T)
        if km.inertia_ < best_inertia:
            best, best_inertia = np.asarray(km.labels_, dtype=np.intp), km.inertia_
    return best


def crl_path(
    Xs: NDArray[np.float64],
    ys: NDArray[np.float64],
    groups: NDArray[np.intp],
    alphas: ArrayLike,
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """CRL's step 2 for a fixed clustering, along the lasso penalties.

    The lasso of ``ys`` on the cluster averages, warm-started from the
    largest penalty down (:func:`vcpcr.baselines._cd.lasso_path`, duality
    gap below ``1e-10 * y'y``); ``alpha = 0`` is least squares (minimum
    norm).

    Parameters
    ----------
    Xs, ys : ndarray
        Standardized data.
    groups : ndarray of int of shape (n_features,)
        Clusters of the features.
    alphas : array-like of shape (n_alphas,)
        Lasso penalties (glmnet's parametrization), ``>= 0``.

    Returns
    -------
    coef : ndarray of shape (n_alphas, n_features)
        ``b_j = a_k / |C_k|`` for ``j`` in cluster ``k``.
    labels : ndarray of int of shape (n_alphas, n_features)
        The cluster of the features of selected clusters, -1 otherwise.
    """
    check_same_rows(Xs, ys, ("Xs", "ys"))
    from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

    alphas = np.asarray(alphas, dtype=np.float64).reshape(-1)
    _, groups = np.unique(groups, return_inverse=True)
    sizes = np.bincount(groups).astype(np.float64)
    onehot = np.zeros((groups.size, sizes.size))
    onehot[np.arange(groups.size), groups] = 1.0
    Z = (Xs @ onehot) / sizes
    a = np.zeros((alphas.size, sizes.size))
    pos = alphas > 0
    if pos.any():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SkConvergenceWarning)
            a[pos] = lasso_path(Z, ys, alphas[pos], tol=1e-10, max_iter=100_000)
        if any(issubclass(c.category, SkConvergenceWarning) for c in caught):
            warnings.warn(
                "The lasso on the cluster representatives did not reach a "
                "duality gap of 1e-10 within max_iter=100000 passes.",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
    if not pos.all():
        a[~pos] = np.linalg.lstsq(Z, ys, rcond=None)[0]
    coef = a[:, groups] / sizes[groups]
    labels = np.where(a[:, groups] != 0.0, groups, -1).astype(np.intp)
    return coef, labels


class CRL(BaselineRegressor):
    r"""Cluster Representative Lasso: cluster the features, then lasso.

    A two-step method: (1) partition the features into ``n_clusters``
    clusters without looking at ``y``; (2) average each cluster's
    standardized features into a representative and fit a lasso of ``y`` on
    the representatives. A cluster's features are selected together, when
    its representative has a non-zero coefficient, and share its coefficient
    (divided by the cluster size).

    Parameters
    ----------
    n_clusters : int, default=5
        Number of clusters :math:`K`.
    clustering : {"kmeans", "ward", "hclustcc"}, default="kmeans"
        Step-1 clustering of the standardized columns: k-means with the
        features as points (CRL-kmeans); Ward's agglomerative clustering of
        the features (CRL-hclust); agglomeration by loss of homogeneity as
        R's ``ClustOfVar::hclustvar`` (CRL-hclustCC, see :func:`hclustvar`).
    alpha : float, default=0.1
        Lasso penalty :math:`\delta` in glmnet's parametrization (see Notes);
        larger values select fewer clusters.
    init : {"k-means++", "random"} or ndarray of shape (n_features,), \
default="k-means++"
        Start of each k-means run: scikit-learn's k-means++ seeding, or the
        centroids of a random partition (every cluster non-empty) followed
        by at most 100 Lloyd iterations, as R's ``kmeans(t(X), centers,
        algorithm = "Lloyd")`` of the VC-PCR paper's code (its CRL-kmeans);
        an array is that partition itself (labels ``0..n_clusters-1``, one
        Lloyd run). Ignored by the hierarchical clusterings.
    n_init : int, default=10
        Number of k-means runs from different starts; the lowest inertia is
        kept. Ignored by the hierarchical clusterings, which are
        deterministic.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds k-means.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients on the raw scale of ``X``.
    intercept_ : float
        Intercept on the raw scale.
    labels_ : ndarray of shape (n_features,)
        Cluster of each selected feature (an index into ``cluster_coef_``),
        -1 for the features of unselected clusters.
    cluster_labels_ : ndarray of shape (n_features,)
        The unsupervised step-1 partition (labels ``0..n_clusters-1``).
    cluster_coef_ : ndarray of shape (n_clusters,)
        Lasso coefficients :math:`a_k` of the representatives (standardized
        scale).
    alpha_max_ : float
        Smallest ``alpha`` that selects no cluster, ``max_k |z_k'y| / n``.
    mean_, scale_ : ndarray of shape (n_features,)
        Column means and standard deviations (``ddof=1``) of ``X``.
    y_mean_, y_scale_ : float
        Mean and standard deviation (``ddof=1``) of ``y``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Feature names seen in ``fit`` (only when ``X`` has string column
        names).

    See Also
    --------
    CEN : Cluster elastic net (clustering and coefficients estimated jointly).
    SRR : Split regularized regression.
    hclustvar : The ``"hclustcc"`` clustering on its own.

    Notes
    -----
    With :math:`X` standardized (mean 0, sample variance 1) and :math:`y`
    centred and scaled to unit sample variance, step 2 solves

    .. math::

        \hat a = \operatorname*{argmin}_{a}\ \frac{1}{2n}\lVert y - Z a\rVert_2^2
        + \delta \lVert a\rVert_1, \qquad
        z_k = \frac{1}{|C_k|}\sum_{j \in C_k} x_j,

    and the feature-level coefficients are :math:`b_j = \hat a_k / |C_k|`
    for :math:`j \in C_k` (standardized scale); ``coef_`` divides them by the
    column standard deviations (times ``y_scale_``). ``alpha`` =
    :math:`\delta`, ``n_clusters`` = :math:`K` in the VC-PCR paper [2]_.

    Conventions (the paper does not pin them): the representatives are the
    plain averages of [1]_ and are not re-standardized before the lasso (R's
    ``glmnet`` would, by default), so a cluster of unrelated features, whose
    average has a small variance, is penalized more. ``"ward"`` clusters the
    standardized columns under Euclidean distance, i.e. R's
    ``hclust(dist(t(X)), "ward.D2")``, where :math:`\lVert x_j - x_l\rVert^2
    = 2(n-1)(1 - r_{jl})` is a signed-correlation distance. ``"kmeans"`` uses
    scikit-learn's k-means++ by default (R's ``kmeans`` draws random centres
    and uses Hartigan-Wong); ``init="random"`` is the paper code's Lloyd
    run from a random partition.

    References
    ----------
    .. [1] Buhlmann, P., Rutimann, P., van de Geer, S., Zhang, C.-H. (2013).
       "Correlated variables in regression: clustering and sparse
       estimation." Journal of Statistical Planning and Inference 143(11).
    .. [2] Marion, R., Lederer, J., Govaerts, B., von Sachs, R. "VC-PCR: A
       prediction method based on supervised variable selection and
       clustering." arXiv:2202.00975.

    Examples
    --------
    Three blocks of four correlated features, the middle one inactive:

    >>> import numpy as np
    >>> from vcpcr.baselines import CRL
    >>> from vcpcr.simulate import make_block_data
    >>> data = make_block_data(
    ...     60, [4, 4, 4], [1.0, 0.0, -1.0], rho=0.8, random_state=0
    ... )
    >>> model = CRL(n_clusters=3, clustering="hclustcc", alpha=0.1)
    >>> model = model.fit(data.X, data.y)
    >>> model.labels_
    array([ 0,  0,  0,  0, -1, -1, -1, -1,  2,  2,  2,  2])
    >>> bool(np.all(np.sign(model.coef_[[0, 11]]) == [1, -1]))
    True
    """

    def __init__(
        self,
        n_clusters: int = 5,
        *,
        clustering: str = "kmeans",
        alpha: float = 0.1,
        init: str | ArrayLike = "k-means++",
        n_init: int = 10,
        random_state: Any = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.clustering = clustering
        self.alpha = alpha
        self.init = init
        self.n_init = n_init
        self.random_state = random_state

    def __sklearn_tags__(self) -> Tags:
        """Regressor tags, with ``poor_score`` (see the comment)."""
        tags = super().__sklearn_tags__()
        # Averaging a cluster forces equal coefficients on its features: on
        # scikit-learn's generic check data (10 independent features, 2
        # clusters) the fit cannot reach the R^2 = 0.5 the check expects.
        tags.regressor_tags = RegressorTags(poor_score=True)
        return tags

    def _check_init(self, K: int, p: int) -> str | NDArray[np.intp]:
        """``init`` as a choice of :data:`INITS` or a partition of the features."""
        if isinstance(self.init, str):
            return check_choice(self.init, "init", INITS, owner="CRL")
        labels = check_labels(self.init, p, "init", n_clusters=K)
        if np.unique(labels).size < K:  # Lloyd's centroids need every cluster
            raise ValueError(
                f"The 'init' parameter of CRL must use every label 0..n_clusters-1 "
                f"= 0..{K - 1}; got labels {np.unique(labels).tolist()!r:.80}. "
                f"Give a partition with {K} non-empty clusters, or init='random'."
            )
        return labels

    def _fit_standardized(
        self, Xs: NDArray[np.float64], ys: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Cluster the features, then fit the lasso on the representatives."""
        n, p = Xs.shape
        K = self._check_n_clusters("n_clusters", p)
        check_choice(self.clustering, "clustering", CLUSTERINGS, owner="CRL")
        self._check_real("alpha")
        self._check_int("n_init")
        init = self._check_init(K, p)
        groups = cluster_variables(
            Xs,
            K,
            self.clustering,
            init=init,
            n_init=int(self.n_init),
            random_state=self.random_state,
        )
        _, groups = np.unique(groups, return_inverse=True)
        sizes = np.bincount(groups).astype(np.float64)
        self.alpha_max_ = float(
            np.abs(np.bincount(groups, Xs.T @ ys) / sizes).max() / n
        )
        coef, labels = crl_path(Xs, ys, groups, [float(self.alpha)])
        self.cluster_labels_ = groups.astype(np.intp)
        self.cluster_coef_ = np.bincount(groups, weights=coef[0])
        self.labels_ = labels[0]
        return coef[0]
