"""Run discovery: which trace files of the logdir form which run, worker and span.

Both layouts of the on-disk contract (``layout.py``) are found at any depth. A file that
is still being written (a live training job) is reported only once it is complete: a
writer span when its manifest exists, a torch-handler file when its size and mtime have
not changed for ``settle_seconds``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import msgspec

from . import layout


@dataclass(frozen=True)
class SpanSource:
    """One trace file: a span of a worker of a run."""

    run: str  # path of the run folder relative to the logdir ("." for the logdir itself)
    worker: str
    span: str
    path: str
    layout: str  # "torch" or "writer"
    framework: Optional[str]
    size: int
    mtime_ns: int
    manifest: Optional[dict[str, Any]] = field(default=None, compare=False, hash=False)


def _run_name(logdir: str, folder: str) -> str:
    rel = os.path.relpath(folder, logdir)
    return rel.replace(os.sep, "/")


def _read_manifest(path: str) -> Optional[dict[str, Any]]:
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 20)
        value = msgspec.json.decode(data)
        return value if isinstance(value, dict) else None
    except (OSError, msgspec.DecodeError):
        return None


def scan_logdir(logdir: str) -> list[SpanSource]:
    """Every trace file under ``logdir`` with its run/worker/span, complete or not."""
    found: list[SpanSource] = []
    asset_tail = os.path.join(*layout.ASSET_DIR)
    visited: set[str] = set()
    # Symlinked run folders are followed (people link runs into a logdir to compare them); each real
    # folder is visited once, so a link loop ends.
    for folder, dirs, files in os.walk(logdir, followlinks=True):
        real = os.path.realpath(folder)
        if real in visited:
            dirs[:] = []
            continue
        visited.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        in_assets = folder.endswith(os.sep + asset_tail) or folder == asset_tail
        for name in sorted(files):
            path = os.path.join(folder, name)
            if in_assets:
                parsed = layout.parse_writer_trace_name(name)
                run_folder = os.path.dirname(os.path.dirname(folder))
            else:
                parsed = layout.parse_torch_trace_name(name)
                run_folder = folder
            if parsed is None:
                continue
            try:
                st = os.stat(path)
            except OSError:
                continue  # removed while scanning
            manifest = None
            if parsed.layout == "writer":
                manifest = _read_manifest(os.path.join(folder, layout.writer_manifest_name(parsed.worker, parsed.span)))
            found.append(
                SpanSource(
                    run=_run_name(logdir, run_folder), worker=parsed.worker, span=parsed.span, path=path,
                    layout=parsed.layout, framework=parsed.framework, size=st.st_size, mtime_ns=st.st_mtime_ns,
                    manifest=manifest,
                )
            )
    return found


class Discovery:
    """Repeated scans of a logdir, reporting only the files that are complete."""

    def __init__(self, logdir: str, settle_seconds: float = 2.0, writer_grace_seconds: float = 30.0) -> None:
        self.logdir = logdir
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
        for src in scan_logdir(self.logdir):
            prev = self._seen.get(src.path)
            since = prev[2] if prev and prev[:2] == (src.size, src.mtime_ns) else now
            seen[src.path] = (src.size, src.mtime_ns, since)
            age = wall - src.mtime_ns / 1e9
            if src.layout == "writer":
                # The manifest is written after the trace was renamed into place.
                ready = src.manifest is not None or age >= self.writer_grace_seconds
            else:
                ready = age >= self.settle_seconds or now - since >= self.settle_seconds
            if ready and src.size > 0 or (ready and age >= self.writer_grace_seconds):
                complete.append(src)
            else:
                pending += 1
        self._seen = seen
        return complete, pending
