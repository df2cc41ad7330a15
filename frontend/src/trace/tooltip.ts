// The timeline's hover tooltip: what it says of the slice, busy block, counter, group header or track name under the
// pointer, and where it goes (beside the pointer, turned back at the window's edges). Text only.
import { el, replaceChildren } from "../components/dom";
import { formatDuration } from "../lib/format";
import type { Hit } from "./interaction/hit_test";
import type { TrackLayout } from "./layout";
import { formatCounterValue } from "./render/renderer";

/** The tooltip's lines for what the pointer is over (the first one bold); null: no tooltip. */
export function tooltipLines(hit: Hit, layout: TrackLayout, collapsed: ReadonlySet<string>): string[] | null {
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
      const track = layout.tracks.get(hit.trackId)?.track;
      const lines = [track?.name ?? hit.trackId];
      for (const value of hit.values) {
        const mean = formatCounterValue(value.mean, hit.unit);
        const spread = value.min !== value.max ? ` (min ${formatCounterValue(value.min, hit.unit)}, max ${formatCounterValue(value.max, hit.unit)})` : "";
        lines.push(`${value.series}: ${mean}${spread}`);
      }
      return lines;
    }
    case "group":
      return [collapsed.has(hit.group) ? "click to expand" : "click to collapse"];
    case "label": {
      const row = layout.tracks.get(hit.trackId);
      if (row === undefined) return null;
      return [row.track.name, row.track.group, row.pinned ? "click to unpin" : "click to pin to the top"];
    }
    default:
      return null;
  }
}

/** Shows `lines` in the tooltip beside the pointer (hides it for null), inside the window. */
export function placeTooltip(tooltip: HTMLElement, lines: readonly string[] | null, clientX: number, clientY: number, win: Window): void {
  if (lines === null) {
    tooltip.hidden = true;
    return;
  }
  replaceChildren(tooltip, el("strong", {}, lines[0] ?? ""), ...lines.slice(1).map((line) => `\n${line}`));
  tooltip.hidden = false;
  const margin = 14;
  const box = tooltip.getBoundingClientRect();
  const left = clientX + margin + box.width > win.innerWidth ? clientX - margin - box.width : clientX + margin;
  const top = clientY + margin + box.height > win.innerHeight ? clientY - margin - box.height : clientY + margin;
  tooltip.style.left = `${Math.max(0, left)}px`;
  tooltip.style.top = `${Math.max(0, top)}px`;
}
