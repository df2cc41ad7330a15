// Axis ticks people can read: byte axes step by 1, 2 or 5 times a power of ten of a binary unit
// (256 KiB, 2 MiB, 500 MiB), never 1.91 or 3.81 MiB. Pure.
import { formatBytes } from "./format";

const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500] as const;
const UNITS = [1, 1024, 1024 ** 2, 1024 ** 3, 1024 ** 4, 1024 ** 5] as const;

/** Ticks 0, step, 2·step, … up to the first at or above `max`, with at most `most` intervals. */
export function byteTicks(max: number, most = 5): number[] {
  if (!Number.isFinite(max) || max <= 0) return [0, 1];
  for (const unit of UNITS) {
    // Tick in the unit the values read in (below 1000 of it), so no tick crosses into the next unit.
    if (max / unit >= 1000 && unit !== UNITS[UNITS.length - 1]) continue;
    for (const step of STEPS) {
      const size = step * unit;
      const count = Math.ceil(max / size);
      if (count <= most) return Array.from({ length: count + 1 }, (_, i) => i * size);
    }
  }
  const size = Math.ceil(max / most);
  return Array.from({ length: most + 1 }, (_, i) => i * size);
}

/** A byte tick: "0", "512 KiB", "1.5 MiB", "2 MiB" (no trailing zeros). */
export function formatAxisBytes(value: number): string {
  if (value === 0) return "0";
  return formatBytes(value).replace(/\.0+ /, " ").replace(/(\.\d*[1-9])0+ /, "$1 ");
}
