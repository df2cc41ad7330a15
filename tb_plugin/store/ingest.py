"""``profscope ingest``: every trace file of a logdir parsed into its pack (``packs.py``), one file a task, on this
machine's parser pool or on a Dask cluster.

- ``local`` (the default): the parser processes of ``parser_pool.py`` under their memory budget and deadline.
- ``dask``: ``dask.distributed`` (``pip install profscope[cluster]``): an existing cluster by its scheduler's address
  or file (dask-jobqueue on SLURM/PBS, dask-kubernetes, ``dask scheduler`` and ``dask worker`` by hand), else a
  ``LocalCluster`` on 127.0.0.1 with a worker process per core. Each task asks for its memory estimate
  (``ingest/footprint.py``) as the worker resource ``MEMORY`` where the workers declare one (a LocalCluster's do:
  its share of the memory available), so that large traces do not run together on one worker; a worker killed
  in the middle of a task has its task run again on another (Dask's own retry of lost work).

Then a reduce step, on this machine: per folder of packs, the steps and collectives of all its current packs in one
pair of Parquet files (``pack_summary.write_folder_summary``), from which a server answers the cross-rank questions
of a thousand ranks in one read; rewritten only when a member changed.

Idempotent: a file whose pack is current (same path, size, mtime, tag and format) is skipped, a changed one is
ingested again. A file that fails (not a trace, unreadable, out of memory...) fails alone: it is reported with
its reason, after the others, and the command exits non-zero. Progress (files, bytes, rate, ETA, failures) goes
to the terminal, or as JSON lines with ``--json``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import posixpath
import shutil
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

from ..ingest import footprint
from . import packs
from .discovery import SpanSource, scan
from .storage import FileAccess, Storage, open_storage

logger = logging.getLogger(__name__)

ENGINES = ("local", "dask")
MEMORY_RESOURCE = "MEMORY"
# A task is tried this many times more when its process died (a killed or lost worker).
RETRIES = 2


@dataclass(frozen=True)
class IngestTask:
    """One trace file to pack: everything a worker needs, picklable (no open handle)."""

    location: str
    relative: str
    size: int
    mtime_ns: int
    etag: Optional[str]
    access: FileAccess
    pack_root: str
    pack_options: dict[str, Any]
    run: str
    worker: str
    span: str
    batch_size: Optional[int]
    companions: tuple[str, ...]
    estimate: int


@dataclass(frozen=True)
class IngestResult:
    relative: str
    status: str  # "ingested" | "current" | "failed"
    size: int
    error: Optional[str] = None
    seconds: float = 0.0
    attempts: int = 1
    # An unexpected error of Profscope's own (not the file's): the engines try the file once more.
    internal: bool = False


def ingest_task(task: IngestTask, forks: bool = True) -> IngestResult:
    """Pack one trace (in a parser process, or on a Dask worker with ``forks=False``): skipped when current."""
    started = time.monotonic()
    root = packs.PackRoot(task.pack_root, task.pack_options)
    if root.find(task.relative, task.size, task.mtime_ns, task.etag) is not None:
        return IngestResult(task.relative, "current", task.size)
    key = packs.pack_key(task.relative, task.size, task.mtime_ns, task.etag)
    try:
        staged, temporary = root.staging_folder(task.relative, key)
    except OSError as exc:
        return IngestResult(task.relative, "failed", task.size, f"cannot write the pack: {exc.strerror or exc}")
    published = False
    try:
        error, listing = _build(task, staged, forks)
        if error is not None or listing is None:
            return IngestResult(task.relative, "failed", task.size, error, time.monotonic() - started)
        summary = _summary_meta(os.path.join(staged, packs.MODEL))
        names = sorted(n for n in os.listdir(staged) if n == packs.MODEL or (
            n.startswith(packs.MODEL + ".") and ".tmp" not in n))
        manifest = packs.make_manifest(key, task.relative, task.size, task.mtime_ns, task.etag, staged, names,
                                       summary, listing)
        root.publish(task.relative, key, staged, manifest)
        published = True
    except Exception as exc:  # noqa: BLE001 - one file's failure is reported with it
        logger.warning("profscope: packing %s failed", task.relative, exc_info=True)
        return IngestResult(task.relative, "failed", task.size, f"cannot write the pack ({type(exc).__name__}: {exc})",
                            time.monotonic() - started, internal=True)
    finally:
        if temporary or not published:
            shutil.rmtree(staged, ignore_errors=True)
    return IngestResult(task.relative, "ingested", task.size, None, time.monotonic() - started)


def _build(task: IngestTask, staged: str, forks: bool) -> tuple[Optional[str], Optional[dict[str, Any]]]:
    """Parse the trace into ``staged`` (model, derived answers, summary): (an error for the user, None), else
    (None, what the runs list shows of the span: the manifest's listing)."""
    from ..model.array_file import read_model
    from ..views import answers
    from . import pack_summary, parser_pool
    from .parse_jobs import parse_to_file

    model_path = os.path.join(staged, packs.MODEL)
    with parser_pool.reused_heap():
        outcome = parse_to_file(task.location, model_path, task.access, task.companions, task.batch_size,
                                forks=forks)
    if outcome.error is not None:
        return outcome.error, None
    if outcome.model is not None:
        return f"the parsed model could not be written ({outcome.cache_error})", None
    model = read_model(model_path)
    if pack_summary.available():
        pack_summary.write_summary(answers.rank_summary(task.worker, task.span, model, tables=True), model_path)
    return None, answers.span_listing(model)


def _summary_meta(model_path: str) -> Optional[dict[str, Any]]:
    from . import pack_summary

    if not pack_summary.has_summary(model_path):
        return None
    return {**pack_summary.read_summary(model_path, tables=("steps",)).meta(), "tables": list(packs.SUMMARY_TABLES)}


def pack_local_file(path: str, batch_size: Optional[int] = None) -> tuple[IngestResult, Optional[str]]:
    """Pack one local trace beside it (the writer's child process); returns the result and the pack's model."""
    from .. import layout
    from .storage import real_roots

    folder, name = os.path.split(os.path.abspath(path))
    st = os.stat(path)
    named = layout.parse_writer_trace_name(name) or layout.parse_torch_trace_name(name)
    worker, span = (named.worker, named.span) if named is not None else (name, "")
    task = IngestTask(location=os.path.join(folder, name), relative=name, size=st.st_size, mtime_ns=st.st_mtime_ns,
                      etag=None, access=FileAccess(roots=real_roots(folder)), pack_root=folder, pack_options={},
                      run=".", worker=worker, span=span, batch_size=batch_size, companions=(),
                      estimate=footprint.estimate_file_parse_bytes(st.st_size, name.endswith(".gz")))
    result = ingest_task(task)
    ref = packs.PackRoot(folder).find(name, st.st_size, st.st_mtime_ns, None)
    return result, (ref.location(packs.MODEL) if ref is not None else None)


# --- planning -------------------------------------------------------------------------------------------------


def plan(logdir: str, pack_root: Optional[str] = None, storage: Optional[Storage] = None) -> list[IngestTask]:
    """One task per trace file of the logdir."""
    storage = storage or open_storage(logdir)
    access = storage.access()
    root = pack_root or logdir
    options = dict(access.storage_options or {}) if packs.remote_scheme(root) is not None else {}
    tasks = []
    for source in scan(logdir, storage).sources:
        tasks.append(_task_of(source, storage, access, root, options))
    return tasks


def _task_of(source: SpanSource, storage: Storage, access: FileAccess, root: str,
             options: dict[str, Any]) -> IngestTask:
    from ..views.runs.table import manifest_batch_size

    gzipped = source.path.endswith(".gz")
    estimate = footprint.estimate_file_parse_bytes(source.size, gzipped, None)
    return IngestTask(location=source.path, relative=storage.relative(source.path), size=source.size,
                      mtime_ns=source.mtime_ns, etag=source.etag, access=access, pack_root=root,
                      pack_options=options, run=source.run, worker=source.worker, span=source.span,
                      batch_size=manifest_batch_size(source.manifest),
                      companions=tuple(path for path, _, _ in source.companions), estimate=estimate)


# --- engines ---------------------------------------------------------------------------------------------------

Report = Callable[[IngestResult], None]


def run_local(tasks: Sequence[IngestTask], report: Report, workers: Optional[int] = None,
              budget_bytes: Optional[int] = None) -> list[IngestResult]:
    """The tasks on this machine's parser pool (its memory budget and deadline); a task whose process died is
    tried again (``RETRIES``)."""
    from .parser_pool import JobFailed, ParserPool

    pool = ParserPool(workers or max(2, min(os.cpu_count() or 1, 4)), budget_bytes=budget_bytes)
    results: list[IngestResult] = []
    try:
        pending = list(tasks)
        attempts: dict[str, int] = {}
        running: dict[Any, IngestTask] = {}
        while pending or running:
            while pending and pool.room_for(pending[0].estimate):
                task = pending.pop(0)
                attempts[task.relative] = attempts.get(task.relative, 0) + 1
                running[pool.submit(ingest_task, (task,), task.estimate)] = task
            done = [f for f in running if f.done()]
            if not done:
                time.sleep(0.02)
                continue
            for future in done:
                task = running.pop(future)
                try:
                    result: IngestResult = future.result()
                except JobFailed as exc:
                    if attempts[task.relative] <= RETRIES and _process_died(str(exc)):
                        pending.insert(0, task)
                        continue
                    result = IngestResult(task.relative, "failed", task.size, str(exc))
                if result.internal and attempts[task.relative] <= 1:
                    pending.insert(0, task)
                    continue
                result = dataclasses.replace(result, attempts=attempts[task.relative])
                results.append(result)
                report(result)
    finally:
        pool.shutdown()
    write_folder_summaries(tasks, results)
    return results


def write_folder_summaries(tasks: Sequence[IngestTask], results: Sequence[IngestResult]) -> list[str]:
    """The reduce step after the tasks: per folder, the summary of its current packs (``store/pack_summary.py``),
    members in path order. Returns the folder summaries written; one that cannot be written costs its readers
    speed only (they read each rank's pack), and is logged."""
    from . import pack_summary

    if not pack_summary.available():
        return []
    done = {r.relative for r in results if r.status in ("ingested", "current")}
    folders: dict[tuple[str, str], list[IngestTask]] = {}
    for task in sorted(tasks, key=lambda t: t.relative):
        if task.relative in done:
            folders.setdefault((task.pack_root, posixpath.dirname(task.relative)), []).append(task)
    written = []
    for (pack_root, folder), members in folders.items():
        root = packs.PackRoot(pack_root, members[0].pack_options)
        try:
            refs = [root.find(t.relative, t.size, t.mtime_ns, t.etag) for t in members]
            location = pack_summary.write_folder_summary(root, folder, [r for r in refs if r is not None])
        except Exception:  # noqa: BLE001 - a disk or network error: the packs are whole without it
            logger.warning("profscope: the summary of the packs in %s could not be written", folder or ".",
                           exc_info=True)
            continue
        if location is not None:
            written.append(location)
    return written


def _process_died(message: str) -> bool:
    return "process was killed" in message or "process stopped" in message


def _dask_task(task: IngestTask) -> IngestResult:
    """On a Dask worker: its process runs threads (the event loop), so nothing forks here."""
    return ingest_task(task, forks=False)


def local_cluster(workers: Optional[int] = None, memory_bytes: Optional[int] = None) -> Any:
    """A LocalCluster on 127.0.0.1: a worker process per core (one thread each), each declaring its share of the
    memory available as the resource ``MEMORY``."""
    from dask.distributed import LocalCluster

    from .parser_pool import default_budget_bytes

    count = workers or os.cpu_count() or 1
    per_worker = (memory_bytes or default_budget_bytes()) // count
    return LocalCluster(n_workers=count, threads_per_worker=1, processes=True, host="127.0.0.1",
                        dashboard_address=None, resources={MEMORY_RESOURCE: per_worker})


def run_dask(tasks: Sequence[IngestTask], report: Report, scheduler: Optional[str] = None,
             scheduler_file: Optional[str] = None, workers: Optional[int] = None,
             cluster: Any = None) -> list[IngestResult]:
    """The tasks on a Dask cluster (see the module's docstring)."""
    from dask.distributed import Client, as_completed

    own_cluster = None
    if cluster is None and scheduler is None and scheduler_file is None:
        own_cluster = cluster = local_cluster(workers)
    if cluster is not None:
        client = Client(cluster)
    elif scheduler_file is not None:
        client = Client(scheduler_file=scheduler_file)
    else:
        client = Client(scheduler)
    results: list[IngestResult] = []
    try:
        capacity = _memory_capacity(client)
        futures: dict[Any, tuple[IngestTask, int]] = {}

        def submit(task: IngestTask, attempt: int) -> Any:
            resources = None
            if capacity:  # every worker declares MEMORY: a task asks for its estimate (at most a worker's all)
                resources = {MEMORY_RESOURCE: min(task.estimate, capacity)}
            key = f"profscope-ingest-{packs.pack_key(task.relative, task.size, task.mtime_ns, task.etag)}-{attempt}"
            future = client.submit(_dask_task, task, key=key, resources=resources, retries=RETRIES, pure=False)
            futures[future] = (task, attempt)
            return future

        completed = as_completed([submit(task, 1) for task in tasks])
        for future in completed:
            task, attempt = futures.pop(future)
            try:
                result: IngestResult = future.result()
            except Exception as exc:  # noqa: BLE001 - KilledWorker after the retries, a worker's error
                result = IngestResult(task.relative, "failed", task.size, f"{type(exc).__name__}: {exc}")
            if result.internal and attempt == 1:
                completed.add(submit(task, 2))
                continue
            result = dataclasses.replace(result, attempts=attempt)
            results.append(result)
            report(result)
    finally:
        client.close()
        if own_cluster is not None:
            own_cluster.close()
    write_folder_summaries(tasks, results)
    return results


def _memory_capacity(client: Any) -> Optional[int]:
    """The smallest ``MEMORY`` a worker declares, when every worker declares one; else None."""
    workers = client.scheduler_info().get("workers", {})
    values = [info.get("resources", {}).get(MEMORY_RESOURCE) for info in workers.values()]
    if not values or any(v is None for v in values):
        return None
    return int(min(values))


# --- progress ---------------------------------------------------------------------------------------------------


@dataclass
class Progress:
    """Files and bytes done of the total, rate, ETA and failures."""

    total_files: int
    total_bytes: int
    started: float = dataclasses.field(default_factory=time.monotonic)
    files: int = 0
    bytes: int = 0
    ingested: int = 0
    current: int = 0
    failed: int = 0

    def add(self, result: IngestResult) -> None:
        self.files += 1
        self.bytes += result.size
        if result.status == "failed":
            self.failed += 1
        elif result.status == "current":
            self.current += 1
        else:
            self.ingested += 1

    def as_json(self) -> dict[str, Any]:
        elapsed = time.monotonic() - self.started
        rate = self.bytes / elapsed if elapsed > 0 else 0.0
        left = self.total_bytes - self.bytes
        return {"files": self.files, "total_files": self.total_files, "bytes": self.bytes,
                "total_bytes": self.total_bytes, "ingested": self.ingested, "current": self.current,
                "failed": self.failed, "elapsed_s": round(elapsed, 3), "bytes_per_s": round(rate, 1),
                "eta_s": round(left / rate, 1) if rate > 0 and left > 0 else 0.0}

    def line(self, width: int = 30) -> str:
        state = self.as_json()
        share = self.files / self.total_files if self.total_files else 1.0
        filled = int(share * width)
        bar = "#" * filled + "-" * (width - filled)
        return (f"[{bar}] {self.files}/{self.total_files} files, {_size(self.bytes)}/{_size(self.total_bytes)}, "
                f"{_size(state['bytes_per_s'])}/s, ETA {state['eta_s']:.0f} s, {self.failed} failed")


def _size(value: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"


def failures(results: Sequence[IngestResult]) -> Iterator[IngestResult]:
    return (r for r in results if r.status == "failed")
