"""Trace loading: a file (plain or gzip) → an immutable TraceModel.

``load_trace`` is the one entry point; it guesses the framework from the name and the first bytes
(``detect.py``), decodes the Chrome trace (``chrome/decode.py``), decides the framework from what the whole
decoded document shows, applies Paddle's conventions to a Paddle trace (``paddle.py``) and MindSpore's
to a MindSpore timeline (``mindspore/normalise.py``) and hands the decoded columns to ``model.build``.
"""

from __future__ import annotations

import os
import posixpath
from typing import BinaryIO, Callable, Iterator, Optional, Sequence

from ..layout import parse_torch_trace_name, parse_writer_trace_name
from ..model.build import Allocate, build_model
from ..model.raw_columns import RawColumns
from ..model.trace_model import TraceModel
from . import paddle
from .chrome.chunks import EventChunks, open_events
from .chrome.decode import TraceFormatError, decode_events
from .chrome.metadata import checked_metadata
from .chrome.parallel import read_kineto_parallel
from .chrome.reader import TraceReadError, iter_blocks
from .detect import MINDSPORE, PADDLE, decide_framework, detect_framework, evidence_of
from .mindspore import normalise, memory_record

__all__ = ["TraceLoadError", "framework_of_trace", "load_trace", "load_trace_stream", "read_companions"]

# Share of the progress bar for reading and decoding (they go together: the file is streamed); the model build is the rest.
_DECODE_SHARE = 0.9


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
                data = handle.read(memory_record.MAX_RECORD_BYTES + 1)
        except OSError:
            continue
        if len(data) <= memory_record.MAX_RECORD_BYTES:
            found[posixpath.basename(location.replace("\\", "/"))] = data
    return found


def load_trace_stream(
    opener: Callable[[], BinaryIO], filename: str = "", progress: Optional[Callable[[float], None]] = None,
    parallel: bool = False, companions: Optional[dict[str, bytes]] = None, allocate: Optional[Allocate] = None,
) -> TraceModel:
    """Parse the trace ``opener`` opens (called once, or again if a two-process decode has to start over).

    ``allocate`` places the model's large columns (``model.build``): the parser builds into the cache file.

    The file is streamed (``reader.iter_blocks`` → ``chunks.EventChunks``): memory follows the model, not the file.
    """
    report = progress or (lambda fraction: None)
    opened: list[EventChunks] = []

    def open_chunks() -> EventChunks:
        chunks = open_events(_blocks(opener, (lambda f: report(_DECODE_SHARE * f)) if not opened else None))
        opened.append(chunks)
        return chunks

    try:
        chunks = open_chunks()
        framework, raw = _decode(chunks, filename, open_chunks, parallel)
        del chunks, opened[:]
        if framework == MINDSPORE:
            normalise.normalise(raw)
            _add_memory_record(raw, companions or {})
        notes: list[str] = []
        raw.metadata = checked_metadata(raw.metadata, notes)
        if notes:
            raw.stats.setdefault("notes", []).extend(notes)
        model = build_model(raw, framework=framework, allocate=allocate)
    except (TraceReadError, TraceFormatError) as exc:
        raise TraceLoadError(str(exc)) from exc
    except RecursionError as exc:
        raise TraceLoadError("invalid trace: values are nested too deeply") from exc
    except MemoryError as exc:
        raise TraceLoadError("not enough memory to load this trace") from exc
    report(1.0)
    return model


def _blocks(opener: Callable[[], BinaryIO], progress: Optional[Callable[[float], None]]) -> Iterator[bytes]:
    """The decompressed blocks of the file ``opener`` opens; the file is closed when they end (or are dropped)."""
    with opener() as stream:
        yield from iter_blocks(stream, progress=progress)


def _add_memory_record(raw: RawColumns, companions: dict[str, bytes]) -> None:
    """A MindSpore span's memory record as memory events; a bad record is a note, never the span's failure."""
    name = memory_record.record_name_for(list(companions))
    if name is None:
        return
    try:
        memory_record.add_memory_record(raw, memory_record.read_memory_record(companions[name]))
    except memory_record.MemoryRecordError as exc:
        raw.stats.setdefault("notes", []).append(f"{name} was not used: {exc}")


def _decode(chunks: EventChunks, filename: str, reopen: Callable[[], EventChunks],
            parallel: bool = False) -> tuple[str, RawColumns]:
    """The framework and the decoded columns of a document (Paddle's already normalised).

    The writer's file name says the framework. Otherwise the first bytes give a guess, which chooses how
    the events are decoded (Paddle keeps its sub-µs starts), and the whole decoded document decides
    (``detect.decide_framework``): a trace whose telling keys or events lie far from its start is
    read as what it is. A Paddle trace that only its decoded events revealed is decoded once more
    (``reopen`` streams the file again).
    """
    # "<worker>.<ts>.pt.trace.json" also fits the writer's pattern (framework "pt"): torch's name wins.
    writer = None if parse_torch_trace_name(filename) else parse_writer_trace_name(filename)
    named = writer.framework if writer is not None and writer.framework else None
    guess = named or detect_framework(chunks.head, filename)
    if guess == PADDLE:
        raw = decode_events(chunks, precise_start=True)
    elif parallel:
        reuse = [chunks]
        raw = read_kineto_parallel(lambda: reuse.pop() if reuse else reopen())
    else:
        raw = decode_events(chunks)
    framework = named or decide_framework(guess, evidence_of(raw), filename)
    if framework == PADDLE and guess != PADDLE:
        del raw
        raw = decode_events(reopen(), precise_start=True)
    if framework == PADDLE:
        paddle.normalise(raw)
    return framework, raw


def framework_of_trace(opener: Callable[[], BinaryIO], filename: str = "") -> str:
    """The framework that wrote a trace file, decided as ``load_trace`` decides it (``profscope import``
    records it in the span's file name, which the loader then trusts)."""

    def reopen() -> EventChunks:
        return open_events(_blocks(opener, None))

    try:
        framework, _raw = _decode(reopen(), filename, reopen)
    except (TraceReadError, TraceFormatError) as exc:
        raise TraceLoadError(str(exc)) from exc
    except RecursionError as exc:
        raise TraceLoadError("invalid trace: values are nested too deeply") from exc
    return framework
