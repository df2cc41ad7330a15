// Beside the profile: when the snapshot belongs to a span whose trace is loaded and both have a wall clock, the
// snapshot's active memory and the trace's memory counter of the same device on one time axis (a drag reads both
// peaks in the range); otherwise a line saying which span it belongs to and why they cannot be lined up.
import { fetchMemory, type MemoryData } from "../../api/memory";
import { fetchTimeline, type SnapshotOverview, type SnapshotRef } from "../../api/snapshot";
import { el, replaceChildren } from "../../components/dom";
import { createTimeChart } from "../../components/time_chart";
import { sectionHead } from "../../components/view_parts";
import { formatBytes, formatDuration } from "../../lib/format";
import { maxInRange, stepValuesAt } from "../../lib/snapshot_model";
import type { ViewContext } from "../types";
import { ignoreAbort } from "../../api/abort";

/** The section for `link` (the span the snapshot belongs to, if any) and the snapshot's device; it loads at once. */
export function createBesideSection(ctx: ViewContext, ref: SnapshotRef, link: SnapshotOverview["linked"], device: number): HTMLElement {
  const besideHost = el("div", { className: "ps-page", testId: "snapshot-beside" });
  if (link !== null && link.trace_offset_us !== null && link.trace_offset_us !== undefined && link.status === "ready") {
    const offset = link.trace_offset_us;
    void Promise.all([
      fetchMemory(ctx.api, { run: ref.run, worker: link.worker, span: link.span }, { device: "", minBytes: 0, name: "", limit: 1 }, ctx.signal),
      fetchTimeline(ctx.api, ref, { device, width: 1000 }, ctx.signal),
    ]).then(([memory, timeline]) => {
      if (ctx.signal.aborted || timeline.kind !== "ok") return;
      showBeside(memory.kind === "ok" ? memory.data : null, timeline.data.time, timeline.data.active_max, offset);
    }).catch(ignoreAbort);
  } else if (link !== null) {
    besideHost.appendChild(el("p", {}, `This snapshot belongs to span ${link.span} of ${link.worker}` + (link.status === "ready" ? "; one of them has no wall clock, so their times cannot be lined up." : ` (${link.status}).`)));
  }

  function showBeside(memory: MemoryData | null, snapshotTime: readonly number[], active: readonly number[], offset: number): void {
    const traceTime = Array.from(snapshotTime, (t) => t + offset);
    const curveId = memory?.devices.find((d) => d.id === `gpu${device}`)?.id ?? memory?.devices.find((d) => d.id !== "cpu")?.id ?? null;
    const curve = curveId !== null ? memory?.curves.get(curveId) : undefined;
    const series = [{ label: "Snapshot: active (allocator history)", color: "#d97706", values: Array.from(active) }];
    if (curve !== undefined) {
      series.push({ label: `Profile: allocated (${curveId})`, color: "#2563eb", values: Array.from(stepValuesAt(curve.time, curve.allocated, traceTime)) });
    }
    const origin = traceTime[0] ?? 0;
    const readout = el("p", { className: "ps-hover-line", testId: "snapshot-beside-range" });
    const chart = createTimeChart({
      time: traceTime,
      origin,
      series,
      xFormat: (us) => formatDuration(us),
      yFormat: (value) => formatBytes(value),
      xLabel: "time (the trace's)",
      yLabel: "bytes",
      ariaLabel: "The snapshot's active memory and the profile's memory counter on one time axis",
      testId: "snapshot-beside-chart",
      selection: null,
      onBrush: (range) => {
        const snap = maxInRange(traceTime, active, range.start, range.end);
        const prof = curve !== undefined ? maxInRange(curve.time, curve.allocated, range.start, range.end) : Number.NaN;
        readout.textContent = `Selected ${formatDuration(range.end - range.start)}: snapshot peak ${formatBytes(snap)}, profile peak ${formatBytes(prof)}.`;
      },
      signal: ctx.signal,
    });
    replaceChildren(
      besideHost,
      sectionHead(`Beside the profile (span ${link?.span ?? ""} of ${link?.worker ?? ""})`),
      curve === undefined ? el("p", {}, "The span's trace has no memory events of this device (profile_memory=True records them).") : null,
      chart.root,
      readout,
    );
  }

  return besideHost;
}
