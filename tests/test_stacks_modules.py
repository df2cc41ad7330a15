"""Flame graph (aggregated call tree), folded stacks and the module tree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.modules import modules
from profscope.tb_plugin.views.stacks import flamegraph, folded_stacks

from conftest import real_trace
from handmade import trace, write, x

TRANSFORMER = "torch213/transformer_infer/worker0.1795303443272268206"


def _node(graph: dict, path: list[str]) -> int:
    nodes, names = graph["nodes"], graph["names"]
    current = 0
    for frame in path:
        children = [i for i, p in enumerate(nodes["parent"]) if p == current and names[nodes["name"][i]] == frame]
        assert children, f"no node {frame!r} under {current}"
        current = children[0]
    return current


def test_handmade_call_tree_merges_equal_paths(tmp_path: Path) -> None:
    events = [
        x("train", 0, 100, cat="user_annotation"),
        x("aten::linear", 10, 30), x("aten::addmm", 15, 20),
        x("aten::linear", 50, 40), x("aten::addmm", 55, 30),
        x("aten::relu", 95, 5),
    ]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    graph = flamegraph(model)
    linear = _node(graph, ["train", "aten::linear"])
    addmm = _node(graph, ["train", "aten::linear", "aten::addmm"])
    assert graph["nodes"]["calls"][linear] == 2
    assert graph["nodes"]["total"][linear] == pytest.approx(70)
    assert graph["nodes"]["self"][linear] == pytest.approx(20)
    assert graph["nodes"]["total"][addmm] == pytest.approx(50)
    assert graph["total"] == pytest.approx(100)
    folded = folded_stacks(model).splitlines()
    assert "train;aten::linear;aten::addmm 50" in folded
    assert "train;aten::linear 20" in folded
    assert "train 25" in folded


def test_real_call_tree_totals_match_key_averages() -> None:
    model = load_trace(str(real_trace(TRANSFORMER + ".pt.trace.json.gz")))
    reference = json.loads(real_trace(TRANSFORMER + ".key_averages.json").read_text())
    rows = {r["name"]: r for r in reference["by_name"]}
    graph = flamegraph(model)
    # Frames called once on one path: the node total is torch's CPU total.
    for path in (["gen_torch_traces.py(648): <module>"],
                 ["gen_torch_traces.py(648): <module>", "gen_torch_traces.py(636): main"]):
        node = _node(graph, path)
        assert graph["nodes"]["total"][node] == pytest.approx(rows[path[-1]]["cpu_total_us"], rel=1e-6)
    # Self times of all nodes of a name add up to torch's self CPU time of that name.
    names, nodes = graph["names"], graph["nodes"]
    for name in ("aten::addmm", "aten::mm", "aten::copy_"):
        ours = sum(nodes["self"][i] for i, n in enumerate(nodes["name"]) if names[n] == name)
        assert ours == pytest.approx(rows[name]["self_cpu_us"], rel=0.02)


def test_module_tree_of_the_transformer() -> None:
    model = load_trace(str(real_trace(TRANSFORMER + ".pt.trace.json.gz")))
    result = modules(model)
    assert result["available"] is True
    nodes = result["nodes"]
    by_name = {n: i for i, n in enumerate(nodes["name"])}
    top = by_name["TinyEncoder_0"]
    assert nodes["parent"][top] == 0 and nodes["calls"][top] == 3
    encoder = by_name["TransformerEncoder_0"]
    assert nodes["parent"][encoder] == top
    layers = [i for i, p in enumerate(nodes["parent"]) if p == encoder]
    assert {nodes["name"][i] for i in layers} >= {"TransformerEncoderLayer_0", "TransformerEncoderLayer_1"}
    # A parent's forward time covers its children's.
    for i, p in enumerate(nodes["parent"]):
        if p > 0:
            assert nodes["forward_host"][p] >= nodes["forward_host"][i] - 1e-6
    reference = json.loads(real_trace(TRANSFORMER + ".key_averages.json").read_text())
    ka = {r["name"]: r for r in reference["by_name"]}
    assert nodes["forward_host"][top] == pytest.approx(ka["nn.Module: TinyEncoder_0"]["cpu_total_us"], rel=1e-6)


def test_no_modules_says_how_to_record_them(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "t.json", trace([x("aten::add", 0, 1)]))))
    result = modules(model)
    assert result["available"] is False and "with_modules=True" in result["hint"]


def test_cli_exports_folded_stacks(tmp_path: Path) -> None:
    from profscope.tb_plugin.reports.cli import main

    source = real_trace(TRANSFORMER + ".pt.trace.json.gz")
    out = tmp_path / "stacks.txt"
    assert main(["stacks", str(source), "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("gen_torch_traces.py(648):_<module>")
    assert all(" " not in line.rsplit(" ", 1)[0] for line in lines)
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["stacks", str(bad)]) == 1


def test_backward_time_rolls_up_to_parent_modules(tmp_path: Path) -> None:
    """Backward time is inclusive like forward time: a parent module counts its submodules' backward."""
    py = "python_function"
    events = [
        x("nn.Module: Outer_0", 0, 100, cat=py),
        x("nn.Module: Inner_0", 10, 40, cat=py),
        x("aten::linear", 15, 30),  # forward op inside Inner
        x("nn.Module: Inner_1", 60, 30, cat=py),
        x("aten::relu", 65, 20),  # forward op inside Inner_1
        x("aten::add", 95, 4),  # forward op directly inside Outer
        x("LinearBackward0", 200, 50, tid=2),
        x("ReluBackward0", 260, 25, tid=2),
        x("AddBackward0", 290, 8, tid=2),
    ]
    flows = []
    for i, (fwd_ts, bwd_ts) in enumerate(((15, 200), (65, 260), (95, 290))):
        flows += [{"ph": "s", "id": i + 1, "pid": 1, "tid": 1, "ts": fwd_ts, "cat": "fwdbwd", "name": "fwdbwd"},
                  {"ph": "f", "id": i + 1, "pid": 1, "tid": 2, "ts": bwd_ts, "cat": "fwdbwd", "name": "fwdbwd",
                   "bp": "e"}]
    model = load_trace(str(write(tmp_path / "modules.json", trace(events + flows))))
    nodes = modules(model)["nodes"]
    by_name = {name: i for i, name in enumerate(nodes["name"])}
    outer, inner = by_name["Outer_0"], by_name["Inner_0"]
    assert nodes["parent"][inner] == outer
    # Inner_0 and Inner_1 are two modules of the same class under Outer: their own backward ops.
    assert nodes["backward_host"][inner] == pytest.approx(50.0)
    assert nodes["backward_host"][by_name["Inner_1"]] == pytest.approx(25.0)
    # Outer: its own AddBackward0 (8) plus its submodules' 50 + 25.
    assert nodes["backward_host"][outer] == pytest.approx(83.0)
    assert nodes["forward_host"][outer] == pytest.approx(100.0)


def test_call_stack_arguments_become_python_frames_above_the_operators(tmp_path: Path) -> None:
    """Traces of older profilers carry the Python stack as each operator's ``Call stack`` (innermost first)
    instead of ``python_function`` events: its frames go above the outermost operator that carries it."""
    fwd = "model.py(20): forward;train.py(8): step;train.py(30): <module>"
    loss = "train.py(9): step;train.py(30): <module>"
    events = [
        x("ProfilerStep#1", 0, 1000, cat="user_annotation"),
        x("aten::linear", 10, 100, args={"Call stack": fwd}), x("aten::addmm", 20, 60, args={"Call stack": fwd}),
        x("aten::linear", 200, 50, args={"Call stack": fwd}), x("aten::addmm", 210, 30, args={"Call stack": fwd}),
        x("aten::mse_loss", 300, 40, args={"Call stack": loss}),
        x("aten::relu", 400, 7),  # no call stack recorded: stays at the top
        x("AddmmBackward0", 500, 90, tid=2),  # autograd's thread: no Python stack
    ]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    graph = flamegraph(model)
    assert graph["stacks_from"] == "call_stacks" and graph["note"] is None
    module = _node(graph, ["train.py(30): <module>"])
    step = _node(graph, ["train.py(30): <module>", "train.py(8): step"])
    forward = _node(graph, ["train.py(30): <module>", "train.py(8): step", "model.py(20): forward"])
    linear = _node(graph, ["train.py(30): <module>", "train.py(8): step", "model.py(20): forward", "aten::linear"])
    addmm = _node(graph, ["train.py(30): <module>", "train.py(8): step", "model.py(20): forward", "aten::linear",
                          "aten::addmm"])
    mse = _node(graph, ["train.py(30): <module>", "train.py(9): step", "aten::mse_loss"])
    nodes = graph["nodes"]
    assert (nodes["total"][linear], nodes["self"][linear], nodes["calls"][linear]) == (150, 60, 2)
    assert (nodes["total"][addmm], nodes["self"][addmm], nodes["calls"][addmm]) == (90, 90, 2)
    assert (nodes["total"][forward], nodes["self"][forward], nodes["calls"][forward]) == (150, 0, 2)
    assert (nodes["total"][step], nodes["self"][step]) == (150, 0)
    assert (nodes["total"][module], nodes["self"][module], nodes["calls"][module]) == (190, 0, 3)
    assert nodes["total"][mse] == 40
    assert nodes["parent"][_node(graph, ["aten::relu"])] == 0 and nodes["parent"][_node(graph, ["AddmmBackward0"])] == 0
    assert graph["total"] == 190 + 7 + 90
    lines = folded_stacks(model).splitlines()
    assert "train.py(30):_<module>;train.py(8):_step;model.py(20):_forward;aten::linear;aten::addmm 90" in lines
    assert "train.py(30):_<module>;train.py(8):_step;model.py(20):_forward;aten::linear 60" in lines


def test_a_trace_without_python_stacks_says_so(tmp_path: Path) -> None:
    model = load_trace(str(write(tmp_path / "t.json", trace([x("aten::add", 0, 10)]))))
    graph = flamegraph(model)
    assert graph["stacks_from"] == "none" and "with_stack=True" in graph["note"]
    assert flamegraph(load_trace(str(real_trace(TRANSFORMER + ".pt.trace.json.gz"))))["stacks_from"] == "python_frames"


def test_real_call_stacks_keep_the_totals() -> None:
    """2021 Kineto ResNet-50 (``Call stack`` on 14,994 operators, no Python events): frames above the operators
    change no total, every operator's node keeps its numbers, and the script's own lines lead the tree."""
    model = load_trace(str(real_trace("kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")))
    graph = flamegraph(model)
    assert graph["stacks_from"] == "call_stacks"
    nodes, names = graph["nodes"], graph["names"]
    roots = [i for i, p in enumerate(nodes["parent"]) if p == 0]
    assert graph["total"] == pytest.approx(sum(nodes["total"][i] for i in roots))
    # Every operator's self time lands in one node: the summed self times are the operators' (frames add none).
    s = model.slices
    from profscope.tb_plugin.model import tree
    from profscope.tb_plugin.model.categories import SliceKinds
    kinds = SliceKinds(model)
    frames = kinds.host_op & ~kinds.step
    assert sum(nodes["self"]) == pytest.approx(tree.self_time(s)[frames].sum() / 1000.0)
    top = max(roots, key=lambda i: nodes["total"][i])
    assert names[nodes["name"][top]] == "resnet50_profiler_api.py(42): <module>"
    # A frame taken from a call stack ("file(line): function") has no self time; its total is its children's.
    frame_nodes = [i for i in range(1, len(nodes["parent"])) if re.search(r"\(\d+\): ", names[nodes["name"][i]])]
    assert len(frame_nodes) > 50
    for node in frame_nodes:
        kids = [i for i, p in enumerate(nodes["parent"]) if p == node]
        assert nodes["self"][node] == 0 and kids
        assert nodes["total"][node] == pytest.approx(sum(nodes["total"][k] for k in kids))
