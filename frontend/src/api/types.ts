// What every API call answers (ApiResult) and which span an analysis route is asked about. The answers'
// own types are the contract's (schema.ts); the run list's are in runs.ts.

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
