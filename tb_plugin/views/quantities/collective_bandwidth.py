"""Bandwidth of collective calls: algorithm bandwidth and bus bandwidth, the one definition every view uses.

For a collective moving a message of ``S`` bytes in ``t`` seconds, the algorithm bandwidth is ``S / t`` and the bus
bandwidth rescales it to what each link carried, so that it can be held against the link's peak whatever the group
size ``n`` (the convention of NCCL's own benchmarks, nccl-tests ``doc/PERFORMANCE.md``):

==============================================  ==================  ===========================================
collective                                      bus factor          message size ``S``
==============================================  ==================  ===========================================
all-reduce                                      ``2 (n - 1) / n``   the buffer reduced
all-gather, reduce-scatter, all-to-all,         ``(n - 1) / n``     the larger of input and output: the whole
gather, scatter                                                     gathered (or scattered) buffer
broadcast, reduce, send, receive                ``1``               the buffer sent
==============================================  ==================  ===========================================

Which duration ``t`` is divided by gives two quantities, named apart because they answer different questions:

* **rank bandwidth** (``rank_bandwidth``): one rank's own duration of the call. It includes the time the rank waited
  for the slowest peer to arrive, so a low figure may mean a late peer, not a slow link. This is what one rank's
  trace can tell.
* **transfer bandwidth** (``transfer_bandwidth``): the shortest duration of the same collective over the ranks that
  ran it (matched across ranks by the caller, for example by process group and sequence number). The last rank to
  arrive waits least, so its duration is closest to the transfer alone.

Figures are bytes per second (decimal units on the page: GB/s is 1e9 bytes per second); NaN where the size, the
duration or the group size is unknown, or the collective moves no payload (barrier).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

_ALL_REDUCE, _SPREAD, _ONE, _NONE = "all_reduce", "spread", "one", "none"

# Collective names as record_param_comms, the backends' ranges and NCCL/RCCL/HCCL kernels spell them, lowercased
# with separators removed ("_allgather_base" -> "allgatherbase", "ncclDevKernel_ReduceScatter_Sum" ->
# "reducescatter"), matched in this order: the first pattern found decides.
_KIND_PATTERNS = (
    (re.compile(r"barrier"), _NONE),
    (re.compile(r"allreduce"), _ALL_REDUCE),
    (re.compile(r"allgather|reducescatter|alltoall|gather|scatter"), _SPREAD),
    (re.compile(r"broadcast|bcast|reduce|sendrecv|send|recv"), _ONE),
)


def collective_family(name: str) -> Optional[str]:
    """How a collective's bus bandwidth scales with its group: ``"all_reduce"``, ``"spread"`` (all-gather,
    reduce-scatter, all-to-all, gather, scatter), ``"one"`` (broadcast, reduce, send, receive), ``"none"`` (no
    payload: barrier), or None for a name that says nothing known."""
    key = re.sub(r"[^a-z]", "", name.lower())
    for pattern, family in _KIND_PATTERNS:
        if pattern.search(key):
            return family
    return None


def bus_factor(name: str, group_size: np.ndarray) -> np.ndarray:
    """Bus bandwidth over algorithm bandwidth for collective ``name`` in groups of ``group_size`` ranks (NaN where
    the group size is unknown (< 1) or the collective has no payload)."""
    n = np.asarray(group_size, dtype=np.float64)
    family = collective_family(name)
    valid = n >= 1
    with np.errstate(divide="ignore", invalid="ignore"):
        if family == _ALL_REDUCE:
            factor = 2.0 * (n - 1.0) / n
        elif family == _SPREAD:
            factor = (n - 1.0) / n
        elif family == _ONE:
            factor = np.ones_like(n)
        else:
            factor = np.full_like(n, np.nan)
    return np.where(valid, factor, np.nan)


def message_bytes(in_bytes: np.ndarray, out_bytes: np.ndarray) -> np.ndarray:
    """The message size ``S`` of a call from its input and output sizes (-1 where unknown): the larger of the two,
    which is the buffer reduced or sent, or the whole gathered or scattered buffer (the table above)."""
    in_b = np.asarray(in_bytes, dtype=np.int64)
    out_b = np.asarray(out_bytes, dtype=np.int64)
    return np.maximum(in_b, out_b)


@dataclass(frozen=True)
class Bandwidth:
    """Per call (or per matched collective): algorithm and bus bandwidth in bytes per second (NaN where unknown),
    and the duration they were computed from (ns)."""

    algorithm: np.ndarray
    bus: np.ndarray
    duration_ns: np.ndarray


def _bandwidth(name: str, nbytes: np.ndarray, duration_ns: np.ndarray, group_size: np.ndarray) -> Bandwidth:
    size = np.asarray(nbytes, dtype=np.float64)
    seconds = np.asarray(duration_ns, dtype=np.float64) / 1e9
    known = (size >= 0) & (seconds > 0)
    family = collective_family(name)
    algorithm = np.full(np.broadcast(size, seconds).shape, np.nan)
    if family != _NONE:
        np.divide(size, seconds, out=algorithm, where=known)
    bus = algorithm * bus_factor(name, np.broadcast_to(group_size, algorithm.shape))
    return Bandwidth(algorithm=algorithm, bus=bus, duration_ns=np.asarray(duration_ns, dtype=np.int64))


def rank_bandwidth(name: str, nbytes: np.ndarray, duration_ns: np.ndarray, group_size: np.ndarray) -> Bandwidth:
    """Rank bandwidth of calls of collective ``name`` seen on one rank: message bytes (-1 unknown) over that rank's
    own duration of each call (waiting for peers included). Arrays of one value per call."""
    return _bandwidth(name, nbytes, duration_ns, group_size)


def transfer_bandwidth(name: str, nbytes: np.ndarray, duration_ns: np.ndarray,
                       group_size: np.ndarray) -> Bandwidth:
    """Transfer bandwidth of collectives matched across ranks.

    ``nbytes`` and ``duration_ns`` are ``[ranks, collectives]`` arrays (row r: rank r's view of each matched
    collective; a duration <= 0 or a size < 0 where that rank did not record it); ``group_size`` one value per
    collective. The latency of a collective is its shortest recorded duration over the ranks, its size the largest
    recorded size (the ranks agree when all recorded it)."""
    durations = np.asarray(duration_ns, dtype=np.int64)
    sizes = np.asarray(nbytes, dtype=np.int64)
    if durations.ndim != 2 or durations.shape != sizes.shape:
        raise ValueError("nbytes and duration_ns must be [ranks, collectives] arrays of the same shape")
    recorded = durations > 0
    big = np.iinfo(np.int64).max
    shortest = np.where(recorded, durations, big).min(axis=0) if durations.shape[0] else np.zeros(0, np.int64)
    shortest = np.where(shortest == big, 0, shortest)
    size = sizes.max(axis=0) if sizes.shape[0] else np.zeros(0, np.int64)
    return _bandwidth(name, size, shortest, np.asarray(group_size))
