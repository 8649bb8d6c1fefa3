"""The per-fold work of VCPCRCV: grid, batched clustering, outcome, scores.

Per training fold: one standardization, one weights computation for all
deltas, one batched SOS-NMF solve of every (K, start, delta, lam_ratio)
problem (:func:`vcpcr._clustering.best_starts`); the best start of each grid
point is the one with the lowest objective *on the training fold*; then the
outcome model and the score on the test fold. When the scoring is one the
family's CV scorings compute vectorized or per fold
(:class:`vcpcr._family_scoring.FamilyScoring`), the outcome models of all grid
points are fitted together (:meth:`~vcpcr._families.Family.fit_batch`, per
point only where the batch cannot vouch for its fit) and scored together; a
callable or other scorer scores a whole fitted VCPCR per grid point
(:func:`fold_model`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, clone

from vcpcr._clustering import BestStarts, best_starts, loadings
from vcpcr._families import Family, Prepared
from vcpcr._family_scoring import FamilyScoring
from vcpcr._input import ColumnLayout
from vcpcr._scaling import (
    constant_columns,
    independent_columns,
    raw_coefficients,
    standardize,
)
from vcpcr._solvers.kkt import WeightsPath
from vcpcr._solvers.pooled import POOLED
from vcpcr._sos_nmf import random_partition
from vcpcr._weights import scheme_of, weights_for_grid
from vcpcr.exceptions import SeparationWarning

__all__ = [
    "FIT_ERRORS",
    "PAIRED_N_SE",
    "SELECTIONS",
    "FoldResult",
    "FoldSpec",
    "Grid",
    "check_fold_columns",
    "default_grid",
    "default_n_se",
    "fit_fold",
    "fold_model",
    "fold_paired_se",
    "score_se",
    "selected_index",
    "solve_grid",
]


def default_grid(weights: Any, *, delta_max: float | None = None) -> dict[str, Any]:
    """Return the default ``deltas`` and ``lam_ratios`` of a weight scheme.

    Parameters
    ----------
    weights : str or array-like
        The weight scheme (see :class:`VCPCR`).
    delta_max : float, optional
        The smallest penalty giving all-zero weights on the data (see
        :meth:`vcpcr._weights.WeightScheme.delta_max`); required for a
        scheme with an l1 part (``"enet"``, ``"lasso"``, ``"glmnet_lasso"``).

    Returns
    -------
    dict
        ``{"deltas": array or [None], "lam_ratios": array}``.

    Notes
    -----
    ``lam_ratios`` are ``10**linspace(-3, 0, 20)`` for penalized weights:
    the paper's range at twice its density, which covers model sizes more
    evenly (#27's rule E chose it: ``docs/tuning.md``, "Two more
    candidates"); ``linspace(0, 0.9, 10)`` (the paper's) for identity or
    given weights. The ``deltas`` are the scheme's grid
    (:data:`vcpcr._weights.SCHEMES` says why each is what it is).
    """
    scheme = scheme_of(weights)
    if not scheme.penalized:
        # 0.1 steps as the decimals they are (linspace gives 0.6000000000000001)
        return {"deltas": [None], "lam_ratios": np.arange(10) / 10}
    return {
        "deltas": scheme.default_deltas(delta_max),
        "lam_ratios": 10 ** np.linspace(-3, 0, 20),
    }


class Grid(NamedTuple):
    """The grid of one fit: K values, deltas (None: fixed weights), ratios."""

    n_clusters: tuple[int, ...]
    deltas: list[float | None]
    lam_ratios: NDArray[np.float64]

    def points(self) -> list[tuple[int, float | None, float]]:
        """All (K, delta, lam_ratio) in the order of ``cv_results_``."""
        return [
            (K, d, float(r))
            for K in self.n_clusters
            for d in self.deltas
            for r in self.lam_ratios
        ]


class FoldSpec(NamedTuple):
    """Everything a fold needs besides its data (picklable for joblib)."""

    family: Family  # resolved by VCPCRCV.fit
    weights: Any
    grid: Grid
    n_init: int
    max_iter: int
    tol: float
    template: BaseEstimator  # an unfitted VCPCR of the family (see fold_model)
    scoring: Any
    #: what a fold computes (vcpcr._criterion.Criterion.fold_scoring): a
    #: batched scoring, POOLED (the predictors only), None (per point)
    batch_scoring: str | None = None
    latent: str = "paper"  # step 2's loadings (vcpcr._clustering.loadings)
    #: the data's columns, in the user's order: the positions of the
    #: covariates, clustered features and strata (``Z`` and ``S``, the
    #: values on all rows, are not read); None: every column is clustered
    columns: ColumnLayout | None = None
    #: the names of the covariates and strata columns, by position, as VCPCR
    #: names them (its ``covariate_names_``, ``strata_names_``); missing (or
    #: None): ``x<j>``, as VCPCR names an array's columns
    names: Mapping[int, str] | None = None


class TrainFold(NamedTuple):
    """A training fold as steps 0-2 see it.

    ``Xs`` (standardized clustered features, with ``mean``, ``scale``) and
    the data's columns, in the user's order, as a fold model sees them
    (``layout``): ``layout.Z`` holds the covariates kept in this fold (raw)
    and ``layout.covariates`` their positions (a covariate constant or
    collinear within the training fold, e.g. the dummy of a rare level that
    no training row has, is left out of this fold's fit, so its coefficient
    there is 0), ``layout.clustered`` the positions of ``Xs``'s columns,
    ``layout.S`` the strata of a stratified Cox model (None without).
    ``names`` names the covariates and strata columns by position, as
    ``VCPCR`` names them (``x<j>`` where missing).
    """

    Xs: NDArray[np.float64]
    mean: NDArray[np.float64]
    scale: NDArray[np.float64]
    layout: ColumnLayout
    names: Mapping[int, str]

    @property
    def clustered(self) -> slice | NDArray[np.intp]:
        """The clustered columns' positions (a slice when they are consecutive)."""
        return _as_slice(self.layout.clustered)

    def name(self, j: int) -> str:
        """Return the name of column ``j`` (a covariate or stratum)."""
        return self.names.get(int(j), f"x{j}")

    def design(self, M: NDArray[np.float64]) -> NDArray[np.float64]:
        """Step-2 design(s) ``[Z, M]`` (``M`` of shape (n, k) or (B, n, k))."""
        Z = self.layout.Z
        Zb = np.broadcast_to(Z, (*M.shape[:-2], *Z.shape))
        return np.concatenate([Zb, M], axis=-1)

    def strata_frame(self) -> pd.DataFrame | None:
        """Return the strata columns as step 2 (lifelines) takes them, or None."""
        S = self.layout.S
        if S is None:
            return None
        return pd.DataFrame(S, columns=[self.name(j) for j in self.layout.strata])

    def design_names(self, k: int) -> list[str]:
        """Column names of a step-2 design with ``k`` clusters (as ``VCPCR``'s)."""
        covs = [self.name(j) for j in self.layout.covariates]
        return covs + [f"cluster_{j + 1}" for j in range(k)]

    def coefficients(
        self, family: Family, V: sp.csc_array, a0: float, a: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], float]:
        """Coefficients on the data's columns (the user's order) and intercept.

        As a fold model's ``coef_``: the strata columns' coefficients are 0
        (they enter no linear predictor).
        """
        Z, keep = self.layout.Z, self.layout.covariates
        clustered, covs, intercept = raw_coefficients(
            V, a0, a, self.mean, self.scale, Z.mean(axis=0), centred=family.centred
        )
        coef = np.zeros(self.layout.n_features)
        coef[keep], coef[self.clustered] = covs, clustered
        return coef, intercept

    def linear_predictor(
        self, coef: sp.csr_array, intercept: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Linear predictors (n, B) on the training rows of coefficients (B, columns).

        On the raw scale, as ``X_train @ coef.T + intercept`` (the clustered
        columns are only kept standardized: ``Xs * scale + mean``).
        """
        clustered = coef[:, self.clustered]
        covs = coef[:, self.layout.covariates]
        return (
            self.Xs @ (clustered * self.scale).T
            + clustered @ self.mean
            + self.layout.Z @ covs.T
            + intercept
        )


def _as_slice(columns: NDArray[np.intp]) -> slice | NDArray[np.intp]:
    """Return consecutive positions as a slice (a view, not a copy), else as is."""
    if columns.size and np.array_equal(
        columns, np.arange(columns[0], columns[0] + columns.size)
    ):
        return slice(int(columns[0]), int(columns[0]) + columns.size)
    return columns


def train_fold(
    X: NDArray[np.float64],
    rows: NDArray[np.intp],
    columns: ColumnLayout | None = None,
    names: Mapping[int, str] | None = None,
) -> TrainFold:
    """Take a training fold's rows of the data, in the user's column order.

    ``columns`` says which of ``X``'s columns are covariates, clustered
    features and strata (its positions are read, not its ``Z`` and ``S``;
    None: every column is clustered); ``names`` names the covariates and
    strata by position (missing: ``x<j>``, as ``VCPCR`` names an array's
    columns).

    The rows of the clustered columns are taken once, as the fold's own
    row-major copy (whatever ``X``'s memory order), and standardized in
    place there: no other n x p copy; the covariates and strata are taken
    apart (a few columns).
    """
    n_features = X.shape[1]
    if columns is None:
        columns = ColumnLayout(
            np.zeros((0, 0)), np.zeros(0, np.intp), np.arange(n_features), n_features
        )
    cov, strata = columns.covariates, columns.strata
    Z = X[np.ix_(rows, cov)]
    keep = independent_columns(Z)
    S = X[np.ix_(rows, strata)] if strata.size else None
    clustered = _as_slice(columns.clustered)
    if isinstance(clustered, slice) and clustered == slice(0, n_features):
        block = X[rows]
    elif isinstance(clustered, slice):
        block = X[rows, clustered]
    else:
        block = X[np.ix_(rows, clustered)]
    Xs, mean, scale = standardize(block, copy=False)
    layout = ColumnLayout(
        Z[:, keep], cov[keep], columns.clustered, n_features, strata, S
    )
    return TrainFold(Xs, mean, scale, layout, {} if names is None else names)


class FoldResult(NamedTuple):
    #: each point's score on the test fold (NaN under the pooled criterion)
    scores: NDArray[np.float64]
    sizes: NDArray[np.float64]
    n_clusters: NDArray[np.float64]
    n_separated: int
    n_unconverged: int
    #: grid points that could not be fitted or scored in this fold (score NaN)
    failed: NDArray[np.bool_] | None = None
    #: the error message of each failed point, in the order of the points
    failures: tuple[str, ...] = ()
    #: the fold's weight in the mean score (None: equal weights)
    weight: float | None = None
    #: out-of-fold linear predictors (n_points, n_test) of the batched step 2
    #: (NaN rows: points not fitted) under the pooled criterion; else None
    eta: NDArray[np.float64] | None = None
    #: the features' part of ``eta``: the clusters' terms, centred at the training
    #: means (what a calibration slope scales); None with ``eta``
    eta_clustered: NDArray[np.float64] | None = None
    #: the relative KKT violation of each point's step-0 weights (NaN: no
    #: penalty, or the weights could not be fitted)
    weights_kkt: NDArray[np.float64] | None = None


#: What a fit that cannot be done raises (lifelines' ConvergenceError is a
#: ValueError; Coxnet's divergence an ArithmeticError).
FIT_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError)


def _fold_weights(fold: TrainFold, prepared: Prepared, spec: FoldSpec) -> WeightsPath:
    """Weights for every delta of the grid (one row each) and their KKT."""
    Z = fold.layout.Z
    Zs = standardize(Z)[0] if Z.shape[1] else None
    return weights_for_grid(
        fold.Xs,
        prepared.weights_target,
        spec.weights,
        spec.grid.deltas,
        spec.family,
        covariates=Zs,
        delta_name="deltas",
    )


class SolvedFold(NamedTuple):
    """A training fold with every grid point solved (steps 0 and 1).

    ``weights`` holds one row per delta (``weights_kkt`` their relative KKT
    violations, or None) and ``delta_index`` the row of each grid point;
    ``solved`` the kept start of each point.
    """

    train: TrainFold
    prepared: Prepared
    weights: NDArray[np.float64]
    weights_kkt: NDArray[np.float64] | None
    delta_index: NDArray[np.intp]
    solved: BestStarts


def solve_grid(
    Xs: NDArray[np.float64], W: NDArray[np.float64], spec: FoldSpec, seed: int
) -> tuple[BestStarts, NDArray[np.intp]]:
    """Solve the fold's grid; return the best start per grid point.

    Starts are drawn per ``K`` from ``seed``; a point's starts share the
    penalty ``lam_ratio * lam_max`` (the max over its K's starts), as in
    ``VCPCR.fit``; the best start is the one with the lowest objective.
    Returns the kept starts (in the order of ``Grid.points``) and the row of
    ``W`` each point used.
    """
    rng = np.random.default_rng(seed)
    Ks, n_init, ratios = spec.grid.n_clusters, spec.n_init, spec.grid.lam_ratios
    p = Xs.shape[1]
    groups = [[random_partition(p, K, rng) for _ in range(n_init)] for K in Ks]
    # Point order: K, delta, ratio (the order of ``Grid.points``).
    k_i, d_i, r_i = (a.ravel() for a in np.indices((len(Ks), W.shape[0], ratios.size)))
    res = best_starts(
        Xs, W, groups, k_i, d_i, ratios[r_i], max_iter=spec.max_iter, tol=spec.tol
    )
    return res, d_i


def _grid_loadings(
    solved: BestStarts,
    weights: NDArray[np.float64],
    delta_index: NDArray[np.intp],
    latent: str,
) -> tuple[sp.csc_array, NDArray[np.intp]]:
    """Step 2's loadings (:func:`loadings`) of every grid point, side by side.

    ``weights`` are the fold's (deltas x features) and ``delta_index`` each
    point's row of them. Returns a sparse (features x the points' clusters)
    array, an entry per selected feature, and ``offsets``: point ``i``'s
    columns are ``offsets[i]:offsets[i + 1]``. Dense, a fold's loadings
    would take features x clusters floats per grid point, 720 MB for the
    default grid's 360 points at 50,000 features (the coefficients, stacked
    by :func:`_sparse_rows`, 144 MB); the labels and memberships are read
    on the features with a weight only (:attr:`BestStarts.compact_labels`).
    """
    labels = solved.compact_labels
    K = labels.max(axis=1, initial=-1) + 1
    offsets = np.concatenate([[0], np.cumsum(K)])
    point, jc = np.nonzero(labels >= 0)
    j = solved.batch.features[jc]
    w = weights[delta_index[point], j]
    vals = loadings(solved.compact_v[point, jc][:, None], w, latent)[:, 0]
    cols = offsets[point] + labels[point, jc]
    shape = (solved.batch.n_features, int(offsets[-1]))
    V = sp.csc_array((vals, (j, cols)), shape=shape)
    return V, offsets


def fold_model(fold: SolvedFold, spec: FoldSpec, point: int) -> Any:
    """Return grid point ``point`` of a solved fold as a fitted VCPCR.

    A clone of ``spec.template`` (the unfitted VCPCR that VCPCRCV passes
    in, so that this module never imports the estimator) with the point's
    ``n_clusters``, ``delta`` and ``lam_ratio``, whose complete fitted state
    is set by ``VCPCR._set_solution``, as ``VCPCR.fit`` sets its own: a
    scorer may call any of its methods. Step 2 is fitted here (the single
    fit, with its warnings); the batched path builds no model.
    """
    K, delta, ratio = spec.grid.points()[point]
    model = clone(spec.template).set_params(n_clusters=K, delta=delta, lam_ratio=ratio)
    row = fold.delta_index[point]
    train, weights = fold.train, fold.weights[row]
    kkt = None if fold.weights_kkt is None else float(fold.weights_kkt[row])
    return model._set_solution(
        train.Xs,
        train.mean,
        train.scale,
        fold.prepared,
        weights,
        fold.solved.kept(point, train.Xs, weights),
        layout=train.layout,
        weights_kkt=kkt,
    )


def _score_points(
    fold: SolvedFold,
    spec: FoldSpec,
    test: tuple[NDArray[np.float64], Any],
    failures: dict[int, str],
) -> NDArray[np.float64]:
    """Score every grid point's fold model on the test fold with the scorer.

    A point whose step 2 fails, or whose scorer raises one of
    :data:`FIT_ERRORS`, scores NaN; its message is recorded in ``failures``,
    by point.
    """
    scores = np.full(fold.delta_index.size, np.nan)
    for i in range(scores.size):
        try:
            model = fold_model(fold, spec, i)
        except FIT_ERRORS as exc:
            failures[i] = str(exc)
            continue
        try:
            scores[i] = float(spec.scoring(model, *test))
        except FIT_ERRORS as exc:
            failures[i] = f"The scorer raised {type(exc).__name__}: {exc}"
    return scores


#: Why a Cox fold fit is Firth's (one warning per fit; the CV counts them).
_COX_FIRTH = (
    "The Cox outcome was (quasi-)separated in a fold: the partial likelihood "
    "has no finite maximum; Firth's penalized estimate is used."
)


def _fit_grid(
    family: Family,
    fold: TrainFold,
    prepared: Prepared,
    loads: tuple[sp.csc_array, NDArray[np.intp]],
    failures: dict[int, str],
) -> list[tuple[float, NDArray[np.float64]] | None]:
    """Step 2 of every grid point: ``(intercept, covariate + cluster coefficients)``.

    Batched per number of clusters (a stratified Cox model within its
    strata); a point the batch cannot vouch for (e.g. a separated logistic
    fit, a Cox fit that did not converge) is fitted by :meth:`Family.fit`,
    with its warnings. A separated Cox point gets the batch's Firth estimate
    and one :class:`SeparationWarning` (counted, as the logistic fits'
    fallback to Firth). A point that cannot be fitted is None (its message
    recorded in ``failures``, by point). ``loads`` are the points' loadings
    and their offsets (:func:`_grid_loadings`).
    """
    strata, labels = fold.strata_frame(), _stratum_labels(fold)
    V, offsets = loads
    ks = np.diff(offsets)
    out: list[Any] = [None] * ks.size
    M_all = np.asarray(fold.Xs @ V)  # every point's latent variables: one product
    n = M_all.shape[0]
    for k in np.unique(ks):
        idx = np.flatnonzero(ks == k)
        cols = (offsets[idx, None] + np.arange(k)).ravel()
        M = M_all[:, cols].reshape(n, idx.size, k).transpose(1, 0, 2)  # (B, n, k)
        M = fold.design(M)
        fit = family.fit_batch(M, prepared.outcome, labels)
        names = fold.design_names(k)
        for j, i in enumerate(idx):
            if fit.ok[j]:
                out[i] = (float(fit.intercept[j]), fit.coef[j])
                if fit.firth is not None and fit.firth[j]:
                    warnings.warn(_COX_FIRTH, SeparationWarning, stacklevel=2)
            else:
                try:
                    result = family.fit(M[j], prepared.outcome, names, "y", strata)
                except FIT_ERRORS as exc:
                    failures[int(i)] = str(exc)
                    continue
                out[i] = family.split_params(result)
    return out


def _score_grid(
    fold: SolvedFold,
    spec: FoldSpec,
    scoring: str,
    data: tuple[NDArray[np.float64], NDArray[np.float64], Any],
    failures: dict[int, str],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Fit step 2 of all grid points on the training fold, score them together.

    ``scoring`` is :data:`vcpcr._solvers.pooled.POOLED` (no score: the
    scores are NaN, the pooled criterion reads the linear predictors), one
    of the family's ``batch_scorings`` or ``fold_scorings``
    (``family.scoring``; a fold scoring
    also needs the training rows; ``data`` is the test design, the test
    rows' prepared outcome and their response as the scorer of a fold model
    takes it; with strata, a fold scoring is stratified: see
    :meth:`vcpcr._family_scoring.FamilyScoring.score_fold`); a point
    whose step 2 fails scores NaN. When the batched score is not defined on
    this fold, the scorer scores each point's fold model instead (and raises
    or warns as it does). Also returns the test rows' linear predictors
    ``(n_points, n_test)`` and their features' part (the clusters' terms, centred
    at the training means), NaN rows where step 2 failed.
    """
    family = spec.family
    scorings = family.scoring
    res, train = fold.solved, fold.train
    loads = _grid_loadings(res, fold.weights, fold.delta_index, spec.latent)
    V, offsets = loads
    params = _fit_grid(family, train, fold.prepared, loads, failures)
    ok = np.array([par is not None for par in params])
    out = np.full(len(params), np.nan)
    eta_all = np.full((len(params), data[0].shape[0]), np.nan)
    clustered_all = eta_all.copy()
    if not ok.any():
        return out, eta_all, clustered_all
    raw = [
        train.coefficients(family, V[:, offsets[i] : offsets[i + 1]], *par)
        for i, par in enumerate(params)
        if par is not None
    ]
    coef = _sparse_rows([c for c, _ in raw])
    intercept = np.array([b0 for _, b0 in raw])
    Xte, outcome, yte = data
    eta = coef @ Xte.T + intercept[:, None]
    eta_all[ok] = eta
    cols = train.clustered
    clustered_all[ok] = coef[:, cols] @ (Xte[:, cols] - train.mean).T
    if scoring == POOLED:  # the pooled criterion reads the predictors only
        return out, eta_all, clustered_all
    if scoring in scorings.fold_scorings:  # needs the training rows too
        eta_train = train.linear_predictor(coef, intercept)
        out[ok] = scorings.score_fold(
            scoring,
            eta_train.T,
            fold.prepared.outcome,
            eta,
            outcome,
            strata=_stratum_labels(train, Xte),
        )
        return out, eta_all, clustered_all
    scores = None
    if np.all(np.isfinite(eta)):
        scores = scorings.score_batch(scoring, eta, outcome)
    if scores is None:  # the scorer raises or warns on this fold: let it
        return _score_points(fold, spec, (Xte, yte), failures), eta_all, clustered_all
    out[ok] = scores
    return out, eta_all, clustered_all


def _sparse_rows(rows: list[NDArray[np.float64]]) -> sp.csr_array:
    """Stack 1-d arrays of one length, mostly zeros, as the rows of a CSR array."""
    nz = [np.flatnonzero(r) for r in rows]
    indptr = np.concatenate([[0], np.cumsum([i.size for i in nz])])
    data = np.concatenate([r[i] for r, i in zip(rows, nz, strict=True)])
    shape = (len(rows), rows[0].size)
    return sp.csr_array((data, np.concatenate(nz), indptr), shape=shape)


def _stratum_labels(
    train: TrainFold, Xte: NDArray[np.float64] | None = None
) -> NDArray[np.intp] | None:
    """Stratum of each training row, then of each row of ``Xte`` (or None)."""
    layout = train.layout
    if layout.S is None:
        return None
    S = layout.S if Xte is None else np.vstack([layout.S, Xte[:, layout.strata]])
    return np.unique(S, axis=0, return_inverse=True)[1].ravel()


def fit_fold(
    X: NDArray[np.float64],
    rows: NDArray[np.intp],
    prepared: Prepared,
    Xte: NDArray[np.float64],
    outcome: NDArray[np.float64],
    spec: FoldSpec,
    seed: int,
    *,
    y_test: Any,
) -> FoldResult:
    """Everything of one fold: weights, batched clustering, outcome, scores.

    ``X`` is the data (all rows, the user's column order, as
    ``spec.columns`` describes them), ``rows`` the training rows: the fold
    takes its own copy of them (:func:`train_fold`), so ``X`` is not
    changed. ``Xte`` are the test rows (their columns in ``X``'s order).
    The response is validated once, by the fit: ``prepared`` is the
    training rows' (:meth:`vcpcr._families.Family.restrict`), ``outcome``
    the test rows' prepared outcome, which the family's scorings read, and
    ``y_test`` the test rows' response as a scorer of a fold model takes it
    (``scorer(estimator, X_test, y_test)``).
    """
    family = spec.family
    train = train_fold(X, rows, spec.columns, spec.names)
    try:
        path = _fold_weights(train, prepared, spec)
    except FIT_ERRORS as exc:  # no delta can be fitted on this fold
        nan = np.full(len(spec.grid.points()), np.nan)
        failed = np.ones(nan.size, bool)
        return FoldResult(nan, nan, nan, 0, 0, failed, (str(exc),) * nan.size)
    solved, delta_index = solve_grid(train.Xs, path.coef, spec, seed)
    fold = SolvedFold(train, prepared, path.coef, path.kkt, delta_index, solved)
    failures: dict[int, str] = {}
    eta = eta_clustered = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SeparationWarning)
        if spec.batch_scoring is not None:
            scores, eta, eta_clustered = _score_grid(
                fold, spec, spec.batch_scoring, (Xte, outcome, y_test), failures
            )
            if spec.batch_scoring != POOLED:  # only the pooled criterion reads them
                eta = eta_clustered = None
        else:
            scores = _score_points(fold, spec, (Xte, y_test), failures)
    separated = sum(issubclass(c.category, SeparationWarning) for c in caught)
    for c in caught:
        if not issubclass(c.category, SeparationWarning):
            warnings.warn_explicit(c.message, c.category, c.filename, c.lineno)
    labels = solved.compact_labels
    return FoldResult(
        scores,
        np.sum(labels >= 0, axis=1).astype(np.float64),
        (labels.max(axis=1, initial=-1) + 1).astype(np.float64),
        separated,
        int(np.sum(~solved.converged)),
        np.isin(np.arange(scores.size), list(failures)),
        tuple(failures[i] for i in sorted(failures)),
        _fold_weight(family.scoring, spec, outcome),
        eta,
        eta_clustered,
        np.full(scores.size, np.nan) if path.kkt is None else path.kkt[delta_index],
    )


def _fold_weight(
    scorings: FamilyScoring, spec: FoldSpec, outcome: NDArray[np.float64]
) -> float | None:
    """Return the fold's weight in the mean score (fold scorings), else None.

    ``outcome`` is the test rows' prepared outcome.
    """
    if spec.batch_scoring not in scorings.fold_scorings:
        return None
    return scorings.fold_weight(outcome)


#: Standard errors of the difference from the best point that
#: ``selection="paired"`` (``VCPCRCV``'s default) gives up for sparsity.
#: Chosen by #27's rule G, stated before it ran (``benchmarks/bench_gate.py``):
#: 0.75, the smallest gate of 0.5 and 0.75 that chooses at most 3 features on
#: at least 80 % of 200 new null data sets of every family (with the pooled
#: deviance, signed latent variables and the 20-point ``lam_ratio`` grid) and
#: loses no held-out score on signal data sets; confirmed on real cohorts
#: (numbers: docs/tuning.md, "Rule G"). 1 before (the sixth study's rule D),
#: 1.5 before that (the third study's).
PAIRED_N_SE = 0.75

#: The values of ``VCPCRCV``'s ``selection``.
SELECTIONS = ("min", "1se", "paired")


def default_n_se(selection: str) -> float:
    """Return the standard errors ``selection`` gives up when ``n_se`` is None.

    1 for ``"1se"`` (``cv.glmnet``'s ``lambda.1se``), :data:`PAIRED_N_SE`
    for ``"paired"``, 0 for ``"min"``.
    """
    return {"min": 0.0, "1se": 1.0, "paired": PAIRED_N_SE}[selection]


def selected_index(
    res: Any, selection: str, n_splits: int, n_se: float | None = None
) -> int:
    """Return the row of ``cv_results_`` that ``selection`` chooses.

    ``"min"``: the best mean score, ties to the sparsest point (a point whose
    calibration slope is 0 scores as the empty model). ``"1se"``: the
    sparsest point within ``n_se`` (default 1) standard errors of the best:
    the best point's ``se_test_score`` where there is one (the pooled
    criterion's bootstrap), else its fold standard deviation over
    ``sqrt(n_splits)``. ``"paired"``: the sparsest point within ``n_se``
    (default :data:`PAIRED_N_SE`) standard errors of its difference from
    the best (``se_diff_test_score``). Sizes are the mean selected
    features; ties in size go to the better score. Only points with a
    finite mean score are candidates.
    """
    mean = res["mean_test_score"].to_numpy()
    finite = np.isfinite(mean)
    best = int(np.nanargmax(np.where(finite, mean, np.nan)))
    c = default_n_se(selection) if n_se is None else n_se
    if selection == "min":
        margin = np.zeros_like(mean)
    elif selection == "paired":
        margin = c * res["se_diff_test_score"].to_numpy()
    else:
        margin = np.full_like(mean, c * score_se(res, n_splits).to_numpy()[best])
    ok = np.flatnonzero(finite & (mean >= mean[best] - margin))
    order = np.lexsort((-mean[ok], res["mean_size"].to_numpy()[ok]))
    return int(ok[order[0]])


def score_se(res: pd.DataFrame, n_splits: int) -> pd.Series:
    """Return each point's standard error of its mean score (``"1se"``'s unit).

    The pooled criterion's bootstrap standard error (``se_test_score``)
    where there is one, else the fold standard deviation over
    ``sqrt(n_splits)``; :func:`selected_index` and the error bars of
    :func:`vcpcr.plotting.plot_cv` read it.
    """
    if "se_test_score" in res:
        return res["se_test_score"]
    return res["std_test_score"] / np.sqrt(n_splits)


def fold_paired_se(
    scores: NDArray[np.float64], weights: NDArray[np.float64], best: int
) -> NDArray[np.float64]:
    """Return the standard error of each point's mean fold score minus the best's.

    ``scores`` is ``(n_points, n_folds)``; the differences from row ``best``
    fold by fold are paired (the same test rows), and their weighted
    standard deviation over ``sqrt(n_folds)`` is their standard error, as
    ``std_test_score / sqrt(n_splits)`` is a score's.
    """
    diff = scores - scores[best]
    k = scores.shape[1]
    if k < 2:
        return np.zeros(scores.shape[0])
    mean = diff @ weights / weights.sum()
    var = ((diff - mean[:, None]) ** 2) @ weights / weights.sum() * k / (k - 1)
    return np.asarray(np.sqrt(var / k), dtype=np.float64)


#: Entries of ``X[train]`` that :func:`check_fold_columns` copies at once
#: (2**22 float64: 32 MB).
CHECK_BLOCK = 2**22


def check_fold_columns(
    X: NDArray[np.float64],
    folds: list[Any],
    columns: NDArray[np.intp] | None = None,
) -> None:
    """Raise if a column is constant within a training fold (cannot be scaled).

    ``columns`` are the positions of the columns to check (the clustered
    features; None: all), which the message names. Checked by blocks of
    columns, so that no fold's ``X[train]`` is copied whole (the fold's
    worker makes its own copy).
    """
    cols = np.arange(X.shape[1]) if columns is None else np.asarray(columns)
    for i, (train, _) in enumerate(folds):
        step = max(1, CHECK_BLOCK // max(len(train), 1))
        const = np.concatenate(
            [
                cols[j + constant_columns(X[np.ix_(train, cols[j : j + step])])]
                for j in range(0, cols.size, step)
            ]
        )
        if const.size:
            raise ValueError(
                f"Column(s) {const[:10].tolist()} are constant in training fold {i} "
                f"({len(train)} rows), so they cannot be standardized there. Use "
                f"fewer folds, or remove rare or near-constant columns."
            )
