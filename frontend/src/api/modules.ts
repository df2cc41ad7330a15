// The `modules` route: the nn.Module hierarchy of a span (node 0 is the "(model)" root) with
// calls and forward/backward time per module, host and device, µs. The answer's type is the
// contract's (schema.ts).
import type { ApiClient } from "./client";
import type { Answer } from "./schema";
import type { ApiResult, SpanRef } from "./types";

export type ModulesData = Answer<"modules">;
/** The module tree's columns, one entry per module. */
export type ModuleTree = NonNullable<ModulesData["nodes"]>;

export function fetchModules(api: ApiClient, ref: SpanRef, signal?: AbortSignal): Promise<ApiResult<ModulesData>> {
  return api.spanRoute("modules", ref, {}, signal);
}
