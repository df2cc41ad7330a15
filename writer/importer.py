"""Bring existing Chrome-trace files into a logdir as Profscope writer spans.

Each input (``.json`` or ``.json.gz``) is checked first — valid JSON, and either an
object with a ``traceEvents`` list or a bare list of events — without building a
Python object per event: msgspec parses the whole document but keeps the event list
as raw bytes. Then each file is written exactly like the writer's own spans (gzip +
manifest, atomically); a gzipped input is copied as is, a plain one is compressed.
Nothing is written unless every input passes.

The framework that wrote a file is decided from its content as the plugin's loader decides it
(``ingest.framework_of_trace``: a guess from the first bytes, confirmed by the whole decoded
document), unless given; it goes into the span's file name and manifest, and decides how the
plugin reads it. The worker and span names come from each format's own file names:

* torch's handler: ``<worker>.<ns timestamp>.pt.trace.json[.gz]``;
* Paddle's ``export_chrome_tracing``: ``<worker>_time_<date>.paddle_trace.json[.gz]``;
* MindSpore's profiler: ``<host>_<pid>_<date>_ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view.json``
  (the ``*_ascend_ms`` folder itself may be given), and the older
  ``ascend_timeline_display_<rank>.json`` / ``gpu_timeline_display_<rank>.json``;
* TensorFlow's and JAX's ``plugins/profile/<session>/<host>.trace.json.gz``: the host, and the session's date;
* CANN's older ``PROF_<...>/device_<n>/timeline/msprof<...>.json``: ``device<n>``;
* anything else: as discovery names it (``rank<N>`` when the file or its folder names a rank, else the
  file name without ``.json[.gz]`` and ``.pt.trace``/``.trace``), and the file's mtime.

Like the writer, an import also records each span in a TensorBoard event file of the
run folder, with its performance scalars (``profscope.writer.events``), computed here in
this process; the step of a span is its position among its worker's spans in the run
(0, 1, ...), since imported traces carry no step range.
"""

from __future__ import annotations

import datetime
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Mapping, Optional, Sequence

import msgspec

from profscope.tb_plugin import layout
from profscope.tb_plugin.ingest.load import TraceLoadError, framework_of_trace

from ._atomic import copy_file_into, gzip_file_into
from .manifest import Manifest, TagValue, check_batch_size, check_framework, check_tags
from .naming import asset_folder, check_run, profscope_version
from .span_files import SpanExistsError, WrittenSpan, span_paths, write_span

# "<date><time>[fraction]" digits of Paddle's and MindSpore's file names, in local time.
_DATE_DIGITS = re.compile(r"^(?P<seconds>\d{14})(?P<fraction>\d{0,9})$")
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
    framework: str


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


def _date_digits_seconds(digits: str) -> Optional[float]:
    """``YYYYmmddHHMMSS[fraction]`` digits (local time, as Paddle and MindSpore name files) as epoch seconds."""
    match = _DATE_DIGITS.match(digits)
    if match is None:
        return None
    try:
        moment = datetime.datetime.strptime(match["seconds"], "%Y%m%d%H%M%S")
    except ValueError:
        return None
    fraction = match["fraction"]
    return moment.timestamp() + (int(fraction) / 10 ** len(fraction) if fraction else 0.0)


@dataclass(frozen=True)
class _NamedSpan:
    worker: str
    span: Optional[str]  # None: the file's mtime
    wall_time: Optional[float]  # None: the file's mtime


def _names_from_path(path: Path) -> _NamedSpan:
    """Worker, span and time from the file name conventions of torch, Paddle, MindSpore and the writer."""
    name = path.name
    parsed = layout.parse_torch_trace_name(name) or layout.parse_writer_trace_name(name)
    if parsed is not None:
        return _NamedSpan(parsed.worker, parsed.span, _timestamp_seconds(parsed.span))
    parsed = layout.parse_paddle_trace_name(name) or layout.parse_mindspore_trace_path(
        path.parent.parent.name, path.parent.name, name
    )
    if parsed is not None:
        wall_time = _date_digits_seconds(parsed.span) or _timestamp_seconds(parsed.span)
        return _NamedSpan(parsed.worker, parsed.span, wall_time)
    timeline = layout.parse_mindspore_timeline_name(name)
    if timeline is not None:
        return _NamedSpan(timeline.worker, None, None)
    folders = list(path.resolve().parent.parts[-4:])
    plugin = layout.parse_profile_plugin_trace_path(folders, name)
    if plugin is not None:  # TensorFlow's and JAX's: the session folder is the date and time
        digits = plugin.name.span.replace("_", "")
        return _NamedSpan(plugin.name.worker, digits, _date_digits_seconds(digits))
    cann = layout.parse_cann_timeline_path(folders, name)
    if cann is not None:
        return _NamedSpan(cann.name.worker, None, None)
    # Any other Chrome trace: named as discovery names it (rank<N> when the file or its folder names a rank).
    return _NamedSpan(layout.parse_chrome_trace_path(path.parent.name, name).name.worker, None, None)


def _detected_framework(path: Path) -> str:
    """Decided from the whole document, exactly as the plugin's loader decides it."""
    try:
        return framework_of_trace(lambda: open(path, "rb"), path.name)
    except TraceLoadError as error:
        raise TraceFileError(f"{path}: {error}") from None


def _input_file(path: Path) -> Path:
    """A MindSpore span folder (``*_ascend_ms``) stands for its timeline file."""
    if path.is_dir():
        timeline = path / layout.MINDSPORE_OUTPUT_FOLDER / layout.MINDSPORE_TRACE_FILE
        if timeline.is_file():
            return timeline
        raise TraceFileError(
            f"{path}: a folder; expected a trace file, or a MindSpore profiler folder with "
            f"{layout.MINDSPORE_OUTPUT_FOLDER}/{layout.MINDSPORE_TRACE_FILE}"
        )
    return path


def inspect_trace_file(
    path: str | os.PathLike[str], worker: Optional[str] = None, framework: Optional[str] = None
) -> TraceSource:
    """Check one input file and choose its framework, worker and span names.

    Framework: ``framework`` if given, else detected from the content. Worker: ``worker`` if
    given, else from the file name (see the module's notes), else the file's stem. Span:
    the file name's timestamp, else the file's mtime in nanoseconds.
    """
    path = _input_file(Path(path))
    stem = _strip_suffix(path.name)
    if stem is None:
        raise TraceFileError(f"{path}: expected a .json or .json.gz trace file")
    if not path.is_file():
        raise TraceFileError(f"{path}: no such file")
    gzipped = path.name.lower().endswith(".gz")
    data = _read_document(path, gzipped)
    check_chrome_trace(path, data)
    del data
    detected = framework if framework is not None else _detected_framework(path)

    named = _names_from_path(path)
    stat = path.stat()
    return TraceSource(
        path=path,
        gzipped=gzipped,
        worker=layout.safe_component(worker if worker is not None else named.worker),
        span=layout.safe_component(named.span if named.span is not None else str(stat.st_mtime_ns)),
        wall_time=named.wall_time if named.wall_time is not None else stat.st_mtime,
        framework=detected,
    )


def import_trace_files(
    paths: Sequence[str | os.PathLike[str]],
    logdir: str | os.PathLike[str],
    run: str,
    worker: Optional[str] = None,
    framework: Optional[str] = None,
    batch_size: Optional[int] = None,
    tags: Optional[Mapping[str, TagValue]] = None,
    overwrite: bool = False,
    event_file: bool = True,
    report: Optional[Callable[[str], None]] = None,
) -> list[WrittenSpan]:
    """Import trace files into ``<logdir>/<run>``; checks every input before writing any.

    ``framework`` None: each file's is detected from its content. With ``event_file``, the
    spans are then recorded in a new TensorBoard event file of the run folder; a span that
    cannot be analysed gets no scalars, and ``report`` (default: a warning) is told why.
    """
    if framework is not None:
        check_framework(framework)
    check_run(run)
    batch_size = check_batch_size(batch_size)
    checked_tags = check_tags(tags or {})
    if not paths:
        raise TraceFileError("no input files")
    sources = [inspect_trace_file(path, worker, framework) for path in paths]

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
            for existing in span_paths(asset_dir, source.worker, source.span, source.framework):
                if existing.exists():
                    raise SpanExistsError(f"{existing} already exists (use --overwrite to replace it)")

    written: list[WrittenSpan] = []
    for source in sources:
        manifest = Manifest(
            worker=source.worker,
            span=source.span,
            framework=source.framework,
            framework_version=None,  # a trace file does not say which framework version wrote it
            profscope_version=profscope_version(),
            trace_file=layout.writer_trace_name(source.worker, source.span, source.framework),
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
