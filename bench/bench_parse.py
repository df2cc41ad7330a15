"""The parser's whole cold path (decode, model build, cache write, derivations), timed in fresh processes.

What a parser worker does for one trace (``store.parse_jobs.parse_into_cache``), without TensorBoard around it. With
``--against DIR`` (a folder holding another checkout's ``profscope`` package, e.g. one made from ``git archive``),
runs of the two alternate, so that both meet the same machine: on a virtual machine whose speed and memory costs drift
by tens of percent within minutes, only alternating runs compare two versions. Prints every run and the medians, each
with its phases (decode until the merge, merge, model build, derivations: where the parse job calls them).

    mkdir -p ../old/profscope && touch ../old/profscope/__init__.py
    git archive <commit> tb_plugin writer | tar -x -C ../old/profscope
    python bench/bench_parse.py --trace big.pt.trace.json.gz --repeat 3 --against ../old
    python bench/bench_parse.py --events 200000 --repeat 1          # a generated trace (tracegen.py)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
SEED = HERE.parent / "tests/data/kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"

# Run in a fresh interpreter per measurement: nothing of one parse (heap, page cache of the model) helps the next.
_ONE_PARSE = """
import json, os, resource, sys, tempfile, time
from profscope.tb_plugin.store import parse_jobs
# Where the time goes: each phase timed where the parse job calls it (from the start until the merge is the decode).
phases, marks = {}, {}
def timed(module, name, phase):
    original = getattr(module, name)
    def wrapper(*args, **kwargs):
        begun = time.perf_counter()
        marks.setdefault(phase, begun)
        try:
            return original(*args, **kwargs)
        finally:
            phases[phase] = phases.get(phase, 0.0) + time.perf_counter() - begun
    setattr(module, name, wrapper)
from profscope.tb_plugin.ingest import load
from profscope.tb_plugin.ingest.chrome import parallel
from profscope.tb_plugin.store import precomputed
timed(parallel, "merge", "merge")
timed(load, "build_model", "build")
timed(precomputed, "derive", "derivations")
from profscope.tb_plugin.store.cache import SourceIdentity
from profscope.tb_plugin.store.storage import FileAccess
trace = os.path.realpath(sys.argv[1])
st = os.stat(trace)
with tempfile.TemporaryDirectory() as cache:
    started = time.perf_counter()
    outcome = parse_jobs.parse_into_cache(trace, cache, SourceIdentity(trace, st.st_size, st.st_mtime_ns), 0,
                                           FileAccess(roots=(os.path.dirname(trace),)))
    seconds = time.perf_counter() - started
if outcome.error:
    sys.exit(f"the parse failed: {outcome.error}")
first = marks.get("merge", marks.get("build"))
phases["decode"] = first - started if first is not None else None
peak_mb = {"parser": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # kB on Linux
           "helpers": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
print(json.dumps({"seconds": seconds, "phases": phases, "peak_rss_mb": peak_mb}))
"""
# Printed per run, in this order (the rest of a run: reading the header, cache write, publishing).
PHASES = ("decode", "merge", "build", "derivations")


def one_parse(trace: Path, package_dir: str | None) -> dict[str, Any]:
    """One parse job in a fresh interpreter: {"seconds": total, "phases": {phase: seconds}}."""
    env = dict(os.environ)
    if package_dir:
        env["PYTHONPATH"] = package_dir + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", _ONE_PARSE, str(trace)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_parse: a parse failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _phases_text(phases: dict[str, Optional[float]]) -> str:
    return ", ".join(f"{name} {phases[name]:.2f}" for name in PHASES if phases.get(name) is not None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--trace", type=Path, help="a Kineto trace (.json or .json.gz)")
    source.add_argument("--events", type=int, default=200_000, help="generate a trace of this many events")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", help="a folder holding another checkout's profscope package, run alternately")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        trace = args.trace
        if trace is None:
            trace = Path(scratch) / f"generated.{args.events}.pt.trace.json.gz"
            subprocess.run([sys.executable, str(HERE / "tracegen.py"), "--seed", str(SEED), "--events",
                            str(args.events), "-o", str(trace)], check=True, capture_output=True)
        versions = {"this checkout": None}
        if args.against:
            versions["--against"] = args.against
        times: dict[str, list[float]] = {name: [] for name in versions}
        phases: dict[str, dict[str, list[float]]] = {name: {} for name in versions}
        peaks: dict[str, list[float]] = {name: [] for name in versions}
        for run in range(1, args.repeat + 1):
            for name, package_dir in versions.items():
                result = one_parse(trace, package_dir)
                times[name].append(result["seconds"])
                for phase, seconds in result["phases"].items():
                    if seconds is not None:
                        phases[name].setdefault(phase, []).append(seconds)
                peaks[name].append(result["peak_rss_mb"]["parser"])
                print(f"run {run} {name}: {result['seconds']:.2f} s ({_phases_text(result['phases'])}; peak RSS "
                      f"{result['peak_rss_mb']['parser']:,.0f} MB, helpers {result['peak_rss_mb']['helpers']:,.0f} MB)",
                      flush=True)
        title = f"{trace.name}: {trace.stat().st_size / 1e6:,.1f} MB on disk"
    print(f"\n== {title}; parse job (decode, build, cache write, derivations), medians of {args.repeat} ==")
    for name, values in times.items():
        medians = {phase: statistics.median(v) for phase, v in phases[name].items()}
        print(f"  {name:<16} {statistics.median(values):7.2f} s   ({', '.join(f'{v:.2f}' for v in values)})")
        print(f"  {'':<16} phases: {_phases_text(medians)}; the parser's peak RSS {statistics.median(peaks[name]):,.0f} MB")
    if len(times) == 2:
        this, other = (statistics.median(v) for v in times.values())
        print(f"  this / --against {this / other:7.2f} x")


if __name__ == "__main__":
    main()
