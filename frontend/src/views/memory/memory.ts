// Memory: how much memory each device holds over time, when it peaks, and which operators
// allocated it. A drag on a chart selects a time range; the tables then cover only that range.
// URL parameters: memory.device, memory.start / memory.end (µs, the trace's time base),
// memory.min_bytes, memory.name (allocations by operator name), memory.op_filter,
// memory.alloc_sort, memory.op_sort. The choices are in choices.ts, the devices' picker, cards and
// charts in devices_section.ts, the tables in tables_section.ts.
import { fetchMemory, type MemoryData, type MemoryQuery } from "../../api/memory";
import type { ApiResult, SpanRef } from "../../api/types";
import { injectAnalysisStyles } from "../../components/analysis_styles";
import { el, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { emptyNote, spanRefOf } from "../../components/view_parts";
import { injectViewStyles } from "../../components/view_styles";
import { timeOrigin } from "../../lib/memory_model";
import { choicesFromUrl, memoryQuery } from "./choices";
import { createDevicesSection } from "./devices_section";
import { createTablesSection } from "./tables_section";
import type { ViewContext, ViewDefinition } from "../types";

interface MemoryPage {
  readonly memory: MemoryData;
  /** The span's start (µs): times are shown from it, as in the trace. */
  readonly origin: number;
}

/** The memory answer, with its own statement of the span's start as the page's time origin (one request). */
async function fetchMemoryPage(ctx: ViewContext, ref: SpanRef, query: MemoryQuery, signal: AbortSignal): Promise<ApiResult<MemoryPage>> {
  const memory = await fetchMemory(ctx.api, ref, query, signal);
  if (memory.kind !== "ok") return memory;
  return { kind: "ok", data: { memory: memory.data, origin: timeOrigin(memory.data) } };
}

function mountMemory(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  injectAnalysisStyles(document);
  const ref = spanRefOf(ctx.selection);
  const page = el("div", { className: "ps-page", testId: "memory-page" });
  host.appendChild(page);
  if (ref === null) return;

  const choices = choicesFromUrl(ctx);
  const body = el("div", { className: "ps-page" });
  page.append(el("h2", {}, "Memory"), body);

  void loadInto(
    {
      host: body,
      fetch: (signal) => fetchMemoryPage(ctx, ref, memoryQuery(choices), signal),
      what: "the memory events",
      testIdPrefix: "memory",
      errorTitle: "The memory view could not be computed",
      render: (data) => show(data, ref),
    },
    ctx.signal,
  );

  function show({ memory, origin }: MemoryPage, spanRef: SpanRef): void {
    if (!memory.available || memory.devices.length === 0) {
      replaceChildren(
        body,
        emptyNote(
          "memory-unavailable",
          "This span has no memory events",
          memory.hint ?? "Record with torch.profiler.profile(profile_memory=True, record_shapes=True) to see memory.",
        ),
      );
      return;
    }
    if (choices.device !== "" && !memory.devices.some((candidate) => candidate.id === choices.device)) choices.device = "";

    const tables = createTablesSection(ctx, spanRef, memory, origin, choices);
    const devices = createDevicesSection(ctx, memory, origin, choices, () => tables.refresh());
    const notes = memory.notes.map((note) => el("p", { className: "ps-note", testId: "memory-note" }, note));
    replaceChildren(body, devices.controls, ...notes, devices.cards, devices.charts, tables.root);
    devices.renderRange();
    devices.renderDevices();
    tables.render(memory);
  }
}

export const memoryView: ViewDefinition = {
  id: "memory",
  label: "Memory",
  scope: "span",
  mount: mountMemory,
};
