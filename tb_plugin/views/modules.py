"""Module view: the ``nn.Module`` hierarchy (``with_modules=True``), with time per module.

Module events are ``nn.Module: <Class>_<n>`` Python frames; modules nested in a module
are its children, and equal paths of module names are one node. Forward time is the host
duration of a module's events and the device time of what ran inside them. Backward
time is that of the autograd operators whose forward operator ran inside the module (or
inside one of its submodules: like forward time, backward time is inclusive), paired by the
profiler's forward→backward flows (``fwdbwd``) or, failing that, by sequence number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model import tree
from ..model.categories import SliceKinds
from ..model.trace_model import TraceModel
from ..model.units import NS_PER_US
from .quantities import recording

MODULE_PREFIX = "nn.Module: "


def modules(model: TraceModel) -> dict[str, Any]:
    return model.memo("modules", lambda: _modules(model))


def _device_total(model: TraceModel, kinds: SliceKinds) -> np.ndarray:
    s = model.slices
    rows = np.flatnonzero(kinds.device_work & (model.links.op >= 0))
    launched = np.zeros(len(s), dtype=np.int64)
    np.add.at(launched, model.links.op[rows], s.dur[rows])
    return tree.subtree_sum(s, launched)


def _modules(model: TraceModel) -> dict[str, Any]:
    s = model.slices
    kinds = SliceKinds(model)
    is_module = model.string_ids_where(lambda t: t.startswith(MODULE_PREFIX))[s.name] if len(s) else s.name < 0
    if not is_module.any():
        return {"available": False, "nodes": None,
                "hint": recording.record_modules(model)}
    chain, chain_parent, chain_name = tree.frame_chains(s, is_module)
    device_total = _device_total(model, kinds)
    module_rows = np.flatnonzero(is_module)
    n_chains = len(chain_parent)
    fwd_host = np.bincount(chain[module_rows], weights=s.dur[module_rows].astype(np.float64), minlength=n_chains)
    fwd_device = np.bincount(chain[module_rows], weights=device_total[module_rows].astype(np.float64),
                             minlength=n_chains)
    calls = np.bincount(chain[module_rows], minlength=n_chains)
    bwd_host, bwd_device = _backward_by_module(model, kinds, chain, n_chains, device_total)
    # Forward times are inclusive (a module's events enclose its children's); backward ones are
    # attributed to the innermost module, so they are summed up the tree to match.
    bwd_host, bwd_device = _roll_up(bwd_host, chain_parent), _roll_up(bwd_device, chain_parent)

    used = np.zeros(n_chains, dtype=bool)
    used[chain[module_rows]] = True
    used[0] = True
    ids = np.flatnonzero(used)
    remap = np.full(n_chains, -1, dtype=np.int64)
    remap[ids] = np.arange(len(ids))
    parent = [int(remap[chain_parent[i]]) if i else -1 for i in ids.tolist()]
    names = ["(model)" if i == 0 else model.strings[int(chain_name[i])][len(MODULE_PREFIX):] for i in ids.tolist()]
    return {
        "available": True,
        "nodes": {
            "name": names,
            "parent": parent,
            "calls": calls[ids].tolist(),
            "forward_host": (fwd_host[ids] / NS_PER_US).tolist(),
            "forward_device": (fwd_device[ids] / NS_PER_US).tolist(),
            "backward_host": (bwd_host[ids] / NS_PER_US).tolist(),
            "backward_device": (bwd_device[ids] / NS_PER_US).tolist(),
        },
    }


def _roll_up(values: np.ndarray, chain_parent: np.ndarray) -> np.ndarray:
    """Each module's value plus its descendants' (up to the top modules; the ``(model)`` root keeps
    only what no module claims). Parents have smaller ids than their children."""
    total = values.astype(np.float64).copy()
    for chain in range(len(total) - 1, 0, -1):  # one step per distinct module path, not per event
        parent = int(chain_parent[chain])
        if parent > 0:
            total[parent] += total[chain]
    return total


def _backward_by_module(model: TraceModel, kinds: SliceKinds, chain: np.ndarray, n_chains: int,
                        device_total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Host and device time of backward operators, attributed to their forward op's module chain."""
    s = model.slices
    bwd_host = np.zeros(n_chains)
    bwd_device = np.zeros(n_chains)
    flows = model.flows
    fwdbwd = model.string_id("fwdbwd")
    pairs = (flows.cat == fwdbwd) & (flows.src >= 0) & (flows.dst >= 0) if fwdbwd >= 0 else flows.cat < -1
    if pairs.any():
        forward, backward = flows.src[pairs].astype(np.int64), flows.dst[pairs].astype(np.int64)
    else:
        forward, backward = _pair_by_sequence(model, kinds)
    if len(backward) == 0:
        return bwd_host, bwd_device
    # Count each backward op once even if several flows point at it.
    backward, first = np.unique(backward, return_index=True)
    forward = forward[first]
    np.add.at(bwd_host, chain[forward], s.dur[backward].astype(np.float64))
    np.add.at(bwd_device, chain[forward], device_total[backward].astype(np.float64))
    return bwd_host, bwd_device


def _pair_by_sequence(model: TraceModel, kinds: SliceKinds) -> tuple[np.ndarray, np.ndarray]:
    """Forward op ↔ backward op with the same sequence number: the first op with the number is the
    forward one (it runs first), the outermost later one on another thread is the backward one."""
    s = model.slices
    rows = np.flatnonzero(kinds.operator & (s.sequence >= 0))
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rows = rows[np.lexsort((s.depth[rows], s.start[rows], s.sequence[rows]))]
    seq = s.sequence[rows]
    first = np.r_[True, seq[1:] != seq[:-1]]
    forward_of = rows[first][np.cumsum(first) - 1]
    other_thread = s.track[rows] != s.track[forward_of]
    candidates = np.flatnonzero(other_thread)
    # The outermost (first by start) candidate per sequence number.
    cand_seq = seq[candidates]
    keep = np.r_[True, cand_seq[1:] != cand_seq[:-1]] if len(candidates) else np.zeros(0, bool)
    chosen = candidates[keep]
    return forward_of[chosen].astype(np.int64), rows[chosen].astype(np.int64)
