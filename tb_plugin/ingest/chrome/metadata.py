"""A trace's top-level values (``deviceProperties``, ``distributedInfo``, ``baseTimeNanoseconds``) checked once
at load: the views then rely on their types. A trace is anyone's file: what has the wrong type is dropped,
with a note for the span's limitations, and the rest of the trace loads."""

from __future__ import annotations

import math
from typing import Any

_INT64 = 2**63


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -_INT64 <= value < _INT64


def _number(value: Any) -> bool:
    return _integer(value) or (isinstance(value, float) and math.isfinite(value))


def _device(entry: Any) -> tuple[dict[str, Any] | None, bool]:
    """A deviceProperties entry with its id an integer, its name text and every other value a number
    (Kineto writes numbers only); (None, True) when the entry is unusable, (entry, dropped something)."""
    if not isinstance(entry, dict) or not _integer(entry.get("id", 0)):
        return None, True
    kept = {key: value for key, value in entry.items()
            if (isinstance(value, str) if key == "name" else _number(value))}
    return kept, len(kept) != len(entry)


def _distributed(info: Any) -> tuple[dict[str, Any] | None, bool]:
    if not isinstance(info, dict):
        return None, True
    checks = {"rank": _integer, "world_size": _integer, "backend": lambda v: isinstance(v, str)}
    kept = {key: value for key, value in info.items()
            if checks.get(key, lambda v: isinstance(v, (str, int, float, bool)) or v is None)(value)}
    return kept, len(kept) != len(info)


def checked_metadata(metadata: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """``metadata`` with the values the views read checked; a note in ``notes`` for each key that lost something."""
    out = dict(metadata)
    if "deviceProperties" in out:
        value = out["deviceProperties"]
        devices, dropped = [], not isinstance(value, list)
        for entry in value if isinstance(value, list) else []:
            kept, lost = _device(entry)
            dropped |= lost
            if kept is not None:
                devices.append(kept)
        out["deviceProperties"] = devices
        if dropped:
            notes.append("deviceProperties holds values of the wrong type: they were left out of the device summary.")
    if "distributedInfo" in out:
        info, dropped = _distributed(out["distributedInfo"])
        if info is None:
            del out["distributedInfo"]
        else:
            out["distributedInfo"] = info
        if dropped:
            notes.append("distributedInfo holds values of the wrong type (rank, world_size must be integers): "
                         "they were left out.")
    if "baseTimeNanoseconds" in out and not _integer(out["baseTimeNanoseconds"]):
        del out["baseTimeNanoseconds"]
        notes.append("baseTimeNanoseconds is not an integer: left out.")
    return out
