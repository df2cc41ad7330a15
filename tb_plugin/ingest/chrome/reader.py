"""Reading a trace file's bytes: plain or gzip (detected by magic), in bounded blocks, bounded in size.

A trace is read as a stream of blocks of at most ``BLOCK_BYTES`` decompressed bytes
(``iter_blocks``), which the decoder cuts into chunks of whole events on a moving window
(``chunks.EventChunks``): the whole document is never held, so the memory of a load follows
the model it builds, not the file (a 4.7 GB trace needs a window of a few tens of MB).

Gzip is inflated with ISA-L (``isal.igzip_lib``) when it is installed: it is several times
faster than zlib (about 4.5 GB/s of output here), and decompression would otherwise weigh on
the load of a large trace. Every call to the inflater is given the most it may produce
(``max_length``): a gzip bomb is stopped at the size limit, never after it, and no call
produces more than one block. The inflater keeps the input it has not used yet: zlib's
``decompressobj`` hands it back as a new ``unconsumed_tail`` after every block, which copied
each MB of compressed input about ten times (4.7 GB inflated: 1.40 s, against 0.97 s now).
"""

from __future__ import annotations

import os
import zlib
from typing import Any, BinaryIO, Callable, Iterator, Optional

try:  # ISA-L's inflate; zlib is the fallback.
    from isal import igzip_lib as _igzip
except ImportError:  # pragma: no cover - isal is a declared dependency
    _igzip = None  # type: ignore[assignment]

GZIP_MAGIC = b"\x1f\x8b"
# A decompressed trace larger than this is refused (time, not memory: the reading is streamed).
DEFAULT_MAX_BYTES = int(os.environ.get("PROFSCOPE_MAX_TRACE_BYTES", str(16 * 1024**3)))
# Decompressed bytes handed to the decoder at a time, and compressed bytes read at a time. Blocks of the decode's
# chunk size: a block is cut and decoded while it is still in the CPU's caches (a 2 M-event .gz decoded by two
# processes: 2.19 against 2.51 s with 8 MB blocks, medians of 7 alternating runs).
BLOCK_BYTES = 1 << 20
_INPUT_BYTES = 1 << 20

Progress = Optional[Callable[[float], None]]


class TraceReadError(Exception):
    """The file could not be read as a (possibly gzipped) trace."""


def _too_large(max_bytes: int) -> TraceReadError:
    return TraceReadError(f"trace is larger than the limit of {max_bytes} bytes")


def _input_size(stream: BinaryIO) -> Optional[int]:
    """The stream's size in bytes where it can tell (a local file, an fsspec file), for progress."""
    try:
        return os.fstat(stream.fileno()).st_size
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        size = getattr(stream, "size", None)
        return size if isinstance(size, int) and size > 0 else None


def iter_blocks(stream: BinaryIO, max_bytes: Optional[int] = None, progress: Progress = None) -> Iterator[bytes]:
    """The decompressed content of ``stream`` in blocks of at most ``BLOCK_BYTES`` bytes.

    Raises TraceReadError when the content passes ``max_bytes`` (before producing more than
    ``max_bytes + 1`` bytes in all) or a gzip stream is truncated or corrupt. ``progress``
    receives the fraction of the input consumed so far, when the input's size is known.
    """
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    size = _input_size(stream)
    consumed = 0

    def report(count: int) -> None:
        nonlocal consumed
        consumed += count
        if progress and size:
            progress(min(consumed / size, 1.0))

    head = stream.read(2)
    report(len(head))
    if head == GZIP_MAGIC:
        yield from _inflate(stream, head, max_bytes, report)
        return
    produced = 0
    first = head  # the two bytes read to look for the magic start the first block
    while True:
        block = stream.read(BLOCK_BYTES - len(first))
        report(len(block))
        if first:
            block, first = first + block, b""
        if not block:
            return
        produced += len(block)
        if produced > max_bytes:
            raise _too_large(max_bytes)
        yield block


class _ZlibInflater:
    """zlib's gzip inflater with the interface of ISA-L's ``IgzipDecompressor``: ``needs_input`` says when it
    has produced all it can from the input given so far, ``eof`` and ``unused_data`` tell where the member
    ended."""

    def __init__(self) -> None:
        self._inflater = zlib.decompressobj(31)  # 31: gzip wrapper
        self.needs_input = True

    @property
    def eof(self) -> bool:
        return self._inflater.eof

    @property
    def unused_data(self) -> bytes:
        return self._inflater.unused_data

    def decompress(self, data: bytes, max_length: int) -> bytes:
        tail = self._inflater.unconsumed_tail
        out = self._inflater.decompress(tail + data if tail else data, max_length)
        # A full block may leave output in the inflater with every input byte used: ask again before reading.
        self.needs_input = not self._inflater.unconsumed_tail and len(out) < max_length
        return out


def _new_inflater() -> Any:
    """An inflater of one gzip member (ISA-L's when installed)."""
    if _igzip is not None:
        return _igzip.IgzipDecompressor(flag=_igzip.DECOMP_GZIP)
    return _ZlibInflater()  # pragma: no cover - isal is a declared dependency (tests run this one too)


_INFLATE_ERRORS: tuple[type[Exception], ...] = (zlib.error,) + ((_igzip.IsalError,) if _igzip is not None else ())


def _inflate(stream: BinaryIO, head: bytes, max_bytes: int, report: Callable[[int], None]) -> Iterator[bytes]:
    """Every gzip member of ``stream`` (which started with ``head``), inflated block by block."""
    produced = 0
    pending = head
    try:
        while True:  # one gzip member per pass
            inflater = _new_inflater()
            while not inflater.eof:
                if inflater.needs_input:
                    if not pending:
                        pending = stream.read(_INPUT_BYTES)
                        report(len(pending))
                        if not pending:
                            raise TraceReadError("the gzip file is truncated (incomplete or still being written)")
                    data, pending = pending, b""
                else:
                    data = b""  # output left from the input already given
                # At most one block, and at most one byte past the limit: that byte tells the limit was passed.
                out = inflater.decompress(data, min(BLOCK_BYTES, max_bytes - produced + 1))
                produced += len(out)
                if produced > max_bytes:
                    raise TraceReadError(f"decompressed trace is larger than the limit of {max_bytes} bytes")
                if out:
                    yield out
            pending = inflater.unused_data
            # Bytes after this member: another member, or padding zeros some writers leave.
            while len(pending) < 2:
                more = stream.read(_INPUT_BYTES)
                report(len(more))
                if not more:
                    break
                pending += more
            if pending[:2] != GZIP_MAGIC:
                return
    except _INFLATE_ERRORS as exc:
        raise TraceReadError(f"the gzip file is corrupt: {exc}") from exc


def read_trace_bytes(opener: Callable[[], BinaryIO], progress: Progress = None,
                     max_bytes: Optional[int] = None) -> bytearray:
    """The file's whole decompressed content in one buffer (small files, and the decoder's fallback
    for documents it cannot stream: see ``chunks.EventChunks``)."""
    out = bytearray()
    with opener() as stream:
        for block in iter_blocks(stream, max_bytes, progress):
            out += block
    return out
