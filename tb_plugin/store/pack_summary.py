"""A rank's summary (``views/distributed/rank_summary.py``) as Parquet files, through pyarrow (``pip install profscope[cluster]``).

One file per table, ``<model>.<table>.parquet`` beside the model of a pack or a cache entry. Every table also has
the columns ``rank`` (as the trace records it, -1 when it does not) and ``worker``, so that a query over many files
(DuckDB's ``read_parquet('logdir/**/.profscope/*/*/model.collectives.parquet')``) needs nothing else; the steps
file's key-value metadata ``profscope`` holds the summary's scalars (JSON). Times are ns in the trace's clock; add
``base_time_ns`` for the wall clock.

A folder's summary (``packs.py``): the steps and collectives tables of every pack of a folder, one after the other
in one file per table (``ranks.<table>.parquet``, the same columns), its manifest naming each member's trace, pack
key, scalars and rows. ``write_folder_summary`` is ``profscope ingest``'s reduce step; ``summaries_from_folders``
gives each rank's summary as slices of those columns (no copy: the cross-rank answers join them back without one),
so a run of a thousand ranks costs one read, not two thousand.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import posixpath
import shutil
import tempfile
from concurrent import futures
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from ..model.trace_model import TraceModel
from ..views import answers
from ..views.distributed.rank_summary import Coded, RankSummary, Table
from . import packs
from .packs import FOLDER_TABLES, MODEL, SUMMARY_TABLES, FolderSummaryRef, PackError, PackRef, PackRoot

logger = logging.getLogger(__name__)

_META_KEY = b"profscope"
# Text columns read as dictionaries (many rows, few distinct texts).
_CODED = {"collectives": ("name", "process_group")}
_CODED_NAMES = frozenset(name for names in _CODED.values() for name in names)
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

    rank = summary.recorded_rank if summary.recorded_rank is not None else -1
    written = []
    for name in SUMMARY_TABLES:
        table: Table = getattr(summary, name)
        count = len(table)
        arrow = _arrow_table(table, np.full(count, rank, dtype=np.int64),
                             pa.array([summary.worker] * count, type=pa.string()))
        if name == "steps":
            arrow = arrow.replace_schema_metadata({_META_KEY: json.dumps(summary.meta()).encode("utf-8")})
        path = summary_paths(model_path)[name]
        _write_parquet(arrow, path)
        written.append(path)
    return written


def _arrow_table(table: Table, ranks: np.ndarray, workers: Any) -> Any:
    """A summary table as an Arrow table, after its ``rank`` and ``worker`` columns."""
    import pyarrow as pa

    columns: dict[str, Any] = {"rank": pa.array(ranks), "worker": workers}
    for key, values in table.texts.items():
        if isinstance(values, Coded):  # a dictionary column (DuckDB and pandas read it as text)
            columns[key] = _dictionary(values)
        else:
            columns[key] = pa.array(values, type=pa.string())
    for key, values in table.numbers.items():
        columns[key] = pa.array(np.asarray(values))
    return pa.table(columns)


def _dictionary(values: Coded) -> Any:
    import pyarrow as pa

    return pa.DictionaryArray.from_arrays(pa.array(values.codes.astype(np.int32)),
                                          pa.array(values.values, type=pa.string()))


def _write_parquet(arrow: Any, path: str) -> None:
    import pyarrow.parquet as pq

    temporary = f"{path}.tmp-{os.getpid()}"
    # Snappy, no statistics: a small file reads in ~1 ms (zstd: ~4 ms, its contexts set up per column). One row
    # group: its columns read back as one array each.
    pq.write_table(arrow, temporary, compression="snappy", write_statistics=False,
                   row_group_size=max(1, arrow.num_rows))
    os.replace(temporary, path)


def has_summary(model_path: Optional[str]) -> bool:
    return bool(model_path) and all(os.path.exists(p) for p in summary_paths(model_path or "").values())


def read_summary(model_path: str, tables: tuple[str, ...] = ("steps", "collectives")) -> RankSummary:
    """The summary beside ``model_path`` (only ``tables`` read; the others empty). Raises ValueError or OSError
    for a file that does not read as such a table."""
    paths = summary_paths(model_path)
    return _summary_of_files({name: paths[name] for name in tables})


def _summary_of_files(sources: dict[str, Any]) -> RankSummary:
    """A summary from its tables' files (``sources``: table -> a path or a pyarrow buffer; the others empty)."""
    read: dict[str, Table] = {}
    meta: dict[str, Any] = {}
    for name in SUMMARY_TABLES:
        if name not in sources:
            read[name] = Table({}, {})
            continue
        arrow = _read_parquet(sources[name], _CODED.get(name, ()), os.path.basename(summary_paths(MODEL)[name]))
        if name == "steps":
            meta = _meta_of(arrow)
        read[name] = _table_of(arrow)
    _check(read)
    return _summary(meta, read)


def _read_parquet(source: Any, dictionaries: tuple[str, ...], label: str) -> Any:
    import pyarrow.parquet as pq

    try:
        # Not read_table: it imports pyarrow.dataset and pandas (3 s). Texts as dictionaries: codes, not strings.
        with pq.ParquetFile(source, read_dictionary=dictionaries) as handle:
            return handle.read(use_threads=False)
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors: a damaged file is no summary
        raise ValueError(f"{label} does not read ({type(exc).__name__})") from None


def _meta_of(arrow: Any) -> dict[str, Any]:
    raw = (arrow.schema.metadata or {}).get(_META_KEY)
    if raw is None:
        raise ValueError("the steps table has no summary metadata")
    meta = json.loads(raw)
    if not isinstance(meta, dict):
        raise ValueError("the summary metadata is no object")
    return meta


def _table_of(arrow: Any) -> Table:
    texts: dict[str, Any] = {}
    numbers: dict[str, np.ndarray] = {}
    for column_name, column in zip(arrow.column_names, arrow.columns):
        if column_name in _EXTRA:
            continue
        kind = str(column.type)
        if kind.startswith("dictionary<values=string") and column_name in _CODED_NAMES:
            texts[column_name] = _coded_column(column)
        elif kind.startswith(("string", "large_string", "dictionary")):
            texts[column_name] = [str(v) for v in column.to_pylist()]
        else:
            numbers[column_name] = _numpy(column)
    return Table(texts, numbers)


def _coded_column(column: Any) -> Coded:
    """A dictionary column as ``Coded`` (its chunks' dictionaries merged: a file of several row groups)."""
    if column.null_count:
        raise ValueError("a summary column holds nulls")
    if column.num_chunks == 1:
        chunk = column.chunk(0)
        return Coded(_numpy(chunk.indices).astype(np.int32), chunk.dictionary.to_pylist())
    vocabulary: dict[str, int] = {}
    parts = [np.zeros(0, np.int32)]
    for chunk in column.chunks:
        lookup = np.fromiter((vocabulary.setdefault(str(v), len(vocabulary)) for v in chunk.dictionary.to_pylist()),
                             dtype=np.int32)
        parts.append(lookup[_numpy(chunk.indices)] if len(chunk) else np.zeros(0, np.int32))
    return Coded(np.concatenate(parts), list(vocabulary))


def _summary(meta: dict[str, Any], tables: dict[str, Table]) -> RankSummary:
    return RankSummary(
        worker=str(meta.get("worker", "")), span=str(meta.get("span", "")),
        recorded_rank=meta.get("recorded_rank") if _is_int(meta.get("recorded_rank")) else None,
        world_size=meta.get("world_size"), backend=meta.get("backend"),
        is_distributed=bool(meta.get("is_distributed")),
        base_time_ns=meta.get("base_time_ns") if _is_int(meta.get("base_time_ns")) else None,
        **{name: tables.get(name, Table({}, {})) for name in SUMMARY_TABLES})


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_FLOATS = {"float": "float32", "double": "float64", "halffloat": "float16"}


def _numpy(column: Any) -> np.ndarray:
    """A numeric column as numpy, without pyarrow's ``to_numpy`` (which imports pandas: 1.5 s and 100 MB)."""
    import pyarrow as pa

    array = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if array.null_count:
        raise ValueError("a summary column holds nulls")
    if pa.types.is_boolean(array.type):  # bits, least significant first
        bits = np.frombuffer(array.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little")[array.offset:array.offset + len(array)].astype(bool)
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


def summary_of_rank(worker: str, span: str, model: TraceModel, read_files: bool = True) -> RankSummary:
    """A rank's summary for the cross-rank answers: its Parquet tables where they lie beside its model (a pack, or
    a cache entry copied from one) and ``read_files`` (False for a pack made by other views), else made from the
    model. Named as this server names the worker and span."""

    def compute() -> RankSummary:
        path = model.cache_path
        if read_files and path and available() and has_summary(path):
            try:
                return dataclasses.replace(read_summary(path), worker=worker, span=span)
            except (ValueError, OSError) as exc:
                logger.warning("profscope: the summary beside %s does not read (%s); made from the model", path, exc)
        return answers.rank_summary(worker, span, model)

    return model.memo(("summary_of_rank", worker, span, read_files), compute)


# --- a folder's summary ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FolderSummary:
    """A folder's summary as read: its members (manifest entries, in row order), the tables of all of them, and
    where each member's rows start in each table."""

    members: list[dict[str, Any]]
    tables: dict[str, Table]
    starts: dict[str, list[int]]  # per table: member i's rows are starts[i]:starts[i + 1]
    index: dict[tuple[str, str], int]  # (trace name, pack key) -> member

    def summary(self, member: int, worker: str, span: str) -> RankSummary:
        """Member ``member``'s summary, named as this server names its worker and span; its columns are slices of
        the folder's (views: they join back without a copy, ``rank_summary.joined``)."""
        tables = {}
        for name, table in self.tables.items():
            a, b = self.starts[name][member], self.starts[name][member + 1]
            tables[name] = Table({key: _rows(values, a, b) for key, values in table.texts.items()},
                                 {key: values[a:b] for key, values in table.numbers.items()})
        return dataclasses.replace(_summary(self.members[member]["meta"], tables), worker=worker, span=span)


def _rows(values: Any, a: int, b: int) -> Any:
    return Coded(values.codes[a:b], values.values) if isinstance(values, Coded) else values[a:b]


def _member_source(root: PackRoot, location: str) -> Any:
    """What pyarrow reads a pack's file from: its path where local, else its bytes."""
    if not root.remote:
        return location
    import pyarrow as pa

    data = root.read_bytes(location)
    if data is None:
        raise ValueError(f"{posixpath.basename(location)} is missing")
    return pa.py_buffer(data)


def pack_summary(root: PackRoot, ref: PackRef) -> RankSummary:
    """A pack's own summary (steps and collectives) as its ingest named it. Raises ValueError or OSError."""
    return _summary_of_files({table: _member_source(root, ref.location(packs.summary_name(table)))
                              for table in FOLDER_TABLES})


def write_folder_summary(root: PackRoot, folder: str, refs: Sequence[PackRef], threads: int = 8) -> Optional[str]:
    """``profscope ingest``'s reduce step: the steps and collectives of the current packs ``refs`` (traces of
    ``folder``, logdir-relative) in one file per table, published as the folder's summary. Nothing is written when
    the folder's summary holds these packs at their keys already. A pack whose summary does not read (none was
    written: no pyarrow where it was packed), or whose columns differ from the first one's, is left out (a server
    reads it from its pack). Returns the summary's folder, or None when nothing was written."""
    refs = [r for r in refs if isinstance(r.manifest.get("summary"), dict) and r.views_current]
    if not refs:
        return None
    existing = root.find_folder_summary(folder)
    held = [(m["name"], m["key"]) for m in existing.members] if existing is not None else None
    if held == [(posixpath.basename(r.relative), r.key) for r in refs]:
        return None
    with futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="profscope-reduce") as pool:
        read = list(pool.map(lambda ref: _try(pack_summary, root, ref), refs))
    chosen = [(ref, summary) for ref, summary in zip(refs, read) if summary is not None]
    if not chosen:
        return None
    shape = _columns(chosen[0][1])
    chosen = [(ref, summary) for ref, summary in chosen if _columns(summary) == shape]
    members = [(posixpath.basename(ref.relative), ref.key, summary) for ref, summary in chosen]
    if held == [(name, key) for name, key, _ in members]:
        return None
    staged = tempfile.mkdtemp(prefix="profscope-folder-summary-")
    try:
        manifest = write_folder_files(members, staged)
        relative = posixpath.join(folder, packs.FOLDER_SUMMARY) if folder not in ("", ".") else packs.FOLDER_SUMMARY
        return root.publish(relative, manifest["key"], staged, manifest, packs.FOLDER_MANIFEST)
    finally:
        shutil.rmtree(staged, ignore_errors=True)


def write_folder_files(members: Sequence[tuple[str, str, RankSummary]], staged: str) -> dict[str, Any]:
    """The files of a folder's summary, in the local folder ``staged``: ``members`` (trace name, pack key and
    summary of each pack, in row order). Returns its manifest (to be written last)."""
    summaries = [summary for _, _, summary in members]
    for table in FOLDER_TABLES:
        _write_parquet(_joined_table(summaries, table), os.path.join(staged, packs.folder_summary_name(table)))
    return packs.make_folder_manifest(
        [{"name": name, "key": key, "meta": summary.meta(),
          **{table: len(getattr(summary, table)) for table in FOLDER_TABLES}} for name, key, summary in members],
        staged)


def _try(read: Any, root: PackRoot, ref: PackRef) -> Optional[RankSummary]:
    try:
        return read(root, ref)  # type: ignore[no-any-return]
    except (ValueError, OSError) as exc:
        logger.warning("profscope: the summary of %s does not read (%s); left out of its folder's", ref.relative, exc)
        return None


def _columns(summary: RankSummary) -> list[tuple[str, list[str], list[tuple[str, str]]]]:
    return [(table, sorted(getattr(summary, table).texts),
             sorted((k, v.dtype.str) for k, v in getattr(summary, table).numbers.items())) for table in FOLDER_TABLES]


def _joined_table(summaries: Sequence[RankSummary], name: str) -> Any:
    """One table of every summary, one after the other, as Arrow (``rank`` and ``worker`` per row)."""
    from ..views.distributed.rank_summary import codes_of

    tables: list[Table] = [getattr(s, name) for s in summaries]
    counts = np.asarray([len(t) for t in tables], dtype=np.int64)
    ranks = np.repeat(np.asarray([s.recorded_rank if s.recorded_rank is not None else -1 for s in summaries],
                                 dtype=np.int64), counts)
    worker_names: dict[str, int] = {}
    worker_codes = np.repeat(np.asarray([worker_names.setdefault(s.worker, len(worker_names)) for s in summaries],
                                        dtype=np.int32), counts)
    texts: dict[str, Any] = {}
    for key, first in tables[0].texts.items():
        if isinstance(first, Coded):
            vocabulary: dict[str, int] = {}
            codes = np.concatenate([codes_of(t.texts[key], vocabulary) for t in tables]).astype(np.int32)
            texts[key] = Coded(codes, list(vocabulary))
        else:
            texts[key] = [text for t in tables for text in t.texts[key]]
    numbers = {key: np.concatenate([t.numbers[key] for t in tables]) for key in tables[0].numbers}
    return _arrow_table(Table(texts, numbers), ranks, _dictionary(Coded(worker_codes, list(worker_names))))


def read_folder_summary(root: PackRoot, ref: FolderSummaryRef) -> FolderSummary:
    """A folder's summary, each file checked against its manifest. Raises ValueError (or OSError)."""
    import pyarrow as pa

    tables: dict[str, Table] = {}
    for table in FOLDER_TABLES:
        name = packs.folder_summary_name(table)
        data = root.read_bytes(ref.location(name))
        if data is None or not packs.matches(data, ref.manifest["files"][name]):
            raise ValueError(f"{name} does not match its manifest")
        tables[table] = _table_of(_read_parquet(pa.py_buffer(data), _CODED.get(table, ()), name))
    _check(tables)
    members = ref.members
    starts = {}
    for table in FOLDER_TABLES:
        starts[table] = np.concatenate([[0], np.cumsum([m[table] for m in members], dtype=np.int64)]).tolist()
        if starts[table][-1] != len(tables[table]):
            raise ValueError(f"the {table} table's rows are not its members'")
    index = {(m["name"], m["key"]): i for i, m in enumerate(members)}
    return FolderSummary(members, tables, starts, index)


def summaries_from_folders(root: PackRoot, refs: Sequence[Optional[PackRef]],
                           names: Sequence[tuple[str, str]]) -> list[Optional[RankSummary]]:
    """Each pack's summary from its folder's summary, where that holds the pack at its current key (one read per
    folder); None for the others (no pack, no folder summary, another key, a damaged one). ``names``: the worker
    and span this server names each by."""
    out: list[Optional[RankSummary]] = [None] * len(refs)
    if not available():
        return out
    by_folder: dict[str, list[int]] = {}
    for i, ref in enumerate(refs):
        if ref is not None:
            by_folder.setdefault(posixpath.dirname(ref.relative), []).append(i)
    for folder, indices in by_folder.items():
        found = root.find_folder_summary(folder)
        if found is None:
            continue
        try:
            combined = read_folder_summary(root, found)
        except (ValueError, OSError, PackError) as exc:
            logger.warning("profscope: the summary of the packs in %s is not used (%s); each rank's is read",
                           found.folder, exc)
            continue
        for i in indices:
            ref = refs[i]
            assert ref is not None
            member = combined.index.get((posixpath.basename(ref.relative), ref.key))
            if member is not None:
                out[i] = combined.summary(member, *names[i])
    return out
