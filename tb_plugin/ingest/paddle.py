"""PaddlePaddle's Chrome trace (``paddle.profiler`` ``export_chrome_tracing``) → the model's conventions.

Paddle writes a Kineto-like Chrome trace, so ``chrome/decode.py`` decodes it; this module then
normalises the decoded columns (``normalise``), before ``model.build`` sees them:

* Names: every ``X`` event name ends with its duration (``"conv2d dygraph[1.234 ms]"``). The
  decoration is stripped once per distinct interned string, and the name columns are remapped
  with one array lookup — never per event in Python.
* Times: ``ts`` is integer epoch µs, but ``args.start_time`` (relative to the profiler's start)
  keeps sub-µs precision. Rounded starts break nesting (a child that starts 0.3 µs after its
  parent would seem to outlive it), so starts are rebuilt from the precise relative times.
* Categories are kept as Paddle names them (``Operator``, ``OperatorInner``, ``ProfileStep``,
  ``Dataloader``, ``Forward``...): ``model/categories.py`` classifies them (``PADDLE_*`` sets),
  so the trace view still shows Paddle's own terms.
* ``ProfileStep#N`` are steps (``model/build.py`` accepts both spellings).
* Threads: tids are strings such as ``"123(Python)"``; each is its own track, named by Paddle's
  ``thread_name`` metadata (``"thread 123:MainThread(Python)"``).
* The trailing ``{}`` element of ``traceEvents`` is counted as ``empty_events``, not as a skipped phase.
* ``[memory]`` instants (categories ``Allocate``/``Free``) carry ``addr`` (a decimal string),
  ``increase_bytes``, ``current_allocated``/``current_reserved`` and ``place``: ``memory_columns``
  maps them onto the memory columns torch's events fill (``Addr``, ``Bytes``, ``Total Allocated``...).
"""

from __future__ import annotations

import re
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    from ..model.raw_columns import RawColumns

# "conv2d dygraph[1.234 ms]" → "conv2d dygraph"; Paddle prints ns/us/ms/s.
_DURATION_SUFFIX = re.compile(r"\[\d+(?:\.\d+)?\s*(?:ns|us|ms|s)\]$")
# "Place(gpu:0)" / "Place(cpu)" / "Place(gpu_pinned)"
_PLACE = re.compile(r"^Place\((?P<kind>[a-z_]+)(?::(?P<index>\d+))?\)$")
# Device types as torch's memory events number them (views/memory.py names them).
_DEVICE_TYPE = {"cpu": 0, "gpu_pinned": 0, "gpu": 1, "xpu": 12}
_PRIVATE_USE = 20  # custom devices (npu, mlu...)
# Paddle's event categories (its TracerEventType names and the memory events'): known, not "unknown" in the stats.
PADDLE_CATEGORIES = frozenset(
    {"Operator", "Dataloader", "ProfileStep", "CudaRuntime", "Kernel", "Memcpy", "Memset", "UserDefined",
     "OperatorInner", "Forward", "Backward", "Optimization", "Communication", "PythonOp", "PythonUserDefined",
     "DygraphKernelLaunch", "StaticKernelLaunch", "MluRuntime", "CustomRuntime", "Allocate", "Free",
     "ReservedAllocate", "ReservedFree"}
)


def strip_duration(name: str) -> str:
    return _DURATION_SUFFIX.sub("", name)


@lru_cache(maxsize=256)
def device_of_place(place: str) -> tuple[int, int]:
    """``"Place(gpu:0)"`` → (device type, device index); the CPU has index -1."""
    m = _PLACE.match(place)
    if not m:
        return 0, -1
    kind = m["kind"]
    return _DEVICE_TYPE.get(kind, _PRIVATE_USE), int(m["index"]) if m["index"] is not None else -1


def memory_columns(args: Sequence[Any]) -> dict[str, np.ndarray]:
    """Paddle's ``[memory]`` arguments → the instants' memory columns (one entry per event)."""
    n = len(args)

    def ints(values: Any) -> np.ndarray:
        out = np.fromiter((_as_int(v) for v in values), dtype=np.float64, count=n)
        return np.where(np.isfinite(out), out, -1).astype(np.int64)

    devices = [device_of_place(a.place) for a in args]
    return {
        "addr": ints(map(attrgetter("paddle_addr"), args)),
        "bytes": np.fromiter(map(attrgetter("increase_bytes"), args), dtype=np.int64, count=n),
        "total_allocated": np.fromiter(map(attrgetter("current_allocated"), args), dtype=np.int64, count=n),
        "total_reserved": np.fromiter(map(attrgetter("current_reserved"), args), dtype=np.int64, count=n),
        "device_type": np.fromiter((d[0] for d in devices), dtype=np.int64, count=n),
        "device_id": np.fromiter((d[1] for d in devices), dtype=np.int64, count=n),
    }


def _as_int(value: Any) -> float:
    """An address given as an int or a decimal string; NaN when it is neither (or does not fit int64)."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return float("nan")
    return float(number) if 0 <= number < 2**53 else float("nan")


def normalise(raw: RawColumns) -> None:
    """Apply Paddle's conventions to freshly decoded columns, in place (see the module docstring)."""
    _strip_names(raw)
    _precise_starts(raw)
    unknown = raw.stats.get("unknown_categories", {})
    for category in PADDLE_CATEGORIES:
        unknown.pop(category, None)
    empty = raw.stats.get("skipped_phases", {}).pop("", 0)
    if empty:
        raw.stats.get("phases", {}).pop("", None)
        raw.stats["empty_events"] = empty


def _strip_names(raw: RawColumns) -> None:
    chunks = raw.parts.get("slices", {}).get("name", [])
    if not chunks:
        return
    strings = raw.strings
    used = np.unique(np.concatenate(chunks))
    remap = np.arange(len(strings.strings), dtype=np.int32)
    for name_id in used.tolist():  # once per distinct name
        text = strings.strings[name_id]
        stripped = strip_duration(text)
        if stripped != text:
            remap[name_id] = strings[stripped]
    for i, chunk in enumerate(chunks):
        chunks[i] = remap[chunk]


def _precise_starts(raw: RawColumns) -> None:
    store = raw.parts.get("slices", {})
    relative = store.pop("relative_start_us", [])
    starts = store.get("start", [])
    if not relative or len(relative) != len(starts):
        return
    relative_ns = [np.rint(r * 1000.0) for r in relative]
    # ts = the profiler's epoch start + start_time, cut to whole µs: the smallest difference is that start.
    offsets = [s[np.isfinite(r)] - r[np.isfinite(r)].astype(np.int64) for s, r in zip(starts, relative_ns)]
    offsets = [o for o in offsets if len(o)]
    if not offsets:
        return
    base = int(min(o.min() for o in offsets))
    for i, (s, r) in enumerate(zip(starts, relative_ns)):
        known = np.isfinite(r)
        fixed = s.copy()
        fixed[known] = base + r[known].astype(np.int64)
        starts[i] = fixed
