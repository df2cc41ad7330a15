// The `modules` route: the nn.Module hierarchy of a span (node 0 is the "(model)" root) with
// calls and forward/backward time per module, host and device, µs.
import type { ApiClient } from "./client";
import { booleanField, isObject, nullableStringField, parsedResult } from "./json_fields";
import type { ApiResult, SpanRef } from "./types";

export interface ModuleTree {
  readonly name: readonly string[];
  /** Parent node, -1 for the root. */
  readonly parent: readonly number[];
  readonly calls: readonly number[];
  readonly forwardHost: readonly number[];
  readonly forwardDevice: readonly number[];
  readonly backwardHost: readonly number[];
  readonly backwardDevice: readonly number[];
}

export interface ModulesData {
  readonly available: boolean;
  readonly hint: string | null;
  /** null when not available. */
  readonly nodes: ModuleTree | null;
}

function numbers(value: unknown, length: number): number[] {
  const list = Array.isArray(value) ? value : [];
  return Array.from({ length }, (_, i) => {
    const entry: unknown = list[i];
    return typeof entry === "number" && Number.isFinite(entry) ? entry : Number.NaN;
  });
}

function parseTree(value: unknown): ModuleTree | null {
  if (!isObject(value) || !Array.isArray(value["name"])) return null;
  const name = value["name"].map((entry) => (typeof entry === "string" ? entry : String(entry)));
  const length = name.length;
  // A parent must come before its child: anything else would make a cycle or an orphan.
  const parent = numbers(value["parent"], length).map((p, i) => (i === 0 ? -1 : Number.isInteger(p) && p >= 0 && p < i ? p : 0));
  return {
    name,
    parent,
    calls: numbers(value["calls"], length),
    forwardHost: numbers(value["forward_host"], length),
    forwardDevice: numbers(value["forward_device"], length),
    backwardHost: numbers(value["backward_host"], length),
    backwardDevice: numbers(value["backward_device"], length),
  };
}

export function parseModules(json: unknown): ModulesData {
  if (!isObject(json) || typeof json["available"] !== "boolean") throw new Error("the modules answer has no 'available' flag");
  const nodes = parseTree(json["nodes"]);
  return { available: booleanField(json, "available") && nodes !== null && nodes.name.length > 0, hint: nullableStringField(json, "hint"), nodes };
}

export async function fetchModules(api: ApiClient, ref: SpanRef, signal?: AbortSignal): Promise<ApiResult<ModulesData>> {
  return parsedResult(await api.spanRoute("modules", ref, {}, signal), "modules", parseModules);
}
