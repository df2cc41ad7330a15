"""profscope.writer: file names, manifest contents, atomicity, default names, CPU sampling, torch integration,
and the plugin showing what the writer recorded (host CPU, batch size, tags)."""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from profscope.tb_plugin import layout
from profscope.writer import (
    MANIFEST_FORMAT,
    Manifest,
    ProfscopeWriter,
    default_run_name,
    default_worker_name,
    parse_manifest,
    trace_handler,
)
from profscope.writer import _atomic, cpu_sampler, span_writer
from profscope.writer.cpu_sampler import CpuReading, CpuSampler, read_proc_stat, summarise_window

from conftest import copy_trace, real_trace

SMALL_TRACE = {
    "schemaVersion": 1,
    "traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10.5, "dur": 3.25},
        {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 15.0, "dur": 1.0},
    ],
    "traceName": "fake",
}


class FakeProfiler:
    """Stands in for torch.profiler.profile: only ``export_chrome_trace`` is used."""

    def __init__(self, payload: bytes, fail_after: Optional[int] = None) -> None:
        self.payload = payload
        self.fail_after = fail_after
        self.exported_to: list[str] = []

    def export_chrome_trace(self, path: str) -> None:
        self.exported_to.append(path)
        with open(path, "wb") as out:
            if self.fail_after is not None:
                out.write(self.payload[: self.fail_after])
                raise RuntimeError("export failed half-way")
            out.write(self.payload)


def trace_bytes(seed: int = 0) -> bytes:
    trace = json.loads(json.dumps(SMALL_TRACE))
    trace["traceEvents"][0]["dur"] += seed
    return json.dumps(trace, indent=1).encode()


def asset_dir(logdir: Path, run: str) -> Path:
    return logdir.joinpath(run, *layout.ASSET_DIR)


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def read_manifest(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


# --- file names and manifest ------------------------------------------------------------


def test_span_is_written_with_layout_names_and_exact_trace_bytes(tmp_path: Path) -> None:
    payload = trace_bytes()
    writer = trace_handler(
        tmp_path, run="exp1", worker="w0", batch_size=16, tags={"lr": 0.5, "opt": "sgd"}, cpu_sample_interval=None
    )
    before_ns = time.time_ns()
    writer(FakeProfiler(payload))
    after_ns = time.time_ns()

    folder = asset_dir(tmp_path, "exp1")
    assert len(writer.spans) == 1
    span = writer.spans[0].span
    assert before_ns <= int(span) <= after_ns
    trace_name = layout.writer_trace_name("w0", span, "pytorch")
    manifest_name = layout.writer_manifest_name("w0", span)
    assert files_in(folder) == sorted([trace_name, manifest_name])

    parsed = layout.parse_writer_trace_name(trace_name)
    assert parsed is not None and (parsed.worker, parsed.span, parsed.framework, parsed.gzipped) == (
        "w0",
        span,
        "pytorch",
        True,
    )
    assert layout.parse_manifest_name(manifest_name) == ("w0", span)
    assert gzip.decompress((folder / trace_name).read_bytes()) == payload

    manifest = read_manifest(folder / manifest_name)
    assert manifest == {
        "format": MANIFEST_FORMAT,
        "worker": "w0",
        "span": span,
        "framework": "pytorch",
        "framework_version": manifest["framework_version"],  # torch's version when torch is imported
        "profscope_version": manifest["profscope_version"],
        "trace_file": trace_name,
        "wall_time": pytest.approx(int(span) / 1e9),
        "step_range": None,  # the fake profiler has no schedule
        "batch_size": 16,
        "samples": None,  # no step range, so no sample count
        "tags": {"lr": 0.5, "opt": "sgd"},
    }
    assert isinstance(manifest["profscope_version"], str) and manifest["profscope_version"]
    assert abs(manifest["wall_time"] - time.time()) < 60


def test_spans_increase_and_updates_apply_to_later_spans(tmp_path: Path) -> None:
    writer = ProfscopeWriter(tmp_path, "exp", "w", batch_size=8)
    writer(FakeProfiler(trace_bytes(1)))
    writer.set_batch_size(32)
    writer.tags["phase"] = "second"
    writer.set_tags(epoch=2)
    writer(FakeProfiler(trace_bytes(2)))

    first, second = writer.spans
    assert int(first.span) < int(second.span)
    assert layout.span_sort_key(first.span) < layout.span_sort_key(second.span)
    assert read_manifest(first.manifest_path)["batch_size"] == 8
    assert read_manifest(first.manifest_path)["tags"] == {}
    later = read_manifest(second.manifest_path)
    assert later["batch_size"] == 32
    assert later["tags"] == {"phase": "second", "epoch": 2}
    assert gzip.decompress(second.trace_path.read_bytes()) == trace_bytes(2)


def test_span_names_stay_unique_when_the_clock_repeats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(span_writer.time, "time_ns", lambda: 1_700_000_000_000_000_000)
    writer = ProfscopeWriter(tmp_path, "exp", "w")
    for seed in range(3):
        writer(FakeProfiler(trace_bytes(seed)))
    assert [s.span for s in writer.spans] == [str(1_700_000_000_000_000_000 + i) for i in range(3)]
    # A second writer with the same worker name does not overwrite the first one's spans.
    other = ProfscopeWriter(tmp_path, "exp", "w")
    other(FakeProfiler(trace_bytes(9)))
    assert other.spans[0].span == str(1_700_000_000_000_000_003)
    assert len(files_in(asset_dir(tmp_path, "exp"))) == 8


def test_manifest_round_trips_and_rejects_bad_documents() -> None:
    manifest = Manifest(
        worker="rank0",
        span="123",
        framework="pytorch",
        framework_version="2.13.0",
        profscope_version="0.1.0",
        trace_file="rank0.123.pytorch.trace.json.gz",
        wall_time=1.5,
        step_range=(2, 4),
        batch_size=10,
        tags={"a": "b"},
    )
    document = json.loads(manifest.to_json_bytes())
    assert document["samples"] == 30
    assert document["step_range"] == [2, 4]
    assert parse_manifest(manifest.to_json_bytes()) == manifest
    for bad in (
        b"not json",
        b"[]",
        json.dumps({**document, "format": 2}).encode(),
        json.dumps({**document, "step_range": [4, 2]}).encode(),
        json.dumps({**document, "tags": {"a": [1]}}).encode(),
        json.dumps({**document, "wall_time": "now"}).encode(),
    ):
        with pytest.raises(ValueError):
            parse_manifest(bad)


def test_bad_tags_and_batch_sizes_are_refused_early(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        ProfscopeWriter(tmp_path, "exp", "w", tags={"flag": True})
    with pytest.raises(TypeError):
        ProfscopeWriter(tmp_path, "exp", "w", tags={"x": float("nan")})
    with pytest.raises(ValueError):
        ProfscopeWriter(tmp_path, "exp", "w", batch_size=0)
    writer = ProfscopeWriter(tmp_path, "exp", "w")
    with pytest.raises(ValueError):
        writer.set_batch_size(-1)
    with pytest.raises(TypeError):
        writer.set_tags(items=[1, 2])


def test_a_bad_tag_set_through_the_dict_is_written_as_text(tmp_path: Path) -> None:
    writer = ProfscopeWriter(tmp_path, "exp", "w")
    writer.tags["shape"] = (3, 4)  # type: ignore[assignment]
    with pytest.warns(UserWarning, match="shape"):
        writer(FakeProfiler(trace_bytes()))
    assert read_manifest(writer.spans[0].manifest_path)["tags"] == {"shape": "(3, 4)"}


# --- atomicity ----------------------------------------------------------------------


def test_trace_is_renamed_into_place_before_the_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    renamed: list[tuple[str, list[str]]] = []
    real_replace = os.replace

    def recording_replace(src: Any, dst: Any) -> None:
        assert Path(src).name.startswith(layout.TEMP_PREFIX)
        assert Path(src).parent == Path(dst).parent  # same folder, so the rename is atomic
        real_replace(src, dst)
        visible = [n for n in files_in(Path(dst).parent) if not n.startswith(layout.TEMP_PREFIX)]
        renamed.append((Path(dst).name, visible))

    monkeypatch.setattr(_atomic.os, "replace", recording_replace)
    writer = ProfscopeWriter(tmp_path, "exp", "w")
    writer(FakeProfiler(trace_bytes()))
    span = writer.spans[0]
    assert renamed == [
        (span.trace_path.name, [span.trace_path.name]),
        (span.manifest_path.name, sorted([span.trace_path.name, span.manifest_path.name])),
    ]
    assert not [n for n in files_in(span.trace_path.parent) if n.startswith(layout.TEMP_PREFIX)]


def test_a_failed_export_leaves_nothing(tmp_path: Path) -> None:
    writer = ProfscopeWriter(tmp_path, "exp", "w")
    with pytest.raises(RuntimeError, match="half-way"):
        writer(FakeProfiler(trace_bytes(), fail_after=20))
    assert files_in(asset_dir(tmp_path, "exp")) == []
    assert writer.spans == []


def test_a_failure_while_compressing_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_gzip(source: Path, out: Any, mtime: int = 0) -> None:
        out.write(b"\x1f\x8b partial bytes")
        raise OSError("No space left on device")

    monkeypatch.setattr(span_writer, "gzip_file_into", failing_gzip)
    writer = ProfscopeWriter(tmp_path, "exp", "w")
    with pytest.raises(OSError, match="No space"):
        writer(FakeProfiler(trace_bytes()))
    assert files_in(asset_dir(tmp_path, "exp")) == []


def test_a_failure_writing_the_manifest_removes_the_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_replace = os.replace

    def failing_for_manifests(src: Any, dst: Any) -> None:
        if str(dst).endswith(layout.MANIFEST_SUFFIX):
            raise OSError("simulated crash before the manifest rename")
        real_replace(src, dst)

    monkeypatch.setattr(_atomic.os, "replace", failing_for_manifests)
    writer = ProfscopeWriter(tmp_path, "exp", "w")
    with pytest.raises(OSError, match="simulated"):
        writer(FakeProfiler(trace_bytes()))
    assert files_in(asset_dir(tmp_path, "exp")) == []


def test_new_files_follow_the_umask(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        writer = ProfscopeWriter(tmp_path, "exp", "w")
        writer(FakeProfiler(trace_bytes()))
    finally:
        os.umask(old_umask)
    span = writer.spans[0]
    if os.name == "posix":
        assert span.trace_path.stat().st_mode & 0o777 == 0o644
        assert span.manifest_path.stat().st_mode & 0o777 == 0o644


# --- host CPU utilization ---------------------------------------------------------------

MS = 1_000_000  # ns


def reading(ms: float, process_ms: float, busy: Optional[float] = None, total: Optional[float] = None) -> CpuReading:
    return CpuReading(int(ms * MS), int(process_ms * MS), busy, total)


def test_cpu_window_is_summarised_from_the_counters_and_cut_between_readings() -> None:
    # 0-100 ms: process half a CPU, system 10 of 20 ticks busy; 100-200: 1 CPU, 20/20; 200-300: idle, 0/20.
    readings = [reading(0, 0, 0, 0), reading(100, 50, 10, 20), reading(200, 150, 30, 40), reading(300, 150, 30, 60)]
    summary = summarise_window(readings, 50 * MS, 250 * MS, interval=0.1, wall_offset_ns=1_000 * 10**9, cpu_count=4)
    assert summary is not None
    # By hand over [50, 250] ms: process 25 + 100 + 0 = 125 ms of CPU in 200 ms; system (5 + 20 + 0) / 40 ticks.
    assert summary["process"] == 0.625 and summary["system"] == 0.625
    assert (summary["process_max"], summary["system_max"]) == (1.0, 1.0)
    assert (summary["start"], summary["duration"], summary["cpu_count"]) == (1000.05, 0.2, 4)
    assert summary["samples"] == {"time": [0.0, 0.05, 0.15], "process": [0.5, 1.0, 0.0], "system": [0.5, 1.0, 0.0]}
    assert summary["source"] == "proc_stat"
    # A window reaching past the readings is cut to them; one before them has nothing.
    assert summarise_window(readings, -MS, 900 * MS, interval=0.1, wall_offset_ns=0)["duration"] == 0.3
    assert summarise_window(readings, -9 * MS, -MS, interval=0.1, wall_offset_ns=0) is None
    assert summarise_window(readings[:1], 0, MS, interval=0.1, wall_offset_ns=0) is None


def test_readings_too_close_to_tell_anything_are_merged_into_their_neighbours() -> None:
    # The handler's own reading 0.1 ms after the thread's, with no system tick between: no interval of its own.
    readings = [reading(0, 0, 0, 0), reading(100, 50, 10, 20), reading(100.1, 50.1, 10, 20), reading(200, 150, 30, 40)]
    summary = summarise_window(readings, 0, 200 * MS, interval=0.1, wall_offset_ns=0)
    assert summary is not None
    assert summary["samples"] == {"time": [0.0, 0.1], "process": [0.5, 1.0], "system": [0.5, 1.0]}
    assert (summary["process"], summary["system"]) == (0.75, 0.75)
    # A window too short for any tick has no system figure, but still the process one.
    short = summarise_window(readings, int(100.02 * MS), int(100.08 * MS), interval=0.1, wall_offset_ns=0)
    assert short is not None and short["system"] is None and short["samples"]["system"] is None
    assert short["process"] == 1.0


def test_a_long_cpu_series_is_merged_exactly_to_its_bound() -> None:
    # 1000 readings 10 ms apart; the process alternates between 0 and 1 CPU each interval.
    readings, used = [], 0.0
    for i in range(1000):
        readings.append(reading(i * 10, used))
        used += 10 if i % 2 == 0 else 0
    summary = summarise_window(readings, 0, 999 * 10 * MS, interval=0.01, wall_offset_ns=0, max_points=100)
    assert summary is not None and summary["source"] == "process_time" and summary["system"] is None
    samples = summary["samples"]
    assert len(samples["time"]) == len(samples["process"]) == 100 and samples["system"] is None
    assert summary["process"] == round(500 / 999, 3)  # 500 busy intervals of 999
    assert summary["process_max"] == 1.0  # at the readings' own resolution
    # Merged intervals hold the exact CPU time of what they merge.
    edges = samples["time"] + [summary["duration"]]
    merged_cpu = sum(p * (b - a) for p, a, b in zip(samples["process"], edges, edges[1:]))
    assert merged_cpu == pytest.approx(summary["process"] * summary["duration"], rel=0.01)


def test_proc_stat_busy_and_total_ticks(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text("cpu  100 5 50 800 40 3 2 1 7 0\ncpu0 50 2 25 400 20 1 1 0 3 0\n")
    assert read_proc_stat(str(stat)) == (161.0, 1001.0)  # guest time is already in user time
    assert read_proc_stat(str(tmp_path / "missing")) is None
    stat.write_text("intr 1 2 3\n")
    assert read_proc_stat(str(stat)) is None


def test_the_sampler_thread_reads_until_stopped() -> None:
    sampler = CpuSampler(interval=0.02)
    sampler.start()
    began = time.perf_counter_ns()
    # Keep this process busy until the sampler has read a few times (a loaded machine may delay its thread).
    while (time.perf_counter_ns() - began < 300 * MS or len(sampler.readings()) < 6) \
            and time.perf_counter_ns() - began < 20_000 * MS:
        sum(range(1000))
    summary = sampler.summarise(began, time.perf_counter_ns())
    sampler.stop()
    assert not sampler.running
    count = len(sampler.readings())
    time.sleep(0.1)
    assert len(sampler.readings()) == count
    assert summary is not None and len(summary["samples"]["time"]) >= 5
    assert 0 < summary["process"] <= (os.cpu_count() or 1) * 1.05
    if os.path.exists(cpu_sampler.PROC_STAT):
        assert summary["source"] == "proc_stat" and 0 <= summary["system"] <= 1


def test_what_the_writer_adds_is_not_in_the_jobs_own_profile(tmp_path: Path) -> None:
    """torch's Python tracer (with_stack) records every thread alive while it records: nothing the writer runs
    in the job (CPU sampling, span analyses, the event file) may leave a frame there, in the first span or in
    the later ones (when the earlier spans are being analysed), while its readings still cover each span."""
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    # A job of its own, in a fresh interpreter: no thread of other tests may be alive while it records.
    job = """
import sys, time, torch
from profscope.writer import ProfscopeWriter
writer = ProfscopeWriter(sys.argv[1], "exp", "w", cpu_sample_interval=0.01)
model = torch.nn.Linear(32, 32)
batch = torch.randn(8, 32)
schedule = torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=3)
with torch.profiler.profile(schedule=schedule, on_trace_ready=writer, with_stack=True) as prof:
    for _ in range(6):
        for _ in range(5):
            model(batch).sum().backward()
        time.sleep(0.2)  # the sampler wakes several times per step, even on a loaded machine
        prof.step()
assert writer.flush(timeout=120)
writer.close()
"""
    subprocess.run([sys.executable, "-c", job, str(tmp_path)], check=True, capture_output=True, timeout=300)
    spans = sorted(asset_dir(tmp_path, "exp").glob("*.trace.json.gz"))
    assert len(spans) == 3
    for trace_path in spans:
        with gzip.open(trace_path) as trace:
            events = json.load(trace)["traceEvents"]
        frames = [e for e in events if e.get("cat") == "python_function"]
        assert frames, "with_stack recorded no Python frame at all: the test proves nothing"
        foreign = [e["name"] for e in frames if re.search(r"profscope|writer/|threading\.py|queue\.py|subprocess", e["name"])]
        assert not foreign, (trace_path.name, foreign[:8])
        job_threads = {e["tid"] for e in events if e.get("cat") in ("cpu_op", "python_function")}
        assert len(job_threads) == 1, job_threads  # the job's own thread only
        manifest_path = trace_path.parent / trace_path.name.replace(".pytorch.trace.json.gz", ".manifest.json")
        samples = read_manifest(manifest_path)["cpu_utilization"]["samples"]
        assert len(samples["time"]) >= 3
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    steps = [event.step for path in sorted((tmp_path / "exp").glob("events.out.tfevents.*"))
             for event in EventFileLoader(str(path)).Load()
             for value in event.summary.value if value.tag == "profscope/step_time_ms"]
    assert len(steps) == 3  # every span's scalars, computed in child processes, reached the event file


def test_cpu_sampling_options(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cpu_sample_interval"):
        ProfscopeWriter(tmp_path, "exp", "w", cpu_sample_interval=0.001)
    with pytest.raises(ValueError, match="cpu_sample_interval"):
        ProfscopeWriter(tmp_path, "exp", "w", cpu_sample_interval=float("nan"))
    off = ProfscopeWriter(tmp_path, "off", "w", cpu_sample_interval=None, event_file=False)
    off(FakeProfiler(trace_bytes()))
    assert "cpu_utilization" not in read_manifest(off.spans[0].manifest_path)
    on = ProfscopeWriter(tmp_path, "on", "w", cpu_sample_interval=0.05, event_file=False)
    assert on._cpu is not None and on._cpu.running
    on.close()
    assert not on._cpu.running
    on(FakeProfiler(trace_bytes()))  # a span after close() samples again
    assert on._cpu.running
    on.close()


def test_without_the_profilers_window_the_cpu_window_runs_from_the_previous_span(tmp_path: Path) -> None:
    clock = time.perf_counter_ns
    created = (clock(), ProfscopeWriter(tmp_path, "exp", "w", cpu_sample_interval=0.02, event_file=False), clock())
    writer = created[1]
    time.sleep(0.2)
    first_call = (clock(), writer(FakeProfiler(trace_bytes(1))), clock())  # a fake profiler says no window
    time.sleep(0.3)
    second_call = (clock(), writer(FakeProfiler(trace_bytes(2))), clock())
    writer.close()
    first, second = (read_manifest(s.manifest_path)["cpu_utilization"] for s in writer.spans)

    def within(duration: float, since: tuple[int, Any, int], until: tuple[int, Any, int]) -> bool:
        # The window starts inside the call `since` and ends inside the call `until`.
        return (until[0] - since[2]) / 1e9 - 1e-6 <= duration <= (until[2] - since[0]) / 1e9 + 1e-6

    assert within(first["duration"], created, first_call)  # from the start of sampling
    assert within(second["duration"], first_call, second_call)  # from the end of the previous span
    assert second["start"] == pytest.approx(first["start"] + first["duration"], abs=0.005)


# --- names --------------------------------------------------------------------------


def test_default_worker_is_host_and_pid_or_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANK", raising=False)
    # Outside a distributed job (torch.distributed, when imported, is not initialised here).
    worker = default_worker_name()
    assert worker.endswith(f"_{os.getpid()}")
    assert worker == layout.safe_component(worker)  # no dots or slashes
    assert worker.startswith(layout.safe_component(socket.gethostname())[:10])
    monkeypatch.setenv("RANK", "3")
    assert default_worker_name() == "rank3"


def test_default_worker_is_resolved_at_the_first_span(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANK", raising=False)
    writer = ProfscopeWriter(tmp_path, "exp")
    monkeypatch.setenv("RANK", "5")  # e.g. the process group was set up after the writer
    writer(FakeProfiler(trace_bytes()))
    assert writer.spans[0].worker == "rank5"
    assert writer.spans[0].trace_path.name.startswith("rank5.")


def test_given_worker_names_are_made_file_name_safe(tmp_path: Path) -> None:
    writer = ProfscopeWriter(tmp_path, "exp", "node1.example/gpu 0")
    writer(FakeProfiler(trace_bytes()))
    assert writer.spans[0].worker == "node1_example_gpu_0"
    assert read_manifest(writer.spans[0].manifest_path)["worker"] == "node1_example_gpu_0"


def test_default_run_is_date_time_and_host_or_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROFSCOPE_RUN", raising=False)
    name = default_run_name()
    assert re.fullmatch(r"\d{8}-\d{6}_[A-Za-z0-9_\-]+", name), name
    assert "." not in name
    writer = ProfscopeWriter(tmp_path)
    assert re.fullmatch(r"\d{8}-\d{6}_[A-Za-z0-9_\-]+", writer.run)
    monkeypatch.setenv("PROFSCOPE_RUN", "job42/attempt1")
    writer = ProfscopeWriter(tmp_path, worker="w")
    writer(FakeProfiler(trace_bytes()))
    assert writer.spans[0].trace_path.parent == asset_dir(tmp_path, "job42/attempt1")


@pytest.mark.parametrize("run", ["", ".", "..", "../up", "a/../b", "a//b", "/abs", "a/./b"])
def test_run_names_that_leave_or_alias_the_logdir_are_refused(tmp_path: Path, run: str) -> None:
    with pytest.raises(ValueError, match="run"):
        ProfscopeWriter(tmp_path, run, "w")


def test_nested_run_names_make_nested_folders(tmp_path: Path) -> None:
    writer = ProfscopeWriter(tmp_path, "group/exp1", "w")
    writer(FakeProfiler(trace_bytes()))
    assert writer.spans[0].trace_path.parent == tmp_path / "group" / "exp1" / "plugins" / "profscope"


def test_the_writer_and_cli_import_without_torch_or_tensorboard(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # any 'import torch' now fails\n"
        "import profscope.writer, profscope.tb_plugin.reports.cli\n"
        "loaded = sorted(m for m in ('torch', 'tensorboard', 'numpy') if sys.modules.get(m) is not None)\n"
        "assert not loaded, loaded\n"
        "class P:\n"
        "    def export_chrome_trace(self, path):\n"
        "        open(path, 'w').write('{\"traceEvents\": []}')\n"
        f"w = profscope.writer.trace_handler({str(tmp_path)!r}, 'r', 'w')\n"
        "w(P())\n"
        "print(w.spans[0].manifest.framework_version)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "None"


# --- with torch ---------------------------------------------------------------------


def profiler_steps_in(trace_path: Path) -> list[int]:
    document = json.loads(gzip.decompress(trace_path.read_bytes()))
    numbers = {
        int(event["name"].split("#", 1)[1])
        for event in document["traceEvents"]
        if isinstance(event.get("name"), str) and event["name"].startswith("ProfilerStep#")
    }
    return sorted(numbers)


def run_tiny_training(on_trace_ready: Callable[[Any], None], steps: int, **profile_args: Any) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], on_trace_ready=on_trace_ready, **profile_args
    ) as prof:
        for _ in range(steps):
            loss = model(torch.randn(4, 8)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step()


def test_real_torch_profiler_writes_two_spans_with_their_step_ranges(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    writer = trace_handler(tmp_path, run="torch_run", worker="trainer", batch_size=4, tags={"model": "mlp"})
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    run_tiny_training(writer, steps=8, schedule=schedule, record_shapes=True)

    assert len(writer.spans) == 2
    folder = asset_dir(tmp_path, "torch_run")
    assert len(files_in(folder)) == 4
    assert not [n for n in files_in(folder) if n.startswith(layout.TEMP_PREFIX)]
    ranges = []
    for span in writer.spans:
        manifest = read_manifest(span.manifest_path)
        assert manifest["framework_version"] == torch.__version__
        assert manifest["trace_file"] == span.trace_path.name
        # The manifest's step range is exactly the ProfilerStep#N set in the trace.
        steps_in_trace = profiler_steps_in(span.trace_path)
        first, last = manifest["step_range"]
        assert steps_in_trace == list(range(first, last + 1))
        assert manifest["samples"] == 4 * len(steps_in_trace)
        ranges.append((first, last))
    assert ranges == [(2, 3), (6, 7)]


def test_a_window_cut_short_by_leaving_the_profiler_gets_its_true_steps(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    writer = trace_handler(tmp_path, run="cut", worker="trainer")
    # Steps 0 wait, 1 warmup, 2.. active; leaving after 4 steps ends the window in step 4.
    run_tiny_training(writer, steps=4, schedule=torch.profiler.schedule(wait=1, warmup=1, active=5))
    (span,) = writer.spans
    first, last = read_manifest(span.manifest_path)["step_range"]
    assert profiler_steps_in(span.trace_path) == list(range(first, last + 1))
    assert first == 2


def test_without_a_schedule_the_step_range_is_unknown(tmp_path: Path) -> None:
    writer = trace_handler(tmp_path, run="plain", worker="trainer")
    run_tiny_training(writer, steps=2)
    (span,) = writer.spans
    assert read_manifest(span.manifest_path)["step_range"] is None
    document = json.loads(gzip.decompress(span.trace_path.read_bytes()))
    assert any(e.get("name") == "aten::addmm" for e in document["traceEvents"])


def test_worker_is_the_rank_when_torch_distributed_is_initialised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    import torch.distributed as dist

    if not dist.is_available():
        pytest.skip("torch.distributed is not available in this build")
    monkeypatch.delenv("RANK", raising=False)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1)
    try:
        assert default_worker_name() == "rank0"
    finally:
        dist.destroy_process_group()
    assert default_worker_name() != "rank0"


def test_a_torch_spans_cpu_window_is_the_profilers_recording_window(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    writer = trace_handler(tmp_path, run="cpu", worker="trainer", event_file=False, cpu_sample_interval=0.02)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
        on_trace_ready=writer,
    ) as prof:
        for _ in range(6):
            began = time.perf_counter()
            while time.perf_counter() - began < 0.05:
                torch.randn(64, 64) @ torch.randn(64, 64)
            prof.step()
    writer.close()
    (span,) = writer.spans
    cpu = read_manifest(span.manifest_path)["cpu_utilization"]
    document = json.loads(gzip.decompress(span.trace_path.read_bytes()))
    steps = [e for e in document["traceEvents"] if str(e.get("name", "")).startswith("ProfilerStep#")]
    recorded_us = max(e["ts"] + e["dur"] for e in steps) - min(e["ts"] for e in steps)
    # Three steps of at least 50 ms, and not the wait and warmup steps before them.
    assert recorded_us >= 150_000
    assert cpu["duration"] == pytest.approx(recorded_us / 1e6, abs=0.03)  # not the 100 ms of wait and warmup
    assert len(cpu["samples"]["time"]) >= 5
    assert 0 < cpu["process"] <= cpu["cpu_count"]


# --- the plugin shows what the writer recorded -----------------------------------------------

MLP_TRACE = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"


def test_the_overview_shows_the_spans_host_cpu_from_its_manifest(tmp_path: Path, make_client) -> None:
    from openapi_contract import check_schema
    from profscope.tb_plugin.views.overview import host_cpu

    payload = gzip.decompress(real_trace(MLP_TRACE).read_bytes())
    logdir = tmp_path / "logs"
    writer = ProfscopeWriter(logdir, "cpu", "w", batch_size=8, tags={"lr": 0.1}, event_file=False,
                             cpu_sample_interval=0.02)
    time.sleep(0.3)
    writer(FakeProfiler(payload))
    writer.close()
    manifest = read_manifest(writer.spans[0].manifest_path)
    cpu = manifest["cpu_utilization"]
    client = make_client(logdir)
    client.settle()

    status, answer = client.get("overview", run="cpu", worker="w")  # the worker's only span
    assert status == 200
    shown = answer["host_cpu"]
    assert shown == host_cpu(manifest)
    assert shown["duration"] == pytest.approx(cpu["duration"] * 1e6)
    assert shown["process"] == {"mean": cpu["process"], "max": cpu["process_max"]}
    assert shown["samples"]["time"] == [pytest.approx(t * 1e6) for t in cpu["samples"]["time"]]
    assert shown["samples"]["process"] == cpu["samples"]["process"]
    assert answer["benchmark"]["batch_size"] == 8
    check_schema(answer, "Overview")  # as every answer the test client receives (conftest.PluginClient.get)

    status, table = client.get("runs/table")
    assert status == 200
    (row,) = table["rows"]
    assert (row["batch_size"], row["tags"]) == (8, {"lr": 0.1})

    # The run list carries the manifest without the sample series (the overview has them).
    status, runs = client.get("runs")
    listed = runs["runs"][0]["workers"][0]["span_info"][0]["manifest"]
    assert "samples" not in listed["cpu_utilization"] and listed["cpu_utilization"]["process"] == cpu["process"]


def test_a_precomputed_overview_gets_the_host_cpu_of_a_manifest_that_came_later(tmp_path: Path, make_client) -> None:
    """The parser pool stores the overview per (marker, batch size); the CPU summary is added per request."""
    from profscope.tb_plugin.model import stored_answers

    logdir = tmp_path / "logs"
    folder = logdir.joinpath("late", *layout.ASSET_DIR)
    trace_name = layout.writer_trace_name("w", "1795303442092317655", "pytorch")
    copy_trace(real_trace(MLP_TRACE), folder, trace_name)  # old enough to load without its manifest
    client = make_client(logdir)
    client.settle()
    status, before = client.get("overview", run="late", worker="w")
    assert status == 200 and before["host_cpu"] is None
    model = client.plugin.manager.span("late", "w", "1795303442092317655").model
    assert stored_answers._stored(model).get(stored_answers._key_text(("overview", None, None))) is not None

    cpu = summarise_window([reading(0, 0, 0, 0), reading(100, 80, 10, 20)], 0, 100 * MS, interval=0.1,
                           wall_offset_ns=0, cpu_count=2)
    manifest = Manifest(worker="w", span="1795303442092317655", framework="pytorch", framework_version=None,
                        profscope_version="test", trace_file=trace_name, wall_time=1.0, cpu_utilization=cpu)
    (folder / layout.writer_manifest_name("w", "1795303442092317655")).write_bytes(manifest.to_json_bytes())
    client.plugin.manager.refresh()
    status, after = client.get("overview", run="late", worker="w")
    assert status == 200
    assert after["host_cpu"]["process"] == {"mean": 0.8, "max": 0.8}
    assert after["host_cpu"]["system"] == {"mean": 0.5, "max": 0.5}
    assert {k: v for k, v in after.items() if k != "host_cpu"} == {k: v for k, v in before.items() if k != "host_cpu"}


@pytest.mark.parametrize(
    "bad",
    [
        None,
        "busy",
        {"process": 0.5},  # no duration
        {"process": -1, "duration": 1.0},
        {"process": float("inf"), "duration": 1.0},
        {"process": 0.5, "duration": 0},
        {"process": 10**400, "duration": 1.0},
    ],
)
def test_a_malformed_cpu_record_shows_no_host_cpu(bad: Any) -> None:
    from profscope.tb_plugin.views.overview import host_cpu

    assert host_cpu({"cpu_utilization": bad}) is None


def test_malformed_cpu_samples_are_dropped_but_the_summary_stays() -> None:
    from profscope.tb_plugin.views.overview import HOST_CPU_MAX_POINTS, host_cpu

    good = {"process": 0.5, "system": 0.25, "duration": 0.2, "interval": 0.1, "cpu_count": 2,
            "samples": {"time": [0.0, 0.1], "process": [0.4, 0.6], "system": [0.2, 0.3]}}
    shown = host_cpu({"cpu_utilization": good})
    assert shown is not None and shown["samples"] == {"time": [0.0, 100000.0], "process": [0.4, 0.6],
                                                      "system": [0.2, 0.3]}
    assert (shown["duration"], shown["interval"], shown["cpu_count"]) == (200000.0, 100000.0, 2)
    for samples in (
        {"time": [0.0, 0.1], "process": [0.4]},  # lengths differ
        {"time": [0.1, 0.0], "process": [0.4, 0.6]},  # out of order
        {"time": [0.0, 5.0], "process": [0.4, 0.6]},  # beyond the span
        {"time": [0.0, 0.1], "process": [0.4, "x"]},
        {"time": [0.0, 0.1], "process": [0.4, 0.6], "system": [0.2, 1.5]},  # a share above 1
        {"time": [0.0] * (HOST_CPU_MAX_POINTS + 1), "process": [0.1] * (HOST_CPU_MAX_POINTS + 1)},
    ):
        shown = host_cpu({"cpu_utilization": {**good, "samples": samples}})
        assert shown is not None and shown["samples"] is None and shown["process"]["mean"] == 0.5
    assert host_cpu({"cpu_utilization": {**good, "system": 2.0}})["system"] is None
