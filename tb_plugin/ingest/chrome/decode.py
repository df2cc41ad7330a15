"""Kineto / Chrome-trace JSON → raw event columns.

What it reads: a JSON object with ``traceEvents`` (or a bare JSON array of events), each
event with ``ph``, ``name``, ``cat``, ``ts``, ``dur``, ``pid``, ``tid`` and ``args``.
Phases X (complete), i/I (instant), C (counter), s/t/f (flow) and M (metadata) are
kept; B/E and async b/e are paired into slices (``begin_end.py``); other phases are counted
in the stats and skipped. ``ts``/``dur`` are µs,
numbers or (MindSpore) decimal strings, which are read exactly (``events.times_ns``). Of ``args``
it keeps the keys the views use (``events.Args``); other keys are ignored. Top-level keys other
than ``traceEvents`` (``deviceProperties``, ``distributedInfo``, ``baseTimeNanoseconds``,
...) are kept as metadata.

How, and why this way: decoding a large trace into Python dicts costs several times the
file size in memory and most of the load time. Instead the document is read as a stream and
cut into chunks of whole events on a moving window (``chunks.py``); each chunk is decoded in
place into typed ``msgspec`` structs (``events.py``) and turned into numpy columns right away
(``chunk_reader.py``), so at most one chunk of the document and of its Python objects is alive
at a time.
"""

from __future__ import annotations

from typing import Callable, Optional, Union

import msgspec
import numpy as np

from ...model.categories import KNOWN_CATEGORIES
from ...model.interning import StringTable
from ...model.raw_columns import RawColumns
from . import begin_end
from .chunk_reader import ChunkReader, read_counters
from .chunks import Chunk, EventChunks, TraceFormatError, open_events
from .events import (
    PHASE_CLASS, PHASE_COUNTER, RAW_LIST, STRICT_DECODER, TEXT_TIMES_DECODER, EventsDecodedAlone, decode_structs,
    get_name, get_pid, with_brackets,
)


def _decode_problem(exc: Exception) -> str:
    """A decoder's complaint in the user's words."""
    if isinstance(exc, UnicodeDecodeError):
        return "text that is not UTF-8"
    return str(exc)


def read_kineto(data: Union[bytes, bytearray, memoryview], progress: Optional[Callable[[float], None]] = None,
                precise_start: bool = False) -> RawColumns:
    """Decode a Chrome-trace JSON document held in memory (already decompressed) into raw columns.

    ``precise_start`` also keeps Paddle's ``args.start_time`` of each slice (column ``relative_start_us``).
    """
    raw = decode_events(open_events(iter([data])), precise_start=precise_start)
    if progress:
        progress(1.0)
    return raw


def decode_events(chunks: EventChunks, precise_start: bool = False) -> RawColumns:
    """Every chunk of a document's events decoded in this process, B/E pairs made (see ``begin_end``).

    A chunk whose guessed cut does not decode is cut again exactly (``EventChunks.exact_chunk``);
    one that still does not decode is invalid JSON.
    """
    out = new_columns()
    reader = ChunkReader(out, precise_start)
    first = 0
    while (chunk := chunks.next_chunk()) is not None:
        error = decode_in_window(reader, chunks, chunk, first)
        if isinstance(error, (msgspec.DecodeError, UnicodeDecodeError)) and chunk.guessed:
            # (Only once the failed decode's frames are gone: they hold the window, which must be able to grow.)
            chunk = chunks.exact_chunk()
            error = decode_in_window(reader, chunks, chunk, first)
        if isinstance(error, Exception):
            raise format_error(error, chunk.position) from error
        first += error
    finish_columns(out, reader, chunks, "exact" if chunks.exact_cuts else "guessed")
    begin_end.pair(out)  # B/E pairs may straddle chunks: paired once the whole document is read
    return out


def new_columns() -> RawColumns:
    return RawColumns(strings=StringTable(), metadata={}, stats={})


def format_error(error: Exception, position: int) -> TraceFormatError:
    """The user's message for a chunk, starting at byte ``position`` of the JSON, that does not decode."""
    if isinstance(error, msgspec.ValidationError):
        return TraceFormatError(f"invalid event near byte {position} of the JSON: {error}")
    return TraceFormatError(f"invalid JSON near byte {position}: {_decode_problem(error)}")


def decode_in_window(reader: ChunkReader, chunks: EventChunks, chunk: Chunk, first: int) -> Union[int, Exception]:
    """``decode_chunk`` of ``chunk`` in the window, in place; the decode error is returned, not raised, so that
    no frame of it outlives this call (they reference the window)."""
    try:
        return with_brackets(chunks.buffer, chunk.start, chunk.end,
                              lambda view: decode_chunk(reader, view, first, chunk.index, chunk.position))
    except UnicodeDecodeError as exc:
        return UnicodeDecodeError(exc.encoding, b"", 0, 0, exc.reason)
    except msgspec.DecodeError as exc:
        return type(exc)(str(exc))


def decode_chunk(reader: ChunkReader, view: memoryview, first: int, index: int, position: int = 0) -> int:
    """Decode ``view`` (a JSON array of events: one chunk, numbered ``index``, whose first event is number
    ``first``, the chunk starting at byte ``position`` of the JSON) into the reader's columns; returns its
    number of events.

    Raises ``msgspec.DecodeError`` (or ``UnicodeDecodeError``) before changing anything when the bytes are
    not a JSON array.
    """
    scanner = reader.scanner
    if scanner is not None and not reader.text_times:  # the fast path first (columnar.py)
        scanned = scanner.scan(view)
        if scanned is not None and reader.read_scanned(scanned, scanner.texts, first, index):
            return scanned.rows
    events, decoder = decode_structs(view, reader.text_times)
    if decoder is TEXT_TIMES_DECODER:
        reader.text_times = True  # the next chunks are likely alike: they start with this decoder
    if isinstance(events, EventsDecodedAlone):
        reader.repaired_text += events.repaired_text
        if events.first_problem is not None and reader.first_problem is None:
            reader.first_problem = position - 1 + events.first_problem  # the view starts with its '['
    out = reader.out
    out.begin_chunk(index, first, len(events))
    reader.read(events, first, numeric_times=decoder is STRICT_DECODER)
    rows = np.flatnonzero(reader.last_phase_class == PHASE_COUNTER)
    if len(rows):
        raw_events = RAW_LIST.decode(view)
        pids = reader.scalars.ids(map(get_pid, events), len(events))
        names = out.strings.ids(map(get_name, events), len(events))
        read_counters(raw_events, rows, out, reader.last_ts, pids, names, first)
    return len(events)


def finish_columns(out: RawColumns, reader: ChunkReader, chunks: Optional[EventChunks], chunking: str) -> None:
    """Totals and parse statistics once every chunk of ``reader`` was decoded."""
    out.num_events = sum(count for _first, count in out.chunk_events.values())
    if chunks is not None:
        out.metadata = chunks.metadata
    unknown_categories = {c: n for c, n in reader.category_counts.items() if c and c not in KNOWN_CATEGORIES}
    out.stats = {
        "events": out.num_events,
        "phases": reader.phase_counts,
        "categories": reader.category_counts,
        "unknown_categories": unknown_categories,
        "skipped_phases": {p: n for p, n in reader.phase_counts.items() if p not in PHASE_CLASS},
        "chunking": chunking,
    }
    if reader.repaired_text:
        out.stats["repaired_text"] = reader.repaired_text
    if reader.first_problem is not None:
        out.stats["first_problem_byte"] = reader.first_problem
    out.flow_id_strings = list(reader.string_flow_ids.strings)
