import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ApiResult } from "../src/api/types";
import { slicesData } from "../src/api/trace";
import { coverage, GRID_PX, MAX_REQUEST_WIDTH, paddedWindow, resolutionNs, tileKey, windowServes, type TileWindow } from "../src/trace/data/tile_key";
import { TileStore } from "../src/trace/data/tile_store";
import { toSliceTile, windowRequest } from "../src/trace/data/tiles";

const SPAN_NS = 1_173_467_800; // a real ResNet span: 1.17 s

/** The backend's rule (trace_index.resolution_for): ns per px rounded up to a power of two. */
function backendResolution(startNs: number, endNs: number, width: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max((endNs - startNs) / width, 1)));
}

describe("resolution", () => {
  test("is a power of two of ns per pixel, rounded up, at least 1 ns", () => {
    assert.equal(resolutionNs(1_173_467.8, 1000), 2 ** 21); // 1.17e6 ns/px → 2^21
    assert.equal(resolutionNs(2048, 1000), 2048); // exactly a power of two: kept
    assert.equal(resolutionNs(2049, 1000), 4096);
    assert.equal(resolutionNs(1.024, 1024), 1);
    assert.equal(resolutionNs(0.001, 1000), 1);
    assert.equal(resolutionNs(Number.NaN, 1000), 1);
    for (const [duration, width] of [[1000, 800], [65.536, 512], [1e6, 1920], [3.3, 2000]] as const) {
      const resolution = resolutionNs(duration, width);
      assert.ok(resolution >= (duration * 1000) / width && resolution / 2 < Math.max(1, (duration * 1000) / width));
    }
  });
});

describe("padded window", () => {
  test("pads by the view's width on each side and snaps to the grid", () => {
    const view = { start: 400_000, end: 500_000 }; // 100 ms of a 1.17 s span
    const window = paddedWindow(view, 1000, SPAN_NS);
    const pitch = window.resolutionNs * GRID_PX;
    assert.equal(window.resolutionNs, 131_072);
    assert.equal(window.startNs % pitch, 0);
    assert.equal(window.endNs % pitch, 0);
    assert.ok(window.startNs <= 300_000_000 && window.endNs >= 600_000_000);
    // Not more than one grid step beyond the padding.
    assert.ok(window.startNs > 300_000_000 - pitch && window.endNs < 600_000_000 + pitch);
    // The backend, given this width, merges at the same (or a finer) resolution.
    assert.ok(backendResolution(window.startNs, window.endNs, window.widthPx) <= window.resolutionNs);
    assert.ok(window.widthPx <= MAX_REQUEST_WIDTH);
  });

  test("small pans ask the same question again (stable keys)", () => {
    const tracks = ["s1", "s3"];
    const base = tileKey(paddedWindow({ start: 400_000, end: 500_000 }, 1000, SPAN_NS), tracks);
    for (const shift of [1, 500, 5_000, -3_000]) {
      const view = { start: 400_000 + shift, end: 500_000 + shift };
      const window = paddedWindow(view, 1000, SPAN_NS);
      // Either the same key, or the old window still serves the view (no refetch needed).
      const old = paddedWindow({ start: 400_000, end: 500_000 }, 1000, SPAN_NS);
      assert.ok(tileKey(window, tracks) === base || windowServes(old, view, window.resolutionNs, SPAN_NS));
    }
    assert.equal(tileKey(paddedWindow({ start: 400_000, end: 500_000 }, 1000, SPAN_NS), ["s3", "s1"]), base);
  });

  test("stays inside the span and under the backend's width limit", () => {
    const whole = paddedWindow({ start: 0, end: SPAN_NS / 1000 }, 2000, SPAN_NS);
    assert.equal(whole.startNs, 0);
    assert.equal(whole.endNs, SPAN_NS);
    for (const width of [300, 1400, 2000, 2500, 4000]) {
      for (const duration of [0.01, 3, 1000, 100_000]) {
        const view = { start: 500_000, end: 500_000 + duration };
        const window = paddedWindow(view, width, SPAN_NS);
        assert.ok(window.widthPx <= MAX_REQUEST_WIDTH, `${width} ${duration}`);
        assert.ok(window.startNs <= view.start * 1000 && window.endNs >= view.end * 1000, `${width} ${duration}`);
        assert.ok(windowServes(window, view, resolutionNs(duration, width), SPAN_NS));
      }
    }
  });

  test("serves only the same resolution, and coverage measures the overlap", () => {
    const window: TileWindow = { startNs: 1_000_000, endNs: 3_000_000, resolutionNs: 1024, widthPx: 2000 };
    assert.ok(windowServes(window, { start: 1500, end: 2500 }, 1024, SPAN_NS));
    assert.ok(!windowServes(window, { start: 1500, end: 2500 }, 2048, SPAN_NS));
    assert.ok(!windowServes(window, { start: 500, end: 1500 }, 1024, SPAN_NS));
    assert.equal(coverage(window, { start: 2000, end: 4000 }), 0.5);
    assert.equal(coverage(window, { start: 5000, end: 6000 }), 0);
  });

  test("a request crosses the wire in the trace's own time base", () => {
    const window: TileWindow = { startNs: 1_048_576, endNs: 2_097_152, resolutionNs: 512, widthPx: 2051 };
    const request = windowRequest(window, 1623142623460016.2, ["s3"]);
    assert.ok(Math.abs(request.start - 1623142623461064.8) < 0.5);
    assert.equal(request.width, 2051);
  });
});

interface Pending {
  readonly window: TileWindow;
  readonly signal: AbortSignal;
  resolve(result: ApiResult<string>): void;
}

function fakeStore(): { store: TileStore<string>; pending: Pending[]; changes: () => number } {
  const pending: Pending[] = [];
  let changes = 0;
  const store = new TileStore<string>(
    (window, _tracks, signal) =>
      new Promise((resolve, reject) => {
        signal.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "AbortError" })));
        pending.push({ window, signal, resolve });
      }),
    () => {
      changes += 1;
    },
    SPAN_NS,
    { setTimer: (callback) => setTimeout(callback, 0), clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>) },
  );
  return { store, pending, changes: () => changes };
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe("tile store", () => {
  const tracks = ["s1"];

  test("asks once per padded window and draws the answer", async () => {
    const { store, pending } = fakeStore();
    const view = { start: 400_000, end: 500_000 };
    store.want(view, 1000, tracks);
    store.want(view, 1000, tracks);
    store.want({ start: 401_000, end: 501_000 }, 1000, tracks);
    assert.equal(pending.length, 1);
    assert.equal(store.best(view, 1000, tracks), null);
    pending[0]?.resolve({ kind: "ok", data: "tile A" });
    await tick();
    assert.equal(store.best(view, 1000, tracks)?.data, "tile A");
    assert.equal(store.loading, false);
    store.want({ start: 402_000, end: 502_000 }, 1000, tracks); // served by the cached tile
    assert.equal(pending.length, 1);
  });

  test("a stale request is aborted, and the old tile is drawn until the new one arrives", async () => {
    const { store, pending } = fakeStore();
    const first = { start: 400_000, end: 500_000 };
    store.want(first, 1000, tracks);
    pending[0]?.resolve({ kind: "ok", data: "coarse" });
    await tick();
    const zoomed = { start: 440_000, end: 460_000 }; // 5x in: a finer resolution
    store.want(zoomed, 1000, tracks);
    assert.equal(pending.length, 2);
    assert.equal(store.best(zoomed, 1000, tracks)?.data, "coarse", "keeps drawing the old tile");
    const further = { start: 449_000, end: 451_000 };
    store.want(further, 1000, tracks);
    assert.equal(pending.length, 3);
    assert.ok(pending[1]?.signal.aborted, "the request the view left is cancelled");
    assert.equal(store.stats.aborted, 1);
    pending[2]?.resolve({ kind: "ok", data: "fine" });
    await tick();
    assert.equal(store.best(further, 1000, tracks)?.data, "fine");
  });

  test("a 202 waits and asks again; an error is not retried for the same window", async () => {
    const { store, pending, changes } = fakeStore();
    const view = { start: 0, end: 100_000 };
    store.want(view, 1000, tracks);
    pending[0]?.resolve({ kind: "loading", progress: 0.5 });
    await tick();
    assert.deepEqual(store.backendLoading, { progress: 0.5 });
    store.want(view, 1000, tracks);
    assert.equal(pending.length, 1, "waits while the backend loads");
    await tick(); // the retry timer fires and asks for a frame
    assert.ok(changes() >= 2);
    store.want(view, 1000, tracks);
    assert.equal(pending.length, 2);
    pending[1]?.resolve({ kind: "error", status: 500, message: "boom" });
    await tick();
    assert.equal(store.error, "boom");
    store.want(view, 1000, tracks);
    assert.equal(pending.length, 2, "the failed window is not asked again in a loop");
    store.want({ start: 600_000, end: 700_000 }, 1000, tracks);
    assert.equal(pending.length, 3, "a new view asks anew");
  });

  test("while an old tile covers the view, a new request waits until the view rests", async () => {
    let now = 0;
    const pending: Pending[] = [];
    const timers: (() => void)[] = [];
    const store = new TileStore<string>(
      (window, _tracks, signal) => new Promise((resolve) => pending.push({ window, signal, resolve })),
      () => undefined,
      SPAN_NS,
      { debounceMs: 80, now: () => now, setTimer: (callback) => timers.push(callback), clearTimer: () => undefined },
    );
    const first = { start: 400_000, end: 500_000 };
    store.want(first, 1000, tracks);
    assert.equal(pending.length, 1, "nothing covers the view yet: ask at once");
    pending[0]?.resolve({ kind: "ok", data: "coarse" });
    await tick();
    // A fast zoom through several resolutions: no request while it moves.
    for (const [time, width] of [[10, 50_000], [20, 20_000], [30, 8_000]] as const) {
      now = time;
      store.want({ start: 450_000 - width / 2, end: 450_000 + width / 2 }, 1000, tracks);
    }
    assert.equal(pending.length, 1);
    assert.equal(store.loading, true, "a better tile is on its way");
    assert.equal(timers.length, 1, "one wake-up is scheduled");
    now = 120; // the view rested on the last window for 90 ms
    store.want({ start: 446_000, end: 454_000 }, 1000, tracks);
    assert.equal(pending.length, 2);
    assert.equal(pending[1]?.window.resolutionNs, resolutionNs(8_000, 1000));
    // Back to a window the cached tile serves: nothing to wait for.
    pending[1]?.resolve({ kind: "ok", data: "fine" });
    await tick();
    store.want(first, 1000, tracks);
    assert.equal(store.loading, false);
  });

  test("keeps a bounded number of tiles, least recently used first out", async () => {
    const pending: Pending[] = [];
    const store = new TileStore<string>(
      (window, _tracks, signal) => new Promise((resolve) => pending.push({ window, signal, resolve })),
      () => undefined,
      SPAN_NS,
      { capacity: 2 },
    );
    const views = [0, 300_000, 600_000].map((start) => ({ start, end: start + 10_000 }));
    for (const view of views) {
      store.want(view, 1000, tracks);
      pending[pending.length - 1]?.resolve({ kind: "ok", data: String(view.start) });
      await tick();
    }
    assert.equal(store.size, 2);
    assert.equal(store.best(views[0] as { start: number; end: number }, 1000, tracks), null);
  });
});

describe("tile contents", () => {
  test("slices become offsets from the span start", () => {
    const answer = slicesData({
      start: 1623142623460016.2,
      end: 1623142624633484.0,
      resolution: 1048.576,
      names: ["ProfilerStep#5", "aten::conv2d"],
      tracks: [
        {
          id: "s1",
          slices: { id: [10, 11], start: [1623142623460072.0, 1623142623460172.0], dur: [85, 176078], depth: [0, 1], name: [0, 1] },
          blocks: { start: [1623142623636270.0], end: [1623142623636306.0], depth: [2], count: [4] },
        },
      ],
    });
    const tile = toSliceTile(answer, 1623142623460016.2);
    const s1 = tile.tracks.get("s1");
    assert.ok(s1 !== undefined);
    assert.equal(s1.slices.start.length, 2);
    assert.ok(Math.abs((s1.slices.start[0] as number) - 55.8) < 0.25);
    assert.ok(Math.abs((s1.blocks.end[0] as number) - (s1.blocks.start[0] as number) - 36) < 0.5);
    assert.equal(s1.blocks.count[0], 4);
    assert.equal(tile.resolutionUs, 1048.576);
  });
});
