// What is alive at a moment, the parts of one answer: the live allocations grouped (the first 50 groups), the
// largest live allocations (the first 20; a size pins that allocation), and the live bytes by stack as a flame
// graph. Names are text content.
import { snapshotFlame, type AllocationRow, type GroupBy, type SnapshotAt, type SnapshotGroup } from "../../api/snapshot";
import { el } from "../../components/dom";
import { createFlameGraph } from "../../components/flame_graph";
import { simpleTable } from "../../components/view_parts";
import { buildFlameTree } from "../../lib/flame_layout";
import { formatBytes, formatCount, formatPercent } from "../../lib/format";
import { topFramesText } from "./frames";

export const GROUP_LABELS: Readonly<Record<GroupBy, string>> = {
  site: "Allocation site",
  stack: "Stack",
  category: "Category",
  annotation: "record_function",
  user_metadata: "User metadata",
  compile_context: "Compile context",
  stream: "Stream",
};

export function groupsTable(at: SnapshotAt): HTMLElement {
  return simpleTable<SnapshotGroup>(
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
}

export function largestTable(at: SnapshotAt, axisOf: (value: number) => string, pin: (row: AllocationRow) => void, signal: AbortSignal): HTMLElement {
  return simpleTable<AllocationRow>(
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
}

/** The live bytes by stack; empty when the answer has no flame graph or nothing is alive. */
export function liveFlame(at: SnapshotAt, signal: AbortSignal): HTMLElement {
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
  return flameHost;
}
