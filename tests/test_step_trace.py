"""Step trace: hand-made spans with phases computed by hand, Paddle against its own Model Summary,
torch against its key_averages, MindSpore's step trace file against the file, and the route
against the OpenAPI contract."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Optional

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.ingest.mindspore.step_trace import (
    NS_PER_SYSCNT,
    StepTraceFileError,
    StepTraceTable,
    load_beside,
    parse_step_trace_csv,
)
from profscope.tb_plugin.model.trace_model import TraceModel
from profscope.tb_plugin.store.storage import LocalStorage
from profscope.tb_plugin.views.step_trace import PHASES, from_mindspore_table, step_trace

from conftest import copy_trace, real_trace
from openapi_contract import check_schema
from handmade import trace, write, x

MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"
ASCEND = "mindspore/ascend_run_2_profiler"


def check(payload: Any) -> None:
    check_schema(payload, "StepTrace")


def _model(tmp_path: Path, events: list[dict[str, Any]], name: str = "w.1.pt.trace.json") -> TraceModel:
    return load_trace(str(write(tmp_path / name, trace(events))))


def _known_sum(row: dict[str, Any]) -> float:
    """Known phases, and forward + backward together when only their sum is known."""
    phases = row["phases"]
    joint = (row["fp_and_bp"] or 0.0) if phases["forward"] is None and phases["backward"] is None else 0.0
    return sum(v for v in phases.values() if v is not None) + joint


# Hand-made spans ----------------------------------------------------------------------------


def _cpu_training_events() -> list[dict[str, Any]]:
    """Step 1 (0-1000 µs): data loading, forward, zero_grad, backward with an all-reduce that blocks the
    main thread and runs on, an idle gap, the optimizer step, an op after it. Step 2: forward only."""
    ann = "user_annotation"
    return [
        x("ProfilerStep#1", 0, 1000, cat=ann),
        x("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 10, 190, cat=ann),
        x("aten::stack", 50, 50),  # collate: data loading, not forward
        x("aten::linear", 250, 150),
        x("aten::relu", 400, 50),
        x("Optimizer.zero_grad#SGD.zero_grad", 460, 40, cat=ann),
        x("aten::zero_", 465, 30),
        x("autograd::engine::evaluate_function: AddmmBackward0", 520, 180),
        x("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 700, 40),
        x("c10d::allreduce_", 705, 30),
        x("gloo:all_reduce", 720, 40, cat=ann, tid=2),
        x("Optimizer.step#SGD.step", 780, 120, cat=ann),
        x("aten::add_", 790, 100),
        x("aten::item", 920, 10),
        x("ProfilerStep#2", 1000, 500, cat=ann),
        x("aten::mul", 1100, 100),
    ]


def test_cpu_training_step_by_hand(tmp_path: Path) -> None:
    answer = step_trace(_model(tmp_path, _cpu_training_events()))
    check(answer)
    first, second = answer["steps"]
    # Collectives [705, 760): the main thread waits in c10d::allreduce_ [705, 735) (its AccumulateGrad range
    # around it computes nothing then), the Gloo thread runs [720, 760) while AccumulateGrad goes on
    # [735, 740): communication not overlapped = 30 + 20 = 50.
    # Optimizer: zero_grad 40 + step 120 = 160. Forward [250, 520) minus zero_grad = 230.
    # Backward [520, 740) minus communication = 190. Tail after the optimizer: [900, 1000) = 100.
    # Other: [760, 780), between the last all-reduce and the optimizer step = 20.
    assert first["phases"] == {"gap": 250.0, "forward": 230.0, "backward": 190.0, "optimizer": 160.0,
                               "communication": 50.0, "tail": 100.0, "other": 20.0}
    assert first["dur"] == 1000.0 and _known_sum(first) == 1000.0
    assert first["fp_and_bp"] == 420.0 and first["dataloader"] == 190.0
    assert first["forward_start"] == 250.0 and first["backward_end"] == 740.0
    assert first["missing"] == [] and first["notes"] == []
    # Step 2 has no backward: forward runs to its last operator, the rest is tail.
    assert second["phases"] == {"gap": 100.0, "forward": 100.0, "backward": None, "optimizer": 0.0,
                                "communication": 0.0, "tail": 300.0, "other": 0.0}
    assert second["missing"] == ["backward"] and second["notes"] == ["no backward work in this step"]
    assert answer["average"]["phases"]["backward"] == 190.0  # over the steps where it is known
    assert answer["average"]["phases"]["gap"] == 175.0
    assert answer["markers"]["time_base"] == "host"
    assert answer["markers"]["forward_start"] == "first operator after the DataLoader"
    assert answer["phases"] == list(PHASES)


def test_named_points_override_the_markers(tmp_path: Path) -> None:
    answer = step_trace(_model(tmp_path, _cpu_training_events()), fp_point="aten::relu",
                        bp_point="autograd::engine::evaluate_function: AddmmBackward0")
    check(answer)
    first, second = answer["steps"]
    # fp = 400, backward [520, 700): forward [400, 520) minus zero_grad = 80; other = [700, 705),
    # [735, 740) and [760, 780) = 30.
    assert first["phases"] == {"gap": 400.0, "forward": 80.0, "backward": 180.0, "optimizer": 160.0,
                               "communication": 50.0, "tail": 100.0, "other": 30.0}
    assert _known_sum(first) == first["dur"]
    # Neither point occurs in step 2: nothing is invented.
    assert second["phases"]["gap"] is None and second["phases"]["forward"] is None
    assert second["phases"]["backward"] is None and second["phases"]["tail"] is None
    assert second["phases"]["other"] == 500.0
    assert any("fp_point 'aten::relu' does not occur" in n for n in second["notes"])
    assert any("bp_point" in n for n in second["notes"])
    assert answer["points"] == {"fp_point": "aten::relu",
                                "bp_point": "autograd::engine::evaluate_function: AddmmBackward0"}
    # A forward start after backward started: only forward + backward together is known.
    late = step_trace(_model(tmp_path, _cpu_training_events()), fp_point="aten::add_")["steps"][0]
    # Gap [0, 790) less backward 190, communication 50 and optimizer 50 = 500; forward + backward =
    # the backward interval's 190 (the joint interval [790, 740) is empty).
    assert late["phases"] == {"gap": 500.0, "forward": None, "backward": None, "optimizer": 160.0,
                              "communication": 50.0, "tail": 100.0, "other": 0.0}
    assert late["fp_and_bp"] == 190.0 and _known_sum(late) == 1000.0
    assert "forward starts after backward does: only forward + backward together is known" in late["notes"]
    unknown = step_trace(_model(tmp_path, _cpu_training_events()), fp_point="no_such_op")
    assert all(r["phases"]["forward"] is None for r in unknown["steps"])
    assert any("No slice named 'no_such_op'" in n for n in unknown["notes"])


def test_gpu_step_is_measured_on_the_device(tmp_path: Path) -> None:
    """Host points are mapped to the device work they launched (the CPU runs ahead of the GPU)."""
    def launch(ts: float, correlation: int, external: int) -> dict[str, Any]:
        return x("cudaLaunchKernel", ts, 10, cat="cuda_runtime",
                 args={"correlation": correlation, "External id": external})

    def kernel(name: str, ts: float, dur: float, correlation: int, external: int) -> dict[str, Any]:
        return x(name, ts, dur, cat="kernel", pid=0, tid=7,
                 args={"correlation": correlation, "External id": external, "device": 0, "stream": 7})

    events = [
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        x("ProfilerStep#1", 0, 500, cat="user_annotation", args={"External id": 9}),
        x("aten::linear", 10, 50, args={"External id": 1}), launch(20, 11, 1),
        x("autograd::engine::evaluate_function: AddmmBackward0", 70, 50, args={"External id": 2}), launch(80, 12, 2),
        x("Optimizer.step#SGD.step", 130, 50, cat="user_annotation", args={"External id": 3}),
        x("aten::add_", 140, 30, args={"External id": 4}), launch(150, 13, 4),
        kernel("gemm_fwd", 100, 100, 11, 1), kernel("gemm_bwd", 200, 150, 12, 2), kernel("sgd", 360, 40, 13, 4),
    ]
    answer = step_trace(_model(tmp_path, events))
    check(answer)
    (row,) = answer["steps"]
    # Device: forward kernel [100, 200), backward kernel [200, 350), idle [350, 360), optimizer kernel
    # [360, 400), then nothing until the step's host end at 500.
    assert row["phases"] == {"gap": 100.0, "forward": 100.0, "backward": 150.0, "optimizer": 40.0,
                             "communication": 0.0, "tail": 100.0, "other": 10.0}
    assert answer["markers"]["time_base"] == "device"
    assert row["forward_start"] == 100.0 and row["backward_end"] == 350.0


def test_span_without_markers_says_what_is_missing(tmp_path: Path) -> None:
    answer = step_trace(_model(tmp_path, [x("custom_range", 0, 100, cat="user_annotation")]))
    check(answer)
    (row,) = answer["steps"]
    assert row["name"] == "span"
    assert set(row["missing"]) == {"gap", "forward", "backward", "optimizer", "tail"}
    assert row["phases"]["other"] == 100.0
    assert any("whole span is one step" in n for n in answer["notes"])
    assert any("backward is not derived" in n for n in answer["notes"])


# Real traces ----------------------------------------------------------------------------------

PADDLE_SPANS = [
    ("linear_sched_2_10", "host_vmpid_23377_time_2026_11_21_23_22_29_386961.paddle_trace.json", "summary.txt"),
    ("cnn_multi_span", "host_vmpid_23396_time_2026_11_21_23_22_33_378244.paddle_trace.json", "summary_span1.txt"),
    ("cnn_multi_span", "host_vmpid_23396_time_2026_11_21_23_22_33_592455.paddle_trace.json", "summary_span2.txt"),
]
# "  Forward        16      20.86 / 1.30 / ..." in the Model Summary (CPU total, ms).
_MODEL_ROW = re.compile(r"^\s*(?P<name>ProfileStep|Dataloader|Forward|Backward|Optimization|Others)\s+(?:\d+|-)\s+"
                        r"(?P<total>[\d.]+) /")


def _model_summary_ms(text: str) -> dict[str, float]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Model Summary" in line)
    totals: dict[str, float] = {}
    for line in lines[start + 1:]:
        if "Summary" in line:
            break
        m = _MODEL_ROW.match(line)
        if m:
            totals[m["name"]] = float(m["total"])
    return totals


@pytest.mark.parametrize("run,trace_name,summary", PADDLE_SPANS)
def test_paddle_phases_agree_with_its_model_summary(run: str, trace_name: str, summary: str) -> None:
    reference = _model_summary_ms(real_trace(f"paddle/{run}/{summary}").read_text())
    answer = step_trace(load_trace(str(real_trace(f"paddle/{run}/{trace_name}"))))
    check(answer)
    rows = answer["steps"]

    def total_ms(key: str) -> float:
        return sum((r["dataloader"] if key == "dataloader" else r["phases"][key]) or 0.0 for r in rows) / 1000.0

    ours = {
        "ProfileStep": sum(r["dur"] for r in rows) / 1000.0,
        "Dataloader": total_ms("dataloader"), "Forward": total_ms("forward"), "Backward": total_ms("backward"),
        "Optimization": total_ms("optimizer"),
    }
    ours["Others"] = ours["ProfileStep"] - sum(ours[k] for k in ("Dataloader", "Forward", "Backward", "Optimization"))
    assert set(reference) == set(ours)
    for name, theirs in reference.items():
        # Paddle prints two decimals: allow its rounding on small totals.
        assert abs(ours[name] - theirs) <= max(0.02 * theirs, 0.006), (name, ours[name], theirs)
    for row in rows:
        assert row["missing"] == [] and abs(_known_sum(row) - row["dur"]) < 1e-6
    assert answer["markers"]["forward_start"] == "Forward events"


def test_torch_mlp_phases_sum_to_step_time_and_match_key_averages() -> None:
    path = real_trace(MLP)
    answer = step_trace(load_trace(str(path)))
    check(answer)
    rows = answer["steps"]
    assert [r["name"] for r in rows] == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    for row in rows:
        assert row["missing"] == [], row
        assert abs(_known_sum(row) - row["dur"]) < 1e-6
        assert all(row["phases"][p] > 0 for p in ("gap", "forward", "backward", "optimizer", "tail"))
        assert row["phases"]["communication"] == 0.0  # a single process: no collectives
        # Forward starts after the step's data loading, which is part of the gap.
        assert row["forward_start"] >= row["dataloader"]
        assert row["phases"]["gap"] >= row["dataloader"]
    # torch's own key_averages of the same span (CPU totals, µs).
    averages = json.loads(path.with_name(path.name.replace(".pt.trace.json.gz", ".key_averages.json")).read_text())
    total = {r["name"]: r["cpu_total_us"] for r in averages["by_name"]}
    assert sum(r["dur"] for r in rows) == pytest.approx(total["ProfilerStep*"], rel=1e-6)
    assert sum(r["dataloader"] for r in rows) == pytest.approx(
        total["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"], rel=1e-6)
    assert sum(r["phases"]["optimizer"] for r in rows) == pytest.approx(
        total["Optimizer.step#SGD.step"] + total["Optimizer.zero_grad#SGD.zero_grad"], rel=1e-6)


def test_gloo_ranks_show_communication() -> None:
    for path in sorted(real_trace("torch213/ddp_gloo_2ranks").glob("rank*.pt.trace.json.gz")):
        answer = step_trace(load_trace(str(path)))
        check(answer)
        assert answer["markers"]["communication"] == (
            "collective ranges not overlapped by host work of other threads (a thread's own ranges during its "
            "collective wait for it)")
        for row in answer["steps"]:
            assert row["phases"]["communication"] > 0
            assert abs(_known_sum(row) - row["dur"]) < 1e-6


def test_resnet_gpu_trace_on_the_device_time_base() -> None:
    answer = step_trace(load_trace(str(real_trace(
        "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"))))
    check(answer)
    assert answer["markers"]["time_base"] == "device"
    assert "autograd thread operators" in (answer["markers"]["backward"] or "")
    for row in answer["steps"]:
        assert row["missing"] == [] and abs(_known_sum(row) - row["dur"]) < 1e-6
        # DataLoader-bound (num_workers=0): the device waits for data a third of each step.
        assert row["phases"]["gap"] > 0.25 * row["dur"]


# MindSpore's step trace file ----------------------------------------------------------------------


def test_mindspore_step_trace_csv_by_hand() -> None:
    folder = real_trace(ASCEND)
    rows, columns, has_reduce = parse_step_trace_csv((folder / "step_trace_raw_1_detail_time.csv").read_bytes())
    # The file: one step row, then the profiler's own average row (step_num 0), which is not a step.
    (row,) = rows
    assert (row.step, row.start, row.end, row.total) == (1, 15490789606875, 15490791977780, 2370905)
    assert (row.iteration_interval, row.fp_and_bp, row.tail) == (0, 2366808, 4097)
    assert not has_reduce and "fp_and_bp" in columns
    table = load_beside(LocalStorage(str(folder.parent)), str(folder / "ascend_timeline_display_1.json"))
    assert table is not None
    assert table.points == {"fp_start": "Default/EndOfSequence-op131", "bp_end": "Default/AssignAdd-op138"}
    answer = step_trace(load_trace(str(folder / "ascend_timeline_display_1.json")), table=table)
    check(answer)
    (step,) = answer["steps"]
    # 10 ns per count: 2370905 counts = 23709.05 µs; 2366808 = 23668.08 µs; 4097 = 40.97 µs.
    assert step["dur"] == pytest.approx(23709.05)
    assert step["phases"]["gap"] == 0.0 and step["phases"]["tail"] == pytest.approx(40.97)
    assert step["fp_and_bp"] == pytest.approx(23668.08)
    assert step["phases"]["forward"] is None and step["phases"]["other"] == 0.0
    assert step["start"] is None and answer["source"] == "mindspore_step_trace"
    assert answer["points"] == {"fp_point": "Default/EndOfSequence-op131", "bp_point": "Default/AssignAdd-op138"}


def test_mindspore_step_trace_unit_agrees_with_the_timeline() -> None:
    """The bp point (syscnt x 10 ns) lands at the end of the bp operator in the profiler's timeline text (ms)."""
    folder = real_trace(ASCEND)
    rows, _, _ = parse_step_trace_csv((folder / "step_trace_raw_1_detail_time.csv").read_bytes())
    bp_ms = rows[0].bp_point * NS_PER_SYSCNT / 1e6  # type: ignore[operator]
    ends = [float(start) + float(dur) for name, _stream, start, dur in
            (line.split(",") for line in (folder / "output_timeline_data_1.txt").read_text().splitlines()[1:] if line)
            if name == "Default/AssignAdd-op138"]
    assert min(abs(bp_ms - end) for end in ends) < 0.1  # within 0.1 ms; 1 ns per count would be off by days


def test_mindspore_step_trace_inference_and_collective_columns() -> None:
    """Hand-made tables in the two other shapes MindSpore writes: inference (fp, no bp) and with reduce ranges."""
    rows, columns, has_reduce = parse_step_trace_csv(
        b"step_num,start_point,end_point,total,fp_point,iteration_interval,fp\n"
        b"1,1000,3000,2000,1500,500,1500\n-,0,0,0,0,0,0\n")
    inference = from_mindspore_table(StepTraceTable(rows, columns, has_reduce, file_name="t.csv"))
    check(inference)
    (step,) = inference["steps"]
    assert step["phases"] == {"gap": 5.0, "forward": 15.0, "backward": None, "optimizer": None,
                              "communication": 0.0, "tail": None, "other": 0.0}
    rows, columns, has_reduce = parse_step_trace_csv(
        b"step_num,start_point,end_point,total,fp_point,bp_point,iteration_interval,fp_and_bp,tail,"
        b"stream_5_parallel_0,stream_5_parallel_0_start_point,stream_5_parallel_0_end_point\n"
        b"1,100,1100,1000,200,900,100,700,200,300,500,800\n")
    assert has_reduce and rows[0].reduce == 300
    training = from_mindspore_table(StepTraceTable(rows, columns, has_reduce, file_name="t.csv"))
    check(training)
    (step,) = training["steps"]
    assert step["phases"]["communication"] is None and step["fp_and_bp"] == 7.0 and step["phases"]["tail"] == 2.0
    assert any("communication is not derived" in n for n in training["notes"])


def test_mindspore_step_trace_bad_files(tmp_path: Path) -> None:
    with pytest.raises(StepTraceFileError, match="missing columns"):
        parse_step_trace_csv(b"a,b\n1,2\n")
    with pytest.raises(StepTraceFileError, match="not an integer"):
        parse_step_trace_csv(b"step_num,start_point,end_point,total\n1,2,x,4\n")
    folder = tmp_path / "prof"
    folder.mkdir()
    storage = LocalStorage(str(tmp_path))
    timeline = str(folder / "ascend_timeline_display_3.json")
    assert load_beside(storage, timeline) is None  # no table beside it
    assert load_beside(storage, str(folder / "w.1.pt.trace.json")) is None  # not an Ascend timeline
    (folder / "step_trace_raw_3_detail_time.csv").write_bytes(b"\xff\xfe garbage")
    with pytest.raises(StepTraceFileError):
        load_beside(storage, timeline)


# Route -----------------------------------------------------------------------------------------


def test_route_answers_match_the_contract(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    copy_trace(real_trace(MLP), logdir / "mlp")
    client = make_client(logdir)
    client.settle()
    status, body = client.get("steptrace", run="mlp", worker="worker0")
    assert status == 200, body
    check(body)
    assert [r["name"] for r in body["steps"]] == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    status, named = client.get("steptrace", run="mlp", worker="worker0", fp_point="aten::linear",
                               bp_point="autograd::engine::evaluate_function: AddmmBackward0")
    assert status == 200
    check(named)
    assert named["markers"]["forward_start"] == "fp_point aten::linear"
    for params, expected in (({"run": "nope", "worker": "worker0"}, 404), ({"run": "mlp"}, 400),
                             ({"run": "mlp", "worker": "worker0", "span": "../../x"}, 404)):
        got, error = client.get("steptrace", **params)
        assert got == expected and "error" in error


def _ascend_worker(client: Any, run: str) -> Optional[str]:
    """The worker of the Ascend timeline in ``run``, when discovery lists it."""
    for source in client.plugin.manager.sources():
        if source.run == run and source.path.endswith("ascend_timeline_display_1.json"):
            return source.worker
    return None


def test_route_uses_mindspore_step_trace_file(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    shutil.copytree(real_trace(ASCEND), logdir / "ascend" / "profiler")
    shutil.copytree(real_trace(ASCEND), logdir / "garbled" / "profiler")
    (logdir / "garbled" / "profiler" / "step_trace_raw_1_detail_time.csv").write_bytes(b"step_num,total\n1,x\n")
    client = make_client(logdir)
    client.settle()
    run, worker, garbled_worker = "ascend/profiler", _ascend_worker(client, "ascend/profiler"), _ascend_worker(
        client, "garbled/profiler")
    assert worker is not None and garbled_worker is not None, client.get("runs")
    # A garbled file: the span still answers, from its timeline, and says why.
    status, garbled = client.get("steptrace", run="garbled/profiler", worker=garbled_worker)
    assert status == 200, garbled
    check(garbled)
    assert garbled["source"] == "trace"
    assert any("step trace file could not be read: missing columns" in n for n in garbled["notes"])
    status, body = client.get("steptrace", run=run, worker=worker)
    assert status == 200, body
    check(body)
    assert body["source"] == "mindspore_step_trace"
    assert body["steps"][0]["dur"] == pytest.approx(23709.05)
    # Named points use the timeline instead, and say so.
    status, named = client.get("steptrace", run=run, worker=worker, fp_point="GetNext")
    assert status == 200 and named["source"] == "trace"
    assert any("is not used" in n for n in named["notes"])


def test_data_loading_two_figures_named_apart() -> None:
    """ResNet-50 span 1 (data loading in the main process): the step trace's data loading (host) is all host time in
    the DataLoader ranges within each step's host range (by hand from the JSON); the Overview's DataLoader category
    (waiting for data, torch-tb-profiler's DataLoader) only the part while nothing of higher priority runs: while
    the host loads the next batch the V100 still runs the previous step's kernels."""
    import gzip
    import json

    from profscope.tb_plugin.views.overview import overview

    path = real_trace("kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")
    events = [e for e in json.load(gzip.open(path))["traceEvents"] if e.get("ph") == "X"]
    loading = [(e["ts"], e["ts"] + e["dur"]) for e in events if e["name"].startswith("enumerate(DataLoader)#")]
    by_hand = {}
    for e in events:
        if e["name"].startswith("ProfilerStep#"):
            lo, hi = e["ts"], e["ts"] + e["dur"]
            by_hand[e["name"]] = sum(max(0, min(end, hi) - max(start, lo)) for start, end in loading)
    model = load_trace(str(path))
    answer = step_trace(model)
    check(answer)
    ours = {row["name"]: row["dataloader"] for row in answer["steps"]}
    assert ours == {name: pytest.approx(by_hand[name], abs=1e-3) for name in ours}
    waiting = {row["name"]: row["breakdown"]["dataloader"] for row in overview(model)["steps"]}
    assert waiting["ProfilerStep#6"] == 57669 and ours["ProfilerStep#6"] == pytest.approx(68777)  # tb-profiler: 57,669
    assert "waiting for data" in answer["markers"]["dataloader"]
