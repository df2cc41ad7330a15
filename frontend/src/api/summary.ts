// The `summary` route, reduced to what views need to place events: the span's start and
// end (µs, the trace's time base) and the names of its tracks; and what the shell shows about
// the span: which profiler wrote it and what could not be derived from it.
import type { ApiClient } from "./client";
import { isObject, listField, numberField, parsedResult, stringField } from "./json_fields";
import type { ApiResult, SpanRef } from "./types";

export interface SpanTrack {
  readonly id: number;
  readonly name: string;
  readonly kind: string;
}

/** One thing the trace does not allow the views to show, and why (text from the backend). */
export interface SpanLimitation {
  /** Stable key such as "no_steps" or "unknown_categories". */
  readonly id: string;
  /** One sentence for the reader; may quote trace strings: render as text. */
  readonly text: string;
}

export interface SpanSummary {
  readonly start: number;
  readonly end: number;
  readonly tracks: readonly SpanTrack[];
  /** "pytorch", "deeplink", "paddle", "mindspore", "generic"...; absent when the answer does not say. */
  readonly framework?: string;
  /** What could not be derived from the trace; absent when the answer does not say. */
  readonly limitations?: readonly SpanLimitation[];
}

function parseTrack(value: unknown): SpanTrack | null {
  if (!isObject(value)) return null;
  const id = numberField(value, "id");
  return Number.isFinite(id) ? { id, name: stringField(value, "name"), kind: stringField(value, "kind") } : null;
}

function parseLimitation(value: unknown): SpanLimitation | null {
  if (!isObject(value)) return null;
  const text = stringField(value, "text");
  return text === "" ? null : { id: stringField(value, "id"), text };
}

export function parseSpanSummary(json: unknown): SpanSummary {
  if (!isObject(json)) throw new Error("the summary answer is not an object");
  return {
    start: numberField(json, "start"),
    end: numberField(json, "end"),
    tracks: listField(json, "tracks", parseTrack),
    ...(typeof json["framework"] === "string" ? { framework: json["framework"] } : {}),
    ...(Array.isArray(json["limitations"]) ? { limitations: listField(json, "limitations", parseLimitation) } : {}),
  };
}

export async function fetchSpanSummary(api: ApiClient, ref: SpanRef, signal?: AbortSignal): Promise<ApiResult<SpanSummary>> {
  return parsedResult(await api.spanRoute("summary", ref, {}, signal), "summary", parseSpanSummary);
}
