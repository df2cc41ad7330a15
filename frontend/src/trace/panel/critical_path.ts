// The side panel of the critical path: the step it is about (with the previous and next step),
// its length, its breakdown by kind, and the slices that take longest on it (click: select one).
import type { CriticalPathData, PathEntry } from "../../api/critical_path";
import { el, replaceChildren } from "../../components/dom";
import { injectViewStyles } from "../../components/view_styles";
import { formatCount, formatDuration, formatPercent } from "../../lib/format";
import { kindRows, longestOnPath, PATH_KIND_INFO } from "../critical_path";
import { traceButton } from "../toolbar";
import { offsetLabel } from "./details";

export interface CriticalPathCallbacks {
  /** Show the path of step `index` (the previous or next one). */
  showStep(index: number): void;
  zoomToStep(): void;
  select(entry: PathEntry): void;
  close(): void;
}

export const CRITICAL_PATH_DEF =
  "The chain of host operators, launches, device work and syncs that decides the step's length: walking back from the step's " +
  "end, each slice is entered through the dependency that came last (its parent or previous slice on its thread, its launch, " +
  "the previous work on its stream, the work a sync waited for). Its length is the step's span, from its first CPU event " +
  "to its last device work; each instant of it counts once, in one kind.";

const LONGEST = 12;
export const EMPTY_PATH = "The critical path of this step is empty: none of its slices takes time (the trace has no slice in it, or only slices of no length).";

export class CriticalPathPanel {
  readonly root = el("aside", { className: "ps-trace-details ps-trace-critical", testId: "trace-critical-path", hidden: true });

  constructor(
    private readonly callbacks: CriticalPathCallbacks,
    /** Span start, trace µs: times are shown as offsets from it. */
    private readonly spanStart: number,
  ) {}

  private header(title: string): HTMLElement {
    const close = el("button", { className: "ps-trace-icon-button", testId: "trace-critical-path-close", attrs: { type: "button", title: "Hide the critical path" } }, "×");
    close.addEventListener("click", () => this.callbacks.close());
    return el("header", { className: "ps-trace-details-header" }, el("h3", { testId: "trace-critical-path-title", attrs: { title: CRITICAL_PATH_DEF } }, title), close);
  }

  showLoading(): void {
    this.root.hidden = false;
    this.root.dataset["state"] = "loading";
    replaceChildren(this.root, this.header("Critical path"), el("p", { className: "ps-trace-muted" }, "Finding the critical path…"));
  }

  showError(text: string): void {
    this.root.hidden = false;
    this.root.dataset["state"] = "error";
    replaceChildren(this.root, this.header("Critical path"), el("p", { className: "ps-trace-error", testId: "trace-critical-path-message" }, text));
  }

  hide(): void {
    this.root.hidden = true;
    this.root.dataset["state"] = "empty";
    replaceChildren(this.root);
  }

  show(data: CriticalPathData): void {
    injectViewStyles(this.root.ownerDocument);
    this.root.hidden = false;
    this.root.dataset["state"] = "ready";
    this.root.dataset["step"] = String(data.index);
    const previous = this.stepButton("‹", "trace-critical-path-prev", "Previous step", data.index - 1, data.steps.length);
    const next = this.stepButton("›", "trace-critical-path-next", "Next step", data.index + 1, data.steps.length);
    const zoom = traceButton("Zoom to step", "trace-critical-path-zoom", "Show this step across the timeline", () => this.callbacks.zoomToStep());
    const fields: [string, string][] = [
      ["Step", `${data.step.name} (${formatCount(data.index + 1)} of ${formatCount(data.steps.length)})`],
      ["Start", offsetLabel(data.step.start - this.spanStart)],
      ["Length", formatDuration(data.length)],
      ["Slices", formatCount(data.ids.length)],
    ];
    const list = el("dl", { className: "ps-trace-fields", testId: "trace-critical-path-fields" });
    for (const [term, value] of fields) list.append(el("dt", {}, term), el("dd", {}, value));
    const body =
      data.path.length === 0
        ? [el("p", { className: "ps-trace-muted", testId: "trace-critical-path-empty" }, EMPTY_PATH)]
        : [this.breakdown(data), this.longest(data)];
    replaceChildren(
      this.root,
      this.header(`Critical path · ${data.step.name}`),
      list,
      el("div", { className: "ps-trace-details-actions" }, previous, next, zoom),
      ...body,
    );
  }

  private stepButton(label: string, testId: string, title: string, index: number, count: number): HTMLButtonElement {
    const button = traceButton(label, testId, title, () => this.callbacks.showStep(index));
    // A step before the first or after the last: the button stays, disabled.
    button.disabled = index < 0 || index >= count;
    return button;
  }

  private breakdown(data: CriticalPathData): HTMLElement {
    const rows = kindRows(data);
    const table = el(
      "table",
      { className: "ps-trace-args", testId: "trace-critical-path-breakdown" },
      el(
        "tbody",
        {},
        ...rows.map((row) => {
          const swatch = el("span", { className: "ps-swatch" });
          swatch.style.background = row.color;
          const fill = el("span", { className: "ps-trace-critical-fill" });
          fill.style.width = `${Math.max(0, Math.min(1, row.share)) * 100}%`;
          fill.style.background = row.color;
          return el(
            "tr",
            { attrs: { "data-kind": row.kind, title: row.tip } },
            el("th", { attrs: { scope: "row" } }, swatch, row.label),
            el("td", {}, `${formatDuration(row.time)} (${formatPercent(row.share)})`),
            el("td", { className: "ps-trace-critical-bar" }, fill),
          );
        }),
      ),
    );
    return el(
      "section",
      { className: "ps-trace-section", testId: "trace-critical-path-kinds" },
      el("h4", { attrs: { title: CRITICAL_PATH_DEF } }, "By kind"),
      table,
    );
  }

  private longest(data: CriticalPathData): HTMLElement {
    const entries = longestOnPath(data, LONGEST);
    const items = entries.map((entry) => {
      const info = PATH_KIND_INFO[entry.kind];
      const button = el(
        "button",
        { className: "ps-trace-link", attrs: { type: "button", title: `${entry.name ?? ""}\n${info?.label ?? entry.kind} · ${formatDuration(entry.time)} on the path` } },
        entry.name ?? "(no slice)",
      );
      button.addEventListener("click", () => this.callbacks.select(entry));
      return el("tr", { attrs: { "data-id": String(entry.id) } }, el("td", {}, button), el("th", {}, info?.label ?? entry.kind), el("th", {}, formatDuration(entry.time)));
    });
    return el(
      "section",
      { className: "ps-trace-section", testId: "trace-critical-path-longest" },
      el("h4", {}, "Longest on the path"),
      el("table", { className: "ps-trace-args" }, el("tbody", {}, ...items)),
    );
  }
}
