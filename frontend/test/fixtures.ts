// Reads a JSON fixture of test/fixtures/. Tests run compiled from dist/test/, two levels below
// the frontend folder, hence the path.
import { readFileSync } from "node:fs";
import type { SpanFacts, WorkerInfo } from "../src/api/runs";
import type { Answer, Route } from "../src/api/schema";
import type { TrackInfo } from "../src/api/trace";

export function readFixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url), "utf8"));
}

/**
 * A fixture as the answer of `route`: the fixtures are the backend's own answers on tests/data
 * (scripts/make_frontend_fixtures.py writes them, tests/test_frontend_fixtures.py keeps them current).
 */
export function readAnswer<R extends Route>(route: R, name: string): Answer<R> {
  void route;
  return readFixture(name) as Answer<R>;
}

/** A worker of the run list with its spans; their facts are unknown (not loaded yet) unless given, span by span. */
export function runWorker(name: string, spans: readonly string[], facts: readonly Partial<SpanFacts>[] = []): WorkerInfo {
  return {
    name,
    spans,
    span_info: spans.map((span, i) => ({
      name: span,
      status: "ready",
      file: `${name}.${span}.pt.trace.json`,
      size: 1,
      start_time: null,
      duration: null,
      steps: null,
      device: null,
      ...facts[i],
    })),
  };
}

/** The tracks of the ResNet-50 span's timeline (trace/tracks), as the trace viewer's tests use them. */
export const TRACE_TRACKS: readonly TrackInfo[] = [
  { id: "s4", name: "thread PyTorch Profiler", kind: "cpu", group: "process Traces", maxDepth: 0, unit: "" },
  { id: "s1", name: "thread 25738 (python)", kind: "cpu", group: "python", maxDepth: 7, unit: "" },
  { id: "s3", name: "stream 7", kind: "gpu", group: "GPU 0", maxDepth: 0, unit: "" },
  { id: "s2", name: "thread 25772 (python)", kind: "cpu", group: "python", maxDepth: 4, unit: "" },
  { id: "c:gpu_util:0", name: "GPU 0 utilization", kind: "counter", group: "GPU 0", maxDepth: 0, unit: "fraction" },
];
