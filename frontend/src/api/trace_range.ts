// `trace/range`: what lies in a time range of the trace viewer (an area selection): slices by
// track kind and name with their time and self time inside the range, the range split by the
// overview's categories, and the overview's breakdown of the steps inside it. µs throughout.
// The answer's type is the contract's (schema.ts).
import type { ApiClient, QueryParams } from "./client";
import type { Answer, Item } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export type RangeSummary = Answer<"trace/range">;
export type RangeRow = Item<RangeSummary["rows"]>;
export type RangeKind = Item<RangeSummary["kinds"]>;
export type RangeSteps = RangeSummary["steps"];

export function rangeParams(ref: SpanRef, start: number, end: number, tracks: readonly string[] | null): QueryParams {
  return {
    run: ref.run,
    worker: ref.worker,
    span: ref.span,
    start: String(Number(start.toFixed(3))),
    end: String(Number(end.toFixed(3))),
    tracks: tracks !== null && tracks.length > 0 ? tracks.join(",") : undefined,
  };
}

export function fetchRangeSummary(api: ApiClient, params: QueryParams, signal?: AbortSignal): Promise<ApiResult<RangeSummary>> {
  return api.getJson("trace/range", params, signal);
}
