"""Reading a trace file's bytes: plain or gzip (detected by magic), bounded in size.

Gzip is inflated with ISA-L (``isal.igzip``) when it is installed: it is several times
faster than zlib, and decompression would otherwise dominate the load of a large trace.
"""

from __future__ import annotations

import os
import zlib
from typing import BinaryIO, Callable, Optional

try:  # ISA-L's inflate; zlib is the fallback.
    from isal import isal_zlib as _zlib_impl
except ImportError:  # pragma: no cover - isal is a declared dependency
    _zlib_impl = zlib  # type: ignore[misc]

GZIP_MAGIC = b"\x1f\x8b"
# A decompressed trace larger than this is refused (a gzip bomb must not take the host down).
DEFAULT_MAX_BYTES = int(os.environ.get("PROFSCOPE_MAX_TRACE_BYTES", str(16 * 1024**3)))
_READ_BLOCK = 8 * 1024 * 1024


class TraceReadError(Exception):
    """The file could not be read as a (possibly gzipped) trace."""


def read_trace_bytes(
    opener: Callable[[], BinaryIO],
    progress: Optional[Callable[[float], None]] = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> bytearray:
    """Return the file's decompressed content (a bytearray: decoders read it without a copy).

    ``opener`` returns a fresh binary stream (a local file or an fsspec file);
    ``progress`` receives the fraction of the input consumed.
    """
    with opener() as raw:
        head = raw.read(2)
        if head != GZIP_MAGIC:
            data = _read_plain(raw, head, max_bytes)
            if progress:
                progress(1.0)
            return data
        compressed = head + raw.read()
    if progress:
        progress(1.0)
    return _gunzip(compressed, max_bytes)


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
