"""Packs: a trace's parsed model, the answers its pages ask first and its rank's summary, kept where the logdir
lives, so that every teammate's server opens the trace without parsing it.

Where: a trace ``<root>/<folder>/<name>`` has its pack in ``<root>/<folder>/.profscope/<name>/`` (a hidden
folder: discovery never takes it for a trace), ``<root>`` being the logdir, or the folder given by ``--packs``
when the logdir is read-only (the same relative paths below it). A local folder or any fsspec URL.

What: the files of a cache entry (``store/cache.py``), named ``model`` for ``<key>.model`` (the array file with its
CRC-32s, ``model/array_file.py``), ``model.views.json`` and ``model.lod`` (``store/precomputed.py``), plus the rank's
summary as Parquet tables ``model.<table>.parquet`` (``views/distributed/rank_summary.py``: steps, collectives, operators,
kernels), all in ``<key>/``, and a small manifest ``pack.json`` written last. Nothing executable: arrays, JSON and
Parquet. The key is the source's identity: its name (its folder is where the pack lies), size, modification time and
content tag, and the pack's and the model's format versions; the manifest names the key and the size and CRC-32 of
every file, and what the runs list shows of the span (``listing``: its facts, recorded rank and framework, from
``views/answers.span_listing``), so that a server lists a packed span from its manifest alone.

A folder's summary: ``profscope ingest`` ends with a reduce step that writes, per folder of packs, every pack's steps
and collectives tables in one pair of Parquet files (``<folder>/.profscope/.ranks/<key>/ranks.<table>.parquet``,
manifest ``.ranks/summary.json`` written last; ``store/pack_summary.py``), keyed by its members' names and pack keys.
A server answers a run of a thousand ranks from that one read; a rank the folder's summary does not hold at its
current key is read from its own pack. The name starts with a dot: discovery never takes a hidden file for a trace,
so no trace's pack folder is named so.

Visible atomically, also on object stores that cannot rename: a new pack's files go into a folder of their own key,
the manifest is written (replaced) last, and the folders of older keys are removed after it. A reader that finds no
manifest, or one for another key (the trace changed since), or files that do not match it, parses the trace as
before; a damaged pack is never repaired or removed by a reader.

How a server uses one (``store/runs.py``): a local pack's span is listed ready from its manifest, and its model
memory-mapped where it lies (read-only: nothing is written beside it) when a page first asks for it; a remote one is
copied once into the local cache as the entry of its trace, each file checked against the manifest's CRC-32 on the
way. Format 2 added the listing (packs of format 1 are ignored, and ingested again). The listing and the summary
tables are answers of the views: the manifests name the ``VIEWS_VERSION`` that made them, and a server of other views
lists such a span from its model and makes its summary again (the model itself stays good; a folder's summary of
other views is not read, and ingest writes it again of the packs of the current views only).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import posixpath
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ..model.array_file import MODEL_FORMAT_VERSION
from ..model.stored_answers import VIEWS_VERSION
from .storage import remote_scheme

logger = logging.getLogger(__name__)

PACK_FORMAT = 2
PACK_FOLDER = ".profscope"
MANIFEST = "pack.json"
MODEL = "model"
SUMMARY_TABLES = ("steps", "collectives", "operators", "kernels")
# A folder's summary (see above): its pack folder's name, manifest, tables and format.
FOLDER_SUMMARY = ".ranks"
FOLDER_MANIFEST = "summary.json"
FOLDER_TABLES = ("steps", "collectives")
FOLDER_SUMMARY_FORMAT = 1
_FOLDER_MANIFEST_LIMIT = 64 << 20
_MANIFEST_LIMIT = 1 << 20
_BLOCK = 4 << 20

try:  # ISA-L's CRC-32 is ten times zlib's
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a declared dependency
    from zlib import crc32 as _crc32


class PackError(Exception):
    """A pack that cannot be used (missing, stale, damaged); the message says why, for the log."""


def summary_name(table: str) -> str:
    return f"{MODEL}.{table}.parquet"


def folder_summary_name(table: str) -> str:
    return f"ranks.{table}.parquet"


def pack_key(relative: str, size: int, mtime_ns: int, etag: Optional[str]) -> str:
    """The key of a trace's pack: its name, size, mtime and tag, and the model format. The folder is not part of it
    (the pack lies in the trace's own folder): a logdir moved or mounted elsewhere keeps its packs."""
    text = f"{PACK_FORMAT}|{MODEL_FORMAT_VERSION}|{posixpath.basename(relative)}|{size}|{mtime_ns}|{etag or ''}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def _join(root: str, *parts: str) -> str:
    parts = tuple(p for p in parts if p and p != ".")
    if remote_scheme(root) is not None:
        return "/".join([root.rstrip("/"), *parts])
    return os.path.join(root, *parts)


def pack_folder(root: str, relative: str) -> str:
    """The pack folder of the trace at ``relative`` (logdir-relative, '/'-separated) under ``root``."""
    folder, name = posixpath.split(relative)
    return _join(root, *folder.split("/"), PACK_FOLDER, name)


def _is_key(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 40 and all(c in "0123456789abcdef" for c in value)


def folder_summary_key(members: Iterable[tuple[str, str]]) -> str:
    """The key of a folder's summary: its members' trace names and pack keys, in order."""
    text = "|".join(f"{name}={key}" for name, key in members)
    return hashlib.sha256(f"{FOLDER_SUMMARY_FORMAT}|{text}".encode("utf-8")).hexdigest()[:40]


@dataclass(frozen=True)
class PackRef:
    """A current pack: where its files are and what its manifest says."""

    folder: str  # the key's folder: <pack folder>/<key>
    manifest: dict[str, Any]
    relative: str = ""  # the trace's path relative to the logdir ('/'-separated)

    @property
    def key(self) -> str:
        key: str = self.manifest["key"]
        return key

    @property
    def listing(self) -> dict[str, Any]:
        """What the runs list shows of the span (checked by ``check_manifest``)."""
        listing: dict[str, Any] = self.manifest["listing"]
        return listing

    @property
    def views_current(self) -> bool:
        """Whether its listing and summary tables were made by the views of this version (``VIEWS_VERSION``): a
        pack made before the views changed keeps its model, but what the views made from it is made again."""
        return self.manifest.get("views_version") == VIEWS_VERSION

    @property
    def files(self) -> dict[str, dict[str, int]]:
        files: dict[str, dict[str, int]] = self.manifest["files"]
        return files

    def location(self, name: str) -> str:
        return _join(self.folder, name)


class PackRoot:
    """Where packs are read and written: a local folder, or a URL read through fsspec."""

    def __init__(self, root: str, storage_options: Optional[dict[str, Any]] = None) -> None:
        self.root = root[len("file://"):] if root.startswith("file://") else root
        self.remote = remote_scheme(self.root) is not None
        self.storage_options = dict(storage_options or {})
        self._fs: Any = None

    def filesystem(self) -> Any:
        if self._fs is None:
            import fsspec.core

            self._fs, _ = fsspec.core.url_to_fs(self.root, **self.storage_options)
        return self._fs

    def _fs_path(self, location: str) -> str:
        fs = self.filesystem()
        return fs._strip_protocol(location)  # noqa: SLF001 - fsspec's own way from a URL to its path

    # --- reading --------------------------------------------------------------------------------------

    def read_bytes(self, location: str, limit: Optional[int] = None) -> Optional[bytes]:
        try:
            if self.remote:
                data = self.filesystem().cat_file(self._fs_path(location))
            else:
                with open(location, "rb") as f:
                    data = f.read(limit if limit is not None else -1)
        except FileNotFoundError:
            return None
        except Exception as exc:  # noqa: BLE001 - unreadable is missing: the trace is parsed
            logger.debug("profscope: cannot read %s: %s", location, exc)
            return None
        return bytes(data)

    def find(self, relative: str, size: int, mtime_ns: int, etag: Optional[str]) -> Optional[PackRef]:
        """The current pack of a trace, else None (no manifest, another key, a manifest that does not read)."""
        folder = pack_folder(self.root, relative)
        data = self.read_bytes(_join(folder, MANIFEST), _MANIFEST_LIMIT)
        if data is None:
            return None
        try:
            manifest = check_manifest(json.loads(data))
        except (ValueError, PackError) as exc:
            logger.info("profscope: ignoring the pack of %s: %s", relative, exc)
            return None
        if manifest["key"] != pack_key(relative, size, mtime_ns, etag):
            return None  # the trace changed since (or another version of Profscope wrote it)
        return PackRef(_join(folder, manifest["key"]), manifest, relative)

    def find_folder_summary(self, folder: str) -> Optional["FolderSummaryRef"]:
        """The summary of the packs of ``folder`` (logdir-relative, '/'-separated; '' or '.' for the logdir), else
        None (none written, or a manifest that does not read)."""
        location = pack_folder(self.root, posixpath.join(folder, FOLDER_SUMMARY) if folder not in ("", ".")
                               else FOLDER_SUMMARY)
        data = self.read_bytes(_join(location, FOLDER_MANIFEST), _FOLDER_MANIFEST_LIMIT)
        if data is None:
            return None
        try:
            manifest = check_folder_manifest(json.loads(data))
        except (ValueError, PackError) as exc:
            logger.info("profscope: ignoring the folder summary in %s: %s", location, exc)
            return None
        return FolderSummaryRef(_join(location, manifest["key"]), manifest)

    def copy_into(self, ref: PackRef, target_model: str) -> None:
        """Copy a pack's files beside ``target_model`` (a cache entry: ``<key>.model`` and ``<key>.model.<x>``),
        each checked against the manifest; the model is moved into place last. Raises PackError."""
        folder = os.path.dirname(target_model)
        placed: list[str] = []
        try:
            for name in sorted(ref.files, key=lambda n: n == MODEL):  # the model last
                expected = ref.files[name]
                final = target_model + name[len(MODEL):]
                fd, temporary = tempfile.mkstemp(prefix=".tmp-", dir=folder)
                crc, size = 0, 0
                with os.fdopen(fd, "wb") as out:
                    try:
                        with self._open(ref.location(name)) as source:
                            while block := source.read(_BLOCK):
                                crc, size = _crc32(block, crc), size + len(block)
                                out.write(block)
                    except BaseException:
                        os.unlink(temporary)
                        raise
                if size != expected["size"] or crc != expected["crc32"]:
                    os.unlink(temporary)
                    raise PackError(f"{name} does not match the pack's manifest")
                os.replace(temporary, final)
                placed.append(final)
        except PackError:
            _remove(placed)
            raise
        except Exception as exc:  # noqa: BLE001 - network, disk: the trace is parsed instead
            _remove(placed)
            raise PackError(f"could not copy the pack ({type(exc).__name__}: {exc})") from None

    def _open(self, location: str) -> Any:
        if self.remote:
            return self.filesystem().open(self._fs_path(location), "rb")
        return open(location, "rb")

    # --- writing ------------------------------------------------------------------------------------------

    def publish(self, relative: str, key: str, staged: str, manifest: dict[str, Any],
                manifest_name: str = MANIFEST) -> str:
        """Put the files of ``staged`` (a local folder) into the pack of ``relative`` under ``key``, then the
        manifest, then remove older keys' folders. Returns the pack folder. ``staged`` may already be the key's
        folder (a local pack is built in place)."""
        folder = pack_folder(self.root, relative)
        target = _join(folder, key)
        encoded = json.dumps(manifest, sort_keys=True).encode("utf-8")
        if self.remote:
            fs = self.filesystem()
            for name in manifest["files"]:
                fs.put_file(os.path.join(staged, name), self._fs_path(_join(target, name)))
            fs.pipe_file(self._fs_path(_join(folder, manifest_name)), encoded)
            try:
                for entry in fs.ls(self._fs_path(folder), detail=False):
                    base = posixpath.basename(entry.rstrip("/"))
                    if base not in (key, manifest_name):
                        fs.rm(entry, recursive=True)
            except Exception:  # noqa: BLE001 - an old folder left behind costs disk only
                logger.debug("profscope: could not remove old packs in %s", folder, exc_info=True)
            return folder
        if os.path.abspath(staged) != os.path.abspath(target):
            os.makedirs(target, exist_ok=True)
            for name in manifest["files"]:
                shutil.copyfile(os.path.join(staged, name), os.path.join(target, name))
        os.makedirs(folder, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        with os.fdopen(fd, "wb") as out:
            out.write(encoded)
        os.replace(temporary, os.path.join(folder, manifest_name))
        for entry in os.listdir(folder):
            if entry not in (key, manifest_name) and not entry.startswith(".tmp-"):
                shutil.rmtree(os.path.join(folder, entry), ignore_errors=True)
        return folder

    def staging_folder(self, relative: str, key: str) -> tuple[str, bool]:
        """Where to build a pack: the key's folder itself for a local root (never visible before its manifest),
        else a temporary folder (True: remove it afterwards)."""
        if self.remote:
            return tempfile.mkdtemp(prefix="profscope-pack-"), True
        folder = _join(pack_folder(self.root, relative), key)
        os.makedirs(folder, exist_ok=True)
        return folder, False


def check_manifest(manifest: Any) -> dict[str, Any]:
    """A manifest read from anyone's storage, checked for the shape this version writes. Raises PackError."""
    if not isinstance(manifest, dict) or manifest.get("format") != PACK_FORMAT:
        raise PackError("a pack of another format")
    if manifest.get("model_format") != MODEL_FORMAT_VERSION:
        raise PackError("a model of another format version")
    key, files = manifest.get("key"), manifest.get("files")
    if not _is_key(key):
        raise PackError("no valid key")
    if not isinstance(files, dict) or MODEL not in files:
        raise PackError("no model")
    for name, info in files.items():
        if not (isinstance(name, str) and (name == MODEL or (name.startswith(MODEL + ".") and "/" not in name
                                                             and ".." not in name))):
            raise PackError(f"an unexpected file name {name!r}")
        _check_file_entry(name, info)
    if manifest.get("views_version") == VIEWS_VERSION:  # else not read: the span is listed from its model
        check_listing(manifest.get("listing"))
    return manifest


def _check_file_entry(name: str, info: Any) -> None:
    if not (isinstance(info, dict) and _is_int(info.get("size")) and _is_int(info.get("crc32"))):
        raise PackError(f"no size and checksum for {name!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_listing(listing: Any) -> dict[str, Any]:
    """A manifest's listing (``views/answers.span_listing``: ``facts``, ``rank``, ``framework``), checked for its
    shape: the runs list passes it on as it is. Raises PackError."""
    if not isinstance(listing, dict) or set(listing) != {"facts", "rank", "framework"}:
        raise PackError("no listing")
    facts, rank, framework = listing["facts"], listing["rank"], listing["framework"]
    if not (rank is None or _is_int(rank)) or not (framework is None or isinstance(framework, str)):
        raise PackError("a listing's rank or framework of another type")
    if not isinstance(facts, dict) or set(facts) != {"start_time", "duration", "steps", "device"}:
        raise PackError("a listing without its facts")
    steps = facts["steps"]
    if not (all(facts[k] is None or _is_number(facts[k]) for k in ("start_time", "duration"))
            and (facts["device"] is None or isinstance(facts["device"], str))
            and (steps is None or (isinstance(steps, dict) and set(steps) - {"left_out"} == {"count", "first", "last"}
                                   and _is_int(steps["count"]) and _is_int(steps.get("left_out", 0))
                                   and all(steps[k] is None or _is_int(steps[k]) for k in ("first", "last"))))):
        raise PackError("a listing's facts of another type")
    return listing


@dataclass(frozen=True)
class FolderSummaryRef:
    """A folder's summary: where its files are and what its manifest says (its members, in row order)."""

    folder: str  # <folder>/.profscope/.ranks/<key>
    manifest: dict[str, Any]

    @property
    def members(self) -> list[dict[str, Any]]:
        members: list[dict[str, Any]] = self.manifest["members"]
        return members

    def location(self, name: str) -> str:
        return _join(self.folder, name)


def check_folder_manifest(manifest: Any) -> dict[str, Any]:
    """A folder summary's manifest from anyone's storage, checked for the shape this version writes: its members
    (trace name, pack key, the summary's scalars, rows per table) and files. Raises PackError."""
    if not isinstance(manifest, dict) or manifest.get("format") != FOLDER_SUMMARY_FORMAT:
        raise PackError("a folder summary of another format")
    if manifest.get("views_version") != VIEWS_VERSION:
        raise PackError("a folder summary made by other views")
    members, files = manifest.get("members"), manifest.get("files")
    if not isinstance(members, list) or not isinstance(files, dict):
        raise PackError("no members or files")
    if set(files) != {folder_summary_name(t) for t in FOLDER_TABLES}:
        raise PackError("unexpected files")
    for name, info in files.items():
        _check_file_entry(name, info)
    for member in members:
        if not (isinstance(member, dict) and isinstance(member.get("name"), str) and _is_key(member.get("key"))
                and isinstance(member.get("meta"), dict)
                and all(_is_int(member.get(t)) and member[t] >= 0 for t in FOLDER_TABLES)):
            raise PackError("a member of another shape")
    key = manifest.get("key")
    if not _is_key(key) or key != folder_summary_key((m["name"], m["key"]) for m in members):
        raise PackError("a key that is not its members'")
    return manifest


def matches(data: bytes, entry: dict[str, int]) -> bool:
    """Whether bytes read are the file a manifest describes (its size and CRC-32)."""
    return len(data) == entry["size"] and _crc32(data) == entry["crc32"]


def file_entry(path: str) -> dict[str, int]:
    """Size and CRC-32 of a local file, for the manifest."""
    crc, size = 0, 0
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            crc, size = _crc32(block, crc), size + len(block)
    return {"size": size, "crc32": crc}


def make_manifest(key: str, relative: str, size: int, mtime_ns: int, etag: Optional[str], staged: str,
                  names: Iterable[str], summary: Optional[dict[str, Any]], listing: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": PACK_FORMAT, "model_format": MODEL_FORMAT_VERSION, "key": key,
        "source": {"path": relative, "size": size, "mtime_ns": mtime_ns, "etag": etag},
        "files": {name: file_entry(os.path.join(staged, name)) for name in names},
        "summary": summary, "listing": check_listing(listing), "views_version": VIEWS_VERSION,
        "written_by": socket.gethostname(), "written_at": time.time(),
    }


def make_folder_manifest(members: list[dict[str, Any]], staged: str) -> dict[str, Any]:
    """The manifest of a folder's summary whose files lie in ``staged``; ``members``: name, key, meta and rows per
    table of each pack, in row order."""
    return {
        "format": FOLDER_SUMMARY_FORMAT, "key": folder_summary_key((m["name"], m["key"]) for m in members),
        "views_version": VIEWS_VERSION, "members": members,
        "files": {name: file_entry(os.path.join(staged, name)) for name in map(folder_summary_name, FOLDER_TABLES)},
        "written_by": socket.gethostname(), "written_at": time.time(),
    }


def _remove(paths: Iterable[str]) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass


def load_model(root: PackRoot, ref: PackRef, cache: Any, identity: Any) -> Any:
    """The model of a current pack: a local one memory-mapped where it lies (read-only), a remote one copied into
    ``cache`` (a ``ModelCache``) as the entry of ``identity`` first. Raises PackError."""
    import struct

    import msgspec

    from ..model.array_file import read_model

    if root.remote:
        target = cache.path_for(identity)
        if target is None:
            raise PackError("no cache folder to copy the pack into")
        root.copy_into(ref, target)
        model = cache.load(identity)
        if model is None:
            raise PackError("the copied pack does not read")
        return model
    path = ref.location(MODEL)
    try:
        if os.path.getsize(path) != ref.files[MODEL]["size"]:
            raise PackError("its model's size differs from the manifest's")
        return read_model(path, owned=False)
    except (OSError, ValueError, KeyError, TypeError, struct.error, msgspec.DecodeError) as exc:
        raise PackError(f"its model does not read ({type(exc).__name__}: {exc})") from None
