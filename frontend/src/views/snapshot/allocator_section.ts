// The allocator's state at the picked moment (or when the snapshot was taken): reserved, allocated, free inside
// segments and the largest free block (fragmentation), the largest segments, and the allocator's settings, with the
// segments' CSV (`memory_snapshot/segments`).
import { fetchSegments, snapshotParams, type SnapshotOverview, type SnapshotRef } from "../../api/snapshot";
import { csvDownloadLink } from "../../components/csv_download";
import { el, replaceChildren } from "../../components/dom";
import { createHostLoader } from "../../components/loader";
import { keyValueList, sectionHead, simpleTable } from "../../components/view_parts";
import { formatBytes, formatCount, formatPercent } from "../../lib/format";
import type { ViewContext } from "../types";

export interface AllocatorSection {
  readonly root: HTMLElement;
  /** The state after entry `row`; null: when the snapshot was taken (no moment picked). */
  load(row: number | null): void;
}

export function createAllocatorSection(
  ctx: ViewContext,
  ref: SnapshotRef,
  device: number,
  settings: SnapshotOverview["allocator_settings"],
  axisOf: (value: number) => string,
): AllocatorSection {
  const allocatorHost = el("div", { className: "ps-page", testId: "snapshot-allocator" });
  const allocatorLoader = createHostLoader(ctx.signal);

  function load(row: number | null): void {
    allocatorLoader.load({
      host: allocatorHost,
      fetch: (signal) => fetchSegments(ctx.api, ref, { device, ...(row !== null ? { row } : {}) }, signal),
      what: "the allocator's state",
      testIdPrefix: "snapshot-segments",
      errorTitle: "The allocator's state could not be computed",
      render: (state) => {
        const csv = csvDownloadLink({
          api: ctx.api,
          route: "memory_snapshot/segments",
          params: () => snapshotParams(ref, { device, ...(row !== null ? { row } : {}) }),
          state: () => ({ sort: null, filter: "" }),
          testId: "snapshot-segments-csv",
          what: "the segments",
        });
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
          keyValueList(Object.entries(settings ?? {}).map(([key, value]) => ({ label: key, value: typeof value === "object" ? JSON.stringify(value) : String(value) })), "snapshot-settings"),
        );
      },
    });
  }

  return { root: allocatorHost, load };
}
