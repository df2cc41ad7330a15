// Vertical layout of the tracks: groups in order of first appearance, each with a header row
// (collapsible) and its tracks in the order the backend gave. A slice track is one row per
// nesting level; a counter track is a small chart. Pure: y positions are content pixels
// (0 = top of the first group header, before scrolling).
import type { TrackInfo } from "../api/trace";

export interface LayoutMetrics {
  readonly groupHeaderHeight: number;
  readonly sliceRowHeight: number;
  /** Space above and below the rows of a slice track. */
  readonly trackPadding: number;
  readonly counterHeight: number;
}

export const DEFAULT_METRICS: LayoutMetrics = {
  groupHeaderHeight: 22,
  sliceRowHeight: 18,
  trackPadding: 3,
  counterHeight: 40,
};

export interface GroupRow {
  readonly kind: "group";
  readonly group: string;
  readonly y: number;
  readonly height: number;
  readonly collapsed: boolean;
  readonly trackCount: number;
}

export interface TrackRow {
  readonly kind: "track";
  readonly group: string;
  readonly track: TrackInfo;
  readonly y: number;
  readonly height: number;
}

export type LayoutRow = GroupRow | TrackRow;

export interface TrackLayout {
  readonly rows: readonly LayoutRow[];
  readonly height: number;
  /** Visible (not collapsed) tracks by id. */
  readonly tracks: ReadonlyMap<string, TrackRow>;
  readonly metrics: LayoutMetrics;
}

export function isCounterTrack(track: TrackInfo): boolean {
  return track.kind === "counter";
}

export function trackHeight(track: TrackInfo, metrics: LayoutMetrics): number {
  if (isCounterTrack(track)) return metrics.counterHeight;
  return (track.maxDepth + 1) * metrics.sliceRowHeight + 2 * metrics.trackPadding;
}

/** Groups in order of first appearance, each with its tracks in the given order. */
export function groupTracks(tracks: readonly TrackInfo[]): Map<string, TrackInfo[]> {
  const groups = new Map<string, TrackInfo[]>();
  for (const track of tracks) {
    const members = groups.get(track.group);
    if (members === undefined) groups.set(track.group, [track]);
    else members.push(track);
  }
  return groups;
}

export function layoutTracks(
  tracks: readonly TrackInfo[],
  collapsed: ReadonlySet<string>,
  metrics: LayoutMetrics = DEFAULT_METRICS,
): TrackLayout {
  const rows: LayoutRow[] = [];
  const byId = new Map<string, TrackRow>();
  let y = 0;
  for (const [group, members] of groupTracks(tracks)) {
    const isCollapsed = collapsed.has(group);
    rows.push({ kind: "group", group, y, height: metrics.groupHeaderHeight, collapsed: isCollapsed, trackCount: members.length });
    y += metrics.groupHeaderHeight;
    if (isCollapsed) continue;
    for (const track of members) {
      const row: TrackRow = { kind: "track", group, track, y, height: trackHeight(track, metrics) };
      rows.push(row);
      byId.set(track.id, row);
      y += row.height;
    }
  }
  return { rows, height: y, tracks: byId, metrics };
}

/** Index of the first row whose bottom is below `y` (rows are sorted by y). */
export function firstRowBelow(layout: TrackLayout, y: number): number {
  let lo = 0;
  let hi = layout.rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const row = layout.rows[mid] as LayoutRow;
    if (row.y + row.height <= y) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The row at content y, or null below the last one. */
export function rowAt(layout: TrackLayout, y: number): LayoutRow | null {
  if (y < 0) return null;
  const row = layout.rows[firstRowBelow(layout, y)];
  return row !== undefined && y >= row.y ? row : null;
}

/** Top of nesting level `depth` of a slice track, content px. */
export function depthTop(row: TrackRow, depth: number, metrics: LayoutMetrics): number {
  return row.y + metrics.trackPadding + depth * metrics.sliceRowHeight;
}

/** The nesting level at content y inside a slice track, or -1 in its padding. */
export function depthAt(row: TrackRow, y: number, metrics: LayoutMetrics): number {
  const inside = y - row.y - metrics.trackPadding;
  if (inside < 0) return -1;
  const depth = Math.floor(inside / metrics.sliceRowHeight);
  return depth <= row.track.maxDepth ? depth : -1;
}

/** Slice tracks shown (not collapsed), in layout order: what a slices request asks for. */
export function visibleSliceTracks(layout: TrackLayout): string[] {
  const ids: string[] = [];
  for (const row of layout.rows) if (row.kind === "track" && !isCounterTrack(row.track)) ids.push(row.track.id);
  return ids;
}

export function visibleCounterTracks(layout: TrackLayout): string[] {
  const ids: string[] = [];
  for (const row of layout.rows) if (row.kind === "track" && isCounterTrack(row.track)) ids.push(row.track.id);
  return ids;
}
