"""The Roofline page and the efficiency figures, read as a person reads them: a real H100 trace (AMD TraceLens's
BERT inference, tests/data/tracelens), a real TensorBoard, headless Chromium. The expected values come from the
backend's own routes: the test checks that the page draws and shows what the backend computed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest

from .conftest import REAL_TRACES, running_tensorboard
from .harness import TensorBoardServer
from .test_views_e2e import _css, _find, _open_view, _ready_runs, _route, _text, _wait

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN = "bert"
TRACE = "tracelens/h100/gaunernst_bert-small-uncased/gaunernst_bert-small-uncased__1016001.json.gz"


@pytest.fixture(scope="module")
def roofline_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    logdir = tmp_path_factory.mktemp("roofline-logdir")
    (logdir / RUN).mkdir()
    # Named as torch's handler names its files (TraceLens's pipeline puts 26 KB of metadata before the events).
    shutil.copyfile(REAL_TRACES / TRACE, logdir / RUN / "worker0.1752830085464.pt.trace.json.gz")
    with running_tensorboard(logdir, tmp_path_factory.mktemp("roofline-tensorboard")) as server:
        yield server


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"  # lib/format.ts formatPercent


def test_roofline_page_draws_the_points_under_the_roofs_and_opens_a_gap_in_the_trace(
    browser: "WebDriver", roofline_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    from selenium.webdriver.common.by import By

    runs = _ready_runs(roofline_server, (RUN,))
    worker = runs[RUN]["workers"][0]
    answer = _route(roofline_server, "roofline", run=RUN, worker=worker["name"], span=worker["spans"][0])
    drawable = [p for p in answer["points"] if (p["intensity"] or 0) > 0 and (p["tflops_per_s"] or 0) > 0]
    assert drawable and answer["gaps"]

    _open_view(browser, roofline_server, RUN, "roofline")
    chart = _find(browser, "roofline-chart")
    assert chart.get_attribute("data-points") == str(len(drawable))
    assert int(chart.get_attribute("data-roofs") or 0) >= 2  # BF16 for the products, FP32 for vector work
    _wait(browser).until(lambda _d: chart.find_elements(By.CSS_SELECTOR, "canvas"))
    legend = _text(browser, "roofline-legend")
    assert "BF16" in legend and "990 TFLOP/s" in legend and "ridge at 295 FLOP/byte" in legend
    assert "NVIDIA H100 SXM" in _text(browser, "roofline-device", " h3")
    # The gaps table: the backend's first gap first.
    first_cell = _text(browser, "roofline-gaps", " tbody tr:first-child td:first-child")
    assert first_cell == answer["gaps"][0]["name"]
    screenshot("roofline-bert-h100")

    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support import expected_conditions as ec

    from .test_views_e2e import PLUGIN_FRAME

    # The copies' bandwidth over time: the span's one device-to-host copy, against the host link's peak.
    browser.switch_to.default_content()
    _wait(browser).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))
    (copy,) = answer["copies"]["directions"]
    assert copy["direction"] == "d2h" and copy["peak"]
    copies_chart = _find(browser, "roofline-copies-chart")
    _wait(browser).until(lambda _d: copies_chart.find_elements(By.CSS_SELECTOR, "canvas"))
    assert "Device to host" in _text(browser, "roofline-copies-legend")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", copies_chart)
    screenshot("roofline-copies-over-time")

    # Hovering the largest point shows its figures.
    browser.switch_to.default_content()
    _wait(browser).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))
    browser.execute_script("window.scrollTo(0, 0)")
    over = _wait(browser).until(lambda d: next(iter(d.find_elements(By.CSS_SELECTOR, "[data-testid='roofline-chart'] .u-over")), None))
    position = browser.execute_script(
        """
        const over = arguments[0];
        const chart = over.closest('[data-testid="roofline-chart"]');
        return [over.clientWidth, over.clientHeight];
        """,
        over,
    )
    assert position[0] > 100 and position[1] > 100
    # Sweep the plot until the tooltip shows (the points' places are the backend's numbers on log axes).
    found = False
    for fx in range(5, 100, 5):
        for fy in range(5, 100, 5):
            ActionChains(browser).move_to_element_with_offset(
                over, int(position[0] * (fx / 100 - 0.5)), int(position[1] * (fy / 100 - 0.5))).perform()
            tooltip = browser.find_element(*_css("roofline-tooltip"))
            if tooltip.is_displayed():
                found = True
                break
        if found:
            break
    assert found, "no point answered the pointer"
    text = tooltip.text
    assert any(p["name"] in text for p in drawable) and "FLOP/byte" in text and " call" in text
    screenshot("roofline-bert-h100-hover")

    # A gap's "Trace" button opens the trace viewer on its first call.
    browser.switch_to.default_content()
    _wait(browser).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))
    _find(browser, "roofline-gaps", " tbody tr:first-child button").click()
    _wait(browser).until(lambda d: d.find_element(*_css("tab-trace")).get_attribute("aria-selected") == "true")


def test_overview_and_operator_table_show_the_backends_efficiency(
    browser: "WebDriver", roofline_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    runs = _ready_runs(roofline_server, (RUN,))
    worker = runs[RUN]["workers"][0]
    overview = _route(roofline_server, "overview", run=RUN, worker=worker["name"], span=worker["spans"][0])
    mfu = overview["efficiency"]["mfu"]["mean"]
    assert mfu is not None

    _open_view(browser, roofline_server, RUN, "overview")
    assert _text(browser, "mfu") == _percent(mfu)
    low = overview["efficiency"]["low_roofline"]
    assert _text(browser, "low-roofline-share").startswith(_percent(low["share"]))
    assert "GEMM" in _text(browser, "category-time")
    browser.execute_script("arguments[0].scrollIntoView()", _find(browser, "efficiency-section"))
    screenshot("overview-efficiency-bert-h100")
