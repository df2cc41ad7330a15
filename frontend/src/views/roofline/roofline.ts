// Roofline: how far each operator runs from what its device can do. A log–log chart of the groups of identical
// operator calls (operator × recorded shapes × precision) at their arithmetic intensity and achieved FLOP/s, sized
// by time and coloured by category, under the device's roofs (memory bandwidth × intensity, then the peak of each
// precision; the bend is the ridge point). Hovering shows a point's shapes and figures; clicking opens its first call
// in the trace. Below: the time-weighted biggest gaps to the roof (what to optimise first), copy and memset
// bandwidth per direction beside the link's peak, and the calls that have no number and why. A device's chart is
// device_chart.ts.
import { fetchRoofline, type DeviceRoofs, type RooflineData, type RooflinePoint } from "../../api/roofline";
import type { SpanRef } from "../../api/types";
import { injectChartStyles } from "../../components/chart";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { injectViewStyles } from "../../components/view_styles";
import { emptyNote, metricLabel, sectionHead, simpleTable, spanRefOf } from "../../components/view_parts";
import { EFFICIENCY_DEFINITIONS as DEF, formatByteRate } from "../../lib/efficiency";
import { formatBytes, formatCount, formatPercent } from "../../lib/format";
import { formatTime } from "../../lib/metric_format";
import type { ViewContext, ViewDefinition } from "../types";
import { copiesOverTime } from "./copies_chart";
import { deviceChart } from "./device_chart";

const STYLE_ID = "profscope-roofline-styles";
const STYLES = `
.ps-roofline-chart { position: relative; }
.ps-roofline-tip { position: absolute; pointer-events: none; white-space: pre; font-size: 12px; line-height: 1.35;
  background: var(--ps-bg, #fff); color: var(--ps-fg, #202124); border: 1px solid var(--ps-border, #ccc);
  border-radius: 4px; padding: 6px 8px; box-shadow: 0 2px 6px rgba(0,0,0,.15); max-width: 520px; overflow: hidden;
  text-overflow: ellipsis; z-index: 5; }
.ps-roofline-legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; margin: 6px 0 0; }
.ps-roofline-legend span { display: inline-flex; align-items: center; gap: 5px; }
.ps-roofline-swatch { width: 10px; height: 10px; border-radius: 50%; display: inline-block; }
.ps-roofline-line { width: 16px; height: 0; border-top: 2px solid; display: inline-block; }
.ps-roofline-device { margin: 0 0 4px; }
.ps-roofline-open { font: inherit; font-size: 12px; padding: 1px 6px; cursor: pointer; white-space: nowrap; }
`;

function injectStyles(doc: Document): void {
  if (doc.getElementById(STYLE_ID) !== null) return;
  const style = doc.createElement("style");
  style.id = STYLE_ID;
  style.textContent = STYLES;
  doc.head.appendChild(style);
}

function gapsTable(data: RooflineData, onOpen: (point: RooflinePoint) => void): HTMLElement {
  if (data.gaps.length === 0) {
    return el("p", { className: "ps-muted", testId: "roofline-gaps" }, "No operator group with a roofline runs above its roofline time.");
  }
  return simpleTable(
    data.gaps,
    [
      { label: "Operator", cell: (row) => row.name },
      { label: "Input shapes", cell: (row) => row.input_shape ?? "" },
      { label: "Precision", cell: (row) => row.precision.toUpperCase() },
      { label: "Calls", numeric: true, cell: (row) => formatCount(row.calls) },
      { label: "Time", numeric: true, cell: (row) => formatTime(row.time) },
      { label: "% of roofline", tip: DEF.rooflineShare, numeric: true, cell: (row) => (row.roofline_share === null ? "—" : formatPercent(row.roofline_share)) },
      { label: "Bound", tip: DEF.bound, cell: (row) => row.bound ?? "—" },
      {
        label: "Above the roof",
        tip: "Measured time minus roofline time: what the calls would save at the roof.",
        numeric: true,
        cell: (row) => formatTime(row.gap),
      },
      {
        label: "Share of device time",
        numeric: true,
        cell: (row) => (row.gap_share === null ? "—" : formatPercent(row.gap_share)),
      },
      {
        label: "",
        cell: (row) => {
          const button = el("button", { className: "ps-roofline-open", attrs: { type: "button" } }, "Trace");
          button.addEventListener("click", () => onOpen(row));
          return button;
        },
      },
    ],
    "roofline-gaps",
  );
}

function copiesTable(data: RooflineData): HTMLElement {
  if (data.copies.directions.length === 0) return el("p", { className: "ps-muted", testId: "roofline-copies" }, "The span has no copies or memsets.");
  return simpleTable(
    data.copies.directions,
    [
      { label: "Direction", cell: (row) => row.label },
      { label: "Calls", numeric: true, cell: (row) => formatCount(row.calls) },
      { label: "Bytes", numeric: true, cell: (row) => formatBytes(row.bytes) },
      { label: "Time", numeric: true, cell: (row) => formatTime(row.time) },
      { label: "Bandwidth", tip: "Bytes of the calls that recorded their size over their time.", numeric: true, cell: (row) => formatByteRate(row.bandwidth) },
      { label: "Median per call", numeric: true, cell: (row) => formatByteRate(row.bandwidth_median) },
      { label: "Link peak", numeric: true, cell: (row) => formatByteRate(row.peak) },
      { label: "Link", cell: (row) => row.link },
      { label: "% of peak", numeric: true, cell: (row) => (row.peak_share === null ? "—" : formatPercent(row.peak_share)) },
    ],
    "roofline-copies",
  );
}

function uncountedList(data: RooflineData): HTMLElement | null {
  if (data.uncounted.length === 0) return null;
  return el(
    "section",
    { className: "ps-panel", testId: "roofline-uncounted" },
    el("h3", {}, "Calls without a number"),
    simpleTable(
      data.uncounted,
      [
        { label: "Why", cell: (row) => row.reason },
        { label: "Calls", numeric: true, cell: (row) => formatCount(row.calls) },
        { label: "Time", numeric: true, cell: (row) => formatTime(row.time) },
      ],
      "roofline-uncounted-table",
    ),
  );
}

function mountRoofline(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  injectChartStyles(document);
  injectStyles(document);
  const ref: SpanRef | null = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "roofline-page" });
  host.appendChild(page);
  if (ref === null) return;
  const body = el("div", {});
  page.append(
    el("h2", {}, "Roofline"),
    el(
      "p",
      { className: "ps-note" },
      metricLabel("Arithmetic intensity", DEF.intensity),
      " against achieved FLOP/s, per group of identical operator calls (operator, shapes, precision), under the roofs of the device. ",
      metricLabel("FLOPs", DEF.gflops),
      " and bytes come from the recorded shapes (record_shapes=True).",
    ),
    body,
  );
  const loader = createHostLoader(ctx.signal);

  function open(point: RooflinePoint): void {
    ctx.navigate("trace", {
      start: String(point.first_start),
      end: String(point.first_start + point.first_dur),
      select: String(point.first_event_id),
    });
  }

  function render(data: RooflineData, signal: AbortSignal): void {
    if (data.points.length === 0 && data.uncounted.length === 0) {
      replaceChildren(
        body,
        emptyNote(
          "roofline-empty",
          "No operator with FLOPs",
          "No operator call of this span has a formula and recorded shapes. Profile with record_shapes=True to give " +
            "products, convolutions, attention and elementwise operators their FLOPs and bytes.",
        ),
        copiesSection(data, signal),
      );
      return;
    }
    const devices: readonly DeviceRoofs[] = data.devices.length > 0 ? data.devices : [{ device: -1, name: null, reason: "", bandwidth: null, roofs: [] }];
    replaceChildren(
      body,
      data.peaks_error !== "" ? el("p", { className: "ps-note", testId: "roofline-peaks-error" }, `The device peaks file was not used: ${data.peaks_error}`) : null,
      ...devices.map((device) => deviceChart(device, data, open, signal)),
      el(
        "section",
        { className: "ps-panel" },
        sectionHead(
          "Biggest gaps to the roof",
          csvDownloadLink({
            api: ctx.api,
            route: "roofline",
            params: () => ({ run: ref!.run, worker: ref!.worker, span: ref!.span, table: "gaps" }),
            state: () => ({ sort: null, filter: "" }),
            testId: "roofline-csv",
            what: "the gaps to the roof",
          }),
        ),
        el("p", { className: "ps-note" }, "Groups with the most time above their roofline time: what to optimise first."),
        gapsTable(data, open),
      ),
      copiesSection(data, signal),
      uncountedList(data),
    );
  }

  function copiesSection(data: RooflineData, signal: AbortSignal): HTMLElement {
    return el("section", { className: "ps-panel" }, el("h3", {}, "Copies and memsets"), copiesTable(data), copiesOverTime(data.copies, signal));
  }

  void loader.load({
    host: body,
    fetch: (signal) => fetchRoofline(ctx.api, ref, signal),
    what: "the roofline",
    testIdPrefix: "roofline",
    errorTitle: "The roofline could not be computed",
    render,
  });
}

export const rooflineView: ViewDefinition = {
  id: "roofline",
  label: "Roofline",
  scope: "span",
  mount: mountRoofline,
};
