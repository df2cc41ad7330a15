// Another snapshot compared with this one (any run's, picked from the run list; snapshot.compare = run|name): both
// peaks and the live bytes by allocation site here and there (`memory_snapshot/compare`), with its CSV.
import { fetchCompare, type SnapshotRef } from "../../api/snapshot";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { simpleTable } from "../../components/view_parts";
import { formatBytes } from "../../lib/format";
import type { ViewContext } from "../types";

export interface CompareSection {
  /** The other snapshot's picker ("—": none), as the URL left it. */
  readonly picker: HTMLSelectElement;
  readonly root: HTMLElement;
  /** Compares with the snapshot picked (or clears the comparison). */
  load(): void;
}

export function createCompareSection(ctx: ViewContext, ref: SnapshotRef): CompareSection {
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

  return { picker: comparePicker, root: compareHost, load: loadCompare };
}
