// Ranks side by side (run level: one span of every worker).
// `distributed/matrix`: rank × step step time, communication and exposed communication (µs; null where a
// rank has no step of that name). `trace/ranks`: where one step of every worker lies on one time axis.
import type { ApiClient } from "./client";
import { isObject, listField, numberField, nullableNumberField, parsedResult, stringField } from "./json_fields";
import type { ApiResult } from "./types";

export interface MatrixRank {
  readonly worker: string;
  readonly rank: number;
  /** The worker's span at the chosen span index (what a click opens in the trace viewer). */
  readonly span: string;
}

/** Rows are ranks, columns steps; null where the rank has no such step. */
export type Cells = readonly (readonly (number | null)[])[];

export interface StepMatrix {
  readonly ranks: readonly MatrixRank[];
  readonly steps: readonly string[];
  readonly stepTime: Cells;
  readonly communication: Cells;
  readonly exposedCommunication: Cells;
  /** The step's start in the worker's own trace time (µs). */
  readonly stepStart: Cells;
  readonly stepMedian: readonly (number | null)[];
  /** Per step, the row of the slowest rank (-1: none). */
  readonly slowestRank: readonly number[];
}

function parseMatrixRank(value: unknown): MatrixRank | null {
  if (!isObject(value) || typeof value["worker"] !== "string") return null;
  return { worker: value["worker"], rank: numberField(value, "rank"), span: stringField(value, "span") };
}

function nullableNumber(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** A rank × step table, made rectangular: missing or malformed cells are null. */
function parseCells(value: unknown, rows: number, columns: number): Cells {
  const list = Array.isArray(value) ? value : [];
  const out: (number | null)[][] = [];
  for (let r = 0; r < rows; r += 1) {
    const row: unknown = list[r];
    const cells = Array.isArray(row) ? row : [];
    const parsed: (number | null)[] = new Array<number | null>(columns);
    for (let c = 0; c < columns; c += 1) parsed[c] = nullableNumber(cells[c]);
    out.push(parsed);
  }
  return out;
}

export function parseStepMatrix(json: unknown): StepMatrix {
  if (!isObject(json) || !Array.isArray(json["ranks"]) || !Array.isArray(json["steps"])) {
    throw new Error("the matrix answer has no ranks or steps");
  }
  const ranks = listField(json, "ranks", parseMatrixRank);
  const steps = listField(json, "steps", (entry) => (typeof entry === "string" ? entry : null));
  const cells = (key: string): Cells => parseCells(json[key], ranks.length, steps.length);
  const perStep = (key: string): unknown[] => {
    const list = json[key];
    return Array.from({ length: steps.length }, (_, i) => (Array.isArray(list) ? list[i] : null));
  };
  return {
    ranks,
    steps,
    stepTime: cells("step_time"),
    communication: cells("communication"),
    exposedCommunication: cells("exposed_communication"),
    stepStart: cells("step_start"),
    stepMedian: perStep("step_median").map(nullableNumber),
    slowestRank: perStep("slowest_rank").map((v) => (typeof v === "number" && Number.isInteger(v) ? v : -1)),
  };
}

export async function fetchStepMatrix(api: ApiClient, run: string, spanIndex: number, signal?: AbortSignal): Promise<ApiResult<StepMatrix>> {
  return parsedResult(await api.getJson("distributed/matrix", { run, span_index: spanIndex }, signal), "distributed/matrix", parseStepMatrix);
}

export type RankAlign = "step" | "time";

export interface PlacedWorker {
  readonly worker: string;
  readonly rank: number;
  readonly span: string;
  /** µs added to this worker's trace times to place them on the common axis. */
  readonly shift: number;
  /** The step's window in the worker's own trace time (µs). */
  readonly stepStart: number;
  readonly stepEnd: number;
  /** µs after the earliest start of the step on any worker (by the traces' clocks). */
  readonly late: number;
}

export interface RankPlacement {
  readonly align: RankAlign;
  readonly step: string | null;
  readonly steps: readonly string[];
  readonly workers: readonly PlacedWorker[];
  readonly missing: readonly string[];
  readonly notes: readonly string[];
}

function parsePlaced(value: unknown): PlacedWorker | null {
  if (!isObject(value) || typeof value["worker"] !== "string") return null;
  return {
    worker: value["worker"],
    rank: numberField(value, "rank"),
    span: stringField(value, "span"),
    shift: numberField(value, "shift"),
    stepStart: numberField(value, "step_start"),
    stepEnd: numberField(value, "step_end"),
    late: nullableNumberField(value, "late") ?? 0,
  };
}

const strings = (entry: unknown): string | null => (typeof entry === "string" ? entry : null);

export function parseRankPlacement(json: unknown): RankPlacement {
  if (!isObject(json) || !Array.isArray(json["workers"])) throw new Error("the ranks answer has no workers");
  return {
    align: json["align"] === "time" ? "time" : "step",
    step: typeof json["step"] === "string" ? json["step"] : null,
    steps: listField(json, "steps", strings),
    workers: listField(json, "workers", parsePlaced),
    missing: listField(json, "missing", strings),
    notes: listField(json, "notes", strings),
  };
}

export async function fetchRankPlacement(
  api: ApiClient,
  run: string,
  spanIndex: number,
  align: RankAlign,
  step: string | null,
  signal?: AbortSignal,
): Promise<ApiResult<RankPlacement>> {
  const params: Record<string, string | number> = { run, span_index: spanIndex, align };
  if (step !== null) params["step"] = step;
  return parsedResult(await api.getJson("trace/ranks", params, signal), "trace/ranks", parseRankPlacement);
}
