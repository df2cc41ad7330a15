"""Call stacks as a flame graph (an aggregated call tree), and as folded-stacks text.

Every host slice (Python frame, operator, annotation) is a frame; slices with the same
path of frame names from the root are merged into one node. A node's ``self`` is the
host self time of its slices, or — weighted by device — the device time of the kernels,
copies and memsets they launched themselves; ``total`` adds the node's descendants.

Where the Python stacks come from (``stacks_from`` in the answer): the trace's Python frames
(``python_function`` events, torch 1.10+ with ``with_stack=True``), else the ``Call stack`` argument
that older profilers (Kineto of torch 1.8–1.9) write on each operator: its frames (innermost first,
joined by ";") are put above the outermost operator that carries it, so the operators nest under
the Python code that called them as they would under Python frames. A frame taken from a call stack
has no time of its own (its self time is 0, its total the operators' beneath it, its calls theirs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import tree
from ..model.categories import SliceKinds
from ..model.trace_model import TraceModel
from ..model.units import NS_PER_US
from .quantities import recording

WEIGHTS = ("host", "device")
# What the Python frames of the tree are made of (the answer's ``stacks_from``).
FROM_PYTHON_FRAMES, FROM_CALL_STACKS, NO_PYTHON_STACKS = "python_frames", "call_stacks", "none"
NO_PYTHON_STACKS_NOTE = "The trace records no Python stacks: only operators and annotations are shown. "


@dataclass(frozen=True)
class CallTree:
    parent: np.ndarray  # node → parent node (-1 for roots); node 0 is the (empty) root
    name: np.ndarray  # node → string id; ids from len(model.strings) on index ``frame_names``
    self_ns: np.ndarray
    total_ns: np.ndarray
    calls: np.ndarray
    stacks_from: str = FROM_PYTHON_FRAMES
    frame_names: tuple[str, ...] = ()  # frames of recorded call stacks, which are not strings of the model

    def name_text(self, model: TraceModel, name: int) -> str:
        n_strings = len(model.strings)
        return model.strings[name] if name < n_strings else self.frame_names[name - n_strings]


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
    stacks_from, frame_names = (FROM_PYTHON_FRAMES if kinds.python.any() else NO_PYTHON_STACKS), ()
    if stacks_from == NO_PYTHON_STACKS and len(rows) and (s.call_stack[rows] >= 0).any():
        stacks_from = FROM_CALL_STACKS
        chain, chain_parent, chain_name, frame_names = _under_call_stacks(model, frames, chain, chain_parent,
                                                                          chain_name)
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
    node_calls = calls[ids]
    if stacks_from == FROM_CALL_STACKS:
        # A call-stack frame has no slices of its own: its total (and calls) are its children's. Children have
        # larger ids than their parents, so one pass from the last node adds each subtree once.
        virtual = chain_name[ids] >= len(model.strings)
        for node in range(len(ids) - 1, 0, -1):  # one step per distinct stack, not per event
            p = int(parent[node])
            if p > 0 and virtual[p]:
                total[p] += total[node]
                node_calls[p] += node_calls[node]
    total[0] = total[parent == 0].sum()
    return CallTree(parent=parent, name=chain_name[ids], self_ns=self_ns[ids], total_ns=total, calls=node_calls,
                    stacks_from=stacks_from, frame_names=frame_names)


def _under_call_stacks(model: TraceModel, frames: np.ndarray, chain: np.ndarray, chain_parent: np.ndarray,
                       chain_name: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """The frame chains with each outermost frame's ``Call stack`` frames put above it.

    Nodes: 0 the root; then one node per distinct prefix of the call stacks (outermost frame first; names
    numbered from ``len(model.strings)`` into the returned frame names); then one node per distinct (call stack,
    chain) of the frame rows, whose parent is (call stack, the chain's parent), or the call stack's innermost
    frame for an outermost chain. Parents keep smaller ids than their children. Python work is per distinct
    call stack and frame, never per slice.
    """
    s = model.slices
    n_strings = len(model.strings)
    # The outermost frame row above (or at) each row, and its call stack.
    outermost = np.full(len(s), -1, dtype=np.int64)
    for level in tree.levels(s):
        p = s.parent[level]
        inherited = np.where(p >= 0, outermost[np.maximum(p, 0)], -1)
        outermost[level] = np.where((inherited < 0) & frames[level], level, inherited)
    rows = np.flatnonzero(frames)
    stack_of_row = s.call_stack[outermost[rows]].astype(np.int64)  # -1: none recorded

    # Prefix nodes of the distinct call stacks, outermost frame first.
    names: list[str] = []
    name_ids: dict[str, int] = {}
    prefix_parent: list[int] = []
    prefix_name: list[int] = []
    prefix_ids: dict[tuple[int, int], int] = {}
    leaf_of_stack: dict[int, int] = {}
    for stack in np.unique(stack_of_row[stack_of_row >= 0]).tolist():
        node = 0
        for frame in reversed(model.strings[stack].split(";")):
            frame = frame.strip()
            if not frame:
                continue
            name = name_ids.setdefault(frame, n_strings + len(names))
            if name == n_strings + len(names):
                names.append(frame)
            key = (node, name)
            if key not in prefix_ids:
                prefix_ids[key] = 1 + len(prefix_parent)
                prefix_parent.append(node)
                prefix_name.append(name)
            node = prefix_ids[key]
        leaf_of_stack[stack] = node
    n_prefix = len(prefix_parent)

    # One node per (call stack, chain); keyed as one integer so that a parent is found by searchsorted.
    n_chains = len(chain_parent)
    stack_key = stack_of_row + 1  # 0: no call stack
    pair_key = stack_key * n_chains + chain[rows]
    pairs, inverse = np.unique(pair_key, return_inverse=True)
    pair_stack, pair_chain = pairs // n_chains, pairs % n_chains
    above = chain_parent[pair_chain]
    parent_key = pair_stack * n_chains + above
    parent_pair = np.searchsorted(pairs, parent_key)
    stacks = np.fromiter(leaf_of_stack.keys(), dtype=np.int64, count=len(leaf_of_stack))
    leaves = np.fromiter(leaf_of_stack.values(), dtype=np.int64, count=len(leaf_of_stack))
    found = np.searchsorted(stacks, pair_stack - 1)  # stacks come sorted (np.unique above)
    pair_leaf = np.where(pair_stack > 0, leaves[np.minimum(found, max(len(stacks) - 1, 0))] if len(stacks) else 0, 0)
    offset = 1 + n_prefix
    pair_parent = np.where(above == 0, pair_leaf, offset + parent_pair)

    new_chain = np.zeros(len(s), dtype=np.int64)
    new_chain[rows] = offset + inverse.reshape(-1)
    new_parent = np.concatenate([[0], np.asarray(prefix_parent, dtype=np.int64), pair_parent])
    new_name = np.concatenate([[-1], np.asarray(prefix_name, dtype=np.int64), chain_name[pair_chain]])
    return new_chain, new_parent, new_name, tuple(names)


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
        "stacks_from": ct.stacks_from,
        "note": NO_PYTHON_STACKS_NOTE + recording.record_stacks(model) if ct.stacks_from == NO_PYTHON_STACKS else None,
        "names": [ct.name_text(model, int(n)) if n >= 0 else "all" for n in names_used],
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
        frame = ct.name_text(model, int(ct.name[node])).replace(";", ":").replace("\n", " ").replace(" ", "_")
        parent_path = paths[int(ct.parent[node])]
        path = f"{parent_path};{frame}" if parent_path else frame
        paths[node] = path
        value = int(round(ct.self_ns[node] / NS_PER_US))
        if value > 0:
            lines.append(f"{path} {value}")
    return "\n".join(lines) + ("\n" if lines else "")
