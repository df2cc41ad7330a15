"""Elementary segments and the priority breakdown on hand-made intervals (exact numbers)."""

from __future__ import annotations

import numpy as np

from profscope.tb_plugin.model.intervals import Segments, exclusive_breakdown


def _ints(*values: int) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def test_segment_bounds_are_every_distinct_endpoint_in_order() -> None:
    segments = Segments.of((_ints(5, 0, 5), _ints(9, 3, 7)), (_ints(3,), _ints(12,)))
    assert segments.bounds.tolist() == [0, 3, 5, 7, 9, 12]
    assert segments.lengths.tolist() == [3, 2, 2, 2, 3]
    assert Segments.of().bounds.tolist() == []
    assert Segments.of((_ints(4), _ints(4))).bounds.tolist() == [4]


def test_the_breakdown_gives_each_instant_to_the_first_category_that_covers_it() -> None:
    windows = (_ints(0, 10), _ints(10, 20))
    first = (_ints(2, 12), _ints(4, 18))
    second = (_ints(3,), _ints(14,))  # overlaps the first category in both windows
    out = exclusive_breakdown(windows, [first, second])
    # Window [0, 10): first 2..4 (2), second 4..10 (6), rest 2. Window [10, 20): first 12..18 (6), second 10..12 (2), rest 2.
    assert out.tolist() == [[2, 6, 2], [6, 2, 2]]


def _random_intervals(rng: np.random.Generator, count: int, disjoint: bool) -> tuple[np.ndarray, np.ndarray]:
    """Intervals on [0, 60): disjoint ones may touch or be empty; others overlap at will."""
    if disjoint:
        cuts = np.sort(rng.choice(61, size=2 * count, replace=True))
        return cuts[0::2].astype(np.int64), cuts[1::2].astype(np.int64)
    starts = rng.integers(0, 60, count)
    return starts.astype(np.int64), (starts + rng.integers(0, 15, count)).astype(np.int64)


def _instants(intervals: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    covered = np.zeros(80, dtype=bool)
    for start, end in zip(*intervals):
        covered[start:end] = True
    return covered


def test_coverage_and_the_breakdown_match_a_count_instant_by_instant() -> None:
    rng = np.random.default_rng(7)
    for case in range(300):
        windows = _random_intervals(rng, int(rng.integers(1, 6)), disjoint=True)
        categories = [_random_intervals(rng, int(rng.integers(0, 8)), disjoint=bool(rng.integers(0, 2)))
                      for _ in range(int(rng.integers(1, 4)))]
        segments = Segments.of(windows, *categories)
        starts = segments.bounds[:-1]
        for category in categories:  # covered(): the disjoint fast path and the general one
            assert segments.covered(category).tolist() == _instants(category)[starts].tolist(), case
        # owner(): the window holding each segment (windows may touch or be empty)
        expected_owner = [next((w for w, (a, b) in enumerate(zip(*windows)) if a <= t < b), -1) for t in starts]
        assert segments.owner(windows).tolist() == expected_owner, case
        # The breakdown: each instant of a window to the first category covering it, else to the rest.
        expected = np.zeros((len(windows[0]), len(categories) + 1), dtype=np.int64)
        masks = [_instants(category) for category in categories]
        for w, (a, b) in enumerate(zip(*windows)):
            for t in range(a, b):
                expected[w, next((i for i, mask in enumerate(masks) if mask[t]), len(categories))] += 1
        assert exclusive_breakdown(windows, categories).tolist() == expected.tolist(), case
