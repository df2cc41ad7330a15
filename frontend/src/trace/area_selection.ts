// The trace viewer's area selection: shift+drag selects a time range over the slice tracks the drag covers (a drag
// on the time axis: over every track); when the drag ends, `trace/range` summarises it in the side panel
// (panel/range.ts). The viewer owns the view and draws the range; this owns the range and its summary.
import type { ApiClient, QueryParams } from "../api/client";
import { fetchRangeSummary, rangeParams } from "../api/trace_range";
import type { SpanRef } from "../api/types";
import { counterTracksBetween, sliceTracksBetween, type TrackLayout } from "./layout";
import { RangePanel } from "./panel/range";
import type { Viewport } from "./time_scale";

/** What the area selection needs of the viewer. */
export interface AreaSelectionHost {
  readonly api: ApiClient;
  readonly ref: SpanRef;
  /** The span's start (trace time, µs): the range is in offsets from it. */
  readonly spanStart: number;
  /** The viewer's element (`data-range` holds the range summarised). */
  readonly root: HTMLElement;
  /** The selected slice's details panel: the range's summary takes its place. */
  readonly detailsRoot: HTMLElement;
  /** The time axis's height over the tracks (canvas y below it is content y, once scrolled). */
  readonly axisHeight: number;
  layout(): TrackLayout;
  scrollTop(): number;
  zoomToRange(): void;
  /** Searches for a slice name (a row of the summary). */
  searchFor(name: string): void;
  requestFrame(): void;
}

export class AreaSelection {
  readonly panel: RangePanel;
  /** The range (offset µs), while one is selected or dragged. */
  range: Viewport | null = null;
  /** The area selection's slice tracks; null: every track (a drag on the time axis). */
  tracks: string[] | null = null;
  /** Content y where a range drag started and is now (null: it started on the time axis). */
  private rows: [number, number] | null = null;
  private controller: AbortController | null = null;

  constructor(private readonly host: AreaSelectionHost) {
    this.panel = new RangePanel(
      host.api,
      { zoomToRange: () => host.zoomToRange(), close: () => this.set(null), searchFor: (name) => host.searchFor(name) },
      host.spanStart,
    );
  }

  dispose(): void {
    this.controller?.abort();
  }

  set(range: Viewport | null): void {
    this.range = range;
    if (range === null) {
      this.rows = null;
      this.tracks = null;
      this.controller?.abort();
      this.controller = null;
      this.panel.hide();
      delete this.host.root.dataset["range"];
    }
    this.host.requestFrame();
  }

  /** Canvas y (CSS px) of a range drag → the slice tracks it covers (null: every track, from the axis). */
  setRows(y0: number | null, y1: number | null): void {
    if (y0 === null || y1 === null) {
      this.rows = null;
      this.tracks = null;
    } else {
      const content = (y: number): number => y - this.host.axisHeight + this.host.scrollTop();
      this.rows = [content(y0), content(y1)];
      const layout = this.host.layout();
      this.tracks = [...sliceTracksBetween(layout, this.rows[0], this.rows[1]), ...counterTracksBetween(layout, this.rows[0], this.rows[1])];
    }
    this.host.requestFrame();
  }

  /** Asks the backend what lies in the range and shows it in the side panel. */
  summarise(): void {
    const range = this.range;
    if (range === null || range.end <= range.start) return;
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.host.detailsRoot.hidden = true; // the range's summary takes the panel's place
    this.host.root.dataset["range"] = `${range.start.toFixed(3)},${range.end.toFixed(3)}`;
    if (this.tracks !== null && this.tracks.length === 0) {
      this.panel.showMessage("The selection covers no track (only group headers): drag over tracks, or on the time axis for every track.", "empty");
      return;
    }
    const spanStart = this.host.spanStart;
    const params: QueryParams = rangeParams(this.host.ref, spanStart + range.start, spanStart + range.end, this.tracks);
    this.panel.showLoading();
    fetchRangeSummary(this.host.api, params, controller.signal).then(
      (result) => {
        if (controller.signal.aborted) return;
        if (result.kind === "ok") this.panel.show(result.data, params, controller.signal);
        else if (result.kind === "loading") this.panel.showMessage("The trace is still loading; select the range again in a moment.", "error");
        else this.panel.showMessage(result.message, "error");
      },
      () => undefined, // aborted: a newer range replaced this one
    );
  }
}
