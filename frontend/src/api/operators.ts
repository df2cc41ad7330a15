// The `operators` route (time per framework operator, grouped by name, input shape or call
// stack) and its drill-down `operators/detail`. Times in µs, shares 0..1. The answers' types are
// the contract's (schema.ts).
import type { ApiClient } from "./client";
import type { Answer, Item, Schema } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export const OPERATOR_GROUPINGS = ["name", "input_shape", "stack"] as const;
export type OperatorGrouping = (typeof OPERATOR_GROUPINGS)[number];

export function isOperatorGrouping(value: string | null): value is OperatorGrouping {
  return (OPERATOR_GROUPINGS as readonly (string | null)[]).includes(value);
}

export type OperatorRow = Schema<"OperatorRow">;
export type OperatorsData = Answer<"operators">;
export type OperatorDetail = Answer<"operators/detail">;
export type OperatorStackRow = Item<OperatorDetail["stacks"]>;
export type OperatorOccurrence = Item<OperatorDetail["occurrences"]>;

export function fetchOperators(api: ApiClient, ref: SpanRef, groupBy: OperatorGrouping, signal?: AbortSignal): Promise<ApiResult<OperatorsData>> {
  return api.spanRoute("operators", ref, { group_by: groupBy }, signal);
}

/** Which operator row a drill-down is about: its name, and its input shape when grouped by shape. */
export interface OperatorKey {
  readonly name: string;
  readonly inputShape: string | null;
}

export function fetchOperatorDetail(api: ApiClient, ref: SpanRef, key: OperatorKey, signal?: AbortSignal): Promise<ApiResult<OperatorDetail>> {
  const params = key.inputShape !== null ? { name: key.name, input_shape: key.inputShape } : { name: key.name };
  return api.spanRoute("operators/detail", ref, params, signal);
}
