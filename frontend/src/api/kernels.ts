// The `kernels` route: device kernels grouped by name, or by (launching operator, name).
// Times in µs, occupancy and shares 0..1. The answer's type is the contract's (schema.ts).
import type { ApiClient } from "./client";
import type { Answer, Schema } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export const KERNEL_GROUPINGS = ["name", "op_and_name"] as const;
export type KernelGrouping = (typeof KERNEL_GROUPINGS)[number];

export function isKernelGrouping(value: string | null): value is KernelGrouping {
  return (KERNEL_GROUPINGS as readonly (string | null)[]).includes(value);
}

export type KernelRow = Schema<"KernelRow">;
export type KernelsData = Answer<"kernels">;

export function fetchKernels(api: ApiClient, ref: SpanRef, groupBy: KernelGrouping, signal?: AbortSignal): Promise<ApiResult<KernelsData>> {
  return api.spanRoute("kernels", ref, { group_by: groupBy }, signal);
}
