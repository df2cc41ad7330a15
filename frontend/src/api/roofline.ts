// The `roofline` route: groups of identical operator calls against the roofs of their device, the biggest gaps to
// the roof, and copy bandwidth per direction. Times in µs, rates per second, shares 0..1. The answer's type is the
// contract's (schema.ts); a point's efficiency figures are read with efficiencyOf (efficiency.ts).
import type { ApiClient } from "./client";
import type { Answer, Item, Schema } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export type RooflineData = Answer<"roofline">;
export type RooflinePoint = Schema<"RooflinePoint">;
export type DeviceRoofs = Item<RooflineData["devices"]>;
export type Roof = Item<DeviceRoofs["roofs"]>;

export function fetchRoofline(api: ApiClient, ref: SpanRef, signal?: AbortSignal): Promise<ApiResult<RooflineData>> {
  return api.spanRoute("roofline", ref, {}, signal);
}
