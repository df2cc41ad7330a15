"""Traces that other teams did not mean to write: a huge event name, and a long header before the events.

Two measurements, each in a fresh interpreter:

* ``--name-mb N``: a real trace (tests/data, torch 2.13) with one more operator whose name is N MB, parsed as a
  parser process parses it (``store.parse_jobs.parse_into_cache``: decode, model, cache file, precomputed answers).
  Printed: the parse's peak RSS (parser process, and its forked helpers), the size of the stored answers and of
  the model file, and the parse-memory estimate (``ingest/footprint.py``) that the parser pool admits it by. An
  answer's size must not follow the name's size, and the estimate must cover the peak.
* ``--header-mb N``: the verdict of discovery's sniffer (``ingest/chrome/sniff.py``) on a document whose events
  follow an N MB ``metadata`` value, plain and gzipped: median seconds of ``--repeat`` runs, against
  ``msgspec.json.decode`` of the same header as a floor (what a parse of the header would cost), and the peak of
  Python's allocations (tracemalloc).

    python bench/bench_long_texts.py --name-mb 200 --header-mb 5      # by hand
    python bench/bench_long_texts.py --name-mb 4 --header-mb 1 --repeat 1   # smoke run (make test)
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEED = HERE.parent / "tests/data/torch213/conv_cpu_memory/worker0.1795303453480506115.pt.trace.json.gz"

_ONE_PARSE = """
import json, os, resource, sys, tempfile
from profscope.tb_plugin.ingest.footprint import estimate_file_parse_bytes
from profscope.tb_plugin.store import parse_jobs
from profscope.tb_plugin.store.cache import SourceIdentity
from profscope.tb_plugin.store.storage import FileAccess
trace = os.path.realpath(sys.argv[1])
st = os.stat(trace)
with tempfile.TemporaryDirectory() as cache:
    outcome = parse_jobs.parse_into_cache(trace, cache, SourceIdentity(trace, st.st_size, st.st_mtime_ns), 0,
                                           FileAccess(roots=(os.path.dirname(trace),)))
    if outcome.error:
        sys.exit(f"the parse failed: {outcome.error}")
    files = {}
    for folder, _, names in os.walk(cache):
        for name in names:
            files[name] = os.path.getsize(os.path.join(folder, name))
def high_water_mb():
    # VmHWM, not ru_maxrss: on Linux exec() carries the parent's peak (the trace's generation) into ru_maxrss.
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({
    "peak_rss_mb": {"parser": high_water_mb(),
                    "helpers": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024},
    "answers_mb": sum(size for name, size in files.items() if name.endswith("views.json")) / 1e6,
    "model_mb": sum(size for name, size in files.items() if not name.endswith("views.json")) / 1e6,
    "estimate_mb": estimate_file_parse_bytes(st.st_size, False) / 1e6,
}))
"""


def huge_name_trace(path: Path, name_bytes: int) -> None:
    """The seed trace with one more operator, inside its first step and in the middle of the events, named by
    ``name_bytes`` bytes of text."""
    doc = json.loads(gzip.decompress(SEED.read_bytes()))
    events = doc["traceEvents"]
    step = next(e for e in events if str(e.get("name", "")).startswith("ProfilerStep#"))
    pid, tid = step["pid"], step["tid"]
    events.insert(len(events) // 2, {"ph": "X", "cat": "cpu_op", "name": "aten::" + "n" * name_bytes, "pid": pid, "tid": tid,
                   "ts": step["ts"] + 1, "dur": 2, "args": {"External id": 987654321}})
    path.write_text(json.dumps(doc))


def measure_huge_name(name_mb: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "huge_name.pt.trace.json"
        huge_name_trace(trace, int(name_mb * 1e6))
        done = subprocess.run([sys.executable, "-c", _ONE_PARSE, str(trace)], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"bench_long_texts: the parse failed:\n{done.stderr[-2000:]}")
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        result["trace_mb"] = trace.stat().st_size / 1e6
        return result


def long_header(header_bytes: int) -> bytes:
    entry = {"value": 0.25, "flags": [1, 2, 3, 4], "path": "/opt/run \"x\"\\bin", "env": {"A": "9", "seq": [[1], []]}}
    text = json.dumps(entry)
    count = header_bytes // (len(text) + 16) + 1
    header = "{" + ", ".join(f'"setting_{i}": {text}' for i in range(count)) + "}"
    return ('{"metadata": ' + header + ', "traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}]}').encode()


def measure_sniff(header_mb: float, repeat: int) -> dict[str, Any]:
    import io

    import msgspec

    from profscope.tb_plugin.ingest.chrome import sniff

    plain = long_header(int(header_mb * 1e6))
    packed = gzip.compress(plain, 6)
    out: dict[str, Any] = {"header_mb": plain.index(b'"traceEvents"') / 1e6}
    for label, data in (("plain", plain), ("gzip", packed)):
        seconds = []
        for _ in range(repeat):
            begun = time.perf_counter()
            verdict = sniff.sniff_trace(io.BytesIO(data))
            seconds.append(time.perf_counter() - begun)
            assert verdict == sniff.TRACE, verdict
        tracemalloc.start()
        sniff.sniff_trace(io.BytesIO(data))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        out[label] = {"median_s": statistics.median(seconds), "peak_alloc_mb": peak / 1e6}
    seconds = []
    for _ in range(repeat):
        begun = time.perf_counter()
        msgspec.json.decode(plain[plain.index(b"{", 1):plain.index(b', "traceEvents"')])
        seconds.append(time.perf_counter() - begun)
    out["msgspec_decode_header_median_s"] = statistics.median(seconds)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name-mb", type=float, default=20.0, help="size of the huge event name, MB (20)")
    parser.add_argument("--header-mb", type=float, default=5.0, help="size of the header before the events, MB (5)")
    parser.add_argument("--repeat", type=int, default=5, help="sniffing runs per document (5)")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    if args.name_mb > 0:
        parse = measure_huge_name(args.name_mb)
        peak = parse["peak_rss_mb"]
        print(f"huge name {args.name_mb:g} MB (trace {parse['trace_mb']:.1f} MB): parser peak RSS "
              f"{peak['parser']:.0f} MB (helpers {peak['helpers']:.0f} MB), stored answers {parse['answers_mb']:.2f} MB, "
              f"model file {parse['model_mb']:.1f} MB, parse-memory estimate {parse['estimate_mb']:.0f} MB")
        if max(peak.values()) > parse["estimate_mb"]:
            raise SystemExit("bench_long_texts: the parse-memory estimate does not cover the measured peak")
    if args.header_mb > 0:
        found = measure_sniff(args.header_mb, args.repeat)
        print(f"sniff, header {found['header_mb']:.1f} MB: plain {found['plain']['median_s'] * 1000:.0f} ms "
              f"(peak alloc {found['plain']['peak_alloc_mb']:.1f} MB), gzip {found['gzip']['median_s'] * 1000:.0f} ms "
              f"(peak alloc {found['gzip']['peak_alloc_mb']:.1f} MB); msgspec decode of the header "
              f"{found['msgspec_decode_header_median_s'] * 1000:.0f} ms (median of {args.repeat})")


if __name__ == "__main__":
    main()
