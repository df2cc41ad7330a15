// The `flamegraph` route (the aggregated call tree of a span, node 0 the root, parents before
// children) and the address of its folded-stacks text download. Times µs. The answer's type is
// the contract's (schema.ts); the flame layout reads its columns as typed arrays.
import type { ApiClient } from "./client";
import type { Answer } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export const FLAME_WEIGHTS = ["host", "device"] as const;
export type FlameWeight = (typeof FLAME_WEIGHTS)[number];

export function isFlameWeight(value: string | null): value is FlameWeight {
  return (FLAME_WEIGHTS as readonly (string | null)[]).includes(value);
}

export type FlameGraphAnswer = Answer<"flamegraph">;

/** Where the tree's Python frames come from (python_frames, call_stacks, none); null when the answer does not say. */
export type StacksFrom = NonNullable<FlameGraphAnswer["stacks_from"]>;

/** The answer's node columns as typed arrays (what the layout walks). */
export interface FlameGraphData {
  readonly weight: FlameWeight;
  readonly stacksFrom: StacksFrom | null;
  /** Why the tree has no Python frames and how to record them (with stacksFrom "none"). */
  readonly note: string | null;
  readonly total: number;
  readonly names: readonly string[];
  readonly parent: Int32Array;
  readonly name: Int32Array;
  readonly self: Float64Array;
  readonly totalTime: Float64Array;
  readonly calls: Float64Array;
}

/** What the flame layout walks: the names and the node columns (of this route's tree, or of a memory snapshot's). */
export type FlameColumns = Pick<FlameGraphData, "names" | "parent" | "name" | "self" | "totalTime" | "calls">;

export function flameColumns(tree: Pick<FlameGraphAnswer, "names" | "nodes">): FlameColumns {
  const nodes = tree.nodes;
  return {
    names: tree.names,
    parent: Int32Array.from(nodes.parent),
    name: Int32Array.from(nodes.name),
    self: Float64Array.from(nodes.self),
    totalTime: Float64Array.from(nodes.total),
    calls: Float64Array.from(nodes.calls),
  };
}

export function flameGraphData(answer: FlameGraphAnswer): FlameGraphData {
  return {
    weight: answer.weight,
    stacksFrom: answer.stacks_from ?? null,
    note: answer.note ?? null,
    total: answer.total,
    ...flameColumns(answer),
  };
}

export async function fetchFlameGraph(api: ApiClient, ref: SpanRef, weight: FlameWeight, signal?: AbortSignal): Promise<ApiResult<FlameGraphData>> {
  const result = await api.spanRoute("flamegraph", ref, { weight }, signal);
  return result.kind === "ok" ? { kind: "ok", data: flameGraphData(result.data) } : result;
}

export function foldedStacksUrl(api: ApiClient, ref: SpanRef, weight: FlameWeight): string {
  return api.url("stacks/folded", { run: ref.run, worker: ref.worker, span: ref.span, weight });
}
