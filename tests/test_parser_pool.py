"""The parser pool: a killed or stalled parse fails its own span only, leaves no process behind and is tried
again when its file changes; parses share a memory budget; a cache that cannot be written still serves spans."""

from __future__ import annotations

import importlib.util
import logging
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import psutil
import pytest

from profscope.tb_plugin.store import parser_pool
from profscope.tb_plugin.ingest import footprint
from profscope.tb_plugin.ingest.chrome import parallel
from profscope.tb_plugin.store.parser_pool import JobFailed, ParserPool
from profscope.tb_plugin.store.runs import RunManager

from conftest import REPO, copy_trace, real_trace, wait_for

SMALL = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"
SEED = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"
SETTLE_S = 180.0


def _tracegen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("profscope_bench_tracegen", REPO / "bench" / "tracegen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def big_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plain trace just large enough that its parse forks the decode helper (ingest/chrome/parallel.py)."""
    tracegen = _tracegen()
    seed = tracegen.load_seed(real_trace(SEED))
    target_mb = parallel.MIN_PARALLEL_BYTES / 1e6 * 1.15
    out = tmp_path_factory.mktemp("big") / "worker0.1.pt.trace.json"
    tracegen.write_trace(seed, out, copies=tracegen.copies_for_target(seed, target_mb=target_mb))
    return out


def _place(src: Path, folder: Path) -> Path:
    return copy_trace(src, folder)


def _until(condition: Any, timeout: float, what: str) -> Any:
    return wait_for(condition, timeout, what, interval=0.02)


def _reloads_when_changed(manager: RunManager, path: Path, run: str) -> None:
    """The span of ``path`` is loaded again once the file changes, and is ready."""
    later = time.time() - 60
    os.utime(path, (later, later))
    assert manager.wait_until_settled(SETTLE_S)
    assert _runs(manager)[run]["status"] == "ready"


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _span_state(manager: RunManager, run: str) -> Any:
    return next(state for key, state in manager._spans.items() if key[0] == run)


def _runs(manager: RunManager) -> dict[str, dict[str, Any]]:
    return {run["name"]: run for run in manager.runs()}


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the decode helper is forked only on machines with 2+ cores")
def test_a_parser_killed_after_forking_its_helper_fails_its_span_alone(tmp_path: Path, big_trace: Path) -> None:
    logdir = tmp_path / "logdir"
    victim = _place(big_trace, logdir / "victim")
    _place(big_trace, logdir / "bystander")
    manager = RunManager(str(logdir), cache_dir=str(tmp_path / "cache"), max_workers=2, settle_seconds=0.0)
    try:
        manager.refresh()  # both parses start: two workers, one span each
        victim_job, bystander_job = _span_state(manager, "victim").job, _span_state(manager, "bystander").job
        assert victim_job is not None and bystander_job is not None
        pool = manager._pool
        assert pool is not None
        worker = _until(lambda: pool.pid_of(victim_job), 60, "the victim's parse to start")
        helper = _until(lambda: psutil.Process(worker).children(), 120, "the decode helper to be forked")[0].pid
        os.kill(worker, signal.SIGKILL)
        _until(lambda: victim_job.done(), 30, "the killed parse to end")
        assert manager.wait_until_settled(SETTLE_S)
        runs = _runs(manager)
        assert runs["victim"]["status"] == "error"
        assert "parser process was killed (SIGKILL" in runs["victim"]["error"]
        assert runs["bystander"]["status"] == "ready"  # parsed on, in its own worker
        _until(lambda: _gone(helper) and _gone(worker), 30, "the killed worker's helper to end")
        _reloads_when_changed(manager, victim, "victim")
    finally:
        pids = _stop(manager)
    assert pids and all(_gone(pid) for pid in pids)


def _stop(manager: RunManager) -> list[int]:
    """Stop the manager; returns the processes its pool had (workers and what they forked), to check they ended."""
    pids: list[int] = []
    if manager._pool is not None:
        for pid in manager._pool.worker_pids():
            pids.append(pid)
            try:
                pids.extend(child.pid for child in psutil.Process(pid).children(recursive=True))
            except psutil.Error:
                continue
    manager.stop()
    return pids


def test_a_parse_past_its_deadline_is_stopped_with_everything_it_forked(tmp_path: Path, big_trace: Path) -> None:
    logdir = tmp_path / "logdir"
    stalled = _place(big_trace, logdir / "stalled")
    _place(real_trace(SMALL), logdir / "small")
    manager = RunManager(str(logdir), cache_dir=str(tmp_path / "cache"), max_workers=2, settle_seconds=0.0,
                         parse_timeout_seconds=3.0)
    try:
        manager.refresh()
        job = _span_state(manager, "stalled").job
        assert manager._pool is not None and job is not None
        worker = _until(lambda: manager._pool.pid_of(job), 60, "the parse to start")
        _until(lambda: os.getpgid(worker) == worker, 30, "the worker to lead its process group")
        os.killpg(worker, signal.SIGSTOP)  # a parse that never ends (a stalled read, an endless loop)
        assert manager.wait_until_settled(SETTLE_S)
        runs = _runs(manager)
        assert "took longer than 3 s and was stopped" in runs["stalled"]["error"]
        assert runs["small"]["status"] == "ready"
        _until(lambda: _gone(worker), 30, "the stopped worker to be killed")
        manager.parse_timeout_seconds = None
        manager._pool.timeout_seconds = parser_pool.DEFAULT_PARSE_TIMEOUT_SECONDS
        _reloads_when_changed(manager, stalled, "stalled")
    finally:
        pids = _stop(manager)
    assert pids and all(_gone(pid) for pid in pids)


def test_parses_run_together_only_within_the_memory_budget(tmp_path: Path) -> None:
    logdir = tmp_path / "logdir"
    for run in ("a", "b", "c"):
        _place(real_trace(SMALL), logdir / run)
    # A budget below any one parse's estimate: each runs alone, one after the other.
    alone = RunManager(str(logdir), cache_dir=str(tmp_path / "cache_alone"), max_workers=3, settle_seconds=0.0,
                       parse_memory_bytes=1)
    try:
        deadline = time.monotonic() + SETTLE_S
        while any(s.status != "ready" for s in alone._spans.values()) or not alone._spans:
            assert time.monotonic() < deadline
            alone.refresh()
            assert alone._pool is None or alone._pool.active_jobs() <= 1
            time.sleep(0.05)
    finally:
        alone.stop()
    together = RunManager(str(logdir), cache_dir=str(tmp_path / "cache_together"), max_workers=3,
                          settle_seconds=0.0, parse_memory_bytes=1 << 40)
    try:
        together.refresh()
        assert len(together._in_flight) == 3
        assert together.wait_until_settled(SETTLE_S)
    finally:
        together.stop()


def test_pool_admission_and_address_space_cap() -> None:
    pool = ParserPool(max_workers=3, budget_bytes=300 << 20)
    try:
        assert pool.room_for(10 << 30)  # nothing runs: even a parse larger than the budget may start, alone
        first = pool.submit(time.sleep, (1.0,), 200 << 20)
        assert not pool.room_for(200 << 20) and pool.room_for(100 << 20) and not pool.room_for(10 << 30)
        assert first.result(timeout=60) is None
        assert pool.room_for(10 << 30)
        if sys.platform.startswith("linux"):  # RLIMIT_AS is enforced there
            with pytest.raises(JobFailed, match="not enough memory"):
                pool.submit(bytearray, (4 << 30,), 100 << 20).result(timeout=60)
        assert pool.submit(len, ("still works",), 1).result(timeout=60) == 11
    finally:
        pool.shutdown()


def test_footprint_estimates_from_the_gzip_trailer() -> None:
    mb = 1 << 20
    assert footprint.gzip_inflated_size(10 * mb, 150 * mb) == 150 * mb
    assert footprint.gzip_inflated_size(10 * mb, None) == 200 * mb
    # 240 MB of gzip holding 4.7 GB of JSON: the trailer wrapped around 4 GiB once.
    wrapped = int(4.7e9) - (1 << 32)
    assert footprint.gzip_inflated_size(240 * mb, wrapped) == int(4.7e9)
    # A small file whose ratio is low cannot have wrapped.
    assert footprint.gzip_inflated_size(1 * mb, 3 * mb) == 3 * mb
    assert footprint.estimate_file_parse_bytes(100, gzipped=False) == footprint.BASE_BYTES + 250
    # Beyond what may be decoded whole, the file is streamed: a byte of JSON costs less.
    whole = footprint.WHOLE_DOCUMENT_MAX_BYTES
    assert footprint.estimate_parse_bytes(whole + 1000) == footprint.BASE_BYTES + int(whole * 2.5) + 1000


@pytest.fixture
def unwritable_cache(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A cache folder whose writes fail: a full 64 KiB tmpfs where this user may mount one (a real
    ENOSPC), else a file size limit on the parser processes (a real EFBIG)."""
    folder = tmp_path / "cache"
    folder.mkdir()
    mounted = os.geteuid() == 0 and shutil.which("mount") is not None and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True).returncode == 0
    if mounted:
        try:
            with open(folder / "filler", "wb") as filler:
                while True:
                    filler.write(b"\0" * 4096)
                    filler.flush()
        except OSError:
            pass
        try:
            yield folder, "No space left on device"
        finally:
            subprocess.run(["umount", "-l", str(folder)], check=False)
        return
    import resource

    previous = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, previous[1]))  # inherited by the parser processes
    try:
        yield folder, "File too large"
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, previous)


def test_a_cache_that_cannot_be_written_still_serves_every_span(
        tmp_path: Path, unwritable_cache: tuple[Path, str], caplog: pytest.LogCaptureFixture) -> None:
    cache_dir, reason = unwritable_cache
    logdir = tmp_path / "logdir"
    for run in ("a", "b"):
        copy_trace(real_trace(SMALL), logdir / run)
    caplog.set_level(logging.WARNING, logger="profscope.tb_plugin.store.runs")
    manager = RunManager(str(logdir), cache_dir=str(cache_dir), settle_seconds=0.0)
    try:
        assert manager.cache.cache_dir == str(cache_dir)  # the folder exists and is writable: only writes fail
        assert manager.wait_until_settled(SETTLE_S)
        for run in ("a", "b"):
            model = manager.span(run, "worker0", None).model
            assert model.num_events > 0 and model.cache_path is None  # from memory
    finally:
        manager.stop()
    said = [r.getMessage() for r in caplog.records if "cannot be written" in r.getMessage()]
    assert len(said) == 1 and reason in said[0] and "kept in memory" in said[0]
    assert not [name for name in os.listdir(cache_dir) if name.startswith(".tmp-")]


def test_a_worker_does_not_run_the_servers_main_script_again(tmp_path: Path) -> None:
    """multiprocessing's spawn runs the parent's main script in the child (TensorBoard's: 0.39 s of every worker's
    start); the pool's workers leave it out, and a process the server spawns otherwise still gets it."""
    script = tmp_path / "server_main.py"
    script.write_text(
        "import multiprocessing, os, sys\n"
        "print('main script ran as', __name__, flush=True)\n"
        "def other_child():\n"
        "    pass\n"
        "if __name__ == '__main__':\n"
        "    from profscope.tb_plugin.store.parser_pool import ParserPool\n"
        "    pool = ParserPool(1)\n"
        "    print('job in', pool.submit(os.getpid, (), 1).result(timeout=120) != os.getpid(), flush=True)\n"
        "    pool.shutdown()\n"
        "    child = multiprocessing.get_context('spawn').Process(target=other_child)\n"
        "    child.start()\n"
        "    child.join()\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["main script ran as __main__", "job in True",
                                        "main script ran as __mp_main__"]  # the other child only


def _in_heap(address: int) -> bool:
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith("[heap]"):
                low, high = (int(part, 16) for part in line.split()[0].split("-"))
                if low <= address < high:
                    return True
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="glibc's heap on Linux")
def test_a_parse_job_takes_large_blocks_from_the_heap_and_stops_after() -> None:
    import numpy as np

    size = 64 << 20  # above glibc's largest threshold for a block mapped on its own (32 MB)
    with parser_pool.reused_heap():
        inside = np.ones(size, dtype=np.uint8)
        assert _in_heap(inside.ctypes.data)
        del inside
    after = np.ones(size, dtype=np.uint8)
    assert not _in_heap(after.ctypes.data)
