"""The file format of a parsed model: a JSON header followed by aligned arrays.

One file per model: a magic string, the header's length and CRC-32, the JSON header (strings, tracks,
metadata, the directory of arrays with each array's dtype, shape, offset and CRC-32), then the raw column
arrays, each 64-byte aligned. A model's column that holds one value throughout (the collective columns of a trace
without collectives, the Python ids of one recorded without Python frames) is stored as that value in the
directory, and read back as a broadcast view that takes no memory. Reading memory-maps the file and wraps the
arrays without copying, so opening a large model reads nothing but its header; an array's checksum is checked
when a view first uses it (``trace_model._Table``). The same format holds what is derived from a model beside it
(the trace index).
Where such files live, and for how long, is the store's business (``store/cache.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import mmap
import os
import struct
import tempfile
from typing import Any, Optional

import msgspec
import numpy as np

from .trace_model import TABLE_TYPES, DamagedModel, TraceModel, Track

try:  # ISA-L's CRC-32 is ten times zlib's
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a declared dependency
    from zlib import crc32 as _crc32

# Bump whenever the model's columns or their meaning change: old entries are then ignored.
# 7: checksums of the header and of every array; 8: links checked against nesting, Ascend task types,
# device sync categories; 9: both; 10: a column holding one value throughout is stored as that value
MODEL_FORMAT_VERSION = 10
_MAGIC = b"PSCOPE02"
_PREAMBLE = struct.Struct("<QQ")  # header length, header checksum
_ALIGN = 64
# Arrays shorter than this are written as they are, even when they hold one value throughout.
_MIN_CONSTANT = 1 << 12


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


def write_arrays(path: str, header: dict[str, Any], arrays: dict[str, np.ndarray], checksums: bool = True,
                 publish: bool = True, constants: bool = False) -> str:
    """Write a JSON header and named arrays (each 64-byte aligned) to ``path`` atomically.

    With ``publish=False`` the file is left under a temporary name in the same folder (returned),
    for the caller to move into place (``os.replace``) once what goes beside it is written.
    With ``constants``, a long array holding one value throughout is written as that value in the header
    (``read_arrays`` gives it back as a read-only broadcast view, which takes no memory).
    Raises CacheWriteError when the file cannot be written; nothing of it is left behind then.
    """
    ordered = []
    directory: dict[str, Any] = {}
    for name, array in arrays.items():
        fill = _constant(array) if constants else None
        if fill is None:
            ordered.append((name, np.ascontiguousarray(array)))
        else:
            directory[name] = {"dtype": array.dtype.str, "shape": list(array.shape), "constant": fill}
    offset = 0
    for name, array in ordered:
        offset = (offset + _ALIGN - 1) // _ALIGN * _ALIGN
        directory[name] = {"dtype": array.dtype.str, "shape": list(array.shape), "offset": offset}
        if checksums:
            directory[name]["crc"] = checksum(array)
        offset += array.nbytes
    encoded = msgspec.json.encode({**header, "format": MODEL_FORMAT_VERSION, "arrays": directory})
    data_start = _data_start(len(encoded))
    folder = os.path.dirname(path) or "."
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    except OSError as exc:
        raise CacheWriteError(exc.errno, f"cannot create a file in {folder}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_MAGIC)
            out.write(_PREAMBLE.pack(len(encoded), _crc32(encoded)))
            out.write(encoded)
            for name, array in ordered:
                out.seek(data_start + directory[name]["offset"])
                out.write(memoryview(array).cast("B") if array.nbytes else b"")
            out.truncate(data_start + offset)
        if publish:
            os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, CacheWriteError):
            raise CacheWriteError(exc.errno, f"cannot write {path}: {exc.strerror or exc}") from exc
        raise
    return path if publish else tmp


def _data_start(header_len: int) -> int:
    return (len(_MAGIC) + _PREAMBLE.size + header_len + _ALIGN - 1) // _ALIGN * _ALIGN


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
        header_len, header_crc = _PREAMBLE.unpack(f.read(_PREAMBLE.size))
        size = os.fstat(f.fileno()).st_size
        if header_len > size:
            raise ValueError("damaged cache file")
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
    data_start = _data_start(header_len)
    arrays: dict[str, np.ndarray] = {}
    checksums: dict[str, int] = {}
    for name, info in header.pop("arrays").items():
        dtype = np.dtype(info["dtype"])
        if "constant" in info:  # one value throughout (write_arrays' constants); the header's checksum covers it
            arrays[name] = np.broadcast_to(np.frombuffer(bytes.fromhex(info["constant"]), dtype=dtype), info["shape"])
            continue
        count = int(np.prod(info["shape"])) if info["shape"] else 1
        if data_start + info["offset"] + count * dtype.itemsize > size:
            raise ValueError("damaged cache file: it is shorter than its arrays")
        arrays[name] = np.frombuffer(mapped, dtype=dtype, count=count, offset=data_start + info["offset"]).reshape(
            info["shape"])
        if "crc" in info:
            checksums[name] = info["crc"]
    header["checksums"] = checksums
    return header, arrays


def check_array(array: np.ndarray, expected: Optional[int], what: str) -> None:
    """Raise DamagedModel when ``array``'s bytes do not match the checksum written with them."""
    if expected is not None and checksum(array) != expected:
        raise DamagedModel(f"{what} does not match its checksum")


def write_model(path: str, model: TraceModel, publish: bool = True) -> str:
    """Write ``model`` to ``path`` atomically (temp file + rename); see ``write_arrays`` for ``publish``."""
    arrays = {
        f"{table_name}.{f.name}": getattr(getattr(model, table_name), f.name)
        for table_name in TABLE_TYPES
        for f in dataclasses.fields(getattr(model, table_name))
    }
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
    return write_arrays(path, header, arrays, publish=publish, constants=True)


def read_model(path: str, cache_path: Optional[str] = None) -> TraceModel:
    """Memory-map a model written by ``write_model`` (``cache_path``: where it is published, if not at ``path``).

    Each array is checked against its checksum when first used: on a mismatch the entry is removed,
    the model marked (``TraceModel.damage``) and DamagedModel raised.
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
    return TraceModel(
        strings=header["strings"],
        tracks=[Track(**t) for t in header["tracks"]],
        metadata=header["metadata"],
        stats=header["stats"],
        framework=header["framework"],
        num_events=header["num_events"],
        start=header["start"],
        end=header["end"],
        cache_path=published,
        damage=damage,
        **tables,
    )


def derived_path(model: TraceModel, name: str) -> Optional[str]:
    """Where a derived structure of a cached model (e.g. the trace index) is kept, if the model is cached."""
    return f"{model.cache_path}.{name}" if model.cache_path else None
