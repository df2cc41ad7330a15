"""Frequent kernel sequences: the same operator launching the same kernels in the same order, again and again
(fusion candidates; HTA's ``get_frequent_cuda_kernel_sequences``).

The roots are the outermost operators whose name contains ``operator`` (every operator when it is empty) that start
inside the steps' host ranges. A root's sequence is its name followed by the device work (kernels, copies,
memsets) launched by it or by any operator nested in it, in the order the work started. Equal sequences of at
least ``min_length`` kernels are grouped: occurrences, device time (the work's durations) and CPU time (the roots'
durations), the most device time first (HTA ranks by occurrences; both are given). Sequences are compared by two
64-bit polynomial hashes of their kernel names with the root's name and length, computed on whole arrays.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ...model import tree
from ...model.categories import SliceKinds
from ...model.steps import find_steps
from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US

MIN_LENGTH = 3
LIMIT = 50
_BASES = (np.uint64(1_000_003), np.uint64(998_244_353))


def _powers(base: np.uint64, n: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.cumprod(np.r_[np.uint64(1), np.full(max(n - 1, 0), base, dtype=np.uint64)], dtype=np.uint64)


def kernel_sequences(model: TraceModel, operator: str = "", min_length: int = MIN_LENGTH,
                     marker: Optional[str] = None) -> dict[str, Any]:
    s = model.slices
    kinds = SliceKinds(model)
    steps = find_steps(model, marker)
    base: dict[str, Any] = {"steps": len(steps), "operator": operator, "min_length": min_length, "sequences": []}
    if not kinds.device_work.any():
        return {**base, "available": False, "reason": "This span has no device activity (kernels, copies): "
                "there are no kernel sequences to find."}
    candidate = kinds.operator & (model.string_ids_where(lambda name: operator in name)[s.name] if operator else True)
    roots = candidate & ~tree.has_ancestor(s, candidate)
    k = np.searchsorted(steps.host_start, s.start, side="right") - 1
    roots &= (k >= 0) & (s.start < steps.host_end[np.maximum(k, 0)])
    root_of = np.where(roots, np.arange(len(s)), tree.nearest_ancestor_where(s, roots))

    work = np.flatnonzero(kinds.device_work & (model.links.op >= 0))
    root = root_of[model.links.op[work]]
    work, root = work[root >= 0], root[root >= 0]
    order = np.lexsort((s.start[work], root))
    work, root = work[order], root[order]
    if len(work) == 0:
        return {**base, "available": False, "reason": "No operator in the steps launched device work"
                + (f" (operators named like “{operator}”)." if operator else ".")}
    first = np.flatnonzero(np.r_[True, root[1:] != root[:-1]])
    length = np.diff(np.r_[first, len(work)])
    position = np.arange(len(work)) - np.repeat(first, length)
    names = s.name[work].astype(np.uint64) + np.uint64(1)
    with np.errstate(over="ignore"):
        hashes = [np.add.reduceat(names * _powers(b, int(length.max()))[position], first) for b in _BASES]
    group_root = root[first]
    keep = length >= min_length
    if not keep.any():
        return {**base, "available": False,
                "reason": f"No operator in the steps launched {min_length} or more kernels."}
    key = np.stack([s.name[group_root].astype(np.uint64), length.astype(np.uint64), *hashes], axis=1)[keep]
    unique, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    device_time = np.add.reduceat(s.dur[work], first)[keep]
    cpu_time = s.dur[group_root[keep]]
    device_total = np.bincount(inverse, weights=device_time.astype(np.float64), minlength=len(unique))
    cpu_total = np.bincount(inverse, weights=cpu_time.astype(np.float64), minlength=len(unique))
    occurrence = np.full(len(unique), -1, dtype=np.int64)
    occurrence[inverse[::-1]] = np.flatnonzero(keep)[::-1]  # the first occurrence of each sequence
    repeated = np.flatnonzero(counts >= 2)
    ranked = repeated[np.argsort(-device_total[repeated], kind="stable")][:LIMIT]
    total_device = float(s.dur[work].sum())
    sequences = []
    for g in ranked.tolist():
        o = int(occurrence[g])
        kernels = work[first[o]:first[o] + length[o]]
        r = int(group_root[o])
        sequences.append({
            "operator": model.strings[int(s.name[r])],
            "kernels": [model.strings[int(n)] for n in s.name[kernels]],
            "length": int(length[o]), "count": int(counts[g]),
            "device_total": device_total[g] / NS_PER_US, "device_mean": device_total[g] / counts[g] / NS_PER_US,
            "cpu_total": cpu_total[g] / NS_PER_US,
            "device_share": device_total[g] / total_device if total_device > 0 else 0.0,
            "example_id": int(s.event_id[r]), "example_start": int(s.start[r]) / NS_PER_US,
            "example_end": int(s.end_at(r)) / NS_PER_US,
        })
    return {**base, "available": True, "reason": None, "sequences": sequences, "roots": int(keep.sum()),
            "distinct": int(len(unique)), "repeated": int(len(repeated))}
