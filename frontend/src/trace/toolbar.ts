// The trace viewer's toolbar: the search box with its previous / next buttons and match count, the zoom buttons,
// "Critical path", the page's own buttons, the download link, the status line and the input help. The viewer
// owns what the buttons do; this module builds the elements and wires them to its actions.
import { el } from "../components/dom";

export interface ToolbarActions {
  /** Next (1) or previous (-1) match of the query. */
  searchStep(delta: number, query: string): void;
  /** The search box changed (cleared, or a new query not searched yet). */
  searchEdited(query: string): void;
  zoomToSelection(): void;
  wholeSpan(): void;
  toggleCriticalPath(): void;
}

export interface TraceToolbar {
  readonly root: HTMLElement;
  readonly searchInput: HTMLInputElement;
  readonly searchCount: HTMLElement;
  readonly statusText: HTMLElement;
  /** "Critical path" (`aria-pressed` while the path is shown). */
  readonly pathButton: HTMLButtonElement;
}

/** A button styled as the toolbar's. */
export function traceButton(label: string, testId: string, title: string, onClick: () => void): HTMLButtonElement {
  const button = el("button", { className: "ps-trace-button", testId, attrs: { type: "button", title } }, label);
  button.addEventListener("click", onClick);
  return button;
}

/** The toolbar; `pageButtons` go after "Critical path" (the switch to ranks side by side). */
export function createToolbar(actions: ToolbarActions, downloadUrl: string, pageButtons: readonly HTMLElement[]): TraceToolbar {
  const pathButton = traceButton("Critical path", "trace-critical-path-toggle", "Highlight the critical path of the step in view: what decides its length", () =>
    actions.toggleCriticalPath(),
  );
  pathButton.setAttribute("aria-pressed", "false");

  const searchInput = el("input", {
    testId: "trace-search-input",
    attrs: { type: "search", placeholder: "Search slices by name", "aria-label": "Search slices by name", autocomplete: "off", spellcheck: "false" },
  });
  const searchCount = el("span", { className: "ps-trace-count", testId: "trace-search-count", attrs: { "aria-live": "polite" } });
  const previous = traceButton("‹", "trace-search-prev", "Previous match (Shift+Enter)", () => actions.searchStep(-1, searchInput.value));
  const next = traceButton("›", "trace-search-next", "Next match (Enter)", () => actions.searchStep(1, searchInput.value));
  const form = el("form", { className: "ps-trace-search", attrs: { role: "search" } }, searchInput, previous, next, searchCount);
  form.addEventListener("submit", (event) => event.preventDefault());
  searchInput.addEventListener("input", () => actions.searchEdited(searchInput.value));
  searchInput.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    actions.searchStep(event.shiftKey ? -1 : 1, searchInput.value);
  });

  const download = el(
    "a",
    {
      className: "ps-trace-button",
      testId: "trace-download",
      attrs: { href: downloadUrl, download: "", title: "The original trace file (opens in Perfetto or chrome://tracing)" },
    },
    "Download trace",
  );
  const statusText = el("span", { className: "ps-trace-status", testId: "trace-status" });
  const root = el(
    "div",
    { className: "ps-trace-toolbar" },
    form,
    traceButton("Zoom to selection", "trace-zoom-selection", "Zoom to the measured range or the selected slice (F)", () => actions.zoomToSelection()),
    traceButton("Whole span", "trace-zoom-reset", "Show the whole span", () => actions.wholeSpan()),
    pathButton,
    ...pageButtons,
    download,
    statusText,
    el(
      "span",
      { className: "ps-trace-help", attrs: { title: "/ search · N, Shift+N: next, previous match · F: zoom to the range or slice · Esc: clear · drag the names' edge to widen them" } },
      "wheel: zoom · drag: pan · shift+drag: select an area · click a name: pin · W A S D",
    ),
  );
  return { root, searchInput, searchCount, statusText, pathButton };
}
