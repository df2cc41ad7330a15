"""Framework detection by content (ingest/detect.py) on every Chrome trace of tests/data, on
hand-made DeepLink, TensorFlow and JAX traces, and on renamed copies (a name that says nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.ingest.detect import HEAD_BYTES, detect_framework
from profscope.tb_plugin.ingest.chrome.reader import read_trace_bytes

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


# --- the whole document decides, never a byte window ---------------------------------------------------------

def _nccl_document() -> dict:
    """HTA's rank-0 trace of a 2-rank A100 job (full ``distributedInfo``, GPU-side ``ProfilerStep#`` annotations)."""
    return json.loads(read_trace_bytes(lambda: open(real_trace("hta/nccl_parser_config/nccl_data.json.gz"), "rb")))


def _header_first(doc: dict, user_metadata: bool) -> dict:
    """The same trace with a multi-GPU job's big header before the events and Kineto's own keys after them.

    ``deviceProperties`` of 8 GPUs, a ``distributedInfo`` whose process-group table is a large job's; with
    ``user_metadata``, a job configuration added as top-level metadata (``prof.add_metadata_json``) first, so
    that no Kineto key and no event lies in the first 16 KiB.
    """
    doc = dict(doc)
    events = doc.pop("traceEvents")
    devices = doc.pop("deviceProperties")
    info = dict(doc.pop("distributedInfo"))
    info["pg_config"] = [dict(group, pg_name=str(i), ranks=list(range(64))) for i in range(300)
                         for group in info.get("pg_config", [])[:1]]
    head: dict = {"displayTimeUnit": "ms"}
    if user_metadata:
        head["job_config"] = {f"option_{i}": {"value": i, "help": "a training option " * 3} for i in range(600)}
    head["deviceProperties"] = [dict(devices[0], id=i) for i in range(8)]
    head["distributedInfo"] = info
    tail = {key: value for key, value in doc.items() if key != "displayTimeUnit"}
    return {**head, "traceEvents": events, **tail}


def _natural_order(doc: dict, header_first: dict) -> dict:
    """The header-first document's content in Kineto's own order (its keys first, then the events)."""
    events = header_first["traceEvents"]
    return {**{k: v for k, v in header_first.items() if k != "traceEvents"}, "traceEvents": events}


@pytest.mark.parametrize("user_metadata", [False, True])
def test_a_big_header_first_is_still_a_torch_trace(tmp_path: Path, user_metadata: bool) -> None:
    from profscope.tb_plugin.model.categories import SliceKinds
    from profscope.tb_plugin.views import kernels, overview

    original = _nccl_document()
    moved = _header_first(original, user_metadata)
    data = json.dumps(moved).encode()
    if user_metadata:  # the case a byte window got wrong: nothing telling in the first 16 KiB
        assert data.find(b'"traceEvents"') > HEAD_BYTES and data.find(b'"schemaVersion"') > 1_000_000
        assert detect_framework(data[:HEAD_BYTES], "rank-0.json.gz") == "generic"
    path = write(tmp_path / "rank-0.json.gz", moved, gz=True)
    model = load_trace(str(path))
    assert model.framework == "pytorch"
    # The same numbers as the same content in Kineto's order.
    reference = load_trace(str(write(tmp_path / "reference.json", _natural_order(original, moved))))
    assert reference.framework == "pytorch"
    ours, theirs = overview.overview(model), overview.overview(reference)
    assert ours["breakdown"] == theirs["breakdown"] and ours["devices"] == theirs["devices"]
    assert kernels.kernels(model)["rows"] == kernels.kernels(reference)["rows"]
    # No step annotation is a kernel, and the breakdown's kernel time fits in the GPU's busy time.
    kinds = SliceKinds(model)
    steps = model.string_ids_where(lambda s: s.startswith("ProfilerStep#"))[model.slices.name]
    assert steps.any() and not (steps & kinds.kernel).any()
    assert not any(row["name"].startswith("ProfilerStep#") for row in kernels.kernels(model)["rows"])
    gpu = ours["devices"][0]
    assert 0 < ours["breakdown"]["kernel"] <= gpu["utilization"] * ours["mean_step_time"]


def test_a_paddle_trace_known_only_by_its_events_is_read_as_paddle(tmp_path: Path) -> None:
    source = min(_traces("paddle"), key=lambda p: p.stat().st_size)
    doc = json.loads(read_trace_bytes(lambda: open(source, "rb")))
    events = doc.pop("traceEvents")
    padded = {"deviceProperties": [{"id": i, "name": "GPU", "totalGlobalMem": 1 << 34, "note": "x" * 300}
                                   for i in range(64)], **doc, "traceEvents": events}
    data = json.dumps(padded).encode()
    assert detect_framework(data[:HEAD_BYTES], "renamed.json") == "pytorch"  # the head alone misleads
    renamed = tmp_path / "renamed.json"
    renamed.write_bytes(data)
    model = load_trace(str(renamed))
    assert model.framework == "paddle"
    # Decoded as Paddle is (its sub-µs starts kept): the same slices as under its own name.
    reference = load_trace(str(source))
    assert model.slices.start.tolist() == reference.slices.start.tolist()
    assert model.slices.dur.tolist() == reference.slices.dur.tolist()


def test_kineto_keys_anywhere_overrule_mindspore_looking_events() -> None:
    from profscope.tb_plugin.ingest.detect import DocumentEvidence, decide_framework

    mindspore_like = DocumentEvidence(process_names=frozenset({"CPU OP"}), names="Conv2D-op5\nMatMul-op7")
    assert decide_framework("generic", mindspore_like) == "mindspore"
    with_keys = DocumentEvidence(top_level_keys=frozenset({"traceName"}), process_names=frozenset({"CPU OP"}),
                                 names="Conv2D-op5\nMatMul-op7")
    assert decide_framework("mindspore", with_keys) == "pytorch"
    assert decide_framework("generic", DocumentEvidence(categories=frozenset({"gpu_user_annotation"}))) == "pytorch"
    assert decide_framework("generic", DocumentEvidence(names="ProfilerStep#3\nwork")) == "pytorch"
    assert decide_framework("pytorch", DocumentEvidence(names="aten::add\ndiopiAdd")) == "deeplink"
    assert decide_framework("generic", DocumentEvidence(names="work[1.5 ms]")) == "generic"  # one marker only
    assert decide_framework("generic", DocumentEvidence(names="ProfileStep#1[2.0 ms]")) == "paddle"
    assert decide_framework("generic", DocumentEvidence(process_names=frozenset({"CANN", "HCCL"}))) == "mindspore"
    assert decide_framework("generic", DocumentEvidence(process_names=frozenset({"CANN"}))) == "generic"


@pytest.mark.parametrize("folder", sorted(EXPECTED_BY_FOLDER))
def test_import_decides_as_the_loader(tmp_path: Path, folder: str) -> None:
    from profscope.writer.importer import inspect_trace_file

    source = min(_traces(folder), key=lambda p: p.stat().st_size)
    renamed = tmp_path / "renamed.json"
    renamed.write_bytes(read_trace_bytes(lambda: open(source, "rb")))
    assert inspect_trace_file(renamed).framework == load_trace(str(renamed)).framework == EXPECTED_BY_FOLDER[folder]


def test_import_of_a_big_header_first_trace_is_torch(tmp_path: Path) -> None:
    from profscope.writer.importer import inspect_trace_file

    path = write(tmp_path / "rank-0.json.gz", _header_first(_nccl_document(), user_metadata=True), gz=True)
    assert inspect_trace_file(path).framework == "pytorch"
