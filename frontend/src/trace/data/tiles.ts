// Tile contents as the renderer reads them: the API's columns with times turned into
// offsets from the span start (µs), looked up by track id.
import type { ApiClient } from "../../api/client";
import {
  fetchCounters,
  fetchSlices,
  type CounterSeries,
  type CountersData,
  type SliceColumns,
  type BlockColumns,
  type SlicesData,
} from "../../api/trace";
import type { ApiResult, SpanRef } from "../../api/types";
import type { TileFetch } from "./tile_store";
import type { TileWindow } from "./tile_key";

export interface TrackSlices {
  /** Slice columns; `start` is an offset (µs), `name` indexes the tile's `names`. */
  readonly slices: SliceColumns;
  /** Busy blocks; `start`/`end` are offsets (µs). */
  readonly blocks: BlockColumns;
}

export interface SliceTileData {
  readonly names: readonly string[];
  /** µs per pixel the backend merged at. */
  readonly resolutionUs: number;
  readonly tracks: ReadonlyMap<string, TrackSlices>;
}

export interface CounterTileData {
  readonly resolutionUs: number;
  /** Track id → series name → buckets (times as offsets). */
  readonly tracks: ReadonlyMap<string, ReadonlyMap<string, CounterSeries>>;
}

function shift(column: Float64Array, by: number): Float64Array {
  for (let i = 0; i < column.length; i++) column[i] = (column[i] as number) - by;
  return column;
}

/** Converts a slices answer in place (its arrays are fresh) to offsets from `spanStart`. */
export function toSliceTile(answer: SlicesData, spanStart: number): SliceTileData {
  const tracks = new Map<string, TrackSlices>();
  for (const track of answer.tracks) {
    shift(track.slices.start, spanStart);
    shift(track.blocks.start, spanStart);
    shift(track.blocks.end, spanStart);
    tracks.set(track.id, { slices: track.slices, blocks: track.blocks });
  }
  return { names: answer.names, resolutionUs: answer.resolution, tracks };
}

export function toCounterTile(answer: CountersData, spanStart: number): CounterTileData {
  const tracks = new Map<string, ReadonlyMap<string, CounterSeries>>();
  for (const track of answer.tracks) {
    for (const series of track.series.values()) shift(series.time, spanStart);
    tracks.set(track.id, track.series);
  }
  return { resolutionUs: answer.resolution, tracks };
}

/** Trace-time request of a tile window (ns offsets → µs in the trace's time base). */
export function windowRequest(window: TileWindow, spanStart: number, tracks: readonly string[]) {
  return { start: spanStart + window.startNs / 1000, end: spanStart + window.endNs / 1000, width: window.widthPx, tracks };
}

function mapOk<A, B>(result: ApiResult<A>, convert: (data: A) => B): ApiResult<B> {
  return result.kind === "ok" ? { kind: "ok", data: convert(result.data) } : result;
}

export function sliceTileFetcher(api: ApiClient, ref: SpanRef, spanStart: number): TileFetch<SliceTileData> {
  return async (window, tracks, signal) =>
    mapOk(await fetchSlices(api, ref, windowRequest(window, spanStart, tracks), signal), (data) => toSliceTile(data, spanStart));
}

export function counterTileFetcher(api: ApiClient, ref: SpanRef, spanStart: number): TileFetch<CounterTileData> {
  return async (window, tracks, signal) =>
    mapOk(await fetchCounters(api, ref, windowRequest(window, spanStart, tracks), signal), (data) => toCounterTile(data, spanStart));
}
