// The bodies of 202 and error answers, which may come from something other than our backend (a proxy, a
// TensorBoard in front of it, a server that is going down): checked before the UI trusts them. Ok answers are
// typed by the contract (schema.ts) and not checked again.

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Clamps a progress value to 0..1; anything not a finite number is unknown. */
export function parseProgress(value: unknown): number | null {
  if (typeof value !== "number" || !Number.isFinite(value)) return null;
  return Math.min(1, Math.max(0, value));
}

/** The `error` text of an error body, if it has one. */
export function errorMessageOf(json: unknown): string | null {
  return isObject(json) && typeof json["error"] === "string" ? json["error"] : null;
}
