// The `compare` route (two spans side by side) and `runs/table` (every span with its headline
// numbers). Times in µs, ratios and shares 0..1, sizes in bytes. delta = experiment − baseline,
// ratio = experiment / baseline; impact = a row's time per step in the experiment minus in
// the baseline (see the API description), so negative means the experiment is faster.
import type { ApiClient, QueryParams } from "./client";
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
} from "./json_fields";
import { parseKernelRow, type KernelRow } from "./kernels";
import { BREAKDOWN_CATEGORIES, type BreakdownCategory, type StepSource } from "./overview";
import { parseOperatorRow, type OperatorRow } from "./operators";
import type { ApiResult, SpanRef } from "./types";

export const COMPARE_GROUPINGS = ["name", "input_shape"] as const;
export type CompareGrouping = (typeof COMPARE_GROUPINGS)[number];

export function isCompareGrouping(value: string | null): value is CompareGrouping {
  return (COMPARE_GROUPINGS as readonly (string | null)[]).includes(value);
}

/** Which sides have a joined row. */
export type RowSide = "both" | "base" | "exp";

export interface CompareSideInfo extends SpanRef {
  readonly framework: string;
  /** GPU names; empty on CPU-only spans. */
  readonly devices: readonly string[];
  readonly hasDevice: boolean;
  readonly steps: number;
  readonly stepSource: StepSource;
  readonly meanStepTime: number;
  /** Samples per step: entered in the page (wins) or from the writer's manifest; null when unknown. */
  readonly batchSize: number | null;
  readonly batchSizeSource: "manifest" | "page" | null;
}

/** A pair of numbers with their difference and ratio (null when the baseline is 0). */
export interface Paired {
  readonly base: number;
  readonly exp: number;
  readonly delta: number;
  readonly ratio: number | null;
}

export interface PerStep {
  readonly base: number | null;
  readonly exp: number | null;
}

/** A row's time per sample (per-step time / its side's batch size), when both batch sizes are known. */
export interface RowPerSample extends PerStep {
  readonly impact: number;
  readonly ratio: number | null;
}

/** Mean step time per sample and the throughput of each side (both batch sizes known). */
export interface PerSample extends Paired {
  readonly samplesPerSecond: { readonly base: number | null; readonly exp: number | null; readonly ratio: number | null };
}

export interface CompareOperatorRow {
  readonly name: string;
  readonly inputShape: string | null;
  readonly side: RowSide;
  readonly base: OperatorRow | null;
  readonly exp: OperatorRow | null;
  readonly delta: Readonly<Record<"calls" | "hostSelf" | "hostTotal" | "deviceSelf" | "deviceTotal", number>>;
  readonly perStep: PerStep;
  /** µs per step, experiment − baseline. */
  readonly impact: number;
  readonly ratio: number | null;
  readonly perSample: RowPerSample | null;
}

export interface CompareKernelRow {
  readonly name: string;
  readonly side: RowSide;
  readonly base: KernelRow | null;
  readonly exp: KernelRow | null;
  readonly delta: { readonly calls: number; readonly total: number; readonly mean: number | null };
  readonly perStep: PerStep;
  readonly impact: number;
  readonly ratio: number | null;
  readonly perSample: RowPerSample | null;
}

export interface CompareNote {
  readonly id: string;
  readonly text: string;
}

export interface CompareData {
  readonly base: CompareSideInfo;
  readonly exp: CompareSideInfo;
  readonly groupBy: CompareGrouping;
  /** Categories either side reports, in priority order. */
  readonly categories: readonly BreakdownCategory[];
  /** Mean µs per step by category. */
  readonly breakdown: Readonly<Record<BreakdownCategory, Paired>>;
  readonly stepTime: Paired;
  /** Null unless both batch sizes are known. */
  readonly perSample: PerSample | null;
  readonly breakdownPerSample: Readonly<Record<BreakdownCategory, Paired>> | null;
  readonly operators: readonly CompareOperatorRow[];
  readonly kernels: readonly CompareKernelRow[];
  readonly notes: readonly CompareNote[];
  /** Each side's mean model FLOPs utilization (null when unknown). */
  readonly mfu: { readonly base: number | null; readonly exp: number | null; readonly ratio: number | null };
}

function parseSideInfo(value: unknown): CompareSideInfo {
  const object = objectOf(value);
  const source = object["step_source"];
  return {
    run: stringField(object, "run"),
    worker: stringField(object, "worker"),
    span: stringField(object, "span"),
    framework: stringField(object, "framework"),
    devices: Array.isArray(object["devices"]) ? object["devices"].filter((d): d is string => typeof d === "string") : [],
    hasDevice: booleanField(object, "has_device"),
    steps: numberField(object, "steps"),
    stepSource: source === "user" || source === "span" ? source : "ProfilerStep",
    meanStepTime: numberField(object, "mean_step_time"),
    batchSize: nullableNumberField(object, "batch_size"),
    batchSizeSource: object["batch_size_source"] === "page" ? "page" : object["batch_size_source"] === "manifest" ? "manifest" : null,
  };
}

function parseRowPerSample(value: unknown): RowPerSample | null {
  if (!isObject(value)) return null;
  return {
    base: nullableNumberField(value, "base"),
    exp: nullableNumberField(value, "exp"),
    impact: numberField(value, "impact"),
    ratio: nullableNumberField(value, "ratio"),
  };
}

function parsePerSample(value: unknown): PerSample | null {
  if (!isObject(value)) return null;
  const throughput = objectOf(value["samples_per_second"]);
  return {
    base: numberField(value, "base"),
    exp: numberField(value, "exp"),
    delta: numberField(value, "delta"),
    ratio: nullableNumberField(value, "ratio"),
    samplesPerSecond: {
      base: nullableNumberField(throughput, "base"),
      exp: nullableNumberField(throughput, "exp"),
      ratio: nullableNumberField(throughput, "ratio"),
    },
  };
}

function parsePerStep(value: unknown): PerStep {
  const object = objectOf(value);
  return { base: nullableNumberField(object, "base"), exp: nullableNumberField(object, "exp") };
}

function parseSide(value: unknown): RowSide {
  return value === "base" || value === "exp" ? value : "both";
}

function parseCompareOperator(value: unknown): CompareOperatorRow | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  const delta = objectOf(value["delta"]);
  return {
    name: value["name"],
    inputShape: nullableStringField(value, "input_shape"),
    side: parseSide(value["side"]),
    base: value["base"] === null ? null : parseOperatorRow(value["base"]),
    exp: value["exp"] === null ? null : parseOperatorRow(value["exp"]),
    delta: {
      calls: numberField(delta, "calls"),
      hostSelf: numberField(delta, "host_self"),
      hostTotal: numberField(delta, "host_total"),
      deviceSelf: numberField(delta, "device_self"),
      deviceTotal: numberField(delta, "device_total"),
    },
    perStep: parsePerStep(value["per_step"]),
    impact: numberField(value, "impact"),
    ratio: nullableNumberField(value, "ratio"),
    perSample: parseRowPerSample(value["per_sample"]),
  };
}

function parseCompareKernel(value: unknown): CompareKernelRow | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  const delta = objectOf(value["delta"]);
  return {
    name: value["name"],
    side: parseSide(value["side"]),
    base: value["base"] === null ? null : parseKernelRow(value["base"]),
    exp: value["exp"] === null ? null : parseKernelRow(value["exp"]),
    delta: { calls: numberField(delta, "calls"), total: numberField(delta, "total"), mean: nullableNumberField(delta, "mean") },
    perStep: parsePerStep(value["per_step"]),
    impact: numberField(value, "impact"),
    ratio: nullableNumberField(value, "ratio"),
    perSample: parseRowPerSample(value["per_sample"]),
  };
}

function parseNote(value: unknown): CompareNote | null {
  if (!isObject(value) || typeof value["text"] !== "string") return null;
  return { id: stringField(value, "id"), text: value["text"] };
}

function parseBreakdown(value: unknown): Record<BreakdownCategory, Paired> {
  const object = objectOf(value);
  const base = numberMapField(object, "base");
  const exp = numberMapField(object, "exp");
  const delta = numberMapField(object, "delta");
  const ratio = objectOf(object["ratio"]);
  const out = {} as Record<BreakdownCategory, Paired>;
  for (const category of BREAKDOWN_CATEGORIES) {
    out[category] = {
      base: base[category] ?? Number.NaN,
      exp: exp[category] ?? Number.NaN,
      delta: delta[category] ?? Number.NaN,
      ratio: nullableNumberField(ratio, category),
    };
  }
  return out;
}

/** Validates a `compare` answer; throws when it is not an object with both sides. */
export function parseCompare(json: unknown): CompareData {
  if (!isObject(json) || !isObject(json["base"]) || !isObject(json["exp"])) {
    throw new Error("the compare answer has no 'base' and 'exp'");
  }
  const listed = Array.isArray(json["categories"]) ? json["categories"] : BREAKDOWN_CATEGORIES;
  const stepTime = objectOf(json["step_time"]);
  const groupBy = stringField(json, "group_by", "name");
  return {
    base: parseSideInfo(json["base"]),
    exp: parseSideInfo(json["exp"]),
    groupBy: isCompareGrouping(groupBy) ? groupBy : "name",
    categories: BREAKDOWN_CATEGORIES.filter((category) => listed.includes(category)),
    breakdown: parseBreakdown(json["breakdown"]),
    stepTime: {
      base: numberField(stepTime, "base"),
      exp: numberField(stepTime, "exp"),
      delta: numberField(stepTime, "delta"),
      ratio: nullableNumberField(stepTime, "ratio"),
    },
    perSample: parsePerSample(json["per_sample"]),
    breakdownPerSample: isObject(json["breakdown_per_sample"]) ? parseBreakdown(json["breakdown_per_sample"]) : null,
    operators: listField(json, "operators", parseCompareOperator),
    kernels: listField(json, "kernels", parseCompareKernel),
    notes: listField(json, "notes", parseNote),
    mfu: {
      base: nullableNumberField(objectOf(json["mfu"]), "base"),
      exp: nullableNumberField(objectOf(json["mfu"]), "exp"),
      ratio: nullableNumberField(objectOf(json["mfu"]), "ratio"),
    },
  };
}

/** What the page asks the compare route: the pair, the grouping, and the batch sizes entered in the page. */
export interface CompareRequest {
  readonly base: SpanRef;
  readonly exp: SpanRef;
  readonly groupBy: CompareGrouping;
  /** Entered in the page (null: the manifest's, if any). */
  readonly baseBatchSize: number | null;
  readonly expBatchSize: number | null;
}

export function compareParams(request: CompareRequest): QueryParams {
  return {
    base_run: request.base.run,
    base_worker: request.base.worker,
    base_span: request.base.span,
    exp_run: request.exp.run,
    exp_worker: request.exp.worker,
    exp_span: request.exp.span,
    group_by: request.groupBy,
    base_batch_size: request.baseBatchSize ?? undefined,
    exp_batch_size: request.expBatchSize ?? undefined,
  };
}

export async function fetchCompare(api: ApiClient, request: CompareRequest, signal?: AbortSignal): Promise<ApiResult<CompareData>> {
  return parsedResult(await api.getJson("compare", compareParams(request), signal), "compare", parseCompare);
}

// --- runs/table ------------------------------------------------------------------------------

export type TableRowStatus = "ready" | "loading" | "error";

export interface RunTableRow extends SpanRef {
  /** Position of the span among its worker's spans (time order). */
  readonly spanIndex: number;
  readonly status: TableRowStatus;
  readonly progress: number | null;
  readonly error: string | null;
  readonly framework: string | null;
  readonly batchSize: number | null;
  readonly tags: Readonly<Record<string, string | number>> | null;
  /** The numbers below are NaN / null / empty unless the span is ready. */
  readonly steps: number;
  readonly meanStepTime: number;
  readonly breakdown: Readonly<Record<string, number>>;
  readonly shares: Readonly<Record<string, number>>;
  readonly hasDevice: boolean;
  readonly devices: readonly string[];
  readonly gpuUtilization: number | null;
  /** Peak allocated bytes per device type ("CPU", "GPU"); null without memory events. */
  readonly peakMemory: Readonly<Record<string, number>> | null;
  /** Batch size × steps per second; null without a batch size. */
  readonly samplesPerSecond: number | null;
  /** Mean model FLOPs utilization over the steps; null when unknown. */
  readonly mfu: number | null;
}

export interface RunTableData {
  readonly rows: readonly RunTableRow[];
}

function parseTags(value: unknown): Record<string, string | number> | null {
  if (!isObject(value)) return null;
  const out: Record<string, string | number> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry === "string" || (typeof entry === "number" && Number.isFinite(entry))) out[key] = entry;
  }
  return Object.keys(out).length > 0 ? out : null;
}

function parseRunTableRow(value: unknown): RunTableRow | null {
  if (!isObject(value) || typeof value["run"] !== "string" || typeof value["worker"] !== "string") return null;
  if (typeof value["span"] !== "string") return null;
  const status = value["status"];
  const peak = value["peak_memory"];
  return {
    run: value["run"],
    worker: value["worker"],
    span: value["span"],
    spanIndex: numberField(value, "span_index"),
    status: status === "loading" || status === "error" ? status : "ready",
    progress: nullableNumberField(value, "progress"),
    error: nullableStringField(value, "error"),
    framework: nullableStringField(value, "framework"),
    batchSize: nullableNumberField(value, "batch_size"),
    tags: parseTags(value["tags"]),
    steps: numberField(value, "steps"),
    meanStepTime: numberField(value, "mean_step_time"),
    breakdown: numberMapField(value, "breakdown"),
    shares: numberMapField(value, "shares"),
    hasDevice: booleanField(value, "has_device"),
    devices: Array.isArray(value["devices"]) ? value["devices"].filter((d): d is string => typeof d === "string") : [],
    gpuUtilization: nullableNumberField(value, "gpu_utilization"),
    peakMemory: isObject(peak) ? numberMapField(value, "peak_memory") : null,
    samplesPerSecond: nullableNumberField(value, "samples_per_second"),
    mfu: nullableNumberField(value, "mfu"),
  };
}

export function parseRunTable(json: unknown): RunTableData {
  if (!isObject(json) || !Array.isArray(json["rows"])) throw new Error("the runs/table answer has no 'rows' list");
  return { rows: listField(json, "rows", parseRunTableRow) };
}

export async function fetchRunTable(api: ApiClient, signal?: AbortSignal): Promise<ApiResult<RunTableData>> {
  return parsedResult(await api.getJson("runs/table", {}, signal), "runs/table", parseRunTable);
}
