"""Competitor methods of the VC-PCR paper, as scikit-learn regressors.

Every estimator standardizes ``X`` (``ddof=1``) and ``y`` internally and
exposes the same fitted attributes as :class:`vcpcr.VCPCR`, so that one set of
metrics applies to all methods:

* ``coef_`` (n_features,) and ``intercept_`` on the raw scale of ``X``
  (``predict`` is ``X @ coef_ + intercept_``);
* ``labels_`` (n_features,): the cluster of each selected feature, -1 for
  the unselected ones.

Estimators
----------
CRL
    Cluster representative lasso (Buhlmann et al. 2013): unsupervised
    clustering of the features (k-means, Ward, or ClustOfVar's homogeneity
    criterion), then a lasso on the cluster averages.
CEN
    Cluster elastic net (Witten, Shojaie & Zhang 2014): lasso plus a k-means
    penalty on the coefficient-weighted features.
SRR
    Split regularized regression (Christidis et al. 2020): several sparse
    models made diverse by a penalty on shared features, averaged.
hclustvar
    Hierarchical clustering of features as ``ClustOfVar::hclustvar``.

Path functions
--------------
crl_path, cen_path, srr_path
    Warm-started solutions along a path of lasso penalties on standardized
    data (in the style of :func:`sklearn.linear_model.enet_path`), used by
    the estimators and by the paper study :mod:`vcpcr.benchmark`. Their
    lasso problems go through :func:`lasso_path` (scikit-learn's public
    ``enet_path``), except with ``exact=True`` (what :class:`CEN` and
    :class:`SRR` use): a coordinate descent stopped on coefficient changes,
    which a duality-gap stop cannot certify below about ``1e-8``.
cluster_variables
    CRL's step-1 clustering of the features.
"""

from __future__ import annotations

from vcpcr.baselines._cd import lasso_path
from vcpcr.baselines._cen import CEN, cen_path
from vcpcr.baselines._crl import CRL, cluster_variables, crl_path
from vcpcr.baselines._hclustvar import hclustvar
from vcpcr.baselines._srr import SRR, srr_path

__all__ = [
    "CEN",
    "CRL",
    "SRR",
    "cen_path",
    "cluster_variables",
    "crl_path",
    "hclustvar",
    "lasso_path",
    "srr_path",
]
