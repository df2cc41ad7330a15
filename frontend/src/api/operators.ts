// The `operators` route (time per framework operator, grouped by name, input shape or call
// stack) and its drill-down `operators/detail`. Times in µs, shares 0..1.
import type { ApiClient } from "./client";
import {
  booleanField,
  isObject,
  listField,
  nullableStringField,
  numberField,
  numberMapField,
  parsedResult,
  stringField,
} from "./json_fields";
import { parseKernelRow, type KernelRow } from "./kernels";
import { hasEfficiency, parseEfficiency, type Efficiency } from "../lib/efficiency";
import type { ApiResult, SpanRef } from "./types";

export const OPERATOR_GROUPINGS = ["name", "input_shape", "stack"] as const;
export type OperatorGrouping = (typeof OPERATOR_GROUPINGS)[number];

export function isOperatorGrouping(value: string | null): value is OperatorGrouping {
  return (OPERATOR_GROUPINGS as readonly (string | null)[]).includes(value);
}

export interface OperatorRow {
  readonly name: string;
  readonly calls: number;
  readonly hostSelf: number;
  readonly hostTotal: number;
  readonly deviceSelf: number;
  readonly deviceTotal: number;
  /** The operator is one that can run on Tensor Cores (convolutions, matmuls, ...). */
  readonly tcEligible: boolean;
  /** Share of the device self / total time spent in Tensor Core kernels. */
  readonly tcSelfShare: number;
  readonly tcTotalShare: number;
  /** JSON text of the input shapes (group_by=input_shape). */
  readonly inputShape: string | null;
  /** Call stack frames joined by "\n" (group_by=stack). */
  readonly stack: string | null;
  /** GFLOP, TFLOP/s, roofline share... of the row's counted calls (group_by=name or input_shape). */
  readonly efficiency: Efficiency;
}

export interface OperatorsData {
  readonly groupBy: OperatorGrouping;
  readonly rows: readonly OperatorRow[];
  readonly totals: Readonly<Record<string, number>>;
  /** The span has device activity (any operator launched GPU work). */
  readonly hasDevice: boolean;
  /** The rows carry the efficiency columns. */
  readonly efficiency: boolean;
}

export function parseOperatorRow(value: unknown): OperatorRow | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  return {
    name: value["name"],
    calls: numberField(value, "calls"),
    hostSelf: numberField(value, "host_self"),
    hostTotal: numberField(value, "host_total"),
    deviceSelf: numberField(value, "device_self"),
    deviceTotal: numberField(value, "device_total"),
    tcEligible: booleanField(value, "tc_eligible"),
    tcSelfShare: numberField(value, "tc_self_share"),
    tcTotalShare: numberField(value, "tc_total_share"),
    inputShape: nullableStringField(value, "input_shape"),
    stack: nullableStringField(value, "stack"),
    efficiency: parseEfficiency(value),
  };
}

export function parseOperators(json: unknown): OperatorsData {
  if (!isObject(json) || !Array.isArray(json["rows"])) throw new Error("the operators answer has no 'rows' list");
  const groupBy = stringField(json, "group_by", "name");
  const rows = listField(json, "rows", parseOperatorRow);
  const declared = json["has_device"];
  return {
    groupBy: isOperatorGrouping(groupBy) ? groupBy : "name",
    rows,
    totals: numberMapField(json, "totals"),
    hasDevice: typeof declared === "boolean" ? declared : rows.some((row) => row.deviceTotal > 0),
    efficiency: hasEfficiency(json),
  };
}

export interface OperatorStackRow {
  readonly stack: string;
  readonly calls: number;
  readonly hostSelf: number;
  readonly hostTotal: number;
  readonly deviceSelf: number;
  readonly deviceTotal: number;
}

export interface OperatorOccurrence {
  /** µs, in the trace's time base (the one `summary` and the trace view use). */
  readonly start: number;
  readonly dur: number;
  readonly track: number;
  readonly eventId: number;
}

export interface OperatorDetail {
  readonly name: string;
  readonly stacks: readonly OperatorStackRow[];
  readonly kernels: readonly KernelRow[];
  /** The first occurrences in time order (the backend caps the list). */
  readonly occurrences: readonly OperatorOccurrence[];
}

function parseStackRow(value: unknown): OperatorStackRow | null {
  if (!isObject(value)) return null;
  return {
    stack: stringField(value, "stack"),
    calls: numberField(value, "calls"),
    hostSelf: numberField(value, "host_self"),
    hostTotal: numberField(value, "host_total"),
    deviceSelf: numberField(value, "device_self"),
    deviceTotal: numberField(value, "device_total"),
  };
}

function parseOccurrence(value: unknown): OperatorOccurrence | null {
  if (!isObject(value)) return null;
  const occurrence = {
    start: numberField(value, "start"),
    dur: numberField(value, "dur"),
    track: numberField(value, "track"),
    eventId: numberField(value, "event_id"),
  };
  return Number.isFinite(occurrence.start) && Number.isFinite(occurrence.dur) ? occurrence : null;
}

export function parseOperatorDetail(json: unknown): OperatorDetail {
  if (!isObject(json)) throw new Error("the operator detail answer is not an object");
  return {
    name: stringField(json, "name"),
    stacks: listField(json, "stacks", parseStackRow),
    kernels: listField(json, "kernels", parseKernelRow),
    occurrences: listField(json, "occurrences", parseOccurrence),
  };
}

export async function fetchOperators(
  api: ApiClient,
  ref: SpanRef,
  groupBy: OperatorGrouping,
  signal?: AbortSignal,
): Promise<ApiResult<OperatorsData>> {
  return parsedResult(await api.spanRoute("operators", ref, { group_by: groupBy }, signal), "operators", parseOperators);
}

/** Which operator row a drill-down is about: its name, and its input shape when grouped by shape. */
export interface OperatorKey {
  readonly name: string;
  readonly inputShape: string | null;
}

export async function fetchOperatorDetail(
  api: ApiClient,
  ref: SpanRef,
  key: OperatorKey,
  signal?: AbortSignal,
): Promise<ApiResult<OperatorDetail>> {
  const params = key.inputShape !== null ? { name: key.name, input_shape: key.inputShape } : { name: key.name };
  return parsedResult(
    await api.spanRoute("operators/detail", ref, params, signal),
    "operators/detail",
    parseOperatorDetail,
  );
}
