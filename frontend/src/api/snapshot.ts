// The `memory_snapshot` routes: a PyTorch allocator memory snapshot of a run (tb_plugin/views/memory_snapshot.py).
// Times are on the snapshot's axis ("time_us": µs since the epoch; "entry": the entry's number); sizes in bytes.
// Every string here comes from the snapshot file (untrusted): render with textContent only. The answers' types are
// the contract's (schema.ts).
import type { ApiClient, QueryParams } from "./client";
import type { Answer, Schema } from "./schema";
import { flameColumns, type FlameColumns } from "./stacks";
import type { ApiResult } from "./types";

export const GROUP_BY = ["site", "stack", "category", "annotation", "user_metadata", "compile_context", "stream"] as const satisfies readonly Answer<"memory_snapshot/at">["group_by"][];
export type GroupBy = (typeof GROUP_BY)[number];

export function isGroupBy(value: string | null): value is GroupBy {
  return (GROUP_BY as readonly (string | null)[]).includes(value);
}

/** Which snapshot a route is asked about: the run and, where it holds several, the snapshot's name. */
export interface SnapshotRef {
  readonly run: string;
  readonly snapshot: string | null;
}

export type SnapshotFrame = Schema<"SnapshotFrame">;
export type SnapshotGroup = Schema<"SnapshotGroup">;
export type AllocationRow = Schema<"SnapshotAllocationRow">;

export type SnapshotOverview = Answer<"memory_snapshot">;
export type SnapshotTimeline = Answer<"memory_snapshot/timeline">;
export type SnapshotAt = Answer<"memory_snapshot/at">;
export type AllocationDetail = Answer<"memory_snapshot/allocation">;
export type SnapshotSegments = Answer<"memory_snapshot/segments">;
export type SnapshotCompare = Answer<"memory_snapshot/compare">;

/** The flame graph of live bytes by stack of a moment, as the flame layout reads it (null when the answer has none). */
export function snapshotFlame(at: SnapshotAt): (FlameColumns & { readonly total: number }) | null {
  return at.flamegraph !== undefined ? { ...flameColumns(at.flamegraph), total: at.flamegraph.total } : null;
}

/** The route parameters naming a snapshot. */
export function snapshotParams(ref: SnapshotRef, extra: QueryParams = {}): QueryParams {
  return { run: ref.run, ...(ref.snapshot !== null ? { snapshot: ref.snapshot } : {}), ...extra };
}

export function fetchOverview(api: ApiClient, ref: SnapshotRef, signal?: AbortSignal): Promise<ApiResult<SnapshotOverview>> {
  return api.getJson("memory_snapshot", snapshotParams(ref), signal);
}

export function fetchTimeline(
  api: ApiClient,
  ref: SnapshotRef,
  query: { device: number; start?: number; end?: number; width: number },
  signal?: AbortSignal,
): Promise<ApiResult<SnapshotTimeline>> {
  return api.getJson("memory_snapshot/timeline", snapshotParams(ref, query), signal);
}

export function fetchAt(
  api: ApiClient,
  ref: SnapshotRef,
  query: { device: number; row?: number; groupBy: GroupBy; site?: number },
  signal?: AbortSignal,
): Promise<ApiResult<SnapshotAt>> {
  const params: Record<string, string | number> = { device: query.device, group_by: query.groupBy };
  if (query.row !== undefined) params["row"] = query.row;
  if (query.site !== undefined) params["site"] = query.site;
  return api.getJson("memory_snapshot/at", snapshotParams(ref, params), signal);
}

export function fetchAllocation(api: ApiClient, ref: SnapshotRef, id: number, signal?: AbortSignal): Promise<ApiResult<AllocationDetail>> {
  return api.getJson("memory_snapshot/allocation", snapshotParams(ref, { id }), signal);
}

export function fetchSegments(
  api: ApiClient,
  ref: SnapshotRef,
  query: { device: number; row?: number },
  signal?: AbortSignal,
): Promise<ApiResult<SnapshotSegments>> {
  return api.getJson("memory_snapshot/segments", snapshotParams(ref, query), signal);
}

export function fetchCompare(
  api: ApiClient,
  base: SnapshotRef,
  exp: SnapshotRef,
  signal?: AbortSignal,
): Promise<ApiResult<SnapshotCompare>> {
  const params: Record<string, string> = { base_run: base.run, exp_run: exp.run };
  if (base.snapshot !== null) params["base_snapshot"] = base.snapshot;
  if (exp.snapshot !== null) params["exp_snapshot"] = exp.snapshot;
  return api.getJson("memory_snapshot/compare", params, signal);
}

