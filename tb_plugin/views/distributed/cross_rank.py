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
from .rank_summary import RankSummary, joined, joined_codes

NS_PER_US = 1000.0


def cross_rank(summaries: Sequence[RankSummary], ranks: Sequence[int]) -> dict[str, Any]:
    """The matched collectives, bandwidths per collective kind and the straggler table of a run's ranks
    (``ranks[i]``: the rank number of ``summaries[i]``)."""
    group_names: dict[str, int] = {}
    names: dict[str, int] = {}
    holders = [i for i, summary in enumerate(summaries) if len(summary.collectives)]  # the summaries with calls
    tables = [summaries[i].collectives for i in holders]
    # Every rank's calls one after the other, each column joined once (a folder's summary's columns without a copy).
    recorded = bool(joined([t.numbers["seq_recorded"] for t in tables]).all()) if tables else True
    if not holders:
        return {"collectives": {"columns": []}, "kinds": [], "stragglers": [], "matched_by": _matched_by(recorded),
                "process_groups": []}

    def column(key: str) -> np.ndarray:
        return joined([t.numbers[key] for t in tables])

    counts = [len(t) for t in tables]
    col: dict[str, Any] = {
        "group": joined_codes([t.texts["process_group"] for t in tables], group_names),
        "name": joined_codes([t.texts["name"] for t in tables], names),
        "seq": column("seq"), "size": message_bytes(column("in_bytes"), column("out_bytes")),
        "n": column("group_size"), "start": column("start"), "end": column("end"),
    }
    bases = np.asarray([summaries[i].base_time_ns or 0 for i in holders], dtype=np.int64)
    if bases.any():  # times on one clock: each trace's plus its base
        offsets = np.repeat(bases, counts)
        col["start"], col["end"] = col["start"] + offsets, col["end"] + offsets
    col["rank"] = _LazyRanks(holders, counts)  # made only where rows are not a [ranks, collectives] matrix
    per = _match(col, len(group_names), counts, len(summaries))
    sizes, first_start, last_start = per["ranks"], per["first_start"], per["last_start"]
    latency, size, caused, kind = per["latency"], per["size"], per["caused"], per["name"]
    group_size = np.where(per["recorded_n"] > 0, per["recorded_n"], sizes)
    last_rank = per["last_rank"]
    name_of = np.array(sorted(names, key=names.__getitem__), dtype=object)
    group_of = np.array(sorted(group_names, key=group_names.__getitem__), dtype=object)
    algbw = np.full(len(kind), np.nan)
    busbw = np.full(len(kind), np.nan)
    factor = np.full(len(kind), np.nan)
    for code, name in enumerate(name_of.tolist()):
        chosen = np.flatnonzero(kind == code)
        # The latency is already the shortest duration over the ranks: one row of [ranks, collectives].
        bandwidth = transfer_bandwidth(name, size[chosen][None, :], latency[chosen][None, :], group_size[chosen])
        algbw[chosen], busbw[chosen] = bandwidth.algorithm, bandwidth.bus
        factor[chosen] = bus_factor(name, group_size[chosen])
    rank_numbers = np.asarray(ranks, dtype=np.int64)
    collectives = {
        "process_group": group_of[per["group"]].tolist(),
        "seq": per["seq"].tolist(),
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
        "process_groups": _groups(group_of, per["group"], group_size),
        "collectives": collectives,
        "kinds": _kinds(name_of, kind, group_size, size, latency, factor, last_start - first_start),
        "stragglers": _stragglers(len(summaries), rank_numbers, [s.worker for s in summaries], per["calls"],
                                  per["lateness"], last_rank, caused, sizes),
    }


_BIG = np.iinfo(np.int64).max
# Whether ranks that ran the same collectives in the same order are reduced as a matrix (tests compare both ways).
MATRIX = True


class _LazyRanks:
    """Each row's summary index, as an array only when asked for."""

    def __init__(self, holders: list[int], counts: list[int]) -> None:
        self.holders, self.counts = holders, counts

    def array(self) -> np.ndarray:
        return np.repeat(np.asarray(self.holders, dtype=np.int64), self.counts)


def _match(col: dict[str, Any], groups: int, counts: list[int], total: int) -> dict[str, np.ndarray]:
    """Per collective (process group, sequence number), in that order: the ranks that ran it, the first and last
    start, the shortest duration, the size, the recorded group size, its name, the last rank to arrive (its index)
    and the wait it caused; per rank its calls and summed lateness.

    Where every rank ran the same collectives in the same order (the usual case) the rows are a [ranks, collectives]
    matrix and each figure is one reduction along the ranks. Otherwise each row's collective is a dense cell (per
    group, its sequence numbers from the smallest; no row is sorted), reduced with unbuffered ``ufunc.at``.
    """
    group, seq = col["group"], np.maximum(col["seq"], 0)
    ranks = len(counts)
    width = counts[0] if counts else 0
    if MATRIX and counts and all(c == width for c in counts):
        # Every rank ran the same (group, number) pairs in the same order: a [ranks, collectives] matrix.
        if bool((group.reshape(ranks, width) == group[:width]).all()) and bool(
                (seq.reshape(ranks, width) == seq[:width]).all()):
            order = np.lexsort((seq[:width], group[:width]))
            return _match_matrix(col, order, ranks, width, total)
    rank = col["rank"].array()
    seq_min = np.full(groups, _BIG)
    seq_max = np.full(groups, -1)
    np.minimum.at(seq_min, group, seq)
    np.maximum.at(seq_max, group, seq)
    span = np.where(seq_max >= 0, seq_max - seq_min + 1, 0)
    base = np.concatenate([[0], np.cumsum(span)[:-1]])
    cell = base[group] + seq - seq_min[group]
    cells = int(span.sum())
    if cells > 4 * len(cell) + 1024:  # numbers far apart: number the cells that occur instead
        _, cell = np.unique(cell, return_inverse=True)
        cells = int(cell.max()) + 1
    start, duration = col["start"], col["end"] - col["start"]
    count = np.bincount(cell, minlength=cells)
    first_start = np.full(cells, _BIG)
    last_start = np.full(cells, -_BIG)
    latency = np.full(cells, _BIG)
    size = np.full(cells, -1)
    recorded_n = np.full(cells, -1)
    np.minimum.at(first_start, cell, start)
    np.maximum.at(last_start, cell, start)
    np.minimum.at(latency, cell, duration)
    np.maximum.at(size, cell, col["size"])
    np.maximum.at(recorded_n, cell, col["n"])
    latest = np.flatnonzero(start == last_start[cell])[::-1]
    last_row = np.full(cells, -1)
    last_row[cell[latest]] = latest  # the first row (lowest rank) holding the latest start: written last
    waited = np.clip(last_start[cell] - start, 0, duration)
    caused = np.bincount(cell, weights=waited, minlength=cells)
    first_row = np.full(cells, -1)
    first_row[cell[::-1]] = np.arange(len(cell) - 1, -1, -1)
    present = np.flatnonzero(count)
    rows = first_row[present]
    return {
        "ranks": count[present], "first_start": first_start[present], "last_start": last_start[present],
        "latency": latency[present], "size": size[present], "recorded_n": recorded_n[present],
        "caused": caused[present], "name": col["name"][rows], "group": group[rows], "seq": col["seq"][rows],
        "last_rank": rank[last_row[present]],
        "calls": np.bincount(rank, minlength=total),
        "lateness": np.bincount(rank, weights=start - first_start[cell], minlength=total),
    }


def _match_matrix(col: dict[str, Any], order: np.ndarray, ranks: int, width: int,
                  total: int) -> dict[str, np.ndarray]:
    """``_match`` where the rows are [ranks, collectives]: reductions along the ranks; ``order`` puts the
    collectives in (group, number) order (applied to the results)."""

    def matrix(name: str) -> np.ndarray:
        return col[name].reshape(ranks, width)  # a view: reductions along the ranks need no column order

    start = matrix("start")
    duration = matrix("end") - start
    first_start, last_start = start.min(axis=0), start.max(axis=0)
    waited = np.clip(last_start[None, :] - start, 0, duration)
    per_rank = np.asarray(col["rank"].holders, dtype=np.int64)
    return {
        "ranks": np.full(width, ranks), "first_start": first_start[order], "last_start": last_start[order],
        "latency": duration.min(axis=0)[order], "size": matrix("size").max(axis=0)[order],
        "recorded_n": matrix("n").max(axis=0)[order], "caused": waited.sum(axis=0).astype(np.float64)[order],
        "name": matrix("name")[0][order], "group": matrix("group")[0][order], "seq": matrix("seq")[0][order],
        "last_rank": per_rank[start.argmax(axis=0)][order],
        "calls": np.bincount(per_rank, weights=np.full(ranks, width), minlength=total).astype(np.int64),
        "lateness": np.bincount(per_rank, weights=(start - first_start[None, :]).sum(axis=1).astype(np.float64),
                                minlength=total),
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


def _stragglers(count: int, rank_numbers: np.ndarray, workers: list[str], calls: np.ndarray,
                late: np.ndarray, last_rank: np.ndarray, caused: np.ndarray,
                sizes: np.ndarray) -> list[dict[str, Any]]:
    """Per rank: collectives it took part in, how often it arrived last (among at least two ranks), the wait that
    caused the others, and its mean lateness (its start after the first rank's)."""
    shared = sizes >= 2
    last = np.bincount(last_rank[shared], minlength=count)
    wait = np.bincount(last_rank[shared], weights=caused[shared], minlength=count)
    rows = [{"rank": int(rank_numbers[i]), "worker": workers[i], "collectives": int(calls[i]),
             "arrived_last": int(last[i]), "wait_caused": float(wait[i]) / NS_PER_US,
             "mean_lateness": float(late[i] / calls[i]) / NS_PER_US if calls[i] else 0.0}
            for i in range(count)]
    rows.sort(key=lambda r: (-r["wait_caused"], r["rank"]))
    return rows
