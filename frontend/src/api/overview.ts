// The `overview` route: steps and their time breakdown, GPU summary, host CPU utilization,
// benchmark figures and recommendations of one span. Times in µs, ratios 0..1, sizes in bytes.
// The answer's type is the contract's (schema.ts).
import type { ApiClient } from "./client";
import type { Answer, Item, Schema } from "./schema";
import type { ApiResult, SpanRef } from "./types";

/** Breakdown categories in priority order: an instant belongs to the first one that covers it. */
export const BREAKDOWN_CATEGORIES = [
  "kernel",
  "memcpy",
  "memset",
  "communication",
  "runtime",
  "dataloader",
  "cpu_exec",
  "other",
] as const satisfies readonly Schema<"BreakdownCategory">[];
export type BreakdownCategory = Schema<"BreakdownCategory">;

export function isBreakdownCategory(value: string): value is BreakdownCategory {
  return (BREAKDOWN_CATEGORIES as readonly string[]).includes(value);
}

export type OverviewData = Answer<"overview">;
/** How steps were found: torch's ProfilerStep#N ranges, a user's record_function name, or the whole span. */
export type StepSource = OverviewData["step_source"];
export type OverviewStep = Item<OverviewData["steps"]>;
export type DeviceSummary = Item<OverviewData["devices"]>;
export type BenchmarkFigures = OverviewData["benchmark"];
export type HostCpu = NonNullable<OverviewData["host_cpu"]>;
/** A host CPU figure over the span: its mean and its highest sampled interval. */
export type UtilizationFigures = HostCpu["process"];
export type Recommendation = Item<OverviewData["recommendations"]>;
export type Evidence = Schema<"Evidence">;
export type EvidenceValue = Evidence[string];

export function fetchOverview(api: ApiClient, ref: SpanRef, stepMarker: string | null, signal?: AbortSignal): Promise<ApiResult<OverviewData>> {
  const params = stepMarker !== null && stepMarker !== "" ? { step_marker: stepMarker } : {};
  return api.spanRoute("overview", ref, params, signal);
}
