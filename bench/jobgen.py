"""A distributed training job's traces, one Kineto file per rank, with known answers.

Every rank runs the same steps: compute kernels, then NCCL collectives of known sizes in two process groups
(``0``: all-reduces of the gradients; ``1``: all-gathers of the parameters), each launched by a
``record_param_comms`` operator that records what torch records (collective name, message sizes, dtype, group
size, process group name and ranks, sequence number ``Seq``). Times are on one clock (every rank has the same
``baseTimeNanoseconds``):

- each rank reaches each collective after its own random jitter (at most ``jitter_us``);
- one rank (the straggler) reaches every collective ``straggler_us`` later than it would have;
- a collective ends on every rank at the same instant: its last rank's arrival plus its latency, which is
  chosen so that its bus bandwidth is exactly ``busbw_gbps`` (NCCL's convention: size x factor / latency).

``truth()`` gives what the answers must say: per collective its group, number, kind, size, latency and bus
bandwidth, the straggler, and the bus bandwidth per kind. Usage::

    python bench/jobgen.py --ranks 64 --steps 3 --collectives 8 -o out/run64 [--gzip]
"""

from __future__ import annotations

import argparse
import gzip as gzip_module
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

BASE_TIME_NS = 1_790_000_000_000_000_000
HOST_PID = 4242
HOST_TID = 4242
STREAMS = {"0": 20, "1": 24}  # NCCL stream per process group
COMPUTE_STREAM = 7
DTYPE_BYTES = 4  # Float
_KERNEL = {"allreduce": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "allgather": "ncclDevKernel_AllGather_RING_LL"}


@dataclass(frozen=True)
class Job:
    ranks: int
    steps: int = 3
    collectives: int = 8  # per step, alternating between the two process groups
    compute_kernels: int = 4  # per step, before the collectives
    jitter_us: int = 30
    straggler: int = 1
    straggler_us: int = 400
    busbw_gbps: float = 50.0  # bus bandwidth of every collective (GB/s = 1e9 bytes/s)
    seed: int = 7

    def plan(self) -> list[dict[str, Any]]:
        """Per step, per collective: group, sequence number, kind, element count (of the whole message)."""
        out = []
        seqs = {"0": 0, "1": 0}
        for step in range(self.steps):
            for k in range(self.collectives):
                group = "0" if k % 2 == 0 else "1"
                seqs[group] += 1
                kind = "allreduce" if group == "0" else "allgather"
                elements = (1 << 18) * (1 + k % 4) * self.ranks  # divisible by the group size (all-gather)
                out.append({"step": step, "index": k, "group": group, "seq": seqs[group], "kind": kind,
                            "elements": elements})
        return out

    @staticmethod
    def factor(kind: str, n: int) -> float:
        return 2.0 * (n - 1) / n if kind == "allreduce" else (n - 1) / n

    def latency_ns(self, kind: str, elements: int) -> int:
        size = elements * DTYPE_BYTES
        return max(1, round(size * self.factor(kind, self.ranks) / (self.busbw_gbps * 1e9) * 1e9))

    def schedule(self) -> tuple[list[list[int]], list[int], list[int]]:
        """Per collective: each rank's arrival (ns, on the common clock), the collective's end; step starts."""
        rng = random.Random(self.seed)
        arrivals: list[list[int]] = []
        ends: list[int] = []
        step_starts: list[int] = []
        clock = 1_000_000  # ns after the base time
        plan = self.plan()
        for step in range(self.steps):
            step_starts.append(clock)
            clock += (self.compute_kernels + 1) * 100_000
            for c in (c for c in plan if c["step"] == step):
                arrive = [clock + rng.randint(0, self.jitter_us) * 1000 + (self.straggler_us * 1000
                          if r == self.straggler else 0) for r in range(self.ranks)]
                end = max(arrive) + self.latency_ns(c["kind"], c["elements"])
                arrivals.append(arrive)
                ends.append(end)
                clock = end + 20_000
            clock += 50_000
        step_starts.append(clock)
        return arrivals, ends, step_starts

    def truth(self) -> dict[str, Any]:
        arrivals, ends, _ = self.schedule()
        collectives = []
        for c, arrive, end in zip(self.plan(), arrivals, ends):
            latency = end - max(arrive)
            size = c["elements"] * DTYPE_BYTES
            algbw = size / latency * 1e9
            collectives.append({"process_group": c["group"], "seq": c["seq"], "name": c["kind"], "bytes": size,
                                "latency_ns": latency, "skew_ns": max(arrive) - min(arrive),
                                "last_rank": arrive.index(max(arrive)), "algbw": algbw,
                                "busbw": algbw * self.factor(c["kind"], self.ranks)})
        kinds = {}
        for kind in ("allreduce", "allgather"):
            chosen = [c for c in collectives if c["name"] == kind]
            seconds = sum(c["latency_ns"] for c in chosen) / 1e9
            moved = sum(c["bytes"] for c in chosen)
            kinds[kind] = {"algbw": moved / seconds, "busbw": moved / seconds * self.factor(kind, self.ranks)}
        return {"ranks": self.ranks, "straggler": self.straggler, "collectives": collectives, "kinds": kinds}

    def events(self, rank: int) -> Iterator[dict[str, Any]]:
        arrivals, ends, step_starts = self.schedule()
        plan = self.plan()
        ext = 0
        per_step = {step: [i for i, c in enumerate(plan) if c["step"] == step] for step in range(self.steps)}
        for step in range(self.steps):
            start, stop = step_starts[step], step_starts[step + 1] - 10_000
            ext += 1
            yield _x("user_annotation", f"ProfilerStep#{step}", HOST_PID, HOST_TID, start, stop - start,
                     {"External id": ext})
            t = start + 10_000
            for k in range(self.compute_kernels):
                ext += 1
                yield _x("cpu_op", "aten::mm", HOST_PID, HOST_TID, t, 20_000, {"External id": ext})
                yield _x("cuda_runtime", "cudaLaunchKernel", HOST_PID, HOST_TID, t + 5_000, 10_000,
                         {"External id": ext, "correlation": ext})
                yield _x("kernel", "volta_sgemm_128x64_nn", 0, COMPUTE_STREAM, t + 20_000, 70_000,
                         {"External id": ext, "correlation": ext, "device": 0, "stream": COMPUTE_STREAM})
                t += 100_000
            for i in per_step[step]:
                c = plan[i]
                arrive, end = arrivals[i][rank], ends[i]
                ext += 1
                n = self.ranks
                out_elems = c["elements"]
                in_elems = c["elements"] if c["kind"] == "allreduce" else c["elements"] // n
                args = {"External id": ext, "Collective name": "allreduce" if c["kind"] == "allreduce"
                        else "_allgather_base", "dtype": "Float", "In msg nelems": in_elems,
                        "Out msg nelems": out_elems, "Group size": n, "Process Group Name": c["group"],
                        "Process Group Description": "default_pg" if c["group"] == "0" else "params",
                        "Process Group Ranks": str(list(range(n))), "Seq": c["seq"]}
                launch = arrive - 8_000
                yield _x("cpu_op", "record_param_comms", HOST_PID, HOST_TID, launch - 2_000, 6_000, args)
                yield _x("cuda_runtime", "cudaLaunchKernel", HOST_PID, HOST_TID, launch, 3_000,
                         {"External id": ext, "correlation": ext})
                yield _x("kernel", _KERNEL[c["kind"]], 0, STREAMS[c["group"]], arrive, end - arrive,
                         {"External id": ext, "correlation": ext, "device": 0, "stream": STREAMS[c["group"]]})

    def document_head(self, rank: int) -> dict[str, Any]:
        return {
            "schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": self.ranks, "pg_count": 2,
                                "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": self.ranks,
                                               "ranks": list(range(self.ranks))},
                                              {"pg_name": "1", "pg_desc": "params", "pg_size": self.ranks,
                                               "ranks": list(range(self.ranks))}]},
            "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85_000_000_000,
                                  "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
            "baseTimeNanoseconds": BASE_TIME_NS,
        }


def _x(cat: str, name: str, pid: int, tid: int, ts_ns: int, dur_ns: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts_ns / 1000, "dur": dur_ns / 1000,
            "args": args}


def trace_bytes(job: Job, rank: int) -> bytes:
    head = job.document_head(rank)
    meta = [{"ph": "M", "name": "process_name", "pid": HOST_PID, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
            {"ph": "M", "name": "thread_name", "pid": HOST_PID, "tid": HOST_TID, "args": {"name": "main"}}]
    events = meta + list(job.events(rank))
    body = ",\n".join(json.dumps(e, separators=(",", ":")) for e in events)
    head_text = json.dumps(head)[:-1]
    return f'{head_text}, "traceEvents": [\n{body}\n]}}\n'.encode()


def write_job(job: Job, out_dir: Path, gzip: bool = False, ranks: Optional[list[int]] = None) -> list[Path]:
    """One ``rank{r}.<ts>.pt.trace.json[.gz]`` per rank in ``out_dir``; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank in ranks if ranks is not None else range(job.ranks):
        data = trace_bytes(job, rank)
        path = out_dir / f"rank{rank}.{1790000000000 + rank}.pt.trace.json{'.gz' if gzip else ''}"
        path.write_bytes(gzip_module.compress(data, 1, mtime=0) if gzip else data)
        paths.append(path)
    return paths


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--collectives", type=int, default=8, help="per step")
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    job = Job(ranks=args.ranks, steps=args.steps, collectives=args.collectives)
    paths = write_job(job, Path(args.output), gzip=args.gzip)
    (Path(args.output) / "truth.json.txt").write_text(json.dumps(job.truth()))
    print(f"wrote {len(paths)} rank files into {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
