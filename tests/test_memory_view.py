"""Memory view: curves, allocation pairing, and per-operator bytes against torch's key_averages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.memory import memory

from conftest import REAL_TRACES, copy_trace, real_trace
from handmade import trace, write, x

# Rows of key_averages that the trace cannot reproduce, and why.
KNOWN_DIFFERENCES = {
    "ProfilerStep*": "key_averages folds every ProfilerStep#N into one row; Profscope keeps one row per step",
    "gloo:all_reduce": "torch counts frees for it that no [memory] event inside its ranges records in the trace",
}


def _memory_traces() -> list[Path]:
    folder = REAL_TRACES / "torch213"
    found = []
    for path in sorted(folder.glob("*/*.pt.trace.json.gz")) if folder.exists() else []:
        stem = path.name.replace(".pt.trace.json.gz", "")
        rows = json.loads((path.parent / f"{stem}.key_averages.json").read_text())["by_name"]
        if any(r["cpu_memory_bytes"] or r["self_cpu_memory_bytes"] for r in rows):
            found.append(path)
    return found


@pytest.mark.parametrize("path", _memory_traces(), ids=lambda p: f"{p.parent.name}/{p.name[:18]}")
def test_operator_bytes_agree_with_key_averages(path: Path) -> None:
    stem = path.name.replace(".pt.trace.json.gz", "")
    reference = json.loads((path.parent / f"{stem}.key_averages.json").read_text())["by_name"]
    result = memory(load_trace(str(path)))
    assert result["available"]
    ours = {r["name"]: r for r in result["by_operator"]}
    compared = 0
    for want in reference:
        if not (want["cpu_memory_bytes"] or want["self_cpu_memory_bytes"]) or want["name"] in KNOWN_DIFFERENCES:
            continue
        got = ours[want["name"]]
        assert got["total_bytes"] == pytest.approx(want["cpu_memory_bytes"], rel=0.01, abs=1), want["name"]
        assert got["self_bytes"] == pytest.approx(want["self_cpu_memory_bytes"], rel=0.01, abs=1), want["name"]
        compared += 1
    assert compared >= 10


def _mem(ts: float, addr: int, nbytes: int, total: int, reserved: int = 0) -> dict:
    return {"ph": "i", "s": "t", "name": "[memory]", "cat": "cpu_instant_event", "pid": 1, "tid": 1, "ts": ts,
            "args": {"Addr": addr, "Bytes": nbytes, "Total Allocated": total, "Total Reserved": reserved,
                     "Device Type": 1, "Device Id": 0}}


def test_handmade_pairs_peak_and_ranges(tmp_path: Path) -> None:
    events = [
        x("aten::empty", 0, 10), _mem(5, 100, 1000, 1000, 4096),
        x("aten::linear", 20, 30), x("aten::empty", 22, 5), _mem(24, 200, 3000, 4000, 4096),
        x("aten::add", 40, 5), _mem(42, 100, -1000, 3000, 4096),
        _mem(60, 300, 500, 3500, 4096),
    ]
    doc = trace(events, deviceProperties=[{"id": 0, "name": "G", "totalGlobalMem": 8192}])
    model = load_trace(str(write(tmp_path / "t.json", doc)))
    result = memory(model)
    (device,) = result["devices"]
    assert device["id"] == "gpu0" and device["capacity"] == 8192
    assert result["peak"]["gpu0"] == {"allocated": 4000, "time": 24.0, "reserved": 4096}
    assert result["curves"]["gpu0"]["allocated"] == [1000, 4000, 3000, 3500]
    table = result["events"]
    rows = {a: i for i, a in enumerate(table["addr"])}
    assert table["bytes"][rows[200]] == 3000 and table["never_freed"][rows[200]] is True
    assert table["free_time"][rows[100]] == 42.0 and table["lifetime"][rows[100]] == 37.0
    assert table["operator"][rows[300]] == ""  # allocated outside any operator
    ops = {r["name"]: r for r in result["by_operator"]}
    assert ops["aten::empty"]["self_bytes"] == 4000 and ops["aten::empty"]["allocations"] == 2
    # linear (20..50) holds the empty at 22 (+3000) and the add at 40 (-1000).
    assert ops["aten::linear"]["total_bytes"] == 2000 and ops["aten::linear"]["self_bytes"] == 0
    assert ops["aten::add"]["self_bytes"] == -1000 and ops["aten::add"]["frees"] == 1
    # Live at the peak (t=24): both allocations made so far.
    assert ops["aten::empty"]["self_peak_bytes"] == 4000
    # A time range filters the tables, not the curves.
    ranged = memory(model, start_us=20, end_us=50)
    assert sorted(ranged["events"]["addr"]) == [200]
    assert {r["name"] for r in ranged["by_operator"]} == {"aten::linear", "aten::empty", "aten::add"}
    assert ranged["curves"] == result["curves"]


def test_handmade_sizes_only_lift_the_running_sum_to_what_the_frees_imply(tmp_path: Path) -> None:
    """Events without address or totals: a free of 100 bytes first means at least 100 were held at the start."""
    def sized(ts: float, nbytes: int) -> dict:
        return {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts, "cat": "cpu_instant_event",
                "args": {"Bytes": nbytes, "Device Type": 1, "Device Id": 0}}

    events = [x("aten::empty", 0, 10), sized(5, -100), x("aten::mul", 20, 10), sized(25, 50), sized(40, 300),
              sized(50, -250)]
    result = memory(load_trace(str(write(tmp_path / "t.json", trace(events)))))
    assert result["curves"]["gpu0"]["allocated"][:4] == [0, 50, 350, 100]
    assert result["peak"]["gpu0"]["allocated"] == 350 and result["peak"]["gpu0"]["time"] == 40.0
    assert result["devices"][0]["allocated_rebuilt"] is True and len(result["notes"]) == 1
    ops = {r["name"]: r for r in result["by_operator"]}
    assert ops["aten::mul"]["self_bytes"] == 50 and ops["aten::empty"]["frees"] == 1


def test_no_memory_events_says_how_to_record(tmp_path: Path) -> None:
    result = memory(load_trace(str(write(tmp_path / "t.json", trace([x("a", 0, 1)])))))
    assert result["available"] is False and "profile_memory=True" in result["hint"]


def test_memory_route(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    copy_trace(real_trace("torch213/conv_cpu_memory/worker0.1795303453480506115.pt.trace.json.gz"), logdir / "c")
    client = make_client(logdir)
    client.settle()
    status, body = client.get("memory", run="c", worker="worker0", min_bytes=1000000, name="mkldnn")
    assert status == 200 and body["available"]
    assert body["events"]["total"] >= 1
    assert all(b >= 1000000 for b in body["events"]["bytes"])
    assert all("mkldnn" in o for o in body["events"]["operator"])
    assert client.get("memory", run="c", worker="worker0", start="x")[0] == 400


def test_memory_response_matches_the_contract(tmp_path: Path, make_client) -> None:
    from test_routes import check

    logdir = tmp_path / "logdir"
    copy_trace(real_trace("torch213/conv_cpu_memory/worker0.1795303453480506115.pt.trace.json.gz"), logdir / "c")
    copy_trace(real_trace("torch213/dataloader_bound_w0/worker0.1795303454060827054.pt.trace.json.gz"), logdir / "n")
    client = make_client(logdir)
    client.settle()
    for run in ("c", "n"):
        status, body = client.get("memory", run=run, worker="worker0")
        assert status == 200
        check(body, "Memory")


def test_curves_run_to_the_end_of_the_span() -> None:
    """After the last memory event the last values hold until the span ends (the chart covers the span)."""
    from profscope.tb_plugin.ingest.load import load_trace
    from profscope.tb_plugin.views.memory import memory

    from conftest import real_trace

    model = load_trace(str(next(real_trace("torch213/conv_cpu_memory").glob("*.pt.trace.json.gz"))))
    answer = memory(model)
    for curve in answer["curves"].values():
        assert curve["time"][-1] == model.end / 1000
        assert curve["allocated"][-1] == curve["allocated"][-2] and curve["reserved"][-1] == curve["reserved"][-2]
        assert curve["time"] == sorted(curve["time"])


def test_memory_events_without_any_slice(tmp_path: Path, make_client) -> None:
    """A span of [memory] events only (no slice to own them): curves, peak and allocations, never a 500."""
    from test_routes import check

    events = [{"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10 + i,
               "args": {"Device Type": 0, "Device Id": -1, "Addr": 100 + i, "Bytes": 64 * (i + 1),
                        "Total Allocated": 32 * (i + 1) * (i + 2), "Total Reserved": 0}} for i in range(3)]
    logdir = tmp_path / "logdir"
    path = write(tmp_path / "src" / "worker0.1.pt.trace.json", trace(events))
    copy_trace(path, logdir / "memonly")
    client = make_client(logdir)
    client.settle()
    for params in ({}, {"name": "aten"}, {"min_bytes": 100}, {"start": 11, "end": 20}):
        status, body = client.get("memory", run="memonly", worker="worker0", **params)
        assert status == 200, body
        check(body, "Memory")
    status, body = client.get("memory", run="memonly", worker="worker0")
    assert body["peak"]["cpu"]["allocated"] == 64 + 128 + 192
    assert body["events"]["bytes"] == [192, 128, 64] and body["events"]["operator"] == ["", "", ""]
    assert body["by_operator"] == []
    # A name filter matches operators: these allocations have none.
    assert client.get("memory", run="memonly", worker="worker0", name="aten")[1]["events"]["total"] == 0


RESNET50 = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"


def test_totals_rebuilt_from_the_sizes_of_old_kineto_events() -> None:
    """PyTorch 1.9's Kineto wrote [memory] events with Bytes, Device Type and Device Id only (12,838 in this span):
    allocated is their running sum per device, lifted by the least amount the frees imply was held at the start."""
    import gzip

    events = [e for e in json.load(gzip.open(real_trace(RESNET50)))["traceEvents"] if e.get("name") == "[memory]"]
    assert len(events) == 12838 and not any("Addr" in e["args"] or "Total Allocated" in e["args"] for e in events)
    by_hand = {}
    for kind, index, ident in ((0, -1, "cpu"), (1, 0, "gpu0")):
        running, lowest, peak, peak_ts = 0, 0, None, None
        for e in sorted((e for e in events if (e["args"]["Device Type"], e["args"]["Device Id"]) == (kind, index)),
                        key=lambda e: e["ts"]):
            running += e["args"]["Bytes"]
            lowest = min(lowest, running)
            if peak is None or running > peak:
                peak, peak_ts = running, e["ts"]
        by_hand[ident] = (peak - lowest, peak_ts)
    result = memory(load_trace(str(real_trace(RESNET50))))
    assert result["available"]  # before: "This span has no memory events"
    assert {d["id"]: (d["events"], d["allocated_rebuilt"]) for d in result["devices"]} == {
        "cpu": (4618, True), "gpu0": (8220, True)}
    for ident, (peak, ts) in by_hand.items():
        assert result["peak"][ident]["allocated"] == peak and result["peak"][ident]["time"] == ts
    assert by_hand["gpu0"][0] == 2791636480  # 2.6 GiB on the V100 at the peak of a ResNet-50 step
    assert len(result["notes"]) == 2 and all("reserved is not known" in note for note in result["notes"])
    # Without addresses nothing is paired: what was freed, and what was live at the peak, are unknown.
    table = result["events"]
    assert table["total"] > 0 and set(table["addr"]) == {None} and set(table["never_freed"]) == {None}
    assert all(row["self_peak_bytes"] is None for row in result["by_operator"])
    assert max(row["self_alloc_bytes"] for row in result["by_operator"]) > 0
