"""The parse jobs of the runs, run in the parser processes (``parser_pool.py``): one trace parsed into the cache with
its first answers derived beside it (``parse_into_cache``), or a cached model's missing answers derived
(``derive_in_cache``). ``runs.py``'s ``RunManager`` submits them and reads their ``ParseOutcome``.
"""

from __future__ import annotations

import logging
import os
import posixpath
from dataclasses import dataclass
from typing import Optional, Sequence

from ..ingest import footprint
from ..model.trace_model import TraceModel
from . import parser_pool
from .cache import ModelCache, SourceIdentity
from .storage import FileAccess

logger = logging.getLogger(__name__)

# Share of a span's progress for the parse; the rest is deriving its first answers.
_PARSE_SHARE = 0.8

@dataclass
class ParseOutcome:
    """What a parse job hands back: an error for the user, or the model when it could not be cached."""

    error: Optional[str] = None
    # Set when the cache could not be written: the model itself (served from memory) and why.
    model: Optional[TraceModel] = None
    cache_error: Optional[str] = None


def parse_into_cache(
    path: str, cache_dir: Optional[str], identity: SourceIdentity, slot: int, access: FileAccess,
    companions: Sequence[str] = (), batch_size: Optional[int] = None,
) -> ParseOutcome:
    """Parse one trace into the cache (in a worker process of ``parser_pool``), with what its pages ask
    first derived beside it (precomputed.py) before the model is published; freed memory is reused meanwhile
    (``parser_pool.reused_heap``)."""
    with parser_pool.reused_heap():
        return _parse_and_derive(path, cache_dir, identity, slot, access, companions, batch_size)


def parse_to_file(path: str, target: str, access: FileAccess, companions: Sequence[str] = (),
                  batch_size: Optional[int] = None, slot: int = -1, forks: bool = True) -> ParseOutcome:
    """Parse one trace into the model file ``target`` (a pack's), its first answers derived beside it as in the
    cache. ``forks``: decode and derive with forked helpers (only in a process that runs no other threads)."""
    return _parse_and_derive(path, None, None, slot, access, companions, batch_size, target, forks)


def _parse_and_derive(
    path: str, cache_dir: Optional[str], identity: Optional[SourceIdentity], slot: int, access: FileAccess,
    companions: Sequence[str], batch_size: Optional[int], target_path: Optional[str] = None, forks: bool = True,
) -> ParseOutcome:
    """``parse_into_cache``'s work.

    ``path`` is a local path, or a remote file's URL; ``access`` opens it in this process (a local
    file only as ``storage.open_regular`` allows, a remote one through fsspec with the logdir's options).
    When the model cannot be written to the cache (no cache folder, a full disk), it is returned instead.
    """
    from ..model.array_file import ArrayFileWriter, CacheWriteError, write_model
    from ..ingest.load import TraceLoadError, load_trace_stream, read_companions
    from .storage import LogdirUnreadable, NotReadable
    from .precomputed import derive_and_publish

    def report(fraction: float) -> None:
        parser_pool.report_progress(slot, fraction)

    target = target_path or (ModelCache(cache_dir).path_for(identity) if cache_dir and identity else None)
    writer: Optional[ArrayFileWriter] = None
    cache_error = "no writable cache folder"
    if target is not None:
        try:  # the model is built straight into its cache file (array_file.ArrayFileWriter)
            writer = ArrayFileWriter(target)
        except CacheWriteError as exc:
            cache_error = str(exc)
    try:
        try:
            # parallel forks a decoding helper. This process runs no other threads for a local file; for a
            # remote one, fsspec's I/O thread is idle by then and the helper only decodes the bytes it was given.
            model = load_trace_stream(lambda: access.open(path), posixpath.basename(path),
                                      lambda fraction: report(_PARSE_SHARE * fraction), parallel=forks,
                                      companions=read_companions(access.open, companions),
                                      allocate=writer.allocate if writer is not None else None)
        except BaseException:
            if writer is not None:
                writer.abort()  # nothing of an unfinished model stays in the cache folder
            raise
    except TraceLoadError as exc:
        return ParseOutcome(error=str(exc))
    except FileNotFoundError:
        return ParseOutcome(error="the file was removed while loading")
    except (LogdirUnreadable, NotReadable) as exc:
        return ParseOutcome(error=str(exc))
    except OSError as exc:
        return ParseOutcome(error=f"the file could not be read ({exc.strerror or exc})")
    if target is None or writer is None:
        return ParseOutcome(model=model, cache_error=cache_error)
    try:
        temporary = write_model(target, model, publish=False, writer=writer)
    except CacheWriteError as exc:
        return ParseOutcome(model=model, cache_error=str(exc))
    del model  # the derivations read the written model, memory-mapped
    parser_pool.release_free_memory()  # before the derivation forks: see there
    try:
        derive_and_publish(temporary, target, batch_size, fork=forks)  # a parser process runs no other threads
    except OSError as exc:  # the model could not be moved into place: parsed again next time it is asked for
        return ParseOutcome(error=f"the parsed model could not be stored in the cache ({exc.strerror or exc})")
    return ParseOutcome()


def derived_exists(model: TraceModel) -> bool:
    from . import precomputed

    return precomputed.has_derived(model)


def derive_in_cache(model_path: str, batch_size: Optional[int]) -> None:
    """What the pages ask first, for a cached model that lacks it (one cached by an earlier version)."""
    from ..model.array_file import read_model
    from . import precomputed

    try:
        with parser_pool.reused_heap():
            precomputed.derive(read_model(model_path), batch_size)
    except Exception:  # noqa: BLE001 - only an optimisation: the views compute on demand otherwise
        logger.debug("profscope: deriving %s failed", model_path, exc_info=True)


def derive_estimate(model_path: str) -> int:
    """Memory of deriving a cached model's views: as for parsing a trace of the model file's size."""
    try:
        return footprint.estimate_parse_bytes(os.path.getsize(model_path))
    except OSError:
        return footprint.BASE_BYTES
