"""The trace model: one profiled span of one worker, as immutable columnar arrays.

Every event kind lives in a table of numpy columns (one array per field, one row per
event); strings are interned once into ``TraceModel.strings`` and columns hold their
integer ids. Times are integer nanoseconds in the trace's own time base (the ``ts``
of the file times 1000), so arithmetic is exact; routes convert to microseconds.

Missing values: ``-1`` in integer id/number columns, ``NaN`` in float columns.
Nothing here keeps a Python object per event.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

import numpy as np

NO_ID = -1


class DamagedModel(Exception):
    """Bytes of a cached model do not match the checksum written with them: the model must be parsed again."""


_CHECK_LOCK = threading.Lock()


class _Table:
    """Base of the tables. The arrays of a model read from the cache are memory-mapped; each is
    checked against its checksum when it is first used (``check_lazily``), so that opening a
    model reads nothing, and a view never computes on bytes that changed on disk."""

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if name[0] != "_":
            unchecked = object.__getattribute__(self, "__dict__").get("_unchecked")
            if unchecked and name in unchecked:
                with _CHECK_LOCK:
                    check = unchecked.get(name)
                    if check is not None:
                        check(value)  # raises DamagedModel
                        del unchecked[name]
        return value

    def check_lazily(self, checks: dict[str, Callable[[np.ndarray], None]]) -> None:
        """Run ``checks[name](array)`` before ``name`` is first handed out (it raises DamagedModel on a mismatch)."""
        object.__setattr__(self, "_unchecked", dict(checks))


def _table_len(table: Any) -> int:
    first = dataclasses.fields(table)[0]
    return int(len(getattr(table, first.name)))


@dataclass(frozen=True)
class SliceTable(_Table):
    """Complete events (``ph: X``), sorted by (track, start, longest first).

    Nesting is per track: ``depth`` 0 is top level and ``parent`` is the row of the
    innermost enclosing slice on the same track (or -1).
    """

    event_id: np.ndarray  # int64: index of the event in the file's traceEvents (stable id)
    track: np.ndarray  # int32: row in TraceModel.tracks
    start: np.ndarray  # int64 ns
    dur: np.ndarray  # int64 ns (>= 0)
    name: np.ndarray  # int32 string id
    cat: np.ndarray  # int32 string id
    depth: np.ndarray  # int16
    parent: np.ndarray  # int32 row or -1
    external_id: np.ndarray  # int64: args "External id" / "external id"
    correlation: np.ndarray  # int64: args "correlation" (runtime call <-> device activity)
    # Operator arguments (cpu ops); string ids hold the raw JSON of the arg.
    input_dims: np.ndarray  # int32 string id
    input_type: np.ndarray  # int32 string id
    concrete_inputs: np.ndarray  # int32 string id: "Concrete Inputs" (values of the non-tensor arguments)
    call_stack: np.ndarray  # int32 string id
    sequence: np.ndarray  # int64: "Sequence number" (forward/backward pairing)
    python_id: np.ndarray  # int64: "Python id" (python_function events)
    python_parent_id: np.ndarray  # int64
    # Device activity arguments (kernels, memcpy, memset).
    device: np.ndarray  # int32
    stream: np.ndarray  # int64
    grid: np.ndarray  # int32 string id (raw JSON of [x, y, z])
    block: np.ndarray  # int32 string id
    blocks_per_sm: np.ndarray  # float32
    warps_per_sm: np.ndarray  # float32
    occupancy: np.ndarray  # float32: "est. achieved occupancy %"
    nbytes: np.ndarray  # int64: memcpy/memset "bytes"
    # Communication arguments (record_param_comms and friends).
    collective: np.ndarray  # int32 string id: "Collective name"
    in_msg_nelems: np.ndarray  # int64
    out_msg_nelems: np.ndarray  # int64
    dtype: np.ndarray  # int32 string id
    group_size: np.ndarray  # int32
    process_group: np.ndarray  # int32 string id: "Process Group Name"
    collective_seq: np.ndarray  # int64: "Seq", the collective's number within its process group

    def __len__(self) -> int:
        return _table_len(self)

    @property
    def end(self) -> np.ndarray:
        return self.start + self.dur

    def end_at(self, rows: Any) -> np.ndarray:
        """``end[rows]`` without the ends of every slice (rows: indices, a mask or one index)."""
        return self.start[rows] + self.dur[rows]


@dataclass(frozen=True)
class InstantTable(_Table):
    """Instant events (``ph: i`` / ``I``), in file order; ``[memory]`` events carry the memory columns."""

    event_id: np.ndarray  # int64
    track: np.ndarray  # int32
    ts: np.ndarray  # int64 ns
    name: np.ndarray  # int32
    cat: np.ndarray  # int32
    addr: np.ndarray  # int64 "Addr"
    bytes: np.ndarray  # int64 "Bytes" (negative = free)
    total_allocated: np.ndarray  # int64
    total_reserved: np.ndarray  # int64
    device_type: np.ndarray  # int16 "Device Type" (0 = CPU, 1 = CUDA, ...)
    device_id: np.ndarray  # int16 "Device Id"

    def __len__(self) -> int:
        return _table_len(self)


@dataclass(frozen=True)
class CounterTable(_Table):
    """Counter samples (``ph: C``), one row per (event, series), in file order."""

    event_id: np.ndarray  # int64
    track: np.ndarray  # int32 (the counter's process track)
    ts: np.ndarray  # int64 ns
    name: np.ndarray  # int32: the counter event's name
    series: np.ndarray  # int32: the args key
    value: np.ndarray  # float64

    def __len__(self) -> int:
        return _table_len(self)


@dataclass(frozen=True)
class FlowTable(_Table):
    """Flows resolved to slices: one row per arrow (``ac2g`` launch → kernel, ``fwdbwd``, ...)."""

    cat: np.ndarray  # int32 string id
    src: np.ndarray  # int32 slice row (or -1 when unresolved)
    dst: np.ndarray  # int32 slice row (or -1)
    src_ts: np.ndarray  # int64 ns
    dst_ts: np.ndarray  # int64 ns

    def __len__(self) -> int:
        return _table_len(self)


@dataclass(frozen=True)
class LinkTable(_Table):
    """Derived links per slice row: who launched a device activity, and from which operator."""

    launcher: np.ndarray  # int32: for a device activity, the runtime/driver call's row (by correlation)
    op: np.ndarray  # int32: for a device activity or runtime call, the operator's row (by External id)

    def __len__(self) -> int:
        return _table_len(self)


@dataclass(frozen=True)
class StepTable(_Table):
    """Training steps from ``ProfilerStep#N`` host ranges (GPU-side copies are not steps)."""

    number: np.ndarray  # int64: N
    name: np.ndarray  # int32 string id
    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns
    slice_row: np.ndarray  # int32 row of the host range

    def __len__(self) -> int:
        return _table_len(self)


@dataclass(frozen=True)
class Track:
    """A row of the timeline: a CPU thread, a GPU stream, or another lane of the trace."""

    id: int
    pid: str
    tid: str
    kind: str  # "cpu" | "gpu" | "other"
    process_name: str
    thread_name: str
    process_sort: int
    thread_sort: int
    device: Optional[int]  # GPU device index for gpu tracks
    max_depth: int


@dataclass(frozen=True)
class TraceModel:
    """One parsed span. Immutable; analyses are pure functions of it."""

    strings: list[str]
    tracks: list[Track]
    slices: SliceTable
    instants: InstantTable
    counters: CounterTable
    flows: FlowTable
    links: LinkTable
    steps: StepTable
    # Top-level trace metadata: deviceProperties, distributedInfo, baseTimeNanoseconds, ...
    metadata: dict[str, Any]
    # Parse statistics: events per phase, unknown categories and phases, skipped events.
    stats: dict[str, Any]
    framework: str = "pytorch"
    num_events: int = 0
    # Time range of the span (ns), over all timed events.
    start: int = 0
    end: int = 0
    # Texts longer than interning.MAX_TEXT_CHARS whole, by string id (``strings`` holds them cut): the text, or
    # (read from a cache file) a function that reads it from there.
    long_texts: dict[int, Union[str, Callable[[], str]]] = field(default_factory=dict, repr=False, compare=False)
    # The cache file this model was read from, when it was: derived structures are kept beside it.
    cache_path: Optional[str] = field(default=None, repr=False, compare=False)
    # Set by a failed checksum of its cache file (see _Table): the span must be parsed again.
    damage: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    # False for a model read from a pack in someone's logdir: nothing is written beside it, nothing removed.
    writable: bool = field(default=True, repr=False, compare=False)
    _string_ids: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def memo(self, key: Any, compute: Any) -> Any:
        """``compute()`` once per model and key: analyses are pure, so their results are reused."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute()
            return value

    def full_text(self, string_id: int) -> str:
        """The whole text of an interned string: as ``strings`` has it, unless it was cut there for its length."""
        whole = self.long_texts.get(string_id)
        if whole is None:
            return self.strings[string_id]
        return whole if isinstance(whole, str) else whole()

    def string_id(self, text: str) -> int:
        """Id of an interned string, or -1 when the trace never mentions it."""
        if not self._string_ids:
            self._string_ids.update((s, i) for i, s in enumerate(self.strings))
        return self._string_ids.get(text, NO_ID)

    def string_ids_where(self, predicate: Any) -> np.ndarray:
        """Ids of the interned strings for which ``predicate(text)`` holds (a boolean lookup table)."""
        return np.fromiter((bool(predicate(s)) for s in self.strings), dtype=bool, count=len(self.strings))


TABLE_TYPES = {
    "slices": SliceTable,
    "instants": InstantTable,
    "counters": CounterTable,
    "flows": FlowTable,
    "links": LinkTable,
    "steps": StepTable,
}
