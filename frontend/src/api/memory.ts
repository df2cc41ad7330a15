// The `memory` route: allocated/reserved bytes over time per device, the allocations, and the
// bytes per operator (self and including nested operators). Times are µs in the trace's time
// base (the one of `summary` and `trace/*`), sizes bytes.
import type { ApiClient, QueryParams } from "./client";
import {
  booleanField,
  isObject,
  listField,
  nullableNumberField,
  numberField,
  objectOf,
  parsedResult,
  stringField,
  type JsonObject,
} from "./json_fields";
import type { ApiResult, SpanRef } from "./types";

export interface MemoryDevice {
  /** Route id ("cpu", "gpu0"), the key of `curves` and `peak`. */
  readonly id: string;
  readonly name: string;
  /** Device memory in bytes, when the trace records it (GPUs). */
  readonly capacity: number | null;
  readonly events: number;
}

export interface MemoryCurve {
  readonly time: readonly number[];
  readonly allocated: readonly number[];
  readonly reserved: readonly number[];
}

export interface MemoryPeak {
  readonly allocated: number;
  /** When the allocated bytes peaked, µs. */
  readonly time: number;
  /** The highest reserved bytes (not necessarily at the same time). */
  readonly reserved: number;
}

export interface AllocationRow {
  readonly addr: number;
  readonly bytes: number;
  /** The innermost operator around the allocation ("" when none). */
  readonly operator: string;
  readonly device: string;
  readonly allocTime: number;
  /** null: never freed within the span. */
  readonly freeTime: number | null;
  readonly lifetime: number | null;
  readonly neverFreed: boolean;
}

export interface OperatorMemoryRow {
  readonly name: string;
  readonly calls: number;
  readonly allocations: number;
  readonly frees: number;
  /** Net bytes (allocated minus freed) of the operator's own events. */
  readonly selfBytes: number;
  /** Net bytes including nested operators. */
  readonly totalBytes: number;
  readonly selfAllocBytes: number;
  readonly totalAllocBytes: number;
  /** Bytes it allocated itself that are still live at the device's peak. */
  readonly selfPeakBytes: number;
  readonly totalPeakBytes: number;
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

function parseDevice(value: unknown): MemoryDevice | null {
  if (!isObject(value) || typeof value["id"] !== "string") return null;
  return {
    id: value["id"],
    name: stringField(value, "name", value["id"]),
    capacity: nullableNumberField(value, "capacity"),
    events: numberField(value, "events"),
  };
}

function numberList(value: unknown): number[] {
  return Array.isArray(value) ? value.map((entry) => (typeof entry === "number" && Number.isFinite(entry) ? entry : Number.NaN)) : [];
}

function parseCurve(value: unknown): MemoryCurve {
  const object = objectOf(value);
  const time = numberList(object["time"]);
  // Series of unequal length would misalign the chart: cut them to the shortest.
  const allocated = numberList(object["allocated"]);
  const reserved = numberList(object["reserved"]);
  const length = Math.min(time.length, allocated.length, reserved.length > 0 ? reserved.length : allocated.length);
  return {
    time: time.slice(0, length),
    allocated: allocated.slice(0, length),
    reserved: reserved.length > 0 ? reserved.slice(0, length) : new Array<number>(length).fill(0),
  };
}

function parsePeak(value: unknown): MemoryPeak | null {
  if (!isObject(value)) return null;
  const allocated = numberField(value, "allocated");
  const time = numberField(value, "time");
  if (!Number.isFinite(allocated) || !Number.isFinite(time)) return null;
  return { allocated, time, reserved: numberField(value, "reserved") };
}

/** The columnar allocation table (`{"columns": [...], "addr": [...], ...}`) as rows. */
export function parseAllocations(value: unknown): AllocationRow[] {
  if (!isObject(value)) return [];
  const column = (key: string): readonly unknown[] => (Array.isArray(value[key]) ? (value[key] as unknown[]) : []);
  const addr = column("addr");
  const bytes = column("bytes");
  const operator = column("operator");
  const device = column("device");
  const allocTime = column("alloc_time");
  const freeTime = column("free_time");
  const lifetime = column("lifetime");
  const neverFreed = column("never_freed");
  const number = (entry: unknown): number => (typeof entry === "number" && Number.isFinite(entry) ? entry : Number.NaN);
  const nullableNumber = (entry: unknown): number | null => (typeof entry === "number" && Number.isFinite(entry) ? entry : null);
  const rows: AllocationRow[] = [];
  for (let i = 0; i < bytes.length; i += 1) {
    const free = nullableNumber(freeTime[i]);
    rows.push({
      addr: number(addr[i]),
      bytes: number(bytes[i]),
      operator: typeof operator[i] === "string" ? (operator[i] as string) : "",
      device: typeof device[i] === "string" ? (device[i] as string) : "",
      allocTime: number(allocTime[i]),
      freeTime: free,
      lifetime: nullableNumber(lifetime[i]),
      neverFreed: typeof neverFreed[i] === "boolean" ? (neverFreed[i] as boolean) : free === null,
    });
  }
  return rows;
}

function parseOperatorRow(value: unknown): OperatorMemoryRow | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  const n = (key: string): number => numberField(value, key);
  return {
    name: value["name"],
    calls: n("calls"),
    allocations: n("allocations"),
    frees: n("frees"),
    selfBytes: n("self_bytes"),
    totalBytes: n("total_bytes"),
    selfAllocBytes: n("self_alloc_bytes"),
    totalAllocBytes: n("total_alloc_bytes"),
    selfPeakBytes: n("self_peak_bytes"),
    totalPeakBytes: n("total_peak_bytes"),
  };
}

function mapOf<T>(object: JsonObject, parse: (value: unknown) => T | null): Map<string, T> {
  const out = new Map<string, T>();
  for (const [key, value] of Object.entries(object)) {
    const parsed = parse(value);
    if (parsed !== null) out.set(key, parsed);
  }
  return out;
}

export function parseMemory(json: unknown): MemoryData {
  if (!isObject(json) || typeof json["available"] !== "boolean") throw new Error("the memory answer has no 'available' flag");
  const hint = json["hint"];
  return {
    available: booleanField(json, "available"),
    hint: typeof hint === "string" ? hint : null,
    spanStart: nullableNumberField(json, "span_start"),
    devices: listField(json, "devices", parseDevice),
    curves: mapOf(objectOf(json["curves"]), parseCurve),
    peaks: mapOf(objectOf(json["peak"]), parsePeak),
    allocations: parseAllocations(json["events"]),
    byOperator: listField(json, "by_operator", parseOperatorRow),
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

export async function fetchMemory(
  api: ApiClient,
  ref: SpanRef,
  query: MemoryQuery,
  signal?: AbortSignal,
): Promise<ApiResult<MemoryData>> {
  return parsedResult(await api.spanRoute("memory", ref, memoryParams(query), signal), "memory", parseMemory);
}
