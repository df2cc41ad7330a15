"""The trace viewer in a real browser, on the real ResNet-50 GPU trace.

A person opens the Trace tab of ``group/resnet``, zooms in with the keyboard, finds a
convolution kernel with the search box, and reads in the side panel which operator
launched it; the "jump to" button then selects that operator. The window and the
selection land in TensorBoard's address bar, so the link can be shared.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

from .harness import NESTED_RUN, TensorBoardServer

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PAGE_TIMEOUT_S = 60.0
# The run is parsed in the background on first use; a busy 2-core machine needs a while.
RUN_LOAD_TIMEOUT_S = 180.0
POLL_S = 0.25
PLUGIN_FRAME = "iframe[src*='plugin_entry.html?name=profscope']"
WORKER = "worker0"
SPAN = "1623143089861"  # the first span of tests/data/kineto_resnet50/resnet50_num_workers_0
KERNEL_QUERY = "implicit_convolve_sgemm"


def _wait(driver: "WebDriver", timeout_s: float = PAGE_TIMEOUT_S):  # -> WebDriverWait
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout_s, poll_frequency=POLL_S)


def _css(testid: str) -> tuple[str, str]:
    from selenium.webdriver.common.by import By

    return (By.CSS_SELECTOR, f"[data-testid='{testid}']")


def _trace_url(server: TensorBoardServer) -> str:
    pieces = {"view": "trace", "run": NESTED_RUN, "worker": WORKER, "span": SPAN}
    keys = "&".join(f"p.profscope.{key}={urllib.parse.quote(value, safe='/')}" for key, value in pieces.items())
    return f"{server.url}/#profscope&{keys}"


def _enter_plugin_frame(driver: "WebDriver") -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    driver.switch_to.default_content()
    _wait(driver).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))


def _view_window(driver: "WebDriver") -> tuple[float, float]:
    """The visible window (µs offsets from the span start) the viewer reports."""
    text = driver.find_element(*_css("trace-viewer")).get_attribute("data-view") or ""
    start, end = (float(part) for part in text.split(","))
    return start, end


def _host_hash_params(driver: "WebDriver") -> dict[str, str]:
    """Profscope's keys in TensorBoard's own hash (the shareable address)."""
    driver.switch_to.default_content()
    fragment = driver.execute_script("return window.location.hash") or ""
    _enter_plugin_frame(driver)
    pairs = [piece.split("=", 1) for piece in fragment.lstrip("#").split("&") if "=" in piece]
    return {urllib.parse.unquote(key): urllib.parse.unquote(value) for key, value in pairs}


def open_trace(driver: "WebDriver", server: TensorBoardServer) -> tuple[float, float]:
    """Opens the Trace tab of the ResNet span and waits for its timeline (the run is parsed and its first tile has
    arrived); the window it shows."""
    driver.get(_trace_url(server))
    _enter_plugin_frame(driver)
    _wait(driver).until(lambda d: d.find_element(*_css("tab-trace")).get_attribute("aria-selected") == "true")
    _wait(driver, RUN_LOAD_TIMEOUT_S).until(
        lambda d: d.find_elements(*_css("trace-viewer"))
        and d.find_element(*_css("trace-viewer")).get_attribute("data-ready") == "true"
    )
    return _view_window(driver)


def test_search_a_kernel_and_see_its_launching_operator(
    tensorboard_server: TensorBoardServer,
    browser: "WebDriver",
    screenshot: Callable[[str], Path],
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    driver = browser
    whole_start, whole_end = open_trace(driver, tensorboard_server)
    assert whole_start == 0.0 and whole_end > 1e6, "a ResNet span is over a second long"
    screenshot("whole-span")
    _enter_plugin_frame(driver)

    # Zoom in: hold W over the timeline.
    canvas = driver.find_element(*_css("trace-canvas"))
    ActionChains(driver).move_to_element(canvas).click().key_down("w").pause(0.6).key_up("w").perform()
    _wait(driver).until(lambda d: _view_window(d)[1] - _view_window(d)[0] < 0.8 * (whole_end - whole_start))
    _wait(driver).until(lambda d: d.find_element(*_css("trace-viewer")).get_attribute("data-ready") == "true")

    # Find a convolution kernel with the search box: the first match is selected and shown.
    search = driver.find_element(*_css("trace-search-input"))
    search.send_keys(KERNEL_QUERY, Keys.ENTER)
    _wait(driver).until(lambda d: re.fullmatch(r"1 / \d+", d.find_element(*_css("trace-search-count")).text))
    details = _wait(driver).until(
        lambda d: d.find_element(*_css("trace-details"))
        if d.find_element(*_css("trace-details")).get_attribute("data-state") == "ready"
        else None
    )
    kernel_name = details.find_element(*_css("trace-details-name")).text
    assert KERNEL_QUERY in kernel_name
    assert "Kernel" in details.text, "the category of a GPU kernel"

    # The side panel names the operator that launched it, and the launch call.
    operator = details.find_element(*_css("trace-details-operator"))
    operator_name = operator.find_element(*_css("trace-jump-operator")).text.split(" · ")[0]
    assert operator_name.startswith("aten::"), operator.text
    assert "cudaLaunchKernel" in details.find_element(*_css("trace-details-launched-by")).text
    kernel_id = driver.find_element(*_css("trace-viewer")).get_attribute("data-selected")
    assert kernel_id and kernel_id.isdigit()
    # The zoomed window now shows the kernel.
    start, end = _view_window(driver)
    assert end - start < 0.01 * (whole_end - whole_start)
    screenshot("kernel-selected")
    _enter_plugin_frame(driver)

    # The window and the selection are in the shareable address.
    _wait(driver).until(lambda d: _host_hash_params(d).get("p.profscope.trace.select") == kernel_id)
    params = _host_hash_params(driver)
    assert float(params["p.profscope.trace.end"]) > float(params["p.profscope.trace.start"]) > 1.6e15

    # "Jump to" the operator: it becomes the selection.
    driver.find_element(*_css("trace-jump-operator")).click()
    _wait(driver).until(
        lambda d: d.find_element(*_css("trace-details")).get_attribute("data-state") == "ready"
        and d.find_element(*_css("trace-details-name")).text == operator_name
    )
    assert driver.find_element(*_css("trace-viewer")).get_attribute("data-selected") != kernel_id
    screenshot("operator-selected")


def test_clearing_the_search_box_clears_the_count_the_highlight_and_the_match(
    tensorboard_server: TensorBoardServer,
    browser: "WebDriver",
    screenshot: Callable[[str], Path],
) -> None:
    from selenium.webdriver.common.keys import Keys

    driver = browser
    open_trace(driver, tensorboard_server)
    search = driver.find_element(*_css("trace-search-input"))
    search.send_keys(KERNEL_QUERY, Keys.ENTER)
    _wait(driver).until(lambda d: re.fullmatch(r"1 / \d+", d.find_element(*_css("trace-search-count")).text))
    viewer = driver.find_element(*_css("trace-viewer"))
    _wait(driver).until(lambda d: viewer.get_attribute("data-selected") and viewer.get_attribute("data-match"))
    assert viewer.get_attribute("data-selected") == viewer.get_attribute("data-match")
    _wait(driver).until(lambda d: _host_hash_params(d).get("p.profscope.trace.select") == viewer.get_attribute("data-match"))

    # The person empties the box: the count, the highlighted match and its selection go (and leave the link).
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.BACKSPACE)
    _wait(driver).until(lambda d: d.find_element(*_css("trace-search-count")).text == "")
    assert viewer.get_attribute("data-match") is None
    assert viewer.get_attribute("data-selected") is None
    assert driver.find_element(*_css("trace-details")).get_attribute("hidden") is not None
    _wait(driver).until(lambda d: "p.profscope.trace.select" not in _host_hash_params(d))
    screenshot("search-cleared")
