"""Host CPU utilization over a span, sampled on a background thread of the training process.

Each reading holds cumulative counters, so the utilization over any time range is a
difference of two readings (no averaging of averages), and a range that starts or ends
between readings is cut at the right place by linear interpolation:

* the process: ``time.process_time_ns()`` — CPU time of this process, all threads,
  any platform. Utilization = CPU time / elapsed time, so 1.0 is one CPU kept busy and the
  most is the number of CPUs (as Paddle's "CPU(Process)" figure). Child processes (such as
  DataLoader workers) are not included.
* the whole system: on Linux, the first line of ``/proc/stat`` (clock ticks of all CPUs,
  busy and idle). Utilization = busy / (busy + idle), 0..1 (as Paddle's "CPU(System)").
  Where ``/proc/stat`` cannot be read (other systems), the system figure is left out:
  no extra dependency is needed.

The thread wakes once per interval (default 100 ms) for two cheap reads; the history it
keeps is bounded (``HISTORY_READINGS``), and what goes into a manifest is bounded too
(``MAX_POINTS`` points, merged exactly from the cumulative counters).

The sampler must not show up in the job's own profile. ``torch.profiler`` with
``with_stack=True`` installs its Python tracer on every thread that exists when
recording starts and records each Python frame and each call of a builtin made from
Python code, so a Python sampling loop (its ``Event.wait`` above all) would fill the
user's flame graph. The sampling thread therefore runs no Python frame at all: it is
started with ``_thread.start_new_thread`` on a C method (``deque.extend``) that
consumes an iterator built from builtins only (``iter(callable, sentinel)``, ``zip``,
``functools.partial``): wait on a lock with a timeout, read ``perf_counter_ns``,
``process_time_ns`` and the first bytes of ``/proc/stat`` (``os.pread``). Calls made
from C are invisible to Python's profiling hook. The raw bytes are parsed later, when
a span is summarised (``CpuSampler.readings``).
"""

from __future__ import annotations

import _thread
import collections
import itertools
import math
import os
import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Iterator, Optional, Sequence

DEFAULT_INTERVAL_SECONDS = 0.1
MIN_INTERVAL_SECONDS = 0.01
# Ten minutes at the default interval; a longer span keeps its last ten minutes.
HISTORY_READINGS = 6000
# Points of the utilization series written into a manifest.
# Kept small: every span's manifest is listed with the run (the ``runs`` route).
MAX_POINTS = 120
_DECIMALS = 3

PROC_STAT = "/proc/stat"
# /proc/stat "cpu" fields: user nice system idle iowait irq softirq steal guest guest_nice.
# guest time is already counted in user time, so it is left out.
_BUSY_FIELDS = (0, 1, 2, 5, 6, 7)
_IDLE_FIELDS = (3, 4)


@dataclass(frozen=True)
class CpuReading:
    """Cumulative counters at one moment (``time_ns`` from ``time.perf_counter_ns``)."""

    time_ns: int
    process_ns: int
    system_busy: Optional[float] = None  # clock ticks of all CPUs, or None when unknown
    system_total: Optional[float] = None


def parse_proc_stat(text: bytes) -> Optional[tuple[float, float]]:
    """(busy, total) clock ticks of all CPUs from the start of ``/proc/stat`` (its first line), else None."""
    first = text.split(b"\n", 1)[0].split()
    if len(first) < 5 or first[0] != b"cpu":
        return None
    try:
        fields = [float(value) for value in first[1:]]
    except ValueError:
        return None
    busy = sum(fields[i] for i in _BUSY_FIELDS if i < len(fields))
    idle = sum(fields[i] for i in _IDLE_FIELDS if i < len(fields))
    return busy, busy + idle


def read_proc_stat(path: str = PROC_STAT) -> Optional[tuple[float, float]]:
    """(busy, total) clock ticks of all CPUs since boot, or None where there is no such file."""
    try:
        with open(path, "rb") as stat:
            first = stat.readline()
    except OSError:
        return None
    return parse_proc_stat(first)


def check_interval(interval: Optional[float]) -> Optional[float]:
    """Seconds between readings; None or 0 turns sampling off."""
    if interval is None or interval == 0:
        return None
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not math.isfinite(interval):
        raise ValueError(f"cpu_sample_interval must be a number of seconds or None, got {interval!r}")
    if interval < MIN_INTERVAL_SECONDS:
        raise ValueError(f"cpu_sample_interval must be at least {MIN_INTERVAL_SECONDS} s (or None), got {interval!r}")
    return float(interval)


def wall_offset_ns() -> int:
    """``time_ns() - perf_counter_ns()``: turns the sampler's clock into epoch time.

    Read between two wall-clock reads; a pair far apart (the thread was preempted) is read again.
    """

    def measure() -> tuple[int, int]:
        before = time.time_ns()
        perf = time.perf_counter_ns()
        after = time.time_ns()
        return after - before, (before + after) // 2 - perf

    best = measure()
    for _ in range(2):
        if best[0] < 100_000:  # 0.1 ms
            break
        best = min(best, measure())
    return best[1]


def _interpolate(before: CpuReading, after: CpuReading, time_ns: int) -> CpuReading:
    span = after.time_ns - before.time_ns
    if span <= 0:
        return after
    share = (time_ns - before.time_ns) / span

    def between(a: Optional[float], b: Optional[float]) -> Optional[float]:
        return None if a is None or b is None else a + (b - a) * share

    return CpuReading(
        time_ns,
        round(before.process_ns + (after.process_ns - before.process_ns) * share),
        between(before.system_busy, after.system_busy),
        between(before.system_total, after.system_total),
    )


def _at(readings: Sequence[CpuReading], time_ns: int) -> CpuReading:
    """The counters at ``time_ns`` (inside the readings' range), interpolated between neighbours."""
    for before, after in zip(readings, readings[1:]):
        if before.time_ns <= time_ns <= after.time_ns:
            return _interpolate(before, after, time_ns)
    return readings[-1]


def _process_rate(a: CpuReading, b: CpuReading) -> float:
    return (b.process_ns - a.process_ns) / (b.time_ns - a.time_ns)


def _system_rate(a: CpuReading, b: CpuReading) -> Optional[float]:
    if a.system_busy is None or b.system_busy is None or a.system_total is None or b.system_total is None:
        return None
    total = b.system_total - a.system_total
    if total <= 0:
        return None  # the counters did not tick over this interval
    return min(max((b.system_busy - a.system_busy) / total, 0.0), 1.0)


def _rounded(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, _DECIMALS)


def _evenly_spaced(count: int, keep: int) -> list[int]:
    """``keep + 1`` indices from 0 to ``count`` (both ends included), evenly spread."""
    if count <= keep:
        return list(range(count + 1))
    return sorted({round(i * count / keep) for i in range(keep + 1)})


def _advanced(a: CpuReading, b: CpuReading) -> bool:
    """Whether the system's tick counters moved from ``a`` to ``b`` (always true when unknown)."""
    return a.system_total is None or b.system_total is None or b.system_total > a.system_total


def _intervals(points: list[CpuReading], min_gap_ns: int) -> list[CpuReading]:
    """``points`` without the readings that would make an interval too short to mean anything: under
    ``min_gap_ns`` (the handler's own reading just after the thread's), or without a system tick.
    Dropping a reading merges two intervals exactly: the counters are cumulative."""
    kept = [points[0]]
    for point in points[1:-1]:
        if point.time_ns - kept[-1].time_ns >= min_gap_ns and _advanced(kept[-1], point):
            kept.append(point)
    last = points[-1]
    while len(kept) > 1 and (last.time_ns - kept[-1].time_ns < min_gap_ns or not _advanced(kept[-1], last)):
        kept.pop()
    kept.append(last)
    return kept


def summarise_window(
    readings: Sequence[CpuReading],
    start_ns: int,
    end_ns: int,
    *,
    interval: float,
    wall_offset_ns: int,
    cpu_count: Optional[int] = None,
    max_points: int = MAX_POINTS,
) -> Optional[dict[str, Any]]:
    """The manifest's ``cpu_utilization`` for ``[start_ns, end_ns]`` (perf_counter ns), or None.

    The window is cut to the readings held (a span longer than the history keeps its end).
    ``wall_offset_ns`` turns perf_counter times into epoch times (``time_ns() - perf_counter_ns()``).
    """
    readings = sorted(readings, key=lambda reading: reading.time_ns)
    if len(readings) < 2:
        return None
    start_ns = max(start_ns, readings[0].time_ns)
    end_ns = min(end_ns, readings[-1].time_ns)
    if end_ns <= start_ns:
        return None
    inside = [r for r in readings if start_ns < r.time_ns < end_ns]
    points = _intervals([_at(readings, start_ns), *inside, _at(readings, end_ns)], int(interval * 1e9 / 2))
    first, last = points[0], points[-1]
    system_mean = _system_rate(first, last)  # None without /proc/stat, or if no tick at all
    process_rates = [_process_rate(a, b) for a, b in zip(points, points[1:])]
    system_rates = [_system_rate(a, b) for a, b in zip(points, points[1:])]
    has_system = system_mean is not None and all(rate is not None for rate in system_rates)

    kept = [points[i] for i in _evenly_spaced(len(points) - 1, max_points)]
    duration = (end_ns - start_ns) / 1e9
    return {
        "source": "proc_stat" if first.system_total is not None else "process_time",
        "cpu_count": cpu_count if cpu_count is not None else os.cpu_count(),
        "interval": interval,
        "start": round((start_ns + wall_offset_ns) / 1e9, 6),
        "duration": round(duration, 6),
        "process": _rounded(_process_rate(first, last)),
        "process_max": _rounded(max(process_rates)),
        "system": _rounded(system_mean),
        "system_max": _rounded(max(r for r in system_rates if r is not None)) if has_system else None,
        "samples": {
            "time": [round((p.time_ns - start_ns) / 1e9, _DECIMALS) for p in kept[:-1]],
            "process": [_rounded(_process_rate(a, b)) for a, b in zip(kept, kept[1:])],
            "system": [_rounded(_system_rate(a, b)) for a, b in zip(kept, kept[1:])] if has_system else None,
        },
    }


# Bytes read from the start of /proc/stat: its first line ("cpu" and ten counters) is far shorter.
_PROC_STAT_HEAD_BYTES = 512
# A raw reading as the sampling thread leaves it: (stopped flag, perf_counter ns, process ns, /proc/stat head).
_RawReading = tuple[bool, int, int, Optional[bytes]]


def _parsed(raw: _RawReading) -> CpuReading:
    _stopped, time_ns, process_ns, stat = raw
    counters = parse_proc_stat(stat) if stat is not None else None
    busy, total = counters if counters is not None else (None, None)
    return CpuReading(time_ns, process_ns, busy, total)


class CpuSampler:
    """Reads the CPU counters every ``interval`` seconds on a thread that runs no Python code (see the
    module docstring); keeps a bounded history."""

    def __init__(self, interval: float = DEFAULT_INTERVAL_SECONDS, history: int = HISTORY_READINGS,
                 proc_stat: str = PROC_STAT) -> None:
        self.interval = interval
        self._proc_stat = proc_stat
        # deque.append/extend/copy are atomic under the GIL: no lock is needed between the thread and readers.
        self._readings: collections.deque[_RawReading] = collections.deque(maxlen=history)
        self._stop: Optional[Any] = None  # held while sampling; released to stop the thread
        self._done: Optional[Any] = None  # held while the thread runs; the thread releases it as it ends
        self._stat_fd: Optional[int] = None
        self._pid = os.getpid()

    @property
    def running(self) -> bool:
        return self._done is not None and self._done.locked() and self._pid == os.getpid()

    def _stat_reader(self) -> Callable[[], Optional[bytes]]:
        if self._stat_fd is None:
            return itertools.repeat(None).__next__
        return partial(os.pread, self._stat_fd, _PROC_STAT_HEAD_BYTES, 0)

    def _open_stat(self) -> None:
        try:
            fd = os.open(self._proc_stat, os.O_RDONLY)
        except OSError:
            return
        try:
            if parse_proc_stat(os.pread(fd, _PROC_STAT_HEAD_BYTES, 0)) is not None:
                self._stat_fd, fd = fd, -1
        except OSError:
            pass
        if fd >= 0:
            os.close(fd)

    def _close_stat(self) -> None:
        fd, self._stat_fd = self._stat_fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def start(self) -> None:
        """Start (or, in a forked child or after ``stop``, restart) the sampling thread."""
        if self.running:
            return
        if self._pid != os.getpid():
            # A forked child has the history but not the thread (nor the parent's file descriptor to keep).
            self._pid = os.getpid()
            self._readings = collections.deque(maxlen=self._readings.maxlen)
            self._stat_fd = None
        if self._stat_fd is None:
            self._open_stat()
        self.take()
        stop, done = _thread.allocate_lock(), _thread.allocate_lock()
        stop.acquire()
        done.acquire()
        self._stop, self._done = stop, done
        _thread.start_new_thread(self._readings.extend, (self._samples(stop, done),))

    def _samples(self, stop: Any, done: Any) -> Iterator[Any]:
        """The thread's whole loop, built from builtins: each item waits ``interval`` on ``stop`` (False when
        the wait times out), then reads the clocks and /proc/stat. ``stop`` released: the wait returns True,
        the loop ends and ``done`` is released (by the sentinel call that ends ``chain``)."""
        waits = iter(partial(stop.acquire, True, self.interval), True)
        readings = zip(waits, iter(time.perf_counter_ns, None), iter(time.process_time_ns, None),
                       iter(self._stat_reader(), False))
        return itertools.chain(readings, iter(done.release, None))

    def stop(self) -> None:
        stop, done = self._stop, self._done
        self._stop = self._done = None
        if stop is None or done is None or self._pid != os.getpid():
            return
        if stop.locked():
            stop.release()
        if done.acquire(timeout=max(1.0, 2 * self.interval)):  # the thread has ended: its file can close
            done.release()
            self._close_stat()

    def take(self) -> CpuReading:
        """Read the counters now and keep the reading."""
        raw: _RawReading = (False, time.perf_counter_ns(), time.process_time_ns(), self._stat_reader()())
        self._readings.append(raw)
        return _parsed(raw)

    def readings(self) -> list[CpuReading]:
        return [_parsed(raw) for raw in self._readings.copy()]

    def oldest_ns(self) -> Optional[int]:
        history = self._readings.copy()
        return history[0][1] if history else None

    def summarise(self, start_ns: int, end_ns: int) -> Optional[dict[str, Any]]:
        """``summarise_window`` over the history held now."""
        return summarise_window(
            self.readings(), start_ns, end_ns, interval=self.interval, wall_offset_ns=wall_offset_ns()
        )
