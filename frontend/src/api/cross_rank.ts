// The `distributed/collectives` route (run level): collectives matched across ranks by process
// group and sequence number, bandwidths per collective kind, and the straggler table. Computed
// from each rank's summary. Times µs, sizes bytes, bandwidths bytes/s. The answer's type is the
// contract's (schema.ts); the page reads the matched collectives' columns as rows.
import type { ApiClient } from "./client";
import type { Answer, Item } from "./schema";
import type { ApiResult } from "./types";

export type CrossRankAnswer = Answer<"distributed/collectives">;
export type CollectiveKind = Item<CrossRankAnswer["kinds"]>;
export type StragglerRow = Item<CrossRankAnswer["stragglers"]>;
type CollectiveColumns = CrossRankAnswer["collectives"];

/** One matched collective (a row of the answer's `collectives` columns): a field per column. */
export type MatchedCollective = { readonly [Column in Exclude<keyof CollectiveColumns, "columns">]-?: Item<NonNullable<CollectiveColumns[Column]>> };

export type CrossRankData = Omit<CrossRankAnswer, "collectives"> & { readonly collectives: readonly MatchedCollective[] };

/** The matched collectives come as columns (one list per field; none at all without collectives): rows here. */
export function matchedRows(table: CollectiveColumns): MatchedCollective[] {
  return (table.seq ?? []).map((seq, i) => ({
    process_group: table.process_group?.[i] ?? "",
    seq,
    name: table.name?.[i] ?? "",
    ranks: table.ranks?.[i] ?? Number.NaN,
    group_size: table.group_size?.[i] ?? Number.NaN,
    bytes: table.bytes?.[i] ?? null,
    start: table.start?.[i] ?? Number.NaN,
    latency: table.latency?.[i] ?? Number.NaN,
    skew: table.skew?.[i] ?? Number.NaN,
    last_rank: table.last_rank?.[i] ?? Number.NaN,
    wait_caused: table.wait_caused?.[i] ?? Number.NaN,
    algbw: table.algbw?.[i] ?? null,
    busbw: table.busbw?.[i] ?? null,
  }));
}

export function crossRankData(answer: CrossRankAnswer): CrossRankData {
  return { ...answer, collectives: matchedRows(answer.collectives) };
}

export async function fetchCrossRank(api: ApiClient, run: string, spanIndex: number, signal?: AbortSignal): Promise<ApiResult<CrossRankData>> {
  const result = await api.getJson("distributed/collectives", { run, span_index: spanIndex }, signal);
  return result.kind === "ok" ? { kind: "ok", data: crossRankData(result.data) } : result;
}
