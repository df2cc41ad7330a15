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
