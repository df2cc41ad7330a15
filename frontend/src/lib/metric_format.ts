// Formatting of the analysis views' numbers, on top of format.ts. Pure.
import type { EvidenceValue } from "../api/overview";
import { formatBytes, formatCount, formatDuration, formatPercent } from "./format";

const DASH = "—";
const fixedFormats = [0, 1, 2, 3].map(
  (digits) => new Intl.NumberFormat("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }),
);

/** A number with thousands separators and a fixed number of decimals (0..3). */
export function formatFixed(value: number, decimals: number): string {
  if (!Number.isFinite(value)) return DASH;
  const format = fixedFormats[Math.max(0, Math.min(3, Math.round(decimals)))] ?? fixedFormats[0];
  // Avoid "-0".
  const text = format!.format(value);
  return /^-0(\.0+)?$/.test(text) ? text.slice(1) : text;
}

/**
 * Microseconds as a plain number for table cells whose header names the unit: whole
 * microseconds from 100 µs up (the profiler's own resolution is 1 µs or finer), otherwise
 * enough decimals to keep three significant digits.
 */
export function formatMicrosNumber(us: number): string {
  if (!Number.isFinite(us)) return DASH;
  const magnitude = Math.abs(us);
  const decimals = magnitude >= 100 || magnitude === 0 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3;
  return formatFixed(us, decimals);
}

/** Microseconds with their unit: "98,589 µs". */
export function formatMicros(us: number): string {
  return Number.isFinite(us) ? `${formatMicrosNumber(us)} µs` : DASH;
}

/**
 * A chart legend's value where a µs table beside the chart shows the same figures: "98,589 µs (55.5%)", the
 * table's unit and the share of `total` (a page shows one quantity in one unit: not "98.6 ms" above "98,589 µs").
 */
export function formatLegendMicros(us: number, total: number): string {
  return `${formatMicros(us)} (${formatPercent(total > 0 ? us / total : Number.NaN)})`;
}

/** A value that may be unknown (null): "—" then. */
export function orDash<T>(value: T | null, format: (value: T) => string): string {
  return value === null ? DASH : format(value);
}

/** A plain quantity with up to `significant` significant digits and separators: 42.25, 641.5, 1,234; whole numbers as they are. */
export function formatQuantity(value: number, significant = 3): string {
  if (!Number.isFinite(value)) return DASH;
  const magnitude = Math.abs(value);
  if (magnitude === 0) return "0";
  // A whole number (a count: workers, ranks, steps) never reads "12.0".
  if (Number.isInteger(value)) return formatFixed(value, 0);
  const integerDigits = Math.floor(Math.log10(magnitude)) + 1;
  return formatFixed(value, Math.max(0, significant - integerDigits));
}

const SHARE_KEY = /(share|ratio|utilization|utilisation|occupancy|efficiency|fraction)$/;
const TIME_KEY = /(_us|_time|^time|latency|duration|cost)$/;
const BYTES_KEY = /bytes$/;
const COUNT_KEY = /(calls|count|steps|events|device|id)$/;

/** An evidence value of a recommendation, formatted by what its key says it is. */
export function formatEvidenceValue(key: string, value: EvidenceValue): string {
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    return value.length === 0 ? "none" : value.map((item) => (typeof item === "number" ? formatQuantity(item) : item)).join(", ");
  }
  const number = value as number;
  if (SHARE_KEY.test(key)) return formatPercent(number);
  if (TIME_KEY.test(key)) return formatTime(number);
  if (BYTES_KEY.test(key)) return formatBytes(number);
  if (COUNT_KEY.test(key) && Number.isInteger(number)) return formatCount(number);
  return formatQuantity(number);
}

const KEY_WORDS: Readonly<Record<string, string>> = {
  dataloader: "DataLoader",
  us: "time",
  tc: "Tensor Core",
  sm: "SM",
  gpu: "GPU",
  cpu: "CPU",
};

/** An evidence key for people: "dataloader_us" → "DataLoader time", "eligible_kernel_share" → "Eligible kernel share". */
export function evidenceLabel(key: string): string {
  const words = key
    .split("_")
    .filter((word) => word !== "")
    .map((word) => KEY_WORDS[word.toLowerCase()] ?? word.toLowerCase());
  const text = words.join(" ").replace(/\btensor core\b/gi, "Tensor Core");
  return text === "" ? key : text.charAt(0).toUpperCase() + text.slice(1);
}

/** A duration for people (µs in): like formatDuration, but an exact zero reads "0 µs". */
export function formatTime(us: number): string {
  return us === 0 ? "0 µs" : formatDuration(us);
}

/** An axis tick: like formatDuration, but zero is just "0". */
export function formatAxisDuration(us: number): string {
  return us === 0 ? "0" : formatDuration(us);
}

/**
 * A kernel name without what makes it long: the leading "void " and the parameter list of a
 * C++ signature ("void at::native::foo<4>(int, float*)" → "at::native::foo<4>"). For labels
 * only; tables and tooltips keep the full name.
 */
export function shortKernelName(name: string): string {
  let text = name.startsWith("void ") ? name.slice(5) : name;
  if (text.endsWith(")")) {
    // Find the "(" that opens the trailing parameter list, skipping nested parentheses.
    let depth = 0;
    for (let i = text.length - 1; i >= 0; i -= 1) {
      const char = text[i];
      if (char === ")") depth += 1;
      else if (char === "(") {
        depth -= 1;
        if (depth === 0) {
          if (i > 0) text = text.slice(0, i);
          break;
        }
      }
    }
  }
  return text.trim() === "" ? name : text;
}
