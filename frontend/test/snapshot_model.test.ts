import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { snapshotFlame, type SnapshotAt } from "../src/api/snapshot";
import { formatBytes } from "../src/lib/format";
import {
  axisText,
  bandAt,
  chooseDevice,
  clampWindow,
  deviceSpan,
  frameText,
  largestHeading,
  maxInRange,
  momentHeading,
  panWindow,
  siteColor,
  startWindow,
  stepValuesAt,
  windowParams,
  zoomWindow,
} from "../src/lib/snapshot_model";

const span = { start: 1000, end: 2000 };

describe("the timeline's window", () => {
  test("zooming keeps the point under the pointer in place", () => {
    const zoomed = zoomWindow(span, span, 0.25, 0.5);
    assert.deepEqual(zoomed, { start: 1125, end: 1625 });
    assert.equal(zoomed.start + (zoomed.end - zoomed.start) * 0.25, 1250);
  });

  test("zooming out and panning stay inside the snapshot", () => {
    assert.deepEqual(zoomWindow({ start: 1800, end: 1900 }, span, 1, 100), span);
    assert.deepEqual(panWindow({ start: 1800, end: 1900 }, span, 5), { start: 1900, end: 2000 });
    assert.deepEqual(panWindow({ start: 1100, end: 1200 }, span, -5), { start: 1000, end: 1100 });
  });

  test("a window never gets narrower than one unit, nor invalid", () => {
    assert.deepEqual(clampWindow({ start: 1500, end: 1500 }, span), { start: 1500, end: 1501 });
    assert.deepEqual(clampWindow({ start: Number.NaN, end: 5 }, span), span); // an invalid window is the whole snapshot
    assert.deepEqual(clampWindow({ start: 0, end: 10 }, { start: 5, end: 5 }), { start: 5, end: 5 });
  });
});

describe("what lies under the pointer", () => {
  const bands = [Float64Array.from([100, 0]), Float64Array.from([50, 30])];
  const other = Float64Array.from([10, 5]);
  test("the bands are stacked in order, the other sites on top", () => {
    assert.deepEqual(bandAt(bands, other, 0, 0), { kind: "band", index: 0 });
    assert.deepEqual(bandAt(bands, other, 0, 120), { kind: "band", index: 1 });
    assert.deepEqual(bandAt(bands, other, 0, 155), { kind: "other" });
    assert.equal(bandAt(bands, other, 0, 160), null);
    assert.deepEqual(bandAt(bands, other, 1, 10), { kind: "band", index: 1 }); // an empty band takes no height
    assert.equal(bandAt(bands, other, 0, -1), null);
  });
});

describe("texts and colours", () => {
  test("times from the snapshot's start, or entry numbers", () => {
    assert.equal(axisText(1_500_000, "time_us", 1_000_000), "+500 ms");
    assert.equal(axisText(41.6, "entry", 0), "entry 42");
    assert.equal(axisText(Number.NaN, "entry", 0), "—");
  });

  test("frames: Python with file and line, C++ by name", () => {
    assert.equal(frameText({ file: "/home/u/model.py", line: 12, name: "forward", kind: "user" }), "forward (model.py:12)");
    assert.equal(frameText({ file: "/x/Blas.cpp", line: 3, name: "at::native::mm", kind: "cpp" }), "at::native::mm");
    assert.equal(frameText({ file: null, line: null, name: null, kind: "python" }), "? (?)");
  });

  test("a site keeps its colour", () => {
    assert.equal(siteColor("model.py:12 forward"), siteColor("model.py:12 forward"));
    assert.notEqual(siteColor("a"), siteColor("b"));
  });
});

describe("the trace's memory counter on the snapshot's pixels", () => {
  test("a step curve is read at each pixel, NaN before its first point", () => {
    assert.deepEqual(Array.from(stepValuesAt([10, 20, 30], [1, 2, 3], [5, 10, 25, 40])), [Number.NaN, 1, 2, 3]);
  });
  test("the highest value inside a selected range", () => {
    assert.equal(maxInRange([1, 2, 3, 4], [5, 9, 7, Number.NaN], 2, 4), 9);
    assert.ok(Number.isNaN(maxInRange([1, 2], [5, 9], 3, 4)));
  });
});

describe("answers", () => {
  test("a moment's flame graph is read as the flame layout's columns; a moment without one has none", () => {
    const at: SnapshotAt = {
      device: 0, axis: "entry", row: 1, time: 1, is_peak: true, totals: { active: 5, allocated: 5, reserved: 8 }, live_bytes: 5, count: 1,
      group_by: "site", groups: [], groups_total: 0, largest: [],
      flamegraph: { unit: "bytes", total: 5, names: ["all", "<b>f</b>"], nodes: { parent: [-1, 0], name: [0, 1], self: [0, 5], total: [5, 5], calls: [1, 1] } },
    };
    const flame = snapshotFlame(at);
    assert.equal(flame?.total, 5);
    assert.deepEqual(flame?.names, ["all", "<b>f</b>"]);
    assert.deepEqual(Array.from(flame?.totalTime ?? []), [5, 5]);
    assert.ok(flame?.parent instanceof Int32Array);
    const { flamegraph: _, ...without } = at;
    assert.equal(snapshotFlame(without), null);
  });
});

describe("the device and window the page opens at", () => {
  const devices = [{ device: 0, start: 0, end: 10 }, { device: 3, start: 5, end: 5 }];

  test("the URL's device, else the snapshot's default, else its first", () => {
    assert.equal(chooseDevice({ devices, default_device: 0 }, 3)?.device, 3);
    assert.equal(chooseDevice({ devices, default_device: 3 }, Number.NaN)?.device, 3);
    assert.equal(chooseDevice({ devices, default_device: null }, 7)?.device, 0);
    assert.equal(chooseDevice({ devices: [], default_device: null }, 0), undefined);
  });

  test("a device's span is at least one unit; the URL's window only when it is one", () => {
    assert.deepEqual(deviceSpan(devices[1]!), { start: 5, end: 6 });
    assert.deepEqual(startWindow(span, 1200, 1300), { start: 1200, end: 1300 });
    assert.equal(startWindow(span, 1300, 1200), span);
    assert.equal(startWindow(span, Number.NaN, 1300), span); // a parameter that is no number
  });

  test("the whole span leaves the URL's window out", () => {
    assert.deepEqual(windowParams(span, span), { start: null, end: null });
    assert.deepEqual(windowParams({ start: 1200, end: 1300.5 }, span), { start: "1200", end: "1300.5" });
  });
});

describe("what is alive at a moment, its headings", () => {
  const axisOf = (value: number): string => `t${value}`;
  const at = { is_peak: false, row: 12, time: 340, live_bytes: 3 * 1024 ** 3, count: 1204 };

  test("the peak, the start, or the picked moment, with what is alive then", () => {
    assert.equal(momentHeading({ ...at, is_peak: true }, axisOf), `Alive at the peak (t340): ${formatBytes(3 * 1024 ** 3)} in 1,204 allocations`);
    assert.match(momentHeading({ ...at, row: -1 }, axisOf), /^Alive at the start: /);
    assert.match(momentHeading(at, axisOf), /^Alive at t340: /);
  });

  test("the largest allocations are of the site asked for, when one was", () => {
    const largest = [{ label: "model.py:12 forward" }] as unknown as Parameters<typeof largestHeading>[0]["largest"];
    assert.equal(largestHeading({ site: 7, largest }), "Largest live allocations of model.py:12 forward");
    assert.equal(largestHeading({ site: null, largest }), "Largest live allocations");
    assert.equal(largestHeading({ site: 7, largest: [] }), "Largest live allocations");
  });
});
