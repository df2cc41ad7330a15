"""Telling a Chrome trace by its top level (ingest/chrome/sniff.py) and what discovery makes of it: traces whose
events come after a long header (a benchmark harness's ``metadata`` first) are found, gzipped or plain, whatever
the first key is called; the skipper lands on the end of every value across any cut between blocks; a file whose
header runs past the bound is counted as skipped with that reason; memory stays bounded; the verdict is kept."""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import re
import tracemalloc
from pathlib import Path
from typing import Any, Optional

import pytest

from profscope.tb_plugin.ingest.chrome import sniff
from profscope.tb_plugin.store.discovery import SKIP_TRACE_KEY_TOO_FAR, Discovery, scan
from profscope.tb_plugin.store.storage import LocalStorage

from conftest import real_trace
from test_routes import check

AMD = "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
CONV = "torch213/conv_cpu_memory/worker0.1795303453480506115.pt.trace.json.gz"


def test_chrome_trace_heads() -> None:
    starts = sniff.starts_like_chrome_trace
    assert starts(b'{"traceEvents": [{"ph": "X"')
    assert starts(b'\xef\xbb\xbf\n  {\n  "schemaVersion": 1, "deviceProperties": [')  # Kineto's keys tell at once
    assert starts(b'{"displayTimeUnit": "ns", "metadata": {"highres-ticks": true}, "traceEvents": [')  # JAX
    assert starts(b'{"record_shapes": 1, "traceEvents": [')  # any key first
    assert starts(b'[{"ph": "M", "name": "process_name", "pid": 2}')  # MindSpore's bare arrays
    assert starts(b'[\n{"name": "Default/Conv2D-op1", "args": {"a": [1, {"b": "}"}]}, "ph": "X", "ts": 1}')
    assert starts(b'{"a": "x\\"}\\\\", "b": [1, {"c": "]"}], "n": -1.5e3, "t": true, "z": null, "traceEvents": [')
    assert starts(gzip.compress(b'{"metadata": {"x": [1, 2]}, "traceEvents": [{"ph": "X"}]}'))
    for not_a_trace in (b'{"lr": 0.1}', b'[{"name": "aten::add", "calls": 3}]', b'{"trace_file": "x.json"}',
                        b"not json", b"{", b"[1, 2, 3]", b'{"traceEvents": 3}', b'{"traceEvents": {"ph": "X"}}',
                        # the key's text inside a string value is no key
                        b'{"note": "\\", \\"traceEvents\\": [", "b": 1}', b'{"a": {"traceEvents": []}}',
                        b'[{"name": "x", "args": {"ph": "X"}}]', b'{"a": tru, "traceEvents": ['):
        assert not starts(not_a_trace), not_a_trace
    assert sniff.sniff_trace(io.BytesIO(b"")) == sniff.EMPTY
    assert sniff.sniff_trace(io.BytesIO(b" \n\t ")) == sniff.EMPTY
    assert sniff.sniff_trace(io.BytesIO(b"\x1f\x8b" + b"\xff" * 64)) == sniff.UNREADABLE


def _random_value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(7 if depth < 6 else 4)
    if kind == 0:
        return rng.choice([True, False, None, 0, -12.5e-3, 123456789012345678901234567890])
    if kind in (1, 2, 3):
        # Texts made of what the scan must not be fooled by: quotes, runs of backslashes, brackets, the key itself.
        parts = ['"', "\\", "\\\\", "\\\"", "{", "}", "[", "]", ",", ":", "traceEvents", '"traceEvents": [', "é", "\u2028", "x"]
        return "".join(rng.choice(parts) for _ in range(rng.randrange(12)))
    if kind in (4, 5):
        return {_random_value(rng, 9) if rng.random() < 0.5 else "k": _random_value(rng, depth + 1)
                for _ in range(rng.randrange(5))}
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]


class _Trickle(io.RawIOBase):
    """A stream that hands out its bytes in reads of random small sizes: every cut between blocks is met."""

    def __init__(self, data: bytes, rng: random.Random, largest: int) -> None:
        self._data, self._pos, self._rng, self._largest = data, 0, rng, largest

    def read(self, size: int = -1) -> bytes:
        take = self._rng.randint(1, self._largest)
        out = self._data[self._pos:self._pos + take]
        self._pos += len(out)
        return out


@pytest.mark.parametrize("largest", [1, 3, 17, 4096])
def test_values_are_skipped_to_their_end_across_any_block_cut(largest: int) -> None:
    rng = random.Random(largest)
    for case in range(300):
        header = {f"k{i}": _random_value(rng, 0) for i in range(rng.randrange(1, 4))}
        ensure_ascii = case % 2 == 0
        body = json.dumps(header, ensure_ascii=ensure_ascii, separators=rng.choice([(",", ":"), (", ", ": ")]))
        with_events = body[:-1] + ("," if header else "") + ' "traceEvents": [{"ph": "X"}]}'
        for document, expected in ((with_events, sniff.TRACE), (body, sniff.NOT_A_TRACE)):
            data = document.encode()
            assert sniff.sniff_trace(_Trickle(data, rng, largest)) == expected, document  # type: ignore[arg-type]


def _with_header(events_source: Path, header_bytes: int, first_key: str) -> bytes:
    """A real trace rewritten as a harness writes it: a long first key, then the events, then Kineto's keys."""
    trace = json.loads(gzip.decompress(events_source.read_bytes()))
    rng = random.Random(header_bytes)
    header: dict[str, Any] = {}
    size = 0
    while size < header_bytes:  # configuration-like entries: nested objects, lists, escaped texts
        entry = {"value": rng.random(), "flags": [rng.randrange(99) for _ in range(8)],
                 "path": f"/opt/run \"{len(header)}\"\\bin", "env": {"CUDA_VISIBLE_DEVICES": "9", "seq": [[1, 2], []]}}
        key = f"setting_{len(header)}"
        header[key] = entry
        size += len(json.dumps({key: entry}))
    rest = {key: value for key, value in trace.items() if key != "traceEvents"}
    document = {first_key: header, "traceEvents": trace["traceEvents"], **rest}
    return json.dumps(document).encode()


HEADERS = [(4 << 10, "metadata"), (100 << 10, "zzz anything"), (5 << 20, "r\u00e9glages \\\"quoted\\\"")]


@pytest.mark.parametrize("header_bytes,first_key", HEADERS)
def test_a_header_before_the_events_is_skipped_unparsed(tmp_path: Path, header_bytes: int, first_key: str) -> None:
    data = _with_header(real_trace(CONV), header_bytes, first_key)
    assert data.index(b'"traceEvents"') > header_bytes
    logdir = tmp_path / "logdir"
    (logdir / "bench").mkdir(parents=True)
    (logdir / "bench" / "plain.json").write_bytes(data)
    (logdir / "bench" / "packed.json.gz").write_bytes(gzip.compress(data, 6))
    # The same header without events is no trace (the object ends), gzipped or not.
    no_events = data[:data.index(b', "traceEvents"')] + b"}"
    (logdir / "bench" / "settings.json").write_bytes(no_events)
    (logdir / "bench" / "settings.json.gz").write_bytes(gzip.compress(no_events, 6))
    result = scan(str(logdir))
    assert sorted((s.run, s.worker, s.layout) for s in result.sources) == [
        ("bench", "packed", "chrome"), ("bench", "plain", "chrome")]
    assert result.skipped.counts == {"not_a_chrome_trace": 2}


def test_a_real_shaped_harness_trace_is_listed_and_read(tmp_path: Path, make_client) -> None:
    """The harness's layout, ``{"metadata": {…26 KB…}, "traceEvents": […], "schemaVersion": 1, "deviceProperties": […]}``,
    on a real MI250 trace: found by discovery, read like the original."""
    data = _with_header(real_trace(AMD), 26 << 10, "metadata")
    assert data.startswith(b'{"metadata": {') and data.index(b'"traceEvents"') > 26 << 10
    assert data.index(b'"schemaVersion"') > data.index(b'"traceEvents"')
    logdir = tmp_path / "logdir"
    (logdir / "harness").mkdir(parents=True)
    (logdir / "harness" / "mi250_step.json.gz").write_bytes(gzip.compress(data, 6))
    original = logdir / "original" / "rank0.json.gz"
    original.parent.mkdir()
    original.write_bytes(real_trace(AMD).read_bytes())
    for path in (logdir / "harness" / "mi250_step.json.gz", original):
        os.utime(path, (1e9, 1e9))
    client = make_client(logdir)
    client.settle()
    status, runs = client.get("runs")
    assert status == 200 and {r["name"]: r["status"] for r in runs["runs"]} == {"harness": "ready", "original": "ready"}
    check(runs, "Runs")
    status, harness = client.get("summary", run="harness", worker="mi250_step", span="mi250_step.json.gz")
    status_original, original_summary = client.get("summary", run="original", worker="rank0", span="rank0.json.gz")
    assert status == status_original == 200
    assert harness["events"] == original_summary["events"] > 0
    assert harness["framework"] == original_summary["framework"] == "pytorch"


def test_a_header_beyond_the_bound_is_skipped_with_that_reason(tmp_path: Path) -> None:
    logdir = tmp_path / "logdir"
    (logdir / "bench").mkdir(parents=True)
    blob = b'{"metadata": {"log": "' + b"x" * (sniff.SNIFF_LIMIT_BYTES + (1 << 20)) + b'"}, "traceEvents": []}'
    (logdir / "bench" / "huge_header.json.gz").write_bytes(gzip.compress(blob, 1))
    (logdir / "bench" / "trace.json").write_bytes(b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}]}')
    result = scan(str(logdir))
    assert [s.worker for s in result.sources] == ["trace"]
    assert result.skipped.counts == {SKIP_TRACE_KEY_TOO_FAR: 1}
    assert result.skipped.examples[SKIP_TRACE_KEY_TOO_FAR] == ["bench/huge_header.json.gz"]


def test_sniffing_holds_one_block_whatever_the_header_size() -> None:
    peaks = {}
    for megabytes in (2, 12):
        entry = b'{"a": [1, 2.5, "t\\"x", {"b": null}], "c": "' + b"y" * 40 + b'"}, '
        data = b'{"metadata": [' + entry * ((megabytes << 20) // len(entry)) + b'1], "traceEvents": []}'
        stream = io.BytesIO(gzip.compress(data, 1))
        del data
        tracemalloc.start()
        try:
            assert sniff.sniff_trace(stream) == sniff.TRACE
            peaks[megabytes] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    # A few MB (two blocks of 1 MB and the scan's arrays over one of them), not the header's size.
    assert peaks[12] < 24 << 20 and peaks[12] < 1.5 * peaks[2], peaks


class _CountingStorage(LocalStorage):
    def __init__(self, logdir: str) -> None:
        super().__init__(logdir)
        self.reads: list[tuple[str, int]] = []

    def read_head(self, location: str, limit: int) -> Optional[bytes]:
        self.reads.append((os.path.basename(location), 0))
        return super().read_head(location, limit)

    def read_range(self, location: str, start: int, limit: int) -> Optional[bytes]:
        self.reads.append((os.path.basename(location), start))
        return super().read_range(location, start, limit)


def test_a_long_header_is_read_as_far_as_needed_and_once(tmp_path: Path) -> None:
    logdir = tmp_path / "logdir"
    (logdir / "bench").mkdir(parents=True)
    data = _with_header(real_trace(CONV), 3 << 20, "metadata")
    data = data[:-1] + b', "trailer": "' + b"z" * (4 << 20) + b'"}'  # never read
    (logdir / "bench" / "plain.json").write_bytes(data)
    (logdir / "bench" / "short.json").write_bytes(b'{"traceEvents": []}' + b" " * (1 << 20))
    os.utime(logdir / "bench" / "plain.json", (1e9, 1e9))
    os.utime(logdir / "bench" / "short.json", (1e9, 1e9))
    storage = _CountingStorage(str(logdir))
    discovery = Discovery(str(logdir), storage=storage)
    found, _ = discovery.complete_sources()
    assert sorted(s.worker for s in found) == ["plain", "short"]
    # The short one tells from its first read; the long one is read in ranges up to just past its header.
    assert [start for name, start in storage.reads if name == "short.json"] == [0]
    starts = [start for name, start in storage.reads if name == "plain.json"]
    assert starts[0] == 0 and max(starts) < data.index(b'"traceEvents"')
    assert max(starts) + (1 << 20) < data.index(b'"trailer"')
    storage.reads.clear()
    again, _ = discovery.complete_sources()
    assert storage.reads == [] and again == found


def test_a_benchmark_harness_s_real_traces_are_found() -> None:
    """TraceLens's harness traces (H100, MI300X; ``<model>__<id>.json.gz``) write 23–26 KB of ``metadata`` before
    ``traceEvents``: a look at the first 4 KB skipped them as no Chrome trace."""
    folder = real_trace("tracelens")
    harness = sorted(folder.rglob("*__*.json.gz"))
    assert len(harness) >= 2
    for path in harness:
        head = gzip.decompress(path.read_bytes())
        assert re.match(rb'\{\s*"metadata"\s*:', head), path
        assert head.index(b'"traceEvents"') > 20 << 10, path
    found = {s.path for s in scan(str(folder)).sources}
    assert {str(path) for path in harness} <= found
