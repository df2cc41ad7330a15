"""A rank's summary (``views/distributed/rank_summary.py``) as Parquet files, through pyarrow (``pip install profscope[cluster]``).

One file per table, ``<model>.<table>.parquet`` beside the model of a pack or a cache entry. Every table also has
the columns ``rank`` (as the trace records it, -1 when it does not) and ``worker``, so that a query over many files
(DuckDB's ``read_parquet('logdir/**/.profscope/*/*/model.collectives.parquet')``) needs nothing else; the steps
file's key-value metadata ``profscope`` holds the summary's scalars (JSON). Times are ns in the trace's clock; add
``base_time_ns`` for the wall clock.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from typing import Any, Optional

import numpy as np

from ..model.trace_model import TraceModel
from ..views import answers
from ..views.distributed.rank_summary import Coded, RankSummary, Table
from .packs import SUMMARY_TABLES

logger = logging.getLogger(__name__)

_META_KEY = b"profscope"
# Text columns read as dictionaries (many rows, few distinct texts).
_CODED = {"collectives": ("name", "process_group")}
_EXTRA = ("rank", "worker")


def available() -> bool:
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def summary_paths(model_path: str) -> dict[str, str]:
    return {table: f"{model_path}.{table}.parquet" for table in SUMMARY_TABLES}


def write_summary(summary: RankSummary, model_path: str) -> list[str]:
    """Write the summary's tables beside ``model_path``; returns the files written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rank = summary.recorded_rank if summary.recorded_rank is not None else -1
    written = []
    for name in SUMMARY_TABLES:
        table: Table = getattr(summary, name)
        count = len(table)
        columns: dict[str, Any] = {"rank": pa.array(np.full(count, rank, dtype=np.int64)),
                                   "worker": pa.array([summary.worker] * count, type=pa.string())}
        for key, values in table.texts.items():
            if isinstance(values, Coded):  # a dictionary column (DuckDB and pandas read it as text)
                columns[key] = pa.DictionaryArray.from_arrays(pa.array(values.codes.astype(np.int32)),
                                                              pa.array(values.values, type=pa.string()))
            else:
                columns[key] = pa.array(values, type=pa.string())
        for key, values in table.numbers.items():
            columns[key] = pa.array(np.asarray(values))
        arrow = pa.table(columns)
        if name == "steps":
            arrow = arrow.replace_schema_metadata({_META_KEY: json.dumps(summary.meta()).encode("utf-8")})
        path = summary_paths(model_path)[name]
        temporary = f"{path}.tmp-{os.getpid()}"
        # Snappy, no statistics: a small file reads in ~1 ms (zstd: ~4 ms, its contexts set up per column).
        pq.write_table(arrow, temporary, compression="snappy", write_statistics=False)
        os.replace(temporary, path)
        written.append(path)
    return written


def has_summary(model_path: Optional[str]) -> bool:
    return bool(model_path) and all(os.path.exists(p) for p in summary_paths(model_path or "").values())


def read_summary(model_path: str, tables: tuple[str, ...] = ("steps", "collectives")) -> RankSummary:
    """The summary beside ``model_path`` (only ``tables`` read; the others empty). Raises ValueError or OSError
    for a file that does not read as such a table."""
    import pyarrow.parquet as pq

    paths = summary_paths(model_path)
    read: dict[str, Table] = {}
    meta: dict[str, Any] = {}
    for name in SUMMARY_TABLES:
        if name not in tables:
            read[name] = Table({}, {})
            continue
        try:
            # Not read_table: it imports pyarrow.dataset and pandas (3 s). Texts as dictionaries: codes, not strings.
            with pq.ParquetFile(paths[name], read_dictionary=_CODED.get(name, ())) as handle:
                arrow = handle.read(use_threads=False)
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors: a damaged file is no summary
            raise ValueError(f"{os.path.basename(paths[name])} does not read ({type(exc).__name__})") from None
        if name == "steps":
            raw = (arrow.schema.metadata or {}).get(_META_KEY)
            if raw is None:
                raise ValueError("the steps table has no summary metadata")
            meta = json.loads(raw)
            if not isinstance(meta, dict):
                raise ValueError("the summary metadata is no object")
        texts: dict[str, list[str]] = {}
        numbers: dict[str, np.ndarray] = {}
        for column_name, column in zip(arrow.column_names, arrow.columns):
            if column_name in _EXTRA:
                continue
            if str(column.type).startswith("dictionary<values=string") and column.num_chunks == 1:
                chunk = column.chunk(0)
                if chunk.null_count:
                    raise ValueError("a summary column holds nulls")
                texts[column_name] = Coded(_numpy(chunk.indices).astype(np.int32), chunk.dictionary.to_pylist())
            elif str(column.type).startswith(("string", "large_string", "dictionary")):
                texts[column_name] = [str(v) for v in column.to_pylist()]
            else:
                numbers[column_name] = _numpy(column)
        read[name] = Table(texts, numbers)
    _check(read)
    return RankSummary(
        worker=str(meta.get("worker", "")), span=str(meta.get("span", "")),
        recorded_rank=meta.get("recorded_rank") if isinstance(meta.get("recorded_rank"), int) else None,
        world_size=meta.get("world_size"), backend=meta.get("backend"),
        is_distributed=bool(meta.get("is_distributed")),
        base_time_ns=meta.get("base_time_ns") if isinstance(meta.get("base_time_ns"), int) else None,
        **read)


_FLOATS = {"float": "float32", "double": "float64", "halffloat": "float16"}


def _numpy(column: Any) -> np.ndarray:
    """A numeric column as numpy, without pyarrow's ``to_numpy`` (which imports pandas: 1.5 s and 100 MB)."""
    import pyarrow as pa

    array = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if array.null_count:
        raise ValueError("a summary column holds nulls")
    if pa.types.is_boolean(array.type):
        return np.asarray(array.to_pylist(), dtype=bool)
    if not (pa.types.is_integer(array.type) or pa.types.is_floating(array.type)):
        raise ValueError(f"a summary column of type {array.type}")
    dtype = np.dtype(_FLOATS.get(str(array.type), str(array.type)))
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


_REQUIRED = {
    "steps": (("name",), ("start", "end", "duration", "computation", "communication", "overlap", "other")),
    "collectives": (("name", "process_group"), ("seq", "seq_recorded", "group_size", "in_bytes", "out_bytes", "start",
                                                "end", "stream")),
}


def _check(tables: dict[str, Table]) -> None:
    """A summary from a logdir is anyone's file: the columns the answers read must be there, of one length."""
    for name, (texts, numbers) in _REQUIRED.items():
        table = tables[name]
        if not table.texts and not table.numbers:
            continue  # not read
        if not all(t in table.texts for t in texts) or not all(n in table.numbers for n in numbers):
            raise ValueError(f"the {name} table lacks columns")
        lengths = {len(v) for v in table.texts.values()} | {len(v) for v in table.numbers.values()}
        if len(lengths) > 1:
            raise ValueError(f"the {name} table's columns differ in length")
        for key in numbers:
            if table.numbers[key].dtype.kind not in "iub":
                raise ValueError(f"the {name} table's {key} column is not integer")


def summary_of_rank(worker: str, span: str, model: TraceModel) -> RankSummary:
    """A rank's summary for the cross-rank answers: its Parquet tables where they lie beside its model (a pack, or
    a cache entry copied from one), else made from the model. Named as this server names the worker and span."""

    def compute() -> RankSummary:
        path = model.cache_path
        if path and available() and has_summary(path):
            try:
                return dataclasses.replace(read_summary(path), worker=worker, span=span)
            except (ValueError, OSError) as exc:
                logger.warning("profscope: the summary beside %s does not read (%s); made from the model", path, exc)
        return answers.rank_summary(worker, span, model)

    return model.memo(("summary_of_rank", worker, span), compute)
