"""``on_trace_ready`` handler for ``torch.profiler.profile`` that writes Profscope spans.

Torch is never imported here: the handler only calls methods of the profiler it is
given, so ``import profscope.writer`` works in a process without torch.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import FrameType
from typing import Any, Mapping, Optional

from .cpu_sampler import DEFAULT_INTERVAL_SECONDS
from .manifest import TagValue
from .naming import distributed_rank
from .span_writer import SpanWriter, recorded_steps

FRAMEWORK = "pytorch"
_RECORDING_ACTIONS = ("RECORD", "RECORD_AND_SAVE")


class ProfscopeWriter(SpanWriter):
    """Writes each profiled span of a ``torch.profiler.profile`` into a Profscope run.

    Files, per span (names from ``profscope.tb_plugin.layout``)::

        <logdir>/<run>/plugins/profscope/<worker>.<span>.pytorch.trace.json.gz
        <logdir>/<run>/plugins/profscope/<worker>.<span>.manifest.json   (written last)

    and, unless ``event_file=False``, records in a TensorBoard event file of the run folder
    (``<logdir>/<run>/events.out.tfevents.*.profscope``): at once a record of the span
    that makes the run a Profscope run for TensorBoard, and, once the span has been
    analysed in a child process, its performance scalars (see ``profscope.writer.events``).
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
        cpu_sample_interval: seconds between host CPU readings on a background thread
            (None turns sampling off); each manifest gets the CPU utilization over its span.
        pack: also write each span's pack beside it (``.profscope/<trace file>/``: the parsed model, the
            answers the pages ask first and the rank's summary), in the child process that computes the span's
            scalars, so that a job ingests itself on its own nodes and TensorBoard parses nothing. Needs
            ``event_file`` (the child belongs to the event file's recorder).
    """

    framework = FRAMEWORK

    def _export(self, prof: Any, path: Path) -> None:
        prof.export_chrome_trace(str(path))

    def _framework_version(self) -> Optional[str]:
        return _torch_version()

    def _distributed_rank(self) -> Optional[int]:
        return distributed_rank()

    def _step_range(self, prof: Any, frame: Optional[FrameType]) -> Optional[tuple[int, int]]:
        return infer_step_range(prof, frame)

    def _recording_window_ns(
        self, prof: Any, exported: Path, step_range: Optional[tuple[int, int]]
    ) -> tuple[Optional[int], Optional[int]]:
        return _profiling_time_ns(prof, "profiling_start_time_ns"), _profiling_time_ns(prof, "profiling_end_time_ns")


def trace_handler(
    logdir: str | os.PathLike[str],
    run: Optional[str] = None,
    worker: Optional[str] = None,
    *,
    batch_size: Optional[int] = None,
    tags: Optional[Mapping[str, TagValue]] = None,
    event_file: bool = True,
    cpu_sample_interval: Optional[float] = DEFAULT_INTERVAL_SECONDS,
    pack: bool = False,
) -> ProfscopeWriter:
    """``on_trace_ready=trace_handler("runs", "exp1")``: see :class:`ProfscopeWriter`."""
    return ProfscopeWriter(
        logdir, run, worker, batch_size=batch_size, tags=tags, event_file=event_file,
        cpu_sample_interval=cpu_sample_interval, pack=pack,
    )


def _torch_version() -> Optional[str]:
    torch = sys.modules.get("torch")
    version = getattr(torch, "__version__", None)
    return str(version) if version is not None else None


def _profiling_time_ns(prof: Any, name: str) -> Optional[int]:
    """torch's ``autograd.profiler.profile`` of the window notes when it started and stopped
    recording (``time.perf_counter_ns``, the CPU sampler's clock)."""
    value = getattr(getattr(prof, "profiler", None), name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def infer_step_range(prof: Any, frame: Optional[FrameType]) -> Optional[tuple[int, int]]:
    """The first and last profiler step (``ProfilerStep#N``) in the trace being exported.

    None when it cannot be known for sure: no schedule (torch then marks no steps),
    a handler not called by the profiler itself, or an unfamiliar profiler.
    """
    if not getattr(prof, "record_steps", False):
        return None
    action = getattr(getattr(prof, "current_action", None), "name", None)
    if action == "DEVICE_STOPPED":
        return None  # a window cut short by the device: its steps are not all in the trace
    return recorded_steps(
        prof, frame, getattr(prof, "schedule", None), getattr(prof, "step_num", None),
        _RECORDING_ACTIONS, "RECORD_AND_SAVE",
    )
