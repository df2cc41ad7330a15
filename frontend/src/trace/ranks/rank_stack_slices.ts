// Ranks side by side, loading the slices: each worker's stacked tracks asked for the axis window in its own time
// (the window minus its shift) at the plot's width, the previous window's requests stopped, the canvas redrawn as
// each answer comes and the status said once all have. A moved window is drawn at once from the slices already
// here and asked for a moment later, so a drag or a wheel asks once it rests.
import type { ApiClient } from "../../api/client";
import type { PlacedWorker } from "../../api/rank_steps";
import { fetchSlices, type SlicesData, type TrackInfo } from "../../api/trace";
import { formatDuration } from "../../lib/format";
import { type AxisWindow, workerWindow } from "./rank_stack_model";
import { ignoreAbort } from "../../api/abort";

const FETCH_DELAY_MS = 150;

export interface SliceLoading {
  readonly api: ApiClient;
  readonly run: string;
  readonly workers: readonly PlacedWorker[];
  /** Each worker's stacked tracks (loaded before the first window). */
  readonly tracksOf: ReadonlyMap<string, readonly TrackInfo[]>;
  /** Filled with each worker's answer for the last window asked. */
  readonly slicesOf: Map<string, SlicesData>;
  readonly window: () => AxisWindow;
  readonly plotWidth: () => number;
  readonly draw: () => void;
  readonly status: HTMLElement;
  /** Its data-ready says whether every answer of the window shown is here. */
  readonly root: HTMLElement;
  readonly signal: AbortSignal;
}

export interface SliceLoader {
  /** Ask for the window shown now. */
  fetchWindow(): void;
  /** Draw the window shown now, and ask for it once it rests. */
  scheduleFetch(): void;
}

export function createSliceLoader(l: SliceLoading): SliceLoader {
  let fetchController: AbortController | null = null;
  let timer: number | undefined;
  const ref = (w: PlacedWorker) => ({ run: l.run, worker: w.worker, span: w.span });

  function fetchWindow(): void {
    fetchController?.abort();
    const controller = new AbortController();
    fetchController = controller;
    l.signal.addEventListener("abort", () => controller.abort(), { once: true });
    const width = l.plotWidth();
    const window = l.window();
    l.status.textContent = "Loading every rank's slices…";
    let pending = l.workers.length;
    for (const w of l.workers) {
      const tracks = (l.tracksOf.get(w.worker) ?? []).map((t) => t.id);
      const own = workerWindow(window, w);
      const done = (): void => {
        pending -= 1;
        if (pending === 0 && !controller.signal.aborted) {
          l.status.textContent = `${l.workers.length} rank(s), ${formatDuration(window.end - window.start)} shown. Drag to pan, wheel to zoom, click a rank to open its span.`;
          l.root.dataset["ready"] = "true";
        }
      };
      if (tracks.length === 0) {
        done();
        continue;
      }
      void fetchSlices(l.api, ref(w), { start: own.start, end: own.end, width, tracks }, controller.signal).then((result) => {
        if (controller.signal.aborted) return;
        if (result.kind === "ok") l.slicesOf.set(w.worker, result.data);
        l.draw();
        done();
      }).catch(ignoreAbort);
    }
  }

  function scheduleFetch(): void {
    l.draw(); // the tiles already here, moved at once
    if (timer !== undefined) clearTimeout(timer);
    l.root.dataset["ready"] = "false";
    timer = setTimeout(fetchWindow, FETCH_DELAY_MS) as unknown as number;
  }

  l.signal.addEventListener("abort", () => {
    if (timer !== undefined) clearTimeout(timer);
  }, { once: true });
  return { fetchWindow, scheduleFetch };
}
