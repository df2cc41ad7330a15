import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { HostCpu } from "../src/api/overview";
import { fewSamplesText } from "../src/lib/host_cpu";
import { readAnswer } from "./fixtures";

// overview_host_cpu.json: the backend's answer for a writer span whose manifest holds the host CPU sampling.
describe("overview host CPU", () => {
  test("the writer's CPU sampling is read with its series", () => {
    const data = readAnswer("overview", "overview_host_cpu.json");
    const cpu = data.host_cpu;
    assert.ok(cpu !== null);
    assert.equal(cpu.cpu_count, 2);
    assert.equal(cpu.interval, 50000);
    assert.ok(cpu.duration > 0);
    assert.ok(cpu.process.mean > 0 && cpu.process.max !== null && cpu.process.max >= cpu.process.mean);
    assert.ok(cpu.system !== null && cpu.system.mean >= 0 && cpu.system.mean <= 1);
    const samples = cpu.samples;
    assert.ok(samples !== null && samples.system !== null);
    assert.equal(samples.process.length, samples.time.length);
    assert.equal(samples.system.length, samples.time.length);
    assert.equal(samples.time[0], 0);
    // Interval starts are in order and inside the span.
    for (let i = 1; i < samples.time.length; i += 1) assert.ok((samples.time[i] ?? 0) >= (samples.time[i - 1] ?? 0));
    assert.ok((samples.time[samples.time.length - 1] ?? Infinity) < cpu.duration);
    // The span's mean is the time-weighted mean of its intervals (up to the 3-decimal rounding).
    const edges = [...samples.time, cpu.duration];
    const weighted = samples.process.reduce((sum, value, i) => sum + value * ((edges[i + 1] ?? 0) - (edges[i] ?? 0)), 0);
    assert.ok(Math.abs(weighted / cpu.duration - cpu.process.mean) < 0.01);
  });

  test("spans without sampling have none", () => {
    assert.equal(readAnswer("overview", "overview_cpu.json").host_cpu, null);
  });

  test("a span shorter than the sampling interval says so", () => {
    const cpu = (interval: number, duration: number, time: number[], process: number[]): HostCpu => ({
      cpu_count: 2, interval, duration, process: { mean: 0.5, max: 0.9 }, system: null, samples: { time, process, system: null },
    });
    const short = cpu(100_000, 40_000, [0], [0.9]);
    assert.match(fewSamplesText(short) ?? "", /^One reading: the span \(40\.0 ms\) was shorter than the sampling interval \(100 ms\)/);
    const many = cpu(100_000, 300_000, [0, 100_000, 200_000], [0.1, 0.5, 0.9]);
    assert.equal(fewSamplesText(many), null);
  });
});
