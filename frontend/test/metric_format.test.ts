import assert from "node:assert/strict";
import { test } from "node:test";
import {
  evidenceLabel,
  formatAxisDuration,
  formatEvidenceValue,
  formatFixed,
  formatLegendMicros,
  formatMicros,
  formatMicrosNumber,
  formatQuantity,
  formatTime,
  orDash,
  shortKernelName,
} from "../src/lib/metric_format";
import { CATEGORY_INFO } from "../src/lib/metrics";
import { formatSignedMicrosUnit } from "../src/views/compare/model";
import { readAnswer } from "./fixtures";
import { BREAKDOWN_CATEGORIES } from "../src/api/overview";

test("microseconds: whole from 100 µs up, three significant digits below", () => {
  assert.equal(formatMicros(98588.66666666667), "98,589 µs");
  assert.equal(formatMicrosNumber(177592.1666), "177,592");
  assert.equal(formatMicrosNumber(89), "89.0");
  assert.equal(formatMicrosNumber(12.884789), "12.9");
  assert.equal(formatMicrosNumber(1), "1.00");
  assert.equal(formatMicrosNumber(0.4321), "0.432");
  assert.equal(formatMicrosNumber(0), "0");
  assert.equal(formatMicrosNumber(Number.NaN), "—");
});

test("a legend beside a µs table reads the table's figures: the Overview's ResNet-50 span", () => {
  // The averages table shows 98,589 µs of kernel time; its legend used to say 98.6 ms beside it.
  const overview = readAnswer("overview", "overview_gpu.json");
  const kernel = overview.breakdown["kernel"] ?? Number.NaN;
  assert.equal(formatLegendMicros(kernel, overview.mean_step_time), "98,589 µs (55.5%)");
  assert.ok(formatLegendMicros(kernel, overview.mean_step_time).startsWith(formatMicros(kernel)));
  assert.equal(formatLegendMicros(0, 0), "0 µs (—)");
  // Compare's Δ per step column: one unit down the column (it read "-182 µs", "+1.15 ms", "-23.8 ms").
  assert.deepEqual([-181.7, 1145.6, -23758.2, 0].map(formatSignedMicrosUnit), ["-182 µs", "+1,146 µs", "-23,758 µs", "0 µs"]);
  assert.equal(formatSignedMicrosUnit(Number.NaN), "—");
});

test("fixed decimals with separators, never '-0'", () => {
  assert.equal(formatFixed(1234.5678, 2), "1,234.57");
  assert.equal(formatFixed(-0.0001, 1), "0.0");
  assert.equal(formatFixed(42.24577, 2), "42.25");
});

test("quantities keep three significant digits", () => {
  assert.equal(formatQuantity(5.630878989595074), "5.63");
  assert.equal(formatQuantity(284.2124), "284");
  assert.equal(formatQuantity(12345.6), "12,346");
  assert.equal(formatQuantity(0), "0");
  assert.equal(formatQuantity(12), "12"); // a count, not "12.0"
  assert.equal(formatEvidenceValue("num_workers", 12), "12");
});

test("evidence values are formatted by what their key says", () => {
  assert.equal(formatEvidenceValue("dataloader_share", 0.33369621220155166), "33.4%");
  assert.equal(formatEvidenceValue("utilization", 0.5551408517455255), "55.5%");
  assert.equal(formatEvidenceValue("dataloader_us", 59261.833333333336), "59.3 ms");
  assert.equal(formatEvidenceValue("median_kernel_us", 4.5), "4.50 µs");
  assert.equal(formatEvidenceValue("peak_bytes", 3 * 1024 ** 3), "3.00 GiB");
  assert.equal(formatEvidenceValue("calls", 12345), "12,345");
  assert.equal(formatEvidenceValue("device", 0), "0");
  assert.equal(formatEvidenceValue("names", ["aten::slow_conv2d", "aten::nonzero"]), "aten::slow_conv2d, aten::nonzero");
  assert.equal(formatEvidenceValue("names", []), "none");
  assert.equal(formatEvidenceValue("cudnn", true), "yes");
  assert.equal(formatEvidenceValue("something", 0.123456), "0.123");
});

test("evidence keys read as words", () => {
  assert.equal(evidenceLabel("dataloader_us"), "DataLoader time");
  assert.equal(evidenceLabel("eligible_kernel_share"), "Eligible kernel share");
  assert.equal(evidenceLabel("tensor_core_share"), "Tensor Core share");
  assert.equal(evidenceLabel("sm_efficiency"), "SM efficiency");
});

test("durations read '0 µs' at exactly zero", () => {
  assert.equal(formatTime(0), "0 µs");
  assert.equal(formatTime(1093.2193), "1.09 ms");
  assert.equal(formatEvidenceValue("dataloader_us", 0), "0 µs");
});

test("axis ticks and unknown values", () => {
  assert.equal(formatAxisDuration(0), "0");
  assert.equal(formatAxisDuration(50000), "50.0 ms");
  assert.equal(orDash(null, String), "—");
  assert.equal(orDash(3, String), "3");
});

test("short kernel names drop 'void ' and the parameter list, nothing else", () => {
  assert.equal(
    shortKernelName("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)"),
    "at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >",
  );
  assert.equal(
    shortKernelName("void at::native::foo<at::native::bar(float)::{lambda(float)#1}>(int, float (*)(float))"),
    "at::native::foo<at::native::bar(float)::{lambda(float)#1}>",
  );
  assert.equal(shortKernelName("volta_sgemm_64x64_nt"), "volta_sgemm_64x64_nt");
  assert.equal(shortKernelName("(weird)"), "(weird)");
});

test("every breakdown category has a label, a distinct colour and a definition naming the priority", () => {
  const colors = new Set<string>();
  for (const category of BREAKDOWN_CATEGORIES) {
    const info = CATEGORY_INFO[category];
    assert.ok(info.label.length > 0);
    assert.match(info.color, /^#[0-9a-f]{6}$/);
    colors.add(info.color);
    assert.match(info.definition, /Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU Exec > Other/);
  }
  assert.equal(colors.size, BREAKDOWN_CATEGORIES.length);
});

test("byte axes tick at round binary values", async () => {
  const { byteTicks, formatAxisBytes } = await import("../src/lib/chart_ticks");
  // 97 MB peak: steps of 20 MiB, not 19.1 MB.
  const ticks = byteTicks(97e6);
  assert.deepEqual(ticks.map(formatAxisBytes), ["0", "20 MiB", "40 MiB", "60 MiB", "80 MiB", "100 MiB"]);
  assert.deepEqual(byteTicks(4e6).map(formatAxisBytes), ["0", "1 MiB", "2 MiB", "3 MiB", "4 MiB"]);
  assert.deepEqual(byteTicks(1500).map(formatAxisBytes), ["0", "1 KiB", "2 KiB"]);
  assert.deepEqual(byteTicks(1020 * 1024 * 1024).map(formatAxisBytes), ["0", "1 GiB"]);
  assert.deepEqual(byteTicks(700).map(formatAxisBytes), ["0", "200 B", "400 B", "600 B", "800 B"]);
  assert.deepEqual(byteTicks(0), [0, 1]);
  assert.equal(formatAxisBytes(1.5 * 1024 * 1024), "1.5 MiB");
});
