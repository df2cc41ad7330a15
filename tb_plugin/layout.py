"""The on-disk contract of Profscope, shared by the writer and the plugin.

A run is a folder under the logdir, at any depth. Its traces are either

* torch's ``tensorboard_trace_handler`` output, directly in the run folder::

      <run>/<worker>.<timestamp>.pt.trace.json[.gz]

* or PaddlePaddle's ``export_chrome_tracing`` output, directly in the run folder (the
  ``.paddle_trace.pb`` files beside them are not read)::

      <run>/<worker>_time_<date-time digits>.paddle_trace.json[.gz]

* or MindSpore's profiler output: one folder per span inside the run folder, the timeline in
  its ``ASCEND_PROFILER_OUTPUT`` (the worker is ``<host>_<pid>``, or ``rank<N>`` when the folder
  names a rank; the span is the timestamp)::

      <run>/<worker>_<timestamp>_ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view.json

* or the older MindSpore/MindInsight profiler folder (MindSpore 1.x to 2.2): the folder holding
  the timelines is the run, one timeline per device, each device a worker ``rank<id>`` (so a
  multi-device run shows its ranks); the span is the device kind, ``ascend`` or ``gpu``, as the
  folder holds one profiled window per device. The op statistics, step trace and MindData files
  beside them (``aicore_intermediate_<id>_*.csv``...) are read by the views that use them::

      <run>/ascend_timeline_display_<id>.json
      <run>/gpu_timeline_display_<id>.json

* or msprof's timeline report (the msprof command of CANN, and the Ascend profilers that run its analysis:
  MindSpore, torch_npu), ``msprof_<timestamp digits>.json`` in an output folder named
  ``mindstudio_profiler_output`` or ``ASCEND_PROFILER_OUTPUT``. The span is the file's timestamp;
  the worker is the folder that owns the output: the ``<worker>_<ts>_ascend_ms`` / ``_ascend_pt``
  span folder above it when there is one (named as for ``trace_view.json``), else the output folder's
  parent (msprof's ``PROF_<...>`` folder, or ``rank<N>`` when it names a rank); the run is that
  folder's parent. Its content (the Ascend layers) says what it is::

      <run>/PROF_<...>/mindstudio_profiler_output/msprof_<timestamp>.json
      <run>/<worker>_<ts>_ascend_ms/PROF_<...>/mindstudio_profiler_output/msprof_<timestamp>.json
      <run>/<worker>_<ts>_ascend_ms/ASCEND_PROFILER_OUTPUT/msprof_<timestamp>.json

* or the writer's output, under the plugin's asset folder::

      <run>/plugins/profscope/<worker>.<span>.<framework>.trace.json.gz
      <run>/plugins/profscope/<worker>.<span>.manifest.json

* or the trace viewer files of TensorFlow's and JAX's profilers (TensorBoard's profile plugin folder):
  the run is the folder above ``plugins/profile``, the worker the host, the span the session folder
  (its date and time)::

      <run>/plugins/profile/<session>/<host>.trace.json.gz

* or CANN's older msprof output (before ``mindstudio_profiler_output``): the timeline of each device;
  the run is the folder holding ``PROF_<...>``, the worker the device (``device<n>``), the span the
  rest of the file name::

      <run>/PROF_<...>/device_<n>/timeline/msprof<...>.json

* or any other JSON or gzipped JSON file whose top level is a Chrome trace's (``ingest/chrome/sniff.py`` reads
  its top-level keys in order, without parsing their values, until a trace's key): torch's ``export_chrome_trace`` (``trace.json``), a torch handler file
  without a timestamp (``worker0.pt.trace.json``), HTA-style job folders (``rank-0.json.gz``), any tool's
  Chrome trace. The run is its folder, or the folder above when the folder names a rank
  (``<run>/rank0/trace.json``); the worker is ``rank<N>`` when the file or folder name names a rank,
  else the file's name without ``.json[.gz]`` and ``.pt.trace``/``.trace``; the span is the file name::

      <run>/<any name>.json[.gz]
      <run>/rank<N>/<any name>.json[.gz]

Beside the traces, a run may hold PyTorch allocator memory snapshots (``torch.cuda.memory._dump_snapshot``): any
``.pickle`` or ``.pkl`` file whose first bytes are a pickled dict whose first key is a snapshot's
(``starts_like_memory_snapshot``; the file is read as plain data only when it is opened). A snapshot belongs to
its folder's run (or the folder above when its folder names a rank), to the worker its name or folder names by rank,
and to a span when its name is that of a trace of the run with ``.pickle`` for the trace's suffix
(``worker0.1700000000.pickle`` beside ``worker0.1700000000.pt.trace.json``); the writer's
(``trace_handler(..., memory_snapshot=True)``) lies beside the span's trace::

      <run>/<any name>.pickle, <run>/rank<N>/memory_snapshot.pkl ...
      <run>/plugins/profscope/<worker>.<span>.memory_snapshot.pickle

A worker is one process (a rank); a span is one ``on_trace_ready`` window.
This module is import-light on purpose: the writer imports it inside training
jobs, so it must not pull in TensorBoard, numpy or the plugin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

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
# MindSpore: "<host>_<pid>_<timestamp digits>_ascend_ms" (the worker name may be the user's own).
_MINDSPORE_SPAN_FOLDER = re.compile(r"^(?P<worker>.+)_(?P<span>\d+)_ascend_ms$")
# A worker name that names a rank: "rank3", "rank_3", "host_rank-3_123"...
_RANK_IN_WORKER = re.compile(r"(?:^|[_\-.])rank[_\-]?(?P<rank>\d+)(?:$|[_\-.])", re.IGNORECASE)
MINDSPORE_OUTPUT_FOLDER = "ASCEND_PROFILER_OUTPUT"
MINDSPORE_TRACE_FILE = "trace_view.json"
# MindSpore/MindInsight's older profiler folder: "ascend_timeline_display_1.json", "gpu_timeline_display_0.json".
_MINDSPORE_DEVICE_TIMELINE = re.compile(r"^(?P<kind>ascend|gpu)_timeline_display_(?P<device>\d+)\.json$")
# msprof's timeline report and the folders it is written to.
_MSPROF_TRACE = re.compile(r"^msprof_(?P<span>\d+)\.json$")
MSPROF_OUTPUT_FOLDERS = frozenset({"mindstudio_profiler_output", MINDSPORE_OUTPUT_FOLDER})
# Span folders of the Ascend profilers: MindSpore's "_ascend_ms", torch_npu's "_ascend_pt".
_ASCEND_SPAN_FOLDER = re.compile(r"^(?P<worker>.+)_(?P<span>\d+)_ascend_(?:ms|pt)$")
_WRITER_TRACE = re.compile(
    r"^(?P<worker>[^./\\]+)\.(?P<span>[^./\\]+)\.(?P<framework>[a-z0-9_]+)\.trace\.json(?P<gz>\.gz)?$"
)
_WRITER_MANIFEST = re.compile(r"^(?P<worker>[^./\\]+)\.(?P<span>[^./\\]+)\.manifest\.json$")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_\-]+")
# Names that say "Chrome trace": torch's without a timestamp, the profile plugin's.
_TRACE_NAME = re.compile(r"\.(?:pt\.)?trace\.json(?:\.gz)?$")
_TRACE_SUFFIX = re.compile(r"(?:\.pt\.trace|\.trace)?\.json(?:\.gz)?$")
# TensorBoard's profile plugin folder (TensorFlow's and JAX's profilers): <run>/plugins/profile/<session>/.
PROFILE_PLUGIN_DIR = ("plugins", "profile")
_PROFILE_PLUGIN_TRACE = re.compile(r"^(?P<host>.+)\.trace\.json(?P<gz>\.gz)?$")
# CANN's older msprof output: PROF_<...>/device_<n>/timeline/msprof<...>.json.
_CANN_TIMELINE = re.compile(r"^msprof_?(?P<span>.*?)\.json(?P<gz>\.gz)?$")
_CANN_DEVICE_FOLDER = re.compile(r"^device_(?P<device>\d+)$")


@dataclass(frozen=True)
class TraceFileName:
    """What a trace file's name says about it."""

    worker: str
    span: str
    # "torch" (torch's handler), "paddle" (Paddle's chrome export), "mindspore" (MindSpore's profiler folder),
    # "msprof" (msprof's timeline report), "writer" (Profscope's writer), "profile_plugin" (TensorFlow's and
    # JAX's trace viewer files), "cann" (CANN's older device timelines) or "chrome" (any other Chrome trace)
    layout: str
    framework: Optional[str]
    gzipped: bool


@dataclass(frozen=True)
class LayoutDescription:
    """One file layout that discovery looks for, as the empty page and the README list it."""

    pattern: str
    written_by: str


# What a logdir is searched for (the runs route sends it with an empty run list).
LAYOUTS_LOOKED_FOR = (
    LayoutDescription("<run>/<worker>.<timestamp>.pt.trace.json[.gz]", "torch.profiler.tensorboard_trace_handler"),
    LayoutDescription("<run>/plugins/profscope/<worker>.<span>.<framework>.trace.json.gz",
                      "Profscope's writer and profscope import"),
    LayoutDescription("<run>/<worker>_time_<date>.paddle_trace.json[.gz]", "Paddle's export_chrome_tracing"),
    LayoutDescription("<run>/<host>_<pid>_<ts>_ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view.json",
                      "MindSpore's profiler"),
    LayoutDescription("<run>/ascend_timeline_display_<id>.json, gpu_timeline_display_<id>.json",
                      "MindSpore/MindInsight's older profiler"),
    LayoutDescription("<run>/PROF_<...>/mindstudio_profiler_output/msprof_<ts>.json", "msprof (CANN), torch_npu"),
    LayoutDescription("<run>/PROF_<...>/device_<n>/timeline/msprof<...>.json", "older msprof (CANN)"),
    LayoutDescription("<run>/plugins/profile/<session>/<host>.trace.json.gz", "TensorFlow's and JAX's profilers"),
    LayoutDescription("<run>/[rank<N>/]<any name>.json[.gz]",
                      "any Chrome trace (traceEvents, or a bare array of events): torch's export_chrome_trace (trace.json), "
                      "HTA job folders (rank-0.json.gz), other tools"),
    LayoutDescription("<run>/[rank<N>/]<any name>.pickle|.pkl",
                      "PyTorch's allocator memory snapshots (torch.cuda.memory._dump_snapshot), found by content"),
)


def parse_torch_trace_name(filename: str) -> Optional[TraceFileName]:
    """``<worker>.<timestamp>.pt.trace.json[.gz]`` → worker and span, else None."""
    m = _TORCH_TRACE.match(filename)
    if not m or filename.startswith(TEMP_PREFIX):
        return None
    return TraceFileName(m["worker"], m["span"], "torch", None, bool(m["gz"]))


def is_trace_by_name(filename: str) -> bool:
    """A name that says "Chrome trace" by itself (no need to look inside): torch's ``.pt.trace.json[.gz]``
    without a timestamp (torch-tb-profiler reads those too) and the profile plugin's ``.trace.json[.gz]``."""
    return _TRACE_NAME.search(filename) is not None and not filename.startswith(TEMP_PREFIX)


def is_json_candidate(filename: str) -> bool:
    """A file that may be a Chrome trace (``.json`` or ``.json.gz``): its first bytes decide."""
    return filename.endswith((".json", ".json.gz")) and not filename.startswith(TEMP_PREFIX)


def is_event_file(filename: str) -> bool:
    """A TensorBoard event file (``events.out.tfevents.<...>``)."""
    return ".tfevents." in filename or filename.startswith("events.out.tfevents")


def chrome_trace_stem(filename: str) -> str:
    """The file name without ``.json[.gz]`` and a trailing ``.pt.trace`` / ``.trace``."""
    return _TRACE_SUFFIX.sub("", filename) or filename


def rank_in_name(name: str) -> Optional[int]:
    """The rank a worker, file or folder name names (``rank3``, ``rank-3``, ``host_rank_3``...), else None."""
    m = _RANK_IN_WORKER.search(name)
    return int(m["rank"]) if m else None


@dataclass(frozen=True)
class ChromeTracePath:
    """Worker and span of a Chrome trace found by its content or its name, and how many folders above the
    file's own its run is (0: the file's folder)."""

    name: TraceFileName
    run_levels_up: int


def parse_chrome_trace_path(folder_name: str, filename: str) -> ChromeTracePath:
    """Worker and span of a Chrome trace without a layout of its own (see the module docstring).

    ``folder_name``: the last component of the file's folder ("" or "." for the logdir itself).
    """
    stem = chrome_trace_stem(filename)
    rank = rank_in_name(stem)
    levels_up = 0
    if rank is None and folder_name not in ("", "."):
        rank = rank_in_name(folder_name)
        levels_up = 1 if rank is not None else 0
    worker = f"rank{rank}" if rank is not None else stem
    return ChromeTracePath(TraceFileName(worker, filename, "chrome", None, filename.endswith(".gz")), levels_up)


def parse_profile_plugin_trace_path(folders: Sequence[str], filename: str) -> Optional[ChromeTracePath]:
    """``<run>/plugins/profile/<session>/<host>.trace.json[.gz]`` → worker = host, span = session, else None.

    ``folders``: the last components of the file's folder path relative to the logdir, outermost first.
    """
    m = _PROFILE_PLUGIN_TRACE.match(filename)
    if not m or len(folders) < 3 or tuple(folders[-3:-1]) != PROFILE_PLUGIN_DIR:
        return None
    return ChromeTracePath(TraceFileName(m["host"], folders[-1], "profile_plugin", None, bool(m["gz"])), 3)


def parse_cann_timeline_path(folders: Sequence[str], filename: str) -> Optional[ChromeTracePath]:
    """``<run>/PROF_<...>/device_<n>/timeline/msprof<...>.json[.gz]`` → worker ``device<n>``, span the rest of the
    file name (``msprof_0_1_1.json`` → ``0_1_1``), else None."""
    m = _CANN_TIMELINE.match(filename)
    if not m or len(folders) < 3 or folders[-1] != "timeline" or not folders[-3].startswith("PROF_"):
        return None
    device = _CANN_DEVICE_FOLDER.match(folders[-2])
    if device is None:
        return None
    span = m["span"] or "msprof"
    return ChromeTracePath(TraceFileName(f"device{int(device['device'])}", span, "cann", None, bool(m["gz"])), 3)


def parse_paddle_trace_name(filename: str) -> Optional[TraceFileName]:
    """``<worker>_time_<date>.paddle_trace.json[.gz]`` → worker and span (the date's digits), else None."""
    m = _PADDLE_TRACE.match(filename)
    if not m or filename.startswith(TEMP_PREFIX):
        return None
    return TraceFileName(m["worker"], m["span"].replace("_", ""), "paddle", "paddle", bool(m["gz"]))


def parse_mindspore_trace_path(span_folder: str, output_folder: str, filename: str) -> Optional[TraceFileName]:
    """``<worker>_<ts>_ascend_ms`` / ``ASCEND_PROFILER_OUTPUT`` / ``trace_view.json`` → worker and span, else None.

    The three arguments are the last three components of the file's path.
    """
    if filename != MINDSPORE_TRACE_FILE or output_folder != MINDSPORE_OUTPUT_FOLDER:
        return None
    m = _MINDSPORE_SPAN_FOLDER.match(span_folder)
    if not m:
        return None
    worker = m["worker"]
    rank = _RANK_IN_WORKER.search(worker)
    return TraceFileName(f"rank{int(rank['rank'])}" if rank else worker, m["span"], "mindspore", "mindspore", False)


def parse_mindspore_timeline_name(filename: str) -> Optional[TraceFileName]:
    """``ascend_timeline_display_<id>.json`` / ``gpu_timeline_display_<id>.json`` → worker ``rank<id>``, span
    ``ascend`` / ``gpu``, else None. The id is the device's (its rank's from MindSpore 1.6 on)."""
    m = _MINDSPORE_DEVICE_TIMELINE.match(filename)
    if not m:
        return None
    return TraceFileName(f"rank{int(m['device'])}", m["kind"], "mindspore", "mindspore", False)


@dataclass(frozen=True)
class MsprofTracePath:
    """What an msprof report's path says: its name, and how many folders above the file's the run is."""

    name: TraceFileName
    run_levels_up: int


def parse_msprof_trace_path(folders: Sequence[str], filename: str) -> Optional[MsprofTracePath]:
    """``.../<owner>/[PROF_<...>/]<output folder>/msprof_<ts>.json`` → worker, span and run, else None.

    ``folders`` are the last components of the file's folder path, outermost first (up to three are
    used: the output folder, its parent, and that one's parent); see the module docstring.
    """
    m = _MSPROF_TRACE.match(filename)
    if not m or not folders or folders[-1] not in MSPROF_OUTPUT_FOLDERS:
        return None
    # The owner: the nearest Ascend span folder above the output folder (at most two levels up), else its parent.
    for levels, owner in enumerate(reversed(folders[-3:-1]), start=1):
        span_folder = _ASCEND_SPAN_FOLDER.match(owner)
        if span_folder:
            worker = span_folder["worker"]
            break
    else:
        if len(folders) < 2 or folders[-1] == MINDSPORE_OUTPUT_FOLDER:
            return None  # ASCEND_PROFILER_OUTPUT only counts inside a span folder
        levels, worker = 1, folders[-2]
    rank = _RANK_IN_WORKER.search(worker)
    name = TraceFileName(f"rank{int(rank['rank'])}" if rank else worker, m["span"], "msprof", None, False)
    return MsprofTracePath(name, levels + 1)


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


# --- memory snapshots ---------------------------------------------------------------------------------------------

SNAPSHOT_SUFFIXES = (".pickle", ".pkl")
WRITER_SNAPSHOT_SUFFIX = ".memory_snapshot.pickle"
_WRITER_SNAPSHOT = re.compile(r"^(?P<worker>[^./\\]+)\.(?P<span>[^./\\]+)\.memory_snapshot\.pickle$")
# A snapshot's top-level keys (torch writes "segments" first; a snapshot made from a profile "device_traces").
SNAPSHOT_TOP_LEVEL_KEYS = frozenset({"segments", "device_traces", "allocator_settings", "external_annotations"})
# How much of a file's start ``starts_like_memory_snapshot`` needs.
SNAPSHOT_SNIFF_BYTES = 256
# Pickle opcodes that may come before the first key: PROTO, FRAME, EMPTY_DICT, MEMOIZE, BINPUT, LONG_BINPUT, MARK.
_PICKLE_WIDTHS = {0x80: 1, 0x95: 8, 0x7D: 0, 0x94: 0, 0x71: 1, 0x72: 4, 0x28: 0}


def is_snapshot_candidate(filename: str) -> bool:
    """A file that may be a memory snapshot (``.pickle`` / ``.pkl``): its first bytes decide."""
    return filename.endswith(SNAPSHOT_SUFFIXES) and not filename.startswith(TEMP_PREFIX)


def writer_snapshot_name(worker: str, span: str) -> str:
    return f"{safe_component(worker)}.{safe_component(span)}{WRITER_SNAPSHOT_SUFFIX}"


def parse_writer_snapshot_name(filename: str) -> Optional[tuple[str, str]]:
    """``<worker>.<span>.memory_snapshot.pickle`` → (worker, span), else None."""
    m = _WRITER_SNAPSHOT.match(filename)
    return (m["worker"], m["span"]) if m and not filename.startswith(TEMP_PREFIX) else None


def snapshot_stem(filename: str) -> str:
    """The name without ``.pickle``/``.pkl`` and a trailing ``.memory_snapshot``/``_memory_snapshot``."""
    for suffix in SNAPSHOT_SUFFIXES:
        if filename.endswith(suffix):
            filename = filename[: -len(suffix)]
            break
    return re.sub(r"[._]memory_snapshot$", "", filename) or filename


def starts_like_memory_snapshot(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a pickle (protocol 2 or later) of a dict whose first key is a memory
    snapshot's (``SNAPSHOT_TOP_LEVEL_KEYS``). Only opcodes are looked at: nothing is unpickled."""
    i, n = 0, min(len(head), SNAPSHOT_SNIFF_BYTES)
    if n < 2 or head[0] != 0x80 or head[1] < 2:
        return False
    seen_dict = False
    while i < n:
        op = head[i]
        if op == 0x7D:
            if seen_dict:
                return False
            seen_dict = True
        if op in _PICKLE_WIDTHS:
            i += 1 + _PICKLE_WIDTHS[op]
            continue
        if not seen_dict:
            return False
        if op == 0x8C and i + 1 < n:  # SHORT_BINUNICODE
            length, start = head[i + 1], i + 2
        elif op == 0x58 and i + 5 <= n:  # BINUNICODE
            length, start = int.from_bytes(head[i + 1:i + 5], "little"), i + 5
        else:
            return False
        return head[start:start + length].decode("utf-8", "replace") in SNAPSHOT_TOP_LEVEL_KEYS
    return False
