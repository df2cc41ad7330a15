// The `steptrace` route: each step split into phases (gap, forward, backward, optimizer,
// communication, tail, other), from the trace's markers, the named fp/bp points, or MindSpore's
// step trace file. Times in µs. The answer's type is the contract's (schema.ts).
import type { ApiClient } from "./client";
import type { Answer, Schema } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export const STEP_PHASES = ["gap", "forward", "backward", "optimizer", "communication", "tail", "other"] as const;
export type StepPhase = (typeof STEP_PHASES)[number];

/** Phase → µs (null where the phase cannot be derived). */
export type PhaseValues = Readonly<Record<StepPhase, number | null>>;

export type StepTraceData = Answer<"steptrace">;
export type StepTraceRow = Schema<"StepTraceRow">;
export type StepTraceMarkers = StepTraceData["markers"];

/** The operators the page asks the phases to start and end at ("" for the trace's own markers). */
export interface StepTracePoints {
  readonly fpPoint: string;
  readonly bpPoint: string;
}

export function fetchStepTrace(api: ApiClient, ref: SpanRef, points: StepTracePoints, signal?: AbortSignal): Promise<ApiResult<StepTraceData>> {
  const params: Record<string, string> = {};
  if (points.fpPoint.trim() !== "") params["fp_point"] = points.fpPoint.trim();
  if (points.bpPoint.trim() !== "") params["bp_point"] = points.bpPoint.trim();
  return api.spanRoute("steptrace", ref, params, signal);
}
