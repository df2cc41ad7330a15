// Resolves the wanted selection (from the URL or the pickers) against the runs the backend
// knows. Pure: no DOM.
import type { RunInfo, WorkerInfo } from "../api/runs";
import type { UrlState } from "./url_state";

export interface Selection {
  readonly run: RunInfo | null;
  readonly worker: WorkerInfo | null;
  readonly span: string | null;
  /** Position of `span` among the worker's spans (0-based), -1 without a span. */
  readonly spanIndex: number;
}

export interface ResolvedSelection {
  readonly selection: Selection;
  /** The wanted state corrected to what exists; equal to the input when nothing changed. */
  readonly state: UrlState;
}

/**
 * Falls back to the first run, worker and span when the wanted one does not exist.
 * While a run is not ready it lists no workers yet: the wanted worker and span are then
 * kept as they are, so a shared link survives the run's loading.
 */
export function resolveSelection(runs: readonly RunInfo[], wanted: UrlState): ResolvedSelection {
  const run = runs.find((candidate) => candidate.name === wanted.run) ?? runs[0] ?? null;
  if (run === null) {
    return { selection: { run: null, worker: null, span: null, spanIndex: -1 }, state: wanted };
  }
  const sameRun = run.name === wanted.run;
  if (run.workers.length === 0) {
    const state = sameRun ? wanted : { ...wanted, run: run.name, worker: null, span: null };
    return { selection: { run, worker: null, span: null, spanIndex: -1 }, state };
  }
  const worker =
    (sameRun ? run.workers.find((candidate) => candidate.name === wanted.worker) : undefined) ?? run.workers[0] ?? null;
  const sameWorker = sameRun && worker !== null && worker.name === wanted.worker;
  let spanIndex = sameWorker && worker !== null && wanted.span !== null ? worker.spans.indexOf(wanted.span) : -1;
  if (spanIndex < 0 && worker !== null && worker.spans.length > 0) spanIndex = 0;
  const span = worker !== null && spanIndex >= 0 ? (worker.spans[spanIndex] ?? null) : null;
  const state: UrlState =
    wanted.run === run.name && wanted.worker === (worker?.name ?? null) && wanted.span === span
      ? wanted
      : { ...wanted, run: run.name, worker: worker?.name ?? null, span };
  return { selection: { run, worker, span, spanIndex }, state };
}
