"""Every answer of every route on every span of ``tests/data``, written to a folder, to prove a refactoring
changes nothing: dump before, dump after, ``diff -r`` the two folders.

    .venv/bin/python scripts/dump_answers.py ../answers_before
    ... change the code ...
    .venv/bin/python scripts/dump_answers.py ../answers_after
    diff -r ../answers_before ../answers_after

The logdir is the whole ``tests/data`` tree (as ``tests/test_real_traces.py`` sees it); the app is
TensorBoard's WSGI app with the plugin (as the route tests drive it). Per span: each route with its main
parameter variants (``group_by``, weights, windows of the trace viewer, step markers, ``format=csv`` with
each table); per run: the distributed routes and the ranks side by side; compare over pairs of spans; the
runs list and the run table; the command line's ``summary`` (text, ``--json``, ``--csv``) and ``report``;
the Scalars of each trace file.

Every span route is asked twice: once answered from the answers the parser stored beside the model
(``pass-stored``), once with those hidden so that the views compute (``pass-computed``). Each file holds
the status, the content type and disposition, and the body byte for byte (a downloaded trace file: its
length and SHA-256). Nothing here is timed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import real_traces  # noqa: E402  (tests/real_traces.py: tests/data with the stored-gzipped files restored)

CSV_TABLES: dict[str, list[Optional[str]]] = {
    "overview": [None], "operators": [None], "kernels": [None], "memory": [None, "events", "operators"],
    "distributed": [None, "ranks", "collectives"], "distributed/matrix": [None], "compare": [None, "operators",
    "kernels"], "runs/table": [None], "steptrace": [None], "trace/range": [None, "operators", "kernels"],
    "analyses/idle": [None, "streams", "gaps"], "analyses/launches": [None, "calls", "short", "longest_calls",
    "longest_delays"], "analyses/queues": [None], "analyses/sequences": [None], "analyses/annotations": [None],
}


def _name(route: str, params: dict[str, Any]) -> str:
    text = route + "?" + "&".join(f"{k}={params[k]}" for k in sorted(params))
    safe = re.sub(r"[^A-Za-z0-9._=&?#-]", "_", text)
    if len(safe) > 150:
        safe = safe[:110] + "~" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return safe.replace("/", "_")


class Dumper:
    def __init__(self, out: Path, logdir: Path, cache_dir: Path) -> None:
        from tensorboard.backend import application
        from tensorboard.plugins import base_plugin
        from werkzeug import test as werkzeug_test

        from profscope.tb_plugin.server.plugin import ProfscopePlugin

        self.out = out
        self.logdir = logdir
        self.plugin = ProfscopePlugin(base_plugin.TBContext(logdir=str(logdir)), cache_dir=str(cache_dir),
                                      refresh_seconds=0.5)
        self.client = werkzeug_test.Client(application.TensorBoardWSGI([self.plugin]))
        self.count = 0

    def settle(self) -> None:
        assert self.plugin.manager.wait_until_settled(600), "runs did not finish loading"

    def get(self, folder: str, route: str, params: dict[str, Any], save: bool = True) -> tuple[int, Any]:
        response = self.client.get(f"/data/plugin/profscope/{route}", query_string=params)
        body = response.get_data()
        ctype = response.headers.get("Content-Type", "")
        if save:
            head = {"status": response.status_code, "content_type": ctype,
                    "disposition": response.headers.get("Content-Disposition")}
            if route == "trace/download" and response.status_code == 200:
                head["length"] = len(body)
                head["sha256"] = hashlib.sha256(body).hexdigest()
                body = b""
            self.write(folder, _name(route, params), json.dumps(head, sort_keys=True).encode() + b"\n" + body)
        if route == "trace/download":
            return response.status_code, None
        decoded = json.loads(body) if ctype.startswith("application/json") else body
        return response.status_code, decoded

    def write(self, folder: str, name: str, data: bytes) -> None:
        path = self.out / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        assert not path.exists(), f"two requests dump to {path}"
        path.write_bytes(data)
        self.count += 1

    def with_csv(self, folder: str, route: str, params: dict[str, Any]) -> tuple[int, Any]:
        answer = self.get(folder, route, params)
        for table in CSV_TABLES.get(route, []):
            extra: dict[str, Any] = {"format": "csv"}
            if table is not None:
                extra["table"] = table
            self.get(folder, route, {**params, **extra})
        return answer

    # --- one span ------------------------------------------------------------------------------

    def span(self, folder: str, ids: dict[str, str]) -> None:
        g, c = self.get, self.with_csv
        g(folder, "summary", ids)
        c(folder, "overview", ids)
        for marker in ("ProfilerStep", "nope"):
            g(folder, "overview", {**ids, "step_marker": marker})
        _, ops = c(folder, "operators", ids)
        for group_by in ("input_shape", "stack"):
            c(folder, "operators", {**ids, "group_by": group_by})
        g(folder, "operators", {**ids, "group_by": "bogus"})
        rows = ops.get("rows", []) if isinstance(ops, dict) else []
        top = [r["name"] for r in rows[:2]]
        for name in top:
            g(folder, "operators/detail", {**ids, "name": name})
        _, shaped = g(folder, "operators", {**ids, "group_by": "input_shape"}, save=False)
        for row in (shaped.get("rows", []) if isinstance(shaped, dict) else [])[:1]:
            g(folder, "operators/detail", {**ids, "name": row["name"], "input_shape": row.get("input_shape") or ""})
        c(folder, "kernels", ids)
        c(folder, "kernels", {**ids, "group_by": "op_and_name"})
        for weight in ("host", "device"):
            g(folder, "flamegraph", {**ids, "weight": weight})
            g(folder, "stacks/folded", {**ids, "weight": weight})
        g(folder, "modules", ids)
        _, memory = c(folder, "memory", ids)
        c(folder, "memory", {**ids, "start": 0, "end": 1e18, "min_bytes": 1})
        g(folder, "memory", {**ids, "name": "a", "limit": 5})
        for device in (memory.get("devices") or [])[:2] if isinstance(memory, dict) else []:
            label = device if isinstance(device, str) else device.get("name") or device.get("id")
            c(folder, "memory", {**ids, "device": label})
        g(folder, "datapipeline", ids)
        g(folder, "datapipeline", {**ids, "step_marker": "ProfilerStep"})
        c(folder, "steptrace", ids)
        if len(top) == 2:
            c(folder, "steptrace", {**ids, "fp_point": top[0], "bp_point": top[1]})
        for extra in ({}, {"step": 1}, {"step": 999}, {"step_marker": "ProfilerStep"}):
            g(folder, "critical_path", {**ids, **extra})
        for extra in ({}, {"step_marker": "ProfilerStep"}):
            c(folder, "analyses/idle", {**ids, **extra})
            c(folder, "analyses/launches", {**ids, **extra})
            c(folder, "analyses/queues", {**ids, **extra})
            c(folder, "analyses/sequences", {**ids, **extra})
            c(folder, "analyses/annotations", {**ids, **extra})
        for wait in (0, 100):
            g(folder, "analyses/idle", {**ids, "kernel_wait_us": wait})
        if top:
            g(folder, "analyses/sequences", {**ids, "operator": top[0], "min_length": 2})
        self.trace(folder, ids, top)

    def trace(self, folder: str, ids: dict[str, str], top: list[str]) -> None:
        g = self.get
        status, tracks = g(folder, "trace/tracks", ids)
        g(folder, "trace/download", ids)
        if status != 200:
            return
        start, end = tracks["start"], tracks["end"]
        length = end - start
        slice_ids = [t["id"] for t in tracks["tracks"] if t["kind"] != "counter"]
        counter_ids = [t["id"] for t in tracks["tracks"] if t["kind"] == "counter"]
        windows = [{}, {"start": start, "end": start + length / 2},
                   {"start": start + 0.3 * length, "end": start + 0.31 * length}]
        event_ids: list[int] = []
        for window in windows:
            for width in (800, 97):
                _, body = g(folder, "trace/slices", {**ids, **window, "width": width})
                if isinstance(body, dict) and not event_ids:
                    for track in body["tracks"]:
                        event_ids.extend(track["slices"]["id"][:3])
                        event_ids.extend(track["slices"]["id"][-1:])
            if slice_ids:
                g(folder, "trace/slices", {**ids, **window, "width": 300, "tracks": ",".join(slice_ids[:2])})
            g(folder, "trace/counters", {**ids, **window, "width": 500, "tracks": ",".join(counter_ids)})
            if counter_ids:
                g(folder, "trace/counters", {**ids, **window, "width": 50, "tracks": counter_ids[0]})
            if window:
                self.with_csv(folder, "trace/range", {**ids, **window})
                if slice_ids:
                    g(folder, "trace/range", {**ids, **window, "tracks": ",".join(slice_ids[:1])})
        g(folder, "trace/slices", {**ids, "start": start, "end": start})  # 400
        for event_id in sorted(set(event_ids))[:12] + [10**9]:
            g(folder, "trace/event", {**ids, "id": event_id})
            g(folder, "trace/flows", {**ids, "id": event_id})
        for query in ["a", "step"] + top[:1]:
            g(folder, "trace/search", {**ids, "q": query})
        g(folder, "trace/search", {**ids, "q": "a", "offset": 7, "limit": 5})

    # --- one run (every worker) -----------------------------------------------------------------

    def run(self, folder: str, run: str, span_count: int) -> None:
        for index in range(min(span_count, 2)):
            params = {"run": run, "span_index": index}
            self.with_csv(folder, "distributed", params)
            self.with_csv(folder, "distributed/matrix", params)
            for align in ("step", "time"):
                self.get(folder, "trace/ranks", {**params, "align": align})
        self.get(folder, "distributed", {"run": run, "span_index": 99})


def _cli(args: list[str]) -> bytes:
    from profscope.tb_plugin.reports import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(args)
        except SystemExit as exc:
            status = exc.code
    return f"status {status}\n--- stdout\n{out.getvalue()}--- stderr\n{err.getvalue()}".encode()


def _scalars(path: str) -> bytes:
    from profscope.tb_plugin.reports.span_scalars import trace_file_scalars

    return json.dumps(trace_file_scalars(path), sort_keys=True).encode()


def dump(out: Path) -> int:
    from profscope.tb_plugin.model import stored_answers
    from profscope.tb_plugin.store.discovery import scan_logdir

    logdir = real_traces.root()
    work = Path(tempfile.mkdtemp(prefix="profscope-dump-"))
    os.environ["PROFSCOPE_CACHE_DIR"] = str(work / "cli-cache")  # the command line's model cache
    sources = sorted(scan_logdir(str(logdir)), key=lambda s: (s.run, s.worker, s.span))
    dumper = Dumper(out, logdir, work / "cache")
    try:
        dumper.settle()
        spans = [{"run": s.run, "worker": s.worker, "span": s.span} for s in sources]
        dumper.get("runs", "runs", {})
        dumper.with_csv("runs", "runs/table", {})
        stored = stored_answers._stored
        for name, hidden in (("pass-stored", False), ("pass-computed", True)):
            if hidden:
                stored_answers._stored = lambda model: {}  # type: ignore[assignment]
            try:
                for ids in spans:
                    dumper.span(f"{name}/span/{ids['run']}/{ids['worker']}/{ids['span']}".replace("..", "__"), ids)
            finally:
                stored_answers._stored = stored  # type: ignore[assignment]
        runs = sorted({s["run"] for s in spans})
        for run in runs:
            count = max(sum(1 for s in spans if s["run"] == run and s["worker"] == w)
                        for w in {s["worker"] for s in spans if s["run"] == run})
            dumper.run(f"run/{run}", run, count)
        pairs = list(zip(spans, spans[1:] + spans[:1]))
        for i, (base, exp) in enumerate(pairs):
            params = {f"base_{k}": v for k, v in base.items()} | {f"exp_{k}": v for k, v in exp.items()}
            dumper.with_csv(f"compare/{i:03d}", "compare", params)
            if i % 3 == 0:
                dumper.get(f"compare/{i:03d}", "compare", {**params, "group_by": "input_shape",
                                                            "base_batch_size": 32})
        dumper.get("runs", "runs", {}, save=False)
        for i, (ids, source) in enumerate(zip(spans, sources)):
            base = ["summary", "--logdir", str(logdir), "--run", ids["run"], "--worker", ids["worker"],
                    "--span", ids["span"]]
            folder = f"cli/{i:03d}"
            for extra in ([], ["--json"], ["--csv", "operators"], ["--csv", "kernels"], ["--csv", "steps"],
                          ["--json", "--group-by", "input_shape", "--sort", "calls", "--top", "5"]):
                dumper.write(folder, "summary " + " ".join(extra), _cli(base + extra).replace(
                    str(logdir).encode(), b"<logdir>"))
            dumper.write(folder, "scalars", _scalars(source.path))
        report = work / "report.html"
        for i, run in enumerate(runs):
            first = next(s for s in spans if s["run"] == run)
            args = ["report", run, "--logdir", str(logdir), "-o", str(report), "--worker", first["worker"],
                    "--span", first["span"]]
            if i + 1 < len(runs):
                other = next(s for s in spans if s["run"] == runs[i + 1])
                args += ["--vs", other["run"], "--vs-worker", other["worker"], "--vs-span", other["span"]]
            printed = _cli(args).replace(str(report).encode(), b"<report>")
            page = report.read_bytes() if report.exists() else b""
            page = re.sub(rb"Written by profscope report on [^<.]*\.", b"Written by profscope report on <date>.", page)
            dumper.write(f"report/{i:03d}", "report.html", printed + b"\n" + page)
            report.unlink(missing_ok=True)
    finally:
        if dumper.plugin._manager is not None:
            dumper.plugin._manager.stop()
        shutil.rmtree(work, ignore_errors=True)
    return dumper.count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="a folder to create (must not exist)")
    args = parser.parse_args()
    if args.out.exists():
        parser.error(f"{args.out} exists")
    begin = time.monotonic()
    count = dump(args.out)
    print(f"{count} answers in {args.out} ({time.monotonic() - begin:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
