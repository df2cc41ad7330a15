// The Analyses page's routes (`analyses/idle`, `analyses/launches`, `analyses/queues`, `analyses/sequences`,
// `analyses/annotations`): each over the overview's steps, each with `available` and, when false, the reason.
// Times in µs, shares 0..1. The answers' types are the contract's (schema.ts).
import type { ApiClient, QueryParams } from "./client";
import type { Answer, Item, Schema } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export const ANALYSIS_ROUTES = {
  idle: "analyses/idle",
  launches: "analyses/launches",
  queues: "analyses/queues",
  sequences: "analyses/sequences",
  annotations: "analyses/annotations",
} as const;

export type AnalysisRoute = (typeof ANALYSIS_ROUTES)[keyof typeof ANALYSIS_ROUTES];

/** What every analysis answer says first: whether there is anything to show, and why not. */
export interface Availability {
  readonly available: boolean;
  readonly reason?: string | null;
}

/** An answer with something to show (an answer whose schema has an unavailable variant loses it). */
export type Available<T> = Exclude<T, { readonly available: false }>;

/** Whether an analysis answer has something to show (every analysis answer has `available`). */
export function isAvailable<T>(answer: T): answer is Available<T> {
  return (answer as Availability).available;
}

export type IdleTimeData = Answer<"analyses/idle">;
export type IdleStream = Item<IdleTimeData["streams"]>;
export type IdleGap = Item<IdleTimeData["longest_gaps"]>;

export type LaunchesData = Schema<"LaunchesAvailable">;
export type LaunchStats = Schema<"LaunchStats">;
export type LaunchGroup = Schema<"LaunchGroup">;
export type Launch = Schema<"Launch">;

export type QueueLengthData = Answer<"analyses/queues">;
export type QueueStream = Item<QueueLengthData["streams"]>;

export type KernelSequencesData = Answer<"analyses/sequences">;
export type KernelSequence = Item<KernelSequencesData["sequences"]>;

export type AnnotationsData = Answer<"analyses/annotations">;
export type AnnotationRow = Item<AnnotationsData["rows"]>;

export function fetchAnalysis<R extends AnalysisRoute>(
  api: ApiClient,
  route: R,
  ref: SpanRef,
  signal?: AbortSignal,
  params: QueryParams = {},
): Promise<ApiResult<Answer<R>>> {
  return api.spanRoute(route, ref, params, signal);
}
