// Search through `trace/search`: matches come in time order, a page at a time; next and
// previous walk through all of them (wrapping), fetching the page that holds the next one.
import type { EventBrief, SearchPage } from "../api/trace";
import type { ApiResult } from "../api/types";

export const SEARCH_PAGE_SIZE = 100;

/** `index` moved by `delta`, wrapping within [0, total). */
export function wrapIndex(index: number, delta: number, total: number): number {
  if (total <= 0) return -1;
  return (((index + delta) % total) + total) % total;
}

/** Offset of the page that holds match `index`. */
export function pageOffsetOf(index: number, pageSize = SEARCH_PAGE_SIZE): number {
  return Math.floor(index / pageSize) * pageSize;
}

export type SearchStatus = "idle" | "searching" | "done" | "error";

export interface SearchState {
  readonly query: string;
  readonly status: SearchStatus;
  readonly total: number;
  /** Position of the current match, -1 when none. */
  readonly index: number;
  readonly current: EventBrief | null;
  readonly message: string;
}

export type SearchFetch = (query: string, offset: number, limit: number, signal: AbortSignal) => Promise<ApiResult<SearchPage>>;

const IDLE: SearchState = { query: "", status: "idle", total: 0, index: -1, current: null, message: "" };

export class TraceSearch {
  private pages = new Map<number, readonly EventBrief[]>();
  private controller: AbortController | null = null;
  state: SearchState = IDLE;

  constructor(
    private readonly fetchPage: SearchFetch,
    /** Called on every state change; `jump` is true when the current match changed. */
    private readonly onChange: (state: SearchState, jump: boolean) => void,
  ) {}

  /** Starts a new search (an empty query clears it) and moves to its first match. */
  async search(query: string): Promise<void> {
    const trimmed = query.trim();
    this.controller?.abort();
    this.controller = null;
    this.pages = new Map();
    if (trimmed === "") {
      this.set(IDLE, false);
      return;
    }
    this.set({ ...IDLE, query: trimmed, status: "searching" }, false);
    await this.goTo(0, true);
  }

  /**
   * The search box now reads `query` (typed, or cleared): a text other than the one searched ends that search,
   * so its count and highlight do not stay beside a box that no longer says what they are of (Enter searches
   * the new text). Returns the match that was current when the box was emptied, for the viewer to unselect; null
   * otherwise.
   */
  edited(query: string): EventBrief | null {
    const trimmed = query.trim();
    if (trimmed === this.state.query || this.state.status === "idle") return null;
    const current = this.state.current;
    this.controller?.abort();
    this.controller = null;
    this.pages = new Map();
    this.set(IDLE, false);
    return trimmed === "" ? current : null;
  }

  /** Moves to the next (+1) or previous (-1) match; a changed query searches anew. */
  async step(delta: number, query: string): Promise<void> {
    if (query.trim() !== this.state.query || this.state.status === "error" || this.state.status === "idle") {
      await this.search(query);
      return;
    }
    if (this.state.total <= 0) return;
    await this.goTo(wrapIndex(this.state.index, delta, this.state.total), false);
  }

  private async goTo(index: number, fresh: boolean): Promise<void> {
    const offset = pageOffsetOf(index);
    let page = this.pages.get(offset);
    let total = this.state.total;
    if (page === undefined) {
      this.controller?.abort();
      const controller = new AbortController();
      this.controller = controller;
      let result: ApiResult<SearchPage>;
      try {
        result = await this.fetchPage(this.state.query, offset, SEARCH_PAGE_SIZE, controller.signal);
      } catch (error) {
        if (controller.signal.aborted) return;
        this.set({ ...this.state, status: "error", message: error instanceof Error ? error.message : String(error) }, false);
        return;
      }
      if (controller.signal.aborted || this.controller !== controller) return;
      this.controller = null;
      if (result.kind !== "ok") {
        const message = result.kind === "loading" ? "The trace is still loading; try again in a moment." : result.message;
        this.set({ ...this.state, status: "error", message }, false);
        return;
      }
      page = result.data.matches;
      total = result.data.total;
      this.pages.set(offset, page);
    }
    if (total <= 0 || page.length === 0) {
      this.set({ ...this.state, status: "done", total: Math.max(0, total), index: -1, current: null, message: fresh ? "no matches" : "" }, false);
      return;
    }
    const within = Math.min(index - offset, page.length - 1);
    const current = page[within] ?? null;
    this.set({ ...this.state, status: "done", total, index: offset + within, current, message: "" }, current !== null);
  }

  private set(state: SearchState, jump: boolean): void {
    this.state = state;
    this.onChange(state, jump);
  }

  dispose(): void {
    this.controller?.abort();
    this.controller = null;
  }
}

/** "3 / 390", "no matches", "" — the counter beside the search box. */
export function searchCounter(state: SearchState): string {
  if (state.status === "searching") return "searching…";
  if (state.status === "error") return state.message;
  if (state.status === "idle") return "";
  if (state.total <= 0) return "no matches";
  return `${state.index + 1} / ${state.total}`;
}
