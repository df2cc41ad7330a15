"""Call stacks as a flame graph (an aggregated call tree), and as folded-stacks text.

Every host slice (Python frame, operator, annotation) is a frame; slices with the same
path of frame names from the root are merged into one node. A node's ``self`` is the
host self time of its slices, or — weighted by device — the device time of the kernels,
copies and memsets they launched themselves; ``total`` adds the node's descendants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import tree
from ..model.categories import SliceKinds
from ..model.trace_model import TraceModel

WEIGHTS = ("host", "device")
NS_PER_US = 1000.0


@dataclass(frozen=True)
class CallTree:
    parent: np.ndarray  # node → parent node (-1 for roots); node 0 is the (empty) root
    name: np.ndarray  # node → string id
    self_ns: np.ndarray
    total_ns: np.ndarray
    calls: np.ndarray


def call_tree(model: TraceModel, weight: str = "host") -> CallTree:
    if weight not in WEIGHTS:
        raise ValueError(f"weight must be one of {WEIGHTS}")
    return model.memo(("call_tree", weight), lambda: _call_tree(model, weight))


def _call_tree(model: TraceModel, weight: str) -> CallTree:
    s = model.slices
    kinds = SliceKinds(model)
    frames = kinds.host_op & ~kinds.step
    chain, chain_parent, chain_name = tree.frame_chains(s, frames)
    rows = np.flatnonzero(frames)
    if weight == "host":
        value = tree.self_time(s)[rows]
        inclusive = s.dur[rows]
    else:
        device_rows = np.flatnonzero(kinds.device_work & (model.links.op >= 0))
        launched = np.zeros(len(s), dtype=np.int64)
        np.add.at(launched, model.links.op[device_rows], s.dur[device_rows])
        value = launched[rows]
        inclusive = tree.subtree_sum(s, launched)[rows]
    n_chains = len(chain_parent)
    self_ns = np.bincount(chain[rows], weights=value.astype(np.float64), minlength=n_chains)
    # A slice is never inside another slice of its own path, so a node's total is the sum of its
    # slices' inclusive values (exact even where the profiler's ranges overlap untidily).
    total_ns = np.bincount(chain[rows], weights=inclusive.astype(np.float64), minlength=n_chains)
    calls = np.bincount(chain[rows], minlength=n_chains)
    # Keep only chains that occur (canonical ids), renumbered densely; parents come first.
    used = np.zeros(n_chains, dtype=bool)
    used[chain[rows]] = True
    used[0] = True
    # Ancestors of used chains are used too.
    for cid in range(n_chains - 1, 0, -1):  # one step per distinct stack, not per event
        if used[cid]:
            used[chain_parent[cid]] = True
    ids = np.flatnonzero(used)
    remap = np.full(n_chains, -1, dtype=np.int64)
    remap[ids] = np.arange(len(ids))
    parent = np.where(ids == 0, -1, remap[chain_parent[ids]])
    total = total_ns[ids]
    total[0] = total[parent == 0].sum()
    return CallTree(parent=parent, name=chain_name[ids], self_ns=self_ns[ids], total_ns=total, calls=calls[ids])


def flamegraph(model: TraceModel, weight: str = "host", min_share: float = 0.0) -> dict[str, Any]:
    """Nodes as columnar arrays (parent index, name index into ``names``, self, total, calls)."""
    ct = call_tree(model, weight)
    keep = np.ones(len(ct.parent), dtype=bool)
    grand = float(ct.total_ns[0]) if len(ct.total_ns) else 0.0
    if min_share > 0 and grand > 0:
        keep = ct.total_ns >= min_share * grand
        keep[0] = True
    ids = np.flatnonzero(keep)
    remap = np.full(len(ct.parent), -1, dtype=np.int64)
    remap[ids] = np.arange(len(ids))
    names_used, name_index = np.unique(ct.name[ids], return_inverse=True)
    return {
        "weight": weight,
        "unit": "us",
        "total": grand / NS_PER_US,
        "names": [model.strings[int(n)] if n >= 0 else "all" for n in names_used],
        "nodes": {
            "parent": [int(p) for p in np.where(ct.parent[ids] >= 0, remap[np.maximum(ct.parent[ids], 0)], -1)],
            "name": name_index.reshape(-1).tolist(),
            "self": (ct.self_ns[ids] / NS_PER_US).tolist(),
            "total": (ct.total_ns[ids] / NS_PER_US).tolist(),
            "calls": ct.calls[ids].tolist(),
        },
    }


def folded_stacks(model: TraceModel, weight: str = "host") -> str:
    """``frame;frame;leaf value`` lines (values in whole µs), for flamegraph.pl, speedscope and friends."""
    ct = call_tree(model, weight)
    lines = []
    paths: dict[int, str] = {0: ""}
    for node in range(1, len(ct.parent)):
        frame = model.strings[int(ct.name[node])].replace(";", ":").replace("\n", " ").replace(" ", "_")
        parent_path = paths[int(ct.parent[node])]
        path = f"{parent_path};{frame}" if parent_path else frame
        paths[node] = path
        value = int(round(ct.self_ns[node] / NS_PER_US))
        if value > 0:
            lines.append(f"{path} {value}")
    return "\n".join(lines) + ("\n" if lines else "")
