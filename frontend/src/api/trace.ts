// The trace viewer's routes (design §6): tracks, windows of slices and counters at a
// resolution, one event's details, flows, search and the download link. Times are µs in the
// trace's own time base (often ~1.6e15: since the epoch); the viewer converts them to offsets
// from the span start before it draws. Columns of numbers arrive as typed arrays.
import type { ApiClient } from "./client";
import { isObject, parsedResult, type JsonObject } from "./json_fields";
import type { ApiResult, SpanRef } from "./types";

export type TrackKind = "cpu" | "gpu" | "counter" | (string & {});

export interface TrackInfo {
  /** "s3" for a slice track, "c:..." for a counter track. */
  readonly id: string;
  readonly name: string;
  readonly kind: TrackKind;
  /** Header the track is grouped under (a process, a GPU, "Memory"). */
  readonly group: string;
  /** Deepest nesting level of its slices (0 for counters). */
  readonly maxDepth: number;
  /** Counters: "fraction", "bytes" or "". */
  readonly unit: string;
}

export interface TracksData {
  /** Span start and end, µs in the trace's time base. */
  readonly start: number;
  readonly end: number;
  readonly tracks: readonly TrackInfo[];
}

/** Slices of one track in a window: parallel columns, absolute µs. */
export interface SliceColumns {
  readonly id: Float64Array;
  readonly start: Float64Array;
  readonly dur: Float64Array;
  readonly depth: Int32Array;
  /** Index into the answer's `names`. */
  readonly name: Int32Array;
}

/** Runs of sub-pixel slices merged by the backend: each counts the slices it stands for. */
export interface BlockColumns {
  readonly start: Float64Array;
  readonly end: Float64Array;
  readonly depth: Int32Array;
  readonly count: Float64Array;
}

export interface SliceTrackWindow {
  readonly id: string;
  readonly slices: SliceColumns;
  readonly blocks: BlockColumns;
}

export interface SlicesData {
  readonly start: number;
  readonly end: number;
  /** µs per pixel the backend merged at. */
  readonly resolution: number;
  readonly names: readonly string[];
  readonly tracks: readonly SliceTrackWindow[];
}

export interface CounterSeries {
  /** Bucket starts, absolute µs. */
  readonly time: Float64Array;
  readonly mean: Float64Array;
  readonly min: Float64Array;
  readonly max: Float64Array;
}

export interface CounterTrackWindow {
  readonly id: string;
  /** Series name ("utilization", "allocated", ...) → its buckets, in the answer's order. */
  readonly series: ReadonlyMap<string, CounterSeries>;
}

export interface CountersData {
  readonly start: number;
  readonly end: number;
  readonly resolution: number;
  readonly tracks: readonly CounterTrackWindow[];
}

/** A slice in a few fields: what links and search results point at. */
export interface EventBrief {
  readonly id: number;
  readonly name: string;
  readonly track: string;
  readonly start: number;
  readonly dur: number;
  readonly depth: number;
}

export interface FlowLink {
  readonly cat: string;
  readonly direction: "in" | "out";
  readonly other: EventBrief;
}

export interface EventDetail extends EventBrief {
  readonly cat: string;
  readonly end: number;
  readonly thread: string;
  readonly process: string;
  readonly kind: string;
  /** Argument name → value as text, in the answer's order. */
  readonly args: readonly (readonly [string, string])[];
  readonly stack: readonly string[];
  /** Parent first, root last. */
  readonly ancestors: readonly EventBrief[];
  readonly flows: readonly FlowLink[];
  readonly launchedBy: EventBrief | null;
  readonly operator: EventBrief | null;
  readonly launches: readonly EventBrief[];
}

export interface SearchPage {
  readonly query: string;
  readonly total: number;
  readonly offset: number;
  readonly matches: readonly EventBrief[];
}

// --- parsing --------------------------------------------------------------------------

function num(object: JsonObject, key: string, fallback = Number.NaN): number {
  const value = object[key];
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function str(object: JsonObject, key: string): string {
  const value = object[key];
  return typeof value === "string" ? value : "";
}

function list(object: JsonObject, key: string): unknown[] {
  const value = object[key];
  return Array.isArray(value) ? value : [];
}

/** A JSON number column; anything that is not a number becomes NaN (never drawn). */
function float64Column(value: unknown): Float64Array {
  if (!Array.isArray(value)) return new Float64Array(0);
  const out = new Float64Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    out[i] = typeof item === "number" ? item : Number.NaN;
  }
  return out;
}

/** A JSON integer column; a non-integer becomes -1 (an index or depth that matches nothing). */
function int32Column(value: unknown): Int32Array {
  if (!Array.isArray(value)) return new Int32Array(0);
  const out = new Int32Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    out[i] = typeof item === "number" && Number.isInteger(item) ? item : -1;
  }
  return out;
}

/** The columns of one table, cut to the shortest so that every index is valid in all. */
function sameLength<T extends Record<string, Float64Array | Int32Array>>(columns: T): T {
  const lengths = Object.values(columns).map((column) => column.length);
  const n = Math.min(...lengths);
  if (lengths.every((length) => length === n)) return columns;
  const out: Record<string, Float64Array | Int32Array> = {};
  for (const [key, column] of Object.entries(columns)) out[key] = column.subarray(0, n);
  return out as T;
}

export function parseTracks(json: unknown): TracksData {
  if (!isObject(json) || !Array.isArray(json["tracks"])) throw new Error("the trace/tracks answer has no 'tracks' list");
  const tracks: TrackInfo[] = [];
  const seen = new Set<string>();
  for (const entry of json["tracks"]) {
    if (!isObject(entry) || typeof entry["id"] !== "string" || seen.has(entry["id"])) continue;
    seen.add(entry["id"]);
    const maxDepth = num(entry, "max_depth", 0);
    tracks.push({
      id: entry["id"],
      name: str(entry, "name") || entry["id"],
      kind: str(entry, "kind") || "cpu",
      group: str(entry, "group"),
      // A hostile depth must not make a track millions of rows tall.
      maxDepth: Math.max(0, Math.min(255, Math.floor(maxDepth))),
      unit: str(entry, "unit"),
    });
  }
  const start = num(json, "start");
  const end = num(json, "end");
  if (!(end > start)) throw new Error("the trace/tracks answer has no valid start and end");
  return { start, end, tracks };
}

export function parseSlices(json: unknown): SlicesData {
  if (!isObject(json) || !Array.isArray(json["tracks"])) throw new Error("the trace/slices answer has no 'tracks' list");
  const names = list(json, "names").map((name) => (typeof name === "string" ? name : String(name)));
  const tracks: SliceTrackWindow[] = [];
  for (const entry of json["tracks"]) {
    if (!isObject(entry) || typeof entry["id"] !== "string") continue;
    const slices = isObject(entry["slices"]) ? entry["slices"] : {};
    const blocks = isObject(entry["blocks"]) ? entry["blocks"] : {};
    tracks.push({
      id: entry["id"],
      slices: sameLength({
        id: float64Column(slices["id"]),
        start: float64Column(slices["start"]),
        dur: float64Column(slices["dur"]),
        depth: int32Column(slices["depth"]),
        name: int32Column(slices["name"]),
      }),
      blocks: sameLength({
        start: float64Column(blocks["start"]),
        end: float64Column(blocks["end"]),
        depth: int32Column(blocks["depth"]),
        count: float64Column(blocks["count"]),
      }),
    });
  }
  return { start: num(json, "start"), end: num(json, "end"), resolution: num(json, "resolution"), names, tracks };
}

export function parseCounters(json: unknown): CountersData {
  if (!isObject(json) || !Array.isArray(json["tracks"])) throw new Error("the trace/counters answer has no 'tracks' list");
  const tracks: CounterTrackWindow[] = [];
  for (const entry of json["tracks"]) {
    if (!isObject(entry) || typeof entry["id"] !== "string" || !isObject(entry["series"])) continue;
    const series = new Map<string, CounterSeries>();
    for (const [name, value] of Object.entries(entry["series"])) {
      if (!isObject(value)) continue;
      series.set(
        name,
        sameLength({
          time: float64Column(value["time"]),
          mean: float64Column(value["mean"]),
          min: float64Column(value["min"]),
          max: float64Column(value["max"]),
        }),
      );
    }
    tracks.push({ id: entry["id"], series });
  }
  return { start: num(json, "start"), end: num(json, "end"), resolution: num(json, "resolution"), tracks };
}

export function parseBrief(value: unknown): EventBrief | null {
  if (!isObject(value)) return null;
  const id = value["id"];
  if (typeof id !== "number" || !Number.isInteger(id)) return null;
  return {
    id,
    name: str(value, "name"),
    track: str(value, "track"),
    start: num(value, "start"),
    dur: num(value, "dur", 0),
    depth: num(value, "depth", 0),
  };
}

function briefs(object: JsonObject, key: string): EventBrief[] {
  return list(object, key)
    .map(parseBrief)
    .filter((brief): brief is EventBrief => brief !== null);
}

/** An argument value as text: strings as they are, anything else as JSON. */
export function argText(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export function parseEventDetail(json: unknown): EventDetail {
  const brief = parseBrief(json);
  if (brief === null || !isObject(json)) throw new Error("the trace/event answer has no event id");
  const args = isObject(json["args"]) ? Object.entries(json["args"]).map(([key, value]) => [key, argText(value)] as const) : [];
  const flows: FlowLink[] = [];
  for (const entry of list(json, "flows")) {
    if (!isObject(entry)) continue;
    const other = parseBrief(entry["other"]);
    if (other === null) continue;
    flows.push({ cat: str(entry, "cat"), direction: entry["direction"] === "in" ? "in" : "out", other });
  }
  return {
    ...brief,
    cat: str(json, "cat"),
    end: num(json, "end", brief.start + brief.dur),
    thread: str(json, "thread"),
    process: str(json, "process"),
    kind: str(json, "kind"),
    args,
    stack: list(json, "stack").filter((frame): frame is string => typeof frame === "string"),
    ancestors: briefs(json, "ancestors"),
    flows,
    launchedBy: parseBrief(json["launched_by"]),
    operator: parseBrief(json["operator"]),
    launches: briefs(json, "launches"),
  };
}

export function parseSearchPage(json: unknown): SearchPage {
  if (!isObject(json) || !Array.isArray(json["matches"])) throw new Error("the trace/search answer has no 'matches' list");
  return { query: str(json, "query"), total: num(json, "total", 0), offset: num(json, "offset", 0), matches: briefs(json, "matches") };
}

// --- calls ----------------------------------------------------------------------------

export function fetchTracks(api: ApiClient, ref: SpanRef, signal?: AbortSignal): Promise<ApiResult<TracksData>> {
  return api.spanRoute("trace/tracks", ref, {}, signal).then((result) => parsedResult(result, "trace/tracks", parseTracks));
}

export interface WindowRequest {
  /** µs in the trace's time base. */
  readonly start: number;
  readonly end: number;
  /** Pixels the window is drawn across (sets the resolution). */
  readonly width: number;
  readonly tracks: readonly string[];
}

export function fetchSlices(api: ApiClient, ref: SpanRef, request: WindowRequest, signal?: AbortSignal): Promise<ApiResult<SlicesData>> {
  const params = { start: request.start, end: request.end, width: request.width, tracks: request.tracks.join(",") };
  return api.spanRoute("trace/slices", ref, params, signal).then((result) => parsedResult(result, "trace/slices", parseSlices));
}

export function fetchCounters(api: ApiClient, ref: SpanRef, request: WindowRequest, signal?: AbortSignal): Promise<ApiResult<CountersData>> {
  const params = { start: request.start, end: request.end, width: request.width, tracks: request.tracks.join(",") };
  return api.spanRoute("trace/counters", ref, params, signal).then((result) => parsedResult(result, "trace/counters", parseCounters));
}

/** `fullText`: the slice's own texts whole (`full_text=1`), however long, instead of cut as in every answer. */
export function fetchEventDetail(
  api: ApiClient,
  ref: SpanRef,
  id: number,
  signal?: AbortSignal,
  fullText = false,
): Promise<ApiResult<EventDetail>> {
  return api
    .spanRoute("trace/event", ref, fullText ? { id, full_text: 1 } : { id }, signal)
    .then((result) => parsedResult(result, "trace/event", parseEventDetail));
}

/**
 * How many characters the backend cut off a text: every answer cuts a text longer than 65,536 characters and
 * ends it with "… (N more characters)" (N with thousands separators); null for a whole text.
 */
export function charactersCut(text: string): number | null {
  const match = /… \(([\d,]+) more characters\)$/.exec(text);
  if (match === null) return null;
  const count = Number((match[1] ?? "").replaceAll(",", ""));
  return Number.isSafeInteger(count) && count > 0 ? count : null;
}

export function fetchSearch(
  api: ApiClient,
  ref: SpanRef,
  query: string,
  offset: number,
  limit: number,
  signal?: AbortSignal,
): Promise<ApiResult<SearchPage>> {
  return api
    .spanRoute("trace/search", ref, { q: query, offset, limit }, signal)
    .then((result) => parsedResult(result, "trace/search", parseSearchPage));
}

/** The original trace file of the span, served as an attachment. */
export function traceDownloadUrl(api: ApiClient, ref: SpanRef): string {
  return api.url("trace/download", { run: ref.run, worker: ref.worker, span: ref.span });
}
