import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApiClient, type FetchLike } from "../src/api/client";
import {
  argText,
  charactersCut,
  fetchEventDetail,
  fetchSlices,
  countersData,
  eventDetail,
  tracksData,
  traceDownloadUrl,
  type EventBrief,
  type SearchPage,
} from "../src/api/trace";
import type { ApiResult } from "../src/api/types";
import { pageOffsetOf, searchCounter, TraceSearch, wrapIndex, type SearchState } from "../src/trace/search";
import { formatTraceTime, initialView } from "../src/trace/url_params";
import { eventIdParam, numberParam } from "../src/views/trace/trace";

const REF = { run: "group/resnet", worker: "worker0", span: "1623143089861" };

describe("trace API answers", () => {
  test("tracks: order kept, depth bounded", () => {
    const data = tracksData({
      start: 10,
      end: 20,
      tracks: [
        { id: "s1", name: "thread 1", kind: "cpu", group: "python", max_depth: 7, pid: "1", tid: "1", device: null },
        { id: "s3", name: "stream 7", kind: "gpu", group: "GPU 0", max_depth: 1e9 },
        { id: "c:mem:1:0", name: "GPU 0 memory", kind: "counter", group: "Memory", unit: "bytes", series: ["allocated", "reserved"], max_depth: 0 },
      ],
    });
    assert.deepEqual(data.tracks.map((track) => track.id), ["s1", "s3", "c:mem:1:0"]);
    assert.equal(data.tracks[1]?.maxDepth, 255);
    assert.equal(data.tracks[0]?.unit, "");
    assert.equal(data.tracks[2]?.unit, "bytes");
  });

  test("counters: series by name with typed columns", () => {
    const data = countersData({
      start: 0, end: 10, resolution: 2,
      tracks: [{ id: "c:gpu_util:0", series: { utilization: { time: [0, 2], mean: [0.5, 1], min: [0, 1], max: [1, 1] } } }],
    });
    assert.equal(data.tracks.length, 1);
    const series = data.tracks[0]?.series.get("utilization");
    assert.ok(series instanceof Object && series.mean instanceof Float64Array);
    assert.deepEqual([...(series?.mean ?? [])], [0.5, 1]);
  });

  test("event details: links, flows, args as text; hostile names stay text", () => {
    const brief = { id: 775, name: "aten::cudnn_convolution", track: "s1", start: 1623142623540591.0, dur: 150, depth: 4 };
    const detail = eventDetail({
      id: 36749, name: "<img src=x onerror=alert(1)>", cat: "Kernel", track: "s3", start: 1623142623541433.0, dur: 650, depth: 0,
      end: 1623142623542083.0, thread: "stream 7", process: "GPU 0", kind: "gpu",
      args: { "External id": 777, grid: "[1568,1,1]" },
      stack: ["a.py(1): f"], ancestors: [brief],
      flows: [{ cat: "async", direction: "in", other: { ...brief, id: 36751, name: "cudaLaunchKernel" } }],
      launched_by: { ...brief, id: 36751, name: "cudaLaunchKernel" }, operator: brief, launches: [], bandwidth: null,
    });
    assert.equal(detail.name, "<img src=x onerror=alert(1)>");
    assert.deepEqual(detail.args, [["External id", "777"], ["grid", "[1568,1,1]"]]);
    assert.deepEqual(detail.stack, ["a.py(1): f"]);
    assert.equal(detail.ancestors.length, 1);
    assert.equal(detail.flows.length, 1);
    assert.equal(detail.flows[0]?.direction, "in");
    assert.equal(detail.operator?.name, "aten::cudnn_convolution");
    assert.equal(detail.launchedBy?.id, 36751);
    assert.equal(argText("plain"), "plain");
    assert.equal(argText({ a: [1, 2] }), '{"a":[1,2]}');
  });

  test("windows and downloads go to the span's routes", async () => {
    const seen: string[] = [];
    const fetchImpl: FetchLike = async (url) => {
      seen.push(url);
      return new Response(JSON.stringify({ start: 1, end: 2, resolution: 1, names: [], tracks: [] }), { status: 200 });
    };
    const api = new ApiClient("http://h/data/plugin/profscope/", fetchImpl);
    const result = await fetchSlices(api, REF, { start: 1623142623460016.2, end: 1623142624633484, width: 2000, tracks: ["s1", "s3"] });
    assert.equal(result.kind, "ok");
    const url = new URL(seen[0] ?? "");
    assert.equal(url.pathname, "/data/plugin/profscope/trace/slices");
    assert.equal(url.searchParams.get("start"), "1623142623460016.2");
    assert.equal(url.searchParams.get("tracks"), "s1,s3");
    assert.equal(url.searchParams.get("run"), "group/resnet");
    assert.equal(
      traceDownloadUrl(api, REF),
      "http://h/data/plugin/profscope/trace/download?run=group%2Fresnet&worker=worker0&span=1623143089861",
    );
  });
});

describe("texts the backend cut", () => {
  test("a cut name says how many characters are missing; a whole one does not", () => {
    const cut = `aten::${"n".repeat(65_530)}… (199,934,470 more characters)`;
    assert.equal(charactersCut(cut), 199_934_470);
    assert.equal(charactersCut("x… (5 more characters)"), 5);
    assert.equal(charactersCut("aten::mm"), null);
    assert.equal(charactersCut("a name … (about 3 more characters)"), null);
    assert.equal(charactersCut("… (0 more characters)"), null);
  });

  test("the whole texts are asked with full_text=1, the cut ones without", async () => {
    const seen: string[] = [];
    const fetchImpl: FetchLike = async (url) => {
      seen.push(url);
      const answer = {
        id: 7, name: "n", track: "s1", start: 1, dur: 2, depth: 0, cat: "cpu_op", end: 3, thread: "t", process: "p", kind: "cpu",
        args: {}, stack: [], ancestors: [], flows: [], launched_by: null, operator: null, launches: [],
      };
      return new Response(JSON.stringify(answer), { status: 200 });
    };
    const api = new ApiClient("http://h/data/plugin/profscope/", fetchImpl);
    const whole = await fetchEventDetail(api, REF, 7, undefined, true);
    await fetchEventDetail(api, REF, 7);
    assert.equal(whole.kind, "ok");
    assert.equal(new URL(seen[0] ?? "").searchParams.get("full_text"), "1");
    assert.equal(new URL(seen[1] ?? "").searchParams.has("full_text"), false);
  });
});

describe("URL parameters", () => {
  test("trace times round-trip through the URL", () => {
    assert.equal(formatTraceTime(1623142623460016.2), "1623142623460016.2");
    assert.equal(formatTraceTime(81416.80000001), "81416.8");
    assert.equal(numberParam("1623142623460016.2"), 1623142623460016.2);
    assert.equal(numberParam("abc"), null);
    assert.equal(numberParam(""), null);
    assert.equal(eventIdParam("36749"), 36749);
    assert.equal(eventIdParam("-1"), null);
    assert.equal(eventIdParam("1.5"), null);
  });

  test("the first window comes from the URL when valid, else the whole span", () => {
    const start = 1623142623460016.2;
    const end = 1623142624633484.0;
    const view = initialView(start, end, start + 1000, start + 3000);
    assert.ok(Math.abs(view.start - 1000) < 0.25 && Math.abs(view.end - 3000) < 0.25);
    assert.deepEqual(initialView(start, end, null, null), { start: 0, end: end - start });
    assert.deepEqual(initialView(start, end, start + 3000, start + 1000), { start: 0, end: end - start });
    const outside = initialView(start, end, start - 5000, start + 1000);
    assert.equal(outside.start, 0);
  });
});

function brief(id: number): EventBrief {
  return { id, name: `m${id}`, track: "s1", start: id, dur: 1, depth: 0 };
}

describe("search", () => {
  test("indexes wrap and pages are found", () => {
    assert.equal(wrapIndex(0, -1, 5), 4);
    assert.equal(wrapIndex(4, 1, 5), 0);
    assert.equal(wrapIndex(0, 1, 0), -1);
    assert.equal(pageOffsetOf(0), 0);
    assert.equal(pageOffsetOf(250), 200);
  });

  test("walks through all matches, fetching the page that holds the next", async () => {
    const total = 150;
    const asked: number[] = [];
    const jumps: number[] = [];
    const states: SearchState[] = [];
    const search = new TraceSearch(
      async (query, offset, limit): Promise<ApiResult<SearchPage>> => {
        asked.push(offset);
        const matches = [];
        for (let i = offset; i < Math.min(total, offset + limit); i++) matches.push(brief(i));
        return { kind: "ok", data: { query, total, offset, matches } };
      },
      (state, jump) => {
        states.push(state);
        if (jump && state.current !== null) jumps.push(state.current.id);
      },
    );
    await search.search("  m ");
    assert.equal(search.state.query, "m");
    assert.equal(searchCounter(search.state), "1 / 150");
    await search.step(-1, "m"); // wraps to the last match, on the second page
    assert.equal(search.state.index, 149);
    assert.deepEqual(asked, [0, 100]);
    await search.step(1, "m"); // back to the first: page 0 is cached
    assert.deepEqual(asked, [0, 100]);
    assert.deepEqual(jumps, [0, 149, 0]);
    await search.step(1, "other"); // a new query starts over
    assert.deepEqual(asked, [0, 100, 0]);
    await search.search("");
    assert.equal(searchCounter(search.state), "");
    assert.ok(states.some((state) => state.status === "searching"));
  });

  test("a cleared or changed search box ends the search: no count, no highlight, the match to unselect", async () => {
    const states: SearchState[] = [];
    const search = new TraceSearch(
      async (query, offset): Promise<ApiResult<SearchPage>> => ({ kind: "ok", data: { query, total: 2724, offset, matches: [brief(offset), brief(offset + 1)] } }),
      (state) => states.push(state),
    );
    await search.search("nccl");
    await search.step(1, "nccl");
    assert.equal(searchCounter(search.state), "2 / 2724");
    // The same text (a space typed after it) changes nothing.
    assert.equal(search.edited("nccl "), null);
    assert.equal(searchCounter(search.state), "2 / 2724");
    // Emptied: back to idle, and the current match is handed back to be unselected.
    assert.equal(search.edited("")?.id, 1);
    assert.equal(searchCounter(search.state), "");
    assert.equal(search.state.current, null); // the viewer's highlight follows state.current
    assert.equal(states.at(-1)?.status, "idle");
    // Another text: the old count goes, nothing is unselected, Enter searches the new text.
    await search.search("nccl");
    assert.equal(search.edited("ncclKernel"), null);
    assert.equal(searchCounter(search.state), "");
    await search.step(1, "ncclKernel");
    assert.equal(search.state.query, "ncclKernel"); // a new search
    assert.equal(searchCounter(search.state), "1 / 2724");
    // Nothing searched yet: nothing to end.
    const idle = new TraceSearch(async () => ({ kind: "error", status: 500, message: "never asked" }), () => undefined);
    assert.equal(idle.edited(""), null);
  });

  test("no matches and errors are said, not thrown", async () => {
    const empty = new TraceSearch(async (query, offset) => ({ kind: "ok", data: { query, total: 0, offset, matches: [] } }), () => undefined);
    await empty.search("zzz");
    assert.equal(searchCounter(empty.state), "no matches");
    const failing = new TraceSearch(async () => ({ kind: "error", status: 500, message: "boom" }), () => undefined);
    await failing.search("x");
    assert.equal(searchCounter(failing.state), "boom");
  });
});
