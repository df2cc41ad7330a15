"""What the pages ask first, derived once per parsed trace and kept beside its cache file.

The parser process derives, right after a parse and before the model is published in the
cache (``derive_and_publish``), the default answer of the heaviest routes (``default_views``) and
the trace viewer's level-of-detail index (``trace_index``), so that no request has to analyse a
large trace: a route reads the stored answer instead (``answer``), and a model found in the
cache always has them. Answers are JSON, tagged with ``VIEWS_VERSION`` (a Profscope whose views
changed ignores older answers and computes afresh) and a CRC-32 of their bytes (a damaged file
is ignored the same way).
"""

from __future__ import annotations

import json
import logging
import os
import struct
import tempfile
import zlib
from typing import Any, Callable, Optional

import msgspec

from ..cache import derived_path, read_model
from ..model.trace_model import TraceModel

logger = logging.getLogger(__name__)

# Bump when any precomputed view's output changes shape or meaning.
VIEWS_VERSION = 6  # 2: memory curves run to the span end, Gloo message sizes; 3: accounting (communication, overlap, device busy), CPU stub steps; 4: device names and kinds, figures null with reasons, kernel rows by operator type; 5: kernels within the steps; 6: a checksum of the answers (a version and CRC-32 before the JSON), trace/tracks precomputed
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


def precompute(model: TraceModel, views: dict[tuple[Any, ...], Callable[[], Any]]) -> Optional[str]:
    """Compute ``views`` and store them beside the model's cache file (atomically)."""
    path = derived_path(model, SUFFIX)
    if not path:
        return None
    from ..http import to_json_bytes

    body = b"{" + b",".join(msgspec.json.encode(_key_text(key)) + b":" + to_json_bytes(compute())
                            for key, compute in views.items()) + b"}"
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


def default_views(model: TraceModel, batch_size: Optional[int]) -> dict[tuple[Any, ...], Callable[[], Any]]:
    """The answers a page asks first, by the key its route looks up (``answer``)."""
    from . import critical_path, kernels, memory, operators, overview, stacks, trace

    return {
        ("overview", None, batch_size): lambda: overview.overview(model, batch_size=batch_size),
        ("operators", "name"): lambda: operators.operators(model, "name"),
        ("operators", "input_shape"): lambda: operators.operators(model, "input_shape"),
        ("operators", "stack"): lambda: operators.operators(model, "stack"),
        ("kernels", "name"): lambda: kernels.kernels(model, "name"),
        ("kernels", "op_and_name"): lambda: kernels.kernels(model, "op_and_name"),
        ("memory",): lambda: memory.memory(model),
        ("flamegraph", "host"): lambda: stacks.flamegraph(model, "host"),
        ("critical_path", None, 0): lambda: critical_path.critical_path(model, 0),
        trace.TRACKS_KEY: lambda: trace.compute_tracks(model),
    }


def derive(model: TraceModel, batch_size: Optional[int]) -> None:
    """Store the default answers and the trace index of a cached model beside it."""
    from .trace_index import trace_index

    precompute(model, default_views(model, batch_size))
    trace_index(model)


def has_derived(model: TraceModel) -> bool:
    path = derived_path(model, SUFFIX)
    return path is None or os.path.exists(path)


def derive_and_publish(temporary: str, target: str, batch_size: Optional[int]) -> None:
    """Derive what the pages ask first from the model written at ``temporary`` (``write_model(..., publish=False)``),
    store it beside ``target``, then move the model into place: a model found in the cache always has its
    derived files. The model is read memory-mapped (the parser's own arrays can be freed before: the
    derivations read the page cache). A failed derivation is logged; the model is published all the same
    (the views then compute on demand).
    """
    try:
        mapped = read_model(temporary, cache_path=target)
        try:
            derive(mapped, batch_size)
        except Exception:  # noqa: BLE001 - only an optimisation
            logger.warning("profscope: deriving the views of %s failed", target, exc_info=True)
        del mapped
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
