import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApiClient, type FetchLike } from "../src/api/client";
import { fetchDataPipeline, operatorsInFlowOrder, parseDataPipeline } from "../src/api/data_pipeline";
import { readFixture } from "./fixtures";

// Fixtures: the backend's answers for torch213/dataloader_bound_w0 (num_workers=0) and for the
// MindSpore Ascend profiler folder with its MindData files (../shared/traces).

describe("data pipeline answer", () => {
  test("a num_workers=0 span: per-step wait and compute, a data-bound verdict with its evidence", () => {
    const data = parseDataPipeline(readFixture("datapipeline_w0.json"));
    assert.equal(data.stepSource, "ProfilerStep");
    assert.deepEqual(data.steps.map((step) => step.name), ["ProfilerStep#5", "ProfilerStep#6", "ProfilerStep#7"]);
    for (const step of data.steps) {
      assert.ok(Math.abs(step.dataWait + step.compute + step.other - step.dur) < 1e-6, step.name);
      assert.ok(Math.abs(step.dataShare - step.dataWait / step.dur) < 1e-9, step.name);
    }
    const waited = data.steps.reduce((sum, step) => sum + step.dataWait, 0);
    assert.ok(Math.abs(data.summary.totalDataWait - waited) < 1e-6);
    assert.equal(data.verdict.status, "data_bound");
    assert.equal(data.verdict.dataBound, true);
    assert.equal(data.verdict.basis, "trace");
    assert.equal(data.verdict.evidence["data_share"], data.summary.dataShare);
    assert.equal(data.loader.multiprocess, false);
    assert.equal(data.loader.numWorkers, 0);
    assert.deepEqual(data.recommendations.map((r) => r.id), ["dataloader_in_main_process"]);
    assert.equal(data.minddata, null);
    assert.deepEqual(data.notes, []);
  });

  test("a MindSpore span: no trace verdict, the MindData chain in data-flow order with its bottleneck", () => {
    const data = parseDataPipeline(readFixture("datapipeline_ascend.json"));
    assert.equal(data.verdict.status, "unknown");
    assert.equal(data.verdict.dataBound, null);
    assert.ok(data.notes.some((note) => note.includes("No data-loading ranges")));
    const pipeline = data.minddata;
    assert.notEqual(pipeline, null);
    if (pipeline === null) return;
    assert.equal(pipeline.deviceId, "1");
    assert.deepEqual(operatorsInFlowOrder(pipeline).map((op) => op.opType), ["ImageFolderOp", "MapOp", "MapOp", "BatchOp"]);
    const batch = pipeline.operators.find((op) => op.opId === 0);
    assert.equal(batch?.queueUsage, 1 / 64);
    assert.deepEqual(batch?.queueSizes, [0, 2]);
    assert.equal(batch?.parentId, null);
    assert.equal(pipeline.bottleneck?.opId, 3);
    assert.equal(pipeline.deviceQueue?.emptyBatches, 1);
    assert.equal(pipeline.deviceQueue?.meanPushTime, 4000);
    assert.equal(pipeline.getNext?.batches, 3);
  });

  test("bad entries are dropped or blanked, not fatal; a non-object is an error", () => {
    const data = parseDataPipeline({
      steps: [null, { name: "s", dur: 5, data_wait: "x", compute: 5, other: 0, data_share: 0 }],
      verdict: { status: "bogus", text: 3 },
      loader: { iterators: ["a", 2], multiprocess: "yes", num_workers: 1.5 },
      minddata: {
        device_id: "0",
        operators: [{ op_id: "x" }, { op_id: 2, op_type: "MapOp", children_ids: [1, "y", 1.5] }, { op_id: 1, op_type: "TFReaderOp" }],
        chain: [1, 9, 2],
        bottleneck: { op_id: null },
      },
    });
    assert.equal(data.steps.length, 1);
    assert.ok(Number.isNaN(data.steps[0]?.dataWait ?? 0));
    assert.equal(data.verdict.status, "unknown");
    assert.equal(data.verdict.text, "");
    assert.deepEqual(data.loader.iterators, ["a"]);
    assert.equal(data.loader.multiprocess, null);
    assert.equal(data.loader.numWorkers, null);
    assert.deepEqual(data.minddata?.operators.map((op) => op.opId), [2, 1]);
    assert.deepEqual(data.minddata?.operators[0]?.childrenIds, [1]);
    assert.deepEqual(data.minddata?.chain, [1, 2]);
    assert.equal(data.minddata?.bottleneck, null);
    assert.throws(() => parseDataPipeline([]), /not an object/);
  });

  test("operators the chain leaves out come last", () => {
    const data = parseDataPipeline({
      minddata: { operators: [{ op_id: 0, op_type: "BatchOp" }, { op_id: 5, op_type: "ZipOp" }, { op_id: 1, op_type: "MapOp" }], chain: [1, 0] },
    });
    assert.deepEqual(operatorsInFlowOrder(data.minddata!).map((op) => op.opId), [1, 0, 5]);
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
