import assert from "node:assert/strict";
import { describe, test } from "node:test";

import type { DeviceSummary } from "../src/api/overview";
import { deviceCardFields, kernelsTitle, summaryTitle } from "../src/lib/devices";
import { kernelColumns } from "../src/views/kernel/columns";
import { filteredKernelTotals, inStepsNote } from "../src/views/kernel/model";
import type { KernelsData } from "../src/api/kernels";
import { readAnswer } from "./fixtures";

function device(id: number, label: string, kind: string): DeviceSummary {
  return {
    id, label, kind, name: label, memory: null, compute_capability: null, num_sms: null, utilization: 0.5,
    sm_efficiency: null, achieved_occupancy: null, tensor_core_share: 0, kernel_time: 1, unavailable: {},
  };
}

describe("device summary", () => {
  test("a GPU's label and kind come with the answer", () => {
    const data = readAnswer("overview", "overview_gpu.json");
    assert.ok(data.devices.length > 0);
    for (const d of data.devices) {
      assert.equal(d.label, `GPU ${d.id}`);
      assert.equal(d.kind, "GPU");
      assert.deepEqual(d.unavailable, {});
    }
  });

  test("the section is named after what the devices are", () => {
    assert.equal(summaryTitle([device(0, "GPU 0", "GPU")]), "GPU summary");
    assert.equal(summaryTitle([device(0, "GPU 0", "GPU"), device(1, "GPU 1", "GPU")]), "GPU summary (2 GPUs)");
    assert.equal(summaryTitle([device(1, "Ascend 1", "Ascend")]), "Device summary");
    assert.equal(summaryTitle([device(0, "GPU 0", "GPU"), device(1, "Ascend 1", "Ascend")]), "Device summary (2 devices)");
  });

  test("the kernel view is named after the device, and shows Tensor Cores only where they can be told", () => {
    assert.equal(kernelsTitle("GPU"), "GPU kernels");
    assert.equal(kernelsTitle("Ascend"), "Ascend kernels");
    assert.equal(kernelsTitle("device"), "Device kernels");
    const gpu = readAnswer("kernels", "kernels_gpu.json");
    assert.equal(gpu.device_kind, "GPU");
    assert.equal(gpu.tensor_cores_known, true);
    const ascend: KernelsData = {
      group_by: "name", rows: [], total: 0, device_kind: "Ascend", tensor_cores_known: false, tensor_core_share: null, in_steps: null,
    };
    assert.equal(ascend.tensor_cores_known, false);
    assert.equal(ascend.tensor_core_share, null);
    const ids = (known: boolean) => kernelColumns("name", known).map((column) => column.id);
    assert.ok(ids(true).includes("tensor_cores"));
    assert.ok(!ids(false).includes("tensor_cores"));
  });

  test("the kernel view says what of its kernel time lies within the Overview's steps, only when it differs", () => {
    const base = { group_by: "name", rows: [], total: 1000, device_kind: "GPU", tensor_cores_known: true, tensor_core_share: 0.5 } as const;
    const outside: KernelsData = { ...base, in_steps: { total: 600, tensor_core_share: 0.25 } };
    assert.match(inStepsNote(outside) ?? "", /within the steps/);
    assert.equal(inStepsNote({ ...base, in_steps: { total: 999, tensor_core_share: 0.5 } }), null);
    assert.equal(inStepsNote({ ...base, in_steps: null }), null);
  });

  test("filtered totals keep an unknown Tensor Core share unknown", () => {
    const ascend: KernelsData = {
      group_by: "name", total: 10, device_kind: "Ascend", tensor_cores_known: false, tensor_core_share: null, in_steps: null,
      rows: [{ name: "Conv2D", calls: 1, total: 10, mean: 10, min: 10, max: 10, blocks_per_sm: null,
               achieved_occupancy: null, tensor_cores: false }],
    };
    assert.deepEqual(filteredKernelTotals(ascend, ascend.rows, true), { total: 10, tensorCoreShare: null });
    assert.deepEqual(filteredKernelTotals(ascend, ascend.rows, false), { total: 10, tensorCoreShare: null });
  });
});

describe("device cards", () => {
  test("a device that is not a GPU has no CUDA rows; collectives are communication time", () => {
    const gpu: DeviceSummary = { ...device(0, "GPU 0", "GPU"), communication_time: 0 };
    const ascend: DeviceSummary = { ...device(1, "Ascend 1", "Ascend"), kernel_time: 5.9, communication_time: 41.5 };
    assert.deepEqual(deviceCardFields(gpu), [
      "name", "memory", "computeCapability", "numSms", "utilization", "smEfficiency", "achievedOccupancy", "tensorCoreShare",
      "kernelTime",
    ]);
    assert.deepEqual(deviceCardFields(ascend), ["name", "memory", "utilization", "kernelTime", "communicationTime"]);
  });
});
