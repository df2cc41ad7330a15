// The `kernels` route: device kernels grouped by name, or by (launching operator, name).
// Times in µs, occupancy and shares 0..1.
import type { ApiClient } from "./client";
import {
  booleanField,
  isObject,
  nullableNumberField,
  nullableStringField,
  numberField,
  listField,
  parsedResult,
  stringField,
} from "./json_fields";
import type { ApiResult, SpanRef } from "./types";
import { hasEfficiency, parseEfficiency, type Efficiency } from "../lib/efficiency";

export const KERNEL_GROUPINGS = ["name", "op_and_name"] as const;
export type KernelGrouping = (typeof KERNEL_GROUPINGS)[number];

export function isKernelGrouping(value: string | null): value is KernelGrouping {
  return (KERNEL_GROUPINGS as readonly (string | null)[]).includes(value);
}

export interface KernelRow {
  readonly name: string;
  /** The launching operator (group_by=op_and_name). */
  readonly op: string | null;
  readonly calls: number;
  readonly total: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  /** Duration-weighted mean blocks per SM, when the trace records it. */
  readonly blocksPerSm: number | null;
  /** Duration-weighted mean of the profiler's estimate, 0..1. */
  readonly achievedOccupancy: number | null;
  readonly tensorCores: boolean;
  /** The FLOPs and bytes of the calls that launched these kernels, shared among their kernels by device time. */
  readonly efficiency: Efficiency;
}

export interface KernelsData {
  readonly groupBy: KernelGrouping;
  readonly rows: readonly KernelRow[];
  /** What the kernels ran on: "GPU", an accelerator family ("Ascend", "MTIA"), or "device". */
  readonly deviceKind: string;
  /** Whether kernel names can tell Tensor Core use (NVIDIA GPUs); when not, no Tensor Core figure is shown. */
  readonly tensorCoresKnown: boolean;
  /** Tensor Core kernel time / all kernel time; null when it cannot be told. */
  readonly tensorCoreShare: number | null;
  /** All kernel time, µs. */
  readonly total: number;
  /** Kernel time cut to the steps (the window of the Overview's device figures), µs; null without steps. */
  readonly inStepsTotal: number | null;
  /** The rows carry the efficiency columns. */
  readonly efficiency: boolean;
}

export function parseKernelRow(value: unknown): KernelRow | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  return {
    name: value["name"],
    op: nullableStringField(value, "op"),
    calls: numberField(value, "calls"),
    total: numberField(value, "total"),
    mean: numberField(value, "mean"),
    min: numberField(value, "min"),
    max: numberField(value, "max"),
    blocksPerSm: nullableNumberField(value, "blocks_per_sm"),
    achievedOccupancy: nullableNumberField(value, "achieved_occupancy"),
    tensorCores: booleanField(value, "tensor_cores"),
    efficiency: parseEfficiency(value),
  };
}

export function parseKernels(json: unknown): KernelsData {
  if (!isObject(json) || !Array.isArray(json["rows"])) throw new Error("the kernels answer has no 'rows' list");
  const groupBy = stringField(json, "group_by", "name");
  const rows = listField(json, "rows", parseKernelRow);
  const total = numberField(json, "total");
  return {
    groupBy: isKernelGrouping(groupBy) ? groupBy : "name",
    rows,
    deviceKind: stringField(json, "device_kind", "GPU"),
    // Older answers have no flag: they always gave a share.
    tensorCoresKnown: json["tensor_cores_known"] === undefined ? true : booleanField(json, "tensor_cores_known"),
    tensorCoreShare: nullableNumberField(json, "tensor_core_share"),
    total: Number.isFinite(total) ? total : rows.reduce((sum, row) => sum + (Number.isFinite(row.total) ? row.total : 0), 0),
    inStepsTotal: isObject(json["in_steps"]) ? nullableNumberField(json["in_steps"], "total") : null,
    efficiency: hasEfficiency(json),
  };
}

export async function fetchKernels(
  api: ApiClient,
  ref: SpanRef,
  groupBy: KernelGrouping,
  signal?: AbortSignal,
): Promise<ApiResult<KernelsData>> {
  return parsedResult(await api.spanRoute("kernels", ref, { group_by: groupBy }, signal), "kernels", parseKernels);
}
