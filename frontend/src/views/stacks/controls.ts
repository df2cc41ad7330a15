// The Call stacks page's controls: the weight (host or device time), the search box (its summary beside it, the
// typing debounced) and the link to the folded stacks of the chosen weight.
import type { ApiClient } from "../../api/client";
import { foldedStacksUrl, type FlameWeight } from "../../api/stacks";
import type { SpanRef } from "../../api/types";
import { el } from "../../components/dom";
import { STACKS_DEFINITIONS as DEF } from "../../lib/analysis_definitions";
import { WEIGHT_LABELS } from "./model";

const SEARCH_DELAY_MS = 150;

export interface StacksControls {
  readonly root: HTMLElement;
  /** Put a name in the search box (a top frame clicked). */
  setSearchText(text: string): void;
  setSummary(text: string): void;
}

export function createStacksControls(
  api: ApiClient,
  ref: SpanRef,
  initial: { readonly weight: FlameWeight; readonly query: string },
  on: { readonly weight: (weight: FlameWeight) => void; readonly search: (query: string) => void },
  signal: AbortSignal,
): StacksControls {
  let weight = initial.weight;
  const weightButtons = (["host", "device"] as const).map((value) => {
    const button = el(
      "button",
      { testId: `stacks-weight-${value}`, attrs: { type: "button", "aria-pressed": String(value === weight), "data-tip": DEF[value] } },
      WEIGHT_LABELS[value],
    );
    button.addEventListener("click", () => {
      if (value === weight) return;
      weight = value;
      for (const other of weightButtons) other.setAttribute("aria-pressed", String(other === button));
      updateDownload();
      on.weight(value);
    });
    return button;
  });
  const searchInput = el("input", {
    className: "ps-input",
    testId: "stacks-search",
    attrs: { type: "search", placeholder: "Highlight frames…", "aria-label": "Highlight frames whose name contains", spellcheck: "false" },
  });
  searchInput.value = initial.query;
  const searchSummary = el("span", { className: "ps-count", testId: "stacks-search-summary", attrs: { "aria-live": "polite" } });
  const download = el("a", { className: "ps-download", testId: "stacks-download" }, "Download folded stacks");
  function updateDownload(): void {
    download.href = foldedStacksUrl(api, ref, weight);
    download.setAttribute("download", `stacks.${weight}.folded.txt`);
    download.title = "frame;frame;leaf µs lines, for flamegraph.pl, speedscope or inferno";
  }
  updateDownload();

  let searchTimer: number | undefined;
  searchInput.addEventListener("input", () => {
    window.clearTimeout(searchTimer);
    searchTimer = window.setTimeout(() => on.search(searchInput.value), SEARCH_DELAY_MS);
  });
  signal.addEventListener("abort", () => window.clearTimeout(searchTimer), { once: true });

  const root = el(
    "div",
    { className: "ps-controls" },
    el("span", { className: "ps-segmented", attrs: { role: "group", "aria-label": "Weight" } }, ...weightButtons),
    el("label", {}, "Search", searchInput),
    download,
    searchSummary,
  );
  return {
    root,
    setSearchText: (text) => (searchInput.value = text),
    setSummary: (text) => (searchSummary.textContent = text),
  };
}
