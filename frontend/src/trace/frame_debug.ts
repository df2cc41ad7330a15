// Frame timing for the benchmarks (bench/bench_trace_frontend.py): with `window.__profscopeTraceDebug = true` in the
// plugin's frame, each frame appends its requestAnimationFrame timestamp, its draw time (ms) and the renderer's
// counts, and the tile stores' counters are kept beside them.

interface DebugGlobals {
  __profscopeTraceDebug?: unknown;
  __profscopeFrameTimes?: number[];
  __profscopeDrawTimes?: number[];
  __profscopeFrameStats?: object[];
  __profscopeTraceStats?: unknown;
}

export function recordFrameDebug(win: Window, now: number, drawMs: number, stats: object, tiles: { readonly slicesTiles: object; readonly counterTiles: object }): void {
  const globals = win as unknown as DebugGlobals;
  if (globals.__profscopeTraceDebug !== true) return;
  (globals.__profscopeFrameTimes ??= []).push(now);
  (globals.__profscopeDrawTimes ??= []).push(drawMs);
  (globals.__profscopeFrameStats ??= []).push(stats);
  globals.__profscopeTraceStats = { ...stats, slicesTiles: { ...tiles.slicesTiles }, counterTiles: { ...tiles.counterTiles } };
}
