// The renderer: a pure, synchronous function from a frame's state (viewport, scroll, layout,
// tiles, selection) to canvas calls. No fetching, no DOM, no timers: the viewer calls it once
// per animation frame. Speed comes from doing less: rows and slices off screen are skipped,
// rectangles are batched into one path per colour, labels are drawn only where they fit and
// their widths are cached.
import { formatBytes, formatDuration, formatPercent } from "../../lib/format";
import type { Tile } from "../data/tile_store";
import type { CounterTileData, SliceTileData } from "../data/tiles";
import { depthTop, firstRowBelow, isCounterTrack, type TrackLayout, type TrackRow } from "../layout";
import { TimeScale, timeTicks, type Viewport } from "../time_scale";
import type { ColorCache } from "./colors";
import { colorForName } from "./colors";
import type { TextFitter } from "./text_fit";

/** The subset of CanvasRenderingContext2D the renderer uses (a recorder stands in for it in tests). */
export type Canvas2D = Pick<
  CanvasRenderingContext2D,
  | "fillStyle"
  | "strokeStyle"
  | "lineWidth"
  | "font"
  | "textBaseline"
  | "textAlign"
  | "globalAlpha"
  | "save"
  | "restore"
  | "beginPath"
  | "closePath"
  | "rect"
  | "fill"
  | "stroke"
  | "fillRect"
  | "strokeRect"
  | "fillText"
  | "moveTo"
  | "lineTo"
  | "bezierCurveTo"
  | "clip"
  | "setTransform"
  | "setLineDash"
>;

export type Paint = string | CanvasPattern;

export interface Theme {
  readonly background: string;
  readonly headerBackground: string;
  readonly groupBackground: string;
  readonly axisBackground: string;
  readonly text: string;
  readonly mutedText: string;
  readonly border: string;
  readonly grid: string;
  readonly accent: string;
  readonly sliceText: string;
  /** Busy blocks (merged sub-pixel slices): hatched. */
  readonly blockFill: Paint;
  /** Parts of the view whose data is still loading. */
  readonly placeholderFill: Paint;
  readonly rangeFill: string;
  /** Slices off the critical path while it is shown. */
  readonly dimFill: string;
  readonly matchStroke: string;
  readonly flowStroke: string;
  readonly labelFont: string;
  readonly headerFont: string;
  readonly groupFont: string;
  readonly axisFont: string;
}

/** A slice's place on the timeline (offset µs), for outlines: selection, hover, search match. */
export interface SlicePlace {
  readonly trackId: string;
  readonly start: number;
  readonly dur: number;
  readonly depth: number;
}

/** A stretch of the critical path on one slice's row (offset µs). */
export interface PathMark {
  readonly trackId: string;
  readonly depth: number;
  readonly start: number;
  readonly end: number;
}

export interface FlowEnd {
  readonly trackId: string;
  readonly depth: number;
  /** Offset µs. */
  readonly time: number;
}

export interface FlowArrow {
  readonly from: FlowEnd;
  readonly to: FlowEnd;
}

export interface FrameInput {
  /** Canvas size in CSS px, and device pixels per CSS px. */
  readonly width: number;
  readonly height: number;
  readonly dpr: number;
  /** Width of the track-name column; the timeline starts right of it. */
  readonly headerWidth: number;
  readonly axisHeight: number;
  readonly view: Viewport;
  readonly scrollTop: number;
  readonly layout: TrackLayout;
  readonly slices: Tile<SliceTileData> | null;
  readonly counters: Tile<CounterTileData> | null;
  readonly selected: SlicePlace | null;
  readonly hovered: SlicePlace | null;
  readonly match: SlicePlace | null;
  readonly flows: readonly FlowArrow[];
  /** Shift-drag measurement (an area selection), offset µs. */
  readonly range: Viewport | null;
  /** The area selection's tracks (shaded), or null/absent: the range spans every track. */
  readonly rangeTracks?: ReadonlySet<string> | null;
  /** Slice ids on the critical path: they keep their colours and labels, the rest are dimmed. */
  readonly highlight?: ReadonlySet<number> | null;
  /** The critical path's time on each slice (offset µs), underlined in the accent colour at any zoom. */
  readonly pathMarks?: readonly PathMark[] | null;
  readonly loading: boolean;
  readonly theme: Theme;
}

export interface RenderResources {
  readonly colors: ColorCache;
  /** Measures in `theme.labelFont`. */
  readonly labelText: TextFitter;
  /** Measures in `theme.headerFont`. */
  readonly headerText: TextFitter;
}

export interface FrameStats {
  slices: number;
  blocks: number;
  labels: number;
  rows: number;
}

/** Narrower slices get no label. */
export const MIN_LABEL_PX = 24;
const LABEL_PADDING_PX = 4;
const GROUP_INDENT_PX = 8;
const TRACK_INDENT_PX = 20;

/** Rectangles batched by paint, so a frame fills each colour once. Reused between frames. */
export class RectBatch {
  private readonly byPaint = new Map<Paint, number[]>();

  add(paint: Paint, x: number, y: number, w: number, h: number): void {
    let rects = this.byPaint.get(paint);
    if (rects === undefined) {
      rects = [];
      this.byPaint.set(paint, rects);
    }
    rects.push(x, y, w, h);
  }

  /** Fills every batch (one path per paint) and empties them. */
  flush(ctx: Canvas2D): void {
    for (const [paint, rects] of this.byPaint) {
      if (rects.length === 0) continue;
      ctx.fillStyle = paint;
      ctx.beginPath();
      for (let i = 0; i < rects.length; i += 4) {
        ctx.rect(rects[i] as number, rects[i + 1] as number, rects[i + 2] as number, rects[i + 3] as number);
      }
      ctx.fill();
      rects.length = 0;
    }
    // Forget paints unused for a while, so a long session does not keep every colour seen.
    if (this.byPaint.size > 4096) this.byPaint.clear();
  }
}

interface Label {
  readonly text: string;
  readonly x: number;
  readonly y: number;
  readonly maxWidth: number;
}

/** Per-tile colours by name index, computed once per tile. */
const tileColors = new WeakMap<SliceTileData, string[]>();

function colorsOf(tile: SliceTileData, cache: ColorCache): string[] {
  let colors = tileColors.get(tile);
  if (colors === undefined) {
    colors = tile.names.map((name) => cache.get(name));
    tileColors.set(tile, colors);
  }
  return colors;
}

const batch = new RectBatch();

/** Screen y of a content y. */
function screenY(input: FrameInput, contentY: number): number {
  return input.axisHeight + contentY - input.scrollTop;
}

export function drawFrame(ctx: Canvas2D, input: FrameInput, resources: RenderResources): FrameStats {
  const stats: FrameStats = { slices: 0, blocks: 0, labels: 0, rows: 0 };
  const { width, height, theme, headerWidth, axisHeight } = input;
  ctx.setTransform(input.dpr, 0, 0, input.dpr, 0, 0);
  ctx.fillStyle = theme.background;
  ctx.fillRect(0, 0, width, height);
  const timelineWidth = Math.max(0, width - headerWidth);
  const scale = new TimeScale(input.view, timelineWidth);
  const ticks = timeTicks(input.view, timelineWidth);

  // Rows in view: from the first whose bottom is below the scroll position.
  const rows: TrackRow[] = [];
  const firstRow = firstRowBelow(input.layout, input.scrollTop);
  const bottom = input.scrollTop + (height - axisHeight);

  // --- timeline area (clipped) ---
  ctx.save();
  ctx.beginPath();
  ctx.rect(headerWidth, axisHeight, timelineWidth, height - axisHeight);
  ctx.clip();

  for (let index = firstRow; index < input.layout.rows.length; index++) {
    const row = input.layout.rows[index];
    if (row === undefined || row.y >= bottom) break;
    stats.rows += 1;
    const top = screenY(input, row.y);
    if (row.kind === "group") {
      ctx.fillStyle = theme.groupBackground;
      ctx.fillRect(headerWidth, top, timelineWidth, row.height);
    } else {
      rows.push(row);
    }
  }

  // Grid lines at the ticks, under the data.
  ctx.strokeStyle = theme.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const tick of ticks.ticks) {
    const x = Math.round(headerWidth + scale.timeToPx(tick.time)) + 0.5;
    ctx.moveTo(x, axisHeight);
    ctx.lineTo(x, height);
  }
  ctx.stroke();

  const labels: Label[] = [];
  for (const row of rows) {
    if (isCounterTrack(row.track)) drawCounterTrack(ctx, input, scale, row);
    else drawSliceTrack(input, scale, row, resources, labels, stats);
  }
  batch.flush(ctx);

  ctx.fillStyle = theme.sliceText;
  ctx.font = theme.labelFont;
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  for (const label of labels) {
    const text = resources.labelText.fit(label.text, label.maxWidth);
    if (text === null) continue;
    ctx.fillText(text, label.x, label.y);
    stats.labels += 1;
  }

  // Row separators over the data.
  ctx.strokeStyle = theme.border;
  ctx.beginPath();
  for (const row of rows) {
    const y = Math.round(screenY(input, row.y + row.height)) - 0.5;
    ctx.moveTo(headerWidth, y);
    ctx.lineTo(width, y);
  }
  ctx.stroke();

  if (input.pathMarks) drawPathMarks(ctx, input, scale, input.pathMarks);
  if (input.match !== null) outlineSlice(ctx, input, scale, input.match, theme.matchStroke, 2, [4, 3]);
  if (input.hovered !== null) outlineSlice(ctx, input, scale, input.hovered, theme.text, 1, []);
  if (input.selected !== null) outlineSlice(ctx, input, scale, input.selected, theme.accent, 2, []);
  for (const flow of input.flows) drawFlow(ctx, input, scale, flow);
  if (input.range !== null) drawRange(ctx, input, scale, input.range);
  ctx.restore();

  drawHeaders(ctx, input, firstRow, bottom, resources);
  drawAxis(ctx, input, scale, ticks.ticks);
  return stats;
}

function drawSliceTrack(
  input: FrameInput,
  scale: TimeScale,
  row: TrackRow,
  resources: RenderResources,
  labels: Label[],
  stats: FrameStats,
): void {
  const { theme, headerWidth, width, view } = input;
  const metrics = input.layout.metrics;
  const rowHeight = metrics.sliceRowHeight;
  const trackTop = screenY(input, row.y);
  const tile = input.slices;
  const data = tile?.data.tracks.get(row.track.id);
  const innerTop = trackTop + metrics.trackPadding;
  const innerHeight = row.height - 2 * metrics.trackPadding;

  // Where the tile does not reach (or has nothing for this track): a loading placeholder.
  if (tile === null || data === undefined) {
    batch.add(theme.placeholderFill, headerWidth, innerTop, width - headerWidth, innerHeight);
    return;
  }
  const covered = { start: tile.window.startNs / 1000, end: tile.window.endNs / 1000 };
  if (covered.start > view.start) {
    const x1 = headerWidth + scale.timeToPx(covered.start);
    batch.add(theme.placeholderFill, headerWidth, innerTop, x1 - headerWidth, innerHeight);
  }
  if (covered.end < view.end) {
    const x0 = Math.max(headerWidth, headerWidth + scale.timeToPx(covered.end));
    batch.add(theme.placeholderFill, x0, innerTop, width - x0, innerHeight);
  }

  const left = headerWidth - 1;
  const right = width + 1;
  const colors = colorsOf(tile.data, resources.colors);
  const { id, start, dur, depth, name } = data.slices;
  const highlight = input.highlight ?? null;
  const viewStart = view.start;
  const viewEnd = view.end;
  const k = scale.pxPerUs;
  for (let i = 0; i < start.length; i++) {
    const from = start[i] as number;
    if (from > viewEnd) continue;
    const to = from + (dur[i] as number);
    if (to < viewStart || !(to >= from)) continue;
    let x0 = headerWidth + (from - viewStart) * k;
    let x1 = headerWidth + (to - viewStart) * k;
    if (x0 < left) x0 = left;
    if (x1 > right) x1 = right;
    // At least a pixel: a slice the backend kept is at least about a pixel long.
    const w = Math.max(1, x1 - x0);
    const level = depth[i] as number;
    const y = innerTop + level * rowHeight;
    const nameIndex = name[i] as number;
    const dimmed = highlight !== null && !highlight.has(id[i] as number);
    batch.add(dimmed ? theme.dimFill : (colors[nameIndex] ?? theme.mutedText), x0, y, w, rowHeight - 1);
    stats.slices += 1;
    if (w >= MIN_LABEL_PX && !dimmed) {
      const labelX = Math.max(x0, headerWidth) + LABEL_PADDING_PX;
      const maxWidth = x0 + w - labelX - LABEL_PADDING_PX;
      const text = tile.data.names[nameIndex];
      if (text !== undefined && maxWidth > 8) labels.push({ text, x: labelX, y: y + rowHeight / 2, maxWidth });
    }
  }
  const blocks = data.blocks;
  for (let i = 0; i < blocks.start.length; i++) {
    const from = blocks.start[i] as number;
    const to = blocks.end[i] as number;
    if (from > viewEnd || to < viewStart) continue;
    let x0 = headerWidth + (from - viewStart) * k;
    let x1 = headerWidth + (to - viewStart) * k;
    if (x0 < left) x0 = left;
    if (x1 > right) x1 = right;
    const y = innerTop + (blocks.depth[i] as number) * rowHeight;
    batch.add(highlight !== null ? theme.dimFill : theme.blockFill, x0, y, Math.max(1, x1 - x0), rowHeight - 1);
    stats.blocks += 1;
  }
}

/** Counter series colours: fixed per (track, series), distinct from slice colours by saturation. */
function seriesColor(trackId: string, series: string): string {
  return colorForName(`${trackId}/${series}`).replace(/ (\d+)% (\d+)%\)$/, " 55% 50%)");
}

export function formatCounterValue(value: number, unit: string): string {
  if (unit === "fraction") return formatPercent(value, 0);
  if (unit === "bytes") return formatBytes(value);
  return Math.abs(value) >= 1000 ? value.toExponential(2) : String(Math.round(value * 100) / 100);
}

function drawCounterTrack(ctx: Canvas2D, input: FrameInput, scale: TimeScale, row: TrackRow): void {
  const { theme, headerWidth, width, view } = input;
  const top = screenY(input, row.y) + 4;
  const chartHeight = row.height - 8;
  const baseline = top + chartHeight;
  const tile = input.counters;
  const seriesMap = tile?.data.tracks.get(row.track.id);
  if (tile === null || seriesMap === undefined) {
    ctx.fillStyle = theme.placeholderFill;
    ctx.fillRect(headerWidth, top, width - headerWidth, chartHeight);
    return;
  }
  const resolution = tile.data.resolutionUs;
  // The vertical scale: 0..1 for fractions, else 0..the largest maximum in view.
  let maximum = row.track.unit === "fraction" ? 1 : 0;
  if (row.track.unit !== "fraction") {
    for (const series of seriesMap.values()) {
      for (let i = 0; i < series.time.length; i++) {
        const t = series.time[i] as number;
        if (t + resolution < view.start || t > view.end) continue;
        const value = series.max[i] as number;
        if (value > maximum) maximum = value;
      }
    }
  }
  if (!(maximum > 0)) maximum = 1;
  const yOf = (value: number): number => baseline - Math.max(0, Math.min(1, value / maximum)) * chartHeight;
  const k = scale.pxPerUs;
  // Series in reverse so the first ("allocated") is drawn over the second ("reserved").
  const entries = [...seriesMap.entries()].reverse();
  for (const [name, series] of entries) {
    const color = seriesColor(row.track.id, name);
    // Min/max band: one rectangle per bucket.
    ctx.globalAlpha = 0.25;
    ctx.fillStyle = color;
    ctx.beginPath();
    for (let i = 0; i < series.time.length; i++) {
      const t = series.time[i] as number;
      if (t + resolution < view.start || t > view.end) continue;
      const x0 = headerWidth + (t - view.start) * k;
      const x1 = x0 + Math.max(1, resolution * k);
      const yMax = yOf(series.max[i] as number);
      const yMin = yOf(series.min[i] as number);
      ctx.rect(x0, yMax, x1 - x0, Math.max(1, yMin - yMax));
    }
    ctx.fill();
    // Mean: a stepped area from the baseline.
    ctx.globalAlpha = 0.7;
    ctx.beginPath();
    let open = false;
    let lastX = 0;
    for (let i = 0; i < series.time.length; i++) {
      const t = series.time[i] as number;
      if (t + resolution < view.start || t > view.end) continue;
      const x0 = headerWidth + (t - view.start) * k;
      const x1 = x0 + Math.max(1, resolution * k);
      const y = yOf(series.mean[i] as number);
      if (!open || Math.abs(x0 - lastX) > 0.5) {
        if (open) {
          ctx.lineTo(lastX, baseline);
          ctx.closePath();
        }
        ctx.moveTo(x0, baseline);
        open = true;
      }
      ctx.lineTo(x0, y);
      ctx.lineTo(x1, y);
      lastX = x1;
    }
    if (open) {
      ctx.lineTo(lastX, baseline);
      ctx.closePath();
      ctx.fill();
    }
    ctx.globalAlpha = 1;
  }
  ctx.fillStyle = theme.mutedText;
  ctx.font = theme.axisFont;
  ctx.textBaseline = "top";
  ctx.textAlign = "left";
  ctx.fillText(formatCounterValue(maximum, row.track.unit), headerWidth + 4, top);
}

function placeRect(input: FrameInput, scale: TimeScale, place: SlicePlace): { x: number; y: number; w: number; h: number } | null {
  const row = input.layout.tracks.get(place.trackId);
  if (row === undefined || isCounterTrack(row.track)) return null;
  const metrics = input.layout.metrics;
  const x0 = Math.max(input.headerWidth - 2, input.headerWidth + scale.timeToPx(place.start));
  const x1 = Math.min(input.width + 2, input.headerWidth + scale.timeToPx(place.start + place.dur));
  if (x1 < input.headerWidth - 2 || x0 > input.width + 2) return null;
  const y = screenY(input, depthTop(row, place.depth, metrics));
  return { x: x0, y, w: Math.max(2, x1 - x0), h: metrics.sliceRowHeight - 1 };
}

/** The critical path as a line along the bottom of each slice row it passes (at least a pixel long). */
function drawPathMarks(ctx: Canvas2D, input: FrameInput, scale: TimeScale, marks: readonly PathMark[]): void {
  const metrics = input.layout.metrics;
  const { view, headerWidth } = input;
  const thickness = 3;
  ctx.fillStyle = input.theme.accent;
  ctx.beginPath();
  for (const mark of marks) {
    if (mark.end < view.start || mark.start > view.end) continue;
    const row = input.layout.tracks.get(mark.trackId);
    if (row === undefined || isCounterTrack(row.track)) continue;
    const x0 = Math.max(headerWidth - 1, headerWidth + scale.timeToPx(mark.start));
    const x1 = Math.min(input.width + 1, headerWidth + scale.timeToPx(mark.end));
    const y = screenY(input, depthTop(row, mark.depth, metrics) + metrics.sliceRowHeight - 1 - thickness);
    ctx.rect(x0, y, Math.max(1, x1 - x0), thickness);
  }
  ctx.fill();
}

function outlineSlice(
  ctx: Canvas2D,
  input: FrameInput,
  scale: TimeScale,
  place: SlicePlace,
  color: string,
  lineWidth: number,
  dash: number[],
): void {
  const rect = placeRect(input, scale, place);
  if (rect === null) return;
  ctx.strokeStyle = color;
  ctx.lineWidth = lineWidth;
  ctx.setLineDash(dash);
  ctx.strokeRect(rect.x, rect.y, rect.w, rect.h);
  ctx.setLineDash([]);
  ctx.lineWidth = 1;
}

function flowPoint(input: FrameInput, scale: TimeScale, end: FlowEnd): { x: number; y: number } | null {
  const row = input.layout.tracks.get(end.trackId);
  if (row === undefined || isCounterTrack(row.track)) return null;
  const metrics = input.layout.metrics;
  return {
    x: input.headerWidth + scale.timeToPx(end.time),
    y: screenY(input, depthTop(row, end.depth, metrics) + metrics.sliceRowHeight / 2),
  };
}

function drawFlow(ctx: Canvas2D, input: FrameInput, scale: TimeScale, flow: FlowArrow): void {
  const from = flowPoint(input, scale, flow.from);
  const to = flowPoint(input, scale, flow.to);
  if (from === null || to === null) return;
  // Far off screen on both ends along x: nothing of it would show.
  if ((from.x < input.headerWidth && to.x < input.headerWidth) || (from.x > input.width && to.x > input.width)) return;
  const bend = Math.max(24, Math.min(120, Math.abs(to.x - from.x) / 2));
  ctx.strokeStyle = input.theme.flowStroke;
  ctx.fillStyle = input.theme.flowStroke;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.moveTo(from.x, from.y);
  ctx.bezierCurveTo(from.x + bend, from.y, to.x - bend, to.y, to.x, to.y);
  ctx.stroke();
  // Arrow head, pointing along the curve's last tangent (which is horizontal, to the right).
  ctx.beginPath();
  ctx.moveTo(to.x, to.y);
  ctx.lineTo(to.x - 7, to.y - 4);
  ctx.lineTo(to.x - 7, to.y + 4);
  ctx.closePath();
  ctx.fill();
  ctx.lineWidth = 1;
}

function drawRange(ctx: Canvas2D, input: FrameInput, scale: TimeScale, range: Viewport): void {
  const x0 = input.headerWidth + scale.timeToPx(range.start);
  const x1 = input.headerWidth + scale.timeToPx(range.end);
  ctx.fillStyle = input.theme.rangeFill;
  const tracks = input.rangeTracks ?? null;
  if (tracks === null) {
    ctx.fillRect(x0, input.axisHeight, Math.max(1, x1 - x0), input.height - input.axisHeight);
  } else {
    // An area: shade the selected tracks' rows only.
    for (const id of tracks) {
      const row = input.layout.tracks.get(id);
      if (row !== undefined) ctx.fillRect(x0, screenY(input, row.y), Math.max(1, x1 - x0), row.height);
    }
  }
  ctx.strokeStyle = input.theme.accent;
  ctx.beginPath();
  ctx.moveTo(Math.round(x0) + 0.5, input.axisHeight);
  ctx.lineTo(Math.round(x0) + 0.5, input.height);
  ctx.moveTo(Math.round(x1) - 0.5, input.axisHeight);
  ctx.lineTo(Math.round(x1) - 0.5, input.height);
  ctx.stroke();
}

function drawHeaders(ctx: Canvas2D, input: FrameInput, firstRow: number, bottom: number, resources: RenderResources): void {
  const { theme, headerWidth, axisHeight, height } = input;
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, axisHeight, headerWidth, height - axisHeight);
  ctx.clip();
  ctx.fillStyle = theme.headerBackground;
  ctx.fillRect(0, axisHeight, headerWidth, height - axisHeight);
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  for (let index = firstRow; index < input.layout.rows.length; index++) {
    const row = input.layout.rows[index];
    if (row === undefined || row.y >= bottom) break;
    const top = screenY(input, row.y);
    if (row.kind === "group") {
      ctx.fillStyle = theme.groupBackground;
      ctx.fillRect(0, top, headerWidth, row.height);
      ctx.fillStyle = theme.text;
      ctx.font = theme.groupFont;
      const marker = row.collapsed ? "▸" : "▾";
      ctx.fillText(marker, GROUP_INDENT_PX - 2, top + row.height / 2);
      const label = `${row.label || "(no group)"} (${row.trackCount})`;
      ctx.font = theme.headerFont;
      const text = resources.headerText.fit(label, headerWidth - GROUP_INDENT_PX - 16);
      if (text !== null) ctx.fillText(text, GROUP_INDENT_PX + 12, top + row.height / 2);
    } else {
      ctx.fillStyle = row.pinned ? theme.text : theme.mutedText;
      ctx.font = theme.headerFont;
      // A pinned track says where it comes from: its group is the "Pinned" header now.
      const name = row.pinned ? `${row.track.group} · ${row.track.name}` : row.track.name;
      const text = resources.headerText.fit(name, headerWidth - TRACK_INDENT_PX - 6);
      const rowHeight = input.layout.metrics.sliceRowHeight;
      if (text !== null) ctx.fillText(text, TRACK_INDENT_PX, top + Math.min(row.height, rowHeight + 6) / 2);
    }
    ctx.strokeStyle = theme.border;
    ctx.beginPath();
    const y = Math.round(top + row.height) - 0.5;
    ctx.moveTo(0, y);
    ctx.lineTo(headerWidth, y);
    ctx.stroke();
  }
  ctx.strokeStyle = theme.border;
  ctx.beginPath();
  ctx.moveTo(headerWidth - 0.5, axisHeight);
  ctx.lineTo(headerWidth - 0.5, height);
  ctx.stroke();
  ctx.restore();
}

function drawAxis(ctx: Canvas2D, input: FrameInput, scale: TimeScale, ticks: readonly { time: number; label: string }[]): void {
  const { theme, width, headerWidth, axisHeight } = input;
  ctx.fillStyle = theme.axisBackground;
  ctx.fillRect(0, 0, width, axisHeight);
  ctx.font = theme.axisFont;
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  ctx.fillStyle = theme.mutedText;
  const duration = input.view.end - input.view.start;
  ctx.fillText(`window ${formatDuration(duration)}${input.loading ? " · loading…" : ""}`, 8, axisHeight / 2);

  ctx.save();
  ctx.beginPath();
  ctx.rect(headerWidth, 0, width - headerWidth, axisHeight);
  ctx.clip();
  ctx.strokeStyle = theme.mutedText;
  ctx.beginPath();
  for (const tick of ticks) {
    const x = Math.round(headerWidth + scale.timeToPx(tick.time)) + 0.5;
    ctx.moveTo(x, axisHeight - 6);
    ctx.lineTo(x, axisHeight);
  }
  ctx.stroke();
  ctx.fillStyle = theme.text;
  for (const tick of ticks) {
    ctx.fillText(tick.label, headerWidth + scale.timeToPx(tick.time) + 4, axisHeight / 2 - 2);
  }
  if (input.range !== null) {
    // The measurement's duration, in a box centred over it.
    const x0 = headerWidth + scale.timeToPx(input.range.start);
    const x1 = headerWidth + scale.timeToPx(input.range.end);
    const label = formatDuration(input.range.end - input.range.start);
    const boxWidth = label.length * 7 + 12;
    const centre = Math.min(Math.max((x0 + x1) / 2, headerWidth + boxWidth / 2), width - boxWidth / 2);
    ctx.fillStyle = theme.accent;
    ctx.fillRect(centre - boxWidth / 2, 2, boxWidth, axisHeight - 4);
    ctx.fillStyle = theme.background;
    ctx.textAlign = "center";
    ctx.fillText(label, centre, axisHeight / 2);
    ctx.textAlign = "left";
  }
  ctx.restore();
  ctx.strokeStyle = theme.border;
  ctx.beginPath();
  ctx.moveTo(0, axisHeight - 0.5);
  ctx.lineTo(width, axisHeight - 0.5);
  ctx.stroke();
}
