"""A logdir full of hostile files (``hostile_corpus.py``), each its own run, beside good runs: every run
settles, the good runs load, and no route of any span answers 500 or leaks a file from outside."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from conftest import copy_trace, real_trace
from hostile_corpus import GOOD_OPERATOR, MUST_FAIL, write_corpus

GOOD = {
    "good_torch": "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz",
    "good_ddp": "torch213/ddp_gloo_2ranks/rank0.1795303450949782497.pt.trace.json.gz",
}
SETTLE_S = 300.0
# An exception's class name in an answer: internal text, not words for the user.
EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception)\b")
# Every view route with the parameters that select a span (run, worker, span are added).
SPAN_ROUTES: list[tuple[str, dict[str, Any]]] = [
    ("summary", {}), ("overview", {}), ("operators", {}), ("operators", {"group_by": "input_shape"}),
    ("operators", {"group_by": "stack"}), ("operators/detail", {"name": "aten::mm"}), ("kernels", {}),
    ("kernels", {"group_by": "op_and_name"}), ("flamegraph", {}), ("flamegraph", {"weight": "device"}),
    ("stacks/folded", {}), ("modules", {}), ("memory", {}), ("memory", {"start": 0, "end": 1e9, "min_bytes": 1}),
    ("datapipeline", {}), ("steptrace", {}), ("trace/tracks", {}), ("trace/slices", {"width": 800}),
    ("trace/counters", {"width": 800}), ("trace/event", {"id": 0}), ("trace/flows", {"id": 1}),
    ("trace/search", {"q": "a"}), ("trace/download", {}), ("critical_path", {}),
]


class PeakMemory:
    """The highest resident memory of this process and its children (the parser processes), sampled."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for process in [me, *me.children(recursive=True)]:
                try:
                    total += process.memory_info().rss
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total)
            self._stop.wait(0.05)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def test_hostile_corpus_settles_and_never_answers_500(tmp_path: Path, make_client, record_property) -> None:
    logdir = tmp_path / "logdir"
    for run, trace in GOOD.items():
        copy_trace(real_trace(trace), logdir / run)
    kinds = write_corpus(logdir, tmp_path / "outside")
    memory = PeakMemory()
    started = time.monotonic()
    client = make_client(logdir)
    client.settle(SETTLE_S)
    settle_seconds = time.monotonic() - started
    peak = memory.stop()
    record_property("hostile_files", len(kinds))
    record_property("settle_seconds", round(settle_seconds, 1))
    record_property("peak_rss_mb", peak >> 20)
    print(f"\nhostile corpus: {len(kinds)} hostile runs, every run settled in {settle_seconds:.1f} s, "
          f"peak memory of the process tree {peak >> 20} MB")

    status, body = client.get("runs")
    assert status == 200 and body["scanned"]
    runs = {run["name"]: run for run in body["runs"]}
    for run in GOOD:
        assert runs[run]["status"] == "ready", runs[run]
    special = {name for name, kind in kinds.items() if kind == "special" and name != "special_unreadable"}
    assert not special & set(runs), "a special file was listed as a span"
    # What is no trace fails with a message; everything else loads, hostile values dropped or repaired.
    wrong = {name: (runs[name]["status"], runs[name].get("error")) for name in set(kinds) - special
             if runs[name]["status"] != ("error" if name in MUST_FAIL else "ready")}
    assert not wrong, wrong
    assert all(EXCEPTION_NAME.search(runs[name]["error"]) is None for name in MUST_FAIL), \
        {name: runs[name]["error"] for name in MUST_FAIL}
    for name in (name for name, kind in kinds.items() if kind == "bad_value" and name not in MUST_FAIL):
        status, operators = client.get("operators", run=name, worker="worker0", span="1")
        assert status == 200 and GOOD_OPERATOR in {row["name"] for row in operators["rows"]}, name
    # What was dropped or repaired is said in the span's limitations.
    for name, note in (("ts_int_1e400", "invalid_events"), ("ts_float_1e400", "invalid_events"),
                       ("field_ts_8", "invalid_events"), ("name_invalid_utf8", "repaired_text"),
                       ("cat_invalid_utf8", "repaired_text"), ("step_number_huge", "ingest_note"),
                       ("device_properties_hostile", "ingest_note")):
        _, summary = client.get("summary", run=name, worker="worker0", span="1")
        assert note in {item["id"] for item in summary["limitations"]}, (name, summary["limitations"])

    def get(route: str, **params: Any) -> tuple[int, Any, bytes]:
        response = client.client.get(f"/data/plugin/profscope/{route}", query_string=params)
        body = response.get_data()
        is_json = response.headers.get("Content-Type", "").startswith("application/json")
        return response.status_code, (json.loads(body) if is_json and route != "trace/download" else None), body

    failures: list[str] = []
    for run in runs.values():
        for worker in run["workers"]:
            for span in worker["spans"]:
                params = {"run": run["name"], "worker": worker["name"], "span": span}
                for route, extra in SPAN_ROUTES:
                    status, answer, raw = get(route, **params, **extra)
                    if status >= 500 or (status != 200 and not isinstance(answer, dict)):
                        failures.append(f"{route} {params}: {status}")
                    if b"planted secret" in raw:
                        failures.append(f"{route} {params}: leaked a file from outside the logdir")
                    if isinstance(answer, dict) and EXCEPTION_NAME.search(str(answer.get("error", ""))):
                        failures.append(f"{route} {params}: internal error text {answer['error']!r}")
        status, _, _ = get("distributed", run=run["name"])
        if status >= 500:
            failures.append(f"distributed {run['name']}: {status}")
    status, _, _ = get("runs/table")
    if status >= 500:
        failures.append(f"runs/table: {status}")
    first_per_run: dict[str, str] = {}
    for failure in failures:
        first_per_run.setdefault(failure.split("'run': ")[-1].split(",")[0], failure)
    assert not failures, f"{len(failures)} failures; the first of each run:\n" + "\n".join(first_per_run.values())
