// Checks the shape of JSON answers before the UI trusts them. A malformed entry is dropped
// (or its optional field ignored) rather than breaking the whole run list.
import type { LayoutLookedFor, RunInfo, RunStatus, RunsResponse, SkippedFiles, SpanFacts, WorkerInfo, MemorySnapshotInfo } from "./types";

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const RUN_STATUSES: readonly RunStatus[] = ["ready", "loading", "error"];

function parseStatus(value: unknown): RunStatus | null {
  return RUN_STATUSES.find((status) => status === value) ?? null;
}

/** Clamps a progress value to 0..1; anything not a finite number is unknown. */
export function parseProgress(value: unknown): number | null {
  if (typeof value !== "number" || !Number.isFinite(value)) return null;
  return Math.min(1, Math.max(0, value));
}

function finiteOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** A span_info entry's facts (start time, duration, steps, device); unknown parts are null (the device absent). */
export function parseSpanFacts(value: unknown): SpanFacts {
  const info = isObject(value) ? value : {};
  const steps = info["steps"];
  const count = isObject(steps) ? finiteOrNull(steps["count"]) : null;
  const device = info["device"];
  return {
    startTime: finiteOrNull(info["start_time"]),
    duration: finiteOrNull(info["duration"]),
    steps:
      isObject(steps) && count !== null
        ? {
            count,
            first: finiteOrNull(steps["first"]),
            last: finiteOrNull(steps["last"]),
            ...(finiteOrNull(steps["left_out"]) ? { leftOut: finiteOrNull(steps["left_out"]) ?? 0 } : {}),
          }
        : null,
    ...(typeof device === "string" && device !== "" ? { device } : {}),
  };
}

function parseWorker(value: unknown): WorkerInfo | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  const spans = Array.isArray(value["spans"])
    ? value["spans"].filter((span): span is string => typeof span === "string")
    : [];
  const infos = Array.isArray(value["span_info"]) ? value["span_info"] : [];
  // Facts by span name: span_info lists the same spans, but only the names say which is which.
  const byName = new Map<string, unknown>();
  for (const info of infos) if (isObject(info) && typeof info["name"] === "string") byName.set(info["name"], info);
  const rank = value["rank"];
  return {
    name: value["name"],
    spans,
    ...(infos.length > 0 ? { spanFacts: spans.map((span) => parseSpanFacts(byName.get(span))) } : {}),
    ...(typeof rank === "number" && Number.isInteger(rank) ? { rank } : {}),
  };
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

/** The `skipped` field: counts by reason and example paths; malformed entries are left out. */
function parseSkipped(value: unknown): SkippedFiles | null {
  if (!isObject(value) || !isCount(value["count"]) || !isObject(value["reasons"])) return null;
  const reasons: Record<string, number> = {};
  for (const [reason, count] of Object.entries(value["reasons"])) {
    if (isCount(count)) reasons[reason] = count;
  }
  const examples: Record<string, readonly string[]> = {};
  const givenExamples = value["examples"];
  if (isObject(givenExamples)) {
    for (const [reason, paths] of Object.entries(givenExamples)) {
      if (Array.isArray(paths)) examples[reason] = paths.filter((path): path is string => typeof path === "string");
    }
  }
  return { count: value["count"], reasons, examples };
}

function parseLookedFor(value: unknown): LayoutLookedFor[] | null {
  if (!Array.isArray(value)) return null;
  return value.flatMap((item) =>
    isObject(item) && typeof item["pattern"] === "string" && typeof item["written_by"] === "string"
      ? [{ pattern: item["pattern"], writtenBy: item["written_by"] }]
      : [],
  );
}

function parseRun(value: unknown): RunInfo | null {
  if (!isObject(value) || typeof value["name"] !== "string") return null;
  const status = parseStatus(value["status"]);
  if (status === null) return null;
  const workers = Array.isArray(value["workers"])
    ? value["workers"].map(parseWorker).filter((worker): worker is WorkerInfo => worker !== null)
    : [];
  const progress = parseProgress(value["progress"]);
  const error = value["error"];
  const framework = value["framework"];
  const snapshots = Array.isArray(value["memory_snapshots"])
    ? value["memory_snapshots"].flatMap((entry): MemorySnapshotInfo[] => {
        if (!isObject(entry) || typeof entry["name"] !== "string") return [];
        const snapshotStatus = parseStatus(entry["status"]) ?? "loading";
        const worker = entry["worker"];
        const span = entry["span"];
        return [{ name: entry["name"], worker: typeof worker === "string" ? worker : null, span: typeof span === "string" ? span : null, status: snapshotStatus }];
      })
    : [];
  return {
    name: value["name"],
    status,
    workers,
    ...(snapshots.length > 0 ? { memorySnapshots: snapshots } : {}),
    ...(progress !== null ? { progress } : {}),
    ...(typeof error === "string" ? { error } : {}),
    ...(typeof framework === "string" ? { framework } : {}),
  };
}

/** Validates a `runs` answer; throws when it is not `{"runs": [...]}` at all. */
export function parseRunsResponse(json: unknown): RunsResponse {
  if (!isObject(json) || !Array.isArray(json["runs"])) {
    throw new Error("the runs answer has no 'runs' list");
  }
  const seen = new Set<string>();
  const runs: RunInfo[] = [];
  for (const entry of json["runs"]) {
    const run = parseRun(entry);
    // Run names are the selection keys: a duplicate would make the pickers ambiguous.
    if (run === null || seen.has(run.name)) continue;
    seen.add(run.name);
    runs.push(run);
  }
  const scanned = json["scanned"];
  const logdirError = json["logdir_error"];
  const skipped = parseSkipped(json["skipped"]);
  const lookedFor = parseLookedFor(json["looked_for"]);
  return {
    runs,
    ...(typeof scanned === "boolean" ? { scanned } : {}),
    ...(typeof logdirError === "string" && logdirError !== "" ? { logdirError } : {}),
    ...(skipped !== null ? { skipped } : {}),
    ...(lookedFor !== null ? { lookedFor } : {}),
  };
}

/** The `error` text of an error body, if it has one. */
export function errorMessageOf(json: unknown): string | null {
  return isObject(json) && typeof json["error"] === "string" ? json["error"] : null;
}
