// The Memory page's tables for the range and filters chosen: the allocations (size and operator filters, asked of
// the backend), the bytes per operator (filtered here) with the operators holding the most of the peak as bars above
// them, and each table's CSV. A new choice asks the memory route again; the tables keep their rows until it answers.
// The allocations' part is allocations_table.ts, the operators' part operators_table.ts.
import { fetchMemory, memoryParams, type MemoryData } from "../../api/memory";
import type { SpanRef } from "../../api/types";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import type { ViewContext } from "../types";
import { createAllocationsPart } from "./allocations_table";
import { memoryQuery, type MemoryChoices } from "./choices";
import { createOperatorsPart } from "./operators_table";

export interface TablesSection {
  readonly root: HTMLElement;
  /** Shows an answer's tables. */
  render(data: MemoryData): void;
  /** Asks for the tables of the choices as they are now. */
  refresh(): void;
}

/** The section for the page's first answer `memory` (its devices and peaks); times are shown from `origin`. */
export function createTablesSection(ctx: ViewContext, ref: SpanRef, memory: MemoryData, origin: number, choices: MemoryChoices): TablesSection {
  const routeParams = () => ({ run: ref.run, worker: ref.worker, span: ref.span, ...memoryParams(memoryQuery(choices)) });
  const allocations = createAllocationsPart(ctx, origin, choices, routeParams, () => refresh());
  const operators = createOperatorsPart(ctx, memory, choices, routeParams);
  const tablesStatus = el("div", { testId: "memory-tables-status" });
  const tables = el(
    "section",
    { className: "ps-page", testId: "memory-tables" },
    tablesStatus,
    operators.peakBars,
    ...allocations.parts,
    ...operators.parts,
  );

  function render(data: MemoryData): void {
    replaceChildren(tablesStatus);
    tables.dataset["state"] = "ready";
    allocations.setRows(data);
    operators.setRows(data);
  }

  const tablesLoader = createHostLoader(ctx.signal);
  function refresh(): void {
    void tablesLoader.load({
      host: tablesStatus,
      fetch: (signal) => fetchMemory(ctx.api, ref, memoryQuery(choices), signal),
      what: "the tables for this selection",
      testIdPrefix: "memory-tables",
      errorTitle: "The tables could not be updated",
      stateOn: tables,
      render: (data) => render(data),
    });
  }

  return { root: tables, render, refresh };
}
