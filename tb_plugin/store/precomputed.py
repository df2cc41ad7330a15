"""What the pages ask first, derived once per parsed trace and kept beside its cache file.

The parser process derives, right after a parse and before the model is published in the
cache (``derive_and_publish``), the default answer of the heaviest routes (``views/answers.parser_answers``) and
the trace viewer's level-of-detail index (``model/trace_index.py``), so that no request has to analyse a
large trace: a route reads the stored answer instead (``views/answers.py``), and a model found
in the cache always has them.
"""

from __future__ import annotations

import logging
import os
import tempfile
from typing import Any, Callable, Optional

import msgspec

from ..model.array_file import read_model
from ..model.stored_answers import has_stored_answers, store_answers
from ..model.trace_index import trace_index
from ..model.trace_model import TraceModel
from ..views import answers
from ..views.encoding import to_json_bytes

logger = logging.getLogger(__name__)


def precompute(model: TraceModel, views: dict[tuple[Any, ...], Callable[[], Any]]) -> Optional[str]:
    """Compute ``views`` and store them beside the model's cache file (``model/stored_answers.py``); a view that fails
    is left out (its route computes it on request, and answers its error there), the others are stored."""
    return store_answers(model, _encode_each(views, list(views)))


def _encode_each(views: dict[tuple[Any, ...], Callable[[], Any]], keys: list[tuple[Any, ...]]) -> dict[Any, bytes]:
    """The answers of ``keys``, encoded; one that fails is logged and left out, so that it costs no other answer."""
    encoded: dict[Any, bytes] = {}
    for key in keys:
        try:
            encoded[key] = to_json_bytes(views[key]())
        except Exception:  # noqa: BLE001 - that view is computed again on request
            logger.warning("profscope: deriving the answer %s failed; it is computed on request", key, exc_info=True)
    return encoded


# The answers a forked child derives, with the trace index, while the parser process derives the others. Measured at
# 10 M events, one process each: trace index 2.4 s, flame graph 0.25 s, kernel tables 0.2 s, memory, critical path and
# tracks 0.3 s, against overview 2.4 s and operator tables 1.8 s (which share their masks and operator columns).
_CHILD_QUESTIONS = (answers.KERNELS, answers.FLAMEGRAPH, answers.MEMORY, answers.CRITICAL_PATH, answers.TRACKS,
                    answers.WORK_SUMMARY)


def derive(model: TraceModel, batch_size: Optional[int], fork: bool = False) -> None:
    """Store the default answers and the trace index of a cached model beside it.

    ``fork`` derives part of them in a forked child at the same time: only for callers that run no other
    threads (the parser processes), where forking is safe.
    """
    views = answers.parser_answers(model, batch_size)
    if not fork:
        precompute(model, views)
        trace_index(model)
        return
    child_keys = [key for key in views if answers.question_of(key) in _CHILD_QUESTIONS]
    from_child = _derive_in_child(model, views, child_keys)
    try:
        encoded = _encode_each(views, [key for key in views if key not in child_keys])
    except BaseException:
        from_child()  # reaped, and its hand-off file removed, before the failure goes on
        raise
    parts = from_child()
    if parts is None:  # the child failed (logged): its share is derived here
        parts = [None] * len(child_keys)
        trace_index(model)
    elif None in parts:  # what the child could not derive is tried again here (a child short of memory, say)
        logger.warning("profscope: a derivation child failed on %s; deriving it again",
                       [key for key, part in zip(child_keys, parts) if part is None])
    encoded.update((key, part) for key, part in zip(child_keys, parts) if part is not None)
    encoded.update(_encode_each(views, [key for key, part in zip(child_keys, parts) if part is None]))
    store_answers(model, {key: encoded[key] for key in views if key in encoded})


def _derive_in_child(model: TraceModel, views: dict[tuple[Any, ...], Callable[[], Any]],
                     keys: list[tuple[Any, ...]]) -> Callable[[], Optional[list[Optional[bytes]]]]:
    """Fork a child that builds the trace index and the answers of ``keys``; the returned function waits for it and
    gives those answers (encoded; None for one that failed), or None when the child could not run or failed."""
    if not model.cache_path:
        return lambda: None  # nothing to store beside: the parent derives it all
    try:
        fd, handoff = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(model.cache_path))
    except OSError:
        logger.warning("profscope: no temporary file for a derivation child", exc_info=True)
        return lambda: None
    try:
        pid = os.fork()
    except OSError:
        os.close(fd)
        os.unlink(handoff)
        logger.warning("profscope: could not fork a derivation child", exc_info=True)
        return lambda: None
    if pid == 0:  # the child: never returns
        code = 1
        try:
            trace_index(model)
            with os.fdopen(fd, "wb") as out:
                out.write(msgspec.msgpack.encode([_encode_in_child(views[key]) for key in keys]))
            code = 0
        except BaseException:  # noqa: BLE001 - reported by the exit code; the parent derives it again
            pass
        finally:
            os._exit(code)
    os.close(fd)

    def collect() -> Optional[list[Optional[bytes]]]:
        try:
            _, status = os.waitpid(pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                logger.warning("profscope: a derivation child failed (status %s); deriving its share again", status)
                return None
            with open(handoff, "rb") as f:
                parts = msgspec.msgpack.decode(f.read(), type=list[Optional[bytes]])
            return parts if len(parts) == len(keys) else None
        except (OSError, msgspec.DecodeError):
            logger.warning("profscope: the answers of a derivation child were lost", exc_info=True)
            return None
        finally:
            try:
                os.unlink(handoff)
            except OSError:
                pass

    return collect


def _encode_in_child(compute: Callable[[], Any]) -> Optional[bytes]:
    """One answer of the child, encoded; None when it fails (the parent tries it again and logs the failure)."""
    try:
        return to_json_bytes(compute())
    except Exception:  # noqa: BLE001 - reported by the parent
        return None


def has_derived(model: TraceModel) -> bool:
    return has_stored_answers(model)


def derive_and_publish(temporary: str, target: str, batch_size: Optional[int], fork: bool = False) -> None:
    """Derive what the pages ask first from the model written at ``temporary`` (``write_model(..., publish=False)``),
    store it beside ``target``, then move the model into place: a model found in the cache always has its
    derived files. The model is read memory-mapped (the parser's own arrays can be freed before: the
    derivations read the page cache). A failed derivation is logged; the model is published all the same
    (the views then compute on demand). ``fork``: see ``derive``.
    """
    try:
        mapped = read_model(temporary, cache_path=target)
        try:
            derive(mapped, batch_size, fork=fork)
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
