// The trace viewer: wires data (tile stores), rendering (one requestAnimationFrame loop) and
// interaction (controller, search, side panel) around one canvas. Everything that changes
// what is drawn calls `requestFrame()`; the frame asks the stores for the tiles the view
// needs and draws what is there now — it never waits for the network.
import type { ApiClient } from "../api/client";
import { fetchEventDetail, fetchSearch, traceDownloadUrl, type EventBrief, type EventDetail, type TracksData } from "../api/trace";
import type { SpanRef } from "../api/types";
import { el } from "../components/dom";
import { AreaSelection } from "./area_selection";
import { CriticalPathMode } from "./critical_path_mode";
import { TileStore } from "./data/tile_store";
import { counterTileFetcher, sliceTileFetcher, type CounterTileData, type SliceTileData } from "./data/tiles";
import { InteractionController, type InteractionHost } from "./interaction/controller";
import { hitTest, type Hit } from "./interaction/hit_test";
import { flowArrows, placeOf } from "./flows";
import { recordFrameDebug } from "./frame_debug";
import { clampHeaderWidth, storedHeaderWidth, storeHeaderWidth } from "./header_width";
import {
  DEFAULT_METRICS,
  depthTop,
  layoutTracks,
  parsePinned,
  rowAt,
  togglePinned,
  visibleCounterTracks,
  visibleSliceTracks,
  type TrackLayout,
} from "./layout";
import { DetailsPanel } from "./panel/details";
import { ColorCache } from "./render/colors";
import { drawFrame, type FlowArrow, type RenderResources, type SlicePlace, type Theme } from "./render/renderer";
import { TextFitter } from "./render/text_fit";
import { readTheme } from "./render/theme";
import { searchCounter, TraceSearch, type SearchState } from "./search";
import { clampView, focusWindow, isInView, TimeScale, type Viewport } from "./time_scale";
import { createToolbar } from "./toolbar";
import { placeTooltip, tooltipLines } from "./tooltip";
import { initialView, viewerParams } from "./url_params";

export const AXIS_HEIGHT = 26;
/** URL parameters are written this long after the view stops changing. */
const URL_DEBOUNCE_MS = 300;
/** While old tiles cover the view, a new one is asked for once the view rests this long on it. */
const TILE_DEBOUNCE_MS = 80;

export interface TraceViewerOptions {
  readonly api: ApiClient;
  readonly ref: SpanRef;
  readonly tracks: TracksData;
  /** From the URL: trace-time µs, or null. */
  readonly initialStart: number | null;
  readonly initialEnd: number | null;
  readonly initialSelect: number | null;
  /** The pinned tracks from the URL (`trace.pinned`), or null. */
  readonly initialPinned?: string | null;
  /** Writes the viewer's URL parameters (null removes one). */
  readonly setParams: (patch: Readonly<Record<string, string | null>>) => void;
  /** Buttons of the page put in the toolbar after "Critical path" (the switch to ranks side by side). */
  readonly toolbarButtons?: readonly HTMLElement[];
}

interface Selection {
  readonly id: number;
  place: SlicePlace | null;
  detail: EventDetail | null;
}

export class TraceViewer {
  readonly root: HTMLElement;
  private readonly spanStart: number;
  private readonly spanDuration: number;
  private view: Viewport;
  private readonly collapsed = new Set<string>();
  private pinned: string[];
  private headerWidth: number;
  private layout: TrackLayout;
  private readonly sliceStore: TileStore<SliceTileData>;
  private readonly counterStore: TileStore<CounterTileData>;
  private selection: Selection | null = null;
  private detailController: AbortController | null = null;
  private hovered: SlicePlace | null = null;
  private readonly area: AreaSelection;
  private readonly path: CriticalPathMode;
  private match: SlicePlace | null = null;
  private flows: FlowArrow[] = [];
  private readonly search: TraceSearch;
  private readonly controller: InteractionController;
  private readonly details: DetailsPanel;

  private readonly canvas: HTMLCanvasElement;
  private readonly ctx: CanvasRenderingContext2D;
  private readonly scroller: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly tooltip: HTMLElement;
  private readonly statusText: HTMLElement;
  private readonly searchInput: HTMLInputElement;
  private readonly searchCount: HTMLElement;
  private width = 0;
  private height = 0;
  private dpr = 1;
  private theme: Theme;
  private readonly resources: RenderResources;
  private rafId: number | null = null;
  private urlTimer: ReturnType<typeof setTimeout> | null = null;
  private lastParams = "";
  private destroyed = false;
  private readonly resizeObserver: ResizeObserver;
  private readonly themeObserver: MutationObserver;
  private readonly win: Window;

  constructor(
    host: HTMLElement,
    private readonly options: TraceViewerOptions,
  ) {
    const doc = host.ownerDocument;
    this.win = doc.defaultView ?? window;
    const { tracks } = options;
    this.spanStart = tracks.start;
    this.spanDuration = tracks.end - tracks.start;
    const spanNs = Math.round(this.spanDuration * 1000);
    this.view = initialView(tracks.start, tracks.end, options.initialStart, options.initialEnd);
    this.pinned = parsePinned(options.initialPinned ?? null, new Set(tracks.tracks.map((track) => track.id)));
    this.headerWidth = storedHeaderWidth(this.win);
    this.layout = layoutTracks(tracks.tracks, this.collapsed, DEFAULT_METRICS, this.pinned);

    const requestFrame = (): void => this.requestFrame();
    const storeOptions = { debounceMs: TILE_DEBOUNCE_MS };
    this.sliceStore = new TileStore(sliceTileFetcher(options.api, options.ref, this.spanStart), requestFrame, spanNs, storeOptions);
    this.counterStore = new TileStore(counterTileFetcher(options.api, options.ref, this.spanStart), requestFrame, spanNs, storeOptions);

    // --- DOM ---
    this.canvas = el("canvas", { className: "ps-trace-canvas", testId: "trace-canvas", attrs: { tabindex: "0", "aria-label": "Trace timeline" } });
    const context = this.canvas.getContext("2d", { alpha: false });
    if (context === null) throw new Error("this browser cannot draw on a canvas");
    this.ctx = context;
    this.spacer = el("div", { className: "ps-trace-spacer" });
    this.scroller = el("div", { className: "ps-trace-scroller", testId: "trace-scroller" }, this.canvas, this.spacer);
    this.tooltip = el("div", { className: "ps-trace-tooltip", testId: "trace-tooltip", hidden: true });
    this.details = new DetailsPanel(
      {
        jumpTo: (brief) => this.jumpTo(brief),
        zoomToSelected: () => this.zoomToSelection(),
        close: () => this.clearSelection(),
        loadWholeTexts: (id) => fetchEventDetail(options.api, options.ref, id, this.detailController?.signal, true),
      },
      this.spanStart,
    );
    const toolbar = createToolbar(
      {
        searchStep: (delta, query) => void this.search.step(delta, query),
        searchEdited: (query) => {
          // Cleared (or changed): the count and the highlight go, and so does the match the search selected.
          const match = this.search.edited(query);
          if (match !== null && this.selection?.id === match.id) this.clearSelection();
        },
        zoomToSelection: () => this.zoomToSelection(),
        wholeSpan: () => this.setView({ start: 0, end: this.spanDuration }),
        toggleCriticalPath: () => this.path.toggle(),
      },
      traceDownloadUrl(options.api, options.ref),
      options.toolbarButtons ?? [],
    );
    this.searchInput = toolbar.searchInput;
    this.searchCount = toolbar.searchCount;
    this.statusText = toolbar.statusText;
    this.search = new TraceSearch(
      (query, offset, limit, signal) => fetchSearch(options.api, options.ref, query, offset, limit, signal),
      (state, jump) => this.onSearch(state, jump),
    );

    this.root = el("div", { className: "ps-trace", testId: "trace-viewer" });
    this.area = new AreaSelection({
      api: options.api,
      ref: options.ref,
      spanStart: this.spanStart,
      root: this.root,
      detailsRoot: this.details.root,
      axisHeight: AXIS_HEIGHT,
      layout: () => this.layout,
      scrollTop: () => this.scroller.scrollTop,
      zoomToRange: () => this.zoomToSelection(),
      searchFor: (name) => {
        this.searchInput.value = name;
        void this.search.step(1, name);
      },
      requestFrame,
    });
    this.path = new CriticalPathMode(
      {
        api: options.api,
        ref: options.ref,
        spanStart: this.spanStart,
        root: this.root,
        view: () => this.view,
        setView: (view) => this.setView(view),
        hasSelection: () => this.selection !== null,
        select: (id, name) => this.selectEvent(id, null, name, true),
        requestFrame,
      },
      toolbar.pathButton,
    );
    this.root.append(
      toolbar.root,
      el("div", { className: "ps-trace-body" }, this.scroller, this.details.root, this.area.panel.root, this.path.panel.root),
      this.tooltip,
    );
    host.appendChild(this.root);

    this.theme = readTheme(doc);
    const measure = (text: string): number => this.ctx.measureText(text).width;
    this.resources = { colors: new ColorCache(), labelText: new TextFitter(measure), headerText: new TextFitter(measure) };
    this.themeObserver = new MutationObserver(() => {
      this.theme = readTheme(doc);
      this.resources.labelText.reset();
      this.resources.headerText.reset();
      this.requestFrame();
    });
    this.themeObserver.observe(doc.documentElement, { attributes: true, attributeFilter: ["data-theme", "class", "style"] });

    this.controller = new InteractionController(this.interactionHost());
    this.scroller.addEventListener("scroll", requestFrame, { passive: true });
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(this.scroller);
    this.resize();

    if (options.initialSelect !== null) {
      // A shared link or another view: reveal the event unless the link also fixed the window.
      const reveal = options.initialStart === null || options.initialEnd === null;
      this.selectEvent(options.initialSelect, null, "", reveal);
    }
    this.lastParams = this.paramsKey();
    this.requestFrame();
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.rafId !== null) this.win.cancelAnimationFrame(this.rafId);
    if (this.urlTimer !== null) clearTimeout(this.urlTimer);
    this.controller.dispose();
    this.sliceStore.dispose();
    this.counterStore.dispose();
    this.search.dispose();
    this.detailController?.abort();
    this.area.dispose();
    this.path.dispose();
    this.resizeObserver.disconnect();
    this.themeObserver.disconnect();
  }

  // --- frame loop -------------------------------------------------------------------

  requestFrame(): void {
    if (this.rafId !== null || this.destroyed) return;
    this.rafId = this.win.requestAnimationFrame((now) => this.frame(now));
  }

  private timelineWidth(): number {
    return Math.max(1, this.width - this.shownHeaderWidth());
  }

  /** The label column as drawn: the chosen width, within what the canvas allows. */
  private shownHeaderWidth(): number {
    return clampHeaderWidth(this.headerWidth, this.width);
  }

  private setHeaderWidth(px: number): void {
    const next = clampHeaderWidth(px, this.width);
    if (next === this.headerWidth) return;
    this.headerWidth = next;
    storeHeaderWidth(this.win, next);
    this.requestFrame();
  }

  private frame(now: number): void {
    this.rafId = null;
    if (this.destroyed || this.width <= 0 || this.height <= 0) return;
    this.controller.step(now);
    const timelineWidth = this.timelineWidth();
    const sliceTracks = visibleSliceTracks(this.layout);
    const counterTracks = visibleCounterTracks(this.layout);
    this.sliceStore.want(this.view, timelineWidth, sliceTracks);
    this.counterStore.want(this.view, timelineWidth, counterTracks);
    const slices = this.sliceStore.best(this.view, timelineWidth, sliceTracks);
    const counters = this.counterStore.best(this.view, timelineWidth, counterTracks);
    const drawStart = performance.now();
    const stats = drawFrame(
      this.ctx,
      {
        width: this.width,
        height: this.height,
        dpr: this.dpr,
        headerWidth: this.shownHeaderWidth(),
        axisHeight: AXIS_HEIGHT,
        view: this.view,
        scrollTop: this.scroller.scrollTop,
        layout: this.layout,
        slices,
        counters,
        selected: this.selection?.place ?? null,
        hovered: this.hovered,
        match: this.match,
        flows: this.flows,
        range: this.area.range,
        rangeTracks: this.area.tracks !== null ? new Set(this.area.tracks) : null,
        highlight: this.path.highlight,
        pathMarks: this.path.marks,
        loading: this.sliceStore.loading || this.counterStore.loading,
        theme: this.theme,
      },
      this.resources,
    );
    const drawMs = performance.now() - drawStart;
    recordFrameDebug(this.win, now, drawMs, stats, { slicesTiles: this.sliceStore.stats, counterTiles: this.counterStore.stats });
    this.updateStatus(slices !== null);
    this.scheduleUrl();
    if (this.controller.animating) this.requestFrame();
  }

  private updateStatus(hasTile: boolean): void {
    const error = this.sliceStore.error ?? this.counterStore.error;
    const backend = this.sliceStore.backendLoading;
    let text = "";
    let state = "idle";
    if (error !== null) {
      text = `Could not load this window: ${error}`;
      state = "error";
    } else if (backend !== null) {
      text = backend.progress !== null ? `The backend is loading the trace… ${Math.round(backend.progress * 100)}%` : "The backend is loading the trace…";
      state = "loading";
    } else if (this.sliceStore.loading) {
      state = "loading";
    }
    if (this.statusText.textContent !== text) this.statusText.textContent = text;
    if (this.statusText.dataset["state"] !== state) this.statusText.dataset["state"] = state;
    const ready = hasTile && !this.sliceStore.loading ? "true" : "false";
    if (this.root.dataset["ready"] !== ready) this.root.dataset["ready"] = ready;
    const viewText = `${this.view.start.toFixed(3)},${this.view.end.toFixed(3)}`;
    if (this.root.dataset["view"] !== viewText) this.root.dataset["view"] = viewText;
  }

  private resize(): void {
    const width = this.scroller.clientWidth;
    const height = this.scroller.clientHeight;
    const dpr = this.win.devicePixelRatio || 1;
    if (width !== this.width || height !== this.height || dpr !== this.dpr) {
      this.width = width;
      this.height = height;
      this.dpr = dpr;
      this.canvas.style.width = `${width}px`;
      this.canvas.style.height = `${height}px`;
      this.canvas.width = Math.max(1, Math.round(width * dpr));
      this.canvas.height = Math.max(1, Math.round(height * dpr));
    }
    this.updateSpacer();
    this.requestFrame();
  }

  private updateSpacer(): void {
    const content = this.layout.height + AXIS_HEIGHT;
    this.spacer.style.height = `${Math.max(0, content - this.height)}px`;
  }

  // --- view and URL --------------------------------------------------------------------

  private setView(view: Viewport): void {
    const next = clampView(view, this.spanDuration);
    if (next.start === this.view.start && next.end === this.view.end) return;
    this.view = next;
    this.requestFrame();
  }

  private paramsKey(): string {
    return JSON.stringify(this.params());
  }

  private params(): Record<string, string | null> {
    return viewerParams(this.view, this.spanStart, this.spanDuration, this.selection?.id ?? null, this.pinned);
  }

  private scheduleUrl(): void {
    if (this.paramsKey() === this.lastParams || this.urlTimer !== null) return;
    this.urlTimer = setTimeout(() => {
      this.urlTimer = null;
      if (this.destroyed) return;
      const key = this.paramsKey();
      if (key === this.lastParams) return;
      this.lastParams = key;
      this.options.setParams(this.params());
    }, URL_DEBOUNCE_MS);
  }

  // --- selection, links, search ------------------------------------------------------

  private placeOf(brief: EventBrief): SlicePlace {
    return placeOf(brief, this.spanStart);
  }

  private selectEvent(id: number, place: SlicePlace | null, name: string, reveal: boolean): void {
    this.detailController?.abort();
    const controller = new AbortController();
    this.detailController = controller;
    const selection: Selection = { id, place, detail: null };
    this.selection = selection;
    this.flows = [];
    this.area.panel.root.hidden = true; // the slice's details take the panel's place
    this.path.panel.root.hidden = true;
    this.details.showLoading(name);
    this.root.dataset["selected"] = String(id);
    this.requestFrame();
    fetchEventDetail(this.options.api, this.options.ref, id, controller.signal).then(
      (result) => {
        if (controller.signal.aborted || this.selection !== selection) return;
        if (result.kind === "ok") {
          selection.detail = result.data;
          selection.place = this.placeOf(result.data);
          this.flows = flowArrows(result.data, this.spanStart);
          this.details.show(result.data);
          if (reveal) this.reveal(selection.place);
        } else if (result.kind === "loading") {
          this.details.showError("The trace is still loading; select the slice again in a moment.");
        } else {
          this.details.showError(result.message);
        }
        this.requestFrame();
      },
      () => undefined, // aborted: a newer selection replaced this one
    );
  }

  private focusSearch(): void {
    this.searchInput.focus();
    this.searchInput.select();
  }

  private clearSelection(): void {
    this.detailController?.abort();
    this.detailController = null;
    this.selection = null;
    this.flows = [];
    this.details.hide();
    if (this.area.range !== null && this.area.panel.root.dataset["state"] !== "empty") this.area.panel.root.hidden = false;
    else if (this.path.panel.root.dataset["state"] !== undefined && this.path.panel.root.dataset["state"] !== "empty") this.path.panel.root.hidden = false;
    delete this.root.dataset["selected"];
    this.requestFrame();
  }

  /** Makes a slice visible: expands its group, zooms if it is not in view, scrolls to its row. */
  private reveal(place: SlicePlace): void {
    const track = this.options.tracks.tracks.find((candidate) => candidate.id === place.trackId);
    if (track !== undefined && this.collapsed.has(track.group)) this.toggleGroup(track.group);
    const scale = new TimeScale(this.view, this.timelineWidth());
    if (!isInView(this.view, place.start, place.dur) || scale.durationToPx(place.dur) < 1) {
      this.setView(focusWindow(place.start, place.dur, this.spanDuration));
    }
    const row = this.layout.tracks.get(place.trackId);
    if (row !== undefined) {
      const top = depthTop(row, place.depth, this.layout.metrics);
      const visible = this.height - AXIS_HEIGHT;
      const scrollTop = this.scroller.scrollTop;
      if (top < scrollTop || top + this.layout.metrics.sliceRowHeight > scrollTop + visible) {
        this.scroller.scrollTop = Math.max(0, top - visible / 3);
      }
    }
    this.requestFrame();
  }

  private jumpTo(brief: EventBrief): void {
    const place = this.placeOf(brief);
    this.reveal(place);
    this.selectEvent(brief.id, place, brief.name, false);
  }

  private zoomToSelection(): void {
    const range = this.area.range;
    if (range !== null && range.end > range.start) {
      this.setView(range);
      this.area.range = null;
      this.requestFrame();
      return;
    }
    const place = this.selection?.place;
    if (place !== null && place !== undefined) this.setView(focusWindow(place.start, place.dur, this.spanDuration));
  }

  private onSearch(state: SearchState, jump: boolean): void {
    this.searchCount.textContent = searchCounter(state);
    this.searchCount.dataset["state"] = state.status;
    if (state.current === null) {
      this.match = null;
      delete this.root.dataset["match"];
      this.requestFrame();
      return;
    }
    this.match = this.placeOf(state.current);
    this.root.dataset["match"] = String(state.current.id);
    if (jump) this.jumpTo(state.current);
    this.requestFrame();
  }

  private toggleGroup(group: string): void {
    if (this.collapsed.has(group)) this.collapsed.delete(group);
    else this.collapsed.add(group);
    this.relayout();
  }

  private togglePin(trackId: string): void {
    this.pinned = togglePinned(this.pinned, trackId);
    this.relayout();
  }

  private relayout(): void {
    this.layout = layoutTracks(this.options.tracks.tracks, this.collapsed, DEFAULT_METRICS, this.pinned);
    this.updateSpacer();
    this.requestFrame();
  }

  // --- hover -------------------------------------------------------------------------

  private hover(hit: Hit | null, clientX: number, clientY: number): void {
    const place: SlicePlace | null =
      hit?.kind === "slice" ? { trackId: hit.trackId, start: hit.start, dur: hit.dur, depth: hit.depth } : null;
    const changed =
      (place === null) !== (this.hovered === null) ||
      (place !== null && this.hovered !== null && (place.trackId !== this.hovered.trackId || place.start !== this.hovered.start || place.depth !== this.hovered.depth));
    this.hovered = place;
    if (changed) this.requestFrame();
    this.canvas.dataset["cursor"] = hit !== null && hit.kind !== "counter" ? "pointer" : "default";
    placeTooltip(this.tooltip, hit === null ? null : tooltipLines(hit, this.layout, this.collapsed), clientX, clientY, this.win);
  }

  // --- interaction host --------------------------------------------------------------

  private interactionHost(): InteractionHost {
    return {
      canvas: this.canvas,
      keyTarget: this.root,
      headerWidth: () => this.shownHeaderWidth(),
      axisHeight: () => AXIS_HEIGHT,
      timelineWidth: () => this.timelineWidth(),
      spanDuration: () => this.spanDuration,
      view: () => this.view,
      setView: (view) => this.setView(view),
      scrollBy: (px) => {
        this.scroller.scrollTop += px;
        this.requestFrame();
      },
      pageHeight: () => this.height,
      hitAt: (x, y) => {
        if (y < AXIS_HEIGHT) return null;
        const contentY = y - AXIS_HEIGHT + this.scroller.scrollTop;
        const headerWidth = this.shownHeaderWidth();
        if (x < headerWidth) {
          // Over the names: a group header collapses its group, a track's name pins it.
          const row = rowAt(this.layout, contentY);
          if (row === null) return null;
          return row.kind === "group" ? { kind: "group", group: row.group } : { kind: "label", trackId: row.track.id };
        }
        const scale = new TimeScale(this.view, this.timelineWidth());
        const timelineWidth = this.timelineWidth();
        const sliceTracks = visibleSliceTracks(this.layout);
        const counterTracks = visibleCounterTracks(this.layout);
        return hitTest({
          layout: this.layout,
          slices: this.sliceStore.best(this.view, timelineWidth, sliceTracks)?.data ?? null,
          counters: this.counterStore.best(this.view, timelineWidth, counterTracks)?.data ?? null,
          time: scale.pxToTime(x - headerWidth),
          y: contentY,
          usPerPx: scale.pxToDuration(1),
        });
      },
      hover: (hit, clientX, clientY) => this.hover(hit, clientX, clientY),
      click: (hit) => {
        if (hit === null || hit.kind === "counter") this.clearSelection();
        else if (hit.kind === "slice") {
          this.selectEvent(hit.id, { trackId: hit.trackId, start: hit.start, dur: hit.dur, depth: hit.depth }, hit.name, false);
        } else if (hit.kind === "label") {
          this.togglePin(hit.trackId);
        } else if (hit.kind === "block") {
          const margin = (hit.end - hit.start) * 0.05;
          this.setView({ start: hit.start - margin, end: hit.end + margin });
        } else {
          this.toggleGroup(hit.group);
        }
      },
      toggleGroup: (group) => this.toggleGroup(group),
      setRange: (range) => this.area.set(range),
      range: () => this.area.range,
      setRangeRows: (y0, y1) => this.area.setRows(y0, y1),
      rangeDone: () => this.area.summarise(),
      setHeaderWidth: (px) => this.setHeaderWidth(px),
      gripHover: (on) => {
        if (on) this.canvas.dataset["cursor"] = "col-resize";
        else if (this.canvas.dataset["cursor"] === "col-resize") this.canvas.dataset["cursor"] = "default";
      },
      searchStep: (direction) => {
        if (this.searchInput.value.trim() === "") this.focusSearch();
        else void this.search.step(direction, this.searchInput.value);
      },
      focusSearch: () => this.focusSearch(),
      zoomToSelection: () => this.zoomToSelection(),
      clearSelection: () => this.clearSelection(),
      requestFrame: () => this.requestFrame(),
    };
  }
}
