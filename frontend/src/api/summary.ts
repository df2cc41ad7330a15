// The `summary` route: what views need to place events (the span's start and end, µs in the
// trace's time base, and its tracks) and what the shell shows about the span (which profiler wrote
// it, what could not be derived from it). The answer's type is the contract's (schema.ts).
import type { ApiClient } from "./client";
import type { Answer, Item } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export type SpanSummary = Answer<"summary">;
export type SpanTrack = Item<SpanSummary["tracks"]>;
export type SpanLimitation = Item<SpanSummary["limitations"]>;

export function fetchSpanSummary(api: ApiClient, ref: SpanRef, signal?: AbortSignal): Promise<ApiResult<SpanSummary>> {
  return api.spanRoute("summary", ref, {}, signal);
}
