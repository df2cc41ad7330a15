"""CSV export: the page's filter and sort rules, formula-safe cells, and every table route with format=csv."""

from __future__ import annotations

import csv
import io
import os
import time
from pathlib import Path

import pytest

from profscope.tb_plugin.views import table_csv as export

from conftest import copy_trace, real_trace
from handmade import gpu_step_trace, trace, write, x

MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"


def settled(path: Path) -> Path:
    """Older than the discovery's settle time: a finished file."""
    old = time.time() - 120
    os.utime(path, (old, old))
    return path


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


# --- the page's rules ----------------------------------------------------------------------


def test_text_order_is_case_insensitive_with_digit_runs_by_value() -> None:
    names = ["b10", "B2", "a", "b1", "_x", "b02", "A"]
    ordered = sorted(names, key=export.text_sort_key)
    # "_" (0x5f) after digits and before letters as lower-case code units; "b2" and "b02" are one value.
    assert ordered == ["_x", "a", "A", "b1", "B2", "b02", "b10"]


def test_sort_is_stable_with_missing_values_last_in_both_directions() -> None:
    rows = [{"k": "a", "v": 2.0}, {"k": "b", "v": None}, {"k": "c", "v": 1.0}, {"k": "d", "v": 2.0},
            {"k": "e", "v": float("nan")}]
    value = lambda row: row["v"]  # noqa: E731
    assert [r["k"] for r in export.sort_rows(rows, value, "asc")] == ["c", "a", "d", "b", "e"]
    assert [r["k"] for r in export.sort_rows(rows, value, "desc")] == ["a", "d", "c", "b", "e"]


def test_filter_needs_every_word_ignoring_case() -> None:
    rows = [{"n": "aten::Conv2d"}, {"n": "aten::add"}, {"n": "conv_backward"}]
    assert export.filter_rows(rows, "  CONV  aten ", lambda r: r["n"]) == [{"n": "aten::Conv2d"}]
    assert export.filter_rows(rows, "", lambda r: r["n"]) == rows


def test_cells_from_traces_cannot_be_formulas() -> None:
    table = export.Table("t", [export.Column("name", "Name", lambda r: r["name"]),
                               export.Column("v", "V", lambda r: r["v"])],
                         [{"name": "=HYPERLINK(\"x\")", "v": -3.5}, {"name": "+1", "v": 12.0},
                          {"name": "@cmd", "v": None}, {"name": "-x", "v": True}, {"name": "a,\"b\"\nc", "v": 1e-7}],
                         lambda r: r["name"], None)
    assert rows_of(export.to_csv(table)) == [
        ["Name", "V"], ["'=HYPERLINK(\"x\")", "-3.5"], ["'+1", "12"], ["'@cmd", ""], ["'-x", "yes"],
        ["a,\"b\"\nc", "1e-07"]]


def test_short_kernel_name_matches_the_page() -> None:
    # The examples of frontend/test (shortKernelName).
    assert export.short_kernel_name("void at::native::foo<4>(int, float*)") == "at::native::foo<4>"
    assert export.short_kernel_name("void f<(a)>(g(x))") == "f<(a)>"
    assert export.short_kernel_name("(x)") == "(x)"
    assert export.short_kernel_name("sgemm") == "sgemm"


def test_unknown_sort_column_falls_back_to_the_default() -> None:
    answer = {"group_by": "name", "has_device": False,
              "rows": [{"name": "b", "calls": 1, "host_self": 1.0, "host_total": 1.0, "device_self": 0.0,
                        "device_total": 0.0, "tc_eligible": False, "tc_self_share": 0.0, "tc_total_share": 0.0},
                       {"name": "a", "calls": 3, "host_self": 5.0, "host_total": 6.0, "device_self": 0.0,
                        "device_total": 0.0, "tc_eligible": False, "tc_self_share": 0.0, "tc_total_share": 0.0}]}
    table = export.operators_table(answer)
    assert [c.id for c in table.columns] == ["name", "calls", "host_self", "host_total"]
    for sort in (None, "nope:asc", "calls;drop:asc", "device_self:desc"):
        assert [r[0] for r in rows_of(export.to_csv(table, sort))[1:]] == ["a", "b"]  # host_self desc
    assert [r[0] for r in rows_of(export.to_csv(table, "name:asc"))[1:]] == ["a", "b"]
    assert [r[0] for r in rows_of(export.to_csv(table, "calls:asc"))[1:]] == ["b", "a"]


def test_tensor_core_shares_are_blank_where_they_do_not_apply() -> None:
    base = {"calls": 1, "host_self": 1.0, "host_total": 1.0, "device_self": 1.0, "tc_self_share": 0.0,
            "tc_total_share": 0.0}
    answer = {"group_by": "name", "has_device": True, "rows": [
        dict(base, name="cpu_only", device_total=0.0, tc_eligible=True),
        dict(base, name="eligible", device_total=5.0, tc_eligible=True, tc_self_share=0.25),
        dict(base, name="ineligible", device_total=5.0, tc_eligible=False)]}
    lines = rows_of(export.to_csv(export.operators_table(answer), "tc_self_share:asc"))
    header = lines[0]
    assert header[-3:] == ["TC eligible", "TC self (fraction)", "TC total (fraction)"]
    assert [(r[0], r[-2]) for r in lines[1:]] == [("eligible", "0.25"), ("cpu_only", ""), ("ineligible", "")]


# --- routes ----------------------------------------------------------------------------------


@pytest.fixture
def client(tmp_path: Path, make_client):
    logdir = tmp_path / "logdir"
    copy_trace(real_trace(MLP), logdir / "mlp")
    settled(write(logdir / "gpu" / "worker0.1.pt.trace.json", gpu_step_trace()))
    c = make_client(logdir)
    c.settle()
    return c


def _csv(client, route: str, **params: str) -> tuple[int, str, dict[str, str]]:
    response = client.client.get(f"/data/plugin/profscope/{route}", query_string=dict(params, format="csv"))
    return response.status_code, response.get_data(as_text=True), dict(response.headers)


def test_operators_csv_is_the_route_answer_filtered_and_sorted(client) -> None:
    status, answer = client.get("operators", run="mlp", worker="worker0", group_by="input_shape")
    assert status == 200
    code, text, headers = _csv(client, "operators", run="mlp", worker="worker0", group_by="input_shape",
                               sort="calls:desc", filter="aten ADD")
    assert code == 200
    assert headers["Content-Type"] == "text/csv; charset=utf-8"
    assert headers["Content-Disposition"].startswith('attachment; filename="operators-mlp-worker0')
    lines = rows_of(text)
    assert lines[0] == ["Operator", "Input shapes", "Calls", "Host self (us)", "Host total (us)", "GFLOP",
                        "Data moved (bytes)", "TFLOP/s", "TB/s", "Arithmetic intensity (FLOP/byte)", "Bound",
                        "Share of roofline (fraction)"]
    expected = [r for r in answer["rows"] if "aten" in r["name"].lower() and "add" in r["name"].lower()]
    expected.sort(key=lambda r: -r["calls"])
    assert len(expected) >= 2
    assert [(r[0], r[1], int(r[2]), float(r[3])) for r in lines[1:]] == [
        (r["name"], r["input_shape"], r["calls"], pytest.approx(r["host_self"], rel=1e-12)) for r in expected]
    # The efficiency columns are the route's (a CPU-only span: no roofline, so no bound or share).
    assert [(float(r[5]) if r[5] else None, r[10], r[11]) for r in lines[1:]] == [
        (pytest.approx(r["gflops"], rel=1e-12) if r["gflops"] is not None else None, "", "") for r in expected]


def test_kernels_and_memory_csv(client) -> None:
    code, text, _ = _csv(client, "kernels", run="gpu", worker="worker0")
    assert code == 200
    lines = rows_of(text)
    assert lines[0][:3] == ["Kernel", "Calls", "Total (us)"]
    assert lines[1][:3] == ["implicit_convolve_sgemm", "1", "400"]
    code, text, _ = _csv(client, "memory", run="gpu", worker="worker0", table="events")
    assert code == 200
    assert rows_of(text)[1][:4] == ["0x3e8", "512", "aten::conv2d", "GPU 0"]  # address 1000, as the page shows it
    code, text, _ = _csv(client, "memory", run="gpu", worker="worker0", table="operators")
    assert code == 200
    assert rows_of(text)[1][:3] == ["aten::conv2d", "1", "1"]
    code, _, _ = _csv(client, "memory", run="gpu", worker="worker0", table="nope")
    assert code == 400


def test_run_table_and_compare_csv(client) -> None:
    code, text, _ = _csv(client, "runs/table", sort="steps:desc")
    assert code == 200
    lines = rows_of(text)
    assert [line[0] for line in lines[1:]] == ["mlp", "gpu"]  # 3 steps, then 1
    code, text, _ = _csv(client, "compare", base_run="mlp", base_worker="worker0", exp_run="gpu",
                         exp_worker="worker0", table="kernels")
    assert code == 200
    lines = rows_of(text)
    assert lines[0][:3] == ["Kernel", "In", "Change per step (us)"]
    assert lines[1][:3] == ["implicit_convolve_sgemm", "experiment only", "400"]


def test_compare_route_with_batch_sizes_entered_in_the_page(client) -> None:
    from test_routes import check

    params = dict(base_run="mlp", base_worker="worker0", exp_run="gpu", exp_worker="worker0")
    status, plain = client.get("compare", **params)
    assert status == 200 and plain["per_sample"] is None
    status, answer = client.get("compare", **params, base_batch_size=8, exp_batch_size=16)
    assert status == 200
    check(answer, "Compare")
    assert (answer["base"]["batch_size"], answer["base"]["batch_size_source"]) == (8, "page")
    assert answer["per_sample"]["exp"] == pytest.approx(answer["step_time"]["exp"] / 16)
    assert answer["notes"][0]["id"] == "batch_sizes_differ"
    code, text, _ = _csv(client, "compare", **params, base_batch_size="8", exp_batch_size="16", table="kernels")
    assert code == 200
    header = rows_of(text)[0]
    assert "Change per sample (us)" in header
    assert client.get("compare", **params, base_batch_size="x")[0] == 400


def test_csv_errors_are_the_json_errors(client) -> None:
    code, text, headers = _csv(client, "operators", run="nope", worker="worker0")
    assert code == 404 and headers["Content-Type"] == "application/json"
    response = client.client.get("/data/plugin/profscope/operators",
                                 query_string={"run": "mlp", "worker": "worker0", "format": "xml"})
    assert response.status_code == 400


def test_a_hostile_name_stays_text(tmp_path: Path, make_client) -> None:
    logdir = tmp_path / "logdir"
    settled(write(logdir / "evil" / "worker0.1.pt.trace.json", trace([
        x("ProfilerStep#1", 0, 100, cat="user_annotation"), x("=cmd|' /C calc'!A0", 10, 20), x("@SUM(A1)", 40, 5)])))
    client = make_client(logdir)
    client.settle()
    code, text, _ = _csv(client, "operators", run="evil", worker="worker0", sort="name:asc")
    assert code == 200
    assert [line[0] for line in rows_of(text)[1:]] == ["'=cmd|' /C calc'!A0", "'@SUM(A1)"]


def test_numpy_numbers_are_plain_cells() -> None:
    import numpy as np

    table = export.Table("t", [export.Column("v", "V", lambda r: r["v"])],
                         [{"v": np.float64(926.05)}, {"v": np.int64(3)}, {"v": np.float32("nan")}, {"v": np.bool_(True)}],
                         lambda r: "", ("v", "desc"))
    assert rows_of(export.to_csv(table)) == [["V"], ["926.05"], ["3"], ["yes"], [""]]


def test_memory_csv_shows_addresses_and_times_as_the_page_does(client) -> None:
    """Hexadecimal addresses and times from the span's start (the page's allocation table), not the trace's
    decimal addresses and absolute times; the origin is the span's start that the summary states."""
    status, answer = client.get("memory", run="mlp", worker="worker0")
    assert status == 200
    status, summary = client.get("summary", run="mlp", worker="worker0")
    assert status == 200
    assert answer["span_start"] == summary["start"]
    assert answer["span_start"] > 1e9  # the trace's absolute time base: relative times differ from it
    events = dict(zip(answer["events"]["columns"], (answer["events"][c] for c in answer["events"]["columns"])))
    code, text, _ = _csv(client, "memory", run="mlp", worker="worker0", table="events", sort="alloc_time:asc")
    assert code == 200
    lines = rows_of(text)
    header = lines[0]
    assert header[:1] == ["Address"] and header[4:6] == ["Allocated at (us from the span start)",
                                                          "Freed at (us from the span start)"]
    order = sorted(range(len(events["addr"])), key=lambda i: events["alloc_time"][i])
    assert len(lines) - 1 == len(order) > 10
    for line, i in zip(lines[1:], order):
        assert line[0] == f"0x{events['addr'][i]:x}"
        assert float(line[4]) == pytest.approx(events["alloc_time"][i] - answer["span_start"], abs=1e-6)
        if events["free_time"][i] is None:
            assert line[5] == ""
        else:
            assert float(line[5]) == pytest.approx(events["free_time"][i] - answer["span_start"], abs=1e-6)
