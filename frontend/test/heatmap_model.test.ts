import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { StepMatrix } from "../src/api/rank_steps";
import {
  MISSING_COLOUR,
  cellAt,
  cellLines,
  cellWindow,
  columnWidth,
  heatColour,
  maxCell,
  rowLayout,
  stragglerRow,
  worstRank,
} from "../src/lib/heatmap_model";

// Three ranks, two steps; rank 2 is the straggler of step 1; rank 1 has no step 0.
const matrix: StepMatrix = {
  ranks: [
    { worker: "w0", rank: 0, span: "s0" },
    { worker: "w1", rank: 1, span: "s1" },
    { worker: "w2", rank: 2, span: "s2" },
  ],
  steps: ["ProfilerStep#3", "ProfilerStep#4"],
  step_time: [[1000, 1000], [null, 1000], [1000, 1500]],
  communication: [[300, 300], [null, 250], [100, 100]],
  exposed_communication: [[200, 200], [null, 150], [50, 50]],
  step_start: [[10, 1010], [null, 2010], [30, 1030]],
  step_median: [1000, 1000],
  slowest_rank: [0, 2],
};

describe("rows of the heat map", () => {
  test("one row per rank while they fit, at most 22 px", () => {
    assert.deepEqual(rowLayout(2), { rows: 2, rowHeight: 28, first: [0, 1, 2] }); // two ranks read as two table rows
    assert.deepEqual(rowLayout(3), { rows: 3, rowHeight: 28, first: [0, 1, 2, 3] });
    assert.equal(rowLayout(20).rowHeight, 28);
    assert.equal(rowLayout(64).rowHeight, 8);
  });

  test("1,000 ranks in 560 rows of pixels: every rank in exactly one row", () => {
    const layout = rowLayout(1000);
    assert.equal(layout.rows, 560);
    assert.equal(layout.rowHeight, 1);
    assert.equal(layout.first[0], 0);
    assert.equal(layout.first[560], 1000);
    for (let i = 0; i < 560; i += 1) {
      const count = (layout.first[i + 1] ?? 0) - (layout.first[i] ?? 0);
      assert.ok(count === 1 || count === 2, `row ${i} has ${count} ranks`);
    }
  });

  test("a row of several ranks shows the worst of them, so a straggler stays visible", () => {
    const cells = Array.from({ length: 1000 }, (_, r) => [r === 637 ? 2000 : 1000]);
    const layout = rowLayout(1000);
    const row = layout.first.findIndex((first, i) => first <= 637 && (layout.first[i + 1] ?? 0) > 637);
    assert.equal(worstRank(cells, layout, row, 0), 637);
    assert.equal(worstRank([[null]], rowLayout(1), 0, 0), -1);
  });

  test("a step's slowest rank is framed when 10% or more above the median", () => {
    assert.equal(stragglerRow(matrix, rowLayout(3), 1), 2);
    assert.equal(stragglerRow(matrix, rowLayout(3), 0), -1); // every rank at the median
    const cells = (value: number) => Array.from({ length: 1000 }, () => [value]);
    const big: StepMatrix = {
      ranks: Array.from({ length: 1000 }, (_, r) => ({ worker: `w${r}`, rank: r, span: "s" })),
      steps: ["a"],
      step_time: Array.from({ length: 1000 }, (_, r) => [r === 637 ? 200 : 100]),
      communication: cells(0),
      exposed_communication: cells(0),
      step_start: cells(0),
      step_median: [100],
      slowest_rank: [637],
    };
    const layout = rowLayout(1000);
    const row = stragglerRow(big, layout, 0);
    assert.ok((layout.first[row] ?? 0) <= 637 && 637 < (layout.first[row + 1] ?? 0));
  });

  test("column width stays between 3 and 72 px", () => {
    // The steps share the page's width: 3 steps on the 1,100 px a 1,400 px window leaves are 366 px each (they
    // were 72 px at most: a 218 px map on a 1,150 px page).
    assert.equal(columnWidth(3, 1100), 366);
    assert.equal(columnWidth(2, 800), 400);
    assert.equal(columnWidth(100, 800), 8);
    assert.equal(columnWidth(1000, 800), 3); // then the map scrolls sideways
    assert.equal(columnWidth(0, 800), 0);
    for (const steps of [1, 2, 3, 12, 64, 200]) assert.ok(columnWidth(steps, 1100) * steps >= 1100 - steps, String(steps));
  });
});

describe("colours", () => {
  test("step time against the step's median: neutral, red slower, blue faster, saturating at 50%", () => {
    assert.equal(heatColour("step_time", 1000, 1000, 0), "rgb(236, 238, 242)");
    assert.equal(heatColour("step_time", 1500, 1000, 0), "rgb(205, 38, 38)");
    assert.equal(heatColour("step_time", 3000, 1000, 0), "rgb(205, 38, 38)");
    assert.equal(heatColour("step_time", 500, 1000, 0), "rgb(49, 110, 196)");
    assert.equal(heatColour("step_time", null, 1000, 0), MISSING_COLOUR);
  });

  test("communication against the largest cell", () => {
    assert.equal(maxCell(matrix.communication), 300);
    assert.equal(heatColour("communication", 300, null, 300), "rgb(74, 20, 140)");
    assert.equal(heatColour("communication", 0, null, 300), "rgb(236, 238, 242)");
  });
});

describe("pointer and tooltip", () => {
  const layout = rowLayout(3);
  test("the cell under the pointer", () => {
    assert.deepEqual(cellAt(matrix, "step_time", layout, 50, 60, 60), { rank: 2, step: 1, ranksInRow: 1 }); // rows of 28 px
    assert.equal(cellAt(matrix, "step_time", layout, 50, 10, 30), null); // rank 1 has no step 0
    assert.equal(cellAt(matrix, "step_time", layout, 50, 120, 10), null); // right of the last step
  });

  test("the tooltip lists the figures and the step time against the median", () => {
    const lines = cellLines(matrix, { rank: 2, step: 1, ranksInRow: 1 });
    assert.deepEqual(lines, [
      "rank 2 (worker w2) · ProfilerStep#4",
      "Step time 1.50 ms (+50.0% vs median 1.00 ms)",
      "Communication 100 µs",
      "Exposed communication 50.0 µs",
      "The slowest rank of this step",
      "Click to open this rank's step in the trace",
    ]);
    assert.match(cellLines(matrix, { rank: 0, step: 0, ranksInRow: 2 })[1] ?? "", /worst of 2 ranks/);
  });

  test("a click opens the step's window in the worker's own trace time", () => {
    assert.deepEqual(cellWindow(matrix, { rank: 2, step: 1, ranksInRow: 1 }), { start: 1030, end: 2530 });
  });
});
