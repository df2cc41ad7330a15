// The switch to ranks side by side is a button of the trace viewer's toolbar, styled as its other buttons
// (trace/ranks/ranks_mode.ts), shown for runs of several workers only.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { RunInfo } from "../src/api/runs";
import { runWorker } from "./fixtures";
import { PARAM_RANKS, ranksSwitch } from "../src/trace/ranks/ranks_mode";
import type { ViewContext } from "../src/views/types";
import { FakeElement, installFakeDocument } from "./fake_dom";

installFakeDocument();

function context(workers: number, navigated: unknown[][]): Pick<ViewContext, "selection" | "navigate" | "signal"> {
  const run: RunInfo = {
    name: "ddp",
    status: "ready",
    workers: Array.from({ length: workers }, (_, i) => (runWorker(`rank${i}`, ["1"]))),
  };
  return {
    selection: { run, worker: run.workers[0] ?? null, spanIndex: 0 } as unknown as ViewContext["selection"],
    navigate: (...args: unknown[]) => void navigated.push(args),
    signal: new AbortController().signal,
  };
}

describe("ranks side by side switch", () => {
  test("a toolbar button like the viewer's others, that opens the ranks", () => {
    const navigated: unknown[][] = [];
    const button = ranksSwitch(context(2, navigated)) as unknown as FakeElement;
    assert.equal(button.tagName, "button");
    assert.equal(button.className, "ps-trace-button"); // as "Critical path" and "Whole span"
    assert.equal(button.dataset["testid"], "trace-ranks-open");
    assert.equal(button.textContent, "Ranks side by side");
    const [type, listener] = button.listeners[0] ?? [];
    assert.equal(type, "click");
    (listener as () => void)();
    assert.deepEqual(navigated, [["trace", { [PARAM_RANKS]: "step" }]]);
  });

  test("no switch for a run of one worker", () => {
    assert.equal(ranksSwitch(context(1, [])), null);
  });
});
