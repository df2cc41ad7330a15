// `trace/range`: what lies in a time range of the trace viewer (an area selection): slices by
// track kind and name with their time and self time inside the range, the range split by the
// overview's categories, and the overview's breakdown of the steps inside it. µs throughout.
import type { ApiClient, QueryParams } from "./client";
import {
  isObject,
  listField,
  nullableNumberField,
  numberField,
  numberMapField,
  objectOf,
  parsedResult,
  stringField,
} from "./json_fields";
import type { ApiResult, SpanRef } from "./types";

export interface RangeRow {
  readonly kind: string;
  readonly name: string;
  readonly count: number;
  /** µs inside the range (each slice clipped to it). */
  readonly total: number;
  /** µs inside the range minus the direct children's. */
  readonly self: number;
}

export interface RangeKind {
  readonly kind: string;
  readonly slices: number;
  readonly names: number;
  readonly total: number;
  readonly self: number;
}

export interface RangeSteps {
  readonly count: number;
  readonly partial: number;
  readonly names: readonly string[];
  /** Mean µs per step by category over the steps inside; null without any. */
  readonly breakdown: Readonly<Record<string, number>> | null;
  readonly meanStepTime: number | null;
}

export interface RangeSummary {
  /** Trace µs. */
  readonly start: number;
  readonly end: number;
  readonly duration: number;
  /** The tracks asked about; null: every slice track. */
  readonly tracks: readonly string[] | null;
  readonly slices: number;
  readonly kinds: readonly RangeKind[];
  readonly rows: readonly RangeRow[];
  /** Names left out of `rows` (the largest come first). */
  readonly truncated: number;
  /** µs of the range in each overview category. */
  readonly breakdown: Readonly<Record<string, number>>;
  readonly steps: RangeSteps;
}

function parseRow(value: unknown): RangeRow | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  return {
    kind: stringField(value, "kind", "other"),
    name: value["name"],
    count: numberField(value, "count"),
    total: numberField(value, "total"),
    self: numberField(value, "self"),
  };
}

function parseKind(value: unknown): RangeKind | null {
  if (!isObject(value)) return null;
  return {
    kind: stringField(value, "kind", "other"),
    slices: numberField(value, "slices"),
    names: numberField(value, "names"),
    total: numberField(value, "total"),
    self: numberField(value, "self"),
  };
}

export function parseRangeSummary(json: unknown): RangeSummary {
  if (!isObject(json) || !Array.isArray(json["rows"])) throw new Error("the trace/range answer has no 'rows'");
  const steps = objectOf(json["steps"]);
  const tracks = json["tracks"];
  return {
    start: numberField(json, "start"),
    end: numberField(json, "end"),
    duration: numberField(json, "duration"),
    tracks: Array.isArray(tracks) ? tracks.filter((id): id is string => typeof id === "string") : null,
    slices: numberField(json, "slices"),
    kinds: listField(json, "kinds", parseKind),
    rows: listField(json, "rows", parseRow),
    truncated: numberField(json, "truncated"),
    breakdown: numberMapField(json, "breakdown"),
    steps: {
      count: numberField(steps, "count"),
      partial: numberField(steps, "partial"),
      names: Array.isArray(steps["names"]) ? steps["names"].filter((name): name is string => typeof name === "string") : [],
      breakdown: isObject(steps["breakdown"]) ? numberMapField(steps, "breakdown") : null,
      meanStepTime: nullableNumberField(steps, "mean_step_time"),
    },
  };
}

/** The route's parameters: the span, the range (trace µs) and the tracks (none: every slice track). */
export function rangeParams(ref: SpanRef, start: number, end: number, tracks: readonly string[] | null): QueryParams {
  return {
    run: ref.run,
    worker: ref.worker,
    span: ref.span,
    start: String(Number(start.toFixed(3))),
    end: String(Number(end.toFixed(3))),
    tracks: tracks !== null && tracks.length > 0 ? tracks.join(",") : undefined,
  };
}

export async function fetchRangeSummary(
  api: ApiClient,
  params: QueryParams,
  signal?: AbortSignal,
): Promise<ApiResult<RangeSummary>> {
  return parsedResult(await api.getJson("trace/range", params, signal), "trace/range", parseRangeSummary);
}
