import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  clampView,
  decimalsFor,
  focusWindow,
  formatTick,
  MIN_VIEW_US,
  niceStep,
  panBy,
  TimeScale,
  timeTicks,
  toOffset,
  toTraceTime,
  unitForTicks,
  zoomAround,
} from "../src/trace/time_scale";

describe("time scale", () => {
  test("maps offsets to pixels and back", () => {
    const scale = new TimeScale({ start: 1000, end: 3000 }, 1000);
    assert.equal(scale.pxPerUs, 0.5);
    assert.equal(scale.timeToPx(1000), 0);
    assert.equal(scale.timeToPx(2000), 500);
    assert.equal(scale.pxToTime(250), 1500);
    assert.equal(scale.durationToPx(100), 50);
    assert.equal(scale.pxToDuration(50), 100);
  });

  test("an empty view or width does not divide by zero", () => {
    const scale = new TimeScale({ start: 5, end: 5 }, 800);
    assert.equal(scale.pxPerUs, 0);
    assert.equal(scale.pxToTime(100), 5);
    assert.equal(new TimeScale({ start: 0, end: 10 }, 0).pxToDuration(3), 0);
  });

  test("offsets keep epoch-scale trace times exact enough to draw", () => {
    const spanStart = 1623142623460016.2; // a real Kineto span start, µs since the epoch
    const kernel = 1623142623541433.0;
    const offset = toOffset(spanStart, kernel);
    assert.ok(Math.abs(offset - 81416.8) < 0.25, String(offset));
    assert.ok(Math.abs(toTraceTime(spanStart, offset) - kernel) <= 0.25);
  });
});

describe("moving the view", () => {
  const span = 10_000;

  test("zoom keeps the anchor under the cursor", () => {
    const view = { start: 1000, end: 3000 };
    const zoomed = zoomAround(view, 1500, 0.5, span);
    assert.deepEqual(zoomed, { start: 1250, end: 2250 });
    const before = new TimeScale(view, 800).timeToPx(1500);
    const after = new TimeScale(zoomed, 800).timeToPx(1500);
    assert.ok(Math.abs(before - after) < 1e-9);
  });

  test("zoom stops at the span and at the narrowest window", () => {
    assert.deepEqual(zoomAround({ start: 1000, end: 3000 }, 2000, 100, span), { start: 0, end: span });
    const tiny = zoomAround({ start: 1000, end: 1000.02 }, 1000.01, 0.001, span);
    assert.ok(Math.abs(tiny.end - tiny.start - MIN_VIEW_US) < 1e-9);
  });

  test("pan moves the window without shrinking it at the edges", () => {
    assert.deepEqual(panBy({ start: 1000, end: 3000 }, 500, span), { start: 1500, end: 3500 });
    assert.deepEqual(panBy({ start: 1000, end: 3000 }, -5000, span), { start: 0, end: 2000 });
    assert.deepEqual(panBy({ start: 1000, end: 3000 }, 50_000, span), { start: 8000, end: 10_000 });
  });

  test("clamp repairs impossible windows", () => {
    assert.deepEqual(clampView({ start: Number.NaN, end: 5 }, span), { start: 0, end: span });
    assert.deepEqual(clampView({ start: 20, end: 10 }, span), { start: 0, end: span });
    assert.deepEqual(clampView({ start: -50, end: 50 }, span), { start: 0, end: 100 });
  });

  test("focus puts an event in the middle third", () => {
    assert.deepEqual(focusWindow(3000, 100, span), { start: 2900, end: 3200 });
    // An instant still gets a visible window.
    const instant = focusWindow(3000, 0, span);
    assert.ok(instant.end - instant.start >= 2 && instant.start < 3000 && instant.end > 3000);
  });
});

describe("ticks", () => {
  test("steps are 1, 2 or 5 times a power of ten", () => {
    assert.equal(niceStep(0.7), 1);
    assert.equal(niceStep(1.2), 2);
    assert.equal(niceStep(3), 5);
    assert.equal(niceStep(7), 10);
    assert.equal(niceStep(0.003), 0.005);
    assert.equal(niceStep(0.001), 0.001);
    assert.equal(niceStep(120_000), 200_000);
  });

  test("labels use the unit of the offsets shown, with the decimals the step needs", () => {
    assert.equal(unitForTicks(82_500, 500).suffix, "ms");
    assert.equal(decimalsFor(500, unitForTicks(82_500, 500)), 1);
    assert.equal(unitForTicks(1_200_000, 200_000).suffix, "s");
    assert.equal(unitForTicks(800, 100).suffix, "µs");
    assert.equal(unitForTicks(0.5, 0.1).suffix, "ns");
    // Too many decimals in ms: fall back to µs.
    assert.equal(unitForTicks(81_000, 0.01).suffix, "µs");
    assert.equal(formatTick(81_500, unitForTicks(82_500, 500), 1), "81.5 ms");
    assert.equal(formatTick(-0.0001, { suffix: "ms", us: 1000 }, 1), "0.0 ms");
  });

  test("ticks fall on round offsets, at least the minimum spacing apart", () => {
    const view = { start: 80_770, end: 82_720 };
    const ticks = timeTicks(view, 1000, 80);
    assert.equal(ticks.step, 200);
    assert.ok(ticks.ticks.length >= 9 && ticks.ticks.length <= 10);
    for (const tick of ticks.ticks) {
      assert.ok(tick.time >= view.start && tick.time <= view.end);
      assert.ok(Math.abs(tick.time / 200 - Math.round(tick.time / 200)) < 1e-9);
    }
    assert.equal(ticks.ticks[0]?.label, "80.8 ms");
    assert.equal(ticks.ticks[1]?.label, "81.0 ms");
  });

  test("the whole span starts at 0 and reads in seconds when it is long", () => {
    const ticks = timeTicks({ start: 0, end: 1_173_467 }, 1030, 80);
    assert.equal(ticks.step, 100_000);
    assert.equal(ticks.ticks[0]?.label, "0.0 s");
    assert.equal(ticks.ticks[11]?.label, "1.1 s");
  });

  test("a nanosecond window still has distinct labels", () => {
    const ticks = timeTicks({ start: 1000, end: 1000.05 }, 500, 80);
    const labels = ticks.ticks.map((tick) => tick.label);
    assert.equal(new Set(labels).size, labels.length);
    assert.ok(labels.length >= 3);
  });
});
