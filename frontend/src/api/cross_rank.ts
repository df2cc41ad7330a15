// The `distributed/collectives` route (run level): collectives matched across ranks by process
// group and sequence number, bandwidths per collective kind, and the straggler table. Computed
// from each rank's summary. Times µs, sizes bytes, bandwidths bytes/s.
import type { ApiClient } from "./client";
import { isObject, listField, nullableNumberField, numberField, parsedResult, stringField } from "./json_fields";
import type { ApiResult } from "./types";

export interface MatchedCollective {
  readonly processGroup: string;
  readonly seq: number;
  readonly name: string;
  /** Ranks that took part. */
  readonly ranks: number;
  readonly groupSize: number;
  readonly bytes: number | null;
  /** From the first collective's start, µs. */
  readonly start: number;
  /** The shortest duration of any rank (waiting removed), µs. */
  readonly latency: number;
  readonly skew: number;
  readonly lastRank: number;
  readonly waitCaused: number;
  readonly algbw: number | null;
  readonly busbw: number | null;
}

export interface CollectiveKind {
  readonly name: string;
  readonly groupSize: number;
  readonly calls: number;
  readonly bytes: number | null;
  readonly latency: number;
  readonly meanLatency: number;
  readonly meanSkew: number;
  readonly algbw: number | null;
  readonly busbw: number | null;
}

export interface StragglerRow {
  readonly rank: number;
  readonly worker: string;
  readonly collectives: number;
  readonly arrivedLast: number;
  readonly waitCaused: number;
  readonly meanLateness: number;
}

export interface CrossRankData {
  readonly matchedBy: string;
  readonly collectives: readonly MatchedCollective[];
  readonly kinds: readonly CollectiveKind[];
  readonly stragglers: readonly StragglerRow[];
}

function column(table: Record<string, unknown>, key: string): readonly unknown[] {
  const values = table[key];
  return Array.isArray(values) ? values : [];
}

const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : Number.NaN);
const nullableNum = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);

/** The matched collectives come as columns (one list per field): rows here. */
export function matchedRows(table: unknown): MatchedCollective[] {
  if (!isObject(table)) return [];
  const seq = column(table, "seq");
  const rows: MatchedCollective[] = [];
  for (let i = 0; i < seq.length; i += 1) {
    const at = (key: string): unknown => column(table, key)[i];
    rows.push({
      processGroup: String(at("process_group") ?? ""),
      seq: num(at("seq")),
      name: String(at("name") ?? ""),
      ranks: num(at("ranks")),
      groupSize: num(at("group_size")),
      bytes: nullableNum(at("bytes")),
      start: num(at("start")),
      latency: num(at("latency")),
      skew: num(at("skew")),
      lastRank: num(at("last_rank")),
      waitCaused: num(at("wait_caused")),
      algbw: nullableNum(at("algbw")),
      busbw: nullableNum(at("busbw")),
    });
  }
  return rows;
}

function parseKind(value: unknown): CollectiveKind | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  return {
    name: value["name"],
    groupSize: numberField(value, "group_size"),
    calls: numberField(value, "calls"),
    bytes: nullableNumberField(value, "bytes"),
    latency: numberField(value, "latency"),
    meanLatency: numberField(value, "mean_latency"),
    meanSkew: numberField(value, "mean_skew"),
    algbw: nullableNumberField(value, "algbw"),
    busbw: nullableNumberField(value, "busbw"),
  };
}

function parseStraggler(value: unknown): StragglerRow | null {
  if (!isObject(value) || typeof value["worker"] !== "string") return null;
  return {
    rank: numberField(value, "rank"),
    worker: value["worker"],
    collectives: numberField(value, "collectives"),
    arrivedLast: numberField(value, "arrived_last"),
    waitCaused: numberField(value, "wait_caused"),
    meanLateness: numberField(value, "mean_lateness"),
  };
}

export function parseCrossRank(json: unknown): CrossRankData {
  if (!isObject(json) || !Array.isArray(json["stragglers"])) throw new Error("the cross-rank answer has no straggler table");
  return {
    matchedBy: stringField(json, "matched_by"),
    collectives: matchedRows(json["collectives"]),
    kinds: listField(json, "kinds", parseKind),
    stragglers: listField(json, "stragglers", parseStraggler),
  };
}

export async function fetchCrossRank(api: ApiClient, run: string, spanIndex: number, signal?: AbortSignal): Promise<ApiResult<CrossRankData>> {
  return parsedResult(await api.getJson("distributed/collectives", { run, span_index: spanIndex }, signal), "distributed/collectives", parseCrossRank);
}
