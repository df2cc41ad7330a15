import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { criticalPathData, type CriticalPathAnswer, type CriticalPathData } from "../src/api/critical_path";
import type { Tile } from "../src/trace/data/tile_store";
import type { SliceTileData } from "../src/trace/data/tiles";
import { kindRows, longestOnPath, pathMarks, stepAt } from "../src/trace/critical_path";
import { layoutTracks } from "../src/trace/layout";
import { ColorCache, colorForName } from "../src/trace/render/colors";
import { drawFrame, type Canvas2D, type FrameInput } from "../src/trace/render/renderer";
import { TextFitter } from "../src/trace/render/text_fit";
import { Recorder, THEME } from "./canvas_recorder";
import { installFakeDocument, type FakeElement } from "./fake_dom";
import { CriticalPathPanel, EMPTY_PATH } from "../src/trace/panel/critical_path";

interface Row {
  id: number | null;
  name: string | null;
  track: string | null;
  depth: number | null;
  kind: string;
  edge: string;
  start: number;
  end: number;
  time: number;
}

/** Rows as the route's columns (names indexed). */
function columns(rows: Row[]): Record<string, unknown[]> {
  const names: string[] = [];
  const out: Record<string, unknown[]> = { names, id: [], name: [], track: [], depth: [], kind: [], edge: [], start: [], end: [], time: [] };
  for (const row of rows) {
    if (row.name !== null && !names.includes(row.name)) names.push(row.name);
    for (const key of ["id", "track", "depth", "kind", "edge", "start", "end", "time"] as const) out[key]?.push(row[key]);
    out["name"]?.push(row.name === null ? null : names.indexOf(row.name));
  }
  return out;
}

// The route's answer for a step of 100 µs: an operator launches a kernel that ends the step.
const ANSWER = ({
  step: { index: 1, name: "ProfilerStep#2", id: 7, start: 1100, end: 1200 },
  steps: [
    { name: "ProfilerStep#1", start: 1000, end: 1090 },
    { name: "ProfilerStep#2", start: 1100, end: 1200 },
  ],
  length: 100,
  span: { start: 1100, end: 1200 },
  breakdown: [
    { kind: "cpu_op", time: 20, share: 0.2 },
    { kind: "launch", time: 10, share: 0.1 },
    { kind: "kernel", time: 70, share: 0.7 },
    { kind: "copy", time: 0, share: 0 },
    { kind: "sync", time: 0, share: 0 },
    { kind: "idle", time: 0, share: 0 },
  ],
  path: columns([
    { id: 7, name: "ProfilerStep#2", track: "s1", depth: 0, kind: "cpu_op", edge: "nesting", start: 1100, end: 1110, time: 10 },
    { id: 8, name: "aten::mm", track: "s1", depth: 1, kind: "cpu_op", edge: "nesting", start: 1110, end: 1120, time: 10 },
    { id: 9, name: "cudaLaunchKernel", track: "s1", depth: 2, kind: "launch", edge: "launch", start: 1120, end: 1130, time: 10 },
    { id: 10, name: "gemm", track: "s3", depth: 0, kind: "kernel", edge: "duration", start: 1130, end: 1200, time: 70 },
    { id: null, name: null, track: null, depth: null, kind: "idle", edge: "thread", start: 1200, end: 1200.5, time: 0.5 },
  ]),
  ids: [7, 8, 9, 10],
  graph: { slices: 4, edges: 9 },
} as unknown) as CriticalPathAnswer; // its path columns are built from rows

describe("critical path answer", () => {
  test("reads the route's path columns as entries", () => {
    const data = criticalPathData(ANSWER);
    assert.equal(data.index, 1);
    assert.deepEqual(data.step, { name: "ProfilerStep#2", start: 1100, end: 1200 });
    assert.equal(data.stepId, 7);
    assert.equal(criticalPathData({ ...ANSWER, step: { index: 0, name: "span", id: null, start: 0, end: 1 } }).stepId, null);
    assert.equal(data.steps.length, 2);
    assert.equal(data.path.length, 5);
    assert.deepEqual(data.path[1], { id: 8, name: "aten::mm", track: "s1", depth: 1, kind: "cpu_op", edge: "nesting", start: 1110, end: 1120, time: 10 });
    assert.equal(data.path[4]?.id, null);
    assert.equal(data.path[4]?.name, null);
    assert.deepEqual(data.ids, [7, 8, 9, 10]);
  });

  test("the step in view: the one holding the centre, else the nearest", () => {
    const steps = criticalPathData(ANSWER).steps;
    assert.equal(stepAt(steps, 1050), 0);
    assert.equal(stepAt(steps, 1150), 1);
    assert.equal(stepAt(steps, 1094), 0, "between steps: the nearer one");
    assert.equal(stepAt(steps, 1097), 1);
    assert.equal(stepAt(steps, 5000), 1);
    assert.equal(stepAt([], 5), -1);
  });

  test("breakdown rows keep the backend's order and leave out empty kinds", () => {
    const rows = kindRows(criticalPathData(ANSWER));
    assert.deepEqual(rows.map((row) => [row.kind, row.time, row.share]), [["cpu_op", 20, 0.2], ["launch", 10, 0.1], ["kernel", 70, 0.7]]);
    assert.equal(rows[0]?.label, "CPU operator");
  });

  test("path marks: the stretches on slices as offsets, none for time on no slice", () => {
    const marks = pathMarks(criticalPathData(ANSWER), 1000);
    assert.equal(marks.length, 4, "no mark for time on no slice");
    assert.deepEqual(marks[1], { trackId: "s1", depth: 1, start: 110, end: 120 });
    assert.deepEqual(marks[3], { trackId: "s3", depth: 0, start: 130, end: 200 });
  });

  test("longest on the path: by slice, time added up, no time on no slice, no idle gaps, not the step's range", () => {
    const path = criticalPathData(ANSWER).path.map((entry) => ({ ...entry }));
    path.push({ id: 8, name: "aten::mm", track: "s1", depth: 1, kind: "cpu_op", edge: "return", start: 1190, end: 1200, time: 10 });
    // The step's own range (id 7): 90 us between its operators, none of them its work.
    path.push({ id: 7, name: "ProfilerStep#2", track: "s1", depth: 0, kind: "cpu_op", edge: "return", start: 1200, end: 1290, time: 90 });
    // An idle gap on the stream next to slice 10: not the slice's own time.
    path.push({ id: 10, name: "kernel", track: "s3", depth: 0, kind: "idle", edge: "stream", start: 1200, end: 1300, time: 100 });
    const data: CriticalPathData = { ...criticalPathData(ANSWER), path };
    const longest = longestOnPath(data, 3);
    assert.deepEqual(longest.map((entry) => [entry.id, entry.time]), [[10, 70], [8, 20], [9, 10]]);
    assert.ok(longest.every((entry) => entry.kind !== "idle"));
    // A span without steps has no step range to leave out.
    assert.deepEqual(longestOnPath({ ...data, stepId: null }, 1).map((entry) => [entry.id, entry.time]), [[7, 100]]);
  });
});

function tile(): Tile<SliceTileData> {
  return {
    key: "k",
    window: { startNs: 0, endNs: 1_000_000, resolutionNs: 1024, widthPx: 1000 },
    tracks: ["s1"],
    data: {
      names: ["on path", "off path"],
      resolutionUs: 1.024,
      tracks: new Map([
        [
          "s1",
          {
            slices: { id: new Float64Array([7, 8]), start: new Float64Array([100, 500]), dur: new Float64Array([300, 300]), depth: new Int32Array([0, 0]), name: new Int32Array([0, 1]) },
            blocks: { start: new Float64Array(0), end: new Float64Array(0), depth: new Int32Array(0), count: new Float64Array(0) },
          },
        ],
      ]),
    },
  };
}

function draw(highlight: ReadonlySet<number> | null, marks: FrameInput["pathMarks"] = null): Recorder {
  const ctx = new Recorder();
  const input: FrameInput = {
    width: 1200, height: 300, dpr: 1, headerWidth: 200, axisHeight: 26, view: { start: 0, end: 1000 }, scrollTop: 0,
    layout: layoutTracks([{ id: "s1", name: "thread 1", kind: "cpu", group: "python", maxDepth: 0, unit: "" }], new Set()),
    slices: tile(), counters: null, selected: null, hovered: null, match: null, flows: [], range: null, highlight, pathMarks: marks, loading: false, theme: THEME,
  };
  const measure = (text: string): number => text.length * 6;
  drawFrame(ctx as unknown as Canvas2D, input, { colors: new ColorCache(), labelText: new TextFitter(measure), headerText: new TextFitter(measure) });
  return ctx;
}

describe("critical path highlight", () => {
  test("slices on the path keep their colours and labels; the others are dimmed and unlabelled", () => {
    const ctx = draw(new Set([7]));
    const fillOf = (x: number): unknown => ctx.calls.find((call) => call.op === "rect" && call.args[0] === x)?.fill;
    assert.equal(fillOf(300), colorForName("on path"));
    assert.equal(fillOf(700), "DIM");
    const texts = ctx.calls.filter((call) => call.op === "fillText").map((call) => call.args[0]);
    assert.ok(texts.includes("on path") && !texts.includes("off path"));
  });

  test("the path is underlined on its rows, at least a pixel wide, only in view", () => {
    const ctx = draw(new Set([7]), [
      { trackId: "s1", depth: 0, start: 100, end: 400 },
      { trackId: "s1", depth: 0, start: 450, end: 450.1 },
      { trackId: "s1", depth: 0, start: 5000, end: 6000 },
      { trackId: "nope", depth: 0, start: 100, end: 200 },
    ]);
    const underlines = ctx.calls.filter((call) => call.op === "rect" && call.fill === THEME.accent && call.args[3] === 3);
    assert.deepEqual(underlines.map((call) => [call.args[0], call.args[2], call.args[3]]), [[300, 300, 3], [650, 1, 3]]);
  });

  test("without a path nothing is dimmed", () => {
    const ctx = draw(null);
    assert.ok(!ctx.calls.some((call) => call.fill === "DIM"));
  });
});

describe("critical path panel", () => {
  const callbacks = { showStep: () => {}, zoomToStep: () => {}, select: () => {}, close: () => {} };

  test("lists the slices longest on the path, not the step's own range", () => {
    installFakeDocument();
    const panel = new CriticalPathPanel(callbacks, 1000);
    panel.show(criticalPathData(ANSWER));
    const root = panel.root as unknown as FakeElement;
    const ids: string[] = [];
    const collect = (node: FakeElement): void => {
      if (node.tagName === "tr" && node.getAttribute("data-id") !== null) ids.push(node.getAttribute("data-id") ?? "");
      node.children.forEach(collect);
    };
    collect(root.findByTestId("trace-critical-path-longest") as FakeElement);
    assert.deepEqual(ids, ["10", "8", "9"], "slice 7 is the step's own range");
    assert.equal(root.findByTestId("trace-critical-path-empty"), null);
  });

  test("says so when the path is empty", () => {
    installFakeDocument();
    const panel = new CriticalPathPanel(callbacks, 0);
    const empty = { ...ANSWER, length: 0, breakdown: ANSWER.breakdown.map((row) => ({ ...row, time: 0, share: 0 })), path: columns([]), ids: [] };
    panel.show(criticalPathData(empty as unknown as CriticalPathAnswer));
    const root = panel.root as unknown as FakeElement;
    assert.equal(root.dataset["state"], "ready");
    assert.equal(root.findByTestId("trace-critical-path-empty")?.textContent, EMPTY_PATH);
    assert.equal(root.findByTestId("trace-critical-path-longest"), null);
    assert.equal(root.findByTestId("trace-critical-path-breakdown"), null);
  });
});
