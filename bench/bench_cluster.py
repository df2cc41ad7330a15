"""Jobs of many ranks: packs opened by a real ``tensorboard``, the cross-rank answers, and the two ingest engines.

Four measurements (targets from the issue that asked for them):

1. ``tensorboard`` on a logdir of N packed ranks (bench/jobgen.py: per-rank jitter, one straggler, NCCL collectives
   of known sizes in two process groups), ingested with ``--engine local`` (the packs and their folder's summary),
   started on an empty cache: the time from starting the process to the run listed with every rank ready and the
   Distributed view answered (then the cross-rank route), and the peak memory (PSS) of its process tree. Target:
   <= 5 s and <= 1 GB. No trace is parsed, and the benchmark proves it: before the server starts, every trace file
   is overwritten with bytes that are no JSON, of the same size, and its modification time put back (so its pack is
   still current); a parse would fail that rank, and every rank must be ready. The server's process tree is also
   watched: no parser process may appear. ``--tb-runs`` servers are started one after the other (medians);
   ``--tb-logdir`` keeps the packed job for the next invocation, so that the old and the new code can be measured
   alternately in one session, each on its own logdir (``PYTHONPATH`` to the old code's copy).
2. The cross-rank answers (``views/distributed/cross_rank.py``) for R ranks x S steps x C collectives per step, from
   summaries made directly as columns (the reducer's input): median of ``--repeat``, against a one-pass floor of the
   same columns. Target: 1,000 x 20 x 200 in <= 1 s. Also the Distributed view from the same summaries, the time to
   read them from Parquet files (one per rank), and from a folder's summary (one file per table, what a server reads
   for an ingested job: the read, then both answers on its slices).
3. ``--engine dask`` (a LocalCluster of 2 worker processes, started beforehand) against ``--engine local`` (the
   parser pool) on the same files of about ``--engine-mb`` MB each, alternating, packs removed between runs:
   throughput (GB/s of trace JSON) and the per-file overhead of Dask (its time per file over the pool's - 1).
   Target: <= 5% at 100 MB.
4. Disk: a pack against the cache entry a server writes for the same trace plus the summary's Parquet files.

Usage: ``python bench/bench_cluster.py --ranks 1000 --steps 2 --collectives 10 --summary-ranks 1000
--summary-steps 20 --summary-collectives 200 --engine-mb 100 --engine-files 4 --repeat 3 --tb-runs 3``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_e2e  # noqa: E402
import jobgen  # noqa: E402

from profscope.tb_plugin.store import ingest, pack_summary, packs  # noqa: E402
from profscope.tb_plugin.views.distributed.cross_rank import cross_rank  # noqa: E402
from profscope.tb_plugin.views.distributed.ranks import distributed_from_summaries  # noqa: E402
from profscope.tb_plugin.views.distributed.rank_summary import RankSummary, Table, coded  # noqa: E402

TARGETS = {"tensorboard_s": 5.0, "tensorboard_gb": 1.0, "cross_rank_s": 1.0, "dask_overhead": 0.05}


def _settle(paths: list[Path]) -> None:
    old = time.time() - 120
    for path in paths:
        os.utime(path, (old, old))


# --------------------------------------------------------------------------- 1. tensorboard on packs


def _poison(logdir: Path) -> int:
    """Every trace overwritten with non-JSON bytes of its size, its mtime put back: a parse would fail it."""
    count = 0
    for path in logdir.rglob("*.pt.trace.json*"):
        if packs.PACK_FOLDER in path.parts:
            continue
        st = path.stat()
        path.write_bytes(b"\x00" * st.st_size)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        count += 1
    return count


def _parser_processes(pid: int) -> int:
    count = 0
    for child in bench_e2e._descendants(pid)[1:]:
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                if b"multiprocessing" in f.read():
                    count += 1
        except OSError:
            pass
    return count


def prepare_packed_job(ranks: int, steps: int, collectives: int, logdir: Path) -> dict[str, Any]:
    """The job written into ``logdir``, ingested (``--engine local``: its packs and their folder's summary) and its
    traces overwritten; a logdir that already holds the job's current packs is used as it is (nothing to ingest)."""
    job = jobgen.Job(ranks=ranks, steps=steps, collectives=collectives, compute_kernels=4)
    if not (logdir / "job").is_dir():
        files = jobgen.write_job(job, logdir / "job", gzip=True)
        _settle(files)
    started = time.perf_counter()
    results = ingest.run_local(ingest.plan(str(logdir)), lambda r: None)
    ingest_s = time.perf_counter() - started
    failed = [r for r in results if r.status == "failed"]
    if failed or len(results) != ranks:
        raise RuntimeError(f"ingest failed: {failed[:3]} ({len(results)} files for {ranks} ranks)")
    poisoned = _poison(logdir)
    traces = [p for p in (logdir / "job").iterdir() if p.is_file()]
    return {"job": job, "ingest_s": ingest_s, "ingested": sum(r.status == "ingested" for r in results),
            "poisoned_files": poisoned, "trace_bytes": sum(p.stat().st_size for p in traces)}


def tensorboard_once(job: Any, ranks: int, logdir: Path, work: Path, timeout: float) -> dict[str, Any]:
    """One ``tensorboard`` started on ``logdir`` with an empty cache: its first answer, the run listed with every
    rank ready, the Distributed view answered, then the cross-rank route; the peak PSS of its process tree."""
    cache = Path(tempfile.mkdtemp(prefix="empty-cache-", dir=work))
    server = bench_e2e.Server(logdir, cache, work / "tensorboard.log", 0.2, logdir)
    parsers_seen = 0
    first_answer_s = None
    try:
        deadline = time.perf_counter() + timeout
        while True:
            parsers_seen = max(parsers_seen, _parser_processes(server.process.pid))
            status, body, _ = server.get("runs", timeout=10)
            if status == 200 and first_answer_s is None:
                first_answer_s = server.elapsed()  # tensorboard's own start, before any pack is read
            if status == 200 and body and body.get("runs"):
                run = next(r for r in body["runs"] if r["name"] == "job")
                if run["status"] == "ready":
                    break
                if run["status"] == "error":
                    raise RuntimeError(f"a rank failed: {run.get('error')}")
            if time.perf_counter() > deadline:
                raise RuntimeError("the run was not ready in time")
            time.sleep(0.05)
        listed_s = server.elapsed()
        answer, _ = server.answer("distributed", deadline, run="job")
        distributed_s = server.elapsed()
        crossed, cross_s = server.answer("distributed/collectives", deadline, run="job")
        parsers_seen = max(parsers_seen, _parser_processes(server.process.pid))
        time.sleep(0.3)  # one more memory sample
    finally:
        server.stop()
        shutil.rmtree(cache, ignore_errors=True)
    truth = job.truth()
    assert len(answer["ranks"]) == ranks
    assert crossed["stragglers"][0]["rank"] == truth["straggler"]
    return {"first_answer_s": first_answer_s, "listed_s": listed_s, "distributed_s": distributed_s,
            "collectives_route_s": cross_s, "peak_pss_gb": server.memory.peak_pss / 1e9,
            "parser_processes_seen": parsers_seen, "load_average": os.getloadavg()[0]}


def measure_tensorboard(ranks: int, steps: int, collectives: int, work: Path, timeout: float, runs: int = 1,
                        logdir: Optional[Path] = None) -> dict[str, Any]:
    """``runs`` tensorboards, one after the other, on one packed job (in ``logdir`` where given: kept, and used
    again by the next invocation); medians of each figure, the worst peak."""
    logdir = logdir or work / "logdir"
    prepared = prepare_packed_job(ranks, steps, collectives, logdir)
    each = [tensorboard_once(prepared["job"], ranks, logdir, work, timeout) for _ in range(runs)]
    out: dict[str, Any] = {"ranks": ranks, "runs": each, **{k: v for k, v in prepared.items() if k != "job"}}
    for key in ("first_answer_s", "listed_s", "distributed_s", "collectives_route_s", "load_average"):
        out[key] = statistics.median(r[key] for r in each)
    out["peak_pss_gb"] = max(r["peak_pss_gb"] for r in each)
    out["parser_processes_seen"] = max(r["parser_processes_seen"] for r in each)
    return out


# --------------------------------------------------------------------------- 2. cross-rank answers


def synthetic_summaries(ranks: int, steps: int, collectives: int, seed: int = 3) -> list[RankSummary]:
    """Summaries as the reducer reads them: per rank, steps x collectives calls in two process groups."""
    rng = np.random.default_rng(seed)
    per_rank = steps * collectives
    group = np.where(np.arange(per_rank) % 2 == 0, "0", "1").tolist()
    names = ["allreduce" if g == "0" else "allgather" for g in group]
    seq = np.arange(per_rank, dtype=np.int64) // 2 + 1
    base = np.arange(per_rank, dtype=np.int64) * 1_000_000
    latency = 200_000 + (np.arange(per_rank) % 7) * 10_000
    nbytes = (1 << 20) * (1 + np.arange(per_rank) % 4)
    out = []
    for rank in range(ranks):
        arrive = base + rng.integers(0, 30_000, per_rank) + (400_000 if rank == 1 else 0)
        end = base + 430_000 + latency
        steps_table = Table({"name": [f"ProfilerStep#{i}" for i in range(steps)]},
                            {key: np.full(steps, 1000, dtype=np.int64) for key in (
                                "start", "end", "duration", "computation", "communication", "overlap",
                                "exposed_communication", "other", "device_busy")})
        calls = Table({"name": coded(names), "process_group": coded(group)},
                      {"seq": seq, "seq_recorded": np.ones(per_rank, bool), "group_size": np.full(per_rank, ranks),
                       "in_bytes": nbytes, "out_bytes": nbytes, "start": arrive, "end": end,
                       "stream": np.full(per_rank, 20)})
        out.append(RankSummary(worker=f"rank{rank}", span="1", recorded_rank=rank, world_size=ranks, backend="nccl",
                               is_distributed=True, base_time_ns=0, steps=steps_table, collectives=calls))
    return out


def measure_cross_rank(ranks: int, steps: int, collectives: int, repeat: int, work: Path) -> dict[str, Any]:
    summaries = synthetic_summaries(ranks, steps, collectives)
    numbers = list(range(ranks))
    times, floors, views = [], [], []
    for _ in range(repeat):
        started = time.perf_counter()
        answer = cross_rank(summaries, numbers)
        times.append(time.perf_counter() - started)
        # The floor, alternating with the runs: one pass over every call's start and end (gather, shortest
        # duration, latest start), what any reducer of these columns pays.
        started = time.perf_counter()
        starts = np.concatenate([s.collectives.numbers["start"] for s in summaries]).reshape(ranks, -1)
        ends = np.concatenate([s.collectives.numbers["end"] for s in summaries]).reshape(ranks, -1)
        (ends - starts).min(axis=0), starts.max(axis=0)
        floors.append(time.perf_counter() - started)
        started = time.perf_counter()
        distributed_from_summaries(summaries)
        views.append(time.perf_counter() - started)
    assert answer["stragglers"][0]["rank"] == 1
    folder = work / "summaries"
    folder.mkdir(exist_ok=True)
    for i, summary in enumerate(summaries):
        pack_summary.write_summary(summary, str(folder / f"r{i}.model"))
    reads = []
    for _ in range(repeat):
        started = time.perf_counter()
        read = [pack_summary.read_summary(str(folder / f"r{i}.model")) for i in range(ranks)]
        reads.append(time.perf_counter() - started)
    del read
    out = {"ranks": ranks, "steps": steps, "collectives_per_step": collectives,
           "matched_collectives": len(answer["collectives"]["seq"]), "reduce_s": statistics.median(times),
           "reduce_all_s": times, "floor_s": statistics.median(floors),
           "over_floor": statistics.median([t / f for t, f in zip(times, floors)]),
           "distributed_view_s": statistics.median(views), "read_parquet_s": statistics.median(reads)}
    if hasattr(pack_summary, "write_folder_files"):
        out.update(_from_folder_summary(summaries, numbers, answer, repeat, work))
    return out


def _from_folder_summary(summaries: list[RankSummary], numbers: list[int], answer: dict[str, Any], repeat: int,
                         work: Path) -> dict[str, Any]:
    """The same summaries as a folder's summary (what a server reads for an ingested job): reading it, and the
    answers on its slices (the columns joined without a copy)."""
    from profscope.tb_plugin.store.packs import FolderSummaryRef, PackRoot

    folder = work / "folder-summary"
    folder.mkdir(exist_ok=True)
    manifest = pack_summary.write_folder_files(
        [(f"r{i}", f"{i:040x}", s) for i, s in enumerate(summaries)], str(folder))
    ref = FolderSummaryRef(str(folder), manifest)
    reads, times, views = [], [], []
    for _ in range(repeat):
        started = time.perf_counter()
        combined = pack_summary.read_folder_summary(PackRoot(str(folder)), ref)
        sliced = [combined.summary(i, s.worker, s.span) for i, s in enumerate(summaries)]
        reads.append(time.perf_counter() - started)
        started = time.perf_counter()
        again = cross_rank(sliced, numbers)
        times.append(time.perf_counter() - started)
        started = time.perf_counter()
        distributed_from_summaries(sliced)
        views.append(time.perf_counter() - started)
        del combined, sliced
    assert again == answer
    return {"folder_bytes": sum(p.stat().st_size for p in folder.iterdir()),
            "read_folder_s": statistics.median(reads), "reduce_folder_s": statistics.median(times),
            "distributed_view_folder_s": statistics.median(views)}


# --------------------------------------------------------------------------- 3. engines


def _engine_files(work: Path, megabytes: float, count: int) -> tuple[Path, int]:
    """``count`` rank files of about ``megabytes`` MB of JSON each."""
    probe = jobgen.Job(ranks=count, steps=1, collectives=20, compute_kernels=20)
    per_step = len(jobgen.trace_bytes(probe, 0))
    steps = max(1, int(megabytes * 1e6 / per_step))
    job = jobgen.Job(ranks=count, steps=steps, collectives=20, compute_kernels=20)
    logdir = work / "engines"
    files = jobgen.write_job(job, logdir / "job")
    _settle(files)
    return logdir, sum(p.stat().st_size for p in files)


def measure_engines(megabytes: float, count: int, repeat: int, work: Path) -> dict[str, Any]:
    logdir, total = _engine_files(work, megabytes, count)
    cluster = ingest.local_cluster(workers=2)
    runs: dict[str, list[float]] = {"local": [], "dask": []}
    try:
        for _ in range(repeat):
            for engine in ("local", "dask"):
                shutil.rmtree(logdir / "job" / packs.PACK_FOLDER, ignore_errors=True)
                tasks = ingest.plan(str(logdir))
                started = time.perf_counter()
                if engine == "local":
                    results = ingest.run_local(tasks, lambda r: None, workers=2)
                else:
                    results = ingest.run_dask(tasks, lambda r: None, cluster=cluster)
                runs[engine].append(time.perf_counter() - started)
                if any(r.status != "ingested" for r in results):
                    raise RuntimeError(f"{engine}: {[r for r in results if r.status != 'ingested'][:2]}")
    finally:
        cluster.close()
    local, dask = statistics.median(runs["local"]), statistics.median(runs["dask"])
    ratios = [d / l for d, l in zip(runs["dask"], runs["local"])]
    return {"files": count, "mb_per_file": total / count / 1e6, "local_s": runs["local"], "dask_s": runs["dask"],
            "local_gbps": total / local / 1e9, "dask_gbps": total / dask / 1e9,
            "dask_overhead": statistics.median(ratios) - 1.0}


# --------------------------------------------------------------------------- 4. disk


def measure_disk(work: Path) -> dict[str, Any]:
    """One rank's pack against the cache entry a parse writes plus the summary's files."""
    from profscope.tb_plugin.store.cache import ModelCache, local_identity
    from profscope.tb_plugin.store.parse_jobs import parse_into_cache as _parse_into_cache
    from profscope.tb_plugin.store.storage import FileAccess, real_roots

    job = jobgen.Job(ranks=2, steps=20, collectives=40, compute_kernels=20)
    logdir = work / "disk"
    files = jobgen.write_job(job, logdir / "job", gzip=True)
    _settle(files)
    ingest.run_local(ingest.plan(str(logdir)), lambda r: None)
    trace = files[0]
    pack_folder = Path(packs.pack_folder(str(logdir), f"job/{trace.name}"))
    pack_bytes = sum(p.stat().st_size for p in pack_folder.rglob("*") if p.is_file())
    summary_bytes = sum(p.stat().st_size for p in pack_folder.rglob("*.parquet"))
    cache_dir = work / "disk-cache"
    identity = local_identity(str(trace))
    _parse_into_cache(str(trace), str(cache_dir), identity, -1, FileAccess(roots=real_roots(str(logdir))))
    entry = ModelCache(str(cache_dir)).path_for(identity)
    cache_bytes = sum(p.stat().st_size for p in cache_dir.iterdir() if p.name.startswith(Path(entry).name))
    return {"pack_bytes": pack_bytes, "cache_entry_bytes": cache_bytes, "summary_bytes": summary_bytes,
            "manifest_bytes": (pack_folder / packs.MANIFEST).stat().st_size,
            "pack_over_entry_plus_summary": pack_bytes / (cache_bytes + summary_bytes)}


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=1000, help="packed ranks opened by tensorboard")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--collectives", type=int, default=10, help="per step, in the tensorboard job")
    parser.add_argument("--summary-ranks", type=int, default=1000)
    parser.add_argument("--summary-steps", type=int, default=20)
    parser.add_argument("--summary-collectives", type=int, default=200)
    parser.add_argument("--engine-mb", type=float, default=100.0, help="MB of JSON per file for the engines")
    parser.add_argument("--engine-files", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--tb-runs", type=int, default=1, help="tensorboards started one after the other (medians)")
    parser.add_argument("--tb-logdir", help="where the packed job is kept (made and ingested once, then used again: "
                        "run the old and the new code alternately, each on its own)")
    parser.add_argument("--skip", action="append", default=[], choices=("tensorboard", "cross_rank", "engines", "disk"))
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    results: dict[str, Any] = {"machine": bench_e2e.machine()}
    try:
        if "cross_rank" not in args.skip:
            results["cross_rank"] = measure_cross_rank(args.summary_ranks, args.summary_steps,
                                                       args.summary_collectives, args.repeat, work)
            r = results["cross_rank"]
            print(f"cross-rank: {r['ranks']} ranks x {r['steps']} steps x {r['collectives_per_step']} collectives "
                  f"({r['matched_collectives']} matched): {r['reduce_s']:.3f} s (median; target "
                  f"{TARGETS['cross_rank_s']} s; {r['over_floor']:.1f}x a one-pass floor of {r['floor_s']:.3f} s, "
                  f"same-run ratios); the Distributed view {r['distributed_view_s']:.3f} s; reading the "
                  f"{r['ranks']} summaries from Parquet first: {r['read_parquet_s']:.3f} s", flush=True)
            if "read_folder_s" in r:
                print(f"  from a folder's summary ({r['folder_bytes'] / 1e6:.1f} MB): read {r['read_folder_s']:.3f} s, "
                      f"cross-rank {r['reduce_folder_s']:.3f} s, Distributed view "
                      f"{r['distributed_view_folder_s']:.3f} s", flush=True)
        if "disk" not in args.skip:
            results["disk"] = r = measure_disk(work)
            print(f"disk: pack {r['pack_bytes']} B against cache entry {r['cache_entry_bytes']} B + summary "
                  f"{r['summary_bytes']} B: {r['pack_over_entry_plus_summary']:.3f}x (manifest "
                  f"{r['manifest_bytes']} B)", flush=True)
        if "tensorboard" not in args.skip:
            (work / "tb").mkdir()
            results["tensorboard"] = r = measure_tensorboard(
                args.ranks, args.steps, args.collectives, work / "tb", args.timeout, args.tb_runs,
                Path(args.tb_logdir) if args.tb_logdir else None)
            print(f"tensorboard on {r['ranks']} packed ranks (cold, empty cache; ingest took {r['ingest_s']:.1f} s, "
                  f"{r['ingested']} ingested): medians of {args.tb_runs}: first answer {r['first_answer_s']:.2f} s "
                  f"(tensorboard's own start), run listed {r['listed_s']:.2f} s, Distributed view "
                  f"{r['distributed_s']:.2f} s (target {TARGETS['tensorboard_s']} s), cross-rank route "
                  f"+{r['collectives_route_s']:.2f} s; peak PSS {r['peak_pss_gb']:.2f} GB (target "
                  f"{TARGETS['tensorboard_gb']} GB); {r['poisoned_files']} traces overwritten before the start, "
                  f"{r['parser_processes_seen']} parser processes seen; load average {r['load_average']:.1f}",
                  flush=True)
            for run in r["runs"]:
                print(f"  run: first {run['first_answer_s']:.2f} s, listed {run['listed_s']:.2f} s, Distributed "
                      f"{run['distributed_s']:.2f} s, cross-rank +{run['collectives_route_s']:.2f} s, peak PSS "
                      f"{run['peak_pss_gb']:.2f} GB, load {run['load_average']:.1f}", flush=True)
        if "engines" not in args.skip:
            results["engines"] = r = measure_engines(args.engine_mb, args.engine_files, args.repeat, work)
            print(f"engines on {r['files']} files of {r['mb_per_file']:.0f} MB: local {r['local_gbps']:.3f} GB/s, "
                  f"dask (LocalCluster of 2) {r['dask_gbps']:.3f} GB/s; dask's per-file overhead "
                  f"{100 * r['dask_overhead']:+.1f}% (median of same-run ratios; target <= "
                  f"{100 * TARGETS['dask_overhead']:.0f}%); runs local {['%.2f' % t for t in r['local_s']]}, dask "
                  f"{['%.2f' % t for t in r['dask_s']]}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
