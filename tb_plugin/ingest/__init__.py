"""Trace loading: a file (plain or gzip) → an immutable TraceModel.

``load_trace`` is the one entry point; it detects the format by content and hands the
decoded columns to ``model.build``.
"""

from __future__ import annotations

import os
from typing import BinaryIO, Callable, Optional

from ..model.build import build_model
from ..model.trace_model import TraceModel
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
    decode = read_kineto_parallel if parallel else read_kineto
    try:
        data = read_trace_bytes(opener, progress=lambda f: report(_READ_SHARE * f))
        raw = decode(data, progress=lambda f: report(_READ_SHARE + _DECODE_SHARE * f))
        del data
        model = build_model(raw, framework=_framework_of(filename, raw.metadata))
    except (TraceReadError, TraceFormatError) as exc:
        raise TraceLoadError(str(exc)) from exc
    except RecursionError as exc:
        raise TraceLoadError("invalid trace: values are nested too deeply") from exc
    except MemoryError as exc:
        raise TraceLoadError("not enough memory to load this trace") from exc
    report(1.0)
    return model


def _framework_of(filename: str, metadata: dict) -> str:
    # Other frameworks' inputs are added with their own readers; Kineto JSON is PyTorch's.
    parts = filename.split(".")
    if len(parts) >= 4 and parts[-3] == "trace" and parts[-4] not in ("pt",):
        return parts[-4] if parts[-1] == "json" else parts[-5] if len(parts) >= 5 else "pytorch"
    return "pytorch"
