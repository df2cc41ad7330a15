"""FLOPs and bytes per operator call against AMD TraceLens's performance-model tables of the same traces
(tests/data/tracelens, see its PROVENANCE.md): every row of its GEMM, convolution (forward and backward), attention
and normalization tables, exactly (integer arithmetic on the same shapes; TraceLens prints GFLOPS = FLOPs / 1e9 and
MB = bytes / 2^20).

A row's call is found by operator name and its recorded ``Input Dims``, ``Input type`` and ``Concrete Inputs``.
Profscope counts a call's work once, at the operator that does it (``views/quantities/operator_work.py``): the number
compared for an operator is what is counted within it (``aten::layer_norm`` → its ``aten::native_layer_norm``).

Two definitions differ on purpose (``work_formulas.py`` says why), and the test checks that the difference is
exactly that:

* ``aten::convolution`` with a bias: Profscope counts the bias (``e(out)`` FLOPs, ``C_out`` elements read); TraceLens
  looks for a bias as a third recorded argument, and record_shapes always records nine, so it counts none.
* ``aten::convolution_backward`` whose ``output_mask`` leaves out the input gradient (the first layer): Profscope
  counts the gradients computed; TraceLens counts the input gradient too.
"""

from __future__ import annotations

import ast
import csv
import gzip
import io
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.model.trace_model import TraceModel
from profscope.tb_plugin.model.tree import subtree_sum
from profscope.tb_plugin.views.quantities.operator_work import operator_work
from profscope.tb_plugin.views.quantities.work_formulas import DTYPE_BYTES

from conftest import real_trace

FOLDERS = [
    "tracelens/h100/Falconsai_nsfw_image_detection", "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat",
    "tracelens/h100/gaunernst_bert-small-uncased", "tracelens/h100/facebook_timesformer-base-finetuned-k400",
    "tracelens/h100/google_owlv2-large-patch14-ensemble", "tracelens/mi300/resnet_act_checkpoint",
]
TABLES = ("GEMM", "CONV_fwd", "CONV_bwd", "SDPA_fwd", "Normalization")


def _tables(folder: Path) -> Iterator[tuple[str, dict[str, str]]]:
    for table in TABLES:
        for path in (folder / "perf_report_csvs" / f"{table}.csv", folder / "perf_report_csvs" / f"{table}.csv.gz"):
            if path.is_file():
                text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
                for row in csv.DictReader(io.StringIO(text)):
                    yield table, row


def _canonical(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class Counted:
    """Per call of a model: the FLOPs and bytes counted within it, found by (name, dims, types, concrete inputs)."""

    def __init__(self, model: TraceModel) -> None:
        s = model.slices
        work = operator_work(model)
        flops = np.zeros(len(s), dtype=np.int64)
        moved = np.zeros(len(s), dtype=np.int64)
        counted = work.counted
        flops[work.rows[counted]] = work.combos.flops[work.combo[counted]]
        moved[work.rows[counted]] = work.combos.bytes[work.combo[counted]]
        self.flops, self.bytes = subtree_sum(s, flops), subtree_sum(s, moved)
        self.calls: dict[tuple[str, ...], list[int]] = defaultdict(list)
        text = model.strings
        for row in np.flatnonzero(s.input_dims >= 0).tolist():
            concrete = json.loads(text[s.concrete_inputs[row]]) if s.concrete_inputs[row] >= 0 else []
            key = (text[s.name[row]], _canonical(json.loads(text[s.input_dims[row]])),
                   _canonical(json.loads(text[s.input_type[row]])), _canonical(concrete))
            self.calls[key].append(row)

    def find(self, row: dict[str, str]) -> list[tuple[int, int]]:
        key = (row["name"], _canonical(ast.literal_eval(row["Input Dims_first"])),
               _canonical(ast.literal_eval(row["Input type_first"])),
               _canonical(ast.literal_eval(row["Concrete Inputs_first"])))
        return sorted({(int(self.flops[r]), int(self.bytes[r])) for r in self.calls.get(key, [])})


def _expected_difference(table: str, row: dict[str, str]) -> tuple[int, int]:
    """(Profscope - TraceLens) in FLOPs and bytes where a definition differs on purpose (module docstring)."""
    dims = ast.literal_eval(row["Input Dims_first"])
    types = ast.literal_eval(row["Input type_first"])
    concrete = ast.literal_eval(row["Concrete Inputs_first"])
    if table == "CONV_fwd" and dims[2]:  # the bias: one addition per output element, C_out elements read
        out = _conv_output(dims[0], dims[1], concrete[3:6])
        return math.prod(out), out[1] * DTYPE_BYTES[types[0]]
    if table == "CONV_bwd" and concrete[10].startswith("[False"):  # no input gradient asked for
        x, w = dims[1], dims[2]
        out = _conv_output(x, w, concrete[4:7])
        flops = 2 * math.prod(out) * math.prod(w[1:])
        return -flops, -(math.prod(out) + math.prod(w) + math.prod(x)) * DTYPE_BYTES[types[1]]
    return 0, 0


def _conv_output(x: list[int], w: list[int], strides_paddings_dilations: list[str]) -> list[int]:
    stride, padding, dilation = (ast.literal_eval(v) for v in strides_paddings_dilations)
    spatial = [(size + 2 * p - d * (k - 1) - 1) // s + 1
               for size, k, s, p, d in zip(x[2:], w[2:], stride, padding, dilation)]
    return [x[0], w[0], *spatial]


@pytest.mark.parametrize("folder", FOLDERS)
def test_flops_and_bytes_per_call_agree_with_tracelens(folder: str) -> None:
    path = real_trace(folder)
    counted = Counted(load_trace(str(next(path.glob("*.json.gz")))))
    rows = list(_tables(path))
    assert rows, f"{folder}: no TraceLens table"
    disagreements, differing_on_purpose = [], 0
    for table, row in rows:
        found = counted.find(row)
        assert found, f"{folder} {table}: no call of {row['name']} with {row['Input Dims_first']}"
        flops = round(float(row["GFLOPS_first"]) * 1e9)
        moved = round(float(row["Data Moved (MB)_first"]) * 2**20)
        extra_flops, extra_bytes = _expected_difference(table, row)
        differing_on_purpose += (extra_flops, extra_bytes) != (0, 0)
        if (flops + extra_flops, moved + extra_bytes) not in found:
            disagreements.append(f"{table} {row['name']} {row['Input Dims_first']}: TraceLens {flops} FLOPs "
                                 f"{moved} bytes (+{extra_flops}, +{extra_bytes} by definition), Profscope {found}")
    assert disagreements == []
    # The differences on purpose are where the docstring says, no more: the traces have them.
    assert differing_on_purpose == {"tracelens/h100/Falconsai_nsfw_image_detection": 1,
                                    "tracelens/h100/facebook_timesformer-base-finetuned-k400": 1,
                                    "tracelens/mi300/resnet_act_checkpoint": 1}.get(folder, 0), differing_on_purpose


def test_every_kind_of_table_is_compared() -> None:
    kinds: dict[str, int] = defaultdict(int)
    for folder in FOLDERS:
        for table, row in _tables(real_trace(folder)):
            kinds[f"{table} {row['name']}"] += 1
    for expected in ("GEMM aten::mm", "GEMM aten::addmm", "GEMM aten::bmm", "CONV_fwd aten::convolution",
                     "CONV_bwd aten::convolution_backward", "SDPA_fwd aten::_scaled_dot_product_flash_attention",
                     "Normalization aten::native_layer_norm", "Normalization aten::native_batch_norm",
                     "Normalization aten::native_batch_norm_backward"):
        assert kinds[expected] > 0, expected
    assert sum(kinds.values()) >= 100
