"""MindSpore's MindData (dataset pipeline) profiling files → the data pipeline view.

MindSpore's profiler writes these files beside its timeline (``ascend_timeline_display_<id>.json`` or
``gpu_timeline_display_<id>.json``, or in ``ASCEND_PROFILER_OUTPUT`` next to ``trace_view.json``), one
set per device (rank) ``<id>``:

``minddata_pipeline_raw_<id>.csv``
    One row per dataset operator, written by MindSpore from ``pipeline_profiling_<id>.json``:

    - ``op_id``: the operator's id in the pipeline (0 is the root, the operator nearest the device).
    - ``op_type``: its class (``BatchOp``, ``MapOp``, ``ImageFolderOp``...).
    - ``num_workers``: its parallel workers (``num_parallel_workers``).
    - ``output_queue_size``: the sampled fill levels of its output queue (rows waiting for its
      parent), one sample every ``sample_interval`` ms, as a JSON list.
    - ``output_queue_average_size``: the mean of those samples.
    - ``output_queue_length``: the queue's capacity.
    - ``output_queue_usage_rate``: average size / capacity (0..1): how full the queue stays.
    - ``sample_interval``: ms between two samples.
    - ``parent_id``: the operator that consumes its output (empty for the root).
    - ``children_id``: the operators it reads from, as a JSON list (empty for a source).

    Operators without an output queue (inline operators, ``EpochCtrlOp``) are left out of the CSV.
``pipeline_profiling_<id>.json``
    The same per-operator data before MindSpore's conversion (``op_info`` with ``metrics.output_queue``
    ``{length, size: [samples], throughput}``, ``children``, ``num_workers``; ``sampling_interval``).
    Read when the CSV is missing.
``device_queue_profiling_<id>.txt`` (data sink mode) or ``dataset_iterator_profiling_<id>.txt`` (feed mode)
    One record per line, ``type extra_info batch_num value [time_stamp]``:

    - ``type`` 0 is a time record: ``extra_info`` 0 the time to get the batch from the pipeline,
      1 the time to push it to the device (TDT), 2 the whole batch time; ``value`` in ms.
    - ``type`` 1 is a queue record: ``extra_info`` is the queue's capacity and ``value`` how many
      batches were in it when batch ``batch_num`` was taken. A batch that finds the queue empty
      waited for the pipeline: the device side was starved.
``minddata_aicpu_<id>.txt`` (Ascend) / ``minddata_getnext_profiling_<id>.txt`` (GPU)
    The device side's ``GetNext``: ``GetNext... start end queue_size`` per batch (µs on Ascend, ns
    on GPU). An empty queue here, while the host's device queue is not empty, means the transfer
    to the device is the slow part.
``minddata_cpu_utilization_<id>.json``
    Sampled CPU utilization (percent): ``device_info`` for the whole host, ``op_info`` per operator
    (``metrics.user_utilization`` / ``sys_utilization`` lists, ``op_id`` -1 for the rest).

Only these names are read, from the folder the span's timeline was found in; the device id
comes from the timeline's file name (digits only), never from a request.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ...model.units import NS_PER_US, US_PER_MS

# File names, by what they hold; ``{id}`` is the device (rank) id.
PIPELINE_CSV = "minddata_pipeline_raw_{id}.csv"
PIPELINE_JSON = "pipeline_profiling_{id}.json"
DEVICE_QUEUE = "device_queue_profiling_{id}.txt"
DATASET_ITERATOR = "dataset_iterator_profiling_{id}.txt"
GET_NEXT_ASCEND = "minddata_aicpu_{id}.txt"
GET_NEXT_GPU = "minddata_getnext_profiling_{id}.txt"
CPU_UTILIZATION = "minddata_cpu_utilization_{id}.json"
FILE_TEMPLATES = (PIPELINE_CSV, PIPELINE_JSON, DEVICE_QUEUE, DATASET_ITERATOR, GET_NEXT_ASCEND, GET_NEXT_GPU,
                  CPU_UTILIZATION)

# Largest MindData file read (a device queue file has 4 short lines per batch).
MAX_FILE_BYTES = 32 << 20

_TIMELINE_NAME = re.compile(r"^(?:ascend|gpu)_timeline_display_(\d{1,6})\.json(\.gz)?$")
_RANK_WORKER = re.compile(r"^rank(\d{1,6})$")
_MINDSPORE_TIMELINE = "trace_view.json"

# --- the rules (fractions 0..1) -----------------------------------------------------------------
# A device queue empty for more than this share of the batches: the pipeline cannot keep up with the
# device (MindInsight warns at the same share).
DEVICE_QUEUE_EMPTY_LIMIT = 0.3
# Fewer batches than this say nothing: the first batch always finds the queue empty.
MIN_QUEUE_BATCHES = 3
# An operator whose input queue is fuller than its output queue by more than this consumes slower than
# its child produces (MindInsight flags the same gap between a child's and its parent's queue).
QUEUE_GAP = 0.1
# A source operator whose output queue stays below this share full cannot feed the operators after it
# (MindSpore's analyser warns about a leaf below the same share).
SOURCE_QUEUE_LOW = 0.5
# Mean CPU utilization per worker above this: the operator is CPU-bound, more workers would help
# (MindSpore's analyser uses the same limit).
CPU_PER_WORKER_HIGH = 0.75


class MindDataFormatError(ValueError):
    """A MindData file does not have the documented format; the message names what is wrong."""


# --- file names --------------------------------------------------------------------------------


def device_id_for(timeline_name: str, worker: str = "") -> Optional[str]:
    """The device id whose MindData files belong to a MindSpore timeline, else None.

    ``ascend_timeline_display_<id>.json`` (or ``gpu_...``) names it; a ``trace_view.json`` timeline
    belongs to the worker ``rank<id>`` that discovery derived from its folder.
    """
    match = _TIMELINE_NAME.match(timeline_name)
    if match:
        return str(int(match[1]))
    if timeline_name == _MINDSPORE_TIMELINE:
        rank = _RANK_WORKER.match(worker)
        return str(int(rank[1])) if rank else None
    return None


def file_names(device_id: str) -> list[str]:
    """The only names read for a device: the known templates with a digits-only id."""
    if not device_id.isdigit():
        raise ValueError("a device id is digits only")
    return [template.format(id=device_id) for template in FILE_TEMPLATES]


# --- parsed data -------------------------------------------------------------------------------


@dataclass
class PipelineOperator:
    op_id: int
    op_type: str
    num_workers: Optional[int]
    queue_sizes: list[float]  # sampled output-queue fill levels
    queue_capacity: Optional[int]
    sample_interval_ms: Optional[float]
    parent_id: Optional[int]
    children_ids: list[int]
    cpu_utilization: Optional[float] = None  # mean user+sys, fraction

    @property
    def has_queue(self) -> bool:
        return bool(self.queue_sizes) and bool(self.queue_capacity)

    @property
    def queue_average_size(self) -> Optional[float]:
        return sum(self.queue_sizes) / len(self.queue_sizes) if self.queue_sizes else None

    @property
    def queue_usage(self) -> Optional[float]:
        average = self.queue_average_size
        return average / self.queue_capacity if average is not None and self.queue_capacity else None

    @property
    def queue_empty_rate(self) -> Optional[float]:
        if not self.queue_sizes:
            return None
        return sum(1 for size in self.queue_sizes if size == 0) / len(self.queue_sizes)

    @property
    def cpu_per_worker(self) -> Optional[float]:
        if self.cpu_utilization is None or not self.num_workers:
            return None
        return self.cpu_utilization / self.num_workers

    def to_json(self) -> dict[str, Any]:
        return {
            "op_id": self.op_id,
            "op_type": self.op_type,
            "num_workers": self.num_workers,
            "queue_sizes": self.queue_sizes,
            "queue_average_size": self.queue_average_size,
            "queue_capacity": self.queue_capacity,
            "queue_usage": self.queue_usage,
            "queue_empty_rate": self.queue_empty_rate,
            "sample_interval": self.sample_interval_ms * US_PER_MS if self.sample_interval_ms is not None else None,
            "parent_id": self.parent_id,
            "children_ids": self.children_ids,
            "cpu_utilization": self.cpu_utilization,
            "cpu_per_worker": self.cpu_per_worker,
        }


@dataclass
class QueueTrace:
    """The device queue (or the feed-mode dataset iterator's queue), per batch."""

    source: str  # "device_queue" or "dataset_iterator"
    batches: list[int] = field(default_factory=list)  # batch numbers of the queue records
    sizes: list[int] = field(default_factory=list)  # batches in the queue when that batch was taken
    capacity: Optional[int] = None
    pipeline_ms: list[float] = field(default_factory=list)  # time to get a batch from the pipeline
    push_ms: list[float] = field(default_factory=list)  # time to push it to the device
    batch_ms: list[float] = field(default_factory=list)  # whole time per batch

    @property
    def empty_batches(self) -> int:
        return sum(1 for size in self.sizes if size == 0)

    @property
    def full_batches(self) -> int:
        return sum(1 for size in self.sizes if self.capacity and size >= self.capacity)

    @property
    def empty_rate(self) -> Optional[float]:
        return self.empty_batches / len(self.sizes) if self.sizes else None

    def to_json(self) -> dict[str, Any]:
        def mean_us(values: list[float]) -> Optional[float]:
            return sum(values) / len(values) * US_PER_MS if values else None

        return {
            "source": self.source,
            "batches": len(self.sizes),
            "empty_batches": self.empty_batches,
            "full_batches": self.full_batches,
            "empty_rate": self.empty_rate,
            "capacity": self.capacity,
            "mean_size": sum(self.sizes) / len(self.sizes) if self.sizes else None,
            "sizes": self.sizes,
            "mean_pipeline_time": mean_us(self.pipeline_ms),
            "mean_push_time": mean_us(self.push_ms),
            "mean_batch_time": mean_us(self.batch_ms),
        }


@dataclass
class GetNextTrace:
    """The device side's GetNext: how long each batch waited and how full its queue was."""

    waits_us: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)

    @property
    def empty_batches(self) -> int:
        return sum(1 for size in self.sizes if size == 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "batches": len(self.sizes) or len(self.waits_us),
            "empty_batches": self.empty_batches,
            "empty_rate": self.empty_batches / len(self.sizes) if self.sizes else None,
            "mean_wait": sum(self.waits_us) / len(self.waits_us) if self.waits_us else None,
        }


# --- parsers (text → data; MindDataFormatError on a wrong format) --------------------------------


def _json_list(text: str, what: str) -> list[Any]:
    if text.strip() == "":
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise MindDataFormatError(f"{what} is not a JSON list: {text[:40]!r}") from None
    if not isinstance(value, list):
        raise MindDataFormatError(f"{what} is not a JSON list: {text[:40]!r}")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise MindDataFormatError(f"{what} is not a number: {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise MindDataFormatError(f"{what} is not a number: {str(value)[:40]!r}") from None
    if not math.isfinite(number):
        raise MindDataFormatError(f"{what} is not finite: {value!r}")
    return number


def _integer(value: Any, what: str) -> int:
    number = _number(value, what)
    if number != int(number):
        raise MindDataFormatError(f"{what} is not an integer: {value!r}")
    return int(number)


def _optional_integer(text: str, what: str) -> Optional[int]:
    return None if text.strip() == "" else _integer(text, what)


_CSV_COLUMNS = ("op_id", "op_type", "num_workers", "output_queue_size", "output_queue_length", "sample_interval",
                "parent_id", "children_id")


def parse_pipeline_csv(text: str) -> list[PipelineOperator]:
    """``minddata_pipeline_raw_<id>.csv`` → operators (see the module docstring for the columns)."""
    # newline="": a bare carriage return ends a row as csv expects, instead of raising csv.Error mid-field.
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        fieldnames = reader.fieldnames
        rows = list(reader)
    except csv.Error as exc:
        raise MindDataFormatError(f"line {reader.line_num}: not a CSV row ({exc})") from None
    missing = [c for c in _CSV_COLUMNS if c not in (fieldnames or [])]
    if missing:
        raise MindDataFormatError(f"missing columns {', '.join(missing)}")
    operators = []
    for line, row in enumerate(rows, start=2):
        where = f"line {line}"
        sizes = [_number(v, f"{where}: output_queue_size") for v in _json_list(row["output_queue_size"] or "",
                                                                             f"{where}: output_queue_size")]
        operators.append(PipelineOperator(
            op_id=_integer(row["op_id"], f"{where}: op_id"),
            op_type=(row["op_type"] or "").strip() or "operator",
            num_workers=_optional_integer(row["num_workers"] or "", f"{where}: num_workers"),
            queue_sizes=sizes,
            queue_capacity=_optional_integer(row["output_queue_length"] or "", f"{where}: output_queue_length"),
            sample_interval_ms=_number(row["sample_interval"], f"{where}: sample_interval")
            if (row["sample_interval"] or "").strip() else None,
            parent_id=_optional_integer(row["parent_id"] or "", f"{where}: parent_id"),
            children_ids=[_integer(c, f"{where}: children_id") for c in _json_list(row["children_id"] or "",
                                                                                 f"{where}: children_id")],
        ))
    if not operators:
        raise MindDataFormatError("no operators")
    return operators


def parse_pipeline_json(text: str) -> list[PipelineOperator]:
    """``pipeline_profiling_<id>.json`` → operators that have an output queue, children skipping the others."""
    try:
        info = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MindDataFormatError(f"not JSON ({exc.msg})") from None
    if not isinstance(info, dict) or not isinstance(info.get("op_info"), list) or not info["op_info"]:
        raise MindDataFormatError("no op_info list")
    interval = info.get("sampling_interval")
    interval_ms = _number(interval, "sampling_interval") if interval is not None else None
    by_id: dict[int, dict[str, Any]] = {}
    for index, item in enumerate(info["op_info"]):
        if not isinstance(item, dict):
            raise MindDataFormatError(f"op_info[{index}] is not an object")
        by_id[_integer(item.get("op_id"), f"op_info[{index}].op_id")] = item

    def queue_of(item: dict[str, Any]) -> Optional[dict[str, Any]]:
        metrics = item.get("metrics")
        queue = metrics.get("output_queue") if isinstance(metrics, dict) else None
        return queue if isinstance(queue, dict) else None

    def queued_children(op_id: int, seen: set[int]) -> list[int]:
        """Children with a queue; an operator without one is looked through (MindSpore's CSV does the same)."""
        out: list[int] = []
        children = by_id.get(op_id, {}).get("children") or []
        if not isinstance(children, list):
            raise MindDataFormatError(f"children of operator {op_id} is not a list")
        for child in children:
            child_id = _integer(child, f"children of operator {op_id}")
            if child_id in seen or child_id not in by_id:
                continue
            seen.add(child_id)
            out.extend([child_id] if queue_of(by_id[child_id]) else queued_children(child_id, seen))
        return out

    operators: dict[int, PipelineOperator] = {}
    for op_id, item in sorted(by_id.items()):
        queue = queue_of(item)
        if queue is None:
            continue
        sizes = queue.get("size") or []
        if not isinstance(sizes, list):
            raise MindDataFormatError(f"output_queue.size of operator {op_id} is not a list")
        workers = item.get("num_workers")
        capacity = queue.get("length")
        operators[op_id] = PipelineOperator(
            op_id=op_id, op_type=str(item.get("op_type") or "operator"),
            num_workers=_integer(workers, f"num_workers of operator {op_id}") if workers is not None else None,
            queue_sizes=[_number(v, f"output_queue.size of operator {op_id}") for v in sizes],
            queue_capacity=_integer(capacity, f"output_queue.length of operator {op_id}") if capacity is not None
            else None,
            sample_interval_ms=interval_ms, parent_id=None, children_ids=queued_children(op_id, {op_id}),
        )
    for op in operators.values():
        for child in op.children_ids:
            if child in operators:
                operators[child].parent_id = op.op_id
    if not operators:
        raise MindDataFormatError("no operator has an output queue")
    return list(operators.values())


def parse_queue_trace(text: str, source: str) -> QueueTrace:
    """``device_queue_profiling_<id>.txt`` / ``dataset_iterator_profiling_<id>.txt`` (see the module docstring)."""
    trace = QueueTrace(source=source)
    times = {0: trace.pipeline_ms, 1: trace.push_ms, 2: trace.batch_ms}
    queue_rows: list[tuple[int, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 4:
            raise MindDataFormatError(f"line {number}: expected 'type extra_info batch_num value', got {line[:60]!r}")
        kind = _integer(fields[0], f"line {number}: type")
        extra = _integer(fields[1], f"line {number}: extra_info")
        batch = _integer(fields[2], f"line {number}: batch_num")
        value = _number(fields[3], f"line {number}: value")
        if kind == 0:
            if extra in times:
                times[extra].append(value)
        elif kind == 1:
            trace.capacity = extra
            queue_rows.append((batch, int(value)))
        else:
            raise MindDataFormatError(f"line {number}: unknown record type {kind}")
    queue_rows.sort(key=lambda row: row[0])  # by batch, as MindInsight orders them
    trace.batches = [batch for batch, _ in queue_rows]
    trace.sizes = [size for _, size in queue_rows]
    if not trace.sizes and not any(times.values()):
        raise MindDataFormatError("no records")
    return trace


def parse_get_next(text: str, ns_timestamps: bool) -> GetNextTrace:
    """``GetNext... start end queue_size`` lines; other lines of the file are not GetNext records."""
    trace = GetNextTrace()
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or not fields[0].startswith("GetNext"):
            continue
        if len(fields) > 2:
            wait = _number(fields[2], f"line {number}: end") - _number(fields[1], f"line {number}: start")
            trace.waits_us.append(wait / NS_PER_US if ns_timestamps else wait)
        if len(fields) > 3:
            trace.sizes.append(_integer(fields[3], f"line {number}: queue size"))
    if not trace.sizes and not trace.waits_us:
        raise MindDataFormatError("no GetNext records")
    return trace


@dataclass
class CpuUtilization:
    host: Optional[float]  # mean user+sys of the whole host, fraction
    per_op: dict[int, float]  # op id → mean user+sys, fraction
    processors: Optional[int]


def _mean_user_sys(metrics: Any, what: str) -> Optional[float]:
    if not isinstance(metrics, dict):
        return None
    user, system = metrics.get("user_utilization") or [], metrics.get("sys_utilization") or []
    if not isinstance(user, list) or not isinstance(system, list):
        raise MindDataFormatError(f"{what}: utilization is not a list")
    samples = [_number(u, what) + _number(s, what) for u, s in zip(user, system)]
    return sum(samples) / len(samples) / 100.0 if samples else None


def parse_cpu_utilization(text: str) -> CpuUtilization:
    try:
        info = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MindDataFormatError(f"not JSON ({exc.msg})") from None
    if not isinstance(info, dict):
        raise MindDataFormatError("not a JSON object")
    per_op: dict[int, float] = {}
    for index, op in enumerate(info.get("op_info") or []):
        if not isinstance(op, dict):
            raise MindDataFormatError(f"op_info[{index}] is not an object")
        op_id = _integer(op.get("op_id"), f"op_info[{index}].op_id")
        mean = _mean_user_sys(op.get("metrics"), f"op_info[{index}]")
        if op_id >= 0 and mean is not None:  # -1 gathers what is not any operator's
            per_op[op_id] = mean
    processors = info.get("cpu_processor_num")
    return CpuUtilization(host=_mean_user_sys(info.get("device_info"), "device_info"), per_op=per_op,
                          processors=_integer(processors, "cpu_processor_num") if processors is not None else None)


# --- the analysis ------------------------------------------------------------------------------


def find_bottleneck(operators: list[PipelineOperator]) -> Optional[dict[str, Any]]:
    """The operator that holds the pipeline back, judged from how full the queues between operators stay.

    An operator's output queue is the buffer between it and its parent (its consumer). Rows pile up
    before a slow operator and its consumer starves, so:

    1. Slow operator: an operator whose input queue (its children's output queues) stays fuller than its
       own output queue by more than ``QUEUE_GAP`` takes rows faster than it can pass them on. The one
       with the largest gap is the bottleneck.
    2. Slow source: otherwise, a source operator (no children) whose own output queue stays below
       ``SOURCE_QUEUE_LOW`` full cannot even fill the first queue, so everything after it waits for it;
       the emptiest such source is the bottleneck (reading or decoding the data is the slow part).
    3. Otherwise the queues stay full all along: the pipeline produces faster than it is consumed, and
       no operator is the bottleneck.

    A CPU-bound operator (mean utilization per worker above ``CPU_PER_WORKER_HIGH``) is named in the
    recommendation of rule 1 or 2 when it is the bottleneck.
    """
    queued = {op.op_id: op for op in operators if op.queue_usage is not None}
    best: Optional[tuple[float, PipelineOperator, float, float]] = None  # (gap, operator, input, output)
    for op in queued.values():
        inputs = [queued[c].queue_usage for c in op.children_ids if c in queued]
        if not inputs:
            continue
        input_usage = max(u for u in inputs if u is not None)
        output_usage = op.queue_usage or 0.0
        gap = input_usage - output_usage
        if gap > QUEUE_GAP and (best is None or gap > best[0]):
            best = (gap, op, input_usage, output_usage)
    if best is not None:
        gap, op, input_usage, output_usage = best
        return {
            "op_id": op.op_id, "op_type": op.op_type, "rule": "slow_operator",
            "reason": f"its input queue stays {input_usage:.0%} full but its output queue only {output_usage:.0%}, "
                      "so it takes rows faster than it passes them on and the operators after it wait",
            "evidence": {"input_queue_utilization": input_usage, "output_queue_utilization": output_usage},
        }
    sources = [op for op in queued.values() if not [c for c in op.children_ids if c in queued]
               and (op.queue_usage or 0.0) < SOURCE_QUEUE_LOW]
    if sources:
        op = min(sources, key=lambda o: (o.queue_usage or 0.0, -o.op_id))
        return {
            "op_id": op.op_id, "op_type": op.op_type, "rule": "slow_source",
            "reason": f"it reads the data and its output queue stays only {op.queue_usage or 0.0:.0%} full, "
                      "so the operators after it have nothing to work on",
            "evidence": {"output_queue_utilization": op.queue_usage or 0.0},
        }
    return None


def chain_order(operators: list[PipelineOperator]) -> list[int]:
    """Operator ids in data-flow order: sources first, the root (nearest the device) last."""
    by_id = {op.op_id: op for op in operators}
    order: list[int] = []
    seen: set[int] = set()

    def visit(op_id: int) -> None:  # children before parents; pipelines are a few operators deep
        if op_id in seen or op_id not in by_id:
            return
        seen.add(op_id)
        for child in by_id[op_id].children_ids:
            visit(child)
        order.append(op_id)

    roots = [op.op_id for op in operators if op.parent_id is None or op.parent_id not in by_id]
    for op_id in sorted(roots) + sorted(by_id):
        visit(op_id)
    return order


def queue_verdict(device_queue: Optional[QueueTrace], get_next: Optional[GetNextTrace]) -> Optional[dict[str, Any]]:
    """Whether the device waited for the pipeline, from how often its queue was empty (None: too few batches)."""
    if device_queue is None or len(device_queue.sizes) < MIN_QUEUE_BATCHES:
        return None
    rate = device_queue.empty_rate or 0.0
    evidence: dict[str, Any] = {"empty_batches": device_queue.empty_batches, "batches": len(device_queue.sizes),
                                "empty_batch_share": rate}
    if rate > DEVICE_QUEUE_EMPTY_LIMIT:
        return {"status": "data_bound", "stage": "data_processing", "evidence": evidence,
                "text": f"The device queue was empty for {device_queue.empty_batches} of {len(device_queue.sizes)} "
                        "batches: the dataset pipeline cannot keep up with the device."}
    if get_next is not None and get_next.empty_batches > 0:
        evidence.update(get_next_empty_batches=get_next.empty_batches, get_next_batches=len(get_next.sizes))
        return {"status": "some_wait", "stage": "data_transmission", "evidence": evidence,
                "text": f"The host's device queue is rarely empty, but the device's GetNext found its queue empty "
                        f"{get_next.empty_batches} times: sending batches to the device is the slow part."}
    return {"status": "not_data_bound", "stage": None, "evidence": evidence,
            "text": f"The device queue was empty for only {device_queue.empty_batches} of {len(device_queue.sizes)} "
                    "batches: the dataset pipeline keeps up with the device."}


def _recommendations(operators: list[PipelineOperator], bottleneck: Optional[dict[str, Any]],
                     verdict: Optional[dict[str, Any]]) -> list[dict[str, Any]]:
    recs: list[dict[str, Any]] = []
    by_id = {op.op_id: op for op in operators}
    if bottleneck is not None:
        op = by_id[bottleneck["op_id"]]
        workers = f" (now {op.num_workers})" if op.num_workers is not None else ""
        cpu = op.cpu_per_worker
        if cpu is not None and cpu > CPU_PER_WORKER_HIGH:
            advice = f"Its workers are busy ({cpu:.0%} CPU each): raise its num_parallel_workers{workers}."
        elif bottleneck["rule"] == "slow_source":
            advice = (f"Raise its num_parallel_workers{workers}, read from faster storage, or cache the decoded "
                      "data (MindSpore's dataset cache).")
        else:
            advice = (f"Raise its num_parallel_workers{workers}, make its transforms cheaper, or raise "
                      "prefetch_size (mindspore.dataset.config.set_prefetch_size).")
        recs.append({
            "id": "minddata_bottleneck",
            "text": f"{op.op_type} (operator {op.op_id}) holds the dataset pipeline back: {bottleneck['reason']}. "
                    + advice,
            "evidence": {"op_id": op.op_id, "op_type": op.op_type, **bottleneck["evidence"],
                         **({"cpu_per_worker_utilization": cpu} if cpu is not None else {})},
        })
    if verdict is not None and verdict.get("stage") == "data_transmission":
        recs.append({
            "id": "minddata_transmission",
            "text": "Batches reach the device late although the host's pipeline keeps up: check the host-to-device "
                    "transfer (batch size in bytes, data types, the sink size).",
            "evidence": dict(verdict["evidence"]),
        })
    return recs


def read_minddata(read: Callable[[str], Optional[bytes]], device_id: str) -> Optional[dict[str, Any]]:
    """The MindData pipeline of one device, or None when none of its files is there.

    ``read(name)`` returns a file's bytes from the span's folder (None when absent); only the names of
    ``file_names(device_id)`` are asked for. A garbled file becomes a note, never an exception.
    """
    notes: list[str] = []
    files: list[str] = []

    def text_of(template: str) -> Optional[str]:
        name = template.format(id=device_id)
        data = read(name)
        if data is None:
            return None
        files.append(name)
        if len(data) > MAX_FILE_BYTES:
            notes.append(f"{name} is larger than {MAX_FILE_BYTES >> 20} MB and was not read.")
            return None
        return data.decode("utf-8", errors="replace")

    def parse(template: str, parser: Callable[[str], Any]) -> Any:
        text = text_of(template)
        if text is None:
            return None
        try:
            return parser(text)
        except MindDataFormatError as exc:
            notes.append(f"{template.format(id=device_id)} could not be read: {exc}.")
            return None

    if not device_id.isdigit():
        return None
    operators = parse(PIPELINE_CSV, parse_pipeline_csv)
    if operators is None:
        operators = parse(PIPELINE_JSON, parse_pipeline_json)
    device_queue = parse(DEVICE_QUEUE, lambda t: parse_queue_trace(t, "device_queue"))
    if device_queue is None:
        device_queue = parse(DATASET_ITERATOR, lambda t: parse_queue_trace(t, "dataset_iterator"))
    get_next = parse(GET_NEXT_ASCEND, lambda t: parse_get_next(t, ns_timestamps=False))
    if get_next is None:
        get_next = parse(GET_NEXT_GPU, lambda t: parse_get_next(t, ns_timestamps=True))
    cpu = parse(CPU_UTILIZATION, parse_cpu_utilization)
    if not files:
        return None

    operators = operators or []
    if cpu is not None:
        for op in operators:
            op.cpu_utilization = cpu.per_op.get(op.op_id)
    if not operators:
        notes.append("No MindData pipeline operators (minddata_pipeline_raw / pipeline_profiling file) were read.")
    if device_queue is None:
        notes.append("No device queue records (device_queue_profiling / dataset_iterator_profiling file) were read.")
    elif len(device_queue.sizes) < MIN_QUEUE_BATCHES:
        notes.append(f"The device queue has {len(device_queue.sizes)} batch record(s): too few to say whether the "
                     "device waited for data (the first batch always finds the queue empty).")
    bottleneck = find_bottleneck(operators)
    verdict = queue_verdict(device_queue, get_next)
    return {
        "device_id": device_id,
        "files": files,
        "operators": [op.to_json() for op in operators],
        "chain": chain_order(operators),
        "device_queue": device_queue.to_json() if device_queue is not None else None,
        "get_next": get_next.to_json() if get_next is not None else None,
        "host_cpu_utilization": cpu.host if cpu is not None else None,
        "bottleneck": bottleneck,
        "verdict": verdict,
        "recommendations": _recommendations(operators, bottleneck, verdict),
        "notes": notes,
    }
