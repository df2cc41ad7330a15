import assert from "node:assert/strict";
import { test } from "node:test";
import { formatBytes, formatCount, formatDuration, formatPercent, spanTimestampMs } from "../src/lib/format";

test("durations in microseconds pick a readable unit", () => {
  assert.equal(formatDuration(0), "0.00 µs");
  assert.equal(formatDuration(850), "850 µs");
  assert.equal(formatDuration(1250), "1.25 ms");
  assert.equal(formatDuration(45_600), "45.6 ms");
  assert.equal(formatDuration(3_200_000), "3.20 s");
  assert.equal(formatDuration(125_000_000), "2 min 5 s");
  assert.equal(formatDuration(-1500), "-1.50 ms");
  assert.equal(formatDuration(Number.NaN), "—");
});

test("bytes use binary units; frees are negative", () => {
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1536), "1.50 KiB");
  assert.equal(formatBytes(-3 * 1024 * 1024), "-3.00 MiB");
  assert.equal(formatBytes(16 * 1024 ** 3), "16.0 GiB");
  assert.equal(formatBytes(Number.POSITIVE_INFINITY), "—");
});

test("ratios become percentages, counts get separators", () => {
  assert.equal(formatPercent(0.4213), "42.1%");
  assert.equal(formatPercent(1, 0), "100%");
  assert.equal(formatCount(1234567), "1,234,567");
});

test("numeric span names read as timestamps in ms or ns; others do not", () => {
  assert.equal(spanTimestampMs("1623143089861"), 1623143089861); // torch 1.9 handler: ms
  assert.equal(spanTimestampMs("1795303442092317655"), 1795303442092); // torch 2.x handler: ns
  assert.equal(spanTimestampMs("1623143089"), 1623143089000); // seconds
  assert.equal(spanTimestampMs("step_10"), null);
  assert.equal(spanTimestampMs("123456789"), null); // 1973 in s: not a plausible trace time
});
