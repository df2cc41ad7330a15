"""Ranks side by side in headless Chromium inside TensorBoard: the Distributed view's rank × step heat map
of a 64-rank job (it renders, hovering a cell lists its figures, a click opens that rank's step in the
trace viewer), then the same step of every rank stacked in the trace viewer, aligned by step start and
by time; screenshots of both.

A real NCCL job (HTA's two sampled ranks of a 128-rank job) stacks its GPU streams, NCCL kernels in orange.
The 64-rank job is hand-made (``handmade.rank_job_trace``): 64 CPU-only Gloo ranks of 6 steps; rank 37 is the
straggler of step 3 (900 µs instead of about 520, its all_reduce starting 750 µs into the step).
"""

from __future__ import annotations

import os
import time
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest

import real_traces
from handmade import rank_job_trace, write

from .conftest import _save_screenshot, chromium_driver, running_tensorboard
from .harness import TensorBoardServer

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROUTES = "/data/plugin/profscope"
PLUGIN_FRAME = "iframe[src*='plugin_entry.html?name=profscope']"
TIMEOUT_S = 90.0
RANKS, STEPS = 64, 6
STRAGGLER, SLOW_STEP = 37, 3
BASE_NS = 1_700_000_000_000_000_000


def _steps(rank: int) -> list[tuple[int, float, float, float]]:
    steps = []
    for number in range(STEPS):
        if rank == STRAGGLER and number == SLOW_STEP:
            steps.append((number, 900.0, 750.0, 100.0))
        else:
            steps.append((number, 500.0 + (rank * 7 + number * 11) % 40, 300.0 + (rank * 13) % 50, 150.0))
    return steps


@pytest.fixture(scope="module")
def ranks_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    logdir = tmp_path_factory.mktemp("ranks-logdir")
    for rank in range(RANKS):
        # Each rank's clock 1 µs after the previous one's: aligned by time, the ranks start the step apart.
        path = write(logdir / "job64" / f"rank{rank}.{1700000000000 + rank}.pt.trace.json",
                     rank_job_trace(rank, RANKS, _steps(rank), BASE_NS + rank * 1000))
        os.utime(path, (1, 1))  # settled: not a file still being written
    for source in sorted((real_traces.root() / "hta" / "sampled_ws128_trace_filter").glob("*.json.gz")):
        (logdir / "nccl").mkdir(exist_ok=True)
        (logdir / "nccl" / source.name).write_bytes(source.read_bytes())
        os.utime(logdir / "nccl" / source.name, (1, 1))
    with running_tensorboard(logdir, tmp_path_factory.mktemp("ranks-tensorboard")) as server:
        deadline = time.monotonic() + 240
        while True:
            listing = server.get_json(f"{ROUTES}/runs")
            assert isinstance(listing, dict)
            runs = {r["name"]: r for r in listing["runs"]}
            if all(runs.get(run, {}).get("status") == "ready" for run in ("job64", "nccl")):
                break
            assert time.monotonic() < deadline, runs
            time.sleep(0.5)
        yield server


@pytest.fixture
def browser(tmp_path: Path) -> Iterator["WebDriver"]:
    driver = chromium_driver(tmp_path / "chromium-profile", tmp_path / "chromedriver.log")
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: "WebDriver", timeout_s: float = TIMEOUT_S):  # -> WebDriverWait
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout_s, poll_frequency=0.2)


def _css(testid: str) -> tuple[str, str]:
    from selenium.webdriver.common.by import By

    return (By.CSS_SELECTOR, f"[data-testid='{testid}']")


def _into_frame(driver: "WebDriver") -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    driver.switch_to.default_content()
    _wait(driver).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))


def _open(driver: "WebDriver", server: TensorBoardServer, view: str, **state: str) -> None:
    pieces = [f"p.profscope.view={view}"] + [f"p.profscope.{k}={urllib.parse.quote(v, safe='')}" for k, v in state.items()]
    driver.get(f"{server.url}/#profscope&{'&'.join(pieces)}")
    _into_frame(driver)


def _mouse(driver: "WebDriver", testid: str, kind: str, fx: float, fy: float, dy_px: float = 0) -> Any:
    """A mouse event at a fraction of the element's box, plus dy_px pixels (the canvas reads clientX/clientY)."""
    return driver.execute_script(
        """
        const [testid, kind, fx, fy, dy] = arguments;
        const target = document.querySelector(`[data-testid='${testid}']`);
        const box = target.getBoundingClientRect();
        const clientX = box.left + fx * box.width, clientY = box.top + fy * box.height + dy;
        for (const type of kind === 'click' ? ['mousedown', 'mouseup', 'click'] : [kind]) {
          target.dispatchEvent(new MouseEvent(type, {clientX, clientY, bubbles: true}));
        }
        return [box.width, box.height];
        """, testid, kind, fx, fy, dy_px)


def test_heatmap_hover_and_click_open_the_ranks_step(browser: "WebDriver", ranks_server: TensorBoardServer,
                                                     tmp_path: Path) -> None:
    browser.set_window_size(1400, 1100)
    _open(browser, ranks_server, "distributed", run="job64")
    heatmap = _wait(browser).until(lambda d: d.find_element(*_css("distributed-heatmap")))
    assert heatmap.get_attribute("data-ranks") == str(RANKS)
    assert heatmap.get_attribute("data-steps") == str(STEPS)
    _wait(browser).until(lambda d: d.find_element(*_css("heatmap-canvas")).size["height"] > 100)
    # As wide as the page leaves beside the rank labels (it was 72 px a step at most), 8 px a rank (560 px / 64).
    canvas = browser.find_element(*_css("heatmap-canvas"))
    assert canvas.size["width"] >= heatmap.size["width"] - 140, (canvas.size, heatmap.size)
    assert canvas.size["height"] == RANKS * 8 + 2, canvas.size  # and its 1 px border
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", heatmap)
    # The straggler's cell: row 37 of 64, column 3 of 6 (centre of the cell).
    fx, fy = (SLOW_STEP + 0.5) / STEPS, (STRAGGLER + 0.5) / RANKS
    _mouse(browser, "heatmap-canvas", "mousemove", fx, fy)
    tip = _wait(browser).until(lambda d: d.find_element(*_css("heatmap-tooltip")) if d.find_element(
        *_css("heatmap-tooltip")).is_displayed() else None)
    text = tip.text
    assert f"rank {STRAGGLER} (worker rank{STRAGGLER}) · ProfilerStep#{SLOW_STEP}" in text
    assert "Step time 900 µs" in text and "The slowest rank of this step" in text
    assert "Communication 100 µs" in text
    _save_screenshot(browser, tmp_path / "screenshots", "ranks", "heatmap-64-hover")
    _into_frame(browser)
    # The figure switch redraws from the same matrix.
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(*_css("heatmap-metric"))).select_by_value("communication")
    _mouse(browser, "heatmap-canvas", "mousemove", fx, fy)
    _wait(browser).until(lambda d: "Communication 100 µs" in d.find_element(*_css("heatmap-tooltip")).text)
    _save_screenshot(browser, tmp_path / "screenshots", "ranks", "heatmap-64-communication")
    _into_frame(browser)
    # A click opens that rank's span in the trace viewer, at the step's window.
    _mouse(browser, "heatmap-canvas", "click", fx, fy)
    browser.switch_to.default_content()
    _wait(browser).until(lambda d: "p.profscope.view=trace" in d.current_url
                         and f"p.profscope.worker=rank{STRAGGLER}" in d.current_url)
    assert "p.profscope.trace.start=3000" in browser.current_url
    assert "p.profscope.trace.end=3900" in browser.current_url
    _into_frame(browser)
    _wait(browser).until(lambda d: d.find_element(*_css("trace-canvas")))
    _save_screenshot(browser, tmp_path / "screenshots", "ranks", "heatmap-click-opens-trace")


def test_trace_viewer_stacks_the_ranks(browser: "WebDriver", ranks_server: TensorBoardServer, tmp_path: Path) -> None:
    browser.set_window_size(1400, 1100)
    _open(browser, ranks_server, "trace", run="job64", worker="rank0")
    switch = _wait(browser).until(lambda d: d.find_element(*_css("trace-ranks-open")))
    # A button of the viewer's toolbar, beside "Critical path", styled as the others (not a bare button on a row of its own).
    from selenium.webdriver.common.by import By

    toolbar = browser.find_element(By.CSS_SELECTOR, ".ps-trace-toolbar")
    assert switch in toolbar.find_elements(By.CSS_SELECTOR, "button")
    path = browser.find_element(*_css("trace-critical-path-toggle"))
    assert switch.get_attribute("class") == path.get_attribute("class") == "ps-trace-button"
    style = "return [getComputedStyle(arguments[0]).borderRadius, getComputedStyle(arguments[0]).backgroundColor, arguments[0].getBoundingClientRect().top]"
    switch_style, path_style = browser.execute_script(style, switch), browser.execute_script(style, path)
    assert switch_style == path_style, (switch_style, path_style)  # same look, on the same row
    switch.click()
    stack = _wait(browser).until(lambda d: d.find_element(*_css("rank-stack")))
    _wait(browser).until(lambda d: d.find_element(*_css("rank-stack")).get_attribute("data-ready") == "true")
    assert stack.get_attribute("data-workers") == str(RANKS)
    assert stack.get_attribute("data-compact") == "true"  # 64 ranks: one row each, to fit a screen
    assert stack.get_attribute("data-align") == "step"
    assert stack.get_attribute("data-step") == "ProfilerStep#0"
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(*_css("rank-stack-step"))).select_by_value(f"ProfilerStep#{SLOW_STEP}")
    _wait(browser).until(lambda d: d.find_element(*_css("rank-stack")).get_attribute("data-step")
                         == f"ProfilerStep#{SLOW_STEP}"
                         and d.find_element(*_css("rank-stack")).get_attribute("data-ready") == "true")
    _save_screenshot(browser, tmp_path / "screenshots", "ranks", "stack-by-step")
    _into_frame(browser)
    browser.find_element(*_css("rank-stack-compact")).click()
    assert browser.find_element(*_css("rank-stack")).get_attribute("data-compact") == "false"
    _save_screenshot(browser, tmp_path / "screenshots", "ranks", "stack-by-step-tracks")
    _into_frame(browser)
    browser.find_element(*_css("rank-stack-align-time")).click()
    _wait(browser).until(lambda d: d.find_element(*_css("rank-stack")).get_attribute("data-align") == "time"
                         and d.find_element(*_css("rank-stack")).get_attribute("data-ready") == "true")
    browser.switch_to.default_content()
    assert "p.profscope.trace.ranks=time" in browser.current_url
    _save_screenshot(browser, tmp_path / "screenshots", "ranks", "stack-by-time")
    _into_frame(browser)
    # Hovering a rank's rows names it; a click opens its span in the single-span viewer.
    _mouse(browser, "rank-stack-canvas", "mousemove", 0.05, 0, 30)
    tip = _wait(browser).until(lambda d: d.find_element(*_css("rank-stack-tooltip")) if d.find_element(
        *_css("rank-stack-tooltip")).is_displayed() else None)
    assert "rank " in tip.text
    _mouse(browser, "rank-stack-canvas", "click", 0.5, 0, 8)  # the time axis: no rank there
    browser.switch_to.default_content()
    assert "p.profscope.trace.ranks=time" in browser.current_url
    _into_frame(browser)
    _mouse(browser, "rank-stack-canvas", "click", 0.5, 0, 30)  # rank 0's header
    browser.switch_to.default_content()
    _wait(browser).until(lambda d: "p.profscope.trace.ranks" not in d.current_url
                         and "p.profscope.worker=rank0" in d.current_url)


def test_real_nccl_ranks_stack_their_gpu_streams(browser: "WebDriver", ranks_server: TensorBoardServer,
                                                 tmp_path: Path) -> None:
    browser.set_window_size(1400, 1100)
    _open(browser, ranks_server, "trace", run="nccl", **{"trace.ranks": "time"})
    _wait(browser).until(lambda d: d.find_element(*_css("rank-stack")).get_attribute("data-ready") == "true")
    stack = browser.find_element(*_css("rank-stack"))
    assert stack.get_attribute("data-workers") == "2" and stack.get_attribute("data-align") == "time"
    assert stack.get_attribute("data-compact") == "false"  # two ranks: every stream of each
    _save_screenshot(browser, tmp_path / "screenshots", "ranks", "stack-nccl-by-time")
