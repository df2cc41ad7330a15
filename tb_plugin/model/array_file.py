"""The file format of a parsed model: aligned arrays followed by a JSON header.

One file per model: a magic string, the header's offset, length and CRC-32, the raw column arrays (each 64-byte
aligned, or page-aligned where the model build filled them in place), then the JSON header (strings, tracks,
metadata, the directory of arrays with each array's dtype, shape, offset and CRC-32). The header comes last so that
arrays can be laid out before it is known: the parser builds a large model's columns straight into the file
(``ArrayFileWriter.allocate``, memory-mapped), so they are never copied from memory to the file, and touched once.
A model's column that holds one value throughout (the collective columns of a trace without collectives, the Python
ids of one recorded without Python frames) is stored as that value in the directory, and read back as a broadcast
view that takes no memory. Reading memory-maps the file and wraps the arrays without copying, so opening a large
model reads nothing but its header; an array's checksum is checked when a view first uses it
(``trace_model._Table``). The same format holds what is derived from a model beside it (the trace index).
Where such files live, and for how long, is the store's business (``store/cache.py``).
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import mmap
import os
import queue
import socket
import struct
import sys
import tempfile
import threading
from typing import Any, Callable, Optional

import msgspec
import numpy as np

from .trace_model import TABLE_TYPES, DamagedModel, TraceModel, Track

try:  # ISA-L's CRC-32 is ten times zlib's
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a declared dependency
    from zlib import crc32 as _crc32

# Bump whenever the model's columns or their meaning change: old entries are then ignored.
# 7: checksums of the header and of every array; 8: links checked against nesting, Ascend task types,
# device sync categories; 9: both; 10: a column holding one value throughout is stored as that value;
# 11: the header after the arrays (built in place); 12: the operators' "Concrete Inputs"; 13: texts too long for the
# strings cut there, kept whole aside; 14: collectives' process group and sequence number
MODEL_FORMAT_VERSION = 14
# The name prefix of the arrays holding the whole texts that the strings hold cut (the string id follows).
_LONG_TEXT = "long_text."
_MAGIC = b"PSCOPE03"
_PREAMBLE = struct.Struct("<QQQ")  # header offset, header length, header checksum
_ALIGN = 64
_DATA_START = _ALIGN  # the first array's offset: past the magic and the preamble
# Arrays shorter than this are written as they are, even when they hold one value throughout.
_MIN_CONSTANT = 1 << 12


# Arrays of at least this size laid out by ``allocate`` are faulted in by another thread (``_Prefaulter``).
PREFAULT_MIN_BYTES = 4 << 20
_MADV_POPULATE_WRITE = 23  # Linux 5.14


def _madvise() -> Optional[Any]:
    if not sys.platform.startswith("linux"):
        return None
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):  # pragma: no cover - every Linux libc has it
        return None
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    madvise.restype = ctypes.c_int
    return madvise


_MADVISE = _madvise()


class _Prefaulter:
    """Faults in the pages of the arrays ``allocate`` maps, on a thread of its own, while the caller fills them.

    Why: the first write to a page of a file mapping is a page fault, which allocates and maps a page of the page
    cache (on a virtual machine the host backs that memory then too). The model build fills its columns on one
    core; ``MADV_POPULATE_WRITE`` (through ctypes, which lets go of the GIL) makes the same pages on the other
    core, ahead of the build's writes. 10 M events, 839 MB of columns: the build 3.48 -> 2.70 s. The pages and
    their content are the same either way: the kernel faults in a page that is absent and leaves one that is
    present alone. Where the call is unknown (before Linux 5.14) it fails, harmlessly, and the build's writes
    fault the pages in as before. The thread ends (``close``) before the writer's file is finished, so that the
    parser may fork afterwards.
    """

    def __init__(self) -> None:
        self._arrays: queue.SimpleQueue[Optional[np.ndarray]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="profscope-prefault", daemon=True)
        self._thread.start()

    def add(self, array: np.ndarray) -> None:
        self._arrays.put(array)

    def _run(self) -> None:
        while (array := self._arrays.get()) is not None:
            if _MADVISE is not None and _MADVISE(array.ctypes.data, array.nbytes, _MADV_POPULATE_WRITE) != 0:
                return  # not supported here: the build's own writes fault the pages in
            del array

    def close(self) -> None:
        self._arrays.put(None)
        self._thread.join()


class CacheWriteError(OSError):
    """A cache file could not be written (a full or read-only disk...); the message says why, for the log."""


def _track_to_json(track: Track) -> dict[str, Any]:
    return dataclasses.asdict(track)


def checksum(array: np.ndarray) -> int:
    """CRC-32 of an array's bytes (C order)."""
    data = np.ascontiguousarray(array)
    return int(_crc32(memoryview(data).cast("B"))) if data.nbytes else 0


def _constant(array: np.ndarray) -> Optional[str]:
    """The bytes (hex) of the one value every element of a long 1-D array holds, else None."""
    if array.ndim != 1 or len(array) < _MIN_CONSTANT:
        return None
    if array.strides == (0,):  # a broadcast value (the build's constant columns): never made whole
        return array[:1].tobytes().hex()
    bits = array.view(f"u{array.dtype.itemsize}") if array.dtype.itemsize in (1, 2, 4, 8) else None
    if bits is None or not (bits[::4093] == bits[0]).all() or not (bits == bits[0]).all():  # bits: NaN equals NaN
        return None
    return array[:1].tobytes().hex()


def temporary_prefix() -> str:
    """The name prefix of this process's unfinished files: the cache's ``evict`` removes those of a writer that is gone
    (a parse killed while it builds into its file) without waiting for them to grow stale."""
    return f".tmp-{socket.gethostname()}-{os.getpid()}-"


class ArrayFileWriter:
    """An array file written under a temporary name in ``path``'s folder, then published (or left for the caller).

    ``allocate`` lays an array out in the file and maps it: the caller fills it in place (the model build gathers
    its columns into such arrays), and its memory is the file's page cache, so the model is never copied from
    memory to the file. ``put`` names each array of the file, writing those not allocated here; ``finish`` writes
    the header. Every failure to write is a CacheWriteError, and ``abort`` leaves nothing behind (arrays allocated
    here stay valid while used: their mapping outlives the file's name).
    """

    def __init__(self, path: str, checksums: bool = True) -> None:
        self.path = path
        self.checksums = checksums
        folder = os.path.dirname(path) or "."
        try:
            fd, self.temporary = tempfile.mkstemp(prefix=temporary_prefix(), dir=folder)
        except OSError as exc:
            raise CacheWriteError(exc.errno, f"cannot create a file in {folder}: {exc.strerror or exc}") from exc
        self.file = os.fdopen(fd, "r+b")
        self.end = _DATA_START
        self.directory: dict[str, Any] = {}
        self.allocated: dict[str, tuple[np.ndarray, int]] = {}
        self.can_allocate = True
        self._prefaulter: Optional[_Prefaulter] = None

    def allocate(self, name: str, dtype: Any, count: int) -> Optional[np.ndarray]:
        """A writable array of ``count`` values laid out in the file for ``name``; None where the file system cannot
        reserve its space (the caller makes it in memory then, and ``put`` writes it)."""
        dtype = np.dtype(dtype)
        nbytes = count * dtype.itemsize
        if not nbytes or not self.can_allocate:
            return None
        offset = -(-self.end // mmap.ALLOCATIONGRANULARITY) * mmap.ALLOCATIONGRANULARITY
        try:
            # Reserved first: a full disk fails here, never as a SIGBUS when a mapped page is first written.
            os.posix_fallocate(self.file.fileno(), offset, nbytes)
            mapped = mmap.mmap(self.file.fileno(), nbytes, offset=offset)
        except (OSError, ValueError, AttributeError):  # no fallocate here (or no room): arrays in memory then
            self.can_allocate = False
            return None
        array = np.frombuffer(mapped, dtype=dtype, count=count)
        if nbytes >= PREFAULT_MIN_BYTES and _MADVISE is not None:
            if self._prefaulter is None:
                self._prefaulter = _Prefaulter()
            self._prefaulter.add(array)
        self.allocated[name] = (array, offset)
        self.end = offset + nbytes
        return array

    def put(self, name: str, array: np.ndarray, constants: bool = False) -> None:
        """Store ``array`` as ``name``: in place if ``allocate`` gave it, as a value in the header if ``constants``
        and it holds one value throughout, else written after the arrays so far."""
        placed = self.allocated.get(name)
        if placed is not None and placed[0] is array:
            offset = placed[1]
        else:
            fill = _constant(array) if constants else None
            if fill is not None:
                self.directory[name] = {"dtype": array.dtype.str, "shape": list(array.shape), "constant": fill}
                return
            array = np.ascontiguousarray(array)
            offset = -(-self.end // _ALIGN) * _ALIGN
            if array.nbytes:
                self._write_at(offset, memoryview(array).cast("B"))
            self.end = offset + array.nbytes
        entry: dict[str, Any] = {"dtype": array.dtype.str, "shape": list(array.shape), "offset": offset}
        if self.checksums:
            entry["crc"] = checksum(array)
        self.directory[name] = entry

    def finish(self, header: dict[str, Any], publish: bool = True) -> str:
        """Write the header (after the arrays) and close the file; published at ``path`` or left under its
        temporary name (returned), for the caller to move into place once what goes beside it is written."""
        encoded = msgspec.json.encode({**header, "format": MODEL_FORMAT_VERSION, "arrays": self.directory})
        self._stop_prefaulting()
        self.allocated.clear()  # the arrays are the caller's now: their mapped pages go with the last use
        offset = -(-self.end // _ALIGN) * _ALIGN
        self._write_at(offset, encoded)
        self._write_at(0, _MAGIC + _PREAMBLE.pack(offset, len(encoded), _crc32(encoded)))
        try:
            self.file.truncate(offset + len(encoded))
            self.file.close()
            if publish:
                os.replace(self.temporary, self.path)
        except OSError as exc:
            self.abort()
            raise CacheWriteError(exc.errno, f"cannot write {self.path}: {exc.strerror or exc}") from exc
        return self.path if publish else self.temporary

    def abort(self) -> None:
        """Remove the unfinished file."""
        self._stop_prefaulting()
        self.allocated.clear()
        try:
            self.file.close()
        except OSError:
            pass
        try:
            os.unlink(self.temporary)
        except OSError:
            pass

    def _stop_prefaulting(self) -> None:
        if self._prefaulter is not None:
            self._prefaulter.close()
            self._prefaulter = None

    def _write_at(self, offset: int, data: Any) -> None:
        try:
            self.file.seek(offset)
            self.file.write(data)
        except OSError as exc:
            self.abort()
            raise CacheWriteError(exc.errno, f"cannot write {self.path}: {exc.strerror or exc}") from exc


def write_arrays(path: str, header: dict[str, Any], arrays: dict[str, np.ndarray], checksums: bool = True,
                 publish: bool = True, constants: bool = False, writer: Optional[ArrayFileWriter] = None) -> str:
    """Write a JSON header and named arrays to ``path`` atomically (``writer``: one whose ``allocate`` gave some of
    the arrays, else a new one).

    With ``publish=False`` the file is left under a temporary name in the same folder (returned),
    for the caller to move into place (``os.replace``) once what goes beside it is written.
    With ``constants``, a long array holding one value throughout is written as that value in the header
    (``read_arrays`` gives it back as a read-only broadcast view, which takes no memory).
    Raises CacheWriteError when the file cannot be written; nothing of it is left behind then.
    """
    writer = writer or ArrayFileWriter(path, checksums)
    try:
        for name, array in arrays.items():
            writer.put(name, array, constants)
        return writer.finish(header, publish)
    except BaseException:
        writer.abort()
        raise


def read_arrays(path: str, in_memory: bool = False) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and memory-mapped arrays of a file written by ``write_arrays``.

    The header's checksum is checked here (ValueError when it does not match); each array's, when
    written, is in ``header["checksums"]`` for the caller to check when it uses the array (``check_array``).
    ``in_memory`` reads the file into one numpy buffer instead: for data used at once and entirely,
    a single read costs less than faulting in a mapping 4 KB page by page (numpy's buffer gets huge pages).
    """
    with open(path, "rb") as f:
        if f.read(len(_MAGIC)) != _MAGIC:
            raise ValueError("not a Profscope cache file of this version")
        header_offset, header_len, header_crc = _PREAMBLE.unpack(f.read(_PREAMBLE.size))
        size = os.fstat(f.fileno()).st_size
        if not _DATA_START <= header_offset <= size or header_len > size - header_offset:
            raise ValueError("damaged cache file")
        f.seek(header_offset)
        encoded = f.read(header_len)
        if _crc32(encoded) != header_crc:
            raise ValueError("damaged cache file: its header does not match its checksum")
        header = msgspec.json.decode(encoded)
        if header.get("format") != MODEL_FORMAT_VERSION:
            raise ValueError("cache format version mismatch")
        if in_memory:
            f.seek(0)
            mapped: Any = np.empty(size, dtype=np.uint8)
            if f.readinto(memoryview(mapped)) != size:
                raise ValueError("the file changed while read")
        else:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    arrays: dict[str, np.ndarray] = {}
    checksums: dict[str, int] = {}
    for name, info in header.pop("arrays").items():
        dtype = np.dtype(info["dtype"])
        if "constant" in info:  # one value throughout (write_arrays' constants); the header's checksum covers it
            arrays[name] = np.broadcast_to(np.frombuffer(bytes.fromhex(info["constant"]), dtype=dtype), info["shape"])
            continue
        count = int(np.prod(info["shape"])) if info["shape"] else 1
        if not _DATA_START <= info["offset"] <= header_offset - count * dtype.itemsize:
            raise ValueError("damaged cache file: its arrays do not lie before its header")
        arrays[name] = np.frombuffer(mapped, dtype=dtype, count=count, offset=info["offset"]).reshape(info["shape"])
        if "crc" in info:
            checksums[name] = info["crc"]
    header["checksums"] = checksums
    return header, arrays


def check_array(array: np.ndarray, expected: Optional[int], what: str) -> None:
    """Raise DamagedModel when ``array``'s bytes do not match the checksum written with them."""
    if expected is not None and checksum(array) != expected:
        raise DamagedModel(f"{what} does not match its checksum")


def write_model(path: str, model: TraceModel, publish: bool = True, writer: Optional[ArrayFileWriter] = None) -> str:
    """Write ``model`` to ``path`` atomically (temp file + rename); see ``write_arrays`` for ``publish`` and
    ``writer`` (the one the model was built into, if any)."""
    arrays = {
        f"{table_name}.{f.name}": getattr(getattr(model, table_name), f.name)
        for table_name in TABLE_TYPES
        for f in dataclasses.fields(getattr(model, table_name))
    }
    writer = writer or ArrayFileWriter(path)
    # Texts too long to be among the strings, as UTF-8 arrays read only when asked for (``TraceModel.full_text``).
    for string_id in model.long_texts:
        whole = model.full_text(string_id).encode("utf-8", "surrogatepass")
        try:
            writer.put(f"{_LONG_TEXT}{string_id}", np.frombuffer(whole, dtype=np.uint8))
        except BaseException:
            writer.abort()
            raise
        del whole
    header = {
        "strings": model.strings,
        "tracks": [_track_to_json(t) for t in model.tracks],
        "metadata": model.metadata,
        "stats": model.stats,
        "framework": model.framework,
        "num_events": model.num_events,
        "start": model.start,
        "end": model.end,
    }
    return write_arrays(path, header, arrays, publish=publish, constants=True, writer=writer)


def read_model(path: str, cache_path: Optional[str] = None, owned: bool = True) -> TraceModel:
    """Memory-map a model written by ``write_model`` (``cache_path``: where it is published, if not at ``path``).

    Each array is checked against its checksum when first used: on a mismatch the entry is removed (when
    ``owned``: a pack in a shared logdir is never removed, nor written beside), the model marked
    (``TraceModel.damage``) and DamagedModel raised.
    """
    header, arrays = read_arrays(path)
    checksums = header["checksums"]
    published = cache_path or path
    damage: dict[str, str] = {}

    def check(name: str, array: np.ndarray) -> None:
        try:
            check_array(array, checksums.get(name), f"the cached column {name}")
        except DamagedModel as exc:
            damage.setdefault("reason", str(exc))
            if not owned:
                raise
            try:  # no server opens it again: the trace is parsed anew
                os.unlink(published)
            except OSError:
                pass  # another server removed it first, or the folder is read-only
            raise

    tables = {}
    for table_name, table_type in TABLE_TYPES.items():
        names = [f.name for f in dataclasses.fields(table_type)]
        table = table_type(**{name: arrays[f"{table_name}.{name}"] for name in names})
        table.check_lazily({name: functools.partial(check, f"{table_name}.{name}") for name in names})
        tables[table_name] = table
    long_texts: dict[int, Callable[[], str]] = {
        int(name[len(_LONG_TEXT):]): functools.partial(_long_text, array, checksums.get(name))
        for name, array in arrays.items() if name.startswith(_LONG_TEXT)
    }
    return TraceModel(
        strings=header["strings"],
        long_texts=long_texts,  # type: ignore[arg-type]
        tracks=[Track(**t) for t in header["tracks"]],
        metadata=header["metadata"],
        stats=header["stats"],
        framework=header["framework"],
        num_events=header["num_events"],
        start=header["start"],
        end=header["end"],
        cache_path=published,
        damage=damage,
        writable=owned,
        **tables,
    )


def _long_text(array: np.ndarray, expected: Optional[int]) -> str:
    check_array(array, expected, "a long text of the cached model")
    return array.tobytes().decode("utf-8", "surrogatepass")


def derived_path(model: TraceModel, name: str) -> Optional[str]:
    """Where a derived structure of a cached model (e.g. the trace index) is kept, if the model is cached."""
    return f"{model.cache_path}.{name}" if model.cache_path else None
