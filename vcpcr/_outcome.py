"""Step 2 of VC-PCR: the outcome model on the cluster latent variables.

Adapters that return the untouched statsmodels results object or lifelines
fitter, one per family (each :class:`vcpcr._families.Family` calls its own):

* :func:`fit_ols`: ``statsmodels.OLS`` with an intercept;
* :func:`fit_cox`: ``lifelines.CoxPHFitter`` (Efron ties, converged fully);
* :func:`fit_logit`: ``statsmodels.Logit``; when the outcome is (quasi-)completely
  separated (detected exactly by a linear program) the maximum-likelihood
  estimate does not exist, and Firth's bias-reduced estimate is returned
  instead, wrapped in a genuine :class:`statsmodels.discrete.discrete_model.
  LogitResults` with the inverse Fisher information as covariance (the same
  standard errors as R's ``brglm2``).
"""

from __future__ import annotations

import re
import warnings
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.optimize import linprog

from vcpcr._solvers.distributions import LOGISTIC
from vcpcr.exceptions import (
    ConvergenceWarning,
    SeparationWarning,
    VCPCRWarning,
    user_stacklevel,
)

__all__ = [
    "Separation",
    "detect_separation",
    "firth_logit",
    "fit_cox",
    "fit_logit",
    "fit_ols",
]


class Separation(NamedTuple):
    """Result of :func:`detect_separation`.

    Attributes
    ----------
    separated : bool
        Whether the maximum-likelihood estimate fails to exist.
    complete : bool
        Whether every observation is perfectly predicted.
    n_perfect : int
        Number of observations on the correct side of a separating direction
        with a non-zero margin.
    """

    separated: bool
    complete: bool
    n_perfect: int


def detect_separation(X: NDArray[np.float64], y: NDArray[np.float64]) -> Separation:
    """Test whether a logistic regression of ``y`` on ``X`` has a finite MLE.

    The MLE exists unless some direction ``b != 0`` has ``s_i x_i'b >= 0`` for
    all observations (``s_i = 2 y_i - 1``), i.e. (quasi-)complete separation
    (Albert and Anderson, 1984). The linear program of Konis (2007)
    maximizes ``sum_i s_i x_i'b`` over such directions in the box
    ``[-1, 1]^k``; a positive optimum proves separation. A second program
    maximizes the smallest margin to tell complete from quasi-complete
    separation.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_params)
        Design matrix, including the intercept column.
    y : ndarray of shape (n_samples,)
        Binary outcome (0/1).

    Returns
    -------
    Separation
        Whether and how the data are separated.
    """
    A = (2 * y - 1)[:, None] * X
    n, k = A.shape
    box = [(-1.0, 1.0)] * k
    res = linprog(-A.sum(axis=0), A_ub=-A, b_ub=np.zeros(n), bounds=box, method="highs")
    margin = A @ res.x if res.status == 0 else np.zeros(n)
    tol = 1e-9 * max(1.0, float(np.abs(X).max())) * k
    n_perfect = int(np.sum(margin > tol))
    if n_perfect == 0:
        return Separation(False, False, 0)
    # Complete separation: some direction has every margin positive, i.e. the
    # largest achievable smallest margin t is positive.
    res = linprog(
        np.r_[np.zeros(k), -1.0],
        A_ub=np.hstack([-A, np.ones((n, 1))]),
        b_ub=np.zeros(n),
        bounds=[*box, (0.0, None)],
        method="highs",
    )
    complete = res.status == 0 and -res.fun > tol
    return Separation(True, bool(complete), n if complete else n_perfect)


def firth_logit(
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    max_iter: int = 200,
    tol: float = 1e-10,
) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    """Firth's bias-reduced logistic regression (Jeffreys-prior penalty).

    Maximizes ``loglik(b) + 0.5 log det I(b)``, whose gradient is the modified
    score ``U* = X'(y - pi + h (1/2 - pi))`` (Heinze and Schemper, 2002), by
    Newton steps with step halving (Fisher-scoring steps ``I^-1 U*`` where
    the Hessian is not negative definite); this equals R ``brglm2``'s
    ``type = "AS_mean"`` for the logit link. The estimate is finite even
    under separation.

    Parameters
    ----------
    X, y : ndarray
        Design matrix and binary outcome, as in :func:`detect_separation`.
    max_iter : int, default=200
        Maximum number of steps.
    tol : float, default=1e-10
        Convergence threshold on ``sqrt(U*' I^-1 U*)``, the length of the
        scoring step in the metric of the Fisher information, i.e. roughly
        the distance to the estimate in units of its standard errors. Unlike
        a relative step, it does not depend on the scale of the latent
        variables, and it stays meaningful when separation makes the
        coefficients large.

    Returns
    -------
    params : ndarray of shape (n_params,)
        The estimate.
    cov : ndarray of shape (n_params, n_params)
        Inverse Fisher information at the estimate.
    n_iter : int
        Steps taken.
    """

    def penalized(b: NDArray[np.float64]) -> float:
        eta = X @ b
        info = (X.T * LOGISTIC.variance(LOGISTIC.mean(eta))) @ X
        sign, logdet = np.linalg.slogdet(info)
        ll = LOGISTIC.log_likelihood(eta, y)
        return ll + 0.5 * logdet if sign > 0 else -np.inf

    b = np.zeros(X.shape[1])
    f = penalized(b)
    for it in range(1, max_iter + 1):  # noqa: B007 (it is returned)
        score, cov, step = _firth_step(X, y, b)
        size = float(np.sqrt(max(float(score @ cov @ score), 0.0)))
        # Step halving; the slack lets rounding-level changes of f through, as
        # f is flat to O(step^2) near the optimum.
        t, slack = 1.0, 1e-12 * max(1.0, abs(f))
        while (f_new := penalized(b + t * step)) < f - slack and t > 1e-8:
            t /= 2
        b, f = b + t * step, f_new
        if size <= tol:
            break
    else:
        warnings.warn(
            f"Firth's logistic regression did not converge within {max_iter} "
            f"iterations: the last step was {size:.3g} standard errors "
            f"(tol={tol:g}).",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    mu = LOGISTIC.mean(X @ b)
    return b, np.linalg.inv((X.T * LOGISTIC.variance(mu)) @ X), it


def _firth_step(
    X: NDArray[np.float64], y: NDArray[np.float64], b: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Return the modified score, the inverse Fisher information and a step.

    The step is Newton's on the penalized log-likelihood when its Hessian is
    negative definite (quadratic convergence), else Fisher scoring's
    ``I^-1 U*`` (always an ascent direction, but only linearly convergent, very
    slowly so under separation). With ``Q = X I^-1 X'``, ``h_i = w_i Q_ii`` and
    ``w' = w (1 - 2 pi)``, the Hessian is ``-I + X' D`` where row ``i`` of
    ``D`` is ``(1/2 - pi_i) dh_i/db - h_i w_i x_i`` and ``dh_i/db =
    w'_i Q_ii x_i - w_i sum_j Q_ij^2 w'_j x_j``.
    """
    mu = LOGISTIC.mean(X @ b)
    w = LOGISTIC.variance(mu)
    info = (X.T * w) @ X
    cov = np.linalg.inv(info)
    Q = X @ cov @ X.T
    q = np.diag(Q)
    h = w * q
    score = X.T @ (y - mu + h * (0.5 - mu))
    dw = w * (1 - 2 * mu)
    dh = (dw * q)[:, None] * X - w[:, None] * ((Q**2) @ (dw[:, None] * X))
    hessian = -info + X.T @ ((0.5 - mu)[:, None] * dh - (h * w)[:, None] * X)
    try:
        chol = np.linalg.cholesky(-(hessian + hessian.T) / 2)
    except np.linalg.LinAlgError:
        return score, cov, cov @ score
    step = np.linalg.solve(chol.T, np.linalg.solve(chol, score))
    return score, cov, step


def _logit_results(
    y: pd.Series,
    X: pd.DataFrame,
    params: NDArray[np.float64],
    cov: NDArray[np.float64],
    n_iter: int,
) -> Any:
    """Wrap a Firth estimate in a statsmodels ``LogitResults`` (same API as fit)."""
    from statsmodels.base.model import LikelihoodModelResults
    from statsmodels.discrete.discrete_model import (
        BinaryResultsWrapper,
        Logit,
        LogitResults,
    )

    model = Logit(y, X)
    base = LikelihoodModelResults(model, params, normalized_cov_params=cov, scale=1.0)
    base.mle_retvals = {"converged": True, "iterations": n_iter, "method": "firth"}
    base.mle_settings = {"optimizer": "firth", "start_params": None}
    return BinaryResultsWrapper(LogitResults(model, base))


def _fit_logit(y: pd.Series, X: pd.DataFrame) -> tuple[Any, Separation]:
    """Logit MLE, or Firth's estimate with a SeparationWarning if separated."""
    from statsmodels.discrete.discrete_model import Logit

    Xa, ya = X.to_numpy(dtype=float), y.to_numpy(dtype=float)
    sep = detect_separation(Xa, ya)
    if not sep.separated:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = Logit(y, X).fit(method="newton", maxiter=100, disp=0)
        if res.mle_retvals["converged"] and not caught:
            return res, sep
    kind = "complete" if sep.complete else "quasi-complete"
    what = (
        f"{kind} separation: {sep.n_perfect} of {len(ya)} observations are "
        f"perfectly predicted by the cluster latent variables"
        if sep.separated
        else "the maximum-likelihood fit did not converge"
    )
    warnings.warn(
        f"Logistic regression: {what}, so the maximum-likelihood coefficients "
        f"are infinite or unstable. Using Firth's bias-reduced estimate, which is "
        f"finite (result_.mle_retvals['method'] == 'firth').",
        SeparationWarning,
        stacklevel=user_stacklevel(),
    )
    params, cov, n_iter = firth_logit(Xa, ya)
    return _logit_results(y, X, params, cov, n_iter), sep


def _design(
    M: NDArray[np.float64], y: NDArray[np.float64], names: list[str], yname: str
) -> tuple[pd.Series, pd.DataFrame]:
    """Response and design (intercept first) as statsmodels names them."""
    exog = pd.DataFrame(M, columns=names)
    exog.insert(0, "const", 1.0)
    return pd.Series(y, name=yname), exog


def fit_ols(
    M: NDArray[np.float64],
    y: NDArray[np.float64],
    *,
    names: list[str],
    yname: str,
) -> Any:
    """OLS of ``y`` on the latent variables ``M`` with an intercept.

    Parameters
    ----------
    M : ndarray of shape (n_samples, n_clusters)
        Latent variables (standardized data times memberships).
    y : ndarray of shape (n_samples,)
        Response on its original scale.
    names : list of str
        Names of the columns of ``M``.
    yname : str
        Name of the response.

    Returns
    -------
    statsmodels.regression.linear_model.RegressionResultsWrapper
        The untouched results.
    """
    # the model's own module: statsmodels.api imports all of statsmodels (1 s)
    from statsmodels.regression.linear_model import OLS

    endog, exog = _design(M, y, names, yname)
    return OLS(endog, exog).fit()


def fit_logit(
    M: NDArray[np.float64],
    y: NDArray[np.float64],
    *,
    names: list[str],
    yname: str,
) -> tuple[Any, Separation]:
    """Logit of the 0/1 ``y`` on ``M`` with an intercept (Firth if separated).

    The arguments are those of :func:`fit_ols`, with ``y`` the binary
    outcome (0/1).

    Returns
    -------
    result : statsmodels.discrete.discrete_model.BinaryResultsWrapper
        The maximum-likelihood fit, or Firth's estimate wrapped in the same
        class (``result.mle_retvals["method"] == "firth"``).
    separation : Separation
        The separation diagnosis.
    """
    endog, exog = _design(M, y, names, yname)
    return _fit_logit(endog, exog)


_TIME, _EVENT = "time", "event"  # the cluster columns are cluster_<k>


def fit_cox(
    M: NDArray[np.float64],
    outcome: NDArray[np.float64],
    *,
    names: list[str],
    strata: pd.DataFrame | None = None,
) -> Any:
    """Cox proportional hazards (Efron ties) of ``outcome`` on ``M``.

    Parameters
    ----------
    M : ndarray of shape (n_samples, n_clusters)
        Latent variables (no intercept: the baseline hazard absorbs it).
    outcome : ndarray of shape (n_samples, 2)
        ``(time, event)`` columns.
    names : list of str
        Names of the columns of ``M``.
    strata : pandas.DataFrame, optional
        Strata columns (lifelines' ``strata``): a baseline hazard per
        combination of their values.

    Returns
    -------
    lifelines.CoxPHFitter
        The untouched fitter, with duration column ``time`` and event column
        ``event``.

    Raises
    ------
    ImportError
        If lifelines is not installed.
    ValueError
        If lifelines cannot fit the model (its ``ConvergenceError``), in
        vcpcr's words: the likely cause and the fix.

    Warns
    -----
    ConvergenceWarning, VCPCRWarning
        lifelines' warnings, in vcpcr's words (see :func:`_lifelines_words`).
    """
    try:
        from lifelines import CoxPHFitter
        from lifelines.exceptions import ConvergenceError
    except ImportError:
        raise ImportError(
            "family='cox' requires lifelines: pip install 'vcpcr[survival]'"
        ) from None
    frame = pd.DataFrame(M, columns=names)
    frame[_TIME], frame[_EVENT] = outcome[:, 0], outcome[:, 1]
    if strata is not None:
        frame[list(strata.columns)] = strata.to_numpy()
    # lifelines' default tolerance (1e-7 on the step) leaves ~1e-5 relative
    # error; converge fully, as R's coxph does. The latent variables' scale
    # follows the weights' (small for penalized Cox weights); lifelines
    # standardizes its columns internally, so its absolute "variance <
    # 1e-4" warning is spurious here (not its variance within the rows with
    # and without events: a column that separates them, translated below).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings(
            "ignore", message=r"\s*Column\(s\) .* very low variance"
        )
        try:
            fitter = CoxPHFitter().fit(
                frame,
                duration_col=_TIME,
                event_col=_EVENT,
                strata=None if strata is None else list(strata.columns),
                fit_options={"precision": 1e-12, "r_precision": 1e-14},
            )
        except ConvergenceError as exc:
            events = int(outcome[:, 1].sum())
            raise ValueError(
                f"The Cox outcome model (step 2: {_STEP2}; {len(frame)} rows, "
                f"{events} events) could not be fitted; lifelines stopped: "
                f"{_lifelines_words(str(exc))} {_COX_CAUSE}"
            ) from None
    _reissue_lifelines(caught)
    return fitter


#: What step 2 of a Cox model is, for messages.
_STEP2 = (
    "lifelines CoxPHFitter on the covariates, if any, and the cluster latent variables"
)

#: The usual cause of a Cox step 2 that diverges, and its fixes.
_COX_CAUSE = (
    "Likely cause: a covariate, or a level of a categorical one, that separates "
    "the outcome (few rows, or rows without events: its coefficient diverges), "
    "or (nearly) collinear columns. Merge or drop that level, or make it a "
    "stratum (strata=); fewer or sparser clusters (n_clusters, lam_ratio; "
    "lam_ratios in VCPCRCV) also help."
)


def _lifelines_words(text: str) -> str:
    """Return lifelines' message without its pointers to its documentation."""
    lines = [line for line in text.splitlines() if not line.startswith(">>>")]
    sentences = re.split(r"(?<=[.?!])\s+", " ".join(" ".join(lines).split()))
    drop = ("lifelines", "http", "the following code")
    kept = [s for s in sentences if not any(d in s for d in drop)]
    words = " ".join(kept).strip() or " ".join(text.split())
    return words if words.endswith((".", "?", "!")) else words + "."


def _reissue_lifelines(caught: list[warnings.WarningMessage]) -> None:
    """Re-issue lifelines' warnings of one fit in vcpcr's terms.

    Those about convergence (or separation) become one ConvergenceWarning
    that quotes them and names the likely cause and the fix; any other
    becomes a VCPCRWarning.
    """
    converge = []
    for c in caught:
        text = _lifelines_words(str(c.message))
        if "converge" in text.lower() or "Convergence" in c.category.__name__:
            converge.append(text)
        else:
            warnings.warn(
                f"The Cox outcome model (step 2: {_STEP2}) warned: {text}",
                VCPCRWarning,
                stacklevel=user_stacklevel(),
            )
    if converge:
        warnings.warn(
            f"The Cox outcome model (step 2: {_STEP2}) may not have converged; "
            f"lifelines reports: {' '.join(converge)} {_COX_CAUSE}",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
