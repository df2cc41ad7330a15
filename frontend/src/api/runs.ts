// The `runs` route: every run of the logdir with its workers, spans and load status, what the last scan skipped,
// and (with no runs) what it looked for. The answer's type is the contract's (schema.ts).
import type { Answer, Item, Schema } from "./schema";

export type RunsResponse = Answer<"runs">;
export type RunInfo = Schema<"Run">;
export type WorkerInfo = Item<RunInfo["workers"]>;
/** A span as the run list describes it (`span_info`: one entry per span, in the order of `spans`). */
export type SpanInfo = Item<WorkerInfo["span_info"]>;
/** What tells spans apart for people: start (wall clock), length, steps and device. */
export type SpanFacts = Pick<SpanInfo, "start_time" | "duration" | "steps" | "device">;
/** The files of the last scan that are no span, counted by reason (e.g. "tensorboard_event_file"). */
export type SkippedFiles = RunsResponse["skipped"];
/** One file layout the logdir is searched for. */
export type LayoutLookedFor = Item<NonNullable<RunsResponse["looked_for"]>>;

/** The facts of the worker's span number `index` (null when the worker has no such span). */
export function spanFacts(worker: WorkerInfo | null | undefined, index: number): SpanFacts | null {
  return worker?.span_info[index] ?? null;
}
