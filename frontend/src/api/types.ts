// Types of the backend's JSON (design §5). Only the fields the frontend relies on are
// spelled out; the backend may add more.

export type RunStatus = "ready" | "loading" | "error";

export interface WorkerInfo {
  readonly name: string;
  /** Span names in time order. */
  readonly spans: readonly string[];
  /** What tells the spans apart for people, one entry per span (same order); absent from older answers. */
  readonly spanFacts?: readonly SpanFacts[];
  /** The rank its traces record (distributedInfo), once a span is loaded; the name comes from the files. */
  readonly rank?: number;
}

/** A span's start (wall clock), length and steps, from the `runs` answer's span_info. */
export interface SpanFacts {
  /** Seconds since the epoch; null when the trace's clock is not wall time. */
  readonly startTime: number | null;
  /** µs; null until the span is loaded. */
  readonly duration: number | null;
  /** ProfilerStep numbers (null when a step has none) of the steps every page counts; null without steps. leftOut: the
   * trace's trailing steps they leave out (the profiler stopped inside them; the Overview says why). */
  readonly steps: {
    readonly count: number;
    readonly first: number | null;
    readonly last: number | null;
    readonly leftOut?: number;
  } | null;
  /** What its work ran on: the device's name, its kind, or "CPU"; absent until the trace is loaded. */
  readonly device?: string;
}

export interface RunInfo {
  /** Path of the run folder relative to the logdir ("." for the logdir itself). */
  readonly name: string;
  readonly status: RunStatus;
  /** 0..1, while loading (when the backend knows). */
  readonly progress?: number;
  /** Why the run failed to load (untrusted text: render with textContent). */
  readonly error?: string;
  readonly framework?: string;
  readonly workers: readonly WorkerInfo[];
  /** The run's PyTorch allocator memory snapshots (a run may hold snapshots only, and no workers). */
  readonly memorySnapshots?: readonly MemorySnapshotInfo[];
}

/** A memory snapshot as the run list names it. */
export interface MemorySnapshotInfo {
  /** Its path relative to the run folder (untrusted text). */
  readonly name: string;
  readonly worker: string | null;
  readonly span: string | null;
  readonly status: RunStatus;
}

/** The files of the last scan that are no span, counted by reason (e.g. "tensorboard_event_file"). */
export interface SkippedFiles {
  readonly count: number;
  readonly reasons: Readonly<Record<string, number>>;
  /** The first few files of each reason, relative to the logdir (untrusted text). */
  readonly examples: Readonly<Record<string, readonly string[]>>;
}

/** One file layout the logdir is searched for. */
export interface LayoutLookedFor {
  readonly pattern: string;
  readonly writtenBy: string;
}

export interface RunsResponse {
  readonly runs: readonly RunInfo[];
  /** False while the backend's first scan of the logdir is still going (optional field). */
  readonly scanned?: boolean;
  /** Why the logdir could not be listed (e.g. a remote bucket without credentials), when it could not. */
  readonly logdirError?: string;
  readonly skipped?: SkippedFiles;
  /** Sent with an empty run list only: what the logdir was searched for. */
  readonly lookedFor?: readonly LayoutLookedFor[];
}

/** Which span an analysis route is asked about. */
export interface SpanRef {
  readonly run: string;
  readonly worker: string;
  readonly span: string;
}

/**
 * Outcome of one API call. Non-2xx answers that the design defines are values, not
 * exceptions, because every view must show them: 202 (still loading), 404 (unknown
 * run/worker/span), 422 (the run failed to load), and 0 for "the backend did not answer".
 */
export type ApiResult<T> =
  | { readonly kind: "ok"; readonly data: T }
  | { readonly kind: "loading"; readonly progress: number | null }
  | { readonly kind: "error"; readonly status: number; readonly message: string };
