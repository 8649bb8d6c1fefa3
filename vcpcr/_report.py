"""The ``summary()`` of a fitted VC-PCR estimator (a mixin of ``VCPCR``)."""

from __future__ import annotations

import numbers
from typing import Any

from sklearn.utils.validation import check_is_fitted

from vcpcr._summary import build_summary, composition_rows
from vcpcr._validation import check_scalar
from vcpcr._weights import DEFAULT_DELTA

__all__ = ["SummaryMixin"]

POST_SELECTION_NOTE = (
    "Standard errors are conditional on the estimated clusters: they do not "
    "account for the selection and clustering of the variables."
)


class SummaryMixin:
    """Adds ``summary()``; relies on the fitted attributes of ``VCPCR``."""

    def summary(self, alpha: float = 0.05) -> Any:
        """Summary of the fit: header, cluster coefficients, composition, notes.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level of the confidence intervals.

        Returns
        -------
        statsmodels.iolib.summary.Summary
            Print it, or call ``as_text()``, ``as_html()`` or ``as_latex()``.
        """
        check_is_fitted(self)
        check_scalar(
            alpha,
            "alpha",
            numbers.Real,
            owner="VCPCR.summary",
            min_val=0.0,
            max_val=1.0,
            include_min=False,
            include_max=False,
        )
        est: Any = self
        family, res = est._family, est.result_
        members = {
            c: [(m, float(est.membership_.at[m, c])) for m in est.clusters_[c]]
            for c in est.membership_.columns
        }
        notes = [
            POST_SELECTION_NOTE,
            "Regressors are the cluster latent variables M = X V with X "
            "standardized (mean 0, sd 1); coef_ gives per-variable effects.",
            *family.notes(res),
        ]
        return build_summary(
            title="VC-PCR Results",
            yname=est.yname_,
            left=self._summary_left(),
            right=self._summary_right(),
            params=family.table(res, alpha),
            composition=composition_rows(members),
            notes=notes,
            alpha=alpha,
        )

    def _weights_description(self) -> str:
        est: Any = self
        if not isinstance(est.weights, str):
            return "user-supplied"
        if est.weights == "identity":
            return "identity"
        delta = DEFAULT_DELTA[est.weights] if est.delta is None else est.delta
        return f"{est.weights} (delta={delta:.3g})"

    def _summary_left(self) -> list[tuple[str, Any]]:
        est: Any = self
        return [
            ("Dep. Variable:", est.yname_),
            ("Model:", "VC-PCR"),
            ("Family:", est._family.describe(est.result_)),
            ("Weights:", self._weights_description()),
            ("No. Observations:", int(est.n_samples_fit_)),
            ("No. Variables:", int(est.n_features_in_)),
            ("Selected:", int((est.labels_ >= 0).sum())),
        ]

    def _summary_right(self) -> list[tuple[str, Any]]:
        est: Any = self
        state = "converged" if est.converged_ else "not converged"
        starts = est.n_init if isinstance(est.init, str) else 1
        return [
            ("Clusters:", f"{est.n_clusters_} (of {est.n_clusters})"),
            ("Lambda ratio:", float(est.lam_ratio)),
            ("Lambda:", float(est.lam_)),
            ("Starts:", f"{starts} (best: {est.best_init_ + 1})"),
            ("Iterations:", f"{est.n_iter_} ({state})"),
            *est._family.statistics(est.result_),
        ]
