"""A memory snapshot's parse job and first view, timed in fresh processes.

Targets (tb_plugin's memory snapshot issue): a snapshot of 1 M trace entries parsed in at most 10 s, its first view
answered in at most 300 ms, the parse's memory at most 3x the file's size. The snapshot is generated once by
``tests/snapshot_gen.py`` (``benchmark_snapshot``: a long training loop through a simulated caching allocator, frames
shared as torch shares them; no GPU recorded it) and kept in ``bench/out/``.

* parse: what a parser process does (``store.snapshots.parse_snapshot_into_cache``: map and read the pickle as plain
  data, derive the model, write it to the cache with its first answers), in a fresh interpreter per run; its peak
  memory is the process's high-water resident set (``VmHWM``: the mapped file's pages count too; not ``ru_maxrss``,
  which Linux carries over from the parent across ``exec``), against the file. Wall and CPU seconds are both given:
  on a shared machine the wall time also holds the time other processes had the cores.
* first view: a fresh process opens the cached model and answers what the page asks first: ``memory_snapshot``
  (stored), ``memory_snapshot/timeline`` at 1200 px, ``memory_snapshot/at`` at the peak (stored); then, not stored,
  ``at`` grouped by annotation and the allocator state at the end, each timed.

    python bench/bench_snapshot.py --entries 1000000 --repeat 3
    python bench/bench_snapshot.py --entries 50000 --repeat 1        # make test's smoke run
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
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"

_PARSE = """
import json, os, resource, sys, time
from profscope.tb_plugin.store import snapshots
from profscope.tb_plugin.store.cache import SourceIdentity
from profscope.tb_plugin.store.storage import FileAccess
path, cache = os.path.realpath(sys.argv[1]), sys.argv[2]
st = os.stat(path)
started, cpu = time.perf_counter(), time.process_time()
outcome = snapshots.parse_snapshot_into_cache(path, cache, SourceIdentity(path, st.st_size, st.st_mtime_ns), 0,
                                              FileAccess(roots=(os.path.dirname(path),)))
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
assert outcome.error is None, outcome.error
with open("/proc/self/status") as status:
    hwm = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_bytes": hwm}))
"""

_VIEW = """
import json, os, sys, time
started = time.perf_counter()
from profscope.tb_plugin.model.snapshot import read_snapshot_model
from profscope.tb_plugin.views import answers
from profscope.tb_plugin.views import memory_snapshot as view
from profscope.tb_plugin.views.encoding import to_json_bytes
imported = time.perf_counter() - started
cache = sys.argv[1]
path = next(os.path.join(cache, n) for n in os.listdir(cache) if n.endswith(".snapshot"))
times, sizes = {}, {}
def timed(name, compute):
    begun = time.perf_counter()
    body = to_json_bytes(compute())
    times[name] = (time.perf_counter() - begun) * 1000
    sizes[name] = len(body)
timed("open", lambda: {"devices": read_snapshot_model(path).devices})
model = read_snapshot_model(path)
device = view.device_facts(model)["device"]
timed("memory_snapshot", lambda: answers.snapshot_overview(model))
timed("timeline", lambda: view.timeline(model, device, width=1200))
timed("at_peak", lambda: answers.snapshot_at(model, device))
first = sum(times[k] for k in ("open", "memory_snapshot", "timeline", "at_peak"))
facts = view.device_facts(model)
span = facts["end"] - facts["start"]
timed("timeline_zoomed", lambda: view.timeline(model, device, facts["start"] + span * 0.4, facts["start"] + span * 0.41, 1200))
timed("at_by_annotation", lambda: view.at(model, device, group_by="annotation"))
timed("segments_end", lambda: view.segments(model, device))
print(json.dumps({"first_view_ms": first, "ms": times, "bytes": sizes, "import_s": imported,
                  "entries": facts["entries"], "allocations": facts["allocations"]}))
"""


def _run(script: str, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# Beyond this many entries the snapshot is written while it is made (snapshot_gen.write_benchmark_snapshot: the
# same data; pickle.dump would first hold every entry, about 12 GB at 20 M entries).
STREAMED_ABOVE = 2_000_000


def snapshot_file(entries: int) -> Path:
    """The generated snapshot of about ``entries`` entries (made once, kept in bench/out/)."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"snapshot_{entries}.pickle"
    if not path.exists():  # made in a child: this process stays small (its children's memory is measured)
        temporary = path.with_suffix(".tmp")
        if entries > STREAMED_ABOVE:
            script = ("import sys; sys.path.insert(0, sys.argv[1]); import snapshot_gen; "
                      "snapshot_gen.write_benchmark_snapshot(sys.argv[3], int(sys.argv[2]))")
        else:
            script = ("import pickle, sys; sys.path.insert(0, sys.argv[1]); import snapshot_gen; "
                      "pickle.dump(snapshot_gen.benchmark_snapshot(int(sys.argv[2])), open(sys.argv[3], 'wb'))")
        subprocess.run([sys.executable, "-c", script, str(HERE.parent / "tests"), str(entries), str(temporary)],
                       check=True)
        os.replace(temporary, path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--snapshot", type=Path, help="a snapshot pickle to use instead of a generated one")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    path = args.snapshot or snapshot_file(args.entries)
    size = path.stat().st_size
    print(f"snapshot {path.name}: {size / 1e6:.1f} MB")
    parses, views = [], []
    for run in range(args.repeat):
        with tempfile.TemporaryDirectory() as cache:
            parse = _run(_PARSE, str(path), cache)
            view = _run(_VIEW, cache)
        parses.append(parse)
        views.append(view)
        print(f"run {run + 1}: parse {parse['seconds']:.2f} s (CPU {parse['cpu']:.2f} s), peak "
              f"{parse['peak_bytes'] / 1e6:.0f} MB = {parse['peak_bytes'] / size:.2f}x the file; first view "
              f"{view['first_view_ms']:.0f} ms " + json.dumps({k: round(v, 1) for k, v in view["ms"].items()}))
    median_parse = statistics.median(p["seconds"] for p in parses)
    median_cpu = statistics.median(p["cpu"] for p in parses)
    median_ratio = statistics.median(p["peak_bytes"] / size for p in parses)
    median_view = statistics.median(v["first_view_ms"] for v in views)
    print(f"median of {args.repeat}: {views[0]['entries']} entries, {views[0]['allocations']} allocations; parse "
          f"{median_parse:.2f} s, CPU {median_cpu:.2f} s (target 10 s at 1 M entries), peak memory {median_ratio:.2f}x the file (target 3x), "
          f"first view {median_view:.0f} ms (target 300 ms); answer sizes " + json.dumps(views[0]["bytes"]))


if __name__ == "__main__":
    main()
