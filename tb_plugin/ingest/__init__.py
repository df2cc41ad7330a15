"""Trace loading: a file (plain or gzip) → an immutable TraceModel.

``load_trace`` is the one entry point; it detects the framework by name and content
(``detect.py``), decodes the Chrome trace (``kineto.py``), applies Paddle's conventions to a
Paddle trace (``paddle.py``) and MindSpore's to a MindSpore timeline (``mindspore.py``) and hands the decoded columns to ``model.build``.
"""

from __future__ import annotations

import os
import posixpath
from typing import BinaryIO, Callable, Iterator, Optional, Sequence

from ..layout import parse_torch_trace_name, parse_writer_trace_name
from ..model.build import build_model
from ..model.trace_model import TraceModel
from . import mindspore, mindspore_memory, paddle
from .chunks import EventChunks, open_events
from .detect import MINDSPORE, PADDLE, detect_framework
from .kineto import RawColumns, TraceFormatError, decode_events
from .parallel import read_kineto_parallel
from .reader import TraceReadError, iter_blocks

__all__ = ["TraceLoadError", "load_trace", "load_trace_stream", "read_companions"]

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
    """Parse the trace ``opener`` opens (called once, or again if a two-process decode has to start over).

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
        # The decoding depends on Paddle only, which the head tells; the tail (DeepLink) is read at the end.
        if _framework_of(filename, chunks.head, b"") == PADDLE:
            raw = decode_events(chunks, precise_start=True)
            paddle.normalise(raw)
            framework = PADDLE
        else:
            if parallel:
                reuse = [chunks]
                raw = read_kineto_parallel(lambda: reuse.pop() if reuse else open_chunks())
            else:
                raw = decode_events(chunks)
            framework = _framework_of(filename, opened[-1].head, opened[-1].tail)
            if framework == MINDSPORE:
                mindspore.normalise(raw)
                _add_memory_record(raw, companions or {})
        del chunks, opened[:]
        model = build_model(raw, framework=framework)
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
    name = mindspore_memory.record_name_for(list(companions))
    if name is None:
        return
    try:
        mindspore_memory.add_memory_record(raw, mindspore_memory.read_memory_record(companions[name]))
    except mindspore_memory.MemoryRecordError as exc:
        raw.stats.setdefault("notes", []).append(f"{name} was not used: {exc}")


def _framework_of(filename: str, head: bytes, tail: bytes) -> str:
    """The writer's file name says the framework; otherwise the content does (``detect.py``)."""
    # "<worker>.<ts>.pt.trace.json" also fits the writer's pattern (framework "pt"): torch's name wins.
    writer = None if parse_torch_trace_name(filename) else parse_writer_trace_name(filename)
    if writer is not None and writer.framework:
        return writer.framework
    # The tail too: some writers (DeepLink's device records) put their telling events last.
    return detect_framework(head, filename, tail)
