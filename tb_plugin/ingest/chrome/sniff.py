"""Whether a JSON document is a Chrome trace, told from its top-level structure without parsing it.

Discovery asks this of every ``.json``/``.json.gz`` file of a logdir that no layout names (``store/discovery.py``).
A trace is a bare array whose first element is an event (an object with a one-letter phase ``ph``), or an object
with a trace's key: ``traceEvents`` holding a list, or a key only traces write (``TRACE_TOP_LEVEL_KEYS``: the
Chrome format's ``displayTimeUnit``, ``stackFrames``..., Kineto's ``schemaVersion``, ``deviceProperties``...).

The keys of the top-level object are read in order, and the value of any other key is skipped without being
built: a benchmark harness that writes 26 KB of ``metadata`` (or a 5 MB config) before its events is found,
where a look at the first few KB missed it. Skipping is a scan of the value's bytes, vectorised a block at a time
(strings told by the parity of unescaped quotes, nesting by a running sum, state carried from block to block), so
only one inflated block and the unread rest of the previous one are held, whatever the value's size or depth.
The scan stops at the first key that tells (usually within the first block), at the end of the top-level object,
or after ``SNIFF_LIMIT_BYTES`` of inflated data (``BEYOND_LIMIT``: the caller says so, the file is not silently
dropped; ``profscope import`` reads such a file whole).
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO, Iterator, Optional

import numpy as np

from .reader import TraceReadError, iter_blocks

# Inflated bytes read at most before giving up on finding a trace's key.
SNIFF_LIMIT_BYTES = 16 << 20

# The verdicts.
TRACE = "trace"
NOT_A_TRACE = "not_a_trace"  # not JSON, or JSON whose top level holds no trace's key
EMPTY = "empty"  # nothing but white space
BEYOND_LIMIT = "beyond_limit"  # no verdict within SNIFF_LIMIT_BYTES
UNREADABLE = "unreadable"  # a broken or truncated gzip stream, or a read that failed

# Keys a trace writes at its top level besides its events (the events' key counts only with its list).
TRACE_TOP_LEVEL_KEYS = frozenset({
    "displayTimeUnit", "systemTraceEvents", "otherData", "stackFrames",
    # Kineto's (ingest/detect.py uses the same ones as evidence of a torch trace).
    "schemaVersion", "deviceProperties", "distributedInfo", "baseTimeNanoseconds", "traceName",
})
_TRACE_KEYS = frozenset(key.encode() for key in TRACE_TOP_LEVEL_KEYS)
_EVENTS_KEY = b"traceEvents"
_PHASE_KEY = b"ph"

_BOM = b"\xef\xbb\xbf"
_NON_SPACE = re.compile(rb"[^ \t\r\n]")
# A key short enough to be one we look for (longer ones are skipped like any string).
_SHORT_STRING = re.compile(rb'"((?:[^"\\]|\\.){0,64})"', re.DOTALL)
_KEY_WINDOW = 2 * 64 + 2  # the longest short key: 64 escapes and its quotes
_PHASE_VALUE = re.compile(rb'"[A-Za-z]"')
_LITERAL = re.compile(rb"true|false|null|-?[0-9][0-9.eE+\-]*")
_NUMBER_REST = re.compile(rb"[0-9.eE+\-]*")
_SCALAR_LOOKAHEAD = 8  # bytes wanted in the window before matching a literal (the longest is "false")

_QUOTE, _BACKSLASH, _OPEN, _CLOSE = 1, 2, 3, 4
_BYTE_CLASS = np.zeros(256, dtype=np.uint8)
_BYTE_CLASS[ord('"')] = _QUOTE
_BYTE_CLASS[ord("\\")] = _BACKSLASH
_BYTE_CLASS[[ord("{"), ord("[")]] = _OPEN
_BYTE_CLASS[[ord("}"), ord("]")]] = _CLOSE


class _Limit(Exception):
    """More than the limit would have to be read."""


class _Ended(Exception):
    """The input ended inside a value, or the document is not JSON where it matters."""


class _Window:
    """The inflated document a block at a time: the unread rest of the blocks pulled so far (``data[pos:]``)."""

    def __init__(self, blocks: Iterator[bytes], limit: int) -> None:
        self._blocks = blocks
        self._limit = limit
        self._pulled = 0
        self.data = b""
        self.pos = 0

    def more(self) -> bool:
        """Append the next block, dropping what was read; False at the end of the input."""
        if self._pulled >= self._limit:
            raise _Limit
        block = next(self._blocks, None)
        if block is None:
            return False
        self._pulled += len(block)
        self.data = self.data[self.pos:] + block
        self.pos = 0
        return True

    def want(self, count: int) -> None:
        """At least ``count`` unread bytes in the window, unless the input ends first."""
        while len(self.data) - self.pos < count and self.more():
            pass

    def peek(self) -> Optional[int]:
        """The next byte that is not white space (the white space is read), None at the end of the input."""
        while True:
            found = _NON_SPACE.search(self.data, self.pos)
            if found is not None:
                self.pos = found.start()
                return self.data[self.pos]
            self.pos = len(self.data)
            if not self.more():
                return None


def sniff_trace(stream: BinaryIO, limit: Optional[int] = None) -> str:
    """The verdict on the (possibly gzipped) document read from ``stream``: ``TRACE``, ``NOT_A_TRACE``,
    ``EMPTY``, ``BEYOND_LIMIT`` or ``UNREADABLE``. At most ``limit`` (``SNIFF_LIMIT_BYTES``) inflated bytes, plus
    one block, are read; the stream is read only as far as the verdict needs. Read errors (OSError) propagate."""
    blocks = iter_blocks(stream)
    try:
        return _verdict(_Window(blocks, SNIFF_LIMIT_BYTES if limit is None else limit))
    except _Limit:
        return BEYOND_LIMIT
    except _Ended:
        return NOT_A_TRACE
    except TraceReadError:
        return UNREADABLE
    finally:
        blocks.close()


def starts_like_chrome_trace(document: bytes) -> bool:
    """Whether ``document`` (its start, or all of it; plain or gzipped) is a Chrome trace as ``sniff_trace`` tells."""
    return sniff_trace(io.BytesIO(document)) == TRACE


def _verdict(window: _Window) -> str:
    window.want(len(_BOM))
    if window.data.startswith(_BOM):
        window.pos = len(_BOM)
    first = window.peek()
    if first is None:
        return EMPTY
    window.pos += 1
    if first == ord("["):  # a bare array of events: its first element tells
        if window.peek() != ord("{"):
            return NOT_A_TRACE
        window.pos += 1
        return TRACE if _has_trace_key(window, event=True) else NOT_A_TRACE
    if first == ord("{"):
        return TRACE if _has_trace_key(window, event=False) else NOT_A_TRACE
    return NOT_A_TRACE


def _has_trace_key(window: _Window, event: bool) -> bool:
    """Read the keys of the object whose ``{`` was just read, skipping their values, until one tells: a trace's
    top-level key (``event`` False), or an event's phase (``event`` True, the first element of a bare array).
    False when the object ends first."""
    while True:
        byte = window.peek()
        if byte == ord(","):
            window.pos += 1
            byte = window.peek()
        if byte != ord('"'):
            return False  # the object's end (or not JSON)
        key = _key(window)
        if window.peek() != ord(":"):
            return False
        window.pos += 1
        value = window.peek()
        if value is None:
            return False
        if event and key == _PHASE_KEY:
            window.want(3)
            return _PHASE_VALUE.match(window.data, window.pos) is not None
        if not event and (key in _TRACE_KEYS or (key == _EVENTS_KEY and value == ord("["))):
            return True
        _skip_value(window, value)


def _key(window: _Window) -> Optional[bytes]:
    """A key as written between its quotes (the window is at its opening quote); None for a long one (skipped)."""
    window.want(_KEY_WINDOW)
    short = _SHORT_STRING.match(window.data, window.pos)
    if short is not None:
        window.pos = short.end()
        return short.group(1)
    _skip_value(window, ord('"'))
    return None


def _skip_value(window: _Window, first: int) -> None:
    """Read past the value that starts at the window's position (its first byte is ``first``)."""
    if first in (ord('"'), ord("{"), ord("[")):
        _skip_balanced(window)
        return
    window.want(_SCALAR_LOOKAHEAD)
    literal = _LITERAL.match(window.data, window.pos)
    if literal is None:
        raise _Ended  # not JSON
    window.pos = literal.end()
    # A number may run on into the next block.
    while window.pos == len(window.data) and window.more():
        window.pos = _NUMBER_REST.match(window.data, window.pos).end()  # type: ignore[union-attr]


def _skip_balanced(window: _Window) -> None:
    """Read past the string, object or array that starts at the window's position, a block at a time."""
    in_string, depth, escaped = False, 0, False
    while True:
        if escaped:  # the byte after a backslash that ended the previous block belongs to its escape
            if window.pos >= len(window.data) and not window.more():
                raise _Ended
            window.pos += 1
        end, in_string, depth, escaped = _scan(window.data, window.pos, in_string, depth)
        if end is not None:
            window.pos = end
            return
        window.pos = len(window.data)
        if not window.more():
            raise _Ended


def _scan(data: bytes, start: int, in_string: bool, depth: int) -> tuple[Optional[int], bool, int, bool]:
    """Scan ``data[start:]``, entered inside a string or not and at a nesting depth, for the end of the value
    being skipped: the first point after which the scan is outside any string at depth 0. Returns (the offset
    just past that point or None, then the state at the end of ``data``: in a string, depth, and whether its
    last byte is a backslash that escapes the next block's first byte).

    Everything is computed over the positions of the bytes that matter (quotes, backslashes, brackets), in
    their order: a quote is escaped by an odd run of backslashes right before it, a bracket is outside strings
    when an even number of unescaped quotes precede it (counted from the entry state), depth is a running sum."""
    view = np.frombuffer(data, dtype=np.uint8)[start:]
    classes = _BYTE_CLASS[view]
    special = np.flatnonzero(classes)
    kinds = classes[special]
    del classes
    is_quote = kinds == _QUOTE
    trailing_run = 0
    backslashes = special[kinds == _BACKSLASH]
    if len(backslashes):
        # Quotes right after a backslash: escaped when the run of backslashes before them is odd.
        follows = np.flatnonzero(is_quote[1:] & (kinds[:-1] == _BACKSLASH) & (special[1:] == special[:-1] + 1)) + 1
        run_starts = np.flatnonzero(np.r_[True, np.diff(backslashes) != 1])
        if len(follows):
            before = np.searchsorted(backslashes, special[follows]) - 1  # the backslash right before each
            run_length = special[follows] - backslashes[run_starts[np.searchsorted(run_starts, before, "right") - 1]]
            is_quote[follows[run_length % 2 == 1]] = False
        if backslashes[-1] == len(view) - 1:
            trailing_run = int(backslashes[-1] - backslashes[run_starts[-1]] + 1)
    parity = 1 if in_string else 0
    # After each special byte: unescaped quotes so far (with the entry state), so whether it is inside a string.
    inside = (np.cumsum(is_quote, dtype=np.int64) + parity) & 1
    outside_bracket = (inside == 0) & (kinds >= _OPEN)  # a bracket is no quote: its count is the one before it
    steps = np.where(outside_bracket, np.where(kinds == _OPEN, 1, -1), 0)
    depth_after = depth + np.cumsum(steps, dtype=np.int64)
    # The value ends at a bracket that closes it, or at a quote that closes a string at depth 0.
    ends = (depth_after <= 0) & (((kinds == _CLOSE) & outside_bracket) | (is_quote & (inside == 0)))
    end = int(np.argmax(ends)) if len(ends) else 0
    if len(ends) and ends[end]:
        return start + int(special[end]) + 1, False, 0, False
    in_string = bool(inside[-1]) if len(inside) else in_string
    depth = int(depth_after[-1]) if len(depth_after) else depth
    return None, in_string, depth, in_string and trailing_run % 2 == 1
