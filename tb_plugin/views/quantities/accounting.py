"""One definition of each time quantity that several views show.

Every view that shows communication, computation, their overlap, or the time a device is
busy within the steps (overview, distributed, step trace, compare, run table, report, the
``summary`` command, the Scalars) reads it from here, so the same quantity is the same
number wherever it appears.

Definitions (per step window of ``find_steps``; a span's figure is the mean over its steps):

* **Communication** (``communication_intervals``): time a collective runs. On the device:
  collective kernels (NCCL/RCCL/HCCL kernels, and kernels whose launch is linked to a
  collective's own range). On the host: the host ranges of collectives (``gloo:``, ``nccl:``,
  ``c10d::``, ``record_param_comms``, …) under an outermost one that launched *no* device
  collective kernel, over their own time: the time of a collective range less that of the other
  ranges nested in it (an operator, an annotation: a ``## forward ##`` that a long-lived
  collective annotation happens to enclose is not communication), its runtime calls included.
  On a rank whose collectives run on the device (it has collective kernels, or its ``distributedInfo``
  names a device backend such as NCCL), only the ranges of
  a host backend (``gloo:``, with the collective ranges around and inside them) count: the
  others enqueue kernels or wait for them, such as the short ``record_param_comms`` that torch
  records around an NCCL collective's wait, with no launch inside. Gloo (and any collective
  that runs on the host) is thus communication on CPU-only and on GPU spans alike, while the
  host range that only enqueues an NCCL kernel, or waits for it, is not: the kernel is the
  communication. DDP's reducer bookkeeping ranges (``torch.distributed.ddp.reducer::``) copy
  data locally and are not communication. torch-tb-profiler counts the host ranges of NCCL
  collectives too; HTA counts NCCL kernels only, as here.
* **Computation** (``computation_intervals``): on a span with device work, the device work
  that is not communication (kernels, memory copies and memsets); on a span without, host
  operators and annotations (the overview's CPU Exec), each thread's own communication
  excepted: a thread's ranges while it runs a collective itself (the ranges enclosing its
  ``gloo:all_reduce``) are waiting for it, while another thread's operators at the same time
  compute. So the main thread's backward overlaps the all-reduce a Gloo thread runs, as
  torch-tb-profiler's Distributed view counts it (HTA counts computation kernels only, not
  memory copies or host work).
* **Overlap**: communication while computation runs. ``communication - overlap`` (exposed
  communication, ``exposed_communication_intervals``) is the overview's Communication
  category: on a device span its priority puts kernels, memcpy and memset (the computation)
  first; on a host-only span the category is defined as this difference.
* **Device busy**: time at least one device activity (kernel, copy, memset) runs; **device
  idle** is the rest of the step. Waiting is not busy: an Ascend collective whose own tasks the
  device's streams show is busy while they copy or reduce, not while they wait for a peer's
  notify (``SliceKinds.busy_work``; the Analyses page's streams and the device summary's
  utilization count the same). An NCCL kernel is one kernel, busy throughout, as HTA counts it.
* **Data loading** has two figures on one set of ranges (``dataloader_intervals``: the
  ``enumerate(DataLoader)#…`` ranges, Paddle's ``Dataloader`` events), named apart: *waiting for
  data* is the overview's DataLoader category (the Data pipeline page's data wait), the time in
  them while nothing of higher priority runs (kernels, copies, collectives, runtime calls), over
  the device-extended steps; *data loading (host)* is the step trace's, all host time in them
  within each step's host range. They differ when the device still runs the previous step's
  kernels while the host loads the next batch: the host loads, but nothing waits for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ...model import intervals, tree
from ...model.categories import SliceKinds
from ...model.steps import Steps, find_steps
from ...model.trace_model import TraceModel


# Host ranges named like collectives that move no data between ranks: DDP's reducer copying a bucket
# back into the gradients (``torch.distributed.ddp.reducer::copy_bucket_to_grad``) is local work.
_BOOKKEEPING = re.compile(r"^torch\.distributed\.ddp\.reducer::")
# The host ranges of a backend whose collectives run on the host (ProcessGroupGloo's work ranges).
_HOST_BACKEND = re.compile(r"^gloo:")


# Backends (``distributedInfo.backend``) whose collectives run on the device.
_DEVICE_BACKENDS = frozenset({"nccl", "rccl", "hccl", "xccl", "mccl"})


def _device_backend(model: TraceModel) -> bool:
    """Whether the trace's ``distributedInfo`` names a backend whose collectives run on the device."""
    info = model.metadata.get("distributedInfo")
    backend = info.get("backend") if isinstance(info, dict) else None
    return isinstance(backend, str) and backend.lower() in _DEVICE_BACKENDS


def _merge_rows(model: TraceModel, mask: np.ndarray) -> intervals.Intervals:
    return intervals.merge(model.slices.start[mask], model.slices.end_at(mask))


def host_communication(model: TraceModel) -> np.ndarray:
    """Rows of the host collective ranges whose own time is communication: those under an outermost collective
    range that launched no device collective kernel (DDP's bookkeeping left out), and on a rank whose
    collectives run on the device, only a host backend's (see the module docstring)."""
    def compute() -> np.ndarray:
        kinds = SliceKinds(model)
        s = model.slices
        host = kinds.collective_range & kinds.on_host
        if not host.any():
            return host
        bookkeeping = model.string_ids_where(lambda name: bool(_BOOKKEEPING.match(name)))[s.name] & host
        host &= ~(bookkeeping | tree.has_ancestor(s, bookkeeping))
        if kinds.collective_kernel.any() or _device_backend(model):
            # The rank's collectives run on the device: a host range of one enqueues its kernels or waits for them
            # (torch records a second, short record_param_comms around an NCCL collective's wait, with no launch
            # in it). Only a host backend's ranges, and the collective ranges around or inside them, run on the host.
            # The rank's own backend says so too where no kernel does (NCCL in a world of one launches none).
            runs_on_host = model.string_ids_where(lambda name: bool(_HOST_BACKEND.match(name)))[s.name] & host
            host &= (runs_on_host | tree.has_ancestor(s, runs_on_host)
                     | (tree.subtree_sum(s, runs_on_host.astype(np.int64)) > 0))
        roots = host & ~tree.has_ancestor(s, host)
        device_rows = np.flatnonzero(kinds.collective_kernel)
        launched = np.zeros(len(s), dtype=np.int64)
        for linked in (model.links.op[device_rows], model.links.launcher[device_rows]):
            launched[linked[linked >= 0]] = 1
        quiet_root = roots & (tree.subtree_sum(s, launched) == 0)
        return host & (quiet_root | tree.has_ancestor(s, quiet_root))

    return model.memo("accounting.host_communication", compute)


def _own_time(model: TraceModel, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, track) of the time of each flagged range that is its own: the range less its direct children
    that are neither flagged themselves nor runtime calls (a flagged range nested in such a child has pieces of
    its own). Children of one range are disjoint on its thread, so the pieces are the gaps between them."""
    s = model.slices
    kinds = SliceKinds(model)
    ranges = np.flatnonzero(rows)
    parent = s.parent
    child = np.flatnonzero((parent >= 0) & ~rows & ~kinds.runtime)
    child = child[rows[parent[child]]]
    owner = parent[child]
    order = np.lexsort((s.start[child], owner))
    child, owner = child[order], owner[order]
    owner_start, owner_end = s.start[owner], s.end_at(owner)
    child_start = np.clip(s.start[child], owner_start, owner_end)
    child_end = np.clip(s.end_at(child), owner_start, owner_end)
    # Each range: from its start to its first child's start (or its end); each child: from its end to the next
    # child's start in the same range (or the range's end).
    first = np.r_[True, owner[1:] != owner[:-1]] if len(owner) else np.zeros(0, dtype=bool)
    last = np.r_[owner[1:] != owner[:-1], True] if len(owner) else np.zeros(0, dtype=bool)
    first_owner = owner[first]
    at = np.searchsorted(first_owner, ranges)
    has_child = at < len(first_owner)
    has_child[has_child] = first_owner[at[has_child]] == ranges[has_child]
    range_end = s.end_at(ranges)
    range_end[has_child] = child_start[first][at[has_child]]
    child_next = np.where(last, owner_end, np.r_[child_start[1:], 0] if len(child) else child_start)
    starts = np.concatenate([s.start[ranges], child_end])
    ends = np.concatenate([range_end, child_next])
    tracks = np.concatenate([s.track[ranges], s.track[owner]])
    keep = ends > starts
    order = np.argsort(tracks[keep], kind="stable")
    return starts[keep][order], ends[keep][order], tracks[keep][order]


def communication_intervals(model: TraceModel) -> intervals.Intervals:
    """Union of the time collectives run (see the module docstring)."""
    def compute() -> intervals.Intervals:
        s = model.slices
        kernels = SliceKinds(model).collective_kernel
        starts, ends, _ = _host_communication_by_thread(model)
        return intervals.merge(np.concatenate([s.start[kernels], starts]), np.concatenate([s.end_at(kernels), ends]))

    return model.memo("accounting.communication", compute)


def collective_kernel_intervals(model: TraceModel) -> intervals.Intervals:
    """Union of the device's collective kernels: the part of communication HTA counts too."""
    return model.memo("accounting.collective_kernels", lambda: _merge_rows(model, SliceKinds(model).collective_kernel))


def dataloader_intervals(model: TraceModel) -> intervals.Intervals:
    """The data loading ranges on the host, merged: both data-loading figures are measured on them."""
    return model.memo("accounting.dataloader", lambda: _merge_rows(model, SliceKinds(model).dataloader))


def has_device_work(model: TraceModel) -> bool:
    return bool(SliceKinds(model).device_work.any())


def cpu_exec_intervals(model: TraceModel) -> intervals.Intervals:
    """Host operators, annotations and Python frames, steps excluded (the overview's CPU Exec)."""
    def compute() -> intervals.Intervals:
        kinds = SliceKinds(model)
        return _merge_rows(model, kinds.host_op & ~kinds.step)

    return model.memo("accounting.cpu_exec", compute)


def _host_communication_by_thread(model: TraceModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The host part of communication as (start, end, track) pieces, sorted by track."""
    def compute() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _own_time(model, host_communication(model))

    return model.memo("accounting.host_communication_by_thread", compute)


def host_computation_intervals(model: TraceModel) -> intervals.Intervals:
    """Host operators and annotations (the overview's CPU Exec), less each thread's own communication: a thread
    running a collective waits for it, other threads go on computing."""
    def compute() -> intervals.Intervals:
        s = model.slices
        kinds = SliceKinds(model)
        starts, ends, tracks = _host_communication_by_thread(model)
        if not len(tracks):
            return cpu_exec_intervals(model)
        ops = kinds.host_op & ~kinds.step
        waiting = np.unique(tracks)
        # Slices are sorted by track: each waiting thread's rows are one run of rows, its pieces one run too.
        row_lo, row_hi = np.searchsorted(s.track, waiting, "left"), np.searchsorted(s.track, waiting, "right")
        piece_lo, piece_hi = np.searchsorted(tracks, waiting, "left"), np.searchsorted(tracks, waiting, "right")
        free = ops.copy()
        parts = []
        for lo, hi, p_lo, p_hi in zip(row_lo.tolist(), row_hi.tolist(), piece_lo.tolist(), piece_hi.tolist()):
            free[lo:hi] = False
            rows = lo + np.flatnonzero(ops[lo:hi])
            parts.append(intervals.difference((s.start[rows], s.end_at(rows)), (starts[p_lo:p_hi], ends[p_lo:p_hi])))
        parts.append((s.start[free], s.end_at(free)))
        return intervals.merge(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))

    return model.memo("accounting.host_computation", compute)


def computation_intervals(model: TraceModel) -> intervals.Intervals:
    """Union of computation: device work that is not communication, else host work less each thread's own
    communication (see the module docstring)."""
    def compute() -> intervals.Intervals:
        kinds = SliceKinds(model)
        if has_device_work(model):
            return _merge_rows(model, kinds.device_work & ~kinds.collective_kernel)
        return host_computation_intervals(model)

    return model.memo("accounting.computation", compute)


def exposed_communication_intervals(model: TraceModel) -> intervals.Intervals:
    """Communication while nothing computes: the overview's Communication category and the step trace's
    communication phase."""
    return model.memo("accounting.exposed_communication",
                      lambda: intervals.difference(communication_intervals(model), computation_intervals(model)))


@dataclass(frozen=True)
class KernelsInSteps:
    """Kernels cut to the steps' window (first step start to last step end): the window of every device
    figure (utilization, SM efficiency, occupancy, Tensor Core share, kernel time) in the overview, and the
    kernel view's "within the steps" figures."""

    rows: np.ndarray  # kernel rows with some time inside the window
    start: np.ndarray  # ns, clipped to the window
    end: np.ndarray
    window: tuple[int, int]

    @property
    def time(self) -> float:
        """Summed kernel time inside the window, ns (concurrent kernels each count)."""
        return float((self.end - self.start).sum())

    def tensor_core_time(self, model: TraceModel) -> float:
        return float((self.end - self.start)[SliceKinds(model).tensor_core_kernel[self.rows]].sum())


def kernels_in_steps(model: TraceModel, steps: Steps, rows: np.ndarray) -> Optional[KernelsInSteps]:
    """The given kernel rows cut to the steps' window; None without steps."""
    if not len(steps):
        return None
    lo, hi = int(steps.start[0]), int(steps.end[-1])
    s = model.slices
    starts = np.clip(s.start[rows], lo, hi)
    ends = np.clip(s.end_at(rows), lo, hi)
    inside = ends > starts
    return KernelsInSteps(rows[inside], starts[inside], ends[inside], (lo, hi))


def device_intervals(model: TraceModel) -> intervals.Intervals:
    """Union of the time the device is busy: kernels (collectives included), copies, memsets; a collective whose own
    tasks the device's streams show (Ascend) through its tasks that do not wait (``SliceKinds.busy_work``)."""
    return model.memo("accounting.device", lambda: _merge_rows(model, SliceKinds(model).busy_work))


@dataclass(frozen=True)
class StepTimes:
    """Per step (ns): the shared quantities, over the windows of ``steps``."""

    steps: Steps
    duration: np.ndarray
    computation: np.ndarray
    communication: np.ndarray
    overlap: np.ndarray
    device_busy: np.ndarray

    @property
    def exposed_communication(self) -> np.ndarray:
        return self.communication - self.overlap

    @property
    def other(self) -> np.ndarray:
        """Step time with neither computation nor communication."""
        return self.duration - self.computation - self.communication + self.overlap

    def mean(self, values: np.ndarray) -> float:
        return float(values.mean()) if len(values) else 0.0


def step_times(model: TraceModel, marker: Optional[str] = None) -> StepTimes:
    def compute() -> StepTimes:
        steps = find_steps(model, marker)
        windows = (steps.start, steps.end)
        comp, comm = computation_intervals(model), communication_intervals(model)
        # [computation, communication outside computation, the rest] per step.
        split = intervals.exclusive_breakdown(windows, [comp, comm])
        communication = intervals.covered_length_in(windows, comm)
        return StepTimes(
            steps=steps,
            duration=steps.durations,
            computation=split[:, 0],
            communication=communication,
            overlap=communication - split[:, 1],
            device_busy=intervals.covered_length_in(windows, device_intervals(model)),
        )

    return model.memo(("accounting.step_times", marker), compute)
