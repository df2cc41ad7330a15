"""What every framework's ``on_trace_ready`` handler shares: names, batch size and tags, CPU
sampling, the span's files and its TensorBoard event record.

A framework's handler (``torch_handler.ProfscopeWriter``, ``paddle_handler.PaddleWriter``)
subclasses ``SpanWriter`` and says how to export its profiler's Chrome trace, which steps
the trace holds and when recording started. No framework is imported here.
"""

from __future__ import annotations

import atexit
import os
import sys
import time
import warnings
import weakref
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Optional

from profscope.tb_plugin import layout

from ._atomic import gzip_file_into, remove_quietly, temp_path_for
from .cpu_sampler import DEFAULT_INTERVAL_SECONDS, CpuSampler, check_interval
from .manifest import Manifest, TagValue, check_batch_size, check_tags, coerce_tags
from .naming import RUN_ENV_VAR, asset_folder, check_run, default_run_name, host_worker_name, profscope_version
from .span_files import WrittenSpan, span_taken, write_span

if TYPE_CHECKING:
    from .recorder import SpanEventRecorder

# How many frames above the handler to look for the profiler's step()/stop().
_CALLER_SEARCH_DEPTH = 8
# A schedule is walked back at most this far to find where the recorded steps began.
MAX_ACTIVE_STEPS = 1_000_000


class SpanWriter:
    """Writes each span a profiler hands to ``on_trace_ready`` into a Profscope run.

    Files, per span (names from ``profscope.tb_plugin.layout``)::

        <logdir>/<run>/plugins/profscope/<worker>.<span>.<framework>.trace.json.gz
        <logdir>/<run>/plugins/profscope/<worker>.<span>.manifest.json   (written last)

    and, unless ``event_file=False``, records in a TensorBoard event file of the run folder
    (see ``profscope.writer.events``). Subclasses name the framework and export its trace.

    Args:
        logdir: the folder given to ``tensorboard --logdir``.
        run: the run's folder under ``logdir`` (may be nested, ``"group/exp1"``).
            Default: ``$PROFSCOPE_RUN``, else ``<YYYYmmdd-HHMMSS>_<hostname>`` taken when the
            writer is created. In a multi-process job give every rank the same ``run``.
        worker: this process's name. Default: ``rank<N>`` in a distributed job (known at the
            first span), else ``<hostname>_<pid>``.
        batch_size: samples per step, recorded in the manifest (with ``samples``).
        tags: user tags (str -> str | int | float) recorded in each span's manifest.
        event_file: also write the TensorBoard event file (span records and scalars).
        cpu_sample_interval: seconds between host CPU readings (process and whole system)
            on a background thread; each span's manifest gets the utilization over the span.
            None (or 0) turns sampling off.
    """

    framework: ClassVar[str] = ""

    def __init__(
        self,
        logdir: str | os.PathLike[str],
        run: Optional[str] = None,
        worker: Optional[str] = None,
        *,
        batch_size: Optional[int] = None,
        tags: Optional[Mapping[str, TagValue]] = None,
        event_file: bool = True,
        cpu_sample_interval: Optional[float] = DEFAULT_INTERVAL_SECONDS,
        pack: bool = False,
    ) -> None:
        if pack and not event_file:
            raise ValueError("pack=True needs event_file=True: the pack is written by the event file's analysis child")
        self.pack = bool(pack)
        self.logdir = Path(logdir)
        self.run = str(check_run(run)) if run is not None else str(check_run(default_run_name()))
        self._worker = layout.safe_component(worker) if worker is not None else None
        self.batch_size = check_batch_size(batch_size)
        # A plain dict on purpose: ``writer.tags["lr"] = 0.01`` between spans is fine.
        self.tags: dict[str, TagValue] = check_tags(tags or {})
        self.spans: list[WrittenSpan] = []
        self._last_span_ns = 0
        self.event_file = event_file
        self._recorder: Optional[SpanEventRecorder] = None
        self._last_step: Optional[int] = None
        interval = check_interval(cpu_sample_interval)
        self._cpu: Optional[CpuSampler] = CpuSampler(interval) if interval is not None else None
        # perf_counter ns where the previous span ended: the next span's CPU window starts
        # there at the earliest when the profiler does not say when it started recording.
        self._previous_end_ns: Optional[int] = None
        if self._cpu is not None:
            self._cpu.start()
            # The thread holds the sampler, not the writer: stop it when the writer goes away.
            weakref.finalize(self, self._cpu.stop)
        if run is None and not os.environ.get(RUN_ENV_VAR, "").strip() and self._distributed_rank() is not None:
            warnings.warn(
                "profscope: no run name in a distributed job; pass the same run= to every rank "
                f"(or set ${RUN_ENV_VAR}) so that all ranks land in one run",
                stacklevel=2,
            )

    # --- what a framework says -------------------------------------------------------------

    def _export(self, prof: Any, path: Path) -> None:
        """Write ``prof``'s Chrome trace (JSON) to ``path``."""
        raise NotImplementedError

    def _framework_version(self) -> Optional[str]:
        return None

    def _distributed_rank(self) -> Optional[int]:
        return None

    def _step_range(self, prof: Any, frame: Optional[FrameType]) -> Optional[tuple[int, int]]:
        """First and last profiler step in the trace, when known for sure."""
        return None

    def _recording_window_ns(
        self, prof: Any, exported: Path, step_range: Optional[tuple[int, int]]
    ) -> tuple[Optional[int], Optional[int]]:
        """When the profiler started and stopped recording this span (``time.perf_counter_ns``),
        as far as it or the exported trace says; None where unknown."""
        return None, None

    def _batch_size_now(self) -> Optional[int]:
        return self.batch_size

    # --- names, batch size, tags ------------------------------------------------------------

    @property
    def asset_dir(self) -> Path:
        return asset_folder(self.logdir, self.run)

    @property
    def worker(self) -> str:
        """The worker name, fixed at the first span (the rank may be known only then)."""
        if self._worker is None:
            rank = self._distributed_rank()
            self._worker = f"rank{rank}" if rank is not None else host_worker_name()
        return self._worker

    def set_batch_size(self, batch_size: Optional[int]) -> None:
        """Samples per step for the next spans (None: unknown)."""
        self.batch_size = check_batch_size(batch_size)

    def set_tags(self, **tags: TagValue) -> None:
        """Add or replace tags for the next spans."""
        self.tags.update(check_tags(tags))

    # --- writing a span -----------------------------------------------------------------------

    def __call__(self, prof: Any) -> None:
        self.write(prof)

    def write(self, prof: Any) -> WrittenSpan:
        """Export ``prof``'s current trace as a new span; returns where it went."""
        called_ns = time.perf_counter_ns()
        if self._cpu is not None:
            self._cpu.start()  # no-op while running; restarts after close() or in a forked child
            self._cpu.take()  # a reading at the span's end, before the export's own work
        step_range = self._step_range(prof, sys._getframe(1))
        export_ns = self._next_span_ns()
        asset_dir = self.asset_dir
        asset_dir.mkdir(parents=True, exist_ok=True)
        worker = self.worker
        while span_taken(asset_dir, worker, str(export_ns)):  # another writer with our name
            export_ns += 1
        span = str(export_ns)
        self._last_span_ns = export_ns
        exported_json = temp_path_for(asset_dir / f"{worker}.{span}.export.json")
        try:
            self._export(prof, exported_json)
            recording_start, recording_end = self._recording_window(prof, exported_json, step_range, called_ns)
            manifest = Manifest(
                worker=worker,
                span=span,
                framework=self.framework,
                framework_version=self._framework_version(),
                profscope_version=profscope_version(),
                trace_file=layout.writer_trace_name(worker, span, self.framework),
                wall_time=export_ns / 1e9,
                step_range=step_range,
                batch_size=self._batch_size_now(),
                tags=coerce_tags(self.tags),
                cpu_utilization=self._cpu_utilization(recording_start, recording_end),
            )
            written = write_span(
                asset_dir,
                manifest,
                lambda out: gzip_file_into(exported_json, out, mtime=int(export_ns // 1_000_000_000)),
            )
        finally:
            remove_quietly(exported_json)
        self._previous_end_ns = recording_end
        self.spans.append(written)
        if self.event_file:
            self._record_events(written)
        return written

    def _cpu_utilization(self, start_ns: int, end_ns: int) -> Optional[dict[str, Any]]:
        if self._cpu is None:
            return None
        try:
            return self._cpu.summarise(start_ns, end_ns)
        except Exception as error:  # noqa: BLE001 - an extra of the manifest must not fail the span
            warnings.warn(f"profscope: no CPU utilization for this span: {error}", RuntimeWarning, stacklevel=3)
            return None

    def _recording_window(
        self, prof: Any, exported: Path, step_range: Optional[tuple[int, int]], called_ns: int
    ) -> tuple[int, int]:
        """The span's window for its CPU utilization: the profiler's own when known; else it
        ends when the handler was called and starts where the previous span ended (or where
        sampling began)."""
        try:
            start_ns, end_ns = self._recording_window_ns(prof, exported, step_range)
        except Exception:  # noqa: BLE001 - a best-effort hint; never fails the span
            start_ns, end_ns = None, None
        if end_ns is None or not 0 < end_ns <= called_ns:
            end_ns = called_ns
        if start_ns is None or start_ns >= end_ns:
            oldest = self._cpu.oldest_ns() if self._cpu is not None else None
            start_ns = self._previous_end_ns or oldest or end_ns
        return start_ns, end_ns

    def _record_events(self, written: WrittenSpan) -> None:
        try:
            from .events import is_primary_worker, next_step
            from .recorder import SpanEventRecorder  # imports TensorBoard: only once a span is written

            step = next_step(written.manifest, self._last_step)
            self._last_step = step
            if self._recorder is None:
                self._recorder = SpanEventRecorder(self.logdir / self.run, pack=self.pack)
                atexit.register(self._close_at_exit, os.getpid())
            # A live job knows only its own worker: rank 1 and up write under their own tags.
            self._recorder.record(written, step, primary=is_primary_worker(written.worker))
        except Exception as error:  # noqa: BLE001 - the span itself is written; the event file is extra
            warnings.warn(f"profscope: could not write the TensorBoard event file of run {self.run!r}: {error}")

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Wait until the scalars of every span written so far are in the event file; False on timeout."""
        return self._recorder.flush(timeout) if self._recorder is not None else True

    def close(self, timeout: Optional[float] = None) -> bool:
        """Stop CPU sampling, ``flush`` and close the event file; a later span opens a new one and
        samples again. False on timeout."""
        if self._cpu is not None:
            self._cpu.stop()
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            return True
        atexit.unregister(self._close_at_exit)
        return recorder.close(timeout)

    def _close_at_exit(self, pid: int) -> None:
        if os.getpid() != pid or self._recorder is None:  # a forked child does not own the file
            return
        waiting = self._recorder.unfinished
        if waiting:
            print(f"profscope: writing the performance scalars of {waiting} span(s) before exiting", file=sys.stderr)
        self.close()

    def _next_span_ns(self) -> int:
        # time_ns can repeat or step back (clock adjustments); spans must keep their order.
        return max(time.time_ns(), self._last_span_ns + 1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(logdir={str(self.logdir)!r}, run={self.run!r}, worker={self._worker!r})"


def profiler_caller(prof: Any, frame: Optional[FrameType]) -> Optional[str]:
    """Whether the profiler's ``step()`` or ``stop()`` is running this handler.

    Both torch and Paddle call ``on_trace_ready`` from ``step()`` once the last recorded step
    has ended (``step_num`` already counts the next step), and from ``stop()`` when profiling
    ends inside a recording window (``step_num`` is the step that was cut short). The
    profiler's state does not tell the two apart, so the caller is the only witness.
    """
    codes: dict[Any, str] = {}
    for cls in type(prof).__mro__:
        for method in ("step", "stop"):
            function = cls.__dict__.get(method)
            code = getattr(function, "__code__", None)
            if code is not None:
                codes[code] = method
    for _ in range(_CALLER_SEARCH_DEPTH):
        if frame is None:
            return None
        caller = codes.get(frame.f_code)
        if caller is not None:
            return caller
        frame = frame.f_back
    return None


def recorded_steps(
    prof: Any, frame: Optional[FrameType], schedule: Any, step_num: Any, recording: tuple[str, ...], last_of_window: str
) -> Optional[tuple[int, int]]:
    """The first and last step of the window just recorded, from the profiler's schedule.

    ``recording``: the names of the schedule's actions (or states) that record a step;
    ``last_of_window`` the one that ends a window (torch's ``RECORD_AND_SAVE``, Paddle's
    ``RECORD_AND_RETURN``). None when it cannot be known for sure.
    """
    if not callable(schedule) or isinstance(step_num, bool) or not isinstance(step_num, int):
        return None
    caller = profiler_caller(prof, frame)
    if caller == "step":
        last = step_num - 1
    elif caller == "stop":
        last = step_num
    else:
        return None
    try:
        if last < 0 or _action_name(schedule(last)) not in recording:
            return None
        first = last
        # Recorded steps run back to the previous window's last step or a non-recording step.
        while (
            first > 0
            and last - first < MAX_ACTIVE_STEPS
            and _action_name(schedule(first - 1)) in recording
            and _action_name(schedule(first - 1)) != last_of_window
        ):
            first -= 1
    except Exception:  # a user schedule that misbehaves must not fail the export
        return None
    return (first, last)


def _action_name(action: Any) -> Optional[str]:
    return getattr(action, "name", None)
