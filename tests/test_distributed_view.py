"""Distributed view: real Gloo and NCCL ranks, a synthetic 64-rank run, exact hand-made cases."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.distributed.ranks import collective_instances, distributed, normalize_collective
from profscope.tb_plugin.views.overview import overview

from conftest import REPO, copy_trace, real_trace
from handmade import trace, write, x

GLOO = "torch213/ddp_gloo_2ranks"


def _tracegen():
    spec = importlib.util.spec_from_file_location("tracegen", REPO / "bench" / "tracegen.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["tracegen"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def _ranks(folder: str, pattern: str = "*.json.gz") -> list:
    files = sorted(real_trace(folder).glob(pattern))
    return [(f.name.split(".")[0], load_trace(str(f))) for f in files]


def _union(spans: list[tuple[float, float]]) -> list[list[float]]:
    out: list[list[float]] = []
    for start, end in sorted(spans):
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def _length_within(windows: list[list[float]], spans: list[list[float]]) -> float:
    return sum(max(0.0, min(we, e) - max(ws, s)) for ws, we in windows for s, e in spans)


def _intersection(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    return _union([(max(s, bs), min(e, be)) for s, e in a for bs, be in b])


def _gloo_overlap_by_hand(path: Path) -> tuple[float, float]:
    """Mean per step (µs) of the overlap of a CPU-only Gloo rank, from the trace's JSON in plain Python: the host
    ranges of other work (``cpu_op``, ``user_annotation``, ``python_function``), each less the collective ranges
    (``gloo:``, ``c10d::``) of its own thread, under the union of the collective ranges. Also the overlap with
    every other host range, its own thread's included (torch-tb-profiler's rule), an upper bound."""
    import gzip
    import json
    import re

    events = [e for e in json.load(gzip.open(path))["traceEvents"] if e.get("ph") == "X"]
    steps = _union([(e["ts"], e["ts"] + e["dur"]) for e in events if e["name"].startswith("ProfilerStep#")])
    host = [e for e in events if e.get("cat") in ("cpu_op", "user_annotation", "python_function")
            and not e["name"].startswith("ProfilerStep#")]
    collective = re.compile(r"^(gloo:|c10d::)")
    own: dict[Any, list[list[float]]] = {}
    for e in host:
        if collective.match(e["name"]):
            own.setdefault(e["tid"], []).append([e["ts"], e["ts"] + e["dur"]])
    communication = _union([(s, e) for spans in own.values() for s, e in spans])
    computing, any_thread = [], []
    for e in host:
        if collective.match(e["name"]):
            continue
        start, end = e["ts"], e["ts"] + e["dur"]
        any_thread.append((start, end))
        for s, f in _union([tuple(x) for x in own.get(e["tid"], [])]):  # this thread's own collectives
            if s > start:
                computing.append((start, min(s, end)))
            start = max(start, f)
        computing.append((start, end))
    n = len(steps)
    return (_length_within(steps, _intersection(_union(computing), communication)) / n,
            _length_within(steps, _intersection(_union(any_thread), communication)) / n)


def test_gloo_ranks() -> None:
    ranks = _ranks(GLOO, "rank*.pt.trace.json.gz")
    result = distributed(ranks)
    assert result["available"]
    rows = result["ranks"]
    assert [(r["worker"], r["rank"], r["world_size"], r["backend"]) for r in rows] == [
        ("rank0", 0, 2, "gloo"), ("rank1", 1, 2, "gloo")]
    files = sorted(real_trace(GLOO).glob("rank*.pt.trace.json.gz"))
    by_hand = [_gloo_overlap_by_hand(f) for f in files]
    # Rank 0's main thread computes while its Gloo thread all-reduces (1,239 µs per step); rank 1's backward is
    # over before its Gloo thread starts. torch-tb-profiler's rule (every host range computes, a thread's own
    # ranges around its collective too) would call nearly all of it overlapped (5,805 of 5,826 µs).
    assert [round(h[0]) for h in by_hand] == [1239, 0] and [round(h[1]) for h in by_hand] == [5805, 4954]
    for row, (_, model), (overlap, upper) in zip(rows, ranks, by_hand):
        assert row["step_time"] == pytest.approx(overview(model)["mean_step_time"])
        # The overview's Communication is the Distributed view's communication minus overlap, the part that no
        # computation of another thread hides.
        assert row["communication"] - row["overlap"] == pytest.approx(overview(model)["breakdown"]["communication"])
        assert row["overlap"] == pytest.approx(overlap, abs=1e-3) and row["overlap"] <= upper  # within 1 ns
        assert row["communication"] > 0.5 * row["step_time"]
        assert row["compute"] + row["communication"] - row["overlap"] + row["other"] == pytest.approx(row["step_time"])
        assert row["overlap"] <= min(row["compute"], row["communication"]) + 1e-6
        assert row["wait"] + row["transfer"] == pytest.approx(row["communication"])
        assert row["collective_calls"] == 9  # 3 steps x 3 DDP buckets
    (allreduce,) = result["collectives"]
    assert allreduce["name"] == "allreduce" and allreduce["calls"] == 18
    assert allreduce["total"] == pytest.approx(sum(p["total"] for p in allreduce["per_rank"]))
    slow = max(rows, key=lambda r: r["step_time"])
    assert result["straggler"]["worker"] == slow["worker"]
    assert result["straggler"]["excess"] == pytest.approx(
        slow["step_time"] - min(r["step_time"] for r in rows))


def test_nccl_ranks_and_message_sizes() -> None:
    result = distributed(_ranks("hta/sampled_ws128_trace_filter"))
    assert [r["world_size"] for r in result["ranks"]] == [128, 128]
    assert {c["name"] for c in result["collectives"]}
    # The full NCCL trace carries record_param_comms with sizes: elements x dtype size.
    model = load_trace(str(real_trace("hta/nccl_parser_config/nccl_data.json.gz")))
    instances = collective_instances(model)
    assert "allreduce" in instances.name and "broadcast" in instances.name
    assert (instances.nbytes > 0).all()


def test_normalized_collective_names() -> None:
    assert normalize_collective("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)") == "allreduce"
    assert normalize_collective("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)") == "allgather"
    assert normalize_collective("gloo:all_reduce") == "allreduce"
    assert normalize_collective("c10d::allreduce_") == "allreduce"
    assert normalize_collective("nccl:broadcast") == "broadcast"


def _rank_trace(rank: int, step_us: float, comm_start: float, comm_dur: float) -> dict:
    events = []
    for step in range(2):
        t = step * 1000.0
        events += [
            x(f"ProfilerStep#{step}", t, step_us, cat="user_annotation"),
            x("aten::mm", t + 10, 100),
            x("gloo:all_reduce", t + comm_start, comm_dur, tid=2),
        ]
    return trace(events, distributedInfo={"rank": rank, "world_size": 3, "backend": "gloo"})


def test_handmade_wait_transfer_and_straggler(tmp_path: Path) -> None:
    # Ranks reach the all_reduce at 200, 250 and 400 µs; the last one also has the longest step.
    specs = [(0, 500, 200, 300), (1, 500, 250, 250), (2, 800, 400, 100)]
    ranks = [(f"rank{r}", load_trace(str(write(tmp_path / f"r{r}.json", _rank_trace(r, s, c, d)))))
             for r, s, c, d in specs]
    result = distributed(ranks)
    by_rank = {r["rank"]: r for r in result["ranks"]}
    # Waits: until the last arrival at 400 → 200, 150 and 0 µs per call; 2 calls per rank, 2 steps.
    assert by_rank[0]["wait"] == pytest.approx(200) and by_rank[0]["transfer"] == pytest.approx(100)
    assert by_rank[1]["wait"] == pytest.approx(150) and by_rank[1]["transfer"] == pytest.approx(100)
    assert by_rank[2]["wait"] == pytest.approx(0) and by_rank[2]["transfer"] == pytest.approx(100)
    assert by_rank[0]["communication"] == pytest.approx(300)
    assert by_rank[0]["compute"] == pytest.approx(100)  # aten::mm; the step range itself is not work
    assert by_rank[0]["overlap"] == pytest.approx(0)
    assert result["straggler"]["rank"] == 2
    assert result["straggler"]["excess"] == pytest.approx(300)
    (row,) = result["collectives"]
    assert row["calls"] == 6 and row["wait"] == pytest.approx(2 * (200 + 150))


def test_single_worker_has_nothing_distributed(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "t.json", trace([x("a", 0, 1)]))))
    result = distributed([("worker0", model)])
    assert result["available"] is False and "single worker" in result["hint"]


def test_synthetic_64_ranks_through_the_route(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    seed = real_trace(f"{GLOO}/rank0.1795303450949782497.pt.trace.json.gz")
    _tracegen().write_multi_rank(seed, logdir / "ddp64", ranks=64, copies=1, gzip=True)
    copy_trace(seed, logdir / "single")
    for f in (logdir / "ddp64").iterdir():
        os.utime(f, (1, 1))  # settled: not a file still being written
    client = make_client(logdir)
    client.settle(timeout=300)
    status, body = client.get("distributed", run="ddp64")
    assert status == 200, body
    from test_routes import check

    check(body, "Distributed")
    assert len(body["ranks"]) == 64
    assert sorted(r["rank"] for r in body["ranks"]) == list(range(64))
    assert {r["world_size"] for r in body["ranks"]} == {64}
    assert body["straggler"] is not None
    # One rank of the 2-rank job alone is still a rank of a distributed job (its distributedInfo).
    status, single = client.get("distributed", run="single")
    assert status == 200 and single["available"] is True, single
    check(single, "Distributed")
    assert [r["rank"] for r in single["ranks"]] == [0] and single["straggler"] is None
    assert single["notes"] and "1 of the job's 2 ranks" in single["notes"][0]
    assert client.get("distributed", run="nope")[0] == 404


def test_gloo_message_sizes_come_from_the_recorded_input_shapes() -> None:
    """Gloo writes no record_param_comms: sizes come from each gloo:all_reduce range's Input Dims and type."""
    import gzip
    import json
    import math

    ranks = _ranks(GLOO, "rank*.pt.trace.json.gz")
    result = distributed(ranks)
    (allreduce,) = result["collectives"]
    for entry, path in zip(allreduce["per_rank"], sorted(real_trace(GLOO).glob("rank*.pt.trace.json.gz"))):
        events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
        calls = [e for e in events if e.get("name") == "gloo:all_reduce"]
        assert all(e["args"]["Input type"] == ["float"] for e in calls)  # 4 bytes per element
        expected = sum(math.prod(e["args"]["Input Dims"][0]) * 4 for e in calls)
        assert entry["bytes"] == expected
    assert allreduce["bytes"] == sum(p["bytes"] for p in allreduce["per_rank"])
    assert allreduce["bandwidth"] == pytest.approx(allreduce["bytes"] / (allreduce["transfer"] / 1e6))


def test_nccl_message_sizes_come_from_the_launching_operator(tmp_path: Path) -> None:
    """The kernel has no shapes; record_param_comms records a TensorList; its nccl:all_reduce child the tensor."""
    events = [
        x("ProfilerStep#1", 0, 1000, cat="user_annotation"),
        x("c10d::allreduce_", 100, 60, args={"External id": 10, "Input Dims": [[], []], "Input type": ["TensorList", ""]}),
        x("record_param_comms", 105, 50, args={"External id": 11, "Input Dims": [[]], "Input type": ["TensorList"]}),
        x("nccl:all_reduce", 110, 40, args={"External id": 12, "Input Dims": [[1000, 4]], "Input type": ["c10::Half"]}),
        x("cudaLaunchKernel", 120, 10, cat="cuda_runtime", args={"correlation": 99, "External id": 11}),
        x("ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 200, 300, cat="kernel",
          pid=0, tid=20, args={"correlation": 99, "External id": 11, "device": 0, "stream": 20}),
    ]
    doc = trace(events, distributedInfo={"rank": 0, "world_size": 2, "backend": "nccl"})
    model = load_trace(str(write(tmp_path / "nccl.json", doc)))
    instances = collective_instances(model)
    assert instances.name == ["allreduce"] and instances.nbytes.tolist() == [1000 * 4 * 2]
    # One rank of a two-rank NCCL job: distributed, with its collective and a note that a rank is missing.
    result = distributed([("rank0", model)])
    assert result["available"] and result["collectives"][0]["bytes"] == 8000
    assert "1 of the job's 2 ranks" in result["notes"][0]
    (rank,) = result["ranks"]
    assert rank["communication"] == pytest.approx(300.0) and rank["compute"] == 0.0


def test_one_rank_of_the_hta_nccl_job_is_distributed() -> None:
    model = load_trace(str(real_trace("hta/nccl_parser_config/nccl_data.json.gz")))
    result = distributed([("rank0", model)])
    assert result["available"] and result["ranks"][0]["world_size"] == 2
    assert {c["name"] for c in result["collectives"]} == {"allreduce", "broadcast"}
    assert all(c["bytes"] for c in result["collectives"])


def test_the_collective_table_is_the_rank_by_rank_sum_on_uneven_ranks(tmp_path: Path) -> None:
    """Ranks that made different numbers of calls, calls of unknown size and a rank without collectives: each
    name's row and per-rank entries are what summing rank by rank gives (waits against the i-th call of every
    rank, as many calls as the rank with fewest)."""
    import dataclasses

    import numpy as np

    from profscope.tb_plugin.views.distributed.rank_summary import Table, coded
    from profscope.tb_plugin.views.distributed.ranks import distributed_from_summaries, summary_of

    spec = importlib.util.spec_from_file_location("jobgen", REPO / "bench" / "jobgen.py")
    jobgen = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["jobgen"] = jobgen
    spec.loader.exec_module(jobgen)
    paths = jobgen.write_job(jobgen.Job(ranks=5, steps=3, collectives=8), tmp_path / "job")
    summaries = [summary_of(p.name.split(".")[0], "", load_trace(str(p))) for p in paths]
    rng = np.random.default_rng(5)
    table = summaries[3].collectives
    keep = rng.random(len(table)) > 0.3
    summaries[3] = dataclasses.replace(summaries[3], collectives=Table(
        {k: coded([x for x, m in zip(v.tolist(), keep) if m]) for k, v in table.texts.items()},
        {k: v[keep] for k, v in table.numbers.items()}))
    numbers = dict(summaries[1].collectives.numbers)
    numbers["in_bytes"] = np.where(np.arange(len(numbers["in_bytes"])) % 3 == 0, -1, numbers["in_bytes"])
    summaries[1] = dataclasses.replace(summaries[1], collectives=Table(summaries[1].collectives.texts, numbers))
    summaries[2] = dataclasses.replace(summaries[2], collectives=Table(
        {"name": coded([]), "process_group": coded([])}, {k: v[:0] for k, v in numbers.items()}))
    answer = distributed_from_summaries(summaries)

    calls = {s.worker: (s.collectives.texts["name"].tolist(), s.collectives.numbers) for s in summaries}
    wait_of = {w: 0 for w in calls}
    for row in answer["collectives"]:
        name = row["name"]
        mine = {w: [i for i, n in enumerate(names) if n == name] for w, (names, _) in calls.items()}
        count = min(len(v) for v in mine.values())
        waits: dict[str, dict[int, int]] = {w: {} for w in calls}
        for j in range(count):
            starts = {w: int(calls[w][1]["start"][mine[w][j]]) for w in calls}
            for w in calls:
                i = mine[w][j]
                duration = int(calls[w][1]["end"][i] - calls[w][1]["start"][i])
                waits[w][i] = min(max(max(starts.values()) - starts[w], 0), duration)
                wait_of[w] += waits[w][i]
        entries = {e["worker"]: e for e in row["per_rank"]}
        assert set(entries) == {w for w in calls if mine[w]}
        for worker, entry in entries.items():
            number = calls[worker][1]
            durations = [int(number["end"][i] - number["start"][i]) for i in mine[worker]]
            sizes = [int(number["in_bytes"][i]) for i in mine[worker]]
            assert entry["calls"] == len(mine[worker])
            assert entry["bytes"] == (sum(b for b in sizes if b >= 0) if any(b >= 0 for b in sizes) else None)
            assert entry["total"] == pytest.approx(sum(durations) / 1000, rel=1e-12)
            assert entry["mean"] == pytest.approx(sum(durations) / len(durations) / 1000, rel=1e-12)
            assert entry["wait"] == pytest.approx(sum(waits[worker].values()) / 1000, rel=1e-12)
        assert row["calls"] == sum(e["calls"] for e in entries.values())
        assert row["total"] == pytest.approx(sum(e["total"] for e in entries.values()), rel=1e-12)
        assert row["wait"] == pytest.approx(sum(e["wait"] for e in entries.values()), rel=1e-12)
        unknown = any(int(calls[w][1]["in_bytes"][i]) < 0 for w in calls for i in mine[w])
        assert row["bytes"] is None if unknown else row["bytes"] == sum(e["bytes"] or 0 for e in entries.values())
    by_worker = {r["worker"]: r for r in answer["ranks"]}
    assert by_worker["rank2"]["collective_calls"] == 0 and by_worker["rank3"]["collective_calls"] == int(keep.sum())
    for worker, (_, number) in calls.items():  # the rank's communication split by its share of waiting
        spent = int((number["end"] - number["start"]).sum())
        share = wait_of[worker] / spent if spent else 0.0
        assert by_worker[worker]["wait"] == pytest.approx(by_worker[worker]["communication"] * share, rel=1e-12)
