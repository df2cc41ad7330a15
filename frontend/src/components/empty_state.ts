// The messages shown instead of a view: no runs yet, the run still loading, the run failed.
import type { LayoutLookedFor, SkippedFiles } from "../api/runs";
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

const IMPORT_EXAMPLE = `profscope import path/to/*.json.gz --logdir <logdir> --run exp1
profscope import prof/*_ascend_ms --logdir <logdir> --run mindspore_job`;

/** What each reason of the backend's `skipped` counts (singular, plural); unknown reasons show their id. */
const SKIP_REASONS: Readonly<Record<string, readonly [string, string]>> = {
  tensorboard_event_file: ["TensorBoard event file", "TensorBoard event files"],
  not_a_chrome_trace: ["JSON file that is not a Chrome trace", "JSON files that are not Chrome traces"],
  no_trace_key_in_sniff_limit: [
    "JSON file with no trace key in its first 16 MB (profscope import reads it whole)",
    "JSON files with no trace key in their first 16 MB (profscope import reads them whole)",
  ],
  empty: ["empty file", "empty files"],
  unreadable: [
    "file that could not be read (not a regular file, no permission, or a broken gzip)",
    "files that could not be read (not a regular file, no permission, or a broken gzip)",
  ],
  profiler_side_file: ["other file of a profiler's output folder", "other files of a profiler's output folders"],
  not_json: ["file that is not .json or .json.gz", "files that are not .json or .json.gz"],
  pickle_not_a_memory_snapshot: [
    ".pickle or .pkl file that is not a pickled memory snapshot",
    ".pickle or .pkl files that are not pickled memory snapshots",
  ],
  links_outside_logdir: [
    "link that leads outside the logdir, never read (allow its target with --profscope_link_roots)",
    "links that lead outside the logdir, never read (allow their targets with --profscope_link_roots)",
  ],
};

/** "3 TensorBoard event files", "1 empty file", "2 × some_new_reason". */
export function skipReasonText(reason: string, count: number): string {
  const label = SKIP_REASONS[reason];
  return label === undefined ? `${count} × ${reason}` : `${count} ${count === 1 ? label[0] : label[1]}`;
}

/** The skipped files by reason, most frequent first, with the first few paths of each (text only). */
export function skippedList(skipped: SkippedFiles): HTMLElement {
  const items = Object.entries(skipped.reasons)
    .sort(([, a], [, b]) => b - a)
    .map(([reason, count]) => {
      const examples = skipped.examples[reason] ?? [];
      // Paths come from the logdir: text nodes only.
      const shown = examples.length > 0 ? ` (${examples.join(", ")}${count > examples.length ? ", …" : ""})` : "";
      return el("li", { attrs: { "data-reason": reason } }, skipReasonText(reason, count), el("span", { className: "ps-empty-paths" }, shown));
    });
  return el("ul", { className: "ps-empty-list", testId: "skipped-files" }, ...items);
}

function lookedForList(lookedFor: readonly LayoutLookedFor[]): HTMLElement {
  return el(
    "ul",
    { className: "ps-empty-list", testId: "layouts-looked-for" },
    ...lookedFor.map((item) => el("li", {}, el("code", {}, item.pattern), ` — ${item.written_by}`)),
  );
}

export interface NoRunsDetails {
  readonly skipped?: SkippedFiles | undefined;
  readonly lookedFor?: readonly LayoutLookedFor[] | undefined;
}

export function noRunsState(details: NoRunsDetails = {}): HTMLElement {
  const { skipped, lookedFor } = details;
  return emptyState(
    "empty-no-runs",
    "No profiler runs found in the logdir",
    skipped !== undefined && skipped.count > 0
      ? el(
          "p",
          {},
          `${skipped.count} file${skipped.count === 1 ? " was" : "s were"} looked at and skipped: ` +
            "none of them is a trace Profscope reads.",
        )
      : false,
    skipped !== undefined && skipped.count > 0 ? skippedList(skipped) : false,
    lookedFor !== undefined && lookedFor.length > 0 ? el("p", {}, "Looked for these files, at any depth of the logdir:") : false,
    lookedFor !== undefined && lookedFor.length > 0 ? lookedForList(lookedFor) : false,
    el("p", {}, "Traces written elsewhere or by another tool can be copied into the logdir as runs:"),
    el("pre", { className: "ps-code", testId: "import-command" }, IMPORT_EXAMPLE),
    el("p", {}, "Or profile a few training steps and point the profiler's on_trace_ready at the logdir:"),
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
