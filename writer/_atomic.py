"""Atomic file writes: a reader sees either no file or the whole file, never a part.

Each file is written to a temporary name in its final folder (prefixed with
``layout.TEMP_PREFIX``, which readers skip), flushed to disk with ``fsync``, then
renamed over the final name with ``os.replace``, which is atomic on one file system.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path
from typing import BinaryIO, Callable

from profscope.tb_plugin import layout

_COPY_CHUNK = 1 << 20
# Moderate levels: isal's run 0..3 (2 is its speed/size trade-off), zlib's 1..9.
_ISAL_LEVEL = 2
_ZLIB_LEVEL = 6


def temp_path_for(final_path: Path) -> Path:
    """A fresh temporary name beside ``final_path`` that readers ignore."""
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    return final_path.with_name(f"{layout.TEMP_PREFIX}{final_path.name}.{token}")


def _create_exclusive(path: Path) -> BinaryIO:
    # os.open with mode 0o666 lets the umask decide the permissions, like open();
    # tempfile.mkstemp would force 0o600 and hide the file from teammates.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    return os.fdopen(fd, "wb")


def _fsync_folder(folder: Path) -> None:
    """Make a rename durable; not possible (nor needed) on every platform."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def atomic_write(final_path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Create ``final_path`` with the bytes that ``write`` puts into the file it is given.

    On any error (including KeyboardInterrupt) the temporary file is removed and
    ``final_path`` is left as it was.
    """
    temp_path = temp_path_for(final_path)
    try:
        with _create_exclusive(temp_path) as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp_path, final_path)
    except BaseException:
        remove_quietly(temp_path)
        raise
    _fsync_folder(final_path.parent)


def _gzip_writer(out: BinaryIO, mtime: int) -> BinaryIO:
    # filename="" keeps the temporary name out of the gzip header.
    try:
        from isal import igzip
    except ImportError:  # isal is optional for the writer: fall back to zlib
        import gzip

        return gzip.GzipFile(filename="", mode="wb", compresslevel=_ZLIB_LEVEL, fileobj=out, mtime=mtime)
    return igzip.GzipFile(filename="", mode="wb", compresslevel=_ISAL_LEVEL, fileobj=out, mtime=mtime)


def gzip_file_into(source: Path, out: BinaryIO, mtime: int = 0) -> None:
    """Stream ``source`` into ``out`` gzip-compressed, byte for byte (no re-encoding)."""
    with open(source, "rb") as src, _gzip_writer(out, mtime) as gz:
        shutil.copyfileobj(src, gz, _COPY_CHUNK)


def copy_file_into(source: Path, out: BinaryIO) -> None:
    with open(source, "rb") as src:
        shutil.copyfileobj(src, out, _COPY_CHUNK)
