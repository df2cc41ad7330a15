import assert from "node:assert/strict";
import { beforeEach, describe, test } from "node:test";
import type { RunsResponse } from "../src/api/runs";
import { noRunsState, skipReasonText } from "../src/components/empty_state";
import { createRunList, workerLabel } from "../src/components/run_list";
import { installFakeDocument, type FakeElement } from "./fake_dom";
import { runWorker } from "./fixtures";

beforeEach(installFakeDocument);

// What the backend answers for a logdir holding only an event file and two non-trace JSON files.
const EMPTY_LOGDIR_ANSWER: RunsResponse = {
  runs: [],
  scanned: true,
  pending_files: 0,
  skipped: {
    count: 3,
    reasons: { not_a_chrome_trace: 2, tensorboard_event_file: 1 },
    examples: { not_a_chrome_trace: ["exp/config.json", "exp/<b>x</b>.json"], tensorboard_event_file: ["exp/events.out.tfevents.1"] },
  },
  looked_for: [
    { pattern: "<run>/<worker>.<timestamp>.pt.trace.json[.gz]", written_by: "torch.profiler.tensorboard_trace_handler" },
    { pattern: "<run>/[rank<N>/]<any name>.json[.gz]", written_by: "any file that starts like a Chrome trace: torch's export_chrome_trace (trace.json)" },
  ],
};

function rendered(answer: RunsResponse): FakeElement {
  return noRunsState({ skipped: answer.skipped, lookedFor: answer.looked_for }) as unknown as FakeElement;
}

describe("the empty page of a logdir without runs", () => {
  test("says how many files were skipped, why, and which", () => {
    const page = rendered(EMPTY_LOGDIR_ANSWER);
    assert.match(page.textContent, /3 files were looked at and skipped/);
    const list = page.findByTestId("skipped-files");
    assert.ok(list !== null);
    assert.deepEqual(
      list.children.map((item) => [item.getAttribute("data-reason"), item.textContent]),
      [
        ["not_a_chrome_trace", "2 JSON files that are not Chrome traces (exp/config.json, exp/<b>x</b>.json)"],
        ["tensorboard_event_file", "1 TensorBoard event file (exp/events.out.tfevents.1)"],
      ],
    );
  });

  test("lists the layouts looked for and the import command", () => {
    const page = rendered(EMPTY_LOGDIR_ANSWER);
    const layouts = page.findByTestId("layouts-looked-for");
    assert.ok(layouts !== null);
    assert.deepEqual(
      layouts.children.map((item) => item.textContent),
      [
        "<run>/<worker>.<timestamp>.pt.trace.json[.gz] — torch.profiler.tensorboard_trace_handler",
        "<run>/[rank<N>/]<any name>.json[.gz] — any file that starts like a Chrome trace: torch's export_chrome_trace (trace.json)",
      ],
    );
    assert.match(page.findByTestId("import-command")?.textContent ?? "", /^profscope import path\/to\/\*\.json\.gz --logdir <logdir>/);
  });

  test("without a run list yet (or after it failed) it still explains how to write and import runs", () => {
    const page = noRunsState({}) as unknown as FakeElement;
    assert.equal(page.findByTestId("skipped-files"), null);
    assert.equal(page.findByTestId("layouts-looked-for"), null);
    assert.ok(page.findByTestId("import-command") !== null);
    assert.match(page.textContent, /on_trace_ready/);
  });

  test("nothing skipped: no skipped list", () => {
    const page = rendered({ ...EMPTY_LOGDIR_ANSWER, skipped: { count: 0, reasons: {}, examples: {} } });
    assert.equal(page.findByTestId("skipped-files"), null);
    assert.ok(page.findByTestId("layouts-looked-for") !== null);
  });
});

describe("ranks and skip reasons of the runs answer", () => {
  test("a worker's rank from its traces is shown when its name does not say it", () => {
    const workers = [{ ...runWorker("rank0", ["a"]), rank: 34 }, { ...runWorker("rank1", ["b"]), rank: 1 }, runWorker("trace", ["c"])];
    assert.deepEqual(workers.map(workerLabel), ["rank0 · rank 34", "rank1", "trace"]);
  });

  test("reason texts: singular, plural, and an unknown reason by its id", () => {
    assert.equal(skipReasonText("empty", 1), "1 empty file");
    assert.equal(skipReasonText("not_json", 5), "5 files that are not .json or .json.gz");
    assert.equal(skipReasonText("something_new", 2), "2 × something_new");
  });
});

describe("the run list says what was skipped, with runs present", () => {
  const runs: RunsResponse = {
    runs: [{ name: "exp", status: "ready", workers: [runWorker("w", ["1"])] }],
    scanned: true,
    pending_files: 0,
    skipped: { count: 3, reasons: { no_trace_key_in_sniff_limit: 1, not_a_chrome_trace: 2 },
      examples: { no_trace_key_in_sniff_limit: ["bench/<i>h</i>.json"], not_a_chrome_trace: ["exp/a.json", "exp/b.json"] } },
  };

  test("a collapsed count, and the reasons with their files as text", () => {
    const list = createRunList(() => undefined);
    list.update(runs.runs, "exp", runs.skipped);
    const root = list.root as unknown as FakeElement;
    const box = root.findByTestId("run-list-skipped");
    assert.ok(box !== null && !box.hidden);
    assert.equal(root.findByTestId("run-list-skipped-count")?.textContent, "3 files skipped");
    assert.deepEqual(
      root.findByTestId("skipped-files")?.children.map((item) => [item.getAttribute("data-reason"), item.textContent]),
      [
        ["not_a_chrome_trace", "2 JSON files that are not Chrome traces (exp/a.json, exp/b.json)"],
        ["no_trace_key_in_sniff_limit",
          "1 JSON file with no trace key in its first 16 MB (profscope import reads it whole) (bench/<i>h</i>.json)"],
      ],
    );
    assert.equal(root.findByTestId("run-entry")?.getAttribute("data-run"), "exp");
  });

  test("nothing skipped, an older backend, or no runs: no count", () => {
    const list = createRunList(() => undefined);
    list.update(runs.runs, "exp", { count: 0, reasons: {}, examples: {} });
    assert.equal((list.root as unknown as FakeElement).findByTestId("run-list-skipped")?.hidden, true);
    list.update(runs.runs, "exp", undefined);
    assert.equal((list.root as unknown as FakeElement).findByTestId("run-list-skipped")?.hidden, true);
    list.update([], null, runs.skipped); // the empty page says it
    assert.equal((list.root as unknown as FakeElement).findByTestId("run-list-skipped")?.hidden, true);
    assert.equal((list.root as unknown as FakeElement).findByTestId("skipped-files"), null);
  });
});
