"""TensorBoard event files of the writer and of `profscope import`: span records and performance scalars.

Event files are read back with TensorBoard's own reader (``EventFileLoader``); expected
values are computed here from the span's trace with the overview and memory views.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import pytest
from tensorboard.backend.event_processing import data_provider as tb_data_provider
from tensorboard.backend.event_processing import plugin_event_multiplexer
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.compat.proto import summary_pb2
from tensorboard.plugins import base_plugin
from tensorboard.util import tensor_util

from profscope.tb_plugin.reports import cli
from profscope.tb_plugin import layout
from profscope.tb_plugin.server import provider_runs
from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.server.plugin import ProfscopePlugin
from profscope.tb_plugin.reports.span_scalars import span_scalars
from profscope.tb_plugin.views.memory import memory
from profscope.tb_plugin.views.overview import overview
from profscope.writer import ProfscopeWriter, WrittenSpan, trace_handler
from profscope.writer.events import is_primary_worker

import handmade
from conftest import real_trace

EVENT_FILE_GLOB = "events.out.tfevents.*.profscope"
BATCH_SIZE = 4


# --- reading event files back ------------------------------------------------------------


@dataclass
class RunEvents:
    """What the event files of one run folder hold, by tag."""

    points: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # scalar tag → (step, value)
    records: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)  # span tag → (step, content)
    plugin_of: dict[str, str] = field(default_factory=dict)
    data_class_of: dict[str, int] = field(default_factory=dict)
    record_values: list[dict[str, Any]] = field(default_factory=list)


def read_run_events(run_folder: Path) -> RunEvents:
    files = sorted(run_folder.glob(EVENT_FILE_GLOB))
    assert files, f"no event file in {run_folder}"
    events = RunEvents()
    for path in files:
        for event in EventFileLoader(str(path)).Load():
            for value in event.summary.value:
                plugin = value.metadata.plugin_data.plugin_name
                events.plugin_of.setdefault(value.tag, plugin)
                events.data_class_of.setdefault(value.tag, value.metadata.data_class)
                if plugin == layout.PLUGIN_NAME:
                    content = json.loads(value.metadata.plugin_data.content)
                    events.records.setdefault(value.tag, []).append((event.step, content))
                    events.record_values.append(json.loads(tensor_util.make_ndarray(value.tensor).item()))
                else:
                    number = float(tensor_util.make_ndarray(value.tensor).item())
                    events.points.setdefault(value.tag, []).append((event.step, number))
    return events


def expected_scalars(trace_path: Path, batch_size: Optional[int]) -> dict[str, float]:
    """The scalars of a span, from the views themselves (not from span_scalars)."""
    model = load_trace(str(trace_path))
    result = overview(model, batch_size=batch_size)
    mean_us = result["mean_step_time"]
    expected = {"profscope/step_time_ms": mean_us / 1000.0}
    expected.update({f"profscope/breakdown/{c}": result["breakdown"][c] / mean_us for c in result["categories"]})
    if result["devices"]:
        expected["profscope/gpu_utilization"] = sum(d["utilization"] for d in result["devices"]) / len(result["devices"])
    if batch_size:
        expected["profscope/samples_per_second"] = batch_size * 1e6 / mean_us
    for device, peak in memory(model)["peak"].items():
        expected[f"profscope/peak_memory_bytes/{device}"] = float(peak["allocated"])
    return expected


def as_float32(value: float) -> Any:
    # Scalars are stored as 32-bit floats, as TensorBoard's own summaries are.
    return pytest.approx(value, rel=1e-6, abs=1e-12)


# --- spans to write ----------------------------------------------------------------------


class FakeProfiler:
    """Stands in for torch.profiler.profile (no schedule, so spans have no step range)."""

    def __init__(self, document: Any) -> None:
        self.payload = json.dumps(document).encode()

    def export_chrome_trace(self, path: str) -> None:
        Path(path).write_bytes(self.payload)


@dataclass(frozen=True)
class TorchRun:
    run_folder: Path
    worker: str
    spans: list[WrittenSpan]


def profile_tiny_training(writer: Callable[[Any], None], windows: int = 3) -> None:
    """A small MLP trained under torch.profiler: ``windows`` spans of 2 steps each."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=windows)
    with warnings.catch_warnings():
        # torch warns that each window starts afresh, which is what these spans are for.
        warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle.*")
        with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule, on_trace_ready=writer,
            record_shapes=True, profile_memory=True,
        ) as prof:
            for _ in range(4 * windows):
                loss = model(torch.randn(BATCH_SIZE, 8)).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                prof.step()


@pytest.fixture(scope="module")
def torch_run(tmp_path_factory: pytest.TempPathFactory) -> TorchRun:
    logdir = tmp_path_factory.mktemp("events-logdir")
    writer = trace_handler(logdir, run="group/mlp", worker="trainer", batch_size=BATCH_SIZE)
    profile_tiny_training(writer)
    assert writer.close(timeout=120), "the scalars were not written in time"
    return TorchRun(logdir / "group" / "mlp", "trainer", list(writer.spans))


# --- the writer ----------------------------------------------------------------------------


def test_three_spans_give_three_span_records_with_the_plugin_metadata(torch_run: TorchRun) -> None:
    assert len(torch_run.spans) == 3
    assert len(list(torch_run.run_folder.glob(EVENT_FILE_GLOB))) == 1
    events = read_run_events(torch_run.run_folder)
    tag = f"profscope/spans/{torch_run.worker}"
    assert list(events.records) == [tag]
    assert events.plugin_of[tag] == "profscope"
    assert events.data_class_of[tag] == summary_pb2.DATA_CLASS_TENSOR

    step_ends = [span.manifest.step_range[1] for span in torch_run.spans if span.manifest.step_range]
    assert step_ends == [3, 7, 11]  # wait 1, warmup 1, active 2: steps 2-3, 6-7, 10-11
    records = events.records[tag]
    assert [step for step, _ in records] == step_ends
    for (_, content), value, span in zip(records, events.record_values, torch_run.spans):
        assert content == value == {
            "version": 1,
            "worker": torch_run.worker,
            "span": span.span,
            "trace_file": f"plugins/profscope/{span.trace_path.name}",
        }
        assert (torch_run.run_folder / content["trace_file"]).resolve() == span.trace_path.resolve()


def test_three_spans_give_three_points_per_scalar_equal_to_the_views(torch_run: TorchRun) -> None:
    events = read_run_events(torch_run.run_folder)
    expected = [expected_scalars(span.trace_path, BATCH_SIZE) for span in torch_run.spans]
    assert set(events.points) == set(expected[0])
    assert "profscope/gpu_utilization" not in events.points  # a CPU run
    assert {"profscope/step_time_ms", "profscope/samples_per_second", "profscope/peak_memory_bytes/cpu",
            "profscope/breakdown/cpu_exec"} <= set(events.points)
    for tag, points in events.points.items():
        assert events.plugin_of[tag] == "scalars"
        assert events.data_class_of[tag] == summary_pb2.DATA_CLASS_SCALAR
        assert [step for step, _ in points] == [3, 7, 11], tag
        assert [value for _, value in points] == [as_float32(e[tag]) for e in expected], tag
    for index in range(3):
        shares = sum(v[index][1] for t, v in events.points.items() if t.startswith("profscope/breakdown/"))
        assert shares == pytest.approx(1.0, rel=1e-5)


def test_flush_writes_the_scalars_and_steps_count_spans_without_a_schedule(tmp_path: Path) -> None:
    document = handmade.gpu_step_trace()
    writer = ProfscopeWriter(tmp_path, "gpu", "w", batch_size=8)
    for _ in range(3):
        writer(FakeProfiler(document))
    assert writer.flush(timeout=120)
    events = read_run_events(tmp_path / "gpu")
    expected = expected_scalars(writer.spans[0].trace_path, 8)
    assert "profscope/gpu_utilization" in expected and "profscope/breakdown/kernel" in expected
    assert set(events.points) == set(expected)
    for tag, points in events.points.items():
        assert points == [(step, as_float32(expected[tag])) for step in (0, 1, 2)], tag
    assert events.points["profscope/peak_memory_bytes/gpu0"][0][1] == 512.0  # the trace's one allocation
    assert writer.close(timeout=60)


def test_the_last_spans_scalars_are_written_when_the_process_exits(tmp_path: Path) -> None:
    trace = handmade.write(tmp_path / "trace.json", handmade.gpu_step_trace())
    code = (
        "import sys\n"
        "import profscope.writer\n"
        "class P:\n"
        "    def export_chrome_trace(self, path):\n"
        f"        open(path, 'wb').write(open({str(trace)!r}, 'rb').read())\n"
        f"w = profscope.writer.trace_handler({str(tmp_path / 'logs')!r}, 'r', 'w')\n"
        "w(P()); w(P())\n"
        "# no flush() or close(): the writer's exit handler waits for the analyses\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180)
    assert result.returncode == 0, result.stderr
    events = read_run_events(tmp_path / "logs" / "r")
    assert [step for step, _ in events.points["profscope/step_time_ms"]] == [0, 1]
    assert [step for step, _ in events.records["profscope/spans/w"]] == [0, 1]


@pytest.mark.filterwarnings("ignore:profscope. no performance scalars:RuntimeWarning")
def test_a_span_that_cannot_be_analysed_keeps_its_record_and_gets_no_scalars(tmp_path: Path) -> None:
    writer = ProfscopeWriter(tmp_path, "bad", "w")
    writer(FakeProfiler({"traceEvents": "not a list"}))
    writer(FakeProfiler(handmade.gpu_step_trace()))
    assert writer.close(timeout=120)
    events = read_run_events(tmp_path / "bad")
    assert [step for step, _ in events.records["profscope/spans/w"]] == [0, 1]
    assert [step for step, _ in events.points["profscope/step_time_ms"]] == [1]


def test_ranks_above_zero_write_their_scalars_under_their_own_tags(tmp_path: Path) -> None:
    for worker in ("rank0", "rank1"):
        writer = ProfscopeWriter(tmp_path, "ddp", worker)
        writer(FakeProfiler(handmade.gpu_step_trace()))
        assert writer.close(timeout=120)
    events = read_run_events(tmp_path / "ddp")
    assert set(events.records) == {"profscope/spans/rank0", "profscope/spans/rank1"}
    assert "profscope/step_time_ms" in events.points and "profscope/rank1/step_time_ms" in events.points
    assert not [tag for tag in events.points if tag.startswith("profscope/rank0/")]


def test_which_worker_writes_the_plain_tags() -> None:
    assert is_primary_worker("rank0") and is_primary_worker("host_123")
    assert not is_primary_worker("rank1") and not is_primary_worker("rank12")
    assert is_primary_worker("rank10x")  # not a rank name
    # Several workers in one run (an import): rank0 first, else the first name.
    assert is_primary_worker("rank0", {"a", "rank0", "rank1"}) and not is_primary_worker("a", {"a", "rank0"})
    assert is_primary_worker("a", {"a", "b", "rank1"}) and not is_primary_worker("b", {"a", "b"})


def test_no_event_file_when_turned_off(tmp_path: Path) -> None:
    writer = ProfscopeWriter(tmp_path, "quiet", "w", event_file=False)
    writer(FakeProfiler(handmade.gpu_step_trace()))
    assert writer.close()
    assert not list((tmp_path / "quiet").glob("events.out.tfevents.*"))
    assert len(writer.spans) == 1


# --- span_scalars --------------------------------------------------------------------------


def test_span_scalars_of_a_gpu_span(tmp_path: Path) -> None:
    path = handmade.write(tmp_path / "gpu.json", handmade.gpu_step_trace())
    model = load_trace(str(path))
    scalars = span_scalars(model, batch_size=16)
    result = overview(model, batch_size=16)
    assert scalars["profscope/step_time_ms"] == pytest.approx(result["mean_step_time"] / 1000)
    (device,) = result["devices"]
    assert scalars["profscope/gpu_utilization"] == pytest.approx(device["utilization"])
    assert 0 < scalars["profscope/gpu_utilization"] < 1
    assert scalars["profscope/samples_per_second"] == pytest.approx(16 * 1e6 / result["mean_step_time"])
    assert scalars["profscope/peak_memory_bytes/gpu0"] == 512.0
    assert "profscope/samples_per_second" not in span_scalars(model)


# --- profscope import ----------------------------------------------------------------------


def test_import_records_each_span_at_its_position_with_the_views_numbers(tmp_path: Path) -> None:
    folder = real_trace("kineto_resnet50/resnet50_num_workers_0")
    sources = sorted(folder.glob("*.pt.trace.json.gz"))
    assert len(sources) == 2
    logdir = tmp_path / "logs"
    assert cli.main(["import", *map(str, sources), "--logdir", str(logdir), "--run", "resnet",
                     "--batch-size", "32"]) == 0
    events = read_run_events(logdir / "resnet")
    traces = sorted((logdir / "resnet" / "plugins" / "profscope").glob("*.trace.json.gz"),
                    key=lambda p: layout.span_sort_key(p.name.split(".")[1]))
    assert [content["trace_file"] for _, content in events.records["profscope/spans/worker0"]] == [
        f"plugins/profscope/{p.name}" for p in traces
    ]
    expected = [expected_scalars(p, 32) for p in traces]
    assert "profscope/gpu_utilization" in expected[0]
    assert set(events.points) == set(expected[0])
    for tag, points in events.points.items():
        assert points == [(0, as_float32(expected[0][tag])), (1, as_float32(expected[1][tag]))], tag


def test_import_of_two_ranks_and_without_an_event_file(tmp_path: Path) -> None:
    sources = sorted(real_trace("torch213/ddp_gloo_2ranks").glob("rank*.pt.trace.json.gz"))
    assert len(sources) == 2
    assert cli.main(["import", *map(str, sources), "--logdir", str(tmp_path), "--run", "ddp"]) == 0
    events = read_run_events(tmp_path / "ddp")
    assert set(events.records) == {"profscope/spans/rank0", "profscope/spans/rank1"}
    assert {"profscope/step_time_ms", "profscope/rank1/step_time_ms"} <= set(events.points)

    assert cli.main(["import", *map(str, sources), "--logdir", str(tmp_path), "--run", "plain",
                     "--no-event-file"]) == 0
    assert not list((tmp_path / "plain").glob("events.out.tfevents.*"))


# --- the plugin asks TensorBoard's data provider first --------------------------------------


def provider_context(logdir: Path) -> base_plugin.TBContext:
    """A context with TensorBoard's Python data provider over ``logdir`` (as `--load_fast=false` makes)."""
    multiplexer = plugin_event_multiplexer.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(str(logdir))
    multiplexer.Reload()
    provider = tb_data_provider.MultiplexerDataProvider(multiplexer, str(logdir))
    return base_plugin.TBContext(logdir=str(logdir), data_provider=provider)


def test_a_logdir_with_only_the_event_file_is_active_through_the_provider(
    torch_run: TorchRun, tmp_path: Path
) -> None:
    logdir = tmp_path / "logs"
    (logdir / "group" / "mlp").mkdir(parents=True)
    for path in torch_run.run_folder.glob(EVENT_FILE_GLOB):
        shutil.copy2(path, logdir / "group" / "mlp" / path.name)  # no trace file at all
    context = provider_context(logdir)
    assert provider_runs.runs_with_profscope_data(context) == {"group/mlp"}
    assert provider_runs.has_profscope_data(context)

    plugin = ProfscopePlugin(context, cache_dir=str(tmp_path / "cache"))
    assert plugin.is_active()
    assert plugin._manager is None  # the logdir was never scanned

    # Without the provider's answer, the same logdir has nothing Profscope can find.
    scanning = ProfscopePlugin(base_plugin.TBContext(logdir=str(logdir)), cache_dir=str(tmp_path / "cache2"))
    try:
        assert not scanning.is_active()
    finally:
        if scanning._manager is not None:
            scanning._manager.stop()


def test_runs_of_torchs_own_handler_are_still_found_by_scanning(tmp_path: Path) -> None:
    source = real_trace("torch213/conv_cpu_memory")
    (trace,) = sorted(source.glob("*.pt.trace.json.gz"))
    logdir = tmp_path / "logs"
    (logdir / "conv").mkdir(parents=True)
    shutil.copy2(trace, logdir / "conv" / trace.name)
    context = provider_context(logdir)
    assert provider_runs.runs_with_profscope_data(context) == set()
    assert not provider_runs.has_profscope_data(context)
    plugin = ProfscopePlugin(context, cache_dir=str(tmp_path / "cache"))
    try:
        assert plugin.is_active()
        assert plugin._manager is not None
    finally:
        if plugin._manager is not None:
            plugin._manager.stop()


def test_no_provider_means_no_provider_runs() -> None:
    context = base_plugin.TBContext(logdir="")
    assert provider_runs.runs_with_profscope_data(context) == set()
    assert not provider_runs.has_profscope_data(context)
