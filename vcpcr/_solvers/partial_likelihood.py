r"""The Cox partial likelihood: risk sets from one sort, Breslow and Efron ties.

:class:`RiskSets` sorts a survival outcome by time once and holds what every
evaluation of the partial likelihood needs: who is at risk at each time and
which events tie. From it come

* Breslow's ties (glmnet, Coxnet, ``coxph(ties="breslow")``), the loss of
  the penalized Cox weights (:mod:`vcpcr._solvers.cox`): the mean negative log
  partial likelihood, its gradient, Hessian and the Hessian's diagonal in the
  linear predictor, for one linear predictor, in the log domain (risk-set
  sums are cumulative sums, so no ``exp(eta)`` overflows);
* Efron's ties (lifelines, ``coxph``'s default), the step-2 model: the log
  partial likelihood of a stack of linear predictors, and its gradient and
  Hessian in the coefficients of a stack of designs, for the batched Newton
  fits of cross-validation (:mod:`vcpcr._solvers.step2_fits`) and the
  partial-likelihood deviance scorer (:mod:`vcpcr._scoring`).

The arrays a :class:`RiskSets` method takes are in its sorted order
(``eta[order]``, ``Z[:, order]``); :func:`breslow` and :func:`efron_loglik`
take them in the caller's order.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["RiskSets", "breslow", "efron_loglik", "efron_loglik_counts"]

_Float = NDArray[np.float64]
#: The smallest normal float: a risk set's sum of ``exp(eta - max eta)``
#: below it is lost (see :meth:`RiskSets.efron_loglik`).
_TINY = np.finfo(np.float64).tiny
#: The Hessian's Gram form (:meth:`RiskSets._efron_hessian`) has lost the
#: information to rounding when its smallest eigenvalue, scaled by its
#: diagonal, is below this (about the square root of the float precision).
_CANCELLED = 1e-8


def _logcumsumexp(v: _Float) -> _Float:
    """``log(cumsum(exp(v)))`` without overflow (``v`` may hold ``-inf``)."""
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return np.full_like(v, -np.inf)
    top = finite.max()
    if top - finite.min() < 600.0:  # shifted cumsum: more accurate
        with np.errstate(divide="ignore", under="ignore"):
            return np.log(np.cumsum(np.exp(v - top))) + top
    return np.logaddexp.accumulate(v)


class RiskSets:
    """A survival outcome sorted by time once: its risk sets and tied events.

    Parameters
    ----------
    time : array-like of shape (n_samples,)
        Event or censoring times, in any order; ties allowed.
    event : array-like of shape (n_samples,)
        1/True for an event, 0/False for censoring.

    Attributes
    ----------
    order : ndarray of shape (n_samples,)
        The stable sort by time; every method takes arrays in this order.
    first, last : ndarray of shape (n_samples,)
        Sorted position of the first and the last sample tied with each
        sorted sample: sample ``i`` is at risk at the times of ``first[i]``
        and later.
    event : ndarray of bool of shape (n_samples,)
        The events, sorted.
    events : ndarray of shape (n_events,)
        Sorted positions of the events (grouped by event time).
    starts : ndarray of shape (n_event_times,)
        Where each distinct event time starts in ``events``.
    at_risk : ndarray of shape (n_event_times,)
        First sorted position at risk at each distinct event time.
    tie_group, tie_frac : ndarray of shape (n_events,)
        Efron's term of each event: its event time and ``l / d_j`` (the
        ``l``-th of the ``d_j`` events tied at that time).
    event_risk : ndarray of shape (n_events,)
        ``at_risk`` of each event's time.
    tied : ndarray of shape (n_tied_events,)
        Positions in ``events`` of the events tied with another.
    tied_starts, tied_group : ndarray
        Where each tied event time starts in ``tied``, and each tied event's
        tied time.
    """

    def __init__(self, time: ArrayLike, event: ArrayLike) -> None:
        t = np.asarray(time, dtype=np.float64)
        self.order = np.argsort(t, kind="stable")
        ts = t[self.order]
        self.first = np.searchsorted(ts, ts, "left")
        self.last = np.searchsorted(ts, ts, "right") - 1
        self.event = np.asarray(event, dtype=bool)[self.order]
        self.events = np.flatnonzero(self.event)
        uniq, self.starts, counts = np.unique(
            ts[self.events], return_index=True, return_counts=True
        )
        self.at_risk = np.searchsorted(ts, uniq, side="left")
        self.tie_group = np.repeat(np.arange(uniq.size), counts)
        self.tie_frac = (
            np.arange(self.events.size) - self.starts[self.tie_group]
        ) / counts[self.tie_group]
        # Only the events of tied times have an Efron correction: their
        # positions in ``events`` and where each tied time starts among them.
        self.event_risk = self.at_risk[self.tie_group]
        self.tied = np.flatnonzero(counts[self.tie_group] > 1)
        _, self.tied_starts, tied_group = np.unique(
            self.tie_group[self.tied], return_index=True, return_inverse=True
        )
        self.tied_group = tied_group.reshape(-1)

    # ------------------------------------------------------------- Breslow
    def log_s0(self, es: _Float) -> _Float:
        """``log S0(t_k) = log sum_{j: t_j >= t_k} exp(eta_j)`` (sorted)."""
        return _logcumsumexp(es[::-1])[::-1][self.first]

    def breslow_terms(self, es: _Float) -> tuple[_Float, _Float]:
        """``log A_k, log B_k``: the sums of ``1/S0(t_i)`` and ``1/S0(t_i)^2``.

        Over the events ``t_i <= t_k``; the gradient and Hessian pieces below
        take them.
        """
        neg = np.where(self.event, -self.log_s0(es), -np.inf)
        return _logcumsumexp(neg)[self.last], _logcumsumexp(2.0 * neg)[self.last]

    def breslow_loss(self, es: _Float) -> float:
        """``-(1/n) log PL_Breslow`` at a sorted linear predictor."""
        return float(np.sum((self.log_s0(es) - es)[self.event]) / es.size)

    def breslow_gradient(self, es: _Float, terms: tuple[_Float, _Float]) -> _Float:
        """Gradient in eta: ``(exp(eta) A - event) / n``."""
        return (np.exp(es + terms[0]) - self.event) / es.size

    @staticmethod
    def breslow_hessian_diag(es: _Float, terms: tuple[_Float, _Float]) -> _Float:
        """Diagonal of the Hessian in eta, ``(r A - r^2 B) / n`` (clipped at 0)."""
        h = np.exp(es + terms[0]) - np.exp(2.0 * es + terms[1])
        return np.maximum(h, 0.0) / es.size

    @staticmethod
    def breslow_hessian(es: _Float, terms: tuple[_Float, _Float]) -> _Float:
        """Hessian in eta: ``(diag(r A) - [r_k r_l min(B_k, B_l)]) / n``.

        ``B`` increases along the sorted samples, hence the ``min``.
        """
        H = -np.exp(es[:, None] + es[None, :] + np.minimum.outer(terms[1], terms[1]))
        H[np.diag_indices_from(H)] += np.exp(es + terms[0])
        return H / es.size

    @staticmethod
    def breslow_hessian_dot(
        es: _Float, terms: tuple[_Float, _Float], V: _Float
    ) -> _Float:
        """``breslow_hessian(es, terms) @ V`` in ``O(n m)`` for ``V`` (n, m), sorted.

        ``B`` increases along the sorted samples, so ``min(B_k, B_l)`` is
        ``B`` at the earlier of the two: ``sum_l r_l min(B_k, B_l) V_l`` is
        ``B_k`` times the sum over ``l >= k`` plus the cumulative sum of
        ``B_l r_l V_l`` over ``l < k`` (no ``n x n`` matrix). ``exp(eta)``
        is shifted by its maximum, ``B`` by twice that (the products are
        the same).
        """
        top = es.max()
        r = np.exp(es - top)
        B = np.exp(terms[1] + 2.0 * top)
        rV = r[:, None] * V
        later = np.cumsum(rV[::-1], axis=0)[::-1]  # sum over l >= k
        earlier = np.zeros_like(rV)  # sum over l < k
        np.cumsum(B[:-1, None] * rV[:-1], axis=0, out=earlier[1:])
        low_rank = r[:, None] * (B[:, None] * later + earlier)
        return (np.exp(es + terms[0])[:, None] * V - low_rank) / es.size

    def breslow(
        self, eta: ArrayLike, *, hessian: bool = True
    ) -> tuple[float, _Float, _Float | None, _Float]:
        """:func:`breslow` at ``eta`` in the caller's (unsorted) order."""
        es = np.asarray(eta, dtype=np.float64)[self.order]
        tm, inv = self.breslow_terms(es), np.argsort(self.order)
        H = self.breslow_hessian(es, tm)[np.ix_(inv, inv)] if hessian else None
        grad = self.breslow_gradient(es, tm)[inv]
        diag = self.breslow_hessian_diag(es, tm)[inv]
        return self.breslow_loss(es), grad, H, diag

    # --------------------------------------------------------------- Efron
    def _risk_sums(self, a: _Float) -> _Float:
        """Sum ``a`` (B, n, ...) over the risk set of each event (one gather)."""
        return np.flip(np.cumsum(np.flip(a, axis=1), axis=1), axis=1)[
            :, self.event_risk
        ]

    def _efron_sums(self, a: _Float) -> _Float:
        """Efron's sum of ``a`` (B, n, ...) per event: risk set minus ``l/d_j`` ties.

        Only the tied events are corrected (an untied event's ``l/d_j`` is 0).
        """
        out = self._risk_sums(a)
        if self.tied.size:
            rows = self.events[self.tied]
            tied = np.add.reduceat(a[:, rows], self.tied_starts, axis=1)
            frac = self.tie_frac[self.tied].reshape(-1, *([1] * (a.ndim - 2)))
            out[:, self.tied] -= frac * tied[:, self.tied_group]
        return out

    def _efron_loglik(
        self, es: _Float, phi: _Float, shift: _Float, *, wide: bool = False
    ) -> _Float:
        """Log partial likelihood from Efron's sums ``phi`` of ``exp(es - shift)``.

        A row with a sum below the smallest normal float (:data:`_TINY`; 0
        when it underflowed) has lost that sum: its log is noise (a
        subnormal keeps few digits) or ``-inf``. Such a row is computed in
        log space with ``wide``, else its value is ``+inf`` (not a
        likelihood, so no gain for an ascent that compares values).
        """
        with np.errstate(divide="ignore"):  # log 0 of a lost row
            out = es[:, self.events].sum(axis=1) - np.sum(np.log(phi) + shift, axis=1)
        lost = np.any(phi < _TINY, axis=1) & np.all(np.isfinite(es), axis=1)
        if lost.any():
            out[lost] = self._efron_loglik_log_space(es[lost]) if wide else np.inf
        return np.asarray(out, dtype=np.float64)

    def efron_loglik(self, es: _Float, *, wide: bool = False) -> _Float:
        """Efron log partial likelihood of each row of ``es`` (B, n), sorted.

        One shift, the row's maximum, serves every risk set. When the linear
        predictor spans more than ~708, a late risk set's sum falls below
        the smallest normal float (subnormal: its log is noise; or 0: log
        0): the sum is lost. With ``wide``, such rows are computed in log
        space instead (exact; the scorers ask for it); without, their value
        is ``+inf``, so Newton's step halving rejects a trial step that
        wide (its value would be noise that can pass for a gain).
        """
        shift = es.max(axis=1, keepdims=True)
        return self._efron_loglik(
            es, self._efron_sums(np.exp(es - shift)), shift, wide=wide
        )

    def _efron_loglik_log_space(self, es: _Float) -> _Float:
        """:meth:`efron_loglik` from log sums: no risk set underflows.

        ``log phi = log S + log1p(-l/d T / S)`` with ``S`` the risk set's and
        ``T`` the tied events' sum of ``exp(eta)`` (``T <= S``, ``l/d < 1``).
        """
        log_s = np.logaddexp.accumulate(es[:, ::-1], axis=1)[:, ::-1][:, self.at_risk]
        ev = es[:, self.events]
        g = self.tie_group
        top = np.maximum.reduceat(ev, self.starts, axis=1)
        tied = np.add.reduceat(np.exp(ev - top[:, g]), self.starts, axis=1)
        log_t = np.log(tied) + top  # tied >= 1: the maximum's own term
        ratio = np.exp(log_t[:, g] - log_s[:, g])
        log_phi = log_s[:, g] + np.log1p(-self.tie_frac * ratio)
        return np.asarray(ev.sum(axis=1) - log_phi.sum(axis=1), dtype=np.float64)

    def efron(self, es: _Float, Z: _Float) -> tuple[_Float, _Float, _Float]:
        """Efron log partial likelihood, gradient and Hessian in the coefficients.

        ``es`` (B, n) is the linear predictor of the designs ``Z`` (B, n, k),
        both sorted; returns arrays of shapes (B,), (B, k), (B, k, k). A row
        whose risk set's sum is lost (see :meth:`efron_loglik`) has the value
        ``+inf``; its gradient and Hessian are then not meaningful either.
        """
        shift = es.max(axis=1, keepdims=True)
        r = np.exp(es - shift)
        phi = self._efron_sums(r)
        mean = self._efron_sums(r[..., None] * Z) / phi[..., None]
        grad = Z[:, self.events].sum(axis=1) - mean.sum(axis=1)
        # The Hessian as one weighted Gram matrix less the means' (below);
        # where that difference cancels to rounding (a run-off fit whose
        # information vanishes along a direction, or a lost row) the
        # information is rounding noise either way, and the per-term sum is
        # used: the computation the batched fits' separation tests were
        # built on, so their run-off fits take the same steps as before.
        hess, moments = self._efron_hessian(r, Z, phi, mean)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            d = np.sqrt(moments)  # the size of what cancelled
            scaled = hess / d[:, :, None] / d[:, None, :]
        redo = ~np.all(np.isfinite(scaled), axis=(1, 2))
        redo[~redo] = np.linalg.eigvalsh(-scaled[~redo])[:, 0] < _CANCELLED
        if redo.any():
            hess[redo] = self._efron_hessian_by_term(
                r[redo], Z[redo], phi[redo], mean[redo]
            )
        return self._efron_loglik(es, phi, shift), grad, hess

    def _efron_hessian(
        self, r: _Float, Z: _Float, phi: _Float, mean: _Float
    ) -> tuple[_Float, _Float]:
        """Efron's Hessian and the diagonal of its second moments.

        From ``r = exp(eta - shift)``, ``phi`` and the means. The second
        moments ``sum_e psi2_e / phi_e`` reordered by row: row ``j`` enters
        every Efron term whose risk set holds it, with weight ``1 / phi_e``,
        less ``l/d_j / phi_e`` for its own tied terms; so one
        weighted Gram matrix ``Z' diag(r v) Z`` (BLAS), not a cumulative sum
        of (n, k, k) outer products, less ``mean' mean``. Its absolute
        error is rounding of the second moments.
        """
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            inv = 1.0 / phi  # a lost row's 1 / phi overflows: not meaningful
            entries = np.zeros_like(r)
            # distinct event times have distinct first rows at risk
            entries[:, self.at_risk] = np.add.reduceat(inv, self.starts, axis=1)
            v = np.cumsum(entries, axis=1)
            own = np.add.reduceat(self.tie_frac * inv, self.starts, axis=1)
            v[:, self.events] -= own[:, self.tie_group]
            second = np.matmul(np.swapaxes(Z, 1, 2) * (r * v)[:, None, :], Z)
            hess = np.matmul(np.swapaxes(mean, 1, 2), mean) - second
        return hess, np.diagonal(second, 0, 1, 2)

    def _efron_hessian_by_term(
        self, r: _Float, Z: _Float, phi: _Float, mean: _Float
    ) -> _Float:
        """Efron's Hessian summed per term.

        Each term's second moments less its mean's outer product (``O(n
        k^2)`` memory per design).
        """
        rZ = r[..., None] * Z
        psi2 = self._efron_sums(rZ[..., None] * Z[:, :, None, :])
        return -np.sum(
            psi2 / phi[..., None, None] - mean[..., :, None] * mean[..., None, :],
            axis=1,
        )

    def efron_information_derivative(self, es: _Float, Z: _Float) -> _Float:
        r"""Return the derivative of Efron's information in each coefficient.

        Each Efron term is a risk set with fixed multipliers (1 for the rows
        at risk, ``1 - l/d_j`` for the tied events), so its contribution to
        the information is the covariance of ``Z`` under the weights
        ``exp(eta)`` times the multipliers, and its derivative in
        :math:`\beta_j` is the third central moment
        :math:`E[(Z - m)(Z - m)^T (Z_j - m_j)]` under the same weights.

        ``es`` (B, n) and ``Z`` (B, n, k) as :meth:`efron`; returns
        ``D`` (B, k, k, k) with ``D[b, :, :, j]`` the derivative in
        ``coef[b, j]`` (Firth's penalty, :func:`vcpcr._solvers.step2_fits.\
cox_batch`). Centre ``Z``'s columns first (the partial likelihood does
        not change) to keep the raw moments free of cancellation.
        """
        k = Z.shape[2]
        # The moments are symmetric: compute each index triple a <= b <= c once.
        triples = list(itertools.combinations_with_replacement(range(k), 3))
        a, b, c = np.array(triples, dtype=np.intp).reshape(-1, 3).T
        pair = np.zeros((k, k), dtype=np.intp)
        i, j = np.triu_indices(k)
        pair[i, j] = pair[j, i] = np.arange(i.size)
        r = np.exp(es - es.max(axis=1, keepdims=True))
        phi = self._efron_sums(r)[..., None]
        m1 = self._efron_sums(r[..., None] * Z) / phi
        m2 = self._efron_sums(r[..., None] * Z[..., i] * Z[..., j]) / phi
        m3 = self._efron_sums(r[..., None] * Z[..., a] * Z[..., b] * Z[..., c]) / phi
        third = (
            m3
            - m2[..., pair[a, b]] * m1[..., c]
            - m2[..., pair[a, c]] * m1[..., b]
            - m2[..., pair[b, c]] * m1[..., a]
            + 2 * m1[..., a] * m1[..., b] * m1[..., c]
        ).sum(axis=1)
        full = np.empty((es.shape[0], k, k, k))
        for x, y, z in itertools.permutations((a, b, c)):
            full[:, x, y, z] = third
        return full


def breslow(
    eta: ArrayLike, time: ArrayLike, event: ArrayLike, *, hessian: bool = True
) -> tuple[float, _Float, _Float | None, _Float]:
    r"""Mean negative Breslow log partial likelihood and its derivatives in ``eta``.

    Parameters
    ----------
    eta : array-like of shape (n_samples,)
        Linear predictor ``X w``.
    time : array-like of shape (n_samples,)
        Event or censoring times, in any order; ties allowed.
    event : array-like of shape (n_samples,)
        1/True for an event, 0/False for censoring.
    hessian : bool, default=True
        Compute the full Hessian (``O(n^2)``; the rest is ``O(n log n)``).

    Returns
    -------
    loss : float
        :math:`-\frac1n\sum_{i:\,d_i=1}(\eta_i - \log\sum_{j:\,t_j\ge t_i}
        e^{\eta_j})` (ties as in glmnet and ``coxph(ties="breslow")``).
    gradient, hessian, hessian_diagonal : ndarray
        Shapes (n,), (n, n) (None if not asked) and (n,); the diagonal is
        glmnet's approximation of the Hessian.

    Examples
    --------
    >>> from vcpcr._solvers.partial_likelihood import breslow
    >>> loss, grad, _, _ = breslow([0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [1, 1, 0])
    >>> round(loss, 6), grad.round(4).tolist()
    (0.597253, [-0.2222, -0.0556, 0.2778])
    """
    return RiskSets(time, event).breslow(eta, hessian=hessian)


def efron_loglik(
    eta: _Float,
    time: _Float,
    event: NDArray[np.bool_],
    strata: NDArray[Any] | None = None,
) -> _Float:
    r"""Log partial likelihood (Efron ties, as lifelines) of each row of ``eta``.

    Parameters
    ----------
    eta : ndarray of shape (n_fits, n_samples)
        Linear predictors.
    time, event : ndarray of shape (n_samples,)
        The survival outcome.
    strata : ndarray of shape (n_samples,), optional
        Stratum labels: the stratified partial likelihood, the sum over
        strata of each stratum's (lifelines' ``strata``).

    Returns
    -------
    ndarray of shape (n_fits,)
        :math:`\sum_j [\sum_{i \in D_j} \eta_i - \sum_{l=0}^{d_j - 1}
        \log(\sum_{i \in R_j} e^{\eta_i} - \frac{l}{d_j}
        \sum_{i \in D_j} e^{\eta_i})]`.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr._solvers.partial_likelihood import efron_loglik
    >>> ll = efron_loglik(np.zeros((1, 3)), np.array([1.0, 1.0, 2.0]),
    ...                   np.array([True, True, False]))
    >>> round(float(ll[0]), 6)  # -(log 3 + log 2)
    -1.791759
    """
    if strata is not None:
        parts = [strata == g for g in np.unique(strata)]
        return np.sum(
            [efron_loglik(eta[:, m], time[m], event[m]) for m in parts], axis=0
        )
    rs = RiskSets(time, event)
    return rs.efron_loglik(eta[:, rs.order], wide=True)


def efron_loglik_counts(
    eta: _Float,
    time: _Float,
    event: NDArray[np.bool_],
    strata: NDArray[Any] | None,
    counts: NDArray[np.intp],
) -> _Float:
    """:func:`efron_loglik` of resamples given by their row counts.

    A resample that holds row ``i`` ``counts[b, i]`` times has the log
    partial likelihood of those copies: a copy is one more row at risk, and
    the copies of an event are tied with it (Efron's ``d_j`` counts them).
    So every resample is computed on the rows sorted once, from one
    ``exp(eta)``, without a sort or a copy of ``eta`` per resample.

    Parameters
    ----------
    eta : ndarray of shape (n_fits, n_samples)
        Finite linear predictors.
    time, event, strata
        As in :func:`efron_loglik`.
    counts : ndarray of shape (n_resamples, n_samples)
        Non-negative integer row counts.

    Returns
    -------
    ndarray of shape (n_resamples, n_fits)
        Equal to :func:`efron_loglik` on each resample's rows up to rounding.

    Examples
    --------
    >>> import numpy as np
    >>> from vcpcr._solvers.partial_likelihood import efron_loglik, efron_loglik_counts
    >>> eta = np.array([[0.5, -1.0, 0.0, 2.0]])
    >>> time, event = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 0, 1], bool)
    >>> rows = np.array([0, 0, 1, 3])
    >>> a = efron_loglik(eta[:, rows], time[rows], event[rows])
    >>> b = efron_loglik_counts(eta, time, event, None, np.array([[2, 1, 0, 1]]))
    >>> bool(np.allclose(a, b[:, 0], rtol=1e-13))
    True
    """
    if strata is not None:
        parts = [strata == g for g in np.unique(strata)]
        return np.sum(
            [
                efron_loglik_counts(eta[:, m], time[m], event[m], None, counts[:, m])
                for m in parts
            ],
            axis=0,
        )
    rs = RiskSets(time, event)
    es, C = eta[:, rs.order], counts[:, rs.order]
    shift = es.max(axis=1, keepdims=True)
    r = np.exp(es - shift)
    ev, starts = rs.events, rs.starts
    r_ev, es_ev = r[:, ev], es[:, ev]
    out = np.empty((C.shape[0], es.shape[0]))
    for b, c in enumerate(C):
        c_ev = c[ev]
        d = np.add.reduceat(c_ev, starts) if ev.size else c_ev
        # Efron's terms: l = 0 .. d_j - 1 of each event time j
        j = np.repeat(np.arange(d.size), d)
        frac = (np.arange(j.size) - np.repeat(np.cumsum(d) - d, d)) / d[j]
        risk = np.cumsum((c * r)[:, ::-1], axis=1)[:, ::-1][:, rs.at_risk]
        tied = np.add.reduceat(c_ev * r_ev, starts, axis=1) if ev.size else r_ev
        phi = risk[:, j] - frac * tied[:, j]
        with np.errstate(divide="ignore"):  # log 0 of a lost row
            out[b] = es_ev @ c_ev - np.sum(np.log(phi), axis=1) - j.size * shift[:, 0]
        lost = np.flatnonzero(np.any(phi < _TINY, axis=1))
        if lost.size:  # a span of eta beyond ~708: the resample's rows, in log space
            rows = np.repeat(np.arange(c.size), c)
            out[b, lost] = efron_loglik(
                eta[np.ix_(lost, rs.order[rows])],
                time[rs.order[rows]],
                event[rs.order[rows]],
            )
    return out
