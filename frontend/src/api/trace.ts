// The trace viewer's routes (design §6): tracks, windows of slices and counters at a
// resolution, one event's details, flows, search and the download link. Times are µs in the
// trace's own time base (often ~1.6e15: since the epoch); the viewer converts them to offsets
// from the span start before it draws. Columns of numbers arrive as typed arrays.
import type { ApiClient } from "./client";
import type { Answer, Schema } from "./schema";
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
export type EventBrief = Schema<"TraceSliceBrief">;

export type FlowLink = Schema<"FlowLink">;

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
  /** A copy's or a collective call's size and bandwidth; null for other slices. */
  readonly bandwidth: EventAnswer["bandwidth"];
}

export type SearchPage = Answer<"trace/search">;

// --- conversions ----------------------------------------------------------------------
// The answers' types are the contract's (schema.ts); the viewer keeps their columns as typed arrays.

export type TracksAnswer = Answer<"trace/tracks">;
export type SlicesAnswer = Answer<"trace/slices">;
export type CountersAnswer = Answer<"trace/counters">;
export type EventAnswer = Answer<"trace/event">;
export type SearchAnswer = Answer<"trace/search">;

/** Deepest nesting level the viewer draws rows for (a deeper trace's slices stack on the last row). */
const MAX_TRACK_DEPTH = 255;

export function tracksData(answer: TracksAnswer): TracksData {
  return {
    start: answer.start,
    end: answer.end,
    tracks: answer.tracks.map((track) => ({
      id: track.id,
      name: track.name,
      kind: track.kind,
      group: track.group,
      // A trace nested millions deep must not make a track millions of rows tall.
      maxDepth: Math.min(MAX_TRACK_DEPTH, track.max_depth),
      unit: track.unit ?? "",
    })),
  };
}

export function slicesData(answer: SlicesAnswer): SlicesData {
  return {
    start: answer.start,
    end: answer.end,
    resolution: answer.resolution,
    names: answer.names,
    tracks: answer.tracks.map((track) => ({
      id: track.id,
      slices: {
        id: Float64Array.from(track.slices.id),
        start: Float64Array.from(track.slices.start),
        dur: Float64Array.from(track.slices.dur),
        depth: Int32Array.from(track.slices.depth),
        name: Int32Array.from(track.slices.name),
      },
      blocks: {
        start: Float64Array.from(track.blocks.start),
        end: Float64Array.from(track.blocks.end),
        depth: Int32Array.from(track.blocks.depth),
        count: Float64Array.from(track.blocks.count),
      },
    })),
  };
}

export function countersData(answer: CountersAnswer): CountersData {
  return {
    start: answer.start,
    end: answer.end,
    resolution: answer.resolution,
    tracks: answer.tracks.map((track) => ({
      id: track.id,
      series: new Map(
        Object.entries(track.series).map(([name, buckets]) => [
          name,
          {
            time: Float64Array.from(buckets.time),
            mean: Float64Array.from(buckets.mean),
            min: Float64Array.from(buckets.min),
            max: Float64Array.from(buckets.max),
          },
        ]),
      ),
    })),
  };
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

export function eventDetail(answer: EventAnswer): EventDetail {
  const { id, name, track, start, dur, depth } = answer;
  return {
    id,
    name,
    track,
    start,
    dur,
    depth,
    cat: answer.cat,
    end: answer.end,
    thread: answer.thread,
    process: answer.process,
    kind: answer.kind,
    args: Object.entries(answer.args).map(([key, value]) => [key, argText(value)] as const),
    stack: answer.stack,
    ancestors: answer.ancestors,
    flows: answer.flows,
    launchedBy: answer.launched_by,
    operator: answer.operator,
    launches: answer.launches,
    bandwidth: answer.bandwidth,
  };
}

function converted<A, T>(result: ApiResult<A>, convert: (answer: A) => T): ApiResult<T> {
  return result.kind === "ok" ? { kind: "ok", data: convert(result.data) } : result;
}

// --- calls ----------------------------------------------------------------------------

export function fetchTracks(api: ApiClient, ref: SpanRef, signal?: AbortSignal): Promise<ApiResult<TracksData>> {
  return api.spanRoute("trace/tracks", ref, {}, signal).then((result) => converted(result, tracksData));
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
  return api.spanRoute("trace/slices", ref, params, signal).then((result) => converted(result, slicesData));
}

export function fetchCounters(api: ApiClient, ref: SpanRef, request: WindowRequest, signal?: AbortSignal): Promise<ApiResult<CountersData>> {
  const params = { start: request.start, end: request.end, width: request.width, tracks: request.tracks.join(",") };
  return api.spanRoute("trace/counters", ref, params, signal).then((result) => converted(result, countersData));
}

/** `fullText`: the slice's own texts whole (`full_text=1`), however long, instead of cut as in every answer. */
export function fetchEventDetail(
  api: ApiClient,
  ref: SpanRef,
  id: number,
  signal?: AbortSignal,
  fullText = false,
): Promise<ApiResult<EventDetail>> {
  return api.spanRoute("trace/event", ref, fullText ? { id, full_text: 1 } : { id }, signal).then((result) => converted(result, eventDetail));
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
  return api.spanRoute("trace/search", ref, { q: query, offset, limit }, signal);
}

/** The original trace file of the span, served as an attachment. */
export function traceDownloadUrl(api: ApiClient, ref: SpanRef): string {
  return api.url("trace/download", { run: ref.run, worker: ref.worker, span: ref.span });
}
