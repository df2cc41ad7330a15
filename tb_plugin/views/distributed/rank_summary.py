"""A rank's summary: the few small tables every cross-rank answer reads, so that a job of a thousand ranks is
answered without opening a thousand models.

Four tables of plain columns (numpy arrays, and lists of texts), each a pure function of one model:

- ``steps``: per step (``accounting.step_times``, the overview's steps): name, start, end, duration and its
  breakdown (computation, communication, overlap, exposed communication, other, device busy), ns.
- ``collectives``: per collective call (``distributed.collective_instances``): its name (normalised:
  ``allreduce``), process group (``Process Group Name``), sequence number within the group (``Seq`` where the
  trace records it, else its number among this rank's calls of the same group and name, counted from the span's
  start), group size, message bytes in and out (-1 when unknown), start, end (ns) and device stream (-1 on the
  host).
- ``operators`` and ``kernels``: the operator and kernel tables of the pages (grouped by name), as columns.

Where a pack holds a summary (``store/packs.py`` writes them as Parquet), the Distributed view reads it instead
of the model; built from the model (``distributed.summary_of``), the same columns give the same answers
(``RankSummary`` is all ``distributed.py`` and ``cross_rank.py`` read).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ...model.trace_model import TraceModel
from ..quantities.accounting import step_times

STEP_COLUMNS = ("start", "end", "duration", "computation", "communication", "overlap", "exposed_communication",
                "other", "device_busy")
COLLECTIVE_INT_COLUMNS = ("seq", "group_size", "in_bytes", "out_bytes", "start", "end", "stream")
OPERATOR_COLUMNS = ("calls", "host_self", "host_total", "device_self", "device_total")
KERNEL_COLUMNS = ("calls", "total", "min", "max")


@dataclass(frozen=True)
class Coded:
    """A text column as codes into its distinct values (a Parquet dictionary column): a thousand ranks' collective
    names are a few distinct texts, never millions of Python strings."""

    codes: np.ndarray  # int32, into values
    values: list[str]

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def tolist(self) -> list[str]:
        return [self.values[c] for c in self.codes.tolist()]


def coded(texts: list[str]) -> Coded:
    vocabulary: dict[str, int] = {}
    codes = np.fromiter((vocabulary.setdefault(t, len(vocabulary)) for t in texts), dtype=np.int32, count=len(texts))
    return Coded(codes, list(vocabulary))


def codes_of(column: Any, vocabulary: dict[str, int]) -> np.ndarray:
    """A text column (a list or ``Coded``) as int64 codes of ``vocabulary``, which grows by the texts it meets, in
    the order they first occur (a ``Coded`` column's values that no row holds are not met: a rank's slice of a
    folder's summary shares the folder's values, and gives the codes its own file gives)."""
    if isinstance(column, Coded):
        codes = column.codes
        if not len(codes):
            return np.zeros(0, np.int64)
        lookup = np.zeros(len(column.values), dtype=np.int64)
        for code in _first_seen(codes, len(column.values)):
            lookup[code] = vocabulary.setdefault(column.values[code], len(vocabulary))
        return lookup[codes]
    return np.fromiter((vocabulary.setdefault(v, len(vocabulary)) for v in column), dtype=np.int64, count=len(column))


def _first_seen(codes: np.ndarray, count: int) -> list[int]:
    """The codes (each below ``count``) that occur in ``codes``, in the order they first occur."""
    if count <= 32:  # a few distinct texts (collective names, process groups): one scan each, stopping early
        found = []
        for code in range(count):
            hit = codes == code
            at = int(hit.argmax())
            if hit[at]:
                found.append((at, code))
        return [code for _, code in sorted(found)]
    present, first = np.unique(codes, return_index=True)
    return present[np.argsort(first, kind="stable")].tolist()


def joined(parts: Sequence[np.ndarray]) -> np.ndarray:
    """``np.concatenate(parts)``, without a copy where the parts are slices of one array lying end to end (the ranks
    of a folder's summary, ``store/pack_summary.py``): that array's rows instead (a view: not to be written to)."""
    if not parts:
        return np.zeros(0, np.int64)
    base = parts[0].base
    if isinstance(base, np.ndarray) and base.ndim == 1 and base.flags.c_contiguous and all(
            p.base is base and p.ndim == 1 and p.flags.c_contiguous and p.dtype == base.dtype for p in parts):
        size = base.dtype.itemsize
        origin = base.__array_interface__["data"][0]
        offsets = [(p.__array_interface__["data"][0] - origin) // size for p in parts]
        if all(offsets[i] + len(parts[i]) == offsets[i + 1] for i in range(len(parts) - 1)):
            return base[offsets[0]:offsets[-1] + len(parts[-1])]
    return np.concatenate(parts)


def joined_codes(columns: Sequence[Any], vocabulary: dict[str, int]) -> np.ndarray:
    """``codes_of`` of each column, one after the other; one pass where the columns are ``Coded`` with the same
    values (every rank's, as a rank's file or its folder's summary holds them), else one per column."""
    if not columns:
        return np.zeros(0, np.int64)
    first = columns[0]
    if isinstance(first, Coded) and all(isinstance(c, Coded) and (c.values is first.values or c.values == first.values)
                                        for c in columns):
        return codes_of(Coded(joined([c.codes for c in columns]), first.values), vocabulary)
    return np.concatenate([codes_of(c, vocabulary) for c in columns])


@dataclass(frozen=True)
class Table:
    """Named columns of equal length: texts as lists of str (or ``Coded``), numbers as numpy arrays."""

    texts: dict[str, Any]
    numbers: dict[str, np.ndarray]

    def __len__(self) -> int:
        for column in self.numbers.values():
            return len(column)
        for values in self.texts.values():
            return len(values)
        return 0


@dataclass(frozen=True)
class RankSummary:
    """One rank's span, as the cross-rank answers see it."""

    worker: str
    span: str
    # What the trace records (``distributedInfo``), as written: the answers show these values as they are.
    recorded_rank: Optional[int]
    world_size: Any
    backend: Any
    is_distributed: bool
    base_time_ns: Optional[int]
    steps: Table
    collectives: Table
    operators: Table = field(default_factory=lambda: Table({}, {}))
    kernels: Table = field(default_factory=lambda: Table({}, {}))

    def meta(self) -> dict[str, Any]:
        """The scalars of the summary (stored with its tables)."""
        return {"worker": self.worker, "span": self.span, "recorded_rank": self.recorded_rank,
                "world_size": self.world_size, "backend": self.backend, "is_distributed": self.is_distributed,
                "base_time_ns": self.base_time_ns}


def _distributed_info(model: TraceModel) -> dict[str, Any]:
    info = model.metadata.get("distributedInfo")
    return info if isinstance(info, dict) else {}


def steps_table(model: TraceModel) -> Table:
    times = step_times(model)
    numbers = {
        "start": times.steps.start, "end": times.steps.start + times.duration, "duration": times.duration,
        "computation": times.computation, "communication": times.communication, "overlap": times.overlap,
        "exposed_communication": times.exposed_communication, "other": times.other,
        "device_busy": times.device_busy,
    }
    return Table({"name": list(times.steps.names)},
                 {key: np.asarray(value, dtype=np.int64) for key, value in numbers.items()})


def collectives_table(inst: Any) -> Table:
    """The table of a rank's collective calls (``distributed.RankInstances``)."""
    return Table({"name": coded(list(inst.name)), "process_group": coded(list(inst.process_group))},
                 {"seq": inst.seq, "seq_recorded": inst.seq_recorded, "group_size": inst.group_size,
                  "in_bytes": inst.nbytes, "out_bytes": inst.out_bytes, "start": inst.start, "end": inst.end,
                  "stream": inst.stream})


def _rows_table(rows: list[dict[str, Any]], numeric: tuple[str, ...]) -> Table:
    return Table({"name": [str(r["name"]) for r in rows]},
                 {key: np.asarray([r[key] for r in rows], dtype=np.int64 if key == "calls" else np.float64)
                  for key in numeric})


def operators_table(rows: list[dict[str, Any]]) -> Table:
    """The operator table (the operators page's rows, grouped by name) as columns."""
    return _rows_table(rows, OPERATOR_COLUMNS)


def kernels_table(rows: list[dict[str, Any]]) -> Table:
    """The kernel table (the kernels page's rows, grouped by name) as columns."""
    return _rows_table(rows, KERNEL_COLUMNS)
