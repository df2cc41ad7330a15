"""``on_trace_ready`` handler for ``torch.profiler.profile`` that writes Profscope spans.

Torch is never imported here: the handler only calls methods of the profiler it is
given, so ``import profscope.writer`` works in a process without torch.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from types import FrameType
from typing import Any, Mapping, Optional

from profscope.tb_plugin import layout

from ._atomic import remove_quietly, temp_path_for
from .cpu_sampler import DEFAULT_INTERVAL_SECONDS
from .manifest import TagValue
from .naming import distributed_rank
from .span_writer import SpanWriter, recorded_steps

FRAMEWORK = "pytorch"
_RECORDING_ACTIONS = ("RECORD", "RECORD_AND_SAVE")
# Trace entries the allocator keeps per span at most (a ring buffer: the oldest go first). torch's entries take a
# few hundred bytes each in the dumped file.
DEFAULT_MEMORY_SNAPSHOT_ENTRIES = 1_000_000


class MemoryHistory:
    """The CUDA caching allocator's history, recorded between spans and dumped beside each span's trace.

    Recording starts when the writer is made (the profiler is set up then, before its first span) and starts afresh
    after each dump, so each snapshot holds what the allocator did since the previous span's snapshot, up to the
    span's end (at most ``max_entries`` entries). ``memory`` is ``torch.cuda.memory`` (tests give another). Where
    CUDA is not available nothing is recorded, and that is said once.
    """

    def __init__(self, max_entries: int = DEFAULT_MEMORY_SNAPSHOT_ENTRIES, memory: Any = None) -> None:
        self.max_entries = max_entries
        self._memory = memory
        self._said_unavailable = False
        self.recording = False
        self.start()

    def _api(self) -> Any:
        if self._memory is not None:
            return self._memory
        torch = sys.modules.get("torch")  # never imported here: a torch.profiler user has it already
        cuda = getattr(torch, "cuda", None)
        try:
            available = bool(cuda is not None and cuda.is_available())
        except Exception:  # noqa: BLE001 - a broken CUDA setup is "not available" here
            available = False
        return getattr(cuda, "memory", None) if available else None

    def start(self, clear: bool = False) -> None:
        memory = self._api()
        if memory is None:
            if not self._said_unavailable:
                self._said_unavailable = True
                warnings.warn("profscope: memory_snapshot=True records nothing here: CUDA is not available, so no "
                              "memory snapshot is written beside the spans", RuntimeWarning, stacklevel=4)
            return
        try:
            memory._record_memory_history(enabled="all", max_entries=self.max_entries, clear_history=clear)
            self.recording = True
        except Exception as error:  # noqa: BLE001 - an extra of the span must never fail the training job
            warnings.warn(f"profscope: could not record the allocator's history: {error}", RuntimeWarning)

    def dump(self, path: Path) -> Optional[Path]:
        """Write the snapshot to ``path`` atomically (torch's own pickle, through a temporary name) and record afresh;
        None when nothing is recorded."""
        memory = self._api()
        if memory is None or not self.recording:
            if memory is not None:
                self.start()
            return None
        temporary = temp_path_for(path)
        try:
            memory._dump_snapshot(str(temporary))
            os.replace(temporary, path)
        except Exception as error:  # noqa: BLE001
            remove_quietly(temporary)
            warnings.warn(f"profscope: could not write the memory snapshot {path.name}: {error}", RuntimeWarning)
            return None
        finally:
            self.start(clear=True)
        return path


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

    With ``memory_snapshot=True`` the CUDA caching allocator's history is recorded too, and each span's memory
    snapshot (``torch.cuda.memory._dump_snapshot``) is written beside its trace, where Profscope's Memory snapshot
    page finds it::

        <logdir>/<run>/plugins/profscope/<worker>.<span>.memory_snapshot.pickle

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
        memory_snapshot: record the allocator's history and write a memory snapshot beside each span's trace
            (CUDA only: elsewhere it says so once and does nothing).
        memory_snapshot_entries: trace entries kept per snapshot at most.
        pack: also write each span's pack beside it (``.profscope/<trace file>/``: the parsed model, the
            answers the pages ask first and the rank's summary), in the child process that computes the span's
            scalars, so that a job ingests itself on its own nodes and TensorBoard parses nothing. Needs
            ``event_file`` (the child belongs to the event file's recorder).
    """

    framework = FRAMEWORK

    def __init__(self, *args: Any, memory_snapshot: bool = False,
                 memory_snapshot_entries: int = DEFAULT_MEMORY_SNAPSHOT_ENTRIES, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.memory_history: Optional[MemoryHistory] = (
            MemoryHistory(memory_snapshot_entries) if memory_snapshot else None)

    def write(self, prof: Any) -> Any:
        written = super().write(prof)
        if self.memory_history is not None:
            self.memory_history.dump(
                self.asset_dir / layout.writer_snapshot_name(written.manifest.worker, written.manifest.span))
        return written

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
    memory_snapshot: bool = False,
    memory_snapshot_entries: int = DEFAULT_MEMORY_SNAPSHOT_ENTRIES,
    pack: bool = False,
) -> ProfscopeWriter:
    """``on_trace_ready=trace_handler("runs", "exp1")``: see :class:`ProfscopeWriter`."""
    return ProfscopeWriter(
        logdir, run, worker, batch_size=batch_size, tags=tags, event_file=event_file,
        cpu_sample_interval=cpu_sample_interval, memory_snapshot=memory_snapshot,
        memory_snapshot_entries=memory_snapshot_entries, pack=pack,
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
