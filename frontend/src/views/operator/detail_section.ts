// The Operator page's drill-down below the table: one row's panel at a time (opening another, or regrouping,
// closes it and stops its requests), the row selected in the table, its key in the URL, and the span's summary
// asked once for every panel of the page.
import type { OperatorGrouping, OperatorRow } from "../../api/operators";
import { fetchSpanSummary, type SpanSummary } from "../../api/summary";
import type { SpanRef } from "../../api/types";
import { el, replaceChildren } from "../../components/dom";
import { createSignalSlot } from "../../components/loader";
import type { ViewContext } from "../types";
import { operatorRowKey } from "./columns";
import { createOperatorDetailPanel } from "./detail";
import { operatorKey } from "./model";

export interface DetailSection {
  readonly root: HTMLElement;
  /** Open a row's panel; `writeUrl`: a user's click (the URL names the row and the panel scrolls into view). */
  open(row: OperatorRow, groupBy: OperatorGrouping, hasDevice: boolean, writeUrl: boolean): void;
  close(): void;
}

/** `select`: mark a row selected in the table (null: none). */
export function createDetailSection(ctx: ViewContext, ref: SpanRef, select: (key: string | null) => void): DetailSection {
  const root = el("div", {});
  const detailSignals = createSignalSlot(ctx.signal);
  let summary: Promise<SpanSummary | null> | null = null;

  function spanSummary(): Promise<SpanSummary | null> {
    summary ??= fetchSpanSummary(ctx.api, ref, ctx.signal).then(
      (result) => (result.kind === "ok" ? result.data : null),
      () => null,
    );
    return summary;
  }

  function close(): void {
    detailSignals.clear();
    replaceChildren(root);
    select(null);
  }

  function open(row: OperatorRow, groupBy: OperatorGrouping, hasDevice: boolean, writeUrl: boolean): void {
    const signal = detailSignals.next();
    const key = operatorKey(row, groupBy);
    if (writeUrl) ctx.setParams({ op: key.name, op_shape: key.inputShape });
    select(operatorRowKey(row));
    const panel = createOperatorDetailPanel({
      api: ctx.api,
      ref,
      row,
      key,
      hasDevice,
      summary: spanSummary,
      openInTrace: (occurrence) =>
        ctx.navigate("trace", {
          start: String(occurrence.start),
          end: String(occurrence.start + occurrence.dur),
          select: String(occurrence.event_id),
        }),
      onClose: () => {
        ctx.setParams({ op: null, op_shape: null });
        close();
      },
      signal,
    });
    replaceChildren(root, panel);
    if (writeUrl) panel.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  return { root, open, close };
}
