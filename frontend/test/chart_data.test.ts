import assert from "node:assert/strict";
import { test } from "node:test";
import { shares, stackColumns, stepAxisLabels, timeScale, topN } from "../src/lib/chart_data";
import { byteTicks } from "../src/lib/chart_ticks";

test("stackColumns: cumulative tops, top layer first, totals per column", () => {
  const stacked = stackColumns(2, [
    { label: "Kernel", color: "blue", values: [10, 20] },
    { label: "Memcpy", color: "orange", values: [1, Number.NaN] },
    { label: "Other", color: "grey", values: [4, -3] },
  ]);
  assert.deepEqual(stacked.x, [0, 1]);
  assert.deepEqual(stacked.layers.map((layer) => layer.label), ["Other", "Memcpy", "Kernel"]);
  assert.deepEqual(stacked.tops, [
    [15, 20],
    [11, 20],
    [10, 20],
  ]);
  assert.deepEqual(stacked.totals, [15, 20]);
});

test("stackColumns: a layer shorter than the column count counts as zero there", () => {
  const stacked = stackColumns(3, [{ label: "a", color: "c", values: [1] }]);
  assert.deepEqual(stacked.tops, [[1, 0, 0]]);
});

test("topN: largest first, non-positive and NaN dropped, ties in input order", () => {
  const rows = [
    { name: "a", v: 5 },
    { name: "b", v: 0 },
    { name: "c", v: 9 },
    { name: "d", v: Number.NaN },
    { name: "e", v: 5 },
    { name: "f", v: 1 },
  ];
  assert.deepEqual(topN(rows, (row) => row.v, 3).map((row) => row.name), ["c", "a", "e"]);
  assert.deepEqual(topN(rows, (row) => row.v, 10).map((row) => row.name), ["c", "a", "e", "f"]);
  assert.deepEqual(topN(rows, (row) => row.v, 0), []);
});

test("step labels: the number of #N names, short distinct names, else positions", () => {
  assert.deepEqual(stepAxisLabels(["ProfilerStep#5", "ProfilerStep#6"]), ["5", "6"]);
  assert.deepEqual(stepAxisLabels(["train_step#3", "train_step#4"]), ["3", "4"]);
  assert.deepEqual(stepAxisLabels(["span"]), ["span"]);
  assert.deepEqual(stepAxisLabels(["train/forward", "train/forward", "train/forward"]), ["1", "2", "3"]);
  assert.deepEqual(stepAxisLabels(["a very long step name", "another long step name"]), ["1", "2"]);
  assert.deepEqual(stepAxisLabels([]), []);
});

test("shares sum to one, or are all zero", () => {
  assert.deepEqual(shares([1, 3]), [0.25, 0.75]);
  assert.deepEqual(shares([0, 0]), [0, 0]);
  assert.deepEqual(shares([0.2, Number.NaN]), [1, 0]);
});

test("the step axis is titled with the steps' own name", async () => {
  const { stepAxisTitle } = await import("../src/lib/chart_data");
  assert.equal(stepAxisTitle(["ProfilerStep#2", "ProfilerStep#3"]), "ProfilerStep #");
  assert.equal(stepAxisTitle(["ProfileStep#2", "ProfileStep#3"]), "ProfileStep #"); // Paddle
  assert.equal(stepAxisTitle(["iteration 1", "iteration 2"]), "Step");
  assert.equal(stepAxisTitle(["a#1", "b#2"]), "Step");
});


test("a time chart's scales: x after the origin, y up to the highest value with room above, or to a round tick", () => {
  const series = [{ values: [10, Number.NaN, 40] }, { values: [5, 30, 20] }];
  const plain = timeScale([1000, 1500, 3000], 1000, series, []);
  assert.deepEqual(plain.xs, [0, 500, 2000]);
  assert.equal(plain.xMax, 2000);
  assert.equal(plain.yTop, 40 * 1.1);
  assert.equal(plain.ticks, null);
  // A line kept in scale raises the top; one that is not stays above it (named at the top edge).
  assert.equal(timeScale([0], 0, series, [{ y: 100 }]).yTop, 100 * 1.1);
  assert.equal(timeScale([0], 0, series, [{ y: 100, inScale: false }]).yTop, 40 * 1.1);
  // With ticks the axis ends at the last tick for the highest value plus 5%.
  const ticked = timeScale([0, 1], 0, [{ values: [900 * 1024 ** 2] }], [], byteTicks);
  assert.deepEqual(ticked.ticks, byteTicks(900 * 1024 ** 2 * 1.05));
  assert.equal(ticked.yTop, ticked.ticks?.[ticked.ticks.length - 1]);
  // Nothing to draw: one unit each way.
  assert.deepEqual(timeScale([], 0, [], []), { xs: [], xMax: 1, yTop: 1, ticks: null });
});
