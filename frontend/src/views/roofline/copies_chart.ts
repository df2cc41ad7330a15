// The Roofline page's copy bandwidth over time: per direction, the bandwidth of the copies running at each instant
// (copyBandwidthOverTime), with each direction's link peak as a dashed line, and a read-out under the pointer.
import type { RooflineData } from "../../api/roofline";
import { el, replaceChildren } from "../../components/dom";
import { createTimeChart } from "../../components/time_chart";
import { formatByteRate } from "../../lib/efficiency";
import { formatCount } from "../../lib/format";
import { formatAxisDuration, formatTime } from "../../lib/metric_format";
import { COPY_COLORS, copyBandwidthOverTime } from "./model";

/** The chart with its note, or null when no listed copy has both bytes and a duration. */
export function copiesOverTime(copies: RooflineData["copies"], signal: AbortSignal): HTMLElement | null {
  const { time, series } = copyBandwidthOverTime(copies.calls);
  if (time.length < 2) return null;
  const labels = new Map(copies.directions.map((row) => [row.direction, row.label]));
  const origin = time[0]!;
  const hover = el("p", { className: "ps-hover-line", testId: "roofline-copies-hover", attrs: { "aria-live": "off" } });
  const peaks = copies.directions.filter((row) => row.peak !== null && series.some((s) => s.direction === row.direction));
  const chart = createTimeChart({
    time,
    origin,
    series: series.map((s) => ({ label: labels.get(s.direction) ?? s.direction, color: COPY_COLORS[s.direction] ?? COPY_COLORS["other"]!, values: s.values })),
    lines: peaks.map((row) => ({
      y: row.peak!,
      label: `${row.label} peak ${formatByteRate(row.peak)}`,
      color: COPY_COLORS[row.direction] ?? COPY_COLORS["other"]!,
      inScale: false,
    })),
    xFormat: formatAxisDuration,
    yFormat: (value) => formatByteRate(value),
    xLabel: "time since the first copy",
    yLabel: "bandwidth",
    ariaLabel: `Copy bandwidth over ${formatTime(time[time.length - 1]! - origin)}, per direction`,
    testId: "roofline-copies-chart",
    height: 200,
    selection: null,
    onHover: (index) => {
      const at = index === null ? undefined : time[index];
      if (at === undefined || index === null) {
        replaceChildren(hover);
        return;
      }
      const parts = series.map((s) => `${labels.get(s.direction) ?? s.direction} ${formatByteRate(s.values[index] ?? null)}`);
      replaceChildren(hover, [`at ${formatTime(at - origin)}`, ...parts].join(" · "));
    },
    signal,
  });
  const legend = el(
    "p",
    { className: "ps-note", testId: "roofline-copies-legend" },
    ...series.flatMap((s) => {
      const swatch = el("span", { className: "ps-swatch" });
      swatch.style.background = COPY_COLORS[s.direction] ?? COPY_COLORS["other"]!;
      return [swatch, ` ${labels.get(s.direction) ?? s.direction}  `];
    }),
  );
  const listed =
    copies.listed_calls < copies.total_calls
      ? ` Drawn from the ${formatCount(copies.listed_calls)} largest of ${formatCount(copies.total_calls)} calls.`
      : "";
  return el(
    "div",
    { testId: "roofline-copies-over-time" },
    el("h4", {}, "Bandwidth over time"),
    el("p", { className: "ps-note" }, `Per direction, the bandwidth of the copies running at each instant (each moves its bytes evenly over its duration); dashed: the link's peak.${listed}`),
    chart.root,
    legend,
    hover,
  );
}
