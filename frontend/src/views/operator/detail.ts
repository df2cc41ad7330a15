// The drill-down panel of one operator row: its call stacks, the kernels it (or anything
// nested in it) launched, and its first occurrences with a link into the trace view.
import type { KernelRow } from "../../api/kernels";
import {
  fetchOperatorDetail,
  type OperatorDetail,
  type OperatorKey,
  type OperatorOccurrence,
  type OperatorRow,
  type OperatorStackRow,
} from "../../api/operators";
import type { SpanSummary } from "../../api/summary";
import type { SpanRef } from "../../api/types";
import type { ApiClient } from "../../api/client";
import { el, replaceChildren } from "../../components/dom";
import { loadInto } from "../../components/loader";
import { keyValueList, simpleTable, type KeyValue, type SimpleColumn } from "../../components/view_parts";
import { formatCount } from "../../lib/format";
import { formatMicrosNumber, formatTime } from "../../lib/metric_format";
import { METRIC_DEFINITIONS as DEF } from "../../lib/metrics";
import { ignoreAbort } from "../../api/abort";

export interface DetailOptions {
  readonly api: ApiClient;
  readonly ref: SpanRef;
  readonly row: OperatorRow;
  readonly key: OperatorKey;
  readonly hasDevice: boolean;
  /** The span's start and track names, for readable occurrence times (null if unavailable). */
  readonly summary: () => Promise<SpanSummary | null>;
  readonly openInTrace: (occurrence: OperatorOccurrence) => void;
  readonly onClose: () => void;
  readonly signal: AbortSignal;
}

function microsColumn<T>(label: string, tipText: string, value: (row: T) => number): SimpleColumn<T> {
  return { label, unit: "µs", tip: tipText, numeric: true, cell: (row) => formatMicrosNumber(value(row)) };
}

function stacksTable(stacks: readonly OperatorStackRow[], hasDevice: boolean): HTMLElement {
  if (stacks.length === 0) return el("p", { className: "ps-muted" }, "No call stacks recorded (profile with with_stack=True).");
  const columns: SimpleColumn<OperatorStackRow>[] = [
    { label: "Call stack", tip: DEF.stack, cell: (row) => el("pre", {}, row.stack === "" ? "(no stack)" : row.stack) },
    { label: "Calls", tip: DEF.calls, numeric: true, cell: (row) => formatCount(row.calls) },
    microsColumn("Host self", DEF.hostSelf, (row) => row.host_self),
    microsColumn("Host total", DEF.hostTotal, (row) => row.host_total),
  ];
  if (hasDevice) {
    columns.push(
      microsColumn("Device self", DEF.deviceSelf, (row) => row.device_self),
      microsColumn("Device total", DEF.deviceTotal, (row) => row.device_total),
    );
  }
  return el("div", { className: "ps-drill-scroll" }, simpleTable(stacks, columns, "operator-detail-stacks"));
}

function kernelsTable(kernels: readonly KernelRow[]): HTMLElement {
  if (kernels.length === 0) return el("p", { className: "ps-muted" }, "It launched no device kernels.");
  const columns: SimpleColumn<KernelRow>[] = [
    { label: "Kernel", cell: (row) => row.name },
    { label: "Calls", tip: DEF.calls, numeric: true, cell: (row) => formatCount(row.calls) },
    microsColumn("Total", DEF.kernelTotal, (row) => row.total),
    microsColumn("Mean", DEF.kernelMean, (row) => row.mean),
    microsColumn("Min", DEF.kernelMin, (row) => row.min),
    microsColumn("Max", DEF.kernelMax, (row) => row.max),
  ];
  return el("div", { className: "ps-drill-scroll" }, simpleTable(kernels, columns, "operator-detail-kernels"));
}

function occurrencesTable(
  occurrences: readonly OperatorOccurrence[],
  summary: SpanSummary | null,
  openInTrace: (occurrence: OperatorOccurrence) => void,
): HTMLElement {
  if (occurrences.length === 0) return el("p", { className: "ps-muted" }, "No occurrences.");
  const spanStart = summary !== null && Number.isFinite(summary.start) ? summary.start : null;
  const trackNames = new Map((summary?.tracks ?? []).map((track) => [track.id, track.name]));
  const columns: SimpleColumn<OperatorOccurrence>[] = [
    {
      label: spanStart !== null ? "Start (from span start)" : "Start (µs)",
      numeric: true,
      cell: (row) => (spanStart !== null ? `+${formatTime(row.start - spanStart)}` : formatMicrosNumber(row.start)),
    },
    { label: "Duration", numeric: true, cell: (row) => formatTime(row.dur) },
    { label: "Track", cell: (row) => trackNames.get(row.track) ?? `track ${row.track}` },
    {
      label: "",
      cell: (row) => {
        const link = el("button", { className: "ps-link", testId: "open-in-trace", attrs: { type: "button" } }, "open in trace");
        link.addEventListener("click", () => openInTrace(row));
        return link;
      },
    },
  ];
  return el("div", { className: "ps-drill-scroll" }, simpleTable(occurrences, columns, "operator-detail-occurrences"));
}

function detailBody(options: DetailOptions, detail: OperatorDetail, summary: SpanSummary | null): HTMLElement[] {
  const row = options.row;
  const facts: KeyValue[] = [
    { label: "Calls", tip: DEF.calls, value: formatCount(row.calls) },
    { label: "Host self", tip: DEF.hostSelf, value: formatTime(row.host_self) },
    { label: "Host total", tip: DEF.hostTotal, value: formatTime(row.host_total) },
  ];
  if (options.hasDevice) {
    facts.push(
      { label: "Device self", tip: DEF.deviceSelf, value: formatTime(row.device_self) },
      { label: "Device total", tip: DEF.deviceTotal, value: formatTime(row.device_total) },
    );
  }
  const shown = detail.occurrences.length;
  const occurrenceTitle =
    row.calls > shown ? `Occurrences (first ${formatCount(shown)} of ${formatCount(row.calls)})` : "Occurrences";
  return [
    keyValueList(facts),
    el("section", {}, el("h3", {}, `Call stacks (${formatCount(detail.stacks.length)})`), stacksTable(detail.stacks, options.hasDevice)),
    el("section", {}, el("h3", {}, `Kernels launched (${formatCount(detail.kernels.length)})`), kernelsTable(detail.kernels)),
    el("section", {}, el("h3", {}, occurrenceTitle), occurrencesTable(detail.occurrences, summary, options.openInTrace)),
  ];
}

/** Builds the panel and loads its data. */
export function createOperatorDetailPanel(options: DetailOptions): HTMLElement {
  const close = el("button", { className: "ps-button", testId: "operator-detail-close", attrs: { type: "button" } }, "Close");
  close.addEventListener("click", options.onClose);
  const title = el(
    "div",
    {},
    el("h2", {}, options.key.name),
    options.key.inputShape !== null ? el("p", { className: "ps-note" }, `Input shapes: ${options.key.inputShape}`) : null,
  );
  const content = el("div", {});
  const panel = el(
    "section",
    { className: "ps-panel ps-drill", testId: "operator-detail", attrs: { "aria-label": `Details of ${options.key.name}` } },
    el("div", { className: "ps-drill-head" }, title, close),
    content,
  );
  void loadInto(
    {
      host: content,
      fetch: (signal) => fetchOperatorDetail(options.api, options.ref, options.key, signal),
      what: "the operator's details",
      testIdPrefix: "operator-detail",
      errorTitle: "No details",
      render: (detail, signal) => {
        void options.summary().then((summary) => {
          if (!signal.aborted) replaceChildren(content, ...detailBody(options, detail, summary));
        }).catch(ignoreAbort);
      },
    },
    options.signal,
  );
  return panel;
}
