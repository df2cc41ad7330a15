"""The columns a decoder hands to ``model.build``: one trace in file order, before sorting and linking.

Every format's decoder (``ingest/``) fills them; ``model/build.py`` turns them into the immutable
``TraceModel``. They belong to the model layer so that neither needs the other's module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .interning import StringTable

# A flow event's phase: its start (``s``), a step on its way (``t``), its end (``f``).
FLOW_START, FLOW_STEP, FLOW_END = 0, 1, 2


def constant_part(value: Any, count: int, dtype: Any) -> np.ndarray:
    """A part holding ``value`` ``count`` times, in no memory: a read-only broadcast view. Most parts of the sparse
    argument columns (kernel, collective, Python arguments...) hold only their "absent" value."""
    return np.broadcast_to(np.array(value, dtype=dtype), (count,))


def part_constant(part: np.ndarray) -> Any:
    """The value of a part made by ``constant_part`` (a numpy scalar), else None."""
    if part.ndim == 1 and len(part) > 1 and part.strides[0] == 0:
        return part[0]
    return None


@dataclass
class RawColumns:
    """Columns of one trace in file order, before sorting and linking (see model.build)."""

    strings: StringTable
    metadata: dict[str, Any]
    stats: dict[str, Any]
    num_events: int = 0
    # Per table: column name → list of per-chunk arrays (concatenated by ``column``).
    parts: dict[str, dict[str, list[np.ndarray]]] = field(default_factory=dict)
    # Metadata events: (kind, pid text id, tid text id, value) e.g. ("thread_name", 3, 4, "main").
    meta_events: list[tuple[str, int, int, Any]] = field(default_factory=list)
    # Flow ids that were strings, by their (negative) number: flow_id = -2 - index.
    flow_id_strings: list[str] = field(default_factory=list)
    # Per decoded chunk: (number of its first event as numbered here, its number of events). With two
    # decoding processes each numbers its own chunks; parallel.merge renumbers them in file order.
    chunk_events: dict[int, tuple[int, int]] = field(default_factory=dict)
    # Per decoded chunk: how many strings were interned before it (those after, up to the next chunk's, are its own
    # new strings): the merge interns them in file order, so that string ids come out as one process gives them.
    chunk_strings: dict[int, int] = field(default_factory=dict)
    # The chunk each part of a table (one ``add``) and each metadata event came from (file order on merge).
    part_chunks: dict[str, list[int]] = field(default_factory=dict)
    meta_chunks: list[int] = field(default_factory=list)
    chunk: int = 0  # the chunk being decoded

    def begin_chunk(self, index: int, first_event: int, events: int) -> None:
        self.chunk = index
        self.chunk_events[index] = (first_event, events)
        self.chunk_strings[index] = len(self.strings.strings)

    def add(self, table: str, **columns: np.ndarray) -> None:
        store = self.parts.setdefault(table, {})
        for key, values in columns.items():
            store.setdefault(key, []).append(values)
        self.part_chunks.setdefault(table, []).append(self.chunk)

    def add_meta(self, kind: str, pid: int, tid: int, args: Any) -> None:
        self.meta_events.append((kind, pid, tid, args))
        self.meta_chunks.append(self.chunk)

    def column(self, table: str, key: str, dtype: Any) -> np.ndarray:
        chunks = self.parts.get(table, {}).get(key, [])
        if not chunks:
            return np.zeros(0, dtype=dtype)
        out = np.concatenate(chunks).astype(dtype, copy=False)
        chunks.clear()  # free the parts as soon as the whole column exists
        return out
