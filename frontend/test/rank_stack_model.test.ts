import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { PlacedWorker } from "../src/api/rank_steps";
import type { TrackInfo } from "../src/api/trace";
import { ranksParam } from "../src/trace/ranks/ranks_mode";
import {
  COMPACT_PX,
  HEADER_PX,
  MAX_DEPTHS,
  ROW_PX,
  initialWindow,
  isCollectiveName,
  layoutWorkers,
  niceStep,
  panWindow,
  stackedTracks,
  workerLabel,
  workerWindow,
  xOf,
  zoomWindow,
} from "../src/trace/ranks/rank_stack_model";

const track = (id: string, kind: string, maxDepth = 0): TrackInfo => ({ id, name: id, kind, group: "g", maxDepth, unit: "" });
const worker = (rank: number, shift: number, stepStart: number, stepEnd: number, late = 0): PlacedWorker => ({
  worker: `rank${rank}`,
  rank,
  span: "s",
  shift,
  step_start: stepStart,
  step_end: stepEnd,
  late,
  steps: [],
});

describe("which tracks are stacked", () => {
  test("device streams when there are any, never counters", () => {
    const tracks = [track("s1", "cpu"), track("s2", "gpu"), track("c:gpu_util:0", "counter"), track("s3", "gpu")];
    assert.deepEqual(stackedTracks(tracks).map((t) => t.id), ["s2", "s3"]);
  });

  test("host threads on a CPU-only rank, at most four", () => {
    const tracks = ["s1", "s2", "s3", "s4", "s5"].map((id) => track(id, "cpu"));
    assert.deepEqual(stackedTracks(tracks).map((t) => t.id), ["s1", "s2", "s3", "s4"]);
  });
});

describe("layout and axis", () => {
  test("each worker: a header, then its tracks' rows (at most three levels deep)", () => {
    const rows = layoutWorkers([worker(0, 0, 0, 10), worker(1, 0, 0, 10)], (w) => (w.rank === 0 ? [track("s1", "cpu", 5)] : [track("s1", "cpu", 0), track("s2", "cpu", 1)]));
    assert.equal(rows[0]?.top, 0);
    assert.equal(rows[0]?.tracks[0]?.top, HEADER_PX);
    assert.equal(rows[0]?.tracks[0]?.depths, MAX_DEPTHS);
    assert.equal(rows[0]?.bottom, HEADER_PX + MAX_DEPTHS * ROW_PX + 4);
    assert.equal(rows[1]?.top, rows[0]?.bottom);
    assert.equal(rows[1]?.tracks[1]?.depths, 2);
  });

  test("compact: one row per worker that all its tracks share", () => {
    const rows = layoutWorkers([worker(0, 0, 0, 10), worker(1, 0, 0, 10)], () => [track("s1", "cpu", 5), track("s2", "cpu", 0)], true);
    assert.deepEqual(rows.map((r) => [r.top, r.bottom, r.compact]), [[0, COMPACT_PX, true], [COMPACT_PX, 2 * COMPACT_PX, true]]);
    assert.deepEqual(rows[1]?.tracks.map((t) => t.top), [COMPACT_PX, COMPACT_PX]);
  });

  test("the first window covers the step on every rank, with a margin", () => {
    // Aligned by time: rank 1's step starts 50 µs after rank 0's and lasts 800 µs.
    const window = initialWindow([worker(0, -1000, 1000, 1500), worker(1, -950, 1000, 1800, 50)]);
    assert.equal(window.start, -25.5);
    assert.equal(window.end, 875.5);
  });

  test("each worker is asked for the window in its own time", () => {
    assert.deepEqual(workerWindow({ start: 0, end: 500 }, worker(0, -950, 1000, 1500)), { start: 950, end: 1450 });
  });

  test("zoom keeps the time under the pointer, pan moves by pixels", () => {
    const window = { start: 0, end: 1000 };
    const zoomed = zoomWindow(window, 0.5, 250, 1000);
    assert.equal(xOf(250, zoomed, 1000), 250);
    assert.equal(zoomed.end - zoomed.start, 500);
    assert.deepEqual(panWindow(window, 100, 1000), { start: -100, end: 900 });
  });

  test("axis ticks are 1, 2 or 5 times a power of ten", () => {
    assert.equal(niceStep(0.7), 1);
    assert.equal(niceStep(13), 20);
    assert.equal(niceStep(420), 500);
  });
});

describe("collectives and labels", () => {
  test("collectives are recognised by name", () => {
    for (const name of ["ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", "gloo:all_reduce", "c10d::allreduce_", "nccl:broadcast"]) {
      assert.ok(isCollectiveName(name), name);
    }
    for (const name of ["aten::mm", "ProfilerStep#3", "volta_sgemm_128x64_nn"]) assert.ok(!isCollectiveName(name), name);
  });

  test("a rank that started late says so when aligned by time", () => {
    const format = (us: number): string => `${us} µs`;
    assert.equal(workerLabel(worker(2, 0, 0, 1, 100), true, format), "rank 2 · rank2 · started 100 µs late");
    assert.equal(workerLabel(worker(2, 0, 0, 1, 100), false, format), "rank 2 · rank2");
  });

  test("the URL's alignment", () => {
    assert.equal(ranksParam("time"), "time");
    assert.equal(ranksParam("step"), "step");
    assert.equal(ranksParam("sideways"), null);
    assert.equal(ranksParam(null), null);
  });
});
