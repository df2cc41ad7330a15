import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fetchAnalysis, isAvailable, type LaunchesData } from "../src/api/analyses";
import { ApiClient, type FetchLike } from "../src/api/client";
import { binLabels, busiestStream, idleSplitText, sequenceText, streamHostWaitShare, trimmedCounts } from "../src/views/analyses/model";
import type { Answer } from "../src/api/schema";
import { readAnswer, readFixture } from "./fixtures";

// The backend's answers for tests/test_analyses.py's hand-made trace (one step, one stream, a CUDA graph launch).
const answers = readFixture("analyses_handmade.json") as {
  readonly idle: Answer<"analyses/idle">;
  readonly launches: Answer<"analyses/launches">;
  readonly queues: Answer<"analyses/queues">;
  readonly sequences: Answer<"analyses/sequences">;
  readonly annotations: Answer<"analyses/annotations">;
};

describe("analyses answers", () => {
  test("idle time per stream, split by cause", () => {
    const data = answers.idle;
    assert.equal(data.available, true);
    assert.equal(data.step_time, 1000);
    const [stream] = data.streams;
    assert.deepEqual(
      [stream?.stream, stream?.busy, stream?.host_wait, stream?.kernel_wait, stream?.other, stream?.no_work],
      ["GPU 0 · stream 7", 250, 220, 20, 100, 410],
    );
    assert.equal(data.longest_gaps[0]?.category, "host_wait");
    assert.equal(data.longest_gaps[0]?.dur, 150);
    assert.equal(busiestStream(data), stream);
    assert.equal(streamHostWaitShare(stream!), 220 / 750);
  });

  test("the headline is the busiest stream's, not all streams' together", () => {
    // HTA's ws128 trace, rank 0: five streams of one GPU; the most idle ones wait on the host almost all the time.
    const data = readAnswer("analyses/idle", "idle_ws128.json");
    assert.equal(data.streams.length, 5);
    const busiest = busiestStream(data);
    assert.equal(busiest?.stream, "GPU 0 · stream 84");
    assert.ok(data.streams.every((s) => s.busy <= busiest!.busy));
    assert.equal(streamHostWaitShare(busiest!), busiest!.host_wait / busiest!.idle);
    assert.equal(streamHostWaitShare(busiest!).toFixed(3), "0.845");
    const allStreams = data.streams.reduce((sum, s) => sum + s.host_wait, 0) / data.streams.reduce((sum, s) => sum + s.idle, 0);
    assert.equal(allStreams.toFixed(3), "0.636"); // what the page used to lead with
    assert.equal(idleSplitText(busiest!), "host wait 84.5% · kernel wait 0.0% · other 0.3% · before first / after last work 15.1%");
    // Order does not decide: the busiest is found wherever it is.
    assert.equal(busiestStream({ ...data, streams: [...data.streams].reverse() })?.stream, "GPU 0 · stream 84");
    assert.equal(busiestStream({ ...data, streams: [] }), null);
    // A stream that is never idle has no share.
    assert.ok(Number.isNaN(streamHostWaitShare({ ...busiest!, idle: 0, host_wait_share: null })));
  });

  test("launches with a CUDA graph launch counted once", () => {
    assert.ok(isAvailable(answers.launches));
    const data: LaunchesData = answers.launches;
    assert.deepEqual([data.launches, data.device_activities, data.graph_launches, data.short], [5, 6, 1, 2]);
    assert.equal(data.cpu.max, 60);
    assert.deepEqual(data.histograms.delay.slice(0, 8), [1, 0, 0, 0, 2, 1, 0, 1]);
    assert.equal(data.by_call.find((row) => row.name === "cudaGraphLaunch")?.activities, 2);
    assert.equal(data.longest_delays[0]?.kernel, "K4");
  });

  test("queue length, sequences and annotations", () => {
    const queues = answers.queues;
    assert.deepEqual([queues.streams[0]?.max, queues.streams[0]?.mean, queues.streams[0]?.empty], [2, 0.43, 682]);
    assert.match(queues.streams[0]?.counter ?? "", /^c:queue:\d+$/);
    const sequences = answers.sequences;
    assert.equal(sequences.available, true);
    assert.equal(sequences.sequences.length, 0);
    const annotations = answers.annotations;
    const fwd = annotations.rows.find((row) => row.name === "train/fwd");
    assert.deepEqual([fwd?.host_total, fwd?.device_total, fwd?.device_work], [390, 400, 220]);
    assert.equal(annotations.rows.find((row) => row.name === "train/graph")?.device_total, null);
  });

  test("an answer without anything to show is told apart by its flag", () => {
    assert.equal(isAvailable({ available: false, reason: "This span has no device activity.", steps: 3 }), false);
    assert.equal(isAvailable(answers.idle), true);
  });

  test("fetches the route with the span", async () => {
    const seen: string[] = [];
    const fetchImpl: FetchLike = async (url) => {
      seen.push(url);
      return new Response(JSON.stringify(answers["idle"]), { status: 200, headers: { "Content-Type": "application/json" } });
    };
    const api = new ApiClient("http://h/data/plugin/profscope/", fetchImpl);
    const result = await fetchAnalysis(api, "analyses/idle", { run: "r", worker: "w", span: "1" });
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
      operator: "op", kernels: ["void k1<float>(float*)", "k2"], length: 2, count: 2, device_total: 1, device_mean: 0.5,
      cpu_total: 1, device_share: 1, example_id: 1, example_start: 0, example_end: 1,
    });
    assert.equal(text, "k1<float> → k2");
  });

  test("empty bins past the last non-empty one are dropped", () => {
    assert.deepEqual(trimmedCounts([0, 3, 0, 2, 0, 0]), [0, 3, 0, 2]);
    assert.deepEqual(trimmedCounts([0, 0]), [0]);
  });
});
