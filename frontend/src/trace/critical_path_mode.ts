// The trace viewer's critical path: "Critical path" in the toolbar loads `critical_path` for the step in view (the
// one holding the view's centre; the first step's answer lists the steps), zooms to it unless it fills the view,
// and gives the renderer the ids of the path's slices (`highlight`) and its stretches per row (`marks`); the side
// panel's ‹ › load the previous and next step. The viewer owns the view and the selection; this owns the path.
import type { ApiClient } from "../api/client";
import { fetchCriticalPath, type CriticalPathData, type PathEntry } from "../api/critical_path";
import type { SpanRef } from "../api/types";
import { pathMarks, stepAt } from "./critical_path";
import { CriticalPathPanel } from "./panel/critical_path";
import type { PathMark } from "./render/renderer";
import type { Viewport } from "./time_scale";

/** What the critical path needs of the viewer. */
export interface CriticalPathHost {
  readonly api: ApiClient;
  readonly ref: SpanRef;
  /** The span's start (trace time, µs): the view is in offsets from it. */
  readonly spanStart: number;
  /** The viewer's element (`data-critical-path` names the step shown). */
  readonly root: HTMLElement;
  view(): Viewport;
  setView(view: Viewport): void;
  /** A slice is selected: its details keep the side panel's place until they close. */
  hasSelection(): boolean;
  /** Selects a slice of the path (and reveals it). */
  select(id: number, name: string): void;
  requestFrame(): void;
}

export class CriticalPathMode {
  readonly panel: CriticalPathPanel;
  /** The ids of the path's slices (the others are drawn grey), while a path is shown. */
  highlight: ReadonlySet<number> | null = null;
  /** The path's stretches per row, while a path is shown. */
  marks: readonly PathMark[] | null = null;
  /** The critical path shown, or the last one loaded (for its list of steps). */
  private data: CriticalPathData | null = null;
  private controller: AbortController | null = null;

  constructor(
    private readonly host: CriticalPathHost,
    /** The toolbar's "Critical path" button (`aria-pressed` while shown). */
    private readonly button: HTMLButtonElement,
  ) {
    this.panel = new CriticalPathPanel(
      {
        showStep: (index) => this.show(index),
        zoomToStep: () => this.zoomToStep(),
        select: (entry) => this.selectEntry(entry),
        close: () => this.hide(),
      },
      host.spanStart,
    );
  }

  /** The toolbar's button: shows the path of the step in view, or hides the path (shown or loading). */
  toggle(): void {
    if (this.highlight !== null || this.controller !== null) this.hide();
    else this.show(null);
  }

  dispose(): void {
    this.controller?.abort();
  }

  /**
   * Loads and highlights the critical path of step `index`; null: the step in view (its centre),
   * which needs the list of steps: the first step's answer brings it.
   */
  show(index: number | null): void {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.button.setAttribute("aria-pressed", "true");
    this.panel.showLoading();
    const view = this.host.view();
    const centre = this.host.spanStart + (view.start + view.end) / 2;
    const load = (step: number | null): void => {
      fetchCriticalPath(this.host.api, this.host.ref, step, controller.signal).then(
        (result) => {
          if (controller.signal.aborted || this.controller !== controller) return;
          if (result.kind !== "ok") {
            this.controller = null;
            this.panel.showError(result.kind === "loading" ? "The trace is still loading; try again in a moment." : result.message);
            return;
          }
          const wanted = step ?? stepAt(result.data.steps, centre);
          if (index === null && step === null && wanted > 0) {
            load(wanted); // the first answer told which step is in view
            return;
          }
          this.controller = null;
          this.apply(result.data);
        },
        () => undefined, // aborted: hidden, or another step asked for
      );
    };
    load(index);
  }

  hide(): void {
    this.controller?.abort();
    this.controller = null;
    this.highlight = null;
    this.marks = null;
    this.button.setAttribute("aria-pressed", "false");
    this.panel.hide();
    delete this.host.root.dataset["criticalPath"];
    this.host.requestFrame();
  }

  private apply(data: CriticalPathData): void {
    const spanStart = this.host.spanStart;
    this.data = data;
    this.highlight = new Set(data.ids);
    this.marks = pathMarks(data, spanStart);
    this.host.root.dataset["criticalPath"] = String(data.index);
    this.panel.show(data);
    if (this.host.hasSelection()) this.panel.root.hidden = true; // the slice's details keep the place until they close
    const step = { start: data.step.start - spanStart, end: data.step.end - spanStart };
    const view = this.host.view();
    const viewDuration = view.end - view.start;
    const stepInView = step.end > view.start && step.start < view.end;
    if (!stepInView || step.end - step.start < viewDuration / 4) this.zoomToStep();
    this.host.requestFrame();
  }

  private zoomToStep(): void {
    const data = this.data;
    if (data === null) return;
    const start = data.step.start - this.host.spanStart;
    const end = data.step.end - this.host.spanStart;
    const margin = (end - start) * 0.02;
    this.host.setView({ start: start - margin, end: end + margin });
  }

  private selectEntry(entry: PathEntry): void {
    if (entry.id === null) return;
    this.host.select(entry.id, entry.name ?? "");
  }
}
