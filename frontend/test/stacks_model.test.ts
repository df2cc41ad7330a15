import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { buildFlameTree, searchFrames } from "../src/lib/flame_layout";
import { frameHoverText, searchSummaryText, selfTimeByName, topSelfTip } from "../src/views/stacks/model";
import { handMadeFlameGraph } from "./flame_fixture";

// The shared hand-made graph (flame_fixture.ts): all 100 = main 90 (forward 50 → aten::mm 30, backward 30 → aten::mm 20) + idle 10.
const tree = buildFlameTree(handMadeFlameGraph());

describe("the Call stacks page's figures", () => {
  test("self time adds up per name across call paths, largest first", () => {
    const byName = selfTimeByName(tree);
    assert.deepEqual(byName[0], { name: "aten::mm", self: 50, calls: 6 });
    assert.deepEqual(byName.map((entry) => entry.name), ["aten::mm", "forward", "main", "backward", "idle"]);
    assert.equal(byName.reduce((sum, entry) => sum + entry.self, 0), 100);
  });

  test("a frame under the pointer: its total and share of all, self time and calls", () => {
    const forward = tree.names.indexOf("forward");
    const node = Array.from(tree.nameIndex).indexOf(forward);
    const text = frameHoverText(tree, node);
    assert.match(text, /^forward — total /);
    assert.match(text, /\(50(\.0)?%\)/);
    assert.match(text, /, 2 calls$/);
  });

  test("the search's summary: nothing without a search, none matching, or the frames and their share", () => {
    assert.equal(searchSummaryText(null, 100), "");
    assert.equal(searchSummaryText(searchFrames(tree, "nothing like it"), 100), "no frame matches");
    const mm = searchSummaryText(searchFrames(tree, "aten::mm"), 100);
    assert.match(mm, /^2 frames match · .* \(50(\.0)?% of all\)$/);
    assert.match(searchSummaryText(searchFrames(tree, "idle"), 100), /^1 frame match · /);
  });

  test("a top frame's tip names it and its calls", () => {
    const tip = topSelfTip({ name: "aten::mm", self: 50, calls: 6 }, 100);
    assert.match(tip, /^aten::mm\nself .* \(50(\.0)?%\) over 6 calls — click to highlight$/);
  });
});
