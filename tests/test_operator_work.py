"""Which calls count the work (``views/quantities/operator_work.py``): hand-made traces where a product, a norm
and a conversion are reached through several operators with formulas; the device work each counted call owns; the
real CPU traces of torch 2.13 (record_shapes: every GEMM and convolution has a number) and traces without shapes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.model.operator_categories import CODE, operator_categories_by_name
from profscope.tb_plugin.model.tree import has_ancestor, subtree_sum
from profscope.tb_plugin.model.categories import SliceKinds
from profscope.tb_plugin.views.quantities.operator_work import (
    COUNTED, INSIDE_COUNTED, NESTED, NO_NUMBER, NO_SHAPES, operator_work)

from conftest import real_trace
from handmade import trace, write, x

F = "float"


def op(name: str, ts: float, dur: float, dims: list, types: list, concrete: list | None = None, **kw: object) -> dict:
    args: dict = {"Input Dims": dims, "Input type": types, "External id": kw.pop("eid", 0)}
    if concrete is not None:
        args["Concrete Inputs"] = concrete
    return x(name, ts, dur, args=args, **kw)  # type: ignore[arg-type]


def statuses(model) -> dict[str, list[int]]:  # type: ignore[no-untyped-def]
    work = operator_work(model)
    out: dict[str, list[int]] = {}
    for row, status in zip(work.rows.tolist(), work.status.tolist()):
        out.setdefault(model.strings[model.slices.name[row]], []).append(status)
    return out


def test_a_product_counts_once_at_the_innermost_product(tmp_path: Path) -> None:
    # linear -> matmul -> mm (with a reshape between), then a bias add_ inside linear but outside the product.
    events = [
        op("aten::linear", 0, 100, [[4, 10, 32], [16, 32], [16]], [F, F, F]),
        op("aten::matmul", 1, 60, [[4, 10, 32], [32, 16]], [F, F]),
        op("aten::reshape", 2, 5, [[4, 10, 32], []], [F, "ScalarList"], ["", "[40, 32]"]),
        op("aten::mm", 10, 40, [[40, 32], [32, 16]], [F, F]),
        op("aten::add_", 70, 20, [[4, 10, 16], [16], []], [F, F, "Scalar"], ["", "", "1"]),
    ]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    assert statuses(model) == {"aten::linear": [NESTED], "aten::matmul": [NESTED], "aten::mm": [COUNTED],
                               "aten::add_": [COUNTED]}
    work = operator_work(model)
    total = work.flops()[work.counted].sum()
    assert total == 2 * 40 * 16 * 32 + 4 * 10 * 16  # the product once, the bias addition once


def test_vector_operators_defer_to_what_does_their_work(tmp_path: Path) -> None:
    x_dims, norm = [8, 64], ["", "[64]", "", "", "1e-05", "True"]
    events = [
        # layer_norm -> native_layer_norm (equal work): the inner one counts.
        op("aten::layer_norm", 0, 50, [x_dims, [], [64], [64], [], []], [F, "ScalarList", F, F, "Scalar", "Scalar"],
           norm),
        op("aten::native_layer_norm", 1, 40, [x_dims, [], [64], [64], []], [F, "ScalarList", F, F, "Scalar"],
           norm[:5]),
        # mul_ by a Python number: the one-element copy_ (under aten::to, which has no formula) that turns the number
        # into a tensor is part of the mul_, which counts.
        op("aten::mul_", 100, 50, [[1000], []], [F, "Scalar"], ["", "0.5"]),
        op("aten::to", 101, 10, [[], [], [], [], []], [F, "Scalar", "Scalar", "Scalar", ""], ["", "6", "False",
                                                                                             "False", ""]),
        op("aten::copy_", 102, 5, [[], [], []], [F, F, "Scalar"], ["", "", "False"]),
        # A product's own copy_ (CPU addmm copies the bias into its output) is part of the product.
        op("aten::addmm", 200, 50, [[16], [8, 32], [32, 16], [], []], [F, F, F, "Scalar", "Scalar"],
           ["", "", "", "1", "1"]),
        op("aten::copy_", 201, 5, [[8, 16], [16], []], [F, F, "Scalar"], ["", "", "False"]),
    ]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    assert statuses(model) == {
        "aten::layer_norm": [NESTED], "aten::native_layer_norm": [COUNTED], "aten::mul_": [COUNTED],
        "aten::copy_": [INSIDE_COUNTED, INSIDE_COUNTED], "aten::addmm": [COUNTED]}


def test_calls_without_shapes_or_numbers_say_why(tmp_path: Path) -> None:
    events = [
        x("aten::mm", 0, 10),  # no record_shapes
        op("aten::mm", 20, 10, [[2, 3, 4], [4, 5]], [F, F]),  # shapes that do not fit
        op("aten::mm", 40, 10, [[2, 3], [3, 5]], [F, F]),
        op("aten::mm", 60, 10, [[2, 3], [3, 5]], [F, F]),  # the same combination: decoded once
    ]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    work = operator_work(model)
    assert work.status.tolist() == [NO_SHAPES, NO_NUMBER, COUNTED, COUNTED]
    assert "record_shapes=True" in work.reason(0)
    assert "3 dimensions" in work.reason(1)
    assert work.reason(2) == ""
    assert len(work.combos) == 3 and work.combo[2] == work.combo[3]
    assert work.flops().tolist() == [-1, -1, 60, 60]


def test_each_kernel_belongs_to_the_counted_call_it_ran_in(tmp_path: Path) -> None:
    def launch(name: str, ts: float, corr: int, eid: int) -> list[dict]:
        return [x("cudaLaunchKernel", ts, 2, cat="cuda_runtime", args={"correlation": corr, "External id": eid}),
                x(name, ts + 5, 10, cat="kernel", pid=0, tid=7,
                  args={"correlation": corr, "External id": eid, "device": 0, "stream": 7})]

    events = [
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        op("aten::convolution", 0, 100, [[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], [], [], []],
           [F, F, F] + [""] * 6, ["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"], eid=1),
        op("aten::_convolution", 1, 90, [[1, 3, 8, 8], [4, 3, 3, 3], [4]] + [[]] * 10, [F, F, F] + [""] * 10,
           eid=2),
        *launch("implicit_convolve_sgemm", 10, 100, 2),
        op("aten::add_", 50, 20, [[1, 4, 6, 6], [1, 4, 1, 1], []], [F, F, "Scalar"], ["", "", "1"], eid=3),
        *launch("elementwise_kernel", 55, 101, 3),
        op("aten::relu", 200, 20, [[1, 4, 6, 6]], [F], eid=4),
        *launch("vectorized_elementwise_kernel", 205, 102, 4),
    ]
    model = load_trace(str(write(tmp_path / "t.json", trace(events))))
    work = operator_work(model)
    names = [model.strings[n] for n in model.slices.name[work.rows]]
    owners = sorted((model.strings[model.slices.name[r]], names[o]) for r, o in zip(work.work_rows, work.owner))
    # The bias addition's kernel is the convolution's (its formula counts the bias); relu owns its own.
    assert owners == [("elementwise_kernel", "aten::convolution"), ("implicit_convolve_sgemm", "aten::convolution"),
                      ("vectorized_elementwise_kernel", "aten::relu")]


TORCH213 = ["torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz",
            "torch213/transformer_infer/worker0.1795303443272268206.pt.trace.json.gz",
            "torch213/conv_cpu_memory/worker0.1795303453480506115.pt.trace.json.gz",
            "torch213/ddp_gloo_2ranks/rank0.1795303450949782497.pt.trace.json.gz",
            "torch213/dataloader_bound_w0/worker0.1795303454060827054.pt.trace.json.gz"]


@pytest.mark.parametrize("relative", TORCH213)
def test_every_gemm_and_convolution_of_real_cpu_traces_has_a_number(relative: str) -> None:
    model = load_trace(str(real_trace(relative)))
    s = model.slices
    work = operator_work(model)
    kinds = SliceKinds(model)
    category = operator_categories_by_name(model)[s.name]
    matrix = kinds.operator & np.isin(category, [CODE["gemm"], CODE["convolution"], CODE["attention"]])
    assert matrix.any()
    counted = np.zeros(len(s), dtype=bool)
    counted[work.rows[work.counted]] = True
    # Each such call has its work counted: by itself, by an operator inside it, or by the one it runs in.
    within = subtree_sum(s, counted.astype(np.int64)) > 0
    around = has_ancestor(s, counted)
    missing = sorted({model.strings[s.name[r]] for r in np.flatnonzero(matrix & ~within & ~around)})
    assert missing == []
    # Every call with a formula and shapes got a number (or defers to one that did).
    assert not (work.status == NO_NUMBER).any(), [work.reason(i) for i in np.flatnonzero(work.status == NO_NUMBER)]


@pytest.mark.parametrize("relative, reason", [
    ("hta/nccl_parser_config/nccl_data.json.gz", "record_shapes=True"),
    ("kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", "does not record the stride"),
])
def test_traces_without_shapes_or_arguments_say_why(relative: str, reason: str) -> None:
    model = load_trace(str(real_trace(relative)))
    work = operator_work(model)
    convolutions = [i for i, r in enumerate(work.rows.tolist())
                    if model.strings[model.slices.name[r]] == "aten::convolution"]
    assert convolutions and all(reason in work.reason(i) for i in convolutions)
    assert not work.counted[convolutions].any()
