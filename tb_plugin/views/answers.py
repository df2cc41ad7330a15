"""Every question Profscope answers about a span (or a run, or two spans), one function each: the one place that
knows which answers are cached, under which key, and whether the parser stores them.

The routes (``server/plugin.py``), the derivation after a parse (``store/precomputed.py``), the run table, compare,
the report, the Scalars and the command line all ask here, so a question is answered the same way wherever it is
shown, and a cached answer is found under one key. The same functions are the Python API of
``profscope.open_trace`` (``reports/notebook.py``): ``open_trace(path).overview()`` is ``overview(model)``.

How an answer is kept, per question:

* **stored**: the parser process computes it right after the parse and stores it beside the model's cache file
  (``parser_answers`` lists them); here it is read from there (``model/stored_answers.answer``), or computed once
  and memoised on the model when the parser left none (an older cache, a model that is not cached). Only the
  default answer of a page's first request is stored (the overview of the default step marker, say).
* **memo**: computed on first use and memoised on the model (the analyses, cheap to compute but asked again as
  the page is revisited).
* **computed**: every call computes (windows of the trace viewer, detail rows, anything with free parameters);
  the views memoise what these share internally.

Adding a question (a new route, say):

1. Write the analysis as a pure function in the page's module under ``views/`` (``views/<page>.py`` or
   ``views/<page>/<module>.py``).
2. Add one function here, named after the question, that takes the model (or models) first and calls it: through
   ``_stored`` with a key made by ``_key(<QUESTION>, *params)`` when the parser should precompute it (and add it to
   ``parser_answers``; bump ``model/stored_answers.VIEWS_VERSION`` when a stored answer changes), through
   ``_memo`` when it should be memoised, or directly.
3. Add the function to ``SPAN_QUESTIONS`` when it takes one span's model first: it then is a method of
   ``profscope.open_trace(...)`` too.
4. The route calls it (``server/plugin.py``); the contract goes into ``api/openapi.yaml``.

No other module spells a key (``tests/test_answers.py`` fails on a key tuple, or on a call of
``stored_answers.answer``, outside this module).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Optional, Sequence

from ..ingest.mindspore.step_trace import StepTraceTable
from ..model import stored_answers
from ..model.snapshot import SnapshotModel
from ..model.trace_model import TraceModel
from . import compare as _compare
from . import data_pipeline as _data_pipeline
from . import kernels as _kernels
from . import memory as _memory
from . import memory_snapshot as _snapshot
from . import modules as _modules
from . import operators as _operators
from . import overview as _overview
from . import roofline as _roofline
from . import stacks as _stacks
from . import step_trace as _step_trace
from .analyses import annotations as _annotations
from .analyses import idle as _idle
from .analyses import launches as _launches
from .analyses import queues as _queues
from .analyses import sequences as _sequences
from .distributed import cross_rank as _cross_rank
from .distributed import rank_steps as _rank_steps
from .distributed import ranks as _ranks
from .quantities import efficiency as _efficiency
from .distributed.rank_summary import RankSummary
from .runs import span_names as _span_names
from .runs import summary as _summary
from .runs import table as _run_table
from .trace import critical_path as _critical_path
from .trace import queries as _trace
from .trace import range_summary as _range_summary
from .trace import snapshot_counters as _snapshot_counters

Key = tuple[Any, ...]

# The questions whose answers are cached, by the first element of their key. The stored keys are also the keys of
# the answers stored beside cached models: renaming one (or changing its parameters) needs a VIEWS_VERSION bump.
OVERVIEW = "overview"
OPERATORS = "operators"
KERNELS = "kernels"
MEMORY = "memory"
FLAMEGRAPH = "flamegraph"
CRITICAL_PATH = "critical_path"
TRACKS = "trace_tracks"
WORK_SUMMARY = "work_summary"
IDLE_TIME = "analyses.idle"
LAUNCHES = "analyses.launches"
QUEUES = "analyses.queues"
SEQUENCES = "analyses.sequences"
ANNOTATIONS = "analyses.annotations"
SPAN_FACTS = "span_facts"
# A memory snapshot's (a SnapshotModel keeps its stored answers beside its cache file as a trace model does).
SNAPSHOT = "memory_snapshot"
SNAPSHOT_AT = "memory_snapshot/at"


def _key(question: str, *params: Any) -> Key:
    return (question, *params)


class _Entry(NamedTuple):
    """A stored question's key and how to compute its answer."""

    key: Key
    compute: Callable[[], Any]


def _stored(model: TraceModel, entry: _Entry) -> Any:
    """The answer the parser stored for the entry's key, else computed once (memoised on the model)."""
    return stored_answers.answer(model, entry.key, entry.compute)


def _memo(model: TraceModel, key: Key, compute: Callable[[], Any]) -> Any:
    return model.memo(key, compute)


# --- the stored questions: their keys, once ----------------------------------------------------------------------

def _overview_entry(model: TraceModel, marker: Optional[str], batch_size: Optional[int]) -> _Entry:
    return _Entry(_key(OVERVIEW, marker, batch_size),
                  lambda: _overview.overview(model, marker=marker, batch_size=batch_size))


def _operators_entry(model: TraceModel, group_by: str) -> _Entry:
    return _Entry(_key(OPERATORS, group_by), lambda: _operators.operators(model, group_by))


def _kernels_entry(model: TraceModel, group_by: str) -> _Entry:
    return _Entry(_key(KERNELS, group_by), lambda: _kernels.kernels(model, group_by))


def _memory_entry(model: TraceModel) -> _Entry:
    return _Entry(_key(MEMORY), lambda: _memory.memory(model))


def _flamegraph_entry(model: TraceModel, weight: str) -> _Entry:
    return _Entry(_key(FLAMEGRAPH, weight), lambda: _stacks.flamegraph(model, weight))


def _critical_path_entry(model: TraceModel, step: int, marker: Optional[str]) -> _Entry:
    return _Entry(_key(CRITICAL_PATH, marker, step), lambda: _critical_path.critical_path(model, step, marker))


def _span_facts_entry(model: TraceModel) -> _Entry:
    return _Entry(_key(SPAN_FACTS), lambda: _span_names.model_facts(model))


def _tracks_entry(model: TraceModel) -> _Entry:
    return _Entry(_key(TRACKS), lambda: _trace.compute_tracks(model))


def _work_summary_entry(model: TraceModel) -> _Entry:
    return _Entry(_key(WORK_SUMMARY), lambda: _efficiency.work_summary(model))


# The device peaks the figures that need one are computed with, when the caller names none: the built-in table.
# The server and the commands pass the user's setting (--profscope_device_peaks, --device-peaks); the peaks are
# applied at request time, never stored, so a changed peaks file never leaves a stale answer.
BUILT_IN_PEAKS = _efficiency.PeaksSetting()
PeaksSetting = _efficiency.PeaksSetting


def _roofs(model: TraceModel, peaks: Optional[PeaksSetting]) -> _efficiency.Roofs:
    return (peaks or BUILT_IN_PEAKS).roofs(model)


def parser_answers(model: TraceModel, batch_size: Optional[int]) -> dict[Key, Callable[[], Any]]:
    """The answers the parser stores beside a freshly parsed model (``store/precomputed.py``): what the pages ask
    first, by the key the questions below look up."""
    # In this order (measured at 10 M events, 3 alternating pairs): the parser's share takes 3.0-3.5 s against
    # 3.8-5.7 s with the overview first, and peaks 0.18 GB lower; the operator tables alone take 1.1 s against 1.9 s.
    entries = [
        _operators_entry(model, "name"),
        _operators_entry(model, "input_shape"),
        _operators_entry(model, "stack"),
        _overview_entry(model, None, batch_size),
        _kernels_entry(model, "name"),
        _kernels_entry(model, "op_and_name"),
        _memory_entry(model),
        _flamegraph_entry(model, "host"),
        _critical_path_entry(model, 0, None),
        _tracks_entry(model),
        _work_summary_entry(model),
        # Listing a thousand packed ranks then reads none of their columns.
        _span_facts_entry(model),
    ]
    return {entry.key: entry.compute for entry in entries}


def question_of(key: Key) -> str:
    """The question a key answers (``OVERVIEW``, ``MEMORY``...)."""
    return str(key[0])


# --- one span ----------------------------------------------------------------------------------------------------

def summary(model: TraceModel) -> dict[str, Any]:
    """What the trace holds (sizes, time range, tracks, steps, parse notes) and what cannot be derived from it."""
    return _summary.span_summary(model)


def overview(model: TraceModel, marker: Optional[str] = None, batch_size: Optional[int] = None,
             manifest: Optional[Mapping[str, Any]] = None, peaks: Optional[PeaksSetting] = None) -> dict[str, Any]:
    """Where a step's time goes, the devices, the benchmark figures, the efficiency figures (MFU per step, with
    ``peaks``) and the recommendations (stored for the default step marker, without the figures that need a peak).
    With the writer's ``manifest``, the host CPU figures it recorded too (never stored: a manifest can arrive after
    the parse)."""
    answer = _stored(model, _overview_entry(model, marker, batch_size))
    if manifest is not None:
        answer = _overview.with_host_cpu(answer, manifest)
    return _overview.with_efficiency(answer, model, work_summary(model), _roofs(model, peaks))


def operators(model: TraceModel, group_by: str = "name", peaks: Optional[PeaksSetting] = None) -> dict[str, Any]:
    """Time per framework operator, host and device, with FLOPs, bytes and the roofline figures where they are
    known (stored for every ``group_by``, without the figures that need a peak)."""
    return _efficiency.with_operator_figures(_stored(model, _operators_entry(model, group_by)), model,
                                             work_summary(model), _roofs(model, peaks))


def operator_detail(model: TraceModel, name: str, input_shape: Optional[str] = None) -> dict[str, Any]:
    """One operator's calls: by input shape, by call stack, the slowest calls and its kernels."""
    return _operators.operator_detail(model, name, input_shape)


def kernels(model: TraceModel, group_by: str = "name", peaks: Optional[PeaksSetting] = None) -> dict[str, Any]:
    """Device kernels by name, or by launching operator and name, with the work of the calls that launched them
    (stored for every ``group_by``, without the figures that need a peak)."""
    return _efficiency.with_kernel_figures(_stored(model, _kernels_entry(model, group_by)), model,
                                           work_summary(model), _roofs(model, peaks))


def work_summary(model: TraceModel) -> dict[str, Any]:
    """FLOPs and bytes of the operator calls, grouped by operator and shape, per step and per kernel: the peak-free
    half of the efficiency figures (stored)."""
    return _stored(model, _work_summary_entry(model))


def roofline(model: TraceModel, peaks: Optional[PeaksSetting] = None) -> dict[str, Any]:
    """The operators under the device's roofs, the biggest gaps to the roof, copy bandwidth per direction."""
    return _roofline.roofline(model, work_summary(model), _roofs(model, peaks))


def flamegraph(model: TraceModel, weight: str = "host") -> dict[str, Any]:
    """The call stacks as an aggregated call tree, weighted by host or device time (stored for ``host``)."""
    return _stored(model, _flamegraph_entry(model, weight))


def folded_stacks(model: TraceModel, weight: str = "host") -> str:
    """The call stacks as folded-stacks text (one line per stack and its weight), for other flame graph tools."""
    return _stacks.folded_stacks(model, weight)


def modules(model: TraceModel) -> dict[str, Any]:
    """The ``nn.Module`` hierarchy with time per module."""
    return _modules.modules(model)


def memory(model: TraceModel, device: Optional[str] = None, start_us: Optional[float] = None,
           end_us: Optional[float] = None, min_bytes: int = 0, name_filter: str = "",
           limit: int = _memory.EVENT_LIMIT) -> dict[str, Any]:
    """Memory over time per device, the allocations and who allocated what (stored for the default query)."""
    query = dict(device=device, start_us=start_us, end_us=end_us, min_bytes=min_bytes, name_filter=name_filter,
                 limit=limit)
    if query == _memory.DEFAULT_QUERY:
        return _stored(model, _memory_entry(model))
    return _memory.memory(model, **query)


def step_trace(model: TraceModel, fp_point: Optional[str] = None, bp_point: Optional[str] = None,
               table: Optional[StepTraceTable] = None, table_error: Optional[str] = None) -> dict[str, Any]:
    """Each step split into iteration gap, forward, backward, optimizer, communication and tail (``table``:
    MindSpore's own step trace file, read by the caller)."""
    return _step_trace.step_trace(model, fp_point, bp_point, table=table, table_error=table_error)


def data_pipeline(model: TraceModel, marker: Optional[str] = None, manifest: Optional[dict[str, Any]] = None,
                  minddata: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """Is the job waiting for data: per step data wait against compute, the loader, MindSpore's MindData."""
    return _data_pipeline.data_pipeline(model, marker=marker, manifest=manifest, minddata=minddata)


def critical_path(model: TraceModel, step: int = 0, marker: Optional[str] = None) -> dict[str, Any]:
    """The chain of dependent work that decides one step's length (stored for the first step of the default
    marker). Raises ``StepNotFound`` for a step the span does not have."""
    return _stored(model, _critical_path_entry(model, step, marker))


StepNotFound = _critical_path.StepNotFound
SnapshotBeside = _snapshot_counters.Beside


# --- the trace viewer --------------------------------------------------------------------------------------------

def tracks(model: TraceModel, beside: Sequence[SnapshotBeside] = ()) -> dict[str, Any]:
    """The viewer's rows: slice tracks in display order, then counter tracks (stored); with ``beside`` (the span's
    parsed memory snapshots), the counter tracks of those that line up with the trace after them."""
    return _snapshot_counters.with_tracks(_stored(model, _tracks_entry(model)), model, beside)


def slices(model: TraceModel, start_us: Optional[float] = None, end_us: Optional[float] = None, width: int = 1000,
           track_ids: Optional[list[str]] = None) -> dict[str, Any]:
    """The slices of a time window at the resolution of ``width`` pixels (short ones merged into blocks)."""
    return _trace.slices(model, start_us, end_us, width, track_ids)


def counters(model: TraceModel, start_us: Optional[float] = None, end_us: Optional[float] = None, width: int = 1000,
             track_ids: Sequence[str] = (), beside: Sequence[SnapshotBeside] = ()) -> dict[str, Any]:
    """Counter tracks over a time window, downsampled to ``width`` points (the snapshot tracks of ``beside`` too)."""
    extra = (lambda track_id: _snapshot_counters.series(model, beside, track_id)) if beside else None
    return _trace.counters(model, start_us, end_us, width, list(track_ids), extra)


def event(model: TraceModel, event_id: int, full_text: bool = False) -> dict[str, Any]:
    """One slice with its arguments, flows and launch links (``full_text``: texts the model cut, whole). Raises
    ``KeyError`` for an unknown id."""
    return _trace.event(model, event_id, full_text=full_text)


def search(model: TraceModel, q: str, offset: int = 0, limit: int = _trace.SEARCH_PAGE) -> dict[str, Any]:
    """Slices whose name contains ``q``, a page at a time."""
    return _trace.search(model, q, offset, limit)


def range_summary(model: TraceModel, start_us: float, end_us: float,
                  track_ids: Optional[Sequence[str]] = None, beside: Sequence[SnapshotBeside] = ()) -> dict[str, Any]:
    """What lies in a time range: slices by name per track kind, the steps inside it, its breakdown, and the counter
    tracks among ``track_ids`` (every counter track without ids; the snapshot tracks of ``beside`` too) with their
    values in the range."""
    chosen = None if not track_ids else set(track_ids)
    counters = []
    for track in tracks(model, beside)["tracks"]:
        if track["kind"] != "counter" or (chosen is not None and track["id"] not in chosen):
            continue
        outside = _snapshot_counters.series(model, beside, track["id"]) if beside else None
        series = outside[1] if outside is not None else _trace.counter_series(model, track["id"])
        if series is not None:
            counters.append(_range_summary.CounterTrack(track, series))
    return _range_summary.range_summary(model, start_us, end_us, track_ids, counters=counters)


# --- the analyses ------------------------------------------------------------------------------------------------

def idle_time(model: TraceModel, marker: Optional[str] = None,
              kernel_wait_us: float = _idle.KERNEL_WAIT_US) -> dict[str, Any]:
    """Idle time per device stream, by cause (memoised)."""
    return _memo(model, _key(IDLE_TIME, marker, kernel_wait_us),
                 lambda: _idle.idle_time(model, marker, kernel_wait_us))


def launches(model: TraceModel, marker: Optional[str] = None) -> dict[str, Any]:
    """Kernel launches: runtime call time, launch delay, device time (memoised)."""
    return _memo(model, _key(LAUNCHES, marker), lambda: _launches.launches(model, marker))


def queue_length(model: TraceModel, marker: Optional[str] = None) -> dict[str, Any]:
    """Queue length per device stream over time (memoised)."""
    return _memo(model, _key(QUEUES, marker), lambda: _queues.queue_length(model, marker))


def kernel_sequences(model: TraceModel, operator: str = "", min_length: int = _sequences.MIN_LENGTH,
                     marker: Optional[str] = None) -> dict[str, Any]:
    """Frequent kernel sequences of an operator: fusion candidates (memoised)."""
    return _memo(model, _key(SEQUENCES, marker, operator, min_length),
                 lambda: _sequences.kernel_sequences(model, operator, min_length, marker))


def annotations(model: TraceModel, marker: Optional[str] = None) -> dict[str, Any]:
    """The user's own annotated ranges, host and device, by name (memoised)."""
    return _memo(model, _key(ANNOTATIONS, marker), lambda: _annotations.annotations(model, marker))


def span_facts(model: Optional[TraceModel], manifest: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """What tells a span apart for people (start time, length, steps, device): from the model once loaded, else from
    the writer's manifest."""
    if model is None:
        return _span_names.span_facts(None, manifest)
    return _stored(model, _span_facts_entry(model))


def span_listing(model: TraceModel) -> dict[str, Any]:
    """What the runs list shows of a loaded span: its facts (``span_facts``), the rank its trace records and its
    framework. A pack keeps it in its manifest (``store/packs.py``), so a packed span is listed without its model."""
    return {"facts": span_facts(model), "rank": _ranks.distributed_rank(model), "framework": model.framework}


# The questions about one span, each taking its model first: the methods of profscope.open_trace(...).
SPAN_QUESTIONS: tuple[Callable[..., Any], ...] = (
    summary, overview, operators, operator_detail, kernels, work_summary, roofline, flamegraph, folded_stacks, modules, memory, step_trace,
    data_pipeline, critical_path, tracks, slices, counters, event, search, range_summary, idle_time, launches,
    queue_length, kernel_sequences, annotations, span_facts, span_listing,
)


# --- several spans -----------------------------------------------------------------------------------------------

CompareSide = _compare.CompareSide
TableSpan = _run_table.TableSpan
RankSteps = _rank_steps.RankSteps


def compare(base: CompareSide, exp: CompareSide, group_by: str = "name",
            peaks: Optional[PeaksSetting] = None) -> dict[str, Any]:
    """Two spans side by side: step breakdown, MFU, operators and kernels, by impact on the step time. Each side's
    numbers are its overview (default marker), operator and kernel answers."""
    _compare.check_group_by(group_by)

    def answers_of(side: CompareSide) -> _compare.SideAnswers:
        return _compare.SideAnswers(overview=overview(side.model, batch_size=side.batch_size, peaks=peaks),
                                    operators=operators(side.model, group_by, peaks),
                                    kernels=kernels(side.model, "name", peaks))
    return _compare.compare(base, exp, group_by, answers_of(base), answers_of(exp))


def run_table(spans: list[TableSpan], peaks: Optional[PeaksSetting] = None) -> dict[str, Any]:
    """Every span of the logdir in one row: status, and for a loaded one its headline numbers (from its overview,
    MFU included, and memory answers)."""
    return _run_table.run_table(spans, lambda model, batch_size: _run_table.span_numbers(
        model.framework, overview(model, batch_size=batch_size, peaks=peaks), memory(model)))


def distributed(ranks: list[tuple[str, TraceModel]], peaks: Optional[PeaksSetting] = None) -> dict[str, Any]:
    """Per rank computation, communication and their overlap, the collectives with their bandwidths and the
    stragglers (``ranks``: each worker's model of the same span)."""
    return _ranks.distributed(ranks, lambda model: _roofs(model, peaks))


def rank_steps(ranks: list[tuple[str, str, TraceModel]]) -> list[tuple[RankSteps, TraceModel]]:
    """Each rank's steps (``ranks``: worker, span name and model, in the run's worker order), ordered by rank."""
    out = [(_rank_steps.rank_steps(worker, _ranks.rank_of(model, worker, i), span, model), model)
           for i, (worker, span, model) in enumerate(ranks)]
    out.sort(key=lambda item: (item[0].rank, item[0].worker))
    return out


def step_matrix(ranks: Sequence[RankSteps]) -> dict[str, Any]:
    """Rank × step: step time, communication and exposed communication."""
    return _rank_steps.step_matrix(ranks)


def rank_alignment(ranks: Sequence[tuple[RankSteps, TraceModel]], align: str = "step",
                   step: Optional[str] = None) -> dict[str, Any]:
    """The same step of every rank on one time axis: each rank's step and the shift that places it."""
    return _rank_steps.rank_alignment(ranks, align, step)


# --- memory snapshots (views/memory_snapshot.py): about a SnapshotModel, not a span's trace -----------------------


def _snapshot_overview_entry(snapshot: SnapshotModel) -> _Entry:
    return _Entry(_key(SNAPSHOT), lambda: _snapshot.overview(snapshot))


def _snapshot_peak_entry(snapshot: SnapshotModel, device: int, group_by: str) -> _Entry:
    return _Entry(_key(SNAPSHOT_AT, device, "peak", group_by), lambda: _snapshot.at(snapshot, device, group_by=group_by))


def snapshot_parser_answers(snapshot: SnapshotModel) -> dict[Key, Callable[[], Any]]:
    """What the parser stores beside a snapshot's model: its overview and what is alive at the peak of the device the
    page opens on."""
    entries = [_snapshot_overview_entry(snapshot)]
    if snapshot.devices:
        entries.append(_snapshot_peak_entry(snapshot, _snapshot.device_facts(snapshot)["device"], "site"))
    return {entry.key: entry.compute for entry in entries}


def snapshot_overview(snapshot: SnapshotModel) -> dict[str, Any]:
    """A memory snapshot as a whole: per device its peak and totals, OOM events, allocator settings, peak sites."""
    return _stored(snapshot, _snapshot_overview_entry(snapshot))  # type: ignore[arg-type]


def snapshot_timeline(snapshot: SnapshotModel, device: Optional[int] = None, start: Optional[float] = None,
                      end: Optional[float] = None, width: int = 1000) -> dict[str, Any]:
    """Active memory over a window at a resolution, the largest sites stacked."""
    return _snapshot.timeline(snapshot, device, start, end, width)


def snapshot_at(snapshot: SnapshotModel, device: Optional[int] = None, row: Optional[int] = None,
                time: Optional[float] = None, group_by: str = "site", limit: int = _snapshot.GROUP_LIMIT,
                site: Optional[int] = None) -> dict[str, Any]:
    """What is alive after an entry (by default at the peak, stored), grouped, with the largest allocations."""
    if row is None and time is None and site is None and limit == _snapshot.GROUP_LIMIT \
            and group_by in _snapshot.GROUP_BY:
        chosen = _snapshot.device_facts(snapshot, device)["device"]
        return _stored(snapshot, _snapshot_peak_entry(snapshot, chosen, group_by))  # type: ignore[arg-type]
    return _snapshot.at(snapshot, device, row, time, group_by, limit, site=site)


def snapshot_allocation(snapshot: SnapshotModel, index: int) -> dict[str, Any]:
    """One allocation's life and every frame of its stack."""
    return _snapshot.allocation(snapshot, index)


def snapshot_segments(snapshot: SnapshotModel, device: Optional[int] = None, row: Optional[int] = None,
                      time: Optional[float] = None) -> dict[str, Any]:
    """The allocator's segments, blocks and fragmentation at a moment."""
    return _snapshot.segments(snapshot, device, row, time)


def snapshot_compare(base: SnapshotModel, exp: SnapshotModel, base_device: Optional[int] = None,
                     exp_device: Optional[int] = None) -> dict[str, Any]:
    """Two snapshots at their peaks, by allocation site."""
    return _snapshot.compare(base, exp, base_device, exp_device)


def snapshot_peak_summary(snapshot: SnapshotModel, name: str) -> dict[str, Any]:
    """The report's and the command line's lines on a span's snapshot: the peak and its top sites."""
    return _snapshot.peak_summary(snapshot, name)


def rank_summary(worker: str, span: str, model: TraceModel, tables: bool = False) -> RankSummary:
    """One rank's summary (steps, collective calls; ``tables``: the operator and kernel tables too), what a pack
    keeps as Parquet and every cross-rank answer reads."""
    if not tables:
        return _ranks.summary_of(worker, span, model)
    return _ranks.summary_of(worker, span, model, operators(model, "name")["rows"], kernels(model, "name")["rows"])


def distributed_from_summaries(summaries: Sequence[RankSummary], models: Optional[Sequence[TraceModel]] = None,
                               peaks: Optional[PeaksSetting] = None) -> dict[str, Any]:
    """``distributed`` from the ranks' summaries (a pack's, or made from the models): the same answer (``models``:
    the ranks' models in the same order, for the links' peak)."""
    return _ranks.distributed_from_summaries(list(summaries), models, lambda model: _roofs(model, peaks))


def _ordered(summaries: Sequence[RankSummary]) -> list[tuple[int, RankSummary]]:
    ranked = [(_ranks.summary_rank(s, i), s) for i, s in enumerate(summaries)]
    ranked.sort(key=lambda item: (item[0], item[1].worker))
    return ranked


def cross_rank(summaries: Sequence[RankSummary]) -> dict[str, Any]:
    """Collectives matched across ranks (process group, sequence number), bandwidths per collective kind and the
    straggler table, from the ranks' summaries."""
    ranked = _ordered(summaries)
    return _cross_rank.cross_rank([s for _, s in ranked], [r for r, _ in ranked])


def ordered_rank_steps(summaries: Sequence[RankSummary]) -> list[tuple[RankSteps, int]]:
    """Each rank's steps from its summary, ordered by rank, with the summary's index."""
    out = [(_rank_steps.steps_of_summary(s, _ranks.summary_rank(s, i)), i) for i, s in enumerate(summaries)]
    out.sort(key=lambda item: (item[0].rank, item[0].worker))
    return out


def rank_steps_of_summaries(summaries: Sequence[RankSummary],
                            models: Sequence[TraceModel]) -> list[tuple[RankSteps, TraceModel]]:
    """``rank_steps`` from the ranks' summaries (with each rank's model, for the trace viewer's alignment)."""
    return [(steps, models[i]) for steps, i in ordered_rank_steps(summaries)]
