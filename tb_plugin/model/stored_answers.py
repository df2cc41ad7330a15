"""Answers of views kept beside a cached model, and the lookup that prefers them.

The parser process stores the answers the pages ask first next to the model's cache file
(``store/precomputed.py`` decides which and computes them); a view or route asks ``answer(model, key,
compute)`` and gets the stored answer when there is one, else ``compute()`` memoised on the model. The
file is JSON behind a preamble: ``VIEWS_VERSION`` (a Profscope whose views changed ignores older answers
and computes afresh) and a CRC-32 of the JSON (a damaged file is ignored the same way).
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
import zlib
from typing import Any, Callable, Optional

import msgspec

from .array_file import derived_path
from .trace_model import TraceModel

# Bump when any precomputed view's output changes shape or meaning.
VIEWS_VERSION = 12  # 2: memory curves run to the span end, Gloo message sizes; 3: accounting (communication, overlap, device busy), CPU stub steps; 4: device names and kinds, figures null with reasons, kernel rows by operator type; 5: kernels within the steps; 6: a checksum of the answers (a version and CRC-32 before the JSON), trace/tracks precomputed; 7: the memory answer states the span start, the flame graph where its Python frames come from; 8: texts longer than 64 K characters cut; 9: the work summary (FLOPs, bytes and time of the operator groups); 10: the critical path follows the device (ties at one instant, work queued before the step, the step's own range id); 11: host computation less each thread's own communication (CPU-only overlap), a collective's own kernels and time, NCCL wait ranges, annotations' device work launched on any thread, memory totals rebuilt from sizes, steps left out named, device kernel and communication time apart and waits not busy, hints in the span's profiler's words; 12: an NCCL rank's host collective ranges are no communication without kernels too
SUFFIX = "views.json"
_PREAMBLE = struct.Struct("<QQ")  # version, CRC-32 of the JSON that follows


def _key_text(key: tuple[Any, ...]) -> str:
    return json.dumps(list(key))


def _stored(model: TraceModel) -> dict[str, Any]:
    def load() -> dict[str, Any]:
        path = derived_path(model, SUFFIX)
        if not path or not os.path.exists(path):
            return {}
        try:
            with open(path, "rb") as f:
                version, crc = _PREAMBLE.unpack(f.read(_PREAMBLE.size))
                body = f.read()
        except (OSError, struct.error):
            return {}
        if version != VIEWS_VERSION or zlib.crc32(body) != crc:
            return {}  # another version's answers, or damaged: computed on demand
        try:
            views = msgspec.json.decode(body)
        except msgspec.DecodeError:
            return {}
        return views if isinstance(views, dict) else {}

    return model.memo("precomputed_views", load)


def answer(model: TraceModel, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """The stored answer for ``key`` if the parser left one, else ``compute()`` (memoised)."""
    stored = _stored(model).get(_key_text(key))
    if stored is not None:
        return stored
    return model.memo(key, compute)


def store_answers(model: TraceModel, encoded: dict[tuple[Any, ...], bytes]) -> Optional[str]:
    """Store answers, each already encoded as JSON, beside the model's cache file (atomically); None when the
    model is not cached."""
    path = derived_path(model, SUFFIX)
    if not path:
        return None
    body = b"{" + b",".join(msgspec.json.encode(_key_text(key)) + b":" + value for key, value in encoded.items()) + b"}"
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_PREAMBLE.pack(VIEWS_VERSION, zlib.crc32(body)))
            out.write(body)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def has_stored_answers(model: TraceModel) -> bool:
    """Whether the parser left answers beside the model (a model that is not cached needs none)."""
    path = derived_path(model, SUFFIX)
    return path is None or os.path.exists(path)
