import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  fetchAnalysis,
  parseAnnotations,
  parseIdleTime,
  parseKernelSequences,
  parseLaunches,
  parseQueueLength,
} from "../src/api/analyses";
import { ApiClient, type FetchLike } from "../src/api/client";
import { binLabels, hostWaitShare, sequenceText, trimmedCounts } from "../src/views/analyses/model";
import { readFixture } from "./fixtures";

// The backend's answers for tests/test_analyses.py's hand-made trace (one step, one stream, a CUDA graph launch).
const answers = readFixture("analyses_handmade.json") as Record<string, unknown>;

describe("analyses answers", () => {
  test("idle time per stream, split by cause", () => {
    const data = parseIdleTime(answers["idle"]);
    assert.equal(data.available, true);
    assert.equal(data.stepTime, 1000);
    const [stream] = data.streams;
    assert.deepEqual(
      [stream?.stream, stream?.busy, stream?.hostWait, stream?.kernelWait, stream?.other, stream?.noWork],
      ["GPU 0 · stream 7", 250, 220, 20, 100, 410],
    );
    assert.equal(data.longestGaps[0]?.category, "host_wait");
    assert.equal(data.longestGaps[0]?.dur, 150);
    assert.equal(hostWaitShare(data), 220 / 750);
  });

  test("launches with a CUDA graph launch counted once", () => {
    const data = parseLaunches(answers["launches"]);
    assert.deepEqual([data.launches, data.deviceActivities, data.graphLaunches, data.short], [5, 6, 1, 2]);
    assert.equal(data.cpu.max, 60);
    assert.deepEqual(data.histograms.delay.slice(0, 8), [1, 0, 0, 0, 2, 1, 0, 1]);
    assert.equal(data.byCall.find((row) => row.name === "cudaGraphLaunch")?.activities, 2);
    assert.equal(data.longestDelays[0]?.kernel, "K4");
  });

  test("queue length, sequences and annotations", () => {
    const queues = parseQueueLength(answers["queues"]);
    assert.deepEqual([queues.streams[0]?.max, queues.streams[0]?.mean, queues.streams[0]?.empty], [2, 0.43, 682]);
    assert.match(queues.streams[0]?.counter ?? "", /^c:queue:\d+$/);
    const sequences = parseKernelSequences(answers["sequences"]);
    assert.equal(sequences.available, true);
    assert.equal(sequences.sequences.length, 0);
    const annotations = parseAnnotations(answers["annotations"]);
    const fwd = annotations.rows.find((row) => row.name === "train/fwd");
    assert.deepEqual([fwd?.hostTotal, fwd?.deviceTotal, fwd?.deviceWork], [390, 400, 220]);
    assert.equal(annotations.rows.find((row) => row.name === "train/graph")?.deviceTotal, null);
  });

  test("an answer without an 'available' flag is an error, not an empty section", () => {
    assert.throws(() => parseIdleTime({ streams: [] }), /available/);
  });

  test("a span without device work keeps the backend's reason", () => {
    const data = parseQueueLength({ available: false, reason: "This span has no device activity.", steps: 3, streams: [] });
    assert.equal(data.available, false);
    assert.equal(data.reason, "This span has no device activity.");
  });

  test("fetches the route with the span", async () => {
    const seen: string[] = [];
    const fetchImpl: FetchLike = async (url) => {
      seen.push(url);
      return new Response(JSON.stringify(answers["idle"]), { status: 200, headers: { "Content-Type": "application/json" } });
    };
    const api = new ApiClient("http://h/data/plugin/profscope/", fetchImpl);
    const result = await fetchAnalysis(api, "analyses/idle", { run: "r", worker: "w", span: "1" }, parseIdleTime);
    assert.equal(result.kind, "ok");
    assert.match(seen[0] ?? "", /analyses\/idle\?run=r&worker=w&span=1$/);
  });
});

describe("analyses page helpers", () => {
  test("histogram bins are labelled from their edges, the last open", () => {
    const labels = binLabels([0, 1, 1000]);
    assert.equal(labels.length, 3);
    assert.match(labels[2] ?? "", /^≥ /);
  });

  test("a sequence reads as short kernel names joined by arrows", () => {
    const text = sequenceText({
      operator: "op", kernels: ["void k1<float>(float*)", "k2"], length: 2, count: 2, deviceTotal: 1, deviceMean: 0.5,
      cpuTotal: 1, deviceShare: 1, exampleId: 1, exampleStart: 0, exampleEnd: 1,
    });
    assert.equal(text, "k1<float> → k2");
  });

  test("empty bins past the last non-empty one are dropped", () => {
    assert.deepEqual(trimmedCounts([0, 3, 0, 2, 0, 0]), [0, 3, 0, 2]);
    assert.deepEqual(trimmedCounts([0, 0]), [0]);
  });
});
