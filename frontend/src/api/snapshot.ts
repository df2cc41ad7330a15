// The `memory_snapshot` routes: a PyTorch allocator memory snapshot of a run (tb_plugin/views/memory_snapshot.py).
// Times are on the snapshot's axis ("time_us": µs since the epoch; "entry": the entry's number); sizes in bytes.
// Every string here comes from the snapshot file (untrusted): render with textContent only.
import type { ApiClient, QueryParams } from "./client";
import {
  booleanField,
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
import type { Route } from "./schema";
import { flameGraphData, type FlameGraphAnswer, type FlameGraphData } from "./stacks";
import type { ApiResult } from "./types";

export const GROUP_BY = ["site", "stack", "category", "annotation", "user_metadata", "compile_context", "stream"] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export function isGroupBy(value: string | null): value is GroupBy {
  return (GROUP_BY as readonly (string | null)[]).includes(value);
}

/** Which snapshot a route is asked about: the run and, where it holds several, the snapshot's name. */
export interface SnapshotRef {
  readonly run: string;
  readonly snapshot: string | null;
}

export interface SnapshotInfo {
  readonly name: string;
  readonly file: string;
  readonly size: number;
  readonly worker: string | null;
  readonly span: string | null;
  readonly status: "ready" | "loading" | "error";
  readonly error: string | null;
}

export interface SnapshotFrame {
  readonly file: string | null;
  readonly line: number | null;
  readonly name: string | null;
  readonly kind: "user" | "python" | "cpp";
}

export interface SnapshotTotals {
  readonly active: number;
  readonly allocated: number;
  readonly reserved: number;
}

export interface SnapshotPeak {
  readonly bytes: number;
  readonly row: number;
  readonly time: number;
}

export interface SnapshotDevice {
  readonly device: number;
  readonly entries: number;
  readonly allocations: number;
  readonly segments: number;
  readonly start: number;
  readonly end: number;
  readonly peak: SnapshotPeak;
  readonly reservedPeak: number;
  readonly atStart: SnapshotTotals;
  readonly atEnd: SnapshotTotals;
  readonly stated: Readonly<Record<string, number>>;
}

export interface OomEvent {
  readonly device: number;
  readonly time: number;
  readonly requested: number;
  readonly deviceFree: number;
  readonly active: number;
  readonly reserved: number;
  readonly site: string;
  readonly frames: readonly SnapshotFrame[];
}

export interface SnapshotGroup {
  readonly key: number;
  readonly label: string;
  readonly bytes: number;
  readonly count: number;
  readonly share: number;
  readonly largest: number;
  readonly frames: readonly SnapshotFrame[];
}

export interface AllocationRow {
  readonly id: number;
  readonly size: number;
  readonly label: string;
  readonly addr: number;
  readonly stream: number;
  readonly start: number | null;
  readonly end: number | null;
  readonly spanStart: number;
  readonly spanEnd: number;
  readonly flags: readonly string[];
}

export interface SnapshotLink {
  readonly worker: string;
  readonly span: string;
  readonly status: string;
  readonly traceOffsetUs: number | null;
  readonly capacity: number | null;
}

export interface SnapshotOverview {
  readonly axis: "time_us" | "entry";
  readonly reservedKnown: boolean;
  readonly run: string;
  readonly snapshot: string;
  readonly file: string;
  readonly devices: readonly SnapshotDevice[];
  readonly defaultDevice: number | null;
  readonly settings: Readonly<Record<string, unknown>> | null;
  readonly oom: readonly OomEvent[];
  readonly notes: readonly string[];
  readonly peakSites: readonly SnapshotGroup[];
  readonly snapshots: readonly SnapshotInfo[];
  readonly linked: SnapshotLink | null;
}

export interface SnapshotTimeline {
  readonly device: number;
  readonly start: number;
  readonly end: number;
  readonly spanStart: number;
  readonly spanEnd: number;
  readonly time: Float64Array;
  readonly activeMax: Float64Array;
  readonly activeMin: Float64Array;
  readonly reserved: Float64Array;
  readonly sampleRow: Float64Array;
  readonly sites: readonly { readonly site: number; readonly label: string; readonly frame: SnapshotFrame | null }[];
  readonly bands: readonly Float64Array[];
  readonly other: Float64Array;
  readonly markers: readonly { readonly time: number; readonly action: string; readonly size: number }[];
  readonly annotations: readonly { readonly name: string; readonly start: number; readonly end: number; readonly depth: number }[];
}

export interface SnapshotAt {
  readonly device: number;
  readonly row: number;
  readonly time: number;
  readonly isPeak: boolean;
  readonly totals: SnapshotTotals;
  readonly liveBytes: number;
  readonly count: number;
  readonly groupBy: GroupBy;
  readonly groups: readonly SnapshotGroup[];
  readonly largest: readonly AllocationRow[];
  /** The site whose allocations `largest` lists (a clicked band), else null: the largest of all. */
  readonly site: number | null;
  readonly flame: FlameGraphData | null;
}

export interface AllocationDetail extends AllocationRow {
  readonly frames: readonly SnapshotFrame[];
  readonly annotation: string;
  readonly category: string | null;
}

export interface SegmentRow {
  readonly address: number;
  readonly size: number;
  readonly stream: number;
  readonly allocated: number;
  readonly active: number;
}

export interface SnapshotSegments {
  readonly exact: boolean;
  readonly note: string | null;
  readonly time: number;
  readonly reserved: number;
  readonly allocated: number;
  readonly free: number;
  readonly freeInBlocks: number;
  readonly largestFree: number;
  readonly fragmentation: number;
  readonly segments: readonly SegmentRow[];
}

export interface CompareRow {
  readonly site: string;
  readonly label: string;
  readonly baseBytes: number;
  readonly expBytes: number;
  readonly delta: number;
}

export interface SnapshotCompare {
  readonly delta: number;
  readonly basePeak: number;
  readonly expPeak: number;
  readonly rows: readonly CompareRow[];
}

function numbers(value: unknown): Float64Array {
  return Float64Array.from(Array.isArray(value) ? value : [], (v) => (typeof v === "number" && Number.isFinite(v) ? v : Number.NaN));
}

function parseFrame(value: unknown): SnapshotFrame | null {
  if (!isObject(value)) return null;
  const kind = value["kind"];
  return {
    file: nullableStringField(value, "file"),
    line: nullableNumberField(value, "line"),
    name: nullableStringField(value, "name"),
    kind: kind === "user" || kind === "python" ? kind : "cpp",
  };
}

function parseTotals(value: unknown): SnapshotTotals {
  const o = objectOf(value);
  return { active: numberField(o, "active"), allocated: numberField(o, "allocated"), reserved: numberField(o, "reserved") };
}

function parsePeak(value: unknown): SnapshotPeak {
  const o = objectOf(value);
  return { bytes: numberField(o, "bytes"), row: numberField(o, "row"), time: numberField(o, "time") };
}

function parseGroup(value: unknown): SnapshotGroup | null {
  if (!isObject(value)) return null;
  return {
    key: numberField(value, "key"),
    label: stringField(value, "label"),
    bytes: numberField(value, "bytes"),
    count: numberField(value, "count"),
    share: numberField(value, "share"),
    largest: numberField(value, "largest"),
    frames: listField(value, "frames", parseFrame),
  };
}

function parseAllocation(value: unknown): AllocationRow | null {
  if (!isObject(value)) return null;
  return {
    id: numberField(value, "id"),
    size: numberField(value, "size"),
    label: stringField(value, "label"),
    addr: numberField(value, "addr"),
    stream: numberField(value, "stream"),
    start: nullableNumberField(value, "start"),
    end: nullableNumberField(value, "end"),
    spanStart: numberField(value, "span_start"),
    spanEnd: numberField(value, "span_end"),
    flags: listField(value, "flags", (f) => (typeof f === "string" ? f : null)),
  };
}

function parseInfo(value: unknown): SnapshotInfo | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  const status = value["status"];
  return {
    name: value["name"],
    file: stringField(value, "file"),
    size: numberField(value, "size"),
    worker: nullableStringField(value, "worker"),
    span: nullableStringField(value, "span"),
    status: status === "ready" || status === "error" ? status : "loading",
    error: nullableStringField(value, "error"),
  };
}

/** The run's snapshots as the `runs` answer lists them (`memory_snapshots`). */
export function parseSnapshotInfos(value: unknown): SnapshotInfo[] {
  return Array.isArray(value) ? value.map(parseInfo).filter((info): info is SnapshotInfo => info !== null) : [];
}

export function parseOverview(json: unknown): SnapshotOverview {
  if (!isObject(json) || !Array.isArray(json["devices"])) throw new Error("the snapshot answer has no 'devices'");
  const linked = isObject(json["linked"]) ? json["linked"] : null;
  const settings = isObject(json["allocator_settings"]) ? json["allocator_settings"] : null;
  return {
    axis: json["axis"] === "entry" ? "entry" : "time_us",
    reservedKnown: json["reserved_known"] !== false,
    run: stringField(json, "run"),
    snapshot: stringField(json, "snapshot"),
    file: stringField(json, "file"),
    devices: listField(json, "devices", (value) => {
      if (!isObject(value)) return null;
      const stated: Record<string, number> = {};
      for (const [key, v] of Object.entries(objectOf(value["stated"]))) if (typeof v === "number") stated[key] = v;
      return {
        device: numberField(value, "device"),
        entries: numberField(value, "entries"),
        allocations: numberField(value, "allocations"),
        segments: numberField(value, "segments"),
        start: numberField(value, "start"),
        end: numberField(value, "end"),
        peak: parsePeak(value["peak"]),
        reservedPeak: numberField(value, "reserved_peak"),
        atStart: parseTotals(value["at_start"]),
        atEnd: parseTotals(value["at_end"]),
        stated,
      };
    }),
    defaultDevice: nullableNumberField(json, "default_device"),
    settings,
    oom: listField(json, "oom", (value) =>
      isObject(value)
        ? {
            device: numberField(value, "device"),
            time: numberField(value, "time"),
            requested: numberField(value, "requested"),
            deviceFree: numberField(value, "device_free"),
            active: numberField(value, "active"),
            reserved: numberField(value, "reserved"),
            site: stringField(value, "site"),
            frames: listField(value, "frames", parseFrame),
          }
        : null,
    ),
    notes: listField(json, "notes", (n) => (typeof n === "string" ? n : null)),
    peakSites: listField(json, "peak_sites", parseGroup),
    snapshots: parseSnapshotInfos(json["snapshots"]),
    linked:
      linked !== null
        ? {
            worker: stringField(linked, "worker"),
            span: stringField(linked, "span"),
            status: stringField(linked, "status"),
            traceOffsetUs: nullableNumberField(linked, "trace_offset_us"),
            capacity: nullableNumberField(linked, "capacity"),
          }
        : null,
  };
}

export function parseTimeline(json: unknown): SnapshotTimeline {
  if (!isObject(json) || !Array.isArray(json["time"])) throw new Error("the timeline answer has no 'time'");
  const span = objectOf(json["span"]);
  return {
    device: numberField(json, "device"),
    start: numberField(json, "start"),
    end: numberField(json, "end"),
    spanStart: numberField(span, "start"),
    spanEnd: numberField(span, "end"),
    time: numbers(json["time"]),
    activeMax: numbers(json["active_max"]),
    activeMin: numbers(json["active_min"]),
    reserved: numbers(json["reserved"]),
    sampleRow: numbers(json["sample_row"]),
    sites: listField(json, "sites", (value) =>
      isObject(value) ? { site: numberField(value, "site"), label: stringField(value, "label"), frame: parseFrame(value["frame"]) } : null,
    ),
    bands: Array.isArray(json["bands"]) ? json["bands"].map(numbers) : [],
    other: numbers(json["other"]),
    markers: listField(json, "markers", (value) =>
      isObject(value) ? { time: numberField(value, "time"), action: stringField(value, "action"), size: numberField(value, "size") } : null,
    ),
    annotations: listField(json, "annotations", (value) =>
      isObject(value)
        ? { name: stringField(value, "name"), start: numberField(value, "start"), end: numberField(value, "end"), depth: numberField(value, "depth") }
        : null,
    ),
  };
}

export function parseAt(json: unknown): SnapshotAt {
  if (!isObject(json) || !Array.isArray(json["groups"])) throw new Error("the answer has no 'groups'");
  const groupBy = stringField(json, "group_by");
  return {
    device: numberField(json, "device"),
    row: numberField(json, "row"),
    time: numberField(json, "time"),
    isPeak: booleanField(json, "is_peak"),
    totals: parseTotals(json["totals"]),
    liveBytes: numberField(json, "live_bytes"),
    count: numberField(json, "count"),
    groupBy: isGroupBy(groupBy) ? groupBy : "site",
    groups: listField(json, "groups", parseGroup),
    largest: listField(json, "largest", parseAllocation),
    site: nullableNumberField(json, "site"),
    flame: isObject(json["flamegraph"]) ? flameGraphData(json["flamegraph"] as unknown as FlameGraphAnswer) : null,
  };
}

export function parseAllocationDetail(json: unknown): AllocationDetail {
  const row = parseAllocation(json);
  if (row === null || !isObject(json)) throw new Error("the allocation answer is not an object");
  return {
    ...row,
    frames: listField(json, "frames", parseFrame),
    annotation: stringField(json, "annotation"),
    category: nullableStringField(json, "category"),
  };
}

export function parseSegments(json: unknown): SnapshotSegments {
  if (!isObject(json) || !Array.isArray(json["segments"])) throw new Error("the answer has no 'segments'");
  return {
    exact: booleanField(json, "exact"),
    note: nullableStringField(json, "note"),
    time: numberField(json, "time"),
    reserved: numberField(json, "reserved"),
    allocated: numberField(json, "allocated"),
    free: numberField(json, "free"),
    freeInBlocks: numberField(json, "free_in_blocks"),
    largestFree: numberField(json, "largest_free"),
    fragmentation: numberField(json, "fragmentation"),
    segments: listField(json, "segments", (value: unknown) =>
      isObject(value)
        ? {
            address: numberField(value, "address"),
            size: numberField(value, "size"),
            stream: numberField(value, "stream"),
            allocated: numberField(value, "allocated"),
            active: numberField(value, "active"),
          }
        : null,
    ),
  };
}

export function parseCompare(json: unknown): SnapshotCompare {
  if (!isObject(json) || !Array.isArray(json["rows"])) throw new Error("the answer has no 'rows'");
  const peak = (side: unknown): number => numberField(objectOf(objectOf(side)["peak"]), "bytes");
  return {
    delta: numberField(json, "delta"),
    basePeak: peak(json["base"]),
    expPeak: peak(json["exp"]),
    rows: listField(json, "rows", (value: unknown) =>
      isObject(value)
        ? {
            site: stringField(value, "site"),
            label: stringField(value, "label"),
            baseBytes: numberField(value, "base_bytes"),
            expBytes: numberField(value, "exp_bytes"),
            delta: numberField(value, "delta"),
          }
        : null,
    ),
  };
}

/** The route parameters naming a snapshot. */
export function snapshotParams(ref: SnapshotRef, extra: QueryParams = {}): QueryParams {
  return { run: ref.run, ...(ref.snapshot !== null ? { snapshot: ref.snapshot } : {}), ...extra };
}

async function get<T>(api: ApiClient, route: Route, params: QueryParams, parse: (json: unknown) => T, signal?: AbortSignal): Promise<ApiResult<T>> {
  return parsedResult(await api.getJson(route, params, signal), route, parse);
}

export function fetchOverview(api: ApiClient, ref: SnapshotRef, signal?: AbortSignal): Promise<ApiResult<SnapshotOverview>> {
  return get(api, "memory_snapshot", snapshotParams(ref), parseOverview, signal);
}

export function fetchTimeline(
  api: ApiClient,
  ref: SnapshotRef,
  query: { device: number; start?: number; end?: number; width: number },
  signal?: AbortSignal,
): Promise<ApiResult<SnapshotTimeline>> {
  return get(api, "memory_snapshot/timeline", snapshotParams(ref, query), parseTimeline, signal);
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
  return get(api, "memory_snapshot/at", snapshotParams(ref, params), parseAt, signal);
}

export function fetchAllocation(api: ApiClient, ref: SnapshotRef, id: number, signal?: AbortSignal): Promise<ApiResult<AllocationDetail>> {
  return get(api, "memory_snapshot/allocation", snapshotParams(ref, { id }), parseAllocationDetail, signal);
}

export function fetchSegments(
  api: ApiClient,
  ref: SnapshotRef,
  query: { device: number; row?: number },
  signal?: AbortSignal,
): Promise<ApiResult<SnapshotSegments>> {
  return get(api, "memory_snapshot/segments", snapshotParams(ref, query), parseSegments, signal);
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
  return get(api, "memory_snapshot/compare", params, parseCompare, signal);
}

export type { JsonObject };
