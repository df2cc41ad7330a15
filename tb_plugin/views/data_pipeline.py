"""Data pipeline: is the job waiting for data?

Per step, the time spent waiting for data against the time computing, from the overview's step
breakdown (``overview.step_breakdown``): waiting for data is its ``dataloader`` category, the time a
DataLoader range (torch's ``enumerate(DataLoader)#...__next__``, Paddle's ``Dataloader`` events) runs
while nothing of higher priority (kernels, copies, communication, runtime calls) does; computing is
the categories above and below it (kernel, memcpy, memset, communication, runtime, cpu_exec); the
rest is ``other``. So the numbers here are the overview's, step by step.

The verdict says whether the job is data-bound, with the share of step time that waits and the
steps it rests on; the recommendations say what to change (worker processes, pin_memory, prefetch),
each with the figures it is based on. MindSpore's MindData pipeline files, when the span has them
(``ingest/mindspore/minddata.py``), add the dataset operators, their queues and the bottleneck operator.

Thresholds: data-bound from 20% of the step time waiting (feeding data faster would make steps at least 1.25x faster),
"some wait" above the overview's 5% recommendation threshold. The worker count comes from the writer's manifest tag
``num_workers``, torch's ``pt_data_worker`` processes, or the iterator's class (single-process means 0). For a
MindSpore timeline (``ascend_timeline_display_<id>.json``, or ``trace_view.json`` of a ``rank<id>`` worker), the route
reads the MindData files of device ``<id>`` from the timeline's folder through the storage (known names only, never a
path from the request): operators with their output-queue usage, the device queue's empty rate (more than 30% of
batches empty: data-bound, as MindInsight says) and the bottleneck operator (``minddata.find_bottleneck`` writes the
rule down). A missing or garbled file is a note in the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..model.categories import SliceKinds
from ..model.trace_model import TraceModel
from ..model.units import NS_PER_US
from .overview import CATEGORIES, DATALOADER_BOUND, step_breakdown

# A job counts as data-bound when at least this share of its step time waits for data: feeding it
# faster would make its steps at least 1.25x faster. Between the overview's DATALOADER_BOUND (below
# which waiting is not worth a look) and this share, the job waits for data some of the time.
DATA_BOUND_SHARE = 0.2
COMPUTE_CATEGORIES = ("kernel", "memcpy", "memset", "communication", "runtime", "cpu_exec")

# The DataLoader iterators that load in the training process, and those that use worker processes
# (torch's, then Paddle's class names, as they appear in the data-loading ranges).
SINGLE_PROCESS_ITERATORS = ("_SingleProcessDataLoaderIter", "_DataLoaderIterSingleProcess")
MULTI_PROCESS_ITERATORS = ("_MultiProcessingDataLoaderIter", "_DataLoaderIterMultiProcess")
# Thread names torch gives a DataLoader worker process and the pin-memory thread.
WORKER_THREAD_NAME = "pt_data_worker"
PIN_MEMORY_THREAD_NAME = "pt_data_pin"
# Manifest tags a user may record the worker count under (writer's ``tags``).
WORKER_TAGS = ("num_workers", "dataloader_workers")


@dataclass(frozen=True)
class LoaderInfo:
    """What the trace (and the writer's manifest) tell about the DataLoader."""

    iterators: list[str]  # names of the data-loading ranges
    calls: int
    multiprocess: Optional[bool]  # None: the ranges do not say
    num_workers: Optional[int]
    num_workers_source: Optional[str]  # "manifest", "worker_threads" or "iterator"
    pin_memory_thread: bool

    def to_json(self) -> dict[str, Any]:
        return {"iterators": self.iterators, "calls": self.calls, "multiprocess": self.multiprocess,
                "num_workers": self.num_workers, "num_workers_source": self.num_workers_source,
                "pin_memory_thread": self.pin_memory_thread}


def _manifest_workers(manifest: Optional[dict[str, Any]]) -> Optional[int]:
    tags = (manifest or {}).get("tags")
    for key in WORKER_TAGS:
        value = tags.get(key) if isinstance(tags, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def loader_info(model: TraceModel, kinds: SliceKinds, manifest: Optional[dict[str, Any]] = None) -> LoaderInfo:
    rows = np.flatnonzero(kinds.dataloader)
    ids, counts = np.unique(model.slices.name[rows], return_counts=True)
    by_calls = sorted(zip(counts.tolist(), (model.strings[int(i)] for i in ids)), key=lambda c: (-c[0], c[1]))
    iterators = [name for _count, name in by_calls]
    single = any(pattern in name for name in iterators for pattern in SINGLE_PROCESS_ITERATORS)
    multi = any(pattern in name for name in iterators for pattern in MULTI_PROCESS_ITERATORS)
    multiprocess = True if multi else False if single else None
    # Each worker is a process whose thread torch names pt_data_worker (seen when workers are profiled).
    worker_pids = {t.pid for t in model.tracks
                   if WORKER_THREAD_NAME in t.thread_name or WORKER_THREAD_NAME in t.process_name}
    pin_thread = any(PIN_MEMORY_THREAD_NAME in t.thread_name for t in model.tracks)
    workers, source = _manifest_workers(manifest), "manifest"
    if workers is None and worker_pids:
        workers, source = len(worker_pids), "worker_threads"
    if workers is None and multiprocess is False:
        workers, source = 0, "iterator"
    if workers is not None and worker_pids:
        multiprocess = True
    return LoaderInfo(iterators=iterators, calls=int(len(rows)), multiprocess=multiprocess, num_workers=workers,
                      num_workers_source=source if workers is not None else None, pin_memory_thread=pin_thread)


def _us(ns: Any) -> float:
    return float(ns) / NS_PER_US


def _pageable_copies(model: TraceModel, kinds: SliceKinds) -> tuple[int, float]:
    """Host-to-device copies from pageable memory: their count and time (µs)."""
    if not len(model.slices):
        return 0, 0.0
    pageable = model.string_ids_where(lambda t: "HtoD" in t and "Pageable" in t)[model.slices.name] & kinds.memcpy
    return int(pageable.sum()), _us(model.slices.dur[pageable].sum())


def _verdict(share: float, steps: int, step_shares: np.ndarray, mean_wait_us: float,
             mean_step_us: float) -> dict[str, Any]:
    evidence = {"data_share": share, "mean_data_wait_time": mean_wait_us, "mean_step_time": mean_step_us,
                "steps": steps, "steps_over_threshold": int((step_shares >= DATA_BOUND_SHARE).sum()),
                "threshold_share": DATA_BOUND_SHARE}
    if share >= DATA_BOUND_SHARE:
        status = "data_bound"
        text = (f"{share:.1%} of the step time is spent waiting for data "
                f"({evidence['steps_over_threshold']} of {steps} steps wait at least {DATA_BOUND_SHARE:.0%} of theirs).")
    elif share > DATALOADER_BOUND:
        status = "some_wait"
        text = (f"{share:.1%} of the step time is spent waiting for data: some, but below the "
                f"{DATA_BOUND_SHARE:.0%} from which a job counts as data-bound.")
    else:
        status = "not_data_bound"
        text = f"Waiting for data takes only {share:.1%} of the step time."
    return {"status": status, "data_bound": status == "data_bound", "basis": "trace", "text": text,
            "evidence": evidence}


def _unknown_verdict(text: str) -> dict[str, Any]:
    return {"status": "unknown", "data_bound": None, "basis": None, "text": text, "evidence": {}}


def _recommendations(model: TraceModel, kinds: SliceKinds, loader: LoaderInfo, share: float,
                     has_device: bool) -> list[dict[str, Any]]:
    recs: list[dict[str, Any]] = []
    evidence = {"data_share": share, "iterators": loader.iterators}
    if share > DATALOADER_BOUND:
        if loader.multiprocess is False:
            recs.append({
                "id": "dataloader_in_main_process",
                "text": f"Data is loaded in the training process itself (num_workers=0) and takes {share:.1%} of the "
                        "step time. Load it in worker processes, DataLoader(num_workers=N), so that the next batches "
                        "are prepared while the current one trains.",
                "evidence": {**evidence, "num_workers": 0},
            })
        else:
            workers = f" {loader.num_workers}" if loader.num_workers else ""
            recs.append({
                "id": "more_dataloader_workers",
                "text": f"The training process still waits for its{workers} DataLoader workers {share:.1%} of the step "
                        "time. Add workers (num_workers), prepare more batches ahead (prefetch_factor), keep the "
                        "workers between epochs (persistent_workers=True), or make the dataset's transforms cheaper.",
                "evidence": {**evidence, **({"num_workers": loader.num_workers} if loader.num_workers else {})},
            })
    copies, copy_us = _pageable_copies(model, kinds)
    if has_device and copies and not loader.pin_memory_thread:
        recs.append({
            "id": "pin_memory",
            "text": f"{copies} host-to-device copies read pageable memory. DataLoader(pin_memory=True) returns batches "
                    "in page-locked memory: copies get faster and, with tensor.to(device, non_blocking=True), "
                    "overlap computation.",
            "evidence": {"pageable_copies": copies, "pageable_copy_time": copy_us},
        })
    return recs


def data_pipeline(model: TraceModel, marker: Optional[str] = None, manifest: Optional[dict[str, Any]] = None,
                  minddata: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """The data pipeline view of a span (``minddata``: ``ingest.minddata.read_minddata``'s answer, if any)."""
    breakdown = step_breakdown(model, marker)
    steps, per_step = breakdown.steps, breakdown.per_step
    kinds = SliceKinds(model)
    has_device = bool(kinds.device_activity.any())
    loader = loader_info(model, kinds, manifest)
    notes: list[str] = []

    wait = per_step[:, CATEGORIES.index("dataloader")].astype(np.float64)
    compute = per_step[:, [CATEGORIES.index(c) for c in COMPUTE_CATEGORIES]].sum(axis=1).astype(np.float64)
    other = per_step[:, CATEGORIES.index("other")].astype(np.float64)
    durations = per_step.sum(axis=1).astype(np.float64)
    step_shares = np.divide(wait, durations, out=np.zeros_like(wait), where=durations > 0)
    total = float(durations.sum())
    share = float(wait.sum()) / total if total > 0 else 0.0
    n = len(steps)

    step_rows = [
        {"name": name, "start": _us(steps.start[i]), "dur": _us(durations[i]), "data_wait": _us(wait[i]),
         "compute": _us(compute[i]), "other": _us(other[i]), "data_share": float(step_shares[i])}
        for i, name in enumerate(steps.names)
    ]
    summary = {
        "steps": n,
        "mean_step_time": _us(total / n) if n else 0.0,
        "mean_data_wait": _us(wait.mean()) if n else 0.0,
        "mean_compute": _us(compute.mean()) if n else 0.0,
        "mean_other": _us(other.mean()) if n else 0.0,
        "total_data_wait": _us(wait.sum()),
        "data_share": share,
    }

    if steps.source == "span":
        notes.append("No step markers (ProfilerStep#N, or the step marker given) were found: the whole span counts "
                     "as one step.")
    if loader.calls == 0:
        notes.append("No data-loading ranges (torch's enumerate(DataLoader)#... or Paddle's Dataloader events) are in "
                     "this trace, so the time spent waiting for data cannot be told apart from the rest.")
        verdict = _unknown_verdict("This trace does not show when the job loads data.")
        recommendations: list[dict[str, Any]] = []
    elif n == 0 or total <= 0:
        notes.append("The span has no step time to compare the data loading with.")
        verdict = _unknown_verdict("The span has no steps.")
        recommendations = []
    else:
        verdict = _verdict(share, n, step_shares, summary["mean_data_wait"], summary["mean_step_time"])
        recommendations = _recommendations(model, kinds, loader, share, has_device)
    if loader.calls and loader.multiprocess and loader.num_workers is None:
        notes.append("The DataLoader uses worker processes; how many is not recorded in the trace (record it as the "
                     "writer tag num_workers).")

    if minddata is not None:
        notes.extend(minddata.get("notes", []))
        if verdict["status"] == "unknown" and minddata.get("verdict"):
            queue = minddata["verdict"]
            verdict = {"status": queue["status"], "data_bound": queue["status"] == "data_bound",
                       "basis": "device_queue", "text": queue["text"], "evidence": dict(queue["evidence"])}
        recommendations = recommendations + list(minddata.get("recommendations", []))

    return {
        "step_source": steps.source,
        "has_device": has_device,
        "steps": step_rows,
        "summary": summary,
        "loader": loader.to_json(),
        "verdict": verdict,
        "recommendations": recommendations,
        "minddata": {k: v for k, v in minddata.items() if k not in ("notes", "recommendations")}
        if minddata is not None else None,
        "notes": notes,
    }
