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
from typing import Any, Optional

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
    """A text column (a list or ``Coded``) as int64 codes of ``vocabulary``, which grows by the texts it meets."""
    if isinstance(column, Coded):
        lookup = np.fromiter((vocabulary.setdefault(v, len(vocabulary)) for v in column.values), dtype=np.int64,
                             count=len(column.values))
        return lookup[column.codes] if len(column.codes) else np.zeros(0, np.int64)
    return np.fromiter((vocabulary.setdefault(v, len(vocabulary)) for v in column), dtype=np.int64, count=len(column))


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
