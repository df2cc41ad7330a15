"""Run discovery: which trace files of the logdir form which run, worker and span.

Every layout of the on-disk contract (``layout.py``: torch's handler, Paddle's chrome export,
MindSpore's ``*_ascend_ms`` span folders and older ``*_timeline_display_<id>.json`` profiler folders, msprof's
``msprof_<ts>.json`` reports, the writer)
is found at any depth; other files (Paddle's ``.pb`` twins...) are ignored. A file that
is still being written (a live training job) is reported only once it is complete: a
writer span when its manifest exists, a torch-handler file when its size and mtime have
not changed for ``settle_seconds`` (at once in an object store, where an object appears complete).
The logdir is read through ``storage.py``: a local folder or a remote URL (s3://, gs://...).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import msgspec

from . import layout
from .ingest import mindspore_memory
from .storage import Storage, open_storage


@dataclass(frozen=True)
class SpanSource:
    """One trace file: a span of a worker of a run."""

    run: str  # path of the run folder relative to the logdir ("." for the logdir itself)
    worker: str
    span: str
    path: str  # a local path, or the object's full URL in a remote logdir (see storage.py)
    layout: str  # "torch", "paddle", "mindspore" or "writer"
    framework: Optional[str]
    size: int
    mtime_ns: int
    manifest: Optional[dict[str, Any]] = field(default=None, compare=False, hash=False)
    etag: Optional[str] = None  # the content tag of an object in a remote logdir
    # Side files read together with the trace (a MindSpore span's memory record): (location, size, mtime_ns).
    companions: tuple[tuple[str, int, int], ...] = ()


_MANIFEST_LIMIT = 1 << 20


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
    """Every trace file under ``logdir`` with its run/worker/span, complete or not.

    ``storage`` reads the logdir (default: ``open_storage(logdir)``); pass it to keep one remote
    filesystem between scans. Raises ``LogdirUnreadable`` when a remote logdir cannot be listed.
    """
    storage = storage or open_storage(logdir)
    found: list[SpanSource] = []
    memory_records: dict[str, str] = {}  # MindSpore span folder -> its memory record
    for folder, files in storage.walk():
        in_assets = storage.is_asset_folder(folder)
        if _basename(storage, folder) == mindspore_memory.RECORD_FOLDER:
            record = mindspore_memory.record_name_for(list(files))
            if record is not None:
                memory_records[storage.parent(folder)] = storage.join(folder, record)
        for name in files:
            if in_assets:
                parsed = layout.parse_writer_trace_name(name)
                run_folder = storage.parent(storage.parent(folder))
            elif name == layout.MINDSPORE_TRACE_FILE:
                # <run>/<worker>_<ts>_ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view.json
                span_folder = storage.parent(folder)
                parsed = layout.parse_mindspore_trace_path(_basename(storage, span_folder), _basename(storage, folder), name)
                # A logdir that is itself a span folder (or inside one) has no run folder: its basename is "."
                # and nothing matches.
                run_folder = storage.parent(span_folder)
            elif (msprof := layout.parse_msprof_trace_path(_folder_components(storage, folder), name)) is not None:
                # <run>/[<worker>_<ts>_ascend_ms/][PROF_<...>/]<output folder>/msprof_<ts>.json
                parsed, run_folder = msprof.name, folder
                for _ in range(msprof.run_levels_up):
                    run_folder = storage.parent(run_folder)
            else:
                parsed = (layout.parse_torch_trace_name(name) or layout.parse_paddle_trace_name(name)
                          or layout.parse_mindspore_timeline_name(name))
                run_folder = folder
            if parsed is None:
                continue
            path = storage.join(folder, name)
            st = storage.stat(path)
            if st is None:
                continue  # removed while scanning
            manifest = None
            if parsed.layout == "writer":
                manifest_name = layout.writer_manifest_name(parsed.worker, parsed.span)
                manifest = _read_manifest(storage, storage.join(folder, manifest_name))
            found.append(
                SpanSource(
                    run=storage.relative(run_folder), worker=parsed.worker, span=parsed.span, path=path,
                    layout=parsed.layout, framework=parsed.framework, size=st.size, mtime_ns=st.mtime_ns,
                    manifest=manifest, etag=st.etag,
                )
            )
    return [_with_companions(storage, src, memory_records) for src in _without_msprof_twins(storage, found)]


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


def _folder_components(storage: Storage, folder: str) -> list[str]:
    """The last three components of a folder's logdir-relative path, outermost first (none above the logdir)."""
    relative = storage.relative(folder)
    return [] if relative in ("", ".") else relative.split("/")[-3:]


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

    def complete_sources(self, now: Optional[float] = None) -> tuple[list[SpanSource], int]:
        """(complete sources, number of files still being written)."""
        now = time.monotonic() if now is None else now
        wall = time.time()
        complete: list[SpanSource] = []
        pending = 0
        seen: dict[str, tuple[int, int, float]] = {}
        for src in scan_logdir(self.logdir, self.storage):
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
