import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApiClient, type FetchLike } from "../src/api/client";
import { fetchKernels } from "../src/api/kernels";
import { fetchOperatorDetail, fetchOperators } from "../src/api/operators";
import { fetchOverview } from "../src/api/overview";
import { readFixture, readAnswer } from "./fixtures";

const ref = { run: "exp/a", worker: "worker0", span: "1623143089861" };

function client(status: number, body: unknown, seen: string[] = []): ApiClient {
  const fetchImpl: FetchLike = async (url) => {
    seen.push(url);
    return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
  };
  return new ApiClient("http://h/data/plugin/profscope/", fetchImpl);
}

describe("overview", () => {
  test("a GPU span: steps, mean breakdown, devices and recommendations", () => {
    const data = readAnswer("overview", "overview_gpu.json");
    assert.equal(data.step_source, "ProfilerStep");
    assert.equal(data.has_device, true);
    assert.deepEqual(data.categories, ["kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other"]);
    assert.equal(data.steps.length, 6);
    assert.equal(data.steps[0]?.name, "ProfilerStep#5");
    assert.equal(data.steps[0]?.breakdown["kernel"], 98598);
    // The categories of a step sum to its duration.
    for (const step of data.steps) {
      const sum = data.categories.reduce((total, category) => total + (step.breakdown[category] ?? 0), 0);
      assert.ok(Math.abs(sum - step.dur) < 1e-6, step.name);
    }
    const kernelShare = (data.breakdown["kernel"] ?? 0) / data.mean_step_time;
    assert.equal(kernelShare.toFixed(4), "0.5551");
    assert.equal(data.devices.length, 1);
    assert.equal(data.devices[0]?.compute_capability, "7.0");
    assert.equal(data.devices[0]?.sm_efficiency?.toFixed(4), "0.5468");
    assert.equal(data.benchmark?.steps, 6);
    assert.equal(data.benchmark?.batch_size, null);
    assert.deepEqual(data.recommendations.map((r) => r.id), ["dataloader_bound", "tensor_cores_unused"]);
    assert.equal(typeof data.recommendations[0]?.evidence["dataloader_share"], "number");
  });

  test("a CPU-only span has no device categories and no devices", () => {
    const data = readAnswer("overview", "overview_cpu.json");
    assert.equal(data.has_device, false);
    assert.deepEqual(data.categories, ["communication", "runtime", "dataloader", "cpu_exec", "other"]);
    assert.deepEqual(data.devices, []);
  });

  test("fetchOverview sends the step marker only when there is one", async () => {
    const seen: string[] = [];
    const api = client(200, readFixture("overview_cpu.json"), seen);
    const result = await fetchOverview(api, ref, "train step", undefined);
    assert.equal(result.kind, "ok");
    await fetchOverview(api, ref, "", undefined);
    assert.equal(seen[0], "http://h/data/plugin/profscope/overview?step_marker=train+step&run=exp%2Fa&worker=worker0&span=1623143089861");
    assert.equal(seen[1], "http://h/data/plugin/profscope/overview?run=exp%2Fa&worker=worker0&span=1623143089861");
  });

  test("loading and errors pass through", async () => {
    assert.deepEqual(await fetchOverview(client(202, { status: "loading", progress: 0.25 }), ref, null), {
      kind: "loading",
      progress: 0.25,
    });
    const missing = await fetchOverview(client(404, { error: "unknown span '9'" }), ref, null);
    assert.deepEqual(missing, { kind: "error", status: 404, message: "unknown span '9'" });
  });
});

describe("operators", () => {
  test("rows with host and device times; has_device as declared", () => {
    const data = readAnswer("operators", "operators_gpu.json");
    assert.equal(data.group_by, "name");
    assert.equal(data.has_device, true);
    assert.equal(data.rows.length, 7);
    const first = data.rows[0]!;
    assert.deepEqual(
      [first.name, first.calls, first.host_self, first.host_total, first.device_self, first.device_total, first.tc_eligible],
      ["aten::cudnn_convolution_backward_weight", 318, 22804, 40246, 142461, 142461, true],
    );
    assert.equal(first.input_shape, undefined);
  });

  test("stack grouping keeps the frames", () => {
    const data = readAnswer("operators", "operators_cpu_stack.json");
    assert.equal(data.group_by, "stack");
    assert.equal(data.has_device, false);
    assert.equal(data.rows[0]?.stack?.split("\n").length, 7);
  });

  test("detail: stacks, kernels and occurrences", () => {
    const detail = readAnswer("operators/detail", "operator_detail_gpu.json");
    assert.equal(detail.stacks.length, 3); // cut to the first three by the fixture script
    assert.equal(detail.kernels[0]?.calls, 90);
    assert.deepEqual(detail.occurrences[0], { start: 1623142623531390, dur: 263, track: 0, event_id: 542 });
  });

  test("requests carry group_by, name and input_shape", async () => {
    const seen: string[] = [];
    const api = client(200, readFixture("operators_gpu.json"), seen);
    await fetchOperators(api, ref, "input_shape");
    await fetchOperatorDetail(client(200, readFixture("operator_detail_gpu.json"), seen), ref, {
      name: "aten::mm",
      inputShape: "[[256,64],[64,256]]",
    });
    assert.match(seen[0] ?? "", /\/operators\?group_by=input_shape&run=/);
    assert.match(seen[1] ?? "", /\/operators\/detail\?name=aten%3A%3Amm&input_shape=%5B%5B256%2C64%5D%2C%5B64%2C256%5D%5D&run=/);
  });
});

describe("kernels", () => {
  test("rows, Tensor Core share and total", () => {
    const data = readAnswer("kernels", "kernels_gpu.json");
    assert.equal(data.rows.length, 5); // cut to the first five by the fixture script
    assert.equal(data.total, 591532);
    assert.equal(data.tensor_core_share, 0); // fp32 convolutions on a V100: no Tensor Core kernel
    assert.equal(data.rows[0]?.tensor_cores, false);
    assert.equal(data.rows[0]?.blocks_per_sm?.toFixed(2), "42.25");
    assert.equal(data.rows[0]?.achieved_occupancy?.toFixed(3), "0.300");
  });

  test("a CPU-only span: no rows, zero total", async () => {
    const result = await fetchKernels(client(200, readFixture("kernels_cpu.json")), ref, "name");
    assert.equal(result.kind, "ok");
    if (result.kind === "ok") {
      assert.equal(result.data.rows.length, 0);
      assert.equal(result.data.total, 0);
    }
  });
});
