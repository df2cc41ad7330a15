"""The sort-free factorisation and slice order used by model.build agree with numpy's sorting answers."""

import numpy as np
import pytest

from profscope.tb_plugin.model import build
from profscope.tb_plugin.model.factorize import MAX_DENSE_RANGE, factorize, factorize_parts, unique_rows


@pytest.mark.parametrize("values", [
    np.array([5, 3, 5, 9, 3, 3], dtype=np.int64),
    np.array([-4, 7, -4, 0], dtype=np.int32),
    np.array([0, MAX_DENSE_RANGE * 3, 1], dtype=np.int64),  # wide range: the sorting fallback
    np.zeros(0, dtype=np.int64),
])
def test_factorize_equals_numpy_unique(values: np.ndarray) -> None:
    uniques, inverse = factorize(values)
    expected_uniques, expected_inverse = np.unique(values, return_inverse=True)
    assert uniques.dtype == values.dtype
    assert np.array_equal(uniques, expected_uniques)
    assert np.array_equal(inverse, expected_inverse.reshape(-1))


@pytest.mark.parametrize("parts", [
    [np.array([5, 3, 5], dtype=np.int32), np.zeros(0, dtype=np.int32), np.array([9, 3, 3, 7], dtype=np.int32)],
    [np.array([-4, 7], dtype=np.int64), np.array([-4, 0], dtype=np.int64)],
    [np.array([0, 1], dtype=np.int64), np.array([MAX_DENSE_RANGE * 3], dtype=np.int64)],  # the sorting fallback
    [np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)],
])
def test_factorize_parts_equals_numpy_unique_of_their_concatenation(parts: list[np.ndarray]) -> None:
    uniques, codes = factorize_parts(parts)
    expected_uniques, expected_inverse = np.unique(np.concatenate(parts), return_inverse=True)
    assert np.array_equal(uniques, expected_uniques)
    assert [len(code) for code in codes] == [len(part) for part in parts]
    assert all(code.dtype == np.int32 for code in codes)
    assert np.array_equal(np.concatenate(codes), expected_inverse.reshape(-1))


def test_slice_order_equals_lexsort_with_ties() -> None:
    rng = np.random.default_rng(7)
    n = 5000
    track = rng.integers(0, 4, n)
    start = rng.integers(0, 300, n).astype(np.int64)  # many slices share a start on a track
    dur = rng.integers(0, 20, n).astype(np.int64)
    event_id = np.arange(n, dtype=np.int64) * 3
    order = build._slice_order(track, start, dur, event_id)
    assert np.array_equal(order, np.lexsort((event_id, -dur, start, track)))
    shuffled = rng.permutation(event_id)  # ids not in file order: the plain lexsort path
    assert np.array_equal(build._slice_order(track, start, dur, shuffled), np.lexsort((shuffled, -dur, start, track)))


def test_operator_grouping_matches_unique_rows() -> None:
    from profscope.tb_plugin.views.operators import _group

    rng = np.random.default_rng(7)
    names = rng.integers(0, 40, 5000).astype(np.int64)
    shapes = rng.integers(-1, 25, 5000).astype(np.int64)  # -1: no input shape
    weights = rng.integers(0, 1000, 5000)
    for keys in (names[:, None], np.stack([names, shapes], axis=1)):
        unique, counts, (sums,) = _group(keys, weights)
        expected, inverse, expected_counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
        assert np.array_equal(unique, expected) and np.array_equal(counts, expected_counts)
        assert np.array_equal(sums, np.bincount(inverse.reshape(-1), weights=weights, minlength=len(expected)))


@pytest.mark.parametrize("columns", [1, 2])
def test_unique_rows_equals_numpy_unique_over_rows(columns: int) -> None:
    rng = np.random.default_rng(11)
    keys = np.stack([rng.integers(-1, 30, 4000), rng.integers(0, 1 << 40, 4000) % 97 - 5][:columns], axis=1)
    keys[::7, -1] = MAX_DENSE_RANGE * 5  # a wide range in the last column: its sorting fallback
    unique, inverse = unique_rows(keys)
    expected, expected_inverse = np.unique(keys, axis=0, return_inverse=True)
    assert np.array_equal(unique, expected)
    assert np.array_equal(inverse, expected_inverse.reshape(-1))
