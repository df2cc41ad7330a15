// The trace viewer's daily-use pieces: pinned tracks, the area selection's tracks, the label
// column's width, and the trace/range answer.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { rangeParams } from "../src/api/trace_range";
import { counterTracksBetween, DEFAULT_METRICS, formatPinned, layoutTracks, parsePinned, PINNED_GROUP, sliceTracksBetween, togglePinned } from "../src/trace/layout";
import { counterFormat } from "../src/trace/panel/range";
import { clampHeaderWidth, HEADER_WIDTH, MIN_HEADER_WIDTH } from "../src/trace/header_width";
import { TRACE_TRACKS } from "./fixtures";

const TRACKS = TRACE_TRACKS;

describe("pinned tracks", () => {
  test("pinned tracks come first, in pin order, and leave their groups", () => {
    const layout = layoutTracks(TRACKS, new Set(), DEFAULT_METRICS, ["s3", "s2"]);
    const order = layout.rows.map((row) => (row.kind === "group" ? `[${row.label}]` : row.track.id));
    assert.deepEqual(order, ["[Pinned]", "s3", "s2", "[process Traces]", "s4", "[python]", "s1", "[GPU 0]", "c:gpu_util:0"]);
    const first = layout.rows[0];
    assert.equal(first?.kind === "group" ? first.group : null, PINNED_GROUP);
    assert.equal(layout.tracks.get("s3")?.pinned, true);
    assert.equal(layout.tracks.get("s1")?.pinned, false);
    // Collapsing the pinned group hides them; the rest stays.
    assert.equal(layoutTracks(TRACKS, new Set([PINNED_GROUP]), DEFAULT_METRICS, ["s3"]).tracks.has("s3"), false);
  });

  test("toggle, and the URL form keeps only known ids", () => {
    assert.deepEqual(togglePinned(["s1"], "s3"), ["s1", "s3"]);
    assert.deepEqual(togglePinned(["s1", "s3"], "s1"), ["s3"]);
    const text = formatPinned(["s3", "c:counter:a,b:x"]);
    assert.equal(formatPinned([]), null);
    assert.deepEqual(parsePinned(text, new Set(["s3", "c:counter:a,b:x"])), ["s3", "c:counter:a,b:x"]);
    assert.deepEqual(parsePinned('["s3","nope","s3"]', new Set(["s3"])), ["s3"]);
    assert.deepEqual(parsePinned("not json", new Set(["s3"])), []);
  });
});

describe("area selection", () => {
  test("the tracks a drag covers: slice tracks, and apart the counters", () => {
    const layout = layoutTracks(TRACKS, new Set());
    const python = layout.tracks.get("s1")!;
    const gpuUtil = layout.tracks.get("c:gpu_util:0")!;
    assert.deepEqual(sliceTracksBetween(layout, python.y + 5, python.y + 6), ["s1"]);
    assert.deepEqual(sliceTracksBetween(layout, gpuUtil.y + gpuUtil.height - 1, python.y + 1), ["s1", "s2", "s3"]);
    assert.deepEqual(sliceTracksBetween(layout, gpuUtil.y + 1, gpuUtil.y + 2), []);
    // The counters a drag covers are asked about too (their values in the range).
    assert.deepEqual(counterTracksBetween(layout, gpuUtil.y + 1, gpuUtil.y + 2), ["c:gpu_util:0"]);
    assert.deepEqual(counterTracksBetween(layout, python.y + 5, python.y + 6), []);
  });

  test("a counter's values in the range read in its track's unit", () => {
    assert.equal(counterFormat("bytes")(1536), "1.50 KiB");
    assert.equal(counterFormat("fraction")(0.25), "25.0%");
    assert.equal(counterFormat("launches")(12), "12");
    assert.equal(counterFormat("")(0.125), "0.13");
  });

  test("label column: never narrower than the minimum nor wider than 60% of the canvas", () => {
    assert.equal(clampHeaderWidth(50, 1000), MIN_HEADER_WIDTH);
    assert.equal(clampHeaderWidth(900, 1000), 600);
    assert.equal(clampHeaderWidth(333.4, 1000), 333);
    assert.equal(clampHeaderWidth(Number.NaN, 1000), HEADER_WIDTH);
  });

  test("trace/range request", () => {
    const params = rangeParams({ run: "r", worker: "w", span: "1" }, 1623142623460016.25, 1623142623460116, ["s1", "s3"]);
    assert.deepEqual(params, { run: "r", worker: "w", span: "1", start: "1623142623460016.2", end: "1623142623460116", tracks: "s1,s3" });
    assert.equal(rangeParams({ run: "r", worker: "w", span: "1" }, 1, 2, null)["tracks"], undefined);
  });
});
