// The `overview` route: steps and their time breakdown, GPU summary, benchmark figures and
// recommendations of one span. Times in µs, ratios 0..1, sizes in bytes.
import type { ApiClient } from "./client";
import {
  booleanField,
  isObject,
  listField,
  nullableNumberField,
  nullableStringField,
  numberField,
  numberMapField,
  objectOf,
  parsedResult,
  stringField,
  type JsonObject,
} from "./json_fields";
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
] as const;
export type BreakdownCategory = (typeof BREAKDOWN_CATEGORIES)[number];

export function isBreakdownCategory(value: string): value is BreakdownCategory {
  return (BREAKDOWN_CATEGORIES as readonly string[]).includes(value);
}

/** How steps were found: torch's ProfilerStep#N ranges, a user's record_function name, or the whole span. */
export type StepSource = "ProfilerStep" | "user" | "span";

export interface OverviewStep {
  readonly name: string;
  /** µs, in the trace's time base. */
  readonly start: number;
  /** Step time, extended to the end of the device work it launched. */
  readonly dur: number;
  readonly hostDur: number;
  readonly breakdown: Readonly<Record<string, number>>;
}

export interface DeviceSummary {
  readonly id: number;
  readonly name: string;
  readonly memory: number | null;
  readonly computeCapability: string | null;
  readonly numSms: number | null;
  readonly utilization: number | null;
  readonly smEfficiency: number | null;
  readonly achievedOccupancy: number | null;
  readonly tensorCoreShare: number | null;
  readonly kernelTime: number | null;
}

export interface BenchmarkFigures {
  readonly steps: number;
  readonly meanStepTime: number;
  readonly minStepTime: number;
  readonly maxStepTime: number;
  readonly stepsPerSecond: number;
  readonly readerCost: number;
  readonly dataloaderShare: number;
  readonly batchSize: number | null;
  readonly samplesPerSecond: number | null;
}

/** One number (or name, or list of names) a recommendation is based on. */
export type EvidenceValue = number | string | boolean | readonly (string | number)[];

export interface Recommendation {
  readonly id: string;
  readonly text: string;
  readonly evidence: Readonly<Record<string, EvidenceValue>>;
}

export interface OverviewData {
  readonly stepSource: StepSource;
  readonly hasDevice: boolean;
  /** Categories this span reports, in priority order (device ones are absent on CPU-only runs). */
  readonly categories: readonly BreakdownCategory[];
  readonly steps: readonly OverviewStep[];
  /** Mean µs per step, by category. */
  readonly breakdown: Readonly<Record<string, number>>;
  readonly meanStepTime: number;
  readonly devices: readonly DeviceSummary[];
  readonly benchmark: BenchmarkFigures | null;
  readonly recommendations: readonly Recommendation[];
}

function parseStep(value: unknown): OverviewStep | null {
  if (!isObject(value)) return null;
  return {
    name: stringField(value, "name", "step"),
    start: numberField(value, "start"),
    dur: numberField(value, "dur"),
    hostDur: numberField(value, "host_dur"),
    breakdown: numberMapField(value, "breakdown"),
  };
}

function parseDevice(value: unknown): DeviceSummary | null {
  if (!isObject(value)) return null;
  const id = value["id"];
  return {
    id: typeof id === "number" ? id : Number(id),
    name: stringField(value, "name", "GPU"),
    memory: nullableNumberField(value, "memory"),
    computeCapability: nullableStringField(value, "compute_capability"),
    numSms: nullableNumberField(value, "num_sms"),
    utilization: nullableNumberField(value, "utilization"),
    smEfficiency: nullableNumberField(value, "sm_efficiency"),
    achievedOccupancy: nullableNumberField(value, "achieved_occupancy"),
    tensorCoreShare: nullableNumberField(value, "tensor_core_share"),
    kernelTime: nullableNumberField(value, "kernel_time"),
  };
}

function parseBenchmark(value: unknown): BenchmarkFigures | null {
  if (!isObject(value)) return null;
  return {
    steps: numberField(value, "steps"),
    meanStepTime: numberField(value, "mean_step_time"),
    minStepTime: numberField(value, "min_step_time"),
    maxStepTime: numberField(value, "max_step_time"),
    stepsPerSecond: numberField(value, "steps_per_second"),
    readerCost: numberField(value, "reader_cost"),
    dataloaderShare: numberField(value, "dataloader_share"),
    batchSize: nullableNumberField(value, "batch_size"),
    samplesPerSecond: nullableNumberField(value, "samples_per_second"),
  };
}

function parseEvidence(value: unknown): Record<string, EvidenceValue> {
  const out: Record<string, EvidenceValue> = {};
  for (const [key, entry] of Object.entries(objectOf(value))) {
    if ((typeof entry === "number" && Number.isFinite(entry)) || typeof entry === "string" || typeof entry === "boolean") {
      out[key] = entry;
    } else if (Array.isArray(entry)) {
      out[key] = entry.filter(
        (item): item is string | number => typeof item === "string" || (typeof item === "number" && Number.isFinite(item)),
      );
    }
  }
  return out;
}

function parseRecommendation(value: unknown): Recommendation | null {
  if (!isObject(value) || typeof value["text"] !== "string") return null;
  return { id: stringField(value, "id"), text: value["text"], evidence: parseEvidence(value["evidence"]) };
}

function parseStepSource(object: JsonObject): StepSource {
  const value = object["step_source"];
  return value === "user" || value === "span" ? value : "ProfilerStep";
}

/** Validates an `overview` answer; throws when it is not an object at all. */
export function parseOverview(json: unknown): OverviewData {
  if (!isObject(json)) throw new Error("the overview answer is not an object");
  const listed = Array.isArray(json["categories"]) ? json["categories"] : BREAKDOWN_CATEGORIES;
  const categories = BREAKDOWN_CATEGORIES.filter((category) => listed.includes(category));
  return {
    stepSource: parseStepSource(json),
    hasDevice: booleanField(json, "has_device"),
    categories,
    steps: listField(json, "steps", parseStep),
    breakdown: numberMapField(json, "breakdown"),
    meanStepTime: numberField(json, "mean_step_time"),
    devices: listField(json, "devices", parseDevice),
    benchmark: parseBenchmark(json["benchmark"]),
    recommendations: listField(json, "recommendations", parseRecommendation),
  };
}

export async function fetchOverview(
  api: ApiClient,
  ref: SpanRef,
  stepMarker: string | null,
  signal?: AbortSignal,
): Promise<ApiResult<OverviewData>> {
  const params = stepMarker !== null && stepMarker !== "" ? { step_marker: stepMarker } : {};
  return parsedResult(await api.spanRoute("overview", ref, params, signal), "overview", parseOverview);
}
