"""MindSpore's step trace files, written beside an Ascend timeline by its profiler.

``step_trace_raw_<device id>_detail_time.csv`` has one row per training step and a last row
that is the profiler's own average (its ``step_num`` is ``-``, or ``0`` in some versions); we
keep the step rows only and compute averages ourselves. Columns:

- ``start_point``, ``end_point``: the step's start (the previous step's end) and end;
- ``fp_point``: start of the first forward operator, ``bp_point``: end of the last backward one;
- ``total`` = end - start, ``iteration_interval`` = fp - start (data waiting before forward),
  ``fp_and_bp`` = bp - fp, ``tail`` = end - bp (gradient update and what follows);
- ``stream_<id>_<kind>_<n>`` (with ``_start_point``/``_end_point``): collective ranges, when any.
  An inference run writes ``fp`` (forward, including the tail) instead of ``bp_point``,
  ``fp_and_bp`` and ``tail``.

Unit: every value is a count of the Ascend device's system counter (``syscnt``), which ticks at
100 MHz, i.e. 10 ns per count. MindSpore prints the summary "unit: syscnt", and MindInsight
turns these columns into milliseconds by dividing by 100,000 counts per ms; the absolute
points agree with the operator times of ``output_timeline_data_<id>.txt`` read that way.

``step_trace_point_info.json`` (``step_trace_point_info_<id>.json`` in later versions) names the
operators used as points: ``{"fp_start": ..., "bp_end": ...}``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol


# 100 MHz system counter: 10 ns per count (see the module docstring).
NS_PER_SYSCNT = 10
# A step trace table is small (about 100 bytes per step); anything larger is not one.
MAX_FILE_BYTES = 64 << 20

TIMELINE_FILE = re.compile(r"^ascend_timeline_display_(\d+)\.json$")
_REDUCE_COLUMN = re.compile(r"^stream_\d+_.+$")


class StepTraceFileError(ValueError):
    """The step trace file exists but is not one MindSpore writes."""


@dataclass(frozen=True)
class StepTraceRow:
    """One step, in system counter counts (None when the file has no such column)."""

    step: int
    start: int
    end: int
    total: int
    fp_point: Optional[int]
    bp_point: Optional[int]
    iteration_interval: Optional[int]
    fp_and_bp: Optional[int]
    tail: Optional[int]
    forward: Optional[int]  # inference files only: forward including the tail
    reduce: int  # sum of the collective (reduce) ranges of the step, counts


@dataclass(frozen=True)
class StepTraceTable:
    rows: list[StepTraceRow]
    columns: list[str]
    has_reduce_columns: bool
    # {"fp_start": op name, "bp_end": op name} from step_trace_point_info*.json, when present.
    points: dict[str, str] = field(default_factory=dict)
    file_name: str = ""

    @staticmethod
    def to_us(counts: int) -> float:
        return counts * NS_PER_SYSCNT / 1000.0


def parse_step_trace_csv(data: bytes) -> tuple[list[StepTraceRow], list[str], bool]:
    """Step rows, the header and whether collective columns are present; raises StepTraceFileError."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise StepTraceFileError(f"not UTF-8 text ({exc.reason})") from None
    # newline="": a bare carriage return ends a row as csv expects, instead of raising csv.Error mid-field.
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        lines = list(reader)
    except csv.Error as exc:
        raise StepTraceFileError(f"line {reader.line_num}: not a CSV row ({exc})") from None
    header = [name.strip() for name in (lines[0] if lines else [])]
    required = {"step_num", "start_point", "end_point", "total"}
    if not required.issubset(header):
        raise StepTraceFileError(f"missing columns: {', '.join(sorted(required - set(header)))}")
    index = {name: i for i, name in enumerate(header)}
    reduce_columns = [i for name, i in index.items()
                      if _REDUCE_COLUMN.match(name) and not name.endswith(("_start_point", "_end_point"))]
    rows: list[StepTraceRow] = []
    for line_number, cells in enumerate(lines[1:], start=2):
        if not cells or all(not c.strip() for c in cells):
            continue
        step_text = cells[index["step_num"]].strip() if len(cells) > index["step_num"] else ""
        if not step_text.isdigit() or int(step_text) == 0:
            continue  # the profiler's average row ("-", or 0)

        def value(name: str) -> Optional[int]:
            i = index.get(name)
            if i is None:
                return None
            if i >= len(cells):
                raise StepTraceFileError(f"line {line_number}: no value for {name}")
            try:
                number = int(cells[i].strip())
            except ValueError:
                raise StepTraceFileError(f"line {line_number}: {name} is not an integer") from None
            if number < 0:
                raise StepTraceFileError(f"line {line_number}: {name} is negative")
            return number

        start, end, total = value("start_point"), value("end_point"), value("total")
        assert start is not None and end is not None and total is not None  # required columns
        rows.append(StepTraceRow(
            step=int(step_text), start=start, end=end, total=total, fp_point=value("fp_point"),
            bp_point=value("bp_point"), iteration_interval=value("iteration_interval"),
            fp_and_bp=value("fp_and_bp"), tail=value("tail"), forward=value("fp"),
            reduce=sum(value(header[i]) or 0 for i in reduce_columns),
        ))
    return rows, header, bool(reduce_columns)


def parse_point_info(data: bytes) -> dict[str, str]:
    """The operator names of the points; an unreadable file gives no names."""
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {key: text for key, text in value.items() if isinstance(key, str) and isinstance(text, str)}


class SideFiles(Protocol):
    """The file access this module needs, by location (``store.storage.Storage`` is one): ingest reads side
    files through it and never names a path itself."""

    def parent(self, location: str) -> str: ...

    def join(self, folder: str, name: str) -> str: ...

    def stat(self, location: str) -> Any: ...

    def open(self, location: str) -> Any: ...


def step_trace_names(device_id: str) -> tuple[str, list[str]]:
    """The table's file name and the point info's candidate names for a device id (digits only)."""
    if not device_id.isdigit():
        raise ValueError("device id must be digits")
    return (f"step_trace_raw_{device_id}_detail_time.csv",
            [f"step_trace_point_info_{device_id}.json", "step_trace_point_info.json"])


def load_beside(storage: SideFiles, timeline_location: str) -> Optional[StepTraceTable]:
    """The step trace table written beside an Ascend timeline file, or None when there is none.

    Only the known file names are read from the timeline's folder; the device id comes from the
    timeline's own file name (``ascend_timeline_display_<id>.json``), never from a request.
    Raises StepTraceFileError when the table exists but cannot be read.
    """
    name = timeline_location.replace("\\", "/").rsplit("/", 1)[-1]
    match = TIMELINE_FILE.match(name)
    if match is None:
        return None
    folder = storage.parent(timeline_location)
    table_name, point_names = step_trace_names(match.group(1))
    table_location = storage.join(folder, table_name)
    stat = storage.stat(table_location)
    if stat is None:
        return None
    if stat.size > MAX_FILE_BYTES:
        raise StepTraceFileError(f"{table_name} is larger than {MAX_FILE_BYTES >> 20} MB")
    data = _read(storage, table_location)
    if data is None:
        raise StepTraceFileError(f"{table_name} could not be read")
    rows, columns, has_reduce = parse_step_trace_csv(data)
    points: dict[str, str] = {}
    for point_name in point_names:
        location = storage.join(folder, point_name)
        if storage.stat(location) is not None:
            points = parse_point_info(_read(storage, location, 1 << 16) or b"")
            break
    return StepTraceTable(rows=rows, columns=columns, has_reduce_columns=has_reduce, points=points,
                          file_name=table_name)


def _read(storage: SideFiles, location: str, limit: int = MAX_FILE_BYTES) -> Optional[bytes]:
    try:
        with storage.open(location) as handle:
            data: Any = handle.read(limit + 1)
    except Exception:  # noqa: BLE001 - gone or unreadable: the caller reports it
        return None
    if not isinstance(data, (bytes, bytearray)) or len(data) > limit:
        return None
    return bytes(data)
