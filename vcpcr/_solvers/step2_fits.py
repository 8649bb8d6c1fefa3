"""Step 2 for a stack of designs: OLS, logistic and Cox fits of many M at once.

Cross-validation fits the outcome model on the latent variables of every grid
point of a fold: the same response, ``B`` designs ``M[b]`` of shape
``(n_samples, k)``. These solvers fit them together (stacked normal
equations, one Newton iteration for the whole stack) and say, per design,
whether the fit is certainly the one the per-point adapter of
:mod:`vcpcr._outcome` / :class:`vcpcr._families.Cox` would return. Where it
is not (a rank-deficient design, a logistic fit without a certificate that
the data are not separated, a Newton iteration that did not converge) the
caller fits that design with the per-point adapter.

* OLS: ``pinv(A) @ y`` with ``A = [1, M]``, the pseudo-inverse with
  statsmodels' cutoff (singular values below ``1e-15`` times the largest are
  dropped). Rank-deficient designs (statsmodels' rank rule) are left to the
  adapter, which warns about them (``SingularMatrixWarning``).
* Logistic: statsmodels' ``Logit.fit(method="newton")`` iteration (pure
  Newton from zero, stopped when every coefficient moves by less than
  ``1e-8``). A converged fit is accepted only with a certificate that the MLE
  exists: at the fit the score is ``g = A_s' lam`` with ``A_s = diag(2y - 1)
  A`` and ``lam_i = expit(-(2 y_i - 1) eta_i) > 0``; correcting ``lam`` by
  the smallest relative ``delta`` with ``A_s' delta = g`` gives ``A_s'(lam -
  delta) = 0``, and if ``lam - delta > 0`` no direction ``d`` has ``A_s d >=
  0, != 0`` (Stiemke's lemma), i.e. the data are not (quasi-)separated and
  the per-point adapter would not have switched to Firth's estimate. At a
  separated "fit" (coefficients run off, the score underflows to ~1e-16) the
  certificate fails, as it must. In floating point it is required with
  margin: ``|delta_i| < lam_i / 2`` and every ``lam_i > 1e-10`` (a fit that
  predicts some sample with probability within 1e-10 of certainty goes to
  the per-point adapter, which decides by its linear program).
* Cox: Newton on Efron's partial likelihood (lifelines' tie method; its
  value, gradient and Hessian from :class:`vcpcr._solvers.partial_likelihood.RiskSets`,
  one sort for the whole stack; stratified, the sum over strata of each
  stratum's, as lifelines' ``strata``), with step halving, from zero;
  accepted when the full Newton step (before halving) falls below ``1e-10``
  relative; a fit whose halved steps vanish while its full step does not has
  stalled (e.g. it ran off until a risk set's sum left the float range) and
  is not accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from vcpcr._solvers.distributions import LOGISTIC
from vcpcr._solvers.partial_likelihood import RiskSets

__all__ = ["BatchFit", "cox_batch", "logit_batch", "ols_batch"]


class BatchFit(NamedTuple):
    """Parameters of a stack of fits and which of them are trustworthy.

    ``params[b]`` is ``(intercept, coefficients...)`` (OLS, logistic) or the
    coefficients (Cox); rows with ``ok[b]`` False must be refitted per point.
    """

    params: NDArray[np.float64]
    ok: NDArray[np.bool_]
    #: Rows whose ``params`` are Firth's estimate (Cox: no finite maximum).
    firth: NDArray[np.bool_] | None = None


def _with_intercept(M: NDArray[np.float64]) -> NDArray[np.float64]:
    ones = np.ones((*M.shape[:2], 1))
    return np.concatenate([ones, M], axis=2)


def _full_rank(A: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Whether each design of the stack has full column rank.

    statsmodels' rule (``OLS.rank``): every singular value above the largest
    times ``n_columns * eps``.
    """
    if A.shape[2] == 0:
        return np.ones(A.shape[0], dtype=bool)
    s = np.linalg.svd(A, compute_uv=False)
    return np.asarray(s.min(axis=1) > s.max(axis=1) * A.shape[2] * np.finfo(float).eps)


def _solve(H: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
    """``H[b]^{-1} g[b]`` for a stack; NaN rows where ``H[b]`` is singular."""
    try:
        out = np.asarray(np.linalg.solve(H, g[..., None])[..., 0], dtype=np.float64)
        return out
    except np.linalg.LinAlgError:
        out = np.full_like(g, np.nan)
        for b in range(H.shape[0]):
            try:
                out[b] = np.linalg.solve(H[b], g[b])
            except np.linalg.LinAlgError:
                pass
        return out


def ols_batch(M: NDArray[np.float64], y: NDArray[np.float64]) -> BatchFit:
    """Least squares of ``y`` on ``[1, M[b]]`` for every ``b`` (statsmodels' pinv).

    Parameters
    ----------
    M : ndarray of shape (n_designs, n_samples, k)
        Latent variables of each design.
    y : ndarray of shape (n_samples,)
        Response.

    Returns
    -------
    BatchFit
        ``params`` of shape (n_designs, k + 1) (the minimum-norm solution
        when rank-deficient); ``ok`` where the design has full rank.
    """
    A = _with_intercept(M)
    params = np.linalg.pinv(A, rcond=1e-15) @ y
    return BatchFit(params, _full_rank(A))


def logit_batch(
    M: NDArray[np.float64],
    y: NDArray[np.float64],
    *,
    max_iter: int = 100,
    tol: float = 1e-8,
) -> BatchFit:
    """Logistic regressions of 0/1 ``y`` on ``[1, M[b]]`` by one Newton iteration.

    Parameters
    ----------
    M : ndarray of shape (n_designs, n_samples, k)
        Latent variables of each design.
    y : ndarray of shape (n_samples,)
        Binary response (0/1).
    max_iter : int, default=100
        Newton steps (statsmodels' ``maxiter`` of the per-point fit).
    tol : float, default=1e-8
        Convergence when every coefficient moves by less (statsmodels' rule).

    Returns
    -------
    BatchFit
        ``params`` of shape (n_designs, k + 1); ``ok`` where the iteration
        converged and the MLE is certified to exist (see the module notes).
    """
    A = _with_intercept(M)
    B, _, k1 = A.shape
    b = np.zeros((B, k1))
    active = _full_rank(A)
    converged = np.zeros(B, dtype=bool)
    for _ in range(max_iter):
        idx = np.flatnonzero(active & ~converged)
        if idx.size == 0:
            break
        Ai = A[idx]
        with np.errstate(over="ignore"):
            mu = LOGISTIC.mean(np.einsum("bnk,bk->bn", Ai, b[idx]))
        g = np.einsum("bnk,bn->bk", Ai, y - mu)
        H = np.einsum("bnk,bn,bnl->bkl", Ai, LOGISTIC.variance(mu), Ai)
        step = _solve(H, g)
        bad = ~np.all(np.isfinite(step), axis=1)
        active[idx[bad]] = False
        step[bad] = 0.0
        b[idx] += step
        converged[idx] = ~bad & np.all(np.abs(step) < tol, axis=1)
    ok = active & converged & _not_separated(A, y, b)
    return BatchFit(b, ok)


def _not_separated(
    A: NDArray[np.float64], y: NDArray[np.float64], b: NDArray[np.float64]
) -> NDArray[np.bool_]:
    """Certificate that the logistic MLE exists (see the module notes)."""
    s = 2 * y - 1
    lam = LOGISTIC.mean(-s * np.einsum("bnk,bk->bn", A, b))
    g = np.einsum("bnk,bn->bk", A, s * lam)
    # delta = L^2 A_s (A_s' L^2 A_s)^{-1} g (L = diag(lam)) solves A_s' delta = g
    # with the smallest sum (delta_i / lam_i)^2: lam - delta > 0 iff every
    # |delta_i| / lam_i = lam_i |(A c)_i| < 1.
    gram = np.einsum("bnk,bn,bnl->bkl", A, lam**2, A)
    c = _solve(gram, g)
    ratio = np.max(lam * np.abs(np.einsum("bnk,bk->bn", A, c)), axis=1)
    # lam >= 1e-10 keeps every lam_i far above the rounding error of g (a
    # perfectly predicted point with lam_i ~ 1e-200 would be invisible in g).
    return np.asarray(np.isfinite(ratio) & (ratio < 0.5) & (lam.min(axis=1) > 1e-10))


#: Designs per Cox chunk: at most this many elements in a (B, n, k, k) array.
_COX_CHUNK = 2**22
#: A converged Cox fit whose information, relative to that at zero, has an
#: eigenvalue below this ran off to infinity (monotone likelihood).
_MIN_INFORMATION = 1e-8


class _Strata:
    """A stack of Cox designs split by stratum, each sorted by its risk sets.

    One ``(RiskSets, designs)`` piece per stratum with events (a stratum
    without events adds nothing to the partial likelihood); no strata is
    one stratum.
    """

    def __init__(
        self,
        M: NDArray[np.float64],
        time: NDArray[np.float64],
        event: NDArray[np.bool_],
        strata: NDArray[np.intp] | None,
    ) -> None:
        n = M.shape[1]
        if strata is None:
            groups = [np.arange(n)]
        else:
            groups = [np.flatnonzero(strata == g) for g in np.unique(strata)]
        self.pieces: list[tuple[RiskSets, NDArray[np.float64]]] = []
        for rows in groups:
            rs = RiskSets(time[rows], event[rows])
            if rs.events.size:
                self.pieces.append((rs, M[:, rows[rs.order]]))

    def designs(self, idx: NDArray[np.intp]) -> list[NDArray[np.float64]]:
        """Return the designs ``idx`` of every stratum (rows sorted)."""
        return [Z[idx] for _, Z in self.pieces]

    def _etas(
        self, Zs: list[NDArray[np.float64]], coef: NDArray[np.float64]
    ) -> list[NDArray[np.float64]]:
        return [np.einsum("bnk,bk->bn", Z, coef) for Z in Zs]

    def loglik(
        self, Zs: list[NDArray[np.float64]], coef: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Log partial likelihood (the sum over strata) of each design."""
        parts = zip(self.pieces, self._etas(Zs, coef), strict=True)
        return np.sum([rs.efron_loglik(e) for (rs, _), e in parts], axis=0)

    def information(
        self, Zs: list[NDArray[np.float64]], coef: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Log partial likelihood, gradient and information ``-hessian``."""
        B, k = coef.shape
        ll, grad, info = np.zeros(B), np.zeros((B, k)), np.zeros((B, k, k))
        for (rs, _), Z, e in zip(self.pieces, Zs, self._etas(Zs, coef), strict=True):
            # Far out (separation) a risk set's sum underflows: 0/0 gives a
            # NaN, which stops that design's iteration (no warning).
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                lk, g, h = rs.efron(e, Z)
            ll, grad, info = ll + lk, grad + g, info - h
        return ll, grad, info

    def firth_loglik(
        self, Zs: list[NDArray[np.float64]], coef: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Firth's penalized log partial likelihood ``loglik + log det(I) / 2``.

        ``-inf`` where the information ``I`` is not positive definite.
        """
        ll, _, info = self.information(Zs, coef)
        with np.errstate(invalid="ignore"):
            sign, logdet = np.linalg.slogdet(info)
        return np.where(np.isfinite(ll) & (sign > 0), ll + logdet / 2, -np.inf)

    def firth_score(
        self, Zs: list[NDArray[np.float64]], coef: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Firth's modified score and the information.

        The score adds ``tr(I^{-1} dI/dcoef_j) / 2``, the gradient of the
        penalty; NaN where ``I`` is singular.
        """
        B, k = coef.shape
        _, grad, info = self.information(Zs, coef)
        deriv = np.zeros((B, k, k, k))
        for (rs, _), Z, e in zip(self.pieces, Zs, self._etas(Zs, coef), strict=True):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                deriv += rs.efron_information_derivative(e, Z)
        trace = np.full((B, k), np.nan)
        ok = np.all(np.isfinite(info), axis=(1, 2))
        ok[ok] = np.linalg.matrix_rank(info[ok]) == k
        trace[ok] = np.einsum("bac,bcaj->bj", np.linalg.inv(info[ok]), deriv[ok])
        return grad + trace / 2, info


def cox_batch(
    M: NDArray[np.float64],
    time: NDArray[np.float64],
    event: NDArray[np.bool_],
    *,
    strata: NDArray[np.intp] | None = None,
    max_iter: int = 50,
    tol: float = 1e-10,
    firth: bool = False,
) -> BatchFit:
    """Cox regressions (Efron ties) of ``(time, event)`` on every ``M[b]``.

    The outcome's risk sets are prepared once for the whole stack
    (:class:`vcpcr._solvers.partial_likelihood.RiskSets`, one per stratum);
    Newton's method with step halving runs on all designs at once, in
    chunks that bound the memory.

    Parameters
    ----------
    M : ndarray of shape (n_designs, n_samples, k)
        Latent variables of each design.
    time : ndarray of shape (n_samples,)
        Follow-up times.
    event : ndarray of shape (n_samples,)
        Whether each follow-up ended with the event.
    strata : ndarray of shape (n_samples,), optional
        Stratum labels: the stratified partial likelihood, the sum over
        strata of each stratum's (lifelines' ``strata``).
    max_iter : int, default=50
        Newton steps.
    tol : float, default=1e-10
        Convergence when Newton's full step (before halving) moves every
        coefficient by less than ``tol`` times ``1 + max |coefficient|``; a
        fit whose halved step is that small while its full step is not has
        stalled and is not ``ok`` (without a finite maximum: Firth's, with
        ``firth``).
    firth : bool, default=False
        Where the partial likelihood has no finite maximum (the outcome is
        (quasi-)separated: Newton's steps stay long, or they vanish because
        the coefficients ran off until ``exp(eta)`` underflowed, which the
        information at the fit shows: see :func:`_informative`), return
        Firth's estimate instead: the maximum of ``loglik + log det(I) / 2``
        (Heinze & Schemper 2001, R's ``coxphf``; here with Efron's ties),
        which is finite. Its iteration is ``coef + I^{-1} U*`` with ``U*``
        the modified score, step halving on the penalized likelihood, to a
        relative step of 1e-8 (it converges linearly: :data:`_FIRTH_TOL`).
        A design whose Firth iteration fails too is not ``ok``.

    Returns
    -------
    BatchFit
        ``params`` of shape (n_designs, k); ``ok`` where the iteration
        converged: to a finite maximum (of the partial likelihood, or of
        Firth's penalized one where ``firth`` says so) with ``firth``;
        without it, also where the coefficients ran off until ``exp(eta)``
        underflowed and the steps vanished (the log-likelihood is then its
        supremum to rounding, which is what a likelihood ratio needs).

    References
    ----------
    Heinze, G. and Schemper, M. (2001). A solution to the problem of
    monotone likelihood in Cox regression. *Biometrics* 57, 114-119.
    """
    B, n, k = M.shape
    chunk = max(1, _COX_CHUNK // max(1, n * k * k))
    if B > chunk:  # bound the memory of the (B, n, k, k) risk-set sums
        parts = [
            cox_batch(
                M[s : s + chunk],
                time,
                event,
                strata=strata,
                max_iter=max_iter,
                tol=tol,
                firth=firth,
            )
            for s in range(0, B, chunk)
        ]
        return BatchFit(
            np.concatenate([f.params for f in parts]),
            np.concatenate([f.ok for f in parts]),
            np.concatenate([_firth_rows(f) for f in parts]),
        )
    strat = _Strata(M, time, event, strata)
    b = np.zeros((B, k))
    fittable = _full_rank(M) & bool(strat.pieces)
    if k == 0 or not strat.pieces:  # nothing to fit (no events: nothing fits)
        return BatchFit(b, fittable, np.zeros(B, dtype=bool))

    b, ok = _ascend(
        [Z for _, Z in strat.pieces],
        strat.loglik,
        lambda Zs, coef: strat.information(Zs, coef)[1:],
        fittable,
        max_iter,
        tol,
        full_step=True,
    )
    used = np.zeros(B, dtype=bool)
    if not firth:
        return BatchFit(b, ok, used)
    # Steps also vanish where the coefficients ran off along a direction that
    # orders every risk set (monotone likelihood) until exp(eta) underflowed:
    # the information in that direction has then vanished with the gradient.
    ok[ok] = _informative(strat, np.flatnonzero(ok), b[ok])
    monotone = np.flatnonzero(fittable & ~ok)
    step = max(1, _COX_CHUNK // max(1, n * k**3))  # (B, n, k, k, k) sums
    for s in range(0, monotone.size, step):
        idx = monotone[s : s + step]
        b[idx], used[idx] = _firth(strat, idx)
    ok |= used
    return BatchFit(b, ok, used)


def _informative(
    strat: _Strata, idx: NDArray[np.intp], coef: NDArray[np.float64]
) -> NDArray[np.bool_]:
    """Whether the fits ``coef`` of the designs ``idx`` are finite maxima.

    The information at the fit, scaled by its diagonal at zero (the events
    times the columns' variances within the risk sets), has every
    eigenvalue above :data:`_MIN_INFORMATION`: along a direction that
    separates the outcome it decays like ``exp(-|coef|)`` and is below 1e-14
    where the steps of a run-off fit vanish; at a finite maximum it is of
    the order of its value at zero.
    """
    Zs = strat.designs(idx)
    info = strat.information(Zs, coef)[2]
    scale = np.sqrt(np.diagonal(strat.information(Zs, np.zeros_like(coef))[2], 0, 1, 2))
    scaled = info / scale[:, :, None] / scale[:, None, :]
    out = np.all(np.isfinite(scaled), axis=(1, 2))
    out[out] = np.linalg.eigvalsh(scaled[out])[:, 0] > _MIN_INFORMATION
    return out


def _firth_rows(fit: BatchFit) -> NDArray[np.bool_]:
    """Which rows of a fit are Firth's (none when it does not say)."""
    return np.zeros(fit.ok.size, dtype=bool) if fit.firth is None else fit.firth


#: Firth's iteration (:func:`_firth`): its step leaves out the penalty's
#: curvature, so it converges linearly, to a floor near 1e-10 set by the
#: rounding of ``log det I``; 1e-8 (relative) is reached within ~70 steps
#: where 1e-10 can stall.
_FIRTH_TOL = 1e-8
_FIRTH_MAX_ITER = 200


def _firth(
    strat: _Strata,
    idx: NDArray[np.intp],
    max_iter: int = _FIRTH_MAX_ITER,
    tol: float = _FIRTH_TOL,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Firth's estimate of the designs ``idx`` and where it converged.

    The columns are centred within each stratum first (the partial
    likelihood and its information do not change; the raw moments of
    :meth:`RiskSets.efron_information_derivative` stay accurate).
    """
    Zs = [Z - Z.mean(axis=1, keepdims=True) for Z in strat.designs(idx)]
    return _ascend(
        Zs,
        strat.firth_loglik,
        strat.firth_score,
        np.ones(idx.size, dtype=bool),
        max_iter,
        tol,
    )


_Designs = list[NDArray[np.float64]]


def _ascend(
    designs: _Designs,
    value: Callable[[_Designs, NDArray[np.float64]], NDArray[np.float64]],
    ascent: Callable[
        [_Designs, NDArray[np.float64]],
        tuple[NDArray[np.float64], NDArray[np.float64]],
    ],
    fittable: NDArray[np.bool_],
    max_iter: int,
    tol: float,
    *,
    full_step: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Maximize ``value`` for a stack of designs from zero: the Cox iteration.

    ``designs`` holds one (B, n_s, k) stack per stratum. Each step is
    ``coef + C^{-1} g`` with ``(g, C) = ascent(designs, coef)`` (the
    gradient and the information: Newton's step for the partial likelihood,
    Firth's for the penalized one), halved until ``value(designs, coef)``
    does not decrease. A design converges when every coefficient moves by
    less than ``tol`` times ``1 + max |coefficient|``; it drops out when its
    step is not finite or cannot be made an ascent. Returns the coefficients
    and where they converged (finite).

    With ``full_step`` (Newton's iteration of the partial likelihood), the
    move that must be that small is the full step, before halving: a design
    whose halved step is below ``tol`` while its full step is not has
    stalled (the value no longer rises along the step; e.g. a run-off fit
    whose risk sets' sums left the float range, see
    :meth:`RiskSets.efron_loglik`) and drops out, not converged. Firth's
    iteration converges linearly and keeps the rule on the step taken.
    """
    B, k = fittable.size, designs[0].shape[2]
    b = np.zeros((B, k))
    val = np.full(B, -np.inf)
    val[fittable] = value([Z[fittable] for Z in designs], b[fittable])
    active = fittable & np.isfinite(val)
    converged = np.zeros(B, dtype=bool)
    for _ in range(max_iter):
        rows = np.flatnonzero(active & ~converged)
        if rows.size == 0:
            break
        Zr = [Z[rows] for Z in designs]  # selected once for the step and trials
        grad, curvature = ascent(Zr, b[rows])
        step = _solve(curvature, grad)
        bad = ~np.all(np.isfinite(step), axis=1)
        step[bad] = 0.0
        t = np.ones(rows.size)
        for _ in range(30):
            new = b[rows] + t[:, None] * step
            # A trial step far out can underflow a risk set's sum: log 0
            # makes the value non-finite (+inf, not a gain), so the step
            # counts as worse and is halved (no numpy warning).
            with np.errstate(divide="ignore", invalid="ignore"):
                val_new = value(Zr, new)
                better = val_new >= val[rows] - 1e-12 * np.abs(val[rows])
            worse = ~(np.isfinite(val_new) & better)
            if not worse.any():
                break
            t[worse] /= 2
        b[rows], val[rows] = new, val_new
        scale = 1 + np.abs(new).max(axis=1)
        taken = np.max(np.abs(t[:, None] * step), axis=1) / scale < tol
        if full_step:
            small = np.max(np.abs(step), axis=1) / scale < tol
            stalled = taken & ~small
        else:
            small, stalled = taken, np.zeros(rows.size, dtype=bool)
        active[rows[bad | worse | stalled]] = False
        converged[rows] = ~bad & ~worse & small
    return b, active & converged & np.all(np.isfinite(b), axis=1)
