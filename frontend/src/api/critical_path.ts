// `critical_path`: the chain of host operators, launches, device work and syncs that decides one
// step's length, with its breakdown by kind (µs in the trace's time base throughout). The answer's
// type is the contract's (schema.ts); the page reads its path columns as entries.
import type { ApiClient } from "./client";
import type { Answer, Item } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export type CriticalPathAnswer = Answer<"critical_path">;
export type PathKind = Item<CriticalPathAnswer["path"]["kind"]>;
/** The kinds of the breakdown, in the backend's order. */
export const PATH_KINDS = ["cpu_op", "launch", "kernel", "copy", "sync", "idle"] as const satisfies readonly PathKind[];

export type PathStep = Item<CriticalPathAnswer["steps"]>;

/** One stretch of the path (a row of the answer's `path` columns). */
export interface PathEntry {
  readonly id: number | null;
  readonly name: string | null;
  readonly track: string | null;
  readonly depth: number;
  readonly kind: PathKind;
  readonly edge: string;
  readonly start: number;
  readonly end: number;
  readonly time: number;
}

export interface CriticalPathData {
  readonly index: number;
  /** The step's own range's slice id (null for a span without steps): not work of the step. */
  readonly stepId: number | null;
  readonly step: PathStep;
  readonly steps: readonly PathStep[];
  readonly length: number;
  readonly breakdown: CriticalPathAnswer["breakdown"];
  readonly path: readonly PathEntry[];
  readonly ids: readonly number[];
}

/** The path columns as entries. */
function pathEntries(path: CriticalPathAnswer["path"]): PathEntry[] {
  return path.kind.map((kind, i) => {
    const nameIndex = path.name[i] ?? null;
    return {
      id: path.id[i] ?? null,
      name: nameIndex === null ? null : (path.names[nameIndex] ?? null),
      track: path.track[i] ?? null,
      depth: path.depth[i] ?? 0,
      kind,
      edge: path.edge[i] ?? "",
      start: path.start[i] ?? 0,
      end: path.end[i] ?? 0,
      time: path.time[i] ?? 0,
    };
  });
}

export function criticalPathData(answer: CriticalPathAnswer): CriticalPathData {
  const { index, name, id, start, end } = answer.step;
  return {
    index,
    stepId: id,
    step: { name, start, end },
    steps: answer.steps,
    length: answer.length,
    breakdown: answer.breakdown,
    path: pathEntries(answer.path),
    ids: answer.ids,
  };
}

export async function fetchCriticalPath(api: ApiClient, ref: SpanRef, step: number | null, signal?: AbortSignal): Promise<ApiResult<CriticalPathData>> {
  const result = await api.spanRoute("critical_path", ref, step === null ? {} : { step }, signal);
  return result.kind === "ok" ? { kind: "ok", data: criticalPathData(result.data) } : result;
}
