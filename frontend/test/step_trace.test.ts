import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApiClient, type FetchLike } from "../src/api/client";
import { fetchStepTrace } from "../src/api/step_trace";
import {
  accountedTime,
  averageOf,
  chartLayers,
  dominantPhase,
  layerValue,
  markerLines,
  pointParam,
  visibleLayers,
} from "../src/lib/step_trace_model";
import { readFixture, readAnswer } from "./fixtures";

const ref = { run: "exp/a", worker: "worker0", span: "1" };

describe("step trace answer", () => {
  test("a torch span (captured from the backend): every phase known, phases add up to each step", () => {
    const data = readAnswer("steptrace", "steptrace_mlp.json");
    assert.equal(data.source, "trace");
    assert.deepEqual(data.steps.map((step) => step.name), ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]);
    for (const step of data.steps) {
      assert.deepEqual(step.missing, []);
      assert.ok(Math.abs(accountedTime(step) - step.dur) < 1e-6, step.name);
      assert.ok(step.dataloader !== null && step.phases.gap !== null && step.dataloader <= step.phases.gap);
    }
    assert.equal(data.markers.forward_start, "first operator after the DataLoader");
    assert.equal(data.markers.time_base, "host");
    // The chart: the seven phases, no forward+backward layer (the split is known).
    assert.deepEqual(visibleLayers(data), ["gap", "forward", "backward", "optimizer", "communication", "tail", "other"]);
    assert.equal(dominantPhase(data)?.layer, "gap");
    assert.deepEqual(markerLines(data).at(-1), { label: "Measured on", value: "host ranges" });
  });

  test("MindSpore's step trace file: only gap, forward + backward and tail", () => {
    const data = readAnswer("steptrace", "steptrace_ascend.json");
    assert.equal(data.source, "mindspore_step_trace");
    const [step] = data.steps;
    assert.ok(step !== undefined);
    assert.equal(step.start, null);
    assert.equal(step.phases.forward, null);
    assert.deepEqual(step.missing, ["forward", "backward", "optimizer"]);
    assert.equal(layerValue(step.phases, step.fp_and_bp, "fp_and_bp"), 23668.08);
    assert.ok(Math.abs(accountedTime(step) - 23709.05) < 1e-6);
    assert.deepEqual(visibleLayers(data), ["gap", "fp_and_bp", "communication", "tail", "other"]);
    assert.equal(averageOf(data, "fp_and_bp"), 23668.08);
    assert.equal(dominantPhase(data)?.layer, "fp_and_bp");
    assert.equal(data.points.fp_point, "Default/EndOfSequence-op131");
    // No "Measured on" line: the file's own clock; what the file lacks is said so.
    assert.equal(markerLines(data).some((line) => line.label === "Measured on"), false);
    assert.deepEqual(markerLines(data).find((line) => line.label === "Optimizer"), { label: "Optimizer", value: "not in the step trace file" });
  });

  test("unknown phases stay null and chart as zero", () => {
    const real = readAnswer("steptrace", "steptrace_mlp.json");
    const phases = { gap: 4, forward: null, backward: null, optimizer: null, communication: null, tail: null, other: 6 };
    const step = { ...real.steps[0]!, dur: 10, phases, fp_and_bp: null, missing: ["forward" as const] };
    const data = { ...real, steps: [step], average: { ...real.average, dur: 10, phases, fp_and_bp: null, steps: 1 } };
    const layers = chartLayers(data, ["gap", "forward", "other"]);
    assert.deepEqual(layers.map((layer) => layer.values), [[4], [0], [6]]);
    assert.deepEqual(visibleLayers(data), ["gap", "other"]);
  });

  test("points: trimmed, sent only when set", async () => {
    assert.equal(pointParam("  aten::linear "), "aten::linear");
    assert.equal(pointParam(null), "");
    const seen: string[] = [];
    const fetchImpl: FetchLike = async (url) => {
      seen.push(url);
      return new Response(JSON.stringify(readFixture("steptrace_mlp.json")), { status: 200, headers: { "Content-Type": "application/json" } });
    };
    const api = new ApiClient("http://h/data/plugin/profscope/", fetchImpl);
    const result = await fetchStepTrace(api, ref, { fpPoint: " aten::linear ", bpPoint: "" });
    assert.equal(result.kind, "ok");
    const url = new URL(seen[0] ?? "");
    assert.equal(url.pathname, "/data/plugin/profscope/steptrace");
    assert.equal(url.searchParams.get("fp_point"), "aten::linear");
    assert.equal(url.searchParams.has("bp_point"), false);
    assert.equal(url.searchParams.get("run"), "exp/a");
  });
});
