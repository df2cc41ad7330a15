"""Trace loading: a file (plain or gzip) → an immutable TraceModel.

``load_trace`` is the one entry point; it detects the framework by name and content
(``detect.py``), decodes the Chrome trace (``kineto.py``), applies Paddle's conventions to a
Paddle trace (``paddle.py``) and MindSpore's to a MindSpore timeline (``mindspore.py``) and hands the decoded columns to ``model.build``.
"""

from __future__ import annotations

import os
from typing import BinaryIO, Callable, Optional

from ..layout import parse_torch_trace_name, parse_writer_trace_name
from ..model.build import build_model
from ..model.trace_model import TraceModel
from . import mindspore, paddle
from .detect import HEAD_BYTES, MINDSPORE, PADDLE, detect_framework
from .kineto import TraceFormatError, read_kineto
from .parallel import read_kineto_parallel
from .reader import TraceReadError, read_trace_bytes

__all__ = ["TraceLoadError", "load_trace", "load_trace_stream"]

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


def load_trace_stream(
    opener: Callable[[], BinaryIO], filename: str = "", progress: Optional[Callable[[float], None]] = None,
    parallel: bool = False,
) -> TraceModel:
    report = progress or (lambda fraction: None)
    try:
        data = read_trace_bytes(opener, progress=lambda f: report(_READ_SHARE * f))
        framework = _framework_of(filename, data)
        decode_progress = lambda f: report(_READ_SHARE + _DECODE_SHARE * f)  # noqa: E731
        if framework == PADDLE:
            raw = read_kineto(data, decode_progress, precise_start=True)
            paddle.normalise(raw)
        else:
            raw = (read_kineto_parallel if parallel else read_kineto)(data, decode_progress)
            if framework == MINDSPORE:
                mindspore.normalise(raw)
        del data
        model = build_model(raw, framework=framework)
    except (TraceReadError, TraceFormatError) as exc:
        raise TraceLoadError(str(exc)) from exc
    except RecursionError as exc:
        raise TraceLoadError("invalid trace: values are nested too deeply") from exc
    except MemoryError as exc:
        raise TraceLoadError("not enough memory to load this trace") from exc
    report(1.0)
    return model


def _framework_of(filename: str, data: bytearray) -> str:
    """The writer's file name says the framework; otherwise the content does (``detect.py``)."""
    # "<worker>.<ts>.pt.trace.json" also fits the writer's pattern (framework "pt"): torch's name wins.
    writer = None if parse_torch_trace_name(filename) else parse_writer_trace_name(filename)
    if writer is not None and writer.framework:
        return writer.framework
    return detect_framework(memoryview(data)[:HEAD_BYTES].tobytes(), filename)
