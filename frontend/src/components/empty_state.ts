// The messages shown instead of a view: no runs yet, the run still loading, the run failed.
import { el, type Child } from "./dom";

function emptyState(testId: string, title: string, ...body: Child[]): HTMLElement {
  return el("section", { className: "ps-empty", testId }, el("h2", {}, title), ...body);
}

const WRITER_EXAMPLE = `import torch
import profscope.writer

with torch.profiler.profile(
    schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
    on_trace_ready=profscope.writer.trace_handler("<logdir>", run="exp1"),
) as prof:
    for batch in loader:
        train_step(batch)
        prof.step()`;

export function noRunsState(): HTMLElement {
  return emptyState(
    "empty-no-runs",
    "No profiler runs found in the logdir",
    el("p", {}, "Profile a few training steps and point the profiler's on_trace_ready at the logdir:"),
    el("pre", { className: "ps-code" }, WRITER_EXAMPLE),
    el(
      "p",
      {},
      "torch's own torch.profiler.tensorboard_trace_handler(\"<logdir>/exp1\") works too. " +
        "Runs show up here on their own while training writes them.",
    ),
  );
}

export function lookingForRunsState(): HTMLElement {
  return emptyState("empty-looking", "Looking for profiler runs…");
}

export function runLoadingState(run: string, progressText: string): HTMLElement {
  return emptyState(
    "empty-run-loading",
    `Loading ${run}…`,
    el("p", {}, `${progressText} Big traces take a few seconds the first time; after that they open from the cache.`),
  );
}

export function runWithoutSpansState(run: string): HTMLElement {
  return emptyState("empty-no-spans", `${run} has no profiled spans`, el("p", {}, "Its folder holds no trace that could be read."));
}
