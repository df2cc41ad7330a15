"""profscope.writer: file names, manifest contents, atomicity, default names, torch integration."""

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
from profscope.writer import _atomic, torch_handler

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
    writer = trace_handler(tmp_path, run="exp1", worker="w0", batch_size=16, tags={"lr": 0.5, "opt": "sgd"})
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
    monkeypatch.setattr(torch_handler.time, "time_ns", lambda: 1_700_000_000_000_000_000)
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

    monkeypatch.setattr(torch_handler, "gzip_file_into", failing_gzip)
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
        "import profscope.writer, profscope.tb_plugin.cli\n"
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
