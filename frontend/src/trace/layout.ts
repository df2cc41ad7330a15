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

/** The group of pinned tracks, shown first; a key no process name can take. */
export const PINNED_GROUP = "\u0000pinned";

export interface GroupRow {
  readonly kind: "group";
  readonly group: string;
  /** What the header reads ("Pinned" for the pinned group, else the group itself). */
  readonly label: string;
  readonly y: number;
  readonly height: number;
  readonly collapsed: boolean;
  readonly trackCount: number;
}

export interface TrackRow {
  readonly kind: "track";
  readonly group: string;
  readonly track: TrackInfo;
  /** In the pinned group at the top. */
  readonly pinned: boolean;
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

/**
 * Rows top to bottom: the pinned tracks first (in the order they were pinned) under a "Pinned"
 * header, then every group with its other tracks.
 */
export function layoutTracks(
  tracks: readonly TrackInfo[],
  collapsed: ReadonlySet<string>,
  metrics: LayoutMetrics = DEFAULT_METRICS,
  pinned: readonly string[] = [],
): TrackLayout {
  const rows: LayoutRow[] = [];
  const byId = new Map<string, TrackRow>();
  const pinnedSet = new Set(pinned);
  const byTrackId = new Map(tracks.map((track) => [track.id, track]));
  const pinnedTracks = pinned.map((id) => byTrackId.get(id)).filter((track): track is TrackInfo => track !== undefined);
  const groups: [string, TrackInfo[]][] = [];
  if (pinnedTracks.length > 0) groups.push([PINNED_GROUP, pinnedTracks]);
  for (const [group, members] of groupTracks(tracks.filter((track) => !pinnedSet.has(track.id)))) groups.push([group, members]);
  let y = 0;
  for (const [group, members] of groups) {
    const isCollapsed = collapsed.has(group);
    const label = group === PINNED_GROUP ? "Pinned" : group;
    rows.push({ kind: "group", group, label, y, height: metrics.groupHeaderHeight, collapsed: isCollapsed, trackCount: members.length });
    y += metrics.groupHeaderHeight;
    if (isCollapsed) continue;
    for (const track of members) {
      const row: TrackRow = { kind: "track", group, track, pinned: group === PINNED_GROUP, y, height: trackHeight(track, metrics) };
      rows.push(row);
      byId.set(track.id, row);
      y += row.height;
    }
  }
  return { rows, height: y, tracks: byId, metrics };
}

/** Pins a track (to the end of the pinned ones) or unpins it. */
export function togglePinned(pinned: readonly string[], trackId: string): string[] {
  return pinned.includes(trackId) ? pinned.filter((id) => id !== trackId) : [...pinned, trackId];
}

/** `trace.pinned` of the URL: a JSON list of track ids (counter ids hold trace names, so no separator is safe). */
export function formatPinned(pinned: readonly string[]): string | null {
  return pinned.length > 0 ? JSON.stringify(pinned) : null;
}

/** The pinned tracks a URL names, keeping only ids the span has. */
export function parsePinned(text: string | null, known: ReadonlySet<string>): string[] {
  if (text === null || text === "") return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  const out: string[] = [];
  if (Array.isArray(value)) for (const id of value) if (typeof id === "string" && known.has(id) && !out.includes(id)) out.push(id);
  return out;
}

/** Slice tracks whose rows lie (even partly) between content y0 and y1: an area selection's tracks. */
export function sliceTracksBetween(layout: TrackLayout, y0: number, y1: number): string[] {
  const top = Math.min(y0, y1);
  const bottom = Math.max(y0, y1);
  const ids: string[] = [];
  for (const row of layout.rows) {
    if (row.kind !== "track" || isCounterTrack(row.track)) continue;
    if (row.y < bottom && row.y + row.height > top) ids.push(row.track.id);
  }
  return ids;
}

/** Ids of the counter tracks whose rows overlap [y0, y1] (content y): an area selection reads their values too. */
export function counterTracksBetween(layout: TrackLayout, y0: number, y1: number): string[] {
  const top = Math.min(y0, y1);
  const bottom = Math.max(y0, y1);
  return layout.rows.flatMap((row) => (row.kind === "track" && isCounterTrack(row.track) && row.y < bottom && row.y + row.height > top ? [row.track.id] : []));
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
