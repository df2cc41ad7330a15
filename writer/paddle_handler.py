"""``on_trace_ready`` handler for ``paddle.profiler.Profiler`` that writes Profscope spans.

Paddle is never imported here: the handler calls ``prof.export(path, "json")`` — what
Paddle's own ``export_chrome_tracing`` does — on the profiler it is given, and reads the
profiler's ``step_num``, ``scheduler`` and state to know which steps the span holds.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any, Mapping, Optional

from .cpu_sampler import DEFAULT_INTERVAL_SECONDS, wall_offset_ns
from .manifest import TagValue
from .span_writer import SpanWriter, recorded_steps

FRAMEWORK = "paddle"
# The scheduler's states that record a step (``paddle.profiler.ProfilerState``).
_RECORDING_STATES = ("RECORD", "RECORD_AND_RETURN")
# What paddle.distributed.launch sets for each trainer (ParallelEnv().rank reads it).
PADDLE_RANK_ENV_VAR = "PADDLE_TRAINER_ID"
# Paddle writes the span's ProfileStep events first: the head of its trace says when the
# recorded steps began and ended.
_HEAD_BYTES = 64 * 1024
_TS = re.compile(rb'"ts"\s*:\s*(\d+(?:\.\d+)?)')
_PROFILE_STEP = re.compile(
    rb'"name"\s*:\s*"ProfileStep#(\d+)[^"]*"[^{}]*?"ts"\s*:\s*(\d+(?:\.\d+)?)\s*,\s*"dur"\s*:\s*(\d+(?:\.\d+)?)'
)
# A trace start further back than this from the export is not believed.
_MAX_SPAN_SECONDS = 24 * 3600


class PaddleWriter(SpanWriter):
    """Writes each profiled span of a ``paddle.profiler.Profiler`` into a Profscope run.

    Use it where Paddle's ``export_chrome_tracing(dir)`` would go::

        writer = profscope.writer.paddle_trace_handler("runs", run="exp1", batch_size=32)
        with paddle.profiler.Profiler(scheduler=(2, 10), on_trace_ready=writer) as prof:
            for batch in loader:
                train_step(batch)
                prof.step()

    Files, per span: ``<logdir>/<run>/plugins/profscope/<worker>.<span>.paddle.trace.json.gz``
    (Paddle's Chrome-trace export, gzip-compressed, content unchanged) and its manifest,
    each written atomically; options and event file as :class:`~profscope.writer.ProfscopeWriter`.

    The batch size is the one given here or by ``set_batch_size``; when neither says, the
    ``num_samples`` last given to ``prof.step(num_samples=...)`` (Paddle's own benchmark
    timer) is used. The default worker is ``rank<N>`` when ``$PADDLE_TRAINER_ID`` (set by
    ``paddle.distributed.launch``) or ``$RANK`` is set, else ``<hostname>_<pid>``.
    """

    framework = FRAMEWORK

    def _export(self, prof: Any, path: Path) -> None:
        prof.export(str(path), "json")
        # Paddle's export does nothing when the profiler holds no result: say so instead of
        # writing an empty span.
        if not path.is_file() or path.stat().st_size == 0:
            raise RuntimeError("the Paddle profiler exported no trace (it holds no profiling result)")

    def _framework_version(self) -> Optional[str]:
        version = getattr(sys.modules.get("paddle"), "__version__", None)
        return str(version) if version is not None else None

    def _distributed_rank(self) -> Optional[int]:
        return paddle_rank()

    def _step_range(self, prof: Any, frame: Optional[FrameType]) -> Optional[tuple[int, int]]:
        return infer_paddle_step_range(prof, frame)

    def _recording_window_ns(
        self, prof: Any, exported: Path, step_range: Optional[tuple[int, int]]
    ) -> tuple[Optional[int], Optional[int]]:
        start_us, end_us = recorded_window_us(exported, step_range[1] if step_range is not None else None)
        # Paddle's times are epoch µs; the CPU sampler's clock is perf_counter.
        offset = wall_offset_ns()
        perf_now = time.perf_counter_ns()

        def on_sampler_clock(epoch_us: Optional[float]) -> Optional[int]:
            if epoch_us is None:
                return None
            perf = int(epoch_us * 1000) - offset
            return perf if 0 <= perf_now - perf <= _MAX_SPAN_SECONDS * 1_000_000_000 else None

        return on_sampler_clock(start_us), on_sampler_clock(end_us)

    def _batch_size_now(self) -> Optional[int]:
        return self.batch_size if self.batch_size is not None else _paddle_timer_num_samples()


def paddle_trace_handler(
    logdir: str | os.PathLike[str],
    run: Optional[str] = None,
    worker: Optional[str] = None,
    *,
    batch_size: Optional[int] = None,
    tags: Optional[Mapping[str, TagValue]] = None,
    event_file: bool = True,
    cpu_sample_interval: Optional[float] = DEFAULT_INTERVAL_SECONDS,
) -> PaddleWriter:
    """``Profiler(on_trace_ready=paddle_trace_handler("runs", "exp1"))``: see :class:`PaddleWriter`."""
    return PaddleWriter(
        logdir, run, worker, batch_size=batch_size, tags=tags, event_file=event_file,
        cpu_sample_interval=cpu_sample_interval,
    )


def paddle_rank() -> Optional[int]:
    """This trainer's rank from the launcher's environment (``$PADDLE_TRAINER_ID``, else ``$RANK``)."""
    for name in (PADDLE_RANK_ENV_VAR, "RANK"):
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def infer_paddle_step_range(prof: Any, frame: Optional[FrameType]) -> Optional[tuple[int, int]]:
    """The first and last ``ProfileStep#N`` in the trace being exported, or None when unsure.

    Paddle calls ``on_trace_ready`` from ``step()`` after the window's last step (state
    ``RECORD_AND_RETURN``; ``step_num`` already counts the next step), or from ``stop()``
    inside a window (``step_num`` is the step cut short).
    """
    return recorded_steps(
        prof, frame, getattr(prof, "scheduler", None), getattr(prof, "step_num", None),
        _RECORDING_STATES, "RECORD_AND_RETURN",
    )


def recorded_window_us(path: Path, last_step: Optional[int] = None) -> tuple[Optional[float], Optional[float]]:
    """(start, end) in epoch µs of what a Paddle trace recorded, from its first events: the
    earliest ``ts`` there, and the end of ``ProfileStep#<last_step>`` when it is among them
    (else None: a long span's last step may lie beyond the part read)."""
    try:
        with open(path, "rb") as trace:
            head = trace.read(_HEAD_BYTES)
    except OSError:
        return None, None
    stamps = [float(match) for match in _TS.findall(head)]
    step_ends = {int(step): float(ts) + float(dur) for step, ts, dur in _PROFILE_STEP.findall(head)}
    return (min(stamps) if stamps else None), (step_ends.get(last_step) if last_step is not None else None)


def _paddle_timer_num_samples() -> Optional[int]:
    """``num_samples`` of the last ``prof.step(num_samples=...)``, from Paddle's benchmark timer."""
    timer = sys.modules.get("paddle.profiler.timer")
    benchmark = getattr(timer, "benchmark", None)
    if not callable(benchmark):
        return None
    try:
        value = benchmark().num_samples
    except Exception:  # noqa: BLE001 - another Paddle version: the batch size stays unknown
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
