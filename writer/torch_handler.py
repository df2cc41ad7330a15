"""``on_trace_ready`` handler for ``torch.profiler.profile`` that writes Profscope spans.

Torch is never imported here: the handler only calls methods of the profiler it is
given, so ``import profscope.writer`` works in a process without torch.
"""

from __future__ import annotations

import atexit
import os
import sys
import time
import warnings
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Mapping, Optional

from profscope.tb_plugin import layout

from ._atomic import gzip_file_into, remove_quietly, temp_path_for
from .manifest import Manifest, TagValue, check_batch_size, check_tags, coerce_tags
from .naming import (
    RUN_ENV_VAR,
    asset_folder,
    check_run,
    default_run_name,
    default_worker_name,
    distributed_rank,
    profscope_version,
)
from .span_files import WrittenSpan, span_taken, write_span

if TYPE_CHECKING:
    from .recorder import SpanEventRecorder

FRAMEWORK = "pytorch"

# How many frames above the handler to look for the profiler's step()/stop().
_CALLER_SEARCH_DEPTH = 8
# A schedule is walked back at most this far to find where the recorded steps began.
_MAX_ACTIVE_STEPS = 1_000_000


class ProfscopeWriter:
    """Writes each profiled span of a ``torch.profiler.profile`` into a Profscope run.

    Files, per span (names from ``profscope.tb_plugin.layout``)::

        <logdir>/<run>/plugins/profscope/<worker>.<span>.pytorch.trace.json.gz
        <logdir>/<run>/plugins/profscope/<worker>.<span>.manifest.json   (written last)

    and, unless ``event_file=False``, records in a TensorBoard event file of the run folder
    (``<logdir>/<run>/events.out.tfevents.*.profscope``): at once a record of the span
    that makes the run a Profscope run for TensorBoard, and, once the span has been
    analysed in the background, its performance scalars (see ``profscope.writer.events``).
    ``flush()`` waits for the analyses; ``close()`` (also run at interpreter exit) flushes
    and closes the event file.

    Args:
        logdir: the folder given to ``tensorboard --logdir``.
        run: the run's folder under ``logdir`` (may be nested, ``"group/exp1"``).
            Default: ``$PROFSCOPE_RUN``, else ``<YYYYmmdd-HHMMSS>_<hostname>`` taken
            when the writer is created. In a multi-process job give every rank the
            same ``run`` (or ``$PROFSCOPE_RUN``), or the ranks may land in different runs.
        worker: this process's name. Default: ``rank<N>`` when torch.distributed is
            initialised (or ``$RANK`` is set) at the first span, else ``<hostname>_<pid>``.
        batch_size: samples per step, recorded in the manifest (with ``samples``).
        tags: user tags (str -> str | int | float) recorded in each span's manifest.
        event_file: also write the TensorBoard event file (span records and scalars).
    """

    def __init__(
        self,
        logdir: str | os.PathLike[str],
        run: Optional[str] = None,
        worker: Optional[str] = None,
        *,
        batch_size: Optional[int] = None,
        tags: Optional[Mapping[str, TagValue]] = None,
        event_file: bool = True,
    ) -> None:
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
        if run is None and not os.environ.get(RUN_ENV_VAR, "").strip() and distributed_rank() is not None:
            warnings.warn(
                "profscope: no run name in a distributed job; pass the same run= to every rank "
                f"(or set ${RUN_ENV_VAR}) so that all ranks land in one run",
                stacklevel=2,
            )

    @property
    def asset_dir(self) -> Path:
        return asset_folder(self.logdir, self.run)

    @property
    def worker(self) -> str:
        """The worker name, fixed at the first span (the rank may be known only then)."""
        if self._worker is None:
            self._worker = default_worker_name()
        return self._worker

    def set_batch_size(self, batch_size: Optional[int]) -> None:
        """Samples per step for the next spans (None: unknown)."""
        self.batch_size = check_batch_size(batch_size)

    def set_tags(self, **tags: TagValue) -> None:
        """Add or replace tags for the next spans."""
        self.tags.update(check_tags(tags))

    def __call__(self, prof: Any) -> None:
        self.write(prof)

    def write(self, prof: Any) -> WrittenSpan:
        """Export ``prof``'s current trace as a new span; returns where it went."""
        step_range = infer_step_range(prof, sys._getframe(1))
        export_ns = self._next_span_ns()
        asset_dir = self.asset_dir
        asset_dir.mkdir(parents=True, exist_ok=True)
        worker = self.worker
        while span_taken(asset_dir, worker, str(export_ns)):  # another writer with our name
            export_ns += 1
        span = str(export_ns)
        self._last_span_ns = export_ns
        manifest = Manifest(
            worker=worker,
            span=span,
            framework=FRAMEWORK,
            framework_version=_torch_version(),
            profscope_version=profscope_version(),
            trace_file=layout.writer_trace_name(worker, span, FRAMEWORK),
            wall_time=export_ns / 1e9,
            step_range=step_range,
            batch_size=self.batch_size,
            tags=coerce_tags(self.tags),
        )
        exported_json = temp_path_for(asset_dir / f"{worker}.{span}.export.json")
        try:
            prof.export_chrome_trace(str(exported_json))
            written = write_span(
                asset_dir,
                manifest,
                lambda out: gzip_file_into(exported_json, out, mtime=int(export_ns // 1_000_000_000)),
            )
        finally:
            remove_quietly(exported_json)
        self.spans.append(written)
        if self.event_file:
            self._record_events(written)
        return written

    def _record_events(self, written: WrittenSpan) -> None:
        try:
            from .events import is_primary_worker, next_step
            from .recorder import SpanEventRecorder  # imports TensorBoard: only once a span is written

            step = next_step(written.manifest, self._last_step)
            self._last_step = step
            if self._recorder is None:
                self._recorder = SpanEventRecorder(self.logdir / self.run)
                atexit.register(self._close_at_exit, os.getpid())
            # A live job knows only its own worker: rank 1 and up write under their own tags.
            self._recorder.record(written, step, primary=is_primary_worker(written.worker))
        except Exception as error:  # noqa: BLE001 - the span itself is written; the event file is extra
            warnings.warn(f"profscope: could not write the TensorBoard event file of run {self.run!r}: {error}")

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Wait until the scalars of every span written so far are in the event file; False on timeout."""
        return self._recorder.flush(timeout) if self._recorder is not None else True

    def close(self, timeout: Optional[float] = None) -> bool:
        """``flush`` and close the event file; later spans open a new one. False on timeout."""
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
        return f"ProfscopeWriter(logdir={str(self.logdir)!r}, run={self.run!r}, worker={self._worker!r})"


def trace_handler(
    logdir: str | os.PathLike[str],
    run: Optional[str] = None,
    worker: Optional[str] = None,
    *,
    batch_size: Optional[int] = None,
    tags: Optional[Mapping[str, TagValue]] = None,
    event_file: bool = True,
) -> ProfscopeWriter:
    """``on_trace_ready=trace_handler("runs", "exp1")``: see :class:`ProfscopeWriter`."""
    return ProfscopeWriter(logdir, run, worker, batch_size=batch_size, tags=tags, event_file=event_file)


def _torch_version() -> Optional[str]:
    torch = sys.modules.get("torch")
    version = getattr(torch, "__version__", None)
    return str(version) if version is not None else None


def _profiler_caller(prof: Any, frame: Optional[FrameType]) -> Optional[str]:
    """Whether the profiler's ``step()`` or ``stop()`` is running this handler.

    torch calls ``on_trace_ready`` from ``step()`` once the last active step has ended
    (``step_num`` already counts the next step), and from ``stop()`` when profiling
    ends inside an active window (``step_num`` is the step that was cut short). The
    profiler's state is the same in both cases, so the caller is the only witness.
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


def infer_step_range(prof: Any, frame: Optional[FrameType]) -> Optional[tuple[int, int]]:
    """The first and last profiler step (``ProfilerStep#N``) in the trace being exported.

    None when it cannot be known for sure: no schedule (torch then marks no steps),
    a handler not called by the profiler itself, or an unfamiliar profiler.
    """
    if not getattr(prof, "record_steps", False):
        return None
    schedule = getattr(prof, "schedule", None)
    step_num = getattr(prof, "step_num", None)
    action = getattr(getattr(prof, "current_action", None), "name", None)
    if not callable(schedule) or not isinstance(step_num, int) or action == "DEVICE_STOPPED":
        return None  # a window cut short by the device: its steps are not all in the trace
    caller = _profiler_caller(prof, frame)
    if caller == "step":
        last = step_num - 1
    elif caller == "stop":
        last = step_num
    else:
        return None
    try:
        if last < 0 or _action_name(schedule(last)) not in ("RECORD", "RECORD_AND_SAVE"):
            return None
        first = last
        # Recorded steps run back to the previous window's save step or a non-recording step.
        while first > 0 and last - first < _MAX_ACTIVE_STEPS and _action_name(schedule(first - 1)) == "RECORD":
            first -= 1
    except Exception:  # a user schedule that misbehaves must not fail the export
        return None
    return (first, last)


def _action_name(action: Any) -> Optional[str]:
    return getattr(action, "name", None)
