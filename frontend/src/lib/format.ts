// Number and label formatting shared by the views. Pure: no DOM, no locale surprises
// (fixed "en-US" grouping so tests and screenshots are stable).

const DASH = "—";
const countFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** Three significant digits without exponent: 1.23, 12.3, 123. */
function threeDigits(value: number): string {
  const magnitude = Math.abs(value);
  const decimals = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2;
  return value.toFixed(decimals);
}

/** A duration given in microseconds (the API's unit): "850 µs", "1.25 ms", "3.20 s", "2 min 5 s". */
export function formatDuration(us: number): string {
  if (!Number.isFinite(us)) return DASH;
  const sign = us < 0 ? "-" : "";
  const abs = Math.abs(us);
  if (abs < 1e3) return `${sign}${threeDigits(abs)} µs`;
  if (abs < 1e6) return `${sign}${threeDigits(abs / 1e3)} ms`;
  if (abs < 60e6) return `${sign}${threeDigits(abs / 1e6)} s`;
  const totalSeconds = Math.round(abs / 1e6);
  const minutes = Math.floor(totalSeconds / 60);
  return `${sign}${minutes} min ${totalSeconds - minutes * 60} s`;
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"] as const;

/** A size in bytes, binary units: "512 B", "1.50 KiB", "-3.00 MiB" (frees are negative). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return DASH;
  const sign = bytes < 0 ? "-" : "";
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const text = unit === 0 ? String(Math.round(value)) : threeDigits(value);
  return `${sign}${text} ${BYTE_UNITS[unit]}`;
}

/** A ratio 0..1 (the API's unit) as a percentage: 0.4213 → "42.1%". */
export function formatPercent(fraction: number, decimals = 1): string {
  if (!Number.isFinite(fraction)) return DASH;
  return `${(fraction * 100).toFixed(decimals)}%`;
}

/** A count with thousands separators: 1234567 → "1,234,567". */
export function formatCount(count: number): string {
  return Number.isFinite(count) ? countFormat.format(count) : DASH;
}

const YEAR_2000_MS = Date.UTC(2000, 0, 1);
const YEAR_2100_MS = Date.UTC(2100, 0, 1);
// A numeric span name is a timestamp in s, ms (torch before 2.x), µs or ns (torch 2.x).
const MS_PER_UNIT = [1e3, 1, 1e-3, 1e-6] as const;

/**
 * The wall time a numeric span name stands for, in ms since the epoch, when it reads as a
 * timestamp between 2000 and 2100 in one of s/ms/µs/ns; otherwise null.
 */
export function spanTimestampMs(name: string): number | null {
  if (!/^\d{9,20}$/.test(name)) return null;
  const value = Number(name);
  for (const msPerUnit of MS_PER_UNIT) {
    const ms = value * msPerUnit;
    if (ms >= YEAR_2000_MS && ms < YEAR_2100_MS) return Math.round(ms);
  }
  return null;
}
