"""Memory snapshot pickles read as plain data: hostile files refused before anything runs, limits, and the C reader
(``_snapshot_reader.c``) held equal to its reference (``reader.py``) on the test snapshots, a TorchScript-style
pickle, hostile files and random damage.

``make test`` sets ``PROFSCOPE_REQUIRE_COLUMNAR=1``: there a missing C module fails these tests instead of skipping
the comparisons.
"""

from __future__ import annotations

import builtins
import os
import pickle
import random
import re
import struct
import subprocess
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from profscope.tb_plugin.ingest.snapshot import columns, reader
from profscope.tb_plugin.model.snapshot import ACTIONS

import snapshot_gen as gen
from conftest import REPO, real_trace

FAST = [False, True] if reader.AVAILABLE else [False]


def test_the_c_reader_is_built_where_required() -> None:
    if os.environ.get("PROFSCOPE_REQUIRE_COLUMNAR") == "1":
        assert reader.AVAILABLE, "the C snapshot reader (_snapshot_reader.c) was not built"


# --- hostile files ------------------------------------------------------------------------------------------------


class _Call:
    """Pickles as a call of ``function(*args)``: what a hostile snapshot asks pickle.load to run."""

    def __init__(self, function: Callable[..., Any], *args: Any) -> None:
        self.function, self.args = function, args

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.function, self.args)


def hostile_snapshots(target: Path) -> dict[str, bytes]:
    """Pickles that, given to pickle.load, would create ``target`` or run a shell command creating it."""
    shell = f"touch {target}"
    return {
        "os.system": pickle.dumps({"segments": [], "device_traces": [[_Call(os.system, shell)]]}),
        "open": pickle.dumps({"segments": [_Call(builtins.open, str(target), "w")], "device_traces": []}),
        "subprocess": pickle.dumps({"device_traces": [[{"action": "alloc", "frames": _Call(
            subprocess.call, ["touch", str(target)])}]], "segments": []}),
        "protocol2": pickle.dumps({"segments": _Call(os.system, shell)}, protocol=2),
        "eval": pickle.dumps({"segments": [_Call(eval, f"open({str(target)!r}, 'w')")]}, protocol=4),
    }


@pytest.mark.parametrize("fast", FAST)
def test_hostile_snapshots_are_refused_and_run_nothing(tmp_path: Path, fast: bool) -> None:
    target = tmp_path / "created"
    for name, data in hostile_snapshots(target).items():
        with pytest.raises(reader.SnapshotRefused) as refused:
            reader.read(data, fast=fast)
        assert "refused and nothing in it was run" in str(refused.value), name
        assert not target.exists(), name
    # They are what they claim: pickle.load would have created the file (the test's own check of its payload).
    pickle.loads(hostile_snapshots(target)["open"]).get("segments")[0].close()
    assert target.exists()


PREFIX = b"\x80\x04}(\x8c\x08segments]"


@pytest.mark.parametrize("fast", FAST)
@pytest.mark.parametrize("opcode, name", [
    (b"c", "GLOBAL"), (b"\x93", "STACK_GLOBAL"), (b"i", "INST"), (b"o", "OBJ"), (b"\x81", "NEWOBJ"),
    (b"\x92", "NEWOBJ_EX"), (b"R", "REDUCE"), (b"b", "BUILD"), (b"\x82", "EXT1"), (b"\x83", "EXT2"),
    (b"\x84", "EXT4"), (b"P", "PERSID"), (b"Q", "BINPERSID"),
])
def test_every_opcode_that_imports_or_builds_objects_is_refused(fast: bool, opcode: bytes, name: str) -> None:
    with pytest.raises(reader.SnapshotRefused, match=rf"\({name} at byte {len(PREFIX)}\)"):
        reader.read(PREFIX + opcode + b"\x00" * 16, fast=fast)


@pytest.mark.parametrize("fast", FAST)
def test_a_global_is_named_in_the_refusal(fast: bool) -> None:
    with pytest.raises(reader.SnapshotRefused, match=r"imports 'posix\.system'"):
        reader.read(PREFIX + b"cposix\nsystem\n(S'ls'\ntR.", fast=fast)


@pytest.mark.parametrize("fast", FAST)
@pytest.mark.parametrize("data, message", [
    (PREFIX + b"\x8f", r"never has \(EMPTY_SET"),
    (PREFIX + b"\x97", r"never has \(NEXT_BUFFER"),
    (PREFIX + b"\x96" + b"\x00" * 8, r"never has \(BYTEARRAY8"),
    (PREFIX + b"S'a'\n", r"never has \(STRING"),
    (PREFIX + b"I1\n", r"never has \(INT"),
    (pickle.dumps({"segments": []}, protocol=0), r"not a pickle of protocol 2"),
    (b"\x80\x01}.", r"protocol 1, not one torch writes"),
    (pickle.dumps([1, 2, 3]), r"not of a dict"),
    (pickle.dumps({"segments": [1]})[:-5], r"ends in the middle"),
    (b"\x80\x04" + b"(" * 65, r"more than 64 levels"),
    (b"\x80\x04}r\x05\x00\x00\x00.", r"memo out of order"),
    (b"\x80\x04\x8b" + struct.pack("<i", 1000) + b"\x00" * 1000 + b".", r"more than 512 bits"),
    (b"\x80\x04\x8c\x02\xff\xfe.", r"not UTF-8"),
    (b"\x80\x04}\x94(]Nu.", r"list or a dict as a dict key"),
    (b"\x80\x04}\x94(]\x85Nu.", r"cannot be a dict key"),
    (b"\x80\x04h\x05.", r"refers to a value it never defined"),
    (b"", r"not a pickle of protocol 2"),
])
def test_malformed_files_get_a_clear_error(fast: bool, data: bytes, message: str) -> None:
    with pytest.raises(reader.SnapshotReadError, match=message):
        reader.read(data, fast=fast)


def test_no_module_of_the_plugin_or_writer_calls_pickle_load() -> None:
    """A logdir's pickle never reaches pickle.load/loads (the reader has no use for the pickle module at all)."""
    pattern = re.compile(r"pickle\.loads?\(|Unpickler|from pickle import|import pickle\b")
    for folder in ("tb_plugin", "writer"):
        for path in (REPO / folder).rglob("*.py"):
            assert not pattern.search(path.read_text(encoding="utf-8")), path


# --- the C reader equals its reference ---------------------------------------------------------------------------


def _normal(value: Any) -> Any:
    """A document with the reader's tokens made comparable."""
    if isinstance(value, columns.StackRef):
        return ("stack", value.stack)
    if isinstance(value, columns.FrameRef):
        return ("frame", value.frame)
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_normal(v) for v in value)
    return value


def _outcome(data: bytes, fast: bool) -> Any:
    try:
        result = reader.read(data, fast=fast)
    except reader.SnapshotReadError as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("ok", _normal(result.document), {k: v.tolist() for k, v in result.columns.items()}, result.strings,
            result.notes)


def jit_style_pickle(value: Any) -> bytes:
    """A protocol-2 pickle laid out as TorchScript's pickler writes one (torch/csrc/jit/serialization/pickler.cpp,
    used by ``torch::cuda::_memory_snapshot_pickled``): ``BINPUT`` memo, ``BINUNICODE`` strings memoized by value,
    and each list's items in ONE ``APPENDS`` (Python's pickler batches 1000)."""
    out = bytearray(b"\x80\x02")
    memo: dict[Any, int] = {}

    def put(key: Any) -> None:
        memo[key] = len(memo)
        index = memo[key]
        out.extend(b"q" + bytes([index]) if index < 256 else b"r" + struct.pack("<I", index))

    def get(key: Any) -> bool:
        index = memo.get(key)
        if index is None:
            return False
        out.extend(b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index))
        return True

    def write(v: Any) -> None:
        if v is None:
            out.extend(b"N")
        elif v is True or v is False:
            out.extend(b"\x88" if v else b"\x89")
        elif isinstance(v, int):
            if 0 <= v < 256:
                out.extend(b"K" + bytes([v]))
            elif -(1 << 31) <= v < (1 << 31):
                out.extend(b"J" + struct.pack("<i", v))
            else:
                raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
                out.extend(b"\x8a" + bytes([len(raw)]) + raw)
        elif isinstance(v, float):
            out.extend(b"G" + struct.pack(">d", v))
        elif isinstance(v, str):
            if not get(("s", v)):
                raw = v.encode()
                out.extend(b"X" + struct.pack("<I", len(raw)) + raw)
                put(("s", v))
        elif isinstance(v, tuple):
            for item in v:
                write(item)
            out.extend({1: b"\x85", 2: b"\x86", 3: b"\x87"}[len(v)])
        elif isinstance(v, list):
            if get(("o", id(v))):
                return
            out.extend(b"]")
            put(("o", id(v)))
            if v:
                out.extend(b"(")
                for item in v:
                    write(item)
                out.extend(b"e")
        elif isinstance(v, dict):
            if get(("o", id(v))):
                return
            out.extend(b"}")
            put(("o", id(v)))
            if v:
                out.extend(b"(")
                for k, item in v.items():
                    write(k)
                    write(item)
                out.extend(b"u")
        else:
            raise TypeError(type(v))

    write(value)
    out.extend(b".")
    return bytes(out)


def snapshots_to_compare() -> dict[str, bytes]:
    cases = {name: real_trace(f"memory_snapshots/{name}").read_bytes()
             for name in ("mlp_cpu_profile.pickle", "training_ring_buffer.pickle", "expandable_oom.pickle")}
    training = gen.training_snapshot(steps=2, max_entries=150, share_free_frames=True)
    cases["shared_frame_lists"] = pickle.dumps(training)
    cases["protocol2"] = pickle.dumps(training, protocol=2)
    cases["jit_style"] = jit_style_pickle(gen.training_snapshot(steps=1, pending_frees=True))
    cases["two_devices"] = pickle.dumps({**training, "device_traces": [training["device_traces"][0][:50],
                                                                     training["device_traces"][0][50:]]})
    odd = {"segments": [{"address": 0, "total_size": 1024, "blocks": [{"size": 1024, "state": "inactive",
                                                                        "history": [{"frames": []}]}, 7]}, "x"],
           "device_traces": [[{"action": "alloc", "addr": True, "size": 1}, {"action": 5},
                              {"action": "annotate", "addr": 1, "size": 2, "stream": "s", "time_us": 1.5,
                               "frames": [1, {"filename": 2, "line": -1, "name": None}]},
                              {"action": "oom", "device_free": 7, "size": 1 << 70}, [], "entry"],
                             "not a list"],
           "external_annotations": [{"name": "a", "stage": "START", "device": 0, "time_us": 1}, {"device": 1 << 40}],
           "allocator_settings": {"expandable_segments": True}}
    cases["odd_values"] = pickle.dumps(odd)
    return cases


@pytest.mark.skipif(not reader.AVAILABLE, reason="the C snapshot reader is not built")
@pytest.mark.parametrize("name", sorted(snapshots_to_compare()))
def test_c_and_reference_readers_agree(name: str) -> None:
    data = snapshots_to_compare()[name]
    reference, fast = _outcome(data, False), _outcome(data, True)
    assert reference[0] == "ok"
    assert fast == reference


@pytest.mark.skipif(not reader.AVAILABLE, reason="the C snapshot reader is not built")
def test_c_and_reference_readers_agree_on_hostile_and_damaged_files(tmp_path: Path) -> None:
    rnd = random.Random(7)
    inputs = list(hostile_snapshots(tmp_path / "never").values())
    base = snapshots_to_compare()
    for data in (base["training_ring_buffer.pickle"], base["jit_style"], base["odd_values"]):
        for _ in range(60):
            cut = rnd.randrange(len(data))
            inputs.append(data[:cut])
            damaged = bytearray(data)
            for _ in range(rnd.randrange(1, 4)):
                damaged[rnd.randrange(len(damaged))] = rnd.randrange(256)
            inputs.append(bytes(damaged))
    for data in inputs:
        assert _outcome(data, True) == _outcome(data, False)
    assert not (tmp_path / "never").exists()


# --- what is read ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fast", FAST)
def test_entries_become_columns_as_torch_wrote_them(fast: bool) -> None:
    snapshot = gen.training_snapshot(steps=2, expandable=True, capacity=3 * gen.GB, oom_at_end=True)
    result = reader.read(pickle.dumps(snapshot), fast=fast)
    c = result.columns
    entries = snapshot["device_traces"][0]
    assert len(c["action"]) == len(entries)
    strings = result.strings
    for i in range(0, len(entries), 7):
        entry = entries[i]
        assert ACTIONS[c["action"][i]] == entry["action"]
        assert c["addr"][i] == (entry["device_free"] if entry["action"] == "oom" else entry["addr"])
        assert (c["size"][i], c["stream"][i], c["time_us"][i]) == (entry["size"], entry["stream"], entry["time_us"])
        assert strings[c["user_metadata"][i]] == entry["user_metadata"]
        stack = int(c["stack"][i])
        if not entry["frames"]:
            assert stack == -1
            continue
        frames = c["stack_frames"][c["stack_offsets"][stack]:c["stack_offsets"][stack + 1]]
        assert [(strings[c["frame_file"][f]], int(c["frame_line"][f]), strings[c["frame_name"][f]]) for f in frames] \
            == [(f["filename"], f["line"], f["name"]) for f in entry["frames"]]
    # The entry lists are emptied as they are read; the rest is the document.
    assert result.document["device_traces"] == [[]]
    assert result.document["segments"] == snapshot["segments"]
    assert len(c["annotation_time_us"]) == len(snapshot["external_annotations"])
    assert {ACTIONS[a] for a in np.unique(c["action"])} >= {"alloc", "free_requested", "free_completed",
                                                            "segment_map", "segment_unmap", "oom", "snapshot"}


@pytest.mark.parametrize("fast", FAST)
def test_odd_values_are_skipped_and_counted_not_fatal(fast: bool) -> None:
    result = reader.read(snapshots_to_compare()["odd_values"], fast=fast)
    notes = " | ".join(result.notes)
    assert "were skipped (address or size not an integer)" in notes  # addr True, size 2**70
    assert "were skipped (no action)" in notes and "were skipped (not a dict)" in notes
    assert "unreadable 'stream'" in notes and "unreadable 'time_us'" in notes
    assert list(result.columns["action"]) == [ACTIONS.index("annotate")]
    assert len(result.columns["annotation_time_us"]) == 1  # the second has no time


def test_a_snapshot_written_while_it_is_made_reads_as_the_same_snapshot(tmp_path: Path) -> None:
    """The benchmark's streamed writer (how it makes a 2 GB snapshot without holding it) gives the snapshot
    pickle.dump gives: the same model, answer for answer."""
    import json

    from profscope.tb_plugin.ingest.snapshot.build import build_model
    from profscope.tb_plugin.views import memory_snapshot as view

    dumped, streamed = tmp_path / "dumped.pickle", tmp_path / "streamed.pickle"
    dumped.write_bytes(pickle.dumps(gen.benchmark_snapshot(5000)))
    gen.write_benchmark_snapshot(str(streamed), 5000)
    answers = []
    for path in (dumped, streamed):
        model, _ = build_model(reader.read(path.read_bytes()))
        device = view.device_facts(model)["device"]
        answers.append(json.dumps([view.overview(model), view.timeline(model, device, width=300),
                                   view.segments(model, device)], default=str, sort_keys=True))
    assert answers[0] == answers[1]
