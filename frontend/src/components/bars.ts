// Charts drawn with plain elements, for data whose labels are long untrusted names (kernel
// and operator names): a ranked list of horizontal bars, and a single 100% bar of parts.
// Labels are text nodes, cut with an ellipsis, with the full text as a tooltip.
import { el } from "./dom";
import { passiveTip, tip } from "./tooltip";

export interface BarItem {
  readonly label: string;
  readonly value: number;
  readonly valueText: string;
  /** Tooltip of the row; defaults to the label and value. */
  readonly tip?: string;
}

export interface BarListOptions {
  readonly title: string;
  /** How the bars' value is computed (title tooltip). */
  readonly titleTip: string;
  readonly testId: string;
  readonly color: string;
  readonly emptyText: string;
  /** Clicking a bar (e.g. to open that row's details). */
  readonly onSelect?: (index: number) => void;
}

/** Horizontal bars, longest first as given; lengths relative to the largest value. */
export function createBarList(items: readonly BarItem[], options: BarListOptions): HTMLElement {
  const max = items.reduce((best, item) => (Number.isFinite(item.value) && item.value > best ? item.value : best), 0);
  const rows = items.map((item, index) => {
    const fill = el("div", { className: "ps-bar-fill" });
    fill.style.width = `${max > 0 ? Math.max(0.5, (item.value / max) * 100) : 0}%`;
    fill.style.background = options.color;
    const row = el(
      options.onSelect !== undefined ? "button" : "div",
      { className: "ps-bar-row", attrs: options.onSelect !== undefined ? { type: "button" } : {} },
      el("span", { className: "ps-bar-label" }, item.label),
      el("span", { className: "ps-bar-track" }, fill),
      el("span", { className: "ps-bar-value" }, item.valueText),
    );
    passiveTip(row, item.tip ?? `${item.label}\n${item.valueText}`);
    if (options.onSelect !== undefined) row.addEventListener("click", () => options.onSelect?.(index));
    return row;
  });
  return el(
    "figure",
    { className: "ps-chart ps-bar-chart", testId: options.testId },
    el("figcaption", {}, tip(el("span", { className: "ps-has-tip" }, options.title), options.titleTip)),
    rows.length > 0 ? el("div", { className: "ps-bar-list" }, ...rows) : el("p", { className: "ps-muted" }, options.emptyText),
  );
}

export interface SharePart {
  readonly label: string;
  /** 0..1 of the whole. */
  readonly share: number;
  readonly valueText: string;
  readonly color: string;
}

/** One bar split into parts that sum to the whole, with a legend. */
export function createShareBar(parts: readonly SharePart[], title: string, titleTip: string, testId: string): HTMLElement {
  const segments = parts
    .filter((part) => part.share > 0)
    .map((part) => {
      const segment = el("span", { className: "ps-share-segment" });
      segment.style.width = `${part.share * 100}%`;
      segment.style.background = part.color;
      return passiveTip(segment, `${part.label}: ${part.valueText}`);
    });
  const legend = parts.map((part) => {
    const swatch = el("span", { className: "ps-swatch" });
    swatch.style.background = part.color;
    return el("li", {}, swatch, el("span", {}, part.label), el("span", { className: "ps-legend-value" }, part.valueText));
  });
  return el(
    "figure",
    { className: "ps-chart ps-share-chart", testId },
    el("figcaption", {}, tip(el("span", { className: "ps-has-tip" }, title), titleTip)),
    el("div", { className: "ps-share-bar", attrs: { role: "img", "aria-label": parts.map((p) => `${p.label} ${p.valueText}`).join(", ") } }, ...segments),
    el("ul", { className: "ps-legend" }, ...legend),
  );
}
