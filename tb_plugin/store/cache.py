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

import getpass
import hashlib
import os
import re
import socket
import struct
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, Collection, Optional

import msgspec

from ..ingest.load import load_trace
from ..model.array_file import MODEL_FORMAT_VERSION, read_model, write_model
from ..model.snapshot import SNAPSHOT_FORMAT_VERSION, SnapshotModel, read_snapshot_model
from ..model.trace_model import TraceModel

MODEL_SUFFIX = ".model"
# A memory snapshot's model (``model/snapshot.py``): its own suffix, evicted with the models.
SNAPSHOT_SUFFIX = ".snapshot"
DEFAULT_MAX_GB = 20.0
# A temporary file older than this was left by a writer that died: removed by evict().
_STALE_TEMP_SECONDS = 24 * 3600
# "<key>.model" (or a snapshot's "<key>.snapshot") and its derived files "<key>.model.<name>" (cache_key() is 40 hex
# digits).
_ENTRY_FILE = re.compile(r"^(?P<model>[0-9a-f]{40}\.(?:model|snapshot))(?:\.[A-Za-z0-9_.\-]+)?$")


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

    def cache_key(self, kind: str = "") -> str:
        """The entry's name: ``kind`` tells apart models of the same file made by different parsers (a memory
        snapshot's carries its own format version)."""
        text = f"{MODEL_FORMAT_VERSION}|{_cache_user()}|{self.location}|{self.size}|{self.mtime_ns}|{self.etag or ''}"
        if kind:
            text = f"{kind}|{text}"
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

    def snapshot_path_for(self, identity: SourceIdentity) -> Optional[str]:
        """Where a memory snapshot's model lives."""
        if self.cache_dir is None:
            return None
        return os.path.join(self.cache_dir, identity.cache_key(f"memory_snapshot{SNAPSHOT_FORMAT_VERSION}")
                            + SNAPSHOT_SUFFIX)

    def load_snapshot(self, identity: SourceIdentity) -> Optional[SnapshotModel]:
        """The cached model of a memory snapshot, if there is one (a damaged one is removed)."""
        path = self.snapshot_path_for(identity)
        if path is None or not os.path.exists(path):
            return None
        try:
            model = read_snapshot_model(path)
        except OSError:
            return None
        except (ValueError, KeyError, TypeError, struct.error, msgspec.DecodeError):
            _remove_if(path, lambda st: True)
            return None
        try:
            os.utime(path)
        except OSError:
            pass
        return model

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
                _remove_if(path, lambda st: now - st.st_mtime > _STALE_TEMP_SECONDS or _writer_gone(name))
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


# An unfinished file of ``ArrayFileWriter``: ``.tmp-<host>-<pid>-<random>``.
_WRITER_TEMPORARY = re.compile(r"^\.tmp-(?P<host>.+)-(?P<pid>\d+)-[A-Za-z0-9_]+$")


def _writer_gone(name: str) -> bool:
    """Whether ``name`` is the unfinished file of a writer process of this machine that no longer runs (a parse
    killed while it built its model into the file). Files of other machines sharing the folder are left to age."""
    match = _WRITER_TEMPORARY.match(name)
    if match is None or match["host"] != socket.gethostname():
        return False
    try:
        os.kill(int(match["pid"]), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, ValueError):
        return False
    return False


def _remove_if(path: str, condition: Callable[[os.stat_result], bool]) -> None:
    st = _stat(path)
    if st is not None and condition(st):
        try:
            os.unlink(path)
        except OSError:
            pass  # another server removed it first, or the folder is read-only
