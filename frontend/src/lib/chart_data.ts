// Shapes analysis answers into what the charts draw. Pure.

export interface ChartLayer {
  readonly label: string;
  readonly color: string;
  /** One value per column (NaN and negatives count as 0). */
  readonly values: readonly number[];
}

export interface StackedColumns {
  /** x positions 0..n-1, one per column. */
  readonly x: number[];
  /**
   * Cumulative tops of the layers, TOP layer first: each series is drawn as bars from 0 up
   * to its top, and drawing the tallest first lets each lower layer paint over it, so every
   * layer shows exactly its own part of the column.
   */
  readonly tops: number[][];
  /** Labels and colours in the same (top first) order as `tops`. */
  readonly layers: readonly Pick<ChartLayer, "label" | "color">[];
  /** Height of each column (the sum of its layers). */
  readonly totals: number[];
}

function clean(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}

/** Stacks layers (given BOTTOM first, as the breakdown's priority order lists them). */
export function stackColumns(columnCount: number, layers: readonly ChartLayer[]): StackedColumns {
  const x = Array.from({ length: columnCount }, (_, index) => index);
  const running = new Array<number>(columnCount).fill(0);
  const bottomFirstTops = layers.map((layer) =>
    x.map((index) => {
      running[index] = (running[index] ?? 0) + clean(layer.values[index]);
      return running[index] ?? 0;
    }),
  );
  return {
    x,
    tops: bottomFirstTops.reverse(),
    layers: layers.map(({ label, color }) => ({ label, color })).reverse(),
    totals: running,
  };
}

/** The `n` rows with the largest finite, positive `value`, largest first (ties keep their order). */
export function topN<T>(rows: readonly T[], value: (row: T) => number, n: number): T[] {
  return rows
    .map((row, index) => ({ row, index, value: value(row) }))
    .filter((entry) => Number.isFinite(entry.value) && entry.value > 0)
    .sort((a, b) => b.value - a.value || a.index - b.index)
    .slice(0, Math.max(0, n))
    .map((entry) => entry.row);
}

/**
 * Short x-axis labels for steps: the N of names ending in "#N" (ProfilerStep#12 → "12"),
 * else the names themselves when they are distinct and short, else 1, 2, 3...
 */
export function stepAxisLabels(names: readonly string[]): string[] {
  const numbers = names.map((name) => /#(\d+)$/.exec(name)?.[1] ?? null);
  if (numbers.every((number) => number !== null)) return numbers as string[];
  const distinct = new Set(names).size === names.length;
  if (distinct && names.every((name) => name.length <= 14)) return [...names];
  return names.map((_, index) => String(index + 1));
}

/**
 * The step axis's title: the steps' own name before "#N" ("ProfilerStep #" for torch,
 * "ProfileStep #" for Paddle), else "Step".
 */
export function stepAxisTitle(names: readonly string[]): string {
  const prefixes = new Set(names.map((name) => /^(.*\S)\s*#\d+$/.exec(name)?.[1] ?? null));
  const [prefix] = [...prefixes];
  return prefixes.size === 1 && prefix !== null && prefix !== undefined && prefix.length <= 24 ? `${prefix} #` : "Step";
}

/** Shares of a whole that sum to 1 (each part clamped to 0..1); all zero when the whole is 0. */
export function shares(parts: readonly number[]): number[] {
  const cleaned = parts.map((part) => clean(part));
  const total = cleaned.reduce((sum, part) => sum + part, 0);
  return cleaned.map((part) => (total > 0 ? part / total : 0));
}

/** A time chart's scales: x from 0 to the last time after `origin` (at least 1), y from 0 to `yTop`. */
export interface TimeScale {
  /** The times after `origin`, the chart's x data. */
  readonly xs: number[];
  readonly xMax: number;
  /** The y axis's top: the last of `ticks` when they are given, else 10% above the highest value (1 when none). */
  readonly yTop: number;
  /** The y ticks for the highest value plus 5% (null: the chart's own). */
  readonly ticks: number[] | null;
}

/**
 * The scales of a time chart: the highest value of any series and of the reference lines kept in scale (a line
 * with inScale false is named at the top edge instead) decides the y axis's top, with room above it for a marker.
 */
export function timeScale(
  time: readonly number[],
  origin: number,
  series: readonly { readonly values: readonly number[] }[],
  lines: readonly { readonly y: number; readonly inScale?: boolean }[],
  yTicks?: (max: number) => number[],
): TimeScale {
  const xs = time.map((t) => t - origin);
  const xMax = xs.length > 0 ? Math.max(xs[xs.length - 1] ?? 0, 1) : 1;
  let yMax = 0;
  for (const one of series) for (const value of one.values) if (Number.isFinite(value) && value > yMax) yMax = value;
  for (const line of lines) if (line.inScale !== false && line.y > yMax) yMax = line.y;
  const ticks = yTicks?.(yMax > 0 ? yMax * 1.05 : 0) ?? null;
  const yTop = ticks !== null ? (ticks[ticks.length - 1] ?? 1) : yMax > 0 ? yMax * 1.1 : 1;
  return { xs, xMax, yTop, ticks };
}
