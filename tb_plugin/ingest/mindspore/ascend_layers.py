"""The layers of an Ascend timeline (MindSpore 2.x ``trace_view.json``, msprof's ``msprof_<ts>.json``) → the model.

What the writers document
-------------------------
MindSpore 2.x on Ascend (``<span>_ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view.json``), torch_npu's Ascend
PyTorch Profiler (``<span>_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json``) and the msprof command
(``PROF_<...>/mindstudio_profiler_output/msprof_<timestamp>.json``) write one Chrome trace whose processes
are *layers*, each named by ``process_name`` metadata. Sources (Huawei's documentation, hiascend.com):

* "msprof (Timeline Report)", MindStudio / CANN Profiling guide (``atlasprofiling_16_0059``): the
  report's areas are the application layer (``Python``, or ``MindSpore``; ``CPU OP`` for MindSpore's host
  kernels), the CANN layer (``CANN``: AscendCL, Runtime and GE ``Node`` calls on host threads, e.g.
  ``AscendCL@aclnnAdd``, ``Node@launch``), and the NPU layer: ``Ascend Hardware`` (one thread per task
  stream), ``HCCL`` (renamed ``Communication`` in later CANN releases) and ``Overlap Analysis``, plus
  system rows such as ``AI Core Freq``. Flow events (``s``/``f``) join a launch on the host to the task
  it put on the device (categories ``async_npu``, ``HostToDevice``...).
* "task_time (Task Scheduler Information)" (``atlasprofiling_16_0062``): each ``Ascend Hardware`` thread
  is a stream (``Stream <id>``); a task's ``args`` give ``Task Type`` (``AI_CORE``, ``AI_VECTOR_CORE``,
  ``AI_CPU``...), ``Stream Id`` (the logical stream; ``Physic Stream Id`` the physical one) and ``Task Id``.
* "hccl_statistic (HCCL Operator Statistics)" (``atlasprofiling_16_0066``): the HCCL layer has, per
  communicator, a thread ``Group <name> Communication`` of communication operators (``hcom_allReduce_...``)
  and threads ``Plane <id>`` of the tasks each operator is made of (``Notify_Wait``, ``Memcpy``,
  ``Reduce_Inline``...); ``Overlap Analysis`` holds the derived rows ``Computing``, ``Communication``,
  ``Communication(Not Overlapped)`` and ``Free``.
* msprof's own timeline writer (the MindStudio ``msprof`` analysis sources: the Ascend Hardware and HCCL
  assemblers): an ``Ascend Hardware`` task is named after its operator when the task has one, else after its
  task type (``MEMCPY_ASYNC``, ``NOTIFY_WAIT``, ``EVENT_RECORD``...; the hardware's own kinds end in
  ``_SQE``: ``NOTIFY_WAIT_SQE``, ``SDMA_SQE``...). The tasks of a collective run on the hardware's streams
  (notify waits and records, SDMA copies, RDMA sends) and the HCCL layer's ``Plane`` threads show the same
  tasks again, with the same start and duration.
* "Timeline and Summary Data" of the Ascend PyTorch Profiler (``atlasprofiling_16_1149``): torch_npu's and
  MindSpore's ``trace_view.json`` carry the same layers.

What this module makes of them (``normalise``, in place on the decoded columns, after ``mindspore.py``;
only rows without a category of their own are given one):

=========================  ==================================================================================
``Ascend Hardware``        ``kernel`` on lanes of the device (device time); ``device`` = the device id,
                           ``stream`` = the number of its ``Stream <id>`` thread. A task named as a
                           communication operator (``hcom_...``, ``hccl...``) is communication: its
                           ``collective`` is its name, so ``model/categories.py`` counts it as a collective.
                           Tasks named after their task type are not kernels: copies (``MEMCPY_ASYNC``,
                           ``SDMA_SQE``, ``PCIE_DMA_SQE``) are ``Memcpy``; waits and records of events and
                           notifies (and other stream control) are ``Ascend Sync``: device activity that no
                           view counts as time. A task that is one of a collective's (the same start and
                           duration as a task of an HCCL ``Plane`` on the same device, or an RDMA send) is
                           ``HCCL Task``: the collective's time is counted once, from its HCCL operator.
``CANN``                   ``Runtime`` (runtime calls). A ``HostToDevice`` flow from a launch to a task links
                           them (``model/build.py`` links launches by any flow from a runtime call to a
                           device activity).
``HCCL`` / ``Communication``  operators on the ``Group ... Communication`` threads: communication kernels of
                           the device, unless ``Ascend Hardware`` already shows communication tasks (then
                           they would count twice and are kept as ``HCCL`` ranges that no view counts);
                           ``Plane`` threads' tasks subdivide those operators: ``HCCL Task``, not counted.
``Overlap Analysis``       ``Overlap Analysis``: derived from the other rows, no view counts it as time.
``AI Core Freq``           counter events (``C``): already counters, nothing to do.
``Python``                 ``Python`` (Python frames).
=========================  ==================================================================================

Limits: the decoder keeps only the ``args`` keys the views use, so ``Task Type`` is not read here: a task
is told by its name (msprof names a task without an operator after its task type), and AI Core, AI Vector
Core, mixed and AI CPU tasks are all kernels. The device id comes from the process's labels or name (``NPU 1``, ``Device 1``); a file that
names none gets 0, 1... in the order of its ``Ascend Hardware`` processes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from .timeline import KERNEL, OVERLAP_CATEGORY, MetadataArgs

if TYPE_CHECKING:
    from ...model.raw_columns import RawColumns

HARDWARE_LAYER = "Ascend Hardware"
CANN_LAYER = "CANN"
COMMUNICATION_LAYERS = frozenset({"HCCL", "Communication"})
OVERLAP_LAYER = "Overlap Analysis"
FREQUENCY_LAYER = "AI Core Freq"
PYTHON_LAYER = "Python"
# Layer names that tell an Ascend timeline (detect.py looks for them in a file's first bytes).
ASCEND_LAYERS = frozenset({HARDWARE_LAYER, CANN_LAYER, OVERLAP_LAYER, FREQUENCY_LAYER}) | COMMUNICATION_LAYERS
# Flow categories of the launch → task flows (counted as unknown by the decoder, which does not know Ascend).
ASCEND_FLOW_CATEGORIES = frozenset({"HostToDevice", "async_npu"})

# Categories given here (model/categories.py says what each counts as).
RUNTIME = "Runtime"
PYTHON = "Python"
HCCL_OPERATOR = "HCCL"  # an HCCL operator shown twice (also on Ascend Hardware): not counted
HCCL_TASK = "HCCL Task"
MEMCPY = "Memcpy"  # Kineto's device copy category (model/categories.py: memcpy)
SYNC = "Ascend Sync"  # waits and records of events and notifies: one of model.categories.DEVICE_SYNC_CATEGORIES

# Names msprof gives a hardware task without an operator: its task type (runtime name, or the hardware's
# "_SQE" kind). Copies, and stream control (waits, records, stream switches...) that computes nothing.
_COPY_TASKS = frozenset({"MEMCPY_ASYNC", "MEMCPY_ADDR_ASYNC", "SDMA_SQE", "PCIE_DMA_SQE"})
_CONTROL_TASKS = frozenset(
    {"EVENT_RECORD", "EVENT_WAIT", "EVENT_RESET", "NOTIFY_RECORD", "NOTIFY_WAIT", "WRITE_VALUE", "PLACE_HOLDER",
     "STREAM_SWITCH", "STREAM_ACTIVE", "LABEL_SET", "LABEL_SWITCH", "LABEL_GOTO", "PROFILING_ENABLE",
     "PROFILING_DISABLE", "MODEL_MAINTAINCE", "BARRIER", "MEM_WAIT_VALUE", "MEM_WRITE_VALUE"}
)
_CONTROL_TASKS = _CONTROL_TASKS | frozenset(f"{name}_SQE" for name in _CONTROL_TASKS)
# Tasks that only collectives run (RDMA sends of HCCL, HCCL's own AI CPU tasks).
_COMMUNICATION_TASKS = frozenset({"RDMA_SEND", "HCCL_AI_CPU"})

_COMMUNICATION_TASK_NAME = re.compile(r"^(?:hcom_|hccl|lccl)", re.IGNORECASE)
_PLANE_THREAD = re.compile(r"^Plane\b", re.IGNORECASE)
_STREAM_THREAD = re.compile(r"^Stream\s*#?\s*(\d+)$", re.IGNORECASE)
_DEVICE_IN_TEXT = re.compile(r"(?i)\b(?:npu|device|ascend|rank)\s*[:#_]?\s*(\d+)\b")

# Row roles (one per slice).
_OTHER, _TASK, _LAUNCH, _HCCL_OP, _HCCL_TASK, _OVERLAP, _PYTHON = range(7)


def has_ascend_layers(raw: RawColumns) -> bool:
    """True when the file names a process after one of the Ascend layers."""
    return any(kind == "process_name" and getattr(args, "name", "") in ASCEND_LAYERS
               for kind, _pid, _tid, args in raw.meta_events)


def _device_in(text: str) -> int:
    m = _DEVICE_IN_TEXT.search(text)
    return int(m.group(1)) if m else -1


def normalise(raw: RawColumns) -> None:
    """Give the rows of the Ascend layers the categories of the module docstring, in place."""
    strings = raw.strings
    text = strings.strings
    layer_of_pid: dict[int, str] = {}
    labels_of_pid: dict[int, str] = {}
    thread_label: dict[tuple[int, int], str] = {}
    for kind, pid, tid, args in raw.meta_events:
        if kind == "process_name" and getattr(args, "name", ""):
            layer_of_pid[pid] = args.name
        elif kind == "process_labels" and getattr(args, "labels", ""):
            labels_of_pid[pid] = args.labels
        elif kind == "thread_name" and getattr(args, "name", ""):
            thread_label[(pid, tid)] = args.name
    if not any(layer in ASCEND_LAYERS for layer in layer_of_pid.values()):
        return
    unknown = raw.stats.get("unknown_categories", {})
    for category in ASCEND_FLOW_CATEGORIES:  # known here: launch → task flows
        unknown.pop(category, None)
    device_of_pid = _devices(layer_of_pid, labels_of_pid)
    store = raw.parts.get("slices", {})
    if not store.get("pid"):
        _name_processes(raw, layer_of_pid, device_of_pid)
        return
    columns = {key: np.concatenate(chunks) for key, chunks in store.items() if chunks}
    pid, tid = columns["pid"].astype(np.int64), columns["tid"].astype(np.int64)
    keys, key_of_row = np.unique((pid << 32) | tid, return_inverse=True)
    key_of_row = key_of_row.reshape(-1)
    key_pairs = [(int(k >> 32), int(k & 0xFFFFFFFF)) for k in keys.tolist()]
    labels = [thread_label.get(pair) or text[pair[1]] for pair in key_pairs]
    key_role = np.array([_role(layer_of_pid.get(p, ""), label) for (p, _t), label in zip(key_pairs, labels)],
                        dtype=np.int8)
    role = key_role[key_of_row]
    names = columns["name"]
    name_is = lambda test: np.fromiter(map(test, text), dtype=bool, count=len(text))[names]  # noqa: E731
    key_device = np.array([device_of_pid.get(p, -1) for p, _t in key_pairs], dtype=np.int64)
    row_device = key_device[key_of_row]
    task = role == _TASK
    hccl_op = role == _HCCL_OP
    communication_task = task & name_is(lambda s: bool(_COMMUNICATION_TASK_NAME.match(s)))
    # HCCL operators are device work only where Ascend Hardware does not already show them.
    hccl_as_kernels = not communication_task.any()
    collective_part = task & ~communication_task & (
        _same_task_as(row_device, columns["start"], columns["dur"], task, role == _HCCL_TASK)
        | name_is(_COMMUNICATION_TASKS.__contains__))
    if hccl_as_kernels and not hccl_op.any():  # nothing else shows their collective: they are it
        communication_task |= collective_part & name_is(_COMMUNICATION_TASKS.__contains__)
        collective_part &= ~communication_task
    task_kind = task & ~communication_task & ~collective_part
    copy = task_kind & name_is(_COPY_TASKS.__contains__)
    control = task_kind & name_is(_CONTROL_TASKS.__contains__)
    on_device = task | hccl_op | (role == _HCCL_TASK)  # every row of a device layer is of its device

    category_by_role = {
        _TASK: KERNEL, _LAUNCH: RUNTIME, _HCCL_OP: KERNEL if hccl_as_kernels else HCCL_OPERATOR,
        _HCCL_TASK: HCCL_TASK, _OVERLAP: OVERLAP_CATEGORY, _PYTHON: PYTHON,
    }
    cat = columns["cat"]
    unset = cat == strings[""]
    new = cat.copy()
    for member, category in category_by_role.items():
        new[unset & (role == member)] = strings[category]
    for rows, category in ((copy, MEMCPY), (control, SYNC), (collective_part, HCCL_TASK)):
        new[unset & rows] = strings[category]
    _count_categories(raw, cat, new)
    columns["cat"] = new

    key_stream = np.array([_stream_number(label) for label in labels], dtype=np.int64)
    columns["device"][on_device] = row_device[on_device]
    columns["stream"][task] = key_stream[key_of_row][task]
    collective = communication_task | (hccl_op & hccl_as_kernels)
    columns["collective"][collective] = names[collective]
    for key, values in columns.items():
        store[key] = [values]
    _name_processes(raw, layer_of_pid, device_of_pid)
    raw.stats["ascend_layers"] = {
        "devices": sorted(set(device_of_pid.values())),
        "rows": {layer: int(np.count_nonzero(role == r)) for layer, r in (
            ("tasks", _TASK), ("launches", _LAUNCH), ("hccl_operators", _HCCL_OP), ("hccl_tasks", _HCCL_TASK),
            ("overlap", _OVERLAP), ("python", _PYTHON))},
        "communication_tasks": int(np.count_nonzero(communication_task)),
        "collective_parts": int(np.count_nonzero(collective_part)),
        "copies": int(np.count_nonzero(copy)),
        "stream_control": int(np.count_nonzero(control)),
        "hccl_operators_counted": bool(hccl_as_kernels and hccl_op.any()),
    }


def _same_task_as(device: np.ndarray, start: np.ndarray, dur: np.ndarray, rows: np.ndarray,
                  others: np.ndarray) -> np.ndarray:
    """Per row: whether it is one of ``rows`` with the same (device, start, duration) as one of ``others``."""
    found = np.zeros(len(rows), dtype=bool)
    if not rows.any() or not others.any():
        return found
    keys = np.stack([device, start, dur], axis=1)
    candidates = np.flatnonzero(rows | others)
    _unique, group = np.unique(keys[candidates], axis=0, return_inverse=True)
    group = group.reshape(-1)
    has_other = np.zeros(len(_unique), dtype=bool)
    has_other[group[others[candidates]]] = True
    found[candidates] = rows[candidates] & has_other[group]
    return found


def _role(layer: str, thread: str) -> int:
    if layer == HARDWARE_LAYER:
        return _TASK
    if layer == CANN_LAYER:
        return _LAUNCH
    if layer in COMMUNICATION_LAYERS:
        return _HCCL_TASK if _PLANE_THREAD.match(thread) else _HCCL_OP
    if layer == OVERLAP_LAYER:
        return _OVERLAP
    if layer == PYTHON_LAYER:
        return _PYTHON
    return _OTHER


def _stream_number(label: str) -> int:
    m = _STREAM_THREAD.match(label)
    if m:
        return int(m.group(1))
    return int(label) if label.isdigit() else -1


def _devices(layer_of_pid: dict[int, str], labels_of_pid: dict[int, str]) -> dict[int, int]:
    """Device id per process of the device layers (hardware, communication): from its labels or name, else the
    order of the hardware processes; a communication process without one takes the first hardware device."""
    hardware = sorted(p for p, layer in layer_of_pid.items() if layer == HARDWARE_LAYER)
    found: dict[int, int] = {}
    for order, pid in enumerate(hardware):
        own = max(_device_in(labels_of_pid.get(pid, "")), _device_in(layer_of_pid[pid]))
        found[pid] = own if own >= 0 else order
    first = found[hardware[0]] if hardware else 0
    for pid, layer in layer_of_pid.items():
        if layer in COMMUNICATION_LAYERS:
            own = max(_device_in(labels_of_pid.get(pid, "")), _device_in(layer))
            found[pid] = own if own >= 0 else first
    return found


def _count_categories(raw: RawColumns, old: np.ndarray, new: np.ndarray) -> None:
    counts = raw.stats.setdefault("categories", {})
    changed = new != old
    for category_id, moved in zip(*np.unique(new[changed], return_counts=True)):
        label = raw.strings.strings[int(category_id)]
        counts[label] = counts.get(label, 0) + int(moved)
        counts[""] = counts.get("", 0) - int(moved)
    if counts.get("") == 0:
        del counts[""]


def _name_processes(raw: RawColumns, layer_of_pid: dict[int, str], device_of_pid: dict[int, int]) -> None:
    """Device processes keep an Ascend name (``model.build`` renames other device processes "GPU <id>"); with
    several devices, each names its device. A ``deviceProperties`` entry per device, as for the older timelines."""
    strings = raw.strings
    several = len({d for p, d in device_of_pid.items() if layer_of_pid[p] == HARDWARE_LAYER}) > 1
    for pid, device in sorted(device_of_pid.items()):
        layer = layer_of_pid[pid]
        if layer == HARDWARE_LAYER:
            name = f"{layer} (device {device})" if several else layer
        else:
            name = f"{layer} (Ascend {device})"
        if name != layer:
            raw.meta_events.append(("process_name", pid, strings[""], MetadataArgs(name=name)))
    devices = sorted({d for p, d in device_of_pid.items() if layer_of_pid[p] == HARDWARE_LAYER})
    if devices:
        raw.metadata.setdefault("deviceProperties", [{"id": d, "name": f"Ascend {d}"} for d in devices])
