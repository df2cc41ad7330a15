"""A span's memory snapshot as counter tracks of the trace viewer, beside the trace's own memory counters.

When a memory snapshot that belongs to the span is parsed and both keep a wall clock, each of the snapshot's devices
with a recorded history becomes one counter track under "Memory": its *active* bytes (and its *reserved* bytes when
the snapshot knows them) as step functions, one value after each history entry (the device's bytes before the first
entry at the first entry's time), as ``views/memory_snapshot.py`` defines them. Times are the snapshot's plus
``memory_snapshot.trace_offset_us``: the one shift the Memory snapshot page's chart beside the profile uses too.
The ``trace/counters`` route down-samples them like every counter (``queries.counters``).

Track ids: ``c:snapshot:<device>`` for the span's snapshot; ``c:snapshot:<device>:<k>`` when several snapshots of
the span line up with it (``k``: the snapshot's place among them in name order; a name could hold the comma that
separates ids in a request).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence

import numpy as np

from ...model.snapshot import SnapshotModel
from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US
from ..memory_snapshot import trace_offset_us
from ..quantities.devices import device_label

TRACK_PREFIX = "c:snapshot:"
GROUP = "Memory"


class Beside(NamedTuple):
    """A parsed memory snapshot that belongs to the span: its name in the run folder and its model."""

    name: str
    model: SnapshotModel


class _LinedUp(NamedTuple):
    suffix: str  # "" for the span's one snapshot, ":<k>" when several
    name: str
    model: SnapshotModel
    offset_us: float


def _lined_up(trace: TraceModel, beside: Sequence[Beside]) -> list[_LinedUp]:
    """The snapshots whose times can be put on the trace's, in name order."""
    found = [(b, trace_offset_us(b.model, trace)) for b in sorted(beside, key=lambda b: b.name)]
    usable = [(b, offset) for b, offset in found if offset is not None]
    several = len(usable) > 1
    return [_LinedUp(f":{k}" if several else "", b.name, b.model, offset) for k, (b, offset) in enumerate(usable)]


def _devices(model: SnapshotModel) -> list[dict[str, Any]]:
    """The snapshot's devices with a history to draw (a device known from its segments only has none)."""
    return [facts for facts in model.devices if facts["rows"][1] > facts["rows"][0]]


def _series_names(model: SnapshotModel) -> list[str]:
    return ["active", "reserved"] if model.header.get("reserved_known", True) else ["active"]


def tracks(trace: TraceModel, beside: Sequence[Beside]) -> list[dict[str, Any]]:
    """The counter tracks of the span's snapshots that line up with its trace (none when none does)."""
    out: list[dict[str, Any]] = []
    for item in _lined_up(trace, beside):
        for facts in _devices(item.model):
            device = int(facts["device"])
            named = f" ({item.name})" if item.suffix else ""
            out.append({"id": f"{TRACK_PREFIX}{device}{item.suffix}",
                        "name": f"Snapshot: {device_label(trace, device)} memory{named}", "kind": "counter",
                        "group": GROUP, "unit": "bytes", "series": _series_names(item.model), "max_depth": 0})
    return out


def with_tracks(answer: dict[str, Any], trace: TraceModel, beside: Sequence[Beside]) -> dict[str, Any]:
    """A ``trace/tracks`` answer with the snapshots' tracks after its own (a new dict: the stored answer is kept)."""
    extra = tracks(trace, beside)
    return {**answer, "tracks": [*answer["tracks"], *extra]} if extra else answer


def series(trace: TraceModel, beside: Sequence[Beside], track_id: str
           ) -> Optional[tuple[object, dict[str, tuple[np.ndarray, np.ndarray]]]]:
    """The step functions of a snapshot track (times in ns on the trace's time base) and a token that stands for
    this snapshot model and shift (tiles cached under the id are told apart from a replaced snapshot's); None for
    an id that names no such track."""
    if not track_id.startswith(TRACK_PREFIX):
        return None
    device_text, _, index_text = track_id[len(TRACK_PREFIX):].partition(":")
    if not device_text.isdigit() or (index_text and not index_text.isdigit()):
        return None
    suffix = f":{int(index_text)}" if index_text else ""
    for item in _lined_up(trace, beside):
        if item.suffix != suffix:
            continue
        facts = next((f for f in _devices(item.model) if int(f["device"]) == int(device_text)), None)
        if facts is None:
            return None
        key = ("trace_counter_series", int(facts["device"]), item.offset_us)
        token = item.model.memo(("trace_counter_token", item.offset_us), object)
        return token, item.model.memo(key, lambda: _steps(item.model, facts, item.offset_us))
    return None


def _steps(model: SnapshotModel, facts: dict[str, Any], offset_us: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    lo, hi = facts["rows"]
    e = model.entries
    time_us = np.concatenate([[float(facts["start"])], e.time[lo:hi].astype(np.float64)]) + offset_us
    ts = np.round(time_us * NS_PER_US).astype(np.int64)
    base = facts["baseline"]
    out = {"active": (ts, np.concatenate([[float(base["active"])], e.active[lo:hi].astype(np.float64)]))}
    if "reserved" in _series_names(model):
        out["reserved"] = (ts, np.concatenate([[float(base["reserved"])], e.reserved[lo:hi].astype(np.float64)]))
    return out
