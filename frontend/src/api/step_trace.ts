// The `steptrace` route: each step split into iteration gap, forward, backward, optimizer,
// communication, tail and other (µs). A phase the backend could not derive is null (never a
// made-up number); `fpAndBp` holds forward + backward, also when only their sum is known
// (MindSpore's step trace file, or a forward start after backward started).
import type { ApiClient } from "./client";
import { isObject, listField, nullableNumberField, nullableStringField, numberField, objectOf, parsedResult, stringField } from "./json_fields";
import type { ApiResult, SpanRef } from "./types";

export const STEP_PHASES = ["gap", "forward", "backward", "optimizer", "communication", "tail", "other"] as const;
export type StepPhase = (typeof STEP_PHASES)[number];

export type PhaseValues = Readonly<Record<StepPhase, number | null>>;

export interface StepTraceRow {
  readonly name: string;
  /** µs in the trace's time base; null for rows of MindSpore's step trace file. */
  readonly start: number | null;
  readonly dur: number;
  readonly phases: PhaseValues;
  readonly fpAndBp: number | null;
  /** Host time in data loading ranges of the step (part of the gap); null when the span has none. */
  readonly dataloader: number | null;
  /** µs from the step's start. */
  readonly forwardStart: number | null;
  readonly backwardEnd: number | null;
  readonly missing: readonly StepPhase[];
  readonly notes: readonly string[];
}

export interface StepTraceMarkers {
  readonly steps: string | null;
  readonly forwardStart: string | null;
  readonly backward: string | null;
  readonly optimizer: string | null;
  readonly dataloader: string | null;
  readonly communication: string | null;
  /** "host" or "device" (trace-derived answers); null for MindSpore's file. */
  readonly timeBase: string | null;
}

export interface StepTraceData {
  /** "trace" (derived from the span's events) or "mindspore_step_trace" (the profiler's own file). */
  readonly source: string;
  readonly stepSource: string;
  readonly steps: readonly StepTraceRow[];
  readonly average: {
    readonly dur: number | null;
    readonly phases: PhaseValues;
    readonly fpAndBp: number | null;
    readonly dataloader: number | null;
    readonly steps: number;
  };
  readonly markers: StepTraceMarkers;
  /** The points in effect: named by the user, or by MindSpore's point info file. */
  readonly fpPoint: string | null;
  readonly bpPoint: string | null;
  readonly notes: readonly string[];
}

export interface StepTracePoints {
  readonly fpPoint: string;
  readonly bpPoint: string;
}

function phaseValues(value: unknown): PhaseValues {
  const object = objectOf(value);
  const out = {} as Record<StepPhase, number | null>;
  for (const phase of STEP_PHASES) out[phase] = nullableNumberField(object, phase);
  return out;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === "string") : [];
}

function isPhase(value: string): value is StepPhase {
  return (STEP_PHASES as readonly string[]).includes(value);
}

function parseRow(value: unknown): StepTraceRow | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  const dur = numberField(value, "dur");
  if (!Number.isFinite(dur)) return null;
  return {
    name: value["name"],
    start: nullableNumberField(value, "start"),
    dur,
    phases: phaseValues(value["phases"]),
    fpAndBp: nullableNumberField(value, "fp_and_bp"),
    dataloader: nullableNumberField(value, "dataloader"),
    forwardStart: nullableNumberField(value, "forward_start"),
    backwardEnd: nullableNumberField(value, "backward_end"),
    missing: strings(value["missing"]).filter(isPhase),
    notes: strings(value["notes"]),
  };
}

export function parseStepTrace(json: unknown): StepTraceData {
  if (!isObject(json) || !Array.isArray(json["steps"])) throw new Error("the step trace answer has no 'steps' list");
  const average = objectOf(json["average"]);
  const markers = objectOf(json["markers"]);
  const points = objectOf(json["points"]);
  return {
    source: stringField(json, "source", "trace"),
    stepSource: stringField(json, "step_source"),
    steps: listField(json, "steps", parseRow),
    average: {
      dur: nullableNumberField(average, "dur"),
      phases: phaseValues(average["phases"]),
      fpAndBp: nullableNumberField(average, "fp_and_bp"),
      dataloader: nullableNumberField(average, "dataloader"),
      steps: Math.max(0, Math.round(numberField(average, "steps") || 0)),
    },
    markers: {
      steps: nullableStringField(markers, "steps"),
      forwardStart: nullableStringField(markers, "forward_start"),
      backward: nullableStringField(markers, "backward"),
      optimizer: nullableStringField(markers, "optimizer"),
      dataloader: nullableStringField(markers, "dataloader"),
      communication: nullableStringField(markers, "communication"),
      timeBase: nullableStringField(markers, "time_base"),
    },
    fpPoint: nullableStringField(points, "fp_point"),
    bpPoint: nullableStringField(points, "bp_point"),
    notes: strings(json["notes"]),
  };
}

/** Empty points are not sent: the backend then uses the trace's markers. */
export async function fetchStepTrace(
  api: ApiClient,
  ref: SpanRef,
  points: StepTracePoints,
  signal?: AbortSignal,
): Promise<ApiResult<StepTraceData>> {
  const params: Record<string, string> = {};
  if (points.fpPoint.trim() !== "") params["fp_point"] = points.fpPoint.trim();
  if (points.bpPoint.trim() !== "") params["bp_point"] = points.bpPoint.trim();
  return parsedResult(await api.spanRoute("steptrace", ref, params, signal), "steptrace", parseStepTrace);
}
