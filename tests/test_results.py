"""The public result classes share one construction style (#50, item 6).

A *result class* is every class in a public ``__all__`` (the names
``tests/test_api_docs.py`` walks) that is not

- an estimator (a scikit-learn ``BaseEstimator``: ``VCPCR``, the baselines, the
  clinical models),
- a warning or another exception,
- one of the benchmark's study specifications (``SPECIFICATIONS``): value
  objects that say what to run, which a user writes and compares by value.

Every result class is a ``@dataclass(frozen=True, eq=False)`` deriving from
``vcpcr._result.Result`` (whose one-line repr it uses), and its numpy docstring's
``Attributes`` section lists every field. Those that were ``typing.NamedTuple``
s keep their tuple behaviour for a deprecation period, with a ``FutureWarning``.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from test_api_docs import public_names

from vcpcr import SOSNMFResult, sos_nmf
from vcpcr._result import Result, TupleResult, short_repr
from vcpcr._risk_groups import RiskGroups
from vcpcr.benchmark import (
    FoldData,
    Method,
    OuterFold,
    Profile,
    SimulatedSetting,
    StudyResult,
    standardize_fold,
)
from vcpcr.metrics import ConcordanceInterval, concordance_interval
from vcpcr.simulate import SimulatedData, make_block_data

#: Public classes that describe what to run, not what came out: compared by value.
SPECIFICATIONS = {Method, Profile, SimulatedSetting}

#: The results that were ``typing.NamedTuple`` s (``RiskGroups`` is private, but
#: ``risk_groups`` returned it as a tuple too).
FORMER_NAMEDTUPLES = {
    SOSNMFResult,
    ConcordanceInterval,
    SimulatedData,
    RiskGroups,
    FoldData,
    OuterFold,
    StudyResult,
}


def result_classes() -> list[type]:
    """Every result class of a public ``__all__`` (the rule of the docstring)."""
    found = {
        obj
        for obj in public_names().values()
        if inspect.isclass(obj)
        and not issubclass(obj, BaseEstimator | BaseException)
        and obj not in SPECIFICATIONS
    }
    return sorted(found, key=lambda c: c.__qualname__)


RESULTS = result_classes()


def documented_attributes(cls: type) -> set[str]:
    """The names the ``Attributes`` section of a numpy docstring lists."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    match = re.search(r"^Attributes\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, re.M | re.S)
    assert match, f"{cls.__qualname__}'s docstring has no Attributes section"
    names: set[str] = set()
    for line in match.group(1).splitlines():
        if line and not line[0].isspace():
            names.update(n.strip() for n in line.split(" :")[0].split(","))
    return names


def test_the_rule_finds_the_results():
    """The rule picks up the results every public namespace returns, and only
    the classes that are neither estimators nor warnings nor specifications."""
    names = {cls.__name__ for cls in RESULTS}
    assert {
        "SOSNMFResult",
        "ScoringRule",
        "ConcordanceInterval",
        "SimulatedData",
        "CalibrationResult",
        "ExternalCohort",
        "ExternalValidation",
        "IncrementResult",
        "ExternalIncrementResult",
        "SampleSizeResult",
        "Nomogram",
        "Report",
        "Section",
        "MultiSplitResult",
        "StabilityResult",
        "FoldData",
        "OuterFold",
        "StudyResult",
    } <= names
    assert not names & {"VCPCR", "VCPCRCV", "CRL", "ClinicalCox", "VCPCRWarning"}
    assert RiskGroups not in RESULTS  # private: checked beside them


#: The public results and the private RiskGroups, which follows the same style.
RESULTS_AND_PRIVATE = [*RESULTS, RiskGroups]


@pytest.mark.parametrize("cls", RESULTS_AND_PRIVATE, ids=lambda c: c.__name__)
def test_result_is_a_frozen_dataclass_without_eq(cls):
    assert dataclasses.is_dataclass(cls), f"{cls.__qualname__} is no dataclass"
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen, f"{cls.__qualname__} is not frozen"
    assert not params.eq, f"{cls.__qualname__} compares its fields (eq=True)"
    assert issubclass(cls, Result)
    # the one shared repr, not the dataclass' field dump nor a class's own
    assert cls.__repr__ is Result.__repr__, f"{cls.__qualname__} has its own repr"
    assert issubclass(cls, TupleResult) == (cls in FORMER_NAMEDTUPLES)
    assert not issubclass(cls, tuple)


@pytest.mark.parametrize("cls", RESULTS_AND_PRIVATE, ids=lambda c: c.__name__)
def test_docstring_lists_every_field(cls):
    fields = {f.name for f in dataclasses.fields(cls)}
    missing = fields - documented_attributes(cls)
    assert not missing, f"{cls.__qualname__}'s Attributes section lacks {missing}"


def test_documented_attributes_reads_combined_entries():
    class Doc:
        """Title.

        Attributes
        ----------
        a, b : float
            Two.
        c : int
            One, with text that mentions d : not an entry.

        Notes
        -----
        e : not an attribute
        """

    assert documented_attributes(Doc) == {"a", "b", "c"}


def _fields(obj: Any) -> tuple[Any, ...]:
    return tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))


def test_result_cannot_be_reassigned():
    ci = concordance_interval(
        np.column_stack([[1.0, 2, 3, 4], [1, 1, 0, 1]]), [4, 3, 2, 1]
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        ci.estimate = 0.5  # type: ignore[misc]
    changed = dataclasses.replace(ci, estimate=0.5)
    assert changed.estimate == 0.5
    assert changed.low == ci.low
    assert ci != changed
    assert ci == ci  # identity


def test_tuple_unpacking_warns_and_keeps_the_old_order():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 8))
    res = sos_nmf(X, 2, random_state=0)
    match = (
        r"tuple unpacking of SOSNMFResult is deprecated and will be removed in "
        r"vcpcr 0\.3; use the attributes \.V, \.U, \.labels, \.lam, \.lam_max, "
        r"\.objective, \.n_iter, \.converged"
    )
    with pytest.warns(FutureWarning, match=match) as record:
        V, U, labels, lam, lam_max, objective, n_iter, converged = res
    assert record[0].filename == __file__  # points at the unpacking line
    assert [id(V), id(U), id(labels)] == [id(res.V), id(res.U), id(res.labels)]
    assert (lam, lam_max, n_iter, converged) == (
        res.lam,
        res.lam_max,
        res.n_iter,
        res.converged,
    )
    assert objective is res.objective
    with pytest.warns(FutureWarning, match="tuple unpacking of SOSNMFResult"):
        assert res[2] is res.labels
    with pytest.warns(FutureWarning, match="tuple unpacking of SOSNMFResult"):
        assert res[-1] == res.converged
    with pytest.warns(FutureWarning, match="tuple unpacking of SOSNMFResult"):
        assert res[:2] == (res.V, res.U)
    with pytest.warns(FutureWarning, match="tuple unpacking of SOSNMFResult"):
        assert len(res) == 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert res  # truth needs no len()
        assert res.lam > 0  # attribute access is silent


@pytest.mark.parametrize(
    "cls",
    sorted(FORMER_NAMEDTUPLES, key=lambda c: c.__name__),
    ids=lambda c: c.__name__,
)
def test_every_former_namedtuple_unpacks_with_a_warning(cls):
    names = [f.name for f in dataclasses.fields(cls)]
    values = [object() for _ in names]
    obj = cls(*values)  # positional construction, as the NamedTuple took
    with pytest.warns(
        FutureWarning, match=f"tuple unpacking of {cls.__name__} is"
    ) as rec:
        unpacked = tuple(obj)
    assert unpacked == tuple(values)
    assert all(f".{n}" in str(rec[0].message) for n in names)
    with pytest.warns(FutureWarning, match=cls.__name__):
        assert obj[0] is values[0]


def test_a_simulated_data_set_unpacks_as_before():
    data = make_block_data(20, [5, 5], [1.0, 0.0], n_noise=3, random_state=0)
    with pytest.warns(FutureWarning, match="tuple unpacking of SimulatedData"):
        X, y, coef, labels, *_ = data
    assert [id(X), id(y), id(coef), id(labels)] == [
        id(data.X),
        id(data.y),
        id(data.coef),
        id(data.labels),
    ]
    fold = standardize_fold(data.X, data.y, np.arange(15), np.arange(15, 20))
    with pytest.warns(FutureWarning, match="tuple unpacking of FoldData"):
        Xtr, ytr, Xte, yte = fold
    assert [id(Xtr), id(ytr), id(Xte), id(yte)] == [
        id(fold.Xtr),
        id(fold.ytr),
        id(fold.Xte),
        id(fold.yte),
    ]


def test_repr_is_one_short_line_with_shapes():
    data = make_block_data(200, [50, 50], [1.0, 0.0], n_noise=100, random_state=0)
    text = repr(data)
    assert text.startswith(
        "SimulatedData(X=ndarray(shape=(200, 200)), y=ndarray(shape=(200,)), "
    )
    assert "\n" not in text
    assert len(text) < 400


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.123456789, "0.123457"),
        (np.float64(2.5), "2.5"),
        (3, "3"),
        (None, "None"),
        ("cox", "'cox'"),
        (np.array([1.0, 2.0]), "[1, 2]"),
        (np.arange(7), "ndarray(shape=(7,))"),
        (np.array(["a", "b"]), "ndarray(shape=(2,))"),
        (pd.DataFrame({"a": [1, 2, 3]}), "DataFrame(shape=(3, 1))"),
        (pd.Series([1, 2]), "Series(shape=(2,))"),
        (list(range(40)), "list(len=40)"),
        ("x" * 100, repr("x" * 50 + "...")),
        ({"a": 1}, "{'a': 1}"),
    ],
    ids=[
        "float",
        "numpy-float",
        "int",
        "None",
        "str",
        "small-array",
        "array",
        "text-array",
        "frame",
        "series",
        "long-list",
        "long-str",
        "dict",
    ],
)
def test_short_repr(value, expected):
    assert short_repr(value) == expected
