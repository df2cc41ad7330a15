"""One definition of each time quantity that several views show.

Every view that shows communication, computation, their overlap, or the time a device is
busy within the steps (overview, distributed, step trace, compare, run table, report, the
``summary`` command, the Scalars) reads it from here, so the same quantity is the same
number wherever it appears.

Definitions (per step window of ``find_steps``; a span's figure is the mean over its steps):

* **Communication** (``communication_intervals``): time a collective runs. On the device:
  collective kernels (NCCL/RCCL/HCCL kernels, and kernels launched from inside a collective
  operator). On the host: the outermost host range of a collective (``gloo:``, ``nccl:``,
  ``c10d::``, ``record_param_comms``, …) that launched *no* device collective kernel. Gloo
  (and any collective that runs on the host) is thus communication on CPU-only and on GPU
  spans alike, while the host range that only enqueues an NCCL kernel is not: the kernel is
  the communication. DDP's reducer bookkeeping ranges (``torch.distributed.ddp.reducer::``) copy
  data locally and are not communication. torch-tb-profiler counts the host ranges of NCCL
  collectives too; HTA counts NCCL kernels only, as here.
* **Computation** (``computation_intervals``): on a span with device work, the device work
  that is not communication (kernels, memory copies and memsets); on a span without, host
  operators and annotations (the overview's CPU Exec) outside communication. A host thread's
  ranges while a collective runs cannot be told from waiting for it, so on host-only spans
  communication takes priority over host computation, as it does in the overview's
  breakdown: nothing of a host-only span's communication counts as overlapped.
  (torch-tb-profiler overlaps host operators with Gloo ranges on CPU-only runs; HTA
  counts computation kernels only, not memory copies.)
* **Overlap**: communication while computation runs. ``communication - overlap`` is the
  overview's Communication category (its priority puts kernels, memcpy and memset first).
* **Device busy**: time at least one device activity (kernel, copy, memset) runs; **device
  idle** is the rest of the step.
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


def _merge_rows(model: TraceModel, mask: np.ndarray) -> intervals.Intervals:
    return intervals.merge(model.slices.start[mask], model.slices.end_at(mask))


def host_communication(model: TraceModel) -> np.ndarray:
    """Rows of the outermost host ranges of collectives that launched no device collective kernel."""
    def compute() -> np.ndarray:
        kinds = SliceKinds(model)
        s = model.slices
        host = kinds.collective_op & kinds.on_host
        if not host.any():
            return host
        bookkeeping = model.string_ids_where(lambda name: bool(_BOOKKEEPING.match(name)))[s.name] & host
        host &= ~(bookkeeping | tree.has_ancestor(s, bookkeeping))
        roots = host & ~tree.has_ancestor(s, host)
        device_rows = np.flatnonzero(kinds.collective_kernel)
        launched = np.zeros(len(s), dtype=np.int64)
        for linked in (model.links.op[device_rows], model.links.launcher[device_rows]):
            launched[linked[linked >= 0]] = 1
        return roots & (tree.subtree_sum(s, launched) == 0)

    return model.memo("accounting.host_communication", compute)


def communication_intervals(model: TraceModel) -> intervals.Intervals:
    """Union of the time collectives run (see the module docstring)."""
    def compute() -> intervals.Intervals:
        return _merge_rows(model, SliceKinds(model).collective_kernel | host_communication(model))

    return model.memo("accounting.communication", compute)


def collective_kernel_intervals(model: TraceModel) -> intervals.Intervals:
    """Union of the device's collective kernels: the part of communication HTA counts too."""
    return model.memo("accounting.collective_kernels", lambda: _merge_rows(model, SliceKinds(model).collective_kernel))


def has_device_work(model: TraceModel) -> bool:
    return bool(SliceKinds(model).device_work.any())


def cpu_exec_intervals(model: TraceModel) -> intervals.Intervals:
    """Host operators, annotations and Python frames, steps excluded (the overview's CPU Exec)."""
    def compute() -> intervals.Intervals:
        kinds = SliceKinds(model)
        return _merge_rows(model, kinds.host_op & ~kinds.step)

    return model.memo("accounting.cpu_exec", compute)


def computation_intervals(model: TraceModel) -> intervals.Intervals:
    """Union of computation: device work that is not communication, else host work outside communication."""
    def compute() -> intervals.Intervals:
        kinds = SliceKinds(model)
        if has_device_work(model):
            return _merge_rows(model, kinds.device_work & ~kinds.collective_kernel)
        return intervals.difference(cpu_exec_intervals(model), communication_intervals(model))

    return model.memo("accounting.computation", compute)


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
    """Union of every device activity that is work: kernels (collectives included), copies, memsets."""
    return model.memo("accounting.device", lambda: _merge_rows(model, SliceKinds(model).device_work))


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
