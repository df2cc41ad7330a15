"""Discovery of every file layout by name or by content (discovery.py, layout.py): torch's export_chrome_trace
``trace.json``, torch handler files without a timestamp, HTA-style job folders, TensorFlow's and JAX's profile
plugin folders, CANN's older device timelines; the files that are no span, counted by reason; the runs route's
``skipped``, ``looked_for`` and ranks; and a rescan of an unchanged logdir that reads no file."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Optional

from profscope.tb_plugin import layout
from profscope.tb_plugin.store.discovery import Discovery, scan
from profscope.tb_plugin.store.storage import LocalStorage

from conftest import copy_trace, real_trace
from test_routes import check

CONV = "torch213/conv_cpu_memory/worker0.1795303453480506115.pt.trace.json.gz"
DDP = "torch213/ddp_gloo_2ranks"
LOADER = "torch213/dataloader_bound_w0/worker0.1795303454060827054.pt.trace.json.gz"
HTA_RANK_34 = "hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
AMD = "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
ASCEND = "mindspore/ascend_run_2_profiler/ascend_timeline_display_1.json"
SESSION = "2024_05_01_10_00_00"
PROF = "PROF_000001_20240501100000123_ABCDEF"


def _inflated(relative: str, dest_dir: Path, name: str) -> Path:
    """A real trace, stored plain under another name (settled: older than the discovery's settle time)."""
    source = real_trace(relative)
    data = source.read_bytes()
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / name
    dest.write_bytes(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    old = source.stat().st_mtime - 10
    os.utime(dest, (old, old))
    return dest


def _every_layout(root: Path) -> Path:
    logdir = root / "logdir"
    _inflated(CONV, logdir / "exp", "trace.json")  # torch.profiler's export_chrome_trace
    ddp = sorted(real_trace(DDP).glob("rank*.pt.trace.json.gz"))
    for rank, source in enumerate(ddp):  # export_chrome_trace per rank folder
        _inflated(str(source.relative_to(real_trace("."))), logdir / "ddp" / f"rank{rank}", "trace.json")
    _inflated(LOADER, logdir / "legacy", "worker0.pt.trace.json")  # torch's handler name without a timestamp
    copy_trace(real_trace(HTA_RANK_34), logdir / "hta_job", "rank-0.json.gz")  # HTA-style job folder
    _inflated(AMD, logdir / "hta_job", "rank-1.pt.trace.json")
    copy_trace(real_trace(CONV), logdir / "jax_job" / "plugins" / "profile" / SESSION, "host-a.trace.json.gz")
    _inflated(ASCEND, logdir / "cann_job" / PROF / "device_0" / "timeline", "msprof_1.json")
    # No spans:
    (logdir / "exp" / "config.json").write_text('{"lr": 0.1, "batch_size": 32}')
    copy_trace(real_trace("kineto_resnet50/expectations.json"), logdir / "exp")
    copy_trace(real_trace(f"{DDP}/rank0.1795303450949782497.key_averages.json"), logdir / "ddp" / "rank0")
    copy_trace(real_trace("mindspore/gpu_timeline/gpu_timeline_summary_0.json"),
               logdir / "jax_job" / "plugins" / "profile" / SESSION, "host-a.memory_profile.json")
    (logdir / "exp" / "events.out.tfevents.1700000000.host").write_bytes(b"\x00" * 64)
    (logdir / "exp" / "notes.txt").write_text("not a trace")
    (logdir / "exp" / "empty.json").write_bytes(b"")
    (logdir / "exp" / "broken.json.gz").write_bytes(b"\x1f\x8b" + b"\xff" * 64)
    os.mkfifo(logdir / "exp" / "pipe.json")  # never waited on
    _inflated(ASCEND, logdir / "cann_job" / PROF / "device_0" / "timeline", "task_time_0_1_1.json")
    return logdir


EXPECTED_SPANS = [
    ("cann_job", "device0", "1", "cann"),
    ("ddp", "rank0", "trace.json", "chrome"),
    ("ddp", "rank1", "trace.json", "chrome"),
    ("exp", "trace", "trace.json", "chrome"),
    ("hta_job", "rank0", "rank-0.json.gz", "chrome"),
    ("hta_job", "rank1", "rank-1.pt.trace.json", "chrome"),
    ("jax_job", "host-a", SESSION, "profile_plugin"),
    ("legacy", "worker0", "worker0.pt.trace.json", "chrome"),
]
EXPECTED_SKIPPED = {
    "empty": 1,
    "not_a_chrome_trace": 4,  # config.json, expectations.json, a key_averages file, a memory profile
    "not_json": 1,
    "profiler_side_file": 1,
    "tensorboard_event_file": 1,
    "unreadable": 2,  # a FIFO, a broken gzip
}


def test_every_layout_is_found_by_name_or_content(tmp_path: Path) -> None:
    result = scan(str(_every_layout(tmp_path)))
    assert sorted((s.run, s.worker, s.span, s.layout) for s in result.sources) == EXPECTED_SPANS
    assert result.skipped.counts == EXPECTED_SKIPPED
    assert sorted(result.skipped.examples["unreadable"]) == ["exp/broken.json.gz", "exp/pipe.json"]
    assert result.skipped.examples["tensorboard_event_file"] == ["exp/events.out.tfevents.1700000000.host"]


def test_runs_route_reports_frameworks_ranks_and_skipped_files(tmp_path: Path, make_client) -> None:
    client = make_client(_every_layout(tmp_path))
    client.settle()
    status, body = client.get("runs")
    assert status == 200
    check(body, "Runs")
    runs = {r["name"]: r for r in body["runs"]}
    assert {name: r["status"] for name, r in runs.items()} == dict.fromkeys(
        ["cann_job", "ddp", "exp", "hta_job", "jax_job", "legacy"], "ready")
    # Each file's framework comes from its content, whatever its name.
    assert {name: r["framework"] for name, r in runs.items()} == {
        "cann_job": "mindspore", "ddp": "pytorch", "exp": "pytorch", "hta_job": "pytorch", "jax_job": "pytorch",
        "legacy": "pytorch"}
    # Names come from the files; the rank from the trace's distributedInfo where it has one.
    workers = {(run, w["name"]): w for run, r in runs.items() for w in r["workers"]}
    assert workers[("ddp", "rank0")]["rank"] == 0 and workers[("ddp", "rank1")]["rank"] == 1
    assert workers[("hta_job", "rank0")]["rank"] == 34  # rank 34 of a 300-rank job, renamed rank-0.json.gz
    assert workers[("hta_job", "rank0")]["span_info"][0]["rank"] == 34
    assert "rank" not in workers[("hta_job", "rank1")] and "rank" not in workers[("exp", "trace")]
    assert body["skipped"]["count"] == sum(EXPECTED_SKIPPED.values())
    assert body["skipped"]["reasons"] == EXPECTED_SKIPPED
    assert "looked_for" not in body  # only with an empty run list
    for (run, worker), entry in workers.items():
        status, summary = client.get("summary", run=run, worker=worker, span=entry["spans"][0])
        assert status == 200 and summary["events"] > 0, (run, worker)


def test_an_empty_logdir_says_what_was_looked_for(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    (logdir / "exp").mkdir(parents=True)
    (logdir / "exp" / "events.out.tfevents.1700000000.host").write_bytes(b"\x00" * 64)
    (logdir / "exp" / "config.json").write_text('{"lr": 0.1}')
    client = make_client(logdir)
    client.settle()
    status, body = client.get("runs")
    assert status == 200 and body["runs"] == [] and body["scanned"] is True
    check(body, "Runs")
    assert body["skipped"] == {"count": 2, "reasons": {"not_a_chrome_trace": 1, "tensorboard_event_file": 1},
                               "examples": {"not_a_chrome_trace": ["exp/config.json"],
                                            "tensorboard_event_file": ["exp/events.out.tfevents.1700000000.host"]}}
    patterns = [item["pattern"] for item in body["looked_for"]]
    assert patterns == [item.pattern for item in layout.LAYOUTS_LOOKED_FOR]
    assert any("trace.json" in item["written_by"] for item in body["looked_for"])


class _CountingStorage(LocalStorage):
    """A local logdir that counts every read of a file's content."""

    def __init__(self, logdir: str) -> None:
        super().__init__(logdir)
        self.reads: list[str] = []

    def read_head(self, location: str, limit: int) -> Optional[bytes]:
        self.reads.append(location)
        return super().read_head(location, limit)

    def read_small(self, location: str, limit: int) -> Optional[bytes]:
        self.reads.append(location)
        return super().read_small(location, limit)

    def open(self, location: str):  # type: ignore[no-untyped-def]
        self.reads.append(location)
        return super().open(location)


def test_a_rescan_of_an_unchanged_logdir_reads_no_file(tmp_path: Path) -> None:
    from profscope.writer.importer import import_trace_files

    logdir = _every_layout(tmp_path)
    import_trace_files([real_trace(CONV)], logdir, "imported")  # a writer span: its manifest is read too
    storage = _CountingStorage(str(logdir))
    discovery = Discovery(str(logdir), storage=storage)
    first, _ = discovery.complete_sources()
    assert storage.reads  # the JSON files without a layout, and the manifest
    assert any(path.endswith(".manifest.json") for path in storage.reads)
    storage.reads.clear()
    second, _ = discovery.complete_sources()
    assert storage.reads == [] and second == first
    # The import's event file is one more TensorBoard event file.
    assert discovery.skipped.counts == {**EXPECTED_SKIPPED, "tensorboard_event_file": 2}
    # A changed file is read again (only that one): now it is a trace.
    config = logdir / "exp" / "config.json"
    config.write_bytes(real_trace(CONV).read_bytes())
    discovery.complete_sources()
    assert storage.reads == [str(config)]
    assert ("exp", "config") in {(s.run, s.worker) for s in scan(str(logdir)).sources}


def test_names_of_the_new_layouts() -> None:
    chrome = layout.parse_chrome_trace_path
    assert (chrome("exp", "trace.json").name.worker, chrome("exp", "trace.json").run_levels_up) == ("trace", 0)
    assert (chrome("rank3", "trace.json").name.worker, chrome("rank3", "trace.json").run_levels_up) == ("rank3", 1)
    assert chrome("exp", "sampled_rank-12.json.gz").name.worker == "rank12"
    assert chrome("exp", "worker0.pt.trace.json.gz").name.worker == "worker0"
    assert chrome("exp", "nccl_data.json").name.span == "nccl_data.json"
    plugin = layout.parse_profile_plugin_trace_path
    found = plugin(["jax", "plugins", "profile", SESSION], "tpu-host.example.com.trace.json.gz")
    assert found is not None and (found.name.worker, found.name.span, found.run_levels_up) == (
        "tpu-host.example.com", SESSION, 3)
    assert plugin(["plugins", "profile"], "host.trace.json.gz") is None
    assert plugin(["x", "plugins", "other", SESSION], "host.trace.json.gz") is None
    cann = layout.parse_cann_timeline_path
    found = cann(["job", PROF, "device_3", "timeline"], "msprof_0_1_1.json")
    assert found is not None and (found.name.worker, found.name.span) == ("device3", "0_1_1")
    assert cann(["job", "other", "device_3", "timeline"], "msprof_1.json") is None
    assert cann(["job", PROF, "device_3", "summary"], "msprof_1.json") is None
    assert cann(["job", PROF, "device_3", "timeline"], "task_time_1.json") is None


def test_two_files_naming_one_span_stay_two_spans(tmp_path: Path) -> None:
    logdir = tmp_path / "logdir"
    copy_trace(real_trace(CONV), logdir / "run", "w.1.pt.trace.json.gz")
    _inflated(CONV, logdir / "run", "w.1.pt.trace.json")
    assert sorted(s.span for s in scan(str(logdir)).sources) == ["1", "1 (2)"]


def test_import_names_the_new_layouts_as_discovery_does(tmp_path: Path) -> None:
    from profscope.writer.importer import inspect_trace_file

    logdir = _every_layout(tmp_path)
    found = {s.path: (s.worker, s.span) for s in scan(str(logdir)).sources}
    for path, (worker, span) in found.items():
        source = inspect_trace_file(path)
        assert source.worker == worker, path
        if "plugins/profile" in path:  # the session's date and time, as the writer's span
            assert (source.span, span) == ("20240501100000", SESSION)
            assert source.wall_time > 1.7e9
