// Span names for people: start time of day, steps and length from the runs answer's span_info.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseRunsResponse, parseSpanFacts } from "../src/api/parse";
import { spanFactsText, spanOptionLabel, spanOptionTitle, stepRangeText } from "../src/lib/span_names";

// Local wall time, so the test holds in any time zone.
const START = new Date(2026, 10, 21, 14, 3, 27).getTime() / 1000;

describe("span names", () => {
  test("parse span_info facts; unknown parts are null", () => {
    assert.deepEqual(parseSpanFacts({ start_time: START, duration: 18_700_000, steps: { count: 3, first: 2, last: 4 } }), {
      startTime: START,
      duration: 18_700_000,
      steps: { count: 3, first: 2, last: 4 },
    });
    assert.deepEqual(parseSpanFacts({ start_time: "x", steps: { first: 1 } }), { startTime: null, duration: null, steps: null });
    const runs = parseRunsResponse({
      runs: [{ name: "r", status: "ready", workers: [{ name: "w", spans: ["b", "a"], span_info: [{ name: "a", duration: 5 }, { name: "b", duration: 7 }] }] }],
    });
    assert.deepEqual(runs.runs[0]?.workers[0]?.spanFacts?.map((facts) => facts.duration), [7, 5]);
  });

  test("label: time of day, step range, length; the id stays in the tooltip", () => {
    const facts = { startTime: START, duration: 18_700_000, steps: { count: 3, first: 2, last: 4 } };
    assert.equal(spanOptionLabel(0, 2, "1795504203860885393", facts), "span 1 of 2 · 14:03:27 · steps 2–4 · 18.7 s");
    assert.equal(spanOptionLabel(0, 1, "x", facts), "14:03:27 · steps 2–4 · 18.7 s");
    assert.equal(spanOptionTitle("1795504203860885393", facts), "started 2026-11-21 14:03:27 · id 1795504203860885393");
    assert.equal(stepRangeText({ count: 1, first: 7, last: 7 }), "step 7");
    assert.equal(stepRangeText({ count: 2, first: null, last: null }), "2 steps");
    assert.equal(spanFactsText({ startTime: null, duration: null, steps: null }), null);
    // The steps every page counts, and how many of the trace's are left out (the Overview says why).
    const cut = parseSpanFacts({ steps: { count: 12, first: 0, last: 11, left_out: 1 } });
    assert.deepEqual(cut.steps, { count: 12, first: 0, last: 11, leftOut: 1 });
    assert.equal(stepRangeText(cut.steps), "steps 0–11 (1 left out)");
  });

  test("without facts: the time a timestamp name stands for, else the id", () => {
    const fromName = spanOptionLabel(1, 2, String(Math.round(START * 1000)), undefined);
    assert.equal(fromName, "span 2 of 2 · 14:03:27");
    assert.equal(spanOptionLabel(0, 1, "train_a", undefined), "train_a");
    assert.equal(spanOptionTitle("train_a", undefined), "id train_a");
  });
});
