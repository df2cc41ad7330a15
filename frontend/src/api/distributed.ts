// The `distributed` route (run level: one span of every worker): per rank computation,
// communication, their overlap, wait and transfer; the collectives; the straggler.
// Times are µs per step (ranks) or summed over the span (collectives), sizes bytes.
import type { ApiClient } from "./client";
import {
  booleanField,
  isObject,
  listField,
  nullableNumberField,
  nullableStringField,
  numberField,
  parsedResult,
  stringField,
} from "./json_fields";
import type { ApiResult } from "./types";

export interface RankRow {
  readonly worker: string;
  readonly rank: number;
  readonly worldSize: number | null;
  readonly backend: string | null;
  readonly steps: number;
  /** Mean per step, µs, like every time below. */
  readonly stepTime: number;
  /** Time a non-collective kernel (CPU-only runs: a host operator) runs, overlap included. */
  readonly compute: number;
  /** Time a collective runs, overlap included. */
  readonly communication: number;
  /** Computation and communication at once. */
  readonly overlap: number;
  /** The rest of the step. */
  readonly other: number;
  /** Communication spent waiting for the last rank to arrive. */
  readonly wait: number;
  readonly transfer: number;
  readonly collectiveCalls: number;
}

export interface CollectiveRankRow {
  readonly worker: string;
  readonly rank: number;
  readonly calls: number;
  readonly bytes: number | null;
  readonly total: number;
  readonly mean: number;
  readonly wait: number;
}

export interface CollectiveRow {
  readonly name: string;
  /** Calls over every rank. */
  readonly calls: number;
  /** Bytes over every call of every rank; null when some sizes are unknown. */
  readonly bytes: number | null;
  readonly total: number;
  readonly mean: number;
  readonly wait: number;
  readonly transfer: number;
  /** Bytes per second of transfer time; null when the sizes are unknown. */
  readonly bandwidth: number | null;
  /** Rank bandwidth (each rank's own durations, waiting included), algorithm and bus, bytes/s. */
  readonly algbw: number | null;
  readonly busbw: number | null;
  /** Transfer bandwidth (each collective's shortest duration over the ranks), bus, bytes/s; null with one rank. */
  readonly transferBusbw: number | null;
  readonly groupSize: number | null;
  readonly perRank: readonly CollectiveRankRow[];
}

export interface Straggler {
  readonly worker: string;
  readonly rank: number;
  readonly stepTime: number;
  readonly medianOfOthers: number;
  readonly excess: number;
  /** excess / median of the others; null when that median is 0. */
  readonly excessShare: number | null;
}

export interface FailedWorker {
  readonly worker: string;
  readonly error: string;
}

export interface DistributedData {
  readonly available: boolean;
  readonly hint: string | null;
  /** What a reader must know first (e.g. only some of the job's ranks are in the run). */
  readonly notes: readonly string[];
  readonly waitMethod: string | null;
  readonly spanIndex: number;
  readonly failed: readonly FailedWorker[];
  readonly ranks: readonly RankRow[];
  readonly collectives: readonly CollectiveRow[];
  readonly straggler: Straggler | null;
}

function parseRank(value: unknown): RankRow | null {
  if (!isObject(value) || typeof value["worker"] !== "string") return null;
  const n = (key: string): number => numberField(value, key);
  return {
    worker: value["worker"],
    rank: n("rank"),
    worldSize: nullableNumberField(value, "world_size"),
    backend: nullableStringField(value, "backend"),
    steps: n("steps"),
    stepTime: n("step_time"),
    compute: n("compute"),
    communication: n("communication"),
    overlap: n("overlap"),
    other: n("other"),
    wait: n("wait"),
    transfer: n("transfer"),
    collectiveCalls: n("collective_calls"),
  };
}

function parseCollectiveRank(value: unknown): CollectiveRankRow | null {
  if (!isObject(value) || typeof value["worker"] !== "string") return null;
  return {
    worker: value["worker"],
    rank: numberField(value, "rank"),
    calls: numberField(value, "calls"),
    bytes: nullableNumberField(value, "bytes"),
    total: numberField(value, "total"),
    mean: numberField(value, "mean"),
    wait: numberField(value, "wait"),
  };
}

function parseCollective(value: unknown): CollectiveRow | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  return {
    name: value["name"],
    calls: numberField(value, "calls"),
    bytes: nullableNumberField(value, "bytes"),
    total: numberField(value, "total"),
    mean: numberField(value, "mean"),
    wait: numberField(value, "wait"),
    transfer: numberField(value, "transfer"),
    bandwidth: nullableNumberField(value, "bandwidth"),
    algbw: nullableNumberField(value, "algbw"),
    busbw: nullableNumberField(value, "busbw"),
    transferBusbw: nullableNumberField(value, "transfer_busbw"),
    groupSize: nullableNumberField(value, "group_size"),
    perRank: listField(value, "per_rank", parseCollectiveRank),
  };
}

function parseStraggler(value: unknown): Straggler | null {
  if (!isObject(value) || typeof value["worker"] !== "string") return null;
  return {
    worker: value["worker"],
    rank: numberField(value, "rank"),
    stepTime: numberField(value, "step_time"),
    medianOfOthers: numberField(value, "median_of_others"),
    excess: numberField(value, "excess"),
    excessShare: nullableNumberField(value, "excess_share"),
  };
}

function parseFailed(value: unknown): FailedWorker | null {
  if (!isObject(value) || typeof value["worker"] !== "string") return null;
  return { worker: value["worker"], error: stringField(value, "error") };
}

export function parseDistributed(json: unknown): DistributedData {
  if (!isObject(json) || typeof json["available"] !== "boolean") throw new Error("the distributed answer has no 'available' flag");
  const spanIndex = numberField(json, "span_index");
  return {
    available: booleanField(json, "available"),
    hint: nullableStringField(json, "hint"),
    notes: listField(json, "notes", (entry) => (typeof entry === "string" ? entry : null)),
    waitMethod: nullableStringField(json, "wait_method"),
    spanIndex: Number.isInteger(spanIndex) ? spanIndex : 0,
    failed: listField(json, "failed", parseFailed),
    ranks: listField(json, "ranks", parseRank),
    collectives: listField(json, "collectives", parseCollective),
    straggler: parseStraggler(json["straggler"]),
  };
}

export async function fetchDistributed(
  api: ApiClient,
  run: string,
  spanIndex: number,
  signal?: AbortSignal,
): Promise<ApiResult<DistributedData>> {
  return parsedResult(await api.getJson("distributed", { run, span_index: spanIndex }, signal), "distributed", parseDistributed);
}
