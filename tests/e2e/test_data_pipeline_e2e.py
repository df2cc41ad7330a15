"""The Data pipeline tab, read as a person reads it: real traces, a real TensorBoard, headless Chromium.

A person opens the tab to learn whether the job waits for data. The verdict and the share shown must be
what the backend's route computed, formatted for people: num_workers=0 is data-bound, 2 workers are not;
for a MindSpore profiler folder the MindData pipeline is drawn with its bottleneck operator marked.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest

from .conftest import REAL_TRACES, running_tensorboard
from .harness import TensorBoardServer
from .test_views_e2e import _css, _find, _open_view, _ready_runs, _route, _settled, _text

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# run folder → (folder under tests/data, file-name glob)
RUNS: dict[str, tuple[str, str]] = {
    "w0": ("torch213/dataloader_bound_w0", "*.pt.trace.json.gz"),
    "w2": ("torch213/dataloader_bound_w2", "*.pt.trace.json.gz"),
    "ascend": ("mindspore/ascend_run_2_profiler", "*"),
}


@pytest.fixture(scope="module")
def data_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    logdir = tmp_path_factory.mktemp("data-pipeline-logdir")
    for run, (folder, pattern) in RUNS.items():
        sources = sorted(p for p in (REAL_TRACES / folder).glob(pattern) if p.is_file())
        assert sources, f"no {pattern} in tests/data/{folder}"
        (logdir / run).mkdir()
        for source in sources:
            shutil.copyfile(source, logdir / run / source.name)
    with running_tensorboard(logdir, tmp_path_factory.mktemp("data-pipeline-tensorboard")) as server:
        yield server


def _expected(server: TensorBoardServer, run: str) -> dict:
    worker = _ready_runs(server, (run,))[run]["workers"][0]
    return _route(server, "datapipeline", run=run, worker=worker["name"], span=worker["spans"][0])


def _percent(fraction: float) -> str:
    """A share as the frontend writes it (lib/format.ts formatPercent): one decimal."""
    return f"{fraction * 100:.1f}%"


@pytest.mark.parametrize("run, status, headline", [("w0", "data_bound", "Data-bound"),
                                                   ("w2", "some_wait", "Partly waiting for data")])
def test_the_verdict_says_whether_the_job_waits_for_data(
    browser: "WebDriver", data_server: TensorBoardServer, screenshot: Callable[[str], Path],
    run: str, status: str, headline: str,
) -> None:
    expected = _expected(data_server, run)
    assert expected["verdict"]["status"] == status
    _open_view(browser, data_server, run, "data")
    verdict = _find(browser, "datapipeline-verdict")
    assert verdict.get_attribute("data-status") == status
    assert _text(browser, "datapipeline-verdict-headline") == headline
    assert _text(browser, "datapipeline-verdict-text") == expected["verdict"]["text"]
    assert _text(browser, "datapipeline-share") == _percent(expected["summary"]["data_share"])
    # The per-step chart is drawn: one column per step.
    chart = _find(browser, "datapipeline-chart")
    assert chart.get_attribute("data-columns") == str(len(expected["steps"]))
    # The legend gives every layer its mean per step, the wait included (it read "— (—)").
    from selenium.webdriver.common.by import By

    values = [v.text for v in browser.find_elements(By.CSS_SELECTOR, "[data-testid='datapipeline-chart'] ~ .ps-legend .ps-legend-value")]
    summary = expected["summary"]
    assert values and values[0].endswith(f"({_percent(summary['mean_data_wait'] / summary['mean_step_time'])})"), values
    if status == "data_bound":
        recommendation = _find(browser, "datapipeline-recommendation", "[data-id='dataloader_in_main_process']")
        assert "num_workers" in recommendation.text
    screenshot(f"data-pipeline-{run}")


def test_the_mindspore_pipeline_marks_its_bottleneck_operator(
    browser: "WebDriver", data_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    expected = _expected(data_server, "ascend")
    bottleneck = expected["minddata"]["bottleneck"]
    _open_view(browser, data_server, "ascend", "data")
    assert _text(browser, "datapipeline-verdict-headline") == "Cannot tell"
    assert _text(browser, "minddata-bottleneck").startswith(f"Bottleneck: {bottleneck['op_type']} (operator {bottleneck['op_id']})")
    from selenium.webdriver.common.by import By

    cards = _settled(browser, lambda d: d.find_elements(*_css("minddata-operator")) or None)
    # Data-flow order: the source first, the operator feeding the device last.
    assert [card.get_attribute("data-op-id") for card in cards] == [str(i) for i in expected["minddata"]["chain"]]
    marked = [card.get_attribute("data-op-id") for card in cards if card.get_attribute("data-bottleneck") == "true"]
    assert marked == [str(bottleneck["op_id"])]
    assert cards[0].find_element(By.CSS_SELECTOR, "h3").text == bottleneck["op_type"]
    _find(browser, "minddata-device-queue")
    notes = _text(browser, "datapipeline-notes")
    assert "No data-loading ranges" in notes
    browser.execute_script("arguments[0].scrollIntoView()", _find(browser, "minddata-section"))
    screenshot("data-pipeline-ascend")
