"""Bad files of every input format fail their own span with a clear error, through the WSGI app.

For each layout (torch's handler, Paddle's export, MindSpore's CPU ``trace_view.json``, a generic
Chrome trace in the writer's layout) and each kind of damage (a truncated file, invalid JSON, JSON
that is not a trace), one run holds the bad file; a good run of the same format sits in the same
logdir. The bad runs answer 422 with a message that says what is wrong; the good ones load.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

import pytest

from profscope.tb_plugin import layout

from conftest import real_trace
from handmade import gpu_step_trace
from test_generic_chrome import tensorflow_trace

GOOD_TORCH = "torch213/mlp_train_sched_plain/worker0.1795303442092317655.pt.trace.json"
GOOD_PADDLE = "paddle/linear_sched_2_10/host_vmpid_23377_time_2026_11_21_23_22_29_386961.paddle_trace.json"
GOOD_MINDSPORE = ("mindspore_cpu/pynative_mlp_profile_sched/vm_23552_20261121232248756_ascend_ms/"
                  "ASCEND_PROFILER_OUTPUT/trace_view.json")


def _generic_good() -> bytes:
    return json.dumps(tensorflow_trace()).encode()


def _torch_good() -> bytes:
    return real_trace(GOOD_TORCH).read_bytes()


def _paddle_good() -> bytes:
    return real_trace(GOOD_PADDLE).read_bytes()


def _mindspore_good() -> bytes:
    return real_trace(GOOD_MINDSPORE).read_bytes()


def _place_torch(run: Path) -> Path:
    return run / "worker0.1795303442092317655.pt.trace.json"


def _place_paddle(run: Path) -> Path:
    return run / "host_time_2026_11_21_23_22_29_386961.paddle_trace.json"


def _place_mindspore(run: Path) -> Path:
    return run / "vm_23552_20261121232248756_ascend_ms" / layout.MINDSPORE_OUTPUT_FOLDER / layout.MINDSPORE_TRACE_FILE


def _place_generic(run: Path) -> Path:
    folder = run.joinpath(*layout.ASSET_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / layout.writer_manifest_name("host0", "1")).write_text(json.dumps({"framework": "generic"}))
    return folder / "host0.1.generic.trace.json.gz"  # plain JSON: the reader finds gzip by its magic only


# format → (where its file goes in a run folder, a good file, the framework the run shows)
FORMATS: dict[str, tuple[Callable[[Path], Path], Callable[[], bytes], str]] = {
    "torch": (_place_torch, _torch_good, "pytorch"),
    "paddle": (_place_paddle, _paddle_good, "paddle"),
    "mindspore": (_place_mindspore, _mindspore_good, "mindspore"),
    "generic": (_place_generic, _generic_good, "generic"),
}

def _break_middle_event(good: bytes) -> bytes:
    """Two commas before the key of an event half-way through: invalid JSON (not inside a string)."""
    key = good.index(b'"ph"', len(good) // 2)
    return good[:key] + b",," + good[key:]


# damage → (the bad bytes made from a good file, words the error must contain)
DAMAGE: dict[str, tuple[Callable[[bytes], bytes], tuple[str, ...]]] = {
    "truncated": (lambda good: good[: len(good) // 2], ("truncated",)),
    "invalid_json": (lambda good: _break_middle_event(good), ("invalid json",)),
    "not_a_trace": (lambda good: b'{"model": "resnet", "epochs": [1, 2, 3]}', ("not a trace",)),
}


def _settled(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    old = time.time() - 120  # older than the discovery's settle time
    os.utime(path, (old, old))


@pytest.fixture(scope="module")
def good_bytes() -> dict[str, bytes]:
    return {name: make() for name, (_, make, _) in FORMATS.items()}


def test_bad_files_fail_alone_with_a_clear_error(tmp_path: Path, make_client, good_bytes: dict[str, bytes]) -> None:
    logdir = tmp_path / "logdir"
    for fmt, (place, _, _) in FORMATS.items():
        _settled(place(logdir / f"{fmt}_good"), good_bytes[fmt])
        for damage, (spoil, _) in DAMAGE.items():
            _settled(place(logdir / f"{fmt}_{damage}"), spoil(good_bytes[fmt]))
    client = make_client(logdir)
    client.settle()
    status, body = client.get("runs")
    assert status == 200
    runs = {r["name"]: r for r in body["runs"]}
    assert set(runs) == {f"{fmt}_{case}" for fmt in FORMATS for case in ("good", *DAMAGE)}

    for fmt, (_, _, framework) in FORMATS.items():
        good = runs[f"{fmt}_good"]
        assert (good["status"], good.get("framework")) == ("ready", framework), good
        [worker] = [w["name"] for w in good["workers"]]
        status, summary = client.get("summary", run=f"{fmt}_good", worker=worker)
        assert status == 200 and summary["events"] > 0 and summary["framework"] == framework
        for damage, (_, words) in DAMAGE.items():
            name = f"{fmt}_{damage}"
            assert runs[name]["status"] == "error", (name, runs[name])
            message = runs[name]["error"]
            assert all(word in message.lower() for word in words), (name, message)
            status, err = client.get("summary", run=name, worker=worker)
            # The run's error names the file; the span's is the same message without it.
            assert status == 422 and message.endswith(err["error"]), (name, err)


def test_a_bad_span_fails_alone_within_its_run(tmp_path: Path, make_client) -> None:
    # One logdir, one run: a good torch span and a broken one of the same worker fail separately.
    logdir = tmp_path / "logdir"
    run = logdir / "mixed"
    _settled(run / "worker0.1.pt.trace.json", json.dumps(gpu_step_trace()).encode())
    _settled(run / "worker0.2.pt.trace.json", b'{"traceEvents": [{"ph": "X", "name": "a",')
    client = make_client(logdir)
    client.settle()
    assert client.get("summary", run="mixed", worker="worker0", span="1")[0] == 200
    status, err = client.get("summary", run="mixed", worker="worker0", span="2")
    assert status == 422 and "invalid json" in err["error"].lower()
