"""The TensorBoard plugin: routes under ``/data/plugin/profscope/``.

Routes are thin: they read and check parameters, resolve the (run, worker, span) against
the discovered runs (never against the filesystem), ask the question of ``views/answers.py``
(which knows what is cached and where) and return its JSON. See ``api/openapi.yaml`` for the
contract.
"""

from __future__ import annotations

import concurrent.futures as futures
import mimetypes
import os
import posixpath
from typing import Any, Callable, Iterator, Optional, Sequence

from tensorboard.plugins import base_plugin
from werkzeug import wrappers

from .. import layout
from ..ingest.mindspore import minddata
from ..ingest.mindspore import step_trace as mindspore_step_trace
from ..model.trace_model import TraceModel
from ..store.discovery import SpanSource
from ..store.pack_summary import summary_of_rank
from ..store.runs import LoadedSnapshot, RunManager
from ..store.spans import Span, SpanFailed, SpanLoading, UnknownSpan
from ..views import answers, compare, kernels, memory, memory_snapshot, operators, stacks
from ..views.quantities import devices
from ..views.analyses import idle as idle_time, sequences as kernel_sequences
from ..views.distributed import rank_steps
from ..views.trace import queries as trace, snapshot_counters
from . import provider_runs
from .table_route import table_route  # format=csv on the table routes
from .http import HttpError, arg, choice, download_route, json_response, json_route, safe_filename

# is_active() waits this long at most for the first scan of the logdir (usually milliseconds).
FIRST_SCAN_WAIT_SECONDS = 2.0
STATIC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "static")  # tb_plugin/static
# Read size when streaming a trace file to the browser (a remote file is fetched in such blocks).
_DOWNLOAD_BLOCK = 1 << 20


def static_files(folder: str = STATIC_DIR) -> dict[str, str]:
    """Name → path of every file shipped in the static folder (the only files ever served)."""
    files: dict[str, str] = {}
    for root, _dirs, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            files[os.path.relpath(path, folder).replace(os.sep, "/")] = path
    return files


class _RankModels(Sequence[TraceModel]):
    """The models of a run's ranks, each read when asked for (a rank opened from a pack is read on first use: the
    run-level answers need one model, for the links' peak, not a thousand)."""

    def __init__(self, spans: list[Span]) -> None:
        self._spans = spans

    def __len__(self) -> int:
        return len(self._spans)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [span.model for span in self._spans[index]]
        return self._spans[index].model


class ProfscopePlugin(base_plugin.TBPlugin):
    plugin_name = layout.PLUGIN_NAME

    def __init__(
        self,
        context: base_plugin.TBContext,
        cache_dir: Optional[str] = None,
        refresh_seconds: float = 5.0,
        max_workers: Optional[int] = None,
        cache_max_gb: Optional[float] = None,
        parse_timeout_seconds: Optional[float] = None,
        parse_memory_gb: Optional[float] = None,
        link_roots: Optional[Sequence[str]] = None,
        device_peaks: Optional[str] = None,
        packs: Optional[str] = None,
    ) -> None:
        self._logdir = context.logdir or ""
        self._packs = packs
        # The user's device peaks (--profscope_device_peaks, else PROFSCOPE_DEVICE_PEAKS): read once; a file that
        # cannot be used leaves the built-in table, and the answers that use peaks say why.
        self._peaks = answers.PeaksSetting.load(device_peaks or os.environ.get("PROFSCOPE_DEVICE_PEAKS"))
        self._cache_max_bytes = None if cache_max_gb is None else int(cache_max_gb * (1 << 30))
        self._parse_timeout_seconds = parse_timeout_seconds
        self._parse_memory_bytes = None if parse_memory_gb is None else int(parse_memory_gb * (1 << 30))
        self._link_roots = link_roots
        self._context = context  # its data_provider answers is_active from event files
        self._cache_dir = cache_dir
        self._refresh_seconds = refresh_seconds
        self._max_workers = max_workers
        self._manager: Optional[RunManager] = None
        self._active = False
        self._distributed_cache: dict[Any, Any] = {}

    @property
    def manager(self) -> RunManager:
        """Created and started on first use: the constructor stays trivial."""
        if self._manager is None:
            self._manager = RunManager(
                self._logdir, cache_dir=self._cache_dir, refresh_seconds=self._refresh_seconds,
                max_workers=self._max_workers, cache_max_bytes=self._cache_max_bytes,
                parse_timeout_seconds=self._parse_timeout_seconds, parse_memory_bytes=self._parse_memory_bytes,
                link_roots=self._link_roots, packs=self._packs,
            )
            self._manager.start()
        return self._manager

    def is_active(self) -> bool:
        """Cheap, sticky and never raising: true once TensorBoard's data provider has Profscope span
        records (event files of the writer or import), else once the logdir has a trace file, complete or not.

        Files still being written count too: TensorBoard asks once when its page loads, and a
        job that is writing its first span must not leave the tab hidden.
        """
        if self._active:
            return True
        try:  # span records in event files, as TensorBoard's data provider read them: no folder scan
            if provider_runs.has_profscope_data(self._context):
                self._active = True
                return True
        except Exception:  # noqa: BLE001 - fall back to scanning
            pass
        if not self._logdir:
            return False
        try:
            # Only waits: the scan (a remote listing too) runs on the manager's refresh thread.
            manager = self.manager
            manager.wait_for_first_scan(FIRST_SCAN_WAIT_SECONDS)
            self._active = bool(manager.runs()) or manager.pending_files() > 0
        except Exception:  # noqa: BLE001
            return False
        return self._active

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name=layout.TAB_NAME, disable_reload=True)

    def get_plugin_apps(self) -> dict[str, Callable[..., Any]]:
        return {
            "/index.js": self._serve_bundle,
            "/static/*": self._serve_static,
            "/runs": json_route(self._runs_route),
            "/summary": json_route(self._summary_route),
            "/overview": table_route(self._overview_route, "overview"),
            "/operators": table_route(self._operators_route, "operators"),
            "/operators/detail": json_route(self._operator_detail_route),
            "/kernels": table_route(self._kernels_route, "kernels"),
            "/roofline": table_route(self._roofline_route, "roofline"),
            "/flamegraph": json_route(self._flamegraph_route),
            "/stacks/folded": download_route(self._folded_stacks_route),
            "/modules": json_route(self._modules_route),
            "/memory": table_route(self._memory_route, "memory"),
            "/distributed": table_route(self._distributed_route, "distributed"),
            "/distributed/matrix": table_route(self._distributed_matrix_route, "distributed/matrix"),
            "/distributed/collectives": table_route(self._distributed_collectives_route, "distributed/collectives"),
            "/datapipeline": json_route(self._data_pipeline_route),
            "/steptrace": table_route(self._step_trace_route, "steptrace"),
            "/critical_path": json_route(self._critical_path_route),
            "/compare": table_route(self._compare_route, "compare"),
            "/runs/table": table_route(self._runs_table_route, "runs/table"),
            "/analyses/idle": table_route(self._idle_route, "analyses/idle"),
            "/analyses/launches": table_route(self._launches_route, "analyses/launches"),
            "/analyses/queues": table_route(self._queues_route, "analyses/queues"),
            "/analyses/sequences": table_route(self._sequences_route, "analyses/sequences"),
            "/analyses/annotations": table_route(self._annotations_route, "analyses/annotations"),
            "/trace/tracks": json_route(self._trace_tracks_route),
            "/trace/slices": json_route(self._trace_slices_route),
            "/trace/counters": json_route(self._trace_counters_route),
            "/trace/event": json_route(self._trace_event_route),
            "/trace/flows": json_route(self._trace_flows_route),
            "/trace/search": json_route(self._trace_search_route),
            "/trace/range": table_route(self._trace_range_route, "trace/range"),
            "/trace/ranks": json_route(self._trace_ranks_route),
            "/trace/download": self._trace_download_route,
            "/memory_snapshot": json_route(self._snapshot_route),
            "/memory_snapshot/timeline": json_route(self._snapshot_timeline_route),
            "/memory_snapshot/at": table_route(self._snapshot_at_route, "memory_snapshot/at"),
            "/memory_snapshot/allocation": json_route(self._snapshot_allocation_route),
            "/memory_snapshot/segments": table_route(self._snapshot_segments_route, "memory_snapshot/segments"),
            "/memory_snapshot/compare": table_route(self._snapshot_compare_route, "memory_snapshot/compare"),
        }

    # Static files ---------------------------------------------------------------------------

    @wrappers.Request.application
    def _serve_bundle(self, request: wrappers.Request) -> wrappers.Response:
        return self._static_response("index.js")

    @wrappers.Request.application
    def _serve_static(self, request: wrappers.Request) -> wrappers.Response:
        prefix = f"/data/plugin/{layout.PLUGIN_NAME}/static/"
        path = request.path
        name = path[path.index(prefix) + len(prefix):] if prefix in path else ""
        return self._static_response(name)

    def _static_response(self, name: str) -> wrappers.Response:
        # Only names listed from the static folder are served: no path is built from the request.
        path = static_files().get(name)
        if path is None:
            return wrappers.Response(
                "not found", status=404, content_type="text/plain", headers={"X-Content-Type-Options": "nosniff"}
            )
        mimetype = "text/javascript" if name.endswith(".js") else mimetypes.guess_type(name)[0] or "application/octet-stream"
        with open(path, "rb") as f:
            body = f.read()
        return wrappers.Response(body, content_type=mimetype, headers={"X-Content-Type-Options": "nosniff"})

    # Routes ----------------------------------------------------------------------------------

    def _runs_route(self, request: wrappers.Request) -> dict[str, Any]:
        manager = self.manager
        payload: dict[str, Any] = {"runs": manager.runs(), "scanned": manager.has_scanned(),
                                   "pending_files": manager.pending_files()}
        logdir_error = manager.logdir_error()
        if logdir_error:
            payload["logdir_error"] = logdir_error  # e.g. a remote logdir's bucket or credentials
        # What the scan left out and why; with no runs, what it looked for (the empty page lists it).
        payload["skipped"] = manager.skipped_files()
        if not payload["runs"]:
            payload["looked_for"] = [{"pattern": item.pattern, "written_by": item.written_by}
                                     for item in layout.LAYOUTS_LOOKED_FOR]
        return payload

    def _span(self, request: wrappers.Request) -> Span:
        """The request's span (``run``, ``worker``, ``span``), resolved in one call against the discovered runs."""
        return self.manager.span(arg(request, "run", required=True), arg(request, "worker", required=True),
                                 arg(request, "span"))

    def _model(self, request: wrappers.Request) -> TraceModel:
        return self._span(request).model

    def _summary_route(self, request: wrappers.Request) -> dict[str, Any]:
        return answers.summary(self._model(request))

    def _overview_route(self, request: wrappers.Request) -> dict[str, Any]:
        span = self._span(request)
        marker = arg(request, "step_marker") or None
        # Host CPU from the manifest as it is now: never stale.
        return answers.overview(span.model, marker=marker, batch_size=span.batch_size, manifest=span.manifest,
                                peaks=self._peaks)

    def _operators_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        return answers.operators(model, choice(request, "group_by", operators.GROUP_BY, "name"), self._peaks)

    def _operator_detail_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        name = arg(request, "name", required=True)
        input_shape = request.args.get("input_shape")
        return answers.operator_detail(model, name or "", input_shape)

    def _kernels_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        return answers.kernels(model, choice(request, "group_by", kernels.GROUP_BY, "name"), self._peaks)

    def _roofline_route(self, request: wrappers.Request) -> dict[str, Any]:
        return answers.roofline(self._model(request), self._peaks)

    def _flamegraph_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        return answers.flamegraph(model, choice(request, "weight", stacks.WEIGHTS, "host"))

    def _folded_stacks_route(self, request: wrappers.Request) -> tuple[bytes, str, str]:
        text = answers.folded_stacks(self._model(request), choice(request, "weight", stacks.WEIGHTS, "host"))
        return text.encode("utf-8"), "text/plain; charset=utf-8", "stacks.folded.txt"

    def _modules_route(self, request: wrappers.Request) -> dict[str, Any]:
        return answers.modules(self._model(request))

    def _memory_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        return answers.memory(model, device=arg(request, "device"), start_us=self._float(request, "start"),
                              end_us=self._float(request, "end"), min_bytes=self._int(request, "min_bytes", 0),
                              name_filter=arg(request, "name") or "",
                              limit=self._int(request, "limit", memory.EVENT_LIMIT, 1, 100000))

    def _run_ranks(self, request: wrappers.Request) -> tuple[str, int, list[tuple[str, Span]], list[dict[str, str]]]:
        """Run level: one span of every worker (the span at ``span_index`` in each worker's time order); a span opened
        from a pack comes without its model read (``Span.model`` reads it when needed)."""
        run = arg(request, "run", required=True) or ""
        index = self._int(request, "span_index", 0, 0, 1 << 20)
        workers = self.manager.workers_of(run)
        ranks, failed, loading = [], [], []
        for worker, spans in workers.items():
            if index >= len(spans):
                continue
            try:
                ranks.append((worker, self.manager.span(run, worker, spans[index], load_model=False)))
            except SpanLoading as exc:
                loading.append(exc.progress)
            except SpanFailed as exc:
                failed.append({"worker": worker, "error": str(exc)})
        if loading:
            raise SpanLoading(float(sum(loading) + len(ranks)) / (len(loading) + len(ranks)))
        if not ranks and failed:
            raise SpanFailed("; ".join(f"{f['worker']}: {f['error']}" for f in failed))
        return run, index, ranks, failed

    def _summaries(self, ranks: list[tuple[str, Span]]) -> list[Any]:
        """Each rank's summary: from the summary of its pack's folder where that holds it (one read for all the
        ranks of a folder), else read from its pack (or its cache entry) where one lies beside its model, else made
        from the model (``views/distributed/rank_summary.py``)."""
        summaries = self.manager.folder_summaries([span for _, span in ranks])
        missing = [i for i, summary in enumerate(summaries) if summary is None]

        def own(i: int) -> Any:
            worker, span = ranks[i]
            return summary_of_rank(worker, span.name, span.model, span.pack is None or span.pack.views_current)

        if len(missing) < 16:
            for i in missing:
                summaries[i] = own(i)
        else:  # many small files: Parquet's reads let go of the interpreter lock, so a few threads read them faster
            with futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="profscope-summaries") as pool:
                for i, summary in zip(missing, pool.map(own, missing)):
                    summaries[i] = summary
        return summaries

    def _distributed_answers(self, request: wrappers.Request) -> tuple[dict[str, Any], list[Any], list[Any]]:
        """The run's answers computed so far (memoised per run, span index and ranks), the ranks' summaries, and
        [span index, failed ranks, the ranks' models (each read when asked for)]."""
        run, index, ranks, failed = self._run_ranks(request)
        # Keyed by what each rank was opened from: its pack (its key is in the folder's name), else its model (a
        # reloaded span is a new model, so a stale answer is never reused).
        key = (run, index, tuple((w, ("pack", s.pack.folder) if s.pack is not None else ("model", id(s.model)))
                                 for w, s in ranks))
        if key not in self._distributed_cache:
            summaries = self._summaries(ranks)
            # Keep one: runs are big. The models are kept with it so that their ids stay theirs.
            held = [s.model for _, s in ranks if s.pack is None]
            self._distributed_cache = {key: ({}, ranks, summaries, held)}
        found, spans, summaries, _ = self._distributed_cache[key]
        return found, summaries, [index, failed, _RankModels([s for _, s in spans])]

    def _distributed_route(self, request: wrappers.Request) -> dict[str, Any]:
        found, summaries, (index, failed, models) = self._distributed_answers(request)
        if "distributed" not in found:
            found["distributed"] = answers.distributed_from_summaries(summaries, models, self._peaks)
        payload = dict(found["distributed"])
        payload["span_index"] = index
        payload["failed"] = failed
        return payload

    def _distributed_collectives_route(self, request: wrappers.Request) -> dict[str, Any]:
        """Collectives matched across ranks, bandwidths per kind, and the straggler table (``cross_rank.py``)."""
        found, summaries, (index, failed, _) = self._distributed_answers(request)
        if "cross_rank" not in found:
            found["cross_rank"] = answers.cross_rank(summaries)
        payload = dict(found["cross_rank"])
        payload["span_index"] = index
        payload["failed"] = failed
        return payload

    def _rank_steps(self, request: wrappers.Request) -> tuple[int, list[tuple[rank_steps.RankSteps, Any]],
                                                                list[dict[str, str]]]:
        """Every worker's span at ``span_index`` with its steps, ordered by rank (each rank's model read on use)."""
        _, summaries, (index, failed, models) = self._distributed_answers(request)
        return index, answers.rank_steps_of_summaries(summaries, models), failed

    def _distributed_matrix_route(self, request: wrappers.Request) -> dict[str, Any]:
        """Rank × step: step time, communication and exposed communication (µs) of every worker's span."""
        _, summaries, (index, failed, _) = self._distributed_answers(request)
        payload = answers.step_matrix([r for r, _ in answers.ordered_rank_steps(summaries)])
        payload["span_index"] = index
        payload["failed"] = failed
        return payload

    def _trace_ranks_route(self, request: wrappers.Request) -> dict[str, Any]:
        """The same step of every worker on one time axis: each worker's step and the shift (µs) that places it."""
        index, ranks, failed = self._rank_steps(request)
        try:
            payload = answers.rank_alignment(ranks, choice(request, "align", rank_steps.ALIGNMENTS, "step"),
                                             arg(request, "step") or None)
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None
        payload["span_index"] = index
        payload["failed"] = failed
        return payload

    def _data_pipeline_route(self, request: wrappers.Request) -> dict[str, Any]:
        """Is the span waiting for data: per-step data wait, verdict, and MindSpore's MindData pipeline."""
        span = self._span(request)
        marker = arg(request, "step_marker") or None
        return answers.data_pipeline(span.model, marker=marker, manifest=span.manifest,
                                     minddata=self._minddata_of(span.source))

    def _minddata_of(self, source: SpanSource) -> Optional[dict[str, Any]]:
        """MindData files beside a MindSpore timeline: the known names for its device id, in its folder only."""
        if "mindspore" not in (source.framework, source.layout):
            return None
        device_id = minddata.device_id_for(posixpath.basename(source.path), source.worker)
        if device_id is None:
            return None
        storage = self.manager.storage
        folder = storage.parent(source.path)
        # One byte over the limit tells a file too large to read from one that fits.
        return minddata.read_minddata(
            lambda name: storage.read_small(storage.join(folder, name), minddata.MAX_FILE_BYTES + 1), device_id)

    def _step_trace_route(self, request: wrappers.Request) -> dict[str, Any]:
        """Per step: iteration gap, forward, backward, optimizer, communication, tail; fp_point/bp_point name the
        operators that start forward and end backward. MindSpore's own step trace file is used when present."""
        span = self._span(request)
        fp_point, bp_point = arg(request, "fp_point") or None, arg(request, "bp_point") or None
        table, table_error = None, None
        try:  # only the known file names, in the discovered timeline's own folder
            table = mindspore_step_trace.load_beside(self.manager.storage, span.source.path)
        except mindspore_step_trace.StepTraceFileError as exc:
            table_error = str(exc)
        return answers.step_trace(span.model, fp_point, bp_point, table=table, table_error=table_error)

    def _critical_path_route(self, request: wrappers.Request) -> dict[str, Any]:
        """The chain of host operators, launches, device work and syncs that decides one step's length."""
        model = self._model(request)
        marker = arg(request, "step_marker") or None
        step = self._int(request, "step", 0)
        try:
            return answers.critical_path(model, step, marker)
        except answers.StepNotFound as exc:
            raise HttpError(400, str(exc)) from None

    # Analyses (the Analyses page), over the overview's steps --------------------------------

    def _idle_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        marker = arg(request, "step_marker") or None
        kernel_wait = self._float(request, "kernel_wait_us")
        kernel_wait = idle_time.KERNEL_WAIT_US if kernel_wait is None else kernel_wait
        if not 0 <= kernel_wait <= 1e9:
            raise HttpError(400, "kernel_wait_us must be between 0 and 1e9")
        return answers.idle_time(model, marker, kernel_wait)

    def _launches_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        marker = arg(request, "step_marker") or None
        return answers.launches(model, marker)

    def _queues_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        marker = arg(request, "step_marker") or None
        return answers.queue_length(model, marker)

    def _sequences_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        marker = arg(request, "step_marker") or None
        operator = arg(request, "operator") or ""
        min_length = self._int(request, "min_length", kernel_sequences.MIN_LENGTH, 1, 10000)
        return answers.kernel_sequences(model, operator, min_length, marker)

    def _annotations_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        marker = arg(request, "step_marker") or None
        return answers.annotations(model, marker)

    # Compare and the run table ----------------------------------------------------------

    def _compare_route(self, request: wrappers.Request) -> dict[str, Any]:
        """Two spans side by side; each side named by ``<side>_run``, ``<side>_worker``, ``<side>_span``."""
        group_by = choice(request, "group_by", compare.GROUP_BY, "name")
        sides: dict[str, compare.CompareSide] = {}
        loading: list[float] = []
        for prefix, label in (("base", "baseline"), ("exp", "experiment")):
            run = arg(request, f"{prefix}_run", required=True) or ""
            worker = arg(request, f"{prefix}_worker", required=True) or ""
            span = arg(request, f"{prefix}_span")
            try:
                side = self.manager.span(run, worker, span)
            except UnknownSpan as exc:
                raise UnknownSpan(f"{label}: {exc}") from None
            except SpanFailed as exc:
                raise SpanFailed(f"{label}: {exc}") from None
            except SpanLoading as exc:
                loading.append(exc.progress)
                continue
            page_batch = self._int(request, f"{prefix}_batch_size", 0, 0, 1 << 31) or None  # entered in the page
            # The manifest's batch size is read as the overview route reads it: both share one memo entry.
            sides[prefix] = compare.CompareSide(run, worker, side.name, side.model, side.batch_size, page_batch)
        if loading:
            # Both sides count: a ready side is done.
            raise SpanLoading((sum(loading) + len(sides)) / (len(loading) + len(sides)))
        return answers.compare(sides["base"], sides["exp"], group_by, self._peaks)

    def _runs_table_route(self, request: wrappers.Request) -> dict[str, Any]:
        """Every known span with its headline numbers. Never loads a span: uses the models already loaded."""
        spans: list[answers.TableSpan] = []
        for run in self.manager.runs():
            for worker in run["workers"]:
                for index, info in enumerate(worker.get("span_info", [])):
                    name, status = info["name"], info["status"]
                    source = self.manager.source_of(run["name"], worker["name"], name)
                    model, error, progress = None, info.get("error"), info.get("progress")
                    if status == "ready":
                        try:
                            model = self.manager.span(run["name"], worker["name"], name).model
                        except SpanLoading as exc:  # reloaded since the listing (the file changed)
                            status, progress = "loading", exc.progress
                        except (SpanFailed, UnknownSpan) as exc:
                            status, error = "error", str(exc)
                    spans.append(answers.TableSpan(
                        run=run["name"], worker=worker["name"], span=name, span_index=index, status=status,
                        model=model, progress=progress, error=error,
                        framework=source.framework if source else None,
                        manifest=dict(info.get("manifest") or {})))
        return answers.run_table(spans, self._peaks)

    # Memory snapshots -------------------------------------------------------------------------

    def _snapshot(self, request: wrappers.Request, prefix: str = "") -> LoadedSnapshot:
        """The request's memory snapshot: ``run``, and ``worker``, ``span``, ``snapshot`` (its name) where the run
        holds several (``prefix``: ``base_``/``exp_`` for compare)."""
        return self.manager.snapshot(arg(request, f"{prefix}run", required=True), arg(request, f"{prefix}worker"),
                                     arg(request, f"{prefix}span"), arg(request, f"{prefix}snapshot"))

    @staticmethod
    def _snapshot_call(compute: Callable[[], Any]) -> Any:
        try:
            return compute()
        except memory_snapshot.SnapshotQueryError as exc:
            raise HttpError(400, str(exc)) from None

    def _device_arg(self, request: wrappers.Request, name: str = "device") -> Optional[int]:
        value = request.args.get(name)
        return None if value in (None, "") else self._int(request, name, 0, 0, 1 << 20)

    def _row_arg(self, request: wrappers.Request) -> Optional[int]:
        value = request.args.get("row")
        return None if value in (None, "") else self._int(request, "row", -1, -1, 1 << 62)

    def _snapshot_route(self, request: wrappers.Request) -> dict[str, Any]:
        """A snapshot as a whole (``views/memory_snapshot.overview``, stored by the parser), which snapshot it is,
        the run's other snapshots, and the span it belongs to with what lines its times up with the trace's."""
        loaded = self._snapshot(request)
        model = loaded.model
        payload = dict(answers.snapshot_overview(model))
        source = loaded.source
        payload.update({"run": loaded.run, "snapshot": loaded.name, "file": self.manager.storage.relative(source.path),
                        "size": source.size, "worker": source.worker, "span": source.span,
                        "snapshots": self.manager.snapshots_of(loaded.run)})
        payload["linked"] = self._snapshot_link(loaded, payload.get("default_device"))
        return payload

    def _snapshot_link(self, loaded: LoadedSnapshot, device: Optional[int]) -> Optional[dict[str, Any]]:
        """The span a snapshot belongs to: its status, and once parsed the shift from the snapshot's times (µs since
        the epoch) to the trace's (``baseTimeNanoseconds``) and the device's capacity the trace states."""
        source = loaded.source
        if source.worker is None or source.span is None:
            return None
        link: dict[str, Any] = {"worker": source.worker, "span": source.span, "status": "ready",
                                "trace_offset_us": None, "capacity": None}
        try:
            span = self.manager.span(loaded.run, source.worker, source.span)
        except SpanLoading:
            link["status"] = "loading"
            return link
        except (SpanFailed, UnknownSpan) as exc:
            link["status"], link["error"] = "error", str(exc)
            return link
        link["trace_offset_us"] = memory_snapshot.trace_offset_us(loaded.model, span.model)
        if device is not None:
            capacity = devices.device_properties(span.model).get(device, {}).get("totalGlobalMem")
            link["capacity"] = capacity if isinstance(capacity, int) and not isinstance(capacity, bool) else None
        return link

    def _snapshot_timeline_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._snapshot(request).model
        return self._snapshot_call(lambda: answers.snapshot_timeline(
            model, self._device_arg(request), self._float(request, "start"), self._float(request, "end"),
            self._int(request, "width", 1000, 1, memory_snapshot.MAX_WIDTH)))

    def _snapshot_at_route(self, request: wrappers.Request) -> dict[str, Any]:
        """What is alive after one entry (``row``), or at ``time``, else at the peak, grouped by ``group_by``."""
        model = self._snapshot(request).model
        device, row, time = self._device_arg(request), self._row_arg(request), self._float(request, "time")
        group_by = choice(request, "group_by", memory_snapshot.GROUP_BY, "site")
        limit = self._int(request, "limit", memory_snapshot.GROUP_LIMIT, 1, 100000)
        site = None if request.args.get("site") in (None, "") else self._int(request, "site", -1, -1, 1 << 31)

        def compute() -> dict[str, Any]:
            return answers.snapshot_at(model, device, row, time, group_by, limit, site)

        return self._snapshot_call(compute)

    def _snapshot_allocation_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._snapshot(request).model
        index = self._int(request, "id", -1, 0)
        return self._snapshot_call(lambda: answers.snapshot_allocation(model, index))

    def _snapshot_segments_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._snapshot(request).model
        device, row, time = self._device_arg(request), self._row_arg(request), self._float(request, "time")
        return self._snapshot_call(lambda: answers.snapshot_segments(model, device, row, time))

    def _snapshot_compare_route(self, request: wrappers.Request) -> dict[str, Any]:
        """Two snapshots (of two spans or two runs) at their peaks, by allocation site; each side named by
        ``<side>_run`` and, where needed, ``<side>_worker``, ``<side>_span``, ``<side>_snapshot``."""
        sides: dict[str, LoadedSnapshot] = {}
        loading: list[float] = []
        for prefix, label in (("base_", "baseline"), ("exp_", "experiment")):
            try:
                sides[prefix] = self._snapshot(request, prefix)
            except UnknownSpan as exc:
                raise UnknownSpan(f"{label}: {exc}") from None
            except SpanFailed as exc:
                raise SpanFailed(f"{label}: {exc}") from None
            except SpanLoading as exc:
                loading.append(exc.progress)
        if loading:
            raise SpanLoading((sum(loading) + len(sides)) / (len(loading) + len(sides)))
        base, exp = sides["base_"], sides["exp_"]
        answer = self._snapshot_call(lambda: answers.snapshot_compare(
            base.model, exp.model, self._device_arg(request, "base_device"), self._device_arg(request, "exp_device")))
        answer["base"].update({"run": base.run, "snapshot": base.name})
        answer["exp"].update({"run": exp.run, "snapshot": exp.name})
        return answer

    # Trace viewer -------------------------------------------------------------------------

    @staticmethod
    def _float(request: wrappers.Request, name: str) -> Optional[float]:
        value = request.args.get(name)
        if value in (None, ""):
            return None
        try:
            number = float(value)
        except ValueError:
            raise HttpError(400, f"{name} must be a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise HttpError(400, f"{name} must be finite")
        return number

    @staticmethod
    def _int(request: wrappers.Request, name: str, default: int, lo: int = 0, hi: int = 1 << 62) -> int:
        value = request.args.get(name)
        if value in (None, ""):
            return default
        try:
            number = int(value)
        except ValueError:
            raise HttpError(400, f"{name} must be an integer") from None
        if not lo <= number <= hi:
            raise HttpError(400, f"{name} must be between {lo} and {hi}")
        return number

    def _beside(self, span: Span) -> list[answers.SnapshotBeside]:
        """The span's parsed memory snapshots (their counter tracks join the trace's when their times line up)."""
        return [answers.SnapshotBeside(s.name, s.model)
                for s in self.manager.snapshots_of_span(span.run, span.worker, span.name)]

    def _trace_tracks_route(self, request: wrappers.Request) -> dict[str, Any]:
        span = self._span(request)
        return answers.tracks(span.model, self._beside(span))

    def _trace_slices_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        track_ids = [t for t in (request.args.get("tracks") or "").split(",") if t]
        try:
            return answers.slices(model, self._float(request, "start"), self._float(request, "end"),
                                  self._int(request, "width", 1000, 1, trace.MAX_WIDTH), track_ids or None)
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None

    def _trace_counters_route(self, request: wrappers.Request) -> dict[str, Any]:
        span = self._span(request)
        track_ids = [t for t in (request.args.get("tracks") or "").split(",") if t]
        beside = self._beside(span) if any(t.startswith(snapshot_counters.TRACK_PREFIX) for t in track_ids) else []
        try:
            return answers.counters(span.model, self._float(request, "start"), self._float(request, "end"),
                                    self._int(request, "width", 1000, 1, trace.MAX_WIDTH), track_ids, beside)
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None

    def _event_row_request(self, request: wrappers.Request) -> tuple[Any, int]:
        model = self._model(request)
        return model, self._int(request, "id", -1, 0)

    def _trace_event_route(self, request: wrappers.Request) -> dict[str, Any]:
        model, event_id = self._event_row_request(request)
        full_text = self._int(request, "full_text", 0, 0, 1) == 1
        try:
            return answers.event(model, event_id, full_text=full_text)
        except KeyError:
            raise HttpError(404, f"no slice with id {event_id}") from None

    def _trace_flows_route(self, request: wrappers.Request) -> dict[str, Any]:
        model, event_id = self._event_row_request(request)
        try:
            detail = answers.event(model, event_id)
        except KeyError:
            raise HttpError(404, f"no slice with id {event_id}") from None
        return {"id": event_id, "flows": detail["flows"], "launched_by": detail["launched_by"],
                "launches": detail["launches"]}

    def _trace_search_route(self, request: wrappers.Request) -> dict[str, Any]:
        model = self._model(request)
        return answers.search(model, arg(request, "q", required=True) or "", self._int(request, "offset", 0),
                              self._int(request, "limit", trace.SEARCH_PAGE, 1, 1000))

    def _trace_range_route(self, request: wrappers.Request) -> dict[str, Any]:
        """What lies in a time range (the trace viewer's area selection): slices by name per track kind, the steps
        inside it, its breakdown and the counters' values in it (a memory snapshot's tracks too)."""
        span = self._span(request)
        start, end = self._float(request, "start"), self._float(request, "end")
        if start is None or end is None:
            raise HttpError(400, "start and end are required")
        track_ids = [t for t in (request.args.get("tracks") or "").split(",") if t]
        try:
            return answers.range_summary(span.model, start, end, track_ids or None, self._beside(span))
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None

    @wrappers.Request.application
    def _trace_download_route(self, request: wrappers.Request) -> wrappers.Response:
        """The original trace file of the span (for Perfetto or chrome://tracing)."""
        run, worker, span = request.args.get("run"), request.args.get("worker"), request.args.get("span")
        source = self.manager.source_of(run or "", worker or "", span or "") if run and worker else None
        if source is None and run and worker and not span:
            spans = [s for s in self.manager.sources() if s.run == run and s.worker == worker]
            source = spans[0] if len(spans) == 1 else None
        if source is None:
            return json_response(request, {"error": "unknown run, worker or span"}, 404)
        # The path comes from discovery, never from the request; a remote file streams through fsspec. A local
        # file is opened only as a regular file inside the logdir (storage.open_regular): never a link out of it,
        # a FIFO or a device, even one swapped in after the scan.
        storage = self.manager.storage
        try:
            handle = storage.open(source.path)
            size = _stream_size(handle, source.size)
        except Exception:  # noqa: BLE001 - removed, unreachable, refused or no longer permitted: all mean "gone"
            return json_response(request, {"error": "the trace file is no longer readable"}, 410)
        filename = posixpath.basename(source.path)
        gz = filename.endswith(".gz")
        return wrappers.Response(
            _file_blocks(handle, size), direct_passthrough=True,
            content_type="application/gzip" if gz else "application/json",
            headers={"Content-Disposition": f'attachment; filename="{safe_filename(filename)}"',
                     "X-Content-Type-Options": "nosniff", "Content-Length": str(size), "Cache-Control": "no-store"})


def _file_blocks(handle: Any, size: int) -> Iterator[bytes]:
    """The first ``size`` bytes of an open file, in blocks; closes it. A read error ends the body early (the
    status line is sent already: the client sees a body shorter than its Content-Length, never a server error)."""
    try:
        left = size
        while left > 0:
            try:
                block = handle.read(min(_DOWNLOAD_BLOCK, left))
            except Exception:  # noqa: BLE001 - e.g. the file was truncated or its disk went away
                return
            if not block:
                return
            left -= len(block)
            yield block
    finally:
        handle.close()


def _stream_size(handle: Any, listed_size: int) -> int:
    """The size of an open file: fstat for a local file, the size fsspec read when opening a remote one."""
    try:
        return os.fstat(handle.fileno()).st_size
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        size = getattr(handle, "size", None)
        return size if isinstance(size, int) else listed_size
