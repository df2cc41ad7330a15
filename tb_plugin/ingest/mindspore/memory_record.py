"""MindSpore's memory record → the model's memory instants (the memory view's input).

With ``profile_memory`` on, MindSpore's profiler writes, beside the timeline of a span folder,
``FRAMEWORK/cpu_ms_memory_record_<id>.txt``: a CSV with the header
``Timestamp(ns),Total Allocated(Byte),Total Reserved(Byte),Total Active(Byte)`` and one row per
change of its memory pool's totals.

Where it goes: the timestamps are epoch nanoseconds, the clock of ``trace_view.json``'s ``ts``
(epoch µs), so the rows fall on the span's timeline. A record can hold more than its span (in a
scheduled PyNative run the second span's file starts with the first span's rows), so only the rows
inside the timeline's time range are kept.

What it gives, and what not: the totals only, no addresses, no size of a single allocation, no
thread or operator. Each row becomes a ``[memory]`` instant with ``Total Allocated`` / ``Total
Reserved`` (device: the CPU), 0 bytes and no address, on a track of its own: the memory view draws
the allocated and reserved curves and the peak; its allocation and per-operator tables stay empty,
since nothing in the record says which allocation or operator a change belongs to.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import numpy as np

if TYPE_CHECKING:
    from ...model.raw_columns import RawColumns

RECORD_FILE = re.compile(r"^cpu_ms_memory_record_(?P<device>\d+)\.txt$")
RECORD_FOLDER = "FRAMEWORK"  # beside ASCEND_PROFILER_OUTPUT in a span folder
HEADER = ("Timestamp(ns)", "Total Allocated(Byte)", "Total Reserved(Byte)", "Total Active(Byte)")
# A record is about 45 bytes per change of the pool's totals; anything larger is not one.
MAX_RECORD_BYTES = 256 << 20
MEMORY_EVENT_NAME = "[memory]"
PROCESS_NAME = "MindSpore memory pool"
_CPU_DEVICE_TYPE = 0  # as torch numbers devices (views/memory.py)


class MemoryRecordError(ValueError):
    """The file is not a MindSpore memory record."""


@dataclass(frozen=True)
class MemoryRecord:
    """The columns of a memory record, in file order."""

    ts_ns: np.ndarray  # int64 epoch ns
    allocated: np.ndarray  # int64 bytes
    reserved: np.ndarray
    active: np.ndarray

    def __len__(self) -> int:
        return len(self.ts_ns)


def read_memory_record(data: bytes) -> MemoryRecord:
    """Parse a memory record's bytes (see the module docstring); raises ``MemoryRecordError``."""
    if len(data) > MAX_RECORD_BYTES:
        raise MemoryRecordError("the memory record is too large")
    text = data.decode("utf-8", "replace")
    first, _, body = text.partition("\n")
    if tuple(column.strip() for column in first.split(",")) != HEADER:
        raise MemoryRecordError(f"not a MindSpore memory record: header {first.strip()[:120]!r}")
    if not body.strip():
        empty = np.zeros(0, dtype=np.int64)
        return MemoryRecord(empty, empty, empty, empty)
    try:
        table = np.loadtxt(io.StringIO(body), delimiter=",", dtype=np.int64, ndmin=2)
    except ValueError as exc:
        raise MemoryRecordError(f"invalid memory record row: {exc}") from exc
    if table.shape[1] != len(HEADER):
        raise MemoryRecordError(f"a memory record row has {table.shape[1]} values, not {len(HEADER)}")
    return MemoryRecord(ts_ns=table[:, 0], allocated=table[:, 1], reserved=table[:, 2], active=table[:, 3])


def record_name_for(span_files: list[str]) -> Optional[str]:
    """The memory record among the names of a span folder's ``FRAMEWORK`` files (the lowest id), else None."""
    found = sorted((int(m["device"]), name) for name in span_files if (m := RECORD_FILE.match(name)))
    return found[0][1] if found else None


def timeline_range(raw: RawColumns) -> Optional[tuple[int, int]]:
    """(first start, last end) in ns of the decoded slices, None without slices."""
    store = raw.parts.get("slices", {})
    starts, durations = store.get("start", []), store.get("dur", [])
    if not starts or not sum(len(s) for s in starts):
        return None
    lo = min(int(s.min()) for s in starts if len(s))
    hi = max(int((s + d).max()) for s, d in zip(starts, durations) if len(s))
    return lo, hi


def add_memory_record(raw: RawColumns, record: MemoryRecord) -> int:
    """Append the record's rows inside the timeline's range as ``[memory]`` instants; returns how many."""
    window = timeline_range(raw)
    if window is None or len(record) == 0:
        return 0
    keep = (record.ts_ns >= window[0]) & (record.ts_ns <= window[1])
    n = int(np.count_nonzero(keep))
    if n == 0:
        return 0
    strings = raw.strings
    first_event = _next_event_id(raw)
    columns = dict(
        event_id=np.arange(first_event, first_event + n, dtype=np.int64),
        pid=np.full(n, strings[PROCESS_NAME], dtype=np.int32),
        tid=np.full(n, strings["CPU"], dtype=np.int32),
        ts=record.ts_ns[keep].astype(np.int64),
        name=np.full(n, strings[MEMORY_EVENT_NAME], dtype=np.int32),
        cat=np.full(n, strings[""], dtype=np.int32),
        addr=np.full(n, -1, dtype=np.int64),
        bytes=np.zeros(n, dtype=np.int64),
        total_allocated=record.allocated[keep].astype(np.int64),
        total_reserved=record.reserved[keep].astype(np.int64),
        device_type=np.full(n, _CPU_DEVICE_TYPE, dtype=np.int64),
        device_id=np.full(n, -1, dtype=np.int64),
    )
    # Columns the decoder keeps that a record has no value for are absent (-1), so all stay aligned.
    for key, chunks in raw.parts.get("instants", {}).items():
        if key not in columns and chunks:
            columns[key] = np.full(n, -1, dtype=chunks[0].dtype)
    raw.add("instants", **columns)
    raw.stats["mindspore_memory_record"] = {"rows": len(record), "kept": n}
    return n


def _next_event_id(raw: RawColumns) -> int:
    """An event id past every event of the file and every row added to it so far."""
    last = raw.num_events - 1
    for table in raw.parts.values():
        for chunk in table.get("event_id", []):
            if len(chunk):
                last = max(last, int(chunk.max()))
    return last + 1
