"""The critical path in the trace viewer, in a real browser, on the real ResNet-50 GPU trace.

A person opens the Trace tab, presses "Critical path": the step in view is chosen, the view zooms to it, the
path's slices keep their colours while the rest are dimmed, and the side panel gives the step's breakdown by kind
(the route's numbers). The next step's path follows with "›"; a slice of the "longest" list opens its details.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

from .harness import NESTED_RUN, TensorBoardServer
from .test_trace_view import SPAN, WORKER, _css, _enter_plugin_frame, _view_window, _wait, open_trace

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _route(server: TensorBoardServer, step: int) -> dict:
    query = urllib.parse.urlencode({"run": NESTED_RUN, "worker": WORKER, "span": SPAN, "step": step})
    with urllib.request.urlopen(f"{server.url}/data/plugin/profscope/critical_path?{query}", timeout=60) as answer:
        return json.load(answer)


def _panel_ready(driver: "WebDriver", step: int) -> bool:
    panel = driver.find_element(*_css("trace-critical-path"))
    return panel.get_attribute("data-state") == "ready" and panel.get_attribute("data-step") == str(step)


def test_critical_path_of_the_step_in_view(
    tensorboard_server: TensorBoardServer,
    browser: "WebDriver",
    screenshot: Callable[[str], Path],
) -> None:
    driver = browser
    whole_start, whole_end = open_trace(driver, tensorboard_server)

    toggle = driver.find_element(*_css("trace-critical-path-toggle"))
    toggle.click()
    _wait(driver).until(lambda d: d.find_element(*_css("trace-critical-path")).get_attribute("data-state") == "ready")
    step = int(driver.find_element(*_css("trace-viewer")).get_attribute("data-critical-path") or "-1")
    answer = _route(tensorboard_server, step)
    assert 0 <= step < len(answer["steps"])
    assert toggle.get_attribute("aria-pressed") == "true"
    panel = driver.find_element(*_css("trace-critical-path"))
    assert answer["step"]["name"] in driver.find_element(*_css("trace-critical-path-title")).text
    # The panel shows the route's breakdown: every kind with time, in the route's order.
    rows = panel.find_elements("css selector", "[data-testid='trace-critical-path-breakdown'] tr")
    shown = [row.get_attribute("data-kind") for row in rows]
    assert shown == [row["kind"] for row in answer["breakdown"] if row["time"] > 0]
    assert "kernel" in shown and "cpu_op" in shown
    # The longest list names slices of the step's work, not the step's own range.
    longest = [row.get_attribute("data-id")
               for row in panel.find_elements("css selector", "[data-testid='trace-critical-path-longest'] tr")]
    assert longest and answer["step"]["id"] is not None and str(answer["step"]["id"]) not in longest
    # The view zoomed to the step (a ResNet step is a small part of the span).
    start, end = _view_window(driver)
    assert end - start < 0.5 * (whole_end - whole_start)
    _wait(driver).until(lambda d: d.find_element(*_css("trace-viewer")).get_attribute("data-ready") == "true")
    screenshot("critical-path")
    _enter_plugin_frame(driver)

    # The next step's path.
    if step + 1 < len(answer["steps"]):
        driver.find_element(*_css("trace-critical-path-next")).click()
        _wait(driver).until(lambda d: _panel_ready(d, step + 1))
        assert driver.find_element(*_css("trace-viewer")).get_attribute("data-critical-path") == str(step + 1)

    # A slice of the longest list opens its details (they take the panel's place).
    first = driver.find_element("css selector", "[data-testid='trace-critical-path-longest'] tr")
    slice_id = first.get_attribute("data-id")
    first.find_element("css selector", "button").click()
    _wait(driver).until(lambda d: d.find_element(*_css("trace-viewer")).get_attribute("data-selected") == slice_id)
    _wait(driver).until(lambda d: d.find_element(*_css("trace-details")).get_attribute("data-state") == "ready")
    assert not driver.find_element(*_css("trace-critical-path")).is_displayed()
    screenshot("critical-path-slice")
    _enter_plugin_frame(driver)

    # Pressing the button again hides the path.
    driver.find_element(*_css("trace-critical-path-toggle")).click()
    _wait(driver).until(lambda d: d.find_element(*_css("trace-viewer")).get_attribute("data-critical-path") is None)
    assert driver.find_element(*_css("trace-critical-path-toggle")).get_attribute("aria-pressed") == "false"
