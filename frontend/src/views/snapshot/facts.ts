// The memory snapshot's facts for the device shown (peaks, start and end, entries, capacity, file), the reader's
// notes, and the out-of-memory events with their stacks. Times are written by `axisOf` (µs from the device's start,
// or entry numbers).
import type { SnapshotOverview } from "../../api/snapshot";
import { el } from "../../components/dom";
import { keyValueList, sectionHead } from "../../components/view_parts";
import { formatBytes, formatCount } from "../../lib/format";
import { frameList } from "./frames";

export type SnapshotDevice = SnapshotOverview["devices"][number];

/** The device's facts; `capacity`: the device's memory, when the linked trace states it. */
export function deviceFacts(overview: SnapshotOverview, device: SnapshotDevice, capacity: number | null, axisOf: (value: number) => string): HTMLElement {
  const stated = device.stated.requested_size;
  return keyValueList(
    [
      { label: "Peak active", value: `${formatBytes(device.peak.bytes)} at ${axisOf(device.peak.time)}` },
      ...(overview.reserved_known ? [{ label: "Peak reserved", value: formatBytes(device.reserved_peak) }] : []),
      { label: "Active at the start", value: formatBytes(device.at_start.active) },
      {
        label: "Active at the end",
        value: `${formatBytes(device.at_end.active)} (the segments state ${formatBytes(stated)} requested)`,
      },
      { label: "Entries", value: `${formatCount(device.entries)} (${formatCount(device.allocations)} allocations)` },
      ...(capacity !== null ? [{ label: "Device memory", value: formatBytes(capacity) }] : []),
      { label: "File", value: overview.file },
    ],
    "snapshot-facts",
  );
}

/** The reader's notes on the snapshot; null without any. */
export function snapshotNotes(overview: SnapshotOverview): HTMLElement | null {
  return overview.notes.length
    ? el("ul", { className: "ps-notes", testId: "snapshot-notes" }, ...overview.notes.map((note) => el("li", {}, note)))
    : null;
}

/** The out-of-memory events: what was asked where, what CUDA and the allocator held; null without any. */
export function oomSection(overview: SnapshotOverview, axisOf: (value: number) => string): HTMLElement | null {
  return overview.oom.length
    ? el(
        "div",
        { className: "ps-page", testId: "snapshot-oom" },
        sectionHead(`Out of memory (${overview.oom.length})`),
        ...overview.oom.map((event) =>
          el(
            "div",
            {},
            el(
              "p",
              {},
              `At ${axisOf(event.time)}: ${formatBytes(event.requested)} asked at ${event.site}; CUDA reported ${formatBytes(event.device_free)} free, ` +
                `the allocator held ${formatBytes(event.reserved)} reserved with ${formatBytes(event.active)} active.`,
            ),
            frameList(event.frames, "snapshot-oom-frames"),
          ),
        ),
      )
    : null;
}
