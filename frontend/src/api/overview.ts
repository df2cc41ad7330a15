// The `overview` route: steps and their time breakdown, GPU summary, host CPU utilization,
// benchmark figures and recommendations of one span. Times in µs, ratios 0..1, sizes in bytes.
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
  stringMapField,
  type JsonObject,
} from "./json_fields";
import type { ApiResult, SpanRef } from "./types";
import { parseUncounted, type UncountedCalls } from "./roofline";

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
  /** What the views call the device: "GPU 0", "Ascend 1", "MTIA 17". */
  readonly label: string;
  /** "GPU", or the accelerator's family ("Ascend", "MTIA"...). */
  readonly kind: string;
  readonly memory: number | null;
  readonly computeCapability: string | null;
  readonly numSms: number | null;
  readonly utilization: number | null;
  readonly smEfficiency: number | null;
  readonly achievedOccupancy: number | null;
  readonly tensorCoreShare: number | null;
  readonly kernelTime: number | null;
  /** Why a null figure is null, by its answer field ("sm_efficiency", "achieved_occupancy", "tensor_core_share"). */
  readonly unavailable: Readonly<Record<string, string>>;
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

/** A utilization over the span: its mean and the highest sampled interval (null when unknown). */
export interface UtilizationFigures {
  readonly mean: number;
  readonly max: number | null;
}

/** Utilization per sampled interval; `time` is each interval's start in µs from the span's start. */
export interface HostCpuSamples {
  readonly time: readonly number[];
  readonly process: readonly number[];
  readonly system: readonly number[] | null;
}

/** Host CPU utilization the writer sampled over the span (from its manifest). */
export interface HostCpu {
  readonly cpuCount: number | null;
  /** µs between readings. */
  readonly interval: number | null;
  /** µs the figures cover. */
  readonly duration: number;
  /** This process's CPU time / elapsed time: 1 is one CPU kept busy, at most `cpuCount`. */
  readonly process: UtilizationFigures;
  /** Busy share of all the machine's CPUs, 0..1; null where it could not be read. */
  readonly system: UtilizationFigures | null;
  readonly samples: HostCpuSamples | null;
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
  /** Null when the span's writer did not sample the CPU (traces not written by the writer). */
  readonly hostCpu: HostCpu | null;
  readonly benchmark: BenchmarkFigures | null;
  readonly recommendations: readonly Recommendation[];
  /** MFU, time far from the roofline, device time per operator category; null from an older server. */
  readonly efficiency: OverviewEfficiency | null;
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

/** An older answer has no kind: its label says it ("GPU 0" → "GPU", "Ascend 1" → "Ascend"). */
function deviceKindOfLabel(label: string): string {
  return label.replace(/\s*\d+$/, "") || "GPU";
}

function parseDevice(value: unknown): DeviceSummary | null {
  if (!isObject(value)) return null;
  const id = value["id"];
  const numericId = typeof id === "number" ? id : Number(id);
  return {
    id: numericId,
    name: stringField(value, "name", "GPU"),
    label: stringField(value, "label", `GPU ${numericId}`),
    kind: stringField(value, "kind", deviceKindOfLabel(stringField(value, "label", "GPU"))),
    memory: nullableNumberField(value, "memory"),
    computeCapability: nullableStringField(value, "compute_capability"),
    numSms: nullableNumberField(value, "num_sms"),
    utilization: nullableNumberField(value, "utilization"),
    smEfficiency: nullableNumberField(value, "sm_efficiency"),
    achievedOccupancy: nullableNumberField(value, "achieved_occupancy"),
    tensorCoreShare: nullableNumberField(value, "tensor_core_share"),
    kernelTime: nullableNumberField(value, "kernel_time"),
    unavailable: stringMapField(value, "unavailable"),
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

function parseUtilization(value: unknown): UtilizationFigures | null {
  if (!isObject(value)) return null;
  const mean = value["mean"];
  if (typeof mean !== "number" || !Number.isFinite(mean)) return null;
  return { mean, max: nullableNumberField(value, "max") };
}

/** A list of finite numbers of the given length, else null. */
function numberList(value: unknown, length: number | null): number[] | null {
  if (!Array.isArray(value) || (length !== null && value.length !== length)) return null;
  const numbers = value.filter((entry): entry is number => typeof entry === "number" && Number.isFinite(entry));
  return numbers.length === value.length ? numbers : null;
}

function parseHostCpuSamples(value: unknown): HostCpuSamples | null {
  if (!isObject(value)) return null;
  const time = numberList(value["time"], null);
  if (time === null || time.length === 0) return null;
  const process = numberList(value["process"], time.length);
  if (process === null) return null;
  const system = value["system"] === null || value["system"] === undefined ? null : numberList(value["system"], time.length);
  return { time, process, system };
}

export function parseHostCpu(value: unknown): HostCpu | null {
  if (!isObject(value)) return null;
  const process = parseUtilization(value["process"]);
  const duration = value["duration"];
  if (process === null || typeof duration !== "number" || !Number.isFinite(duration)) return null;
  return {
    cpuCount: nullableNumberField(value, "cpu_count"),
    interval: nullableNumberField(value, "interval"),
    duration,
    process,
    system: parseUtilization(value["system"]),
    samples: parseHostCpuSamples(value["samples"]),
  };
}

/** A recommendation's evidence: numbers, strings, booleans and lists of them (anything else dropped). */
export function parseEvidence(value: unknown): Record<string, EvidenceValue> {
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

export function parseRecommendation(value: unknown): Recommendation | null {
  if (!isObject(value) || typeof value["text"] !== "string") return null;
  return { id: stringField(value, "id"), text: value["text"], evidence: parseEvidence(value["evidence"]) };
}

function parseStepSource(object: JsonObject): StepSource {
  const value = object["step_source"];
  return value === "user" || value === "span" ? value : "ProfilerStep";
}

/** How far from the hardware's peak (the backend's quantities/efficiency.py, with the server's device peaks). */
export interface OverviewEfficiency {
  readonly timeBasis: "device" | "host";
  /** Mean MFU over the steps; null with `mfuReason`. */
  readonly mfu: number | null;
  readonly mfuSteps: readonly { readonly name: string; readonly mfu: number | null; readonly matrixGflops: number }[];
  readonly mfuCounted: string;
  readonly mfuReason: string;
  /** Share of device time in calls below half their roofline, and the share whose roofline is known. */
  readonly lowRooflineShare: number | null;
  readonly coveredShare: number | null;
  readonly categories: readonly { readonly category: string; readonly label: string; readonly time: number; readonly share: number | null }[];
  readonly uncounted: readonly UncountedCalls[];
  readonly peaksError: string;
}

function parseEfficiency(value: unknown): OverviewEfficiency | null {
  if (!isObject(value)) return null;
  const mfu = objectOf(value["mfu"]);
  const low = objectOf(value["low_roofline"]);
  return {
    timeBasis: value["time_basis"] === "host" ? "host" : "device",
    mfu: nullableNumberField(mfu, "mean"),
    mfuSteps: listField(mfu, "steps", (step) =>
      isObject(step) ? { name: stringField(step, "name"), mfu: nullableNumberField(step, "mfu"), matrixGflops: numberField(step, "matrix_gflops") } : null,
    ),
    mfuCounted: stringField(mfu, "counted"),
    mfuReason: stringField(mfu, "reason"),
    lowRooflineShare: nullableNumberField(low, "share"),
    coveredShare: nullableNumberField(low, "covered_share"),
    categories: listField(value, "categories", (entry) =>
      isObject(entry)
        ? { category: stringField(entry, "category"), label: stringField(entry, "label"), time: numberField(entry, "time"), share: nullableNumberField(entry, "share") }
        : null,
    ),
    uncounted: listField(value, "uncounted", parseUncounted),
    peaksError: stringField(value, "peaks_error"),
  };
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
    hostCpu: parseHostCpu(json["host_cpu"]),
    benchmark: parseBenchmark(json["benchmark"]),
    recommendations: listField(json, "recommendations", parseRecommendation),
    efficiency: parseEfficiency(json["efficiency"]),
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
