// The trace viewer's critical path, without the DOM: which step is "current" for a view, and
// what the side panel lists (the breakdown by kind, the longest entries of the path).
import type { CriticalPathData, PathEntry, PathStep } from "../api/critical_path";
import { PATH_KINDS } from "../api/critical_path";
import type { PathMark } from "./render/renderer";

export const PATH_KIND_INFO: Readonly<Record<string, { readonly label: string; readonly color: string; readonly tip: string }>> = {
  cpu_op: { label: "CPU operator", color: "#5c6bc0", tip: "Time inside host operators and annotations (the innermost range open on the path)." },
  launch: { label: "Launch", color: "#26a69a", tip: "Runtime and driver calls other than syncs, and the delay from a launch until its work starts on the device." },
  kernel: { label: "Kernel", color: "#ef6c00", tip: "Device kernels." },
  copy: { label: "Copy", color: "#8d6e63", tip: "Memcpy and memset on the device." },
  sync: { label: "Sync / wait", color: "#c62828", tip: "Blocking syncs after the work they waited for, a call waiting for its own copy, a stream waiting for another stream's event." },
  idle: { label: "Idle", color: "#9e9e9e", tip: "A stream waiting between two of its activities, a thread between two of its slices." },
};

/**
 * The step a view is about: the one that contains the view's centre, else the one nearest to it.
 * Times in trace µs; -1 without steps.
 */
export function stepAt(steps: readonly PathStep[], time: number): number {
  let best = -1;
  let bestDistance = Number.POSITIVE_INFINITY;
  steps.forEach((step, index) => {
    const distance = time < step.start ? step.start - time : time > step.end ? time - step.end : 0;
    if (distance < bestDistance) {
      best = index;
      bestDistance = distance;
    }
  });
  return best;
}

export interface KindRow {
  readonly kind: string;
  readonly label: string;
  readonly color: string;
  readonly tip: string;
  readonly time: number;
  readonly share: number;
}

/** The breakdown in the backend's kind order, kinds with no time left out. */
export function kindRows(data: CriticalPathData): KindRow[] {
  const byKind = new Map(data.breakdown.map((row) => [row.kind, row]));
  const rows: KindRow[] = [];
  for (const kind of PATH_KINDS) {
    const row = byKind.get(kind);
    if (row === undefined || !(row.time > 0)) continue;
    const info = PATH_KIND_INFO[kind] ?? { label: kind, color: "#9e9e9e", tip: "" };
    rows.push({ kind, label: info.label, color: info.color, tip: info.tip, time: row.time, share: row.share });
  }
  return rows;
}

/** The path's slices by their time on it, longest first (entries of one slice added up); not the step's own range. */
export function longestOnPath(data: CriticalPathData, limit: number): PathEntry[] {
  const bySlice = new Map<number, PathEntry>();
  for (const entry of data.path) {
    // Idle stretches are gaps next to a slice, not its time: they are in the breakdown, not in this list. The step's
    // own range holds the time between its operators: no slice of the step's work.
    if (entry.id === null || entry.id === data.stepId || entry.kind === "idle" || !(entry.time > 0)) continue;
    const seen = bySlice.get(entry.id);
    bySlice.set(entry.id, seen === undefined ? entry : { ...seen, time: seen.time + entry.time });
  }
  return [...bySlice.values()].sort((a, b) => b.time - a.time || a.start - b.start).slice(0, limit);
}

/** The path's stretches on slices, as offsets from the span start, for the renderer to underline. */
export function pathMarks(data: CriticalPathData, spanStart: number): PathMark[] {
  const marks: PathMark[] = [];
  for (const entry of data.path) {
    if (entry.track === null || !(entry.end >= entry.start)) continue;
    marks.push({ trackId: entry.track, depth: entry.depth, start: entry.start - spanStart, end: entry.end - spanStart });
  }
  return marks;
}
