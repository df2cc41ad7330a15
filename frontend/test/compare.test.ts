// The Compare page's pure parts: parsing `compare` and `runs/table` answers (fixtures captured
// from the real backend on the ../shared/traces ResNet-50 spans and the dataloader_bound runs,
// their operator and kernel lists cut to the 8 largest changes plus a few one-sided rows), the
// pair in the URL and its defaults, the run table's picks, and how changes read.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApiClient, type FetchLike } from "../src/api/client";
import { fetchCompare, fetchRunTable, pairedCategory, type CompareOperatorRow, type RunTableRow } from "../src/api/compare";
import type { RunInfo } from "../src/api/runs";
import type { SpanRef } from "../src/api/types";
import { compareKernelColumns, compareOperatorColumns } from "../src/views/compare/columns";
import {
  canComparePicks,
  chooseExperiment,
  defaultExperiment,
  differenceCost,
  differencesText,
  formatChange,
  formatRatio,
  formatSignedMicros,
  formatSignedTime,
  pairParams,
  pickRole,
  pickText,
  profileDifferences,
  resolvePair,
  runTableTitle,
  spanChoices,
  stepTimeSentence,
  timeDirection,
  togglePick,
} from "../src/views/compare/model";
import { peakMemoryTypes, tableCategories } from "../src/views/compare/runs_table_columns";
import { readFixture, readAnswer, runWorker } from "./fixtures";

function client(status: number, body: unknown, seen: string[] = []): ApiClient {
  const fetchImpl: FetchLike = async (url) => {
    seen.push(url);
    return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
  };
  return new ApiClient("http://h/data/plugin/profscope/", fetchImpl);
}

const RUNS: RunInfo[] = [
  { name: "resnet", status: "ready", workers: [runWorker("worker0", ["100", "200"])] },
  { name: "w0", status: "ready", workers: [runWorker("worker0", ["5"])] },
  { name: "w2", status: "loading", workers: [runWorker("worker0", ["7"]), runWorker("worker1", ["8"])] },
];

describe("compare answer", () => {
  test("two spans of one GPU job: sides, breakdown, operators and kernels", () => {
    const data = readAnswer("compare", "compare_resnet.json");
    assert.equal(data.base.run, "resnet");
    assert.equal(data.base.span, "1623143089861");
    assert.deepEqual(data.base.devices, ["Tesla V100-DGXS-32GB"]);
    assert.equal(data.base.steps, 6);
    assert.equal(data.group_by, "name");
    assert.equal(data.categories.length, 8);
    // Step time: 177.6 ms → 154.9 ms (the DataLoader share shrinks in the second span).
    assert.equal(Math.round(data.step_time.base), 177592);
    assert.equal(Math.round(data.step_time.exp), 154911);
    assert.ok(Math.abs(data.step_time.delta - (data.step_time.exp - data.step_time.base)) < 1e-6);
    assert.equal(data.step_time.ratio?.toFixed(4), "0.8723");
    assert.ok(data.breakdown.delta.dataloader < -20000);
    assert.equal(data.breakdown.ratio["communication"], null); // no communication in the baseline
    // Rows come sorted by the size of their change per step.
    const impacts = data.operators.filter((row) => row.side === "both").map((row) => Math.abs(row.impact));
    assert.deepEqual(impacts, [...impacts].sort((a, b) => b - a));
    const top = data.operators[0]!;
    assert.equal(top.base?.calls, top.exp?.calls);
    assert.ok(Math.abs(top.impact - ((top.per_step.exp ?? 0) - (top.per_step.base ?? 0))) < 1e-9);
    assert.ok(data.kernels.every((row) => row.side === "both" && row.base !== null && row.exp !== null));
    assert.deepEqual(data.notes, []);
  });

  test("CPU runs grouped by input shape: one-sided rows have a null side", () => {
    const data = readAnswer("compare", "compare_dataloader.json");
    assert.equal(data.group_by, "input_shape");
    assert.ok(!data.categories.includes("kernel"));
    assert.deepEqual(data.kernels, []);
    const stack = data.operators.find((row) => row.name === "aten::stack");
    assert.equal(stack?.side, "base");
    assert.equal(stack?.exp, null);
    assert.equal(stack?.ratio, null);
    assert.ok(stack !== undefined && stack.input_shape !== undefined && stack.input_shape.startsWith("[[[3,32,32]"));
    const set = data.operators.find((row) => row.name === "aten::set_");
    assert.equal(set?.side, "exp");
    assert.equal(set?.base, null);
    assert.equal(set?.delta.calls, set?.exp?.calls);
  });

  test("fetchCompare names both sides, the grouping and the batch sizes entered in the page", async () => {
    const seen: string[] = [];
    const request = (base: SpanRef, exp: SpanRef, groupBy: "name" | "input_shape", baseBatchSize: number | null = null, expBatchSize: number | null = null) =>
      ({ base, exp, groupBy, baseBatchSize, expBatchSize });
    const result = await fetchCompare(
      client(200, readFixture("compare_resnet.json"), seen),
      request({ run: "r/a", worker: "w0", span: "1" }, { run: "r b", worker: "w1", span: "2" }, "input_shape", null, 64),
    );
    assert.equal(result.kind, "ok");
    const url = new URL(seen[0]!);
    assert.equal(url.pathname, "/data/plugin/profscope/compare");
    assert.equal(url.searchParams.get("base_run"), "r/a");
    assert.equal(url.searchParams.get("exp_run"), "r b");
    assert.equal(url.searchParams.get("exp_span"), "2");
    assert.equal(url.searchParams.get("group_by"), "input_shape");
    assert.equal(url.searchParams.has("base_batch_size"), false);
    assert.equal(url.searchParams.get("exp_batch_size"), "64");
    const same = { run: "a", worker: "w", span: "1" };
    const loading = await fetchCompare(client(202, { status: "loading", progress: 0.5 }), request(same, same, "name"));
    assert.deepEqual(loading, { kind: "loading", progress: 0.5 });
    const missing = await fetchCompare(client(404, { error: "baseline: unknown run 'x'" }), request({ run: "x", worker: "w", span: "1" }, same, "name"));
    assert.deepEqual(missing, { kind: "error", status: 404, message: "baseline: unknown run 'x'" });
  });

  test("a breakdown table reads as one pair per category", () => {
    const table = { base: { other: 30.9375 }, exp: { other: 24.84375 }, delta: { other: -6.09375 }, ratio: { other: 0.803 } };
    assert.deepEqual(pairedCategory(table, "other"), { base: 30.9375, exp: 24.84375, delta: -6.09375, ratio: 0.803 });
    const kernel = pairedCategory(table, "kernel");
    assert.ok(Number.isNaN(kernel.base) && kernel.ratio === null);
  });
});

describe("run table answer", () => {
  test("rows with numbers, categories and peaks", async () => {
    const data = readAnswer("runs/table", "runs_table.json");
    assert.equal(data.rows.length, 4);
    const resnet = data.rows.filter((row) => row.run === "resnet");
    assert.deepEqual(resnet.map((row) => row.span_index), [0, 1]);
    assert.equal(resnet[0]?.steps, 6);
    assert.equal(resnet[0]?.gpu_utilization?.toFixed(3), "0.555");
    const w0 = data.rows.find((row) => row.run === "w0")!;
    assert.equal(w0.gpu_utilization, null);
    assert.equal(w0.has_device, false);
    assert.ok((w0.shares?.["dataloader"] ?? 0) > (data.rows.find((row) => row.run === "w2")!.shares?.["dataloader"] ?? 1));
    assert.deepEqual(tableCategories(data.rows), ["kernel", "memcpy", "memset", "runtime", "dataloader", "cpu_exec", "other"]);
    assert.equal((await fetchRunTable(client(200, readFixture("runs_table.json")))).kind, "ok");
  });

  test("peaks list GPU first", () => {
    const row = { worker: "w", span: "1", span_index: 0, status: "ready", framework: null, batch_size: null, tags: null } as const;
    const rows: RunTableRow[] = [
      { ...row, run: "a", status: "loading", progress: 0.4 },
      { ...row, run: "c", peak_memory: { CPU: 10, GPU: 20 } },
    ];
    assert.deepEqual(peakMemoryTypes(rows), ["GPU", "CPU"]);
  });
});

describe("the pair", () => {
  const choices = spanChoices(RUNS);

  test("span choices list every run, worker and span with a readable label", () => {
    assert.deepEqual(
      choices.map((choice) => choice.label),
      ["resnet · worker0 · span 1 of 2", "resnet · worker0 · span 2 of 2", "w0 · worker0", "w2 · worker0", "w2 · worker1"],
    );
  });

  test("defaults: the next span of the worker, else the next run's first span with as many workers", () => {
    assert.deepEqual(defaultExperiment(choices, { run: "resnet", worker: "worker0", span: "100" }), { run: "resnet", worker: "worker0", span: "200" });
    assert.deepEqual(defaultExperiment(choices, { run: "resnet", worker: "worker0", span: "200" }), { run: "w0", worker: "worker0", span: "5" });
    // w2 has two workers, the other runs one: its other worker is the span like it.
    assert.deepEqual(chooseExperiment(choices, { run: "w2", worker: "worker1", span: "8" }), {
      ref: { run: "w2", worker: "worker0", span: "7" }, reason: "similar", differences: [],
    });
    const single = spanChoices([RUNS[1]!]);
    assert.deepEqual(chooseExperiment(single, { run: "w0", worker: "worker0", span: "5" }), {
      ref: { run: "w0", worker: "worker0", span: "5" }, reason: "only_span", differences: [],
    });
  });

  // A logdir as a person has it: GPU jobs beside a CPU toy run, another profiler, a two-rank job.
  const facts = (device: string) => ({ device });
  const LOGDIR: RunInfo[] = [
    { name: "a_cpu_toy", status: "ready", framework: "pytorch", workers: [runWorker("worker0", ["1"], [facts("CPU")])] },
    { name: "b_gpu", status: "ready", framework: "pytorch", workers: [runWorker("worker0", ["10"], [facts("NVIDIA H100")])] },
    { name: "c_paddle", status: "ready", framework: "paddle", workers: [runWorker("worker0", ["15"], [facts("NVIDIA H100")])] },
    { name: "d_gpu", status: "ready", framework: "pytorch", workers: [runWorker("worker0", ["20", "21"], [facts("NVIDIA H100"), facts("NVIDIA H100")])] },
    { name: "e_ddp", status: "ready", framework: "pytorch", workers: [
      runWorker("rank0", ["30"], [facts("NVIDIA H100")]),
      runWorker("rank1", ["31"], [facts("NVIDIA H100")]),
    ] },
    { name: "f_ascend", status: "ready", framework: "mindspore", workers: [runWorker("rank0", ["40"], [facts("Ascend")])] },
    { name: "g_loading", status: "loading", framework: "pytorch", workers: [runWorker("worker0", ["50"])] },
  ];
  const logdir = spanChoices(LOGDIR);

  test("a GPU span is compared with the next span like it: same profiler, device and worker count", () => {
    // Not the CPU toy run after it in the run list (wrapping round), nor Paddle's trace on the same GPU, nor a run
    // whose device is not known yet (still loading), nor a run that failed to load.
    const broken: RunInfo = { name: "e_broken", status: "error", workers: [runWorker("worker0", ["99"])] };
    assert.deepEqual(chooseExperiment(spanChoices([...LOGDIR.slice(0, 4), broken, ...LOGDIR.slice(4)]), { run: "d_gpu", worker: "worker0", span: "21" }), {
      ref: { run: "b_gpu", worker: "worker0", span: "10" }, reason: "similar", differences: [],
    });
    const loaded = spanChoices(LOGDIR.filter((run) => run.name !== "g_loading"));
    assert.deepEqual(chooseExperiment(loaded, { run: "d_gpu", worker: "worker0", span: "21" }).ref, { run: "b_gpu", worker: "worker0", span: "10" });
    assert.deepEqual(chooseExperiment(loaded, { run: "b_gpu", worker: "worker0", span: "10" }).ref, { run: "d_gpu", worker: "worker0", span: "20" });
    assert.equal(chooseExperiment(loaded, { run: "d_gpu", worker: "worker0", span: "20" }).reason, "next_span");
    // A rank of a two-rank job: the other rank.
    assert.deepEqual(chooseExperiment(loaded, { run: "e_ddp", worker: "rank0", span: "30" }).ref, { run: "e_ddp", worker: "rank1", span: "31" });
  });

  test("when no span is like the baseline, the closest is chosen and the differences said", () => {
    const toy = chooseExperiment(logdir, { run: "a_cpu_toy", worker: "worker0", span: "1" });
    // Every other span ran on a device, except g_loading, not loaded yet: it may be like the toy run.
    assert.deepEqual(toy, { ref: { run: "g_loading", worker: "worker0", span: "50" }, reason: "similar", differences: [] });
    // A failed run is never chosen, even when it is the only other span.
    const onlyBroken = spanChoices([LOGDIR[0]!, { name: "broken", status: "error", workers: [runWorker("worker0", ["9"])] }]);
    assert.equal(chooseExperiment(onlyBroken, { run: "a_cpu_toy", worker: "worker0", span: "1" }).reason, "only_span");
    const loaded = spanChoices(LOGDIR.filter((run) => run.name !== "g_loading"));
    const alone = chooseExperiment(loaded, { run: "a_cpu_toy", worker: "worker0", span: "1" });
    assert.equal(alone.reason, "closest");
    assert.deepEqual(alone.ref, { run: "b_gpu", worker: "worker0", span: "10" });
    assert.deepEqual(alone.differences, [{ what: "device", base: "CPU", exp: "NVIDIA H100" }]);
    const ascend = chooseExperiment(loaded, { run: "f_ascend", worker: "rank0", span: "40" });
    assert.equal(ascend.reason, "closest");
    // Another device is closer than the CPU run before it in the list.
    assert.deepEqual(ascend.ref, { run: "b_gpu", worker: "worker0", span: "10" });
    assert.equal(differencesText(ascend.differences), "profiler (mindspore against pytorch), device (Ascend against NVIDIA H100)");
    // An H100 span with a CPU run and a V100 run beside it: the V100 is the closer.
    const h100: RunInfo[] = [
      { name: "bert_h100", status: "ready", framework: "pytorch", workers: [runWorker("w", ["1"], [facts("NVIDIA H100")])] },
      { name: "conv_cpu", status: "ready", framework: "pytorch", workers: [runWorker("worker0", ["2"], [facts("CPU")])] },
      { name: "resnet", status: "ready", framework: "pytorch", workers: [runWorker("worker0", ["3"], [facts("Tesla V100")])] },
    ];
    const v100 = chooseExperiment(spanChoices(h100), { run: "bert_h100", worker: "w", span: "1" });
    assert.deepEqual([v100.ref.run, v100.reason, differenceCost(v100.differences)], ["resnet", "closest", 1]);
    assert.equal(differenceCost([{ what: "device", base: "NVIDIA H100", exp: "CPU" }, { what: "workers", base: "2", exp: "1" }]), 3);
    assert.deepEqual(profileDifferences({ framework: "pytorch", device: null, workers: 2 }, { framework: null, device: "CPU", workers: 1 }), [
      { what: "workers", base: "2", exp: "1" },
    ]);
  });

  test("a link that names the runs only: the worker of the same name in both, else the first, and the first spans", () => {
    const runsOnly = (base: string, exp: string) => (name: string): string | null => (name === "base_run" ? base : name === "exp_run" ? exp : null);
    const same = resolvePair(runsOnly("b_gpu", "d_gpu"), { run: "e_ddp", worker: "rank1", span: "31" }, logdir);
    assert.deepEqual([same?.base, same?.exp], [{ run: "b_gpu", worker: "worker0", span: "10" }, { run: "d_gpu", worker: "worker0", span: "20" }]);
    assert.deepEqual(same?.auto, { ref: { run: "d_gpu", worker: "worker0", span: "20" }, reason: "link_runs", differences: [] });
    const across = resolvePair(runsOnly("e_ddp", "f_ascend"), null, logdir);
    // Both have a rank0 (e_ddp's first worker anyway); the differences are said.
    assert.deepEqual([across?.base.worker, across?.exp], ["rank0", { run: "f_ascend", worker: "rank0", span: "40" }]);
    assert.deepEqual(across?.auto?.differences.map((d) => d.what), ["framework", "device", "workers"]);
    const firsts = resolvePair(runsOnly("a_cpu_toy", "e_ddp"), null, logdir);
    assert.deepEqual([firsts?.base, firsts?.exp], [{ run: "a_cpu_toy", worker: "worker0", span: "1" }, { run: "e_ddp", worker: "rank0", span: "30" }]);
    // The shared name wins over the first worker: rank1 is the only name both runs have.
    const shared: RunInfo[] = [
      { name: "x", status: "ready", workers: [runWorker("rank0", ["1"]), runWorker("rank1", ["2", "3"])] },
      { name: "y", status: "ready", workers: [runWorker("rank1", ["4"]), runWorker("rank2", ["5"])] },
    ];
    const byName = resolvePair(runsOnly("x", "y"), null, spanChoices(shared));
    assert.deepEqual([byName?.base, byName?.exp], [{ run: "x", worker: "rank1", span: "2" }, { run: "y", worker: "rank1", span: "4" }]);
    // A run the list does not have: the selection, and the span like it.
    const unknown = resolvePair(runsOnly("nope", "nope"), { run: "b_gpu", worker: "worker0", span: "10" }, logdir);
    assert.deepEqual([unknown?.base.run, unknown?.exp.run, unknown?.auto?.reason], ["b_gpu", "d_gpu", "similar"]);
  });

  test("the URL names the pair; missing sides fall back to the selection and the span after it", () => {
    const params: Readonly<Record<string, string>> = pairParams({
      base: { run: "w2", worker: "worker1", span: "8" },
      exp: { run: "resnet", worker: "worker0", span: "100" },
    });
    const read = (name: string): string | null => params[name] ?? null;
    assert.deepEqual({ ...params }, {
      base_run: "w2", base_worker: "worker1", base_span: "8", exp_run: "resnet", exp_worker: "worker0", exp_span: "100",
    });
    const fromUrl = resolvePair(read, { run: "w0", worker: "worker0", span: "5" }, choices);
    assert.deepEqual(fromUrl, { base: { run: "w2", worker: "worker1", span: "8" }, exp: { run: "resnet", worker: "worker0", span: "100" }, auto: null });
    const defaults = resolvePair(() => null, { run: "resnet", worker: "worker0", span: "100" }, choices);
    assert.deepEqual(defaults?.exp, { run: "resnet", worker: "worker0", span: "200" });
    assert.equal(defaults?.auto?.reason, "next_span");
    // A side named by its run alone: the selection's worker when the run has one of that name, its first span.
    const partial = resolvePair((name) => (name === "base_run" ? "w2" : null), { run: "w0", worker: "worker0", span: "5" }, choices);
    assert.deepEqual(partial?.base, { run: "w2", worker: "worker0", span: "7" });
    const named = resolvePair((name) => ({ base_run: "w2", base_worker: "worker1" })[name] ?? null, null, choices);
    assert.deepEqual(named?.base, { run: "w2", worker: "worker1", span: "8" });
    assert.equal(resolvePair(() => null, null, []), null);
  });

  test("run table picks: first the baseline, then the experiment; a second click unpicks", () => {
    const a = { run: "a", worker: "w", span: "1" };
    const b = { run: "b", worker: "w", span: "1" };
    const c = { run: "c", worker: "w", span: "1" };
    let picks = togglePick([], a);
    picks = togglePick(picks, b);
    assert.deepEqual(picks, [a, b]);
    assert.equal(pickRole(picks, a), "baseline");
    assert.equal(pickRole(picks, b), "experiment");
    assert.deepEqual(togglePick(picks, c), [a, c]);
    assert.deepEqual(togglePick(picks, a), [b]);
    assert.equal(pickRole([b], b), "baseline");
    assert.equal(pickRole(picks, c), null);
  });

  test("the picks' bar: each pick named from its row, Compare only for two picks other than the pair shown", () => {
    const a = { run: "a", worker: "w", span: "s1" };
    const b = { run: "b", worker: "w", span: "s2" };
    const rows = [{ ...a, span_index: 0 }];
    assert.equal(pickText(rows, a), "a · w · span 1");
    assert.equal(pickText(rows, b), "b · w"); // not listed (yet)
    assert.equal(pickText(rows, undefined), "—");
    assert.equal(canComparePicks([a], null), false);
    assert.equal(canComparePicks([a, b], null), true);
    assert.equal(canComparePicks([a, b], { base: a, exp: b }), false);
    assert.equal(canComparePicks([b, a], { base: a, exp: b }), true);
  });

  test("the run table's title says how many spans are still loading", () => {
    assert.equal(runTableTitle([{ status: "ready" }, { status: "ready" }]), "All spans (2)");
    assert.equal(runTableTitle([{ status: "ready" }, { status: "loading" }, { status: "error" }]), "All spans (3, 1 loaded)");
  });
});

describe("how changes read", () => {
  test("signed times, ratios and relative changes", () => {
    assert.equal(formatSignedTime(-22680.8), "-22.7 ms");
    assert.equal(formatSignedTime(80), "+80.0 µs");
    assert.equal(formatSignedTime(0), "0 µs");
    assert.equal(formatSignedMicros(-80), "-80.0");
    assert.equal(formatSignedMicros(1234.4), "+1,234");
    assert.equal(formatSignedMicros(0), "0");
    assert.equal(formatRatio(0.87228), "0.872×");
    assert.equal(formatRatio(0.99961), "1.00×");
    assert.equal(formatRatio(12.345), "12.3×");
    assert.equal(formatRatio(0), "0.00×");
    assert.equal(formatRatio(null), "—");
    assert.equal(formatChange(0.87228), "-12.8%");
    assert.equal(formatChange(1.5), "+50.0%");
    assert.equal(formatChange(null), "—");
  });

  test("direction: less time is better; tiny changes are the same", () => {
    assert.equal(timeDirection(100, 60), "better");
    assert.equal(timeDirection(100, 160), "worse");
    assert.equal(timeDirection(100, 100.2), "same");
    assert.equal(timeDirection(null, 5), "worse");
    assert.equal(timeDirection(0, 0), "same");
    assert.equal(
      stepTimeSentence({ base: 177592, exp: 154911, delta: -22681, ratio: 0.8723 }),
      "-22.7 ms per step (-12.8%): the experiment is faster.",
    );
    assert.match(stepTimeSentence({ base: 100, exp: 100.1, delta: 0.1, ratio: 1.001 }), /about the same/);
  });

  test("table cells: one-sided rows read — on their missing side and are marked", () => {
    const data = readAnswer("compare", "compare_dataloader.json");
    const columns = compareOperatorColumns("input_shape", false);
    const cell = (row: CompareOperatorRow, id: string): string => columns.find((column) => column.id === id)!.text(row);
    const stack = data.operators.find((row) => row.name === "aten::stack")!;
    assert.equal(cell(stack, "side"), "baseline only");
    assert.equal(cell(stack, "host_total_exp"), "—");
    assert.equal(cell(stack, "calls_exp"), "—");
    assert.equal(cell(stack, "ratio"), "—");
    assert.ok(cell(stack, "impact").startsWith("-"));
    assert.ok(!columns.some((column) => column.id.startsWith("device_")));
    // The impact column sorts by size, whichever the sign.
    const impact = columns.find((column) => column.id === "impact")!;
    assert.equal(impact.sortValue(stack), Math.abs(stack.impact));
    const gpu = readAnswer("compare", "compare_resnet.json");
    assert.ok(compareOperatorColumns("name", true).some((column) => column.id === "device_total_base"));
    const kernelColumns = compareKernelColumns();
    const top = gpu.kernels[0]!;
    assert.equal(kernelColumns.find((column) => column.id === "delta_mean")!.text(top), formatSignedMicros(top.delta.mean ?? Number.NaN));
  });
});
