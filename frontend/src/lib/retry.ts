// Loads one analysis answer, waiting while the backend still prepares the span (202), until
// it is ready, fails, or the view goes away (the signal aborts).
import type { ApiResult } from "../api/types";
import { isAbortError } from "../api/abort";

export interface LoadHandlers<T> {
  /** The backend is still loading the run; progress 0..1 or null. Called once per poll. */
  loading(progress: number | null): void;
  ok(data: T): void;
  error(message: string): void;
}

export interface RetryOptions {
  /** First wait between polls, ms; it grows by half each time up to `maxDelayMs`. */
  readonly delayMs?: number;
  readonly maxDelayMs?: number;
  /** Replaced in tests. */
  readonly wait?: (ms: number, signal: AbortSignal) => Promise<void>;
}

function abortableWait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Resolves when a handler has been called with the final outcome, or when aborted (no handler then). */
export async function loadUntilReady<T>(
  fetchOnce: (signal: AbortSignal) => Promise<ApiResult<T>>,
  handlers: LoadHandlers<T>,
  signal: AbortSignal,
  options: RetryOptions = {},
): Promise<void> {
  const wait = options.wait ?? abortableWait;
  const maxDelay = options.maxDelayMs ?? 5000;
  let delay = options.delayMs ?? 800;
  while (!signal.aborted) {
    let result: ApiResult<T>;
    try {
      result = await fetchOnce(signal);
    } catch (error) {
      if (isAbortError(error) || signal.aborted) return;
      handlers.error(error instanceof Error ? error.message : String(error));
      return;
    }
    if (signal.aborted) return;
    if (result.kind === "ok") {
      handlers.ok(result.data);
      return;
    }
    if (result.kind === "error") {
      handlers.error(result.message);
      return;
    }
    handlers.loading(result.progress);
    await wait(delay, signal);
    delay = Math.min(maxDelay, Math.round(delay * 1.5));
  }
}
