"""The events array of a streamed Chrome-trace document, cut into chunks of whole events.

``EventChunks`` reads decompressed blocks (``reader.iter_blocks``) into a moving window and
hands out byte ranges of that window holding whole events, separated by commas, so that the
decoder can decode each range as a JSON array in place (``events.with_brackets``). The
window keeps only the current chunk and what has been read after it: a document of any size
is cut with a few tens of MB.

Cuts are guessed where they are cheap: at the first ``}, {`` after every ``CHUNK_BYTES``. Such a
match is either between two events or inside a nested value or a string; a chunk cut inside
one cannot be balanced JSON, so its decode fails, and the caller asks for the same chunk cut
exactly (``exact_chunk``): a scan of the JSON structure from the chunk's start (a known
boundary) finds the next comma between events, or the bracket that closes the array. Where
the array ends is found, when the input has ended, by searching back for a ``]`` whose tail
reads as the rest of the top-level object; before the end, ``RESERVE_BYTES`` are kept unread
after every cut, so what follows the array (a few small keys) never falls into a guessed
chunk.

A document whose ``"traceEvents"`` key is not near its start (or that is no object or array)
cannot be streamed this way: ``NotStreamable`` tells the caller to decode it whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import msgspec
import numpy as np

from ..detect import HEAD_BYTES

# Small chunks decode faster: a chunk's Python objects stay in the CPU's caches from their decode to their
# freeing (1 MB against 8 MB: 0.81 against 1.10 s per million events to columns, 0.58 against 0.67 s to decode).
CHUNK_BYTES = 1 << 20
RESERVE_BYTES = 1 << 20
# The "traceEvents" key must come within this many bytes of the start to stream the document.
HEAD_SEARCH_BYTES = 64 << 20
# A chunk (one event, or what follows the events) larger than this is refused: a window that
# never finds the end of an event must not grow without bound (a gzip bomb of one long string).
MAX_WINDOW_BYTES = 512 << 20
# A document that cannot be streamed is decoded whole up to this size.
WHOLE_DOCUMENT_MAX_BYTES = 1 << 30
_TAIL_ATTEMPTS = 1000
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
# Between two events: a closing brace, a comma and the next opening brace. JSON strings cannot
# hold raw newlines, so a match is between events, inside a nested value or inside a string.
_EVENT_SEPARATOR = re.compile(rb"\}\s*,\s*\{")
_SEPARATOR_LOOKBACK = 4096  # a separator straddling the end of a searched range is found again
_LEADING = b" \t\r\n\xef\xbb\xbf"  # white space and a UTF-8 byte order mark
_NON_SPACE = re.compile(rb"[^ \t\r\n]")


class TraceFormatError(Exception):
    """The file is JSON but not a trace we can read, or it is not valid JSON."""


class NotStreamable(Exception):
    """The document's events cannot be found near its start: it is decoded whole (``open_events``)."""

    def __init__(self, prefix: bytearray, blocks: Iterator[bytes]) -> None:
        super().__init__("not streamable")
        self.prefix, self.blocks = prefix, blocks


@dataclass(frozen=True)
class Chunk:
    """Bytes ``[start, end)`` of ``EventChunks.buffer`` hold whole events; the bytes at ``start - 1`` and
    ``end`` are not part of any event (the decoder writes brackets there)."""

    index: int
    start: int
    end: int
    guessed: bool
    position: int  # where ``start`` is in the document (bytes of JSON), for messages


class EventChunks:
    """Chunks of the events of one document, read from ``blocks`` (decompressed bytes)."""

    def __init__(self, blocks: Iterator[bytes], chunk_bytes: Optional[int] = None) -> None:
        self._blocks = blocks
        self.chunk_bytes = chunk_bytes or CHUNK_BYTES
        self.buffer = bytearray()
        self.eof = False
        self._head_metadata: dict[str, Any] = {}  # top-level keys before the events
        self._tail_metadata: dict[str, Any] = {}  # and after them (known at the end)
        self.head = b""  # the first HEAD_BYTES of the document (framework detection)
        self.exact_cuts = 0  # chunks that had to be cut by the structure scan
        self._dropped_tail = b""  # the last bytes dropped from the window (for ``tail``)
        self._document_tail: Optional[bytes] = None  # set when the events came out of a whole document
        self._bare = False  # a bare array of events rather than an object
        self._next = 0  # where the next chunk starts, in the buffer
        self._events_end: Optional[int] = None  # where the events array closes, once known
        self._searched = 0  # no separator before this position (past the current chunk's minimum size)
        self._index = 0
        self._dropped = 0  # bytes of the document dropped from the window's start so far
        self._current: Optional[Chunk] = None
        self._start()

    # Reading -----------------------------------------------------------------------------

    def _read_block(self) -> bool:
        if self.eof:
            return False
        try:
            block = next(self._blocks)
        except StopIteration:
            self.eof = True
            return False
        try:
            self.buffer += block
        except BufferError:  # a view of the window that only the garbage collector frees (see _freed_views)
            _freed_views()
            self.buffer += block
        return True

    def _fill(self, size: int) -> None:
        """Read until the window holds ``size`` bytes or the input ends."""
        while len(self.buffer) < size and self._read_block():
            pass

    def _grow(self, chunk_start: int) -> bool:
        """One more block for a chunk that has not found its end yet; False at the end of the input."""
        if len(self.buffer) - chunk_start > MAX_WINDOW_BYTES:
            raise TraceFormatError(f"an event (or what follows the events) is larger than {MAX_WINDOW_BYTES >> 20} MB")
        return self._read_block()

    def _drop_before(self, position: int) -> int:
        """Forget the window's bytes before ``position - 1``; returns where ``position`` now is."""
        drop = position - 1
        if drop > 0:
            self._dropped_tail = (self._dropped_tail + bytes(self.buffer[max(drop - HEAD_BYTES, 0) : drop]))[-HEAD_BYTES:]
            try:
                del self.buffer[:drop]  # O(1) in CPython: the bytearray's start moves
            except BufferError:
                _freed_views()
                del self.buffer[:drop]
            self._dropped += drop
            self._searched = max(self._searched - drop, 0)
            if self._events_end is not None:
                self._events_end -= drop
            return position - drop
        return position

    @property
    def metadata(self) -> dict[str, Any]:
        """The top-level keys other than traceEvents (those after the events once the last chunk was cut)."""
        return {**self._head_metadata, **self._tail_metadata}

    @property
    def tail(self) -> bytes:
        """The last HEAD_BYTES of the document (complete once every chunk was handed out)."""
        if self._document_tail is not None:
            return self._document_tail
        return (self._dropped_tail + bytes(self.buffer[-HEAD_BYTES:]))[-HEAD_BYTES:]

    # The start: where the events array begins ----------------------------------------------

    def _start(self) -> None:
        self._fill(HEAD_BYTES)
        self.head = bytes(self.buffer[:HEAD_BYTES])
        pos = 0
        while True:
            while pos < len(self.buffer) and self.buffer[pos] in _LEADING:
                pos += 1
            if pos < len(self.buffer):
                break
            del self.buffer[:]  # only white space so far: nothing to keep
            pos = 0
            if not self._read_block():
                raise TraceFormatError("the file is empty")
        first = self.buffer[pos : pos + 1]
        if first == b"[":
            self._bare = True
            self._next = pos + 1
            return
        if first != b"{":
            raise TraceFormatError("not a JSON trace: it does not start with '{' or '['")
        searched = pos
        while True:
            key = _EVENTS_KEY.search(self.buffer, searched)
            if key is not None:
                break
            searched = max(len(self.buffer) - 64, pos)
            if len(self.buffer) > HEAD_SEARCH_BYTES or not self._read_block():
                raise NotStreamable(self.buffer, self._blocks)
        before = bytes(self.buffer[pos : key.start()]).rstrip()
        if before != b"{":  # keys before the events: the start of the top-level object
            if not before.endswith(b","):
                raise NotStreamable(self.buffer, self._blocks)
            try:
                earlier = msgspec.json.decode(before[:-1] + b"}")
            except msgspec.DecodeError as exc:
                raise NotStreamable(self.buffer, self._blocks) from exc
            if not isinstance(earlier, dict):
                raise NotStreamable(self.buffer, self._blocks)
            self._head_metadata = earlier
        self._next = key.end()

    # Cutting ---------------------------------------------------------------------------------

    def _chunk(self, start: int, end: int, next_start: int, guessed: bool) -> Chunk:
        self._next = next_start
        self._current = Chunk(self._index, start, end, guessed, self._dropped + start)
        self._index += 1
        return self._current

    def next_chunk(self) -> Optional[Chunk]:
        """The next chunk of events (a guessed cut), or None after the last one."""
        start = self._drop_before(self._next)
        self._current = None
        while True:
            end = self._events_end
            if end is not None:  # the end is known: cut up to it
                if _NON_SPACE.search(self.buffer, start, end) is None:  # no copy of what may be one huge event
                    return None
                found = _EVENT_SEPARATOR.search(self.buffer, start + self.chunk_bytes, end)
                if found is None:
                    return self._chunk(start, end, end, guessed=True)
                return self._chunk(start, found.start() + 1, found.end() - 1, guessed=True)
            # Before the end is known: cut only with RESERVE_BYTES read after the cut.
            limit = len(self.buffer) - (0 if self.eof else RESERVE_BYTES)
            search_from = max(start + self.chunk_bytes, self._searched)
            if not self.eof and limit > search_from:
                found = _EVENT_SEPARATOR.search(self.buffer, search_from, limit)
                if found is not None:
                    self._searched = 0
                    return self._chunk(start, found.start() + 1, found.end() - 1, guessed=True)
                self._searched = max(limit - _SEPARATOR_LOOKBACK, start)
            if self.eof:
                self._find_events_end(start)
                continue
            self._grow(start)

    def _find_events_end(self, start: int) -> None:
        """At the end of the input: where the array closes and the keys after it (a guess, checked
        by decoding; the structure scan decides when no guess fits)."""
        buffer = self.buffer
        if self._bare:
            end = len(buffer)
            while end > start and buffer[end - 1] in b" \t\r\n":
                end -= 1
            if end <= start or buffer[end - 1] != 0x5D:  # ]
                raise TraceFormatError("invalid JSON: the array of events is not closed (truncated file?)")
            self._events_end = end - 1
            return
        candidate = buffer.rfind(b"]", start)
        for _attempt in range(_TAIL_ATTEMPTS):
            if candidate < 0:
                break
            rest = self._rest_of_object(candidate)
            if rest is not None:
                self._tail_metadata = rest
                self._events_end = candidate
                return
            candidate = buffer.rfind(b"]", start, candidate)
        self._events_end = self._scanned_end(start)

    def _rest_of_object(self, close: int) -> Optional[dict[str, Any]]:
        """The keys after the events array closing at ``close``, if the rest of the input reads as the rest of the
        top-level object (``, "key": value ... }`` or ``}``); else None."""
        tail = bytes(memoryview(self.buffer)[close + 1 :]).strip()
        if tail == b"}":
            return {}
        if not tail.startswith(b","):
            return None
        try:
            rest = msgspec.json.decode(b"{" + tail[1:])
        except msgspec.DecodeError:
            return None
        return rest if isinstance(rest, dict) else None

    def _scanned_end(self, start: int) -> int:
        """Where the events array closes, by the structure scan from ``start`` (a boundary between events)."""
        while True:
            found = scan_structure(self.buffer, start, target=None)
            if found is not None:
                break
            if not self._grow(start):
                raise TraceFormatError("invalid JSON: the array of events is not closed (truncated file?)")
        _kind, close = found
        while self._grow(start):  # the keys after the events come with the end of the input
            pass
        rest = {} if self._bare and not bytes(self.buffer[close + 1 :]).strip() else (
            None if self._bare else self._rest_of_object(close))
        if rest is None:
            raise TraceFormatError("invalid JSON after the array of events")
        self._tail_metadata = rest
        return close

    def exact_chunk(self) -> Chunk:
        """The current chunk cut again by the structure scan (its guessed cut did not decode)."""
        if self._current is None:
            raise RuntimeError("exact_chunk() without a current chunk")
        start = self._current.start
        self.exact_cuts += 1
        while True:
            found = scan_structure(self.buffer, start, target=start + self.chunk_bytes)
            if found is not None:
                break
            if not self._grow(start):
                raise TraceFormatError("invalid JSON: the array of events is not closed (truncated file?)")
        kind, position = found
        if kind == "close":
            self._events_end = self._scanned_end(start)
            return self._chunk(start, self._events_end, self._events_end, guessed=False)
        return self._chunk(start, position, position + 1, guessed=False)


_TOP_LEVEL = msgspec.json.Decoder(dict[str, msgspec.Raw])


def open_events(blocks: Iterator[bytes], whole_limit: Optional[int] = None) -> EventChunks:
    """The chunks of the events of the document read from ``blocks``.

    A document that cannot be streamed (its events are not near its start, or it is not a
    trace) is read whole, up to ``whole_limit`` bytes (``WHOLE_DOCUMENT_MAX_BYTES``), decoded as
    an object, and its events array is then cut like any other.
    """
    try:
        return EventChunks(blocks)
    except NotStreamable as unstreamable:
        document = unstreamable.prefix
        limit = whole_limit or WHOLE_DOCUMENT_MAX_BYTES
        for block in unstreamable.blocks:
            document += block
            if len(document) > limit:
                raise TraceFormatError(f"the trace's events are not near its start; such a trace is read whole, "
                                       f"and this one is larger than {limit >> 20} MB") from None
    try:
        top = _TOP_LEVEL.decode(document)
    except msgspec.ValidationError as exc:
        raise TraceFormatError(f"not a trace: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise TraceFormatError(f"invalid JSON: {exc}") from exc
    events = top.pop("traceEvents", None)
    if events is None:
        raise TraceFormatError("not a trace: the JSON object has no 'traceEvents'")
    if bytes(memoryview(events)[:1]) != b"[":
        raise TraceFormatError("not a trace: 'traceEvents' is not a list")
    chunks = EventChunks(iter([bytes(events)]))
    chunks.head, chunks._document_tail = bytes(document[:HEAD_BYTES]), bytes(document[-HEAD_BYTES:])
    # Small top-level values are kept as metadata; huge unknown blobs are skipped.
    chunks._head_metadata = {key: msgspec.json.decode(raw) for key, raw in top.items() if len(raw) <= 1 << 20}
    return chunks


def _freed_views() -> None:
    """Collect garbage: a view of the window held by a reference cycle (a decoder's exception and its frames) keeps
    the bytearray from growing until the collector runs, which in a process with other threads (a Dask worker)
    may be later than the next read."""
    import gc

    gc.collect()


# The structure scan ----------------------------------------------------------------------------

_QUOTE, _BACKSLASH = 0x22, 0x5C
_OPEN, _CLOSE, _COMMA = 1, 2, 3
_BYTE_CLASS = np.zeros(256, dtype=np.uint8)
_BYTE_CLASS[[ord("{"), ord("[")]] = _OPEN
_BYTE_CLASS[[ord("}"), ord("]")]] = _CLOSE
_BYTE_CLASS[ord(",")] = _COMMA
_BYTE_CLASS[_QUOTE] = 4
_BYTE_CLASS[_BACKSLASH] = 5


def scan_structure(buffer: bytearray, start: int, target: Optional[int]) -> Optional[tuple[str, int]]:
    """From ``start`` (between two events, outside any string): ``("separator", i)`` for the first comma
    between events at or after ``target`` (None: never), or ``("close", i)`` for the bracket that closes
    the array if it comes first; None if the window holds neither yet.

    Vectorised over the window: strings are told by the parity of unescaped quotes before a
    position (a quote is escaped by an odd run of backslashes), nesting by a running sum.
    """
    view = np.frombuffer(buffer, dtype=np.uint8)[start:]
    try:
        classes = _BYTE_CLASS[view]
    finally:
        del view  # release the window (a bytearray with an export cannot grow)
    special = np.flatnonzero(classes)
    kinds = classes[special]
    del classes
    quotes = special[kinds == 4]
    backslashes = special[kinds == 5]
    if len(quotes) and len(backslashes):
        # The run of backslashes right before each quote: odd means the quote is escaped.
        run_start = np.flatnonzero(np.r_[True, np.diff(backslashes) != 1])
        run_of = np.cumsum(np.r_[True, np.diff(backslashes) != 1]) - 1
        before = np.searchsorted(backslashes, quotes) - 1
        touching = (before >= 0) & (backslashes[np.maximum(before, 0)] == quotes - 1)
        run_length = quotes - backslashes[run_start[run_of[np.maximum(before, 0)]]]
        quotes = quotes[~(touching & (run_length % 2 == 1))]
    structural = special[(kinds >= _OPEN) & (kinds <= _COMMA)]
    structural_kind = kinds[(kinds >= _OPEN) & (kinds <= _COMMA)]
    outside = np.searchsorted(quotes, structural) % 2 == 0  # an even number of quotes before: not in a string
    structural, structural_kind = structural[outside], structural_kind[outside]
    step = np.where(structural_kind == _OPEN, 1, np.where(structural_kind == _CLOSE, -1, 0))
    depth_before = np.cumsum(step) - step
    at_top = depth_before == 0
    closes = np.flatnonzero(at_top & (structural_kind == _CLOSE))
    close = int(structural[closes[0]]) + start if len(closes) else None
    if target is not None:
        separators = structural[at_top & (structural_kind == _COMMA)] + start
        after = separators[separators >= target]
        if len(after) and (close is None or after[0] < close):
            return "separator", int(after[0])
    return ("close", close) if close is not None else None
