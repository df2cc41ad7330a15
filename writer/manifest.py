"""The per-span manifest: a small JSON file written after the span's trace.

Its presence marks the span complete. Schema (format 1)::

    {
      "format": 1,                      # bumped on incompatible changes
      "worker": "rank0",                # as in the file names (layout.safe_component)
      "span": "1795303442092317655",    # as in the file names; time_ns of the export
      "framework": "pytorch",           # [a-z0-9_]+, also in the trace file's name
      "framework_version": "2.13.0",    # or null when unknown (imported files)
      "profscope_version": "0.1.0",
      "trace_file": "rank0.1795303442092317655.pytorch.trace.json.gz",  # beside the manifest
      "wall_time": 1763769600.123,      # epoch seconds of the export
      "step_range": [2, 4],             # first and last profiler step in the trace, or null
      "batch_size": 32,                 # samples per step, or null
      "samples": 96,                    # batch_size x steps in step_range, or null
      "tags": {"lr": 0.01},             # user tags: str -> str | int | float
      "cpu_utilization": {...}          # host CPU over the span (writer spans; see below), or absent
    }

Imported files may also carry ``"source_file"``: the base name of the imported file.

``cpu_utilization`` (``profscope.writer.cpu_sampler``)::

    {
      "source": "proc_stat",            # or "process_time": no system figure on this OS
      "cpu_count": 8,
      "interval": 0.1,                  # s between readings
      "start": 1763769600.0, "duration": 1.5,   # the window summarised: epoch s, s
      "process": 0.93, "process_max": 1.6,      # this process's CPU time / elapsed (1.0 = one CPU)
      "system": 0.41, "system_max": 0.55,       # busy share of all CPUs, 0..1; null without /proc/stat
      "samples": {"time": [...], "process": [...], "system": [...] | null}
    }

``samples`` holds at most 120 intervals (merged exactly when there were more readings), each
at the time it starts (s from ``start``; it lasts until the next one, the last one until
``duration``). The window is the profiler's own recording window when it says (torch), else
from the trace's first event (Paddle), else since the previous span.
Readers must ignore keys they do not know.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

MANIFEST_FORMAT = 1

TagValue = Union[str, int, float]

_FRAMEWORK = re.compile(r"^[a-z0-9_]+$")


def check_framework(framework: str) -> str:
    """A framework name is a lowercase identifier; it becomes part of a file name."""
    if not isinstance(framework, str) or not _FRAMEWORK.match(framework):
        raise ValueError(f"framework must match [a-z0-9_]+, got {framework!r}")
    return framework


def _is_tag_value(value: object) -> bool:
    if isinstance(value, bool):  # a bool is an int in Python, but not in the schema
        return False
    if isinstance(value, float):
        return math.isfinite(value)  # JSON has no NaN or Infinity
    return isinstance(value, (str, int))


def check_tags(tags: Mapping[str, Any]) -> dict[str, TagValue]:
    """Validate user tags when they are given, so that mistakes surface early."""
    checked: dict[str, TagValue] = {}
    for key, value in tags.items():
        if not isinstance(key, str):
            raise TypeError(f"tag names must be strings, got {key!r}")
        if not _is_tag_value(value):
            raise TypeError(f"tag {key!r} must be a str, int or finite float, got {value!r}")
        checked[key] = value
    return checked


def coerce_tags(tags: Mapping[Any, Any]) -> dict[str, TagValue]:
    """Tags as written at span time: a bad value becomes its ``str()`` with a warning.

    Tags can be edited as a plain dict between spans; failing the span (and maybe the
    training job) over a tag would be worse than writing it as text.
    """
    coerced: dict[str, TagValue] = {}
    for key, value in tags.items():
        if _is_tag_value(value) and isinstance(key, str):
            coerced[key] = value
        else:
            warnings.warn(f"profscope: tag {key!r}={value!r} is not a str, int or finite float; written as text")
            coerced[str(key)] = str(value)
    return coerced


def check_batch_size(batch_size: Optional[int]) -> Optional[int]:
    if batch_size is None:
        return None
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive int or None, got {batch_size!r}")
    return batch_size


@dataclass(frozen=True)
class Manifest:
    worker: str
    span: str
    framework: str
    framework_version: Optional[str]
    profscope_version: str
    trace_file: str
    wall_time: float
    step_range: Optional[tuple[int, int]] = None
    batch_size: Optional[int] = None
    tags: dict[str, TagValue] = field(default_factory=dict)
    source_file: Optional[str] = None  # imported files only
    cpu_utilization: Optional[dict[str, Any]] = None  # writer spans with CPU sampling on

    @property
    def samples(self) -> Optional[int]:
        if self.batch_size is None or self.step_range is None:
            return None
        first, last = self.step_range
        return self.batch_size * (last - first + 1)

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "format": MANIFEST_FORMAT,
            "worker": self.worker,
            "span": self.span,
            "framework": self.framework,
            "framework_version": self.framework_version,
            "profscope_version": self.profscope_version,
            "trace_file": self.trace_file,
            "wall_time": self.wall_time,
            "step_range": list(self.step_range) if self.step_range is not None else None,
            "batch_size": self.batch_size,
            "samples": self.samples,
            "tags": dict(self.tags),
        }
        if self.source_file is not None:
            document["source_file"] = self.source_file
        if self.cpu_utilization is not None:
            document["cpu_utilization"] = self.cpu_utilization
        return document

    def to_json_bytes(self) -> bytes:
        return (json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n").encode("utf-8")


def parse_manifest(data: bytes) -> Manifest:
    """Read a manifest written by any format-1 writer; ``ValueError`` if it is not one."""
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"manifest is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise ValueError("manifest is not a JSON object")
    if document.get("format") != MANIFEST_FORMAT:
        raise ValueError(f"unsupported manifest format {document.get('format')!r}")

    def text(key: str) -> str:
        value = document.get(key)
        if not isinstance(value, str):
            raise ValueError(f"manifest field {key!r} must be a string")
        return value

    def optional_text(key: str) -> Optional[str]:
        return None if document.get(key) is None else text(key)

    wall_time = document.get("wall_time")
    if isinstance(wall_time, bool) or not isinstance(wall_time, (int, float)):
        raise ValueError("manifest field 'wall_time' must be a number")
    step_range = document.get("step_range")
    if step_range is not None:
        if (
            not isinstance(step_range, list)
            or len(step_range) != 2
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in step_range)
            or step_range[0] > step_range[1]
        ):
            raise ValueError("manifest field 'step_range' must be [first, last] or null")
        step_range = (step_range[0], step_range[1])
    tags = document.get("tags") or {}
    if not isinstance(tags, dict):
        raise ValueError("manifest field 'tags' must be an object")
    cpu_utilization = document.get("cpu_utilization")
    if cpu_utilization is not None and not isinstance(cpu_utilization, dict):
        raise ValueError("manifest field 'cpu_utilization' must be an object or absent")
    try:
        batch_size = check_batch_size(document.get("batch_size"))
        tags = check_tags(tags)
    except (TypeError, ValueError) as error:
        raise ValueError(f"manifest: {error}") from None
    return Manifest(
        worker=text("worker"),
        span=text("span"),
        framework=text("framework"),
        framework_version=optional_text("framework_version"),
        profscope_version=text("profscope_version"),
        trace_file=text("trace_file"),
        wall_time=float(wall_time),
        step_range=step_range,
        batch_size=batch_size,
        tags=tags,
        source_file=optional_text("source_file"),
        cpu_utilization=cpu_utilization,
    )
