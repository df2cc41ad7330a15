// The Memory snapshot page's timeline of one device: the chart, asking the timeline route for each window it
// shows (one request at a time; an answer of another window is dropped), its window kept in the URL, and the
// legend of the sites the last answer stacked.
import { fetchTimeline, type SnapshotOverview, type SnapshotRef, type SnapshotTimeline } from "../../api/snapshot";
import { el, replaceChildren } from "../../components/dom";
import { createSignalSlot } from "../../components/loader";
import { siteColor, startWindow, windowParams, type Window } from "../../lib/snapshot_model";
import type { ViewContext } from "../types";
import { createSnapshotTimeline, type SnapshotTimelineChart } from "./timeline";
import { ignoreAbort } from "../../api/abort";

export interface TimelineSection {
  readonly chart: SnapshotTimelineChart;
  readonly legend: HTMLElement;
}

/** `span`: the device's whole timeline; `onPick`: a click picked the moment after entry `row`, on `site`'s band. */
export function createTimelineSection(
  ctx: ViewContext,
  ref: SnapshotRef,
  overview: SnapshotOverview,
  device: { readonly device: number; readonly span: Window; readonly capacity: number | null },
  onPick: (row: number, site: number | null) => void,
): TimelineSection {
  const { span } = device;
  const legend = el("div", { className: "ps-legend", testId: "snapshot-legend" });
  const timelineSlot = createSignalSlot(ctx.signal);
  let chart: SnapshotTimelineChart | null = null;
  chart = createSnapshotTimeline({
    axis: overview.axis,
    span,
    initial: startWindow(span, Number(ctx.param("start")), Number(ctx.param("end"))),
    capacity: device.capacity,
    reservedKnown: overview.reserved_known,
    load: (window, width) => {
      const signal = timelineSlot.next();
      void fetchTimeline(ctx.api, ref, { device: device.device, start: window.start, end: window.end, width }, signal).then((result) => {
        if (signal.aborted || result.kind !== "ok" || chart === null) return;
        const current = chart.window();
        if (result.data.start !== current.start || result.data.end !== current.end) return;
        chart.show(result.data);
        replaceChildren(legend, ...legendItems(result.data));
      }).catch(ignoreAbort);
    },
    onWindow: (window) => ctx.setParams(windowParams(window, span)),
    onPick: (row, _time, site) => onPick(row, site),
    signal: ctx.signal,
  });
  return { chart, legend };
}

/** A swatch per site stacked, then the other sites' grey. */
function legendItems(data: SnapshotTimeline): HTMLElement[] {
  const item = (label: string, colour: string): HTMLElement => {
    const span = el("span", {}, label);
    span.style.setProperty("--swatch", colour);
    return span;
  };
  return [...data.sites.map((site) => item(site.label, siteColor(site.label))), item("other sites", "rgba(150,150,150,0.55)")];
}
