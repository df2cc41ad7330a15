"""Distributed view: per rank, computation vs communication and their overlap; collectives; stragglers.

Per rank and step, computation, communication and overlap are ``accounting.step_times``: the
same numbers as the overview's (its Communication category is communication minus overlap).
Communication is collective kernels on the device and the host ranges of collectives that run
on the host (Gloo), on GPU and CPU-only spans alike; other is the rest of the step. Collective
instances are matched across ranks by name and order (the i-th all_reduce of every rank is one
collective): a rank waits from its own start until the last rank has started, and the rest of
its duration is transfer. A single rank whose trace records its process group
(``distributedInfo``) or collectives is a distributed span of its own.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import msgspec
import numpy as np

from ...model.categories import SliceKinds
from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US
from ..quantities import collective_bandwidth
from ..quantities.accounting import step_times
from ..quantities.devices import device
from ..quantities.efficiency import Roofs
from .rank_summary import (
    RankSummary, Table, collectives_table, joined, joined_codes, kernels_table, operators_table, steps_table,
)

DTYPE_BYTES = {
    "float": 4, "float32": 4, "Float": 4, "double": 8, "float64": 8, "Double": 8, "half": 2, "float16": 2,
    "Half": 2, "bfloat16": 2, "BFloat16": 2, "int": 4, "int32": 4, "Int": 4, "long": 8, "int64": 8, "Long": 8,
    "int8": 1, "Char": 1, "uint8": 1, "Byte": 1, "bool": 1, "Bool": 1, "short": 2, "int16": 2, "Short": 2,
    "float8_e4m3fn": 1, "float8_e5m2": 1,
    # record_shapes' "Input type" spelling of tensor dtypes (C++ type names).
    "long int": 8, "c10::Half": 2, "c10::BFloat16": 2, "signed char": 1, "unsigned char": 1, "short int": 2,
}
# "Input type" of arguments that are not tensors (no bytes of their own).
_NON_TENSOR_INPUTS = frozenset({"", "Scalar", "ScalarList", "GenericList"})
_KERNEL_COLLECTIVE = re.compile(r"nccl(?:Dev)?Kernel_([A-Za-z]+)|rccl\w*?_([A-Za-z]+)", re.IGNORECASE)
_OP_COLLECTIVE = re.compile(r"^(?:nccl:|gloo:|c10d::|hccl:|xccl:)([A-Za-z_]+?)_?$", re.IGNORECASE)
_RANK_IN_NAME = re.compile(r"(?:rank|worker)[-_]?(\d+)", re.IGNORECASE)
# The backend that a collective's kernel or host range names, for a trace whose distributedInfo names none (an Ascend
# timeline: HCCL's hcom_ operators); torch's own backend strings.
_BACKEND_OF_NAME = ((re.compile(r"^(?:hcom_|hccl)", re.IGNORECASE), "hccl"),
                    (re.compile(r"^(?:void )?(?:nccl|ncclKernel|ncclDevKernel)", re.IGNORECASE), "nccl"),
                    (re.compile(r"^rccl", re.IGNORECASE), "rccl"), (re.compile(r"^gloo:"), "gloo"),
                    (re.compile(r"^hccl:"), "hccl"), (re.compile(r"^xccl:"), "xccl"))


def normalize_collective(name: str) -> str:
    """'ncclDevKernel_AllReduce_Sum_f32_RING_LL', 'gloo:all_reduce', 'c10d::allreduce_' → 'allreduce'."""
    m = _KERNEL_COLLECTIVE.search(name)
    if m:
        return (m.group(1) or m.group(2)).lower()
    m = _OP_COLLECTIVE.match(name)
    if m:
        return m.group(1).replace("_", "").lower()
    return name.replace("_", "").lower()


@dataclass(frozen=True)
class RankInstances:
    """A rank's collective instances, in time order."""

    name: list[str]
    start: np.ndarray
    end: np.ndarray
    nbytes: np.ndarray  # -1 when unknown
    # For bandwidth (quantities/collective_bandwidth.py): the message size S (the larger of the input and output of
    # record_param_comms, else nbytes) and the group size (its "Group size", else the job's world size), -1 unknown.
    message_bytes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    group_size: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # Where the trace records them (``record_param_comms``): the process group, the call's number within it (else
    # its number among this rank's calls of the same group and name: ``seq_recorded`` False), the output bytes (an
    # all-gather's whole result); the device stream of the collective kernel (-1 on the host).
    process_group: list[str] = field(default_factory=list)
    seq: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    seq_recorded: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    out_bytes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    stream: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # The model's slice of each call: the collective kernel, or the host range on a rank whose collectives run there.
    row: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def distributed_rank(model: TraceModel) -> Optional[int]:
    """The rank the trace itself records (Kineto's ``distributedInfo.rank``), else None."""
    info = model.metadata.get("distributedInfo") or {}
    rank = info.get("rank") if isinstance(info, dict) else None
    return rank if isinstance(rank, int) and not isinstance(rank, bool) else None


def rank_of(model: TraceModel, worker: str, fallback: int) -> int:
    recorded = distributed_rank(model)
    if recorded is not None:
        return recorded
    m = _RANK_IN_NAME.search(worker)
    return int(m.group(1)) if m else fallback


def _message_bytes(model: TraceModel, row: int, column: str = "in_msg_nelems") -> int:
    s = model.slices
    nelems = int(getattr(s, column)[row])
    dtype = model.strings[int(s.dtype[row])] if s.dtype[row] >= 0 else ""
    if nelems < 0 or dtype not in DTYPE_BYTES:
        return -1
    return nelems * DTYPE_BYTES[dtype]


def _input_tensor_bytes(model: TraceModel, row: int) -> int:
    """Bytes of a collective's input tensors from its recorded shapes and types (-1 if unknown).

    Gloo records no ``record_param_comms``, but its ``gloo:all_reduce`` ranges (recorded with
    record_shapes) carry ``Input Dims`` [[68362]] and ``Input type`` ["float"]. A tensor list's
    element type is not recorded, so a list input leaves the size unknown.
    """
    s = model.slices
    if s.input_dims[row] < 0 or s.input_type[row] < 0:
        return -1
    try:
        dims = msgspec.json.decode(model.strings[int(s.input_dims[row])])
        types = msgspec.json.decode(model.strings[int(s.input_type[row])])
    except msgspec.DecodeError:
        return -1
    if not isinstance(dims, list) or not isinstance(types, list) or len(dims) != len(types):
        return -1
    total = 0
    for shape, dtype in zip(dims, types):
        if dtype in _NON_TENSOR_INPUTS:
            continue
        if dtype not in DTYPE_BYTES or not isinstance(shape, list) or not all(
                isinstance(d, int) and d >= 0 for d in shape):
            return -1  # a tensor list, or a type of unknown size
        total += math.prod(shape) * DTYPE_BYTES[dtype]  # a 0-d tensor (shape []) holds one element
    return total if total > 0 else -1


def _collective_bytes(model: TraceModel, row: int, op: int, source: int, collective_above: np.ndarray,
                      inner_bytes: dict[int, int]) -> int:
    """A collective call's message size, from the operator that launched it: the element count and
    dtype of ``record_param_comms``, else the recorded input shapes of the launching collective
    operator, of the collective operator nested in it (``record_param_comms`` records a TensorList,
    its ``nccl:all_reduce`` child [[19618307]] float), or of the collectives around it, else the
    shapes on the row itself (a Gloo range). -1 when none is known: a kernel has no shapes."""
    if source >= 0:
        size = _message_bytes(model, source)
        if size >= 0:
            return size
    candidate = op
    while candidate >= 0:  # the launching operator, then the collectives it is nested in
        size = _input_tensor_bytes(model, candidate)
        if size < 0:
            size = inner_bytes.get(candidate, -1)
        if size >= 0:
            return size
        candidate = int(collective_above[candidate])
    return _input_tensor_bytes(model, row)


def _inner_collective_bytes(model: TraceModel, host_collectives: np.ndarray) -> dict[int, int]:
    """Parent row -> input bytes of the first host collective nested directly in it that records its shapes."""
    s = model.slices
    out: dict[int, int] = {}
    for row in np.flatnonzero(host_collectives & (s.parent >= 0) & (s.input_dims >= 0)).tolist():  # per collective
        size = _input_tensor_bytes(model, row)
        if size >= 0:
            out.setdefault(int(s.parent[row]), size)
    return out


def collective_instances(model: TraceModel) -> RankInstances:
    return model.memo("collective_instances", lambda: _collective_instances(model))


def collective_call(model: TraceModel, row: int) -> Optional[dict[str, Any]]:
    """One collective call's size and rank bandwidth (``quantities/collective_bandwidth.py``: this rank's own
    duration, waiting for its peers included), for the trace's event details; None for a slice that is no call."""
    calls = collective_instances(model)
    hit = np.flatnonzero(calls.row == row)
    if not len(hit):
        return None
    i = int(hit[0])
    name = calls.name[i]
    size, group = int(calls.message_bytes[i]), int(calls.group_size[i])
    duration = int(calls.end[i] - calls.start[i])
    rates = collective_bandwidth.rank_bandwidth(name, np.array([size]), np.array([duration]), np.array([group]))
    algorithm, bus = float(rates.algorithm[0]), float(rates.bus[0])
    return {
        "kind": "collective", "label": name, "bytes": size if size >= 0 else None,
        "group_size": group if group > 0 else None,
        "bandwidth": algorithm if math.isfinite(algorithm) else None,
        "bus_bandwidth": bus if math.isfinite(bus) else None,
        "note": "Rank bandwidth: the message over this rank's own duration of the call, which includes waiting for "
                "the slowest peer; the Distributed view's matched collectives divide by the shortest duration over "
                "the ranks instead.",
    }


def _collective_instances(model: TraceModel) -> RankInstances:
    s = model.slices
    kinds = SliceKinds(model)
    text = model.strings
    # The record_param_comms (or other op with collective args) above each slice, for names and sizes.
    with_args = (s.collective >= 0) | (s.in_msg_nelems >= 0)
    from ...model.tree import nearest_ancestor_where

    args_above = nearest_ancestor_where(s, with_args)
    host_collectives = kinds.collective_op & kinds.on_host
    collective_above = nearest_ancestor_where(s, host_collectives)
    inner_bytes = _inner_collective_bytes(model, host_collectives)
    if kinds.collective_kernel.any():
        rows = np.flatnonzero(kinds.collective_kernel)
        owner_op = model.links.op[rows].astype(np.int64)
    else:
        # CPU-only (Gloo): the work ranges of the backend (gloo:/nccl: ops), else the c10d ops;
        # outermost only, so a range and its nested helpers count once.
        host = kinds.collective_op & kinds.on_host
        named = model.string_ids_where(lambda t: bool(re.match(r"^(gloo|nccl|hccl|xccl):", t)))[s.name] & host
        pick = named if named.any() else host
        from ...model.tree import has_ancestor

        rows = np.flatnonzero(pick & ~has_ancestor(s, pick))
        owner_op = rows.astype(np.int64)
    names, sizes, messages, group_sizes, groups, out_sizes = [], [], [], [], [], []
    seq = np.full(len(rows), -1, dtype=np.int64)
    info = model.metadata.get("distributedInfo") or {}
    world = info.get("world_size") if isinstance(info, dict) and isinstance(info.get("world_size"), int) else -1
    for i, (row, op) in enumerate(zip(rows.tolist(), owner_op.tolist())):  # one step per collective call
        source = op if op >= 0 and with_args[op] else (int(args_above[op]) if op >= 0 else -1)
        if source >= 0 and s.collective[source] >= 0:
            names.append(normalize_collective(text[int(s.collective[source])]))
        else:
            names.append(normalize_collective(text[int(s.name[row])]))
        sizes.append(_collective_bytes(model, row, op, source, collective_above, inner_bytes))
        out_bytes = _message_bytes(model, source, "out_msg_nelems") if source >= 0 else -1
        messages.append(max(sizes[-1], out_bytes))
        group_sizes.append(int(s.group_size[source]) if source >= 0 and s.group_size[source] > 0 else world)
        out_sizes.append(out_bytes)
        groups.append(text[int(s.process_group[source])] if source >= 0 and s.process_group[source] >= 0 else "")
        if source >= 0:
            seq[i] = s.collective_seq[source]
    order = np.argsort(s.start[rows], kind="stable")

    def ordered(values: list[int]) -> np.ndarray:
        return np.asarray(values, dtype=np.int64)[order] if values else np.zeros(0, np.int64)

    names = [names[i] for i in order]
    groups = [groups[i] for i in order]
    seq = seq[order]
    recorded = seq >= 0
    if not recorded.all():  # numbered per (group, name) in time order where the trace records no number
        counters: dict[tuple[str, str], int] = {}
        for i in np.flatnonzero(~recorded).tolist():
            key = (groups[i], names[i])
            seq[i] = counters.get(key, 0)
            counters[key] = seq[i] + 1
    kernel_rows = kinds.collective_kernel[rows] if len(rows) else np.zeros(0, bool)
    stream = np.where(kernel_rows, s.stream[rows], -1).astype(np.int64)[order]
    return RankInstances(name=names, start=s.start[rows][order], end=s.end_at(rows)[order],
                         nbytes=ordered(sizes), message_bytes=ordered(messages), group_size=ordered(group_sizes),
                         process_group=groups, seq=seq, seq_recorded=recorded, out_bytes=ordered(out_sizes),
                         stream=stream, row=rows.astype(np.int64)[order])


def rank_breakdown(model: TraceModel) -> dict[str, float]:
    """Mean per step of step time, computation, communication, overlap and other (ns), as
    ``accounting.step_times`` defines them (the overview shows the same numbers)."""
    def compute() -> dict[str, float]:
        times = step_times(model)
        return {
            "steps": float(len(times.duration)),
            "step_time": times.mean(times.duration),
            "compute": times.mean(times.computation),
            "communication": times.mean(times.communication),
            "overlap": times.mean(times.overlap),
            "other": times.mean(times.other),
        }

    return model.memo("rank_breakdown", compute)


def backend_of(model: TraceModel) -> Optional[str]:
    """The communication backend: the one distributedInfo names, else the one the collectives' names say (HCCL for
    an Ascend timeline's hcom_ operators, or its collectives on an Ascend device), else None."""
    info = model.metadata.get("distributedInfo")
    if isinstance(info, dict) and isinstance(info.get("backend"), str) and info["backend"]:
        return str(info["backend"])
    kinds = SliceKinds(model)
    s = model.slices
    rows = np.flatnonzero(kinds.collective_kernel | kinds.collective_range)
    for name_id in np.unique(s.name[rows]).tolist():  # one test per distinct name
        name = model.strings[name_id]
        for pattern, backend in _BACKEND_OF_NAME:
            if pattern.match(name):
                return backend
    kernels = np.flatnonzero(kinds.collective_kernel)
    if len(kernels):
        ids = {int(d) for d in np.unique(s.device[kernels]) if d >= 0}
        if any(device(model, d).kind == "Ascend" for d in ids):
            return "hccl"
    return None


def _is_distributed(model: TraceModel) -> bool:
    """A rank of a distributed job: the profiler recorded its process group, or it ran collectives."""
    info = model.metadata.get("distributedInfo")
    if isinstance(info, dict) and ("rank" in info or "world_size" in info or "backend" in info):
        return True
    return len(collective_instances(model).name) > 0


def summary_of(worker: str, span: str, model: TraceModel, operators_rows: Optional[list[dict[str, Any]]] = None,
               kernels_rows: Optional[list[dict[str, Any]]] = None) -> RankSummary:
    """One rank's summary (``rank_summary.py``), from its model; with the operator and kernel tables when their
    rows (the pages' answers, grouped by name) are given."""
    tables = operators_rows is not None and kernels_rows is not None

    def compute() -> RankSummary:
        info = model.metadata.get("distributedInfo")
        info = info if isinstance(info, dict) else {}
        base = model.metadata.get("baseTimeNanoseconds")
        return RankSummary(
            worker=worker, span=span, recorded_rank=distributed_rank(model), world_size=info.get("world_size"),
            backend=backend_of(model), is_distributed=_is_distributed(model),
            base_time_ns=base if isinstance(base, int) and not isinstance(base, bool) else None,
            steps=steps_table(model), collectives=collectives_table(collective_instances(model)),
            operators=operators_table(operators_rows) if operators_rows is not None else Table({}, {}),
            kernels=kernels_table(kernels_rows) if kernels_rows is not None else Table({}, {}),
        )

    return model.memo(("rank_summary", worker, span, tables), compute)


def summary_rank(summary: RankSummary, fallback: int) -> int:
    """``rank_of`` for a summary."""
    if summary.recorded_rank is not None:
        return summary.recorded_rank
    m = _RANK_IN_NAME.search(summary.worker)
    return int(m.group(1)) if m else fallback


def _summary_breakdown(summary: RankSummary) -> dict[str, float]:
    """``rank_breakdown`` from a summary's steps."""
    steps = summary.steps.numbers

    def mean(values: np.ndarray) -> float:
        return float(values.mean()) if len(values) else 0.0

    return {"steps": float(len(steps["duration"])), "step_time": mean(steps["duration"]),
            "compute": mean(steps["computation"]), "communication": mean(steps["communication"]),
            "overlap": mean(steps["overlap"]), "other": mean(steps["other"])}


@dataclass(frozen=True)
class _Calls:
    """Every rank's collective calls for the tables below, one rank after the other (rank ``i``'s rows are
    ``bounds[i]:bounds[i + 1]``): names as codes of one vocabulary across ranks."""

    bounds: np.ndarray  # int64, one more than the ranks
    codes: np.ndarray
    start: np.ndarray
    end: np.ndarray
    nbytes: np.ndarray
    message_bytes: np.ndarray
    group_size: np.ndarray

    @property
    def ranks(self) -> int:
        return len(self.bounds) - 1

    def per_rank(self, values: np.ndarray) -> np.ndarray:
        """The sum of ``values`` (one per row, integers or booleans) over each rank's rows, exactly (int64)."""
        out = np.zeros(self.ranks, dtype=np.int64)
        starts = self.bounds[:-1]
        made = starts < self.bounds[1:]  # a rank without calls sums to 0 (reduceat would give it a row)
        if made.any():
            out[made] = np.add.reduceat(values, starts[made], dtype=np.int64)
        return out


def _joined_calls(summaries: list[RankSummary], vocabulary: dict[str, int]) -> _Calls:
    tables = [s.collectives for s in summaries]
    counts = np.asarray([len(t) for t in tables], dtype=np.int64)
    in_bytes = joined([t.numbers["in_bytes"] for t in tables])
    return _Calls(np.concatenate([[0], np.cumsum(counts)]), joined_codes([t.texts["name"] for t in tables], vocabulary),
                  joined([t.numbers["start"] for t in tables]), joined([t.numbers["end"] for t in tables]), in_bytes,
                  np.maximum(in_bytes, joined([t.numbers["out_bytes"] for t in tables])),
                  joined([t.numbers["group_size"] for t in tables]))


def distributed(ranks: list[tuple[str, TraceModel]],
                roofs_of: Optional[Callable[[TraceModel], Roofs]] = None) -> dict[str, Any]:
    """``ranks``: (worker name, model) of every worker of a run, one span each. ``roofs_of``: the device peaks of a
    model (the server's setting), for the links' peak beside the collectives' bus bandwidth."""
    summaries = [summary_of(worker, "", model) for worker, model in ranks]
    return distributed_from_summaries(summaries, [model for _, model in ranks], roofs_of)


def distributed_from_summaries(summaries: list[RankSummary], models: Optional[Sequence[TraceModel]] = None,
                               roofs_of: Optional[Callable[[TraceModel], Roofs]] = None) -> dict[str, Any]:
    """The Distributed view from the ranks' summaries (from their models, or their packs); ``models``: the ranks'
    models in the same order, for the links' peak (the first rank's device: the only model read)."""
    if not summaries or (len(summaries) == 1 and not summaries[0].is_distributed):
        return {"available": False, "ranks": [], "collectives": [], "straggler": None,
                "hint": "This run has a single worker: there is nothing distributed to show. Profile every rank of "
                        "a distributed job into the same run (one worker per rank)."}
    entries = []
    for i, summary in enumerate(summaries):
        entries.append({"worker": summary.worker, "rank": summary_rank(summary, i),
                        "world_size": summary.world_size, "backend": summary.backend, "summary": summary,
                        "index": i})
    entries.sort(key=lambda e: (e["rank"], e["worker"]))
    vocabulary: dict[str, int] = {}
    calls = _joined_calls([e["summary"] for e in entries], vocabulary)
    names = sorted(vocabulary)
    wait, matched, method = _waits(calls, [vocabulary[n] for n in names])
    comm_of_rank = calls.per_rank(calls.end - calls.start).tolist()
    wait_of_rank = calls.per_rank(wait).tolist()
    calls_of_rank = np.diff(calls.bounds).tolist()
    rank_rows = []
    for i, e in enumerate(entries):
        b = _summary_breakdown(e["summary"])
        total_comm = float(comm_of_rank[i])
        total_wait = float(wait_of_rank[i])
        # Per step, in the same unit as the breakdown: wait and transfer split the collective time.
        share_wait = total_wait / total_comm if total_comm > 0 else 0.0
        rank_rows.append({
            "worker": e["worker"], "rank": e["rank"], "world_size": e["world_size"], "backend": e["backend"],
            "steps": int(b["steps"]),
            "step_time": b["step_time"] / NS_PER_US, "compute": b["compute"] / NS_PER_US,
            "communication": b["communication"] / NS_PER_US, "overlap": b["overlap"] / NS_PER_US,
            "other": b["other"] / NS_PER_US,
            "wait": b["communication"] * share_wait / NS_PER_US,
            "transfer": b["communication"] * (1 - share_wait) / NS_PER_US,
            "collective_calls": calls_of_rank[i],
        })
    first_model = models[entries[0]["index"]] if models is not None else None
    world_sizes = [e["world_size"] for e in entries if isinstance(e["world_size"], int)]
    missing = max(world_sizes) - len(entries) if world_sizes else 0
    notes = []
    if missing > 0:
        notes.append(f"{len(entries)} of the job's {max(world_sizes)} ranks are in this run: waits are measured "
                     "against the ranks present only, and no straggler is named among fewer than two.")
    return {
        "available": True,
        "notes": notes,
        "wait_method": method,
        "ranks": rank_rows,
        "collectives": _with_bandwidth(_collective_table(entries, calls, wait, names, vocabulary), calls, matched,
                                       vocabulary),
        "link": _link_peak(first_model, roofs_of) if first_model is not None else
        {"name": None, "peak": None, "reason": "the ranks' devices are not known here"},
        "straggler": _straggler(rank_rows),
    }


def _waits(calls: _Calls, codes: list[int]) -> tuple[np.ndarray, dict[int, np.ndarray], str]:
    """Per call: time spent waiting for the last participant; per collective name (code), the rows of the calls
    matched across ranks (``[ranks, count]``: row ``r`` holds rank ``r``'s first ``count`` calls of that name,
    ``count`` the fewest any rank made; absent where a rank made none)."""
    waits = np.zeros(len(calls.codes), dtype=np.int64)
    matched: dict[int, np.ndarray] = {}
    for code in codes:
        chosen = calls.codes == code
        made = calls.per_rank(chosen)
        count = int(made.min()) if len(made) else 0
        if count == 0:
            continue
        # The calls of this name, rank after rank: each rank's first ``count`` of them.
        found = np.flatnonzero(chosen)
        first = np.concatenate([[0], np.cumsum(made)[:-1]])
        rows = found[first[:, None] + np.arange(count)[None, :]]
        starts, ends = calls.start[rows], calls.end[rows]
        last_arrival = starts.max(axis=0)
        durations = ends - starts
        waits[rows] = np.clip(last_arrival[None, :] - starts, 0, durations)
        matched[code] = rows
    return waits, matched, "aligned by collective order across ranks (the i-th call of a collective on every rank)"


def _collective_table(entries: list[dict[str, Any]], calls: _Calls, waits: np.ndarray,
                      names: list[str], vocabulary: dict[str, int]) -> list[dict[str, Any]]:
    """Per collective name: its calls, bytes, time and wait over all ranks, and per rank. Sums of integers (ns,
    bytes) per rank and name are exact, so every figure is what a rank-by-rank sum gives."""
    duration = calls.end - calls.start
    known = calls.nbytes >= 0
    per_name = {}
    for name in names:
        chosen = calls.codes == vocabulary[name]
        per_name[name] = {
            "calls": calls.per_rank(chosen).tolist(),
            "duration": calls.per_rank(np.where(chosen, duration, 0)).tolist(),
            "bytes": calls.per_rank(np.where(chosen & known, calls.nbytes, 0)).tolist(),
            "known": calls.per_rank(chosen & known).tolist(),
            "wait": calls.per_rank(np.where(chosen, waits, 0)).tolist(),
        }
    rows: dict[str, dict[str, Any]] = {}
    for i, e in enumerate(entries):
        for name in names:
            figures = per_name[name]
            count = figures["calls"][i]
            if count == 0:
                continue
            total, nbytes, wait = float(figures["duration"][i]), figures["bytes"][i], float(figures["wait"][i])
            known_count = figures["known"][i]
            row = rows.setdefault(name, {"name": name, "calls": 0, "bytes": 0, "bytes_known": True, "total": 0.0,
                                         "wait": 0.0, "per_rank": []})
            row["calls"] += count
            row["bytes"] += nbytes
            row["bytes_known"] &= known_count == count
            row["total"] += total / NS_PER_US
            row["wait"] += wait / NS_PER_US
            row["per_rank"].append({
                "worker": e["worker"], "rank": e["rank"], "calls": count,
                "bytes": nbytes if known_count else None,
                "total": total / NS_PER_US, "mean": total / count / NS_PER_US,
                "wait": wait / NS_PER_US,
            })
    out = []
    for row in rows.values():
        calls_count = max(row["calls"], 1)
        transfer_us = row["total"] - row["wait"]
        row["mean"] = row["total"] / calls_count
        row["transfer"] = transfer_us
        if not row["bytes_known"] or row["bytes"] == 0:
            row["bytes"] = None  # unknown for some calls: a partial sum would mislead
        # Effective bandwidth: bytes moved per second of transfer (waiting excluded).
        row["bandwidth"] = row["bytes"] / (transfer_us / 1e6) if row["bytes"] and transfer_us > 0 else None
        del row["bytes_known"]
        out.append(row)
    out.sort(key=lambda r: -r["total"])
    return out


def _with_bandwidth(rows: list[dict[str, Any]], calls: _Calls, matched: dict[int, np.ndarray],
                    vocabulary: dict[str, int]) -> list[dict[str, Any]]:
    """Per collective: algorithm and bus bandwidth (``quantities/collective_bandwidth.py``), as rank bandwidth (each
    call over its own duration on its rank; the sums of all ranks' calls: bytes over time) with the median over the
    calls, and as transfer bandwidth (the i-th call of every rank is one collective, over its shortest duration)."""
    duration_of = calls.end - calls.start
    for row in rows:
        name = row["name"]
        chosen = calls.codes == vocabulary[name]
        size, duration, group = calls.message_bytes[chosen], duration_of[chosen], calls.group_size[chosen]
        per_call = collective_bandwidth.rank_bandwidth(name, size, duration, group)
        known = (size >= 0) & (duration > 0)
        n = int(np.median(group[group > 0])) if (group > 0).any() else -1
        row["group_size"] = n if n > 0 else None
        row["algbw"] = float(size[known].sum() / (duration[known].sum() / 1e9)) if known.any() else None
        factor = float(collective_bandwidth.bus_factor(name, np.array([n]))[0])
        row["busbw"] = row["algbw"] * factor if row["algbw"] is not None and math.isfinite(factor) else None
        bus = per_call.bus[np.isfinite(per_call.bus)]
        row["busbw_median"] = float(np.median(bus)) if len(bus) else None
        row["transfer_algbw"] = row["transfer_busbw"] = None
        pairs = matched.get(vocabulary[name])
        if pairs is not None and calls.ranks > 1:
            sizes = calls.message_bytes[pairs]
            transfer = collective_bandwidth.transfer_bandwidth(name, sizes, duration_of[pairs],
                                                               np.full(pairs.shape[1], n))
            size0 = sizes.max(axis=0)
            ok = (size0 >= 0) & (transfer.duration_ns > 0)
            if ok.any():
                row["transfer_algbw"] = float(size0[ok].sum() / (transfer.duration_ns[ok].sum() / 1e9))
                row["transfer_busbw"] = row["transfer_algbw"] * factor if math.isfinite(factor) else None
    return rows


def _link_peak(model: TraceModel, roofs_of: Optional[Callable[[TraceModel], Roofs]]) -> dict[str, Any]:
    """The peak of one direction of the links between the devices (NVLink, Infinity Fabric) of the first rank's
    device, from the device peaks, beside which the bus bandwidth is read."""
    roofs = (roofs_of or Roofs.of)(model)
    for device_id, resolved in sorted(roofs.resolved.items()):
        if device_id < 0 or resolved.peaks is None:
            continue
        peak = resolved.peaks.peer_link_bytes_per_second
        if peak is not None:
            return {"name": resolved.peaks.name, "peak": peak, "reason": ""}
        return {"name": resolved.peaks.name, "peak": None,
                "reason": f"the table of peaks gives no link bandwidth for {resolved.peaks.name}"}
    reasons = [r.reason for d, r in roofs.resolved.items() if d >= 0]
    return {"name": None, "peak": None, "reason": reasons[0] if reasons else "the trace describes no device"}


def _straggler(rank_rows: list[dict[str, Any]]) -> Optional[dict[str, Any]]:
    times = np.array([r["step_time"] for r in rank_rows], dtype=np.float64)
    if len(times) < 2 or not np.isfinite(times).all():
        return None
    slowest = int(np.argmax(times))
    others = np.delete(times, slowest)
    reference = float(np.median(others))
    excess = float(times[slowest] - reference)
    return {"worker": rank_rows[slowest]["worker"], "rank": rank_rows[slowest]["rank"],
            "step_time": float(times[slowest]), "median_of_others": reference, "excess": excess,
            "excess_share": excess / reference if reference > 0 else None}
