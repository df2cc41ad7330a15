// The side list of every run with its status: ready, loading (with its own progress bar),
// or failed. Clicking an entry selects the run. Below the runs, how many files of the logdir
// were skipped and why (a collapsed list), whether or not runs were found. Also the note beside
// the selected run's framework that says what could not be derived from the selected span.
import type { ApiClient } from "../api/client";
import { fetchSpanSummary, type SpanLimitation } from "../api/summary";
import type { RunInfo, SkippedFiles, WorkerInfo } from "../api/runs";
import type { SpanRef } from "../api/types";
import { formatPercent } from "../lib/format";
import { el, replaceChildren } from "./dom";
import { skippedList } from "./empty_state";

export interface RunList {
  readonly root: HTMLElement;
  /** ``skipped``: what the last scan skipped (none shown when absent or empty). */
  update(runs: readonly RunInfo[], selectedRun: string | null, skipped?: SkippedFiles): void;
}

/** A worker as the pickers name it: its name, and the rank its traces record when the name does not say it. */
export function workerLabel(worker: WorkerInfo): string {
  return worker.rank === undefined || worker.name === `rank${worker.rank}` ? worker.name : `${worker.name} · rank ${worker.rank}`;
}

function statusText(run: RunInfo): string {
  switch (run.status) {
    case "ready": {
      const workers = run.workers.length;
      const spans = run.workers.reduce((total, worker) => total + worker.spans.length, 0);
      const framework = run.framework !== undefined ? `${run.framework} · ` : "";
      return `${framework}${workers} worker${workers === 1 ? "" : "s"} · ${spans} span${spans === 1 ? "" : "s"}`;
    }
    case "loading":
      return run.progress !== undefined ? `loading ${formatPercent(run.progress, 0)}` : "loading…";
    case "error":
      return "failed to load";
  }
}

function runEntry(run: RunInfo, selected: boolean, onSelect: (run: string) => void): HTMLElement {
  const button = el(
    "button",
    { className: "ps-run-button", attrs: { type: "button", title: run.name } },
    el("span", { className: "ps-run-name" }, run.name),
    el("span", { className: "ps-run-status" }, statusText(run)),
  );
  if (run.status === "loading") {
    const fill = el("div", { className: "ps-run-progress-fill" });
    fill.style.width = `${Math.round((run.progress ?? 0) * 100)}%`;
    button.appendChild(el("div", { className: "ps-run-progress", testId: "run-progress" }, fill));
  }
  button.addEventListener("click", () => onSelect(run.name));
  return el(
    "li",
    {
      className: "ps-run-entry",
      testId: "run-entry",
      attrs: { "data-run": run.name, "data-status": run.status, "aria-current": String(selected) },
    },
    button,
  );
}

/** "3 files skipped": the summary line of the collapsed list. */
export function skippedSummaryText(count: number): string {
  return `${count} file${count === 1 ? "" : "s"} skipped`;
}

export function createRunList(onSelect: (run: string) => void): RunList {
  const heading = el("h2", {}, "Runs");
  const list = el("ul", {});
  // Kept across updates, so that an open list stays open while the run list is polled.
  const skippedHeading = el("summary", { testId: "run-list-skipped-count" });
  const skippedBody = el("div", {});
  const skippedBox = el("details", { className: "ps-runs-skipped", testId: "run-list-skipped", hidden: true },
    skippedHeading, skippedBody);
  const root = el("aside", { className: "ps-runs", testId: "run-list", attrs: { "aria-label": "Runs" } }, heading, list,
    skippedBox);
  let signature = "";

  return {
    root,
    update(runs, selectedRun, skipped) {
      const next = JSON.stringify([runs, selectedRun, skipped]);
      if (next === signature) return;
      signature = next;
      heading.textContent = `Runs (${runs.length})`;
      replaceChildren(list, ...runs.map((run) => runEntry(run, run.name === selectedRun, onSelect)));
      // Without runs the empty page lists them instead.
      const count = runs.length > 0 ? skipped?.count ?? 0 : 0;
      skippedBox.hidden = count === 0;
      skippedHeading.textContent = skippedSummaryText(count);
      replaceChildren(skippedBody, ...(skipped !== undefined && count > 0
        ? [el("p", {}, "Files of the logdir that are not traces Profscope reads, by reason:"), skippedList(skipped)]
        : []));
    },
  };
}

export interface SpanNotes {
  readonly root: HTMLElement;
  /** Shows what could not be derived from this span (fetched once per span); null hides the note. */
  update(ref: SpanRef | null): void;
}

function limitationsHeading(count: number): string {
  return `${count} thing${count === 1 ? "" : "s"} could not be derived`;
}

/** A collapsed "N things could not be derived" note that opens to the backend's sentences. */
export function createSpanNotes(api: ApiClient): SpanNotes {
  const heading = el("summary", {});
  const list = el("ul", {});
  const root = el("details", { className: "ps-span-notes", testId: "span-notes", hidden: true }, heading, list);
  let shownKey = "";
  let pending: AbortController | null = null;
  // The open list lies over the page: a click anywhere else closes it, as a menu would.
  root.ownerDocument.addEventListener("click", (event) => {
    if (root.open && event.target instanceof Node && !root.contains(event.target)) root.open = false;
  });

  function show(limitations: readonly SpanLimitation[]): void {
    heading.textContent = limitationsHeading(limitations.length);
    // The sentences may quote trace strings (category names): text nodes only.
    replaceChildren(list, ...limitations.map((item) => el("li", { attrs: { "data-id": item.id } }, item.text)));
    root.hidden = limitations.length === 0;
  }

  return {
    root,
    update(ref) {
      const key = ref === null ? "" : JSON.stringify([ref.run, ref.worker, ref.span]);
      if (key === shownKey) return;
      shownKey = key;
      pending?.abort();
      pending = null;
      show([]);
      root.open = false;
      if (ref === null) return;
      const controller = new AbortController();
      pending = controller;
      fetchSpanSummary(api, ref, controller.signal).then(
        (result) => {
          if (controller.signal.aborted) return;
          pending = null;
          if (result.kind === "ok") show(result.data.limitations ?? []);
          else if (result.kind === "loading" && shownKey === key) shownKey = ""; // asked again on the next poll
        },
        () => undefined, // aborted: another span was selected meanwhile
      );
    },
  };
}
