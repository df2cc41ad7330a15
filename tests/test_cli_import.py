"""``profscope import`` and ``profscope demo`` through the CLI's ``main``."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from profscope.tb_plugin.reports import cli
from profscope.tb_plugin import layout

from conftest import REAL_TRACES, copy_trace

TRACES = REAL_TRACES
TORCH213 = TRACES / "torch213"
MLP_SCHED = TORCH213 / "mlp_train_sched"
MLP_SCHED_PLAIN = TORCH213 / "mlp_train_sched_plain"

EVENTS = [{"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": 0.0, "dur": 5.0}]


def asset_dir(logdir: Path, run: str) -> Path:
    return logdir.joinpath(run, *layout.ASSET_DIR)


def all_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def manifest_of(trace_path: Path) -> dict[str, Any]:
    parsed = layout.parse_writer_trace_name(trace_path.name)
    assert parsed is not None, trace_path.name
    manifest_path = trace_path.with_name(layout.writer_manifest_name(parsed.worker, parsed.span))
    return json.loads(manifest_path.read_text(encoding="utf-8"))


def run_cli(*argv: str) -> int:
    return cli.main([str(a) for a in argv])


# --- real torch traces ------------------------------------------------------------------


def test_import_of_torch_handler_files_keeps_worker_span_and_bytes(tmp_path: Path) -> None:
    sources = sorted(MLP_SCHED.glob("*.pt.trace.json.gz"))
    assert len(sources) == 2
    logdir = tmp_path / "logs"
    assert run_cli("import", *sources, "--logdir", logdir, "--run", "mlp") == 0

    folder = asset_dir(logdir, "mlp")
    names = sorted(p.name for p in folder.iterdir())
    expected: list[str] = []
    for source in sources:
        torch_name = layout.parse_torch_trace_name(source.name)
        assert torch_name is not None
        trace_name = layout.writer_trace_name(torch_name.worker, torch_name.span, "pytorch")
        expected += [trace_name, layout.writer_manifest_name(torch_name.worker, torch_name.span)]
        trace_path = folder / trace_name
        # A gzipped input is stored byte for byte.
        assert trace_path.read_bytes() == source.read_bytes()
        manifest = manifest_of(trace_path)
        assert manifest["worker"] == torch_name.worker == "worker0"
        assert manifest["span"] == torch_name.span
        assert manifest["framework"] == "pytorch"
        assert manifest["framework_version"] is None
        assert manifest["trace_file"] == trace_name
        assert manifest["wall_time"] == pytest.approx(int(torch_name.span) / 1e9)
        assert manifest["step_range"] is None and manifest["samples"] is None
        assert manifest["source_file"] == source.name
    assert names == sorted(expected)


def test_import_of_plain_json_compresses_without_changing_content(tmp_path: Path) -> None:
    source = sorted(MLP_SCHED_PLAIN.glob("*.pt.trace.json"))[0]
    logdir = tmp_path / "logs"
    code = run_cli(
        "import", source, "--logdir", logdir, "--run", "plain", "--worker", "trainer-1",
        "--batch-size", "64", "--tag", "lr=0.01", "--tag", "epochs=3", "--tag", "note=first try",
    )  # fmt: skip
    assert code == 0
    (trace_path,) = [p for p in all_files(logdir) if p.name.endswith(".trace.json.gz")]
    assert gzip.decompress(trace_path.read_bytes()) == source.read_bytes()
    manifest = manifest_of(trace_path)
    assert manifest["worker"] == "trainer-1"
    assert manifest["span"] == source.name.split(".")[1]
    assert manifest["batch_size"] == 64
    assert manifest["tags"] == {"lr": 0.01, "epochs": 3, "note": "first try"}


def test_import_refuses_to_replace_a_span_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = sorted(MLP_SCHED.glob("*.pt.trace.json.gz"))[0]
    assert run_cli("import", source, "--logdir", tmp_path, "--run", "r") == 0
    capsys.readouterr()
    assert run_cli("import", source, "--logdir", tmp_path, "--run", "r") == 1
    assert "already exists" in capsys.readouterr().err
    assert run_cli("import", source, "--logdir", tmp_path, "--run", "r", "--overwrite") == 0
    spans = [p for p in all_files(tmp_path) if ".tfevents." not in p.name]  # plus one TensorBoard event file
    assert len(spans) == 2


# --- generic files ------------------------------------------------------------------


def test_import_of_a_bare_event_list_uses_the_stem_and_mtime(tmp_path: Path) -> None:
    source = tmp_path / "timeline.v2.json"
    source.write_text(json.dumps(EVENTS))
    os.utime(source, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    logdir = tmp_path / "logs"
    assert run_cli("import", source, "--logdir", logdir, "--run", "g", "--framework", "mindspore") == 0

    span = "1700000000123456789"
    trace_path = asset_dir(logdir, "g") / layout.writer_trace_name("timeline.v2", span, "mindspore")
    assert trace_path.name == f"timeline_v2.{span}.mindspore.trace.json.gz"
    assert json.loads(gzip.decompress(trace_path.read_bytes())) == EVENTS
    manifest = manifest_of(trace_path)
    assert (manifest["worker"], manifest["span"], manifest["framework"]) == ("timeline_v2", span, "mindspore")
    assert manifest["wall_time"] == pytest.approx(1_700_000_000.123456789)


def test_import_leaves_no_temporary_files(tmp_path: Path) -> None:
    source = tmp_path / "t.json"
    source.write_text(json.dumps({"traceEvents": EVENTS}))
    assert run_cli("import", source, "--logdir", tmp_path / "logs", "--run", "r") == 0
    names = [p.name for p in all_files(tmp_path / "logs")]
    assert len([n for n in names if ".tfevents." not in n]) == 2  # trace + manifest (and an event file)
    assert not [n for n in names if n.startswith(layout.TEMP_PREFIX)]


BAD_INPUTS = {
    "invalid_json.json": (b'{"traceEvents": [{"ph": "X",', "not valid JSON"),
    "trailing_garbage.json": (b'{"traceEvents": []} extra', "not valid JSON"),
    "no_events.json": (b'{"schemaVersion": 1, "events": []}', "not a Chrome trace"),
    "events_not_a_list.json": (b'{"traceEvents": {"ph": "X"}}', "not a Chrome trace"),
    "list_of_numbers.json": (b"[1, 2, 3]", "not a Chrome trace"),
    "a_string.json": (b'"traceEvents"', "not a Chrome trace"),
    "empty.json": (b"", "empty file"),
    "blank.json": (b"  \n\t ", "empty file"),
    "empty_gzip.json.gz": (gzip.compress(b""), "empty file"),
    "not_gzip.json.gz": (b'{"traceEvents": []}', "not a valid gzip file"),
    "truncated.json.gz": (gzip.compress(json.dumps({"traceEvents": EVENTS * 50}).encode())[:60], "not a valid gzip"),
    "trace.txt": (json.dumps({"traceEvents": EVENTS}).encode(), "expected a .json or .json.gz"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_inputs_fail_clearly_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    content, reason = BAD_INPUTS[name]
    bad = tmp_path / name
    bad.write_bytes(content)
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"traceEvents": EVENTS}))
    logdir = tmp_path / "logs"

    # The good file comes first: nothing is written unless every input passes.
    assert run_cli("import", good, bad, "--logdir", logdir, "--run", "r") == 1
    err = capsys.readouterr().err
    assert err.startswith("profscope import: error: ")
    assert name in err and reason in err
    assert "Traceback" not in err
    assert all_files(logdir) == []


def test_a_missing_file_fails_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("import", tmp_path / "nope.json", "--logdir", tmp_path, "--run", "r") == 1
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("--run", "../outside", "run must be"), ("--run", "/abs", "run must be"), ("--framework", "Torch", "framework")],
)
def test_bad_names_fail_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    source = tmp_path / "t.json"
    source.write_text(json.dumps({"traceEvents": EVENTS}))
    args = {"--run": "r", "--framework": "pytorch", option: value}
    code = run_cli("import", source, "--logdir", tmp_path / "logs", *[x for kv in args.items() for x in kv])
    assert code == 1
    assert message in capsys.readouterr().err
    assert all_files(tmp_path / "logs") == []


def test_two_inputs_with_the_same_names_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "w0.123.pt.trace.json").write_text(json.dumps({"traceEvents": EVENTS}))
    code = run_cli(
        "import", tmp_path / "a" / "w0.123.pt.trace.json", tmp_path / "b" / "w0.123.pt.trace.json",
        "--logdir", tmp_path / "logs", "--run", "r",
    )  # fmt: skip
    assert code == 1
    assert "would both become" in capsys.readouterr().err
    assert all_files(tmp_path / "logs") == []


def test_usage_errors_exit_with_status_2(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as missing_run:
        cli.main(["import", str(tmp_path / "t.json"), "--logdir", str(tmp_path)])
    assert missing_run.value.code == 2
    with pytest.raises(SystemExit) as bad_tag:
        cli.main(["import", "t.json", "--logdir", "l", "--run", "r", "--tag", "novalue"])
    assert bad_tag.value.code == 2
    with pytest.raises(SystemExit) as no_command:
        cli.main([])
    assert no_command.value.code == 2


def test_the_cli_module_imports_neither_torch_nor_tensorboard() -> None:
    code = (
        "import sys, profscope.tb_plugin.reports.cli as cli\n"
        "heavy = sorted(m for m in ('torch', 'tensorboard', 'numpy', 'msgspec') if m in sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr


# --- demo ---------------------------------------------------------------------------


@pytest.mark.slow
def test_demo_writes_two_writer_runs_and_one_torch_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    assert run_cli("demo", "--logdir", tmp_path, "--steps", "1") == 0
    out = capsys.readouterr().out
    files = all_files(tmp_path)
    for path in files:
        assert str(path) in out
    assert not [p for p in files if p.name.startswith(layout.TEMP_PREFIX)]

    batch_sizes = {}
    for run in ("demo/cnn_bs32", "demo/cnn_bs64"):
        traces = sorted(asset_dir(tmp_path, run).glob("*.trace.json.gz"))
        assert len(traces) == 2
        manifests = [manifest_of(t) for t in traces]
        assert [m["step_range"] for m in manifests] == [[2, 2], [5, 5]]
        batch_sizes[run] = {m["batch_size"] for m in manifests}
    assert batch_sizes == {"demo/cnn_bs32": {32}, "demo/cnn_bs64": {64}}

    torch_traces = sorted((tmp_path / "demo" / "mlp_torch_handler").glob("*.pt.trace.json.gz"))
    assert len(torch_traces) == 2
    assert all(layout.parse_torch_trace_name(p.name) for p in torch_traces)

    # A second demo into the same logdir would mix with the first: refused.
    assert run_cli("demo", "--logdir", tmp_path) == 1
    assert "already exists" in capsys.readouterr().err


# --- every input format, detected by content ------------------------------------------------

PADDLE_LINEAR = (
    TRACES / "paddle" / "linear_sched_2_10" / "host_vmpid_23377_time_2026_11_21_23_22_29_386961.paddle_trace.json"
)
MINDSPORE_SPAN = TRACES / "mindspore_cpu" / "graph_cnn_legacy_profiler" / "vm_23716_20261121232253911_ascend_ms"
MINDSPORE_TIMELINES = (
    TRACES / "mindspore" / "ascend_run_2_profiler" / "ascend_timeline_display_1.json",
    TRACES / "mindspore" / "gpu_timeline" / "gpu_timeline_display_0.json",
)
KINETO_UNNAMED = TRACES / "hta" / "nccl_parser_config" / "nccl_data.json.gz"


def local_epoch(digits: str) -> float:
    """A ``YYYYmmddHHMMSS<fraction>`` name (local time) as epoch seconds."""
    import datetime

    fraction = digits[14:]
    return datetime.datetime.strptime(digits[:14], "%Y%m%d%H%M%S").timestamp() + int(fraction) / 10 ** len(fraction)


def imported(logdir: Path, run: str) -> dict[str, dict[str, Any]]:
    """File name → manifest of every span imported into a run."""
    return {p.name: manifest_of(p) for p in sorted(asset_dir(logdir, run).glob("*.trace.json.gz"))}


def test_paddle_traces_are_detected_and_named_after_paddles_file_names(tmp_path: Path) -> None:
    logdir = tmp_path / "logs"
    assert run_cli("import", PADDLE_LINEAR, "--logdir", logdir, "--run", "pd", "--no-event-file") == 0
    ((name, manifest),) = imported(logdir, "pd").items()
    assert name == "host_vmpid_23377.20261121232229386961.paddle.trace.json.gz"
    assert (manifest["worker"], manifest["span"], manifest["framework"]) == (
        "host_vmpid_23377", "20261121232229386961", "paddle"
    )
    assert manifest["wall_time"] == pytest.approx(local_epoch("20261121232229386961"))
    assert gzip.decompress((asset_dir(logdir, "pd") / name).read_bytes()) == PADDLE_LINEAR.read_bytes()


def test_mindspore_profiler_output_by_file_or_by_folder(tmp_path: Path) -> None:
    logdir = tmp_path / "logs"
    timeline = MINDSPORE_SPAN / layout.MINDSPORE_OUTPUT_FOLDER / layout.MINDSPORE_TRACE_FILE
    assert run_cli("import", timeline, "--logdir", logdir, "--run", "by_file", "--no-event-file") == 0
    assert run_cli("import", MINDSPORE_SPAN, "--logdir", logdir, "--run", "by_folder", "--no-event-file") == 0
    for run in ("by_file", "by_folder"):
        ((name, manifest),) = imported(logdir, run).items()
        assert name == "vm_23716.20261121232253911.mindspore.trace.json.gz"
        assert manifest["framework"] == "mindspore" and manifest["source_file"] == "trace_view.json"
        assert manifest["wall_time"] == pytest.approx(local_epoch("20261121232253911"))
        assert gzip.decompress((asset_dir(logdir, run) / name).read_bytes()) == timeline.read_bytes()


def test_mindspore_timeline_display_files_are_mindspore_ranks(tmp_path: Path) -> None:
    logdir = tmp_path / "logs"
    assert run_cli("import", *MINDSPORE_TIMELINES, "--logdir", logdir, "--run", "ms", "--no-event-file") == 0
    manifests = imported(logdir, "ms").values()
    assert sorted((m["worker"], m["framework"], m["source_file"]) for m in manifests) == [
        ("rank0", "mindspore", "gpu_timeline_display_0.json"),
        ("rank1", "mindspore", "ascend_timeline_display_1.json"),
    ]


def test_kineto_and_generic_traces_are_told_apart_by_content(tmp_path: Path) -> None:
    generic = tmp_path / "handmade.json"
    generic.write_text(json.dumps({"traceEvents": EVENTS}))
    logdir = tmp_path / "logs"
    assert run_cli("import", KINETO_UNNAMED, generic, "--logdir", logdir, "--run", "mixed", "--no-event-file") == 0
    assert sorted((m["worker"], m["framework"]) for m in imported(logdir, "mixed").values()) == [
        ("handmade", "generic"), ("nccl_data", "pytorch")
    ]
    # An explicit --framework wins over detection.
    assert run_cli("import", generic, "--logdir", logdir, "--run", "forced", "--framework", "deeplink",
                   "--no-event-file") == 0
    assert [m["framework"] for m in imported(logdir, "forced").values()] == ["deeplink"]


def test_a_folder_that_is_not_a_mindspore_span_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "some_folder").mkdir()
    assert run_cli("import", tmp_path / "some_folder", "--logdir", tmp_path / "logs", "--run", "r") == 1
    assert "a folder" in capsys.readouterr().err
    assert all_files(tmp_path / "logs") == []


def test_imported_spans_load_in_the_plugin_like_the_original_files(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logs"
    # The originals, in the layouts the plugin reads directly.
    copy_trace(PADDLE_LINEAR, logdir / "paddle_original")
    timeline = MINDSPORE_SPAN / layout.MINDSPORE_OUTPUT_FOLDER / layout.MINDSPORE_TRACE_FILE
    copy_trace(timeline, logdir / "mindspore_original" / MINDSPORE_SPAN.name / layout.MINDSPORE_OUTPUT_FOLDER)
    torch_source = sorted(MLP_SCHED.glob("*.pt.trace.json.gz"))[0]
    copy_trace(torch_source, logdir / "torch_original")
    # The same files imported.
    for run, source in (("paddle_imported", PADDLE_LINEAR), ("mindspore_imported", MINDSPORE_SPAN),
                        ("torch_imported", torch_source)):
        assert run_cli("import", source, "--logdir", logdir, "--run", run, "--no-event-file") == 0
    assert run_cli("import", *MINDSPORE_TIMELINES, "--logdir", logdir, "--run", "timelines", "--no-event-file") == 0

    client = make_client(logdir)
    client.settle()
    _, runs = client.get("runs")
    by_name = {run["name"]: run for run in runs["runs"]}
    assert {name: run["status"] for name, run in by_name.items()} == dict.fromkeys(by_name, "ready")
    for kind, framework in (("paddle", "paddle"), ("mindspore", "mindspore"), ("torch", "pytorch")):
        answers = []
        for run in (f"{kind}_original", f"{kind}_imported"):
            ((worker, spans),) = [(w["name"], w["spans"]) for w in by_name[run]["workers"]]
            assert by_name[run]["framework"] == framework
            status, answer = client.get("overview", run=run, worker=worker, span=spans[0])
            assert status == 200
            answers.append(answer)
        assert answers[0] == answers[1], kind
    for worker in ("rank0", "rank1"):
        status, answer = client.get("overview", run="timelines", worker=worker)
        assert status == 200 and answer["steps"], worker
