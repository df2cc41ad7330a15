import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunInfo } from "../src/api/runs";
import { runWorker } from "./fixtures";
import { resolveSelection } from "../src/state/selection";
import { EMPTY_URL_STATE, type UrlState } from "../src/state/url_state";

const runs: RunInfo[] = [
  {
    name: "resnet",
    status: "ready",
    workers: [
      runWorker("worker0", ["100", "200"]),
      runWorker("worker1", ["300"]),
    ],
  },
  { name: "ddp", status: "loading", progress: 0.4, workers: [] },
  { name: "broken", status: "error", error: "truncated gzip", workers: [] },
];

const want = (patch: Partial<UrlState>): UrlState => ({ ...EMPTY_URL_STATE, ...patch });

test("an existing selection is kept as it is", () => {
  const wanted = want({ run: "resnet", worker: "worker0", span: "200", view: "memory" });
  const { selection, state } = resolveSelection(runs, wanted);
  assert.equal(state, wanted);
  assert.equal(selection.worker?.name, "worker0");
  assert.equal(selection.span, "200");
  assert.equal(selection.spanIndex, 1);
});

test("nothing wanted: the first run, worker and span", () => {
  const { selection, state } = resolveSelection(runs, EMPTY_URL_STATE);
  assert.deepEqual([state.run, state.worker, state.span], ["resnet", "worker0", "100"]);
  assert.equal(selection.spanIndex, 0);
});

test("an unknown run falls back to the first, dropping its worker and span", () => {
  const { state } = resolveSelection(runs, want({ run: "gone", worker: "worker1", span: "300" }));
  assert.deepEqual([state.run, state.worker, state.span], ["resnet", "worker0", "100"]);
});

test("an unknown worker or span falls back within the run; other fields survive", () => {
  const wanted = want({ run: "resnet", worker: "worker9", span: "200", params: { "trace.q": "x" } });
  const { state } = resolveSelection(runs, wanted);
  assert.deepEqual([state.worker, state.span], ["worker0", "100"]);
  assert.deepEqual(state.params, { "trace.q": "x" });
  assert.equal(resolveSelection(runs, want({ run: "resnet", worker: "worker1", span: "999" })).state.span, "300");
});

test("a run that is not ready keeps the linked worker and span for later", () => {
  const wanted = want({ run: "ddp", worker: "rank1", span: "42" });
  const { selection, state } = resolveSelection(runs, wanted);
  assert.equal(state, wanted);
  assert.equal(selection.run?.name, "ddp");
  assert.equal(selection.worker, null);
});

test("no runs: nothing selected, the wanted state untouched", () => {
  const wanted = want({ run: "later" });
  const { selection, state } = resolveSelection([], wanted);
  assert.equal(selection.run, null);
  assert.equal(state, wanted);
});
