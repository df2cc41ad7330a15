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

from profscope.tb_plugin import cli, layout

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TORCH213 = SHARED / "traces" / "torch213"
MLP_SCHED = TORCH213 / "mlp_train_sched"
MLP_SCHED_PLAIN = TORCH213 / "mlp_train_sched_plain"

needs_shared = pytest.mark.skipif(
    not MLP_SCHED.is_dir(), reason=f"real traces not found: clone the shared folder beside the repo ({SHARED})"
)

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


@needs_shared
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


@needs_shared
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


@needs_shared
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
        "import sys, profscope.tb_plugin.cli as cli\n"
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
