"""profscope.writer's Paddle handler: files, manifest, step ranges, CPU window, and the plugin reading the spans.

PaddlePaddle's CPU wheel is about 195 MB to download and 720 MB installed, too big for the
test extras: most tests drive the handler with ``FakePaddleProfiler``, which follows
``paddle.profiler.Profiler``'s control flow (``step()`` → ``_trigger_action()`` →
``on_trace_ready``; ``stop()`` → ``on_trace_ready``) and its export API, and exports the real
Paddle 3.3.1 traces of tests/data/paddle. ``test_a_real_paddle_profiler...`` runs
Paddle itself when it is installed.
"""

from __future__ import annotations

import enum
import gzip
import json
import os
import re
import shutil
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest

from profscope.tb_plugin import layout
from profscope.writer import PaddleWriter, paddle_trace_handler
from profscope.writer.paddle_handler import recorded_window_us

from conftest import copy_trace, real_trace

LINEAR = "paddle/linear_sched_2_10/host_vmpid_23377_time_2026_11_21_23_22_29_386961.paddle_trace.json"
CNN_SPANS = (
    "paddle/cnn_multi_span/host_vmpid_23396_time_2026_11_21_23_22_33_378244.paddle_trace.json",
    "paddle/cnn_multi_span/host_vmpid_23396_time_2026_11_21_23_22_33_592455.paddle_trace.json",
)


class State(enum.Enum):
    """The names of ``paddle.profiler.ProfilerState``."""

    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


def make_scheduler(closed: int, ready: int, record: int, repeat: int = 0) -> Callable[[int], State]:
    """The schedule of ``paddle.profiler.make_scheduler`` (the last recorded step returns the data)."""

    def state(step: int) -> State:
        period = closed + ready + record
        if repeat > 0 and step // period >= repeat:
            return State.CLOSED
        position = step % period
        if position < closed:
            return State.CLOSED
        if position < closed + ready:
            return State.READY
        return State.RECORD if position < period - 1 else State.RECORD_AND_RETURN

    return state


def always_record(step: int) -> State:
    return State.RECORD  # Paddle's default scheduler


class FakePaddleProfiler:
    """``paddle.profiler.Profiler``'s control flow and export API; each returned window exports the
    next of ``traces`` (real Paddle output), as Paddle's ``export(path, "json")`` writes its trace."""

    def __init__(self, scheduler: Callable[[int], State], on_trace_ready: Callable[[Any], None],
                 traces: list[Path]) -> None:
        self.scheduler = scheduler
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.previous_state = State.CLOSED
        self.current_state = scheduler(0)
        self.profiler_result: Optional[Path] = None
        self._traces: Iterator[Path] = iter(traces)
        self.exports: list[tuple[str, str]] = []

    def __enter__(self) -> FakePaddleProfiler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def step(self, num_samples: Optional[int] = None) -> None:
        self.previous_state = self.current_state
        self.step_num += 1
        self.current_state = self.scheduler(self.step_num)
        self._trigger_action()

    def _trigger_action(self) -> None:
        if self.previous_state == State.RECORD_AND_RETURN:
            self.profiler_result = next(self._traces, None)
            self.on_trace_ready(self)

    def stop(self) -> None:
        if self.current_state in (State.RECORD, State.RECORD_AND_RETURN):
            self.profiler_result = next(self._traces, None)
            self.on_trace_ready(self)

    def export(self, path: str = "", format: str = "json") -> None:
        self.exports.append((path, format))
        if self.profiler_result is not None:  # like Paddle: no result, no file
            shutil.copyfile(self.profiler_result, path)


def run_steps(prof: FakePaddleProfiler, steps: int) -> None:
    with prof:
        for _ in range(steps):
            prof.step()


def profile_steps_in(trace_bytes: bytes) -> list[int]:
    return sorted({int(n) for n in re.findall(rb'"name": "ProfileStep#(\d+)', trace_bytes)})


def read_manifest(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


# --- files, manifest, step ranges -----------------------------------------------------------


def test_each_returned_window_is_a_span_with_paddles_trace_and_its_steps(tmp_path: Path) -> None:
    sources = [real_trace(name) for name in CNN_SPANS]
    writer = paddle_trace_handler(tmp_path, run="cnn", worker="trainer", batch_size=16, tags={"model": "cnn"},
                                  event_file=False)
    prof = FakePaddleProfiler(make_scheduler(closed=1, ready=1, record=4, repeat=2), writer, sources)
    run_steps(prof, 14)

    assert [fmt for _, fmt in prof.exports] == ["json", "json"]
    assert len(writer.spans) == 2
    folder = tmp_path.joinpath("cnn", *layout.ASSET_DIR)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        name for s in writer.spans for name in (s.trace_path.name, s.manifest_path.name)
    )
    for span, source in zip(writer.spans, sources):
        parsed = layout.parse_writer_trace_name(span.trace_path.name)
        assert parsed is not None and (parsed.worker, parsed.framework) == ("trainer", "paddle")
        trace = gzip.decompress(span.trace_path.read_bytes())
        assert trace == source.read_bytes()  # Paddle's export, unchanged
        manifest = read_manifest(span.manifest_path)
        assert manifest["framework"] == "paddle"
        assert manifest["trace_file"] == span.trace_path.name
        steps = profile_steps_in(trace)
        assert manifest["step_range"] == [steps[0], steps[-1]]
        assert manifest["samples"] == 16 * len(steps)
        assert manifest["tags"] == {"model": "cnn"}
    assert [read_manifest(s.manifest_path)["step_range"] for s in writer.spans] == [[2, 5], [8, 11]]


def test_a_tuple_schedule_gives_pythons_range_of_steps(tmp_path: Path) -> None:
    # Paddle's scheduler=(2, 10) is make_scheduler(closed=1, ready=1, record=8, repeat=1): steps 2..9.
    writer = PaddleWriter(tmp_path, "lin", "w", event_file=False)
    prof = FakePaddleProfiler(make_scheduler(closed=1, ready=1, record=8, repeat=1), writer, [real_trace(LINEAR)])
    run_steps(prof, 30)
    (span,) = writer.spans
    steps = profile_steps_in(gzip.decompress(span.trace_path.read_bytes()))
    assert read_manifest(span.manifest_path)["step_range"] == [steps[0], steps[-1]] == [2, 9]


def test_stopping_inside_a_window_ends_the_span_at_the_current_step(tmp_path: Path) -> None:
    writer = PaddleWriter(tmp_path, "cut", "w", event_file=False)
    prof = FakePaddleProfiler(always_record, writer, [real_trace(LINEAR)])
    run_steps(prof, 5)  # steps 0..4 end with step(); stop() ends step 5
    assert read_manifest(writer.spans[0].manifest_path)["step_range"] == [0, 5]


def test_a_handler_called_by_hand_has_no_step_range(tmp_path: Path) -> None:
    writer = PaddleWriter(tmp_path, "hand", "w", event_file=False)
    prof = FakePaddleProfiler(always_record, lambda p: None, [])
    prof.profiler_result = real_trace(LINEAR)
    writer(prof)
    assert read_manifest(writer.spans[0].manifest_path)["step_range"] is None


def test_an_export_that_writes_nothing_fails_and_leaves_nothing(tmp_path: Path) -> None:
    writer = PaddleWriter(tmp_path, "empty", "w", event_file=False)
    prof = FakePaddleProfiler(always_record, lambda p: None, [])  # no profiler result
    with pytest.raises(RuntimeError, match="exported no trace"):
        writer(prof)
    folder = tmp_path.joinpath("empty", *layout.ASSET_DIR)
    assert list(folder.iterdir()) == []
    assert writer.spans == []


def test_default_worker_is_paddles_trainer_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.setenv("PADDLE_TRAINER_ID", "3")
    writer = PaddleWriter(tmp_path, "ddp", event_file=False)
    prof = FakePaddleProfiler(always_record, lambda p: None, [])
    prof.profiler_result = real_trace(LINEAR)
    writer(prof)
    assert writer.spans[0].worker == "rank3"
    monkeypatch.delenv("PADDLE_TRAINER_ID")
    assert PaddleWriter(tmp_path, "solo", event_file=False).worker.endswith(f"_{os.getpid()}")


def test_batch_size_comes_from_paddles_step_num_samples_unless_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Paddle's benchmark timer keeps the num_samples of the last prof.step(num_samples=...).
    timer = types.ModuleType("paddle.profiler.timer")
    benchmark = types.SimpleNamespace(num_samples=24)
    timer.benchmark = lambda: benchmark  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "paddle.profiler.timer", timer)

    def one_span(writer: PaddleWriter) -> dict[str, Any]:
        prof = FakePaddleProfiler(always_record, lambda p: None, [])
        prof.profiler_result = real_trace(LINEAR)
        return read_manifest(writer.write(prof).manifest_path)

    writer = PaddleWriter(tmp_path, "bs", "w", event_file=False)
    assert one_span(writer)["batch_size"] == 24
    writer.set_batch_size(8)
    assert one_span(writer)["batch_size"] == 8
    benchmark.num_samples = None
    assert one_span(PaddleWriter(tmp_path, "bs2", "w", event_file=False))["batch_size"] is None


# --- CPU window --------------------------------------------------------------------------------


def test_the_cpu_window_is_the_recorded_steps_of_the_trace(tmp_path: Path) -> None:
    writer = PaddleWriter(tmp_path, "cpu", "w", event_file=False, cpu_sample_interval=0.02)
    time.sleep(0.5)  # readings from before the span
    # Steps 0 and 1, 150 ms each, the second ending 100 ms before the handler runs.
    start_us = time.time_ns() // 1000 - 400_000
    events = [
        {"name": f"ProfileStep#{n}[150.000 ms]", "ph": "X", "cat": "ProfileStep", "pid": 1, "tid": "1(Python)",
         "ts": start_us + n * 150_000, "dur": 150000.0}
        for n in (0, 1)
    ] + [{}]
    trace = tmp_path / "handmade.paddle_trace.json"
    trace.write_text(json.dumps({"schemaVersion": "1.0.2", "traceEvents": events}))
    assert recorded_window_us(trace, 1) == (start_us, start_us + 300_000)
    assert recorded_window_us(trace) == (start_us, None)  # the last step unknown: no end
    prof = FakePaddleProfiler(always_record, writer, [trace])
    with prof:
        prof.step()  # stop() ends step 1 and hands the window over
    (span,) = writer.spans
    manifest = read_manifest(span.manifest_path)
    writer.close()
    assert manifest["step_range"] == [0, 1]
    cpu = manifest["cpu_utilization"]
    assert cpu["start"] == pytest.approx(start_us / 1e6, abs=0.005)
    assert cpu["duration"] == pytest.approx(0.3, abs=0.005)
    assert cpu["samples"]["time"][0] == 0.0 and len(cpu["samples"]["time"]) >= 10  # 20 ms readings
    assert 0 <= cpu["process"] <= cpu["cpu_count"]


# --- the plugin reads the written spans ----------------------------------------------------------


def _without_host_cpu(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "host_cpu"}


def test_a_written_span_loads_in_the_plugin_and_matches_the_original_file(tmp_path: Path, make_client) -> None:
    source = real_trace(LINEAR)
    logdir = tmp_path / "logdir"
    copy_trace(source, logdir / "original")  # Paddle's own layout, read as it is
    writer = paddle_trace_handler(logdir, run="written", worker="trainer", batch_size=32, tags={"opt": "momentum"},
                                  event_file=False)
    run_steps(FakePaddleProfiler(make_scheduler(closed=1, ready=1, record=8, repeat=1), writer, [source]), 30)
    (span,) = writer.spans
    client = make_client(logdir)
    client.settle()

    _, runs = client.get("runs")
    by_name = {run["name"]: run for run in runs["runs"]}
    assert by_name["written"]["framework"] == "paddle" and by_name["written"]["status"] == "ready"
    assert [(w["name"], w["spans"]) for w in by_name["written"]["workers"]] == [("trainer", [span.span])]

    status, original = client.get("overview", run="original", worker="host_vmpid_23377")
    assert status == 200
    status, written = client.get("overview", run="written", worker="trainer", span=span.span)
    assert status == 200
    assert [s["name"] for s in written["steps"]] == [f"ProfileStep#{n}" for n in range(2, 10)]
    # Same trace, same answer; the writer's span also knows its batch size and CPU use.
    mean = written["mean_step_time"]
    assert written["benchmark"]["samples_per_second"] == pytest.approx(32 * 1e6 / mean)
    original["benchmark"]["batch_size"] = 32
    original["benchmark"]["samples_per_second"] = written["benchmark"]["samples_per_second"]
    assert _without_host_cpu(written) == _without_host_cpu(original)
    assert original["host_cpu"] is None and written["host_cpu"] is not None

    status, table = client.get("runs/table")
    assert status == 200
    (row,) = [r for r in table["rows"] if r["run"] == "written"]
    assert (row["framework"], row["batch_size"], row["tags"], row["steps"]) == ("paddle", 32, {"opt": "momentum"}, 8)


@pytest.mark.slow
def test_a_real_paddle_profiler_writes_spans_the_plugin_reads(tmp_path: Path, make_client) -> None:
    paddle = pytest.importorskip("paddle", reason="PaddlePaddle is not installed (pip install paddlepaddle==3.3.1)")
    import paddle.profiler as profiler

    logdir = tmp_path / "logdir"
    writer = paddle_trace_handler(logdir, run="real", worker="trainer", tags={"model": "mlp"}, event_file=False)
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(16, 32), paddle.nn.ReLU(), paddle.nn.Linear(32, 4))
    optimizer = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    with profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=(1, 4), on_trace_ready=writer) as prof:
        for _ in range(6):
            began = time.perf_counter()
            while time.perf_counter() - began < 0.1:  # steps long enough for CPU readings to mean something
                loss = model(paddle.randn([8, 16])).pow(2).mean()
                loss.backward()
                optimizer.step()
                optimizer.clear_grad()
            prof.step(num_samples=8)
    writer.close()

    (span,) = writer.spans
    manifest = read_manifest(span.manifest_path)
    trace = gzip.decompress(span.trace_path.read_bytes())
    steps = profile_steps_in(trace)
    assert steps == [1, 2, 3]
    assert manifest["step_range"] == [1, 3]
    assert manifest["framework_version"] == paddle.__version__
    assert manifest["batch_size"] == 8 and manifest["samples"] == 24
    # Paddle measures CPU utilization over the span too (the trace's ExtraInfo), from clock ticks.
    extra = json.loads(trace)["ExtraInfo"]
    cpu = manifest["cpu_utilization"]
    assert cpu["process"] == pytest.approx(float(extra["Process Cpu Utilization"]), abs=0.15)
    assert cpu["system"] == pytest.approx(float(extra["System Cpu Utilization"]), abs=0.15)
    steps_us = [e for e in json.loads(trace)["traceEvents"] if e.get("cat") == "ProfileStep"]
    recorded_s = (max(e["ts"] + e["dur"] for e in steps_us) - min(e["ts"] for e in steps_us)) / 1e6
    assert cpu["duration"] == pytest.approx(recorded_s, abs=0.005)

    client = make_client(logdir)
    client.settle()
    status, answer = client.get("overview", run="real", worker="trainer")
    assert status == 200
    assert [s["name"] for s in answer["steps"]] == ["ProfileStep#1", "ProfileStep#2", "ProfileStep#3"]
    assert answer["host_cpu"]["process"]["mean"] == manifest["cpu_utilization"]["process"]
