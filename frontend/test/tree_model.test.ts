import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApiClient } from "../src/api/client";
import { foldedStacksUrl } from "../src/api/stacks";
import { allParents, expandedToDepth, flattenTree, indexTree } from "../src/lib/tree_model";
import { moduleValues } from "../src/views/modules/modules";
import { readAnswer } from "./fixtures";

//  0 model
//  ├─ 1 encoder
//  │  ├─ 3 layer0
//  │  │  └─ 5 attention
//  │  └─ 4 layer1
//  └─ 2 head
const PARENTS = [-1, 0, 0, 1, 1, 3];

describe("tree flattening", () => {
  test("collapsed: only the roots; expanded nodes show their children right after them, indented", () => {
    const index = indexTree(PARENTS);
    assert.deepEqual(flattenTree(index, new Set()), [{ node: 0, depth: 0, hasChildren: true, expanded: false }]);
    const rows = flattenTree(index, new Set([0, 1]));
    assert.deepEqual(
      rows.map((row) => [row.node, row.depth, row.hasChildren, row.expanded]),
      [
        [0, 0, true, true],
        [1, 1, true, true],
        [3, 2, true, false],
        [4, 2, false, false],
        [2, 1, false, false],
      ],
    );
  });

  test("an expanded node under a collapsed one stays hidden", () => {
    const rows = flattenTree(indexTree(PARENTS), new Set([0, 3]));
    assert.deepEqual(rows.map((row) => row.node), [0, 1, 2]);
  });

  test("siblings sort by the comparator, children stay under their parent", () => {
    const time = [100, 60, 40, 20, 35, 15];
    const rows = flattenTree(indexTree(PARENTS), allParents(indexTree(PARENTS)), (a, b) => (time[b] ?? 0) - (time[a] ?? 0));
    assert.deepEqual(rows.map((row) => row.node), [0, 1, 4, 3, 5, 2]);
  });

  test("expanding to a depth opens every node above it; a bad parent makes a root", () => {
    const index = indexTree(PARENTS);
    assert.deepEqual([...expandedToDepth(index, 1)], [0]);
    assert.deepEqual([...expandedToDepth(index, 2)].sort(), [0, 1]);
    assert.deepEqual([...allParents(index)].sort(), [0, 1, 3]);
    assert.deepEqual(indexTree([-1, 0, 5, 1]).roots, [0, 2]);
  });

  test("deep trees do not overflow the stack", () => {
    const parents = Array.from({ length: 50_000 }, (_, i) => i - 1);
    const index = indexTree(parents);
    const rows = flattenTree(index, allParents(index));
    assert.equal(rows.length, 50_000);
    assert.equal(rows[49_999]?.depth, 49_999);
  });
});

describe("modules answer", () => {
  test("the real transformer modules: the root shows the sum of the top-level modules", () => {
    const data = readAnswer("modules", "modules_transformer.json");
    assert.equal(data.available, true);
    const nodes = data.nodes!;
    assert.equal(nodes.name[0], "(model)");
    assert.equal(nodes.name.length, 23);
    const index = indexTree(nodes.parent);
    const values = moduleValues(nodes, index);
    const topLevel = index.children[0] ?? [];
    assert.deepEqual(topLevel.map((node) => nodes.name[node]), ["TinyEncoder_0"]);
    assert.equal(values.forward_host[0], nodes.forward_host[topLevel[0]!]);
    // A module's forward time includes its children's: no child takes longer than its parent.
    nodes.parent.forEach((parent, node) => {
      if (parent > 0) assert.ok((nodes.forward_host[node] ?? 0) <= (nodes.forward_host[parent] ?? 0) + 1e-6, nodes.name[node]);
    });
  });

  test("the folded stacks download carries the span and the weight", () => {
    const api = new ApiClient("http://h/prefix/data/plugin/profscope/");
    const url = new URL(foldedStacksUrl(api, { run: "a b/c", worker: "w0", span: "17" }, "device"));
    assert.equal(url.pathname, "/prefix/data/plugin/profscope/stacks/folded");
    assert.deepEqual(Object.fromEntries(url.searchParams), { run: "a b/c", worker: "w0", span: "17", weight: "device" });
  });
});
