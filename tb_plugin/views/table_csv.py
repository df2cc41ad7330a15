"""CSV export of the tables the page shows: pure functions from a route's answer, and the sort and
filter the page applied, to CSV text.

The page's download button requests the table's own route with ``format=csv`` and its current
state (``sort=<column>:<asc|desc>``, ``filter=<words>``, the route's grouping parameters), so the
file holds exactly the rows the table shows, in its order. To make that hold, the rules here are
the page's (``frontend/src/lib/table_model.ts``), written once in each language:

* filter: every whitespace-separated word of the query, lower-cased, occurs in the row's filter
  text, lower-cased (each table names its filter text, as its page does);
* sort: stable; a missing value (null, NaN) goes last in both directions; text compares by
  ``text_sort_key`` (case-insensitive, digit runs by value); booleans as 0/1.

Columns carry their ids (the page's column ids, used by ``sort``), a header with the unit, the cell
(numbers unformatted in the route's units: µs, bytes, 0..1 fractions) and, where the page sorts by
something other than the cell, its sort value. Cells that come from trace strings are text: a cell
that a spreadsheet would read as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return) is prefixed with ``'``.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from .overview import CATEGORIES

Row = Any
SortValue = Union[int, float, str, bool, None]
Cell = Union[int, float, str, bool, None]

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_DIGITS = re.compile(r"[0-9]+")
_SORT_PARAM = re.compile(r"^([A-Za-z0-9_]+):(asc|desc)$")


class ExportError(ValueError):
    """A request the export cannot answer (unknown table); the route answers 400."""


@dataclass(frozen=True)
class Column:
    id: str
    header: str
    cell: Callable[[Row], Cell]
    # The page's sort value when it is not the cell (a derived or a "missing when n/a" value).
    sort: Optional[Callable[[Row], SortValue]] = None


@dataclass(frozen=True)
class Table:
    """One table of a route's answer, as its page shows it."""

    name: str
    columns: Sequence[Column]
    rows: Sequence[Row]
    filter_text: Callable[[Row], str]
    default_sort: Optional[tuple[str, str]]  # (column id, "asc"|"desc"); None keeps the route's order


# --- the page's rules ------------------------------------------------------------------------


def text_sort_key(text: str) -> bytes:
    """The order of text cells, as the page sorts them: lower-cased, each run of ASCII digits replaced by
    "0", its length (as one character) and the digits without leading zeros (so runs compare by value
    and against other characters as a digit does), compared as UTF-16 code units (JavaScript's order)."""
    def run(match: re.Match[str]) -> str:
        digits = match.group(0).lstrip("0")
        return "0" + chr(len(digits)) + digits

    return _DIGITS.sub(run, text.lower()).encode("utf-16-be")


def _missing(value: SortValue) -> bool:
    if value is None or isinstance(value, (str, bool)):
        return value is None
    return math.isnan(float(value))  # numpy scalars included


def _ascending_key(value: SortValue) -> tuple[int, Any]:
    """Strings before numbers never meet in one column; the kind first keeps mixed columns total."""
    if isinstance(value, str):
        return (1, text_sort_key(value))
    return (0, float(value))  # bool → 0/1 like the page's Number(value)


def sort_rows(rows: Sequence[Row], value: Callable[[Row], SortValue], direction: str) -> list[Row]:
    """Stable, missing values last in both directions (``sortRows`` of the page)."""
    present = [(i, row, value(row)) for i, row in enumerate(rows)]
    missing = [row for _, row, v in present if _missing(v)]
    kept = [(i, row, v) for i, row, v in present if not _missing(v)]
    # sort() is stable, reverse=True included: equal values keep the route's order, as on the page.
    kept.sort(key=lambda entry: _ascending_key(entry[2]), reverse=direction == "desc")
    return [row for _, row, _ in kept] + missing


def filter_rows(rows: Sequence[Row], query: str, text: Callable[[Row], str]) -> list[Row]:
    """Rows whose text holds every word of the query, ignoring case (``filterRows`` of the page)."""
    words = [word for word in query.lower().split() if word]
    if not words:
        return list(rows)
    kept = []
    for row in rows:
        haystack = text(row).lower()
        if all(word in haystack for word in words):
            kept.append(row)
    return kept


def parse_sort(param: Optional[str], columns: Sequence[Column],
               fallback: Optional[tuple[str, str]]) -> Optional[tuple[str, str]]:
    """``column:asc|desc``; an unknown column or a malformed value gives the table's default (``parseSortParam``)."""
    if not param:
        return fallback
    match = _SORT_PARAM.match(param)
    if match is None or match.group(1) not in {c.id for c in columns}:
        return fallback
    return match.group(1), match.group(2)


def shown_rows(table: Table, sort: Optional[str] = None, query: str = "") -> list[Row]:
    """The table's rows after the page's filter and sort."""
    rows = filter_rows(table.rows, query or "", table.filter_text)
    chosen = parse_sort(sort, table.columns, table.default_sort)
    if chosen is None:
        return rows
    column = next(c for c in table.columns if c.id == chosen[0])
    return sort_rows(rows, column.sort or column.cell, chosen[1])


# --- CSV -------------------------------------------------------------------------------------


def safe_text(text: str) -> str:
    """A text cell a spreadsheet shows as text, never evaluates (CSV formula injection)."""
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def cell_text(value: Cell) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) and hasattr(value, "item"):
        value = value.item()  # a numpy scalar: its Python value (repr of np.float64 names the type)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return ""
        return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(float(value))
    return safe_text(str(value))


def to_csv(table: Table, sort: Optional[str] = None, query: str = "") -> str:
    """The table as the page shows it (filtered, sorted), one header line then one line per row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([safe_text(c.header) for c in table.columns])
    for row in shown_rows(table, sort, query):
        writer.writerow([cell_text(c.cell(row)) for c in table.columns])
    return out.getvalue()


# --- the tables of each route ------------------------------------------------------------------


def _field(name: str) -> Callable[[Row], Cell]:
    return lambda row: row.get(name)


def _col(id: str, header: str, field: Optional[str] = None, sort: Optional[Callable[[Row], SortValue]] = None) -> Column:
    return Column(id, header, _field(field or id), sort)


def _us(id: str, header: str, field: Optional[str] = None) -> Column:
    return _col(id, f"{header} (us)", field)


def _bytes(id: str, header: str) -> Column:
    return _col(id, f"{header} (bytes)")


def format_address(addr: Any) -> Optional[str]:
    """An allocation's address as the page writes it (``formatAddress``): ``0x`` and lower-case hexadecimal."""
    if addr is None or not math.isfinite(float(addr)) or addr < 0:
        return None
    return f"0x{int(round(float(addr))):x}"


def short_kernel_name(name: str) -> str:
    """The kernel name the page shows and sorts by: without a leading "void " and the trailing parameter
    list of a C++ signature (``shortKernelName`` of the page)."""
    text = name[5:] if name.startswith("void ") else name
    if text.endswith(")"):
        depth = 0
        for i in range(len(text) - 1, -1, -1):
            char = text[i]
            if char == ")":
                depth += 1
            elif char == "(":
                depth -= 1
                if depth == 0:
                    if i > 0:
                        text = text[:i]
                    break
    return name if text.strip() == "" else text


def efficiency_columns() -> list[Column]:
    """The efficiency columns of the operator and kernel tables and the Roofline page (``quantities/efficiency``):
    sums over the calls that count their work; achieved rates over their measured time."""
    return [
        _col("gflops", "GFLOP"), _bytes("bytes", "Data moved"), _col("tflops_per_s", "TFLOP/s"),
        _col("tb_per_s", "TB/s"), _col("intensity", "Arithmetic intensity (FLOP/byte)"), _col("bound", "Bound"),
        _col("roofline_share", "Share of roofline (fraction)"),
    ]


def operators_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    group_by = answer.get("group_by", "name")
    has_device = bool(answer.get("has_device"))

    def share(field: str) -> Column:
        def applies(row: Row) -> bool:
            return row["device_total"] > 0 and (bool(row.get("tc_eligible")) or row[field] > 0)
        label = "TC self" if field == "tc_self_share" else "TC total"
        return Column(field, f"{label} (fraction)", lambda row: row[field] if applies(row) else None,
                      lambda row: row[field] if applies(row) else None)

    columns = [_col("name", "Operator")]
    if group_by == "input_shape":
        columns.append(Column("input_shape", "Input shapes", lambda row: row.get("input_shape") or ""))
    if group_by == "stack":
        columns.append(Column("stack", "Call stack", lambda row: row.get("stack") or ""))
    columns.append(_col("calls", "Calls"))
    if has_device:
        columns += [_us("device_self", "Device self"), _us("device_total", "Device total")]
    columns += [_us("host_self", "Host self"), _us("host_total", "Host total")]
    if has_device:
        columns += [_col("tc_eligible", "TC eligible"), share("tc_self_share"), share("tc_total_share")]
    if answer.get("efficiency"):
        columns += efficiency_columns()
    return Table("operators", columns, answer.get("rows", []), lambda row: row["name"],
                 ("device_self" if has_device else "host_self", "desc"))


def kernels_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    columns = [Column("name", "Kernel", _field("name"), lambda row: short_kernel_name(row["name"]))]
    if answer.get("group_by") == "op_and_name":
        columns.append(Column("op", "Operator", lambda row: row.get("op") or ""))
    columns += [
        _col("calls", "Calls"), _us("total", "Total"), _us("mean", "Mean"), _us("min", "Min"), _us("max", "Max"),
        _col("blocks_per_sm", "Blocks per SM"), _col("achieved_occupancy", "Est. achieved occupancy (fraction)"),
        _col("tensor_cores", "Tensor Cores used"),
    ]
    if answer.get("efficiency"):
        columns += efficiency_columns()
    return Table("kernels", columns, answer.get("rows", []),
                 lambda row: f"{row['name']} {row['op']}" if row.get("op") is not None else row["name"],
                 ("total", "desc"))


def _columnar_rows(table: Mapping[str, Any]) -> list[dict[str, Any]]:
    names = list(table.get("columns", []))
    return [dict(zip(names, values)) for values in zip(*(table.get(n, []) for n in names))]


def memory_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    """``events``: the allocations (the route's own min_bytes/name filters already applied); ``operators``:
    bytes per operator. As the page shows them: addresses in hexadecimal, times in µs from the span's start
    (``span_start``), sorted by their values."""
    if which in (None, "events"):
        events = answer.get("events") or {}
        origin = float(answer.get("span_start") or 0.0)

        def since_start(field: str) -> Callable[[Row], Cell]:
            return lambda row: None if row.get(field) is None else row[field] - origin

        columns = [
            Column("addr", "Address", lambda row: format_address(row.get("addr")), _field("addr")),
            _bytes("bytes", "Size"), _col("operator", "Operator"), _col("device", "Device"),
            Column("alloc_time", "Allocated at (us from the span start)", since_start("alloc_time")),
            Column("free_time", "Freed at (us from the span start)", since_start("free_time")),
            _us("lifetime", "Lifetime"), _col("never_freed", "Never freed"),
        ]
        rows = _columnar_rows(events) if isinstance(events, dict) else []
        return Table("memory-allocations", columns, rows, lambda row: row.get("operator") or "", ("bytes", "desc"))
    if which == "operators":
        columns = [
            _col("name", "Operator"), _col("calls", "Calls"), _col("allocations", "Allocations"), _col("frees", "Frees"),
            _bytes("self_bytes", "Self net"), _bytes("total_bytes", "Total net"),
            _bytes("self_alloc_bytes", "Self allocated"), _bytes("total_alloc_bytes", "Total allocated"),
            _bytes("self_peak_bytes", "Self at peak"), _bytes("total_peak_bytes", "Total at peak"),
        ]
        return Table("memory-operators", columns, answer.get("by_operator", []), lambda row: row["name"],
                     ("self_peak_bytes", "desc"))
    raise ExportError("table must be events or operators")


def distributed_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    if which in (None, "ranks"):
        columns = [
            _col("rank", "Rank"), _col("worker", "Worker"), _col("backend", "Backend"), _col("steps", "Steps"),
            _us("step_time", "Step time"), _us("compute", "Computation"), _us("communication", "Communication"),
            _us("overlap", "Overlap"), _us("other", "Other"), _us("wait", "Wait"), _us("transfer", "Transfer"),
            _col("collective_calls", "Collective calls"),
        ]
        return Table("distributed-ranks", columns, answer.get("ranks", []), lambda row: row["worker"], ("rank", "asc"))
    if which == "collectives":
        columns = [
            _col("name", "Collective"), _col("calls", "Calls"), _bytes("bytes", "Message bytes (all calls)"),
            _us("total", "Total"), _us("mean", "Mean"), _us("wait", "Wait"), _us("transfer", "Transfer"),
            _col("bandwidth", "Bandwidth (bytes/s)"), _col("busbw", "Bus bandwidth, rank (bytes/s)"),
            _col("transfer_busbw", "Bus bandwidth, transfer (bytes/s)"),
        ]
        return Table("distributed-collectives", columns, answer.get("collectives", []), lambda row: row["name"], None)
    raise ExportError("table must be ranks or collectives")


def cross_rank_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    """``collectives``: every collective matched across ranks; ``kinds``: bandwidths per collective kind and group
    size; ``stragglers``: per rank, how often it arrived last and the wait it caused."""
    if which in (None, "collectives"):
        columns = [
            _col("process_group", "Process group"), _col("seq", "Sequence number"), _col("name", "Collective"),
            _col("ranks", "Ranks"), _col("group_size", "Group size"), _bytes("bytes", "Size"),
            _us("start", "Start"), _us("latency", "Latency"), _us("skew", "Start skew"),
            _col("last_rank", "Last rank"), _us("wait_caused", "Wait caused"),
            _col("algbw", "Algorithm bandwidth (bytes/s)"), _col("busbw", "Bus bandwidth (bytes/s)"),
        ]
        rows = _columnar_rows(answer.get("collectives") or {})
        return Table("distributed-collectives-matched", columns, rows,
                     lambda row: f"{row['process_group']} {row['name']}", None)
    if which == "kinds":
        columns = [
            _col("name", "Collective"), _col("group_size", "Group size"), _col("calls", "Calls"),
            _bytes("bytes", "Size (all calls)"), _us("latency", "Latency (all calls)"),
            _us("mean_latency", "Mean latency"), _us("mean_skew", "Mean start skew"),
            _col("algbw", "Algorithm bandwidth (bytes/s)"), _col("busbw", "Bus bandwidth (bytes/s)"),
        ]
        return Table("distributed-collective-kinds", columns, answer.get("kinds", []), lambda row: row["name"], None)
    if which == "stragglers":
        columns = [
            _col("rank", "Rank"), _col("worker", "Worker"), _col("collectives", "Collectives"),
            _col("arrived_last", "Arrived last"), _us("wait_caused", "Wait caused"),
            _us("mean_lateness", "Mean lateness"),
        ]
        return Table("distributed-stragglers", columns, answer.get("stragglers", []), lambda row: row["worker"],
                     ("wait_caused", "desc"))
    raise ExportError("table must be collectives, kinds or stragglers")


def distributed_matrix_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    if which not in (None, "matrix"):
        raise ExportError("table must be matrix")
    from .distributed.rank_steps import matrix_rows

    columns = [
        _col("rank", "Rank"), _col("worker", "Worker"), _col("step", "Step"), _us("step_time", "Step time"),
        _us("communication", "Communication"), _us("exposed_communication", "Exposed communication"),
    ]
    return Table("distributed-matrix", columns, matrix_rows(dict(answer)), lambda row: f"{row['worker']} {row['step']}",
                 None)


def _side(which: str, field: str) -> Callable[[Row], Cell]:
    return lambda row: row[which][field] if row.get(which) is not None else None


def _paired(id: str, header: str, unit: str = "") -> list[Column]:
    suffix = f" ({unit})" if unit else ""
    return [Column(f"{id}_{which}", f"{header}, {label}{suffix}", _side(which, id))
            for which, label in (("base", "baseline"), ("exp", "experiment"))]


_SIDE_TEXT = {"both": "both", "base": "baseline only", "exp": "experiment only"}


def _impact_columns(answer: Mapping[str, Any]) -> list[Column]:
    columns = [
        Column("impact", "Change per step (us)", _field("impact"), lambda row: abs(row["impact"])),
        _col("ratio", "Ratio per step (experiment / baseline)"),
        Column("per_step_base", "Per step, baseline (us)", lambda row: row["per_step"]["base"]),
        Column("per_step_exp", "Per step, experiment (us)", lambda row: row["per_step"]["exp"]),
    ]
    if answer.get("per_sample") is not None:  # both batch sizes known
        columns += [
            Column("impact_per_sample", "Change per sample (us)", lambda row: (row.get("per_sample") or {}).get("impact"),
                   lambda row: _abs_or_none((row.get("per_sample") or {}).get("impact"))),
            Column("per_sample_base", "Per sample, baseline (us)", lambda row: (row.get("per_sample") or {}).get("base")),
            Column("per_sample_exp", "Per sample, experiment (us)", lambda row: (row.get("per_sample") or {}).get("exp")),
        ]
    return columns


def _abs_or_none(value: Optional[float]) -> Optional[float]:
    return None if value is None else abs(value)


def compare_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    side = Column("side", "In", lambda row: _SIDE_TEXT.get(row["side"], row["side"]), lambda row: row["side"])
    if which in (None, "operators"):
        # As the page decides: some row has device time on either side.
        has_device = any(((row.get(w) or {}).get("device_total") or 0) > 0
                         for row in answer.get("operators", []) for w in ("base", "exp"))
        columns = [_col("name", "Operator")]
        if answer.get("group_by") == "input_shape":
            columns.append(Column("input_shape", "Input shapes", lambda row: row.get("input_shape") or ""))
        columns += [side, *_impact_columns(answer), *_paired("calls", "Calls")]
        if has_device:
            columns += _paired("device_self", "Device self", "us") + _paired("device_total", "Device total", "us")
        columns += _paired("host_self", "Host self", "us") + _paired("host_total", "Host total", "us")
        return Table("compare-operators", columns, answer.get("operators", []),
                     lambda row: f"{row['name']} {row.get('input_shape') or ''}", ("impact", "desc"))
    if which == "kernels":
        columns = [_col("name", "Kernel"), side, *_impact_columns(answer), *_paired("calls", "Calls"),
                   *_paired("total", "Total", "us"), *_paired("mean", "Mean", "us"),
                   Column("delta_mean", "Change of mean (us)", lambda row: row["delta"].get("mean"))]
        return Table("compare-kernels", columns, answer.get("kernels", []), lambda row: row["name"], ("impact", "desc"))
    raise ExportError("table must be operators or kernels")


def _tags_text(row: Row) -> str:
    tags = row.get("tags")
    return "" if not tags else ", ".join(f"{k}={_js_string(v)}" for k, v in tags.items())


def _js_string(value: Any) -> str:
    """A tag value as the page writes it (JavaScript's String(): 1.0 → "1")."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def run_table_categories(rows: Sequence[Row], categories: Sequence[str]) -> list[str]:
    """Categories with a column: those any loaded span spends time in (``tableCategories`` of the page)."""
    return [c for c in categories if any(((row.get("breakdown") or {}).get(c) or 0) > 0 for row in rows)]


def peak_memory_types(rows: Sequence[Row]) -> list[str]:
    """Device types with a peak in any row, "GPU" first (``peakMemoryTypes`` of the page)."""
    types = sorted({k for row in rows for k in (row.get("peak_memory") or {})})
    return sorted(types, key=lambda t: (t != "GPU",))


def _devices_text(row: Row) -> str:
    if row["status"] != "ready":
        return ""
    return ", ".join(row.get("devices") or []) or "CPU only"


def _status_text(row: Row) -> str:
    if row["status"] == "loading":
        progress = row.get("progress")
        return f"loading {progress * 100:.0f}%" if isinstance(progress, (int, float)) else "loading"
    return row["status"]


def run_table_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    rows = answer.get("rows", [])
    columns = [
        Column("run", "Run", _field("run"), lambda row: f"{row['run']}\0{row['worker']}\0{row['span_index']:06d}"),
        _col("worker", "Worker"),
        Column("span", "Span", lambda row: row["span_index"] + 1, lambda row: row["span_index"]),
        _col("span_name", "Span name", "span"),
        Column("status", "Status", _status_text, _field("status")),
        _col("steps", "Steps"), _us("mean_step_time", "Step time"),
    ]
    for category in run_table_categories(rows, answer.get("categories", [])):
        columns.append(Column(category, f"{category} (us)", lambda row, c=category: (row.get("breakdown") or {}).get(c)))
    columns.append(_col("gpu_utilization", "GPU utilization (fraction)"))
    columns.append(_col("mfu", "MFU (fraction)"))
    for device_type in peak_memory_types(rows):
        columns.append(Column(f"peak_{device_type}", f"Peak {device_type} memory (bytes)",
                              lambda row, t=device_type: (row.get("peak_memory") or {}).get(t)))
    columns += [
        _col("batch_size", "Batch size"), _col("samples_per_second", "Samples per second"),
        _col("framework", "Framework"),
        Column("devices", "Devices", _devices_text, lambda row: ", ".join(row.get("devices") or [])),
    ]
    if any(row.get("tags") for row in rows):
        columns.append(Column("tags", "Tags", _tags_text, _tags_text))
    return Table("runs", columns, rows, lambda row: f"{row['run']} {row['worker']} {row['span']} {_tags_text(row)}",
                 ("run", "asc"))


STEP_PHASE_HEADERS = {"gap": "Iteration gap", "forward": "Forward", "backward": "Backward",
                      "fp_and_bp": "Forward + backward", "optimizer": "Optimizer", "communication": "Communication",
                      "tail": "Tail", "other": "Other"}


def _phase_value(step: Row, layer: str) -> Optional[float]:
    phases = step.get("phases") or {}
    if layer != "fp_and_bp":
        return phases.get(layer)
    return step.get("fp_and_bp") if phases.get("forward") is None and phases.get("backward") is None else None


def step_trace_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    steps = [dict(step, _index=i) for i, step in enumerate(answer.get("steps", []))]
    layers = [layer for layer in STEP_PHASE_HEADERS if any(_phase_value(step, layer) is not None for step in steps)]
    columns = [Column("step", "Step", _field("name"), _field("_index")), _us("dur", "Duration")]
    columns += [Column(layer, f"{STEP_PHASE_HEADERS[layer]} (us)", lambda row, l=layer: _phase_value(row, l))
                for layer in layers]
    if any(step.get("dataloader") is not None for step in steps):
        columns.append(_us("dataloader", "Data loading"))
    columns += [_us("forward_start", "Forward start"),
                Column("notes", "Notes", lambda row: "; ".join(row.get("notes") or []),
                       lambda row: len(row.get("notes") or []))]
    return Table("steps", columns, steps, lambda row: row["name"], ("step", "asc"))


def range_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    """The trace viewer's area selection: slices by track kind and name."""
    columns = [_col("kind", "Track kind"), _col("name", "Name"), _col("count", "Slices"),
               _us("total", "Time in range"), _us("self", "Self time in range")]
    return Table("range", columns, answer.get("rows", []), lambda row: f"{row['kind']} {row['name']}", ("total", "desc"))


def overview_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    """The overview's steps: each step's time by category (the step-time chart's columns)."""
    if which not in (None, "steps"):
        raise ExportError("table must be steps")
    steps = [dict(step, _index=i) for i, step in enumerate(answer.get("steps", []))]
    columns = [Column("step", "Step", _field("name"), _field("_index")), _us("start", "Start"), _us("dur", "Duration")]
    columns += [Column(c, f"{c} (us)", lambda row, c=c: (row.get("breakdown") or {}).get(c)) for c in CATEGORIES]
    return Table("steps-breakdown", columns, steps, lambda row: row["name"], ("step", "asc"))


def idle_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    """The Analyses page's idle time: per stream (``streams``), or the longest gaps (``gaps``)."""
    if which in (None, "streams"):
        columns = [_col("stream", "Stream"), _us("busy", "Busy"), _us("idle", "Idle"), _us("host_wait", "Host wait"),
                   _us("kernel_wait", "Kernel wait"), _us("other", "Other wait"),
                   _us("no_work", "Before first / after last work"), _col("idle_share", "Idle share of steps (fraction)"),
                   _col("host_wait_share", "Host wait share of idle time (fraction)"),
                   _col("gaps", "Gaps")]
        return Table("idle-time", columns, answer.get("streams", []), lambda row: row["stream"], ("idle", "desc"))
    if which == "gaps":
        columns = [_col("stream", "Stream"), _us("start", "Start"), _us("dur", "Duration"), _col("category", "Cause"),
                   _col("before", "Work before"), _col("after", "Work after")]
        return Table("idle-gaps", columns, answer.get("longest_gaps", []),
                     lambda row: f"{row['stream']} {row['category']} {row['before']} {row['after']}", ("dur", "desc"))
    raise ExportError("table must be streams or gaps")


def _launch_rows_table(name: str, rows: Sequence[Row]) -> Table:
    columns = [_col("name", "Runtime call"), Column("kernel", "First device work", _field("kernel"),
                                                        lambda row: short_kernel_name(row["kernel"])),
               _us("start", "Start"), _us("cpu", "CPU duration"), _us("delay", "Launch delay"),
               _us("device", "Device duration"), _col("activities", "Device activities")]
    return Table(name, columns, rows, lambda row: f"{row['name']} {row['kernel']}", None)


def launches_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    """Kernel launches by runtime call (``calls``), short kernels by name (``short``), the longest runtime calls
    (``longest_calls``) and launch delays (``longest_delays``)."""
    def grouped(name: str, header: str, rows: Sequence[Row], kernel_names: bool) -> Table:
        first = (Column("name", header, _field("name"), lambda row: short_kernel_name(row["name"])) if kernel_names
                 else _col("name", header))
        columns = [first, _col("calls", "Launches"), _col("activities", "Device activities"),
                   _col("short", "Shorter than their launch"), _us("cpu_total", "CPU total"),
                   _us("cpu_mean", "CPU mean"), _us("cpu_max", "CPU max"), _us("delay_mean", "Launch delay mean"),
                   _us("delay_max", "Launch delay max"), _us("device_total", "Device total"),
                   _us("device_mean", "Device mean")]
        return Table(name, columns, rows, lambda row: row["name"], ("cpu_total", "desc"))

    if which in (None, "calls"):
        return grouped("launches-by-call", "Runtime call", answer.get("by_call", []), False)
    if which == "short":
        return grouped("short-kernels", "Kernel", answer.get("short_kernels", []), True)
    if which == "longest_calls":
        return _launch_rows_table("longest-runtime-calls", answer.get("longest_calls", []))
    if which == "longest_delays":
        return _launch_rows_table("longest-launch-delays", answer.get("longest_delays", []))
    raise ExportError("table must be calls, short, longest_calls or longest_delays")


def queues_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    columns = [_col("stream", "Stream"), _col("max", "Deepest queue"), _col("mean", "Mean queue length"),
               _us("empty", "Time with an empty queue"), _col("empty_share", "Empty share of steps (fraction)"),
               _col("changes", "Changes")]
    return Table("queue-length", columns, answer.get("streams", []), lambda row: row["stream"], ("max", "desc"))


def sequences_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    columns = [_col("operator", "Operator"),
               Column("kernels", "Kernels", lambda row: " | ".join(row["kernels"]), _field("length")),
               _col("length", "Length"), _col("count", "Occurrences"), _us("device_total", "Device total"),
               _us("device_mean", "Device per occurrence"), _us("cpu_total", "Operator CPU total"),
               _col("device_share", "Share of device work (fraction)")]
    return Table("kernel-sequences", columns, answer.get("sequences", []),
                 lambda row: f"{row['operator']} {' '.join(row['kernels'])}", ("device_total", "desc"))


def annotations_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    columns = [_col("name", "Annotation"), _col("calls", "Calls"), _us("host_total", "Host total"),
               _us("host_mean", "Host mean"), _us("host_max", "Host max"), _col("device_calls", "Device copies"),
               _us("device_total", "Device time (copies)"), _us("device_work", "Device work launched")]
    return Table("annotations", columns, answer.get("rows", []), lambda row: row["name"], ("host_total", "desc"))


def roofline_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    """The Roofline page: its points (one per group of identical calls), or the gaps to the roof (``gaps``)."""
    def point_columns() -> list[Column]:
        return [_col("name", "Operator"), Column("input_shape", "Input shapes", lambda row: row.get("input_shape") or ""),
                _col("category_label", "Category"), _col("precision", "Precision"), _col("unit", "Unit"),
                _col("device", "Device"), _col("calls", "Calls"), _us("time", "Time"),
                _col("flops_per_call", "FLOPs per call"), _bytes("bytes_per_call", "Bytes per call"),
                *efficiency_columns(), _us("roofline_time", "Roofline time")]

    def text(row: Row) -> str:
        return f"{row['name']} {row.get('input_shape') or ''} {row['category_label']} {row['precision']}"

    if which in (None, "points"):
        return Table("roofline", point_columns(), answer.get("points", []), text, ("time", "desc"))
    if which == "gaps":
        columns = [*point_columns(), _us("gap", "Time above the roofline"),
                   _col("gap_share", "Gap share of device time (fraction)")]
        return Table("roofline-gaps", columns, answer.get("gaps", []), text, ("gap", "desc"))
    raise ExportError("table must be points or gaps")


def _frames_text(row: Row) -> str:
    return " < ".join(f"{f.get('name') or '?'} ({f.get('file') or '?'}:{f.get('line')})" for f in row.get("frames", []))


def snapshot_at_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    """What is alive at a moment of a memory snapshot: its groups (by the route's ``group_by``), or the largest
    allocations (``table=largest``)."""
    if which in (None, "groups"):
        columns = [_col("label", "Group"), _bytes("bytes", "Live bytes"), _col("count", "Allocations"),
                   _col("share", "Share of live bytes (fraction)"), _bytes("largest", "Largest allocation"),
                   Column("frames", "Top frames (user code first)", _frames_text)]
        return Table(f"memory-snapshot-by-{answer.get('group_by', 'site')}", columns, answer.get("groups", []),
                     lambda row: f"{row['label']} {_frames_text(row)}", ("bytes", "desc"))
    if which == "largest":
        columns = [_col("id", "Allocation"), _bytes("size", "Size"), _col("label", "Site"), _col("addr", "Address"),
                   _col("stream", "Stream"), _col("start", "Allocated at (us)"), _col("end", "Freed at (us)"),
                   Column("flags", "Flags", lambda row: " ".join(row.get("flags", [])))]
        return Table("memory-snapshot-largest", columns, answer.get("largest", []), lambda row: row["label"],
                     ("size", "desc"))
    raise ExportError("table must be groups or largest")


def snapshot_segments_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    """The allocator's segments at a moment, or their blocks (``table=blocks``)."""
    if which in (None, "segments"):
        columns = [_col("address", "Address"), _bytes("size", "Size"), _col("stream", "Stream"),
                   _bytes("allocated", "Allocated"), _bytes("active", "Active"), _bytes("requested", "Requested"),
                   _col("large", "Large pool"), _col("expandable", "Expandable"), _col("blocks", "Blocks")]
        return Table("memory-snapshot-segments", columns, answer.get("segments", []),
                     lambda row: str(row["address"]), ("size", "desc"))
    if which == "blocks":
        columns = [_col("segment", "Segment"), _col("address", "Address"), _bytes("size", "Size"),
                   _bytes("requested", "Requested"), _col("state", "State"), _col("label", "Site")]
        return Table("memory-snapshot-blocks", columns, answer.get("blocks", []),
                     lambda row: f"{row['state']} {row['label']}", ("address", "asc"))
    raise ExportError("table must be segments or blocks")


def snapshot_compare_table(answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    columns = [_col("label", "Site"), _col("site", "File:line:function"), _bytes("base_bytes", "Baseline bytes"),
               _bytes("exp_bytes", "Experiment bytes"), _bytes("delta", "Difference"),
               _col("base_count", "Baseline allocations"), _col("exp_count", "Experiment allocations")]
    return Table("memory-snapshot-compare", columns, answer.get("rows", []), lambda row: row["site"],
                 ("delta", "desc"))


# Route (path under the plugin) → its tables.
TABLES: dict[str, Callable[[Mapping[str, Any], Optional[str]], Table]] = {
    "overview": overview_table,
    "operators": operators_table,
    "kernels": kernels_table,
    "roofline": roofline_table,
    "memory": memory_table,
    "distributed": distributed_table,
    "distributed/matrix": distributed_matrix_table,
    "distributed/collectives": cross_rank_table,
    "compare": compare_table,
    "runs/table": run_table_table,
    "steptrace": step_trace_table,
    "trace/range": range_table,
    "analyses/idle": idle_table,
    "analyses/launches": launches_table,
    "analyses/queues": queues_table,
    "analyses/sequences": sequences_table,
    "analyses/annotations": annotations_table,
    "memory_snapshot/at": snapshot_at_table,
    "memory_snapshot/segments": snapshot_segments_table,
    "memory_snapshot/compare": snapshot_compare_table,
}


def table_of(route: str, answer: Mapping[str, Any], which: Optional[str] = None) -> Table:
    try:
        build = TABLES[route]
    except KeyError:
        raise ExportError(f"{route} has no table to export") from None
    return build(answer, which)
