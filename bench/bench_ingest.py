"""Ingest benchmark: how fast and how lean is opening a big Kineto trace, against a msgspec floor.

For each size, a trace is generated from a real seed (``bench/tracegen.py``), as
plain ``.json`` and/or ``.json.gz``, then each measurement runs in a fresh
Python process (so its peak RSS is that process's own: ``VmHWM``, see
``_peak_rss_mb``), repeated ``--repeat`` times, and the median is reported:

* floor: read (and gunzip) the file and decode it with msgspec into typed structs
  (``ph, name, cat, ts, dur, pid, tid`` and ``args`` kept raw) -- the least a
  Python ingest must do;
* cold: ``profscope.tb_plugin.ingest.load.load_trace(path)``;
* cache build: ``ModelCache(dir).load_or_build(path)`` on an empty cache (ingest + cache write);
* warm: ``ModelCache(dir).load_or_build(path)`` again, in a new process (reads the cache);
* cold / floor.

Times cover the work only (reading the file included, interpreter start-up and
imports excluded). The generated files sit in the OS page cache, so "cold" is a
cold process, not a cold disk.

Usage::

    python bench/bench_ingest.py --sizes 100,1000            # by hand
    python bench/bench_ingest.py --sizes 20 --repeat 1       # CI
    python bench/bench_ingest.py --sizes 100 --gzip no --json bench/out/results.json --keep
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import msgspec

try:
    from isal.igzip import decompress as _gunzip
except ImportError:  # pragma: no cover - isal is a product dependency
    from gzip import decompress as _gunzip

HERE = Path(__file__).resolve().parent
DEFAULT_SEED = (
    HERE.parent
    / "tests"
    / "data"
    / "kineto_resnet50"
    / "resnet50_num_workers_0"
    / "worker0.1623143089861.pt.trace.json.gz"
)
CHILD_TIMEOUT_SECONDS = 1800
MB = 1_000_000
KINDS = ("floor", "cold", "cold_single", "cache_build", "warm")
LABELS = {
    "floor": "floor (msgspec typed decode)",
    "cold": "cold load_trace (2 processes, as the parser runs)",
    "cold_single": "cold load_trace, one process",
    "cache_build": "cold + cache write",
    "warm": "warm (from cache)",
}


# --------------------------------------------------------------------------- child side


def _read_trace_input(path: str) -> bytes:
    """The file's JSON bytes, gunzipped with ISA-L like the product's reader (tb_plugin/ingest/chrome/reader.py)."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:2] == b"\x1f\x8b":
        return _gunzip(data)
    return data


class FloorEvent(msgspec.Struct, gc=False):
    """The fields every view needs; args stay undecoded bytes."""

    ph: str = ""
    name: str = ""
    cat: str = ""
    ts: float = 0.0
    dur: float = 0.0
    pid: Union[int, str] = 0
    tid: Union[int, str] = 0
    args: msgspec.Raw = msgspec.Raw()


class FloorTrace(msgspec.Struct, gc=False):
    traceEvents: list[FloorEvent]


def _floor(path: str) -> dict[str, Any]:
    decoder = msgspec.json.Decoder(FloorTrace)
    started = time.perf_counter()
    trace = decoder.decode(_read_trace_input(path))
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "events": len(trace.traceEvents)}


def _model_events(model: object) -> Optional[int]:
    events = getattr(model, "num_events", None)
    return events if isinstance(events, int) else None


def _cold(path: str, parallel: bool) -> dict[str, Any]:
    try:
        from profscope.tb_plugin.ingest.load import load_trace  # type: ignore[import-not-found]
    except ImportError as error:
        return {"unavailable": f"profscope.tb_plugin.ingest.load.load_trace: {error}"}
    started = time.perf_counter()
    model = load_trace(path, parallel=parallel)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "events": _model_events(model)}


def _cached(path: str, cache_dir: str) -> dict[str, Any]:
    try:
        from profscope.tb_plugin.store.cache import ModelCache  # type: ignore[import-not-found]
    except ImportError as error:
        return {"unavailable": f"profscope.tb_plugin.store.cache.ModelCache: {error}"}
    started = time.perf_counter()
    model = ModelCache(cache_dir).load_or_build(path, parallel=True)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "events": _model_events(model)}


def _peak_rss_mb() -> float:
    """This process's own peak RSS.

    ru_maxrss is not enough on Linux: exec() carries the spawning process's peak
    into the new process's ru_maxrss, so a big parent would inflate it. VmHWM is
    the high-water mark of this process's own address space.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_child(kind: str, path: str, cache_dir: Optional[str]) -> dict[str, Any]:
    import resource

    baseline_rss_mb = _peak_rss_mb()
    if kind == "floor":
        result = _floor(path)
    elif kind == "cold":
        result = _cold(path, parallel=True)
    elif kind == "cold_single":
        result = _cold(path, parallel=False)
    elif kind in ("cache_build", "warm"):
        if cache_dir is None:
            raise SystemExit("--cache-dir is required")
        result = _cached(path, cache_dir)
    else:
        raise SystemExit(f"unknown measurement {kind}")
    result["max_rss_mb"] = _peak_rss_mb()
    result["ru_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # A forked decoding helper's own peak (it shares the input buffer with this process).
    result["helper_max_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result["baseline_rss_mb"] = baseline_rss_mb
    return result


# --------------------------------------------------------------------------- parent side


@dataclass
class Measurement:
    """One kind of measurement on one file, over --repeat fresh processes."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    unavailable: Optional[str] = None
    error: Optional[str] = None

    def median(self, key: str) -> Optional[float]:
        values = [run[key] for run in self.runs if isinstance(run.get(key), (int, float))]
        return statistics.median(values) if values else None


@dataclass
class FileResult:
    target_mb: float
    input: str  # "json" or "json.gz"
    path: str
    mb: float  # uncompressed
    disk_mb: float
    events: int
    copies: int
    generate_seconds: float
    measurements: dict[str, Measurement] = field(default_factory=dict)

    def cold_over_floor(self) -> Optional[float]:
        cold = self.measurements["cold"].median("seconds") if "cold" in self.measurements else None
        floor = self.measurements["floor"].median("seconds") if "floor" in self.measurements else None
        return cold / floor if cold is not None and floor else None


def _measure_once(kind: str, path: Path, cache_dir: Optional[Path]) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--path", str(path)]
    if cache_dir is not None:
        command += ["--cache-dir", str(cache_dir)]
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=CHILD_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {CHILD_TIMEOUT_SECONDS} s"}
    lines = completed.stdout.strip().splitlines()
    if completed.returncode != 0 or not lines:
        last_error = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {completed.returncode}: {last_error}"}
    return json.loads(lines[-1])


def _record(measurement: Measurement, outcome: dict[str, Any]) -> None:
    if "unavailable" in outcome:
        measurement.unavailable = outcome["unavailable"]
    elif "error" in outcome:
        measurement.error = outcome["error"]
    else:
        measurement.runs.append(outcome)


def measure_file(result: FileResult, repeat: int, work_dir: Path, wanted: set[str]) -> None:
    path = Path(result.path)
    for kind in ("floor", "cold", "cold_single"):
        if kind not in wanted and not (kind == "cold_single" and "cold" in wanted):
            continue
        measurement = result.measurements.setdefault(kind, Measurement())
        for _ in range(repeat):
            _record(measurement, _measure_once(kind, path, None))
            if measurement.unavailable or measurement.error:
                break
    if "cache" not in wanted:
        return
    build = result.measurements.setdefault("cache_build", Measurement())
    warm = result.measurements.setdefault("warm", Measurement())
    for _ in range(repeat):
        cache_dir = Path(tempfile.mkdtemp(prefix="cache-", dir=work_dir))
        try:
            _record(build, _measure_once("cache_build", path, cache_dir))
            if build.unavailable or build.error:
                warm.unavailable, warm.error = build.unavailable, build.error
                break
            _record(warm, _measure_once("warm", path, cache_dir))
            if warm.error:
                break
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)


def _load_tracegen() -> Any:
    """bench/ is not a package: load the generator beside this file by path."""
    spec = importlib.util.spec_from_file_location("profscope_bench_tracegen", HERE / "tracegen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def generate_files(seed_path: Path, sizes: list[float], inputs: list[str], out_dir: Path) -> list[dict[str, Any]]:
    """Write the benchmark traces (runs in a child: the seed's templates must not swell the parent)."""
    tracegen = _load_tracegen()
    seed = tracegen.load_seed(seed_path)
    files = []
    for size in sizes:
        copies = tracegen.copies_for_target(seed, target_mb=size)
        for input_kind in inputs:
            path = out_dir / f"bench{size:g}mb.{copies}.pt.trace.{input_kind}"
            generated = tracegen.write_trace(seed, path, copies=copies, gzip=input_kind == "json.gz")
            disk_mb = path.stat().st_size / MB
            files.append(
                {
                    "target_mb": size,
                    "input": input_kind,
                    "path": str(path),
                    "mb": generated.mb,
                    "disk_mb": disk_mb,
                    "events": generated.events,
                    "copies": copies,
                    "generate_seconds": generated.seconds,
                }
            )
            print(
                f"generated {path.name}: {generated.mb:,.1f} MB ({disk_mb:,.1f} MB on disk), "
                f"{generated.events:,} events in {generated.seconds:.1f} s "
                f"({generated.mb / generated.seconds:,.0f} MB/s)",
                file=sys.stderr,
                flush=True,
            )
    return files


def generate_in_child(seed_path: Path, sizes: list[float], inputs: list[str], out_dir: Path) -> list[FileResult]:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        "generate",
        "--seed",
        str(seed_path),
        "--sizes",
        ",".join(f"{size:g}" for size in sizes),
        "--gzip",
        {("json",): "no", ("json.gz",): "yes"}.get(tuple(inputs), "both"),
        "--out-dir",
        str(out_dir),
    ]
    completed = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    return [FileResult(**row) for row in json.loads(completed.stdout.strip().splitlines()[-1])]


def _cell(value: Optional[float], fmt: str) -> str:
    """value formatted as fmt (e.g. "9.3f"), or a dash of the same width."""
    if value is not None:
        return format(value, fmt)
    return "-".rjust(int(fmt.split(".")[0] or 0))


def print_file_table(result: FileResult) -> None:
    print(
        f"\n== {result.mb:,.1f} MB uncompressed, {result.events:,} events, .{result.input} "
        f"({result.disk_mb:,.1f} MB on disk), median of {max((len(m.runs) for m in result.measurements.values()), default=0)} =="
    )
    print(f"  {'measurement':<30} {'seconds':>9} {'MB/s':>8} {'peak RSS MB':>12}")
    for kind in KINDS:
        if kind not in result.measurements:
            continue  # not asked for (--measure)
        measurement = result.measurements[kind]
        label = LABELS[kind]
        if measurement.unavailable:
            print(f"  {label:<30} not available")
            continue
        if measurement.error and not measurement.runs:
            print(f"  {label:<30} error: {measurement.error}")
            continue
        seconds = measurement.median("seconds")
        # A warm load maps the cache; a throughput in trace MB/s would mean nothing.
        rate = result.mb / seconds if seconds and kind != "warm" else None
        print(f"  {label:<30} {_cell(seconds, '9.3f')} {_cell(rate, '8.0f')} {_cell(measurement.median('max_rss_mb'), '12.0f')}")
        if measurement.error:
            print(f"  {'':<30} note: a later run failed: {measurement.error}")
        wrong = [n for run in measurement.runs if isinstance(n := run.get("events"), int) and n != result.events]
        if wrong:
            print(f"  {'':<30} note: reported {wrong[0]:,} events, the file has {result.events:,}")
    ratio = result.cold_over_floor()
    print(f"  {'cold / floor':<30} {_cell(ratio, '9.2f') if ratio is not None else 'not available'}")


def print_summary(results: list[FileResult]) -> None:
    """One Markdown row per file (medians), ready to paste into bench/README.md."""

    def seconds_and_rss(result: FileResult, kind: str) -> str:
        measurement = result.measurements.get(kind, Measurement())
        seconds, rss = measurement.median("seconds"), measurement.median("max_rss_mb")
        if seconds is None:
            return "n/a"
        return f"{seconds:.3f} s, {rss:,.0f} MB" if seconds < 0.1 else f"{seconds:.2f} s, {rss:,.0f} MB"

    print("\n| input | MB | events | floor | cold load_trace | cold + cache write | warm | cold / floor |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for result in results:
        ratio = result.cold_over_floor()
        print(
            f"| .{result.input} | {result.mb:,.0f} | {result.events:,} | {seconds_and_rss(result, 'floor')} "
            f"| {seconds_and_rss(result, 'cold')} | {seconds_and_rss(result, 'cache_build')} "
            f"| {seconds_and_rss(result, 'warm')} | {_cell(ratio, '.2f') if ratio is not None else 'n/a'} |"
        )


def to_json(results: list[FileResult], args: argparse.Namespace) -> dict[str, Any]:
    rows = []
    for result in results:
        row = asdict(result)
        row["measurements"] = {}
        for kind, measurement in result.measurements.items():
            row["measurements"][kind] = {
                "seconds": measurement.median("seconds"),
                "max_rss_mb": measurement.median("max_rss_mb"),
                "mb_per_second": result.mb / s if (s := measurement.median("seconds")) and kind != "warm" else None,
                "runs": measurement.runs,
                "unavailable": measurement.unavailable,
                "error": measurement.error,
            }
        row["cold_over_floor"] = result.cold_over_floor()
        rows.append(row)
    return {
        "seed": Path(args.seed).name,
        "repeat": args.repeat,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "results": rows,
    }


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000", help="uncompressed MB, comma separated (default 100,1000)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per measurement (median shown)")
    parser.add_argument("--gzip", choices=("both", "yes", "no"), default="both", help="which inputs: .json.gz, .json or both")
    parser.add_argument("--seed", default=str(DEFAULT_SEED), help="the real trace to replicate")
    parser.add_argument("--out-dir", default=str(HERE / "out"), help="where generated files go (git-ignored bench/out)")
    parser.add_argument("--keep", action="store_true", help="keep the generated traces")
    parser.add_argument(
        "--measure", default="floor,cold,cache", help="which of floor, cold, cache (build + warm) to run (default all)"
    )
    parser.add_argument("--json", help="also write the results as JSON to this file")
    parser.add_argument("--child", choices=KINDS + ("generate",), help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    sizes = [float(size) for size in args.sizes.split(",") if size.strip()]
    inputs = {"both": ["json", "json.gz"], "yes": ["json.gz"], "no": ["json"]}[args.gzip]
    if args.child == "generate":
        print(json.dumps(generate_files(Path(args.seed), sizes, inputs, Path(args.out_dir))))
        return 0
    if args.child:
        print(json.dumps(run_child(args.child, args.path, args.cache_dir)))
        return 0

    if not Path(args.seed).is_file():
        print(f"seed trace not found: {args.seed} (the repository's tests/data holds it)", file=sys.stderr)
        return 2
    wanted = {name.strip() for name in args.measure.split(",") if name.strip()}
    if not wanted <= {"floor", "cold", "cache"}:
        parser.error(f"--measure: unknown {sorted(wanted - {'floor', 'cold', 'cache'})}")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    work_dir = Path(tempfile.mkdtemp(prefix="bench-ingest-", dir=out_dir))
    results: list[FileResult] = []
    started = time.perf_counter()
    try:
        results = generate_in_child(Path(args.seed), sizes, inputs, work_dir)
        if hasattr(os, "sync"):
            os.sync()  # flush the new files now, not while the first measurement reads them
        for result in results:
            measure_file(result, max(1, args.repeat), work_dir, wanted)
            print_file_table(result)
        print_summary(results)
    finally:
        if args.keep:
            print(f"\nkept the generated traces in {work_dir}")
        else:
            shutil.rmtree(work_dir, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(to_json(results, args), indent=2) + "\n")
    print(f"\ndone in {time.perf_counter() - started:.0f} s")
    failed = [f"{Path(r.path).name}: {kind}" for r in results for kind, m in r.measurements.items() if m.error]
    if failed:  # "not available" is fine (work in progress); a crash is not
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
