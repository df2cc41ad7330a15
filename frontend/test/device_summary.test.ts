import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseOverview, type DeviceSummary } from "../src/api/overview";
import { summaryTitle } from "../src/lib/devices";
import { readFixture } from "./fixtures";

function device(id: number, label: string): DeviceSummary {
  return {
    id, label, name: label, memory: null, computeCapability: null, numSms: null, utilization: 0.5,
    smEfficiency: null, achievedOccupancy: null, tensorCoreShare: 0, kernelTime: 1,
  };
}

describe("device summary", () => {
  test("an answer without labels (older backends) calls its devices GPUs", () => {
    const data = parseOverview(readFixture("overview_gpu.json"));
    assert.ok(data.devices.length > 0);
    for (const d of data.devices) assert.equal(d.label, `GPU ${d.id}`);
  });

  test("the section is named after what the devices are", () => {
    assert.equal(summaryTitle([device(0, "GPU 0")]), "GPU summary");
    assert.equal(summaryTitle([device(0, "GPU 0"), device(1, "GPU 1")]), "GPU summary (2 GPUs)");
    assert.equal(summaryTitle([device(1, "Ascend 1")]), "Device summary");
    assert.equal(summaryTitle([device(0, "GPU 0"), device(1, "Ascend 1")]), "Device summary (2 devices)");
  });
});
