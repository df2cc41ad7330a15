"""Recording written spans in the run's TensorBoard event file, with their performance scalars.

The span record is written at once (it is a few hundred bytes). The scalars need the span
analysed (``profscope.tb_plugin.span_scalars``): in a training job that happens on a
background thread, which runs the analysis in a short-lived child process at a lower CPU
priority, so that parsing the trace neither holds the training process's interpreter lock
nor grows its memory. Spans are analysed one at a time, in the order they were written.
``flush()`` waits until every span handed over so far has its scalars on disk.
"""

from __future__ import annotations

import collections
import json
import math
import os
import subprocess
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from .events import RunEventFile
from .span_files import WrittenSpan

Analyse = Callable[[Path, Optional[int]], dict[str, float]]
Report = Callable[[str], None]

_STDERR_TAIL_CHARS = 2000


class SpanAnalysisError(RuntimeError):
    """A span's scalars could not be computed; the message says why."""


def analyse_in_process(trace_path: Path, batch_size: Optional[int]) -> dict[str, float]:
    from profscope.tb_plugin.ingest import TraceLoadError
    from profscope.tb_plugin.span_scalars import trace_file_scalars

    try:
        return trace_file_scalars(str(trace_path), batch_size)
    except TraceLoadError as error:
        raise SpanAnalysisError(str(error)) from None


def _child_environment() -> dict[str, str]:
    # The child must import profscope from wherever this process did, even when the job
    # put it on sys.path itself.
    paths = [entry for entry in sys.path if entry and os.path.isdir(entry)]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))


def _parse_scalars(stdout: bytes) -> dict[str, float]:
    try:
        document = json.loads(stdout)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SpanAnalysisError(f"the analysis printed no JSON ({error})") from None
    if not isinstance(document, dict):
        raise SpanAnalysisError("the analysis printed no JSON object")
    scalars: dict[str, float] = {}
    for tag, value in document.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            scalars[str(tag)] = float(value)
    return scalars


def analyse_in_child_process(trace_path: Path, batch_size: Optional[int]) -> dict[str, float]:
    """``span_scalars`` of a trace, computed by ``python -m profscope.tb_plugin.span_scalars``."""
    command = [sys.executable, "-m", "profscope.tb_plugin.span_scalars", str(trace_path), "--background"]
    if batch_size is not None:
        command += ["--batch-size", str(batch_size)]
    result = subprocess.run(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=_child_environment(), check=False,
    )
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip()[-_STDERR_TAIL_CHARS:]
        raise SpanAnalysisError(reason or f"the analysis exited with status {result.returncode}")
    return _parse_scalars(result.stdout)


def analyse_span(trace_path: Path, batch_size: Optional[int]) -> dict[str, float]:
    """In a child process when one can be started (it cannot in some embedded interpreters)."""
    if not sys.executable:
        return analyse_in_process(trace_path, batch_size)
    try:
        return analyse_in_child_process(trace_path, batch_size)
    except OSError:
        return analyse_in_process(trace_path, batch_size)


def _warn(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=2)


@dataclass(frozen=True)
class _ScalarJob:
    trace_path: Path
    batch_size: Optional[int]
    worker: str
    primary: bool
    step: int
    wall_time: float


class SpanEventRecorder:
    """Writes span records and scalars into one event file of a run folder.

    Args:
        run_folder: ``<logdir>/<run>``, where the event file goes.
        analyse: computes a span's scalars from its trace file.
        background: analyse on a background thread (the writer) or in ``record`` (import).
        report: where problems go (a span whose scalars cannot be computed is reported and
            skipped; its trace and record stay).
    """

    def __init__(
        self,
        run_folder: Path,
        analyse: Analyse = analyse_span,
        background: bool = True,
        report: Optional[Report] = None,
    ) -> None:
        self.events = RunEventFile(run_folder)
        self._analyse = analyse
        self._background = background
        self._report = report or _warn
        self._jobs: collections.deque[_ScalarJob] = collections.deque()
        self._unfinished = 0
        self._condition = threading.Condition()
        self._thread: Optional[threading.Thread] = None
        self._closing = False

    @property
    def unfinished(self) -> int:
        """Spans handed over whose scalars are not written yet."""
        with self._condition:
            return self._unfinished

    def record(self, written: WrittenSpan, step: int, primary: bool = True) -> None:
        """Write the span's record now and its scalars now or in the background.

        ``primary``: whether the span's worker writes the run's plain scalar tags
        (``events.is_primary_worker``).
        """
        manifest = written.manifest
        self.events.add_span(manifest, step)
        self.events.flush()  # the run shows in TensorBoard without waiting for the analysis
        job = _ScalarJob(written.trace_path, manifest.batch_size, manifest.worker, primary, step, manifest.wall_time)
        if not self._background:
            self._run_job(job)
            return
        with self._condition:
            if self._closing:
                raise RuntimeError("the recorder is closed")
            self._jobs.append(job)
            self._unfinished += 1
            if self._thread is None:
                # A daemon thread: it must not keep the interpreter from reaching the atexit
                # handler that waits for it (non-daemon threads are joined before atexit runs).
                self._thread = threading.Thread(target=self._work, name="profscope-scalars", daemon=True)
                self._thread.start()
            self._condition.notify_all()

    def _work(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: bool(self._jobs) or self._closing)
                if not self._jobs:
                    return
                job = self._jobs.popleft()
            try:
                self._run_job(job)
            finally:
                with self._condition:
                    self._unfinished -= 1
                    self._condition.notify_all()

    def _run_job(self, job: _ScalarJob) -> None:
        try:
            scalars = self._analyse(job.trace_path, job.batch_size)
            self.events.add_scalars(scalars, job.worker, job.step, job.wall_time, job.primary)
            self.events.flush()
        except Exception as error:  # noqa: BLE001 - one span's analysis must not stop the others
            self._report(f"profscope: no performance scalars for {job.trace_path.name}: {error}")

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Wait until every span recorded so far has its scalars written; False on timeout."""
        with self._condition:
            done = self._condition.wait_for(lambda: self._unfinished == 0, timeout)
        self.events.flush()
        return done

    def close(self, timeout: Optional[float] = None) -> bool:
        """``flush``, then close the event file; False if spans were still being analysed."""
        done = self.flush(timeout)
        with self._condition:
            self._closing = True
            self._condition.notify_all()
        if done:
            self.events.close()
        return done
