// The contract between the shell and a view. A view gets a host element and a context; the
// shell mounts it again whenever the selection changes, and aborts `ctx.signal` first, so a
// view cleans up (cancels fetches, removes listeners) by listening to that signal.
import type { ApiClient } from "../api/client";
import type { RunInfo } from "../api/runs";
import type { Selection } from "../state/selection";
import type { ViewId } from "../state/url_state";

/**
 * What a view needs before it can show anything:
 * "span": a ready run with a worker and span; "run": a ready run (run-level views such as
 * Distributed); "any": at least one run (views that pick their own runs, such as Compare).
 */
export type ViewScope = "span" | "run" | "any";

export interface ViewContext {
  readonly api: ApiClient;
  readonly runs: readonly RunInfo[];
  readonly selection: Selection;
  /** Aborted when the view is unmounted. */
  readonly signal: AbortSignal;
  /** This view's parameter from the URL (`<view id>.<name>`), or null. */
  param(name: string): string | null;
  /** Sets (or, with null, removes) this view's URL parameters without remounting it. */
  setParams(patch: Readonly<Record<string, string | null>>): void;
  /**
   * Switches to another view, with that view's parameters (e.g. an operator row opening the trace); with `span`,
   * to another worker's span of the same run too (a cell of the Distributed view's heat map opening that rank).
   */
  navigate(view: ViewId, params?: Readonly<Record<string, string | null>>, span?: { readonly worker: string; readonly span: string }): void;
}

export interface ViewDefinition {
  readonly id: ViewId;
  readonly label: string;
  readonly scope: ViewScope;
  mount(host: HTMLElement, ctx: ViewContext): void;
}
