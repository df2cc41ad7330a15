"""``profscope report`` as a teammate opens it: a file from a chat message, on a machine without network.

Chromium opens the report file with its network switched off through the DevTools protocol
(``Network.emulateNetworkConditions`` with ``offline: true``: every http(s) request of the page
fails at once, whatever the machine's network is). The page must still show its tables and
charts, and must not have asked for anything: the Resource Timing API lists every resource a
page fetched or tried to fetch, and the report's must list none.

``test_the_checks_see_a_fetch`` is the control: a page that fetches two images (an element and
a CSS background) from a local HTTP server. Offline, the server sees no request, yet Resource
Timing lists both attempts; online, the server sees both. So the offline switch really cuts
the page off, and the "nothing fetched" check can fail.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

from profscope.tb_plugin.reports import cli

from .conftest import REAL_TRACES

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e]

RESNET_LOGDIR = REAL_TRACES / "kineto_resnet50"
RESNET_RUN = "resnet50_num_workers_0"
FIRST_SPAN = "1623143089861"
TORCH213 = REAL_TRACES / "torch213"
# Where a page would look for fonts, images or scripts if it had any: none may be asked for.
FETCHING_ELEMENTS = "img, script, link, iframe, object, embed, image, use, video, audio, source"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROFSCOPE_CACHE_DIR", str(tmp_path / "model-cache"))


def set_offline(driver: WebDriver, offline: bool) -> None:
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1,
    })


@pytest.fixture
def offline_browser(browser: WebDriver) -> WebDriver:
    set_offline(browser, True)
    return browser


def write_report(tmp_path: Path, name: str, *argv: str) -> Path:
    output = tmp_path / name
    assert cli.main(["report", *argv, "-o", str(output)]) == 0
    return output


def open_file(driver: WebDriver, path: Path) -> None:
    driver.get(path.resolve().as_uri())
    assert driver.execute_script("return document.readyState") == "complete"


def resources(driver: WebDriver) -> list[str]:
    return list(driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)"))


def visible_text(driver: WebDriver, selector: str) -> str:
    from selenium.webdriver.common.by import By

    element = driver.find_element(By.CSS_SELECTOR, selector)
    assert element.is_displayed(), selector
    return str(element.text)


def drawn_bars(driver: WebDriver) -> int:
    """Chart rectangles that the browser laid out with a size."""
    return int(driver.execute_script(
        "return [...document.querySelectorAll('svg.chart rect')]"
        ".filter(r => { const b = r.getBoundingClientRect(); return b.width > 0 && b.height > 0; }).length"))


def assert_nothing_fetched(driver: WebDriver) -> None:
    assert resources(driver) == []
    assert driver.execute_script(f"return document.querySelectorAll('{FETCHING_ELEMENTS}').length") == 0


def assert_fits_the_window(driver: WebDriver) -> None:
    """Wide tables scroll inside their box: the page itself never scrolls sideways."""
    width, inner = driver.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width <= inner, (width, inner)


def test_report_opens_offline(offline_browser: WebDriver, tmp_path: Path,
                              screenshot: Callable[[str], Path]) -> None:
    driver = offline_browser
    report = write_report(tmp_path, "resnet.html", RESNET_RUN, "--logdir", str(RESNET_LOGDIR), "--span", FIRST_SPAN)
    open_file(driver, report)
    assert driver.title.startswith("Profscope report: resnet50_num_workers_0 · worker0 · 1623143089861")
    breakdown = visible_text(driver, "[data-testid=breakdown]")
    assert "Kernel 98,589 µs 55.5%" in breakdown
    assert "Step (total) 177,592 µs 100.0%" in breakdown
    first_operator = visible_text(driver, "[data-testid=operators] tbody tr:first-child")
    assert first_operator.startswith("aten::cudnn_convolution_backward_weight 318 ")
    assert "Tesla V100-DGXS-32GB" in visible_text(driver, "[data-testid=gpu-summary]")
    assert "dgrad_engine" in visible_text(driver, "[data-testid=kernels] tbody tr:first-child")
    assert drawn_bars(driver) >= 6 * 5  # 6 steps, each with at least 5 categories
    assert_fits_the_window(driver)
    assert_nothing_fetched(driver)
    shot = screenshot("resnet-report")
    assert shot.stat().st_size > 10_000


def test_comparison_report_opens_offline(offline_browser: WebDriver, tmp_path: Path,
                                         screenshot: Callable[[str], Path]) -> None:
    driver = offline_browser
    report = write_report(tmp_path, "loader.html", "dataloader_bound_w0", "--vs", "dataloader_bound_w2",
                          "--logdir", str(TORCH213))
    open_file(driver, report)
    compare = visible_text(driver, "#compare [data-testid=compare-breakdown]")
    dataloader = next(line for line in compare.splitlines() if line.startswith("DataLoader"))
    base, exp = _two_microsecond_values(dataloader)
    assert exp < base  # two loader workers: less time waiting for data
    assert "aten::" in visible_text(driver, "[data-testid=compare-operators] tbody tr:first-child")
    assert drawn_bars(driver) > 0
    assert_fits_the_window(driver)
    assert_nothing_fetched(driver)
    screenshot("loader-comparison")


def _two_microsecond_values(row: str) -> tuple[int, int]:
    """The baseline and experiment cells of a breakdown row: "DataLoader 23,651 µs 6,406 µs -17.25 ms 0.27×"."""
    cells = row.split()
    values = [int(cells[i - 1].replace(",", "")) for i, cell in enumerate(cells) if cell == "µs"][:2]
    return values[0], values[1]


# --- the control: the checks above can see a fetch ---------------------------------------------


# A 1×1 GIF.
PIXEL = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00"
         b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")


@pytest.fixture
def image_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that serves a 1-pixel image and records the path of each request."""
    requests: list[str] = []

    class CountingHandler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            requests.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/gif")
            self.send_header("Content-Length", str(len(PIXEL)))
            self.end_headers()
            self.wfile.write(PIXEL)

        def log_message(self, format: str, *args: object) -> None:  # keep the test output quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), CountingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_the_checks_see_a_fetch(browser: WebDriver, tmp_path: Path, image_server: tuple[str, list[str]]) -> None:
    url, requests = image_server
    page = tmp_path / "control.html"
    page.write_text(f'<!DOCTYPE html><html><body><img id="pixel" src="{url}/pixel.gif">'
                    f'<div style="background: url({url}/background.gif)">x</div></body></html>')
    set_offline(browser, True)
    open_file(browser, page)
    assert requests == []  # offline: nothing reached the server...
    assert browser.execute_script("return document.getElementById('pixel').naturalWidth") == 0
    # ...yet Resource Timing lists what the page tried to fetch, from elements and from CSS alike.
    assert sorted(resources(browser)) == [f"{url}/background.gif", f"{url}/pixel.gif"]
    set_offline(browser, False)
    open_file(browser, page)
    assert sorted(requests) == ["/background.gif", "/pixel.gif"]
    assert browser.execute_script("return document.getElementById('pixel').naturalWidth") == 1
