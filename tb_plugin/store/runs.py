"""Background loading of the logdir's runs, and their status.

A refresh thread rescans the logdir every few seconds; every complete trace file is parsed
once, in a pool of worker processes (``parser_pool.py``: as many as cores, 2 to 4; the jobs they run are
``parse_jobs.py``'s) that write the model to the cache, and the plugin then memory-maps it. Parsing in separate processes keeps
TensorBoard's request threads responsive and lets the workers of a run load in parallel;
a file that crashes, exhausts or stalls a parser process fails its own span only, and is tried
again when it changes. Parses start while their estimated memory (``ingest/footprint.py``) fits
the pool's budget. When the cache cannot be written (a full disk), the parser hands the model
back and the span is served from memory.

Request threads only read snapshots under a lock: nothing here blocks them.
"""

from __future__ import annotations

import concurrent.futures as futures
import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from .. import layout
from ..ingest import footprint
from ..model.trace_model import TraceModel
from ..views import answers
from ..views.runs.table import manifest_batch_size
from .cache import ModelCache, SourceIdentity
from ..model.snapshot import SnapshotModel
from .discovery import Discovery, SnapshotSource, SpanSource
from .parse_jobs import ParseOutcome, derive_estimate, derive_in_cache, derived_exists, parse_into_cache
from .snapshots import SnapshotOutcome, parse_snapshot_into_cache
from .parser_pool import PROGRESS_SLOTS, JobFailed, ParserPool
from .spans import Span, SpanFailed, SpanLoading, UnknownSpan
from .packs import PackError, PackRef, PackRoot, load_model
from .storage import LogdirUnreadable, open_storage, remote_scheme

logger = logging.getLogger(__name__)


@dataclass
class _SpanState:
    source: SpanSource
    status: str = "queued"  # queued | loading | ready | error
    error: Optional[str] = None
    model: Optional[TraceModel] = None
    progress_slot: Optional[int] = None
    priority: int = 0
    identity: Optional[SourceIdentity] = None
    job: Optional[futures.Future[ParseOutcome]] = None
    estimate: Optional[int] = None  # memory its parse may take (bytes), once computed
    pack_checked: bool = False  # its pack was looked for (packs.py)
    # The pack it was opened from: a ready span whose model is None is listed from the pack's manifest, and its
    # model read on first use (``RunManager._open_pack``).
    pack: Optional[PackRef] = None


def _listed_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """A manifest as the ``runs`` route lists it: without the CPU sample series (the overview serves them),
    which would make the list ~2.5 KB bigger per span."""
    cpu = manifest.get("cpu_utilization")
    if not isinstance(cpu, dict) or "samples" not in cpu:
        return manifest
    return {**manifest, "cpu_utilization": {key: value for key, value in cpu.items() if key != "samples"}}


# --- plugin process side -------------------------------------------------------------


@dataclass
class _SnapshotState:
    """A memory snapshot of a run, parsed like a span (``snapshots.py``)."""

    source: SnapshotSource
    status: str = "queued"  # queued | loading | ready | error
    error: Optional[str] = None
    model: Optional[SnapshotModel] = None
    progress_slot: Optional[int] = None
    priority: int = 0
    identity: Optional[SourceIdentity] = None
    job: Optional[futures.Future[SnapshotOutcome]] = None
    estimate: Optional[int] = None


@dataclass(frozen=True)
class LoadedSnapshot:
    """A parsed memory snapshot of a run, as a route gets it."""

    run: str
    name: str
    source: SnapshotSource
    model: SnapshotModel


class RunManager:
    """Discovers runs and loads their spans in the background."""

    def __init__(
        self,
        logdir: str,
        cache_dir: Optional[str] = None,
        refresh_seconds: float = 5.0,
        max_workers: Optional[int] = None,
        settle_seconds: float = 2.0,
        cache_max_bytes: Optional[int] = None,
        parse_timeout_seconds: Optional[float] = None,
        parse_memory_bytes: Optional[int] = None,
        link_roots: Optional[Sequence[str]] = None,
        packs: Optional[str] = None,
        use_packs: bool = True,
    ) -> None:
        self.logdir = logdir
        self.cache = ModelCache(cache_dir, max_bytes=cache_max_bytes)
        self._evict_due = True  # at the first scan, then after every parse that stored an entry
        self.refresh_seconds = refresh_seconds
        # At least two: a parse that stalls until its deadline never holds up every other span.
        self.max_workers = max_workers or max(2, min(os.cpu_count() or 1, 4))
        self.parse_timeout_seconds = parse_timeout_seconds
        self.parse_memory_bytes = parse_memory_bytes
        # link_roots: folders outside the logdir that its symlinks may lead into (storage.py).
        self._discovery = Discovery(logdir, settle_seconds=settle_seconds, storage=open_storage(logdir, link_roots))
        # Reads the logdir: a local folder, or a remote URL through fsspec (listed only by the refresh thread).
        self.storage = self._discovery.storage
        # Packs (packs.py): beside the traces, or under ``packs`` when the logdir is read-only.
        self.use_packs = use_packs
        self.pack_root = PackRoot(packs or logdir, self.storage.access().storage_options
                                  if remote_scheme(packs or logdir) is not None else None)
        self._bad_packs: set[tuple[str, int, int, Optional[str]]] = set()
        self.pack_loads = 0  # spans opened from packs (no parse)
        self._pyarrow_imported = False
        self._logdir_error: Optional[str] = None
        self._lock = threading.Lock()
        self._refresh_lock = threading.Lock()  # one scan at a time
        self._spans: dict[tuple[str, str, str], _SpanState] = {}
        # Memory snapshots by (run, name), and their parses in flight.
        self._snapshots: dict[tuple[str, str], _SnapshotState] = {}
        self._snapshot_jobs: dict[futures.Future[SnapshotOutcome], tuple[str, str]] = {}
        self._pending_files = 0
        self._scanned = threading.Event()
        self._started = False
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._pool: Optional[ParserPool] = None
        self._free_slots = list(range(PROGRESS_SLOTS))
        self._in_flight: dict[futures.Future[ParseOutcome], tuple[str, str, str]] = {}
        self._queued_derivations: deque[tuple[str, Optional[int]]] = deque()
        self._derivations: list[futures.Future[None]] = []
        self._cache_write_reported = False

    # Lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the refresh thread (idempotent, returns at once)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._refresh_loop, name="profscope-refresh", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._pool is not None:
            self._pool.shutdown()

    def has_scanned(self) -> bool:
        """False until the first scan of the logdir has finished (an empty run list means 'not yet')."""
        return self._scanned.is_set()

    def wait_for_first_scan(self, timeout: float) -> bool:
        return self._scanned.wait(timeout)

    def _refresh_loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.refresh()
            except Exception:  # noqa: BLE001 - the loop must survive a bad scan
                logger.exception("profscope: refreshing the logdir failed")
            self._scanned.set()
            self._wake.wait(self._next_wait())
            self._wake.clear()

    def _next_wait(self) -> float:
        with self._lock:
            busy = bool(self._in_flight) or bool(self._snapshot_jobs) or any(
                s.status == "queued" for s in [*self._spans.values(), *self._snapshots.values()])
        return 0.25 if busy else self.refresh_seconds

    # Scanning and scheduling --------------------------------------------------------------

    def refresh(self) -> None:
        """One scan of the logdir, then (re)schedule loads."""
        with self._refresh_lock:
            self._refresh_once()
        self._scanned.set()

    def _identity(self, src: SpanSource | SnapshotSource) -> SourceIdentity:
        companions = tuple((self.storage.identity_location(path), size, mtime)
                           for path, size, mtime in getattr(src, "companions", ()))
        return SourceIdentity(self.storage.identity_location(src.path), src.size, src.mtime_ns, src.etag, companions)

    def _refresh_once(self) -> None:
        try:
            sources, pending = self._discovery.complete_sources()
        except LogdirUnreadable as exc:
            # Keep what is known (a network hiccup must not empty the run list); try again next scan.
            if str(exc) != self._logdir_error:
                logger.warning("profscope: %s", exc)
            self._logdir_error = str(exc)
            return
        self._logdir_error = None
        with self._lock:
            self._pending_files = pending
            current: dict[tuple[str, str, str], SpanSource] = {(s.run, s.worker, s.span): s for s in sources}
            for key in list(self._spans):
                if key not in current:
                    self._drop_job(self._spans.pop(key))  # the file is gone
            for key, src in current.items():
                state = self._spans.get(key)
                if state is None or self._identity(state.source) != self._identity(src):
                    if state is not None:
                        self._drop_job(state)  # the file changed: a parse in flight would be stale
                    self._spans[key] = _SpanState(source=src)
                elif state.source.manifest is None and src.manifest is not None:
                    state.source = src
            snapshots = {(s.run, s.name): s for s in self._discovery.snapshots}
            for key in list(self._snapshots):
                if key not in snapshots:
                    self._drop_job(self._snapshots.pop(key))
            for key, snapshot in snapshots.items():
                known = self._snapshots.get(key)
                if known is None or self._identity(known.source) != self._identity(snapshot):
                    if known is not None:
                        self._drop_job(known)
                    self._snapshots[key] = _SnapshotState(source=snapshot)
                elif known.source != snapshot:
                    known.source = snapshot  # its owner may be known now (a trace beside it appeared)
        self._collect_finished()
        self._schedule()
        self._evict_if_due()

    def _drop_job(self, state: _SpanState | _SnapshotState) -> None:
        """Forget the parse in flight of a span or snapshot that is replaced or gone (its worker is stopped)."""
        if state.job is None:
            return
        self._in_flight.pop(state.job, None)  # type: ignore[arg-type]
        self._snapshot_jobs.pop(state.job, None)  # type: ignore[arg-type]
        if self._pool is not None:
            self._pool.cancel(state.job)
        if state.progress_slot is not None:
            self._free_slots.append(state.progress_slot)
            state.progress_slot = None
        state.job = None

    def _evict_if_due(self) -> None:
        """Keep the cache within its bound, never touching an entry a span of this server holds."""
        with self._lock:
            if not self._evict_due:
                return
            self._evict_due = False
            keep = [s.model.cache_path for s in [*self._spans.values(), *self._snapshots.values()]
                    if s.model is not None and s.model.cache_path]
        removed = self.cache.evict(keep)
        if removed:
            logger.info("profscope: removed %d least recently used cache entries", len(removed))

    def request(self, run: str, worker: str, span: str) -> None:
        """Load this span before the others (the user is looking at it)."""
        with self._lock:
            state = self._spans.get((run, worker, span))
            if state is not None and state.status == "queued":
                state.priority = 1
        self._wake.set()

    def _adopt_packs(self) -> None:
        """Queued spans whose trace has a current pack (and no cache entry) are ready: no parse. A local pack's
        span is listed from its manifest alone (``packs.py``: its listing) and its model memory-mapped on first use
        (``_open_pack``), so a logdir of a thousand packed ranks is listed after a thousand small reads; a remote
        one is copied into the cache here, outside the lock. A pack that does not read is never tried again for
        that file, which is parsed as before."""
        if not self.use_packs:
            return
        with self._lock:
            candidates = [(key, s) for key, s in self._spans.items() if s.status == "queued" and not s.pack_checked]
            for _, state in candidates:
                state.pack_checked = True
        adopted = False
        for key, state in candidates:
            src = state.source
            file_key = (src.path, src.size, src.mtime_ns, src.etag)
            if file_key in self._bad_packs:
                continue
            identity = self._identity(src)
            model = self.cache.load(identity)
            ref = None
            if model is None:
                try:
                    ref = self.pack_root.find(self.storage.relative(src.path), src.size, src.mtime_ns, src.etag)
                    if ref is None:
                        continue
                    if self.pack_root.remote or not ref.views_current:  # listed from its model (other views)
                        model = load_model(self.pack_root, ref, self.cache, identity)
                except PackError as exc:
                    logger.warning("profscope: the pack of %s is not used (%s); parsing the trace", src.path, exc)
                    self._bad_packs.add(file_key)
                    continue
                self.pack_loads += 1
            with self._lock:
                if self._spans.get(key) is state and state.status == "queued":
                    state.model, state.pack, state.status = model, ref, "ready"
                    adopted = adopted or ref is not None
        if adopted and not self._pyarrow_imported:
            # The run-level pages read packed ranks' summaries next: pyarrow (0.3 s to import) is imported here,
            # once the spans are listed, rather than by the first such request.
            from . import pack_summary

            self._pyarrow_imported = True
            pack_summary.available()

    def _open_pack(self, key: tuple[str, str, str], state: _SpanState) -> TraceModel:
        """The model of a span listed from its local pack, memory-mapped on first use. A pack that does not read
        is never tried again for that file: the span is parsed (``SpanLoading`` meanwhile)."""
        src, ref = state.source, state.pack
        if ref is None:  # taken back meanwhile (its model was damaged): it is being parsed
            self._wake.set()
            raise SpanLoading(0.0)
        try:
            model = load_model(self.pack_root, ref, self.cache, self._identity(src))
        except PackError as exc:
            logger.warning("profscope: the pack of %s is not used (%s); parsing the trace", src.path, exc)
            with self._lock:
                self._bad_packs.add((src.path, src.size, src.mtime_ns, src.etag))
                if self._spans.get(key) is state and state.model is None and state.status == "ready":
                    state.status, state.pack, state.priority = "queued", None, 1
            self._wake.set()
            raise SpanLoading(0.0) from None
        with self._lock:
            if state.model is None and state.pack is ref:
                state.model = model
            return state.model if state.model is not None else model

    def _loader(self, key: tuple[str, str, str], state: _SpanState) -> Callable[[], TraceModel]:
        def load() -> TraceModel:
            model = state.model
            return model if model is not None else self._open_pack(key, state)

        return load

    def _schedule(self) -> None:
        """Start queued parses (the user's first, then by run and span) while the pool has room, then derivations."""
        self._adopt_packs()
        with self._lock:
            queued = [(k, s) for k, s in self._spans.items() if s.status == "queued"]
            queued.sort(key=lambda ks: (-ks[1].priority, ks[0][0], ks[0][1], layout.span_sort_key(ks[0][2])))
            for key, state in queued:
                identity = self._identity(state.source)
                cached = self._try_cache(identity)
                if cached is not None:
                    state.model, state.status = cached, "ready"
                    if not derived_exists(cached):  # e.g. the previous server stopped before deriving
                        self._derive_later(cached, manifest_batch_size(state.source.manifest))
                    continue
                if self._jobs() >= self.max_workers or not self._free_slots:
                    break
                if state.estimate is None:
                    state.estimate = self._parse_estimate(state.source)
                estimate = state.estimate
                # A parse that does not fit the memory budget next to those running waits; smaller ones go first.
                if self._ensure_pool().room_for(estimate):
                    self._submit(key, state, identity)
            self._schedule_snapshots()
            if not any(s.status == "queued" for s in self._spans.values()):
                self._start_derivations()

    def _jobs(self) -> int:
        return len(self._in_flight) + len(self._snapshot_jobs)

    def _schedule_snapshots(self) -> None:
        """Start queued snapshot parses (the one a page asks for first) while the pool has room; a cached one is
        ready at once. Called with the lock held."""
        queued = [(k, s) for k, s in self._snapshots.items() if s.status == "queued"]
        queued.sort(key=lambda ks: (-ks[1].priority, ks[0]))
        for key, state in queued:
            identity = self._identity(state.source)
            cached = self.cache.load_snapshot(identity)
            if cached is not None:
                state.model, state.status = cached, "ready"
                continue
            if self._jobs() >= self.max_workers or not self._free_slots:
                break
            if state.estimate is None:
                state.estimate = footprint.estimate_snapshot_bytes(state.source.size)
            pool = self._ensure_pool()
            if not pool.room_for(state.estimate):
                continue
            slot = self._free_slots.pop()
            pool.progress[slot] = 0.0
            state.identity, state.progress_slot, state.status = identity, slot, "loading"
            state.job = pool.submit(parse_snapshot_into_cache, (state.source.path, self.cache.cache_dir, identity,
                                                                slot, self.storage.access()), state.estimate)
            self._snapshot_jobs[state.job] = key
            state.job.add_done_callback(lambda f: self._wake.set())

    def _parse_estimate(self, source: SpanSource) -> int:
        """Memory the parse of a span's file may take (``footprint``), from its size and gzip trailer."""
        gzipped, trailer = source.path.endswith(".gz"), None
        if gzipped:
            try:
                with self.storage.open(source.path) as handle:
                    if handle.read(2) == b"\x1f\x8b" and source.size >= 20:
                        handle.seek(source.size - 4)
                        trailer = int.from_bytes(handle.read(4), "little")
            except Exception:  # noqa: BLE001 - unreadable here: the parse will say why; assume the usual ratio
                trailer = None
        return footprint.estimate_file_parse_bytes(source.size, gzipped, trailer)

    def _try_cache(self, identity: SourceIdentity) -> Optional[TraceModel]:
        return self.cache.load(identity)

    def _ensure_pool(self) -> ParserPool:
        if self._pool is None:
            self._pool = ParserPool(self.max_workers, budget_bytes=self.parse_memory_bytes,
                                    timeout_seconds=self.parse_timeout_seconds)
        return self._pool

    def _submit(self, key: tuple[str, str, str], state: _SpanState, identity: SourceIdentity) -> None:
        pool = self._ensure_pool()
        slot = self._free_slots.pop()
        pool.progress[slot] = 0.0
        state.identity, state.progress_slot, state.status = identity, slot, "loading"
        state.job = pool.submit(
            parse_into_cache,
            (state.source.path, self.cache.cache_dir, identity, slot, self.storage.access(),
             [path for path, _, _ in state.source.companions], manifest_batch_size(state.source.manifest)),
            state.estimate if state.estimate is not None else self._parse_estimate(state.source))
        self._in_flight[state.job] = key
        state.job.add_done_callback(lambda f: self._wake.set())

    def _derive_later(self, model: TraceModel, batch_size: Optional[int]) -> None:
        """Queue the derived structures of a freshly parsed model behind the parses (lowest priority)."""
        if model.cache_path:
            self._queued_derivations.append((model.cache_path, batch_size))

    def _start_derivations(self) -> None:
        while self._queued_derivations and self._jobs() + len(self._derivations) < self.max_workers:
            model_path, batch_size = self._queued_derivations[0]
            estimate = derive_estimate(model_path)
            if not self._ensure_pool().room_for(estimate):
                return
            self._queued_derivations.popleft()
            try:
                future = self._ensure_pool().submit(derive_in_cache, (model_path, batch_size), estimate)
            except RuntimeError:  # shut down
                return
            future.add_done_callback(lambda f: self._wake.set())
            self._derivations.append(future)

    def _collect_finished(self) -> None:
        with self._lock:
            self._derivations = [f for f in self._derivations if not f.done()]
            self._finish_jobs(self._in_flight, self._spans, lambda why: ParseOutcome(error=why), self.cache.load,
                              "model")
            self._finish_jobs(self._snapshot_jobs, self._snapshots, lambda why: SnapshotOutcome(error=why),
                              self.cache.load_snapshot, "snapshot")

    def _finish_jobs(self, jobs: dict[Any, Any], states: dict[Any, Any], failed: Callable[[str], Any],
                     read_back: Callable[[Any], Any], what: str) -> None:
        """Take the outcome of every finished parse job (a trace's or a snapshot's) into its state: the model, or
        the error for the user (called with the lock held)."""
        for future in [f for f in jobs if f.done()]:
            key = jobs.pop(future)
            state = states.get(key)
            if state is None or state.job is not future:
                continue
            state.job = None
            if state.progress_slot is not None:
                self._free_slots.append(state.progress_slot)
                state.progress_slot = None
            try:
                outcome = future.result()
            except JobFailed as exc:
                outcome = failed(str(exc))
            except futures.CancelledError:
                outcome = failed("loading was cancelled")
            if outcome.error is not None:
                state.status, state.error = "error", outcome.error
            elif outcome.model is not None:
                self._report_cache_write(outcome.cache_error)
                state.status, state.model = "ready", outcome.model
            else:
                model = read_back(state.identity) if state.identity else None
                if model is None:
                    state.status, state.error = "error", f"the parsed {what} could not be read back from the cache"
                else:
                    state.status, state.model = "ready", model
                    self._evict_due = True

    def _report_cache_write(self, why: Optional[str]) -> None:
        """Say once per server that parsed spans are kept in memory because the cache cannot be written."""
        if not self._cache_write_reported:
            self._cache_write_reported = True
            logger.warning("profscope: the cache in %s cannot be written (%s); parsed spans are kept in memory "
                           "and parsed again at the next start", self.cache.cache_dir or "(none)", why)

    # Queries (request threads) -----------------------------------------------------------

    def _progress_of(self, state: _SpanState | _SnapshotState) -> float:
        if state.status == "ready" or state.status == "error":
            return 1.0
        if state.progress_slot is not None and self._pool is not None:
            return float(min(max(self._pool.progress[state.progress_slot], 0.0), 0.99))
        return 0.0

    def _snapshot_info(self, state: _SnapshotState) -> dict[str, Any]:
        src = state.source
        info: dict[str, Any] = {"name": src.name, "file": self.storage.relative(src.path), "size": src.size,
                                "worker": src.worker, "span": src.span,
                                "status": "loading" if state.status == "queued" else state.status}
        if state.status in ("queued", "loading"):
            info["progress"] = round(self._progress_of(state), 3)
        if state.error:
            info["error"] = state.error
        return info

    def runs(self) -> list[dict[str, Any]]:
        """The ``runs`` route's payload. A run's memory snapshots are listed under ``memory_snapshots``; a run that
        holds snapshots only is listed too (with no workers)."""
        self._collect_finished()
        with self._lock:
            by_run: dict[str, dict[str, list[_SpanState]]] = {}
            for (run, worker, _span), state in self._spans.items():
                by_run.setdefault(run, {}).setdefault(worker, []).append(state)
            snapshots_of: dict[str, list[_SnapshotState]] = {}
            for (run, _name), snapshot in sorted(self._snapshots.items()):
                snapshots_of.setdefault(run, []).append(snapshot)
                by_run.setdefault(run, {})
            out = []
            for run in sorted(by_run):
                workers = by_run[run]
                states: list[Any] = [s for spans in workers.values() for s in spans] or snapshots_of.get(run, [])
                loading = [s for s in states if s.status in ("queued", "loading")]
                failed = [s for s in states if s.status == "error"]
                entry: dict[str, Any] = {"name": run}
                if loading:
                    entry["status"] = "loading"
                    entry["progress"] = round(sum(self._progress_of(s) for s in states) / len(states), 3)
                elif failed:
                    entry["status"] = "error"
                    entry["error"] = "; ".join(
                        f"{os.path.basename(s.source.path)}: {s.error}" for s in failed[:5]
                    ) + (f" (and {len(failed) - 5} more)" if len(failed) > 5 else "")
                else:
                    entry["status"] = "ready"
                # Named by the file (writer, Paddle, MindSpore), else decided by the content once parsed.
                frameworks = sorted({framework for s in states if isinstance(s, _SpanState)
                                     for framework in [s.source.framework or self._framework(s)] if framework})
                if frameworks:
                    entry["framework"] = ",".join(frameworks)
                entry["workers"] = []
                if run in snapshots_of:
                    entry["memory_snapshots"] = [self._snapshot_info(s) for s in snapshots_of[run]]
                for worker in sorted(workers):
                    spans = sorted(workers[worker], key=lambda s: layout.span_sort_key(s.source.span))
                    span_info = [self._span_info(s) for s in spans]
                    worker_entry: dict[str, Any] = {
                        "name": worker, "spans": [s.source.span for s in spans], "span_info": span_info,
                    }
                    # The rank the traces record (distributedInfo), once a span is parsed; names stay the files'.
                    ranks = [info["rank"] for info in span_info if "rank" in info]
                    if ranks:
                        worker_entry["rank"] = ranks[0]
                    entry["workers"].append(worker_entry)
                out.append(entry)
            return out

    def _span_info(self, state: _SpanState) -> dict[str, Any]:
        info: dict[str, Any] = {
            "name": state.source.span,
            "status": "loading" if state.status == "queued" else state.status,
            "file": self.storage.relative(state.source.path),
            "size": state.source.size,
        }
        if state.status in ("queued", "loading"):
            info["progress"] = round(self._progress_of(state), 3)
        if state.error:
            info["error"] = state.error
        if state.source.manifest:
            info["manifest"] = _listed_manifest(state.source.manifest)
        # Start time of day, steps and length: what the span pickers show instead of the id; the recorded rank.
        listing = self._listing(state)
        if listing is None:
            info.update(answers.span_facts(None, state.source.manifest))
        else:
            info.update(listing["facts"])
            if listing["rank"] is not None:
                info["rank"] = listing["rank"]
        return info

    @staticmethod
    def _listing(state: _SpanState) -> Optional[dict[str, Any]]:
        """What the runs list shows of a ready span (``answers.span_listing``): from its model, or from its pack's
        manifest until the model is read (the same answer, stored when the pack was made)."""
        if state.status != "ready":
            return None
        if state.model is not None:
            return answers.span_listing(state.model)
        return state.pack.listing if state.pack is not None else None

    def _framework(self, state: _SpanState) -> Optional[str]:
        listing = self._listing(state)
        return listing["framework"] if listing is not None else None

    def skipped_files(self) -> dict[str, Any]:
        """The files of the last scan that are no span, by reason (the ``runs`` route's ``skipped``)."""
        return self._discovery.skipped.as_json()

    def pending_files(self) -> int:
        with self._lock:
            return self._pending_files

    def logdir_error(self) -> Optional[str]:
        """Why the last scan could not list the logdir (a remote one: bucket, credentials, extra), else None."""
        return self._logdir_error

    def span(self, run: Optional[str], worker: Optional[str], span: Optional[str], load_model: bool = True) -> Span:
        """The parsed span (run, worker, span), with its file, manifest and model; ``span`` may be left out for a
        worker's only span. Raises UnknownSpan, SpanLoading (parsing it now: it goes first) or SpanFailed.
        ``load_model=False``: a span opened from a pack is returned before its model is read (``Span.model`` reads
        it, and may raise SpanLoading then)."""
        found = self._find_span(run, worker, span)
        if load_model:
            found.model  # noqa: B018 - read now: SpanLoading here where the pack does not read
        return found

    def _find_span(self, run: Optional[str], worker: Optional[str], span: Optional[str]) -> Span:
        self._collect_finished()
        with self._lock:
            key = (run, worker, span)
            if span in (None, "") or key not in self._spans:  # a span named in full is found at once (a run's ranks)
                candidates = [k for k in self._spans if k[0] == run]
                if not candidates:
                    raise UnknownSpan(f"unknown run {run!r}")
                candidates = [k for k in candidates if k[1] == worker]
                if not candidates:
                    raise UnknownSpan(f"unknown worker {worker!r} in run {run!r}")
                if span in (None, ""):
                    if len(candidates) != 1:
                        names = ", ".join(sorted((k[2] for k in candidates), key=layout.span_sort_key))
                        raise UnknownSpan(f"worker {worker!r} has several spans; name one with span= ({names})")
                    key = candidates[0]
            state = self._spans.get(key)  # type: ignore[arg-type]
            if state is None:
                raise UnknownSpan(f"unknown span {span!r} of worker {worker!r} in run {run!r}")
            if state.status == "ready" and state.model is None and state.pack is not None:
                return Span(key[0], key[1], key[2], state.source, self._loader(key, state), state.pack)
            if state.status == "ready" and state.model is not None:
                if not state.model.damage:
                    return Span(key[0], key[1], key[2], state.source, self._loader(key, state), state.pack)
                # A cached column failed its checksum (array_file.read_model removed the entry): parsed again.
                logger.warning("profscope: the cached model of %s is damaged (%s); parsing the trace again",
                               state.source.path, state.model.damage.get("reason"))
                if not state.model.writable:  # a pack's: never used again for this file
                    src = state.source
                    self._bad_packs.add((src.path, src.size, src.mtime_ns, src.etag))
                state.status, state.model, state.pack = "queued", None, None
            if state.status == "error":
                raise SpanFailed(state.error or "the trace could not be loaded")
            progress = self._progress_of(state)
            if state.status == "queued":
                state.priority = 1
        self._wake.set()
        raise SpanLoading(progress)

    def folder_summaries(self, spans: Sequence[Span]) -> list[Optional[Any]]:
        """Each span's summary (``RankSummary``) from the summary of its pack's folder (``pack_summary``), where the
        span was opened from a pack that summary holds at its key; None for the others."""
        from . import pack_summary

        return pack_summary.summaries_from_folders(self.pack_root, [s.pack for s in spans],
                                                   [(s.worker, s.name) for s in spans])

    def snapshot(self, run: Optional[str], worker: Optional[str] = None, span: Optional[str] = None,
                 name: Optional[str] = None) -> LoadedSnapshot:
        """The parsed memory snapshot a request names: by ``run``, then the ``worker`` and ``span`` it belongs to and
        its ``name`` where given; a run (or worker, span) holding one snapshot needs nothing more. Raises
        UnknownSpan, SpanLoading (parsing it now: it goes first) or SpanFailed, as ``span`` does."""
        self._collect_finished()
        with self._lock:
            states = [s for (r, _n), s in sorted(self._snapshots.items()) if r == run]
            if not states:
                known = any(k[0] == run for k in self._spans)
                raise UnknownSpan(f"run {run!r} has no memory snapshot" if known else f"unknown run {run!r}")
            for value, field_name in ((worker, "worker"), (span, "span"), (name, "name")):
                if value not in (None, ""):
                    states = [s for s in states if getattr(s.source, field_name) == value]
            if len(states) != 1:
                names = ", ".join(s.source.name for s in states) or "none"
                if not states:
                    raise UnknownSpan(f"no memory snapshot of run {run!r} matches the request (snapshots: "
                                      f"{', '.join(s.source.name for (r, _n), s in sorted(self._snapshots.items()) if r == run)})")
                raise UnknownSpan(f"run {run!r} has several memory snapshots; name one with snapshot= ({names})")
            state = states[0]
            if state.status == "ready" and state.model is not None:
                if not state.model.damage:
                    return LoadedSnapshot(run or "", state.source.name, state.source, state.model)
                logger.warning("profscope: the cached snapshot of %s is damaged (%s); reading it again",
                               state.source.path, state.model.damage.get("reason"))
                state.status, state.model = "queued", None
            if state.status == "error":
                raise SpanFailed(state.error or "the snapshot could not be loaded")
            progress = self._progress_of(state)
            if state.status == "queued":
                state.priority = 1
        self._wake.set()
        raise SpanLoading(progress)

    def snapshots_of_span(self, run: str, worker: str, span: str) -> list[LoadedSnapshot]:
        """The memory snapshots that belong to one span and are parsed now (a damaged cache entry left out). One
        still queued, parsing or failed is left out too, and nothing waits for it or moves it up the queue: the
        trace viewer lists a snapshot beside the trace once it is ready."""
        self._collect_finished()
        with self._lock:
            return [LoadedSnapshot(r, s.source.name, s.source, s.model)
                    for (r, _n), s in sorted(self._snapshots.items())
                    if r == run and s.source.worker == worker and s.source.span == span
                    and s.status == "ready" and s.model is not None and not s.model.damage]

    def snapshots_of(self, run: str) -> list[dict[str, Any]]:
        """The memory snapshots of a run, as the runs route lists them."""
        self._collect_finished()
        with self._lock:
            return [self._snapshot_info(s) for (r, _n), s in sorted(self._snapshots.items()) if r == run]

    def source_of(self, run: str, worker: str, span: str) -> Optional[SpanSource]:
        with self._lock:
            state = self._spans.get((run, worker, span))
            return state.source if state else None

    def workers_of(self, run: str) -> dict[str, list[str]]:
        """Worker → span names in time order, for one run; UnknownSpan when there is no such run."""
        with self._lock:
            keys = [k for k in self._spans if k[0] == run]
        if not keys:
            raise UnknownSpan(f"unknown run {run!r}")
        workers: dict[str, list[str]] = {}
        for _run, worker, span in keys:
            workers.setdefault(worker, []).append(span)
        return {w: sorted(spans, key=layout.span_sort_key) for w, spans in sorted(workers.items())}

    def sources(self) -> list[SpanSource]:
        with self._lock:
            return [state.source for state in self._spans.values()]

    def wait_until_settled(self, timeout: float = 60.0) -> bool:
        """For tests and the CLI: block until nothing is queued or loading (or timeout)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.refresh()
            with self._lock:
                busy = any(s.status in ("queued", "loading") for s in [*self._spans.values(), *self._snapshots.values()])
                self._derivations = [f for f in self._derivations if not f.done()]
                busy = busy or bool(self._derivations) or bool(self._queued_derivations)
            if not busy:
                return True
            time.sleep(0.1)
        return False
