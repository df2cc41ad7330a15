import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { flameGraphData } from "../src/api/stacks";
import { STACKS_SOURCES, stacksSourceText } from "../src/lib/analysis_definitions";
import {
  buildFlameTree,
  childrenOf,
  fitLabel,
  focusAfterClick,
  focusAfterKey,
  frameAt,
  frameColor,
  frameName,
  frameTooltipText,
  layoutFlame,
  pathTo,
  searchFrames,
  validFocus,
} from "../src/lib/flame_layout";
import { readAnswer } from "./fixtures";
import { handMadeFlameGraph } from "./flame_fixture";


describe("flame graph tree", () => {
  test("children come from the parent column, largest total first", () => {
    const tree = buildFlameTree(handMadeFlameGraph());
    assert.equal(tree.count, 7);
    assert.deepEqual(Array.from(childrenOf(tree, 0)), [1, 6]);
    assert.deepEqual(Array.from(childrenOf(tree, 1)), [2, 3]);
    assert.equal(tree.maxDepth, 3);
    assert.equal(frameName(tree, 5), "aten::mm");
    assert.deepEqual(pathTo(tree, 5), [0, 1, 3, 5]);
  });

  test("a node whose parent does not come before it is dropped with its subtree", () => {
    const data = flameGraphData({
      weight: "host",
      total: 10,
      names: ["all", "a", "b", "c"],
      nodes: { parent: [-1, 2, 0, 1], name: [0, 1, 2, 3], self: [0, 1, 1, 1], total: [10, 5, 5, 1], calls: [0, 1, 1, 1] },
    });
    const tree = buildFlameTree(data);
    assert.equal(tree.depth[1], -1);
    assert.equal(tree.depth[3], -1, "the child of a dropped node is dropped too");
    assert.deepEqual(Array.from(childrenOf(tree, 0)), [2]);
    assert.deepEqual(
      layoutFlame(tree, 0).frames.map((frame) => frame.node),
      [0, 2],
    );
  });

  test("the real device-weighted ResNet-50 graph: the root's children add up to its total", () => {
    const data = flameGraphData(readAnswer("flamegraph", "flamegraph_resnet_device.json"));
    assert.equal(data.weight, "device");
    // A 2021 trace without Python function events: its frames are the operators' Call stack arguments.
    assert.equal(data.stacksFrom, "call_stacks");
    assert.match(stacksSourceText(data.stacksFrom, data.note) ?? "", /Call stack/);
    const tree = buildFlameTree(data);
    assert.equal(tree.count, data.parent.length);
    assert.equal(frameName(tree, 0), "all");
    let sum = 0;
    for (const child of childrenOf(tree, 0)) sum += tree.total[child] ?? 0;
    assert.ok(Math.abs(sum - data.total) < 1e-6 * data.total);
    // Every frame fits inside its parent, and the top row spans the whole width.
    const layout = layoutFlame(tree, 0);
    const byNode = new Map(layout.frames.map((frame) => [frame.node, frame]));
    for (const frame of layout.frames) {
      const parent = tree.parent[frame.node] ?? -1;
      if (parent < 0) continue;
      const outer = byNode.get(parent)!;
      assert.ok(frame.x >= outer.x - 1e-9 && frame.x + frame.width <= outer.x + outer.width + 1e-9, `node ${frame.node}`);
    }
  });
});

describe("where the Python frames come from", () => {
  test("a sentence per source; with none, the answer's note on how to record them", () => {
    assert.equal(stacksSourceText("python_frames", null), STACKS_SOURCES.python_frames);
    assert.equal(stacksSourceText("call_stacks", null), STACKS_SOURCES.call_stacks);
    const note = "The trace records no Python stacks: only operators and annotations are shown. Record them with torch.profiler.profile(with_stack=True).";
    assert.equal(stacksSourceText("none", note), note);
    assert.equal(stacksSourceText("none", null), STACKS_SOURCES.none);
    assert.equal(stacksSourceText(null, null), null); // an answer that does not say: nothing is claimed
    const older = flameGraphData({ weight: "host", total: 0, names: [], nodes: { parent: [], name: [], self: [], total: [], calls: [] } });
    assert.deepEqual([older.stacksFrom, older.note], [null, null]);
  });
});

describe("flame graph layout", () => {
  test("widths are totals over the root's total; siblings sit side by side", () => {
    const tree = buildFlameTree(handMadeFlameGraph());
    const layout = layoutFlame(tree, 0);
    const frame = (node: number) => layout.frames.find((candidate) => candidate.node === node)!;
    assert.equal(layout.rows, 4);
    assert.deepEqual([frame(1).x, frame(1).width, frame(1).row], [0, 0.9, 1]);
    assert.deepEqual([frame(6).x, frame(6).width], [0.9, 0.1]);
    assert.deepEqual([frame(2).x, frame(2).width, frame(2).row], [0, 0.5, 2]);
    assert.ok(Math.abs(frame(3).x - 0.5) < 1e-12 && Math.abs(frame(3).width - 0.3) < 1e-12);
    assert.ok(Math.abs(frame(5).x - 0.5) < 1e-12 && Math.abs(frame(5).width - 0.2) < 1e-12);
  });

  test("zooming in: the frame fills the width, its ancestors stay above it at full width", () => {
    const tree = buildFlameTree(handMadeFlameGraph());
    const layout = layoutFlame(tree, 3);
    assert.deepEqual(
      layout.frames.map((frame) => [frame.node, frame.x, frame.width, frame.row, frame.ancestor]),
      [
        [0, 0, 1, 0, true],
        [1, 0, 1, 1, true],
        [3, 0, 1, 2, false],
        [5, 0, 20 / 30, 3, false],
      ],
    );
    assert.equal(layout.rows, 4);
    assert.equal(frameAt(layout, 0.1, 3)?.node, 5);
    assert.equal(frameAt(layout, 0.9, 3), null, "right of aten::mm is the backward frame's self time");
    assert.equal(frameAt(layout, 0.5, 0)?.node, 0);
  });

  test("children adding up to more than their parent are scaled to fit", () => {
    const tree = buildFlameTree(
      flameGraphData({
        weight: "host",
        total: 10,
        names: ["all", "a", "b"],
        nodes: { parent: [-1, 0, 0], name: [0, 1, 2], self: [0, 0, 0], total: [10, 8, 12], calls: [0, 1, 1] },
      }),
    );
    const frames = layoutFlame(tree, 0).frames.filter((frame) => frame.row === 1);
    assert.ok(Math.abs(frames.reduce((sum, frame) => sum + frame.width, 0) - 1) < 1e-12);
    assert.ok(Math.abs((frames[0]?.width ?? 0) - 0.6) < 1e-12, "b (12 of 20) comes first");
  });

  test("frames narrower than the minimum are left out with their subtrees", () => {
    const tree = buildFlameTree(handMadeFlameGraph());
    const nodes = layoutFlame(tree, 0, 0.25).frames.map((frame) => frame.node);
    assert.deepEqual(nodes.sort(), [0, 1, 2, 3, 4]);
  });
});

describe("flame graph search, colour and labels", () => {
  test("matches by substring, ignoring case; a match inside a match is counted once in the time", () => {
    const tree = buildFlameTree(handMadeFlameGraph());
    const mm = searchFrames(tree, "ATEN::MM");
    assert.equal(mm.count, 2);
    assert.deepEqual(Array.from(mm.matches), [0, 0, 0, 0, 1, 1, 0]);
    assert.equal(mm.matchedTotal, 50);
    const nested = searchFrames(tree, "a"); // main, forward, backward, aten::mm ×2 (not "all": the root never matches)
    assert.equal(nested.count, 5);
    assert.equal(nested.matchedTotal, 90, "everything under main is inside main");
    assert.equal(searchFrames(tree, "  ").count, 0);
  });

  test("a name always gets the same colour; Python frames and operators get different hue ranges", () => {
    assert.equal(frameColor("aten::mm"), frameColor("aten::mm"));
    assert.notEqual(frameColor("aten::mm"), frameColor("aten::addmm"));
    const hue = (color: string): number => Number(/^hsl\((\d+)/.exec(color)?.[1]);
    assert.ok(hue(frameColor("torch/nn/modules/module.py(1782): _call_impl")) >= 180);
    assert.ok(hue(frameColor("aten::conv2d")) < 60);
  });

  test("labels are cut with an ellipsis to fit, or dropped when too narrow", () => {
    const measure = (text: string): number => text.length * 7;
    assert.equal(fitLabel("aten::mm", 100, measure), "aten::mm");
    assert.equal(fitLabel("aten::convolution", 70, measure), "aten::con…", "9 characters and the ellipsis: 70 px");
    assert.ok(measure(fitLabel("aten::convolution", 70, measure)) <= 70);
    assert.equal(fitLabel("aten::convolution", 15, measure), "");
  });
});

describe("flame graph pointer and keys", () => {
  const tree = buildFlameTree(handMadeFlameGraph());
  const node = (name: string): number => Array.from(tree.nameIndex).indexOf(tree.names.indexOf(name));
  const us = (value: number): string => `${value} us`;

  test("the tooltip: total as a share of all, and of the zoomed frame once zoomed in", () => {
    const forward = node("forward");
    assert.equal(frameTooltipText(tree, forward, 0, us), "forward\nTotal: 50 us (50.0% of all)\nSelf: 20 us\nCalls: 2");
    assert.match(frameTooltipText(tree, forward, node("main"), us).split("\n")[1]!, /^Total: 50 us \(50\.0% of all, 55\.6% of the zoomed frame\)$/);
  });

  test("a click zooms to a frame; on the zoomed frame it goes one level up", () => {
    const main = node("main");
    const forward = node("forward");
    assert.equal(focusAfterClick(tree, forward, 0), forward);
    assert.equal(focusAfterClick(tree, forward, forward), main);
    assert.equal(focusAfterClick(tree, main, forward), main); // an ancestor above it
    assert.equal(validFocus(tree, focusAfterClick(tree, 0, 0)), 0); // the root has no parent: stays at the root
  });

  test("Escape or Home resets, Backspace or ArrowUp goes one level up, other keys are not the graph's", () => {
    const forward = node("forward");
    assert.equal(focusAfterKey(tree, "Escape", forward), 0);
    assert.equal(focusAfterKey(tree, "Home", forward), 0);
    assert.equal(focusAfterKey(tree, "ArrowUp", forward), node("main"));
    assert.equal(focusAfterKey(tree, "Backspace", 0), 0);
    assert.equal(focusAfterKey(tree, "a", forward), null);
    assert.equal(validFocus(tree, tree.count + 3), 0);
  });
});
