"""The on-disk contract of Profscope, shared by the writer and the plugin.

A run is a folder under the logdir, at any depth. Its traces are either

* torch's ``tensorboard_trace_handler`` output, directly in the run folder::

      <run>/<worker>.<timestamp>.pt.trace.json[.gz]

* or PaddlePaddle's ``export_chrome_tracing`` output, directly in the run folder (the
  ``.paddle_trace.pb`` files beside them are not read)::

      <run>/<worker>_time_<date-time digits>.paddle_trace.json[.gz]

* or the writer's output, under the plugin's asset folder::

      <run>/plugins/profscope/<worker>.<span>.<framework>.trace.json.gz
      <run>/plugins/profscope/<worker>.<span>.manifest.json

A worker is one process (a rank); a span is one ``on_trace_ready`` window.
This module is import-light on purpose: the writer imports it inside training
jobs, so it must not pull in TensorBoard, numpy or the plugin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

PLUGIN_NAME = "profscope"
TAB_NAME = "PROFSCOPE"
# Relative folder of the writer's files inside a run folder.
ASSET_DIR = ("plugins", PLUGIN_NAME)
MANIFEST_SUFFIX = ".manifest.json"
# Files whose name starts with this are temporary (written, then renamed).
TEMP_PREFIX = ".tmp-"

_TORCH_TRACE = re.compile(r"^(?P<worker>.+)\.(?P<span>\d+)\.pt\.trace\.json(?P<gz>\.gz)?$")
# Paddle: "<worker>_time_2026_11_21_23_22_29_386961.paddle_trace.json"; the span is the digits.
_PADDLE_TRACE = re.compile(r"^(?P<worker>.+?)_time_(?P<span>\d+(?:_\d+)*)\.paddle_trace\.json(?P<gz>\.gz)?$")
_WRITER_TRACE = re.compile(
    r"^(?P<worker>[^./\\]+)\.(?P<span>[^./\\]+)\.(?P<framework>[a-z0-9_]+)\.trace\.json(?P<gz>\.gz)?$"
)
_WRITER_MANIFEST = re.compile(r"^(?P<worker>[^./\\]+)\.(?P<span>[^./\\]+)\.manifest\.json$")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_\-]+")


@dataclass(frozen=True)
class TraceFileName:
    """What a trace file's name says about it."""

    worker: str
    span: str
    layout: str  # "torch" (torch's handler), "paddle" (Paddle's chrome export) or "writer" (Profscope's writer)
    framework: Optional[str]
    gzipped: bool


def parse_torch_trace_name(filename: str) -> Optional[TraceFileName]:
    """``<worker>.<timestamp>.pt.trace.json[.gz]`` → worker and span, else None."""
    m = _TORCH_TRACE.match(filename)
    if not m or filename.startswith(TEMP_PREFIX):
        return None
    return TraceFileName(m["worker"], m["span"], "torch", None, bool(m["gz"]))


def parse_paddle_trace_name(filename: str) -> Optional[TraceFileName]:
    """``<worker>_time_<date>.paddle_trace.json[.gz]`` → worker and span (the date's digits), else None."""
    m = _PADDLE_TRACE.match(filename)
    if not m or filename.startswith(TEMP_PREFIX):
        return None
    return TraceFileName(m["worker"], m["span"].replace("_", ""), "paddle", "paddle", bool(m["gz"]))


def parse_writer_trace_name(filename: str) -> Optional[TraceFileName]:
    """``<worker>.<span>.<framework>.trace.json[.gz]`` → worker, span, framework, else None."""
    m = _WRITER_TRACE.match(filename)
    if not m or filename.startswith(TEMP_PREFIX):
        return None
    return TraceFileName(m["worker"], m["span"], "writer", m["framework"], bool(m["gz"]))


def parse_manifest_name(filename: str) -> Optional[tuple[str, str]]:
    """``<worker>.<span>.manifest.json`` → (worker, span), else None."""
    m = _WRITER_MANIFEST.match(filename)
    return (m["worker"], m["span"]) if m else None


def safe_component(name: str) -> str:
    """A worker or span name made safe for the writer's file names (no dots, no slashes)."""
    cleaned = _SAFE_NAME.sub("_", name).strip("_")
    return cleaned or "worker"


def writer_trace_name(worker: str, span: str, framework: str) -> str:
    return f"{safe_component(worker)}.{safe_component(span)}.{framework}.trace.json.gz"


def writer_manifest_name(worker: str, span: str) -> str:
    return f"{safe_component(worker)}.{safe_component(span)}{MANIFEST_SUFFIX}"


def span_sort_key(span: str) -> tuple[int, int, str]:
    """Spans are ordered by their numeric timestamp when they have one, else by name."""
    return (0, int(span), "") if span.isdigit() else (1, 0, span)
