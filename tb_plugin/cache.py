"""The on-disk cache of parsed models.

One file per model: a JSON header (strings, tracks, metadata, array directory) followed by
the raw column arrays, each 64-byte aligned. Loading memory-maps the file and wraps the
arrays without copying, so reopening a large trace takes milliseconds and its columns are
paged in only when a view touches them.

The key is the source's identity (its path, or its URL with the endpoint it is read from; size,
modification time and, for objects in a remote store, the content tag), the user, and the model
format version: an edited trace or a new Profscope version re-parses. The logdir is
never written to; the cache lives under the user's cache folder (or PROFSCOPE_CACHE_DIR,
or the plugin's ``--profscope_cache_dir`` flag).

Every entry carries checksums (CRC-32, computed with ISA-L at about 17 GB/s): one of its
header, checked when it is opened, and one per array, checked when a view first uses the
array (``model.trace_model._Table``), so that opening a model still reads nothing but its
header. A damaged entry is removed and its trace parsed again (``runs.py``).

The cache is bounded (``--profscope_cache_max_gb`` or PROFSCOPE_CACHE_MAX_GB, default
20 GB): ``evict`` removes the least recently used entries beyond that, never one a live
server holds. An entry's last use is its model file's modification time, touched on every
load (access times are unreliable: most disks are mounted relatime or noatime).
"""

from __future__ import annotations

import dataclasses
import functools
import getpass
import hashlib
import mmap
import os
import re
import struct
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Collection, Optional

import msgspec
import numpy as np

from .ingest import load_trace
from .model.trace_model import TABLE_TYPES, DamagedModel, TraceModel, Track

try:  # ISA-L's CRC-32 is ten times zlib's
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a declared dependency
    from zlib import crc32 as _crc32

# Bump whenever the model's columns or their meaning change: old entries are then ignored.
# 7: checksums of the header and of every array; 8: links checked against nesting, Ascend task types,
# device sync categories; 9: both
MODEL_FORMAT_VERSION = 9
_MAGIC = b"PSCOPE02"
_PREAMBLE = struct.Struct("<QQ")  # header length, header checksum
MODEL_SUFFIX = ".model"
DEFAULT_MAX_GB = 20.0
# A temporary file older than this was left by a writer that died: removed by evict().
_STALE_TEMP_SECONDS = 24 * 3600
# "<key>.model" and its derived files "<key>.model.<name>" (cache_key() is 40 hex digits).
_ENTRY_FILE = re.compile(r"^(?P<model>[0-9a-f]{40}\.model)(?:\.[A-Za-z0-9_.\-]+)?$")
_ALIGN = 64


def default_cache_dir() -> str:
    configured = os.environ.get("PROFSCOPE_CACHE_DIR")
    if configured:
        return configured
    try:
        import platformdirs

        return os.path.join(platformdirs.user_cache_dir("profscope", appauthor=False), "models")
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return os.path.join(os.path.expanduser("~"), ".cache", "profscope", "models")


def default_max_bytes() -> int:
    """The cache's size bound: PROFSCOPE_CACHE_MAX_GB, else DEFAULT_MAX_GB."""
    configured = os.environ.get("PROFSCOPE_CACHE_MAX_GB")
    try:
        gigabytes = float(configured) if configured else DEFAULT_MAX_GB
    except ValueError:
        gigabytes = DEFAULT_MAX_GB
    return int(max(gigabytes, 0.0) * (1 << 30))


def _cache_user() -> str:
    """Who owns the cache entries: part of every key, so that two users sharing a cache folder
    (PROFSCOPE_CACHE_DIR) never read each other's entries."""
    getuid = getattr(os, "getuid", None)
    if getuid is not None:
        return f"uid:{getuid()}"
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):  # pragma: no cover - no user name at all
        return "unknown"


@dataclass(frozen=True)
class SourceIdentity:
    """What identifies a trace file's content without reading it."""

    # Absolute path, or for a remote file its full URL plus the service it is read from
    # (e.g. ``s3://bucket/logs/w.1.pt.trace.json.gz#endpoint_url=https://...``, see storage.py).
    location: str
    size: int
    mtime_ns: int
    etag: Optional[str] = None  # an object store's content tag, when it gives one
    # Side files parsed with the trace (location, size, mtime_ns): a change re-parses too.
    companions: tuple[tuple[str, int, int], ...] = ()

    def cache_key(self) -> str:
        text = f"{MODEL_FORMAT_VERSION}|{_cache_user()}|{self.location}|{self.size}|{self.mtime_ns}|{self.etag or ''}"
        if self.companions:
            text += "|" + "|".join(f"{location}:{size}:{mtime}" for location, size, mtime in self.companions)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def local_identity(path: str) -> SourceIdentity:
    st = os.stat(path)
    return SourceIdentity(os.path.abspath(path), st.st_size, st.st_mtime_ns)


class ModelCache:
    """Parsed models on local disk, keyed by source identity."""

    def __init__(self, cache_dir: Optional[str] = None, max_bytes: Optional[int] = None) -> None:
        self.cache_dir = self._usable_dir(cache_dir or default_cache_dir())
        self.max_bytes = default_max_bytes() if max_bytes is None else max_bytes

    @staticmethod
    def _usable_dir(wanted: str) -> Optional[str]:
        for candidate in (wanted, os.path.join(tempfile.gettempdir(), f"profscope-cache-{os.getuid()}")):
            try:
                os.makedirs(candidate, exist_ok=True)
                if os.access(candidate, os.W_OK):
                    return candidate
            except OSError:
                continue
        return None  # no cache: every load parses

    def path_for(self, identity: SourceIdentity) -> Optional[str]:
        if self.cache_dir is None:
            return None
        return os.path.join(self.cache_dir, identity.cache_key() + MODEL_SUFFIX)

    def load(self, identity: SourceIdentity) -> Optional[TraceModel]:
        path = self.path_for(identity)
        if path is None or not os.path.exists(path):
            return None
        try:
            model = read_model(path)
        except OSError:
            return None
        except (ValueError, KeyError, TypeError, struct.error, msgspec.DecodeError):
            _remove_if(path, lambda st: True)  # damaged: parsed again
            return None
        try:
            os.utime(path)  # its last use, for evict()
        except OSError:
            pass
        return model

    def store(self, identity: SourceIdentity, model: TraceModel) -> None:
        path = self.path_for(identity)
        if path is None:
            return
        try:
            write_model(path, model)
        except OSError:
            pass  # a full or read-only disk only costs a re-parse next time

    def evict(self, keep: Collection[str] = ()) -> list[str]:
        """Remove least recently used entries until the cache fits ``max_bytes``; returns the removed models.

        ``keep`` holds model paths in use (never removed, even when they alone exceed the bound).
        Removing a file another process has memory-mapped is safe: its mapping stays valid.
        Derived files whose model is gone and stale temporary files are removed too.
        """
        if self.cache_dir is None:
            return []
        try:
            names = os.listdir(self.cache_dir)
        except OSError:
            return []
        now = time.time()
        entries: dict[str, list[str]] = {}  # model file name -> its model file and derived files
        for name in names:
            path = os.path.join(self.cache_dir, name)
            if name.startswith(".tmp-"):
                _remove_if(path, lambda st: now - st.st_mtime > _STALE_TEMP_SECONDS)
                continue
            match = _ENTRY_FILE.match(name)
            if match:  # other files in the folder are not the cache's: left alone
                entries.setdefault(match["model"], []).append(path)
        kept = {os.path.abspath(path) for path in keep}
        sized: list[tuple[float, int, str, list[str]]] = []
        total = 0
        for model_name, files in entries.items():
            model_path = os.path.join(self.cache_dir, model_name)
            model_stat = _stat(model_path)
            if model_stat is None:  # derived files of a removed model
                for path in files:
                    _remove_if(path, lambda st: True)
                continue
            size = sum(st.st_size for st in map(_stat, files) if st is not None)
            total += size
            if os.path.abspath(model_path) not in kept:
                sized.append((model_stat.st_mtime, size, model_path, files))
        removed: list[str] = []
        for _last_use, size, model_path, files in sorted(sized):
            if total <= self.max_bytes:
                break
            for path in sorted(files, key=len):  # the model first: without it the entry is gone
                _remove_if(path, lambda st: True)
            total -= size
            removed.append(model_path)
        return removed

    def load_or_build(
        self, path: str, progress: Optional[Callable[[float], None]] = None, parallel: bool = False
    ) -> TraceModel:
        """The cached model of a local file, parsing and caching it when needed (see load_trace's parallel)."""
        identity = local_identity(path)
        model = self.load(identity)
        if model is not None:
            return model
        model = load_trace(path, progress, parallel=parallel)
        self.store(identity, model)
        return self.load(identity) or model


def _stat(path: str) -> Optional[os.stat_result]:
    try:
        return os.stat(path)
    except OSError:
        return None


def _remove_if(path: str, condition: Callable[[os.stat_result], bool]) -> None:
    st = _stat(path)
    if st is not None and condition(st):
        try:
            os.unlink(path)
        except OSError:
            pass  # another server removed it first, or the folder is read-only


class CacheWriteError(OSError):
    """A cache file could not be written (a full or read-only disk...); the message says why, for the log."""


def _track_to_json(track: Track) -> dict[str, Any]:
    return dataclasses.asdict(track)


def checksum(array: np.ndarray) -> int:
    """CRC-32 of an array's bytes (C order)."""
    data = np.ascontiguousarray(array)
    return int(_crc32(memoryview(data).cast("B"))) if data.nbytes else 0


def write_arrays(path: str, header: dict[str, Any], arrays: dict[str, np.ndarray], checksums: bool = True,
                 publish: bool = True) -> str:
    """Write a JSON header and named arrays (each 64-byte aligned) to ``path`` atomically.

    With ``publish=False`` the file is left under a temporary name in the same folder (returned),
    for the caller to move into place (``os.replace``) once what goes beside it is written.
    Raises CacheWriteError when the file cannot be written; nothing of it is left behind then.
    """
    ordered = [(name, np.ascontiguousarray(array)) for name, array in arrays.items()]
    directory: dict[str, Any] = {}
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
    return write_arrays(path, header, arrays, publish=publish)


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
            _remove_if(published, lambda st: True)  # no server opens it again: the trace is parsed anew
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
