// The trace view's entry to ranks side by side: a toolbar button shown when the run has several workers, and
// the stacked view itself when the URL asks for it (trace.ranks=step|time, trace.rank_step=<step>).
import type { RankAlign } from "../../api/rank_steps";
import { el } from "../../components/dom";
import type { ViewContext } from "../../views/types";
import { mountRankStack } from "./rank_stack";

export const PARAM_RANKS = "ranks";
export const PARAM_RANK_STEP = "rank_step";

/** The alignment the URL asks for, or null for the single-span viewer. */
export function ranksParam(value: string | null): RankAlign | null {
  return value === "step" || value === "time" ? value : null;
}

function severalWorkers(ctx: Pick<ViewContext, "selection">): boolean {
  return (ctx.selection.run?.workers.length ?? 0) >= 2;
}

/**
 * The switch to ranks side by side, a button of the viewer's toolbar (beside "Critical path", styled as its
 * other buttons); null for a one-worker run.
 */
export function ranksSwitch(ctx: Pick<ViewContext, "selection" | "navigate" | "signal">): HTMLButtonElement | null {
  if (!severalWorkers(ctx)) return null;
  const button = el(
    "button",
    { className: "ps-trace-button", testId: "trace-ranks-open", attrs: { type: "button", title: "This step of every worker of the run, stacked on one time axis" } },
    "Ranks side by side",
  );
  button.addEventListener("click", () => ctx.navigate("trace", { [PARAM_RANKS]: "step" }), { signal: ctx.signal });
  return button;
}

/** Mounts ranks side by side when the URL asks for it; false when the single-span viewer should show instead. */
export function mountRanksMode(host: HTMLElement, ctx: ViewContext): boolean {
  const align = ranksParam(ctx.param(PARAM_RANKS));
  const run = ctx.selection.run;
  if (align === null || run === null || !severalWorkers(ctx)) return false;
  mountRankStack(host, {
    api: ctx.api,
    run: run.name,
    spanIndex: Math.max(0, ctx.selection.spanIndex),
    align,
    step: ctx.param(PARAM_RANK_STEP),
    onChange: (next, step) => ctx.navigate("trace", { [PARAM_RANKS]: next, [PARAM_RANK_STEP]: step }),
    onOpenWorker: (worker, span, window) =>
      ctx.navigate("trace", { [PARAM_RANKS]: null, start: String(window.start), end: String(window.end), select: null }, { worker, span }),
    onClose: () => ctx.navigate("trace", { [PARAM_RANKS]: null }),
    signal: ctx.signal,
  });
  return true;
}
