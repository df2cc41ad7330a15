// What is alive at a moment (the peak until one is picked on the timeline): the live allocations grouped by a
// chosen key, the largest of them (a row pins it), and the live bytes by stack as a flame graph, each with its CSV
// (`memory_snapshot/at`). Each answer also loads the allocator's state at that moment. The tables and the flame
// graph of an answer are moment_tables.ts.
import { fetchAt, GROUP_BY, isGroupBy, snapshotParams, type GroupBy, type SnapshotAt, type SnapshotRef } from "../../api/snapshot";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { sectionHead } from "../../components/view_parts";
import { formatBytes } from "../../lib/format";
import { largestHeading, momentHeading } from "../../lib/snapshot_model";
import type { ViewContext } from "../types";
import { GROUP_LABELS, groupsTable, largestTable, liveFlame } from "./moment_tables";
import type { PinnedAllocation } from "./pin_section";

export interface MomentHost {
  readonly ctx: ViewContext;
  readonly ref: SnapshotRef;
  readonly device: number;
  readonly axisOf: (value: number) => string;
  pin(row: PinnedAllocation): void;
  /** The allocator's state after entry `row`; null: when the snapshot was taken (no moment picked). */
  loadAllocator(row: number | null): void;
}

export interface MomentSection {
  readonly root: HTMLElement;
  /** What is alive at the picked moment; with `site` (a clicked band), that site's largest allocation is pinned. */
  load(site?: number | null): void;
  /** A click on the timeline picked the moment after entry `row`, on the band of `site` (null: on no band). */
  pick(row: number, site: number | null): void;
}

/** The section; the picked moment (snapshot.row) and the grouping (snapshot.group_by) start as the URL says. */
export function createMomentSection(host: MomentHost): MomentSection {
  const { ctx, ref, axisOf } = host;
  const rowParam = Number(ctx.param("row"));
  let pickedRow: number | null = ctx.param("row") !== null && Number.isInteger(rowParam) ? rowParam : null;
  const groupParam = ctx.param("group_by");
  let groupBy: GroupBy = isGroupBy(groupParam) ? groupParam : "site";
  const atHost = el("div", { className: "ps-page", testId: "snapshot-at" });
  const atLoader = createHostLoader(ctx.signal);

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

  function showAt(at: SnapshotAt, signal: AbortSignal): void {
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
    replaceChildren(
      atHost,
      sectionHead(el("span", { className: "ps-picked", testId: "snapshot-moment" }, momentHeading(at, axisOf))),
      el("p", {}, `Reserved ${formatBytes(at.totals.reserved)}, allocated ${formatBytes(at.totals.allocated)} (active ${formatBytes(at.totals.active)}).`),
      el("div", { className: "ps-controls" }, el("span", { className: "ps-segmented", attrs: { role: "group", "aria-label": "Group by" } }, ...groupButtons), csvGroups),
      groupsTable(at),
      sectionHead(largestHeading(at), csvLargest),
      largestTable(at, axisOf, (row) => host.pin(row), signal),
      sectionHead("Live bytes by stack"),
      liveFlame(at, signal),
    );
  }

  /** What is alive at the picked moment; with `site` (a clicked band), that site's largest allocation is pinned. */
  function loadAt(site: number | null = null): void {
    const base = pickedRow !== null ? { device: host.device, row: pickedRow, groupBy } : { device: host.device, groupBy };
    const query = site !== null ? { ...base, site } : base;
    atLoader.load({
      host: atHost,
      fetch: (signal) => fetchAt(ctx.api, ref, query, signal),
      what: "what is alive",
      testIdPrefix: "snapshot-at",
      errorTitle: "What is alive could not be computed",
      render: (at, signal) => {
        showAt(at, signal);
        host.loadAllocator(pickedRow !== null ? at.row : null);
        const largest = at.largest[0];
        if (site !== null && largest !== undefined) host.pin(largest);
      },
    });
  }

  function pick(row: number, site: number | null): void {
    pickedRow = row;
    ctx.setParams({ row: String(row) });
    loadAt(site);
  }

  return { root: atHost, load: loadAt, pick };
}
