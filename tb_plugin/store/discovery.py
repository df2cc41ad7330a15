"""Run discovery: which trace files of the logdir form which run, worker and span.

Every layout of the on-disk contract (``layout.py``: torch's handler, Paddle's chrome export,
MindSpore's ``*_ascend_ms`` span folders and older ``*_timeline_display_<id>.json`` profiler folders, msprof's
``msprof_<ts>.json`` reports and CANN's older device timelines, TensorFlow's and JAX's profile plugin folders,
the writer) is found at any depth by its names. Any other ``.json`` or ``.json.gz`` file is a span when its
top level is a Chrome trace's (``ingest/chrome/sniff.py``: its top-level keys are read in order, the values of
other keys skipped unbuilt, until a trace's key, at most 16 MB of inflated data), read through the storage layer;
the verdict is kept by the file's size, mtime and tag, so a rescan of an unchanged logdir reads no file at all.
Files that are no span are counted by reason (``SkippedFiles``: TensorBoard event files, JSON that is no trace,
files of other types...), which the runs route reports.

A file that is still being written (a live training job) is reported only once it is complete: a
writer span when its manifest exists, any other file when its size and mtime have
not changed for ``settle_seconds`` (at once in an object store, where an object appears complete).
The logdir is read through ``storage.py``: a local folder or a remote URL (s3://, gs://...).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import msgspec

from .. import layout
from ..ingest.chrome import sniff
from ..ingest.mindspore import memory_record
from .storage import HEAD_READ_SECONDS, LINK_ROOTS_ENV, REFUSED_OUTSIDE, FileStat, Storage, open_storage


@dataclass(frozen=True)
class SpanSource:
    """One trace file: a span of a worker of a run."""

    run: str  # path of the run folder relative to the logdir ("." for the logdir itself)
    worker: str
    span: str
    path: str  # a local path, or the object's full URL in a remote logdir (see storage.py)
    layout: str  # "torch", "paddle", "mindspore", "msprof", "writer", "profile_plugin", "cann" or "chrome"
    framework: Optional[str]
    size: int
    mtime_ns: int
    manifest: Optional[dict[str, Any]] = field(default=None, compare=False, hash=False)
    etag: Optional[str] = None  # the content tag of an object in a remote logdir
    # Side files read together with the trace (a MindSpore span's memory record): (location, size, mtime_ns).
    companions: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True)
class SnapshotSource:
    """One PyTorch allocator memory snapshot of a run, and the worker and span it belongs to where known."""

    run: str
    name: str  # its path relative to the run folder: what tells a run's snapshots apart
    path: str
    size: int
    mtime_ns: int
    worker: Optional[str] = None
    span: Optional[str] = None
    writer: bool = False  # written by Profscope's writer (renamed into place: complete once seen)
    etag: Optional[str] = None


# Why a file of the logdir is no span (the keys of ``SkippedFiles.counts``).
SKIP_EVENT_FILE = "tensorboard_event_file"
SKIP_NOT_A_TRACE = "not_a_chrome_trace"
SKIP_TRACE_KEY_TOO_FAR = "no_trace_key_in_sniff_limit"
SKIP_EMPTY = "empty"
SKIP_UNREADABLE = "unreadable"
SKIP_PROFILER_FILE = "profiler_side_file"
SKIP_OTHER_TYPE = "not_json"
SKIP_NOT_A_SNAPSHOT = "pickle_not_a_memory_snapshot"
SKIP_OUTSIDE_LOGDIR = "links_outside_logdir"
_EXAMPLES_PER_REASON = 3
# Each reason in the user's words (the command line says them; the page has its own copy, empty_state.ts).
SKIP_REASON_TEXTS = {
    SKIP_EVENT_FILE: "a TensorBoard event file",
    SKIP_NOT_A_TRACE: "a JSON file that is not a Chrome trace (its top level has no traceEvents list, no key of "
                      "Kineto's such as schemaVersion, and is not an array of events)",
    SKIP_TRACE_KEY_TOO_FAR: "a JSON file with no trace key in its first 16 MB (profscope import reads it whole)",
    SKIP_EMPTY: "an empty file",
    SKIP_UNREADABLE: "a file that could not be read (not a regular file, no permission, or a broken gzip)",
    SKIP_PROFILER_FILE: "another file of a profiler's output folder (its timeline is the span)",
    SKIP_OTHER_TYPE: "not a .json or .json.gz file",
    SKIP_NOT_A_SNAPSHOT: "a .pickle or .pkl file that is not a pickled memory snapshot",
    SKIP_OUTSIDE_LOGDIR: f"a link (to a file or a folder) that leads outside the logdir, never read (allow its target "
                         f"with TensorBoard's --profscope_link_roots, serve's --link-root or {LINK_ROOTS_ENV})",
}


@dataclass
class SkippedFiles:
    """The files of a scan that are no span, counted by reason, with the first few of each (logdir-relative);
    ``files`` keeps every one of them with its reason (the command line names those of a run)."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    files: list[tuple[str, str]] = field(default_factory=list)

    def add(self, reason: str, relative_path: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < _EXAMPLES_PER_REASON:
            shown.append(relative_path)
        self.files.append((relative_path, reason))

    def under(self, relative_folder: str) -> list[tuple[str, str]]:
        """(path, reason) of the skipped files in a folder of the logdir or below it ("." for the logdir)."""
        if relative_folder in ("", "."):
            return list(self.files)
        prefix = relative_folder.rstrip("/") + "/"
        return [(path, reason) for path, reason in self.files if path.startswith(prefix)]

    def as_json(self) -> dict[str, Any]:
        """The runs route's ``skipped`` field."""
        return {"count": sum(self.counts.values()), "reasons": dict(sorted(self.counts.items())),
                "examples": {reason: list(paths) for reason, paths in sorted(self.examples.items())}}


@dataclass
class ScanResult:
    sources: list[SpanSource]
    skipped: SkippedFiles
    snapshots: list[SnapshotSource] = field(default_factory=list)


_MANIFEST_LIMIT = 1 << 20
# Bytes of a file read first for its verdict (one ranged read of a remote object); most files tell within them.
_SNIFF_READ_BYTES = 64 * 1024
# Bytes read at a time after the first read, and how long a verdict may take (a stalled network mount).
_SNIFF_RANGE_BYTES = 1 << 20
_SNIFF_SECONDS = 2 * HEAD_READ_SECONDS
_SKIP_OF_VERDICT = {sniff.NOT_A_TRACE: SKIP_NOT_A_TRACE, sniff.EMPTY: SKIP_EMPTY, sniff.UNREADABLE: SKIP_UNREADABLE,
                    sniff.BEYOND_LIMIT: SKIP_TRACE_KEY_TOO_FAR}
# Folders of an Ascend profiler's output: besides the timeline a layout names, their files are no spans
# (msprof's per-module reports, msprof_tx_*.json, communication.json... would repeat the same window).
_PROFILER_TREE_FOLDER = re.compile(r"^(?:PROF_.*|.+_\d+_ascend_(?:ms|pt)|ASCEND_PROFILER_OUTPUT|mindstudio_profiler_output)$")


class ContentCache:
    """What discovery read from the logdir's files, by location and ``FileStat`` (size, mtime, tag): a file
    is read again only when it changed, so a rescan of an unchanged logdir reads no content."""

    def __init__(self) -> None:
        # location -> (stat, what was read): a trace verdict (None for a Chrome trace, else why it is none)
        # or a writer manifest.
        self._known: dict[str, tuple[FileStat, Any]] = {}

    def _remembered(self, location: str, stat: FileStat, read: Callable[[], Any]) -> Any:
        known = self._known.get(location)
        if known is not None and known[0] == stat:
            return known[1]
        value = read()
        self._known[location] = (stat, value)
        return value

    def trace_verdict(self, storage: Storage, location: str, stat: FileStat) -> Optional[str]:
        """None when the file starts like a Chrome trace, else why it is skipped."""
        verdict: Optional[str] = self._remembered(location, stat, lambda: _sniff(storage, location))
        return verdict

    def snapshot_verdict(self, storage: Storage, location: str, stat: FileStat) -> Optional[str]:
        """None when the file starts like a memory snapshot, else why it is skipped."""
        verdict: Optional[str] = self._remembered(location + "#snapshot", stat,
                                                  lambda: _sniff_snapshot(storage, location))
        return verdict

    def manifest(self, storage: Storage, location: str) -> Optional[dict[str, Any]]:
        stat = storage.stat(location)
        if stat is None:
            return None
        manifest: Optional[dict[str, Any]] = self._remembered(location, stat, lambda: _read_manifest(storage, location))
        return manifest

    def keep_only(self, locations: set[str]) -> None:
        """Forget the files that are gone (after a scan that saw ``locations``)."""
        self._known = {k: v for k, v in self._known.items() if k.removesuffix("#snapshot") in locations}


class _SniffedFile:
    """A file of the logdir as a stream for ``sniff.sniff_trace``: the first bytes already read, then ranges read
    through the storage (so with its checks: regular files inside the logdir, objects of the listing) on demand,
    until a deadline."""

    def __init__(self, storage: Storage, location: str, head: bytes) -> None:
        self._storage = storage
        self._location = location
        self._head = head
        self._offset = 0
        self._deadline = time.monotonic() + _SNIFF_SECONDS

    def read(self, size: int = -1) -> bytes:
        if self._offset < len(self._head):
            end = len(self._head) if size < 0 else min(len(self._head), self._offset + size)
            out = self._head[self._offset:end]
        elif len(self._head) < _SNIFF_READ_BYTES:
            return b""  # the first read got the whole file
        else:
            if time.monotonic() > self._deadline:
                raise OSError("reading the file's start took too long")
            length = _SNIFF_RANGE_BYTES if size < 0 else min(size, _SNIFF_RANGE_BYTES)
            data = self._storage.read_range(self._location, self._offset, length)
            if data is None:
                raise OSError("the file could not be read")
            out = data
        self._offset += len(out)
        return out


def _sniff(storage: Storage, location: str) -> Optional[str]:
    """Tell from a file's top level (inflated when gzipped) whether it is a Chrome trace: None when it is, else
    why it is skipped. Reads as little of it as the verdict needs (see ``sniff``); nothing is parsed."""
    raw = storage.read_head(location, _SNIFF_READ_BYTES)
    if raw is None:
        return SKIP_UNREADABLE  # not a regular file (a FIFO is never waited on), no permission, gone
    if not raw:
        return SKIP_EMPTY
    try:
        verdict = sniff.sniff_trace(_SniffedFile(storage, location, raw))  # type: ignore[arg-type]
    except OSError:
        return SKIP_UNREADABLE
    return None if verdict == sniff.TRACE else _SKIP_OF_VERDICT[verdict]


def _sniff_snapshot(storage: Storage, location: str) -> Optional[str]:
    """Read a few hundred bytes of a file's start and tell whether it is a pickled memory snapshot; nothing is
    unpickled (``layout.starts_like_memory_snapshot`` looks at opcodes)."""
    raw = storage.read_head(location, layout.SNAPSHOT_SNIFF_BYTES)
    if raw is None:
        return SKIP_UNREADABLE
    if not raw:
        return SKIP_EMPTY
    return None if layout.starts_like_memory_snapshot(raw) else SKIP_NOT_A_SNAPSHOT


def _read_manifest(storage: Storage, location: str) -> Optional[dict[str, Any]]:
    data = storage.read_small(location, _MANIFEST_LIMIT)
    if data is None:
        return None
    try:
        value = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # anyone's file: garbled is missing
        return None
    return value if isinstance(value, dict) else None


def scan_logdir(logdir: str, storage: Optional[Storage] = None) -> list[SpanSource]:
    """Every trace file under ``logdir`` with its run/worker/span, complete or not (see ``scan``)."""
    return scan(logdir, storage).sources


def scan(logdir: str, storage: Optional[Storage] = None, cache: Optional[ContentCache] = None) -> ScanResult:
    """Every trace file under ``logdir`` with its run/worker/span, complete or not, and the files skipped.

    ``storage`` reads the logdir (default: ``open_storage(logdir)``); pass it to keep one remote
    filesystem between scans, and ``cache`` to read no unchanged file twice. Raises ``LogdirUnreadable``
    when a remote logdir cannot be listed.
    """
    storage = storage or open_storage(logdir)
    cache = cache or ContentCache()
    found: list[SpanSource] = []
    snapshots: list[SnapshotSource] = []
    skipped = SkippedFiles()
    read_locations: set[str] = set()
    memory_records: dict[str, str] = {}  # MindSpore span folder -> its memory record
    for folder, files in storage.walk():
        in_assets = storage.is_asset_folder(folder)
        relative_folder = storage.relative(folder)
        components = [] if relative_folder in ("", ".") else relative_folder.split("/")
        in_profiler_tree = any(_PROFILER_TREE_FOLDER.match(part) for part in components)
        if _basename(storage, folder) == memory_record.RECORD_FOLDER:
            record = memory_record.record_name_for(list(files))
            if record is not None:
                memory_records[storage.parent(folder)] = storage.join(folder, record)
        for name in files:
            if name.startswith("."):
                continue  # hidden, or the writer's temporary files
            path = storage.join(folder, name)
            st: Optional[FileStat] = None
            run_folder = folder
            parsed: Optional[layout.TraceFileName] = None
            if in_assets:
                parsed = layout.parse_writer_trace_name(name)
                run_folder = storage.parent(storage.parent(folder))
                if parsed is None:
                    owner = layout.parse_writer_snapshot_name(name)
                    if owner is not None:  # <run>/plugins/profscope/<worker>.<span>.memory_snapshot.pickle
                        _add_snapshot(storage, cache, path, run_folder, owner, True, snapshots, skipped,
                                      read_locations)
                    continue  # the writer's manifests and temporary files
            elif name == layout.MINDSPORE_TRACE_FILE and (mindspore := _mindspore_span(storage, folder, name)):
                # <run>/<worker>_<ts>_ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view.json
                parsed, run_folder = mindspore
            elif (msprof := layout.parse_msprof_trace_path(components[-3:], name)) is not None:
                # <run>/[<worker>_<ts>_ascend_ms/][PROF_<...>/]<output folder>/msprof_<ts>.json
                parsed, run_folder = msprof.name, _ancestor(storage, folder, msprof.run_levels_up)
            elif (named := (layout.parse_torch_trace_name(name) or layout.parse_paddle_trace_name(name)
                            or layout.parse_mindspore_timeline_name(name))) is not None:
                parsed = named
            elif (other := (layout.parse_profile_plugin_trace_path(components, name)
                            or layout.parse_cann_timeline_path(components, name))) is not None:
                parsed, run_folder = other.name, _ancestor(storage, folder, other.run_levels_up)
            elif layout.is_snapshot_candidate(name):
                # A memory snapshot: of the folder's run, or the folder above when the folder names a rank.
                rank = layout.rank_in_name(layout.snapshot_stem(name))
                folder_rank = layout.rank_in_name(_basename(storage, folder)) if components else None
                snapshot_run = storage.parent(folder) if rank is None and folder_rank is not None else folder
                worker_rank = rank if rank is not None else folder_rank
                worker = (f"rank{worker_rank}", None) if worker_rank is not None else None
                _add_snapshot(storage, cache, path, snapshot_run, worker, False, snapshots, skipped, read_locations)
                continue
            elif layout.is_event_file(name):
                skipped.add(SKIP_EVENT_FILE, storage.relative(path))
                continue
            elif in_profiler_tree:
                skipped.add(SKIP_PROFILER_FILE, storage.relative(path))
                continue
            elif layout.is_json_candidate(name):
                st = storage.stat(path)
                if st is None:
                    _add_refused(skipped, storage, path)
                    continue  # refused, or removed while scanning
                if not layout.is_trace_by_name(name):
                    read_locations.add(path)
                    reason = cache.trace_verdict(storage, path, st)
                    if reason is not None:
                        skipped.add(reason, storage.relative(path))
                        continue
                chrome = layout.parse_chrome_trace_path(_basename(storage, folder), name)
                parsed, run_folder = chrome.name, _ancestor(storage, folder, chrome.run_levels_up)
            else:
                skipped.add(SKIP_OTHER_TYPE, storage.relative(path))
                continue
            st = st or storage.stat(path)
            if st is None:
                _add_refused(skipped, storage, path)
                continue  # refused, or removed while scanning
            manifest = None
            if parsed.layout == "writer":
                manifest_location = storage.join(folder, layout.writer_manifest_name(parsed.worker, parsed.span))
                read_locations.add(manifest_location)
                manifest = cache.manifest(storage, manifest_location)
            found.append(
                SpanSource(
                    run=storage.relative(run_folder), worker=parsed.worker, span=parsed.span, path=path,
                    layout=parsed.layout, framework=parsed.framework, size=st.size, mtime_ns=st.mtime_ns,
                    manifest=manifest, etag=st.etag,
                )
            )
    for folder, _why in storage.refused_folders():  # a run folder linked out of the logdir
        skipped.add(SKIP_OUTSIDE_LOGDIR, storage.relative(folder) + "/")
    cache.keep_only(read_locations)
    sources = [_with_companions(storage, src, memory_records) for src in _without_msprof_twins(storage, found)]
    sources = _with_unique_keys(sources)
    return ScanResult(sources, skipped, _with_span_owners(storage, snapshots, sources))


def _add_snapshot(storage: Storage, cache: ContentCache, path: str, run_folder: str,
                  owner: Optional[tuple[str, Optional[str]]], writer: bool, snapshots: list[SnapshotSource],
                  skipped: SkippedFiles, read_locations: set[str]) -> None:
    """A ``.pickle``/``.pkl`` file that starts like a memory snapshot, with its run and owner; else counted."""
    st = storage.stat(path)
    if st is None:
        if storage.refused(path):
            skipped.add(SKIP_UNREADABLE, storage.relative(path))
        return
    read_locations.add(path)
    reason = cache.snapshot_verdict(storage, path, st)
    if reason is not None:
        skipped.add(reason, storage.relative(path))
        return
    run = storage.relative(run_folder)
    relative = storage.relative(path)
    name = relative[len(run) + 1:] if run not in ("", ".") and relative.startswith(run + "/") else relative
    snapshots.append(SnapshotSource(run=run, name=name, path=path, size=st.size, mtime_ns=st.mtime_ns,
                                    worker=owner[0] if owner else None, span=owner[1] if owner else None,
                                    writer=writer, etag=st.etag))


def _with_span_owners(storage: Storage, snapshots: list[SnapshotSource],
                      sources: list[SpanSource]) -> list[SnapshotSource]:
    """A snapshot named as a trace of its run (``worker0.1700000000.pickle`` beside
    ``worker0.1700000000.pt.trace.json``) belongs to that trace's worker and span."""
    by_stem: dict[tuple[str, str], SpanSource] = {}
    for src in sources:
        by_stem.setdefault((src.run, layout.chrome_trace_stem(posixpath.basename(src.path))), src)
    out = []
    for snapshot in snapshots:
        if snapshot.span is None:
            src = by_stem.get((snapshot.run, layout.snapshot_stem(posixpath.basename(snapshot.path))))
            if src is not None and snapshot.worker in (None, src.worker):
                snapshot = dataclasses.replace(snapshot, worker=src.worker, span=src.span)
        out.append(snapshot)
    return sorted(out, key=lambda s: (s.run, s.name))


def _add_refused(skipped: SkippedFiles, storage: Storage, location: str) -> None:
    """Count a file that ``stat`` refused with its reason; nothing for one that is gone."""
    why = storage.refused(location)
    if why is not None:
        skipped.add(SKIP_OUTSIDE_LOGDIR if why == REFUSED_OUTSIDE else SKIP_UNREADABLE, storage.relative(location))


def _mindspore_span(storage: Storage, folder: str, name: str) -> Optional[tuple[layout.TraceFileName, str]]:
    """A MindSpore span folder's timeline: its name and its run folder, else None.

    A logdir that is itself a span folder (or inside one) has no run folder: its basename is "." and
    nothing matches.
    """
    span_folder = storage.parent(folder)
    parsed = layout.parse_mindspore_trace_path(_basename(storage, span_folder), _basename(storage, folder), name)
    return (parsed, storage.parent(span_folder)) if parsed is not None else None


def _ancestor(storage: Storage, folder: str, levels: int) -> str:
    for _ in range(levels):
        folder = storage.parent(folder)
    return folder


def _with_unique_keys(sources: list[SpanSource]) -> list[SpanSource]:
    """Two files that name the same (run, worker, span) (``w.1.pt.trace.json`` beside its ``.gz``, the same
    device of two msprof folders) stay two spans: the later paths get ``(2)``, ``(3)``... after the span."""
    seen: dict[tuple[str, str, str], int] = {}
    out: list[SpanSource] = []
    for src in sorted(sources, key=lambda s: s.path):
        key = (src.run, src.worker, src.span)
        count = seen.get(key, 0) + 1
        seen[key] = count
        out.append(src if count == 1 else dataclasses.replace(src, span=f"{src.span} ({count})"))
    return out


def _without_msprof_twins(storage: Storage, found: list[SpanSource]) -> list[SpanSource]:
    """MindSpore on Ascend writes the same window twice in a span folder: ``trace_view.json`` and, under
    ``PROF_*/mindstudio_profiler_output``, msprof's report. The span folder's ``trace_view.json`` stands for it."""
    span_folders = {storage.relative(storage.parent(storage.parent(src.path))) + "/"
                    for src in found if src.layout == "mindspore" and src.path.endswith(layout.MINDSPORE_TRACE_FILE)}
    if not span_folders:
        return found
    return [src for src in found if src.layout != "msprof"
            or not any(storage.relative(src.path).startswith(folder) for folder in span_folders)]


def _with_companions(storage: Storage, src: SpanSource, memory_records: dict[str, str]) -> SpanSource:
    """A MindSpore span with its memory record (``<span>/FRAMEWORK/cpu_ms_memory_record_<id>.txt``) attached."""
    if src.layout != "mindspore" or not src.path.endswith(layout.MINDSPORE_TRACE_FILE):
        return src
    record = memory_records.get(storage.parent(storage.parent(src.path)))
    st = storage.stat(record) if record else None
    if record is None or st is None:
        return src
    return dataclasses.replace(src, companions=((record, st.size, st.mtime_ns),))


def _basename(storage: Storage, location: str) -> str:
    """The last component of a folder's path (as the logdir-relative path spells it)."""
    return storage.relative(location).rsplit("/", 1)[-1]


class Discovery:
    """Repeated scans of a logdir, reporting only the files that are complete."""

    def __init__(
        self, logdir: str, settle_seconds: float = 2.0, writer_grace_seconds: float = 30.0,
        storage: Optional[Storage] = None,
    ) -> None:
        self.logdir = logdir
        self.storage = storage or open_storage(logdir)
        self.settle_seconds = settle_seconds
        self.writer_grace_seconds = writer_grace_seconds
        # path → (size, mtime_ns, monotonic time when this size/mtime was first seen)
        self._seen: dict[str, tuple[int, int, float]] = {}
        self._content = ContentCache()
        # The files of the last scan that are no span, by reason (the runs route reports them).
        self.skipped = SkippedFiles()
        # The memory snapshots of the last scan that are complete (written by the writer, or settled).
        self.snapshots: list[SnapshotSource] = []

    def complete_sources(self, now: Optional[float] = None) -> tuple[list[SpanSource], int]:
        """(complete sources, number of files still being written)."""
        now = time.monotonic() if now is None else now
        wall = time.time()
        complete: list[SpanSource] = []
        pending = 0
        seen: dict[str, tuple[int, int, float]] = {}
        result = scan(self.logdir, self.storage, self._content)
        self.skipped = result.skipped
        snapshots: list[SnapshotSource] = []
        for snapshot in result.snapshots:
            prev = self._seen.get(snapshot.path)
            since = prev[2] if prev and prev[:2] == (snapshot.size, snapshot.mtime_ns) else now
            seen[snapshot.path] = (snapshot.size, snapshot.mtime_ns, since)
            age = wall - snapshot.mtime_ns / 1e9
            if snapshot.writer or self.storage.atomic_writes or age >= self.settle_seconds \
                    or now - since >= self.settle_seconds:
                snapshots.append(snapshot)
            else:
                pending += 1
        self.snapshots = snapshots
        for src in result.sources:
            prev = self._seen.get(src.path)
            since = prev[2] if prev and prev[:2] == (src.size, src.mtime_ns) else now
            seen[src.path] = (src.size, src.mtime_ns, since)
            age = wall - src.mtime_ns / 1e9
            if src.layout == "writer":
                # The manifest is written after the trace was renamed into place.
                ready = src.manifest is not None or age >= self.writer_grace_seconds
            elif self.storage.atomic_writes:
                ready = True  # an object store shows an object only once it is completely uploaded
            else:
                ready = age >= self.settle_seconds or now - since >= self.settle_seconds
            if ready and src.size > 0 or (ready and age >= self.writer_grace_seconds):
                complete.append(src)
            else:
                pending += 1
        self._seen = seen
        return complete, pending
