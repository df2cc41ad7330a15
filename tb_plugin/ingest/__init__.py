"""Trace loading: a file (plain or gzip) → an immutable TraceModel.

``load_trace`` is the one entry point; it guesses the framework from the name and the first bytes
(``detect.py``), decodes the Chrome trace (``kineto.py``), decides the framework from what the whole
decoded document shows, applies Paddle's conventions to a Paddle trace (``paddle.py``) and MindSpore's
to a MindSpore timeline (``mindspore.py``) and hands the decoded columns to ``model.build``.
"""

from __future__ import annotations

import os
import posixpath
from typing import BinaryIO, Callable, Optional, Sequence

from ..layout import parse_torch_trace_name, parse_writer_trace_name
from ..model.build import build_model
from ..model.trace_model import TraceModel
from . import mindspore, mindspore_memory, paddle
from .detect import HEAD_BYTES, MINDSPORE, PADDLE, decide_framework, detect_framework, evidence_of
from .kineto import RawColumns, TraceFormatError, read_kineto
from .parallel import read_kineto_parallel
from .reader import TraceBuffer, TraceReadError, read_trace_bytes

__all__ = ["TraceLoadError", "framework_of_trace", "load_trace", "load_trace_stream", "read_companions"]

# Share of the progress bar for each stage of a load.
_READ_SHARE, _DECODE_SHARE = 0.15, 0.75


class TraceLoadError(Exception):
    """A trace could not be loaded; the message is meant for the user."""


def load_trace(path: str, progress: Optional[Callable[[float], None]] = None, parallel: bool = False) -> TraceModel:
    """Parse the trace file at ``path`` (no cache involved).

    ``parallel`` decodes a large file with a forked second process: only for callers that
    run no other threads (the parser processes, the command line), where forking is safe.
    """
    return load_trace_stream(lambda: open(path, "rb"), os.path.basename(path), progress, parallel)


def read_companions(opener: Callable[[str], BinaryIO], locations: Sequence[str]) -> dict[str, bytes]:
    """The bytes of a span's side files (see ``discovery.SpanSource.companions``), by file name.

    A side file that is gone or too large is left out: the trace still loads without it.
    """
    found: dict[str, bytes] = {}
    for location in locations:
        try:
            with opener(location) as handle:
                data = handle.read(mindspore_memory.MAX_RECORD_BYTES + 1)
        except OSError:
            continue
        if len(data) <= mindspore_memory.MAX_RECORD_BYTES:
            found[posixpath.basename(location.replace("\\", "/"))] = data
    return found


def load_trace_stream(
    opener: Callable[[], BinaryIO], filename: str = "", progress: Optional[Callable[[float], None]] = None,
    parallel: bool = False, companions: Optional[dict[str, bytes]] = None,
) -> TraceModel:
    report = progress or (lambda fraction: None)
    try:
        # Mapped only where the parse may run in its own process (see reader.py: SIGBUS on truncation).
        data = read_trace_bytes(opener, progress=lambda f: report(_READ_SHARE * f), map_plain=parallel)
        decode_progress = lambda f: report(_READ_SHARE + _DECODE_SHARE * f)  # noqa: E731
        framework, raw = _decode(data, filename, decode_progress, parallel)
        del data
        if framework == MINDSPORE:
            mindspore.normalise(raw)
            _add_memory_record(raw, companions or {})
        model = build_model(raw, framework=framework)
    except (TraceReadError, TraceFormatError) as exc:
        raise TraceLoadError(str(exc)) from exc
    except RecursionError as exc:
        raise TraceLoadError("invalid trace: values are nested too deeply") from exc
    except MemoryError as exc:
        raise TraceLoadError("not enough memory to load this trace") from exc
    report(1.0)
    return model


def _add_memory_record(raw: RawColumns, companions: dict[str, bytes]) -> None:
    """A MindSpore span's memory record as memory events; a bad record is a note, never the span's failure."""
    name = mindspore_memory.record_name_for(list(companions))
    if name is None:
        return
    try:
        mindspore_memory.add_memory_record(raw, mindspore_memory.read_memory_record(companions[name]))
    except mindspore_memory.MemoryRecordError as exc:
        raw.stats.setdefault("notes", []).append(f"{name} was not used: {exc}")


def _decode(data: TraceBuffer, filename: str, progress: Optional[Callable[[float], None]] = None,
            parallel: bool = False) -> tuple[str, RawColumns]:
    """The framework and the decoded columns of a document (Paddle's already normalised).

    The writer's file name says the framework. Otherwise the first bytes give a guess, which chooses how
    the events are decoded (Paddle keeps its sub-µs starts), and the whole decoded document decides
    (``detect.decide_framework``): a trace whose telling keys or events lie far from its start is
    read as what it is. A Paddle trace that only its decoded events revealed is decoded once more.
    """
    # "<worker>.<ts>.pt.trace.json" also fits the writer's pattern (framework "pt"): torch's name wins.
    writer = None if parse_torch_trace_name(filename) else parse_writer_trace_name(filename)
    named = writer.framework if writer is not None and writer.framework else None
    guess = named or detect_framework(memoryview(data)[:HEAD_BYTES].tobytes(), filename)
    if guess == PADDLE:
        raw = read_kineto(data, progress, precise_start=True)
    else:
        raw = (read_kineto_parallel if parallel else read_kineto)(data, progress)
    framework = named or decide_framework(guess, evidence_of(raw), filename)
    if framework == PADDLE and guess != PADDLE:
        raw = read_kineto(data, None, precise_start=True)
    if framework == PADDLE:
        paddle.normalise(raw)
    return framework, raw


def framework_of_trace(opener: Callable[[], BinaryIO], filename: str = "") -> str:
    """The framework that wrote a trace file, decided as ``load_trace`` decides it (``profscope import``
    records it in the span's file name, which the loader then trusts)."""
    try:
        data = read_trace_bytes(opener)
        framework, _raw = _decode(data, filename)
    except (TraceReadError, TraceFormatError) as exc:
        raise TraceLoadError(str(exc)) from exc
    except RecursionError as exc:
        raise TraceLoadError("invalid trace: values are nested too deeply") from exc
    return framework
