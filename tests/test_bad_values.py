"""One value that cannot be read never fails a whole trace: it is dropped, repaired or clamped, the span's
limitations say so (and where), and the rest of the trace loads. Side files and manifests likewise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.chrome import chunks, parallel
from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.ingest.mindspore.minddata import MindDataFormatError, parse_pipeline_csv
from profscope.tb_plugin.ingest.mindspore.step_trace import StepTraceFileError, parse_step_trace_csv
from profscope.tb_plugin.ingest.chrome.metadata import checked_metadata
from profscope.tb_plugin.views.runs.table import manifest_batch_size
from profscope.tb_plugin.views.runs.summary import limitations

from handmade import trace, write, x

GOOD = json.dumps(x("aten::mm", 100, 200)).encode()


def _document(bad: bytes) -> bytes:
    return b'{"traceEvents": [' + GOOD + b", " + bad + b", " + GOOD + b"]}"


def _load(tmp_path: Path, data: bytes):  # noqa: ANN202 - a TraceModel
    path = tmp_path / "t.json"
    path.write_bytes(data)
    return load_trace(str(path))


def _names(model) -> list[str]:  # noqa: ANN001
    return sorted(model.strings[int(n)] for n in model.slices.name)


def _notes(model) -> dict[str, str]:  # noqa: ANN001
    return {item["id"]: item["text"] for item in limitations(model)}


@pytest.mark.parametrize("bad", [
    b'{"ph": "X", "name": "bad", "ts": 1' + b"0" * 400 + b', "dur": 1}',  # an integer no float holds
    b'{"ph": "X", "name": "bad", "ts": 1e400, "dur": 1}',  # a float literal beyond any float
    b'{"ph": "X", "name": "bad", "ts": 1, "dur": -1e300}',  # a float beyond int64 nanoseconds
    b'{"ph": "X", "name": "bad", "ts": "1e300", "dur": 1}',
])
def test_a_time_that_cannot_be_read_drops_its_event_only(tmp_path: Path, bad: bytes) -> None:
    data = _document(bad)
    model = _load(tmp_path, data)
    assert _names(model) == ["aten::mm", "aten::mm"]
    assert model.stats["skipped_phases"] == {"?invalid": 1}
    assert "1 event could not be read" in _notes(model)["invalid_events"]


def test_the_first_unreadable_event_is_located_by_its_byte_offset(tmp_path: Path) -> None:
    bad = b'{"ph": "X", "name": "bad", "ts": 1e400, "dur": 1}'
    data = _document(bad)
    model = _load(tmp_path, data)
    assert model.stats["first_problem_byte"] == data.index(bad)
    assert f"near byte {data.index(bad)} of the JSON" in _notes(model)["invalid_events"]


def test_text_that_is_not_utf8_is_repaired(tmp_path: Path) -> None:
    model = _load(tmp_path, _document(b'{"ph": "X", "name": "conv\xff\xfe2d", "cat": "cpu\xc3\x28op", "ts": 1, "dur": 1}'))
    assert _names(model) == ["aten::mm", "aten::mm", "conv\ufffd\ufffd2d"]
    assert "cpu\ufffd(op" in model.strings
    assert model.stats["repaired_text"] == 1
    assert "1 event had text that is not valid UTF-8" in _notes(model)["repaired_text"]


def test_a_step_number_beyond_64_bits_is_no_step(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "t.json", trace([
        x("ProfilerStep#99999999999999999999999", 0, 100, cat="user_annotation"),
        x("ProfilerStep#7", 100, 100, cat="user_annotation"), x("aten::add", 110, 10)]))))
    assert [model.strings[int(n)] for n in model.steps.name] == ["ProfilerStep#7"]
    assert "1 step marker name(s) with a number too large to read" in _notes(model)["ingest_note"]


def test_values_of_the_helper_half_are_counted_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The forked decode helper (ingest/chrome/parallel.py) reports what it dropped or repaired like the parent does."""
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(chunks, "RESERVE_BYTES", 4096)
    goods = [json.dumps(x(f"op{i}", i * 10, 5)).encode() for i in range(400)]
    bad = b'{"ph": "X", "name": "late \xff", "ts": 1e400, "dur": 1}'
    data = b'{"traceEvents": [' + b", ".join([*goods, bad, json.dumps(x("last", 1, 1)).encode()]) + b"]}"
    # Blocks of 1 KiB, so that chunks go to the helper before the input ends.
    raw = parallel.read_kineto_parallel(
        lambda: chunks.open_events(iter([data[i : i + 1024] for i in range(0, len(data), 1024)])))
    assert raw.stats["chunking"] == "guessed, two processes"
    assert raw.stats["skipped_phases"] == {"?invalid": 1}
    assert raw.stats["first_problem_byte"] == data.index(bad)


def test_metadata_of_the_wrong_type_is_left_out_with_a_note() -> None:
    notes: list[str] = []
    checked = checked_metadata({
        "deviceProperties": [{"id": "zero", "name": "A"}, "gpu", {"id": 1, "name": 5, "totalGlobalMem": "lots",
                                                                   "numSms": 108}],
        "distributedInfo": {"rank": "0", "world_size": 2, "backend": "nccl"},
        "baseTimeNanoseconds": 10 ** 40,
        "schemaVersion": 1,
    }, notes)
    assert checked == {"deviceProperties": [{"id": 1, "numSms": 108}],
                       "distributedInfo": {"world_size": 2, "backend": "nccl"}, "schemaVersion": 1}
    assert len(notes) == 3
    notes.clear()
    good = {"deviceProperties": [{"id": 0, "name": "A100", "totalGlobalMem": 1 << 34}],
            "distributedInfo": {"rank": 1, "world_size": 2, "backend": "nccl"}, "baseTimeNanoseconds": 5}
    assert checked_metadata(good, notes) == good and notes == []


@pytest.mark.parametrize("value, expected", [(32, 32), ([32], None), ("32", None), (0, None), (-1, None),
                                             (True, None), (3.5, None), (None, None)])
def test_only_a_positive_integer_batch_size_counts(value: object, expected: object) -> None:
    assert manifest_batch_size({"batch_size": value}) == expected
    assert manifest_batch_size(None) is None


def test_csv_side_files_with_a_bare_carriage_return_are_format_errors() -> None:
    header = "op_id,op_type,num_workers,output_queue_size,output_queue_length,sample_interval,parent_id,children_id\n"
    with pytest.raises(MindDataFormatError, match="line"):
        parse_pipeline_csv(header + '0,Batch\r,1,"[1,2]",4,10,,"[1]"\n')
    with pytest.raises(StepTraceFileError):
        parse_step_trace_csv(b"step_num,start_point,end_point,total\r1,abc\r2,1,2,3\n")
    rows, _columns, _reduce = parse_step_trace_csv(b"step_num,start_point,end_point,total\r1,0,100,100\r")
    assert [(r.step, r.total) for r in rows] == [(1, 100)]


def test_times_as_numbers_and_as_text_in_different_chunks_are_read_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first decoder takes numbers only; a chunk with text times (MindSpore's spelling) takes the next one,
    which later chunks then start with: both spellings, in any order of chunks, give the same exact times."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1024)
    monkeypatch.setattr(chunks, "RESERVE_BYTES", 1024)

    def event(i: int, as_text: bool) -> bytes:
        ts, dur = 1795303374563000 + i * 10, 3.25
        # Text is read to the ns; a number only to float precision (0.25 µs here), which .5 is exact in.
        spelled = (f'"{ts}.125"', f'"{dur}"') if as_text else (f"{ts}.5", f"{dur}")
        return (f'{{"ph": "X", "name": "op{i}", "cat": "cpu_op", "pid": 1, "tid": 1, '
                f'"ts": {spelled[0]}, "dur": {spelled[1]}}}').encode()

    # Numbers, then text, then numbers again: each run several chunks long.
    events = [event(i, as_text=30 <= i < 60) for i in range(90)]
    data = b'{"traceEvents": [' + b", ".join(events) + b"]}"
    from profscope.tb_plugin.ingest.chrome.decode import decode_events

    raw = decode_events(chunks.open_events(iter([data])))
    assert len(raw.chunk_events) > 6
    assert raw.column("slices", "start", "int64").tolist() == [
        (1795303374563000 + i * 10) * 1000 + (125 if 30 <= i < 60 else 500) for i in range(90)]
    assert raw.column("slices", "dur", "int64").tolist() == [3250] * 90
