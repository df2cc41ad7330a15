"""Ingest: real traces parse completely; hand-made traces give exact numbers."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.ingest.chrome.events import us_to_ns
from profscope.tb_plugin.model.nesting import nesting

from conftest import real_trace
from handmade import gpu_step_trace, trace, write, x

REAL_TRACES = [
    "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "kineto_resnet50/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz",
    "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz",
    "torch213/mlp_train_sched_plain/worker0.1795303442737309847.pt.trace.json",
    "torch213/transformer_infer/worker0.1795303443272268206.pt.trace.json.gz",
    "torch213/ddp_gloo_2ranks/rank0.1795303450949782497.pt.trace.json.gz",
    "torch213/conv_cpu_memory/worker0.1795303453480506115.pt.trace.json.gz",
    "torch213/dataloader_bound_w0/worker0.1795303454060827054.pt.trace.json.gz",
    "hta/nccl_parser_config/nccl_data.json.gz",
    "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/mtia_inference_trace/mtia_inference_rank_0.json.gz",
    "hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    "hta/sampled_ws128_trace_filter/sampled_rank-0.json.gz",
]


def _reference_counts(path: Path) -> Counter:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return Counter(e.get("ph") for e in events if isinstance(e, dict))


@pytest.mark.parametrize("relative", REAL_TRACES)
def test_real_trace_is_fully_ingested(relative: str) -> None:
    path = real_trace(relative)
    model = load_trace(str(path))
    phases = _reference_counts(path)
    assert model.num_events == sum(phases.values())
    assert len(model.slices) == phases["X"]
    assert len(model.instants) == phases["i"] + phases["I"]
    # Every slice is on a known track, sorted by (track, start), with a consistent parent.
    s = model.slices
    assert np.all(np.diff(s.track) >= 0)
    same_track = np.diff(s.track) == 0
    assert np.all(np.diff(s.start)[same_track] >= 0)
    has_parent = s.parent >= 0
    parents = s.parent[has_parent]
    assert np.all(s.track[parents] == s.track[has_parent])
    assert np.all(s.depth[parents] == s.depth[has_parent] - 1)
    assert np.all(s.start[parents] <= s.start[has_parent])
    assert model.stats["skipped_phases"] == {k: v for k, v in phases.items() if k not in "XiICstfM"}
    assert model.start <= model.end


def test_gzip_and_plain_give_the_same_model() -> None:
    gz = load_trace(str(real_trace("torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz")))
    plain = load_trace(str(real_trace("torch213/mlp_train_sched_plain/worker0.1795303442092317655.pt.trace.json")))
    assert gz.strings == plain.strings
    assert gz.tracks == plain.tracks
    for name in ("start", "dur", "name", "depth", "parent", "external_id", "python_parent_id"):
        assert np.array_equal(getattr(gz.slices, name), getattr(plain.slices, name)), name


def test_torch_steps_are_host_ranges_only() -> None:
    # The 2021 ResNet trace: 6 ProfilerStep ranges on the host; steps are in time order.
    model = load_trace(str(real_trace("kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")))
    names = [model.strings[i] for i in model.steps.name]
    assert names == [f"ProfilerStep#{n}" for n in range(5, 11)][: len(names)]
    assert len(names) >= 5
    assert np.all(np.diff(model.steps.start) > 0)


def test_call_stack_argument_is_text(tmp_path: Path) -> None:
    events = [x("aten::mm", 0, 5, args={"Call stack": "a.py(1): f;b.py(2): g"})]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    assert model.strings[model.slices.call_stack[0]] == "a.py(1): f;b.py(2): g"


def test_concrete_inputs_are_kept_as_their_json(tmp_path: Path) -> None:
    """The values of an operator's non-tensor arguments (stride, padding, is_causal...) that the performance model
    reads; both decoders keep the argument's JSON text."""
    events = [x("aten::convolution", 0, 5, args={"Input Dims": [[1, 3, 8, 8], [4, 3, 3, 3], []],
                                                  "Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]"]}),
              x("aten::relu", 6, 1, args={"Input Dims": [[1, 4, 4, 4]]})]
    for columnar in ("1", "0"):
        os.environ["PROFSCOPE_COLUMNAR"] = columnar
        try:
            model = load_trace(str(write(tmp_path / f"t{columnar}.json", trace(events))))
        finally:
            del os.environ["PROFSCOPE_COLUMNAR"]
        assert json.loads(model.strings[model.slices.concrete_inputs[0]]) == ["", "", "", "[2, 2]", "[1, 1]"]
        assert model.slices.concrete_inputs[1] == -1


def test_gpu_side_step_annotations_are_not_steps(tmp_path: Path) -> None:
    events = [
        x("ProfilerStep#1", 0, 100, cat="user_annotation"),
        x("ProfilerStep#1", 10, 120, cat="gpu_user_annotation", pid=0, tid=7, args={"device": 0, "stream": 7}),
        x("ProfilerStep#2", 100, 100, cat="user_annotation"),
    ]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    assert [model.strings[i] for i in model.steps.name] == ["ProfilerStep#1", "ProfilerStep#2"]
    assert list(model.steps.start) == [0, 100_000]


def test_handmade_gpu_trace_exact(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "w.1.pt.trace.json.gz", gpu_step_trace(), gz=True)))
    s = model.slices
    name = {model.strings[int(n)]: i for i, n in enumerate(s.name)}
    # Nesting on the host thread.
    assert s.depth[name["ProfilerStep#7"]] == 0
    assert s.parent[name["aten::conv2d"]] == name["ProfilerStep#7"]
    assert s.parent[name["aten::convolution"]] == name["aten::conv2d"]
    assert s.parent[name["cudaLaunchKernel"]] == name["aten::convolution"]
    # Times are integer nanoseconds.
    assert s.start[name["aten::conv2d"]] == 110_000 and s.dur[name["aten::conv2d"]] == 300_000
    # Kernel → runtime (correlation) → operator (External id).
    kernel, memcpy = name["implicit_convolve_sgemm"], name["Memcpy HtoD (Pageable -> Device)"]
    assert model.links.launcher[kernel] == name["cudaLaunchKernel"]
    assert model.links.op[kernel] == name["aten::convolution"]
    assert model.links.launcher[memcpy] == name["cudaMemcpyAsync"]
    assert model.links.op[memcpy] == name["aten::copy_"]
    assert s.grid[kernel] >= 0 and model.strings[s.grid[kernel]] == "[8,1,1]"
    assert s.blocks_per_sm[kernel] == pytest.approx(0.1) and s.occupancy[kernel] == 12
    assert s.nbytes[memcpy] == 4096
    assert model.strings[s.input_dims[name["aten::conv2d"]]] == "[[8,3,32,32],[16,3,3,3]]"
    # Flows resolve to the launch and the kernel.
    flows = {(int(a), int(b)) for a, b in zip(model.flows.src, model.flows.dst)}
    assert flows == {(name["cudaLaunchKernel"], kernel), (name["cudaMemcpyAsync"], memcpy)}
    # Tracks: the host thread and the GPU stream, named from metadata.
    kinds = {(t.kind, t.process_name, t.thread_name) for t in model.tracks}
    assert ("cpu", "python", "main thread") in kinds
    assert ("gpu", "GPU 0", "stream 7") in kinds
    gpu = next(t for t in model.tracks if t.kind == "gpu")
    assert gpu.device == 0
    # Memory instant and counter.
    mem = int(np.flatnonzero(model.instants.addr >= 0)[0])
    assert model.instants.bytes[mem] == 512 and model.instants.total_reserved[mem] == 2048
    assert model.instants.device_type[mem] == 1 and model.instants.device_id[mem] == 0
    assert list(model.counters.value) == [0.5] and model.strings[model.counters.series[0]] == "util"
    assert model.metadata["distributedInfo"]["backend"] == "nccl"
    assert model.metadata["deviceProperties"][0]["name"] == "Test GPU"


def test_bare_array_and_string_ids(tmp_path: Path) -> None:
    # A generic Chrome trace: a bare array; pid/tid as strings and ints name one track.
    events = [x("a", 1, 5, pid="p", tid="7"), x("b", 2, 1, pid="p", tid=7)]
    model = load_trace(str(write(tmp_path / "t.json", events)))
    assert len(model.tracks) == 1 and list(model.slices.depth) == [0, 1]


def test_microseconds_to_nanoseconds_is_exact() -> None:
    values = np.array([0.0, 1.5, 4446416051338.762, 1623142623460111.0, 0.0006])
    assert list(us_to_ns(values)) == [0, 1500, 4446416051338762, 1623142623460111000, 1]


def _brute_nesting(track: list[int], start: list[int], end: list[int]) -> tuple[list[int], list[int]]:
    depth, parent, stacks = [], [], {}
    for i in range(len(start)):
        stack = stacks.setdefault(track[i], [])
        # Close what ended at or before this start; a zero-length slice nests in a longer one at its start.
        while stack and end[stack[-1]] <= start[i] and not (
            end[i] == start[i] == start[stack[-1]] and end[stack[-1]] > start[stack[-1]]
        ):
            stack.pop()
        depth.append(len(stack))
        parent.append(stack[-1] if stack else -1)
        stack.append(i)
    return depth, parent


def test_nesting_matches_a_stack_walk_on_random_nested_slices() -> None:
    rng = random.Random(7)
    for _ in range(200):
        rows: list[tuple[int, int, int]] = []

        def fill(track: int, lo: int, hi: int, level: int) -> None:
            t = lo
            while t < hi and rng.random() < 0.8:
                a = t + rng.choice([0, 0, 1, 2])
                b = min(hi, a + rng.choice([0, 0, 1, 3, 5]))
                if a > hi:
                    return
                rows.append((track, a, b))
                if level < 4 and b > a:
                    fill(track, a, b, level + 1)
                t = b

        for track in range(3):
            fill(track, 0, 40, 0)
        rows.sort(key=lambda r: (r[0], r[1], -r[2]))
        track = np.array([r[0] for r in rows], dtype=np.int32)
        start = np.array([r[1] for r in rows], dtype=np.int64)
        end = np.array([r[2] for r in rows], dtype=np.int64)
        depth, parent = nesting(track, start, end)
        want_depth, want_parent = _brute_nesting(track.tolist(), start.tolist(), end.tolist())
        assert depth.tolist() == want_depth
        assert parent.tolist() == want_parent


def test_zero_length_counts_at_same_start_match_their_definition() -> None:
    from profscope.tb_plugin.model.nesting import _zero_length_from_here_at_same_start

    rng = np.random.default_rng(3)
    for _ in range(500):
        n = int(rng.integers(1, 40))
        key = np.sort(rng.integers(0, int(rng.integers(1, 12)), n))
        zero = rng.random(n) < rng.random()
        want = [sum(1 for j in range(i, n) if zero[j] and key[j] == key[i]) for i in range(n)]
        assert _zero_length_from_here_at_same_start(key, zero).tolist() == want


def test_back_to_back_and_zero_length(tmp_path: Path) -> None:
    events = [x("outer", 0, 10), x("a", 0, 5), x("b", 5, 5), x("zero", 5, 0), x("after", 10, 1)]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    by_name = {model.strings[int(n)]: (int(d), int(p)) for n, d, p in
               zip(model.slices.name, model.slices.depth, model.slices.parent)}
    outer = [i for i, n in enumerate(model.slices.name) if model.strings[n] == "outer"][0]
    b = [i for i, n in enumerate(model.slices.name) if model.strings[n] == "b"][0]
    assert by_name["outer"] == (0, -1)
    assert by_name["a"] == (1, outer)
    assert by_name["b"] == (1, outer)  # a ended where b starts: siblings
    assert by_name["zero"] == (2, b)  # zero-length at b's start nests in b
    assert by_name["after"] == (0, -1)


def test_overrunning_slice_is_not_a_child(tmp_path: Path) -> None:
    # b starts inside a but ends after it: like torch's own tree, a is closed and b is top level.
    events = [x("a", 0, 10), x("b", 5, 15), x("c", 6, 1), x("d", 30, 1)]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    rows = {model.strings[int(n)]: i for i, n in enumerate(model.slices.name)}
    assert model.slices.depth[rows["b"]] == 0 and model.slices.parent[rows["b"]] == -1
    assert model.slices.parent[rows["c"]] == rows["b"] and model.slices.depth[rows["c"]] == 1
    assert model.slices.depth[rows["d"]] == 0


def _same_model(a, b) -> None:
    from profscope.tb_plugin.ingest.chrome.parallel import STRING_COLUMNS

    # String ids depend on the order strings were first met; compare the strings themselves.
    assert a.num_events == b.num_events and a.tracks == b.tracks
    for field in dataclasses.fields(a.slices):  # every column, the sparse argument columns too
        name = field.name
        if name in STRING_COLUMNS["slices"]:
            text_a = [a.strings[i] if i >= 0 else None for i in getattr(a.slices, name)]
            text_b = [b.strings[i] if i >= 0 else None for i in getattr(b.slices, name)]
            assert text_a == text_b, name
        else:
            assert np.array_equal(getattr(a.slices, name), getattr(b.slices, name), equal_nan=True), name
    assert np.array_equal(a.flows.src, b.flows.src) and np.array_equal(a.counters.value, b.counters.value)


RESNET = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"


def _small_window(monkeypatch) -> list[int]:
    """Blocks, chunks and the reserve after a cut made tiny: every trace streams through a moving window.

    Returns a list that receives the window's size after every block read (its high-water mark is checked)."""
    from profscope.tb_plugin.ingest.chrome import chunks, reader

    monkeypatch.setattr(reader, "BLOCK_BYTES", 16 << 10)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 32 << 10)
    monkeypatch.setattr(chunks, "RESERVE_BYTES", 8 << 10)
    sizes: list[int] = []
    read_block = chunks.EventChunks._read_block

    def recording(self):
        more = read_block(self)
        sizes.append(len(self.buffer))
        return more

    monkeypatch.setattr(chunks.EventChunks, "_read_block", recording)
    return sizes


def test_small_chunks_give_the_same_model(monkeypatch) -> None:
    path = str(real_trace(RESNET))
    whole = load_trace(path)
    sizes = _small_window(monkeypatch)
    chunked = load_trace(path)
    assert chunked.stats["chunking"] == "guessed"
    _same_model(whole, chunked)
    assert chunked.metadata == whole.metadata and chunked.metadata["deviceProperties"]
    # The document (35 MB) was never held: the window stayed within a chunk, the reserve and a few blocks.
    assert len(gzip.decompress(real_trace(RESNET).read_bytes())) > 30 << 20 and max(sizes) < 96 << 10


def test_a_wrong_guess_falls_back_to_exact_chunks(tmp_path: Path, monkeypatch) -> None:
    from profscope.tb_plugin.ingest.chrome import chunks, reader

    # Arguments holding a list of objects look like event boundaries ("},\n{") to the guesser.
    nested = [{"k": i} for i in range(50)]
    events = [x(f"op{i}", i * 10, 5, args={"External id": i, "objs": nested}) for i in range(200)]
    events.append({"ph": "C", "name": "mem", "pid": 1, "tid": 1, "ts": 3, "args": {"used": 7}})
    # What follows the events also has such lists: the end of the array is found by the structure scan.
    doc = trace(events, deviceProperties=[{"id": 0}, {"id": 1}], distributedInfo={"rank": 0})
    doc["after"] = [{"a": [1, {"b": "}, {"}]}, {"c": "\\"}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc, indent=1))
    exact = load_trace(str(path))
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 300)
    monkeypatch.setattr(chunks, "RESERVE_BYTES", 200)
    monkeypatch.setattr(reader, "BLOCK_BYTES", 1000)
    guessed = load_trace(str(path))
    assert guessed.stats["chunking"] == "exact"
    _same_model(exact, guessed)
    assert list(guessed.counters.value) == [7.0]
    assert guessed.metadata["after"] == doc["after"] and guessed.metadata["distributedInfo"] == {"rank": 0}


def test_the_structure_scan_reads_strings_and_escapes() -> None:
    from profscope.tb_plugin.ingest.chrome.chunks import scan_structure

    events = [{"name": 'a"}, {"b', "args": {"s": "\\", "t": "q\\\"}]"}}, {"name": "c", "args": {"l": [{"x": 1}]}}]
    text = bytearray(json.dumps(events).encode())
    first_comma = len(json.dumps(events[0])) + 1
    assert scan_structure(text, 1, target=2) == ("separator", first_comma)
    assert scan_structure(text, 1, target=first_comma + 1) == ("close", len(text) - 1)
    assert scan_structure(text[:-1], 1, target=first_comma + 1) is None  # not closed yet: more input needed


@pytest.mark.parametrize("arrays_via", ["shared files", "pipe", "shared files until full"])
def test_two_process_decode_gives_the_same_model(monkeypatch, tmp_path, arrays_via: str) -> None:
    from profscope.tb_plugin.ingest.chrome import chunks, parallel

    spill_folder = tmp_path / "spill"
    spill_folder.mkdir()
    prefixes: list[str] = []
    moved: list[str] = []
    constants: list[tuple] = []
    read_moved = parallel._read_moved
    move_parts = parallel._ColumnFiles._move_parts

    def spill_prefix():
        if arrays_via == "pipe":
            return None  # as when no folder is writable: the child pickles its arrays
        prefixes.append(str(spill_folder / f"columns-{len(prefixes)}"))
        return prefixes[-1]

    def fills_up(files, table, key, parts):  # in the helper: the shared folder is full after 40 columns' moves
        files.calls = getattr(files, "calls", 0) + 1
        if files.calls > 40:
            raise OSError(28, "No space left on device")
        move_parts(files, table, key, parts)

    def recorded(columns, layout):
        moved.extend(path for path, placed in layout.values() if placed)
        # Parts holding only their column's "absent" value (no kernel in the chunk...) travel as that value.
        constants.extend(place for _path, placed in layout.values() for place in placed.values() if place[2] < 0)
        return read_moved(columns, layout)

    for relative in (RESNET, "torch213/transformer_infer/worker0.1795303443272268206.pt.trace.json.gz",
                     "hta/nccl_parser_config/nccl_data.json.gz"):
        path = str(real_trace(relative))
        one = load_trace(path)
        monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
        monkeypatch.setattr(chunks, "CHUNK_BYTES", 1 << 16)
        monkeypatch.setattr(parallel, "_spill_prefix", spill_prefix)
        monkeypatch.setattr(parallel, "_read_moved", recorded)
        if arrays_via == "shared files until full":
            monkeypatch.setattr(parallel._ColumnFiles, "_move_parts", fills_up)
        two = load_trace(path, parallel=True)
        monkeypatch.undo()
        assert two.stats["chunking"] == one.stats["chunking"] + ", two processes", relative
        _same_model(one, two)
        assert [(t.process_name, t.thread_name) for t in one.tracks] == [(t.process_name, t.thread_name)
                                                                       for t in two.tracks]
        assert np.array_equal(one.links.op, two.links.op) and np.array_equal(one.steps.start, two.steps.start)
        assert np.array_equal(one.instants.event_id, two.instants.event_id) and one.stats == {
            **two.stats, "chunking": one.stats["chunking"]}
    assert len(prefixes) == (0 if arrays_via == "pipe" else 3)
    if arrays_via != "pipe":  # the arrays really came through the files
        assert moved and all(path.startswith(tuple(prefixes)) for path in moved)
        assert constants
    assert list(spill_folder.iterdir()) == []  # every shared file is removed once mapped


def test_a_wrong_guess_with_two_processes_starts_again_in_one(tmp_path: Path, monkeypatch) -> None:
    from profscope.tb_plugin.ingest.chrome import chunks, parallel, reader
    from profscope.tb_plugin.ingest.load import load_trace_stream

    nested = [{"k": i} for i in range(50)]
    events = [x(f"op{i}", i * 10, 5, args={"External id": i, "objs": nested}) for i in range(400)]
    path = write(tmp_path / "t.json", trace(events))
    one = load_trace(str(path))
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 3000)
    monkeypatch.setattr(chunks, "RESERVE_BYTES", 1000)
    monkeypatch.setattr(reader, "BLOCK_BYTES", 4000)
    opened = []
    two = load_trace_stream(lambda: opened.append(1) or open(path, "rb"), path.name, parallel=True)
    assert len(opened) == 2 and two.stats["chunking"] == "exact"  # the one-process path, from a fresh stream
    _same_model(one, two)


def test_a_plain_file_streams_with_clean_errors(monkeypatch, tmp_path) -> None:
    from profscope.tb_plugin.ingest.load import TraceLoadError
    from profscope.tb_plugin.ingest.chrome import parallel

    plain = tmp_path / "worker0.1.pt.trace.json"
    plain.write_bytes(gzip.decompress(real_trace(RESNET).read_bytes()))
    expected = load_trace(str(real_trace(RESNET)))
    sizes = _small_window(monkeypatch)
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    _same_model(expected, load_trace(str(plain)))
    _same_model(expected, load_trace(str(plain), parallel=True))
    assert max(sizes) < 96 << 10

    truncated = tmp_path / "truncated.pt.trace.json"
    truncated.write_bytes(plain.read_bytes()[: plain.stat().st_size // 2])
    with pytest.raises(TraceLoadError, match="truncated"):
        load_trace(str(truncated), parallel=True)
    empty = tmp_path / "empty.pt.trace.json"
    empty.write_bytes(b"")
    with pytest.raises(TraceLoadError, match="empty"):
        load_trace(str(empty), parallel=True)