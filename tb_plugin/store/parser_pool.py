"""The parser processes: every parse runs outside the server process, isolated, timed and within a memory budget.

Why not ``concurrent.futures.ProcessPoolExecutor``: when one of its processes dies (killed, out of
memory) it fails every task in flight, a bystander span's too; it notices a death through a pipe that
a process forked by the parse (the decode helper of ``ingest/chrome/parallel.py``) keeps open, so a parse
whose process was killed stayed "loading" forever; and it has no deadline. Here:

- Each worker is a spawned process that leads its own process group, so that killing the group also
  ends what a parse forked. A worker dies with the server (``PR_SET_PDEATHSIG`` on Linux, set in its
  forked children too) and exits when its pipe closes.
- A dispatcher thread hands one job at a time to an idle worker and watches every busy one: its
  result, its exit (``waitpid``, not a pipe) and its deadline. A worker that died or overran ends its
  own job with an error (``JobFailed``), its group is killed and a fresh worker takes its place; the
  other jobs go on.
- Memory: the jobs that run at once have estimates (``ingest/footprint.py``) whose sum stays within the
  budget; a job estimated above the whole budget runs alone. As a backstop for a low estimate, a job's
  address space is capped (``RLIMIT_AS``) at the budget, or at its estimate when that is larger, above
  what the worker held before: a runaway parse ends in a MemoryError, not in the machine's OOM killer.
- A worker that ran a large job is replaced afterwards (a Python heap does not give memory back).

This module is imported by the spawned workers: it keeps its imports light.
"""

from __future__ import annotations

import atexit
import concurrent.futures as futures
import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from multiprocessing import connection
from typing import Any, Callable, Iterator, Optional

logger = logging.getLogger(__name__)

PARSE_TIMEOUT_ENV = "PROFSCOPE_PARSE_TIMEOUT_SECONDS"
PARSE_MEMORY_ENV = "PROFSCOPE_PARSE_MEMORY_GB"
# Generous: a 10-million-event trace takes minutes on a small machine.
DEFAULT_PARSE_TIMEOUT_SECONDS = 1800.0
# Share of the memory available when the server starts that parses may take together.
DEFAULT_MEMORY_SHARE = 0.5
_FALLBACK_BUDGET_BYTES = 4 << 30  # when the system does not say what is available
# A worker whose job was estimated above this is replaced once the job ends.
RECYCLE_AFTER_BYTES = 512 << 20
PROGRESS_SLOTS = 64
_POLL_SECONDS = 0.1
_PR_SET_PDEATHSIG = 1


class JobFailed(Exception):
    """A job ended without a result (its process died, overran its deadline, or raised); the message is for the user."""


def default_timeout_seconds() -> float:
    """``PROFSCOPE_PARSE_TIMEOUT_SECONDS``, else DEFAULT_PARSE_TIMEOUT_SECONDS."""
    try:
        value = float(os.environ.get(PARSE_TIMEOUT_ENV) or DEFAULT_PARSE_TIMEOUT_SECONDS)
    except ValueError:
        value = DEFAULT_PARSE_TIMEOUT_SECONDS
    return value if value > 0 else DEFAULT_PARSE_TIMEOUT_SECONDS


def available_memory_bytes() -> Optional[int]:
    """Memory the system can give without swapping (Linux: MemAvailable), else its physical memory; None if unknown."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def default_budget_bytes() -> int:
    """``PROFSCOPE_PARSE_MEMORY_GB``, else DEFAULT_MEMORY_SHARE of the memory available now."""
    configured = os.environ.get(PARSE_MEMORY_ENV)
    if configured:
        try:
            gigabytes = float(configured)
            if gigabytes > 0:
                return int(gigabytes * (1 << 30))
        except ValueError:
            pass
    available = available_memory_bytes()
    return int(available * DEFAULT_MEMORY_SHARE) if available else _FALLBACK_BUDGET_BYTES


# --- worker process side --------------------------------------------------------------------------

_progress: Any = None


def report_progress(slot: int, fraction: float) -> None:
    """Called by a job in a worker: its progress (0..1) in its slot of the shared array."""
    if _progress is not None and 0 <= slot < len(_progress):
        _progress[slot] = fraction


def _die_with_parent() -> None:
    """Linux: be killed when the parent process ends (the server, or the worker for a forked helper)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    except (OSError, AttributeError):  # not Linux: the worker still exits when its pipe closes
        pass


def release_free_memory() -> None:
    """glibc: give the heap's free pages back to the system (``malloc_trim``). After a parse, the freed columns stay
    in the heap; a derivation child forked then would copy every page of them it reuses (10 M events: +0.4 GB)."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


# glibc's mallopt parameters, and their defaults.
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_DEFAULT_TRIM_THRESHOLD, _DEFAULT_MMAP_MAX = 128 * 1024, 65536


@contextlib.contextmanager
def reused_heap() -> Iterator[None]:
    """glibc: while a job runs, every block comes from the heap and freed memory stays there for the next one.

    By default a block of more than 32 MB (a column of millions of rows) is mapped for itself and unmapped when
    freed, so the next one takes fresh pages from the system, and the first touch of a page is a fault that zeroes
    it (on a virtual machine whose host takes freed memory back, about 2 s per GB). Numpy's temporaries are such
    blocks. Kept in the heap, a freed column's pages serve the next one. Measured on the 10 M-event parse job (medians
    of 3, alternating): 16.27 -> 15.86 s, the derivations 4.18 -> 3.76 s; its peak RSS +2% (the same settings as
    glibc tunables: the parser's system time 4.5 -> 3.4 s). On leaving, the heap is trimmed and the defaults come back. Forked children (the decode helper, the
    derivation child) inherit the setting.
    """
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        yield
        return
    mallopt(_M_MMAP_MAX, 0)
    mallopt(_M_TRIM_THRESHOLD, -1)  # never trimmed while the job runs
    try:
        yield
    finally:
        mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
        mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)
        release_free_memory()


# Spawning a worker normally runs the server's main script again in it (multiprocessing imports it as ``__mp_main__``
# so that a target defined there can be unpickled). Under TensorBoard that is ``tensorboard.main``: 0.39 s of every
# worker's start, for nothing (a worker's target and jobs are functions of this package). Our own spawns leave it out.
_spawning_worker = threading.local()


def _install_spawn_without_main() -> None:
    from multiprocessing import spawn

    original = getattr(spawn, "get_preparation_data", None)
    if original is None or getattr(original, "_profscope", False):
        return

    def get_preparation_data(name: str) -> dict[str, Any]:
        data: dict[str, Any] = original(name)
        if getattr(_spawning_worker, "active", False):  # only while this pool's thread starts a worker
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
        return data

    get_preparation_data._profscope = True  # type: ignore[attr-defined]
    spawn.get_preparation_data = get_preparation_data


def _address_space_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _cap_address_space(allowance: Optional[int]) -> None:
    """Let this process grow by at most ``allowance`` bytes of address space (a forked helper inherits the cap)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if allowance is None:
            limit = hard
        else:
            limit = _address_space_bytes() + allowance
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        pass


def _worker_main(conn: Any, progress: Any) -> None:
    global _progress
    _progress = progress
    try:
        os.setpgid(0, 0)  # a group of its own: killing it ends what a job forked
    except OSError:
        pass
    _die_with_parent()
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_die_with_parent)  # a decode helper dies with this worker
    # Ctrl-C in a terminal reaches the server's process group, not this one; the server decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the server closed the pipe (or is gone)
        if message is None:
            return
        function, args, allowance = message
        _cap_address_space(allowance)
        try:
            reply: tuple[str, Any] = ("ok", function(*args))
        except MemoryError:
            reply = ("error", "not enough memory to load this trace within the parser's memory budget "
                              f"(--profscope_parse_memory_gb, {PARSE_MEMORY_ENV})")
        except BaseException as exc:  # noqa: BLE001 - reported as this job's failure
            logger.exception("profscope: a parser job failed")
            reply = ("error", f"could not load the trace: an internal error of Profscope ({type(exc).__name__}); "
                              "the server's log has the details")
        _cap_address_space(None)
        try:
            conn.send(reply)
        except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
            conn.send(("error", f"could not return the result ({type(exc).__name__})"))


# --- server side --------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Job:
    function: Callable[..., Any]
    args: tuple[Any, ...]
    estimate: int
    timeout: float
    future: futures.Future[Any] = field(default_factory=futures.Future)
    deadline: float = 0.0


@dataclass(eq=False)
class _Worker:
    process: Any
    conn: Any
    job: Optional[_Job] = None


class ParserPool:
    """Runs jobs (module-level functions and picklable arguments) in worker processes; see the module docstring."""

    def __init__(self, max_workers: int, budget_bytes: Optional[int] = None,
                 timeout_seconds: Optional[float] = None) -> None:
        self.max_workers = max(1, max_workers)
        self.budget_bytes = budget_bytes if budget_bytes is not None else default_budget_bytes()
        self.timeout_seconds = timeout_seconds if timeout_seconds is not None else default_timeout_seconds()
        self._context = multiprocessing.get_context("spawn")  # the server is threaded: never fork it
        self.progress = self._context.Array("d", PROGRESS_SLOTS, lock=False)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pending: deque[_Job] = deque()
        self._workers: list[_Worker] = []
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="profscope-parsers", daemon=True)
        self._thread.start()
        _live_pools.add(self)

    # Called by the run manager ---------------------------------------------------------------------

    def room_for(self, estimate: int) -> bool:
        """Whether a job of this estimate would start now: a worker is free and the budget has room
        (or nothing else runs: a job larger than the whole budget runs alone)."""
        with self._lock:
            active = self._active_estimates()
            if len(active) >= self.max_workers:
                return False
            return not active or sum(active) + estimate <= self.budget_bytes

    def submit(self, function: Callable[..., Any], args: tuple[Any, ...], estimate: int,
               timeout: Optional[float] = None) -> futures.Future[Any]:
        """Queue a job; its future ends with the function's result, or ``JobFailed``."""
        job = _Job(function, args, estimate, timeout if timeout is not None else self.timeout_seconds)
        with self._lock:
            if self._stopping:
                raise RuntimeError("the parser pool is shut down")
            self._pending.append(job)
        self._wake.set()
        return job.future

    def cancel(self, future: futures.Future[Any]) -> None:
        """Drop a job: a queued one is removed, a running one's worker is killed (its result would be stale)."""
        with self._lock:
            for job in list(self._pending):
                if job.future is future:
                    self._pending.remove(job)
            for worker in self._workers:
                if worker.job is not None and worker.job.future is future:
                    _kill_group(worker.process)
        future.cancel()
        self._wake.set()

    def worker_pids(self) -> list[int]:
        """Process ids of the workers (busy or idle)."""
        with self._lock:
            return [w.process.pid for w in self._workers if w.process.pid is not None]

    def active_jobs(self) -> int:
        """Jobs running or about to start."""
        with self._lock:
            return len(self._active_estimates())

    def pid_of(self, future: futures.Future[Any]) -> Optional[int]:
        """The process id of the worker running this job (None while it is queued or once it ended)."""
        with self._lock:
            return next((w.process.pid for w in self._workers if w.job is not None and w.job.future is future), None)

    def shutdown(self) -> None:
        """Stop every worker now (a running job's future is cancelled)."""
        with self._lock:
            self._stopping = True
            pending, self._pending = list(self._pending), deque()
            workers, self._workers = self._workers, []
        for job in pending:
            job.future.cancel()
        for worker in workers:
            _stop_worker(worker)
            if worker.job is not None:
                worker.job.future.cancel()
        self._wake.set()
        _live_pools.discard(self)

    # Dispatcher thread ------------------------------------------------------------------------------

    def _active_estimates(self) -> list[int]:
        return [w.job.estimate for w in self._workers if w.job is not None] + [j.estimate for j in self._pending]

    def _run(self) -> None:
        while True:
            try:
                if not self._step():
                    return
            except Exception:  # noqa: BLE001 - the dispatcher must survive anything a job does
                logger.exception("profscope: the parser pool's dispatcher failed; retrying")
                time.sleep(_POLL_SECONDS)

    def _step(self) -> bool:
        """One round: start queued jobs, collect results, end dead or overdue workers. False once shut down."""
        with self._lock:
            if self._stopping:
                return False
        self._start_pending()
        with self._lock:
            busy = [w for w in self._workers if w.job is not None]
        if not busy:
            self._wake.wait(1.0)
            self._wake.clear()
            return True
        ready = set(connection.wait([w.conn for w in busy], timeout=_POLL_SECONDS))
        now = time.monotonic()
        for worker in busy:
            if worker.conn in ready:
                self._receive(worker)
            elif not worker.process.is_alive():  # waitpid: true even while a forked helper holds the pipe
                self._end_worker(worker, None)
            elif now > worker.job.deadline:  # type: ignore[union-attr]
                self._end_worker(worker, (
                    f"loading took longer than {worker.job.timeout:g} s and was stopped "  # type: ignore[union-attr]
                    f"(--profscope_parse_timeout_seconds, {PARSE_TIMEOUT_ENV}); it is tried again when the file changes"))
        return True

    def _start_pending(self) -> None:
        """Hand queued jobs to idle (or new) workers. A job stays in the queue until a worker holds it, so the
        budget always counts it (a worker can take a while to start)."""
        while True:
            with self._lock:
                if self._stopping or not self._pending:
                    return
                job = self._pending[0]
                if job.future.cancelled():
                    self._pending.popleft()
                    continue
                idle = next((w for w in self._workers if w.job is None), None)
                if idle is None and len(self._workers) >= self.max_workers:
                    return
            worker = idle or self._spawn()
            with self._lock:
                if not self._pending or self._pending[0] is not job:
                    continue  # cancelled while the worker started: it stays idle
                self._pending.popleft()
                if worker is not None:
                    job.deadline = time.monotonic() + job.timeout
                    worker.job = job
            if worker is None:
                _fail(job, "could not start a parser process")
                continue
            try:
                worker.conn.send((job.function, job.args, max(self.budget_bytes, job.estimate)))
            except (OSError, ValueError):
                self._end_worker(worker, "the parser process stopped before it could load this trace")

    def _spawn(self) -> Optional[_Worker]:
        mine, theirs = self._context.Pipe(duplex=True)
        # Not a daemon: a daemonic process may not fork, and the decode helper is forked.
        process = self._context.Process(target=_worker_main, args=(theirs, self.progress), name="profscope-parser")
        _install_spawn_without_main()
        _spawning_worker.active = True
        try:
            process.start()
        except Exception:  # noqa: BLE001 - out of processes or memory, a broken interpreter: this job fails
            logger.exception("profscope: could not start a parser process")
            mine.close()
            theirs.close()
            return None
        finally:
            _spawning_worker.active = False
        theirs.close()
        worker = _Worker(process, mine)
        with self._lock:
            self._workers.append(worker)
        return worker

    def _receive(self, worker: _Worker) -> None:
        job = worker.job
        assert job is not None
        try:
            status, value = worker.conn.recv()
        except (EOFError, OSError):
            self._end_worker(worker, None)
            return
        with self._lock:
            worker.job = None
        if job.estimate > RECYCLE_AFTER_BYTES:
            self._retire(worker)
        if not job.future.cancelled():
            if status == "ok":
                job.future.set_result(value)
            else:
                job.future.set_exception(JobFailed(value))
        self._wake.set()

    def _end_worker(self, worker: _Worker, message: Optional[str]) -> None:
        """The worker's job fails with ``message`` (None: the worker died; say how); the worker and everything
        it forked are killed."""
        job = worker.job
        if message is None:
            worker.process.join(timeout=1)  # it closed its pipe or was seen dead: its exit code is there
            message = _death_message(worker.process.exitcode)
        self._retire(worker)
        if job is not None:
            _fail(job, message)

    def _retire(self, worker: _Worker) -> None:
        with self._lock:
            if worker in self._workers:
                self._workers.remove(worker)
            worker.job = None
        _stop_worker(worker)


def _fail(job: _Job, message: str) -> None:
    if not job.future.done():
        job.future.set_exception(JobFailed(message))


def _death_message(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            how = f"was killed ({signal.Signals(-exitcode).name})"
        except ValueError:
            how = f"was killed (signal {-exitcode})"
        if -exitcode == signal.SIGKILL:
            how += ", perhaps for lack of memory"
    else:
        how = f"stopped (exit code {exitcode})"
    return f"the parser process {how} while loading this trace; it is tried again when the file changes"


def _kill_group(process: Any) -> None:
    """SIGKILL a worker's process group (the worker and whatever it forked), or the worker alone."""
    pid = process.pid
    if pid is None:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (OSError, AttributeError):  # the group does not exist yet (or any more), or not POSIX
        try:
            process.kill()
        except (OSError, ValueError):
            pass


def _stop_worker(worker: _Worker) -> None:
    _kill_group(worker.process)
    try:
        worker.conn.close()
    except OSError:
        pass
    try:
        worker.process.join(timeout=5)
    except (OSError, ValueError, AssertionError):
        pass


_live_pools: "weakref.WeakSet[ParserPool]" = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    """Workers are not daemons (they fork): stop them before multiprocessing's exit handler waits for them."""
    for pool in list(_live_pools):
        pool.shutdown()
