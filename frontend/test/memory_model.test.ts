import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApiClient, type FetchLike } from "../src/api/client";
import { allocationRows, fetchMemory, memoryData } from "../src/api/memory";
import {
  brushToRange,
  earliestTime,
  formatAddress,
  formatRangeParams,
  parseMinBytes,
  parseRangeParams,
  seriesMax,
  timeOrigin,
} from "../src/lib/memory_model";
import { readAnswer, readFixture } from "./fixtures";

describe("brush → time range", () => {
  const plot = { plotWidth: 500, min: 0, max: 10_000 };

  test("pixels map linearly onto the x scale, then the origin is added back", () => {
    assert.deepEqual(brushToRange({ ...plot, left: 100, width: 50 }, 1_000_000), { start: 1_002_000, end: 1_003_000 });
    assert.deepEqual(brushToRange({ plotWidth: 400, min: 500, max: 900, left: 0, width: 400 }), { start: 500, end: 900 });
  });

  test("a drag past the plot's edges is clamped to them", () => {
    assert.deepEqual(brushToRange({ ...plot, left: -40, width: 100 }), { start: 0, end: 1200 });
    assert.deepEqual(brushToRange({ ...plot, left: 450, width: 200 }), { start: 9000, end: 10_000 });
  });

  test("a click (under 3 px) or a degenerate plot selects nothing", () => {
    assert.equal(brushToRange({ ...plot, left: 100, width: 2 }), null);
    assert.equal(brushToRange({ ...plot, left: 100, width: Number.NaN }), null);
    assert.equal(brushToRange({ plotWidth: 0, min: 0, max: 1, left: 0, width: 10 }), null);
    assert.equal(brushToRange({ plotWidth: 100, min: 5, max: 5, left: 0, width: 10 }), null);
    assert.equal(brushToRange({ ...plot, left: 600, width: 50 }), null, "entirely right of the plot");
  });
});

describe("range parameters", () => {
  test("round trip through the URL, to the nanosecond", () => {
    const params = formatRangeParams({ start: 4446427449117.5431, end: 4446427456088.95 });
    assert.deepEqual(params, { start: "4446427449117.543", end: "4446427456088.95" });
    assert.deepEqual(parseRangeParams(params.start, params.end), { start: 4446427449117.543, end: 4446427456088.95 });
    assert.deepEqual(formatRangeParams(null), { start: null, end: null });
  });

  test("a missing, malformed or empty range is no range", () => {
    assert.equal(parseRangeParams(null, "5"), null);
    assert.equal(parseRangeParams("1", "x"), null);
    assert.equal(parseRangeParams("5", "5"), null);
    assert.equal(parseRangeParams("9", "5"), null);
    assert.equal(parseRangeParams("", "5"), null);
  });

  test("minimum sizes snap to the offered choices", () => {
    assert.equal(parseMinBytes("1048576"), 1048576);
    assert.equal(parseMinBytes("1000"), 0);
    assert.equal(parseMinBytes(null), 0);
  });
});

describe("memory answer", () => {
  test("the real conv_cpu_memory answer: one CPU device, its curve and peak, the allocations as rows", () => {
    const data = memoryData(readAnswer("memory", "memory_conv_cpu.json"));
    assert.equal(data.available, true);
    assert.deepEqual(data.devices.map((device) => [device.id, device.name, device.capacity, device.events]), [["cpu", "CPU", null, 325]]);
    const curve = data.curves.get("cpu")!;
    assert.equal(curve.time.length, 326);
    assert.equal(curve.allocated.length, 326);
    const peak = data.peaks.get("cpu")!;
    // The peak the route reports is the highest point of the allocated curve.
    assert.equal(peak.allocated, seriesMax(curve.allocated));
    assert.equal(peak.allocated, 5716904);
    assert.equal(curve.time[curve.allocated.indexOf(peak.allocated)], peak.time);
    assert.equal(earliestTime(data.curves.values()), curve.time[0]);
    // Times count from the span's start the answer states (as the CSV's do), not from the first memory event.
    assert.equal(data.spanStart, 4446427446759.586);
    assert.equal(timeOrigin(data), data.spanStart);
    assert.ok(curve.time[0]! > data.spanStart!);
    assert.equal(timeOrigin({ spanStart: null, curves: data.curves }), curve.time[0]);
    assert.equal(timeOrigin({ spanStart: null, curves: new Map() }), 0);
    assert.equal(data.allocations.length, 12, "asked with limit=12");
    const first = data.allocations[0]!;
    assert.equal(first.bytes, 1048576);
    assert.equal(first.operator, "aten::mkldnn_convolution");
    assert.ok(first.freeTime !== null && Math.abs(first.freeTime - first.allocTime - (first.lifetime ?? Number.NaN)) < 1e-2, "µs at 4e12: about 1 ns of rounding");
    assert.equal(data.byOperator.length, 10, "cut to 10 rows by the fixture script");
    const names = new Set(data.byOperator.map((row) => row.name));
    assert.ok(names.has("aten::empty"));
  });

  test("never-freed allocations keep null free time and lifetime", () => {
    const rows = allocationRows({
      total: 2,
      columns: ["addr", "bytes", "operator", "device", "alloc_time", "free_time", "lifetime", "never_freed"],
      addr: [4096, 8192],
      bytes: [512, 1024],
      operator: ["aten::empty", ""],
      device: ["GPU 0", "GPU 0"],
      alloc_time: [10, 20],
      free_time: [15, null],
      lifetime: [5, null],
      never_freed: [false, true],
    });
    assert.deepEqual(
      rows.map((row) => [row.addr, row.bytes, row.operator, row.freeTime, row.lifetime, row.neverFreed]),
      [
        [4096, 512, "aten::empty", 15, 5, false],
        [8192, 1024, "", null, null, true],
      ],
    );
  });

  test("a span without memory events: not available, with the hint", () => {
    const data = memoryData({ available: false, hint: "Record with profile_memory=True", devices: [], curves: {}, peak: {}, events: [], by_operator: [] });
    assert.equal(data.available, false);
    assert.equal(data.hint, "Record with profile_memory=True");
    assert.equal(data.allocations.length, 0);
  });

  test("the query becomes route parameters; empty filters are left out", async () => {
    const seen: string[] = [];
    const fetchImpl: FetchLike = async (url) => {
      seen.push(url);
      return new Response(JSON.stringify(readFixture("memory_conv_cpu.json")), { status: 200 });
    };
    const api = new ApiClient("http://h/data/plugin/profscope/", fetchImpl);
    const ref = { run: "conv", worker: "worker0", span: "1" };
    await fetchMemory(api, ref, { device: "cpu", start: 10.5, end: 20, minBytes: 1024, name: "conv", limit: 50 });
    await fetchMemory(api, ref, { device: "", name: "", minBytes: 0 });
    const first = new URL(seen[0]!);
    assert.equal(first.pathname, "/data/plugin/profscope/memory");
    assert.deepEqual(Object.fromEntries(first.searchParams), {
      device: "cpu",
      start: "10.5",
      end: "20",
      min_bytes: "1024",
      name: "conv",
      limit: "50",
      run: "conv",
      worker: "worker0",
      span: "1",
    });
    assert.deepEqual([...new URL(seen[1]!).searchParams.keys()].sort(), ["run", "span", "worker"]);
  });

  test("addresses read as hex", () => {
    assert.equal(formatAddress(94079341279296), "0x55908db7b840");
    assert.equal(formatAddress(-1), "—");
  });
});
