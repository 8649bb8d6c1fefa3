"""Count how often a fit validates its input (issue #50, "validate once").

:func:`counted` wraps, for the duration of a ``with`` block, the one input
route of the estimators (``VCPCRBase._fit_input``: formula or encoding,
``validate_data``, ``check_array``, ``prepare``, the level and parameter
checks), every family's validator of ``y`` (``Family.prepare``) and
:func:`vcpcr._checks.check_survival` wherever a ``vcpcr`` module imported
it, and counts their calls. Run as a script, it prints the counts of one
``VCPCRCV(family="cox", covariates=[...]).fit`` with 5 folds and of its
gaussian and binomial analogues, then of a Cox ``multi_split`` and
``stability_selection`` of a ``VCPCR`` and a ``VCPCRCV`` template::

    PYTHONPATH=.:tests python tests/validation_counts.py
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from vcpcr import VCPCR, VCPCRCV, Surv, _checks
from vcpcr._base import VCPCRBase
from vcpcr._families import FAMILIES
from vcpcr.inference import multi_split, stability_selection
from vcpcr.simulate import make_block_data


@contextmanager
def counted() -> Iterator[Counter[str]]:
    """Count input-route runs, ``prepare`` calls (by family), ``check_survival`` calls.

    The keys are ``"input"``, ``"prepare:<family>"`` and ``"check_survival"``.
    Works in-process only (``n_jobs=None``: the folds run in this process).
    """
    counts: Counter[str] = Counter()
    undo: list[tuple[Any, str, Any]] = []

    def wrap(owner: Any, name: str, key: str) -> None:
        original = owner.__dict__[name]

        def counting(*args: Any, **kwargs: Any) -> Any:
            counts[key] += 1
            return original(*args, **kwargs)

        undo.append((owner, name, original))
        setattr(owner, name, counting)

    wrap(VCPCRBase, "_fit_input", "input")
    for family in FAMILIES.values():
        wrap(type(family), "prepare", f"prepare:{family.name}")
    original = _checks.check_survival
    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "") or ""
        if (name == "vcpcr" or name.startswith("vcpcr.")) and getattr(
            module, "check_survival", None
        ) is original:
            wrap(module, "check_survival", "check_survival")
    try:
        yield counts
    finally:
        for owner, name, value in reversed(undo):
            setattr(owner, name, value)


def cohort(family: str, n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, Any]:
    """A small cohort with two covariates (``age``, ``sex``) and 30 features."""
    data = make_block_data(
        n, [5, 5], [1.0, 0.0], n_noise=20, family=family, random_state=seed
    )
    rng = np.random.default_rng(seed + 1)
    X = pd.DataFrame(data.X, columns=[f"g{j}" for j in range(data.X.shape[1])])
    X.insert(0, "age", rng.normal(60.0, 8.0, n))
    X.insert(1, "sex", rng.integers(0, 2, n).astype(float))
    y = Surv(data.y, data.event) if family == "cox" else data.y
    return X, y


def cv_counts(family: str, **params: Any) -> Counter[str]:
    """The counts of one ``VCPCRCV(family=family, covariates=[age, sex]).fit``."""
    X, y = cohort(family)
    est = VCPCRCV(
        family=family,
        covariates=["age", "sex"],
        n_clusters=[2, 3],
        n_init=1,
        cv=5,
        random_state=0,
        **params,
    )
    with counted() as counts:
        est.fit(X, y)
    return counts


def resampling_counts(
    how: str, family: str = "cox", template: str = "VCPCRCV"
) -> Counter[str]:
    """The counts of one ``multi_split`` (3 splits) or ``stability_selection``
    (2 pairs) of a ``VCPCR`` or ``VCPCRCV`` template adjusted for age and sex."""
    X, y = cohort(family)
    common = {"family": family, "covariates": ["age", "sex"], "n_init": 1}
    est = (
        VCPCRCV(n_clusters=[2], cv=3, **common)
        if template == "VCPCRCV"
        else VCPCR(n_clusters=2, **common)
    )
    with counted() as counts:
        if how == "multi_split":
            multi_split(est, X, y, n_splits=3, random_state=0, verbose=False)
        else:
            stability_selection(est, X, y, n_pairs=2, random_state=0, verbose=False)
    return counts


if __name__ == "__main__":
    for fam in ("cox", "gaussian", "binomial"):
        print(fam, dict(sorted(cv_counts(fam).items())))
    for how in ("multi_split", "stability_selection"):
        for template in ("VCPCR", "VCPCRCV"):
            counts = resampling_counts(how, template=template)
            print(how, template, "(cox)", dict(sorted(counts.items())))
