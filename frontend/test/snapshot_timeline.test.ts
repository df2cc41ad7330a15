import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SnapshotTimeline } from "../src/api/snapshot";
import { columnAt, hoverLines, timelineMax } from "../src/views/snapshot/timeline_model";

const MiB = 1024 * 1024;

/** Two pixels of a 1,000 µs window: two sites stacked and the other sites above them. */
const answer: SnapshotTimeline = {
  device: 0,
  axis: "time_us",
  start: 1000,
  end: 2000,
  width: 2,
  span: { start: 1000, end: 2000 },
  resolution: 500,
  time: [1000, 1500],
  active_max: [40 * MiB, 70 * MiB],
  active_min: [30 * MiB, 60 * MiB],
  allocated: [40 * MiB, 70 * MiB],
  reserved: [64 * MiB, 100 * MiB],
  sample_row: [3, 9],
  sites: [
    { site: 7, label: "forward", frame: { file: "train.py", line: 12, name: "forward", kind: "user" }, max: 30 * MiB },
    { site: 8, label: "optimizer", frame: null, max: 20 * MiB },
  ],
  bands: [[20 * MiB, 30 * MiB], [10 * MiB, 20 * MiB]],
  other: [10 * MiB, 20 * MiB],
  peak: { bytes: 70 * MiB, row: 9, time: 1500 },
  reserved_peak: 100 * MiB,
  markers: [],
  annotations: [],
};

describe("the snapshot timeline's scale", () => {
  test("the highest active bytes plus 5%, reserved bytes counted only where known", () => {
    assert.equal(timelineMax(answer, false, null), 70 * MiB * 1.05);
    assert.equal(timelineMax(answer, true, null), 100 * MiB * 1.05);
  });

  test("a capacity under one and a half times the highest is on the scale, a larger one is not", () => {
    assert.equal(timelineMax(answer, false, 80 * MiB), 80 * MiB * 1.05);
    assert.equal(timelineMax(answer, false, 200 * MiB), 70 * MiB * 1.05);
  });
});

describe("what the pointer reads", () => {
  test("a point of the window falls in the answer's column holding it", () => {
    assert.deepEqual(columnAt(answer, { start: 1000, end: 2000 }, 0.25), { t: 1250, column: 0 });
    assert.deepEqual(columnAt(answer, { start: 1000, end: 2000 }, 0.75), { t: 1750, column: 1 });
    // A window wider than the answer: left of the answer is a negative column (none), right of it one past the last.
    assert.deepEqual(columnAt(answer, { start: 0, end: 2000 }, 0.1), { t: 200, column: -2 });
    assert.deepEqual(columnAt(answer, { start: 1000, end: 3000 }, 0.75), { t: 2500, column: 3 });
  });

  test("on a site's band: its label, bytes and frame; above the sites: the other sites; then reserved bytes", () => {
    const axis = { axis: "time_us" as const, origin: 1000, reservedKnown: true };
    const onSite = hoverLines(answer, { t: 1250, column: 0, bytes: 5 * MiB }, axis);
    assert.equal(onSite.length, 4);
    assert.match(onSite[0]!, /^\+250(\.0)? µs · active 40(\.0)? MiB$/);
    assert.match(onSite[1]!, /^forward: 20(\.0)? MiB$/);
    assert.equal(onSite[2], "train.py:12");
    assert.match(onSite[3]!, /^reserved 64(\.0)? MiB$/);
    const onOther = hoverLines(answer, { t: 1750, column: 1, bytes: 55 * MiB }, { ...axis, reservedKnown: false });
    assert.equal(onOther.length, 2);
    assert.match(onOther[1]!, /^other sites: 20(\.0)? MiB$/);
    const onSecondSite = hoverLines(answer, { t: 1750, column: 1, bytes: 35 * MiB }, { ...axis, reservedKnown: false });
    assert.deepEqual(onSecondSite.slice(1).map((line) => line.split(":")[0]), ["optimizer"]);
  });
});
