"""Reading a trace file's bytes: plain or gzip (detected by magic), bounded in size.

Gzip is inflated with ISA-L (``isal.igzip``) when it is installed: it is several times
faster than zlib, and decompression would otherwise dominate the load of a large trace.

A large plain local file can be memory-mapped instead of read (``map_plain``): no 1 GB copy
before decoding starts, and the two decoding processes of ``parallel.py`` each fault in only
their own half (1 GB trace: 6.3–7.4 s → 4.5–6.4 s for the whole load). The mapping is private
(copy-on-write): the decoder writes brackets around its chunks. A file truncated while mapped
kills the process reading it (SIGBUS), so only callers whose process may die without harm
(the parser pool's workers, the command line) ask for it.
"""

from __future__ import annotations

import mmap
import os
import zlib
from typing import BinaryIO, Callable, Optional, Union

try:  # ISA-L's inflate; zlib is the fallback.
    from isal import isal_zlib as _zlib_impl
except ImportError:  # pragma: no cover - isal is a declared dependency
    _zlib_impl = zlib  # type: ignore[misc]

GZIP_MAGIC = b"\x1f\x8b"
# A decompressed trace larger than this is refused (a gzip bomb must not take the host down).
DEFAULT_MAX_BYTES = int(os.environ.get("PROFSCOPE_MAX_TRACE_BYTES", str(16 * 1024**3)))
_READ_BLOCK = 8 * 1024 * 1024
# Plain files from this size on are mapped when the caller allows it (below, reading is as fast).
MAP_MIN_BYTES = 64 << 20

# What decoders read: bytes they may write to around a chunk (see kineto._with_brackets).
TraceBuffer = Union[bytearray, mmap.mmap]


class TraceReadError(Exception):
    """The file could not be read as a (possibly gzipped) trace."""


def read_trace_bytes(
    opener: Callable[[], BinaryIO],
    progress: Optional[Callable[[float], None]] = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    map_plain: bool = False,
) -> TraceBuffer:
    """Return the file's decompressed content (a bytearray or a private mapping: decoders read it without a copy).

    ``opener`` returns a fresh binary stream (a local file or an fsspec file);
    ``progress`` receives the fraction of the input consumed; ``map_plain`` maps a large plain
    local file instead of reading it (see the module docstring).
    """
    with opener() as raw:
        head = raw.read(2)
        if head != GZIP_MAGIC:
            mapped = _map_plain(raw, max_bytes) if map_plain else None
            data: TraceBuffer = mapped if mapped is not None else _read_plain(raw, head, max_bytes)
            if progress:
                progress(1.0)
            return data
        compressed = head + raw.read()
    if progress:
        progress(1.0)
    return _gunzip(compressed, max_bytes)


def _map_plain(stream: BinaryIO, max_bytes: int) -> Optional[mmap.mmap]:
    """A private mapping of a large local file, else None (small, not a local file, or not mappable)."""
    try:
        size = os.fstat(stream.fileno()).st_size
        if size < MAP_MIN_BYTES:
            return None
        if size > max_bytes:
            raise TraceReadError(f"trace is larger than the limit of {max_bytes} bytes")
        return mmap.mmap(stream.fileno(), size, access=mmap.ACCESS_COPY)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None


def _read_plain(stream: BinaryIO, head: bytes, max_bytes: int) -> bytearray:
    """The rest of ``stream`` after ``head``, read straight into one buffer (no extra copy)."""
    size = 0
    try:
        size = os.fstat(stream.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        pass
    if size > max_bytes:
        raise TraceReadError(f"trace is larger than the limit of {max_bytes} bytes")
    if size <= len(head):
        data = bytearray(head)
        data += stream.read()
    else:
        data = bytearray(size)
        data[: len(head)] = head
        view = memoryview(data)
        filled = len(head)
        while filled < size:
            got = stream.readinto(view[filled:])
            if not got:
                break
            filled += got
        view.release()
        del data[filled:]
        data += stream.read()  # the file may have grown since fstat
    if len(data) > max_bytes:
        raise TraceReadError(f"trace is larger than the limit of {max_bytes} bytes")
    return data


def _gunzip(compressed: bytes, max_bytes: int) -> bytearray:
    """Inflate every gzip member of ``compressed``; a truncated stream is an error."""
    out = bytearray()
    view = memoryview(compressed)
    pos = 0
    try:
        while pos < len(view):
            inflater = _zlib_impl.decompressobj(31)  # 31: gzip wrapper
            while pos < len(view) and not inflater.eof:
                block = view[pos : pos + _READ_BLOCK]
                pos += len(block)
                out += inflater.decompress(block)
                if len(out) > max_bytes:
                    raise TraceReadError(f"decompressed trace is larger than the limit of {max_bytes} bytes")
            if not inflater.eof:
                raise TraceReadError("the gzip file is truncated (incomplete or still being written)")
            out += inflater.flush()
            # Bytes after this member: another member, or padding zeros some writers leave.
            pos -= len(inflater.unused_data)
            if not bytes(view[pos : pos + 2]) == GZIP_MAGIC:
                break
    except (zlib.error, _zlib_impl.error) as exc:  # type: ignore[attr-defined]
        raise TraceReadError(f"the gzip file is corrupt: {exc}") from exc
    return out
