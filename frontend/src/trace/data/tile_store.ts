// Fetches and caches tiles (answers for a padded window at a resolution) for the renderer.
//
// `want()` is called on every frame and is cheap when nothing changes. It never blocks: the
// frame draws `best()`, the closest tile already here, while a better one loads. A request
// that the view has moved away from is aborted (AbortController) before the next one
// starts, so at most one request per store is in flight.
import type { ApiResult } from "../../api/types";
import type { Viewport } from "../time_scale";
import { coverage, paddedWindow, resolutionNs, tileKey, windowServes, type TileWindow } from "./tile_key";
import { isAbortError } from "../../api/abort";

export interface Tile<T> {
  readonly key: string;
  readonly window: TileWindow;
  /** Sorted track ids the tile was asked for. */
  readonly tracks: readonly string[];
  readonly data: T;
}

export type TileFetch<T> = (window: TileWindow, tracks: readonly string[], signal: AbortSignal) => Promise<ApiResult<T>>;

export interface TileStoreOptions {
  /** Tiles kept (least recently used go first). */
  readonly capacity?: number;
  /** Wait before asking again while the backend answers 202 (still loading the span). */
  readonly retryMs?: number;
  /**
   * While a cached tile still covers the view, a new request waits until the view has wanted
   * the same tile for this long: a fast zoom or pan through many windows asks only for the
   * one it stops at, and the backend's CPU stays with the browser meanwhile. A view nothing
   * covers asks at once.
   */
  readonly debounceMs?: number;
  /** Replaced in tests. */
  readonly now?: () => number;
  /** Replaced in tests. */
  readonly setTimer?: (callback: () => void, ms: number) => unknown;
  readonly clearTimer?: (handle: unknown) => void;
}

interface InFlight {
  readonly key: string;
  readonly window: TileWindow;
  readonly tracksKey: string;
  readonly controller: AbortController;
}

export class TileStore<T> {
  /** Insertion order is recency order: a used tile is re-inserted at the end. */
  private readonly cache = new Map<string, Tile<T>>();
  private inFlight: InFlight | null = null;
  private failedKey: string | null = null;
  private retryTimer: unknown = null;
  private debounceTimer: unknown = null;
  /** The tile the view has wanted since `waitingSince` (debounce). */
  private waitingKey: string | null = null;
  private waitingSince = 0;
  private disposed = false;
  /** Why the last request failed (null after a success). */
  error: string | null = null;
  /** The backend is still loading the span (202), with its progress 0..1 when known. */
  backendLoading: { readonly progress: number | null } | null = null;
  /** Requests made, answered and aborted: for tests and the debug overlay. */
  readonly stats = { requested: 0, answered: 0, aborted: 0 };

  private readonly capacity: number;
  private readonly retryMs: number;
  private readonly debounceMs: number;
  private readonly now: () => number;
  private readonly setTimer: (callback: () => void, ms: number) => unknown;
  private readonly clearTimer: (handle: unknown) => void;

  constructor(
    private readonly fetchTile: TileFetch<T>,
    private readonly onChange: () => void,
    /** Length of the span, ns. */
    private readonly spanNs: number,
    options: TileStoreOptions = {},
  ) {
    this.capacity = options.capacity ?? 24;
    this.retryMs = options.retryMs ?? 1000;
    this.debounceMs = options.debounceMs ?? 0;
    this.now = options.now ?? (() => performance.now());
    this.setTimer = options.setTimer ?? ((callback, ms) => setTimeout(callback, ms));
    this.clearTimer = options.clearTimer ?? ((handle) => clearTimeout(handle as ReturnType<typeof setTimeout>));
  }

  get loading(): boolean {
    return this.inFlight !== null || this.retryTimer !== null || this.waitingKey !== null;
  }

  /** Makes sure a tile serving `view` (drawn `widthPx` wide) is here or on its way. */
  want(view: Viewport, widthPx: number, tracks: readonly string[]): void {
    if (this.disposed || tracks.length === 0 || widthPx <= 0) return;
    const sorted = [...tracks].sort();
    const tracksKey = sorted.join(",");
    const resolution = resolutionNs(view.end - view.start, widthPx);
    for (const tile of this.cache.values()) {
      if (tile.tracks.join(",") === tracksKey && windowServes(tile.window, view, resolution, this.spanNs)) {
        this.waitingKey = null;
        return;
      }
    }
    const pending = this.inFlight;
    if (pending !== null && pending.tracksKey === tracksKey && windowServes(pending.window, view, resolution, this.spanNs)) {
      this.waitingKey = null;
      return;
    }
    if (this.retryTimer !== null) return; // waiting for the backend to finish loading
    const window = paddedWindow(view, widthPx, this.spanNs);
    const key = tileKey(window, sorted);
    if (key === this.failedKey) return; // do not hammer a request that failed; a new view asks anew
    if (this.debounceMs > 0 && this.covers(view)) {
      const now = this.now();
      if (this.waitingKey !== key) {
        this.waitingKey = key;
        this.waitingSince = now;
      }
      const remaining = this.debounceMs - (now - this.waitingSince);
      if (remaining > 0) {
        this.wakeAfter(remaining);
        return;
      }
    }
    this.waitingKey = null;
    if (pending !== null) {
      pending.controller.abort();
      this.stats.aborted += 1;
    }
    this.start(key, window, sorted, tracksKey);
  }

  /** True when a cached tile covers all of the view (at any resolution). */
  private covers(view: Viewport): boolean {
    for (const tile of this.cache.values()) if (coverage(tile.window, view) >= 0.999) return true;
    return false;
  }

  /** Asks for a frame after `ms`, so a debounced request is made even if nothing else moves. */
  private wakeAfter(ms: number): void {
    if (this.debounceTimer !== null) return;
    this.debounceTimer = this.setTimer(() => {
      this.debounceTimer = null;
      this.onChange();
    }, Math.max(1, ms));
  }

  private start(key: string, window: TileWindow, tracks: readonly string[], tracksKey: string): void {
    const controller = new AbortController();
    const request: InFlight = { key, window, tracksKey, controller };
    this.inFlight = request;
    this.stats.requested += 1;
    this.fetchTile(window, tracks, controller.signal).then(
      (result) => {
        if (this.inFlight !== request || this.disposed) return; // superseded
        this.inFlight = null;
        if (result.kind === "ok") {
          this.stats.answered += 1;
          this.error = null;
          this.failedKey = null;
          this.backendLoading = null;
          this.store({ key, window, tracks, data: result.data });
        } else if (result.kind === "loading") {
          this.backendLoading = { progress: result.progress };
          this.retryTimer = this.setTimer(() => {
            this.retryTimer = null;
            this.onChange();
          }, this.retryMs);
        } else {
          this.error = result.message;
          this.failedKey = key;
        }
        this.onChange();
      },
      (error: unknown) => {
        if (this.inFlight !== request || this.disposed) return;
        this.inFlight = null;
        if (!isAbortError(error)) {
          this.error = error instanceof Error ? error.message : String(error);
          this.failedKey = key;
        }
        this.onChange();
      },
    );
  }

  private store(tile: Tile<T>): void {
    this.cache.delete(tile.key);
    this.cache.set(tile.key, tile);
    while (this.cache.size > this.capacity) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }

  /**
   * The tile to draw now: the one covering most of the view, then one of the wanted tracks,
   * then the one nearest in resolution (a coarser or finer tile beats a blank).
   */
  best(view: Viewport, widthPx: number, tracks: readonly string[] = []): Tile<T> | null {
    const resolution = resolutionNs(view.end - view.start, widthPx);
    const tracksKey = [...tracks].sort().join(",");
    let best: Tile<T> | null = null;
    let bestScore = -Infinity;
    let order = 0;
    for (const tile of this.cache.values()) {
      order += 1;
      const covered = Math.round(coverage(tile.window, view) * 20) / 20;
      if (covered <= 0) continue;
      const sameTracks = tile.tracks.join(",") === tracksKey ? 1 : 0;
      const distance = Math.abs(Math.log2(tile.window.resolutionNs / resolution));
      // Lexicographic: coverage, then tracks, then resolution, then recency.
      const score = covered * 1e6 + sameTracks * 1e4 - distance * 10 + order * 1e-3;
      if (score > bestScore) {
        bestScore = score;
        best = tile;
      }
    }
    if (best !== null) {
      this.cache.delete(best.key);
      this.cache.set(best.key, best);
    }
    return best;
  }

  /** Drops every tile and request (e.g. when the span's data changed). */
  clear(): void {
    this.inFlight?.controller.abort();
    this.inFlight = null;
    this.cache.clear();
    this.failedKey = null;
  }

  dispose(): void {
    this.disposed = true;
    this.clear();
    if (this.retryTimer !== null) this.clearTimer(this.retryTimer);
    if (this.debounceTimer !== null) this.clearTimer(this.debounceTimer);
    this.retryTimer = null;
    this.debounceTimer = null;
  }

  /** Tiles held (for tests). */
  get size(): number {
    return this.cache.size;
  }
}
