"""Writing one span: its gzipped trace first, then its manifest, each atomically."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

from profscope.tb_plugin import layout

from ._atomic import atomic_write, remove_quietly
from .manifest import Manifest, check_framework


@dataclass(frozen=True)
class WrittenSpan:
    """Where a span went."""

    worker: str
    span: str
    trace_path: Path
    manifest_path: Path
    manifest: Manifest


class SpanExistsError(FileExistsError):
    pass


def span_paths(asset_dir: Path, worker: str, span: str, framework: str) -> tuple[Path, Path]:
    """The trace and manifest paths of a span (names from ``layout``)."""
    check_framework(framework)
    return (
        asset_dir / layout.writer_trace_name(worker, span, framework),
        asset_dir / layout.writer_manifest_name(worker, span),
    )


def span_taken(asset_dir: Path, worker: str, span: str) -> bool:
    """Whether any finished file of this worker and span exists (whatever the framework)."""
    manifest = asset_dir / layout.writer_manifest_name(worker, span)
    if manifest.exists():
        return True
    prefix = f"{layout.safe_component(worker)}.{layout.safe_component(span)}."
    try:
        return any(name.startswith(prefix) for name in os.listdir(asset_dir))
    except FileNotFoundError:
        return False


def write_span(
    asset_dir: Path,
    manifest: Manifest,
    write_trace: Callable[[BinaryIO], None],
    overwrite: bool = False,
) -> WrittenSpan:
    """Write a span's trace (gzip bytes from ``write_trace``) and then its manifest.

    The manifest marks the span complete, so it is written last; if it cannot be
    written, the trace is removed again and no part of the span stays visible.
    """
    trace_path, manifest_path = span_paths(asset_dir, manifest.worker, manifest.span, manifest.framework)
    if manifest.trace_file != trace_path.name:
        raise ValueError(f"manifest names trace {manifest.trace_file!r}, expected {trace_path.name!r}")
    if manifest.worker != layout.safe_component(manifest.worker) or manifest.span != layout.safe_component(
        manifest.span
    ):
        raise ValueError("worker and span must be file-name safe (layout.safe_component)")
    asset_dir.mkdir(parents=True, exist_ok=True)
    if not overwrite and (trace_path.exists() or manifest_path.exists()):
        raise SpanExistsError(f"span already exists: {manifest_path}")
    # A manifest left from an earlier write must not vouch for the new trace mid-write.
    if overwrite:
        remove_quietly(manifest_path)
    atomic_write(trace_path, write_trace)
    try:
        manifest_bytes = manifest.to_json_bytes()
        atomic_write(manifest_path, lambda out: out.write(manifest_bytes))
    except BaseException:
        remove_quietly(trace_path)
        raise
    return WrittenSpan(manifest.worker, manifest.span, trace_path, manifest_path, manifest)
