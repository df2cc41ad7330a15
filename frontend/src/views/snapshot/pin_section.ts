// A pinned allocation: its life outlined on the timeline, and below it its size, site, life, address, annotation,
// category, flags and stack (`memory_snapshot/allocation`). A row of the largest pins one, as does a click on a
// timeline band (its site's largest) or the URL (snapshot.pin).
import { fetchAllocation, type AllocationRow, type SnapshotRef } from "../../api/snapshot";
import { el, replaceChildren } from "../../components/dom";
import { createSignalSlot } from "../../components/loader";
import { keyValueList, sectionHead } from "../../components/view_parts";
import { formatBytes } from "../../lib/format";
import type { ViewContext } from "../types";
import { frameList } from "./frames";
import type { PinnedLife } from "./timeline_canvas";
import { ignoreAbort } from "../../api/abort";

/** What pinning needs of an allocation (a row of the largest, or only its id from the URL). */
export type PinnedAllocation = Pick<AllocationRow, "id" | "start" | "end" | "span_start" | "span_end" | "size" | "label">;

export interface PinSection {
  readonly root: HTMLElement;
  /** Pins the allocation (null: unpins). */
  pin(row: PinnedAllocation | null): void;
}

/** `outline` draws (or, with null, clears) a life on the timeline. */
export function createPinSection(
  ctx: ViewContext,
  ref: SnapshotRef,
  axisOf: (value: number) => string,
  outline: (life: PinnedLife | null) => void,
): PinSection {
  const pinHost = el("div", { className: "ps-page", testId: "snapshot-pin" });
  const pinSlot = createSignalSlot(ctx.signal);

  function pin(row: PinnedAllocation | null): void {
    ctx.setParams({ pin: row === null ? null : String(row.id) });
    if (row === null) {
      outline(null);
      replaceChildren(pinHost);
      return;
    }
    outline({ start: row.start ?? row.span_start, end: row.end ?? row.span_end, size: row.size, label: row.label });
    const signal = pinSlot.next();
    void fetchAllocation(ctx.api, ref, row.id, signal).then((result) => {
      if (signal.aborted) return;
      if (result.kind !== "ok") {
        replaceChildren(pinHost, el("p", {}, result.kind === "error" ? result.message : "Loading…"));
        return;
      }
      const a = result.data;
      const life = `${a.start === null ? "before the recorded history" : axisOf(a.start)} → ${a.end === null ? "alive at the end" : axisOf(a.end)}`;
      const unpin = el("button", { className: "ps-button", testId: "snapshot-unpin", attrs: { type: "button" } }, "Unpin");
      unpin.addEventListener("click", () => pin(null), { signal: ctx.signal });
      replaceChildren(
        pinHost,
        sectionHead(`Pinned allocation: ${formatBytes(a.size)} at ${a.label}`, unpin),
        keyValueList([
          { label: "Life", value: life },
          { label: "Address", value: `0x${a.addr.toString(16)} (stream ${a.stream})` },
          { label: "record_function", value: a.annotation },
          ...(a.category !== null ? [{ label: "Category", value: a.category }] : []),
          ...(a.flags.length ? [{ label: "Flags", value: a.flags.join(", ") }] : []),
        ], "snapshot-pin-facts"),
        frameList(a.frames, "snapshot-pin-frames"),
      );
    }).catch(ignoreAbort);
  }

  return { root: pinHost, pin };
}
