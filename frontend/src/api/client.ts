// Typed client of the backend routes. Every call answers an ApiResult; only an aborted
// request rejects (with the AbortError), so callers can tell "cancelled" from "failed".
import { errorMessageOf, parseProgress } from "./parse";
import type { Answer, Route } from "./schema";
import type { ApiResult, SpanRef } from "./types";
import { isAbortError } from "./abort";

export type FetchLike = (url: string, init?: RequestInit) => Promise<Response>;
export type QueryParams = Readonly<Record<string, string | number | boolean | undefined>>;

export class ApiClient {
  /**
   * @param baseUrl absolute URL ending in "/" (see resolveApiBase)
   * @param fetchImpl replaced in unit tests
   */
  constructor(
    readonly baseUrl: string,
    private readonly fetchImpl: FetchLike = (url, init) => fetch(url, init),
  ) {}

  /** Absolute URL of a route (`runs`, `trace/slices`, ...) with its query parameters. */
  url(route: string, params: QueryParams = {}): string {
    if (!/^[a-z][a-z0-9_]*(\/[a-z][a-z0-9_]*)*$/.test(route)) {
      throw new Error(`not a route name: ${route}`);
    }
    const url = new URL(route, this.baseUrl);
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.href;
  }

  /**
   * GET a route and sort the answer into ok / loading / error. An ok answer is typed by the contract
   * (src/api/schema.ts) and not checked again: the backend and this bundle ship together, and the
   * backend's tests validate every route's answers against the same contract.
   */
  async getJson<R extends Route>(route: R, params: QueryParams = {}, signal?: AbortSignal): Promise<ApiResult<Answer<R>>> {
    let response: Response;
    try {
      const init: RequestInit = { headers: { Accept: "application/json" }, cache: "no-store" };
      if (signal !== undefined) init.signal = signal;
      response = await this.fetchImpl(this.url(route, params), init);
    } catch (error) {
      if (isAbortError(error)) throw error;
      const detail = error instanceof Error ? error.message : String(error);
      return { kind: "error", status: 0, message: `The Profscope backend did not answer (${detail}).` };
    }
    let body: unknown = null;
    let bodyIsJson = true;
    try {
      body = await response.json();
    } catch (error) {
      if (isAbortError(error)) throw error;
      bodyIsJson = false;
    }
    if (response.status === 202) {
      const progress = typeof body === "object" && body !== null ? (body as { progress?: unknown }).progress : null;
      return { kind: "loading", progress: parseProgress(progress) };
    }
    if (response.ok) {
      if (!bodyIsJson) {
        return { kind: "error", status: response.status, message: `The answer of '${route}' is not valid JSON.` };
      }
      return { kind: "ok", data: body as Answer<R> };
    }
    const message =
      errorMessageOf(body) ?? `'${route}' failed: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
    return { kind: "error", status: response.status, message };
  }

  /** The run list (polled). */
  runs(signal?: AbortSignal): Promise<ApiResult<Answer<"runs">>> {
    return this.getJson("runs", {}, signal);
  }

  /** An analysis route about one span (`overview`, `operators`, `kernels`, `memory`, ...). */
  spanRoute<R extends Route>(route: R, ref: SpanRef, params: QueryParams = {}, signal?: AbortSignal): Promise<ApiResult<Answer<R>>> {
    return this.getJson(route, { ...params, run: ref.run, worker: ref.worker, span: ref.span }, signal);
  }
}
