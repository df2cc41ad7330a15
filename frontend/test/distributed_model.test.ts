import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApiClient, type FetchLike } from "../src/api/client";
import { fetchDistributed, type DistributedData, type Straggler } from "../src/api/distributed";
import type { RunInfo } from "../src/api/runs";
import {
  formatBandwidth,
  meanMessageBytes,
  parseSpanIndex,
  rankSegments,
  spanIndexCount,
  stragglerSentence,
} from "../src/lib/distributed_model";
import { readAnswer, runWorker } from "./fixtures";

const straggler: Straggler = {
  worker: "rank3",
  rank: 3,
  step_time: 12_300,
  median_of_others: 11_389,
  excess: 911,
  excess_share: 0.08,
};

describe("straggler sentence", () => {
  test("names the rank and worker, the step time and how far above the others it is", () => {
    assert.equal(
      stragglerSentence(straggler, 8),
      "Rank 3 (worker rank3) is the slowest: 12.3 ms per step, 8.0% above the median of the others (11.4 ms).",
    );
  });

  test("with two ranks, the other rank is the reference", () => {
    assert.match(stragglerSentence(straggler, 2), /8\.0% above the other rank \(11\.4 ms\)\.$/);
  });

  test("within 2% of the others there is no clear straggler", () => {
    const close = { ...straggler, step_time: 11_500, excess: 111, excess_share: 0.0097 };
    assert.equal(
      stragglerSentence(close, 4),
      "No clear straggler: the slowest, rank 3 (worker rank3), takes 11.5 ms per step, only 1.0% above the median of the others (11.4 ms).",
    );
  });

  test("without a share (the others take no time) the excess is given as time", () => {
    const sentence = stragglerSentence({ ...straggler, median_of_others: 0, excess_share: null }, 3);
    assert.match(sentence, /911 µs more than the median of the others\.$/);
  });

  test("an unknown rank falls back to the worker name", () => {
    assert.match(stragglerSentence({ ...straggler, rank: Number.NaN }, 3), /^Worker rank3 is the slowest/);
  });

  test("the real DDP run: rank 0 is the straggler", () => {
    const data = readAnswer("distributed", "distributed_ddp_gloo.json");
    assert.equal(data.available, true);
    assert.equal(data.ranks.length, 2);
    assert.equal(data.straggler?.worker, "rank0");
    // The straggler is the rank with the longest step.
    const slowest = [...data.ranks].sort((a, b) => b.step_time - a.step_time)[0];
    assert.equal(slowest?.worker, data.straggler?.worker);
    assert.match(stragglerSentence(data.straggler!, data.ranks.length), /^Rank 0 \(worker rank0\) is the slowest: 9\.30 ms per step, 6\.6% above the other rank \(8\.73 ms\)\.$/);
    assert.equal(data.collectives[0]?.name, "allreduce");
    assert.equal(data.collectives[0]?.per_rank.length, 2);
    assert.equal(data.collectives[0]?.bytes, 2040072); // from the records' message sizes (In msg nelems x dtype)
  });
});

describe("rank breakdown", () => {
  test("the four parts add up to the step time on the real ranks", () => {
    const data = readAnswer("distributed", "distributed_ddp_gloo.json");
    for (const rank of data.ranks) {
      const parts = rankSegments(rank);
      assert.deepEqual(parts.map((part) => part.part), ["compute", "overlap", "communication", "other"]);
      const sum = parts.reduce((total, part) => total + part.value, 0);
      assert.ok(Math.abs(sum - rank.step_time) < 1e-6 * rank.step_time, `${rank.worker}: ${sum} vs ${rank.step_time}`);
    }
  });

  test("overlap is taken out of both computation and communication; nothing goes negative", () => {
    assert.deepEqual(
      rankSegments({ compute: 70, communication: 40, overlap: 30, other: 20 }).map((part) => part.value),
      [40, 30, 10, 20],
    );
    assert.deepEqual(
      rankSegments({ compute: 10, communication: 5, overlap: 12, other: Number.NaN }).map((part) => part.value),
      [0, 12, 0, 0],
    );
  });
});

describe("span index, sizes and bandwidth", () => {
  const run: RunInfo = {
    name: "ddp",
    status: "ready",
    workers: [
      runWorker("rank0", ["1", "2", "3"]),
      runWorker("rank1", ["1", "2"]),
    ],
  };

  test("a run offers as many span indices as its longest worker has spans", () => {
    assert.equal(spanIndexCount(run), 3);
    assert.equal(spanIndexCount(null), 0);
    assert.equal(parseSpanIndex("2", 3), 2);
    assert.equal(parseSpanIndex("3", 3), 0);
    assert.equal(parseSpanIndex("-1", 3), 0);
    assert.equal(parseSpanIndex("1.5", 3), 0);
    assert.equal(parseSpanIndex(null, 3), 0);
  });

  test("bandwidth in decimal GB/s; unknown sizes read as a dash", () => {
    assert.equal(formatBandwidth(12.5e9), "12.5 GB/s");
    assert.equal(formatBandwidth(1.234e9), "1.23 GB/s");
    assert.equal(formatBandwidth(250e9), "250 GB/s");
    assert.equal(formatBandwidth(null), "—");
    assert.equal(meanMessageBytes(4096, 4), 1024);
    assert.equal(meanMessageBytes(null, 4), null);
    assert.equal(meanMessageBytes(4096, 0), null);
  });

  test("the route is asked at run level, with the span index", async () => {
    const seen: string[] = [];
    const fetchImpl: FetchLike = async (url) => {
      seen.push(url);
      return new Response(JSON.stringify({ status: "loading", progress: 0.5 }), { status: 202 });
    };
    const result = await fetchDistributed(new ApiClient("http://h/data/plugin/profscope/", fetchImpl), "exp/ddp", 2);
    assert.deepEqual(result, { kind: "loading", progress: 0.5 });
    const url = new URL(seen[0]!);
    assert.equal(url.pathname, "/data/plugin/profscope/distributed");
    assert.deepEqual(Object.fromEntries(url.searchParams), { run: "exp/ddp", span_index: "2" });
  });

  test("a single-worker run is not available and says why", () => {
    const data: DistributedData = { available: false, ranks: [], collectives: [], straggler: null, hint: "This run has a single worker", span_index: 0, failed: [] };
    assert.equal(data.available, false);
    assert.equal(data.hint, "This run has a single worker");
    assert.equal(data.straggler, null);
  });
});
