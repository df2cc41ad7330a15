"""Framework detection by content (ingest/detect.py) on every Chrome trace of tests/data, on
hand-made DeepLink, TensorFlow and JAX traces, and on renamed copies (a name that says nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profscope.tb_plugin.ingest import load_trace
from profscope.tb_plugin.ingest.detect import HEAD_BYTES, detect_framework
from profscope.tb_plugin.ingest.reader import read_trace_bytes

from conftest import REAL_TRACES, real_trace
from deeplink_trace import deeplink_trace
from handmade import write
from test_generic_chrome import jax_trace, tensorflow_trace

EXPECTED_BY_FOLDER = {
    "kineto_resnet50": "pytorch",
    "torch213": "pytorch",
    "hta": "pytorch",
    "paddle": "paddle",
    "mindspore_cpu": "mindspore",
    "mindspore": "mindspore",
}
# Hand-made traces of formats without a real trace here (see each builder for its source).
HAND_MADE = {"deeplink": deeplink_trace, "tensorflow": tensorflow_trace, "jax": jax_trace}
EXPECTED_HAND_MADE = {"deeplink": "deeplink", "tensorflow": "generic", "jax": "generic"}


def _traces(folder: str) -> list[Path]:
    root = real_trace(folder)
    found = [p for p in sorted(root.rglob("*.json*"))
             if p.name.endswith((".json", ".json.gz")) and not p.name.endswith(("key_averages.json", "run_info.json",
                                                                                "expectations.json"))]
    if folder == "mindspore_cpu":
        found = [p for p in found if p.name == "trace_view.json"]
    if folder == "mindspore":  # the timelines, not the statistics and pipeline files beside them
        found = [p for p in found if "_timeline_display_" in p.name]
    if folder == "hta":  # only HTA's trace files, not its parser configuration data
        found = [p for p in found if "traceEvents" in _head(p).decode("utf-8", "replace")]
    return found


def _head(path: Path) -> bytes:
    return bytes(read_trace_bytes(lambda: open(path, "rb"))[:HEAD_BYTES])


@pytest.mark.parametrize("folder", sorted(EXPECTED_BY_FOLDER))
def test_every_real_trace_is_detected(folder: str) -> None:
    paths = _traces(folder)
    assert paths, folder
    for path in paths:
        head = _head(path)
        expected = EXPECTED_BY_FOLDER[folder]
        # By content alone (a renamed file), and with its real name.
        assert detect_framework(head, "") == expected, path
        assert detect_framework(head, path.name) == expected, path


def test_model_framework_follows_the_content(tmp_path: Path) -> None:
    events = [
        {"ph": "X", "name": "work", "cat": "app", "ts": 10, "dur": 5, "pid": 1, "tid": 1},
        {"ph": "X", "name": "inner", "cat": "app", "ts": 11, "dur": 2, "pid": 1, "tid": 1},
    ]
    generic = tmp_path / "minimal.json"
    generic.write_text(json.dumps({"traceEvents": events}))
    assert load_trace(str(generic)).framework == "generic"
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(events))
    assert load_trace(str(bare)).framework == "generic"
    paddle = next(p for p in _traces("paddle"))
    renamed = tmp_path / "renamed.json"
    renamed.write_bytes(paddle.read_bytes())
    assert load_trace(str(renamed)).framework == "paddle"
    torch = next(p for p in _traces("torch213") if p.name.endswith(".json"))
    assert load_trace(str(torch)).framework == "pytorch"


def test_one_decorated_name_alone_is_not_paddle() -> None:
    head = json.dumps({"traceEvents": [{"ph": "X", "name": "load[1.5 ms]", "ts": 0, "dur": 1, "pid": 1,
                                        "tid": 1}]}).encode()
    assert detect_framework(head) == "generic"


def test_real_traces_folder_is_where_the_tests_expect_it() -> None:
    assert set(EXPECTED_BY_FOLDER) <= {p.name for p in REAL_TRACES.iterdir()}


@pytest.mark.parametrize("folder", sorted(EXPECTED_BY_FOLDER))
def test_renamed_copy_loads_as_its_framework(tmp_path: Path, folder: str) -> None:
    # The smallest trace of the family, under a name that says nothing (gzip is found by its magic).
    source = min(_traces(folder), key=lambda p: p.stat().st_size)
    renamed = tmp_path / "renamed.json"
    renamed.write_bytes(source.read_bytes())
    assert load_trace(str(renamed)).framework == EXPECTED_BY_FOLDER[folder], source


@pytest.mark.parametrize("kind", sorted(HAND_MADE))
def test_hand_made_formats_are_detected(tmp_path: Path, kind: str) -> None:
    doc = HAND_MADE[kind]()
    head = json.dumps(doc).encode()[:HEAD_BYTES]
    assert detect_framework(head, "") == EXPECTED_HAND_MADE[kind]
    for name in ("renamed.json", "worker0.1.pt.trace.json.gz" if kind == "deeplink" else "trace.json.gz"):
        path = write(tmp_path / name, doc, gz=name.endswith(".gz"))
        assert load_trace(str(path)).framework == EXPECTED_HAND_MADE[kind], name
