import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ModuleTree } from "../src/api/modules";
import { flattenTree, indexTree } from "../src/lib/tree_model";
import {
  NATURAL_ORDER,
  hiddenColumnsText,
  moduleCellText,
  moduleComparator,
  moduleValues,
  nextSort,
  recordedColumns,
} from "../src/views/modules/model";

/** (model) ── encoder (forward 30 µs, 2 calls), head (forward 50 µs, 1 call); no device time, no backward. */
const nodes: ModuleTree = {
  name: ["(model)", "encoder", "head"],
  parent: [-1, 0, 0],
  calls: [0, 2, 1],
  forward_host: [0, 30, 50],
  forward_device: [0, 0, 0],
  backward_host: [0, 0, 0],
  backward_device: [0, 0, 0],
};
const index = indexTree(nodes.parent);
const values = moduleValues(nodes, index);

describe("the Modules page's columns and order", () => {
  test("the root shows its modules' sum; time columns recorded nowhere are left out and named", () => {
    assert.equal(values.forward_host[0], 80);
    const { columns, hidden } = recordedColumns(values);
    assert.deepEqual(columns.map((column) => column.id), ["calls", "forward_host"]);
    assert.deepEqual(hidden, ["forward device", "backward host", "backward device"]);
    assert.equal(hiddenColumnsText(hidden), "Nothing recorded for forward device, backward host, backward device in this span: those columns are left out.");
    assert.equal(hiddenColumnsText(["backward host"]), "Nothing recorded for backward host in this span: that column is left out.");
    assert.equal(hiddenColumnsText([]), null);
  });

  test("a header click sorts descending (the name ascending), then reverses, then goes back to the recorded order", () => {
    const once = nextSort(NATURAL_ORDER, "forward_host");
    assert.deepEqual(once, { column: "forward_host", direction: "desc" });
    const twice = nextSort(once, "forward_host");
    assert.deepEqual(twice, { column: "forward_host", direction: "asc" });
    assert.equal(nextSort(twice, "forward_host"), NATURAL_ORDER);
    assert.deepEqual(nextSort(twice, "name"), { column: "name", direction: "asc" });
  });

  test("siblings in the sort's order; the recorded order needs no comparator", () => {
    const { columns } = recordedColumns(values);
    const order = (sort: { column: string; direction: "asc" | "desc" }): string[] =>
      flattenTree(index, new Set([0]), moduleComparator(sort, nodes.name, columns, values)).map((row) => nodes.name[row.node] ?? "");
    assert.deepEqual(order({ column: "forward_host", direction: "desc" }), ["(model)", "head", "encoder"]);
    assert.deepEqual(order({ column: "calls", direction: "desc" }), ["(model)", "encoder", "head"]);
    assert.deepEqual(order({ column: "name", direction: "desc" }), ["(model)", "head", "encoder"]);
    assert.equal(moduleComparator(NATURAL_ORDER, nodes.name, columns, values), undefined);
    // A column left out sorts as recorded.
    assert.equal(moduleComparator({ column: "backward_host", direction: "desc" }, nodes.name, columns, values), undefined);
  });

  test("cells: the root's calls are a dash, times in µs", () => {
    assert.equal(moduleCellText("calls", 0, 0), "—");
    assert.equal(moduleCellText("calls", 1, 2), "2");
    assert.equal(moduleCellText("forward_host", 0, 80), moduleCellText("backward_host", 3, 80));
  });
});
