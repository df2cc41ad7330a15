// The `datapipeline` route: is the span waiting for data? Per-step data wait against compute,
// a verdict with its evidence, recommendations, and MindSpore's MindData pipeline when the span
// has its files. Times in µs, ratios 0..1. Names (operators, iterators) are untrusted text.
import type { ApiClient } from "./client";
import {
  booleanField,
  isObject,
  listField,
  nullableNumberField,
  nullableStringField,
  numberField,
  objectOf,
  parsedResult,
  stringField,
  type JsonObject,
} from "./json_fields";
import { parseEvidence, parseRecommendation, type EvidenceValue, type Recommendation, type StepSource } from "./overview";
import type { ApiResult, SpanRef } from "./types";

export const VERDICT_STATUSES = ["data_bound", "some_wait", "not_data_bound", "unknown"] as const;
export type VerdictStatus = (typeof VERDICT_STATUSES)[number];

export interface DataPipelineStep {
  readonly name: string;
  readonly start: number;
  readonly dur: number;
  /** Time waiting for data: the overview's DataLoader category of this step. */
  readonly dataWait: number;
  readonly compute: number;
  readonly other: number;
  readonly dataShare: number;
}

export interface DataPipelineSummary {
  readonly steps: number;
  readonly meanStepTime: number;
  readonly meanDataWait: number;
  readonly meanCompute: number;
  readonly meanOther: number;
  readonly totalDataWait: number;
  readonly dataShare: number;
}

export interface LoaderInfo {
  readonly iterators: readonly string[];
  readonly calls: number;
  readonly multiprocess: boolean | null;
  readonly numWorkers: number | null;
  readonly numWorkersSource: string | null;
  readonly pinMemoryThread: boolean;
}

export interface Verdict {
  readonly status: VerdictStatus;
  readonly dataBound: boolean | null;
  /** "trace" (step breakdown), "device_queue" (MindData), or null when nothing could be said. */
  readonly basis: string | null;
  readonly text: string;
  readonly evidence: Readonly<Record<string, EvidenceValue>>;
}

export interface MindDataOperator {
  readonly opId: number;
  readonly opType: string;
  readonly numWorkers: number | null;
  readonly queueSizes: readonly number[];
  readonly queueAverageSize: number | null;
  readonly queueCapacity: number | null;
  /** Mean fill of the output queue / capacity. */
  readonly queueUsage: number | null;
  readonly queueEmptyRate: number | null;
  readonly parentId: number | null;
  readonly childrenIds: readonly number[];
  readonly cpuUtilization: number | null;
  readonly cpuPerWorker: number | null;
}

export interface MindDataQueue {
  readonly source: string;
  readonly batches: number;
  readonly emptyBatches: number;
  readonly fullBatches: number;
  readonly emptyRate: number | null;
  readonly capacity: number | null;
  readonly meanSize: number | null;
  readonly meanPipelineTime: number | null;
  readonly meanPushTime: number | null;
  readonly meanBatchTime: number | null;
}

export interface MindDataGetNext {
  readonly batches: number;
  readonly emptyBatches: number;
  readonly emptyRate: number | null;
  readonly meanWait: number | null;
}

export interface MindDataBottleneck {
  readonly opId: number;
  readonly opType: string;
  readonly rule: string;
  readonly reason: string;
}

export interface MindDataPipeline {
  readonly deviceId: string;
  readonly files: readonly string[];
  readonly operators: readonly MindDataOperator[];
  /** Operator ids in data-flow order: sources first, the operator feeding the device last. */
  readonly chain: readonly number[];
  readonly deviceQueue: MindDataQueue | null;
  readonly getNext: MindDataGetNext | null;
  readonly hostCpuUtilization: number | null;
  readonly bottleneck: MindDataBottleneck | null;
}

export interface DataPipelineData {
  readonly stepSource: StepSource;
  readonly hasDevice: boolean;
  readonly steps: readonly DataPipelineStep[];
  readonly summary: DataPipelineSummary;
  readonly loader: LoaderInfo;
  readonly verdict: Verdict;
  readonly recommendations: readonly Recommendation[];
  readonly minddata: MindDataPipeline | null;
  readonly notes: readonly string[];
}

function nullableBooleanField(object: JsonObject, key: string): boolean | null {
  const value = object[key];
  return typeof value === "boolean" ? value : null;
}

function numberList(value: unknown): number[] {
  return Array.isArray(value) ? value.filter((item): item is number => typeof item === "number" && Number.isFinite(item)) : [];
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function integerOrNull(object: JsonObject, key: string): number | null {
  const value = nullableNumberField(object, key);
  return value !== null && Number.isInteger(value) ? value : null;
}

function parseStep(value: unknown): DataPipelineStep | null {
  if (!isObject(value)) return null;
  return {
    name: stringField(value, "name", "step"),
    start: numberField(value, "start"),
    dur: numberField(value, "dur"),
    dataWait: numberField(value, "data_wait"),
    compute: numberField(value, "compute"),
    other: numberField(value, "other"),
    dataShare: numberField(value, "data_share"),
  };
}

function parseSummary(value: unknown): DataPipelineSummary {
  const object = objectOf(value);
  return {
    steps: numberField(object, "steps"),
    meanStepTime: numberField(object, "mean_step_time"),
    meanDataWait: numberField(object, "mean_data_wait"),
    meanCompute: numberField(object, "mean_compute"),
    meanOther: numberField(object, "mean_other"),
    totalDataWait: numberField(object, "total_data_wait"),
    dataShare: numberField(object, "data_share"),
  };
}

function parseLoader(value: unknown): LoaderInfo {
  const object = objectOf(value);
  return {
    iterators: stringList(object["iterators"]),
    calls: numberField(object, "calls"),
    multiprocess: nullableBooleanField(object, "multiprocess"),
    numWorkers: integerOrNull(object, "num_workers"),
    numWorkersSource: nullableStringField(object, "num_workers_source"),
    pinMemoryThread: booleanField(object, "pin_memory_thread"),
  };
}

function parseStatus(value: unknown): VerdictStatus {
  return (VERDICT_STATUSES as readonly unknown[]).includes(value) ? (value as VerdictStatus) : "unknown";
}

function parseVerdict(value: unknown): Verdict {
  const object = objectOf(value);
  const status = parseStatus(object["status"]);
  return {
    status,
    dataBound: status === "unknown" ? null : status === "data_bound",
    basis: nullableStringField(object, "basis"),
    text: stringField(object, "text"),
    evidence: parseEvidence(object["evidence"]),
  };
}

function parseOperator(value: unknown): MindDataOperator | null {
  if (!isObject(value)) return null;
  const opId = integerOrNull(value, "op_id");
  if (opId === null) return null;
  return {
    opId,
    opType: stringField(value, "op_type", "operator"),
    numWorkers: integerOrNull(value, "num_workers"),
    queueSizes: numberList(value["queue_sizes"]),
    queueAverageSize: nullableNumberField(value, "queue_average_size"),
    queueCapacity: integerOrNull(value, "queue_capacity"),
    queueUsage: nullableNumberField(value, "queue_usage"),
    queueEmptyRate: nullableNumberField(value, "queue_empty_rate"),
    parentId: integerOrNull(value, "parent_id"),
    childrenIds: numberList(value["children_ids"]).filter(Number.isInteger),
    cpuUtilization: nullableNumberField(value, "cpu_utilization"),
    cpuPerWorker: nullableNumberField(value, "cpu_per_worker"),
  };
}

function parseQueue(value: unknown): MindDataQueue | null {
  if (!isObject(value)) return null;
  return {
    source: stringField(value, "source", "device_queue"),
    batches: numberField(value, "batches"),
    emptyBatches: numberField(value, "empty_batches"),
    fullBatches: numberField(value, "full_batches"),
    emptyRate: nullableNumberField(value, "empty_rate"),
    capacity: integerOrNull(value, "capacity"),
    meanSize: nullableNumberField(value, "mean_size"),
    meanPipelineTime: nullableNumberField(value, "mean_pipeline_time"),
    meanPushTime: nullableNumberField(value, "mean_push_time"),
    meanBatchTime: nullableNumberField(value, "mean_batch_time"),
  };
}

function parseGetNext(value: unknown): MindDataGetNext | null {
  if (!isObject(value)) return null;
  return {
    batches: numberField(value, "batches"),
    emptyBatches: numberField(value, "empty_batches"),
    emptyRate: nullableNumberField(value, "empty_rate"),
    meanWait: nullableNumberField(value, "mean_wait"),
  };
}

function parseBottleneck(value: unknown): MindDataBottleneck | null {
  if (!isObject(value)) return null;
  const opId = integerOrNull(value, "op_id");
  if (opId === null) return null;
  return {
    opId,
    opType: stringField(value, "op_type", "operator"),
    rule: stringField(value, "rule"),
    reason: stringField(value, "reason"),
  };
}

function parseMindData(value: unknown): MindDataPipeline | null {
  if (!isObject(value)) return null;
  const operators = listField(value, "operators", parseOperator);
  const known = new Set(operators.map((op) => op.opId));
  return {
    deviceId: stringField(value, "device_id"),
    files: stringList(value["files"]),
    operators,
    chain: numberList(value["chain"]).filter((id) => known.has(id)),
    deviceQueue: parseQueue(value["device_queue"]),
    getNext: parseGetNext(value["get_next"]),
    hostCpuUtilization: nullableNumberField(value, "host_cpu_utilization"),
    bottleneck: parseBottleneck(value["bottleneck"]),
  };
}

function parseStepSource(object: JsonObject): StepSource {
  const value = object["step_source"];
  return value === "user" || value === "span" ? value : "ProfilerStep";
}

/** Validates a `datapipeline` answer; throws when it is not an object at all. */
export function parseDataPipeline(json: unknown): DataPipelineData {
  if (!isObject(json)) throw new Error("the data pipeline answer is not an object");
  return {
    stepSource: parseStepSource(json),
    hasDevice: booleanField(json, "has_device"),
    steps: listField(json, "steps", parseStep),
    summary: parseSummary(json["summary"]),
    loader: parseLoader(json["loader"]),
    verdict: parseVerdict(json["verdict"]),
    recommendations: listField(json, "recommendations", parseRecommendation),
    minddata: parseMindData(json["minddata"]),
    notes: stringList(json["notes"]),
  };
}

/** The operators in data-flow order (the backend's chain, then any it left out). */
export function operatorsInFlowOrder(pipeline: MindDataPipeline): MindDataOperator[] {
  const byId = new Map(pipeline.operators.map((op) => [op.opId, op] as const));
  const ordered = pipeline.chain.flatMap((id) => {
    const op = byId.get(id);
    return op !== undefined ? [op] : [];
  });
  const listed = new Set(ordered.map((op) => op.opId));
  return [...ordered, ...pipeline.operators.filter((op) => !listed.has(op.opId))];
}

export async function fetchDataPipeline(
  api: ApiClient,
  ref: SpanRef,
  signal?: AbortSignal,
): Promise<ApiResult<DataPipelineData>> {
  return parsedResult(await api.spanRoute("datapipeline", ref, {}, signal), "data pipeline", parseDataPipeline);
}
