"""Decoding one large trace with two processes: the parser's own and a forked helper.

Decoding and turning events into columns is CPU-bound Python holding the GIL, so a second
core only helps from another process. The parser process reads the document as a stream
(``chunks.EventChunks``); once it has seen ``MIN_PARALLEL_BYTES`` it forks a helper, and from
then on every chunk goes to the helper while one of the ``SLOTS`` slots of a shared-memory
ring is free (a copy of the chunk's bytes), else the parser decodes it itself. The helper is
kept busy, and the parser, which also inflates and cuts the stream, decodes what is left:
the two share the work whatever their speeds. Each numbers its own events; the chunks say
where each part came from, so the merge puts every column back in file order and renumbers
event and string ids. B/E pairs are made after the merge (a pair may straddle the two).

The helper's column arrays (~115 bytes per event) come back through files in shared memory
(``/dev/shm`` where it is writable), one per column, which the parser maps: a column's pages
are freed as soon as the model build has copied it. The helper appends its chunks' arrays to
them every ``MOVE_EVENTS`` events (``_ColumnFiles``), while the parser is still decoding: written
at the end, the copy kept the parser waiting (10 M events: 1.8 s). Pickling them through the pipe
cost ~0.3 s of serial time per 120 MB. Where no file can be written (a small ``/dev/shm``), the
arrays go through the pipe.

A chunk that does not decode (a wrong guess of a cut: its start may be in the middle of an
event, which only the one-process path can repair) or a lost helper makes the whole decode
start again in one process, from a fresh stream. Only used where forking is safe (the parser
worker processes and the CLI, which run no other threads).
"""

from __future__ import annotations

import functools
import mmap
import multiprocessing
import os
import tempfile
from typing import Any, Callable, Optional

import msgspec
import numpy as np

from ...model.interning import NO_STRING, StringTable
from ...model.raw_columns import RawColumns, constant_part, part_constant
from . import begin_end, decode
from .chunk_reader import ChunkReader
from .chunks import Chunk, EventChunks
from .decode import TraceFormatError

# Until this many bytes of events were seen, the parser decodes alone (a small trace needs no helper).
MIN_PARALLEL_BYTES = 16 << 20
# Chunks the helper may have queued, and the room of each (a larger chunk is decoded by the parser).
SLOTS = 8
SLOT_BYTES = 4 << 20
# The helper moves its parts into its column files once it has decoded this many events since the last move.
MOVE_EVENTS = 20_000
# Columns holding ids into the trace's string table, per table.
STRING_COLUMNS = {
    "slices": ("name", "cat", "pid", "tid", "input_dims", "input_type", "concrete_inputs", "call_stack", "collective",
               "dtype", "process_group", "grid", "block"),
    "instants": ("name", "cat", "pid", "tid"),
    "flows": ("cat", "pid", "tid"),
    "counters": ("name", "series", "pid"),
    begin_end.TABLE: begin_end.STRING_COLUMNS,
}
# Tables whose "event_id" column numbers events in file order.
_EVENT_ID = "event_id"


class _StartAgain(Exception):
    """The two-process decode cannot finish: decode in one process instead."""


def read_kineto_parallel(open_chunks: Callable[[], EventChunks]) -> RawColumns:
    """Like ``decode.decode_events(open_chunks())``, with a forked helper decoding chunks too.

    ``open_chunks`` opens the document afresh each time it is called (once, or twice when the
    two-process decode has to start again in one process).
    """
    if (os.cpu_count() or 1) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return decode.decode_events(open_chunks())
    try:
        return _decode_with_helper(open_chunks())
    except _StartAgain:
        return decode.decode_events(open_chunks())


class _Helper:
    """The forked decoding process, its request and reply pipes, and the shared ring of chunk slots."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("fork")
        self.ring = mmap.mmap(-1, SLOTS * SLOT_BYTES)  # anonymous and shared: the child sees the same pages
        self.free = list(range(SLOTS))
        request_reader, self.requests = context.Pipe(duplex=False)
        self.replies, reply_writer = context.Pipe(duplex=False)
        self.spill_prefix = _spill_prefix()
        self.process = context.Process(
            target=_helper_main, daemon=True,
            args=(self.ring, request_reader, reply_writer, self.spill_prefix, (self.requests, self.replies)))
        self.process.start()
        request_reader.close()
        reply_writer.close()

    def give(self, buffer: bytearray, chunk: Chunk) -> bool:
        """Hand the chunk (its bytes in ``buffer``) to the helper if a slot is free."""
        start, end = chunk.start, chunk.end
        while self.replies.poll():  # slots of chunks done since
            self._reply()
        length = end - start + 2
        if not self.free or length > SLOT_BYTES:
            return False
        slot = self.free.pop()
        offset = slot * SLOT_BYTES
        self.ring[offset : offset + length] = memoryview(buffer)[start - 1 : end + 1]
        self.ring[offset] = 0x5B  # [
        self.ring[offset + length - 1] = 0x5D  # ]
        self.requests.send((chunk.index, offset, length, chunk.position))
        return True

    def _reply(self) -> tuple[Any, ...]:
        """The helper's next reply: a slot done (freed here) or its final columns; anything else starts again."""
        try:
            reply = self.replies.recv()
        except (EOFError, OSError) as exc:
            raise _StartAgain() from exc
        if reply[0] == "done":
            self.free.append(reply[1])
        elif reply[0] != "ok":  # "bad" (a chunk that does not decode) or "error"
            raise _StartAgain()
        return reply

    def drain(self) -> None:
        """Wait until every chunk handed out was decoded (raises _StartAgain if one did not)."""
        while len(self.free) < SLOTS:
            self._reply()

    def finish(self) -> RawColumns:
        self.requests.send(None)
        while (reply := self._reply())[0] != "ok":
            pass
        _ok, columns, layout = reply
        _read_moved(columns, layout)
        return columns

    def close(self, abort: bool) -> None:
        if abort:  # it may be in the middle of a chunk: no need to wait for it
            self.process.kill()
        for pipe in (self.requests, self.replies):
            pipe.close()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        if self.spill_prefix:
            _remove_spilled(self.spill_prefix)
        self.ring.close()


def _decode_with_helper(chunks: EventChunks) -> RawColumns:
    out = decode.new_columns()
    reader = ChunkReader(out)
    helper: Optional[_Helper] = None
    first = 0  # the parser's own numbering of its events
    seen = 0
    finished = False
    try:
        while (chunk := chunks.next_chunk()) is not None:
            seen += chunk.end - chunk.start
            if helper is None and seen > MIN_PARALLEL_BYTES and not chunks.eof:
                helper = _Helper()
            # What is cut once the input has ended (where the events end is a guess too) stays here: it can be repaired.
            if helper is not None and not chunks.eof and helper.give(chunks.buffer, chunk):
                continue
            result = decode.decode_in_window(reader, chunks, chunk, first)
            if isinstance(result, Exception):
                if helper is not None:  # once every chunk handed out decoded, this one's start is known good
                    helper.drain()
                chunk = chunks.exact_chunk()
                result = decode.decode_in_window(reader, chunks, chunk, first)
                if isinstance(result, Exception):
                    raise decode.format_error(result, chunk.position) from result
            first += result
        decode.finish_columns(out, reader, chunks, "exact" if chunks.exact_cuts else "guessed")
        if helper is None:
            begin_end.pair(out)
            return out
        theirs = helper.finish()
        finished = True
    finally:
        if helper is not None:
            helper.close(abort=not finished)
    merged = merge(out, theirs)
    merged.stats["chunking"] += ", two processes"
    begin_end.pair(merged)  # after the merge: a B/E pair may straddle the two processes' chunks
    return merged


def _helper_main(ring: mmap.mmap, requests: Any, replies: Any, spill_prefix: Optional[str],
                 parent_ends: tuple[Any, Any]) -> None:
    for end in parent_ends:  # the parser's ends of the pipes, copied by fork: closed, so that its exit is seen
        end.close()
    try:
        out = decode.new_columns()
        reader = ChunkReader(out)
        files = _ColumnFiles(spill_prefix) if spill_prefix else None
        first = 0
        moved = 0
        while (request := requests.recv()) is not None:
            index, offset, length, position = request
            try:
                first += decode.decode_chunk(reader, memoryview(ring)[offset : offset + length], first, index, position)
            except (msgspec.DecodeError, UnicodeDecodeError):
                replies.send(("bad", index))
                return
            replies.send(("done", offset // SLOT_BYTES))  # the slot is free again before the copy below
            if files is not None and first - moved >= MOVE_EVENTS:
                files.move(out)
                moved = first
        if files is not None:
            files.move(out)
        decode.finish_columns(out, reader, None, "guessed")
        layout = files.close() if files is not None else {}
        replies.send(("ok", out, layout))
    except BaseException as exc:  # noqa: BLE001 - reported to the parser, which decodes alone instead
        try:
            replies.send(("error", repr(exc)))
        except (OSError, ValueError):
            pass
    finally:
        replies.close()
        os._exit(0)  # leave without running the parser's exit handlers in the forked copy


# Shared-memory files for the helper's columns ----------------------------------------------


def _spill_prefix() -> Optional[str]:
    """A fresh name prefix for the helper's column files, in shared memory when possible (None: use the pipe)."""
    for folder in ("/dev/shm", tempfile.gettempdir()):
        if os.path.isdir(folder) and os.access(folder, os.W_OK):
            try:
                fd, path = tempfile.mkstemp(prefix="profscope-columns-", dir=folder)
            except OSError:
                continue
            os.close(fd)
            return path
    return None


def _remove_spilled(prefix: str) -> None:
    folder, name = os.path.split(prefix)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for other in names:
        if other == name or other.startswith(name + "."):
            try:
                os.unlink(os.path.join(folder, other))
            except OSError:
                pass


# Where each moved part of a column lies in its file: (dtype, shape, byte offset, None), by part number; a part holding
# one value throughout (``constant_part``) is not written: (dtype, shape, -1, the value).
_PartPlace = tuple[str, tuple[int, ...], int, Any]
_Layout = dict[tuple[str, str], tuple[str, dict[int, _PartPlace]]]


class _ColumnFiles:
    """The helper's column parts, moved chunk by chunk into one file per column (``prefix.<n>``).

    A moved part is replaced by None in the helper's columns (its memory is freed); ``close`` gives where each
    moved part lies, for ``_read_moved``. Once a write fails (a full ``/dev/shm``), nothing more is moved: the
    parts not moved go through the pipe with the columns.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.files: dict[tuple[str, str], Any] = {}
        self.layout: _Layout = {}
        self.failed = False

    def move(self, columns: RawColumns) -> None:
        if self.failed:
            return
        try:
            for table, store in columns.parts.items():
                for key, parts in store.items():
                    self._move_parts(table, key, parts)
        except OSError:
            self.failed = True

    def _move_parts(self, table: str, key: str, parts: list[Optional[np.ndarray]]) -> None:
        out = self.files.get((table, key))
        if out is None:
            path = f"{self.prefix}.{len(self.files)}"
            out = self.files[(table, key)] = open(path, "wb")
            self.layout[(table, key)] = (path, {})
        placed = self.layout[(table, key)][1]
        for number in range(len(placed), len(parts)):
            part = parts[number]
            if part is None or number in placed:
                continue
            value = part_constant(part)
            if value is not None:  # nothing to write: the value travels in the layout
                placed[number] = (part.dtype.str, part.shape, -1, value.item())
                parts[number] = None
                continue
            array = np.ascontiguousarray(part)
            offset = out.tell()
            padding = -offset % 64  # aligned, as numpy allocates
            if padding:
                out.write(bytes(padding))
            if array.nbytes:
                out.write(memoryview(array).cast("B"))
            placed[number] = (array.dtype.str, array.shape, offset + padding, None)
            parts[number] = None

    def close(self) -> _Layout:
        """Where the moved parts lie (the files are complete once this returns)."""
        for out in self.files.values():
            out.close()  # an OSError here (the last bytes not written) is the helper's error: the parser starts again
        return self.layout


def _read_moved(columns: RawColumns, layout: _Layout) -> None:
    """Put the parts ``_ColumnFiles`` moved back into ``columns``, as arrays over the mapped files; each file is
    removed at once (its pages live while a part of it does, until the model build has copied its column)."""
    for (table, key), (path, placed) in layout.items():
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        finally:
            os.unlink(path)
        parts = columns.parts[table][key]
        for number, (dtype, shape, offset, value) in placed.items():
            count = int(np.prod(shape, dtype=np.int64))
            if value is not None:
                parts[number] = constant_part(value, count, dtype)
            else:
                parts[number] = (np.frombuffer(mapped, dtype=dtype, count=count, offset=offset).reshape(shape)
                                 if mapped is not None and count else np.zeros(shape, dtype=dtype))


# Merging the two processes' columns ----------------------------------------------------------


def _strings_in_file_order(sides: tuple[RawColumns, RawColumns]) -> StringTable:
    """Both processes' strings interned chunk by chunk in file order: the ids one process would have given."""
    table = StringTable()
    starts = sorted((first_string, index, side_index) for side_index, side in enumerate(sides)
                    for index, first_string in side.chunk_strings.items())
    ends = {side_index: len(side.strings.strings) for side_index, side in enumerate(sides)}
    ranges = []
    for first_string, index, side_index in reversed(starts):  # a chunk's strings end where the next one's begin
        ranges.append((index, side_index, first_string, ends[side_index]))
        ends[side_index] = first_string
    for _index, side_index, lo, hi in sorted(ranges):
        for text in sides[side_index].strings.strings[lo:hi]:
            table[text]
    for side in sides:  # strings met outside any chunk (none today): after all others
        for text in side.strings.strings:
            table[text]
    return table


def merge(first: RawColumns, second: RawColumns) -> RawColumns:
    """One process's columns merged into the other's, every part in file order (by chunk), ids renumbered."""
    sides = (first, second)
    strings = _strings_in_file_order(sides)
    remaps = [np.fromiter(map(strings.__getitem__, side.strings.strings), dtype=np.int64, count=len(side.strings.strings))
              for side in sides]
    identity = [bool(np.array_equal(remap, np.arange(len(remap)))) for remap in remaps]
    flow_strings = StringTable()
    for text in first.flow_id_strings:
        flow_strings[text]
    flow_remap = np.fromiter(map(flow_strings.__getitem__, second.flow_id_strings), dtype=np.int64,
                             count=len(second.flow_id_strings))
    # Event numbers in file order: each chunk's first event, after every event of the chunks before it.
    chunk_events = {**first.chunk_events, **second.chunk_events}
    shift: dict[int, int] = {}
    total = 0
    for index in sorted(chunk_events):
        local_first, count = chunk_events[index]
        shift[index] = total - local_first
        total += count

    # Per side and dtype, its string ids → merged ids, with a last entry for NO_STRING (-1): one gather per part.
    string_tables: dict[tuple[int, Any], np.ndarray] = {}

    def merged_strings(side_index: int, values: np.ndarray) -> np.ndarray:
        lookup = string_tables.get((side_index, values.dtype))
        if lookup is None:
            lookup = string_tables[(side_index, values.dtype)] = np.append(remaps[side_index], NO_STRING).astype(
                values.dtype)
        value = part_constant(values)
        if value is not None:  # stays a part in no memory
            return constant_part(lookup[value], len(values), values.dtype)
        return lookup[values]

    def merged_flow_ids(values: np.ndarray) -> np.ndarray:
        string_id = values <= -2
        values = values.copy()
        values[string_id] = -2 - flow_remap[-2 - values[string_id]]
        return values

    parts: dict[str, dict[str, list[np.ndarray]]] = {}
    part_chunks: dict[str, list[int]] = {}
    for table in list(dict.fromkeys([*first.parts, *second.parts])):
        order = sorted((chunk, side_index, position)
                       for side_index, side in enumerate(sides)
                       for position, chunk in enumerate(side.part_chunks.get(table, [])))
        keys = list(dict.fromkeys([*first.parts.get(table, {}), *second.parts.get(table, {})]))
        store = parts[table] = {}
        for key in keys:
            # What each side's parts of this column need (most columns: nothing, the part is taken as it is).
            change: list[Optional[Callable[[np.ndarray], np.ndarray]]] = [None, None]
            if key in STRING_COLUMNS.get(table, ()):
                for side_index in (0, 1):
                    if not identity[side_index]:
                        change[side_index] = functools.partial(merged_strings, side_index)
            elif table == "flows" and key == "flow_id" and len(flow_remap):
                change[1] = merged_flow_ids
            event_ids = key == _EVENT_ID
            column = []
            for chunk, side_index, position in order:
                own = sides[side_index].parts[table][key]
                values = own[position]
                own[position] = None  # type: ignore[call-overload]  # free as we go
                renumber = change[side_index]
                if renumber is not None:
                    values = renumber(values)
                if event_ids and shift[chunk]:
                    values = values + shift[chunk]
                column.append(values)
            store[key] = column
        part_chunks[table] = [chunk for chunk, _side, _position in order]
    meta = sorted(
        (chunk, side_index, i, (kind, int(remaps[side_index][pid]), int(remaps[side_index][tid]), args))
        for side_index, side in enumerate(sides)
        for i, (chunk, (kind, pid, tid, args)) in enumerate(zip(side.meta_chunks, side.meta_events)))
    first.strings = strings
    first.parts, first.part_chunks = parts, part_chunks
    first.meta_events = [event for *_order, event in meta]
    first.meta_chunks = [chunk for chunk, *_rest in meta]
    first.flow_id_strings = list(flow_strings.strings)
    first.chunk_events = {index: (local_first + shift[index], count)
                          for index, (local_first, count) in chunk_events.items()}
    first.chunk_strings = {}
    first.num_events = total
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
    if "repaired_text" in b:  # values repaired or dropped in the helper's half (events._decode_one_by_one)
        out["repaired_text"] = a.get("repaired_text", 0) + b["repaired_text"]
    problems = [stats["first_problem_byte"] for stats in (a, b) if "first_problem_byte" in stats]
    if problems:
        out["first_problem_byte"] = min(problems)
    return out


__all__ = ["MIN_PARALLEL_BYTES", "TraceFormatError", "merge", "read_kineto_parallel"]
