"""Bandwidth of copies and memsets on the device, per direction: host to device, device to host, device to device,
peer to peer (between devices), memset.

A copy's bandwidth is its ``bytes`` argument (Kineto's, on each ``gpu_memcpy``/``gpu_memset`` record) over its
duration; a direction's bandwidth is the bytes of its copies that recorded them over their time. Beside each, the
peak of the link it crosses where the device table gives it (``device_peaks.py``): one direction of PCIe for host
copies, of the peer links (NVLink, Infinity Fabric) for peer copies, and the device's memory bandwidth for copies
and memsets within one device (a device-to-device copy reads and writes each byte: half the memory bandwidth is its
ceiling, as said beside it).
"""

from __future__ import annotations

import re
from typing import Any, Optional

import numpy as np

from ...model.categories import SliceKinds
from ...model.trace_model import TraceModel
from .device_peaks import DevicePeaks

from ...model.units import NS_PER_US  # noqa: E402
DIRECTIONS = ("h2d", "d2h", "d2d", "p2p", "memset", "other")
LABELS = {"h2d": "Host to device", "d2h": "Device to host", "d2d": "Device to device", "p2p": "Peer to peer",
          "memset": "Memset", "other": "Other copies"}
# Calls listed one by one (for the chart over time): the largest ones.
CALL_LIMIT = 2000
_DIRECTION = (
    (re.compile(r"HtoD|H2D|HostToDevice", re.IGNORECASE), "h2d"),
    (re.compile(r"DtoH|D2H|DeviceToHost", re.IGNORECASE), "d2h"),
    (re.compile(r"PtoP|P2P|PeerToPeer", re.IGNORECASE), "p2p"),
    (re.compile(r"DtoD|D2D|DeviceToDevice", re.IGNORECASE), "d2d"),
)


def direction(name: str, memset: bool) -> str:
    if memset:
        return "memset"
    for pattern, key in _DIRECTION:
        if pattern.search(name):
            return key
    return "other"


def copy_call(model: TraceModel, row: int) -> Optional[dict[str, Any]]:
    """One copy's or memset's direction and bandwidth (its bytes over its duration), for the trace's event details;
    None for a slice that is neither."""
    kinds = SliceKinds(model)
    memset = bool(kinds.memset[row])
    if not (memset or kinds.memcpy[row]):
        return None
    s = model.slices
    key = direction(model.strings[int(s.name[row])], memset)
    nbytes, dur = int(s.nbytes[row]), int(s.dur[row])
    return {"kind": "copy", "label": LABELS[key], "bytes": nbytes if nbytes >= 0 else None, "group_size": None,
            "bandwidth": nbytes / (dur / 1e9) if nbytes >= 0 and dur > 0 else None, "bus_bandwidth": None,
            "note": "The copy's bytes over its duration; the Roofline page holds each direction against its link's "
                    "peak."}


def copy_summary(model: TraceModel) -> dict[str, Any]:
    """The peak-free half (stored with the model in the work summary): per direction calls, bytes, time (µs),
    bandwidth (bytes/s) with the median per call; the largest calls (start µs, duration µs, bytes, direction)."""
    s = model.slices
    kinds = SliceKinds(model)
    rows = np.flatnonzero(kinds.memcpy | kinds.memset)
    distinct = np.unique(s.name[rows]) if len(rows) else np.zeros(0, dtype=np.int64)
    table = np.zeros(len(model.strings), dtype=np.int64)
    table[distinct] = [DIRECTIONS.index(direction(model.strings[int(n)], False)) for n in distinct.tolist()]
    which = np.where(kinds.memset[rows], DIRECTIONS.index("memset"), table[s.name[rows]])
    nbytes, dur = s.nbytes[rows], s.dur[rows]
    out = []
    for code, key in enumerate(DIRECTIONS):
        sel = which == code
        if not sel.any():
            continue
        known = sel & (nbytes >= 0) & (dur > 0)
        bandwidth = float(nbytes[known].sum() / (dur[known].sum() / 1e9)) if known.any() else None
        per_call = nbytes[known] / (dur[known] / 1e9)
        out.append({"direction": key, "label": LABELS[key], "calls": int(sel.sum()),
                    "calls_with_bytes": int(known.sum()), "bytes": int(nbytes[known].sum()),
                    "time": float(dur[sel].sum()) / NS_PER_US, "bandwidth": bandwidth,
                    "bandwidth_median": float(np.median(per_call)) if len(per_call) else None})
    largest = np.argsort(-np.where(nbytes >= 0, nbytes, -1), kind="stable")[:CALL_LIMIT]
    largest = largest[np.argsort(s.start[rows][largest], kind="stable")]
    return {
        "directions": out,
        "calls": {"start": (s.start[rows][largest] / NS_PER_US).tolist(),
                  "dur": (dur[largest] / NS_PER_US).tolist(), "bytes": nbytes[largest].tolist(),
                  "direction": [DIRECTIONS[int(c)] for c in which[largest]]},
        "listed_calls": int(len(largest)),
        "total_calls": int(len(rows)),
    }


def copies(summary: dict[str, Any], peaks: Optional[DevicePeaks]) -> dict[str, Any]:
    """``copy_summary`` with the peak of the link each direction crosses (bytes/s, one direction; ``peaks``: those
    of the span's device) and the share of it reached."""
    directions = []
    for entry in summary["directions"]:
        peak, link = _peak(entry["direction"], peaks)
        bandwidth = entry["bandwidth"]
        directions.append(dict(entry, peak=peak, link=link,
                               peak_share=bandwidth / peak if bandwidth is not None and peak else None))
    return dict(summary, directions=directions)


def _peak(key: str, peaks: Optional[DevicePeaks]) -> tuple[Optional[float], str]:
    """The peak of the link a copy of direction ``key`` crosses (bytes/s, one direction), and what it is."""
    if peaks is None:
        return None, "no device peaks for this device"
    if key in ("h2d", "d2h"):
        return peaks.host_link_bytes_per_second, f"{peaks.host_link}, one direction" if peaks.host_link else \
            "no host link in the table"
    if key == "p2p":
        return peaks.peer_link_bytes_per_second, "peer links, one direction" if peaks.peer_link_gbps else \
            "no peer link in the table"
    if key == "d2d":
        bandwidth = peaks.memory_bytes_per_second
        return (bandwidth / 2 if bandwidth else None), "half the memory bandwidth (each byte read and written)"
    if key == "memset":
        return peaks.memory_bytes_per_second, "memory bandwidth"
    return None, ""
