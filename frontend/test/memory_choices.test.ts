// The Memory page's choices: read from its URL parameters, and what the memory route is asked for them.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { memoryParams } from "../src/api/memory";
import { ALLOCATION_LIMIT, choicesFromUrl, memoryQuery } from "../src/views/memory/choices";

function url(params: Readonly<Record<string, string>>): { param(name: string): string | null } {
  return { param: (name) => params[name] ?? null };
}

describe("memory choices", () => {
  test("the URL's choices are the route's query", () => {
    const choices = choicesFromUrl(url({ device: "cuda:0", start: "10.5", end: "20", min_bytes: "1048576", name: "aten::conv", op_filter: "relu" }));
    assert.deepEqual(choices, { device: "cuda:0", range: { start: 10.5, end: 20 }, minBytes: 1048576, nameFilter: "aten::conv", opFilter: "relu" });
    assert.deepEqual(memoryQuery(choices), { device: "cuda:0", start: 10.5, end: 20, minBytes: 1048576, name: "aten::conv", limit: ALLOCATION_LIMIT });
    // The operator filter is the table's own: the route is not asked again for it.
    assert.deepEqual(memoryParams(memoryQuery(choices)), memoryParams(memoryQuery({ ...choices, opFilter: "" })));
  });

  test("without parameters (or with unusable ones): every device, no range, every size, no filter", () => {
    for (const params of [{}, { start: "20", end: "10", min_bytes: "7" }]) {
      const choices = choicesFromUrl(url(params));
      assert.deepEqual(choices, { device: "", range: null, minBytes: 0, nameFilter: "", opFilter: "" });
      assert.deepEqual(memoryQuery(choices), { device: "", start: undefined, end: undefined, minBytes: 0, name: "", limit: ALLOCATION_LIMIT });
    }
  });

  test("a choice changed is in the next query", () => {
    const choices = choicesFromUrl(url({}));
    choices.range = { start: 1, end: 2 };
    choices.nameFilter = "mm";
    assert.deepEqual(memoryQuery(choices), { device: "", start: 1, end: 2, minBytes: 0, name: "mm", limit: ALLOCATION_LIMIT });
  });
});
