// The pure half of the flame graph (an icicle: root on top, children below): the tree built
// from the route's columnar nodes, the layout of the frames under the zoomed-in node, hit
// testing, colours, search, the tooltip's text and where a click or a key zooms to. The canvas half is
// components/flame_graph.ts (drawing: components/flame_canvas.ts).
import type { FlameColumns } from "../api/stacks";
import { formatCount, formatPercent } from "./format";

export interface FlameTree {
  readonly count: number;
  readonly names: readonly string[];
  /** Parent node, -1 for the root (and for nodes dropped as malformed). */
  readonly parent: Int32Array;
  readonly nameIndex: Int32Array;
  readonly self: Float64Array;
  readonly total: Float64Array;
  readonly calls: Float64Array;
  /** Children of node i are childList[childStart[i] .. childStart[i + 1]), largest total first. */
  readonly childStart: Int32Array;
  readonly childList: Int32Array;
  /** Distance from the root (root 0); -1 for dropped nodes. */
  readonly depth: Int32Array;
  readonly maxDepth: number;
}

/**
 * Builds the tree. Node 0 is the root; a node whose parent does not come before it (or is
 * itself dropped) is dropped with its subtree, so a malformed answer cannot make a cycle.
 */
export function buildFlameTree(data: FlameColumns): FlameTree {
  const count = data.parent.length;
  const parent = new Int32Array(count).fill(-1);
  const depth = new Int32Array(count).fill(-1);
  const childCount = new Int32Array(count + 1);
  let maxDepth = 0;
  if (count > 0) depth[0] = 0;
  for (let i = 1; i < count; i += 1) {
    const p = data.parent[i] ?? -1;
    if (p < 0 || p >= i || (depth[p] ?? -1) < 0) continue;
    parent[i] = p;
    const d = (depth[p] ?? 0) + 1;
    depth[i] = d;
    if (d > maxDepth) maxDepth = d;
    childCount[p] = (childCount[p] ?? 0) + 1;
  }
  const childStart = new Int32Array(count + 1);
  for (let i = 0; i < count; i += 1) childStart[i + 1] = (childStart[i] ?? 0) + (childCount[i] ?? 0);
  const fill = childStart.slice(0, count);
  const childList = new Int32Array(childStart[count] ?? 0);
  for (let i = 1; i < count; i += 1) {
    const p = parent[i] ?? -1;
    if (p < 0) continue;
    childList[fill[p] ?? 0] = i;
    fill[p] = (fill[p] ?? 0) + 1;
  }
  const total = Float64Array.from(data.totalTime, (value) => (Number.isFinite(value) && value > 0 ? value : 0));
  for (let i = 0; i < count; i += 1) {
    const start = childStart[i] ?? 0;
    const end = childStart[i + 1] ?? 0;
    if (end - start > 1) {
      const sorted = Array.from(childList.subarray(start, end)).sort((a, b) => (total[b] ?? 0) - (total[a] ?? 0) || a - b);
      childList.set(sorted, start);
    }
  }
  return {
    count,
    names: data.names,
    parent,
    nameIndex: Int32Array.from(data.name),
    self: Float64Array.from(data.self),
    total,
    calls: Float64Array.from(data.calls),
    childStart,
    childList,
    depth,
    maxDepth,
  };
}

export function frameName(tree: FlameTree, node: number): string {
  const index = tree.nameIndex[node] ?? -1;
  return index >= 0 ? (tree.names[index] ?? "") : "";
}

export function childrenOf(tree: FlameTree, node: number): Int32Array {
  return tree.childList.subarray(tree.childStart[node] ?? 0, tree.childStart[node + 1] ?? 0);
}

/** The path from the root to `node`, root first. */
export function pathTo(tree: FlameTree, node: number): number[] {
  const path: number[] = [];
  for (let current = node; current >= 0 && path.length <= tree.count; current = tree.parent[current] ?? -1) path.push(current);
  return path.reverse();
}

/** One frame to draw: x and width are fractions (0..1) of the graph's width, row 0 is the top. */
export interface FlameFrame {
  readonly node: number;
  readonly x: number;
  readonly width: number;
  readonly row: number;
  /** An ancestor of the zoomed-in node (drawn full width above it; clicking it zooms out). */
  readonly ancestor: boolean;
}

export interface FlameLayout {
  readonly focus: number;
  readonly frames: readonly FlameFrame[];
  /** Rows used (ancestors, the focus and its descendants). */
  readonly rows: number;
}

/**
 * Lays out the frames of `focus` and its descendants, plus its ancestors above it at full
 * width. Each frame's width is its total over the focus's total. Where children add up to more
 * than their parent (ranges the profiler recorded overlapping), they are scaled down to fit.
 * Frames narrower than `minWidth` are left out with their subtrees (they would not show).
 */
export function layoutFlame(tree: FlameTree, focus: number, minWidth = 0): FlameLayout {
  if (tree.count === 0 || focus < 0 || focus >= tree.count || (tree.depth[focus] ?? -1) < 0) {
    return { focus: 0, frames: [], rows: 0 };
  }
  const frames: FlameFrame[] = [];
  const ancestors = pathTo(tree, focus).slice(0, -1);
  ancestors.forEach((node, row) => frames.push({ node, x: 0, width: 1, row, ancestor: true }));
  const baseRow = ancestors.length;
  let rows = baseRow + 1;
  const focusTotal = tree.total[focus] ?? 0;
  frames.push({ node: focus, x: 0, width: 1, row: baseRow, ancestor: false });
  if (focusTotal <= 0) return { focus, frames, rows };
  // Iterative depth-first walk: [node, x, width, row] of frames whose children are pending.
  const stack: [number, number, number, number][] = [[focus, 0, 1, baseRow]];
  while (stack.length > 0) {
    const [node, x, width, row] = stack.pop()!;
    const children = childrenOf(tree, node);
    if (children.length === 0) continue;
    let sum = 0;
    for (const child of children) sum += tree.total[child] ?? 0;
    const nodeTotal = tree.total[node] ?? 0;
    const scale = sum > nodeTotal && sum > 0 ? nodeTotal / sum : 1;
    let offset = x;
    for (const child of children) {
      const childWidth = nodeTotal > 0 ? (((tree.total[child] ?? 0) * scale) / nodeTotal) * width : 0;
      if (childWidth >= minWidth && childWidth > 0) {
        frames.push({ node: child, x: offset, width: childWidth, row: row + 1, ancestor: false });
        if (row + 2 > rows) rows = row + 2;
        stack.push([child, offset, childWidth, row + 1]);
      }
      offset += childWidth;
    }
  }
  return { focus, frames, rows };
}

/** The frame at a point (x as a fraction of the width, row from the top), or null. */
export function frameAt(layout: FlameLayout, x: number, row: number): FlameFrame | null {
  for (const frame of layout.frames) {
    if (frame.row === row && x >= frame.x && x < frame.x + frame.width) return frame;
  }
  return null;
}

/** FNV-1a: a stable 32-bit hash of a string. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * A frame's colour, from its name alone, so a frame keeps its colour across zooms, spans and
 * runs. Python frames ("file.py(12): fn") get cool hues, everything else (operators,
 * annotations) warm ones, so the two kinds read apart at a glance.
 */
export function frameColor(name: string): string {
  const hash = hashString(name);
  const python = /\.py\(\d+\)/.test(name);
  const hue = python ? 185 + (hash % 40) : 8 + (hash % 48);
  const saturation = 50 + ((hash >>> 8) % 25);
  const lightness = python ? 68 + ((hash >>> 16) % 12) : 62 + ((hash >>> 16) % 14);
  return `hsl(${hue}, ${saturation}%, ${lightness}%)`;
}

export interface SearchResult {
  /** 1 for a node whose name contains the query. */
  readonly matches: Uint8Array;
  readonly count: number;
  /** Time of the matching frames, each counted once (a match inside a match is not added again), µs. */
  readonly matchedTotal: number;
}

/** Frames whose name contains `query` (case-insensitive); an empty query matches nothing. */
export function searchFrames(tree: FlameTree, query: string): SearchResult {
  const matches = new Uint8Array(tree.count);
  const needle = query.trim().toLowerCase();
  if (needle === "") return { matches, count: 0, matchedTotal: 0 };
  const nameMatches = tree.names.map((name) => name.toLowerCase().includes(needle));
  // insideMatch[i]: some ancestor of i matches (parents come before children).
  const insideMatch = new Uint8Array(tree.count);
  let count = 0;
  let matchedTotal = 0;
  for (let i = 0; i < tree.count; i += 1) {
    if ((tree.depth[i] ?? -1) < 0) continue;
    const p = tree.parent[i] ?? -1;
    const parentCovered = p >= 0 && ((insideMatch[p] ?? 0) === 1 || (matches[p] ?? 0) === 1);
    if (parentCovered) insideMatch[i] = 1;
    const index = tree.nameIndex[i] ?? -1;
    if (i > 0 && index >= 0 && nameMatches[index] === true) {
      matches[i] = 1;
      count += 1;
      if (!parentCovered) matchedTotal += tree.total[i] ?? 0;
    }
  }
  return { matches, count, matchedTotal };
}

/**
 * `text` cut to fit `maxWidth` px with an ellipsis, measured by `measure`; "" when not even
 * two characters and the ellipsis fit.
 */
export function fitLabel(text: string, maxWidth: number, measure: (text: string) => number): string {
  if (maxWidth <= 0 || text === "") return "";
  if (measure(text) <= maxWidth) return text;
  let low = 0;
  let high = text.length;
  // Longest prefix whose text + "…" fits: binary search.
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (measure(`${text.slice(0, mid)}…`) <= maxWidth) low = mid;
    else high = mid - 1;
  }
  return low >= 2 ? `${text.slice(0, low)}…` : "";
}

/** A frame's tooltip: its name, total (share of all, and of the zoomed frame when zoomed in), self time and calls. */
export function frameTooltipText(tree: FlameTree, node: number, focus: number, formatValue: (value: number) => string): string {
  const total = tree.total[node] ?? 0;
  const all = tree.total[0] ?? 0;
  const focusTotal = tree.total[focus] ?? 0;
  const lines = [
    frameName(tree, node),
    `Total: ${formatValue(total)} (${formatPercent(all > 0 ? total / all : Number.NaN)} of all` +
      (focus !== 0 && focusTotal > 0 ? `, ${formatPercent(total / focusTotal)} of the zoomed frame)` : ")"),
    `Self: ${formatValue(tree.self[node] ?? Number.NaN)}`,
    `Calls: ${formatCount(tree.calls[node] ?? Number.NaN)}`,
  ];
  return lines.join("\n");
}

/** The frame zoomed into after a click on `node`: the zoomed frame itself goes one level up, any other frame is zoomed to. */
export function focusAfterClick(tree: FlameTree, node: number, focus: number): number {
  return node === focus ? (tree.parent[node] ?? -1) : node;
}

/** The frame zoomed into after a key: Escape or Home resets, Backspace or ArrowUp goes one level up; null: not a key of the graph. */
export function focusAfterKey(tree: FlameTree, key: string, focus: number): number | null {
  if (key === "Escape" || key === "Home") return 0;
  if (key === "Backspace" || key === "ArrowUp") return Math.max(0, tree.parent[focus] ?? 0);
  return null;
}

/** A frame to zoom into, or the root for one that is not a frame of the tree (out of range, or left out). */
export function validFocus(tree: FlameTree, node: number): number {
  return node < 0 || node >= tree.count || (tree.depth[node] ?? -1) < 0 ? 0 : node;
}
