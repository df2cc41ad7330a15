// Memory snapshot: a PyTorch allocator memory snapshot of the run (torch.cuda.memory._dump_snapshot, or the writer's
// memory_snapshot=True): active memory over time stacked by allocation site, what is alive at the peak (or at the
// moment a click picks) grouped and as a flame graph, the allocator's state and fragmentation, out-of-memory events,
// another snapshot compared, and — when the snapshot belongs to a span — the trace's memory counter on one time axis.
// URL parameters: snapshot.name, snapshot.device, snapshot.start / snapshot.end (the timeline's window),
// snapshot.row (the picked moment), snapshot.group_by, snapshot.pin (an allocation), snapshot.compare (run|name).
// Every text from the snapshot is set with textContent.
// The page's parts: facts.ts (the device's facts, notes, out-of-memory events), timeline_section.ts (the chart of
// timeline.ts with its loading and legend), pin_section.ts,
// moment_section.ts (what is alive at a moment), allocator_section.ts, beside_section.ts, compare_section.ts.
import { fetchOverview, type SnapshotOverview, type SnapshotRef } from "../../api/snapshot";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { el, injectStyleOnce, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { emptyNote, sectionHead } from "../../components/view_parts";
import { injectViewStyles } from "../../components/view_styles";
import { formatCount } from "../../lib/format";
import { axisText, chooseDevice, deviceSpan } from "../../lib/snapshot_model";
import { createAllocatorSection } from "./allocator_section";
import { createBesideSection } from "./beside_section";
import { createCompareSection } from "./compare_section";
import { deviceFacts, oomSection, snapshotNotes } from "./facts";
import { createMomentSection } from "./moment_section";
import { createPinSection } from "./pin_section";
import { createTimelineSection } from "./timeline_section";
import type { ViewContext, ViewDefinition } from "../types";

const STYLES = `
.ps-snapshot-timeline { position: relative; }
.ps-snapshot-timeline canvas { display: block; width: 100%; cursor: crosshair; }
.ps-snapshot-timeline .ps-tooltip { position: absolute; white-space: pre; pointer-events: none; }
.ps-frames { margin: 0; padding-left: 1.2em; font-family: ui-monospace, monospace; font-size: 12px; }
.ps-frame-user { font-weight: 600; }
.ps-frame-cpp { color: #666; }
.ps-frame-kind { display: inline-block; min-width: 4em; color: #888; }
.ps-legend { display: flex; flex-wrap: wrap; gap: 6px 14px; font-size: 12px; }
.ps-legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; margin-right: 4px; background: var(--swatch); }
.ps-picked { font-weight: 600; }
`;

/** The run's snapshots from the run list (the picker), by name. */
function snapshotsOf(ctx: ViewContext): { name: string; run: string }[] {
  const run = ctx.selection.run;
  return run === null ? [] : (run.memory_snapshots ?? []).map((info) => ({ name: info.name, run: run.name }));
}

function mountSnapshot(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  injectAnalysisStyles(document);
  injectStyleOnce(document, "ps-snapshot-styles", STYLES);
  const page = el("div", { className: "ps-page", testId: "snapshot-page" });
  host.appendChild(page);
  const run = ctx.selection.run;
  if (run === null) return;
  const available = snapshotsOf(ctx);
  page.appendChild(el("h2", {}, "Memory snapshot"));
  if (available.length === 0) {
    page.appendChild(
      emptyNote(
        "snapshot-none",
        "This run has no memory snapshot",
        "Record one with torch.cuda.memory._record_memory_history() and torch.cuda.memory._dump_snapshot(\"snapshot.pickle\") " +
          "into the run's folder, or with profscope.writer.trace_handler(..., memory_snapshot=True) beside each span.",
      ),
    );
    return;
  }
  const wantedName = ctx.param("name");
  const name = available.some((s) => s.name === wantedName) ? (wantedName as string) : (available[0]?.name ?? "");
  const ref: SnapshotRef = { run: run.name, snapshot: name };

  const picker = el("select", { className: "ps-select", testId: "snapshot-picker", attrs: { "aria-label": "Snapshot" } });
  for (const candidate of available) picker.appendChild(new Option(candidate.name, candidate.name));
  picker.value = name;
  picker.disabled = available.length < 2;
  picker.addEventListener("change", () => {
    ctx.setParams({ name: picker.value, row: null, pin: null, start: null, end: null, device: null });
    ctx.navigate("snapshot", { name: picker.value });
  }, { signal: ctx.signal });
  const body = el("div", { className: "ps-page" });
  page.append(el("div", { className: "ps-controls" }, el("label", {}, "Snapshot", picker)), body);

  void loadInto(
    {
      host: body,
      fetch: (signal) => fetchOverview(ctx.api, ref, signal),
      what: "the memory snapshot",
      testIdPrefix: "snapshot",
      errorTitle: "The memory snapshot could not be read",
      render: (overview) => show(overview),
    },
    ctx.signal,
  );

  function show(overview: SnapshotOverview): void {
    // Without a device in the URL, the snapshot's default (the device with the most entries), not device 0.
    const deviceParam = ctx.param("device");
    const found = chooseDevice(overview, deviceParam === null ? Number.NaN : Number(deviceParam));
    if (found === undefined) {
      replaceChildren(body, emptyNote("snapshot-empty", "The snapshot holds no device", "Its device_traces and segments are empty."));
      return;
    }
    const device = found;
    const origin = device.start;
    const axisOf = (value: number): string => axisText(value, overview.axis, origin);
    const capacity = overview.linked?.capacity ?? null;

    // --- facts -------------------------------------------------------------------------------
    const devicePicker = el("select", { className: "ps-select", testId: "snapshot-device", attrs: { "aria-label": "Device" } });
    for (const d of overview.devices) devicePicker.appendChild(new Option(`device ${d.device} (${formatCount(d.entries)} entries)`, String(d.device)));
    devicePicker.value = String(device.device);
    devicePicker.disabled = overview.devices.length < 2;
    devicePicker.addEventListener("change", () => ctx.navigate("snapshot", { name, device: devicePicker.value }), { signal: ctx.signal });
    const facts = deviceFacts(overview, device, capacity, axisOf);
    const notes = snapshotNotes(overview);

    // --- the timeline --------------------------------------------------------------------------
    const span = deviceSpan(device);
    const { chart, legend } = createTimelineSection(ctx, ref, overview, { device: device.device, span, capacity }, (row, site) => moment.pick(row, site));

    // --- what is alive at a moment, a pinned allocation, the allocator's state -----------------------
    const pinned = createPinSection(ctx, ref, axisOf, (life) => chart.pin(life));
    const allocator = createAllocatorSection(ctx, ref, device.device, overview.allocator_settings, axisOf);
    const moment = createMomentSection({
      ctx,
      ref,
      device: device.device,
      axisOf,
      pin: (row) => pinned.pin(row),
      loadAllocator: (row) => allocator.load(row),
    });

    const compare = createCompareSection(ctx, ref);
    const beside = createBesideSection(ctx, ref, overview.linked, device.device);

    replaceChildren(
      body,
      el("div", { className: "ps-controls" }, el("label", {}, "Device", devicePicker)),
      facts,
      notes,
      sectionHead("Active memory over time", el("span", { className: "ps-count" }, "wheel or W/S zooms · drag or A/D pans · double-click: all · click: what is alive then, and pins the band's largest allocation")),
      chart.root,
      legend,
      pinned.root,
      moment.root,
      oomSection(overview, axisOf),
      allocator.root,
      beside,
      sectionHead("Compare with another snapshot", compare.picker),
      compare.root,
    );
    moment.load();
    const pinParam = Number(ctx.param("pin"));
    if (ctx.param("pin") !== null && Number.isInteger(pinParam)) {
      pinned.pin({ id: pinParam, size: 0, label: "", start: null, end: null, span_start: span.start, span_end: span.end });
    }
    if (compare.picker.value !== "") compare.load();
  }
}

export const snapshotView: ViewDefinition = {
  id: "snapshot",
  label: "Memory snapshot",
  scope: "run",
  mount: mountSnapshot,
};
