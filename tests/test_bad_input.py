"""Bad input: each broken file gives a clear error for its own run; the other runs still load."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.load import TraceLoadError, load_trace

from conftest import copy_trace, real_trace
from handmade import trace, write, x

GOOD = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"


def _valid_gzip_bytes() -> bytes:
    return gzip.compress(json.dumps(trace([x("a", 0, 1)])).encode())


BAD_FILES = {
    "truncated_gzip": (lambda: _valid_gzip_bytes()[:-12], "truncated"),
    "corrupt_gzip": (lambda: b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"garbage that is not deflate", "corrupt"),
    "invalid_json": (lambda: b'{"traceEvents": [{"ph": "X", "name": "a",', "invalid JSON"),
    "empty": (lambda: b"", "empty"),
    "not_a_trace": (lambda: b'{"hello": "world"}', "no 'traceEvents'"),
    "events_not_a_list": (lambda: b'{"traceEvents": {"a": 1}}', "not a list"),
    "not_json_at_all": (lambda: b"\x00\x01binary", "not a JSON trace"),
    "nan_times": (lambda: b'{"traceEvents": [{"ph": "X", "ts": NaN, "dur": 1}]}', "invalid JSON"),
    "deep_nesting": (lambda: b'{"traceEvents": [{"ph": "X", "args": {"x": ' + b"[" * 100000 + b"]" * 100000 + b"}}]}",
                     "invalid"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_file_gives_a_clear_error(tmp_path: Path, case: str) -> None:
    content, expected = BAD_FILES[case]
    path = tmp_path / "w.1.pt.trace.json"
    path.write_bytes(content())
    with pytest.raises(TraceLoadError) as err:
        load_trace(str(path))
    assert expected.lower() in str(err.value).lower()


def test_wrong_value_types_do_not_crash(tmp_path: Path) -> None:
    # Strings where numbers belong, objects as names: unreadable events are dropped and counted.
    events = [x("ok", 0, 10), {"ph": "X", "name": {"a": 1}, "ts": "abc", "dur": 1, "pid": 1, "tid": 1},
              {"ph": "X", "name": "str_ts", "ts": "5", "dur": "2", "pid": 1, "tid": 1},
              {"ph": "X", "name": "huge", "ts": 1, "dur": 1, "pid": 1, "tid": 1, "args": {"External id": "x" * 100000}}]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    names = sorted(model.strings[int(n)] for n in model.slices.name)
    assert names == ["huge", "ok", "str_ts"]
    assert model.stats["skipped_phases"] == {"?invalid": 1}


def test_broken_runs_fail_alone(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    copy_trace(real_trace(GOOD), logdir / "good")
    bad = {
        "truncated": _valid_gzip_bytes()[:-12],
        "invalid": b"{not json",
        "empty": b"",
        "nottrace": b'{"hello": 1}',
    }
    for run, content in bad.items():
        path = logdir / run / "worker0.1.pt.trace.json.gz"
        path.parent.mkdir(parents=True)
        path.write_bytes(content)
        old = time.time() - 120
        os.utime(path, (old, old))
    client = make_client(logdir)
    client.settle()
    status, body = client.get("runs")
    assert status == 200
    runs = {r["name"]: r for r in body["runs"]}
    assert set(runs) == {"good", *bad}
    assert runs["good"]["status"] == "ready"
    for run in bad:
        assert runs[run]["status"] == "error", run
        assert runs[run]["error"]
        status, err = client.get("summary", run=run, worker="worker0")
        assert status == 422 and err["error"]
    status, summary = client.get("summary", run="good", worker="worker0")
    assert status == 200 and summary["events"] > 0


def test_file_still_being_written_waits(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    data = _valid_gzip_bytes()
    growing = logdir / "live" / "worker0.5.pt.trace.json.gz"
    growing.parent.mkdir(parents=True)
    growing.write_bytes(data[: len(data) // 2])  # just written: fresh mtime
    copy_trace(real_trace(GOOD), logdir / "good")
    client = make_client(logdir)
    client.plugin.manager.refresh()
    _, body = client.get("runs")
    assert [r["name"] for r in body["runs"]] == ["good"]
    assert body["pending_files"] == 1
    # The writer finishes; once settled the span loads without error.
    growing.write_bytes(data)
    old = time.time() - 60
    os.utime(growing, (old, old))
    client.settle()
    _, body = client.get("runs")
    runs = {r["name"]: r for r in body["runs"]}
    assert runs["live"]["status"] == "ready"


@pytest.mark.parametrize("inflater", ["isal", "zlib"])
def test_a_gzip_bomb_is_stopped_at_the_limit(tmp_path: Path, monkeypatch, inflater: str) -> None:
    """Inflation stops at the size limit: no call of the inflater produces more than a block, and no more
    than the limit (plus the one byte that tells it was passed) is ever produced."""
    import tracemalloc
    import zlib

    from profscope.tb_plugin.ingest.chrome import reader

    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # one gzip member: 64 MB of white space in ~64 KB
    bomb = b"".join([packer.compress(b" " * (1 << 20)) for _ in range(64)] + [packer.flush()])
    assert len(bomb) < 128 << 10
    path = tmp_path / "w.1.pt.trace.json.gz"
    path.write_bytes(bomb)
    produced: list[int] = []
    real_inflater = reader._new_inflater if inflater == "isal" else reader._ZlibInflater

    class Counting:
        def __init__(self) -> None:
            self.inner = real_inflater()

        def decompress(self, data, max_length):
            out = self.inner.decompress(data, max_length)
            produced.append(len(out))
            return out

        def __getattr__(self, name):
            return getattr(self.inner, name)

    monkeypatch.setattr(reader, "_new_inflater", Counting)
    monkeypatch.setattr(reader, "BLOCK_BYTES", 1 << 20)
    monkeypatch.setattr(reader, "DEFAULT_MAX_BYTES", 4 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(TraceLoadError, match="larger than the limit"):
            load_trace(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(produced) <= (4 << 20) + 1 and max(produced) <= 1 << 20
    assert peak < 8 << 20  # a few blocks, never the inflated whole (64 MB)


@pytest.mark.parametrize("inflater", ["isal", "zlib"])
@pytest.mark.parametrize("input_bytes", [7, 4096, 1 << 20])
def test_every_gzip_member_is_inflated_and_damage_is_named(monkeypatch, inflater: str, input_bytes: int) -> None:
    """Members one after another (and padding zeros after them) are read whole, in blocks of at most
    BLOCK_BYTES, whatever the size of the compressed reads; a truncated member and a wrong checksum are errors.
    Long runs of zeros make blocks that need no new input (the inflater still holds output), random bytes
    blocks that need several reads."""
    import io
    import random

    from profscope.tb_plugin.ingest.chrome import reader

    if inflater == "zlib":
        monkeypatch.setattr(reader, "_new_inflater", reader._ZlibInflater)
    monkeypatch.setattr(reader, "_INPUT_BYTES", input_bytes)
    monkeypatch.setattr(reader, "BLOCK_BYTES", 1000)
    noise = random.Random(7).randbytes(20000)
    first, second = noise[:9000] + bytes(300000) + noise[9000:12000], bytes(5000) + noise[12000:]
    members = gzip.compress(first) + gzip.compress(second)

    def inflated(blob: bytes) -> list[bytes]:
        return list(reader.iter_blocks(io.BytesIO(blob)))

    for blob in (members, members + bytes(8)):
        blocks = inflated(blob)
        assert b"".join(blocks) == first + second
        assert max(map(len, blocks)) <= 1000
    with pytest.raises(reader.TraceReadError, match="truncated"):
        inflated(members[:-30])
    damaged = bytearray(members)
    damaged[-8] ^= 0xFF  # the second member's CRC-32
    with pytest.raises(reader.TraceReadError, match="corrupt"):
        inflated(bytes(damaged))
