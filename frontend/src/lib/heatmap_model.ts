// The rank × step heat map's pure logic: which ranks a pixel row stands for (with 1,000 ranks a row of
// pixels shows several, the worst of them), the colour of a value, which cell lies under the pointer,
// and the figures the tooltip lists. No DOM.
import type { Cells, StepMatrix } from "../api/rank_steps";
import { formatDuration, formatPercent } from "./format";
import { rankLabel } from "./distributed_model";

export type HeatMetric = "step_time" | "communication" | "exposed_communication";

export const HEAT_METRICS: readonly { readonly id: HeatMetric; readonly label: string }[] = [
  { id: "step_time", label: "Step time" },
  { id: "communication", label: "Communication" },
  { id: "exposed_communication", label: "Exposed communication" },
];

export const HEAT_DEFINITIONS: Readonly<Record<HeatMetric, string>> = {
  step_time:
    "Step time of each rank's step (the Overview's steps, matched across ranks by name). Colour: the cell against " +
    "the median of its step over the ranks — blue faster, red slower (full red at +50%): a straggler is a red row, " +
    "a slow step a red cell. A step's slowest rank is framed when it is 10% or more above the median (with more " +
    "ranks than rows of pixels, a row shows the worst of its ranks).",
  communication:
    "Communication: time a collective runs in the step (the Distributed view's definition, overlap included). " +
    "Colour: darker is more, against the largest cell of the matrix.",
  exposed_communication:
    "Exposed communication: communication that no computation overlaps (the Overview's Communication category). " +
    "Colour: darker is more, against the largest cell of the matrix.",
};

export function isHeatMetric(value: string | null): value is HeatMetric {
  return HEAT_METRICS.some((metric) => metric.id === value);
}

export function cellsOf(matrix: StepMatrix, metric: HeatMetric): Cells {
  return metric === "step_time" ? matrix.step_time : metric === "communication" ? matrix.communication : matrix.exposed_communication;
}

/** The tallest row a rank gets (CSS px: a table row's height, so two ranks read as two rows, not two lines). */
export const MAX_ROW_PX = 28;
/** The map's height at most (CSS px): beyond, a row of pixels stands for several ranks. */
export const MAX_MAP_PX = 560;
/** The narrowest step column (CSS px): more steps than fit at this width scroll sideways. */
export const MIN_COLUMN_PX = 3;

export interface RowLayout {
  /** Rows of pixels drawn (CSS px each: `rowHeight`). */
  readonly rows: number;
  readonly rowHeight: number;
  /** The ranks (row indices of the matrix) that row `i` shows: [first[i], first[i + 1]). */
  readonly first: readonly number[];
}

/**
 * One row per rank while they fit in `maxPx` at one pixel or more; beyond, each row of pixels shows
 * consecutive ranks (1,000 ranks in 560 px: one or two ranks per row), drawn as the worst of them.
 */
export function rowLayout(rankCount: number, maxPx = MAX_MAP_PX): RowLayout {
  if (rankCount <= 0) return { rows: 0, rowHeight: MAX_ROW_PX, first: [0] };
  if (rankCount <= maxPx) {
    const rowHeight = Math.max(1, Math.min(MAX_ROW_PX, Math.floor(maxPx / rankCount)));
    return { rows: rankCount, rowHeight, first: Array.from({ length: rankCount + 1 }, (_, i) => i) };
  }
  const rows = maxPx;
  const first = Array.from({ length: rows + 1 }, (_, i) => Math.floor((i * rankCount) / rows));
  return { rows, rowHeight: 1, first };
}

/**
 * Width of a step's column (CSS px): the steps share the `width` px the page gives the map, so the map is as
 * wide as the page whatever the number of steps (3 steps on a 1,100 px page: 366 px each), but never narrower
 * than MIN_COLUMN_PX (then the map scrolls sideways).
 */
export function columnWidth(steps: number, width: number): number {
  if (steps <= 0) return 0;
  return Math.max(MIN_COLUMN_PX, Math.floor(width / steps));
}

/**
 * The rank a row of pixels stands for in a column: the worst of its ranks (longest step time, most
 * communication), so a straggler among a thousand ranks still shows. -1 when none of them has the step.
 */
export function worstRank(cells: Cells, layout: RowLayout, row: number, column: number): number {
  let best = -1;
  let bestValue = -Infinity;
  for (let r = layout.first[row] ?? 0; r < (layout.first[row + 1] ?? 0); r += 1) {
    const value = cells[r]?.[column] ?? null;
    if (value !== null && value > bestValue) {
      bestValue = value;
      best = r;
    }
  }
  return best;
}

/** A step's slowest rank is framed when it is at least this much above the step's median. */
export const STRAGGLER_FRAME_SHARE = 0.1;

/** The row of pixels of a step's slowest rank when it is clearly slower than the step's median, else -1. */
export function stragglerRow(matrix: StepMatrix, layout: RowLayout, step: number): number {
  const rank = matrix.slowest_rank[step] ?? -1;
  const median = matrix.step_median[step] ?? null;
  const value = rank >= 0 ? (matrix.step_time[rank]?.[step] ?? null) : null;
  if (value === null || median === null || median <= 0 || value < median * (1 + STRAGGLER_FRAME_SHARE)) return -1;
  // The row whose ranks include it: the last row starting at or before it.
  let lo = 0;
  let hi = layout.rows - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((layout.first[mid] ?? 0) <= rank) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The largest value of the matrix (the scale of the communication colours), 0 when empty. */
export function maxCell(cells: Cells): number {
  let max = 0;
  for (const row of cells) for (const value of row) if (value !== null && value > max) max = value;
  return max;
}

type Rgb = readonly [number, number, number];
const FASTER: Rgb = [49, 110, 196];
const NEUTRAL: Rgb = [236, 238, 242];
const SLOWER: Rgb = [205, 38, 38];
const MORE: Rgb = [74, 20, 140];
export const MISSING_COLOUR = "rgb(190, 190, 190)";

function mix(a: Rgb, b: Rgb, t: number): string {
  const k = Math.max(0, Math.min(1, t));
  const channel = (i: 0 | 1 | 2): number => Math.round(a[i] + (b[i] - a[i]) * k);
  return `rgb(${channel(0)}, ${channel(1)}, ${channel(2)})`;
}

/** Full red at this much above the step's median; full blue at this much below. */
export const RELATIVE_SATURATION = 0.5;

/**
 * A cell's colour. Step time: against the step's median (blue faster, red slower, saturating at ±50%).
 * Communication: against the matrix's largest cell. Missing: grey.
 */
export function heatColour(metric: HeatMetric, value: number | null, median: number | null, max: number): string {
  if (value === null) return MISSING_COLOUR;
  if (metric === "step_time") {
    if (median === null || median <= 0) return mix(NEUTRAL, NEUTRAL, 0);
    const relative = value / median - 1;
    return relative >= 0 ? mix(NEUTRAL, SLOWER, relative / RELATIVE_SATURATION) : mix(NEUTRAL, FASTER, -relative / RELATIVE_SATURATION);
  }
  return mix(NEUTRAL, MORE, max > 0 ? value / max : 0);
}

export interface CellHit {
  /** Row of the matrix (rank index) and column (step index). */
  readonly rank: number;
  readonly step: number;
  /** How many ranks the row of pixels stands for. */
  readonly ranksInRow: number;
}

/** The cell under a point (CSS px from the map's top left), or null. */
export function cellAt(
  matrix: StepMatrix,
  metric: HeatMetric,
  layout: RowLayout,
  colWidth: number,
  x: number,
  y: number,
): CellHit | null {
  if (x < 0 || y < 0 || colWidth <= 0) return null;
  const step = Math.floor(x / colWidth);
  const row = Math.floor(y / layout.rowHeight);
  if (step >= matrix.steps.length || row >= layout.rows) return null;
  const rank = worstRank(cellsOf(matrix, metric), layout, row, step);
  if (rank < 0) return null;
  return { rank, step, ranksInRow: (layout.first[row + 1] ?? 0) - (layout.first[row] ?? 0) };
}

/** The tooltip's lines for a cell: who, which step, the three figures, the step time against the median. */
export function cellLines(matrix: StepMatrix, hit: CellHit): string[] {
  const rank = matrix.ranks[hit.rank];
  const at = (cells: Cells): number | null => cells[hit.rank]?.[hit.step] ?? null;
  const stepTime = at(matrix.step_time);
  const median = matrix.step_median[hit.step] ?? null;
  const lines = [`${rank !== undefined ? rankLabel(rank.rank, rank.worker) : "?"} · ${matrix.steps[hit.step] ?? ""}`];
  if (hit.ranksInRow > 1) lines.push(`The worst of ${hit.ranksInRow} ranks drawn in this row`);
  const vsMedian =
    stepTime !== null && median !== null && median > 0 ? ` (${stepTime >= median ? "+" : ""}${formatPercent(stepTime / median - 1)} vs median ${formatDuration(median)})` : "";
  lines.push(`Step time ${stepTime !== null ? formatDuration(stepTime) : "—"}${vsMedian}`);
  const comm = at(matrix.communication);
  const exposed = at(matrix.exposed_communication);
  lines.push(`Communication ${comm !== null ? formatDuration(comm) : "—"}`);
  lines.push(`Exposed communication ${exposed !== null ? formatDuration(exposed) : "—"}`);
  if (matrix.slowest_rank[hit.step] === hit.rank) lines.push("The slowest rank of this step");
  lines.push("Click to open this rank's step in the trace");
  return lines;
}

/** The trace window of a cell (the worker's own trace time, µs): the step, or null when unknown. */
export function cellWindow(matrix: StepMatrix, hit: CellHit): { start: number; end: number } | null {
  const start = matrix.step_start[hit.rank]?.[hit.step] ?? null;
  const length = matrix.step_time[hit.rank]?.[hit.step] ?? null;
  return start !== null && length !== null ? { start, end: start + length } : null;
}
