// The Call stacks page, the pure part: self time summed per frame name, and the texts the page writes from the
// tree (a frame under the pointer, the search's summary, a top frame's tip). No DOM.
import type { FlameWeight } from "../../api/stacks";
import { frameName, type FlameTree, type SearchResult } from "../../lib/flame_layout";
import { formatCount, formatPercent } from "../../lib/format";
import { formatTime } from "../../lib/metric_format";

export const WEIGHT_LABELS: Readonly<Record<FlameWeight, string>> = { host: "Host time", device: "Device time" };

export interface SelfByName {
  readonly name: string;
  readonly self: number;
  readonly calls: number;
}

/** Self time summed per frame name (a function called from many places adds up), largest first. */
export function selfTimeByName(tree: FlameTree): SelfByName[] {
  const self = new Map<number, { self: number; calls: number }>();
  for (let node = 1; node < tree.count; node += 1) {
    if ((tree.depth[node] ?? -1) < 0) continue;
    const index = tree.nameIndex[node] ?? -1;
    const entry = self.get(index) ?? { self: 0, calls: 0 };
    entry.self += tree.self[node] ?? 0;
    entry.calls += tree.calls[node] ?? 0;
    self.set(index, entry);
  }
  return [...self.entries()]
    .map(([index, entry]) => ({ name: tree.names[index] ?? "", ...entry }))
    .filter((entry) => entry.self > 0)
    .sort((a, b) => b.self - a.self);
}

/** The line under the graph for the frame under the pointer: its total (share of all), self time and calls. */
export function frameHoverText(tree: FlameTree, node: number): string {
  const all = tree.total[0] ?? 0;
  const total = tree.total[node] ?? 0;
  return (
    `${frameName(tree, node)} — total ${formatTime(total)} (${formatPercent(all > 0 ? total / all : Number.NaN)}), ` +
    `self ${formatTime(tree.self[node] ?? Number.NaN)}, ${formatCount(tree.calls[node] ?? Number.NaN)} calls`
  );
}

/** The search's summary beside its box: nothing without a search, else the frames matching and their time. */
export function searchSummaryText(result: SearchResult | null, all: number): string {
  if (result === null) return "";
  if (result.count === 0) return "no frame matches";
  return `${formatCount(result.count)} frame${result.count === 1 ? "" : "s"} match · ${formatTime(result.matchedTotal)} (${formatPercent(all > 0 ? result.matchedTotal / all : Number.NaN)} of all)`;
}

/** A top frame's tip: its self time (share of all) over its calls. */
export function topSelfTip(entry: SelfByName, all: number): string {
  return `${entry.name}\nself ${formatTime(entry.self)} (${formatPercent(all > 0 ? entry.self / all : Number.NaN)}) over ${formatCount(entry.calls)} calls — click to highlight`;
}
