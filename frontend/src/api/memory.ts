// The `memory` route: allocated/reserved bytes over time per device, the allocations, and the
// bytes per operator (self and including nested operators). Times are µs in the trace's time
// base (the one of `summary` and `trace/*`), sizes bytes. The answer's type is the contract's
// (schema.ts); the page reads its curves and peaks by device and its allocation columns as rows.
import type { ApiClient, QueryParams } from "./client";
import type { Answer, Item } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export type MemoryAnswer = Answer<"memory">;
export type MemoryDevice = Item<MemoryAnswer["devices"]>;
export type MemoryCurve = MemoryAnswer["curves"][string];
export type MemoryPeak = MemoryAnswer["peak"][string];
export type OperatorMemoryRow = Item<MemoryAnswer["by_operator"]>;
type AllocationColumns = Exclude<MemoryAnswer["events"], readonly unknown[]>;

/** One allocation (a row of the answer's `events` columns). */
export interface AllocationRow {
  /** NaN when the event has no address (an older profiler's format). */
  readonly addr: number;
  readonly bytes: number;
  /** The innermost operator on the allocating thread ("" when none). */
  readonly operator: string;
  readonly device: string;
  readonly allocTime: number;
  /** Null when the span ends before the block is freed, or when it is not known (an event without an address). */
  readonly freeTime: number | null;
  readonly lifetime: number | null;
  /** Null when not known: an event without an address is paired with no free. */
  readonly neverFreed: boolean | null;
}

export interface MemoryData {
  readonly available: boolean;
  readonly hint: string | null;
  /** The span's start (µs, the trace's time base): the page and the CSV show times from it; null when not given. */
  readonly spanStart: number | null;
  readonly devices: readonly MemoryDevice[];
  readonly curves: ReadonlyMap<string, MemoryCurve>;
  readonly peaks: ReadonlyMap<string, MemoryPeak>;
  readonly allocations: readonly AllocationRow[];
  readonly byOperator: readonly OperatorMemoryRow[];
  /** What the span's memory events do not say (totals rebuilt from sizes, no addresses). */
  readonly notes: readonly string[];
}

/** What the tables are about; the curves always cover the whole span and every device. */
export interface MemoryQuery {
  readonly device?: string | undefined;
  readonly start?: number | undefined;
  readonly end?: number | undefined;
  readonly minBytes?: number | undefined;
  readonly name?: string | undefined;
  readonly limit?: number | undefined;
}

/** The allocation columns as rows. */
export function allocationRows(events: MemoryAnswer["events"]): AllocationRow[] {
  if (Array.isArray(events)) return [];
  const columns = events as AllocationColumns;
  return columns.bytes.map((bytes, i) => ({
    addr: columns.addr[i] ?? Number.NaN,  // null (no address) reads as NaN: shown as "—"
    bytes,
    operator: columns.operator[i] ?? "",
    device: columns.device[i] ?? "",
    allocTime: columns.alloc_time[i] ?? Number.NaN,
    freeTime: columns.free_time[i] ?? null,
    lifetime: columns.lifetime[i] ?? null,
    neverFreed: columns.never_freed[i] === undefined ? false : columns.never_freed[i] ?? null,
  }));
}

export function memoryData(answer: MemoryAnswer): MemoryData {
  return {
    available: answer.available,
    hint: answer.hint ?? null,
    spanStart: answer.span_start ?? null,
    devices: answer.devices,
    curves: new Map(Object.entries(answer.curves)),
    peaks: new Map(Object.entries(answer.peak)),
    allocations: allocationRows(answer.events),
    byOperator: answer.by_operator,
    notes: answer.notes ?? [],
  };
}

export function memoryParams(query: MemoryQuery): QueryParams {
  return {
    device: query.device !== undefined && query.device !== "" ? query.device : undefined,
    start: query.start,
    end: query.end,
    min_bytes: query.minBytes !== undefined && query.minBytes > 0 ? Math.round(query.minBytes) : undefined,
    name: query.name !== undefined && query.name !== "" ? query.name : undefined,
    limit: query.limit,
  };
}

export async function fetchMemory(api: ApiClient, ref: SpanRef, query: MemoryQuery, signal?: AbortSignal): Promise<ApiResult<MemoryData>> {
  const result = await api.spanRoute("memory", ref, memoryParams(query), signal);
  return result.kind === "ok" ? { kind: "ok", data: memoryData(result.data) } : result;
}
