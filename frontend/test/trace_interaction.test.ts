import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { CounterTileData, SliceTileData } from "../src/trace/data/tiles";
import { bucketIndexAt, hitTest, sliceIndexAt } from "../src/trace/interaction/hit_test";
import { isDrag, keyMotion, wheelActions, type MotionKey } from "../src/trace/interaction/navigation";
import { DEFAULT_METRICS, depthAt, groupTracks, layoutTracks, rowAt, visibleCounterTracks, visibleSliceTracks } from "../src/trace/layout";
import { TRACE_TRACKS } from "./fixtures";

const TRACKS = TRACE_TRACKS;

describe("track layout", () => {
  test("groups keep their first-appearance order and gather their tracks", () => {
    const groups = [...groupTracks(TRACKS).entries()].map(([group, tracks]) => [group, tracks.map((track) => track.id)]);
    assert.deepEqual(groups, [
      ["process Traces", ["s4"]],
      ["python", ["s1", "s2"]],
      ["GPU 0", ["s3", "c:gpu_util:0"]],
    ]);
  });

  test("a slice track is one row per depth; a counter is a small chart", () => {
    const { groupHeaderHeight: group, sliceRowHeight: row, trackPadding: pad, counterHeight } = DEFAULT_METRICS;
    const layout = layoutTracks(TRACKS, new Set());
    assert.equal(layout.rows.length, 8);
    const s1 = layout.tracks.get("s1");
    assert.equal(s1?.y, group + (row + 2 * pad) + group);
    assert.equal(s1?.height, 8 * row + 2 * pad);
    assert.equal(layout.tracks.get("c:gpu_util:0")?.height, counterHeight);
    assert.equal(layout.height, 3 * group + (1 + 8 + 5 + 1) * row + 4 * 2 * pad + counterHeight);
    assert.deepEqual(visibleSliceTracks(layout), ["s4", "s1", "s2", "s3"]);
    assert.deepEqual(visibleCounterTracks(layout), ["c:gpu_util:0"]);
  });

  test("collapsing a group keeps its header and drops its tracks", () => {
    const layout = layoutTracks(TRACKS, new Set(["python"]));
    assert.equal(layout.tracks.has("s1"), false);
    assert.deepEqual(visibleSliceTracks(layout), ["s4", "s3"]);
    const header = layout.rows.find((row) => row.kind === "group" && row.group === "python");
    assert.ok(header?.kind === "group" && header.collapsed && header.trackCount === 2);
  });

  test("rows and depths are found from y", () => {
    const layout = layoutTracks(TRACKS, new Set());
    const s1 = layout.tracks.get("s1");
    assert.ok(s1 !== undefined);
    assert.equal(rowAt(layout, -1), null);
    assert.equal(rowAt(layout, 0)?.kind, "group");
    assert.equal(rowAt(layout, s1.y + 1), s1);
    assert.equal(rowAt(layout, s1.y + s1.height - 1), s1);
    assert.equal(rowAt(layout, layout.height + 5), null);
    const { sliceRowHeight: row, trackPadding: pad } = DEFAULT_METRICS;
    assert.equal(depthAt(s1, s1.y + pad + 2.5 * row, DEFAULT_METRICS), 2);
    assert.equal(depthAt(s1, s1.y + 1, DEFAULT_METRICS), -1, "in the padding");
  });
});

function tiles(): { slices: SliceTileData; counters: CounterTileData } {
  return {
    slices: {
      names: ["aten::conv2d", "aten::add", "sgemm"],
      resolutionUs: 1,
      tracks: new Map([
        [
          "s1",
          {
            slices: {
              id: new Float64Array([10, 11, 12]),
              start: new Float64Array([100, 150, 400]),
              dur: new Float64Array([200, 20, 0.5]),
              depth: new Int32Array([0, 1, 0]),
              name: new Int32Array([0, 1, 1]),
            },
            blocks: { start: new Float64Array([600]), end: new Float64Array([650]), depth: new Int32Array([0]), count: new Float64Array([12]) },
          },
        ],
        [
          "s3",
          {
            slices: { id: new Float64Array([20]), start: new Float64Array([160]), dur: new Float64Array([30]), depth: new Int32Array([0]), name: new Int32Array([2]) },
            blocks: { start: new Float64Array(0), end: new Float64Array(0), depth: new Int32Array(0), count: new Float64Array(0) },
          },
        ],
      ]),
    },
    counters: {
      resolutionUs: 50,
      tracks: new Map([
        [
          "c:gpu_util:0",
          new Map([
            ["utilization", { time: new Float64Array([0, 50, 100]), mean: new Float64Array([0.1, 0.5, 1]), min: new Float64Array([0, 0, 1]), max: new Float64Array([1, 1, 1]) }],
          ]),
        ],
      ]),
    },
  };
}

describe("hit testing", () => {
  const layout = layoutTracks(TRACKS, new Set());
  const { slices, counters } = tiles();
  const s1 = layout.tracks.get("s1");
  const s3 = layout.tracks.get("s3");
  const util = layout.tracks.get("c:gpu_util:0");
  const { sliceRowHeight: row, trackPadding: pad } = DEFAULT_METRICS;
  const at = (y: number, time: number, usPerPx = 1) => hitTest({ layout, slices, counters, time, y, usPerPx });

  test("finds the slice under the pointer at the right depth", () => {
    assert.ok(s1 !== undefined && s3 !== undefined);
    const outer = at(s1.y + pad + 5, 120);
    assert.equal(outer?.kind, "slice");
    assert.ok(outer?.kind === "slice" && outer.id === 10 && outer.name === "aten::conv2d" && outer.depth === 0);
    const inner = at(s1.y + pad + row + 5, 160);
    assert.ok(inner?.kind === "slice" && inner.id === 11 && inner.name === "aten::add");
    const kernel = at(s3.y + pad + 5, 170);
    assert.ok(kernel?.kind === "slice" && kernel.id === 20 && kernel.trackId === "s3");
    assert.equal(at(s1.y + pad + row + 5, 300), null, "nothing at depth 1 there");
  });

  test("a sub-pixel slice is clickable within two pixels; further is a miss", () => {
    assert.ok(s1 !== undefined);
    const near = at(s1.y + pad + 5, 401.5, 1);
    assert.ok(near?.kind === "slice" && near.id === 12);
    assert.equal(at(s1.y + pad + 5, 410, 1), null);
    assert.equal(sliceIndexAt(slices.tracks.get("s1")!, 0, 401.5, 0), -1);
  });

  test("busy blocks, counters and group headers answer too", () => {
    assert.ok(s1 !== undefined && util !== undefined);
    const block = at(s1.y + pad + 5, 620);
    assert.ok(block?.kind === "block" && block.count === 12 && block.start === 600);
    const counter = at(util.y + 10, 60);
    assert.ok(counter?.kind === "counter" && counter.values[0]?.mean === 0.5 && counter.unit === "fraction");
    assert.equal(at(util.y + 10, 160), null, "past the last bucket");
    assert.deepEqual(at(1, 0), { kind: "group", group: "process Traces" });
  });

  test("counter buckets are found by binary search", () => {
    const series = tiles().counters.tracks.get("c:gpu_util:0")?.get("utilization");
    assert.ok(series !== undefined);
    assert.equal(bucketIndexAt(series, -1, 50), -1);
    assert.equal(bucketIndexAt(series, 0, 50), 0);
    assert.equal(bucketIndexAt(series, 99.9, 50), 1);
    assert.equal(bucketIndexAt(series, 149, 50), 2);
    assert.equal(bucketIndexAt(series, 150, 50), -1);
  });
});

describe("navigation input", () => {
  const wheel = { deltaX: 0, deltaY: 0, deltaMode: 0, ctrlKey: false, metaKey: false, shiftKey: false };

  test("vertical wheel zooms (down: out), sideways pans, shift scrolls, pinch zooms faster", () => {
    const out = wheelActions({ ...wheel, deltaY: 100 }, 800);
    assert.ok(out[0]?.kind === "zoom" && out[0].factor > 1.1 && out[0].factor < 1.35);
    const zoomIn = wheelActions({ ...wheel, deltaY: -100 }, 800);
    assert.ok(zoomIn[0]?.kind === "zoom" && zoomIn[0].factor < 1);
    assert.deepEqual(wheelActions({ ...wheel, deltaX: 40, deltaY: 5 }, 800), [{ kind: "pan", px: 40 }]);
    assert.deepEqual(wheelActions({ ...wheel, deltaY: 3, deltaMode: 1, shiftKey: true }, 800), [{ kind: "scroll", px: 48 }]);
    const pinch = wheelActions({ ...wheel, deltaY: 10, ctrlKey: true }, 800);
    const plain = wheelActions({ ...wheel, deltaY: 10 }, 800);
    assert.ok(pinch[0]?.kind === "zoom" && plain[0]?.kind === "zoom" && pinch[0].factor > plain[0].factor);
    assert.deepEqual(wheelActions(wheel, 800), []);
  });

  test("held keys zoom and pan at a steady rate; opposite keys cancel", () => {
    const held = (...keys: MotionKey[]) => new Set<MotionKey>(keys);
    const zoomIn = keyMotion(held("w"), 1000 / 60);
    assert.ok(zoomIn.zoomFactor < 1 && zoomIn.panFraction === 0);
    const right = keyMotion(held("d"), 100);
    assert.ok(right.panFraction > 0 && right.zoomFactor === 1);
    assert.deepEqual(keyMotion(held("a", "d", "w", "s"), 16), { zoomFactor: 1, panFraction: 0 });
    // A long stall is capped, so the view does not jump.
    assert.deepEqual(keyMotion(held("w"), 5000), keyMotion(held("w"), 100));
    // Two half frames make one whole frame.
    const half = keyMotion(held("s"), 8).zoomFactor;
    assert.ok(Math.abs(half * half - keyMotion(held("s"), 16).zoomFactor) < 1e-12);
  });

  test("a few pixels of movement is still a click", () => {
    assert.equal(isDrag(1, 2), false);
    assert.equal(isDrag(3, 3), true);
  });
});
