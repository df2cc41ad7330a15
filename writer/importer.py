"""Bring existing Chrome-trace files into a logdir as Profscope writer spans.

Each input (``.json`` or ``.json.gz``) is checked first — valid JSON, and either an
object with a ``traceEvents`` list or a bare list of events — without building a
Python object per event: msgspec parses the whole document but keeps the event list
as raw bytes. Then each file is written exactly like the writer's own spans (gzip +
manifest, atomically); a gzipped input is copied as is, a plain one is compressed.
Nothing is written unless every input passes.

Like the writer, an import also records each span in a TensorBoard event file of the
run folder, with its performance scalars (``profscope.writer.events``), computed here in
this process; the step of a span is its position among its worker's spans in the run
(0, 1, ...), since imported traces carry no step range.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Mapping, Optional, Sequence

import msgspec

from profscope.tb_plugin import layout

from ._atomic import copy_file_into, gzip_file_into
from .manifest import Manifest, TagValue, check_batch_size, check_framework, check_tags
from .naming import asset_folder, check_run, profscope_version
from .span_files import SpanExistsError, WrittenSpan, span_paths, write_span

DEFAULT_FRAMEWORK = "pytorch"
_SUFFIXES = (".json.gz", ".json")
_WHITESPACE = b" \t\r\n"
# Seconds since the epoch that a file-name timestamp may plausibly stand for (2001..2100).
_PLAUSIBLE_EPOCH_SECONDS = (1e9, 4.2e9)


class TraceFileError(ValueError):
    """An input that cannot be imported; the message names the file and the reason."""


class _ChromeTraceObject(msgspec.Struct):
    # Only the key that makes a Chrome trace; other keys are checked for syntax, then skipped.
    traceEvents: msgspec.Raw  # noqa: N815 - the trace's own key


@dataclass(frozen=True)
class TraceSource:
    """A checked input file and the names it will get."""

    path: Path
    gzipped: bool
    worker: str
    span: str
    wall_time: float


def _read_document(path: Path, gzipped: bool) -> bytes:
    data = path.read_bytes()
    if not data:
        raise TraceFileError(f"{path}: empty file")
    if gzipped:
        try:
            from isal import igzip as gzip_module
        except ImportError:
            import gzip as gzip_module
        try:
            data = gzip_module.decompress(data)
        except (OSError, EOFError, ValueError) as error:
            raise TraceFileError(f"{path}: not a valid gzip file ({error})") from None
        if not data:
            raise TraceFileError(f"{path}: empty file (inside the gzip)")
    return data


def _first_non_space(data: bytes) -> bytes:
    stripped = data.lstrip(_WHITESPACE)
    return stripped[:1]


def check_chrome_trace(path: Path, data: bytes) -> None:
    """Raise ``TraceFileError`` unless ``data`` is a Chrome trace document."""
    not_a_trace = (
        f"{path}: not a Chrome trace (expected a JSON object with a 'traceEvents' list, "
        "or a JSON list of event objects)"
    )
    first = _first_non_space(data)
    if not first:
        raise TraceFileError(f"{path}: empty file (only whitespace)")
    try:
        if first == b"{":
            try:
                events = bytes(msgspec.json.decode(data, type=_ChromeTraceObject).traceEvents)
            except msgspec.ValidationError:
                raise TraceFileError(not_a_trace) from None
        else:
            events = bytes(msgspec.json.decode(data, type=msgspec.Raw))
    except msgspec.DecodeError as error:
        raise TraceFileError(f"{path}: not valid JSON ({error})") from None
    if _first_non_space(events) != b"[":
        raise TraceFileError(not_a_trace)
    # Cheap check of the elements: the first must be an event object (or the list empty).
    if _first_non_space(events[1:]) not in (b"{", b"]"):
        raise TraceFileError(not_a_trace)


def _strip_suffix(name: str) -> Optional[str]:
    lowered = name.lower()
    for suffix in _SUFFIXES:
        if lowered.endswith(suffix):
            return name[: -len(suffix)]
    return None


def _timestamp_seconds(span: str) -> Optional[float]:
    """A file-name timestamp in s, ms, µs or ns (told apart by size) as epoch seconds."""
    if not span.isdigit():
        return None
    value = float(span)
    for divisor in (1.0, 1e3, 1e6, 1e9):
        seconds = value / divisor
        if _PLAUSIBLE_EPOCH_SECONDS[0] <= seconds < _PLAUSIBLE_EPOCH_SECONDS[1]:
            return seconds
    return None


def inspect_trace_file(path: str | os.PathLike[str], worker: Optional[str] = None) -> TraceSource:
    """Check one input file and choose its worker and span names.

    Worker: ``worker`` if given, else the worker part of a torch-handler (or writer)
    file name, else the file's stem. Span: the file name's timestamp, else the file's
    mtime in nanoseconds.
    """
    path = Path(path)
    stem = _strip_suffix(path.name)
    if stem is None:
        raise TraceFileError(f"{path}: expected a .json or .json.gz trace file")
    if not path.is_file():
        raise TraceFileError(f"{path}: no such file")
    gzipped = path.name.lower().endswith(".gz")
    check_chrome_trace(path, _read_document(path, gzipped))

    parsed = layout.parse_torch_trace_name(path.name) or layout.parse_writer_trace_name(path.name)
    stat = path.stat()
    if parsed is not None:
        name_worker, span = parsed.worker, parsed.span
    else:
        name_worker, span = stem, str(stat.st_mtime_ns)
    wall_time = _timestamp_seconds(span) if parsed is not None else None
    return TraceSource(
        path=path,
        gzipped=gzipped,
        worker=layout.safe_component(worker if worker is not None else name_worker),
        span=layout.safe_component(span),
        wall_time=wall_time if wall_time is not None else stat.st_mtime,
    )


def import_trace_files(
    paths: Sequence[str | os.PathLike[str]],
    logdir: str | os.PathLike[str],
    run: str,
    worker: Optional[str] = None,
    framework: str = DEFAULT_FRAMEWORK,
    batch_size: Optional[int] = None,
    tags: Optional[Mapping[str, TagValue]] = None,
    overwrite: bool = False,
    event_file: bool = True,
    report: Optional[Callable[[str], None]] = None,
) -> list[WrittenSpan]:
    """Import trace files into ``<logdir>/<run>``; checks every input before writing any.

    With ``event_file``, the spans are then recorded in a new TensorBoard event file of the
    run folder; a span that cannot be analysed gets no scalars, and ``report`` (default: a
    warning) is told why.
    """
    check_framework(framework)
    check_run(run)
    batch_size = check_batch_size(batch_size)
    checked_tags = check_tags(tags or {})
    if not paths:
        raise TraceFileError("no input files")
    sources = [inspect_trace_file(path, worker) for path in paths]

    asset_dir = asset_folder(logdir, run)
    seen: dict[tuple[str, str], Path] = {}
    for source in sources:
        key = (source.worker, source.span)
        if key in seen:
            raise TraceFileError(
                f"{source.path} and {seen[key]} would both become worker {key[0]!r}, span {key[1]!r}; "
                "import them separately with different --worker names"
            )
        seen[key] = source.path
        if not overwrite:
            for existing in span_paths(asset_dir, source.worker, source.span, framework):
                if existing.exists():
                    raise SpanExistsError(f"{existing} already exists (use --overwrite to replace it)")

    written: list[WrittenSpan] = []
    for source in sources:
        manifest = Manifest(
            worker=source.worker,
            span=source.span,
            framework=framework,
            framework_version=None,  # a trace file does not say which framework version wrote it
            profscope_version=profscope_version(),
            trace_file=layout.writer_trace_name(source.worker, source.span, framework),
            wall_time=source.wall_time,
            step_range=None,
            batch_size=batch_size,
            tags=dict(checked_tags),
            source_file=source.path.name,
        )
        written.append(write_span(asset_dir, manifest, _trace_copier(source), overwrite=overwrite))
    if event_file:
        record_imported_spans(written, Path(logdir, run), asset_dir, report)
    return written


def _span_positions(asset_dir: Path) -> dict[tuple[str, str], int]:
    """(worker, span) → the span's position among its worker's spans in time order."""
    by_worker: dict[str, list[str]] = {}
    for name in os.listdir(asset_dir):
        parsed = layout.parse_manifest_name(name)
        if parsed is not None and not name.startswith(layout.TEMP_PREFIX):
            by_worker.setdefault(parsed[0], []).append(parsed[1])
    positions: dict[tuple[str, str], int] = {}
    for worker, spans in by_worker.items():
        for index, span in enumerate(sorted(spans, key=layout.span_sort_key)):
            positions[(worker, span)] = index
    return positions


def record_imported_spans(
    written: Sequence[WrittenSpan],
    run_folder: Path,
    asset_dir: Path,
    report: Optional[Callable[[str], None]] = None,
) -> None:
    """Write the spans' records and scalars into a new event file of ``run_folder``."""
    from .events import is_primary_worker
    from .recorder import SpanEventRecorder, analyse_in_process

    positions = _span_positions(asset_dir)
    run_workers = {worker for worker, _span in positions}
    recorder = SpanEventRecorder(run_folder, analyse=analyse_in_process, background=False, report=report)
    try:
        for span in sorted(written, key=lambda s: (s.worker, layout.span_sort_key(s.span))):
            primary = is_primary_worker(span.worker, run_workers)
            recorder.record(span, positions.get((span.worker, span.span), 0), primary=primary)
    finally:
        recorder.close()


def _trace_copier(source: TraceSource) -> Callable[[BinaryIO], None]:
    if source.gzipped:
        return lambda out: copy_file_into(source.path, out)
    return lambda out: gzip_file_into(source.path, out, mtime=int(source.wall_time))
