// Canned answers of the analysis routes (overview, operators, operators/detail, kernels, steptrace,
// datapipeline, memory, modules, distributed, runs/table, summary) for dev/fake_server.mjs, from the JSON fixtures in test/fixtures/ plus a
// generated big span for checking that the tables stay fast:
//   resnet50_num_workers_0   GPU answers (overview captured from the real backend on the ResNet trace)
//   ddp_gloo_2ranks          CPU-only answers (no kernels)
//   live/job                 12,000 operators and 10,000 kernels, generated
// The first request of each route and span answers 202 (loading) once, so the views'
// loading state and retry get exercised.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const fixtureDir = resolve(dirname(fileURLToPath(import.meta.url)), "..", "test", "fixtures");
const fixture = (name) => JSON.parse(readFileSync(resolve(fixtureDir, name), "utf8"));

const seen = new Set();

/** Deterministic pseudo-random numbers (a linear congruential generator), so reloads look the same. */
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const OP_STEMS = ["aten::add", "aten::mul", "aten::conv2d", "aten::linear", "aten::matmul", "aten::copy_", "aten::relu", "aten::sum"];

function bigOperators(groupBy) {
  const random = generator(7);
  const rows = [];
  for (let i = 0; i < 12000; i += 1) {
    const calls = 1 + Math.floor(random() * 500);
    const hostSelf = random() * 5000;
    const deviceSelf = random() < 0.3 ? 0 : random() * 20000;
    const row = {
      name: `${OP_STEMS[i % OP_STEMS.length]}_${i}`,
      calls,
      host_self: hostSelf,
      host_total: hostSelf * (1 + random()),
      device_self: deviceSelf,
      device_total: deviceSelf * (1 + random() * 0.2),
      tc_eligible: i % 3 === 0,
      tc_self_share: i % 3 === 0 ? random() : 0,
      tc_total_share: i % 3 === 0 ? random() : 0,
    };
    if (groupBy === "input_shape") row.input_shape = JSON.stringify([[1 + (i % 64), 256], [256, 128]]);
    if (groupBy === "stack") row.stack = `model.py(${i % 400}): forward\ntrain.py(${i % 50}): step\ntrain.py(10): <module>`;
    rows.push(row);
  }
  return { group_by: groupBy, has_device: true, rows, totals: {} };
}

function bigKernels(groupBy) {
  const random = generator(11);
  const rows = [];
  for (let i = 0; i < 10000; i += 1) {
    const calls = 1 + Math.floor(random() * 300);
    const mean = 1 + random() * 400;
    rows.push({
      name: `void generated_kernel_${i}<float, ${i % 16}>(float const*, float*, int)`,
      ...(groupBy === "op_and_name" ? { op: OP_STEMS[i % OP_STEMS.length] } : {}),
      calls,
      total: calls * mean,
      mean,
      min: mean * 0.5,
      max: mean * 2,
      blocks_per_sm: i % 10 === 0 ? null : random() * 100,
      achieved_occupancy: i % 10 === 0 ? null : random(),
      tensor_cores: i % 7 === 0,
    });
  }
  const total = rows.reduce((sum, row) => sum + row.total, 0);
  const tensorCoreTime = rows.filter((row) => row.tensor_cores).reduce((sum, row) => sum + row.total, 0);
  return { group_by: groupBy, rows, total, tensor_core_share: tensorCoreTime / total, tensor_core_time: tensorCoreTime };
}

/** Adds the grouping's key to fixture rows written for group_by=name. */
function regroup(answer, groupBy) {
  if (groupBy === "input_shape") {
    return { ...answer, group_by: groupBy, rows: answer.rows.map((row, i) => ({ ...row, input_shape: `[[${32 * (i + 1)},3,224,224],[64,3,7,7]]` })) };
  }
  if (groupBy === "stack") {
    return { ...answer, group_by: groupBy, rows: answer.rows.map((row) => ({ ...row, stack: row.stack ?? "train.py(42): step\ntrain.py(60): <module>" })) };
  }
  if (groupBy === "op_and_name") {
    return { ...answer, group_by: groupBy, rows: answer.rows.map((row) => ({ ...row, op: "aten::cudnn_convolution" })) };
  }
  return { ...answer, group_by: groupBy };
}

function answerFor(route, query, run) {
  const gpu = run.name !== "ddp_gloo_2ranks";
  const big = run.name === "live/job";
  switch (route) {
    case "overview": {
      const overview = fixture(gpu ? "overview_gpu.json" : "overview_cpu.json");
      const marker = query.get("step_marker");
      return marker ? { ...overview, step_source: "span" } : overview;
    }
    case "operators": {
      const groupBy = query.get("group_by") ?? "name";
      if (big) return bigOperators(groupBy);
      return gpu ? regroup(fixture("operators_gpu.json"), groupBy) : regroup(fixture("operators_cpu_stack.json"), groupBy);
    }
    case "operators/detail": {
      const detail = fixture("operator_detail_gpu.json");
      return { ...detail, name: query.get("name") ?? detail.name, ...(gpu ? {} : { kernels: [] }) };
    }
    case "kernels": {
      const groupBy = query.get("group_by") ?? "name";
      if (big) return bigKernels(groupBy);
      return regroup(fixture(gpu ? "kernels_gpu.json" : "kernels_cpu.json"), groupBy);
    }
    case "steptrace":
      return fixture(gpu ? "steptrace_ascend.json" : "steptrace_mlp.json");
    case "datapipeline":
      return fixture(gpu ? "datapipeline_ascend.json" : "datapipeline_w0.json");
    case "memory":
      return fixture("memory_conv_cpu.json");
    case "modules":
      return fixture("modules_transformer.json");
    case "distributed":
      return fixture("distributed_ddp_gloo.json");
    case "distributed/matrix":
      return thousandRankMatrix();
    case "runs/table":
      return fixture("runs_table.json");
    case "summary":
      return {
        start: gpu ? 1623142623460016.2 : 4446416051270.089,
        end: gpu ? 1623142624633484.0 : 4446416062316.134,
        tracks: [
          { id: 0, name: "thread 25738 (python)", kind: "cpu" },
          { id: 1, name: "thread 25738 (python)", kind: "cpu" },
          { id: 3, name: "stream 7", kind: "gpu" },
        ],
      };
    default:
      return null;
  }
}

/**
 * Answers an analysis route for a ready run: [status, body], or null when the route is not
 * one of these (the caller then answers 404).
 */
export function analysisRoute(route, query, run) {
  const body = answerFor(route, query, run);
  if (body === null) return null;
  const key = `${route}|${run.name}|${query.get("worker")}|${query.get("span")}|${query.get("group_by")}`;
  if (!seen.has(key)) {
    seen.add(key);
    return [202, { status: "loading", progress: 0.5 }];
  }
  return [200, body];
}

/** A generated rank × step matrix of 1,000 ranks and 12 steps (rank 637 the straggler of step 5), to see the heat map at scale. */
function thousandRankMatrix() {
  const ranks = 1000;
  const steps = 12;
  const names = Array.from({ length: steps }, (_, i) => `ProfilerStep#${i + 10}`);
  const cell = (r, s) => (r === 637 && s === 5 ? 150_000 : 95_000 + ((r * 7919 + s * 104729) % 10_000));
  const rows = (f) => Array.from({ length: ranks }, (_, r) => Array.from({ length: steps }, (_, s) => f(r, s)));
  return {
    ranks: Array.from({ length: ranks }, (_, r) => ({ worker: `rank${r}`, rank: r, span: "1795303450949782497" })),
    steps: names,
    step_time: rows(cell),
    communication: rows((r, s) => cell(r, s) / 3),
    exposed_communication: rows((r, s) => cell(r, s) / 8),
    step_start: rows((r, s) => 4446416051270 + s * 110_000),
    step_median: names.map(() => 100_000),
    slowest_rank: names.map((_, s) => (s === 5 ? 637 : 0)),
    span_index: 0,
    failed: [],
  };
}
