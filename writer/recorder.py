"""Recording written spans in the run's TensorBoard event file, with their performance scalars.

The span record is written at once (it is a few hundred bytes). The scalars need the span
analysed (``profscope.tb_plugin.reports.span_scalars``): in a training job that happens in a
short-lived child process at a lower CPU priority, so that parsing the trace neither holds
the training process's interpreter lock nor grows its memory. Spans are analysed one at a
time, in the order they were written.

No thread of the recorder lives in the training process: ``torch.profiler``'s Python
tracer (``with_stack``) records every thread alive while it records, and the user's
profile must show only the user's work. So the recorder does its work when the writer
calls it, which is always between recording windows (the profiler calls its handler after
it stopped recording): ``record`` starts the next child when none runs, and collects the
scalars of a child that has finished; ``flush()`` waits until every span handed over so
far has its scalars on disk (``close()``, and the writer's exit handler, call it). A
child writes to temporary files, never to a pipe that nobody would read while it runs.
"""

from __future__ import annotations

import collections
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Optional

from .events import RunEventFile
from .span_files import WrittenSpan

Analyse = Callable[[Path, Optional[int]], dict[str, float]]
Report = Callable[[str], None]

_STDERR_TAIL_CHARS = 2000


class SpanAnalysisError(RuntimeError):
    """A span's scalars could not be computed; the message says why."""


def analyse_in_process(trace_path: Path, batch_size: Optional[int]) -> dict[str, float]:
    from profscope.tb_plugin.ingest.load import TraceLoadError
    from profscope.tb_plugin.reports.span_scalars import trace_file_scalars

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


def _analysis_command(trace_path: Path, batch_size: Optional[int], pack: bool = False) -> list[str]:
    command = [sys.executable, "-m", "profscope.tb_plugin.reports.span_scalars", str(trace_path), "--background"]
    if pack:
        command.append("--pack")
    if batch_size is not None:
        command += ["--batch-size", str(batch_size)]
    return command


def _scalars_of(returncode: int, stdout: bytes, stderr: bytes) -> dict[str, float]:
    if returncode != 0:
        reason = stderr.decode("utf-8", "replace").strip()[-_STDERR_TAIL_CHARS:]
        raise SpanAnalysisError(reason or f"the analysis exited with status {returncode}")
    return _parse_scalars(stdout)


class ChildAnalysis:
    """One span's analysis running in a child process, its output in temporary files."""

    def __init__(self, trace_path: Path, batch_size: Optional[int], pack: bool = False) -> None:
        if not sys.executable:
            raise OSError("no Python executable to start the analysis with")
        self._stdout: IO[bytes] = tempfile.TemporaryFile()
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        try:
            self._process = subprocess.Popen(
                _analysis_command(trace_path, batch_size, pack), stdin=subprocess.DEVNULL, stdout=self._stdout,
                stderr=self._stderr, env=_child_environment(),
            )
        except BaseException:
            self._close_files()
            raise

    def finished(self, timeout: Optional[float] = 0.0) -> bool:
        """Whether the child has exited, waiting at most ``timeout`` seconds (None: until it has)."""
        if timeout == 0.0:
            return self._process.poll() is not None
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def scalars(self) -> dict[str, float]:
        """The scalars the finished child printed (``SpanAnalysisError`` when it failed)."""
        try:
            outputs = []
            for file in (self._stdout, self._stderr):
                file.seek(0)
                outputs.append(file.read())
        finally:
            self._close_files()
        return _scalars_of(self._process.returncode, outputs[0], outputs[1])

    def stop(self) -> None:
        """End a child whose answer is no longer awaited."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._close_files()

    def _close_files(self) -> None:
        for file in (self._stdout, self._stderr):
            file.close()


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
        analyse: computes a span's scalars from its trace file, where a span is analysed
            in this process (``background=False``, or no child process can be started).
        background: analyse in child processes, collected on later calls (the writer), or
            at once in ``record`` (import).
        report: where problems go (a span whose scalars cannot be computed is reported and
            skipped; its trace and record stay).
    """

    def __init__(
        self,
        run_folder: Path,
        analyse: Analyse = analyse_in_process,
        background: bool = True,
        report: Optional[Report] = None,
        pack: bool = False,
    ) -> None:
        self.pack = pack  # the child also writes the span's pack (``span_scalars --pack``)
        self.events = RunEventFile(run_folder)
        self._analyse = analyse
        self._background = background
        self._report = report or _warn
        self._jobs: collections.deque[_ScalarJob] = collections.deque()
        self._running: Optional[tuple[_ScalarJob, ChildAnalysis]] = None
        self._closing = False

    @property
    def unfinished(self) -> int:
        """Spans handed over whose scalars are not written yet."""
        return len(self._jobs) + (self._running is not None)

    def record(self, written: WrittenSpan, step: int, primary: bool = True) -> None:
        """Write the span's record now and its scalars now or once its analysis has finished.

        ``primary``: whether the span's worker writes the run's plain scalar tags
        (``events.is_primary_worker``).
        """
        if self._closing:
            raise RuntimeError("the recorder is closed")
        manifest = written.manifest
        self.events.add_span(manifest, step)
        self.events.flush()  # the run shows in TensorBoard without waiting for the analysis
        job = _ScalarJob(written.trace_path, manifest.batch_size, manifest.worker, primary, step, manifest.wall_time)
        if not self._background:
            self._write(job, self._analysed_here(job))
            return
        self._jobs.append(job)
        self._advance()

    def _analysed_here(self, job: _ScalarJob) -> Optional[dict[str, float]]:
        try:
            return self._analyse(job.trace_path, job.batch_size)
        except Exception as error:  # noqa: BLE001 - one span's analysis must not stop the others
            self._report(f"profscope: no performance scalars for {job.trace_path.name}: {error}")
            return None

    def _write(self, job: _ScalarJob, scalars: Optional[dict[str, float]]) -> None:
        if scalars is None:
            return
        try:
            self.events.add_scalars(scalars, job.worker, job.step, job.wall_time, job.primary)
            self.events.flush()
        except Exception as error:  # noqa: BLE001 - one span's scalars must not stop the others
            self._report(f"profscope: no performance scalars for {job.trace_path.name}: {error}")

    def _advance(self, timeout: Optional[float] = 0.0) -> bool:
        """Collect the running analysis if it has finished (waiting at most ``timeout``) and start the next
        ones; True when nothing is left to wait for."""
        while True:
            if self._running is not None:
                job, child = self._running
                if not child.finished(timeout):
                    return False
                self._running = None
                try:
                    scalars: Optional[dict[str, float]] = child.scalars()
                except SpanAnalysisError as error:
                    self._report(f"profscope: no performance scalars for {job.trace_path.name}: {error}")
                    scalars = None
                self._write(job, scalars)
            if not self._jobs:
                return True
            job = self._jobs.popleft()
            try:
                self._running = (job, ChildAnalysis(job.trace_path, job.batch_size, self.pack))
            except OSError:  # no child process here (an embedded interpreter...): analyse in this process
                self._write(job, self._analysed_here(job))

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Wait until every span recorded so far has its scalars written; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._advance(None if deadline is None else max(0.0, deadline - time.monotonic())):
            if deadline is not None and time.monotonic() >= deadline:
                break
        self.events.flush()
        return self.unfinished == 0

    def close(self, timeout: Optional[float] = None) -> bool:
        """``flush``, then close the event file; False if spans were still being analysed (their
        analyses are stopped)."""
        done = self.flush(timeout)
        self._closing = True
        if self._running is not None:
            self._running[1].stop()
            self._running = None
        self._jobs.clear()
        self.events.close()
        return done
