// The `datapipeline` route: is the span waiting for data? Per-step data wait against compute,
// a verdict with its evidence, recommendations, and MindSpore's MindData pipeline when the span
// has its files. Times in µs, ratios 0..1. Names (operators, iterators) are untrusted text.
// The answer's type is the contract's (schema.ts).
import type { ApiClient } from "./client";
import type { Answer, Item, Schema } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export type DataPipelineData = Answer<"datapipeline">;
export type DataPipelineStep = Item<DataPipelineData["steps"]>;
export type DataPipelineSummary = DataPipelineData["summary"];
export type LoaderInfo = DataPipelineData["loader"];
export type Verdict = DataPipelineData["verdict"];
export type VerdictStatus = Verdict["status"];
export type MindDataPipeline = Schema<"MindDataPipeline">;
export type MindDataOperator = Item<MindDataPipeline["operators"]>;
export type MindDataQueue = NonNullable<MindDataPipeline["device_queue"]>;
export type MindDataGetNext = NonNullable<MindDataPipeline["get_next"]>;
export type MindDataBottleneck = NonNullable<MindDataPipeline["bottleneck"]>;

/** The operators in data-flow order (the backend's chain, then any it left out). */
export function operatorsInFlowOrder(pipeline: MindDataPipeline): MindDataOperator[] {
  const byId = new Map(pipeline.operators.map((op) => [op.op_id, op] as const));
  const ordered = pipeline.chain.flatMap((id) => {
    const op = byId.get(id);
    return op !== undefined ? [op] : [];
  });
  const listed = new Set(ordered.map((op) => op.op_id));
  return [...ordered, ...pipeline.operators.filter((op) => !listed.has(op.op_id))];
}

export function fetchDataPipeline(api: ApiClient, ref: SpanRef, signal?: AbortSignal): Promise<ApiResult<DataPipelineData>> {
  return api.spanRoute("datapipeline", ref, {}, signal);
}
