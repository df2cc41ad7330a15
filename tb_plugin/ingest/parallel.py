"""Decoding one large trace with two processes: the parser's own and a forked helper.

Decoding and turning events into columns is CPU-bound Python holding the GIL, so a second
core only helps from another process. The document is split at a guessed event boundary
near its middle (``kineto._guessed_chunks``); a forked child decodes the second half from
the same buffer (shared copy-on-write, nothing is copied) and hands its columns back; its
string ids and event ids are then renumbered into the first half's.

The child's column arrays (~60 bytes per event) go through a file in shared memory
(``/dev/shm`` where it is writable) that the parent reads: pickling them through the
pipe cost ~0.3 s of serial time per 120 MB; one read of the file costs a fraction of that.
Only the small rest (strings, metadata) is pickled. Where the file cannot be written (a small ``/dev/shm``), the arrays go through the pipe.

Only used where forking is safe (the parser worker processes and the CLI, which run no
other threads); any problem falls back to the one-process path.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from typing import Any, Callable, Optional

import numpy as np

from . import begin_end, kineto
from .interning import StringTable
from .kineto import RawColumns, TraceFormatError
from .reader import TraceBuffer

# Below this many bytes of events a second process costs more than it saves.
MIN_PARALLEL_BYTES = 64 << 20
# Columns holding ids into the trace's string table, per table.
STRING_COLUMNS = {
    "slices": ("name", "cat", "pid", "tid", "input_dims", "input_type", "call_stack", "collective", "dtype",
               "grid", "block"),
    "instants": ("name", "cat", "pid", "tid"),
    "flows": ("cat", "pid", "tid"),
    "counters": ("name", "series", "pid"),
    begin_end.TABLE: begin_end.STRING_COLUMNS,
}


def read_kineto_parallel(data: TraceBuffer, progress: Optional[Callable[[float], None]] = None) -> RawColumns:
    """Like ``kineto.read_kineto``, decoding the second half of the events in a forked process."""
    if (os.cpu_count() or 1) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return kineto.read_kineto(data, progress)
    start, end, metadata = kineto._events_region(data)
    if end - start < MIN_PARALLEL_BYTES:
        return kineto.read_kineto(data, progress)
    chunks = kineto._guessed_chunks(data, start, end)
    sizes = np.cumsum([b - a for a, b in chunks])
    split = int(np.searchsorted(sizes, sizes[-1] / 2))
    if split <= 0 or split >= len(chunks):
        return kineto.read_kineto(data, progress)
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    spill_path = _spill_path()
    helper = context.Process(target=_decode_in_child, args=(data, chunks[split:], sender, spill_path), daemon=True)
    helper.start()
    sender.close()
    report = (lambda f: progress(0.95 * f)) if progress else None
    try:
        mine = kineto._read_chunks(data, chunks[:split], metadata, report, guessed=True)
        status, payload = receiver.recv()
        if status == "ok" and isinstance(payload, RawColumns) and not payload.parts and spill_path:
            payload.parts = _unspill(spill_path)
    except (kineto._BadSplit, EOFError, OSError, ValueError):
        status, payload = "retry", None
    finally:
        helper.join(timeout=5)
        if helper.is_alive():
            helper.kill()
        receiver.close()
        if spill_path:
            _remove(spill_path)
    if status == "error":
        raise TraceFormatError(payload)
    if status != "ok":
        return kineto.read_kineto(data, progress)  # a wrong guess or a lost helper: the exact path decides
    merged = merge(mine, payload)
    begin_end.pair(merged)  # after the merge: a B/E pair may straddle the two halves
    if progress:
        progress(1.0)
    return merged


def _spill_path() -> Optional[str]:
    """A fresh file name for the child's arrays, in shared memory when possible (None: use the pipe)."""
    for folder in ("/dev/shm", tempfile.gettempdir()):
        if os.path.isdir(folder) and os.access(folder, os.W_OK):
            try:
                fd, path = tempfile.mkstemp(prefix="profscope-columns-", dir=folder)
            except OSError:
                continue
            os.close(fd)
            return path
    return None


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _spill(columns: RawColumns, path: str) -> bool:
    """Move ``columns``' arrays into the file at ``path``; False (columns untouched) if it cannot be written."""
    from ..cache import write_arrays  # cache imports ingest: imported here, in the child only

    arrays = {f"{table}/{key}/{i}": part
              for table, store in columns.parts.items() for key, parts in store.items() for i, part in enumerate(parts)}
    try:
        write_arrays(path, {}, arrays)
    except OSError:  # e.g. a full /dev/shm
        return False
    columns.parts = {}
    return True


def _unspill(path: str) -> dict[str, dict[str, list[np.ndarray]]]:
    """The arrays ``_spill`` wrote, read in one go (mapping them cost more: page faults of 4 KB each)."""
    from ..cache import read_arrays

    _header, arrays = read_arrays(path, in_memory=True)
    parts: dict[str, dict[str, list[np.ndarray]]] = {}
    for name, array in arrays.items():  # in the written order: parts keep their chunk order
        table, key, _index = name.split("/")
        parts.setdefault(table, {}).setdefault(key, []).append(array)
    return parts


def _decode_in_child(data: TraceBuffer, chunks: list[tuple[int, int]], sender: Any, spill_path: Optional[str]) -> None:
    try:
        columns = kineto._read_chunks(data, chunks, {}, None, guessed=True)
        if spill_path:
            _spill(columns, spill_path)
        sender.send(("ok", columns))
    except kineto._BadSplit:
        sender.send(("retry", None))
    except TraceFormatError as exc:
        sender.send(("error", str(exc)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which falls back
        sender.send(("retry", repr(exc)))
    finally:
        sender.close()
        os._exit(0)  # leave without running the parent's exit handlers in the forked copy


def merge(first: RawColumns, second: RawColumns) -> RawColumns:
    """Append ``second`` (events that follow ``first`` in the file) to ``first``, renumbering its ids."""
    remap = np.fromiter(map(first.strings.__getitem__, second.strings.strings), dtype=np.int64,
                        count=len(second.strings.strings))
    flow_strings = StringTable()
    for text in first.flow_id_strings:
        flow_strings[text]
    flow_remap = np.fromiter(map(flow_strings.__getitem__, second.flow_id_strings), dtype=np.int64,
                             count=len(second.flow_id_strings))
    offset = first.num_events
    for table, columns in second.parts.items():
        string_columns = STRING_COLUMNS.get(table, ())
        for key, parts in columns.items():
            store = first.parts.setdefault(table, {}).setdefault(key, [])
            for values in parts:
                if key in string_columns:
                    values = np.where(values >= 0, remap[np.maximum(values, 0)], values).astype(values.dtype)
                elif key == "event_id":
                    values = values + offset
                elif table == "flows" and key == "flow_id" and len(flow_remap):
                    string_id = values <= -2
                    values = values.copy()
                    values[string_id] = -2 - flow_remap[-2 - values[string_id]]
                store.append(values)
    first.meta_events.extend((kind, int(remap[pid]), int(remap[tid]), args)
                             for kind, pid, tid, args in second.meta_events)
    first.flow_id_strings = list(flow_strings.strings)
    first.num_events += second.num_events
    first.stats = _merge_stats(first.stats, second.stats)
    return first


def _merge_stats(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    out["events"] = a.get("events", 0) + b.get("events", 0)
    for key in ("phases", "categories", "unknown_categories", "skipped_phases"):
        merged = dict(a.get(key, {}))
        for name, count in b.get(key, {}).items():
            merged[name] = merged.get(name, 0) + count
        out[key] = merged
    out["chunking"] = "guessed, two processes"
    if "repaired_text" in b:  # values repaired or dropped in the helper's half (kineto._decode_one_by_one)
        out["repaired_text"] = a.get("repaired_text", 0) + b["repaired_text"]
    problems = [stats["first_problem_byte"] for stats in (a, b) if "first_problem_byte" in stats]
    if problems:
        out["first_problem_byte"] = min(problems)
    return out
