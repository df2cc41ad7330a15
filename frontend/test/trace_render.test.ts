import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { TrackInfo } from "../src/api/trace";
import type { Tile } from "../src/trace/data/tile_store";
import type { SliceTileData } from "../src/trace/data/tiles";
import { layoutTracks } from "../src/trace/layout";
import { ColorCache, colorForName, colorKey, fnv1a } from "../src/trace/render/colors";
import { drawFrame, MIN_LABEL_PX, type Canvas2D, type FrameInput } from "../src/trace/render/renderer";
import { ELLIPSIS, TextFitter } from "../src/trace/render/text_fit";
import { Recorder, THEME } from "./canvas_recorder";

describe("colours", () => {
  test("FNV-1a matches the reference values", () => {
    assert.equal(fnv1a(""), 0x811c9dc5);
    assert.equal(fnv1a("a"), 0xe40c292c);
    assert.equal(fnv1a("foobar"), 0xbf9cf968);
  });

  test("a name always gets the same colour; numbers do not change it", () => {
    assert.equal(colorForName("aten::conv2d"), colorForName("aten::conv2d"));
    assert.equal(colorKey("ProfilerStep#12"), "ProfilerStep#");
    assert.equal(colorForName("ProfilerStep#3"), colorForName("ProfilerStep#4"));
    assert.match(colorForName("x"), /^hsl\(\d+ \d+% \d+%\)$/);
  });

  test("different names mostly get different colours", () => {
    const names = ["aten::conv2d", "aten::add", "aten::relu", "cudaLaunchKernel", "aten::mm", "Optimizer.step", "aten::batch_norm", "aten::copy_"];
    assert.ok(new Set(names.map(colorForName)).size >= names.length - 1);
  });

  test("the cache answers like the function and stays bounded", () => {
    const cache = new ColorCache(3);
    for (const name of ["a", "b", "c", "d", "e"]) assert.equal(cache.get(name), colorForName(name));
  });
});

describe("text fitting", () => {
  /** A monospace stand-in: 6 px per character. */
  function fitter(calls: string[] = []): TextFitter {
    return new TextFitter((text) => {
      calls.push(text);
      return text.length * 6;
    });
  }

  test("keeps text that fits, cuts the rest with an ellipsis, drops what cannot fit", () => {
    const fit = fitter();
    assert.equal(fit.fit("aten::add", 100), "aten::add");
    const cut = fit.fit("aten::convolution_backward", 60);
    assert.equal(cut, "aten::con" + ELLIPSIS);
    assert.ok((cut?.length ?? 0) * 6 <= 60);
    assert.equal(fit.fit("aten::convolution_backward", 20), null);
    assert.equal(fit.fit("", 100), null);
  });

  test("widths are measured once", () => {
    const calls: string[] = [];
    const fit = fitter(calls);
    fit.fit("void implicit_convolve_sgemm<float>", 90);
    const first = calls.length;
    fit.fit("void implicit_convolve_sgemm<float>", 90);
    assert.equal(calls.length, first);
  });
});

const TRACKS: TrackInfo[] = [
  { id: "s1", name: "thread 1", kind: "cpu", group: "python", maxDepth: 1, unit: "" },
  { id: "s3", name: "stream 7", kind: "gpu", group: "GPU 0", maxDepth: 0, unit: "" },
];

function sliceTile(): Tile<SliceTileData> {
  const names = ["wide op", "tiny op", "off screen", "kernel"];
  return {
    key: "k",
    window: { startNs: 0, endNs: 10_000_000, resolutionNs: 1024, widthPx: 10_000 },
    tracks: ["s1", "s3"],
    data: {
      names,
      resolutionUs: 1.024,
      tracks: new Map([
        [
          "s1",
          {
            slices: {
              id: new Float64Array([1, 2, 3]),
              start: new Float64Array([100, 300, 5000]),
              dur: new Float64Array([400, 2, 100]),
              depth: new Int32Array([0, 1, 0]),
              name: new Int32Array([0, 1, 2]),
            },
            blocks: { start: new Float64Array([600]), end: new Float64Array([700]), depth: new Int32Array([0]), count: new Float64Array([25]) },
          },
        ],
        [
          "s3",
          {
            slices: { id: new Float64Array([4]), start: new Float64Array([150]), dur: new Float64Array([300]), depth: new Int32Array([0]), name: new Int32Array([3]) },
            blocks: { start: new Float64Array(0), end: new Float64Array(0), depth: new Int32Array(0), count: new Float64Array(0) },
          },
        ],
      ]),
    },
  };
}

function frame(overrides: Partial<FrameInput> = {}): FrameInput {
  return {
    width: 1200, height: 400, dpr: 1, headerWidth: 200, axisHeight: 26,
    view: { start: 0, end: 1000 }, // 1 px per µs over the 1000 px timeline
    scrollTop: 0, layout: layoutTracks(TRACKS, new Set()), slices: sliceTile(), counters: null,
    selected: null, hovered: null, match: null, flows: [], range: null, loading: false, theme: THEME,
    ...overrides,
  };
}

function resources() {
  const measure = (text: string): number => text.length * 6;
  return { colors: new ColorCache(), labelText: new TextFitter(measure), headerText: new TextFitter(measure) };
}

describe("renderer", () => {
  test("draws visible slices batched by colour, culls the rest, labels what fits", () => {
    const ctx = new Recorder();
    const stats = drawFrame(ctx as unknown as Canvas2D, frame(), resources());
    assert.equal(stats.slices, 3, "the slice at 5000 µs is off screen");
    assert.equal(stats.blocks, 1);
    const rects = ctx.calls.filter((call) => call.op === "rect" && call.fill !== "" );
    const wide = rects.find((call) => call.args[0] === 300 && call.args[2] === 400);
    assert.ok(wide !== undefined, "the 400 µs slice is 400 px wide at 1 px/µs, from x = 200 + 100");
    // One fill per colour: three slice colours and the block pattern.
    const fills = ctx.calls.filter((call) => call.op === "fill").map((call) => call.fill);
    assert.equal(new Set(fills).size, fills.length, "each paint is filled once");
    assert.ok(fills.includes(colorForName("wide op")) && fills.includes("BLOCK"));
    const texts = ctx.calls.filter((call) => call.op === "fillText").map((call) => call.args[0]);
    assert.ok(texts.includes("wide op") && texts.includes("kernel"));
    assert.ok(!texts.includes("tiny op"), `a 2 px slice gets no label (min ${MIN_LABEL_PX} px)`);
    assert.ok(!texts.includes("off screen"));
    assert.ok(texts.includes("thread 1") && texts.includes("python (1)"), "track and group headers");
  });

  test("tracks without data show the loading placeholder; nothing else is invented", () => {
    const ctx = new Recorder();
    const stats = drawFrame(ctx as unknown as Canvas2D, frame({ slices: null }), resources());
    assert.equal(stats.slices, 0);
    const placeholders = ctx.calls.filter((call) => call.op === "fill" && call.fill === "PLACEHOLDER");
    assert.equal(placeholders.length, 1);
  });

  test("where a tile does not reach, the view shows the placeholder beside the data", () => {
    const ctx = new Recorder();
    const tile = sliceTile();
    const partial = { ...tile, window: { ...tile.window, endNs: 500_000 } }; // data up to 500 µs
    drawFrame(ctx as unknown as Canvas2D, frame({ slices: partial }), resources());
    const placeholderRects = ctx.calls.filter((call) => call.op === "rect" && call.fill === "PLACEHOLDER");
    assert.ok(placeholderRects.length >= 2 && placeholderRects.every((call) => call.args[0] === 700));
  });

  test("a scrolled-away track is not drawn; selection, match and flows are outlined", () => {
    const ctx = new Recorder();
    const layout = layoutTracks(TRACKS, new Set());
    const stats = drawFrame(
      ctx as unknown as Canvas2D,
      frame({
        scrollTop: 70, // past the python group: its header (22) and thread (2 rows = 42)
        selected: { trackId: "s3", start: 150, dur: 300, depth: 0 },
        match: { trackId: "s3", start: 150, dur: 300, depth: 0 },
        flows: [{ from: { trackId: "s1", depth: 1, time: 120 }, to: { trackId: "s3", depth: 0, time: 150 } }],
        layout,
      }),
      resources(),
    );
    assert.equal(stats.slices, 1, "only the GPU kernel row is in view");
    assert.equal(ctx.calls.filter((call) => call.op === "strokeRect").length, 2);
    assert.equal(ctx.calls.filter((call) => call.op === "bezierCurveTo").length, 1);
  });

  test("a collapsed group hides its tracks and asks nothing of them", () => {
    const ctx = new Recorder();
    const stats = drawFrame(ctx as unknown as Canvas2D, frame({ layout: layoutTracks(TRACKS, new Set(["python"])) }), resources());
    assert.equal(stats.slices, 1);
    const texts = ctx.calls.filter((call) => call.op === "fillText").map((call) => call.args[0]);
    assert.ok(!texts.includes("thread 1"));
  });

  test("the measured range shows its duration on the axis", () => {
    const ctx = new Recorder();
    drawFrame(ctx as unknown as Canvas2D, frame({ range: { start: 100, end: 350 } }), resources());
    const texts = ctx.calls.filter((call) => call.op === "fillText").map((call) => call.args[0]);
    assert.ok(texts.includes("250 µs"));
  });
});
