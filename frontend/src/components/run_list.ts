// The side list of every run with its status: ready, loading (with its own progress bar),
// or failed. Clicking an entry selects the run.
import type { RunInfo } from "../api/types";
import { formatPercent } from "../lib/format";
import { el, replaceChildren } from "./dom";

export interface RunList {
  readonly root: HTMLElement;
  update(runs: readonly RunInfo[], selectedRun: string | null): void;
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

export function createRunList(onSelect: (run: string) => void): RunList {
  const heading = el("h2", {}, "Runs");
  const list = el("ul", {});
  const root = el("aside", { className: "ps-runs", testId: "run-list", attrs: { "aria-label": "Runs" } }, heading, list);
  let signature = "";

  return {
    root,
    update(runs, selectedRun) {
      const next = JSON.stringify([runs, selectedRun]);
      if (next === signature) return;
      signature = next;
      heading.textContent = `Runs (${runs.length})`;
      replaceChildren(list, ...runs.map((run) => runEntry(run, run.name === selectedRun, onSelect)));
    },
  };
}
