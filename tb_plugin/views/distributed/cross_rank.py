"""Questions only the ranks together answer: which collective is slow once waiting is taken out, how fast each
kind of collective moves data, and which rank the others wait for.

Read from the ranks' summaries (``rank_summary.py``: a few columns per rank), never from their models, so a job of
a thousand ranks is answered in well under a second.

- Collectives are matched across ranks by (process group, sequence number): NCCL runs the calls of one
  communicator in the same order on every rank, and torch numbers them per process group (``Seq``). Where a trace
  records no number, a call is numbered among the rank's calls of its group and name from the span's start.
- Times are put on one clock: each trace's times plus its ``baseTimeNanoseconds`` (where recorded).
- Per collective: the latency is the shortest duration of any rank (a rank that arrived early also spent the
  time it waited for the last one inside the call: the last to arrive waited for nobody), the start skew the
  spread of the ranks' starts, the last rank to arrive, and the wait it caused (the others' time from their own
  start to its start, each at most its own duration: the Distributed view's wait).
- Bandwidths are ``quantities/collective_bandwidth.py``'s transfer bandwidth (nccl-tests' definitions): the
  algorithm bandwidth is the size over the latency, where the size is the larger of a call's input and output (an
  all-gather's whole result, a reduce-scatter's whole input); the bus bandwidth multiplies it by 2(n-1)/n for
  all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, and 1 for broadcast, reduce, send/receive
  (n the group's size): what each rank's link carried, comparable with the hardware's peak. Per collective kind
  and group size, the sizes over the sum of the latencies.
- Stragglers: per rank, how often it arrived last at a collective with at least two ranks, and the wait that
  caused the others.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..quantities.collective_bandwidth import bus_factor, message_bytes, transfer_bandwidth
from .rank_summary import RankSummary

NS_PER_US = 1000.0
_SEQ_BITS = 40


def _codes(values: list[str], vocabulary: dict[str, int]) -> np.ndarray:
    return np.fromiter((vocabulary.setdefault(v, len(vocabulary)) for v in values), dtype=np.int64,
                       count=len(values))


def cross_rank(summaries: Sequence[RankSummary], ranks: Sequence[int]) -> dict[str, Any]:
    """The matched collectives, bandwidths per collective kind and the straggler table of a run's ranks
    (``ranks[i]``: the rank number of ``summaries[i]``)."""
    group_names: dict[str, int] = {}
    names: dict[str, int] = {}
    parts: dict[str, list[np.ndarray]] = {key: [] for key in ("rank", "group", "name", "seq", "size", "n", "start",
                                                              "end")}
    recorded = True
    for index, summary in enumerate(summaries):
        table = summary.collectives
        count = len(table)
        if count == 0:
            continue
        numbers = table.numbers
        base = summary.base_time_ns or 0
        parts["rank"].append(np.full(count, index, dtype=np.int64))
        parts["group"].append(_codes(table.texts["process_group"], group_names))
        parts["name"].append(_codes(table.texts["name"], names))
        parts["seq"].append(numbers["seq"])
        parts["size"].append(message_bytes(numbers["in_bytes"], numbers["out_bytes"]))
        parts["n"].append(numbers["group_size"])
        parts["start"].append(numbers["start"] + base)
        parts["end"].append(numbers["end"] + base)
        recorded = recorded and bool(np.asarray(numbers["seq_recorded"]).all())
    if not parts["rank"]:
        return {"collectives": {"columns": []}, "kinds": [], "stragglers": [], "matched_by": _matched_by(recorded),
                "process_groups": []}
    col = {key: np.concatenate(values) for key, values in parts.items()}
    key = (col["group"] << _SEQ_BITS) + np.clip(col["seq"], 0, (1 << _SEQ_BITS) - 1)
    order = np.argsort(key, kind="stable")
    col = {k: v[order] for k, v in col.items()}
    key = key[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    sizes = np.diff(np.r_[first, len(key)])
    start, end = col["start"], col["end"]
    duration = end - start
    first_start = np.minimum.reduceat(start, first)
    last_start = np.maximum.reduceat(start, first)
    latency = np.minimum.reduceat(duration, first)
    size = np.maximum.reduceat(col["size"], first)
    recorded_n = np.maximum.reduceat(col["n"], first)
    group_size = np.where(recorded_n > 0, recorded_n, sizes)
    of_row = np.repeat(np.arange(len(first)), sizes)
    # The last to arrive (the first row of its collective holding the latest start), and the wait it caused.
    latest = np.flatnonzero(start == last_start[of_row])
    last_row = latest[np.r_[True, of_row[latest][1:] != of_row[latest][:-1]]]
    last_rank = col["rank"][last_row]
    waited = np.clip(last_start[of_row] - start, 0, duration)
    caused = np.add.reduceat(waited, first)
    name_of = np.array(sorted(names, key=names.__getitem__), dtype=object)
    group_of = np.array(sorted(group_names, key=group_names.__getitem__), dtype=object)
    kind = col["name"][first]
    algbw = np.full(len(first), np.nan)
    busbw = np.full(len(first), np.nan)
    factor = np.full(len(first), np.nan)
    for code, name in enumerate(name_of.tolist()):
        chosen = np.flatnonzero(kind == code)
        # The latency is already the shortest duration over the ranks: one row of [ranks, collectives].
        bandwidth = transfer_bandwidth(name, size[chosen][None, :], latency[chosen][None, :], group_size[chosen])
        algbw[chosen], busbw[chosen] = bandwidth.algorithm, bandwidth.bus
        factor[chosen] = bus_factor(name, group_size[chosen])
    rank_numbers = np.asarray(ranks, dtype=np.int64)
    collectives = {
        "process_group": group_of[col["group"][first]].tolist(),
        "seq": col["seq"][first].tolist(),
        "name": name_of[kind].tolist(),
        "ranks": sizes.tolist(),
        "group_size": group_size.tolist(),
        "bytes": [None if v < 0 else v for v in size.tolist()],
        "start": ((first_start - first_start.min()) / NS_PER_US).tolist(),
        "latency": (latency / NS_PER_US).tolist(),
        "skew": ((last_start - first_start) / NS_PER_US).tolist(),
        "last_rank": rank_numbers[last_rank].tolist(),
        "wait_caused": (caused / NS_PER_US).tolist(),
        "algbw": _nullable(algbw),
        "busbw": _nullable(busbw),
    }
    collectives["columns"] = list(collectives)
    return {
        "matched_by": _matched_by(recorded),
        "process_groups": _groups(group_of, col["group"][first], group_size),
        "collectives": collectives,
        "kinds": _kinds(name_of, kind, group_size, size, latency, factor, last_start - first_start),
        "stragglers": _stragglers(len(summaries), rank_numbers, [s.worker for s in summaries], col["rank"],
                                  start - first_start[of_row], last_rank, caused, sizes),
    }


def _nullable(values: np.ndarray) -> list[Optional[float]]:
    return [None if v != v else v for v in values.tolist()]


def _matched_by(recorded: bool) -> str:
    if recorded:
        return "process group and sequence number (as the traces record them)"
    return ("process group and sequence number (numbered per group and collective from each span's start where a "
            "trace records no number)")


def _groups(group_of: np.ndarray, groups: np.ndarray, group_size: np.ndarray) -> list[dict[str, Any]]:
    out = []
    for code in np.unique(groups).tolist():
        chosen = groups == code
        out.append({"process_group": group_of[code], "collectives": int(chosen.sum()),
                    "group_size": int(group_size[chosen].max())})
    return out


def _kinds(name_of: np.ndarray, kind: np.ndarray, group_size: np.ndarray, size: np.ndarray, latency: np.ndarray,
           factor: np.ndarray, skew: np.ndarray) -> list[dict[str, Any]]:
    """Per collective kind and group size: the bandwidths over all its calls of known size (bytes over the sum of
    their latencies)."""
    out = []
    keys = np.unique(np.stack([kind, group_size]), axis=1).T if len(kind) else np.zeros((0, 2), np.int64)
    for code, n in keys.tolist():
        chosen = (kind == code) & (group_size == n)
        known = chosen & (size > 0) & np.isfinite(factor)
        seconds = float(latency[known].sum()) / 1e9
        moved = float(size[known].sum())
        out.append({
            "name": name_of[code], "group_size": int(n), "calls": int(chosen.sum()),
            "bytes": int(moved) if known.any() else None,
            "latency": float(latency[chosen].sum()) / NS_PER_US,
            "mean_latency": float(latency[chosen].mean()) / NS_PER_US,
            "mean_skew": float(skew[chosen].mean()) / NS_PER_US,
            "algbw": moved / seconds if seconds > 0 and moved > 0 else None,
            "busbw": float((size[known] * factor[known]).sum()) / seconds if seconds > 0 and moved > 0 else None,
        })
    out.sort(key=lambda r: -r["latency"])
    return out


def _stragglers(count: int, rank_numbers: np.ndarray, workers: list[str], row_rank: np.ndarray,
                lateness: np.ndarray, last_rank: np.ndarray, caused: np.ndarray,
                sizes: np.ndarray) -> list[dict[str, Any]]:
    """Per rank: collectives it took part in, how often it arrived last (among at least two ranks), the wait that
    caused the others, and its mean lateness (its start after the first rank's)."""
    shared = sizes >= 2
    calls = np.bincount(row_rank, minlength=count)
    last = np.bincount(last_rank[shared], minlength=count)
    wait = np.bincount(last_rank[shared], weights=caused[shared], minlength=count)
    late = np.bincount(row_rank, weights=lateness, minlength=count)
    rows = [{"rank": int(rank_numbers[i]), "worker": workers[i], "collectives": int(calls[i]),
             "arrived_last": int(last[i]), "wait_caused": float(wait[i]) / NS_PER_US,
             "mean_lateness": float(late[i] / calls[i]) / NS_PER_US if calls[i] else 0.0}
            for i in range(count)]
    rows.sort(key=lambda r: (-r["wait_caused"], r["rank"]))
    return rows
