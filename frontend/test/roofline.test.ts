import assert from "node:assert/strict";
import { test } from "node:test";
import type { OperatorsData } from "../src/api/operators";
import type { RooflineData, RooflinePoint } from "../src/api/roofline";
import { efficiencyColumns } from "../src/components/efficiency_columns";
import { formatByteRate, formatFigure, formatFlopRate } from "../src/lib/efficiency";
import { operatorColumns } from "../src/views/operator/columns";
import {
  MAX_RADIUS,
  MIN_RADIUS,
  chartPoints,
  decadeRange,
  pointAt,
  pointText,
  roofVertices,
  roofsToDraw,
} from "../src/views/roofline/model";

const H100_BF16 = 989.5e12;
const H100_BANDWIDTH = 3.35e12;

function answer(): RooflineData {
  const point = (name: string, category: string, unit: "matrix" | "vector", intensity: number | null, tflops: number | null, time: number): RooflinePoint => ({
    name, input_shape: "[[64,64],[64,64]]", input_type: "[bf16, bf16]", params: { M: 64, N: 64, K: 64 }, category, category_label: category.toUpperCase(),
    unit, precision: "bf16", device: 0, calls: 2, flops_per_call: 524288, bytes_per_call: 24576, time,
    first_start: 10, first_dur: 5, first_event_id: 7, gflops: 0.001, bytes: 49152, tflops_per_s: tflops, tb_per_s: 0.01,
    intensity, bound: "memory", roofline_share: 0.25, roofline_time: time / 4, roofline_reason: "",
  });
  return {
    time_basis: "device",
    devices: [{
      device: 0, name: "NVIDIA H100 SXM", reason: "", bandwidth: H100_BANDWIDTH, source: "datasheet", note: "",
      roofs: [
        { label: "BF16", precision: "bf16", unit: "matrix", peak: H100_BF16, ridge: H100_BF16 / H100_BANDWIDTH },
        { label: "FP8", precision: "fp8", unit: "matrix", peak: 2 * H100_BF16, ridge: (2 * H100_BF16) / H100_BANDWIDTH },
        { label: "FP32", precision: "fp32", unit: "matrix", peak: 67e12, ridge: 67e12 / H100_BANDWIDTH },
      ],
    }],
    points: [
      point("aten::mm", "gemm", "matrix", 21.3, 40, 100),
      point("aten::add", "elementwise", "vector", 0.17, 0.05, 25),
      point("aten::copy_", "elementwise", "vector", null, null, 5), // no intensity: not drawn
    ],
    gaps: [], uncounted: [{ reason: "no shapes were recorded", calls: 3, time: 1.5 }], total_time: 200, peaks_error: "",
    copies: { directions: [{ direction: "h2d", label: "Host to device", calls: 1, calls_with_bytes: 1, bytes: 1000, time: 1, bandwidth: 1e9,
                             bandwidth_median: 1e9, peak: 6.3e10, link: "PCIe 5.0 x16, one direction", peak_share: 0.0159 }],
              calls: { start: [], dur: [], bytes: [], direction: [] }, listed_calls: 0, total_calls: 1 },
  };
}

test("only points with an intensity and a rate are drawn", () => {
  const data = answer();
  assert.equal(data.points.length, 3);
  assert.equal(data.devices[0]?.roofs.length, 3);
  assert.equal(data.copies.directions[0]?.link, "PCIe 5.0 x16, one direction");
  const drawn = chartPoints(data.points);
  assert.deepEqual(drawn.map((p) => p.index), [0, 1]);
  assert.equal(drawn[0]?.y, 40e12);
  // Areas follow time: the longest group has the largest radius; a quarter of its time, half its extra radius.
  assert.equal(drawn[0]?.radius, MAX_RADIUS);
  assert.equal(drawn[1]?.radius, MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * Math.sqrt(25 / 100));
});

test("roofs bend at the ridge point; the axes span whole decades", () => {
  const data = answer();
  const bf16 = data.devices[0]!.roofs[0]!;
  const [x0, x1] = decadeRange([0.17, 21.3, bf16.ridge!], [0.1, 1000]);
  assert.deepEqual([x0, x1], [0.1, 1000]);
  const vertices = roofVertices(bf16, H100_BANDWIDTH, x0, x1);
  assert.equal(vertices.length, 3);
  assert.deepEqual(vertices[0], [0.1, H100_BANDWIDTH * 0.1]);
  assert.ok(Math.abs(vertices[1]![0] - 295.37) < 0.01 && vertices[1]![1] === H100_BF16);
  assert.deepEqual(vertices[2], [1000, H100_BF16]);
  // A ridge left of the axis: only the flat part; without a bandwidth: flat.
  assert.deepEqual(roofVertices(bf16, H100_BANDWIDTH, 1000, 10000), [[1000, H100_BF16], [10000, H100_BF16]]);
  assert.deepEqual(roofVertices(bf16, null, 1, 10), [[1, H100_BF16], [10, H100_BF16]]);
  // The roofs drawn: the matrix roof of the precision the points ran in, and the FP32 roof for vector work.
  assert.deepEqual(roofsToDraw(data.devices[0]!, data.points).map((roof) => roof.label), ["BF16", "FP32"]);
});

test("the point under the pointer is the nearest whose circle holds it", () => {
  const points = [
    { index: 0, x: 1, y: 1, radius: 10, color: "#000" },
    { index: 1, x: 2, y: 2, radius: 4, color: "#000" },
  ];
  const position = (p: { x: number; y: number }): [number, number] => [p.x * 100, p.y * 100];
  assert.equal(pointAt(points, 105, 100, position)?.index, 0);
  assert.equal(pointAt(points, 202, 200, position)?.index, 1);
  assert.equal(pointAt(points, 150, 150, position), null);
});

test("hover text: operator, shapes, parameters and figures", () => {
  const point = answer().points[0]!;
  const text = pointText(point, { time: (us) => `${us} µs`, rate: formatFlopRate, figure: formatFigure, percent: (f) => `${f * 100}%` });
  assert.equal(
    text,
    "aten::mm\nshapes [[64,64],[64,64]]\nM=64 N=64 K=64\nGEMM · BF16 matrix · 2 calls · 100 µs\n40 TFLOP/s · 21.3 FLOP/byte\n25% of the roofline (memory bound)",
  );
});

test("rates and figures are written as vendors write them", () => {
  assert.equal(formatFlopRate(989.5e12), "990 TFLOP/s");
  assert.equal(formatFlopRate(1.979e15), "1.98 PFLOP/s");
  assert.equal(formatFlopRate(8.5e8), "850 MFLOP/s");
  assert.equal(formatByteRate(3.35e12), "3.35 TB/s");
  assert.equal(formatByteRate(9e11), "900 GB/s");
  assert.equal(formatFigure(0.00123), "0.00123");
  assert.equal(formatFigure(12345), "12.3k");
  assert.equal(formatFigure(null), "—");
});

test("operator tables gain the efficiency columns when the answer has them, with the CSV's ids", () => {
  const shares = { tc_self_share: 0, tc_total_share: 0 };
  const data: OperatorsData = {
    group_by: "name", has_device: true, efficiency: true, totals: {},
    rows: [{ name: "aten::linear", calls: 3, host_self: 1, host_total: 2, device_self: 0, device_total: 5, tc_eligible: true, ...shares,
             gflops: null, perf_reason: "counted in the operator nested in it that does the work" },
           { name: "aten::mm", calls: 3, host_self: 1, host_total: 2, device_self: 5, device_total: 5, tc_eligible: true, ...shares,
             gflops: 1.5, bytes: 2048, tflops_per_s: 300, tb_per_s: 0.4, intensity: 732, bound: "compute",
             roofline_share: 0.3, roofline_time: 1.5, perf_reason: "" }],
  };
  assert.equal(data.efficiency, true);
  const columns = operatorColumns("name", true, data.efficiency ?? false);
  const ids = columns.map((column) => column.id);
  assert.deepEqual(ids.slice(-7), ["gflops", "bytes", "tflops_per_s", "tb_per_s", "intensity", "bound", "roofline_share"]);
  const byId = Object.fromEntries(columns.map((column) => [column.id, column]));
  const [linear, mm] = data.rows;
  assert.equal(byId["gflops"]!.text(linear!), "—");
  assert.equal(byId["gflops"]!.cellTip!(linear!), "counted in the operator nested in it that does the work");
  assert.equal(byId["roofline_share"]!.text(mm!), "30.0%");
  assert.equal(byId["bound"]!.text(mm!), "compute");
  assert.equal(efficiencyColumns((row: { e: never }) => row.e).every((column) => (column.tip ?? "").length > 30), true);
});

test("copy bandwidth over time: overlapping copies add up per direction, and fall back to exactly 0", async () => {
  const { copyBandwidthOverTime } = await import("../src/views/roofline/model");
  // Two host-to-device copies overlapping in 10..20 µs, one device-to-host copy, one without bytes, one of no time.
  const over = copyBandwidthOverTime({
    start: [0, 10, 5, 40, 50],
    dur: [20, 20, 10, 5, 0],
    bytes: [2_000_000, 1_000_000, 500_000, -1, 100],
    direction: ["h2d", "h2d", "d2h", "h2d", "h2d"],
  });
  assert.deepEqual(over.time, [0, 5, 10, 15, 20, 30]);
  const h2d = over.series.find((s) => s.direction === "h2d")!.values;
  const d2h = over.series.find((s) => s.direction === "d2h")!.values;
  // 2 MB over 20 µs = 1e11 B/s; 1 MB over 20 µs = 5e10 B/s; 0.5 MB over 10 µs = 5e10 B/s.
  assert.deepEqual(h2d, [1e11, 1e11, 1.5e11, 1.5e11, 5e10, 0]);
  assert.deepEqual(d2h, [0, 5e10, 5e10, 0, 0, 0]);
  assert.deepEqual(copyBandwidthOverTime({ start: [], dur: [], bytes: [], direction: [] }), { time: [], series: [] });
});
