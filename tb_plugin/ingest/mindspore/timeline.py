"""MindSpore's device timelines of the MindInsight era → the model's conventions.

MindSpore 1.x to 2.2 writes, per device, ``ascend_timeline_display_<id>.json`` (Ascend) or
``gpu_timeline_display_<id>.json`` (GPU) into its profiler folder: a bare JSON array of ``X``
events with no categories. What an event is, the writer says with fixed process ids (and, from
MindSpore 1.6 on, ``thread_name`` metadata; ``process_labels`` name the processes, never
``process_name``):

======================  =====================================================================
pid = the device id     the device's own tasks, one thread per stream (``"519"`` or
                        ``"Stream #519"``): Ascend AI Core tasks, or GPU kernels; and the
                        threads ``Steps`` (one range per step, named ``"1"``, ``"2"``...),
                        ``Scope Name`` (scope ranges over the tasks) and, on GPU, ``Ops``
                        / ``GpuOps`` (one range per operator execution)
9000                    Ascend AI CPU tasks (``GetNext``, ``InitData``... data queue kernels)
10000                   communication tasks (HCCL / NCCL collectives)
11000                   host CPU operators (``HostCpuOps``)
12000                   overlap analysis: merged computation, pure communication, free time
                        (derived from the other rows, not recorded)
13000                   GPU activities (kernels) in some versions
======================  =====================================================================

``normalise`` maps these onto the categories ``model/categories.py`` classifies, in place on the
decoded columns, before ``model.build``:

* Device tasks, AI CPU tasks, communication tasks and GPU activities are ``kernel`` (GPU copies
  and memsets by name are ``gpu_memcpy`` / ``gpu_memset``): device time, on lanes of their device,
  with ``device`` = the device id and ``stream`` = the stream's number.
* GPU operator executions (``Ops``) are ``Operator`` ranges; a GPU kernel belongs to the operator
  execution whose range contains it (the file names no launch ids; MindSpore records an operator's
  range around its kernels when it synchronises the stream, else a kernel stays unattributed).
* Host CPU operators are MindSpore's ``CPU OP`` (as in the CPU profiler's timeline).
* ``Steps`` ranges become ``ProfilerStep#<n>``, the product's step convention, so the overview
  breaks time down per step; ``Scope Name`` and overlap-analysis rows keep their own category
  (``Scope Name``, ``Overlap Analysis``), which no view counts as time.
* Ascend graph mode runs the whole graph on the device: its timeline has no host operators, each
  task is one operator instance named ``<Type>-op<N>`` (``Conv2D-op12``). So that the operator view
  still answers per operator type, each task gets an operator record: a zero-length ``Operator``
  slice named by its type, at the task's start, on a thread ``operators (device time only)`` of the
  device's process, linked to the task (a shared External id). It carries no host time (0 µs), so it
  adds nothing to any breakdown; its device time is the task's. Communication tasks' records are
  also named as collectives, so the distributed view sees them.

Process names are added where the file has none (``MindSpore``, ``Host CPU``...), and, for an Ascend
timeline, a ``deviceProperties`` entry naming the device ``Ascend <id>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

import numpy as np

from ...model.categories import MINDSPORE_OPERATOR_PROCESS, operator_type

if TYPE_CHECKING:
    from ...model.interning import StringTable
    from ...model.raw_columns import RawColumns

AI_CPU_PID = "9000"
COMMUNICATION_PID = "10000"
HOST_CPU_PID = "11000"
OVERLAP_PID = "12000"
GPU_ACTIVITY_PID = "13000"

# Categories given here (see model/categories.py for what each one counts as).
KERNEL, MEMCPY, MEMSET, OPERATOR = "kernel", "gpu_memcpy", "gpu_memset", "Operator"
HOST_OPERATOR = MINDSPORE_OPERATOR_PROCESS  # MindSpore's own name for host operators, as in its CPU timeline
SCOPE_CATEGORY = "Scope Name"
OVERLAP_CATEGORY = "Overlap Analysis"
STEP_NAME_FORMAT = "ProfilerStep#{}"
OPERATOR_THREAD = "operators (device time only)"

_STEPS_THREAD = "Steps"
_SCOPE_THREAD = "Scope Name"
_GPU_OP_THREADS = frozenset({"Ops", "GpuOps"})
_HOST_OP_THREAD = re.compile(r"^(?:HostCpuOps|Host CPU Op)", re.IGNORECASE)
_STREAM_NUMBER = re.compile(r"^(?:Stream\s*#?\s*)?(\d+)$", re.IGNORECASE)
_MEMCPY_NAME = re.compile(r"memcpy", re.IGNORECASE)
_MEMSET_NAME = re.compile(r"memset", re.IGNORECASE)


class Role(IntEnum):
    """What the rows of one (process, thread) of the timeline are."""

    DEVICE_TASK = 0  # a stream of the device: Ascend AI Core tasks or GPU kernels
    AI_CPU = 1
    COMMUNICATION = 2
    GPU_ACTIVITY = 3
    DEVICE_OPERATOR = 4  # GPU operator executions ("Ops")
    HOST_OPERATOR = 5
    STEPS = 6
    SCOPE = 7
    OVERLAP = 8


DEVICE_WORK_ROLES = (Role.DEVICE_TASK, Role.AI_CPU, Role.COMMUNICATION, Role.GPU_ACTIVITY)
_THREAD_NAMES = {Role.AI_CPU: "AI CPU", Role.COMMUNICATION: "Communication"}
_PROCESS_NAMES = {HOST_CPU_PID: "Host CPU", OVERLAP_PID: "Op Overlap Analysis"}


@dataclass(frozen=True)
class MetadataArgs:
    """The ``args`` of a metadata event this module adds (the fields ``model.build`` reads)."""

    name: str = ""
    labels: str = ""
    sort_index: int = -1


def role_of(pid: str, thread: str) -> Role:
    """The role of a (process id, thread label) of the timeline (see the module docstring)."""
    if pid == AI_CPU_PID:
        return Role.AI_CPU
    if pid == COMMUNICATION_PID:
        return Role.COMMUNICATION
    if pid == HOST_CPU_PID or _HOST_OP_THREAD.match(thread):
        return Role.HOST_OPERATOR
    if pid == OVERLAP_PID:
        return Role.OVERLAP
    if pid == GPU_ACTIVITY_PID:
        return Role.GPU_ACTIVITY
    if thread == _STEPS_THREAD:
        return Role.STEPS
    if thread == _SCOPE_THREAD:
        return Role.SCOPE
    if thread in _GPU_OP_THREADS:
        return Role.DEVICE_OPERATOR
    return Role.DEVICE_TASK


def is_device_timeline(raw: RawColumns) -> bool:
    """A MindInsight-era timeline: slices, and no ``process_name`` metadata (MindSpore's later timelines name
    every process; these never do)."""
    if any(kind == "process_name" for kind, _pid, _tid, _args in raw.meta_events):
        return False
    return bool(raw.parts.get("slices", {}).get("pid"))


def normalise(raw: RawColumns) -> None:
    """Apply the conventions of the module docstring to the decoded columns, in place."""
    store = raw.parts.get("slices", {})
    if not store.get("pid"):
        return
    columns = {key: np.concatenate(chunks) for key, chunks in store.items() if chunks}
    strings = raw.strings
    text = strings.strings
    thread_label = {(pid, tid): args.name for kind, pid, tid, args in raw.meta_events
                    if kind == "thread_name" and getattr(args, "name", "")}
    pid, tid = columns["pid"].astype(np.int64), columns["tid"].astype(np.int64)
    keys, key_of_row = np.unique((pid << 32) | tid, return_inverse=True)
    key_of_row = key_of_row.reshape(-1)
    key_pairs = [(int(k >> 32), int(k & 0xFFFFFFFF)) for k in keys.tolist()]
    labels = [thread_label.get((p, t)) or text[t] for p, t in key_pairs]
    key_roles = np.array([role_of(text[p], label) for (p, _t), label in zip(key_pairs, labels)], dtype=np.int8)
    role = key_roles[key_of_row]

    device = _device_id(text, columns["pid"], role)
    is_gpu = bool(np.isin(role, (Role.DEVICE_OPERATOR, Role.GPU_ACTIVITY)).any())
    rows_by_role = {Role(r).name.lower(): int(n) for r, n in zip(*np.unique(role, return_counts=True))}

    _set_categories(raw, columns, role, is_gpu)
    work = np.isin(role, DEVICE_WORK_ROLES)
    if device >= 0:
        columns["device"][work] = device
    stream_of_key = np.array([_stream_number(label) for label in labels], dtype=np.int64)
    columns["stream"][work] = stream_of_key[key_of_row][work]
    steps = role == Role.STEPS
    _rename_steps(strings, columns, steps)
    derived_steps = 0
    if not steps.any():
        sequence = Role.DEVICE_OPERATOR if is_gpu else Role.DEVICE_TASK
        derived_steps = _derive_steps(raw, columns, np.flatnonzero(role == sequence), device)
        role = np.concatenate([role, np.full(derived_steps, Role.STEPS, dtype=role.dtype)])
        work = np.concatenate([work, np.zeros(derived_steps, dtype=bool)])
    operator_records = 0
    if is_gpu:
        _link_to_enclosing_operators(columns, work, role == Role.DEVICE_OPERATOR)
    elif work.any():
        operator_records = _add_operator_records(raw, columns, role, device)
    for key, values in columns.items():
        store[key] = [values]
    _name_processes(raw, key_pairs, key_roles, device, is_gpu)
    if device >= 0 and not is_gpu and (role == Role.DEVICE_TASK).any():
        raw.metadata.setdefault("deviceProperties", [{"id": device, "name": f"Ascend {device}"}])
    raw.stats["mindspore_timeline"] = {
        "device": device, "device_kind": "gpu" if is_gpu else "ascend", "rows": rows_by_role,
        "derived_steps": derived_steps, "operator_records": operator_records,
    }


def _device_id(text: list[str], pids: np.ndarray, role: np.ndarray) -> int:
    """The device's id: the one process id of its own rows (tasks, steps, scopes, GPU operators), else -1."""
    own = np.isin(role, (Role.DEVICE_TASK, Role.STEPS, Role.SCOPE, Role.DEVICE_OPERATOR))
    found = {text[p] for p in np.unique(pids[own]).tolist()}
    if len(found) != 1:
        return -1
    (pid,) = found
    return int(pid) if pid.isdigit() else -1


def _stream_number(label: str) -> int:
    m = _STREAM_NUMBER.match(label)
    return int(m.group(1)) if m else -1


def _set_categories(raw: RawColumns, columns: dict[str, np.ndarray], role: np.ndarray, is_gpu: bool) -> None:
    """Category per row from its role; rows the writer gave a category keep it."""
    strings = raw.strings
    cat = columns["cat"]
    unset = cat == strings[""]
    by_role = {
        Role.DEVICE_TASK: KERNEL, Role.AI_CPU: KERNEL, Role.COMMUNICATION: KERNEL, Role.GPU_ACTIVITY: KERNEL,
        Role.DEVICE_OPERATOR: OPERATOR, Role.HOST_OPERATOR: HOST_OPERATOR, Role.SCOPE: SCOPE_CATEGORY,
        Role.OVERLAP: OVERLAP_CATEGORY,
    }
    new = cat.copy()
    for member, category in by_role.items():
        new[unset & (role == member)] = strings[category]
    if is_gpu:  # CUDA copies and memsets among the GPU's device work
        names = columns["name"]
        memcpy = np.array([bool(_MEMCPY_NAME.search(s)) for s in strings.strings], dtype=bool)
        memset = np.array([bool(_MEMSET_NAME.search(s)) for s in strings.strings], dtype=bool)
        work = unset & np.isin(role, DEVICE_WORK_ROLES)
        new[work & memcpy[names]] = strings[MEMCPY]
        new[work & memset[names]] = strings[MEMSET]
    counts = raw.stats.setdefault("categories", {})
    changed = new != cat
    for category_id, moved in zip(*np.unique(new[changed], return_counts=True)):
        label = strings.strings[int(category_id)]
        counts[label] = counts.get(label, 0) + int(moved)
        counts[""] = counts.get("", 0) - int(moved)
    if counts.get("") == 0:
        del counts[""]
    columns["cat"] = new


def _rename_steps(strings: StringTable, columns: dict[str, np.ndarray], rows: np.ndarray) -> None:
    """Step ranges named ``"1"``, ``"2"``... → ``ProfilerStep#1``... (other names are kept)."""
    names = columns["name"]
    for name_id in np.unique(names[rows]).tolist():  # once per distinct step name
        label = strings.strings[name_id]
        if label.isdigit():
            names[rows & (names == name_id)] = strings[STEP_NAME_FORMAT.format(int(label))]


def _derive_steps(raw: RawColumns, columns: dict[str, np.ndarray], rows: np.ndarray, device: int) -> int:
    """Step ranges as MindSpore's own timeline writer derives its ``Steps`` thread, for files without one.

    In time order, the step's first operator is the first one (after ``Default/InitDataSetQueue``)
    and its last operator the one just before the first operator comes round again; every run of
    the last operator ends a step that began at the latest run of the first one. Returns the number
    of step slices added (``ProfilerStep#1``... on a ``Steps`` thread of the device's process).
    """
    if len(rows) < 2 or device < 0:
        return 0
    strings = raw.strings
    start, end = columns["start"], columns["start"] + columns["dur"]
    rows = rows[np.lexsort((columns["event_id"][rows], start[rows]))]
    names = columns["name"][rows]
    skip = 1 if strings.strings[int(names[0])].rsplit("/", 1)[-1].startswith("InitDataSetQueue") else 0
    if len(rows) - skip < 2:
        return 0
    first = names[skip]
    again = np.flatnonzero(names[skip + 1:] == first)
    last = names[skip + again[0]] if len(again) else names[-1]
    starts = np.flatnonzero(names == first)
    ends = np.flatnonzero(names == last)
    began = np.searchsorted(starts, ends, side="right") - 1  # the latest run of the first operator
    ends, began = ends[began >= 0], began[began >= 0]
    n = len(ends)
    if n == 0:
        return 0
    step_start = start[rows[starts[began]]]
    step_end = end[rows[ends]]
    first_event = _next_event_id(raw, columns)
    added = {key: np.full(n, _ABSENT.get(key, -1), dtype=values.dtype) for key, values in columns.items()}
    added.update(
        event_id=np.arange(first_event, first_event + n, dtype=np.int64),
        pid=np.full(n, strings[str(device)], dtype=columns["pid"].dtype),
        tid=np.full(n, strings[_STEPS_THREAD], dtype=columns["tid"].dtype),
        start=step_start.astype(columns["start"].dtype), dur=(step_end - step_start).astype(columns["dur"].dtype),
        name=np.array([strings[STEP_NAME_FORMAT.format(i + 1)] for i in range(n)], dtype=columns["name"].dtype),
        cat=np.full(n, strings[""], dtype=columns["cat"].dtype),
    )
    for key in columns:
        columns[key] = np.concatenate([columns[key], added[key]])
    raw.meta_events.append(("thread_name", strings[str(device)], strings[_STEPS_THREAD],
                            MetadataArgs(name=_STEPS_THREAD)))
    return n


# Absent values of the slice columns that are not -1 (see chrome/chunk_reader.py: ChunkReader._read_slices).
_ABSENT = {"blocks_per_sm": np.nan, "warps_per_sm": np.nan, "occupancy": np.nan, "relative_start_us": np.nan}


def _next_event_id(raw: RawColumns, columns: dict[str, np.ndarray]) -> int:
    """An event id past every event of the file and every row added so far."""
    ids = columns["event_id"]
    return max(raw.num_events, int(ids.max()) + 1 if len(ids) else 0)


def _link_to_enclosing_operators(columns: dict[str, np.ndarray], work: np.ndarray, operator: np.ndarray) -> None:
    """Give each GPU kernel the External id of the operator execution whose range contains it."""
    op_rows = np.flatnonzero(operator)
    kernel_rows = np.flatnonzero(work)
    if len(op_rows) == 0 or len(kernel_rows) == 0:
        return
    start, dur = columns["start"], columns["dur"]
    op_rows = op_rows[np.argsort(start[op_rows], kind="stable")]
    op_start, op_end = start[op_rows], start[op_rows] + dur[op_rows]
    # Operator executions run one after another: the candidate is the last one starting at or before the kernel.
    pos = np.searchsorted(op_start, start[kernel_rows], side="right") - 1
    safe = np.maximum(pos, 0)
    inside = (pos >= 0) & (start[kernel_rows] + dur[kernel_rows] <= op_end[safe])
    base = _next_external_id(columns)
    columns["external_id"][op_rows] = base + np.arange(len(op_rows))
    columns["external_id"][kernel_rows[inside]] = base + safe[inside]


def _next_external_id(columns: dict[str, np.ndarray]) -> int:
    existing = columns["external_id"]
    return int(existing.max()) + 1 if len(existing) and existing.max() >= 0 else 0


def _add_operator_records(raw: RawColumns, columns: dict[str, np.ndarray], role: np.ndarray, device: int) -> int:
    """One zero-length ``Operator`` slice per device task, named by its type and linked to it."""
    strings = raw.strings
    rows = np.flatnonzero(np.isin(role, (Role.DEVICE_TASK, Role.AI_CPU, Role.COMMUNICATION)))
    n = len(rows)
    base = _next_external_id(columns)
    link = base + np.arange(n, dtype=np.int64)
    columns["external_id"][rows] = link
    type_of = np.array([strings[operator_type(s)] for s in list(strings.strings)], dtype=np.int32)
    first_event = _next_event_id(raw, columns)
    record_pid = strings[str(device)] if device >= 0 else int(columns["pid"][rows[0]])
    added: dict[str, np.ndarray] = {}
    for key, values in columns.items():
        added[key] = values[rows].copy()
    names = type_of[columns["name"][rows]]
    added.update(
        event_id=np.arange(first_event, first_event + n, dtype=np.int64),
        pid=np.full(n, record_pid, dtype=columns["pid"].dtype),
        tid=np.full(n, strings[OPERATOR_THREAD], dtype=columns["tid"].dtype),
        dur=np.zeros(n, dtype=columns["dur"].dtype), name=names.astype(columns["name"].dtype),
        cat=np.full(n, strings[OPERATOR], dtype=columns["cat"].dtype), external_id=link,
        device=np.full(n, -1, dtype=columns["device"].dtype), stream=np.full(n, -1, dtype=columns["stream"].dtype),
    )
    # Communication tasks' records are collectives (the distributed view matches them across ranks by name).
    collective = added["collective"]
    communication = role[rows] == Role.COMMUNICATION
    collective[communication] = names[communication]
    for key in columns:
        columns[key] = np.concatenate([columns[key], added[key]])
    raw.meta_events.append(("thread_name", record_pid, strings[OPERATOR_THREAD], MetadataArgs(name=OPERATOR_THREAD)))
    counts = raw.stats.setdefault("categories", {})
    counts[OPERATOR] = counts.get(OPERATOR, 0) + n
    return n


def _name_processes(raw: RawColumns, key_pairs: list[tuple[int, int]], key_roles: np.ndarray, device: int,
                    is_gpu: bool) -> None:
    """Process and thread names where the file gives none (device lanes are named by ``model.build``)."""
    strings = raw.strings
    text = strings.strings
    named_threads = {(pid, tid) for kind, pid, tid, _args in raw.meta_events if kind == "thread_name"}
    meta: list[tuple[str, int, int, MetadataArgs]] = []
    pids = {p for p, _t in key_pairs}
    if device >= 0:
        pids.add(strings[str(device)])
    # Processes holding only the device's work (AI CPU, communication) belong to the Ascend device.
    device_pids = {p for (p, _t), role in zip(key_pairs, key_roles.tolist()) if Role(role) in DEVICE_WORK_ROLES}
    host_pids = {p for (p, _t), role in zip(key_pairs, key_roles.tolist()) if Role(role) not in DEVICE_WORK_ROLES}
    for pid in sorted(pids):
        name = _PROCESS_NAMES.get(text[pid])
        if name is None and not is_gpu and device >= 0 and pid in device_pids - host_pids:
            name = f"Ascend {device}"
        if name is None and text[pid] == str(device):
            # GPU files keep host operator threads in this process: model.build names its device lanes.
            name = "MindSpore" if is_gpu else f"Ascend {device}"
        if name:
            meta.append(("process_name", pid, strings[""], MetadataArgs(name=name)))
    for (pid, tid), key_role in zip(key_pairs, key_roles.tolist()):
        name = _THREAD_NAMES.get(Role(key_role))
        if name and (pid, tid) not in named_threads:
            meta.append(("thread_name", pid, tid, MetadataArgs(name=name)))
    raw.meta_events.extend(meta)
