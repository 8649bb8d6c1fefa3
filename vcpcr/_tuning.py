"""The per-fold work of VCPCRCV: grid, batched clustering, outcome, scores.

Per training fold: one standardization, one weights computation for all
deltas, one batched SOS-NMF solve of every (K, start, delta, lam_ratio)
problem (:func:`vcpcr._clustering.best_starts`); the best start of each grid
point is the one with the lowest objective *on the training fold*; then the
outcome model and the score on the test fold. When the scoring is one the
family computes vectorized (:attr:`vcpcr._families.Family.batch_scorings`),
the outcome models of all grid points are fitted together
(:meth:`~vcpcr._families.Family.fit_batch`, per point only where the batch
cannot vouch for its fit) and scored together; a callable or other scorer
gets a fitted-looking estimator per grid point.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, clone

from vcpcr._clustering import best_starts
from vcpcr._families import FAMILIES, Family, Prepared
from vcpcr._scaling import constant_columns, raw_coefficients, standardize
from vcpcr._sos_nmf import random_partition
from vcpcr._weights import weights_for_grid
from vcpcr.exceptions import SeparationWarning

__all__ = [
    "DEFAULT_SCORING",
    "FIT_ERRORS",
    "FoldResult",
    "FoldSpec",
    "Grid",
    "batch_scoring",
    "check_fold_columns",
    "default_grid",
    "fit_fold",
    "one_se_index",
    "scoring_name",
    "solve_grid",
]


#: Default scorer per family (scikit-learn scorer names; higher is better;
#: None: the estimator's score, e.g. Harrell's concordance index for cox).
DEFAULT_SCORING = {name: f.default_scoring for name, f in FAMILIES.items()}


def scoring_name(scoring: Any, family: str) -> str:
    """Return a display name of the scoring used for ``family``."""
    return str(scoring or FAMILIES[family].scoring_name)


def batch_scoring(scoring: Any, family: str) -> str | None:
    """Name of the scoring if ``family`` scores it vectorized, else None."""
    if scoring is not None and not isinstance(scoring, str):
        return None  # a callable: the per-point estimator path
    name = scoring_name(scoring, family)
    fam = FAMILIES[family]
    return name if name in fam.batch_scorings or name in fam.fold_scorings else None


def default_grid(weights: Any, *, delta_max: float | None = None) -> dict[str, Any]:
    """Return the default ``deltas`` and ``lam_ratios`` of a weight scheme.

    Parameters
    ----------
    weights : str or array-like
        The weight scheme (see :class:`VCPCR`).
    delta_max : float, optional
        The smallest penalty giving all-zero weights on the data (see
        :func:`vcpcr._weights.lasso_delta_max`); required for ``"enet"``,
        ``"lasso"`` and ``"glmnet_lasso"``.

    Returns
    -------
    dict
        ``{"deltas": array or [None], "lam_ratios": array}``.

    Notes
    -----
    ``lam_ratios`` are the paper's: ``10**linspace(-3, 0, 10)`` for
    penalized weights, ``linspace(0, 0.9, 10)`` for identity or given
    weights. Elastic-net and lasso ``deltas`` are ``delta_max *
    10**linspace(-2, log10(0.5), 6)``: the paper's lasso grid ends at 0.2,
    its lower end ``1e-5 delta_max`` is an almost unpenalized fit that only
    saturates at ``n`` variables (the weights study chose 0.02-0.05 for the
    elastic net). Ridge ``deltas`` are ``(1e-4, 1e-2, 1)``: the paper's
    range ``[1e-4, 1e-2]`` extended to 1, the end of the range over which we
    found the clustering accuracy flat (see :func:`vcpcr.compute_weights`);
    since it is flat there, three values suffice (the grid's cost is linear
    in its size). The paper's glmnet weights get the paper's grids, with
    five values: ``10**linspace(-4, -2, 5)`` (``"glmnet_ridge"``) and
    ``delta_max * 10**linspace(-5, log10(0.2), 5)`` (``"glmnet_lasso"``).
    """
    ratios = 10 ** np.linspace(-3, 0, 10)
    if isinstance(weights, str) and weights in ("ridge", "glmnet_ridge"):
        top = 0 if weights == "ridge" else -2
        deltas = 10 ** np.linspace(-4, top, 3 if top == 0 else 5)
        return {"deltas": deltas, "lam_ratios": ratios}
    if isinstance(weights, str) and weights in ("enet", "lasso", "glmnet_lasso"):
        if delta_max is None:
            raise ValueError(f"delta_max is required for the {weights} grid.")
        rel = (
            10 ** np.linspace(-5, np.log10(0.2), 5)
            if weights == "glmnet_lasso"
            else 10 ** np.linspace(-2, np.log10(0.5), 6)
        )
        return {"deltas": delta_max * rel, "lam_ratios": ratios}
    return {"deltas": [None], "lam_ratios": np.linspace(0.0, 0.9, 10)}


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

    family: str
    weights: Any
    grid: Grid
    n_init: int
    max_iter: int
    tol: float
    template: BaseEstimator  # an unfitted VCPCR of the family (see _frozen_model)
    scoring: Any
    batch_scoring: str | None = None  # see batch_scoring(); None: per point


class FoldResult(NamedTuple):
    scores: NDArray[np.float64]
    sizes: NDArray[np.float64]
    n_clusters: NDArray[np.float64]
    n_separated: int
    n_unconverged: int
    #: grid points that could not be fitted in this fold (their score is NaN)
    failed: NDArray[np.bool_] | None = None
    #: the first error message of a failed fit
    failure: str = ""
    #: the fold's weight in the mean score (None: equal weights)
    weight: float | None = None


#: What a fit that cannot be done raises (lifelines' ConvergenceError is a
#: ValueError; Coxnet's divergence an ArithmeticError).
FIT_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError)


def _fold_weights(
    Xs: NDArray[np.float64], prepared: Prepared, spec: FoldSpec
) -> NDArray[np.float64]:
    """Weights for every delta of the grid (one row each)."""
    return weights_for_grid(
        Xs, prepared.weights_target, spec.weights, spec.grid.deltas, spec.family
    )


def solve_grid(
    Xs: NDArray[np.float64], W: NDArray[np.float64], spec: FoldSpec, seed: int
) -> tuple[list[Any], int]:
    """Solve the fold's grid; return the best start per grid point.

    Starts are drawn per ``K`` from ``seed``; a point's starts share the
    penalty ``lam_ratio * lam_max`` (the max over its K's starts), as in
    ``VCPCR.fit``; the best start is the one with the lowest objective.
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
    unconverged = int(np.sum(~res.converged))
    return list(zip(res.labels, res.v, W[d_i], strict=True)), unconverged


def _membership(
    labels: NDArray[np.intp], v: NDArray[np.float64]
) -> NDArray[np.float64]:
    K = int(labels.max(initial=-1)) + 1
    V = np.zeros((labels.size, K))
    sel = labels >= 0
    V[np.flatnonzero(sel), labels[sel]] = v[sel]
    return V


def _frozen_model(
    spec: FoldSpec,
    coef: NDArray[np.float64],
    intercept: float,
    prepared: Prepared,
    n_features: int,
) -> Any:
    """Return a fitted-looking VCPCR predicting ``X @ coef + intercept``.

    The per-point scorer (a callable or a scoring the family does not
    vectorize) needs an estimator. This clones ``spec.template``, the
    unfitted VCPCR that VCPCRCV passes in (so this module never imports the
    estimator), and sets the fitted attributes its ``predict``,
    ``predict_proba``, ``decision_function`` and ``score`` read on design
    matrices: ``coef_``, ``intercept_``, ``n_features_in_`` and ``classes_``.
    It is the one place that writes an estimator's fitted attributes from
    outside ``fit``, documented as such.
    """
    model = clone(spec.template)
    model.coef_, model.intercept_, model.n_features_in_ = coef, intercept, n_features
    if prepared.classes is not None:
        model.classes_ = prepared.classes
    return model


def _score_point(
    Xs: NDArray[np.float64],
    mean: NDArray[np.float64],
    scale: NDArray[np.float64],
    prepared: Prepared,
    V: NDArray[np.float64],
    spec: FoldSpec,
    test: tuple[NDArray[np.float64], Any],
    failures: dict[int, str],
    index: int,
) -> float:
    """Fit step 2 on the training fold and score the test fold.

    A step-2 fit that fails scores NaN; its message is recorded in
    ``failures[index]``.
    """
    family = FAMILIES[spec.family]
    names = [f"cluster_{k + 1}" for k in range(V.shape[1])]
    try:
        result = family.fit(Xs @ V, prepared.outcome, names, "y")
    except FIT_ERRORS as exc:
        failures[index] = str(exc)
        return np.nan
    a0, a = family.split_params(result)
    coef, intercept = raw_coefficients(V, a0, a, mean, scale)
    model = _frozen_model(spec, coef, intercept, prepared, Xs.shape[1])
    return float(spec.scoring(model, *test))


def _fit_grid(
    family: Family,
    Xs: NDArray[np.float64],
    prepared: Prepared,
    Vs: list[NDArray[np.float64]],
    failures: dict[int, str],
) -> list[tuple[float, NDArray[np.float64]] | None]:
    """Step 2 of every grid point: ``(intercept, cluster coefficients)``.

    Batched per number of clusters; a point the batch cannot vouch for (e.g.
    a separated logistic fit) is fitted by :meth:`Family.fit`, with its
    warnings. A point that cannot be fitted is None (its message recorded in
    ``failures``, by point).
    """
    out: list[Any] = [None] * len(Vs)
    ks = np.array([V.shape[1] for V in Vs])
    for k in np.unique(ks):
        idx = np.flatnonzero(ks == k)
        # One product for the group: X [V_1 ... V_B], split into (B, n, k).
        V = np.concatenate([Vs[i] for i in idx], axis=1)
        M = (Xs @ V).reshape(Xs.shape[0], idx.size, k).transpose(1, 0, 2)
        fit = family.fit_batch(M, prepared.outcome)
        names = [f"cluster_{j + 1}" for j in range(k)]
        for j, i in enumerate(idx):
            if fit.ok[j]:
                out[i] = (float(fit.intercept[j]), fit.coef[j])
            else:
                try:
                    result = family.fit(M[j], prepared.outcome, names, "y")
                except FIT_ERRORS as exc:
                    failures[int(i)] = str(exc)
                    continue
                out[i] = family.split_params(result)
    return out


def _score_grid(
    Xs: NDArray[np.float64],
    mean: NDArray[np.float64],
    scale: NDArray[np.float64],
    prepared: Prepared,
    Vs: list[NDArray[np.float64]],
    spec: FoldSpec,
    scoring: str,
    test: tuple[NDArray[np.float64], Any],
    failures: dict[int, str],
) -> NDArray[np.float64]:
    """Fit step 2 of all grid points on the training fold, score them together.

    ``scoring`` is one of the family's ``batch_scorings``; a point whose
    step 2 fails scores NaN.
    """
    family = FAMILIES[spec.family]
    params = _fit_grid(family, Xs, prepared, Vs, failures)
    ok = np.array([par is not None for par in params])
    out = np.full(len(Vs), np.nan)
    if not ok.any():
        return out
    raw = [
        raw_coefficients(V, par[0], par[1], mean, scale)
        for V, par in zip(Vs, params, strict=True)
        if par is not None
    ]
    coef = np.stack([c for c, _ in raw])
    intercept = np.array([b0 for _, b0 in raw])
    Xte, yte = test
    eta = coef @ Xte.T + intercept[:, None]
    scores = None
    if scoring in family.fold_scorings:  # needs the training rows too
        # the training rows' linear predictor, on the scale of ``eta``
        eta_train = (Xs * scale + mean) @ coef.T + intercept
        out[ok] = family.score_fold(scoring, eta_train.T, prepared.outcome, eta, yte)
        return out
    if np.all(np.isfinite(eta)):
        scores = family.score_batch(scoring, eta, yte, prepared.classes)
    if scores is None:  # the scorer raises or warns on this fold: let it
        p = Xs.shape[1]
        scores = np.array(
            [
                spec.scoring(_frozen_model(spec, c, b0, prepared, p), Xte, yte)
                for c, b0 in raw
            ],
            dtype=np.float64,
        )
    out[ok] = scores
    return out


def fit_fold(
    Xtr: NDArray[np.float64],
    ytr: Any,
    Xte: NDArray[np.float64],
    yte: Any,
    spec: FoldSpec,
    seed: int,
) -> FoldResult:
    """Everything of one fold: weights, batched clustering, outcome, scores."""
    family: Family = FAMILIES[spec.family]
    Xs, mean, scale = standardize(Xtr)
    prepared = family.prepare(ytr)
    try:
        W = _fold_weights(Xs, prepared, spec)
    except FIT_ERRORS as exc:  # no delta can be fitted on this fold
        nan = np.full(len(spec.grid.points()), np.nan)
        return FoldResult(nan, nan, nan, 0, 0, np.ones(nan.size, bool), str(exc))
    best, unconverged = solve_grid(Xs, W, spec, seed)
    Vs = [_membership(labels, v) for labels, v, _ in best]
    failures: dict[int, str] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SeparationWarning)
        if spec.batch_scoring is not None:
            scores = _score_grid(
                Xs,
                mean,
                scale,
                prepared,
                Vs,
                spec,
                spec.batch_scoring,
                (Xte, yte),
                failures,
            )
        else:
            scores = np.array(
                [
                    _score_point(
                        Xs, mean, scale, prepared, V, spec, (Xte, yte), failures, i
                    )
                    for i, V in enumerate(Vs)
                ]
            )
    separated = sum(issubclass(c.category, SeparationWarning) for c in caught)
    for c in caught:
        if not issubclass(c.category, SeparationWarning):
            warnings.warn_explicit(c.message, c.category, c.filename, c.lineno)
    return FoldResult(
        scores,
        np.array([float(np.sum(labels >= 0)) for labels, _, _ in best]),
        np.array([float(V.shape[1]) for V in Vs]),
        separated,
        unconverged,
        np.isin(np.arange(len(Vs)), list(failures)),
        next(iter(failures.values()), ""),
        _fold_weight(family, spec, yte),
    )


def _fold_weight(family: Family, spec: FoldSpec, yte: Any) -> float | None:
    """Return the fold's weight in the mean score (fold scorings), else None."""
    if spec.batch_scoring not in family.fold_scorings:
        return None
    return family.fold_weight(yte)


def one_se_index(res: Any, n_splits: int) -> int:
    """Return the sparsest grid point within one standard error of the best.

    ``res`` is a ``cv_results_`` frame; the standard error is the best
    point's fold standard deviation over ``sqrt(n_splits)``; ties in model
    size go to the better score.
    """
    mean = res["mean_test_score"].to_numpy()
    finite = np.isfinite(mean)
    best = int(np.nanargmax(np.where(finite, mean, np.nan)))
    se = res["std_test_score"].to_numpy()[best] / np.sqrt(n_splits)
    ok = np.flatnonzero(finite & (mean >= mean[best] - se))
    order = np.lexsort((-mean[ok], res["mean_size"].to_numpy()[ok]))
    return int(ok[order[0]])


def check_fold_columns(X: NDArray[np.float64], folds: list[Any]) -> None:
    """Raise if a column is constant within a training fold (cannot be scaled)."""
    for i, (train, _) in enumerate(folds):
        Xtr = X[train]
        const = constant_columns(Xtr)
        if const.size:
            raise ValueError(
                f"Column(s) {const[:10].tolist()} are constant in training fold {i} "
                f"({len(train)} rows), so they cannot be standardized there. Use "
                f"fewer folds, or remove rare or near-constant columns."
            )
