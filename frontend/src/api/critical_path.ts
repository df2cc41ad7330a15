// `critical_path`: the chain of host operators, launches, device work and syncs that decides one
// step's length, with its breakdown by kind (µs in the trace's time base throughout).
import type { ApiClient } from "./client";
import { isObject, listField, numberField, objectOf, parsedResult, stringField } from "./json_fields";
import type { ApiResult, SpanRef } from "./types";

/** The kinds of the breakdown, in the backend's order. */
export const PATH_KINDS = ["cpu_op", "launch", "kernel", "copy", "sync", "idle"] as const;
export type PathKind = (typeof PATH_KINDS)[number];

export interface PathStep {
  readonly name: string;
  /** Start of the step's host range and end of the step (trace µs). */
  readonly start: number;
  readonly end: number;
}

export interface PathEntry {
  /** The slice's id (as in trace/slices); null for time on no slice. */
  readonly id: number | null;
  readonly name: string | null;
  readonly track: string | null;
  readonly depth: number;
  readonly kind: string;
  /** The dependency the entry's time lies on (duration, launch, stream, sync, …). */
  readonly edge: string;
  readonly start: number;
  readonly end: number;
  readonly time: number;
}

export interface CriticalPathData {
  readonly index: number;
  readonly step: PathStep;
  readonly steps: readonly PathStep[];
  /** µs: the step's span, from its first CPU event to its last device work. */
  readonly length: number;
  readonly breakdown: readonly { readonly kind: string; readonly time: number; readonly share: number }[];
  readonly path: readonly PathEntry[];
  /** Every slice the path enters or leaves. */
  readonly ids: readonly number[];
}

function parseStep(value: unknown): PathStep | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  return { name: value["name"], start: numberField(value, "start"), end: numberField(value, "end") };
}

function parseEntry(value: unknown): PathEntry | null {
  if (!isObject(value)) return null;
  const id = value["id"];
  const name = value["name"];
  const track = value["track"];
  return {
    id: typeof id === "number" ? id : null,
    name: typeof name === "string" ? name : null,
    track: typeof track === "string" ? track : null,
    depth: typeof value["depth"] === "number" ? value["depth"] : 0,
    kind: stringField(value, "kind", "idle"),
    edge: stringField(value, "edge"),
    start: numberField(value, "start"),
    end: numberField(value, "end"),
    time: numberField(value, "time"),
  };
}

export function parseCriticalPath(json: unknown): CriticalPathData {
  if (!isObject(json) || !Array.isArray(json["path"])) throw new Error("the critical_path answer has no 'path'");
  const step = objectOf(json["step"]);
  const ids = Array.isArray(json["ids"]) ? json["ids"].filter((id): id is number => typeof id === "number") : [];
  return {
    index: numberField(step, "index"),
    step: parseStep(step) ?? { name: "", start: 0, end: 0 },
    steps: listField(json, "steps", parseStep),
    length: numberField(json, "length"),
    breakdown: listField(json, "breakdown", (value) =>
      isObject(value) ? { kind: stringField(value, "kind"), time: numberField(value, "time"), share: numberField(value, "share") } : null,
    ),
    path: listField(json, "path", parseEntry),
    ids,
  };
}

/** The critical path of step `step` (an index into the overview's steps; null: the first). */
export function fetchCriticalPath(api: ApiClient, ref: SpanRef, step: number | null, signal?: AbortSignal): Promise<ApiResult<CriticalPathData>> {
  const params = step === null ? {} : { step };
  return api.spanRoute("critical_path", ref, params, signal).then((result) => parsedResult(result, "critical_path", parseCriticalPath));
}
