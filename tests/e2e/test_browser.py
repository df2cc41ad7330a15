"""What a person sees: TensorBoard's page in headless Chromium, with Profscope's tab.

TensorBoard loads the plugin's ES module into an iframe (``data/plugin_entry.html``); the
plugin-specific checks switch into that frame. Runs load in the background, so every
check waits (WebDriverWait) for the state it expects instead of sleeping.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

from .harness import BROKEN_RUN, NESTED_RUN, TORCH_RUN, TensorBoardServer

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# Parsing a run on a busy 2-core machine can take a while; TensorBoard's page is quick.
PAGE_TIMEOUT_S = 60.0
RUN_LOAD_TIMEOUT_S = 180.0
POLL_S = 0.25

EXPECTED_RUNS = (TORCH_RUN, NESTED_RUN, BROKEN_RUN)
PLUGIN_FRAME = "iframe[src*='plugin_entry.html?name=profscope']"


def _wait(driver: WebDriver, timeout_s: float = PAGE_TIMEOUT_S):  # -> WebDriverWait
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout_s, poll_frequency=POLL_S)


def _by_testid(testid: str) -> tuple[str, str]:
    from selenium.webdriver.common.by import By

    return (By.CSS_SELECTOR, f"[data-testid='{testid}']")


def _open_profscope(driver: WebDriver, server: TensorBoardServer) -> None:
    """Opens TensorBoard on Profscope's tab and switches into the plugin's frame."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    driver.get(server.plugin_url())
    _wait(driver).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))
    _wait(driver).until(ec.presence_of_element_located(_by_testid("profscope-app")))


def _option_values(picker: WebElement) -> list[str]:
    from selenium.webdriver.support.ui import Select

    return [option.get_attribute("value") or "" for option in Select(picker).options]


def _choose(driver: WebDriver, testid: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    picker = _wait(driver).until(lambda d: d.find_element(*_by_testid(testid)))
    Select(picker).select_by_value(value)


def _run_status(driver: WebDriver, run: str) -> str:
    from selenium.webdriver.common.by import By

    entries = driver.find_elements(By.CSS_SELECTOR, "[data-testid='run-entry']")
    for entry in entries:
        if entry.get_attribute("data-run") == run:
            return entry.get_attribute("data-status") or ""
    return ""


def test_tensorboard_lists_the_profscope_plugin(tensorboard_server: TensorBoardServer) -> None:
    listing = tensorboard_server.get_json("/data/plugins_listing")
    assert isinstance(listing, dict)
    assert "profscope" in listing, sorted(listing)
    entry = listing["profscope"]
    assert entry["tab_name"] == "PROFSCOPE"
    assert entry["loading_mechanism"]["type"] == "IFRAME"


def test_profscope_tab_is_in_tensorboards_header(
    browser: WebDriver, tensorboard_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    from selenium.webdriver.common.by import By

    browser.get(tensorboard_server.plugin_url())
    # The plugin becomes active (its tab shows) once it has found runs in the logdir.
    tab_label = _wait(browser).until(
        lambda d: next(
            (
                label
                for label in d.find_elements(By.CSS_SELECTOR, "span.plugin-name[data-plugin-id='profscope']")
                if label.is_displayed()
            ),
            None,
        )
    )
    assert tab_label.text.strip() == "PROFSCOPE"
    tab = tab_label.find_element(By.XPATH, "ancestor::*[@role='tab'][1]")
    _wait(browser).until(lambda _d: tab.get_attribute("aria-selected") == "true")
    frame = _wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, PLUGIN_FRAME))
    assert frame.is_displayed()
    screenshot("tensorboard-header")


def test_runs_are_listed_and_a_broken_run_shows_its_error(
    browser: WebDriver, tensorboard_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    _open_profscope(browser, tensorboard_server)
    run_picker = _wait(browser).until(
        lambda d: (
            picker
            if set(EXPECTED_RUNS) <= set(_option_values(picker := d.find_element(*_by_testid("run-picker"))))
            else None
        )
    )
    assert sorted(_option_values(run_picker)) == sorted(EXPECTED_RUNS)

    _choose(browser, "run-picker", BROKEN_RUN)
    error_panel = _wait(browser, RUN_LOAD_TIMEOUT_S).until(
        lambda d: next(iter(d.find_elements(*_by_testid("run-error"))), None)
    )
    assert error_panel.is_displayed()
    assert BROKEN_RUN in error_panel.text
    message = error_panel.find_element(*_by_testid("run-error-message")).text.strip()
    assert message and message != "No reason given.", message
    assert _run_status(browser, BROKEN_RUN) == "error"
    # The other runs are unaffected by the broken one.
    assert _run_status(browser, TORCH_RUN) in ("loading", "ready")
    screenshot("broken-run-error")


def test_selecting_a_run_shows_its_workers_and_spans(
    browser: WebDriver, tensorboard_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    _open_profscope(browser, tensorboard_server)
    _wait(browser).until(lambda d: TORCH_RUN in _option_values(d.find_element(*_by_testid("run-picker"))))
    _choose(browser, "run-picker", TORCH_RUN)

    _wait(browser, RUN_LOAD_TIMEOUT_S).until(lambda d: _run_status(d, TORCH_RUN) == "ready")
    worker_picker = _wait(browser).until(
        lambda d: (
            picker if _option_values(picker := d.find_element(*_by_testid("worker-picker"))) == ["worker0"] else None
        )
    )
    assert worker_picker.is_enabled()
    span_picker = browser.find_element(*_by_testid("span-picker"))
    # mlp_train_sched has two spans (schedule repeat=2), in time order.
    _wait(browser).until(lambda _d: len(_option_values(span_picker)) == 2)
    spans = _option_values(span_picker)
    assert spans == sorted(spans, key=int), spans
    assert span_picker.is_enabled()
    assert not browser.find_elements(*_by_testid("run-error"))
    # The overview view mounts for the selected worker and span.
    _wait(browser, RUN_LOAD_TIMEOUT_S).until(lambda d: d.find_elements(*_by_testid("view-overview")))
    assert browser.find_element(*_by_testid("tab-overview")).get_attribute("aria-selected") == "true"
    screenshot("mlp-selected")
