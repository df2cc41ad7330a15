// The Distributed view's cross-rank section (route distributed/collectives): bandwidth per collective
// kind, the straggler table, and every collective matched across ranks. Tables are virtual: a job of
// a thousand ranks and thousands of collectives stays one scroll each; each has its CSV.
import type { ApiClient } from "../../api/client";
import type { CollectiveKind, CrossRankData, MatchedCollective, StragglerRow } from "../../api/cross_rank";
import { csvDownloadLink } from "../../components/csv_download";
import { el } from "../../components/dom";
import { metricLabel, sectionHead } from "../../components/view_parts";
import { createVirtualTable, type TableColumn } from "../../components/virtual_table";
import { formatBandwidth } from "../../lib/distributed_model";
import { formatBytes, formatCount } from "../../lib/format";
import { formatMicrosNumber } from "../../lib/metric_format";

const TIPS = {
  latency: "The shortest duration of any rank in the collective: a rank that arrived early spent its wait for the last rank inside the call; the last one waited for nobody.",
  skew: "The spread of the ranks' starts of the collective (the last start minus the first), on one clock (each trace's baseTimeNanoseconds).",
  algbw: "Size / latency, where the size is the larger of the call's input and output (nccl-tests' algorithm bandwidth).",
  busbw: "Algorithm bandwidth × 2(n−1)/n for all-reduce, × (n−1)/n for all-gather, reduce-scatter and all-to-all, × 1 otherwise (n: the group's size): what each rank's link carried, comparable with the hardware's peak (nccl-tests).",
  arrivedLast: "Collectives of at least two ranks this rank was the last to start.",
  waitCaused: "The other ranks' time from their own start to this rank's start, summed over the collectives it arrived last at (each at most that rank's duration).",
  lateness: "Mean of this rank's start after the first rank's start, over its collectives.",
};

function micros<T>(id: string, label: string, tip: string, value: (row: T) => number, width = 96): TableColumn<T> {
  return { id, label, unit: "µs", tip, width, align: "right", sortValue: value, text: (row) => formatMicrosNumber(value(row)) };
}

function bandwidth<T>(id: string, label: string, tip: string, value: (row: T) => number | null): TableColumn<T> {
  return { id, label, tip, width: 104, align: "right", sortValue: value, text: (row) => formatBandwidth(value(row)) };
}

function count<T>(id: string, label: string, value: (row: T) => number, tip?: string): TableColumn<T> {
  return { id, label, ...(tip !== undefined ? { tip } : {}), width: 72, align: "right", sortValue: value, text: (row) => formatCount(value(row)) };
}

export function kindColumns(): TableColumn<CollectiveKind>[] {
  return [
    { id: "name", label: "Collective", width: 120, grow: 1, firstDirection: "asc", sortValue: (row) => row.name, text: (row) => row.name },
    count("group_size", "Group size", (row) => row.group_size),
    count("calls", "Calls", (row) => row.calls),
    { id: "bytes", label: "Size (all calls)", width: 104, align: "right", sortValue: (row) => row.bytes, text: (row) => (row.bytes !== null ? formatBytes(row.bytes) : "—") },
    micros("mean_latency", "Mean latency", TIPS.latency, (row) => row.mean_latency),
    micros("mean_skew", "Mean start skew", TIPS.skew, (row) => row.mean_skew),
    bandwidth("algbw", "Algorithm bw", TIPS.algbw, (row) => row.algbw),
    bandwidth("busbw", "Bus bw", TIPS.busbw, (row) => row.busbw),
  ];
}

export function stragglerColumns(): TableColumn<StragglerRow>[] {
  return [
    count("rank", "Rank", (row) => row.rank),
    { id: "worker", label: "Worker", width: 100, grow: 1, firstDirection: "asc", sortValue: (row) => row.worker, text: (row) => row.worker, cellTip: (row) => row.worker },
    count("collectives", "Collectives", (row) => row.collectives),
    count("arrived_last", "Arrived last", (row) => row.arrived_last, TIPS.arrivedLast),
    micros("wait_caused", "Wait caused", TIPS.waitCaused, (row) => row.wait_caused, 110),
    micros("mean_lateness", "Mean lateness", TIPS.lateness, (row) => row.mean_lateness, 110),
  ];
}

export function matchedColumns(): TableColumn<MatchedCollective>[] {
  return [
    { id: "process_group", label: "Group", width: 64, firstDirection: "asc", sortValue: (row) => row.process_group, text: (row) => row.process_group || "—" },
    count("seq", "Seq", (row) => row.seq),
    { id: "name", label: "Collective", width: 110, grow: 1, firstDirection: "asc", sortValue: (row) => row.name, text: (row) => row.name },
    count("ranks", "Ranks", (row) => row.ranks),
    { id: "bytes", label: "Size", width: 90, align: "right", sortValue: (row) => row.bytes, text: (row) => (row.bytes !== null ? formatBytes(row.bytes) : "—") },
    micros("latency", "Latency", TIPS.latency, (row) => row.latency),
    micros("skew", "Start skew", TIPS.skew, (row) => row.skew),
    count("last_rank", "Last rank", (row) => row.last_rank),
    micros("wait_caused", "Wait caused", TIPS.waitCaused, (row) => row.wait_caused, 104),
    bandwidth("busbw", "Bus bw", TIPS.busbw, (row) => row.busbw),
  ];
}

export interface CrossRankOptions {
  readonly api: ApiClient;
  readonly run: string;
  readonly spanIndex: number;
  readonly signal: AbortSignal;
}

function csv(options: CrossRankOptions, table: "collectives" | "kinds" | "stragglers", what: string): HTMLElement {
  return csvDownloadLink({
    api: options.api,
    route: "distributed/collectives",
    params: () => ({ run: options.run, span_index: options.spanIndex }),
    state: () => ({ table, sort: null, filter: "" }),
    testId: `distributed-cross-${table}-csv`,
    what,
  });
}

/** The section; its tables start sorted by what matters most (bus bandwidth, wait caused, latency). */
export function crossRankSection(data: CrossRankData, options: CrossRankOptions): HTMLElement {
  const kinds = createVirtualTable<CollectiveKind>({
    columns: kindColumns(),
    rowKey: (row) => `${row.name} ${row.group_size}`,
    filterText: (row) => row.name,
    sort: { column: "busbw", direction: "desc" },
    label: "Collective kinds",
    testId: "distributed-kinds-table",
    maxHeight: 200,
    signal: options.signal,
  });
  kinds.setRows(data.kinds);
  const stragglers = createVirtualTable<StragglerRow>({
    columns: stragglerColumns(),
    rowKey: (row) => row.worker,
    filterText: (row) => row.worker,
    sort: { column: "wait_caused", direction: "desc" },
    label: "Stragglers",
    testId: "distributed-stragglers-table",
    maxHeight: 280,
    signal: options.signal,
  });
  stragglers.setRows(data.stragglers);
  const matched = createVirtualTable<MatchedCollective>({
    columns: matchedColumns(),
    rowKey: (row) => `${row.process_group}#${row.seq}`,
    filterText: (row) => `${row.process_group} ${row.name}`,
    sort: { column: "latency", direction: "desc" },
    label: "Collectives matched across ranks",
    testId: "distributed-matched-table",
    maxHeight: 320,
    signal: options.signal,
  });
  matched.setRows(data.collectives);
  const top = data.stragglers[0];
  const lead =
    top !== undefined && top.arrived_last > 0
      ? el(
          "p",
          { className: "ps-callout-main", testId: "distributed-cross-straggler" },
          `rank ${formatCount(top.rank)} (${top.worker}) arrived last at ${formatCount(top.arrived_last)} collective(s), keeping the others waiting ${formatMicrosNumber(top.wait_caused)} µs in all.`,
        )
      : null;
  return el(
    "section",
    { testId: "distributed-cross" },
    sectionHead(metricLabel("Collectives across ranks", `Matched by ${data.matched_by}.`)),
    lead,
    el("section", {}, sectionHead("Bandwidth per collective kind", csv(options, "kinds", "the bandwidth per collective kind")), kinds.root),
    el("section", {}, sectionHead("Stragglers: who the others waited for", csv(options, "stragglers", "the straggler table")), stragglers.root),
    el(
      "section",
      {},
      sectionHead(`Every collective (${formatCount(data.collectives.length)})`, csv(options, "collectives", "every matched collective")),
      matched.root,
    ),
  );
}
