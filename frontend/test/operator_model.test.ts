import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { OperatorRow } from "../src/api/operators";
import { defaultSort, operatorKey, rowLabel, wantedRow } from "../src/views/operator/model";
import { readAnswer } from "./fixtures";

const data = readAnswer("operators", "operators_gpu.json");
const conv = data.rows.find((row) => row.name === "aten::cudnn_convolution")!;
/** The same operator at two shapes, as the rows of the input-shape grouping. */
const shaped: OperatorRow[] = [
  { ...conv, input_shape: "[[32, 3, 224, 224], [64, 3, 7, 7]]" },
  { ...conv, input_shape: "[[32, 64, 56, 56], [64, 64, 3, 3]]" },
];

describe("the Operator page's rows", () => {
  test("a row's label in the charts follows the grouping", () => {
    assert.equal(rowLabel(conv, "name"), "aten::cudnn_convolution");
    assert.equal(rowLabel(shaped[1]!, "input_shape"), "aten::cudnn_convolution [[32, 64, 56, 56], [64, 64, 3, 3]]");
    assert.equal(rowLabel({ ...conv, stack: "train.py(42): step\nmodel.py(7): forward" }, "stack"), "aten::cudnn_convolution · train.py(42): step (+1 frame)");
    assert.equal(rowLabel(conv, "stack"), "aten::cudnn_convolution · (no stack)");
  });

  test("the table sorts by device self time where there is device work, else by host self time", () => {
    assert.deepEqual(defaultSort(true), { column: "device_self", direction: "desc" });
    assert.deepEqual(defaultSort(false), { column: "host_self", direction: "desc" });
  });

  test("the drill-down asks for the shapes only when the rows are grouped by them", () => {
    assert.deepEqual(operatorKey(shaped[0]!, "input_shape"), { name: "aten::cudnn_convolution", inputShape: "[[32, 3, 224, 224], [64, 3, 7, 7]]" });
    assert.deepEqual(operatorKey(shaped[0]!, "name"), { name: "aten::cudnn_convolution", inputShape: null });
  });

  test("the URL's drill-down opens the row of that name and shapes, the first of that name without shapes", () => {
    assert.equal(wantedRow(shaped, "aten::cudnn_convolution", "[[32, 64, 56, 56], [64, 64, 3, 3]]"), shaped[1]);
    assert.equal(wantedRow(shaped, "aten::cudnn_convolution", null), shaped[0]);
    assert.equal(wantedRow(shaped, "aten::mm", null), undefined);
    assert.equal(wantedRow(shaped, null, null), undefined);
  });
});
