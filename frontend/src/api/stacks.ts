// The `flamegraph` route (the aggregated call tree of a span, node 0 the root, parents before
// children) and the address of its folded-stacks text download. Times µs.
import type { ApiClient } from "./client";
import { isObject, numberField, objectOf, parsedResult } from "./json_fields";
import type { ApiResult, SpanRef } from "./types";

export const FLAME_WEIGHTS = ["host", "device"] as const;
export type FlameWeight = (typeof FLAME_WEIGHTS)[number];

export function isFlameWeight(value: string | null): value is FlameWeight {
  return (FLAME_WEIGHTS as readonly (string | null)[]).includes(value);
}

/** The call tree as the route sends it: one array per field, one entry per node. */
export interface FlameGraphData {
  readonly weight: FlameWeight;
  /** Total of the root, µs. */
  readonly total: number;
  readonly names: readonly string[];
  readonly parent: Int32Array;
  /** Index into `names`. */
  readonly name: Int32Array;
  readonly self: Float64Array;
  readonly totalTime: Float64Array;
  readonly calls: Float64Array;
}

function numbers(value: unknown): number[] {
  return Array.isArray(value) ? value.map((entry) => (typeof entry === "number" && Number.isFinite(entry) ? entry : Number.NaN)) : [];
}

export function parseFlameGraph(json: unknown): FlameGraphData {
  if (!isObject(json) || !isObject(json["nodes"]) || !Array.isArray(json["names"])) {
    throw new Error("the flame graph answer has no 'nodes' and 'names'");
  }
  const nodes = objectOf(json["nodes"]);
  const parent = numbers(nodes["parent"]);
  const name = numbers(nodes["name"]);
  const self = numbers(nodes["self"]);
  const total = numbers(nodes["total"]);
  const calls = numbers(nodes["calls"]);
  const count = Math.min(parent.length, name.length, self.length, total.length, calls.length);
  const names = json["names"].map((entry) => (typeof entry === "string" ? entry : String(entry)));
  const weight = json["weight"];
  const rootTotal = numberField(json, "total");
  return {
    weight: weight === "device" ? "device" : "host",
    total: Number.isFinite(rootTotal) ? rootTotal : (total[0] ?? 0),
    names,
    parent: Int32Array.from(parent.slice(0, count), (value) => (Number.isInteger(value) ? value : -2)),
    name: Int32Array.from(name.slice(0, count), (value) => (Number.isInteger(value) && value >= 0 && value < names.length ? value : -1)),
    self: Float64Array.from(self.slice(0, count)),
    totalTime: Float64Array.from(total.slice(0, count)),
    calls: Float64Array.from(calls.slice(0, count)),
  };
}

export async function fetchFlameGraph(
  api: ApiClient,
  ref: SpanRef,
  weight: FlameWeight,
  signal?: AbortSignal,
): Promise<ApiResult<FlameGraphData>> {
  return parsedResult(await api.spanRoute("flamegraph", ref, { weight }, signal), "flamegraph", parseFlameGraph);
}

/** Where the folded stacks (`frame;frame;leaf µs` lines, for flamegraph.pl and speedscope) download from. */
export function foldedStacksUrl(api: ApiClient, ref: SpanRef, weight: FlameWeight): string {
  return api.url("stacks/folded", { run: ref.run, worker: ref.worker, span: ref.span, weight });
}
