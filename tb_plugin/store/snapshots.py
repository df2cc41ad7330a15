"""Memory snapshots of the logdir: parsed in the parser processes into the cache, as traces are.

A parse job (``parse_snapshot_into_cache``, run by ``parser_pool``) reads the snapshot's pickle as plain data
(``ingest/snapshot/reader.py``: never ``pickle.load``), derives its model (``ingest/snapshot/build.py``), writes it to
the cache beside the trace models (``<key>.snapshot``) and stores, beside it, the answers the Memory snapshot page
asks first (``views/answers.snapshot_parser_answers``), before the model is moved into place: a snapshot found in the cache always has
them, and no first request analyses a large snapshot. A local file is memory-mapped (the reader's memory follows
its columns, not the file); a remote one is read whole.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..model.snapshot import CacheWriteError, SnapshotModel, read_snapshot_model, write_snapshot_model
from ..model.stored_answers import store_answers
from ..views import answers
from ..views.encoding import to_json_bytes
from . import parser_pool
from .cache import ModelCache, SourceIdentity
from .storage import FileAccess, LogdirUnreadable, NotReadable

# Largest snapshot read (a pickle is read whole when it is not a local file).
MAX_SNAPSHOT_BYTES = 64 << 30


@dataclass
class SnapshotOutcome:
    """What a snapshot's parse job hands back: an error for the user, or the model when it could not be cached."""

    error: Optional[str] = None
    model: Optional[SnapshotModel] = None
    cache_error: Optional[str] = None


def _open_bytes(access: FileAccess, path: str) -> tuple[Any, Callable[[], None]]:
    """The file's bytes: a read-only mapping of a local file, else the whole remote file; and how to let go."""
    handle = access.open(path)
    try:
        fileno = handle.fileno()
    except (OSError, AttributeError, ValueError):
        fileno = None
    if fileno is not None:
        size = os.fstat(fileno).st_size
        if size == 0:
            handle.close()
            return b"", lambda: None
        mapped = mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)
        handle.close()
        try:
            mapped.madvise(mmap.MADV_SEQUENTIAL)
        except (AttributeError, OSError):
            pass
        return mapped, mapped.close
    try:
        data = handle.read(MAX_SNAPSHOT_BYTES + 1)
    finally:
        handle.close()
    if len(data) > MAX_SNAPSHOT_BYTES:
        raise NotReadable("the snapshot is larger than 64 GB")
    return data, lambda: None


def read_model(access: FileAccess, path: str, report: Callable[[float], None] = lambda f: None) -> SnapshotModel:
    """Read and derive a snapshot (raises reader.SnapshotReadError, OSError)."""
    from ..ingest.snapshot import build, reader

    data, release = _open_bytes(access, path)
    try:
        report(0.05)
        result = reader.read(data)
    finally:
        release()
    report(0.6)
    model, _arrays = build.build_model(result)
    report(0.8)
    return model


def parse_snapshot_into_cache(path: str, cache_dir: Optional[str], identity: SourceIdentity, slot: int,
                              access: FileAccess) -> SnapshotOutcome:
    """Parse one snapshot into the cache, with its first answers beside it (in a parser process)."""
    with parser_pool.reused_heap():
        return _parse(path, cache_dir, identity, slot, access)


def _parse(path: str, cache_dir: Optional[str], identity: SourceIdentity, slot: int,
           access: FileAccess) -> SnapshotOutcome:
    from ..ingest.snapshot import build, reader

    def report(fraction: float) -> None:
        parser_pool.report_progress(slot, fraction)

    try:
        data, release = _open_bytes(access, path)
        try:
            report(0.05)
            result = reader.read(data)
        finally:
            release()
    except reader.SnapshotReadError as exc:
        return SnapshotOutcome(error=f"not a memory snapshot this version can read: {exc}")
    except FileNotFoundError:
        return SnapshotOutcome(error="the file was removed while loading")
    except (LogdirUnreadable, NotReadable) as exc:
        return SnapshotOutcome(error=str(exc))
    except OSError as exc:
        return SnapshotOutcome(error=f"the file could not be read ({exc.strerror or exc})")
    report(0.6)
    parser_pool.release_free_memory()  # the reader's buffers, freed: the build's columns take fresh pages
    model, arrays = build.build_model(result)
    del result
    report(0.8)
    target = ModelCache(cache_dir).snapshot_path_for(identity) if cache_dir else None
    if target is None:
        return SnapshotOutcome(model=model, cache_error="no writable cache folder")
    try:
        temporary = write_snapshot_model(target, model, arrays, publish=False)
    except CacheWriteError as exc:
        return SnapshotOutcome(model=model, cache_error=str(exc))
    del model, arrays
    parser_pool.release_free_memory()  # the read's and the build's freed blocks: the answers need none of them
    try:
        written = read_snapshot_model(temporary)
        written.cache_path = target  # its stored answers go beside the published name
        store_answers(written, {key: to_json_bytes(compute())  # type: ignore[arg-type]
                                for key, compute in answers.snapshot_parser_answers(written).items()})
        os.replace(temporary, target)
    except OSError as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return SnapshotOutcome(error=f"the parsed snapshot could not be stored in the cache ({exc.strerror or exc})")
    report(1.0)
    return SnapshotOutcome()
