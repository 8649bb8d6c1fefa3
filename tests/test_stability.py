"""Stability selection: the statistics of a label matrix, and the resampling."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import sparse
from sklearn.metrics import adjusted_rand_score

from vcpcr._stability import (
    best_match_jaccard,
    coclustering,
    consensus_modules,
    error_bound,
    mean_coclustering,
    selection_frequency,
)

# Four resamples, four features; worked by hand in the tests below.
HAND = np.array(
    [
        [0, 0, 1, -1],
        [0, 1, 1, -1],
        [-1, 0, 0, 0],
        [1, 1, -1, 0],
    ]
)


def naive_coclustering(L, features):
    """Dense double loop over pairs and resamples (the definition, spelled out)."""
    m = len(features)
    out = np.zeros((m, m))
    for a, i in enumerate(features):
        for c, j in enumerate(features):
            both = (L[:, i] >= 0) & (L[:, j] >= 0)
            same = both & (L[:, i] == L[:, j])
            out[a, c] = same.sum() / both.sum() if same.any() else 0.0
    return out


# ----------------------------------------------------------- pure functions
def test_selection_frequency_by_hand():
    assert_allclose(selection_frequency(HAND), [0.75, 1.0, 0.75, 0.5], rtol=0, atol=0)


def test_coclustering_by_hand():
    """(0,1): same cluster in 2 of the 3 resamples selecting both; (0,2) never;
    (0,3) both selected once, apart; (1,2) 2 of 3; (1,3) 1 of 2; (2,3) 1 of 1."""
    expected = np.array(
        [
            [1, 2 / 3, 0, 0],
            [2 / 3, 1, 2 / 3, 1 / 2],
            [0, 2 / 3, 1, 1],
            [0, 1 / 2, 1, 1],
        ]
    )
    coc = coclustering(HAND, np.arange(4))
    assert sparse.issparse(coc)
    assert_allclose(coc.toarray(), expected, rtol=1e-15, atol=0)
    assert coc.nnz == 12  # the pairs that never share a cluster are not stored


def test_coclustering_of_a_subset_is_the_submatrix():
    coc = coclustering(HAND, [3, 1])
    assert_allclose(coc.toarray(), [[1, 1 / 2], [1 / 2, 1]], rtol=1e-15, atol=0)


@pytest.mark.parametrize("seed", [0, 1, 2], ids=["seed0", "seed1", "seed2"])
def test_coclustering_against_the_definition(seed):
    rng = np.random.default_rng(seed)
    L = rng.integers(-1, 4, size=(30, 40))
    L[5] = -1  # a resample that selects nothing
    L[:, 7] = -1  # a feature never selected
    features = rng.permutation(40)[:25]
    features = np.append(features, 7)
    assert_allclose(
        coclustering(L, features).toarray(),
        naive_coclustering(L, features),
        rtol=1e-15,
        atol=0,
    )


def test_coclustering_memory_follows_the_features_asked_for():
    L = np.full((4, 20_000), -1)
    L[:, :3] = [[0, 0, 1], [0, 0, 1], [1, 1, -1], [0, 2, 1]]
    coc = coclustering(L, [0, 1, 2, 19_999])
    assert coc.shape == (4, 4)
    assert_allclose(coc[[0], [1]], [0.75], rtol=1e-15, atol=0)
    assert coc.nnz == 3 + 2  # the diagonal of the three selected, (0,1) and (1,0)


def test_mean_coclustering_by_hand():
    assert_allclose(mean_coclustering(HAND, [0, 1, 2]), 4 / 9, rtol=1e-15, atol=0)
    assert_allclose(mean_coclustering(HAND, [1, 2, 3]), 13 / 18, rtol=1e-15, atol=0)
    assert np.isnan(mean_coclustering(HAND, [2]))


def test_best_match_jaccard_by_hand():
    """Module {1, 2}: resample 0 best matches {2} (1/2), resample 1 is {1, 2}
    (1), resample 2 is {1, 2, 3} (2/3), resample 3 best matches {0, 1} (1/3);
    a resample selecting none of the members scores 0."""
    L = np.vstack([HAND, np.full(4, -1), [-1, -1, -1, 0]])
    assert_allclose(
        best_match_jaccard(L, [1, 2]),
        [1 / 2, 1, 2 / 3, 1 / 3, 0, 0],
        rtol=1e-15,
        atol=0,
    )
    assert_allclose(best_match_jaccard(HAND, [1, 2]).mean(), 0.625, rtol=1e-15, atol=0)


def test_best_match_jaccard_unselected_members_lower_it():
    """A member left unselected is in no cluster: the module {0, 1, 3} in a
    resample whose only cluster is {0, 1} scores 2/3, not 1."""
    L = np.array([[0, 0, -1, -1]])
    assert_allclose(best_match_jaccard(L, [0, 1, 3]), [2 / 3], rtol=1e-15, atol=0)


def test_best_match_jaccard_rejects_an_empty_module():
    with pytest.raises(ValueError, match="at least one feature"):
        best_match_jaccard(HAND, [])


def test_label_matrix_is_checked():
    with pytest.raises(ValueError, match="-1 for unselected"):
        selection_frequency(np.array([[0, -2]]))
    with pytest.raises(ValueError, match="2-d integer array"):
        selection_frequency(np.array([0.0, 1.0]))


def test_consensus_modules_by_hand():
    """Distances 0.1 within {0, 1}, 0.4 within {2, 3}, 0.925 on average
    between them: cut at 0.5 gives two modules, at 0.3 three."""
    coc = np.array(
        [
            [1, 0.9, 0.1, 0],
            [0.9, 1, 0.2, 0],
            [0.1, 0.2, 1, 0.6],
            [0, 0, 0.6, 1],
        ]
    )
    assert adjusted_rand_score(consensus_modules(coc), [0, 0, 1, 1]) == 1
    assert adjusted_rand_score(consensus_modules(coc, 0.3), [0, 0, 1, 2]) == 1
    assert_array_equal(consensus_modules(sparse.csr_array(coc)), consensus_modules(coc))
    assert_array_equal(consensus_modules(np.ones((1, 1))), [0])
    assert consensus_modules(np.ones((0, 0))).shape == (0,)


def test_error_bound_by_hand():
    assert_allclose(error_bound(10.0, 1000, 0.75), 0.2, rtol=1e-15, atol=0)
    assert_allclose(error_bound(10.0, 1000, 1.0), 0.1, rtol=1e-15, atol=0)
