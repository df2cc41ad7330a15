"""What the pages ask first, derived once per parsed trace and kept beside its cache file.

The parser process derives, right after a parse and before the model is published in the
cache (``derive_and_publish``), the default answer of the heaviest routes (``default_views``) and
the trace viewer's level-of-detail index (``model/trace_index.py``), so that no request has to analyse a
large trace: a route reads the stored answer instead (``model/stored_answers.answer``), and a model found
in the cache always has them.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Callable, Optional

from ..model.array_file import read_model
from ..model.stored_answers import has_stored_answers, store_answers
from ..model.trace_index import trace_index
from ..model.trace_model import TraceModel
from ..views import critical_path, kernels, memory, operators, overview, stacks, trace
from ..views.encoding import to_json_bytes

logger = logging.getLogger(__name__)


def precompute(model: TraceModel, views: dict[tuple[Any, ...], Callable[[], Any]]) -> Optional[str]:
    """Compute ``views`` and store them beside the model's cache file (``model/stored_answers.py``)."""
    return store_answers(model, {key: to_json_bytes(compute()) for key, compute in views.items()})


def default_views(model: TraceModel, batch_size: Optional[int]) -> dict[tuple[Any, ...], Callable[[], Any]]:
    """The answers a page asks first, by the key its route looks up (``model/stored_answers.answer``)."""
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
    precompute(model, default_views(model, batch_size))
    trace_index(model)


def has_derived(model: TraceModel) -> bool:
    return has_stored_answers(model)


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
