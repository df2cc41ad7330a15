// The Memory page's choices, kept in the URL: the device shown, the selected time range, and the allocation and
// operator filters. The page's parts read them when they draw or ask the backend, and change them as the user does.
import type { MemoryQuery } from "../../api/memory";
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
