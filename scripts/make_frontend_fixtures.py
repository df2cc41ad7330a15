#!/usr/bin/env python3
"""Writes the frontend's JSON test fixtures (frontend/test/fixtures/*.json) from the real backend.

Each fixture is what a route of the plugin answers, through TensorBoard's WSGI app, on a logdir made of the
traces of tests/data (and, for the Analyses page, the hand-made trace of tests/test_analyses.py): the frontend's
tests then read the backend's own answers, and tests/test_frontend_fixtures.py fails when an answer changes and
the fixtures were not made again. Long lists are cut to their first rows (``CUTS``) so that the files stay small;
the answers are otherwise as the backend gives them, and the same on every run (no clock, no random order).

    .venv/bin/python scripts/make_frontend_fixtures.py           write the fixtures
    .venv/bin/python scripts/make_frontend_fixtures.py --check   exit 1 when a fixture differs (writes nothing)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "frontend" / "test" / "fixtures"
sys.path.insert(0, str(REPO / "tests"))

RESNET = "kineto_resnet50/resnet50_num_workers_0"
RESNET_SPANS = ("1623143089861", "1623143566756")
MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"


@dataclass(frozen=True)
class Keep:
    """Which entries of a list a fixture keeps: the first ``first``, and every later one that ``also`` accepts."""
    first: int
    also: Optional[Callable[[Any], bool]] = None


@dataclass(frozen=True)
class Fixture:
    name: str
    route: str
    params: dict[str, Any]
    # Lists cut short: a path of keys ("rows", "by_operator" ...) -> how many to keep, or a Keep.
    cuts: dict[str, "int | Keep"] = field(default_factory=dict)


def span(run: str, worker: str = "worker0", name: Optional[str] = None) -> dict[str, Any]:
    return {"run": run, "worker": worker, **({"span": name} if name is not None else {})}


FIXTURE_LIST: list[Fixture] = [
    Fixture("overview_gpu.json", "overview", span("resnet", name=RESNET_SPANS[0])),
    Fixture("overview_cpu.json", "overview", span("mlp", name="1795303442092317655")),
    Fixture("overview_host_cpu.json", "overview", span("mlp_writer")),
    Fixture("operators_gpu.json", "operators", span("resnet", name=RESNET_SPANS[0]), {"rows": 7}),
    Fixture("operators_cpu_stack.json", "operators", {**span("mlp", name="1795303442092317655"), "group_by": "stack"},
            {"rows": 6}),
    Fixture("operator_detail_gpu.json", "operators/detail",
            {**span("resnet", name=RESNET_SPANS[0]), "name": "aten::cudnn_convolution"},
            {"stacks": 3, "kernels": 4, "occurrences": 5}),
    Fixture("kernels_gpu.json", "kernels", span("resnet", name=RESNET_SPANS[0]), {"rows": 5}),
    Fixture("kernels_cpu.json", "kernels", span("mlp", name="1795303442092317655")),
    Fixture("flamegraph_resnet_device.json", "flamegraph", {**span("resnet", name=RESNET_SPANS[0]), "weight": "device"}),
    Fixture("memory_conv_cpu.json", "memory", {**span("conv_cpu"), "limit": 12}, {"by_operator": 10}),
    Fixture("modules_transformer.json", "modules", span("transformer")),
    Fixture("datapipeline_w0.json", "datapipeline", span("w0")),
    Fixture("datapipeline_ascend.json", "datapipeline", span("ascend", worker="rank1")),
    Fixture("steptrace_mlp.json", "steptrace", span("mlp", name="1795303442092317655")),
    Fixture("steptrace_ascend.json", "steptrace", span("ascend", worker="rank1")),
    Fixture("distributed_ddp_gloo.json", "distributed", {"run": "gloo"}, {"collectives": 4}),
    Fixture("compare_resnet.json", "compare",
            {"base_run": "resnet", "base_worker": "worker0", "base_span": RESNET_SPANS[0],
             "exp_run": "resnet", "exp_worker": "worker0", "exp_span": RESNET_SPANS[1]}, {"operators": 12, "kernels": 8}),
    Fixture("compare_dataloader.json", "compare",
            {"base_run": "w0", "base_worker": "worker0", "exp_run": "w2", "exp_worker": "worker0", "group_by": "input_shape"},
            {"operators": Keep(8, lambda row: row["side"] != "both")}),
    Fixture("runs_table.json", "runs/table", {}, {"rows": Keep(0, lambda row: row["run"] in ("resnet", "w0", "w2"))}),
    # Five streams of one GPU of an NCCL rank (HTA's ws128 trace): the busiest is not the most idle.
    Fixture("idle_ws128.json", "analyses/idle", span("ws128", worker="rank0"), {"longest_gaps": 3}),
]
# The Analyses page's routes on the hand-made trace, with their parameters (its ops launch 2 kernels at most).
ANALYSES: dict[str, dict[str, Any]] = {"idle": {}, "launches": {}, "queues": {}, "sequences": {"min_length": 2},
                                       "annotations": {}}


def _logdir(root: Path) -> Path:
    """The runs the fixtures are asked of, copied from tests/data (the gzipped ones restored)."""
    import real_traces
    from handmade import write
    from test_analyses import one_stream_trace

    from profscope.writer.manifest import Manifest

    logdir = root / "logdir"

    def copy(relative: str, run: str, name: Optional[str] = None) -> Path:
        source = real_traces.path(relative)
        target = logdir / run / (name or source.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return target

    for span_name in RESNET_SPANS:
        copy(f"{RESNET}/worker0.{span_name}.pt.trace.json.gz", "resnet")
    copy(MLP, "mlp")
    copy("torch213/conv_cpu_memory/worker0.1795303453480506115.pt.trace.json.gz", "conv_cpu")
    copy("torch213/transformer_infer/worker0.1795303443272268206.pt.trace.json.gz", "transformer")
    copy("torch213/dataloader_bound_w0/worker0.1795303454060827054.pt.trace.json.gz", "w0")
    copy("torch213/dataloader_bound_w2/worker0.1795303454986831382.pt.trace.json.gz", "w2")
    for path in sorted(real_traces.path("torch213/ddp_gloo_2ranks").glob("rank*.pt.trace.json.gz")):
        copy(str(path.relative_to(real_traces.root())), "gloo")
    shutil.copytree(real_traces.path("mindspore/ascend_run_2_profiler"), logdir / "ascend")
    copy("hta/sampled_ws128_trace_filter/sampled_rank-0.json.gz", "ws128")
    # A writer span with a fixed host CPU record, as a writer with CPU sampling leaves it.
    writer_dir = logdir / "mlp_writer" / "plugins" / "profscope"
    trace_name = "worker0.1.pytorch.trace.json.gz"
    copy(MLP, "mlp_writer/plugins/profscope", trace_name)
    manifest = Manifest(worker="worker0", span="1", framework="pytorch", framework_version="2.13.0",
                        profscope_version="0.1.0", trace_file=trace_name, wall_time=1763769600.0, step_range=(2, 4),
                        batch_size=32, cpu_utilization=HOST_CPU)
    (writer_dir / "worker0.1.manifest.json").write_bytes(manifest.to_json_bytes())
    write(logdir / "handmade" / "worker0.1.pt.trace.json", one_stream_trace())
    # Finished files (a day old): the discovery never waits for them to settle.
    finished = time.time() - 86400
    for path in logdir.rglob("*"):
        os.utime(path, (finished, finished))
    return logdir


# The host CPU record of the writer span (the manifest's units: seconds and ratios).
HOST_CPU: dict[str, Any] = {
    "source": "proc_stat", "cpu_count": 2, "interval": 0.05, "start": 1763769600.0, "duration": 0.618429,
    "process": 0.674, "process_max": 0.981, "system": 1.0, "system_max": 1.0,
    "samples": {"time": [0.0, 0.063, 0.118, 0.179, 0.237, 0.293, 0.349, 0.404, 0.46, 0.516, 0.586],
                "process": [0.866, 0.981, 0.677, 0.647, 0.73, 0.694, 0.523, 0.455, 0.959, 0.303, 0.632],
                "system": [1.0] * 11},
}


def _cut(answer: Any, path: str, keep: "int | Keep") -> None:
    """Cuts the list at ``path`` (keys joined by dots) to the entries ``keep`` keeps, in place and in order."""
    rule = keep if isinstance(keep, Keep) else Keep(keep)
    *parents, last = path.split(".")
    node = answer
    for key in parents:
        node = node[key]
    node[last] = [entry for i, entry in enumerate(node[last])
                  if i < rule.first or (rule.also is not None and rule.also(entry))]


def _answers(get: Callable[..., tuple[int, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fixture in FIXTURE_LIST:
        status, answer = get(fixture.route, **fixture.params)
        if status != 200:
            raise RuntimeError(f"{fixture.name}: {fixture.route} answered {status}: {answer}")
        for path, keep in fixture.cuts.items():
            _cut(answer, path, keep)
        out[fixture.name] = answer
    analyses = {}
    for name, params in ANALYSES.items():
        status, answer = get(f"analyses/{name}", **span("handmade", name="1"), **params)
        if status != 200:
            raise RuntimeError(f"analyses/{name} answered {status}: {answer}")
        analyses[name] = answer
    out["analyses_handmade.json"] = analyses
    return out


def fixture_texts() -> dict[str, str]:
    """Every fixture's file text, from a fresh plugin over a fresh logdir."""
    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug import test as werkzeug_test

    from profscope.tb_plugin.server.plugin import ProfscopePlugin

    with tempfile.TemporaryDirectory(prefix="profscope-fixtures-") as folder:
        root = Path(folder)
        logdir = _logdir(root)
        plugin = ProfscopePlugin(base_plugin.TBContext(logdir=str(logdir)), cache_dir=str(root / "cache"),
                                 refresh_seconds=0.5)
        try:
            client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]))

            def get(route: str, **params: Any) -> tuple[int, Any]:
                response = client.get(f"/data/plugin/profscope/{route}", query_string=params)
                return response.status_code, json.loads(response.get_data())

            if not plugin.manager.wait_until_settled(300):
                raise RuntimeError("the fixture runs did not finish loading")
            answers = _answers(get)
        finally:
            plugin.manager.stop()
    return {name: json.dumps(answer, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
            for name, answer in sorted(answers.items())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when a fixture differs")
    args = parser.parse_args()
    texts = fixture_texts()
    stale = sorted(name for name, text in texts.items()
                   if not (FIXTURES / name).is_file() or (FIXTURES / name).read_text(encoding="utf-8") != text)
    extra = sorted(p.name for p in FIXTURES.glob("*.json") if p.name not in texts)
    if args.check:
        for name in stale + extra:
            print(f"{name}: {'not made by this script' if name in extra else 'differs from the backend'}s answer")
        return 1 if stale or extra else 0
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name in stale:
        (FIXTURES / name).write_text(texts[name], encoding="utf-8")
        print(f"wrote frontend/test/fixtures/{name}")
    for name in extra:
        (FIXTURES / name).unlink()
        print(f"removed frontend/test/fixtures/{name} (not made by this script)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
