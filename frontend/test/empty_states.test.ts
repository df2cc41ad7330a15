// Empty views say why and what would make them appear, in the span's framework's words.
import assert from "node:assert/strict";
import { test } from "node:test";
import { noGpuState, noKernelsState, noOperatorsState, singleWorkerState } from "../src/lib/empty_states";

test("no kernels: how to record device activity, per framework", () => {
  assert.match(noKernelsState("pytorch").how, /ProfilerActivity\.CUDA/);
  assert.match(noKernelsState("paddle").how, /ProfilerTarget\.GPU/);
  assert.match(noKernelsState(undefined).how, /ProfilerActivity\.CUDA/);
  assert.doesNotMatch(noGpuState("pytorch").how, /Operator view/);
  assert.match(noGpuState("pytorch").why, /no device activity/);
});

test("single worker: why, and how to profile every rank into one run", () => {
  assert.match(singleWorkerState(1).why, /single worker/);
  assert.match(singleWorkerState(3).why, /Fewer than two workers/);
  assert.match(singleWorkerState(1).how, /same run/);
  assert.match(noOperatorsState("paddle").how, /paddle\.profiler/);
});
