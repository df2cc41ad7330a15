"""Flame graph (aggregated call tree), folded stacks and the module tree."""

from __future__ import annotations

import json
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
