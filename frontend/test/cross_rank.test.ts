import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { crossRankData, matchedRows, type CrossRankAnswer } from "../src/api/cross_rank";
import { barRanks } from "../src/lib/distributed_model";

describe("barRanks", () => {
  const ranks = Array.from({ length: 1000 }, (_, rank) => ({ rank, stepTime: rank === 417 ? 99 : rank % 10 }));

  test("every rank up to the limit, in the order given", () => {
    const few = ranks.slice(0, 5);
    assert.deepEqual(barRanks(few, (r) => r.stepTime, 8), { shown: few, hidden: 0 });
  });

  test("beyond it, the largest values in rank order, and how many are left out", () => {
    const { shown, hidden } = barRanks(ranks, (r) => r.stepTime, 32);
    assert.equal(shown.length, 32);
    assert.equal(hidden, 968);
    assert.ok(shown.some((r) => r.rank === 417), "the slowest rank is drawn");
    assert.deepEqual(shown.map((r) => r.rank), [...shown.map((r) => r.rank)].sort((a, b) => a - b));
    assert.ok(shown.every((r) => r.stepTime >= 9));
  });

  test("a value that is no number sorts last", () => {
    const odd = [{ rank: 0, v: Number.NaN }, { rank: 1, v: 1 }, { rank: 2, v: 2 }];
    assert.deepEqual(barRanks(odd, (r) => r.v, 2).shown.map((r) => r.rank), [1, 2]);
  });
});

describe("cross-rank answer", () => {
  const answer: CrossRankAnswer = {
    matched_by: "process group and sequence number",
    process_groups: [{ process_group: "0", collectives: 2, group_size: 4 }],
    collectives: {
      columns: ["process_group", "seq", "name", "ranks", "group_size", "bytes", "start", "latency", "skew", "last_rank", "wait_caused", "algbw", "busbw"],
      process_group: ["0", "0"], seq: [1, 2], name: ["allreduce", "allreduce"], ranks: [4, 4], group_size: [4, 4],
      bytes: [1024, null], start: [0, 10], latency: [5, 6], skew: [1, 2], last_rank: [3, 3], wait_caused: [3, 4],
      algbw: [2e8, null], busbw: [3e8, null],
    },
    kinds: [{ name: "allreduce", group_size: 4, calls: 2, bytes: 1024, latency: 11, mean_latency: 5.5, mean_skew: 1.5, algbw: 2e8, busbw: 3e8 }],
    stragglers: [{ rank: 3, worker: "rank3", collectives: 2, arrived_last: 2, wait_caused: 7, mean_lateness: 1.5 }],
  };

  test("columns become rows, nulls stay null", () => {
    const rows = matchedRows(answer.collectives);
    assert.equal(rows.length, 2);
    assert.deepEqual([rows[0]!.process_group, rows[0]!.seq, rows[0]!.bytes, rows[0]!.busbw], ["0", 1, 1024, 3e8]);
    assert.deepEqual([rows[1]!.bytes, rows[1]!.algbw, rows[1]!.busbw], [null, null, null]);
  });

  test("the whole answer", () => {
    const data = crossRankData(answer);
    assert.equal(data.kinds[0]!.busbw, 3e8);
    assert.equal(data.stragglers[0]!.arrived_last, 2);
    assert.deepEqual(data.collectives.map((row) => row.latency), [5, 6]);
    // A run without collectives: the backend sends no column but `columns`.
    assert.deepEqual(crossRankData({ ...answer, collectives: { columns: [] } }).collectives, []);
  });
});
