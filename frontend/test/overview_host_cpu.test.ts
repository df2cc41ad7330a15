import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseHostCpu, parseOverview } from "../src/api/overview";
import { fewSamplesText } from "../src/lib/host_cpu";
import { readFixture } from "./fixtures";

// overview_host_cpu.json: the backend's answer for a writer span whose manifest holds the host CPU sampling.
describe("overview host CPU", () => {
  test("the writer's CPU sampling is read with its series", () => {
    const data = parseOverview(readFixture("overview_host_cpu.json"));
    const cpu = data.hostCpu;
    assert.ok(cpu !== null);
    assert.equal(cpu.cpuCount, 2);
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

  test("spans without sampling have none; a broken series leaves the figures", () => {
    assert.equal(parseOverview(readFixture("overview_cpu.json")).hostCpu, null);
    assert.equal(parseHostCpu(null), null);
    assert.equal(parseHostCpu({ duration: 10 }), null);
    assert.equal(parseHostCpu({ process: { mean: 0.5, max: 1 }, duration: "long" }), null);
    const cpu = parseHostCpu({
      cpu_count: null,
      interval: null,
      duration: 1000,
      process: { mean: 0.5, max: null },
      system: null,
      samples: { time: [0, 500], process: [0.2], system: null },
    });
    assert.deepEqual(cpu, {
      cpuCount: null,
      interval: null,
      duration: 1000,
      process: { mean: 0.5, max: null },
      system: null,
      samples: null,
    });
    const noSystem = parseHostCpu({
      duration: 1000,
      process: { mean: 0.5, max: 0.7 },
      system: null,
      samples: { time: [0, 500], process: [0.3, 0.7], system: null },
    });
    assert.deepEqual(noSystem?.samples, { time: [0, 500], process: [0.3, 0.7], system: null });
  });

  test("a span shorter than the sampling interval says so", () => {
    const short = parseHostCpu({ interval: 100_000, duration: 40_000, process: { mean: 0.9, max: 0.9 }, samples: { time: [0], process: [0.9] } });
    assert.ok(short !== null);
    assert.match(fewSamplesText(short) ?? "", /^One reading: the span \(40\.0 ms\) was shorter than the sampling interval \(100 ms\)/);
    const many = parseHostCpu({ interval: 100_000, duration: 300_000, process: { mean: 0.5, max: 0.9 }, samples: { time: [0, 100_000, 200_000], process: [0.1, 0.5, 0.9] } });
    assert.ok(many !== null);
    assert.equal(fewSamplesText(many), null);
  });
});
