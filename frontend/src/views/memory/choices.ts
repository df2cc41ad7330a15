// The Memory page's choices, kept in the URL: the device shown, the selected time range, and the allocation and
// operator filters. The page's parts read them when they draw or ask the backend, and change them as the user does.
// Also what the choices make of an answer: the peak the operators are measured against, the operators' count.
import type { MemoryData, MemoryQuery } from "../../api/memory";
import { formatCount } from "../../lib/format";
import { parseMinBytes, parseRangeParams, type TimeRange } from "../../lib/memory_model";
import type { ViewContext } from "../types";

/** Allocations the route lists at most (largest first). */
export const ALLOCATION_LIMIT = 5000;

export interface MemoryChoices {
  /** The device's id; "": every device. */
  device: string;
  range: TimeRange | null;
  minBytes: number;
  /** Allocations by operator name (the backend searches every allocation). */
  nameFilter: string;
  /** Operators by name (filtered here, in the table). */
  opFilter: string;
}

/** The choices the URL holds (memory.device, memory.start / memory.end, memory.min_bytes, memory.name, memory.op_filter). */
export function choicesFromUrl(ctx: Pick<ViewContext, "param">): MemoryChoices {
  return {
    device: ctx.param("device") ?? "",
    range: parseRangeParams(ctx.param("start"), ctx.param("end")),
    minBytes: parseMinBytes(ctx.param("min_bytes")),
    nameFilter: ctx.param("name") ?? "",
    opFilter: ctx.param("op_filter") ?? "",
  };
}

/** What the memory route is asked for the choices as they are now. */
export function memoryQuery(choices: MemoryChoices): MemoryQuery {
  return {
    device: choices.device,
    start: choices.range?.start,
    end: choices.range?.end,
    minBytes: choices.minBytes,
    name: choices.nameFilter,
    limit: ALLOCATION_LIMIT,
  };
}

/**
 * The allocated peak the operators' bars are measured against: that of the one device shown (the device chosen,
 * or the only one); null when several devices are shown or the device has no peak.
 */
export function shownDevicePeak(memory: Pick<MemoryData, "devices" | "peaks">, choices: Pick<MemoryChoices, "device">): number | null {
  const shownDevices = memory.devices.filter((candidate) => choices.device === "" || candidate.id === choices.device);
  const onlyDevice = shownDevices.length === 1 ? shownDevices[0] : undefined;
  return onlyDevice !== undefined ? (memory.peaks.get(onlyDevice.id)?.allocated ?? null) : null;
}

/** "120 operators", or "12 of 120 operators" while the table's filter hides some. */
export function operatorCountText(shown: number, total: number): string {
  return shown === total ? `${formatCount(total)} operators` : `${formatCount(shown)} of ${formatCount(total)} operators`;
}
