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
  /** The step's own range (ProfilerStep#N) as a slice id; null for a span without steps. */
  readonly stepId: number | null;
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

/** The route's path columns as one entry per stretch (columns of unequal length are cut to the shortest). */
function parseEntries(value: unknown): PathEntry[] {
  if (!isObject(value)) return [];
  const column = (key: string): unknown[] => (Array.isArray(value[key]) ? (value[key] as unknown[]) : []);
  const names = column("names");
  const [id, name, track, depth, kind, edge, start, end, time] = ["id", "name", "track", "depth", "kind", "edge", "start", "end", "time"].map(column);
  const count = Math.min(...[id, name, track, depth, kind, edge, start, end, time].map((values) => values?.length ?? 0));
  const num = (values: unknown[] | undefined, i: number): number => {
    const entry = values?.[i];
    return typeof entry === "number" && Number.isFinite(entry) ? entry : 0;
  };
  const entries: PathEntry[] = [];
  for (let i = 0; i < count; i++) {
    const slice = id?.[i];
    const nameIndex = name?.[i];
    const nameText = typeof nameIndex === "number" ? names[nameIndex] : undefined;
    const trackId = track?.[i];
    const kindText = kind?.[i];
    const edgeText = edge?.[i];
    entries.push({
      id: typeof slice === "number" ? slice : null,
      name: typeof nameText === "string" ? nameText : null,
      track: typeof trackId === "string" ? trackId : null,
      depth: num(depth, i),
      kind: typeof kindText === "string" ? kindText : "idle",
      edge: typeof edgeText === "string" ? edgeText : "",
      start: num(start, i),
      end: num(end, i),
      time: num(time, i),
    });
  }
  return entries;
}

export function parseCriticalPath(json: unknown): CriticalPathData {
  if (!isObject(json) || !isObject(json["path"])) throw new Error("the critical_path answer has no 'path'");
  const step = objectOf(json["step"]);
  const ids = Array.isArray(json["ids"]) ? json["ids"].filter((id): id is number => typeof id === "number") : [];
  return {
    index: numberField(step, "index"),
    step: parseStep(step) ?? { name: "", start: 0, end: 0 },
    stepId: typeof step["id"] === "number" ? step["id"] : null,
    steps: listField(json, "steps", parseStep),
    length: numberField(json, "length"),
    breakdown: listField(json, "breakdown", (value) =>
      isObject(value) ? { kind: stringField(value, "kind"), time: numberField(value, "time"), share: numberField(value, "share") } : null,
    ),
    path: parseEntries(json["path"]),
    ids,
  };
}

/** The critical path of step `step` (an index into the overview's steps; null: the first). */
export function fetchCriticalPath(api: ApiClient, ref: SpanRef, step: number | null, signal?: AbortSignal): Promise<ApiResult<CriticalPathData>> {
  const params = step === null ? {} : { step };
  return api.spanRoute("critical_path", ref, params, signal).then((result) => parsedResult(result, "critical_path", parseCriticalPath));
}
