"""Where a logdir lives: a local folder, or a URL read through fsspec (s3://, gs://, az://, hdfs://).

The rest of the plugin sees one small interface (``Storage``): walk the logdir's folders, stat
and open a file, name it for the cache. Files are handed around as *locations*: a local path for
a local logdir (so local logdirs behave and perform exactly as before), the full URL of the object
for a remote one (``s3://bucket/logs/run/w.1.pt.trace.json.gz``), which a parser process reopens on
its own from the URL and the storage options (``FileAccess``); no open handle ever crosses a
process boundary.

A logdir is shared: whoever can write into it must not make Profscope read anything else. A local
file is only ever opened as ``open_regular`` opens it: without blocking (a FIFO or a device named
like a trace is refused at once, never waited on), only when it is a regular file, and only when
its real path lies inside the logdir or a folder named in ``--profscope_link_roots`` /
``PROFSCOPE_LINK_ROOTS`` (for runs deliberately symlinked into a logdir). The check is made on the
opened file itself, so a link swapped in after the scan changes nothing. ``stat`` answers None for
such files (discovery then never lists them, and counts them with ``refused``'s reason), and ``walk``
does not enter a linked folder that leads outside (``refused_folders``: discovery counts it too).

Remote logdirs are read-only and need fsspec's implementation of the protocol (the ``s3``,
``gcs``, ``azure`` and ``hdfs`` extras of the package). Credentials and endpoints come from the
environment as fsspec and the cloud SDKs read them (``AWS_*`` variables and ``~/.aws``,
``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_*``, fsspec's own config files and
``FSSPEC_<PROTOCOL>_<OPTION>`` variables).
"""

from __future__ import annotations

import datetime
import logging
import os
import posixpath
import re
import stat as stat_mode
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterator, Optional, Sequence

from .. import layout

logger = logging.getLogger(__name__)

_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://")
# The extra of the package that installs the fsspec implementation of a protocol.
_EXTRA_OF_PROTOCOL = {
    "s3": "s3", "s3a": "s3",
    "gs": "gcs", "gcs": "gcs",
    "az": "azure", "abfs": "azure", "abfss": "azure", "adl": "azure",
    "hdfs": "hdfs",
}
# Object stores show an object only once it is completely written (no half-uploaded files).
_ATOMIC_PROTOCOLS = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl"}
# Environment variables that choose which service a URL reaches, by protocol; they belong to the
# cache key so that the same bucket name on two services never shares cache entries.
_ENDPOINT_ENV = {
    "s3": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
    "s3a": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
    "gs": ("STORAGE_EMULATOR_HOST",),
    "gcs": ("STORAGE_EMULATOR_HOST",),
    "az": ("AZURE_STORAGE_ACCOUNT_NAME",),
    "abfs": ("AZURE_STORAGE_ACCOUNT_NAME",),
    "abfss": ("AZURE_STORAGE_ACCOUNT_NAME",),
}
# Filesystem attributes and storage options that say which service or account a path is on.
_NAMESPACE_KEYS = ("endpoint_url", "account_name", "account_url", "host", "port")


# Folders (os.pathsep-separated) that symlinks in a local logdir may lead into, besides the logdir itself.
LINK_ROOTS_ENV = "PROFSCOPE_LINK_ROOTS"
# Why a file or folder that is there is never read (``Storage.refused``, ``Storage.refused_folders``).
REFUSED_OUTSIDE = "outside"
REFUSED_SPECIAL = "not_regular"
# ``read_head`` gives up reading after this long (a local file on a stalled network mount).
HEAD_READ_SECONDS = 5.0
_HEAD_BLOCK = 1 << 20


class NotReadable(OSError):
    """A file Profscope never reads: not a regular file, or reached through a link leading out of the logdir."""


class LogdirUnreadable(Exception):
    """The logdir cannot be listed (missing implementation, bucket, credentials...); the message is for the user."""


@dataclass(frozen=True)
class FileStat:
    """What identifies a file's content without reading it."""

    size: int
    mtime_ns: int
    etag: Optional[str] = None  # object stores: the content's tag (changes with every write)


def remote_scheme(logdir: str) -> Optional[str]:
    """The URL scheme of a remote logdir (``s3``, ``gs``...), or None for a local folder or ``file://``."""
    match = _URL.match(logdir)
    if not match or match["scheme"].lower() == "file":
        return None
    return match["scheme"].lower()


def open_storage(logdir: str, link_roots: Optional[Sequence[str]] = None) -> "Storage":
    """The storage of a logdir: a URL goes through fsspec, anything else is a local folder.

    ``link_roots``: folders that symlinks of a local logdir may lead into (default: ``PROFSCOPE_LINK_ROOTS``).
    """
    if remote_scheme(logdir) is not None:
        return FsspecStorage(logdir)
    if logdir.startswith("file://"):
        logdir = logdir[len("file://"):]
    return LocalStorage(logdir, link_roots)


def link_roots_from_env() -> tuple[str, ...]:
    """The folders of ``PROFSCOPE_LINK_ROOTS`` (separated like PATH)."""
    return tuple(part for part in os.environ.get(LINK_ROOTS_ENV, "").split(os.pathsep) if part)


def real_roots(logdir: str, link_roots: Sequence[str] = ()) -> tuple[str, ...]:
    """The real paths of the logdir and of the extra folders its links may lead into."""
    return tuple(dict.fromkeys(os.path.realpath(folder) for folder in (logdir, *link_roots)))


def is_inside(real_path: str, roots: Sequence[str]) -> bool:
    """Whether a real (resolved) path is one of ``roots`` or lies below one."""
    for root in roots:
        if real_path == root or real_path.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


def open_regular(path: str, roots: Sequence[str]) -> BinaryIO:
    """Open a local file for reading, if it is a regular file whose real path lies inside ``roots``.

    Never blocks on what a teammate can put in a logdir: the open is non-blocking (a FIFO opens at
    once and is then refused, as are devices and sockets). The real path is read from the opened
    descriptor (``/proc/self/fd``) where the system has it, so a link swapped in after the check
    cannot redirect the read. Raises ``NotReadable`` (an OSError) for anything else.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat_mode.S_ISREG(st.st_mode):
            raise NotReadable(f"{os.path.basename(path)} is not a regular file")
        if not is_inside(_real_path_of(fd, path), roots):
            raise NotReadable(f"{os.path.basename(path)} links outside the logdir")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _real_path_of(fd: int, path: str) -> str:
    """The real path of an open file: what the descriptor points at (Linux), else the path resolved now."""
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
        if real.startswith(os.sep):
            return real[: -len(" (deleted)")] if real.endswith(" (deleted)") else real
    except OSError:
        pass
    return os.path.realpath(path)


@dataclass(frozen=True)
class FileAccess:
    """How a parser process opens the logdir's files by itself: picklable, no open handle crosses processes.

    A local path is opened with ``open_regular`` under the same roots as the server's; a remote URL
    through fsspec with the logdir's storage options (credentials come from the process's environment).
    """

    roots: tuple[str, ...] = ()
    storage_options: Optional[dict[str, Any]] = None

    def open(self, location: str) -> BinaryIO:
        if remote_scheme(location) is None:
            return open_regular(location, self.roots)
        fs, path = _url_to_fs(location, self.storage_options or {})
        return fs.open(path, "rb")


def _url_to_fs(url: str, storage_options: dict[str, Any], own_instance: bool = False) -> tuple[Any, str]:
    scheme = remote_scheme(url) or ""
    try:
        import fsspec.core
    except ImportError:
        raise LogdirUnreadable(_install_hint(scheme)) from None
    try:
        options = dict(storage_options)
        if own_instance:
            options["skip_instance_cache"] = True
        return fsspec.core.url_to_fs(url, **options)
    except (ImportError, ValueError) as exc:
        # fsspec raises ImportError (or ValueError for an unknown protocol) naming what is missing.
        raise LogdirUnreadable(f"{_install_hint(scheme)} ({exc})") from None


def _install_hint(scheme: str) -> str:
    extra = _EXTRA_OF_PROTOCOL.get(scheme)
    if extra is None:
        return f"no fsspec implementation for {scheme}:// logdirs is installed"
    return f"{scheme}:// logdirs need the '{extra}' extra: pip install 'profscope[{extra}]'"


class Storage(ABC):
    """A logdir's files: walked by discovery, opened by the parsers and the download route."""

    logdir: str
    # True when a file becomes visible only once complete: no need to wait for it to settle.
    atomic_writes: bool = False

    @abstractmethod
    def walk(self) -> Iterator[tuple[str, list[str]]]:
        """(folder, sorted file names) for every folder under the logdir; hidden folders are skipped."""

    @abstractmethod
    def join(self, folder: str, name: str) -> str: ...

    @abstractmethod
    def parent(self, location: str) -> str: ...

    @abstractmethod
    def relative(self, location: str) -> str:
        """The location relative to the logdir, '/'-separated ("." for the logdir itself)."""

    @abstractmethod
    def is_asset_folder(self, folder: str) -> bool:
        """Whether ``folder`` is a run's ``plugins/profscope`` folder (the writer's layout)."""

    @abstractmethod
    def stat(self, location: str) -> Optional[FileStat]:
        """Size and modification time (and tag) of a file; None when it is gone or refused."""

    def refused(self, location: str) -> Optional[str]:
        """Why ``stat`` answered None for a file that is there but never read (``REFUSED_OUTSIDE``: a link out of
        the logdir; ``REFUSED_SPECIAL``: not a regular file, or a link to nothing); None when it is gone (or was not
        refused)."""
        return None

    def refused_folders(self) -> list[tuple[str, str]]:
        """(location, why) of the folders the last ``walk`` did not enter although they are there (a link that
        leads out of the logdir: ``REFUSED_OUTSIDE``)."""
        return []

    @abstractmethod
    def read_head(self, location: str, limit: int) -> Optional[bytes]:
        """At most the first ``limit`` bytes of a file of the logdir; None when it cannot be read.

        Safe on any name a scan found: a local file is read only when ``open_regular`` accepts it
        (regular, inside the logdir; never blocks on a FIFO), and the read stops after
        ``HEAD_READ_SECONDS`` with what it has. For sniffing a trace's head or reading a small side file.
        """

    @abstractmethod
    def read_range(self, location: str, start: int, limit: int) -> Optional[bytes]:
        """At most ``limit`` bytes of a file from ``start`` (fewer at its end), checked as ``read_head`` checks;
        None when it cannot be read. For reading further into a file's start than ``read_head`` did."""

    def read_small(self, location: str, limit: int) -> Optional[bytes]:
        """``read_head`` for a small file read at every scan (a manifest); a remote one is fetched once per version."""
        return self.read_head(location, limit)

    @abstractmethod
    def open(self, location: str) -> BinaryIO:
        """Open a file for reading (the caller closes it); a local one as ``open_regular`` does (raises NotReadable)."""

    @abstractmethod
    def identity_location(self, location: str) -> str:
        """The location as the cache knows it: unique across logdirs, hosts, endpoints and accounts."""

    @abstractmethod
    def access(self) -> FileAccess:
        """What a parser process needs besides the location to open a file of this logdir itself."""


class LocalStorage(Storage):
    """A local (or mounted) folder, read with ``os``.

    Symlinks are followed only where they lead: into the logdir itself or into one of ``link_roots``
    (default: ``PROFSCOPE_LINK_ROOTS``); every real folder is visited once, so a link loop ends.
    """

    def __init__(self, logdir: str, link_roots: Optional[Sequence[str]] = None) -> None:
        self.logdir = logdir
        self._asset_tail = os.path.join(*layout.ASSET_DIR)
        self.roots = real_roots(logdir, link_roots_from_env() if link_roots is None else link_roots)
        # Real path of each folder the last walk yielded: a file in it that is no link needs no resolving.
        self._real_folders: dict[str, str] = {}
        self._reported: set[tuple[str, str]] = set()
        self._refused: dict[str, str] = {}
        self._refused_folders: list[tuple[str, str]] = []

    def walk(self) -> Iterator[tuple[str, list[str]]]:
        visited: set[str] = set()
        real_folders: dict[str, str] = {}
        self._real_folders = real_folders
        refused_folders: list[tuple[str, str]] = []
        self._refused_folders = refused_folders
        for folder, dirs, files in os.walk(self.logdir, followlinks=True):
            real = real_folders.get(folder) or os.path.realpath(folder)
            if real in visited:
                dirs[:] = []
                continue
            visited.add(real)
            real_folders[folder] = real
            kept = []
            for name in sorted(dirs):
                if name.startswith("."):
                    continue
                path = os.path.join(folder, name)
                target = os.path.realpath(path) if os.path.islink(path) else os.path.join(real, name)
                if not is_inside(target, self.roots):
                    self._report(path, f"it links outside the logdir (to {target}); see {LINK_ROOTS_ENV}")
                    refused_folders.append((path, REFUSED_OUTSIDE))
                    continue
                real_folders[path] = target
                kept.append(name)
            dirs[:] = kept
            yield folder, sorted(files)

    def join(self, folder: str, name: str) -> str:
        return os.path.join(folder, name)

    def parent(self, location: str) -> str:
        return os.path.dirname(location)

    def relative(self, location: str) -> str:
        return os.path.relpath(location, self.logdir).replace(os.sep, "/")

    def is_asset_folder(self, folder: str) -> bool:
        return folder.endswith(os.sep + self._asset_tail) or folder == self._asset_tail

    def stat(self, location: str) -> Optional[FileStat]:
        """None for a file that is gone, is not a regular file, or links outside the logdir."""
        try:
            st = os.stat(location)
        except OSError:
            if os.path.islink(location):  # a link to nothing (or that loops): there, but nothing to read
                self._refused[location] = REFUSED_SPECIAL
            else:
                self._refused.pop(location, None)  # removed while scanning
            return None
        if not stat_mode.S_ISREG(st.st_mode):
            self._report(location, "it is not a regular file")
            self._refused[location] = REFUSED_SPECIAL
            return None
        real = self._real_path(location)
        if not is_inside(real, self.roots):
            self._report(location, f"it links outside the logdir (to {real}); see {LINK_ROOTS_ENV}")
            self._refused[location] = REFUSED_OUTSIDE
            return None
        self._refused.pop(location, None)
        return FileStat(st.st_size, st.st_mtime_ns)

    def refused(self, location: str) -> Optional[str]:
        return self._refused.get(location)

    def refused_folders(self) -> list[tuple[str, str]]:
        return list(self._refused_folders)

    def _real_path(self, location: str) -> str:
        folder = self._real_folders.get(os.path.dirname(location))
        if folder is not None and not os.path.islink(location):
            return os.path.join(folder, os.path.basename(location))
        return os.path.realpath(location)

    def _report(self, location: str, why: str) -> None:
        """Say once per file and reason why it is not read (the scan repeats every few seconds)."""
        key = (location, why)
        if key not in self._reported:
            self._reported.add(key)
            logger.warning("profscope: not reading %s: %s", location, why)

    def read_head(self, location: str, limit: int) -> Optional[bytes]:
        deadline = time.monotonic() + HEAD_READ_SECONDS
        try:
            with open_regular(location, self.roots) as f:
                parts: list[bytes] = []
                left = limit
                while left > 0 and time.monotonic() < deadline:
                    block = f.read(min(left, _HEAD_BLOCK))
                    if not block:
                        break
                    parts.append(block)
                    left -= len(block)
                return b"".join(parts)
        except OSError:
            return None

    def read_range(self, location: str, start: int, limit: int) -> Optional[bytes]:
        try:
            with open_regular(location, self.roots) as f:
                f.seek(start)
                return f.read(limit)
        except OSError:
            return None

    def open(self, location: str) -> BinaryIO:
        return open_regular(location, self.roots)

    def identity_location(self, location: str) -> str:
        return os.path.abspath(location)

    def access(self) -> FileAccess:
        return FileAccess(roots=self.roots)


class FsspecStorage(Storage):
    """A remote logdir (``s3://bucket/logs``...) read through fsspec.

    One listing per scan (``find`` of the whole prefix: a few paged requests on an object store,
    not one per folder) serves the walk and the stats. The filesystem is created on first use, in
    the refresh thread, so that a missing implementation or bad credentials become a logdir error
    rather than a failing request.
    """

    def __init__(self, logdir: str, storage_options: Optional[dict[str, Any]] = None) -> None:
        self.logdir = logdir.rstrip("/")
        self.scheme = remote_scheme(logdir) or ""
        self.atomic_writes = self.scheme in _ATOMIC_PROTOCOLS
        self._options = dict(storage_options or {})
        self._fs: Any = None
        self._root = ""  # the logdir as a path of the filesystem (no scheme)
        self._namespace: Optional[str] = None
        self._listing: dict[str, FileStat] = {}
        # Manifests are small and immutable once written: read each version once, not at every scan.
        self._small_files: dict[tuple[str, FileStat], bytes] = {}

    def filesystem(self) -> Any:
        if self._fs is None:
            # Its own instance: fsspec's instance cache would otherwise share one client (and its
            # endpoint) between logdirs with the same options.
            fs, root = _url_to_fs(self.logdir, self._options, own_instance=True)
            self._root = root.rstrip("/")
            self._fs = fs
        return self._fs

    def walk(self) -> Iterator[tuple[str, list[str]]]:
        fs = self.filesystem()
        try:
            fs.invalidate_cache(self._root)  # new spans must appear: never answer from an old listing
            entries = fs.find(self._root, withdirs=False, detail=True)
        except FileNotFoundError as exc:  # e.g. the bucket does not exist (a missing prefix is just empty)
            raise LogdirUnreadable(f"cannot list {self.logdir}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - credentials, network, permissions: reported, retried next scan
            raise LogdirUnreadable(f"cannot list {self.logdir}: {type(exc).__name__}: {exc}") from None
        if self._namespace is None:
            self._namespace = self._resolve_namespace(fs)
        prefix = self._root + "/" if self._root else ""
        listing: dict[str, FileStat] = {}
        folders: dict[str, list[str]] = defaultdict(list)
        for path, info in (entries.items() if isinstance(entries, dict) else ()):
            if info.get("type", "file") != "file" or not path.startswith(prefix):
                continue
            parts = path[len(prefix):].split("/")
            if not parts[-1] or any(part.startswith(".") or not part for part in parts[:-1]):
                continue  # hidden folders, like local ones; empty components of odd keys
            location = "/".join([self.logdir, *parts])
            listing[location] = _remote_stat(info)
            folders[posixpath.dirname(location)].append(parts[-1])
        self._listing = listing
        self._small_files = {key: data for key, data in self._small_files.items() if listing.get(key[0]) == key[1]}
        for folder in sorted(folders):
            yield folder, sorted(folders[folder])

    def join(self, folder: str, name: str) -> str:
        return f"{folder}/{name}"

    def parent(self, location: str) -> str:
        return posixpath.dirname(location) if len(location) > len(self.logdir) else location

    def relative(self, location: str) -> str:
        if location == self.logdir:
            return "."
        if location.startswith(self.logdir + "/"):
            return location[len(self.logdir) + 1:]
        return location

    def is_asset_folder(self, folder: str) -> bool:
        return folder.endswith("/" + "/".join(layout.ASSET_DIR))

    def stat(self, location: str) -> Optional[FileStat]:
        return self._listing.get(location)

    def read_head(self, location: str, limit: int) -> Optional[bytes]:
        return self.read_range(location, 0, limit)

    def read_range(self, location: str, start: int, limit: int) -> Optional[bytes]:
        stat = self._listing.get(location)
        if stat is None:
            return None  # not in the listing: no request for a file that is not there
        if start and stat.size and start >= stat.size:
            return b""  # a ranged read past the end is an error on some stores
        try:
            data = self.filesystem().cat_file(self._fs_path(location), start=start, end=start + limit)
        except Exception:  # noqa: BLE001 - an unreadable file is a missing one
            return None
        return bytes(data[:limit])

    def read_small(self, location: str, limit: int) -> Optional[bytes]:
        stat = self._listing.get(location)
        if stat is None:
            return None
        key = (location, stat)
        if key not in self._small_files:
            data = self.read_head(location, limit)
            if data is None:
                return None
            self._small_files[key] = data
        return self._small_files[key]

    def open(self, location: str) -> BinaryIO:
        return self.filesystem().open(self._fs_path(location), "rb")

    def identity_location(self, location: str) -> str:
        namespace = self._namespace if self._namespace is not None else self._namespace_from_config()
        return f"{location}#{namespace}" if namespace else location

    def access(self) -> FileAccess:
        return FileAccess(storage_options=dict(self._options))

    def _fs_path(self, location: str) -> str:
        if not location.startswith(self.logdir + "/"):
            raise FileNotFoundError(location)  # only files of this logdir are ever opened
        self.filesystem()
        return f"{self._root}/{location[len(self.logdir) + 1:]}" if self._root else location[len(self.logdir) + 1:]

    def _namespace_from_config(self) -> str:
        """Which service the URLs reach, from the storage options and the environment."""
        found: dict[str, str] = {}
        client_kwargs = self._options.get("client_kwargs") or {}
        for key in _NAMESPACE_KEYS:
            value = self._options.get(key) or client_kwargs.get(key)
            if value:
                found[key] = str(value)
        for variable in _ENDPOINT_ENV.get(self.scheme, ()):
            if "endpoint_url" not in found and os.environ.get(variable):
                found["endpoint_url"] = os.environ[variable]
        return "&".join(f"{key}={value}" for key, value in sorted(found.items()))

    def _resolve_namespace(self, fs: Any) -> str:
        """Like ``_namespace_from_config``, preferring what the connected filesystem actually uses."""
        found: dict[str, str] = {}
        try:
            options = getattr(fs, "storage_options", {}) or {}
            client_kwargs = options.get("client_kwargs") or {}
            for key in _NAMESPACE_KEYS:
                value = getattr(fs, key, None) or options.get(key) or client_kwargs.get(key)
                if isinstance(value, (str, int)) and value:
                    found[key] = str(value)
            # s3fs: the endpoint botocore resolved (from options, AWS_ENDPOINT_URL or the config file).
            client = getattr(fs, "_s3", None)  # set once connected; never connects by itself
            endpoint = getattr(getattr(client, "meta", None), "endpoint_url", None)
            if isinstance(endpoint, str) and endpoint:
                found["endpoint_url"] = endpoint
        except Exception:  # noqa: BLE001 - implementation details differ; the configured values still count
            pass
        if not found:
            return self._namespace_from_config()
        return "&".join(f"{key}={value}" for key, value in sorted(found.items()))


def _remote_stat(info: dict[str, Any]) -> FileStat:
    """Size, modification time and content tag from an fsspec ``info`` dict (keys differ by implementation)."""
    size = int(info.get("size") or info.get("Size") or 0)
    mtime_ns = 0
    for key in ("LastModified", "last_modified", "mtime", "updated", "modified", "created", "creation_time"):
        value = info.get(key)
        if value is not None:
            mtime_ns = _to_ns(value)
            if mtime_ns:
                break
    etag = None
    for key in ("ETag", "etag", "md5Hash", "generation"):
        value = info.get(key)
        if value:
            etag = str(value).strip('"')
            break
    return FileStat(size, mtime_ns, etag)


def _to_ns(value: Any) -> int:
    """Nanoseconds since the epoch from a datetime, an ISO string or seconds."""
    try:
        if isinstance(value, str):
            value = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if isinstance(value, datetime.datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=datetime.timezone.utc)
            whole = int(value.timestamp())
            return whole * 1_000_000_000 + value.microsecond * 1000
        if isinstance(value, (int, float)):  # seconds, as fsspec reports local and HDFS times
            whole = int(value)
            return whole * 1_000_000_000 + round((value - whole) * 1_000_000_000)
    except (ValueError, OverflowError, OSError):
        pass
    return 0
