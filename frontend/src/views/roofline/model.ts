// The Roofline chart's geometry, kept out of the DOM so it can be tested: which points are drawn (those with an
// intensity and an achieved rate), their size by time and colour by category, the axis ranges in decades, each
// roof as the vertices of its memory slope and flat part, and the point under the pointer. Pure.
import { efficiencyOf } from "../../api/efficiency";
import type { DeviceRoofs, Roof, RooflineData, RooflinePoint } from "../../api/roofline";

/** Category colours; the same keys as the backend's operator categories (model/operator_categories.py). */
export const CATEGORY_COLORS: Readonly<Record<string, string>> = {
  gemm: "#4e79a7",
  grouped_gemm: "#2f4b7c",
  convolution: "#f28e2b",
  attention: "#e15759",
  normalization: "#76b7b2",
  elementwise: "#59a14f",
  reduction: "#edc948",
  optimizer: "#b07aa1",
  communication: "#ff9da7",
  memory_copy: "#9c755f",
  triton: "#8cd17d",
  other: "#bab0ac",
};

/** Roof colours by precision (a darker shade for matrix peaks). */
export const ROOF_COLORS: Readonly<Record<string, string>> = {
  fp8: "#7b3294",
  int8: "#c2a5cf",
  bf16: "#1b7837",
  fp16: "#5aae61",
  tf32: "#2166ac",
  fp32: "#4393c3",
  fp64: "#b2182b",
};

export function categoryColor(category: string): string {
  return CATEGORY_COLORS[category] ?? CATEGORY_COLORS["other"]!;
}

export interface ChartPoint {
  readonly index: number;
  /** FLOPs per byte. */
  readonly x: number;
  /** Achieved FLOP/s. */
  readonly y: number;
  /** Radius, CSS px: by the square root of the group's time, so areas follow time. */
  readonly radius: number;
  readonly color: string;
}

export const MIN_RADIUS = 3;
export const MAX_RADIUS = 14;

/** The points that can be placed on log axes (an intensity and an achieved rate above zero). */
export function chartPoints(points: readonly RooflinePoint[]): ChartPoint[] {
  const drawable = points
    .map((point, index) => ({ point, index }))
    .filter(({ point }) => (point.intensity ?? 0) > 0 && (point.tflops_per_s ?? 0) > 0);
  const longest = drawable.reduce((best, { point }) => Math.max(best, point.time), 0);
  return drawable.map(({ point, index }) => ({
    index,
    x: point.intensity!,
    y: point.tflops_per_s! * 1e12,
    radius: longest > 0 ? MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * Math.sqrt(point.time / longest) : MIN_RADIUS,
    color: categoryColor(point.category),
  }));
}

/** Whole decades around the values (log axes read best from power of ten to power of ten). */
export function decadeRange(values: readonly number[], fallback: [number, number]): [number, number] {
  const positive = values.filter((value) => Number.isFinite(value) && value > 0);
  if (positive.length === 0) return fallback;
  const low = Math.min(...positive);
  const high = Math.max(...positive);
  const lo = 10 ** Math.floor(Math.log10(low));
  let hi = 10 ** Math.ceil(Math.log10(high));
  if (hi <= lo) hi = lo * 10;
  return [lo, hi];
}

/** A roof as vertices (x: FLOPs per byte, y: FLOP/s) over [xMin, xMax]: bandwidth·x up to the ridge, then flat. */
export function roofVertices(roof: Roof, bandwidth: number | null, xMin: number, xMax: number): Array<[number, number]> {
  if (bandwidth === null || !(bandwidth > 0)) return [[xMin, roof.peak], [xMax, roof.peak]];
  const ridge = roof.peak / bandwidth;
  if (ridge <= xMin) return [[xMin, roof.peak], [xMax, roof.peak]];
  if (ridge >= xMax) return [[xMin, bandwidth * xMin], [xMax, bandwidth * xMax]];
  return [[xMin, bandwidth * xMin], [ridge, roof.peak], [xMax, roof.peak]];
}

/** The roofs drawn for a device: the matrix roof of each precision its points ran in (all when none is known), and
 * the FP32 vector roof when vector work is drawn. */
export function roofsToDraw(device: DeviceRoofs, points: readonly RooflinePoint[]): Roof[] {
  const used = new Set(points.filter((point) => point.device === device.device).map((point) => `${point.unit}:${point.precision}`));
  const vector = [...used].some((key) => key.startsWith("vector:"));
  const picked = device.roofs.filter(
    (roof) =>
      (roof.unit === "matrix" && used.has(`matrix:${roof.precision}`)) ||
      (roof.unit === "vector" && vector && roof.precision === "fp32"),
  );
  if (vector && !picked.some((roof) => roof.unit === "vector")) {
    const fp32 = device.roofs.find((roof) => roof.precision === "fp32");
    if (fp32 !== undefined && !picked.includes(fp32)) picked.push(fp32);
  }
  return picked.length > 0 ? picked : [...device.roofs];
}

/** The point under the pointer: the nearest one whose circle (plus `slack` px) contains it; later (drawn on top) wins
 * ties. `position` maps a point to its CSS pixel position in the plot. */
export function pointAt(
  points: readonly ChartPoint[],
  px: number,
  py: number,
  position: (point: ChartPoint) => [number, number],
  slack = 3,
): ChartPoint | null {
  let best: ChartPoint | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const point of points) {
    const [x, y] = position(point);
    const distance = Math.hypot(x - px, y - py);
    if (distance <= point.radius + slack && distance <= bestDistance) {
      best = point;
      bestDistance = distance;
    }
  }
  return best;
}

/** The hover text of a point: operator, shape, and its figures. */
export function pointText(point: RooflinePoint, format: {
  time: (us: number) => string;
  rate: (flopsPerSecond: number | null) => string;
  figure: (value: number | null) => string;
  percent: (fraction: number) => string;
}): string {
  const e = efficiencyOf(point);
  const params = Object.entries(point.params)
    .map(([key, value]) => `${key}=${Array.isArray(value) ? `[${value.join(", ")}]` : String(value)}`)
    .join(" ");
  return [
    point.name,
    point.input_shape !== null ? `shapes ${point.input_shape}` : null,
    params !== "" ? params : null,
    `${point.category_label} · ${point.precision.toUpperCase()} ${point.unit} · ${point.calls} call${point.calls === 1 ? "" : "s"} · ${format.time(point.time)}`,
    `${format.rate(e.tflopsPerS !== null ? e.tflopsPerS * 1e12 : null)} · ${format.figure(e.intensity)} FLOP/byte`,
    e.rooflineShare !== null ? `${format.percent(e.rooflineShare)} of the roofline (${e.bound ?? "—"} bound)` : e.rooflineReason || null,
  ]
    .filter((line): line is string => line !== null)
    .join("\n");
}

/** Copy directions' colours (the backend's copies.DIRECTIONS). */
export const COPY_COLORS: Readonly<Record<string, string>> = {
  h2d: "#4e79a7",
  d2h: "#f28e2b",
  d2d: "#59a14f",
  p2p: "#b07aa1",
  memset: "#9c755f",
  other: "#bab0ac",
};

export interface CopyBandwidthSeries {
  /** Instants where some direction's bandwidth changes (trace µs), in order. */
  readonly time: readonly number[];
  /** Per direction present: its bandwidth (bytes/s) from each instant until the next. */
  readonly series: readonly { readonly direction: CopyDirection; readonly values: readonly number[] }[];
}

type CopyCalls = RooflineData["copies"]["calls"];
export type CopyDirection = CopyCalls["direction"][number];

/**
 * Copy bandwidth over time, per direction: at each instant the sum of the bandwidths (bytes over duration) of the
 * copies of that direction running then; each copy moves its bytes evenly over its duration. Calls without bytes
 * or duration add nothing. A direction with no copy running is exactly 0 (no rounding residue).
 */
export function copyBandwidthOverTime(calls: CopyCalls): CopyBandwidthSeries {
  const edges: { at: number; direction: CopyDirection; rate: number }[] = [];
  const count = Math.min(calls.start.length, calls.dur.length, calls.bytes.length, calls.direction.length);
  for (let i = 0; i < count; i++) {
    const start = calls.start[i]!;
    const dur = calls.dur[i]!;
    const bytes = calls.bytes[i]!;
    if (!(dur > 0) || !(bytes >= 0)) continue;
    const rate = (bytes * 1e6) / dur; // bytes per second (dur in µs)
    const direction = calls.direction[i]!;
    edges.push({ at: start, direction, rate }, { at: start + dur, direction, rate: -rate });
  }
  edges.sort((a, b) => a.at - b.at);
  const directions = [...new Set(edges.map((edge) => edge.direction))];
  const sum = new Map(directions.map((direction) => [direction, 0]));
  const running = new Map(directions.map((direction) => [direction, 0]));
  const time: number[] = [];
  const values = directions.map(() => [] as number[]);
  for (let i = 0; i < edges.length; ) {
    const at = edges[i]!.at;
    for (; i < edges.length && edges[i]!.at === at; i++) {
      const { direction, rate } = edges[i]!;
      sum.set(direction, sum.get(direction)! + rate);
      running.set(direction, running.get(direction)! + (rate > 0 ? 1 : -1));
    }
    time.push(at);
    directions.forEach((direction, d) => {
      if (running.get(direction)! <= 0) sum.set(direction, 0); // none running: no residue carried to the next copy
      values[d]!.push(Math.max(0, sum.get(direction)!));
    });
  }
  return { time, series: directions.map((direction, d) => ({ direction, values: values[d]! })) };
}
