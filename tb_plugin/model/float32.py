"""Values the model keeps as float32, given back as the trace wrote them.

A trace writes "blocks per SM": 2.8; kept as float32, that is 2.7999999523162842 as a float64.
Every float32 value has one shortest decimal that reads back as it (what ``str`` of a NumPy
float32 prints): that decimal is, for any value a writer printed with at most float32's
precision, the text of the trace. Conversion runs once per distinct value.
"""

from __future__ import annotations

import numpy as np

from .trace_model import TraceModel


def as_written(values: np.ndarray) -> np.ndarray:
    """float32 values → float64 values of their shortest round-tripping decimals (NaN stays NaN)."""
    values = np.asarray(values, dtype=np.float32)
    if len(values) == 0:
        return np.zeros(0, dtype=np.float64)
    out = np.full(len(values), np.nan)
    written = np.flatnonzero(~np.isnan(values))  # most slices have no such value: only the others are sorted
    distinct, inverse = np.unique(values[written], return_inverse=True)
    decimals = np.fromiter((float(str(value)) for value in distinct), dtype=np.float64, count=len(distinct))
    out[written] = decimals[inverse.reshape(-1)]
    return out


def value_as_written(value: np.floating) -> float:
    """One float32 value as the trace wrote it."""
    return float(str(np.float32(value)))


def slice_column_as_written(model: TraceModel, column: str) -> np.ndarray:
    """A float32 column of ``model.slices`` (``blocks_per_sm``, ``warps_per_sm``, ``occupancy``) as written."""
    return model.memo(("float32_as_written", column), lambda: as_written(getattr(model.slices, column)))
