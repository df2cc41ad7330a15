import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApiClient, type FetchLike } from "../src/api/client";
import { fetchDataPipeline, operatorsInFlowOrder } from "../src/api/data_pipeline";
import { readFixture, readAnswer } from "./fixtures";

// Fixtures: the backend's answers for torch213/dataloader_bound_w0 (num_workers=0) and for the
// MindSpore Ascend profiler folder with its MindData files (../shared/traces).

describe("data pipeline answer", () => {
  test("a num_workers=0 span: per-step wait and compute, a data-bound verdict with its evidence", () => {
    const data = readAnswer("datapipeline", "datapipeline_w0.json");
    assert.equal(data.step_source, "ProfilerStep");
    assert.deepEqual(data.steps.map((step) => step.name), ["ProfilerStep#5", "ProfilerStep#6", "ProfilerStep#7"]);
    for (const step of data.steps) {
      assert.ok(Math.abs(step.data_wait + step.compute + step.other - step.dur) < 1e-6, step.name);
      assert.ok(Math.abs(step.data_share - step.data_wait / step.dur) < 1e-9, step.name);
    }
    const waited = data.steps.reduce((sum, step) => sum + step.data_wait, 0);
    assert.ok(Math.abs(data.summary.total_data_wait - waited) < 1e-6);
    assert.equal(data.verdict.status, "data_bound");
    assert.equal(data.verdict.data_bound, true);
    assert.equal(data.verdict.basis, "trace");
    assert.equal(data.verdict.evidence["data_share"], data.summary.data_share);
    assert.equal(data.loader.multiprocess, false);
    assert.equal(data.loader.num_workers, 0);
    assert.deepEqual(data.recommendations.map((r) => r.id), ["dataloader_in_main_process"]);
    assert.equal(data.minddata, null);
    assert.deepEqual(data.notes, []);
  });

  test("a MindSpore span: no trace verdict, the MindData chain in data-flow order with its bottleneck", () => {
    const data = readAnswer("datapipeline", "datapipeline_ascend.json");
    assert.equal(data.verdict.status, "unknown");
    assert.equal(data.verdict.data_bound, null);
    assert.ok(data.notes.some((note) => note.includes("No data-loading ranges")));
    const pipeline = data.minddata;
    assert.notEqual(pipeline, null);
    if (pipeline === null) return;
    assert.equal(pipeline.device_id, "1");
    assert.deepEqual(operatorsInFlowOrder(pipeline).map((op) => op.op_type), ["ImageFolderOp", "MapOp", "MapOp", "BatchOp"]);
    const batch = pipeline.operators.find((op) => op.op_id === 0);
    assert.equal(batch?.queue_usage, 1 / 64);
    assert.deepEqual(batch?.queue_sizes, [0, 2]);
    assert.equal(batch?.parent_id, null);
    assert.equal(pipeline.bottleneck?.op_id, 3);
    assert.equal(pipeline.device_queue?.empty_batches, 1);
    assert.equal(pipeline.device_queue?.mean_push_time, 4000);
    assert.equal(pipeline.get_next?.batches, 3);
  });

  test("operators the chain leaves out come last", () => {
    const pipeline = readAnswer("datapipeline", "datapipeline_ascend.json").minddata!;
    const op = (op_id: number, op_type: string) => ({ ...pipeline.operators[0]!, op_id, op_type });
    const shuffled = { ...pipeline, operators: [op(0, "BatchOp"), op(5, "ZipOp"), op(1, "MapOp")], chain: [1, 0] };
    assert.deepEqual(operatorsInFlowOrder(shuffled).map((entry) => entry.op_id), [1, 0, 5]);
  });

  test("fetch asks the datapipeline route for the span", async () => {
    const seen: string[] = [];
    const fetchImpl: FetchLike = async (url) => {
      seen.push(url);
      return new Response(JSON.stringify(readFixture("datapipeline_w0.json")), {
        status: 200,
        headers: { "Content-Type": "application/json" },
      });
    };
    const api = new ApiClient("http://h/data/plugin/profscope/", fetchImpl);
    const result = await fetchDataPipeline(api, { run: "exp/a", worker: "worker0", span: "1" });
    assert.equal(result.kind, "ok");
    assert.equal(seen.length, 1);
    const url = new URL(seen[0] ?? "");
    assert.equal(url.pathname, "/data/plugin/profscope/datapipeline");
    assert.equal(url.searchParams.get("run"), "exp/a");
    assert.equal(url.searchParams.get("worker"), "worker0");
  });
});
