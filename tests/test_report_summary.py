"""``profscope summary`` and ``profscope report``: numbers on real traces, the HTML's safety, bad inputs."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Optional

import pytest

from profscope.tb_plugin.reports import cli, report, report_html, summary
from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.operators import operators
from profscope.tb_plugin.views.overview import overview

from conftest import copy_trace, real_trace
from handmade import gpu_step_trace, write, x

RESNET = "kineto_resnet50/resnet50_num_workers_0"
SPAN_1 = "1623143089861"  # the file with the smaller timestamp: the first span
SPAN_2 = "1623143566756"
W0 = "torch213/dataloader_bound_w0"
W2 = "torch213/dataloader_bound_w2"
CONV_MEMORY = "torch213/conv_cpu_memory"
HOSTILE = "<img src=x onerror=alert(1)>"
# torch-tb-profiler's category names (expectations.json) → ours.
CATEGORY_OF = {"Kernel": "kernel", "Memcpy": "memcpy", "Memset": "memset", "Runtime": "runtime",
               "DataLoader": "dataloader", "CPU Exec": "cpu_exec", "Other": "other"}


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI caches parsed traces: keep that cache inside the test."""
    monkeypatch.setenv("PROFSCOPE_CACHE_DIR", str(tmp_path / "model-cache"))


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def expectations(span: str) -> dict[str, Any]:
    """What torch-tb-profiler reports for that span of the ResNet-50 job."""
    doc = json.loads(real_trace("kineto_resnet50/expectations.json").read_text())
    return doc["files"][f"resnet50_num_workers_0/worker0.{span}.pt.trace.json.gz"]


def resnet_file(span: str) -> Path:
    return real_trace(f"{RESNET}/worker0.{span}.pt.trace.json.gz")


def section(text: str, title: str) -> list[str]:
    """The lines of the summary section whose first line starts with ``title`` (up to the blank line)."""
    blocks = text.split("\n\n")
    found = [b for b in blocks if b.startswith(title)]
    assert len(found) == 1, f"no single section {title!r} in:\n{text}"
    return found[0].splitlines()


def table_rows(lines: list[str]) -> list[str]:
    """The rows of a text table section: after its title, header and rule."""
    rule = next(i for i, line in enumerate(lines) if set(line.replace(" ", "")) == {"-"})
    return lines[rule + 1:]


def columns_of(row: str) -> list[str]:
    """Cells of a text-table row: columns are separated by two spaces or more."""
    return re.split(r" {2,}", row.strip())


def logdir_with(tmp_path: Path, runs: dict[str, str]) -> Path:
    """A logdir of copies of real traces: run folder → shared trace folder."""
    logdir = tmp_path / "logdir"
    for run, folder in runs.items():
        for source in sorted(real_trace(folder).glob("*.pt.trace.json.gz")):
            copy_trace(source, logdir / run)
    return logdir


# --- summary on real traces ----------------------------------------------------------------


@pytest.mark.parametrize("span", [SPAN_1, SPAN_2])
def test_summary_breakdown_matches_torch_tb_profiler(span: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys, "summary", str(resnet_file(span)))
    assert status == 0, err
    expected = expectations(span)["overview"]
    rows = {columns_of(r)[0]: columns_of(r)[1:] for r in table_rows(section(out, "Step-time breakdown"))}
    for theirs, ours in CATEGORY_OF.items():
        mean, percent = rows[report.CATEGORY_LABELS[ours]]
        assert mean == f"{expected['average_us'][theirs]:,} µs"
        assert abs(float(percent.rstrip("%")) - expected["average_percent"][theirs]) <= 0.051, theirs
    assert rows["Step (total)"][0] == f"{expected['average_us']['Average Step Time']:,} µs"
    assert "Communication" not in rows  # no collective in this single-GPU job


def test_summary_of_first_resnet_span(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys, "summary", str(resnet_file(SPAN_1)))
    assert status == 0, err
    assert "Kernel            98,589 µs      55.5%" in out  # the numbers the brief names, aligned
    gpu = expectations(SPAN_1)["overview"]["gpu_summary"]
    gpu_lines = section(out, "GPU summary")
    assert gpu["Name"] in gpu_lines[1] and f"compute capability {gpu['Compute Capability']}" in gpu_lines[1]
    assert f"utilization {float(gpu['GPU Utilization'].split()[0]):.1f}%" in gpu_lines[2]
    benchmark = section(out, "Benchmark")[0]
    assert benchmark.startswith("Benchmark: 6 steps, mean step time 177.59 ms")
    assert f"{1e6 / 177592.1666:.2f} steps/s" in benchmark
    assert "Recommendations" in out and "loading data" in out

    operator_lines = section(out, "Top 10 operators by device self time")
    assert "(of 76, grouped by name)" in operator_lines[0]
    assert columns_of(operator_lines[1]) == ["Name", "Calls", "Host self", "Host total", "Device self", "Device total"]
    top = expectations(SPAN_1)["top_operators_by_device_self"]
    rows = [columns_of(r) for r in table_rows(operator_lines)]
    assert len(rows) == 10
    assert rows[0] == ["aten::cudnn_convolution_backward_weight", "318", "22.80 ms", "40.25 ms", "142.46 ms",
                       "142.46 ms"]
    assert [r[0] for r in rows] == [t["name"] for t in top[:10]]

    kernel_lines = section(out, "Top 10 kernels by total time")
    kernels = expectations(SPAN_1)["top_kernels_by_total"]
    first = columns_of(table_rows(kernel_lines)[0])
    assert first[0].endswith(report.ELLIPSIS) and kernels[0]["Name"].startswith(first[0][:-1])
    assert len(first[0]) == report.NAME_WIDTH
    assert first[1:3] == [f"{kernels[0]['Calls']}", f"{kernels[0]['Total Duration (us)'] / 1e3:.2f} ms"]
    # 2021 Kineto memory events (sizes only): allocated rebuilt from them, said under the table.
    memory_lines = section(out, "Memory peak per device")
    assert [columns_of(r)[0] for r in table_rows(memory_lines)][:2] == ["CPU", "GPU 0"]
    assert sum("reserved is not known" in line for line in memory_lines) == 2


def test_summary_by_logdir_defaults_to_the_last_span(capsys: pytest.CaptureFixture[str]) -> None:
    logdir = real_trace(RESNET).parent
    status, out, err = run_cli(capsys, "summary", "--logdir", str(logdir), "--run", "resnet50_num_workers_0")
    assert status == 0, err
    assert out.startswith(f"Profscope summary: resnet50_num_workers_0 · worker0 · {SPAN_2}\n")
    expected = expectations(SPAN_2)["overview"]["average_us"]
    assert f"{expected['Kernel']:,} µs" in out
    status, named, err = run_cli(capsys, "summary", "--logdir", str(logdir), "--run", "resnet50_num_workers_0",
                                 "--worker", "worker0", "--span", SPAN_1)
    assert status == 0, err
    assert "98,589 µs" in named


def test_summary_top_sort_and_input_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    trace = next(real_trace(CONV_MEMORY).glob("*.pt.trace.json.gz"))
    status, out, err = run_cli(capsys, "summary", str(trace), "--top", "4", "--sort", "calls",
                               "--group-by", "input_shape")
    assert status == 0, err
    lines = section(out, "Top 4 operators by calls")
    assert "grouped by name and input shape" in lines[0]
    # A CPU-only span: no device columns.
    assert columns_of(lines[1]) == ["Name", "Input shape", "Calls", "Host self", "Host total"]
    rows = table_rows(lines)
    assert len(rows) == 4
    calls = [int(columns_of(r)[-3].replace(",", "")) for r in rows]
    assert calls == sorted(calls, reverse=True)
    # The call counts of the most called (operator, input shape) pairs, as torch's own key_averages counts them.
    reference = json.loads(next(real_trace(CONV_MEMORY).glob("*.key_averages.json")).read_text())
    torch_calls = sorted((r["calls"] for r in reference["by_input_shape"] if r["name"] != "ProfilerStep*"),
                         reverse=True)
    assert calls == torch_calls[:4]
    assert "Kernels: no GPU kernels in this span" in out


def test_summary_sorts_a_cpu_span_by_host_time_for_device_sorts(capsys: pytest.CaptureFixture[str]) -> None:
    trace = next(real_trace(W0).glob("*.pt.trace.json.gz"))
    status, out, err = run_cli(capsys, "summary", str(trace), "--sort", "device_total", "--top", "5")
    assert status == 0, err
    rows = table_rows(section(out, "Top 5 operators by host total time"))
    expected = sorted(operators(load_trace(str(trace)), "name")["rows"], key=lambda r: -r["host_total"])[:5]
    assert [columns_of(r)[0] for r in rows] == [r["name"] for r in expected]


def test_summary_json_for_scripts(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys, "summary", str(resnet_file(SPAN_1)), "--json", "--top", "3")
    assert status == 0, err
    doc = json.loads(out)
    expected = expectations(SPAN_1)["overview"]
    # The overview answer as the route gives it: µs per step by category, torch-tb-profiler's figures.
    for theirs, ours in CATEGORY_OF.items():
        assert doc["overview"]["breakdown"][ours] == pytest.approx(expected["average_us"][theirs], abs=1)
    assert doc["span"]["framework"] == "pytorch"
    assert doc["operators"]["sort"] == "device_self" and len(doc["operators"]["rows"]) == 3
    device_self = [row["device_self"] for row in doc["operators"]["rows"]]
    assert device_self == sorted(device_self, reverse=True)
    assert len(doc["kernels"]["rows"]) == 3 and doc["kernels"]["total_rows"] >= 3
    # Recorded with profile_memory by a 2021 Kineto (sizes only): peaks rebuilt from the sizes, with notes.
    assert doc["memory"]["available"] and len(doc["memory"]["notes"]) == 2
    assert {p["device"]: p["allocated"] for p in doc["memory"]["peaks"]} == {"CPU": 57803264, "GPU 0": 2791636480}


def test_summary_csv_is_the_pages_table(capsys: pytest.CaptureFixture[str]) -> None:
    trace = next(real_trace(W0).glob("*.pt.trace.json.gz"))
    status, out, err = run_cli(capsys, "summary", str(trace), "--csv", "--sort", "calls")
    assert status == 0, err
    lines = list(csv.reader(io.StringIO(out)))
    # The page's columns, the efficiency ones included (this CPU span has FLOPs but no device peaks).
    assert lines[0] == ["Operator", "Calls", "Host self (us)", "Host total (us)", "GFLOP", "Data moved (bytes)",
                        "TFLOP/s", "TB/s", "Arithmetic intensity (FLOP/byte)", "Bound", "Share of roofline (fraction)"]
    rows = operators(load_trace(str(trace)), "name")["rows"]
    assert len(lines) == len(rows) + 1  # every row, not --top
    calls = [int(line[1]) for line in lines[1:]]
    assert calls == sorted(calls, reverse=True)
    status, out, err = run_cli(capsys, "summary", str(trace), "--csv", "steps")
    assert status == 0, err
    steps = list(csv.reader(io.StringIO(out)))
    assert steps[0][:3] == ["Step", "Start (us)", "Duration (us)"] and len(steps) > 1
    # Each step's categories add up to its duration.
    for line in steps[1:]:
        assert sum(float(v) for v in line[3:]) == pytest.approx(float(line[2]), rel=1e-6)
    with pytest.raises(SystemExit):
        run_cli(capsys, "summary", str(trace), "--csv", "--json")


def test_summary_memory_peak_is_the_trace_maximum(capsys: pytest.CaptureFixture[str]) -> None:
    trace = next(real_trace(CONV_MEMORY).glob("*.pt.trace.json.gz"))
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    peak = max(e["args"]["Total Allocated"] for e in events if e.get("name") == "[memory]")
    status, out, err = run_cli(capsys, "summary", str(trace))
    assert status == 0, err
    rows = [columns_of(r) for r in table_rows(section(out, "Memory peak per device"))]
    assert rows[0][:2] == ["CPU", report.format_bytes(peak)]


# --- report ----------------------------------------------------------------------------------


class PageParser(HTMLParser):
    """The elements of a page, their attributes, and its visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, Optional[str]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse_page(path: Path) -> PageParser:
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


def assert_self_contained(path: Path) -> PageParser:
    """No element that fetches or runs anything; links only within the page; a CSP that forbids the rest."""
    page = parse_page(path)
    tag_names = {tag for tag, _ in page.tags}
    assert not tag_names & {"script", "img", "link", "iframe", "object", "embed", "image", "use", "base", "form"}
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name not in ("src", "srcset", "xlink:href", "action"), (tag, name)
            if name == "href":
                assert value and value.startswith("#"), (tag, value)
    assert not re.search(r"(?i)\b(?:https?|ftp|file|data|javascript):", path.read_text(encoding="utf-8").replace(
        "http-equiv", ""))
    csp = [attrs["content"] for tag, attrs in page.tags if tag == "meta" and attrs.get("http-equiv") ==
           "Content-Security-Policy"]
    assert len(csp) == 1
    directives = dict(d.strip().split(" ", 1) for d in (csp[0] or "").split(";"))
    assert directives.pop("default-src") == "'none'"
    assert directives.pop("style-src") == "'unsafe-inline'"  # the page's own <style>, nothing else
    assert set(directives.values()) <= {"'none'"}, directives
    return page


def test_report_of_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = real_trace(RESNET).parent
    output = tmp_path / "one.html"
    status, out, err = run_cli(capsys, "report", "resnet50_num_workers_0", "--logdir", str(logdir), "--span", SPAN_1,
                               "-o", str(output))
    assert status == 0, err
    assert str(output) in out
    page = assert_self_contained(output)
    text = " ".join(page.text)
    expected = expectations(SPAN_1)["overview"]
    for theirs in CATEGORY_OF:
        assert f"{expected['average_us'][theirs]:,} µs" in text, theirs
    assert "55.5%" in text and expected["gpu_summary"]["Name"] in text
    assert "aten::cudnn_convolution_backward_weight" in text
    assert "dgrad_engine" in text  # the top kernel
    assert "no memory events" not in text and "reserved is not known" in text
    assert "Comparison" not in text
    # The step chart: one bar segment per step and non-zero category, each with a tooltip.
    model = load_trace(str(resnet_file(SPAN_1)))
    steps = overview(model)["steps"]
    segments = sum(1 for s in steps for value in s["breakdown"].values() if value > 0)
    assert sum(1 for tag, _ in page.tags if tag == "rect") == segments
    assert sum(1 for tag, _ in page.tags if tag == "svg") == 1
    rec_ids = [attrs["data-rule"] for tag, attrs in page.tags if tag == "li" and "data-rule" in attrs]
    assert rec_ids == ["dataloader_bound", "tensor_cores_unused"]


def test_report_compares_the_two_spans_of_the_resnet_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = real_trace(RESNET).parent
    output = tmp_path / "vs.html"
    status, _, err = run_cli(capsys, "report", "resnet50_num_workers_0", "--span", SPAN_1, "--vs",
                             "resnet50_num_workers_0", "--logdir", str(logdir), "-o", str(output))
    assert status == 0, err
    page = assert_self_contained(output)
    html = output.read_text(encoding="utf-8")
    base, exp = expectations(SPAN_1)["overview"]["average_us"], expectations(SPAN_2)["overview"]["average_us"]
    breakdown = html[html.index('data-testid="compare-breakdown"'):]
    breakdown = breakdown[:breakdown.index("</table>")]
    row = re.search(r"DataLoader</td>(.*?)</tr>", breakdown)
    assert row is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells[0] == f"{base['DataLoader']:,} µs" and cells[1] == f"{exp['DataLoader']:,} µs"
    assert "faster" in cells[2]  # less data loading in the second span
    assert cells[3] == report.format_ratio(exp["DataLoader"] / base["DataLoader"])
    sections = [attrs.get("id") for tag, attrs in page.tags if tag == "section"]
    assert sections == ["compare", "base", "exp"]
    assert sum(1 for tag, _ in page.tags if tag == "svg") == 3  # comparison + one step chart per side
    assert 'data-testid="compare-operators"' in html and 'data-testid="compare-kernels"' in html


def test_report_compares_dataloader_runs_of_a_logdir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = logdir_with(tmp_path, {"loader/w0": W0, "loader/w2": W2})
    output = tmp_path / "out" / "loader.html"
    output.parent.mkdir()
    status, _, err = run_cli(capsys, "report", "loader/w0", "--vs", "loader/w2", "--logdir", str(logdir),
                             "-o", str(output))
    assert status == 0, err
    page = assert_self_contained(output)
    text = " ".join(page.text)
    base = overview(load_trace(str(next(real_trace(W0).glob("*.pt.trace.json.gz")))))
    exp = overview(load_trace(str(next(real_trace(W2).glob("*.pt.trace.json.gz")))))
    assert f"{report.format_duration(base['mean_step_time'])} → {report.format_duration(exp['mean_step_time'])}" in text
    assert f"{base['breakdown']['dataloader']:,.0f} µs" in text and f"{exp['breakdown']['dataloader']:,.0f} µs" in text
    assert "Kernel" not in [cell.strip() for cell in page.text]  # CPU-only on both sides: no kernel category
    assert "No kernels on either side." in text
    assert "loader/w0 · worker0" in text and "loader/w2 · worker0" in text


# --- untrusted strings -------------------------------------------------------------------------


def hostile_trace() -> dict[str, Any]:
    doc = gpu_step_trace()
    for event in doc["traceEvents"]:
        if event.get("name") == "aten::conv2d":
            event["name"] = HOSTILE
        elif event.get("name") == "implicit_convolve_sgemm":
            event["name"] = "<script>alert(2)</script>"
        elif event.get("name") == "ProfilerStep#7":
            event["name"] = 'ProfilerStep#7"><img src=y onerror=alert(3)>'
    doc["deviceProperties"][0]["name"] = "<b onmouseover=alert(4)>GPU</b>"
    doc["traceEvents"].append(x("aten::add", 120, 5, args={"Input Dims": [[1]]}))
    return doc


def test_report_escapes_every_trace_string(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = tmp_path / "logdir"
    run = "<i>run</i>"  # folder names are untrusted too
    write(logdir / run / "worker0.1.pt.trace.json.gz", hostile_trace(), gz=True)
    write(logdir / "other" / "worker0.2.pt.trace.json.gz", gpu_step_trace(), gz=True)
    output = tmp_path / "hostile.html"
    status, _, err = run_cli(capsys, "report", run, "--vs", "other", "--logdir", str(logdir), "-o", str(output))
    assert status == 0, err
    page = assert_self_contained(output)
    assert not {tag for tag, _ in page.tags} & {"img", "script", "b", "i"}
    text = "".join(page.text)
    # The strings are shown as text, whole.
    for shown in (HOSTILE, "<script>alert(2)</script>", "<b onmouseover=alert(4)>GPU</b>", run):
        assert shown in text, shown
    titles = [attrs.get("title") for tag, attrs in page.tags if tag == "td" and attrs.get("title")]
    assert HOSTILE in titles  # the full name, in an attribute that stays one attribute


def test_summary_prints_trace_strings_as_they_are(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = write(tmp_path / "hostile.json", hostile_trace())
    status, out, err = run_cli(capsys, "summary", str(trace))
    assert status == 0, err
    assert HOSTILE in out and "GPU 0: <b onmouseover=alert(4)>GPU</b>" in out


# --- bad inputs ----------------------------------------------------------------------------------


def test_unknown_run_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = logdir_with(tmp_path, {"w0": W0})
    for command in (["summary", "--logdir", str(logdir), "--run", "missing"],
                    ["report", "missing", "--logdir", str(logdir), "-o", str(tmp_path / "r.html")],
                    ["report", "w0", "--vs", "missing", "--logdir", str(logdir), "-o", str(tmp_path / "r.html")]):
        status, out, err = run_cli(capsys, *command)
        assert status == 1, command
        assert err.startswith(f"profscope {command[0]}: error: no run 'missing' in logdir")
        assert "runs: 'w0'" in err and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


def test_a_run_whose_files_were_skipped_is_named_with_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run folder that exists but whose trace discovery skipped: the error names the files and the reasons,
    not an unknown run; other runs are present."""
    logdir = logdir_with(tmp_path, {"w0": W0})
    harness = logdir / "harness"
    harness.mkdir()
    long_header = b'{"metadata": {"log": "' + b"x" * ((16 << 20) + 1) + b'"}, "traceEvents": []}'
    (harness / "step.json.gz").write_bytes(gzip.compress(long_header, 1))
    (harness / "config.json").write_text('{"lr": 0.1}')
    for command in (["summary", "--logdir", str(logdir), "--run", "harness"],
                    ["report", "harness", "--logdir", str(logdir), "-o", str(tmp_path / "r.html")],
                    ["report", "w0", "--vs", "harness", "--logdir", str(logdir), "-o", str(tmp_path / "r.html")]):
        status, _, err = run_cli(capsys, *command)
        assert status == 1, command
        assert err.startswith(f"profscope {command[0]}: error: run 'harness' of logdir "), err
        assert "holds no trace Profscope reads; 2 files were skipped there:" in err
        assert "harness/step.json.gz: a JSON file with no trace key in its first 16 MB" in err
        assert "harness/config.json: a JSON file that is not a Chrome trace" in err
        assert "no run" not in err and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("extra, message", [
    (["--worker", "rank9"], "no worker 'rank9' in run 'w0' (workers: worker0)"),
    (["--span", "12"], "no span '12' of worker 'worker0' in run 'w0' (spans: "),
])
def test_unknown_worker_or_span(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
                                message: str) -> None:
    logdir = logdir_with(tmp_path, {"w0": W0})
    status, _, err = run_cli(capsys, "summary", "--logdir", str(logdir), "--run", "w0", *extra)
    assert status == 1
    assert message in err


def test_several_workers_need_worker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = logdir_with(tmp_path, {"ddp": "torch213/ddp_gloo_2ranks"})
    status, _, err = run_cli(capsys, "summary", "--logdir", str(logdir), "--run", "ddp")
    assert status == 1 and "several workers (rank0, rank1): name one with --worker" in err
    status, out, err = run_cli(capsys, "summary", "--logdir", str(logdir), "--run", "ddp", "--worker", "rank1")
    assert status == 0, err
    assert out.startswith("Profscope summary: ddp · rank1 · ")


def test_bad_files_and_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(capsys, "summary", str(tmp_path / "absent.json"))
    assert status == 1 and "absent.json" in err
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    status, _, err = run_cli(capsys, "summary", str(garbage))
    assert status == 1 and err.startswith("profscope summary: error: ") and "Traceback" not in err
    status, _, err = run_cli(capsys, "report", "x", "--logdir", str(tmp_path / "nowhere"))
    assert status == 1 and "is not a folder" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    status, _, err = run_cli(capsys, "report", "x", "--logdir", str(empty))
    assert status == 1 and "no trace files were found" in err
    logdir = logdir_with(tmp_path, {"w0": W0})
    status, _, err = run_cli(capsys, "report", "w0", "--logdir", str(logdir), "-o", str(tmp_path / "no" / "r.html"))
    assert status == 1 and "cannot write" in err


@pytest.mark.parametrize("argv", [
    ["summary"],
    ["summary", "trace.json", "--logdir", "runs", "--run", "a"],
    ["summary", "--logdir", "runs"],
    ["summary", "--run", "a"],
    ["summary", "trace.json", "--span", "1"],
    ["summary", "trace.json", "--top", "0"],
    ["summary", "trace.json", "--sort", "name"],
    ["report", "a"],  # --logdir is required
])
def test_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert "usage: profscope" in capsys.readouterr().err


# --- pieces ----------------------------------------------------------------------------------------


def test_sort_choices_match_the_renderer() -> None:
    assert cli._SORT_KEYS == report.OPERATOR_SORT_KEYS


@pytest.mark.parametrize("us, text", [
    (0.0, "0.0 µs"), (850.04, "850.0 µs"), (999.94, "999.9 µs"), (999.96, "1.00 ms"), (1500.0, "1.50 ms"),
    (999_996.0, "1.00 s"), (142461.0, "142.46 ms"),
    (2_500_000.0, "2.50 s"), (-850.0, "-850.0 µs"), (float("nan"), "—"), (None, "—"),
])
def test_format_duration(us: Optional[float], text: str) -> None:
    assert report.format_duration(us) == text


def test_formats() -> None:
    assert report.format_us(98588.67) == "98,589 µs"
    assert report.format_bytes(512) == "512 B" and report.format_bytes(5716904) == "5.45 MiB"
    assert report.format_signed_duration(1200.0) == "+1.20 ms" and report.format_signed_duration(-3.0) == "-3.0 µs"
    assert report.format_ratio(None) == "—" and report.format_ratio(0.5) == "0.50×"
    assert report_html.format_tick(0, 50_000, 200_000) == "0" and report_html.format_tick(150_000, 50_000, 200_000) == "150 ms"
    assert report_html.format_tick(2_500_000, 500_000, 3_000_000) == "2.5 s"
    assert report_html.format_tick(20, 10, 60) == "20 µs" and report_html.format_tick(1_500, 500, 2_000) == "1.5 ms"
    assert report_html.nice_step(177_592) == 50_000 and report_html.nice_step(9) == 2


def test_text_table_aligns_and_cuts() -> None:
    columns = (summary.Column("Name", "<", 8), summary.Column("Calls"))
    text = summary.text_table(columns, [["aten::convolution", "3"], ["mm\nx", "1,024"]])
    assert text.splitlines() == [
        "Name      Calls",
        "--------  -----",
        "aten::c…      3",
        "mm x      1,024",
    ]


def test_device_peaks_file_in_the_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--device-peaks``: a usable file gives the V100 trace the file's peaks (MFU from them); an unusable one is the
    command's error, in summary and in serve (before anything is served)."""
    trace = str(resnet_file(SPAN_1))
    status, out, _ = run_cli(capsys, "summary", trace)
    assert status == 0 and "Efficiency: MFU" in out
    builtin = [line for line in out.splitlines() if line.startswith("Efficiency:")][0]
    peaks = tmp_path / "peaks.json"
    # A tenth of any V100's throughput (measured "achievable" peaks): MFU grows tenfold.
    peaks.write_text(json.dumps({"devices": [{"match": "V100", "tflops": {"fp32": 1.57, "fp16": 12.5, "tf32": 1.57,
                                                                        "fp64": 0.78},
                                              "memory_bandwidth_gbps": 90, "source": "test"}]}))
    status, out, _ = run_cli(capsys, "summary", trace, "--device-peaks", str(peaks))
    assert status == 0
    given = [line for line in out.splitlines() if line.startswith("Efficiency:")][0]
    assert given != builtin
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for argv in (("summary", trace, "--device-peaks", str(bad)), ("serve", "--logdir", str(tmp_path), "--device-peaks", str(bad))):
        status, _, err = run_cli(capsys, *argv)
        assert status != 0 and "not JSON" in err


def test_report_device_table_has_gpu_columns_only_for_gpus() -> None:
    """A GPU's card has SMs, occupancy and Tensor Cores; an Ascend device's has none of them, so its table leaves
    the columns out (the text summary drops the same figures), and shows the collectives' own time."""
    gpu = report.collect_span(load_trace(str(resnet_file(SPAN_1))), "gpu")
    ascend = report.collect_span(load_trace(str(real_trace("mindspore/ascend_run_2_profiler/ascend_timeline_display_1.json"))),
                                 "ascend")
    gpu_table = report_html._devices_html(gpu.overview["devices"])
    ascend_table = report_html._devices_html(ascend.overview["devices"])
    for header in ("SMs", "Est. achieved occupancy", "Tensor Core share", "Compute capability"):
        assert f">{header}</th>" in gpu_table and f">{header}</th>" not in ascend_table
    assert ">Utilization</th>" in ascend_table and ">Kernel time</th>" in ascend_table
    assert [d.get("kind") for d in ascend.overview["devices"]] == ["Ascend"]
    assert ">Collectives</th>" not in ascend_table  # this old-format timeline's device runs no collective
