"""A nomogram of a fitted model: points per covariate and for the signature.

The linear predictor of a clinical-plus-signature model is a sum of terms:
each covariate (a categorical one with all its dummies) and the signature's
prognostic index (the modules' part, ``sum_k a_k m_k``). A nomogram
(Harrell's ``rms::nomogram``) gives each term points proportional to its
contribution, the term with the widest range over the data spanning 0 to
100, and maps the total points back to the prediction: the survival
probability at a horizon (cox, one scale per stratum), the probability of the
event (binomial) or the predicted response (gaussian). :func:`nomogram`
computes the scales from the model's :class:`vcpcr.ScoringRule`;
:func:`vcpcr.plotting.plot_nomogram` draws them.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from vcpcr._checks import check_scalar
from vcpcr._result import Result
from vcpcr._scoring_rule import ScoringRule

__all__ = ["SIGNATURE", "Nomogram", "nomogram"]

#: The name of the prognostic index's term.
SIGNATURE = "signature (prognostic index)"


@dataclass(frozen=True, eq=False, repr=False)
class Nomogram(Result):
    r"""Points scales of a fitted model (see :func:`nomogram`).

    Attributes
    ----------
    terms : pandas.DataFrame
        One row per term (index ``term``: a covariate's data column, or
        :data:`SIGNATURE`): ``kind`` (``"numeric"``, ``"categorical"`` or
        ``"signature"``), ``low`` and ``high`` (a numeric term's range over
        the data; NaN for categories), ``coef`` (per unit of a numeric
        term, 1 for the signature), ``min_effect`` (the smallest
        contribution to ``eta`` over the range or the levels) and
        ``max_points``.
    levels : dict of str to pandas.Series
        A categorical term's points per level (every level of the training
        data).
    points_per_unit : float
        Points per unit of the linear predictor (100 over the widest
        term's range).
    offset : float
        ``eta`` at 0 total points: ``eta = offset + total / points_per_unit``.
    horizon : float or None
        Cox: the time of the survival probabilities.
    baseline : pandas.Series
        Cox: the baseline cumulative hazard at ``horizon`` per stratum
        (index: the stratum's label, ``"all"`` without strata).
    family : str
        The model's family.
    rule : ScoringRule
        The model's scoring rule, which the scales are read from.

    Notes
    -----
    A term :math:`v` contributes :math:`c_v(x)` to the linear predictor
    :math:`\eta = \text{intercept} + \sum_v c_v(x)`; its points are
    :math:`p\,(c_v(x) - \min c_v)` with :math:`p` = ``points_per_unit``, so
    the total points :math:`T = \sum_v` points give
    :math:`\eta = \text{offset} + T / p`, and the prediction
    :math:`S(t \mid x) = \exp(-H_0(t) e^{\eta})` (cox), :math:`1 / (1 +
    e^{-\eta})` (binomial) or :math:`\eta` (gaussian).
    """

    terms: pd.DataFrame
    levels: dict[str, pd.Series]
    points_per_unit: float
    offset: float
    family: str
    rule: ScoringRule
    horizon: float | None = None
    baseline: pd.Series = field(default_factory=lambda: pd.Series(dtype=float))

    def term_points(self, term: str, values: ArrayLike) -> NDArray[np.float64]:
        """Return the points of values of one term (numbers, or levels).

        Parameters
        ----------
        term : str
            A row of :attr:`terms`.
        values : array-like
            The term's values: numbers (a numeric covariate's raw values, or
            the prognostic index), or levels of a categorical covariate.

        Returns
        -------
        ndarray of float
            The points (outside ``[0, max_points]`` for values outside the
            data's range).

        Raises
        ------
        ValueError
            For an unknown term, or a level the model was not trained on.
        """
        if term not in self.terms.index:
            raise ValueError(
                f"term={term!r} is not a term of the nomogram; its terms are "
                f"{list(self.terms.index)}."
            )
        row = self.terms.loc[term]
        if row["kind"] == "categorical":
            points = self.levels[term]
            wanted = np.atleast_1d(np.asarray(values, dtype=object)).tolist()
            unknown = [v for v in wanted if v not in points.index]
            if unknown:
                raise ValueError(
                    f"{term!r} has no level {unknown[:5]} in the model (levels: "
                    f"{list(points.index)})."
                )
            return points.loc[wanted].to_numpy(dtype=np.float64)
        x = np.atleast_1d(np.asarray(values, dtype=np.float64))
        effect = float(row["coef"]) * x
        return (effect - float(row["min_effect"])) * self.points_per_unit

    def linear_predictor(self, total_points: ArrayLike) -> NDArray[np.float64]:
        """Return the linear predictor ``eta`` at total points.

        Parameters
        ----------
        total_points : array-like of float
            Sums of the terms' points.

        Returns
        -------
        ndarray of float
            ``offset + total_points / points_per_unit``.
        """
        total = np.atleast_1d(np.asarray(total_points, dtype=np.float64))
        return self.offset + total / self.points_per_unit

    def predict_points(
        self, total_points: ArrayLike, stratum: Any = None
    ) -> NDArray[np.float64]:
        """Return the prediction at total points: the nomogram's bottom scale.

        Parameters
        ----------
        total_points : array-like of float
            Sums of the terms' points.
        stratum : optional
            Cox with strata: the stratum's label (an index entry of
            :attr:`baseline`).

        Returns
        -------
        ndarray of float
            Survival at ``horizon`` (cox), probability of ``classes[1]``
            (binomial) or the predicted response (gaussian).

        Raises
        ------
        ValueError
            For a Cox model with strata and no (or an unknown) ``stratum``.
        """
        eta = self.linear_predictor(total_points)
        if self.family == "binomial":
            return np.asarray(1.0 / (1.0 + np.exp(-eta)))
        if self.family != "cox":
            return eta
        if stratum is None and len(self.baseline) == 1:
            stratum = self.baseline.index[0]
        if stratum not in self.baseline.index:
            raise ValueError(
                f"stratum={stratum!r} is not a stratum of the model; pass one of "
                f"{list(self.baseline.index)}."
            )
        H0 = float(self.baseline.loc[stratum])
        return np.asarray(np.exp(-H0 * np.exp(eta)))

    def total_points_at(
        self, predictions: ArrayLike, stratum: Any = None
    ) -> NDArray[np.float64]:
        """Return the total points that give predictions (the inverse scale).

        Parameters
        ----------
        predictions : array-like of float
            Survival probabilities (cox), event probabilities (binomial) or
            responses (gaussian), strictly inside (0, 1) for probabilities.
        stratum : optional
            As in :meth:`predict_points`.

        Returns
        -------
        ndarray of float
            The total points at which :meth:`predict_points` gives them.
        """
        q = np.atleast_1d(np.asarray(predictions, dtype=np.float64))
        if self.family == "binomial":
            eta = np.log(q / (1.0 - q))
        elif self.family == "cox":
            if stratum is None and len(self.baseline) == 1:
                stratum = self.baseline.index[0]
            eta = np.log(-np.log(q) / float(self.baseline.loc[stratum]))
        else:
            eta = q
        return np.asarray((eta - self.offset) * self.points_per_unit)


def _term_effects(
    rule: ScoringRule, design: pd.DataFrame
) -> tuple[list[tuple[str, str, NDArray[np.float64], float]], pd.Series]:
    """Return each covariate term's per-row contribution to ``eta`` and the index.

    Returns ``(term, kind, contributions, coef)`` per covariate source and
    the prognostic index of the rows.
    """
    coded = set(rule.levels["column"])
    out = []
    for source, block in rule.covariates.groupby("source", sort=False):
        columns = list(block.index)
        effect = design[columns].to_numpy(dtype=np.float64) @ block["coef"].to_numpy()
        if any(c in coded for c in columns):
            out.append((str(source), "categorical", effect, np.nan))
        else:
            out.append((str(source), "numeric", effect, float(block["coef"].iloc[0])))
    modules = rule.modules
    index = design[list(modules.index)].to_numpy(dtype=np.float64) @ modules[
        "coef"
    ].to_numpy(dtype=np.float64)
    return out, pd.Series(index, index=design.index)


def _level_effects(rule: ScoringRule, source: str) -> pd.Series:
    """Return a categorical covariate's contribution to ``eta`` per level."""
    coef = rule.covariates["coef"]
    rows = rule.levels[rule.levels["source"] == source]
    effect = (rows["value"] * coef.loc[rows["column"]].to_numpy()).groupby(
        rows["level"].to_numpy(), sort=False
    )
    return effect.sum()


def nomogram(model: Any, X: Any, *, horizon: float | None = None) -> Nomogram:
    """Compute the points scales of a fitted model's nomogram.

    One term per covariate (a categorical covariate's dummies together) and
    one for the signature's prognostic index; the term whose contribution
    to the linear predictor ranges widest over ``X`` (or over its levels)
    spans 0 to 100 points, the others in proportion; the total points map
    to the prediction (survival at ``horizon`` for cox, one scale per
    stratum; probability for binomial; the response for gaussian).

    Parameters
    ----------
    model : VCPCR or VCPCRCV
        A fitted model.
    X : array-like or DataFrame
        Data whose ranges the numeric terms' scales span (the training
        data, usually), with the columns ``predict`` needs.
    horizon : float, optional
        Cox (required): the time of the survival probabilities.

    Returns
    -------
    Nomogram
        The scales; :func:`vcpcr.plotting.plot_nomogram` draws them.

    Raises
    ------
    ValueError
        Without ``horizon`` for a Cox model, with one for another family,
        or for data whose prognostic index and covariates are all constant.

    See Also
    --------
    vcpcr.VCPCR.export_scoring_rule : The rule the scales are read from.
    vcpcr.plotting.plot_nomogram : Draws the nomogram.

    Examples
    --------
    >>> from vcpcr import VCPCR
    >>> from vcpcr.datasets import load_liver
    >>> from vcpcr.validation import nomogram
    >>> X, y = load_liver(return_X_y=True)
    >>> model = VCPCR(3, lam_ratio=0.6, n_init=2, random_state=0)
    >>> chart = nomogram(model.fit(X.iloc[:, :100], y), X.iloc[:, :100])
    >>> float(chart.terms["max_points"].max())
    100.0
    """
    survival = hasattr(model, "predict_survival_function")
    if survival and horizon is None:
        raise ValueError(
            "A Cox model's nomogram gives the survival probability at a time: "
            "pass horizon= (e.g. horizon=5 for 5 years, in the units of the "
            "training times)."
        )
    if survival:
        check_scalar(horizon, "horizon", numbers.Real, owner="nomogram", min_val=0.0)
    elif horizon is not None:
        raise ValueError(
            "horizon= is the time of a Cox model's survival probabilities; this "
            "model is not a Cox model. Leave horizon=None."
        )
    rule = model.export_scoring_rule(horizons=[horizon] if survival else None)
    effects, index = _term_effects(rule, model.outcome_design(X))
    rows, levels = [], {}
    for term, kind, effect, coef in effects:
        if kind == "categorical":
            by_level = _level_effects(rule, term)
            rows.append((term, kind, np.nan, np.nan, coef, by_level.min(), by_level))
        else:
            x = effect / coef if coef != 0 else np.zeros_like(effect)
            low, high = float(np.min(x)), float(np.max(x))
            rows.append(
                (term, kind, low, high, coef, min(coef * low, coef * high), None)
            )
    pi = index.to_numpy()
    rows.append((SIGNATURE, "signature", pi.min(), pi.max(), 1.0, pi.min(), None))
    ranges = [
        (r[6].max() - r[6].min()) if r[6] is not None else abs(r[4]) * (r[3] - r[2])
        for r in rows
    ]
    widest = max(ranges)
    if not widest > 0:
        raise ValueError(
            "The covariates and the prognostic index are constant over X: a "
            "nomogram has nothing to scale. Pass the training data (or any data "
            "in which they vary)."
        )
    per_unit = 100.0 / widest
    for r in rows:
        if r[6] is not None:
            levels[r[0]] = (r[6] - r[5]) * per_unit
    terms = pd.DataFrame(
        {
            "kind": [r[1] for r in rows],
            "low": [r[2] for r in rows],
            "high": [r[3] for r in rows],
            "coef": [r[4] for r in rows],
            "min_effect": [r[5] for r in rows],
            "max_points": [100.0 * w / widest for w in ranges],  # 100 exactly
        },
        index=pd.Index([r[0] for r in rows], name="term"),
    )
    offset = rule.intercept + float(terms["min_effect"].sum())
    baseline = pd.Series(dtype=float)
    if survival:
        base = rule.baseline
        labels = (
            base[rule.strata].astype(str).agg(", ".join, axis=1)
            if rule.strata
            else pd.Series("all", index=base.index)
        )
        baseline = pd.Series(
            base["cumulative_hazard"].to_numpy(), index=pd.Index(labels, name="stratum")
        )
    return Nomogram(
        terms=terms,
        levels=levels,
        points_per_unit=per_unit,
        offset=offset,
        family=rule.family,
        rule=rule,
        horizon=None if horizon is None else float(horizon),
        baseline=baseline,
    )
