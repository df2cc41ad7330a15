import assert from "node:assert/strict";
import { test } from "node:test";


import { kernelColumns } from "../src/views/kernel/columns";
import { operatorColumns, operatorRowKey, stackSummary } from "../src/views/operator/columns";
import { sortRows } from "../src/lib/table_model";
import type { OperatorRow } from "../src/api/operators";
import { readAnswer } from "./fixtures";

test("operator columns follow the grouping and whether the span has device time", () => {
  const ids = (columns: { id: string }[]) => columns.map((column) => column.id);
  assert.deepEqual(ids(operatorColumns("name", true)), [
    "name", "calls", "device_self", "device_total", "host_self", "host_total", "tc_eligible", "tc_self_share", "tc_total_share",
  ]);
  assert.deepEqual(ids(operatorColumns("input_shape", false)), ["name", "input_shape", "calls", "host_self", "host_total"]);
  assert.deepEqual(ids(operatorColumns("stack", false)), ["name", "stack", "calls", "host_self", "host_total"]);
});

test("every column but the name has a tooltip saying what it is", () => {
  for (const column of operatorColumns("name", true)) {
    if (column.id === "name") continue;
    assert.ok(column.tip !== undefined && column.tip.length > 20, column.id);
  }
  for (const column of kernelColumns("op_and_name")) {
    if (column.id === "name") continue;
    assert.ok(column.tip !== undefined && column.tip.length > 10, column.id);
  }
});

test("operator cells: µs numbers, Tensor Core shares only where they mean something", () => {
  const data = readAnswer("operators", "operators_gpu.json");
  const columns = operatorColumns("name", true);
  const text = (id: string, row: OperatorRow) => columns.find((column) => column.id === id)!.text(row);
  const cell = (id: string, rowIndex: number) => text(id, data.rows[rowIndex]!);
  assert.equal(cell("device_self", 0), "142,461");
  assert.equal(text("host_self", { ...data.rows[6]!, host_self: 3.5 }), "3.50");
  assert.equal(cell("tc_self_share", 2), "0.0%");
  assert.equal(text("tc_self_share", { ...data.rows[2]!, tc_self_share: 0.25 }), "25.0%");
  assert.equal(cell("tc_self_share", 3), "—"); // not eligible
  assert.equal(cell("tc_eligible", 0), "yes");
  // The name is text: markup stays markup-looking text.
  assert.equal(text("name", { ...data.rows[6]!, name: "<img src=x onerror=alert(1)>" }), "<img src=x onerror=alert(1)>");
});

test("sorting the fixture by host self time, largest first", () => {
  const data = readAnswer("operators", "operators_gpu.json");
  const hostSelf = operatorColumns("name", true).find((column) => column.id === "host_self")!;
  const sorted = sortRows(data.rows, hostSelf.sortValue, "desc").map((row) => row.name);
  assert.deepEqual(sorted.slice(0, 3), ["aten::add_", "aten::cudnn_convolution", "aten::cudnn_convolution_backward_input"]);
  assert.equal(sorted.length, data.rows.length);
});

test("row keys tell apart rows of one name with different shapes or stacks", () => {
  const base = readAnswer("operators", "operators_gpu.json").rows[0]!;
  const keys = new Set([
    operatorRowKey(base),
    operatorRowKey({ ...base, input_shape: "[[1]]" }),
    operatorRowKey({ ...base, input_shape: "[[2]]" }),
    operatorRowKey({ ...base, stack: "a.py(1): f" }),
  ]);
  assert.equal(keys.size, 4);
});

test("stack summaries show the innermost frame and count the rest", () => {
  assert.equal(stackSummary("a.py(1): f\nb.py(2): g\nc.py(3): h"), "a.py(1): f (+2 frames)");
  assert.equal(stackSummary("a.py(1): f\nb.py(2): g"), "a.py(1): f (+1 frame)");
  assert.equal(stackSummary("a.py(1): f"), "a.py(1): f");
  assert.equal(stackSummary(""), "(no stack)");
  assert.equal(stackSummary(null), "(no stack)");
});

test("kernel cells: durations, blocks per SM, occupancy, unknowns as dashes", () => {
  const data = readAnswer("kernels", "kernels_gpu.json");
  const columns = kernelColumns("name");
  assert.deepEqual(columns.map((column) => column.id), [
    "name", "calls", "total", "mean", "min", "max", "blocks_per_sm", "achieved_occupancy", "tensor_cores",
  ]);
  const cells = (rowIndex: number) => columns.map((column) => column.text(data.rows[rowIndex]!));
  assert.deepEqual(cells(0).slice(1), ["162", "80,756", "498", "323", "1,017", "42.25", "30.0%", "no"]);
  const unknown = { ...data.rows[4]!, blocks_per_sm: null, achieved_occupancy: null };
  assert.deepEqual(columns.map((column) => column.text(unknown)).slice(6), ["—", "—", "no"]);
  assert.equal(kernelColumns("op_and_name")[1]?.id, "op");
  // The name cell is the short name; its tooltip is the full signature.
  assert.equal(cells(0)[0], "cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>");
  assert.match(columns[0]!.cellTip!(data.rows[0]!) ?? "", /^void cudnn::detail::dgrad_engine<.*\)$/);
});
