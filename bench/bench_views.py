"""Analysis routes on a cached big trace, and the distributed view of a many-rank run.

Prints, for a generated trace of about ``--size-mb`` MB (steps of a real sample, see
``tracegen.py``): cold parse + cache, then in a FRESH process (like a TensorBoard restart,
the model memory-mapped from the cache) the first and repeated latency of each route the
pages call. Then, for ``--ranks`` ranks generated from a real Gloo rank, the time to load
all ranks and the time until the distributed view answers; then the rank × step matrix at
``--matrix-ranks`` ranks (aggregation and JSON; ``--matrix-only`` for just that).

    python bench/bench_views.py --size-mb 1000 --ranks 64      # by hand
    python bench/bench_views.py --size-mb 20 --ranks 4         # CI smoke run

Targets (from the issues; printed next to the figures, not asserted): overview,
operators and kernels under 300 ms and memory under 500 ms on a cached 1 GB trace; the critical path of a
step under 300 ms; each analysis of the Analyses page (idle time, launches, queue length, kernel
sequences, annotations: not precomputed) under 300 ms there;
the distributed view of a 64-rank run within 2x the time of loading the ranks.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO / "tests" / "data"  # the real traces; these seeds are stored as their profilers wrote them
RESNET_SEED = SHARED / "kineto_resnet50" / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"
MEMORY_SEED = SHARED / "torch213" / "conv_cpu_memory" / "worker0.1795303453480506115.pt.trace.json.gz"
GLOO_SEED = SHARED / "torch213" / "ddp_gloo_2ranks" / "rank0.1795303450949782497.pt.trace.json.gz"

# (run, route, params): "gpu" is made from the ResNet GPU sample, "mem" from a CPU sample with memory events.
ROUTES = [
    ("gpu", "overview", {}),
    ("gpu", "operators", {"group_by": "name"}),
    ("gpu", "operators", {"group_by": "input_shape"}),
    ("gpu", "kernels", {"group_by": "name"}),
    ("gpu", "critical_path", {}),  # the first step: precomputed by the parser pool
    ("gpu", "critical_path", {"step": "3"}),  # another step: computed on the request (first ms)
    ("gpu", "trace/tracks", {}),
    ("gpu", "trace/slices", {"width": "2000"}),
    ("gpu", "analyses/idle", {}),
    ("gpu", "analyses/launches", {}),
    ("gpu", "analyses/queues", {}),
    ("gpu", "analyses/sequences", {}),
    ("gpu", "analyses/annotations", {}),
    ("gpu", "trace/counters", {"tracks": "c:queue:3", "width": "2000"}),
    ("mem", "memory", {}),
    ("mem", "overview", {}),
]


def _tracegen():
    spec = importlib.util.spec_from_file_location("tracegen", HERE / "tracegen.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["tracegen"] = module
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


ROUTE_CHILD = r"""
import json, sys, time
from tensorboard.plugins import base_plugin
from tensorboard.backend import application
from werkzeug.test import Client
from profscope.tb_plugin.server.plugin import ProfscopePlugin
logdir, cache, routes = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
plugin = ProfscopePlugin(base_plugin.TBContext(logdir=logdir), cache_dir=cache, refresh_seconds=0.5)
client = Client(application.TensorBoardWSGI([plugin]))
t = time.perf_counter()
assert plugin.manager.wait_until_settled(600)
ready = time.perf_counter() - t
out = {"ready_s": ready, "routes": []}
for run, route, params in routes:
    q = {"run": run, "worker": "worker0", **params}
    times = []
    for i in range(4):
        t = time.perf_counter()
        r = client.get("/data/plugin/profscope/" + route, query_string=q)
        times.append(time.perf_counter() - t)
        assert r.status_code == 200, (route, r.status_code, r.get_data()[:200])
    out["routes"].append({"run": run, "route": route, "params": params, "first_ms": times[0] * 1000,
                          "repeat_ms": sorted(times[1:])[1] * 1000, "bytes": len(r.get_data())})
plugin.manager.stop()
print(json.dumps(out))
"""

DIST_CHILD = r"""
import json, sys, time
from tensorboard.plugins import base_plugin
from tensorboard.backend import application
from werkzeug.test import Client
from profscope.tb_plugin.server.plugin import ProfscopePlugin
logdir, cache = sys.argv[1], sys.argv[2]
plugin = ProfscopePlugin(base_plugin.TBContext(logdir=logdir), cache_dir=cache, refresh_seconds=0.2)
client = Client(application.TensorBoardWSGI([plugin]))
t0 = time.perf_counter()
assert plugin.manager.wait_until_settled(3600)
loaded = time.perf_counter() - t0
t = time.perf_counter()
r = client.get("/data/plugin/profscope/distributed", query_string={"run": "ranks"})
view = time.perf_counter() - t
assert r.status_code == 200, r.get_data()[:300]
body = r.get_json()
plugin.manager.stop()
print(json.dumps({"load_s": loaded, "view_s": view, "ranks": len(body["ranks"])}))
"""


CRITICAL_PATH_CHILD = r"""
import json, statistics, sys, time
from tensorboard.plugins import base_plugin
from profscope.tb_plugin.server.plugin import ProfscopePlugin
from profscope.tb_plugin.views.trace.critical_path import _roles, critical_path, path_of_window
from profscope.tb_plugin.model.steps import find_steps
logdir, cache, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
plugin = ProfscopePlugin(base_plugin.TBContext(logdir=logdir), cache_dir=cache, refresh_seconds=0.5)
assert plugin.manager.wait_until_settled(600)
model = plugin.manager.span("gpu", "worker0", None).model
t = time.perf_counter(); steps = find_steps(model); steps_s = time.perf_counter() - t
t = time.perf_counter(); _roles(model); roles_s = time.perf_counter() - t
per_step = []
for index in range(1, min(len(steps), 6)):
    t = time.perf_counter(); answer = critical_path(model, index); per_step.append(time.perf_counter() - t)
# A window of consecutive steps holding about `target` slices: a step of a bigger job.
k = max(1, -(-target // answer["graph"]["slices"]))
lo, hi = int(steps.host_start[1]), int(steps.host_end[min(len(steps) - 1, k)])
times = []
for _ in range(3):
    t = time.perf_counter(); wide = path_of_window(model, lo, hi); times.append(time.perf_counter() - t)
plugin.manager.stop()
print(json.dumps({"events": int(model.num_events), "steps_s": steps_s, "roles_s": roles_s,
                  "step_slices": answer["graph"]["slices"], "step_ms": statistics.median(per_step) * 1000,
                  "wide_steps": k, "wide_slices": wide["graph"]["slices"], "wide_edges": wide["graph"]["edges"],
                  "wide_path": len(wide["path"]["time"]), "wide_ms": statistics.median(times) * 1000}))
"""


def _run_child(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_routes(work: Path, size_mb: float, repeat: int) -> None:
    tracegen = _tracegen()
    logdir = work / "logdir"
    for run, seed_path in (("gpu", RESNET_SEED), ("mem", MEMORY_SEED)):
        (logdir / run).mkdir(parents=True)
        trace = logdir / run / "worker0.1.pt.trace.json.gz"
        seed = tracegen.load_seed(seed_path)
        info = tracegen.write_trace(seed, trace, copies=tracegen.copies_for_target(seed, size_mb), gzip=True)
        os.utime(trace, (1, 1))
        print(f"{run}: {info.events:,} events, {info.uncompressed_bytes / 1e6:.0f} MB uncompressed "
              f"(from {seed_path.name})")
    cache = work / "cache"
    first = _run_child(ROUTE_CHILD, str(logdir), str(cache), json.dumps([]))
    print(f"cold: parsed and cached in {first['ready_s']:.1f} s")
    runs = [_run_child(ROUTE_CHILD, str(logdir), str(cache), json.dumps(ROUTES)) for _ in range(repeat)]
    print(f"warm: ready in {statistics.median(r['ready_s'] for r in runs) * 1000:.0f} ms (fresh process, "
          f"memory-mapped cache)")
    print(f"{'route':<34} {'first ms':>9} {'repeat ms':>10} {'KB':>8}")
    for i, (run, route, params) in enumerate(ROUTES):
        label = f"{run}: " + route + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")
        firsts = [r["routes"][i]["first_ms"] for r in runs]
        repeats = [r["routes"][i]["repeat_ms"] for r in runs]
        print(f"{label:<34} {statistics.median(firsts):>9.0f} {statistics.median(repeats):>10.1f} "
              f"{runs[0]['routes'][i]['bytes'] / 1024:>8.0f}")


def bench_critical_path(work: Path) -> None:
    """The critical path of a step computed on the request (not the precomputed first step), on the cached gpu
    trace of ``bench_routes``; and of a window of consecutive steps with about 10^5 slices (a big job's step)."""
    r = _run_child(CRITICAL_PATH_CHILD, str(work / "logdir"), str(work / "cache"), "100000")
    print(f"critical path on {r['events']:,} events: once per model: steps {r['steps_s'] * 1000:.0f} ms, slice roles "
          f"{r['roles_s'] * 1000:.0f} ms; per step ({r['step_slices']:,} slices): median {r['step_ms']:.0f} ms; "
          f"{r['wide_steps']} steps as one ({r['wide_slices']:,} slices, {r['wide_edges']:,} edges, "
          f"{r['wide_path']:,} path entries): median {r['wide_ms']:.0f} ms (target < 300 ms per step)")


def bench_distributed(work: Path, ranks: int) -> None:
    tracegen = _tracegen()
    logdir = work / "dist"
    tracegen.write_multi_rank(GLOO_SEED, logdir / "ranks", ranks=ranks, copies=8, gzip=True)
    for f in (logdir / "ranks").iterdir():
        os.utime(f, (1, 1))
    result = _run_child(DIST_CHILD, str(logdir), str(work / "dist-cache"))
    ratio = (result["load_s"] + result["view_s"]) / result["load_s"]
    print(f"distributed: {result['ranks']} ranks loaded in {result['load_s']:.1f} s; view answered in "
          f"{result['view_s'] * 1000:.0f} ms; ready within {ratio:.2f}x the load time (target <= 2x)")


def bench_matrix(ranks: int, steps: int, repeat: int = 7) -> None:
    """The rank × step matrix (``distributed/matrix``) at ``ranks`` ranks: the aggregation over every rank's
    steps (synthetic per-rank arrays, as ``rank_steps.rank_steps`` gives them) and its JSON, and the per-rank
    cost of reading a real Gloo rank's steps from its model (``accounting.step_times``, memoised per model:
    after the Distributed view has answered it is already computed)."""
    import time

    import msgspec
    import numpy as np

    from profscope.tb_plugin.ingest.load import load_trace
    from profscope.tb_plugin.views.distributed.rank_steps import RankSteps, rank_steps, step_matrix

    rng = np.random.default_rng(0)
    rows = []
    for r in range(ranks):
        duration = rng.integers(90_000_000, 110_000_000, steps)
        start = np.concatenate([[0], np.cumsum(duration)[:-1]])
        rows.append(RankSteps(worker=f"rank{r}", rank=r, span="1", names=[f"ProfilerStep#{i}" for i in range(steps)],
                              start=start, duration=duration, communication=duration // 3,
                              exposed_communication=duration // 7))
    aggregate, encode, size = [], [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        answer = step_matrix(rows)
        aggregate.append(time.perf_counter() - t)
        t = time.perf_counter()
        size = len(msgspec.json.encode(answer))
        encode.append(time.perf_counter() - t)
    first, memoised = [], []
    for _ in range(repeat):
        model = load_trace(str(GLOO_SEED))  # a fresh model: nothing memoised
        t = time.perf_counter()
        rank_steps("rank0", 0, "1", model)
        first.append(time.perf_counter() - t)
        t = time.perf_counter()
        rank_steps("rank0", 0, "1", model)
        memoised.append(time.perf_counter() - t)
    print(f"matrix: {ranks} ranks x {steps} steps: aggregation {statistics.median(aggregate) * 1000:.1f} ms, JSON "
          f"{size / 1024:.0f} KB in {statistics.median(encode) * 1000:.1f} ms (medians of {repeat}); per rank, "
          f"steps of a Gloo rank {statistics.median(first) * 1000:.2f} ms first, "
          f"{statistics.median(memoised) * 1e6:.0f} us memoised")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=1000)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per route measurement")
    parser.add_argument("--matrix-ranks", type=int, default=1000, help="ranks of the rank x step matrix")
    parser.add_argument("--matrix-steps", type=int, default=10)
    parser.add_argument("--matrix-only", action="store_true", help="only the rank x step matrix")
    args = parser.parse_args()
    if not RESNET_SEED.exists():
        print(f"bench_views: {SHARED} is missing; nothing to measure")
        return 1
    work = Path(tempfile.mkdtemp(prefix="bench-views-", dir=HERE / "out" if (HERE / "out").exists() else None))
    try:
        if not args.matrix_only:
            bench_routes(work, args.size_mb, args.repeat)
            bench_critical_path(work)
            bench_distributed(work, args.ranks)
        bench_matrix(args.matrix_ranks, args.matrix_steps)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
