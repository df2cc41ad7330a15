"""A huge event name (only a hostile or broken writer makes one): the model keeps it cut among its strings and whole
in its cache file, every answer holds it cut (so no answer's size follows one event's), trace/event gives it whole
on request (full_text=1), and the parse-memory estimate covers the parse's measured peak."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.model import array_file
from profscope.tb_plugin.model.interning import MAX_TEXT_CHARS, cut_long_texts, cut_text
from profscope.tb_plugin.model.trace_model import DamagedModel

from conftest import REPO
from test_routes import check

NAME_BYTES = 20_000_000
# What an answer may weigh at most, whatever one text's size: the seed trace's answers are far below.
ANSWER_BYTES_LIMIT = 1 << 20


def _bench() -> ModuleType:
    """bench/bench_long_texts.py, loaded by path (bench/ is no package): its generator and measurement."""
    spec = importlib.util.spec_from_file_location("profscope_bench_long_texts", REPO / "bench" / "bench_long_texts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def huge_name_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logdir = tmp_path_factory.mktemp("long-texts") / "logdir"
    trace = logdir / "huge" / "worker0.1.pt.trace.json"
    trace.parent.mkdir(parents=True)
    _bench().huge_name_trace(trace, NAME_BYTES)
    os.utime(trace, (1e9, 1e9))
    return trace


def test_texts_are_cut_only_beyond_the_limit() -> None:
    strings = ["a", "b" * MAX_TEXT_CHARS, "c" * (MAX_TEXT_CHARS + 5), "é" * (MAX_TEXT_CHARS + 1)]
    kept, whole = cut_long_texts(strings)
    assert kept[:2] == strings[:2] and whole == {2: strings[2], 3: strings[3]}
    assert kept[2] == "c" * MAX_TEXT_CHARS + "… (5 more characters)" and kept[3] == cut_text(strings[3])
    ordinary = ["x", "y"]
    assert cut_long_texts(ordinary) == (ordinary, {}) and cut_long_texts([]) == ([], {})


def test_the_model_keeps_a_long_text_cut_and_whole_in_its_cache_file(huge_name_trace: Path, tmp_path: Path) -> None:
    model = load_trace(str(huge_name_trace))
    (long_id,) = model.long_texts
    name = model.full_text(long_id)
    assert len(name) == len("aten::") + NAME_BYTES and name.startswith("aten::nnn")
    assert model.strings[long_id] == cut_text(name) and len(model.strings[long_id]) < MAX_TEXT_CHARS + 64
    path = str(tmp_path / "model.bin")
    array_file.write_model(path, model)
    header_bytes = os.path.getsize(path) - NAME_BYTES
    read = array_file.read_model(path)
    assert read.strings == model.strings and read.full_text(long_id) == name
    assert read.full_text(0) == read.strings[0]  # an ordinary string is its own whole text
    assert header_bytes < 8 << 20  # the header (read on every open) holds the cut text only
    # A damaged long text is found when read, like any column.
    with open(path, "r+b") as f:
        f.seek(f.read().index(b"nnnnnnnn"))
        f.write(b"X")
    with pytest.raises(DamagedModel):
        array_file.read_model(path).full_text(long_id)


def _body_bytes(body: Any) -> int:
    return len(body) if isinstance(body, bytes) else len(json.dumps(body))


ROUTES: list[tuple[str, dict[str, Any]]] = [
    ("summary", {}), ("overview", {}), ("operators", {}), ("operators", {"group_by": "input_shape"}),
    ("kernels", {}), ("flamegraph", {}), ("stacks/folded", {}), ("modules", {}),
    ("memory", {}), ("critical_path", {}), ("trace/tracks", {}), ("trace/slices", {"width": 800}),
    ("trace/search", {"q": "aten::nnnnnnnn"}), ("analyses/idle", {}), ("analyses/launches", {}),
    ("analyses/sequences", {}), ("analyses/annotations", {}), ("operators", {"format": "csv"}),
]


def test_every_answer_holds_the_name_cut_and_trace_event_gives_it_whole(huge_name_trace: Path, make_client,
                                                                          tmp_path: Path) -> None:
    client = make_client(huge_name_trace.parent.parent)  # its cache: tmp_path / "cache0"
    client.settle()
    span = {"run": "huge", "worker": "worker0", "span": "1"}
    status, found = client.get("trace/search", q="aten::nnnnnnnn", **span)
    assert status == 200 and found["matches"], found
    event_id = found["matches"][0]["id"]
    for route, params in ROUTES:
        status, body = client.get(route, **span, **params)
        assert status == 200, (route, body)
        assert _body_bytes(body) < ANSWER_BYTES_LIMIT, (route, _body_bytes(body))
    status, detail = client.get("trace/event", id=event_id, **span)
    assert status == 200 and detail["name"] == cut_text("aten::" + "n" * NAME_BYTES)
    check(detail, "TraceEvent")
    status, whole = client.get("trace/event", id=event_id, full_text=1, **span)
    assert status == 200 and whole["name"] == "aten::" + "n" * NAME_BYTES
    check(whole, "TraceEvent")
    assert client.get("trace/event", id=event_id, full_text=2, **span)[0] == 400
    # The stored answers beside the cached model: a few hundred KB, not the name's size times the answers.
    cache = tmp_path / "cache0"
    stored = [os.path.getsize(os.path.join(folder, name)) for folder, _, names in os.walk(cache)
              for name in names if name.endswith("views.json")]
    assert stored and max(stored) < 2 << 20, stored


def test_the_parse_memory_estimate_covers_a_huge_name() -> None:
    """The parse as a parser process runs it, in a fresh interpreter: its peak stays within the estimate the
    parser pool admits it by, and its stored answers do not follow the name's size (before texts were cut: 443 MB
    peak against an estimate of 260 MB, 100 MB of stored answers)."""
    measured = _bench().measure_huge_name(NAME_BYTES / 1e6)
    assert max(measured["peak_rss_mb"].values()) < measured["estimate_mb"], measured
    assert measured["answers_mb"] < 2, measured
