"""Compare, as a person uses it: pick two spans, read the change, share the link.

The session logdir of ``conftest.py`` has the two spans of the ResNet-50 reference trace
(``group/resnet``). One browser opens the Compare tab, swaps baseline and experiment, and
reads the step-time change; the address bar is then "copied" into a second, fresh browser
(its own profile), which must show the same pair and the same number. The expected number
comes from the backend's ``compare`` route, formatted as the page formats it.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest

from .conftest import _save_screenshot, chromium_driver
from .harness import NESTED_RUN, TORCH_RUN, TensorBoardServer

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PAGE_TIMEOUT_S = 60.0
RUN_LOAD_TIMEOUT_S = 180.0
POLL_S = 0.25
PLUGIN_FRAME = "iframe[src*='plugin_entry.html?name=profscope']"
ROUTES = "/data/plugin/profscope"


def format_signed_time(us: float) -> str:
    """A signed duration as the page writes it (views/compare/model.ts formatSignedTime)."""
    if us == 0:
        return "0 µs"
    magnitude = abs(us)
    value, unit = next((magnitude / scale, name) for limit, scale, name in (
        (1e3, 1.0, "µs"), (1e6, 1e3, "ms"), (60e6, 1e6, "s"), (float("inf"), 1e6, "s")) if magnitude < limit)
    decimals = 0 if value >= 100 else 1 if value >= 10 else 2
    return f"{'+' if us > 0 else '-'}{value:.{decimals}f} {unit}"


def format_signed_micros(us: float) -> str:
    """A signed µs figure with its unit, as the step-time table's Δ column writes it (formatSignedMicrosUnit)."""
    magnitude = abs(us)
    decimals = 0 if magnitude >= 100 or magnitude == 0 else 1 if magnitude >= 10 else 2 if magnitude >= 1 else 3
    text = f"{magnitude:,.{decimals}f}"
    sign = "" if text.strip("0.,") == "" else "+" if us > 0 else "-"
    return f"{sign}{text} µs"


def test_format_signed_time_matches_the_frontend_examples() -> None:
    # The examples of the frontend's unit tests (frontend/test/compare.test.ts, metric_format.test.ts).
    assert format_signed_time(-22680.8) == "-22.7 ms"
    assert format_signed_time(80) == "+80.0 µs"
    assert format_signed_time(0) == "0 µs"
    assert [format_signed_micros(v) for v in (-181.7, 1145.6, -23758.2, 0)] == ["-182 µs", "+1,146 µs", "-23,758 µs", "0 µs"]


@pytest.fixture
def fresh_browser(tmp_path: Path) -> Iterator["WebDriver"]:
    """A second Chromium with its own empty profile: the teammate who opens a shared link."""
    driver = chromium_driver(tmp_path / "fresh-chromium-profile", tmp_path / "fresh-chromedriver.log")
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: "WebDriver", timeout_s: float = PAGE_TIMEOUT_S):  # -> WebDriverWait
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout_s, poll_frequency=POLL_S)


def _css(testid: str) -> tuple[str, str]:
    from selenium.webdriver.common.by import By

    return (By.CSS_SELECTOR, f"[data-testid='{testid}']")


def _ready_spans(server: TensorBoardServer, run: str) -> list[str]:
    """The run's spans once the backend has loaded it."""
    deadline = time.monotonic() + RUN_LOAD_TIMEOUT_S
    while True:
        listing = server.get_json(f"{ROUTES}/runs")
        assert isinstance(listing, dict)
        entry = next((r for r in listing["runs"] if r["name"] == run), None)
        if entry is not None and entry["status"] == "ready":
            return list(entry["workers"][0]["spans"])
        assert entry is None or entry["status"] != "error", entry
        assert time.monotonic() < deadline, f"{run} not ready after {RUN_LOAD_TIMEOUT_S:.0f} s: {entry}"
        time.sleep(0.5)


def _enter_plugin(driver: "WebDriver", url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    driver.get(url)
    _wait(driver).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))


def _comparison_ready(driver: "WebDriver") -> None:
    """Waits until the results show a comparison (not the loading note or an error)."""
    def state(d: "WebDriver") -> Any:
        found = d.find_elements(*_css("compare-results"))
        value = found[0].get_attribute("data-state") if found else None
        if value == "error":
            raise AssertionError(d.find_element(*_css("compare-error")).text)
        return value == "ready"

    _wait(driver, RUN_LOAD_TIMEOUT_S).until(state)


def _picked(driver: "WebDriver", testid: str) -> list[str]:
    from selenium.webdriver.support.ui import Select

    return json.loads(Select(driver.find_element(*_css(testid))).first_selected_option.get_attribute("value") or "null")


def _pick_column(driver: "WebDriver") -> list[str]:
    """The run table's first column (Pick) of the rows in view."""
    from selenium.webdriver.common.by import By

    table = driver.find_element(*_css("runs-table"))
    cells = table.find_elements(By.CSS_SELECTOR, ".ps-vtable-row:not([hidden]) .ps-vtable-td:first-child")
    return [cell.text.strip() for cell in cells]


def test_a_shared_link_reopens_the_same_comparison(
    browser: "WebDriver", fresh_browser: "WebDriver", tensorboard_server: TensorBoardServer,
    screenshot: Callable[[str], Path], tmp_path: Path, request: pytest.FixtureRequest,
) -> None:
    from selenium.webdriver.support.ui import Select

    first, second = _ready_spans(tensorboard_server, NESTED_RUN)
    query = urllib.parse.urlencode({"base_run": NESTED_RUN, "base_worker": "worker0", "base_span": second,
                                    "exp_run": NESTED_RUN, "exp_worker": "worker0", "exp_span": first})
    expected = tensorboard_server.get_json(f"{ROUTES}/compare?{query}")
    assert isinstance(expected, dict)
    expected_delta = format_signed_micros(expected["step_time"]["delta"])
    expected_headline = format_signed_time(expected["step_time"]["delta"])
    assert expected_delta.startswith("+")  # the second span is the faster one: swapped, the experiment is slower

    # A person opens Compare on the ResNet run: the current span against the next one.
    _enter_plugin(browser, tensorboard_server.plugin_url())
    run_picker = _wait(browser).until(lambda d: d.find_element(*_css("run-picker")))
    _wait(browser).until(lambda _d: NESTED_RUN in [o.get_attribute("value") for o in Select(run_picker).options])
    Select(run_picker).select_by_value(NESTED_RUN)
    _wait(browser).until(lambda d: d.find_element(*_css("tab-compare"))).click()
    _comparison_ready(browser)
    assert _picked(browser, "compare-base") == [NESTED_RUN, "worker0", first]
    assert _picked(browser, "compare-exp") == [NESTED_RUN, "worker0", second]
    assert browser.find_element(*_css("compare-auto-note")).get_attribute("data-reason") == "next_span"

    # ... swaps them, and reads the change of step time.
    browser.find_element(*_css("compare-swap")).click()
    _wait(browser).until(lambda d: _picked(d, "compare-base") == [NESTED_RUN, "worker0", second])
    assert not browser.find_elements(*_css("compare-auto-note"))  # the pair is the person's now
    _comparison_ready(browser)
    delta = browser.find_element(*_css("compare-delta-step")).text.strip()
    assert delta == expected_delta, (delta, expected_delta)
    assert browser.find_element(*_css("compare-headline")).text.startswith(f"{expected_headline} per step")
    assert "the experiment is slower" in browser.find_element(*_css("compare-headline")).text
    # The bars' figures are the table's, in its unit.
    assert browser.find_element(*_css("compare-bar-value-base")).text == browser.find_element(*_css("compare-step-base")).text
    screenshot("compare-swapped")

    # The address bar is the link to share.
    browser.switch_to.default_content()
    link = browser.current_url
    assert "p.profscope.view=compare" in link and f"p.profscope.compare.base_span={second}" in link, link

    # A teammate opens it in a fresh browser and reads the same pair and the same number.
    _enter_plugin(fresh_browser, link)
    _comparison_ready(fresh_browser)
    assert _picked(fresh_browser, "compare-base") == [NESTED_RUN, "worker0", second]
    assert _picked(fresh_browser, "compare-exp") == [NESTED_RUN, "worker0", first]
    assert fresh_browser.find_element(*_css("compare-delta-step")).text.strip() == expected_delta
    # The run table lists the logdir's spans, the compared pair picked.
    roles = _wait(fresh_browser).until(lambda d: _pick_column(d) or None)
    assert sorted(role for role in roles if role) == ["baseline", "experiment"], roles
    _save_screenshot(fresh_browser, tmp_path / "screenshots", request.node.name, "shared-link")


def _hash_link(server: TensorBoardServer, params: dict[str, str]) -> str:
    return server.plugin_url() + "".join(f"&p.profscope.{key}={urllib.parse.quote(value, safe='')}" for key, value in params.items())


def test_compare_picks_a_similar_span_and_reads_a_link_that_names_runs_only(
    browser: "WebDriver", tensorboard_server: TensorBoardServer, screenshot: Callable[[str], Path],
) -> None:
    first, second = _ready_spans(tensorboard_server, NESTED_RUN)
    mlp_first = _ready_spans(tensorboard_server, TORCH_RUN)[0]

    # Opened from the ResNet run's last span: the next run in the list is a CPU run (mlp); the GPU span before it
    # is the one like it, and a note says the page chose it.
    _enter_plugin(browser, _hash_link(tensorboard_server, {"view": "compare", "run": NESTED_RUN, "worker": "worker0", "span": second}))
    _comparison_ready(browser)
    assert _picked(browser, "compare-base") == [NESTED_RUN, "worker0", second]
    assert _picked(browser, "compare-exp") == [NESTED_RUN, "worker0", first]
    note = browser.find_element(*_css("compare-auto-note"))
    assert note.get_attribute("data-reason") == "similar" and "chosen automatically" in note.text
    screenshot("compare-similar-span")

    # A link that names the two runs only: worker0 in both, their first spans; the note says how they differ.
    _enter_plugin(browser, _hash_link(tensorboard_server, {"view": "compare", "compare.base_run": TORCH_RUN, "compare.exp_run": NESTED_RUN}))
    _comparison_ready(browser)
    assert _picked(browser, "compare-base") == [TORCH_RUN, "worker0", mlp_first]
    assert _picked(browser, "compare-exp") == [NESTED_RUN, "worker0", first]
    note = browser.find_element(*_css("compare-auto-note"))
    assert note.get_attribute("data-reason") == "link_runs" and note.get_attribute("data-differs") == "device", note.text
    assert "CPU against Tesla V100-DGXS-32GB" in note.text, note.text
    screenshot("compare-runs-only-link")
    # The address bar now names both spans: the link is complete.
    browser.switch_to.default_content()
    assert f"p.profscope.compare.exp_span={first}" in browser.current_url, browser.current_url
