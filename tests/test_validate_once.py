"""A fit validates its input once (issue #50): counted, not assumed.

The counts come from :mod:`validation_counts` (also a script that prints
them): the estimators' input route (``VCPCRBase._fit_input``), the family's
validator of ``y`` (``Family.prepare``) and ``check_survival`` wherever it is
called. Before #50, one ``VCPCRCV(family="cox", covariates=[...]).fit`` with
5 folds ran the input route twice, ``prepare`` 7 times and ``check_survival``
23 times.
"""

from __future__ import annotations

import pytest
from conftest import needs_survival
from validation_counts import cv_counts

FAMILIES = [
    pytest.param("cox", marks=needs_survival, id="cox"),
    pytest.param("gaussian", id="gaussian"),
    pytest.param("binomial", id="binomial"),
]


@pytest.mark.xfail(reason="#50: the refit runs the input route again", strict=True)
@pytest.mark.parametrize("family", FAMILIES)
def test_cv_fit_runs_the_input_route_once(family):
    assert cv_counts(family)["input"] == 1


@pytest.mark.xfail(reason="#50: the folds validate y again", strict=True)
@pytest.mark.parametrize("family", FAMILIES)
def test_cv_fit_validates_the_outcome_once(family):
    counts = cv_counts(family)
    assert counts[f"prepare:{family}"] == 1
    assert counts["check_survival"] == (family == "cox")
