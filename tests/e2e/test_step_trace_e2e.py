"""The Step trace tab in a real TensorBoard and headless Chromium.

MLP training trace: the figure read is one the trace itself states, ProfilerStep#2's DataLoader
range lasts 1,033.07 µs, shown in the table's "Data loading" column as 1,033; applying an FP
point reloads the answer with the point named in the URL and in the markers list.
MindSpore Ascend run: the step comes from the profiler's step trace file, whose forward +
backward is 2,366,808 counts of 10 ns = 23,668 µs.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest

from .conftest import REAL_TRACES, running_tensorboard
from .harness import TensorBoardServer
from .test_views_e2e import _find, _open_view, _ready_runs, _route, _settled, _text, _top_row_cells, _wait

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN = "mlp"
TRACE = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"
ASCEND_FOLDER = "mindspore/ascend_run_2_profiler"
ASCEND_RUN = "ascend/profiler"


@pytest.fixture(scope="module")
def step_trace_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    source = REAL_TRACES / TRACE
    assert source.is_file(), f"tests/data/{TRACE} is missing"
    logdir = tmp_path_factory.mktemp("steptrace-logdir")
    (logdir / RUN).mkdir()
    shutil.copyfile(source, logdir / RUN / source.name)
    shutil.copytree(REAL_TRACES / ASCEND_FOLDER, logdir / ASCEND_RUN)
    with running_tensorboard(logdir, tmp_path_factory.mktemp("steptrace-tensorboard")) as server:
        yield server


def test_step_trace_tab_shows_phases_and_applies_an_fp_point(
    browser: "WebDriver", step_trace_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    from selenium.webdriver.common.by import By

    runs = _ready_runs(step_trace_server, (RUN,))
    worker = runs[RUN]["workers"][0]
    _open_view(browser, step_trace_server, RUN, "steps")
    assert browser.find_element(By.CSS_SELECTOR, "[data-testid='tab-steps']").text == "Step trace"

    first = _top_row_cells(browser, "step-trace-table")
    assert first["step"] == "ProfilerStep#2", first
    assert first["dataloader"] == "1,033", first
    # The page shows what the backend computed: the step's iteration gap, formatted like the table's µs.
    answer = _route(step_trace_server, "steptrace", run=RUN, worker=worker["name"], span=worker["spans"][0])
    assert first["gap"] == f"{round(answer['steps'][0]['phases']['gap']):,}", (first, answer["steps"][0])
    # The chart's legend reads in the table's µs (not ms beside µs).
    assert _text(browser, "step-trace-hover") == f"Mean per step: {round(answer['average']['dur']):,} µs"
    assert "first operator after the DataLoader" in _text(browser, "step-trace-markers")
    # The chart is drawn: one column per step.
    chart = _find(browser, "step-trace-chart")
    assert chart.get_attribute("data-columns") == "3"
    _wait(browser).until(lambda _d: chart.find_elements(By.CSS_SELECTOR, "canvas"))
    screenshot("step-trace-mlp")
    browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, "iframe[src*='plugin_entry.html?name=profscope']"))
    browser.execute_script("arguments[0].scrollIntoView()", _find(browser, "step-trace-legend"))
    screenshot("step-trace-mlp-table")

    # Name the FP point: the answer reloads with it, and the URL keeps it.
    browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, "iframe[src*='plugin_entry.html?name=profscope']"))
    field = _find(browser, "fp-point-input")
    field.clear()
    field.send_keys("aten::linear")
    _find(browser, "step-points-apply").click()
    _settled(browser, lambda d: "fp_point aten::linear" in d.find_element(
        By.CSS_SELECTOR, "[data-testid='step-trace-markers']").text or None)
    assert "steps.fp_point=aten::linear" in str(browser.execute_script("return location.hash"))
    screenshot("step-trace-mlp-fp-point")


def test_step_trace_tab_reads_mindspore_step_trace_file(
    browser: "WebDriver", step_trace_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    listing = step_trace_server.get_json("/data/plugin/profscope/runs")
    assert isinstance(listing, dict)
    assert ASCEND_RUN in [run["name"] for run in listing["runs"]], listing
    _open_view(browser, step_trace_server, ASCEND_RUN, "steps")
    first = _top_row_cells(browser, "step-trace-table")
    assert first["step"] == "Step 1", first
    assert first["dur"] == "23,709" and first["fp_and_bp"] == "23,668", first
    assert "step_trace_raw_1_detail_time.csv" in _text(browser, "step-trace-markers")
    screenshot("step-trace-ascend")
