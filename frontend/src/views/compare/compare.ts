// Compare: any two (run, worker, span) side by side — step time per category, then the
// operators and kernels that changed most per step. The pair lives in the URL
// (compare.base_run / base_worker / base_span and compare.exp_*), so a copied link reopens
// it; without one, the baseline is the current selection and the experiment the span after
// it, or the span most like it (same profiler, device and worker count; a note says when the page chose,
// and how the spans differ); a link may name the runs only. The page also holds the run table of every span, whose
// rows pick a new pair. Other URL parameters: compare.group_by, compare.op_sort,
// compare.op_filter, compare.kernel_sort, compare.kernel_filter, compare.table_sort, and
// compare.base_batch / compare.exp_batch (batch sizes entered in the page, for per-sample figures).
import type { QueryParams } from "../../api/client";
import {
  compareParams,
  fetchCompare,
  isCompareGrouping,
  type CompareData,
  type CompareGrouping,
  type CompareKernelRow,
  type CompareOperatorRow,
  type CompareRequest,
} from "../../api/compare";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { injectViewStyles } from "../../components/view_styles";
import { emptyNote, metricLabel, spanRefOf } from "../../components/view_parts";
import { createVirtualTable, type TableColumn } from "../../components/virtual_table";
import { formatCount } from "../../lib/format";
import { formatSortParam, parseSortParam } from "../../lib/table_model";
import { COMPARE_DEF, compareKernelColumns, compareOperatorColumns, compareOperatorKey } from "./columns";
import { pairParams, parseBatchSize, resolvePair, spanChoices, type ComparePair } from "./model";
import { notesSection, pairFactsSection, pairPickers, stepTimeSection } from "./parts";
import { injectCompareStyles } from "./styles";
import { createRunTableSection } from "./runs_table";
import type { ViewContext, ViewDefinition } from "../types";

const IMPACT_SORT = { column: "impact", direction: "desc" } as const;

interface DeltaTableOptions<T> {
  readonly ctx: ViewContext;
  readonly title: string;
  readonly titleTip: string;
  readonly noun: string;
  readonly rows: readonly T[];
  readonly columns: readonly TableColumn<T>[];
  readonly rowKey: (row: T) => string;
  readonly filterText: (row: T) => string;
  /** URL parameter prefix: `<prefix>_sort`, `<prefix>_filter`. */
  readonly param: string;
  /** The compare route's parameters and which of its tables this is, for the CSV download. */
  readonly csv: { readonly table: "operators" | "kernels"; readonly params: QueryParams };
  readonly testId: string;
  readonly signal: AbortSignal;
}

/** A section with a filter box, a row count and a virtualised, sortable table of joined rows. */
function deltaTableSection<T>(options: DeltaTableOptions<T>): HTMLElement {
  const { ctx } = options;
  const sortParam = `${options.param}_sort`;
  const filterParam = `${options.param}_filter`;
  const table = createVirtualTable({
    columns: options.columns,
    rowKey: options.rowKey,
    filterText: options.filterText,
    sort: parseSortParam(ctx.param(sortParam), options.columns.map((column) => column.id), IMPACT_SORT),
    onSortChange: (next) => ctx.setParams({ [sortParam]: formatSortParam(next) }),
    label: options.title,
    testId: options.testId,
    emptyText: `No ${options.noun} matches the filter.`,
    signal: options.signal,
  });
  table.setRows(options.rows);
  const count = el("span", { className: "ps-count", testId: `${options.testId}-count` });
  const updateCount = (): void => {
    const shown = table.visibleRows().length;
    const total = options.rows.length;
    count.textContent = shown === total ? `${formatCount(total)} ${options.noun}s` : `${formatCount(shown)} of ${formatCount(total)} ${options.noun}s`;
  };
  const filter = el("input", {
    className: "ps-input",
    testId: `${options.testId}-filter`,
    attrs: { type: "search", placeholder: "Filter by name…", "aria-label": `Filter ${options.noun}s by name`, spellcheck: "false" },
  });
  filter.value = ctx.param(filterParam) ?? "";
  table.setFilter(filter.value);
  filter.addEventListener("input", () => {
    table.setFilter(filter.value);
    ctx.setParams({ [filterParam]: filter.value === "" ? null : filter.value });
    updateCount();
  });
  updateCount();
  return el(
    "section",
    { className: "ps-section", testId: `${options.testId}-section` },
    el("h2", {}, metricLabel(options.title, options.titleTip)),
    el(
      "div",
      { className: "ps-controls" },
      el("label", {}, "Filter", filter),
      count,
      csvDownloadLink({
        api: ctx.api,
        route: "compare",
        params: () => options.csv.params,
        state: () => ({ table: options.csv.table, sort: table.sortState(), filter: filter.value }),
        testId: `${options.testId}-csv`,
        what: `the ${options.noun}s`,
      }),
    ),
    table.root,
  );
}

function operatorSection(ctx: ViewContext, data: CompareData, request: CompareRequest, signal: AbortSignal): HTMLElement {
  if (data.operators.length === 0) {
    return emptyNote("compare-operators-empty", "No operators", "Neither span records framework operators (cpu_op events).");
  }
  const hasDevice = data.operators.some((row) => (row.base?.device_total ?? 0) > 0 || (row.exp?.device_total ?? 0) > 0);
  return deltaTableSection<CompareOperatorRow>({
    ctx,
    title: "Operators, by change per step",
    titleTip: COMPARE_DEF.impact,
    noun: "operator",
    rows: data.operators,
    columns: compareOperatorColumns(data.group_by, hasDevice, data.per_sample !== null),
    rowKey: compareOperatorKey,
    filterText: (row) => `${row.name} ${row.input_shape ?? ""}`,
    param: "op",
    testId: "compare-operators",
    csv: { table: "operators", params: compareParams(request) },
    signal,
  });
}

function kernelSection(ctx: ViewContext, data: CompareData, request: CompareRequest, signal: AbortSignal): HTMLElement {
  if (data.kernels.length === 0) {
    return emptyNote("compare-kernels-empty", "No device kernels", "Neither span ran device kernels: compare the operators' host time above.");
  }
  return deltaTableSection<CompareKernelRow>({
    ctx,
    title: "Kernels, by change per step",
    titleTip: COMPARE_DEF.impact,
    noun: "kernel",
    rows: data.kernels,
    columns: compareKernelColumns(data.per_sample !== null),
    rowKey: (row) => row.name,
    filterText: (row) => row.name,
    param: "kernel",
    testId: "compare-kernels",
    csv: { table: "kernels", params: compareParams(request) },
    signal,
  });
}

function mountCompare(host: HTMLElement, ctx: ViewContext): void {
  injectViewStyles(document);
  injectCompareStyles(document);
  const page = el("div", { className: "ps-page", testId: "compare-page" });
  host.appendChild(page);
  const choices = spanChoices(ctx.runs);
  const initial = resolvePair((name) => ctx.param(name), spanRefOf(ctx.selection), choices);
  if (initial === null) {
    page.appendChild(emptyNote("compare-empty", "Nothing to compare yet", "No run lists a span yet: Compare needs two spans."));
    return;
  }
  let pair: ComparePair = { base: initial.base, exp: initial.exp };
  /** How the page chose what the link left open; null once the person picks a pair. */
  let auto = initial.auto;
  const groupParam = ctx.param("group_by");
  let groupBy: CompareGrouping = isCompareGrouping(groupParam) ? groupParam : "name";
  let batch = { base: parseBatchSize(ctx.param("base_batch")), exp: parseBatchSize(ctx.param("exp_batch")) };
  /** The manifests' batch sizes, once an answer told them (the inputs show them as placeholders). */
  let known: { base: number | null; exp: number | null } = { base: null, exp: null };
  ctx.setParams(pairParams(pair)); // the address bar names the pair from the start: a shareable link
  const loader = createHostLoader(ctx.signal);

  const pickerHost = el("div", {});
  const resultHost = el("div", { className: "ps-page", testId: "compare-results" });
  const runTable = createRunTableSection({
    api: ctx.api,
    pair,
    sort: ctx.param("table_sort"),
    onSortChange: (sort) => ctx.setParams({ table_sort: sort }),
    onCompare: (next) => {
      setPair(next);
      resultHost.scrollIntoView({ block: "start", behavior: "smooth" });
    },
    signal: ctx.signal,
  });
  page.append(pickerHost, runTable.root, resultHost);

  function setPair(next: ComparePair): void {
    pair = next;
    auto = null;
    ctx.setParams(pairParams(next));
    runTable.setPair(next);
    renderPickers();
    load();
  }

  function renderPickers(): void {
    replaceChildren(
      pickerHost,
      pairPickers({
        choices,
        pair,
        groupBy,
        onPair: setPair,
        onGroupBy: (next) => {
          groupBy = next;
          ctx.setParams({ group_by: next === "name" ? null : next });
          renderPickers();
          load();
        },
        batch,
        manifestBatch: known,
        onBatch: (next) => {
          batch = next;
          ctx.setParams({ base_batch: next.base === null ? null : String(next.base), exp_batch: next.exp === null ? null : String(next.exp) });
          load();
        },
        auto,
      }),
    );
  }

  function load(): void {
    const request: CompareRequest = { base: pair.base, exp: pair.exp, groupBy, baseBatchSize: batch.base, expBatchSize: batch.exp };
    void loader.load({
      host: resultHost,
      fetch: (signal) => fetchCompare(ctx.api, request, signal),
      what: "the comparison",
      waitingFor: "both spans",
      testIdPrefix: "compare",
      errorTitle: "The comparison could not be computed",
      stateOn: resultHost,
      render: (data, signal) => {
        const manifest = (side: "base" | "exp") => (data[side].batch_size_source === "manifest" ? data[side].batch_size : null);
        if (manifest("base") !== known.base || manifest("exp") !== known.exp) {
          known = { base: manifest("base"), exp: manifest("exp") };
          renderPickers();
        }
        replaceChildren(
          resultHost,
          notesSection(data),
          stepTimeSection(data),
          operatorSection(ctx, data, request, signal),
          kernelSection(ctx, data, request, signal),
          pairFactsSection(data),
        );
      },
    });
  }

  renderPickers();
  load();
}

export const compareView: ViewDefinition = {
  id: "compare",
  label: "Compare",
  scope: "any",
  mount: mountCompare,
};
