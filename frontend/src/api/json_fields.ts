// Small readers for the fields of analysis answers. The backend is ours, but a field that is
// missing or of the wrong type must not break a whole page: numbers fall back to NaN (shown
// as "—"), optional values to null, lists to empty.
import type { ApiResult } from "./types";

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The object itself, or an empty one. */
export function objectOf(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

/** A finite number, else NaN. */
export function numberField(object: JsonObject, key: string): number {
  const value = object[key];
  return typeof value === "number" && Number.isFinite(value) ? value : Number.NaN;
}

/** A finite number, or null when absent, null or not a number. */
export function nullableNumberField(object: JsonObject, key: string): number | null {
  const value = object[key];
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

export function stringField(object: JsonObject, key: string, fallback = ""): string {
  const value = object[key];
  return typeof value === "string" ? value : fallback;
}

export function nullableStringField(object: JsonObject, key: string): string | null {
  const value = object[key];
  return typeof value === "string" ? value : null;
}

export function booleanField(object: JsonObject, key: string): boolean {
  return object[key] === true;
}

/** The entries of a list field that `parse` accepts (it answers null to drop one). */
export function listField<T>(object: JsonObject, key: string, parse: (entry: unknown) => T | null): T[] {
  const value = object[key];
  if (!Array.isArray(value)) return [];
  const out: T[] = [];
  for (const entry of value) {
    const parsed = parse(entry);
    if (parsed !== null) out.push(parsed);
  }
  return out;
}

/** `{key: number}` maps (breakdowns, evidence); non-numbers are dropped. */
/** A JSON object of strings (other values are left out); empty when absent. */
export function stringMapField(object: JsonObject, key: string): Record<string, string> {
  const value = object[key];
  const out: Record<string, string> = {};
  if (!isObject(value)) return out;
  for (const [name, entry] of Object.entries(value)) if (typeof entry === "string") out[name] = entry;
  return out;
}

export function numberMapField(object: JsonObject, key: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(objectOf(object[key]))) {
    if (typeof value === "number" && Number.isFinite(value)) out[name] = value;
  }
  return out;
}

/** Turns an ok answer into parsed data; a malformed one becomes an error result. */
export function parsedResult<T>(result: ApiResult<unknown>, route: string, parse: (json: unknown) => T): ApiResult<T> {
  if (result.kind !== "ok") return result;
  try {
    return { kind: "ok", data: parse(result.data) };
  } catch (error) {
    return { kind: "error", status: 200, message: `Unexpected ${route} answer: ${(error as Error).message}` };
  }
}
