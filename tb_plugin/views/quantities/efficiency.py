"""How far from the hardware's peak: achieved FLOP/s and bytes/s, the roofline and model FLOPs utilization, one
definition for the Operator and Kernel tables, the Roofline page, the Overview, the run table and Compare.

Two halves, so that the device peaks (which a user file may change while the server runs) never go into an answer
stored with the model:

* ``work_summary(model)`` is derived from the trace alone, in the parser process with the other first answers: the
  counted calls (``operator_work.py``) grouped by operator, arguments, precision and device, with their FLOPs and
  bytes per call and the time they took, the same per kernel, per step and per operator category.
* the figures that need a peak are computed from it at request time (``Roofs``): for a group of identical calls,
  the roofline time of one call is ``max(FLOPs / peak FLOP/s of its precision and unit, bytes / memory
  bandwidth)``, the bound is whichever term is larger (compute or memory), and the share of the roofline is the
  roofline time over the measured time (1 = at the roof).

The measured time of a call is the device time of the work it launched (kernels, copies, memsets, on a span with
device activity), else, on a CPU-only span, the call's own duration on the host. Achieved FLOP/s is FLOPs over that
time, arithmetic intensity FLOPs over bytes.

Model FLOPs utilization (MFU) of a step counts the FLOPs of the matrix operators (products, convolutions,
attention: what runs on tensor and matrix cores) of the calls that started in the step, each over the matrix peak
of its precision on its device: ``MFU = sum(FLOPs / peak) / (step time x devices used)``. Elementwise,
normalization and reduction work is not counted (it is bound by memory, and counting it would flatter a step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from ...model.categories import SliceKinds, kernel_group_name
from ...model.factorize import factorize, unique_rows
from ...model.operator_categories import (
    CATEGORIES, CODE, LABELS, device_work_categories, operator_categories_by_name)
from ...model.steps import find_steps
from ...model.trace_model import TraceModel
from .device_peaks import DevicePeaks, PeaksFileError, Resolved, load_peaks_file, resolve
from .copies import copy_summary
from .devices import device, device_properties
from .operator_work import COUNTED, INSIDE_COUNTED, NESTED, subtree_sum, operator_work, tree_levels_of
from .work_formulas import MATRIX

from ...model.units import NS_PER_US  # noqa: E402
# An operator group below this share of its roofline is "far from the roof" (the Overview's share).
LOW_ROOFLINE_SHARE = 0.5
UNKNOWN_OPERATOR = "(unknown operator)"
HOST = -1  # the device of work measured on the host (CPU-only spans)
COUNTED_FLOPS = ("FLOPs of the matrix operators (products, convolutions, attention) of the calls that started in the "
                 "step, each over the peak of its precision on its device's matrix units; elementwise, "
                 "normalization and reduction work is not counted")


def work_summary(model: TraceModel) -> dict[str, Any]:
    """The peak-free half (module docstring), JSON-able: stored with the model by the parser process
    (``views/answers.work_summary``); the functions below that need it are handed it."""
    s = model.slices
    kinds = SliceKinds(model)
    work = operator_work(model)
    counted = np.flatnonzero(work.status == COUNTED)
    rows = work.rows[counted]
    device_basis = bool(kinds.device_work.any())
    # Per counted call: its measured time, device and whether its FP32 products ran in TF32.
    time_ns = np.zeros(len(work.rows), dtype=np.int64)
    device_of = np.full(len(work.rows), HOST, dtype=np.int64)
    tf32 = np.zeros(len(work.rows), dtype=bool)
    if device_basis:
        dur = s.dur[work.work_rows]
        time_ns = np.bincount(work.owner, weights=dur, minlength=len(work.rows)).astype(np.int64)
        devices = _device_of_rows(model, work.work_rows)
        np.maximum.at(device_of, work.owner, devices)
        tf32_name = model.string_ids_where(lambda t: "tf32" in t.lower())
        np.logical_or.at(tf32, work.owner, tf32_name[s.name[work.work_rows]] & kinds.kernel[work.work_rows])
    else:
        time_ns[counted] = s.dur[rows]
    combos = work.combos
    combo = work.combo[counted].astype(np.int64)
    precision_names = sorted(set(combos.precision) | {"tf32"})
    precision_code = np.array([precision_names.index(p) for p in combos.precision], dtype=np.int64) \
        if len(combos) else np.zeros(0, dtype=np.int64)
    precision = precision_code[combo] if len(combo) else np.zeros(0, dtype=np.int64)
    as_tf32 = tf32[counted] & (np.array(combos.precision, dtype=object)[combo] == "fp32") if len(combo) else tf32[:0]
    precision = np.where(as_tf32, precision_names.index("tf32"), precision)
    dev = device_of[counted]
    # Groups of identical calls: (arguments, precision, device).
    key_a, key_b = combo * len(precision_names) + precision, dev + 1
    groups, inverse = unique_rows(np.stack([key_a, key_b], axis=1)) if len(combo) else (np.zeros((0, 2), np.int64),
                                                                                           np.zeros(0, np.int64))
    n = len(groups)
    calls = np.bincount(inverse, minlength=n)
    time = np.bincount(inverse, weights=time_ns[counted], minlength=n)
    # The first call of each group in time: the trace viewer opens it.
    order = np.argsort(s.start[rows], kind="stable")
    rank = np.empty(len(rows), dtype=np.int64)
    rank[order] = np.arange(len(rows))
    best = np.full(n, len(rows), dtype=np.int64)
    np.minimum.at(best, inverse, rank)
    first = order[best] if n else best
    text = model.strings
    category_of = operator_categories_by_name(model)
    group_combo = groups[:, 0] // len(precision_names)
    group_rows = rows[first] if n else rows[:0]
    summary: dict[str, Any] = {
        "time_basis": "device" if device_basis else "host",
        "groups": {
            "name": [text[int(combos.name[c])] for c in group_combo.tolist()],
            "input_shape": [_opt(text, combos.input_dims[c]) for c in group_combo.tolist()],
            "input_type": [_opt(text, combos.input_type[c]) for c in group_combo.tolist()],
            "concrete_inputs": [_opt(text, combos.concrete_inputs[c]) for c in group_combo.tolist()],
            "params": [dict(combos.params[c]) for c in group_combo.tolist()],
            "category": [CATEGORIES[int(category_of[combos.name[c]])] for c in group_combo.tolist()],
            "unit": [combos.unit[c] for c in group_combo.tolist()],
            "precision": [precision_names[int(k % len(precision_names))] for k in groups[:, 0].tolist()],
            "device": (groups[:, 1] - 1).tolist(),
            "calls": calls.tolist(),
            "flops": combos.flops[group_combo].tolist(),
            "bytes": combos.bytes[group_combo].tolist(),
            "time": (time / NS_PER_US).tolist(),
            "first_start": (s.start[group_rows] / NS_PER_US).tolist(),
            "first_dur": (s.dur[group_rows] / NS_PER_US).tolist(),
            "first_event_id": s.event_id[group_rows].tolist(),
        },
        "uncounted": _uncounted(model, work, time_ns if not device_basis else _call_device_time(model, work)),
        "kernels": _kernel_work(model, work, counted, inverse, groups, time_ns) if device_basis else [],
        "steps": _step_work(model, rows, inverse, n),
        "categories": _category_time(model, device_basis),
        "copies": copy_summary(model),
        "reasons_by_name": _reasons_by_name(work, model),
        "device_time": float(s.dur[kinds.device_work].sum()) / NS_PER_US if device_basis else
        float(s.dur[rows].sum()) / NS_PER_US,
    }
    return summary


def _opt(text: list[str], string_id: int) -> Optional[str]:
    return text[int(string_id)] if string_id >= 0 else None


def _device_of_rows(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """The device each device-work row ran on: its ``device`` argument, else its lane's device (0 if none)."""
    s = model.slices
    lane = np.array([t.device if t.device is not None else 0 for t in model.tracks], dtype=np.int64)
    arg = s.device[rows].astype(np.int64)
    return np.where(arg >= 0, arg, lane[s.track[rows]]) if len(rows) else arg


def _call_device_time(model: TraceModel, work: Any) -> np.ndarray:
    """Per call with a formula: the device time launched within it (its subtree), for calls that count none."""
    s = model.slices
    kinds = SliceKinds(model)
    own = np.zeros(len(s), dtype=np.int64)
    device_rows = np.flatnonzero(kinds.device_work & (model.links.op >= 0))
    np.add.at(own, model.links.op[device_rows], s.dur[device_rows])
    return subtree_sum(s.parent, tree_levels_of(model), own)[work.rows]


def _uncounted(model: TraceModel, work: Any, time_ns: np.ndarray) -> list[dict[str, Any]]:
    """Calls of operators with a formula that carry no number of their own, by reason (why, how many, their time).
    Calls whose work is counted elsewhere (nested in them, or around them) are left out: nothing is missing there."""
    out: dict[str, list[float]] = {}
    missing = np.flatnonzero(~np.isin(work.status, (COUNTED, NESTED, INSIDE_COUNTED)))
    for i in missing.tolist():
        entry = out.setdefault(work.reason(i), [0, 0.0])
        entry[0] += 1
        entry[1] += float(time_ns[i]) / NS_PER_US
    return sorted(({"reason": r, "calls": int(c), "time": t} for r, (c, t) in out.items()), key=lambda e: -e["time"])


def _kernel_work(model: TraceModel, work: Any, counted: np.ndarray, inverse: np.ndarray, groups: np.ndarray,
                 time_ns: np.ndarray) -> list[dict[str, Any]]:
    """Per (launching operator, kernel group name, operator group): the FLOPs and bytes of the counted calls shared
    among their kernels by device time (a call's FLOPs split over the kernels it launched in proportion to their
    duration), and the kernels' time."""
    s = model.slices
    kinds = SliceKinds(model)
    position = np.full(len(work.rows), -1, dtype=np.int64)
    position[counted] = np.arange(len(counted))
    call = position[work.owner]
    keep = (call >= 0) & kinds.kernel[work.work_rows]
    rows, call = work.work_rows[keep], call[keep]
    if not len(rows):
        return []
    group = inverse[call]
    share = s.dur[rows] / np.maximum(time_ns[counted][call], 1)
    op = model.links.op[rows]
    op_name = np.where(op >= 0, s.name[np.maximum(op, 0)], -1).astype(np.int64)
    distinct, name_code = factorize(s.name[rows])
    group_names = [kernel_group_name(model.strings[int(d)]) for d in distinct.tolist()]
    unique, key = unique_rows(np.stack([op_name * (len(distinct) + 1) + name_code, group], axis=1))
    flops_per_call = np.asarray(work.combos.flops, dtype=np.float64)[work.combo[counted][call]]
    bytes_per_call = np.asarray(work.combos.bytes, dtype=np.float64)[work.combo[counted][call]]
    m = len(unique)
    flops = np.bincount(key, weights=flops_per_call * share, minlength=m)
    moved = np.bincount(key, weights=bytes_per_call * share, minlength=m)
    time = np.bincount(key, weights=s.dur[rows], minlength=m)
    out = []
    for i, (op_and_name, g) in enumerate(unique.tolist()):
        op_id, code = divmod(op_and_name, len(distinct) + 1)
        out.append({"op": model.strings[op_id] if op_id >= 0 else UNKNOWN_OPERATOR, "name": group_names[code],
                    "group": int(g), "flops": float(flops[i]), "bytes": float(moved[i]),
                    "time": float(time[i]) / NS_PER_US})
    return out


def _step_work(model: TraceModel, rows: np.ndarray, inverse: np.ndarray, groups: int) -> list[dict[str, Any]]:
    """Per step (the overview's steps): its duration, and per operator group the calls that started in it."""
    steps = find_steps(model)
    s = model.slices
    out = []
    starts = s.start[rows]
    for i, name in enumerate(steps.names):
        inside = (starts >= steps.host_start[i]) & (starts < steps.host_end[i])
        count = np.bincount(inverse[inside], minlength=groups)
        present = np.flatnonzero(count)
        out.append({"name": name, "duration": float(steps.end[i] - steps.start[i]) / NS_PER_US,
                    "groups": present.tolist(), "calls": count[present].tolist()})
    return out


def _category_time(model: TraceModel, device_basis: bool) -> list[dict[str, Any]]:
    """Time per operator category: device work by ``device_work_categories`` on spans with device activity, else
    the host self time of the operators by their names."""
    s = model.slices
    if device_basis:
        category = device_work_categories(model)
        rows = np.flatnonzero(category >= 0)
        time = np.bincount(category[rows], weights=s.dur[rows], minlength=len(CATEGORIES))
    else:
        from ...model.tree import self_time

        kinds = SliceKinds(model)
        rows = np.flatnonzero(kinds.operator)
        category = operator_categories_by_name(model)[s.name[rows]]
        time = np.bincount(category, weights=self_time(s)[rows], minlength=len(CATEGORIES))
    return [{"category": c, "label": LABELS[c], "time": float(time[CODE[c]]) / NS_PER_US}
            for c in CATEGORIES if time[CODE[c]] > 0]


# ---- the figures that need a peak --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Roofs:
    """The peaks of a span's devices: ``resolved[device]``, with the reason where there are none."""

    resolved: Mapping[int, Resolved]
    peaks_error: str = ""  # the user's peaks file could not be used (the built-in table applies)

    @staticmethod
    def of(model: TraceModel, overrides: Sequence[DevicePeaks] = ()) -> "Roofs":
        # The listed devices and those with work: one device listed under another id than its lanes' is the same
        # device (devices.same_device_ids), with the listed properties.
        ids = set(device_properties(model)) | {t.device for t in model.tracks if t.kind == "gpu" and t.device is not None}
        resolved: dict[int, Resolved] = {d: resolve(device(model, d).properties, overrides) for d in sorted(ids)}
        resolved[HOST] = Resolved(None, "the table of peaks holds devices, not the host's CPUs")
        return Roofs(resolved)

    def get(self, device: int) -> Resolved:
        found = self.resolved.get(device)
        if found is not None:
            return found
        return Resolved(None, "the trace records no properties of this device (deviceProperties)")


@dataclass(frozen=True)
class PeaksSetting:
    """The user's peaks file as the server or a command read it: its entries, or why it could not be used."""

    overrides: tuple[DevicePeaks, ...] = ()
    error: str = ""

    @staticmethod
    def load(path: Optional[str]) -> "PeaksSetting":
        if not path:
            return PeaksSetting()
        try:
            return PeaksSetting(load_peaks_file(path))
        except PeaksFileError as error:
            return PeaksSetting(error=str(error))

    def roofs(self, model: TraceModel) -> Roofs:
        roofs = model.memo(("roofs", id(self.overrides)), lambda: Roofs.of(model, self.overrides))
        return roofs if not self.error else Roofs(roofs.resolved, self.error)


@dataclass(frozen=True)
class GroupFigures:
    """Per operator group (``work_summary``'s groups): the peak-dependent figures, NaN or None where unknown."""

    peak_flops: np.ndarray  # FLOP/s of the group's precision and unit on its device
    bandwidth: np.ndarray  # bytes/s of its device's memory
    roofline_time: np.ndarray  # µs for all the group's calls
    compute_time: np.ndarray  # µs: FLOPs / peak
    memory_time: np.ndarray  # µs: bytes / bandwidth
    reason: list[str]  # "" where the roofline is known


def group_figures(summary: Mapping[str, Any], roofs: Roofs) -> GroupFigures:
    groups = summary["groups"]
    n = len(groups["name"])
    peak = np.full(n, np.nan)
    bandwidth = np.full(n, np.nan)
    reason = [""] * n
    for i in range(n):
        resolved = roofs.get(int(groups["device"][i]))
        if resolved.peaks is None:
            reason[i] = resolved.reason
            continue
        flops_per_second = resolved.peaks.flops_per_second(groups["precision"][i], groups["unit"][i])
        if flops_per_second is None:
            reason[i] = (f"{resolved.peaks.name} has no {groups['precision'][i].upper()} "
                         f"{'matrix' if groups['unit'][i] == MATRIX else 'vector'} peak in the table")
        else:
            peak[i] = flops_per_second
        if resolved.peaks.memory_bytes_per_second is None:
            reason[i] = reason[i] or f"{resolved.peaks.name} has no memory bandwidth in the table"
        else:
            bandwidth[i] = resolved.peaks.memory_bytes_per_second
    calls = np.asarray(groups["calls"], dtype=np.float64)
    flops = np.asarray(groups["flops"], dtype=np.float64) * calls
    moved = np.asarray(groups["bytes"], dtype=np.float64) * calls
    with np.errstate(invalid="ignore", divide="ignore"):
        compute = flops / peak * 1e6
        memory = moved / bandwidth * 1e6
    roofline = np.where(np.isfinite(compute) & np.isfinite(memory), np.maximum(compute, memory), np.nan)
    return GroupFigures(peak, bandwidth, roofline, compute, memory, reason)


def figures(flops: float, moved: float, time_us: float, roofline_us: float, compute_us: float,
            memory_us: float) -> dict[str, Any]:
    """The columns of one row (of operators, kernels, points) from its sums; None where unknown."""
    seconds = time_us / 1e6

    def finite(value: float) -> Optional[float]:
        return float(value) if math.isfinite(value) else None

    known = math.isfinite(roofline_us) and time_us > 0
    return {
        "gflops": flops / 1e9,
        "bytes": moved,
        "tflops_per_s": flops / seconds / 1e12 if seconds > 0 else None,
        "tb_per_s": moved / seconds / 1e12 if seconds > 0 else None,
        "intensity": flops / moved if moved > 0 else None,
        "bound": ("compute" if compute_us >= memory_us else "memory") if math.isfinite(roofline_us) else None,
        "roofline_share": roofline_us / time_us if known else None,
        "roofline_time": finite(roofline_us),
    }


def aggregate(summary: Mapping[str, Any], fig: GroupFigures, keys: Sequence[Any]) -> dict[Any, dict[str, Any]]:
    """Rows of the groups that share a key (``keys[i]`` for group i): their summed figures and, where some group
    of the row has no roofline, why (the row's roofline then covers the groups that have one)."""
    groups = summary["groups"]
    sums: dict[Any, list[Any]] = {}
    for i, key in enumerate(keys):
        calls = groups["calls"][i]
        entry = sums.setdefault(key, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, ""])
        entry[0] += groups["flops"][i] * calls
        entry[1] += groups["bytes"][i] * calls
        entry[2] += groups["time"][i]
        entry[7] += calls
        if math.isfinite(fig.roofline_time[i]):
            entry[3] += fig.roofline_time[i]
            entry[4] += fig.compute_time[i]
            entry[5] += fig.memory_time[i]
            entry[6] += groups["time"][i]
        elif not entry[8]:
            entry[8] = fig.reason[i]
    out = {}
    for key, (flops, moved, time, roofline, compute, memory, roof_time, calls, why) in sums.items():
        row = figures(flops, moved, time, roofline if roof_time > 0 else math.nan, compute, memory)
        row["roofline_share"] = roofline / roof_time if roof_time > 0 else None
        row["perf_calls"] = calls
        row["perf_time"] = time
        row["roofline_reason"] = why if row["roofline_share"] is None else ""
        out[key] = row
    return out


def operator_figures(summary: Mapping[str, Any], roofs: Roofs, group_by: str) -> dict[Any, dict[str, Any]]:
    """The Operator table's columns by operator name (``group_by`` "name") or by (name, Input Dims)."""
    groups = summary["groups"]
    fig = group_figures(summary, roofs)
    if group_by == "input_shape":
        keys: list[Any] = list(zip(groups["name"], (shape or "" for shape in groups["input_shape"])))
    else:
        keys = list(groups["name"])
    return aggregate(summary, fig, keys)


def with_operator_figures(answer: Mapping[str, Any], model: TraceModel, summary: Mapping[str, Any],
                          roofs: Roofs) -> dict[str, Any]:
    """A copy of an operators answer with the efficiency columns on each row (None where the row has no counted
    calls, with ``perf_reason`` saying why: no formula, counted in a nested operator, no shapes...)."""
    group_by = answer.get("group_by")
    result = dict(answer)
    result["time_basis"] = summary["time_basis"]
    if group_by not in ("name", "input_shape"):
        result["efficiency"] = False
        return result
    table = operator_figures(summary, roofs, group_by)
    why = summary.get("reasons_by_name") or {}
    rows = []
    for row in answer.get("rows", []):
        key = row["name"] if group_by == "name" else (row["name"], row.get("input_shape") or "")
        found = table.get(key)
        out = dict(row)
        if found is None:
            out.update({k: None for k in _EMPTY})
            out["perf_calls"] = 0
            out["perf_reason"] = why.get(row["name"], "no formula for this operator")
        else:
            out.update(found)
            out["perf_reason"] = ""
        rows.append(out)
    result["rows"] = rows
    result["efficiency"] = True
    return result


_EMPTY = ("gflops", "bytes", "tflops_per_s", "tb_per_s", "intensity", "bound", "roofline_share", "roofline_time",
          "perf_time", "roofline_reason")


def _reasons_by_name(work: Any, model: TraceModel) -> dict[str, str]:
    """Per operator name with a formula: the most frequent reason its calls have no number of their own ("" when
    most have one); names without a formula are absent (the table says so itself)."""
    s = model.slices
    if not len(work.rows):
        return {}
    name_ids, name_code = factorize(s.name[work.rows])
    out: dict[str, str] = {}
    for code, name_id in enumerate(name_ids.tolist()):
        picked = np.flatnonzero(name_code == code)
        statuses, counts = np.unique(work.status[picked], return_counts=True)
        status = int(statuses[np.argmax(counts)])
        first = int(picked[work.status[picked] == status][0])
        out[model.strings[int(name_id)]] = work.reason(first)
    return out


def with_kernel_figures(answer: Mapping[str, Any], model: TraceModel, summary: Mapping[str, Any],
                        roofs: Roofs) -> dict[str, Any]:
    """A copy of a kernels answer with the efficiency columns: each kernel carries the FLOPs and bytes of the calls
    that launched it, shared by device time (``_kernel_work``)."""
    result = dict(answer)
    kernel_work = summary["kernels"]
    if not kernel_work:
        result["efficiency"] = False
        return result
    fig = group_figures(summary, roofs)
    by_op = answer.get("group_by") == "op_and_name"
    sums: dict[Any, list[float]] = {}
    for entry in kernel_work:
        key = (entry["op"], entry["name"]) if by_op else entry["name"]
        g = entry["group"]
        acc = sums.setdefault(key, [0.0] * 7)
        group_time = summary["groups"]["time"][g]
        share = entry["time"] / group_time if group_time > 0 else 0.0
        acc[0] += entry["flops"]
        acc[1] += entry["bytes"]
        acc[2] += entry["time"]
        if math.isfinite(fig.roofline_time[g]):
            acc[3] += fig.roofline_time[g] * share
            acc[4] += fig.compute_time[g] * share
            acc[5] += fig.memory_time[g] * share
            acc[6] += entry["time"]
    rows = []
    for row in answer.get("rows", []):
        key = (row.get("op"), row["name"]) if by_op else row["name"]
        acc = sums.get(key)
        out = dict(row)
        if acc is None:
            out.update({k: None for k in _EMPTY})
        else:
            out.update(figures(acc[0], acc[1], acc[2], acc[3] if acc[6] > 0 else math.nan, acc[4], acc[5]))
            out["roofline_share"] = acc[3] / acc[6] if acc[6] > 0 else None
            out["perf_time"] = acc[2]
        rows.append(out)
    result["rows"] = rows
    result["efficiency"] = True
    return result


def mean_mfu(overview: Mapping[str, Any]) -> Optional[float]:
    """A span's MFU as one number: the mean over its steps that its overview answer states (``efficiency.mfu.mean``,
    from ``efficiency_overview``); None when unknown. Compare and the run table read it from there."""
    figures = overview.get("efficiency")
    return figures["mfu"]["mean"] if isinstance(figures, Mapping) else None


def efficiency_overview(model: TraceModel, summary: Mapping[str, Any], roofs: Roofs) -> dict[str, Any]:
    """The Overview's figures: MFU per step (and their mean), the share of device time in operators under half
    their roofline, device time per operator category, and what the figures could not cover."""
    groups = summary["groups"]
    fig = group_figures(summary, roofs)
    n = len(groups["name"])
    matrix = np.array([u == MATRIX for u in groups["unit"]], dtype=bool) if n else np.zeros(0, dtype=bool)
    flops = np.asarray(groups["flops"], dtype=np.float64)
    ideal_us = np.where(matrix & np.isfinite(fig.peak_flops), flops / fig.peak_flops * 1e6, 0.0)
    devices = sorted({int(d) for d in groups["device"] if d != HOST})
    unknown = sorted({fig.reason[i] for i in range(n) if matrix[i] and not math.isfinite(fig.peak_flops[i])})
    steps = []
    for step in summary["steps"]:
        picked = np.asarray(step["groups"], dtype=np.int64)
        counts = np.asarray(step["calls"], dtype=np.float64)
        used = {int(groups["device"][g]) for g in picked.tolist() if matrix[g]} - {HOST}
        ideal = float((ideal_us[picked] * counts).sum()) if len(picked) else 0.0
        denominator = step["duration"] * max(len(used), 1)
        mfu = ideal / denominator if denominator > 0 and used and not unknown else None
        steps.append({"name": step["name"], "mfu": mfu,
                      "matrix_gflops": float((flops[picked] * counts * matrix[picked]).sum()) / 1e9 if len(picked)
                      else 0.0})
    known = [s["mfu"] for s in steps if s["mfu"] is not None]
    time = np.asarray(groups["time"], dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = fig.roofline_time / time
    low = np.isfinite(share) & (share < LOW_ROOFLINE_SHARE)
    device_time = summary["device_time"]
    covered = float(time[np.isfinite(share)].sum())
    return {
        "time_basis": summary["time_basis"],
        "mfu": {
            "mean": float(np.mean(known)) if known and len(known) == len(steps) else None,
            "steps": steps,
            "counted": COUNTED_FLOPS,
            "devices": devices,
            "reason": "" if known else (unknown[0] if unknown else _no_mfu_reason(summary, devices)),
        },
        "low_roofline": {
            "threshold": LOW_ROOFLINE_SHARE,
            "time": float(time[low].sum()),
            "share": float(time[low].sum()) / device_time if device_time > 0 and covered > 0 else None,
            "covered_share": covered / device_time if device_time > 0 else None,
        },
        "categories": [dict(c, share=c["time"] / device_time if device_time > 0 else None)
                       for c in summary["categories"]],
        "uncounted": summary["uncounted"],
    }


def _no_mfu_reason(summary: Mapping[str, Any], devices: Sequence[int]) -> str:
    if summary["time_basis"] == "host":
        return "a CPU-only span: the table of peaks holds devices, not the host's CPUs"
    if not summary["groups"]["name"]:
        return "no matrix operator of the span has a number (record_shapes=True gives them their shapes)"
    return "no matrix operator ran on a device in the steps"


def peaks_description(roofs: Roofs, devices: Iterable[int]) -> list[dict[str, Any]]:
    """Per device: its peaks (with their source) or why there are none."""
    out = []
    for device_id in devices:
        resolved = roofs.get(device_id)
        entry: dict[str, Any] = {"device": device_id}
        if resolved.peaks is None:
            entry.update({"peaks": None, "reason": resolved.reason})
        else:
            entry.update({"peaks": resolved.peaks.describe(), "reason": ""})
        out.append(entry)
    return out
