// Span names for people: start time of day, steps and length from the runs answer's span_info.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { spanFacts } from "../src/api/runs";
import { spanFactsText, spanOptionLabel, spanOptionTitle, stepRangeText } from "../src/lib/span_names";
import { runWorker } from "./fixtures";

// Local wall time, so the test holds in any time zone.
const START = new Date(2026, 10, 21, 14, 3, 27).getTime() / 1000;

describe("span names", () => {
  test("a span's facts are its span_info entry (in the order of spans); none beyond the worker's spans", () => {
    const worker = runWorker("w", ["b", "a"], [{ duration: 7 }, { duration: 5 }]);
    assert.deepEqual([0, 1].map((index) => spanFacts(worker, index)?.duration), [7, 5]);
    assert.equal(spanFacts(worker, 2), null);
    assert.equal(spanFacts(null, 0), null);
  });

  test("label: time of day, step range, length; the id stays in the tooltip", () => {
    const facts = { start_time: START, duration: 18_700_000, steps: { count: 3, first: 2, last: 4 }, device: null };
    assert.equal(spanOptionLabel(0, 2, "1795504203860885393", facts), "span 1 of 2 · 14:03:27 · steps 2–4 · 18.7 s");
    assert.equal(spanOptionLabel(0, 1, "x", facts), "14:03:27 · steps 2–4 · 18.7 s");
    assert.equal(spanOptionTitle("1795504203860885393", facts), "started 2026-11-21 14:03:27 · id 1795504203860885393");
    assert.equal(stepRangeText({ count: 1, first: 7, last: 7 }), "step 7");
    assert.equal(stepRangeText({ count: 2, first: null, last: null }), "2 steps");
    assert.equal(spanFactsText({ start_time: null, duration: null, steps: null, device: null }), null);
    // The steps every page counts, and how many of the trace's are left out (the Overview says why).
    const cut = spanFacts(runWorker("w", ["a"], [{ steps: { count: 12, first: 0, last: 11, left_out: 1 } }]), 0);
    assert.equal(stepRangeText(cut?.steps ?? null), "steps 0–11 (1 left out)");
    assert.equal(stepRangeText({ count: 12, first: 0, last: 11, left_out: 0 }), "steps 0–11");
  });

  test("without facts: the time a timestamp name stands for, else the id", () => {
    const fromName = spanOptionLabel(1, 2, String(Math.round(START * 1000)), undefined);
    assert.equal(fromName, "span 2 of 2 · 14:03:27");
    assert.equal(spanOptionLabel(0, 1, "train_a", undefined), "train_a");
    assert.equal(spanOptionTitle("train_a", undefined), "id train_a");
  });
});
