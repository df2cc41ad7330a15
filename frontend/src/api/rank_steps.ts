// Ranks side by side (run level: one span of every worker).
// `distributed/matrix`: rank × step step time, communication and exposed communication (µs; null where a
// rank has no step of that name). `trace/ranks`: where one step of every worker lies on one time axis.
// The answers' types are the contract's (schema.ts).
import type { ApiClient } from "./client";
import type { Answer, Item, Schema } from "./schema";
import type { ApiResult } from "./types";

export type StepMatrix = Answer<"distributed/matrix">;
export type MatrixRank = Item<StepMatrix["ranks"]>;
/** Rank × step (rows as ranks, columns as steps), µs; null where the rank has no step of that name. */
export type Cells = Schema<"RankStepCells">;

export function fetchStepMatrix(api: ApiClient, run: string, spanIndex: number, signal?: AbortSignal): Promise<ApiResult<StepMatrix>> {
  return api.getJson("distributed/matrix", { run, span_index: spanIndex }, signal);
}

export type RankPlacement = Answer<"trace/ranks">;
export type RankAlign = RankPlacement["align"];
export type PlacedWorker = Item<RankPlacement["workers"]>;

export function fetchRankPlacement(
  api: ApiClient,
  run: string,
  spanIndex: number,
  align: RankAlign,
  step: string | null,
  signal?: AbortSignal,
): Promise<ApiResult<RankPlacement>> {
  const params: Record<string, string | number> = { run, span_index: spanIndex, align };
  if (step !== null) params["step"] = step;
  return api.getJson("trace/ranks", params, signal);
}
