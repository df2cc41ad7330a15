"""The decoder's fast path (``ingest/chrome/_columnar.c`` through ``columnar.py``) against the msgspec path.

For every document here, decoding with the C scanner and decoding with it turned off
(``PROFSCOPE_COLUMNAR=0``) must give equal raw columns (every table, column, string id, statistic) or the
same error. The documents: the real traces of tests/data, the hostile corpus, hand-written edge cases of
the JSON the scanner reads itself, and real chunks with random damage. Other tests check that the fast
path is really taken (so the comparison is not between two runs of the msgspec path).

``make test`` sets ``PROFSCOPE_REQUIRE_COLUMNAR=1``: there a missing C module fails these tests instead of
skipping them.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from pathlib import Path
from typing import Any, Iterator

import msgspec
import numpy as np
import pytest

from profscope.tb_plugin.ingest.chrome import chunk_reader, columnar, decode, events
from profscope.tb_plugin.ingest.chrome.chunks import TraceFormatError, open_events
from profscope.tb_plugin.model.raw_columns import RawColumns

import hostile_corpus
from conftest import real_trace

if not columnar.AVAILABLE:
    if os.environ.get("PROFSCOPE_REQUIRE_COLUMNAR") == "1":
        pytest.fail("the C module ingest/chrome/_columnar was not built (is a C compiler installed?)",
                    pytrace=False)
    pytest.skip("the C module ingest/chrome/_columnar was not built", allow_module_level=True)

RESNET = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
REAL = [
    RESNET,
    "hta/nccl_parser_config/nccl_data.json.gz",
    "hta/mtia_inference_trace/mtia_inference_rank_0.json.gz",
    "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/sampled_ws128_trace_filter/sampled_rank-0.json.gz",
    "torch213/ddp_gloo_2ranks/rank0.1795303450949782497.pt.trace.json.gz",
    "torch213/transformer_infer/worker0.1795303443272268206.pt.trace.json.gz",
    "torch213/conv_cpu_memory/worker0.1795303453480506115.pt.trace.json.gz",
]


class _Counting:
    """Counts the chunks the fast path read (``read_scanned`` said yes) and all chunks decoded."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.scanned = 0
        self.chunks = 0
        read_scanned, decode_chunk = chunk_reader.ChunkReader.read_scanned, decode.decode_chunk

        def counted_read(reader: Any, *args: Any) -> bool:
            taken = read_scanned(reader, *args)
            self.scanned += taken
            return taken

        def counted_chunk(*args: Any, **kwargs: Any) -> int:
            self.chunks += 1
            return decode_chunk(*args, **kwargs)

        monkeypatch.setattr(chunk_reader.ChunkReader, "read_scanned", counted_read)
        monkeypatch.setattr(decode, "decode_chunk", counted_chunk)


def _decode(data: bytes, monkeypatch: pytest.MonkeyPatch, fast: bool) -> Any:
    """The raw columns of ``data`` (a whole JSON document), or the error, with or without the fast path."""
    monkeypatch.setenv("PROFSCOPE_COLUMNAR", "1" if fast else "0")
    try:
        return decode.decode_events(open_events(iter([bytearray(data)])))
    except (TraceFormatError, RecursionError) as error:  # load.py turns both into the run's error
        return error


def _columns(raw: RawColumns) -> dict[str, Any]:
    tables = {
        f"{table}.{name}": np.concatenate(parts) for table, columns in raw.parts.items() for name, parts in columns.items()
    }
    return {
        "tables": tables, "strings": raw.strings.strings, "stats": raw.stats, "events": raw.num_events,
        "meta": raw.meta_events, "flow_id_strings": raw.flow_id_strings, "chunk_events": raw.chunk_events,
        "chunk_strings": raw.chunk_strings, "part_chunks": raw.part_chunks,
    }


def _assert_same(fast: Any, slow: Any, what: str) -> None:
    if isinstance(slow, Exception) or isinstance(fast, Exception):
        assert type(fast) is type(slow) and str(fast) == str(slow), f"{what}: {fast!r} != {slow!r}"
        return
    a, b = _columns(fast), _columns(slow)
    assert a["tables"].keys() == b["tables"].keys(), what
    for name, column in b["tables"].items():
        other = a["tables"][name]
        assert other.dtype == column.dtype, f"{what}: {name} {other.dtype} != {column.dtype}"
        assert np.array_equal(other, column, equal_nan=column.dtype.kind == "f"), f"{what}: {name} differs"
    for key in a:
        if key != "tables":
            assert a[key] == b[key], f"{what}: {key} differs"


def _same_both_ways(data: bytes, monkeypatch: pytest.MonkeyPatch, what: str) -> Any:
    fast = _decode(data, monkeypatch, True)
    _assert_same(fast, _decode(data, monkeypatch, False), what)
    return fast


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


@pytest.mark.parametrize("relative", REAL)
def test_real_traces_decode_alike(relative: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _same_both_ways(_read(real_trace(relative)), monkeypatch, relative)


def test_the_fast_path_reads_most_chunks_of_a_real_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _read(real_trace(RESNET))
    counting = _Counting(monkeypatch)
    _decode(data, monkeypatch, True)
    # All but the chunk that holds the metadata events (ph M), which need event objects.
    assert counting.chunks >= 10 and counting.scanned >= counting.chunks - 1, (counting.scanned, counting.chunks)
    counting.scanned = counting.chunks = 0
    _decode(data, monkeypatch, False)
    assert counting.scanned == 0 and counting.chunks >= 10


def _hostile_documents() -> Iterator[tuple[str, bytes]]:
    for name, entry in hostile_corpus._content_cases().items():
        content = entry[0] if isinstance(entry, tuple) else entry
        if isinstance(content, bytes):
            if content[:2] == b"\x1f\x8b":  # the gzip cases test the inflater, not the decoder
                continue
            yield name, content


def test_hostile_documents_decode_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = list(_hostile_documents())
    assert len(cases) > 50
    for name, content in cases:
        _same_both_ways(content, monkeypatch, name)


def _event(**fields: Any) -> dict[str, Any]:
    event = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 100, "dur": 5}
    event.update(fields)
    return event


def _document(*events: bytes) -> bytes:
    return b'{"traceEvents": [' + b",\n".join(events) + b"]}"


def _json(event: dict[str, Any]) -> bytes:
    return json.dumps(event, ensure_ascii=False).encode()


# Events the scanner reads itself: each must give what msgspec's structs give.
READ_HERE = {
    "kernel": _json(_event(cat="kernel", name="gemm", pid=0, tid=7, args={
        "correlation": 9, "External id": 3, "device": 0, "stream": 7, "grid": [1, 2, 3], "block": [32, 1, 1],
        "blocks per SM": 0.5, "warps per SM": 4, "est. achieved occupancy %": 12, "bytes": 1 << 40,
        "unknown": {"deep": [1, [2, {"x": None}], True, False, "\\u00e9\\n"]}})),
    "operator": _json(_event(args={"External id": 5, "Input Dims": [[8, 1], []], "Input type": ["float", ""],
                                   "Concrete Inputs": ["", "[2, 2]"], "Call stack": "a.py(1): f;b.py(2): g",
                                   "Sequence number": 17})),
    "python": _json(_event(cat="python_function", name="nn.Module: Linear",
                           args={"Python id": 4, "Python parent id": None})),
    "collective": _json(_event(name="record_param_comms", args={
        "Collective name": "allreduce", "In msg nelems": 10, "Out msg nelems": 10, "dtype": "Float",
        "Group size": 2})),
    "memory": _json({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1,
                     "ts": 50, "args": {"Addr": 140000, "Bytes": -64, "Total Allocated": 0, "Total Reserved": 2048,
                                        "Device Type": 1, "Device Id": 0}}),
    "flows": b",".join([
        _json({"ph": "s", "id": 12, "pid": 1, "tid": 2, "ts": 101, "cat": "ac2g", "name": "ac2g"}),
        _json({"ph": "f", "id": 12, "pid": 0, "tid": 7, "ts": 110, "cat": "ac2g", "name": "ac2g", "bp": "e"}),
        _json({"ph": "s", "id": "fwdbwd", "pid": 1, "tid": 2, "ts": 102, "cat": "fwdbwd", "name": "fwdbwd"}),
        _json({"ph": "t", "id": -5, "pid": 1, "tid": 2, "ts": 103, "cat": "x", "name": "x"}),
    ]),
    "text_tids": _json(_event(pid="Spans", tid="stream 7")) + b"," + _json(_event(pid=7, tid="7")),
    "non_ascii_text": _json(_event(name="opé ∑ 😀", cat="用户")),
    "numbers": b",".join(_json(_event(ts=ts, dur=dur)) for ts, dur in [
        (1623142623460111, 0), (4446416051338.762, 1.5), (0.1, 1e-3), (-0.0, 2.5e2), (9007199254740993, 7),
        (1234567890123456, 1), (9.1e15, 0.30000000000000004), (1e-320, 5e-324),
        (2 ** 53, 3.14159265358979323846)]),
    "number_spellings": b'{"ph": "X", "name": "a", "ts": 1E2, "dur": 2.50e-1, "pid": -0, "tid": 0, "cat": ""},'
                        b'{"ph":"X","name":"b","ts":0.000001,"dur":1e+2,"pid":1,"tid":1,"cat":"c","args":{}}',
    "white_space": b'\t{ "ph" :\r\n"X" , "name":"w","ts"\n:\n1,"dur":2,"pid":3,"tid":4 ,"args" : { } }\n',
    "defaults": b'{}, {"ph": "X"}, {"args": {}}',
    "other_phases": b'{"ph": "X", "name": "a"}, {"ph": "n", "name": "b"}, {"ph": "P", "ts": 5}, {"ph": "?"}',
    "key_order": _json({"args": {"External id": 2}, "dur": 1, "ts": 5, "tid": 2, "pid": 1, "name": "z", "ph": "X"}),
}

# Events the scanner leaves to msgspec (the chunk falls back): results must still be equal.
LEFT_TO_MSGSPEC = {
    "escape_in_name": b'{"ph": "X", "name": "a\\"b\\u00e9", "ts": 1, "dur": 1, "pid": 1, "tid": 1}',
    "escape_in_key": b'{"p\\u0068": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}',
    "duplicate_key": b'{"ph": "X", "name": "a", "name": "b", "ts": 1, "dur": 1, "pid": 1, "tid": 1}',
    "text_time": b'{"ph": "X", "name": "a", "ts": "1795303374563996.947", "dur": "1.5", "pid": 1, "tid": 1}',
    "float_pid": b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1.5, "tid": 1}',
    "null_name": b'{"ph": "X", "name": null, "ts": 1, "dur": 1, "pid": 1, "tid": 1}',
    "null_args": b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1, "args": null}',
    "text_stream": b'{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "pid": 1, "tid": 1, '
                   b'"args": {"stream": "0x0"}}',
    "huge_int": b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1, '
                b'"args": {"External id": 18446744073709551615, "Addr": 9223372036854775808}}',
    "huge_time": b'{"ph": "X", "name": "a", "ts": 1e300, "dur": 1, "pid": 1, "tid": 1}',
    "nineteen_digits": b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1234567890123456789, "tid": 1}',
    "metadata": b'{"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "main"}}',
    "counter": b'{"ph": "C", "name": "mem", "pid": 1, "tid": 0, "ts": 3, "args": {"used": 5}}',
    "begin_end": b'{"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 1}, {"ph": "E", "pid": 1, "tid": 1, "ts": 2}',
    "paddle_memory": b'{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, '
                     b'"args": {"addr": 5, "current_allocated": 10, "place": "Place(gpu:0)"}}',
    "invalid_utf8": b'{"ph": "X", "name": "a\xff\xfe", "ts": 1, "dur": 1, "pid": 1, "tid": 1}',
    "overlong_utf8": b'{"ph": "X", "name": "a\xc0\xaf", "ts": 1, "dur": 1, "pid": 1, "tid": 1}',
    "encoded_surrogate": b'{"ph": "X", "name": "a\xed\xa0\x80", "ts": 1, "dur": 1, "pid": 1, "tid": 1}',
    "lone_surrogate_escape": b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1, '
                             b'"args": {"x": "\\ud800"}}',
    "control_character": b'{"ph": "X", "name": "a\x01", "ts": 1, "dur": 1, "pid": 1, "tid": 1}',
    "leading_zero": b'{"ph": "X", "name": "a", "ts": 01, "dur": 1, "pid": 1, "tid": 1}',
    "bare_word": b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1, "args": {"x": nul}}',
    "not_an_object": b'[1, 2], "text", 3',
    "trailing_comma": b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1,}',
    "deep_args": b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1, "args": {"x": '
                 + b"[" * 100 + b"]" * 100 + b"}}",
}


@pytest.mark.parametrize("case", sorted(READ_HERE))
def test_events_read_here_decode_alike(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting(monkeypatch)
    data = _document(READ_HERE[case])
    _same_both_ways(data, monkeypatch, case)
    # The first decode above was the fast one: it must have read the chunk itself.
    assert counting.scanned >= 1, case


@pytest.mark.parametrize("case", sorted(LEFT_TO_MSGSPEC))
def test_events_left_to_msgspec_decode_alike(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting(monkeypatch)
    good = _json(_event())
    _same_both_ways(_document(good, LEFT_TO_MSGSPEC[case], good), monkeypatch, case)
    assert counting.scanned == 0, case


def test_numbers_are_read_as_msgspec_reads_them() -> None:
    """Times and float arguments: the scanner's float64 is msgspec's, bit for bit, for many spellings."""
    rng = random.Random(7)
    texts = ["0", "-0", "1", "0.5", "1e22", "1e23", "9007199254740993", "4446416051338.762", "2.2250738585072014e-308"]
    for _ in range(3000):
        kind = rng.randrange(4)
        if kind == 0:
            texts.append(str(rng.randrange(10 ** rng.randrange(1, 19))))
        elif kind == 1:
            texts.append(f"{rng.randrange(10 ** 16)}.{rng.randrange(10 ** rng.randrange(1, 12))}")
        elif kind == 2:
            texts.append(repr(rng.uniform(-1e6, 1e16)))
        else:
            texts.append(f"{rng.randrange(1, 10 ** 17)}e{rng.randrange(-30, 30)}")
    events = b",".join(b'{"ph":"X","ts":%s,"dur":1,"args":{"blocks per SM":%s}}' % (t.encode(), t.encode())
                       for t in texts)
    scanner = columnar.Scanner()
    chunk = scanner.scan(b"[" + events + b"]")
    assert chunk is not None
    expected = [msgspec.json.decode(t.encode(), type=float) for t in texts]
    assert chunk["ts"].tolist() == expected
    assert chunk["blocks_per_sm"].tolist() == expected


def test_damaged_chunks_decode_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random damage to a real trace's events: both paths give the same columns or the same error (and the
    scanner never reads past its buffer: a crash here would end the test process)."""
    data = _read(real_trace(RESNET))
    start = data.index(b'"traceEvents"')
    body = data[start : start + 60_000]
    body = body[: body.rindex(b"},") + 1]  # whole events
    rng = random.Random(11)
    alphabet = b'{}[]",:\\ \n0123456789.-eE+tfnulx\xff\xc3\xa9'
    for trial in range(150):
        damaged = bytearray(body)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(damaged))
            action = rng.randrange(3)
            if action == 0:
                damaged[at] = rng.choice(alphabet)
            elif action == 1:
                del damaged[at : at + rng.randrange(1, 40)]
            else:
                damaged[at:at] = bytes([rng.choice(alphabet)])
        _same_both_ways(b"{" + bytes(damaged) + b"]}", monkeypatch, f"damage trial {trial}")


def test_the_scanner_knows_every_argument_the_structs_read() -> None:
    """A key ``events.Args`` or ``events.Event`` reads but the scanner skips would be lost on the fast path:
    the scanner lists every one, read or left to msgspec."""
    fields = {(scope, key): kind for scope, key, kind in columnar._columnar.FIELDS}
    for info in msgspec.structs.fields(events.Args):
        assert ("args", info.encode_name) in fields, info.encode_name
    for info in msgspec.structs.fields(events.Event):
        assert ("event", info.encode_name) in fields, info.encode_name
    columns = {name for name, _dtype in columnar._columnar.LAYOUT}
    attrs = {info.name for info in msgspec.structs.fields(events.Args)}
    assert columns - {"ts", "dur", "ph", "name", "cat", "pid", "tid", "id", "bp"} <= attrs


def test_texts_are_interned_across_chunks() -> None:
    scanner = columnar.Scanner()
    first = scanner.scan(b'[{"name": "a", "pid": 1}, {"name": "b", "pid": "1"}]')
    second = scanner.scan(b'[{"name": "b", "pid": 1}]')
    assert first is not None and second is not None
    assert first["name"][1] == second["name"][0] != first["name"][0]
    assert first["pid"][0] == second["pid"][0] != first["pid"][1]  # 1 and "1" are two texts
    assert scanner.texts.values(np.concatenate([first["name"], first["pid"]])) == ["a", "b", 1, "1"]
    assert scanner.scan(b'[{"name": "a"},]') is None  # not JSON: left to msgspec


@pytest.mark.parametrize("special", [b"\xff", b"\x01", b'\\"', "é".encode(), b"\\n", b"\xe2\x82", b'"'])
def test_special_bytes_anywhere_in_a_long_text_decode_alike(special: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scanner looks at 16 bytes at a time inside texts: a byte that stops it must be seen at every offset."""
    events = [
        b'{"ph": "X", "name": "%s%s%s", "ts": 1, "dur": 1, "pid": 1, "tid": 1, "args": {"Call stack": "%s%s"}}'
        % (b"n" * offset, special, b"m" * 20, b"c" * offset, special)
        for offset in range(40)
    ]
    for event in events:
        _same_both_ways(_document(_json(_event()), event), monkeypatch, repr(event))
