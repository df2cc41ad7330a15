"""Overview: where a step's time goes, how busy each GPU is, and what to do about it.

Every instant of a step is assigned to exactly one category, by priority
Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU Exec > Other,
so the categories of a step sum to its duration.

The host CPU utilization that the writer sampled over a span lives in the span's manifest,
not in its trace: ``with_host_cpu`` adds it to an overview answer (computed or precomputed)
at request time, from the manifest as it is then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import numpy as np

from ..model import intervals
from ..model.categories import TENSOR_CORE_ELIGIBLE_OPS, SliceKinds
from ..model.float32 import slice_column_as_written
from ..model.steps import Steps, find_steps
from ..model.operator_categories import LABELS
from ..model.trace_model import TraceModel
from ..model.units import NS_PER_US, US_PER_SECOND
from .quantities import accounting, efficiency
from .quantities.devices import GPU_MEMORY_DEVICE_TYPES, device

CATEGORIES = ("kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other")
DEVICE_CATEGORIES = ("kernel", "memcpy", "memset")

# Recommendation thresholds (fractions of step time unless said otherwise).
DATALOADER_BOUND = 0.05
LOW_GPU_UTILIZATION = 0.5
LAUNCH_BOUND_RUNTIME_SHARE = 0.1
TINY_KERNEL_US = 5.0
COMMUNICATION_HIGH = 0.1
MEMORY_PEAK_HIGH = 0.9
HOST_SYNC_SHARE = 0.05
TENSOR_CORE_ELIGIBLE_DOMINANT = 0.5
TENSOR_CORE_USED = 0.1

SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "hipStreamSynchronize",
              "hipDeviceSynchronize", "hipEventSynchronize", "cuStreamSynchronize", "cuCtxSynchronize")
SCALAR_SYNC_OPS = ("aten::item", "aten::_local_scalar_dense")
# A manifest is a file anyone may have written: at most this many CPU samples are passed on.
HOST_CPU_MAX_POINTS = 1000
HOST_CPU_TIME_ROUNDING_S = 0.001

SLOW_CONV_OPS = ("aten::thnn_conv2d", "aten::_slow_conv2d_forward", "aten::_slow_conv2d_backward",
                 "aten::slow_conv3d", "aten::slow_conv_dilated2d", "aten::slow_conv_transpose2d",
                 "aten::thnn_conv2d_forward", "aten::thnn_conv2d_backward")


@dataclass(frozen=True)
class Breakdown:
    steps: Steps
    per_step: np.ndarray  # (steps, categories) ns

    @property
    def mean(self) -> np.ndarray:
        return self.per_step.mean(axis=0) if len(self.per_step) else np.zeros(len(CATEGORIES))


def category_intervals(model: TraceModel) -> dict[str, intervals.Intervals]:
    """The time intervals of each category (before priority), over the whole span."""

    def of(mask: np.ndarray) -> intervals.Intervals:
        return intervals.merge(model.slices.start[mask], model.slices.end_at(mask))

    def compute() -> dict[str, intervals.Intervals]:
        kinds = SliceKinds(model)
        return {
            "kernel": of(kinds.kernel & ~kinds.collective_kernel),
            "memcpy": of(kinds.memcpy),
            "memset": of(kinds.memset),
            "communication": accounting.exposed_communication_intervals(model),
            "runtime": of(kinds.runtime),
            "dataloader": accounting.dataloader_intervals(model),
            "cpu_exec": accounting.cpu_exec_intervals(model),
        }

    return model.memo("category_intervals", compute)


def step_breakdown(model: TraceModel, marker: Optional[str] = None) -> Breakdown:
    def compute() -> Breakdown:
        steps = find_steps(model, marker)
        cats = category_intervals(model)
        per_step = intervals.exclusive_breakdown((steps.start, steps.end), [cats[c] for c in CATEGORIES[:-1]])
        return Breakdown(steps=steps, per_step=per_step)

    return model.memo(("breakdown", marker), compute)


def _us(ns: Any) -> float:
    return float(ns) / NS_PER_US


# Why a device's figure is null (shown beside "n/a"): each figure needs something of the trace.
NO_BLOCKS_PER_SM = ("its kernels carry no \"blocks per SM\" (Kineto writes it for CUDA kernels of a device "
                    "whose SM count it knows)")
NO_OCCUPANCY = ("its kernels carry no \"est. achieved occupancy %\" (Kineto writes it for CUDA kernels of a "
                "device whose properties it knows)")
NOT_TENSOR_CORES = "Tensor Cores are NVIDIA's: kernel names of this device do not say whether its matrix units ran"


def device_summaries(model: TraceModel, steps: Steps) -> list[dict[str, Any]]:
    """Per device: utilization, estimated SM efficiency and occupancy, Tensor Core share, all over the same
    window (first step start to last step end): kernels are cut to it, and means are weighted by the time of
    each kernel inside it. A figure the trace cannot support is None, with the reason in ``unavailable``.

    Kernel time is the computation kernels' (the breakdown's Kernel category counts the same kernels),
    communication time the collective kernels'; utilization is the time a kernel keeps the device busy
    (``SliceKinds.busy_kernel``: a collective whose own tasks the device's streams show, an Ascend HCCL operator,
    is busy while those tasks copy or reduce, not while they wait for a peer), the Analyses page's definition."""
    kinds = SliceKinds(model)
    s = model.slices
    kernel_rows = np.flatnonzero(kinds.kernel)
    busy_rows = np.flatnonzero(kinds.busy_kernel)
    device_ids = sorted({int(d) for d in np.unique(s.device[kernel_rows]) if d >= 0})
    if not device_ids and len(kernel_rows):
        device_ids = sorted({t.device for t in model.tracks if t.kind == "gpu" and t.device is not None})
    if not len(steps):
        return []
    lo, hi = int(steps.start[0]), int(steps.end[-1])
    span = max(hi - lo, 1)
    blocks_written = slice_column_as_written(model, "blocks_per_sm")
    occupancy_written = slice_column_as_written(model, "occupancy")
    out = []
    for device_id in device_ids:
        described = device(model, device_id)
        by_device = bool((s.device[kernel_rows] >= 0).any())
        rows = kernel_rows[s.device[kernel_rows] == device_id] if by_device else kernel_rows
        inside = accounting.kernels_in_steps(model, steps, rows)
        busy_inside = accounting.kernels_in_steps(model, steps, busy_rows[s.device[busy_rows] == device_id]
                                                  if by_device else busy_rows)
        assert inside is not None and busy_inside is not None
        rows, starts, ends = inside.rows, inside.start, inside.end
        busy = intervals.total_length((busy_inside.start, busy_inside.end))
        collective = kinds.collective_kernel[rows]
        segments = intervals.Segments.of((starts, ends), (np.array([lo]), np.array([hi])))
        blocks = np.nan_to_num(blocks_written[rows], nan=0.0)
        sm_busy = float((np.minimum(segments.coverage(starts, ends, blocks), 1.0) * segments.lengths).sum())
        dur = (ends - starts).astype(np.float64)
        occupancy = occupancy_written[rows]
        has_occ = np.isfinite(occupancy)
        all_time = inside.time
        communication_time = float((ends - starts)[collective].sum())
        tc_time = inside.tensor_core_time(model)
        p = described.properties
        major, minor = p.get("computeMajor"), p.get("computeMinor")
        unavailable: dict[str, str] = {}
        if not (blocks > 0).any():
            unavailable["sm_efficiency"] = NO_BLOCKS_PER_SM
        if not has_occ.any():
            unavailable["achieved_occupancy"] = NO_OCCUPANCY
        tensor_cores_known = described.tensor_cores_known
        if not tensor_cores_known:
            unavailable["tensor_core_share"] = NOT_TENSOR_CORES
        out.append({
            "id": device_id,
            "name": described.name,
            "label": described.label,
            "kind": described.kind,
            "memory": p.get("totalGlobalMem"),
            "compute_capability": f"{major}.{minor}" if major is not None else None,
            "num_sms": p.get("numSms"),
            "utilization": busy / span,
            "sm_efficiency": None if "sm_efficiency" in unavailable else sm_busy / span,
            "achieved_occupancy": None if "achieved_occupancy" in unavailable
            else float((occupancy[has_occ] * dur[has_occ]).sum() / max(dur[has_occ].sum(), 1.0) / 100.0),
            "tensor_core_share": None if not tensor_cores_known else tc_time / all_time if all_time > 0 else 0.0,
            "kernel_time": _us(all_time - communication_time),
            "communication_time": _us(communication_time),
            "unavailable": unavailable,
        })
    return out


def overview(model: TraceModel, marker: Optional[str] = None, batch_size: Optional[int] = None) -> dict[str, Any]:
    breakdown = step_breakdown(model, marker)
    steps = breakdown.steps
    per_step = breakdown.per_step
    devices = device_summaries(model, steps)
    has_device = bool(SliceKinds(model).device_activity.any())
    step_rows = [
        {
            "name": name,
            "start": _us(steps.start[i]),
            "dur": _us(steps.end[i] - steps.start[i]),
            "host_dur": _us(steps.host_end[i] - steps.host_start[i]),
            "breakdown": {c: _us(per_step[i, j]) for j, c in enumerate(CATEGORIES)},
        }
        for i, name in enumerate(steps.names)
    ]
    mean = breakdown.mean
    mean_step = float(mean.sum())
    result: dict[str, Any] = {
        "step_source": steps.source,
        "steps_left_out": [{"name": name, "reason": reason} for name, reason in steps.left_out],
        "has_device": has_device,
        "categories": list(CATEGORIES if has_device else [c for c in CATEGORIES if c not in DEVICE_CATEGORIES]),
        "steps": step_rows,
        "breakdown": {c: _us(mean[j]) for j, c in enumerate(CATEGORIES)},
        "mean_step_time": _us(mean_step),
        "devices": devices,
        "benchmark": benchmark(steps, per_step, batch_size),
        **time_split(model, marker),
    }
    result["recommendations"] = recommendations(model, result, breakdown)
    return result


def time_split(model: TraceModel, marker: Optional[str] = None) -> dict[str, Any]:
    """Communication and its overlap with computation, and device busy/idle time, mean per step (µs),
    as ``accounting`` defines them (the Distributed view's rank rows show the same numbers)."""
    times = accounting.step_times(model, marker)
    total = times.mean(times.communication)
    device = accounting.has_device_work(model)
    busy = times.mean(times.device_busy)
    return {
        "communication": {
            "total": _us(total),
            "overlap": _us(times.mean(times.overlap)),
            "exposed": _us(times.mean(times.exposed_communication)),
            "computation": _us(times.mean(times.computation)),
            "overlap_ratio": float(times.overlap.sum() / times.communication.sum()) if total > 0 else None,
        },
        "device_busy": _us(busy) if device else None,
        "device_idle": _us(times.mean(times.duration) - busy) if device else None,
    }


def benchmark(steps: Steps, per_step: np.ndarray, batch_size: Optional[int]) -> dict[str, Any]:
    """Paddle's timer summary: step time statistics, throughput and the data-loading share."""
    if len(steps) == 0:
        return {}
    durations = per_step.sum(axis=1).astype(np.float64)
    mean = float(durations.mean())
    dataloader = float(per_step[:, CATEGORIES.index("dataloader")].sum())
    out = {
        "steps": len(steps),
        "mean_step_time": _us(mean),
        "min_step_time": _us(durations.min()),
        "max_step_time": _us(durations.max()),
        "steps_per_second": 1e9 / mean if mean > 0 else None,
        "reader_cost": _us(dataloader / len(steps)),
        "dataloader_share": dataloader / float(durations.sum()) if durations.sum() > 0 else 0.0,
        "batch_size": batch_size,
        "samples_per_second": batch_size * 1e9 / mean if batch_size and mean > 0 else None,
    }
    return out


def _share(result: dict[str, Any], category: str) -> float:
    mean = result["mean_step_time"]
    return result["breakdown"][category] / mean if mean > 0 else 0.0


def recommendations(model: TraceModel, result: dict[str, Any], breakdown: Breakdown) -> list[dict[str, Any]]:
    """Rules over the numbers above; each says what it saw (evidence) and what to try."""
    recs: list[dict[str, Any]] = []
    kinds = SliceKinds(model)
    s = model.slices
    name_of = model.strings
    has_device = result["has_device"]

    share = _share(result, "dataloader")
    if share > DATALOADER_BOUND:
        recs.append({
            "id": "dataloader_bound",
            "text": f"{share:.1%} of the step time is spent loading data. Give the DataLoader more workers "
                    "(num_workers), enable pin_memory, or prefetch, so that data loading overlaps computation.",
            "evidence": {"dataloader_share": share, "dataloader_us": result["breakdown"]["dataloader"]},
        })
    for card in result["devices"]:
        if card["utilization"] < LOW_GPU_UTILIZATION:
            recs.append({
                "id": "low_gpu_utilization",
                "text": f"{card['label']} is busy only {card['utilization']:.1%} of the steps. Look at what "
                        "it waits for in the breakdown (data loading, CPU work, synchronisation) and increase the "
                        "batch size or overlap that work.",
                "evidence": {"device": card["id"], "utilization": card["utilization"]},
            })
    if has_device:
        kernel_durations = s.dur[kinds.kernel] / NS_PER_US
        median_kernel = float(np.median(kernel_durations)) if len(kernel_durations) else 0.0
        runtime_share = _share(result, "runtime")
        if runtime_share > LAUNCH_BOUND_RUNTIME_SHARE and median_kernel < TINY_KERNEL_US:
            recs.append({
                "id": "launch_bound",
                "text": f"Kernel launches take {runtime_share:.1%} of the step and the median kernel runs only "
                        f"{median_kernel:.1f} µs: the GPU mostly waits for launches. Fuse small operations "
                        "(torch.compile), use CUDA graphs, or give each kernel more work.",
                "evidence": {"runtime_share": runtime_share, "median_kernel_us": median_kernel,
                             "kernels": int(kinds.kernel.sum())},
            })
        recs.extend(_tensor_core_rule(model, kinds, result))
        slow = model.string_ids_where(lambda t: t in SLOW_CONV_OPS)[s.name] & kinds.operator if len(s) else s.name < 0
        if slow.any():
            names = sorted({name_of[int(n)] for n in s.name[slow]})
            recs.append({
                "id": "slow_conv_path",
                "text": f"Convolutions run on a slow generic path ({', '.join(names)}) on a GPU run instead of "
                        "cuDNN. Check that torch.backends.cudnn.enabled is True and that inputs are on the GPU in a "
                        "supported layout and dtype.",
                "evidence": {"operators": names, "calls": int(slow.sum()),
                             "host_time_us": float(s.dur[slow].sum() / NS_PER_US)},
            })
    share = _share(result, "communication")
    if share > COMMUNICATION_HIGH:
        recs.append({
            "id": "communication_high",
            "text": f"Communication takes {share:.1%} of the step without overlapping computation. Overlap it "
                    "(DDP bucketing, gradient accumulation with no_sync), compress gradients, or check the "
                    "Distributed view for stragglers.",
            "evidence": {"communication_share": share},
        })
    recs.extend(_memory_peak_rule(model, result))
    data_parallel = model.string_ids_where(lambda t: "DataParallel" in t and "Distributed" not in t)[s.name] \
        if len(s) else s.name < 0
    if data_parallel.any():
        recs.append({
            "id": "data_parallel",
            "text": "This job uses DataParallel, which runs every GPU from one Python process. "
                    "DistributedDataParallel (one process per GPU) is faster in almost every case.",
            "evidence": {"events": int(data_parallel.sum())},
        })
    recs.extend(_host_sync_rule(model, kinds, breakdown))
    return recs


def _tensor_core_rule(model: TraceModel, kinds: SliceKinds, result: dict[str, Any]) -> list[dict[str, Any]]:
    s = model.slices
    # Where Tensor Core use can be told (NVIDIA's kernel names) and the device has them (compute capability 7+).
    capable = [d for d in result["devices"] if d["tensor_core_share"] is not None
               and d["compute_capability"] and float(d["compute_capability"]) >= 7.0]
    if not capable:
        return []
    kernels = np.flatnonzero(kinds.kernel)
    total = float(s.dur[kernels].sum())
    if total <= 0:
        return []
    op = model.links.op[kernels]
    eligible_name = model.string_ids_where(lambda t: t in TENSOR_CORE_ELIGIBLE_OPS)
    eligible = np.zeros(len(kernels), dtype=bool)
    has_op = op >= 0
    eligible[has_op] = eligible_name[s.name[op[has_op]]]
    eligible_share = float(s.dur[kernels][eligible].sum()) / total
    tc_share = float(s.dur[kernels][kinds.tensor_core_kernel[kernels]].sum()) / total
    if eligible_share > TENSOR_CORE_ELIGIBLE_DOMINANT and tc_share < TENSOR_CORE_USED:
        return [{
            "id": "tensor_cores_unused",
            "text": f"{eligible_share:.0%} of kernel time comes from operators that can use Tensor Cores, but only "
                    f"{tc_share:.1%} runs on them. Enable mixed precision (torch.autocast with float16/bfloat16) or "
                    "TF32 (torch.backends.cuda.matmul.allow_tf32 = True).",
            "evidence": {"eligible_kernel_share": eligible_share, "tensor_core_share": tc_share},
        }]
    return []


def _memory_peak_rule(model: TraceModel, result: dict[str, Any]) -> list[dict[str, Any]]:
    inst = model.instants
    recs = []
    gpu_mem = np.isin(inst.device_type, GPU_MEMORY_DEVICE_TYPES) & (inst.total_allocated >= 0)
    for card in result["devices"]:
        capacity = card.get("memory")
        rows = gpu_mem & (inst.device_id == card["id"])
        if not capacity or not rows.any():
            continue
        peak = int(inst.total_reserved[rows].max()) if (inst.total_reserved[rows] >= 0).any() else \
            int(inst.total_allocated[rows].max())
        if peak > MEMORY_PEAK_HIGH * capacity:
            recs.append({
                "id": "gpu_memory_peak",
                "text": f"{card['label']} reaches {peak / capacity:.0%} of its memory: the job is close to running "
                        "out. Lower the batch size, use activation checkpointing or mixed precision.",
                "evidence": {"device": card["id"], "peak_bytes": peak, "capacity_bytes": capacity},
            })
    return recs


def _host_sync_rule(model: TraceModel, kinds: SliceKinds, breakdown: Breakdown) -> list[dict[str, Any]]:
    s = model.slices
    steps = breakdown.steps
    if not len(steps):
        return []
    sync = model.string_ids_where(lambda t: t in SYNC_CALLS or t in SCALAR_SYNC_OPS)[s.name] if len(s) else s.name < 0
    sync &= kinds.on_host
    if not sync.any():
        return []
    total = float(steps.durations.sum())
    within = intervals.covered_length_in(
        (steps.start, steps.end), intervals.merge(s.start[sync], s.end_at(sync))
    ).sum()
    share = float(within) / total if total > 0 else 0.0
    if share <= HOST_SYNC_SHARE:
        return []
    names = sorted({model.strings[int(n)] for n in s.name[sync]})
    return [{
        "id": "host_sync",
        "text": f"The host waits for the GPU {share:.1%} of the step ({', '.join(names)}). Avoid .item(), "
                ".cpu() and explicit synchronisation inside the training loop; log metrics every N steps instead.",
        "evidence": {"sync_share": share, "calls": int(sync.sum()), "names": names},
    }]


# --- host CPU (from the writer's manifest) -----------------------------------------------


def _finite(value: Any, low: float = 0.0, high: float = math.inf) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        return None
    return number if math.isfinite(number) and low <= number <= high else None


def _numbers(values: Any, count: int, low: float, high: float) -> Optional[list[float]]:
    """``values`` when it is a list of ``count`` finite numbers within [low, high], else None."""
    if not isinstance(values, list) or len(values) != count:
        return None
    numbers: list[float] = []
    for value in values:
        number = _finite(value, low, high)
        if number is None:
            return None
        numbers.append(number)
    return numbers


def _host_cpu_samples(samples: Any, duration_s: float) -> Optional[dict[str, Any]]:
    """The utilization series, if it is well formed (equal lengths, times in order within the span)."""
    if not isinstance(samples, Mapping):
        return None
    times = samples.get("time")
    if not isinstance(times, list) or not 0 < len(times) <= HOST_CPU_MAX_POINTS:
        return None
    # The writer rounds times to the ms: the last may pass the duration by that much.
    offsets = _numbers(times, len(times), 0.0, duration_s + HOST_CPU_TIME_ROUNDING_S)
    if offsets is None or any(later < earlier for earlier, later in zip(offsets, offsets[1:])):
        return None
    offsets = [min(offset, duration_s) for offset in offsets]
    process = _numbers(samples.get("process"), len(times), 0.0, math.inf)
    if process is None:
        return None
    system = None if samples.get("system") is None else _numbers(samples.get("system"), len(times), 0.0, 1.0)
    if system is None and samples.get("system") is not None:
        return None
    return {"time": [t * US_PER_SECOND for t in offsets], "process": process, "system": system}


def host_cpu(manifest: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """The manifest's ``cpu_utilization``, checked and in the routes' units (µs, ratios); None when
    the span has none or it is malformed.

    ``process``: this process's CPU time / elapsed time (1.0 = one CPU busy; at most ``cpu_count``),
    ``system``: busy share of all the machine's CPUs (0..1), each as the span's mean and the
    highest sampled interval, like the CPU rows of Paddle's "Device Summary".
    """
    value = manifest.get("cpu_utilization")
    if not isinstance(value, Mapping):
        return None
    duration = _finite(value.get("duration"))
    process_mean = _finite(value.get("process"))
    if duration is None or duration <= 0 or process_mean is None:
        return None
    cpu_count = value.get("cpu_count")
    interval = _finite(value.get("interval"))
    system_mean = _finite(value.get("system"), 0.0, 1.0)
    return {
        "cpu_count": cpu_count if isinstance(cpu_count, int) and not isinstance(cpu_count, bool) and cpu_count > 0
        else None,
        "interval": interval * US_PER_SECOND if interval is not None else None,
        "duration": duration * US_PER_SECOND,
        "process": {"mean": process_mean, "max": _finite(value.get("process_max"))},
        "system": {"mean": system_mean, "max": _finite(value.get("system_max"), 0.0, 1.0)}
        if system_mean is not None else None,
        "samples": _host_cpu_samples(value.get("samples"), duration),
    }


def with_host_cpu(answer: Mapping[str, Any], manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of an overview answer with ``host_cpu`` from the span's manifest (None without one).

    Kept out of ``overview()`` on purpose: its answers are memoised and precomputed per
    (marker, batch size), while the manifest can arrive after the trace was parsed.
    """
    result = dict(answer)
    result["host_cpu"] = host_cpu(manifest)
    return result


# --- how far from the hardware's peak (the device peaks apply at request time) ---------------------------------

# A matrix category taking at least this share of device time, at less than this share of its roofline, earns a
# recommendation.
EFFICIENCY_CATEGORY_SHARE = 0.2
EFFICIENCY_LOW_ROOFLINE = 0.5
# Tensor cores take 16-byte multiples of each dimension: 8 elements of 16-bit types, 16 of 8-bit, 4 of TF32.
TENSOR_CORE_MULTIPLE = {"bf16": 8, "fp16": 8, "fp8": 16, "int8": 16, "tf32": 4}


def with_efficiency(answer: Mapping[str, Any], model: TraceModel, summary: Mapping[str, Any],
                    roofs: efficiency.Roofs) -> dict[str, Any]:
    """A copy of an overview answer with ``efficiency`` (MFU per step, the share of device time under half its
    roofline, device time per operator category: ``quantities/efficiency.efficiency_overview``) and the
    recommendations that read them. Kept out of ``overview()``: its answers are stored with the model, the device
    peaks are the server's."""
    result = dict(answer)
    figures = efficiency.efficiency_overview(model, summary, roofs)
    figures["peaks_error"] = roofs.peaks_error
    result["efficiency"] = figures
    result["recommendations"] = list(answer.get("recommendations", [])) + _efficiency_rules(model, summary, roofs)
    return result


def _efficiency_rules(model: TraceModel, summary: Mapping[str, Any], roofs: efficiency.Roofs) -> list[dict[str, Any]]:
    if summary["time_basis"] != "device":
        return []
    groups = summary["groups"]
    fig = efficiency.group_figures(summary, roofs)
    device_time = summary["device_time"]
    recs = []
    for category in ("gemm", "grouped_gemm", "convolution", "attention"):
        picked = [i for i, c in enumerate(groups["category"]) if c == category and math.isfinite(fig.roofline_time[i])]
        time = sum(groups["time"][i] for i in picked)
        if not picked or device_time <= 0 or time / device_time < EFFICIENCY_CATEGORY_SHARE:
            continue
        roof = sum(float(fig.roofline_time[i]) for i in picked) / time if time > 0 else 1.0
        if roof >= EFFICIENCY_LOW_ROOFLINE:
            continue
        by_precision: dict[str, float] = {}
        for i in picked:
            by_precision[groups["precision"][i]] = by_precision.get(groups["precision"][i], 0.0) + groups["time"][i]
        precision = max(by_precision.items(), key=lambda kv: kv[1])[0]
        label = LABELS[category]
        text = (f"{time / device_time:.0%} of device time is in {label} operators at {roof:.0%} of the "
                f"{precision.upper()} roof.")
        awkward = _awkward_shapes(groups, picked, precision)
        if awkward:
            dims = ", ".join(f"{d} = {v}" for d, v in awkward[:3])
            text += (f" Shapes with {dims} are not tensor-core friendly: make M, N and K multiples of "
                     f"{TENSOR_CORE_MULTIPLE[precision]} for {precision.upper()} (pad them).")
        else:
            text += " See the Roofline page for the calls furthest from their roof."
        recs.append({"id": f"low_roofline_{category}", "text": text,
                     "evidence": {"category": category, "device_share": time / device_time, "roofline_share": roof,
                                  "precision": precision, "awkward_dimensions": [f"{d} = {v}" for d, v in awkward]}})
    return recs


def _awkward_shapes(groups: Mapping[str, Any], picked: list[int], precision: str) -> list[tuple[str, int]]:
    """Product dimensions that are not multiples of the tensor cores' width, the ones with most time first."""
    multiple = TENSOR_CORE_MULTIPLE.get(precision)
    if multiple is None:
        return []
    time: dict[tuple[str, int], float] = {}
    for i in picked:
        if groups["precision"][i] != precision:
            continue
        params = groups["params"][i]
        for dim in ("M", "N", "K"):
            value = params.get(dim)
            if isinstance(value, int) and value % multiple and value > 1:
                time[(dim, value)] = time.get((dim, value), 0.0) + groups["time"][i]
    return [key for key, _ in sorted(time.items(), key=lambda kv: -kv[1])]
