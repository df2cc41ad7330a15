// The side panel of the selected slice: its fields, arguments, stack and ancestors, and the
// events it links to (launching operator, launch call, launched kernels, flows) as "jump to"
// buttons. Trace strings go in as text only (the shell's `el`).
import { charactersCut, type EventBrief, type EventDetail } from "../../api/trace";
import type { ApiResult } from "../../api/types";
import { el, replaceChildren } from "../../components/dom";
import { formatByteRate } from "../../lib/efficiency";
import { formatBytes, formatCount, formatDuration } from "../../lib/format";

export interface DetailsCallbacks {
  jumpTo(brief: EventBrief): void;
  zoomToSelected(): void;
  close(): void;
  /** The slice with its own texts whole (`trace/event?full_text=1`). */
  loadWholeTexts(id: number): Promise<ApiResult<EventDetail>>;
}

const microsFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 3 });

/** "1,234.5 µs": exact enough to compare two events. */
export function preciseMicros(us: number): string {
  return Number.isFinite(us) ? `${microsFormat.format(us)} µs` : "—";
}

/** A start time as an offset from the span start: "152.470 ms". */
export function offsetLabel(offsetUs: number): string {
  if (!Number.isFinite(offsetUs)) return "—";
  if (Math.abs(offsetUs) >= 1e6) return `${(offsetUs / 1e6).toFixed(6)} s`;
  if (Math.abs(offsetUs) >= 1e3) return `${(offsetUs / 1e3).toFixed(3)} ms`;
  return `${offsetUs.toFixed(3)} µs`;
}

function durationLabel(us: number): string {
  const short = formatDuration(us);
  return us >= 1000 ? `${short} (${preciseMicros(us)})` : short;
}

export class DetailsPanel {
  readonly root = el("aside", { className: "ps-trace-details", testId: "trace-details", hidden: true });

  constructor(
    private readonly callbacks: DetailsCallbacks,
    /** Span start, trace µs: times are shown as offsets from it. */
    private readonly spanStart: number,
  ) {}

  private header(title: string, testId: string): HTMLElement {
    const close = el("button", { className: "ps-trace-icon-button", testId: "trace-details-close", attrs: { type: "button", title: "Close (Esc)" } }, "×");
    close.addEventListener("click", () => this.callbacks.close());
    return el("header", { className: "ps-trace-details-header" }, el("h3", { testId }, title), close);
  }

  showLoading(name: string): void {
    this.root.hidden = false;
    this.root.dataset["state"] = "loading";
    replaceChildren(this.root, this.header(name || "Loading…", "trace-details-name"), el("p", { className: "ps-trace-muted" }, "Loading the event…"));
  }

  showError(message: string): void {
    this.root.hidden = false;
    this.root.dataset["state"] = "error";
    replaceChildren(
      this.root,
      this.header("Cannot show this event", "trace-details-name"),
      el("p", { className: "ps-trace-error", testId: "trace-details-error" }, message),
    );
  }

  hide(): void {
    this.root.hidden = true;
    this.root.dataset["state"] = "empty";
    replaceChildren(this.root);
  }

  show(detail: EventDetail): void {
    this.root.hidden = false;
    this.root.dataset["state"] = "ready";
    this.root.dataset["eventId"] = String(detail.id);
    const zoom = el("button", { className: "ps-trace-button", testId: "trace-details-zoom", attrs: { type: "button" } }, "Zoom to slice");
    zoom.addEventListener("click", () => this.callbacks.zoomToSelected());
    const fields: [string, string, string?][] = [
      ["Category", detail.cat || "—"],
      ["Track", [detail.process, detail.thread].filter((part) => part).join(" · ") || detail.track],
      ["Start", offsetLabel(detail.start - this.spanStart), `trace time ${preciseMicros(detail.start)}`],
      ["Duration", durationLabel(detail.dur)],
      ["End", offsetLabel(detail.end - this.spanStart)],
      ["Depth", String(detail.depth)],
      ["Event id", String(detail.id)],
    ];
    const list = el("dl", { className: "ps-trace-fields" });
    for (const [term, value, title] of fields) {
      list.appendChild(el("dt", {}, term));
      list.appendChild(el("dd", title !== undefined ? { attrs: { title } } : {}, value));
    }
    replaceChildren(
      this.root,
      this.header(detail.name, "trace-details-name"),
      this.wholeName(detail),
      list,
      el("div", { className: "ps-trace-details-actions" }, zoom),
      this.links(detail),
      this.bandwidth(detail),
      this.argsTable(detail),
      this.stack(detail),
      this.ancestors(detail),
    );
  }

  /**
   * For a name the backend cut ("… (N more characters)"), a button that asks for the whole name and shows it in
   * a scrolling box under the header (text only, whatever its length); null for a whole name.
   */
  private wholeName(detail: EventDetail): HTMLElement | null {
    return this.wholeText(detail, detail.name, "name", "The name is cut in every answer; this asks for it whole", (whole) => whole.name);
  }

  /**
   * A button that asks for the slice's texts whole (`trace/event?full_text=1`) and puts `pick`'s text in a
   * scrolling box in its place; null when `text` is not cut. Used for the name and each cut argument.
   */
  private wholeText(
    detail: EventDetail,
    text: string,
    what: string,
    title: string,
    pick: (whole: EventDetail) => string | undefined,
  ): HTMLElement | null {
    const cut = charactersCut(text);
    if (cut === null) return null;
    const status = el("span", { className: "ps-trace-muted", testId: "trace-details-whole-status" });
    const button = el(
      "button",
      { className: "ps-trace-button", testId: what === "name" ? "trace-details-whole" : "trace-details-whole-arg", attrs: { type: "button", title } },
      `Show whole ${what} (${formatCount(cut)} more characters)`,
    );
    // An argument shows its cut text in the box too (a name is in the header already), scrolling like the whole.
    const preview = what === "name" ? null : el("div", { className: "ps-trace-whole-text" }, text);
    const box = el("div", { className: "ps-trace-whole" }, preview, button, status);
    button.addEventListener("click", () => {
      button.disabled = true;
      status.textContent = " Loading…";
      this.callbacks.loadWholeTexts(detail.id).then(
        (result) => {
          if (this.root.dataset["eventId"] !== String(detail.id) || !box.isConnected) return; // another slice by now
          if (result.kind !== "ok") {
            button.disabled = false;
            status.textContent = result.kind === "loading" ? " The trace is still loading; try again in a moment." : ` ${result.message}`;
            return;
          }
          const testId = what === "name" ? "trace-details-whole-name" : "trace-details-whole-value";
          replaceChildren(box, el("div", { className: "ps-trace-whole-text", testId }, pick(result.data) ?? text));
        },
        () => undefined, // aborted: the slice was closed
      );
    });
    return box;
  }

  private jumpButton(brief: EventBrief, testId: string, prefix = ""): HTMLElement {
    const button = el(
      "button",
      { className: "ps-trace-link", testId, attrs: { type: "button", title: `Jump to ${brief.name}`, "data-event-id": String(brief.id) } },
      el("span", { className: "ps-trace-link-name" }, prefix + brief.name),
      el("span", { className: "ps-trace-muted" }, ` · ${formatDuration(brief.dur)}`),
    );
    button.addEventListener("click", () => this.callbacks.jumpTo(brief));
    return button;
  }

  private section(title: string, testId: string, ...children: (Node | null)[]): HTMLElement {
    return el("section", { className: "ps-trace-section", testId }, el("h4", {}, title), ...children);
  }

  private links(detail: EventDetail): HTMLElement | null {
    const parts: HTMLElement[] = [];
    if (detail.operator !== null) {
      const row = el("div", { className: "ps-trace-link-row", testId: "trace-details-operator" }, el("span", { className: "ps-trace-link-label" }, "Operator"));
      row.appendChild(this.jumpButton(detail.operator, "trace-jump-operator"));
      parts.push(row);
    }
    if (detail.launchedBy !== null) {
      const row = el("div", { className: "ps-trace-link-row", testId: "trace-details-launched-by" }, el("span", { className: "ps-trace-link-label" }, "Launched by"));
      row.appendChild(this.jumpButton(detail.launchedBy, "trace-jump-launched-by"));
      parts.push(row);
    }
    if (detail.launches.length > 0) {
      const row = el("div", { className: "ps-trace-link-row", testId: "trace-details-launches" }, el("span", { className: "ps-trace-link-label" }, `Launches (${detail.launches.length})`));
      for (const brief of detail.launches) row.appendChild(this.jumpButton(brief, "trace-jump-launch"));
      parts.push(row);
    }
    if (detail.flows.length > 0) {
      const row = el("div", { className: "ps-trace-link-row", testId: "trace-details-flows" }, el("span", { className: "ps-trace-link-label" }, `Flows (${detail.flows.length})`));
      for (const flow of detail.flows) {
        const arrow = flow.direction === "out" ? "→ " : "← ";
        const button = this.jumpButton(flow.other, "trace-jump-flow", arrow);
        button.title = `${flow.direction === "out" ? "To" : "From"} ${flow.other.name}${flow.cat ? ` (${flow.cat})` : ""}`;
        row.appendChild(button);
      }
      parts.push(row);
    }
    return parts.length > 0 ? this.section("Linked events", "trace-details-links", ...parts) : null;
  }

  /** A copy's direction or a collective's name, its size and bandwidth, and how the figure was computed. */
  private bandwidth(detail: EventDetail): HTMLElement | null {
    const rates = detail.bandwidth;
    if (rates === null) return null;
    const collective = rates.kind === "collective";
    const rows: [string, string][] = [
      [collective ? "Collective" : "Direction", rates.label],
      [collective ? "Message" : "Bytes", rates.bytes === null ? "unknown" : formatBytes(rates.bytes)],
    ];
    if (collective) rows.push(["Group size", rates.group_size === null ? "unknown" : String(rates.group_size)]);
    rows.push([collective ? "Algorithm bandwidth" : "Bandwidth", formatByteRate(rates.bandwidth)]);
    if (collective) rows.push(["Bus bandwidth", formatByteRate(rates.bus_bandwidth)]);
    const list = el("dl", { className: "ps-trace-fields" });
    for (const [term, value] of rows) list.append(el("dt", {}, term), el("dd", {}, value));
    return this.section("Bandwidth", "trace-details-bandwidth", list, el("p", { className: "ps-trace-muted" }, rates.note));
  }

  private argsTable(detail: EventDetail): HTMLElement | null {
    if (detail.args.length === 0) return null;
    const body = el("tbody");
    for (const [key, value] of detail.args) {
      const whole = this.wholeText(detail, value, "value", `${key} is cut in every answer; this asks for it whole`,
        (wholeDetail) => wholeDetail.args.find(([wholeKey]) => wholeKey === key)?.[1]);
      body.appendChild(el("tr", {}, el("th", { attrs: { scope: "row" } }, key), el("td", {}, whole ?? value)));
    }
    return this.section("Arguments", "trace-details-args", el("table", { className: "ps-trace-args" }, body));
  }

  private stack(detail: EventDetail): HTMLElement | null {
    if (detail.stack.length === 0) return null;
    const list = el("ol", { className: "ps-trace-stack" });
    for (const frame of detail.stack) list.appendChild(el("li", {}, frame));
    return this.section("Stack", "trace-details-stack", list);
  }

  private ancestors(detail: EventDetail): HTMLElement | null {
    if (detail.ancestors.length === 0) return null;
    const list = el("div", { className: "ps-trace-ancestors" });
    for (const brief of detail.ancestors) list.appendChild(this.jumpButton(brief, "trace-jump-ancestor"));
    return this.section(`Ancestors (${detail.ancestors.length})`, "trace-details-ancestors", list);
  }
}
