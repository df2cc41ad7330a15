// Memory snapshot: a PyTorch allocator memory snapshot of the run (torch.cuda.memory._dump_snapshot, or the writer's
// memory_snapshot=True): active memory over time stacked by allocation site, what is alive at the peak (or at the
// moment a click picks) grouped and as a flame graph, the allocator's state and fragmentation, out-of-memory events,
// another snapshot compared, and — when the snapshot belongs to a span — the trace's memory counter on one time axis.
// URL parameters: snapshot.name, snapshot.device, snapshot.start / snapshot.end (the timeline's window),
// snapshot.row (the picked moment), snapshot.group_by, snapshot.pin (an allocation), snapshot.compare (run|name).
// Every text from the snapshot is set with textContent.
import { fetchMemory, type MemoryData } from "../../api/memory";
import {
  fetchAllocation,
  fetchAt,
  fetchCompare,
  fetchOverview,
  fetchSegments,
  fetchTimeline,
  GROUP_BY,
  isGroupBy,
  snapshotFlame,
  snapshotParams,
  type AllocationRow,
  type GroupBy,
  type SnapshotAt,
  type SnapshotFrame,
  type SnapshotGroup,
  type SnapshotOverview,
  type SnapshotRef,
} from "../../api/snapshot";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { csvDownloadLink } from "../../components/csv_download";
import { el, injectStyleOnce, replaceChildren } from "../../components/dom";
import { createFlameGraph } from "../../components/flame_graph";
import { createHostLoader, createSignalSlot, loadInto } from "../../components/loader";
import { createTimeChart } from "../../components/time_chart";
import { emptyNote, keyValueList, sectionHead, simpleTable } from "../../components/view_parts";
import { injectViewStyles } from "../../components/view_styles";
import { buildFlameTree } from "../../lib/flame_layout";
import { formatBytes, formatCount, formatDuration, formatPercent } from "../../lib/format";
import { axisText, frameText, maxInRange, siteColor, stepValuesAt } from "../../lib/snapshot_model";
import { createSnapshotTimeline, type SnapshotTimelineChart } from "./timeline";
import type { ViewContext, ViewDefinition } from "../types";

const GROUP_LABELS: Readonly<Record<GroupBy, string>> = {
  site: "Allocation site",
  stack: "Stack",
  category: "Category",
  annotation: "record_function",
  user_metadata: "User metadata",
  compile_context: "Compile context",
  stream: "Stream",
};

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

function frameList(frames: readonly SnapshotFrame[], testId: string): HTMLElement {
  return el(
    "ol",
    { className: "ps-frames", testId },
    ...frames.map((frame) =>
      el(
        "li",
        { className: `ps-frame-${frame.kind}` },
        el("span", { className: "ps-frame-kind" }, frame.kind === "cpp" ? "C++" : frame.kind === "user" ? "yours" : "Python"),
        frameText(frame),
      ),
    ),
  );
}

/** What pinning needs of an allocation (a row of the largest, or only its id from the URL). */
type PinnedAllocation = Pick<AllocationRow, "id" | "start" | "end" | "span_start" | "span_end" | "size" | "label">;

function topFramesText(group: { readonly frames: readonly SnapshotFrame[] }): string {
  return group.frames.slice(0, 3).map(frameText).join(" ← ");
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
    const deviceParam = Number(ctx.param("device"));
    const found = overview.devices.find((d) => d.device === deviceParam) ?? overview.devices.find((d) => d.device === overview.default_device) ?? overview.devices[0];
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
    const stated = device.stated.requested_size;
    const facts = keyValueList(
      [
        { label: "Peak active", value: `${formatBytes(device.peak.bytes)} at ${axisOf(device.peak.time)}` },
        ...(overview.reserved_known ? [{ label: "Peak reserved", value: formatBytes(device.reserved_peak) }] : []),
        { label: "Active at the start", value: formatBytes(device.at_start.active) },
        {
          label: "Active at the end",
          value: `${formatBytes(device.at_end.active)} (the segments state ${formatBytes(stated)} requested)`,
        },
        { label: "Entries", value: `${formatCount(device.entries)} (${formatCount(device.allocations)} allocations)` },
        ...(capacity !== null ? [{ label: "Device memory", value: formatBytes(capacity) }] : []),
        { label: "File", value: overview.file },
      ],
      "snapshot-facts",
    );
    const notes = overview.notes.length
      ? el("ul", { className: "ps-notes", testId: "snapshot-notes" }, ...overview.notes.map((note) => el("li", {}, note)))
      : null;

    // --- the timeline --------------------------------------------------------------------------
    const span = { start: device.start, end: Math.max(device.end, device.start + 1) };
    const startParam = Number(ctx.param("start"));
    const endParam = Number(ctx.param("end"));
    const initial = Number.isFinite(startParam) && Number.isFinite(endParam) && endParam > startParam ? { start: startParam, end: endParam } : span;
    const legend = el("div", { className: "ps-legend", testId: "snapshot-legend" });
    const timelineSlot = createSignalSlot(ctx.signal);
    let chart: SnapshotTimelineChart | null = null;
    chart = createSnapshotTimeline({
      axis: overview.axis,
      span,
      initial,
      capacity,
      reservedKnown: overview.reserved_known,
      load: (window, width) => {
        const signal = timelineSlot.next();
        void fetchTimeline(ctx.api, ref, { device: device.device, start: window.start, end: window.end, width }, signal).then((result) => {
          if (signal.aborted || result.kind !== "ok" || chart === null) return;
          const current = chart.window();
          if (result.data.start !== current.start || result.data.end !== current.end) return;
          chart.show(result.data);
          replaceChildren(
            legend,
            ...result.data.sites.map((site) => {
              const item = el("span", {}, site.label);
              item.style.setProperty("--swatch", siteColor(site.label));
              return item;
            }),
            (() => {
              const item = el("span", {}, "other sites");
              item.style.setProperty("--swatch", "rgba(150,150,150,0.55)");
              return item;
            })(),
          );
        });
      },
      onWindow: (window) =>
        ctx.setParams({
          start: window.start === span.start && window.end === span.end ? null : String(window.start),
          end: window.start === span.start && window.end === span.end ? null : String(window.end),
        }),
      onPick: (row, _time, site) => {
        pickedRow = row;
        ctx.setParams({ row: String(row) });
        loadAt(site);
      },
      signal: ctx.signal,
    });

    // --- what is alive at a moment ------------------------------------------------------------------
    const rowParam = Number(ctx.param("row"));
    let pickedRow: number | null = ctx.param("row") !== null && Number.isInteger(rowParam) ? rowParam : null;
    const groupParam = ctx.param("group_by");
    let groupBy: GroupBy = isGroupBy(groupParam) ? groupParam : "site";
    const atHost = el("div", { className: "ps-page", testId: "snapshot-at" });
    const allocatorHost = el("div", { className: "ps-page", testId: "snapshot-allocator" });
    const pinHost = el("div", { className: "ps-page", testId: "snapshot-pin" });
    const atLoader = createHostLoader(ctx.signal);
    const allocatorLoader = createHostLoader(ctx.signal);
    const pinSlot = createSignalSlot(ctx.signal);

    const groupButtons = GROUP_BY.map((value) => {
      const button = el("button", { testId: `snapshot-group-${value}`, attrs: { type: "button", "aria-pressed": String(value === groupBy) } }, GROUP_LABELS[value]);
      button.addEventListener("click", () => {
        groupBy = value;
        ctx.setParams({ group_by: value === "site" ? null : value });
        for (const other of groupButtons) other.setAttribute("aria-pressed", String(other === button));
        loadAt();
      }, { signal: ctx.signal });
      return button;
    });

    function pin(row: PinnedAllocation | null): void {
      ctx.setParams({ pin: row === null ? null : String(row.id) });
      if (row === null) {
        chart?.pin(null);
        replaceChildren(pinHost);
        return;
      }
      chart?.pin({ start: row.start ?? row.span_start, end: row.end ?? row.span_end, size: row.size, label: row.label });
      const signal = pinSlot.next();
      void fetchAllocation(ctx.api, ref, row.id, signal).then((result) => {
        if (signal.aborted) return;
        if (result.kind !== "ok") {
          replaceChildren(pinHost, el("p", {}, result.kind === "error" ? result.message : "Loading…"));
          return;
        }
        const a = result.data;
        const life = `${a.start === null ? "before the recorded history" : axisOf(a.start)} → ${a.end === null ? "alive at the end" : axisOf(a.end)}`;
        const unpin = el("button", { className: "ps-button", testId: "snapshot-unpin", attrs: { type: "button" } }, "Unpin");
        unpin.addEventListener("click", () => pin(null), { signal: ctx.signal });
        replaceChildren(
          pinHost,
          sectionHead(`Pinned allocation: ${formatBytes(a.size)} at ${a.label}`, unpin),
          keyValueList([
            { label: "Life", value: life },
            { label: "Address", value: `0x${a.addr.toString(16)} (stream ${a.stream})` },
            { label: "record_function", value: a.annotation },
            ...(a.category !== null ? [{ label: "Category", value: a.category }] : []),
            ...(a.flags.length ? [{ label: "Flags", value: a.flags.join(", ") }] : []),
          ], "snapshot-pin-facts"),
          frameList(a.frames, "snapshot-pin-frames"),
        );
      });
    }

    function showAt(at: SnapshotAt, signal: AbortSignal): void {
      const moment = at.is_peak ? `the peak (${axisOf(at.time)})` : at.row < 0 ? "the start" : axisOf(at.time);
      const groupsTable = simpleTable<SnapshotGroup>(
        at.groups.slice(0, 50),
        [
          { label: GROUP_LABELS[at.group_by], cell: (g) => el("span", { className: "ps-name" }, g.label) },
          { label: "Live", unit: "bytes", numeric: true, cell: (g) => formatBytes(g.bytes) },
          { label: "Share", numeric: true, cell: (g) => formatPercent(g.share) },
          { label: "Allocations", numeric: true, cell: (g) => formatCount(g.count) },
          { label: "Largest", numeric: true, cell: (g) => formatBytes(g.largest) },
          { label: "Top frames (yours first)", cell: (g) => topFramesText(g) },
        ],
        "snapshot-groups",
      );
      const largestTable = simpleTable<AllocationRow>(
        at.largest.slice(0, 20),
        [
          {
            label: "Size",
            numeric: true,
            cell: (row) => {
              const button = el("button", { className: "ps-link-button", testId: "snapshot-pin-button", attrs: { type: "button", title: "Pin: outline its life on the timeline, show its stack" } }, formatBytes(row.size));
              button.addEventListener("click", () => pin(row), { signal });
              return button;
            },
          },
          { label: "Site", cell: (row) => row.label },
          { label: "Allocated", cell: (row) => (row.start === null ? "before the history" : axisOf(row.start)) },
          { label: "Freed", cell: (row) => (row.end === null ? "—" : axisOf(row.end)) },
        ],
        "snapshot-largest",
      );
      const csvGroups = csvDownloadLink({
        api: ctx.api,
        route: "memory_snapshot/at",
        params: () => snapshotParams(ref, { device: at.device, row: at.row, group_by: at.group_by }),
        state: () => ({ sort: null, filter: "" }),
        testId: "snapshot-groups-csv",
        what: "what is alive, grouped",
      });
      const csvLargest = csvDownloadLink({
        api: ctx.api,
        route: "memory_snapshot/at",
        params: () => snapshotParams(ref, { device: at.device, row: at.row, group_by: at.group_by, site: at.site ?? undefined }),
        state: () => ({ table: "largest", sort: null, filter: "" }),
        testId: "snapshot-largest-csv",
        what: "the largest live allocations",
      });
      const flameHost = el("div", { testId: "snapshot-flame-host" });
      const flame = snapshotFlame(at);
      if (flame !== null && flame.total > 0) {
        const tree = buildFlameTree(flame);
        const graph = createFlameGraph({
          tree,
          formatValue: (bytes) => formatBytes(bytes),
          testId: "snapshot-flame",
          ariaLabel: "Live bytes by stack",
          signal,
        });
        flameHost.appendChild(graph.root);
      }
      replaceChildren(
        atHost,
        sectionHead(el("span", { className: "ps-picked", testId: "snapshot-moment" }, `Alive at ${moment}: ${formatBytes(at.live_bytes)} in ${formatCount(at.count)} allocations`)),
        el("p", {}, `Reserved ${formatBytes(at.totals.reserved)}, allocated ${formatBytes(at.totals.allocated)} (active ${formatBytes(at.totals.active)}).`),
        el("div", { className: "ps-controls" }, el("span", { className: "ps-segmented", attrs: { role: "group", "aria-label": "Group by" } }, ...groupButtons), csvGroups),
        groupsTable,
        sectionHead(at.site !== undefined && at.site !== null && at.largest[0] !== undefined ? `Largest live allocations of ${at.largest[0].label}` : "Largest live allocations", csvLargest),
        largestTable,
        sectionHead("Live bytes by stack"),
        flameHost,
      );
    }

    /** What is alive at the picked moment; with `site` (a clicked band), that site's largest allocation is pinned. */
    function loadAt(site: number | null = null): void {
      const base = pickedRow !== null ? { device: device.device, row: pickedRow, groupBy } : { device: device.device, groupBy };
      const query = site !== null ? { ...base, site } : base;
      atLoader.load({
        host: atHost,
        fetch: (signal) => fetchAt(ctx.api, ref, query, signal),
        what: "what is alive",
        testIdPrefix: "snapshot-at",
        errorTitle: "What is alive could not be computed",
        render: (at, signal) => {
          showAt(at, signal);
          loadAllocator(at.row);
          const largest = at.largest[0];
          if (site !== null && largest !== undefined) pin(largest);
        },
      });
    }

    function loadAllocator(row: number): void {
      allocatorLoader.load({
        host: allocatorHost,
        fetch: (signal) => fetchSegments(ctx.api, ref, { device: device.device, ...(pickedRow !== null ? { row } : {}) }, signal),
        what: "the allocator's state",
        testIdPrefix: "snapshot-segments",
        errorTitle: "The allocator's state could not be computed",
        render: (state) => {
          const csv = csvDownloadLink({
            api: ctx.api,
            route: "memory_snapshot/segments",
            params: () => snapshotParams(ref, { device: device.device, ...(pickedRow !== null ? { row } : {}) }),
            state: () => ({ sort: null, filter: "" }),
            testId: "snapshot-segments-csv",
            what: "the segments",
          });
          const settings = overview.allocator_settings ?? {};
          replaceChildren(
            allocatorHost,
            sectionHead(`Allocator state ${state.exact ? "when the snapshot was taken" : `at ${axisOf(state.time)}`}`, csv),
            state.note !== undefined ? el("p", { className: "ps-note" }, state.note) : null,
            keyValueList(
              [
                { label: "Reserved", value: formatBytes(state.reserved) },
                { label: "Allocated", value: formatBytes(state.allocated) },
                { label: "Free inside segments", value: `${formatBytes(state.free)} (${formatPercent(state.fragmentation)} of reserved)` },
                { label: "Largest free block", value: formatBytes(state.largest_free) },
                { label: "Lost to rounding", value: formatBytes(state.free_in_blocks) },
                { label: "Segments", value: formatCount(state.segments.length) },
              ],
              "snapshot-fragmentation",
            ),
            simpleTable(
              [...state.segments].sort((a, b) => b.size - a.size).slice(0, 30),
              [
                { label: "Segment", cell: (s) => `0x${s.address.toString(16)}` },
                { label: "Size", numeric: true, cell: (s) => formatBytes(s.size) },
                { label: "Allocated", numeric: true, cell: (s) => formatBytes(s.allocated) },
                { label: "Stream", numeric: true, cell: (s) => String(s.stream) },
              ],
              "snapshot-segments",
            ),
            sectionHead("Allocator settings"),
            keyValueList(Object.entries(settings).map(([key, value]) => ({ label: key, value: typeof value === "object" ? JSON.stringify(value) : String(value) })), "snapshot-settings"),
          );
        },
      });
    }

    // --- out of memory ----------------------------------------------------------------------------------
    const oomHost = overview.oom.length
      ? el(
          "div",
          { className: "ps-page", testId: "snapshot-oom" },
          sectionHead(`Out of memory (${overview.oom.length})`),
          ...overview.oom.map((event) =>
            el(
              "div",
              {},
              el(
                "p",
                {},
                `At ${axisOf(event.time)}: ${formatBytes(event.requested)} asked at ${event.site}; CUDA reported ${formatBytes(event.device_free)} free, ` +
                  `the allocator held ${formatBytes(event.reserved)} reserved with ${formatBytes(event.active)} active.`,
              ),
              frameList(event.frames, "snapshot-oom-frames"),
            ),
          ),
        )
      : null;

    // --- compare ------------------------------------------------------------------------------------------
    const others = ctx.runs.flatMap((candidate) => (candidate.memory_snapshots ?? []).map((info) => ({ run: candidate.name, name: info.name })))
      .filter((other) => !(other.run === ref.run && other.name === ref.snapshot));
    const compareHost = el("div", { className: "ps-page", testId: "snapshot-compare" });
    const compareLoader = createHostLoader(ctx.signal);
    const comparePicker = el("select", { className: "ps-select", testId: "snapshot-compare-picker", attrs: { "aria-label": "Compare with" } });
    comparePicker.appendChild(new Option("—", ""));
    for (const other of others) comparePicker.appendChild(new Option(`${other.run}: ${other.name}`, `${other.run}|${other.name}`));
    comparePicker.value = ctx.param("compare") ?? "";
    function loadCompare(): void {
      const value = comparePicker.value;
      ctx.setParams({ compare: value === "" ? null : value });
      if (value === "") {
        replaceChildren(compareHost);
        return;
      }
      const [otherRun, ...rest] = value.split("|");
      const other: SnapshotRef = { run: otherRun ?? "", snapshot: rest.join("|") };
      compareLoader.load({
        host: compareHost,
        fetch: (signal) => fetchCompare(ctx.api, ref, other, signal),
        what: "the comparison",
        testIdPrefix: "snapshot-compare",
        errorTitle: "The snapshots could not be compared",
        render: (result) => {
          const csv = csvDownloadLink({
            api: ctx.api,
            route: "memory_snapshot/compare",
            params: () => ({ base_run: ref.run, base_snapshot: ref.snapshot ?? undefined, exp_run: other.run, exp_snapshot: other.snapshot ?? undefined }),
            state: () => ({ sort: null, filter: "" }),
            testId: "snapshot-compare-csv",
            what: "the comparison by site",
          });
          replaceChildren(
            compareHost,
            el("p", {}, `Peak: ${formatBytes(result.base.peak.bytes)} here, ${formatBytes(result.exp.peak.bytes)} there (${result.delta >= 0 ? "+" : ""}${formatBytes(result.delta)}).`, " ", csv),
            simpleTable(
              result.rows.slice(0, 40),
              [
                { label: "Site", cell: (r) => r.label },
                { label: "Here", numeric: true, cell: (r) => formatBytes(r.base_bytes) },
                { label: "There", numeric: true, cell: (r) => formatBytes(r.exp_bytes) },
                { label: "Grew by", numeric: true, cell: (r) => formatBytes(r.delta) },
              ],
              "snapshot-compare-table",
            ),
          );
        },
      });
    }
    comparePicker.addEventListener("change", loadCompare, { signal: ctx.signal });

    // --- beside the profile -------------------------------------------------------------------------------------
    const besideHost = el("div", { className: "ps-page", testId: "snapshot-beside" });
    const link = overview.linked;
    if (link !== null && link.trace_offset_us !== null && link.trace_offset_us !== undefined && link.status === "ready") {
      const offset = link.trace_offset_us;
      void Promise.all([
        fetchMemory(ctx.api, { run: ref.run, worker: link.worker, span: link.span }, { device: "", minBytes: 0, name: "", limit: 1 }, ctx.signal),
        fetchTimeline(ctx.api, ref, { device: device.device, width: 1000 }, ctx.signal),
      ]).then(([memory, timeline]) => {
        if (ctx.signal.aborted || timeline.kind !== "ok") return;
        showBeside(memory.kind === "ok" ? memory.data : null, timeline.data.time, timeline.data.active_max, offset);
      });
    } else if (link !== null) {
      besideHost.appendChild(el("p", {}, `This snapshot belongs to span ${link.span} of ${link.worker}` + (link.status === "ready" ? "; one of them has no wall clock, so their times cannot be lined up." : ` (${link.status}).`)));
    }

    function showBeside(memory: MemoryData | null, snapshotTime: readonly number[], active: readonly number[], offset: number): void {
      const traceTime = Array.from(snapshotTime, (t) => t + offset);
      const curveId = memory?.devices.find((d) => d.id === `gpu${device.device}`)?.id ?? memory?.devices.find((d) => d.id !== "cpu")?.id ?? null;
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

    replaceChildren(
      body,
      el("div", { className: "ps-controls" }, el("label", {}, "Device", devicePicker)),
      facts,
      notes,
      sectionHead("Active memory over time", el("span", { className: "ps-count" }, "wheel or W/S zooms · drag or A/D pans · double-click: all · click: what is alive then, and pins the band's largest allocation")),
      chart.root,
      legend,
      pinHost,
      atHost,
      oomHost,
      allocatorHost,
      besideHost,
      sectionHead("Compare with another snapshot", comparePicker),
      compareHost,
    );
    loadAt();
    const pinParam = Number(ctx.param("pin"));
    if (ctx.param("pin") !== null && Number.isInteger(pinParam)) {
      pin({ id: pinParam, size: 0, label: "", start: null, end: null, span_start: span.start, span_end: span.end });
    }
    if (comparePicker.value !== "") loadCompare();
  }
}

export const snapshotView: ViewDefinition = {
  id: "snapshot",
  label: "Memory snapshot",
  scope: "run",
  mount: mountSnapshot,
};
