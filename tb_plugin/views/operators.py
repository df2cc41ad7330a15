"""Operator view: time per framework operator, on the host and on the device.

Host self time is an operator's duration minus its direct children's (children include
nested operators and Python frames, as torch's ``key_averages`` counts them). Device
self time is the kernels, copies and memsets an operator launched itself (linked by
External id); device total adds those of every operator nested inside it. When an
operator is nested in an operator of the same name (dispatch re-entering itself), the
inner one's total is already inside the outer one's, so a name's total counts only
occurrences without a same-name ancestor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..model import tree
from ..model.factorize import unique_rows
from ..model.categories import TENSOR_CORE_ELIGIBLE_OPS, SliceKinds
from ..model.trace_model import TraceModel
from ..model.units import NS_PER_US

GROUP_BY = ("name", "input_shape", "stack")
OCCURRENCE_LIMIT = 100


@dataclass(frozen=True)
class OperatorColumns:
    """Per slice row (only operator rows are meaningful): the numbers the table aggregates."""

    rows: np.ndarray  # operator rows
    host_self: np.ndarray  # ns, all slices
    host_total_counted: np.ndarray  # ns, 0 for an op nested in a same-name op
    device_self: np.ndarray  # ns
    device_total_counted: np.ndarray  # ns, 0 for an op nested in a same-name op
    tc_self: np.ndarray  # ns of Tensor Core kernels launched by the op itself
    tc_total_counted: np.ndarray
    stack: np.ndarray  # frame chain id above each row
    chain_parent: np.ndarray
    chain_name: np.ndarray


def operator_columns(model: TraceModel) -> OperatorColumns:
    return model.memo("operator_columns", lambda: _operator_columns(model))


def _operator_columns(model: TraceModel) -> OperatorColumns:
    s = model.slices
    kinds = SliceKinds(model)
    n = len(s)
    host_self = tree.self_time(s)
    device_rows = np.flatnonzero(kinds.device_work & (model.links.op >= 0))
    owner = model.links.op[device_rows]
    device_self = np.zeros(n, dtype=np.int64)
    np.add.at(device_self, owner, s.dur[device_rows])
    tc_self = np.zeros(n, dtype=np.int64)
    tc = kinds.tensor_core_kernel[device_rows]
    np.add.at(tc_self, owner[tc], s.dur[device_rows][tc])
    device_total = tree.subtree_sum(s, device_self)
    tc_total = tree.subtree_sum(s, tc_self)
    # An op inside a same-name op: its totals are already in the outer one's.
    nested_same = _nested_in_same_name(model, kinds.operator)
    counted = ~nested_same
    stack, chain_parent, chain_name = _stacks(model, kinds)
    return OperatorColumns(
        rows=np.flatnonzero(kinds.operator), host_self=host_self,
        host_total_counted=np.where(counted, s.dur, 0), device_self=device_self,
        device_total_counted=np.where(counted, device_total, 0), tc_self=tc_self,
        tc_total_counted=np.where(counted, tc_total, 0), stack=stack, chain_parent=chain_parent,
        chain_name=chain_name,
    )


def _nested_in_same_name(model: TraceModel, operator: np.ndarray) -> np.ndarray:
    """Per row: the operator lies inside another operator of the same name on its thread.

    Operators of one (thread, name) sorted by start: one is nested when an earlier one is
    still running at its start (with proper nesting, overlap means containment).
    """
    s = model.slices
    nested = np.zeros(len(s), dtype=bool)
    rows = np.flatnonzero(operator)
    if len(rows) < 2:
        return nested
    t0 = int(s.start[rows].min())
    span = int(s.end_at(rows).max()) - t0 + 1
    # Rows are in slice order, (track, start, longest first): a stable sort by (track, name) gives the order by
    # (track, name, start, latest end first) without sorting the times again (a lexsort of four keys: 3x slower).
    _pairs, pair = unique_rows(np.stack([s.track[rows], s.name[rows]], axis=1))
    rows = rows[np.argsort(pair.astype(np.uint16) if len(_pairs) <= (1 << 16) else pair, kind="stable")]
    group_key = s.track[rows].astype(np.int64) * (np.int64(s.name.max()) + 1) + s.name[rows]
    group = np.cumsum(np.r_[True, group_key[1:] != group_key[:-1]]) - 1
    # Running maximum of end times within each group (groups offset so they never mix).
    ends = group * span + (s.end_at(rows) - t0)
    running = np.maximum.accumulate(ends)
    previous = np.r_[-1, running[:-1]]
    same_group = np.r_[False, group[1:] == group[:-1]]
    starts = group * span + (s.start[rows] - t0)
    nested[rows] = same_group & (previous > starts)
    return nested


def _stacks(model: TraceModel, kinds: SliceKinds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frame chains from Python frames (with_stack) or, in older traces, the ``Call stack`` argument."""
    s = model.slices
    chain, chain_parent, chain_name = tree.frame_chains(s, kinds.python)
    if not kinds.python.any() and (s.call_stack >= 0).any():
        # "Call stack" is one string per op (frames joined by ";", innermost first): use it whole.
        return np.where(s.call_stack >= 0, s.call_stack.astype(np.int64) + 1, 0), \
            np.zeros(len(model.strings) + 1, dtype=np.int64), \
            np.r_[-1, np.arange(len(model.strings))].astype(np.int64)
    return chain, chain_parent, chain_name


def stack_text(model: TraceModel, cols: OperatorColumns, chain: int) -> str:
    frames = tree.chain_frames(chain, cols.chain_parent, cols.chain_name)
    text = [model.strings[f] for f in frames]
    if len(text) == 1 and ";" in text[0]:
        text = text[0].split(";")
    return "\n".join(text)


def _group(keys: np.ndarray, *values: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """(unique keys, counts, per-key sums of each value array); keys are rows of 1 or 2 integer columns,
    the unique keys in ascending order as ``np.unique(keys, axis=0)`` gives them.

    Grouped by ``model/factorize.unique_rows``: ``np.unique`` over rows sorts a structured copy, ~0.4 s per
    million rows.
    """
    unique, inverse = unique_rows(keys)
    counts = np.bincount(inverse, minlength=len(unique))
    sums = [np.bincount(inverse, weights=v.astype(np.float64), minlength=len(unique)) for v in values]
    return unique, counts, sums


def operators(model: TraceModel, group_by: str = "name") -> dict[str, Any]:
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {GROUP_BY}")
    cols = operator_columns(model)
    s = model.slices
    rows = cols.rows
    name = s.name[rows].astype(np.int64)
    if group_by == "name":
        keys = name[:, None]
    elif group_by == "input_shape":
        keys = np.stack([name, s.input_dims[rows].astype(np.int64)], axis=1)
    else:
        keys = np.stack([name, cols.stack[rows]], axis=1)
    if len(rows) == 0:
        return {"group_by": group_by, "rows": [], "totals": {}}
    unique, counts, (host_self, host_total, dev_self, dev_total, tc_self, tc_total) = _group(
        keys, cols.host_self[rows], cols.host_total_counted[rows], cols.device_self[rows],
        cols.device_total_counted[rows], cols.tc_self[rows], cols.tc_total_counted[rows])
    eligible = model.string_ids_where(lambda t: t in TENSOR_CORE_ELIGIBLE_OPS)
    out_rows = []
    for i, key in enumerate(unique.tolist()):
        row: dict[str, Any] = {
            "name": model.strings[key[0]],
            "calls": int(counts[i]),
            "host_self": host_self[i] / NS_PER_US,
            "host_total": host_total[i] / NS_PER_US,
            "device_self": dev_self[i] / NS_PER_US,
            "device_total": dev_total[i] / NS_PER_US,
            "tc_eligible": bool(eligible[key[0]]),
            "tc_self_share": tc_self[i] / dev_self[i] if dev_self[i] > 0 else 0.0,
            "tc_total_share": tc_total[i] / dev_total[i] if dev_total[i] > 0 else 0.0,
        }
        if group_by == "input_shape":
            row["input_shape"] = model.strings[key[1]] if key[1] >= 0 else ""
        elif group_by == "stack":
            row["stack"] = stack_text(model, cols, key[1])
        out_rows.append(row)
    has_device = bool(dev_self.sum() > 0)
    out_rows.sort(key=lambda r: (-r["device_self"], -r["host_self"]) if has_device else (-r["host_self"],))
    return {
        "group_by": group_by,
        "has_device": has_device,
        "rows": out_rows,
        "totals": {
            "calls": int(counts.sum()),
            "host_self": float(host_self.sum()) / NS_PER_US,
            "device_self": float(dev_self.sum()) / NS_PER_US,
        },
    }


def operator_detail(model: TraceModel, name: str, input_shape: Optional[str] = None) -> dict[str, Any]:
    """Call stacks, launched kernels and occurrences of one operator (optionally one input shape)."""
    cols = operator_columns(model)
    s = model.slices
    name_id = model.string_id(name)
    rows = cols.rows[s.name[cols.rows] == name_id] if name_id >= 0 else cols.rows[:0]
    if input_shape is not None:
        shape_id = model.string_id(input_shape) if input_shape else -1
        rows = rows[s.input_dims[rows] == shape_id]
    stacks = []
    if len(rows):
        unique, counts, (hs, ht, ds, dt) = _group(
            cols.stack[rows][:, None], cols.host_self[rows], cols.host_total_counted[rows],
            cols.device_self[rows], cols.device_total_counted[rows])
        for i, key in enumerate(unique.tolist()):
            stacks.append({"stack": stack_text(model, cols, key[0]), "calls": int(counts[i]),
                           "host_self": hs[i] / NS_PER_US, "host_total": ht[i] / NS_PER_US,
                           "device_self": ds[i] / NS_PER_US, "device_total": dt[i] / NS_PER_US})
        stacks.sort(key=lambda r: -r["host_total"])
    # Kernels launched by these ops or anything nested in them.
    flag = np.zeros(len(s), dtype=bool)
    flag[rows] = True
    within = flag | tree.has_ancestor(s, flag)
    kinds = SliceKinds(model)
    dev = np.flatnonzero(kinds.device_work & (model.links.op >= 0))
    dev = dev[within[model.links.op[dev]]]
    from .kernels import kernel_rows_by_name

    occurrences = rows[np.argsort(s.start[rows], kind="stable")][:OCCURRENCE_LIMIT]
    return {
        "name": name,
        "calls": int(len(rows)),
        "stacks": stacks,
        "kernels": kernel_rows_by_name(model, dev),
        "occurrences": [
            {"start": int(s.start[r]) / NS_PER_US, "dur": int(s.dur[r]) / NS_PER_US, "track": int(s.track[r]),
             "event_id": int(s.event_id[r])}
            for r in occurrences.tolist()
        ],
    }
