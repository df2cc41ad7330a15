"""A PyTorch allocator memory snapshot as columns: the model its views read, and its cache file.

``ingest/snapshot/`` reads the pickle and derives this model (``ingest/snapshot/build.py``); the parser process
writes it to the cache (``write_snapshot_model``) and the server memory-maps it (``read_snapshot_model``), as for a
trace. Nothing here keeps a Python object per trace entry or allocation. Arrays, by table (``TABLES``):

* ``entries``: one row per trace entry, in file order (grouped by device): ``action`` (``ACTIONS`` code), ``device``,
  ``addr`` (for ``oom`` the ``device_free`` it reports), ``size``, ``stream``, ``time`` (µs since the epoch as torch
  writes them, made non-decreasing per device; the entry's number within its device when the snapshot has no times:
  ``header["axis"]``), ``stack``, ``compile_context``, ``user_metadata``, ``category`` (string ids, -1 absent), and
  the device's totals after the entry: ``active`` (bytes of live allocations, alloc to ``free_completed``),
  ``allocated`` (alloc to ``free_requested``) and ``reserved`` (segments mapped).
* ``frames`` (``file``, ``line``, ``name`` string ids, ``kind`` of ``FRAME_KINDS``) and ``stacks`` (``offsets``
  into ``stack_frames``, innermost frame first, and the ``site`` frame of each stack: see ``ingest/snapshot/sites``).
* ``allocs``: one row per allocation's life: ``device``, ``addr``, ``size`` (requested bytes, as the trace entries
  give them), ``stream``, ``stack``, ``site``, ``category``, ``start``/``end``/``freed`` (entry rows of its
  ``alloc``, ``free_completed`` and ``free_requested``; -1 when before the recorded history or not yet), ``flags``.
* ``segments`` and ``blocks``: the allocator's state when the snapshot was taken, as the snapshot states it.
* ``annotations``: ``external_annotations`` (``record_function`` ranges), by device and time.
* ``site_series``: for each device, the live bytes of its largest allocation sites over the entries (the timeline's
  bands), as cumulative steps.

The header holds the strings, per-device facts (entry rows, peak, baselines), the allocator settings and notes.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Optional

import numpy as np

from .array_file import CacheWriteError, check_array, read_arrays, write_arrays
from .trace_model import DamagedModel

# Bump whenever the snapshot model's columns or their meaning change: old cache entries are then ignored.
SNAPSHOT_FORMAT_VERSION = 1

# Trace entry actions, in torch's TraceEntry order ("annotate" as an action where a version writes it as one).
ACTIONS = ("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
           "segment_unmap", "snapshot", "oom", "annotate")
ALLOC, FREE_REQUESTED, FREE_COMPLETED, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP, SNAPSHOT, OOM, \
    ANNOTATE = range(len(ACTIONS))
OTHER_ACTION = 255
MISSING_TIME = int(np.iinfo(np.int64).min)

# Block states of the snapshot's segments.
BLOCK_STATES = ("active_allocated", "active_pending_free", "inactive")
# What a frame is: code of the user's, Python of a library (torch, the standard library, site-packages), C++.
FRAME_KINDS = ("user", "python", "cpp")
USER_FRAME, PYTHON_FRAME, CPP_FRAME = range(len(FRAME_KINDS))

# Allocation flags.
BEFORE_HISTORY = 1  # allocated before the recorded history began (its alloc entry is not in the snapshot)
ALIVE_AT_END = 2  # not freed when the snapshot was taken
ENDED_BY_REUSE = 4  # its free is not in the history: it ends where its address is allocated again
FROM_SEGMENTS = 8  # known from the snapshot's segments only (no trace entry at all)
STACK_OF_FREE = 16  # the stack is the free's (the alloc was not recorded)
FREED_BEFORE_HISTORY = 32  # its free_requested came before the history began: active, no longer allocated

TABLES: dict[str, tuple[str, ...]] = {
    "entries": ("action", "device", "addr", "size", "stream", "time", "stack", "compile_context", "user_metadata",
                "category", "active", "allocated", "reserved"),
    "frames": ("file", "line", "name", "kind"),
    "stacks": ("offsets", "frames", "site"),
    "allocs": ("device", "addr", "size", "stream", "stack", "site", "category", "start", "end", "freed", "flags"),
    "segments": ("device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
                 "is_large", "is_expandable", "pool0", "pool1", "stack", "first_block"),
    "blocks": ("segment", "address", "size", "requested_size", "state", "stack"),
    "annotations": ("device", "time", "stage", "name"),
    "site_series": ("device", "site", "offsets", "position", "value"),
}
_CHECK_LOCK = threading.Lock()


class Table:
    """Named arrays of one table; each array read from the cache is checked against its checksum on first use."""

    def __init__(self, arrays: dict[str, np.ndarray], check: Optional[Callable[[str, np.ndarray], None]] = None,
                 prefix: str = "") -> None:
        self._arrays = arrays
        self._check = check
        self._prefix = prefix
        self._checked: set[str] = set()

    def __getattr__(self, name: str) -> np.ndarray:
        arrays = self.__dict__.get("_arrays")
        if arrays is None or name not in arrays:
            raise AttributeError(name)
        array = arrays[name]
        if self._check is not None and name not in self._checked:
            with _CHECK_LOCK:
                if name not in self._checked:
                    self._check(self._prefix + name, array)  # raises DamagedModel
                    self._checked.add(name)
        return array

    def __len__(self) -> int:
        first = next(iter(self._arrays.values()), None)
        return 0 if first is None else int(len(first))


class SnapshotModel:
    """One memory snapshot (see the module docstring). ``header`` is JSON-able; tables hold the arrays."""

    def __init__(self, header: dict[str, Any], arrays: dict[str, np.ndarray], cache_path: Optional[str] = None,
                 check: Optional[Callable[[str, np.ndarray], None]] = None) -> None:
        self.header = header
        self.strings: list[str] = header["strings"]
        self.cache_path = cache_path
        self.damage: dict[str, str] = {}
        for table, names in TABLES.items():
            setattr(self, table, Table({name: arrays[f"{table}.{name}"] for name in names}, check, f"{table}."))
        self._memo: dict[Any, Any] = {}
        self._memo_lock = threading.Lock()

    entries: Table
    frames: Table
    stacks: Table
    allocs: Table
    segments: Table
    blocks: Table
    annotations: Table
    site_series: Table

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per model and key (analyses are pure)."""
        try:
            return self._memo[key]
        except KeyError:
            value = compute()
            with self._memo_lock:
                return self._memo.setdefault(key, value)

    def text(self, string_id: int) -> Optional[str]:
        return self.strings[string_id] if 0 <= string_id < len(self.strings) else None

    @property
    def devices(self) -> list[dict[str, Any]]:
        """Per device: ``device``, ``rows`` ([first, end) of its entries), peaks and baselines (see build.py)."""
        devices: list[dict[str, Any]] = self.header["devices"]
        return devices

    def device(self, device: int) -> Optional[dict[str, Any]]:
        return next((d for d in self.devices if d["device"] == device), None)


def arrays_of(tables: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The flat ``table.column`` names a model file stores, checked against ``TABLES``."""
    flat: dict[str, np.ndarray] = {}
    for table, names in TABLES.items():
        columns = tables[table]
        if set(columns) != set(names):
            raise ValueError(f"table {table} has columns {sorted(columns)}, expected {sorted(names)}")
        for name in names:
            flat[f"{table}.{name}"] = columns[name]
    return flat


def write_snapshot_model(path: str, model: SnapshotModel, arrays: dict[str, np.ndarray], publish: bool = True) -> str:
    """Write a snapshot model (its header and flat arrays) to ``path`` atomically; CacheWriteError when it cannot."""
    header = {**model.header, "kind": "memory_snapshot", "snapshot_format": SNAPSHOT_FORMAT_VERSION}
    return write_arrays(path, header, arrays, publish=publish)


def read_snapshot_model(path: str) -> SnapshotModel:
    """Memory-map a snapshot model written by ``write_snapshot_model``; ValueError when it is none of this version.
    Each array is checked against its checksum when first used: on a mismatch the file is removed and DamagedModel
    raised (the snapshot is parsed again)."""
    header, arrays = read_arrays(path)
    if header.get("kind") != "memory_snapshot" or header.get("snapshot_format") != SNAPSHOT_FORMAT_VERSION:
        raise ValueError("not a memory snapshot model of this version")
    checksums = header.pop("checksums")
    damage: dict[str, str] = {}

    def check(name: str, array: np.ndarray) -> None:
        try:
            check_array(array, checksums.get(name), f"the cached column {name}")
        except DamagedModel as exc:
            damage.setdefault("reason", str(exc))
            try:
                os.unlink(path)
            except OSError:
                pass
            raise

    model = SnapshotModel(header, arrays, cache_path=path, check=check)
    model.damage = damage
    return model


__all__ = ["CacheWriteError", "SnapshotModel", "read_snapshot_model", "write_snapshot_model"]
