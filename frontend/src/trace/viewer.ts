// The trace viewer: wires data (tile stores), rendering (one requestAnimationFrame loop) and
// interaction (controller, search, side panel) around one canvas. Everything that changes
// what is drawn calls `requestFrame()`; the frame asks the stores for the tiles the view
// needs and draws what is there now — it never waits for the network.
import type { ApiClient, QueryParams } from "../api/client";
import { fetchEventDetail, fetchSearch, traceDownloadUrl, type EventBrief, type EventDetail, type TracksData } from "../api/trace";
import { fetchRangeSummary, rangeParams } from "../api/trace_range";
import { fetchCriticalPath, type CriticalPathData, type PathEntry } from "../api/critical_path";
import type { SpanRef } from "../api/types";
import { el, replaceChildren } from "../components/dom";
import { formatDuration } from "../lib/format";
import { pathMarks, stepAt } from "./critical_path";
import { TileStore } from "./data/tile_store";
import { counterTileFetcher, sliceTileFetcher, type CounterTileData, type SliceTileData } from "./data/tiles";
import { InteractionController, type InteractionHost } from "./interaction/controller";
import { hitTest, type Hit } from "./interaction/hit_test";
import {
  DEFAULT_METRICS,
  depthTop,
  formatPinned,
  layoutTracks,
  parsePinned,
  rowAt,
  sliceTracksBetween,
  togglePinned,
  visibleCounterTracks,
  visibleSliceTracks,
  type TrackLayout,
} from "./layout";
import { CriticalPathPanel } from "./panel/critical_path";
import { DetailsPanel } from "./panel/details";
import { RangePanel } from "./panel/range";
import { ColorCache } from "./render/colors";
import { drawFrame, formatCounterValue, type FlowArrow, type PathMark, type RenderResources, type SlicePlace, type Theme } from "./render/renderer";
import { TextFitter } from "./render/text_fit";
import { readTheme } from "./render/theme";
import { searchCounter, TraceSearch, type SearchState } from "./search";
import { clampView, focusWindow, isInView, TimeScale, type Viewport } from "./time_scale";

/** The label column's width until a person drags its edge (then kept in the browser's storage). */
export const HEADER_WIDTH = 220;
export const MIN_HEADER_WIDTH = 120;
/** The label column never takes more than this share of the canvas. */
const MAX_HEADER_SHARE = 0.6;
const HEADER_WIDTH_KEY = "profscope.trace.labelWidth";
export const AXIS_HEIGHT = 26;
/** URL parameters are written this long after the view stops changing. */
const URL_DEBOUNCE_MS = 300;
/** While old tiles cover the view, a new one is asked for once the view rests this long on it. */
const TILE_DEBOUNCE_MS = 80;

/** URL parameter names (the shell prefixes them with "trace."). */
export const PARAM_START = "start";
export const PARAM_END = "end";
export const PARAM_SELECT = "select";
export const PARAM_PINNED = "pinned";

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

/** A trace time for the URL: µs with at most 3 decimals, shortest text. */
export function formatTraceTime(us: number): string {
  return String(Number(us.toFixed(3)));
}

/** The first window: the URL's when it is valid, else the whole span. */
export function initialView(spanStart: number, spanEnd: number, start: number | null, end: number | null): Viewport {
  const duration = spanEnd - spanStart;
  if (start !== null && end !== null && Number.isFinite(start) && Number.isFinite(end) && end > start) {
    return clampView({ start: start - spanStart, end: end - spanStart }, duration);
  }
  return { start: 0, end: duration };
}

/** The label column's width within what the canvas allows (a narrow canvas keeps room for the timeline). */
export function clampHeaderWidth(px: number, canvasWidth: number): number {
  const most = canvasWidth > 0 ? Math.max(MIN_HEADER_WIDTH, Math.floor(canvasWidth * MAX_HEADER_SHARE)) : Number.POSITIVE_INFINITY;
  return Math.round(Math.min(most, Math.max(MIN_HEADER_WIDTH, Number.isFinite(px) ? px : HEADER_WIDTH)));
}

function storedHeaderWidth(win: Window): number {
  try {
    const stored = Number(win.localStorage.getItem(HEADER_WIDTH_KEY));
    return Number.isFinite(stored) && stored >= MIN_HEADER_WIDTH ? stored : HEADER_WIDTH;
  } catch {
    return HEADER_WIDTH;
  }
}

interface DebugGlobals {
  __profscopeTraceDebug?: unknown;
  __profscopeFrameTimes?: number[];
  __profscopeDrawTimes?: number[];
  __profscopeFrameStats?: object[];
  __profscopeTraceStats?: unknown;
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
  private range: Viewport | null = null;
  /** The area selection's slice tracks; null: every track (a drag on the time axis). */
  private rangeTracks: string[] | null = null;
  /** Content y where a range drag started and is now (null: it started on the time axis). */
  private rangeRows: [number, number] | null = null;
  private rangeController: AbortController | null = null;
  private readonly rangePanel: RangePanel;
  /** The critical path shown (its slices highlighted), and the last one loaded (for its list of steps). */
  private criticalPath: CriticalPathData | null = null;
  private highlight: ReadonlySet<number> | null = null;
  private pathMarks: readonly PathMark[] | null = null;
  private pathController: AbortController | null = null;
  private readonly pathPanel: CriticalPathPanel;
  private readonly pathButton: HTMLButtonElement;
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
    this.statusText = el("span", { className: "ps-trace-status", testId: "trace-status" });
    this.details = new DetailsPanel(
      {
        jumpTo: (brief) => this.jumpTo(brief),
        zoomToSelected: () => this.zoomToSelection(),
        close: () => this.clearSelection(),
        loadWholeTexts: (id) => fetchEventDetail(options.api, options.ref, id, this.detailController?.signal, true),
      },
      this.spanStart,
    );
    this.rangePanel = new RangePanel(
      options.api,
      {
        zoomToRange: () => this.zoomToSelection(),
        close: () => this.setRange(null),
        searchFor: (name) => {
          this.searchInput.value = name;
          void this.search.step(1, name);
        },
      },
      this.spanStart,
    );

    this.pathPanel = new CriticalPathPanel(
      {
        showStep: (index) => this.showCriticalPath(index),
        zoomToStep: () => this.zoomToPathStep(),
        select: (entry) => this.selectPathEntry(entry),
        close: () => this.hideCriticalPath(),
      },
      this.spanStart,
    );
    this.pathButton = this.button("Critical path", "trace-critical-path-toggle", "Highlight the critical path of the step in view: what decides its length", () =>
      this.highlight !== null || this.pathController !== null ? this.hideCriticalPath() : this.showCriticalPath(null),
    );
    this.pathButton.setAttribute("aria-pressed", "false");

    this.searchInput = el("input", {
      testId: "trace-search-input",
      attrs: { type: "search", placeholder: "Search slices by name", "aria-label": "Search slices by name", autocomplete: "off", spellcheck: "false" },
    });
    this.searchCount = el("span", { className: "ps-trace-count", testId: "trace-search-count", attrs: { "aria-live": "polite" } });
    const previous = this.button("‹", "trace-search-prev", "Previous match (Shift+Enter)", () => void this.search.step(-1, this.searchInput.value));
    const next = this.button("›", "trace-search-next", "Next match (Enter)", () => void this.search.step(1, this.searchInput.value));
    const form = el("form", { className: "ps-trace-search", attrs: { role: "search" } }, this.searchInput, previous, next, this.searchCount);
    form.addEventListener("submit", (event) => event.preventDefault());
    this.searchInput.addEventListener("input", () => {
      // Cleared (or changed): the count and the highlight go, and so does the match the search selected.
      const match = this.search.edited(this.searchInput.value);
      if (match !== null && this.selection?.id === match.id) this.clearSelection();
    });
    this.searchInput.addEventListener("keydown", (event) => {
      if (event.key !== "Enter") return;
      event.preventDefault();
      void this.search.step(event.shiftKey ? -1 : 1, this.searchInput.value);
    });
    this.search = new TraceSearch(
      (query, offset, limit, signal) => fetchSearch(options.api, options.ref, query, offset, limit, signal),
      (state, jump) => this.onSearch(state, jump),
    );

    const download = el(
      "a",
      {
        className: "ps-trace-button",
        testId: "trace-download",
        attrs: { href: traceDownloadUrl(options.api, options.ref), download: "", title: "The original trace file (opens in Perfetto or chrome://tracing)" },
      },
      "Download trace",
    );
    const toolbar = el(
      "div",
      { className: "ps-trace-toolbar" },
      form,
      this.button("Zoom to selection", "trace-zoom-selection", "Zoom to the measured range or the selected slice (F)", () => this.zoomToSelection()),
      this.button("Whole span", "trace-zoom-reset", "Show the whole span", () => this.setView({ start: 0, end: this.spanDuration })),
      this.pathButton,
      ...(options.toolbarButtons ?? []),
      download,
      this.statusText,
      el(
        "span",
        { className: "ps-trace-help", attrs: { title: "/ search · N, Shift+N: next, previous match · F: zoom to the range or slice · Esc: clear · drag the names' edge to widen them" } },
        "wheel: zoom · drag: pan · shift+drag: select an area · click a name: pin · W A S D",
      ),
    );
    this.root = el(
      "div",
      { className: "ps-trace", testId: "trace-viewer" },
      toolbar,
      el("div", { className: "ps-trace-body" }, this.scroller, this.details.root, this.rangePanel.root, this.pathPanel.root),
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

  private button(label: string, testId: string, title: string, onClick: () => void): HTMLButtonElement {
    const button = el("button", { className: "ps-trace-button", testId, attrs: { type: "button", title } }, label);
    button.addEventListener("click", onClick);
    return button;
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
    this.rangeController?.abort();
    this.pathController?.abort();
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
    try {
      this.win.localStorage.setItem(HEADER_WIDTH_KEY, String(Math.round(next)));
    } catch {
      // storage may be off (private windows, sandboxed frames): the width then lasts for this page
    }
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
        range: this.range,
        rangeTracks: this.rangeTracks !== null ? new Set(this.rangeTracks) : null,
        highlight: this.highlight,
        pathMarks: this.pathMarks,
        loading: this.sliceStore.loading || this.counterStore.loading,
        theme: this.theme,
      },
      this.resources,
    );
    const drawMs = performance.now() - drawStart;
    this.recordDebug(now, drawMs, stats);
    this.updateStatus(slices !== null);
    this.scheduleUrl();
    if (this.controller.animating) this.requestFrame();
  }

  private recordDebug(now: number, drawMs: number, stats: object): void {
    const globals = this.win as unknown as DebugGlobals;
    if (globals.__profscopeTraceDebug !== true) return;
    (globals.__profscopeFrameTimes ??= []).push(now);
    (globals.__profscopeDrawTimes ??= []).push(drawMs);
    (globals.__profscopeFrameStats ??= []).push(stats);
    globals.__profscopeTraceStats = { ...stats, slicesTiles: { ...this.sliceStore.stats }, counterTiles: { ...this.counterStore.stats } };
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
    const whole = this.view.start <= 0 && this.view.end >= this.spanDuration;
    return {
      [PARAM_START]: whole ? null : formatTraceTime(this.spanStart + this.view.start),
      [PARAM_END]: whole ? null : formatTraceTime(this.spanStart + this.view.end),
      [PARAM_SELECT]: this.selection !== null ? String(this.selection.id) : null,
      [PARAM_PINNED]: formatPinned(this.pinned),
    };
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
    return { trackId: brief.track, start: brief.start - this.spanStart, dur: brief.dur, depth: brief.depth };
  }

  private selectEvent(id: number, place: SlicePlace | null, name: string, reveal: boolean): void {
    this.detailController?.abort();
    const controller = new AbortController();
    this.detailController = controller;
    const selection: Selection = { id, place, detail: null };
    this.selection = selection;
    this.flows = [];
    this.rangePanel.root.hidden = true; // the slice's details take the panel's place
    this.pathPanel.root.hidden = true;
    this.details.showLoading(name);
    this.root.dataset["selected"] = String(id);
    this.requestFrame();
    fetchEventDetail(this.options.api, this.options.ref, id, controller.signal).then(
      (result) => {
        if (controller.signal.aborted || this.selection !== selection) return;
        if (result.kind === "ok") {
          selection.detail = result.data;
          selection.place = this.placeOf(result.data);
          this.flows = this.flowArrows(result.data);
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

  // --- critical path -------------------------------------------------------------------

  /**
   * Loads and highlights the critical path of step `index`; null: the step in view (its centre),
   * which needs the list of steps: the first step's answer brings it.
   */
  private showCriticalPath(index: number | null): void {
    this.pathController?.abort();
    const controller = new AbortController();
    this.pathController = controller;
    this.pathButton.setAttribute("aria-pressed", "true");
    this.pathPanel.showLoading();
    const centre = this.spanStart + (this.view.start + this.view.end) / 2;
    const load = (step: number | null): void => {
      fetchCriticalPath(this.options.api, this.options.ref, step, controller.signal).then(
        (result) => {
          if (controller.signal.aborted || this.pathController !== controller) return;
          if (result.kind !== "ok") {
            this.pathController = null;
            this.pathPanel.showError(result.kind === "loading" ? "The trace is still loading; try again in a moment." : result.message);
            return;
          }
          const wanted = step ?? stepAt(result.data.steps, centre);
          if (index === null && step === null && wanted > 0) {
            load(wanted); // the first answer told which step is in view
            return;
          }
          this.pathController = null;
          this.applyCriticalPath(result.data);
        },
        () => undefined, // aborted: hidden, or another step asked for
      );
    };
    load(index);
  }

  private applyCriticalPath(data: CriticalPathData): void {
    this.criticalPath = data;
    this.highlight = new Set(data.ids);
    this.pathMarks = pathMarks(data, this.spanStart);
    this.root.dataset["criticalPath"] = String(data.index);
    this.pathPanel.show(data);
    if (this.selection !== null) this.pathPanel.root.hidden = true; // the slice's details keep the place until they close
    const step = { start: data.step.start - this.spanStart, end: data.step.end - this.spanStart };
    const viewDuration = this.view.end - this.view.start;
    const stepInView = step.end > this.view.start && step.start < this.view.end;
    if (!stepInView || step.end - step.start < viewDuration / 4) this.zoomToPathStep();
    this.requestFrame();
  }

  private hideCriticalPath(): void {
    this.pathController?.abort();
    this.pathController = null;
    this.highlight = null;
    this.pathMarks = null;
    this.pathButton.setAttribute("aria-pressed", "false");
    this.pathPanel.hide();
    delete this.root.dataset["criticalPath"];
    this.requestFrame();
  }

  private zoomToPathStep(): void {
    const data = this.criticalPath;
    if (data === null) return;
    const start = data.step.start - this.spanStart;
    const end = data.step.end - this.spanStart;
    const margin = (end - start) * 0.02;
    this.setView({ start: start - margin, end: end + margin });
  }

  private selectPathEntry(entry: PathEntry): void {
    if (entry.id === null) return;
    this.selectEvent(entry.id, null, entry.name ?? "", true);
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
    if (this.range !== null && this.rangePanel.root.dataset["state"] !== "empty") this.rangePanel.root.hidden = false;
    else if (this.pathPanel.root.dataset["state"] !== undefined && this.pathPanel.root.dataset["state"] !== "empty") this.pathPanel.root.hidden = false;
    delete this.root.dataset["selected"];
    this.requestFrame();
  }

  /** Arrows between the selected slice and the events its flows and launch links point to. */
  private flowArrows(detail: EventDetail): FlowArrow[] {
    const self = this.placeOf(detail);
    const arrows: FlowArrow[] = [];
    const seen = new Set<string>();
    const add = (other: EventBrief, outgoing: boolean): void => {
      const key = `${outgoing ? "out" : "in"}:${other.id}`;
      if (seen.has(key) || other.id === detail.id) return;
      seen.add(key);
      const far = this.placeOf(other);
      const selfEnd = { trackId: self.trackId, depth: self.depth, time: self.start };
      const otherEnd = { trackId: far.trackId, depth: far.depth, time: far.start };
      arrows.push(outgoing ? { from: selfEnd, to: otherEnd } : { from: otherEnd, to: selfEnd });
    };
    for (const flow of detail.flows) add(flow.other, flow.direction === "out");
    if (detail.launchedBy !== null) add(detail.launchedBy, false);
    for (const launched of detail.launches) add(launched, true);
    return arrows;
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
    if (this.range !== null && this.range.end > this.range.start) {
      this.setView(this.range);
      this.range = null;
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

  // --- area selection ------------------------------------------------------------------

  private setRange(range: Viewport | null): void {
    this.range = range;
    if (range === null) {
      this.rangeRows = null;
      this.rangeTracks = null;
      this.rangeController?.abort();
      this.rangeController = null;
      this.rangePanel.hide();
      delete this.root.dataset["range"];
    }
    this.requestFrame();
  }

  /** Canvas y (CSS px) of a range drag → the slice tracks it covers (null: every track, from the axis). */
  private setRangeRows(y0: number | null, y1: number | null): void {
    if (y0 === null || y1 === null) {
      this.rangeRows = null;
      this.rangeTracks = null;
    } else {
      const content = (y: number): number => y - AXIS_HEIGHT + this.scroller.scrollTop;
      this.rangeRows = [content(y0), content(y1)];
      this.rangeTracks = sliceTracksBetween(this.layout, this.rangeRows[0], this.rangeRows[1]);
    }
    this.requestFrame();
  }

  /** Asks the backend what lies in the range and shows it in the side panel. */
  private summariseRange(): void {
    const range = this.range;
    if (range === null || range.end <= range.start) return;
    this.rangeController?.abort();
    const controller = new AbortController();
    this.rangeController = controller;
    this.details.root.hidden = true; // the range's summary takes the panel's place
    this.root.dataset["range"] = `${range.start.toFixed(3)},${range.end.toFixed(3)}`;
    if (this.rangeTracks !== null && this.rangeTracks.length === 0) {
      this.rangePanel.showMessage("The selection covers no slice track (only counters or group headers): drag over tracks, or on the time axis for every track.", "empty");
      return;
    }
    const params: QueryParams = rangeParams(this.options.ref, this.spanStart + range.start, this.spanStart + range.end, this.rangeTracks);
    this.rangePanel.showLoading();
    fetchRangeSummary(this.options.api, params, controller.signal).then(
      (result) => {
        if (controller.signal.aborted) return;
        if (result.kind === "ok") this.rangePanel.show(result.data, params, controller.signal);
        else if (result.kind === "loading") this.rangePanel.showMessage("The trace is still loading; select the range again in a moment.", "error");
        else this.rangePanel.showMessage(result.message, "error");
      },
      () => undefined, // aborted: a newer range replaced this one
    );
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
    const lines = hit === null ? null : this.tooltipLines(hit);
    if (lines === null) {
      this.tooltip.hidden = true;
      return;
    }
    replaceChildren(this.tooltip, el("strong", {}, lines[0] ?? ""), ...lines.slice(1).map((line) => `\n${line}`));
    this.tooltip.hidden = false;
    const margin = 14;
    const box = this.tooltip.getBoundingClientRect();
    const left = clientX + margin + box.width > this.win.innerWidth ? clientX - margin - box.width : clientX + margin;
    const top = clientY + margin + box.height > this.win.innerHeight ? clientY - margin - box.height : clientY + margin;
    this.tooltip.style.left = `${Math.max(0, left)}px`;
    this.tooltip.style.top = `${Math.max(0, top)}px`;
  }

  private tooltipLines(hit: Hit): string[] | null {
    switch (hit.kind) {
      case "slice":
        return [hit.name, formatDuration(hit.dur), "click to select"];
      case "block":
        return [
          `${hit.count.toLocaleString("en-US")} slice${hit.count === 1 ? "" : "s"} too small to draw at this zoom`,
          `busy ${formatDuration(hit.end - hit.start)}`,
          "click to zoom in",
        ];
      case "counter": {
        const track = this.layout.tracks.get(hit.trackId)?.track;
        const lines = [track?.name ?? hit.trackId];
        for (const value of hit.values) {
          const mean = formatCounterValue(value.mean, hit.unit);
          const spread = value.min !== value.max ? ` (min ${formatCounterValue(value.min, hit.unit)}, max ${formatCounterValue(value.max, hit.unit)})` : "";
          lines.push(`${value.series}: ${mean}${spread}`);
        }
        return lines;
      }
      case "group":
        return [this.collapsed.has(hit.group) ? "click to expand" : "click to collapse"];
      case "label": {
        const row = this.layout.tracks.get(hit.trackId);
        if (row === undefined) return null;
        return [row.track.name, row.track.group, row.pinned ? "click to unpin" : "click to pin to the top"];
      }
      default:
        return null;
    }
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
      setRange: (range) => this.setRange(range),
      range: () => this.range,
      setRangeRows: (y0, y1) => this.setRangeRows(y0, y1),
      rangeDone: () => this.summariseRange(),
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
