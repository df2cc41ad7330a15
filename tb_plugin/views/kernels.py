"""Kernel view: device kernels by name (or by launching operator and name).

Mean blocks per SM and mean estimated achieved occupancy are duration-weighted means
over the kernels that report them.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..model.categories import SliceKinds, kernel_group_name
from ..model.factorize import factorize, unique_rows
from ..model.float32 import slice_column_as_written
from ..model.steps import find_steps
from ..model.trace_model import TraceModel
from ..model.units import NS_PER_US
from .quantities import accounting
from .quantities.devices import device, devices_noun, devices_of_rows

GROUP_BY = ("name", "op_and_name")


def _weighted_mean(values: np.ndarray, weights: np.ndarray, inverse: np.ndarray, groups: int) -> np.ndarray:
    ok = np.isfinite(values) & (weights > 0)
    num = np.bincount(inverse[ok], weights=values[ok] * weights[ok], minlength=groups)
    den = np.bincount(inverse[ok], weights=weights[ok], minlength=groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def kernel_rows_by_name(model: TraceModel, rows: np.ndarray, op_keys: np.ndarray | None = None) -> list[dict[str, Any]]:
    """Aggregate the given device-activity rows by name (and by ``op_keys`` when given)."""
    s = model.slices
    if len(rows) == 0:
        return []
    # Rows by kernel group (categories.kernel_group_name: operator instances of Ascend's graph mode merge).
    distinct, name_of_row = factorize(s.name[rows])
    group_names, group_of_distinct = np.unique(
        np.array([kernel_group_name(model.strings[n]) for n in distinct.tolist()], dtype=object), return_inverse=True)
    name = group_of_distinct.reshape(-1)[name_of_row].astype(np.int64)
    keys = name[:, None] if op_keys is None else np.stack([op_keys.astype(np.int64), name], axis=1)
    unique, inverse = unique_rows(keys)
    groups = len(unique)
    counts = np.bincount(inverse, minlength=groups)
    dur = s.dur[rows].astype(np.float64)
    total = np.bincount(inverse, weights=dur, minlength=groups)
    lo = np.full(groups, np.inf)
    hi = np.full(groups, -np.inf)
    np.minimum.at(lo, inverse, dur)
    np.maximum.at(hi, inverse, dur)
    # Means of the values as the trace wrote them (float32 noise would show: 2.799999952316284).
    blocks = _weighted_mean(slice_column_as_written(model, "blocks_per_sm")[rows], dur, inverse, groups)
    occupancy = _weighted_mean(slice_column_as_written(model, "occupancy")[rows], dur, inverse, groups)
    tc = SliceKinds(model).tensor_core_kernel[rows]
    tc_any = np.bincount(inverse, weights=tc.astype(np.float64), minlength=groups) > 0
    out = []
    for i, key in enumerate(unique.tolist()):
        row: dict[str, Any] = {
            "name": str(group_names[key[-1]]),
            "calls": int(counts[i]),
            "total": total[i] / NS_PER_US,
            "mean": total[i] / counts[i] / NS_PER_US,
            "min": lo[i] / NS_PER_US,
            "max": hi[i] / NS_PER_US,
            "blocks_per_sm": None if np.isnan(blocks[i]) else float(blocks[i]),
            "achieved_occupancy": None if np.isnan(occupancy[i]) else float(occupancy[i]) / 100.0,
            "tensor_cores": bool(tc_any[i]),
        }
        if op_keys is not None:
            row["op"] = model.strings[key[0]] if key[0] >= 0 else "(unknown operator)"
        out.append(row)
    out.sort(key=lambda r: -r["total"])
    return out


def kernels(model: TraceModel, group_by: str = "name") -> dict[str, Any]:
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {GROUP_BY}")
    kinds = SliceKinds(model)
    s = model.slices
    rows = np.flatnonzero(kinds.kernel)
    op_keys = None
    if group_by == "op_and_name":
        op = model.links.op[rows]
        op_keys = np.where(op >= 0, s.name[np.maximum(op, 0)], -1).astype(np.int64)
    table = kernel_rows_by_name(model, rows, op_keys)
    total = float(s.dur[rows].sum())
    tc_total = float(s.dur[rows][kinds.tensor_core_kernel[rows]].sum())
    device_ids = devices_of_rows(model, rows)
    # Tensor Core use is told by NVIDIA's kernel names: unknown as soon as one device is not such a GPU.
    tensor_cores_known = all(device(model, d).tensor_cores_known for d in device_ids)
    return {
        "group_by": group_by,
        "rows": table,
        "total": total / NS_PER_US,
        "device_kind": devices_noun(model, device_ids),
        "tensor_cores_known": tensor_cores_known,
        "tensor_core_share": (tc_total / total if total > 0 else 0.0) if tensor_cores_known else None,
        "tensor_core_time": tc_total / NS_PER_US if tensor_cores_known else None,
        "in_steps": _in_steps(model, rows, tensor_cores_known),
    }


def _in_steps(model: TraceModel, rows: np.ndarray, tensor_cores_known: bool) -> Optional[dict[str, Any]]:
    """Kernel time and Tensor Core share within the steps: the overview's device figures (one definition,
    accounting.kernels_in_steps), beside this view's whole-span figures."""
    inside = accounting.kernels_in_steps(model, find_steps(model), rows)
    if inside is None:
        return None
    total = inside.time
    return {
        "total": total / NS_PER_US,
        "tensor_core_share": (inside.tensor_core_time(model) / total if total > 0 else 0.0)
        if tensor_cores_known else None,
    }
