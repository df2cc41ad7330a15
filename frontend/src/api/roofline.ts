// The `roofline` route: groups of identical operator calls against the roofs of their device, the biggest gaps to
// the roof, and copy bandwidth per direction. Times in µs, rates per second, shares 0..1.
import type { ApiClient } from "./client";
import {
  isObject,
  listField,
  nullableNumberField,
  nullableStringField,
  numberField,
  objectOf,
  parsedResult,
  stringField,
  type JsonObject,
} from "./json_fields";
import type { ApiResult, SpanRef } from "./types";
import { parseEfficiency, type Efficiency } from "./efficiency";

export interface RooflinePoint {
  readonly name: string;
  readonly inputShape: string | null;
  readonly params: Readonly<Record<string, unknown>>;
  readonly category: string;
  readonly categoryLabel: string;
  readonly unit: "matrix" | "vector";
  readonly precision: string;
  readonly device: number;
  readonly calls: number;
  readonly flopsPerCall: number;
  readonly bytesPerCall: number;
  /** µs of all the calls. */
  readonly time: number;
  readonly firstStart: number;
  readonly firstDur: number;
  readonly firstEventId: number;
  readonly efficiency: Efficiency;
}

export interface RooflineGap extends RooflinePoint {
  readonly index: number;
  /** µs above the roofline time. */
  readonly gap: number;
  readonly gapShare: number | null;
}

export interface Roof {
  readonly label: string;
  readonly precision: string;
  readonly unit: "matrix" | "vector";
  /** FLOP/s. */
  readonly peak: number;
  /** FLOPs per byte where the memory roof meets this one. */
  readonly ridge: number | null;
}

export interface DeviceRoofs {
  readonly device: number;
  readonly name: string | null;
  readonly reason: string;
  /** Memory bandwidth, bytes/s. */
  readonly bandwidth: number | null;
  readonly roofs: readonly Roof[];
  readonly source: string;
  readonly note: string;
}

export interface CopyDirection {
  readonly direction: string;
  readonly label: string;
  readonly calls: number;
  readonly bytes: number;
  readonly time: number;
  readonly bandwidth: number | null;
  readonly bandwidthMedian: number | null;
  readonly peak: number | null;
  readonly link: string;
  readonly peakShare: number | null;
}

export interface UncountedCalls {
  readonly reason: string;
  readonly calls: number;
  readonly time: number;
}

export interface RooflineData {
  readonly timeBasis: "device" | "host";
  readonly devices: readonly DeviceRoofs[];
  readonly points: readonly RooflinePoint[];
  readonly gaps: readonly RooflineGap[];
  readonly uncounted: readonly UncountedCalls[];
  readonly totalTime: number;
  readonly peaksError: string;
  readonly copies: readonly CopyDirection[];
}

function parsePoint(value: unknown): RooflinePoint | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  return {
    name: value["name"],
    inputShape: nullableStringField(value, "input_shape"),
    params: objectOf(value["params"]),
    category: stringField(value, "category", "other"),
    categoryLabel: stringField(value, "category_label", "Other"),
    unit: value["unit"] === "matrix" ? "matrix" : "vector",
    precision: stringField(value, "precision"),
    device: numberField(value, "device"),
    calls: numberField(value, "calls"),
    flopsPerCall: numberField(value, "flops_per_call"),
    bytesPerCall: numberField(value, "bytes_per_call"),
    time: numberField(value, "time"),
    firstStart: numberField(value, "first_start"),
    firstDur: numberField(value, "first_dur"),
    firstEventId: numberField(value, "first_event_id"),
    efficiency: parseEfficiency(value),
  };
}

function parseGap(value: unknown): RooflineGap | null {
  const point = parsePoint(value);
  if (point === null || !isObject(value)) return null;
  return { ...point, index: numberField(value, "index"), gap: numberField(value, "gap"), gapShare: nullableNumberField(value, "gap_share") };
}

function parseRoof(value: unknown): Roof | null {
  if (!isObject(value)) return null;
  const peak = numberField(value, "peak");
  if (!(peak > 0)) return null;
  return {
    label: stringField(value, "label"),
    precision: stringField(value, "precision"),
    unit: value["unit"] === "vector" ? "vector" : "matrix",
    peak,
    ridge: nullableNumberField(value, "ridge"),
  };
}

function parseDevice(value: unknown): DeviceRoofs | null {
  if (!isObject(value)) return null;
  return {
    device: numberField(value, "device"),
    name: nullableStringField(value, "name"),
    reason: stringField(value, "reason"),
    bandwidth: nullableNumberField(value, "bandwidth"),
    roofs: listField(value, "roofs", parseRoof),
    source: stringField(value, "source"),
    note: stringField(value, "note"),
  };
}

function parseCopy(value: unknown): CopyDirection | null {
  if (!isObject(value)) return null;
  return {
    direction: stringField(value, "direction"),
    label: stringField(value, "label"),
    calls: numberField(value, "calls"),
    bytes: numberField(value, "bytes"),
    time: numberField(value, "time"),
    bandwidth: nullableNumberField(value, "bandwidth"),
    bandwidthMedian: nullableNumberField(value, "bandwidth_median"),
    peak: nullableNumberField(value, "peak"),
    link: stringField(value, "link"),
    peakShare: nullableNumberField(value, "peak_share"),
  };
}

export function parseUncounted(value: unknown): UncountedCalls | null {
  if (!isObject(value)) return null;
  return { reason: stringField(value, "reason"), calls: numberField(value, "calls"), time: numberField(value, "time") };
}

export function parseRoofline(json: unknown): RooflineData {
  if (!isObject(json) || !Array.isArray(json["points"])) throw new Error("the roofline answer has no 'points' list");
  const copies: JsonObject = objectOf(json["copies"]);
  return {
    timeBasis: json["time_basis"] === "host" ? "host" : "device",
    devices: listField(json, "devices", parseDevice),
    points: listField(json, "points", parsePoint),
    gaps: listField(json, "gaps", parseGap),
    uncounted: listField(json, "uncounted", parseUncounted),
    totalTime: numberField(json, "total_time"),
    peaksError: stringField(json, "peaks_error"),
    copies: listField(copies, "directions", parseCopy),
  };
}

export async function fetchRoofline(api: ApiClient, ref: SpanRef, signal?: AbortSignal): Promise<ApiResult<RooflineData>> {
  return parsedResult(await api.spanRoute("roofline", ref, {}, signal), "roofline", parseRoofline);
}
