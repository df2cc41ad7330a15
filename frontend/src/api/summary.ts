// The `summary` route, reduced to what views need to place events: the span's start and
// end (µs, the trace's time base) and the names of its tracks.
import type { ApiClient } from "./client";
import { isObject, listField, numberField, parsedResult, stringField } from "./json_fields";
import type { ApiResult, SpanRef } from "./types";

export interface SpanTrack {
  readonly id: number;
  readonly name: string;
  readonly kind: string;
}

export interface SpanSummary {
  readonly start: number;
  readonly end: number;
  readonly tracks: readonly SpanTrack[];
}

function parseTrack(value: unknown): SpanTrack | null {
  if (!isObject(value)) return null;
  const id = numberField(value, "id");
  return Number.isFinite(id) ? { id, name: stringField(value, "name"), kind: stringField(value, "kind") } : null;
}

export function parseSpanSummary(json: unknown): SpanSummary {
  if (!isObject(json)) throw new Error("the summary answer is not an object");
  return { start: numberField(json, "start"), end: numberField(json, "end"), tracks: listField(json, "tracks", parseTrack) };
}

export async function fetchSpanSummary(api: ApiClient, ref: SpanRef, signal?: AbortSignal): Promise<ApiResult<SpanSummary>> {
  return parsedResult(await api.spanRoute("summary", ref, {}, signal), "summary", parseSpanSummary);
}
