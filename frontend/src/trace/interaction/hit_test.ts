// What is under the pointer: a slice, a busy block, a counter bucket or a group header.
// Pure: works on the layout and the tile that was drawn, in offset time and content px.
import type { CounterSeries } from "../../api/trace";
import type { CounterTileData, SliceTileData, TrackSlices } from "../data/tiles";
import { depthAt, isCounterTrack, rowAt, type TrackLayout } from "../layout";

export interface SliceHit {
  readonly kind: "slice";
  readonly trackId: string;
  readonly id: number;
  readonly name: string;
  readonly start: number;
  readonly dur: number;
  readonly depth: number;
}

export interface BlockHit {
  readonly kind: "block";
  readonly trackId: string;
  readonly start: number;
  readonly end: number;
  readonly depth: number;
  readonly count: number;
}

export interface CounterHit {
  readonly kind: "counter";
  readonly trackId: string;
  readonly time: number;
  readonly unit: string;
  readonly values: readonly { readonly series: string; readonly mean: number; readonly min: number; readonly max: number }[];
}

export interface GroupHit {
  readonly kind: "group";
  readonly group: string;
}

/** A track's name in the label column (hover: the whole name; click: pin or unpin). */
export interface LabelHit {
  readonly kind: "label";
  readonly trackId: string;
}

export type Hit = SliceHit | BlockHit | CounterHit | GroupHit | LabelHit;

/**
 * Index of the slice at `depth` containing `time`, else the nearest one within
 * `toleranceUs` (so a one-pixel kernel can still be clicked), else -1.
 */
export function sliceIndexAt(track: TrackSlices, depth: number, time: number, toleranceUs: number): number {
  const { start, dur, depth: depths } = track.slices;
  let best = -1;
  let bestDistance = Infinity;
  for (let i = 0; i < start.length; i++) {
    if (depths[i] !== depth) continue;
    const from = start[i] as number;
    const to = from + (dur[i] as number);
    const distance = time < from ? from - time : time > to ? time - to : 0;
    // Prefer the slice that contains the point, then the nearest, then the shorter.
    if (distance < bestDistance || (distance === bestDistance && best >= 0 && (dur[i] as number) < (dur[best] as number))) {
      best = i;
      bestDistance = distance;
    }
  }
  return bestDistance <= toleranceUs ? best : -1;
}

/** Index of the busy block at `depth` containing `time` (with tolerance), else -1. */
export function blockIndexAt(track: TrackSlices, depth: number, time: number, toleranceUs: number): number {
  const { start, end, depth: depths } = track.blocks;
  for (let i = 0; i < start.length; i++) {
    if (depths[i] !== depth) continue;
    if (time >= (start[i] as number) - toleranceUs && time <= (end[i] as number) + toleranceUs) return i;
  }
  return -1;
}

/** Index of the bucket of a counter series holding `time`, else -1 (buckets are sorted). */
export function bucketIndexAt(series: CounterSeries, time: number, resolutionUs: number): number {
  const times = series.time;
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((times[mid] as number) <= time) lo = mid + 1;
    else hi = mid;
  }
  const index = lo - 1;
  if (index < 0) return -1;
  return time < (times[index] as number) + resolutionUs ? index : -1;
}

export interface HitQuery {
  readonly layout: TrackLayout;
  readonly slices: SliceTileData | null;
  readonly counters: CounterTileData | null;
  /** Offset µs under the pointer. */
  readonly time: number;
  /** Content y (scroll included). */
  readonly y: number;
  /** µs that one pixel stands for: the click tolerance. */
  readonly usPerPx: number;
}

export function hitTest(query: HitQuery): Hit | null {
  const { layout, time, y, usPerPx } = query;
  const row = rowAt(layout, y);
  if (row === null) return null;
  if (row.kind === "group") return { kind: "group", group: row.group };
  const track = row.track;
  if (isCounterTrack(track)) {
    const seriesMap = query.counters?.tracks.get(track.id);
    if (seriesMap === undefined || query.counters === null) return null;
    const values: { series: string; mean: number; min: number; max: number }[] = [];
    for (const [name, series] of seriesMap) {
      const index = bucketIndexAt(series, time, query.counters.resolutionUs);
      if (index >= 0) {
        values.push({ series: name, mean: series.mean[index] as number, min: series.min[index] as number, max: series.max[index] as number });
      }
    }
    return values.length > 0 ? { kind: "counter", trackId: track.id, time, unit: track.unit, values } : null;
  }
  const depth = depthAt(row, y, layout.metrics);
  const data = query.slices?.tracks.get(track.id);
  if (depth < 0 || data === undefined || query.slices === null) return null;
  const tolerance = 2 * usPerPx;
  // What is exactly under the pointer wins; only then the nearest thing within a few pixels.
  let index = sliceIndexAt(data, depth, time, 0);
  let block = index >= 0 ? -1 : blockIndexAt(data, depth, time, 0);
  if (index < 0 && block < 0) {
    index = sliceIndexAt(data, depth, time, tolerance);
    if (index < 0) block = blockIndexAt(data, depth, time, tolerance);
  }
  if (index >= 0) {
    const nameIndex = data.slices.name[index] as number;
    return {
      kind: "slice",
      trackId: track.id,
      id: data.slices.id[index] as number,
      name: query.slices.names[nameIndex] ?? "",
      start: data.slices.start[index] as number,
      dur: data.slices.dur[index] as number,
      depth,
    };
  }
  if (block >= 0) {
    return {
      kind: "block",
      trackId: track.id,
      start: data.blocks.start[block] as number,
      end: data.blocks.end[block] as number,
      depth,
      count: data.blocks.count[block] as number,
    };
  }
  return null;
}
