"""The efficiency figures on a cached big trace: the operator table with its efficiency columns, the kernel table,
the Roofline page and the Overview, in a fresh process (a TensorBoard restart: the model memory-mapped from the
cache, the work summary stored with it by the parser process).

The trace is made from a real training trace with record_shapes and Concrete Inputs (``--seed``; default AMD
TraceLens's ResNet training on an MI300X: convolutions forward and backward, batch norms, GEMMs, all with a number),
replicated to about ``--size-mb`` MB of JSON (``tracegen.py``). Printed per route: the median first answer over
``--repeat`` fresh processes, the median repeated answer, and, as the same-run baseline, the route's stored answer
alone (what the route answered before the efficiency columns: the enrichment's cost is the difference). Also the
derivation of the work summary itself (once per parse, in the parser's forked child), timed in a fresh process.

    python bench/bench_roofline.py --size-mb 1000 --repeat 3     # by hand
    python bench/bench_roofline.py --size-mb 20 --repeat 1       # make test's smoke run

Target (from the issue; printed, not asserted): the operator table with the new columns and the roofline answer a
cached 1 GB trace in 100 ms or less each.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SEED = REPO / "tests" / "data" / "tracelens" / "mi300" / "resnet_act_checkpoint" / "resnet_act_checkpoint.json.gz"
TARGET_MS = 100.0
ROUTES = [
    ("operators", {"group_by": "name"}, ("operators", "name")),
    ("operators", {"group_by": "input_shape"}, ("operators", "input_shape")),
    ("kernels", {"group_by": "name"}, ("kernels", "name")),
    ("roofline", {}, None),
    ("overview", {}, ("overview", None, None)),
]

CHILD = r"""
import json, sys, time
from tensorboard.plugins import base_plugin
from tensorboard.backend import application
from werkzeug.test import Client
from profscope.tb_plugin.model import stored_answers
from profscope.tb_plugin.server.plugin import ProfscopePlugin
from profscope.tb_plugin.views import answers
logdir, cache, route, params, key = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])
plugin = ProfscopePlugin(base_plugin.TBContext(logdir=logdir), cache_dir=cache, refresh_seconds=0.5)
client = Client(application.TensorBoardWSGI([plugin]))
t = time.perf_counter()
assert plugin.manager.wait_until_settled(3600)
out = {"ready_s": time.perf_counter() - t}
if route:
    model = plugin.manager.span("run", "worker0", None).model
    times = []
    for i in range(5):
        t = time.perf_counter()
        if route == "stored":  # the baseline: the route's stored answer as it was served before
            stored_answers.answer(model, tuple(key), lambda: None)
        else:
            r = client.get("/data/plugin/profscope/" + route, query_string={"run": "run", "worker": "worker0", **params})
            assert r.status_code == 200, (route, r.status_code, r.get_data()[:300])
            out["bytes"] = len(r.get_data())
        times.append(time.perf_counter() - t)
    out.update(first_ms=times[0] * 1000, repeat_ms=sorted(times[1:])[1] * 1000)
    summary = answers.work_summary(model)
    out["groups"] = len(summary["groups"]["name"])
    out["events"] = int(model.num_events)
plugin.manager.stop()
print(json.dumps(out))
"""

DERIVE_CHILD = r"""
import json, sys, time
from profscope.tb_plugin.model.array_file import read_model
from profscope.tb_plugin.views.quantities.efficiency import work_summary
model = read_model(sys.argv[1])
t = time.perf_counter()
summary = work_summary(model)
print(json.dumps({"derive_s": time.perf_counter() - t, "groups": len(summary["groups"]["name"])}))
"""


def _tracegen():
    spec = importlib.util.spec_from_file_location("tracegen", HERE / "tracegen.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["tracegen"] = module
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _run_child(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=1000.0, help="uncompressed size of the generated trace")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes to take medians over")
    parser.add_argument("--seed", type=Path, default=SEED, help="the real trace to replicate")
    parser.add_argument("--work", type=Path, default=None, help="folder for the trace and cache (default: a temp dir)")
    args = parser.parse_args(argv)
    tracegen = _tracegen()
    with tempfile.TemporaryDirectory(prefix="bench-roofline-") as tmp:
        work = args.work or Path(tmp)
        logdir = work / "logdir"
        (logdir / "run").mkdir(parents=True, exist_ok=True)
        trace = logdir / "run" / "worker0.1.pt.trace.json.gz"
        seed = tracegen.load_seed(args.seed)
        info = tracegen.write_trace(seed, trace, copies=tracegen.copies_for_target(seed, args.size_mb), gzip=True)
        os.utime(trace, (1, 1))
        print(f"trace: {info.events:,} events, {info.uncompressed_bytes / 1e6:.0f} MB uncompressed (from {args.seed.name})")
        cache = work / "cache"
        cold = _run_child(CHILD, str(logdir), str(cache), "", "{}", "null")
        print(f"cold: parsed, derived and cached in {cold['ready_s']:.1f} s")
        model_file = max((p for p in cache.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
        derive = [_run_child(DERIVE_CHILD, str(model_file))["derive_s"] for _ in range(max(1, args.repeat))]
        print(f"{'route':<34} {'first ms':>9} {'repeat ms':>10} {'stored first':>13} {'KB':>7}  target")
        groups = events = 0
        for route, params, key in ROUTES:
            runs = [_run_child(CHILD, str(logdir), str(cache), route, json.dumps(params), json.dumps(key))
                    for _ in range(max(1, args.repeat))]
            base = [_run_child(CHILD, str(logdir), str(cache), "stored", "{}", json.dumps(key))["first_ms"]
                    for _ in range(max(1, args.repeat))] if key is not None else []
            groups, events = runs[0]["groups"], runs[0]["events"]
            label = route + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")
            first = statistics.median(r["first_ms"] for r in runs)
            repeat = statistics.median(r["repeat_ms"] for r in runs)
            stored = f"{statistics.median(base):>13.1f}" if base else f"{'-':>13}"
            target = f"<= {TARGET_MS:.0f} ms: {'met' if first <= TARGET_MS else 'missed'}" \
                if route in ("operators", "roofline") else ""
            print(f"{label:<34} {first:>9.1f} {repeat:>10.1f} {stored} {runs[0]['bytes'] / 1024:>7.0f}  {target}")
        print(f"work summary: {groups} operator groups over {events:,} events; derived in "
              f"{statistics.median(derive) * 1000:.0f} ms (median of {len(derive)}, fresh process, parser side)")
        print("first ms: the first answer in a fresh process (model memory-mapped, stored answers read); stored first: "
              "the route's stored answer alone in a fresh process (the baseline: what it served before)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
