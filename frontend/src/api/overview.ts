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

/** How far from the hardware's peak (the backend's quantities/efficiency.py, with the server's device peaks). */
export interface OverviewEfficiency {
  readonly timeBasis: "device" | "host";
  /** Mean MFU over the steps; null with `mfuReason`. */
  readonly mfu: number | null;
  readonly mfuSteps: readonly { readonly name: string; readonly mfu: number | null; readonly matrixGflops: number }[];
  readonly mfuCounted: string;
  readonly mfuReason: string;
  /** Share of device time below half its roofline, and the share whose roofline is known. */
  readonly lowRooflineShare: number | null;
  readonly coveredShare: number | null;
  readonly categories: Schema<"OverviewEfficiency">["categories"];
  readonly uncounted: Schema<"OverviewEfficiency">["uncounted"];
  readonly peaksError: string;
}

/** The answer's efficiency as the Overview's section reads it (null when the answer has none). */
export function overviewEfficiency(value: OverviewData["efficiency"]): OverviewEfficiency | null {
  if (value === undefined) return null;
  return {
    timeBasis: value.time_basis,
    mfu: value.mfu.mean,
    mfuSteps: value.mfu.steps.map((step) => ({ name: step.name, mfu: step.mfu, matrixGflops: step.matrix_gflops })),
    mfuCounted: value.mfu.counted,
    mfuReason: value.mfu.reason,
    lowRooflineShare: value.low_roofline.share,
    coveredShare: value.low_roofline.covered_share,
    categories: value.categories,
    uncounted: value.uncounted,
    peaksError: value.peaks_error,
  };
}

export function fetchOverview(api: ApiClient, ref: SpanRef, stepMarker: string | null, signal?: AbortSignal): Promise<ApiResult<OverviewData>> {
  const params = stepMarker !== null && stepMarker !== "" ? { step_marker: stepMarker } : {};
  return api.spanRoute("overview", ref, params, signal);
}
