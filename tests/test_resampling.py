"""The shared resampling infrastructure: template, rows, draws, fingerprint."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold

from tests.conftest import make_blocks, needs_survival
from vcpcr import VCPCR, VCPCRCV, Surv
from vcpcr._input import take
from vcpcr._parallel import check_failures, task_seeds
from vcpcr.exceptions import VCPCRWarning
from vcpcr.inference._resampling import (
    check_resampling,
    check_template,
    clone_for_split,
    draw_splits,
    resampling_rows,
)


@pytest.fixture
def data():
    X, y, _, _ = make_blocks(n=40, n_noise=6)
    names = [f"g{j}" for j in range(X.shape[1])]
    return pd.DataFrame(X, columns=names), pd.Series(y, name="weight")


# ------------------------------------------------------------------ template
@pytest.mark.parametrize(
    "estimator",
    [LinearRegression(), "VCPCR", VCPCR],
    ids=["sklearn", "string", "class"],
)
def test_template_must_be_a_vcpcr_estimator(estimator):
    with pytest.raises(TypeError, match="'estimator' parameter of f must be"):
        check_template(estimator, "f")


def test_template_of_a_fitted_model_is_its_unfitted_clone(data):
    """A fitted VCPCR gives its parameters; a fitted VCPCRCV the model it chose
    (best_estimator_'s parameters), or itself with retune=True; every template
    is a new unfitted clone."""
    X, y = data
    vcpcr = VCPCR(n_clusters=2, n_init=1, lam_ratio=0.4)
    for model in (vcpcr, clone(vcpcr).fit(X, y)):
        template = check_template(model, "f")
        assert type(template) is VCPCR
        assert template is not model
        assert template.get_params() == vcpcr.get_params()
        assert not hasattr(template, "membership_")
    cv = VCPCRCV(n_clusters=[2, 3], lam_ratios=[0.3, 0.6], cv=3, random_state=0)
    assert check_template(cv, "f").get_params() == cv.get_params()  # tunes
    cv.fit(X, y)
    chosen = check_template(cv, "f")
    assert type(chosen) is VCPCR
    assert chosen.get_params() == cv.best_estimator_.get_params()
    assert not hasattr(chosen, "membership_")
    assert check_template(cv, "f", retune=False).get_params() == chosen.get_params()
    retuned = check_template(cv, "f", retune=True)
    assert type(retuned) is VCPCRCV
    assert not hasattr(retuned, "best_estimator_")
    assert retuned.get_params(deep=False) == cv.get_params(deep=False)


def test_retune_must_fit_the_estimator(data):
    X, y = data
    with pytest.raises(ValueError, match=r"retune.*VCPCR: it has no grid to tune"):
        check_template(VCPCR(), "f", retune=True)
    with pytest.raises(ValueError, match=r"not fitted.*cv\.fit\(X, y\)"):
        check_template(VCPCRCV(), "f", retune=False)
    with pytest.raises(TypeError, match="'retune' parameter of f must be True"):
        check_template(VCPCRCV(), "f", retune="yes")
    no_refit = VCPCRCV(n_clusters=2, lam_ratios=[0.5], cv=3, refit=False).fit(X, y)
    with pytest.raises(ValueError, match="refit=False: it has no best_estimator_"):
        check_template(no_refit, "f")


# ---------------------------------------------------------------------- rows
def test_take_keeps_the_kind_of_the_data(data):
    X, y = data
    rows = np.array([3, 0, 5])
    assert take(X, rows).index.tolist() == [3, 0, 5]
    assert isinstance(take(y, rows), pd.Series)
    np.testing.assert_array_equal(take(X.to_numpy(), rows), X.to_numpy()[rows])
    assert take([[1], [2], [3], [4]], np.array([1, 3])) == [[2], [4]]
    assert take(None, rows) is None
    surv = np.array([(True, 1.0), (False, 2.0)], dtype=[("e", "?"), ("t", "<f8")])
    assert take(surv, np.array([1]))["t"].tolist() == [2.0]


def test_mismatched_lengths_are_an_error(data):
    X, y = data
    with pytest.raises(ValueError, match="X has 40 rows but y has 39"):
        resampling_rows(VCPCR(), X, y.iloc[:-1], "f")


def test_rows_of_arrays_and_frames_give_the_fit_standardization(data):
    X, y = data
    for Xin, yin in ((X, y), (X.to_numpy(), y.to_numpy())):
        rows = resampling_rows(VCPCR(n_clusters=2, n_init=1), Xin, yin, "f")
        model = VCPCR(n_clusters=2, n_init=1).fit(Xin, yin)
        assert rows.n_samples == 40
        assert rows.strata is None  # gaussian: no stratification
        fp = rows.fingerprint
        assert np.array_equal(fp.mean, model.mean_)
        assert np.array_equal(fp.scale, model.scale_)
        assert fp.feature_names == tuple(model.membership_.index)
        assert fp.yname == model.yname_
        fp.check(model, "The result")


def test_formula_rows_take_the_outcome_from_the_formula(data):
    X, y = data
    df = X.assign(weight=y.to_numpy())
    df.loc[[2, 7], "g0"] = np.nan
    template = VCPCR(n_clusters=2, n_init=1, formula="weight ~ .", missing="drop")
    with pytest.warns(VCPCRWarning, match="Dropped 2 of 40 rows"):
        rows = resampling_rows(template, df, None, "f")
    assert rows.y is None
    assert rows.n_samples == 38 == len(rows.X)
    assert rows.X["g0"].notna().all()
    np.testing.assert_array_equal(
        np.asarray(rows.response), np.delete(y.to_numpy(), [2, 7])
    )
    with pytest.warns(VCPCRWarning, match="Dropped 2 of 40 rows"):
        model = clone(template).fit(df)
    rows.fingerprint.check(model, "The result")
    # a part of the rows fits without dropping anything (no warning)
    clone(template).fit(take(rows.X, np.arange(20)))


def test_binomial_strata_are_the_classes(data):
    X, y = data
    labels = np.where(y > y.median(), "case", "control")
    rows = resampling_rows(VCPCR(family="binomial"), X, labels, "f")
    np.testing.assert_array_equal(rows.strata, (labels == "control").astype(float))


@needs_survival
def test_cox_strata_are_the_event_indicator(data):
    X, y = data
    event = np.arange(40) % 3 > 0
    ysurv = Surv(np.exp(y.to_numpy() / 4), event)
    rows = resampling_rows(VCPCR(family="cox"), X, ysurv, "f")
    np.testing.assert_array_equal(rows.strata, event.astype(float))


# --------------------------------------------------------------- fingerprint
def test_fingerprint_refuses_other_parameters_or_data(data):
    X, y = data
    template = VCPCR(n_clusters=2, n_init=1, lam_ratio=0.4)
    fp = resampling_rows(template, X, y, "f").fingerprint
    # n_jobs-like parameters and random_state do not matter
    fp.check(clone(template).set_params(random_state=3).fit(X, y), "R")
    other = clone(template).set_params(lam_ratio=0.5).fit(X, y)
    with pytest.raises(ValueError, match=r"lam_ratio=0.4 vs 0.5"):
        fp.check(other, "R")
    with pytest.raises(ValueError, match="number of samples differ"):
        fp.check(clone(template).fit(X.iloc[:-1], y.iloc[:-1]), "R")
    shifted = X.copy()
    shifted.iloc[0, 0] += 1e-9
    with pytest.raises(ValueError, match="means or standard deviations"):
        fp.check(clone(template).fit(shifted, y), "R")
    with pytest.raises(ValueError, match="features differ"):
        fp.check(clone(template).fit(X.to_numpy(), y), "R")
    with pytest.raises(ValueError, match="response differ"):
        fp.check(clone(template).fit(X, y.rename("height")), "R")
    # a VCPCRCV is compared through the model it chose
    cv = VCPCRCV(n_clusters=2, lam_ratios=[0.4], n_init=1, cv=3).fit(X, y)
    with pytest.raises(ValueError, match=r"other estimator parameters.*delta="):
        fp.check(cv, "R")
    chosen = check_template(cv, "f")
    resampling_rows(chosen, X, y, "f").fingerprint.check(cv, "R")
    resampling_rows(chosen, X, y, "f").fingerprint.check(cv.best_estimator_, "R")
    tuned = resampling_rows(check_template(cv, "f", retune=True), X, y, "f")
    tuned.fingerprint.check(cv, "R")
    with pytest.raises(ValueError, match="VCPCRCV template, not a VCPCR"):
        tuned.fingerprint.check(cv.best_estimator_, "R")
    with pytest.raises(TypeError, match="describes a VCPCR"):
        fp.check(LinearRegression(), "R")


def test_fingerprint_of_a_cv_template_compares_splitters_by_value(data):
    X, y = data
    template = VCPCRCV(
        n_clusters=2, lam_ratios=[0.4, 0.6], n_init=1, cv=KFold(3), n_jobs=1
    )
    fp = resampling_rows(template, X, y, "f").fingerprint
    fp.check(clone(template).set_params(n_jobs=2).fit(X, y), "R")
    other = clone(template).set_params(lam_ratios=[0.4, 0.7]).fit(X, y)
    with pytest.raises(ValueError, match="lam_ratios"):
        fp.check(other, "R")


# --------------------------------------------------------------------- draws
@pytest.mark.parametrize(
    ("n_splits", "train_size", "error", "match"),
    [
        (0, 0.5, ValueError, "'n_splits' parameter of f must be in the range"),
        (2.0, 0.5, TypeError, "'n_splits' parameter of f must be of type"),
        (5, 1.0, ValueError, "'train_size' parameter of f must be in the range"),
        (5, 0.0, ValueError, "'train_size' parameter of f must be in the range"),
        (5, "half", TypeError, "'train_size' parameter of f must be of type"),
        (5, 0.05, ValueError, "parts of 2 and 38; each part needs at least 3"),
    ],
    ids=["zero", "float-splits", "one", "zero-size", "string", "tiny-part"],
)
def test_bad_resampling_parameters(n_splits, train_size, error, match):
    with pytest.raises(error, match=match):
        check_resampling(n_splits, train_size, 40, "f")


def test_stratified_halves_keep_the_strata_and_are_seeded():
    strata = np.repeat([0.0, 1.0], [30, 10])
    splits = draw_splits(40, strata, 20, 0.5, random_state=0)
    assert len(splits) == 20
    for a, b in splits:
        assert np.intersect1d(a, b).size == 0
        assert np.union1d(a, b).size == 40
        assert strata[a].sum() == 5  # half of the 10 events in each part
    again = draw_splits(40, strata, 20, 0.5, random_state=0)
    assert all(
        np.array_equal(a, c) for (a, _), (c, _) in zip(splits, again, strict=True)
    )
    other = draw_splits(40, strata, 20, 0.5, random_state=1)
    assert not all(
        np.array_equal(a, c) for (a, _), (c, _) in zip(splits, other, strict=True)
    )
    plain = draw_splits(40, None, 3, 0.25, random_state=0)
    assert [len(a) for a, _ in plain] == [10, 10, 10]


def test_a_stratum_of_one_row_cannot_be_split():
    strata = np.repeat([0.0, 1.0], [39, 1])
    with pytest.raises(ValueError, match="has 1 row"):
        draw_splits(40, strata, 5, 0.5, random_state=0)


def test_split_seeds_and_clones():
    seeds = task_seeds(0, 4)
    assert seeds == task_seeds(0, 4)
    assert len(set(seeds)) == 4
    template = VCPCR(n_clusters=3, random_state=123)
    clone_ = clone_for_split(template, seeds[0])
    assert clone_.random_state == seeds[0]
    assert template.random_state == 123
    assert clone_.n_clusters == 3


def test_a_tuned_template_runs_silently_inside_a_resample():
    """The caller's bar counts the resamples: a VCPCRCV clone has none of its
    own, even when the template asks for one (nested bars, one per split)."""
    template = VCPCRCV(n_clusters=2, verbose=True)
    clone_ = clone_for_split(template, 7)
    assert clone_.verbose is False
    assert clone_.random_state == 7
    assert template.verbose is True


@needs_survival
def test_a_resample_s_selection_does_not_pass_on_its_step2_warnings():
    """What a resample keeps (its clusters) does not use its step-2
    coefficients, so a selection fit whose step 2 diverges (here every
    subsample's: g0 orders the event times exactly) passes on no warning about
    them, which speaks of summary() and result_; the same fit alone warns."""
    import warnings

    from vcpcr import SeparationWarning
    from vcpcr.inference import stability_selection

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 6)), columns=[f"g{j}" for j in range(6)])
    order = np.argsort(np.argsort(-X["g0"].to_numpy()))
    y = np.column_stack([order + 1.0, np.ones(40)])
    template = VCPCR(n_clusters=1, family="cox", lam_ratio=0.9)
    with warnings.catch_warnings(record=True) as alone:
        warnings.simplefilter("always")
        clone(template).fit(X.iloc[:20], y[:20])
    assert SeparationWarning in {w.category for w in alone}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = stability_selection(template, X, y, n_pairs=3, random_state=0)
    assert [str(w.message) for w in caught] == []
    assert result.selection_frequency["g0"] == 1.0


def test_failures_are_counted_by_kind_numbers_aside():
    """Messages that differ only in their numbers are one reason: "4 of 4",
    not "1 time(s)" (each split's message names its own gene count)."""
    reasons = [
        "too many selected genes (41) for the second part's 20 events",
        "too many selected genes (38) for the second part's 19 events",
        None,
        "too many selected genes (40) for the second part's 21 events",
        "the split is unusable: no event in the second part",
        None,
        None,
        None,
    ]
    with pytest.warns(
        VCPCRWarning, match=r"on 4 of 8 splits failed \(most often, 3 time"
    ):
        check_failures(reasons, "multi_split", "splits", "p = 1")
