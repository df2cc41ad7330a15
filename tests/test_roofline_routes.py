"""The efficiency figures on the routes (roofline, operators, kernels, overview, run table, compare, distributed):
the contract, the values (from TraceLens's tables and by hand), one definition wherever shown, and the user's
device peaks file (good, and unusable)."""

from __future__ import annotations

import ast
import csv
import io
import json
from pathlib import Path

import pytest

from profscope.tb_plugin.server.plugin import ProfscopePlugin

from conftest import PluginClient, copy_trace, real_trace
from test_routes import check

BERT = "tracelens/h100/gaunernst_bert-small-uncased"
BERT_TRACE = f"{BERT}/gaunernst_bert-small-uncased__1016001.json.gz"
MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"
NCCL = "hta/nccl_parser_config/nccl_data.json.gz"
H100_BF16 = 989.5e12  # NVIDIA H100 SXM, dense BF16 (the datasheet's 1979 "with sparsity" / 2)
H100_BANDWIDTH = 3.35e12


class PeaksClient(PluginClient):
    """The test client with a device peaks file given to the plugin, as --profscope_device_peaks does."""

    def __init__(self, logdir: Path, cache_dir: Path, peaks: str) -> None:
        from tensorboard.backend import application
        from tensorboard.plugins import base_plugin
        from werkzeug import test as werkzeug_test

        self.plugin = ProfscopePlugin(base_plugin.TBContext(logdir=str(logdir)), cache_dir=str(cache_dir),
                                      refresh_seconds=0.5, device_peaks=peaks)
        self.client = werkzeug_test.Client(application.TensorBoardWSGI([self.plugin]))


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("efficiency")
    # Named as torch's handler names its files: TraceLens's pipeline puts 26 KB of its own metadata before the
    # events, further than discovery reads to tell a trace by its content.
    copy_trace(real_trace(BERT_TRACE), root / "bert", "worker0.1752830085464.pt.trace.json.gz")
    copy_trace(real_trace(MLP), root / "mlp")
    return root


@pytest.fixture(scope="module")
def client(logdir: Path, tmp_path_factory: pytest.TempPathFactory):
    c = PluginClient(logdir, tmp_path_factory.mktemp("cache"))
    c.settle()
    yield c
    c.close()


def _worker(client: PluginClient, run: str) -> str:
    _, runs = client.get("runs")
    return next(r for r in runs["runs"] if r["name"] == run)["workers"][0]["name"]


def test_roofline_route_contract_and_points(client: PluginClient) -> None:
    worker = _worker(client, "bert")
    status, body = client.get("roofline", run="bert", worker=worker)
    assert status == 200, body
    check(body, "Roofline")
    (device,) = body["devices"]
    assert device["name"] == "NVIDIA H100 SXM" and device["bandwidth"] == H100_BANDWIDTH
    bf16 = next(r for r in device["roofs"] if r["precision"] == "bf16")
    assert bf16["peak"] == H100_BF16 and bf16["ridge"] == pytest.approx(H100_BF16 / H100_BANDWIDTH)
    # Every point's figures follow from its FLOPs, bytes and time (the definitions of efficiency.py).
    for point in body["points"]:
        flops, moved = point["flops_per_call"] * point["calls"], point["bytes_per_call"] * point["calls"]
        assert point["gflops"] == pytest.approx(flops / 1e9)
        assert point["tflops_per_s"] == pytest.approx(flops / (point["time"] / 1e6) / 1e12)
        peak = H100_BF16 if point["unit"] == "matrix" else 67e12  # vector work: the FP32 vector peak
        roofline = max(flops / peak, moved / H100_BANDWIDTH) * 1e6
        assert point["roofline_time"] == pytest.approx(roofline)
        assert point["roofline_share"] == pytest.approx(roofline / point["time"])
        assert point["bound"] == ("compute" if flops / peak >= moved / H100_BANDWIDTH else "memory")
    # The gaps are the points with the most time above their roof, largest first.
    gaps = [g["gap"] for g in body["gaps"]]
    assert gaps == sorted(gaps, reverse=True) and gaps[0] > 0
    top = body["gaps"][0]
    assert top["gap"] == pytest.approx(top["time"] - top["roofline_time"])
    assert body["points"][top["index"]]["name"] == top["name"]
    code, text = client.get("roofline", run="bert", worker=worker, format="csv", table="gaps")
    assert code == 200
    rows = list(csv.reader(io.StringIO(text.decode("utf-8"))))
    assert len(rows) == len(body["gaps"]) + 1 and top["name"] in rows[1]


def test_operator_rows_agree_with_tracelens_and_the_roofline(client: PluginClient) -> None:
    worker = _worker(client, "bert")
    status, body = client.get("operators", run="bert", worker=worker, group_by="input_shape")
    assert status == 200
    check(body, "Operators")
    assert body["efficiency"] is True and body["time_basis"] == "device"
    # TraceLens's GEMM table of this trace: GFLOPS of one call and the call count, per shape.
    table = (real_trace(BERT) / "perf_report_csvs" / "GEMM.csv").read_text()
    rows = {(r["name"], json.dumps(ast.literal_eval(r["Input Dims_first"]), separators=(",", ":"))): r
            for r in csv.DictReader(io.StringIO(table))}
    checked = 0
    for row in body["rows"]:
        key = (row["name"], json.dumps(json.loads(row["input_shape"]), separators=(",", ":")))
        if key in rows:
            reference = rows[key]
            assert row["perf_calls"] == int(reference["name_count"])
            assert row["gflops"] == pytest.approx(float(reference["GFLOPS_first"]) * int(reference["name_count"]))
            assert row["bytes"] == pytest.approx(float(reference["Data Moved (MB)_first"]) * 2**20
                                                 * int(reference["name_count"]))
            checked += 1
    assert checked == len(rows) > 0
    # The same figures on the Roofline page: the rows of one operator sum its points.
    _, roofline = client.get("roofline", run="bert", worker=worker)
    by_name = {}
    for point in roofline["points"]:
        by_name[point["name"]] = by_name.get(point["name"], 0.0) + point["gflops"]
    _, by_operator = client.get("operators", run="bert", worker=worker)
    for row in by_operator["rows"]:
        if row["name"] in by_name:
            assert row["gflops"] == pytest.approx(by_name[row["name"]])
    linear = [r for r in by_operator["rows"] if r["name"] == "aten::linear"]
    assert linear and linear[0]["gflops"] is None and "nested" in linear[0]["perf_reason"]


def test_kernel_rows_share_their_calls_work(client: PluginClient) -> None:
    worker = _worker(client, "bert")
    status, body = client.get("kernels", run="bert", worker=worker)
    assert status == 200
    check(body, "Kernels")
    assert body["efficiency"] is True
    _, operators = client.get("operators", run="bert", worker=worker)
    # Each counted call's FLOPs are shared among its kernels: the kernels' FLOPs sum to the operators'.
    kernel_gflops = sum(r["gflops"] or 0.0 for r in body["rows"])
    operator_gflops = sum(r["gflops"] or 0.0 for r in operators["rows"])
    assert kernel_gflops == pytest.approx(operator_gflops, rel=1e-9)


def test_overview_efficiency(client: PluginClient) -> None:
    worker = _worker(client, "bert")
    status, body = client.get("overview", run="bert", worker=worker)
    assert status == 200
    check(body, "Overview")
    efficiency = body["efficiency"]
    # MFU by hand from the roofline's points: the matrix FLOPs over the BF16 peak, over the one step's time.
    _, roofline = client.get("roofline", run="bert", worker=worker)
    ideal_s = sum(p["flops_per_call"] * p["calls"] / H100_BF16 for p in roofline["points"] if p["unit"] == "matrix")
    (step,) = body["steps"]
    assert efficiency["mfu"]["mean"] == pytest.approx(ideal_s / (step["dur"] / 1e6), rel=1e-9)
    assert efficiency["mfu"]["steps"][0]["mfu"] == efficiency["mfu"]["mean"]
    assert "matrix operators" in efficiency["mfu"]["counted"]
    # Time under half the roofline: the points below it.
    low = sum(p["time"] for p in roofline["points"] if p["roofline_share"] is not None and p["roofline_share"] < 0.5)
    assert efficiency["low_roofline"]["time"] == pytest.approx(low)
    categories = {c["category"]: c for c in efficiency["categories"]}
    assert categories["gemm"]["share"] > 0.5
    assert any(r["id"] == "low_roofline_gemm" and "BF16 roof" in r["text"] for r in body["recommendations"])
    # A CPU-only span: no MFU, and why.
    _, cpu = client.get("overview", run="mlp", worker="worker0")
    assert cpu["efficiency"]["mfu"]["mean"] is None and "CPU" in cpu["efficiency"]["mfu"]["reason"]


def test_run_table_and_compare_show_the_overviews_mfu(client: PluginClient) -> None:
    worker = _worker(client, "bert")
    _, overview = client.get("overview", run="bert", worker=worker)
    status, table = client.get("runs/table")
    assert status == 200
    check(table, "RunTable")
    row = next(r for r in table["rows"] if r["run"] == "bert")
    assert row["mfu"] == overview["efficiency"]["mfu"]["mean"]
    status, compared = client.get("compare", base_run="mlp", base_worker="worker0", exp_run="bert", exp_worker=worker)
    assert status == 200
    check(compared, "Compare")
    assert compared["mfu"]["exp"] == overview["efficiency"]["mfu"]["mean"] and compared["mfu"]["base"] is None


def test_a_peaks_file_replaces_figures_and_a_bad_one_says_why(logdir: Path, tmp_path: Path) -> None:
    peaks = tmp_path / "peaks.json"
    peaks.write_text(json.dumps({"devices": [{"match": "H100", "tflops": {"bf16": 500},
                                              "source": "measured on our cluster"}]}))
    client = PeaksClient(logdir, tmp_path / "cache-good", str(peaks))
    try:
        client.settle()
        worker = _worker(client, "bert")
        _, body = client.get("roofline", run="bert", worker=worker)
        (device,) = body["devices"]
        assert next(r for r in device["roofs"] if r["precision"] == "bf16")["peak"] == 500e12
        assert "measured on our cluster" in device["source"] and body["peaks_error"] == ""
    finally:
        client.close()
    (tmp_path / "bad.json").write_text('{"devices": [{"match": "H100", "tflops": {"bf16": "fast"}}]}')
    client = PeaksClient(logdir, tmp_path / "cache-bad", str(tmp_path / "bad.json"))
    try:
        client.settle()
        worker = _worker(client, "bert")
        status, body = client.get("overview", run="bert", worker=worker)
        assert status == 200 and '"tflops" must map' in body["efficiency"]["peaks_error"]
        _, roofline = client.get("roofline", run="bert", worker=worker)
        assert roofline["devices"][0]["name"] == "NVIDIA H100 SXM"  # the built-in table still applies
    finally:
        client.close()


def test_collective_bandwidth_on_the_distributed_view(tmp_path: Path, make_client) -> None:
    root = tmp_path / "logdir"
    copy_trace(real_trace(NCCL), root / "job")
    client = make_client(root)
    client.settle()
    _, runs = client.get("runs")
    status, body = client.get("distributed", run="job")
    assert status == 200
    check(body, "Distributed")
    allreduce = next(c for c in body["collectives"] if c["name"] == "allreduce")
    # By hand: this A100 rank's all-reduces, message bytes over their durations; 2 ranks: bus = algorithm bandwidth.
    assert allreduce["algbw"] == pytest.approx(allreduce["bytes"] / (allreduce["total"] / 1e6))
    assert allreduce["group_size"] == 2 and allreduce["busbw"] == pytest.approx(allreduce["algbw"])
    assert body["link"]["peak"] == 300e9  # NVLink 3 of the A100: 600 GB/s both ways
