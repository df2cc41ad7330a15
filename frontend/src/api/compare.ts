// The `compare` route (two spans side by side) and `runs/table` (every span with its headline
// numbers). Times in µs, ratios and shares 0..1, sizes in bytes. delta = experiment − baseline,
// ratio = experiment / baseline; impact = a row's time per step in the experiment minus in
// the baseline (see the API description), so negative means the experiment is faster.
// The answers' types are the contract's (schema.ts).
import type { ApiClient, QueryParams } from "./client";
import type { BreakdownCategory } from "./overview";
import type { Answer, Item, Schema } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export const COMPARE_GROUPINGS = ["name", "input_shape"] as const;
export type CompareGrouping = (typeof COMPARE_GROUPINGS)[number];

export function isCompareGrouping(value: string | null): value is CompareGrouping {
  return (COMPARE_GROUPINGS as readonly (string | null)[]).includes(value);
}

export type CompareData = Answer<"compare">;
export type CompareSideInfo = Schema<"CompareSide">;
export type CompareOperatorRow = Schema<"CompareOperatorRow">;
export type CompareKernelRow = Schema<"CompareKernelRow">;
export type CompareNote = Item<CompareData["notes"]>;
/** Which sides have a joined row. */
export type RowSide = CompareOperatorRow["side"];

/** A pair of numbers with their difference and ratio (null when the baseline is 0). */
export interface Paired {
  readonly base: number;
  readonly exp: number;
  readonly delta: number;
  readonly ratio: number | null;
}

/** A breakdown table of the answer (`breakdown`, `breakdown_per_sample`): base, exp, delta and ratio by category. */
export interface BreakdownTable {
  readonly base: Readonly<Record<string, number>>;
  readonly exp: Readonly<Record<string, number>>;
  readonly delta: Readonly<Record<string, number>>;
  readonly ratio: Readonly<Record<string, number | null>>;
}

/** One category of a breakdown table as a pair (a category a side lacks is NaN there: never drawn). */
export function pairedCategory(table: BreakdownTable, category: BreakdownCategory): Paired {
  return {
    base: table.base[category] ?? Number.NaN,
    exp: table.exp[category] ?? Number.NaN,
    delta: table.delta[category] ?? Number.NaN,
    ratio: table.ratio[category] ?? null,
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

export function fetchCompare(api: ApiClient, request: CompareRequest, signal?: AbortSignal): Promise<ApiResult<CompareData>> {
  return api.getJson("compare", compareParams(request), signal);
}

// --- runs/table ------------------------------------------------------------------------------

export type RunTableData = Answer<"runs/table">;
/** A span's row; its numbers are there only once the span is ready. */
export type RunTableRow = Schema<"RunTableRow">;
export type TableRowStatus = RunTableRow["status"];

export function fetchRunTable(api: ApiClient, signal?: AbortSignal): Promise<ApiResult<RunTableData>> {
  return api.getJson("runs/table", {}, signal);
}
