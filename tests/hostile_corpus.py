"""A generated corpus of hostile files for a shared logdir: each entry is its own run.

What a teammate who can write into a logdir may put there: broken containers (gzip, JSON), documents
of the wrong shape, events whose values have the wrong types or cannot be represented, hostile text
(invalid UTF-8, markup, control characters), degenerate steps, flows, B/E pairs, counters and memory
events, hostile metadata, hostile writer manifests and MindSpore side files, and special files
(FIFOs, links out of the logdir, devices). ``write_corpus`` writes them all; the test
(``test_hostile_corpus.py``) asks that every run settles, that the good runs beside them load, and
that no route answers 500.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

TRACE = "worker0.1.pt.trace.json"
# Runs that must fail, each with a message: what is not a trace at all (broken containers and documents).
MUST_FAIL = frozenset({
    "gzip_truncated", "gzip_corrupt", "gzip_of_garbage", "gzip_empty", "gzip_only_magic", "json_empty",
    "json_whitespace", "json_unterminated", "json_trailing_garbage", "json_nan_literal", "json_infinity_literal",
    "json_utf16", "json_deep_nesting_args", "json_deep_nesting_top", "json_nul_bytes", "top_number", "top_string",
    "top_null", "events_object", "events_string", "events_null", "lone_surrogate_escape",
})
# The operator that every trace built around hostile events holds (``_with_good_events``, ``_raw_events``).
GOOD_OPERATOR = "aten::mm"


def _event(name: Any = "op", ts: Any = 10, dur: Any = 5, ph: Any = "X", cat: Any = "cpu_op", pid: Any = 1,
           tid: Any = 1, **extra: Any) -> dict[str, Any]:
    return {"ph": ph, "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, **extra}


def _doc(events: list[Any], **top: Any) -> bytes:
    return json.dumps({"schemaVersion": 1, **top, "traceEvents": events}).encode()


def _with_good_events(*events: Any, **top: Any) -> bytes:
    """The hostile events between ordinary ones: a step, an operator and a kernel that must still load."""
    good = [
        _event("ProfilerStep#1", 0, 1000, cat="user_annotation"),
        _event("aten::mm", 100, 200, args={"External id": 7}),
        _event("cudaLaunchKernel", 150, 10, cat="cuda_runtime", args={"correlation": 9, "External id": 7}),
        _event("gemm_kernel", 300, 100, cat="kernel", pid=0, tid=7, args={"correlation": 9, "device": 0, "stream": 7}),
    ]
    return _doc([*good[:2], *events, *good[2:]], **top)


def _raw_events(*fragments: bytes) -> bytes:
    """A document whose hostile events are raw JSON text (values json.dumps cannot write)."""
    good = json.dumps(_event("aten::mm", 100, 200)).encode()
    return b'{"traceEvents": [' + b", ".join([good, *fragments, good]) + b"]}"


def _steps(*ranges: tuple[Any, Any, Any]) -> bytes:
    return _doc([_event(f"ProfilerStep#{n}", ts, dur, cat="user_annotation") for n, ts, dur in ranges]
                + [_event("aten::add", 5, 1)])


# name → (file content, or a callable making a special file at the path)
Entry = Any


def _content_cases() -> dict[str, Entry]:
    cases: dict[str, Entry] = {}
    valid = _doc([_event()])
    # Containers.
    cases["gzip_truncated"] = gzip.compress(valid)[:-10]
    cases["gzip_corrupt"] = b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"not deflate at all"
    cases["gzip_of_garbage"] = gzip.compress(b"\x00\xff" * 5000)
    cases["gzip_empty"] = gzip.compress(b"")
    cases["gzip_trailing_junk"] = gzip.compress(valid) + b"junk after the member"
    cases["gzip_only_magic"] = b"\x1f\x8b"
    # JSON.
    cases["json_empty"] = b""
    cases["json_whitespace"] = b" \n\t " * 100
    cases["json_unterminated"] = valid[:-5]
    cases["json_trailing_garbage"] = valid + b"}}]]garbage"
    cases["json_nan_literal"] = b'{"traceEvents": [{"ph": "X", "ts": NaN, "dur": 1}]}'
    cases["json_infinity_literal"] = b'{"traceEvents": [{"ph": "X", "ts": Infinity, "dur": 1}]}'
    cases["json_bom"] = b"\xef\xbb\xbf" + valid
    cases["json_utf16"] = valid.decode().encode("utf-16")
    cases["json_deep_nesting_args"] = (b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "args": {"x": '
                                       + b"[" * 200000 + b"]" * 200000 + b"}}]}")
    cases["json_deep_nesting_top"] = b'{"meta": ' + b"[" * 200000 + b"]" * 200000 + b', "traceEvents": []}'
    cases["json_nul_bytes"] = b"\x00" * 4096
    cases["json_duplicate_keys"] = b'{"traceEvents": [], "traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}]}'
    # Document shapes.
    cases["top_array_of_events"] = json.dumps([_event(), _event("b", 20, 5)]).encode()
    cases["top_number"] = b"42"
    cases["top_string"] = b'"traceEvents"'
    cases["top_null"] = b"null"
    cases["events_object"] = b'{"traceEvents": {"0": {"ph": "X"}}}'
    cases["events_string"] = b'{"traceEvents": "[]"}'
    cases["events_null"] = b'{"traceEvents": null}'
    cases["events_empty"] = b'{"traceEvents": []}'
    cases["events_numbers"] = b'{"traceEvents": [1, 2, 3]}'
    cases["events_mixed_non_objects"] = _doc([1, "x", None, [], True, _event()])
    cases["events_nested_lists"] = _doc([[_event()], [[_event()]]])
    # Event fields of the wrong type.
    for field, values in {
        "ph": [7, ["X"], None, {"a": 1}, "", "XX"],
        "name": [{"a": 1}, ["a"], 3.5, None, True],
        "cat": [5, ["kernel"], None],
        "ts": ["abc", True, None, [1], {"a": 1}, "1e400", "-", -1e18, 1e300, -1e300],
        "dur": [-5, "x", 1e300, None, [2], -1e300],
        "pid": [1.5, {"a": 1}, -1, True, None, [1]],
        "tid": [2.5, {"b": 2}, None, ["t"]],
        "args": [[1, 2], "text", 5, None],
        "id": [1.5, {"x": 1}, [1]],
    }.items():
        for index, value in enumerate(values):
            cases[f"field_{field}_{index}"] = _with_good_events(_event(**{field: value}) if field != "id"
                                                                else _event(ph="s", cat="ac2g", id=value))
    # Values no number type holds.
    cases["ts_int_1e400"] = _raw_events(b'{"ph": "X", "name": "a", "ts": 1' + b"0" * 400 + b', "dur": 1}')
    cases["ts_float_1e400"] = _raw_events(b'{"ph": "X", "name": "a", "ts": 1e400, "dur": 1}')
    cases["dur_float_1e400"] = _raw_events(b'{"ph": "X", "name": "a", "ts": 1, "dur": -1e400}')
    cases["pid_int_1e30"] = _raw_events(b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1' + b"0" * 30 + b"}")
    cases["args_ints_1e30"] = _raw_events(b'{"ph": "X", "name": "a", "cat": "kernel", "ts": 1, "dur": 1, "args": '
                                          b'{"correlation": 1' + b"0" * 30 + b', "External id": -1' + b"0" * 30
                                          + b', "device": 1e400}}')
    cases["external_id_text"] = _with_good_events(_event(args={"External id": "seven", "Input Dims": "[[1]]"}))
    # Hostile text.
    cases["name_invalid_utf8"] = _raw_events(b'{"ph": "X", "name": "bad \xff\xfe name", "ts": 1, "dur": 1}')
    cases["cat_invalid_utf8"] = _raw_events(b'{"ph": "X", "name": "a", "cat": "\xc3\x28", "ts": 1, "dur": 1}')
    cases["args_invalid_utf8"] = _raw_events(b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "args": {"k": "\xed\xa0\x80"}}')
    cases["lone_surrogate_escape"] = _raw_events(b'{"ph": "X", "name": "\\ud800 alone", "ts": 1, "dur": 1}')
    cases["nul_in_name"] = _with_good_events(_event("a\u0000b"))
    cases["markup_names"] = _with_good_events(
        _event("<img src=x onerror=alert(1)>"), _event("</script><script>alert(1)</script>", cat="<b>kernel</b>"),
        _event("\u202e\u0007\x1b[31mcontrol"), _event("javascript:alert(1)", pid="<svg/onload=alert(1)>"))
    cases["huge_name"] = _with_good_events(_event("n" * (4 << 20)))
    cases["many_distinct_names"] = _doc([_event(f"op{i}", i, 1) for i in range(20000)])
    cases["many_threads"] = _doc([_event("op", i, 1, tid=i) for i in range(5000)])
    # Steps.
    cases["step_number_huge"] = _steps(("99999999999999999999999", 0, 100), (2, 100, 100))
    cases["step_number_int64_max"] = _steps((9223372036854775807, 0, 100), (9223372036854775806, 100, 100))
    cases["step_number_negative"] = _steps(("-1", 0, 100), (1, 100, 100))
    cases["steps_overlapping"] = _steps((1, 0, 100), (2, 50, 100), (3, 60, 10), (9223372036854775807, 0, 10 ** 9))
    cases["steps_zero_and_negative_dur"] = _steps((1, 0, 0), (2, 10, -5), (3, 20, 10))
    cases["steps_far_apart"] = _steps((1, 0, 10), (2, 9.0e15, 10))
    cases["steps_many"] = _steps(*((i, i * 10, 10) for i in range(1, 50001)))
    cases["step_duplicates"] = _steps((1, 0, 10), (1, 0, 10), (1, 5, 100))
    # Flows, B/E, async, instants, counters.
    cases["flows_unpaired"] = _with_good_events(
        {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 5, "cat": "ac2g"},
        {"ph": "f", "id": 2, "pid": 0, "tid": 7, "ts": 6, "cat": "ac2g", "bp": "e"},
        {"ph": "t", "id": "x", "pid": 1, "tid": 1, "ts": 7},
        {"ph": "f", "id": 10 ** 30, "pid": 1, "tid": 1, "ts": 8})
    cases["begin_end_unbalanced"] = _with_good_events(
        {"ph": "E", "pid": 1, "tid": 3, "ts": 1}, {"ph": "B", "name": "open", "pid": 1, "tid": 3, "ts": 2},
        {"ph": "E", "pid": 1, "tid": 4, "ts": 1}, {"ph": "b", "name": "a", "id": 3, "cat": "c", "pid": 1, "ts": 4},
        {"ph": "e", "name": "a", "id": {"x": 1}, "cat": "c", "pid": 1, "ts": 2})
    cases["begin_deep"] = _doc([{"ph": "B", "name": f"b{i}", "pid": 1, "tid": 1, "ts": i} for i in range(50000)])
    cases["instants_hostile"] = _with_good_events(
        {"ph": "i", "s": 7, "name": None, "pid": 1, "tid": 1, "ts": "x"}, {"ph": "I", "name": "g", "ts": 1e300})
    cases["counters_hostile"] = _with_good_events(
        {"ph": "C", "name": "util", "pid": 0, "ts": 1, "args": {"util": "high"}},
        {"ph": "C", "name": "util", "pid": 0, "ts": 2, "args": [1, 2]},
        {"ph": "C", "name": "util", "pid": 0, "ts": 3, "args": {"a": 1e308, "b": -1e308, "c": None}},
        {"ph": "C", "name": {"x": 1}, "pid": 0, "ts": 4, "args": {"util": 0.5}})
    cases["memory_hostile"] = _with_good_events(
        {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 5, "cat": "cpu_instant_event",
         "args": {"Addr": "x", "Bytes": 10 ** 30, "Total Allocated": -1, "Device Type": "GPU", "Device Id": [0]}},
        {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 6, "cat": "cpu_instant_event",
         "args": {"Addr": 1, "Bytes": -(10 ** 18), "Total Allocated": 1e300, "Total Reserved": "1", "Device Id": 99}})
    cases["kernel_args_hostile"] = _with_good_events(_event(
        "k", 300, 10, cat="kernel", pid=0, tid=7,
        args={"grid": "big", "block": 5, "blocks per SM": "many", "est. achieved occupancy %": 1e300,
              "registers per thread": [1], "shared memory": {"a": 1}, "device": "zero", "stream": -1}))
    # Metadata.
    cases["metadata_hostile"] = _with_good_events(
        {"ph": "M", "name": "process_name", "pid": 1, "args": "python"},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": 5}},
        {"ph": "M", "name": "process_sort_index", "pid": 1, "args": {"sort_index": "first"}},
        {"ph": "M", "name": "process_labels", "pid": 1, "args": {"labels": ["a"]}},
        {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 1, "args": {"sort_index": 10 ** 30}})
    cases["device_properties_hostile"] = _with_good_events(
        deviceProperties=[{"id": "zero", "name": 5, "totalGlobalMem": "lots", "computeMajor": None, "numSms": -1},
                          "not a dict", 7, {"id": 10 ** 30, "name": "<b>GPU</b>"}])
    cases["device_properties_string"] = _with_good_events(deviceProperties="A100")
    cases["distributed_info_hostile"] = _with_good_events(
        distributedInfo={"rank": "zero", "world_size": -4, "backend": ["nccl"]})
    cases["distributed_info_list"] = _with_good_events(distributedInfo=[1, 2])
    cases["base_time_hostile"] = _with_good_events(baseTimeNanoseconds="yesterday")
    cases["base_time_huge"] = _raw_events(b'{"ph": "X", "name": "a", "ts": 1, "dur": 1}').replace(
        b'{"traceEvents"', b'{"baseTimeNanoseconds": 1' + b"0" * 40 + b', "traceEvents"')
    return cases


def _writer_cases() -> dict[str, tuple[bytes, Any]]:
    """Writer spans whose manifest is hostile: (trace bytes, manifest document or raw bytes)."""
    trace = gzip.compress(_with_good_events())
    base = {"format": 1, "worker": "rank0", "span": "1", "framework": "pytorch", "wall_time": 1.0}
    cases: dict[str, tuple[bytes, Any]] = {}
    for index, value in enumerate([[32], "32", -1, 0, 10 ** 30, True, 3.5, {"n": 1}, None]):
        cases[f"manifest_batch_size_{index}"] = (trace, {**base, "batch_size": value})
    for index, value in enumerate([["a"], "tags", 5, {"x": {"y": 1}}, {"nan": float("nan")}, {"<b>": "<i>x</i>"}]):
        cases[f"manifest_tags_{index}"] = (trace, {**base, "tags": value})
    cpu_values: list[Any] = [
        "busy", [1, 2], {"duration": "long", "process": "x"},
        {"duration": 1.0, "process": 0.5, "samples": "many"},
        {"duration": 1.0, "process": 0.5, "samples": {"offsets": ["a"], "process": [None], "system": 5}},
        {"duration": -1.0, "process": 1e308, "cpu_count": "8", "system": 7, "interval": -1},
        {"duration": 1.0, "process": 0.5, "samples": {"offsets": [0.1] * 5, "process": [0.2] * 3}},
    ]
    for index, value in enumerate(cpu_values):
        cases[f"manifest_cpu_{index}"] = (trace, {**base, "cpu_utilization": value})
    cases["manifest_step_range"] = (trace, {**base, "step_range": ["a", None, 3]})
    cases["manifest_framework"] = (trace, {**base, "framework": {"x": 1}})
    cases["manifest_not_json"] = (trace, b"{not json")
    cases["manifest_array"] = (trace, b"[1, 2, 3]")
    cases["manifest_invalid_utf8"] = (trace, b'{"format": 1, "tags": {"k": "\xff"}}')
    cases["manifest_deep"] = (trace, b'{"tags": ' + b"[" * 100000 + b"]" * 100000 + b"}")
    return cases


def _mindspore_cases() -> dict[str, dict[str, bytes]]:
    """Old-style MindSpore folders: a valid timeline beside hostile side files (name → bytes)."""
    timeline = json.dumps([{"name": "Conv2D", "ph": "X", "ts": 10, "dur": 5, "pid": 2, "tid": 1}]).encode()
    cases: dict[str, dict[str, bytes]] = {}
    cases["minddata_bare_cr"] = {"minddata_pipeline_raw_0.csv":
                                 b"op_id,op_type,num_workers,output_queue_size,output_queue_length,sample_interval,"
                                 b"parent_id,children_id\n0,Batch\r,1,\"[1,2]\",4,10,,\"[1]\"\n1,Map,2,\"[1\r]\",4,10,0,[]\n"}
    cases["minddata_garbage"] = {"minddata_pipeline_raw_0.csv": b"\x00\xff" * 1000,
                                 "device_queue_profiling_0.txt": b"0 1 2\nnot numbers here\n\r\r",
                                 "minddata_cpu_utilization_0.json": b'{"device_info": "x", "cpu_processor_num": "a"}',
                                 "pipeline_profiling_0.json": b'{"op_info": [1, {"op_id": "x"}], "sampling_interval": "s"}'}
    cases["step_trace_hostile"] = {"step_trace_raw_0_detail_time.csv":
                                   b"step_num,start_point,end_point,total\r1,abc\r2,1,99999999999999999999999999,3\n"
                                   b"3,\"unterminated\n",
                                   "step_trace_point_info.json": b"[1, 2"}
    return {name: {"ascend_timeline_display_0.json": timeline, **files} for name, files in cases.items()}


def _mindspore_span_cases() -> dict[str, bytes]:
    """MindSpore span folders (``*_ascend_ms``) whose memory record is hostile (record bytes)."""
    header = b"Timestamp(ns),Total Allocated(Byte),Total Reserved(Byte),Total Active(Byte)\n"
    return {
        "memory_record_garbage": b"\x00\xff" * 100,
        "memory_record_values": header + b"1,2,3,4\nx,1e400,-5,\r\n99999999999999999999999,1,1,1\n",
        "memory_record_bare_cr": header + b"1,2\r,3,4\n",
    }


def _special_cases(outside: Path) -> dict[str, Callable[[Path], None]]:
    """Special files (at the path of a trace file)."""
    (outside / "secret.txt").write_bytes(b"root:x:0:0:planted secret\n")
    return {
        "special_fifo": lambda path: os.mkfifo(path),
        "special_link_dev_zero": lambda path: path.symlink_to("/dev/zero"),
        "special_link_proc_mem": lambda path: path.symlink_to("/proc/self/mem"),
        "special_link_outside": lambda path: path.symlink_to(outside / "secret.txt"),
        "special_link_loop": lambda path: path.symlink_to(path),
        "special_link_dangling": lambda path: path.symlink_to(outside / "nothing"),
        "special_directory": lambda path: path.mkdir(),
        "special_unreadable": lambda path: (path.write_bytes(_doc([_event()])), path.chmod(0)),
    }


def _aged(path: Path) -> None:
    """Old enough for discovery to count the file as complete."""
    old = time.time() - 300
    os.utime(path, (old, old), follow_symlinks=False)


def write_corpus(logdir: Path, outside: Path) -> dict[str, str]:
    """Write every hostile entry as its own run under ``logdir``; returns run → kind of entry: "trace" (a
    broken or odd document), "bad_value" (hostile events among good ones: must load with them), "writer" (a
    hostile manifest), "mindspore" (hostile side files), "special" (not a regular file inside the logdir)."""
    outside.mkdir(parents=True, exist_ok=True)
    kinds: dict[str, str] = {}
    for name, content in _content_cases().items():
        path = logdir / name / TRACE
        path.parent.mkdir(parents=True)
        path.write_bytes(content)
        _aged(path)
        kinds[name] = "bad_value" if GOOD_OPERATOR.encode() in content else "trace"
    for name, (trace, manifest) in _writer_cases().items():
        assets = logdir / name / "plugins" / "profscope"
        assets.mkdir(parents=True)
        (assets / "rank0.1.pytorch.trace.json.gz").write_bytes(trace)
        (assets / "rank0.1.manifest.json").write_bytes(
            manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode())
        for path in assets.iterdir():
            _aged(path)
        kinds[name] = "writer"
    for name, files in _mindspore_cases().items():
        folder = logdir / name
        folder.mkdir(parents=True)
        for file_name, data in files.items():
            (folder / file_name).write_bytes(data)
            _aged(folder / file_name)
        kinds[name] = "mindspore"
    trace_view = _with_good_events()
    for name, record in _mindspore_span_cases().items():
        span = logdir / name / "host_1_1700000000_ascend_ms"
        (span / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
        (span / "FRAMEWORK").mkdir()
        (span / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_bytes(trace_view)
        (span / "FRAMEWORK" / "cpu_ms_memory_record_0.txt").write_bytes(record)
        for path in span.rglob("*.*"):
            _aged(path)
        kinds[name] = "mindspore"
    for name, make in _special_cases(outside).items():
        path = logdir / name / TRACE
        path.parent.mkdir(parents=True)
        make(path)
        if os.path.lexists(path) and not path.is_dir():
            _aged(path)
        kinds[name] = "special"
    return kinds
