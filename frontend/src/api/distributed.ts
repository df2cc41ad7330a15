// The `distributed` route (run level: one span of every worker): per rank computation,
// communication, their overlap, wait and transfer; the collectives; the straggler.
// Times are µs per step (ranks) or summed over the span (collectives), sizes bytes.
// The answer's type is the contract's (schema.ts).
import type { ApiClient } from "./client";
import type { Answer, Item } from "./schema";
import type { ApiResult } from "./types";

export type DistributedData = Answer<"distributed">;
export type RankRow = Item<DistributedData["ranks"]>;
export type CollectiveRow = Item<DistributedData["collectives"]>;
export type CollectiveRankRow = Item<CollectiveRow["per_rank"]>;
export type Straggler = NonNullable<DistributedData["straggler"]>;
export type FailedWorker = Item<DistributedData["failed"]>;

export function fetchDistributed(api: ApiClient, run: string, spanIndex: number, signal?: AbortSignal): Promise<ApiResult<DistributedData>> {
  return api.getJson("distributed", { run, span_index: spanIndex }, signal);
}
