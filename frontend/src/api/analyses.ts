// The Analyses page's routes (`analyses/idle`, `analyses/launches`, `analyses/queues`, `analyses/sequences`,
// `analyses/annotations`): each over the overview's steps, each with `available` and, when false, the reason.
// Times in µs, shares 0..1.
import type { ApiClient, QueryParams } from "./client";
import {
  isObject,
  listField,
  nullableNumberField,
  numberField,
  parsedResult,
  stringField,
  type JsonObject,
} from "./json_fields";
import type { ApiResult, SpanRef } from "./types";

/** What every analysis answer says first: whether there is anything to show, and why not. */
export interface Availability {
  readonly available: boolean;
  readonly reason: string | null;
  readonly steps: number;
}

function availability(json: JsonObject): Availability {
  const reason = json["reason"];
  return {
    available: json["available"] === true,
    reason: typeof reason === "string" ? reason : null,
    steps: numberField(json, "steps"),
  };
}

function objectOrThrow(json: unknown, route: string): JsonObject {
  if (!isObject(json) || typeof json["available"] !== "boolean") throw new Error(`the ${route} answer has no 'available' flag`);
  return json;
}

// --- idle time ------------------------------------------------------------------------------------

export interface IdleStream {
  readonly stream: string;
  /** The stream's slice track in the trace viewer ("s3"). */
  readonly track: string;
  readonly busy: number;
  readonly idle: number;
  readonly hostWait: number;
  readonly kernelWait: number;
  readonly other: number;
  readonly noWork: number;
  readonly idleShare: number;
  readonly gaps: number;
}

export interface IdleGap {
  readonly stream: string;
  readonly start: number;
  readonly end: number;
  readonly dur: number;
  readonly category: string;
  readonly before: string;
  readonly beforeId: number;
  readonly after: string;
  readonly afterId: number;
}

export interface IdleTimeData extends Availability {
  readonly stepTime: number;
  readonly kernelWaitUs: number;
  readonly deviceKind: string;
  readonly streams: readonly IdleStream[];
  readonly longestGaps: readonly IdleGap[];
}

function parseIdleStream(value: unknown): IdleStream | null {
  if (!isObject(value) || typeof value["stream"] !== "string") return null;
  return {
    stream: value["stream"],
    track: stringField(value, "track"),
    busy: numberField(value, "busy"),
    idle: numberField(value, "idle"),
    hostWait: numberField(value, "host_wait"),
    kernelWait: numberField(value, "kernel_wait"),
    other: numberField(value, "other"),
    noWork: numberField(value, "no_work"),
    idleShare: numberField(value, "idle_share"),
    gaps: numberField(value, "gaps"),
  };
}

function parseIdleGap(value: unknown): IdleGap | null {
  if (!isObject(value) || typeof value["stream"] !== "string") return null;
  return {
    stream: value["stream"],
    start: numberField(value, "start"),
    end: numberField(value, "end"),
    dur: numberField(value, "dur"),
    category: stringField(value, "category"),
    before: stringField(value, "before"),
    beforeId: numberField(value, "before_id"),
    after: stringField(value, "after"),
    afterId: numberField(value, "after_id"),
  };
}

export function parseIdleTime(json: unknown): IdleTimeData {
  const object = objectOrThrow(json, "idle time");
  return {
    ...availability(object),
    stepTime: numberField(object, "step_time"),
    kernelWaitUs: numberField(object, "kernel_wait_us"),
    deviceKind: stringField(object, "device_kind", "GPU"),
    streams: listField(object, "streams", parseIdleStream),
    longestGaps: listField(object, "longest_gaps", parseIdleGap),
  };
}

// --- launches -------------------------------------------------------------------------------------

export interface LaunchStats {
  readonly total: number;
  readonly mean: number | null;
  readonly median: number | null;
  readonly p95: number | null;
  readonly max: number | null;
}

export interface LaunchGroup {
  readonly name: string;
  readonly calls: number;
  readonly activities: number;
  readonly short: number;
  readonly cpuTotal: number;
  readonly cpuMean: number;
  readonly cpuMax: number;
  readonly delayMean: number;
  readonly delayMax: number;
  readonly deviceTotal: number;
  readonly deviceMean: number;
}

export interface Launch {
  readonly name: string;
  readonly id: number;
  readonly start: number;
  readonly cpu: number;
  readonly delay: number;
  readonly device: number;
  readonly activities: number;
  readonly kernel: string;
  readonly kernelId: number;
}

export interface LaunchesData extends Availability {
  readonly launches: number;
  readonly deviceActivities: number;
  readonly graphLaunches: number;
  readonly short: number;
  readonly shortShare: number;
  readonly runtimeOutliers: number;
  readonly delayOutliers: number;
  readonly runtimeCutoffUs: number;
  readonly launchDelayCutoffUs: number;
  readonly cpu: LaunchStats;
  readonly delay: LaunchStats;
  readonly device: LaunchStats;
  readonly histogramEdgesUs: readonly number[];
  readonly histograms: { readonly cpu: readonly number[]; readonly delay: readonly number[]; readonly device: readonly number[] };
  readonly byCall: readonly LaunchGroup[];
  readonly shortKernels: readonly LaunchGroup[];
  readonly longestCalls: readonly Launch[];
  readonly longestDelays: readonly Launch[];
}

function parseStats(value: unknown): LaunchStats {
  const object = isObject(value) ? value : {};
  return {
    total: numberField(object, "total"),
    mean: nullableNumberField(object, "mean"),
    median: nullableNumberField(object, "median"),
    p95: nullableNumberField(object, "p95"),
    max: nullableNumberField(object, "max"),
  };
}

function parseLaunchGroup(value: unknown): LaunchGroup | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  return {
    name: value["name"],
    calls: numberField(value, "calls"),
    activities: numberField(value, "activities"),
    short: numberField(value, "short"),
    cpuTotal: numberField(value, "cpu_total"),
    cpuMean: numberField(value, "cpu_mean"),
    cpuMax: numberField(value, "cpu_max"),
    delayMean: numberField(value, "delay_mean"),
    delayMax: numberField(value, "delay_max"),
    deviceTotal: numberField(value, "device_total"),
    deviceMean: numberField(value, "device_mean"),
  };
}

function parseLaunch(value: unknown): Launch | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  return {
    name: value["name"],
    id: numberField(value, "id"),
    start: numberField(value, "start"),
    cpu: numberField(value, "cpu"),
    delay: numberField(value, "delay"),
    device: numberField(value, "device"),
    activities: numberField(value, "activities"),
    kernel: stringField(value, "kernel"),
    kernelId: numberField(value, "kernel_id"),
  };
}

function numbers(value: unknown): number[] {
  return Array.isArray(value) ? value.filter((v): v is number => typeof v === "number") : [];
}

export function parseLaunches(json: unknown): LaunchesData {
  const object = objectOrThrow(json, "launches");
  const histograms = isObject(object["histograms"]) ? object["histograms"] : {};
  return {
    ...availability(object),
    launches: numberField(object, "launches"),
    deviceActivities: numberField(object, "device_activities"),
    graphLaunches: numberField(object, "graph_launches"),
    short: numberField(object, "short"),
    shortShare: numberField(object, "short_share"),
    runtimeOutliers: numberField(object, "runtime_outliers"),
    delayOutliers: numberField(object, "delay_outliers"),
    runtimeCutoffUs: numberField(object, "runtime_cutoff_us"),
    launchDelayCutoffUs: numberField(object, "launch_delay_cutoff_us"),
    cpu: parseStats(object["cpu"]),
    delay: parseStats(object["delay"]),
    device: parseStats(object["device"]),
    histogramEdgesUs: numbers(object["histogram_edges_us"]),
    histograms: { cpu: numbers(histograms["cpu"]), delay: numbers(histograms["delay"]), device: numbers(histograms["device"]) },
    byCall: listField(object, "by_call", parseLaunchGroup),
    shortKernels: listField(object, "short_kernels", parseLaunchGroup),
    longestCalls: listField(object, "longest_calls", parseLaunch),
    longestDelays: listField(object, "longest_delays", parseLaunch),
  };
}

// --- queue length ---------------------------------------------------------------------------------

export interface QueueStream {
  readonly stream: string;
  readonly track: string;
  /** The trace viewer's counter track of the stream's queue ("c:queue:3"). */
  readonly counter: string;
  readonly max: number;
  readonly mean: number;
  readonly empty: number;
  readonly emptyShare: number;
  readonly changes: number;
}

export interface QueueLengthData extends Availability {
  readonly stepTime: number;
  readonly deviceKind: string;
  readonly streams: readonly QueueStream[];
}

function parseQueueStream(value: unknown): QueueStream | null {
  if (!isObject(value) || typeof value["stream"] !== "string") return null;
  return {
    stream: value["stream"],
    track: stringField(value, "track"),
    counter: stringField(value, "counter"),
    max: numberField(value, "max"),
    mean: numberField(value, "mean"),
    empty: numberField(value, "empty"),
    emptyShare: numberField(value, "empty_share"),
    changes: numberField(value, "changes"),
  };
}

export function parseQueueLength(json: unknown): QueueLengthData {
  const object = objectOrThrow(json, "queue length");
  return {
    ...availability(object),
    stepTime: numberField(object, "step_time"),
    deviceKind: stringField(object, "device_kind", "GPU"),
    streams: listField(object, "streams", parseQueueStream),
  };
}

// --- kernel sequences -----------------------------------------------------------------------------

export interface KernelSequence {
  readonly operator: string;
  readonly kernels: readonly string[];
  readonly length: number;
  readonly count: number;
  readonly deviceTotal: number;
  readonly deviceMean: number;
  readonly cpuTotal: number;
  readonly deviceShare: number;
  readonly exampleId: number;
  readonly exampleStart: number;
  readonly exampleEnd: number;
}

export interface KernelSequencesData extends Availability {
  readonly operator: string;
  readonly minLength: number;
  readonly sequences: readonly KernelSequence[];
}

function parseSequence(value: unknown): KernelSequence | null {
  if (!isObject(value) || typeof value["operator"] !== "string" || !Array.isArray(value["kernels"])) return null;
  return {
    operator: value["operator"],
    kernels: value["kernels"].filter((k): k is string => typeof k === "string"),
    length: numberField(value, "length"),
    count: numberField(value, "count"),
    deviceTotal: numberField(value, "device_total"),
    deviceMean: numberField(value, "device_mean"),
    cpuTotal: numberField(value, "cpu_total"),
    deviceShare: numberField(value, "device_share"),
    exampleId: numberField(value, "example_id"),
    exampleStart: numberField(value, "example_start"),
    exampleEnd: numberField(value, "example_end"),
  };
}

export function parseKernelSequences(json: unknown): KernelSequencesData {
  const object = objectOrThrow(json, "kernel sequences");
  return {
    ...availability(object),
    operator: stringField(object, "operator"),
    minLength: numberField(object, "min_length"),
    sequences: listField(object, "sequences", parseSequence),
  };
}

// --- annotations ----------------------------------------------------------------------------------

export interface AnnotationRow {
  readonly name: string;
  readonly calls: number;
  readonly hostTotal: number;
  readonly hostMean: number | null;
  readonly hostMax: number | null;
  readonly deviceCalls: number;
  readonly deviceTotal: number | null;
  readonly deviceWork: number | null;
  readonly exampleId: number;
  readonly exampleStart: number;
  readonly exampleEnd: number;
}

export interface AnnotationsData extends Availability {
  readonly hasDeviceCopies: boolean;
  readonly hasDevice: boolean;
  readonly rows: readonly AnnotationRow[];
}

function parseAnnotation(value: unknown): AnnotationRow | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  return {
    name: value["name"],
    calls: numberField(value, "calls"),
    hostTotal: numberField(value, "host_total"),
    hostMean: nullableNumberField(value, "host_mean"),
    hostMax: nullableNumberField(value, "host_max"),
    deviceCalls: numberField(value, "device_calls"),
    deviceTotal: nullableNumberField(value, "device_total"),
    deviceWork: nullableNumberField(value, "device_work"),
    exampleId: numberField(value, "example_id"),
    exampleStart: numberField(value, "example_start"),
    exampleEnd: numberField(value, "example_end"),
  };
}

export function parseAnnotations(json: unknown): AnnotationsData {
  const object = objectOrThrow(json, "annotations");
  return {
    ...availability(object),
    hasDeviceCopies: object["has_device_copies"] === true,
    hasDevice: object["has_device"] === true,
    rows: listField(object, "rows", parseAnnotation),
  };
}

// --- fetching -------------------------------------------------------------------------------------

export const ANALYSIS_ROUTES = {
  idle: "analyses/idle",
  launches: "analyses/launches",
  queues: "analyses/queues",
  sequences: "analyses/sequences",
  annotations: "analyses/annotations",
} as const;

export async function fetchAnalysis<T>(
  api: ApiClient,
  route: string,
  ref: SpanRef,
  parse: (json: unknown) => T,
  signal?: AbortSignal,
  params: QueryParams = {},
): Promise<ApiResult<T>> {
  return parsedResult(await api.spanRoute(route, ref, params, signal), route, parse);
}
